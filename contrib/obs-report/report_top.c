/* obs-report top N: the N kernels with the most total time, and the N
 * slowest single kernel launches. See reports.h. */
#include "reports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct launch_time {
    uint64_t ns;
    size_t seq;
};

static int cmp_slowest(const void *a, const void *b)
{
    const struct launch_time *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void top_kernels_table(struct rtable *tb, const struct obs_kernel_stats *ks, size_t n)
{
    static const struct rt_col cols[] = {
        {"Rank", "rank", RT_UINT, 0},           {"Time (%)", "time_pct", RT_REAL, 3},
        {"Total Time (ns)", "total_ns", RT_UINT, 0}, {"Instances", "instances", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1},     {"Max (ns)", "max_ns", RT_UINT, 0},
        {"Name", "name", RT_TEXT, 0},
    };
    size_t i;
    double rest = 100.0;
    rt_init(tb, "top_kernels", cols, sizeof cols / sizeof cols[0], "Top %zu kernels by total time (%s)", n,
            ks->gpu_time ? "GPU time" : "host API time: the trace has no GPU time for kernels");
    tb->empty = " no kernel launches selected";
    for (i = 0; i < ks->nrows && i < n; i++) {
        rt_row(tb);
        rt_uint(tb, i + 1);
        rt_real(tb, ks->rows[i].pct);
        rt_uint(tb, ks->rows[i].st.total);
        rt_uint(tb, ks->rows[i].st.count);
        rt_real(tb, ks->rows[i].st.avg);
        rt_uint(tb, ks->rows[i].st.max);
        rt_text(tb, ks->rows[i].name);
        rest -= ks->rows[i].pct;
    }
    if (ks->nrows > n)
        rt_note(tb, "%zu more kernel names: %.3f%% of the time", ks->nrows - n, rest > 0 ? rest : 0.0);
    if (ks->skipped)
        rt_note(tb, "launches without GPU time, not counted: %llu", (unsigned long long)ks->skipped);
}

static int slowest_table(const struct obs_trace *t, const struct obs_call_filter *f, int gpu, size_t n,
                         struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Rank", "rank", RT_UINT, 0},         {"Duration (ns)", "duration_ns", RT_UINT, 0},
        {"Begin (ms)", "begin_ms", RT_REAL, 6}, {"Seq", "seq", RT_UINT, 0},
        {"TID", "tid", RT_UINT, 0},           {"Stream", "stream", RT_UINT, 0},
        {"Range", "range", RT_TEXT, 0},       {"Step", "step", RT_UINT, 0},
        {"Name", "name", RT_TEXT, 0},
    };
    struct launch_time *v = malloc((t->ncalls ? t->ncalls : 1) * sizeof *v);
    size_t i, m = 0;

    if (v == NULL)
        return -1;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t ns;
        if (c->kind != OBS_KIND_KERNEL || !obs_call_filter_match(t, c, f) || !obs_call_duration(t, c, gpu, &ns))
            continue;
        v[m].ns = ns;
        v[m].seq = i;
        m++;
    }
    qsort(v, m, sizeof *v, cmp_slowest);
    rt_init(tb, "slowest_launches", cols, sizeof cols / sizeof cols[0],
            "The %zu slowest kernel launches (%s; begin: host time after the trace's start)", n,
            gpu ? "GPU time" : "host API time");
    tb->empty = " no kernel launches selected";
    for (i = 0; i < m && i < n; i++) {
        const struct obs_call *c = &t->calls[v[i].seq];
        const char *name = obs_call_kernel_name(t, c);
        uint32_t step = obs_phase_step(t, c->phase);
        rt_row(tb);
        rt_uint(tb, i + 1);
        rt_uint(tb, v[i].ns);
        rt_real(tb, (double)(c->host_begin - t->t_first) / 1e6);
        rt_uint(tb, v[i].seq);
        rt_uint(tb, t->threads[c->thread].tid);
        rt_uint(tb, c->stream);
        rt_text(tb, c->phase != OBS_NONE ? t->phases[c->phase].name : NULL);
        if (step != UINT32_MAX)
            rt_uint(tb, step);
        else
            rt_null(tb);
        rt_text(tb, name && name[0] ? name : "(unnamed kernel)");
    }
    free(v);
    return 0;
}

int report_top(const struct obs_trace *t, const struct obs_call_filter *f, size_t n, struct report_doc *d)
{
    struct rtable trace, top, slow;
    struct obs_kernel_stats ks;
    int rc = 0;

    memset(&trace, 0, sizeof trace);
    memset(&top, 0, sizeof top);
    memset(&slow, 0, sizeof slow);
    if (obs_kernel_stats_compute(t, f, &ks) != 0)
        return -1;
    if (d->format != REPORT_TABLE) {
        report_trace_table(&trace, t, f);
        rdoc_table(d, &trace);
    } else {
        char sel[512];
        obs_call_filter_describe(f, sel, sizeof sel);
        rdoc_note(d, "obsshim: %s: pid %u, %zu calls, %llu kernel launches counted; selection: %s", t->path, t->pid,
                  t->ncalls, (unsigned long long)ks.launches, sel);
    }
    top_kernels_table(&top, &ks, n);
    rdoc_table(d, &top);
    if (slowest_table(t, f, ks.gpu_time, n, &slow) != 0)
        rc = -1;
    else
        rdoc_table(d, &slow);
    obs_kernel_stats_free(&ks);
    rt_free(&trace);
    rt_free(&top);
    rt_free(&slow);
    if (rc != 0)
        errno = ENOMEM;
    return rc;
}
