/* obs-report html [--generation N] [-o OUT] FILE.obs [B.obs]: the run's
 * overview as one self-contained HTML page (report_html.h); with two
 * traces, the two side by side, as `compare --html` writes it. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"
#include "report_html.h"

enum { OPT_GENERATION = 256 };

int report_html_run(const char *const *paths, size_t npaths, const char *output, const struct html_options *o)
{
    struct obs_trace *t[2] = {NULL, NULL};
    struct cli_output out;
    size_t i;
    int ok;

    for (i = 0; i < npaths && i < 2; i++) {
        t[i] = cli_open_trace(paths[i]);
        if (t[i] == NULL) {
            while (i-- > 0)
                obs_trace_free(t[i]);
            return EXIT_TRACE_ERROR;
        }
    }
    if (cli_open_output(&out, output) != 0) {
        for (i = 0; i < npaths; i++)
            obs_trace_free(t[i]);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    ok = report_html(out.f, t, npaths, o) == 0;
    ok = ok && fflush(out.f) == 0 && !ferror(out.f);
    for (i = 0; i < npaths; i++)
        obs_trace_free(t[i]);
    return cli_close_output(&out, ok);
}

static int run_html(const struct report_command *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'},
        {"generation", required_argument, NULL, OPT_GENERATION},
        {NULL, 0, NULL, 0},
    };
    struct html_options ho;
    const char *output = NULL;
    unsigned long v;
    char *end;
    int c, nargs;

    memset(&ho, 0, sizeof ho);
    opterr = 0;
    optind = 0; /* full reset: main already ran getopt */
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            cli_print_command_help(cmd, stdout);
            return fflush(stdout) == 0 ? 0 : EXIT_TRACE_ERROR;
        case 'o':
            output = optarg;
            break;
        case OPT_GENERATION:
            errno = 0;
            v = strtoul(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || *end != '\0' || errno != 0 || v >= UINT32_MAX)
                return cli_usage_error(cmd, "%s: bad --generation '%s' (a generation number: 0, 1, ...)", cmd->name,
                                       optarg);
            ho.has_generation = 1;
            ho.generation = (uint32_t)v;
            break;
        case ':':
            return cli_usage_error(cmd, "%s: option '%s' needs an argument", cmd->name, argv[optind - 1]);
        default:
            return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
        }
    }
    nargs = argc - optind;
    if (nargs < cmd->min_args)
        return cli_usage_error(cmd, "%s: missing argument (usage: obs-report %s)", cmd->name, cmd->synopsis);
    if (nargs > cmd->max_args)
        return cli_usage_error(cmd, "%s: unexpected argument '%s'", cmd->name, argv[optind + cmd->max_args]);
    return report_html_run((const char *const *)(argv + optind), (size_t)nargs, output, &ho);
}

const struct report_command report_cmd_html = {
    "html",
    "Write the run's overview as one self-contained HTML page with charts (two runs: side by side).",
    "html [--generation N] [-o OUT] FILE.obs [B.obs]",
    "One file, inline CSS and SVG, no script and nothing loaded from elsewhere:\n"
    "overview cards (duration, calls, kernel launches and time, records lost, the\n"
    "shim's cost, TTFT and tokens/s), time per phase, TTFT and tokens/s per\n"
    "generation with best, median and p90, the top kernels, device idle gaps per\n"
    "stream, host gaps between launches, synchronisation share, copies by\n"
    "direction and memsets, API calls, and a timeline of one generation (phase\n"
    "ranges, host threads, GPU streams). The numbers are those of `obs-report\n"
    "summary --format json` and `obs-report gaps --format json`; each chart item\n"
    "carries its report row as data- attributes. With B.obs, the two runs side by\n"
    "side on shared scales, and what changed (as `compare`); `compare --html` is\n"
    "the same. A damaged trace: its message, exit status 1, no output file.\n"
    "\n"
    "  --generation N     the generation the timeline shows (default: the one with\n"
    "                     the median TTFT among those the bests count)\n",
    CLI_OPT_OUTPUT,
    1,
    2,
    run_html,
};
