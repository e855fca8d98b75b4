/* OBS_GPU_TIME=steps on the simulators, whose virtual device clock makes
 * every run deterministic (OBS_SIM_SYNC_WAIT off) and whose log holds each
 * device operation's virtual start and end (OBS_SIM_LOG_OPS=1: the ground
 * truth):
 *   - span by span, each RANGE_SPAN equals the first start and the last
 *     end of the operations of the calls its range holds on its stream
 *     (the range's own and its inner ranges'), all on the virtual clock
 *     shifted by one offset for the whole run (the clock's reference):
 *     the span encloses exactly its launches' device work, no more;
 *   - step by step and generation by generation, the GPU times of the
 *     phases, each decode step, TTFT and tokens/s equal those of
 *     OBS_GPU_TIME=events on the same program (obs-report phases --csv and
 *     --steps --csv);
 *   - the app unchanged (stdout, exit status), no warning;
 *   - the shim's event records: those of the log, one per mark (the meta's
 *     gpu_time_steps_marks) and one reference; at most a begin and an end
 *     per (range, stream) and one per stream at each host sync: not per
 *     launch;
 *   - programs: the scenario corpus's realistic loops (llm_replay:
 *     hf_eager, llamacpp, vllm_graphs with its captured graphs), a loop on
 *     several streams per range, a capture inside a step, synchronous
 *     token copies, four threads, no sync before exit, fork (each process
 *     its own spans), SIGTERM (the spans made before it exact, the rest
 *     counted missing), HIP, the reference workload (shape (a): the spans of
 *     its learning window counted by the trace's final labels);
 *   - the reports: the summary's GPU time line, the JSON and the .pftrace
 *     with a GPU slice per range span nested on stream tracks, the SQLite
 *     table OBS_GPU_RANGES, the HTML page's note. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"
#include "trace/trace.h"
#include "workload_bins.h"

#define STEPS_APP_PHASES "OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=embed_*,decode_*,sample_*"
#define STEPS_APP_STEP "OBS_STEP=embed_*"

/* ---- running ---------------------------------------------------------------------- */

enum mode { PLAIN, STEPS, EVENTS };

/* Run argv on the simulators (shim_test.h, sim_traced_run_exec): PLAIN without
 * the shim. extra: NULL-terminated "NAME=value" list or NULL. */
static void run_tagged(const char *tag, const char *const argv[], enum mode mode, const char *const *extra,
                       struct sim_traced_run *r)
{
    const char *env[40];
    size_t n = 0;
    env[n++] = "OBS_SIM_LOG_TID=1"; /* the span checks follow each thread */
    while (extra != NULL && *extra != NULL && n < 39)
        env[n++] = *extra++;
    env[n] = NULL;
    sim_traced_run_exec(tag, argv, mode == STEPS ? "steps" : mode == EVENTS ? "events" : NULL, env, r);
}

static unsigned long long meta_u(const struct obs_trace *t, const char *key)
{
    const char *v = t ? obs_trace_meta(t, key) : NULL;
    return v ? strtoull(v, NULL, 10) : 0;
}

/* ---- the ground truth: the simulator's log ---------------------------------------------- */

/* A call that enqueued device work (or should have), from the log. */
struct truth {
    unsigned kind;
    unsigned long tid;
    size_t nops;         /* operations it ran (0: captured) */
    uint64_t begin, end; /* virtual envelope of its operations */
};

struct ground {
    struct truth *calls;
    size_t n;
    unsigned long event_records; /* cudaEventRecord / hipEventRecord lines: the shim's own */
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

/* Calls in log order, each with the operations logged just before it on
 * its thread (7th column: OBS_SIM_LOG_TID=1). */
static void ground_read(const char *path, struct ground *g)
{
    char *text = test_read_file(path, NULL), *line, *save = NULL;
    struct pending {
        unsigned long tid;
        size_t nops;
        uint64_t b, e;
    } pend[64];
    size_t npend = 0, cap = 0, j;

    memset(g, 0, sizeof *g);
    if (text == NULL)
        return;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char f[7][256], *field, *fsave = NULL;
        int nf = 0;
        unsigned long tid;
        struct pending *p = NULL;
        for (field = strtok_r(line, "\t", &fsave); field != NULL && nf < 7; field = strtok_r(NULL, "\t", &fsave))
            snprintf(f[nf++], sizeof f[0], "%s", field);
        if (nf < 6)
            continue;
        tid = nf >= 7 ? strtoul(f[6], NULL, 10) : 0;
        for (j = 0; j < npend; j++)
            if (pend[j].tid == tid)
                p = &pend[j];
        if (p == NULL && npend < 64) {
            p = &pend[npend++];
            memset(p, 0, sizeof *p);
            p->tid = tid;
        }
        if (p == NULL)
            continue;
        if (strcmp(f[0], "sim_op") == 0) {
            uint64_t b = strtoull(f[4], NULL, 10), e = strtoull(f[5], NULL, 10);
            if (p->nops == 0 || b < p->b)
                p->b = b;
            if (p->nops == 0 || e > p->e)
                p->e = e;
            p->nops++;
            continue;
        }
        if (strstr(f[0], "EventRecord") != NULL)
            g->event_records++;
        if (kind_of_word(f[1]) != OBS_KIND_NONE && strtol(f[5], NULL, 10) == 0) {
            struct truth *t;
            if (g->n == cap) {
                cap = cap ? cap * 2 : 1024;
                g->calls = realloc(g->calls, cap * sizeof *g->calls);
                if (g->calls == NULL)
                    bail("out of memory");
            }
            t = &g->calls[g->n++];
            t->kind = kind_of_word(f[1]);
            t->tid = tid;
            t->nops = p->nops;
            t->begin = p->b;
            t->end = p->e;
        }
        p->nops = 0;
    }
    free(text);
}

static int device_work(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH;
}

/* Each trace call with device work and a success: its truth, matched in
 * order per thread (by the log's thread ids). NULL when they do not match. */
static const struct truth **match_calls(const struct obs_trace *t, const struct ground *g)
{
    const struct truth **of = calloc(t->ncalls ? t->ncalls : 1, sizeof *of);
    size_t ti, ci;
    if (of == NULL)
        bail("out of memory");
    for (ti = 0; ti < t->nthreads; ti++) {
        size_t gi = 0;
        for (ci = 0; ci < t->ncalls; ci++) {
            const struct obs_call *c = &t->calls[ci];
            if (c->thread != ti || c->status != 0 || !device_work(c->kind))
                continue;
            while (gi < g->n && g->calls[gi].tid != t->threads[ti].tid)
                gi++;
            if (gi == g->n || g->calls[gi].kind != c->kind) {
                diag("thread %u seq %zu %s: the log has %s here", t->threads[ti].tid, ci, obs_api_name(c->api),
                     gi == g->n ? "no more calls" : "a call of another kind");
                free(of);
                return NULL;
            }
            of[ci] = &g->calls[gi++];
        }
    }
    return of;
}

/* The call's final label (a RELABEL's range where one labels it, else
 * its innermost live range) is r or inside it. */
static int held_by(const struct obs_trace *t, uint32_t label, uint32_t r)
{
    for (; label != OBS_NONE; label = t->phases[label].parent)
        if (label == r)
            return 1;
    return 0;
}

struct span_result {
    unsigned long checked, wrong, empty;
    unsigned long tails; /* spans of RELABEL ranges: calls the shim took out of the open ranges' tail */
    unsigned long other; /* spans counted for another range than their own, or for several (none) */
};

/* Span by span against the truth, with one offset for the whole run: each
 * span holds exactly the calls that count for it, by their final labels
 * (a live range's own and its inner ranges', or a RELABEL's); a span that
 * counts for another range or for several fails. */
static void spans_against_truth(const struct obs_trace *t, const struct ground *g, struct span_result *out)
{
    const struct truth **of = match_calls(t, g);
    int have_offset = 0;
    int64_t offset = 0;
    size_t i, ci;

    memset(out, 0, sizeof *out);
    if (of == NULL) {
        out->wrong = 1;
        return;
    }
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *x = &t->range_spans[i];
        uint64_t b = UINT64_MAX, e = 0;
        out->tails += t->phases[x->live].relabel;
        if (x->flags & (OBS_RANGE_SPAN_RELABELLED | OBS_RANGE_SPAN_MIXED)) {
            out->other++;
            out->wrong++;
            diag("range span %zu (%s gen %u, stream %u) counts for %s", i, t->phases[x->live].name,
                 t->phases[x->live].generation, x->stream,
                 (x->flags & OBS_RANGE_SPAN_MIXED) ? "none (its calls have several final labels)" : "another range");
            continue;
        }
        for (ci = 0; ci < t->ncalls; ci++) {
            const struct obs_call *c = &t->calls[ci];
            if (of[ci] == NULL || of[ci]->nops == 0 || c->thread != x->thread || c->stream != x->stream ||
                !held_by(t, c->phase, x->live))
                continue;
            if (of[ci]->begin < b)
                b = of[ci]->begin;
            if (of[ci]->end > e)
                e = of[ci]->end;
        }
        if (b == UINT64_MAX) {
            out->empty++;
            out->wrong++;
            diag("range span %zu (%s, stream %u): the log has no operation of its calls", i,
                 t->phases[x->live].name, x->stream);
            continue;
        }
        if (!have_offset) {
            offset = (int64_t)x->begin - (int64_t)b;
            have_offset = 1;
        }
        out->checked++;
        if ((int64_t)x->begin - offset != (int64_t)b || (int64_t)x->end - offset != (int64_t)e) {
            out->wrong++;
            diag("range span %zu (%s gen %u, stream %u): %lld..%lld, its calls' operations %llu..%llu", i,
                 t->phases[x->live].name, t->phases[x->live].generation, x->stream,
                 (long long)((int64_t)x->begin - offset), (long long)((int64_t)x->end - offset),
                 (unsigned long long)b, (unsigned long long)e);
        }
    }
    free(of);
}

static size_t relabel_ranges(const struct obs_trace *t)
{
    size_t i, n = 0;
    for (i = 0; i < t->nphases; i++)
        n += t->phases[i].relabel;
    return n;
}

/* Host syncs in a trace (syncs other than a stream waiting for an event). */
static unsigned long host_syncs(const struct obs_trace *t)
{
    size_t i;
    unsigned long n = 0;
    for (i = 0; i < t->ncalls; i++)
        n += t->calls[i].kind == OBS_KIND_SYNC && strstr(obs_api_name(t->calls[i].api), "WaitEvent") == NULL;
    return n;
}

static size_t distinct_streams(const struct obs_trace *t)
{
    uint32_t seen[64];
    size_t n = 0, i, j;
    for (i = 0; i < t->ncalls; i++) {
        for (j = 0; j < n && seen[j] != t->calls[i].stream; j++)
            ;
        if (j == n && n < 64)
            seen[n++] = t->calls[i].stream;
    }
    return n;
}

static unsigned long device_calls(const struct obs_trace *t)
{
    size_t i;
    unsigned long n = 0;
    for (i = 0; i < t->ncalls; i++)
        n += device_work(t->calls[i].kind);
    return n;
}

/* ---- reports ----------------------------------------------------------------------------- */

/* obs-report ARGS... FILE: its stdout, with the thread column cut off
 * (each run has its own tids; the header names it). */
static char *report_out(const char *what, const char *opt, const char *obs)
{
    const char *argv[6] = {shim_build_path("obs-report"), "phases", what, opt, obs, NULL};
    struct run_result res;
    char *text, *p, *q;
    if (what == NULL) {
        argv[2] = opt ? opt : obs;
        argv[3] = opt ? obs : NULL;
        argv[4] = NULL;
    } else if (opt == NULL) {
        argv[3] = obs;
        argv[4] = NULL;
    }
    if (run_program(argv, NULL, 120, &res) != 0)
        bail("cannot run obs-report");
    text = strdup(res.out);
    run_result_free(&res);
    if (text == NULL)
        bail("out of memory");
    {
        /* the thread column's position, from the header line */
        const char *h = text, *eol = strchr(text, '\n');
        int col = -1, k = 0;
        for (; h != NULL && (eol == NULL || h < eol); k++) {
            if (strncmp(h, "thread", 6) == 0 && (h[6] == ',' || h[6] == '\n' || h[6] == '\0'))
                col = k;
            h = strchr(h, ',');
            h = h != NULL && (eol == NULL || h < eol) ? h + 1 : NULL;
        }
        for (p = q = text; *p;) { /* each line without its field col (q never passes p) */
            char *end = strchr(p, '\n');
            size_t len = end ? (size_t)(end - p) : strlen(p), start = 0, j;
            int f = 0, out = 0;
            for (j = 0; j <= len; j++) {
                if (j < len && p[j] != ',')
                    continue;
                if (f != col) {
                    if (out++)
                        *q++ = ',';
                    memmove(q, p + start, j - start);
                    q += j - start;
                }
                f++;
                start = j + 1;
            }
            *q++ = '\n';
            p = end ? end + 1 : p + len;
        }
        *q = '\0';
    }
    return text;
}

/* The phases and the decode steps as OBS_GPU_TIME=events measures them. */
static void same_as_events(const char *label, const struct sim_traced_run *s, const struct sim_traced_run *e)
{
    char *ps = report_out(NULL, "--csv", s->obs), *pe = report_out(NULL, "--csv", e->obs);
    char *ss = report_out("--steps", "--csv", s->obs), *se = report_out("--steps", "--csv", e->obs);
    ok(strcmp(ps, pe) == 0 && strstr(ps, ",gpu,") != NULL,
       "%s: GPU time per phase and generation, TTFT and tokens/s equal OBS_GPU_TIME=events' (phases --csv)", label);
    if (strcmp(ps, pe) != 0) {
        diag_text("steps", ps);
        diag_text("events", pe);
    }
    ok(strcmp(ss, se) == 0 && strchr(ss, '\n') != strrchr(ss, '\n'),
       "%s: GPU time per decode step equals OBS_GPU_TIME=events' (phases --steps --csv)", label);
    if (strcmp(ss, se) != 0) {
        diag_text("steps", ss);
        diag_text("events", se);
    }
    free(ps);
    free(pe);
    free(ss);
    free(se);
}

/* The JSON: a GPU slice per range span, nested on the stream tracks
 * (tests/trace_json_check.py checks the nesting). */
static void check_json(const char *label, const struct sim_traced_run *r)
{
    struct run_result pr;
    unsigned long slices, flows;

    if (r->t == NULL || trace_json_check_counts(r->json, &pr, &slices, &flows) != 0) {
        skip("%s: no python3 to parse the JSON, or no trace", label);
        return;
    }
    ok(pr.exited && pr.status == 0 && slices == r->t->nrange_spans && flows == 0 && slices > 0,
       "%s: the JSON parses, its GPU slices nest, one per range span (%lu for %zu), no flow", label, slices,
       r->t->nrange_spans);
    if (!(pr.exited && pr.status == 0))
        diag_text("trace_json_check", pr.err);
    run_result_free(&pr);
}

static void check_perfetto(const char *label, const struct sim_traced_run *r)
{
    const char *python = getenv("OBS_PYTHON3"), *protoc = getenv("OBS_PROTOC");
    char pf[4300], csvp[4300], checker[4300], protodir[4300];
    const char *argv_pf[] = {shim_build_path("obs-report"), "perfetto", "-o", pf, r->obs, NULL};
    const char *argv_csv[] = {shim_build_path("obs-report"), "csv", "-o", csvp, r->obs, NULL};
    const char *argv[7], *p;
    struct run_result res;
    long long slices = -1;

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
    if ((p = strstr(res.out, "range_slices=")) != NULL)
        slices = strtoll(p + 13, NULL, 10);
    {
        /* Known and not this mode's: a launch that ran a one-time slow path
         * (a kernel name's first launch) begins before its range's BEGIN
         * record, so the checker finds it outside the phase slice (as with
         * OBS_GPU_TIME=events). Any other error fails. */
        const char *line = res.err, *other = NULL;
        while (line != NULL && *line) {
            const char *nl = strchr(line, '\n');
            size_t len = nl ? (size_t)(nl - line) : strlen(line);
            if (strncmp(line, "error: ", 7) == 0 && memmem(line, len, "labelled calls lie in no phase slice", 36) == NULL &&
                other == NULL)
                other = line;
            line = nl ? nl + 1 : NULL;
        }
        ok(res.exited && other == NULL && slices == (long long)r->t->nrange_spans,
           "%s: the .pftrace decodes, its GPU stream tracks hold %lld slices, one per range span (%zu)", label,
           slices, r->t->nrange_spans);
        if (other != NULL)
            diag_text("perfetto_check", res.err);
    }
    run_result_free(&res);
}

static void check_sqlite_html(const char *label, const struct sim_traced_run *r)
{
    char sql[4300], found[4096], html_path[4300], *html;
    const char *argv_x[] = {shim_build_path("obs-report"), "sqlite", "-q", r->obs, sql, NULL};
    const char *argv_html[] = {shim_build_path("obs-report"), "html", "-o", html_path, r->obs, NULL};
    const char *sqlite3 = test_on_path("sqlite3", found, sizeof found);
    struct run_result res;

    snprintf(sql, sizeof sql, "%s/steps.sqlite", test_tmpdir());
    unlink(sql);
    if (sqlite3 == NULL || r->t == NULL) {
        skip("%s: no sqlite3 program (or no trace)", label);
    } else if (run_program(argv_x, NULL, 120, &res) != 0 || !run_exited_with(&res, 0)) {
        run_result_free(&res);
        skip("%s: obs-report sqlite unavailable in this build", label);
    } else {
        const char *argv_q[] = {sqlite3, sql,
                                "SELECT COUNT(*), SUM(rangeId IS NOT NULL), (SELECT value FROM OBS_META WHERE "
                                "name = 'gpu_time' AND source = 'reader') FROM OBS_GPU_RANGES;",
                                NULL};
        char want[128];
        size_t counted = 0, i;
        run_result_free(&res);
        for (i = 0; i < r->t->nrange_spans; i++)
            counted += r->t->range_spans[i].range != OBS_NONE;
        if (run_program(argv_q, NULL, 60, &res) != 0)
            bail("cannot run sqlite3");
        snprintf(want, sizeof want, "%zu|%zu|steps\n", r->t->nrange_spans, counted);
        is_string(want, res.out, "%s: SQLite: OBS_GPU_RANGES has a row per range span, %zu counted for a range",
                  label, counted);
        run_result_free(&res);
    }
    snprintf(html_path, sizeof html_path, "%s/steps.html", test_tmpdir());
    if (run_program(argv_html, NULL, 120, &res) != 0)
        bail("cannot run obs-report html");
    html = test_read_file(html_path, NULL);
    ok(run_exited_with(&res, 0) && html != NULL && strstr(html, "OBS_GPU_TIME=steps") != NULL &&
           strstr(html, " on the GPU: ") != NULL,
       "%s: the HTML page says the phases are on the GPU clock per range, its timeline draws the range spans",
       label);
    free(html);
    run_result_free(&res);
}

/* ---- one program, with and without the shim --------------------------------------------------- */

struct program {
    const char *label;
    const char *argv[12];
    const char *env[4];
    int exact;       /* spans against the log, span by span, by the calls' final labels */
    int tails;       /* the trace relabels a new prompt's input copies: RELABEL spans expected */
    int vs_events;   /* phases and steps as events measures them */
    int untimed_ok;  /* captured launches: ranges with no device work count as missing */
    int reports;     /* check every report */
};

/* The checks check_program makes for p. */
static int program_checks(const struct program *p)
{
    return 4 + p->exact + 2 * p->vs_events + 5 * p->reports;
}

static void check_program(const struct program *p)
{
    struct sim_traced_run plain, steps, events;
    struct ground g;
    struct span_result sr;
    char tag[128], label[160];
    unsigned long marks, pairs;

    snprintf(tag, sizeof tag, "%s-plain", p->label);
    for (char *c = tag; *c; c++)
        if (*c == ' ' || *c == '/')
            *c = '_';
    run_tagged(tag, p->argv, PLAIN, p->env, &plain);
    tag[strlen(tag) - 6] = '\0';
    strcat(tag, "-steps");
    run_tagged(tag, p->argv, STEPS, p->env, &steps);
    snprintf(label, sizeof label, "%s", p->label);

    ok(run_exited_with(&plain.res, 0) && run_exited_with(&steps.res, 0) &&
           strcmp(plain.res.out, steps.res.out) == 0 && warning_lines(steps.res.err) == 0,
       "%s: exit 0 and the same stdout with OBS_GPU_TIME=steps as without the shim, no warning", label);
    if (steps.t == NULL) {
        skip_block(program_checks(p) - 1, "%s: no trace", label);
        sim_traced_run_free(&plain);
        sim_traced_run_free(&steps);
        return;
    }
    marks = (unsigned long)meta_u(steps.t, "gpu_time_steps_marks");
    pairs = (unsigned long)meta_u(steps.t, "gpu_time_steps_pairs");
    ok((steps.t->flags & OBS_FILE_GPU_STEPS) && !(steps.t->flags & OBS_FILE_GPU_TIME) && steps.t->ngpu == 0 &&
           strcmp(obs_trace_meta(steps.t, "gpu_time") ? obs_trace_meta(steps.t, "gpu_time") : "", "steps") == 0 &&
           steps.t->nrange_spans == pairs && pairs == meta_u(steps.t, "gpu_time_steps_spans") &&
           meta_u(steps.t, "gpu_time_steps_missing") == 0 && steps.t->orphan_range_spans == 0 &&
           steps.t->records_lost == 0,
       "%s: header flag and meta gpu_time=steps; %zu range spans, as many as pairs queued and resolved (%lu), none "
       "missing at exit, orphaned or lost",
       label, steps.t->nrange_spans, pairs);
    ok(p->untimed_ok ? steps.t->missing_range_spans <= meta_u(steps.t, "gpu_time_steps_untimed_capturing")
                     : steps.t->missing_range_spans == 0,
       "%s: every (range, stream) with device work has its span (%llu without: %s)", label,
       (unsigned long long)steps.t->missing_range_spans,
       p->untimed_ok ? "their launches went into a graph being captured" : "none expected");
    ground_read(steps.log, &g);
    {
        unsigned long syncs = host_syncs(steps.t), streams = (unsigned long)distinct_streams(steps.t);
        unsigned long launches = device_calls(steps.t);
        /* the log's event records: one reference per device (one here) and the marks */
        ok(g.event_records == marks + 1 && marks <= 2 * pairs + syncs * streams,
           "%s: the shim recorded %lu events (%lu in the log, one the clock's reference): at most a begin and an end "
           "for each of %lu range pairs and one per stream at each of %lu host syncs (%lu device calls)",
           label, marks, g.event_records, pairs, syncs, launches);
    }
    if (p->exact) {
        /* The new prompt's input copies, made while the last step's range
         * is still open, are relabelled PREFILL after the fact: the shim
         * gives them a span of their own and ends the step's before them. */
        spans_against_truth(steps.t, &g, &sr);
        ok(sr.checked > 0 && sr.wrong == 0 && (p->tails ? sr.tails > 0 : relabel_ranges(steps.t) == 0),
           "%s: span by span, %lu range spans (%lu of them RELABELs': %zu in the trace) equal the first start and "
           "last end of the device operations of the calls that count for them by their final labels (one clock "
           "offset for the run), none counted for another range or for none",
           label, sr.checked, sr.tails, relabel_ranges(steps.t));
    }
    free(g.calls);
    if (p->vs_events) {
        tag[strlen(tag) - 6] = '\0';
        strcat(tag, "-events");
        run_tagged(tag, p->argv, EVENTS, p->env, &events);
        if (events.t == NULL)
            skip_block(2, "%s: no events trace", label);
        else
            same_as_events(label, &steps, &events);
        sim_traced_run_free(&events);
    }
    if (p->reports) {
        char *summary;
        const char *argv_s[] = {shim_build_path("obs-report"), "summary", steps.obs, NULL};
        struct run_result res;
        if (run_program(argv_s, NULL, 120, &res) != 0)
            bail("cannot run obs-report summary");
        summary = res.out;
        ok(strstr(summary, "GPU time: steps (an event pair per phase range and stream") != NULL &&
               strstr(summary, "Phases (GPU time per phase range and stream (OBS_GPU_TIME=steps)") != NULL &&
               strstr(summary, "Kernels (host API time: OBS_GPU_TIME=steps times phase ranges") != NULL,
           "%s: the summary says GPU time: steps, its phases on the GPU clock, its kernels on the host's", label);
        run_result_free(&res);
        check_json(label, &steps);
        check_perfetto(label, &steps);
        check_sqlite_html(label, &steps);
    }
    sim_traced_run_free(&plain);
    sim_traced_run_free(&steps);
}

/* Marks do not grow with the launches of a step: ten times the layers,
 * the same events recorded. */
static void check_not_per_launch(void)
{
    char layers[2][8] = {"3", "30"};
    unsigned long long marks[2] = {0, 0}, launches[2] = {0, 0};
    int i;
    for (i = 0; i < 2; i++) {
        const char *argv[] = {shim_build_path("tests/apps/steps_app"), "--streams", "2", "--layers", layers[i], NULL};
        /* no KV_GATHER: it would make a range per layer (its kernels alternate with the decode's) */
        const char *env[] = {"OBS_PHASES=PREFILL=prefill_*;DECODE=embed_*,decode_*,kv_*,sample_*", STEPS_APP_STEP,
                             NULL};
        char tag[32];
        struct sim_traced_run r;
        snprintf(tag, sizeof tag, "layers-%s", layers[i]);
        run_tagged(tag, argv, STEPS, env, &r);
        marks[i] = meta_u(r.t, "gpu_time_steps_marks");
        launches[i] = r.t ? device_calls(r.t) : 0;
        sim_traced_run_free(&r);
    }
    ok(marks[0] > 0 && marks[0] == marks[1] && launches[1] > 5 * launches[0],
       "the same %llu events recorded for %llu and %llu device calls (3 and 30 layers a step, the same ranges): "
       "per range, not per launch",
       marks[0], launches[0], launches[1]);
}

/* ---- fork, signal, the reference workload --------------------------------------------------- */

static void check_fork(void)
{
    const char *argv[] = {shim_build_path("tests/apps/steps_app"), "--fork", "--gens", "3", "--streams", "2", NULL};
    const char *env[] = {STEPS_APP_PHASES, STEPS_APP_STEP, "OBS_OUTPUT_PID=1", NULL};
    char out_env[4300], log_env[4300], dir[4300], found[4300];
    const char *full_env[10];
    struct run_result res;
    struct ground g;
    size_t n, i;
    unsigned long checked = 0, wrong = 0, spans = 0;

    snprintf(dir, sizeof dir, "%s/fork", test_tmpdir());
    mkdir(dir, 0700);
    dir_clear(dir);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/run-%%p", dir);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s/sim.log", dir);
    full_env[0] = sim_library_path_env();
    full_env[1] = out_env;
    full_env[2] = log_env;
    full_env[3] = "OBS_SIM_LOG_OPS=1";
    full_env[4] = "OBS_SIM_LOG_TID=1";
    full_env[5] = "OBS_GPU_TIME=steps";
    full_env[6] = "OBS_TRACE=none";
    full_env[7] = env[0];
    full_env[8] = env[1];
    full_env[9] = NULL;
    shim_run(argv, full_env, 1, 120, &res);
    ok(run_exited_with(&res, 0) && strstr(res.out, "child exit 0") != NULL,
       "fork: parent and child exit 0");
    n = dir_count_suffix(dir, ".obs", found, sizeof found);
    ok(n == 2, "fork: two traces, one per process (%zu)", n);
    snprintf(log_env, sizeof log_env, "%s/sim.log", dir);
    ground_read(log_env, &g);
    for (i = 0; i < 2 && n == 2; i++) {
        char path[4400];
        struct obs_trace *t;
        struct span_result sr;
        /* each trace: its own threads' calls, matched in the shared log by thread id */
        if (i == 1) {
            DIR *d = opendir(dir);
            struct dirent *e;
            while (d && (e = readdir(d)) != NULL)
                if (strstr(e->d_name, ".obs") && strcmp(strrchr(found, '/') + 1, e->d_name) != 0)
                    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            if (d)
                closedir(d);
        } else {
            snprintf(path, sizeof path, "%s", found);
        }
        t = shim_trace_open(path);
        if (t == NULL)
            continue;
        spans_against_truth(t, &g, &sr);
        checked += sr.checked;
        wrong += sr.wrong;
        spans += t->nrange_spans;
        obs_trace_free(t);
    }
    ok(checked > 0 && checked == spans && wrong == 0,
       "fork: in both processes, %lu range spans equal their calls' device operations in the log", checked);
    free(g.calls);
    run_result_free(&res);
}

static void check_signal(void)
{
    const char *argv[] = {shim_build_path("tests/apps/steps_app"), "--signal", "--streams", "2", NULL};
    const char *env[] = {STEPS_APP_PHASES, STEPS_APP_STEP, NULL};
    struct sim_traced_run plain, steps;
    struct ground g;
    struct span_result sr;

    run_tagged("signal-plain", argv, PLAIN, env, &plain);
    run_tagged("signal-steps", argv, STEPS, env, &steps);
    ok(plain.res.signal == SIGTERM && steps.res.signal == SIGTERM && strcmp(plain.res.out, steps.res.out) == 0,
       "signal: the app dies of SIGTERM with the same output, as without the shim");
    if (steps.t == NULL) {
        skip_block(2, "signal: no trace");
    } else {
        const char *end = obs_trace_meta(steps.t, "end");
        ground_read(steps.log, &g);
        spans_against_truth(steps.t, &g, &sr);
        ok(end != NULL && strcmp(end, "SIGTERM") == 0 && sr.checked > 0 && sr.wrong == 0,
           "signal: the trace is closed (end=SIGTERM); the %lu spans resolved before it equal the log", sr.checked);
        ok(steps.t->missing_range_spans > 0,
           "signal: the ranges of the generation it cut short are counted missing (%llu), none left silently",
           (unsigned long long)steps.t->missing_range_spans);
        free(g.calls);
    }
    sim_traced_run_free(&plain);
    sim_traced_run_free(&steps);
}

/* The reference workload: shape (a), whose learning window the trace
 * relabels: the spans of those live ranges count for their calls' final
 * labels, and the summary says how many. */
static void check_workload(void)
{
    const char *why = NULL;
    const char *path = workload_path(&workload_bins[0], &why);
    const char *argv[] = {path, NULL};
    struct sim_traced_run steps, events;

    if (path == NULL) {
        skip_block(3, "obs_cuda: %s", why);
        return;
    }
    run_tagged("obs_cuda-steps", argv, STEPS, NULL, &steps);
    run_tagged("obs_cuda-events", argv, EVENTS, NULL, &events);
    if (steps.t == NULL || events.t == NULL) {
        skip_block(3, "obs_cuda: no trace");
    } else {
        size_t i, relabelled = 0, several = 0;
        char *ps = report_out(NULL, "--csv", steps.obs), *pe = report_out(NULL, "--csv", events.obs);
        char *ls, *le;
        const char *argv_s[] = {shim_build_path("obs-report"), "summary", steps.obs, NULL};
        struct run_result res;
        for (i = 0; i < steps.t->nrange_spans; i++) {
            relabelled += (steps.t->range_spans[i].flags & OBS_RANGE_SPAN_RELABELLED) != 0;
            several += (steps.t->range_spans[i].flags & OBS_RANGE_SPAN_MIXED) != 0;
        }
        ok(relabel_ranges(steps.t) > 0 && relabelled + several > 0 && steps.t->missing_range_spans == 0,
           "obs_cuda: the trace relabels its learning window; %zu live ranges' spans counted for another label, %zu "
           "for none (relabelled into several)",
           relabelled, several);
        if (run_program(argv_s, NULL, 120, &res) != 0)
            bail("cannot run obs-report summary");
        ok(strstr(res.out, "counted by the trace's final labels, which differ from the live ranges for") != NULL,
           "obs_cuda: the summary says the spans are counted by the final labels where those differ");
        run_result_free(&res);
        /* the generations after the learning window: as events measures them */
        ls = strchr(ps, '\n');
        le = strchr(pe, '\n');
        for (i = 0; ls && le && i < 2; i++) { /* header, the warm-up and the first generation */
            ls = strchr(ls + 1, '\n');
            le = strchr(le + 1, '\n');
        }
        ok(ls != NULL && le != NULL && strcmp(ls, le) == 0 && strlen(ls) > 10,
           "obs_cuda: every generation after the learning window has the TTFT, tokens/s and spans of "
           "OBS_GPU_TIME=events");
        if (ls == NULL || le == NULL || strcmp(ls, le) != 0) {
            diag_text("steps", ps);
            diag_text("events", pe);
        }
        free(ps);
        free(pe);
    }
    sim_traced_run_free(&steps);
    sim_traced_run_free(&events);
}

int main(void)
{
    char scn[5][4096], replay[4096], replay_hip[4096], app[4096];
    size_t i;

    /* copied: shim_build_path's buffers are reused */
    snprintf(replay, sizeof replay, "%s", shim_build_path("tests/apps/llm_replay"));
    snprintf(replay_hip, sizeof replay_hip, "%s", shim_build_path("tests/apps/llm_replay_hip"));
    snprintf(app, sizeof app, "%s", shim_build_path("tests/apps/steps_app"));

    snprintf(scn[0], sizeof scn[0], "%s/tests/scenarios/hf_eager.scn", test_srcdir());
    snprintf(scn[1], sizeof scn[1], "%s/tests/scenarios/llamacpp.scn", test_srcdir());
    snprintf(scn[2], sizeof scn[2], "%s/tests/scenarios/vllm_graphs.scn", test_srcdir());
    snprintf(scn[3], sizeof scn[3], "%s/tests/scenarios/chunked_prefill.scn", test_srcdir());
    {
        const struct program progs[] = {
            {"hf_eager", {replay, scn[0], NULL}, {NULL}, 1, 1, 1, 0, 1},
            {"llamacpp", {replay, scn[1], NULL}, {NULL}, 1, 1, 1, 0, 0},
            {"vllm_graphs", {replay, scn[2], NULL}, {NULL}, 0, 0, 1, 1, 1},
            {"chunked_prefill", {replay, scn[3], NULL}, {NULL}, 1, 1, 1, 0, 0},
            {"hf_eager, 3 threads", {replay, "--threads", "3", scn[0], NULL}, {NULL}, 1, 1, 1, 0, 0},
            {"HIP hf_eager", {replay_hip, scn[0], NULL}, {NULL}, 0, 0, 1, 0, 0},
            {"3 streams per range", {app, "--streams", "3", NULL}, {STEPS_APP_PHASES, STEPS_APP_STEP, NULL}, 1, 0,
             1, 0, 1},
            {"a capture inside a step", {app, "--streams", "2", "--capture", NULL},
             {STEPS_APP_PHASES, STEPS_APP_STEP, NULL}, 1, 0, 1, 1, 0},
            {"synchronous token copies", {app, "--sync-copy", NULL}, {STEPS_APP_PHASES, STEPS_APP_STEP, NULL}, 1, 0,
             1, 0, 0},
            {"4 threads, 2 streams each", {app, "--threads", "4", "--streams", "2", "--gens", "3", NULL},
             {STEPS_APP_PHASES, STEPS_APP_STEP, NULL}, 1, 0, 1, 0, 0},
            {"no sync before exit", {app, "--no-final-sync", "--streams", "2", NULL},
             {STEPS_APP_PHASES, STEPS_APP_STEP, NULL}, 1, 0, 1, 0, 0},
        };
        int checks = 1 + 3 + 3 + 3; /* per launch, fork, signal, the reference workload */
        for (i = 0; i < sizeof progs / sizeof progs[0]; i++)
            checks += program_checks(&progs[i]);
        plan(checks);
        for (i = 0; i < sizeof progs / sizeof progs[0]; i++)
            check_program(&progs[i]);
    }
    check_not_per_launch();
    check_fork();
    check_signal();
    check_workload();
    return 0;
}
