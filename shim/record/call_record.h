/* Building the description of a CALL record, shared by the interposition
 * layers (hooks_cudart.c, hooks_hip.c): what a launch, a copy or a memset
 * puts in its 48 bytes. Inline: this is the hot path. */
#ifndef OBS_CALL_RECORD_H
#define OBS_CALL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "recorder.h"
#include "trace/trace.h"

static inline uint16_t obs_clamp16(unsigned v)
{
    return v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
}

static inline uint32_t obs_clamp32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* cudaMemcpyKind and hipMemcpyKind number their kinds alike (HtoH 0, HtoD 1,
 * DtoH 2, DtoD 3, Default 4: tests/t_abi_cuda and t_abi_hip check both). */
static inline uint8_t obs_copy_direction(int kind)
{
    switch (kind) {
    case 0:
        return OBS_DIR_HTOH;
    case 1:
        return OBS_DIR_HTOD;
    case 2:
        return OBS_DIR_DTOH;
    case 3:
        return OBS_DIR_DTOD;
    case 4:
        return OBS_DIR_DEFAULT; /* the runtime infers it from the pointers */
    default:
        return OBS_DIR_NONE;
    }
}

/* A kernel launch: grid y/z and block dimensions are clamped to 16 bits
 * (larger values are invalid launches anyway; the status says so). */
static inline struct obs_rec_call obs_launch_record(uint32_t name, unsigned grid_x, unsigned grid_y,
                                                    unsigned grid_z, unsigned block_x, unsigned block_y,
                                                    unsigned block_z, size_t shmem, uint32_t stream)
{
    struct obs_rec_call r = {0};
    r.name = name;
    r.u.grid.x = grid_x;
    r.u.grid.y = obs_clamp16(grid_y);
    r.u.grid.z = obs_clamp16(grid_z);
    r.block_x = obs_clamp16(block_x);
    r.block_y = obs_clamp16(block_y);
    r.block_z = obs_clamp16(block_z);
    r.shmem = obs_clamp32(shmem);
    r.stream = stream;
    r.device = (uint16_t)obs_tls.device;
    return r;
}

/* Copies, memsets, allocations: bytes, direction, stream. */
static inline struct obs_rec_call obs_bytes_record(uint64_t bytes, uint8_t direction, uint32_t stream)
{
    struct obs_rec_call r = {0};
    r.u.bytes = bytes;
    r.flags = direction;
    r.stream = stream;
    r.device = (uint16_t)obs_tls.device;
    return r;
}

/* Syncs and other calls that carry only a stream. */
static inline struct obs_rec_call obs_stream_record(uint32_t stream)
{
    return obs_bytes_record(0, OBS_DIR_NONE, stream);
}

#endif
