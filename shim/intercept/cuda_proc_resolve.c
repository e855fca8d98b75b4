/* cuGetProcAddress's resolution rule: see cuda_proc_resolve.h. */
#include "cuda_proc_resolve.h"

#include <stddef.h>
#include <string.h>

#include "abi/cuda_driver_abi.h"

struct proc_row {
    const char *base;
    int version;
    int per_thread;
    const char *symbol;
};

static const struct proc_row rows[] = {
#define OBS_PROC_RESOLVE_ROW(base, version, per_thread, symbol) {#base, version, per_thread, #symbol},
    OBS_CUDA_DRIVER_PROC_VERSIONS(OBS_PROC_RESOLVE_ROW)
#undef OBS_PROC_RESOLVE_ROW
};
#define ROW_COUNT ((int)(sizeof rows / sizeof rows[0]))

int obs_cuda_proc_resolve(const char *base, int cuda_version, uint64_t flags)
{
    const uint64_t known_flags =
        OBS_CU_GET_PROC_ADDRESS_LEGACY_STREAM | OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    int i, legacy = -1, per_thread = -1;

    if (base == NULL || (flags & ~known_flags) != 0 || cuda_version > OBS_CUDA_PROC_TABLE_VERSION)
        return -1;
    for (i = 0; i < ROW_COUNT; i++) {
        int *best = rows[i].per_thread ? &per_thread : &legacy;
        if (rows[i].version > cuda_version || strcmp(rows[i].base, base) != 0)
            continue;
        if (*best < 0 || rows[i].version > rows[*best].version)
            *best = i;
    }
    if ((flags & OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && per_thread >= 0)
        return per_thread;
    return legacy;
}

const char *obs_cuda_proc_row_symbol(int row)
{
    return row >= 0 && row < ROW_COUNT ? rows[row].symbol : NULL;
}

int obs_cuda_proc_row_count(void)
{
    return ROW_COUNT;
}
