/* The slice of NCCL's ABI (nccl.h, NCCL 2.x) that the shim records and its
 * tests call, with obs_ names so that no NCCL header is needed and this one
 * can sit beside the real nccl.h (tests/t_abi_nccl.c compares the two: the
 * unique id's size, the enum values, and that every entry point of the
 * lists exists in the real libnccl.so.2). NCCL's C API has been stable
 * since 2.0; the entry points added later (ncclCommSplit 2.18,
 * ncclCommInitRankScalable 2.23, ncclCommShrink 2.27, ncclAlltoAll /
 * ncclGather / ncclScatter 2.28) are simply absent from older libraries. */
#ifndef OBS_NCCL_ABI_H
#define OBS_NCCL_ABI_H

#include <stddef.h>

#include "cuda_abi.h" /* obs_cudaStream_t */

typedef int obs_ncclResult_t; /* enum ncclResult_t: 4 bytes */
enum {
    obs_ncclSuccess = 0,
    obs_ncclUnhandledCudaError = 1,
    obs_ncclSystemError = 2,
    obs_ncclInternalError = 3,
    obs_ncclInvalidArgument = 4,
    obs_ncclInvalidUsage = 5,
    obs_ncclRemoteError = 6,
    obs_ncclInProgress = 7
};

typedef struct obs_ncclComm *obs_ncclComm_t; /* opaque */

#define OBS_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[OBS_NCCL_UNIQUE_ID_BYTES];
} obs_ncclUniqueId; /* passed by value to ncclCommInitRank(Config) */

#define OBS_NCCL_SPLIT_NOCOLOR (-1)

/* ncclConfig_t is versioned and never read here: a pointer only. */
typedef struct obs_ncclConfig obs_ncclConfig_t;

typedef int obs_ncclDataType_t; /* enum ncclDataType_t */
#define OBS_NCCL_ABI_DATATYPES(X)  \
    X(ncclInt8, 0, 1, "int8")      \
    X(ncclUint8, 1, 1, "uint8")    \
    X(ncclInt32, 2, 4, "int32")    \
    X(ncclUint32, 3, 4, "uint32")  \
    X(ncclInt64, 4, 8, "int64")    \
    X(ncclUint64, 5, 8, "uint64")  \
    X(ncclFloat16, 6, 2, "float16") \
    X(ncclFloat32, 7, 4, "float32") \
    X(ncclFloat64, 8, 8, "float64") \
    X(ncclBfloat16, 9, 2, "bfloat16") \
    X(ncclFloat8e4m3, 10, 1, "float8e4m3") \
    X(ncclFloat8e5m2, 11, 1, "float8e5m2")
enum {
#define OBS_NCCL_DATATYPE_ENUM(name, value, size, text) obs_##name = value,
    OBS_NCCL_ABI_DATATYPES(OBS_NCCL_DATATYPE_ENUM)
#undef OBS_NCCL_DATATYPE_ENUM
    obs_ncclNumTypes = 12
};

typedef int obs_ncclRedOp_t; /* enum ncclRedOp_t; >= ncclNumOps: made by ncclRedOpCreatePreMulSum */
#define OBS_NCCL_ABI_REDOPS(X) \
    X(ncclSum, 0, "sum")       \
    X(ncclProd, 1, "prod")     \
    X(ncclMax, 2, "max")       \
    X(ncclMin, 3, "min")       \
    X(ncclAvg, 4, "avg")
enum {
#define OBS_NCCL_REDOP_ENUM(name, value, text) obs_##name = value,
    OBS_NCCL_ABI_REDOPS(OBS_NCCL_REDOP_ENUM)
#undef OBS_NCCL_REDOP_ENUM
    obs_ncclNumOps = 5
};

/* The collectives and point-to-point calls, X(name, ret, params, args). */
#define OBS_NCCL_COLL_API(X)                                                                        \
    X(ncclAllReduce, obs_ncclResult_t,                                                              \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,              \
       obs_ncclRedOp_t op, obs_ncclComm_t comm, obs_cudaStream_t stream),                            \
      (sendbuff, recvbuff, count, datatype, op, comm, stream))                                       \
    X(ncclAllGather, obs_ncclResult_t,                                                              \
      (const void *sendbuff, void *recvbuff, size_t sendcount, obs_ncclDataType_t datatype,          \
       obs_ncclComm_t comm, obs_cudaStream_t stream),                                                \
      (sendbuff, recvbuff, sendcount, datatype, comm, stream))                                       \
    X(ncclReduceScatter, obs_ncclResult_t,                                                          \
      (const void *sendbuff, void *recvbuff, size_t recvcount, obs_ncclDataType_t datatype,          \
       obs_ncclRedOp_t op, obs_ncclComm_t comm, obs_cudaStream_t stream),                            \
      (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))                                   \
    X(ncclBroadcast, obs_ncclResult_t,                                                              \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,    \
       obs_ncclComm_t comm, obs_cudaStream_t stream),                                                \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                     \
    X(ncclBcast, obs_ncclResult_t,                                                                  \
      (void *buff, size_t count, obs_ncclDataType_t datatype, int root, obs_ncclComm_t comm,         \
       obs_cudaStream_t stream),                                                                     \
      (buff, count, datatype, root, comm, stream))                                                   \
    X(ncclReduce, obs_ncclResult_t,                                                                 \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,              \
       obs_ncclRedOp_t op, int root, obs_ncclComm_t comm, obs_cudaStream_t stream),                  \
      (sendbuff, recvbuff, count, datatype, op, root, comm, stream))                                 \
    X(ncclAlltoAll, obs_ncclResult_t,                                                               \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,              \
       obs_ncclComm_t comm, obs_cudaStream_t stream),                                                \
      (sendbuff, recvbuff, count, datatype, comm, stream))                                           \
    X(ncclGather, obs_ncclResult_t,                                                                 \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,    \
       obs_ncclComm_t comm, obs_cudaStream_t stream),                                                \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                     \
    X(ncclScatter, obs_ncclResult_t,                                                                \
      (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,    \
       obs_ncclComm_t comm, obs_cudaStream_t stream),                                                \
      (sendbuff, recvbuff, count, datatype, root, comm, stream))                                     \
    X(ncclSend, obs_ncclResult_t,                                                                   \
      (const void *sendbuff, size_t count, obs_ncclDataType_t datatype, int peer, obs_ncclComm_t comm, \
       obs_cudaStream_t stream),                                                                     \
      (sendbuff, count, datatype, peer, comm, stream))                                               \
    X(ncclRecv, obs_ncclResult_t,                                                                   \
      (void *recvbuff, size_t count, obs_ncclDataType_t datatype, int peer, obs_ncclComm_t comm,     \
       obs_cudaStream_t stream),                                                                     \
      (recvbuff, count, datatype, peer, comm, stream))

/* Groups and the communicator calls. */
#define OBS_NCCL_COMM_API(X)                                                                        \
    X(ncclGroupStart, obs_ncclResult_t, (void), ())                                                 \
    X(ncclGroupEnd, obs_ncclResult_t, (void), ())                                                   \
    X(ncclCommInitRank, obs_ncclResult_t,                                                           \
      (obs_ncclComm_t * comm, int nranks, obs_ncclUniqueId commId, int rank),                        \
      (comm, nranks, commId, rank))                                                                  \
    X(ncclCommInitRankConfig, obs_ncclResult_t,                                                     \
      (obs_ncclComm_t * comm, int nranks, obs_ncclUniqueId commId, int rank, obs_ncclConfig_t *config), \
      (comm, nranks, commId, rank, config))                                                          \
    X(ncclCommInitRankScalable, obs_ncclResult_t,                                                   \
      (obs_ncclComm_t * newcomm, int nranks, int myrank, int nId, obs_ncclUniqueId *commIds,         \
       obs_ncclConfig_t *config),                                                                    \
      (newcomm, nranks, myrank, nId, commIds, config))                                               \
    X(ncclCommInitAll, obs_ncclResult_t, (obs_ncclComm_t * comm, int ndev, const int *devlist),      \
      (comm, ndev, devlist))                                                                         \
    X(ncclCommSplit, obs_ncclResult_t,                                                              \
      (obs_ncclComm_t comm, int color, int key, obs_ncclComm_t *newcomm, obs_ncclConfig_t *config),   \
      (comm, color, key, newcomm, config))                                                           \
    X(ncclCommFinalize, obs_ncclResult_t, (obs_ncclComm_t comm), (comm))                            \
    X(ncclCommDestroy, obs_ncclResult_t, (obs_ncclComm_t comm), (comm))                             \
    X(ncclCommAbort, obs_ncclResult_t, (obs_ncclComm_t comm), (comm))

/* What the shim itself calls (never recorded). */
#define OBS_NCCL_SUPPORT_API(X)                                                                     \
    X(ncclCommCount, obs_ncclResult_t, (const obs_ncclComm_t comm, int *count), (comm, count))       \
    X(ncclCommUserRank, obs_ncclResult_t, (const obs_ncclComm_t comm, int *rank), (comm, rank))

/* Pointer types for the real functions: obs_fn_ncclAllReduce ... */
#define OBS_NCCL_DECLARE_FN(name, ret, params, args) typedef ret(*obs_fn_##name) params;
OBS_NCCL_COLL_API(OBS_NCCL_DECLARE_FN)
OBS_NCCL_COMM_API(OBS_NCCL_DECLARE_FN)
OBS_NCCL_SUPPORT_API(OBS_NCCL_DECLARE_FN)
#undef OBS_NCCL_DECLARE_FN

/* Prototypes under the real names (the shim's wrappers, the test
 * programs); OBS_NCCL_ABI_NO_PROTOTYPES skips them (beside nccl.h). */
#ifndef OBS_NCCL_ABI_NO_PROTOTYPES
#define OBS_NCCL_PROTOTYPE(name, ret, params, args) ret name params;
OBS_NCCL_COLL_API(OBS_NCCL_PROTOTYPE)
OBS_NCCL_COMM_API(OBS_NCCL_PROTOTYPE)
OBS_NCCL_SUPPORT_API(OBS_NCCL_PROTOTYPE)
#undef OBS_NCCL_PROTOTYPE
#endif

#endif
