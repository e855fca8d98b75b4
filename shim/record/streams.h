/* Stream handles -> small ids for CALL records. Handle 0 (the legacy
 * default stream) is id 0; every other handle value gets the next id on
 * first sight, announced once per trace by a STREAM record (id, handle,
 * device) in the thread's buffer. Special handles (cudaStreamLegacy = 0x1,
 * cudaStreamPerThread = 0x2) are ids like any other. Lookups are lock-free;
 * each thread keeps its last stream's id (obs_tls), so that a launch on the
 * same stream as the one before reads no line of the map. */
#ifndef OBS_STREAMS_H
#define OBS_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "recorder.h" /* obs_tls: the thread's last stream */

extern struct obs_ptrmap obs_stream_ids;

uint32_t obs_stream_id_slow(uintptr_t handle, uint16_t device);

static inline uint32_t obs_stream_id(uintptr_t handle, uint16_t device)
{
    uint64_t id;
    if (handle == 0)
        return 0;
    if (obs_likely(handle == obs_tls.stream_handle))
        return obs_tls.stream_id; /* ids never change for a handle (but in a fork child: cleared there) */
    if (!obs_likely(obs_ptrmap_get(&obs_stream_ids, handle, &id)))
        id = obs_stream_id_slow(handle, device);
    if (id != 0) {
        obs_tls.stream_handle = handle;
        obs_tls.stream_id = (uint32_t)id;
    }
    return (uint32_t)id;
}

/* The handle behind an id (for GPU timing), 0 when unknown. */
uintptr_t obs_stream_handle(uint32_t id);
/* True once some handle was reported as id 0 because the table was full:
 * id 0 then no longer means the legacy stream for certain. */
bool obs_streams_saturated(void);

void obs_streams_fork_prepare(void);
void obs_streams_fork_parent(void);
void obs_streams_fork_child(void); /* ids start again in the child's trace */

#endif
