/* An NCCL unique id made from a seed: every rank of a test run that is
 * given the same seed has the same id, so their communicator is one
 * without any rank sending it to the others (nccl_app.c, tp_decode.c). */
#ifndef OBS_TESTS_NCCL_SEED_ID_H
#define OBS_TESTS_NCCL_SEED_ID_H

#include <stddef.h>

#include "abi/nccl_abi.h"

static inline obs_ncclUniqueId nccl_seed_id(unsigned seed)
{
    obs_ncclUniqueId id;
    for (size_t i = 0; i < sizeof id.internal; i++) {
        seed = seed * 1103515245u + 12345u;
        id.internal[i] = (char)(seed >> 16);
    }
    return id;
}

#endif
