/* Simulated HIP runtime: hipMemset and its variants. The destination must
 * be device memory (as HIP checks); the fill really happens (at once, or
 * when a captured graph replays it) and costs the cost model's memset time. */
#include <string.h>

#include "hip_sim.h"

uint64_t sim_fill_bytes(const struct sim_fill *f)
{
    return (uint64_t)f->width * f->elem_size * f->height * f->depth;
}

static void sim_fill_row(char *row, unsigned int elem_size, uint32_t value, size_t count)
{
    if (elem_size == 1) {
        memset(row, (int)(value & 0xffu), count);
    } else if (elem_size == 2) {
        uint16_t v = (uint16_t)value;
        for (size_t i = 0; i < count; ++i)
            memcpy(row + i * 2, &v, 2);
    } else {
        for (size_t i = 0; i < count; ++i)
            memcpy(row + i * 4, &value, 4);
    }
}

void sim_fill_run(const struct sim_fill *f)
{
    for (size_t z = 0; z < f->depth; ++z)
        for (size_t y = 0; y < f->height; ++y)
            sim_fill_row(f->dst + z * f->slice + y * f->pitch, f->elem_size, f->value, f->width);
}

/* Validates the destination and enqueues (or captures) the fill. */
static obs_hipError_t sim_fill_submit(struct sim_fill f, obs_hipStream_t stream,
                                      int per_thread_default, int synchronous)
{
    obs_hipError_t status;
    struct sim_stream *s;
    size_t span;

    if (f.width == 0 || f.height == 0 || f.depth == 0)
        return obs_hipSuccess;
    if (f.dst == NULL)
        return obs_hipErrorInvalidValue;
    if (f.pitch < (size_t)f.width * f.elem_size)
        return obs_hipErrorInvalidValue;
    span = (f.depth - 1) * f.slice + (f.height - 1) * f.pitch + f.width * f.elem_size;
    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, per_thread_default);
    if (s == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else if (!sim_device_range_locked(f.dst, span)) {
        status = obs_hipErrorInvalidValue;
    } else {
        struct sim_node node;
        memset(&node, 0, sizeof node);
        node.kind = SIM_NODE_FILL;
        node.fill = f;
        status = sim_submit_locked(s, &node, synchronous);
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

static struct sim_fill sim_fill_linear(void *dst, unsigned int elem_size, uint32_t value,
                                       size_t count)
{
    struct sim_fill f = {.dst = dst, .elem_size = elem_size, .value = value, .width = count,
                         .height = 1, .depth = 1, .pitch = count * elem_size,
                         .slice = count * elem_size};
    return f;
}

static struct sim_fill sim_fill_2d(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    struct sim_fill f = {.dst = dst, .elem_size = 1, .value = (uint32_t)value, .width = width,
                         .height = height, .depth = 1, .pitch = pitch, .slice = pitch * height};
    return f;
}

static struct sim_fill sim_fill_3d(obs_hipPitchedPtr p, int value, obs_hipExtent e)
{
    size_t rows = p.ysize != 0 ? p.ysize : e.height;
    struct sim_fill f = {.dst = p.ptr, .elem_size = 1, .value = (uint32_t)value, .width = e.width,
                         .height = e.height, .depth = e.depth, .pitch = p.pitch,
                         .slice = p.pitch * rows};
    return f;
}

#define SIM_SET_DONE(api, stream, bytes, status) \
    sim_finish(api, SIM_KIND_MEMSET, NULL, stream, (long long)(bytes), status)

obs_hipError_t hipMemset(void *dst, int value, size_t sizeBytes)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset", NULL, sizeBytes,
                        sim_fill_submit(sim_fill_linear(dst, 1, (uint32_t)value, sizeBytes), NULL,
                                        0, 1));
}

obs_hipError_t hipMemset_spt(void *dst, int value, size_t sizeBytes)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset_spt", NULL, sizeBytes,
                        sim_fill_submit(sim_fill_linear(dst, 1, (uint32_t)value, sizeBytes), NULL,
                                        1, 1));
}

obs_hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetAsync", &stream, sizeBytes,
                        sim_fill_submit(sim_fill_linear(dst, 1, (uint32_t)value, sizeBytes), stream,
                                        0, 0));
}

obs_hipError_t hipMemsetD8(obs_hipDeviceptr_t dest, unsigned char value, size_t count)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD8", NULL, count,
                        sim_fill_submit(sim_fill_linear(dest, 1, value, count), NULL, 0, 1));
}

obs_hipError_t hipMemsetD8Async(obs_hipDeviceptr_t dest, unsigned char value, size_t count,
                                obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD8Async", &stream, count,
                        sim_fill_submit(sim_fill_linear(dest, 1, value, count), stream, 0, 0));
}

obs_hipError_t hipMemsetD16(obs_hipDeviceptr_t dest, unsigned short value, size_t count)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD16", NULL, count * 2,
                        sim_fill_submit(sim_fill_linear(dest, 2, value, count), NULL, 0, 1));
}

obs_hipError_t hipMemsetD16Async(obs_hipDeviceptr_t dest, unsigned short value, size_t count,
                                 obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD16Async", &stream, count * 2,
                        sim_fill_submit(sim_fill_linear(dest, 2, value, count), stream, 0, 0));
}

obs_hipError_t hipMemsetD32(obs_hipDeviceptr_t dest, int value, size_t count)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD32", NULL, count * 4,
                        sim_fill_submit(sim_fill_linear(dest, 4, (uint32_t)value, count), NULL, 0,
                                        1));
}

obs_hipError_t hipMemsetD32Async(obs_hipDeviceptr_t dst, int value, size_t count,
                                 obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemsetD32Async", &stream, count * 4,
                        sim_fill_submit(sim_fill_linear(dst, 4, (uint32_t)value, count), stream, 0,
                                        0));
}

obs_hipError_t hipMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset2D", NULL, width * height,
                        sim_fill_submit(sim_fill_2d(dst, pitch, value, width, height), NULL, 0, 1));
}

obs_hipError_t hipMemset2D_spt(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset2D_spt", NULL, width * height,
                        sim_fill_submit(sim_fill_2d(dst, pitch, value, width, height), NULL, 1, 1));
}

obs_hipError_t hipMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height,
                                obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset2DAsync", &stream, width * height,
                        sim_fill_submit(sim_fill_2d(dst, pitch, value, width, height), stream, 0,
                                        0));
}

obs_hipError_t hipMemset3D(obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset3D", NULL, extent.width * extent.height * extent.depth,
                        sim_fill_submit(sim_fill_3d(pitchedDevPtr, value, extent), NULL, 0, 1));
}

obs_hipError_t hipMemset3D_spt(obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset3D_spt", NULL, extent.width * extent.height * extent.depth,
                        sim_fill_submit(sim_fill_3d(pitchedDevPtr, value, extent), NULL, 1, 1));
}

obs_hipError_t hipMemset3DAsync(obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent,
                                obs_hipStream_t stream)
{
    sim_enter();
    return SIM_SET_DONE("hipMemset3DAsync", &stream, extent.width * extent.height * extent.depth,
                        sim_fill_submit(sim_fill_3d(pitchedDevPtr, value, extent), stream, 0, 0));
}
