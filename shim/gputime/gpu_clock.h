/* The device clock on the host time base, shared by the GPU-time modes
 * that read event timestamps (events, steps): one reference event per
 * runtime family and device, recorded on a private idle stream of ours
 * between two host CLOCK_MONOTONIC reads h0 and h1 and waited for; its
 * device time is taken as (h0 + h1) / 2, within (h1 - h0) / 2 (meta
 * gpu_time_clock_error_ns). Other events are placed by their elapsed time
 * from it, or from a later event already placed (the modes' anchors). And
 * the small helpers both modes use around the runtime's event API. */
#ifndef OBS_GPU_CLOCK_H
#define OBS_GPU_CLOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpu_call.h"

#define OBS_GPU_MAX_DEVICES 16u /* devices 0..15 are timed; calls on others are not */

/* The reference event of the caller's device d for be's family, made on
 * first use (by whichever thread first needs it). False: unusable (said
 * once, with mode, the OBS_GPU_TIME value, in the message). prev_error:
 * the app's last error before our calls (CUDA), restored on failure. */
bool obs_gpu_clock_ready(const struct obs_gpu_backend *be, unsigned d, int prev_error, const char *mode);

/* A ready reference: its event and its device time on the host time base.
 * False when it is not ready (not made, or unusable). */
bool obs_gpu_clock_reference(unsigned family, unsigned d, void **event, uint64_t *host_ns);

/* The largest alignment error of the references made (0: none). */
uint64_t obs_gpu_clock_error_ns(void);

/* Float milliseconds (EventElapsedTime) to integer ns, rounded. */
int64_t obs_gpu_ms_to_ns(float ms);

/* After one of our calls failed: put the app's last error back where we
 * can. target: what it must read now (CUDA: what it was before our calls;
 * HIP: the status of the app's last call). Only success can be restored. */
static inline void obs_gpu_restore_last_error(const struct obs_gpu_backend *be, int target)
{
    if (target == 0)
        be->get_last_error();
}

/* A counter written by one party at a time (no read-modify-write). */
static inline void obs_gpu_bump(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n, memory_order_relaxed);
}

#endif
