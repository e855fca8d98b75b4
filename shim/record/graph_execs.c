/* Graph executables: see graph_execs.h. Memory is malloc'ed once per
 * instantiation, never per launch. */
#include "graph_execs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "recorder.h"
#include "trace/trace.h"

OBS_HIDDEN struct obs_ptrmap obs_graph_exec_ids;

#define DESCS_PER_BLOCK 256u
#define DESC_BLOCKS 4096u /* up to 1M instantiations per process */

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obs_graph_exec_desc *_Atomic blocks[DESC_BLOCKS];
static uint32_t last_id; /* under graph_lock */

const struct obs_graph_exec_desc *obs_graph_exec_desc_of_id(uint32_t id)
{
    struct obs_graph_exec_desc *b;
    if (id == 0 || id > DESCS_PER_BLOCK * DESC_BLOCKS)
        return NULL;
    b = atomic_load_explicit(&blocks[(id - 1) / DESCS_PER_BLOCK], memory_order_acquire);
    return b != NULL ? &b[(id - 1) % DESCS_PER_BLOCK] : NULL;
}

bool obs_graph_walk_wanted(void)
{
    int state = atomic_load_explicit(&obs_state, memory_order_acquire);
    return (state == OBS_STATE_UNINIT || state == OBS_STATE_RECORDING) && !obs_guard_held();
}

void obs_graph_walk_init(struct obs_graph_walk *w, uint64_t nodes)
{
    memset(w, 0, sizeof *w);
    w->nodes = nodes;
}

/* The node's place in walk order: the order the runtime lists the nodes
 * in, which for a stream-captured graph on the simulated runtimes is the
 * capture order (the order its kernels were launched while capturing); the
 * real runtimes' references promise no order (docs/layers.md, "Graphs"). */
static void keep_order(struct obs_graph_walk *w, uint32_t name)
{
    if (w->order_cut)
        return;
    if (w->norder == w->order_cap) {
        uint32_t cap = w->order_cap ? 2 * w->order_cap : 64;
        uint32_t *grown;
        if (w->norder >= OBS_GRAPH_NODES_MAX) {
            w->order_cut = true;
            return;
        }
        if (cap > OBS_GRAPH_NODES_MAX)
            cap = OBS_GRAPH_NODES_MAX;
        grown = realloc(w->order, cap * sizeof *grown);
        if (grown == NULL) {
            w->order_cut = true;
            return;
        }
        w->order = grown;
        w->order_cap = cap;
    }
    w->order[w->norder++] = name;
}

void obs_graph_walk_add_kernel(struct obs_graph_walk *w, uint32_t name)
{
    size_t i;
    w->kernels++;
    if (name == 0)
        w->incomplete = true;
    keep_order(w, name);
    for (i = 0; i < w->ndistinct; i++)
        if (w->by_name[i].name == name) {
            if (w->by_name[i].count < UINT32_MAX)
                w->by_name[i].count++;
            return;
        }
    if (w->ndistinct == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 8;
        struct obs_graph_name_count *grown = realloc(w->by_name, cap * sizeof *grown);
        if (grown == NULL) {
            w->incomplete = true; /* counted in kernels, not by name */
            return;
        }
        w->by_name = grown;
        w->cap = cap;
    }
    w->by_name[w->ndistinct].name = name;
    w->by_name[w->ndistinct].count = 1;
    w->ndistinct++;
}

static uint32_t most_frequent_name(const struct obs_graph_walk *w)
{
    uint32_t best = 0, best_count = 0;
    size_t i;
    for (i = 0; i < w->ndistinct; i++) /* strictly more: ties keep the first in node order */
        if (w->by_name[i].name != 0 && w->by_name[i].count > best_count) {
            best = w->by_name[i].name;
            best_count = w->by_name[i].count;
        }
    return best;
}

/* Under graph_lock: a new id with its description slot, or 0. */
static uint32_t new_desc_locked(const struct obs_graph_walk *w)
{
    uint32_t id = last_id + 1;
    size_t block = (id - 1) / DESCS_PER_BLOCK;
    struct obs_graph_exec_desc *b, *d;

    if (id > DESCS_PER_BLOCK * DESC_BLOCKS)
        return 0;
    b = atomic_load_explicit(&blocks[block], memory_order_relaxed);
    if (b == NULL) {
        b = calloc(DESCS_PER_BLOCK, sizeof *b);
        if (b == NULL)
            return 0;
        atomic_store_explicit(&blocks[block], b, memory_order_release);
    }
    d = &b[(id - 1) % DESCS_PER_BLOCK];
    d->id = id;
    d->top_name = most_frequent_name(w);
    d->nodes = w->nodes;
    last_id = id;
    return id;
}

/* The GRAPH record and its GRAPH_KERNELS records, into this thread's buffer. */
static void write_records(uint32_t id, const void *exec, const struct obs_graph_walk *w)
{
    union obs_record r;
    size_t i = 0;

    memset(&r, 0, sizeof r);
    r.graph.type = OBS_REC_GRAPH;
    r.graph.flags = (uint8_t)((w->incomplete ? OBS_GRAPH_WALK_INCOMPLETE : 0) | (w->order_cut ? OBS_GRAPH_NODES_CUT : 0));
    r.graph.id = id;
    r.graph.handle = (uint64_t)(uintptr_t)exec;
    r.graph.node_count = w->nodes;
    r.graph.kernel_count = w->kernels;
    obs_recorder_append(&r);
    while (i < w->ndistinct) {
        unsigned n = 0;
        memset(&r, 0, sizeof r);
        r.graph_kernels.type = OBS_REC_GRAPH_KERNELS;
        r.graph_kernels.graph = id;
        for (; n < OBS_GRAPH_KERNEL_PAIRS && i < w->ndistinct; n++, i++) {
            r.graph_kernels.pairs[n].name = w->by_name[i].name;
            r.graph_kernels.pairs[n].count = w->by_name[i].count;
        }
        r.graph_kernels.count = (uint8_t)n;
        obs_recorder_append(&r);
    }
    for (i = 0; !w->order_cut && i < w->norder;) {
        unsigned n = 0;
        memset(&r, 0, sizeof r);
        r.graph_nodes.type = OBS_REC_GRAPH_NODES;
        r.graph_nodes.graph = id;
        r.graph_nodes.first = (uint32_t)i;
        for (; n < OBS_GRAPH_NODES_PER_RECORD && i < w->norder; n++, i++) {
            r.graph_nodes.name[n] = w->order[i];
            r.graph_nodes.layer[n] = w->layer != NULL ? w->layer[i] : OBS_GRAPH_NO_LAYER;
        }
        r.graph_nodes.count = (uint8_t)n;
        obs_recorder_append(&r);
    }
}

uint32_t obs_graph_exec_instantiated(const void *exec, struct obs_graph_walk *w)
{
    uint32_t id = 0;

    if (exec != NULL) {
        pthread_mutex_lock(&graph_lock);
        id = new_desc_locked(w);
        if (id != 0 && obs_ptrmap_put(&obs_graph_exec_ids, (uintptr_t)exec, id) != 0)
            id = 0; /* the slot stays unused */
        pthread_mutex_unlock(&graph_lock);
        OBS_DEBUG_LOG(RECORD, 2, "graph exec id=%u nodes=%llu kernels=%llu distinct=%zu%s", id,
                      (unsigned long long)w->nodes, (unsigned long long)w->kernels, w->ndistinct,
                      w->incomplete ? " (walk incomplete)" : "");
    }
    /* Records only while recording, outside any hooked call (the depth
     * guard keeps our appends from being re-entered). */
    if (id != 0 && atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_RECORDING &&
        !obs_guard_held()) {
        struct obs_guard guard;
        obs_guard_enter(&guard);
        write_records(id, exec, w);
        obs_guard_leave(&guard);
    }
    free(w->by_name);
    free(w->order);
    free(w->layer);
    w->by_name = NULL;
    w->order = NULL;
    w->layer = NULL;
    w->ndistinct = w->cap = 0;
    w->norder = w->order_cap = 0;
    return id;
}

void obs_graph_exec_note(const void *exec, uint64_t nodes)
{
    struct obs_graph_walk w;
    obs_graph_walk_init(&w, nodes);
    w.incomplete = true; /* kernels not looked at */
    obs_graph_exec_instantiated(exec, &w);
}

void obs_graph_execs_fork_prepare(void)
{
    pthread_mutex_lock(&graph_lock);
}

void obs_graph_execs_fork_parent(void)
{
    pthread_mutex_unlock(&graph_lock);
}

/* The child keeps the execs it inherited (it can launch them); their GRAPH
 * records are in the parent's trace only (docs/shim.md, Graphs). */
void obs_graph_execs_fork_child(void)
{
    pthread_mutex_unlock(&graph_lock);
}
