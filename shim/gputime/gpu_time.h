/* GPU time with events (OBS_GPU_TIME=events): an event pair around each
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
#include "record/record.h"

/* One runtime family's event API (real functions). Every int is the
 * family's status code, 0 = success. */
struct obs_gpu_backend {
    const char *name;  /* for messages: "CUDA runtime", "HIP" */
    unsigned family;   /* OBS_GPU_FAMILY_*: index of the family's shared state */
    int not_ready;     /* what a query of unfinished work returns */
    /* HIP stores every call's result, success included, as the thread's last
     * error; CUDA only failures, kept until cudaGetLastError reads them. */
    bool every_call_sets_last_error;
    bool (*available)(void); /* the runtime has every function below */
    int (*event_create)(void **event);
    int (*event_destroy)(void *event);
    int (*event_record)(void *event, uintptr_t stream);
    int (*event_query)(void *event);
    int (*event_synchronize)(void *event);
    int (*elapsed_ms)(float *ms, void *start, void *end);
    int (*stream_capturing)(uintptr_t stream, bool *capturing);
    int (*stream_create_private)(uintptr_t *stream); /* a non-blocking stream */
    int (*peek_last_error)(void);
    int (*get_last_error)(void); /* reads and resets it */
};

enum { OBS_GPU_FAMILY_CUDA = 0, OBS_GPU_FAMILY_HIP = 1, OBS_GPU_FAMILIES = 2 };

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

struct obs_gpu_thread; /* gpu_time.c */

/* A call in progress (on the wrapper's stack). */
struct obs_gpu_call {
    const struct obs_gpu_backend *be;
    struct obs_gpu_thread *th; /* NULL: the call is not timed */
    void *begin, *end;
    uintptr_t stream;          /* the handle the events are recorded on */
    uint8_t kind;              /* enum obs_call_kind of the API */
    uint16_t device;
    int prev_error;            /* CUDA: the app's last error before our calls */
};

/* After describe, before obs_call_started. */
void obs_gpu_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call,
                    uint16_t api);
/* Right after the real call, instead of obs_call_finish. errno is left as
 * the real call left it. */
void obs_gpu_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status);

/* The calling thread is exiting (recorder.c, before its buffer is flushed):
 * resolve what has completed; what has not waits for process exit. */
void obs_gpu_thread_exit(void);

#endif
