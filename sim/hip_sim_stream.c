/* Simulated HIP runtime: streams, events, synchronisation and the virtual
 * device clock (docs/architecture.md, "Cost model"). Host calls never wait:
 * every operation is complete by the time its call returns, so queries
 * succeed and synchronisation returns at once; unless OBS_SIM_SYNC_WAIT=1
 * (sim_clock.h): then an operation starts no earlier than it was enqueued,
 * and stream, device and event syncs (and synchronous copies) sleep until
 * the virtual time their work ends. */
#include <stdlib.h>

#include "hip_sim.h"
#include "sim_clock.h"

struct sim_stream sim_null_stream;
static struct sim_stream *sim_streams;  /* created and per-thread streams */
static struct sim_event *sim_events;
static __thread struct sim_stream *sim_thread_stream;
static pthread_key_t sim_thread_stream_key;
static pthread_once_t sim_thread_stream_once = PTHREAD_ONCE_INIT;

static void sim_stream_unlink_locked(struct sim_stream *s)
{
    for (struct sim_stream **p = &sim_streams; *p != NULL; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            return;
        }
    }
}

static void sim_thread_stream_release(void *stream)
{
    struct sim_stream *s = stream;

    pthread_mutex_lock(&sim_lock);
    sim_capture_discard_locked(s);
    sim_stream_unlink_locked(s);
    pthread_mutex_unlock(&sim_lock);
    free(s);
}

static void sim_thread_stream_key_create(void)
{
    pthread_key_create(&sim_thread_stream_key, sim_thread_stream_release);
}

/* The calling thread's default stream, created on first use; an ordinary
 * blocking stream (it waits for the null stream and the null stream for it). */
static struct sim_stream *sim_thread_stream_locked(void)
{
    if (sim_thread_stream == NULL) {
        struct sim_stream *s = calloc(1, sizeof *s);
        if (s == NULL)
            return NULL;
        s->per_thread = 1;
        s->next = sim_streams;
        sim_streams = s;
        sim_thread_stream = s;
        pthread_once(&sim_thread_stream_once, sim_thread_stream_key_create);
        pthread_setspecific(sim_thread_stream_key, s);
    }
    return sim_thread_stream;
}

struct sim_stream *sim_stream_get_locked(obs_hipStream_t handle, int per_thread_default)
{
    if (handle == NULL)
        return per_thread_default ? sim_thread_stream_locked() : &sim_null_stream;
    if (handle == OBS_HIP_STREAM_PER_THREAD)
        return sim_thread_stream_locked();
    for (struct sim_stream *s = sim_streams; s != NULL; s = s->next)
        if ((obs_hipStream_t)s == handle && !s->per_thread)
            return s;
    return NULL;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

uint64_t sim_stream_ready_locked(const struct sim_stream *s)
{
    uint64_t t = s->tail_ns;

    if (s == &sim_null_stream) {
        for (const struct sim_stream *o = sim_streams; o != NULL; o = o->next)
            if (!(o->flags & OBS_HIP_STREAM_NON_BLOCKING))
                t = max_u64(t, o->tail_ns);
    } else if (!(s->flags & OBS_HIP_STREAM_NON_BLOCKING)) {
        t = max_u64(t, sim_null_stream.tail_ns);
    }
    return t;
}

uint64_t sim_stream_advance_locked(struct sim_stream *s, uint64_t cost_ns)
{
    uint64_t start = max_u64(sim_stream_ready_locked(s), sim_clock_floor());
    s->tail_ns = start + cost_ns;
    sim_clock_note_end(s->tail_ns);
    return s->tail_ns;
}

struct sim_event *sim_event_get_locked(obs_hipEvent_t handle)
{
    for (struct sim_event *e = sim_events; e != NULL; e = e->next)
        if ((obs_hipEvent_t)e == handle)
            return e;
    return NULL;
}

/* ---- streams ---- */

static obs_hipError_t sim_stream_create(obs_hipStream_t *stream, unsigned int flags)
{
    struct sim_stream *s;

    if (stream == NULL || (flags & ~OBS_HIP_STREAM_NON_BLOCKING) != 0)
        return obs_hipErrorInvalidValue;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return obs_hipErrorOutOfMemory;
    s->flags = flags;
    pthread_mutex_lock(&sim_lock);
    s->next = sim_streams; /* tail 0: blocking streams still wait for the null stream */
    sim_streams = s;
    pthread_mutex_unlock(&sim_lock);
    *stream = (obs_hipStream_t)s;
    return obs_hipSuccess;
}

obs_hipError_t hipStreamCreate(obs_hipStream_t *stream)
{
    sim_enter();
    return sim_finish("hipStreamCreate", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_stream_create(stream, OBS_HIP_STREAM_DEFAULT));
}

obs_hipError_t hipStreamCreateWithFlags(obs_hipStream_t *stream, unsigned int flags)
{
    sim_enter();
    return sim_finish("hipStreamCreateWithFlags", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_stream_create(stream, flags));
}

obs_hipError_t hipStreamDestroy(obs_hipStream_t stream)
{
    obs_hipError_t status = obs_hipErrorInvalidHandle;
    struct sim_stream *s = NULL;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    /* The null stream and hipStreamPerThread cannot be destroyed. */
    if (stream != NULL && stream != OBS_HIP_STREAM_PER_THREAD)
        s = sim_stream_get_locked(stream, 0);
    if (s != NULL) {
        sim_capture_discard_locked(s);
        sim_stream_unlink_locked(s);
        status = obs_hipSuccess;
    }
    pthread_mutex_unlock(&sim_lock);
    free(s);
    return sim_finish("hipStreamDestroy", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES, status);
}

static obs_hipError_t sim_stream_check(obs_hipStream_t stream, int per_thread_default)
{
    obs_hipError_t status = obs_hipSuccess;

    pthread_mutex_lock(&sim_lock);
    if (sim_stream_get_locked(stream, per_thread_default) == NULL)
        status = obs_hipErrorInvalidHandle;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipStreamQuery(obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipStreamQuery", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      sim_stream_check(stream, 0));
}

/* ---- synchronisation ---- */

static obs_hipError_t sim_stream_synchronize(obs_hipStream_t stream, int per_thread_default)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_stream *s;
    uint64_t end = 0;

    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, per_thread_default);
    if (s == NULL)
        status = obs_hipErrorInvalidHandle;
    else if (s->capture != NULL)
        status = obs_hipErrorStreamCaptureUnsupported;
    else
        end = s->tail_ns;
    pthread_mutex_unlock(&sim_lock);
    if (status == obs_hipSuccess)
        sim_clock_wait(end);
    return status;
}

/* OBS_SIM_SYNC_WAIT=1: wait for the last operation of every stream. */
static obs_hipError_t sim_device_synchronize(void)
{
    uint64_t end;

    pthread_mutex_lock(&sim_lock);
    end = sim_null_stream.tail_ns;
    for (const struct sim_stream *o = sim_streams; o != NULL; o = o->next)
        end = max_u64(end, o->tail_ns);
    pthread_mutex_unlock(&sim_lock);
    sim_clock_wait(end);
    return obs_hipSuccess;
}

obs_hipError_t hipDeviceSynchronize(void)
{
    sim_enter();
    return sim_finish("hipDeviceSynchronize", SIM_KIND_SYNC, NULL, NULL, SIM_NO_BYTES,
                      sim_device_synchronize());
}

obs_hipError_t hipStreamSynchronize(obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipStreamSynchronize", SIM_KIND_SYNC, NULL, &stream, SIM_NO_BYTES,
                      sim_stream_synchronize(stream, 0));
}

obs_hipError_t hipStreamSynchronize_spt(obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipStreamSynchronize_spt", SIM_KIND_SYNC, NULL, &stream, SIM_NO_BYTES,
                      sim_stream_synchronize(stream, 1));
}

static obs_hipError_t sim_stream_wait_event(obs_hipStream_t stream, obs_hipEvent_t event,
                                            unsigned int flags, int per_thread_default)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_stream *s;
    struct sim_event *e;

    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, per_thread_default);
    e = sim_event_get_locked(event);
    if (s == NULL || e == NULL)
        status = obs_hipErrorInvalidHandle;
    else if (flags != 0)
        status = obs_hipErrorInvalidValue;
    else if (e->recorded && s->capture == NULL && e->time_ns > s->tail_ns)
        s->tail_ns = e->time_ns; /* later work on s starts after the event */
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipStreamWaitEvent(obs_hipStream_t stream, obs_hipEvent_t event, unsigned int flags)
{
    sim_enter();
    return sim_finish("hipStreamWaitEvent", SIM_KIND_SYNC, NULL, &stream, SIM_NO_BYTES,
                      sim_stream_wait_event(stream, event, flags, 0));
}

obs_hipError_t hipStreamWaitEvent_spt(obs_hipStream_t stream, obs_hipEvent_t event,
                                      unsigned int flags)
{
    sim_enter();
    return sim_finish("hipStreamWaitEvent_spt", SIM_KIND_SYNC, NULL, &stream, SIM_NO_BYTES,
                      sim_stream_wait_event(stream, event, flags, 1));
}

/* ---- events ---- */

#define SIM_EVENT_FLAGS                                                                \
    (OBS_HIP_EVENT_BLOCKING_SYNC | OBS_HIP_EVENT_DISABLE_TIMING | 0x4u /* interprocess */ | \
     0x40000000u /* release to device */ | 0x80000000u /* release to system */)

static obs_hipError_t sim_event_create(obs_hipEvent_t *event, unsigned int flags)
{
    struct sim_event *e;

    if (event == NULL || (flags & ~SIM_EVENT_FLAGS) != 0)
        return obs_hipErrorInvalidValue;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return obs_hipErrorOutOfMemory;
    e->flags = flags;
    pthread_mutex_lock(&sim_lock);
    e->next = sim_events;
    sim_events = e;
    pthread_mutex_unlock(&sim_lock);
    *event = (obs_hipEvent_t)e;
    return obs_hipSuccess;
}

obs_hipError_t hipEventCreate(obs_hipEvent_t *event)
{
    sim_enter();
    return sim_finish("hipEventCreate", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_event_create(event, OBS_HIP_EVENT_DEFAULT));
}

obs_hipError_t hipEventCreateWithFlags(obs_hipEvent_t *event, unsigned flags)
{
    sim_enter();
    return sim_finish("hipEventCreateWithFlags", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_event_create(event, flags));
}

obs_hipError_t hipEventDestroy(obs_hipEvent_t event)
{
    obs_hipError_t status = obs_hipErrorInvalidHandle;
    struct sim_event *found = NULL;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    for (struct sim_event **p = &sim_events; *p != NULL; p = &(*p)->next) {
        if ((obs_hipEvent_t)*p == event) {
            found = *p;
            *p = found->next;
            status = obs_hipSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    free(found);
    return sim_finish("hipEventDestroy", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

static obs_hipError_t sim_event_record(obs_hipEvent_t event, obs_hipStream_t stream)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_event *e;
    struct sim_stream *s;

    pthread_mutex_lock(&sim_lock);
    e = sim_event_get_locked(event);
    s = sim_stream_get_locked(stream, 0);
    if (e == NULL || s == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else if (s->capture == NULL) {
        /* A zero-cost operation: the event marks everything before it. */
        e->time_ns = sim_stream_advance_locked(s, 0);
        e->recorded = 1;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipEventRecord(obs_hipEvent_t event, obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipEventRecord", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      sim_event_record(event, stream));
}

static obs_hipError_t sim_event_check(obs_hipEvent_t event)
{
    obs_hipError_t status = obs_hipSuccess;

    pthread_mutex_lock(&sim_lock);
    if (sim_event_get_locked(event) == NULL)
        status = obs_hipErrorInvalidHandle;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

/* OBS_SIM_SYNC_WAIT=1: sleep until the event's virtual time. */
static obs_hipError_t sim_event_synchronize(obs_hipEvent_t event)
{
    struct sim_event *e;
    uint64_t end = 0;

    pthread_mutex_lock(&sim_lock);
    e = sim_event_get_locked(event);
    if (e != NULL && e->recorded)
        end = e->time_ns;
    pthread_mutex_unlock(&sim_lock);
    if (e == NULL)
        return obs_hipErrorInvalidHandle;
    sim_clock_wait(end);
    return obs_hipSuccess;
}

obs_hipError_t hipEventSynchronize(obs_hipEvent_t event)
{
    sim_enter();
    return sim_finish("hipEventSynchronize", SIM_KIND_SYNC, NULL, NULL, SIM_NO_BYTES,
                      sim_event_synchronize(event));
}

obs_hipError_t hipEventQuery(obs_hipEvent_t event)
{
    sim_enter();
    return sim_finish("hipEventQuery", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_event_check(event));
}

static obs_hipError_t sim_event_elapsed(float *ms, obs_hipEvent_t start, obs_hipEvent_t stop)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_event *a, *b;

    if (ms == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    a = sim_event_get_locked(start);
    b = sim_event_get_locked(stop);
    if (a == NULL || b == NULL || !a->recorded || !b->recorded ||
        ((a->flags | b->flags) & OBS_HIP_EVENT_DISABLE_TIMING))
        status = obs_hipErrorInvalidHandle;
    else
        *ms = (float)(((double)b->time_ns - (double)a->time_ns) / 1e6);
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipEventElapsedTime(float *ms, obs_hipEvent_t start, obs_hipEvent_t stop)
{
    sim_enter();
    return sim_finish("hipEventElapsedTime", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_event_elapsed(ms, start, stop));
}
