/* One rank of an NCCL program, for tests/t_shim_nccl: over the stand-in
 * libnccl.so.2 (nccl_standin.c) and the simulated runtime.
 *
 *   nccl_app RANK NRANKS SEED [THREADS]
 *
 * The unique id is made from SEED (the same on every rank), so the ranks
 * of one run share their communicator without talking. Each call prints
 * "<what> <status>" on stdout; the same lines with and without the shim.
 * The script: every collective and point-to-point call once (a refused
 * count of 7 among them), a group of a send and a receive, nested groups,
 * a split (and one with no color), the other communicator calls, an
 * all-reduce fetched with dlsym on the library's handle. THREADS > 0: then
 * that many threads at once, each with a communicator of its own (NCCL's
 * rule: one thread per communicator at a time), each 40 all-reduces, every
 * other one in a group, then its communicator destroyed; each prints
 * "thread K done". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "abi/cuda_abi.h"
#include "abi/nccl_abi.h"
#include "nccl_seed_id.h"

static void report(const char *what, int status)
{
    printf("%s %d\n", what, status);
    fflush(stdout);
}

static int standin_script(int rank, int nranks, unsigned seed)
{
    obs_ncclComm_t comm = NULL, sub = NULL, none = (obs_ncclComm_t)1, scalable = NULL, all[2] = {NULL, NULL},
                   aborted = NULL;
    obs_ncclUniqueId id = nccl_seed_id(seed), ids[2] = {nccl_seed_id(seed + 1), nccl_seed_id(seed + 2)};
    obs_cudaStream_t s = NULL;
    void *buf = NULL;
    int dev[2] = {0, 0};
    obs_fn_ncclAllReduce fetched;
    void *lib;

    if (cudaStreamCreate(&s) != obs_cudaSuccess || cudaMalloc(&buf, 1 << 16) != obs_cudaSuccess)
        return 1;
    report("ncclCommInitRank", ncclCommInitRank(&comm, nranks, id, rank));
    report("ncclAllReduce", ncclAllReduce(buf, buf, 1024, obs_ncclFloat32, obs_ncclSum, comm, s));
    report("ncclAllGather", ncclAllGather(buf, buf, 256, obs_ncclFloat16, comm, s));
    report("ncclReduceScatter", ncclReduceScatter(buf, buf, 128, obs_ncclBfloat16, obs_ncclMax, comm, s));
    report("ncclBroadcast", ncclBroadcast(buf, buf, 64, obs_ncclInt32, 1 % nranks, comm, s));
    report("ncclBcast", ncclBcast(buf, 32, obs_ncclInt8, 0, comm, s));
    report("ncclReduce", ncclReduce(buf, buf, 16, obs_ncclFloat64, obs_ncclAvg, 0, comm, s));
    report("ncclAlltoAll", ncclAlltoAll(buf, buf, 8, obs_ncclUint8, comm, s));
    report("ncclGather", ncclGather(buf, buf, 4, obs_ncclInt64, 0, comm, s));
    report("ncclScatter", ncclScatter(buf, buf, 2, obs_ncclUint64, 0, comm, s));
    report("ncclGroupStart", ncclGroupStart());
    report("ncclSend", ncclSend(buf, 100, obs_ncclFloat32, (rank + 1) % nranks, comm, s));
    report("ncclRecv", ncclRecv(buf, 100, obs_ncclFloat32, (rank + nranks - 1) % nranks, comm, s));
    report("ncclGroupEnd", ncclGroupEnd());
    report("ncclGroupStart", ncclGroupStart());
    report("ncclGroupStart", ncclGroupStart());
    report("ncclAllReduce", ncclAllReduce(buf, buf, 10, obs_ncclInt32, obs_ncclMin, comm, s));
    report("ncclGroupEnd", ncclGroupEnd());
    report("ncclAllReduce", ncclAllReduce(buf, buf, 20, obs_ncclInt32, obs_ncclProd, comm, s));
    report("ncclGroupEnd", ncclGroupEnd());
    report("ncclAllReduce", ncclAllReduce(buf, buf, 7, obs_ncclFloat32, obs_ncclSum, comm, s)); /* refused */
    report("ncclCommSplit", ncclCommSplit(comm, rank % 2, rank, &sub, NULL));
    report("ncclAllReduce", ncclAllReduce(buf, buf, 512, obs_ncclFloat32, obs_ncclSum, sub, s));
    report("ncclCommSplit", ncclCommSplit(comm, OBS_NCCL_SPLIT_NOCOLOR, rank, &none, NULL));
    printf("nocolor %s\n", none == NULL ? "none" : "made");
    lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
    fetched = lib ? (obs_fn_ncclAllReduce)dlsym(lib, "ncclAllReduce") : NULL;
    report("dlsym ncclAllReduce", fetched ? fetched(buf, buf, 3, obs_ncclUint32, obs_ncclSum, comm, s) : -1);
    report("ncclCommInitRankScalable", ncclCommInitRankScalable(&scalable, nranks, rank, 2, ids, NULL));
    report("ncclCommInitAll", ncclCommInitAll(all, 2, dev));
    report("ncclCommInitRankConfig", ncclCommInitRankConfig(&aborted, nranks, nccl_seed_id(seed + 3), rank, NULL));
    report("ncclCommFinalize", ncclCommFinalize(sub));
    report("ncclCommDestroy", ncclCommDestroy(sub));
    report("ncclCommAbort", ncclCommAbort(aborted));
    report("ncclCommDestroy", ncclCommDestroy(scalable));
    report("ncclCommDestroy", ncclCommDestroy(all[0]));
    report("ncclCommDestroy", ncclCommDestroy(all[1]));
    report("ncclCommDestroy", ncclCommDestroy(comm));
    report("cudaStreamSynchronize", cudaStreamSynchronize(s));
    if (lib)
        dlclose(lib);
    return 0;
}

struct worker {
    int index, rank, nranks;
    unsigned seed;
    int failed;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    obs_ncclComm_t comm = NULL;
    obs_cudaStream_t s = NULL;
    void *buf = NULL;
    if (cudaStreamCreate(&s) != obs_cudaSuccess || cudaMalloc(&buf, 4096) != obs_cudaSuccess ||
        ncclCommInitRank(&comm, w->nranks, nccl_seed_id(w->seed + 100 + (unsigned)w->index), w->rank) != obs_ncclSuccess) {
        w->failed = 1;
        return NULL;
    }
    for (int i = 0; i < 40; i++) {
        if (i % 2)
            w->failed |= ncclGroupStart() != obs_ncclSuccess;
        w->failed |= ncclAllReduce(buf, buf, 256, obs_ncclFloat32, obs_ncclSum, comm, s) != obs_ncclSuccess;
        if (i % 2)
            w->failed |= ncclGroupEnd() != obs_ncclSuccess;
    }
    w->failed |= cudaStreamSynchronize(s) != obs_cudaSuccess;
    w->failed |= ncclCommDestroy(comm) != obs_ncclSuccess;
    return NULL;
}

static int threads_script(int rank, int nranks, unsigned seed, int nthreads)
{
    pthread_t tids[8];
    struct worker w[8];
    int failed = 0;
    if (nthreads > 8)
        nthreads = 8;
    for (int i = 0; i < nthreads; i++) {
        w[i] = (struct worker){i, rank, nranks, seed, 0};
        if (pthread_create(&tids[i], NULL, worker_main, &w[i]) != 0)
            return 1;
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tids[i], NULL);
        printf("thread %d %s\n", i, w[i].failed ? "failed" : "done");
        failed |= w[i].failed;
    }
    return failed;
}

int main(int argc, char **argv)
{
    int rank, nranks, threads = argc == 5 ? atoi(argv[4]) : 0;
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: nccl_app RANK NRANKS SEED [THREADS]\n");
        return 2;
    }
    rank = atoi(argv[1]);
    nranks = atoi(argv[2]);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return 2;
    if (standin_script(rank, nranks, (unsigned)atoi(argv[3])) != 0)
        return 1;
    return threads > 0 ? threads_script(rank, nranks, (unsigned)atoi(argv[3]), threads) : 0;
}
