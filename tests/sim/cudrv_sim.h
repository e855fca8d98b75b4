/* Internals of the simulated CUDA driver (libcuda.so.1 in tests/sim).
 *
 * The same conventions as the simulated runtime (cudart_sim.h): one global
 * mutex (drv_lock) guards every table; every exported entry point calls
 * drv_enter() first and returns through drv_finish(), which applies
 * OBS_SIM_FAIL and writes the ground-truth log line; no helper ever calls an
 * exported symbol (-Bsymbolic-functions), so a preloaded shim sees exactly
 * the calls the application made. Virtual clock and costs:
 * tests/sim/cost_model.h. Nothing here is exported except the cu* entry
 * points and cudnnSimFakeEntry (libcuda.map). */
#ifndef OBS_CUDRV_SIM_H
#define OBS_CUDRV_SIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/cuda_driver_abi.h"

#define DRV_EXPORT __attribute__((visibility("default")))

/* The version cuDriverGetVersion reports (CUDA 13.0). */
#define DRV_SIM_DRIVER_VERSION 13000

/* ---- log, banner, errors, initialisation (cudrv_sim_core.c) --------------- */

enum drv_kind { DRV_KIND_KERNEL, DRV_KIND_MEMCPY, DRV_KIND_MEMSET, DRV_KIND_SYNC, DRV_KIND_GRAPH,
                DRV_KIND_ALLOC, DRV_KIND_OTHER };

#define DRV_NO_STREAM ((const void *)UINTPTR_MAX)
#define DRV_NO_BYTES (-1LL)

extern pthread_mutex_t drv_lock;

/* First thing in every entry point: environment, banner, log file (once). */
void drv_enter(void);
/* Apply OBS_SIM_FAIL, log the call (one write(2)), return the status. */
obs_CUresult drv_finish(const char *api, enum drv_kind kind, const char *name, const void *stream,
                        long long bytes, obs_CUresult status);
/* CUDA_ERROR_NOT_INITIALIZED before cuInit, CUDA_ERROR_INVALID_CONTEXT
 * when the calling thread has no current context, else success. */
obs_CUresult drv_need_context(void);
obs_CUresult drv_need_init(void);

/* ---- modules, functions, kernels (cudrv_sim_core.c) ---------------------- */

struct drv_function;
/* Under drv_lock. A CUfunction, or a CUkernel passed where a CUfunction is
 * expected (CUDA 12 allows it); NULL if neither. */
const struct drv_function *drv_function_find(obs_CUfunction handle);
const char *drv_function_name(const struct drv_function *f);
/* Under drv_lock. True when handle is a CUkernel (passed as a CUfunction). */
int drv_is_kernel_handle(obs_CUfunction handle);

/* ---- memory (cudrv_sim_ops.c) ---------------------------------------------- */

/* Under drv_lock. True when [p, p+len) lies in one allocation. */
int drv_is_device_range(obs_CUdeviceptr p, size_t len);

/* ---- streams, clock, events, graphs (cudrv_sim_stream.c) ----------------- */

struct drv_copy {
    char *dst;
    const char *src;
    size_t width, height, depth;
    size_t dst_pitch, src_pitch, dst_slice, src_slice;
    int device_to_device;
};

struct drv_fill {
    char *dst;
    size_t elem_size; /* 1, 2 or 4 */
    uint32_t value;
    size_t width_elems, height;
    size_t pitch;
};

struct drv_event;
enum drv_op_type { DRV_OP_KERNEL, DRV_OP_COPY, DRV_OP_FILL, DRV_OP_EVENT_RECORD };

struct drv_op {
    enum drv_op_type type;
    obs_CUfunction kernel; /* DRV_OP_KERNEL: the handle launched (a graph node's params) */
    union {
        uint64_t kernel_threads;
        struct drv_copy copy;
        struct drv_fill fill;
        struct drv_event *event;
    } u;
};

struct drv_stream;

/* Under drv_lock. 0 is the legacy stream for the plain API and the
 * thread's default stream for _ptsz/_ptds; 0x1 / 0x2 always legacy /
 * per-thread; unknown handles give CUDA_ERROR_INVALID_HANDLE. */
obs_CUresult drv_stream_lookup(obs_CUstream handle, int per_thread_api, struct drv_stream **out);
/* Under drv_lock. Run op on s now (charge its cost, move memory) or append
 * it to the graph s captures. */
obs_CUresult drv_submit(struct drv_stream *s, const struct drv_op *op, int in_graph);

#endif
