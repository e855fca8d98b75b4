/* The CUDA driver hooks: every entry of OBS_CUDA_DRIVER_API
 * (shim/abi/cuda_driver_abi.h: launches, copies, memsets, synchronisation,
 * each under its exact variant symbol) is exported under its real name,
 * records one CALL record and returns what the real function returned.
 * The twin of hooks_cudart.c: the same generator (OBS_DEFINE_RECORDED_WRAPPER),
 * one OBS_CUDRV_HOOK(name, ...) line per entry point (git grep, ctags and
 * gdb find it by name there) heading its describe_<name>() helper.
 *
 * Programs linked with -lcuda reach these by plain interposition; nvcc's
 * static cudart, cuBLAS and Triton fetch the driver's pointers with dlsym
 * and cuGetProcAddress, and get these wrappers from hooks_dlsym.c. Each
 * entry point has a second wrapper, obs_proc_<name>, for a pointer
 * cuGetProcAddress handed out that is not the exported symbol: the same
 * record, around a call of that pointer.
 *
 * The graph instantiations (OBS_CUDRV_INSTANTIATE_API, hooks_driver.h) are
 * support hooks: they record nothing, but walk the new exec's graph once so
 * that its launches carry node count, exec id and kernels (graph_execs.h).
 *
 * A launch made by the CUDA runtime passes the runtime hook first: its
 * driver call then happens inside a recorded call and passes straight
 * through (the guard, recorder.h), so it is recorded once. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "abi/cuda_driver_abi.h"
#include "trace/trace.h"
#include "record/record.h"
#include "gputime/gpu_time.h"
#include "phases/phase_engine.h"
#include "hooks_driver.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"
#include "wrapper.h"

#define OBS_CUDRV_HOOK_PROTOTYPE(name, ret, params, args) OBS_EXPORT ret name params;
OBS_CUDA_DRIVER_API(OBS_CUDRV_HOOK_PROTOTYPE)
#undef OBS_CUDRV_HOOK_PROTOTYPE
#define OBS_CUDRV_INSTANTIATE_PROTOTYPE(name, params, args) OBS_EXPORT obs_CUresult name params;
OBS_CUDRV_INSTANTIATE_API(OBS_CUDRV_INSTANTIATE_PROTOTYPE)
#undef OBS_CUDRV_INSTANTIATE_PROTOTYPE

/* ---- pieces of a description ------------------------------------------- */

/* The stream id of a call. The _ptsz/_ptds variants mean the per-thread
 * stream by handle 0, recorded as CU_STREAM_PER_THREAD (0x2) like the
 * runtime's cudaStreamPerThread. */
static inline uint32_t stream_id(obs_CUstream stream, bool per_thread)
{
    if (stream == NULL && per_thread)
        stream = OBS_CU_STREAM_PER_THREAD;
    return obs_stream_id((uintptr_t)stream, (uint16_t)obs_tls.device);
}

/* Slow path, once per handle: ask the driver for the name (a CUfunction,
 * or a CUkernel passed as one: cuFuncGetName first, then cuKernelGetName;
 * the other way round for a handle known to be a CUkernel), through the
 * real functions and outside our locks; the result, or the generic
 * fallback, is cached for every later launch. */
static uint32_t function_name_slow(obs_CUfunction f, bool kernel_first)
{
    obs_fn_cuFuncGetName func_name = OBS_CUDRV_REAL(cuFuncGetName);
    obs_fn_cuKernelGetName kernel_name = OBS_CUDRV_REAL(cuKernelGetName);
    const char *name = NULL;
    uint64_t id;
    int i;

    for (i = 0; i < 2 && name == NULL; i++) {
        bool as_kernel = (i == 0) == kernel_first;
        obs_CUresult status = OBS_CUDA_ERROR_NOT_FOUND;
        if (as_kernel && kernel_name != NULL)
            status = kernel_name(&name, (obs_CUkernel)f);
        else if (!as_kernel && func_name != NULL)
            status = func_name(&name, f);
        if (status != OBS_CUDA_SUCCESS || name == NULL || name[0] == '\0')
            name = NULL;
    }
    if (name == NULL)
        return obs_kernel_name_fallback(f, true);
    obs_kernel_names_register_handle(f, name);
    if (obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)f, &id))
        return (uint32_t)id;
    return obs_kernel_name_intern(name);
}

static inline uint32_t function_name(obs_CUfunction f)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)f, &id)))
        return (uint32_t)id;
    return f != NULL ? function_name_slow(f, false) : 0;
}

/* The same for a CUkernel (a kernel node's kern), under the same cache. */
static uint32_t kernel_handle_name(obs_CUkernel k)
{
    uint64_t id;
    if (obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)k, &id))
        return (uint32_t)id;
    return k != NULL ? function_name_slow((obs_CUfunction)k, true) : 0;
}

static inline struct obs_rec_call launch_record(obs_CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                                obs_CUstream stream, bool per_thread)
{
    return obs_launch_record(function_name(f), gx, gy, gz, bx, by, bz, shmem, stream_id(stream, per_thread));
}

static inline struct obs_rec_call launch_ex_record(const obs_CUlaunchConfig *c, obs_CUfunction f, bool per_thread)
{
    if (c == NULL)
        return obs_launch_record(function_name(f), 0, 0, 0, 0, 0, 0, 0, stream_id(NULL, per_thread));
    return launch_record(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                         c->sharedMemBytes, c->hStream, per_thread);
}

/* The direction of a 2D/3D copy from its memory types (arrays live on the
 * device; unified memory: the driver decides, as cudaMemcpyDefault). */
static inline uint8_t typed_direction(obs_CUmemorytype src, obs_CUmemorytype dst)
{
    bool src_host = src == OBS_CU_MEMORYTYPE_HOST, dst_host = dst == OBS_CU_MEMORYTYPE_HOST;
    if (src == OBS_CU_MEMORYTYPE_UNIFIED || dst == OBS_CU_MEMORYTYPE_UNIFIED)
        return OBS_DIR_DEFAULT;
    if (src_host && dst_host)
        return OBS_DIR_HTOH;
    if (src_host)
        return OBS_DIR_HTOD;
    if (dst_host)
        return OBS_DIR_DTOH;
    return OBS_DIR_DTOD;
}

static inline struct obs_rec_call copy2d_record(const obs_CUDA_MEMCPY2D *p, obs_CUstream stream, bool per_thread)
{
    if (p == NULL)
        return obs_bytes_record(0, OBS_DIR_NONE, stream_id(stream, per_thread));
    return obs_bytes_record((uint64_t)p->WidthInBytes * p->Height, typed_direction(p->srcMemoryType, p->dstMemoryType),
                            stream_id(stream, per_thread));
}

static inline struct obs_rec_call copy3d_record(const obs_CUDA_MEMCPY3D *p, obs_CUstream stream, bool per_thread)
{
    if (p == NULL)
        return obs_bytes_record(0, OBS_DIR_NONE, stream_id(stream, per_thread));
    return obs_bytes_record((uint64_t)p->WidthInBytes * p->Height * p->Depth,
                            typed_direction(p->srcMemoryType, p->dstMemoryType), stream_id(stream, per_thread));
}

/* Copies and memsets: bytes, direction, stream (synchronous ones on the
 * legacy stream, or the per-thread one for _ptds). */
static inline struct obs_rec_call bytes_record(uint64_t bytes, uint8_t direction, obs_CUstream stream,
                                               bool per_thread)
{
    return obs_bytes_record(bytes, direction, stream_id(stream, per_thread));
}

/* ---- the hooks: one per entry point ----------------------------------------- */

/* OBS_CUDRV_HOOK(name, (parameters), (argument names)) { describe body }:
 * the exported wrapper <name> (shim/intercept/wrapper.h has the shape and
 * its reasons); obs_proc_<name>, the same record around a call of the
 * pointer cuGetProcAddress handed out for it (see "the proc wrappers"
 * below), which the generator gives <name>'s function type, description
 * and API id; then describe_<name>() for the body that follows. */
#define OBS_CUDRV_HOOK(name, params, args)                                                           \
    static inline struct obs_rec_call describe_##name params;                                        \
    OBS_DEFINE_RECORDED_WRAPPER(name, obs_CUresult, params, args, OBS_CUDRV_REAL(name),              \
                                obs_cudrv_missing(OBS_REAL_CUDRV_##name), OBS_GPU_CUDRV_BACKEND)     \
    typedef obs_fn_##name obs_fn_obs_proc_##name;                                                    \
    enum { OBS_API_obs_proc_##name = OBS_API_##name };                                               \
    static inline struct obs_rec_call describe_obs_proc_##name params                                \
    {                                                                                                \
        return describe_##name args;                                                                 \
    }                                                                                                \
    obs_CUresult obs_proc_##name params;                                                             \
    OBS_DEFINE_RECORDED_WRAPPER(obs_proc_##name, obs_CUresult, params, args,                         \
                                (obs_fn_##name)obs_cudrv_proc_fn(OBS_REAL_CUDRV_##name),             \
                                obs_cudrv_missing(OBS_REAL_CUDRV_##name), OBS_GPU_CUDRV_BACKEND)     \
    static inline struct obs_rec_call describe_##name params

/* launches */
OBS_CUDRV_HOOK(cuLaunchKernel,
               (OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra),
               (OBS_CU_LAUNCH_ARGS, kernelParams, extra))
{
    return launch_record(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                         false);
}
OBS_CUDRV_HOOK(cuLaunchKernel_ptsz,
               (OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra),
               (OBS_CU_LAUNCH_ARGS, kernelParams, extra))
{
    return launch_record(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                         true);
}
OBS_CUDRV_HOOK(cuLaunchKernelEx,
               (const obs_CUlaunchConfig *config, obs_CUfunction f, void **kernelParams, void **extra),
               (config, f, kernelParams, extra))
{
    return launch_ex_record(config, f, false);
}
OBS_CUDRV_HOOK(cuLaunchKernelEx_ptsz,
               (const obs_CUlaunchConfig *config, obs_CUfunction f, void **kernelParams, void **extra),
               (config, f, kernelParams, extra))
{
    return launch_ex_record(config, f, true);
}
OBS_CUDRV_HOOK(cuLaunchCooperativeKernel,
               (OBS_CU_LAUNCH_PARAMS, void **kernelParams),
               (OBS_CU_LAUNCH_ARGS, kernelParams))
{
    return launch_record(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                         false);
}
OBS_CUDRV_HOOK(cuLaunchCooperativeKernel_ptsz,
               (OBS_CU_LAUNCH_PARAMS, void **kernelParams),
               (OBS_CU_LAUNCH_ARGS, kernelParams))
{
    return launch_record(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                         true);
}
/* Graph launches: node count, exec id and most frequent kernel of the exec
 * as learnt at its instantiation (graph_execs.h). */
OBS_CUDRV_HOOK(cuGraphLaunch,
               (obs_CUgraphExec hGraphExec, obs_CUstream hStream),
               (hGraphExec, hStream))
{
    return obs_graph_launch_record(hGraphExec, stream_id(hStream, false));
}
OBS_CUDRV_HOOK(cuGraphLaunch_ptsz,
               (obs_CUgraphExec hGraphExec, obs_CUstream hStream),
               (hGraphExec, hStream))
{
    return obs_graph_launch_record(hGraphExec, stream_id(hStream, true));
}

/* copies: cuMemcpy/cuMemcpyAsync take unified addresses (the driver infers
 * the direction: recorded as "default"); the others say it. */
OBS_CUDRV_HOOK(cuMemcpy,
               (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount),
               (dst, src, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DEFAULT, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpy_ptds,
               (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount),
               (dst, src, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DEFAULT, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpyAsync,
               (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount, obs_CUstream hStream),
               (dst, src, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DEFAULT, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpyAsync_ptsz,
               (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount, obs_CUstream hStream),
               (dst, src, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DEFAULT, hStream, true);
}
OBS_CUDRV_HOOK(cuMemcpyHtoD_v2,
               (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
               (dstDevice, srcHost, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_HTOD, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpyHtoD_v2_ptds,
               (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
               (dstDevice, srcHost, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_HTOD, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpyDtoH_v2,
               (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount),
               (dstHost, srcDevice, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DTOH, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpyDtoH_v2_ptds,
               (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount),
               (dstHost, srcDevice, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DTOH, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpyDtoD_v2,
               (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount),
               (dstDevice, srcDevice, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DTOD, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpyDtoD_v2_ptds,
               (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount),
               (dstDevice, srcDevice, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_DTOD, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpyHtoDAsync_v2,
               (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, srcHost, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_HTOD, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpyHtoDAsync_v2_ptsz,
               (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, srcHost, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_HTOD, hStream, true);
}
OBS_CUDRV_HOOK(cuMemcpyDtoHAsync_v2,
               (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),
               (dstHost, srcDevice, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DTOH, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpyDtoHAsync_v2_ptsz,
               (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),
               (dstHost, srcDevice, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DTOH, hStream, true);
}
OBS_CUDRV_HOOK(cuMemcpyDtoDAsync_v2,
               (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, srcDevice, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DTOD, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpyDtoDAsync_v2_ptsz,
               (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, srcDevice, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_DTOD, hStream, true);
}
OBS_CUDRV_HOOK(cuMemcpy2D_v2,
               (const obs_CUDA_MEMCPY2D *pCopy),
               (pCopy))
{
    return copy2d_record(pCopy, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpy2D_v2_ptds,
               (const obs_CUDA_MEMCPY2D *pCopy),
               (pCopy))
{
    return copy2d_record(pCopy, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpy2DAsync_v2,
               (const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream),
               (pCopy, hStream))
{
    return copy2d_record(pCopy, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpy2DAsync_v2_ptsz,
               (const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream),
               (pCopy, hStream))
{
    return copy2d_record(pCopy, hStream, true);
}
OBS_CUDRV_HOOK(cuMemcpy3D_v2,
               (const obs_CUDA_MEMCPY3D *pCopy),
               (pCopy))
{
    return copy3d_record(pCopy, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpy3D_v2_ptds,
               (const obs_CUDA_MEMCPY3D *pCopy),
               (pCopy))
{
    return copy3d_record(pCopy, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpy3DAsync_v2,
               (const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream),
               (pCopy, hStream))
{
    return copy3d_record(pCopy, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpy3DAsync_v2_ptsz,
               (const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream),
               (pCopy, hStream))
{
    return copy3d_record(pCopy, hStream, true);
}
/* Peer copies name contexts, not devices: the record keeps the thread's
 * current device. */
OBS_CUDRV_HOOK(cuMemcpyPeer,
               (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,
                obs_CUcontext srcContext, size_t ByteCount),
               (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_PEER, NULL, false);
}
OBS_CUDRV_HOOK(cuMemcpyPeer_ptds,
               (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,
                obs_CUcontext srcContext, size_t ByteCount),
               (dstDevice, dstContext, srcDevice, srcContext, ByteCount))
{
    return bytes_record(ByteCount, OBS_DIR_PEER, NULL, true);
}
OBS_CUDRV_HOOK(cuMemcpyPeerAsync,
               (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,
                obs_CUcontext srcContext, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_PEER, hStream, false);
}
OBS_CUDRV_HOOK(cuMemcpyPeerAsync_ptsz,
               (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,
                obs_CUcontext srcContext, size_t ByteCount, obs_CUstream hStream),
               (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))
{
    return bytes_record(ByteCount, OBS_DIR_PEER, hStream, true);
}

/* memsets: N elements of 1, 2 or 4 bytes; 2D: Width elements x Height rows */
OBS_CUDRV_HOOK(cuMemsetD8_v2,
               (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N),
               (dstDevice, uc, N))
{
    return bytes_record(N, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD8_v2_ptds,
               (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N),
               (dstDevice, uc, N))
{
    return bytes_record(N, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD16_v2,
               (obs_CUdeviceptr dstDevice, unsigned short us, size_t N),
               (dstDevice, us, N))
{
    return bytes_record((uint64_t)N * 2, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD16_v2_ptds,
               (obs_CUdeviceptr dstDevice, unsigned short us, size_t N),
               (dstDevice, us, N))
{
    return bytes_record((uint64_t)N * 2, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD32_v2,
               (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N),
               (dstDevice, ui, N))
{
    return bytes_record((uint64_t)N * 4, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD32_v2_ptds,
               (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N),
               (dstDevice, ui, N))
{
    return bytes_record((uint64_t)N * 4, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD8Async,
               (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N, obs_CUstream hStream),
               (dstDevice, uc, N, hStream))
{
    return bytes_record(N, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD8Async_ptsz,
               (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N, obs_CUstream hStream),
               (dstDevice, uc, N, hStream))
{
    return bytes_record(N, OBS_DIR_NONE, hStream, true);
}
OBS_CUDRV_HOOK(cuMemsetD16Async,
               (obs_CUdeviceptr dstDevice, unsigned short us, size_t N, obs_CUstream hStream),
               (dstDevice, us, N, hStream))
{
    return bytes_record((uint64_t)N * 2, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD16Async_ptsz,
               (obs_CUdeviceptr dstDevice, unsigned short us, size_t N, obs_CUstream hStream),
               (dstDevice, us, N, hStream))
{
    return bytes_record((uint64_t)N * 2, OBS_DIR_NONE, hStream, true);
}
OBS_CUDRV_HOOK(cuMemsetD32Async,
               (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N, obs_CUstream hStream),
               (dstDevice, ui, N, hStream))
{
    return bytes_record((uint64_t)N * 4, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD32Async_ptsz,
               (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N, obs_CUstream hStream),
               (dstDevice, ui, N, hStream))
{
    return bytes_record((uint64_t)N * 4, OBS_DIR_NONE, hStream, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D8_v2,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height),
               (dstDevice, dstPitch, uc, Width, Height))
{
    return bytes_record((uint64_t)Width * Height, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D8_v2_ptds,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height),
               (dstDevice, dstPitch, uc, Width, Height))
{
    return bytes_record((uint64_t)Width * Height, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D16_v2,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height),
               (dstDevice, dstPitch, us, Width, Height))
{
    return bytes_record((uint64_t)Width * Height * 2, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D16_v2_ptds,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height),
               (dstDevice, dstPitch, us, Width, Height))
{
    return bytes_record((uint64_t)Width * Height * 2, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D32_v2,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height),
               (dstDevice, dstPitch, ui, Width, Height))
{
    return bytes_record((uint64_t)Width * Height * 4, OBS_DIR_NONE, NULL, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D32_v2_ptds,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height),
               (dstDevice, dstPitch, ui, Width, Height))
{
    return bytes_record((uint64_t)Width * Height * 4, OBS_DIR_NONE, NULL, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D8Async,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, uc, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D8Async_ptsz,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, uc, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height, OBS_DIR_NONE, hStream, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D16Async,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, us, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height * 2, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D16Async_ptsz,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, us, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height * 2, OBS_DIR_NONE, hStream, true);
}
OBS_CUDRV_HOOK(cuMemsetD2D32Async,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, ui, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height * 4, OBS_DIR_NONE, hStream, false);
}
OBS_CUDRV_HOOK(cuMemsetD2D32Async_ptsz,
               (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height,
                obs_CUstream hStream),
               (dstDevice, dstPitch, ui, Width, Height, hStream))
{
    return bytes_record((uint64_t)Width * Height * 4, OBS_DIR_NONE, hStream, true);
}

/* synchronisation */
OBS_CUDRV_HOOK(cuCtxSynchronize,
               (void),
               ())
{
    return obs_stream_record(0);
}
OBS_CUDRV_HOOK(cuCtxSynchronize_v2,
               (obs_CUcontext ctx),
               (ctx))
{
    return obs_stream_record(0);
}
OBS_CUDRV_HOOK(cuStreamSynchronize,
               (obs_CUstream hStream),
               (hStream))
{
    return obs_stream_record(stream_id(hStream, false));
}
OBS_CUDRV_HOOK(cuStreamSynchronize_ptsz,
               (obs_CUstream hStream),
               (hStream))
{
    return obs_stream_record(stream_id(hStream, true));
}
OBS_CUDRV_HOOK(cuEventSynchronize,
               (obs_CUevent hEvent),
               (hEvent))
{
    return obs_stream_record(0);
}
OBS_CUDRV_HOOK(cuStreamWaitEvent,
               (obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags),
               (hStream, hEvent, Flags))
{
    return obs_stream_record(stream_id(hStream, false));
}
OBS_CUDRV_HOOK(cuStreamWaitEvent_ptsz,
               (obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags),
               (hStream, hEvent, Flags))
{
    return obs_stream_record(stream_id(hStream, true));
}

/* ---- a missing entry point ------------------------------------------------- */

/* An entry point the loaded driver lacks is never called: warn once and
 * return what the driver would for a call it cannot serve. */
obs_CUresult obs_cudrv_missing(unsigned index)
{
    struct obs_guard guard;
    bool driver_loaded;
    obs_guard_enter(&guard);
    driver_loaded = obs_real_table_has_any(&obs_real_cudrv);
    obs_real_warn_missing(&obs_real_cudrv, index,
                          driver_loaded ? "CUDA_ERROR_NOT_SUPPORTED (801) is returned"
                                        : "CUDA_ERROR_NOT_INITIALIZED (3) is returned");
    obs_guard_leave(&guard);
    return driver_loaded ? OBS_CUDA_ERROR_NOT_SUPPORTED : OBS_CUDA_ERROR_NOT_INITIALIZED;
}

/* ---- the proc wrappers: calls through cuGetProcAddress's own pointers ----- */

/* A driver may hand out through cuGetProcAddress an internal entry point,
 * not its exported symbol. Per variant, the first such pointer is kept here
 * and the variant's proc wrapper, obs_proc_<name> (not exported: the
 * version script exports only cu*), calls it; the exported wrapper keeps
 * calling the dlsym-resolved symbol. */
static _Atomic(void *) proc_fns[OBS_REAL_CUDRV_COUNT];
static atomic_int proc_other_warned[OBS_REAL_CUDRV_COUNT];

bool obs_cudrv_proc_claim(unsigned index, void *fn)
{
    void *expected = NULL;
    if (index >= OBS_REAL_CUDRV_COUNT || fn == NULL)
        return false;
    if (atomic_compare_exchange_strong_explicit(&proc_fns[index], &expected, fn, memory_order_acq_rel,
                                                memory_order_acquire) ||
        expected == fn)
        return true;
    obs_log_warn_once(&proc_other_warned[index],
                      "%s: cuGetProcAddress handed out a second entry point for it; calls through that one "
                      "are not recorded",
                      obs_real_cudrv.names[index]);
    return false;
}

void *obs_cudrv_proc_fn(unsigned index)
{
    return index < OBS_REAL_CUDRV_COUNT ? atomic_load_explicit(&proc_fns[index], memory_order_acquire) : NULL;
}

/* ---- graph instantiations: learn what each exec replays -------------------- */

/* The kernel of a kernel node, as a name id (0: could not be named): the
 * CUDA 12.0 form of the query when the driver has it (a node launched by a
 * CUkernel may have func NULL and the kernel in kern), else the CUDA 10.0
 * one. */
static uint32_t kernel_node_name(obs_CUgraphNode node)
{
    obs_fn_cuGraphKernelNodeGetParams_v2 get_v2 = OBS_CUDRV_REAL(cuGraphKernelNodeGetParams_v2);
    obs_fn_cuGraphKernelNodeGetParams get_v1 = OBS_CUDRV_REAL(cuGraphKernelNodeGetParams);

    if (get_v2 != NULL) {
        obs_CUDA_KERNEL_NODE_PARAMS_v2 p = {0};
        if (get_v2(node, &p) != OBS_CUDA_SUCCESS)
            return 0;
        return p.func != NULL ? function_name(p.func) : kernel_handle_name(p.kern);
    }
    if (get_v1 != NULL) {
        obs_CUDA_KERNEL_NODE_PARAMS_v1 p = {0};
        if (get_v1(node, &p) == OBS_CUDA_SUCCESS)
            return function_name(p.func);
    }
    return 0;
}

/* Walk graph once with the driver's read-only queries (the real functions:
 * nothing is recorded) and publish exec. The driver has no sticky error:
 * a failed query changes nothing the app sees; the walk is then marked
 * incomplete. */
static void walk_graph(obs_CUgraphExec exec, obs_CUgraph graph)
{
    obs_fn_cuGraphGetNodes get_nodes = OBS_CUDRV_REAL(cuGraphGetNodes);
    obs_fn_cuGraphNodeGetType get_type = OBS_CUDRV_REAL(cuGraphNodeGetType);
    obs_CUgraphNode *nodes = NULL;
    struct obs_graph_walk w;
    size_t count = 0, i;

    if (get_nodes == NULL || get_nodes(graph, NULL, &count) != OBS_CUDA_SUCCESS)
        return;
    obs_graph_walk_init(&w, count);
    nodes = count > 0 ? malloc(count * sizeof *nodes) : NULL;
    if (count > 0 && (nodes == NULL || get_type == NULL || get_nodes(graph, nodes, &count) != OBS_CUDA_SUCCESS)) {
        w.incomplete = true;
    } else {
        for (i = 0; i < count; i++) {
            obs_CUgraphNodeType type;
            if (get_type(nodes[i], &type) != OBS_CUDA_SUCCESS)
                w.incomplete = true;
            else if (type == OBS_CU_GRAPH_NODE_TYPE_KERNEL)
                obs_graph_walk_add_kernel(&w, kernel_node_name(nodes[i]));
        }
    }
    free(nodes);
    obs_phase_graph_layers(&w);
    obs_graph_exec_instantiated(exec, &w);
}

/* The real instantiation runs under the guard: a driver that instantiated
 * through another hooked entry point would not be walked twice (and a
 * runtime instantiation reaching this hook, already walked by the runtime
 * hook, is not walked here). Return value and errno: the real call's. */
#define OBS_CUDRV_INSTANTIATE_WRAPPER(linkage, wrapper, name, params, args, real_fn) \
    linkage obs_CUresult wrapper params                                           \
    {                                                                             \
        obs_fn_##name real = real_fn;                                             \
        obs_CUresult status;                                                      \
        struct obs_guard guard;                                                   \
                                                                                  \
        if (real == NULL)                                                         \
            return obs_cudrv_missing(OBS_REAL_CUDRV_##name);                      \
        if (!obs_graph_walk_wanted())                                             \
            return real args;                                                     \
        obs_guard_enter(&guard);                                                  \
        status = real args;                                                       \
        obs_guard_keep_errno(&guard);                                             \
        obs_guard_leave(&guard);                                                  \
        if (status == OBS_CUDA_SUCCESS && phGraphExec != NULL)                    \
            walk_graph(*phGraphExec, hGraph);                                     \
        obs_guard_restore_errno(&guard);                                          \
        return status;                                                            \
    }

#define OBS_CUDRV_INSTANTIATE_EXPORTED(name, params, args) \
    OBS_CUDRV_INSTANTIATE_WRAPPER(OBS_EXPORT, name, name, params, args, OBS_CUDRV_REAL(name))
#define OBS_CUDRV_INSTANTIATE_PROC(name, params, args)                                 \
    OBS_CUDRV_INSTANTIATE_WRAPPER(static, obs_proc_##name, name, params, args,         \
                                  (obs_fn_##name)obs_cudrv_proc_fn(OBS_REAL_CUDRV_##name))

OBS_CUDRV_INSTANTIATE_API(OBS_CUDRV_INSTANTIATE_EXPORTED)
OBS_CUDRV_INSTANTIATE_API(OBS_CUDRV_INSTANTIATE_PROC)

#undef OBS_CUDRV_INSTANTIATE_EXPORTED
#undef OBS_CUDRV_INSTANTIATE_PROC

/* ---- the wrappers by real index, for hooks_dlsym.c ------------------------- */

static void *const wrappers[OBS_REAL_CUDRV_COUNT] = {
#define OBS_CUDRV_WRAPPER_ROW(name, ret, params, args) [OBS_REAL_CUDRV_##name] = (void *)name,
    OBS_CUDA_DRIVER_API(OBS_CUDRV_WRAPPER_ROW)
#undef OBS_CUDRV_WRAPPER_ROW
#define OBS_CUDRV_INSTANTIATE_ROW(name, params, args) [OBS_REAL_CUDRV_##name] = (void *)name,
    OBS_CUDRV_INSTANTIATE_API(OBS_CUDRV_INSTANTIATE_ROW)
#undef OBS_CUDRV_INSTANTIATE_ROW
};

static void *const proc_wrappers[OBS_REAL_CUDRV_COUNT] = {
#define OBS_CUDRV_PROC_WRAPPER_ROW(name, ret, params, args) [OBS_REAL_CUDRV_##name] = (void *)obs_proc_##name,
    OBS_CUDA_DRIVER_API(OBS_CUDRV_PROC_WRAPPER_ROW)
#undef OBS_CUDRV_PROC_WRAPPER_ROW
#define OBS_CUDRV_INSTANTIATE_PROC_ROW(name, params, args) [OBS_REAL_CUDRV_##name] = (void *)obs_proc_##name,
    OBS_CUDRV_INSTANTIATE_API(OBS_CUDRV_INSTANTIATE_PROC_ROW)
#undef OBS_CUDRV_INSTANTIATE_PROC_ROW
};

void *obs_driver_wrapper_of(unsigned index)
{
    return index < OBS_REAL_CUDRV_COUNT ? wrappers[index] : NULL;
}

void *obs_driver_proc_wrapper_of(unsigned index)
{
    return index < OBS_REAL_CUDRV_COUNT ? proc_wrappers[index] : NULL;
}
