/* OBS_GPU_TIME=cupti on the simulators and the simulated libcupti.so.13
 * (sim/cupti_sim.c), whose device records carry each operation's
 * virtual start and end (OBS_SIM_LOG_OPS=1 logs them: the ground truth):
 *   - record by record, every timed call's GPU span equals its operations
 *     in the log (base + virtual start .. base + virtual end; a graph
 *     launch: the envelope of its nodes; base: the simulated libcupti's
 *     clock base, logged when it attaches), and a call whose operation was
 *     captured into a graph has none and is counted as having no device
 *     work: the CUDA API driver, the driver-level app, the workload with and
 *     without graphs, NVIDIA's static runtime over the simulated driver;
 *   - the app's stdout and exit status as without the shim (--errors too);
 *   - the shim's own CUPTI calls: one session (subscribe, timestamps,
 *     thread ids, callbacks, the timed APIs' records, three device kinds),
 *     two flushes at exit, none per launch (the same for 10 and 400 rounds);
 *   - the reports: the summary's kernel and copy tables and the phase
 *     table are those of OBS_GPU_TIME=events, the JSON and the .pftrace
 *     have a device slice and a flow per span, the CSV a device time per
 *     span, the HTML page says GPU time, the SQLite export has a kernel row
 *     per kernel span;
 *   - another CUPTI client (OBS_SIM_CUPTI_REFUSE=1, and a real one
 *     preloaded: tests/apps/cupti_tool.c): the shim says so once and times
 *     with events; the other client still gets every record;
 *   - no libcupti (OBS_CUPTI_PATH naming none), HIP: events, said once;
 *   - fork: the parent's spans equal the truth, the child times with
 *     events (its own trace says why);
 *   - a fatal signal: spans made before it are in the trace, the rest are
 *     counted missing, none lost silently;
 *   - threads, small CUPTI buffers (OBS_SIM_CUPTI_BUFFER_RECORDS), no sync
 *     before exit: every span at exit, none dropped or orphaned. */
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"
#include "trace/trace.h"
#include "workload_bins.h"

/* ---- running ---------------------------------------------------------------------- */

enum mode { PLAIN, CUPTI, EVENTS };

/* Run argv on the simulators (shim_test.h, sim_traced_run_exec): PLAIN without
 * the shim. extra: NULL-terminated "NAME=value" list or NULL. */
static void run_tagged(const char *tag, const char *const argv[], enum mode mode, const char *const *extra,
                       struct sim_traced_run *r)
{
    sim_traced_run_exec(tag, argv, mode == CUPTI ? "cupti" : mode == EVENTS ? "events" : NULL, extra, r);
}

static const char *meta_or(const struct obs_trace *t, const char *key, const char *dflt)
{
    const char *v = t ? obs_trace_meta(t, key) : NULL;
    return v ? v : dflt;
}

static unsigned long long meta_u(const struct obs_trace *t, const char *key)
{
    return strtoull(meta_or(t, key, "0"), NULL, 10);
}

/* ---- the ground truth: the simulator's log ---------------------------------------------- */

struct log_line {
    char f[7][256]; /* api, kind, name, stream, bytes (op: start), status (op: end), tid */
    int nf;
};

static size_t read_log(const char *path, struct log_line **out)
{
    char *text = test_read_file(path, NULL), *line, *save = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (text == NULL)
        return 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        struct log_line l;
        char *field, *fsave = NULL;
        memset(&l, 0, sizeof l);
        for (field = strtok_r(line, "\t", &fsave); field != NULL && l.nf < 7; field = strtok_r(NULL, "\t", &fsave))
            snprintf(l.f[l.nf++], sizeof l.f[0], "%s", field);
        if (l.nf < 6)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            *out = realloc(*out, cap * sizeof **out);
            if (*out == NULL)
                bail("out of memory");
        }
        (*out)[n++] = l;
    }
    free(text);
    return n;
}

/* One call that ran device work (or should have), from the log. */
struct truth {
    unsigned kind;       /* OBS_KIND_* */
    unsigned long tid;   /* 0 without OBS_SIM_LOG_TID */
    size_t nops;         /* operations it ran (0: captured) */
    uint64_t begin, end; /* virtual envelope of its operations */
};

static unsigned kind_of_word(const char *w)
{
    if (strcmp(w, "kernel") == 0)
        return OBS_KIND_KERNEL;
    if (strcmp(w, "memcpy") == 0)
        return OBS_KIND_MEMCPY;
    if (strcmp(w, "memset") == 0)
        return OBS_KIND_MEMSET;
    if (strcmp(w, "graph") == 0)
        return OBS_KIND_GRAPH;
    return OBS_KIND_NONE;
}

struct ground {
    struct truth *calls;
    size_t n;
    int have_base;
    uint64_t base;
    unsigned long ops; /* sim_op lines */
    unsigned long cupti_calls; /* lines of CUPTI entry points */
};

/* The truth of a log: calls in log order, each with the operations logged
 * just before it on its thread; the base of the (first) attach line. */
static void ground_read(const char *path, struct ground *g)
{
    struct log_line *l;
    size_t n = read_log(path, &l), i, j, cap = 0;
    struct pending {
        unsigned long tid;
        size_t nops;
        uint64_t b, e;
    } pend[64];
    size_t npend = 0;

    memset(g, 0, sizeof *g);
    for (i = 0; i < n; i++) {
        unsigned long tid = l[i].nf >= 7 ? strtoul(l[i].f[6], NULL, 10) : 0;
        struct pending *p = NULL;
        for (j = 0; j < npend; j++)
            if (pend[j].tid == tid)
                p = &pend[j];
        if (p == NULL && npend < 64) {
            p = &pend[npend++];
            memset(p, 0, sizeof *p);
            p->tid = tid;
        }
        if (strcmp(l[i].f[0], "obssim_tool_attach") == 0) {
            if (!g->have_base)
                g->base = strtoull(l[i].f[4], NULL, 10);
            g->have_base = 1;
            continue;
        }
        if (strncmp(l[i].f[0], "cupti", 5) == 0)
            g->cupti_calls++;
        if (strcmp(l[i].f[0], "sim_op") == 0) {
            uint64_t b = strtoull(l[i].f[4], NULL, 10), e = strtoull(l[i].f[5], NULL, 10);
            g->ops++;
            if (p->nops == 0 || b < p->b)
                p->b = b;
            if (p->nops == 0 || e > p->e)
                p->e = e;
            p->nops++;
            continue;
        }
        if (kind_of_word(l[i].f[1]) != OBS_KIND_NONE && strtol(l[i].f[5], NULL, 10) == 0) {
            struct truth *t;
            if (g->n == cap) {
                cap = cap ? cap * 2 : 1024;
                g->calls = realloc(g->calls, cap * sizeof *g->calls);
                if (g->calls == NULL)
                    bail("out of memory");
            }
            t = &g->calls[g->n++];
            t->kind = kind_of_word(l[i].f[1]);
            t->tid = tid;
            t->nops = p->nops;
            t->begin = p->b;
            t->end = p->e;
        }
        p->nops = 0;
    }
    free(l);
}

struct truth_result {
    unsigned long compared, mismatched, no_work_expected, spans_checked, absent;
};

/* The trace's timed calls against the truth, thread by thread (by_tid: the
 * log has thread ids; else one thread). allow_absent: a call may have no
 * span (a process killed before CUPTI handed it over). */
static void truth_compare(const char *label, const struct obs_trace *t, const struct ground *g, int by_tid,
                          int allow_absent, unsigned long only_tid, struct truth_result *out)
{
    size_t ti;
    memset(out, 0, sizeof *out);
    for (ti = 0; ti < t->nthreads; ti++) {
        unsigned long tid = t->threads[ti].tid;
        size_t gi = 0, ci;
        unsigned long mine = 0, matched = 0;
        if (only_tid != 0 && tid != only_tid)
            continue;
        for (ci = 0; ci < t->ncalls; ci++) {
            const struct obs_call *c = &t->calls[ci];
            const struct obs_gpu_time *gt;
            const struct truth *tr = NULL;
            if (c->thread != ti || c->status != 0 || !(c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_MEMCPY ||
                                                       c->kind == OBS_KIND_MEMSET || c->kind == OBS_KIND_GRAPH))
                continue;
            mine++;
            while (gi < g->n && by_tid && g->calls[gi].tid != tid)
                gi++;
            if (gi < g->n)
                tr = &g->calls[gi++];
            out->compared++;
            if (tr == NULL || tr->kind != c->kind) {
                out->mismatched++;
                diag("%s: thread %lu seq %zu %s: the log has %s here", label, tid, ci, obs_api_name(c->api),
                     tr ? "a call of another kind" : "no more calls");
                continue;
            }
            matched++;
            gt = obs_call_gpu(t, c);
            if (tr->nops == 0) {
                out->no_work_expected++;
                if (gt != NULL) {
                    out->mismatched++;
                    diag("%s: seq %zu %s: a span though the log shows no device work", label, ci,
                         obs_api_name(c->api));
                }
                continue;
            }
            if (gt == NULL) {
                out->absent++;
                if (!allow_absent) {
                    out->mismatched++;
                    diag("%s: seq %zu %s: no span", label, ci, obs_api_name(c->api));
                }
                continue;
            }
            out->spans_checked++;
            if (gt->begin != g->base + tr->begin || gt->end != g->base + tr->end) {
                out->mismatched++;
                diag("%s: seq %zu %s: span %llu..%llu, the log says %llu..%llu (+ base %llu)", label, ci,
                     obs_api_name(c->api), (unsigned long long)(gt->begin - g->base),
                     (unsigned long long)(gt->end - g->base), (unsigned long long)tr->begin,
                     (unsigned long long)tr->end, (unsigned long long)g->base);
            }
        }
        (void)mine, (void)matched;
        if (by_tid) { /* the log's calls of this thread that the trace lacks */
            while (gi < g->n) {
                if (g->calls[gi].tid == tid) {
                    out->mismatched++;
                    diag("%s: thread %lu: a %s call in the log is not in the trace", label, tid,
                         obs_call_kind_name(g->calls[gi].kind));
                }
                gi++;
            }
        }
    }
}

/* The whole check of one run against its log. */
static void check_truth(const char *label, const struct sim_traced_run *r, int by_tid)
{
    struct ground g;
    struct truth_result tr;
    ground_read(r->log, &g);
    if (r->t == NULL || !g.have_base) {
        skip_block(3, "%s: %s", label, r->t == NULL ? "no trace" : "the simulated libcupti never attached");
        free(g.calls);
        return;
    }
    truth_compare(label, r->t, &g, by_tid, 0, 0, &tr);
    ok(tr.compared > 0 && tr.compared == g.n && tr.mismatched == 0,
       "%s: record by record, %lu GPU spans equal the simulator's operations (base + virtual start .. end), "
       "%lu calls compared", label, tr.spans_checked, tr.compared);
    ok(r->t->no_work_gpu_calls == tr.no_work_expected,
       "%s: %lu calls with no device work (captured into a graph), as in the log (%lu)", label,
       (unsigned long)r->t->no_work_gpu_calls, tr.no_work_expected);
    ok(r->t->missing_gpu_spans == 0 && r->t->orphan_gpu_spans == 0 && r->t->records_lost == 0,
       "%s: no span missing (%llu), none orphaned (%llu), no record lost", label,
       (unsigned long long)r->t->missing_gpu_spans, (unsigned long long)r->t->orphan_gpu_spans);
    free(g.calls);
}

/* The trace says it has CUPTI's GPU time, from the simulated library. */
static void check_header(const char *label, const struct sim_traced_run *r)
{
    const struct obs_trace *t = r->t;
    const char *lib = meta_or(t, "gpu_time_cupti_library", "");
    unsigned long flagged = 0;
    size_t i;
    for (i = 0; t != NULL && i < t->ncalls; i++)
        flagged += (t->calls[i].flags & OBS_CALL_GPU_TIMED) != 0;
    char real_lib[4096] = "", real_sim[4096] = "";
    if (realpath(lib, real_lib) == NULL || realpath(shim_build_path("sim/.libs/libcupti.so.13"), real_sim) == NULL)
        real_lib[0] = '\0';
    ok(t != NULL && (t->flags & OBS_FILE_GPU_TIME) && strcmp(meta_or(t, "gpu_time", ""), "cupti") == 0 &&
           real_lib[0] != '\0' && strcmp(real_lib, real_sim) == 0,
       "%s: header flag and meta gpu_time=cupti, from the simulated libcupti (%s)", label, lib);
    ok(t != NULL && meta_u(t, "gpu_time_cupti_calls") == flagged && flagged > 0 &&
           meta_u(t, "gpu_time_cupti_calls_spanned") + meta_u(t, "gpu_time_cupti_no_device_work") == flagged &&
           meta_u(t, "gpu_time_cupti_dropped") == 0 && meta_u(t, "gpu_time_cupti_orphan_records") == 0 &&
           meta_u(t, "gpu_time_cupti_no_api_record") == 0 && meta_u(t, "gpu_time_cupti_api_unmatched") == 0 &&
           meta_u(t, "gpu_time_cupti_untimed_no_room") == 0,
       "%s: meta: %lu calls flagged, each spanned or with no device work; no call left untimed, no record "
       "dropped, unmatched or orphaned", label, flagged);
}

/* ---- the CUDA API driver ------------------------------------------------------------------ */

static unsigned long count_api_lines(const char *log, const char *api)
{
    struct log_line *l;
    size_t n = read_log(log, &l), i;
    unsigned long k = 0;
    for (i = 0; i < n; i++)
        k += strcmp(l[i].f[0], api) == 0;
    free(l);
    return k;
}

/* The text of a summary table: from its title line to the blank line after. */
static char *table_of(const char *text, const char *title)
{
    const char *p = text ? strstr(text, title) : NULL, *e;
    char *out;
    if (p == NULL)
        return strdup("");
    e = strstr(p, "\n\n");
    if (e == NULL)
        e = p + strlen(p);
    out = malloc((size_t)(e - p) + 1);
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
    return out;
}

static void test_api_driver(void)
{
    const char *bin = shim_build_path("tests/apps/cuda_api_driver");
    const char *argv[] = {bin, NULL}, *argv_errors[] = {bin, "--errors", NULL};
    const char *label = "CUDA API driver";
    struct sim_traced_run plain, cupti, events, perr, cerr;

    run_tagged("drv-plain", argv, PLAIN, NULL, &plain);
    run_tagged("drv-cupti", argv, CUPTI, NULL, &cupti);
    run_tagged("drv-events", argv, EVENTS, NULL, &events);
    ok(cupti.res.exited && cupti.res.status == 0 && plain.res.status == 0, "%s: exit 0 with cupti, as without the shim",
       label);
    is_string(plain.res.out, cupti.res.out, "%s: same stdout with cupti (every call's status)", label);
    is_int(0, (long long)warning_lines(cupti.res.err), "%s: no warning", label);
    check_header(label, &cupti);
    check_truth(label, &cupti, 0);
    ok(cupti.t != NULL && events.t != NULL && cupti.t->ngpu == events.t->ngpu && cupti.t->no_work_gpu_calls == 2,
       "%s: as many calls with GPU spans as with events (%zu, %zu); the 2 made while capturing have none", label,
       cupti.t ? cupti.t->ngpu : 0, events.t ? events.t->ngpu : 0);
    ok(strstr(cupti.res.err, "GPU time: cupti; calls with GPU spans: ") != NULL &&
           strstr(cupti.res.err, "GPU spans missing: 0; calls with no device work: 2") != NULL,
       "%s: the summary says GPU time: cupti, none missing, 2 calls with no device work", label);
    {
        char *k1 = table_of(cupti.res.err, "Kernels (GPU time"), *k2 = table_of(events.res.err, "Kernels (GPU time");
        char *c1 = table_of(cupti.res.err, "Copies by direction"), *c2 = table_of(events.res.err, "Copies by direction");
        ok(k1[0] != '\0' && strcmp(k1, k2) == 0 && c1[0] != '\0' && strcmp(c1, c2) == 0,
           "%s: the summary's kernel and copy/memset tables are those of OBS_GPU_TIME=events", label);
        if (strcmp(k1, k2) != 0)
            diag("cupti:\n%s\nevents:\n%s", k1, k2);
        free(k1), free(k2), free(c1), free(c2);
    }
    /* The shim's own CUPTI calls: one session, two flushes at exit. */
    ok(count_api_lines(cupti.log, "cuptiSubscribe_v2") == 1 &&
           count_api_lines(cupti.log, "cuptiActivityRegisterTimestampCallback") == 1 &&
           count_api_lines(cupti.log, "cuptiSetThreadIdType") == 1 &&
           count_api_lines(cupti.log, "cuptiActivityRegisterCallbacks") == 1 &&
           count_api_lines(cupti.log, "cuptiActivityEnableRuntimeApi") == 44 &&
           count_api_lines(cupti.log, "cuptiActivityEnableDriverApi") == 60 &&
           count_api_lines(cupti.log, "cuptiActivityEnable") == 3 &&
           count_api_lines(cupti.log, "cuptiActivityFlushAll") == 2,
       "%s: the shim's CUPTI calls: one subscription, its clock, thread ids and buffers, the records of the 44 "
       "runtime and 60 driver APIs it times, 3 device kinds, 2 flushes at exit", label);
    sim_traced_run_free(&plain);
    sim_traced_run_free(&cupti);
    sim_traced_run_free(&events);

    run_tagged("drv-errors-plain", argv_errors, PLAIN, NULL, &perr);
    run_tagged("drv-errors-cupti", argv_errors, CUPTI, NULL, &cerr);
    ok(cerr.res.exited && cerr.res.status == perr.res.status && perr.res.status == 0,
       "%s --errors: exit status unchanged (%d)", label, cerr.res.status);
    is_string(perr.res.out, cerr.res.out, "%s --errors: same stdout: every status and last error as expected", label);
    check_truth(label, &cerr, 0);
    sim_traced_run_free(&perr);
    sim_traced_run_free(&cerr);
}

/* ---- the driver API ------------------------------------------------------------------------ */

static void test_driver_app(void)
{
    const char *bin = shim_build_path("tests/apps/driver_static_like");
    const char *argv[] = {bin, NULL};
    const char *label = "driver_static_like";
    struct sim_traced_run plain, cupti;

    run_tagged("cudrv-plain", argv, PLAIN, NULL, &plain);
    run_tagged("cudrv-cupti", argv, CUPTI, NULL, &cupti);
    ok(cupti.res.exited && cupti.res.status == 0, "%s: exit 0", label);
    is_string(plain.res.out, cupti.res.out, "%s: same stdout with cupti", label);
    check_header(label, &cupti);
    check_truth(label, &cupti, 0);
    ok(cupti.t != NULL && cupti.t->ngpu == 63 && cupti.t->no_work_gpu_calls == 4,
       "%s: 63 calls with spans, the 4 captured ones with no device work (as with events)", label);
    sim_traced_run_free(&plain);
    sim_traced_run_free(&cupti);
}

/* ---- the workload, and the reports --------------------------------------------------------- */

/* Lines of a CSV export with both device columns filled. */
static unsigned long csv_gpu_rows(const char *obs)
{
    const char *argv[] = {shim_build_path("obs-report"), "csv", obs, NULL};
    struct run_result res;
    char *line, *save = NULL, *header = NULL;
    unsigned long rows = 0;
    int col_begin = -1, col_end = -1;

    if (run_program(argv, NULL, 120, &res) != 0 || !res.exited || res.status != 0) {
        run_result_free(&res);
        return 0;
    }
    for (line = strtok_r(res.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *fields[64];
        size_t n = test_csv_split(line, fields, 64), i;
        if (header == NULL) {
            header = line;
            for (i = 0; i < n; i++) {
                if (strcmp(fields[i], "gpu_begin_ns") == 0)
                    col_begin = (int)i;
                if (strcmp(fields[i], "gpu_end_ns") == 0)
                    col_end = (int)i;
            }
            continue;
        }
        if (col_begin >= 0 && col_end >= 0 && (size_t)col_end < n && fields[col_begin][0] && fields[col_end][0])
            rows++;
    }
    run_result_free(&res);
    return rows;
}

/* obs-report CMD [OPT] OBS: its stdout ("" when it fails). */
static char *report_text(const char *cmd, const char *opt, const char *obs)
{
    const char *argv[] = {shim_build_path("obs-report"), cmd, opt ? opt : obs, opt ? obs : NULL, NULL};
    struct run_result res;
    char *out;
    if (run_program(argv, NULL, 120, &res) != 0 || !res.exited || res.status != 0) {
        run_result_free(&res);
        return strdup("");
    }
    out = strdup(res.out);
    run_result_free(&res);
    return out;
}

/* Each line of a CSV without its field named "thread" in the first line
 * (the phase CSV's thread id, which differs from run to run). In place. */
static char *drop_thread_field(char *text)
{
    char *out = text, *line = text;
    size_t col = (size_t)-1, i;
    const char *f = text;
    for (i = 0; col == (size_t)-1 && *f != '\0' && *f != '\n'; i++) {
        size_t n = strcspn(f, ",\n");
        if (n == 6 && strncmp(f, "thread", 6) == 0)
            col = i;
        f += n + (f[n] == ',');
    }
    while (*line != '\0') {
        char *eol = strchr(line, '\n'), *end = eol ? eol : line + strlen(line), *field = line;
        int first = 1;
        for (i = 0; field <= end; i++) {
            char *stop = memchr(field, ',', (size_t)(end - field));
            size_t n = (size_t)((stop ? stop : end) - field);
            if (i != col) {
                if (!first)
                    *out++ = ',';
                memmove(out, field, n);
                out += n;
                first = 0;
            }
            if (stop == NULL)
                break;
            field = stop + 1;
        }
        if (eol != NULL)
            *out++ = '\n';
        line = eol ? eol + 1 : end;
    }
    *out = '\0';
    return text;
}

/* The JSON's device slices and flows (tests/trace_json_check.py). */
static void check_json(const char *label, const struct sim_traced_run *r)
{
    struct run_result pr;
    unsigned long slices, flows;

    if (r->t == NULL || trace_json_check_counts(r->json, &pr, &slices, &flows) != 0) {
        skip("%s: no python3 to parse the JSON, or no trace", label);
        return;
    }
    ok(pr.exited && pr.status == 0 && slices == r->t->ngpu && flows == r->t->ngpu && slices > 0,
       "%s: the JSON parses, with %lu device slices and %lu flows for %zu spans", label, slices, flows, r->t->ngpu);
    run_result_free(&pr);
}

/* The .pftrace (obs-report perfetto) read back through protoc with
 * Perfetto's own messages by tests/perfetto_check.py, against the CSV: a
 * device slice and a flow per span. */
static void check_perfetto(const char *label, const struct sim_traced_run *r)
{
    const char *python = getenv("OBS_PYTHON3"), *protoc = getenv("OBS_PROTOC");
    char pf[4300], csvp[4300], checker[4300], protodir[4300];
    const char *argv_pf[] = {shim_build_path("obs-report"), "perfetto", "-o", pf, r->obs, NULL};
    const char *argv_csv[] = {shim_build_path("obs-report"), "csv", "-o", csvp, r->obs, NULL};
    const char *argv[7], *p;
    struct run_result res;
    long long slices = -1, flows = -1;

    if (python == NULL || *python == '\0' || protoc == NULL || *protoc == '\0' || r->t == NULL) {
        skip("%s: no python3 or protoc to read the .pftrace back", label);
        return;
    }
    snprintf(pf, sizeof pf, "%s.pftrace", r->prefix);
    snprintf(csvp, sizeof csvp, "%s.csv", r->prefix);
    snprintf(checker, sizeof checker, "%s/tests/perfetto_check.py", test_srcdir());
    snprintf(protodir, sizeof protodir, "%s/tests/perfetto", test_srcdir());
    if (run_program(argv_pf, NULL, 120, &res) != 0 || !run_exited_with(&res, 0)) {
        run_result_free(&res);
        ok(0, "%s: obs-report perfetto", label);
        return;
    }
    run_result_free(&res);
    if (run_program(argv_csv, NULL, 120, &res) != 0)
        bail("cannot run obs-report csv");
    run_result_free(&res);
    argv[0] = python, argv[1] = checker, argv[2] = protoc, argv[3] = protodir, argv[4] = pf, argv[5] = csvp;
    argv[6] = NULL;
    if (run_program(argv, NULL, 600, &res) != 0)
        bail("cannot run %s", python);
    if ((p = strstr(res.out, "gpu_slices=")) != NULL)
        slices = strtoll(p + 11, NULL, 10);
    if ((p = strstr(res.out, "\nflows=")) != NULL)
        flows = strtoll(p + 7, NULL, 10);
    ok(run_exited_with(&res, 0) && slices == (long long)r->t->ngpu && flows == slices,
       "%s: the .pftrace decodes, with %lld device slices and %lld flows for %zu spans", label, slices, flows,
       r->t->ngpu);
    if (!run_exited_with(&res, 0))
        diag_text("perfetto_check", res.err);
    run_result_free(&res);
}

static void check_sqlite(const char *label, const struct sim_traced_run *r)
{
    char sql[256], *out;
    unsigned long kernels = 0, rows;
    size_t i;
    const char *argv_x[] = {shim_build_path("obs-report"), "sqlite", "-q", r->obs, sql, NULL};
    struct run_result res;
    char found[4096];
    const char *sqlite3 = test_on_path("sqlite3", found, sizeof found);

    snprintf(sql, sizeof sql, "%s/cupti.sqlite", test_tmpdir());
    unlink(sql);
    if (sqlite3 == NULL || r->t == NULL) {
        skip("%s: no sqlite3 program (or no trace)", label);
        return;
    }
    if (run_program(argv_x, NULL, 120, &res) != 0 || !res.exited || res.status != 0) {
        run_result_free(&res);
        skip("%s: obs-report sqlite unavailable in this build", label);
        return;
    }
    run_result_free(&res);
    {
        const char *argv_q[] = {sqlite3, sql, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL;", NULL};
        if (run_program(argv_q, NULL, 60, &res) != 0)
            bail("cannot run sqlite3");
        out = res.out;
        rows = strtoul(out, NULL, 10);
        run_result_free(&res);
    }
    for (i = 0; i < r->t->ncalls; i++)
        kernels += r->t->calls[i].kind == OBS_KIND_KERNEL && r->t->calls[i].gpu != OBS_NONE;
    ok(kernels > 0 && rows == kernels, "%s: SQLite: %lu kernel rows for %lu kernel spans", label, rows, kernels);
}

static void test_workload(int graphs)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[0], &why);
    const char *argv[] = {bin, graphs ? "--graphs" : NULL, NULL};
    char label[64];
    struct sim_traced_run plain, cupti, events;

    snprintf(label, sizeof label, "obs_cuda%s", graphs ? " --graphs" : "");
    if (bin == NULL) {
        skip_block(graphs ? 9 : 15, "%s: %s", label, why);
        return;
    }
    run_tagged(graphs ? "wg-plain" : "w-plain", argv, PLAIN, NULL, &plain);
    run_tagged(graphs ? "wg-cupti" : "w-cupti", argv, CUPTI, NULL, &cupti);
    run_tagged(graphs ? "wg-events" : "w-events", argv, EVENTS, NULL, &events);
    ok(cupti.res.exited && cupti.res.status == 0, "%s: exit 0", label);
    is_string(plain.res.out, cupti.res.out, "%s: same output with cupti", label);
    check_header(label, &cupti);
    check_truth(label, &cupti, 0);
    {
        char *p1 = drop_thread_field(report_text("phases", "--csv", cupti.obs));
        char *p2 = drop_thread_field(report_text("phases", "--csv", events.obs));
        char *k1 = table_of(cupti.res.err, "Kernels (GPU time"), *k2 = table_of(events.res.err, "Kernels (GPU time");
        ok(k1[0] != '\0' && strcmp(k1, k2) == 0, "%s: the summary's kernel table is that of OBS_GPU_TIME=events",
           label);
        ok(p1[0] != '\0' && strcmp(p1, p2) == 0, "%s: obs-report phases (CSV) is that of OBS_GPU_TIME=events", label);
        if (strcmp(p1, p2) != 0)
            diag("cupti:\n%s\nevents:\n%s", p1, p2);
        free(p1), free(p2), free(k1), free(k2);
    }
    if (!graphs) {
        unsigned long rows = csv_gpu_rows(cupti.obs);
        char html_path[4300], *html;
        const char *argv_html[] = {shim_build_path("obs-report"), "html", "-o", html_path, cupti.obs, NULL};
        struct run_result hres;
        snprintf(html_path, sizeof html_path, "%s/cupti.html", test_tmpdir());
        if (run_program(argv_html, NULL, 120, &hres) != 0)
            bail("cannot run obs-report html");
        run_result_free(&hres);
        html = test_read_file(html_path, NULL);
        if (html == NULL)
            html = strdup("");
        ok(cupti.t != NULL && rows == cupti.t->ngpu && rows > 0, "%s: the CSV has a device begin and end for each "
           "of the %zu spans (%lu)", label, cupti.t ? cupti.t->ngpu : 0, rows);
        ok(strstr(html, "GPU time") != NULL, "%s: the HTML page shows GPU time", label);
        free(html);
        check_json(label, &cupti);
        check_perfetto(label, &cupti);
        check_sqlite(label, &cupti);
    }
    sim_traced_run_free(&plain);
    sim_traced_run_free(&cupti);
    sim_traced_run_free(&events);
}

/* NVIDIA's static runtime over the simulated driver: the shim records the
 * driver calls, CUPTI's records come from the driver. */
static void test_static_runtime(void)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[1], &why);
    const char *nvcc = getenv("OBS_NVCC");
    char dir[4200], lib64[4200], link[4300], path_env[9000];
    const char *argv[] = {bin, NULL};
    struct sim_traced_run cupti;
    const char *label = "obs_cuda_static (NVIDIA's runtime)";

    if (bin == NULL || nvcc == NULL || *nvcc == '\0') {
        skip_block(6, "%s: %s", label, why ? why : "no toolkit");
        return;
    }
    /* <home>/bin/nvcc -> <home>/lib64 */
    snprintf(lib64, sizeof lib64, "%s", nvcc);
    if (strrchr(lib64, '/'))
        *strrchr(lib64, '/') = '\0';
    if (strrchr(lib64, '/'))
        *strrchr(lib64, '/') = '\0';
    strncat(lib64, "/lib64", sizeof lib64 - strlen(lib64) - 1);
    snprintf(dir, sizeof dir, "%s/static-libs", test_tmpdir());
    mkdir(dir, 0755);
    snprintf(link, sizeof link, "%s/libcuda.so.1", dir);
    unlink(link);
    if (symlink(shim_build_path("sim/.libs/libcuda.so.1"), link) != 0)
        bail("symlink %s", link);
    snprintf(link, sizeof link, "%s/libcupti.so.13", dir);
    unlink(link);
    if (symlink(shim_build_path("sim/.libs/libcupti.so.13"), link) != 0)
        bail("symlink %s", link);
    /* Only these two of the simulators, then the toolkit (its own libcupti comes later). */
    snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s:%s", dir, lib64);
    {
        /* run_tagged puts the simulators' directory first: build the run by hand */
        char out_env[4300], log_env[4300];
        const char *env[] = {path_env, out_env, log_env, "OBS_SIM_LOG_OPS=1", "OBS_GPU_TIME=cupti",
                             "OBS_TRACE=none", NULL};
        memset(&cupti, 0, sizeof cupti);
        snprintf(cupti.prefix, sizeof cupti.prefix, "%s/static", test_tmpdir());
        snprintf(cupti.log, sizeof cupti.log, "%s.log", cupti.prefix);
        snprintf(cupti.obs, sizeof cupti.obs, "%s.obs", cupti.prefix);
        unlink(cupti.log);
        unlink(cupti.obs);
        snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", cupti.prefix);
        snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", cupti.log);
        shim_run(argv, env, 1, 300, &cupti.res);
        if (access(cupti.obs, R_OK) == 0)
            cupti.t = shim_trace_open(cupti.obs);
    }
    ok(cupti.res.exited && cupti.res.status == 0 && strstr(cupti.res.out, "TTFT") != NULL,
       "%s: runs to the end under the shim with cupti", label);
    is_int(0, (long long)warning_lines(cupti.res.err), "%s: no warning", label);
    check_header(label, &cupti);
    check_truth(label, &cupti, 0);
    sim_traced_run_free(&cupti);
}

/* ---- when CUPTI cannot be had ---------------------------------------------------------------- */

static void check_fallback(const char *label, const struct sim_traced_run *r, const struct sim_traced_run *events, const char *says)
{
    ok(r->res.exited && r->res.status == 0, "%s: exit 0", label);
    is_int(1, (long long)count_lines_with(r->res.err, "obsshim: warning: OBS_GPU_TIME=cupti: "),
           "%s: the shim says so once", label);
    ok(strstr(r->res.err, says) != NULL && strstr(r->res.err, "timing with events instead") != NULL,
       "%s: ... naming why (%s) and what it does instead", label, says);
    ok(r->t != NULL && events->t != NULL && r->t->ngpu == events->t->ngpu && r->t->ngpu > 0 &&
           r->t->missing_gpu_spans == 0 && strcmp(meta_or(r->t, "gpu_time", ""), "events") == 0 &&
           strstr(meta_or(r->t, "gpu_time_fallback", ""), says) != NULL,
       "%s: GPU time from events instead (%zu spans, as OBS_GPU_TIME=events gives), the meta says why", label,
       r->t ? r->t->ngpu : 0);
}

static void test_fallbacks(void)
{
    const char *bin = shim_build_path("tests/apps/cuda_api_driver");
    const char *argv[] = {bin, NULL};
    char missing_env[4300], tool_preload[9000];
    const char *refuse[] = {"OBS_SIM_CUPTI_REFUSE=1", NULL};
    const char *nolib[] = {missing_env, NULL};
    struct sim_traced_run events, r, plain;

    run_tagged("fb-plain", argv, PLAIN, NULL, &plain);
    run_tagged("fb-events", argv, EVENTS, NULL, &events);

    run_tagged("fb-refuse", argv, CUPTI, refuse, &r);
    check_fallback("another CUPTI client (OBS_SIM_CUPTI_REFUSE=1)", &r, &events, "another CUPTI client holds");
    is_string(plain.res.out, r.res.out, "another CUPTI client: the app's output unchanged");
    sim_traced_run_free(&r);

    /* A real other client, preloaded before the shim: it keeps every record. */
    {
        const char *first = getenv("OBS_PRELOAD_FIRST");
        snprintf(tool_preload, sizeof tool_preload, "LD_PRELOAD=%s%s%s:%s", first && *first ? first : "",
                 first && *first ? ":" : "", shim_build_path("tests/apps/.libs/libcupti_tool.so"), shim_lib());
    }
    {
        char out_env[4300], log_env[4300], want[128];
        const char *env[] = {"OBS_SIM_QUIET=1", sim_library_path_env(), out_env, log_env, tool_preload,
                             "OBS_SIM_LOG_OPS=1", "OBS_GPU_TIME=cupti", "OBS_TRACE=none", NULL};
        unsigned long k = 0, c = 0, s = 0;
        memset(&r, 0, sizeof r);
        snprintf(r.prefix, sizeof r.prefix, "%s/fb-tool", test_tmpdir());
        snprintf(r.obs, sizeof r.obs, "%s.obs", r.prefix);
        snprintf(r.log, sizeof r.log, "%s.log", r.prefix);
        unlink(r.obs);
        unlink(r.log);
        snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", r.prefix);
        snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", r.log);
        if (run_program(argv, env, 120, &r.res) != 0)
            bail("cannot run %s", bin);
        if (access(r.obs, R_OK) == 0)
            r.t = shim_trace_open(r.obs);
        check_fallback("another CUPTI client (cupti_tool preloaded)", &r, &events, "\"CUPTI for cupti_tool\"");
        { /* what the tool must have seen: every operation logged */
            struct log_line *l;
            size_t n = read_log(r.log, &l), j;
            for (j = 0; j < n; j++)
                if (strcmp(l[j].f[0], "sim_op") == 0) {
                    k += strcmp(l[j].f[1], "kernel") == 0;
                    c += strcmp(l[j].f[1], "memcpy") == 0;
                    s += strcmp(l[j].f[1], "memset") == 0;
                }
            free(l);
        }
        snprintf(want, sizeof want, "cupti_tool: kernels %lu memcpys %lu memsets %lu dropped 0", k, c, s);
        ok(k > 0 && strstr(r.res.err, want) != NULL, "the other CUPTI client still gets every record (%s)", want);
        if (strstr(r.res.err, want) == NULL)
            diag_text("stderr", r.res.err);
        is_string(plain.res.out, r.res.out, "the other CUPTI client: the app's output unchanged");
        sim_traced_run_free(&r);
    }

    snprintf(missing_env, sizeof missing_env, "OBS_CUPTI_PATH=%s/no-such-libcupti.so", test_tmpdir());
    run_tagged("fb-nolib", argv, CUPTI, nolib, &r);
    check_fallback("OBS_CUPTI_PATH naming no library", &r, &events, "no-such-libcupti.so cannot be opened");
    sim_traced_run_free(&r);
    sim_traced_run_free(&events);
    sim_traced_run_free(&plain);

    {
        const char *hbin = shim_build_path("tests/apps/hip_api_driver");
        const char *hargv[] = {hbin, NULL};
        struct sim_traced_run hev, hcu;
        run_tagged("hip-events", hargv, EVENTS, NULL, &hev);
        run_tagged("hip-cupti", hargv, CUPTI, NULL, &hcu);
        ok(hcu.res.exited && hcu.res.status == 0 && strcmp(hcu.res.out, hev.res.out) == 0, "HIP: exit 0, same output");
        is_int(1, (long long)count_lines_with(hcu.res.err, "OBS_GPU_TIME=cupti: HIP calls are timed with events"),
               "HIP: the shim says once that HIP calls are timed with events (rocprofiler-sdk named)");
        ok(hcu.t != NULL && hev.t != NULL && hcu.t->ngpu == hev.t->ngpu && hcu.t->ngpu > 0 &&
               hcu.t->missing_gpu_spans == 0 && strcmp(meta_or(hcu.t, "gpu_time", ""), "events") == 0,
           "HIP: the spans of OBS_GPU_TIME=events (%zu), meta gpu_time=events", hcu.t ? hcu.t->ngpu : 0);
        sim_traced_run_free(&hev);
        sim_traced_run_free(&hcu);
    }
}

/* ---- fork, signals, threads, exit ------------------------------------------------------------- */

static void test_fork(void)
{
    const char *bin = shim_build_path("tests/apps/cupti_app");
    const char *argv[] = {bin, "--fork", "--rounds", "20", NULL};
    char found[4300], prefix[4300], out_env[4400], log_env[4400], log[4300];
    const char *env[] = {sim_library_path_env(), out_env, log_env, "OBS_SIM_LOG_OPS=1", "OBS_SIM_LOG_TID=1",
                         "OBS_GPU_TIME=cupti", "OBS_TRACE=none", "OBS_SUMMARY=0", NULL};
    struct run_result res;
    struct obs_trace *parent = NULL, *child = NULL;
    struct ground g;
    struct truth_result tr;
    char dir[4300];
    size_t i;

    snprintf(dir, sizeof dir, "%s/fork", test_tmpdir());
    mkdir(dir, 0755);
    dir_clear(dir);
    snprintf(prefix, sizeof prefix, "%s/run-%%p", dir);
    snprintf(log, sizeof log, "%s/sim.log", test_tmpdir());
    unlink(log);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    shim_run(argv, env, 1, 120, &res);
    ok(res.exited && res.status == 0 && strstr(res.out, "child exit 0") != NULL && strstr(res.out, "done"),
       "fork: parent and child exit 0");
    is_int(2, (long long)dir_count_suffix(dir, ".obs", found, sizeof found), "fork: two traces, one per process");
    {
        /* Which is which: the parent's ppid is this test's pid. */
        char path[4400];
        {
            FILE *ls;
            char cmd[4500];
            snprintf(cmd, sizeof cmd, "ls %s/*.obs", dir);
            ls = popen(cmd, "r");
            while (ls != NULL && fgets(path, sizeof path, ls) != NULL) {
                struct obs_trace *t;
                path[strcspn(path, "\n")] = '\0';
                t = shim_trace_open(path);
                if (t == NULL)
                    continue;
                if (strtoul(meta_or(t, "ppid", "0"), NULL, 10) == (unsigned long)getpid() && parent == NULL)
                    parent = t;
                else if (child == NULL)
                    child = t;
                else
                    obs_trace_free(t);
            }
            if (ls != NULL)
                pclose(ls);
        }
    }
    if (parent == NULL || child == NULL) {
        skip_block(3, "fork: the two traces are not there");
    } else {
        ground_read(log, &g);
        truth_compare("fork: parent", parent, &g, 1, 0, 0, &tr);
        ok(tr.compared == 60 * 2 && tr.mismatched == 0 && strcmp(meta_or(parent, "gpu_time", ""), "cupti") == 0 &&
               parent->missing_gpu_spans == 0,
           "fork: the parent's %lu calls have CUPTI's spans, equal to the log's operations", tr.compared);
        free(g.calls);
        ok(strcmp(meta_or(child, "gpu_time", ""), "events") == 0 &&
               strstr(meta_or(child, "gpu_time_fallback", ""), "forked") != NULL,
           "fork: the child times with events; its trace says why (%s)", meta_or(child, "gpu_time_fallback", ""));
        {
            unsigned long timed = 0;
            for (i = 0; i < child->ncalls; i++)
                timed += child->calls[i].status == 0 && child->calls[i].kind != OBS_KIND_SYNC &&
                         child->calls[i].kind != OBS_KIND_ALLOC && child->calls[i].kind != OBS_KIND_NONE;
            ok(timed == 60 && child->ngpu == timed && child->missing_gpu_spans == 0,
               "fork: the child's %lu calls all have spans (%zu), none missing", timed, child->ngpu);
        }
    }
    if (parent)
        obs_trace_free(parent);
    if (child)
        obs_trace_free(child);
    run_result_free(&res);
}

static void test_signal(void)
{
    const char *bin = shim_build_path("tests/apps/cupti_app");
    const char *argv[] = {bin, "--signal", "--rounds", "50", NULL};
    const char *extra[] = {"OBS_SUMMARY=0", NULL};
    struct sim_traced_run r;
    struct ground g;
    struct truth_result tr;
    unsigned long flagged = 0;
    size_t i;

    run_tagged("signal", argv, CUPTI, extra, &r);
    ok(!r.res.exited && r.res.signal == SIGTERM, "signal: the app dies of SIGTERM, as without the shim");
    ok(r.t != NULL && strcmp(meta_or(r.t, "end", ""), "SIGTERM") == 0, "signal: the trace is closed (end=SIGTERM)");
    if (r.t == NULL) {
        skip_block(2, "signal: no trace");
        sim_traced_run_free(&r);
        return;
    }
    for (i = 0; i < r.t->ncalls; i++)
        flagged += (r.t->calls[i].flags & OBS_CALL_GPU_TIMED) != 0;
    ground_read(r.log, &g);
    truth_compare("signal", r.t, &g, 0, 1, 0, &tr);
    ok(tr.mismatched == 0 && r.t->ngpu >= 150 && r.t->ngpu + r.t->missing_gpu_spans == flagged && flagged == 300,
       "signal: the %zu spans CUPTI handed over before it (at least the 150 flushed) equal the log; the other %llu "
       "of the 300 timed calls are counted missing", r.t->ngpu, (unsigned long long)r.t->missing_gpu_spans);
    free(g.calls);
    sim_traced_run_free(&r);
}

static void test_threads_and_exit(void)
{
    const char *bin = shim_build_path("tests/apps/cupti_app");
    const char *argv_threads[] = {bin, "--threads", "4", "--rounds", "150", NULL};
    const char *argv_nosync[] = {bin, "--no-sync", "--rounds", "400", NULL};
    const char *argv_small[] = {bin, "--rounds", "10", NULL};
    const char *small_buffers[] = {"OBS_SIM_LOG_TID=1", "OBS_SIM_CUPTI_BUFFER_RECORDS=64", "OBS_SUMMARY=0", NULL};
    const char *nosync_env[] = {"OBS_SIM_CUPTI_BUFFER_RECORDS=50", "OBS_SUMMARY=0", NULL};
    struct sim_traced_run r, few, plain;

    run_tagged("threads", argv_threads, CUPTI, small_buffers, &r);
    ok(r.res.exited && r.res.status == 0 && strstr(r.res.out, "rounds 600"), "4 threads: exit 0");
    check_header("4 threads, 64-record buffers", &r);
    check_truth("4 threads, 64-record buffers", &r, 1);
    ok(r.t != NULL && meta_u(r.t, "gpu_time_cupti_buffers") >= 40,
       "4 threads: CUPTI handed over %llu buffers, all read", meta_u(r.t, "gpu_time_cupti_buffers"));
    sim_traced_run_free(&r);

    run_tagged("nosync-plain", argv_nosync, PLAIN, NULL, &plain);
    run_tagged("nosync", argv_nosync, CUPTI, nosync_env, &r);
    ok(r.res.exited && r.res.status == 0 && strcmp(r.res.out, plain.res.out) == 0,
       "no sync before exit: exit 0, same output");
    check_truth("no sync before exit, 50-record buffers", &r, 0);
    run_tagged("few", argv_small, CUPTI, nosync_env, &few);
    ok(r.t != NULL && few.t != NULL && count_api_lines(r.log, "cuptiActivityFlushAll") == 2 &&
           count_api_lines(few.log, "cuptiActivityFlushAll") == 2 &&
           count_api_lines(r.log, "cuptiSubscribe_v2") == 1 && count_api_lines(few.log, "cuptiSubscribe_v2") == 1,
       "no CUPTI call per launch: the same session and flushes for 30 and 1200 timed calls");
    sim_traced_run_free(&few);
    sim_traced_run_free(&r);
    sim_traced_run_free(&plain);
}

int main(void)
{
    plan_lazy();
    if (!test_executable(shim_build_path("sim/.libs/libcupti.so.13")))
        skip_all("the simulated libcupti is not built");
    test_api_driver();
    test_driver_app();
    test_workload(0);
    test_workload(1);
    test_static_runtime();
    test_fallbacks();
    test_fork();
    test_signal();
    test_threads_and_exit();
    return 0;
}
