/* The slices of a trace's phase tracks (one track beside each host thread
 * with phase ranges), as the JSON and Perfetto writers draw them: each
 * shown range (a RELABEL range that labels calls; a BEGIN/END range unless
 * a RELABEL took every call it held), plus, around consecutive outermost
 * RELABEL ranges of one generation and step, a derived DECODE/STEP_k slice,
 * and around steps 1.. of a generation a DECODE/STEADY slice, so that the
 * tracks nest like the live ranges: DECODE/STEADY > DECODE/STEP_k >
 * LAYER/k > KV_GATHER (a LAYER/k slice per layer instance, trace_layers.h,
 * and an EMBED and a HEAD slice beside them in each prompt or step with
 * layers: trace_layer_parts.h), and innermost a COMM/<op> slice per NCCL
 * call but ncclGroupStart (its host span: what the live COMM range
 * spanned, comm_ranges.h);
 * same-name slices that overlap without nesting merged. */
#ifndef OBS_TRACE_PHASE_SLICES_H
#define OBS_TRACE_PHASE_SLICES_H

#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"

/* A slice of a phase track: a range, or one derived from RELABEL ranges. */
enum obs_phase_slice_kind {
    OBS_PHASE_SLICE_RANGE,
    OBS_PHASE_SLICE_STEP,
    OBS_PHASE_SLICE_STEADY,
    OBS_PHASE_SLICE_LAYER,
    OBS_PHASE_SLICE_COMM /* an NCCL call's COMM/<op> (its host span), innermost */
};

struct obs_phase_slice {
    uint64_t b, e;
    uint32_t thread, range; /* OBS_PHASE_SLICE_RANGE: the range; OBS_PHASE_SLICE_LAYER: the layer k,
                               OBS_LAYER_EMBED or OBS_LAYER_HEAD; OBS_PHASE_SLICE_COMM: the index into
                               t->colls */
    uint32_t step, generation, level;
    uint8_t kind;
};

/* The shown ranges (indexes into t->phases) in track order: by thread,
 * then begin, outer before inner; *n gets their count. malloc'ed, NULL
 * when out of memory. */
uint32_t *obs_phase_ranges_shown(const struct obs_trace *t, size_t *n);

/* The slices, sorted by thread, then begin, enclosing before enclosed;
 * slices of one name that overlap without nesting merged into one; *count
 * gets their count. malloc'ed, NULL when out of memory. */
struct obs_phase_slice *obs_phase_slices(const struct obs_trace *t, size_t *count);

/* The name a slice shows: the range's full name ("DECODE/STEP_3", else its
 * phase, else "(phase)"), or the derived DECODE/STEP_k, DECODE/STEADY or
 * LAYER/k, EMBED or HEAD, or COMM/<op> (written into buf, at least 32
 * bytes). */
const char *obs_phase_slice_name(const struct obs_trace *t, const struct obs_phase_slice *s, char *buf, size_t len);

/* OBS_GPU_TIME=steps: the range spans (trace->range_spans) in the order a
 * GPU track draws them: by stream, then begin, the enclosing before the
 * enclosed (DECODE/STEADY before its DECODE/STEP_1 when they begin
 * together); *n gets their count. malloc'ed, NULL when out of memory. */
uint32_t *obs_range_spans_by_stream(const struct obs_trace *t, size_t *n);

/* The name a range span shows on its GPU track: that of the range it
 * counts for (its calls' final label, which a RELABEL may have made
 * differ from the live range), else the live range's, followed by
 * " (relabelled into several ranges)" when that is why (written into buf,
 * at least 64 bytes). */
const char *obs_range_span_name(const struct obs_trace *t, const struct obs_range_span *x, char *buf, size_t len);

#endif
