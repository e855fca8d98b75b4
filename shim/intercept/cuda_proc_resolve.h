/* Which driver variant cuGetProcAddress(base, cudaVersion, flags) serves,
 * by the driver's own rule over OBS_CUDA_DRIVER_PROC_VERSIONS
 * (shim/abi/cuda_driver_abi.h): among the rows of base no newer than
 * cudaVersion the newest wins; with flags
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2) a per-thread row wins
 * when one qualifies. Pure functions (no state, no locks): hooks_dlsym.c
 * uses them to tell what a pointer returned by the driver is when the
 * pointer itself (an internal entry point) does not say. */
#ifndef OBS_CUDA_PROC_RESOLVE_H
#define OBS_CUDA_PROC_RESOLVE_H

#include <stdint.h>

/* The newest CUDA version the table describes (CUDA 13.0's cudaTypedefs.h).
 * A newer version may be served a variant the table does not know (a new
 * _vN with another signature): such a query resolves to nothing. */
#define OBS_CUDA_PROC_TABLE_VERSION 13000

/* The index of the row served (into OBS_CUDA_DRIVER_PROC_VERSIONS), or -1:
 * unknown base name, every row newer than cuda_version, cuda_version above
 * OBS_CUDA_PROC_TABLE_VERSION, flags other than 0-3, base NULL. */
int obs_cuda_proc_resolve(const char *base, int cuda_version, uint64_t flags);

/* The variant symbol of row (e.g. "cuLaunchKernel_ptsz"), NULL for -1 or
 * out of range. */
const char *obs_cuda_proc_row_symbol(int row);

/* The number of rows. */
int obs_cuda_proc_row_count(void);

#endif
