/* Graph executable node counts: see graph_execs.h. */
#include "graph_execs.h"

#include <pthread.h>

#include "obs_export.h"

OBS_HIDDEN struct obs_ptrmap obs_graph_exec_nodes;
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;

void obs_graph_exec_note(const void *exec, uint64_t nodes)
{
    if (exec == NULL)
        return;
    pthread_mutex_lock(&graph_lock);
    obs_ptrmap_put(&obs_graph_exec_nodes, (uintptr_t)exec, nodes);
    pthread_mutex_unlock(&graph_lock);
}

void obs_graph_execs_fork_prepare(void)
{
    pthread_mutex_lock(&graph_lock);
}

void obs_graph_execs_fork_parent(void)
{
    pthread_mutex_unlock(&graph_lock);
}

void obs_graph_execs_fork_child(void)
{
    pthread_mutex_unlock(&graph_lock);
}
