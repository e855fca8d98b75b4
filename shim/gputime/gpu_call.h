/* What every way of timing a call on the device shares (gpu_time.h,
 * gpu_time_cupti.h, gpu_time_steps.h): a runtime family's event API, and
 * the call in progress on the wrapper's stack. Types only: the modes include this, not
 * each other. */
#ifndef OBS_GPU_CALL_H
#define OBS_GPU_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

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

/* The calls that have device work of their own to time. */
static inline bool obs_gpu_kind_is_timed(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH;
}

struct obs_gpu_thread; /* gpu_time.c */
struct cupti_thread;    /* gpu_time_cupti.c */

/* A call in progress (on the wrapper's stack). */
struct obs_gpu_call {
    const struct obs_gpu_backend *be;
    struct obs_gpu_thread *th; /* NULL: the call is not timed */
    void *begin, *end;
    uintptr_t stream;          /* the handle the events are recorded on */
    uint8_t kind;              /* enum obs_call_kind of the API */
    uint16_t device;
    int prev_error;            /* CUDA: the app's last error before our calls */
    bool by_cupti;             /* OBS_GPU_TIME=cupti took the call (gpu_time_cupti.h) */
    bool by_steps;             /* OBS_GPU_TIME=steps took the call (gpu_time_steps.h) */
    struct cupti_thread *cth;  /* cupti: the thread's ring, NULL: not timed */
};

#endif
