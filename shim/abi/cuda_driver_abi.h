/* The slice of the CUDA driver API (libcuda.so.1) that obsshim, its
 * simulated driver and its C test programs need, declared here so that none
 * of them needs the CUDA toolkit. Names carry an obs_ prefix so that this
 * header can sit beside the real cuda.h (tests/t_abi_cuda_driver.c compares
 * the two: sizes, offsets, enum values, and every symbol against the real
 * libcuda's stub).
 *
 * Handle types share their struct tags with shim/abi/cuda_abi.h
 * (obs_CUstream_st ...), as CUDA's runtime and driver handles are the same
 * objects: a cudaStream_t is a CUstream.
 *
 * Layouts and values follow CUDA 13's cuda.h; the API versions in
 * OBS_CUDA_DRIVER_PROC_VERSIONS come from cudaTypedefs.h (PFN_<name>_v<N>). */
#ifndef OBS_CUDA_DRIVER_ABI_H
#define OBS_CUDA_DRIVER_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int obs_CUresult; /* enum cudaError_enum: 4 bytes */
enum {
    OBS_CUDA_SUCCESS = 0,
    OBS_CUDA_ERROR_INVALID_VALUE = 1,
    OBS_CUDA_ERROR_OUT_OF_MEMORY = 2,
    OBS_CUDA_ERROR_NOT_INITIALIZED = 3,
    OBS_CUDA_ERROR_NO_DEVICE = 100,
    OBS_CUDA_ERROR_INVALID_DEVICE = 101,
    OBS_CUDA_ERROR_INVALID_IMAGE = 200,
    OBS_CUDA_ERROR_INVALID_CONTEXT = 201,
    OBS_CUDA_ERROR_FILE_NOT_FOUND = 301,
    OBS_CUDA_ERROR_INVALID_HANDLE = 400,
    OBS_CUDA_ERROR_ILLEGAL_STATE = 401,
    OBS_CUDA_ERROR_NOT_FOUND = 500,
    OBS_CUDA_ERROR_NOT_READY = 600,
    OBS_CUDA_ERROR_NOT_SUPPORTED = 801,
    OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
    OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
    OBS_CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
    OBS_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
    OBS_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
    OBS_CUDA_ERROR_UNKNOWN = 999
};

typedef unsigned long long obs_CUdeviceptr; /* CUdeviceptr_v2 */
typedef unsigned int obs_CUdeviceptr_v1;    /* the CUDA 2.x 32-bit ABI (unsuffixed symbols) */
typedef int obs_CUdevice;
typedef uint64_t obs_cuuint64_t;

typedef struct obs_CUctx_st *obs_CUcontext;
typedef struct obs_CUmod_st *obs_CUmodule;
typedef struct obs_CUfunc_st *obs_CUfunction;
typedef struct obs_CUlib_st *obs_CUlibrary;
typedef struct obs_CUkern_st *obs_CUkernel; /* the same object as a cudaKernel_t */
typedef struct obs_CUevent_st *obs_CUevent;
typedef struct obs_CUstream_st *obs_CUstream;
typedef struct obs_CUgraph_st *obs_CUgraph;
typedef struct obs_CUgraphNode_st *obs_CUgraphNode;
typedef struct obs_CUgraphExec_st *obs_CUgraphExec;
typedef struct obs_CUarray_st *obs_CUarray;
typedef struct obs_CUexecAffinityParam_st obs_CUexecAffinityParam; /* opaque here */
typedef struct obs_CUctxCreateParams_st obs_CUctxCreateParams;     /* opaque here */
typedef int obs_CUjit_option;
typedef int obs_CUlibraryOption;

/* Special stream handles and flags (cuda.h). */
#define OBS_CU_STREAM_LEGACY ((obs_CUstream)0x1)
#define OBS_CU_STREAM_PER_THREAD ((obs_CUstream)0x2)
#define OBS_CU_STREAM_NON_BLOCKING 0x1u
#define OBS_CU_EVENT_BLOCKING_SYNC 0x1u
#define OBS_CU_EVENT_DISABLE_TIMING 0x2u

typedef int obs_CUmemorytype; /* enum CUmemorytype_enum */
enum {
    OBS_CU_MEMORYTYPE_HOST = 1,
    OBS_CU_MEMORYTYPE_DEVICE = 2,
    OBS_CU_MEMORYTYPE_ARRAY = 3,
    OBS_CU_MEMORYTYPE_UNIFIED = 4
};

typedef int obs_CUstreamCaptureMode; /* enum CUstreamCaptureMode_enum */
enum {
    OBS_CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
    OBS_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    OBS_CU_STREAM_CAPTURE_MODE_RELAXED = 2
};
typedef int obs_CUstreamCaptureStatus; /* enum CUstreamCaptureStatus_enum */
enum {
    OBS_CU_STREAM_CAPTURE_STATUS_NONE = 0,
    OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
    OBS_CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
};

/* cuGetProcAddress flags (CUdriverProcAddress_flags) and its query result. */
#define OBS_CU_GET_PROC_ADDRESS_DEFAULT 0u
#define OBS_CU_GET_PROC_ADDRESS_LEGACY_STREAM 1u
#define OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2u
typedef int obs_CUdriverProcAddressQueryResult;
enum {
    OBS_CU_GET_PROC_ADDRESS_SUCCESS = 0,
    OBS_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
    OBS_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
};

/* Graph node types (CUgraphNodeType_enum): the ones a walk tells apart. */
typedef int obs_CUgraphNodeType;
enum {
    OBS_CU_GRAPH_NODE_TYPE_KERNEL = 0,
    OBS_CU_GRAPH_NODE_TYPE_MEMCPY = 1,
    OBS_CU_GRAPH_NODE_TYPE_MEMSET = 2,
    OBS_CU_GRAPH_NODE_TYPE_GRAPH = 4,
    OBS_CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7
};

/* CUDA_KERNEL_NODE_PARAMS_v1 (cuGraphKernelNodeGetParams, CUDA 10.0) and
 * CUDA_KERNEL_NODE_PARAMS_v2 (cuGraphKernelNodeGetParams_v2, CUDA 12.0:
 * kern, used when func is NULL, and ctx appended). */
#define OBS_CU_KERNEL_NODE_PARAMS_FIELDS                                                         \
    obs_CUfunction func;                                                                         \
    unsigned int gridDimX, gridDimY, gridDimZ;                                                   \
    unsigned int blockDimX, blockDimY, blockDimZ;                                                \
    unsigned int sharedMemBytes;                                                                 \
    void **kernelParams;                                                                         \
    void **extra;
typedef struct obs_CUDA_KERNEL_NODE_PARAMS_v1 {
    OBS_CU_KERNEL_NODE_PARAMS_FIELDS
} obs_CUDA_KERNEL_NODE_PARAMS_v1;
typedef struct obs_CUDA_KERNEL_NODE_PARAMS_v2 {
    OBS_CU_KERNEL_NODE_PARAMS_FIELDS
    obs_CUkernel kern;
    obs_CUcontext ctx;
} obs_CUDA_KERNEL_NODE_PARAMS_v2;

/* CUlaunchAttribute: id + 64-byte value union; the union holds pointers,
 * hence the 8-byte member that gives it their alignment. */
typedef int obs_CUlaunchAttributeID;
enum {
    OBS_CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
    OBS_CU_LAUNCH_ATTRIBUTE_PRIORITY = 8
};
typedef struct obs_CUlaunchAttribute {
    obs_CUlaunchAttributeID id;
    char pad[4];
    union {
        char pad[64];
        uint64_t align;
        int cooperative;
        int priority;
    } value;
} obs_CUlaunchAttribute;

typedef struct obs_CUlaunchConfig {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    obs_CUstream hStream;
    obs_CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} obs_CUlaunchConfig;

/* CUDA_MEMCPY2D_v2 */
typedef struct obs_CUDA_MEMCPY2D {
    size_t srcXInBytes, srcY;
    obs_CUmemorytype srcMemoryType;
    const void *srcHost;
    obs_CUdeviceptr srcDevice;
    obs_CUarray srcArray;
    size_t srcPitch;
    size_t dstXInBytes, dstY;
    obs_CUmemorytype dstMemoryType;
    void *dstHost;
    obs_CUdeviceptr dstDevice;
    obs_CUarray dstArray;
    size_t dstPitch;
    size_t WidthInBytes, Height;
} obs_CUDA_MEMCPY2D;

/* CUDA_MEMCPY3D_v2 */
typedef struct obs_CUDA_MEMCPY3D {
    size_t srcXInBytes, srcY, srcZ, srcLOD;
    obs_CUmemorytype srcMemoryType;
    const void *srcHost;
    obs_CUdeviceptr srcDevice;
    obs_CUarray srcArray;
    void *reserved0;
    size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD;
    obs_CUmemorytype dstMemoryType;
    void *dstHost;
    obs_CUdeviceptr dstDevice;
    obs_CUarray dstArray;
    void *reserved1;
    size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} obs_CUDA_MEMCPY3D;

/* The parameters every classic launch shares. */
#define OBS_CU_LAUNCH_PARAMS                                                                     \
    obs_CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,       \
        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                  \
        unsigned int sharedMemBytes, obs_CUstream hStream
#define OBS_CU_LAUNCH_ARGS                                                                       \
    f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream

/* Every driver entry point obsshim hooks (launches, copies, memsets,
 * synchronisation), under its real exported symbol name, as an X-macro:
 * X(symbol, return type, (parameters), (argument names)).
 * _ptsz / _ptds are the per-thread-default-stream variants (what
 * cuGetProcAddress returns with flags CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
 * _v2 is the 64-bit-pointer ABI, the only one the shim may wrap. */
#define OBS_CUDA_DRIVER_API(X)                                                                   \
    /* launches */                                                                               \
    X(cuLaunchKernel, obs_CUresult, (OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra),   \
      (OBS_CU_LAUNCH_ARGS, kernelParams, extra))                                                 \
    X(cuLaunchKernel_ptsz, obs_CUresult, (OBS_CU_LAUNCH_PARAMS, void **kernelParams, void **extra), \
      (OBS_CU_LAUNCH_ARGS, kernelParams, extra))                                                 \
    X(cuLaunchKernelEx, obs_CUresult,                                                            \
      (const obs_CUlaunchConfig *config, obs_CUfunction f, void **kernelParams, void **extra),   \
      (config, f, kernelParams, extra))                                                          \
    X(cuLaunchKernelEx_ptsz, obs_CUresult,                                                       \
      (const obs_CUlaunchConfig *config, obs_CUfunction f, void **kernelParams, void **extra),   \
      (config, f, kernelParams, extra))                                                          \
    X(cuLaunchCooperativeKernel, obs_CUresult, (OBS_CU_LAUNCH_PARAMS, void **kernelParams),      \
      (OBS_CU_LAUNCH_ARGS, kernelParams))                                                        \
    X(cuLaunchCooperativeKernel_ptsz, obs_CUresult, (OBS_CU_LAUNCH_PARAMS, void **kernelParams), \
      (OBS_CU_LAUNCH_ARGS, kernelParams))                                                        \
    X(cuGraphLaunch, obs_CUresult, (obs_CUgraphExec hGraphExec, obs_CUstream hStream),           \
      (hGraphExec, hStream))                                                                     \
    X(cuGraphLaunch_ptsz, obs_CUresult, (obs_CUgraphExec hGraphExec, obs_CUstream hStream),      \
      (hGraphExec, hStream))                                                                     \
    /* copies */                                                                                 \
    X(cuMemcpy, obs_CUresult, (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount),      \
      (dst, src, ByteCount))                                                                     \
    X(cuMemcpy_ptds, obs_CUresult, (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount), \
      (dst, src, ByteCount))                                                                     \
    X(cuMemcpyAsync, obs_CUresult,                                                               \
      (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount, obs_CUstream hStream),        \
      (dst, src, ByteCount, hStream))                                                            \
    X(cuMemcpyAsync_ptsz, obs_CUresult,                                                          \
      (obs_CUdeviceptr dst, obs_CUdeviceptr src, size_t ByteCount, obs_CUstream hStream),        \
      (dst, src, ByteCount, hStream))                                                            \
    X(cuMemcpyHtoD_v2, obs_CUresult,                                                             \
      (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),                        \
      (dstDevice, srcHost, ByteCount))                                                           \
    X(cuMemcpyHtoD_v2_ptds, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),                        \
      (dstDevice, srcHost, ByteCount))                                                           \
    X(cuMemcpyDtoH_v2, obs_CUresult, (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount), \
      (dstHost, srcDevice, ByteCount))                                                           \
    X(cuMemcpyDtoH_v2_ptds, obs_CUresult,                                                        \
      (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount), (dstHost, srcDevice, ByteCount)) \
    X(cuMemcpyDtoD_v2, obs_CUresult,                                                             \
      (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount),                  \
      (dstDevice, srcDevice, ByteCount))                                                         \
    X(cuMemcpyDtoD_v2_ptds, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount),                  \
      (dstDevice, srcDevice, ByteCount))                                                         \
    X(cuMemcpyHtoDAsync_v2, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, obs_CUstream hStream),  \
      (dstDevice, srcHost, ByteCount, hStream))                                                  \
    X(cuMemcpyHtoDAsync_v2_ptsz, obs_CUresult,                                                   \
      (obs_CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, obs_CUstream hStream),  \
      (dstDevice, srcHost, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoHAsync_v2, obs_CUresult,                                                        \
      (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),        \
      (dstHost, srcDevice, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoHAsync_v2_ptsz, obs_CUresult,                                                   \
      (void *dstHost, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream),        \
      (dstHost, srcDevice, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoDAsync_v2, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream), \
      (dstDevice, srcDevice, ByteCount, hStream))                                                \
    X(cuMemcpyDtoDAsync_v2_ptsz, obs_CUresult,                                                   \
      (obs_CUdeviceptr dstDevice, obs_CUdeviceptr srcDevice, size_t ByteCount, obs_CUstream hStream), \
      (dstDevice, srcDevice, ByteCount, hStream))                                                \
    X(cuMemcpy2D_v2, obs_CUresult, (const obs_CUDA_MEMCPY2D *pCopy), (pCopy))                    \
    X(cuMemcpy2D_v2_ptds, obs_CUresult, (const obs_CUDA_MEMCPY2D *pCopy), (pCopy))               \
    X(cuMemcpy2DAsync_v2, obs_CUresult, (const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream),  \
      (pCopy, hStream))                                                                          \
    X(cuMemcpy2DAsync_v2_ptsz, obs_CUresult,                                                     \
      (const obs_CUDA_MEMCPY2D *pCopy, obs_CUstream hStream), (pCopy, hStream))                  \
    X(cuMemcpy3D_v2, obs_CUresult, (const obs_CUDA_MEMCPY3D *pCopy), (pCopy))                    \
    X(cuMemcpy3D_v2_ptds, obs_CUresult, (const obs_CUDA_MEMCPY3D *pCopy), (pCopy))               \
    X(cuMemcpy3DAsync_v2, obs_CUresult, (const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream),  \
      (pCopy, hStream))                                                                          \
    X(cuMemcpy3DAsync_v2_ptsz, obs_CUresult,                                                     \
      (const obs_CUDA_MEMCPY3D *pCopy, obs_CUstream hStream), (pCopy, hStream))                  \
    X(cuMemcpyPeer, obs_CUresult,                                                                \
      (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,           \
       obs_CUcontext srcContext, size_t ByteCount),                                              \
      (dstDevice, dstContext, srcDevice, srcContext, ByteCount))                                 \
    X(cuMemcpyPeer_ptds, obs_CUresult,                                                           \
      (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,           \
       obs_CUcontext srcContext, size_t ByteCount),                                              \
      (dstDevice, dstContext, srcDevice, srcContext, ByteCount))                                 \
    X(cuMemcpyPeerAsync, obs_CUresult,                                                           \
      (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,           \
       obs_CUcontext srcContext, size_t ByteCount, obs_CUstream hStream),                        \
      (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))                        \
    X(cuMemcpyPeerAsync_ptsz, obs_CUresult,                                                      \
      (obs_CUdeviceptr dstDevice, obs_CUcontext dstContext, obs_CUdeviceptr srcDevice,           \
       obs_CUcontext srcContext, size_t ByteCount, obs_CUstream hStream),                        \
      (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream))                        \
    /* memsets: N elements of 1, 2 or 4 bytes */                                                 \
    X(cuMemsetD8_v2, obs_CUresult, (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N),      \
      (dstDevice, uc, N))                                                                        \
    X(cuMemsetD8_v2_ptds, obs_CUresult, (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N), \
      (dstDevice, uc, N))                                                                        \
    X(cuMemsetD16_v2, obs_CUresult, (obs_CUdeviceptr dstDevice, unsigned short us, size_t N),    \
      (dstDevice, us, N))                                                                        \
    X(cuMemsetD16_v2_ptds, obs_CUresult,                                                         \
      (obs_CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N))              \
    X(cuMemsetD32_v2, obs_CUresult, (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N),      \
      (dstDevice, ui, N))                                                                        \
    X(cuMemsetD32_v2_ptds, obs_CUresult, (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N), \
      (dstDevice, ui, N))                                                                        \
    X(cuMemsetD8Async, obs_CUresult,                                                             \
      (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N, obs_CUstream hStream),             \
      (dstDevice, uc, N, hStream))                                                               \
    X(cuMemsetD8Async_ptsz, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, unsigned char uc, size_t N, obs_CUstream hStream),             \
      (dstDevice, uc, N, hStream))                                                               \
    X(cuMemsetD16Async, obs_CUresult,                                                            \
      (obs_CUdeviceptr dstDevice, unsigned short us, size_t N, obs_CUstream hStream),            \
      (dstDevice, us, N, hStream))                                                               \
    X(cuMemsetD16Async_ptsz, obs_CUresult,                                                       \
      (obs_CUdeviceptr dstDevice, unsigned short us, size_t N, obs_CUstream hStream),            \
      (dstDevice, us, N, hStream))                                                               \
    X(cuMemsetD32Async, obs_CUresult,                                                            \
      (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N, obs_CUstream hStream),              \
      (dstDevice, ui, N, hStream))                                                               \
    X(cuMemsetD32Async_ptsz, obs_CUresult,                                                       \
      (obs_CUdeviceptr dstDevice, unsigned int ui, size_t N, obs_CUstream hStream),              \
      (dstDevice, ui, N, hStream))                                                               \
    X(cuMemsetD2D8_v2, obs_CUresult,                                                             \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), \
      (dstDevice, dstPitch, uc, Width, Height))                                                  \
    X(cuMemsetD2D8_v2_ptds, obs_CUresult,                                                        \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), \
      (dstDevice, dstPitch, uc, Width, Height))                                                  \
    X(cuMemsetD2D16_v2, obs_CUresult,                                                            \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), \
      (dstDevice, dstPitch, us, Width, Height))                                                  \
    X(cuMemsetD2D16_v2_ptds, obs_CUresult,                                                       \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), \
      (dstDevice, dstPitch, us, Width, Height))                                                  \
    X(cuMemsetD2D32_v2, obs_CUresult,                                                            \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), \
      (dstDevice, dstPitch, ui, Width, Height))                                                  \
    X(cuMemsetD2D32_v2_ptds, obs_CUresult,                                                       \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), \
      (dstDevice, dstPitch, ui, Width, Height))                                                  \
    X(cuMemsetD2D8Async, obs_CUresult,                                                           \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, uc, Width, Height, hStream))                                         \
    X(cuMemsetD2D8Async_ptsz, obs_CUresult,                                                      \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, uc, Width, Height, hStream))                                         \
    X(cuMemsetD2D16Async, obs_CUresult,                                                          \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, us, Width, Height, hStream))                                         \
    X(cuMemsetD2D16Async_ptsz, obs_CUresult,                                                     \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, us, Width, Height, hStream))                                         \
    X(cuMemsetD2D32Async, obs_CUresult,                                                          \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, ui, Width, Height, hStream))                                         \
    X(cuMemsetD2D32Async_ptsz, obs_CUresult,                                                     \
      (obs_CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, \
       obs_CUstream hStream),                                                                    \
      (dstDevice, dstPitch, ui, Width, Height, hStream))                                         \
    /* synchronisation */                                                                        \
    X(cuCtxSynchronize, obs_CUresult, (void), ())                                                \
    X(cuCtxSynchronize_v2, obs_CUresult, (obs_CUcontext ctx), (ctx))                             \
    X(cuStreamSynchronize, obs_CUresult, (obs_CUstream hStream), (hStream))                      \
    X(cuStreamSynchronize_ptsz, obs_CUresult, (obs_CUstream hStream), (hStream))                 \
    X(cuEventSynchronize, obs_CUresult, (obs_CUevent hEvent), (hEvent))                          \
    X(cuStreamWaitEvent, obs_CUresult,                                                           \
      (obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags))  \
    X(cuStreamWaitEvent_ptsz, obs_CUresult,                                                      \
      (obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags))

/* Entry points the shim uses itself, observes without recording, or must
 * forward: initialisation, the two cuGetProcAddress ABIs, contexts,
 * modules and libraries (kernel names), events, streams, capture, graphs
 * (instantiation, observed; the read-only queries of the shim's walk),
 * allocation, errors. */
#define OBS_CUDA_DRIVER_SUPPORT_API(X)                                                           \
    X(cuInit, obs_CUresult, (unsigned int Flags), (Flags))                                       \
    X(cuDriverGetVersion, obs_CUresult, (int *driverVersion), (driverVersion))                   \
    /* CUDA 11.3 - 12.x: 4 arguments (its version 11030) */                                      \
    X(cuGetProcAddress, obs_CUresult,                                                            \
      (const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags),                   \
      (symbol, pfn, cudaVersion, flags))                                                         \
    /* CUDA 12.0+: 5 arguments (its version 12000; cuda.h's cuGetProcAddress) */                 \
    X(cuGetProcAddress_v2, obs_CUresult,                                                         \
      (const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags,                    \
       obs_CUdriverProcAddressQueryResult *symbolStatus),                                        \
      (symbol, pfn, cudaVersion, flags, symbolStatus))                                           \
    X(cuDeviceGet, obs_CUresult, (obs_CUdevice * device, int ordinal), (device, ordinal))        \
    X(cuDeviceGetCount, obs_CUresult, (int *count), (count))                                     \
    X(cuCtxCreate_v2, obs_CUresult, (obs_CUcontext * pctx, unsigned int flags, obs_CUdevice dev), \
      (pctx, flags, dev))                                                                        \
    X(cuCtxCreate_v3, obs_CUresult,                                                              \
      (obs_CUcontext * pctx, obs_CUexecAffinityParam *paramsArray, int numParams,                \
       unsigned int flags, obs_CUdevice dev),                                                    \
      (pctx, paramsArray, numParams, flags, dev))                                                \
    X(cuCtxCreate_v4, obs_CUresult,                                                              \
      (obs_CUcontext * pctx, obs_CUctxCreateParams *ctxCreateParams, unsigned int flags,         \
       obs_CUdevice dev),                                                                        \
      (pctx, ctxCreateParams, flags, dev))                                                       \
    X(cuCtxDestroy_v2, obs_CUresult, (obs_CUcontext ctx), (ctx))                                 \
    X(cuDevicePrimaryCtxRetain, obs_CUresult, (obs_CUcontext * pctx, obs_CUdevice dev), (pctx, dev)) \
    X(cuDevicePrimaryCtxRelease, obs_CUresult, (obs_CUdevice dev), (dev))                        \
    X(cuDevicePrimaryCtxRelease_v2, obs_CUresult, (obs_CUdevice dev), (dev))                     \
    X(cuCtxSetCurrent, obs_CUresult, (obs_CUcontext ctx), (ctx))                                 \
    X(cuCtxGetCurrent, obs_CUresult, (obs_CUcontext * pctx), (pctx))                             \
    X(cuModuleLoadData, obs_CUresult, (obs_CUmodule * module, const void *image), (module, image)) \
    X(cuModuleGetFunction, obs_CUresult,                                                         \
      (obs_CUfunction * hfunc, obs_CUmodule hmod, const char *name), (hfunc, hmod, name))        \
    X(cuModuleUnload, obs_CUresult, (obs_CUmodule hmod), (hmod))                                 \
    X(cuLibraryLoadData, obs_CUresult,                                                           \
      (obs_CUlibrary * library, const void *code, obs_CUjit_option *jitOptions,                  \
       void **jitOptionsValues, unsigned int numJitOptions, obs_CUlibraryOption *libraryOptions, \
       void **libraryOptionValues, unsigned int numLibraryOptions),                              \
      (library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,               \
       libraryOptionValues, numLibraryOptions))                                                  \
    X(cuLibraryGetKernel, obs_CUresult,                                                          \
      (obs_CUkernel * pKernel, obs_CUlibrary library, const char *name), (pKernel, library, name)) \
    X(cuLibraryUnload, obs_CUresult, (obs_CUlibrary library), (library))                         \
    X(cuFuncGetName, obs_CUresult, (const char **name, obs_CUfunction hfunc), (name, hfunc))     \
    X(cuKernelGetName, obs_CUresult, (const char **name, obs_CUkernel hfunc), (name, hfunc))     \
    X(cuKernelGetFunction, obs_CUresult, (obs_CUfunction * pFunc, obs_CUkernel kernel),          \
      (pFunc, kernel))                                                                           \
    X(cuEventCreate, obs_CUresult, (obs_CUevent * phEvent, unsigned int Flags), (phEvent, Flags)) \
    X(cuEventRecord, obs_CUresult, (obs_CUevent hEvent, obs_CUstream hStream), (hEvent, hStream)) \
    X(cuEventRecord_ptsz, obs_CUresult, (obs_CUevent hEvent, obs_CUstream hStream),              \
      (hEvent, hStream))                                                                         \
    X(cuEventQuery, obs_CUresult, (obs_CUevent hEvent), (hEvent))                                \
    X(cuEventElapsedTime, obs_CUresult, (float *pMilliseconds, obs_CUevent hStart, obs_CUevent hEnd), \
      (pMilliseconds, hStart, hEnd))                                                             \
    X(cuEventElapsedTime_v2, obs_CUresult,                                                       \
      (float *pMilliseconds, obs_CUevent hStart, obs_CUevent hEnd), (pMilliseconds, hStart, hEnd)) \
    X(cuEventDestroy_v2, obs_CUresult, (obs_CUevent hEvent), (hEvent))                           \
    X(cuStreamCreate, obs_CUresult, (obs_CUstream * phStream, unsigned int Flags), (phStream, Flags)) \
    X(cuStreamDestroy_v2, obs_CUresult, (obs_CUstream hStream), (hStream))                       \
    X(cuStreamIsCapturing, obs_CUresult,                                                         \
      (obs_CUstream hStream, obs_CUstreamCaptureStatus *captureStatus), (hStream, captureStatus)) \
    X(cuStreamIsCapturing_ptsz, obs_CUresult,                                                    \
      (obs_CUstream hStream, obs_CUstreamCaptureStatus *captureStatus), (hStream, captureStatus)) \
    /* CUDA 10.0's form, no mode (global capture) */                                             \
    X(cuStreamBeginCapture, obs_CUresult, (obs_CUstream hStream), (hStream))                     \
    X(cuStreamBeginCapture_ptsz, obs_CUresult, (obs_CUstream hStream), (hStream))                \
    X(cuStreamBeginCapture_v2, obs_CUresult, (obs_CUstream hStream, obs_CUstreamCaptureMode mode), \
      (hStream, mode))                                                                           \
    X(cuStreamBeginCapture_v2_ptsz, obs_CUresult,                                                \
      (obs_CUstream hStream, obs_CUstreamCaptureMode mode), (hStream, mode))                     \
    X(cuStreamEndCapture, obs_CUresult, (obs_CUstream hStream, obs_CUgraph *phGraph),            \
      (hStream, phGraph))                                                                        \
    X(cuStreamEndCapture_ptsz, obs_CUresult, (obs_CUstream hStream, obs_CUgraph *phGraph),       \
      (hStream, phGraph))                                                                        \
    /* CUDA 10.0 / 11.0 forms with an error node and log buffer */                               \
    X(cuGraphInstantiate, obs_CUresult,                                                          \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, obs_CUgraphNode *phErrorNode,          \
       char *logBuffer, size_t bufferSize),                                                      \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))                                 \
    X(cuGraphInstantiate_v2, obs_CUresult,                                                       \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, obs_CUgraphNode *phErrorNode,          \
       char *logBuffer, size_t bufferSize),                                                      \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))                                 \
    X(cuGraphInstantiateWithFlags, obs_CUresult,                                                 \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, unsigned long long flags),             \
      (phGraphExec, hGraph, flags))                                                              \
    X(cuGraphGetNodes, obs_CUresult, (obs_CUgraph hGraph, obs_CUgraphNode *nodes, size_t *numNodes), \
      (hGraph, nodes, numNodes))                                                                 \
    X(cuGraphNodeGetType, obs_CUresult, (obs_CUgraphNode hNode, obs_CUgraphNodeType *type),      \
      (hNode, type))                                                                             \
    X(cuGraphKernelNodeGetParams, obs_CUresult,                                                  \
      (obs_CUgraphNode hNode, obs_CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams), (hNode, nodeParams))  \
    X(cuGraphKernelNodeGetParams_v2, obs_CUresult,                                               \
      (obs_CUgraphNode hNode, obs_CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams), (hNode, nodeParams))  \
    X(cuGraphExecDestroy, obs_CUresult, (obs_CUgraphExec hGraphExec), (hGraphExec))              \
    X(cuGraphDestroy, obs_CUresult, (obs_CUgraph hGraph), (hGraph))                              \
    X(cuMemAlloc_v2, obs_CUresult, (obs_CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize))  \
    X(cuMemFree_v2, obs_CUresult, (obs_CUdeviceptr dptr), (dptr))                                \
    X(cuGetErrorName, obs_CUresult, (obs_CUresult error, const char **pStr), (error, pStr))      \
    X(cuGetErrorString, obs_CUresult, (obs_CUresult error, const char **pStr), (error, pStr))

/* Profiler control (cudaProfiler.h): called by the shim itself at the
 * bounds of an OBS_CAPTURE window where no exported CUDA runtime is there
 * to call (nvcc's static cudart; docs/capture.md), never hooked. */
#define OBS_CUDA_DRIVER_PROFILER_API(X)                                                          \
    X(cuProfilerStart, obs_CUresult, (void), ())                                                 \
    X(cuProfilerStop, obs_CUresult, (void), ())

/* The CUDA 2.x ABI (32-bit device pointers and sizes), still exported under
 * the unsuffixed names and still served by cuGetProcAddress for versions
 * below 3020. The shim must never wrap these with a _v2 signature: a
 * pointer returned for such a (name, version) passes through unwrapped. */
#define OBS_CUDA_DRIVER_LEGACY_API(X)                                                            \
    X(cuMemcpyHtoD, obs_CUresult,                                                                \
      (obs_CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount),               \
      (dstDevice, srcHost, ByteCount))                                                           \
    X(cuMemcpyDtoH, obs_CUresult,                                                                \
      (void *dstHost, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount),                     \
      (dstHost, srcDevice, ByteCount))                                                           \
    X(cuMemcpyDtoD, obs_CUresult,                                                                \
      (obs_CUdeviceptr_v1 dstDevice, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount),      \
      (dstDevice, srcDevice, ByteCount))                                                         \
    X(cuMemcpyHtoDAsync, obs_CUresult,                                                           \
      (obs_CUdeviceptr_v1 dstDevice, const void *srcHost, unsigned int ByteCount,                \
       obs_CUstream hStream),                                                                    \
      (dstDevice, srcHost, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoHAsync, obs_CUresult,                                                           \
      (void *dstHost, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount, obs_CUstream hStream), \
      (dstHost, srcDevice, ByteCount, hStream))                                                  \
    X(cuMemcpyDtoDAsync, obs_CUresult,                                                           \
      (obs_CUdeviceptr_v1 dstDevice, obs_CUdeviceptr_v1 srcDevice, unsigned int ByteCount,       \
       obs_CUstream hStream),                                                                    \
      (dstDevice, srcDevice, ByteCount, hStream))                                                \
    X(cuMemsetD8, obs_CUresult, (obs_CUdeviceptr_v1 dstDevice, unsigned char uc, unsigned int N), \
      (dstDevice, uc, N))                                                                        \
    X(cuMemAlloc, obs_CUresult, (obs_CUdeviceptr_v1 * dptr, unsigned int bytesize), (dptr, bytesize)) \
    X(cuMemFree, obs_CUresult, (obs_CUdeviceptr_v1 dptr), (dptr))

/* What cuGetProcAddress(base, ..., cudaVersion, flags) returns, as the real
 * driver's table: X(base name, first CUDA version, per-thread, symbol).
 * For a query the driver takes, among the rows of that base name with
 * version <= cudaVersion, the highest; with flags
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM a per-thread row (1) wins
 * over a legacy one (0) when one qualifies. No row of that name:
 * CUDA_ERROR_NOT_FOUND + SYMBOL_NOT_FOUND; rows but none old enough:
 * CUDA_ERROR_NOT_FOUND + VERSION_NOT_SUFFICIENT. (Rows for symbols this
 * header does not declare, e.g. cuMemsetD16 v2000, are left out: such
 * versions read as not sufficient.) */
#define OBS_CUDA_DRIVER_PROC_VERSIONS(X)                                                         \
    X(cuLaunchKernel, 4000, 0, cuLaunchKernel)                                                   \
    X(cuLaunchKernel, 7000, 1, cuLaunchKernel_ptsz)                                              \
    X(cuLaunchKernelEx, 11060, 0, cuLaunchKernelEx)                                              \
    X(cuLaunchKernelEx, 11060, 1, cuLaunchKernelEx_ptsz)                                         \
    X(cuLaunchCooperativeKernel, 9000, 0, cuLaunchCooperativeKernel)                             \
    X(cuLaunchCooperativeKernel, 9000, 1, cuLaunchCooperativeKernel_ptsz)                        \
    X(cuGraphLaunch, 10000, 0, cuGraphLaunch)                                                    \
    X(cuGraphLaunch, 10000, 1, cuGraphLaunch_ptsz)                                               \
    X(cuMemcpy, 4000, 0, cuMemcpy)                                                               \
    X(cuMemcpy, 7000, 1, cuMemcpy_ptds)                                                          \
    X(cuMemcpyAsync, 4000, 0, cuMemcpyAsync)                                                     \
    X(cuMemcpyAsync, 7000, 1, cuMemcpyAsync_ptsz)                                                \
    X(cuMemcpyHtoD, 2000, 0, cuMemcpyHtoD)                                                       \
    X(cuMemcpyHtoD, 3020, 0, cuMemcpyHtoD_v2)                                                    \
    X(cuMemcpyHtoD, 7000, 1, cuMemcpyHtoD_v2_ptds)                                               \
    X(cuMemcpyDtoH, 2000, 0, cuMemcpyDtoH)                                                       \
    X(cuMemcpyDtoH, 3020, 0, cuMemcpyDtoH_v2)                                                    \
    X(cuMemcpyDtoH, 7000, 1, cuMemcpyDtoH_v2_ptds)                                               \
    X(cuMemcpyDtoD, 2000, 0, cuMemcpyDtoD)                                                       \
    X(cuMemcpyDtoD, 3020, 0, cuMemcpyDtoD_v2)                                                    \
    X(cuMemcpyDtoD, 7000, 1, cuMemcpyDtoD_v2_ptds)                                               \
    X(cuMemcpyHtoDAsync, 2000, 0, cuMemcpyHtoDAsync)                                             \
    X(cuMemcpyHtoDAsync, 3020, 0, cuMemcpyHtoDAsync_v2)                                          \
    X(cuMemcpyHtoDAsync, 7000, 1, cuMemcpyHtoDAsync_v2_ptsz)                                     \
    X(cuMemcpyDtoHAsync, 2000, 0, cuMemcpyDtoHAsync)                                             \
    X(cuMemcpyDtoHAsync, 3020, 0, cuMemcpyDtoHAsync_v2)                                          \
    X(cuMemcpyDtoHAsync, 7000, 1, cuMemcpyDtoHAsync_v2_ptsz)                                     \
    X(cuMemcpyDtoDAsync, 3000, 0, cuMemcpyDtoDAsync)                                             \
    X(cuMemcpyDtoDAsync, 3020, 0, cuMemcpyDtoDAsync_v2)                                          \
    X(cuMemcpyDtoDAsync, 7000, 1, cuMemcpyDtoDAsync_v2_ptsz)                                     \
    X(cuMemcpy2D, 3020, 0, cuMemcpy2D_v2)                                                        \
    X(cuMemcpy2D, 7000, 1, cuMemcpy2D_v2_ptds)                                                   \
    X(cuMemcpy2DAsync, 3020, 0, cuMemcpy2DAsync_v2)                                              \
    X(cuMemcpy2DAsync, 7000, 1, cuMemcpy2DAsync_v2_ptsz)                                         \
    X(cuMemcpy3D, 3020, 0, cuMemcpy3D_v2)                                                        \
    X(cuMemcpy3D, 7000, 1, cuMemcpy3D_v2_ptds)                                                   \
    X(cuMemcpy3DAsync, 3020, 0, cuMemcpy3DAsync_v2)                                              \
    X(cuMemcpy3DAsync, 7000, 1, cuMemcpy3DAsync_v2_ptsz)                                         \
    X(cuMemcpyPeer, 4000, 0, cuMemcpyPeer)                                                       \
    X(cuMemcpyPeer, 7000, 1, cuMemcpyPeer_ptds)                                                  \
    X(cuMemcpyPeerAsync, 4000, 0, cuMemcpyPeerAsync)                                             \
    X(cuMemcpyPeerAsync, 7000, 1, cuMemcpyPeerAsync_ptsz)                                        \
    X(cuMemsetD8, 2000, 0, cuMemsetD8)                                                           \
    X(cuMemsetD8, 3020, 0, cuMemsetD8_v2)                                                        \
    X(cuMemsetD8, 7000, 1, cuMemsetD8_v2_ptds)                                                   \
    X(cuMemsetD16, 3020, 0, cuMemsetD16_v2)                                                      \
    X(cuMemsetD16, 7000, 1, cuMemsetD16_v2_ptds)                                                 \
    X(cuMemsetD32, 3020, 0, cuMemsetD32_v2)                                                      \
    X(cuMemsetD32, 7000, 1, cuMemsetD32_v2_ptds)                                                 \
    X(cuMemsetD8Async, 3020, 0, cuMemsetD8Async)                                                 \
    X(cuMemsetD8Async, 7000, 1, cuMemsetD8Async_ptsz)                                            \
    X(cuMemsetD16Async, 3020, 0, cuMemsetD16Async)                                               \
    X(cuMemsetD16Async, 7000, 1, cuMemsetD16Async_ptsz)                                          \
    X(cuMemsetD32Async, 3020, 0, cuMemsetD32Async)                                               \
    X(cuMemsetD32Async, 7000, 1, cuMemsetD32Async_ptsz)                                          \
    X(cuMemsetD2D8, 3020, 0, cuMemsetD2D8_v2)                                                    \
    X(cuMemsetD2D8, 7000, 1, cuMemsetD2D8_v2_ptds)                                               \
    X(cuMemsetD2D16, 3020, 0, cuMemsetD2D16_v2)                                                  \
    X(cuMemsetD2D16, 7000, 1, cuMemsetD2D16_v2_ptds)                                             \
    X(cuMemsetD2D32, 3020, 0, cuMemsetD2D32_v2)                                                  \
    X(cuMemsetD2D32, 7000, 1, cuMemsetD2D32_v2_ptds)                                             \
    X(cuMemsetD2D8Async, 3020, 0, cuMemsetD2D8Async)                                             \
    X(cuMemsetD2D8Async, 7000, 1, cuMemsetD2D8Async_ptsz)                                        \
    X(cuMemsetD2D16Async, 3020, 0, cuMemsetD2D16Async)                                           \
    X(cuMemsetD2D16Async, 7000, 1, cuMemsetD2D16Async_ptsz)                                      \
    X(cuMemsetD2D32Async, 3020, 0, cuMemsetD2D32Async)                                           \
    X(cuMemsetD2D32Async, 7000, 1, cuMemsetD2D32Async_ptsz)                                      \
    X(cuCtxSynchronize, 2000, 0, cuCtxSynchronize)                                               \
    X(cuCtxSynchronize, 13000, 0, cuCtxSynchronize_v2)                                           \
    X(cuStreamSynchronize, 2000, 0, cuStreamSynchronize)                                         \
    X(cuStreamSynchronize, 7000, 1, cuStreamSynchronize_ptsz)                                    \
    X(cuEventSynchronize, 2000, 0, cuEventSynchronize)                                           \
    X(cuStreamWaitEvent, 3020, 0, cuStreamWaitEvent)                                             \
    X(cuStreamWaitEvent, 7000, 1, cuStreamWaitEvent_ptsz)                                        \
    X(cuInit, 2000, 0, cuInit)                                                                   \
    X(cuDriverGetVersion, 2020, 0, cuDriverGetVersion)                                           \
    X(cuGetProcAddress, 11030, 0, cuGetProcAddress)                                              \
    X(cuGetProcAddress, 12000, 0, cuGetProcAddress_v2)                                           \
    X(cuDeviceGet, 2000, 0, cuDeviceGet)                                                         \
    X(cuDeviceGetCount, 2000, 0, cuDeviceGetCount)                                               \
    X(cuCtxCreate, 3020, 0, cuCtxCreate_v2)                                                      \
    X(cuCtxCreate, 11040, 0, cuCtxCreate_v3)                                                     \
    X(cuCtxCreate, 12050, 0, cuCtxCreate_v4)                                                     \
    X(cuCtxDestroy, 4000, 0, cuCtxDestroy_v2)                                                    \
    X(cuDevicePrimaryCtxRetain, 7000, 0, cuDevicePrimaryCtxRetain)                               \
    X(cuDevicePrimaryCtxRelease, 7000, 0, cuDevicePrimaryCtxRelease)                             \
    X(cuDevicePrimaryCtxRelease, 11000, 0, cuDevicePrimaryCtxRelease_v2)                         \
    X(cuCtxSetCurrent, 4000, 0, cuCtxSetCurrent)                                                 \
    X(cuCtxGetCurrent, 4000, 0, cuCtxGetCurrent)                                                 \
    X(cuModuleLoadData, 2000, 0, cuModuleLoadData)                                               \
    X(cuModuleGetFunction, 2000, 0, cuModuleGetFunction)                                         \
    X(cuModuleUnload, 2000, 0, cuModuleUnload)                                                   \
    X(cuLibraryLoadData, 12000, 0, cuLibraryLoadData)                                            \
    X(cuLibraryGetKernel, 12000, 0, cuLibraryGetKernel)                                          \
    X(cuLibraryUnload, 12000, 0, cuLibraryUnload)                                                \
    X(cuFuncGetName, 12030, 0, cuFuncGetName)                                                    \
    X(cuKernelGetName, 12030, 0, cuKernelGetName)                                                \
    X(cuKernelGetFunction, 12000, 0, cuKernelGetFunction)                                        \
    X(cuEventCreate, 2000, 0, cuEventCreate)                                                     \
    X(cuEventRecord, 2000, 0, cuEventRecord)                                                     \
    X(cuEventRecord, 7000, 1, cuEventRecord_ptsz)                                                \
    X(cuEventQuery, 2000, 0, cuEventQuery)                                                       \
    X(cuEventElapsedTime, 2000, 0, cuEventElapsedTime)                                           \
    X(cuEventElapsedTime, 12080, 0, cuEventElapsedTime_v2)                                       \
    X(cuEventDestroy, 4000, 0, cuEventDestroy_v2)                                                \
    X(cuStreamCreate, 2000, 0, cuStreamCreate)                                                   \
    X(cuStreamDestroy, 4000, 0, cuStreamDestroy_v2)                                              \
    X(cuStreamIsCapturing, 10000, 0, cuStreamIsCapturing)                                        \
    X(cuStreamIsCapturing, 10000, 1, cuStreamIsCapturing_ptsz)                                   \
    X(cuStreamBeginCapture, 10000, 0, cuStreamBeginCapture)                                      \
    X(cuStreamBeginCapture, 10000, 1, cuStreamBeginCapture_ptsz)                                 \
    X(cuStreamBeginCapture, 10010, 0, cuStreamBeginCapture_v2)                                   \
    X(cuStreamBeginCapture, 10010, 1, cuStreamBeginCapture_v2_ptsz)                              \
    X(cuStreamEndCapture, 10000, 0, cuStreamEndCapture)                                          \
    X(cuStreamEndCapture, 10000, 1, cuStreamEndCapture_ptsz)                                     \
    X(cuGraphInstantiate, 10000, 0, cuGraphInstantiate)                                          \
    X(cuGraphInstantiate, 11000, 0, cuGraphInstantiate_v2)                                       \
    X(cuGraphInstantiateWithFlags, 11040, 0, cuGraphInstantiateWithFlags)                        \
    X(cuGraphGetNodes, 10000, 0, cuGraphGetNodes)                                                \
    X(cuGraphNodeGetType, 10000, 0, cuGraphNodeGetType)                                          \
    X(cuGraphKernelNodeGetParams, 10000, 0, cuGraphKernelNodeGetParams)                          \
    X(cuGraphKernelNodeGetParams, 12000, 0, cuGraphKernelNodeGetParams_v2)                       \
    X(cuGraphExecDestroy, 10000, 0, cuGraphExecDestroy)                                          \
    X(cuGraphDestroy, 10000, 0, cuGraphDestroy)                                                  \
    X(cuMemAlloc, 2000, 0, cuMemAlloc)                                                           \
    X(cuMemAlloc, 3020, 0, cuMemAlloc_v2)                                                        \
    X(cuMemFree, 2000, 0, cuMemFree)                                                             \
    X(cuMemFree, 3020, 0, cuMemFree_v2)                                                          \
    X(cuGetErrorName, 6000, 0, cuGetErrorName)                                                   \
    X(cuGetErrorString, 6000, 0, cuGetErrorString)

#define OBS_CUDA_DRIVER_DECLARE_FN(name, ret, params, args) typedef ret(*obs_fn_##name) params;
OBS_CUDA_DRIVER_API(OBS_CUDA_DRIVER_DECLARE_FN)
OBS_CUDA_DRIVER_SUPPORT_API(OBS_CUDA_DRIVER_DECLARE_FN)
OBS_CUDA_DRIVER_PROFILER_API(OBS_CUDA_DRIVER_DECLARE_FN)
OBS_CUDA_DRIVER_LEGACY_API(OBS_CUDA_DRIVER_DECLARE_FN)
#undef OBS_CUDA_DRIVER_DECLARE_FN

/* Prototypes under the real names, for code that defines or calls them (the
 * simulator, -lcuda test programs, the shim's wrappers). Define
 * OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES to skip them (e.g. next to cuda.h). */
#ifndef OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES
#define OBS_CUDA_DRIVER_PROTOTYPE(name, ret, params, args) ret name params;
OBS_CUDA_DRIVER_API(OBS_CUDA_DRIVER_PROTOTYPE)
OBS_CUDA_DRIVER_SUPPORT_API(OBS_CUDA_DRIVER_PROTOTYPE)
OBS_CUDA_DRIVER_PROFILER_API(OBS_CUDA_DRIVER_PROTOTYPE)
OBS_CUDA_DRIVER_LEGACY_API(OBS_CUDA_DRIVER_PROTOTYPE)
#undef OBS_CUDA_DRIVER_PROTOTYPE
#endif

#endif
