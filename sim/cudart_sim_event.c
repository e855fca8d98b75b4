/* Events of the simulated CUDA runtime: an event records the virtual time
 * at which the work enqueued before it on its stream ends; ElapsedTime is the
 * difference in milliseconds (docs/architecture.md, cost model). */
#include "cudart_sim.h"
#include "sim_clock.h"

#include <stdlib.h>

static struct sim_event *sim_events;

struct sim_event *sim_event_lookup(obs_cudaEvent_t handle)
{
    struct sim_event *e;
    for (e = sim_events; e; e = e->next)
        if ((obs_cudaEvent_t)e == handle)
            return e;
    return NULL;
}

#define SIM_EVENT_FLAGS \
    (OBS_CUDA_EVENT_BLOCKING_SYNC | OBS_CUDA_EVENT_DISABLE_TIMING | OBS_CUDA_EVENT_INTERPROCESS)

static obs_cudaError_t event_create(obs_cudaEvent_t *out, unsigned flags)
{
    struct sim_event *e;
    if (out == NULL || (flags & ~SIM_EVENT_FLAGS))
        return obs_cudaErrorInvalidValue;
    /* An interprocess event must not carry timing (CUDA's rule). */
    if ((flags & OBS_CUDA_EVENT_INTERPROCESS) && !(flags & OBS_CUDA_EVENT_DISABLE_TIMING))
        return obs_cudaErrorInvalidValue;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return obs_cudaErrorMemoryAllocation;
    e->flags = flags;
    pthread_mutex_lock(&sim_lock);
    e->next = sim_events;
    sim_events = e;
    pthread_mutex_unlock(&sim_lock);
    *out = (obs_cudaEvent_t)e;
    return obs_cudaSuccess;
}

SIM_EXPORT obs_cudaError_t cudaEventCreate(obs_cudaEvent_t *event)
{
    sim_enter();
    return sim_finish("cudaEventCreate", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_create(event, 0));
}

SIM_EXPORT obs_cudaError_t cudaEventCreateWithFlags(obs_cudaEvent_t *event, unsigned int flags)
{
    sim_enter();
    return sim_finish("cudaEventCreateWithFlags", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_create(event, flags));
}

static obs_cudaError_t event_destroy(obs_cudaEvent_t handle)
{
    struct sim_event **link;
    obs_cudaError_t err = obs_cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&sim_lock);
    for (link = &sim_events; *link; link = &(*link)->next)
        if ((obs_cudaEvent_t)*link == handle) {
            struct sim_event *e = *link;
            *link = e->next;
            free(e);
            err = obs_cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaEventDestroy(obs_cudaEvent_t event)
{
    sim_enter();
    return sim_finish("cudaEventDestroy", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_destroy(event));
}

/* Recording is a zero-cost operation on the stream (so it obeys the legacy
 * stream's ordering), or a graph node while the stream captures. */
static obs_cudaError_t event_record(obs_cudaEvent_t handle, obs_cudaStream_t stream, int per_thread_api)
{
    struct sim_stream *s;
    struct sim_op op = {.type = SIM_OP_EVENT_RECORD};
    obs_cudaError_t err;

    pthread_mutex_lock(&sim_lock);
    op.u.event = sim_event_lookup(handle);
    err = op.u.event ? sim_stream_lookup(stream, per_thread_api, &s) : obs_cudaErrorInvalidResourceHandle;
    if (err == obs_cudaSuccess)
        err = sim_submit(s, &op, 0);
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaEventRecord(obs_cudaEvent_t event, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaEventRecord", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      event_record(event, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaEventRecord_ptsz(obs_cudaEvent_t event, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaEventRecord_ptsz", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      event_record(event, stream, 1));
}

/* The virtual device is always done: an existing event is complete. */
static obs_cudaError_t event_check(obs_cudaEvent_t handle)
{
    obs_cudaError_t err;
    pthread_mutex_lock(&sim_lock);
    err = sim_event_lookup(handle) ? obs_cudaSuccess : obs_cudaErrorInvalidResourceHandle;
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaEventQuery(obs_cudaEvent_t event)
{
    sim_enter();
    return sim_finish("cudaEventQuery", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_check(event));
}

/* OBS_SIM_SYNC_WAIT=1: sleep until the event's virtual time. */
static obs_cudaError_t event_sync(obs_cudaEvent_t handle)
{
    struct sim_event *e;
    uint64_t end = 0;
    pthread_mutex_lock(&sim_lock);
    e = sim_event_lookup(handle);
    if (e != NULL && e->recorded)
        end = e->time_ns;
    pthread_mutex_unlock(&sim_lock);
    if (e == NULL)
        return obs_cudaErrorInvalidResourceHandle;
    sim_clock_wait(end);
    return obs_cudaSuccess;
}

SIM_EXPORT obs_cudaError_t cudaEventSynchronize(obs_cudaEvent_t event)
{
    sim_enter();
    return sim_finish("cudaEventSynchronize", SIM_KIND_SYNC, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_sync(event));
}

static obs_cudaError_t event_elapsed(float *ms, obs_cudaEvent_t start, obs_cudaEvent_t end)
{
    struct sim_event *a, *b;
    obs_cudaError_t err = obs_cudaSuccess;

    if (ms == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    a = sim_event_lookup(start);
    b = sim_event_lookup(end);
    /* CUDA: unknown, never recorded, or timing-disabled events. */
    if (a == NULL || b == NULL || !a->recorded || !b->recorded ||
        ((a->flags | b->flags) & OBS_CUDA_EVENT_DISABLE_TIMING))
        err = obs_cudaErrorInvalidResourceHandle;
    else
        *ms = (float)((double)((int64_t)b->time_ns - (int64_t)a->time_ns) / 1e6);
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaEventElapsedTime(float *ms, obs_cudaEvent_t start, obs_cudaEvent_t end)
{
    sim_enter();
    return sim_finish("cudaEventElapsedTime", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      event_elapsed(ms, start, end));
}
