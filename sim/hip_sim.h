/* Internals of the simulated HIP runtime (libamdhip64.so.5), shared by its
 * source files. Nothing here is exported: the version script keeps every
 * symbol but the HIP entry points local, and the entry points never call one
 * another (a preloaded shim must see exactly what the application called).
 *
 * One mutex guards all simulator state; functions named *_locked expect it
 * held. See docs/architecture.md for the log format and the cost model. */
#ifndef OBS_HIP_SIM_H
#define OBS_HIP_SIM_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "shim/abi/hip_abi.h"
#include "cost_model.h"

#pragma GCC visibility push(hidden)

/* ---- calls: first-call setup, the ground-truth log, the last error ---- */

/* The log's kind column (shim/trace/api_list.h words, plus "other"). */
enum sim_kind {
    SIM_KIND_KERNEL,
    SIM_KIND_MEMCPY,
    SIM_KIND_MEMSET,
    SIM_KIND_SYNC,
    SIM_KIND_GRAPH,
    SIM_KIND_ALLOC,
    SIM_KIND_OTHER
};

#define SIM_NO_BYTES (-1LL)

extern pthread_mutex_t sim_lock;

/* Start of every entry point: reads the environment, opens OBS_SIM_LOG and
 * prints the banner, once per process. */
void sim_enter(void);

/* Appends one line to the ground-truth log (when OBS_SIM_LOG is set).
 * stream: the handle as passed, or NULL when the call takes none;
 * name: NULL for "-"; bytes: SIM_NO_BYTES for "-". */
void sim_log_call(const char *api, enum sim_kind kind, const char *name,
                  const obs_hipStream_t *stream, long long bytes, int status);

/* Logs the call, stores status as the thread's last error (HIP stores the
 * result of every call, success included) and returns it. */
obs_hipError_t sim_finish(const char *api, enum sim_kind kind, const char *name,
                          const obs_hipStream_t *stream, long long bytes, obs_hipError_t status);

obs_hipError_t sim_last_error_get(void);
void sim_last_error_set(obs_hipError_t status);

/* ---- streams, events and the virtual device clock (hip_sim_stream.c) ---- */

struct sim_graph;

struct sim_stream {
    struct sim_stream *next;
    unsigned int flags;       /* OBS_HIP_STREAM_NON_BLOCKING */
    int per_thread;           /* a thread's default stream */
    uint64_t tail_ns;         /* end of the last operation enqueued */
    struct sim_graph *capture; /* the graph being captured, or NULL */
};

/* The stream a handle names: 0 is the legacy null stream (or, when
 * per_thread_default, the calling thread's default stream, as the _spt entry
 * points read it); hipStreamPerThread is the thread's default stream.
 * NULL for a handle that names no live stream. */
struct sim_stream *sim_stream_get_locked(obs_hipStream_t handle, int per_thread_default);

/* When work enqueued now on s could start, honouring legacy semantics
 * (the null stream waits for every blocking stream and they wait for it). */
uint64_t sim_stream_ready_locked(const struct sim_stream *s);

/* Enqueues an operation of cost_ns on s; returns its end time. */
uint64_t sim_stream_advance_locked(struct sim_stream *s, uint64_t cost_ns);

/* The legacy null stream (handle 0 outside the _spt entry points). */
extern struct sim_stream sim_null_stream;

struct sim_event {
    struct sim_event *next;
    unsigned int flags;
    int recorded;
    uint64_t time_ns;
};

struct sim_event *sim_event_get_locked(obs_hipEvent_t handle);

/* ---- memory (hip_sim_memory.c, hip_sim_copy.c, hip_sim_memset.c) ---- */

/* Whether [p, p + len) lies inside one device allocation or symbol. */
int sim_device_range_locked(const void *p, size_t len);

/* Device storage of a symbol registered with __hipRegisterVar (keyed by the
 * host shadow variable's address) and its size; NULL when unknown. */
char *sim_symbol_storage_locked(const void *symbol, size_t *size);
void sim_symbol_register_locked(void **modules, const void *host_var, size_t size);
void sim_symbols_release_locked(void **modules);

/* A rectangular copy: depth slices of height rows of width bytes. */
struct sim_copy {
    char *dst;
    const char *src;
    size_t width, height, depth;
    size_t dpitch, spitch; /* row pitches */
    size_t dslice, sslice; /* slice pitches */
    int device_to_device;  /* costed at device bandwidth */
};

/* A rectangular fill of elem_size-byte values (memset, D8/D16/D32). */
struct sim_fill {
    char *dst;
    unsigned int elem_size;
    uint32_t value;
    size_t width; /* in elements */
    size_t height, depth;
    size_t pitch, slice; /* in bytes */
};

uint64_t sim_copy_bytes(const struct sim_copy *c);
void sim_copy_run(const struct sim_copy *c);
uint64_t sim_fill_bytes(const struct sim_fill *f);
void sim_fill_run(const struct sim_fill *f);

/* ---- capture and graphs (hip_sim_graph.c) ---- */

enum sim_node_kind { SIM_NODE_KERNEL, SIM_NODE_COPY, SIM_NODE_FILL };

struct sim_node {
    enum sim_node_kind kind;
    const char *name; /* kernel name, owned by the registration */
    uint64_t threads; /* kernel work items */
    const void *func; /* kernel: host stub or hipFunction_t launched (hipGraphKernelNodeGetParams) */
    uint32_t global[3], local[3]; /* kernel: work items and block */
    struct sim_copy copy;
    struct sim_fill fill;
};

/* Adds a node to the graph being captured on s. */
obs_hipError_t sim_capture_add_locked(struct sim_stream *s, const struct sim_node *node);

/* Drops a capture in progress (stream destroyed, thread gone). */
void sim_capture_discard_locked(struct sim_stream *s);

/* Runs one node on s now: moves memory, advances the clock; in_graph
 * selects the graph-node kernel cost. */
void sim_node_run_locked(struct sim_stream *s, const struct sim_node *node, int in_graph);

/* Enqueues node on s, or adds it to the graph s is capturing.
 * synchronous: the call blocks the host, which a capturing stream refuses. */
obs_hipError_t sim_submit_locked(struct sim_stream *s, const struct sim_node *node, int synchronous);

#pragma GCC visibility pop

#endif
