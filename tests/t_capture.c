/* Capture windows (OBS_CAPTURE, OBS_RECORD=window; docs/capture.md):
 *   - the parser: good texts and their canonical form, bad ones refused at
 *     their column, the kept fuzz corpus (tests/fuzz/capture_spec_corpus)
 *     replayed through the fuzz body;
 *   - under the shim, on the simulators, against the programs' own truth
 *     in the ground-truth log (OBS_SIM_LOG: the simulators log the
 *     profiler's start and stop like any call, the programs write their
 *     ranges there): the start lies just before the first launch of the
 *     window's first truth instance, every launch, copy, memset and sync of
 *     its instances lies between start and stop, no launch of another
 *     instance does, and the next launch after the stop is a later
 *     instance's. Programs: tests/apps/llm_loop and tests/apps/llm_replay
 *     (the serving replay vllm_graphs: graphs captured at start-up, requests
 *     back to back; hf_generate; two threads), HIP (hipProfilerStart and
 *     roctx's ProfilerResume through the roctx stand-in), the reference
 *     workload (obs_cuda on the simulated runtime; obs_cuda_static, NVIDIA's
 *     static runtime on the simulated driver: cuProfilerStart), steps,
 *     iterations and generations; PyTorch's generate() (fw_generate.py
 *     llama) and transformers' generate_batch serving loop (fw_serving.py:
 *     iterations:2-4 and 9-11 against its ITERATION/k truth) on the
 *     simulated driver when the frameworks' environment is there (else a
 *     skip saying so);
 *   - a bad setting (one warning with the column and a caret, nothing
 *     captured, the program's output unchanged), a window that never begins;
 *   - OBS_RECORD=window: the trace holds exactly the log's calls between
 *     the start and the stop, says how many it left out (their indexes
 *     taken, nothing lost, all in SELF_COST), every report reads it, GPU
 *     time has no span without its call; and with OBS_RECORD=all the same
 *     program's windows open and close at the same calls, whose labels are
 *     the same;
 *   - obs-run --capture says what it captures and the profilers' command
 *     lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/capture_spec.h"
#include "capture_spec_fuzz.h"
#include "corpus_replay.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"
#include "workload_bins.h"

/* ---- the parser ------------------------------------------------------------------------------ */

static void test_parser(void)
{
    static const struct {
        const char *text, *canonical;
    } good[] = {
        {"steps:2-5", "steps:2-5"},
        {" Steps : 3 ", "steps:3"},
        {"step:0-0", "steps:0"},
        {"steps:2-5@generation:1", "steps:2-5@generation:1"},
        {"steps:2 - 5 @ gen : 7", "steps:2-5@generation:7"},
        {"iterations:10-20", "iterations:10-20"},
        {"iter:4", "iterations:4"},
        {"ITERATION:1-2", "iterations:1-2"},
        {"generation:3", "generation:3"},
        {"gen:1-2,steps:4", "generation:1-2,steps:4"},
        {"generations:0", "generation:0"},
        {"off", "off"},
        {"steps:4294967294", "steps:4294967294"},
    };
    static const struct {
        const char *text;
        size_t column;
        const char *what;
    } bad[] = {
        {"", 1, "expected a window"},
        {"tokens:1", 1, "expected steps, iterations or generation"},
        {"steps", 6, "expected ':'"},
        {"steps:", 7, "expected a number"},
        {"steps:x", 7, "expected a number"},
        {"steps:5-2", 7, "ends before it begins"},
        {"steps:2-", 9, "expected a number"},
        {"steps:4294967295", 16, "number too large"},
        {"iterations:1@generation:2", 13, "only steps"},
        {"steps:1@step:2", 9, "expected 'generation'"},
        {"steps:1@gen", 12, "expected ':'"},
        {"steps:1;steps:2", 8, "expected ','"},
        {"steps:1,", 9, "expected steps"},
        {"steps:1,,steps:2", 9, "expected steps"},
        {"steps:1,steps:2,steps:3,steps:4,steps:5,steps:6,steps:7,steps:8,steps:9", 65, "too many windows"},
    };
    struct obs_capture_spec spec;
    struct obs_capture_spec_error err;
    char text[512], words[256];
    size_t i;

    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = obs_capture_spec_parse(good[i].text, &spec, &err);
        obs_capture_spec_format(&spec, text, sizeof text);
        ok(rc == 0 && strcmp(text, good[i].canonical) == 0, "OBS_CAPTURE='%s' parses, as %s", good[i].text,
           good[i].canonical);
        if (rc != 0 || strcmp(text, good[i].canonical) != 0)
            diag("got rc %d (%s at column %zu), formatted %s", rc, err.what, err.column, text);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = obs_capture_spec_parse(bad[i].text, &spec, &err);
        ok(rc == -1 && err.column == bad[i].column && strstr(err.what, bad[i].what) != NULL && spec.n == 0,
           "OBS_CAPTURE='%s' is refused at column %zu (%s), no window", bad[i].text, bad[i].column, bad[i].what);
        if (rc != -1 || err.column != bad[i].column || strstr(err.what, bad[i].what) == NULL)
            diag("got rc %d column %zu: %s", rc, err.column, err.what);
    }
    obs_capture_spec_parse("steps:2-5,steps:3@gen:1,iter:0-9,generation:2", &spec, &err);
    obs_capture_window_describe(&spec.w[0], words, sizeof words);
    is_string("decode steps 2 to 5 of the first generation that has them", words, "steps:2-5 in words");
    obs_capture_window_describe(&spec.w[1], words, sizeof words);
    is_string("decode step 3 of generation 1", words, "steps:3@gen:1 in words");
    obs_capture_window_describe(&spec.w[2], words, sizeof words);
    is_string("iterations 0 to 9 of the first thread that has them (prompts, decode steps and serving iterations)", words,
              "iter:0-9 in words");
    obs_capture_window_describe(&spec.w[3], words, sizeof words);
    is_string("generation 2", words, "generation:2 in words");
}

static void test_corpus(void)
{
    const char *dir = test_path(test_srcdir(), "tests/fuzz/capture_spec_corpus");
    size_t failed, files = fuzz_corpus_replay(dir, obs_fuzz_capture_spec, &failed);
    if (files == (size_t)-1) {
        ok(0, "corpus directory %s readable", dir);
        return;
    }
    ok(files >= 20 && failed == 0, "fuzz corpus replayed: %zu files, %zu unreadable", files, failed);
}

/* ---- the ground-truth log ------------------------------------------------------------------ */

enum line_kind { LINE_OTHER = 0, LINE_LAUNCH, LINE_CALL, LINE_START, LINE_STOP };

struct cline {
    size_t number; /* 1-based line of the file */
    long tid;      /* 7th column, 0 without it */
    char api[48];
    uint8_t kind;  /* enum line_kind */
    long inst;     /* the truth instance it lies in (index into clog.inst), -1: none */
};

struct cinst {
    long tid, gen, step; /* step -1: the prompt (PREFILL); a serving loop's ITERATION/k: k */
    int iteration;       /* an ITERATION/k range (fw_truth.py's Serving) */
};

struct clog {
    struct cline *l;
    size_t n;
    struct cinst *inst;
    size_t ninst;
    size_t starts, stops; /* profiler lines */
};

#define MAX_THREADS 16
#define MAX_DEPTH 16

struct truth_thread {
    long tid, gens;
    int depth;
    long inst[MAX_DEPTH]; /* per open range: its instance, or the one it lies in */
};

static int is_truth_range(char *const *f)
{
    size_t n = strlen(f[0]);
    return strcmp(f[1], "range") == 0 && strcmp(f[3], "-") == 0 &&
           ((n > 9 && strcmp(f[0] + n - 9, "RangePush") == 0) || (n > 10 && strcmp(f[0] + n - 10, "RangePushA") == 0) ||
            (n > 8 && strcmp(f[0] + n - 8, "RangePop") == 0));
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? *cap * 2 : 1024;
    p = realloc(p, *cap * size);
    if (p == NULL)
        bail("out of memory");
    return p;
}

/* The profiler's start and stop, whichever family made them. */
static int profiler_line(const char *api)
{
    static const char *const starts[] = {"cudaProfilerStart", "cuProfilerStart", "hipProfilerStart",
                                         "roctxProfilerResume"};
    static const char *const stops[] = {"cudaProfilerStop", "cuProfilerStop", "hipProfilerStop",
                                        "roctxProfilerPause"};
    size_t i;
    for (i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        if (strcmp(api, starts[i]) == 0)
            return LINE_START;
        if (strcmp(api, stops[i]) == 0)
            return LINE_STOP;
    }
    return LINE_OTHER;
}

/* The log's lines with their truth instance: a prompt (PREFILL), a decode
 * step (DECODE/STEP_k) or a serving loop's iteration (ITERATION/k) of the
 * thread's current generation (its PREFILL and ITERATION/0 ranges so far,
 * from 0); ranges inside them (KV_GATHER) are theirs. */
static void clog_read(const char *path, struct clog *L)
{
    char *text = test_read_file(path, NULL), *line, *save = NULL;
    struct truth_thread th[MAX_THREADS];
    size_t nth = 0, cap = 0, icap = 0, number = 0;

    memset(L, 0, sizeof *L);
    if (text == NULL)
        return;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *f[8] = {0}, *p = line;
        struct truth_thread *t = NULL;
        int nf = 0, k;
        long tid;
        number++;
        while (nf < 8) {
            f[nf++] = p;
            p = strchr(p, '\t');
            if (p == NULL)
                break;
            *p++ = '\0';
        }
        if (nf < 6)
            continue;
        tid = nf >= 7 ? strtol(f[6], NULL, 10) : 0;
        for (k = 0; k < (int)nth && t == NULL; k++)
            if (th[k].tid == tid)
                t = &th[k];
        if (t == NULL && nth < MAX_THREADS) {
            t = &th[nth++];
            memset(t, 0, sizeof *t);
            t->tid = tid;
        }
        if (t == NULL)
            continue;
        if (is_truth_range(f)) {
            if (strstr(f[0], "Pop") != NULL) {
                if (t->depth > 0)
                    t->depth--;
                continue;
            }
            if (t->depth >= MAX_DEPTH)
                continue;
            if (strcmp(f[2], "PREFILL") == 0 || strncmp(f[2], "DECODE/STEP_", 12) == 0 ||
                strncmp(f[2], "ITERATION/", 10) == 0) {
                int prefill = f[2][0] == 'P', iteration = f[2][0] == 'I';
                long step = iteration ? strtol(f[2] + 10, NULL, 10) : prefill ? -1 : strtol(f[2] + 12, NULL, 10);
                L->inst = grow(L->inst, &icap, L->ninst, sizeof *L->inst);
                if (prefill || (iteration && step == 0))
                    t->gens++;
                L->inst[L->ninst] = (struct cinst){tid, t->gens - 1, step, iteration};
                t->inst[t->depth++] = (long)L->ninst++;
            } else {
                t->inst[t->depth] = t->depth > 0 ? t->inst[t->depth - 1] : -1;
                t->depth++;
            }
            continue;
        }
        L->l = grow(L->l, &cap, L->n, sizeof *L->l);
        {
            struct cline *c = &L->l[L->n++];
            memset(c, 0, sizeof *c);
            c->number = number;
            c->tid = tid;
            snprintf(c->api, sizeof c->api, "%s", f[0]);
            c->inst = t->depth > 0 ? t->inst[t->depth - 1] : -1;
            c->kind = (uint8_t)profiler_line(f[0]);
            if (c->kind == LINE_OTHER && (strcmp(f[1], "kernel") == 0 || strcmp(f[1], "graph") == 0))
                c->kind = LINE_LAUNCH;
            else if (c->kind == LINE_OTHER &&
                     (strcmp(f[1], "memcpy") == 0 || strcmp(f[1], "memset") == 0 || strcmp(f[1], "sync") == 0))
                c->kind = LINE_CALL;
            L->starts += c->kind == LINE_START;
            L->stops += c->kind == LINE_STOP;
        }
    }
    free(text);
}

static void clog_free(struct clog *L)
{
    free(L->l);
    free(L->inst);
    memset(L, 0, sizeof *L);
}

/* The instance (tid, gen, step) of the truth, -1 when none. */
static long find_inst(const struct clog *L, long tid, long gen, long step)
{
    size_t i;
    for (i = 0; i < L->ninst; i++)
        if (L->inst[i].tid == tid && L->inst[i].gen == gen && L->inst[i].step == step)
            return (long)i;
    return -1;
}

/* The first truth instance of step `step` on thread want_tid that has a
 * launch, in log order (the window's generation for steps:A-B): *tid,
 * *gen. */
static long first_with_step(const struct clog *L, long step, long want_tid, long *tid, long *gen)
{
    size_t i;
    for (i = 0; i < L->n; i++) {
        const struct cline *c = &L->l[i];
        if (c->kind == LINE_LAUNCH && c->inst >= 0 && L->inst[c->inst].step == step && c->tid == want_tid) {
            *tid = c->tid;
            *gen = L->inst[c->inst].gen;
            return c->inst;
        }
    }
    return -1;
}

/* The nth profiler line of kind `kind` (LINE_START or LINE_STOP) of the
 * family whose api begins with `prefix` ("" any), from 0; -1 when none. */
static long nth_profiler(const struct clog *L, int kind, const char *prefix, size_t nth)
{
    size_t i;
    for (i = 0; i < L->n; i++)
        if (L->l[i].kind == kind && strncmp(L->l[i].api, prefix, strlen(prefix)) == 0 && nth-- == 0)
            return (long)i;
    return -1;
}

/* The window [start, stop] (indexes of the profiler lines) against the
 * truth instances first .. last of thread tid: five checks. */
static void check_window(const struct clog *L, const char *label, long start, long stop, long first, long last,
                         long tid)
{
    long i, first_launch = -1, before = 0, outside_calls = 0, wrong_launches = 0, next_after = -1;
    char what[64] = "";
    int in_order = start >= 0 && stop > start && first >= 0 && last >= first;

    if (!ok(in_order, "%s: a start and a stop, the truth's instances found (start line %ld, stop line %ld, "
                      "instances %ld..%ld)", label, start >= 0 ? (long)L->l[start].number : -1L,
            stop >= 0 ? (long)L->l[stop].number : -1L, first, last)) {
        skip_block(4, "%s: nothing to compare", label);
        return;
    }
    for (i = 0; i < (long)L->n; i++) {
        const struct cline *c = &L->l[i];
        int mine = c->inst >= first && c->inst <= last && c->tid == tid;
        if (c->tid != tid)
            continue;
        if (i > start && first_launch < 0 && c->kind == LINE_LAUNCH)
            first_launch = i;
        if (i < start && c->inst == first && c->kind == LINE_LAUNCH)
            before++;
        if (mine && (c->kind == LINE_LAUNCH || c->kind == LINE_CALL) && (i < start || i > stop)) {
            if (outside_calls++ == 0)
                snprintf(what, sizeof what, "%s at line %zu", c->api, c->number);
        }
        if (!mine && c->kind == LINE_LAUNCH && i > start && i < stop)
            wrong_launches++;
        if (i > stop && next_after < 0 && c->kind == LINE_LAUNCH)
            next_after = i;
    }
    ok(first_launch >= 0 && L->l[first_launch].inst == first && before == 0,
       "%s: the start lies just before the first launch of the window's first instance (line %zu, the launch at "
       "%zu; its launches before the start: %ld)",
       label, L->l[start].number, first_launch >= 0 ? L->l[first_launch].number : 0, before);
    ok(outside_calls == 0, "%s: every launch, copy, memset and sync of instances %ld..%ld lies between start and stop "
                           "(outside: %ld%s%s)", label, first, last, outside_calls, what[0] ? ", the first " : "", what);
    ok(wrong_launches == 0, "%s: no launch of another instance between start and stop (%ld)", label, wrong_launches);
    ok(next_after < 0 || L->l[next_after].inst > last || L->l[next_after].inst < 0,
       "%s: the first launch after the stop is a later instance's (line %zu)", label,
       next_after >= 0 ? L->l[next_after].number : 0);
}

/* ---- running programs --------------------------------------------------------------------------- */

struct crun {
    struct run_result res;
    char log[4200], prefix[4200], obs[4300];
    struct clog L;
};

enum {
    RUN_PRELOAD = 1, /* the shim in LD_PRELOAD (else: not, or obs-run puts it there) */
    RUN_HIP = 2,     /* the roctx stand-in on the library path, no NVTX tool */
    RUN_NO_TID = 4   /* no OBS_SIM_LOG_TID: the program's truth lines have no thread column (llm_loop) */
};

/* argv on the simulated runtimes, with OBS_SIM_LOG (and OBS_SIM_LOG_TID=1
 * unless RUN_NO_TID) and `extra` ("NAME=value", NULL-terminated). */
static void crun_exec(struct crun *r, const char *tag, const char *const argv[], const char *const *extra, int flags)
{
    static int serial;
    const char *env[24];
    size_t n;

    memset(r, 0, sizeof r->res);
    snprintf(r->log, sizeof r->log, "%s/%s-%d.log", test_tmpdir(), tag, ++serial);
    snprintf(r->prefix, sizeof r->prefix, "%s/%s-%d", test_tmpdir(), tag, serial);
    snprintf(r->obs, sizeof r->obs, "%s.obs", r->prefix);
    n = sim_ranges_env(env, r->log, r->prefix, flags & RUN_HIP);
    if (!(flags & RUN_NO_TID))
        env[n++] = "OBS_SIM_LOG_TID=1";
    env[n++] = "OBS_SUMMARY=0";
    env[n++] = "OBS_TRACE=none";
    while (extra != NULL && *extra != NULL && n < 23)
        env[n++] = *extra++;
    env[n] = NULL;
    shim_run(argv, env, flags & RUN_PRELOAD, 300, &r->res);
    if (!r->res.exited || r->res.status != 0) {
        diag("%s: exit %d signal %d", tag, r->res.status, r->res.signal);
        diag_text("stderr", r->res.err);
    }
    clog_read(r->log, &r->L);
}

static void crun_free(struct crun *r)
{
    run_result_free(&r->res);
    clog_free(&r->L);
}

/* One window of steps A..B (gen: the truth's generation, -1: the first
 * that has step A) checked in r's log, the nth start/stop pair of the
 * family `family` ("" any). With gen -1, on the thread the start was made
 * on: the window is the first thread's whose phases reach step A, which
 * need not be the first truth range of step A in the log (two threads: one
 * preempted between its range line and its launch's wrapper). */
static void check_steps(const struct crun *r, const char *label, long a, long b, long gen, size_t nth,
                        const char *family)
{
    long tid = 0, g = gen, first = -1, last;
    if (gen < 0) {
        long start = nth_profiler(&r->L, LINE_START, family, nth);
        first = first_with_step(&r->L, a, start >= 0 ? r->L.l[start].tid : 0, &tid, &g);
    } else {
        size_t i;
        for (i = 0; i < r->L.ninst && first < 0; i++)
            if (r->L.inst[i].gen == gen && r->L.inst[i].step == a) {
                first = (long)i;
                tid = r->L.inst[i].tid;
            }
    }
    last = find_inst(&r->L, tid, g, b);
    check_window(&r->L, label, nth_profiler(&r->L, LINE_START, family, nth), nth_profiler(&r->L, LINE_STOP, family, nth),
                 first, last, tid);
}

static const char *llm_replay(void)
{
    return shim_build_path("tests/apps/llm_replay");
}

static const char *scenario(const char *name)
{
    static char path[4][4200];
    static int slot;
    char rel[256];
    snprintf(rel, sizeof rel, "tests/scenarios/%s.scn", name);
    slot = (slot + 1) % 4;
    snprintf(path[slot], sizeof path[slot], "%s", test_path(test_srcdir(), rel));
    return path[slot];
}

/* ---- the cases ------------------------------------------------------------------------------ */

/* llm_loop: two prompts of 8 steps; steps:2-5 and generation:1 at once. */
static void test_llm_loop(void)
{
    const char *argv[] = {shim_build_path("tests/apps/llm_loop"), "--prompts", "3", "--steps", "8", NULL};
    const char *extra[] = {"OBS_CAPTURE=steps:2-5,generation:2", NULL};
    struct crun r;
    long g2_first, g2_last = -1;
    size_t i;

    crun_exec(&r, "llm_loop", argv, extra, RUN_PRELOAD | RUN_NO_TID);
    ok(run_exited_with(&r.res, 0), "llm_loop under the shim with OBS_CAPTURE exits 0");
    is_int(2, (long long)r.L.starts, "llm_loop: two cudaProfilerStart lines (two windows, apart)");
    is_int(2, (long long)r.L.stops, "llm_loop: two cudaProfilerStop lines");
    check_steps(&r, "llm_loop steps:2-5", 2, 5, -1, 0, "cudaProfiler");
    g2_first = r.L.ninst > 0 ? find_inst(&r.L, r.L.inst[0].tid, 2, -1) : -1;
    for (i = 0; i < r.L.ninst; i++)
        if (r.L.inst[i].gen == 2)
            g2_last = (long)i;
    check_window(&r.L, "llm_loop generation:2", nth_profiler(&r.L, LINE_START, "cudaProfiler", 1),
                 nth_profiler(&r.L, LINE_STOP, "cudaProfiler", 1), g2_first, g2_last,
                 r.L.ninst > 0 ? r.L.inst[0].tid : 0);
    crun_free(&r);
}

/* The serving replay: vLLM with graphs captured at start-up (a warm-up the
 * engine takes the labels off later: no iteration), requests back to back. */
static void test_serving(void)
{
    const char *argv[] = {llm_replay(), scenario("vllm_graphs"), NULL};
    const char *steps[] = {"OBS_CAPTURE=steps:2-5", NULL};
    const char *iters[] = {"OBS_CAPTURE=iterations:13-16", NULL};
    const char *gens[] = {"OBS_CAPTURE=generation:1", NULL};
    struct crun r;
    long first, last = -1, tid;
    size_t i;

    crun_exec(&r, "vllm-steps", argv, steps, RUN_PRELOAD);
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1,
       "vllm_graphs, steps:2-5: exit 0, one start, one stop (%zu, %zu)", r.L.starts, r.L.stops);
    check_steps(&r, "vllm_graphs steps:2-5", 2, 5, -1, 0, "");
    crun_free(&r);

    /* iterations 13..16: the instances of the thread in order, prompts and steps alike */
    crun_exec(&r, "vllm-iters", argv, iters, RUN_PRELOAD);
    tid = r.L.ninst > 0 ? r.L.inst[0].tid : 0;
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1 && r.L.ninst > 16,
       "vllm_graphs, iterations:13-16: exit 0, one start, one stop, %zu instances in the truth", r.L.ninst);
    check_window(&r.L, "vllm_graphs iterations:13-16", nth_profiler(&r.L, LINE_START, "", 0),
                 nth_profiler(&r.L, LINE_STOP, "", 0), 13, 16, tid);
    diag("vllm_graphs iterations 13..16 are the truth's %ld/%ld .. %ld/%ld (generation/step, -1 the prompt)",
         r.L.ninst > 16 ? r.L.inst[13].gen : -1, r.L.ninst > 16 ? r.L.inst[13].step : -1,
         r.L.ninst > 16 ? r.L.inst[16].gen : -1, r.L.ninst > 16 ? r.L.inst[16].step : -1);
    crun_free(&r);

    crun_exec(&r, "vllm-gen", argv, gens, RUN_PRELOAD);
    tid = r.L.ninst > 0 ? r.L.inst[0].tid : 0;
    first = find_inst(&r.L, tid, 1, -1);
    for (i = 0; i < r.L.ninst; i++)
        if (r.L.inst[i].gen == 1)
            last = (long)i;
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1,
       "vllm_graphs, generation:1: exit 0, one start, one stop");
    check_window(&r.L, "vllm_graphs generation:1", nth_profiler(&r.L, LINE_START, "", 0),
                 nth_profiler(&r.L, LINE_STOP, "", 0), first, last, tid);
    crun_free(&r);
}

/* Hugging Face generate() as the real trace runs it (three iterations a
 * step); and two threads: the window is the first thread's to reach it. */
static void test_generate_and_threads(void)
{
    const char *hf[] = {llm_replay(), scenario("hf_generate"), NULL};
    const char *two[] = {llm_replay(), "--threads", "2", scenario("tiny_loop"), NULL};
    const char *steps13[] = {"OBS_CAPTURE=steps:1-3@generation:2", NULL};
    const char *steps25[] = {"OBS_CAPTURE=steps:2-5", NULL};
    struct crun r;

    crun_exec(&r, "hf_generate", hf, steps13, RUN_PRELOAD);
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1,
       "hf_generate, steps:1-3@generation:2: exit 0, one start, one stop");
    check_steps(&r, "hf_generate steps:1-3@generation:2", 1, 3, 2, 0, "");
    crun_free(&r);

    crun_exec(&r, "threads", two, steps25, RUN_PRELOAD);
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1,
       "tiny_loop on 2 threads, steps:2-5: exit 0, one start and one stop for the process");
    check_steps(&r, "tiny_loop 2 threads steps:2-5", 2, 5, -1, 0, "");
    crun_free(&r);
}

/* HIP: hipProfilerStart/Stop, and roctx's ProfilerResume/Pause (the
 * stand-in, found as the shim's own roctx). */
static void test_hip(void)
{
    const char *argv[] = {shim_build_path("tests/apps/llm_replay_hip"), scenario("hf_eager"), NULL};
    const char *extra[] = {"OBS_CAPTURE=steps:1-4", NULL};
    struct crun r;
    crun_exec(&r, "hip", argv, extra, RUN_PRELOAD | RUN_HIP);
    ok(run_exited_with(&r.res, 0), "llm_replay_hip under the shim with OBS_CAPTURE exits 0");
    is_int(2, (long long)r.L.starts, "HIP: hipProfilerStart and roctxProfilerResume, once each");
    is_int(2, (long long)r.L.stops, "HIP: hipProfilerStop and roctxProfilerPause, once each");
    check_steps(&r, "HIP hipProfilerStart", 1, 4, -1, 0, "hipProfiler");
    check_steps(&r, "HIP roctxProfilerResume", 1, 4, -1, 0, "roctxProfiler");
    crun_free(&r);
}

/* The reference workload: its learning window (shape (a), docs/phases.md)
 * is in the first timed generation, whose first steps have live ranges one
 * launch off; a later generation is exact, on the simulated runtime and,
 * with nvcc's static runtime, on the simulated driver (cuProfilerStart). */
static void test_workload(void)
{
    size_t b;
    for (b = 0; b < 2; b++) {
        const struct workload_bin *bin = &workload_bins[b];
        const char *why = NULL, *path = workload_path(bin, &why);
        const char *extra[] = {"OBS_CAPTURE=steps:2-5@generation:2", NULL};
        const char *first_gen[] = {"OBS_CAPTURE=steps:2-5@generation:1", NULL};
        char label[96];
        struct crun r;
        if (path == NULL) {
            skip_block(6, "%s: %s", bin->label, why);
            continue;
        }
        {
            /* obs_cuda_static: NVIDIA's static runtime, the simulated driver of sim/.libs beneath it */
            const char *argv[] = {path, "--repeat", "3", "--decode", "16", NULL};
            crun_exec(&r, bin->label, argv, extra, RUN_PRELOAD);
            snprintf(label, sizeof label, "%s steps:2-5@generation:2", bin->label);
            ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1,
               "%s: exit 0, one start, one stop (%s)", label, bin->needs_sim ? "cudaProfilerStart" : "cuProfilerStart");
            check_steps(&r, label, 2, 5, 2, 0, bin->needs_sim ? "cudaProfiler" : "cuProfiler");
            crun_free(&r);
            if (bin->needs_sim) {
                long first, last, start, tid;
                crun_exec(&r, "obs_cuda-first", argv, first_gen, RUN_PRELOAD);
                tid = r.L.ninst > 0 ? r.L.inst[0].tid : 0;
                first = find_inst(&r.L, tid, 1, 2);
                last = find_inst(&r.L, tid, 1, 5);
                start = nth_profiler(&r.L, LINE_START, "", 0);
                ok_todo(start >= 0 && first >= 0 && start + 1 < (long)r.L.n && r.L.l[start + 1].inst == first &&
                            r.L.l[start + 1].kind == LINE_LAUNCH && last >= 0,
                        "the shape (a) learning window: live DECODE/STEP_2 of the first timed generation opens one "
                        "launch late (docs/capture.md, Limits)",
                        "obs_cuda steps:2-5@generation:1: the start just before truth step 2's first launch");
                crun_free(&r);
            }
        }
    }
}

/* A bad setting: one warning with its column and a caret, no capture, the
 * program's output as without it. A window that never begins: said at
 * exit, no profiler call. */
static void test_bad_and_never(void)
{
    const char *argv[] = {llm_replay(), scenario("tiny_loop"), NULL};
    const char *bad[] = {"OBS_CAPTURE=steps:5-2", NULL};
    const char *never[] = {"OBS_CAPTURE=steps:500-600", NULL};
    struct crun plain, r;
    const char *w;

    crun_exec(&plain, "plain", argv, NULL, 0);
    crun_exec(&r, "bad", argv, bad, RUN_PRELOAD);
    w = r.res.err != NULL ? strstr(r.res.err, "obsshim: warning: OBS_CAPTURE: the range ends before it begins at "
                                              "column 7; nothing is captured\n") : NULL;
    ok(w != NULL && strstr(w, "\nobsshim:   steps:5-2\nobsshim:         ^\n") != NULL,
       "OBS_CAPTURE=steps:5-2: one warning with the column and a caret under it");
    if (w == NULL)
        diag_text("stderr", r.res.err);
    is_int(1, (long long)warning_lines(r.res.err), "one warning line, nothing else");
    ok(run_exited_with(&r.res, 0) && plain.res.out != NULL && r.res.out != NULL &&
           strcmp(plain.res.out, r.res.out) == 0,
       "the program's exit status and stdout as without the shim");
    ok(r.L.starts == 0 && r.L.stops == 0, "no profiler call");
    crun_free(&r);
    crun_free(&plain);

    crun_exec(&r, "never", argv, never, RUN_PRELOAD);
    ok(run_exited_with(&r.res, 0) && r.L.starts == 0 && r.L.stops == 0 && r.res.err != NULL &&
           strstr(r.res.err, "OBS_CAPTURE: steps:500-600 (decode steps 500 to 600 of the first generation that has "
                             "them) never began") != NULL,
       "steps:500-600 in a run of 64 steps: no profiler call, said once at exit");
    crun_free(&r);
}

/* The calls of t on thread tid whose per-thread index lies strictly between
 * from and to, a line each: api, the range that labels it, its generation
 * and layer (malloc'ed). *n: how many. */
static char *labels_between(const struct obs_trace *t, uint64_t tid, uint64_t from, uint64_t to, size_t *n)
{
    size_t i, cap = 256, len = 0;
    char *text = malloc(cap);
    if (text == NULL)
        bail("out of memory");
    text[0] = '\0';
    *n = 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_phase *ph = c->phase != OBS_NONE ? &t->phases[c->phase] : NULL;
        char line[256];
        int k;
        if (t->threads[c->thread].tid != tid || c->index <= from || c->index >= to)
            continue;
        k = snprintf(line, sizeof line, "%s %s %ld %ld\n", obs_api_name(c->api), ph != NULL ? ph->name : "-",
                     ph != NULL ? (long)ph->generation : -1L, c->layer == OBS_NO_LAYER ? -1L : (long)c->layer);
        if (k < 0)
            continue;
        while (len + (size_t)k + 1 > cap) {
            cap *= 2;
            text = realloc(text, cap);
            if (text == NULL)
                bail("out of memory");
        }
        memcpy(text + len, line, (size_t)k + 1);
        len += (size_t)k;
        (*n)++;
    }
    return text;
}

static uint64_t meta_u64(const struct obs_trace *t, const char *key)
{
    const char *v = obs_trace_meta(t, key);
    return v != NULL ? strtoull(v, NULL, 10) : UINT64_MAX;
}

/* OBS_RECORD=window: the trace holds exactly the log's recorded calls
 * between the start and the stop, counts the rest, and every report reads
 * it; with GPU time, every span it holds has its call. */
static void test_record_window(void)
{
    const char *argv[] = {llm_replay(), scenario("vllm_graphs"), NULL};
    const char *extra[] = {"OBS_CAPTURE=steps:2-5", "OBS_RECORD=window", NULL};
    const char *gpu_extra[] = {"OBS_CAPTURE=steps:2-5", "OBS_RECORD=window", "OBS_GPU_TIME=events", NULL};
    static const char *const reports[] = {"summary", "phases", "csv", "json", "perfetto", "gaps", "top",
                                          "suggest-phases", "html"};
    struct crun r;
    struct obs_trace *t;
    long start, stop, i;
    size_t inside = 0, all = 0, before = 0, same = 0, k, in_bounds = 0, launches = 0, timed = 0;
    uint64_t tid, last_index = 0;
    const char *outside;
    int increasing = 1;

    crun_exec(&r, "record-window", argv, extra, RUN_PRELOAD);
    start = nth_profiler(&r.L, LINE_START, "", 0);
    stop = nth_profiler(&r.L, LINE_STOP, "", 0);
    t = shim_trace_open(r.obs);
    if (!ok(t != NULL && start >= 0 && stop > start, "OBS_RECORD=window: a trace, a start and a stop")) {
        skip_block(12, "nothing to compare");
        if (t != NULL)
            obs_trace_free(t);
        crun_free(&r);
        return;
    }
    for (i = 0; i < (long)r.L.n; i++) { /* the calls the shim records: its hooked entry points */
        const struct cline *c = &r.L.l[i];
        if (shim_api_index(c->api) < 0)
            continue;
        all++;
        before += i < start;
        if (i > start && i < stop) {
            if (inside < t->ncalls && strcmp(obs_api_name(t->calls[inside].api), c->api) == 0)
                same++;
            inside++;
        }
    }
    ok(inside > 0 && t->ncalls == inside && same == inside,
       "the trace holds the %zu calls between start and stop, in order, api by api (trace %zu, same %zu)", inside,
       t->ncalls, same);
    outside = obs_trace_meta(t, "record_window_outside_calls");
    ok(outside != NULL && strtoull(outside, NULL, 10) == all - inside && obs_trace_meta(t, "record") != NULL &&
           strcmp(obs_trace_meta(t, "record"), "window") == 0,
       "its meta: record=window, record_window_outside_calls=%zu (%s)", all - inside, outside ? outside : "none");
    ok(obs_trace_meta(t, "capture_0") != NULL && strcmp(obs_trace_meta(t, "capture_0"), "steps:2-5") == 0 &&
           obs_trace_meta(t, "capture_0_end") != NULL && strcmp(obs_trace_meta(t, "capture_0_end"), "after-last") == 0,
       "the window's bounds in the meta (capture_0=steps:2-5, capture_0_end=after-last)");
    /* The calls left out take their indexes all the same: what is there lies between the window's bounds. */
    tid = meta_u64(t, "capture_0_tid");
    for (k = 0; k < t->ncalls; k++) {
        const struct obs_call *c = &t->calls[k];
        if (t->threads[c->thread].tid == tid && c->index > meta_u64(t, "capture_0_start_index") &&
            c->index < meta_u64(t, "capture_0_stop_index"))
            in_bounds++;
        if (k > 0 && c->index <= last_index)
            increasing = 0;
        last_index = c->index;
    }
    ok(in_bounds == t->ncalls && increasing && meta_u64(t, "capture_0_start_index") >= before,
       "every call's index lies between capture_0_start_index and capture_0_stop_index, in order (%zu of %zu); the "
       "calls left out before took their indexes (the window opens at record %llu, after %zu calls)",
       in_bounds, t->ncalls, (unsigned long long)meta_u64(t, "capture_0_start_index"), before);
    ok(t->records_lost == 0 && t->nlost == 0 && t->ignored_bytes == 0 && t->bad_phase_records == 0 &&
           t->bad_layer_records == 0,
       "nothing counted lost, nothing ignored, every PHASE and LAYER record used (lost %llu, ignored %llu bytes, "
       "bad phase %llu, bad layer %llu)", (unsigned long long)t->records_lost, (unsigned long long)t->ignored_bytes,
       (unsigned long long)t->bad_phase_records, (unsigned long long)t->bad_layer_records);
    ok(t->self_calls == all, "its SELF_COST counts every call the shim made, those left out too (%llu, the log's %zu)",
       (unsigned long long)t->self_calls, all);

    obs_trace_free(t);

    for (k = 0; k < sizeof reports / sizeof reports[0]; k++) {
        char out[4400];
        const char *argv2[8];
        struct run_result res;
        size_t n = 0;
        argv2[n++] = shim_build_path("obs-report");
        argv2[n++] = reports[k];
        if (strcmp(reports[k], "top") == 0)
            argv2[n++] = "5";
        argv2[n++] = r.obs;
        if (strcmp(reports[k], "json") == 0 || strcmp(reports[k], "perfetto") == 0 || strcmp(reports[k], "html") == 0 ||
            strcmp(reports[k], "csv") == 0) {
            snprintf(out, sizeof out, "%s.%s", r.prefix, reports[k]);
            argv2[n++] = "-o";
            argv2[n++] = out;
        }
        argv2[n] = NULL;
        shim_run(argv2, NULL, 0, 120, &res);
        ok(run_exited_with(&res, 0) &&
               (strcmp(reports[k], "summary") != 0 ||
                (strstr(res.out, "  steps:2-5: thread ") != NULL &&
                 strstr(res.out, "Recorded: only the calls inside the windows (OBS_RECORD=window)") != NULL)),
           "obs-report %s reads it%s", reports[k],
           strcmp(reports[k], "summary") == 0 ? ", and says the window and what was left out" : "");
        run_result_free(&res);
    }
    crun_free(&r);

    /* GPU time: the calls left out are not timed; every span in the trace has its call. */
    argv[0] = llm_replay(); /* shim_build_path's buffers have turned over since */
    argv[1] = scenario("vllm_graphs");
    crun_exec(&r, "record-window-gpu", argv, gpu_extra, RUN_PRELOAD);
    t = shim_trace_open(r.obs);
    for (k = 0; t != NULL && k < t->ncalls; k++) {
        if (t->calls[k].kind != OBS_KIND_KERNEL && t->calls[k].kind != OBS_KIND_GRAPH)
            continue;
        launches++;
        timed += t->calls[k].gpu != OBS_NONE;
    }
    ok(t != NULL && launches > 0 && timed == launches && t->orphan_gpu_spans == 0 && t->missing_gpu_spans == 0,
       "OBS_RECORD=window with OBS_GPU_TIME=events: every launch it holds has its GPU time, no span without its call "
       "(%zu of %zu launches timed, orphans %llu, missing %llu)", timed, launches,
       t != NULL ? (unsigned long long)t->orphan_gpu_spans : 0ULL, t != NULL ? (unsigned long long)t->missing_gpu_spans : 0ULL);
    if (t != NULL)
        obs_trace_free(t);
    crun_free(&r);
}

/* OBS_RECORD=window changes nothing but what is stored: the windows open
 * and close at the same calls as with OBS_RECORD=all (the profiler's lines
 * at the same places of the log), and the calls inside carry the same
 * labels (the phase engine marks its places by the calls' indexes, which
 * the calls left out keep: obs_call_index). Windows whose instances count
 * from warm-ups the engine unlabels later (iterations, generations). */
static void test_record_window_same(void)
{
    static const char *const specs[] = {"steps:2-5", "generation:1", "iterations:13-16"};
    size_t s;
    for (s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        const char *argv[] = {llm_replay(), scenario("vllm_graphs"), NULL};
        char capture[64];
        const char *win[] = {capture, "OBS_RECORD=window", NULL}, *all[] = {capture, "OBS_RECORD=all", NULL};
        struct crun w, a;
        struct obs_trace *tw, *ta;
        long ws, we, as, ae;
        size_t nw = 0, na = 0;
        char *lw = NULL, *la = NULL;
        snprintf(capture, sizeof capture, "OBS_CAPTURE=%s", specs[s]);
        crun_exec(&w, "same-window", argv, win, RUN_PRELOAD);
        crun_exec(&a, "same-all", argv, all, RUN_PRELOAD);
        ws = nth_profiler(&w.L, LINE_START, "", 0);
        we = nth_profiler(&w.L, LINE_STOP, "", 0);
        as = nth_profiler(&a.L, LINE_START, "", 0);
        ae = nth_profiler(&a.L, LINE_STOP, "", 0);
        ok(ws >= 0 && we > ws && ws == as && we == ae && w.L.n == a.L.n,
           "%s: the start and the stop at the same calls with OBS_RECORD=window and all (log lines %zu..%zu, %zu..%zu)",
           specs[s], ws >= 0 ? w.L.l[ws].number : 0, we >= 0 ? w.L.l[we].number : 0, as >= 0 ? a.L.l[as].number : 0,
           ae >= 0 ? a.L.l[ae].number : 0);
        tw = shim_trace_open(w.obs);
        ta = shim_trace_open(a.obs);
        if (tw != NULL && ta != NULL) {
            lw = labels_between(tw, meta_u64(tw, "capture_0_tid"), meta_u64(tw, "capture_0_start_index"),
                                meta_u64(tw, "capture_0_stop_index"), &nw);
            la = labels_between(ta, meta_u64(ta, "capture_0_tid"), meta_u64(ta, "capture_0_start_index"),
                                meta_u64(ta, "capture_0_stop_index"), &na);
        }
        if (!ok(lw != NULL && la != NULL && nw == na && nw == tw->ncalls && nw > 0 && strcmp(lw, la) == 0,
                "%s: the window's %zu calls, api by api, with the same range, generation and layer as with "
                "OBS_RECORD=all (%zu there)", specs[s], nw, na)) {
            diag_text("OBS_RECORD=window", lw);
            diag_text("OBS_RECORD=all", la);
        }
        free(lw);
        free(la);
        if (tw != NULL)
            obs_trace_free(tw);
        if (ta != NULL)
            obs_trace_free(ta);
        crun_free(&w);
        crun_free(&a);
    }
}

/* obs-run --capture: OBS_CAPTURE set, one line on stderr with the words
 * and the profilers' command lines. */
static void test_obs_run(void)
{
    const char *argv[] = {shim_build_path("contrib/obs-run"), "--capture", "steps:2-5", "--", llm_replay(),
                          scenario("tiny_loop"), NULL};
    struct crun r;
    const char *line;
    crun_exec(&r, "obs-run", argv, NULL, 0);
    line = r.res.err != NULL ? strstr(r.res.err, "obs-run: --capture steps:2-5: ") : NULL;
    ok(run_exited_with(&r.res, 0) && line != NULL && strstr(line, "decode steps 2 to 5 of the first generation") &&
           strstr(line, "nsys profile --capture-range=cudaProfilerApi --capture-range-end=stop obs-run --capture "
                        "steps:2-5 -- ") != NULL &&
           strstr(line, "ncu --profile-from-start off obs-run --capture steps:2-5 -- ") != NULL &&
           strstr(line, "rocprofv3 --selected-regions") != NULL,
       "obs-run --capture steps:2-5 says what it captures and the nsys, ncu and rocprofv3 command lines");
    if (line == NULL)
        diag_text("stderr", r.res.err);
    check_steps(&r, "obs-run --capture steps:2-5", 2, 5, -1, 0, "");
    crun_free(&r);
}

/* transformers' generate_batch (fw_serving.py: its loop on a thread of its
 * own, 13 iterations, each an ITERATION/k of the truth from the forward's
 * pre-hook), two windows of iterations at once: 2-4 (the engine finds the
 * serving loop at iteration 2, the two before were live prompts, counted
 * as the forwards they are) and 9-11. Not from iteration 0: the main
 * thread's model set-up launches kernels first (its random
 * initialisation), a live instance the engine takes back later, so a
 * window from 0 is that thread's (docs/capture.md, "Limits"). */
static void test_frameworks_serving(const char *python)
{
    char script[4300];
    const char *argv[] = {shim_build_path("contrib/obs-run"), "--sim", "--capture", "iterations:2-4,iterations:9-11",
                          "--", python, script, "serving", NULL};
    const char *extra[] = {"OBS_CLOCK=monotonic", "PYTHONDONTWRITEBYTECODE=1", "LD_PRELOAD", NULL};
    static const long windows[2][2] = {{2, 4}, {9, 11}};
    struct crun r;
    long tid = -1;
    size_t i, iterations = 0;
    snprintf(script, sizeof script, "%s", test_path(test_srcdir(), "tests/frameworks/fw_serving.py"));
    crun_exec(&r, "fw-serving", argv, extra, 0);
    for (i = 0; i < r.L.ninst; i++)
        if (r.L.inst[i].iteration) {
            if (tid < 0)
                tid = r.L.inst[i].tid;
            iterations += r.L.inst[i].tid == tid;
        }
    ok(run_exited_with(&r.res, 0) && r.L.starts == 2 && r.L.stops == 2 &&
           nth_profiler(&r.L, LINE_START, "cuProfilerStart", 0) >= 0 && iterations > 11,
       "transformers' generate_batch (fw_serving.py serving), iterations:2-4,iterations:9-11: exit 0, two "
       "cuProfilerStart and two stops in the driver's log (%zu, %zu), %zu iterations in the truth", r.L.starts,
       r.L.stops, iterations);
    for (i = 0; i < 2; i++) {
        char label[96];
        long a = windows[i][0], b = windows[i][1];
        snprintf(label, sizeof label, "generate_batch iterations:%ld-%ld", a, b);
        check_window(&r.L, label, nth_profiler(&r.L, LINE_START, "", i), nth_profiler(&r.L, LINE_STOP, "", i),
                     find_inst(&r.L, tid, 0, a), find_inst(&r.L, tid, 0, b), tid);
    }
    crun_free(&r);
}

/* The same loop with the rule suggest-phases writes for it (OBS_ITERATION,
 * docs/phases.md "Rules"): every iteration is its own range from the first,
 * and the main thread's set-up launches open none, so a window from
 * iteration 0 is exact (the limit above, stated by the rule). */
static void test_frameworks_serving_rules(const char *python)
{
    char script[4300];
    const char *argv[] = {shim_build_path("contrib/obs-run"), "--sim", "--capture", "iterations:0-3",
                          "--", python, script, "serving", NULL};
    const char *extra[] = {"OBS_CLOCK=monotonic", "PYTHONDONTWRITEBYTECODE=1", "LD_PRELOAD",
                           "OBS_ITERATION=indexSelectSmallIndex,vectorized_gather_kernel", NULL};
    struct crun r;
    long tid = -1;
    size_t i;
    snprintf(script, sizeof script, "%s", test_path(test_srcdir(), "tests/frameworks/fw_serving.py"));
    crun_exec(&r, "fw-serving-rules", argv, extra, 0);
    for (i = 0; i < r.L.ninst && tid < 0; i++)
        if (r.L.inst[i].iteration)
            tid = r.L.inst[i].tid;
    ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1 && tid >= 0,
       "generate_batch with OBS_ITERATION, iterations:0-3: exit 0, one cuProfilerStart and one stop (%zu, %zu)",
       r.L.starts, r.L.stops);
    check_window(&r.L, "generate_batch with OBS_ITERATION, iterations:0-3", nth_profiler(&r.L, LINE_START, "", 0),
                 nth_profiler(&r.L, LINE_STOP, "", 0), find_inst(&r.L, tid, 0, 0), find_inst(&r.L, tid, 0, 3), tid);
    crun_free(&r);
}

/* PyTorch's generate() on the simulated driver: NVIDIA's runtime's
 * cudaProfilerStart reaches the driver, whose log says cuProfilerStart;
 * then transformers' serving loop. */
static void test_frameworks(void)
{
    const char *dir = getenv("OBS_FRAMEWORKS_ENV"), *home = getenv("HOME");
    char python[4300], script[4300];
    if (getenv("OBS_SANITIZE") != NULL) {
        skip_block(23, "PyTorch under a sanitizer: not run (t_frameworks says why)");
        return;
    }
    if (dir != NULL && *dir != '\0')
        snprintf(python, sizeof python, "%s/bin/python", dir);
    else
        snprintf(python, sizeof python, "%s/.cache/obsshim/frameworks/bin/python", home ? home : "");
    if (!test_executable(python)) {
        skip_block(23, "no frameworks' environment (%s): contrib/install-deps --frameworks makes it", python);
        return;
    }
    snprintf(script, sizeof script, "%s", test_path(test_srcdir(), "tests/frameworks/fw_generate.py"));
    {
        const char *argv[] = {shim_build_path("contrib/obs-run"), "--sim", "--capture", "steps:2-4", "--", python,
                              script, "llama", NULL};
        const char *extra[] = {"OBS_CLOCK=monotonic", "PYTHONDONTWRITEBYTECODE=1", "LD_PRELOAD", NULL};
        struct crun r;
        crun_exec(&r, "fw-llama", argv, extra, 0);
        ok(run_exited_with(&r.res, 0) && r.L.starts == 1 && r.L.stops == 1 &&
               nth_profiler(&r.L, LINE_START, "cuProfilerStart", 0) >= 0,
           "PyTorch generate() (fw_generate.py llama), steps:2-4: exit 0, one cuProfilerStart and one stop in the "
           "driver's log (%zu, %zu)", r.L.starts, r.L.stops);
        check_steps(&r, "PyTorch llama steps:2-4", 2, 4, -1, 0, "");
        crun_free(&r);
    }
    test_frameworks_serving(python);
    test_frameworks_serving_rules(python);
}

/* The real profilers need a GPU: contrib/gpu/validate.sh, check 7. */
static void test_real_profilers(void)
{
    skip("nsys -c cudaProfilerApi and ncu --profile-from-start off on the window: need an NVIDIA GPU and the tools; "
         "contrib/gpu/validate.sh check 7 runs them (docs/validation.md), the simulators' logs stand in here");
}

int main(void)
{
    plan_lazy();
    test_parser();
    test_corpus();
    test_llm_loop();
    test_serving();
    test_generate_and_threads();
    test_hip();
    test_workload();
    test_bad_and_never();
    test_record_window();
    test_record_window_same();
    test_obs_run();
    test_frameworks();
    test_real_profilers();
    return 0;
}
