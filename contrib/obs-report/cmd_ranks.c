/* obs-report ranks: the traces of all ranks of a run side by side
 * (trace_ranks.h, docs/ranks.md): the report's tables (report_ranks.c) in
 * table, CSV or JSON, or the ranks' Perfetto trace (--perfetto), or an
 * HTML page of charts (--html). Every trace is read before anything is
 * written; a damaged one stops the command with its reader's line. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"
#include "report_html.h"
#include "report_opts.h"
#include "reports.h"


int report_ranks_run(char *const *paths, int n, const char *output, enum report_format format,
                     enum ranks_output what, int all_colls)
{
    struct obs_trace **t = calloc((size_t)(n > 0 ? n : 1), sizeof *t);
    struct obs_ranks r;
    struct cli_output out;
    int rc = EXIT_TRACE_ERROR, ok, i;

    if (t == NULL) {
        fprintf(stderr, "obs-report: ranks: out of memory\n");
        return EXIT_TRACE_ERROR;
    }
    for (i = 0; i < n; i++)
        if ((t[i] = cli_open_trace(paths[i])) == NULL)
            break;
    if (i < n)
        goto done;
    if (obs_ranks_build((const struct obs_trace *const *)t, (size_t)n, &r) != 0) {
        fprintf(stderr, "obs-report: ranks: out of memory\n");
        goto done;
    }
    if (cli_open_output(&out, output) == 0) {
        errno = 0;
        if (what == RANKS_PERFETTO) {
            ok = obs_ranks_perfetto(&r, NULL, out.f, NULL) == 0;
        } else if (what == RANKS_HTML) {
            ok = report_ranks_html(out.f, &r, RANKS_TOP) == 0;
        } else {
            struct report_doc d;
            rdoc_begin(&d, out.f, format);
            ok = report_ranks(&r, RANKS_TOP, all_colls, &d) == 0;
            ok = rdoc_end(&d) == 0 && ok;
        }
        rc = cli_close_output(&out, ok);
    }
    obs_ranks_free(&r);
done:
    for (i = 0; i < n; i++)
        obs_trace_free(t[i]);
    free(t);
    return rc;
}

static int run_ranks(const struct report_command *cmd, int argc, char **argv)
{
    int perfetto = cli_take_flag(&argc, argv, "--perfetto", NULL);
    int html = cli_take_flag(&argc, argv, "--html", NULL);
    int all_colls = cli_take_flag(&argc, argv, "--collectives", NULL);
    struct report_opts o;
    int rc = report_opts_parse(cmd, 0, argc, argv, &o);

    if (rc >= 0)
        return rc;
    if (perfetto + html > 1 || ((perfetto || html) && o.format != REPORT_TABLE))
        rc = cli_usage_error(cmd, "%s: one of --format, --perfetto and --html", cmd->name);
    else
        rc = report_ranks_run(o.args, o.nargs, o.output, o.format,
                              perfetto ? RANKS_PERFETTO : html ? RANKS_HTML : RANKS_TABLES, all_colls);
    report_opts_free(&o);
    return rc;
}

const struct report_command report_cmd_ranks = {
    "ranks",
    "The traces of all ranks of a run side by side: collectives matched, skew, stragglers, steps.",
    "ranks [--format table|csv|json | --perfetto | --html] [--collectives] [-o OUT] FILE.obs...",
    "NCCL collectives are matched across the traces by their communicator's\n"
    "identity and sequence number (a send and its receive: one pair). Per\n"
    "collective: the arrival skew (the last rank's call begin - the first's), the\n"
    "straggler (the rank that called last), the duration (the slowest rank's: GPU\n"
    "time of its kernels when the trace has it, else the host span of the call\n"
    "that launched them; time_base says which) and the bus bandwidth (bytes /\n"
    "duration x nccl-tests' factor: AllReduce 2(n-1)/n, AllGather and\n"
    "ReduceScatter (n-1)/n, Broadcast, Reduce, Send/Recv 1).\n"
    "ranks: per rank its collectives, how often it was the straggler, the skew\n"
    "it caused, its communication time. rank_skew: the 10 collectives with the\n"
    "largest skew. collective_ops: per operation. steps: per decode step\n"
    "(generation, DECODE/STEP_k) the slowest rank and its compute and\n"
    "communication split. collectives (--collectives): every one. Ranks are the\n"
    "traces' \"rank\" meta values when all have one, else argument positions.\n"
    "Traces of one boot of one host share CLOCK_MONOTONIC; others are aligned by\n"
    "their start pairs (docs/ranks.md).\n"
    "\n" REPORT_FORMAT_HELP
    "  --collectives      add the table of every matched collective\n"
    "  --perfetto         write a Perfetto trace instead: a process track per rank\n"
    "                     (collectives, steps) and a flow through each collective's\n"
    "                     ranks in arrival order, ending on the straggler\n"
    "  --html             write an HTML page instead: stragglers per rank, the\n"
    "                     collectives with the largest skew, the steps' slowest\n"
    "                     ranks as charts\n",
    CLI_OPT_OUTPUT,
    1,
    INT_MAX,
    run_ranks,
};
