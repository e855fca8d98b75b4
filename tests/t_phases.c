/* The phase engine proven against ground truth: every launch (kernels and
 * graph launches, captured ones included) gets the same phase and step from
 * the shim as from the program's own ranges.
 *
 * Programs: workload/obs_cuda and workload/obs_hip (their NVTX / roctx
 * ranges in the default domain, recorded by tests/nvtx_inject), with and
 * without --graphs, with rules (OBS_PHASES, OBS_STEP) and in automatic
 * mode; tests/apps/llm_loop (a generate loop whose steps end in a 4-byte
 * device-to-host copy; it writes its ranges to the log itself) in automatic
 * mode. Ground truth: a launch's phase is its innermost range among
 * PREFILL, KV_GATHER, DECODE/STEP_k and DECODE/STEADY (both DECODE), its
 * step the k of the innermost DECODE/STEP_k (GRAPH_CAPTURE is ignored).
 *
 * Three views of each launch are compared (tests/phase_compare.c, shared
 * with tests/t_scenarios):
 *   truth  the program's ranges (log lines of domain "-")
 *   live   the shim's ranges as pushed (domain "obsshim" lines)
 *   trace  the .obs file's phase and step (PHASE records, RELABEL included)
 * trace == truth for every launch; live == truth for every launch the trace
 * did not relabel after the fact (docs/phases.md: what is live). Bad rules:
 * one message with the column, automatic mode, the program unaffected. TTFT
 * and tokens/s of obs-report phases agree with the workload's within 2%:
 * both are read off the simulator's virtual device clock (GPU time, events,
 * OBS_SIM_SYNC_WAIT off), which starts each operation at its stream's tail
 * whatever the host does, so the figures are the same on every run; the 2%
 * is the gap between the workload's events and its kernels, not noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/api_list.h"
#include "phase_compare.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"
#include "workload_bins.h"

/* ---- one case ---------------------------------------------------------------------------- */

struct case_result {
    int ran;
    size_t launches, trace_equal, live_equal, live_checked, live_checked_equal;
    char out[256];
    int status;
    char *err;
    char trace_path[4200], log_path[4200];
};

static void run_case(const char *label, const char *const argv[], int hip, const char *const extra[],
                     struct case_result *r)
{
    static int serial;
    char log_path[4096], prefix[4096], trace_path[4200];
    const char *env[24];
    struct run_result res;
    struct pc_run run;
    struct pc_launch *l;
    struct obs_trace *t;
    size_t n, ntrace, mismatch, i, n_env = 0, shown = 0;

    memset(r, 0, sizeof *r);
    snprintf(log_path, sizeof log_path, "%s/log-%d", test_tmpdir(), ++serial);
    snprintf(prefix, sizeof prefix, "%s/trace-%d", test_tmpdir(), serial);
    snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    snprintf(r->trace_path, sizeof r->trace_path, "%s", trace_path);
    snprintf(r->log_path, sizeof r->log_path, "%s", log_path);
    remove(log_path);
    /* CUDA: the NVTX tool only; HIP: the roctx stand-in only (found on the
     * library path), so that each range is logged once. */
    n_env = sim_ranges_env(env, log_path, prefix, hip);
    env[n_env++] = "OBS_SUMMARY=0";
    env[n_env++] = "OBS_JSON=0";
    for (i = 0; extra != NULL && extra[i] != NULL && n_env < 23; i++)
        env[n_env++] = extra[i];
    env[n_env] = NULL;
    shim_run(argv, env, 1, 120, &res);
    r->ran = 1;
    r->status = res.exited ? res.status : -1;
    snprintf(r->out, sizeof r->out, "%s", res.out ? res.out : "");
    r->err = res.err ? strdup(res.err) : strdup("");
    if (!res.exited || res.status != 0) {
        diag("%s: exit %d signal %d", label, res.status, res.signal);
        diag_text("stderr", res.err);
    }
    run_result_free(&res);

    n = pc_read_log(log_path, &run);
    l = run.l;
    t = shim_trace_open(trace_path);
    if (t == NULL) {
        ok(0, "%s: trace readable", label);
        pc_run_free(&run);
        return;
    }
    ntrace = pc_trace_labels(t, &run, &mismatch);
    is_int((long long)n, (long long)ntrace, "%s: %zu launches in the log, as many in the trace", label, n);
    is_int(0, (long long)mismatch, "%s: the same kernels in the same order", label);
    r->launches = n;
    for (i = 0; i < n; i++) {
        char a[64], b[64], c[64];
        int trace_ok = pc_same(&l[i].trace, &l[i].truth, 0), live_ok = pc_same(&l[i].live, &l[i].truth, 0);
        r->trace_equal += trace_ok;
        r->live_equal += live_ok;
        if (!l[i].relabelled) {
            r->live_checked++;
            r->live_checked_equal += live_ok;
        }
        if ((!trace_ok || (!live_ok && !l[i].relabelled)) && shown++ < 5)
            diag("%s: launch %zu %s: truth %s live %s trace %s%s", label, i, run.names[l[i].name],
                 pc_label_text(&l[i].truth, a, sizeof a), pc_label_text(&l[i].live, b, sizeof b),
                 pc_label_text(&l[i].trace, c, sizeof c), l[i].relabelled ? " (relabelled)" : "");
    }
    ok(n > 0 && r->trace_equal == n, "%s: trace: %zu/%zu launches have the truth's phase and step", label,
       r->trace_equal, n);
    ok(r->live_checked_equal == r->live_checked && r->live_checked > 0,
       "%s: live: %zu/%zu launches not relabelled have the truth's phase and step", label, r->live_checked_equal,
       r->live_checked);
    diag("FIGURES %s: launches %zu, trace equal %zu (%.2f%%), live equal %zu (%.2f%%), relabelled after the fact %zu",
         label, n, r->trace_equal, n ? 100.0 * (double)r->trace_equal / (double)n : 0.0, r->live_equal,
         n ? 100.0 * (double)r->live_equal / (double)n : 0.0, n - r->live_checked);
    obs_trace_free(t);
    pc_run_free(&run);
}

static void free_case(struct case_result *r)
{
    free(r->err);
    r->err = NULL;
}

/* ---- TTFT and tokens/s against what the workload prints ---------------------------------- */

static void check_phase_numbers(const char *label, const char *trace_path, const char *printed)
{
    const char *report = shim_build_path("obs-report");
    const char *argv[] = {report, "phases", trace_path, "--csv", NULL};
    struct run_result res;
    double want_ttft = 0, want_tps = 0, best_ttft = INFINITY, best_tps = 0;
    char *line, *save = NULL, *text;
    int ttft_col = -1, tps_col = -1, rows = 0;

    if (sscanf(printed, "TTFT_ms=%lf tokens_per_s=%lf", &want_ttft, &want_tps) != 2) {
        ok(0, "%s: the workload printed TTFT_ms and tokens_per_s", label);
        return;
    }
    shim_run(argv, NULL, 0, 60, &res);
    if (!res.exited || res.status != 0 || res.out == NULL || strstr(res.out, "ttft") == NULL) {
        skip("%s: obs-report phases --csv not available yet (exit %d)", label, res.status);
        skip("%s: tokens/s", label);
        run_result_free(&res);
        return;
    }
    text = res.out;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *field, *fsave = NULL, copy[1024];
        int col = 0;
        double ttft = NAN, tps = NAN;
        snprintf(copy, sizeof copy, "%s", line);
        for (field = strtok_r(copy, ",", &fsave); field != NULL; field = strtok_r(NULL, ",", &fsave), col++) {
            if (ttft_col < 0 || tps_col < 0) {
                if (strncmp(field, "ttft", 4) == 0)
                    ttft_col = col;
                else if (strncmp(field, "tokens_per_s", 12) == 0)
                    tps_col = col;
                continue;
            }
            if (col == ttft_col && *field)
                ttft = strtod(field, NULL);
            if (col == tps_col && *field)
                tps = strtod(field, NULL);
        }
        if (!isnan(ttft) && ttft > 0) {
            rows++;
            if (ttft < best_ttft)
                best_ttft = ttft;
        }
        if (!isnan(tps) && tps > best_tps)
            best_tps = tps;
    }
    diag("FIGURES %s: workload TTFT_ms %.3f tokens_per_s %.2f; shim best TTFT_ms %.3f tokens_per_s %.2f (%d rows)",
         label, want_ttft, want_tps, best_ttft, best_tps, rows);
    ok(rows > 0 && fabs(best_ttft - want_ttft) <= 0.02 * want_ttft, "%s: TTFT within 2%% of the workload's", label);
    ok(fabs(best_tps - want_tps) <= 0.02 * want_tps, "%s: tokens/s within 2%% of the workload's", label);
    run_result_free(&res);
}

/* ---- the cases ----------------------------------------------------------------------------- */

static void suggest_round_trip(const char *label, const char *const argv[], int hip, const char *selector);

static const char *const rules_env[] = {"OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*",
                                        "OBS_STEP=kv_gather*", NULL};

static void workload_cases(const struct workload_bin *b, int hip)
{
    const char *why = NULL, *path = workload_path(b, &why);
    static const char *const gpu_time[] = {"OBS_GPU_TIME=events", NULL};
    char label[128], trace[4200];
    int graphs, rules;
    if (path == NULL) {
        skip("%s: %s", b->label, why);
        return;
    }
    for (rules = 0; rules < 2; rules++)
        for (graphs = 0; graphs < 2; graphs++) {
            const char *argv[] = {path, graphs ? "--graphs" : NULL, NULL};
            struct case_result r;
            snprintf(label, sizeof label, "%s %s%s", b->label, rules ? "rules" : "auto", graphs ? " --graphs" : "");
            run_case(label, argv, hip, rules ? rules_env : NULL, &r);
            free_case(&r);
        }
    /* Rules without OBS_STEP: a step starts with the kernel that opened the
     * previous one, or after a sync. */
    {
        static const char *const no_step[] = {"OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*",
                                              NULL};
        for (graphs = 0; graphs < 2; graphs++) {
            const char *argv[] = {path, graphs ? "--graphs" : NULL, NULL};
            struct case_result r;
            snprintf(label, sizeof label, "%s rules without OBS_STEP%s", b->label, graphs ? " --graphs" : "");
            run_case(label, argv, hip, no_step, &r);
            free_case(&r);
        }
    }
    /* suggest-phases on the automatic trace: its rules, fed back, give
     * every launch the same phase, step and generation */
    for (graphs = 0; graphs < 2; graphs++) {
        const char *argv[] = {path, graphs ? "--graphs" : NULL, NULL};
        snprintf(label, sizeof label, "suggest-phases %s%s", b->label, graphs ? " --graphs" : "");
        suggest_round_trip(label, argv, hip, "export OBS_STEP='kv_");
    }
    /* TTFT and tokens/s from GPU time (automatic mode), with and without
     * graphs (a graph replaying the steady decode counts its nodes over the
     * kernels of DECODE/STEP_0 as steps). */
    for (graphs = 0; graphs < 2; graphs++) {
        const char *argv[] = {path, graphs ? "--graphs" : NULL, NULL};
        struct case_result r;
        snprintf(label, sizeof label, "%s auto gpu-time%s", b->label, graphs ? " --graphs" : "");
        run_case(label, argv, hip, gpu_time, &r);
        snprintf(trace, sizeof trace, "%s", r.trace_path);
        check_phase_numbers(label, trace, r.out);
        free_case(&r);
    }
}

static char llm_loop_path[4096];

/* OBS_NVTX_LAUNCH=1: a range per launch in the obsshim domain, named after
 * the kernel's base name, inside the phase ranges; phases unchanged. */
static void launch_range_case(void)
{
    const char *argv[] = {llm_loop_path, "--steps", "4", "--prompts", "1", NULL};
    static const char *const env[] = {"OBS_NVTX_LAUNCH=1", NULL};
    struct case_result r;
    struct sim_call *calls;
    size_t n, i, pushes = 0, pops = 0, named = 0, launches = 0;
    int depth = 0, balanced = 1;

    run_case("llm_loop OBS_NVTX_LAUNCH=1", argv, 0, env, &r);
    n = sim_log_read(r.log_path, &calls);
    for (i = 0; i < n; i++) {
        if (strcmp(calls[i].kind, "kernel") == 0)
            launches++;
        if (strcmp(calls[i].kind, "range") != 0 || strcmp(calls[i].stream, "obsshim") != 0)
            continue;
        if (strstr(calls[i].api, "RangePush") != NULL) {
            pushes++;
            depth++;
            named += strcmp(calls[i].name, "embed_tokens") == 0 || strcmp(calls[i].name, "sample_argmax") == 0;
        } else if (strstr(calls[i].api, "RangePop") != NULL) {
            pops++;
            if (--depth < 0)
                balanced = 0;
        }
    }
    ok(n > 0 && named == 2 * 5, "OBS_NVTX_LAUNCH=1: ranges named after the kernels (%zu embed_tokens/sample_argmax)",
       named);
    ok(balanced && pushes == pops && pushes >= launches, "OBS_NVTX_LAUNCH=1: %zu pushes, %zu pops, %zu launches",
       pushes, pops, launches);
    free(calls);
    free_case(&r);
}

/* The launches of two traces with the same phase, step and generation. */
static size_t same_phases(const char *path_a, const char *path_b, size_t *launches)
{
    struct obs_trace *a = shim_trace_open(path_a), *b = shim_trace_open(path_b);
    size_t i = 0, k = 0, equal = 0;
    *launches = 0;
    while (a != NULL && b != NULL) {
        const struct obs_call *x, *y;
        while (i < a->ncalls && a->calls[i].kind != OBS_KIND_KERNEL && a->calls[i].kind != OBS_KIND_GRAPH)
            i++;
        while (k < b->ncalls && b->calls[k].kind != OBS_KIND_KERNEL && b->calls[k].kind != OBS_KIND_GRAPH)
            k++;
        if (i == a->ncalls || k == b->ncalls)
            break;
        x = &a->calls[i++];
        y = &b->calls[k++];
        (*launches)++;
        if (x->phase == OBS_NONE || y->phase == OBS_NONE) {
            equal += x->phase == y->phase;
            continue;
        }
        equal += strcmp(a->phases[x->phase].phase, b->phases[y->phase].phase) == 0 &&
                 obs_phase_step(a, x->phase) == obs_phase_step(b, y->phase) &&
                 a->phases[x->phase].generation == b->phases[y->phase].generation;
    }
    if (a != NULL)
        obs_trace_free(a);
    if (b != NULL)
        obs_trace_free(b);
    return equal;
}

/* obs-report suggest-phases on an automatic-mode trace of a loop whose
 * prefill and decode run the same kernels: it writes an iteration
 * selector, and its rules, fed back, reproduce the automatic phases. */
static void suggest_round_trip(const char *label, const char *const argv[], int hip, const char *selector)
{
    const char *report = shim_build_path("obs-report");
    struct case_result a, b;
    struct run_result res;
    static char phases_env[2100], step_env[2100];
    const char *env[3] = {NULL, NULL, NULL};
    char name[160], *line, *save = NULL;
    size_t launches, equal;
    int n_env = 0;

    snprintf(name, sizeof name, "%s, automatic", label);
    run_case(name, argv, hip, NULL, &a);
    {
        const char *rargv[] = {report, "suggest-phases", a.trace_path, NULL};
        shim_run(rargv, NULL, 0, 60, &res);
    }
    ok(res.exited && res.status == 0 && res.out != NULL && strstr(res.out, selector) != NULL,
       "%s: suggest-phases writes the selector %s", label, selector);
    for (line = res.out ? strtok_r(res.out, "\n", &save) : NULL; line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *q;
        if (strncmp(line, "export OBS_PHASES='", 19) == 0 && (q = strrchr(line, '\'')) > line + 18) {
            snprintf(phases_env, sizeof phases_env, "OBS_PHASES=%.*s", (int)(q - line - 19), line + 19);
            env[n_env++] = phases_env;
        } else if (strncmp(line, "export OBS_STEP='", 17) == 0 && (q = strrchr(line, '\'')) > line + 16) {
            snprintf(step_env, sizeof step_env, "OBS_STEP=%.*s", (int)(q - line - 17), line + 17);
            env[n_env++] = step_env;
        }
    }
    if (n_env == 0)
        diag_text("suggest-phases", res.out);
    run_result_free(&res);
    ok(n_env > 0, "%s: suggest-phases wrote rules", label);
    diag("%s: %s %s", label, phases_env, n_env > 1 ? step_env : "");
    snprintf(name, sizeof name, "%s, suggested rules", label);
    run_case(name, argv, hip, env, &b);
    equal = same_phases(a.trace_path, b.trace_path, &launches);
    ok(launches == a.launches && launches > 0 && equal == launches,
       "%s: the suggested rules give %zu/%zu launches the automatic mode's phase, step and generation", label,
       equal, launches);
    diag("FIGURES %s: suggested rules reproduce the automatic mode for %zu of %zu launches", label, equal, launches);
    free_case(&a);
    free_case(&b);
}

static void llm_loop_cases(void)
{
    const char *app = llm_loop_path;
    const char *argv[] = {app, "--steps", "16", "--prompts", "2", NULL};
    const char *argv_gap[] = {app, "--steps", "8", "--prompts", "3", "--gap-ms", "30", NULL};
    const char *argv_layers[] = {app, "--steps", "16", "--prompts", "3", "--layers", "32", NULL};
    const char *argv_chunks[] = {app, "--steps", "8", "--prompts", "3", "--layers", "32", "--chunks", "4", NULL};
    static const char *const gap_env[] = {"OBS_GEN_GAP_MS=10", NULL};
    struct case_result r;

    run_case("llm_loop auto", argv, 0, NULL, &r);
    is_int(0, r.status, "llm_loop auto: exit status 0");
    free_case(&r);
    run_case("llm_loop auto, idle gaps between prompts", argv_gap, 0, gap_env, &r);
    free_case(&r);
    /* Transformer layers inside every iteration: the repetition is layers,
     * never steps; prompts back to back with no gap. */
    run_case("llm_loop auto, 32 layers", argv_layers, 0, NULL, &r);
    free_case(&r);
    run_case("llm_loop auto, 32 layers, prefill in 4 chunks", argv_chunks, 0, NULL, &r);
    free_case(&r);
    /* Rules where prefill and decode run the same kernels: iteration
     * selectors and size conditions (docs/phases.md, "Rules"). */
    {
        static const char *const after_htod[] = {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;KV_GATHER=*kv*;DECODE=*",
                                                 NULL};
        static const char *const iter_threads[] = {
            "OBS_PHASES=PREFILL=iter:embed*[threads>=65536];KV_GATHER=*kv*;DECODE=*", NULL};
        static const char *const launch_threads[] = {
            "OBS_PHASES=PREFILL=embed*[threads>=64k];KV_GATHER=kv_cache_gather;DECODE=embed*[grid<64][block=256]",
            NULL};
        static const char *const both[] = {
            "OBS_PHASES=PREFILL=iter:after:memcpy:HtoD, iter:embed*[threads>=65536];KV_GATHER=*kv*;DECODE=*", NULL};
        run_case("llm_loop rules iter:after:memcpy:HtoD, 32 layers", argv_layers, 0, after_htod, &r);
        free_case(&r);
        run_case("llm_loop rules iter:embed*[threads>=65536], 32 layers", argv_layers, 0, iter_threads, &r);
        free_case(&r);
        run_case("llm_loop rules iter:embed*[threads>=65536], 32 layers, 4 chunks", argv_chunks, 0, iter_threads,
                 &r);
        free_case(&r);
        run_case("llm_loop rules embed*[threads>=64k] per launch, 32 layers, 4 chunks", argv_chunks, 0,
                 launch_threads, &r);
        free_case(&r);
        run_case("llm_loop rules HtoD or threads selectors, 32 layers, 4 chunks", argv_chunks, 0, both, &r);
        free_case(&r);
    }
    {
        const char *argv8[] = {app, "--steps", "16", "--prompts", "3", "--layers", "8", NULL};
        const char *argv8_chunks[] = {app, "--steps", "8", "--prompts", "3", "--layers", "8", "--chunks", "4", NULL};
        suggest_round_trip("suggest-phases llm_loop 8 layers", argv8, 0, "PREFILL=iter:after:memcpy:HtoD");
        /* the chunks come before the prompt's token read: iter:until:token */
        suggest_round_trip("suggest-phases llm_loop 8 layers, 4 chunks", argv8_chunks, 0,
                           "PREFILL=iter:after:memcpy:HtoD,iter:until:token");
        /* Phases no selector can express (every token step labelled PREFILL,
         * the prompts DECODE): suggest-phases says so. */
        {
            const char *argv_odd[] = {app, "--steps", "4", "--prompts", "2", "--layers", "2", NULL};
            char out_env[4200], lib_env[4200], trace[4300];
            const char *env[] = {out_env, lib_env, "OBS_SUMMARY=0", "OBS_JSON=0",
                                 "OBS_PHASES=PREFILL=iter:after:memcpy:DtoH;DECODE=*", NULL};
            const char *rargv[] = {shim_build_path("obs-report"), "suggest-phases", trace, NULL};
            struct run_result res;
            snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/odd-rules", test_tmpdir());
            snprintf(lib_env, sizeof lib_env, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
            snprintf(trace, sizeof trace, "%s/odd-rules.obs", test_tmpdir());
            shim_run(argv_odd, env, 1, 60, &res);
            run_result_free(&res);
            shim_run(rargv, NULL, 0, 60, &res);
            ok(res.exited && res.status == 0 && res.out != NULL &&
                   strstr(res.out, "no iteration selector separates them") && !strstr(res.out, "iter:"),
               "suggest-phases: says when no iteration selector separates PREFILL from DECODE");
            if (res.out == NULL || !strstr(res.out, "no iteration selector"))
                diag_text("suggest-phases", res.out);
            run_result_free(&res);
        }
    }
    launch_range_case();
}

/* ---- bad rules ------------------------------------------------------------------------------ */

static void bad_rule_cases(void)
{
    static const struct {
        const char *var, *what;
        unsigned column;
    } cases[] = {
        {"OBS_PHASES=PREFILL=prefill_*;FOO=x", "unknown phase", 19},
        {"OBS_PHASES=PREFILL=prefill_* ,, x", "empty pattern", 20},
        {"OBS_PHASES==decode_*", "empty phase name", 1},
        {"OBS_PHASES=DECODE=memcpy:DtoX", "unknown copy kind", 15},
        {"OBS_PHASES=PREFILL prefill_*", "expected '='", 9},
        {"OBS_STEP=kv_gather* x", "unexpected character", 12},
        {"OBS_ITERATION=embed* x", "unexpected character", 8},
    };
    const char *app = llm_loop_path;
    const char *argv[] = {app, "--steps", "4", "--prompts", "2", NULL};
    struct run_result plain;
    struct case_result auto_run;
    char long_rule[2100], label[128];
    size_t i;

    shim_run(argv, NULL, 0, 60, &plain);
    run_case("bad rules: reference (automatic mode)", argv, 0, NULL, &auto_run);
    for (i = 0; i < sizeof cases / sizeof cases[0] + 1; i++) {
        const char *env[2] = {NULL, NULL};
        struct case_result r;
        char column[64];
        if (i < sizeof cases / sizeof cases[0]) {
            env[0] = cases[i].var;
            snprintf(column, sizeof column, "at column %u;", cases[i].column);
        } else {
            memcpy(long_rule, "OBS_PHASES=DECODE=", 18);
            memset(long_rule + 18, 'd', 2000);
            long_rule[2018] = '\0';
            env[0] = long_rule;
            snprintf(column, sizeof column, "at column %u;", 1025u);
        }
        snprintf(label, sizeof label, "bad rule %zu (%.30s)", i + 1, env[0]);
        run_case(label, argv, 0, env, &r);
        is_int(1, (long long)count_lines_with(r.err, "obsshim: warning"), "%s: one warning", label);
        ok(strstr(r.err, column) != NULL, "%s: it gives the column (%s)", label, column);
        ok(strstr(r.err, "automatic phases are used instead") != NULL, "%s: says automatic mode is used", label);
        ok(count_lines_with(r.err, "^") == 1, "%s: a caret under the offending character", label);
        if (i < sizeof cases / sizeof cases[0])
            ok(strstr(r.err, cases[i].what) != NULL, "%s: says what is wrong (%s)", label, cases[i].what);
        is_int(plain.exited ? plain.status : -1, r.status, "%s: exit status as without the shim", label);
        is_string(plain.out ? plain.out : "", r.out, "%s: output as without the shim", label);
        is_int((long long)auto_run.trace_equal, (long long)r.trace_equal,
               "%s: attribution as in automatic mode", label);
        free_case(&r);
    }
    {
        /* OBS_LAYER (docs/layers.md) has OBS_STEP's grammar: a bad one is one warning with its column, the layers
         * are found automatically, and phases, output and exit status are as without it */
        const char *env[2] = {"OBS_LAYER=norm* x", NULL};
        struct case_result r;
        run_case("bad OBS_LAYER", argv, 0, env, &r);
        is_int(1, (long long)count_lines_with(r.err, "obsshim: warning"), "bad OBS_LAYER: one warning");
        ok(strstr(r.err, "OBS_LAYER: unexpected character 'x' after a pattern at column 7; the layers are found "
                         "automatically instead") != NULL && count_lines_with(r.err, "^") == 1,
           "bad OBS_LAYER: what is wrong, the column, a caret, and that the layers are found automatically");
        is_int(plain.exited ? plain.status : -1, r.status, "bad OBS_LAYER: exit status as without the shim");
        is_string(plain.out ? plain.out : "", r.out, "bad OBS_LAYER: output as without the shim");
        is_int((long long)auto_run.trace_equal, (long long)r.trace_equal, "bad OBS_LAYER: attribution as in automatic "
               "mode");
        free_case(&r);
    }
    free_case(&auto_run);
    run_result_free(&plain);
}

int main(void)
{
    size_t i;
    plan_lazy();
    snprintf(llm_loop_path, sizeof llm_loop_path, "%s", shim_build_path("tests/apps/llm_loop"));
    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        if (workload_bins[i].needs_sim)
            workload_cases(&workload_bins[i], strcmp(workload_bins[i].label, "obs_hip") == 0);
    llm_loop_cases();
    bad_rule_cases();
    return 0;
}
