/* Model layers of a trace: see trace_layers.h and docs/layers.md. */
#include "trace_layers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_layer_parts.h"
#include "trace_phases.h"

struct instance {
    uint32_t thread, tid, generation, step, layer;
    uint32_t top; /* split: the outermost phase range of its calls (OBS_NONE otherwise) */
    uint8_t decode; /* 0 PREFILL, 1 DECODE */
    int timed;
    uint64_t begin, end, calls, launches, kernels;
};

/* Per thread: the instance its last call was in (index + 1, 0: none). */
static int same_key(const struct instance *a, uint32_t gen, uint32_t step, uint32_t layer, uint8_t decode)
{
    return a->generation == gen && a->step == step && a->layer == layer && a->decode == decode;
}

static void call_span(const struct obs_trace *t, const struct obs_call *c, int gpu, uint64_t *b, uint64_t *e,
                      int *timed)
{
    *timed = 0;
    if (gpu) {
        if (c->gpu != OBS_NONE) {
            *b = t->gpu[c->gpu].begin;
            *e = t->gpu[c->gpu].end;
            *timed = *e >= *b;
        }
    } else {
        *b = c->host_begin;
        *e = c->host_end;
        *timed = *e >= *b;
    }
}

static int is_part(uint32_t layer)
{
    return layer == OBS_LAYER_EMBED || layer == OBS_LAYER_HEAD;
}

const char *obs_layer_label(uint32_t layer, char *buf, size_t len)
{
    if (layer == OBS_LAYER_EMBED)
        return "EMBED";
    if (layer == OBS_LAYER_HEAD)
        return "HEAD";
    snprintf(buf, len, "%u", layer);
    return buf;
}

/* The outermost phase range around range r. */
static uint32_t top_range(const struct obs_trace *t, uint32_t r)
{
    size_t hops;
    for (hops = 0; t->phases[r].parent != OBS_NONE && t->phases[r].parent < t->nphases && hops < t->nphases; hops++)
        r = t->phases[r].parent;
    return r;
}

/* The calls' layer instances (EMBED and HEAD ones too), in order of their
 * first call. split: an EMBED or HEAD instance ends where its calls'
 * outermost phase range changes (a prompt's calls before its live PREFILL
 * range opened, labelled PREFILL after the fact, are in another range than
 * the rest): a slice of it then nests in its range's slice. */
static int collect(const struct obs_trace *t, int gpu, int split, struct instance **out, size_t *nout)
{
    size_t *cur = calloc(t->nthreads ? t->nthreads : 1, sizeof *cur), n = 0, cap = 0, i;
    struct instance *v = NULL;
    uint8_t *part = obs_layer_parts(t);
    if (cur == NULL || part == NULL) {
        free(cur);
        free(part);
        return -1;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_phase *p;
        struct instance *in;
        uint32_t step, gen, layer = c->layer, top = OBS_NONE;
        uint64_t b = 0, e = 0;
        uint8_t decode;
        int timed;
        if (layer == OBS_NO_LAYER && part[i] != OBS_LAYER_PART_NONE)
            layer = part[i] == OBS_LAYER_PART_EMBED ? OBS_LAYER_EMBED : OBS_LAYER_HEAD;
        if (layer == OBS_NO_LAYER || c->phase == OBS_NONE || c->thread >= t->nthreads)
            continue;
        p = &t->phases[c->phase];
        if (split && is_part(layer))
            top = top_range(t, c->phase);
        decode = strcmp(p->phase, "PREFILL") != 0;
        step = obs_phase_step(t, c->phase);
        gen = p->generation;
        in = cur[c->thread] ? &v[cur[c->thread] - 1] : NULL;
        if (in == NULL || !same_key(in, gen, step, layer, decode) || in->top != top) {
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 256;
                struct instance *g = realloc(v, nc * sizeof *v);
                if (g == NULL) {
                    free(v);
                    free(cur);
                    free(part);
                    return -1;
                }
                v = g;
                cap = nc;
            }
            in = &v[n++];
            memset(in, 0, sizeof *in);
            in->thread = c->thread;
            in->tid = t->threads[c->thread].tid;
            in->generation = gen;
            in->step = step;
            in->layer = layer;
            in->top = top;
            in->decode = decode;
            in->begin = UINT64_MAX;
            cur[c->thread] = n;
        }
        in->calls++;
        in->launches += c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH || c->kind == OBS_KIND_MEMCPY ||
                        c->kind == OBS_KIND_MEMSET;
        in->kernels += c->kind == OBS_KIND_KERNEL;
        call_span(t, c, gpu, &b, &e, &timed);
        if (timed) {
            in->timed = 1;
            if (b < in->begin)
                in->begin = b;
            if (e > in->end)
                in->end = e;
        }
    }
    free(cur);
    free(part);
    *out = v;
    *nout = n;
    return 0;
}

/* A layer's place in the rows: EMBED, the layers, HEAD. */
static uint64_t row_rank(uint32_t layer)
{
    return layer == OBS_LAYER_EMBED ? 0 : layer == OBS_LAYER_HEAD ? UINT64_MAX : (uint64_t)layer + 1;
}

/* Instances in row order: PREFILL before DECODE, then by layer. */
static int by_instance_row(const void *a, const void *b)
{
    const struct instance *x = a, *y = b;
    if (x->decode != y->decode)
        return x->decode - y->decode;
    return row_rank(x->layer) < row_rank(y->layer) ? -1 : row_rank(x->layer) > row_rank(y->layer);
}


struct gen_steps {
    uint32_t tid, generation, step;
    size_t order; /* the instance's position: which generation began first */
};

static int by_generation(const void *a, const void *b)
{
    const struct gen_steps *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->generation != y->generation)
        return x->generation < y->generation ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Layers x decode steps of the (thread, generation) with the most steps
 * that hold layers; none where that would be over HEAT_CELLS_MAX cells (a
 * damaged trace's layer or step numbers). */
#define HEAT_CELLS_MAX (1u << 20)
static int heat_map(struct obs_layer_stats *s, const struct instance *v, size_t n)
{
    size_t i, j, ng = 0, best_first = SIZE_MAX;
    uint32_t best_steps = 0;
    struct gen_steps *g = malloc((n ? n : 1) * sizeof *g);
    if (g == NULL)
        return -1;
    /* the heat map's generation: the most decode steps with layers (of those, the first to begin) */
    for (i = 0; i < n; i++)
        if (v[i].decode && v[i].step != OBS_NO_STEP && !is_part(v[i].layer))
            g[ng++] = (struct gen_steps){v[i].tid, v[i].generation, v[i].step, i};
    if (ng > 1)
        qsort(g, ng, sizeof *g, by_generation);
    for (i = 0; i < ng; i = j) {
        uint32_t steps = 0;
        size_t first = g[i].order;
        for (j = i; j < ng && g[j].tid == g[i].tid && g[j].generation == g[i].generation; j++) {
            if (g[j].step + 1 > steps)
                steps = g[j].step + 1;
            if (g[j].order < first)
                first = g[j].order;
        }
        if (steps > best_steps || (steps == best_steps && first < best_first)) {
            best_steps = steps;
            best_first = first;
            s->map_tid = g[i].tid;
            s->map_generation = g[i].generation;
        }
    }
    free(g);
    if (best_steps > 0) {
        for (i = 0; i < n; i++)
            if (v[i].decode && v[i].tid == s->map_tid && v[i].generation == s->map_generation &&
                !is_part(v[i].layer) && v[i].layer + 1 > s->map_layers)
                s->map_layers = v[i].layer + 1;
        s->map_steps = best_steps;
        if ((uint64_t)s->map_layers * s->map_steps > HEAT_CELLS_MAX) {
            s->map_layers = s->map_steps = 0;
            return 0;
        }
        s->map_ns = malloc((size_t)s->map_layers * s->map_steps * sizeof *s->map_ns);
        if (s->map_ns == NULL)
            return -1;
        for (i = 0; i < (size_t)s->map_layers * s->map_steps; i++)
            s->map_ns[i] = UINT64_MAX;
        for (i = 0; i < n; i++) {
            const struct instance *in = &v[i];
            uint64_t *cell;
            if (!in->decode || in->tid != s->map_tid || in->generation != s->map_generation ||
                in->step == OBS_NO_STEP || !in->timed || is_part(in->layer))
                continue;
            cell = &s->map_ns[(size_t)in->layer * s->map_steps + in->step];
            *cell = (*cell == UINT64_MAX ? 0 : *cell) + (in->end - in->begin);
        }
    }
    return 0;
}

/* Graph launches in a phase: each exec's kernel nodes by layer (a run of
 * nodes in one layer is one instance), into one row per (phase, layer). */
static int graph_rows(const struct obs_trace *t, struct obs_layer_stats *s)
{
    uint32_t max_layer = 0, k;
    size_t i, j, n, d;
    struct obs_layer_graph_row *rows;
    size_t *counted_by;
    int any = 0;
    for (i = 0; i < t->ngraphs; i++)
        for (j = 0; t->graphs[i].layers > 0 && j < t->graphs[i].nnodes; j++)
            if (t->graphs[i].nodes[j].layer != OBS_NO_LAYER) {
                any = 1;
                if (t->graphs[i].nodes[j].layer > max_layer)
                    max_layer = t->graphs[i].nodes[j].layer;
            }
    if (!any)
        return 0;
    n = 2u * ((size_t)max_layer + 1);
    rows = calloc(n, sizeof *rows);
    counted_by = calloc(n, sizeof *counted_by); /* per row: the launch (call index + 1) counted in it last */
    if (rows == NULL || counted_by == NULL) {
        free(rows);
        free(counted_by);
        return -1;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_graph *g = obs_call_graph(t, c);
        uint32_t last = OBS_NO_LAYER;
        if (g == NULL || g->layers == 0 || c->phase == OBS_NONE)
            continue;
        d = strcmp(t->phases[c->phase].phase, "PREFILL") != 0;
        for (j = 0; j < g->nnodes; j++) {
            uint32_t layer = g->nodes[j].layer;
            size_t at = d * ((size_t)max_layer + 1) + layer;
            if (layer == OBS_NO_LAYER) {
                last = OBS_NO_LAYER;
                continue;
            }
            if (layer != last)
                rows[at].instances++;
            if (counted_by[at] != i + 1) {
                rows[at].launches++;
                counted_by[at] = i + 1;
            }
            rows[at].kernels++;
            last = layer;
        }
    }
    free(counted_by);
    s->graph_rows = rows;
    for (d = 0, s->ngraph_rows = 0; d < 2; d++)
        for (k = 0; k <= max_layer; k++) {
            struct obs_layer_graph_row r = rows[d * ((size_t)max_layer + 1) + k];
            if (r.kernels == 0)
                continue;
            r.phase = d ? "DECODE" : "PREFILL";
            r.layer = k;
            rows[s->ngraph_rows++] = r;
        }
    return 0;
}

int obs_layer_stats_compute(const struct obs_trace *t, struct obs_layer_stats *s)
{
    struct instance *v = NULL;
    size_t n = 0, i;
    memset(s, 0, sizeof *s);
    s->gpu_time = t->ngpu > 0;
    s->time_base = s->gpu_time ? "gpu" : "host";
    if (collect(t, s->gpu_time, 0, &v, &n) != 0)
        return -1;
    if (graph_rows(t, s) != 0)
        goto fail;
    /* the heat map first (it takes the instances in their order), then the rows */
    if (heat_map(s, v, n) != 0)
        goto fail;
    if (n > 1)
        qsort(v, n, sizeof *v, by_instance_row);
    s->rows = malloc((n ? n : 1) * sizeof *s->rows);
    if (s->rows == NULL)
        goto fail;
    for (i = 0; i < n; i++) { /* rows: one per (phase, layer) */
        const struct instance *in = &v[i];
        const char *phase = in->decode ? "DECODE" : "PREFILL";
        struct obs_layer_row *r = s->nrows ? &s->rows[s->nrows - 1] : NULL;
        uint64_t ns = in->timed ? in->end - in->begin : 0;
        if (r == NULL || r->layer != in->layer || strcmp(r->phase, phase) != 0) {
            r = &s->rows[s->nrows++];
            memset(r, 0, sizeof *r);
            r->phase = phase;
            r->layer = in->layer;
        }
        r->instances++;
        r->time_ns += ns;
        if (ns > r->max_ns)
            r->max_ns = ns;
        r->calls += in->calls;
        r->launches += in->launches;
        r->kernels += in->kernels;
        r->timed |= in->timed;
        if (!is_part(in->layer))
            s->layered_calls += in->calls;
    }
    free(v);
    return 0;
fail:
    free(v);
    obs_layer_stats_free(s);
    return -1;
}

struct obs_layer_span *obs_layer_spans(const struct obs_trace *t, size_t *n)
{
    struct instance *v = NULL;
    struct obs_layer_span *out;
    size_t nv = 0, i;
    *n = 0;
    if (collect(t, 0, 1, &v, &nv) != 0)
        return NULL;
    out = malloc((nv ? nv : 1) * sizeof *out);
    if (out != NULL) {
        for (i = 0; i < nv; i++)
            out[i] = (struct obs_layer_span){v[i].begin, v[i].end, v[i].thread, v[i].layer, v[i].generation, v[i].step};
        *n = nv;
    }
    free(v);
    return out;
}

void obs_layer_stats_free(struct obs_layer_stats *s)
{
    free(s->rows);
    free(s->map_ns);
    free(s->graph_rows);
    memset(s, 0, sizeof *s);
}

static int finish(FILE *out)
{
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int obs_report_layer_table(const struct obs_trace *t, FILE *out)
{
    struct obs_layer_stats s;
    uint64_t total[2] = {0, 0};
    size_t i;
    if (obs_layer_stats_compute(t, &s) != 0) {
        errno = ENOMEM;
        return -1;
    }
    if (s.nrows == 0 && s.ngraph_rows == 0) {
        obs_layer_stats_free(&s);
        return finish(out);
    }
    if (s.nrows == 0)
        goto graphs;
    for (i = 0; i < s.nrows; i++)
        total[strcmp(s.rows[i].phase, "PREFILL") != 0] += s.rows[i].time_ns;
    fprintf(out, "\nLayers (%s; per phase, each layer's time summed over its instances: one pass of a prompt or "
                 "step through it, first call begin to last call end; EMBED and HEAD: the calls of a prompt or step before its first "
                 "layer and after its last; docs/layers.md)\n",
            s.gpu_time ? "GPU time" : "host API time");
    fprintf(out, " %-8s %6s %10s %16s %14s %14s %7s %9s %8s\n", "Phase", "Layer", "Instances", "Time (ns)", "Avg (ns)",
            "Max (ns)", "Share", "Launches", "Kernels");
    for (i = 0; i < s.nrows; i++) {
        const struct obs_layer_row *r = &s.rows[i];
        uint64_t tot = total[strcmp(r->phase, "PREFILL") != 0];
        char share[16] = "-", label[16];
        if (r->timed && tot > 0)
            snprintf(share, sizeof share, "%.1f%%", 100.0 * (double)r->time_ns / (double)tot);
        fprintf(out, " %-8s %6s %10llu %16llu %14llu %14llu %7s %9llu %8llu\n", r->phase,
                obs_layer_label(r->layer, label, sizeof label),
                (unsigned long long)r->instances, (unsigned long long)r->time_ns,
                (unsigned long long)(r->instances ? r->time_ns / r->instances : 0), (unsigned long long)r->max_ns,
                share, (unsigned long long)r->launches, (unsigned long long)r->kernels);
    }
    fprintf(out, " (calls inside layers: %llu; share: of the phase's time in EMBED, its layers and HEAD)\n",
            (unsigned long long)s.layered_calls);
graphs:
    if (s.ngraph_rows > 0) {
        fprintf(out, "\nLayers in graph launches (the kernel nodes each graph launch replayed, by the layer found "
                     "among its exec's nodes; time n/a: a node has no time of its own in the trace; docs/layers.md)\n");
        fprintf(out, " %-8s %6s %10s %15s %13s %10s\n", "Phase", "Layer", "Instances", "Graph launches",
                "Kernel nodes", "Time");
        for (i = 0; i < s.ngraph_rows; i++) {
            const struct obs_layer_graph_row *r = &s.graph_rows[i];
            fprintf(out, " %-8s %6u %10llu %15llu %13llu %10s\n", r->phase, r->layer, (unsigned long long)r->instances,
                    (unsigned long long)r->launches, (unsigned long long)r->kernels, "n/a");
        }
    }
    obs_layer_stats_free(&s);
    return finish(out);
}

int obs_report_graph_layers_csv(const struct obs_trace *t, FILE *out)
{
    struct obs_layer_stats s;
    size_t i;
    if (obs_layer_stats_compute(t, &s) != 0) {
        errno = ENOMEM;
        return -1;
    }
    fputs(OBS_GRAPH_LAYERS_CSV_HEADER "\n", out);
    for (i = 0; i < s.ngraph_rows; i++) {
        const struct obs_layer_graph_row *r = &s.graph_rows[i];
        fprintf(out, "%s,%u,%llu,%llu,%llu\n", r->phase, r->layer, (unsigned long long)r->instances,
                (unsigned long long)r->launches, (unsigned long long)r->kernels);
    }
    obs_layer_stats_free(&s);
    return finish(out);
}

int obs_report_layers_csv(const struct obs_trace *t, FILE *out)
{
    struct obs_layer_stats s;
    size_t i;
    if (obs_layer_stats_compute(t, &s) != 0) {
        errno = ENOMEM;
        return -1;
    }
    fputs(OBS_LAYERS_CSV_HEADER "\n", out);
    for (i = 0; i < s.nrows; i++) {
        const struct obs_layer_row *r = &s.rows[i];
        char label[16];
        fprintf(out, "%s,%s,%llu,", r->phase, obs_layer_label(r->layer, label, sizeof label),
                (unsigned long long)r->instances);
        if (r->timed)
            fprintf(out, "%llu,%llu,%llu", (unsigned long long)r->time_ns,
                    (unsigned long long)(r->time_ns / r->instances), (unsigned long long)r->max_ns);
        else
            fputs(",,", out);
        fprintf(out, ",%llu,%llu,%llu,%s\n", (unsigned long long)r->calls, (unsigned long long)r->launches,
                (unsigned long long)r->kernels, s.time_base);
    }
    obs_layer_stats_free(&s);
    return finish(out);
}
