/* The scenario corpus (tests/scenarios/NAME.scn, docs/scenarios.md) under the
 * shim in automatic mode with default settings: every launch's generation,
 * phase and step in the trace and in the live ranges against the replay's
 * own ground truth, and the TTFT / tokens/s of `obs-report phases` against
 * the spans of the calls the truth names, in the same trace (OBS_SIM_SYNC_WAIT=1,
 * so that host time follows the simulated device).
 *
 * Each case runs tests/apps/llm_replay (CUDA runtime ABI) or llm_replay_hip
 * (HIP ABI) on one scenario with 1 or several host threads, once without
 * the shim (its stdout and exit status are the reference) and once under
 * it, with OBS_SIM_LOG_TID=1 so that the log's lines carry their thread.
 * Launches made while a stream is captured (truth GRAPH_CAPTURE) are no
 * executions: they are left out of the scores and counted. Per case one
 * line:
 *   # FIGURES scenario=NAME threads=T launches=N trace_ok=X (P%) live_ok=Y (Q%) captured_excluded=C
 * and the checks trace >= 99.9 %, live >= 99.9 %; then, against the
 * replay's LAYER/k marks around each layer (docs/layers.md),
 *   # FIGURES scenario=NAME threads=T layers: launches=N in_layers=L trace_ok=X (P%) live_in_layer=Y (Q%) live_wrong=W
 * and the checks: every launch's layer in the trace, no wrong live layer; then
 *   # FIGURES scenario=NAME threads=T timing: ...
 * and each generation's TTFT, tokens/s and step count equal (to the
 * report's rounding) to those computed from the trace's own times of the
 * calls the replay's marks name (the prefill's first launch, step 0's
 * token read, the last step's read). No check compares the shim's clock
 * with a clock read elsewhere, so host noise cannot fail it; the replay's
 * own stopwatch figures are printed beside them for the reader.
 *
 * Scenarios the phase engine does not get right yet are listed in
 * expected_failures[] (and timing_expected_failures[]): their failing checks
 * are TAP TODO (XFAIL), so make check stays green while the engine is being
 * rewritten; a listed check that passes is a plain ok, and the test says
 * "listed as expected to fail but passes": take it off the list once it
 * passes for good. OBS_SCENARIOS_FULL=1 runs the full sizes
 * (llm_replay --full; make check-scenarios-full). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gz_text.h"
#include "phase_compare.h"
#include "scenario.h"
#include "scenario_fuzz.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"


#define MIN_OK_PERCENT 100.0 /* every launch (percent() of n out of n is exactly 100) */

/* ---- the expected failures: empty (every scenario passes); a new scenario the engine does not
 * get right yet goes here until it does ---------------------------------------------------- */

/* "NAME" (every thread count) or "NAME threads=T"; NAME as in FIGURES
 * (the file's name, "-hip" added for the HIP build). */
static const char *const expected_failures[] = {
    NULL,
};

static const char *const timing_expected_failures[] = {
    NULL,
};

/* ---- the cases ----------------------------------------------------------------------------- */

struct scenario_case {
    const char *file; /* under tests/scenarios, without .scn */
    int hip;
    unsigned threads; /* 0: the scenario's own (1) */
    /* 1: a shape whose labels the engine can only give after the fact
     * (docs/phases.md, "What is live and what only the trace holds"): the
     * live check is on the launches the trace did not relabel, by phase
     * and step (a relabelled iteration pushed a PREFILL range live, so live
     * generation numbers run ahead after it); live against the truth is
     * printed */
    int after_the_fact;
    /* the real program's call stream it imitates (tests/engine_cases/REAL.calls.gz), compared step by step
     * (real_trace_check), or NULL: none in this tree */
    const char *real;
};

static const struct scenario_case cases[] = {
    {"tiny_loop", 0, 1, 0, NULL},
    {"tiny_loop", 0, 2, 0, NULL},
    {"hf_eager", 0, 1, 0, NULL},
    {"hf_eager", 0, 3, 0, NULL},
    {"hf_static_graphs", 0, 1, 0, NULL},
    {"hf_static_graphs", 0, 2, 0, NULL},
    {"vllm_graphs", 0, 1, 0, NULL},
    {"vllm_graphs", 0, 4, 0, NULL},
    {"llamacpp", 0, 1, 0, NULL},
    {"llamacpp", 0, 2, 0, NULL},
    {"trtllm", 0, 1, 0, NULL},
    {"trtllm", 0, 3, 0, NULL},
    {"chunked_prefill", 0, 1, 0, NULL},
    {"chunked_prefill", 0, 2, 0, NULL},
    {"one_token_prompt", 0, 1, 0, NULL},
    {"one_token_prompt", 0, 2, 0, NULL},
    {"zero_decode_steps", 0, 1, 0, NULL},
    {"zero_decode_steps", 0, 2, 0, NULL},
    {"idle_gap", 0, 1, 0, NULL},
    {"idle_gap", 0, 2, 0, NULL},
    {"back_to_back", 0, 1, 0, NULL},
    {"back_to_back", 0, 4, 0, NULL},
    {"hf_eager", 1, 1, 0, NULL},
    {"hf_eager", 1, 2, 0, NULL},
    {"llamacpp", 1, 1, 0, NULL},
    {"llamacpp", 1, 3, 0, NULL},
    {"vllm_graphs", 1, 1, 0, NULL},
    {"vllm_graphs", 1, 2, 0, NULL},
    /* step 0's first launch (the embedding, not the prompt's first kernel) is told by the launch after it
     * (docs/phases.md, "Reads inside a forward"): relabelled into the step */
    {"hf_generate", 0, 1, 1, "hf-llama"},
    {"hf_generate", 0, 2, 1, NULL},
    {"hf_no_copy_in", 0, 1, 0, NULL},
    {"hf_no_copy_in", 0, 2, 0, NULL},
    {"ggml_gpt2", 0, 1, 0, NULL},
    {"ggml_gpt2", 0, 2, 0, NULL},
    {"ggml_short_prompts", 0, 1, 1, NULL},
    {"ggml_short_prompts", 0, 2, 1, NULL},
    {"ggml_chunks_b4", 0, 1, 1, NULL},
    {"ggml_chunks_b4", 0, 2, 1, NULL},
    {"ggml_chunks_32_2", 0, 1, 1, NULL},
    {"ggml_chunks_32_2", 0, 2, 1, NULL},
    {"ggml_parallel", 0, 1, 0, NULL},
    {"ggml_parallel", 0, 3, 0, NULL},
    /* prompts that read no token (issue 34): generate() with no streamer */
    {"hf_generate_no_streamer", 0, 1, 0, NULL},
    {"hf_generate_no_streamer", 0, 2, 0, NULL},
};

static int full_sizes;

static const char *expected_failure(const char *const *list, const char *name, unsigned threads)
{
    char with_threads[160];
    size_t i;
    snprintf(with_threads, sizeof with_threads, "%s threads=%u", name, threads);
    for (i = 0; list[i] != NULL; i++)
        if (strcmp(list[i], name) == 0 || strcmp(list[i], with_threads) == 0)
            return "the phase engine is being rewritten (issue 11)";
    return NULL;
}

/* A listed check that passes: say so, for the list to be emptied. */
static void note_passing(int success, const char *todo, const char *name, unsigned threads, const char *what)
{
    if (success && todo != NULL)
        diag("%s threads=%u: %s passes although listed as expected to fail", name, threads, what);
}

static double percent(size_t part, size_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- running the replay ---------------------------------------------------------------------- */

static void run_replay(const struct scenario_case *c, const char *app, const char *scn, int shim,
                       const char *log_path, const char *prefix, const char *const *rules, struct run_result *res)
{
    char threads[16], log_env[4200], out_env[4200], libpath[8192], inject[4200];
    const char *argv[6], *env[18];
    size_t a = 0, n = 0;

    snprintf(threads, sizeof threads, "%u", c->threads);
    argv[a++] = app;
    if (full_sizes)
        argv[a++] = "--full";
    argv[a++] = "--threads";
    argv[a++] = threads;
    argv[a++] = scn;
    argv[a] = NULL;
    if (c->hip)
        snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s:%s", shim_build_path("sim/.libs"),
                 shim_build_path("tests/nvtx_inject/.libs"));
    else
        snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    env[n++] = libpath;
    env[n++] = "OBS_SIM_SYNC_WAIT=1";
    if (shim) {
        snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
        snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
        snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s",
                 shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
        env[n++] = log_env;
        env[n++] = out_env;
        env[n++] = "OBS_SIM_LOG_TID=1";
        env[n++] = "OBS_CLOCK=monotonic"; /* the replay's marks and the trace's times: one clock */
        env[n++] = c->hip ? "NVTX_INJECTION64_PATH" : inject;
        env[n++] = "OBS_SUMMARY=0";
        env[n++] = "OBS_JSON=0";
        if (rules != NULL) {
            env[n++] = rules[0];
            env[n++] = rules[1];
            env[n++] = rules[2];
        }
    }
    env[n] = NULL;
    shim_run(argv, env, shim, full_sizes ? 600 : 120, res);
}

/* ---- suggest-phases round trip ------------------------------------------------------------------ */

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each thread's launches (kernels and graph launches) as "phase step gen"
 * labels, one string per thread, sorted (thread ids differ between runs;
 * every thread of a replay runs the same loop). */
static char **thread_labels(const struct obs_trace *t, size_t *nthreads)
{
    char **per = calloc(t->nthreads ? t->nthreads : 1, sizeof *per);
    size_t *len = calloc(t->nthreads ? t->nthreads : 1, sizeof *len), i;
    if (per == NULL || len == NULL)
        bail("out of memory");
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        char item[64];
        size_t n;
        if (c->kind != OBS_KIND_KERNEL && c->kind != OBS_KIND_GRAPH)
            continue;
        if (c->phase == OBS_NONE)
            n = (size_t)snprintf(item, sizeof item, "-;");
        else
            n = (size_t)snprintf(item, sizeof item, "%s %d %u L%d;", t->phases[c->phase].phase,
                                 (int)obs_phase_step(t, c->phase), t->phases[c->phase].generation,
                                 c->layer == OBS_NO_LAYER ? -1 : (int)c->layer);
        per[c->thread] = realloc(per[c->thread], len[c->thread] + n + 1);
        if (per[c->thread] == NULL)
            bail("out of memory");
        memcpy(per[c->thread] + len[c->thread], item, n + 1);
        len[c->thread] += n;
    }
    for (i = 0; i < t->nthreads; i++)
        if (per[i] == NULL && (per[i] = strdup("")) == NULL)
            bail("out of memory");
    free(len);
    qsort(per, t->nthreads, sizeof *per, cmp_text);
    *nthreads = t->nthreads;
    return per;
}

/* The launches whose labels differ between two such strings. */
static size_t labels_differ(const char *a, const char *b, size_t *total)
{
    size_t diff = 0;
    *total = 0;
    while (*a || *b) {
        const char *ea = strchr(a, ';'), *eb = strchr(b, ';');
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        (*total)++;
        diff += la != lb || strncmp(a, b, la) != 0;
        a += la + (ea != NULL);
        b += lb + (eb != NULL);
    }
    return diff;
}

/* obs-report suggest-phases' rules, fed back through OBS_PHASES / OBS_STEP,
 * label every launch as the automatic mode did (docs/phases-report.md). */
static void check_round_trip(const struct scenario_case *c, const char *name, const char *app, const char *scn,
                             const char *trace_path, const struct obs_trace *autot, const char *prefix)
{
    const char *argv[] = {shim_build_path("obs-report"), "suggest-phases", trace_path, NULL};
    static char phases[2200], step[600], layer[600];
    const char *rules[3] = {phases, step, layer};
    char rules_prefix[4300], rules_trace[4400], log_path[4400], *line, *save = NULL;
    struct run_result sug, res;
    struct obs_trace *rt = NULL;
    struct pc_run live;
    char **a = NULL, **b = NULL;
    size_t na = 0, nb = 0, i, diff = 0, total = 0, first_t = 0, scored = 0, live_ok = 0;

    snprintf(phases, sizeof phases, "OBS_PHASES=");
    snprintf(step, sizeof step, "OBS_STEP=");
    snprintf(layer, sizeof layer, "OBS_LAYER=");
    shim_run(argv, NULL, 0, 120, &sug);
    for (line = sug.out ? strtok_r(sug.out, "\n", &save) : NULL; line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *q = strchr(line, '\''), *e = q ? strrchr(line, '\'') : NULL;
        if (q == NULL || e == q)
            continue;
        *e = '\0';
        if (strncmp(line, "export OBS_PHASES=", 18) == 0)
            snprintf(phases, sizeof phases, "OBS_PHASES=%s", q + 1);
        else if (strncmp(line, "export OBS_STEP=", 16) == 0)
            snprintf(step, sizeof step, "OBS_STEP=%s", q + 1);
        else if (strncmp(line, "export OBS_LAYER=", 17) == 0)
            snprintf(layer, sizeof layer, "OBS_LAYER=%s", q + 1);
    }
    snprintf(rules_prefix, sizeof rules_prefix, "%s-rules", prefix);
    snprintf(rules_trace, sizeof rules_trace, "%s.obs", rules_prefix);
    snprintf(log_path, sizeof log_path, "%s-rules.log", prefix);
    run_replay(c, app, scn, 1, log_path, rules_prefix, rules, &res);
    if (res.exited && res.status == 0)
        rt = shim_trace_open(rules_trace);
    if (rt != NULL) {
        a = thread_labels(autot, &na);
        b = thread_labels(rt, &nb);
        for (i = 0; i < na && i < nb; i++) {
            size_t n, d = labels_differ(a[i], b[i], &n);
            if (d && !diff)
                first_t = i;
            diff += d;
            total += n;
        }
    }
    diag("FIGURES scenario=%s threads=%u round trip: %s %s %s: %zu of %zu launches labelled otherwise than in the "
         "automatic trace (phase, step, generation, layer)",
         name, c->threads, phases, step, layer, diff, total);
    if (diff && a != NULL && b != NULL)
        diag("%s threads=%u: first thread that differs (%zu): automatic %.200s ...; rules %.200s ...", name,
             c->threads, first_t, a[first_t], b[first_t]);
    ok(rt != NULL && na == nb && total > 0 && diff == 0,
       "%s threads=%u: suggest-phases' rules fed back label every launch as the automatic mode did, layers included "
       "(%zu launches, %zu threads)",
       name, c->threads, total, na);
    /* with rules the labels are given at the launch: live, every launch
     * has the truth's, those the automatic mode decides only after the
     * fact included (docs/phases.md, "What is live") */
    pc_read_log(log_path, &live);
    for (i = 0; i < live.n; i++)
        if (!live.l[i].captured) {
            scored++;
            live_ok += pc_same(&live.l[i].live, &live.l[i].truth, 1);
        }
    diag("FIGURES scenario=%s threads=%u round trip live: %zu of %zu launches have the truth's generation, phase and "
         "step live with the rules",
         name, c->threads, live_ok, scored);
    ok(scored > 0 && live_ok == scored,
       "%s threads=%u: live with suggest-phases' rules, every launch has the truth's generation, phase and step "
       "(%zu of %zu)",
       name, c->threads, live_ok, scored);
    pc_run_free(&live);
    for (i = 0; i < na; i++)
        free(a[i]);
    for (i = 0; i < nb; i++)
        free(b[i]);
    free(a);
    free(b);
    if (rt != NULL)
        obs_trace_free(rt);
    remove(rules_trace);
    remove(log_path);
    run_result_free(&sug);
    run_result_free(&res);
}

/* ---- TTFT and tokens/s ------------------------------------------------------------------------ */

struct gen_numbers {
    double ttft_ms, tps; /* NAN: undefined */
    long steps;
    long tid, gen; /* tid -1: the report has no thread column */
};

/* The bests as obs-report takes them: over generations with >= 2 decode
 * steps when there are any, else over all; smallest TTFT, largest tokens/s. */
static void bests(const struct gen_numbers *g, size_t n, double *ttft, double *tps)
{
    size_t i;
    int any_two = 0;
    *ttft = NAN;
    *tps = NAN;
    for (i = 0; i < n; i++)
        any_two |= g[i].steps >= 2;
    for (i = 0; i < n; i++) {
        if (any_two && g[i].steps < 2)
            continue;
        if (!isnan(g[i].ttft_ms) && (isnan(*ttft) || g[i].ttft_ms < *ttft))
            *ttft = g[i].ttft_ms;
        if (!isnan(g[i].tps) && (isnan(*tps) || g[i].tps > *tps))
            *tps = g[i].tps;
    }
}

/* Rows of obs-report phases --csv: generation, thread (when the report has
 * the column), ttft_ms, tokens_per_s, decode_steps. */
static size_t report_rows(const char *trace_path, struct gen_numbers **rows)
{
    const char *argv[] = {shim_build_path("obs-report"), "phases", trace_path, "--csv", NULL};
    struct run_result res;
    char *line, *save = NULL;
    int ttft_col = -1, tps_col = -1, steps_col = -1, gen_col = -1, thread_col = -1, header = 1;
    size_t n = 0;

    *rows = NULL;
    shim_run(argv, NULL, 0, 120, &res);
    if (!res.exited || res.status != 0 || res.out == NULL) {
        run_result_free(&res);
        return 0;
    }
    for (line = strtok_r(res.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *field = line, *next;
        int col = 0;
        struct gen_numbers g = {NAN, NAN, 0, -1, -1};
        /* Split at every comma: empty fields (undefined TTFT or tokens/s) keep their column. */
        for (; field != NULL; field = next, col++) {
            next = strchr(field, ',');
            if (next != NULL)
                *next++ = '\0';
            if (header) {
                if (strcmp(field, "ttft_ms") == 0)
                    ttft_col = col;
                else if (strcmp(field, "tokens_per_s") == 0)
                    tps_col = col;
                else if (strcmp(field, "decode_steps") == 0)
                    steps_col = col;
                else if (strcmp(field, "generation") == 0)
                    gen_col = col;
                else if (strcmp(field, "thread") == 0)
                    thread_col = col;
                continue;
            }
            if (col == ttft_col && *field && strcmp(field, "-") != 0)
                g.ttft_ms = strtod(field, NULL);
            else if (col == tps_col && *field && strcmp(field, "n/a") != 0)
                g.tps = strtod(field, NULL);
            else if (col == steps_col)
                g.steps = strtol(field, NULL, 10);
            else if (col == gen_col)
                g.gen = strtol(field, NULL, 10);
            else if (col == thread_col)
                g.tid = strtol(field, NULL, 10);
        }
        if (header) {
            header = 0;
            continue;
        }
        *rows = realloc(*rows, (n + 1) * sizeof **rows);
        if (*rows == NULL)
            bail("out of memory");
        (*rows)[n++] = g;
    }
    run_result_free(&res);
    return n;
}

/* ---- the calls the truth names ------------------------------------------------------------- */

/* The replay's marks (tests/apps/llm_replay.c) are CLOCK_MONOTONIC
 * instants read between its runtime calls; the shim runs with
 * OBS_CLOCK=monotonic, so its call times are readings of the same clock on
 * the same thread, and a mark orders every call of its thread exactly: the
 * first call that began at or after a start mark is the call it names, the
 * last call that began at or before an end mark is the read it names. No
 * time is compared with another, only ordered. */
struct thread_calls {
    uint32_t tid;
    const struct obs_call **c;
    size_t n;
};

static struct thread_calls *calls_by_thread(const struct obs_trace *t)
{
    struct thread_calls *by = calloc(t->nthreads ? t->nthreads : 1, sizeof *by);
    size_t i;
    if (by == NULL)
        bail("out of memory");
    for (i = 0; i < t->nthreads; i++) {
        by[i].tid = t->threads[i].tid;
        by[i].c = malloc((t->threads[i].calls ? t->threads[i].calls : 1) * sizeof *by[i].c);
        if (by[i].c == NULL)
            bail("out of memory");
    }
    for (i = 0; i < t->ncalls; i++) {
        struct thread_calls *tc = &by[t->calls[i].thread];
        if (tc->n < t->threads[t->calls[i].thread].calls)
            tc->c[tc->n++] = &t->calls[i];
    }
    return by;
}

static void free_calls_by_thread(struct thread_calls *by, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(by[i].c);
    free(by);
}

static const struct thread_calls *thread_of(const struct thread_calls *by, size_t n, long tid, unsigned threads)
{
    size_t i;
    if (tid < 0) /* the log has no thread column: one thread */
        return threads == 1 && n == 1 ? &by[0] : NULL;
    for (i = 0; i < n; i++)
        if ((long)by[i].tid == tid)
            return &by[i];
    return NULL;
}

static const struct obs_call *first_from(const struct thread_calls *tc, unsigned long long mark)
{
    size_t i;
    if (tc == NULL || mark == 0)
        return NULL;
    for (i = 0; i < tc->n; i++)
        if (tc->c[i]->host_begin >= mark)
            return tc->c[i];
    return NULL;
}

/* The first kernel or graph launch that began at or after mark. */
static const struct obs_call *first_launch_from(const struct thread_calls *tc, unsigned long long mark)
{
    size_t i;
    if (tc == NULL || mark == 0)
        return NULL;
    for (i = 0; i < tc->n; i++)
        if (tc->c[i]->host_begin >= mark && (tc->c[i]->kind == OBS_KIND_KERNEL || tc->c[i]->kind == OBS_KIND_GRAPH))
            return tc->c[i];
    return NULL;
}

static const struct obs_call *last_until(const struct thread_calls *tc, unsigned long long mark)
{
    const struct obs_call *last = NULL;
    size_t i;
    if (tc == NULL || mark == 0)
        return NULL;
    for (i = 0; i < tc->n && tc->c[i]->host_begin <= mark; i++)
        last = tc->c[i];
    return last;
}

/* A generation's TTFT and tokens/s as docs/phases-report.md defines them
 * (first token "prefill": the prompt's own), on the host time base,
 * computed from the trace's own times of the calls the truth names: TTFT
 * from the begin of the prompt's first call (its ids' copy; in a thread's
 * first generation, whose input copies the engine cannot tell from set-up
 * copies, the prefill's first launch) to the end of the prefill's token
 * read; tokens/s = steps x sequences / (end of the last step's read - end
 * of the prefill's read): a token per sequence and step (the scenario's
 * `sequences`, which the read sizes tell obs-report). */
static void expected_numbers(const struct pc_timing *g, const struct thread_calls *tc, unsigned sequences,
                             struct gen_numbers *want)
{
    const struct obs_call *first =
        g->gen == 0 ? first_launch_from(tc, g->mark_prefill) : first_from(tc, g->mark_prompt);
    const struct obs_call *read = last_until(tc, g->mark_prefill_read);
    const struct obs_call *last = last_until(tc, g->mark_last_read);
    want->ttft_ms = NAN;
    want->tps = NAN;
    if (first != NULL && read != NULL && read->host_end > first->host_begin)
        want->ttft_ms = (double)(read->host_end - first->host_begin) / 1e6;
    if (g->steps >= 1 && read != NULL && last != NULL && last->host_end > read->host_end)
        want->tps = (double)g->steps * sequences * 1e9 / (double)(last->host_end - read->host_end);
}

/* Equal up to the report's rounding: TTFT printed in ms with 6 decimals
 * (1 ns), tokens/s with 3. */
static int same_printed(double want, double seen, double half_unit)
{
    if (isnan(want) || isnan(seen))
        return isnan(want) && isnan(seen);
    return fabs(seen - want) <= half_unit + 1e-12 * fabs(want);
}

/* TTFT and tokens/s of obs-report phases, per generation, against the
 * spans of the calls the truth names in the same trace; the replay's own
 * stopwatch is printed beside them for the reader. quiet: only return
 * whether every check would pass. */
static int check_timing(const char *name, unsigned threads, unsigned sequences, const struct pc_run *run,
                        const struct obs_trace *t,
                        const char *trace_path)
{
    const char *todo = expected_failure(timing_expected_failures, name, threads);
    struct thread_calls *by = calls_by_thread(t);
    struct gen_numbers *want, *rows = NULL, *own;
    size_t nwant = run->ntiming, nrows, i, gen_same = 0, shown = 0;
    double want_ttft, want_tps, rep_ttft, rep_tps, own_ttft, own_tps;
    int best_ok, gens_ok;

    want = calloc(nwant ? nwant : 1, sizeof *want);
    own = calloc(nwant ? nwant : 1, sizeof *own);
    if (want == NULL || own == NULL)
        bail("out of memory");
    for (i = 0; i < nwant; i++) {
        const struct pc_timing *g = &run->timing[i];
        want[i].steps = own[i].steps = g->steps;
        want[i].tid = own[i].tid = g->tid;
        want[i].gen = own[i].gen = g->gen;
        expected_numbers(g, thread_of(by, t->nthreads, g->tid, threads), sequences, &want[i]);
        own[i].ttft_ms = g->ttft_ns >= 0 ? (double)g->ttft_ns / 1e6 : NAN;
        own[i].tps =
            g->steady_ns > 0 && g->steps >= 1 ? (double)g->steps * sequences * 1e9 / (double)g->steady_ns : NAN;
    }
    nrows = report_rows(trace_path, &rows);
    bests(want, nwant, &want_ttft, &want_tps);
    bests(rows, nrows, &rep_ttft, &rep_tps);
    bests(own, nwant, &own_ttft, &own_tps);
    /* Per generation: the report's row of the same thread and generation
     * (both number generations per thread from 0); without a thread column,
     * by generation alone with one thread. */
    for (i = 0; i < nwant; i++) {
        size_t j;
        for (j = 0; j < nrows; j++)
            if (rows[j].gen == want[i].gen && (rows[j].tid == want[i].tid || (rows[j].tid < 0 && threads == 1)))
                break;
        if (j < nrows && rows[j].steps == want[i].steps && same_printed(want[i].ttft_ms, rows[j].ttft_ms, 0.5e-6) &&
            same_printed(want[i].tps, rows[j].tps, 0.0005))
            gen_same++;
        else if (shown++ < 3)
            diag("%s threads=%u: thread %ld generation %ld: from the named calls TTFT %.6f ms, %.3f tokens/s, "
                 "%ld steps; obs-report %.6f ms, %.3f tokens/s, %ld steps%s",
                 name, threads, want[i].tid, want[i].gen, want[i].ttft_ms, want[i].tps, want[i].steps,
                 j < nrows ? rows[j].ttft_ms : NAN, j < nrows ? rows[j].tps : NAN, j < nrows ? rows[j].steps : -1L,
                 j < nrows ? "" : " (no such row)");
    }
    best_ok = nrows > 0 && same_printed(want_ttft, rep_ttft, 0.5e-6) && same_printed(want_tps, rep_tps, 0.0005);
    gens_ok = nrows == nwant && gen_same == nwant;
    diag("FIGURES scenario=%s threads=%u timing: generations=%zu best_ttft_ms=%.6f best_tokens_per_s=%.3f "
         "(obs-report rows=%zu: %.6f, %.3f; generations equal: %zu); the replay's own stopwatch: best_ttft_ms=%.3f "
         "best_tokens_per_s=%.1f",
         name, threads, nwant, want_ttft, want_tps, nrows, rep_ttft, rep_tps, gen_same, own_ttft, own_tps);
    note_passing(ok_todo(gens_ok, todo,
                         "%s threads=%u: each generation's TTFT, tokens/s and steps in obs-report phases = the spans "
                         "of the calls the truth names (%zu of %zu, %zu rows)",
                         name, threads, gen_same, nwant, nrows),
                 todo, name, threads, "TTFT and tokens/s per generation");
    note_passing(ok_todo(best_ok, todo, "%s threads=%u: best TTFT and tokens/s of obs-report phases = the best of those spans",
                         name, threads),
                 todo, name, threads, "best TTFT and tokens/s");
    free_calls_by_thread(by, t->nthreads);
    free(want);
    free(own);
    free(rows);
    return best_ok && gens_ok;
}

/* A wrong label that differs from the truth only by KV_GATHER against
 * DECODE (same step, same generation): a KV-cache kernel the engine did
 * not tell by its name, or one it took for KV. */
static int kv_only(const struct pc_label *seen, const struct pc_label *truth)
{
    int a = strcmp(seen->phase, "KV_GATHER") == 0, b = strcmp(truth->phase, "KV_GATHER") == 0;
    int c = strcmp(seen->phase, "DECODE") == 0, d = strcmp(truth->phase, "DECODE") == 0;
    return ((a && d) || (b && c)) && seen->step == truth->step && seen->gen == truth->gen;
}

static size_t launching_threads(const struct pc_run *run)
{
    size_t i, count = 0;
    unsigned char *seen = calloc(run->ntids + 1, 1);
    if (seen == NULL)
        bail("out of memory");
    for (i = 0; i < run->n; i++)
        if (!seen[run->l[i].thread]) {
            seen[run->l[i].thread] = 1;
            count++;
        }
    free(seen);
    return count;
}

/* ---- one case ---------------------------------------------------------------------------------- */

/* The scenario's sequences per decode step (1 when it does not parse: the
 * replay's own run says why). */
static unsigned scenario_sequences(const char *path)
{
    static struct scenario s;
    char err[256];
    size_t len = 0;
    char *text = test_read_file(path, &len);
    unsigned n = 1;
    if (text != NULL && scenario_parse(text, len, &s, err, sizeof err) == 0)
        n = s.sequences;
    free(text);
    return n;
}

/* EMBED and HEAD (docs/layers.md, "Reports") against the replay's EMBED and
 * HEAD marks (EMBED: from a prompt's, chunk's or step's start to LAYER/0;
 * HEAD: from a pass's post kernels on), scored by pc_embed_head. */
static void check_embed_head(const char *name, unsigned threads, const struct pc_run *run)
{
    struct pc_part_score s;
    char what[160]; /* a scenario name (up to 127) and its thread count */
    snprintf(what, sizeof what, "%s threads=%u", name, threads);
    pc_embed_head(run, &s, what, 3);
    diag("FIGURES scenario=%s threads=%u embed/head: launches=%zu in_layers=%zu embed=%zu head=%zu right=%zu "
         "other_label=%zu by_capture=%zu", name, threads, s.scored, s.in_layers, s.embed, s.head, s.right,
         s.other_label, s.by_capture);
    ok(s.scored > 0 && s.right == s.scored && (s.in_layers == 0 || (s.embed > 0 && s.head > 0)),
       "%s threads=%u: layers: EMBED and HEAD hold the replay's launches before and after each pass's layers "
       "(%zu EMBED, %zu HEAD launches, %zu right of %zu with the truth's phase and step)",
       name, threads, s.embed, s.head, s.right, s.scored);
}

/* LAYER/k (docs/layers.md) against the replay's own layers (its LAYER/k and
 * LAYER_END marks around each layer of the scenario): every launch's layer
 * in the trace, or none outside layers; live, no launch in a LAYER range
 * other than its own. */
static void check_layers(const char *name, unsigned threads, const struct pc_run *run)
{
    size_t i, n = 0, in_layers = 0, trace_ok = 0, live_in = 0, live_wrong = 0, shown = 0;
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        if (l->captured || !l->in_trace)
            continue;
        n++;
        in_layers += l->truth_layer >= 0;
        trace_ok += l->trace_layer == l->truth_layer;
        live_in += l->truth_layer >= 0 && l->live_layer == l->truth_layer;
        live_wrong += l->live_layer >= 0 && l->live_layer != l->truth_layer;
        if ((l->trace_layer != l->truth_layer || (l->live_layer >= 0 && l->live_layer != l->truth_layer)) &&
            shown++ < 3)
            diag("%s threads=%u: launch %zu %.60s: truth layer %d, live %d, trace %d", name, threads, i,
                 run->names[l->name], l->truth_layer, l->live_layer, l->trace_layer);
    }
    diag("FIGURES scenario=%s threads=%u layers: launches=%zu in_layers=%zu trace_ok=%zu (%.2f%%) live_in_layer=%zu "
         "(%.2f%% of those in layers) live_wrong=%zu",
         name, threads, n, in_layers, trace_ok, percent(trace_ok, n), live_in, percent(live_in, in_layers), live_wrong);
    ok(n > 0 && trace_ok == n, "%s threads=%u: layers: every launch has the replay's layer in the trace, or none (%zu "
       "of %zu)", name, threads, trace_ok, n);
    ok(live_wrong == 0, "%s threads=%u: layers: no launch live in a LAYER range other than its own (%zu of the %zu in "
       "layers live in theirs)", name, threads, live_in, in_layers);
    check_embed_head(name, threads, run);
}

/* The graphs a scenario captures (one thread's): each exec's kernel nodes
 * get the replay's layers in the trace from the node walk (docs/layers.md,
 * "Graphs"), the replay's LAYER marks written while capturing too. */
static void check_graph_layers(const char *name, const struct pc_run *run, const struct obs_trace *t)
{
    struct pc_graph_score s;
    pc_graph_node_layers(t, run, &s);
    if (s.captured == 0)
        return;
    diag("FIGURES scenario=%s graph layers: captured=%zu execs=%zu kernel_nodes=%zu in_layers=%zu right=%zu", name,
         s.captured, s.execs, s.nodes, s.in_layers, s.right);
    ok(s.nodes == s.captured && s.execs > 0 && s.names_differ == 0 && s.in_layers > 0 && s.right == s.nodes,
       "%s: graph nodes: the %zu execs' %zu kernel nodes are the captured launches and each has the replay's layer, "
       "or none (%zu right, %zu in layers)",
       name, s.execs, s.nodes, s.right, s.in_layers);
}

/* ---- the real trace a scenario imitates ------------------------------------------------------ */

/* One step's calls, as a text both sides make the same way: its
 * iterations (the calls up to a host sync, or a synchronous copy to the
 * host) separated by " | ", each its launches ("L5"; "F" for the forward,
 * over 20: its count is the model's, not compared) then its copies between
 * host and device with their bytes ("d2h:1"). Device-to-device copies and
 * memsets are left out (they scale with the model's layers and are
 * neither a copy in nor a delimiter). */
struct step_text {
    char *text;
    size_t len, cap;
    size_t launches;
    char copies[512];
};

static void st_append(struct step_text *s, const char *piece)
{
    size_t n = strlen(piece);
    if (s->len + n + 1 > s->cap) {
        s->cap = (s->len + n + 1) * 2;
        s->text = realloc(s->text, s->cap);
        if (s->text == NULL)
            bail("out of memory");
    }
    memcpy(s->text + s->len, piece, n + 1);
    s->len += n;
}

static void st_close_iteration(struct step_text *s)
{
    char head[32];
    if (s->launches == 0 && s->copies[0] == '\0')
        return;
    if (s->len > 0)
        st_append(s, " | ");
    snprintf(head, sizeof head, s->launches > 20 ? "F" : "L%zu", s->launches);
    st_append(s, head);
    st_append(s, s->copies);
    s->launches = 0;
    s->copies[0] = '\0';
}

/* dir: 'h' host to device, 'd' device to host, else not counted */
static void st_copy(struct step_text *s, char dir, unsigned long long bytes, int synchronous)
{
    size_t used = strlen(s->copies);
    if (dir == 'h' || dir == 'd')
        snprintf(s->copies + used, sizeof s->copies - used, " %s:%llu", dir == 'h' ? "h2d" : "d2h", bytes);
    if (synchronous && dir == 'd')
        st_close_iteration(s);
}

/* The steps of one thread: (generation, step; -1 for the prompt) and their text, in order. */
struct step_list {
    long *gen, *step;
    char **text;
    size_t n, cap;
};

static struct step_text *sl_group(struct step_list *l, struct step_text *cur, long gen, long step)
{
    if (l->n > 0 && l->gen[l->n - 1] == gen && l->step[l->n - 1] == step)
        return cur;
    if (l->n > 0) {
        st_close_iteration(cur);
        l->text[l->n - 1] = cur->text ? cur->text : strdup("");
    }
    memset(cur, 0, sizeof *cur);
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->gen = realloc(l->gen, l->cap * sizeof *l->gen);
        l->step = realloc(l->step, l->cap * sizeof *l->step);
        l->text = realloc(l->text, l->cap * sizeof *l->text);
        if (l->gen == NULL || l->step == NULL || l->text == NULL)
            bail("out of memory");
    }
    l->gen[l->n] = gen;
    l->step[l->n] = step;
    l->text[l->n] = NULL;
    l->n++;
    return cur;
}

static void sl_finish(struct step_list *l, struct step_text *cur)
{
    if (l->n > 0) {
        st_close_iteration(cur);
        l->text[l->n - 1] = cur->text ? cur->text : strdup("");
    }
}

static void sl_free(struct step_list *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        free(l->text[i]);
    free(l->gen);
    free(l->step);
    free(l->text);
}

/* The scenario's steps from its trace (one launching thread): a launch's
 * generation and step are the trace's (equal to the truth: checked before);
 * the other calls go with the launch before them, as in the real file. */
static void scenario_steps(const struct obs_trace *t, struct step_list *l)
{
    struct step_text cur;
    long gen = -1, step = -2;
    size_t i;
    uint32_t th = UINT32_MAX;
    memset(&cur, 0, sizeof cur);
    for (i = 0; i < t->ncalls && th == UINT32_MAX; i++)
        if (t->calls[i].kind == OBS_KIND_KERNEL)
            th = t->calls[i].thread;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        unsigned dir = c->flags & OBS_CALL_DIR_MASK;
        if (c->thread != th)
            continue;
        if (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) {
            if (c->phase != OBS_NONE) {
                gen = (long)t->phases[c->phase].generation;
                step = strcmp(t->phases[c->phase].phase, "PREFILL") == 0 ? -1 : (long)obs_phase_step(t, c->phase);
            }
            sl_group(l, &cur, gen, step);
            cur.launches++;
        } else if (step != -2 && c->kind == OBS_KIND_MEMCPY) {
            sl_group(l, &cur, gen, step);
            st_copy(&cur, dir == OBS_DIR_HTOD ? 'h' : dir == OBS_DIR_DTOH ? 'd' : 'D', (unsigned long long)c->u.bytes,
                    strstr(obs_api_name(c->api), "Async") == NULL);
        } else if (step != -2 && c->kind == OBS_KIND_SYNC) {
            sl_group(l, &cur, gen, step);
            st_close_iteration(&cur);
        }
    }
    sl_finish(l, &cur);
}

/* The real program's steps from its call stream (tests/engine_cases: the
 * language of t_phase_engine, with the program's own truth marked in it),
 * its first thread; generations and steps counted from the marks. */
static int real_steps(const char *path, struct step_list *l)
{
    char *text, *tok, *save = NULL, *calls;
    struct step_text cur;
    long gen = -1, step = -2;
    int on_first = 1;
    if (!gz_text_available())
        return -1;
    if ((text = gz_text_read(path)) == NULL)
        bail("cannot read %s", path);
    calls = strstr(text, "\ncalls\n");
    if (calls == NULL)
        bail("%s: no calls", path);
    memset(&cur, 0, sizeof cur);
    for (tok = strtok_r(calls + 7, " \n", &save); tok != NULL; tok = strtok_r(NULL, " \n", &save)) {
        char *eq = strchr(tok, '=');
        if (tok[0] == 'T' && tok[1] >= '0' && tok[1] <= '9') {
            on_first = strcmp(tok, "T0") == 0;
            continue;
        }
        if (!on_first)
            continue;
        if (strcmp(tok, "@gen") == 0) {
            gen++;
            step = -1;
            continue;
        }
        if (strcmp(tok, "@step") == 0) {
            step++;
            continue;
        }
        if (tok[0] == '@' || tok[0] == '+')
            continue;
        if (eq != NULL)
            *eq = '\0';
        if ((tok[0] == 'k' && tok[1] >= '0' && tok[1] <= '9') || strcmp(tok, "graph") == 0) {
            sl_group(l, &cur, gen, step);
            cur.launches++;
        } else if (step != -2 && (strncmp(tok, "h2d:", 4) == 0 || strncmp(tok, "d2h:", 4) == 0 ||
                                  strncmp(tok, "H2D:", 4) == 0 || strncmp(tok, "D2H:", 4) == 0)) {
            sl_group(l, &cur, gen, step);
            st_copy(&cur, (tok[0] | 0x20) == 'h' ? 'h' : 'd', strtoull(tok + 4, NULL, 10), tok[0] == 'D');
        } else if (step != -2 && (strcmp(tok, "sync") == 0 || strcmp(tok, "devsync") == 0 ||
                                  strcmp(tok, "evsync") == 0)) {
            sl_group(l, &cur, gen, step);
            st_close_iteration(&cur);
        }
    }
    sl_finish(l, &cur);
    free(text);
    return 0;
}

/* The scenario against the real program's call stream it imitates, step
 * by step: each of the scenario's generations, its prompt and each step,
 * has the real program's iterations, launches outside the forward, copies
 * between host and device (their bytes) and syncs. The scenario's last
 * step is compared as far as it goes (the real program's goes on with the
 * next prompt's inputs, and a batch the scenario does not imitate). */
static void real_trace_check(const char *name, const struct scenario_case *c, const struct obs_trace *t)
{
    char path[4300];
    struct step_list real, scen;
    size_t i, j, compared = 0, same = 0, shown = 0;
    snprintf(path, sizeof path, "%s/tests/engine_cases/%s.calls.gz", test_srcdir(), c->real);
    memset(&real, 0, sizeof real);
    memset(&scen, 0, sizeof scen);
    if (real_steps(path, &real) != 0) {
        skip("%s: no zlib to read %s (configure found none)", name, path);
        return;
    }
    scenario_steps(t, &scen);
    for (i = 0; i < scen.n; i++) {
        const char *want = NULL;
        int last = i + 1 == scen.n, eq;
        if (scen.gen[i] < 0)
            continue;
        for (j = 0; j < real.n && want == NULL; j++)
            if (real.gen[j] == scen.gen[i] && real.step[j] == scen.step[i])
                want = real.text[j];
        compared++;
        eq = want != NULL && (last ? strncmp(want, scen.text[i], strlen(scen.text[i])) == 0
                                   : strcmp(want, scen.text[i]) == 0);
        same += eq;
        if (!eq && shown++ < 3)
            diag("%s: generation %ld %s %ld: the scenario %s; %s %s", name, scen.gen[i],
                 scen.step[i] < 0 ? "prompt" : "step", scen.step[i] < 0 ? 0L : scen.step[i], scen.text[i], c->real,
                 want ? want : "(none)");
    }
    for (i = 0; i < scen.n; i++)
        if (scen.gen[i] >= 0 && (i == 0 || scen.gen[i - 1] != scen.gen[i]))
            diag("FIGURES scenario=%s against %s: generation %ld's prompt: %s", name, c->real, scen.gen[i],
                 scen.text[i]);
    diag("FIGURES scenario=%s against %s: %zu of %zu prompts and steps with the real program's iterations, "
         "launches (the forward's aside), copies in and out and syncs",
         name, c->real, same, compared);
    ok(compared > 0 && same == compared,
       "%s: each prompt and step has the iterations, launches, copies and syncs of %s's (%zu of %zu)", name,
       c->real, same, compared);
    sl_free(&real);
    sl_free(&scen);
}

static void run_scenario(const struct scenario_case *c)
{
    static int serial;
    char app[4200], scn[4200], name[128], log_path[4200], prefix[4200], trace_path[4300];
    const char *todo;
    struct run_result plain, shimmed;
    struct pc_run run;
    struct obs_trace *t;
    size_t n, ntrace, mismatch, i, scored = 0, captured = 0, trace_ok = 0, live_ok = 0, shown = 0, missing = 0;
    size_t unrelabelled = 0, live_unrelabelled_ok = 0;
    size_t trace_kv = 0, live_kv = 0;

    /* shim_build_path's buffers are reused: keep a copy. */
    snprintf(app, sizeof app, "%s", shim_build_path(c->hip ? "tests/apps/llm_replay_hip" : "tests/apps/llm_replay"));
    snprintf(scn, sizeof scn, "%s/tests/scenarios/%s.scn", getenv("OBS_SRCDIR") ? getenv("OBS_SRCDIR") : ".",
             c->file);
    snprintf(name, sizeof name, "%s%s", c->file, c->hip ? "-hip" : "");
    todo = expected_failure(expected_failures, name, c->threads);
    snprintf(log_path, sizeof log_path, "%s/scn-log-%d", test_tmpdir(), ++serial);
    snprintf(prefix, sizeof prefix, "%s/scn-trace-%d", test_tmpdir(), serial);
    snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    remove(log_path);

    run_replay(c, app, scn, 0, NULL, NULL, NULL, &plain);
    remove(trace_path);
    run_replay(c, app, scn, 1, log_path, prefix, NULL, &shimmed);
    is_int(0, plain.exited ? plain.status : -1, "%s threads=%u: exit 0 without the shim", name, c->threads);
    is_int(0, shimmed.exited ? shimmed.status : -1, "%s threads=%u: exit 0 under the shim", name, c->threads);
    if (!shimmed.exited || shimmed.status != 0)
        diag_text("stderr", shimmed.err);
    is_string(plain.out ? plain.out : "", shimmed.out ? shimmed.out : "",
              "%s threads=%u: the same output as without the shim", name, c->threads);

    n = pc_read_log(log_path, &run);
    t = shim_trace_open(trace_path);
    if (t == NULL) {
        ok(0, "%s threads=%u: trace readable", name, c->threads);
        pc_run_free(&run);
        run_result_free(&plain);
        run_result_free(&shimmed);
        return;
    }
    ntrace = pc_trace_labels(t, &run, &mismatch);
    is_int((long long)n, (long long)ntrace, "%s threads=%u: %zu launches in the log, as many in the trace", name,
           c->threads, n);
    is_int(0, (long long)mismatch, "%s threads=%u: the same kernels in the same order per thread", name, c->threads);
    is_int((long long)c->threads, (long long)launching_threads(&run),
           "%s threads=%u: as many threads launch in the log", name, c->threads);
    for (i = 0; i < n; i++) {
        const struct pc_launch *l = &run.l[i];
        int tr, lv;
        char a[64], b[64], d[64];
        if (l->captured) {
            captured++;
            continue;
        }
        missing += !l->in_trace;
        scored++;
        tr = l->in_trace && pc_same(&l->trace, &l->truth, 1);
        lv = pc_same(&l->live, &l->truth, 1);
        trace_ok += tr;
        live_ok += lv;
        if (!l->relabelled) {
            unrelabelled++;
            live_unrelabelled_ok += pc_same(&l->live, &l->truth, 0);
        }
        trace_kv += !tr && l->in_trace && kv_only(&l->trace, &l->truth);
        live_kv += !lv && kv_only(&l->live, &l->truth);
        if ((!tr || !lv) && shown++ < 3)
            diag("%s threads=%u: launch %zu (thread %ld) %.60s: truth %s live %s trace %s%s", name, c->threads, i,
                 run.tids[l->thread], run.names[l->name], pc_label_text(&l->truth, a, sizeof a),
                 pc_label_text(&l->live, b, sizeof b), pc_label_text(&l->trace, d, sizeof d),
                 l->relabelled ? " (relabelled)" : "");
    }
    if (missing > 0)
        diag("%s threads=%u: %zu launches of the log have no call in the trace", name, c->threads, missing);
    if (trace_ok < scored || live_ok < scored)
        diag("%s threads=%u: wrong only by KV_GATHER against DECODE: trace %zu of %zu, live %zu of %zu", name,
             c->threads, trace_kv, scored - trace_ok, live_kv, scored - live_ok);
    if (run.live_prefill_uncounted > 0)
        diag("%s threads=%u: %zu live PREFILL ranges held only captured launches (not counted as generations)",
             name, c->threads, run.live_prefill_uncounted);
    diag("FIGURES scenario=%s threads=%u launches=%zu trace_ok=%zu (%.2f%%) live_ok=%zu (%.2f%%) captured_excluded=%zu",
         name, c->threads, scored, trace_ok, percent(trace_ok, scored), live_ok, percent(live_ok, scored), captured);
    note_passing(ok_todo(scored > 0 && percent(trace_ok, scored) >= MIN_OK_PERCENT, todo,
                         "%s threads=%u: trace: %.2f%% of %zu launches have the truth's generation, phase and step",
                         name, c->threads, percent(trace_ok, scored), scored),
                 todo, name, c->threads, "trace attribution");
    if (c->after_the_fact) {
        diag("FIGURES scenario=%s threads=%u live: of the %zu launches the trace did not relabel, %zu have the "
             "truth's phase and step live (%.2f%%); %zu relabelled after the fact",
             name, c->threads, unrelabelled, live_unrelabelled_ok, percent(live_unrelabelled_ok, unrelabelled),
             scored - unrelabelled);
        note_passing(ok_todo(unrelabelled > 0 && percent(live_unrelabelled_ok, unrelabelled) >= MIN_OK_PERCENT, todo,
                             "%s threads=%u: live: %.2f%% of the %zu launches the trace did not relabel have the "
                             "truth's phase and step (%zu decided after the fact)",
                             name, c->threads, percent(live_unrelabelled_ok, unrelabelled), unrelabelled,
                             scored - unrelabelled),
                     todo, name, c->threads, "live attribution");
    } else {
        note_passing(ok_todo(scored > 0 && percent(live_ok, scored) >= MIN_OK_PERCENT, todo,
                             "%s threads=%u: live: %.2f%% of %zu launches have the truth's generation, phase and step",
                             name, c->threads, percent(live_ok, scored), scored),
                     todo, name, c->threads, "live attribution");
    }
    check_layers(name, c->threads, &run);
    if (c->threads == 1)
        check_graph_layers(name, &run, t);
    if (c->real != NULL && full_sizes)
        skip("%s: not compared with %s at full sizes (its prompts and steps are the real run's at check sizes only)",
             name, c->real);
    else if (c->real != NULL)
        real_trace_check(name, c, t);
    check_timing(name, c->threads, scenario_sequences(scn), &run, t, trace_path);
    check_round_trip(c, name, app, scn, trace_path, t, prefix);
    obs_trace_free(t);
    pc_run_free(&run);
    run_result_free(&plain);
    run_result_free(&shimmed);
    remove(log_path);
    remove(trace_path);
}

/* ---- the parser ------------------------------------------------------------------------------ */

/* Every scenario file parses (and passes the fuzz body's invariants); bad
 * inputs give one error naming their line. */
/* Every mangled (_Z) kernel name of the corpus is one a C++ compiler could
 * have made: c++filt demangles it (a name it cannot demangle comes back
 * unchanged). names: one per line. */
static void names_demangle(const char *names_path, size_t count)
{
    char cmd[4400], line[SCN_NAME_MAX + 2], *mangled = NULL;
    size_t cap = 0, bad = 0, seen = 0;
    FILE *in, *out;
    if (system("command -v c++filt >/dev/null 2>&1") != 0) {
        skip("c++filt (binutils) missing: the corpus' mangled names are not checked");
        return;
    }
    snprintf(cmd, sizeof cmd, "c++filt < '%s'", names_path);
    in = fopen(names_path, "r");
    out = popen(cmd, "r");
    while (in != NULL && out != NULL && getline(&mangled, &cap, in) > 0 && fgets(line, sizeof line, out) != NULL) {
        seen++;
        if (strcmp(line, mangled) == 0) {
            bad++;
            diag("not a valid mangled name: %s", mangled);
        }
    }
    free(mangled);
    if (in != NULL)
        fclose(in);
    if (out != NULL)
        pclose(out);
    ok(count > 0 && seen == count && bad == 0, "the corpus' %zu mangled kernel names all demangle (%zu do not)", count,
       bad);
}

static void parser_cases(void)
{
    static const struct {
        const char *text, *error;
    } bad[] = {
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=1 steps=1\nbogus 1\n", "line 4: unknown directive"},
        {"kernel id=a grid=1 name=x\nlayer b\n", "line 2: layer: unknown kernel"},
        {"kernel id=a grid=1t+ name=x\n", "line 1: grid"},
        {"kernel id=a grid=1 name=x\nkernel id=a grid=2 name=y\n", "line 2: kernel a defined twice"},
        {"kernel id=a grid=1 name=x\nlayer a:q\n", "line 2: layer: 'a:q': suffix"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=0 steps=1\n", "line 3: tokens=: 0 is under 1"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=99999999999 steps=1\n", "line 3: tokens=:"},
        {"kernel id=a grid=1 name=x\nlayer a\n", "line 3: no prompt"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=1 steps=1\ngraph warmup\nstream default\n",
         "graph capture needs"},
        {"kernel id=a grid=1 name=x\nlayer a\nlayers 1000\n", "line 3: layers: 1000 is over 256"},
        {"kernel id=a grid=1 name=x\nlayer a h2d:t\n", "line 2: layer: 'h2d:t': a number of bytes"},
        {"kernel id=a grid=1 name=x\nlayer a d2h:8x\n", "line 2: layer:"},
        {"kernel id=a grid=1 name=x\nlayer a memset:99999999\n", "line 2: layer:"},
        {"kernel id=a grid=1 name=x\nlayer a sync:q\n", "line 2: layer: 'sync:q': suffix"},
        {"kernel id=a grid=1 name=x\nlayer sync h2d:4\nprompt tokens=1 steps=1\n", "no kernels in pre, layer or post"},
        {"kernel id=a grid=1 name=x\nlayer a\nbefore_prompt h2d:4 a\nprompt tokens=1 steps=1\n",
         "before_prompt: calls only"},
        {"kernel id=a grid=1 name=x\nlayer a\nafter_generation a\nprompt tokens=1 steps=1\n",
         "after_generation: calls only"},
        {"kernel id=a grid=1 name=x\nlayer a sync\nprompt tokens=1 steps=1\ngraph warmup\nstream own\n",
         "with a graph"},
        {"kernel id=a grid=1 name=\x01\n", "line 1: a character that is not printable ASCII"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=9 steps=1\nchunk 4\nchunk_read yes\nreadback none\n",
         "'chunk_read yes' reads a chunk back as 'readback' does: not with 'readback none'"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=1 steps=1\nreadback never\n",
         "line 4: readback: unknown value 'never'"},
        {"kernel id=a grid=1 name=x\nlayer a\nprompt tokens=4 steps=0 reads=65\n", "line 3: reads=: 65 is over 64"},
    };
    const char *srcdir = getenv("OBS_SRCDIR") ? getenv("OBS_SRCDIR") : ".";
    struct scenario s;
    char err[256], path[4600], long_line[2000];
    size_t i, files = 0, parsed = 0;

    char dir_path[4200], names_path[] = "/tmp/t_scenarios-names-XXXXXX";
    DIR *dir;
    struct dirent *e;
    int names_fd = mkstemp(names_path);
    FILE *names = names_fd >= 0 ? fdopen(names_fd, "w") : NULL;
    size_t mangled = 0;

    snprintf(dir_path, sizeof dir_path, "%s/tests/scenarios", srcdir);
    dir = opendir(dir_path);
    while (dir != NULL && (e = readdir(dir)) != NULL) {
        char *text, stem[256];
        size_t len = 0, nl = strlen(e->d_name);
        if (nl < 5 || nl >= sizeof stem || strcmp(e->d_name + nl - 4, ".scn") != 0)
            continue;
        memcpy(stem, e->d_name, nl - 4);
        stem[nl - 4] = '\0';
        snprintf(path, sizeof path, "%s/%s", dir_path, e->d_name);
        text = test_read_file(path, &len);
        files++;
        if (text == NULL)
            continue;
        obs_fuzz_scenario((const uint8_t *)text, len);
        if (scenario_parse(text, len, &s, err, sizeof err) == 0 && strcmp(s.name, stem) == 0) {
            int k;
            parsed++;
            for (k = 0; k < s.nkernels && names != NULL; k++)
                if (strncmp(s.kernels[k].name, "_Z", 2) == 0) {
                    fprintf(names, "%s\n", s.kernels[k].name);
                    mangled++;
                }
        } else
            diag("%s: %s (name %s)", path, err, s.name);
        free(text);
    }
    if (dir != NULL)
        closedir(dir);
    ok(files >= 11 && files == parsed, "the %zu scenario files parse, each named after its file", files);
    if (names != NULL) {
        fclose(names);
        names_demangle(names_path, mangled);
        unlink(names_path);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = scenario_parse(bad[i].text, strlen(bad[i].text), &s, err, sizeof err);
        obs_fuzz_scenario((const uint8_t *)bad[i].text, strlen(bad[i].text));
        ok(rc != 0 && strstr(err, bad[i].error) != NULL, "bad scenario %zu: '%s' (got '%s')", i + 1, bad[i].error,
           err);
    }
    memset(long_line, 'a', sizeof long_line);
    ok(scenario_parse(long_line, sizeof long_line, &s, err, sizeof err) != 0 && strstr(err, "longer than") != NULL,
       "a line over %d characters is refused (%s)", SCN_LINE_MAX, err);
}

/* OBS_SIM_SYNC_WAIT=1 makes host time follow the cost model: a prefill of
 * one kernel of 500 x 8000 blocks of 256 threads costs 2 us + 1.024e9 / 64
 * ns = 16.002 ms of virtual time (sim/cost_model.h). With the option
 * the prefill's token read waits for it (a "wait" line in the log with
 * OBS_SIM_LOG_WAITS=1) and the replay's TTFT is at least that (a lower
 * bound a busy host can only widen); without it no call waits. Which calls
 * waited is read from the log, never timed. */
static size_t wait_lines(const char *log_path)
{
    FILE *f = fopen(log_path, "r");
    char line[512];
    size_t n = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        n += strncmp(line, "sim_clock_wait\twait\t", 20) == 0;
    if (f != NULL)
        fclose(f);
    return n;
}

static void sync_wait_case(int hip)
{
    static const char text[] = "name sync_wait_probe\n"
                               "kernel id=big grid=8000t name=_Z3bigPf\n"
                               "layer big\n"
                               "readback copy\n"
                               "stream default\n"
                               "prompt tokens=500 steps=2\n";
    const double model_ms = 16.002;
    char scn[4200], log_path[4200], log_env[4300], libpath[4200], app[4200];
    int wait;
    FILE *f;

    snprintf(app, sizeof app, "%s", shim_build_path(hip ? "tests/apps/llm_replay_hip" : "tests/apps/llm_replay"));
    snprintf(scn, sizeof scn, "%s/sync_wait.scn", test_tmpdir());
    f = fopen(scn, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0)
        bail("cannot write %s", scn);
    for (wait = 0; wait < 2; wait++) {
        const char *argv[] = {app, scn, NULL};
        const char *env[] = {log_env, libpath, wait ? "OBS_SIM_SYNC_WAIT=1" : "OBS_SIM_SYNC_WAIT=0",
                             "OBS_SIM_LOG_WAITS=1", NULL};
        struct run_result res;
        struct pc_run run;
        double ttft_ms = -1;
        size_t waits;
        snprintf(log_path, sizeof log_path, "%s/sync-wait-log-%d-%d", test_tmpdir(), hip, wait);
        remove(log_path);
        snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
        snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
        shim_run(argv, env, 0, 60, &res);
        pc_read_log(log_path, &run);
        waits = wait_lines(log_path);
        if (run.ntiming == 1)
            ttft_ms = (double)run.timing[0].ttft_ns / 1e6;
        diag("FIGURES sync_wait%s OBS_SIM_SYNC_WAIT=%d: replay TTFT %.3f ms, cost model %.3f ms, %zu waits", hip ? " hip" : "",
             wait, ttft_ms, model_ms, waits);
        /* Three token reads (prefill, 2 steps), each one synchronous copy. */
        if (wait)
            ok(res.exited && res.status == 0 && waits == 3 && ttft_ms >= model_ms,
               "%s OBS_SIM_SYNC_WAIT=1: each of the 3 token reads waits for the device (%zu waits); TTFT %.3f ms >= "
               "the cost model's %.3f ms",
               hip ? "HIP" : "CUDA", waits, ttft_ms, model_ms);
        else
            ok(res.exited && res.status == 0 && waits == 0 && ttft_ms >= 0,
               "%s OBS_SIM_SYNC_WAIT=0: no host call waits (%zu waits)", hip ? "HIP" : "CUDA", waits);
        pc_run_free(&run);
        run_result_free(&res);
    }
}

int main(int argc, char **argv)
{
    size_t i;
    const char *full = getenv("OBS_SCENARIOS_FULL"), *only = argc > 1 ? argv[1] : getenv("OBS_SCENARIO");
    plan_lazy();
    full_sizes = full != NULL && strcmp(full, "1") == 0;
    if (only == NULL || *only == '\0' || strcmp(only, "parser") == 0)
        parser_cases();
    if (only == NULL || *only == '\0' || strcmp(only, "sync_wait") == 0) {
        sync_wait_case(0);
        sync_wait_case(1);
    }
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (only == NULL || *only == '\0' || strcmp(only, cases[i].file) == 0)
            run_scenario(&cases[i]);
    return 0;
}
