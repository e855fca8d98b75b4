/* obs-report gaps: where the time between GPU work goes (seed 003's
 * metrics). Definitions: docs/reports.md, "gaps".
 *   device_gaps:       per stream, idle time on the device before each piece
 *                      of GPU work (kernel, graph launch, copy, memset) that
 *                      follows another on the stream (GPU spans needed);
 *   launch_gaps:       per host thread, host time from the end of one launch
 *                      call (kernel or graph) to the begin of the next;
 *   sync_share:        time in the synchronising APIs, as a share of the wall
 *                      time of the selected calls;
 *   launches_per_step: kernel launches per decode step, overall and per phase. */
#include "reports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Stats of a gap list: count, total, median, p90, max (values sorted). */
struct gap_stats {
    uint64_t count, positive, total, max;
    double median, p90;
};

static void gap_stats(uint64_t *v, size_t n, struct gap_stats *s)
{
    size_t i;
    memset(s, 0, sizeof *s);
    qsort(v, n, sizeof *v, cmp_u64);
    for (i = 0; i < n; i++) {
        s->total += v[i];
        s->positive += v[i] > 0;
    }
    s->count = n;
    s->max = n ? v[n - 1] : 0;
    s->median = obs_percentile(v, n, 50.0);
    s->p90 = obs_percentile(v, n, 90.0);
}

/* Median and p90 cells: undefined when there is no gap. */
static void gap_quantiles(struct rtable *tb, const struct gap_stats *s)
{
    if (s->count) {
        rt_real(tb, s->median);
        rt_real(tb, s->p90);
    } else {
        rt_null(tb);
        rt_null(tb);
    }
}

static int is_device_work(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_GRAPH || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET;
}

static int is_launch(const struct obs_call *c)
{
    return (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) && !(c->flags & OBS_CALL_NESTED);
}

/* Blocking synchronisation: the SYNC kind's *Synchronize APIs (device,
 * stream, event, context). cudaStreamWaitEvent and its kin are SYNC too but
 * make the device wait, not the host: left out. */
static int is_host_sync(const struct obs_call *c)
{
    return c->kind == OBS_KIND_SYNC && strstr(obs_api_name(c->api), "Synchronize") != NULL;
}

/* ---- device_gaps -------------------------------------------------------------------- */

struct work_item {
    uint32_t device, stream;
    uint64_t begin, end;
    uint32_t call; /* seq */
};

static int cmp_work(const void *a, const void *b)
{
    const struct work_item *x = a, *y = b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

static int device_gaps_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Device", "device", RT_UINT, 0},          {"Stream", "stream", RT_UINT, 0},
        {"Work", "work_items", RT_UINT, 0},        {"Gaps", "gaps", RT_UINT, 0},
        {"Idle gaps", "idle_gaps", RT_UINT, 0},    {"Total (ns)", "total_ns", RT_UINT, 0},
        {"Med (ns)", "med_ns", RT_REAL, 1},        {"P90 (ns)", "p90_ns", RT_REAL, 1},
        {"Max (ns)", "max_ns", RT_UINT, 0},        {"Busy (ns)", "busy_ns", RT_UINT, 0},
        {"Span (ns)", "span_ns", RT_UINT, 0},      {"Gap (%)", "gap_pct", RT_REAL, 3},
    };
    struct work_item *w;
    uint64_t *gaps;
    size_t i, n = 0, s, e;
    int any_gpu = t->ngpu > 0;

    rt_init(tb, "device_gaps", cols, sizeof cols / sizeof cols[0],
            "Device idle gaps per stream (GPU time: idle time before each kernel, graph launch, copy or memset "
            "that follows other work on its stream)");
    if (!any_gpu) {
        tb->empty = " not available: the trace has no GPU time (record with OBS_GPU_TIME=events); "
                    "see the host-side launch gaps";
        return 0;
    }
    tb->empty = " no GPU work selected";
    w = malloc((t->ncalls ? t->ncalls : 1) * sizeof *w);
    gaps = malloc((t->ncalls ? t->ncalls : 1) * sizeof *gaps);
    if (w == NULL || gaps == NULL) {
        free(w);
        free(gaps);
        return -1;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_gpu_time *g = obs_call_gpu(t, c);
        if (g == NULL || !is_device_work(c->kind))
            continue;
        w[n].device = c->device;
        w[n].stream = c->stream;
        w[n].begin = g->begin;
        w[n].end = g->end > g->begin ? g->end : g->begin;
        w[n].call = (uint32_t)i;
        n++;
    }
    qsort(w, n, sizeof *w, cmp_work);
    for (s = 0; s < n; s = e) {
        struct gap_stats gs;
        uint64_t busy_end = 0, first = UINT64_MAX, last = 0, items = 0, busy = 0;
        size_t ngaps = 0;
        for (e = s; e < n && w[e].device == w[s].device && w[e].stream == w[s].stream; e++) {
            int selected = obs_call_filter_match(t, &t->calls[w[e].call], f);
            if (selected) {
                items++;
                busy += w[e].end - w[e].begin;
                if (w[e].begin < first)
                    first = w[e].begin;
                if (w[e].end > last)
                    last = w[e].end;
                if (e > s)
                    gaps[ngaps++] = w[e].begin > busy_end ? w[e].begin - busy_end : 0;
            }
            if (w[e].end > busy_end)
                busy_end = w[e].end;
        }
        if (items == 0)
            continue;
        gap_stats(gaps, ngaps, &gs);
        rt_row(tb);
        rt_uint(tb, w[s].device);
        rt_uint(tb, w[s].stream);
        rt_uint(tb, items);
        rt_uint(tb, gs.count);
        rt_uint(tb, gs.positive);
        rt_uint(tb, gs.total);
        gap_quantiles(tb, &gs);
        rt_uint(tb, gs.max);
        rt_uint(tb, busy);
        rt_uint(tb, last - first);
        rt_real(tb, last > first ? 100.0 * (double)gs.total / (double)(last - first) : 0.0);
    }
    free(w);
    free(gaps);
    return 0;
}

/* ---- launch_gaps -------------------------------------------------------------------- */

static int launch_gaps_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"TID", "tid", RT_UINT, 0},             {"Launches", "launches", RT_UINT, 0},
        {"Gaps", "gaps", RT_UINT, 0},           {"Total (ns)", "total_ns", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1},     {"Med (ns)", "med_ns", RT_REAL, 1},
        {"P90 (ns)", "p90_ns", RT_REAL, 1},     {"Max (ns)", "max_ns", RT_UINT, 0},
    };
    uint64_t *gaps = malloc((t->ncalls ? t->ncalls : 1) * sizeof *gaps);
    size_t th, i;

    rt_init(tb, "launch_gaps", cols, sizeof cols / sizeof cols[0],
            "Host time between launches per thread (host time: end of one kernel or graph launch call to the "
            "begin of the next)");
    tb->empty = " no launches selected";
    if (gaps == NULL)
        return -1;
    for (th = 0; th < t->nthreads; th++) {
        struct gap_stats gs;
        size_t ngaps = 0, seen = 0, selected = 0;
        uint64_t prev_end = 0;
        for (i = 0; i < t->ncalls; i++) {
            const struct obs_call *c = &t->calls[i];
            if (c->thread != th || !is_launch(c))
                continue;
            if (obs_call_filter_match(t, c, f)) {
                selected++;
                if (seen)
                    gaps[ngaps++] = c->host_begin > prev_end ? c->host_begin - prev_end : 0;
            }
            seen++;
            prev_end = c->host_end;
        }
        if (selected == 0)
            continue;
        gap_stats(gaps, ngaps, &gs);
        rt_row(tb);
        rt_uint(tb, t->threads[th].tid);
        rt_uint(tb, selected);
        rt_uint(tb, gs.count);
        rt_uint(tb, gs.total);
        if (gs.count)
            rt_real(tb, (double)gs.total / (double)gs.count);
        else
            rt_null(tb);
        gap_quantiles(tb, &gs);
        rt_uint(tb, gs.max);
    }
    free(gaps);
    return 0;
}

/* ---- sync_share -------------------------------------------------------------------- */

static int sync_share_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Calls", "calls", RT_UINT, 0},          {"Total (ns)", "total_ns", RT_UINT, 0},
        {"Avg (ns)", "avg_ns", RT_REAL, 1},      {"Max (ns)", "max_ns", RT_UINT, 0},
        {"Wall (ns)", "wall_ns", RT_UINT, 0},    {"Wall (%)", "wall_pct", RT_REAL, 3},
        {"API", "api", RT_TEXT, 0},
    };
    uint64_t calls[OBS_API_COUNT + 1], ns[OBS_API_COUNT + 1], mx[OBS_API_COUNT + 1];
    uint64_t first = UINT64_MAX, last = 0, wall, all_calls = 0, all_ns = 0, all_max = 0;
    size_t i;

    memset(calls, 0, sizeof calls);
    memset(ns, 0, sizeof ns);
    memset(mx, 0, sizeof mx);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        unsigned api = c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT;
        uint64_t d = c->host_end - c->host_begin;
        if (!obs_call_filter_match(t, c, f))
            continue;
        if (c->host_begin < first)
            first = c->host_begin;
        if (c->host_end > last)
            last = c->host_end;
        if (!is_host_sync(c))
            continue;
        calls[api]++;
        ns[api] += d;
        if (d > mx[api])
            mx[api] = d;
    }
    wall = last > first ? last - first : 0;
    rt_init(tb, "sync_share", cols, sizeof cols / sizeof cols[0],
            "Synchronisation share of wall time (host time in the *Synchronize APIs; wall: first selected call's "
            "begin to last one's end)");
    tb->empty = " no calls selected";
    for (i = 0; i <= OBS_API_COUNT; i++) {
        if (!calls[i])
            continue;
        rt_row(tb);
        rt_uint(tb, calls[i]);
        rt_uint(tb, ns[i]);
        rt_real(tb, (double)ns[i] / (double)calls[i]);
        rt_uint(tb, mx[i]);
        rt_uint(tb, wall);
        rt_real(tb, wall ? 100.0 * (double)ns[i] / (double)wall : 0.0);
        rt_text(tb, obs_api_name((unsigned)i));
        all_calls += calls[i];
        all_ns += ns[i];
        if (mx[i] > all_max)
            all_max = mx[i];
    }
    if (first != UINT64_MAX) {
        rt_row(tb);
        rt_uint(tb, all_calls);
        rt_uint(tb, all_ns);
        if (all_calls)
            rt_real(tb, (double)all_ns / (double)all_calls);
        else
            rt_null(tb);
        rt_uint(tb, all_max);
        rt_uint(tb, wall);
        rt_real(tb, wall ? 100.0 * (double)all_ns / (double)wall : 0.0);
        rt_text(tb, "(all synchronisation)");
    }
    if (t->nthreads > 1)
        rt_note(tb, "%zu threads: their synchronisation times add up, so the share can pass 100%%", t->nthreads);
    return 0;
}

/* ---- launches_per_step ---------------------------------------------------------------- */

/* Kernel launches per (generation, step) among the selected launches in
 * phase (NULL: any); one row. */
static int steps_row(const struct obs_trace *t, const struct obs_call_filter *f, const char *phase, uint64_t *keys,
                     struct rtable *tb)
{
    size_t i, n = 0, nsteps = 0, s, e;
    uint64_t *counts = keys; /* reused in place: counts[k] <= position of run k */
    struct obs_duration_stats st;

    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t step;
        if (c->kind != OBS_KIND_KERNEL || !obs_call_filter_match(t, c, f))
            continue;
        step = obs_phase_step(t, c->phase);
        if (step == UINT32_MAX || (phase && !obs_call_in_phase(t, c, phase)))
            continue;
        keys[n++] = ((uint64_t)obs_call_generation(t, c) << 32) | step;
    }
    if (n == 0)
        return 0;
    qsort(keys, n, sizeof *keys, cmp_u64);
    for (s = 0; s < n; s = e) {
        for (e = s; e < n && keys[e] == keys[s]; e++)
            ;
        counts[nsteps++] = e - s;
    }
    obs_duration_stats(counts, nsteps, &st);
    rt_row(tb);
    rt_text(tb, phase ? phase : "(all)");
    rt_uint(tb, nsteps);
    rt_uint(tb, st.total);
    rt_uint(tb, st.min);
    rt_real(tb, st.median);
    rt_real(tb, st.avg);
    rt_uint(tb, st.max);
    return 0;
}

static int launches_per_step_table(const struct obs_trace *t, const struct obs_call_filter *f, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Phase", "phase", RT_TEXT, 0},     {"Steps", "steps", RT_UINT, 0},
        {"Launches", "launches", RT_UINT, 0}, {"Min", "min", RT_UINT, 0},
        {"Med", "median", RT_REAL, 1},      {"Avg", "avg", RT_REAL, 3},
        {"Max", "max", RT_UINT, 0},
    };
    uint64_t *keys = malloc((t->ncalls ? t->ncalls : 1) * sizeof *keys);
    const char **names;
    size_t nnames, p;

    rt_init(tb, "launches_per_step", cols, sizeof cols / sizeof cols[0],
            "Kernel launches per decode step (steps: (generation, step) pairs with a selected kernel launch)");
    tb->empty = t->nphases ? " no kernel launches in decode steps" : " none: the trace has no phases";
    if (keys == NULL)
        return -1;
    nnames = report_phase_names(t, &names);
    if (nnames == (size_t)-1) {
        free(keys);
        return -1;
    }
    steps_row(t, f, NULL, keys, tb);
    for (p = 0; p < nnames; p++)
        steps_row(t, f, names[p], keys, tb);
    free(names);
    free(keys);
    return 0;
}

int report_gaps(const struct obs_trace *t, const struct obs_call_filter *f, struct report_doc *d)
{
    struct rtable tabs[5];
    size_t i, n = 0;
    int rc = 0;

    memset(tabs, 0, sizeof tabs);
    report_trace_table(&tabs[n++], t, f);
    if (d->format == REPORT_TABLE) {
        char sel[512];
        uint64_t dur = t->t_last > t->t_first ? t->t_last - t->t_first : 0;
        obs_call_filter_describe(f, sel, sizeof sel);
        rdoc_note(d, "obsshim: %s: pid %u, duration %.3f ms, %zu calls; selection: %s", t->path, t->pid,
                  (double)dur / 1e6, t->ncalls, sel);
        rt_free(&tabs[--n]);
    }
    if (device_gaps_table(t, f, &tabs[n++]) != 0 || launch_gaps_table(t, f, &tabs[n++]) != 0 ||
        sync_share_table(t, f, &tabs[n++]) != 0 || launches_per_step_table(t, f, &tabs[n++]) != 0)
        rc = -1;
    if (rc == 0)
        for (i = 0; i < n; i++)
            rdoc_table(d, &tabs[i]);
    if (rc == 0 && t->ngpu == 0 && d->format == REPORT_JSON) /* the table says it itself */
        rdoc_note(d, "device_gaps: not available, the trace has no GPU time (OBS_GPU_TIME=events); host-side "
                     "launch gaps only");
    for (i = 0; i < sizeof tabs / sizeof tabs[0]; i++)
        rt_free(&tabs[i]);
    if (rc != 0)
        errno = ENOMEM;
    return rc;
}
