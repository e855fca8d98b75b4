/* Streams, the virtual device clock, events, synchronisation, stream
 * capture and graphs of the simulated CUDA driver: the semantics of the
 * simulated runtime (docs/architecture.md, "Cost model"), with the
 * driver's error codes. Each stream has a tail (virtual ns at which its last
 * operation ends); the legacy stream waits for every blocking stream and
 * they for it; non-blocking streams do neither. While a stream captures,
 * its work becomes nodes of a linear graph; cuGraphLaunch replays them
 * (kernels at the graph-node cost). Host calls never sleep, unless
 * OBS_SIM_SYNC_WAIT=1 (sim_clock.h): then work starts no earlier than it
 * was enqueued, and stream, context and event syncs (and synchronous
 * copies, cudrv_sim_ops.c) sleep until the virtual end of their work. */
#include "cudrv_sim.h"
#include "cost_model.h"
#include "sim_clock.h"
#include "sim_tool.h"
#include "abi/cupti_abi.h"

#include <stdlib.h>
#include <string.h>

struct drv_graph {
    struct drv_op *ops;
    size_t count, cap;
    struct drv_graph *next;
};

struct drv_graph_exec {
    struct drv_op *ops;
    size_t count;
    struct drv_graph_exec *next;
};

enum drv_stream_kind { DRV_STREAM_LEGACY, DRV_STREAM_PER_THREAD, DRV_STREAM_USER };

struct drv_stream {
    enum drv_stream_kind kind;
    unsigned flags;
    int priority;        /* as given (clamped to cuCtxGetStreamPriorityRange's 0..-5) */
    unsigned long long id; /* cuStreamGetId */
    obs_CUdevice device;   /* of the context current at its creation */
    uint64_t tail_ns;
    struct drv_graph *capture;
    int capture_status;
    int capture_mode;
    pthread_t capture_thread;
    uint64_t capture_id; /* unique per capture sequence, from 1 */
    struct drv_stream *next;
};

struct drv_event {
    unsigned flags;
    int recorded;
    uint64_t time_ns;
    struct drv_event *next;
};

static struct drv_stream drv_legacy_stream = {.kind = DRV_STREAM_LEGACY};
static struct drv_stream *drv_streams; /* per-thread and user streams */
static __thread struct drv_stream *drv_thread_stream;
static uint64_t drv_retired_tail_ns;
static struct drv_event *drv_events;
static struct drv_graph *drv_graphs;
static struct drv_graph_exec *drv_graph_execs;

static int is_blocking(const struct drv_stream *s)
{
    return !(s->flags & OBS_CU_STREAM_NON_BLOCKING);
}

static struct drv_stream *thread_default_stream(void)
{
    if (drv_thread_stream == NULL) {
        struct drv_stream *s = calloc(1, sizeof *s);
        if (s == NULL)
            return NULL;
        s->kind = DRV_STREAM_PER_THREAD;
        s->next = drv_streams;
        drv_streams = s;
        drv_thread_stream = s;
    }
    return drv_thread_stream;
}

obs_CUresult drv_stream_lookup(obs_CUstream handle, int per_thread_api, struct drv_stream **out)
{
    struct drv_stream *s;
    if (handle == OBS_CU_STREAM_LEGACY || (handle == NULL && !per_thread_api)) {
        *out = &drv_legacy_stream;
        return OBS_CUDA_SUCCESS;
    }
    if (handle == OBS_CU_STREAM_PER_THREAD || handle == NULL) {
        *out = thread_default_stream();
        return *out ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (s = drv_streams; s; s = s->next)
        if (s->kind == DRV_STREAM_USER && (obs_CUstream)s == handle) {
            *out = s;
            return OBS_CUDA_SUCCESS;
        }
    return OBS_CUDA_ERROR_INVALID_HANDLE;
}

int drv_stream_capturing(const struct drv_stream *s)
{
    return s->capture != NULL;
}

static struct drv_event *event_lookup(obs_CUevent handle)
{
    struct drv_event *e;
    for (e = drv_events; e; e = e->next)
        if ((obs_CUevent)e == handle)
            return e;
    return NULL;
}

static uint64_t ready_time(const struct drv_stream *s)
{
    uint64_t t = s->tail_ns;
    const struct drv_stream *o;
    if (s->kind == DRV_STREAM_LEGACY) {
        if (drv_retired_tail_ns > t)
            t = drv_retired_tail_ns;
        for (o = drv_streams; o; o = o->next)
            if (is_blocking(o) && o->tail_ns > t)
                t = o->tail_ns;
    } else if (is_blocking(s) && drv_legacy_stream.tail_ns > t) {
        t = drv_legacy_stream.tail_ns;
    }
    return t;
}

static void invalidate_captures(struct drv_stream *only, int blocking_only)
{
    struct drv_stream *s;
    for (s = drv_streams; s; s = s->next)
        if ((only == NULL || only == s) && (!blocking_only || is_blocking(s)) && s->capture &&
            s->capture_status == OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE)
            s->capture_status = OBS_CU_STREAM_CAPTURE_STATUS_INVALIDATED;
}

static int any_capture(int blocking_only)
{
    const struct drv_stream *s;
    for (s = drv_streams; s; s = s->next)
        if (s->capture && (!blocking_only || is_blocking(s)))
            return 1;
    return 0;
}

static obs_CUresult graph_append(struct drv_graph *g, const struct drv_op *op)
{
    if (g->count == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        struct drv_op *grown = realloc(g->ops, cap * sizeof *grown);
        if (grown == NULL)
            return OBS_CUDA_ERROR_OUT_OF_MEMORY;
        g->ops = grown;
        g->cap = cap;
    }
    g->ops[g->count++] = *op;
    return OBS_CUDA_SUCCESS;
}

static void run_copy(const struct drv_copy *c)
{
    size_t z, y;
    for (z = 0; z < c->depth; z++)
        for (y = 0; y < c->height; y++)
            memmove(c->dst + z * c->dst_slice + y * c->dst_pitch, c->src + z * c->src_slice + y * c->src_pitch,
                    c->width);
}

static void run_fill(const struct drv_fill *f)
{
    size_t y, i;
    for (y = 0; y < f->height; y++) {
        char *row = f->dst + y * f->pitch;
        for (i = 0; i < f->width_elems; i++) {
            if (f->elem_size == 1) {
                row[i] = (char)f->value;
            } else if (f->elem_size == 2) {
                uint16_t v = (uint16_t)f->value;
                memcpy(row + 2 * i, &v, 2);
            } else {
                memcpy(row + 4 * i, &f->value, 4);
            }
        }
    }
}

/* Under drv_lock: what a tool (the simulated libcupti) sees of an operation
 * that ran, and its OBS_SIM_LOG_OPS line (sim_tool.h). */
static void report_op(const struct drv_stream *s, const struct drv_op *op, int in_graph, uint64_t start,
                      uint64_t end)
{
    struct sim_tool_op t = {0};
    t.start_ns = start;
    t.end_ns = end;
    t.stream = (uintptr_t)s;
    t.in_graph = in_graph;
    switch (op->type) {
    case DRV_OP_KERNEL:
        t.kind = SIM_TOOL_KERNEL;
        t.name = drv_function_name(drv_function_find(op->kernel));
        break;
    case DRV_OP_COPY:
        t.kind = SIM_TOOL_MEMCPY;
        t.bytes = (uint64_t)op->u.copy.width * op->u.copy.height * op->u.copy.depth;
        t.copy_kind = op->u.copy.device_to_device ? OBS_CUPTI_MEMCPY_KIND_DTOD : OBS_CUPTI_MEMCPY_KIND_UNKNOWN;
        break;
    default:
        t.kind = SIM_TOOL_MEMSET;
        t.bytes = (uint64_t)op->u.fill.width_elems * op->u.fill.elem_size * op->u.fill.height;
        break;
    }
    sim_tool_device_op(SIM_TOOL_DRIVER, &t);
}

obs_CUresult drv_submit(struct drv_stream *s, const struct drv_op *op, int in_graph)
{
    uint64_t start, cost = 0;

    if (s->capture) {
        if (s->capture_status != OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE)
            return OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        return graph_append(s->capture, op);
    }
    if (s->kind == DRV_STREAM_LEGACY && any_capture(1)) {
        invalidate_captures(NULL, 1);
        return OBS_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    start = ready_time(s);
    if (start < sim_clock_floor())
        start = sim_clock_floor();
    switch (op->type) {
    case DRV_OP_KERNEL:
        cost = sim_kernel_cost_ns(op->u.kernel_threads, in_graph);
        break;
    case DRV_OP_COPY:
        run_copy(&op->u.copy);
        cost = sim_copy_cost_ns((uint64_t)op->u.copy.width * op->u.copy.height * op->u.copy.depth,
                                op->u.copy.device_to_device);
        break;
    case DRV_OP_FILL:
        run_fill(&op->u.fill);
        cost = sim_memset_cost_ns((uint64_t)op->u.fill.width_elems * op->u.fill.elem_size *
                                  op->u.fill.height);
        break;
    case DRV_OP_EVENT_RECORD:
        if (event_lookup((obs_CUevent)op->u.event)) {
            op->u.event->recorded = 1;
            op->u.event->time_ns = start;
        }
        break;
    }
    s->tail_ns = start + cost;
    sim_clock_note_end(s->tail_ns);
    if (op->type != DRV_OP_EVENT_RECORD)
        report_op(s, op, in_graph, start, start + cost);
    return OBS_CUDA_SUCCESS;
}

/* ---- streams ------------------------------------------------------------------ */

#define STREAM_PRIORITY_LEAST 0
#define STREAM_PRIORITY_GREATEST (-5)

static obs_CUresult stream_create(obs_CUstream *out, unsigned flags, int priority)
{
    static unsigned long long last_stream_id = 2; /* 0..2: legacy, per-thread */
    struct drv_stream *s;
    obs_CUresult err = out && !(flags & ~OBS_CU_STREAM_NON_BLOCKING) ? drv_need_context()
                                                                     : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    s = calloc(1, sizeof *s);
    if (s == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    s->kind = DRV_STREAM_USER;
    s->device = drv_current_device();
    s->flags = flags;
    s->priority = priority > STREAM_PRIORITY_LEAST      ? STREAM_PRIORITY_LEAST
                  : priority < STREAM_PRIORITY_GREATEST ? STREAM_PRIORITY_GREATEST
                                                        : priority;
    pthread_mutex_lock(&drv_lock);
    s->id = ++last_stream_id;
    s->next = drv_streams;
    drv_streams = s;
    pthread_mutex_unlock(&drv_lock);
    *out = (obs_CUstream)s;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuStreamCreate(obs_CUstream *phStream, unsigned int Flags)
{
    obs_CUresult err;
    drv_enter();
    err = stream_create(phStream, Flags, 0);
    return drv_finish("cuStreamCreate", DRV_KIND_OTHER, NULL,
                      err == OBS_CUDA_SUCCESS ? (const void *)*phStream : DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Priorities change nothing here (one virtual queue per stream). */
DRV_EXPORT obs_CUresult cuStreamCreateWithPriority(obs_CUstream *phStream, unsigned int flags, int priority)
{
    obs_CUresult err;
    drv_enter();
    err = stream_create(phStream, flags, priority);
    return drv_finish("cuStreamCreateWithPriority", DRV_KIND_OTHER, NULL,
                      err == OBS_CUDA_SUCCESS ? (const void *)*phStream : DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Under drv_lock: what cuStreamGet{Priority,Flags,Id,GreenCtx} answer. */
enum stream_query { QUERY_PRIORITY, QUERY_FLAGS, QUERY_ID, QUERY_GREEN_CTX, QUERY_CTX };

static obs_CUresult stream_get(obs_CUstream handle, int per_thread_api, enum stream_query what, void *out)
{
    struct drv_stream *s;
    obs_CUresult err = out ? drv_need_context_of(DRV_OBJ(handle)) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS) {
        switch (what) {
        case QUERY_PRIORITY:
            *(int *)out = s->priority;
            break;
        case QUERY_FLAGS:
            *(unsigned *)out = s->flags;
            break;
        case QUERY_ID:
            *(unsigned long long *)out = s->kind == DRV_STREAM_LEGACY ? 1 : s->kind == DRV_STREAM_PER_THREAD ? 2 : s->id;
            break;
        case QUERY_GREEN_CTX: /* no green contexts here: every stream belongs to a plain one */
            *(void **)out = NULL;
            break;
        case QUERY_CTX: /* its device's primary context (the only kind of context streams are made in here) */
            *(obs_CUcontext *)out = drv_primary_context(s->kind == DRV_STREAM_USER ? s->device : drv_current_device());
            break;
        }
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

#define STREAM_GET_ENTRY(sym, per_thread, what, type)                                               \
    DRV_EXPORT obs_CUresult sym(obs_CUstream hStream, type *out)                                     \
    {                                                                                              \
        drv_enter();                                                                               \
        return drv_finish(#sym, DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,                       \
                          stream_get(hStream, per_thread, what, out));                             \
    }
STREAM_GET_ENTRY(cuStreamGetPriority, 0, QUERY_PRIORITY, int)
STREAM_GET_ENTRY(cuStreamGetPriority_ptsz, 1, QUERY_PRIORITY, int)
STREAM_GET_ENTRY(cuStreamGetFlags, 0, QUERY_FLAGS, unsigned int)
STREAM_GET_ENTRY(cuStreamGetFlags_ptsz, 1, QUERY_FLAGS, unsigned int)
STREAM_GET_ENTRY(cuStreamGetId, 0, QUERY_ID, unsigned long long)
STREAM_GET_ENTRY(cuStreamGetId_ptsz, 1, QUERY_ID, unsigned long long)
/* cuDNN asks it of a stream it captures (detectGreenContextStream): a
 * refusal fails its every graph-capturable path with an internal error. */
STREAM_GET_ENTRY(cuStreamGetGreenCtx, 0, QUERY_GREEN_CTX, void *)
STREAM_GET_ENTRY(cuStreamGetCtx, 0, QUERY_CTX, obs_CUcontext)
STREAM_GET_ENTRY(cuStreamGetCtx_ptsz, 1, QUERY_CTX, obs_CUcontext)

/* CUDA 12.5's form: the context and the green context (none). */
static obs_CUresult stream_get_ctx_v2(obs_CUstream hStream, int per_thread, obs_CUcontext *pCtx, void **pGreenCtx)
{
    obs_CUresult err = pCtx && pGreenCtx ? stream_get(hStream, per_thread, QUERY_CTX, pCtx) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *pGreenCtx = NULL;
    return err;
}

DRV_EXPORT obs_CUresult cuStreamGetCtx_v2(obs_CUstream hStream, obs_CUcontext *pCtx, void **pGreenCtx)
{
    drv_enter();
    return drv_finish("cuStreamGetCtx_v2", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      stream_get_ctx_v2(hStream, 0, pCtx, pGreenCtx));
}

DRV_EXPORT obs_CUresult cuStreamGetCtx_v2_ptsz(obs_CUstream hStream, obs_CUcontext *pCtx, void **pGreenCtx)
{
    drv_enter();
    return drv_finish("cuStreamGetCtx_v2_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      stream_get_ctx_v2(hStream, 1, pCtx, pGreenCtx));
}

/* Work is done when it is enqueued: a known stream is always idle. */
static obs_CUresult stream_query(obs_CUstream handle, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(handle));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS && s->capture) {
        invalidate_captures(s, 0);
        err = OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamQuery(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamQuery", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES, stream_query(hStream, 0));
}

DRV_EXPORT obs_CUresult cuStreamQuery_ptsz(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamQuery_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES, stream_query(hStream, 1));
}

static obs_CUresult stream_destroy(obs_CUstream handle)
{
    struct drv_stream **link;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(handle));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_streams; *link; link = &(*link)->next) {
        struct drv_stream *s = *link;
        if (s->kind == DRV_STREAM_USER && (obs_CUstream)s == handle) {
            *link = s->next;
            if (is_blocking(s) && s->tail_ns > drv_retired_tail_ns)
                drv_retired_tail_ns = s->tail_ns;
            if (s->capture) {
                free(s->capture->ops);
                free(s->capture);
            }
            free(s);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamDestroy_v2(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamDestroy_v2", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      stream_destroy(hStream));
}

static obs_CUresult stream_sync(obs_CUstream handle, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(handle));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    uint64_t end = 0;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS && s->capture) {
        invalidate_captures(s, 0);
        err = OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else if (err == OBS_CUDA_SUCCESS) {
        end = s->tail_ns;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        sim_clock_wait(end);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamSynchronize(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamSynchronize", DRV_KIND_SYNC, NULL, hStream, DRV_NO_BYTES,
                      stream_sync(hStream, 0));
}

DRV_EXPORT obs_CUresult cuStreamSynchronize_ptsz(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamSynchronize_ptsz", DRV_KIND_SYNC, NULL, hStream, DRV_NO_BYTES,
                      stream_sync(hStream, 1));
}

static obs_CUresult ctx_sync(void)
{
    obs_CUresult err = drv_need_context();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    uint64_t end;
    const struct drv_stream *o;
    pthread_mutex_lock(&drv_lock);
    if (any_capture(0)) {
        invalidate_captures(NULL, 0);
        err = OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    end = ready_time(&drv_legacy_stream);
    for (o = drv_streams; o; o = o->next)
        if (o->tail_ns > end)
            end = o->tail_ns;
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        sim_clock_wait(end);
    return err;
}

DRV_EXPORT obs_CUresult cuCtxSynchronize(void)
{
    drv_enter();
    return drv_finish("cuCtxSynchronize", DRV_KIND_SYNC, NULL, DRV_NO_STREAM, DRV_NO_BYTES, ctx_sync());
}

/* CUDA 13's form names the context; NULL means the current one. */
DRV_EXPORT obs_CUresult cuCtxSynchronize_v2(obs_CUcontext ctx)
{
    drv_enter();
    return drv_finish("cuCtxSynchronize_v2", DRV_KIND_SYNC, NULL, DRV_NO_STREAM, DRV_NO_BYTES, ctx_sync());
}

static obs_CUresult stream_wait_event(obs_CUstream handle, obs_CUevent event, unsigned flags,
                                      int per_thread_api)
{
    struct drv_stream *s;
    struct drv_event *e;
    obs_CUresult err = flags & ~1u ? OBS_CUDA_ERROR_INVALID_VALUE : drv_need_context_of(DRV_OBJ(handle));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    e = event_lookup(event);
    if (err == OBS_CUDA_SUCCESS && e == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    if (err == OBS_CUDA_SUCCESS && s->capture == NULL && e->recorded && e->time_ns > s->tail_ns)
        s->tail_ns = e->time_ns;
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamWaitEvent(obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags)
{
    drv_enter();
    return drv_finish("cuStreamWaitEvent", DRV_KIND_SYNC, NULL, hStream, DRV_NO_BYTES,
                      stream_wait_event(hStream, hEvent, Flags, 0));
}

DRV_EXPORT obs_CUresult cuStreamWaitEvent_ptsz(obs_CUstream hStream, obs_CUevent hEvent, unsigned int Flags)
{
    drv_enter();
    return drv_finish("cuStreamWaitEvent_ptsz", DRV_KIND_SYNC, NULL, hStream, DRV_NO_BYTES,
                      stream_wait_event(hStream, hEvent, Flags, 1));
}

/* ---- events ------------------------------------------------------------------ */

static obs_CUresult event_create(obs_CUevent *out, unsigned flags)
{
    struct drv_event *e;
    obs_CUresult err = out && !(flags & ~0x7u) ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    e = calloc(1, sizeof *e);
    if (e == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    e->flags = flags;
    pthread_mutex_lock(&drv_lock);
    e->next = drv_events;
    drv_events = e;
    pthread_mutex_unlock(&drv_lock);
    *out = (obs_CUevent)e;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuEventCreate(obs_CUevent *phEvent, unsigned int Flags)
{
    drv_enter();
    return drv_finish("cuEventCreate", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      event_create(phEvent, Flags));
}

static obs_CUresult event_destroy(obs_CUevent handle)
{
    struct drv_event **link;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_events; *link; link = &(*link)->next)
        if ((obs_CUevent)*link == handle) {
            struct drv_event *e = *link;
            *link = e->next;
            free(e);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuEventDestroy_v2(obs_CUevent hEvent)
{
    drv_enter();
    return drv_finish("cuEventDestroy_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      event_destroy(hEvent));
}

static obs_CUresult event_record(obs_CUevent handle, obs_CUstream stream, int per_thread_api)
{
    struct drv_stream *s;
    struct drv_event *e;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    e = event_lookup(handle);
    err = e ? drv_stream_lookup(stream, per_thread_api, &s) : OBS_CUDA_ERROR_INVALID_HANDLE;
    if (err == OBS_CUDA_SUCCESS) {
        struct drv_op op = {.type = DRV_OP_EVENT_RECORD, .u.event = e};
        err = drv_submit(s, &op, 0);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuEventRecord(obs_CUevent hEvent, obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuEventRecord", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      event_record(hEvent, hStream, 0));
}

DRV_EXPORT obs_CUresult cuEventRecord_ptsz(obs_CUevent hEvent, obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuEventRecord_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      event_record(hEvent, hStream, 1));
}

/* CU_EVENT_RECORD_EXTERNAL (1) marks a captured record as an event node
 * of the graph; a capture here always records it as a node, so the flag
 * only has to be valid. */
DRV_EXPORT obs_CUresult cuEventRecordWithFlags(obs_CUevent hEvent, obs_CUstream hStream, unsigned int flags)
{
    drv_enter();
    return drv_finish("cuEventRecordWithFlags", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      flags & ~1u ? OBS_CUDA_ERROR_INVALID_VALUE : event_record(hEvent, hStream, 0));
}

DRV_EXPORT obs_CUresult cuEventRecordWithFlags_ptsz(obs_CUevent hEvent, obs_CUstream hStream, unsigned int flags)
{
    drv_enter();
    return drv_finish("cuEventRecordWithFlags_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      flags & ~1u ? OBS_CUDA_ERROR_INVALID_VALUE : event_record(hEvent, hStream, 1));
}

/* Work is done at once, so a known event is always complete. */
static obs_CUresult event_check(obs_CUevent handle)
{
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = event_lookup(handle) ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuEventQuery(obs_CUevent hEvent)
{
    drv_enter();
    return drv_finish("cuEventQuery", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, event_check(hEvent));
}

/* OBS_SIM_SYNC_WAIT=1: sleep until the event's virtual time. */
static obs_CUresult event_sync(obs_CUevent handle)
{
    struct drv_event *e;
    uint64_t end = 0;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    e = event_lookup(handle);
    if (e != NULL && e->recorded)
        end = e->time_ns;
    pthread_mutex_unlock(&drv_lock);
    if (e == NULL)
        return OBS_CUDA_ERROR_INVALID_HANDLE;
    sim_clock_wait(end);
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuEventSynchronize(obs_CUevent hEvent)
{
    drv_enter();
    return drv_finish("cuEventSynchronize", DRV_KIND_SYNC, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      event_sync(hEvent));
}

static obs_CUresult event_elapsed(float *ms, obs_CUevent start, obs_CUevent end)
{
    struct drv_event *a, *b;
    obs_CUresult err = ms ? drv_need_context_of(start) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    a = event_lookup(start);
    b = event_lookup(end);
    if (a == NULL || b == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if ((a->flags | b->flags) & OBS_CU_EVENT_DISABLE_TIMING)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if (!a->recorded || !b->recorded)
        err = OBS_CUDA_ERROR_NOT_READY;
    else
        *ms = (float)(((double)b->time_ns - (double)a->time_ns) / 1e6);
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuEventElapsedTime(float *pMilliseconds, obs_CUevent hStart, obs_CUevent hEnd)
{
    drv_enter();
    return drv_finish("cuEventElapsedTime", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      event_elapsed(pMilliseconds, hStart, hEnd));
}

DRV_EXPORT obs_CUresult cuEventElapsedTime_v2(float *pMilliseconds, obs_CUevent hStart, obs_CUevent hEnd)
{
    drv_enter();
    return drv_finish("cuEventElapsedTime_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      event_elapsed(pMilliseconds, hStart, hEnd));
}

/* ---- capture ------------------------------------------------------------------- */

static obs_CUresult begin_capture(obs_CUstream handle, obs_CUstreamCaptureMode mode, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = mode < OBS_CU_STREAM_CAPTURE_MODE_GLOBAL || mode > OBS_CU_STREAM_CAPTURE_MODE_RELAXED
                           ? OBS_CUDA_ERROR_INVALID_VALUE
                           : drv_need_context_of(DRV_OBJ(handle));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS && s->kind == DRV_STREAM_LEGACY)
        err = OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    else if (err == OBS_CUDA_SUCCESS && s->capture)
        err = OBS_CUDA_ERROR_ILLEGAL_STATE;
    if (err == OBS_CUDA_SUCCESS) {
        s->capture = calloc(1, sizeof *s->capture);
        if (s->capture == NULL) {
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            static uint64_t last_capture_id;
            s->capture_status = OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE;
            s->capture_id = ++last_capture_id;
            s->capture_mode = mode;
            s->capture_thread = pthread_self();
        }
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamBeginCapture(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamBeginCapture", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      begin_capture(hStream, OBS_CU_STREAM_CAPTURE_MODE_GLOBAL, 0));
}

DRV_EXPORT obs_CUresult cuStreamBeginCapture_ptsz(obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuStreamBeginCapture_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      begin_capture(hStream, OBS_CU_STREAM_CAPTURE_MODE_GLOBAL, 1));
}

DRV_EXPORT obs_CUresult cuStreamBeginCapture_v2(obs_CUstream hStream, obs_CUstreamCaptureMode mode)
{
    drv_enter();
    return drv_finish("cuStreamBeginCapture_v2", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      begin_capture(hStream, mode, 0));
}

DRV_EXPORT obs_CUresult cuStreamBeginCapture_v2_ptsz(obs_CUstream hStream, obs_CUstreamCaptureMode mode)
{
    drv_enter();
    return drv_finish("cuStreamBeginCapture_v2_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      begin_capture(hStream, mode, 1));
}

static obs_CUresult end_capture(obs_CUstream handle, obs_CUgraph *out, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = out ? drv_need_context_of(DRV_OBJ(handle)) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS && s->capture == NULL)
        err = OBS_CUDA_ERROR_ILLEGAL_STATE;
    else if (err == OBS_CUDA_SUCCESS && s->capture_mode != OBS_CU_STREAM_CAPTURE_MODE_RELAXED &&
             !pthread_equal(s->capture_thread, pthread_self()))
        err = OBS_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    if (err == OBS_CUDA_SUCCESS) {
        struct drv_graph *g = s->capture;
        s->capture = NULL;
        if (s->capture_status != OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            free(g->ops);
            free(g);
            *out = NULL;
            err = OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else {
            g->next = drv_graphs;
            drv_graphs = g;
            *out = (obs_CUgraph)g;
        }
        s->capture_status = OBS_CU_STREAM_CAPTURE_STATUS_NONE;
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamEndCapture(obs_CUstream hStream, obs_CUgraph *phGraph)
{
    drv_enter();
    return drv_finish("cuStreamEndCapture", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      end_capture(hStream, phGraph, 0));
}

DRV_EXPORT obs_CUresult cuStreamEndCapture_ptsz(obs_CUstream hStream, obs_CUgraph *phGraph)
{
    drv_enter();
    return drv_finish("cuStreamEndCapture_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      end_capture(hStream, phGraph, 1));
}

static obs_CUresult is_capturing(obs_CUstream handle, obs_CUstreamCaptureStatus *status, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = status ? drv_need_context_of(DRV_OBJ(handle)) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS)
        *status = s->capture ? s->capture_status : OBS_CU_STREAM_CAPTURE_STATUS_NONE;
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuStreamIsCapturing(obs_CUstream hStream, obs_CUstreamCaptureStatus *captureStatus)
{
    drv_enter();
    return drv_finish("cuStreamIsCapturing", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      is_capturing(hStream, captureStatus, 0));
}

DRV_EXPORT obs_CUresult cuStreamIsCapturing_ptsz(obs_CUstream hStream,
                                                 obs_CUstreamCaptureStatus *captureStatus)
{
    drv_enter();
    return drv_finish("cuStreamIsCapturing_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      is_capturing(hStream, captureStatus, 1));
}

/* The calling thread's capture mode (cuThreadExchangeStreamCaptureMode):
 * kept and exchanged as CUDA does; the simulator does not refuse the
 * "unsafe" calls (allocations, syncs of other streams) that a global
 * capture would, so the mode changes nothing else. */
static __thread int drv_thread_capture_mode = OBS_CU_STREAM_CAPTURE_MODE_GLOBAL;

DRV_EXPORT obs_CUresult cuThreadExchangeStreamCaptureMode(obs_CUstreamCaptureMode *mode)
{
    obs_CUresult err;
    drv_enter();
    err = mode && *mode >= OBS_CU_STREAM_CAPTURE_MODE_GLOBAL && *mode <= OBS_CU_STREAM_CAPTURE_MODE_RELAXED
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        int old = drv_thread_capture_mode;
        drv_thread_capture_mode = *mode;
        *mode = old;
    }
    return drv_finish("cuThreadExchangeStreamCaptureMode", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* The three generations of cuStreamGetCaptureInfo (CUDA 10.1, 11.3, 12.3)
 * share this. A captured graph here is a list, not a DAG: no node is
 * reported as a dependency (the set is empty) and there is no edge data. */
struct capture_info_out {
    obs_CUstreamCaptureStatus *status;
    obs_cuuint64_t *id;
    obs_CUgraph *graph;
    const obs_CUgraphNode **deps;
    const void **edge_data;
    size_t *num_deps;
};

static obs_CUresult capture_info(obs_CUstream handle, const struct capture_info_out *o, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = o->status ? drv_need_context_of(DRV_OBJ(handle)) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = drv_stream_lookup(handle, per_thread_api, &s);
    if (err == OBS_CUDA_SUCCESS) {
        int active = s->capture != NULL;
        *o->status = active ? s->capture_status : OBS_CU_STREAM_CAPTURE_STATUS_NONE;
        if (active && o->id)
            *o->id = s->capture_id;
        if (active && o->graph)
            *o->graph = (obs_CUgraph)s->capture;
        if (active && o->deps)
            *o->deps = NULL;
        if (active && o->edge_data)
            *o->edge_data = NULL;
        if (active && o->num_deps)
            *o->num_deps = 0;
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

#define CAPTURE_INFO_ENTRY(sym, per_thread, params, ...)                                          \
    DRV_EXPORT obs_CUresult sym params                                                             \
    {                                                                                              \
        const struct capture_info_out o = {__VA_ARGS__};                                           \
        drv_enter();                                                                               \
        return drv_finish(#sym, DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,                       \
                          capture_info(hStream, &o, per_thread));                                  \
    }
#define CAPTURE_INFO_V1 (obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id)
#define CAPTURE_INFO_V2                                                                            \
    (obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id, obs_CUgraph *graph, \
     const obs_CUgraphNode **deps, size_t *num_deps)
#define CAPTURE_INFO_V3                                                                            \
    (obs_CUstream hStream, obs_CUstreamCaptureStatus *status, obs_cuuint64_t *id, obs_CUgraph *graph, \
     const obs_CUgraphNode **deps, const void **edge_data, size_t *num_deps)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo, 0, CAPTURE_INFO_V1, status, id, NULL, NULL, NULL, NULL)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo_ptsz, 1, CAPTURE_INFO_V1, status, id, NULL, NULL, NULL, NULL)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo_v2, 0, CAPTURE_INFO_V2, status, id, graph, deps, NULL, num_deps)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo_v2_ptsz, 1, CAPTURE_INFO_V2, status, id, graph, deps, NULL, num_deps)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo_v3, 0, CAPTURE_INFO_V3, status, id, graph, deps, edge_data, num_deps)
CAPTURE_INFO_ENTRY(cuStreamGetCaptureInfo_v3_ptsz, 1, CAPTURE_INFO_V3, status, id, graph, deps, edge_data,
                   num_deps)

/* ---- graphs -------------------------------------------------------------------- */

static struct drv_graph *graph_lookup(obs_CUgraph handle)
{
    struct drv_graph *g;
    for (g = drv_graphs; g; g = g->next)
        if ((obs_CUgraph)g == handle)
            return g;
    return NULL;
}

static obs_CUresult instantiate(obs_CUgraphExec *out, obs_CUgraph handle)
{
    struct drv_graph *g;
    struct drv_graph_exec *x;
    obs_CUresult err = out ? drv_need_context_of(handle) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    x = calloc(1, sizeof *x);
    if (x == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&drv_lock);
    g = graph_lookup(handle);
    if (g == NULL) {
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    } else if (g->count > 0 && (x->ops = malloc(g->count * sizeof *x->ops)) == NULL) {
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        if (g->count > 0)
            memcpy(x->ops, g->ops, g->count * sizeof *x->ops);
        x->count = g->count;
        x->next = drv_graph_execs;
        drv_graph_execs = x;
        *out = (obs_CUgraphExec)x;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err != OBS_CUDA_SUCCESS)
        free(x);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphInstantiate(obs_CUgraphExec *phGraphExec, obs_CUgraph hGraph,
                                           obs_CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    drv_enter();
    return drv_finish("cuGraphInstantiate", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      instantiate(phGraphExec, hGraph));
}

DRV_EXPORT obs_CUresult cuGraphInstantiate_v2(obs_CUgraphExec *phGraphExec, obs_CUgraph hGraph,
                                              obs_CUgraphNode *phErrorNode, char *logBuffer,
                                              size_t bufferSize)
{
    drv_enter();
    return drv_finish("cuGraphInstantiate_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      instantiate(phGraphExec, hGraph));
}

DRV_EXPORT obs_CUresult cuGraphInstantiateWithFlags(obs_CUgraphExec *phGraphExec, obs_CUgraph hGraph,
                                                    unsigned long long flags)
{
    drv_enter();
    return drv_finish("cuGraphInstantiateWithFlags", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      instantiate(phGraphExec, hGraph));
}

/* As CUDA: nodes NULL gives the count; otherwise up to *numNodes handles,
 * the rest of the array NULL, *numNodes the number written. */
static obs_CUresult get_nodes(obs_CUgraph handle, obs_CUgraphNode *nodes, size_t *num)
{
    struct drv_graph *g;
    size_t i;
    obs_CUresult err = num ? drv_need_context_of(handle) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    g = graph_lookup(handle);
    if (g == NULL) {
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    } else if (nodes == NULL) {
        *num = g->count;
    } else {
        for (i = 0; i < *num; i++)
            nodes[i] = i < g->count ? (obs_CUgraphNode)&g->ops[i] : NULL;
        if (*num > g->count)
            *num = g->count;
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphGetNodes(obs_CUgraph hGraph, obs_CUgraphNode *nodes, size_t *numNodes)
{
    drv_enter();
    return drv_finish("cuGraphGetNodes", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_nodes(hGraph, nodes, numNodes));
}

/* Under drv_lock: the node behind handle (an op of a live graph), or NULL. */
static const struct drv_op *node_lookup(obs_CUgraphNode handle)
{
    struct drv_graph *g;
    size_t i;
    for (g = drv_graphs; g; g = g->next)
        for (i = 0; i < g->count; i++)
            if ((obs_CUgraphNode)&g->ops[i] == handle)
                return &g->ops[i];
    return NULL;
}

static obs_CUgraphNodeType node_type(const struct drv_op *op)
{
    switch (op->type) {
    case DRV_OP_KERNEL:
        return OBS_CU_GRAPH_NODE_TYPE_KERNEL;
    case DRV_OP_COPY:
        return OBS_CU_GRAPH_NODE_TYPE_MEMCPY;
    case DRV_OP_FILL:
        return OBS_CU_GRAPH_NODE_TYPE_MEMSET;
    case DRV_OP_EVENT_RECORD:
        break;
    }
    return OBS_CU_GRAPH_NODE_TYPE_EVENT_RECORD;
}

static obs_CUresult get_node_type(obs_CUgraphNode handle, obs_CUgraphNodeType *type)
{
    const struct drv_op *op;
    obs_CUresult err = type ? drv_need_context_of(handle) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    op = node_lookup(handle);
    if (op == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else
        *type = node_type(op);
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphNodeGetType(obs_CUgraphNode hNode, obs_CUgraphNodeType *type)
{
    drv_enter();
    return drv_finish("cuGraphNodeGetType", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_node_type(hNode, type));
}

/* The kernel of a kernel node as the driver reports it: a CUfunction in
 * func; a node launched with a CUkernel has it in kern and func NULL in the
 * _v2 form, which has kern, and in func in the CUDA 10.0 form, which has
 * not. Grid and parameters are not kept by the simulator: 0 and NULL. A
 * node of another type: CUDA_ERROR_INVALID_VALUE. */
static obs_CUresult get_kernel_params(obs_CUgraphNode handle, void *out, int v2)
{
    const struct drv_op *op;
    obs_CUresult err = out ? drv_need_context_of(handle) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    op = node_lookup(handle);
    if (op == NULL) {
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    } else if (op->type != DRV_OP_KERNEL) {
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    } else {
        obs_CUDA_KERNEL_NODE_PARAMS_v2 p;
        memset(&p, 0, sizeof p);
        if (v2 && drv_is_kernel_handle(op->kernel))
            p.kern = (obs_CUkernel)op->kernel;
        else
            p.func = op->kernel;
        memcpy(out, &p, v2 ? sizeof p : sizeof(obs_CUDA_KERNEL_NODE_PARAMS_v1)); /* v1: its prefix */
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphKernelNodeGetParams(obs_CUgraphNode hNode, obs_CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    drv_enter();
    return drv_finish("cuGraphKernelNodeGetParams", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_kernel_params(hNode, nodeParams, 0));
}

DRV_EXPORT obs_CUresult cuGraphKernelNodeGetParams_v2(obs_CUgraphNode hNode,
                                                      obs_CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams)
{
    drv_enter();
    return drv_finish("cuGraphKernelNodeGetParams_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_kernel_params(hNode, nodeParams, 1));
}

static obs_CUresult graph_launch(obs_CUgraphExec handle, obs_CUstream stream, int per_thread_api,
                                 long long *node_count)
{
    struct drv_graph_exec *x;
    struct drv_stream *s;
    size_t i;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    for (x = drv_graph_execs; x; x = x->next)
        if ((obs_CUgraphExec)x == handle)
            break;
    err = x ? drv_stream_lookup(stream, per_thread_api, &s) : OBS_CUDA_ERROR_INVALID_HANDLE;
    if (err == OBS_CUDA_SUCCESS) {
        *node_count = (long long)x->count;
        for (i = 0; i < x->count && err == OBS_CUDA_SUCCESS; i++)
            err = drv_submit(s, &x->ops[i], 1);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphLaunch(obs_CUgraphExec hGraphExec, obs_CUstream hStream)
{
    long long nodes = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = graph_launch(hGraphExec, hStream, 0, &nodes);
    return drv_finish("cuGraphLaunch", DRV_KIND_GRAPH, NULL, hStream, nodes, err);
}

DRV_EXPORT obs_CUresult cuGraphLaunch_ptsz(obs_CUgraphExec hGraphExec, obs_CUstream hStream)
{
    long long nodes = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = graph_launch(hGraphExec, hStream, 1, &nodes);
    return drv_finish("cuGraphLaunch_ptsz", DRV_KIND_GRAPH, NULL, hStream, nodes, err);
}

static struct drv_graph_exec *exec_lookup(obs_CUgraphExec handle)
{
    struct drv_graph_exec *x;
    for (x = drv_graph_execs; x; x = x->next)
        if ((obs_CUgraphExec)x == handle)
            return x;
    return NULL;
}

/* cuGraphExecUpdate_v2's result (CUgraphExecUpdateResultInfo). */
struct exec_update_info {
    int result; /* CU_GRAPH_EXEC_UPDATE_SUCCESS 0, _ERROR 1, _ERROR_TOPOLOGY_CHANGED 2, _ERROR_NODE_TYPE_CHANGED 3 */
    obs_CUgraphNode error_node, error_from_node;
};

/* An exec takes a graph's nodes when the topology (a list here: the same
 * number of nodes) and every node's type are the same; a kernel node may
 * name another kernel. Otherwise the exec keeps its nodes, and the result
 * says why: CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE (910). */
static obs_CUresult exec_update(obs_CUgraphExec hexec, obs_CUgraph hgraph, struct exec_update_info *info)
{
    struct drv_graph_exec *x;
    struct drv_graph *g;
    size_t i;
    obs_CUresult err = info ? drv_need_context_of(hexec) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    memset(info, 0, sizeof *info);
    pthread_mutex_lock(&drv_lock);
    x = exec_lookup(hexec);
    g = graph_lookup(hgraph);
    if (x == NULL || g == NULL) {
        info->result = 1;
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    } else if (x->count != g->count) {
        info->result = 2;
        err = 910;
    } else {
        for (i = 0; i < g->count && err == OBS_CUDA_SUCCESS; i++)
            if (g->ops[i].type != x->ops[i].type) {
                info->result = 3;
                info->error_node = (obs_CUgraphNode)&g->ops[i];
                err = 910;
            }
        if (err == OBS_CUDA_SUCCESS && g->count > 0)
            memcpy(x->ops, g->ops, g->count * sizeof *x->ops);
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphExecUpdate_v2(obs_CUgraphExec hGraphExec, obs_CUgraph hGraph, void *resultInfo)
{
    drv_enter();
    return drv_finish("cuGraphExecUpdate_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      exec_update(hGraphExec, hGraph, resultInfo));
}

/* Uploading an exec ahead of its first launch changes nothing here. */
static obs_CUresult graph_upload(obs_CUgraphExec handle, obs_CUstream stream, int per_thread_api)
{
    struct drv_stream *s;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = exec_lookup(handle) ? drv_stream_lookup(stream, per_thread_api, &s) : OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphUpload(obs_CUgraphExec hGraphExec, obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuGraphUpload", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      graph_upload(hGraphExec, hStream, 0));
}

DRV_EXPORT obs_CUresult cuGraphUpload_ptsz(obs_CUgraphExec hGraphExec, obs_CUstream hStream)
{
    drv_enter();
    return drv_finish("cuGraphUpload_ptsz", DRV_KIND_OTHER, NULL, hStream, DRV_NO_BYTES,
                      graph_upload(hGraphExec, hStream, 1));
}

static obs_CUresult exec_destroy(obs_CUgraphExec handle)
{
    struct drv_graph_exec **link;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_graph_execs; *link; link = &(*link)->next)
        if ((obs_CUgraphExec)*link == handle) {
            struct drv_graph_exec *x = *link;
            *link = x->next;
            free(x->ops);
            free(x);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphExecDestroy(obs_CUgraphExec hGraphExec)
{
    drv_enter();
    return drv_finish("cuGraphExecDestroy", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      exec_destroy(hGraphExec));
}

static obs_CUresult graph_destroy(obs_CUgraph handle)
{
    struct drv_graph **link;
    obs_CUresult err = drv_need_context_of(handle);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_graphs; *link; link = &(*link)->next)
        if ((obs_CUgraph)*link == handle) {
            struct drv_graph *g = *link;
            *link = g->next;
            free(g->ops);
            free(g);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuGraphDestroy(obs_CUgraph hGraph)
{
    drv_enter();
    return drv_finish("cuGraphDestroy", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      graph_destroy(hGraph));
}
