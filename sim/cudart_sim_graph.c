/* Stream capture and graphs in the simulated CUDA runtime. While a stream
 * captures, the launches, copies, memsets and event records enqueued on it
 * become nodes of a linear graph and are not executed. cudaGraphLaunch
 * replays the nodes in order on its stream: kernels at the graph-node cost
 * (launch latency saved), copies and memsets at their usual cost, their
 * bytes really moved at replay time. */
#include "cudart_sim.h"

#include <stdlib.h>
#include <string.h>

struct sim_graph_exec {
    struct sim_op *ops;
    size_t count;
    struct sim_graph_exec *next;
};

static struct sim_graph *sim_graphs;         /* finished graphs (EndCapture) */
static struct sim_graph_exec *sim_graph_execs;

struct sim_graph *sim_graph_new(void)
{
    return calloc(1, sizeof(struct sim_graph));
}

void sim_graph_free(struct sim_graph *g)
{
    if (g) {
        free(g->ops);
        free(g);
    }
}

obs_cudaError_t sim_graph_append(struct sim_graph *g, const struct sim_op *op)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        struct sim_op *grown = realloc(g->ops, cap * sizeof *grown);
        if (grown == NULL)
            return obs_cudaErrorMemoryAllocation;
        g->ops = grown;
        g->cap = cap;
    }
    g->ops[g->count++] = *op;
    return obs_cudaSuccess;
}

static struct sim_graph *graph_lookup(obs_cudaGraph_t handle)
{
    struct sim_graph *g;
    for (g = sim_graphs; g; g = g->next)
        if ((obs_cudaGraph_t)g == handle)
            return g;
    return NULL;
}

static struct sim_graph_exec *exec_lookup(obs_cudaGraphExec_t handle)
{
    struct sim_graph_exec *x;
    for (x = sim_graph_execs; x; x = x->next)
        if ((obs_cudaGraphExec_t)x == handle)
            return x;
    return NULL;
}

/* ---- capture ---------------------------------------------------------------- */

static obs_cudaError_t begin_capture(obs_cudaStream_t handle, obs_cudaStreamCaptureMode mode)
{
    struct sim_stream *s;
    obs_cudaError_t err;

    if (mode < obs_cudaStreamCaptureModeGlobal || mode > obs_cudaStreamCaptureModeRelaxed)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(handle, 0, &s);
    if (err == obs_cudaSuccess && s->kind == SIM_STREAM_LEGACY)
        err = obs_cudaErrorStreamCaptureUnsupported; /* CUDA cannot capture the legacy stream */
    else if (err == obs_cudaSuccess && s->capture)
        err = obs_cudaErrorIllegalState;
    if (err == obs_cudaSuccess) {
        s->capture = sim_graph_new();
        if (s->capture == NULL) {
            err = obs_cudaErrorMemoryAllocation;
        } else {
            s->capture_status = obs_cudaStreamCaptureStatusActive;
            s->capture_mode = mode;
            s->capture_thread = pthread_self();
        }
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamBeginCapture(obs_cudaStream_t stream, obs_cudaStreamCaptureMode mode)
{
    sim_enter();
    return sim_finish("cudaStreamBeginCapture", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      begin_capture(stream, mode));
}

static obs_cudaError_t end_capture(obs_cudaStream_t handle, obs_cudaGraph_t *out)
{
    struct sim_stream *s;
    obs_cudaError_t err;

    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(handle, 0, &s);
    if (err == obs_cudaSuccess && s->capture == NULL)
        err = obs_cudaErrorIllegalState;
    else if (err == obs_cudaSuccess && s->capture_mode != obs_cudaStreamCaptureModeRelaxed &&
             !pthread_equal(s->capture_thread, pthread_self()))
        err = obs_cudaErrorStreamCaptureWrongThread;
    if (err == obs_cudaSuccess) {
        struct sim_graph *g = s->capture;
        s->capture = NULL;
        if (s->capture_status != obs_cudaStreamCaptureStatusActive) {
            sim_graph_free(g);
            *out = NULL;
            err = obs_cudaErrorStreamCaptureInvalidated;
        } else {
            g->next = sim_graphs;
            sim_graphs = g;
            *out = (obs_cudaGraph_t)g;
        }
        s->capture_status = obs_cudaStreamCaptureStatusNone;
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamEndCapture(obs_cudaStream_t stream, obs_cudaGraph_t *graph)
{
    sim_enter();
    return sim_finish("cudaStreamEndCapture", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      end_capture(stream, graph));
}

static obs_cudaError_t is_capturing(obs_cudaStream_t handle, obs_cudaStreamCaptureStatus *status)
{
    struct sim_stream *s;
    obs_cudaError_t err;
    if (status == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(handle, 0, &s);
    if (err == obs_cudaSuccess)
        *status = s->capture ? s->capture_status : obs_cudaStreamCaptureStatusNone;
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamIsCapturing(obs_cudaStream_t stream,
                                                 obs_cudaStreamCaptureStatus *status)
{
    sim_enter();
    return sim_finish("cudaStreamIsCapturing", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      is_capturing(stream, status));
}

/* ---- graphs and executable graphs ---------------------------------------------- */

static obs_cudaError_t instantiate(obs_cudaGraphExec_t *out, obs_cudaGraph_t handle)
{
    struct sim_graph *g;
    struct sim_graph_exec *x;
    obs_cudaError_t err = obs_cudaSuccess;

    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    x = calloc(1, sizeof *x);
    if (x == NULL)
        return obs_cudaErrorMemoryAllocation;
    pthread_mutex_lock(&sim_lock);
    g = graph_lookup(handle);
    if (g == NULL) {
        err = obs_cudaErrorInvalidResourceHandle;
    } else if (g->count > 0 && (x->ops = malloc(g->count * sizeof *x->ops)) == NULL) {
        err = obs_cudaErrorMemoryAllocation;
    } else {
        /* A copy: the executable graph outlives changes to (or the end of) its graph. */
        if (g->count > 0)
            memcpy(x->ops, g->ops, g->count * sizeof *x->ops);
        x->count = g->count;
        x->next = sim_graph_execs;
        sim_graph_execs = x;
        *out = (obs_cudaGraphExec_t)x;
    }
    pthread_mutex_unlock(&sim_lock);
    if (err != obs_cudaSuccess)
        free(x);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphInstantiate(obs_cudaGraphExec_t *exec, obs_cudaGraph_t graph,
                                                unsigned long long flags)
{
    sim_enter();
    return sim_finish("cudaGraphInstantiate", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      instantiate(exec, graph));
}

/* As CUDA: with nodes NULL, *numNodes is the node count; otherwise up to
 * *numNodes handles are written, the rest of the array set to NULL, and
 * *numNodes becomes the number written. */
static obs_cudaError_t get_nodes(obs_cudaGraph_t handle, obs_cudaGraphNode_t *nodes, size_t *num)
{
    struct sim_graph *g;
    obs_cudaError_t err = obs_cudaSuccess;
    size_t i;

    if (num == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    g = graph_lookup(handle);
    if (g == NULL) {
        err = obs_cudaErrorInvalidResourceHandle;
    } else if (nodes == NULL) {
        *num = g->count;
    } else {
        for (i = 0; i < *num; i++)
            nodes[i] = i < g->count ? (obs_cudaGraphNode_t)&g->ops[i] : NULL;
        if (*num > g->count)
            *num = g->count;
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphGetNodes(obs_cudaGraph_t graph, obs_cudaGraphNode_t *nodes,
                                             size_t *numNodes)
{
    sim_enter();
    return sim_finish("cudaGraphGetNodes", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      get_nodes(graph, nodes, numNodes));
}

/* Under sim_lock. A node handle is one of a live graph's nodes. */
static const struct sim_op *node_lookup(obs_cudaGraphNode_t handle)
{
    struct sim_graph *g;
    size_t i;
    for (g = sim_graphs; g; g = g->next)
        for (i = 0; i < g->count; i++)
            if ((obs_cudaGraphNode_t)&g->ops[i] == handle)
                return &g->ops[i];
    return NULL;
}

static obs_cudaError_t node_get_type(obs_cudaGraphNode_t handle, obs_cudaGraphNodeType *type)
{
    const struct sim_op *op;
    obs_cudaError_t err = obs_cudaSuccess;

    if (type == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    op = node_lookup(handle);
    if (op == NULL)
        err = obs_cudaErrorInvalidValue;
    else if (op->type == SIM_OP_KERNEL)
        *type = obs_cudaGraphNodeTypeKernel;
    else if (op->type == SIM_OP_COPY)
        *type = obs_cudaGraphNodeTypeMemcpy;
    else if (op->type == SIM_OP_FILL)
        *type = obs_cudaGraphNodeTypeMemset;
    else
        *type = obs_cudaGraphNodeTypeEventRecord;
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphNodeGetType(obs_cudaGraphNode_t node, obs_cudaGraphNodeType *pType)
{
    sim_enter();
    return sim_finish("cudaGraphNodeGetType", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      node_get_type(node, pType));
}

/* func is what the launch named (host stub, or the cudaKernel_t of a
 * <<<>>> launch); arguments are not kept. */
static obs_cudaError_t kernel_node_params(obs_cudaGraphNode_t handle, struct obs_cudaKernelNodeParams *params)
{
    const struct sim_op *op;
    obs_cudaError_t err = obs_cudaSuccess;

    if (params == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    op = node_lookup(handle);
    if (op == NULL || op->type != SIM_OP_KERNEL) {
        err = obs_cudaErrorInvalidValue;
    } else {
        memset(params, 0, sizeof *params);
        params->func = (void *)op->kernel_func;
        params->gridDim = op->kernel_grid;
        params->blockDim = op->kernel_block;
        params->sharedMemBytes = op->kernel_shmem;
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphKernelNodeGetParams(obs_cudaGraphNode_t node,
                                                        struct obs_cudaKernelNodeParams *pNodeParams)
{
    sim_enter();
    return sim_finish("cudaGraphKernelNodeGetParams", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      kernel_node_params(node, pNodeParams));
}

static obs_cudaError_t graph_launch(obs_cudaGraphExec_t handle, obs_cudaStream_t stream, int per_thread_api,
                                    long long *node_count)
{
    struct sim_graph_exec *x;
    struct sim_stream *s;
    obs_cudaError_t err;
    size_t i;

    pthread_mutex_lock(&sim_lock);
    x = exec_lookup(handle);
    err = x ? sim_stream_lookup(stream, per_thread_api, &s) : obs_cudaErrorInvalidResourceHandle;
    if (err == obs_cudaSuccess) {
        *node_count = (long long)x->count;
        /* Replayed into a capturing stream, the nodes join that capture. */
        for (i = 0; i < x->count && err == obs_cudaSuccess; i++)
            err = sim_submit(s, &x->ops[i], 1);
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphLaunch(obs_cudaGraphExec_t exec, obs_cudaStream_t stream)
{
    long long nodes = SIM_NO_BYTES;
    obs_cudaError_t err;
    sim_enter();
    err = graph_launch(exec, stream, 0, &nodes);
    return sim_finish("cudaGraphLaunch", SIM_KIND_GRAPH, NULL, stream, nodes, err);
}

SIM_EXPORT obs_cudaError_t cudaGraphLaunch_ptsz(obs_cudaGraphExec_t exec, obs_cudaStream_t stream)
{
    long long nodes = SIM_NO_BYTES;
    obs_cudaError_t err;
    sim_enter();
    err = graph_launch(exec, stream, 1, &nodes);
    return sim_finish("cudaGraphLaunch_ptsz", SIM_KIND_GRAPH, NULL, stream, nodes, err);
}

static obs_cudaError_t exec_destroy(obs_cudaGraphExec_t handle)
{
    struct sim_graph_exec **link;
    obs_cudaError_t err = obs_cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&sim_lock);
    for (link = &sim_graph_execs; *link; link = &(*link)->next)
        if ((obs_cudaGraphExec_t)*link == handle) {
            struct sim_graph_exec *x = *link;
            *link = x->next;
            free(x->ops);
            free(x);
            err = obs_cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphExecDestroy(obs_cudaGraphExec_t exec)
{
    sim_enter();
    return sim_finish("cudaGraphExecDestroy", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      exec_destroy(exec));
}

static obs_cudaError_t graph_destroy(obs_cudaGraph_t handle)
{
    struct sim_graph **link;
    obs_cudaError_t err = obs_cudaErrorInvalidResourceHandle;
    pthread_mutex_lock(&sim_lock);
    for (link = &sim_graphs; *link; link = &(*link)->next)
        if ((obs_cudaGraph_t)*link == handle) {
            struct sim_graph *g = *link;
            *link = g->next;
            sim_graph_free(g);
            err = obs_cudaSuccess;
            break;
        }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaGraphDestroy(obs_cudaGraph_t graph)
{
    sim_enter();
    return sim_finish("cudaGraphDestroy", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      graph_destroy(graph));
}
