/* obs-report serving as structured reports (`serving --json`, the HTML
 * page): iterations (the rows of `serving --csv`, same keys),
 * serving_by_kind (iteration time by kind) and serving_summary (gaps, GPU
 * idle, tokens/s). Definitions: trace_serving.h, docs/serving.md. */
#include "reports.h"

#include <string.h>

static void ms_cell(struct rtable *tb, int defined, double ns)
{
    if (defined)
        rt_real(tb, ns / 1e6);
    else
        rt_null(tb);
}

static void iterations_table(struct rtable *tb, const struct obs_trace *t, const struct obs_serving_stats *s)
{
    static const struct rt_col cols[] = {
        {"Thread", "thread", RT_UINT, 0},           {"Generation", "generation", RT_UINT, 0},
        {"Iteration", "iteration", RT_UINT, 0},     {"Kind", "kind", RT_TEXT, 0},
        {"Kind from", "kind_from", RT_TEXT, 0},     {"Source", "source", RT_TEXT, 0},
        {"Step", "step", RT_UINT, 0},               {"Begin (ms)", "begin_ms", RT_REAL, 6},
        {"Host (ms)", "host_ms", RT_REAL, 6},       {"GPU (ms)", "gpu_ms", RT_REAL, 6},
        {"Gap (ms)", "gap_ms", RT_REAL, 6},         {"GPU idle (ms)", "gpu_idle_ms", RT_REAL, 6},
        {"Calls", "calls", RT_UINT, 0},             {"Launches", "launches", RT_UINT, 0},
        {"Kernels", "kernels", RT_UINT, 0},         {"Input copies", "input_copies", RT_UINT, 0},
        {"Input (B)", "input_bytes", RT_UINT, 0},   {"First input (B)", "first_input_bytes", RT_UINT, 0},
        {"Tokens", "tokens", RT_UINT, 0},           {"Tokens from", "tokens_from", RT_TEXT, 0},
        {"Read (B)", "read_bytes", RT_UINT, 0},     {"Sequences", "sequences", RT_UINT, 0},
        {"First blocks", "first_blocks", RT_UINT, 0}, {"First seq", "first_seq", RT_UINT, 0},
        {"Last seq", "last_seq", RT_UINT, 0},
    };
    size_t i;
    rt_init(tb, "iterations", cols, sizeof cols / sizeof cols[0],
            "Iterations of the serving loop (host span, gap; GPU span and idle: %s; tokens, sequences: estimated)",
            s->gpu_steps ? "OBS_GPU_TIME=steps range spans" : s->gpu_time ? "device times" : "n/a, no GPU time");
    tb->empty = " none: the trace has no ITERATION ranges (--serving: every prompt and decode step)";
    for (i = 0; i < s->nrows; i++) {
        const struct obs_iteration_row *r = &s->rows[i];
        rt_row(tb);
        rt_uint(tb, r->thread);
        rt_uint(tb, r->generation);
        rt_uint(tb, r->iteration);
        rt_text(tb, obs_iteration_kind_name(r->kind));
        rt_text(tb, r->kind_from);
        rt_text(tb, obs_iteration_source_name(r->source));
        if (r->step != UINT32_MAX)
            rt_uint(tb, r->step);
        else
            rt_null(tb);
        rt_real(tb, (double)(r->host_begin >= t->t_first ? r->host_begin - t->t_first : 0) / 1e6);
        rt_real(tb, (double)(r->host_end - r->host_begin) / 1e6);
        ms_cell(tb, r->gpu_timed, (double)(r->gpu_end - r->gpu_begin));
        ms_cell(tb, r->has_gap, (double)r->gap_ns);
        ms_cell(tb, r->has_gpu_idle, (double)r->gpu_idle_ns);
        rt_uint(tb, r->calls);
        rt_uint(tb, r->launches);
        rt_uint(tb, r->kernels);
        rt_uint(tb, r->input_copies);
        rt_uint(tb, r->input_bytes);
        rt_uint(tb, r->first_input_bytes);
        if (r->has_tokens)
            rt_uint(tb, r->tokens);
        else
            rt_null(tb);
        rt_text(tb, r->tokens_from);
        rt_uint(tb, r->read_bytes);
        if (r->has_sequences)
            rt_uint(tb, r->sequences);
        else
            rt_null(tb);
        rt_uint(tb, r->first_blocks);
        rt_uint(tb, r->first_seq);
        rt_uint(tb, r->last_seq);
    }
}

static void spread_cells(struct rtable *tb, const struct obs_serving_spread *sp)
{
    ms_cell(tb, sp->n > 0, sp->p50_ns);
    ms_cell(tb, sp->n > 0, sp->p90_ns);
    ms_cell(tb, sp->n > 0, sp->p99_ns);
    ms_cell(tb, sp->n > 0, (double)sp->max_ns);
}

static void by_kind_table(struct rtable *tb, const struct obs_serving_stats *s)
{
    static const struct rt_col cols[] = {
        {"Kind", "kind", RT_TEXT, 0},           {"Iterations", "iterations", RT_UINT, 0},
        {"Host p50 (ms)", "host_p50_ms", RT_REAL, 6}, {"Host p90 (ms)", "host_p90_ms", RT_REAL, 6},
        {"Host p99 (ms)", "host_p99_ms", RT_REAL, 6}, {"Host max (ms)", "host_max_ms", RT_REAL, 6},
        {"GPU-timed", "gpu_timed", RT_UINT, 0},  {"GPU p50 (ms)", "gpu_p50_ms", RT_REAL, 6},
        {"GPU p90 (ms)", "gpu_p90_ms", RT_REAL, 6}, {"GPU p99 (ms)", "gpu_p99_ms", RT_REAL, 6},
        {"GPU max (ms)", "gpu_max_ms", RT_REAL, 6},
    };
    static const unsigned order[] = {OBS_ITER_KINDS, OBS_ITER_DECODE, OBS_ITER_MIXED, OBS_ITER_PROMPT,
                                     OBS_ITER_UNKNOWN};
    size_t k;
    rt_init(tb, "serving_by_kind", cols, sizeof cols / sizeof cols[0],
            "Iteration time by kind (p50 / p90 / p99: linear interpolation between the closest ranks)");
    tb->empty = " no iterations";
    if (s->nrows == 0)
        return;
    for (k = 0; k < sizeof order / sizeof order[0]; k++) {
        unsigned kind = order[k];
        size_t n = kind == OBS_ITER_KINDS ? s->nrows : s->by_kind[kind];
        if (n == 0 && kind != OBS_ITER_KINDS)
            continue;
        rt_row(tb);
        rt_text(tb, kind == OBS_ITER_KINDS ? "all" : obs_iteration_kind_name(kind));
        rt_uint(tb, n);
        spread_cells(tb, &s->host[kind]);
        rt_uint(tb, s->gpu[kind].n);
        spread_cells(tb, &s->gpu[kind]);
    }
}

static void summary_table(struct rtable *tb, const struct obs_serving_stats *s)
{
    static const struct rt_col cols[] = {
        {"Iterations", "iterations", RT_UINT, 0},   {"Threads", "threads", RT_UINT, 0},
        {"Sessions", "sessions", RT_UINT, 0},       {"Wall (ms)", "wall_ms", RT_REAL, 6},
        {"Gaps", "gaps", RT_UINT, 0},               {"Gap p50 (ms)", "gap_p50_ms", RT_REAL, 6},
        {"Gap p90 (ms)", "gap_p90_ms", RT_REAL, 6}, {"Gap p99 (ms)", "gap_p99_ms", RT_REAL, 6},
        {"Gaps (ms)", "gap_total_ms", RT_REAL, 6},  {"Gap share (%)", "gap_share_pct", RT_REAL, 3},
        {"GPU idle p50 (ms)", "gpu_idle_p50_ms", RT_REAL, 6}, {"GPU idle p90 (ms)", "gpu_idle_p90_ms", RT_REAL, 6},
        {"GPU idle p99 (ms)", "gpu_idle_p99_ms", RT_REAL, 6}, {"GPU idle (ms)", "gpu_idle_total_ms", RT_REAL, 6},
        {"GPU idle share (%)", "gpu_idle_share_pct", RT_REAL, 3}, {"GPU wall (ms)", "gpu_wall_ms", RT_REAL, 6},
        {"Tokens", "tokens", RT_UINT, 0},           {"Tokens/s", "tokens_per_s", RT_REAL, 3},
        {"Sequences", "sequences", RT_UINT, 0},     {"Generated/s", "generated_per_s", RT_REAL, 3},
        {"Time base", "time_base", RT_TEXT, 0},     {"Forced", "forced", RT_UINT, 0},
        {"Id bytes", "id_bytes", RT_UINT, 0},
    };
    rt_init(tb, "serving_summary", cols, sizeof cols / sizeof cols[0],
            "Serving loop: host gaps, GPU idle between iterations, tokens/s (no per-request TTFT)");
    tb->empty = " no iterations";
    if (s->nrows == 0)
        return;
    rt_row(tb);
    rt_uint(tb, s->nrows);
    rt_uint(tb, s->threads);
    rt_uint(tb, s->sessions);
    rt_real(tb, (double)s->wall_ns / 1e6);
    rt_uint(tb, s->gaps.n);
    ms_cell(tb, s->gaps.n > 0, s->gaps.p50_ns);
    ms_cell(tb, s->gaps.n > 0, s->gaps.p90_ns);
    ms_cell(tb, s->gaps.n > 0, s->gaps.p99_ns);
    rt_real(tb, (double)s->gaps.total_ns / 1e6);
    rt_real(tb, 100.0 * s->gap_share);
    ms_cell(tb, s->has_gpu_idle, s->gpu_idle.p50_ns);
    ms_cell(tb, s->has_gpu_idle, s->gpu_idle.p90_ns);
    ms_cell(tb, s->has_gpu_idle, s->gpu_idle.p99_ns);
    ms_cell(tb, s->has_gpu_idle, (double)s->gpu_idle.total_ns);
    if (s->has_gpu_idle)
        rt_real(tb, 100.0 * s->gpu_idle_share);
    else
        rt_null(tb);
    ms_cell(tb, s->has_gpu_idle, (double)s->gpu_wall_ns);
    rt_uint(tb, s->tokens);
    if (s->has_tokens_per_s)
        rt_real(tb, s->tokens_per_s);
    else
        rt_null(tb);
    rt_uint(tb, s->sequences);
    if (s->has_generated_per_s)
        rt_real(tb, s->generated_per_s);
    else
        rt_null(tb);
    rt_text(tb, s->gpu_time ? "gpu" : "host");
    rt_uint(tb, (uint64_t)s->forced);
    rt_uint(tb, s->id_bytes);
    if (!s->gpu_time)
        rt_note(tb, "GPU span and GPU idle n/a: the trace has no GPU time (OBS_GPU_TIME=steps or events)");
    rt_note(tb, "no per-request TTFT: a serving loop's generation is its batch, not a request (the program does "
                "not mark its requests)");
}

int report_serving(const struct obs_trace *t, const struct obs_serving_options *opt, struct report_doc *d)
{
    struct obs_serving_stats s;
    struct rtable trace, iters, kinds, sum;
    if (obs_serving_compute(t, opt, &s) != 0)
        return -1;
    memset(&trace, 0, sizeof trace);
    report_trace_table(&trace, t, NULL);
    iterations_table(&iters, t, &s);
    by_kind_table(&kinds, &s);
    summary_table(&sum, &s);
    rdoc_table(d, &trace);
    rdoc_table(d, &sum);
    rdoc_table(d, &kinds);
    rdoc_table(d, &iters);
    rt_free(&trace);
    rt_free(&iters);
    rt_free(&kinds);
    rt_free(&sum);
    obs_serving_free(&s);
    return 0;
}
