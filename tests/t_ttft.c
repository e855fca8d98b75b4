/* TTFT where the prefill reads no token (docs/phases-report.md, "TTFT
 * where the prefill reads no token"): tests/apps/llm_replay on two
 * scenarios whose prompts' tokens stay on the device, under the shim with
 * the rules their files give, on the host clock and with
 * OBS_GPU_TIME=events and steps (the simulator's virtual device clock,
 * deterministic: OBS_SIM_SYNC_WAIT off):
 *   - hf_generate_no_streamer: Hugging Face generate() with no streamer,
 *     each forward ending in the stopping check's 1-byte flag read and
 *     sync, flags read before the prompt's forward, the next forward's
 *     inputs copied after the stopping check (in the PREFILL);
 *   - device_tokens: a loop that keeps its tokens on the device and reads
 *     them once at the end, its prompt in chunks: no sync between the
 *     prompt's forward and the steps.
 * First the premise: every launch has the replay's generation, phase and
 * step in the trace. Then, per (thread, generation), by structure, never
 * against a clock read elsewhere: obs-report phases --csv gives ttft_to
 * and a TTFT equal (to its rounding, 1 ns) to the span between the calls
 * the replay's own marks name in the same trace: the begin of the
 * prefill's first call (mark F) and
 *   host time: the host end of the stopping check's sync (the last call
 *     at or before mark R, taken after it); with no sync between the
 *     prompt's forward and the steps, no TTFT (and the summaries say why);
 *   events: the device end of the last timed call at or before R (the
 *     stopping check's flag copy; the forward's last kernel);
 *   steps: the envelope of the PREFILL's range spans (the device begin of
 *     its first launch, the end of its span), at or after events' figure
 *     (the next inputs' copy made in the PREFILL after the stopping check
 *     counts in its span), equal to it where nothing follows the forward
 *     in the PREFILL.
 * The exit summary's TTFT line, obs-report summary's generations table
 * (csv) and its phases table say the word too; a loop that reads its
 * tokens (tiny_loop, automatic mode) keeps "token-read". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phase_compare.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"

#define STEP_RULE "OBS_STEP=indexSelectSmallIndex"

struct scn_case {
    const char *file;  /* under tests/scenarios, without .scn */
    const char *rules; /* OBS_PHASES=... */
    /* a sync or a copy from the device ends the prompt's forward before the
     * steps' launches (host TTFT defined) */
    int host_bounded;
    /* the PREFILL holds nothing after its forward on the device (steps =
     * events), else work after it (steps >= events) */
    int steps_equal_events;
};

static const struct scn_case cases[] = {
    {"hf_generate_no_streamer", "OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;DECODE=*", 1, 0},
    {"device_tokens", "OBS_PHASES=PREFILL=indexSelectLargeIndex;DECODE=*", 0, 1},
};

static char replay[4096], report[4096];

/* ---- obs-report phases --csv, by column name ------------------------------------ */

struct gen_row {
    long tid, gen;
    int defined;
    double ttft_ms;
    char ttft_to[40], first_token[12], time_base[8];
};

static const char *field_of(char *const *f, int nf, int col)
{
    return col >= 0 && col < nf ? f[col] : "";
}

/* The rows of `obs-report phases --csv FILE`; *n rows, malloc'ed. */
static struct gen_row *phases_rows(const char *obs, size_t *n)
{
    const char *argv[] = {report, "phases", "--csv", obs, NULL};
    struct run_result r;
    struct gen_row *rows = NULL;
    char *line, *save = NULL;
    int c_gen = -1, c_ttft = -1, c_thread = -1, c_to = -1, c_first = -1, c_base = -1, header = 1;

    *n = 0;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    for (line = strtok_r(r.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[32], *p = line;
        int nf = 0, k;
        while (nf < 32) {
            f[nf++] = p;
            p = strchr(p, ',');
            if (p == NULL)
                break;
            *p++ = '\0';
        }
        if (header) {
            for (k = 0; k < nf; k++) {
                c_gen = strcmp(f[k], "generation") == 0 ? k : c_gen;
                c_ttft = strcmp(f[k], "ttft_ms") == 0 ? k : c_ttft;
                c_thread = strcmp(f[k], "thread") == 0 ? k : c_thread;
                c_to = strcmp(f[k], "ttft_to") == 0 ? k : c_to;
                c_first = strcmp(f[k], "first_token") == 0 ? k : c_first;
                c_base = strcmp(f[k], "time_base") == 0 ? k : c_base;
            }
            header = 0;
            continue;
        }
        rows = realloc(rows, (*n + 1) * sizeof *rows);
        if (rows == NULL)
            bail("out of memory");
        memset(&rows[*n], 0, sizeof rows[*n]);
        rows[*n].gen = strtol(field_of(f, nf, c_gen), NULL, 10);
        rows[*n].tid = strtol(field_of(f, nf, c_thread), NULL, 10);
        rows[*n].defined = *field_of(f, nf, c_ttft) != '\0';
        rows[*n].ttft_ms = rows[*n].defined ? strtod(field_of(f, nf, c_ttft), NULL) : 0.0;
        snprintf(rows[*n].ttft_to, sizeof rows[*n].ttft_to, "%s", field_of(f, nf, c_to));
        snprintf(rows[*n].first_token, sizeof rows[*n].first_token, "%s", field_of(f, nf, c_first));
        snprintf(rows[*n].time_base, sizeof rows[*n].time_base, "%s", field_of(f, nf, c_base));
        (*n)++;
    }
    if (c_to < 0)
        diag("%s: no ttft_to column in phases --csv", obs);
    run_result_free(&r);
    return rows;
}

static const struct gen_row *row_of(const struct gen_row *rows, size_t n, long tid, long gen)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (rows[i].tid == tid && rows[i].gen == gen)
            return &rows[i];
    return NULL;
}

/* Equal to the report's rounding: 6 decimals of a millisecond. */
static int same_ms(double want_ns, double seen_ms)
{
    double d = seen_ms * 1e6 - want_ns;
    return d <= 0.5 + 1e-9 * want_ns && d >= -0.5 - 1e-9 * want_ns;
}

/* ---- the calls the replay's marks name ------------------------------------------ */

static uint32_t thread_index(const struct obs_trace *t, long tid)
{
    uint32_t i;
    for (i = 0; i < t->nthreads; i++)
        if ((long)t->threads[i].tid == tid)
            return i;
    return UINT32_MAX;
}

/* The first call of thread th that began at or after mark (F: the
 * prefill's first call). */
static const struct obs_call *first_from(const struct obs_trace *t, uint32_t th, unsigned long long mark)
{
    size_t i;
    for (i = 0; mark != 0 && i < t->ncalls; i++)
        if (t->calls[i].thread == th && t->calls[i].host_begin >= mark)
            return &t->calls[i];
    return NULL;
}

/* The last call of thread th that began at or before mark (R); timed: the
 * last such with a GPU span. */
static const struct obs_call *last_until(const struct obs_trace *t, uint32_t th, unsigned long long mark, int timed)
{
    const struct obs_call *last = NULL;
    size_t i;
    for (i = 0; mark != 0 && i < t->ncalls && t->calls[i].host_begin <= mark; i++)
        if (t->calls[i].thread == th && (!timed || obs_call_gpu(t, &t->calls[i]) != NULL))
            last = &t->calls[i];
    return last;
}

/* OBS_GPU_TIME=steps: the envelope of the spans counted for the
 * generation's PREFILL range(s) on thread th; 0 when none. */
static uint64_t prefill_spans(const struct obs_trace *t, uint32_t th, long gen, uint64_t *end)
{
    uint64_t begin = UINT64_MAX;
    size_t i;
    *end = 0;
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *x = &t->range_spans[i];
        const struct obs_phase *p = x->range != OBS_NONE && x->range < t->nphases ? &t->phases[x->range] : NULL;
        if (p == NULL || x->thread != th || (long)p->generation != gen || strcmp(p->phase, "PREFILL") != 0)
            continue;
        if (x->begin < begin)
            begin = x->begin;
        if (x->end > *end)
            *end = x->end;
    }
    return begin == UINT64_MAX ? 0 : begin;
}

/* ---- one scenario, three clocks --------------------------------------------------- */

enum clock_mode { HOST, EVENTS, STEPS };
static const char *const mode_name[] = {"off", "events", "steps"};

struct traced {
    struct sim_traced_run run;
    struct pc_run truth;
    struct gen_row *rows;
    size_t nrows;
};

static void run_case(const struct scn_case *c, enum clock_mode mode, unsigned threads, struct traced *out)
{
    char scn[4200], tag[128], nthreads[16];
    const char *argv[6];
    /* the truth's log in phase_compare's form: no line per device operation */
    const char *env[] = {c->rules, STEP_RULE, "OBS_CLOCK=monotonic", "OBS_SIM_LOG_TID=1", "OBS_SIM_LOG_OPS=0", NULL};
    int k = 0;
    snprintf(scn, sizeof scn, "%s/tests/scenarios/%s.scn", test_srcdir(), c->file);
    snprintf(tag, sizeof tag, "%s-%s-%u", c->file, mode_name[mode], threads);
    snprintf(nthreads, sizeof nthreads, "%u", threads);
    argv[k++] = replay;
    argv[k++] = "--threads";
    argv[k++] = nthreads;
    argv[k++] = scn;
    argv[k] = NULL;
    memset(out, 0, sizeof *out);
    sim_traced_run_exec(tag, argv, mode_name[mode], env, &out->run);
    pc_read_log(out->run.log, &out->truth);
    if (out->run.t != NULL)
        out->rows = phases_rows(out->run.obs, &out->nrows);
}

static void traced_free(struct traced *x)
{
    free(x->rows);
    pc_run_free(&x->truth);
    sim_traced_run_free(&x->run);
}

/* The premise: the rules label every launch as the replay's truth does. */
static void check_labels(const char *label, struct traced *x)
{
    size_t i, same = 0, mismatch = 0;
    pc_trace_labels(x->run.t, &x->truth, &mismatch);
    for (i = 0; i < x->truth.n; i++)
        same += x->truth.l[i].in_trace && pc_same(&x->truth.l[i].truth, &x->truth.l[i].trace, 1);
    ok(x->truth.n > 0 && same == x->truth.n && mismatch == 0,
       "%s: every launch has the replay's generation, phase and step in the trace (%zu of %zu)", label, same,
       x->truth.n);
}

/* Each generation's TTFT against the named calls; the figures by
 * (thread, generation) in ns for the comparison of the clocks (NAN:
 * undefined). Returns the number of generations checked. */
static size_t check_generations(const char *label, const struct scn_case *c, enum clock_mode mode,
                                const struct traced *x, double *ttft_ns, size_t cap)
{
    const struct obs_trace *t = x->run.t;
    const char *want_to = mode == HOST ? "forward-end (next delimiter)" : "forward-end (device)";
    size_t i, right = 0, words = 0, n = x->truth.ntiming < cap ? x->truth.ntiming : cap;
    for (i = 0; i < n; i++) {
        const struct pc_timing *g = &x->truth.timing[i];
        uint32_t th = thread_index(t, g->tid);
        const struct obs_call *first = first_from(t, th, g->mark_prefill);
        const struct obs_call *end = last_until(t, th, g->mark_prefill_read, mode == EVENTS);
        const struct gen_row *r = row_of(x->rows, x->nrows, g->tid, g->gen);
        double want = -1;
        ttft_ns[i] = -1;
        if (r != NULL && r->defined)
            ttft_ns[i] = r->ttft_ms * 1e6;
        if (mode == HOST && c->host_bounded && first != NULL && end != NULL)
            want = (double)(end->host_end - first->host_begin);
        else if (mode == EVENTS && first != NULL && end != NULL && obs_call_gpu(t, first) != NULL)
            want = (double)(obs_call_gpu(t, end)->end - obs_call_gpu(t, first)->begin);
        else if (mode == STEPS) {
            uint64_t e, b = prefill_spans(t, th, g->gen, &e);
            want = b != 0 && e > b ? (double)(e - b) : -1;
        }
        words += r != NULL && strcmp(r->ttft_to, want_to) == 0 && strcmp(r->first_token, "step0") == 0;
        if (r != NULL && (want < 0 ? !r->defined : r->defined && same_ms(want, r->ttft_ms)))
            right++;
        else
            diag("%s: thread %ld generation %ld: TTFT from the named calls %.0f ns, obs-report %s ms (%s)", label,
                 g->tid, g->gen, want, r == NULL ? "no row" : r->defined ? "defined" : "empty",
                 r == NULL ? "" : r->ttft_to);
        if (r != NULL && r->defined)
            diag("FIGURES ttft %s thread %ld generation %ld: %.6f ms to %s; the named calls: %.6f ms", label, g->tid,
                 g->gen, r->ttft_ms, r->ttft_to, want / 1e6);
    }
    ok(n > 0 && words == n && x->nrows == n, "%s: ttft_to '%s' (first_token step0) in each of the %zu generations",
       label, want_to, n);
    if (mode == HOST && !c->host_bounded)
        ok(n > 0 && right == n,
           "%s: no TTFT in the %zu generations: no sync ends the prompt's forward before the steps' launches", label,
           n);
    else
        ok(n > 0 && right == n,
           "%s: each generation's TTFT = %s - the prefill's first call's %s begin (%zu of %zu)", label,
           mode == HOST     ? "the host end of the stopping check's sync"
           : mode == EVENTS ? "the device end of the last launch of the forward's iteration (its stopping check's "
                              "flag copy, or its last kernel)"
                            : "the end of the PREFILL's range span",
           mode == HOST ? "host" : "device", right, n);
    return n;
}

/* The exit summary's TTFT line and obs-report summary's tables. */
static void check_summaries(const char *label, const struct scn_case *c, enum clock_mode mode,
                            const struct traced *x)
{
    const char *word = mode == HOST ? "ttft_to forward-end (next delimiter)" : "ttft_to forward-end (device)";
    const char *argv[] = {report, "summary", "--format", "csv", x->run.obs, NULL};
    struct run_result r;
    const char *line = strstr(x->run.res.err, " TTFT (ms): ");
    size_t len = line ? strcspn(line, "\n") : 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line ? line : "");
    if (mode == HOST && !c->host_bounded)
        ok(strstr(buf, " TTFT (ms): n/a (no host sync or copy from the device ends the prompt's forward") != NULL &&
               strstr(buf, word) != NULL,
           "%s: the exit summary's TTFT line says n/a, why, and where TTFT would end: %s", label, buf);
    else
        ok(strstr(buf, " TTFT (ms): best ") != NULL && strstr(buf, word) != NULL,
           "%s: the exit summary's TTFT line names the definition: %s", label, buf);
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    snprintf(buf, sizeof buf, ",%s\n", mode == HOST ? "forward-end (next delimiter)" : "forward-end (device)");
    ok(r.exited && r.status == 0 && strstr(r.out, ",ttft_to\n") != NULL && strstr(r.out, buf) != NULL,
       "%s: obs-report summary --format csv: the generations table ends with ttft_to", label);
    run_result_free(&r);
}

static void check_scenario(const struct scn_case *c)
{
    static const enum clock_mode modes[] = {HOST, EVENTS, STEPS};
    double figures[3][64];
    size_t counted[3] = {0, 0, 0}, m, i;
    for (m = 0; m < 3; m++) {
        struct traced x;
        char label[160];
        snprintf(label, sizeof label, "%s, %s", c->file,
                 modes[m] == HOST ? "host time" : modes[m] == EVENTS ? "OBS_GPU_TIME=events" : "OBS_GPU_TIME=steps");
        run_case(c, modes[m], 1, &x);
        ok(x.run.res.exited && x.run.res.status == 0 && x.run.t != NULL, "%s: the replay exits 0, with a trace",
           label);
        if (x.run.t == NULL) {
            skip_block(5, "%s: no trace", label);
            traced_free(&x);
            continue;
        }
        check_labels(label, &x);
        counted[m] = check_generations(label, c, modes[m], &x, figures[m], 64);
        check_summaries(label, c, modes[m], &x);
        traced_free(&x);
    }
    /* the same program on the same virtual device clock */
    {
        size_t n = counted[EVENTS] < counted[STEPS] ? counted[EVENTS] : counted[STEPS], good = 0;
        for (i = 0; i < n; i++)
            good += figures[EVENTS][i] > 0 &&
                    (c->steps_equal_events ? figures[STEPS][i] == figures[EVENTS][i]
                                           : figures[STEPS][i] >= figures[EVENTS][i]);
        ok(n > 0 && good == n && counted[EVENTS] == counted[STEPS],
           "%s: OBS_GPU_TIME=steps' TTFT %s events' in each generation (%zu of %zu)", c->file,
           c->steps_equal_events ? "equals" : "is at least", good, n);
    }
}

/* Two threads, host time: per thread, as with one. */
static void check_threads(const struct scn_case *c)
{
    struct traced x;
    double figures[64];
    char label[160];
    snprintf(label, sizeof label, "%s, host time, 2 threads", c->file);
    run_case(c, HOST, 2, &x);
    ok(x.run.res.exited && x.run.res.status == 0 && x.run.t != NULL && x.run.t->nthreads >= 2,
       "%s: the replay exits 0, with a trace of two threads", label);
    if (x.run.t == NULL) {
        skip_block(3, "%s: no trace", label);
    } else {
        check_labels(label, &x);
        check_generations(label, c, HOST, &x, figures, 64);
    }
    traced_free(&x);
}

/* A loop that reads its tokens (automatic mode): TTFT to its token read, as before. */
static void check_token_read(void)
{
    struct traced x;
    struct tc {
        const char *file;
    } t = {"tiny_loop"};
    char scn[4200];
    const char *argv[] = {replay, scn, NULL};
    const char *env[] = {"OBS_CLOCK=monotonic", "OBS_SIM_LOG_TID=1", NULL};
    size_t i, words = 0;
    snprintf(scn, sizeof scn, "%s/tests/scenarios/%s.scn", test_srcdir(), t.file);
    memset(&x, 0, sizeof x);
    sim_traced_run_exec("tiny_loop-host", argv, "off", env, &x.run);
    if (x.run.t != NULL)
        x.rows = phases_rows(x.run.obs, &x.nrows);
    for (i = 0; i < x.nrows; i++)
        words += x.rows[i].defined && strcmp(x.rows[i].ttft_to, "token-read") == 0 &&
                 strcmp(x.rows[i].first_token, "prefill") == 0;
    ok(x.nrows > 0 && words == x.nrows,
       "tiny_loop (reads its tokens): ttft_to token-read, first_token prefill in each of the %zu generations",
       x.nrows);
    ok(x.run.res.err != NULL && strstr(x.run.res.err, "from the prompt's first call to the end of its token read") &&
           strstr(x.run.res.err, "forward-end") == NULL,
       "tiny_loop: the exit summary's TTFT line names the token read only");
    free(x.rows);
    sim_traced_run_free(&x.run);
}

int main(void)
{
    size_t i;
    snprintf(replay, sizeof replay, "%s", shim_build_path("tests/apps/llm_replay"));
    snprintf(report, sizeof report, "%s", shim_build_path("obs-report"));
    plan(2 * (3 * 6 + 1) + 2 * 4 + 2);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_scenario(&cases[i]);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_threads(&cases[i]);
    check_token_read();
    return 0;
}
