/* NCCL communicators: see nccl_comms.h. */
#include "nccl_comms.h"

#include <pthread.h>
#include <string.h>

OBS_HIDDEN struct obs_ptrmap obs_nccl_comm_ids;
OBS_HIDDEN struct obs_nccl_comm obs_nccl_comms[OBS_NCCL_COMMS_MAX];

static pthread_mutex_t comms_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t last_id;
static atomic_int full_warned;

struct obs_nccl_comm *obs_nccl_comm_add(const void *handle, uint64_t hash, int32_t rank, int32_t nranks)
{
    struct obs_nccl_comm *c = NULL;
    pthread_mutex_lock(&comms_lock);
    if (handle != NULL && last_id < OBS_NCCL_COMMS_MAX &&
        obs_ptrmap_put(&obs_nccl_comm_ids, (uintptr_t)handle, last_id + 1) == 0) {
        c = &obs_nccl_comms[last_id];
        c->id = ++last_id;
        c->hash = hash;
        c->rank = rank;
        c->nranks = nranks;
        atomic_store_explicit(&c->seq, 0, memory_order_relaxed);
        atomic_store_explicit(&c->splits, 0, memory_order_relaxed);
    }
    pthread_mutex_unlock(&comms_lock);
    if (c == NULL && handle != NULL)
        obs_log_warn_once(&full_warned, "more than %u NCCL communicators: the later ones' collectives are "
                                        "recorded with no communicator", OBS_NCCL_COMMS_MAX);
    else if (c != NULL)
        OBS_DEBUG_LOG(RECORD, 1, "NCCL communicator id=%u handle=%p hash=%016llx rank %d of %d", c->id, handle,
                      (unsigned long long)hash, rank, nranks);
    return c;
}

uint64_t obs_nccl_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

void obs_nccl_comms_fork_prepare(void)
{
    pthread_mutex_lock(&comms_lock);
}

void obs_nccl_comms_fork_parent(void)
{
    pthread_mutex_unlock(&comms_lock);
}

void obs_nccl_comms_fork_child(void)
{
    obs_ptrmap_clear(&obs_nccl_comm_ids);
    memset(obs_nccl_comms, 0, sizeof obs_nccl_comms);
    last_id = 0;
    pthread_mutex_unlock(&comms_lock);
}
