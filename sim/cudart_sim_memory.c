/* Memory in the simulated CUDA runtime: "device" memory is host memory
 * (256-byte aligned, like cudaMalloc's), and every copy and memset really
 * moves bytes, at once on its stream or at graph replay while the stream
 * captures. Checks and error codes follow CUDA's: a null pointer with a
 * non-zero size is cudaErrorInvalidValue, an unknown copy kind
 * cudaErrorInvalidMemcpyDirection, an unknown stream
 * cudaErrorInvalidResourceHandle. */
#include "cudart_sim.h"
#include "sim_clock.h"

#include <stdlib.h>
#include <string.h>

#define SIM_ALLOC_ALIGN 256

struct sim_alloc {
    char *ptr;
    size_t size;
};

static struct sim_alloc *sim_allocs;
static size_t sim_alloc_count, sim_alloc_cap;

int sim_is_device_range(const void *p, size_t len)
{
    const char *c = p;
    size_t i;
    for (i = 0; i < sim_alloc_count; i++)
        if (c >= sim_allocs[i].ptr && c + len <= sim_allocs[i].ptr + sim_allocs[i].size)
            return 1;
    return 0;
}

/* ---- allocation ------------------------------------------------------------ */

static obs_cudaError_t alloc_device(void **out, size_t size)
{
    void *p = NULL;
    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    if (size == 0) { /* CUDA: success and a null pointer */
        *out = NULL;
        return obs_cudaSuccess;
    }
    if (posix_memalign(&p, SIM_ALLOC_ALIGN, size) != 0)
        return obs_cudaErrorMemoryAllocation;
    pthread_mutex_lock(&sim_lock);
    if (sim_alloc_count == sim_alloc_cap) {
        size_t cap = sim_alloc_cap ? 2 * sim_alloc_cap : 64;
        struct sim_alloc *grown = realloc(sim_allocs, cap * sizeof *grown);
        if (grown == NULL) {
            pthread_mutex_unlock(&sim_lock);
            free(p);
            return obs_cudaErrorMemoryAllocation;
        }
        sim_allocs = grown;
        sim_alloc_cap = cap;
    }
    sim_allocs[sim_alloc_count].ptr = p;
    sim_allocs[sim_alloc_count].size = size;
    sim_alloc_count++;
    pthread_mutex_unlock(&sim_lock);
    *out = p;
    return obs_cudaSuccess;
}

/* Under sim_lock. */
static obs_cudaError_t free_device(void *p)
{
    size_t i;
    for (i = 0; i < sim_alloc_count; i++)
        if (sim_allocs[i].ptr == p) {
            sim_allocs[i] = sim_allocs[--sim_alloc_count];
            free(p);
            return obs_cudaSuccess;
        }
    return obs_cudaErrorInvalidValue;
}

static obs_cudaError_t free_sync(void *p)
{
    obs_cudaError_t err;
    if (p == NULL)
        return obs_cudaSuccess;
    pthread_mutex_lock(&sim_lock);
    err = free_device(p);
    pthread_mutex_unlock(&sim_lock);
    return err;
}

/* Stream-ordered variants: the stream must exist; the work is immediate.
 * A free enqueued on a capturing stream is not performed (the captured
 * graph may still use the memory): the simulator leaks it. */
static obs_cudaError_t check_stream(obs_cudaStream_t stream, int per_thread_api, struct sim_stream **s)
{
    obs_cudaError_t err;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(stream, per_thread_api, s);
    pthread_mutex_unlock(&sim_lock);
    return err;
}

static obs_cudaError_t alloc_async(void **out, size_t size, obs_cudaStream_t stream, int per_thread_api)
{
    struct sim_stream *s;
    obs_cudaError_t err;
    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    err = check_stream(stream, per_thread_api, &s);
    return err != obs_cudaSuccess ? err : alloc_device(out, size);
}

static obs_cudaError_t free_async(void *p, obs_cudaStream_t stream, int per_thread_api)
{
    struct sim_stream *s;
    obs_cudaError_t err;
    if (p == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(stream, per_thread_api, &s);
    if (err == obs_cudaSuccess && s->capture == NULL)
        err = free_device(p);
    else if (err == obs_cudaSuccess && !sim_is_device_range(p, 1))
        err = obs_cudaErrorInvalidValue;
    pthread_mutex_unlock(&sim_lock);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaMalloc(void **ptr, size_t size)
{
    sim_enter();
    return sim_finish("cudaMalloc", SIM_KIND_ALLOC, NULL, SIM_NO_STREAM, (long long)size,
                      alloc_device(ptr, size));
}

SIM_EXPORT obs_cudaError_t cudaFree(void *ptr)
{
    sim_enter();
    return sim_finish("cudaFree", SIM_KIND_ALLOC, NULL, SIM_NO_STREAM, SIM_NO_BYTES, free_sync(ptr));
}

SIM_EXPORT obs_cudaError_t cudaMallocAsync(void **ptr, size_t size, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMallocAsync", SIM_KIND_ALLOC, NULL, stream, (long long)size,
                      alloc_async(ptr, size, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMallocAsync_ptsz", SIM_KIND_ALLOC, NULL, stream, (long long)size,
                      alloc_async(ptr, size, stream, 1));
}

SIM_EXPORT obs_cudaError_t cudaFreeAsync(void *ptr, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaFreeAsync", SIM_KIND_ALLOC, NULL, stream, SIM_NO_BYTES,
                      free_async(ptr, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaFreeAsync_ptsz(void *ptr, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaFreeAsync_ptsz", SIM_KIND_ALLOC, NULL, stream, SIM_NO_BYTES,
                      free_async(ptr, stream, 1));
}

/* ---- copies ----------------------------------------------------------------- */

static int kind_valid(obs_cudaMemcpyKind kind)
{
    return kind >= obs_cudaMemcpyHostToHost && kind <= obs_cudaMemcpyDefault;
}

/* Enqueue a checked copy (or memset) on its stream; size zero does nothing. */
static obs_cudaError_t submit(struct sim_op *op, obs_cudaMemcpyKind kind, obs_cudaStream_t stream,
                              int per_thread_api)
{
    struct sim_stream *s;
    obs_cudaError_t err;
    uint64_t bytes;

    pthread_mutex_lock(&sim_lock);
    err = sim_stream_lookup(stream, per_thread_api, &s);
    if (op->type == SIM_OP_COPY) {
        struct sim_copy *c = &op->u.copy;
        bytes = (uint64_t)c->width * c->height * c->depth;
        /* cudaMemcpyDefault: device rate when both ends are simulated device memory. */
        c->device_to_device =
            kind == obs_cudaMemcpyDeviceToDevice ||
            (kind == obs_cudaMemcpyDefault && sim_is_device_range(c->dst, c->width) &&
             sim_is_device_range(c->src, c->width));
    } else {
        bytes = (uint64_t)op->u.fill.width * op->u.fill.height * op->u.fill.depth;
    }
    if (err == obs_cudaSuccess && bytes > 0)
        err = sim_submit(s, op, 0);
    pthread_mutex_unlock(&sim_lock);
    return err;
}

static obs_cudaError_t copy_1d(void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind,
                               obs_cudaStream_t stream, int per_thread_api)
{
    struct sim_op op = {.type = SIM_OP_COPY};
    if (!kind_valid(kind))
        return obs_cudaErrorInvalidMemcpyDirection;
    if (count > 0 && (dst == NULL || src == NULL))
        return obs_cudaErrorInvalidValue;
    op.u.copy = (struct sim_copy){.dst = dst, .src = src, .width = count, .height = 1, .depth = 1};
    return submit(&op, kind, stream, per_thread_api);
}

/* A synchronous copy returns when it is done: with OBS_SIM_SYNC_WAIT=1 it
 * sleeps until its virtual end (sim_clock.h). */
static obs_cudaError_t copy_1d_sync(void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind,
                                    int per_thread_api)
{
    obs_cudaError_t err;
    sim_clock_note_end(0);
    err = copy_1d(dst, src, count, kind, NULL, per_thread_api);
    if (err == obs_cudaSuccess)
        sim_clock_wait(sim_clock_last_end());
    return err;
}

SIM_EXPORT obs_cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpy", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_1d_sync(dst, src, count, kind, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpy_ptds", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_1d_sync(dst, src, count, kind, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind,
                                           obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyAsync", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_1d(dst, src, count, kind, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
                                                obs_cudaMemcpyKind kind, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyAsync_ptsz", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_1d(dst, src, count, kind, stream, 1));
}

static obs_cudaError_t copy_2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                               size_t height, obs_cudaMemcpyKind kind, obs_cudaStream_t stream,
                               int per_thread_api)
{
    struct sim_op op = {.type = SIM_OP_COPY};
    if (!kind_valid(kind))
        return obs_cudaErrorInvalidMemcpyDirection;
    if (width == 0 || height == 0)
        return submit(&op, kind, stream, per_thread_api); /* validates the stream only */
    if (dst == NULL || src == NULL)
        return obs_cudaErrorInvalidValue;
    if (width > dpitch || width > spitch)
        return obs_cudaErrorInvalidPitchValue;
    op.u.copy = (struct sim_copy){.dst = dst, .src = src, .width = width, .height = height, .depth = 1,
                                  .dst_pitch = dpitch, .src_pitch = spitch};
    return submit(&op, kind, stream, per_thread_api);
}

SIM_EXPORT obs_cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                        size_t width, size_t height, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpy2D", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)(width * height),
                      copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy2D_ptds(void *dst, size_t dpitch, const void *src, size_t spitch,
                                             size_t width, size_t height, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpy2D_ptds", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM,
                      (long long)(width * height),
                      copy_2d(dst, dpitch, src, spitch, width, height, kind, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                             size_t width, size_t height, obs_cudaMemcpyKind kind,
                                             obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpy2DAsync", SIM_KIND_MEMCPY, NULL, stream, (long long)(width * height),
                      copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy2DAsync_ptsz(void *dst, size_t dpitch, const void *src, size_t spitch,
                                                  size_t width, size_t height, obs_cudaMemcpyKind kind,
                                                  obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpy2DAsync_ptsz", SIM_KIND_MEMCPY, NULL, stream,
                      (long long)(width * height),
                      copy_2d(dst, dpitch, src, spitch, width, height, kind, stream, 1));
}

/* Address of (x bytes, y rows, z slices) in a pitched allocation. */
static char *pitched_at(const struct obs_cudaPitchedPtr *p, const struct obs_cudaPos *pos)
{
    return (char *)p->ptr + pos->z * p->pitch * p->ysize + pos->y * p->pitch + pos->x;
}

/* cudaMemcpy3D on linear (pitched) memory; CUDA arrays are not simulated. */
static obs_cudaError_t copy_3d(const struct obs_cudaMemcpy3DParms *p, obs_cudaStream_t stream,
                               int per_thread_api)
{
    struct sim_op op = {.type = SIM_OP_COPY};
    const struct obs_cudaExtent *e;

    if (p == NULL)
        return obs_cudaErrorInvalidValue;
    if (p->srcArray || p->dstArray)
        return obs_cudaErrorNotSupported;
    if (!kind_valid(p->kind))
        return obs_cudaErrorInvalidMemcpyDirection;
    e = &p->extent;
    if (e->width == 0 || e->height == 0 || e->depth == 0)
        return submit(&op, p->kind, stream, per_thread_api);
    if (p->srcPtr.ptr == NULL || p->dstPtr.ptr == NULL)
        return obs_cudaErrorInvalidValue;
    if (e->width + p->srcPos.x > p->srcPtr.pitch || e->width + p->dstPos.x > p->dstPtr.pitch)
        return obs_cudaErrorInvalidPitchValue;
    if (e->depth > 1 && (p->srcPtr.ysize < e->height || p->dstPtr.ysize < e->height))
        return obs_cudaErrorInvalidValue;
    op.u.copy = (struct sim_copy){.dst = pitched_at(&p->dstPtr, &p->dstPos),
                                  .src = pitched_at(&p->srcPtr, &p->srcPos),
                                  .width = e->width,
                                  .height = e->height,
                                  .depth = e->depth,
                                  .dst_pitch = p->dstPtr.pitch,
                                  .src_pitch = p->srcPtr.pitch,
                                  .dst_slice = p->dstPtr.pitch * p->dstPtr.ysize,
                                  .src_slice = p->srcPtr.pitch * p->srcPtr.ysize};
    return submit(&op, p->kind, stream, per_thread_api);
}

static long long bytes_3d(const struct obs_cudaMemcpy3DParms *p)
{
    return p ? (long long)(p->extent.width * p->extent.height * p->extent.depth) : SIM_NO_BYTES;
}

SIM_EXPORT obs_cudaError_t cudaMemcpy3D(const struct obs_cudaMemcpy3DParms *p)
{
    sim_enter();
    return sim_finish("cudaMemcpy3D", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, bytes_3d(p),
                      copy_3d(p, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy3D_ptds(const struct obs_cudaMemcpy3DParms *p)
{
    sim_enter();
    return sim_finish("cudaMemcpy3D_ptds", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, bytes_3d(p),
                      copy_3d(p, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy3DAsync(const struct obs_cudaMemcpy3DParms *p, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpy3DAsync", SIM_KIND_MEMCPY, NULL, stream, bytes_3d(p),
                      copy_3d(p, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpy3DAsync_ptsz(const struct obs_cudaMemcpy3DParms *p,
                                                  obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpy3DAsync_ptsz", SIM_KIND_MEMCPY, NULL, stream, bytes_3d(p),
                      copy_3d(p, stream, 1));
}

/* Peer copies: there is one device, ordinal 0; charged at host-link rate. */
static obs_cudaError_t copy_peer(void *dst, int dst_device, const void *src, int src_device, size_t count,
                                 obs_cudaStream_t stream)
{
    if (dst_device != 0 || src_device != 0)
        return obs_cudaErrorInvalidDevice;
    return copy_1d(dst, src, count, obs_cudaMemcpyHostToDevice, stream, 0);
}

SIM_EXPORT obs_cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                                          size_t count)
{
    sim_enter();
    return sim_finish("cudaMemcpyPeer", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_peer(dst, dstDevice, src, srcDevice, count, NULL));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                               size_t count, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyPeerAsync", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_peer(dst, dstDevice, src, srcDevice, count, stream));
}

/* ---- symbol copies ------------------------------------------------------------ */

/* The device storage of a symbol at offset: a registered __device__ variable,
 * else the symbol's own address. */
static obs_cudaError_t symbol_at(const void *symbol, size_t count, size_t offset, char **at)
{
    char *storage;
    size_t size;
    int found;

    if (symbol == NULL)
        return obs_cudaErrorInvalidSymbol;
    pthread_mutex_lock(&sim_lock);
    found = sim_symbol_find(symbol, &storage, &size);
    pthread_mutex_unlock(&sim_lock);
    if (!found) {
        *at = (char *)symbol + offset;
        return obs_cudaSuccess;
    }
    if (offset > size || count > size - offset)
        return obs_cudaErrorInvalidValue;
    *at = storage + offset;
    return obs_cudaSuccess;
}

static obs_cudaError_t copy_to_symbol(const void *symbol, const void *src, size_t count, size_t offset,
                                      obs_cudaMemcpyKind kind, obs_cudaStream_t stream, int per_thread_api)
{
    char *at;
    obs_cudaError_t err;
    if (kind != obs_cudaMemcpyHostToDevice && kind != obs_cudaMemcpyDeviceToDevice &&
        kind != obs_cudaMemcpyDefault)
        return obs_cudaErrorInvalidMemcpyDirection;
    err = symbol_at(symbol, count, offset, &at);
    return err != obs_cudaSuccess ? err : copy_1d(at, src, count, kind, stream, per_thread_api);
}

static obs_cudaError_t copy_from_symbol(void *dst, const void *symbol, size_t count, size_t offset,
                                        obs_cudaMemcpyKind kind, obs_cudaStream_t stream,
                                        int per_thread_api)
{
    char *at;
    obs_cudaError_t err;
    if (kind != obs_cudaMemcpyDeviceToHost && kind != obs_cudaMemcpyDeviceToDevice &&
        kind != obs_cudaMemcpyDefault)
        return obs_cudaErrorInvalidMemcpyDirection;
    err = symbol_at(symbol, count, offset, &at);
    return err != obs_cudaSuccess ? err : copy_1d(dst, at, count, kind, stream, per_thread_api);
}

SIM_EXPORT obs_cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                              size_t offset, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpyToSymbol", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_to_symbol(symbol, src, count, offset, kind, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
                                                   size_t offset, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpyToSymbol_ptds", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_to_symbol(symbol, src, count, offset, kind, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                                obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpyFromSymbol", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM, (long long)count,
                      copy_from_symbol(dst, symbol, count, offset, kind, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
                                                     size_t offset, obs_cudaMemcpyKind kind)
{
    sim_enter();
    return sim_finish("cudaMemcpyFromSymbol_ptds", SIM_KIND_MEMCPY, NULL, SIM_NO_STREAM,
                      (long long)count, copy_from_symbol(dst, symbol, count, offset, kind, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
                                                   size_t offset, obs_cudaMemcpyKind kind,
                                                   obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyToSymbolAsync", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_to_symbol(symbol, src, count, offset, kind, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
                                                        size_t offset, obs_cudaMemcpyKind kind,
                                                        obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyToSymbolAsync_ptsz", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_to_symbol(symbol, src, count, offset, kind, stream, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
                                                     size_t offset, obs_cudaMemcpyKind kind,
                                                     obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyFromSymbolAsync", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_from_symbol(dst, symbol, count, offset, kind, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
                                                          size_t offset, obs_cudaMemcpyKind kind,
                                                          obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemcpyFromSymbolAsync_ptsz", SIM_KIND_MEMCPY, NULL, stream, (long long)count,
                      copy_from_symbol(dst, symbol, count, offset, kind, stream, 1));
}

/* ---- memsets ---------------------------------------------------------------- */

static obs_cudaError_t fill(void *dst, int value, size_t width, size_t height, size_t depth, size_t pitch,
                            size_t slice, obs_cudaStream_t stream, int per_thread_api)
{
    struct sim_op op = {.type = SIM_OP_FILL};
    if (width > 0 && height > 0 && depth > 0) {
        if (dst == NULL)
            return obs_cudaErrorInvalidValue;
        if (height > 1 && pitch < width)
            return obs_cudaErrorInvalidValue;
        op.u.fill = (struct sim_fill){.dst = dst, .value = (unsigned char)value, .width = width,
                                      .height = height, .depth = depth, .pitch = pitch, .slice = slice};
    }
    return submit(&op, obs_cudaMemcpyDeviceToDevice, stream, per_thread_api);
}

SIM_EXPORT obs_cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    sim_enter();
    return sim_finish("cudaMemset", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM, (long long)count,
                      fill(dst, value, count, 1, 1, count, 0, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemset_ptds(void *dst, int value, size_t count)
{
    sim_enter();
    return sim_finish("cudaMemset_ptds", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM, (long long)count,
                      fill(dst, value, count, 1, 1, count, 0, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemsetAsync", SIM_KIND_MEMSET, NULL, stream, (long long)count,
                      fill(dst, value, count, 1, 1, count, 0, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemsetAsync_ptsz(void *dst, int value, size_t count, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemsetAsync_ptsz", SIM_KIND_MEMSET, NULL, stream, (long long)count,
                      fill(dst, value, count, 1, 1, count, 0, stream, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    sim_enter();
    return sim_finish("cudaMemset2D", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM, (long long)(width * height),
                      fill(dst, value, width, height, 1, pitch, 0, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemset2D_ptds(void *dst, size_t pitch, int value, size_t width, size_t height)
{
    sim_enter();
    return sim_finish("cudaMemset2D_ptds", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM,
                      (long long)(width * height), fill(dst, value, width, height, 1, pitch, 0, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height,
                                             obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemset2DAsync", SIM_KIND_MEMSET, NULL, stream, (long long)(width * height),
                      fill(dst, value, width, height, 1, pitch, 0, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemset2DAsync_ptsz(void *dst, size_t pitch, int value, size_t width,
                                                  size_t height, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemset2DAsync_ptsz", SIM_KIND_MEMSET, NULL, stream, (long long)(width * height),
                      fill(dst, value, width, height, 1, pitch, 0, stream, 1));
}

static obs_cudaError_t fill_3d(struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent e,
                               obs_cudaStream_t stream, int per_thread_api)
{
    if (e.depth > 1 && e.width > 0 && e.height > 0 && p.ysize < e.height)
        return obs_cudaErrorInvalidValue;
    return fill(p.ptr, value, e.width, e.height, e.depth, p.pitch, p.pitch * p.ysize, stream,
                per_thread_api);
}

#define SIM_EXTENT_BYTES(e) ((long long)((e).width * (e).height * (e).depth))

SIM_EXPORT obs_cudaError_t cudaMemset3D(struct obs_cudaPitchedPtr p, int value, struct obs_cudaExtent extent)
{
    sim_enter();
    return sim_finish("cudaMemset3D", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM, SIM_EXTENT_BYTES(extent),
                      fill_3d(p, value, extent, NULL, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemset3D_ptds(struct obs_cudaPitchedPtr p, int value,
                                             struct obs_cudaExtent extent)
{
    sim_enter();
    return sim_finish("cudaMemset3D_ptds", SIM_KIND_MEMSET, NULL, SIM_NO_STREAM, SIM_EXTENT_BYTES(extent),
                      fill_3d(p, value, extent, NULL, 1));
}

SIM_EXPORT obs_cudaError_t cudaMemset3DAsync(struct obs_cudaPitchedPtr p, int value,
                                             struct obs_cudaExtent extent, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemset3DAsync", SIM_KIND_MEMSET, NULL, stream, SIM_EXTENT_BYTES(extent),
                      fill_3d(p, value, extent, stream, 0));
}

SIM_EXPORT obs_cudaError_t cudaMemset3DAsync_ptsz(struct obs_cudaPitchedPtr p, int value,
                                                  struct obs_cudaExtent extent, obs_cudaStream_t stream)
{
    sim_enter();
    return sim_finish("cudaMemset3DAsync_ptsz", SIM_KIND_MEMSET, NULL, stream, SIM_EXTENT_BYTES(extent),
                      fill_3d(p, value, extent, stream, 1));
}
