/* NCCL communicators the process made: handle -> a small entry with the
 * communicator's id in this process (what COLL records name), its identity
 * across ranks (a hash, docs/trace-format.md, COMM), rank and size, and the
 * counters behind COLL records' sequence numbers and split identities.
 * Entries are made off the hot path (when an init or a split returns);
 * the lookup a collective makes is lock-free (ptrmap). */
#ifndef OBS_NCCL_COMMS_H
#define OBS_NCCL_COMMS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

#define OBS_NCCL_COMMS_MAX 4096u /* communicators per process with an id; past it: id 0 (unknown) */

struct obs_nccl_comm {
    uint64_t hash;             /* identity across ranks */
    uint32_t id;               /* 1, 2, ... in this process */
    int32_t rank, nranks;      /* -1: unknown */
    _Atomic uint32_t seq;      /* the next collective's sequence number */
    _Atomic uint32_t splits;   /* ncclCommSplit calls made on it so far */
};

extern struct obs_ptrmap obs_nccl_comm_ids;
extern struct obs_nccl_comm obs_nccl_comms[OBS_NCCL_COMMS_MAX];

/* The entry of a communicator handle, NULL when it was not seen made. */
static inline struct obs_nccl_comm *obs_nccl_comm_find(const void *handle)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_nccl_comm_ids, (uintptr_t)handle, &id)) && id >= 1 &&
        id <= OBS_NCCL_COMMS_MAX)
        return &obs_nccl_comms[id - 1];
    return NULL;
}

/* The communicator's next sequence number. NCCL requires the calls on one
 * communicator to be serialised by the application, so a load and a store
 * suffice (no read-modify-write on the hot path). */
static inline uint32_t obs_nccl_comm_next_seq(struct obs_nccl_comm *c)
{
    uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);
    atomic_store_explicit(&c->seq, s + 1, memory_order_relaxed);
    return s;
}

/* A new communicator (its handle replaces any earlier one at that address:
 * NCCL reuses freed memory): its entry, NULL when the table is full (said
 * once). Thread-safe. */
struct obs_nccl_comm *obs_nccl_comm_add(const void *handle, uint64_t hash, int32_t rank, int32_t nranks);

/* FNV-1a, 64 bits, continued from h (start: OBS_NCCL_HASH_SEED). */
#define OBS_NCCL_HASH_SEED 0xcbf29ce484222325ull
uint64_t obs_nccl_hash(uint64_t h, const void *data, size_t len);

void obs_nccl_comms_fork_prepare(void);
void obs_nccl_comms_fork_parent(void);
void obs_nccl_comms_fork_child(void); /* a child's communicators are its own (NCCL's are not usable there) */

#endif
