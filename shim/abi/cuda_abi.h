/* The slice of the CUDA runtime ABI that obsshim, its simulated runtime and
 * its C test programs need, declared here so that none of them needs the CUDA
 * toolkit. Names carry an obs_ prefix so that this header can sit beside the
 * real cuda_runtime_api.h (tests/t_abi_cuda.c compares the two: sizes,
 * offsets and enum values).
 * Layouts follow CUDA 13's driver_types.h / vector_types.h. */
#ifndef OBS_CUDA_ABI_H
#define OBS_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int obs_cudaError_t; /* enum cudaError: 4 bytes */
enum {
    obs_cudaSuccess = 0,
    obs_cudaErrorInvalidValue = 1,
    obs_cudaErrorMemoryAllocation = 2,
    obs_cudaErrorInitializationError = 3,
    obs_cudaErrorInvalidConfiguration = 9,
    obs_cudaErrorInvalidPitchValue = 12,
    obs_cudaErrorInvalidSymbol = 13,
    obs_cudaErrorInvalidDevicePointer = 17,
    obs_cudaErrorInvalidMemcpyDirection = 21,
    obs_cudaErrorMissingConfiguration = 52,
    obs_cudaErrorInvalidDeviceFunction = 98,
    obs_cudaErrorNoDevice = 100,
    obs_cudaErrorInvalidDevice = 101,
    obs_cudaErrorInvalidResourceHandle = 400,
    obs_cudaErrorIllegalState = 401,
    obs_cudaErrorNotReady = 600,
    obs_cudaErrorNotSupported = 801,
    obs_cudaErrorStreamCaptureUnsupported = 900,
    obs_cudaErrorStreamCaptureInvalidated = 901,
    obs_cudaErrorStreamCaptureUnmatched = 903,
    obs_cudaErrorStreamCaptureImplicit = 906,
    obs_cudaErrorStreamCaptureWrongThread = 908,
    obs_cudaErrorUnknown = 999
};

typedef int obs_cudaMemcpyKind; /* enum cudaMemcpyKind */
enum {
    obs_cudaMemcpyHostToHost = 0,
    obs_cudaMemcpyHostToDevice = 1,
    obs_cudaMemcpyDeviceToHost = 2,
    obs_cudaMemcpyDeviceToDevice = 3,
    obs_cudaMemcpyDefault = 4
};

typedef int obs_cudaStreamCaptureMode; /* enum cudaStreamCaptureMode */
enum {
    obs_cudaStreamCaptureModeGlobal = 0,
    obs_cudaStreamCaptureModeThreadLocal = 1,
    obs_cudaStreamCaptureModeRelaxed = 2
};
typedef int obs_cudaStreamCaptureStatus; /* enum cudaStreamCaptureStatus */
enum {
    obs_cudaStreamCaptureStatusNone = 0,
    obs_cudaStreamCaptureStatusActive = 1,
    obs_cudaStreamCaptureStatusInvalidated = 2
};

typedef struct obs_dim3 {
    unsigned int x, y, z;
} obs_dim3;

typedef int obs_cudaGraphNodeType; /* enum cudaGraphNodeType (the values the shim and simulator use) */
enum {
    obs_cudaGraphNodeTypeKernel = 0,
    obs_cudaGraphNodeTypeMemcpy = 1,
    obs_cudaGraphNodeTypeMemset = 2,
    obs_cudaGraphNodeTypeGraph = 4,
    obs_cudaGraphNodeTypeEmpty = 5,
    obs_cudaGraphNodeTypeEventRecord = 7
};

/* cudaKernelNodeParams (driver_types.h): func is the kernel's host stub (or
 * the handle it was launched by). */
struct obs_cudaKernelNodeParams {
    void *func;
    obs_dim3 gridDim;
    obs_dim3 blockDim;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
};

typedef struct obs_CUstream_st *obs_cudaStream_t;
typedef struct obs_CUevent_st *obs_cudaEvent_t;
typedef struct obs_CUgraph_st *obs_cudaGraph_t;
typedef struct obs_CUgraphExec_st *obs_cudaGraphExec_t;
typedef struct obs_CUgraphNode_st *obs_cudaGraphNode_t;
typedef struct obs_CUkern_st *obs_cudaKernel_t;
typedef struct obs_cudaArray *obs_cudaArray_t;
typedef struct obs_CUmemPool_st *obs_cudaMemPool_t;

/* Special stream handles (driver_types.h). */
#define OBS_CUDA_STREAM_LEGACY ((obs_cudaStream_t)0x1)
#define OBS_CUDA_STREAM_PER_THREAD ((obs_cudaStream_t)0x2)
/* Stream and event creation flags (driver_types.h). */
#define OBS_CUDA_STREAM_NON_BLOCKING 0x01u
#define OBS_CUDA_EVENT_BLOCKING_SYNC 0x01u
#define OBS_CUDA_EVENT_DISABLE_TIMING 0x02u
#define OBS_CUDA_EVENT_INTERPROCESS 0x04u

struct obs_cudaPitchedPtr {
    void *ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
};
struct obs_cudaExtent {
    size_t width, height, depth;
};
struct obs_cudaPos {
    size_t x, y, z;
};
struct obs_cudaMemcpy3DParms {
    obs_cudaArray_t srcArray;
    struct obs_cudaPos srcPos;
    struct obs_cudaPitchedPtr srcPtr;
    obs_cudaArray_t dstArray;
    struct obs_cudaPos dstPos;
    struct obs_cudaPitchedPtr dstPtr;
    struct obs_cudaExtent extent;
    obs_cudaMemcpyKind kind;
};
struct obs_cudaMemcpy3DPeerParms {
    obs_cudaArray_t srcArray;
    struct obs_cudaPos srcPos;
    struct obs_cudaPitchedPtr srcPtr;
    int srcDevice;
    obs_cudaArray_t dstArray;
    struct obs_cudaPos dstPos;
    struct obs_cudaPitchedPtr dstPtr;
    int dstDevice;
    struct obs_cudaExtent extent;
};

/* cudaLaunchAttribute: id + 64-byte value union (driver_types.h). The real
 * union holds pointers, hence the 8-byte member that gives it their alignment. */
typedef struct obs_cudaLaunchAttribute {
    int id;
    char pad[4];
    union {
        char pad[64];
        uint64_t align;
    } val;
} obs_cudaLaunchAttribute;

typedef struct obs_cudaLaunchConfig_t {
    obs_dim3 gridDim;
    obs_dim3 blockDim;
    size_t dynamicSmemBytes;
    obs_cudaStream_t stream;
    obs_cudaLaunchAttribute *attrs;
    unsigned int numAttrs;
} obs_cudaLaunchConfig_t;

/* The fatbinary wrapper handed to __cudaRegisterFatBinary (fatbinary_section.h). */
struct obs_fatbin_wrapper {
    int magic;   /* 0x466243b1 */
    int version;
    const void *data;
    void *filename_or_fatbins;
};
#define OBS_FATBIN_WRAPPER_MAGIC 0x466243b1

/* Every runtime entry point obsshim hooks or its simulator provides, as an
 * X-macro: X(name, return type, (parameters), (argument names)).
 * One list, used to declare prototypes, function-pointer types and the
 * shim's table of real functions. */
#define OBS_CUDA_RUNTIME_API(X)                                                                  \
    /* launches */                                                                               \
    X(cudaLaunchKernel, obs_cudaError_t,                                                         \
      (const void *func, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,               \
       obs_cudaStream_t stream),                                                                 \
      (func, grid, block, args, shmem, stream))                                                  \
    X(cudaLaunchKernel_ptsz, obs_cudaError_t,                                                    \
      (const void *func, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,               \
       obs_cudaStream_t stream),                                                                 \
      (func, grid, block, args, shmem, stream))                                                  \
    X(__cudaLaunchKernel, obs_cudaError_t,                                                       \
      (obs_cudaKernel_t kernel, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,        \
       obs_cudaStream_t stream),                                                                 \
      (kernel, grid, block, args, shmem, stream))                                                \
    X(__cudaLaunchKernel_ptsz, obs_cudaError_t,                                                  \
      (obs_cudaKernel_t kernel, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,        \
       obs_cudaStream_t stream),                                                                 \
      (kernel, grid, block, args, shmem, stream))                                                \
    X(cudaLaunchKernelExC, obs_cudaError_t,                                                      \
      (const obs_cudaLaunchConfig_t *config, const void *func, void **args), (config, func, args)) \
    X(cudaLaunchKernelExC_ptsz, obs_cudaError_t,                                                 \
      (const obs_cudaLaunchConfig_t *config, const void *func, void **args), (config, func, args)) \
    X(cudaLaunchCooperativeKernel, obs_cudaError_t,                                              \
      (const void *func, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,               \
       obs_cudaStream_t stream),                                                                 \
      (func, grid, block, args, shmem, stream))                                                  \
    X(cudaLaunchCooperativeKernel_ptsz, obs_cudaError_t,                                         \
      (const void *func, obs_dim3 grid, obs_dim3 block, void **args, size_t shmem,               \
       obs_cudaStream_t stream),                                                                 \
      (func, grid, block, args, shmem, stream))                                                  \
    X(cudaGraphLaunch, obs_cudaError_t, (obs_cudaGraphExec_t exec, obs_cudaStream_t stream),     \
      (exec, stream))                                                                            \
    X(cudaGraphLaunch_ptsz, obs_cudaError_t, (obs_cudaGraphExec_t exec, obs_cudaStream_t stream), \
      (exec, stream))                                                                            \
    /* copies */                                                                                 \
    X(cudaMemcpy, obs_cudaError_t, (void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind), \
      (dst, src, count, kind))                                                                   \
    X(cudaMemcpy_ptds, obs_cudaError_t,                                                          \
      (void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind), (dst, src, count, kind)) \
    X(cudaMemcpyAsync, obs_cudaError_t,                                                          \
      (void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind, obs_cudaStream_t stream), \
      (dst, src, count, kind, stream))                                                           \
    X(cudaMemcpyAsync_ptsz, obs_cudaError_t,                                                     \
      (void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind, obs_cudaStream_t stream), \
      (dst, src, count, kind, stream))                                                           \
    X(cudaMemcpy2D, obs_cudaError_t,                                                             \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_cudaMemcpyKind kind),                                                                 \
      (dst, dpitch, src, spitch, width, height, kind))                                           \
    X(cudaMemcpy2D_ptds, obs_cudaError_t,                                                        \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_cudaMemcpyKind kind),                                                                 \
      (dst, dpitch, src, spitch, width, height, kind))                                           \
    X(cudaMemcpy2DAsync, obs_cudaError_t,                                                        \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_cudaMemcpyKind kind, obs_cudaStream_t stream),                                        \
      (dst, dpitch, src, spitch, width, height, kind, stream))                                   \
    X(cudaMemcpy2DAsync_ptsz, obs_cudaError_t,                                                   \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_cudaMemcpyKind kind, obs_cudaStream_t stream),                                        \
      (dst, dpitch, src, spitch, width, height, kind, stream))                                   \
    X(cudaMemcpy3D, obs_cudaError_t, (const struct obs_cudaMemcpy3DParms *p), (p))               \
    X(cudaMemcpy3D_ptds, obs_cudaError_t, (const struct obs_cudaMemcpy3DParms *p), (p))          \
    X(cudaMemcpy3DAsync, obs_cudaError_t,                                                        \
      (const struct obs_cudaMemcpy3DParms *p, obs_cudaStream_t stream), (p, stream))             \
    X(cudaMemcpy3DAsync_ptsz, obs_cudaError_t,                                                   \
      (const struct obs_cudaMemcpy3DParms *p, obs_cudaStream_t stream), (p, stream))             \
    X(cudaMemcpyPeer, obs_cudaError_t,                                                           \
      (void *dst, int dstDevice, const void *src, int srcDevice, size_t count),                  \
      (dst, dstDevice, src, srcDevice, count))                                                   \
    X(cudaMemcpyPeerAsync, obs_cudaError_t,                                                      \
      (void *dst, int dstDevice, const void *src, int srcDevice, size_t count,                   \
       obs_cudaStream_t stream),                                                                 \
      (dst, dstDevice, src, srcDevice, count, stream))                                           \
    X(cudaMemcpyToSymbol, obs_cudaError_t,                                                       \
      (const void *symbol, const void *src, size_t count, size_t offset, obs_cudaMemcpyKind kind), \
      (symbol, src, count, offset, kind))                                                        \
    X(cudaMemcpyToSymbol_ptds, obs_cudaError_t,                                                  \
      (const void *symbol, const void *src, size_t count, size_t offset, obs_cudaMemcpyKind kind), \
      (symbol, src, count, offset, kind))                                                        \
    X(cudaMemcpyFromSymbol, obs_cudaError_t,                                                     \
      (void *dst, const void *symbol, size_t count, size_t offset, obs_cudaMemcpyKind kind),     \
      (dst, symbol, count, offset, kind))                                                        \
    X(cudaMemcpyFromSymbol_ptds, obs_cudaError_t,                                                \
      (void *dst, const void *symbol, size_t count, size_t offset, obs_cudaMemcpyKind kind),     \
      (dst, symbol, count, offset, kind))                                                        \
    X(cudaMemcpyToSymbolAsync, obs_cudaError_t,                                                  \
      (const void *symbol, const void *src, size_t count, size_t offset, obs_cudaMemcpyKind kind, \
       obs_cudaStream_t stream),                                                                 \
      (symbol, src, count, offset, kind, stream))                                                \
    X(cudaMemcpyToSymbolAsync_ptsz, obs_cudaError_t,                                             \
      (const void *symbol, const void *src, size_t count, size_t offset, obs_cudaMemcpyKind kind, \
       obs_cudaStream_t stream),                                                                 \
      (symbol, src, count, offset, kind, stream))                                                \
    X(cudaMemcpyFromSymbolAsync, obs_cudaError_t,                                                \
      (void *dst, const void *symbol, size_t count, size_t offset, obs_cudaMemcpyKind kind,      \
       obs_cudaStream_t stream),                                                                 \
      (dst, symbol, count, offset, kind, stream))                                                \
    X(cudaMemcpyFromSymbolAsync_ptsz, obs_cudaError_t,                                           \
      (void *dst, const void *symbol, size_t count, size_t offset, obs_cudaMemcpyKind kind,      \
       obs_cudaStream_t stream),                                                                 \
      (dst, symbol, count, offset, kind, stream))                                                \
    /* memsets */                                                                                \
    X(cudaMemset, obs_cudaError_t, (void *dst, int value, size_t count), (dst, value, count))    \
    X(cudaMemset_ptds, obs_cudaError_t, (void *dst, int value, size_t count), (dst, value, count)) \
    X(cudaMemsetAsync, obs_cudaError_t,                                                          \
      (void *dst, int value, size_t count, obs_cudaStream_t stream), (dst, value, count, stream)) \
    X(cudaMemsetAsync_ptsz, obs_cudaError_t,                                                     \
      (void *dst, int value, size_t count, obs_cudaStream_t stream), (dst, value, count, stream)) \
    X(cudaMemset2D, obs_cudaError_t,                                                             \
      (void *dst, size_t pitch, int value, size_t width, size_t height),                         \
      (dst, pitch, value, width, height))                                                        \
    X(cudaMemset2D_ptds, obs_cudaError_t,                                                        \
      (void *dst, size_t pitch, int value, size_t width, size_t height),                         \
      (dst, pitch, value, width, height))                                                        \
    X(cudaMemset2DAsync, obs_cudaError_t,                                                        \
      (void *dst, size_t pitch, int value, size_t width, size_t height, obs_cudaStream_t stream), \
      (dst, pitch, value, width, height, stream))                                                \
    X(cudaMemset2DAsync_ptsz, obs_cudaError_t,                                                   \
      (void *dst, size_t pitch, int value, size_t width, size_t height, obs_cudaStream_t stream), \
      (dst, pitch, value, width, height, stream))                                                \
    X(cudaMemset3D, obs_cudaError_t,                                                             \
      (struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent extent), (p, value, extent)) \
    X(cudaMemset3D_ptds, obs_cudaError_t,                                                        \
      (struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent extent), (p, value, extent)) \
    X(cudaMemset3DAsync, obs_cudaError_t,                                                        \
      (struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent extent,                     \
       obs_cudaStream_t stream),                                                                 \
      (p, value, extent, stream))                                                                \
    X(cudaMemset3DAsync_ptsz, obs_cudaError_t,                                                   \
      (struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent extent,                     \
       obs_cudaStream_t stream),                                                                 \
      (p, value, extent, stream))                                                                \
    /* synchronisation */                                                                        \
    X(cudaDeviceSynchronize, obs_cudaError_t, (void), ())                                        \
    X(cudaStreamSynchronize, obs_cudaError_t, (obs_cudaStream_t stream), (stream))               \
    X(cudaStreamSynchronize_ptsz, obs_cudaError_t, (obs_cudaStream_t stream), (stream))          \
    X(cudaEventSynchronize, obs_cudaError_t, (obs_cudaEvent_t event), (event))                   \
    X(cudaStreamWaitEvent, obs_cudaError_t,                                                      \
      (obs_cudaStream_t stream, obs_cudaEvent_t event, unsigned int flags), (stream, event, flags)) \
    X(cudaStreamWaitEvent_ptsz, obs_cudaError_t,                                                 \
      (obs_cudaStream_t stream, obs_cudaEvent_t event, unsigned int flags), (stream, event, flags)) \
    /* allocation */                                                                             \
    X(cudaMalloc, obs_cudaError_t, (void **ptr, size_t size), (ptr, size))                       \
    X(cudaFree, obs_cudaError_t, (void *ptr), (ptr))                                             \
    X(cudaMallocAsync, obs_cudaError_t, (void **ptr, size_t size, obs_cudaStream_t stream),      \
      (ptr, size, stream))                                                                       \
    X(cudaMallocAsync_ptsz, obs_cudaError_t, (void **ptr, size_t size, obs_cudaStream_t stream), \
      (ptr, size, stream))                                                                       \
    X(cudaFreeAsync, obs_cudaError_t, (void *ptr, obs_cudaStream_t stream), (ptr, stream))       \
    X(cudaFreeAsync_ptsz, obs_cudaError_t, (void *ptr, obs_cudaStream_t stream), (ptr, stream))

/* Entry points the shim uses itself or observes without recording a call
 * (registration gives kernel names; events give GPU time). */
#define OBS_CUDA_RUNTIME_SUPPORT_API(X)                                                          \
    X(__cudaRegisterFatBinary, void **, (void *fatCubin), (fatCubin))                            \
    X(__cudaRegisterFatBinaryEnd, void, (void **fatCubinHandle), (fatCubinHandle))               \
    X(__cudaUnregisterFatBinary, void, (void **fatCubinHandle), (fatCubinHandle))                \
    X(__cudaRegisterFunction, void,                                                              \
      (void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName,      \
       int thread_limit, void *tid, void *bid, obs_dim3 *bDim, obs_dim3 *gDim, int *wSize),      \
      (fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit, tid, bid, bDim, gDim, wSize)) \
    X(__cudaRegisterVar, void,                                                                   \
      (void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext, \
       size_t size, int constant, int global),                                                   \
      (fatCubinHandle, hostVar, deviceAddress, deviceName, ext, size, constant, global))         \
    X(__cudaPushCallConfiguration, unsigned,                                                     \
      (obs_dim3 grid, obs_dim3 block, size_t shmem, void *stream), (grid, block, shmem, stream)) \
    X(__cudaPopCallConfiguration, obs_cudaError_t,                                               \
      (obs_dim3 * grid, obs_dim3 *block, size_t *shmem, void *stream), (grid, block, shmem, stream)) \
    X(__cudaGetKernel, obs_cudaError_t, (obs_cudaKernel_t * kernel, const void *hostFun),        \
      (kernel, hostFun))                                                                         \
    X(cudaGetErrorString, const char *, (obs_cudaError_t error), (error))                        \
    X(cudaGetErrorName, const char *, (obs_cudaError_t error), (error))                          \
    X(cudaGetLastError, obs_cudaError_t, (void), ())                                             \
    X(cudaPeekAtLastError, obs_cudaError_t, (void), ())                                          \
    X(cudaGetDeviceCount, obs_cudaError_t, (int *count), (count))                                \
    X(cudaRuntimeGetVersion, obs_cudaError_t, (int *version), (version))                         \
    X(cudaDriverGetVersion, obs_cudaError_t, (int *version), (version))                          \
    X(cudaGetDevice, obs_cudaError_t, (int *device), (device))                                   \
    X(cudaSetDevice, obs_cudaError_t, (int device), (device))                                    \
    X(cudaStreamCreate, obs_cudaError_t, (obs_cudaStream_t * stream), (stream))                  \
    X(cudaStreamCreateWithFlags, obs_cudaError_t, (obs_cudaStream_t * stream, unsigned int flags), \
      (stream, flags))                                                                           \
    X(cudaStreamDestroy, obs_cudaError_t, (obs_cudaStream_t stream), (stream))                   \
    X(cudaStreamQuery, obs_cudaError_t, (obs_cudaStream_t stream), (stream))                     \
    X(cudaEventCreate, obs_cudaError_t, (obs_cudaEvent_t * event), (event))                      \
    X(cudaEventCreateWithFlags, obs_cudaError_t, (obs_cudaEvent_t * event, unsigned int flags),  \
      (event, flags))                                                                            \
    X(cudaEventDestroy, obs_cudaError_t, (obs_cudaEvent_t event), (event))                       \
    X(cudaEventRecord, obs_cudaError_t, (obs_cudaEvent_t event, obs_cudaStream_t stream),        \
      (event, stream))                                                                           \
    X(cudaEventRecord_ptsz, obs_cudaError_t, (obs_cudaEvent_t event, obs_cudaStream_t stream),   \
      (event, stream))                                                                           \
    X(cudaEventQuery, obs_cudaError_t, (obs_cudaEvent_t event), (event))                         \
    X(cudaEventElapsedTime, obs_cudaError_t,                                                     \
      (float *ms, obs_cudaEvent_t start, obs_cudaEvent_t end), (ms, start, end))                 \
    X(cudaStreamBeginCapture, obs_cudaError_t,                                                   \
      (obs_cudaStream_t stream, obs_cudaStreamCaptureMode mode), (stream, mode))                 \
    X(cudaStreamEndCapture, obs_cudaError_t, (obs_cudaStream_t stream, obs_cudaGraph_t *graph),  \
      (stream, graph))                                                                           \
    X(cudaStreamIsCapturing, obs_cudaError_t,                                                    \
      (obs_cudaStream_t stream, obs_cudaStreamCaptureStatus *status), (stream, status))          \
    X(cudaGraphInstantiate, obs_cudaError_t,                                                     \
      (obs_cudaGraphExec_t * exec, obs_cudaGraph_t graph, unsigned long long flags),             \
      (exec, graph, flags))                                                                      \
    X(cudaGraphGetNodes, obs_cudaError_t,                                                        \
      (obs_cudaGraph_t graph, obs_cudaGraphNode_t *nodes, size_t *numNodes),                     \
      (graph, nodes, numNodes))                                                                  \
    X(cudaGraphNodeGetType, obs_cudaError_t, (obs_cudaGraphNode_t node, obs_cudaGraphNodeType *pType), \
      (node, pType))                                                                             \
    X(cudaGraphKernelNodeGetParams, obs_cudaError_t,                                             \
      (obs_cudaGraphNode_t node, struct obs_cudaKernelNodeParams *pNodeParams), (node, pNodeParams)) \
    X(cudaGraphExecDestroy, obs_cudaError_t, (obs_cudaGraphExec_t exec), (exec))                 \
    X(cudaGraphDestroy, obs_cudaError_t, (obs_cudaGraph_t graph), (graph))

/* Profiler control (cuda_profiler_api.h): called by the shim itself at the
 * bounds of an OBS_CAPTURE window (docs/capture.md), never hooked. */
#define OBS_CUDA_RUNTIME_PROFILER_API(X)                                                         \
    X(cudaProfilerStart, obs_cudaError_t, (void), ())                                            \
    X(cudaProfilerStop, obs_cudaError_t, (void), ())

#define OBS_CUDA_DECLARE_FN(name, ret, params, args) \
    typedef ret(*obs_fn_##name) params;
OBS_CUDA_RUNTIME_API(OBS_CUDA_DECLARE_FN)
OBS_CUDA_RUNTIME_SUPPORT_API(OBS_CUDA_DECLARE_FN)
OBS_CUDA_RUNTIME_PROFILER_API(OBS_CUDA_DECLARE_FN)
#undef OBS_CUDA_DECLARE_FN

/* Prototypes under the real names, for code that defines or calls them
 * (the simulator, the test programs, the shim's wrappers). Define
 * OBS_CUDA_ABI_NO_PROTOTYPES to skip them (e.g. next to the real headers). */
#ifndef OBS_CUDA_ABI_NO_PROTOTYPES
#define OBS_CUDA_PROTOTYPE(name, ret, params, args) ret name params;
OBS_CUDA_RUNTIME_API(OBS_CUDA_PROTOTYPE)
OBS_CUDA_RUNTIME_SUPPORT_API(OBS_CUDA_PROTOTYPE)
OBS_CUDA_RUNTIME_PROFILER_API(OBS_CUDA_PROTOTYPE)
#undef OBS_CUDA_PROTOTYPE
#endif

#endif
