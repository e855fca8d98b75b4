/* GPU time from CUPTI's activity records (OBS_GPU_TIME=cupti): the device
 * start and end of every kernel, copy and memset, as nsys gets them,
 * without an event pair per call.
 *
 * How a CALL record meets its device records. CUPTI gives each runtime and
 * driver API call a correlation id and puts it in the call's API record
 * (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER: cbid, start, end, threadId,
 * correlationId) and in the kernel, memcpy and memset records of the
 * device work the call made. The shim never asks CUPTI for the id on the
 * hot path (no callback subscription: a callback per API call is what the
 * activity API exists to avoid, and the push/pop of an external
 * correlation id would add two CUPTI calls per launch). Instead:
 *   - CUPTI's timestamps come from the shim's own clock
 *     (cuptiActivityRegisterTimestampCallback) and its thread ids are the
 *     kernel's (cuptiSetThreadIdType(SYSTEM)): an API record's start and
 *     end are then times read on the calling thread, on the trace's time
 *     base, inside the real call that the shim's wrapper brackets with its
 *     own two timestamps (t_begin, t_end) on the same thread;
 *   - the hot path (obs_cupti_after) queues (record index, t_begin, t_end,
 *     stream) in a per-thread ring: a few stores, no lock, no allocation,
 *     no CUPTI call;
 *   - off the hot path, CUPTI's buffer-completed callback (on CUPTI's own
 *     thread, or on the thread that flushes) takes each API record to the
 *     queued call of its thread whose [t_begin, t_end] holds or is held by
 *     its [start, end] (calls of a thread never overlap: one at most), and
 *     files correlation id -> (thread, record index) in a table; each
 *     device record with that correlation id becomes a GPU_SPAN record
 *     naming the call. A device record that arrives before its API record
 *     waits in a pending list; an API record that arrives before its call
 *     is queued (CUPTI may hand a buffer over while the call is still
 *     returning) waits too.
 * A graph launch's node records make one span per run of them in a buffer
 * (readers take the envelope of a call's spans); a
 * call whose API record came but no device work did (a launch captured
 * into a graph, an empty copy) gets a span flagged OBS_SPAN_NO_WORK, at
 * process exit or once its correlation slot is reused after 5 s.
 *
 * Flushed like the trace: at process exit (an atexit handler registered on
 * the first timed call, before the runtime's teardown: cuptiActivityFlushAll,
 * then a forced one), at thread exit nothing is needed (the ring outlives the
 * thread), in a forked child the parent's session is left alone (the child
 * times its calls with events), and on a fatal signal the spans already
 * made are in the thread buffers the trace's handler writes; calls whose
 * records CUPTI had not delivered are counted missing.
 *
 * Falls back to OBS_GPU_TIME=events, saying why once: no libcupti, one too
 * old, another CUPTI client holding the process (nsys, ncu: CUPTI allows one
 * subscriber), any failing session call (cupti_lib.h). HIP calls are always
 * timed with events (rocprofiler-sdk is looked for and named in the
 * message; its backend is not written). */
#ifndef OBS_GPU_TIME_CUPTI_H
#define OBS_GPU_TIME_CUPTI_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_call.h"

struct obs_hooked_call;

/* The call's first step with OBS_GPU_TIME=cupti (from obs_gpu_before, g->kind
 * set): true when CUPTI times it (g->by_cupti), false when events must. */
bool obs_cupti_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call);
/* Right after the real call, instead of obs_call_finish. */
void obs_cupti_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status);
/* The calling thread is exiting: its ring may be reused once drained. */
void obs_cupti_thread_exit(void);

#endif
