/* obs-report summary as structured reports: nsys's cuda_gpu_kern_sum,
 * cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum and nvtx_kern_sum, and the
 * generations' TTFT and tokens/s (trace_phases.h). See reports.h. */
#include "reports.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

/* ---- shared helpers --------------------------------------------------------------- */

size_t report_phase_names(const struct obs_trace *t, const char ***names)
{
    size_t i, j, n = 0;
    *names = malloc((t->nphases ? t->nphases : 1) * sizeof **names);
    if (*names == NULL)
        return (size_t)-1;
    for (i = 0; i < t->nphases; i++) {
        const char *p = t->phases[i].phase;
        if (p[0] == '\0')
            continue;
        for (j = 0; j < n && strcmp((*names)[j], p) != 0; j++)
            ;
        if (j == n)
            (*names)[n++] = p;
    }
    return n;
}

void report_trace_table(struct rtable *tb, const struct obs_trace *t, const struct obs_call_filter *f)
{
    static const struct rt_col cols[] = {
        {"File", "file", RT_TEXT, 0},
        {"PID", "pid", RT_UINT, 0},
        {"Start (ns)", "t_first_ns", RT_UINT, 0},
        {"Duration (ms)", "duration_ms", RT_REAL, 6},
        {"Calls", "calls", RT_UINT, 0},
        {"Selected", "calls_selected", RT_UINT, 0},
        {"Kernel time", "kernel_time_base", RT_TEXT, 0},
        {"Copy time", "copy_time_base", RT_TEXT, 0},
        {"Selection", "selection", RT_TEXT, 0},
        {"Records lost", "records_lost", RT_UINT, 0},
        {"Shim cost (ns/call)", "shim_ns_per_call", RT_REAL, 1},
        {"GPU time", "gpu_time", RT_TEXT, 0},
        {"GPU range spans", "gpu_range_spans", RT_UINT, 0},
    };
    const char *mode = obs_trace_meta(t, "gpu_time");
    char sel[512];
    size_t i, kept = 0;
    for (i = 0; i < t->ncalls; i++)
        kept += obs_call_filter_match(t, &t->calls[i], f);
    obs_call_filter_describe(f, sel, sizeof sel);
    rt_init(tb, "trace", cols, sizeof cols / sizeof cols[0], "Trace");
    rt_row(tb);
    rt_text(tb, t->path);
    rt_uint(tb, t->pid);
    rt_uint(tb, t->t_first);
    rt_real(tb, t->t_last > t->t_first ? (double)(t->t_last - t->t_first) / 1e6 : 0.0);
    rt_uint(tb, t->ncalls);
    rt_uint(tb, kept);
    rt_text(tb, obs_trace_kind_has_gpu_time(t, OBS_KIND_KERNEL) ? "gpu" : "host");
    rt_text(tb, obs_trace_kind_has_gpu_time(t, OBS_KIND_MEMCPY) || obs_trace_kind_has_gpu_time(t, OBS_KIND_MEMSET)
                    ? "gpu"
                    : "host");
    rt_text(tb, sel);
    rt_uint(tb, t->records_lost);
    if (t->self_calls) /* per call, the one-time work apart, as the summary's "Shim cost" */
        rt_real(tb, (double)(t->self_ns - t->self_once_ns) / (double)t->self_calls);
    else
        rt_null(tb);
    /* the mode the shim used: steps, events, cupti (a fallback rewrites the meta) or off */
    rt_text(tb, (t->flags & OBS_FILE_GPU_STEPS)                  ? "steps"
                : !(t->flags & OBS_FILE_GPU_TIME)               ? "off"
                : mode != NULL && strcmp(mode, "off") != 0 ? mode
                                                            : "events");
    rt_uint(tb, t->nrange_spans);
}

static const char *time_base_title(int gpu)
{
    return gpu ? "GPU time" : "host API time: the trace has no GPU time for them";
}

/* ---- cuda_gpu_kern_sum ------------------------------------------------------------- */

static void kern_sum_table(struct rtable *tb, const struct obs_kernel_stats *ks)
{
    static const struct rt_col cols[] = {
        {"Time (%)", "time_pct", RT_REAL, 3},    {"Total Time (ns)", "total_ns", RT_UINT, 0},
        {"Instances", "instances", RT_UINT, 0},  {"Avg (ns)", "avg_ns", RT_REAL, 1},
        {"Med (ns)", "med_ns", RT_REAL, 1},      {"Min (ns)", "min_ns", RT_UINT, 0},
        {"Max (ns)", "max_ns", RT_UINT, 0},      {"StdDev (ns)", "stddev_ns", RT_REAL, 1},
        {"Name", "name", RT_TEXT, 0},
    };
    size_t i;
    rt_init(tb, "cuda_gpu_kern_sum", cols, sizeof cols / sizeof cols[0], "Kernels (%s)",
            time_base_title(ks->gpu_time));
    tb->empty = " no kernel launches recorded";
    for (i = 0; i < ks->nrows; i++) {
        const struct obs_duration_stats *s = &ks->rows[i].st;
        rt_row(tb);
        rt_real(tb, ks->rows[i].pct);
        rt_uint(tb, s->total);
        rt_uint(tb, s->count);
        rt_real(tb, s->avg);
        rt_real(tb, s->median);
        rt_uint(tb, s->min);
        rt_uint(tb, s->max);
        rt_real(tb, s->stddev);
        rt_text(tb, ks->rows[i].name);
    }
    if (ks->skipped)
        rt_note(tb, "launches without GPU time, not counted: %llu", (unsigned long long)ks->skipped);
}

/* ---- cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum ------------------------------------ */

#define NOPS (OBS_DIR_COUNT + 1) /* memcpy per direction, then memset */

static void op_name(unsigned op, char *buf, size_t len)
{
    if (op == OBS_DIR_COUNT)
        snprintf(buf, len, "memset");
    else
        snprintf(buf, len, "memcpy %s", op == OBS_DIR_NONE ? "unknown" : obs_direction_name(op));
}

struct op_values {
    uint64_t *times, *sizes;
    size_t ntimes, nsizes;
};

static int mem_tables(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *time_tb,
                      struct rtable *size_tb)
{
    static const struct rt_col tcols[] = {
        {"Time (%)", "time_pct", RT_REAL, 3}, {"Total Time (ns)", "total_ns", RT_UINT, 0},
        {"Count", "count", RT_UINT, 0},       {"Avg (ns)", "avg_ns", RT_REAL, 1},
        {"Med (ns)", "med_ns", RT_REAL, 1},   {"Min (ns)", "min_ns", RT_UINT, 0},
        {"Max (ns)", "max_ns", RT_UINT, 0},   {"StdDev (ns)", "stddev_ns", RT_REAL, 1},
        {"Operation", "operation", RT_TEXT, 0},
    };
    static const struct rt_col scols[] = {
        {"Total (MB)", "total_mb", RT_REAL, 3}, {"Count", "count", RT_UINT, 0},
        {"Avg (MB)", "avg_mb", RT_REAL, 3},     {"Med (MB)", "med_mb", RT_REAL, 3},
        {"Min (MB)", "min_mb", RT_REAL, 3},     {"Max (MB)", "max_mb", RT_REAL, 3},
        {"StdDev (MB)", "stddev_mb", RT_REAL, 3}, {"Operation", "operation", RT_TEXT, 0},
    };
    int gpu = obs_trace_kind_has_gpu_time(t, OBS_KIND_MEMCPY) || obs_trace_kind_has_gpu_time(t, OBS_KIND_MEMSET);
    struct op_values ops[NOPS];
    struct obs_duration_stats st[NOPS], sz[NOPS];
    uint64_t all_time = 0, skipped = 0;
    size_t i, n = 0;
    unsigned op;
    int rc = -1;

    memset(ops, 0, sizeof ops);
    for (i = 0; i < t->ncalls; i++)
        n += (t->calls[i].kind == OBS_KIND_MEMCPY || t->calls[i].kind == OBS_KIND_MEMSET);
    for (op = 0; op < NOPS; op++) {
        ops[op].times = malloc((n ? n : 1) * sizeof *ops[op].times);
        ops[op].sizes = malloc((n ? n : 1) * sizeof *ops[op].sizes);
        if (ops[op].times == NULL || ops[op].sizes == NULL)
            goto done;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t ns;
        if ((c->kind != OBS_KIND_MEMCPY && c->kind != OBS_KIND_MEMSET) || !obs_call_filter_match(t, c, f))
            continue;
        op = c->kind == OBS_KIND_MEMSET ? OBS_DIR_COUNT : obs_call_direction(c);
        if (op >= OBS_DIR_COUNT && c->kind != OBS_KIND_MEMSET) /* a damaged direction: not a memset's row */
            op = OBS_DIR_NONE;
        ops[op].sizes[ops[op].nsizes++] = c->u.bytes;
        if (obs_call_duration(t, c, gpu, &ns))
            ops[op].times[ops[op].ntimes++] = ns;
        else
            skipped++;
    }
    for (op = 0; op < NOPS; op++) {
        obs_duration_stats(ops[op].times, ops[op].ntimes, &st[op]);
        obs_duration_stats(ops[op].sizes, ops[op].nsizes, &sz[op]);
        all_time += st[op].total;
    }
    rt_init(time_tb, "cuda_gpu_mem_time_sum", tcols, sizeof tcols / sizeof tcols[0],
            "Copy and memset time by operation (%s; nsys cuda_gpu_mem_time_sum)", time_base_title(gpu));
    time_tb->empty = " no copies or memsets recorded";
    rt_init(size_tb, "cuda_gpu_mem_size_sum", scols, sizeof scols / sizeof scols[0],
            "Copy and memset sizes by operation (MB = 10^6 bytes; nsys cuda_gpu_mem_size_sum)");
    size_tb->empty = " no copies or memsets recorded";
    /* rows by total time (sizes: by total bytes), then operation order */
    for (;;) {
        unsigned best = NOPS;
        char name[48];
        for (op = 0; op < NOPS; op++)
            if (ops[op].ntimes && (best == NOPS || st[op].total > st[best].total))
                best = op;
        if (best == NOPS)
            break;
        op_name(best, name, sizeof name);
        rt_row(time_tb);
        rt_real(time_tb, all_time ? 100.0 * (double)st[best].total / (double)all_time : 0.0);
        rt_uint(time_tb, st[best].total);
        rt_uint(time_tb, st[best].count);
        rt_real(time_tb, st[best].avg);
        rt_real(time_tb, st[best].median);
        rt_uint(time_tb, st[best].min);
        rt_uint(time_tb, st[best].max);
        rt_real(time_tb, st[best].stddev);
        rt_text(time_tb, name);
        ops[best].ntimes = 0;
    }
    for (;;) {
        unsigned best = NOPS;
        char name[48];
        for (op = 0; op < NOPS; op++)
            if (ops[op].nsizes && (best == NOPS || sz[op].total > sz[best].total))
                best = op;
        if (best == NOPS)
            break;
        op_name(best, name, sizeof name);
        rt_row(size_tb);
        rt_real(size_tb, (double)sz[best].total / 1e6);
        rt_uint(size_tb, sz[best].count);
        rt_real(size_tb, sz[best].avg / 1e6);
        rt_real(size_tb, sz[best].median / 1e6);
        rt_real(size_tb, (double)sz[best].min / 1e6);
        rt_real(size_tb, (double)sz[best].max / 1e6);
        rt_real(size_tb, sz[best].stddev / 1e6);
        rt_text(size_tb, name);
        ops[best].nsizes = 0;
    }
    if (skipped)
        rt_note(time_tb, "copies and memsets without GPU time, not counted: %llu", (unsigned long long)skipped);
    rc = 0;
done:
    for (op = 0; op < NOPS; op++) {
        free(ops[op].times);
        free(ops[op].sizes);
    }
    return rc;
}

/* ---- nvtx_kern_sum ------------------------------------------------------------------- */

/* Ranges of phase name that hold a kernel launch f keeps (with a time in
 * the kernel time base). */
static uint64_t phase_range_instances(const struct obs_trace *t, const struct obs_call_filter *f, const char *name,
                                      int gpu, uint8_t *seen)
{
    size_t i;
    uint64_t n = 0;
    uint32_t r;
    memset(seen, 0, t->nphases ? t->nphases : 1);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t ns;
        if (c->kind != OBS_KIND_KERNEL || !obs_call_filter_match(t, c, f) || !obs_call_duration(t, c, gpu, &ns))
            continue;
        for (r = c->phase; r != OBS_NONE; r = t->phases[r].parent)
            if (!seen[r] && (strcmp(t->phases[r].phase, name) == 0 || strcmp(t->phases[r].name, name) == 0)) {
                seen[r] = 1;
                n++;
            }
    }
    return n;
}

static int nvtx_kern_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Range", "range", RT_TEXT, 0},         {"Range Inst", "range_instances", RT_UINT, 0},
        {"Kern Inst", "kernel_instances", RT_UINT, 0}, {"Total Time (ns)", "total_ns", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1},     {"Med (ns)", "med_ns", RT_REAL, 1},
        {"Min (ns)", "min_ns", RT_UINT, 0},     {"Max (ns)", "max_ns", RT_UINT, 0},
        {"StdDev (ns)", "stddev_ns", RT_REAL, 1}, {"Kernel Name", "name", RT_TEXT, 0},
    };
    const char **names;
    size_t nnames = report_phase_names(t, &names), p, i;
    uint8_t *seen = malloc(t->nphases ? t->nphases : 1);
    int gpu = obs_trace_kind_has_gpu_time(t, OBS_KIND_KERNEL);

    if (nnames == (size_t)-1 || seen == NULL) {
        if (nnames != (size_t)-1)
            free(names);
        free(seen);
        return -1;
    }
    rt_init(tb, "nvtx_kern_sum", cols, sizeof cols / sizeof cols[0],
            "Kernels by phase (%s; a kernel counts in its phase and every phase around it; nsys nvtx_kern_sum)",
            time_base_title(gpu));
    tb->empty = t->nphases ? " no kernel launches inside phases" : " none: the trace has no phases";
    for (p = 0; p < nnames; p++) {
        struct obs_call_filter pf = f ? *f : (struct obs_call_filter){0};
        struct obs_kernel_stats ks;
        uint64_t inst;
        if (pf.phase == NULL)
            pf.phase = names[p];
        else
            pf.phase2 = names[p];
        if (obs_kernel_stats_compute(t, &pf, &ks) != 0) {
            free(names);
            free(seen);
            return -1;
        }
        inst = ks.nrows ? phase_range_instances(t, &pf, names[p], gpu, seen) : 0;
        for (i = 0; i < ks.nrows; i++) {
            const struct obs_duration_stats *s = &ks.rows[i].st;
            rt_row(tb);
            rt_text(tb, names[p]);
            rt_uint(tb, inst);
            rt_uint(tb, s->count);
            rt_uint(tb, s->total);
            rt_real(tb, s->avg);
            rt_real(tb, s->median);
            rt_uint(tb, s->min);
            rt_uint(tb, s->max);
            rt_real(tb, s->stddev);
            rt_text(tb, ks.rows[i].name);
        }
        obs_kernel_stats_free(&ks);
    }
    free(names);
    free(seen);
    return 0;
}

/* ---- generations (TTFT, tokens/s) ------------------------------------------------------ */

/* phases: the phase table over all generations (trace_phases.h), in order
 * of first call; time_ns undefined for a phase with no timed call. */
static void phases_table(struct rtable *tb, const struct obs_phase_stats *s)
{
    static const struct rt_col cols[] = {
        {"Time (ns)", "time_ns", RT_UINT, 0}, {"Ranges", "ranges", RT_UINT, 0},
        {"Calls", "calls", RT_UINT, 0},       {"Launches", "launches", RT_UINT, 0},
        {"Kernels", "kernels", RT_UINT, 0},   {"Bytes", "bytes", RT_UINT, 0},
        {"Phase", "phase", RT_TEXT, 0},       {"Time base", "time_base", RT_TEXT, 0},
    };
    size_t i;
    char buf[32];
    rt_init(tb, "phases", cols, sizeof cols / sizeof cols[0],
            "Phases over all generations (%s; a phase's time is the sum over its ranges of first call begin to "
            "last call end)",
            s->gpu_time ? "GPU time" : "host API time");
    tb->empty = " none: the trace has no phases";
    for (i = 0; i < s->nphases; i++) {
        const struct obs_phase_row *r = &s->phases[i];
        rt_row(tb);
        if (r->timed)
            rt_uint(tb, r->time_ns);
        else
            rt_null(tb);
        rt_uint(tb, r->ranges);
        rt_uint(tb, r->calls);
        rt_uint(tb, r->launches);
        rt_uint(tb, r->kernels);
        rt_uint(tb, r->bytes);
        rt_text(tb, obs_phase_row_name(r, buf, sizeof buf));
        rt_text(tb, s->time_base);
    }
    if (s->unlabelled_calls)
        rt_note(tb, "calls outside any phase: %llu", (unsigned long long)s->unlabelled_calls);
}

/* generation_spread: the brief exit summary's generations block (best,
 * median and p90 of TTFT and tokens/s over the generations the bests count:
 * obs_generation_spread_compute); one row when the trace has generations. */
static int spread_table(struct rtable *tb, const struct obs_phase_stats *s)
{
    static const struct rt_col cols[] = {
        {"Generations", "generations", RT_UINT, 0},
        {"Counted", "generations_counted", RT_UINT, 0},
        {"Best TTFT (ms)", "ttft_best_ms", RT_REAL, 6},
        {"Generation", "ttft_best_generation", RT_UINT, 0},
        {"Median TTFT (ms)", "ttft_median_ms", RT_REAL, 6},
        {"P90 TTFT (ms)", "ttft_p90_ms", RT_REAL, 6},
        {"Best tokens/s", "tokens_best_per_s", RT_REAL, 3},
        {"Generation", "tokens_best_generation", RT_UINT, 0},
        {"Median tokens/s", "tokens_median_per_s", RT_REAL, 3},
        {"P90 tokens/s", "tokens_p90_per_s", RT_REAL, 3},
        {"Time base", "time_base", RT_TEXT, 0},
    };
    struct obs_generation_spread sp;
    rt_init(tb, "generation_spread", cols, sizeof cols / sizeof cols[0],
            "Generations: best / median / p90 of TTFT and tokens/s (p90: the value 9 in 10 do at least as well as)");
    tb->empty = " none: the trace has no phases";
    if (obs_generation_spread_compute(s, &sp) != 0)
        return -1;
    if (s->ngens == 0)
        return 0;
    rt_row(tb);
    rt_uint(tb, s->ngens);
    rt_uint(tb, s->best_over);
    if (sp.ttft_n) {
        rt_real(tb, sp.ttft_best_ms);
        rt_uint(tb, s->best_ttft_generation);
        rt_real(tb, sp.ttft_median_ms);
        rt_real(tb, sp.ttft_p90_ms);
    } else {
        rt_null(tb);
        rt_null(tb);
        rt_null(tb);
        rt_null(tb);
    }
    if (sp.tokens_n) {
        rt_real(tb, sp.tokens_best);
        rt_uint(tb, s->best_tokens_generation);
        rt_real(tb, sp.tokens_median);
        rt_real(tb, sp.tokens_p90);
    } else {
        rt_null(tb);
        rt_null(tb);
        rt_null(tb);
        rt_null(tb);
    }
    rt_text(tb, s->time_base);
    if (s->unbounded_steps)
        rt_note(tb, "tokens/s (and a step0-end TTFT) n/a in %zu generation%s: no host sync or token copy bounds "
                    "the decode steps (OBS_GPU_TIME=steps measures them on the GPU)",
                s->unbounded_steps, s->unbounded_steps == 1 ? "" : "s");
    if (s->unbounded_forwards)
        rt_note(tb, "TTFT n/a in %zu generation%s: no host sync or copy from the device ends the prompt's forward "
                    "before the next step's launches (OBS_GPU_TIME=steps measures it on the GPU)",
                s->unbounded_forwards, s->unbounded_forwards == 1 ? "" : "s");
    return 0;
}

static int generation_tables(const struct obs_trace *t, struct rtable *gens, struct rtable *bests,
                             struct rtable *phases, struct rtable *spread)
{
    static const struct rt_col gcols[] = {
        {"Generation", "generation", RT_UINT, 0},   {"TTFT (ms)", "ttft_ms", RT_REAL, 6},
        {"Tokens/s", "tokens_per_s", RT_REAL, 3},    {"Decode steps", "decode_steps", RT_UINT, 0},
        {"Prefill (ms)", "prefill_ms", RT_REAL, 6},  {"First decode (ms)", "first_decode_ms", RT_REAL, 6},
        {"Steady (ms)", "steady_ms", RT_REAL, 6},    {"Kernels", "kernels", RT_UINT, 0},
        {"In best", "in_best", RT_UINT, 0},          {"Time base", "time_base", RT_TEXT, 0},
        {"TID", "tid", RT_UINT, 0},                  {"First token", "first_token", RT_TEXT, 0},
        {"Steps/s", "steps_per_s", RT_REAL, 3},      {"Sequences", "sequences", RT_UINT, 0},
        {"ITL (ms)", "itl_ms", RT_REAL, 6},          {"TTFT to", "ttft_to", RT_TEXT, 0},
    };
    static const struct rt_col bcols[] = {
        {"Best TTFT (ms)", "best_ttft_ms", RT_REAL, 6}, {"Generation", "best_ttft_generation", RT_UINT, 0},
        {"Best tokens/s", "best_tokens_per_s", RT_REAL, 3}, {"Generation", "best_tokens_generation", RT_UINT, 0},
        {"Over", "generations_counted", RT_UINT, 0},    {"Time base", "time_base", RT_TEXT, 0},
    };
    struct obs_phase_stats s;
    size_t i;

    if (obs_phase_stats_compute(t, &s) != 0)
        return -1;
    rt_init(gens, "generations", gcols, sizeof gcols / sizeof gcols[0],
            "Generations (%s): first token 'prefill' (the prompt's own): TTFT = the prompt's first call to the end "
            "of its token read, tokens/s = steps/s x sequences, steps/s = decode steps / time to the last step's "
            "token read; 'step0' (the prefill reads no token): tokens/s = (N_decode - 1) / T_decode_after_first, "
            "TTFT to the end of the prompt's forward (ttft_to 'forward-end (%s)': the program reads something back "
            "and step 0 reads no token) or T_prefill + T_first_decode ('step0-end')",
            s.gpu_time ? "GPU time" : "host wall-clock between host syncs",
            s.gpu_time ? "device" : "next delimiter");
    gens->empty = " none: the trace has no phases";
    for (i = 0; i < s.ngens; i++) {
        const struct obs_generation_row *g = &s.gens[i];
        rt_row(gens);
        rt_uint(gens, g->generation);
        if (g->ttft_defined)
            rt_real(gens, g->ttft_ms);
        else
            rt_null(gens);
        if (g->tokens_defined)
            rt_real(gens, g->tokens_per_s);
        else
            rt_null(gens);
        rt_uint(gens, g->decode_steps);
        if (g->has_prefill)
            rt_real(gens, (double)g->prefill_ns / 1e6);
        else
            rt_null(gens);
        if (g->has_first_decode)
            rt_real(gens, (double)g->first_decode_ns / 1e6);
        else
            rt_null(gens);
        if (g->has_steady)
            rt_real(gens, (double)g->steady_ns / 1e6);
        else
            rt_null(gens);
        rt_uint(gens, g->kernels);
        rt_uint(gens, (uint64_t)g->in_best);
        rt_text(gens, s.time_base);
        rt_uint(gens, g->thread);
        rt_text(gens, g->first_token);
        if (g->steps_defined)
            rt_real(gens, g->steps_per_s);
        else
            rt_null(gens);
        rt_uint(gens, g->sequences);
        if (g->steps_defined)
            rt_real(gens, g->itl_ms);
        else
            rt_null(gens);
        rt_text(gens, g->ttft_to);
    }
    if (s.unbounded_forwards)
        rt_note(gens, "TTFT n/a in %zu generation%s: no host sync or copy from the device ends the prompt's forward "
                      "before the next step's launches (OBS_GPU_TIME=steps measures it on the GPU)",
                s.unbounded_forwards, s.unbounded_forwards == 1 ? "" : "s");
    rt_init(bests, "bests", bcols, sizeof bcols / sizeof bcols[0], "Bests");
    bests->empty = " none: the trace has no phases";
    if (s.ngens) {
        rt_row(bests);
        if (s.has_best_ttft) {
            rt_real(bests, s.best_ttft_ms);
            rt_uint(bests, s.best_ttft_generation);
        } else {
            rt_null(bests);
            rt_null(bests);
        }
        if (s.has_best_tokens) {
            rt_real(bests, s.best_tokens_per_s);
            rt_uint(bests, s.best_tokens_generation);
        } else {
            rt_null(bests);
            rt_null(bests);
        }
        rt_uint(bests, s.best_over);
        rt_text(bests, s.time_base);
    }
    phases_table(phases, &s);
    if (spread_table(spread, &s) != 0) {
        obs_phase_stats_free(&s);
        return -1;
    }
    obs_phase_stats_free(&s);
    return 0;
}

/* ---- api_calls ------------------------------------------------------------------------ */

struct api_sum {
    unsigned api;
    uint64_t calls, ns;
};

static int cmp_api_sum(const void *a, const void *b)
{
    const struct api_sum *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    return strcmp(obs_api_name(x->api), obs_api_name(y->api));
}

/* Every API the selected calls used: calls and host time, most called
 * first (the summary's "API calls" table). */
static void api_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Calls", "calls", RT_UINT, 0}, {"Total Time (ns)", "total_ns", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1}, {"Kind", "kind", RT_TEXT, 0},
        {"Name", "api", RT_TEXT, 0},
    };
    struct api_sum rows[OBS_API_COUNT + 1];
    size_t i, n = 0;

    memset(rows, 0, sizeof rows);
    for (i = 0; i <= OBS_API_COUNT; i++)
        rows[i].api = (unsigned)i;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        unsigned api = c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT;
        if (!obs_call_filter_match(t, c, f))
            continue;
        rows[api].calls++;
        rows[api].ns += c->host_end - c->host_begin;
    }
    for (i = 0; i <= OBS_API_COUNT; i++)
        if (rows[i].calls)
            rows[n++] = rows[i];
    qsort(rows, n, sizeof *rows, cmp_api_sum);
    rt_init(tb, "api_calls", cols, sizeof cols / sizeof cols[0], "API calls (host time)");
    tb->empty = " no calls recorded";
    for (i = 0; i < n; i++) {
        rt_row(tb);
        rt_uint(tb, rows[i].calls);
        rt_uint(tb, rows[i].ns);
        rt_real(tb, (double)rows[i].ns / (double)rows[i].calls);
        rt_text(tb, obs_call_kind_name(obs_api_kind(rows[i].api)));
        rt_text(tb, obs_api_name(rows[i].api));
    }
}

/* ---- the summary ------------------------------------------------------------------------ */

int report_summary(const struct obs_trace *t, const struct obs_call_filter *f, struct report_doc *d)
{
    struct rtable trace, kern, mtime, msize, nvtx, gens, bests, apis, phases, spread;
    struct obs_kernel_stats ks;
    int rc = 0;

    memset(&trace, 0, sizeof trace);
    memset(&kern, 0, sizeof kern);
    memset(&mtime, 0, sizeof mtime);
    memset(&msize, 0, sizeof msize);
    memset(&nvtx, 0, sizeof nvtx);
    memset(&gens, 0, sizeof gens);
    memset(&bests, 0, sizeof bests);
    memset(&apis, 0, sizeof apis);
    memset(&phases, 0, sizeof phases);
    memset(&spread, 0, sizeof spread);
    if (d->format == REPORT_TABLE) {
        /* today's summary text, then the tables it does not have */
        if (obs_report_summary_filtered(t, d->f, NULL, f) != 0)
            return -1;
    } else {
        report_trace_table(&trace, t, f);
        rdoc_table(d, &trace);
        if (obs_kernel_stats_compute(t, f, &ks) != 0)
            return -1;
        kern_sum_table(&kern, &ks);
        obs_kernel_stats_free(&ks);
        rdoc_table(d, &kern);
    }
    if (mem_tables(t, f, &mtime, &msize) != 0)
        rc = -1;
    else {
        rdoc_table(d, &mtime);
        rdoc_table(d, &msize);
    }
    if (rc == 0 && nvtx_kern_table(t, f, &nvtx) != 0)
        rc = -1;
    else if (rc == 0)
        rdoc_table(d, &nvtx);
    if (rc == 0 && d->format != REPORT_TABLE) {
        /* the text summary already has the phase tables */
        if (generation_tables(t, &gens, &bests, &phases, &spread) != 0)
            rc = -1;
        else {
            api_table(t, f, &apis);
            rdoc_table(d, &gens);
            rdoc_table(d, &bests);
            rdoc_table(d, &apis);
            rdoc_table(d, &phases);
            rdoc_table(d, &spread);
            if (obs_call_filter_active(f))
                rdoc_note(d, "generations, bests, phases and generation_spread are those of the whole trace (the "
                             "selection does not apply)");
        }
    }
    rt_free(&trace);
    rt_free(&kern);
    rt_free(&mtime);
    rt_free(&msize);
    rt_free(&nvtx);
    rt_free(&gens);
    rt_free(&bests);
    rt_free(&apis);
    rt_free(&phases);
    rt_free(&spread);
    if (rc != 0)
        errno = ENOMEM;
    return rc;
}
