/* obs-report compare A B: what changed from run A to run B, per kernel name
 * and per phase, TTFT and tokens/s, and the kernels only one run has.
 * Ratios are B / A. See reports.h and docs/reports.md, "compare". */
#include "reports.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

static void ratio_cell(struct rtable *tb, double a, double b)
{
    if (a != 0.0)
        rt_real(tb, b / a);
    else
        rt_null(tb);
}

/* B - A of two counts or ns totals, as a signed cell. Modulo 2^64: real
 * values are far below 2^63, and a damaged trace's huge times give a
 * wrong number, not a signed overflow. */
static int64_t delta(uint64_t b, uint64_t a)
{
    return (int64_t)(b - a);
}

/* One metric row: a value per side (has_*: defined), delta, ratio, change %. */
static void metric_row(struct rtable *tb, const char *name, int has_a, double a, int has_b, double b)
{
    rt_row(tb);
    rt_text(tb, name);
    if (has_a)
        rt_real(tb, a);
    else
        rt_null(tb);
    if (has_b)
        rt_real(tb, b);
    else
        rt_null(tb);
    if (has_a && has_b) {
        rt_real(tb, b - a);
        ratio_cell(tb, a, b);
        if (a != 0.0)
            rt_real(tb, 100.0 * (b - a) / a);
        else
            rt_null(tb);
    } else {
        rt_null(tb);
        rt_null(tb);
        rt_null(tb);
    }
}

static void metrics_table(struct rtable *tb, const struct obs_trace *a, const struct obs_trace *b,
                          const struct obs_kernel_stats *ka, const struct obs_kernel_stats *kb,
                          const struct obs_phase_stats *pa, const struct obs_phase_stats *pb)
{
    static const struct rt_col cols[] = {
        {"Metric", "metric", RT_TEXT, 0}, {"A", "a", RT_REAL, -6},        {"B", "b", RT_REAL, -6},
        {"B - A", "delta", RT_REAL, -6},  {"B / A", "ratio", RT_REAL, 4}, {"Change (%)", "change_pct", RT_REAL, 2},
    };
    rt_init(tb, "metrics", cols, sizeof cols / sizeof cols[0], "Run A: %s; run B: %s", a->path, b->path);
    metric_row(tb, "duration_ms", 1, (double)(a->t_last - a->t_first) / 1e6, 1, (double)(b->t_last - b->t_first) / 1e6);
    metric_row(tb, "calls", 1, (double)a->ncalls, 1, (double)b->ncalls);
    metric_row(tb, "kernel_launches", 1, (double)ka->launches, 1, (double)kb->launches);
    metric_row(tb, "kernel_time_ns", 1, (double)ka->total_ns, 1, (double)kb->total_ns);
    metric_row(tb, "best_ttft_ms", pa->has_best_ttft, pa->best_ttft_ms, pb->has_best_ttft, pb->best_ttft_ms);
    metric_row(tb, "best_tokens_per_s", pa->has_best_tokens, pa->best_tokens_per_s, pb->has_best_tokens,
               pb->best_tokens_per_s);
    if (ka->gpu_time != kb->gpu_time)
        rt_note(tb, "kernel times: A has %s, B %s: the time deltas compare different clocks",
                ka->gpu_time ? "GPU time" : "host API time", kb->gpu_time ? "GPU time" : "host API time");
}

/* ---- per kernel ------------------------------------------------------------------------ */

struct kernel_pair {
    const char *name;
    const struct obs_kernel_stat *a, *b; /* NULL: not in that run */
    uint64_t abs_delta;
};

static int cmp_pair(const void *x, const void *y)
{
    const struct kernel_pair *p = x, *q = y;
    if (p->abs_delta != q->abs_delta)
        return p->abs_delta > q->abs_delta ? -1 : 1;
    return strcmp(p->name, q->name);
}

static int kernel_tables(const struct obs_kernel_stats *ka, const struct obs_kernel_stats *kb, struct rtable *tb,
                         struct rtable *only_a, struct rtable *only_b)
{
    static const struct rt_col cols[] = {
        {"Count A", "count_a", RT_UINT, 0},        {"Count B", "count_b", RT_UINT, 0},
        {"Count B-A", "count_delta", RT_INT, 0},   {"Total A (ns)", "total_a_ns", RT_UINT, 0},
        {"Total B (ns)", "total_b_ns", RT_UINT, 0}, {"Total B-A (ns)", "total_delta_ns", RT_INT, 0},
        {"Avg A (ns)", "avg_a_ns", RT_REAL, 1},    {"Avg B (ns)", "avg_b_ns", RT_REAL, 1},
        {"Avg B-A (ns)", "avg_delta_ns", RT_REAL, 1}, {"Total B/A", "ratio", RT_REAL, 4},
        {"Name", "name", RT_TEXT, 0},
    };
    static const struct rt_col only_cols[] = {
        {"Count", "count", RT_UINT, 0},
        {"Total Time (ns)", "total_ns", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1},
        {"Name", "name", RT_TEXT, 0},
    };
    struct kernel_pair *pairs = malloc((ka->nrows + kb->nrows + 1) * sizeof *pairs);
    size_t i, n = 0;

    rt_init(tb, "kernels", cols, sizeof cols / sizeof cols[0],
            "Kernels by name, A vs B (by the size of the change in total time)");
    tb->empty = " no kernel launches in either run";
    rt_init(only_a, "only_in_a", only_cols, sizeof only_cols / sizeof only_cols[0], "Kernels only in A");
    only_a->empty = " none";
    rt_init(only_b, "only_in_b", only_cols, sizeof only_cols / sizeof only_cols[0], "Kernels only in B");
    only_b->empty = " none";
    if (pairs == NULL)
        return -1;
    for (i = 0; i < ka->nrows; i++) {
        pairs[n].name = ka->rows[i].name;
        pairs[n].a = &ka->rows[i];
        pairs[n].b = obs_kernel_stats_find(kb, ka->rows[i].name);
        n++;
    }
    for (i = 0; i < kb->nrows; i++)
        if (obs_kernel_stats_find(ka, kb->rows[i].name) == NULL) {
            pairs[n].name = kb->rows[i].name;
            pairs[n].a = NULL;
            pairs[n].b = &kb->rows[i];
            n++;
        }
    for (i = 0; i < n; i++) {
        uint64_t ta = pairs[i].a ? pairs[i].a->st.total : 0, tb_ = pairs[i].b ? pairs[i].b->st.total : 0;
        pairs[i].abs_delta = ta > tb_ ? ta - tb_ : tb_ - ta;
    }
    qsort(pairs, n, sizeof *pairs, cmp_pair);
    for (i = 0; i < n; i++) {
        const struct obs_kernel_stat *a = pairs[i].a, *b = pairs[i].b;
        uint64_t ca = a ? a->st.count : 0, cb = b ? b->st.count : 0;
        uint64_t ta = a ? a->st.total : 0, tb2 = b ? b->st.total : 0;
        rt_row(tb);
        rt_uint(tb, ca);
        rt_uint(tb, cb);
        rt_int(tb, delta(cb, ca));
        rt_uint(tb, ta);
        rt_uint(tb, tb2);
        rt_int(tb, delta(tb2, ta));
        if (a)
            rt_real(tb, a->st.avg);
        else
            rt_null(tb);
        if (b)
            rt_real(tb, b->st.avg);
        else
            rt_null(tb);
        if (a && b)
            rt_real(tb, b->st.avg - a->st.avg);
        else
            rt_null(tb);
        if (a && ta)
            rt_real(tb, (double)tb2 / (double)ta);
        else
            rt_null(tb);
        rt_text(tb, pairs[i].name);
        if (a == NULL || b == NULL) {
            const struct obs_kernel_stat *only = a ? a : b;
            struct rtable *o = a ? only_a : only_b;
            rt_row(o);
            rt_uint(o, only->st.count);
            rt_uint(o, only->st.total);
            rt_real(o, only->st.avg);
            rt_text(o, pairs[i].name);
        }
    }
    free(pairs);
    return 0;
}

/* ---- per phase ------------------------------------------------------------------------- */

static const struct obs_phase_row *find_phase(const struct obs_phase_stats *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->nphases; i++)
        if (strcmp(s->phases[i].phase, name) == 0)
            return &s->phases[i];
    return NULL;
}

static void phase_row(struct rtable *tb, const char *name, const struct obs_phase_row *a,
                      const struct obs_phase_row *b)
{
    int ta = a && a->timed, tbt = b && b->timed;
    rt_row(tb);
    rt_uint(tb, a ? a->ranges : 0);
    rt_uint(tb, b ? b->ranges : 0);
    rt_uint(tb, a ? a->kernels : 0);
    rt_uint(tb, b ? b->kernels : 0);
    if (ta)
        rt_uint(tb, a->time_ns);
    else
        rt_null(tb);
    if (tbt)
        rt_uint(tb, b->time_ns);
    else
        rt_null(tb);
    if (ta && tbt)
        rt_int(tb, delta(b->time_ns, a->time_ns));
    else
        rt_null(tb);
    if (ta && a->ranges)
        rt_real(tb, (double)a->time_ns / (double)a->ranges);
    else
        rt_null(tb);
    if (tbt && b->ranges)
        rt_real(tb, (double)b->time_ns / (double)b->ranges);
    else
        rt_null(tb);
    if (ta && tbt && a->time_ns)
        rt_real(tb, (double)b->time_ns / (double)a->time_ns);
    else
        rt_null(tb);
    rt_text(tb, name);
}

static void phases_table(struct rtable *tb, const struct obs_phase_stats *pa, const struct obs_phase_stats *pb)
{
    static const struct rt_col cols[] = {
        {"Ranges A", "ranges_a", RT_UINT, 0},      {"Ranges B", "ranges_b", RT_UINT, 0},
        {"Kernels A", "kernels_a", RT_UINT, 0},    {"Kernels B", "kernels_b", RT_UINT, 0},
        {"Time A (ns)", "time_a_ns", RT_UINT, 0},  {"Time B (ns)", "time_b_ns", RT_UINT, 0},
        {"Time B-A (ns)", "time_delta_ns", RT_INT, 0}, {"Avg A (ns)", "avg_a_ns", RT_REAL, 1},
        {"Avg B (ns)", "avg_b_ns", RT_REAL, 1},    {"Time B/A", "ratio", RT_REAL, 4},
        {"Phase", "phase", RT_TEXT, 0},
    };
    size_t i;
    char buf[32];
    rt_init(tb, "phases", cols, sizeof cols / sizeof cols[0],
            "Phases, A vs B (time: the phase table's; avg: time per range)");
    tb->empty = " neither run has phases";
    for (i = 0; i < pa->nphases; i++)
        phase_row(tb, obs_phase_row_name(&pa->phases[i], buf, sizeof buf), &pa->phases[i],
                  find_phase(pb, pa->phases[i].phase));
    for (i = 0; i < pb->nphases; i++)
        if (find_phase(pa, pb->phases[i].phase) == NULL)
            phase_row(tb, obs_phase_row_name(&pb->phases[i], buf, sizeof buf), NULL, &pb->phases[i]);
    if (pa->nphases && pb->nphases && pa->gpu_time != pb->gpu_time)
        rt_note(tb, "phase times: A has %s, B %s", pa->gpu_time ? "GPU time" : "host API time",
                pb->gpu_time ? "GPU time" : "host API time");
}

int report_compare(const struct obs_trace *a, const struct obs_trace *b, struct report_doc *d)
{
    struct obs_kernel_stats ka, kb;
    struct obs_phase_stats pa, pb;
    struct rtable tabs[5];
    size_t i;
    int rc = -1;

    memset(tabs, 0, sizeof tabs);
    memset(&ka, 0, sizeof ka);
    memset(&kb, 0, sizeof kb);
    memset(&pa, 0, sizeof pa);
    memset(&pb, 0, sizeof pb);
    if (obs_kernel_stats_compute(a, NULL, &ka) != 0 || obs_kernel_stats_compute(b, NULL, &kb) != 0 ||
        obs_phase_stats_compute(a, &pa) != 0)
        goto done;
    if (obs_phase_stats_compute(b, &pb) != 0) {
        memset(&pb, 0, sizeof pb);
        goto done;
    }
    metrics_table(&tabs[0], a, b, &ka, &kb, &pa, &pb);
    if (kernel_tables(&ka, &kb, &tabs[1], &tabs[2], &tabs[3]) != 0)
        goto done;
    phases_table(&tabs[4], &pa, &pb);
    for (i = 0; i < 5; i++)
        rdoc_table(d, &tabs[i]);
    rc = 0;
done:
    for (i = 0; i < 5; i++)
        rt_free(&tabs[i]);
    obs_kernel_stats_free(&ka);
    obs_kernel_stats_free(&kb);
    obs_phase_stats_free(&pa);
    obs_phase_stats_free(&pb);
    if (rc != 0)
        errno = ENOMEM;
    return rc;
}
