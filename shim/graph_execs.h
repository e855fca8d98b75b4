/* Graph executables -> node counts, learnt when cudaGraphInstantiate (or
 * the HIP equivalent) returns, so that a graph launch record carries the
 * number of nodes it replays. Lookups are lock-free. */
#ifndef OBS_GRAPH_EXECS_H
#define OBS_GRAPH_EXECS_H

#include <stdint.h>

#include "ptrmap.h"

extern struct obs_ptrmap obs_graph_exec_nodes;

void obs_graph_exec_note(const void *exec, uint64_t nodes);

/* Nodes of exec, 0 when unknown. */
static inline uint64_t obs_graph_exec_node_count(const void *exec)
{
    uint64_t nodes;
    return obs_ptrmap_get(&obs_graph_exec_nodes, (uintptr_t)exec, &nodes) ? nodes : 0;
}

void obs_graph_execs_fork_prepare(void);
void obs_graph_execs_fork_parent(void);
void obs_graph_execs_fork_child(void);

#endif
