/* The slices of the phase tracks: see trace_phase_slices.h. Shared by the
 * JSON and Perfetto writers, so that both draw the same ranges. */
#include "trace_phase_slices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_colls.h"
#include "trace_layers.h"
#include "trace_serving.h"

/* Whether a phase range gets a slice: RELABEL ranges that label calls;
 * BEGIN/END ranges unless a RELABEL took every call they held. */
static int phase_shown(const struct obs_phase *ph)
{
    return ph->relabel ? ph->calls > 0 : !(ph->calls == 0 && ph->calls_taken > 0);
}

static const struct obs_phase *sort_phases; /* qsort has no context argument */

static int cmp_phase_order(const void *a, const void *b)
{
    const struct obs_phase *x = &sort_phases[*(const uint32_t *)a], *y = &sort_phases[*(const uint32_t *)b];
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->depth != y->depth)
        return x->depth < y->depth ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Ranges in track order: by thread, then begin, outer before inner. */
uint32_t *obs_phase_ranges_shown(const struct obs_trace *t, size_t *n)
{
    uint32_t *order = malloc((t->nphases ? t->nphases : 1) * sizeof *order);
    size_t i, k = 0;
    if (order == NULL)
        return NULL;
    for (i = 0; i < t->nphases; i++)
        if (phase_shown(&t->phases[i]))
            order[k++] = (uint32_t)i;
    sort_phases = t->phases;
    for (i = 1; i < k; i++) /* mostly in order already: sort only when not (a long trace has millions) */
        if (cmp_phase_order(&order[i - 1], &order[i]) > 0) {
            qsort(order, k, sizeof *order, cmp_phase_order);
            break;
        }
    *n = k;
    return order;
}

static int cmp_phase_slice(const void *a, const void *b)
{
    const struct obs_phase_slice *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->e != y->e) /* the longer one encloses the other */
        return x->e > y->e ? -1 : 1;
    return x->level < y->level ? -1 : x->level > y->level;
}

/* Whether r is the DECODE/STEP_<step> range itself. */
static int is_step_range(const struct obs_phase *r, uint32_t step)
{
    char want[32];
    snprintf(want, sizeof want, "DECODE/STEP_%u", step);
    return r->step == step && strcmp(r->name, want) == 0;
}

const char *obs_phase_slice_name(const struct obs_trace *t, const struct obs_phase_slice *s, char *buf, size_t len)
{
    const struct obs_phase *ph;
    if (s->kind == OBS_PHASE_SLICE_STEP) {
        snprintf(buf, len, "DECODE/STEP_%u", s->step);
        return buf;
    }
    if (s->kind == OBS_PHASE_SLICE_STEADY)
        return "DECODE/STEADY";
    if (s->kind == OBS_PHASE_SLICE_COMM) {
        snprintf(buf, len, "COMM/%s", obs_coll_op_short(t->colls[s->range].op));
        return buf;
    }
    if (s->kind == OBS_PHASE_SLICE_LAYER) {
        if (s->range == OBS_LAYER_EMBED || s->range == OBS_LAYER_HEAD)
            return s->range == OBS_LAYER_EMBED ? "EMBED" : "HEAD";
        snprintf(buf, len, "LAYER/%u", s->range);
        return buf;
    }
    ph = &t->phases[s->range];
    return ph->name[0] ? ph->name : ph->phase[0] ? ph->phase : "(phase)";
}

/* Slices of one name that overlap without nesting become one, from the
 * first's begin to the last's end: a live range opened during the launch
 * that a RELABEL of the same phase labels (PREFILL) would otherwise be cut
 * at the RELABEL slice's end by the writers (a track's slices must nest),
 * and the calls it labels after that end would lie in no slice of their
 * phase. sl is sorted; returns the new count. */
static size_t merge_overlaps(const struct obs_trace *t, struct obs_phase_slice *sl, size_t n)
{
    size_t *open = malloc((n ? n : 1) * sizeof *open), depth = 0, out = 0, i;
    uint32_t thread = OBS_NONE;
    if (open == NULL)
        return n; /* left as they are: the writers clamp */
    for (i = 0; i < n; i++) {
        struct obs_phase_slice s = sl[i];
        if (s.thread != thread) {
            depth = 0;
            thread = s.thread;
        }
        while (depth > 0 && sl[open[depth - 1]].e <= s.b)
            depth--;
        if (depth > 0 && s.e > sl[open[depth - 1]].e) {
            struct obs_phase_slice *top = &sl[open[depth - 1]];
            char a[32], b[32];
            if (strcmp(obs_phase_slice_name(t, top, a, sizeof a), obs_phase_slice_name(t, &s, b, sizeof b)) == 0) {
                top->e = s.e;
                continue;
            }
        }
        sl[out] = s;
        open[depth++] = out++;
    }
    free(open);
    return out;
}

/* Each range's end on its track: its END (or RELABEL) time, or the end of
 * the last call it labels (its inner ranges' included) where that is later.
 * A range the engine held open past a delimiter (docs/phases.md, "Limits":
 * a serving loop's ITERATION/k runs to the next forward, over the next
 * batch's input copies) ends with the delimiter's time, while the calls
 * after it up to the next launch are still its own: its slice holds them.
 * NULL when out of memory. */
static uint64_t *range_ends(const struct obs_trace *t)
{
    uint64_t *end = malloc((t->nphases ? t->nphases : 1) * sizeof *end);
    size_t i;
    if (end == NULL)
        return NULL;
    for (i = 0; i < t->nphases; i++)
        end[i] = t->phases[i].end;
    for (i = 0; i < t->ncalls; i++) {
        uint32_t p = t->calls[i].phase, hops;
        for (hops = 0; p != OBS_NONE && p < t->nphases && hops <= t->nphases; p = t->phases[p].parent, hops++)
            if (t->calls[i].host_end > end[p])
                end[p] = t->calls[i].host_end;
    }
    return end;
}

/* Whether a RELABEL range may be part of a step that a derived
 * DECODE/STEP_k slice goes around: not a serving loop's ITERATION/k,
 * whose k counts forwards, not decode steps (each its own slice). */
static int in_decode_step(const struct obs_phase *r)
{
    return strcmp(r->phase, OBS_SERVING_PHASE) != 0;
}

/* The slices of the phase tracks. A phase engine may label calls after the
 * fact with one RELABEL per run of calls (KV_GATHER of step 3, then
 * DECODE/STEP_3, ...), not nested: consecutive outermost RELABEL ranges of
 * one generation and step get a DECODE/STEP_k slice around them (a member
 * that is that step's own range becomes it), and consecutive steps from 1
 * on a DECODE/STEADY slice around those, so that the tracks nest like the
 * live ranges: DECODE/STEADY > DECODE/STEP_k > KV_GATHER. Relabelled
 * ITERATION/k ranges are slices of their own (no DECODE/STEP_k around). */
struct obs_phase_slice *obs_phase_slices(const struct obs_trace *t, size_t *count)
{
    size_t n = 0, i, k, cap;
    uint32_t *order = obs_phase_ranges_shown(t, &n);
    struct obs_phase_slice *sl;
    size_t nsl = 0, group = SIZE_MAX, steady = SIZE_MAX, nlayers = 0;
    struct obs_layer_span *layers;
    uint64_t *ends;

    if (order == NULL)
        return NULL;
    layers = obs_layer_spans(t, &nlayers);
    ends = range_ends(t);
    cap = 3 * n + nlayers + t->ncolls + 1;
    sl = layers != NULL && ends != NULL ? calloc(cap, sizeof *sl) : NULL;
    if (sl == NULL) {
        free(order);
        free(layers);
        free(ends);
        return NULL;
    }
    for (k = 0; k < n; k++) {
        const struct obs_phase *r = &t->phases[order[k]];
        uint64_t r_end = ends[order[k]];
        uint32_t step = obs_phase_step(t, order[k]);
        struct obs_phase_slice *g = group != SIZE_MAX ? &sl[group] : NULL;
        struct obs_phase_slice *st = steady != SIZE_MAX ? &sl[steady] : NULL;
        int top_relabel = r->relabel && r->parent == OBS_NONE && in_decode_step(r);
        if (g && (!top_relabel || r->thread != g->thread || r->generation != g->generation || step != g->step))
            g = NULL, group = SIZE_MAX;
        if (st && (!top_relabel || r->thread != st->thread || r->generation != st->generation || step == UINT32_MAX ||
                   step == 0))
            st = NULL, steady = SIZE_MAX;
        if (top_relabel && step != UINT32_MAX) {
            if (step >= 1 && st == NULL) {
                steady = nsl++;
                st = &sl[steady];
                *st = (struct obs_phase_slice){r->begin, r_end, r->thread, OBS_NONE, UINT32_MAX, r->generation, 0,
                                           OBS_PHASE_SLICE_STEADY};
            }
            if (g == NULL) {
                group = nsl++;
                g = &sl[group];
                *g = (struct obs_phase_slice){r->begin, r_end, r->thread, OBS_NONE, step, r->generation, 1, OBS_PHASE_SLICE_STEP};
            }
            if (r->begin < g->b)
                g->b = r->begin;
            if (r_end > g->e)
                g->e = r_end;
            if (st) {
                if (g->b < st->b)
                    st->b = g->b;
                if (g->e > st->e)
                    st->e = g->e;
            }
            if (is_step_range(r, step))
                continue; /* the step's own range: the slice around the group shows it */
        }
        sl[nsl++] = (struct obs_phase_slice){r->begin, r_end, r->thread, order[k], step, r->generation,
                                         2 + r->depth, OBS_PHASE_SLICE_RANGE};
    }
    for (i = 0; i < nlayers; i++) /* inside their phase or step, around a KV_GATHER */
        sl[nsl++] = (struct obs_phase_slice){layers[i].b, layers[i].e, layers[i].thread, layers[i].layer,
                                             layers[i].step, layers[i].generation, 3, OBS_PHASE_SLICE_LAYER};
    free(layers);
    free(ends);
    for (i = 0; i < t->ncolls; i++) { /* innermost: inside the step and layer the call was made in */
        const struct obs_coll *c = &t->colls[i];
        if (c->op == OBS_COLL_GROUP_START)
            continue;
        sl[nsl++] = (struct obs_phase_slice){c->host_begin, c->host_end, c->thread, (uint32_t)i,
                                             obs_phase_step(t, c->phase),
                                             c->phase != OBS_NONE ? t->phases[c->phase].generation : 0, 255,
                                             OBS_PHASE_SLICE_COMM};
    }
    /* A lone step whose own range was the only member: keep that range's slice. */
    for (i = 0; i < nsl; i++)
        if (sl[i].kind == OBS_PHASE_SLICE_STEADY)
            sl[i].level = 0;
    for (i = 1; i < nsl; i++)
        if (cmp_phase_slice(&sl[i - 1], &sl[i]) > 0) {
            qsort(sl, nsl, sizeof *sl, cmp_phase_slice);
            break;
        }
    nsl = merge_overlaps(t, sl, nsl);
    free(order);
    *count = nsl;
    return sl;
}

/* ---- range spans on GPU tracks ------------------------------------------------------ */

static int cmp_span_track(const void *a, const void *b, void *arg)
{
    const struct obs_trace *t = arg;
    const struct obs_range_span *x = &t->range_spans[*(const uint32_t *)a], *y = &t->range_spans[*(const uint32_t *)b];
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1; /* enclosing first */
    if (t->phases[x->live].depth != t->phases[y->live].depth)
        return t->phases[x->live].depth < t->phases[y->live].depth ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

uint32_t *obs_range_spans_by_stream(const struct obs_trace *t, size_t *n)
{
    uint32_t *order = malloc((t->nrange_spans ? t->nrange_spans : 1) * sizeof *order);
    size_t i;
    if (order == NULL)
        return NULL;
    for (i = 0; i < t->nrange_spans; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, t->nrange_spans, sizeof *order, cmp_span_track, (void *)t);
    *n = t->nrange_spans;
    return order;
}

const char *obs_range_span_name(const struct obs_trace *t, const struct obs_range_span *x, char *buf, size_t len)
{
    const struct obs_phase *ph = &t->phases[x->range != OBS_NONE ? x->range : x->live];
    const char *name = ph->name[0] ? ph->name : ph->phase[0] ? ph->phase : "(phase)";
    if (!(x->flags & OBS_RANGE_SPAN_MIXED))
        return name;
    snprintf(buf, len, "%.200s (relabelled into several ranges)", name);
    return buf;
}
