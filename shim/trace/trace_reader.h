/* Reading .obs trace files into an in-memory model (format: trace_format.h,
 * docs/trace-format.md). Used by obs-report and by the shim at exit.
 *
 * The model is a handful of compact arrays: one 72-byte struct obs_call per
 * recorded call, in sequence order (calls[i] has seq i), plus small tables
 * (threads, kernel names, streams, GPU times, phases, lost records, ...).
 * Loading never allocates per record. A file cut short (a crashed process,
 * a full disk) is read up to its last complete record; ignored_bytes says
 * how much was left over. */
#ifndef OBS_TRACE_READER_H
#define OBS_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

#define OBS_NONE UINT32_MAX /* "no entry" in an index field */

/* obs_trace_open()/obs_trace_load() results; the message in err says more. */
enum obs_trace_status {
    OBS_TRACE_OK = 0,
    OBS_TRACE_ERR_IO = -1,          /* cannot open/read: strerror text */
    OBS_TRACE_ERR_FOREIGN = -2,     /* "not an obsshim trace" */
    OBS_TRACE_ERR_TRUNCATED = -3,   /* "truncated header" */
    OBS_TRACE_ERR_VERSION = -4,     /* "trace version N is newer than this reader (M)" */
    OBS_TRACE_ERR_BYTE_ORDER = -5,  /* written on a machine of the other byte order */
    OBS_TRACE_ERR_RECORD_SIZE = -6, /* record size is not OBS_RECORD_SIZE */
    OBS_TRACE_ERR_HEADER = -7,      /* other header damage (header size) */
    OBS_TRACE_ERR_NOMEM = -8
};

/* One recorded API call. Times are host CLOCK_MONOTONIC ns. */
struct obs_call {
    uint64_t host_begin, host_end;
    union {
        struct {
            uint32_t x;
            uint16_t y, z;
        } grid;         /* kind KERNEL */
        uint64_t bytes; /* MEMCPY, MEMSET, ALLOC: bytes; GRAPH: node count */
    } u;
    uint64_t index;   /* per-thread index: position in the thread's record stream */
    uint32_t thread;  /* index into trace->threads */
    uint32_t kernel;  /* index into trace->kernels; 0 = no name */
    uint32_t stream;  /* stream id (trace->streams); 0 = default/legacy */
    uint32_t shmem;   /* KERNEL: dynamic shared memory bytes; GRAPH: graph exec id (obs_call_graph) */
    uint32_t gpu;     /* index into trace->gpu, or OBS_NONE */
    uint32_t phase;   /* index into trace->phases: the range that labels it (RELABEL, else the
                         innermost BEGIN/END range open in its thread), or OBS_NONE */
    uint32_t layer;   /* the model layer it ran in (LAYER records), OBS_NO_LAYER if none */
    int32_t status;   /* the call's return code */
    uint16_t api;     /* enum obs_api */
    uint16_t device;
    uint16_t block_x, block_y, block_z;
    uint8_t kind;     /* enum obs_call_kind (from api_list.h) */
    uint8_t flags;    /* OBS_CALL_* as recorded; direction in OBS_CALL_DIR_MASK */
};

struct obs_thread {
    uint32_t tid;
    const char *name;   /* THREAD_NAME string, or NULL */
    uint64_t calls;     /* CALL records of this thread */
    uint64_t first_seq; /* seq of its first call (UINT64_MAX if none) */
};

struct obs_kernel {
    uint32_t id;           /* the string id CALL records use */
    const char *mangled;   /* "" when the trace holds no name for id */
    const char *demangled; /* the demangled name, else the mangled one */
};

struct obs_stream {
    uint32_t id;
    uint16_t device;
    uint64_t handle;
};

struct obs_gpu_time {
    uint64_t begin, end; /* device ns on the host monotonic time base */
};

/* A phase range from PHASE records (the phase engine), per thread.
 * BEGIN/END ranges nest like NVTX push/pop in the thread's record order;
 * a RELABEL record is a range given after the fact by per-thread record
 * indexes, and wins over BEGIN/END for the calls it covers (the latest
 * RELABEL written wins). See docs/trace-format.md, "PHASE". */
struct obs_phase {
    uint64_t begin, end; /* BEGIN/END: the records' times (end = the trace's last timestamp if never
                            ended); RELABEL: first labelled call's begin .. last one's end (host) */
    const char *phase;   /* phase name (RANGE_NAME string of the phase id), "" if unknown */
    const char *name;    /* full range name (RANGE_NAME string of the name id), else the phase name */
    uint32_t phase_id, name_id;
    uint32_t step;       /* OBS_NO_STEP: none (obs_phase_step() looks outwards) */
    uint32_t generation;
    uint32_t parent;     /* enclosing range (same thread), or OBS_NONE */
    uint32_t thread;     /* index into trace->threads */
    uint32_t depth;      /* 0: outermost */
    uint64_t calls;      /* calls labelled by it or by a range inside it */
    uint64_t calls_taken; /* BEGIN/END: calls inside it that a RELABEL labels instead */
    uint8_t ended;       /* BEGIN/END: an END closed it */
    uint8_t relabel;     /* it comes from a RELABEL record */
};

/* A phase range's device span on one stream (RANGE_SPAN records,
 * OBS_GPU_TIME=steps): the device work of the calls the live range (a
 * BEGIN/END range) holds on that stream, those of the ranges inside it
 * included. Its time counts for the final label of the calls the live
 * range labels itself there (docs/trace-format.md, RANGE_SPAN). */
struct obs_range_span {
    uint64_t begin, end; /* device ns on the host monotonic time base */
    uint64_t calls;      /* calls on the stream that the live range holds (its own and its inner ranges') */
    uint32_t thread;     /* index into trace->threads */
    uint32_t stream;     /* stream id */
    uint32_t live;       /* index into trace->phases: the BEGIN/END range measured, or the RELABEL
                            range whose calls (an open range's tail, cut off by the shim) it holds */
    uint32_t range;      /* index into trace->phases: the range its time counts for, OBS_NONE: none (flags) */
    uint32_t flags;      /* OBS_RANGE_SPAN_* */
};
/* The final label of the live range's own calls on the stream is another
 * range (a RELABEL): the span counts for that range. */
#define OBS_RANGE_SPAN_RELABELLED 0x1u
/* They were relabelled into several ranges (or some into none): the time
 * cannot be split between them; it counts for none. */
#define OBS_RANGE_SPAN_MIXED 0x2u
/* The live range labels no call itself on the stream (DECODE/STEADY around
 * its steps): its time is the ranges' inside it; it counts for none. */
#define OBS_RANGE_SPAN_CONTAINER 0x4u

struct obs_lost {
    uint32_t tid, reason; /* enum obs_lost_reason */
    uint64_t count, t_first, t_last;
};

/* A graph exec's kernel nodes of one name (GRAPH_KERNELS records). */
struct obs_graph_kernel {
    uint32_t kernel; /* index into trace->kernels; 0: nodes whose kernel could not be named */
    uint32_t count;  /* kernel nodes of that name */
};

/* A graph exec's kernel node (GRAPH_NODES records), in walk order. */
struct obs_graph_node {
    uint32_t kernel; /* index into trace->kernels; 0: could not be named */
    uint32_t layer;  /* the model layer k the node runs in, OBS_NO_LAYER: none (docs/layers.md, "Graphs") */
};

/* A graph exec (GRAPH record), with its kernels by name in the order the
 * shim found them (first appearance among the graph's nodes), and its
 * kernel nodes one by one in walk order (the capture order of a
 * stream-captured graph) with their layers. */
struct obs_graph {
    uint32_t id;    /* what graph launch calls name (obs_call_graph) */
    uint32_t flags; /* OBS_GRAPH_WALK_INCOMPLETE: counts are lower bounds; OBS_GRAPH_NODES_CUT: no nodes */
    uint64_t handle, node_count, kernel_count;
    const struct obs_graph_kernel *kernels; /* into trace->graph_kernels */
    size_t nkernels;
    const struct obs_graph_node *nodes; /* into trace->graph_nodes: positions 0 .. nnodes - 1 (a trace
                                           older than GRAPH_NODES, or a cut exec: none) */
    size_t nnodes;
    uint32_t layers; /* layer instances among the nodes (a run of nodes of one layer): 0 none */
};

/* An NCCL communicator call (COMM record). */
struct obs_comm {
    uint64_t host_begin, host_end;
    uint64_t hash;       /* the communicator's identity, the same on every rank (0: none made) */
    uint64_t index;      /* per-thread index of the record */
    uint32_t thread;     /* index into trace->threads */
    uint32_t id;         /* the communicator's id in the process, what COLL records name (0: none) */
    uint32_t made;       /* index into trace->comms of the init or split that made comm `id` (itself for
                            those), OBS_NONE when the trace does not hold it */
    uint32_t parent;     /* ncclCommSplit: index into trace->comms of what made the parent, else OBS_NONE */
    int32_t status, rank, nranks, color;
    uint8_t event;       /* enum obs_comm_event */
};

/* An NCCL collective, point-to-point or group call (COLL record), with
 * the calls it caused: for a call outside any group, the records its
 * thread made inside it; for one inside a group, those of the ncclGroupEnd
 * that closed the outermost group (docs/trace-format.md, COLL). */
struct obs_coll {
    uint64_t host_begin, host_end;
    uint64_t index;      /* per-thread index of the record */
    uint64_t count;      /* elements, as passed */
    uint64_t bytes;      /* the data it moves, as nccl-tests sizes it (obs_coll_bytes, trace_colls.h) */
    size_t calls_first;  /* its calls: trace->coll_calls[calls_first .. calls_first + ncalls - 1] (seqs) */
    uint32_t ncalls;
    uint32_t kernels;    /* kernel launches among them */
    uint32_t thread;     /* index into trace->threads */
    uint32_t stream;     /* stream id */
    uint32_t comm_id;    /* the communicator's id in the process, as recorded (0: unknown) */
    uint32_t comm;       /* index into trace->comms of what made it, OBS_NONE */
    uint32_t seq;        /* the communicator's sequence number, OBS_NO_SEQ: none */
    uint32_t group_end;  /* a call inside a group: index into trace->colls of the ncclGroupEnd that
                            launched it, OBS_NONE */
    uint32_t phase;      /* the phase range of its first call (the step it is in), OBS_NONE */
    uint32_t layer;      /* the layer of its first call, OBS_NO_LAYER */
    int32_t status, peer;
    uint8_t op, datatype, redop, group, flags;
};

/* The shim's own cost, per thread (the SELF_COST snapshot with most calls). */
struct obs_self_cost {
    uint32_t tid;
    uint64_t calls, shim_ns, once_ns; /* once_ns: of shim_ns, one-time work (set-up, first uses) */
};

struct obs_meta {
    const char *key, *value;
};

struct obs_trace {
    const char *path; /* as given to obs_trace_open/obs_trace_load */
    uint32_t version, pid, flags;
    uint64_t start_mono_ns, start_real_ns;
    uint64_t file_bytes;

    struct obs_call *calls; /* sequence order: calls[seq] */
    size_t ncalls;
    struct obs_thread *threads; /* sorted by tid */
    size_t nthreads;
    struct obs_kernel *kernels; /* [0] is "no name"; then sorted by id */
    size_t nkernels;
    struct obs_stream *streams; /* sorted by id */
    size_t nstreams;
    struct obs_gpu_time *gpu;
    size_t ngpu;
    struct obs_phase *phases; /* BEGIN/END ranges by thread in record order, then RELABEL ranges */
    size_t nphases;
    struct obs_lost *lost;
    size_t nlost;
    struct obs_graph *graphs; /* sorted by id, one per id (the last GRAPH record of an id wins) */
    size_t ngraphs;
    struct obs_graph_kernel *graph_kernels; /* storage behind graphs[].kernels */
    size_t ngraph_kernels;
    struct obs_graph_node *graph_nodes; /* storage behind graphs[].nodes */
    size_t ngraph_nodes;
    struct obs_self_cost *self_cost;
    size_t nself_cost;
    struct obs_meta *meta; /* in file order */
    size_t nmeta;
    struct obs_range_span *range_spans; /* sorted by thread, live range, stream */
    size_t nrange_spans;
    struct obs_coll *colls; /* NCCL calls, sorted by host begin (then thread, index) */
    size_t ncolls;
    struct obs_comm *comms; /* NCCL communicator calls, the same order */
    size_t ncomms;
    size_t *coll_calls;     /* storage behind colls[].calls_first: seqs of calls */
    size_t ncoll_calls;

    uint64_t records_lost;        /* sum of LOST counts */
    uint64_t self_calls, self_ns, self_once_ns; /* sums over self_cost */
    uint64_t t_first, t_last;     /* earliest and latest timestamp of anything (0, 0 if empty) */

    /* What could not be used. */
    uint64_t ignored_bytes;      /* bytes after the last usable data of a damaged or cut file */
    uint64_t ignored_offset;     /* file offset where they start */
    const char *ignored_reason;  /* static text, NULL when nothing was ignored */
    uint64_t unknown_records;    /* records of a kind this reader does not know */
    uint64_t unknown_chunks;     /* chunks of a type this reader does not know */
    uint64_t orphan_gpu_spans;   /* GPU_SPAN records whose CALL is not in the file */
    uint64_t missing_gpu_spans;  /* CALLs flagged OBS_CALL_GPU_TIMED with no GPU_SPAN (never resolved) */
    uint64_t no_work_gpu_calls;  /* CALLs whose only GPU_SPANs say OBS_SPAN_NO_WORK: no device work (cupti) */
    uint64_t bad_layer_records;  /* LAYER records not used: unknown event, first index after the last */
    uint64_t bad_phase_records;  /* PHASE records not used: unknown event, END with nothing open,
                                    RELABEL with first_index > last_index, nesting deeper than 256 */
    uint64_t orphan_range_spans; /* RANGE_SPAN records whose BEGIN record is not in the file */
    uint64_t missing_range_spans; /* OBS_FILE_GPU_STEPS: (live range, stream) pairs holding launches
                                     with no RANGE_SPAN (never resolved, or untimed: the meta says why) */
    uint64_t bad_coll_records;   /* COLL/COMM records not used: an unknown op or event */

    struct obs_trace_store *store; /* private: memory behind the strings */
};

/* Read a trace file. On success *out holds the model and 0 is returned; on
 * failure an enum obs_trace_status < 0 and a one-line reason in err
 * ("truncated header", "not an obsshim trace", strerror text ...). */
int obs_trace_open(const char *path, struct obs_trace **out, char *err, size_t errlen);

/* The same from bytes in memory (not kept after return); name is for messages. */
int obs_trace_load(const void *data, size_t len, const char *name, struct obs_trace **out, char *err,
                   size_t errlen);

void obs_trace_free(struct obs_trace *t);

/* Meta value for key, or NULL. */
const char *obs_trace_meta(const struct obs_trace *t, const char *key);

/* A header and nothing usable after it: the process died between the
 * shim's first two writes (the header, then its META). */
int obs_trace_opening_cut(const struct obs_trace *t);

/* A trace the shim began and never closed: no end mark, and its META has
 * the shim's buffer_records, or the file was cut as the shim opened it
 * (obs_trace_opening_cut). The process was killed (SIGKILL, the OOM
 * killer, a crash it could not catch), or it is still running. */
int obs_trace_unclosed(const struct obs_trace *t);

/* One line (into buf, returned) saying so, how many calls were read and
 * what may be missing: with the shim's windows (meta record_windows), at
 * most the call each thread was in; from a shim before them, each thread's
 * last buffer_records records at most. Bytes the reader ignored at the end
 * are said on the same line. */
const char *obs_trace_unclosed_note(const struct obs_trace *t, char *buf, size_t len);

/* Stream table entry for id, or NULL. */
const struct obs_stream *obs_trace_stream(const struct obs_trace *t, uint32_t id);

/* Names from api_list.h / trace_format.h; "unknown" for out-of-range values. */
const char *obs_api_name(unsigned api);
unsigned obs_api_kind(unsigned api); /* enum obs_call_kind; OBS_KIND_NONE if unknown */
const char *obs_call_kind_name(unsigned kind);
const char *obs_direction_name(unsigned direction); /* "" for OBS_DIR_NONE */
const char *obs_lost_reason_name(unsigned reason);

static inline unsigned obs_call_direction(const struct obs_call *c)
{
    return c->flags & OBS_CALL_DIR_MASK;
}

/* The kernel's demangled name, or NULL when the call has none. */
static inline const char *obs_call_kernel_name(const struct obs_trace *t, const struct obs_call *c)
{
    return c->kernel ? t->kernels[c->kernel].demangled : NULL;
}

/* The step of phase range r: its own, else the nearest enclosing range's;
 * UINT32_MAX when none has one (or r is OBS_NONE). */
static inline uint32_t obs_phase_step(const struct obs_trace *t, uint32_t r)
{
    while (r != OBS_NONE && t->phases[r].step == UINT32_MAX)
        r = t->phases[r].parent;
    return r != OBS_NONE ? t->phases[r].step : UINT32_MAX;
}

/* The generation of a call's phase (UINT32_MAX when it has none). */
static inline uint32_t obs_call_generation(const struct obs_trace *t, const struct obs_call *c)
{
    return c->phase != OBS_NONE ? t->phases[c->phase].generation : UINT32_MAX;
}

/* Graph exec by id, or NULL. */
const struct obs_graph *obs_trace_graph(const struct obs_trace *t, uint32_t id);

/* The graph exec a graph launch replayed (its id is in the CALL record's
 * shmem field), or NULL: not a graph launch, or an exec the trace does not
 * describe (instantiated before a fork, or by a shim that did not walk it). */
static inline const struct obs_graph *obs_call_graph(const struct obs_trace *t, const struct obs_call *c)
{
    return c->kind == OBS_KIND_GRAPH && c->shmem != 0 ? obs_trace_graph(t, c->shmem) : NULL;
}

static inline const struct obs_gpu_time *obs_call_gpu(const struct obs_trace *t, const struct obs_call *c)
{
    return c->gpu != OBS_NONE ? &t->gpu[c->gpu] : NULL;
}

#endif
