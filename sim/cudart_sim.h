/* Internals of the simulated CUDA runtime (libcudart.so.13 in sim/).
 *
 * One global mutex (sim_lock) guards every table: streams, events, kernels,
 * variables, graphs, allocations. Per-thread state (last error, launch
 * configuration stack, per-thread default stream) lives in TLS.
 *
 * Every exported entry point follows two layers: sim_enter(), a static
 * helper that does the work and returns a status, then sim_finish(), which
 * writes the ground-truth log line and sets the thread's last error. No
 * helper ever calls an exported symbol, so a preloaded shim sees exactly the
 * calls the application made.
 *
 * Nothing here is exported: the library is built with -fvisibility=hidden
 * and a version script that exports only cuda* and __cuda*. */
#ifndef OBS_CUDART_SIM_H
#define OBS_CUDART_SIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "abi/cuda_abi.h"

#define SIM_EXPORT __attribute__((visibility("default")))

/* ---- log and banner (cudart_sim_log.c) ---------------------------------- */

/* The log's kind column: the words of shim/trace/api_list.h, plus "other". */
enum sim_kind { SIM_KIND_KERNEL, SIM_KIND_MEMCPY, SIM_KIND_MEMSET, SIM_KIND_SYNC, SIM_KIND_GRAPH,
                SIM_KIND_ALLOC, SIM_KIND_OTHER };

/* "No stream argument" and "no byte count" in a log line. */
#define SIM_NO_STREAM ((const void *)UINTPTR_MAX)
#define SIM_NO_BYTES (-1LL)

/* First thing in every entry point: reads the environment once, prints the
 * banner once, opens OBS_SIM_LOG. */
void sim_enter(void);
/* Log the call (one write(2)), record a failure as the thread's last error,
 * return status unchanged. name may be NULL ("-"). */
obs_cudaError_t sim_finish(const char *api, enum sim_kind kind, const char *name, const void *stream,
                           long long bytes, obs_cudaError_t status);
/* The same for calls that return no status (logged as 0, last error untouched). */
void sim_log_call(const char *api, enum sim_kind kind, const char *name, const void *stream,
                  long long bytes, int status);

/* ---- errors, the device, the lock (cudart_sim_error.c) ------------------- */

/* The calling thread's sticky last error (cudaGetLastError). */
void sim_set_last_error(obs_cudaError_t err);

/* Guards every table of the simulator. */
extern pthread_mutex_t sim_lock;

/* ---- device operations, streams and the virtual clock (cudart_sim_stream.c),
 * events (cudart_sim_event.c) ------------------------------------------------ */

/* A strided copy: width bytes per row, height rows per slice, depth slices. */
struct sim_copy {
    char *dst;
    const char *src;
    size_t width, height, depth;
    size_t dst_pitch, src_pitch, dst_slice, src_slice;
    int device_to_device; /* charged at device bandwidth */
};

struct sim_fill {
    char *dst;
    int value;
    size_t width, height, depth;
    size_t pitch, slice;
};

struct sim_event;

enum sim_op_type { SIM_OP_KERNEL, SIM_OP_COPY, SIM_OP_FILL, SIM_OP_EVENT_RECORD };

/* One unit of device work: executed at once on a stream, or kept as a node
 * of the graph a capturing stream is building. Kernels are never run; only
 * their cost is charged. */
struct sim_op {
    enum sim_op_type type;
    union {
        uint64_t kernel_threads;
        struct sim_copy copy;
        struct sim_fill fill;
        struct sim_event *event;
    } u;
    /* SIM_OP_KERNEL: what the launch named (host stub or cudaKernel_t) and
     * its configuration, for cudaGraphKernelNodeGetParams. */
    const void *kernel_func;
    obs_dim3 kernel_grid, kernel_block;
    unsigned kernel_shmem;
};

struct sim_graph {
    struct sim_op *ops;
    size_t count, cap;
    struct sim_graph *next;
};

enum sim_stream_kind { SIM_STREAM_LEGACY, SIM_STREAM_PER_THREAD, SIM_STREAM_USER };

struct sim_stream {
    enum sim_stream_kind kind;
    unsigned flags;       /* OBS_CUDA_STREAM_NON_BLOCKING */
    uint64_t tail_ns;     /* virtual time at which its last operation ends */
    struct sim_graph *capture; /* graph under construction, or NULL */
    int capture_status;   /* obs_cudaStreamCaptureStatus */
    int capture_mode;
    pthread_t capture_thread;
    struct sim_stream *next; /* every per-thread and user stream */
};

struct sim_event {
    unsigned flags;
    int recorded;
    uint64_t time_ns;
    struct sim_event *next;
};

/* Under sim_lock. Map a handle to its stream: 0 is the legacy stream for
 * the plain API and the calling thread's default stream for the _ptsz/_ptds
 * API; 0x1 and 0x2 are always legacy and per-thread. Unknown handles give
 * cudaErrorInvalidResourceHandle. */
obs_cudaError_t sim_stream_lookup(obs_cudaStream_t handle, int per_thread_api, struct sim_stream **out);
/* Under sim_lock. The live event with this handle, or NULL. */
struct sim_event *sim_event_lookup(obs_cudaEvent_t handle);
/* Under sim_lock. Execute op on stream s (charge its cost, move memory), or
 * append it to the graph s is capturing. in_graph selects graph-node costs. */
obs_cudaError_t sim_submit(struct sim_stream *s, const struct sim_op *op, int in_graph);
/* Under sim_lock. Invalidate the active capture of only (of every stream
 * when NULL): a call CUDA forbids during capture was made. Returns how many. */
int sim_invalidate_captures(struct sim_stream *only);

/* ---- graphs (cudart_sim_graph.c) ------------------------------------------ */

/* Under sim_lock. Append a node to a graph under construction. */
obs_cudaError_t sim_graph_append(struct sim_graph *g, const struct sim_op *op);
void sim_graph_free(struct sim_graph *g);
struct sim_graph *sim_graph_new(void);

/* ---- registration (cudart_sim_register.c) --------------------------------- */

struct sim_kernel;
/* Under sim_lock. The kernel registered for a host stub address or named by
 * a cudaKernel_t handle (cudaLaunchKernel accepts either); NULL if none. */
const struct sim_kernel *sim_kernel_find(const void *func_or_handle);
const struct sim_kernel *sim_kernel_find_handle(obs_cudaKernel_t handle);
const char *sim_kernel_name(const struct sim_kernel *k);
/* Under sim_lock. Device storage of a __device__ variable registered with
 * __cudaRegisterVar for its host shadow address; 0 if none. */
int sim_symbol_find(const void *symbol, char **storage, size_t *size);

/* ---- OBS_SIM_CUDART_VIA_DRIVER=1 (cudart_sim_via_driver.c) ---------------- */

enum sim_via_launch { SIM_VIA_LAUNCH, SIM_VIA_LAUNCH_EX, SIM_VIA_LAUNCH_COOPERATIVE };
/* Not under sim_lock. When OBS_SIM_CUDART_VIA_DRIVER=1, hand a launch the
 * runtime accepted to libcuda.so.1 as the real cudart does; otherwise nothing. */
void sim_via_driver_launch(enum sim_via_launch how, const char *kernel_name, obs_dim3 grid, obs_dim3 block,
                           size_t shmem, obs_cudaStream_t stream, int per_thread_api);

/* ---- memory (cudart_sim_memory.c) ----------------------------------------- */

/* Under sim_lock. True when [p, p+len) lies in one simulated allocation. */
int sim_is_device_range(const void *p, size_t len);

#endif
