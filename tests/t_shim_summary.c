/* The summary the shim prints at exit (OBS_SUMMARY), on the reference
 * workload run with --repeat=500 on the simulated runtime (501 generations,
 * 129 k calls):
 *   - default: the brief summary, at most OBS_SUMMARY_BRIEF_MAX_LINES lines
 *     of stderr (the "obsshim: wrote" line included), counted here, with
 *     every section; its best TTFT and tokens/s are what the workload
 *     printed (GPU time on);
 *   - full: today's full tables, exactly the first part of `obs-report
 *     summary` on the same trace (a row per generation and phase);
 *   - 0: none; a bad value: one warning and the default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_summary.h"
#include "workload_bins.h"

#define REPEAT "--repeat=500"
#define GENERATIONS 501 /* the warm-up and 500 timed repetitions */

static size_t lines(const char *text)
{
    size_t n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

/* Run the workload under the shim with OBS_SUMMARY=summary (NULL: unset);
 * the trace goes to <tmp>/<tag>.obs. */
static void run_workload(const char *bin, const char *tag, const char *summary, int gpu_time, struct run_result *r)
{
    const char *argv[] = {bin, REPEAT, NULL};
    static char out_env[4300], sum_env[128];
    const char *env[6];
    size_t n = 0;
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), tag);
    env[n++] = sim_library_path_env();
    env[n++] = out_env;
    env[n++] = "OBS_JSON=0";
    env[n++] = gpu_time ? "OBS_GPU_TIME=events" : "OBS_GPU_TIME=off";
    if (summary) {
        snprintf(sum_env, sizeof sum_env, "OBS_SUMMARY=%s", summary);
        env[n++] = sum_env;
    }
    env[n] = NULL;
    shim_run(argv, env, 1, 300, r);
}

/* "TTFT_ms=0.137 tokens_per_s=14367.82 ..." -> the two numbers as printed. */
static int workload_bests(const char *out, char *ttft, size_t tlen, char *tokens, size_t klen)
{
    const char *a = out ? strstr(out, "TTFT_ms=") : NULL;
    const char *b = out ? strstr(out, "tokens_per_s=") : NULL;
    if (a == NULL || b == NULL)
        return -1;
    a += 8;
    b += 13;
    snprintf(ttft, tlen, "%.*s", (int)strcspn(a, " \n"), a);
    snprintf(tokens, klen, "%.*s", (int)strcspn(b, " \n"), b);
    return 0;
}

/* 7 checks. */
static void check_brief(const char *label, const char *bin, int gpu_time)
{
    struct run_result r;
    char tag[64], want[128], ttft[32], tokens[32];
    size_t n;

    snprintf(tag, sizeof tag, "%s-brief-%s", label, gpu_time ? "gpu" : "host");
    run_workload(bin, tag, NULL, gpu_time, &r);
    n = lines(r.err);
    ok(run_exited_with(&r, 0), "%s %s%s: exit 0", label, REPEAT, gpu_time ? ", GPU time" : "");
    diag("%s %s%s: the summary is %zu lines of stderr", label, REPEAT, gpu_time ? " with GPU time" : "", n);
    if (!ok(n > 20 && n <= OBS_SUMMARY_BRIEF_MAX_LINES, "%s: %zu lines on stderr, at most %d", tag, n,
            OBS_SUMMARY_BRIEF_MAX_LINES))
        diag_text("stderr", r.err);
    ok(r.err && strstr(r.err, " 0 records lost\n") && strstr(r.err, "\nShim cost: ") &&
           strstr(r.err, "\nKernels (") && strstr(r.err, "\nCopies by direction and memsets (") &&
           strstr(r.err, "\nAPI calls (host time") && strstr(r.err, "\nPhases over all generations ("),
       "%s: records lost, shim cost, kernels, copies, API calls, phases", tag);
    snprintf(want, sizeof want, "\nGenerations (%s): %d; ",
             gpu_time ? "GPU time" : "host wall-clock between host syncs", GENERATIONS);
    ok(r.err && strstr(r.err, want) != NULL, "%s: one generations block: %d generations", tag, GENERATIONS);
    ok(r.err && strstr(r.err, "Phases by generation") == NULL && count_lines_with(r.err, "TTFT (ms)") == 1,
       "%s: no row per generation", tag);
    if (gpu_time && workload_bests(r.out, ttft, sizeof ttft, tokens, sizeof tokens) == 0) {
        snprintf(want, sizeof want, " TTFT (ms): best %s (generation ", ttft);
        ok(strstr(r.err, want) != NULL, "%s: best TTFT %s ms, as the workload printed", tag, ttft);
        snprintf(want, sizeof want, " tokens/s: best %s (generation ", tokens);
        ok(strstr(r.err, want) != NULL, "%s: best tokens/s %s, as the workload printed", tag, tokens);
    } else if (gpu_time) {
        ok(0, "%s: the workload printed its TTFT line", tag);
        skip("no tokens/s to compare");
    } else {
        skip_block(2, "host time: the workload's event times are not comparable");
    }
    run_result_free(&r);
}

/* 4 checks. */
static void check_full(const char *label, const char *bin)
{
    struct run_result r, rep;
    char tag[64], trace[4300];
    const char *report_argv[4];
    const char *wrote;
    size_t summary_len;

    snprintf(tag, sizeof tag, "%s-full", label);
    run_workload(bin, tag, "full", 1, &r);
    ok(run_exited_with(&r, 0), "%s: exit 0", tag);
    ok(lines(r.err) > 3 * GENERATIONS && r.err && strstr(r.err, "\nPhases by generation (GPU time)\n") &&
           strstr(r.err, "\nCopies by direction (") && strstr(r.err, "\nMemsets ("),
       "%s: the full tables, a row per generation and phase (%zu lines)", tag, lines(r.err));
    snprintf(trace, sizeof trace, "%s/%s.obs", test_tmpdir(), tag);
    report_argv[0] = shim_build_path("obs-report");
    report_argv[1] = "summary";
    report_argv[2] = trace;
    report_argv[3] = NULL;
    if (run_program(report_argv, NULL, 120, &rep) != 0)
        bail("cannot run obs-report");
    wrote = r.err ? strstr(r.err, "obsshim: wrote ") : NULL;
    summary_len = wrote ? (size_t)(wrote - r.err) : 0;
    ok(summary_len > 0 && rep.out && strncmp(rep.out, r.err, summary_len) == 0,
       "%s: the same text as the start of obs-report summary", tag);
    run_result_free(&rep);
    run_result_free(&r);

    snprintf(tag, sizeof tag, "%s-none", label);
    run_workload(bin, tag, "0", 0, &r);
    ok(run_exited_with(&r, 0) && r.err && strstr(r.err, "Kernels") == NULL && strstr(r.err, "obsshim: wrote ") != NULL,
       "%s: OBS_SUMMARY=0: no summary, the trace written", tag);
    run_result_free(&r);
}

/* 3 checks. */
static void check_bad_value(const char *label, const char *bin)
{
    struct run_result r;
    char tag[64];
    snprintf(tag, sizeof tag, "%s-bad", label);
    run_workload(bin, tag, "brief!", 0, &r);
    ok(run_exited_with(&r, 0), "%s: OBS_SUMMARY=brief!: exit 0", tag);
    is_int(1, (long long)warning_lines(r.err), "%s: one warning", tag);
    ok(r.err && strstr(r.err, "obsshim: warning: OBS_SUMMARY=brief!: expected 0, 1 or full; using the default 1") &&
           strstr(r.err, "\nGenerations (host wall-clock between host syncs): ") && lines(r.err) <= OBS_SUMMARY_BRIEF_MAX_LINES + 1,
       "%s: it names the variable, and the brief summary follows", tag);
    run_result_free(&r);
}

int main(void)
{
    static const size_t sims[] = {0, 2}; /* obs_cuda, obs_hip: the ones that run on the simulators */
    const char *bins[2], *why = NULL;
    size_t i, nbins = 0;

    for (i = 0; i < 2; i++) {
        const char *b = workload_path(&workload_bins[sims[i]], &why);
        bins[i] = b ? strdup(b) : NULL;
        nbins += b != NULL;
    }
    if (nbins == 0)
        skip_all("no workload binary: %s", why);
    plan(2 * (7 + 7 + 4 + 3));
    for (i = 0; i < 2; i++) {
        const char *label = workload_bins[sims[i]].label;
        if (bins[i] == NULL) {
            skip_block(7 + 7 + 4 + 3, "%s: not built", label);
            continue;
        }
        check_brief(label, bins[i], 1);
        check_brief(label, bins[i], 0);
        check_full(label, bins[i]);
        check_bad_value(label, bins[i]);
        free((void *)bins[i]);
    }
    return 0;
}
