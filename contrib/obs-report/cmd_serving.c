/* obs-report serving: the serving view of a trace (trace_serving.h): per
 * iteration of a serving loop its host and GPU span, gap, launches, kind
 * and size, and the loop's summaries; as text, --csv rows or --json. */
#include <errno.h>
#include <string.h>

#include "report_cli.h"
#include "reports.h"
#include "trace/trace.h"

/* Take "--id-bytes N" or "--id-bytes=N" out of argv (before cli_parse),
 * as cli_take_flag does; *value gets N's text. Returns 1 when found, 0
 * when not, -1 when it has no value. Operands after "--" are left alone. */
static int take_id_bytes(int *argc, char **argv, const char **value)
{
    static const char opt[] = "--id-bytes";
    int i, j, found = 0;
    for (i = 1, j = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[j++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], opt) == 0) {
            if (i + 1 >= *argc)
                return -1;
            *value = argv[++i];
            found = 1;
        } else if (strncmp(argv[i], opt, sizeof opt - 1) == 0 && argv[i][sizeof opt - 1] == '=') {
            *value = argv[i] + sizeof opt;
            found = 1;
        } else {
            argv[j++] = argv[i];
        }
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

static int run_serving(const struct report_command *cmd, int argc, char **argv)
{
    struct obs_serving_options so = {0, 4};
    struct cli_args a;
    struct cli_output out;
    struct obs_trace *t;
    const char *ids = NULL;
    int csv = cli_take_flag(&argc, argv, "--csv", NULL);
    int json = cli_take_flag(&argc, argv, "--json", NULL);
    int id = take_id_bytes(&argc, argv, &ids);
    int rc, ok;

    so.forced = cli_take_flag(&argc, argv, "--serving", NULL);
    rc = cli_parse(cmd, argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (id < 0)
        return cli_usage_error(cmd, "%s: option '--id-bytes' needs an argument", cmd->name);
    if (id > 0 && strcmp(ids, "4") != 0 && strcmp(ids, "8") != 0)
        return cli_usage_error(cmd, "%s: bad --id-bytes '%s' (4: int32 token ids, or 8: int64)", cmd->name, ids);
    if (id > 0)
        so.id_bytes = ids[0] == '8' ? 8 : 4;
    if (csv && json)
        return cli_usage_error(cmd, "%s: --csv and --json: choose one", cmd->name);
    t = cli_open_trace(a.args[0]);
    if (t == NULL)
        return EXIT_TRACE_ERROR;
    if (cli_open_output(&out, a.output) != 0) {
        obs_trace_free(t);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    if (csv) {
        ok = obs_report_serving_csv(t, &so, out.f) == 0;
    } else if (json) {
        struct report_doc d;
        rdoc_begin(&d, out.f, REPORT_JSON);
        ok = report_serving(t, &so, &d) == 0;
        ok = rdoc_end(&d) == 0 && ok;
    } else {
        ok = obs_report_serving(t, &so, out.f) == 0;
    }
    obs_trace_free(t);
    return cli_close_output(&out, ok);
}

const struct report_command report_cmd_serving = {
    "serving",
    "Print a serving loop's iterations: host and GPU span, gap, launches, kind, size; gaps, GPU idle, tokens/s.",
    "serving [--serving] [--id-bytes 4|8] [--csv | --json] [-o OUT] FILE.obs",
    "The iterations of a serving loop (transformers' continuous batching, vLLM,\n"
    "SGLang ...): the phase engine's ITERATION/k ranges, one per forward over a\n"
    "changing batch (docs/phases.md, \"Serving loops\"). Per iteration: its host\n"
    "span (its calls' first begin to last end), GPU span (with OBS_GPU_TIME=steps\n"
    "or events), the host gap before it (from the previous iteration's last call's\n"
    "end), GPU idle before it, calls, launches, kernels, the input copies before\n"
    "its forward and its sampled-ids read (measured); tokens = the first input\n"
    "copy's bytes / the id size, sequences = the read's bytes / the id size\n"
    "(estimated); its kind: decode (tokens = sequences), prompt (more tokens, and\n"
    "no sequence decodes: none sampled, or the first iteration, or the one before\n"
    "sampled none), mixed (more tokens otherwise), unknown. Summaries: iteration\n"
    "time p50 / p90 / p99 by kind, host gaps (spread, share of the wall time), GPU\n"
    "idle between iterations (n/a without GPU time), tokens/s and generated\n"
    "tokens/s. No per-request TTFT: the stream does not say where a request\n"
    "begins. docs/serving.md has the definitions.\n"
    "\n"
    "--csv prints one row per iteration under the header\n"
    "  " OBS_SERVING_CSV_HEADER "\n"
    "--json prints one object: trace, serving_summary, serving_by_kind and\n"
    "iterations (the CSV's columns) arrays, and notes.\n"
    "  --serving          also every thread's prompts (PREFILL) and decode steps\n"
    "                     as iterations, where the engine found no serving loop\n"
    "  --id-bytes N       bytes of a token id: 4 (int32, the default) or 8 (int64)\n"
    "  --csv              the rows as CSV\n"
    "  --json             the reports as JSON\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_serving,
};
