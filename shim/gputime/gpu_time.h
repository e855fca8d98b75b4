/* GPU time. OBS_GPU_TIME=steps takes each call (gpu_time_steps.h: an event
 * pair per phase range and stream, following the phase engine's PHASE
 * records through obs_gpu_on_phase); OBS_GPU_TIME=cupti takes each call
 * first (gpu_time_cupti.h) and hands it back here when CUPTI cannot be
 * used; below, events.
 *
 * GPU time with events (OBS_GPU_TIME=events): an event pair around each
 * launch, copy, memset and graph launch, on the call's own stream, so that
 * its CALL record gains a device begin and end (a GPU_SPAN record).
 *
 * Off (the default), a wrapper pays one predictable branch on
 * obs_gpu_time_enabled(). On, a timed call:
 *   obs_gpu_before   takes two events from the thread's pool (no lock, no
 *                    allocation), checks that the stream is not capturing a
 *                    graph (recording there would add nodes to the app's
 *                    graph: such calls are not timed), records the begin event;
 *   (the real call)
 *   obs_gpu_after    records the end event if the call succeeded, stores the
 *                    CALL record (flagged OBS_CALL_GPU_TIMED) and queues
 *                    (call index, events, stream) in the thread's pending ring.
 * Pairs are resolved off the hot path: after the app's synchronisation calls
 * return success, when the pool runs dry or the ring fills, at thread exit
 * and at process exit (an atexit handler, so that it runs before the GPU
 * runtime's own teardown). Completed pairs become GPU_SPAN records on the
 * host CLOCK_MONOTONIC time base (see gpu_time.c for the clock alignment);
 * their events go back to the pool. A pair that never completes is absent
 * from the trace: its call keeps the flag, and readers count it missing.
 *
 * The app's visible state is left alone: its last error is kept (CUDA's
 * sticky-until-read rule and HIP's every-call rule, see gpu_time.c), errno
 * is kept, nothing synchronises the app's streams. One backend per runtime
 * family (gpu_time_cuda.c, gpu_time_hip.c) reaches the real event functions
 * through real_symbols.h, never through our own hooks. */
#ifndef OBS_GPU_TIME_H
#define OBS_GPU_TIME_H

#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "gpu_call.h"
#include "gpu_time_steps.h" /* obs_steps_hot, read by the inline fast path */
#include "record/record.h"

extern const struct obs_gpu_backend obs_gpu_cuda;
extern const struct obs_gpu_backend obs_gpu_hip;
/* The driver's: it shares the CUDA family's state with the runtime
 * backend (runtime and driver events and streams are the same objects on
 * one device clock). */
extern const struct obs_gpu_backend obs_gpu_cudrv;

/* The one test wrappers make when GPU time is off. */
static inline bool obs_gpu_time_enabled(void)
{
    return obs_unlikely(obs_cfg.gpu_time != OBS_GPU_TIME_OFF);
}

/* enum obs_call_kind of each API, for tests the compiler folds: a wrapper's
 * API is a constant. */
static const uint8_t obs_gpu_api_kinds[OBS_API_COUNT] = {
#define OBS_GPU_API_KIND_OF(id, name, kind, family) OBS_KIND_##kind,
    OBS_API_LIST(OBS_GPU_API_KIND_OF)
#undef OBS_GPU_API_KIND_OF
};

/* OBS_GPU_TIME=steps' whole work for a kernel, graph or memset launch on
 * the stream the innermost open range already has its begin mark on: the
 * stream is marked dirty, and the call goes the way of a call with no GPU
 * time (true). Anything else (copies, syncs, another stream, a range's
 * first call, other modes) takes obs_gpu_before (false). */
static inline __attribute__((always_inline)) bool obs_gpu_steps_fast(const struct obs_hooked_call *c, uint16_t api)
{
    unsigned kind = obs_gpu_api_kinds[api];
    if (!(kind == OBS_KIND_KERNEL || kind == OBS_KIND_GRAPH || kind == OBS_KIND_MEMSET) ||
        obs_cfg.gpu_time != OBS_GPU_TIME_STEPS || c->rec.stream + 1u != obs_steps_hot.stream1)
        return false;
    obs_steps_hot.dirty = 1;
    return true;
}

/* After describe, before obs_call_started. */
void obs_gpu_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call,
                    uint16_t api);
/* Right after the real call, instead of obs_call_finish. errno is left as
 * the real call left it. */
void obs_gpu_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status);

/* The calling thread is exiting (recorder.c, before its buffer is flushed):
 * resolve what has completed; what has not waits for process exit. */
void obs_gpu_thread_exit(void);

/* A PHASE record was stored in the calling thread's buffer at per-thread
 * index (UINT64_MAX: not kept): the recorder's phase hook, registered by
 * intercept/ at start-up with OBS_GPU_TIME=steps (a range opens or closes). */
void obs_gpu_on_phase(const struct obs_rec_phase *r, uint64_t index);

#endif
