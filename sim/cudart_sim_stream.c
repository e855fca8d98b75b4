/* Streams and the virtual device clock of the simulated CUDA runtime.
 *
 * Each stream has a tail: the virtual time (ns) at which its last operation
 * ends. An operation starts at max(its stream's tail, the tails it must wait
 * for) and lasts its cost (sim/cost_model.h). The legacy default
 * stream waits for every blocking stream and every blocking stream waits for
 * it; streams created with cudaStreamNonBlocking do neither, as in CUDA.
 * Per-thread default streams are ordinary blocking streams. Host calls never
 * sleep: synchronisation returns at once, unless OBS_SIM_SYNC_WAIT=1
 * (sim_clock.h): then an operation starts no earlier than the host enqueued
 * it, and stream and device syncs sleep until the virtual time their work
 * ends, so that host wall-clock follows the cost model. */
#include "cudart_sim.h"
#include "cost_model.h"
#include "sim_clock.h"
#include "sim_tool.h"
#include "abi/cupti_abi.h"

#include <stdlib.h>
#include <string.h>

static struct sim_stream sim_legacy_stream = {.kind = SIM_STREAM_LEGACY};
/* Every per-thread and user stream; the legacy stream is not in it. */
static struct sim_stream *sim_streams;
static __thread struct sim_stream *sim_thread_stream;
/* Latest tail of the blocking streams destroyed so far: legacy work still
 * waits for what they had enqueued. */
static uint64_t sim_retired_tail_ns;

static int is_blocking(const struct sim_stream *s)
{
    return !(s->flags & OBS_CUDA_STREAM_NON_BLOCKING);
}

/* The calling thread's default stream, made on first use and kept for the
 * life of the process (events recorded on it may outlive the thread). */
static struct sim_stream *thread_default_stream(void)
{
    if (sim_thread_stream == NULL) {
        struct sim_stream *s = calloc(1, sizeof *s);
        if (s == NULL)
            return NULL;
        s->kind = SIM_STREAM_PER_THREAD;
        s->next = sim_streams;
        sim_streams = s;
        sim_thread_stream = s;
    }
    return sim_thread_stream;
}

obs_cudaError_t sim_stream_lookup(obs_cudaStream_t handle, int per_thread_api, struct sim_stream **out)
{
    struct sim_stream *s;

    if (handle == OBS_CUDA_STREAM_LEGACY || (handle == NULL && !per_thread_api)) {
        *out = &sim_legacy_stream;
        return obs_cudaSuccess;
    }
    if (handle == OBS_CUDA_STREAM_PER_THREAD || handle == NULL) {
        *out = thread_default_stream();
        return *out ? obs_cudaSuccess : obs_cudaErrorMemoryAllocation;
    }
    for (s = sim_streams; s; s = s->next)
        if (s->kind == SIM_STREAM_USER && (obs_cudaStream_t)s == handle) {
            *out = s;
            return obs_cudaSuccess;
        }
    return obs_cudaErrorInvalidResourceHandle;
}

/* When the next operation on s may start (legacy-stream semantics). */
static uint64_t ready_time(const struct sim_stream *s)
{
    uint64_t t = s->tail_ns;
    const struct sim_stream *o;

    if (s->kind == SIM_STREAM_LEGACY) {
        if (sim_retired_tail_ns > t)
            t = sim_retired_tail_ns;
        for (o = sim_streams; o; o = o->next)
            if (is_blocking(o) && o->tail_ns > t)
                t = o->tail_ns;
    } else if (is_blocking(s) && sim_legacy_stream.tail_ns > t) {
        t = sim_legacy_stream.tail_ns;
    }
    return t;
}

int sim_invalidate_captures(struct sim_stream *only)
{
    struct sim_stream *s;
    int n = 0;
    for (s = sim_streams; s; s = s->next)
        if ((only == NULL || only == s) && s->capture &&
            s->capture_status == obs_cudaStreamCaptureStatusActive) {
            s->capture_status = obs_cudaStreamCaptureStatusInvalidated;
            n++;
        }
    return n;
}

static int any_capture(int blocking_only)
{
    const struct sim_stream *s;
    for (s = sim_streams; s; s = s->next)
        if (s->capture && (!blocking_only || is_blocking(s)))
            return 1;
    return 0;
}

static void run_copy(const struct sim_copy *c)
{
    size_t z, y;
    if (c->height == 1 && c->depth == 1) {
        memmove(c->dst, c->src, c->width);
        return;
    }
    for (z = 0; z < c->depth; z++)
        for (y = 0; y < c->height; y++)
            memmove(c->dst + z * c->dst_slice + y * c->dst_pitch,
                    c->src + z * c->src_slice + y * c->src_pitch, c->width);
}

static void run_fill(const struct sim_fill *f)
{
    size_t z, y;
    for (z = 0; z < f->depth; z++)
        for (y = 0; y < f->height; y++)
            memset(f->dst + z * f->slice + y * f->pitch, f->value, f->width);
}

/* Under sim_lock: what a tool (the simulated libcupti) sees of an operation
 * that ran, and its OBS_SIM_LOG_OPS line (sim_tool.h). */
static void report_op(const struct sim_stream *s, const struct sim_op *op, int in_graph, uint64_t start,
                      uint64_t end)
{
    struct sim_tool_op t = {0};
    t.start_ns = start;
    t.end_ns = end;
    t.stream = (uintptr_t)s;
    t.in_graph = in_graph;
    switch (op->type) {
    case SIM_OP_KERNEL:
        t.kind = SIM_TOOL_KERNEL;
        t.name = sim_kernel_name(sim_kernel_find(op->kernel_func));
        t.grid[0] = op->kernel_grid.x, t.grid[1] = op->kernel_grid.y, t.grid[2] = op->kernel_grid.z;
        t.block[0] = op->kernel_block.x, t.block[1] = op->kernel_block.y, t.block[2] = op->kernel_block.z;
        break;
    case SIM_OP_COPY:
        t.kind = SIM_TOOL_MEMCPY;
        t.bytes = (uint64_t)op->u.copy.width * op->u.copy.height * op->u.copy.depth;
        t.copy_kind = op->u.copy.device_to_device ? OBS_CUPTI_MEMCPY_KIND_DTOD : OBS_CUPTI_MEMCPY_KIND_UNKNOWN;
        break;
    default:
        t.kind = SIM_TOOL_MEMSET;
        t.bytes = (uint64_t)op->u.fill.width * op->u.fill.height * op->u.fill.depth;
        break;
    }
    sim_tool_device_op(SIM_TOOL_RUNTIME, &t);
}

obs_cudaError_t sim_submit(struct sim_stream *s, const struct sim_op *op, int in_graph)
{
    uint64_t start, cost = 0;

    if (s->capture) {
        if (s->capture_status != obs_cudaStreamCaptureStatusActive)
            return obs_cudaErrorStreamCaptureInvalidated;
        return sim_graph_append(s->capture, op);
    }
    /* Work on the legacy stream would wait for a capturing blocking stream:
     * CUDA refuses it and invalidates the capture. */
    if (s->kind == SIM_STREAM_LEGACY && any_capture(1)) {
        struct sim_stream *o;
        for (o = sim_streams; o; o = o->next)
            if (o->capture && is_blocking(o))
                sim_invalidate_captures(o);
        return obs_cudaErrorStreamCaptureImplicit;
    }

    start = ready_time(s);
    if (start < sim_clock_floor())
        start = sim_clock_floor();
    switch (op->type) {
    case SIM_OP_KERNEL:
        cost = sim_kernel_cost_ns(op->u.kernel_threads, in_graph);
        break;
    case SIM_OP_COPY: {
        const struct sim_copy *c = &op->u.copy;
        run_copy(c);
        cost = sim_copy_cost_ns((uint64_t)c->width * c->height * c->depth, c->device_to_device);
        break;
    }
    case SIM_OP_FILL: {
        const struct sim_fill *f = &op->u.fill;
        run_fill(f);
        cost = sim_memset_cost_ns((uint64_t)f->width * f->height * f->depth);
        break;
    }
    case SIM_OP_EVENT_RECORD:
        /* A graph node may name an event destroyed since its capture. */
        if (sim_event_lookup((obs_cudaEvent_t)op->u.event)) {
            op->u.event->recorded = 1;
            op->u.event->time_ns = start;
        }
        break;
    }
    s->tail_ns = start + cost;
    sim_clock_note_end(s->tail_ns);
    if (op->type != SIM_OP_EVENT_RECORD)
        report_op(s, op, in_graph, start, start + cost);
    return obs_cudaSuccess;
}

/* ---- stream entry points -------------------------------------------------- */

static obs_cudaError_t stream_create(obs_cudaStream_t *out, unsigned flags)
{
    struct sim_stream *s;
    if (out == NULL || (flags & ~OBS_CUDA_STREAM_NON_BLOCKING))
        return obs_cudaErrorInvalidValue;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return obs_cudaErrorMemoryAllocation;
    s->kind = SIM_STREAM_USER;
    s->flags = flags;
    pthread_mutex_lock(&sim_lock);
    s->next = sim_streams;
    sim_streams = s;
    pthread_mutex_unlock(&sim_lock);
    *out = (obs_cudaStream_t)s;
    return obs_cudaSuccess;
}

SIM_EXPORT obs_cudaError_t cudaStreamCreate(obs_cudaStream_t *stream)
{
    obs_cudaError_t err;
    sim_enter();
    err = stream_create(stream, 0);
    return sim_finish("cudaStreamCreate", SIM_KIND_OTHER, NULL,
                      err == obs_cudaSuccess ? (const void *)*stream : SIM_NO_STREAM, SIM_NO_BYTES, err);
}

SIM_EXPORT obs_cudaError_t cudaStreamCreateWithFlags(obs_cudaStream_t *stream, unsigned int flags)
{
    obs_cudaError_t err;
    sim_enter();
    err = stream_create(stream, flags);
    return sim_finish("cudaStreamCreateWithFlags", SIM_KIND_OTHER, NULL,
                      err == obs_cudaSuccess ? (const void *)*stream : SIM_NO_STREAM, SIM_NO_BYTES, err);
}

static obs_cudaError_t stream_destroy(obs_cudaStream_t handle)
{
    struct sim_stream **link;
    obs_cudaError_t err = obs_cudaErrorInvalidResourceHandle;

    pthread_mutex_lock(&sim_lock);
    for (link = &sim_streams; *link; link = &(*link)->next) {
        struct sim_stream *s = *link;
        if (s->kind == SIM_STREAM_USER && (obs_cudaStream_t)s == handle) {
            *link = s->next;
            if (is_blocking(s) && s->tail_ns > sim_retired_tail_ns)
                sim_retired_tail_ns = s->tail_ns;
            if (s->capture)
                sim_graph_free(s->capture);
            free(s);
            err = obs_cudaSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamDestroy(obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaStreamDestroy", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      stream_destroy(stream));
}

/* Synchronising with (or querying) a capturing stream is not allowed and
 * invalidates its capture, as in CUDA. */
static obs_cudaError_t stream_sync(obs_cudaStream_t handle, int per_thread_api, int wait)
{
    struct sim_stream *s;
    obs_cudaError_t err;
    uint64_t end = 0;

    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(handle, per_thread_api, &s);
    if (err == obs_cudaSuccess && s->capture) {
        sim_invalidate_captures(s);
        err = obs_cudaErrorStreamCaptureUnsupported;
    } else if (err == obs_cudaSuccess) {
        end = s->tail_ns;
    }
    pthread_mutex_unlock(&sim_lock);
    if (wait && err == obs_cudaSuccess)
        sim_clock_wait(end);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamSynchronize(obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaStreamSynchronize", SIM_KIND_SYNC, NULL, stream, SIM_NO_BYTES,
                      stream_sync(stream, 0, 1));
}

SIM_EXPORT obs_cudaError_t cudaStreamSynchronize_ptsz(obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaStreamSynchronize_ptsz", SIM_KIND_SYNC, NULL, stream, SIM_NO_BYTES,
                      stream_sync(stream, 1, 1));
}

SIM_EXPORT obs_cudaError_t cudaStreamQuery(obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaStreamQuery", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES,
                      stream_sync(stream, 0, 0));
}

static obs_cudaError_t device_sync(void)
{
    obs_cudaError_t err = obs_cudaSuccess;
    uint64_t end;
    pthread_mutex_lock(&sim_lock);
    if (any_capture(0)) {
        sim_invalidate_captures(NULL);
        err = obs_cudaErrorStreamCaptureUnsupported;
    }
    end = ready_time(&sim_legacy_stream);
    {
        const struct sim_stream *o;
        for (o = sim_streams; o; o = o->next)
            if (o->tail_ns > end)
                end = o->tail_ns;
    }
    pthread_mutex_unlock(&sim_lock);
    if (err == obs_cudaSuccess)
        sim_clock_wait(end);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaDeviceSynchronize(void)
{
    sim_enter();
    return sim_finish("cudaDeviceSynchronize", SIM_KIND_SYNC, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      device_sync());
}

/* The stream's next operation waits for the event's time. While capturing,
 * the wait adds no node (the simulator's graphs are linear). */
static obs_cudaError_t stream_wait_event(obs_cudaStream_t handle, obs_cudaEvent_t event,
                                         unsigned flags, int per_thread_api)
{
    struct sim_stream *s;
    struct sim_event *e;
    obs_cudaError_t err;

    if (flags & ~1u) /* only cudaEventWaitExternal */
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(handle, per_thread_api, &s);
    e = sim_event_lookup(event);
    if (err == obs_cudaSuccess && e == NULL)
        err = obs_cudaErrorInvalidResourceHandle;
    if (err == obs_cudaSuccess && s->capture == NULL && e->recorded && e->time_ns > s->tail_ns)
        s->tail_ns = e->time_ns;
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaStreamWaitEvent(obs_cudaStream_t stream, obs_cudaEvent_t event,
                                               unsigned int flags)
{
    sim_enter();
    return sim_finish("cudaStreamWaitEvent", SIM_KIND_SYNC, NULL, stream, SIM_NO_BYTES,
                      stream_wait_event(stream, event, flags, 0));
}

SIM_EXPORT obs_cudaError_t cudaStreamWaitEvent_ptsz(obs_cudaStream_t stream, obs_cudaEvent_t event,
                                                    unsigned int flags)
{
    sim_enter();
    return sim_finish("cudaStreamWaitEvent_ptsz", SIM_KIND_SYNC, NULL, stream, SIM_NO_BYTES,
                      stream_wait_event(stream, event, flags, 1));
}
