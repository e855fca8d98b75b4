/* obs-report summary | csv | json | perfetto: the trace as text (or the
 * summary's reports as csv/json: reports.h), rows or a timeline (Chrome
 * JSON, or Perfetto's own protobuf format). */
#include <errno.h>
#include <stdlib.h>
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

#include "report_cli.h"
#include "report_opts.h"
#include "reports.h"
#include "trace/trace.h"

enum export_kind { EXPORT_CSV, EXPORT_JSON, EXPORT_PERFETTO };

#ifdef HAVE_ZLIB
/* Level 1: most of the size for a fraction of the time of the default 6. */
static int deflate_run(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len)
{
    uLongf n = (uLongf)*dst_len;
    if (compress2(dst, &n, src, (uLong)src_len, 1) != Z_OK)
        return -1;
    *dst_len = (size_t)n;
    return 0;
}
static const struct obs_perfetto_options perfetto_options = {deflate_run};
#else
static const struct obs_perfetto_options perfetto_options = {NULL};
#endif

static int run_export(const struct report_command *cmd, int argc, char **argv, enum export_kind kind)
{
    struct cli_args a;
    struct cli_output out;
    struct obs_trace *t;
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
    if (kind == EXPORT_CSV)
        ok = obs_report_csv(t, out.f) == 0;
    else if (kind == EXPORT_JSON)
        ok = obs_report_json(t, out.f, NULL) == 0;
    else
        ok = obs_report_perfetto(t, out.f, &perfetto_options, NULL) == 0;
    obs_trace_free(t);
    return cli_close_output(&out, ok);
}

/* summary [--format table|csv|json] [filters] FILE.obs */
static int run_summary(const struct report_command *cmd, int argc, char **argv)
{
    struct report_opts o;
    struct cli_output out;
    struct report_doc d;
    struct obs_trace *t;
    int rc = report_opts_parse(cmd, ROPT_FILTERS, argc, argv, &o), ok;

    if (rc >= 0)
        return rc;
    t = cli_open_trace(o.args[0]);
    if (t == NULL) {
        report_opts_free(&o);
        return EXIT_TRACE_ERROR;
    }
    if (cli_open_output(&out, o.output) != 0) {
        obs_trace_free(t);
        report_opts_free(&o);
        return EXIT_TRACE_ERROR;
    }
    errno = 0;
    rdoc_begin(&d, out.f, o.format);
    ok = report_summary(t, &o.filter, &d) == 0;
    ok = rdoc_end(&d) == 0 && ok;
    obs_trace_free(t);
    report_opts_free(&o);
    return cli_close_output(&out, ok);
}

static int run_csv(const struct report_command *cmd, int argc, char **argv)
{
    return run_export(cmd, argc, argv, EXPORT_CSV);
}

static int run_json(const struct report_command *cmd, int argc, char **argv)
{
    return run_export(cmd, argc, argv, EXPORT_JSON);
}

static int run_perfetto(const struct report_command *cmd, int argc, char **argv)
{
    return run_export(cmd, argc, argv, EXPORT_PERFETTO);
}

const struct report_command report_cmd_summary = {
    "summary",
    "Print the kernel, copy, memset, API, phase and per-phase kernel tables, TTFT and tokens/s.",
    "summary [--format table|csv|json] [filters] [-o OUT] FILE.obs",
    "The kernel table has nsys cuda_gpu_kern_sum's columns, sorted by total time;\n"
    "copies and memsets by operation as cuda_gpu_mem_time_sum (time) and\n"
    "cuda_gpu_mem_size_sum (MB); kernels per phase as nvtx_kern_sum; TTFT and\n"
    "tokens/s per generation. Times are GPU times when the trace has them\n"
    "(OBS_GPU_TIME=events), host API times otherwise; each table's title says which.\n"
    "The filters select the calls the kernel, copy, memset, API, graph and\n"
    "per-phase tables count; the phase tables, TTFT and tokens/s are those of the\n"
    "whole trace. docs/reports.md defines every column.\n"
    "\n" REPORT_FORMAT_HELP REPORT_FILTER_HELP,
    CLI_OPT_OUTPUT,
    1,
    1,
    run_summary,
};

const struct report_command report_cmd_csv = {
    "csv",
    "Write one CSV row per recorded call, in sequence order.",
    "csv [-o OUT] FILE.obs",
    "Columns: seq,tid,api,kind,name,stream,grid_x,grid_y,grid_z,block_x,block_y,\n"
    "block_z,shmem,bytes,direction,host_begin_ns,host_end_ns,gpu_begin_ns,gpu_end_ns,\n"
    "status,phase,step. Fields that do not apply to a call are empty; name is the\n"
    "demangled kernel name; times are CLOCK_MONOTONIC nanoseconds.\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_csv,
};

const struct report_command report_cmd_json = {
    "json",
    "Write a Chrome trace JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open.",
    "json [-o OUT] FILE.obs",
    "One track per host thread with a slice per API call; with GPU time, one track\n"
    "per GPU stream and a flow arrow from each launch to its kernel; phase ranges\n"
    "and a records-lost counter when the trace has them.\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_json,
};

const struct report_command report_cmd_perfetto = {
    "perfetto",
    "Write a native Perfetto trace (.pftrace) that ui.perfetto.dev opens at any size.",
    "perfetto [-o OUT.pftrace] FILE.obs",
    "The timeline of json in Perfetto's protobuf format, a tenth of the size or\n"
    "less: a track per host thread with a slice per API call; with GPU time, a\n"
    "track per GPU stream and a flow from each launch to its device slice; phase\n"
    "tracks; a records-lost counter. Names are interned, timestamps delta-encoded.\n",
    CLI_OPT_OUTPUT,
    1,
    1,
    run_perfetto,
};
