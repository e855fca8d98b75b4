/* Model layers of a trace (LAYER records, docs/layers.md): time per layer
 * per phase, and the layers x decode steps of one generation. Shown by
 * `obs-report phases` (and `phases --layers --csv`) and the HTML page.
 *
 * An *instance* of a layer is a run of a thread's calls, in its record
 * order, with the same layer, generation, phase (PREFILL, or DECODE with
 * its KV_GATHER) and step: one pass of one prompt or step through that
 * layer (a prompt in chunks passes once per chunk). Its time is the span
 * from its first call's begin to its last call's end, GPU times when the
 * trace has GPU spans (calls without one do not count), host API times
 * otherwise. The calls of a phase instance before its first layer and after
 * its last (trace_layer_parts.h) are counted the same way, as the pseudo
 * layers OBS_LAYER_EMBED and OBS_LAYER_HEAD: an EMBED or HEAD instance is a
 * run of such calls; they are in no layer (obs_call.layer stays none). */
#ifndef OBS_TRACE_LAYERS_H
#define OBS_TRACE_LAYERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

/* The layer of an EMBED or HEAD row, span or slice (never a call's). */
#define OBS_LAYER_EMBED 0xfffffffeu
#define OBS_LAYER_HEAD 0xfffffffdu

/* "EMBED", "HEAD", or the layer's number k (written into buf). */
const char *obs_layer_label(uint32_t layer, char *buf, size_t len);

struct obs_layer_row {
    const char *phase;  /* "PREFILL" or "DECODE" */
    uint32_t layer;     /* k, OBS_LAYER_EMBED or OBS_LAYER_HEAD */
    uint64_t instances;
    uint64_t time_ns;   /* sum over the instances */
    uint64_t max_ns;    /* the slowest instance */
    uint64_t calls, launches, kernels;
    int timed;          /* some instance had a time in the time base */
};

/* The kernel nodes graph launches replayed, per phase and layer (the
 * layers among each exec's nodes, docs/layers.md "Graphs"): no time, since
 * a node has none of its own in the trace. */
struct obs_layer_graph_row {
    const char *phase; /* "PREFILL" or "DECODE": the graph launch's phase */
    uint32_t layer;
    uint64_t instances; /* runs of an exec's nodes in the layer, over the launches */
    uint64_t launches;  /* graph launches that replayed the layer */
    uint64_t kernels;   /* kernel nodes replayed in the layer */
};

struct obs_layer_stats {
    int gpu_time;
    const char *time_base;      /* "gpu" or "host" */
    struct obs_layer_row *rows; /* PREFILL: EMBED, layers ascending, HEAD; then DECODE */
    size_t nrows;
    uint64_t layered_calls;     /* calls inside a layer (not EMBED or HEAD) */
    /* the heat map: the decode steps of the (thread, generation) with the
     * most steps that hold layers; ns[layer * map_steps + step],
     * UINT64_MAX where the step has no such layer (or no time) */
    uint32_t map_tid, map_generation, map_layers, map_steps;
    uint64_t *map_ns;
    struct obs_layer_graph_row *graph_rows; /* PREFILL layers ascending, then DECODE */
    size_t ngraph_rows;
};

/* One layer instance's host span (first call's begin to last call's end),
 * for the phase tracks' LAYER/k slices (and EMBED, HEAD: layer
 * OBS_LAYER_EMBED, OBS_LAYER_HEAD). */
struct obs_layer_span {
    uint64_t b, e;
    uint32_t thread; /* index into t->threads */
    uint32_t layer, generation, step;
};
/* The instances in order of their first call; *n gets their count.
 * malloc'ed (also when n is 0), NULL when out of memory. */
struct obs_layer_span *obs_layer_spans(const struct obs_trace *t, size_t *n);

/* Returns 0, or -1 (out of memory). A trace without layers gives no rows. */
int obs_layer_stats_compute(const struct obs_trace *t, struct obs_layer_stats *s);
void obs_layer_stats_free(struct obs_layer_stats *s);

/* The "Layers" table of `obs-report phases` (nothing when the trace has no
 * layers). Returns 0, or -1 with errno set. */
int obs_report_layer_table(const struct obs_trace *t, FILE *out);

/* `obs-report phases --layers --csv`: a header line, then one row per
 * (phase, layer), the layer column EMBED, k or HEAD. Returns 0, or -1 with errno set. */
#define OBS_LAYERS_CSV_HEADER "phase,layer,instances,time_ns,avg_ns,max_ns,calls,launches,kernels,time_base"
int obs_report_layers_csv(const struct obs_trace *t, FILE *out);

/* `obs-report phases --graph-layers --csv`: a header line, then one row
 * per (phase, layer) of the "Layers in graph launches" table. Returns 0, or
 * -1 with errno set. */
#define OBS_GRAPH_LAYERS_CSV_HEADER "phase,layer,instances,graph_launches,kernel_nodes"
int obs_report_graph_layers_csv(const struct obs_trace *t, FILE *out);

#endif
