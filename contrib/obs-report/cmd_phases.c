/* obs-report phases | suggest-phases: the phase tables with TTFT and
 * tokens/s, and the OBS_PHASES / OBS_STEP rules that reproduce a trace's
 * phases. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"
#include "trace/trace.h"

static int run_phases(const struct report_command *cmd, int argc, char **argv)
{
    struct cli_args a;
    struct cli_output out;
    struct obs_trace *t;
    int csv = cli_take_flag(&argc, argv, "--csv", NULL);
    int layers = cli_take_flag(&argc, argv, "--layers", NULL);
    int graph_layers = cli_take_flag(&argc, argv, "--graph-layers", NULL);
    int steps = cli_take_flag(&argc, argv, "--steps", NULL);
    int rc = cli_parse(cmd, argc, argv, &a), ok;

    if (rc >= 0)
        return rc;
    t = cli_open_trace(a.args[0]);
    if (t == NULL)
        return EXIT_TRACE_ERROR;
    if (cli_open_output(&out, a.output) != 0) {
        obs_trace_free(t);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    if (steps)
        ok = obs_report_steps(t, out.f, csv) == 0;
    else if (csv)
        ok = (graph_layers ? obs_report_graph_layers_csv(t, out.f)
              : layers     ? obs_report_layers_csv(t, out.f)
                           : obs_report_phases_csv(t, out.f)) == 0;
    else
        ok = obs_report_phase_tables(t, out.f) == 0 && obs_report_layer_table(t, out.f) == 0;
    obs_trace_free(t);
    return cli_close_output(&out, ok);
}

static int run_suggest(const struct report_command *cmd, int argc, char **argv)
{
    struct cli_args a;
    struct cli_output out;
    struct obs_trace *t;
    int rc = cli_parse(cmd, argc, argv, &a), got;

    if (rc >= 0)
        return rc;
    t = cli_open_trace(a.args[0]);
    if (t == NULL)
        return EXIT_TRACE_ERROR;
    if (cli_open_output(&out, a.output) != 0) {
        obs_trace_free(t);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    got = obs_report_suggest_phases(t, out.f);
    if (got == 1) {
        fprintf(stderr, "obs-report: %s: the trace has no phases (no PHASE records label its calls)\n", t->path);
        obs_trace_free(t);
        cli_discard_output(&out); /* exit 1: no output file */
        return EXIT_TRACE_ERROR;
    }
    obs_trace_free(t);
    return cli_close_output(&out, got == 0);
}

const struct report_command report_cmd_phases = {
    "phases",
    "Print the phase tables: time, launches, kernels, bytes per phase and generation; TTFT, tokens/s.",
    "phases [--steps] [--csv [--layers | --graph-layers]] [-o OUT] FILE.obs",
    "Times are GPU times when the trace has GPU spans (OBS_GPU_TIME=steps: one\n"
    "per phase range and stream, counted for its calls' final labels), host API\n"
    "times otherwise (the titles and the time_base column say which). A phase's time in a\n"
    "generation is the sum over its ranges of the span from the first call's begin\n"
    "to the last call's end. The rates by one of two definitions (the first_token\n"
    "column): 'prefill' where the prefill reads its token back (the first token\n"
    "is the prompt's own, as in real frameworks): steps/s over the time from that\n"
    "read to the last step's token read, tokens/s = steps/s x the sequences per\n"
    "step the read sizes tell, ITL = 1 / steps/s; 'step0' where it reads none:\n"
    "steady tokens/s = (N_decode - 1) / T_decode_after_first (steps 1 and later);\n"
    "n/a for a generation with fewer than two decode steps. TTFT runs from the\n"
    "prompt's first call to where the ttft_to column says: 'token-read', the end\n"
    "of the prefill's token read; where the prefill reads none, 'forward-end\n"
    "(device)' (GPU time) or 'forward-end (next delimiter)' (host time), the end\n"
    "of the prompt's forward: the device end of its last PREFILL iteration with\n"
    "at least half the kernels of the largest, or the host sync or copy from the\n"
    "device that ends that iteration (n/a when the next step's launches come\n"
    "first); 'step0-end' where step 0 reads the first token or the program reads\n"
    "nothing back (the reference workload): T_prefill + T_first_decode (step 0,\n"
    "its KV_GATHER included), on host time to step 0's last sync. The bests are\n"
    "over the generations with two or more steps.\n"
    "\n"
    "--csv prints one row per generation under the header\n"
    "  " OBS_PHASES_CSV_HEADER "\n"
    "generation: the generation number; ttft_ms: TTFT in ms (empty: undefined);\n"
    "tokens_per_s: tokens per second after the first token (empty: undefined);\n"
    "decode_steps: N_decode; time_base: gpu or host; prefill_ms, first_decode_ms,\n"
    "steady_ms: the three spans in ms (empty: none); calls, launches (kernels,\n"
    "graphs, copies, memsets), kernels, bytes (copies and memsets): the\n"
    "generation's totals; in_best: 1 if counted for the best TTFT and tokens/s;\n"
    "thread: its thread id; first_token: prefill or step0 (above); steps_per_s,\n"
    "sequences, itl_ms: decode steps per second, sequences per step, inter-token\n"
    "latency in ms; ttft_to: token-read, forward-end (device), forward-end (next\n"
    "delimiter) or step0-end (above).\n"
    "When the trace has model layers (LAYER records), a Layers table follows:\n"
    "per phase and layer, the instances (one pass of a prompt or step through the\n"
    "layer), their time summed, average and slowest, share of the phase's time in\n"
    "the table, launches and kernels; each phase's rows begin with EMBED and end\n"
    "with HEAD: the calls of a prompt or step before its first layer and after its\n"
    "last.\n"
    "\n"
    "--steps prints one row per decode step of each generation instead: its time\n"
    "(its ranges' first begin to last end, DECODE/STEP_k and its KV_GATHER) and\n"
    "calls; with --csv under the header\n"
    "  " OBS_STEPS_CSV_HEADER "\n"
    "  --csv              print the CSV rows instead of the tables\n"
    "  --steps            one row per decode step (GPU time per step)\n"
    "  --layers           with --csv: the Layers table's rows under the header\n"
    "                     " OBS_LAYERS_CSV_HEADER "\n"
    "                     (layer: EMBED, k or HEAD)\n"
    "  --graph-layers     with --csv: the Layers in graph launches table's rows\n"
    "                     under the header\n"
    "                     " OBS_GRAPH_LAYERS_CSV_HEADER "\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_phases,
};

const struct report_command report_cmd_suggest_phases = {
    "suggest-phases",
    "Print the OBS_PHASES, OBS_STEP and OBS_ITERATION values that reproduce the trace's phases.",
    "suggest-phases [-o OUT] FILE.obs",
    "Prints shell lines to paste before running the program under obsshim:\n"
    "  export OBS_PHASES='PREFILL=prefill_*;KV_GATHER=kv_*;DECODE=decode_*'\n"
    "  export OBS_STEP='kv_*'\n"
    "with '#' comment lines before them. Each kernel base name (the demangled name\n"
    "without return type, scopes, template arguments and parameters) and each copy\n"
    "direction (memcpy:DtoH ...) goes to the phase that labels most of its calls;\n"
    "each becomes the shortest prefix ending at '_' that matches nothing of\n"
    "another phase, followed by '*', or the exact name. OBS_STEP is the kernel\n"
    "that opens most decode steps. A serving loop's ITERATION ranges give\n"
    "OBS_ITERATION, the kernels its iterations begin with. Exit status 1 when the\n"
    "trace has no phases.\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_suggest,
};
