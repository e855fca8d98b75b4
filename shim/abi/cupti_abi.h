/* The slice of CUPTI's activity API (libcupti.so) that obsshim's
 * OBS_GPU_TIME=cupti, the simulated libcupti (sim/) and the test apps
 * need, declared here so that none of them needs the CUDA toolkit: the
 * shim opens libcupti with dlopen at run time. Names carry an obs_ prefix so
 * that this header can sit beside the real cupti.h (tests/t_abi_cupti.c
 * compares the two: sizes, offsets, enum values, callback ids, and every
 * entry point against the real libcupti.so.13).
 *
 * Records: CUPTI writes them into the client's buffers in the layout of
 * the newest version of each struct its header defines (CUDA 13.0:
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
 * CUpti_ActivityAPI), each padded to 8 bytes ("packed, aligned 8"). The
 * fields the shim reads (kind, start, end, deviceId, streamId,
 * correlationId; the API record's threadId) sit at the same offsets in
 * every version since CUDA 6, so the shim reads them through the small
 * obs_cupti_*_head views below and walks the buffer with
 * cuptiActivityGetNextRecord, which knows each record's size. */
#ifndef OBS_CUPTI_ABI_H
#define OBS_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

#define OBS_CUPTI_PACKED __attribute__((__packed__)) __attribute__((aligned(8)))

typedef int obs_CUptiResult; /* enum CUptiResult: 4 bytes */
enum {
    OBS_CUPTI_SUCCESS = 0,
    OBS_CUPTI_ERROR_INVALID_PARAMETER = 1,
    OBS_CUPTI_ERROR_INVALID_OPERATION = 7,
    OBS_CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
    OBS_CUPTI_ERROR_NOT_INITIALIZED = 15,
    OBS_CUPTI_ERROR_INVALID_KIND = 21,
    OBS_CUPTI_ERROR_NOT_SUPPORTED = 27,
    OBS_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
    OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
    OBS_CUPTI_ERROR_UNKNOWN = 999
};

typedef int obs_CUpti_ActivityKind; /* enum CUpti_ActivityKind */
enum {
    OBS_CUPTI_ACTIVITY_KIND_INVALID = 0,
    OBS_CUPTI_ACTIVITY_KIND_MEMCPY = 1,
    OBS_CUPTI_ACTIVITY_KIND_MEMSET = 2,
    OBS_CUPTI_ACTIVITY_KIND_KERNEL = 3,
    OBS_CUPTI_ACTIVITY_KIND_DRIVER = 4,
    OBS_CUPTI_ACTIVITY_KIND_RUNTIME = 5,
    OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10
};

typedef int obs_CUpti_ActivityThreadIdType;
enum { OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT = 0, OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM = 1 };

enum { OBS_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1 };

typedef int obs_CUpti_CallbackDomain;
typedef uint32_t obs_CUpti_CallbackId;
typedef struct obs_CUpti_Subscriber_st *obs_CUpti_SubscriberHandle;
typedef void (*obs_CUpti_CallbackFunc)(void *userdata, obs_CUpti_CallbackDomain domain, obs_CUpti_CallbackId cbid,
                                       const void *cbdata);
typedef void (*obs_CUpti_BuffersCallbackRequestFunc)(uint8_t **buffer, size_t *size, size_t *maxNumRecords);
typedef void (*obs_CUpti_BuffersCallbackCompleteFunc)(void *context, uint32_t streamId, uint8_t *buffer,
                                                      size_t size, size_t validSize);
typedef uint64_t (*obs_CUpti_TimestampCallbackFunc)(void);

/* CUpti_SubscriberParams (cuptiSubscribe_v2, CUDA 13.0). */
typedef struct {
    size_t structSize;
    const char *subscriberName;
    char *oldSubscriberName;  /* the other client's name, on MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
    size_t oldSubscriberSize; /* at least 64 */
} obs_CUpti_SubscriberParams;
#define OBS_CUPTI_SUBSCRIBER_PARAMS_SIZE (offsetof(obs_CUpti_SubscriberParams, oldSubscriberSize) + sizeof(size_t))
#define OBS_CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN 64

/* ---- records (CUDA 13.0 layouts) --------------------------------------------------------- */

typedef struct OBS_CUPTI_PACKED {
    obs_CUpti_ActivityKind kind;
} obs_CUpti_Activity;

/* CUpti_ActivityAPI: CUPTI_ACTIVITY_KIND_RUNTIME and _DRIVER. */
typedef struct OBS_CUPTI_PACKED {
    obs_CUpti_ActivityKind kind;
    obs_CUpti_CallbackId cbid;
    uint64_t start, end;
    uint32_t processId;
    uint32_t threadId;
    uint32_t correlationId;
    uint32_t returnValue;
} obs_CUpti_ActivityAPI;

/* CUpti_ActivityKernel10: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (and KERNEL). */
typedef struct OBS_CUPTI_PACKED {
    obs_CUpti_ActivityKind kind;
    uint8_t cacheConfig;
    uint8_t sharedMemoryConfig;
    uint16_t registersPerThread;
    int partitionedGlobalCacheRequested;
    int partitionedGlobalCacheExecuted;
    uint64_t start, end, completed;
    uint32_t deviceId, contextId, streamId;
    int32_t gridX, gridY, gridZ;
    int32_t blockX, blockY, blockZ;
    int32_t staticSharedMemory, dynamicSharedMemory;
    uint32_t localMemoryPerThread, localMemoryTotal;
    uint32_t correlationId;
    int64_t gridId;
    const char *name;
    void *reserved0;
    uint64_t queued, submitted;
    uint8_t launchType;
    uint8_t isSharedMemoryCarveoutRequested;
    uint8_t sharedMemoryCarveoutRequested;
    uint8_t padding;
    uint32_t sharedMemoryExecuted;
    uint64_t graphNodeId;
    int shmemLimitConfig;
    uint32_t graphId;
    void *pAccessPolicyWindow;
    uint32_t channelID;
    int channelType;
    uint32_t clusterX, clusterY, clusterZ;
    uint32_t clusterSchedulingPolicy;
    uint64_t localMemoryTotal_v2;
    uint32_t maxPotentialClusterSize;
    uint32_t maxActiveClusters;
    uint8_t isDeviceLaunched;
    uint8_t padding3[7];
} obs_CUpti_ActivityKernel10;

/* CUpti_ActivityMemcpy6: CUPTI_ACTIVITY_KIND_MEMCPY. */
typedef struct OBS_CUPTI_PACKED {
    obs_CUpti_ActivityKind kind;
    uint8_t copyKind, srcKind, dstKind, flags;
    uint64_t bytes;
    uint64_t start, end;
    uint32_t deviceId, contextId, streamId;
    uint32_t correlationId;
    uint32_t runtimeCorrelationId;
    uint32_t pad;
    void *reserved0;
    uint64_t graphNodeId;
    uint32_t graphId;
    uint32_t channelID;
    int channelType;
    uint8_t isDeviceLaunched;
    uint8_t pad2[3];
    uint64_t copyCount;
} obs_CUpti_ActivityMemcpy6;

/* CUpti_ActivityMemset4: CUPTI_ACTIVITY_KIND_MEMSET. */
typedef struct OBS_CUPTI_PACKED {
    obs_CUpti_ActivityKind kind;
    uint32_t value;
    uint64_t bytes;
    uint64_t start, end;
    uint32_t deviceId, contextId, streamId;
    uint32_t correlationId;
    uint16_t flags;
    uint16_t memoryKind;
    uint32_t pad;
    void *reserved0;
    uint64_t graphNodeId;
    uint32_t graphId;
    uint32_t channelID;
    int channelType;
    uint8_t isDeviceLaunched;
    uint8_t pad2[3];
} obs_CUpti_ActivityMemset4;

/* CUpti_ActivityMemcpyKind values the simulator writes. */
enum { OBS_CUPTI_MEMCPY_KIND_UNKNOWN = 0, OBS_CUPTI_MEMCPY_KIND_HTOD = 1, OBS_CUPTI_MEMCPY_KIND_DTOH = 2,
       OBS_CUPTI_MEMCPY_KIND_DTOD = 8, OBS_CUPTI_MEMCPY_KIND_HTOH = 9, OBS_CUPTI_MEMCPY_KIND_PTOP = 10 };

/* What the shim reads of a device record: the same offsets in the kernel
 * (start 16, end 24, deviceId 40, streamId 48, correlationId 92), copy and
 * memset records (start 16, end 24, deviceId 32, streamId 40,
 * correlationId 44) of every CUPTI since CUDA 6. */
#define OBS_CUPTI_KERNEL_START_OFFSET 16u
#define OBS_CUPTI_KERNEL_CORRELATION_OFFSET 92u
#define OBS_CUPTI_COPY_CORRELATION_OFFSET 44u

/* ---- callback ids of the API records the shim asks for ----------------------------------- */

/* Runtime: X(api name as in shim/trace/api_list.h, cupti_runtime_cbid.h
 * name (CUPTI_RUNTIME_TRACE_CBID_<name>), value). Every CUDA runtime API
 * the shim times (kernel, copy, memset, graph launch). */
#define OBS_CUPTI_RUNTIME_CBIDS(X)                                                         \
    X(cudaLaunchKernel, cudaLaunchKernel_v7000, 211)                                       \
    X(cudaLaunchKernel_ptsz, cudaLaunchKernel_ptsz_v7000, 214)                             \
    X(__cudaLaunchKernel, __cudaLaunchKernel_v13000, 505)                                  \
    X(__cudaLaunchKernel_ptsz, __cudaLaunchKernel_ptsz_v13000, 506)                        \
    X(cudaLaunchKernelExC, cudaLaunchKernelExC_v11060, 430)                                \
    X(cudaLaunchKernelExC_ptsz, cudaLaunchKernelExC_ptsz_v11060, 431)                      \
    X(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_v9000, 269)                 \
    X(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel_ptsz_v9000, 270)       \
    X(cudaGraphLaunch, cudaGraphLaunch_v10000, 311)                                        \
    X(cudaGraphLaunch_ptsz, cudaGraphLaunch_ptsz_v10000, 312)                              \
    X(cudaMemcpy, cudaMemcpy_v3020, 31)                                                    \
    X(cudaMemcpy_ptds, cudaMemcpy_ptds_v7000, 215)                                         \
    X(cudaMemcpyAsync, cudaMemcpyAsync_v3020, 41)                                          \
    X(cudaMemcpyAsync_ptsz, cudaMemcpyAsync_ptsz_v7000, 225)                               \
    X(cudaMemcpy2D, cudaMemcpy2D_v3020, 32)                                                \
    X(cudaMemcpy2D_ptds, cudaMemcpy2D_ptds_v7000, 216)                                     \
    X(cudaMemcpy2DAsync, cudaMemcpy2DAsync_v3020, 44)                                      \
    X(cudaMemcpy2DAsync_ptsz, cudaMemcpy2DAsync_ptsz_v7000, 228)                           \
    X(cudaMemcpy3D, cudaMemcpy3D_v3020, 144)                                               \
    X(cudaMemcpy3D_ptds, cudaMemcpy3D_ptds_v7000, 245)                                     \
    X(cudaMemcpy3DAsync, cudaMemcpy3DAsync_v3020, 145)                                     \
    X(cudaMemcpy3DAsync_ptsz, cudaMemcpy3DAsync_ptsz_v7000, 246)                           \
    X(cudaMemcpyPeer, cudaMemcpyPeer_v4000, 160)                                           \
    X(cudaMemcpyPeerAsync, cudaMemcpyPeerAsync_v4000, 161)                                 \
    X(cudaMemcpyToSymbol, cudaMemcpyToSymbol_v3020, 39)                                    \
    X(cudaMemcpyToSymbol_ptds, cudaMemcpyToSymbol_ptds_v7000, 223)                         \
    X(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_v3020, 40)                                \
    X(cudaMemcpyFromSymbol_ptds, cudaMemcpyFromSymbol_ptds_v7000, 224)                     \
    X(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_v3020, 47)                          \
    X(cudaMemcpyToSymbolAsync_ptsz, cudaMemcpyToSymbolAsync_ptsz_v7000, 231)               \
    X(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_v3020, 48)                      \
    X(cudaMemcpyFromSymbolAsync_ptsz, cudaMemcpyFromSymbolAsync_ptsz_v7000, 232)           \
    X(cudaMemset, cudaMemset_v3020, 49)                                                    \
    X(cudaMemset_ptds, cudaMemset_ptds_v7000, 233)                                         \
    X(cudaMemsetAsync, cudaMemsetAsync_v3020, 51)                                          \
    X(cudaMemsetAsync_ptsz, cudaMemsetAsync_ptsz_v7000, 235)                               \
    X(cudaMemset2D, cudaMemset2D_v3020, 50)                                                \
    X(cudaMemset2D_ptds, cudaMemset2D_ptds_v7000, 234)                                     \
    X(cudaMemset2DAsync, cudaMemset2DAsync_v3020, 52)                                      \
    X(cudaMemset2DAsync_ptsz, cudaMemset2DAsync_ptsz_v7000, 236)                           \
    X(cudaMemset3D, cudaMemset3D_v3020, 142)                                               \
    X(cudaMemset3D_ptds, cudaMemset3D_ptds_v7000, 243)                                     \
    X(cudaMemset3DAsync, cudaMemset3DAsync_v3020, 143)                                     \
    X(cudaMemset3DAsync_ptsz, cudaMemset3DAsync_ptsz_v7000, 244)

/* Driver: X(name, value): CUPTI_DRIVER_TRACE_CBID_<name> of cupti_driver_cbid.h,
 * every driver API the shim times. */
#define OBS_CUPTI_DRIVER_CBIDS(X)                                                          \
    X(cuLaunchKernel, 307)                                                                 \
    X(cuLaunchKernel_ptsz, 442)                                                            \
    X(cuLaunchKernelEx, 652)                                                               \
    X(cuLaunchKernelEx_ptsz, 653)                                                          \
    X(cuLaunchCooperativeKernel, 477)                                                      \
    X(cuLaunchCooperativeKernel_ptsz, 478)                                                 \
    X(cuGraphLaunch, 514)                                                                  \
    X(cuGraphLaunch_ptsz, 515)                                                             \
    X(cuMemcpy, 305)                                                                       \
    X(cuMemcpy_ptds, 408)                                                                  \
    X(cuMemcpyAsync, 306)                                                                  \
    X(cuMemcpyAsync_ptsz, 418)                                                             \
    X(cuMemcpyHtoD_v2, 276)                                                                \
    X(cuMemcpyHtoD_v2_ptds, 397)                                                           \
    X(cuMemcpyDtoH_v2, 278)                                                                \
    X(cuMemcpyDtoH_v2_ptds, 398)                                                           \
    X(cuMemcpyDtoD_v2, 280)                                                                \
    X(cuMemcpyDtoD_v2_ptds, 399)                                                           \
    X(cuMemcpyHtoDAsync_v2, 277)                                                           \
    X(cuMemcpyHtoDAsync_v2_ptsz, 421)                                                      \
    X(cuMemcpyDtoHAsync_v2, 279)                                                           \
    X(cuMemcpyDtoHAsync_v2_ptsz, 422)                                                      \
    X(cuMemcpyDtoDAsync_v2, 281)                                                           \
    X(cuMemcpyDtoDAsync_v2_ptsz, 423)                                                      \
    X(cuMemcpy2D_v2, 287)                                                                  \
    X(cuMemcpy2D_v2_ptds, 405)                                                             \
    X(cuMemcpy2DAsync_v2, 289)                                                             \
    X(cuMemcpy2DAsync_v2_ptsz, 424)                                                        \
    X(cuMemcpy3D_v2, 290)                                                                  \
    X(cuMemcpy3D_v2_ptds, 407)                                                             \
    X(cuMemcpy3DAsync_v2, 291)                                                             \
    X(cuMemcpy3DAsync_v2_ptsz, 425)                                                        \
    X(cuMemcpyPeer, 318)                                                                   \
    X(cuMemcpyPeer_ptds, 409)                                                              \
    X(cuMemcpyPeerAsync, 319)                                                              \
    X(cuMemcpyPeerAsync_ptsz, 426)                                                         \
    X(cuMemsetD8_v2, 249)                                                                  \
    X(cuMemsetD8_v2_ptds, 411)                                                             \
    X(cuMemsetD16_v2, 250)                                                                 \
    X(cuMemsetD16_v2_ptds, 412)                                                            \
    X(cuMemsetD32_v2, 251)                                                                 \
    X(cuMemsetD32_v2_ptds, 413)                                                            \
    X(cuMemsetD8Async, 216)                                                                \
    X(cuMemsetD8Async_ptsz, 428)                                                           \
    X(cuMemsetD16Async, 218)                                                               \
    X(cuMemsetD16Async_ptsz, 429)                                                          \
    X(cuMemsetD32Async, 220)                                                               \
    X(cuMemsetD32Async_ptsz, 430)                                                          \
    X(cuMemsetD2D8_v2, 252)                                                                \
    X(cuMemsetD2D8_v2_ptds, 414)                                                           \
    X(cuMemsetD2D16_v2, 253)                                                               \
    X(cuMemsetD2D16_v2_ptds, 415)                                                          \
    X(cuMemsetD2D32_v2, 254)                                                               \
    X(cuMemsetD2D32_v2_ptds, 416)                                                          \
    X(cuMemsetD2D8Async, 222)                                                              \
    X(cuMemsetD2D8Async_ptsz, 431)                                                         \
    X(cuMemsetD2D16Async, 224)                                                             \
    X(cuMemsetD2D16Async_ptsz, 432)                                                        \
    X(cuMemsetD2D32Async, 226)                                                             \
    X(cuMemsetD2D32Async_ptsz, 433)

/* ---- entry points ------------------------------------------------------------------------ */

/* X(name, ret, params, args): what the shim calls, the first version that
 * has each (CUPTI_API_VERSION), and what the simulated libcupti exports. */
#define OBS_CUPTI_API(X)                                                                                  \
    X(cuptiGetVersion, obs_CUptiResult, (uint32_t * version), (version))                                 \
    X(cuptiGetResultString, obs_CUptiResult, (obs_CUptiResult result, const char **str), (result, str))  \
    X(cuptiSubscribe, obs_CUptiResult,                                                                   \
      (obs_CUpti_SubscriberHandle * subscriber, obs_CUpti_CallbackFunc callback, void *userdata),        \
      (subscriber, callback, userdata))                                                                  \
    X(cuptiSubscribe_v2, obs_CUptiResult,                                                                \
      (obs_CUpti_SubscriberHandle * subscriber, obs_CUpti_CallbackFunc callback, void *userdata,         \
       obs_CUpti_SubscriberParams *params),                                                              \
      (subscriber, callback, userdata, params))                                                          \
    X(cuptiUnsubscribe, obs_CUptiResult, (obs_CUpti_SubscriberHandle subscriber), (subscriber))         \
    X(cuptiActivityEnable, obs_CUptiResult, (obs_CUpti_ActivityKind kind), (kind))                       \
    X(cuptiActivityDisable, obs_CUptiResult, (obs_CUpti_ActivityKind kind), (kind))                      \
    X(cuptiActivityEnableRuntimeApi, obs_CUptiResult, (obs_CUpti_CallbackId cbid, uint8_t enable),       \
      (cbid, enable))                                                                                    \
    X(cuptiActivityEnableDriverApi, obs_CUptiResult, (obs_CUpti_CallbackId cbid, uint8_t enable),        \
      (cbid, enable))                                                                                    \
    X(cuptiActivityRegisterCallbacks, obs_CUptiResult,                                                   \
      (obs_CUpti_BuffersCallbackRequestFunc requested, obs_CUpti_BuffersCallbackCompleteFunc completed), \
      (requested, completed))                                                                            \
    X(cuptiActivityRegisterTimestampCallback, obs_CUptiResult, (obs_CUpti_TimestampCallbackFunc func),   \
      (func))                                                                                            \
    X(cuptiSetThreadIdType, obs_CUptiResult, (obs_CUpti_ActivityThreadIdType type), (type))              \
    X(cuptiActivityFlushAll, obs_CUptiResult, (uint32_t flag), (flag))                                   \
    X(cuptiActivityFlushPeriod, obs_CUptiResult, (uint32_t ms), (ms))                                    \
    X(cuptiActivityGetNextRecord, obs_CUptiResult,                                                       \
      (uint8_t * buffer, size_t validBufferSizeBytes, obs_CUpti_Activity **record),                      \
      (buffer, validBufferSizeBytes, record))                                                            \
    X(cuptiActivityGetNumDroppedRecords, obs_CUptiResult, (void *context, uint32_t streamId, size_t *dropped), \
      (context, streamId, dropped))

#define OBS_CUPTI_DECLARE_FN(name, ret, params, args) typedef ret(*obs_fn_##name) params;
OBS_CUPTI_API(OBS_CUPTI_DECLARE_FN)
#undef OBS_CUPTI_DECLARE_FN

/* Prototypes under the real names (the simulated libcupti, test apps).
 * Define OBS_CUPTI_ABI_NO_PROTOTYPES beside the real cupti.h. */
#ifndef OBS_CUPTI_ABI_NO_PROTOTYPES
#define OBS_CUPTI_PROTOTYPE(name, ret, params, args) ret name params;
OBS_CUPTI_API(OBS_CUPTI_PROTOTYPE)
#undef OBS_CUPTI_PROTOTYPE
#endif

#endif
