/* Phases on the reader side: each call's phase, step and generation from
 * BEGIN/END nesting and RELABEL records (per thread), the CSV phase/step
 * columns, the JSON phase tracks (nested), the phase table with TTFT and
 * tokens/s (exact, GPU and host time), `obs-report phases [--csv]`,
 * `obs-report suggest-phases`, and damaged PHASE records. The traces and
 * their answers: tests/apps/phase_trace.[ch]; suggest-phases' globs also on
 * tests/apps/phased_big.[ch] (names that share prefixes across phases). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/phase_trace.h"
#include "apps/phased_big.h"
#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/kernel_base_name.h"
#include "trace/trace_csv.h"
#include "trace/trace_phases.h"
#include "trace/trace_reader.h"
#include "trace/trace_suggest.h"
#include "trace/kernel_base_name.h"
#include "trace/trace_summary.h"

struct want {
    uint32_t tid;
    const char *phase;
    int64_t step, gen; /* -1: none */
};

/* The calls of phase_trace_write() in sequence (host begin) order. */
static const struct want calls_want[] = {
    {200, "PREFILL", -1, 0}, {200, "KV_GATHER", 0, 0}, {200, "DECODE", 0, 0},
    {200, "PREFILL", -1, 1}, {200, "PREFILL", -1, 1}, {200, "KV_GATHER", 0, 1},
    {200, "DECODE", 0, 1},   {200, "KV_GATHER", 1, 1}, {200, "DECODE", 1, 1},
    {200, "KV_GATHER", 2, 1}, {200, "DECODE", 2, 1}, {200, "KV_GATHER", 3, 1},
    {200, "DECODE", 3, 1},   {201, "PREFILL", -1, 2}, {201, "PREFILL", -1, 2},
    {201, "KV_GATHER", 0, 2}, {201, "DECODE", 0, 2},  {201, "KV_GATHER", 1, 2},
    {200, "", -1, -1},       {201, "DECODE", 1, 2},   {201, "KV_GATHER", 2, 2},
    {201, "DECODE", 2, 2},   {201, "KV_GATHER", 3, 2}, {201, "DECODE", 3, 2},
};
#define NCALLS (sizeof calls_want / sizeof calls_want[0])

static char path_gpu[512], path_host[512], path_bad[512], path_none[512], path_flat[512];
static const char *report;

static struct obs_trace *open_trace(const char *path)
{
    struct obs_trace *t;
    char err[256];
    if (obs_trace_open(path, &t, err, sizeof err) != 0)
        bail("%s: %s", path, err);
    return t;
}

static void test_labels(void)
{
    struct obs_trace *t = open_trace(path_gpu);
    size_t i, bad = 0;
    is_int(NCALLS, (long long)t->ncalls, "phase trace: %d calls", (int)NCALLS);
    for (i = 0; i < t->ncalls && i < NCALLS; i++) {
        const struct obs_call *c = &t->calls[i];
        const char *phase = c->phase != OBS_NONE ? t->phases[c->phase].phase : "";
        uint32_t step = obs_phase_step(t, c->phase), gen = obs_call_generation(t, c);
        const struct want *w = &calls_want[i];
        if (t->threads[c->thread].tid != w->tid || strcmp(phase, w->phase) != 0 ||
            step != (w->step < 0 ? UINT32_MAX : (uint32_t)w->step) ||
            gen != (w->gen < 0 ? UINT32_MAX : (uint32_t)w->gen)) {
            diag("seq %zu: tid %u phase '%s' step %u gen %u", i, t->threads[c->thread].tid, phase, step, gen);
            bad++;
        }
    }
    is_int(0, (long long)bad, "every call has its phase, step and generation (BEGIN/END, RELABEL, per thread)");
    ok(t->calls[18].phase == OBS_NONE,
       "a call of thread 200 while thread 201's range is open is outside any phase (per-thread state)");
    {
        /* thread 201's wrong BEGIN/END PREFILL lost all its calls to RELABELs */
        size_t k, found = 0;
        for (k = 0; k < t->nphases; k++) {
            const struct obs_phase *r = &t->phases[k];
            if (!r->relabel && t->threads[r->thread].tid == 201) {
                found++;
                ok(r->calls == 0 && r->calls_taken == 10 && r->ended, "the overridden range: 0 calls, 10 taken");
            }
        }
        is_int(1, (long long)found, "thread 201 has one BEGIN/END range");
    }
    is_int(0, (long long)t->bad_phase_records, "no bad phase records");
    obs_trace_free(t);
}

/* The CSV fields phase,step of each data row (before the last, layer). */
static void test_csv(void)
{
    struct obs_trace *t = open_trace(path_gpu);
    char csv[600], *text, *line, *save = NULL;
    size_t row = 0, bad = 0;
    FILE *f;
    snprintf(csv, sizeof csv, "%s/phases.csv", test_tmpdir());
    f = fopen(csv, "w");
    if (f == NULL || obs_report_csv(t, f) != 0 || fclose(f) != 0)
        bail("cannot write %s", csv);
    obs_trace_free(t);
    text = test_read_file(csv, NULL);
    if (text == NULL)
        bail("cannot read %s", csv);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *cut, *step, *phase;
        char want_step[24];
        const struct want *w;
        int k;
        /* the last three fields: layer (none in this trace), generation, range */
        for (k = 0; k < 3 && (cut = strrchr(line, ',')) != NULL; k++)
            *cut = '\0';
        step = strrchr(line, ',');
        if (row++ == 0 || step == NULL)
            continue;
        *step++ = '\0';
        phase = strrchr(line, ',');
        phase = phase ? phase + 1 : line;
        if (row - 2 >= NCALLS) {
            bad++;
            continue;
        }
        w = &calls_want[row - 2];
        snprintf(want_step, sizeof want_step, w->step < 0 ? "" : "%lld", (long long)w->step);
        if (strcmp(phase, w->phase) != 0 || strcmp(step, want_step) != 0) {
            diag("csv row %zu: phase '%s' step '%s'", row - 2, phase, step);
            bad++;
        }
    }
    is_int(NCALLS + 1, (long long)row, "CSV: header and one row per call");
    is_int(0, (long long)bad, "CSV phase and step columns");
    free(text);
}

static void test_json(void)
{
    const char *python = getenv("OBS_PYTHON3");
    char json[600], script[600];
    struct run_result r;
    if (python == NULL || python[0] == '\0' || access(python, X_OK) != 0) {
        skip_block(9, "no python3 to check the JSON");
        return;
    }
    snprintf(json, sizeof json, "%s/phases.json", test_tmpdir());
    snprintf(script, sizeof script, "%s/tests/trace_json_check.py", test_srcdir());
    {
        const char *argv[] = {report, "json", "-o", json, path_gpu, NULL};
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run %s", report);
        ok(r.exited && r.status == 0, "obs-report json of the phase trace");
        run_result_free(&r);
    }
    {
        const char *argv[] = {python, script, json, NULL};
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run %s", python);
    }
    ok(r.exited && r.status == 0, "the JSON parses and every track nests");
    if (r.err && r.err[0])
        diag_text("checker", r.err);
    /* ts are relative to the earliest time (T0 + 8900, the first BEGIN).
     * thread 200: gen 0 (3) + gen 1 (10); thread 201: RELABEL slices only (10) */
    is_string("23", test_key_value(r.out, "phase_slices"), "phase slices: 13 on thread 200, 10 on thread 201");
    is_string("phases: main", test_key_value(r.out, "thread.900000000"), "thread 200's phase track");
    is_string("0,DECODE/STEADY,205900,26900", test_key_value(r.out, "phase.900000000.6"),
              "DECODE/STEADY at depth 0 (BEGIN/END times)");
    is_string("1,DECODE/STEP_1,206000,6700", test_key_value(r.out, "phase.900000000.7"), "DECODE/STEP_1 inside it");
    is_string("2,KV_GATHER,206050,600", test_key_value(r.out, "phase.900000000.8"), "KV_GATHER inside the step");
    is_string("0,PREFILL,290100,1500", test_key_value(r.out, "phase.900000001.0"),
              "thread 201: the RELABEL PREFILL spans its calls; the overridden range is left out");
    is_string("2,KV_GATHER,383100,500", test_key_value(r.out, "phase.900000001.5"),
              "thread 201: RELABEL KV_GATHER nested in DECODE/STEADY > DECODE/STEP_1");
    run_result_free(&r);
}

/* RELABELs of single runs, not nested: the JSON derives DECODE/STEP_k and
 * DECODE/STEADY slices around them. */
static void test_json_flat(void)
{
    const char *python = getenv("OBS_PYTHON3");
    char json[600], script[600];
    struct run_result r;
    if (python == NULL || python[0] == '\0' || access(python, X_OK) != 0) {
        skip_block(6, "no python3 to check the JSON");
        return;
    }
    snprintf(json, sizeof json, "%s/flat.json", test_tmpdir());
    snprintf(script, sizeof script, "%s/tests/trace_json_check.py", test_srcdir());
    {
        const char *argv[] = {report, "json", "-o", json, path_flat, NULL};
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run %s", report);
        run_result_free(&r);
    }
    {
        const char *argv[] = {python, script, json, NULL};
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run %s", python);
    }
    ok(r.exited && r.status == 0, "flat RELABELs: the JSON nests");
    if (r.err && r.err[0])
        diag_text("checker", r.err);
    /* ts relative to the first call's host begin (T0 + 9000) */
    is_string("8", test_key_value(r.out, "phase_slices"), "flat RELABELs: 8 slices");
    is_string("0,DECODE/STEP_0,10000,4500", test_key_value(r.out, "phase.900000000.1"),
              "a DECODE/STEP_0 slice around KV_GATHER and the decode kernel");
    is_string("1,KV_GATHER,10000,500", test_key_value(r.out, "phase.900000000.2"), "KV_GATHER inside it");
    is_string("0,DECODE/STEADY,20000,14500", test_key_value(r.out, "phase.900000000.3"),
              "a DECODE/STEADY slice around steps 1 and 2");
    is_string("2,KV_GATHER,30000,500", test_key_value(r.out, "phase.900000000.7"),
              "DECODE/STEADY > DECODE/STEP_2 > KV_GATHER");
    run_result_free(&r);
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

static void test_stats_gpu(void)
{
    struct obs_trace *t = open_trace(path_gpu);
    struct obs_phase_stats s;
    if (obs_phase_stats_compute(t, &s) != 0)
        bail("out of memory");
    ok(s.gpu_time && strcmp(s.time_base, "gpu") == 0, "GPU time base");
    is_int(3, (long long)s.nphases, "three phases");
    if (s.nphases == 3) {
        ok(strcmp(s.phases[0].phase, "PREFILL") == 0 && s.phases[0].time_ns == 192000 && s.phases[0].ranges == 3 &&
               s.phases[0].calls == 5 && s.phases[0].launches == 5 && s.phases[0].kernels == 3 &&
               s.phases[0].bytes == 8192,
           "PREFILL: 192000 ns, 3 ranges, 5 calls, 5 launches, 3 kernels, 8192 bytes");
        ok(strcmp(s.phases[1].phase, "KV_GATHER") == 0 && s.phases[1].time_ns == 62000 && s.phases[1].ranges == 9 &&
               s.phases[1].kernels == 9 && s.phases[1].bytes == 0,
           "KV_GATHER: 62000 ns (sum of its ranges), 9 ranges, 9 kernels");
        ok(strcmp(s.phases[2].phase, "DECODE") == 0 && s.phases[2].time_ns == 31000 && s.phases[2].ranges == 9 &&
               s.phases[2].calls == 9,
           "DECODE: 31000 ns, 9 ranges, 9 calls");
    } else {
        skip_block(3, "phase rows missing");
    }
    is_int(9, (long long)s.nby_gen, "nine phase x generation rows");
    if (s.nby_gen == 9)
        ok(s.by_gen[3].generation == 1 && strcmp(s.by_gen[3].phase, "PREFILL") == 0 &&
               s.by_gen[3].time_ns == 101000 && s.by_gen[4].time_ns == 28000 && s.by_gen[5].time_ns == 14000 &&
               s.by_gen[8].generation == 2 && s.by_gen[8].time_ns == 16000,
           "per generation: gen 1 PREFILL 101000, KV_GATHER 28000, DECODE 14000; gen 2 DECODE 16000");
    else
        skip("rows missing");
    is_int(3, (long long)s.ngens, "three generations");
    if (s.ngens == 3) {
        const struct obs_generation_row *g = s.gens;
        ok(g[0].ttft_defined && near(g[0].ttft_ms, 0.013) && g[0].decode_steps == 1 && !g[0].tokens_defined &&
               !g[0].in_best,
           "gen 0 (warm-up): TTFT 0.013 ms, one step, tokens/s undefined, not in the bests");
        ok(near(g[1].ttft_ms, 0.116) && g[1].decode_steps == 4 && g[1].prefill_ns == 101000 &&
               g[1].first_decode_ns == 15000 && g[1].steady_ns == 29000 && near(g[1].tokens_per_s, 3e9 / 29000),
           "gen 1: TTFT = 101000 + 15000 ns, 4 steps, tokens/s = 3 / 29 us");
        ok(near(g[2].ttft_ms, 0.093) && g[2].decode_steps == 4 && near(g[2].tokens_per_s, 3e9 / 42000),
           "gen 2 (RELABEL): TTFT 0.093 ms, tokens/s = 3 / 42 us");
        ok(g[1].launches == 10 && g[1].kernels == 9 && g[1].bytes == 4096 && g[1].calls == 10,
           "gen 1 totals: 10 launches, 9 kernels, 4096 bytes");
    } else {
        skip_block(4, "generation rows missing");
    }
    ok(s.has_best_ttft && near(s.best_ttft_ms, 0.093) && s.best_ttft_generation == 2 && s.has_best_tokens &&
           near(s.best_tokens_per_s, 3e9 / 29000) && s.best_tokens_generation == 1 && s.best_over == 2,
       "best TTFT: gen 2; best tokens/s: gen 1; over the 2 generations with two or more steps");
    is_int(1, (long long)s.unlabelled_calls, "one call outside any phase");
    obs_phase_stats_free(&s);
    obs_trace_free(t);
}

static void test_stats_host(void)
{
    struct obs_trace *t = open_trace(path_host);
    struct obs_phase_stats s;
    if (obs_phase_stats_compute(t, &s) != 0)
        bail("out of memory");
    ok(!s.gpu_time && strcmp(s.time_base, "host") == 0, "host time base without GPU spans");
    if (s.ngens == 3) {
        ok(near(s.gens[0].ttft_ms, 0.0126) && near(s.gens[1].ttft_ms, 0.1116) && !s.gens[2].ttft_defined,
           "host wall-clock TTFT: 12600, 111600 ns; undefined with no delimiter in the steps");
        ok(s.gens[1].tokens_defined && near(s.gens[1].tokens_per_s, 3e9 / 31000) && !s.gens[2].tokens_defined,
           "host wall-clock tokens/s: 3 / 31 us; undefined with no delimiter");
        ok(s.best_ttft_generation == 1 && s.best_tokens_generation == 1 && s.unbounded_steps == 1,
           "host bests; one generation's steps unbounded");
        ok(s.gens[0].thread == 200 && s.gens[2].thread == 201, "generation rows carry their thread");
    } else {
        skip_block(4, "generation rows missing");
    }
    obs_phase_stats_free(&s);
    obs_trace_free(t);
}

static void test_summary(void)
{
    struct obs_trace *t = open_trace(path_gpu);
    char txt[600], *text;
    FILE *f;
    snprintf(txt, sizeof txt, "%s/phases-summary.txt", test_tmpdir());
    f = fopen(txt, "w");
    if (f == NULL || obs_report_summary(t, f, NULL) != 0 || fclose(f) != 0)
        bail("cannot write %s", txt);
    obs_trace_free(t);
    text = test_read_file(txt, NULL);
    if (text == NULL)
        bail("cannot read %s", txt);
    ok(strstr(text, "\nPhases (GPU time;") != NULL, "the summary has the phase table, in GPU time");
    ok(strstr(text, " 192000       3      5         5        3   8192  PREFILL\n") != NULL,
       "PREFILL row: time, ranges, calls, launches, kernels, bytes");
    ok(strstr(text, "Best TTFT: 0.093 ms (generation 2); best tokens/s: 103448.28 (generation 1); over 2 "
                    "generations with at least two decode steps") != NULL,
       "best TTFT and tokens/s");
    ok(strstr(text, "n/a") && strstr(text, "fewer than two decode steps has no steady tokens/s"),
       "the warm-up's tokens/s is n/a, and the summary says why");
    if (!strstr(text, "Best TTFT"))
        diag_text("summary", text);
    free(text);
}

static struct run_result report_run(const char *a1, const char *a2, const char *a3)
{
    const char *argv[] = {report, a1, a2, a3, NULL};
    struct run_result r;
    if (run_program(argv, NULL, 60, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

static void test_report_phases(void)
{
    struct run_result r = report_run("phases", "--csv", path_gpu);
    ok(r.exited && r.status == 0, "obs-report phases --csv");
    is_string(OBS_PHASES_CSV_HEADER "\n"
              "0,0.013000,,1,gpu,0.010000,0.003000,,3,3,3,0,0,200,step0,,1,,step0-end\n"
              "1,0.116000,103448.276,4,gpu,0.101000,0.015000,0.029000,10,10,9,4096,1,200,step0,103448.276,1,0.009667,step0-end\n"
              "2,0.093000,71428.571,4,gpu,0.081000,0.012000,0.042000,10,10,9,4096,1,201,step0,71428.571,1,0.014000,step0-end\n",
              r.out, "GPU rows: generation, TTFT, tokens/s (empty when undefined), steps, time base ... ttft_to "
              "(step0-end: the generations read nothing back)");
    run_result_free(&r);
    r = report_run("phases", path_host, "--csv");
    is_string(OBS_PHASES_CSV_HEADER "\n"
              "0,0.012600,,1,host,0.000500,0.002600,,4,4,3,4,0,200,step0,,1,,step0-end\n"
              "1,0.111600,96774.194,4,host,0.001500,0.010600,0.026600,14,14,9,4112,1,200,step0,96774.194,1,0.010333,step0-end\n"
              "2,,,4,host,0.001500,0.008500,0.038500,10,10,9,4096,1,201,step0,,1,,step0-end\n",
              r.out, "host rows (--csv after the file; ttft_to step0-end: step 0 reads the first token)");
    run_result_free(&r);
    r = report_run("phases", path_gpu, NULL);
    ok(r.exited && r.status == 0 && strstr(r.out, "Phases by generation (GPU time)") &&
           strstr(r.out, "Generations (GPU time)") && strstr(r.out, "Best TTFT: 0.093 ms"),
       "obs-report phases: the tables");
    run_result_free(&r);
    r = report_run("phases", "--help", NULL);
    ok(r.exited && r.status == 0 && strstr(r.out, OBS_PHASES_CSV_HEADER) && strstr(r.out, "in_best"),
       "phases --help documents the CSV columns");
    run_result_free(&r);
    r = report_run("phases", path_none, NULL);
    ok(r.exited && r.status == 0 && strstr(r.out, "Phases: none recorded"), "a trace without phases says so");
    run_result_free(&r);
    r = report_run("--help", NULL, NULL);
    ok(strstr(r.out, "  phases ") && strstr(r.out, "  suggest-phases "), "obs-report --help lists both commands");
    run_result_free(&r);
}

static void test_suggest(void)
{
    struct run_result r = report_run("suggest-phases", path_gpu, NULL);
    char buf[256];
    ok(r.exited && r.status == 0, "suggest-phases exits 0");
    ok(strstr(r.out, "\nexport OBS_PHASES='PREFILL=prefill_*,memcpy:HtoD;KV_GATHER=kv_*;DECODE=decode_*'\n") != NULL,
       "OBS_PHASES: kernel base names as prefix globs, the HtoD copy in PREFILL");
    ok(strstr(r.out, "\nexport OBS_STEP='kv_*'\n") != NULL, "OBS_STEP: the kernel that opens each step");
    if (!strstr(r.out, "OBS_STEP='kv_*'"))
        diag_text("suggest-phases", r.out);
    run_result_free(&r);
    r = report_run("suggest-phases", path_none, NULL);
    ok(r.exited && r.status == 1 && strstr(r.err, "has no phases"), "no phases: says so, exit 1");
    run_result_free(&r);
    r = report_run("suggest-phases", "--help", NULL);
    ok(r.exited && r.status == 0 && strstr(r.out, "OBS_STEP"), "suggest-phases --help");
    run_result_free(&r);
    /* suggest-phases and the phase engine share kernel_base_name.c. */
    obs_kernel_base_name_of("_ZN2ns4gemmIfLi4EEEvPKfi", "void ns::gemm<float, 4>(float const*, int)", buf, sizeof buf);
    is_string("gemm", buf, "base name: no return type, scope, template arguments or parameters");
    obs_kernel_base_name_of("_ZN12_GLOBAL__N_11fINS_1XEEEvi", "(anonymous namespace)::f<(anonymous namespace)::X>(int)",
                            buf, sizeof buf);
    is_string("f", buf, "base name: anonymous namespace");
    obs_kernel_base_name_of("triton_gemm_0", "triton_gemm_0", buf, sizeof buf);
    is_string("triton_gemm_0", buf, "base name: a plain name");
    obs_kernel_base_name_of("_Z12embed_tokensPKiPfi", "_Z12embed_tokensPKiPfi", buf, sizeof buf);
    is_string("embed_tokens", buf, "base name: a mangled name with no demangled form, as the engine sees it");
}

/* Globs where prefixes are shared across phases (phased_big.h, 8 kernel
 * names): sm90_xmma_gemm_bf16_tileN_decode has no prefix that the
 * PREFILL-only ..._prefill names (no rule phase once the selector takes
 * the prompts' iterations) do not also start with, so it is written out;
 * gemm_0_tile and gemm_1_tile (shared, DECODE once PREFILL's iterations
 * are selected) give gemm_* once; the two rms_norm kernels (one base name)
 * give the exact name; the steps' openers kv_gather_0 and kv_gather_1 take
 * turns (150 of 300 steps each), so no OBS_STEP: each step reads its token
 * back, and rules open a step at the first launch after a token read. */
static void test_suggest_shared_prefixes(void)
{
    struct phased_big_opts o = {.calls = 3000, .threads = 1, .kernels = 8, .layers = 2, .steps = 3, .gpu = 0};
    char path[600];
    struct run_result r;
    int rc;
    snprintf(path, sizeof path, "%s/phased-8.obs", test_tmpdir());
    if ((rc = phased_big_write(path, &o)) != 0)
        bail("cannot write %s: %s", path, strerror(-rc));
    r = report_run("suggest-phases", path, NULL);
    ok(strstr(r.out, "# PREFILL and DECODE share 2 kernels (gemm_0_tile, gemm_1_tile): names cannot tell them apart\n"
                     "# iteration selectors: a prompt's iterations up to its token read (iter:until:token); a later "
                     "prompt's first iteration follows a host-to-device copy, no other iteration does") != NULL,
       "suggest-phases: two shared kernels, the token loop's selectors");
    ok(strstr(r.out, "\nexport OBS_PHASES='PREFILL=iter:after:memcpy:HtoD,iter:until:token;KV_GATHER=kv_*;DECODE="
                     "sm90_xmma_gemm_bf16_tile0_decode,gemm_*,sm90_xmma_gemm_bf16_tile1_decode,rms_norm'\n") != NULL,
       "suggest-phases: exact names where no prefix is safe, one gemm_* for two kernels, no copies named");
    ok(strstr(r.out, "\n# no OBS_STEP: kv_gather_0 opens 150 of the 300 decode steps, not all; steps open at the "
                     "first launch after a token read\n") != NULL &&
           strstr(r.out, "export OBS_STEP") == NULL,
       "suggest-phases: no OBS_STEP where two openers take turns (the token reads open the steps)");
    if (!strstr(r.out, "# no OBS_STEP: kv_gather_0"))
        diag_text("suggest-phases", r.out);
    run_result_free(&r);
}

/* Many RELABELs painted over one another, out of order. */
static void test_many_relabels(void)
{
    char path[600];
    struct obs_trace *t;
    size_t i, bad = 0;
    int rc;
    snprintf(path, sizeof path, "%s/relabels.obs", test_tmpdir());
    if ((rc = phase_trace_write_relabels(path, 60)) != 0)
        bail("cannot write %s: %s", path, strerror(-rc));
    t = open_trace(path);
    is_int(61, (long long)t->nphases, "61 RELABEL ranges");
    for (i = 0; i < t->ncalls; i++)
        if (obs_phase_step(t, t->calls[i].phase) != t->calls[i].index ||
            t->phases[t->calls[i].phase].parent == OBS_NONE)
            bad++;
    ok(t->ncalls == 60 && bad == 0, "each call has the step of the latest RELABEL over it, inside the first");
    obs_trace_free(t);
}

static void test_damaged(void)
{
    struct obs_trace *t = open_trace(path_bad);
    char txt[600], *text, want0[64] = "?", want1[64] = "?";
    FILE *f;
    struct run_result r;
    is_int(3, (long long)t->bad_phase_records, "damaged: END with nothing open, unknown event, empty RELABEL");
    is_int(2, (long long)t->ncalls, "damaged: both calls read");
    if (t->ncalls == 2) {
        ok(t->calls[0].phase != OBS_NONE && strcmp(t->phases[t->calls[0].phase].phase, "") == 0 &&
               t->phases[t->calls[0].phase].phase_id == 99,
           "a phase id with no string: empty name");
        ok(t->calls[1].phase != OBS_NONE && strcmp(t->phases[t->calls[1].phase].phase, "KV_GATHER") == 0 &&
               obs_phase_step(t, t->calls[1].phase) == 7,
           "a RELABEL of one call: KV_GATHER step 7");
    } else {
        skip_block(2, "calls missing");
    }
    /* the rows' ends: status, phase, step, layer, then the generation and
     * range of the call's range (the reader's) */
    if (t->ncalls == 2 && t->calls[0].phase != OBS_NONE && t->calls[1].phase != OBS_NONE) {
        snprintf(want0, sizeof want0, ",0,,,,%u,%u\n", t->phases[t->calls[0].phase].generation, t->calls[0].phase);
        snprintf(want1, sizeof want1, ",0,KV_GATHER,7,,%u,%u\n", t->phases[t->calls[1].phase].generation,
                 t->calls[1].phase);
    }
    snprintf(txt, sizeof txt, "%s/damaged-summary.txt", test_tmpdir());
    f = fopen(txt, "w");
    if (f == NULL || obs_report_summary(t, f, NULL) != 0 || fclose(f) != 0)
        bail("cannot write %s", txt);
    obs_trace_free(t);
    text = test_read_file(txt, NULL);
    ok(text && strstr(text, "(phase id 99)") && strstr(text, "3 PHASE records could not be used"),
       "the summary names the unnamed phase and counts the bad records");
    free(text);
    r = report_run("csv", path_bad, NULL);
    ok(r.exited && r.status == 0 && strstr(r.out, want0) && strstr(r.out, want1),
       "CSV of damaged phases: empty phase name, KV_GATHER step 7");
    run_result_free(&r);
    r = report_run("suggest-phases", path_bad, NULL);
    ok(r.exited && r.status == 0 && r.signal == 0, "suggest-phases on damaged phases does not crash");
    run_result_free(&r);
    r = report_run("json", path_bad, NULL);
    ok(r.exited && r.status == 0, "json of damaged phases");
    run_result_free(&r);
}

int main(void)
{
    static char report_path[512];
    int rc;
    plan(75);
    snprintf(path_gpu, sizeof path_gpu, "%s/phases-gpu.obs", test_tmpdir());
    snprintf(path_host, sizeof path_host, "%s/phases-host.obs", test_tmpdir());
    snprintf(path_bad, sizeof path_bad, "%s/phases-bad.obs", test_tmpdir());
    snprintf(path_none, sizeof path_none, "%s/phases-none.obs", test_tmpdir());
    snprintf(path_flat, sizeof path_flat, "%s/phases-flat.obs", test_tmpdir());
    snprintf(report_path, sizeof report_path, "%s/obs-report", test_builddir());
    report = report_path;
    if ((rc = phase_trace_write(path_gpu, 0)) != 0 || (rc = phase_trace_write(path_host, PT_NO_GPU)) != 0 ||
        (rc = phase_trace_write_damaged(path_bad)) != 0 || (rc = fixture_write_big(path_none, 100, 1, 0)) != 0 || (rc = phase_trace_write_flat(path_flat)) != 0)
        bail("cannot write the traces: %s", strerror(-rc));
    test_labels();
    test_csv();
    test_json();
    test_json_flat();
    test_stats_gpu();
    test_stats_host();
    test_summary();
    test_report_phases();
    test_suggest();
    test_suggest_shared_prefixes();
    test_many_relabels();
    test_damaged();
    return 0;
}
