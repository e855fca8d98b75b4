/* Stream ids: see streams.h. */
#include "streams.h"

#include <pthread.h>
#include <string.h>

#include "recorder.h"
#include "trace/trace.h"

OBS_HIDDEN OBS_HOT_DATA struct obs_ptrmap obs_stream_ids;

/* id -> handle, for the few users that need the way back. */
#define OBS_STREAMS_MAX 65536u
static _Atomic uintptr_t handles[OBS_STREAMS_MAX];

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t last_id;
static atomic_bool saturated; /* a handle got id 0 because the table was full */

uint32_t obs_stream_id_slow(uintptr_t handle, uint16_t device)
{
    union obs_record r;
    uint64_t id = 0;
    bool is_new = false;

    pthread_mutex_lock(&streams_lock);
    if (!obs_ptrmap_get(&obs_stream_ids, handle, &id) && last_id + 1 < OBS_STREAMS_MAX &&
        obs_ptrmap_put(&obs_stream_ids, handle, last_id + 1) == 0) {
        id = ++last_id;
        atomic_store(&handles[id], handle);
        is_new = true;
    } else if (id == 0) {
        atomic_store(&saturated, true);
    }
    pthread_mutex_unlock(&streams_lock);
    if (is_new)
        OBS_DEBUG_LOG(RECORD, 2, "stream id=%llu handle=%#llx device=%u", (unsigned long long)id,
                      (unsigned long long)handle, (unsigned)device);
    else if (id == 0)
        OBS_DEBUG_LOG(RECORD, 1, "stream handle=%#llx: the stream table is full; recorded as stream 0",
                      (unsigned long long)handle);
    if (is_new) {
        memset(&r, 0, sizeof r);
        r.stream.type = OBS_REC_STREAM;
        r.stream.device = device;
        r.stream.id = (uint32_t)id;
        r.stream.handle = handle;
        obs_recorder_append(&r);
    }
    return (uint32_t)id; /* 0 when the table is full: reported as the default stream */
}

uintptr_t obs_stream_handle(uint32_t id)
{
    return id < OBS_STREAMS_MAX ? atomic_load(&handles[id]) : 0;
}

bool obs_streams_saturated(void)
{
    return atomic_load_explicit(&saturated, memory_order_relaxed);
}

void obs_streams_fork_prepare(void)
{
    pthread_mutex_lock(&streams_lock);
}

void obs_streams_fork_parent(void)
{
    pthread_mutex_unlock(&streams_lock);
}

void obs_streams_fork_child(void)
{
    obs_ptrmap_clear(&obs_stream_ids);
    obs_tls.stream_handle = 0; /* the forking thread, the child's only one: its ids start again */
    obs_tls.stream_id = 0;
    memset(handles, 0, sizeof handles);
    last_id = 0;
    atomic_store(&saturated, false);
    pthread_mutex_unlock(&streams_lock);
}
