/* obs-report gaps | top | compare: the reports of reports.h as commands,
 * with --format and (gaps, top) the call filters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"
#include "report_html.h"
#include "report_opts.h"
#include "reports.h"

/* Open the traces and the output, run the report, close; the exit status. */
static int run_report(struct report_opts *o, const char *const *paths, size_t npaths, size_t top_n,
                      int (*report)(struct obs_trace *const *t, const struct report_opts *o, size_t top_n,
                                    struct report_doc *d))
{
    struct obs_trace *t[2] = {NULL, NULL};
    struct cli_output out;
    struct report_doc d;
    size_t i;
    int ok;

    for (i = 0; i < npaths; i++) {
        t[i] = cli_open_trace(paths[i]);
        if (t[i] == NULL) {
            while (i-- > 0)
                obs_trace_free(t[i]);
            report_opts_free(o);
            return EXIT_TRACE_ERROR;
        }
    }
    if (cli_open_output(&out, o->output) != 0) {
        for (i = 0; i < npaths; i++)
            obs_trace_free(t[i]);
        report_opts_free(o);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    rdoc_begin(&d, out.f, o->format);
    ok = report(t, o, top_n, &d) == 0;
    ok = rdoc_end(&d) == 0 && ok;
    for (i = 0; i < npaths; i++)
        obs_trace_free(t[i]);
    report_opts_free(o);
    return cli_close_output(&out, ok);
}

static int do_gaps(struct obs_trace *const *t, const struct report_opts *o, size_t top_n, struct report_doc *d)
{
    (void)top_n;
    return report_gaps(t[0], &o->filter, d);
}

static int do_top(struct obs_trace *const *t, const struct report_opts *o, size_t top_n, struct report_doc *d)
{
    return report_top(t[0], &o->filter, top_n, d);
}

static int do_compare(struct obs_trace *const *t, const struct report_opts *o, size_t top_n, struct report_doc *d)
{
    (void)o;
    (void)top_n;
    return report_compare(t[0], t[1], d);
}

static int run_gaps(const struct report_command *cmd, int argc, char **argv)
{
    struct report_opts o;
    int rc = report_opts_parse(cmd, ROPT_FILTERS, argc, argv, &o);
    const char *paths[1];
    if (rc >= 0)
        return rc;
    paths[0] = o.args[0];
    return run_report(&o, paths, 1, 0, do_gaps);
}

static int run_top(const struct report_command *cmd, int argc, char **argv)
{
    struct report_opts o;
    int rc = report_opts_parse(cmd, ROPT_FILTERS, argc, argv, &o);
    const char *paths[1];
    unsigned long n;
    char *end;
    if (rc >= 0)
        return rc;
    errno = 0;
    n = strtoul(o.args[0], &end, 10);
    if (o.args[0][0] < '0' || o.args[0][0] > '9' || *end != '\0' || errno != 0 || n == 0 || n > 1000000) {
        rc = cli_usage_error(cmd, "%s: bad N '%s' (a count from 1 to 1000000)", cmd->name, o.args[0]);
        report_opts_free(&o);
        return rc;
    }
    paths[0] = o.args[1];
    return run_report(&o, paths, 1, (size_t)n, do_top);
}

static int run_compare(const struct report_command *cmd, int argc, char **argv)
{
    struct report_opts o;
    int html = cli_take_flag(&argc, argv, "--html", NULL); /* the page of `html A B` */
    int rc = report_opts_parse(cmd, 0, argc, argv, &o);
    const char *paths[2];
    if (rc >= 0)
        return rc;
    paths[0] = o.args[0];
    paths[1] = o.args[1];
    if (html) {
        int given = o.format != REPORT_TABLE;
        report_opts_free(&o);
        if (given)
            return cli_usage_error(cmd, "%s: --html writes a page: no --format with it", cmd->name);
        return report_html_run(paths, 2, o.output, NULL);
    }
    return run_report(&o, paths, 2, 0, do_compare);
}

const struct report_command report_cmd_gaps = {
    "gaps",
    "Print device idle gaps per stream, host gaps between launches, sync share, launches per step.",
    "gaps [--format table|csv|json] [filters] [-o OUT] FILE.obs",
    "device_gaps (needs GPU time, OBS_GPU_TIME=events): per device and stream, the\n"
    "idle time before each kernel, graph launch, copy or memset that follows other\n"
    "work on the stream (0 when they overlap): count, idle gaps (> 0), total,\n"
    "median, p90, max, the selected work's own GPU time (busy), its span (first\n"
    "begin to last end) and the gaps' total as a share of that span. Without GPU\n"
    "time it says so and reports the host-side gaps only.\n"
    "launch_gaps: per host thread, the host time from the end of one kernel or\n"
    "graph launch call to the begin of the next: count, total, average, median,\n"
    "p90, max.\n"
    "sync_share: host time in the *Synchronize APIs (device, stream, event,\n"
    "context; CUDA, HIP and the driver) per API and in all, as a share of the wall\n"
    "time from the first selected call's begin to the last one's end.\n"
    "launches_per_step: kernel launches per decode step (generation, step):\n"
    "steps, launches, min, median, average, max; overall and per phase.\n"
    "A filter keeps a gap when the call after it passes. docs/reports.md has\n"
    "the definitions.\n"
    "\n" REPORT_FORMAT_HELP REPORT_FILTER_HELP,
    CLI_OPT_OUTPUT,
    1,
    1,
    run_gaps,
};

const struct report_command report_cmd_top = {
    "top",
    "Print the N kernels with the most total time and the N slowest kernel launches.",
    "top N [--format table|csv|json] [filters] [-o OUT] FILE.obs",
    "top_kernels: the N kernel names with the most total time (GPU time when the\n"
    "trace has it, host API time otherwise), with their share of all kernel time;\n"
    "slowest_launches: the N longest single kernel launches, with when they began\n"
    "(ms after the trace's start), their sequence number, thread, stream, range\n"
    "and step.\n"
    "\n" REPORT_FORMAT_HELP REPORT_FILTER_HELP,
    CLI_OPT_OUTPUT,
    2,
    2,
    run_top,
};

const struct report_command report_cmd_compare = {
    "compare",
    "Compare two traces: per-kernel and per-phase deltas, TTFT and tokens/s, kernels in one only.",
    "compare [--format table|csv|json | --html] [-o OUT] A.obs B.obs",
    "metrics: duration, calls, kernel launches, kernel time, best TTFT and best\n"
    "tokens/s of each run, B - A, B / A and the change in %.\n"
    "kernels: per demangled kernel name, count, total and average time in A and\n"
    "in B, their differences (B - A) and the ratio of the totals (B / A); sorted\n"
    "by the size of the change. only_in_a, only_in_b: kernels one run lacks.\n"
    "phases: per phase, ranges, kernels, time and time per range in A and B, the\n"
    "difference and the ratio. Times are GPU times where a trace has them.\n"
    "\n" REPORT_FORMAT_HELP
    "  --html             write the two runs' HTML page side by side instead\n"
    "                     (as `obs-report html A.obs B.obs`)\n",
    CLI_OPT_OUTPUT,
    2,
    2,
    run_compare,
};
