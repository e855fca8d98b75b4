/* obs-report summary --format / filters, gaps, top and compare
 * (docs/reports.md), on the fixture and on the reference workload run under
 * the shim on the simulated CUDA runtime, with and without
 * OBS_GPU_TIME=events. Figures are checked against the simulator's cost
 * model and against what this test works out itself from the rows of
 * `obs-report csv` of the same trace: kernel counts and totals per name,
 * device gaps per stream, launch gaps per thread, the sync share and the
 * launches per step. Also: every format parses (CSV column counts, JSON
 * through python3 -m json.tool and a check that numbers are numbers), the
 * filters cut what they should, compare A A gives ratios of 1, compare of
 * two different runs shows the expected differences, a damaged file is one
 * message and exit 1, bad options exit 2. The filter and kernel-statistics
 * API (trace_query.h) is tested directly on the fixture first. */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "shim_test.h"
#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_query.h"
#include "trace/trace_reader.h"
#include "workload_bins.h"

static const char *report;

/* ---- running obs-report ---------------------------------------------------------------- */

/* Run obs-report with the arguments (NULL-terminated). */
static struct run_result report_run(const char *first, ...)
{
    const char *argv[32];
    struct run_result r;
    va_list ap;
    size_t n = 0;
    argv[n++] = report;
    argv[n++] = first;
    va_start(ap, first);
    while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

/* ---- CSV ------------------------------------------------------------------------------- */

#define MAX_FIELDS 32

struct csv_row {
    char *f[MAX_FIELDS];
    size_t n;
};

struct csv_section {
    char name[64];
    struct csv_row head;
    struct csv_row *rows;
    size_t nrows;
    int ragged; /* some row has a different field count than the header */
};

struct csv_doc {
    struct csv_section s[16];
    size_t n;
};

/* Split one CSV line into r; the fields point into line, which is modified. */
static void csv_split(char *line, struct csv_row *r)
{
    r->n = test_csv_split(line, r->f, MAX_FIELDS);
}

/* Parse a report document (--format csv) or, named "", a plain CSV (obs-report
 * csv). text is modified and must outlive doc. */
static void csv_parse(char *text, struct csv_doc *doc, int sections)
{
    char *line = text, *nl;
    struct csv_section *cur = NULL;
    memset(doc, 0, sizeof *doc);
    if (!sections) {
        cur = &doc->s[doc->n++];
        cur->name[0] = '\0';
    }
    for (; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (sections && line[0] == '#' && line[1] == ' ') {
            if (doc->n == 16)
                bail("too many sections");
            cur = &doc->s[doc->n++];
            snprintf(cur->name, sizeof cur->name, "%s", line + 2);
            continue;
        }
        if (line[0] == '\0' || cur == NULL)
            continue;
        if (cur->head.n == 0) {
            csv_split(line, &cur->head);
            continue;
        }
        cur->rows = realloc(cur->rows, (cur->nrows + 1) * sizeof *cur->rows);
        if (cur->rows == NULL)
            bail("out of memory");
        csv_split(line, &cur->rows[cur->nrows]);
        if (cur->rows[cur->nrows].n != cur->head.n)
            cur->ragged = 1;
        cur->nrows++;
    }
}

static void csv_free(struct csv_doc *doc)
{
    size_t i;
    for (i = 0; i < doc->n; i++)
        free(doc->s[i].rows);
}

static const struct csv_section *section(const struct csv_doc *doc, const char *name)
{
    size_t i;
    for (i = 0; i < doc->n; i++)
        if (strcmp(doc->s[i].name, name) == 0)
            return &doc->s[i];
    return NULL;
}

static int col(const struct csv_section *s, const char *key)
{
    size_t i;
    for (i = 0; s && i < s->head.n; i++)
        if (strcmp(s->head.f[i], key) == 0)
            return (int)i;
    bail("no column %s in %s", key, s ? s->name : "(missing section)");
}

static const char *cell(const struct csv_section *s, size_t row, const char *key)
{
    return s->rows[row].f[col(s, key)];
}

static unsigned long long ucell(const struct csv_section *s, size_t row, const char *key)
{
    return strtoull(cell(s, row, key), NULL, 10);
}

static double dcell(const struct csv_section *s, size_t row, const char *key)
{
    return strtod(cell(s, row, key), NULL);
}

/* Row whose column key is value, or -1. */
static long find_row(const struct csv_section *s, const char *key, const char *value)
{
    size_t i;
    if (s == NULL)
        return -1;
    for (i = 0; i < s->nrows; i++)
        if (strcmp(cell(s, i, key), value) == 0)
            return (long)i;
    return -1;
}

/* ---- the calls, from obs-report csv --------------------------------------------------------- */

struct call_row {
    unsigned long long seq, tid, stream, host_begin, host_end, gpu_begin, gpu_end, threads;
    int has_gpu, has_step;
    unsigned step;
    char api[64], kind[16], name[256], phase[64];
};

struct calls {
    struct call_row *c;
    size_t n;
};

static void calls_load(const char *obs, struct calls *out)
{
    struct run_result r = report_run("csv", obs, NULL);
    struct csv_doc doc;
    const struct csv_section *s;
    size_t i;
    if (!run_exited_with(&r, 0))
        bail("obs-report csv %s failed: %s", obs, r.err);
    csv_parse(r.out, &doc, 0);
    s = &doc.s[0];
    out->n = s->nrows;
    out->c = calloc(s->nrows ? s->nrows : 1, sizeof *out->c);
    if (out->c == NULL)
        bail("out of memory");
    for (i = 0; i < s->nrows; i++) {
        struct call_row *c = &out->c[i];
        c->seq = ucell(s, i, "seq");
        c->tid = ucell(s, i, "tid");
        c->stream = ucell(s, i, "stream");
        c->host_begin = ucell(s, i, "host_begin_ns");
        c->host_end = ucell(s, i, "host_end_ns");
        c->has_gpu = cell(s, i, "gpu_begin_ns")[0] != '\0';
        c->gpu_begin = ucell(s, i, "gpu_begin_ns");
        c->gpu_end = ucell(s, i, "gpu_end_ns");
        c->has_step = cell(s, i, "step")[0] != '\0';
        c->step = (unsigned)ucell(s, i, "step");
        c->threads = ucell(s, i, "grid_x") * ucell(s, i, "grid_y") * ucell(s, i, "grid_z") * ucell(s, i, "block_x") *
                     ucell(s, i, "block_y") * ucell(s, i, "block_z");
        snprintf(c->api, sizeof c->api, "%s", cell(s, i, "api"));
        snprintf(c->kind, sizeof c->kind, "%s", cell(s, i, "kind"));
        snprintf(c->name, sizeof c->name, "%s", cell(s, i, "name"));
        snprintf(c->phase, sizeof c->phase, "%s", cell(s, i, "phase"));
    }
    csv_free(&doc);
    run_result_free(&r);
}

static uint64_t call_ns(const struct call_row *c, int gpu)
{
    return gpu ? c->gpu_end - c->gpu_begin : c->host_end - c->host_begin;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* numpy's default (linear) percentile of sorted v. */
static double percentile(const uint64_t *v, size_t n, double p)
{
    double pos = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)pos;
    if (n == 0)
        return 0.0;
    if (lo + 1 >= n)
        return (double)v[n - 1];
    return (double)v[lo] + (pos - (double)lo) * ((double)v[lo + 1] - (double)v[lo]);
}

/* ---- format checks ------------------------------------------------------------------------------ */

static const char *python(void)
{
    const char *p = getenv("OBS_PYTHON3");
    return p && *p ? p : NULL;
}

/* Every section has a header and rows of as many fields; the expected
 * sections are there in that order. */
static void check_csv_doc(const char *label, char *text, const char *const *names)
{
    struct csv_doc doc;
    size_t i, good = 1;
    csv_parse(text, &doc, 1);
    for (i = 0; names[i]; i++)
        if (i >= doc.n || strcmp(doc.s[i].name, names[i]) != 0 || doc.s[i].head.n < 2 || doc.s[i].ragged) {
            diag("%s: section %zu: want %s, have %s (%zu columns%s)", label, i, names[i],
                 i < doc.n ? doc.s[i].name : "none", i < doc.n ? doc.s[i].head.n : 0,
                 i < doc.n && doc.s[i].ragged ? ", ragged rows" : "");
            good = 0;
        }
    ok(good && doc.n == i, "%s: csv: %zu sections, each a header and rows of as many columns", label, i);
    csv_free(&doc);
}

/* json.tool accepts it, and the numeric columns are JSON numbers. */
static void check_json_doc(const char *label, const char *text, const char *const *names)
{
    char path[4200], script[2048];
    struct run_result r;
    size_t i, n = 0;
    FILE *f;
    if (python() == NULL) {
        skip("%s: json: no python3", label);
        skip("%s: json: no python3", label);
        return;
    }
    snprintf(path, sizeof path, "%s/doc.json", test_tmpdir());
    f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        bail("cannot write %s", path);
    {
        const char *argv[] = {python(), "-m", "json.tool", path, NULL};
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run python3");
        ok(run_exited_with(&r, 0), "%s: json: python3 -m json.tool accepts it", label);
        run_result_free(&r);
    }
    n = (size_t)snprintf(script, sizeof script,
                         "import json,sys\n"
                         "d=json.load(open(sys.argv[1]))\n"
                         "want=sys.argv[2].split(',')\n"
                         "assert list(d)==want+['notes'], (list(d), want)\n"
                         "assert all(isinstance(x,str) for x in d['notes'])\n"
                         "for k in want:\n"
                         "  for row in d[k]:\n"
                         "    for c,v in row.items():\n"
                         "      if c.endswith(('_ns','_pct','_ms','count','instances','gaps','launches','steps')):\n"
                         "        assert v is None or isinstance(v,(int,float)) and not isinstance(v,bool), (k,c,v)\n"
                         "print('ok')\n");
    (void)n;
    {
        char want[512] = "";
        const char *argv[] = {python(), "-c", script, path, want, NULL};
        for (i = 0; names[i]; i++)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "", names[i]);
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run python3");
        if (!ok(run_exited_with(&r, 0) && strstr(r.out, "ok"), "%s: json: one array per report (%s), numbers as numbers",
                label, want))
            diag_text("python", r.err);
        run_result_free(&r);
    }
}

static const char *const summary_sections[] = {"trace", "cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                                               "cuda_gpu_mem_size_sum", "nvtx_kern_sum", "generations", "bests",
                                               "api_calls", "phases", "generation_spread", NULL};
static const char *const gaps_sections[] = {"trace", "device_gaps", "launch_gaps", "sync_share",
                                            "launches_per_step", NULL};
static const char *const top_sections[] = {"trace", "top_kernels", "slowest_launches", NULL};
static const char *const compare_sections[] = {"metrics", "kernels", "only_in_a", "only_in_b", "phases", NULL};

/* Run a report in csv form and parse it (the doc keeps r.out). */
static struct run_result report_csv(struct csv_doc *doc, const char *a1, const char *a2, const char *a3,
                                    const char *a4, const char *a5, const char *a6)
{
    struct run_result r = report_run(a1, "--format", "csv", a2, a3, a4, a5, a6, NULL);
    if (!run_exited_with(&r, 0))
        diag("obs-report %s ... --format csv: status %d: %s", a1, r.status, r.err);
    csv_parse(r.out, doc, 1);
    return r;
}

/* ---- the API (trace_query.h) on the fixture ------------------------------------------------------ */

static void test_query_api(const char *fixture)
{
    struct obs_call_filter f;
    struct obs_kernel_stats ks;
    struct obs_trace *t;
    char err[256];
    size_t i, n;

    memset(&f, 0, sizeof f);
    ok(obs_call_filter_parse_window("10ms:250ms", &f, err, sizeof err) == 0 && f.has_window &&
           f.t_from == 10000000 && f.t_to == 250000000,
       "window 10ms:250ms");
    ok(obs_call_filter_parse_window("1.5s:", &f, err, sizeof err) == 0 && f.t_from == 1500000000 &&
           f.t_to == UINT64_MAX,
       "window 1.5s: (to the end)");
    ok(obs_call_filter_parse_window(":300us", &f, err, sizeof err) == 0 && f.t_from == 0 && f.t_to == 300000,
       "window :300us (from the start)");
    ok(obs_call_filter_parse_window("7ns:8ns", &f, err, sizeof err) == 0 && f.t_from == 7 && f.t_to == 8,
       "window in ns");
    memset(&f, 0, sizeof f);
    ok(obs_call_filter_parse_window("10:20ms", &f, err, sizeof err) != 0 && strstr(err, "missing unit") &&
           !f.has_window,
       "a time without a unit is refused (%s)", err);
    ok(obs_call_filter_parse_window("5ms:1ms", &f, err, sizeof err) != 0 && strstr(err, "after"),
       "TO before FROM is refused (%s)", err);
    ok(obs_call_filter_parse_window("5ms", &f, err, sizeof err) != 0, "no colon is refused");
    ok(obs_call_filter_parse_window("1h:2h", &f, err, sizeof err) != 0 && strstr(err, "unknown unit"),
       "an unknown unit is refused");
    ok(obs_call_filter_parse_window("-1ms:2ms", &f, err, sizeof err) != 0, "a negative time is refused");
    ok(obs_call_filter_set_kernel(&f, "(", err, sizeof err) != 0 && !f.has_kernel_re, "a bad regex is refused (%s)",
       err);

    if (obs_trace_open(fixture, &t, err, sizeof err) != 0)
        bail("%s: %s", fixture, err);
    ok(obs_call_filter_match(t, &t->calls[0], NULL), "a NULL filter keeps everything");
    /* by name: the fixture has two prefill_kernel launches (one without a
     * demangled string) and one without GPU time */
    if (obs_kernel_stats_compute(t, NULL, &ks) != 0)
        bail("obs_kernel_stats_compute failed");
    ok(ks.gpu_time && ks.nrows == 3 && strcmp(ks.rows[0].name, "prefill_kernel(float const*, float*, int)") == 0 &&
           ks.rows[0].st.count == 2 && ks.rows[0].st.total == 69536 && ks.skipped == 1,
       "kernel stats by demangled name, by total time, GPU time (%zu rows)", ks.nrows);
    {
        double pct = 0;
        for (i = 0; i < ks.nrows; i++)
            pct += ks.rows[i].pct;
        is_double(100.0, pct, 1e-9, "the shares add up to 100%%");
        is_int((long long)ks.total_ns, 69536 + 2064 + 2000, "total_ns");
    }
    obs_kernel_stats_free(&ks);

    memset(&f, 0, sizeof f);
    f.phase = "DECODE";
    if (obs_kernel_stats_compute(t, &f, &ks) != 0)
        bail("obs_kernel_stats_compute failed");
    /* DECODE/STEP_0 labels thread 100's last four calls and thread 101's prefill_kernel and triton_gemm_0 */
    ok(ks.nrows == 2 && obs_kernel_stats_find(&ks, "triton_gemm_0") &&
           obs_kernel_stats_find(&ks, "prefill_kernel(float const*, float*, int)") &&
           obs_kernel_stats_find(&ks, "prefill_kernel(float const*, float*, int)")->st.count == 1,
       "--phase DECODE: the two timed kernels of DECODE/STEP_0");
    obs_kernel_stats_free(&ks);
    f.phase = "DECODE/STEP_0"; /* the full range name works too */
    for (i = 0, n = 0; i < t->ncalls; i++)
        n += obs_call_filter_match(t, &t->calls[i], &f);
    is_int(5, (long long)n, "a full range name selects the calls of that range");
    f.phase = NULL;
    f.has_step = 1;
    f.step = 0;
    for (i = 0, n = 0; i < t->ncalls; i++)
        n += obs_call_filter_match(t, &t->calls[i], &f);
    is_int(5, (long long)n, "step 0: the five calls of DECODE/STEP_0");
    f.has_step = 0;
    if (obs_call_filter_set_kernel(&f, "^decode", err, sizeof err) != 0)
        bail("regcomp: %s", err);
    for (i = 0, n = 0; i < t->ncalls; i++)
        n += obs_call_filter_match(t, &t->calls[i], &f);
    is_int(1, (long long)n, "kernel ^decode: one launch, and no call that is not a kernel");
    obs_call_filter_free(&f);
    memset(&f, 0, sizeof f);
    if (obs_call_filter_parse_window(":5us", &f, err, sizeof err) != 0)
        bail("window: %s", err);
    for (i = 0, n = 0; i < t->ncalls; i++) {
        uint64_t rel = t->calls[i].host_begin - t->t_first;
        n += obs_call_filter_match(t, &t->calls[i], &f) == (rel < 5000);
    }
    is_int((long long)t->ncalls, (long long)n, "window :5us keeps exactly the calls that begin in the first 5 us");
    obs_trace_free(t);
}

/* ---- the fixture through the program ------------------------------------------------------------------ */

static void test_fixture_reports(const char *fixture)
{
    struct csv_doc doc;
    struct run_result r;
    const struct csv_section *s;
    long row;

    r = report_csv(&doc, "summary", fixture, NULL, NULL, NULL, NULL);
    s = section(&doc, "cuda_gpu_kern_sum");
    row = find_row(s, "name", "prefill_kernel(float const*, float*, int)");
    ok(row >= 0 && ucell(s, (size_t)row, "instances") == 2 && ucell(s, (size_t)row, "total_ns") == 69536,
       "fixture: summary csv: the kernel row");
    s = section(&doc, "cuda_gpu_mem_size_sum");
    ok(s && s->nrows >= 1, "fixture: copy sizes by operation");
    csv_free(&doc);
    run_result_free(&r);

    /* the gaps of the fixture, worked out by hand: stream 1 holds a copy
     * [2500, 45443), the prefill kernel [45443, 112979) and the graph
     * launch [121000, 131000) (ns after FIX_T0): two gaps, 0 and 8021 */
    r = report_csv(&doc, "gaps", fixture, NULL, NULL, NULL, NULL);
    s = section(&doc, "device_gaps");
    row = find_row(s, "stream", "1");
    ok(row >= 0 && ucell(s, (size_t)row, "gaps") == 2 && ucell(s, (size_t)row, "idle_gaps") == 1 &&
           ucell(s, (size_t)row, "total_ns") == 8021 && ucell(s, (size_t)row, "max_ns") == 8021 &&
           ucell(s, (size_t)row, "span_ns") == 131000 - 2500,
       "fixture: device gaps on stream 1: 0 and 8021 ns over a 128500 ns span");
    s = section(&doc, "sync_share");
    row = find_row(s, "api", "cudaDeviceSynchronize");
    ok(row >= 0 && ucell(s, (size_t)row, "total_ns") == 5000000000ull &&
           ucell(s, (size_t)row, "wall_ns") == FIX_T_LAST - 1000,
       "fixture: the 5 s cudaDeviceSynchronize over the wall time of the calls");
    ok(find_row(s, "api", "cudaStreamWaitEvent") < 0, "fixture: waits on the device are not host synchronisation");
    csv_free(&doc);
    run_result_free(&r);
}

/* ---- workload traces ------------------------------------------------------------------------------ */

struct wl_trace {
    char path[4200];
    struct calls calls;
    int gpu;
};

static int make_trace(const char *workload, const char *name, int gpu, const char *const *args, struct wl_trace *w)
{
    char out_env[4200], prefix[4100], inject[4200];
    const char *argv[12];
    const char *env[8];
    struct run_result r;
    size_t n = 0, e = 0, i;

    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), name);
    snprintf(w->path, sizeof w->path, "%s.obs", prefix);
    remove(w->path);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    argv[n++] = workload;
    for (i = 0; args[i] && n < 11; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    env[e++] = out_env;
    env[e++] = sim_library_path_env();
    env[e++] = inject;
    env[e++] = "OBS_SUMMARY=0";
    env[e++] = "OBS_JSON=0";
    if (gpu)
        env[e++] = "OBS_GPU_TIME=events";
    env[e] = NULL;
    shim_run(argv, env, 1, 120, &r);
    w->gpu = gpu;
    if (!run_exited_with(&r, 0) || access(w->path, R_OK) != 0) {
        diag("%s: status %d, stderr: %s", name, r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    calls_load(w->path, &w->calls);
    return 0;
}

/* Kernel rows of the summary against the calls: count, total, min, max per name;
 * with GPU time, each launch lasts what the cost model says. */
static void check_kernels(const char *label, struct wl_trace *w, const char *const *filter, int (*keep)(const struct call_row *))
{
    struct csv_doc doc;
    struct run_result r = report_csv(&doc, "summary", w->path, filter[0], filter[1], filter[2], filter[3]);
    const struct csv_section *s = section(&doc, "cuda_gpu_kern_sum");
    size_t i, j, rows_ok = 0, names = 0, cost_ok = 1, launches = 0;

    ok(run_exited_with(&r, 0) && s != NULL, "%s: summary --format csv runs", label);
    for (i = 0; s && i < s->nrows; i++) {
        const char *name = cell(s, i, "name");
        unsigned long long count = 0, total = 0, mn = UINT64_MAX, mx = 0;
        for (j = 0; j < w->calls.n; j++) {
            const struct call_row *c = &w->calls.c[j];
            uint64_t ns;
            if (strcmp(c->kind, "kernel") != 0 || strcmp(c->name, name) != 0 || !keep(c))
                continue;
            ns = call_ns(c, w->gpu);
            count++;
            total += ns;
            mn = ns < mn ? ns : mn;
            mx = ns > mx ? ns : mx;
            if (w->gpu && ns != sim_kernel_cost_ns(c->threads, 0))
                cost_ok = 0;
        }
        if (count == ucell(s, i, "instances") && total == ucell(s, i, "total_ns") && mn == ucell(s, i, "min_ns") &&
            mx == ucell(s, i, "max_ns"))
            rows_ok++;
        else
            diag("%s: %s: csv %llu launches %llu ns; summary %s launches %s ns", label, name, count, total,
                 cell(s, i, "instances"), cell(s, i, "total_ns"));
    }
    for (j = 0; j < w->calls.n; j++) /* every kept launch is in a row */
        if (strcmp(w->calls.c[j].kind, "kernel") == 0 && keep(&w->calls.c[j]))
            launches++;
    for (i = 0; s && i < s->nrows; i++)
        names += ucell(s, i, "instances");
    ok(s && s->nrows > 0 && rows_ok == s->nrows && names == launches,
       "%s: %zu kernel rows match the csv's launches (%zu launches)", label, s ? s->nrows : 0, launches);
    if (w->gpu)
        ok(cost_ok, "%s: every launch's GPU time is the cost model's (latency + threads / %u)", label,
           SIM_THREADS_PER_NS);
    csv_free(&doc);
    run_result_free(&r);
}

static int keep_all(const struct call_row *c)
{
    (void)c;
    return 1;
}
static int keep_prefill(const struct call_row *c)
{
    return strcmp(c->phase, "PREFILL") == 0;
}
static int keep_step3(const struct call_row *c)
{
    return c->has_step && c->step == 3;
}
static int keep_decode_name(const struct call_row *c)
{
    return strncmp(c->name, "decode", 6) == 0;
}
static uint64_t window_lo, window_hi;
static int keep_window(const struct call_row *c)
{
    return c->host_begin >= window_lo && c->host_begin < window_hi;
}

/* gaps against the calls: device gaps per stream, launch gaps per thread,
 * sync share, launches per step. */
static void check_gaps(const char *label, struct wl_trace *w, unsigned decode, unsigned repeat)
{
    struct csv_doc doc;
    struct run_result r = report_csv(&doc, "gaps", w->path, NULL, NULL, NULL, NULL);
    const struct csv_section *dev = section(&doc, "device_gaps"), *lg = section(&doc, "launch_gaps"),
                             *ss = section(&doc, "sync_share"), *ls = section(&doc, "launches_per_step");
    size_t i, j, n;
    uint64_t *v = malloc((w->calls.n + 1) * sizeof *v);

    if (v == NULL)
        bail("out of memory");
    ok(run_exited_with(&r, 0) && dev && lg && ss && ls, "%s: gaps --format csv has its four reports", label);
    if (!(dev && lg && ss && ls)) {
        free(v);
        csv_free(&doc);
        run_result_free(&r);
        return;
    }
    /* device gaps, per stream, from the calls' GPU spans */
    if (!w->gpu) {
        ok(dev->nrows == 0, "%s: no GPU time: device_gaps has no rows", label);
    } else {
        size_t streams_ok = 0, streams = 0;
        for (i = 0; i < dev->nrows; i++) {
            unsigned long long stream = ucell(dev, i, "stream");
            uint64_t busy_end = 0, first = UINT64_MAX, last = 0, total = 0, mx = 0, cost = 0;
            size_t items = 0, k;
            struct call_row **on = malloc((w->calls.n + 1) * sizeof *on);
            if (on == NULL)
                bail("out of memory");
            for (j = 0, k = 0; j < w->calls.n; j++)
                if (w->calls.c[j].has_gpu && w->calls.c[j].stream == stream)
                    on[k++] = &w->calls.c[j];
            /* in GPU order (insertion sort: they are nearly sorted already) */
            for (j = 1; j < k; j++) {
                struct call_row *x = on[j];
                size_t m = j;
                while (m > 0 && on[m - 1]->gpu_begin > x->gpu_begin) {
                    on[m] = on[m - 1];
                    m--;
                }
                on[m] = x;
            }
            for (j = 0, n = 0; j < k; j++) {
                items++;
                first = on[j]->gpu_begin < first ? on[j]->gpu_begin : first;
                last = on[j]->gpu_end > last ? on[j]->gpu_end : last;
                if (j > 0)
                    v[n++] = on[j]->gpu_begin > busy_end ? on[j]->gpu_begin - busy_end : 0;
                busy_end = on[j]->gpu_end > busy_end ? on[j]->gpu_end : busy_end;
                if (strcmp(on[j]->kind, "kernel") == 0)
                    cost += sim_kernel_cost_ns(on[j]->threads, 0);
                else
                    cost += on[j]->gpu_end - on[j]->gpu_begin;
            }
            qsort(v, n, sizeof *v, cmp_u64);
            for (j = 0; j < n; j++) {
                total += v[j];
                mx = v[j] > mx ? v[j] : mx;
            }
            streams++;
            if (items == ucell(dev, i, "work_items") && n == ucell(dev, i, "gaps") && total == ucell(dev, i, "total_ns") &&
                mx == ucell(dev, i, "max_ns") && last - first == ucell(dev, i, "span_ns") &&
                fabs(percentile(v, n, 50) - dcell(dev, i, "med_ns")) < 0.06 &&
                fabs(percentile(v, n, 90) - dcell(dev, i, "p90_ns")) < 0.06)
                streams_ok++;
            else
                diag("%s: stream %llu: csv: %zu items, %zu gaps, %llu ns, max %llu; report: %s", label, stream, items,
                     n, (unsigned long long)total, (unsigned long long)mx, cell(dev, i, "gaps"));
            /* the simulator runs a stream's work back to back: no idle time,
             * and the span is the sum of the cost model's costs */
            if (stream == 1) {
                is_int(0, (long long)total, "%s: stream 1: no idle time on the simulated device", label);
                is_int((long long)cost, (long long)(last - first),
                       "%s: stream 1: busy span = the cost model's kernel costs added up", label);
                is_int((long long)cost, (long long)ucell(dev, i, "busy_ns"), "%s: stream 1: busy time = the same",
                       label);
            }
            free(on);
        }
        ok(streams > 0 && streams_ok == streams, "%s: device gaps of %zu streams match the csv's GPU spans", label,
           streams);
    }
    /* launch gaps per thread */
    {
        size_t threads_ok = 0;
        for (i = 0; i < lg->nrows; i++) {
            unsigned long long tid = ucell(lg, i, "tid");
            uint64_t prev_end = 0, total = 0;
            size_t launches = 0;
            for (j = 0, n = 0; j < w->calls.n; j++) {
                const struct call_row *c = &w->calls.c[j];
                if (c->tid != tid || (strcmp(c->kind, "kernel") != 0 && strcmp(c->kind, "graph") != 0))
                    continue;
                if (launches++)
                    v[n++] = c->host_begin > prev_end ? c->host_begin - prev_end : 0;
                prev_end = c->host_end;
            }
            qsort(v, n, sizeof *v, cmp_u64);
            for (j = 0; j < n; j++)
                total += v[j];
            if (launches == ucell(lg, i, "launches") && n == ucell(lg, i, "gaps") && total == ucell(lg, i, "total_ns") &&
                (n == 0 || v[n - 1] == ucell(lg, i, "max_ns")) &&
                fabs(percentile(v, n, 50) - dcell(lg, i, "med_ns")) < 0.06 &&
                fabs(percentile(v, n, 90) - dcell(lg, i, "p90_ns")) < 0.06)
                threads_ok++;
            else
                diag("%s: tid %llu: csv %zu launches, %zu gaps, %llu ns; report %s, %s, %s", label, tid, launches, n,
                     (unsigned long long)total, cell(lg, i, "launches"), cell(lg, i, "gaps"), cell(lg, i, "total_ns"));
        }
        ok(lg->nrows > 0 && threads_ok == lg->nrows, "%s: launch gaps of %zu threads match the csv", label, lg->nrows);
    }
    /* sync share */
    {
        uint64_t first = UINT64_MAX, last = 0, sync = 0, calls = 0;
        long all = find_row(ss, "api", "(all synchronisation)");
        for (j = 0; j < w->calls.n; j++) {
            const struct call_row *c = &w->calls.c[j];
            first = c->host_begin < first ? c->host_begin : first;
            last = c->host_end > last ? c->host_end : last;
            if (strstr(c->api, "Synchronize")) {
                sync += c->host_end - c->host_begin;
                calls++;
            }
        }
        ok(all >= 0 && ucell(ss, (size_t)all, "calls") == calls && ucell(ss, (size_t)all, "total_ns") == sync &&
               ucell(ss, (size_t)all, "wall_ns") == last - first &&
               fabs(dcell(ss, (size_t)all, "wall_pct") - 100.0 * (double)sync / (double)(last - first)) < 0.001,
           "%s: sync share: %llu calls, %llu ns of %llu ns wall", label, (unsigned long long)calls,
           (unsigned long long)sync, (unsigned long long)(last - first));
        /* the workload synchronises once after its warm-up and once per repetition */
        is_int(1 + (long long)repeat, (long long)calls, "%s: %u stream synchronisations", label, 1 + repeat);
    }
    /* launches per step: a step is a run of kernel launches with the same step */
    {
        long all = find_row(ls, "phase", "(all)");
        size_t steps = 0, launches = 0, run = 0, mn = SIZE_MAX, mx = 0;
        unsigned cur = UINT32_MAX;
        for (j = 0; j <= w->calls.n; j++) {
            const struct call_row *c = j < w->calls.n ? &w->calls.c[j] : NULL;
            int is_kernel = c && strcmp(c->kind, "kernel") == 0;
            if (c && !is_kernel)
                continue;
            if (c && c->has_step && c->step == cur) {
                run++;
                continue;
            }
            if (run) {
                steps++;
                launches += run;
                mn = run < mn ? run : mn;
                mx = run > mx ? run : mx;
            }
            run = c && c->has_step ? 1 : 0;
            cur = c && c->has_step ? c->step : UINT32_MAX;
        }
        ok(all >= 0 && ucell(ls, (size_t)all, "steps") == steps && ucell(ls, (size_t)all, "launches") == launches &&
               ucell(ls, (size_t)all, "min") == mn && ucell(ls, (size_t)all, "max") == mx,
           "%s: launches per step: %zu steps, %zu launches, %zu..%zu per step, as in the csv", label, steps, launches,
           mn, mx);
        /* the workload: a warm-up generation of one step, then repeat x decode steps, two kernels each */
        ok(steps == 1 + (size_t)repeat * decode && mn == 2 && mx == 2,
           "%s: %u steps of 2 launches (1 warm-up + %u x %u)", label, 1 + repeat * decode, repeat, decode);
        ok(find_row(ls, "phase", "KV_GATHER") >= 0 && ucell(ls, (size_t)find_row(ls, "phase", "KV_GATHER"), "max") == 1,
           "%s: one KV_GATHER launch per step", label);
    }
    free(v);
    csv_free(&doc);
    run_result_free(&r);
}

/* Run obs-report CMD [N] --format FMT [extra...] PATH (fmt NULL: no --format). */
static struct run_result run_format(const char *cmd, const char *fmt, const char *path, const char *const *extra)
{
    const char *argv[16];
    struct run_result r;
    size_t n = 0, i;
    argv[n++] = report;
    argv[n++] = cmd;
    if (strcmp(cmd, "top") == 0)
        argv[n++] = "3";
    if (fmt) {
        argv[n++] = "--format";
        argv[n++] = fmt;
    }
    for (i = 0; extra[i] && n < 13; i++)
        argv[n++] = extra[i];
    argv[n++] = path;
    argv[n] = NULL;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

static void check_formats(const char *label, const char *path, const char *const *extra)
{
    static const struct {
        const char *cmd;
        const char *const *sections;
    } reports[] = {{"summary", summary_sections}, {"gaps", gaps_sections}, {"top", top_sections}};
    size_t i;
    for (i = 0; i < 3; i++) {
        struct run_result r;
        char what[128];
        snprintf(what, sizeof what, "%s: %s%s%s", label, reports[i].cmd, extra[0] ? " " : "",
                 extra[0] ? extra[0] : "");
        r = run_format(reports[i].cmd, "csv", path, extra);
        if (!run_exited_with(&r, 0))
            diag("%s: status %d: %s", what, r.status, r.err);
        check_csv_doc(what, r.out, reports[i].sections);
        run_result_free(&r);
        r = run_format(reports[i].cmd, "json", path, extra);
        check_json_doc(what, r.out, reports[i].sections);
        run_result_free(&r);
        r = run_format(reports[i].cmd, NULL, path, extra);
        ok(run_exited_with(&r, 0) && r.out_len > 0 && r.err_len == 0, "%s: table format", what);
        run_result_free(&r);
    }
}

static void check_top(const char *label, struct wl_trace *w)
{
    struct csv_doc doc, sum;
    struct run_result r = report_csv(&doc, "top", "2", w->path, NULL, NULL, NULL),
                      r2 = report_csv(&sum, "summary", w->path, NULL, NULL, NULL, NULL);
    const struct csv_section *tk = section(&doc, "top_kernels"), *sl = section(&doc, "slowest_launches"),
                             *ks = section(&sum, "cuda_gpu_kern_sum");
    uint64_t *d = malloc((w->calls.n + 1) * sizeof *d);
    size_t i, n = 0;

    if (d == NULL)
        bail("out of memory");
    ok(tk && ks && tk->nrows == 2 && strcmp(cell(tk, 0, "name"), cell(ks, 0, "name")) == 0 &&
           strcmp(cell(tk, 1, "name"), cell(ks, 1, "name")) == 0 &&
           ucell(tk, 0, "total_ns") == ucell(ks, 0, "total_ns"),
       "%s: top 2 kernels are the summary's first two", label);
    for (i = 0; i < w->calls.n; i++)
        if (strcmp(w->calls.c[i].kind, "kernel") == 0)
            d[n++] = call_ns(&w->calls.c[i], w->gpu);
    qsort(d, n, sizeof *d, cmp_u64);
    ok(sl && sl->nrows == 2 && n >= 2 && ucell(sl, 0, "duration_ns") == d[n - 1] &&
           ucell(sl, 1, "duration_ns") == d[n - 2],
       "%s: the 2 slowest launches are the csv's 2 longest", label);
    if (sl && sl->nrows) {
        unsigned long long seq = ucell(sl, 0, "seq");
        ok(seq < w->calls.n && call_ns(&w->calls.c[seq], w->gpu) == ucell(sl, 0, "duration_ns") &&
               strcmp(w->calls.c[seq].name, cell(sl, 0, "name")) == 0,
           "%s: the slowest launch's seq names that call in the csv", label);
    } else {
        ok(0, "%s: the slowest launch's seq names that call in the csv", label);
    }
    free(d);
    csv_free(&doc);
    csv_free(&sum);
    run_result_free(&r);
    run_result_free(&r2);
}

static void check_filters(const char *label, struct wl_trace *w)
{
    char win[64];
    struct csv_doc doc;
    struct run_result r;
    const struct csv_section *s;
    uint64_t t_first, lo_rel, hi_rel, first, last, *begins;
    size_t i, nbegins = 0;
    const char *const f_prefill[] = {"--phase", "PREFILL", NULL, NULL};
    const char *const f_step[] = {"--step", "3", NULL, NULL};
    const char *const f_kernel[] = {"--kernel", "^decode", NULL, NULL};
    const char *const f_window[] = {"--window", win, NULL, NULL};
    char what[128];

    snprintf(what, sizeof what, "%s --phase PREFILL", label);
    check_kernels(what, w, f_prefill, keep_prefill);
    r = report_csv(&doc, "summary", w->path, "--phase", "PREFILL", NULL, NULL);
    s = section(&doc, "cuda_gpu_kern_sum");
    ok(s && s->nrows == 1 && strncmp(cell(s, 0, "name"), "prefill_kernel", 14) == 0,
       "%s: --phase PREFILL gives only prefill_kernel", label);
    csv_free(&doc);
    run_result_free(&r);

    snprintf(what, sizeof what, "%s --step 3", label);
    check_kernels(what, w, f_step, keep_step3);
    snprintf(what, sizeof what, "%s --kernel ^decode", label);
    check_kernels(what, w, f_kernel, keep_decode_name);
    r = report_csv(&doc, "summary", w->path, "--kernel", "^decode", NULL, NULL);
    s = section(&doc, "cuda_gpu_mem_time_sum");
    ok(s && s->nrows == 0, "%s: --kernel: no copies or memsets (they are not kernels)", label);
    s = section(&doc, "trace");
    ok(s && s->nrows == 1 && strstr(cell(s, 0, "selection"), "kernel /^decode/") != NULL,
       "%s: the trace section names the selection", label);
    t_first = s && s->nrows ? ucell(s, 0, "t_first_ns") : 0;
    csv_free(&doc);
    run_result_free(&r);

    /* A window over the middle third of the launches, in us: from the one
     * at a third of them to the one at two thirds, by their order, not by
     * their times (a host that stalls the program for a third of its run
     * would leave a middle third of the time with no launch). It always
     * holds the launch at a third. */
    begins = malloc((w->calls.n + 1) * sizeof *begins);
    if (begins == NULL)
        bail("out of memory");
    for (i = 0; i < w->calls.n; i++)
        if (strcmp(w->calls.c[i].kind, "kernel") == 0)
            begins[nbegins++] = w->calls.c[i].host_begin;
    qsort(begins, nbegins, sizeof *begins, cmp_u64);
    if (nbegins >= 3) {
        first = begins[nbegins / 3];
        last = begins[2 * nbegins / 3];
    } else {
        first = last = t_first;
    }
    free(begins);
    lo_rel = (first - t_first) / 1000;            /* down: the launch at a third is in */
    hi_rel = (last - t_first + 999) / 1000;       /* up */
    snprintf(win, sizeof win, "%lluus:%lluus", (unsigned long long)lo_rel, (unsigned long long)hi_rel);
    window_lo = t_first + lo_rel * 1000;
    window_hi = t_first + hi_rel * 1000;
    snprintf(what, sizeof what, "%s --window %s", label, win);
    check_kernels(what, w, f_window, keep_window);

    /* gaps and top with a filter: only the selected launches count */
    r = report_csv(&doc, "gaps", w->path, "--kernel", "^decode", NULL, NULL);
    s = section(&doc, "launches_per_step");
    ok(s && find_row(s, "phase", "(all)") >= 0 && ucell(s, (size_t)find_row(s, "phase", "(all)"), "max") == 1,
       "%s: gaps --kernel ^decode: one selected launch per step", label);
    csv_free(&doc);
    run_result_free(&r);
    r = report_csv(&doc, "top", "9", w->path, "--step", "3", NULL);
    s = section(&doc, "slowest_launches");
    {
        size_t step3 = 0, want = 0;
        for (i = 0; s && i < s->nrows; i++)
            step3 += strcmp(cell(s, i, "step"), "3") == 0;
        for (i = 0; i < w->calls.n; i++)
            want += strcmp(w->calls.c[i].kind, "kernel") == 0 && keep_step3(&w->calls.c[i]);
        ok(s && want == 4 && s->nrows == want && step3 == want,
           "%s: top 9 --step 3: the 4 launches of step 3 (2 per generation, 2 generations)", label);
    }
    csv_free(&doc);
    run_result_free(&r);
}

static void check_compare_same(const char *label, const char *path)
{
    struct csv_doc doc;
    struct run_result r = report_csv(&doc, "compare", path, path, NULL, NULL, NULL);
    const struct csv_section *m = section(&doc, "metrics"), *k = section(&doc, "kernels"),
                             *a = section(&doc, "only_in_a"), *b = section(&doc, "only_in_b"),
                             *p = section(&doc, "phases");
    size_t i, ones = 0, n = 0;
    ok(run_exited_with(&r, 0), "%s: compare A A exits 0", label);
    for (i = 0; k && i < k->nrows; i++, n++)
        ones += strcmp(cell(k, i, "ratio"), "1.0000") == 0 && strcmp(cell(k, i, "count_delta"), "0") == 0;
    for (i = 0; p && i < p->nrows; i++, n++)
        ones += strcmp(cell(p, i, "ratio"), "1.0000") == 0 && strcmp(cell(p, i, "time_delta_ns"), "0") == 0;
    for (i = 0; m && i < m->nrows; i++, n++)
        ones += strcmp(cell(m, i, "ratio"), "1.0000") == 0 || cell(m, i, "ratio")[0] == '\0';
    ok(k && p && m && k->nrows > 0 && p->nrows > 0 && ones == n, "%s: compare A A: %zu ratios, all 1.0, deltas 0",
       label, n);
    ok(a && b && a->nrows == 0 && b->nrows == 0, "%s: compare A A: no kernel only in one run", label);
    csv_free(&doc);
    run_result_free(&r);
    r = report_run("compare", "--format", "json", path, path, NULL);
    check_json_doc(label, r.out, compare_sections);
    run_result_free(&r);
    r = report_run("compare", path, path, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Kernels only in A\n none\n") && strstr(r.out, "Kernels only in B\n none\n"),
       "%s: compare table format", label);
    run_result_free(&r);
}

/* Count delta of a kernel (by name prefix) in a compare document, or LLONG_MIN. */
static long long count_delta(const struct csv_section *k, const char *prefix)
{
    size_t i;
    for (i = 0; k && i < k->nrows; i++)
        if (strncmp(cell(k, i, "name"), prefix, strlen(prefix)) == 0)
            return strtoll(cell(k, i, "count_delta"), NULL, 10);
    return -1000000;
}

static void check_compare_runs(const char *workload, struct wl_trace *base, unsigned decode, unsigned repeat,
                               const char *fixture)
{
    static const char *const args16[] = {"--decode", "16", "--repeat", "2", NULL};
    static const char *const args_graphs[] = {"--decode", "8", "--repeat", "2", "--graphs", NULL};
    struct wl_trace d16, graphs;
    struct csv_doc doc;
    struct run_result r;
    const struct csv_section *k, *m, *a, *b;
    long row;

    memset(&d16, 0, sizeof d16);
    memset(&graphs, 0, sizeof graphs);
    if (make_trace(workload, "d16", 1, args16, &d16) != 0 || make_trace(workload, "graphs", 1, args_graphs, &graphs) != 0)
        bail("the workload did not run");
    r = report_csv(&doc, "compare", base->path, d16.path, NULL, NULL, NULL);
    k = section(&doc, "kernels");
    m = section(&doc, "metrics");
    is_int((long long)repeat * (16 - decode), count_delta(k, "decode_kernel"),
           "compare --decode %u vs 16: %u more decode_kernel launches", decode, repeat * (16 - decode));
    is_int((long long)repeat * (16 - decode), count_delta(k, "kv_gather_kernel"), "... and as many kv_gather_kernel");
    is_int(0, count_delta(k, "prefill_kernel"), "... and the same prefill_kernel launches");
    row = find_row(m, "metric", "best_ttft_ms");
    ok(row >= 0 && strcmp(cell(m, (size_t)row, "ratio"), "1.0000") == 0, "... TTFT unchanged (ratio 1.0)");
    row = find_row(k, "name", cell(k, 0, "name"));
    ok(k && k->nrows == 3 && strncmp(cell(k, 0, "name"), "kv_gather_kernel", 16) == 0,
       "... the biggest change first (kv_gather_kernel)");
    csv_free(&doc);
    run_result_free(&r);

    r = report_csv(&doc, "compare", base->path, graphs.path, NULL, NULL, NULL);
    k = section(&doc, "kernels");
    m = section(&doc, "metrics");
    /* --graphs: the steady steps (repeat x (decode - 1)) are replayed from a graph, not launched */
    is_int(-(long long)repeat * (decode - 1), count_delta(k, "decode_kernel"),
           "compare --graphs: %u fewer decode_kernel launches (replayed from the graph)", repeat * (decode - 1));
    row = find_row(m, "metric", "best_tokens_per_s");
    ok(row >= 0 && dcell(m, (size_t)row, "ratio") > 1.0, "... and more tokens/s (graph nodes cost less)");
    csv_free(&doc);
    run_result_free(&r);

    r = report_csv(&doc, "compare", fixture, base->path, NULL, NULL, NULL);
    a = section(&doc, "only_in_a");
    b = section(&doc, "only_in_b");
    ok(run_exited_with(&r, 0) && find_row(a, "name", "triton_gemm_0") >= 0 && find_row(b, "name", "triton_gemm_0") < 0 &&
           b && b->nrows == 3,
       "compare of two different programs lists the kernels only in A and only in B");
    csv_free(&doc);
    run_result_free(&r);
    free(d16.calls.c);
    free(graphs.calls.c);
}

/* ---- errors --------------------------------------------------------------------------------------- */

static void check_errors(const char *fixture)
{
    static const char *const bad[][6] = {
        {"summary", "--format", "xml", NULL},
        {"gaps", "--step", "abc", NULL},
        {"gaps", "--step", "-1", NULL},
        {"top", "3", "--kernel", "(", NULL},
        {"summary", "--window", "10:20", NULL},
        {"summary", "--window", "5ms:1ms", NULL},
        {"gaps", "--window", "soon", NULL},
        {"summary", "--phase", "", NULL},
        {"top", "0", NULL},
        {"top", "x", NULL},
        {"compare", "--phase", "DECODE", NULL},
        {"gaps", "--format", NULL},
        {"compare", NULL},
        {"top", "--frob", "3", NULL},
    };
    char path[4200], want[4400];
    size_t i, good = 0, n = sizeof bad / sizeof bad[0];
    int fd;

    for (i = 0; i < n; i++) {
        const char *argv[10];
        struct run_result r;
        size_t k = 0, j;
        argv[k++] = report;
        for (j = 0; bad[i][j]; j++)
            argv[k++] = bad[i][j];
        if (strcmp(bad[i][0], "compare") != 0 || j > 1)
            argv[k++] = fixture;
        if (strcmp(bad[i][0], "compare") == 0 && j > 1)
            argv[k++] = fixture;
        argv[k] = NULL;
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run obs-report");
        if (run_exited_with(&r, 2) && count_lines_with(r.err, "obs-report:") == 1 && r.out_len == 0)
            good++;
        else
            diag("%s %s %s: status %d, stderr: %s", bad[i][0], bad[i][1] ? bad[i][1] : "",
                 bad[i][1] && bad[i][2] ? bad[i][2] : "", r.status, r.err);
        run_result_free(&r);
    }
    is_int((long long)n, (long long)good, "%zu bad command lines: exit 2, one obs-report: line each", n);

    /* a damaged file */
    snprintf(path, sizeof path, "%s/damaged.obs", test_tmpdir());
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "OBSTRACE\1\0\0\0", 12) != 12 || close(fd) != 0)
        bail("cannot write %s", path);
    snprintf(want, sizeof want, "obs-report: %s: truncated header\n", path);
    {
        const char *const cmds[][5] = {
            {"summary", "--format", "json", path, NULL},
            {"gaps", path, NULL},
            {"top", "5", path, NULL},
            {"compare", fixture, path, NULL},
            {"compare", path, fixture, NULL},
        };
        size_t m = sizeof cmds / sizeof cmds[0];
        for (i = 0, good = 0; i < m; i++) {
            const char *argv[8] = {report};
            struct run_result r;
            size_t j;
            for (j = 0; cmds[i][j]; j++)
                argv[j + 1] = cmds[i][j];
            argv[j + 1] = NULL;
            if (run_program(argv, NULL, 60, &r) != 0)
                bail("cannot run obs-report");
            if (run_exited_with(&r, 1) && strcmp(r.err, want) == 0 && r.out_len == 0)
                good++;
            else
                diag("%s: status %d, stderr: %s", cmds[i][0], r.status, r.err);
            run_result_free(&r);
        }
        is_int((long long)m, (long long)good, "a damaged file: exit 1, one message, no output (%zu commands)", m);
    }
}

int main(void)
{
    static const char *const args8[] = {"--decode", "8", "--repeat", "2", NULL};
    const unsigned decode = 8, repeat = 2;
    const char *dir, *fixture, *why = NULL, *workload = NULL;
    const char *const no_filter[] = {NULL, NULL, NULL, NULL};
    const char *const phase_filter[] = {"--phase", "DECODE", NULL};
    size_t i;
    struct wl_trace gpu, host;

    report = strdup(test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        bail("%s was not built", report);
    plan_lazy();
    dir = test_tmpdir();
    fixture = strdup(test_path(dir, "fixture.obs"));
    if (fixture_write(fixture, 0) != 0)
        bail("cannot write the fixture");

    test_query_api(fixture);
    test_fixture_reports(fixture);
    check_formats("fixture", fixture, no_filter);
    check_errors(fixture);

    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        if (strcmp(workload_bins[i].label, "obs_cuda") == 0)
            workload = workload_path(&workload_bins[i], &why);
    if (workload == NULL) {
        skip("workload traces: %s", why);
        free((char *)fixture);
        return 0;
    }
    memset(&gpu, 0, sizeof gpu);
    memset(&host, 0, sizeof host);
    if (make_trace(workload, "gpu", 1, args8, &gpu) != 0 || make_trace(workload, "host", 0, args8, &host) != 0)
        bail("the workload did not run under the shim");

    check_kernels("gpu-time trace", &gpu, no_filter, keep_all);
    check_kernels("host-time trace", &host, no_filter, keep_all);
    check_gaps("gpu-time trace", &gpu, decode, repeat);
    check_gaps("host-time trace", &host, decode, repeat);
    {
        struct run_result r = report_run("gaps", host.path, NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, "not available: the trace has no GPU time") &&
               strstr(r.out, "Host time between launches"),
           "host-time trace: gaps says device gaps need GPU time and shows the host-side gaps");
        run_result_free(&r);
    }
    check_top("gpu-time trace", &gpu);
    check_top("host-time trace", &host);
    check_filters("gpu-time trace", &gpu);
    check_formats("gpu-time trace", gpu.path, no_filter);
    check_formats("gpu-time trace", gpu.path, phase_filter);
    check_compare_same("gpu-time trace", gpu.path);
    check_compare_runs(workload, &gpu, decode, repeat, fixture);
    free(gpu.calls.c);
    free(host.calls.c);
    free((char *)fixture);
    return 0;
}
