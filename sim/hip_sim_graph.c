/* Simulated HIP runtime: stream capture and graphs. Work enqueued on a
 * capturing stream becomes a node and is neither executed nor timed; an
 * instantiated graph replays its nodes in capture order on the launch
 * stream, kernels at the graph-node cost (graphs save launch latency),
 * copies and fills moving memory as they would have. */
#include <stdlib.h>
#include <string.h>

#include "hip_sim.h"

struct sim_graph {
    struct sim_graph *next;
    struct sim_node **nodes; /* each node separately allocated: handles stay valid */
    size_t count, capacity;
};

struct sim_exec {
    struct sim_exec *next;
    struct sim_node *nodes; /* a snapshot: the graph may be destroyed after instantiation */
    size_t count;
};

static struct sim_graph *sim_graphs;
static struct sim_exec *sim_execs;

/* ---- running work ---- */

void sim_node_run_locked(struct sim_stream *s, const struct sim_node *node, int in_graph)
{
    switch (node->kind) {
    case SIM_NODE_KERNEL:
        sim_stream_advance_locked(s, sim_kernel_cost_ns(node->threads, in_graph));
        break;
    case SIM_NODE_COPY:
        sim_copy_run(&node->copy);
        sim_stream_advance_locked(
            s, sim_copy_cost_ns(sim_copy_bytes(&node->copy), node->copy.device_to_device));
        break;
    case SIM_NODE_FILL:
        sim_fill_run(&node->fill);
        sim_stream_advance_locked(s, sim_memset_cost_ns(sim_fill_bytes(&node->fill)));
        break;
    }
}

obs_hipError_t sim_submit_locked(struct sim_stream *s, const struct sim_node *node, int synchronous)
{
    if (s->capture != NULL)
        return synchronous ? obs_hipErrorStreamCaptureUnsupported : sim_capture_add_locked(s, node);
    sim_node_run_locked(s, node, 0);
    return obs_hipSuccess;
}

/* ---- graphs ---- */

static struct sim_graph *sim_graph_get_locked(obs_hipGraph_t handle)
{
    for (struct sim_graph *g = sim_graphs; g != NULL; g = g->next)
        if ((obs_hipGraph_t)g == handle)
            return g;
    return NULL;
}

static struct sim_exec *sim_exec_get_locked(obs_hipGraphExec_t handle)
{
    for (struct sim_exec *x = sim_execs; x != NULL; x = x->next)
        if ((obs_hipGraphExec_t)x == handle)
            return x;
    return NULL;
}

static void sim_graph_free(struct sim_graph *g)
{
    if (g == NULL)
        return;
    for (size_t i = 0; i < g->count; ++i)
        free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

static obs_hipError_t sim_graph_append(struct sim_graph *g, const struct sim_node *node)
{
    struct sim_node *copy;

    if (g->count == g->capacity) {
        size_t capacity = g->capacity != 0 ? g->capacity * 2 : 16;
        struct sim_node **nodes = realloc(g->nodes, capacity * sizeof *nodes);
        if (nodes == NULL)
            return obs_hipErrorOutOfMemory;
        g->nodes = nodes;
        g->capacity = capacity;
    }
    copy = malloc(sizeof *copy);
    if (copy == NULL)
        return obs_hipErrorOutOfMemory;
    *copy = *node;
    g->nodes[g->count++] = copy;
    return obs_hipSuccess;
}

obs_hipError_t sim_capture_add_locked(struct sim_stream *s, const struct sim_node *node)
{
    return sim_graph_append(s->capture, node);
}

void sim_capture_discard_locked(struct sim_stream *s)
{
    sim_graph_free(s->capture);
    s->capture = NULL;
}

/* ---- capture ---- */

static obs_hipError_t sim_begin_capture(obs_hipStream_t stream, obs_hipStreamCaptureMode mode)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_stream *s;

    if (mode < obs_hipStreamCaptureModeGlobal || mode > obs_hipStreamCaptureModeRelaxed)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, 0);
    if (s == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else if (s == &sim_null_stream) {
        status = obs_hipErrorStreamCaptureUnsupported; /* the legacy stream cannot capture */
    } else if (s->capture != NULL) {
        status = obs_hipErrorIllegalState;
    } else {
        s->capture = calloc(1, sizeof *s->capture);
        if (s->capture == NULL)
            status = obs_hipErrorOutOfMemory;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipStreamBeginCapture(obs_hipStream_t stream, obs_hipStreamCaptureMode mode)
{
    sim_enter();
    return sim_finish("hipStreamBeginCapture", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      sim_begin_capture(stream, mode));
}

static obs_hipError_t sim_end_capture(obs_hipStream_t stream, obs_hipGraph_t *graph)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_stream *s;

    if (graph == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, 0);
    if (s == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else if (s->capture == NULL) {
        status = obs_hipErrorIllegalState;
    } else {
        s->capture->next = sim_graphs;
        sim_graphs = s->capture;
        *graph = (obs_hipGraph_t)s->capture;
        s->capture = NULL;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipStreamEndCapture(obs_hipStream_t stream, obs_hipGraph_t *pGraph)
{
    sim_enter();
    return sim_finish("hipStreamEndCapture", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      sim_end_capture(stream, pGraph));
}

static obs_hipError_t sim_is_capturing(obs_hipStream_t stream, obs_hipStreamCaptureStatus *status_out)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_stream *s;

    if (status_out == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    s = sim_stream_get_locked(stream, 0);
    if (s == NULL)
        status = obs_hipErrorInvalidHandle;
    else
        *status_out = s->capture != NULL ? obs_hipStreamCaptureStatusActive
                                         : obs_hipStreamCaptureStatusNone;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipStreamIsCapturing(obs_hipStream_t stream,
                                    obs_hipStreamCaptureStatus *pCaptureStatus)
{
    sim_enter();
    return sim_finish("hipStreamIsCapturing", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      sim_is_capturing(stream, pCaptureStatus));
}

/* ---- graph objects ---- */

static obs_hipError_t sim_graph_instantiate(obs_hipGraphExec_t *exec_out, obs_hipGraph_t graph,
                                            obs_hipGraphNode_t *error_node, char *log_buffer,
                                            size_t buffer_size)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_graph *g;
    struct sim_exec *x;

    if (exec_out == NULL)
        return obs_hipErrorInvalidValue;
    if (error_node != NULL)
        *error_node = NULL;
    if (log_buffer != NULL && buffer_size > 0)
        log_buffer[0] = '\0';
    x = calloc(1, sizeof *x);
    if (x == NULL)
        return obs_hipErrorOutOfMemory;
    pthread_mutex_lock(&sim_lock);
    g = sim_graph_get_locked(graph);
    if (g == NULL) {
        status = obs_hipErrorInvalidValue;
    } else if (g->count > 0 && (x->nodes = calloc(g->count, sizeof *x->nodes)) == NULL) {
        status = obs_hipErrorOutOfMemory;
    } else {
        for (size_t i = 0; i < g->count; ++i)
            x->nodes[i] = *g->nodes[i];
        x->count = g->count;
        x->next = sim_execs;
        sim_execs = x;
        *exec_out = (obs_hipGraphExec_t)x;
    }
    pthread_mutex_unlock(&sim_lock);
    if (status != obs_hipSuccess)
        free(x);
    return status;
}

obs_hipError_t hipGraphInstantiate(obs_hipGraphExec_t *pGraphExec, obs_hipGraph_t graph,
                                   obs_hipGraphNode_t *pErrorNode, char *pLogBuffer,
                                   size_t bufferSize)
{
    sim_enter();
    return sim_finish("hipGraphInstantiate", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_graph_instantiate(pGraphExec, graph, pErrorNode, pLogBuffer, bufferSize));
}

static obs_hipError_t sim_graph_get_nodes(obs_hipGraph_t graph, obs_hipGraphNode_t *nodes,
                                          size_t *count)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_graph *g;

    if (count == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    g = sim_graph_get_locked(graph);
    if (g == NULL) {
        status = obs_hipErrorInvalidValue;
    } else if (nodes == NULL) {
        *count = g->count;
    } else {
        /* Fill what was asked for; surplus slots get NULL, and *count the real number. */
        for (size_t i = 0; i < *count; ++i)
            nodes[i] = i < g->count ? (obs_hipGraphNode_t)g->nodes[i] : NULL;
        if (*count > g->count)
            *count = g->count;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipGraphGetNodes(obs_hipGraph_t graph, obs_hipGraphNode_t *nodes, size_t *numNodes)
{
    sim_enter();
    return sim_finish("hipGraphGetNodes", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_graph_get_nodes(graph, nodes, numNodes));
}

/* A node handle is one of a live graph's nodes (HIP checks this too). */
static const struct sim_node *sim_node_get_locked(obs_hipGraphNode_t handle)
{
    for (struct sim_graph *g = sim_graphs; g != NULL; g = g->next)
        for (size_t i = 0; i < g->count; ++i)
            if ((obs_hipGraphNode_t)g->nodes[i] == handle)
                return g->nodes[i];
    return NULL;
}

/* HIP 5.2 numbering (obs_hipGraphNodeType*). */
static obs_hipError_t sim_node_get_type(obs_hipGraphNode_t handle, obs_hipGraphNodeType *type)
{
    const struct sim_node *node;
    obs_hipError_t status = obs_hipSuccess;

    if (type == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    node = sim_node_get_locked(handle);
    if (node == NULL)
        status = obs_hipErrorInvalidValue;
    else if (node->kind == SIM_NODE_KERNEL)
        *type = obs_hipGraphNodeTypeKernel;
    else if (node->kind == SIM_NODE_COPY)
        *type = obs_hipGraphNodeTypeMemcpy;
    else
        *type = obs_hipGraphNodeTypeMemset;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipGraphNodeGetType(obs_hipGraphNode_t node, obs_hipGraphNodeType *pType)
{
    sim_enter();
    return sim_finish("hipGraphNodeGetType", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_node_get_type(node, pType));
}

/* func is what the launch named (host stub or hipFunction_t); no arguments kept. */
static obs_hipError_t sim_kernel_node_params(obs_hipGraphNode_t handle, obs_hipKernelNodeParams *params)
{
    const struct sim_node *node;
    obs_hipError_t status = obs_hipSuccess;

    if (params == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    node = sim_node_get_locked(handle);
    if (node == NULL || node->kind != SIM_NODE_KERNEL) {
        status = obs_hipErrorInvalidValue;
    } else {
        memset(params, 0, sizeof *params);
        params->func = (void *)node->func;
        params->blockDim.x = node->local[0];
        params->blockDim.y = node->local[1];
        params->blockDim.z = node->local[2];
        params->gridDim.x = node->local[0] ? node->global[0] / node->local[0] : 0;
        params->gridDim.y = node->local[1] ? node->global[1] / node->local[1] : 0;
        params->gridDim.z = node->local[2] ? node->global[2] / node->local[2] : 0;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipGraphKernelNodeGetParams(obs_hipGraphNode_t node, obs_hipKernelNodeParams *pNodeParams)
{
    sim_enter();
    return sim_finish("hipGraphKernelNodeGetParams", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_kernel_node_params(node, pNodeParams));
}

obs_hipError_t hipGraphExecDestroy(obs_hipGraphExec_t graphExec)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;
    struct sim_exec *found = NULL;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    for (struct sim_exec **p = &sim_execs; *p != NULL; p = &(*p)->next) {
        if ((obs_hipGraphExec_t)*p == graphExec) {
            found = *p;
            *p = found->next;
            status = obs_hipSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    if (found != NULL)
        free(found->nodes);
    free(found);
    return sim_finish("hipGraphExecDestroy", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

obs_hipError_t hipGraphDestroy(obs_hipGraph_t graph)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;
    struct sim_graph *found = NULL;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    for (struct sim_graph **p = &sim_graphs; *p != NULL; p = &(*p)->next) {
        if ((obs_hipGraph_t)*p == graph) {
            found = *p;
            *p = found->next;
            status = obs_hipSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    sim_graph_free(found);
    return sim_finish("hipGraphDestroy", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

/* ---- launch ---- */

/* Replays exec on stream; *node_count gets its size for the log (-1 when unknown). */
static obs_hipError_t sim_graph_launch(obs_hipGraphExec_t exec, obs_hipStream_t stream,
                                       long long *node_count)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_exec *x;
    struct sim_stream *s;

    pthread_mutex_lock(&sim_lock);
    x = sim_exec_get_locked(exec);
    s = sim_stream_get_locked(stream, 0);
    if (x == NULL) {
        status = obs_hipErrorInvalidValue;
    } else if (s == NULL) {
        *node_count = (long long)x->count;
        status = obs_hipErrorInvalidHandle;
    } else {
        *node_count = (long long)x->count;
        /* Launched into a capture, the graph's nodes join the captured graph. */
        for (size_t i = 0; i < x->count && status == obs_hipSuccess; ++i) {
            if (s->capture != NULL)
                status = sim_capture_add_locked(s, &x->nodes[i]);
            else
                sim_node_run_locked(s, &x->nodes[i], 1);
        }
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipGraphLaunch(obs_hipGraphExec_t graphExec, obs_hipStream_t stream)
{
    long long node_count = SIM_NO_BYTES;
    obs_hipError_t status;

    sim_enter();
    status = sim_graph_launch(graphExec, stream, &node_count);
    return sim_finish("hipGraphLaunch", SIM_KIND_GRAPH, NULL, &stream, node_count, status);
}
