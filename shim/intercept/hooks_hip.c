/* The HIP runtime hooks, twin of hooks_cudart.c: every entry of OBS_HIP_API
 * (shim/abi/hip_abi.h) is exported under its real symbol, records one CALL
 * record and returns what the real function returned, with errno as the
 * real function left it.
 *
 * Same two layers: OBS_HIP_WRAPPER generates every exported wrapper from
 * the X-macro list; what is specific to each entry point lives in its
 * describe_<name>() helper, evaluated before the real call.
 *
 * hipExtModuleLaunchKernel is a C++ symbol in HIP 5.2 (hip_ext.h declares it
 * outside extern "C"): the wrapper is defined under that mangled name
 * (OBS_HIP_SYMBOL_hipExtModuleLaunchKernel) and the real one is looked up
 * under it too (real_symbols.c).
 *
 * Support hooks (__hipRegisterFunction, hipModuleGetFunction,
 * hipGraphInstantiate, hipSetDevice) record nothing; they learn names, node
 * counts and the current device. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Prototypes are declared here, with OBS_EXPORT, not by the ABI header. */
#define OBS_HIP_ABI_NO_PROTOTYPES
#include "abi/hip_abi.h"
#include "trace/trace.h"
#include "record/record.h"
#include "hooks_runtime.h"
#include "wrapper.h"
#include "gputime/gpu_time.h"
#include "common/common.h"
#include "phases/phase_engine.h"
#include "runtimes/real_symbols.h"

/* The C++ symbol first: an asm label must be on the first declaration. */
OBS_EXPORT obs_hipError_t hipExtModuleLaunchKernel(obs_hipFunction_t f, uint32_t globalWorkSizeX,
                                                   uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                                   uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                                   uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                                   obs_hipStream_t hStream, void **kernelParams, void **extra,
                                                   obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent,
                                                   uint32_t flags)
    __asm__(OBS_HIP_SYMBOL_hipExtModuleLaunchKernel);
#define OBS_HIP_HOOK_PROTOTYPE(name, ret, params, args) OBS_EXPORT ret name params;
OBS_HIP_API(OBS_HIP_HOOK_PROTOTYPE)
#undef OBS_HIP_HOOK_PROTOTYPE
OBS_EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                      const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                                      obs_hipDim3 *blockDim, obs_hipDim3 *gridDim, int *wSize);
OBS_EXPORT obs_hipError_t hipModuleGetFunction(obs_hipFunction_t *function, obs_hipModule_t module,
                                               const char *kname);
OBS_EXPORT obs_hipError_t hipGraphInstantiate(obs_hipGraphExec_t *pGraphExec, obs_hipGraph_t graph,
                                              obs_hipGraphNode_t *pErrorNode, char *pLogBuffer,
                                              size_t bufferSize);
OBS_EXPORT obs_hipError_t hipSetDevice(int deviceId);

/* ---- kernel names ------------------------------------------------------------ */

/* A pointer no registration named, seen for the first time: ask the runtime
 * (hipKernelNameRefByPtr), else the generic fallback (dladdr, else the
 * address). Cached either way, so each pointer costs this once. The null
 * stream: the launch's stream may be invalid, and the name does not
 * depend on it. */
static __attribute__((noinline, cold)) uint32_t hip_name_unseen_host_fun(const void *host_fun)
{
    obs_fn_hipKernelNameRefByPtr name_of = OBS_HIP_REAL(hipKernelNameRefByPtr);
    const char *name = name_of != NULL ? name_of(host_fun, NULL) : NULL;
    uint64_t id;

    if (name != NULL && name[0] != '\0') {
        obs_kernel_names_register(host_fun, name);
        if (obs_ptrmap_get(&obs_names_by_host_fun, (uintptr_t)host_fun, &id))
            return (uint32_t)id;
    }
    return obs_kernel_name_fallback(host_fun, false);
}

/* The same for a hipFunction_t that hipModuleGetFunction did not name
 * (got before the shim was loaded, or from a library we do not see). */
static __attribute__((noinline, cold)) uint32_t hip_name_unseen_function(obs_hipFunction_t f)
{
    obs_fn_hipKernelNameRef name_of = OBS_HIP_REAL(hipKernelNameRef);
    const char *name = name_of != NULL ? name_of(f) : NULL;
    uint64_t id;

    if (name != NULL && name[0] != '\0') {
        obs_kernel_names_register_handle(f, name);
        if (obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)f, &id))
            return (uint32_t)id;
    }
    return obs_kernel_name_fallback(f, true);
}

/* A launch by host stub (hipLaunchKernel and friends). */
static inline uint32_t hip_name_of_host_fun(const void *host_fun)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_names_by_host_fun, (uintptr_t)host_fun, &id)))
        return (uint32_t)id;
    return host_fun != NULL ? hip_name_unseen_host_fun(host_fun) : 0;
}

/* A launch by module function (hipModuleLaunchKernel, hipExtModuleLaunchKernel). */
static inline uint32_t hip_name_of_function(obs_hipFunction_t f)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)f, &id)))
        return (uint32_t)id;
    return f != NULL ? hip_name_unseen_function(f) : 0;
}

/* ---- pieces of a description ------------------------------------------------- */

/* The stream id of a call. The _spt variants mean the per-thread stream by
 * handle 0; hipStreamPerThread (0x2) is that stream by any entry point. */
static inline uint32_t stream_id(obs_hipStream_t stream, bool per_thread)
{
    if (stream == NULL && per_thread)
        stream = OBS_HIP_STREAM_PER_THREAD;
    return obs_stream_id((uintptr_t)stream, (uint16_t)obs_tls.device);
}

static inline struct obs_rec_call launch_record(uint32_t name, obs_hipDim3 grid, obs_hipDim3 block, size_t shmem,
                                                uint32_t stream)
{
    return obs_launch_record(name, grid.x, grid.y, grid.z, block.x, block.y, block.z, shmem, stream);
}

static inline uint64_t extent_bytes(obs_hipExtent e)
{
    return (uint64_t)e.width * e.height * e.depth;
}

static inline struct obs_rec_call copy3d_record(const obs_hipMemcpy3DParms *p, obs_hipStream_t stream,
                                                bool per_thread)
{
    if (p == NULL)
        return obs_bytes_record(0, OBS_DIR_NONE, stream_id(stream, per_thread));
    return obs_bytes_record(extent_bytes(p->extent), obs_copy_direction(p->kind), stream_id(stream, per_thread));
}

static inline struct obs_rec_call peer_record(int dst_device, size_t count, obs_hipStream_t stream)
{
    struct obs_rec_call r = obs_bytes_record(count, OBS_DIR_PEER, stream_id(stream, false));
    r.device = (uint16_t)dst_device;
    return r;
}

/* Blocks in one dimension of a launch given in work items (hipExt*
 * global sizes): rounded up, since HIP runs a partial last work-group.
 * A zero block size (an invalid launch) gives 0. */
static inline uint32_t blocks_of(uint32_t work_items, uint32_t block)
{
    return block == 0 ? 0 : (uint32_t)(((uint64_t)work_items + block - 1) / block);
}

static inline struct obs_rec_call module_launch_record(obs_hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                                       uint32_t bx, uint32_t by, uint32_t bz, size_t shmem,
                                                       obs_hipStream_t stream)
{
    obs_hipDim3 grid = {gx, gy, gz}, block = {bx, by, bz};
    return launch_record(hip_name_of_function(f), grid, block, shmem, stream_id(stream, false));
}

/* ---- describe_<api>: one per entry point ----------------------------------------- */

/* launches */
static inline struct obs_rec_call describe_hipLaunchKernel(const void *function_address, obs_hipDim3 numBlocks,
                                                           obs_hipDim3 dimBlocks, void **args, size_t sharedMemBytes,
                                                           obs_hipStream_t stream)
{
    return launch_record(hip_name_of_host_fun(function_address), numBlocks, dimBlocks, sharedMemBytes,
                         stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipLaunchKernel_spt(const void *function_address,
                                                               obs_hipDim3 numBlocks, obs_hipDim3 dimBlocks,
                                                               void **args, size_t sharedMemBytes,
                                                               obs_hipStream_t stream)
{
    return launch_record(hip_name_of_host_fun(function_address), numBlocks, dimBlocks, sharedMemBytes,
                         stream_id(stream, true));
}
static inline struct obs_rec_call describe_hipModuleLaunchKernel(obs_hipFunction_t f, unsigned int gridDimX,
                                                                 unsigned int gridDimY, unsigned int gridDimZ,
                                                                 unsigned int blockDimX, unsigned int blockDimY,
                                                                 unsigned int blockDimZ, unsigned int sharedMemBytes,
                                                                 obs_hipStream_t stream, void **kernelParams,
                                                                 void **extra)
{
    return module_launch_record(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                stream);
}
static inline struct obs_rec_call describe_hipExtLaunchKernel(const void *function_address, obs_hipDim3 numBlocks,
                                                              obs_hipDim3 dimBlocks, void **args,
                                                              size_t sharedMemBytes, obs_hipStream_t stream,
                                                              obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent,
                                                              int flags)
{
    return launch_record(hip_name_of_host_fun(function_address), numBlocks, dimBlocks, sharedMemBytes,
                         stream_id(stream, false));
}
/* Global sizes are work items: the record holds blocks, as every other launch's. */
static inline struct obs_rec_call describe_hipExtModuleLaunchKernel(
    obs_hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
    uint32_t localWorkSizeX, uint32_t localWorkSizeY, uint32_t localWorkSizeZ, size_t sharedMemBytes,
    obs_hipStream_t hStream, void **kernelParams, void **extra, obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent,
    uint32_t flags)
{
    return module_launch_record(f, blocks_of(globalWorkSizeX, localWorkSizeX),
                                blocks_of(globalWorkSizeY, localWorkSizeY),
                                blocks_of(globalWorkSizeZ, localWorkSizeZ), localWorkSizeX, localWorkSizeY,
                                localWorkSizeZ, sharedMemBytes, hStream);
}
static inline struct obs_rec_call describe_hipLaunchCooperativeKernel(const void *f, obs_hipDim3 gridDim,
                                                                      obs_hipDim3 blockDimX, void **kernelParams,
                                                                      unsigned int sharedMemBytes,
                                                                      obs_hipStream_t stream)
{
    return launch_record(hip_name_of_host_fun(f), gridDim, blockDimX, sharedMemBytes, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipLaunchCooperativeKernel_spt(const void *f, obs_hipDim3 gridDim,
                                                                          obs_hipDim3 blockDim, void **kernelParams,
                                                                          uint32_t sharedMemBytes,
                                                                          obs_hipStream_t hStream)
{
    return launch_record(hip_name_of_host_fun(f), gridDim, blockDim, sharedMemBytes, stream_id(hStream, true));
}
/* Graph launches: node count replayed, exec id, most frequent kernel (graph_execs.h). */
static inline struct obs_rec_call describe_hipGraphLaunch(obs_hipGraphExec_t graphExec, obs_hipStream_t stream)
{
    return obs_graph_launch_record(graphExec, stream_id(stream, false));
}

/* copies: synchronous ones run on the null stream (id 0), or on the
 * per-thread stream for the _spt variants; HtoD/DtoH/DtoD name their
 * direction. */
static inline struct obs_rec_call describe_hipMemcpy(void *dst, const void *src, size_t sizeBytes,
                                                     obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), 0);
}
static inline struct obs_rec_call describe_hipMemcpy_spt(void *dst, const void *src, size_t sizeBytes,
                                                         obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes,
                                                          obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes,
                                                              obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(stream, true));
}
static inline struct obs_rec_call describe_hipMemcpyHtoD(obs_hipDeviceptr_t dst, void *src, size_t sizeBytes)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_HTOD, 0);
}
static inline struct obs_rec_call describe_hipMemcpyDtoH(void *dst, obs_hipDeviceptr_t src, size_t sizeBytes)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_DTOH, 0);
}
static inline struct obs_rec_call describe_hipMemcpyDtoD(obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src,
                                                         size_t sizeBytes)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_DTOD, 0);
}
static inline struct obs_rec_call describe_hipMemcpyHtoDAsync(obs_hipDeviceptr_t dst, void *src, size_t sizeBytes,
                                                              obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_HTOD, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpyDtoHAsync(void *dst, obs_hipDeviceptr_t src, size_t sizeBytes,
                                                              obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_DTOH, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpyDtoDAsync(obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src,
                                                              size_t sizeBytes, obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_DTOD, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                       size_t width, size_t height, obs_hipMemcpyKind kind)
{
    return obs_bytes_record((uint64_t)width * height, obs_copy_direction(kind), 0);
}
static inline struct obs_rec_call describe_hipMemcpy2D_spt(void *dst, size_t dpitch, const void *src,
                                                           size_t spitch, size_t width, size_t height,
                                                           obs_hipMemcpyKind kind)
{
    return obs_bytes_record((uint64_t)width * height, obs_copy_direction(kind), stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                                                            size_t spitch, size_t width, size_t height,
                                                            obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    return obs_bytes_record((uint64_t)width * height, obs_copy_direction(kind), stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpy3D(const obs_hipMemcpy3DParms *p)
{
    return copy3d_record(p, NULL, false);
}
static inline struct obs_rec_call describe_hipMemcpy3D_spt(const obs_hipMemcpy3DParms *p)
{
    return copy3d_record(p, NULL, true);
}
static inline struct obs_rec_call describe_hipMemcpy3DAsync(const obs_hipMemcpy3DParms *p, obs_hipStream_t stream)
{
    return copy3d_record(p, stream, false);
}
static inline struct obs_rec_call describe_hipMemcpyPeer(void *dst, int dstDeviceId, const void *src,
                                                         int srcDeviceId, size_t sizeBytes)
{
    return peer_record(dstDeviceId, sizeBytes, NULL);
}
static inline struct obs_rec_call describe_hipMemcpyPeerAsync(void *dst, int dstDeviceId, const void *src,
                                                              int srcDevice, size_t sizeBytes,
                                                              obs_hipStream_t stream)
{
    return peer_record(dstDeviceId, sizeBytes, stream);
}
static inline struct obs_rec_call describe_hipMemcpyToSymbol(const void *symbol, const void *src, size_t sizeBytes,
                                                             size_t offset, obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), 0);
}
static inline struct obs_rec_call describe_hipMemcpyToSymbol_spt(const void *symbol, const void *src,
                                                                 size_t sizeBytes, size_t offset,
                                                                 obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemcpyFromSymbol(void *dst, const void *symbol, size_t sizeBytes,
                                                               size_t offset, obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), 0);
}
static inline struct obs_rec_call describe_hipMemcpyFromSymbol_spt(void *dst, const void *symbol, size_t sizeBytes,
                                                                   size_t offset, obs_hipMemcpyKind kind)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemcpyToSymbolAsync(const void *symbol, const void *src,
                                                                  size_t sizeBytes, size_t offset,
                                                                  obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemcpyFromSymbolAsync(void *dst, const void *symbol,
                                                                    size_t sizeBytes, size_t offset,
                                                                    obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, obs_copy_direction(kind), stream_id(stream, false));
}

/* memsets: bytes set (D16 and D32 count 2- and 4-byte elements) */
static inline struct obs_rec_call describe_hipMemset(void *dst, int value, size_t sizeBytes)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemset_spt(void *dst, int value, size_t sizeBytes)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_NONE, stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemsetAsync(void *dst, int value, size_t sizeBytes,
                                                          obs_hipStream_t stream)
{
    return obs_bytes_record(sizeBytes, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemsetD8(obs_hipDeviceptr_t dest, unsigned char value, size_t count)
{
    return obs_bytes_record(count, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemsetD8Async(obs_hipDeviceptr_t dest, unsigned char value,
                                                            size_t count, obs_hipStream_t stream)
{
    return obs_bytes_record(count, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemsetD16(obs_hipDeviceptr_t dest, unsigned short value, size_t count)
{
    return obs_bytes_record((uint64_t)count * 2, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemsetD16Async(obs_hipDeviceptr_t dest, unsigned short value,
                                                             size_t count, obs_hipStream_t stream)
{
    return obs_bytes_record((uint64_t)count * 2, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemsetD32(obs_hipDeviceptr_t dest, int value, size_t count)
{
    return obs_bytes_record((uint64_t)count * 4, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemsetD32Async(obs_hipDeviceptr_t dst, int value, size_t count,
                                                             obs_hipStream_t stream)
{
    return obs_bytes_record((uint64_t)count * 4, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemset2D(void *dst, size_t pitch, int value, size_t width,
                                                       size_t height)
{
    return obs_bytes_record((uint64_t)width * height, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemset2D_spt(void *dst, size_t pitch, int value, size_t width,
                                                           size_t height)
{
    return obs_bytes_record((uint64_t)width * height, OBS_DIR_NONE, stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemset2DAsync(void *dst, size_t pitch, int value, size_t width,
                                                            size_t height, obs_hipStream_t stream)
{
    return obs_bytes_record((uint64_t)width * height, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipMemset3D(obs_hipPitchedPtr pitchedDevPtr, int value,
                                                       obs_hipExtent extent)
{
    return obs_bytes_record(extent_bytes(extent), OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMemset3D_spt(obs_hipPitchedPtr pitchedDevPtr, int value,
                                                           obs_hipExtent extent)
{
    return obs_bytes_record(extent_bytes(extent), OBS_DIR_NONE, stream_id(NULL, true));
}
static inline struct obs_rec_call describe_hipMemset3DAsync(obs_hipPitchedPtr pitchedDevPtr, int value,
                                                            obs_hipExtent extent, obs_hipStream_t stream)
{
    return obs_bytes_record(extent_bytes(extent), OBS_DIR_NONE, stream_id(stream, false));
}

/* synchronisation */
static inline struct obs_rec_call describe_hipDeviceSynchronize(void)
{
    return obs_stream_record(0);
}
static inline struct obs_rec_call describe_hipStreamSynchronize(obs_hipStream_t stream)
{
    return obs_stream_record(stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipStreamSynchronize_spt(obs_hipStream_t stream)
{
    return obs_stream_record(stream_id(stream, true));
}
static inline struct obs_rec_call describe_hipEventSynchronize(obs_hipEvent_t event)
{
    return obs_stream_record(0);
}
static inline struct obs_rec_call describe_hipStreamWaitEvent(obs_hipStream_t stream, obs_hipEvent_t event,
                                                              unsigned int flags)
{
    return obs_stream_record(stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipStreamWaitEvent_spt(obs_hipStream_t stream, obs_hipEvent_t event,
                                                                  unsigned int flags)
{
    return obs_stream_record(stream_id(stream, true));
}

/* allocation: bytes asked for (0 for frees: the size is not passed) */
static inline struct obs_rec_call describe_hipMalloc(void **ptr, size_t size)
{
    return obs_bytes_record(size, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipFree(void *ptr)
{
    return obs_bytes_record(0, OBS_DIR_NONE, 0);
}
static inline struct obs_rec_call describe_hipMallocAsync(void **dev_ptr, size_t size, obs_hipStream_t stream)
{
    return obs_bytes_record(size, OBS_DIR_NONE, stream_id(stream, false));
}
static inline struct obs_rec_call describe_hipFreeAsync(void *dev_ptr, obs_hipStream_t stream)
{
    return obs_bytes_record(0, OBS_DIR_NONE, stream_id(stream, false));
}

/* ---- the exported wrappers ------------------------------------------------------- */

/* A real function the loaded runtime lacks is never called: warn once and
 * return what the runtime would for a call it cannot serve. */
static obs_hipError_t hip_missing(unsigned index)
{
    int saved_errno = errno;
    bool runtime_loaded = obs_real_table_has_any(&obs_real_hip);
    obs_real_warn_missing(&obs_real_hip, index,
                          runtime_loaded ? "hipErrorNotSupported (801) is returned"
                                         : "hipErrorNotInitialized (3) is returned");
    errno = saved_errno;
    return runtime_loaded ? obs_hipErrorNotSupported : obs_hipErrorNotInitialized;
}

/* The exported wrappers: shim/intercept/wrapper.h has the shape and its reasons. */
#define OBS_HIP_WRAPPER(name, ret, params, args) \
    OBS_DEFINE_RECORDED_WRAPPER(name, ret, params, args, OBS_HIP_REAL(name), \
                                hip_missing(OBS_REAL_HIP_##name), &obs_gpu_hip)

OBS_HIP_API(OBS_HIP_WRAPPER)

#undef OBS_HIP_WRAPPER

/* ---- support hooks: names, graph node counts, the current device ------------------- */

/* Learning is skipped only when the shim is off for good (OBS_ENABLE=0):
 * registrations may come before our constructor, from other libraries'. */
static inline bool learning(void)
{
    int state = atomic_load_explicit(&obs_state, memory_order_acquire);
    return state == OBS_STATE_UNINIT || state == OBS_STATE_RECORDING;
}

/* Called by hipcc's generated constructors, one per kernel: host stub ->
 * mangled device name. */
OBS_EXPORT void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                                      const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                                      obs_hipDim3 *blockDim, obs_hipDim3 *gridDim, int *wSize)
{
    obs_fn___hipRegisterFunction real = OBS_HIP_REAL(__hipRegisterFunction);
    int saved_errno;

    if (real == NULL) {
        obs_real_warn_missing(&obs_real_hip, OBS_REAL_HIP___hipRegisterFunction, "the kernel is not registered");
        return;
    }
    real(modules, hostFunction, deviceFunction, deviceName, threadLimit, tid, bid, blockDim, gridDim, wSize);
    saved_errno = errno;
    if (learning())
        obs_kernel_names_register(hostFunction, deviceName != NULL ? deviceName : deviceFunction);
    errno = saved_errno;
}

/* hipFunction_t -> the name asked for, for module launches. */
OBS_EXPORT obs_hipError_t hipModuleGetFunction(obs_hipFunction_t *function, obs_hipModule_t module,
                                               const char *kname)
{
    obs_fn_hipModuleGetFunction real = OBS_HIP_REAL(hipModuleGetFunction);
    obs_hipError_t status;
    int saved_errno;

    if (real == NULL)
        return hip_missing(OBS_REAL_HIP_hipModuleGetFunction);
    status = real(function, module, kname);
    saved_errno = errno;
    if (status == obs_hipSuccess && function != NULL && learning())
        obs_kernel_names_register_handle(*function, kname);
    errno = saved_errno;
    return status;
}

/* hipGraphNodeType's value for kernel nodes in the loaded runtime: 1 up to
 * HIP 5.2, 0 from HIP 5.3 on (renumbered as CUDA). An unknown version is
 * taken as the newer numbering: a 5.2 kernel node (1) then reads as a
 * memcpy and is only not named, whereas the other way round a memcpy node
 * would be handed to hipGraphKernelNodeGetParams, which HIP does not check. */
static int hip_kernel_node_type(void)
{
    static _Atomic int cached = -1;
    obs_fn_hipRuntimeGetVersion get_version;
    int type = atomic_load_explicit(&cached, memory_order_relaxed), version = 0;
    if (type >= 0)
        return type;
    get_version = OBS_HIP_REAL(hipRuntimeGetVersion);
    type = OBS_HIP_GRAPH_NODE_KERNEL_SINCE_5_3;
    if (get_version != NULL && get_version(&version) == obs_hipSuccess && version > 0 && version < 50300000)
        type = obs_hipGraphNodeTypeKernel;
    atomic_store_explicit(&cached, type, memory_order_relaxed);
    return type;
}

/* The kernel of a kernel node, as a name id: its func is the host stub (or
 * the hipFunction_t it was launched by), both known to kernel_names. */
static void walk_node(obs_hipGraphNode_t node, int kernel_type, struct obs_graph_walk *w, bool *failed)
{
    obs_fn_hipGraphNodeGetType get_type = OBS_HIP_REAL(hipGraphNodeGetType);
    obs_fn_hipGraphKernelNodeGetParams get_params = OBS_HIP_REAL(hipGraphKernelNodeGetParams);
    obs_hipKernelNodeParams params;
    obs_hipGraphNodeType type;

    if (get_type == NULL || get_type(node, &type) != obs_hipSuccess) {
        *failed = *failed || get_type != NULL;
        w->incomplete = true;
        return;
    }
    if ((int)type != kernel_type)
        return;
    if (get_params == NULL || get_params(node, &params) != obs_hipSuccess) {
        *failed = *failed || get_params != NULL;
        obs_graph_walk_add_kernel(w, 0);
        return;
    }
    obs_graph_walk_add_kernel(w, params.func != NULL ? obs_kernel_name_of_host_fun(params.func) : 0);
}

/* Walk graph once (read-only queries) and publish exec. HIP stores every
 * call's result as the thread's last error: when one of these queries
 * failed, hipGetLastError puts back the success the instantiation left. */
static void walk_graph(obs_hipGraphExec_t exec, obs_hipGraph_t graph)
{
    obs_fn_hipGraphGetNodes get_nodes = OBS_HIP_REAL(hipGraphGetNodes);
    obs_fn_hipGetLastError clear = OBS_HIP_REAL(hipGetLastError);
    obs_hipGraphNode_t *nodes = NULL;
    struct obs_graph_walk w;
    size_t count = 0, i;
    bool failed = false;
    int kernel_type;

    if (get_nodes == NULL)
        return;
    if (get_nodes(graph, NULL, &count) != obs_hipSuccess) {
        failed = true;
    } else {
        obs_graph_walk_init(&w, count);
        kernel_type = hip_kernel_node_type();
        nodes = count > 0 ? malloc(count * sizeof *nodes) : NULL;
        if (count > 0 && (nodes == NULL || get_nodes(graph, nodes, &count) != obs_hipSuccess)) {
            failed = nodes != NULL;
            w.incomplete = true;
        } else {
            for (i = 0; i < count; i++)
                walk_node(nodes[i], kernel_type, &w, &failed);
        }
        free(nodes);
        obs_graph_exec_instantiated(exec, &w);
    }
    if (failed && clear != NULL)
        clear();
}

/* HIP 5.2's signature (exec, graph, errorNode, logBuffer, bufferSize). The
 * depth guard is held around the real call (see cudaGraphInstantiate). */
OBS_EXPORT obs_hipError_t hipGraphInstantiate(obs_hipGraphExec_t *pGraphExec, obs_hipGraph_t graph,
                                              obs_hipGraphNode_t *pErrorNode, char *pLogBuffer,
                                              size_t bufferSize)
{
    obs_fn_hipGraphInstantiate real = OBS_HIP_REAL(hipGraphInstantiate);
    obs_hipError_t status;
    bool walk;
    int saved_errno;

    if (real == NULL)
        return hip_missing(OBS_REAL_HIP_hipGraphInstantiate);
    walk = obs_graph_walk_wanted();
    if (walk)
        obs_tls.depth = 1;
    status = real(pGraphExec, graph, pErrorNode, pLogBuffer, bufferSize);
    saved_errno = errno;
    if (walk) {
        obs_tls.depth = 0;
        if (status == obs_hipSuccess && pGraphExec != NULL)
            walk_graph(*pGraphExec, graph);
    }
    errno = saved_errno;
    return status;
}

OBS_EXPORT obs_hipError_t hipSetDevice(int deviceId)
{
    obs_fn_hipSetDevice real = OBS_HIP_REAL(hipSetDevice);
    obs_hipError_t status;

    if (real == NULL)
        return hip_missing(OBS_REAL_HIP_hipSetDevice);
    status = real(deviceId);
    if (status == obs_hipSuccess && deviceId >= 0)
        obs_tls.device = (uint32_t)deviceId; /* the current device is per thread in HIP too */
    return status;
}

/* ---- the wrappers by real index, for hooks_dlsym.c ------------------------- */

static void *const wrappers[OBS_REAL_HIP_COUNT] = {
#define OBS_HIP_WRAPPER_ROW(name, ret, params, args) [OBS_REAL_HIP_##name] = (void *)name,
    OBS_HIP_API(OBS_HIP_WRAPPER_ROW)
#undef OBS_HIP_WRAPPER_ROW
    [OBS_REAL_HIP___hipRegisterFunction] = (void *)__hipRegisterFunction,
    [OBS_REAL_HIP_hipModuleGetFunction] = (void *)hipModuleGetFunction,
    [OBS_REAL_HIP_hipGraphInstantiate] = (void *)hipGraphInstantiate,
    [OBS_REAL_HIP_hipSetDevice] = (void *)hipSetDevice,
};

void *obs_hip_wrapper_of(unsigned index)
{
    return index < OBS_REAL_HIP_COUNT ? wrappers[index] : NULL;
}
