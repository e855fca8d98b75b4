/* The reference workload on the simulated runtimes: the TTFT and tokens/s it
 * prints equal what the cost model (sim/cost_model.h) predicts, with
 * and without --graphs, and --graphs replays one graph per repetition. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#define TESTS_PER_BINARY 15

struct shape {
    const char *name;
    int batch, ctx, hidden, decode, repeat;
};

static const struct shape shapes[] = {
    {"defaults", 1, 1024, 4096, 128, 20},
    {"batch 2, ctx 512, hidden 2048, decode 16", 2, 512, 2048, 16, 3},
};

static uint64_t next_pow2(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* Predicted TTFT (ms) and tokens/s, as the workload computes them from events. */
static void predict(const struct shape *s, int graphs, double *ttft_ms, double *tokens_per_s)
{
    const uint64_t block = 256;
    uint64_t n = (uint64_t)s->batch * s->ctx * s->hidden, nd = (uint64_t)s->batch * s->hidden;
    uint64_t big = next_pow2((n + block - 1) / block) * block;
    uint64_t small = next_pow2((nd + block - 1) / block) * block;
    uint64_t prefill = sim_kernel_cost_ns(big, 0), gather = sim_kernel_cost_ns(big, 0);
    uint64_t decode = sim_kernel_cost_ns(small, 0);
    uint64_t step = graphs ? sim_kernel_cost_ns(big, 1) + sim_kernel_cost_ns(small, 1) : gather + decode;
    *ttft_ms = (double)(prefill + gather + decode) / 1e6;
    *tokens_per_s = s->decode > 1 ? 1e9 / (double)step : 0.0;
}

static int parse_line(const char *out, double *ttft, double *tps, int *reps)
{
    const char *p = strstr(out, "TTFT_ms=");
    return p && sscanf(p, "TTFT_ms=%lf tokens_per_s=%lf (best of %d reps)", ttft, tps, reps) == 3;
}

static void check_binary(const struct workload_bin *b)
{
    const char *why = NULL;
    const char *path = workload_path(b, &why);
    size_t i;
    int graphs;

    if (!b->needs_sim)
        return;
    if (path == NULL) {
        skip_block(TESTS_PER_BINARY, "%s: %s", b->label, why);
        return;
    }
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (graphs = 0; graphs < 2; graphs++) {
            const struct shape *s = &shapes[i];
            char a[5][48], log_path[4200], log_env[4300];
            double ttft, tps, want_ttft, want_tps;
            int reps = 0;
            struct run_result r;
            snprintf(a[0], sizeof a[0], "--batch=%d", s->batch);
            snprintf(a[1], sizeof a[1], "--ctx=%d", s->ctx);
            snprintf(a[2], sizeof a[2], "--hidden=%d", s->hidden);
            snprintf(a[3], sizeof a[3], "--decode=%d", s->decode);
            snprintf(a[4], sizeof a[4], "--repeat=%d", s->repeat);
            snprintf(log_path, sizeof log_path, "%s/%s-%zu-%d.simlog", test_tmpdir(), b->label, i, graphs);
            snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
            const char *argv[] = {path, a[0], a[1], a[2], a[3], a[4], graphs ? "--graphs" : NULL, NULL};
            const char *env[] = {sim_library_path_env(), log_env, NULL};

            run_program(argv, env, 300, &r);
            predict(s, graphs, &want_ttft, &want_tps);
            if (!ok(r.status == 0 && parse_line(r.out, &ttft, &tps, &reps), "%s %s%s: runs, prints the TTFT line",
                    b->label, s->name, graphs ? " --graphs" : "")) {
                diag_text("stdout", r.out);
                diag_text("stderr", r.err);
                skip_block(2, "no TTFT line");
            } else {
                /* TTFT is printed with 3 decimals: allow the rounding. */
                ok(fabs(ttft - want_ttft) <= 0.0005 + want_ttft * 1e-5, "%s %s%s: TTFT_ms %.3f = cost model %.6f",
                   b->label, s->name, graphs ? " --graphs" : "", ttft, want_ttft);
                is_double(want_tps, tps, 1e-4, "%s %s%s: tokens_per_s = cost model", b->label, s->name,
                          graphs ? " --graphs" : "");
            }
            if (i == 0 && graphs == 0)
                ok(strstr(r.err, "simulated") != NULL, "%s: the simulator says it is one on stderr", b->label);
            if (graphs) {
                char *log = test_read_file(log_path, NULL);
                is_int(s->repeat, (long long)count_lines_with(log, "\tgraph\t"),
                       "%s %s --graphs: one graph launch per repetition", b->label, s->name);
                free(log);
            }
            run_result_free(&r);
        }
}

int main(void)
{
    size_t i;
    plan(TESTS_PER_BINARY * 2);
    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        check_binary(&workload_bins[i]);
    return tap_failures() ? 1 : 0;
}
