/* obs-report summary | csv | json | perfetto: the trace as text (or the
 * summary's reports as csv/json: reports.h), rows or a timeline (Chrome
 * JSON, or Perfetto's own protobuf format). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "report_cli.h"
#include "report_opts.h"
#include "reports.h"
#include "trace/trace.h"

enum export_kind { EXPORT_CSV, EXPORT_JSON, EXPORT_PERFETTO };

/* OUT ends in .gz: the output goes through gzip (json only). */
static int gz_name(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int run_export(const struct report_command *cmd, int argc, char **argv, enum export_kind kind)
{
    struct cli_args a;
    struct cli_output out;
    struct obs_trace *t;
    int collectives = kind == EXPORT_CSV && cli_take_flag(&argc, argv, "--collectives", NULL);
    int phases = kind == EXPORT_CSV && cli_take_flag(&argc, argv, "--phases", NULL);
    int rc = cli_parse(cmd, argc, argv, &a), ok;

    if (rc >= 0)
        return rc;
    if (kind == EXPORT_JSON && gz_name(a.output) && !obs_deflate_available()) {
        fprintf(stderr, "obs-report: %s: cannot write .gz: this obs-report was built without zlib "
                        "(configure found no zlib.h; Debian: zlib1g-dev); write the .json and gzip it\n",
                a.output);
        return EXIT_TRACE_ERROR;
    }
    cli_progress_begin(cmd->name, a.args[0]);
    t = cli_open_trace(a.args[0]);
    if (t == NULL) {
        cli_progress_end();
        return EXIT_TRACE_ERROR;
    }
    cli_progress_calls(t->ncalls);
    if (cli_open_output(&out, a.output) != 0) {
        cli_progress_end();
        obs_trace_free(t);
        return EXIT_TRACE_ERROR;
    }
    if (kind == EXPORT_JSON && gz_name(a.output)) {
        FILE *gz = obs_gzip_fopen(out.f); /* closing it closes out.f */
        if (gz == NULL) {
            cli_progress_end();
            obs_trace_free(t);
            return cli_close_output(&out, 0);
        }
        out.f = gz;
    }
    errno = 0;
    if (kind == EXPORT_CSV) {
        ok = (collectives ? obs_report_csv_collectives(t, out.f)
              : phases    ? obs_report_csv_phases(t, out.f)
                          : obs_report_csv(t, out.f)) == 0;
    } else if (kind == EXPORT_JSON) {
        ok = obs_report_json(t, out.f, NULL) == 0;
    } else {
        struct obs_perfetto_options opt = {obs_deflate_available() ? obs_deflate : NULL, 1};
        ok = obs_report_perfetto(t, out.f, &opt, NULL) == 0;
    }
    cli_progress_end();
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
    if (o.nargs > 1) { /* the ranks of a run: their summary is the ranks report (docs/ranks.md) */
        if (obs_call_filter_active(&o.filter))
            rc = cli_usage_error(cmd, "%s: the filters select calls of one trace: not with several", cmd->name);
        else
            rc = report_ranks_run(o.args, o.nargs, o.output, o.format, RANKS_TABLES, 0);
        report_opts_free(&o);
        return rc;
    }
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
    "summary [--format table|csv|json] [filters] [-o OUT] FILE.obs...",
    "The kernel table has nsys cuda_gpu_kern_sum's columns, sorted by total time;\n"
    "copies and memsets by operation as cuda_gpu_mem_time_sum (time) and\n"
    "cuda_gpu_mem_size_sum (MB); kernels per phase as nvtx_kern_sum; TTFT and\n"
    "tokens/s per generation. Times are GPU times when the trace has them\n"
    "(OBS_GPU_TIME=events), host API times otherwise; each table's title says which.\n"
    "The filters select the calls the kernel, copy, memset, API, graph and\n"
    "per-phase tables count; the phase tables, TTFT and tokens/s are those of the\n"
    "whole trace. docs/reports.md defines every column.\n"
    "Several traces (the ranks of a run, no filters): their summary is that of\n"
    "`obs-report ranks`: the ranks with their straggler counts, the rank-skew\n"
    "table (the collectives with the largest arrival skew), collectives by\n"
    "operation, decode steps with the slowest rank (docs/ranks.md).\n"
    "\n" REPORT_FORMAT_HELP REPORT_FILTER_HELP,
    CLI_OPT_OUTPUT,
    1,
    INT_MAX,
    run_summary,
};

const struct report_command report_cmd_csv = {
    "csv",
    "Write one CSV row per recorded call, in sequence order.",
    "csv [--collectives | --phases] [-o OUT] [-q] FILE.obs",
    "Columns: seq,tid,api,kind,name,stream,grid_x,grid_y,grid_z,block_x,block_y,\n"
    "block_z,shmem,bytes,direction,host_begin_ns,host_end_ns,gpu_begin_ns,gpu_end_ns,\n"
    "status,phase,step,layer,generation,range. Fields that do not apply to a call are\n"
    "empty; name is the demangled kernel name; layer is k of the call's LAYER/k;\n"
    "range the index of the phase range that labels it; times are CLOCK_MONOTONIC nanoseconds. On a terminal,\n"
    "a progress line on stderr (-q, --quiet: none).\n"
    "--collectives: one row per NCCL call instead, in time order: tid,api,kind\n"
    "(coll or comm),comm (the communicator's identity, the same on every rank),rank,\n"
    "nranks,seq (the call's number on its communicator),count,datatype,bytes,redop,\n"
    "peer (root or peer),stream,group,calls,kernels (the records and kernel launches\n"
    "it caused),host_begin_ns,host_end_ns,status,phase,step,layer.\n"
    "--phases: one row per phase range instead: range,tid,name,phase,step,\n"
    "generation,depth,parent,relabel,ended,begin_ns,end_ns,calls.\n",
    CLI_OPT_OUTPUT | CLI_OPT_PROGRESS,
    1,
    1,
    run_csv,
};

const struct report_command report_cmd_json = {
    "json",
    "Write a Chrome trace JSON that Perfetto (ui.perfetto.dev) and chrome://tracing open.",
    "json [-o OUT[.gz]] [-q] FILE.obs",
    "One track per host thread with a slice per API call; with GPU time, one track\n"
    "per GPU stream and a flow arrow from each launch to its kernel; phase ranges\n"
    "and a records-lost counter when the trace has them. OUT ending in .gz is\n"
    "written gzip-compressed (zlib). On a terminal, a progress line on stderr\n"
    "(-q, --quiet: none).\n",
    CLI_OPT_OUTPUT | CLI_OPT_PROGRESS,
    1,
    1,
    run_json,
};

const struct report_command report_cmd_perfetto = {
    "perfetto",
    "Write a native Perfetto trace (.pftrace) that ui.perfetto.dev opens at any size.",
    "perfetto [-o OUT.pftrace] [-q] FILE.obs",
    "The timeline of json in Perfetto's protobuf format, 50 to 100 times smaller\n"
    "(about 11 bytes per call): a track per host thread with a slice per API call; with GPU time, a\n"
    "track per GPU stream and a flow from each launch to its device slice; phase\n"
    "tracks; a records-lost counter. Names are interned, timestamps delta-encoded,\n"
    "packets deflated (zlib) in runs. On a terminal, a progress line on stderr\n"
    "(-q, --quiet: none).\n",
    CLI_OPT_OUTPUT | CLI_OPT_PROGRESS,
    1,
    1,
    run_perfetto,
};
