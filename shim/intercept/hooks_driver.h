/* Between the CUDA driver hooks (hooks_driver.c), their GPU-time backend
 * (gpu_time_cudrv.c) and the code that hands the wrappers out for pointers
 * fetched with dlsym and cuGetProcAddress (hooks_dlsym.c). */
#ifndef OBS_HOOKS_DRIVER_H
#define OBS_HOOKS_DRIVER_H

#include <stdbool.h>

#include "abi/cuda_driver_abi.h"
#include "gputime/gpu_time.h"

/* The driver's event functions for OBS_GPU_TIME=events (gpu_time.h). */
#define OBS_GPU_CUDRV_BACKEND (&obs_gpu_cudrv)

/* The driver's graph instantiations, hooked to learn what each exec
 * replays (graph_execs.h), never recorded: X(symbol, (parameters),
 * (argument names)), each with the real ABI of
 * OBS_CUDA_DRIVER_SUPPORT_API. Exported under their real names and handed
 * out for dlsym / cuGetProcAddress like the recorded entry points. */
#define OBS_CUDRV_INSTANTIATE_API(X)                                                             \
    X(cuGraphInstantiate,                                                                        \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, obs_CUgraphNode *phErrorNode,          \
       char *logBuffer, size_t bufferSize),                                                      \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))                                 \
    X(cuGraphInstantiate_v2,                                                                     \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, obs_CUgraphNode *phErrorNode,          \
       char *logBuffer, size_t bufferSize),                                                      \
      (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize))                                 \
    X(cuGraphInstantiateWithFlags,                                                               \
      (obs_CUgraphExec * phGraphExec, obs_CUgraph hGraph, unsigned long long flags),             \
      (phGraphExec, hGraph, flags))

/* What a hook returns for a driver entry point (enum obs_real_cudrv_index)
 * the loaded driver lacks: CUDA_ERROR_NOT_SUPPORTED, or
 * CUDA_ERROR_NOT_INITIALIZED when no driver is loaded; one warning. */
obs_CUresult obs_cudrv_missing(unsigned index);

/* Our exported wrapper of the driver symbol behind index (enum
 * obs_real_cudrv_index), or NULL when that symbol is neither recorded nor
 * an instantiation (OBS_CUDRV_INSTANTIATE_API). */
void *obs_driver_wrapper_of(unsigned index);

/* Its proc wrapper (not exported), which does what the exported one does
 * but calls the pointer kept by obs_cudrv_proc_claim; NULL likewise. */
void *obs_driver_proc_wrapper_of(unsigned index);

/* Keep fn, a pointer cuGetProcAddress handed out for the driver symbol
 * behind index that is not its exported address, as the real function of
 * calls through that index's proc wrapper. The first pointer per index
 * wins: true when fn is the one kept; false (and one warning per index)
 * for another one, which the caller must then pass through untouched. */
bool obs_cudrv_proc_claim(unsigned index, void *fn);

/* The pointer kept for index, or NULL. */
void *obs_cudrv_proc_fn(unsigned index);

#endif
