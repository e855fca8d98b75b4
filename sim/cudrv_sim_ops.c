/* Device work in the simulated CUDA driver: kernel launches of every
 * flavour, copies (linear, 2D, 3D, peer; sync and async) and
 * memsets (8/16/32-bit, 1D and 2D), each with its _ptsz/_ptds variant.
 * Device pointers are host addresses of simulated allocations; a copy
 * between two of them is charged at device bandwidth, any other at the
 * host link's. Kernels never run. The CUDA 2.x 32-bit entry points are
 * exported (cuGetProcAddress serves them for old versions) but cannot
 * address this memory: they return CUDA_ERROR_NOT_SUPPORTED. */
#include "cudrv_sim.h"
#include "sim_clock.h"

#include <stdlib.h>
#include <string.h>

#define DRV_MAX_BLOCK_THREADS 1024u
#define DRV_MAX_BLOCK_Z 64u
#define DRV_MAX_GRID_YZ 65535u

/* ---- launches ------------------------------------------------------------------ */

struct launch_dims {
    unsigned gx, gy, gz, bx, by, bz, shared;
};

static obs_CUresult launch(obs_CUfunction f, struct launch_dims d, obs_CUstream stream, int per_thread_api,
                           const char **name)
{
    const struct drv_function *fn;
    struct drv_stream *s;
    struct drv_op op = {.type = DRV_OP_KERNEL};
    obs_CUresult err = drv_need_context_of(DRV_OBJ(stream));

    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    fn = drv_function_find(f);
    *name = drv_function_name(fn);
    if (fn == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if (d.gx == 0 || d.gy == 0 || d.gz == 0 || d.bx == 0 || d.by == 0 || d.bz == 0 ||
             (uint64_t)d.bx * d.by * d.bz > DRV_MAX_BLOCK_THREADS || d.bz > DRV_MAX_BLOCK_Z ||
             d.gy > DRV_MAX_GRID_YZ || d.gz > DRV_MAX_GRID_YZ)
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    /* as a GPU refuses them: more threads than the kernel's bound (its registers, .reqntid), more dynamic
     * shared memory than it was allowed (48 KiB beside its static unless raised: cuFuncSetAttribute) */
    else if ((uint64_t)d.bx * d.by * d.bz > (uint64_t)drv_function_attribute(fn, DRV_FUNC_MAX_THREADS) ||
             d.shared > (unsigned)drv_function_attribute(fn, DRV_FUNC_MAX_DYNAMIC_SHARED))
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        err = drv_stream_lookup(stream, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS) {
        op.kernel = f;
        op.u.kernel_threads = (uint64_t)d.gx * d.gy * d.gz * d.bx * d.by * d.bz;
        err = drv_submit(s, &op, 0);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

static obs_CUresult launch_logged(const char *api, obs_CUfunction f, struct launch_dims d, obs_CUstream stream,
                                  int per_thread_api)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    err = launch(f, d, stream, per_thread_api, &name);
    return drv_finish(api, DRV_KIND_KERNEL, name, stream, DRV_NO_BYTES, err);
}

#define DIMS {gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes}

DRV_EXPORT obs_CUresult cuLaunchKernel(OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra)
{
    struct launch_dims d = DIMS;
    return launch_logged("cuLaunchKernel", f, d, hStream, 0);
}

DRV_EXPORT obs_CUresult cuLaunchKernel_ptsz(OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra)
{
    struct launch_dims d = DIMS;
    return launch_logged("cuLaunchKernel_ptsz", f, d, hStream, 1);
}

DRV_EXPORT obs_CUresult cuLaunchCooperativeKernel(OBS_CU_LAUNCH_PARAMS, void **kernelParams)
{
    struct launch_dims d = DIMS;
    return launch_logged("cuLaunchCooperativeKernel", f, d, hStream, 0);
}

DRV_EXPORT obs_CUresult cuLaunchCooperativeKernel_ptsz(OBS_CU_LAUNCH_PARAMS, void **kernelParams)
{
    struct launch_dims d = DIMS;
    return launch_logged("cuLaunchCooperativeKernel_ptsz", f, d, hStream, 1);
}

static obs_CUresult launch_ex(const char *api, const obs_CUlaunchConfig *config, obs_CUfunction f,
                              int per_thread_api)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    if (config == NULL || (config->numAttrs > 0 && config->attrs == NULL)) {
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    } else {
        struct launch_dims d = {config->gridDimX,  config->gridDimY,  config->gridDimZ,
                                config->blockDimX, config->blockDimY, config->blockDimZ, config->sharedMemBytes};
        err = launch(f, d, config->hStream, per_thread_api, &name);
    }
    return drv_finish(api, DRV_KIND_KERNEL, name, config ? (const void *)config->hStream : DRV_NO_STREAM,
                      DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuLaunchKernelEx(const obs_CUlaunchConfig *config, obs_CUfunction f,
                                         void **kernelParams, void **extra)
{
    return launch_ex("cuLaunchKernelEx", config, f, 0);
}

DRV_EXPORT obs_CUresult cuLaunchKernelEx_ptsz(const obs_CUlaunchConfig *config, obs_CUfunction f,
                                              void **kernelParams, void **extra)
{
    return launch_ex("cuLaunchKernelEx_ptsz", config, f, 1);
}

/* ---- copies -------------------------------------------------------------------- */

/* Which side of a linear copy must be simulated device memory. */
enum copy_sides { COPY_UNIFIED, COPY_HTOD, COPY_DTOH, COPY_DTOD };

/* A copy without a stream argument runs on the legacy stream (plain API) or
 * the thread's default stream (_ptds); stream_given selects hStream. */
static obs_CUresult submit_copy(struct drv_copy *c, obs_CUstream stream, int per_thread_api)
{
    struct drv_stream *s;
    struct drv_op op = {.type = DRV_OP_COPY};
    obs_CUresult err = drv_stream_lookup(stream, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS) {
        op.u.copy = *c;
        err = drv_submit(s, &op, 0);
    }
    return err;
}

static obs_CUresult copy_linear(void *dst, const void *src, size_t bytes, enum copy_sides sides,
                                obs_CUstream stream, int per_thread_api)
{
    struct drv_copy c = {.dst = dst, .src = src, .width = bytes, .height = 1, .depth = 1};
    int dst_dev, src_dev;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(stream));

    if (err != OBS_CUDA_SUCCESS)
        return err;
    if (dst == NULL || src == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv_lock);
    dst_dev = drv_is_device_range((obs_CUdeviceptr)(uintptr_t)dst, bytes);
    src_dev = drv_is_device_range((obs_CUdeviceptr)(uintptr_t)src, bytes);
    if (((sides == COPY_HTOD || sides == COPY_DTOD) && !dst_dev) ||
        ((sides == COPY_DTOH || sides == COPY_DTOD) && !src_dev))
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        c.device_to_device = dst_dev && src_dev;
        err = submit_copy(&c, stream, per_thread_api);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

#define PTR(d) ((void *)(uintptr_t)(d))

static obs_CUresult copy_logged(const char *api, void *dst, const void *src, size_t bytes,
                                enum copy_sides sides, obs_CUstream stream, int stream_given,
                                int per_thread_api)
{
    obs_CUresult err;
    drv_enter();
    sim_clock_note_end(0);
    err = copy_linear(dst, src, bytes, sides, stream, per_thread_api);
    /* OBS_SIM_SYNC_WAIT=1: a copy without a stream returns when it is done. */
    if (!stream_given && err == OBS_CUDA_SUCCESS)
        sim_clock_wait(sim_clock_last_end());
    return drv_finish(api, DRV_KIND_MEMCPY, NULL, stream_given ? (const void *)stream : DRV_NO_STREAM,
                      (long long)bytes, err);
}

DRV_EXPORT obs_CUresult cuMemcpy(obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount)
{
    return copy_logged("cuMemcpy", PTR(dst), PTR(src), ByteCount, COPY_UNIFIED, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpy_ptds(obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount)
{
    return copy_logged("cuMemcpy_ptds", PTR(dst), PTR(src), ByteCount, COPY_UNIFIED, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyAsync(obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount,
                                      obs_CUstream hStream)
{
    return copy_logged("cuMemcpyAsync", PTR(dst), PTR(src), ByteCount, COPY_UNIFIED, hStream, 1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyAsync_ptsz(obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount,
                                           obs_CUstream hStream)
{
    return copy_logged("cuMemcpyAsync_ptsz", PTR(dst), PTR(src), ByteCount, COPY_UNIFIED, hStream, 1, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyHtoD_v2(obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return copy_logged("cuMemcpyHtoD_v2", PTR(dstDevice), srcHost, ByteCount, COPY_HTOD, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyHtoD_v2_ptds(obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    return copy_logged("cuMemcpyHtoD_v2_ptds", PTR(dstDevice), srcHost, ByteCount, COPY_HTOD, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoH_v2(void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_logged("cuMemcpyDtoH_v2", dstHost, PTR(srcDevice), ByteCount, COPY_DTOH, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_logged("cuMemcpyDtoH_v2_ptds", dstHost, PTR(srcDevice), ByteCount, COPY_DTOH, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoD_v2(obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount)
{
    return copy_logged("cuMemcpyDtoD_v2", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoD_v2_ptds(obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice,
                                             size_t ByteCount)
{
    return copy_logged("cuMemcpyDtoD_v2_ptds", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, NULL,
                       0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyHtoDAsync_v2(obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                                             obs_CUstream hStream)
{
    return copy_logged("cuMemcpyHtoDAsync_v2", PTR(dstDevice), srcHost, ByteCount, COPY_HTOD, hStream, 1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyHtoDAsync_v2_ptsz(obs_CUdeviceptr dstDevice, const void *srcHost,
                                                  size_t ByteCount, obs_CUstream hStream)
{
    return copy_logged("cuMemcpyHtoDAsync_v2_ptsz", PTR(dstDevice), srcHost, ByteCount, COPY_HTOD, hStream,
                       1, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoHAsync_v2(void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount,
                                             obs_CUstream hStream)
{
    return copy_logged("cuMemcpyDtoHAsync_v2", dstHost, PTR(srcDevice), ByteCount, COPY_DTOH, hStream, 1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount,
                                                  obs_CUstream hStream)
{
    return copy_logged("cuMemcpyDtoHAsync_v2_ptsz", dstHost, PTR(srcDevice), ByteCount, COPY_DTOH, hStream,
                       1, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoDAsync_v2(obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice,
                                             size_t ByteCount, obs_CUstream hStream)
{
    return copy_logged("cuMemcpyDtoDAsync_v2", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, hStream,
                       1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyDtoDAsync_v2_ptsz(obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice,
                                                  size_t ByteCount, obs_CUstream hStream)
{
    return copy_logged("cuMemcpyDtoDAsync_v2_ptsz", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD,
                       hStream, 1, 1);
}

/* One context, one device: a peer copy is a unified copy between known contexts. */
DRV_EXPORT obs_CUresult cuMemcpyPeer(obs_CUdeviceptr dstDevice, obs_CUcontext dstContext,
                                     obs_CUdeviceptr srcDevice, obs_CUcontext srcContext, size_t ByteCount)
{
    return copy_logged("cuMemcpyPeer", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpyPeer_ptds(obs_CUdeviceptr dstDevice, obs_CUcontext dstContext,
                                          obs_CUdeviceptr srcDevice, obs_CUcontext srcContext,
                                          size_t ByteCount)
{
    return copy_logged("cuMemcpyPeer_ptds", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpyPeerAsync(obs_CUdeviceptr dstDevice, obs_CUcontext dstContext,
                                          obs_CUdeviceptr srcDevice, obs_CUcontext srcContext,
                                          size_t ByteCount, obs_CUstream hStream)
{
    return copy_logged("cuMemcpyPeerAsync", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD, hStream, 1,
                       0);
}

DRV_EXPORT obs_CUresult cuMemcpyPeerAsync_ptsz(obs_CUdeviceptr dstDevice, obs_CUcontext dstContext,
                                               obs_CUdeviceptr srcDevice, obs_CUcontext srcContext,
                                               size_t ByteCount, obs_CUstream hStream)
{
    return copy_logged("cuMemcpyPeerAsync_ptsz", PTR(dstDevice), PTR(srcDevice), ByteCount, COPY_DTOD,
                       hStream, 1, 1);
}

/* One side of a 2D/3D copy: its address, and whether it is device memory
 * (CU_MEMORYTYPE_UNIFIED: whichever it is). Arrays are not simulated. */
static obs_CUresult copy_side(obs_CUmemorytype type, const void *host, obs_CUdeviceptr dev, size_t offset,
                              size_t extent, char **addr, int *is_device)
{
    switch (type) {
    case OBS_CU_MEMORYTYPE_HOST:
        if (host == NULL)
            return OBS_CUDA_ERROR_INVALID_VALUE;
        *addr = (char *)host + offset;
        *is_device = 0;
        return OBS_CUDA_SUCCESS;
    case OBS_CU_MEMORYTYPE_DEVICE:
    case OBS_CU_MEMORYTYPE_UNIFIED:
        *addr = (char *)PTR(dev) + offset;
        *is_device = drv_is_device_range((obs_CUdeviceptr)(uintptr_t)*addr, extent);
        if (type == OBS_CU_MEMORYTYPE_DEVICE && !*is_device)
            return OBS_CUDA_ERROR_INVALID_VALUE;
        return dev ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE;
    case OBS_CU_MEMORYTYPE_ARRAY:
        return OBS_CUDA_ERROR_NOT_SUPPORTED;
    default:
        return OBS_CUDA_ERROR_INVALID_VALUE;
    }
}

/* 2D copies are 3D copies of depth 1. */
struct copy_desc {
    obs_CUmemorytype src_type, dst_type;
    const void *src_host;
    void *dst_host;
    obs_CUdeviceptr src_dev, dst_dev;
    size_t src_x, src_y, src_z, src_pitch, src_height;
    size_t dst_x, dst_y, dst_z, dst_pitch, dst_height;
    size_t width, height, depth;
};

static obs_CUresult copy_strided(const struct copy_desc *d, obs_CUstream stream, int per_thread_api)
{
    struct drv_copy c = {.width = d->width, .height = d->height, .depth = d->depth};
    char *src, *dst;
    int src_dev, dst_dev;
    size_t src_extent, dst_extent;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(stream));

    if (err != OBS_CUDA_SUCCESS)
        return err;
    if ((d->height > 1 && (d->src_pitch < d->width || d->dst_pitch < d->width)) ||
        (d->depth > 1 && (d->src_height < d->height || d->dst_height < d->height)))
        return OBS_CUDA_ERROR_INVALID_VALUE;
    c.src_pitch = d->src_pitch;
    c.dst_pitch = d->dst_pitch;
    c.src_slice = d->src_pitch * d->src_height;
    c.dst_slice = d->dst_pitch * d->dst_height;
    src_extent = (d->depth - 1) * c.src_slice + (d->height - 1) * d->src_pitch + d->width;
    dst_extent = (d->depth - 1) * c.dst_slice + (d->height - 1) * d->dst_pitch + d->width;
    pthread_mutex_lock(&drv_lock);
    err = copy_side(d->src_type, d->src_host, d->src_dev,
                    d->src_z * c.src_slice + d->src_y * d->src_pitch + d->src_x, src_extent, &src, &src_dev);
    if (err == OBS_CUDA_SUCCESS)
        err = copy_side(d->dst_type, d->dst_host, d->dst_dev,
                        d->dst_z * c.dst_slice + d->dst_y * d->dst_pitch + d->dst_x, dst_extent, &dst,
                        &dst_dev);
    if (err == OBS_CUDA_SUCCESS) {
        c.src = src;
        c.dst = dst;
        c.device_to_device = src_dev && dst_dev;
        err = submit_copy(&c, stream, per_thread_api);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

static obs_CUresult copy_2d_logged(const char *api, const obs_CUDA_MEMCPY2D *p, obs_CUstream stream,
                                   int stream_given, int per_thread_api)
{
    obs_CUresult err = OBS_CUDA_ERROR_INVALID_VALUE;
    long long bytes = DRV_NO_BYTES;
    drv_enter();
    if (p) {
        struct copy_desc d = {.src_type = p->srcMemoryType, .dst_type = p->dstMemoryType,
                              .src_host = p->srcHost, .dst_host = p->dstHost,
                              .src_dev = p->srcDevice, .dst_dev = p->dstDevice,
                              .src_x = p->srcXInBytes, .src_y = p->srcY, .src_pitch = p->srcPitch,
                              .src_height = p->Height, .dst_x = p->dstXInBytes, .dst_y = p->dstY,
                              .dst_pitch = p->dstPitch, .dst_height = p->Height,
                              .width = p->WidthInBytes, .height = p->Height, .depth = 1};
        bytes = (long long)(p->WidthInBytes * p->Height);
        err = copy_strided(&d, stream, per_thread_api);
    }
    return drv_finish(api, DRV_KIND_MEMCPY, NULL, stream_given ? (const void *)stream : DRV_NO_STREAM, bytes,
                      err);
}

static obs_CUresult copy_3d_logged(const char *api, const obs_CUDA_MEMCPY3D *p, obs_CUstream stream,
                                   int stream_given, int per_thread_api)
{
    obs_CUresult err = OBS_CUDA_ERROR_INVALID_VALUE;
    long long bytes = DRV_NO_BYTES;
    drv_enter();
    if (p && p->reserved0 == NULL && p->reserved1 == NULL && p->srcLOD == 0 && p->dstLOD == 0) {
        struct copy_desc d = {.src_type = p->srcMemoryType, .dst_type = p->dstMemoryType,
                              .src_host = p->srcHost, .dst_host = p->dstHost,
                              .src_dev = p->srcDevice, .dst_dev = p->dstDevice,
                              .src_x = p->srcXInBytes, .src_y = p->srcY, .src_z = p->srcZ,
                              .src_pitch = p->srcPitch, .src_height = p->srcHeight,
                              .dst_x = p->dstXInBytes, .dst_y = p->dstY, .dst_z = p->dstZ,
                              .dst_pitch = p->dstPitch, .dst_height = p->dstHeight,
                              .width = p->WidthInBytes, .height = p->Height, .depth = p->Depth};
        bytes = (long long)(p->WidthInBytes * p->Height * p->Depth);
        err = copy_strided(&d, stream, per_thread_api);
    }
    return drv_finish(api, DRV_KIND_MEMCPY, NULL, stream_given ? (const void *)stream : DRV_NO_STREAM, bytes,
                      err);
}

DRV_EXPORT obs_CUresult cuMemcpy2D_v2(const obs_CUDA_MEMCPY2D *pCopy)
{
    return copy_2d_logged("cuMemcpy2D_v2", pCopy, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpy2D_v2_ptds(const obs_CUDA_MEMCPY2D *pCopy)
{
    return copy_2d_logged("cuMemcpy2D_v2_ptds", pCopy, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpy2DAsync_v2(const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream)
{
    return copy_2d_logged("cuMemcpy2DAsync_v2", pCopy, hStream, 1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpy2DAsync_v2_ptsz(const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream)
{
    return copy_2d_logged("cuMemcpy2DAsync_v2_ptsz", pCopy, hStream, 1, 1);
}

DRV_EXPORT obs_CUresult cuMemcpy3D_v2(const obs_CUDA_MEMCPY3D *pCopy)
{
    return copy_3d_logged("cuMemcpy3D_v2", pCopy, NULL, 0, 0);
}

DRV_EXPORT obs_CUresult cuMemcpy3D_v2_ptds(const obs_CUDA_MEMCPY3D *pCopy)
{
    return copy_3d_logged("cuMemcpy3D_v2_ptds", pCopy, NULL, 0, 1);
}

DRV_EXPORT obs_CUresult cuMemcpy3DAsync_v2(const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream)
{
    return copy_3d_logged("cuMemcpy3DAsync_v2", pCopy, hStream, 1, 0);
}

DRV_EXPORT obs_CUresult cuMemcpy3DAsync_v2_ptsz(const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream)
{
    return copy_3d_logged("cuMemcpy3DAsync_v2_ptsz", pCopy, hStream, 1, 1);
}

/* ---- memsets ---------------------------------------------------------------------- */

static obs_CUresult fill(obs_CUdeviceptr dst, size_t pitch, uint32_t value, size_t elem_size, size_t width,
                         size_t height, obs_CUstream stream, int per_thread_api)
{
    struct drv_fill f = {.dst = PTR(dst), .elem_size = elem_size, .value = value,
                         .width_elems = width, .height = height, .pitch = pitch};
    struct drv_stream *s;
    struct drv_op op = {.type = DRV_OP_FILL};
    size_t extent = height ? (height - 1) * pitch + width * elem_size : 0;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(stream));

    if (err != OBS_CUDA_SUCCESS)
        return err;
    if ((height > 1 && pitch < width * elem_size) || (dst % elem_size) != 0)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv_lock);
    if (!drv_is_device_range(dst, extent))
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        err = drv_stream_lookup(stream, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS) {
        op.u.fill = f;
        err = drv_submit(s, &op, 0);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

/* api, element size, rows: one body for the 24 memset entry points. */
static obs_CUresult fill_logged(const char *api, obs_CUdeviceptr dst, size_t pitch, uint32_t value,
                                size_t elem_size, size_t width, size_t height, obs_CUstream stream,
                                int stream_given, int per_thread_api)
{
    obs_CUresult err;
    drv_enter();
    err = fill(dst, height > 1 ? pitch : width * elem_size, value, elem_size, width, height, stream,
               per_thread_api);
    return drv_finish(api, DRV_KIND_MEMSET, NULL, stream_given ? (const void *)stream : DRV_NO_STREAM,
                      (long long)(width * elem_size * height), err);
}

DRV_EXPORT obs_CUresult cuMemsetD8_v2(obs_CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return fill_logged("cuMemsetD8_v2", dstDevice, 0, uc, 1, N, 1, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD8_v2_ptds(obs_CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    return fill_logged("cuMemsetD8_v2_ptds", dstDevice, 0, uc, 1, N, 1, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD16_v2(obs_CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    return fill_logged("cuMemsetD16_v2", dstDevice, 0, us, 2, N, 1, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD16_v2_ptds(obs_CUdeviceptr dstDevice, unsigned short us, size_t N)
{
    return fill_logged("cuMemsetD16_v2_ptds", dstDevice, 0, us, 2, N, 1, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD32_v2(obs_CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return fill_logged("cuMemsetD32_v2", dstDevice, 0, ui, 4, N, 1, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD32_v2_ptds(obs_CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    return fill_logged("cuMemsetD32_v2_ptds", dstDevice, 0, ui, 4, N, 1, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD8Async(obs_CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                        obs_CUstream hStream)
{
    return fill_logged("cuMemsetD8Async", dstDevice, 0, uc, 1, N, 1, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD8Async_ptsz(obs_CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                             obs_CUstream hStream)
{
    return fill_logged("cuMemsetD8Async_ptsz", dstDevice, 0, uc, 1, N, 1, hStream, 1, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD16Async(obs_CUdeviceptr dstDevice, unsigned short us, size_t N,
                                         obs_CUstream hStream)
{
    return fill_logged("cuMemsetD16Async", dstDevice, 0, us, 2, N, 1, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD16Async_ptsz(obs_CUdeviceptr dstDevice, unsigned short us, size_t N,
                                              obs_CUstream hStream)
{
    return fill_logged("cuMemsetD16Async_ptsz", dstDevice, 0, us, 2, N, 1, hStream, 1, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD32Async(obs_CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                         obs_CUstream hStream)
{
    return fill_logged("cuMemsetD32Async", dstDevice, 0, ui, 4, N, 1, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD32Async_ptsz(obs_CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                              obs_CUstream hStream)
{
    return fill_logged("cuMemsetD32Async_ptsz", dstDevice, 0, ui, 4, N, 1, hStream, 1, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D8_v2(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                        size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D8_v2", dstDevice, dstPitch, uc, 1, Width, Height, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D8_v2_ptds(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                             size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D8_v2_ptds", dstDevice, dstPitch, uc, 1, Width, Height, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D16_v2(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                         size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D16_v2", dstDevice, dstPitch, us, 2, Width, Height, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D16_v2_ptds(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                              size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D16_v2_ptds", dstDevice, dstPitch, us, 2, Width, Height, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D32_v2(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                         size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D32_v2", dstDevice, dstPitch, ui, 4, Width, Height, NULL, 0, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D32_v2_ptds(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                              size_t Width, size_t Height)
{
    return fill_logged("cuMemsetD2D32_v2_ptds", dstDevice, dstPitch, ui, 4, Width, Height, NULL, 0, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D8Async(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                          size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D8Async", dstDevice, dstPitch, uc, 1, Width, Height, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D8Async_ptsz(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc,
                                               size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D8Async_ptsz", dstDevice, dstPitch, uc, 1, Width, Height, hStream, 1, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D16Async(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                           size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D16Async", dstDevice, dstPitch, us, 2, Width, Height, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D16Async_ptsz(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us,
                                                size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D16Async_ptsz", dstDevice, dstPitch, us, 2, Width, Height, hStream, 1, 1);
}
DRV_EXPORT obs_CUresult cuMemsetD2D32Async(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                           size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D32Async", dstDevice, dstPitch, ui, 4, Width, Height, hStream, 1, 0);
}
DRV_EXPORT obs_CUresult cuMemsetD2D32Async_ptsz(obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui,
                                                size_t Width, size_t Height, obs_CUstream hStream)
{
    return fill_logged("cuMemsetD2D32Async_ptsz", dstDevice, dstPitch, ui, 4, Width, Height, hStream, 1, 1);
}

/* ---- the CUDA 2.x 32-bit ABI ------------------------------------------------------ */

static obs_CUresult legacy_logged(const char *api, enum drv_kind kind, long long bytes, const void *stream)
{
    drv_enter();
    return drv_finish(api, kind, NULL, stream, bytes, OBS_CUDA_ERROR_NOT_SUPPORTED);
}

DRV_EXPORT obs_CUresult cuMemcpyHtoD(obs_CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount)
{
    return legacy_logged("cuMemcpyHtoD", DRV_KIND_MEMCPY, ByteCount, DRV_NO_STREAM);
}
DRV_EXPORT obs_CUresult cuMemcpyDtoH(void *dstHost, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount)
{
    return legacy_logged("cuMemcpyDtoH", DRV_KIND_MEMCPY, ByteCount, DRV_NO_STREAM);
}
DRV_EXPORT obs_CUresult cuMemcpyDtoD(obs_CUdeviceptr_v1 dstDevice, obs_CUdeviceptr_v1 srcDevice,
                                     unsigned int ByteCount)
{
    return legacy_logged("cuMemcpyDtoD", DRV_KIND_MEMCPY, ByteCount, DRV_NO_STREAM);
}
DRV_EXPORT obs_CUresult cuMemcpyHtoDAsync(obs_CUdeviceptr_v1 dstDevice, const void *srcHost,
                                          unsigned int ByteCount, obs_CUstream hStream)
{
    return legacy_logged("cuMemcpyHtoDAsync", DRV_KIND_MEMCPY, ByteCount, hStream);
}
DRV_EXPORT obs_CUresult cuMemcpyDtoHAsync(void *dstHost, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount,
                                          obs_CUstream hStream)
{
    return legacy_logged("cuMemcpyDtoHAsync", DRV_KIND_MEMCPY, ByteCount, hStream);
}
DRV_EXPORT obs_CUresult cuMemcpyDtoDAsync(obs_CUdeviceptr_v1 dstDevice, obs_CUdeviceptr_v1 srcDevice,
                                          unsigned int ByteCount, obs_CUstream hStream)
{
    return legacy_logged("cuMemcpyDtoDAsync", DRV_KIND_MEMCPY, ByteCount, hStream);
}
DRV_EXPORT obs_CUresult cuMemsetD8(obs_CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N)
{
    return legacy_logged("cuMemsetD8", DRV_KIND_MEMSET, N, DRV_NO_STREAM);
}
DRV_EXPORT obs_CUresult cuMemAlloc(obs_CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    return legacy_logged("cuMemAlloc", DRV_KIND_ALLOC, bytesize, DRV_NO_STREAM);
}
DRV_EXPORT obs_CUresult cuMemFree(obs_CUdeviceptr_v1 dptr)
{
    return legacy_logged("cuMemFree", DRV_KIND_ALLOC, DRV_NO_BYTES, DRV_NO_STREAM);
}
