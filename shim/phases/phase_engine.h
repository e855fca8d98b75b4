/* The phase engine: groups a thread's launches into PREFILL, DECODE/STEP_k
 * (inside DECODE/STEADY from step 1 on) and KV_GATHER, emits them live as
 * ranges (shim/phases/ranges.h) and writes PHASE records into the thread's own
 * buffer, in order with its CALL records. docs/phases.md has the algorithm.
 *
 * Consulted by the generated wrappers of hooks_cudart.c and hooks_hip.c:
 *     call.rec = describe(args);
 *     if (obs_phase_enabled())  obs_phase_before(&call, api);   // ranges open before the enqueue
 *     ... real call, record stored ...
 *     if (obs_phase_enabled())  obs_phase_after(&call, api, status);  // syncs close ranges
 * A launch costs a lookup of its name's cached class (one byte per name
 * id) and a comparison with what is open; records and pushes happen only
 * at boundaries. */
#ifndef OBS_PHASE_ENGINE_H
#define OBS_PHASE_ENGINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "record/record.h"
#include "comm_ranges.h" /* live COMM/<op> ranges around NCCL calls, apart from the engine */
#include "phase_ids.h"

/* 0: not set up yet, 1: on, 2: off (OBS_PHASES=off, or set-up failed). */
extern _Atomic int obs_phase_on;

/* Set up on first use, from inside a recorded call (the settings are
 * loaded by then): parse OBS_PHASES / OBS_STEP (a bad rule: one message,
 * automatic mode), set up the range sinks. Returns whether the engine is on. */
bool obs_phase_engine_init(void);

static inline bool obs_phase_enabled(void)
{
    /* acquire: pairs with setup's store, so engine_mode and the tables it
     * set are seen too (relaxed was a data race, found by TSan; a plain
     * load on x86-64) */
    int on = atomic_load_explicit(&obs_phase_on, memory_order_acquire);
    if (obs_likely(on == 1))
        return true;
    return on == 0 && obs_phase_engine_init();
}

/* The mode in use (after init). */
enum obs_phase_mode obs_phase_engine_mode(void);

/* At exit, on the exiting thread (guard held): end the ranges it still
 * holds open (a phase that could have gone on past its last delimiter),
 * live and in the trace (their END at that delimiter's time). */
void obs_phase_end_open_ranges(void);

/* At a thread's end, before its records are written (the recorder's
 * thread-exit hook): what waited for the launches after its last token
 * read (a forward's layers, an iteration that was no step: docs/phases.md
 * "Reads inside a forward") is settled, as at the process's exit. */
void obs_phase_thread_exit(void);

/* At a graph's instantiation, after its walk (intercept/: the hooks of
 * cudaGraphInstantiate, cuGraphInstantiate*, hipGraphInstantiate*): the
 * model layers among its kernel nodes in walk order, found by the layer
 * finder as in a phase instance, with OBS_LAYER's rule and the thread's
 * last decode anchor as the hint (docs/layers.md, "Graphs"). Sets w->layer
 * (malloc'ed, one per kept node) when three layers or more are found; does
 * nothing when the engine is not set up yet (no recorded call so far) or
 * is off, with OBS_LAYER=off, or when the walk is incomplete or cut.
 * Instantiation time only: it allocates, it never runs per launch. */
void obs_phase_graph_layers(struct obs_graph_walk *w);

/* Around a recorded call (depth guard held). */
void obs_phase_before(const struct obs_hooked_call *c, uint16_t api);
void obs_phase_after(const struct obs_hooked_call *c, uint16_t api, int32_t status);


#endif
