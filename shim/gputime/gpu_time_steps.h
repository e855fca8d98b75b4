/* GPU time per phase range (OBS_GPU_TIME=steps): one event pair per live
 * phase range and stream, not per call, so that the GPU time of PREFILL,
 * of each decode step and of each KV gather costs a few event records per
 * step instead of two per launch.
 *
 * What it follows: the PHASE records the phase engine writes (BEGIN and
 * END, where its live ranges are pushed and popped), handed to it by the
 * recorder as they are stored (a hook that intercept/ registers at
 * start-up: obs_recorder_set_phase_hook). It keeps a mirror of the
 * thread's open ranges; the phase engine is not asked anything.
 *
 * Marks. A mark is one of our events recorded on an app stream. Per range
 * and stream the range used:
 *   - begin: a mark recorded just before the range's first timed call on
 *     that stream (a kernel, graph, copy or memset launch; the hot path
 *     takes it lazily, so a range that never touches a stream costs
 *     nothing there). Ranges that open at the same call share it;
 *   - end: when the range closes, the stream's latest mark if no work was
 *     enqueued on it since (clean), else a new one. Marks are also taken
 *     on the thread's dirty streams just before each host synchronisation
 *     of the app (a sync other than a stream waiting for an event) and
 *     just after each successful synchronous copy: the stream's work up to
 *     there is then bounded where it ended, even when the range closes
 *     later (at the next launch) with the device idle meanwhile. A close
 *     that makes a new mark shares it with the range that opens at the
 *     same call.
 * A launch inside an unchanged range on a known stream costs a TLS load,
 * a compare and a store (the stream marked dirty).
 *
 * When a range closes, (begin, end, the range) is queued per stream; the
 * pairs are resolved off the hot path like OBS_GPU_TIME=events' (after the
 * app's successful host syncs, when the queue fills, at thread and
 * process exit), on the clock of gpu_clock.h, into RANGE_SPAN records
 * (trace_format.h) naming the range by its BEGIN record's index.
 *
 * Not timed, and counted in the meta (gpu_time_steps_untimed_*): a range's
 * stream that is capturing a graph when the mark would be recorded (our
 * event would become a node of the app's graph), streams beyond the
 * eighth of a thread, ranges nested deeper than eight, devices 16 and
 * above, marks that cannot be had (no event, a full queue) and failures of
 * our own runtime calls. The app's last error and errno are kept as with
 * events (gpu_time.c). */
#ifndef OBS_GPU_TIME_STEPS_H
#define OBS_GPU_TIME_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu_call.h"
#include "trace/trace.h"

struct obs_hooked_call;

/* Per thread: the stream whose work the innermost open range already has
 * its begin mark on (stream id + 1; 0: none), and whether work was
 * enqueued there since the stream's last mark. gpu_time.h's inline fast
 * path (obs_gpu_steps_fast) sets dirty; gpu_time_steps.c folds it into its
 * own state before reading that. */
struct obs_steps_hot {
    uint32_t stream1;
    uint8_t dirty;
};
extern __thread struct obs_steps_hot obs_steps_hot __attribute__((tls_model("initial-exec")));

/* From obs_gpu_before with OBS_GPU_TIME=steps (g->kind set). */
void obs_steps_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call,
                      uint16_t api);
/* From obs_gpu_after (g->by_steps), instead of obs_call_finish. */
void obs_steps_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status);
/* A PHASE record was stored in the calling thread's buffer at index
 * (UINT64_MAX: it could not be kept). */
void obs_steps_on_phase(const struct obs_rec_phase *r, uint64_t index);
/* The calling thread is exiting: its open ranges end here. */
void obs_steps_thread_exit(void);

#endif
