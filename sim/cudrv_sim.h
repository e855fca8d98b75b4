/* Internals of the simulated CUDA driver (libcuda.so.1 in sim/).
 *
 * The same conventions as the simulated runtime (cudart_sim.h): one global
 * mutex (drv_lock) guards every table; every exported entry point calls
 * drv_enter() first and returns through drv_finish(), which applies
 * OBS_SIM_FAIL and writes the ground-truth log line; no helper ever calls an
 * exported symbol (-Bsymbolic-functions), so a preloaded shim sees exactly
 * the calls the application made. Virtual clock and costs:
 * sim/cost_model.h. Nothing here is exported except the cu* entry
 * points and cudnnSimFakeEntry (libcuda.map). */
#ifndef OBS_CUDRV_SIM_H
#define OBS_CUDRV_SIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/cuda_driver_abi.h"

#define DRV_EXPORT __attribute__((visibility("default")))

/* The version cuDriverGetVersion reports (CUDA 13.0). */
#define DRV_SIM_DRIVER_VERSION 13000

/* Entry points the simulator implements beyond cuda_driver_abi.h's lists
 * (what NVIDIA's runtime and cuBLAS call); every other public name is a
 * logged stub (cudrv_sim_stubs.c, which must not see these prototypes). */
#ifndef OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES
obs_CUresult cuGetExportTable(const void **ppExportTable, const void *pExportTableId);
obs_CUresult cuDeviceGetAttribute(int *pi, int attrib, obs_CUdevice dev);
obs_CUresult cuDeviceGetName(char *name, int len, obs_CUdevice dev);
obs_CUresult cuDeviceTotalMem_v2(size_t *bytes, obs_CUdevice dev);
obs_CUresult cuDeviceGetUuid(unsigned char *uuid, obs_CUdevice dev);
obs_CUresult cuDeviceGetUuid_v2(unsigned char *uuid, obs_CUdevice dev);
obs_CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, obs_CUdevice dev);
obs_CUresult cuDeviceComputeCapability(int *major, int *minor, obs_CUdevice dev);
obs_CUresult cuDevicePrimaryCtxGetState(obs_CUdevice dev, unsigned int *flags, int *active);
obs_CUresult cuDevicePrimaryCtxSetFlags_v2(obs_CUdevice dev, unsigned int flags);
obs_CUresult cuCtxGetDevice(obs_CUdevice *device);
obs_CUresult cuCtxGetDevice_v2(obs_CUdevice *device, obs_CUcontext ctx);
obs_CUresult cuCtxGetFlags(unsigned int *flags);
obs_CUresult cuCtxGetApiVersion(obs_CUcontext ctx, unsigned int *version);
obs_CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
obs_CUresult cuCtxGetLimit(size_t *pvalue, int limit);
obs_CUresult cuDeviceCanAccessPeer(int *canAccessPeer, obs_CUdevice dev, obs_CUdevice peerDev);
obs_CUresult cuDeviceGetP2PAttribute(int *value, int attrib, obs_CUdevice srcDevice, obs_CUdevice dstDevice);
obs_CUresult cuDeviceGetByPCIBusId(obs_CUdevice *dev, const char *pciBusId);
/* memory pools (cudrv_sim_mempool.c) */
obs_CUresult cuMemPoolCreate(void **pool, const void *props);
obs_CUresult cuMemPoolDestroy(void *pool);
obs_CUresult cuMemPoolSetAttribute(void *pool, int attr, void *value);
obs_CUresult cuMemPoolGetAttribute(void *pool, int attr, void *value);
obs_CUresult cuMemPoolTrimTo(void *pool, size_t minBytesToKeep);
obs_CUresult cuMemPoolSetAccess(void *pool, const void *map, size_t count);
obs_CUresult cuMemPoolGetAccess(int *flags, void *pool, const void *location);
obs_CUresult cuDeviceGetDefaultMemPool(void **pool_out, obs_CUdevice dev);
obs_CUresult cuDeviceGetMemPool(void **pool_out, obs_CUdevice dev);
obs_CUresult cuDeviceSetMemPool(obs_CUdevice dev, void *pool);
obs_CUresult cuMemAllocAsync(obs_CUdeviceptr *dptr, size_t bytesize, obs_CUstream hStream);
obs_CUresult cuMemAllocAsync_ptsz(obs_CUdeviceptr *dptr, size_t bytesize, obs_CUstream hStream);
obs_CUresult cuMemAllocFromPoolAsync(obs_CUdeviceptr *dptr, size_t bytesize, void *pool, obs_CUstream hStream);
obs_CUresult cuMemAllocFromPoolAsync_ptsz(obs_CUdeviceptr *dptr, size_t bytesize, void *pool,
                                          obs_CUstream hStream);
obs_CUresult cuMemFreeAsync(obs_CUdeviceptr dptr, obs_CUstream hStream);
obs_CUresult cuMemFreeAsync_ptsz(obs_CUdeviceptr dptr, obs_CUstream hStream);
obs_CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total);
obs_CUresult cuModuleGetLoadingMode(int *mode);
obs_CUresult cuOccupancyMaxActiveClusters(int *numClusters, obs_CUfunction func, const void *config);
obs_CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, obs_CUfunction func, int blockSize,
                                                         size_t dynamicSMemSize);
obs_CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, obs_CUfunction func,
                                                                  int blockSize, size_t dynamicSMemSize,
                                                                  unsigned int flags);
obs_CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, obs_CUfunction func,
                                              void *blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                              int blockSizeLimit);
obs_CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, obs_CUfunction func,
                                                       void *blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                                       int blockSizeLimit, unsigned int flags);
obs_CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, obs_CUfunction func, int numBlocks,
                                                     int blockSize);
obs_CUresult cuModuleLoadDataEx(obs_CUmodule *module, const void *image, unsigned int numOptions,
                                obs_CUjit_option *options, void **optionValues);
obs_CUresult cuModuleLoadFatBinary(obs_CUmodule *module, const void *fatCubin);
obs_CUresult cuModuleLoad(obs_CUmodule *module, const char *fname);
obs_CUresult cuLibraryLoadFromFile(obs_CUlibrary *library, const char *fileName, obs_CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   obs_CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions);
obs_CUresult cuLibraryGetGlobal(obs_CUdeviceptr *dptr, size_t *bytes, obs_CUlibrary library, const char *name);
obs_CUresult cuModuleGetGlobal_v2(obs_CUdeviceptr *dptr, size_t *bytes, obs_CUmodule hmod, const char *name);
obs_CUresult cuStreamGetCaptureInfo(obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id);
obs_CUresult cuStreamGetCaptureInfo_ptsz(obs_CUstream hStream, obs_CUstreamCaptureStatus *status,
                                         obs_cuuint64_t *id);
obs_CUresult cuStreamGetCaptureInfo_v2(obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id,
                                       obs_CUgraph *graph, const obs_CUgraphNode **deps, size_t *num_deps);
obs_CUresult cuStreamGetCaptureInfo_v2_ptsz(obs_CUstream hStream, obs_CUstreamCaptureStatus *status,
                                            obs_cuuint64_t *id, obs_CUgraph *graph, const obs_CUgraphNode **deps,
                                            size_t *num_deps);
obs_CUresult cuStreamGetCaptureInfo_v3(obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id,
                                       obs_CUgraph *graph, const obs_CUgraphNode **deps, const void **edge_data,
                                       size_t *num_deps);
obs_CUresult cuStreamGetCaptureInfo_v3_ptsz(obs_CUstream hStream, obs_CUstreamCaptureStatus *status,
                                            obs_cuuint64_t *id, obs_CUgraph *graph, const obs_CUgraphNode **deps,
                                            const void **edge_data, size_t *num_deps);
obs_CUresult cuFuncGetAttribute(int *pi, int attrib, obs_CUfunction hfunc);
obs_CUresult cuFuncSetAttribute(obs_CUfunction hfunc, int attrib, int value);
obs_CUresult cuKernelGetAttribute(int *pi, int attrib, obs_CUkernel kernel, obs_CUdevice dev);
obs_CUresult cuKernelSetAttribute(int attrib, int val, obs_CUkernel kernel, obs_CUdevice dev);
obs_CUresult cuFuncSetCacheConfig(obs_CUfunction hfunc, int config);
obs_CUresult cuKernelSetCacheConfig(obs_CUkernel kernel, int config, obs_CUdevice dev);
/* cudrv_sim_core.c */
obs_CUresult cuLogsRegisterCallback(void *callbackFunc, void *userData, void **callback_out);
obs_CUresult cuLogsUnregisterCallback(void *callback);
/* cudrv_sim_tensormap.c (CUtensorMap as void *, enums as int) */
obs_CUresult cuTensorMapEncodeTiled(void *tensorMap, int dataType, unsigned tensorRank, void *globalAddress,
                                    const uint64_t *globalDim, const uint64_t *globalStrides, const unsigned *boxDim,
                                    const unsigned *elementStrides, int interleave, int swizzle, int l2Promotion,
                                    int oobFill);
obs_CUresult cuTensorMapEncodeIm2col(void *tensorMap, int dataType, unsigned tensorRank, void *globalAddress,
                                     const uint64_t *globalDim, const uint64_t *globalStrides,
                                     const int *pixelBoxLowerCorner, const int *pixelBoxUpperCorner,
                                     unsigned channelsPerPixel, unsigned pixelsPerColumn,
                                     const unsigned *elementStrides, int interleave, int swizzle, int l2Promotion,
                                     int oobFill);
obs_CUresult cuTensorMapEncodeIm2colWide(void *tensorMap, int dataType, unsigned tensorRank, void *globalAddress,
                                         const uint64_t *globalDim, const uint64_t *globalStrides,
                                         int pixelBoxLowerCornerWidth, int pixelBoxUpperCornerWidth,
                                         unsigned channelsPerPixel, unsigned pixelsPerColumn,
                                         const unsigned *elementStrides, int interleave, int mode, int swizzle,
                                         int l2Promotion, int oobFill);
obs_CUresult cuTensorMapReplaceAddress(void *tensorMap, void *globalAddress);
/* cudrv_sim_stream.c */
obs_CUresult cuStreamCreateWithPriority(obs_CUstream *phStream, unsigned int flags, int priority);
obs_CUresult cuStreamGetPriority(obs_CUstream hStream, int *out);
obs_CUresult cuStreamGetPriority_ptsz(obs_CUstream hStream, int *out);
obs_CUresult cuStreamGetFlags(obs_CUstream hStream, unsigned int *out);
obs_CUresult cuStreamGetFlags_ptsz(obs_CUstream hStream, unsigned int *out);
obs_CUresult cuStreamGetId(obs_CUstream hStream, unsigned long long *out);
obs_CUresult cuStreamGetId_ptsz(obs_CUstream hStream, unsigned long long *out);
obs_CUresult cuStreamGetGreenCtx(obs_CUstream hStream, void **out);
obs_CUresult cuStreamGetCtx(obs_CUstream hStream, obs_CUcontext *out);
obs_CUresult cuStreamGetCtx_ptsz(obs_CUstream hStream, obs_CUcontext *out);
obs_CUresult cuStreamGetCtx_v2(obs_CUstream hStream, obs_CUcontext *pCtx, void **pGreenCtx);
obs_CUresult cuStreamGetCtx_v2_ptsz(obs_CUstream hStream, obs_CUcontext *pCtx, void **pGreenCtx);
obs_CUresult cuStreamQuery(obs_CUstream hStream);
obs_CUresult cuStreamQuery_ptsz(obs_CUstream hStream);
obs_CUresult cuEventRecordWithFlags(obs_CUevent hEvent, obs_CUstream hStream, unsigned int flags);
obs_CUresult cuEventRecordWithFlags_ptsz(obs_CUevent hEvent, obs_CUstream hStream, unsigned int flags);
obs_CUresult cuThreadExchangeStreamCaptureMode(obs_CUstreamCaptureMode *mode);
obs_CUresult cuGraphExecUpdate_v2(obs_CUgraphExec hGraphExec, obs_CUgraph hGraph, void *resultInfo);
obs_CUresult cuGraphUpload(obs_CUgraphExec hGraphExec, obs_CUstream hStream);
obs_CUresult cuGraphUpload_ptsz(obs_CUgraphExec hGraphExec, obs_CUstream hStream);
/* cudrv_sim_memory.c */
obs_CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
obs_CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
obs_CUresult cuMemFreeHost(void *p);
obs_CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
obs_CUresult cuMemHostUnregister(void *p);
obs_CUresult cuMemHostGetDevicePointer_v2(obs_CUdeviceptr *pdptr, void *p, unsigned int Flags);
obs_CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p);
obs_CUresult cuPointerGetAttribute(void *data, int attribute, obs_CUdeviceptr ptr);
obs_CUresult cuPointerGetAttributes(unsigned int numAttributes, int *attributes, void **data, obs_CUdeviceptr ptr);
obs_CUresult cuMemGetAddressRange_v2(obs_CUdeviceptr *pbase, size_t *psize, obs_CUdeviceptr dptr);
/* cudrv_sim_vmm.c (handles: CUmemGenericAllocationHandle; structures passed as void *) */
obs_CUresult cuMemGetAllocationGranularity(size_t *granularity, const void *prop, int option);
obs_CUresult cuMemCreate(unsigned long long *handle, size_t size, const void *prop, unsigned long long flags);
obs_CUresult cuMemRelease(unsigned long long handle);
obs_CUresult cuMemGetAllocationPropertiesFromHandle(void *prop, unsigned long long handle);
obs_CUresult cuMemExportToShareableHandle(void *shareable, unsigned long long handle, int handle_type,
                                          unsigned long long flags);
obs_CUresult cuMemImportFromShareableHandle(unsigned long long *handle, void *os_handle, int handle_type);
obs_CUresult cuMemAddressReserve(obs_CUdeviceptr *ptr, size_t size, size_t alignment, obs_CUdeviceptr addr,
                                 unsigned long long flags);
obs_CUresult cuMemAddressFree(obs_CUdeviceptr ptr, size_t size);
obs_CUresult cuMemMap(obs_CUdeviceptr ptr, size_t size, size_t offset, unsigned long long handle,
                      unsigned long long flags);
obs_CUresult cuMemUnmap(obs_CUdeviceptr ptr, size_t size);
obs_CUresult cuMemSetAccess(obs_CUdeviceptr ptr, size_t size, const void *desc, size_t count);
obs_CUresult cuMemGetAccess(unsigned long long *flags, const void *location, obs_CUdeviceptr ptr);
obs_CUresult cuMemRetainAllocationHandle(unsigned long long *handle, void *addr);
#endif

/* ---- log, banner, errors, initialisation (cudrv_sim_core.c) --------------- */

enum drv_kind { DRV_KIND_KERNEL, DRV_KIND_MEMCPY, DRV_KIND_MEMSET, DRV_KIND_SYNC, DRV_KIND_GRAPH,
                DRV_KIND_ALLOC, DRV_KIND_OTHER };

#define DRV_NO_STREAM ((const void *)UINTPTR_MAX)
#define DRV_NO_BYTES (-1LL)

extern pthread_mutex_t drv_lock;

/* First thing in every entry point: environment, banner, log file (once). */
void drv_enter(void);
/* Apply OBS_SIM_FAIL, log the call (one write(2)), return the status. */
obs_CUresult drv_finish(const char *api, enum drv_kind kind, const char *name, const void *stream,
                        long long bytes, obs_CUresult status);
/* CUDA_ERROR_NOT_INITIALIZED before cuInit, CUDA_ERROR_INVALID_CONTEXT
 * when the calling thread has no current context, else success. */
obs_CUresult drv_need_context(void);
/* The same for a call on an object of a context (a stream, event, graph):
 * the driver takes the context from the object, so a thread with no
 * current one may make it (PyTorch's worker threads ask
 * cuStreamIsCapturing before the runtime made a context current on them);
 * object NULL: the current context is needed. */
obs_CUresult drv_need_context_of(const void *object);
/* A stream handle as an object: NULL for the ones that mean "the current
 * context's" (0, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define DRV_OBJ(stream)                                                                           \
    ((stream) == NULL || (stream) == OBS_CU_STREAM_LEGACY || (stream) == OBS_CU_STREAM_PER_THREAD \
         ? NULL                                                                                   \
         : (const void *)(stream))
obs_CUresult drv_need_init(void);

/* ---- devices (cudrv_sim_device.c), primary context (cudrv_sim_core.c) --- */

/* The devices the driver shows (OBS_SIM_GPUS, CUDA_VISIBLE_DEVICES:
 * sim_gpus.h), all alike but for their PCI location and UUID; ordinals
 * 0 .. drv_device_count() - 1. */
int drv_device_count(void);
int drv_valid_device(obs_CUdevice dev);
/* A device's attribute (CU_DEVICE_ATTRIBUTE_*), UUID. */
obs_CUresult drv_device_attribute(int *value, int attrib, obs_CUdevice dev);
void drv_device_uuid_bytes(obs_CUdevice dev, unsigned char out[16]);
/* 1 while the device's primary context is retained. */
int drv_primary_active(obs_CUdevice dev);
/* A device's primary context's handle (what cuDevicePrimaryCtxRetain gives). */
obs_CUcontext drv_primary_context(obs_CUdevice dev);
/* The calling thread's current context (NULL: none), and its device (0: none). */
obs_CUcontext drv_current_context(void);
obs_CUdevice drv_current_device(void);
/* The device of a live context (INVALID_CONTEXT: not one). Takes drv_lock. */
obs_CUresult drv_context_device(obs_CUcontext ctx, obs_CUdevice *dev);

/* ---- private export tables (cudrv_sim_export.c), integrity hash
 *      (cudrv_sim_integrity.c) ----------------------------------------------- */

struct drv_integrity_device {
    unsigned char uuid[16];
    uint32_t pci_domain, pci_bus, pci_device;
};

struct drv_integrity_input {
    uint32_t driver_version, runtime_version, process_id, thread_id;
    uint64_t cudart_table, integrity_table, check_function, timestamp;
    unsigned device_count;
    const struct drv_integrity_device *devices;
};

/* The 128-bit answer of the runtime's integrity check (little-endian bytes). */
void drv_integrity_hash(const struct drv_integrity_input *in, uint8_t out[16]);

/* ---- every public driver name (cudrv_sim_stubs.c) ------------------------- */

/* The address of the exported driver symbol named so (simulated or stub),
 * NULL when the toolkit's libcuda exports no such name. */
void *drv_public_symbol(const char *name);

/* ---- modules, functions, kernels (cudrv_sim_module.c) -------------------- */

/* Load a module (is_library 0) or library (1) from an image (see
 * cudrv_sim_module.c); a module needs a current context, a library only cuInit. */
obs_CUresult drv_module_load_image(void **out, const void *image, int is_library);

struct drv_function;
/* Under drv_lock. A CUfunction, or a CUkernel passed where a CUfunction is
 * expected (CUDA 12 allows it); NULL if neither. */
const struct drv_function *drv_function_find(obs_CUfunction handle);
const char *drv_function_name(const struct drv_function *f);
/* A function's attribute (CU_FUNC_ATTRIBUTE_*), under drv_lock. */
enum { DRV_FUNC_MAX_THREADS = 0, DRV_FUNC_MAX_DYNAMIC_SHARED = 8 };
int drv_function_attribute(const struct drv_function *f, int attrib);
/* Under drv_lock. True when handle is a CUkernel (passed as a CUfunction). */
int drv_is_kernel_handle(obs_CUfunction handle);

/* ---- memory (cudrv_sim_memory.c, cudrv_sim_vmm.c) ------------------------------ */

/* Not under drv_lock. Allocate simulated device memory (zeroed; needs a
 * current context) / give it back, without logging (a module's globals). */
obs_CUresult drv_mem_alloc(obs_CUdeviceptr *out, size_t size);
void drv_mem_release(obs_CUdeviceptr p);
/* Under drv_lock. True when [p, p+len) lies in device memory (one
 * allocation, or virtual-memory mappings that follow each other). */
int drv_is_device_range(obs_CUdeviceptr p, size_t len);

/* The ranges of memory the driver knows, for pointer attributes. */
enum drv_mem_kind {
    DRV_MEM_DEVICE,          /* cuMemAlloc */
    DRV_MEM_HOST,            /* cuMemHostAlloc, cuMemAllocHost */
    DRV_MEM_HOST_REGISTERED, /* cuMemHostRegister: the program's own memory */
    DRV_MEM_MAPPED           /* cuMemMap of a cuMemCreate allocation */
};

struct drv_range {
    uintptr_t base;
    size_t size;
    enum drv_mem_kind kind;
    unsigned flags;          /* host: its allocation flags; mapped: access (low byte), handle types << 8 */
    unsigned long long id;   /* a process-wide buffer id */
    obs_CUdevice device;     /* the device of the context current when it was made */
    void *owner;             /* mapped: the cuMemCreate allocation */
    struct drv_range *next;
};

/* Under drv_lock. Add a range (NULL: out of memory); the range holding p
 * (NULL: none); remove one. */
struct drv_range *drv_range_add(uintptr_t base, size_t size, enum drv_mem_kind kind);
struct drv_range *drv_range_find(uintptr_t p);
void drv_range_drop(struct drv_range *r);
/* Under drv_lock. A mapped range's allocation (its owner) is host memory
 * (cuMemCreate at a host location). */
int drv_vmm_host_located(const void *owner);

/* ---- streams, clock, events, graphs (cudrv_sim_stream.c) ----------------- */

struct drv_copy {
    char *dst;
    const char *src;
    size_t width, height, depth;
    size_t dst_pitch, src_pitch, dst_slice, src_slice;
    int device_to_device;
};

struct drv_fill {
    char *dst;
    size_t elem_size; /* 1, 2 or 4 */
    uint32_t value;
    size_t width_elems, height;
    size_t pitch;
};

struct drv_event;
enum drv_op_type { DRV_OP_KERNEL, DRV_OP_COPY, DRV_OP_FILL, DRV_OP_EVENT_RECORD };

struct drv_op {
    enum drv_op_type type;
    obs_CUfunction kernel; /* DRV_OP_KERNEL: the handle launched (a graph node's params) */
    union {
        uint64_t kernel_threads;
        struct drv_copy copy;
        struct drv_fill fill;
        struct drv_event *event;
    } u;
};

struct drv_stream;

/* Under drv_lock. 0 is the legacy stream for the plain API and the
 * thread's default stream for _ptsz/_ptds; 0x1 / 0x2 always legacy /
 * per-thread; unknown handles give CUDA_ERROR_INVALID_HANDLE. */
obs_CUresult drv_stream_lookup(obs_CUstream handle, int per_thread_api, struct drv_stream **out);
/* Under drv_lock. True while s captures into a graph. */
int drv_stream_capturing(const struct drv_stream *s);
/* Under drv_lock. Run op on s now (charge its cost, move memory) or append
 * it to the graph s captures. */
obs_CUresult drv_submit(struct drv_stream *s, const struct drv_op *op, int in_graph);

#endif
