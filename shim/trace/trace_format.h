/* The .obs trace file: one self-describing binary file per process.
 * Defined once here and shared by the writer (the shim) and every reader
 * (obs-report, the shim's own exit-time JSON and summary).
 *
 * Layout: a file header, then chunks. A chunk is a chunk header followed by
 * payload_bytes of payload:
 *   OBS_CHUNK_RECORDS  fixed-size 48-byte records of one thread, in the order
 *                      that thread made them. The shim frames a thread's
 *                      window as one such chunk before the thread stores
 *                      into it through a shared mapping of the file (see
 *                      docs/trace-format.md, "Windows"): slots not written
 *                      yet are zero, a record of kind 0 (OBS_REC_INVALID)
 *                      is such a slot, skipped by readers, and it has an
 *                      index like any;
 *   OBS_CHUNK_STRINGS  string-table entries (struct obs_string_entry + text);
 *   OBS_CHUNK_META     "key=value\n" text (host, command line, settings);
 *   OBS_CHUNK_PAD      nothing: fills the bytes before a window's chunk
 *                      header so that its records start on a page.
 * A reader stops at the first incomplete chunk header and keeps the complete
 * records of an incomplete chunk, so a file left by a crash reads up to its
 * last complete record; a chunk header of zeros followed by nothing but
 * zeros is space reserved for a window that was never framed (the process
 * was killed in between): the end, not damage.
 *
 * Sequence numbers are not stored: the hot path takes no global atomic.
 * Readers number calls by (t_begin, tid, per-thread order), which is the
 * order calls were made within a thread and a consistent order across threads.
 *
 * All integers are in the writer's byte order, recorded in the header;
 * readers reject a file of the other order. */
#ifndef OBS_TRACE_FORMAT_H
#define OBS_TRACE_FORMAT_H

#include <stdint.h>

#include "api_list.h"

#define OBS_TRACE_MAGIC "OBSTRACE" /* 8 bytes, no NUL stored */
#define OBS_TRACE_VERSION 1u
#define OBS_BYTE_ORDER_MARK 0x01020304u
#define OBS_RECORD_SIZE 48u
#define OBS_CHUNK_MAGIC 0x4b4e4843u /* "CHNK" little-endian */

struct obs_file_header { /* 64 bytes */
    char magic[8];              /* OBS_TRACE_MAGIC */
    uint32_t version;           /* OBS_TRACE_VERSION */
    uint32_t header_size;       /* sizeof(struct obs_file_header) */
    uint32_t byte_order;        /* OBS_BYTE_ORDER_MARK as written */
    uint32_t record_size;       /* OBS_RECORD_SIZE */
    uint32_t pid;
    uint32_t flags;             /* OBS_FILE_* */
    uint64_t start_mono_ns;     /* CLOCK_MONOTONIC when the shim started */
    uint64_t start_real_ns;     /* CLOCK_REALTIME at the same moment (for merging ranks) */
    uint64_t reserved[2];
};
#define OBS_FILE_GPU_TIME 0x1u  /* per-call GPU time (OBS_GPU_TIME=events or cupti): GPU_SPAN records */
#define OBS_FILE_GPU_STEPS 0x2u /* OBS_GPU_TIME=steps: RANGE_SPAN records per phase range and stream */

enum obs_chunk_type { OBS_CHUNK_RECORDS = 1, OBS_CHUNK_STRINGS = 2, OBS_CHUNK_META = 3, OBS_CHUNK_PAD = 4 };

struct obs_chunk_header { /* 24 bytes */
    uint32_t magic;         /* OBS_CHUNK_MAGIC */
    uint32_t type;          /* enum obs_chunk_type */
    uint32_t tid;           /* RECORDS: the thread (gettid) */
    uint32_t payload_bytes; /* bytes that follow this header */
    uint64_t first_index;   /* RECORDS: per-thread index of the first record */
};

/* Record kinds, X(id, name). */
#define OBS_RECORD_KIND_LIST(X)                                       \
    X(CALL, "call")           /* one intercepted API call */          \
    X(GPU_SPAN, "gpu_span")   /* device begin/end of an earlier call */ \
    X(STREAM, "stream")       /* stream id <-> handle */              \
    X(LOST, "lost")           /* records that could not be kept */    \
    X(PHASE, "phase")         /* phase/step boundary (phase engine) */ \
    X(GRAPH, "graph")         /* graph exec description */            \
    X(SELF_COST, "self_cost") /* the shim's own measured cost */   \
    X(GRAPH_KERNELS, "graph_kernels") /* a graph exec's kernels by name */ \
    X(RANGE_SPAN, "range_span") /* device begin/end of a phase range on one stream */ \
    X(LAYER, "layer")         /* the model layer of a stretch of calls (phase engine) */ \
    X(GRAPH_NODES, "graph_nodes") /* a graph exec's kernel nodes in walk order, with their layers */ \
    X(COLL, "coll")           /* an NCCL collective, point-to-point or group call */ \
    X(COMM, "comm")           /* an NCCL communicator call: init, split, finalize, destroy, abort */

enum obs_record_kind {
    OBS_REC_INVALID = 0,
#define OBS_REC_ENUM(id, name) OBS_REC_##id,
    OBS_RECORD_KIND_LIST(OBS_REC_ENUM)
#undef OBS_REC_ENUM
    OBS_REC_COUNT
};

/* Copy directions, X(id, name). */
#define OBS_DIRECTION_LIST(X) \
    X(NONE, "")               \
    X(HTOD, "HtoD")           \
    X(DTOH, "DtoH")           \
    X(DTOD, "DtoD")           \
    X(HTOH, "HtoH")           \
    X(PEER, "peer")           \
    X(DEFAULT, "default")

enum obs_direction {
#define OBS_DIR_ENUM(id, name) OBS_DIR_##id,
    OBS_DIRECTION_LIST(OBS_DIR_ENUM)
#undef OBS_DIR_ENUM
    OBS_DIR_COUNT
};

/* CALL record flags (low 3 bits: enum obs_direction). */
#define OBS_CALL_DIR_MASK 0x07u
#define OBS_CALL_DUR_US 0x08u   /* t_dur is in microseconds (call took > 4.29 s) */
#define OBS_CALL_NESTED 0x10u   /* made by the runtime itself while inside another hooked call */
#define OBS_CALL_GPU_TIMED 0x20u /* an event pair was recorded around it: a GPU_SPAN is expected */

struct obs_rec_call { /* 48 bytes */
    uint8_t type;      /* OBS_REC_CALL */
    uint8_t flags;     /* OBS_CALL_* */
    uint16_t api;      /* enum obs_api */
    int32_t status;    /* the call's return code */
    uint64_t t_begin;  /* host CLOCK_MONOTONIC ns */
    uint32_t t_dur;    /* host ns (or us with OBS_CALL_DUR_US) */
    uint32_t name;     /* kernel name string id, 0 = unknown; graph launch: its exec's most frequent kernel */
    uint32_t stream;   /* stream id (OBS_REC_STREAM), 0 = default/legacy */
    uint32_t shmem;    /* kernel: dynamic shared memory bytes; graph launch: graph exec id (0 unknown) */
    union {
        struct {
            uint32_t x;
            uint16_t y, z;
        } grid;        /* kernel */
        uint64_t bytes; /* memcpy/memset/alloc; graph: node count */
    } u;
    uint16_t block_x, block_y, block_z;
    uint16_t device;   /* memcpy peer: destination device; else the current device */
};

/* GPU_SPAN record flags. */
#define OBS_SPAN_NO_WORK 0x01u /* the call had no device work (OBS_GPU_TIME=cupti: its API record came, no
                                  kernel, copy or memset record did): not a span, not missing */

struct obs_rec_gpu_span { /* 48 bytes */
    uint8_t type;      /* OBS_REC_GPU_SPAN */
    uint8_t flags;     /* OBS_SPAN_* */
    uint16_t reserved0;
    uint32_t tid;      /* thread whose CALL this is */
    uint64_t call_index; /* per-thread index of that CALL record */
    uint64_t gpu_begin; /* device ns, on the host monotonic time base */
    uint64_t gpu_end;
    uint32_t stream;
    uint32_t reserved1;
    uint64_t reserved2;
};

/* The device begin and end of one live phase range (a BEGIN/END pair of
 * PHASE records) on one stream it used (OBS_GPU_TIME=steps): an event
 * recorded on the stream just before the range's first call there, one
 * after its last, so the span holds that stream's work of the range's
 * calls (those of the ranges inside it included). Written when the events
 * have completed, into the buffer of the thread that read them. Readers
 * find the range by its BEGIN record and attribute the span by the final
 * labels of its calls on that stream (a RELABEL may differ from the live
 * range): docs/trace-format.md, RANGE_SPAN. */
struct obs_rec_range_span { /* 48 bytes */
    uint8_t type;         /* OBS_REC_RANGE_SPAN */
    uint8_t flags;        /* 0 */
    uint16_t phase;       /* the range's phase id, as in its BEGIN record */
    uint32_t tid;         /* thread whose range it is */
    uint64_t begin_index; /* per-thread index of the range's PHASE BEGIN record */
    uint64_t gpu_begin;   /* device ns, on the host monotonic time base */
    uint64_t gpu_end;
    uint32_t stream;      /* stream id */
    uint32_t step;        /* the range's step, or OBS_NO_STEP (as its BEGIN) */
    uint32_t generation;
    uint32_t name;        /* the range's name id */
};

struct obs_rec_stream { /* 48 bytes */
    uint8_t type;      /* OBS_REC_STREAM */
    uint8_t flags;
    uint16_t device;
    uint32_t id;       /* the id CALL records use */
    uint64_t handle;   /* the runtime's stream handle value */
    uint64_t reserved[4];
};

struct obs_rec_lost { /* 48 bytes */
    uint8_t type;      /* OBS_REC_LOST */
    uint8_t reason;    /* enum obs_lost_reason */
    uint16_t reserved0;
    uint32_t tid;
    uint64_t count;    /* records lost */
    uint64_t t_first, t_last;
    uint64_t reserved[2];
};
/* UNFINISHED: the thread ended inside a recorded call (pthread_cancel, or
 * pthread_exit from a callback): the call was made, never returned. */
enum obs_lost_reason {
    OBS_LOST_BUFFER_FULL = 1,
    OBS_LOST_WRITE_FAILED = 2,
    OBS_LOST_NO_BUFFER = 3,
    OBS_LOST_UNFINISHED = 4
};
#define OBS_LOST_REASONS 5 /* reasons are 1 .. OBS_LOST_REASONS - 1 */

struct obs_rec_phase { /* 48 bytes: written by the phase engine, in the thread's own buffer */
    uint8_t type;      /* OBS_REC_PHASE */
    uint8_t event;     /* enum obs_phase_event */
    uint16_t phase;    /* phase name string id (OBS_STR_RANGE_NAME: "PREFILL", "DECODE", "KV_GATHER", ...) */
    uint32_t step;     /* decode step, or OBS_NO_STEP */
    uint64_t t;        /* host ns */
    uint32_t generation; /* 0, 1, ...: a new prompt starts a new generation */
    uint32_t name;     /* BEGIN: full range name string id ("DECODE/STEP_3", "DECODE/STEADY") */
    uint64_t first_index; /* RELABEL: the per-thread record indexes [first_index, last_index] */
    uint64_t last_index;  /*          of this thread whose calls it labels */
    uint64_t reserved;
};
/* How a call gets its phase and step (readers): a RELABEL covering the
 * call's per-thread index wins (the latest one written); otherwise the
 * ranges open at the call in its thread's record order: BEGIN and END
 * nest like NVTX push/pop; the call's phase is the innermost open range's
 * phase, its step the step of the innermost open range that has one. */
enum obs_phase_event { OBS_PHASE_BEGIN = 1, OBS_PHASE_END = 2, OBS_PHASE_RELABEL = 3 };
#define OBS_NO_STEP UINT32_MAX

/* LAYER: the calls [first_index, last_index] of this thread ran inside
 * model layer `layer` (0, 1, ... in launch order within one pass through
 * the layer stack: a prompt chunk's pass starts again from 0), or, with
 * layer OBS_NO_LAYER, inside none. Written by the phase engine when the
 * phase instance (a prompt, a decode step) that holds them has ended or
 * read its token; a later LAYER record over the same index wins. The
 * phase, step and generation are those of the instance, for readers that
 * want them; calls take their phase from PHASE records, never from these. */
struct obs_rec_layer { /* 48 bytes */
    uint8_t type;      /* OBS_REC_LAYER */
    uint8_t event;     /* OBS_LAYER_LABEL */
    uint16_t phase;    /* phase id of the instance (1 PREFILL, 2 DECODE) */
    uint32_t layer;    /* k, or OBS_NO_LAYER */
    uint64_t t;        /* host ns when written */
    uint32_t generation;
    uint32_t step;     /* decode step, or OBS_NO_STEP */
    uint64_t first_index; /* per-thread record indexes [first_index, last_index] */
    uint64_t last_index;
    uint32_t pass;     /* which pass through the layers within the instance (prompt chunks), from 0 */
    uint32_t layers;   /* layers in that pass */
};
enum obs_layer_event { OBS_LAYER_LABEL = 1 };
#define OBS_NO_LAYER UINT32_MAX

/* Written once per graph exec, when it is instantiated, followed by its
 * GRAPH_KERNELS records. Graph launch CALL records name the exec by id (in
 * their shmem field) and carry its node count in u.bytes. */
struct obs_rec_graph { /* 48 bytes */
    uint8_t type;      /* OBS_REC_GRAPH */
    uint8_t flags;     /* OBS_GRAPH_* */
    uint16_t reserved0;
    uint32_t id;       /* graph exec id, 1, 2, ... per process */
    uint64_t handle;   /* the exec handle (cudaGraphExec_t, hipGraphExec_t, CUgraphExec) */
    uint64_t node_count; /* nodes of the graph it was instantiated from */
    uint64_t kernel_count; /* kernel nodes among them */
    uint64_t reserved[2];
};
#define OBS_GRAPH_WALK_INCOMPLETE 0x1u /* some nodes could not be typed or named: counts are lower bounds */
#define OBS_GRAPH_NODES_CUT 0x2u /* more kernel nodes than the shim keeps in order (OBS_GRAPH_NODES_MAX):
                                    no GRAPH_NODES records, no layers */

/* A graph exec's kernel nodes by name: (name id, count) pairs, as many
 * records as needed after its GRAPH record (same thread). Unused pairs are
 * zero. Kernel nodes whose kernel could not be named count under name id 0. */
#define OBS_GRAPH_KERNEL_PAIRS 5u
struct obs_rec_graph_kernels { /* 48 bytes */
    uint8_t type;      /* OBS_REC_GRAPH_KERNELS */
    uint8_t count;     /* pairs used, 1..OBS_GRAPH_KERNEL_PAIRS */
    uint16_t reserved0;
    uint32_t graph;    /* the GRAPH record's id */
    struct {
        uint32_t name; /* kernel name string id (as CALL records use) */
        uint32_t count; /* kernel nodes of that name */
    } pairs[OBS_GRAPH_KERNEL_PAIRS];
};

/* A graph exec's kernel nodes in the order the walk met them (the order
 * the runtime lists them in: for a stream-captured graph on the simulated
 * runtimes, the capture order), with the model layer of each: as many records as needed after
 * its GRAPH_KERNELS records (same thread), positions first, first + 1, ...
 * The layers are found among the nodes by the phase engine's layer finder
 * (docs/layers.md, "Graphs"); a node before the first layer or after the
 * last, or of an exec where none were found, has OBS_GRAPH_NO_LAYER. */
#define OBS_GRAPH_NODES_PER_RECORD 6u
#define OBS_GRAPH_NODES_MAX 32768u /* kernel nodes kept in order per exec; past it: OBS_GRAPH_NODES_CUT */
#define OBS_GRAPH_NO_LAYER 0xffffu
struct obs_rec_graph_nodes { /* 48 bytes */
    uint8_t type;      /* OBS_REC_GRAPH_NODES */
    uint8_t count;     /* nodes used, 1..OBS_GRAPH_NODES_PER_RECORD */
    uint16_t reserved0;
    uint32_t graph;    /* the GRAPH record's id */
    uint32_t first;    /* position of name[0] among the exec's kernel nodes, from 0 */
    uint32_t name[OBS_GRAPH_NODES_PER_RECORD];  /* kernel name string ids (0: could not be named) */
    uint16_t layer[OBS_GRAPH_NODES_PER_RECORD]; /* the node's layer k, or OBS_GRAPH_NO_LAYER */
};

/* NCCL collectives and point-to-point calls, X(id, name, bus factor): the
 * API call names (ncclAllReduce ...), and the factor nccl-tests applies to
 * a collective's algorithm bandwidth (bytes / time) to give its bus
 * bandwidth, as numerator / denominator of n = the communicator's ranks:
 * 2(n-1)/n for AllReduce, (n-1)/n for AllGather, ReduceScatter, AlltoAll,
 * Gather and Scatter, 1 for the rest. Append-only: the numbers are part of
 * the format. */
#define OBS_COLL_OP_LIST(X)                                             \
    X(ALL_REDUCE, "ncclAllReduce", OBS_BUS_2N1_N)                       \
    X(ALL_GATHER, "ncclAllGather", OBS_BUS_N1_N)                        \
    X(REDUCE_SCATTER, "ncclReduceScatter", OBS_BUS_N1_N)                \
    X(BROADCAST, "ncclBroadcast", OBS_BUS_ONE)                          \
    X(BCAST, "ncclBcast", OBS_BUS_ONE)                                  \
    X(REDUCE, "ncclReduce", OBS_BUS_ONE)                                \
    X(ALL_TO_ALL, "ncclAlltoAll", OBS_BUS_N1_N)                         \
    X(GATHER, "ncclGather", OBS_BUS_N1_N)                               \
    X(SCATTER, "ncclScatter", OBS_BUS_N1_N)                             \
    X(SEND, "ncclSend", OBS_BUS_ONE)                                    \
    X(RECV, "ncclRecv", OBS_BUS_ONE)                                    \
    X(GROUP_START, "ncclGroupStart", OBS_BUS_NONE)                      \
    X(GROUP_END, "ncclGroupEnd", OBS_BUS_NONE)
enum obs_bus_factor { OBS_BUS_NONE, OBS_BUS_ONE, OBS_BUS_N1_N, OBS_BUS_2N1_N };
enum obs_coll_op {
    OBS_COLL_INVALID = 0,
#define OBS_COLL_ENUM(id, name, bus) OBS_COLL_##id,
    OBS_COLL_OP_LIST(OBS_COLL_ENUM)
#undef OBS_COLL_ENUM
    OBS_COLL_COUNT
};

/* NCCL's data types (ncclDataType_t values), X(value, name, bytes). */
#define OBS_NCCL_TYPE_LIST(X)                                                                     \
    X(0, "int8", 1) X(1, "uint8", 1) X(2, "int32", 4) X(3, "uint32", 4) X(4, "int64", 8)          \
    X(5, "uint64", 8) X(6, "float16", 2) X(7, "float32", 4) X(8, "float64", 8) X(9, "bfloat16", 2) \
    X(10, "float8e4m3", 1) X(11, "float8e5m2", 1)
#define OBS_NCCL_TYPES 12
#define OBS_NCCL_NO_TYPE 0xffu  /* the call has no datatype (a group call), or an unknown one */
/* Reductions (ncclRedOp_t values 0..4); a reduction made by
 * ncclRedOpCreatePreMulSum is OBS_NCCL_REDOP_CUSTOM. */
#define OBS_NCCL_REDOP_LIST(X) X(0, "sum") X(1, "prod") X(2, "max") X(3, "min") X(4, "avg")
#define OBS_NCCL_REDOPS 5
#define OBS_NCCL_REDOP_CUSTOM 0xfeu
#define OBS_NCCL_NO_REDOP 0xffu

/* COLL record flags. */
#define OBS_COLL_DUR_US 0x01u     /* t_dur is in microseconds (the call took more than 4.29 s) */
#define OBS_COLL_NESTED_CUT 0x02u /* more than 65535 records inside the call: nested is 65535 */
#define OBS_NO_SEQ UINT32_MAX

/* One NCCL collective, point-to-point or group call, written into the
 * calling thread's buffer when the call returns. The records the thread
 * made while inside it (the kernel launches NCCL made for it, a lazy
 * connection's copies ...) are the `nested` records just before it, per
 * thread: indexes [index - nested, index - 1]. A call inside a group
 * (`group` > 0) launches nothing itself: NCCL launches the group's kernels
 * in the ncclGroupEnd that closes the outermost group, whose own record
 * (group 1) holds them. `seq` numbers the collectives and point-to-point
 * calls of each communicator from 0 in call order (each call inside a group
 * its own number): the same collective has the same number on every rank
 * (NCCL requires every rank to call a communicator's collectives in the
 * same order). */
struct obs_rec_coll { /* 48 bytes */
    uint8_t type;      /* OBS_REC_COLL */
    uint8_t op;        /* enum obs_coll_op */
    uint8_t datatype;  /* ncclDataType_t, or OBS_NCCL_NO_TYPE */
    uint8_t redop;     /* ncclRedOp_t 0..4, OBS_NCCL_REDOP_CUSTOM, or OBS_NCCL_NO_REDOP */
    int32_t status;    /* the ncclResult_t returned */
    uint64_t t_begin;  /* host CLOCK_MONOTONIC ns */
    uint32_t t_dur;    /* host ns (us with OBS_COLL_DUR_US) */
    uint32_t stream;   /* stream id (OBS_REC_STREAM), as CALL records */
    uint64_t count;    /* elements, as passed: AllGather's send count, ReduceScatter's receive count */
    uint32_t comm;     /* the communicator's id in this process (its COMM record), 0 unknown */
    uint32_t seq;      /* the communicator's sequence number of this call, OBS_NO_SEQ for group calls */
    int32_t peer;      /* root (Broadcast, Reduce, Gather, Scatter), peer (Send, Recv), else -1 */
    uint16_t nested;   /* records the thread made inside the call, just before this one */
    uint8_t group;     /* groups open when the call was made: 0 none; ncclGroupEnd: including its own */
    uint8_t flags;     /* OBS_COLL_* */
};

/* NCCL communicator calls, X(id, name). Append-only. */
#define OBS_COMM_EVENT_LIST(X)                            \
    X(INIT_RANK, "ncclCommInitRank")                      \
    X(INIT_RANK_CONFIG, "ncclCommInitRankConfig")         \
    X(INIT_RANK_SCALABLE, "ncclCommInitRankScalable")     \
    X(INIT_ALL, "ncclCommInitAll")                        \
    X(SPLIT, "ncclCommSplit")                             \
    X(FINALIZE, "ncclCommFinalize")                       \
    X(DESTROY, "ncclCommDestroy")                         \
    X(ABORT, "ncclCommAbort")
enum obs_comm_event {
    OBS_COMM_INVALID = 0,
#define OBS_COMM_ENUM(id, name) OBS_COMM_##id,
    OBS_COMM_EVENT_LIST(OBS_COMM_ENUM)
#undef OBS_COMM_ENUM
    OBS_COMM_COUNT
};
#define OBS_COMM_DUR_US 0x01u /* t_dur is in microseconds */

/* An NCCL communicator call, written when it returns (ncclCommInitAll: one
 * record per communicator it made). `comm` is the communicator's id in this
 * process, what COLL records name; `hash` its identity, the same on every
 * rank: FNV-1a (64 bits) of the ncclUniqueId (InitRankScalable: of all its
 * ids in order); for ncclCommSplit, of the parent's hash, the color and the
 * number of splits of the parent before this one (every rank of the
 * parent calls ncclCommSplit, in the same order); ncclCommInitAll (one
 * process): of the process id and a counter. A split with
 * NCCL_SPLIT_NOCOLOR makes no communicator: comm 0, rank -1. */
struct obs_rec_comm { /* 48 bytes */
    uint8_t type;      /* OBS_REC_COMM */
    uint8_t event;     /* enum obs_comm_event */
    uint8_t flags;     /* OBS_COMM_* */
    uint8_t reserved0;
    int32_t status;    /* the ncclResult_t returned (ncclInProgress: a non-blocking init under way) */
    uint64_t t_begin;  /* host CLOCK_MONOTONIC ns */
    uint32_t t_dur;    /* host ns (us with OBS_COMM_DUR_US) */
    uint32_t comm;     /* the communicator's id in this process, 1, 2, ... (0: none made) */
    uint64_t hash;     /* its identity across ranks */
    int32_t rank;      /* this process's rank in it, -1 unknown */
    int32_t nranks;    /* its ranks, -1 unknown */
    uint32_t parent;   /* ncclCommSplit: the parent's id in this process; else 0 */
    int32_t color;     /* ncclCommSplit: the color; ncclCommInitAll: the device; else -1 */
};

struct obs_rec_self_cost { /* 48 bytes */
    uint8_t type;      /* OBS_REC_SELF_COST */
    uint8_t reserved0[3];
    uint32_t tid;
    uint64_t calls;    /* calls recorded by this thread */
    uint64_t shim_ns;  /* time spent inside the shim (excluding the real call) */
    uint64_t once_ns;  /* of shim_ns, one-time work: set-up, first uses (0: not told apart, before issue 36) */
    uint64_t reserved[2];
};

union obs_record {
    uint8_t type;
    struct obs_rec_call call;
    struct obs_rec_gpu_span gpu_span;
    struct obs_rec_stream stream;
    struct obs_rec_lost lost;
    struct obs_rec_phase phase;
    struct obs_rec_graph graph;
    struct obs_rec_self_cost self_cost;
    struct obs_rec_graph_kernels graph_kernels;
    struct obs_rec_range_span range_span;
    struct obs_rec_layer layer;
    struct obs_rec_graph_nodes graph_nodes;
    struct obs_rec_coll coll;
    struct obs_rec_comm comm;
    uint8_t raw[OBS_RECORD_SIZE];
    /* words[0] holds the kind: the writer stores it last, with a release
     * store, so that a slot of a window is read whole or as kind 0. */
    uint64_t words[OBS_RECORD_SIZE / 8];
};

/* String-table entry kinds, X(id, name). */
#define OBS_STRING_KIND_LIST(X)                                  \
    X(KERNEL_MANGLED, "kernel_mangled")                          \
    X(KERNEL_DEMANGLED, "kernel_demangled")                      \
    X(THREAD_NAME, "thread_name")                                \
    X(RANGE_NAME, "range_name")

enum obs_string_kind {
    OBS_STR_INVALID = 0,
#define OBS_STR_ENUM(id, name) OBS_STR_##id,
    OBS_STRING_KIND_LIST(OBS_STR_ENUM)
#undef OBS_STR_ENUM
    OBS_STR_COUNT
};

struct obs_string_entry { /* 16 bytes, then len bytes of text, padded to 8 */
    uint32_t id;       /* kernel names: the id CALL records use; threads: the tid */
    uint32_t kind;     /* enum obs_string_kind */
    uint32_t len;      /* text bytes, no NUL */
    uint32_t reserved;
};

#define OBS_PAD8(n) (((n) + 7u) & ~7u)

_Static_assert(sizeof(struct obs_file_header) == 64, "file header is 64 bytes");
_Static_assert(sizeof(struct obs_chunk_header) == 24, "chunk header is 24 bytes");
_Static_assert(sizeof(struct obs_rec_call) == OBS_RECORD_SIZE, "call record size");
_Static_assert(sizeof(struct obs_rec_gpu_span) == OBS_RECORD_SIZE, "gpu span record size");
_Static_assert(sizeof(struct obs_rec_stream) == OBS_RECORD_SIZE, "stream record size");
_Static_assert(sizeof(struct obs_rec_lost) == OBS_RECORD_SIZE, "lost record size");
_Static_assert(sizeof(struct obs_rec_phase) == OBS_RECORD_SIZE, "phase record size");
_Static_assert(sizeof(struct obs_rec_graph) == OBS_RECORD_SIZE, "graph record size");
_Static_assert(sizeof(struct obs_rec_self_cost) == OBS_RECORD_SIZE, "self cost record size");
_Static_assert(sizeof(struct obs_rec_graph_kernels) == OBS_RECORD_SIZE, "graph kernels record size");
_Static_assert(sizeof(struct obs_rec_range_span) == OBS_RECORD_SIZE, "range span record size");
_Static_assert(sizeof(struct obs_rec_layer) == OBS_RECORD_SIZE, "layer record size");
_Static_assert(sizeof(struct obs_rec_graph_nodes) == OBS_RECORD_SIZE, "graph nodes record size");
_Static_assert(sizeof(struct obs_rec_coll) == OBS_RECORD_SIZE, "coll record size");
_Static_assert(sizeof(struct obs_rec_comm) == OBS_RECORD_SIZE, "comm record size");
_Static_assert(sizeof(union obs_record) == OBS_RECORD_SIZE, "record union size");
_Static_assert(sizeof(struct obs_string_entry) == 16, "string entry is 16 bytes");

#endif
