/* The NCCL hooks: every collective and point-to-point call, the group
 * calls and the communicator calls of NCCL's C API (shim/abi/nccl_abi.h),
 * interposed through the dynamic linker as the CUDA runtime's are
 * (docs/shim.md, "NCCL": why this interception point and not NCCL's
 * profiler plugin).
 *
 * A collective's wrapper differs from the CUDA ones in one way: the real
 * call runs *outside* the shim's re-entry guard, because the CUDA calls
 * NCCL makes inside it (the kernel launches, through cuLaunchKernelEx;
 * a lazy connection's allocations and copies) are calls of their own, to
 * be recorded once each like any other. A per-thread NCCL depth instead
 * keeps NCCL's calls into its own exported API (ncclBcast into
 * ncclBroadcast ...) from being recorded twice. Around the real call:
 *
 *   describe (op, type, count, reduction, root or peer, stream, the
 *   communicator's id and the next sequence number of it); the live
 *   COMM/<op> range (phases/comm_ranges.h); the thread's next record index;
 *   t_begin; the real call; t_end; the records made since (the launches it
 *   caused) counted into the COLL record, which is appended; the range
 *   closed.
 *
 * Hot path (a collective): two lock-free map lookups (communicator,
 * stream), a load and a store of the communicator's counter, two clock
 * reads, a 48-byte append, an indirect call per range sink; no lock,
 * allocation, getenv or formatting. Communicator calls are rare: they hash
 * the unique id, add the communicator to the table (a lock) and write a
 * COMM record. Calls made while the shim is not recording (before its
 * start, after its exit flush, OBS_ENABLE=0) or during its own work pass
 * straight through. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "abi/nccl_abi.h"
#include "common/common.h"
#include "hooks_runtime.h"
#include "phases/phase_engine.h"
#include "record/record.h"
#include "runtimes/real_symbols.h"

/* NCCL calls in progress on this thread (NCCL calling its own API), and
 * the groups it has open (ncclGroupStart not yet ended). */
static __thread uint32_t nccl_depth __attribute__((tls_model("initial-exec")));
static __thread uint32_t nccl_groups __attribute__((tls_model("initial-exec")));

/* A real function the loaded NCCL lacks (an older one) is never called. */
static obs_ncclResult_t nccl_missing(unsigned index)
{
    struct obs_guard guard;
    obs_guard_enter(&guard);
    obs_real_warn_missing(&obs_real_nccl, index, "ncclInvalidUsage (5) is returned");
    obs_guard_leave(&guard);
    return obs_ncclInvalidUsage;
}

/* ---- the call in progress --------------------------------------------------------------- */

struct nccl_call {
    union obs_record rec;
    uint64_t first_index; /* the thread's next record index before the real call */
    int errno_value;
};

/* True: record this call (the NCCL depth is taken). False: pass it
 * through (not recording, the shim's own work, or NCCL inside NCCL). */
static inline bool nccl_call_begin(struct nccl_call *call)
{
    if (obs_unlikely(atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING) ||
        obs_unlikely(obs_guard_held()) || obs_unlikely(nccl_depth != 0))
        return false;
    call->errno_value = errno;
    nccl_depth++;
    memset(&call->rec, 0, sizeof call->rec);
    return true;
}

/* The thread's next record index (before its first record: the index that
 * one will have). */
static inline uint64_t next_index(void)
{
    uint64_t i = obs_thread_next_index();
    return i != UINT64_MAX ? i : obs_tls.next_index;
}

static inline uint32_t nested_since(uint64_t first, uint8_t *flags, uint8_t cut_flag)
{
    uint64_t n = next_index() - first;
    if (n > UINT16_MAX) {
        *flags |= cut_flag;
        return UINT16_MAX;
    }
    return (uint32_t)n;
}

static inline uint32_t duration(uint64_t t_begin, uint64_t t_end, uint8_t *flags, uint8_t us_flag)
{
    uint64_t d = t_end - t_begin;
    if (obs_unlikely(d > UINT32_MAX)) {
        *flags |= us_flag;
        d = d / 1000 > UINT32_MAX ? UINT32_MAX : d / 1000;
    }
    return (uint32_t)d;
}

/* ---- collectives, point-to-point and group calls ---------------------------------------------- */

static inline void coll_describe(struct obs_rec_coll *r, unsigned op, obs_ncclDataType_t datatype, size_t count,
                                 int redop, int peer, obs_ncclComm_t comm, obs_cudaStream_t stream)
{
    struct obs_guard guard;
    struct obs_nccl_comm *c;
    obs_guard_enter(&guard); /* a new stream's STREAM record is the shim's work */
    r->type = OBS_REC_COLL;
    r->op = (uint8_t)op;
    r->datatype = datatype >= 0 && datatype < obs_ncclNumTypes ? (uint8_t)datatype : OBS_NCCL_NO_TYPE;
    r->redop = redop < 0 ? OBS_NCCL_NO_REDOP : redop < obs_ncclNumOps ? (uint8_t)redop : OBS_NCCL_REDOP_CUSTOM;
    r->count = count;
    r->peer = peer;
    r->stream = obs_stream_id((uintptr_t)stream, (uint16_t)obs_tls.device);
    c = obs_nccl_comm_find(comm);
    r->comm = c ? c->id : 0;
    r->seq = c ? obs_nccl_comm_next_seq(c) : OBS_NO_SEQ;
    r->group = nccl_groups > UINT8_MAX ? UINT8_MAX : (uint8_t)nccl_groups;
    obs_guard_leave(&guard);
}

static inline void group_describe(struct obs_rec_coll *r, unsigned op)
{
    r->type = OBS_REC_COLL;
    r->op = (uint8_t)op;
    r->datatype = OBS_NCCL_NO_TYPE;
    r->redop = OBS_NCCL_NO_REDOP;
    r->peer = -1;
    r->seq = OBS_NO_SEQ;
    /* ncclGroupEnd counts the group it closes */
    r->group = nccl_groups > UINT8_MAX ? UINT8_MAX : (uint8_t)nccl_groups;
}

/* Just before the real call: the live range (none for ncclGroupStart,
 * which does nothing), the record index, t_begin. */
static inline void coll_started(struct nccl_call *call)
{
    if (call->rec.coll.op != OBS_COLL_GROUP_START) {
        struct obs_guard guard;
        obs_guard_enter(&guard);
        obs_comm_range_begin(call->rec.coll.op);
        obs_guard_leave(&guard);
    }
    call->first_index = next_index();
    errno = call->errno_value;
    call->rec.coll.t_begin = obs_now_ns();
}

/* Just after it: time, status, the records made inside; append; close. */
static inline void coll_finish(struct nccl_call *call, obs_ncclResult_t status)
{
    struct obs_guard guard;
    uint64_t t_end = obs_now_ns();
    struct obs_rec_coll *r = &call->rec.coll;
    obs_guard_enter(&guard); /* keeps the real call's errno */
    r->status = status;
    r->t_dur = duration(r->t_begin, t_end, &r->flags, OBS_COLL_DUR_US);
    r->nested = (uint16_t)nested_since(call->first_index, &r->flags, OBS_COLL_NESTED_CUT);
    obs_recorder_append(&call->rec);
    if (r->op != OBS_COLL_GROUP_START)
        obs_comm_range_end();
    nccl_depth--;
    obs_guard_leave(&guard);
}

/* OBS_NCCL_COLL_HOOK(name, op, (parameters), (arguments), datatype, count, redop, peer, comm, stream) */
#define OBS_NCCL_COLL_HOOK(name, op, params, args, datatype, count, redop, peer, comm, stream) \
    OBS_EXPORT obs_ncclResult_t name params                                                  \
    {                                                                                        \
        obs_fn_##name real = OBS_NCCL_REAL(name);                                            \
        struct nccl_call call;                                                               \
        obs_ncclResult_t status;                                                             \
        if (real == NULL)                                                                    \
            return nccl_missing(OBS_REAL_NCCL_##name);                                       \
        if (!nccl_call_begin(&call))                                                         \
            return real args;                                                                \
        coll_describe(&call.rec.coll, op, datatype, count, redop, peer, comm, stream);       \
        coll_started(&call);                                                                 \
        status = real args;                                                                  \
        coll_finish(&call, status);                                                          \
        return status;                                                                       \
    }

OBS_NCCL_COLL_HOOK(ncclAllReduce, OBS_COLL_ALL_REDUCE,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                    obs_ncclRedOp_t op, obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, op, comm, stream), datatype, count, op, -1, comm, stream)
OBS_NCCL_COLL_HOOK(ncclAllGather, OBS_COLL_ALL_GATHER,
                   (const void *sendbuff, void *recvbuff, size_t sendcount, obs_ncclDataType_t datatype,
                    obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, sendcount, datatype, comm, stream), datatype, sendcount, -1, -1, comm,
                   stream)
OBS_NCCL_COLL_HOOK(ncclReduceScatter, OBS_COLL_REDUCE_SCATTER,
                   (const void *sendbuff, void *recvbuff, size_t recvcount, obs_ncclDataType_t datatype,
                    obs_ncclRedOp_t op, obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, recvcount, datatype, op, comm, stream), datatype, recvcount, op, -1, comm,
                   stream)
OBS_NCCL_COLL_HOOK(ncclBroadcast, OBS_COLL_BROADCAST,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,
                    obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, root, comm, stream), datatype, count, -1, root, comm, stream)
OBS_NCCL_COLL_HOOK(ncclBcast, OBS_COLL_BCAST,
                   (void *buff, size_t count, obs_ncclDataType_t datatype, int root, obs_ncclComm_t comm,
                    obs_cudaStream_t stream),
                   (buff, count, datatype, root, comm, stream), datatype, count, -1, root, comm, stream)
OBS_NCCL_COLL_HOOK(ncclReduce, OBS_COLL_REDUCE,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                    obs_ncclRedOp_t op, int root, obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, op, root, comm, stream), datatype, count, op, root, comm,
                   stream)
OBS_NCCL_COLL_HOOK(ncclAlltoAll, OBS_COLL_ALL_TO_ALL,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype,
                    obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, comm, stream), datatype, count, -1, -1, comm, stream)
OBS_NCCL_COLL_HOOK(ncclGather, OBS_COLL_GATHER,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,
                    obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, root, comm, stream), datatype, count, -1, root, comm, stream)
OBS_NCCL_COLL_HOOK(ncclScatter, OBS_COLL_SCATTER,
                   (const void *sendbuff, void *recvbuff, size_t count, obs_ncclDataType_t datatype, int root,
                    obs_ncclComm_t comm, obs_cudaStream_t stream),
                   (sendbuff, recvbuff, count, datatype, root, comm, stream), datatype, count, -1, root, comm, stream)
OBS_NCCL_COLL_HOOK(ncclSend, OBS_COLL_SEND,
                   (const void *sendbuff, size_t count, obs_ncclDataType_t datatype, int peer, obs_ncclComm_t comm,
                    obs_cudaStream_t stream),
                   (sendbuff, count, datatype, peer, comm, stream), datatype, count, -1, peer, comm, stream)
OBS_NCCL_COLL_HOOK(ncclRecv, OBS_COLL_RECV,
                   (void *recvbuff, size_t count, obs_ncclDataType_t datatype, int peer, obs_ncclComm_t comm,
                    obs_cudaStream_t stream),
                   (recvbuff, count, datatype, peer, comm, stream), datatype, count, -1, peer, comm, stream)

/* Groups: a call inside one is enqueued only; NCCL launches the group's
 * kernels in the ncclGroupEnd that closes the outermost group. */
OBS_EXPORT obs_ncclResult_t ncclGroupStart(void)
{
    obs_fn_ncclGroupStart real = OBS_NCCL_REAL(ncclGroupStart);
    struct nccl_call call;
    obs_ncclResult_t status;
    if (real == NULL)
        return nccl_missing(OBS_REAL_NCCL_ncclGroupStart);
    if (!nccl_call_begin(&call))
        return real();
    group_describe(&call.rec.coll, OBS_COLL_GROUP_START);
    coll_started(&call);
    status = real();
    if (status == obs_ncclSuccess)
        nccl_groups++;
    coll_finish(&call, status);
    return status;
}

OBS_EXPORT obs_ncclResult_t ncclGroupEnd(void)
{
    obs_fn_ncclGroupEnd real = OBS_NCCL_REAL(ncclGroupEnd);
    struct nccl_call call;
    obs_ncclResult_t status;
    if (real == NULL)
        return nccl_missing(OBS_REAL_NCCL_ncclGroupEnd);
    if (!nccl_call_begin(&call))
        return real();
    group_describe(&call.rec.coll, OBS_COLL_GROUP_END);
    coll_started(&call);
    status = real();
    if (nccl_groups > 0) /* NCCL closes the group whatever the outcome */
        nccl_groups--;
    coll_finish(&call, status);
    return status;
}

/* ---- communicator calls ------------------------------------------------------------------------ */

static inline void comm_started(struct nccl_call *call, unsigned event)
{
    call->rec.comm.type = OBS_REC_COMM;
    call->rec.comm.event = (uint8_t)event;
    call->rec.comm.rank = -1;
    call->rec.comm.nranks = -1;
    call->rec.comm.color = -1;
    errno = call->errno_value;
    call->rec.comm.t_begin = obs_now_ns();
}

/* The real call returned (t_end taken): time and status. */
static inline void comm_timed(struct nccl_call *call, uint64_t t_end, obs_ncclResult_t status)
{
    call->rec.comm.status = status;
    call->rec.comm.t_dur = duration(call->rec.comm.t_begin, t_end, &call->rec.comm.flags, OBS_COMM_DUR_US);
}

/* A communicator the call made (handle NULL: none): its entry, and the record. */
static void comm_made(struct obs_rec_comm *r, obs_ncclComm_t handle, uint64_t hash, int32_t rank, int32_t nranks)
{
    struct obs_nccl_comm *c = handle ? obs_nccl_comm_add(handle, hash, rank, nranks) : NULL;
    r->hash = hash;
    r->rank = rank;
    r->nranks = nranks;
    r->comm = c ? c->id : 0;
}

static void comm_append(struct nccl_call *call)
{
    obs_recorder_append(&call->rec);
}

/* Leave: the real call's errno back. */
static inline void comm_leave(struct obs_guard *guard)
{
    nccl_depth--;
    obs_guard_leave(guard);
}

static obs_ncclResult_t init_rank(unsigned event, obs_ncclComm_t *comm, int nranks, obs_ncclUniqueId id, int rank,
                                  obs_ncclConfig_t *config)
{
    obs_fn_ncclCommInitRank plain = OBS_NCCL_REAL(ncclCommInitRank);
    obs_fn_ncclCommInitRankConfig with_config = OBS_NCCL_REAL(ncclCommInitRankConfig);
    struct nccl_call call;
    struct obs_guard guard;
    obs_ncclResult_t status;
    uint64_t t_end;
    bool made;

    if (event == OBS_COMM_INIT_RANK ? plain == NULL : with_config == NULL)
        return nccl_missing(event == OBS_COMM_INIT_RANK ? OBS_REAL_NCCL_ncclCommInitRank
                                                         : OBS_REAL_NCCL_ncclCommInitRankConfig);
    if (!nccl_call_begin(&call))
        return event == OBS_COMM_INIT_RANK ? plain(comm, nranks, id, rank) : with_config(comm, nranks, id, rank, config);
    comm_started(&call, event);
    status = event == OBS_COMM_INIT_RANK ? plain(comm, nranks, id, rank) : with_config(comm, nranks, id, rank, config);
    t_end = obs_now_ns();
    obs_guard_enter(&guard);
    comm_timed(&call, t_end, status);
    made = (status == obs_ncclSuccess || status == obs_ncclInProgress) && comm != NULL;
    comm_made(&call.rec.comm, made ? *comm : NULL, obs_nccl_hash(OBS_NCCL_HASH_SEED, id.internal, sizeof id.internal),
              rank, nranks);
    comm_append(&call);
    comm_leave(&guard);
    return status;
}

OBS_EXPORT obs_ncclResult_t ncclCommInitRank(obs_ncclComm_t *comm, int nranks, obs_ncclUniqueId commId, int rank)
{
    return init_rank(OBS_COMM_INIT_RANK, comm, nranks, commId, rank, NULL);
}

OBS_EXPORT obs_ncclResult_t ncclCommInitRankConfig(obs_ncclComm_t *comm, int nranks, obs_ncclUniqueId commId,
                                                   int rank, obs_ncclConfig_t *config)
{
    return init_rank(OBS_COMM_INIT_RANK_CONFIG, comm, nranks, commId, rank, config);
}

OBS_EXPORT obs_ncclResult_t ncclCommInitRankScalable(obs_ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                                     obs_ncclUniqueId *commIds, obs_ncclConfig_t *config)
{
    obs_fn_ncclCommInitRankScalable real = OBS_NCCL_REAL(ncclCommInitRankScalable);
    struct nccl_call call;
    struct obs_guard guard;
    obs_ncclResult_t status;
    uint64_t t_end, hash = OBS_NCCL_HASH_SEED;
    bool made;

    if (real == NULL)
        return nccl_missing(OBS_REAL_NCCL_ncclCommInitRankScalable);
    if (!nccl_call_begin(&call))
        return real(newcomm, nranks, myrank, nId, commIds, config);
    comm_started(&call, OBS_COMM_INIT_RANK_SCALABLE);
    status = real(newcomm, nranks, myrank, nId, commIds, config);
    t_end = obs_now_ns();
    obs_guard_enter(&guard);
    comm_timed(&call, t_end, status);
    for (int i = 0; commIds != NULL && i < nId; i++)
        hash = obs_nccl_hash(hash, commIds[i].internal, sizeof commIds[i].internal);
    made = (status == obs_ncclSuccess || status == obs_ncclInProgress) && newcomm != NULL;
    comm_made(&call.rec.comm, made ? *newcomm : NULL, hash, myrank, nranks);
    comm_append(&call);
    comm_leave(&guard);
    return status;
}

/* One process, ndev communicators: one record each, their identity from
 * the process and a counter (no other process shares them). */
OBS_EXPORT obs_ncclResult_t ncclCommInitAll(obs_ncclComm_t *comm, int ndev, const int *devlist)
{
    static _Atomic uint32_t calls;
    obs_fn_ncclCommInitAll real = OBS_NCCL_REAL(ncclCommInitAll);
    struct nccl_call call;
    struct obs_guard guard;
    obs_ncclResult_t status;
    uint64_t t_end, hash;
    uint32_t n;
    pid_t pid;

    if (real == NULL)
        return nccl_missing(OBS_REAL_NCCL_ncclCommInitAll);
    if (!nccl_call_begin(&call))
        return real(comm, ndev, devlist);
    comm_started(&call, OBS_COMM_INIT_ALL);
    status = real(comm, ndev, devlist);
    t_end = obs_now_ns();
    obs_guard_enter(&guard);
    comm_timed(&call, t_end, status);
    n = atomic_fetch_add(&calls, 1); /* not a hot path */
    pid = getpid();
    hash = obs_nccl_hash(obs_nccl_hash(OBS_NCCL_HASH_SEED, &pid, sizeof pid), &n, sizeof n);
    for (int i = 0; i < (ndev > 0 ? ndev : 1); i++) {
        bool made = status == obs_ncclSuccess && comm != NULL && ndev > 0;
        comm_made(&call.rec.comm, made ? comm[i] : NULL, hash, made ? i : -1, ndev);
        call.rec.comm.color = made ? (devlist ? devlist[i] : i) : -1;
        comm_append(&call);
    }
    comm_leave(&guard);
    return status;
}

/* The new communicator's identity: the parent's, the color, and how many
 * splits of the parent came before (every rank of the parent calls
 * ncclCommSplit, in the same order). Its rank and size are NCCL's answer. */
OBS_EXPORT obs_ncclResult_t ncclCommSplit(obs_ncclComm_t comm, int color, int key, obs_ncclComm_t *newcomm,
                                          obs_ncclConfig_t *config)
{
    obs_fn_ncclCommSplit real = OBS_NCCL_REAL(ncclCommSplit);
    obs_fn_ncclCommUserRank user_rank = OBS_NCCL_REAL(ncclCommUserRank);
    obs_fn_ncclCommCount count = OBS_NCCL_REAL(ncclCommCount);
    struct nccl_call call;
    struct obs_guard guard;
    struct obs_nccl_comm *parent;
    obs_ncclResult_t status;
    uint64_t t_end, hash = 0;
    uint32_t split = 0;
    int rank = -1, nranks = -1;

    if (real == NULL)
        return nccl_missing(OBS_REAL_NCCL_ncclCommSplit);
    if (!nccl_call_begin(&call))
        return real(comm, color, key, newcomm, config);
    parent = obs_nccl_comm_find(comm);
    if (parent != NULL) {
        split = atomic_load_explicit(&parent->splits, memory_order_relaxed);
        atomic_store_explicit(&parent->splits, split + 1, memory_order_relaxed);
    }
    comm_started(&call, OBS_COMM_SPLIT);
    status = real(comm, color, key, newcomm, config);
    t_end = obs_now_ns();
    obs_guard_enter(&guard);
    comm_timed(&call, t_end, status);
    if ((status == obs_ncclSuccess || status == obs_ncclInProgress) && newcomm != NULL && *newcomm != NULL) {
        hash = obs_nccl_hash(OBS_NCCL_HASH_SEED, parent ? &parent->hash : &hash, sizeof hash);
        hash = obs_nccl_hash(hash, &color, sizeof color);
        hash = obs_nccl_hash(hash, &split, sizeof split);
        /* the shim's own queries: under the guard and the NCCL depth, never recorded */
        if (user_rank == NULL || user_rank(*newcomm, &rank) != obs_ncclSuccess)
            rank = -1;
        if (count == NULL || count(*newcomm, &nranks) != obs_ncclSuccess)
            nranks = -1;
        comm_made(&call.rec.comm, *newcomm, hash, rank, nranks);
    }
    call.rec.comm.parent = parent ? parent->id : 0;
    call.rec.comm.color = color;
    comm_append(&call);
    comm_leave(&guard);
    return status;
}

/* Finalize, destroy, abort: the communicator's entry stays (a handle reused
 * by a later communicator gets a new one). */
static obs_ncclResult_t comm_end(unsigned event, unsigned index, obs_ncclComm_t comm)
{
    obs_fn_ncclCommDestroy real = (obs_fn_ncclCommDestroy)obs_real_get(&obs_real_nccl, index);
    struct nccl_call call;
    struct obs_guard guard;
    struct obs_nccl_comm *c;
    obs_ncclResult_t status;
    uint64_t t_end;

    if (real == NULL)
        return nccl_missing(index);
    if (!nccl_call_begin(&call))
        return real(comm);
    c = obs_nccl_comm_find(comm);
    comm_started(&call, event);
    status = real(comm);
    t_end = obs_now_ns();
    obs_guard_enter(&guard);
    comm_timed(&call, t_end, status);
    if (c != NULL) {
        call.rec.comm.comm = c->id;
        call.rec.comm.hash = c->hash;
        call.rec.comm.rank = c->rank;
        call.rec.comm.nranks = c->nranks;
    }
    comm_append(&call);
    comm_leave(&guard);
    return status;
}

OBS_EXPORT obs_ncclResult_t ncclCommFinalize(obs_ncclComm_t comm)
{
    return comm_end(OBS_COMM_FINALIZE, OBS_REAL_NCCL_ncclCommFinalize, comm);
}

OBS_EXPORT obs_ncclResult_t ncclCommDestroy(obs_ncclComm_t comm)
{
    return comm_end(OBS_COMM_DESTROY, OBS_REAL_NCCL_ncclCommDestroy, comm);
}

OBS_EXPORT obs_ncclResult_t ncclCommAbort(obs_ncclComm_t comm)
{
    return comm_end(OBS_COMM_ABORT, OBS_REAL_NCCL_ncclCommAbort, comm);
}

/* ---- handed out for dlsym ------------------------------------------------------------------------ */

static void *const wrappers[OBS_REAL_NCCL_COUNT] = {
#define OBS_NCCL_WRAPPER_ROW(name, ret, params, args) [OBS_REAL_NCCL_##name] = (void *)name,
    OBS_NCCL_COLL_API(OBS_NCCL_WRAPPER_ROW) OBS_NCCL_COMM_API(OBS_NCCL_WRAPPER_ROW)
#undef OBS_NCCL_WRAPPER_ROW
};

void *obs_nccl_wrapper_of(unsigned index)
{
    return index < OBS_REAL_NCCL_COUNT ? wrappers[index] : NULL;
}
