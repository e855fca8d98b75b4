/* GPU time with events (OBS_GPU_TIME=events) on the simulated runtimes,
 * whose events run on a virtual clock charged by the cost model
 * (sim/cost_model.h), so device durations are exact. For CUDA and for
 * HIP (the same checks):
 *   - the API driver: every kernel, copy, memset and graph launch that
 *     succeeded has a GPU span, except the two made while their stream
 *     captured a graph; durations equal the cost model (a graph launch: the
 *     sum of its nodes'); spans on one stream in call order, never
 *     overlapping; stdout and exit status as without the shim (--errors
 *     too: the driver checks the last error); no event recorded on the
 *     capturing stream and the graph's node count as without GPU time;
 *     the summary's tables say GPU time, no span missing; the JSON has
 *     device slices per stream and a flow to each;
 *   - gpu_time_app --last-error: what the app reads as its last error is
 *     unchanged, also when the shim's own event calls are made to fail
 *     (OBS_SIM_FAIL), and those calls then have no span (or a missing one);
 *   - threads that exit with work pending still get their spans; a process
 *     killed by SIGTERM before resolving says "GPU spans missing: N";
 *   - the real workload (obs_cuda / obs_hip): durations equal the cost model
 *     (prefill 67 536 ns at the default sizes), TTFT from the spans matches
 *     what it prints within 2%, its output is unchanged; with --graphs the
 *     graph launches' spans and node counts are right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

struct family {
    const char *name;
    const char *driver, *app;
    const struct workload_bin *workload;
    const char *captured_launch, *captured_copy; /* the API driver captures the 2nd call of each */
    const char *begin_capture, *end_capture, *event_record, *graph_launch;
    /* OBS_SIM_FAIL values that hit the shim's own calls on the app's first
     * timed launch: capture check, begin event, end event (the reference
     * event is the first record); then the first elapsed time it reads. */
    const char *fail_capture_check, *fail_begin, *fail_end, *fail_elapsed;
};

static const struct family families[] = {
    {"CUDA", "tests/apps/cuda_api_driver", "tests/apps/gpu_time_app", &workload_bins[0], "cudaLaunchKernel",
     "cudaMemcpyAsync", "cudaStreamBeginCapture", "cudaStreamEndCapture", "cudaEventRecord", "cudaGraphLaunch",
     "cudaStreamIsCapturing:1", "cudaEventRecord:2", "cudaEventRecord:3", "cudaEventElapsedTime:1"},
    {"HIP", "tests/apps/hip_api_driver", "tests/apps/gpu_time_hip_app", &workload_bins[2], "hipLaunchKernel",
     "hipMemcpyAsync", "hipStreamBeginCapture", "hipStreamEndCapture", "hipEventRecord", "hipGraphLaunch",
     "hipStreamIsCapturing:1", "hipEventRecord:2", "hipEventRecord:3", "hipEventElapsedTime:1"},
};

/* ---- running ---------------------------------------------------------------------- */

struct run {
    struct run_result res;
    struct obs_trace *t; /* NULL when no trace was expected or readable */
    char log[4200], obs[4200], json[4200];
};

enum { PLAIN = 0, SHIM = 1, GPU = 2 }; /* no shim; shim, host times only; shim with GPU time */

/* Run argv on the simulators. extra: one more "NAME=value" or NULL. */
static void run_tagged(const char *tag, const char *const argv[], int mode, const char *extra, struct run *r)
{
    char out_env[4300], log_env[4300];
    const char *env[8];
    size_t n = 0;

    memset(r, 0, sizeof *r);
    snprintf(r->log, sizeof r->log, "%s/%s.log", test_tmpdir(), tag);
    snprintf(r->obs, sizeof r->obs, "%s/%s.obs", test_tmpdir(), tag);
    snprintf(r->json, sizeof r->json, "%s/%s.json", test_tmpdir(), tag);
    unlink(r->log);
    unlink(r->obs);
    unlink(r->json);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), tag);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", r->log);
    env[n++] = sim_library_path_env();
    env[n++] = log_env;
    env[n++] = out_env;
    env[n++] = mode == GPU ? "OBS_GPU_TIME=events" : "OBS_GPU_TIME=off";
    env[n++] = "OBS_TRACE=json"; /* the checks read the JSON */
    if (extra != NULL)
        env[n++] = extra;
    env[n] = NULL;
    shim_run(argv, env, mode != PLAIN, 120, &r->res);
    if (mode != PLAIN && access(r->obs, R_OK) == 0)
        r->t = shim_trace_open(r->obs);
}

static void run_free(struct run *r)
{
    if (r->t != NULL)
        obs_trace_free(r->t);
    run_result_free(&r->res);
}

/* ---- what the cost model says ------------------------------------------------------- */

static int timed_kind(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH;
}

static uint64_t threads_of(const struct obs_call *c)
{
    return (uint64_t)c->u.grid.x * c->u.grid.y * c->u.grid.z * c->block_x * c->block_y * c->block_z;
}

/* Device time of a kernel, copy or memset (in_graph: replayed from a
 * graph). A "default" copy is charged by where its pointers are, which the
 * record does not say: *alt gets the other rate's cost. */
static uint64_t model_cost(const struct obs_call *c, int in_graph, uint64_t *alt)
{
    unsigned dir = obs_call_direction(c);
    *alt = 0;
    switch (c->kind) {
    case OBS_KIND_KERNEL:
        return sim_kernel_cost_ns(threads_of(c), in_graph);
    case OBS_KIND_MEMCPY:
        if (dir == OBS_DIR_DEFAULT)
            *alt = sim_copy_cost_ns(c->u.bytes, 1);
        return sim_copy_cost_ns(c->u.bytes, dir == OBS_DIR_DTOD);
    case OBS_KIND_MEMSET:
        return sim_memset_cost_ns(c->u.bytes);
    default:
        return 0;
    }
}

static uint64_t span_ns(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_gpu_time *g = obs_call_gpu(t, c);
    return g ? g->end - g->begin : 0;
}

/* ---- the checks on a trace ------------------------------------------------------------ */

/* Which successful timed calls may lack a span: those made on a capturing
 * stream. Set by the caller per trace. */
struct untimed_rule {
    const char *api1, *api2; /* API driver: the 2nd call of each */
    long kernel_from, kernel_to; /* workload --graphs: kernel launches number from..to (1-based) */
};

static int expected_untimed(const struct obs_trace *t, size_t seq, const struct untimed_rule *u,
                            unsigned long *nth_api1, unsigned long *nth_api2, long *nth_kernel)
{
    const struct obs_call *c = &t->calls[seq];
    const char *api = obs_api_name(c->api);
    int hit = 0;
    if (u->api1 && strcmp(api, u->api1) == 0 && ++*nth_api1 == 2)
        hit = 1;
    if (u->api2 && strcmp(api, u->api2) == 0 && ++*nth_api2 == 2)
        hit = 1;
    if (c->kind == OBS_KIND_KERNEL) {
        ++*nth_kernel;
        if (*nth_kernel >= u->kernel_from && *nth_kernel <= u->kernel_to)
            hit = 1;
    }
    return hit;
}

/* Every timed call has its span but the captured ones; durations; order. */
static void check_spans(const char *label, const struct obs_trace *t, const struct untimed_rule *u)
{
    unsigned long n1 = 0, n2 = 0, timed = 0, with_span = 0, wrong_untimed = 0, captured = 0;
    unsigned long bad_cost = 0, graphs = 0, bad_graph = 0, disorder = 0, checked_cost = 0;
    long nk = 0;
    uint64_t graph_cost = 0, alt;
    size_t i, j;

    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        int should_lack = expected_untimed(t, i, u, &n1, &n2, &nk);
        if (!timed_kind(c->kind) || c->status != 0)
            continue;
        timed++;
        if (c->gpu != OBS_NONE)
            with_span++;
        if (should_lack) {
            captured++;
            graph_cost += model_cost(c, 1, &alt);
        }
        if ((c->gpu == OBS_NONE) != (should_lack != 0)) {
            wrong_untimed++;
            diag("%s: seq %zu %s: %s", label, i, obs_api_name(c->api),
                 c->gpu == OBS_NONE ? "no GPU span" : "a GPU span though its stream was capturing");
        }
    }
    ok(timed > 0 && wrong_untimed == 0,
       "%s: every successful kernel/copy/memset/graph call has a GPU span (%lu of %lu), "
       "except the %lu made while capturing", label, with_span, timed, captured);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t want, got = span_ns(t, c);
        if (c->gpu == OBS_NONE)
            continue;
        if (c->kind == OBS_KIND_GRAPH) {
            graphs++;
            if (got != graph_cost) {
                bad_graph++;
                diag("%s: seq %zu graph launch: %llu ns on the device, its nodes cost %llu", label, i,
                     (unsigned long long)got, (unsigned long long)graph_cost);
            }
            continue;
        }
        want = model_cost(c, 0, &alt);
        checked_cost++;
        if (got != want && (alt == 0 || got != alt)) {
            bad_cost++;
            diag("%s: seq %zu %s: %llu ns on the device, the cost model says %llu", label, i,
                 obs_api_name(c->api), (unsigned long long)got, (unsigned long long)want);
        }
    }
    ok(checked_cost > 0 && bad_cost == 0, "%s: %lu device durations equal the cost model", label, checked_cost);
    if (captured > 0)
        ok(graphs > 0 && bad_graph == 0, "%s: %lu graph launch spans equal their nodes' cost (%llu ns)", label,
           graphs, (unsigned long long)graph_cost);
    else
        is_int(0, (long long)graphs, "%s: no graph launched, no graph span", label);
    /* One stream runs one thing at a time, in the order it was given. */
    for (i = 0; i < t->nstreams + 1; i++) {
        uint32_t stream = i == 0 ? 0 : t->streams[i - 1].id;
        uint64_t prev_begin = 0, prev_end = 0;
        for (j = 0; j < t->ncalls; j++) {
            const struct obs_call *c = &t->calls[j];
            const struct obs_gpu_time *g = obs_call_gpu(t, c);
            if (g == NULL || c->stream != stream)
                continue;
            if (g->begin < prev_end || g->begin < prev_begin) {
                disorder++;
                diag("%s: stream %u: seq %zu begins at %llu, before the previous span ends (%llu)", label,
                     stream, j, (unsigned long long)g->begin, (unsigned long long)prev_end);
            }
            prev_begin = g->begin;
            prev_end = g->end;
        }
    }
    is_int(0, (long long)disorder, "%s: spans on each stream in call order, none overlapping", label);
    ok(t->missing_gpu_spans == 0 && t->orphan_gpu_spans == 0, "%s: no span missing (%llu), none orphaned (%llu)",
       label, (unsigned long long)t->missing_gpu_spans, (unsigned long long)t->orphan_gpu_spans);
}

static void check_trace_header(const char *label, const struct obs_trace *t)
{
    const char *v = obs_trace_meta(t, "gpu_time");
    const char *spans = obs_trace_meta(t, "gpu_time_spans");
    ok((t->flags & OBS_FILE_GPU_TIME) && v != NULL && strcmp(v, "events") == 0,
       "%s: header flag OBS_FILE_GPU_TIME and meta gpu_time=events", label);
    ok(spans != NULL && strtoull(spans, NULL, 10) == t->ngpu, "%s: meta gpu_time_spans=%s, %zu spans in the trace",
       label, spans ? spans : "(none)", t->ngpu);
}

/* The JSON through the real parser (tests/trace_json_check.py). */
static void check_json(const char *label, const struct run *r)
{
    const char *python = getenv("OBS_PYTHON3");
    char script[4096], *out;
    const char *argv[4];
    struct run_result pr;
    unsigned long slices = 0, flows = 0, tracks = 0;
    size_t i, nstreams = 0;
    const char *p;

    if (python == NULL || *python == '\0') {
        skip_block(2, "%s: no python3 to parse the JSON", label);
        return;
    }
    snprintf(script, sizeof script, "%s/tests/trace_json_check.py", test_srcdir());
    argv[0] = python;
    argv[1] = script;
    argv[2] = r->json;
    argv[3] = NULL;
    if (run_program(argv, NULL, 120, &pr) != 0)
        bail("cannot run %s", python);
    if (pr.err_len)
        diag_text("trace_json_check", pr.err);
    out = pr.out;
    if ((p = strstr(out, "\ngpu_slices=")) != NULL)
        slices = strtoul(p + 12, NULL, 10);
    if ((p = strstr(out, "\nflows=")) != NULL)
        flows = strtoul(p + 7, NULL, 10);
    if ((p = strstr(out, "\ngpu_tracks=")) != NULL)
        tracks = strtoul(p + 12, NULL, 10);
    for (i = 0; i < r->t->ncalls; i++) { /* distinct streams with spans */
        size_t j;
        int seen = 0;
        if (r->t->calls[i].gpu == OBS_NONE)
            continue;
        for (j = 0; j < i && !seen; j++)
            seen = r->t->calls[j].gpu != OBS_NONE && r->t->calls[j].stream == r->t->calls[i].stream;
        nstreams += !seen;
    }
    ok(pr.exited && pr.status == 0, "%s: the JSON parses and is well formed", label);
    ok(slices == r->t->ngpu && flows == r->t->ngpu && tracks == nstreams && nstreams > 1,
       "%s: JSON: %lu device slices and %lu flows for %zu spans, %lu GPU stream tracks for %zu streams", label,
       slices, flows, r->t->ngpu, tracks, nstreams);
    run_result_free(&pr);
}

/* The simulator's log: no event recorded on the capturing stream while it
 * captured; the graph launches' node counts. */
static void scan_log(const struct family *f, const char *path, unsigned long *in_capture, unsigned long *records,
                     char *nodes, size_t nodes_len)
{
    struct sim_call *log;
    size_t n = sim_log_read(path, &log), i;
    char capturing[32] = "";
    *in_capture = *records = 0;
    nodes[0] = '\0';
    for (i = 0; i < n; i++) {
        if (strcmp(log[i].api, f->begin_capture) == 0)
            snprintf(capturing, sizeof capturing, "%s", log[i].stream);
        else if (strcmp(log[i].api, f->end_capture) == 0)
            capturing[0] = '\0';
        else if (strcmp(log[i].api, f->event_record) == 0) {
            (*records)++;
            if (capturing[0] && strcmp(log[i].stream, capturing) == 0)
                (*in_capture)++;
        } else if (strncmp(log[i].api, f->graph_launch, strlen(f->graph_launch)) == 0) {
            size_t len = strlen(nodes);
            snprintf(nodes + len, nodes_len - len, "%s%s", len ? "," : "", log[i].bytes);
        }
    }
    free(log);
}

/* ---- the API driver ----------------------------------------------------------------------- */

static void test_driver(const struct family *f)
{
    const char *bin = shim_build_path(f->driver);
    const char *argv[] = {bin, NULL}, *argv_errors[] = {bin, "--errors", NULL};
    struct untimed_rule rule = {f->captured_launch, f->captured_copy, 0, -1};
    struct run plain, shim, gpu, perr, gerr;
    char label[64], nodes_shim[256], nodes_gpu[256];
    unsigned long in_capture, records_gpu, in_capture_shim, records_shim;

    snprintf(label, sizeof label, "%s API driver", f->name);
    run_tagged("drv-plain", argv, PLAIN, NULL, &plain);
    run_tagged("drv-shim", argv, SHIM, NULL, &shim);
    run_tagged("drv-gpu", argv, GPU, NULL, &gpu);
    ok(gpu.res.exited && gpu.res.status == 0 && plain.res.status == 0, "%s: exit 0 with GPU time, as without the shim",
       label);
    is_string(plain.res.out, gpu.res.out, "%s: same stdout with GPU time (every call's status)", label);
    is_int(0, (long long)warning_lines(gpu.res.err), "%s: no warning", label);
    if (gpu.t == NULL) {
        skip_block(11, "%s: no trace", label);
    } else {
        check_trace_header(label, gpu.t);
        check_spans(label, gpu.t, &rule);
        ok(strstr(gpu.res.err, "Kernels (GPU time") != NULL &&
               strstr(gpu.res.err, "Copies by direction and memsets (GPU time") != NULL,
           "%s: the brief summary's kernel and copy/memset tables say GPU time", label);
        ok(strstr(gpu.res.err, "GPU spans missing: 0") != NULL, "%s: the summary says GPU spans missing: 0", label);
        check_json(label, &gpu);
    }
    scan_log(f, gpu.log, &in_capture, &records_gpu, nodes_gpu, sizeof nodes_gpu);
    scan_log(f, shim.log, &in_capture_shim, &records_shim, nodes_shim, sizeof nodes_shim);
    ok(records_gpu > records_shim + 10 && in_capture == 0,
       "%s: %lu events recorded by the shim, none on the stream while it captured", label,
       records_gpu - records_shim);
    ok(nodes_gpu[0] != '\0' && strcmp(nodes_gpu, nodes_shim) == 0,
       "%s: graph launches replay the same node counts as without GPU time (%s)", label, nodes_gpu);
    run_free(&plain);
    run_free(&shim);
    run_free(&gpu);

    run_tagged("drv-errors-plain", argv_errors, PLAIN, NULL, &perr);
    run_tagged("drv-errors-gpu", argv_errors, GPU, NULL, &gerr);
    ok(gerr.res.exited && gerr.res.status == perr.res.status && perr.res.status == 0,
       "%s --errors: exit status unchanged (%d)", label, gerr.res.status);
    is_string(perr.res.out, gerr.res.out, "%s --errors: same stdout: every status and last error as expected", label);
    ok(gerr.t != NULL && gerr.t->missing_gpu_spans == 0, "%s --errors: failed calls are not timed, none missing",
       label);
    run_free(&perr);
    run_free(&gerr);
}

/* ---- the last error, and the shim's own calls failing --------------------------------------- */

static unsigned long spans_of(const struct run *r)
{
    return r->t ? (unsigned long)r->t->ngpu : 0;
}

static void test_last_error(const struct family *f)
{
    const char *bin = shim_build_path(f->app);
    const char *argv[] = {bin, "--last-error", NULL};
    struct {
        const char *what, *fail;
        int missing; /* 1: the span is missing (read failed); 0: the call is not timed */
    } cases[] = {
        {"its capture check fails", f->fail_capture_check, 0},
        {"its begin event fails", f->fail_begin, 0},
        {"its end event fails", f->fail_end, 0},
        {"reading an elapsed time fails", f->fail_elapsed, 1},
    };
    struct run plain, gpu;
    char label[64], env[128];
    size_t i;

    snprintf(label, sizeof label, "%s last error", f->name);
    run_tagged("le-plain", argv, PLAIN, NULL, &plain);
    run_tagged("le-gpu", argv, GPU, NULL, &gpu);
    ok(plain.res.exited && plain.res.status == 0 && strstr(plain.res.out, "get after the failed launch 9"),
       "%s: the app reads its errors (%s)", label, f->app);
    is_string(plain.res.out, gpu.res.out, "%s: what the app reads is unchanged with GPU time", label);
    ok(gpu.t != NULL && spans_of(&gpu) == 4 && gpu.t->missing_gpu_spans == 0,
       "%s: its 3 good launches and 1 copy have spans (%lu)", label, spans_of(&gpu));
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct run r;
        snprintf(env, sizeof env, "OBS_SIM_FAIL=%s", cases[i].fail);
        run_tagged("le-fail", argv, GPU, env, &r);
        is_string(plain.res.out, r.res.out, "%s: unchanged when the shim's call fails: %s (%s)", label, cases[i].what,
                  cases[i].fail);
        ok(r.t != NULL && spans_of(&r) == spans_of(&gpu) - 1 &&
               r.t->missing_gpu_spans == (uint64_t)cases[i].missing,
           "%s: %s: that call %s (%lu spans, %llu missing)", label, cases[i].what,
           cases[i].missing ? "is counted missing" : "is not timed", spans_of(&r),
           r.t ? (unsigned long long)r.t->missing_gpu_spans : 0ULL);
        run_free(&r);
    }
    run_free(&plain);
    run_free(&gpu);
}

/* ---- threads exiting, a process killed ---------------------------------------------------------- */

static void test_endings(const struct family *f)
{
    const char *bin = shim_build_path(f->app);
    const char *argv_threads[] = {bin, "--threads", "4", "--launches", "50", "--no-sync", NULL};
    const char *argv_killed[] = {bin, "--launches", "5", "--signal", NULL};
    struct run r;
    char label[64], path[4300], *summary;
    const char *report_argv[5];
    struct run_result rep;

    snprintf(label, sizeof label, "%s endings", f->name);
    run_tagged("threads", argv_threads, GPU, "OBS_SUMMARY=0", &r);
    ok(r.res.exited && r.res.status == 0 && r.t != NULL && r.t->ngpu == 200 && r.t->missing_gpu_spans == 0,
       "%s: 4 threads exiting with 50 launches pending each, no sync at all: 200 spans (%lu)", label, spans_of(&r));
    run_free(&r);

    run_tagged("killed", argv_killed, GPU, "OBS_SUMMARY=0", &r);
    ok(!r.res.exited && r.res.signal == 15, "%s: the app still dies of its SIGTERM", label);
    ok(r.t != NULL && r.t->missing_gpu_spans == 5 && r.t->ngpu == 0,
       "%s: killed before its 5 launches were resolved: all 5 counted missing (%llu)", label,
       r.t ? (unsigned long long)r.t->missing_gpu_spans : 0ULL);
    snprintf(path, sizeof path, "%s/obs-report", test_builddir());
    report_argv[0] = path;
    report_argv[1] = "summary";
    report_argv[2] = r.obs;
    report_argv[3] = NULL;
    if (run_program(report_argv, NULL, 60, &rep) != 0)
        bail("cannot run %s", path);
    summary = rep.out;
    ok(summary != NULL && strstr(summary, "GPU spans missing: 5") != NULL,
       "%s: obs-report summary says \"GPU spans missing: 5\"", label);
    run_result_free(&rep);
    run_free(&r);
}

/* ---- the reference workload ------------------------------------------------------------------------- */

static int is_kernel(const struct obs_trace *t, const struct obs_call *c, const char *name)
{
    const char *k = obs_call_kernel_name(t, c);
    return c->kind == OBS_KIND_KERNEL && k != NULL && strstr(k, name) != NULL;
}

/* Best TTFT over the timed repetitions, from the spans: each prefill after
 * the warm-up one, to the end of the first decode after it. */
static double ttft_from_spans(const struct obs_trace *t, unsigned *reps)
{
    double best = 1e30;
    size_t i, j, prefills = 0;
    *reps = 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_gpu_time *b = obs_call_gpu(t, &t->calls[i]);
        if (!is_kernel(t, &t->calls[i], "prefill_kernel") || prefills++ == 0 || b == NULL)
            continue; /* the first is the warm-up */
        for (j = i + 1; j < t->ncalls; j++) {
            const struct obs_gpu_time *e = obs_call_gpu(t, &t->calls[j]);
            if (is_kernel(t, &t->calls[j], "decode_kernel") && e != NULL) {
                double ms = (double)(e->end - b->begin) / 1e6;
                if (ms < best)
                    best = ms;
                (*reps)++;
                break;
            }
        }
    }
    return best;
}

static void test_workload(const struct family *f, int graphs)
{
    const char *why = NULL;
    const char *bin = workload_path(f->workload, &why);
    const char *argv[] = {bin, "--repeat", "3", "--decode", "16", graphs ? "--graphs" : NULL, NULL};
    /* --graphs: steps 1..15 are captured once, after the 3 warm-up launches: 30 kernels */
    struct untimed_rule rule = {NULL, NULL, graphs ? 4 : 0, graphs ? 33 : -1};
    struct run plain, shim, gpu;
    char label[96];
    double printed = 0, from_spans;
    unsigned reps, bad_prefill = 0, prefills = 0;
    const char *p;
    size_t i;

    snprintf(label, sizeof label, "%s%s", f->workload->label, graphs ? " --graphs" : "");
    if (bin == NULL) {
        skip_block(graphs ? 14 : 13, "%s: %s", label, why);
        return;
    }
    run_tagged("wl-plain", argv, PLAIN, NULL, &plain);
    run_tagged("wl-gpu", argv, GPU, NULL, &gpu);
    ok(gpu.res.exited && gpu.res.status == 0 && plain.res.status == 0, "%s: exit 0 with GPU time", label);
    is_string(plain.res.out, gpu.res.out, "%s: same output with GPU time (its own event timings too)", label);
    is_int(0, (long long)warning_lines(gpu.res.err), "%s: no warning", label);
    if (gpu.t == NULL) {
        skip_block(graphs ? 11 : 10, "%s: no trace", label);
        run_free(&plain);
        run_free(&gpu);
        return;
    }
    check_trace_header(label, gpu.t);
    check_spans(label, gpu.t, &rule);
    for (i = 0; i < gpu.t->ncalls; i++)
        if (is_kernel(gpu.t, &gpu.t->calls[i], "prefill_kernel")) {
            prefills++;
            if (span_ns(gpu.t, &gpu.t->calls[i]) != 67536)
                bad_prefill++;
        }
    ok(prefills == 4 && bad_prefill == 0, "%s: each of the %u prefills takes 67536 ns on the device", label, prefills);
    p = strstr(gpu.res.out, "TTFT_ms=");
    if (p != NULL)
        printed = strtod(p + 8, NULL);
    from_spans = ttft_from_spans(gpu.t, &reps);
    ok(reps == 3 && printed > 0, "%s: 3 repetitions found in the spans, TTFT printed (%.3f ms)", label, printed);
    is_double(printed, from_spans, 0.02, "%s: TTFT from GPU spans %.6f ms = printed %.3f ms within 2%%", label,
              from_spans, printed);
    if (graphs) {
        const char *argv_shim[] = {bin, "--repeat", "3", "--decode", "16", "--graphs", NULL};
        unsigned long nodes_gpu = 0, nodes_shim = 0;
        run_tagged("wl-shim", argv_shim, SHIM, NULL, &shim);
        for (i = 0; i < gpu.t->ncalls; i++)
            if (gpu.t->calls[i].kind == OBS_KIND_GRAPH)
                nodes_gpu += gpu.t->calls[i].u.bytes;
        for (i = 0; shim.t != NULL && i < shim.t->ncalls; i++)
            if (shim.t->calls[i].kind == OBS_KIND_GRAPH)
                nodes_shim += shim.t->calls[i].u.bytes;
        ok(nodes_gpu == 3 * 30 && nodes_shim == nodes_gpu,
           "%s: the graph holds its 30 kernels, as without GPU time (%lu nodes replayed)", label, nodes_gpu);
        run_free(&shim);
    }
    run_free(&plain);
    run_free(&gpu);
}

int main(void)
{
    size_t i;
    plan_lazy();
    for (i = 0; i < sizeof families / sizeof families[0]; i++) {
        const struct family *f = &families[i];
        test_driver(f);
        test_last_error(f);
        test_endings(f);
        test_workload(f, 0);
        test_workload(f, 1);
    }
    return 0;
}
