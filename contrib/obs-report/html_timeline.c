/* obs-report html: the timeline of one generation (see html_timeline.h). */
#include "html_timeline.h"

#include <stdlib.h>
#include <string.h>

#include "html_charts.h"
#include "html_out.h"

#define LABEL_W 138     /* lane names */
#define LANE_H 18
#define LANE_GAP 4
#define AXIS_H 20
#define MAX_DEPTH 4     /* phase lanes; deeper ranges share the last */
#define MAX_HOST 8      /* host thread lanes */
#define MAX_DEVICE 16   /* stream lanes */
#define CHAR_W 6.6

static int in_generation(const struct obs_trace *t, const struct obs_call *c, uint32_t thread, uint32_t gen)
{
    const struct obs_phase *p;
    if (c->phase == OBS_NONE)
        return 0;
    p = &t->phases[c->phase];
    return p->thread == thread && p->generation == gen;
}

int html_timeline_find(const struct obs_trace *t, uint32_t tid, uint32_t gen, struct html_timeline *tl)
{
    size_t i, timed = 0, early = 0;
    uint32_t th;

    memset(tl, 0, sizeof *tl);
    for (th = 0; th < t->nthreads && t->threads[th].tid != tid; th++)
        ;
    if (th == t->nthreads)
        return -1;
    tl->thread = th;
    tl->generation = gen;
    tl->host_begin = tl->dev_begin = UINT64_MAX;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_gpu_time *g;
        if (!in_generation(t, c, th, gen))
            continue;
        tl->calls++;
        tl->kernels += c->kind == OBS_KIND_KERNEL;
        if (c->host_begin < tl->host_begin)
            tl->host_begin = c->host_begin;
        if (c->host_end > tl->host_end)
            tl->host_end = c->host_end;
        g = obs_call_gpu(t, c);
        if (g == NULL)
            continue;
        timed++;
        early += g->begin + 1000 < c->host_begin; /* began a microsecond before it was launched */
        if (g->begin < tl->dev_begin)
            tl->dev_begin = g->begin;
        if (g->end > tl->dev_end)
            tl->dev_end = g->end;
    }
    if (tl->calls == 0)
        return -1;
    for (i = 0; t->ngpu == 0 && i < t->nrange_spans; i++) { /* OBS_GPU_TIME=steps: the ranges' spans */
        const struct obs_range_span *x = &t->range_spans[i];
        const struct obs_phase *live = &t->phases[x->live];
        if (live->thread != th || live->generation != gen)
            continue;
        timed++;
        early += x->begin + 1000 < live->begin; /* began before its range opened on the host */
        if (x->begin < tl->dev_begin)
            tl->dev_begin = x->begin;
        if (x->end > tl->dev_end)
            tl->dev_end = x->end;
    }
    if (timed == 0) {
        tl->dev_begin = tl->dev_end = 0;
        return 0;
    }
    tl->own_device_axis = early * 2 > timed;
    if (!tl->own_device_axis) { /* one clock: one window */
        if (tl->dev_begin < tl->host_begin)
            tl->host_begin = tl->dev_begin;
        if (tl->dev_end > tl->host_end)
            tl->host_end = tl->dev_end;
        tl->dev_begin = tl->host_begin;
        tl->dev_end = tl->host_end;
    }
    return 0;
}

static const char *kind_fill(unsigned kind)
{
    switch (kind) {
    case OBS_KIND_KERNEL:
        return html_palette(0);
    case OBS_KIND_MEMCPY:
        return html_palette(1);
    case OBS_KIND_MEMSET:
        return html_palette(5);
    case OBS_KIND_SYNC:
        return html_palette(3);
    case OBS_KIND_GRAPH:
        return html_palette(6);
    case OBS_KIND_ALLOC:
        return html_palette(4);
    default:
        return html_palette(9);
    }
}

/* Items of a lane, drawn in order; one narrower than a pixel that touches
 * the one before in the same colour is merged into it. */
struct merger {
    FILE *f;
    double y, h;
    double x0, x1;
    const char *fill;
    const char *cls; /* CSS class of the rects, or NULL */
    size_t count;
    char tip[320];
    char label[160]; /* drawn inside when it fits and nothing was merged */
    int open;
};

static void merge_flush(struct merger *m)
{
    double w;
    if (!m->open)
        return;
    w = m->x1 - m->x0 < 0.8 ? 0.8 : m->x1 - m->x0;
    fprintf(m->f, "<rect%s%s%s x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>",
            m->cls ? " class=\"" : "", m->cls ? m->cls : "", m->cls ? "\"" : "", m->x0, m->y, w, m->h, m->fill);
    if (m->count > 1)
        fprintf(m->f, "%zu items, drawn as one at this scale", m->count);
    else
        html_esc(m->f, m->tip);
    fputs("</title></rect>", m->f);
    if (m->count == 1 && m->label[0] && w > 4 * CHAR_W) {
        size_t fit = (size_t)((w - 6) / CHAR_W);
        fprintf(m->f, "<text class=\"in\" x=\"%.2f\" y=\"%.1f\" pointer-events=\"none\">", m->x0 + 3,
                m->y + m->h - 4.5);
        html_esc_cut(m->f, m->label, fit > 1 ? fit - 1 : 1);
        fputs("</text>", m->f);
    }
    fputc('\n', m->f);
    m->open = 0;
}

static void merge_add(struct merger *m, double x0, double x1, const char *fill, const char *tip, const char *label)
{
    if (m->open && fill == m->fill && x0 <= m->x1 + 0.5 && (x1 - x0 < 1.0 || m->x1 - m->x0 < 1.0)) {
        if (x1 > m->x1)
            m->x1 = x1;
        m->count++;
        return;
    }
    merge_flush(m);
    m->open = 1;
    m->x0 = x0;
    m->x1 = x1;
    m->fill = fill;
    m->count = 1;
    snprintf(m->tip, sizeof m->tip, "%s", tip);
    snprintf(m->label, sizeof m->label, "%s", label ? label : "");
}

struct axis {
    uint64_t t0;      /* ns at the plot's left edge */
    double px_per_ns;
    double x_left, x_right;
};

static double axis_x(const struct axis *a, uint64_t t)
{
    double x = a->x_left + (t > a->t0 ? (double)(t - a->t0) : -(double)(a->t0 - t)) * a->px_per_ns;
    if (x < a->x_left)
        return a->x_left;
    return x > a->x_right ? a->x_right : x;
}

static void draw_axis(FILE *f, const struct axis *a, double y, uint64_t span, const char *what)
{
    double step = html_nice_ceil((a->x_right - a->x_left) / a->px_per_ns / 8.0), v;
    char buf[64];
    fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", a->x_left, y, a->x_right, y);
    for (v = 0; v <= (double)span + step * 1e-9 && a->x_left + v * a->px_per_ns <= a->x_right + 0.01; v += step) {
        double x = a->x_left + v * a->px_per_ns;
        fprintf(f, "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, y, x, y + 4);
        fprintf(f, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>", x, y + 15,
                html_ns(v, buf, sizeof buf));
    }
    fprintf(f, "<text class=\"small\" x=\"4\" y=\"%.1f\">", y + 15);
    html_esc(f, what);
    fputs("</text>\n", f);
}

static void lane_label(FILE *f, double y, const char *text)
{
    fprintf(f, "<text x=\"4\" y=\"%.1f\">", y + LANE_H - 5);
    html_esc_cut(f, text, (size_t)((LABEL_W - 8) / CHAR_W));
    fputs("</text>", f);
}

static void call_tip(const struct obs_trace *t, const struct obs_call *c, uint64_t ns, char *buf, size_t len)
{
    char d[64];
    const char *name = c->kind == OBS_KIND_KERNEL ? obs_call_kernel_name(t, c) : "";
    snprintf(buf, len, "%s%s%s: %s", obs_api_name(c->api), name && name[0] ? " " : "", name ? name : "",
             html_ns((double)ns, d, sizeof d));
}

struct lane_key {
    uint32_t a, b;
};

/* OBS_GPU_TIME=steps: a range span of the generation inside the device window. */
static int span_in_window(const struct obs_trace *t, const struct html_timeline *tl, const struct obs_range_span *x,
                          uint64_t ds)
{
    const struct obs_phase *live = &t->phases[x->live];
    return live->thread == tl->thread && live->generation == tl->generation && x->end >= tl->dev_begin &&
           x->begin <= tl->dev_begin + ds;
}

/* OBS_GPU_TIME=steps: the generation's range spans on one stream lane,
 * the enclosing drawn first (DECODE/STEADY under its steps), coloured by
 * the phase they count for. */
static int draw_range_spans(FILE *f, const struct obs_trace *t, const struct html_timeline *tl, struct merger *m,
                            const struct axis *da, uint32_t device, uint32_t stream, uint64_t ds)
{
    size_t n = 0, i;
    uint32_t *order = obs_range_spans_by_stream(t, &n);
    char tip[320], d[64], name[256];
    if (order == NULL)
        return -1;
    m->cls = "ph";
    for (i = 0; i < n; i++) {
        const struct obs_range_span *x = &t->range_spans[order[i]];
        const struct obs_stream *sm = obs_trace_stream(t, x->stream);
        const struct obs_phase *counted = &t->phases[x->range != OBS_NONE ? x->range : x->live];
        const char *label;
        if (x->stream != stream || (sm ? sm->device : 0) != device || !span_in_window(t, tl, x, ds))
            continue;
        label = obs_range_span_name(t, x, name, sizeof name);
        snprintf(tip, sizeof tip, "%s on the GPU: %s%s", label, html_ns((double)(x->end - x->begin), d, sizeof d),
                 x->flags & OBS_RANGE_SPAN_RELABELLED ? " (counted for its calls' final label)" : "");
        merge_add(m, axis_x(da, x->begin), axis_x(da, x->end), html_phase_fill(counted->phase), tip, label);
        merge_flush(m); /* nested ranges overlap: each its own rect */
    }
    m->cls = NULL;
    free(order);
    return 0;
}

static int cmp_lane(const void *x, const void *y)
{
    const struct lane_key *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

int html_timeline_draw(FILE *f, const struct obs_trace *t, const struct html_timeline *tl, int width,
                       uint64_t host_scale_ns, uint64_t dev_scale_ns, const char *run)
{
    struct lane_key host[MAX_HOST], dev[MAX_DEVICE];
    size_t nhost = 0, ndev = 0, more_host = 0, more_dev = 0, i, k, *sel, nsel = 0;
    uint32_t min_depth = UINT32_MAX, depths = 0;
    uint64_t dev_span = tl->dev_end - tl->dev_begin, host_span = tl->host_end - tl->host_begin;
    struct axis ha, da;
    struct merger m;
    double y, h;
    int has_dev = tl->dev_end > tl->dev_begin;
    char tipbuf[320], buf[64];

    uint64_t hs = host_scale_ns ? host_scale_ns : host_span, ds;
    if (hs == 0)
        hs = 1;
    ds = !tl->own_device_axis ? hs : dev_scale_ns ? dev_scale_ns : dev_span ? dev_span : 1;
    sel = malloc((t->ncalls ? t->ncalls : 1) * sizeof *sel);
    if (sel == NULL)
        return -1;
    /* the calls in the window, and the lanes they need */
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_gpu_time *g = obs_call_gpu(t, c);
        int on_host = c->host_end >= tl->host_begin && c->host_begin <= tl->host_begin + hs;
        int on_dev = has_dev && g && g->end >= tl->dev_begin && g->begin <= tl->dev_begin + ds &&
                     c->kind != OBS_KIND_SYNC && c->kind != OBS_KIND_ALLOC;
        struct lane_key key;
        if (!on_host && !on_dev)
            continue;
        sel[nsel++] = i;
        if (on_host) {
            for (k = 0; k < nhost && host[k].a != c->thread; k++)
                ;
            if (k == nhost) {
                if (nhost < MAX_HOST)
                    host[nhost++] = (struct lane_key){c->thread, 0};
                else
                    more_host = 1;
            }
        }
        if (on_dev) {
            key.a = c->device;
            key.b = c->stream;
            for (k = 0; k < ndev && (dev[k].a != key.a || dev[k].b != key.b); k++)
                ;
            if (k == ndev) {
                if (ndev < MAX_DEVICE)
                    dev[ndev++] = key;
                else
                    more_dev = 1;
            }
        }
    }
    for (i = 0; has_dev && t->ngpu == 0 && i < t->nrange_spans; i++) { /* OBS_GPU_TIME=steps */
        const struct obs_range_span *x = &t->range_spans[i];
        const struct obs_stream *sm = obs_trace_stream(t, x->stream);
        struct lane_key key;
        if (!span_in_window(t, tl, x, ds))
            continue;
        key.a = sm ? sm->device : 0;
        key.b = x->stream;
        for (k = 0; k < ndev && (dev[k].a != key.a || dev[k].b != key.b); k++)
            ;
        if (k == ndev) {
            if (ndev < MAX_DEVICE)
                dev[ndev++] = key;
            else
                more_dev = 1;
        }
    }
    qsort(host, nhost, sizeof *host, cmp_lane);
    qsort(dev, ndev, sizeof *dev, cmp_lane);
    for (i = 0; i < t->nphases; i++)
        if (t->phases[i].thread == tl->thread && t->phases[i].generation == tl->generation &&
            t->phases[i].depth < min_depth)
            min_depth = t->phases[i].depth;
    for (i = 0; i < t->nphases; i++)
        if (t->phases[i].thread == tl->thread && t->phases[i].generation == tl->generation &&
            t->phases[i].depth - min_depth + 1 > depths)
            depths = t->phases[i].depth - min_depth + 1;
    if (depths > MAX_DEPTH)
        depths = MAX_DEPTH;

    ha.x_left = LABEL_W;
    ha.x_right = width - 10;
    ha.px_per_ns = (ha.x_right - ha.x_left) / (double)hs;
    ha.t0 = tl->host_begin;
    da = ha;
    da.px_per_ns = (da.x_right - da.x_left) / (double)ds;
    da.t0 = tl->dev_begin;
    h = (double)(depths + nhost) * (LANE_H + LANE_GAP) + AXIS_H;
    if (ndev)
        h += (double)ndev * (LANE_H + LANE_GAP) + (tl->own_device_axis ? AXIS_H + 8 : 0);
    h += 6;

    fprintf(f,
            "<svg viewBox=\"0 0 %d %.0f\" width=\"%d\" height=\"%.0f\" role=\"img\" class=\"timeline\" "
            "data-generation=\"%u\" data-tid=\"%u\" data-calls=\"%llu\" data-kernels=\"%llu\"",
            width, h, width, h, tl->generation, t->threads[tl->thread].tid, (unsigned long long)tl->calls,
            (unsigned long long)tl->kernels);
    if (run)
        fprintf(f, " data-run=\"%s\"", run);
    fputs(">\n", f);
    memset(&m, 0, sizeof m);
    m.f = f;
    y = 0;

    /* phase ranges, one lane per depth */
    for (k = 0; k < depths; k++) {
        lane_label(f, y, k == 0 ? "phases" : "");
        m.y = y;
        m.h = LANE_H;
        m.cls = "ph";
        for (i = 0; i < t->nphases; i++) {
            const struct obs_phase *p = &t->phases[i];
            uint32_t d;
            if (p->thread != tl->thread || p->generation != tl->generation)
                continue;
            d = p->depth - min_depth;
            if (d > MAX_DEPTH - 1)
                d = MAX_DEPTH - 1;
            if (d != k)
                continue;
            snprintf(tipbuf, sizeof tipbuf, "%s: %s", p->name, html_ns((double)(p->end - p->begin), buf, sizeof buf));
            merge_add(&m, axis_x(&ha, p->begin), axis_x(&ha, p->end), html_phase_fill(p->phase),
                      tipbuf, p->name);
        }
        merge_flush(&m);
        y += LANE_H + LANE_GAP;
    }
    /* host threads */
    for (k = 0; k < nhost; k++) {
        const struct obs_thread *th = &t->threads[host[k].a];
        snprintf(tipbuf, sizeof tipbuf, "host %u%s%s", th->tid, th->name ? " " : "", th->name ? th->name : "");
        lane_label(f, y, tipbuf);
        m.y = y + 2;
        m.h = LANE_H - 4;
        m.cls = NULL;
        for (i = 0; i < nsel; i++) {
            const struct obs_call *c = &t->calls[sel[i]];
            if (c->thread != host[k].a || c->host_end < tl->host_begin || c->host_begin > tl->host_begin + hs)
                continue;
            call_tip(t, c, c->host_end - c->host_begin, tipbuf, sizeof tipbuf);
            merge_add(&m, axis_x(&ha, c->host_begin), axis_x(&ha, c->host_end), kind_fill(c->kind), tipbuf, NULL);
        }
        merge_flush(&m);
        y += LANE_H + LANE_GAP;
    }
    draw_axis(f, &ha, y, hs, tl->own_device_axis ? "host clock" : "");
    y += AXIS_H;
    /* GPU streams */
    if (ndev && tl->own_device_axis)
        y += 8;
    for (k = 0; k < ndev; k++) {
        snprintf(tipbuf, sizeof tipbuf, "GPU %u stream %u", dev[k].a, dev[k].b);
        lane_label(f, y, tipbuf);
        m.y = y + 2;
        m.h = LANE_H - 4;
        m.cls = NULL;
        for (i = 0; i < nsel; i++) {
            const struct obs_call *c = &t->calls[sel[i]];
            const struct obs_gpu_time *g = obs_call_gpu(t, c);
            if (g == NULL || c->device != dev[k].a || c->stream != dev[k].b || c->kind == OBS_KIND_SYNC ||
                c->kind == OBS_KIND_ALLOC || g->end < tl->dev_begin || g->begin > tl->dev_begin + ds)
                continue;
            call_tip(t, c, g->end > g->begin ? g->end - g->begin : 0, tipbuf, sizeof tipbuf);
            merge_add(&m, axis_x(&da, g->begin), axis_x(&da, g->end), kind_fill(c->kind), tipbuf, NULL);
        }
        merge_flush(&m);
        if (t->ngpu == 0 && draw_range_spans(f, t, tl, &m, &da, dev[k].a, dev[k].b, ds) != 0) {
            free(sel);
            return -1;
        }
        y += LANE_H + LANE_GAP;
    }
    if (ndev && tl->own_device_axis)
        draw_axis(f, &da, y, ds, "device clock");
    fputs("</svg>\n", f);
    {
        static const char *const names[] = {"kernel", "copy", "memset", "sync", "graph launch", "alloc", "other"};
        const char *fills[7];
        fills[0] = kind_fill(OBS_KIND_KERNEL);
        fills[1] = kind_fill(OBS_KIND_MEMCPY);
        fills[2] = kind_fill(OBS_KIND_MEMSET);
        fills[3] = kind_fill(OBS_KIND_SYNC);
        fills[4] = kind_fill(OBS_KIND_GRAPH);
        fills[5] = kind_fill(OBS_KIND_ALLOC);
        fills[6] = kind_fill(OBS_KIND_NONE);
        html_legend(f, names, fills, 7);
    }
    if (more_host || more_dev)
        fprintf(f, "<p class=\"note\">Only the first %d host threads and %d streams have a lane.</p>\n", MAX_HOST,
                MAX_DEVICE);
    free(sel);
    return 0;
}
