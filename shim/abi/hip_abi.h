/* The slice of the HIP runtime ABI (libamdhip64.so.5, HIP 5.2) that obsshim,
 * its simulated runtime and its C test programs need, declared here so that
 * none of them needs ROCm. Names carry an obs_ prefix so that this header can
 * sit beside the real hip_runtime_api.h (tests/t_abi_hip.c compares the two).
 * Values and layouts follow hip_runtime_api.h and driver_types.h for the
 * AMD platform.
 *
 * OBS_HIP_ABI_REAL_TYPES (tests/t_abi_hip.c only, after the real headers):
 * the obs_ type names become the real HIP types, so that the prototypes below
 * are redeclarations of the real ones and any signature mismatch fails to
 * compile. The struct obs_* tags stay defined for the layout checks. */
#ifndef OBS_HIP_ABI_H
#define OBS_HIP_ABI_H

#include <stddef.h>
#include <stdint.h>

enum { /* hipError_t */
    obs_hipSuccess = 0,
    obs_hipErrorInvalidValue = 1,
    obs_hipErrorOutOfMemory = 2,
    obs_hipErrorNotInitialized = 3,
    obs_hipErrorInvalidConfiguration = 9,
    obs_hipErrorInvalidPitchValue = 12,
    obs_hipErrorInvalidSymbol = 13,
    obs_hipErrorInvalidDevicePointer = 17,
    obs_hipErrorInvalidMemcpyDirection = 21,
    obs_hipErrorMissingConfiguration = 52,
    obs_hipErrorInvalidDeviceFunction = 98,
    obs_hipErrorNoDevice = 100,
    obs_hipErrorInvalidDevice = 101,
    obs_hipErrorInvalidImage = 200,
    obs_hipErrorNotFound = 500,
    obs_hipErrorInvalidHandle = 400, /* = hipErrorInvalidResourceHandle */
    obs_hipErrorIllegalState = 401,
    obs_hipErrorNotReady = 600,
    obs_hipErrorContextIsDestroyed = 709,
    obs_hipErrorNotSupported = 801,
    obs_hipErrorStreamCaptureUnsupported = 900,
    obs_hipErrorStreamCaptureInvalidated = 901,
    obs_hipErrorStreamCaptureUnmatched = 903,
    obs_hipErrorStreamCaptureWrongThread = 908,
    obs_hipErrorUnknown = 999
};

enum { /* hipMemcpyKind */
    obs_hipMemcpyHostToHost = 0,
    obs_hipMemcpyHostToDevice = 1,
    obs_hipMemcpyDeviceToHost = 2,
    obs_hipMemcpyDeviceToDevice = 3,
    obs_hipMemcpyDefault = 4
};

enum { /* hipStreamCaptureMode, hipStreamCaptureStatus */
    obs_hipStreamCaptureModeGlobal = 0,
    obs_hipStreamCaptureModeThreadLocal = 1,
    obs_hipStreamCaptureModeRelaxed = 2,
    obs_hipStreamCaptureStatusNone = 0,
    obs_hipStreamCaptureStatusActive = 1,
    obs_hipStreamCaptureStatusInvalidated = 2
};

/* Stream and event flags (#defines in hip_runtime_api.h). */
#define OBS_HIP_STREAM_DEFAULT 0x00u
#define OBS_HIP_STREAM_NON_BLOCKING 0x01u
#define OBS_HIP_EVENT_DEFAULT 0x0u
#define OBS_HIP_EVENT_BLOCKING_SYNC 0x1u
#define OBS_HIP_EVENT_DISABLE_TIMING 0x2u
#define OBS_HIP_EXT_ANY_ORDER_LAUNCH 0x01u

/* dim3: three uint32_t, passed by value (12 bytes, two integer registers). */
struct obs_hipDim3 {
    uint32_t x, y, z;
};
struct obs_hipPitchedPtr {
    void *ptr;
    size_t pitch;
    size_t xsize;
    size_t ysize;
};
struct obs_hipExtent {
    size_t width, height, depth;
};
struct obs_hipPos {
    size_t x, y, z;
};
/* hipKernelNodeParams (HIP 5.2 hip_runtime_api.h): its own member order. */
struct obs_hipKernelNodeParams {
    struct obs_hipDim3 blockDim;
    void **extra;
    void *func;
    struct obs_hipDim3 gridDim;
    void **kernelParams;
    unsigned int sharedMemBytes;
};
/* hipGraphNodeType as HIP 5.2 numbers it (kernel 1 ...). HIP 5.3 and later
 * renumbered it as CUDA does (kernel 0, memcpy 1 ...): the shim asks the
 * runtime's version before it trusts a type (hooks_hip.c). */
enum {
    obs_hipGraphNodeTypeKernel = 1,
    obs_hipGraphNodeTypeMemcpy = 2,
    obs_hipGraphNodeTypeMemset = 3,
    obs_hipGraphNodeTypeGraph = 5,
    obs_hipGraphNodeTypeEmpty = 6,
    obs_hipGraphNodeTypeEventRecord = 8
};
#define OBS_HIP_GRAPH_NODE_KERNEL_SINCE_5_3 0 /* hipGraphNodeTypeKernel from HIP 5.3 on */

struct obs_hipArray; /* opaque here: the simulator supports no arrays */
struct obs_hipMemcpy3DParms {
    struct obs_hipArray *srcArray;
    struct obs_hipPos srcPos;
    struct obs_hipPitchedPtr srcPtr;
    struct obs_hipArray *dstArray;
    struct obs_hipPos dstPos;
    struct obs_hipPitchedPtr dstPtr;
    struct obs_hipExtent extent;
    int kind; /* enum hipMemcpyKind */
};

/* The wrapper hipcc emits in .hipFatBinSegment and hands to
 * __hipRegisterFatBinary; the binary is a clang offload bundle. */
struct obs_hip_fatbin_wrapper {
    uint32_t magic; /* "HIPF" */
    uint32_t version;
    const void *binary;
    void *unused;
};
#define OBS_HIP_FATBIN_MAGIC 0x48495046u

#ifdef OBS_HIP_ABI_REAL_TYPES
typedef hipError_t obs_hipError_t;
typedef hipMemcpyKind obs_hipMemcpyKind;
typedef hipStreamCaptureMode obs_hipStreamCaptureMode;
typedef hipStreamCaptureStatus obs_hipStreamCaptureStatus;
typedef dim3 obs_hipDim3;
typedef hipPitchedPtr obs_hipPitchedPtr;
typedef hipExtent obs_hipExtent;
typedef hipMemcpy3DParms obs_hipMemcpy3DParms;
typedef hipStream_t obs_hipStream_t;
typedef hipEvent_t obs_hipEvent_t;
typedef hipModule_t obs_hipModule_t;
typedef hipFunction_t obs_hipFunction_t;
typedef hipGraph_t obs_hipGraph_t;
typedef hipGraphExec_t obs_hipGraphExec_t;
typedef hipGraphNode_t obs_hipGraphNode_t;
typedef hipGraphNodeType obs_hipGraphNodeType;
typedef hipKernelNodeParams obs_hipKernelNodeParams;
typedef hipDeviceptr_t obs_hipDeviceptr_t;
#else
typedef int obs_hipError_t;             /* enum: 4 bytes */
typedef int obs_hipMemcpyKind;          /* enum */
typedef int obs_hipStreamCaptureMode;   /* enum */
typedef int obs_hipStreamCaptureStatus; /* enum */
typedef struct obs_hipDim3 obs_hipDim3;
typedef struct obs_hipPitchedPtr obs_hipPitchedPtr;
typedef struct obs_hipExtent obs_hipExtent;
typedef struct obs_hipMemcpy3DParms obs_hipMemcpy3DParms;
typedef struct obs_ihipStream_t *obs_hipStream_t;
typedef struct obs_ihipEvent_t *obs_hipEvent_t;
typedef struct obs_ihipModule_t *obs_hipModule_t;
typedef struct obs_ihipModuleSymbol_t *obs_hipFunction_t;
typedef struct obs_ihipGraph *obs_hipGraph_t;
typedef struct obs_hipGraphExec *obs_hipGraphExec_t;
typedef struct obs_hipGraphNode *obs_hipGraphNode_t;
typedef int obs_hipGraphNodeType; /* enum */
typedef struct obs_hipKernelNodeParams obs_hipKernelNodeParams;
typedef void *obs_hipDeviceptr_t;
#endif

/* Special stream handle: the calling thread's default stream. */
#define OBS_HIP_STREAM_PER_THREAD ((obs_hipStream_t)2)

/* Every runtime entry point obsshim hooks (and the simulator provides), as
 * an X-macro: X(name, return type, (parameters), (argument names)).
 * Exactly the recording entry points libamdhip64.so.5 (HIP 5.2) exports, with
 * the _spt variants it has. hipExtModuleLaunchKernel is exported with C++
 * linkage: see OBS_HIP_CXX_SYMBOLS. */
#define OBS_HIP_API(X)                                                                           \
    /* launches */                                                                               \
    X(hipLaunchKernel, obs_hipError_t,                                                           \
      (const void *function_address, obs_hipDim3 numBlocks, obs_hipDim3 dimBlocks, void **args,  \
       size_t sharedMemBytes, obs_hipStream_t stream),                                           \
      (function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream))                    \
    X(hipLaunchKernel_spt, obs_hipError_t,                                                       \
      (const void *function_address, obs_hipDim3 numBlocks, obs_hipDim3 dimBlocks, void **args,  \
       size_t sharedMemBytes, obs_hipStream_t stream),                                           \
      (function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream))                    \
    X(hipModuleLaunchKernel, obs_hipError_t,                                                     \
      (obs_hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, \
       unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                   \
       unsigned int sharedMemBytes, obs_hipStream_t stream, void **kernelParams, void **extra),  \
      (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, stream, \
       kernelParams, extra))                                                                     \
    X(hipExtLaunchKernel, obs_hipError_t,                                                        \
      (const void *function_address, obs_hipDim3 numBlocks, obs_hipDim3 dimBlocks, void **args,  \
       size_t sharedMemBytes, obs_hipStream_t stream, obs_hipEvent_t startEvent,                 \
       obs_hipEvent_t stopEvent, int flags),                                                     \
      (function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream, startEvent,         \
       stopEvent, flags))                                                                        \
    /* global work sizes are in work items (grid x block), not blocks */                        \
    X(hipExtModuleLaunchKernel, obs_hipError_t,                                                  \
      (obs_hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,                  \
       uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,               \
       uint32_t localWorkSizeZ, size_t sharedMemBytes, obs_hipStream_t hStream,                  \
       void **kernelParams, void **extra, obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent,   \
       uint32_t flags),                                                                          \
      (f, globalWorkSizeX, globalWorkSizeY, globalWorkSizeZ, localWorkSizeX, localWorkSizeY,     \
       localWorkSizeZ, sharedMemBytes, hStream, kernelParams, extra, startEvent, stopEvent,      \
       flags))                                                                                   \
    X(hipLaunchCooperativeKernel, obs_hipError_t,                                                \
      (const void *f, obs_hipDim3 gridDim, obs_hipDim3 blockDimX, void **kernelParams,           \
       unsigned int sharedMemBytes, obs_hipStream_t stream),                                     \
      (f, gridDim, blockDimX, kernelParams, sharedMemBytes, stream))                             \
    X(hipLaunchCooperativeKernel_spt, obs_hipError_t,                                            \
      (const void *f, obs_hipDim3 gridDim, obs_hipDim3 blockDim, void **kernelParams,            \
       uint32_t sharedMemBytes, obs_hipStream_t hStream),                                        \
      (f, gridDim, blockDim, kernelParams, sharedMemBytes, hStream))                             \
    X(hipGraphLaunch, obs_hipError_t, (obs_hipGraphExec_t graphExec, obs_hipStream_t stream),    \
      (graphExec, stream))                                                                       \
    /* copies */                                                                                 \
    X(hipMemcpy, obs_hipError_t,                                                                 \
      (void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind),                    \
      (dst, src, sizeBytes, kind))                                                               \
    X(hipMemcpy_spt, obs_hipError_t,                                                             \
      (void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind),                    \
      (dst, src, sizeBytes, kind))                                                               \
    X(hipMemcpyAsync, obs_hipError_t,                                                            \
      (void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind,                     \
       obs_hipStream_t stream),                                                                  \
      (dst, src, sizeBytes, kind, stream))                                                       \
    X(hipMemcpyAsync_spt, obs_hipError_t,                                                        \
      (void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind,                     \
       obs_hipStream_t stream),                                                                  \
      (dst, src, sizeBytes, kind, stream))                                                       \
    X(hipMemcpyHtoD, obs_hipError_t, (obs_hipDeviceptr_t dst, void *src, size_t sizeBytes),      \
      (dst, src, sizeBytes))                                                                     \
    X(hipMemcpyDtoH, obs_hipError_t, (void *dst, obs_hipDeviceptr_t src, size_t sizeBytes),      \
      (dst, src, sizeBytes))                                                                     \
    X(hipMemcpyDtoD, obs_hipError_t,                                                             \
      (obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src, size_t sizeBytes), (dst, src, sizeBytes)) \
    X(hipMemcpyHtoDAsync, obs_hipError_t,                                                        \
      (obs_hipDeviceptr_t dst, void *src, size_t sizeBytes, obs_hipStream_t stream),             \
      (dst, src, sizeBytes, stream))                                                             \
    X(hipMemcpyDtoHAsync, obs_hipError_t,                                                        \
      (void *dst, obs_hipDeviceptr_t src, size_t sizeBytes, obs_hipStream_t stream),             \
      (dst, src, sizeBytes, stream))                                                             \
    X(hipMemcpyDtoDAsync, obs_hipError_t,                                                        \
      (obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src, size_t sizeBytes, obs_hipStream_t stream), \
      (dst, src, sizeBytes, stream))                                                             \
    X(hipMemcpy2D, obs_hipError_t,                                                               \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_hipMemcpyKind kind),                                                                  \
      (dst, dpitch, src, spitch, width, height, kind))                                           \
    X(hipMemcpy2D_spt, obs_hipError_t,                                                           \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_hipMemcpyKind kind),                                                                  \
      (dst, dpitch, src, spitch, width, height, kind))                                           \
    X(hipMemcpy2DAsync, obs_hipError_t,                                                          \
      (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,     \
       obs_hipMemcpyKind kind, obs_hipStream_t stream),                                          \
      (dst, dpitch, src, spitch, width, height, kind, stream))                                   \
    X(hipMemcpy3D, obs_hipError_t, (const obs_hipMemcpy3DParms *p), (p))                  \
    X(hipMemcpy3D_spt, obs_hipError_t, (const obs_hipMemcpy3DParms *p), (p))              \
    X(hipMemcpy3DAsync, obs_hipError_t,                                                          \
      (const obs_hipMemcpy3DParms *p, obs_hipStream_t stream), (p, stream))               \
    X(hipMemcpyPeer, obs_hipError_t,                                                             \
      (void *dst, int dstDeviceId, const void *src, int srcDeviceId, size_t sizeBytes),          \
      (dst, dstDeviceId, src, srcDeviceId, sizeBytes))                                           \
    X(hipMemcpyPeerAsync, obs_hipError_t,                                                        \
      (void *dst, int dstDeviceId, const void *src, int srcDevice, size_t sizeBytes,             \
       obs_hipStream_t stream),                                                                  \
      (dst, dstDeviceId, src, srcDevice, sizeBytes, stream))                                     \
    X(hipMemcpyToSymbol, obs_hipError_t,                                                         \
      (const void *symbol, const void *src, size_t sizeBytes, size_t offset,                     \
       obs_hipMemcpyKind kind),                                                                  \
      (symbol, src, sizeBytes, offset, kind))                                                    \
    X(hipMemcpyToSymbol_spt, obs_hipError_t,                                                     \
      (const void *symbol, const void *src, size_t sizeBytes, size_t offset,                     \
       obs_hipMemcpyKind kind),                                                                  \
      (symbol, src, sizeBytes, offset, kind))                                                    \
    X(hipMemcpyFromSymbol, obs_hipError_t,                                                       \
      (void *dst, const void *symbol, size_t sizeBytes, size_t offset, obs_hipMemcpyKind kind),  \
      (dst, symbol, sizeBytes, offset, kind))                                                    \
    X(hipMemcpyFromSymbol_spt, obs_hipError_t,                                                   \
      (void *dst, const void *symbol, size_t sizeBytes, size_t offset, obs_hipMemcpyKind kind),  \
      (dst, symbol, sizeBytes, offset, kind))                                                    \
    X(hipMemcpyToSymbolAsync, obs_hipError_t,                                                    \
      (const void *symbol, const void *src, size_t sizeBytes, size_t offset,                     \
       obs_hipMemcpyKind kind, obs_hipStream_t stream),                                          \
      (symbol, src, sizeBytes, offset, kind, stream))                                            \
    X(hipMemcpyFromSymbolAsync, obs_hipError_t,                                                  \
      (void *dst, const void *symbol, size_t sizeBytes, size_t offset, obs_hipMemcpyKind kind,   \
       obs_hipStream_t stream),                                                                  \
      (dst, symbol, sizeBytes, offset, kind, stream))                                            \
    /* memsets */                                                                                \
    X(hipMemset, obs_hipError_t, (void *dst, int value, size_t sizeBytes),                       \
      (dst, value, sizeBytes))                                                                   \
    X(hipMemset_spt, obs_hipError_t, (void *dst, int value, size_t sizeBytes),                   \
      (dst, value, sizeBytes))                                                                   \
    X(hipMemsetAsync, obs_hipError_t,                                                            \
      (void *dst, int value, size_t sizeBytes, obs_hipStream_t stream),                          \
      (dst, value, sizeBytes, stream))                                                           \
    X(hipMemsetD8, obs_hipError_t, (obs_hipDeviceptr_t dest, unsigned char value, size_t count), \
      (dest, value, count))                                                                      \
    X(hipMemsetD8Async, obs_hipError_t,                                                          \
      (obs_hipDeviceptr_t dest, unsigned char value, size_t count, obs_hipStream_t stream),      \
      (dest, value, count, stream))                                                              \
    X(hipMemsetD16, obs_hipError_t,                                                              \
      (obs_hipDeviceptr_t dest, unsigned short value, size_t count), (dest, value, count))       \
    X(hipMemsetD16Async, obs_hipError_t,                                                         \
      (obs_hipDeviceptr_t dest, unsigned short value, size_t count, obs_hipStream_t stream),     \
      (dest, value, count, stream))                                                              \
    X(hipMemsetD32, obs_hipError_t, (obs_hipDeviceptr_t dest, int value, size_t count),          \
      (dest, value, count))                                                                      \
    X(hipMemsetD32Async, obs_hipError_t,                                                         \
      (obs_hipDeviceptr_t dst, int value, size_t count, obs_hipStream_t stream),                 \
      (dst, value, count, stream))                                                               \
    X(hipMemset2D, obs_hipError_t,                                                               \
      (void *dst, size_t pitch, int value, size_t width, size_t height),                         \
      (dst, pitch, value, width, height))                                                        \
    X(hipMemset2D_spt, obs_hipError_t,                                                           \
      (void *dst, size_t pitch, int value, size_t width, size_t height),                         \
      (dst, pitch, value, width, height))                                                        \
    X(hipMemset2DAsync, obs_hipError_t,                                                          \
      (void *dst, size_t pitch, int value, size_t width, size_t height, obs_hipStream_t stream), \
      (dst, pitch, value, width, height, stream))                                                \
    X(hipMemset3D, obs_hipError_t,                                                               \
      (obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent),                        \
      (pitchedDevPtr, value, extent))                                                            \
    X(hipMemset3D_spt, obs_hipError_t,                                                           \
      (obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent),                        \
      (pitchedDevPtr, value, extent))                                                            \
    X(hipMemset3DAsync, obs_hipError_t,                                                          \
      (obs_hipPitchedPtr pitchedDevPtr, int value, obs_hipExtent extent,                         \
       obs_hipStream_t stream),                                                                  \
      (pitchedDevPtr, value, extent, stream))                                                    \
    /* synchronisation */                                                                        \
    X(hipDeviceSynchronize, obs_hipError_t, (void), ())                                          \
    X(hipStreamSynchronize, obs_hipError_t, (obs_hipStream_t stream), (stream))                  \
    X(hipStreamSynchronize_spt, obs_hipError_t, (obs_hipStream_t stream), (stream))              \
    X(hipEventSynchronize, obs_hipError_t, (obs_hipEvent_t event), (event))                      \
    X(hipStreamWaitEvent, obs_hipError_t,                                                        \
      (obs_hipStream_t stream, obs_hipEvent_t event, unsigned int flags),                        \
      (stream, event, flags))                                                                    \
    X(hipStreamWaitEvent_spt, obs_hipError_t,                                                    \
      (obs_hipStream_t stream, obs_hipEvent_t event, unsigned int flags),                        \
      (stream, event, flags))                                                                    \
    /* allocation */                                                                             \
    X(hipMalloc, obs_hipError_t, (void **ptr, size_t size), (ptr, size))                         \
    X(hipFree, obs_hipError_t, (void *ptr), (ptr))                                               \
    X(hipMallocAsync, obs_hipError_t, (void **dev_ptr, size_t size, obs_hipStream_t stream),     \
      (dev_ptr, size, stream))                                                                   \
    X(hipFreeAsync, obs_hipError_t, (void *dev_ptr, obs_hipStream_t stream), (dev_ptr, stream))

/* Entries of OBS_HIP_API whose exported symbol is a C++ name (hip_ext.h
 * declares them outside extern "C"): X(name, "symbol"). The prototypes
 * below bind the C name to that symbol; dlsym needs the symbol string. */
#define OBS_HIP_SYMBOL_hipExtModuleLaunchKernel \
    "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"
#define OBS_HIP_CXX_SYMBOLS(X) X(hipExtModuleLaunchKernel, OBS_HIP_SYMBOL_hipExtModuleLaunchKernel)

/* Entry points the shim uses itself or observes without recording a call
 * (registration gives kernel names; events give GPU time; modules give
 * hipFunction_t handles), and what the simulator needs to run hipcc-built
 * programs. hipGetProcAddress does not exist in HIP 5.2. */
#define OBS_HIP_SUPPORT_API(X)                                                                   \
    /* registration, emitted by hipcc into every translation unit with kernels */                \
    X(__hipRegisterFatBinary, void **, (const void *data), (data))                               \
    X(__hipRegisterFunction, void,                                                               \
      (void **modules, const void *hostFunction, char *deviceFunction, const char *deviceName,   \
       unsigned int threadLimit, void *tid, void *bid, obs_hipDim3 *blockDim,                    \
       obs_hipDim3 *gridDim, int *wSize),                                                        \
      (modules, hostFunction, deviceFunction, deviceName, threadLimit, tid, bid, blockDim,       \
       gridDim, wSize))                                                                          \
    X(__hipRegisterVar, void,                                                                    \
      (void **modules, void *var, char *hostVar, char *deviceVar, int ext, size_t size,          \
       int constant, int global),                                                                \
      (modules, var, hostVar, deviceVar, ext, size, constant, global))                           \
    X(__hipUnregisterFatBinary, void, (void **modules), (modules))                               \
    /* <<<>>>: push in the caller, pop in the kernel's host stub */                             \
    X(__hipPushCallConfiguration, obs_hipError_t,                                                \
      (obs_hipDim3 gridDim, obs_hipDim3 blockDim, size_t sharedMem, obs_hipStream_t stream),     \
      (gridDim, blockDim, sharedMem, stream))                                                    \
    X(__hipPopCallConfiguration, obs_hipError_t,                                                 \
      (obs_hipDim3 * gridDim, obs_hipDim3 *blockDim, size_t *sharedMem,                          \
       obs_hipStream_t *stream),                                                                 \
      (gridDim, blockDim, sharedMem, stream))                                                    \
    /* modules and kernel names */                                                               \
    X(hipModuleLoadData, obs_hipError_t, (obs_hipModule_t * module, const void *image),          \
      (module, image))                                                                           \
    X(hipModuleGetFunction, obs_hipError_t,                                                      \
      (obs_hipFunction_t * function, obs_hipModule_t module, const char *kname),                 \
      (function, module, kname))                                                                 \
    X(hipModuleUnload, obs_hipError_t, (obs_hipModule_t module), (module))                       \
    X(hipKernelNameRef, const char *, (const obs_hipFunction_t f), (f))                          \
    X(hipKernelNameRefByPtr, const char *, (const void *hostFunction, obs_hipStream_t stream),   \
      (hostFunction, stream))                                                                    \
    /* errors */                                                                                 \
    X(hipGetLastError, obs_hipError_t, (void), ())                                               \
    X(hipPeekAtLastError, obs_hipError_t, (void), ())                                            \
    X(hipGetErrorName, const char *, (obs_hipError_t hip_error), (hip_error))                    \
    X(hipGetErrorString, const char *, (obs_hipError_t hipError), (hipError))                    \
    /* device */                                                                                 \
    X(hipInit, obs_hipError_t, (unsigned int flags), (flags))                                    \
    X(hipGetDeviceCount, obs_hipError_t, (int *count), (count))                                  \
    X(hipGetDevice, obs_hipError_t, (int *deviceId), (deviceId))                                 \
    X(hipSetDevice, obs_hipError_t, (int deviceId), (deviceId))                                  \
    X(hipRuntimeGetVersion, obs_hipError_t, (int *runtimeVersion), (runtimeVersion))             \
    /* streams */                                                                                \
    X(hipStreamCreate, obs_hipError_t, (obs_hipStream_t * stream), (stream))                     \
    X(hipStreamCreateWithFlags, obs_hipError_t, (obs_hipStream_t * stream, unsigned int flags),  \
      (stream, flags))                                                                           \
    X(hipStreamDestroy, obs_hipError_t, (obs_hipStream_t stream), (stream))                      \
    X(hipStreamQuery, obs_hipError_t, (obs_hipStream_t stream), (stream))                        \
    /* events */                                                                                 \
    X(hipEventCreate, obs_hipError_t, (obs_hipEvent_t * event), (event))                         \
    X(hipEventCreateWithFlags, obs_hipError_t, (obs_hipEvent_t * event, unsigned flags),         \
      (event, flags))                                                                            \
    X(hipEventDestroy, obs_hipError_t, (obs_hipEvent_t event), (event))                          \
    X(hipEventRecord, obs_hipError_t, (obs_hipEvent_t event, obs_hipStream_t stream),            \
      (event, stream))                                                                           \
    X(hipEventQuery, obs_hipError_t, (obs_hipEvent_t event), (event))                            \
    X(hipEventElapsedTime, obs_hipError_t,                                                       \
      (float *ms, obs_hipEvent_t start, obs_hipEvent_t stop), (ms, start, stop))                 \
    /* stream capture and graphs */                                                              \
    X(hipStreamBeginCapture, obs_hipError_t,                                                     \
      (obs_hipStream_t stream, obs_hipStreamCaptureMode mode), (stream, mode))                   \
    X(hipStreamEndCapture, obs_hipError_t, (obs_hipStream_t stream, obs_hipGraph_t *pGraph),     \
      (stream, pGraph))                                                                          \
    X(hipStreamIsCapturing, obs_hipError_t,                                                      \
      (obs_hipStream_t stream, obs_hipStreamCaptureStatus *pCaptureStatus),                      \
      (stream, pCaptureStatus))                                                                  \
    X(hipGraphInstantiate, obs_hipError_t,                                                       \
      (obs_hipGraphExec_t * pGraphExec, obs_hipGraph_t graph, obs_hipGraphNode_t *pErrorNode,    \
       char *pLogBuffer, size_t bufferSize),                                                     \
      (pGraphExec, graph, pErrorNode, pLogBuffer, bufferSize))                                   \
    X(hipGraphGetNodes, obs_hipError_t,                                                          \
      (obs_hipGraph_t graph, obs_hipGraphNode_t *nodes, size_t *numNodes),                       \
      (graph, nodes, numNodes))                                                                  \
    X(hipGraphNodeGetType, obs_hipError_t, (obs_hipGraphNode_t node, obs_hipGraphNodeType *pType), \
      (node, pType))                                                                             \
    X(hipGraphKernelNodeGetParams, obs_hipError_t,                                               \
      (obs_hipGraphNode_t node, obs_hipKernelNodeParams *pNodeParams), (node, pNodeParams))      \
    X(hipGraphExecDestroy, obs_hipError_t, (obs_hipGraphExec_t graphExec), (graphExec))          \
    X(hipGraphDestroy, obs_hipError_t, (obs_hipGraph_t graph), (graph))

/* Profiler control (hip_runtime_api.h, node hip_4.2): called by the shim
 * itself at the bounds of an OBS_CAPTURE window (docs/capture.md), never
 * hooked. */
#define OBS_HIP_PROFILER_API(X)                                                                  \
    X(hipProfilerStart, obs_hipError_t, (void), ())                                              \
    X(hipProfilerStop, obs_hipError_t, (void), ())

#define OBS_HIP_DECLARE_FN(name, ret, params, args) typedef ret(*obs_fn_##name) params;
OBS_HIP_API(OBS_HIP_DECLARE_FN)
OBS_HIP_SUPPORT_API(OBS_HIP_DECLARE_FN)
OBS_HIP_PROFILER_API(OBS_HIP_DECLARE_FN)
#undef OBS_HIP_DECLARE_FN

/* Prototypes under the real names, for code that defines or calls them
 * (the simulator, the test programs, the shim's wrappers). Define
 * OBS_HIP_ABI_NO_PROTOTYPES to skip them. The C++ symbols are bound first:
 * an asm label must be on the first declaration. */
#ifndef OBS_HIP_ABI_NO_PROTOTYPES
obs_hipError_t hipExtModuleLaunchKernel(
    obs_hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
    uint32_t localWorkSizeZ, size_t sharedMemBytes, obs_hipStream_t hStream, void **kernelParams,
    void **extra, obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent, uint32_t flags)
    __asm__(OBS_HIP_SYMBOL_hipExtModuleLaunchKernel);
#define OBS_HIP_PROTOTYPE(name, ret, params, args) ret name params;
OBS_HIP_API(OBS_HIP_PROTOTYPE)
OBS_HIP_SUPPORT_API(OBS_HIP_PROTOTYPE)
OBS_HIP_PROFILER_API(OBS_HIP_PROTOTYPE)
#undef OBS_HIP_PROTOTYPE
#endif

#endif
