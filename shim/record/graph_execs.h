/* Graph executables: what each one replays, learnt once when it is
 * instantiated, so that a graph launch record can say which exec it ran
 * (its id), how many nodes it replays and which kernels.
 *
 * The hook that sees an instantiation succeed (cudaGraphInstantiate and
 * hipGraphInstantiate in hooks_cudart.c / hooks_hip.c; the driver-level
 * hooks likewise) walks the graph once with the runtime's read-only queries:
 *
 *     struct obs_graph_walk w;
 *     if (obs_graph_walk_wanted()) {
 *         obs_graph_walk_init(&w, node_count);
 *         for each kernel node: obs_graph_walk_add_kernel(&w, name_id);  // 0: unnamed
 *         (a node that could not be typed or named: w.incomplete = true)
 *         obs_phase_graph_layers(&w);   // phases/: the layers among the kernel nodes
 *         obs_graph_exec_instantiated(exec, &w);
 *     }
 *
 * obs_graph_exec_instantiated gives the exec an id (1, 2, ... per process),
 * writes one GRAPH record, its GRAPH_KERNELS records and its GRAPH_NODES
 * records (the kernel nodes in walk order, with their layers; trace_format.h)
 * into the calling thread's buffer, and publishes the exec for launches:
 * obs_graph_launch_record() then builds a graph launch CALL record (node
 * count in u.bytes, exec id in shmem, most frequent kernel name in name).
 * Lookups are lock-free; instantiations take a mutex. */
#ifndef OBS_GRAPH_EXECS_H
#define OBS_GRAPH_EXECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call_record.h"
#include "common/common.h"

/* What one walk of a graph found. */
struct obs_graph_walk {
    uint64_t nodes;   /* nodes of the graph */
    uint64_t kernels; /* kernel nodes */
    bool incomplete;  /* some node could not be typed or named: counts are lower bounds */
    size_t ndistinct, cap;
    struct obs_graph_name_count {
        uint32_t name;  /* kernel name id (kernel_names.h), 0 = unnamed */
        uint32_t count; /* kernel nodes of that name */
    } *by_name;        /* in order of first appearance among the nodes (malloc'ed) */
    /* The kernel nodes' name ids in walk order (malloc'ed, up to
     * OBS_GRAPH_NODES_MAX; order_cut: there were more, none is kept), and
     * the layer of each (OBS_GRAPH_NO_LAYER: none), set by the phase
     * engine (obs_phase_graph_layers); NULL: none looked for. */
    uint32_t *order;
    uint16_t *layer;
    uint32_t norder, order_cap;
    bool order_cut;
};

/* True when an instantiation seen now should be walked: the shim is (or
 * may soon be) recording and this is not a call made from inside another
 * hooked call (a runtime instantiation that reaches a hooked driver-level
 * one is walked once, by the outer hook). */
bool obs_graph_walk_wanted(void);

void obs_graph_walk_init(struct obs_graph_walk *w, uint64_t nodes);
/* One kernel node whose kernel has name id name (0: could not be named). */
void obs_graph_walk_add_kernel(struct obs_graph_walk *w, uint32_t name);

/* exec was instantiated from the graph walked: record and publish it, then
 * free the walk's memory. Returns the exec's id, 0 when it could not be kept. */
uint32_t obs_graph_exec_instantiated(const void *exec, struct obs_graph_walk *w);

/* Older form, for hooks that know only the node count. */
void obs_graph_exec_note(const void *exec, uint64_t nodes);

/* Published per exec (never moves once published). */
struct obs_graph_exec_desc {
    uint32_t id;
    uint32_t top_name; /* most frequent kernel name id (ties: first in node order), 0 none */
    uint64_t nodes;
};

extern struct obs_ptrmap obs_graph_exec_ids; /* exec handle -> id */
const struct obs_graph_exec_desc *obs_graph_exec_desc_of_id(uint32_t id);

/* The description of exec, or NULL when it was never seen instantiated. */
static inline const struct obs_graph_exec_desc *obs_graph_exec_find(const void *exec)
{
    uint64_t id;
    return obs_ptrmap_get(&obs_graph_exec_ids, (uintptr_t)exec, &id) ? obs_graph_exec_desc_of_id((uint32_t)id)
                                                                       : NULL;
}

/* Nodes of exec, 0 when unknown. */
static inline uint64_t obs_graph_exec_node_count(const void *exec)
{
    const struct obs_graph_exec_desc *d = obs_graph_exec_find(exec);
    return d != NULL ? d->nodes : 0;
}

/* The CALL record description of a launch of exec on stream (stream id). */
static inline struct obs_rec_call obs_graph_launch_record(const void *exec, uint32_t stream)
{
    const struct obs_graph_exec_desc *d = obs_graph_exec_find(exec);
    struct obs_rec_call r = obs_bytes_record(0, OBS_DIR_NONE, stream);
    if (d != NULL) {
        r.u.bytes = d->nodes;
        r.shmem = d->id;
        r.name = d->top_name;
    }
    return r;
}

void obs_graph_execs_fork_prepare(void);
void obs_graph_execs_fork_parent(void);
void obs_graph_execs_fork_child(void);

#endif
