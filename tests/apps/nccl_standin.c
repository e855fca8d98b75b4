/* A stand-in libnccl.so.2 for the shim's NCCL tests (tests/t_shim_nccl):
 * NCCL's C API (shim/abi/nccl_abi.h) over the simulated CUDA runtime, with
 * no communication at all: each rank is on its own. What it does is what
 * the shim has to see through: a communicator call makes a CUDA call
 * (cudaMalloc); a collective or point-to-point call outside a group
 * launches one kernel on its stream; inside a group it is queued, and the
 * ncclGroupEnd that closes the outermost group launches one kernel per
 * queued call; ncclBcast calls the exported ncclBroadcast (as some NCCL
 * versions do), through the dynamic linker; a count of 7 is refused
 * (ncclInvalidArgument), a call on a NULL communicator too. A split's
 * communicator has the parent's rank and size; NCCL_SPLIT_NOCOLOR makes
 * none. Launches are of one registered kernel, nccl_standin_kernel. */
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_abi.h"
#include "abi/nccl_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define KERNEL_NAME "nccl_standin_kernel"

struct obs_ncclComm {
    int rank, nranks;
    void *scratch;
};

extern obs_ncclResult_t ncclGetUniqueId(obs_ncclUniqueId *id);

static volatile int kernel_ran;
static void nccl_standin_kernel(void)
{
    kernel_ran = 1;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)nccl_standin_kernel, (char *)KERNEL_NAME, KERNEL_NAME, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

/* Per thread, as NCCL's: groups open, calls queued in them (their streams). */
static __thread int group_depth;
static __thread obs_cudaStream_t queued[64];
static __thread int nqueued;

static obs_ncclResult_t launch(obs_cudaStream_t stream)
{
    obs_dim3 one = {1, 1, 1};
    return cudaLaunchKernel((const void *)nccl_standin_kernel, one, one, NULL, 0, stream) == obs_cudaSuccess
               ? obs_ncclSuccess
               : obs_ncclUnhandledCudaError;
}

static obs_ncclResult_t enqueue(size_t count, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    if (comm == NULL || count == 7)
        return obs_ncclInvalidArgument;
    if (group_depth == 0)
        return launch(stream);
    if (nqueued == 64)
        return obs_ncclInternalError;
    queued[nqueued++] = stream;
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclGetUniqueId(obs_ncclUniqueId *id)
{
    if (id == NULL)
        return obs_ncclInvalidArgument;
    for (size_t i = 0; i < sizeof id->internal; i++)
        id->internal[i] = (char)(rand() & 0xff);
    return obs_ncclSuccess;
}

static obs_ncclResult_t make_comm(obs_ncclComm_t *comm, int nranks, int rank)
{
    obs_ncclComm_t c;
    if (comm == NULL || nranks < 1 || rank < 0 || rank >= nranks)
        return obs_ncclInvalidArgument;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return obs_ncclSystemError;
    c->rank = rank;
    c->nranks = nranks;
    if (cudaMalloc(&c->scratch, 4096) != obs_cudaSuccess) {
        free(c);
        return obs_ncclUnhandledCudaError;
    }
    *comm = c;
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclCommInitRank(obs_ncclComm_t *comm, int nranks, obs_ncclUniqueId commId, int rank)
{
    (void)commId;
    return make_comm(comm, nranks, rank);
}

EXPORT obs_ncclResult_t ncclCommInitRankConfig(obs_ncclComm_t *comm, int nranks, obs_ncclUniqueId commId, int rank,
                                               obs_ncclConfig_t *config)
{
    (void)commId;
    (void)config;
    return make_comm(comm, nranks, rank);
}

EXPORT obs_ncclResult_t ncclCommInitRankScalable(obs_ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                                 obs_ncclUniqueId *commIds, obs_ncclConfig_t *config)
{
    (void)config;
    if (nId < 1 || commIds == NULL)
        return obs_ncclInvalidArgument;
    return make_comm(newcomm, nranks, myrank);
}

EXPORT obs_ncclResult_t ncclCommInitAll(obs_ncclComm_t *comm, int ndev, const int *devlist)
{
    (void)devlist;
    for (int i = 0; i < ndev; i++) {
        obs_ncclResult_t r = make_comm(&comm[i], ndev, i);
        if (r != obs_ncclSuccess)
            return r;
    }
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclCommSplit(obs_ncclComm_t comm, int color, int key, obs_ncclComm_t *newcomm,
                                      obs_ncclConfig_t *config)
{
    (void)key;
    (void)config;
    if (comm == NULL || newcomm == NULL)
        return obs_ncclInvalidArgument;
    if (color == OBS_NCCL_SPLIT_NOCOLOR) {
        *newcomm = NULL;
        return obs_ncclSuccess;
    }
    return make_comm(newcomm, comm->nranks, comm->rank);
}

static obs_ncclResult_t drop_comm(obs_ncclComm_t comm)
{
    if (comm == NULL)
        return obs_ncclInvalidArgument;
    cudaFree(comm->scratch);
    free(comm);
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclCommFinalize(obs_ncclComm_t comm)
{
    return comm != NULL ? obs_ncclSuccess : obs_ncclInvalidArgument;
}

EXPORT obs_ncclResult_t ncclCommDestroy(obs_ncclComm_t comm)
{
    return drop_comm(comm);
}

EXPORT obs_ncclResult_t ncclCommAbort(obs_ncclComm_t comm)
{
    return drop_comm(comm);
}

EXPORT obs_ncclResult_t ncclCommCount(const obs_ncclComm_t comm, int *count)
{
    if (comm == NULL || count == NULL)
        return obs_ncclInvalidArgument;
    *count = comm->nranks;
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclCommUserRank(const obs_ncclComm_t comm, int *rank)
{
    if (comm == NULL || rank == NULL)
        return obs_ncclInvalidArgument;
    *rank = comm->rank;
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return obs_ncclSuccess;
}

EXPORT obs_ncclResult_t ncclGroupEnd(void)
{
    obs_ncclResult_t r = obs_ncclSuccess;
    if (group_depth == 0)
        return obs_ncclInvalidUsage;
    if (--group_depth > 0)
        return obs_ncclSuccess;
    for (int i = 0; i < nqueued && r == obs_ncclSuccess; i++)
        r = launch(queued[i]);
    nqueued = 0;
    return r;
}

EXPORT obs_ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                      obs_ncclRedOp_t op, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)op;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                                      obs_ncclDataType_t datatype, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype;
    return enqueue(sendcount, comm, stream);
}

EXPORT obs_ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                                          obs_ncclDataType_t datatype, obs_ncclRedOp_t op, obs_ncclComm_t comm,
                                          obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)op;
    return enqueue(recvcount, comm, stream);
}

EXPORT obs_ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                      int root, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)root;
    return enqueue(count, comm, stream);
}

/* In place: the exported ncclBroadcast, through the dynamic linker. */
EXPORT obs_ncclResult_t ncclBcast(void *buff, size_t count, obs_ncclDataType_t datatype, int root,
                                  obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

EXPORT obs_ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                   obs_ncclRedOp_t op, int root, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)op, (void)root;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                     obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                   int root, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)root;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                                    int root, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)datatype, (void)root;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclSend(const void *sendbuff, size_t count, obs_ncclDataType_t datatype, int peer,
                                 obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)sendbuff, (void)datatype, (void)peer;
    return enqueue(count, comm, stream);
}

EXPORT obs_ncclResult_t ncclRecv(void *recvbuff, size_t count, obs_ncclDataType_t datatype, int peer,
                                 obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    (void)recvbuff, (void)datatype, (void)peer;
    return enqueue(count, comm, stream);
}
