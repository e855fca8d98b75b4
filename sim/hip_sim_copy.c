/* Simulated HIP runtime: hipMemcpy and its variants. Copies really move
 * host memory (at once, or when a captured graph replays them) and charge
 * the cost model's copy time to their stream. The synchronous calls run on
 * the legacy null stream, or on the thread's default stream for _spt. */
#include <string.h>

#include "hip_sim.h"
#include "sim_clock.h"

/* Where a copy goes: the stream as passed and how to read it. */
struct sim_copy_route {
    obs_hipStream_t stream;
    int per_thread_default; /* _spt: stream 0 is the thread's default stream */
    int synchronous;
};

static const struct sim_copy_route sim_sync_legacy = {NULL, 0, 1};
static const struct sim_copy_route sim_sync_per_thread = {NULL, 1, 1};

static struct sim_copy_route sim_async(obs_hipStream_t stream, int per_thread_default)
{
    struct sim_copy_route r = {stream, per_thread_default, 0};
    return r;
}

uint64_t sim_copy_bytes(const struct sim_copy *c)
{
    return (uint64_t)c->width * c->height * c->depth;
}

void sim_copy_run(const struct sim_copy *c)
{
    for (size_t z = 0; z < c->depth; ++z)
        for (size_t y = 0; y < c->height; ++y)
            memmove(c->dst + z * c->dslice + y * c->dpitch, c->src + z * c->sslice + y * c->spitch,
                    c->width);
}

static int sim_kind_valid(obs_hipMemcpyKind kind)
{
    return kind >= obs_hipMemcpyHostToHost && kind <= obs_hipMemcpyDefault;
}

static struct sim_copy sim_copy_linear(void *dst, const void *src, size_t bytes)
{
    struct sim_copy c = {.dst = dst, .src = src, .width = bytes, .height = 1, .depth = 1,
                         .dpitch = bytes, .spitch = bytes, .dslice = bytes, .sslice = bytes};
    return c;
}

/* Bytes from the first to the last byte a side of the copy touches. */
static size_t sim_copy_span(const struct sim_copy *c, size_t pitch, size_t slice)
{
    return (c->depth - 1) * slice + (c->height - 1) * pitch + c->width;
}

/* Enqueues (or captures) a validated copy; classifies it for the cost model. */
static obs_hipError_t sim_copy_submit_locked(const struct sim_copy_route *route,
                                             struct sim_copy c, obs_hipMemcpyKind kind)
{
    struct sim_stream *s = sim_stream_get_locked(route->stream, route->per_thread_default);
    struct sim_node node;

    if (s == NULL)
        return obs_hipErrorInvalidHandle;
    if (kind == obs_hipMemcpyDefault)
        c.device_to_device = sim_device_range_locked(c.dst, sim_copy_span(&c, c.dpitch, c.dslice)) &&
                             sim_device_range_locked(c.src, sim_copy_span(&c, c.spitch, c.sslice));
    else
        c.device_to_device = kind == obs_hipMemcpyDeviceToDevice;
    memset(&node, 0, sizeof node);
    node.kind = SIM_NODE_COPY;
    node.copy = c;
    return sim_submit_locked(s, &node, route->synchronous);
}

static obs_hipError_t sim_copy_submit(const struct sim_copy_route *route, struct sim_copy c,
                                      obs_hipMemcpyKind kind)
{
    obs_hipError_t status;

    sim_clock_note_end(0);
    pthread_mutex_lock(&sim_lock);
    status = sim_copy_submit_locked(route, c, kind);
    pthread_mutex_unlock(&sim_lock);
    /* OBS_SIM_SYNC_WAIT=1: a synchronous copy returns when it is done. */
    if (route->synchronous && status == obs_hipSuccess)
        sim_clock_wait(sim_clock_last_end());
    return status;
}

static obs_hipError_t sim_memcpy(const struct sim_copy_route *route, void *dst, const void *src,
                                 size_t bytes, obs_hipMemcpyKind kind)
{
    if (!sim_kind_valid(kind))
        return obs_hipErrorInvalidMemcpyDirection;
    if (bytes == 0)
        return obs_hipSuccess;
    if (dst == NULL || src == NULL)
        return obs_hipErrorInvalidValue;
    return sim_copy_submit(route, sim_copy_linear(dst, src, bytes), kind);
}

static obs_hipError_t sim_memcpy_2d(const struct sim_copy_route *route, void *dst, size_t dpitch,
                                    const void *src, size_t spitch, size_t width, size_t height,
                                    obs_hipMemcpyKind kind)
{
    struct sim_copy c = {.dst = dst, .src = src, .width = width, .height = height, .depth = 1,
                         .dpitch = dpitch, .spitch = spitch};

    if (!sim_kind_valid(kind))
        return obs_hipErrorInvalidMemcpyDirection;
    if (width == 0 || height == 0)
        return obs_hipSuccess;
    if (dst == NULL || src == NULL)
        return obs_hipErrorInvalidValue;
    if (dpitch < width || spitch < width)
        return obs_hipErrorInvalidPitchValue;
    return sim_copy_submit(route, c, kind);
}

static long long sim_memcpy_3d_bytes(const obs_hipMemcpy3DParms *p)
{
    if (p == NULL)
        return SIM_NO_BYTES;
    return (long long)(p->extent.width * p->extent.height * p->extent.depth);
}

static obs_hipError_t sim_memcpy_3d(const struct sim_copy_route *route, const obs_hipMemcpy3DParms *p)
{
    struct sim_copy c;
    size_t dst_rows, src_rows;

    if (p == NULL)
        return obs_hipErrorInvalidValue;
    if (!sim_kind_valid(p->kind))
        return obs_hipErrorInvalidMemcpyDirection;
    if (p->srcArray != NULL || p->dstArray != NULL)
        return obs_hipErrorInvalidValue; /* the simulator has no arrays */
    if (p->extent.width == 0 || p->extent.height == 0 || p->extent.depth == 0)
        return obs_hipSuccess;
    if (p->dstPtr.ptr == NULL || p->srcPtr.ptr == NULL)
        return obs_hipErrorInvalidValue;
    if (p->dstPtr.pitch < p->extent.width + p->dstPos.x ||
        p->srcPtr.pitch < p->extent.width + p->srcPos.x)
        return obs_hipErrorInvalidPitchValue;
    /* ysize: rows per slice of the pitched allocation (0: the copy's height). */
    dst_rows = p->dstPtr.ysize != 0 ? p->dstPtr.ysize : p->extent.height;
    src_rows = p->srcPtr.ysize != 0 ? p->srcPtr.ysize : p->extent.height;
    c.dpitch = p->dstPtr.pitch;
    c.spitch = p->srcPtr.pitch;
    c.dslice = c.dpitch * dst_rows;
    c.sslice = c.spitch * src_rows;
    c.dst = (char *)p->dstPtr.ptr + p->dstPos.z * c.dslice + p->dstPos.y * c.dpitch + p->dstPos.x;
    c.src = (const char *)p->srcPtr.ptr + p->srcPos.z * c.sslice + p->srcPos.y * c.spitch +
            p->srcPos.x;
    c.width = p->extent.width;
    c.height = p->extent.height;
    c.depth = p->extent.depth;
    c.device_to_device = 0;
    return sim_copy_submit(route, c, p->kind);
}

static obs_hipError_t sim_memcpy_peer(const struct sim_copy_route *route, void *dst, int dst_device,
                                      const void *src, int src_device, size_t bytes)
{
    if (dst_device != 0 || src_device != 0)
        return obs_hipErrorInvalidDevice; /* one device */
    if (bytes == 0)
        return obs_hipSuccess;
    if (dst == NULL || src == NULL)
        return obs_hipErrorInvalidValue;
    /* Costed as a peer copy: the host-link rate. */
    return sim_copy_submit(route, sim_copy_linear(dst, src, bytes), obs_hipMemcpyHostToDevice);
}

/* to_symbol: copy into the symbol's storage at offset, else out of it. */
static obs_hipError_t sim_memcpy_symbol(const struct sim_copy_route *route, int to_symbol,
                                        void *buffer, const void *symbol, size_t bytes,
                                        size_t offset, obs_hipMemcpyKind kind)
{
    obs_hipError_t status;
    char *storage;
    size_t size = 0;

    if (!sim_kind_valid(kind))
        return obs_hipErrorInvalidMemcpyDirection;
    pthread_mutex_lock(&sim_lock);
    storage = symbol != NULL ? sim_symbol_storage_locked(symbol, &size) : NULL;
    if (storage == NULL)
        status = obs_hipErrorInvalidSymbol;
    else if (offset > size || bytes > size - offset)
        status = obs_hipErrorInvalidValue;
    else if (bytes == 0)
        status = obs_hipSuccess;
    else if (buffer == NULL)
        status = obs_hipErrorInvalidValue;
    else if (to_symbol)
        status = sim_copy_submit_locked(route, sim_copy_linear(storage + offset, buffer, bytes), kind);
    else
        status = sim_copy_submit_locked(route, sim_copy_linear(buffer, storage + offset, bytes), kind);
    pthread_mutex_unlock(&sim_lock);
    return status;
}

/* ---- entry points ---- */

#define SIM_COPY_DONE(api, stream, bytes, status) \
    sim_finish(api, SIM_KIND_MEMCPY, NULL, stream, (long long)(bytes), status)

obs_hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpy", NULL, sizeBytes,
                         sim_memcpy(&sim_sync_legacy, dst, src, sizeBytes, kind));
}

obs_hipError_t hipMemcpy_spt(void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpy_spt", NULL, sizeBytes,
                         sim_memcpy(&sim_sync_per_thread, dst, src, sizeBytes, kind));
}

obs_hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, obs_hipMemcpyKind kind,
                              obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyAsync", &stream, sizeBytes,
                         sim_memcpy(&route, dst, src, sizeBytes, kind));
}

obs_hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes,
                                  obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 1);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyAsync_spt", &stream, sizeBytes,
                         sim_memcpy(&route, dst, src, sizeBytes, kind));
}

obs_hipError_t hipMemcpyHtoD(obs_hipDeviceptr_t dst, void *src, size_t sizeBytes)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyHtoD", NULL, sizeBytes,
                         sim_memcpy(&sim_sync_legacy, dst, src, sizeBytes, obs_hipMemcpyHostToDevice));
}

obs_hipError_t hipMemcpyDtoH(void *dst, obs_hipDeviceptr_t src, size_t sizeBytes)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyDtoH", NULL, sizeBytes,
                         sim_memcpy(&sim_sync_legacy, dst, src, sizeBytes, obs_hipMemcpyDeviceToHost));
}

obs_hipError_t hipMemcpyDtoD(obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src, size_t sizeBytes)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyDtoD", NULL, sizeBytes,
                         sim_memcpy(&sim_sync_legacy, dst, src, sizeBytes,
                                    obs_hipMemcpyDeviceToDevice));
}

obs_hipError_t hipMemcpyHtoDAsync(obs_hipDeviceptr_t dst, void *src, size_t sizeBytes,
                                  obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyHtoDAsync", &stream, sizeBytes,
                         sim_memcpy(&route, dst, src, sizeBytes, obs_hipMemcpyHostToDevice));
}

obs_hipError_t hipMemcpyDtoHAsync(void *dst, obs_hipDeviceptr_t src, size_t sizeBytes,
                                  obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyDtoHAsync", &stream, sizeBytes,
                         sim_memcpy(&route, dst, src, sizeBytes, obs_hipMemcpyDeviceToHost));
}

obs_hipError_t hipMemcpyDtoDAsync(obs_hipDeviceptr_t dst, obs_hipDeviceptr_t src, size_t sizeBytes,
                                  obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyDtoDAsync", &stream, sizeBytes,
                         sim_memcpy(&route, dst, src, sizeBytes, obs_hipMemcpyDeviceToDevice));
}

obs_hipError_t hipMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpy2D", NULL, width * height,
                         sim_memcpy_2d(&sim_sync_legacy, dst, dpitch, src, spitch, width, height,
                                       kind));
}

obs_hipError_t hipMemcpy2D_spt(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t height, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpy2D_spt", NULL, width * height,
                         sim_memcpy_2d(&sim_sync_per_thread, dst, dpitch, src, spitch, width,
                                       height, kind));
}

obs_hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                                size_t width, size_t height, obs_hipMemcpyKind kind,
                                obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpy2DAsync", &stream, width * height,
                         sim_memcpy_2d(&route, dst, dpitch, src, spitch, width, height, kind));
}

obs_hipError_t hipMemcpy3D(const obs_hipMemcpy3DParms *p)
{
    sim_enter();
    return sim_finish("hipMemcpy3D", SIM_KIND_MEMCPY, NULL, NULL, sim_memcpy_3d_bytes(p),
                      sim_memcpy_3d(&sim_sync_legacy, p));
}

obs_hipError_t hipMemcpy3D_spt(const obs_hipMemcpy3DParms *p)
{
    sim_enter();
    return sim_finish("hipMemcpy3D_spt", SIM_KIND_MEMCPY, NULL, NULL, sim_memcpy_3d_bytes(p),
                      sim_memcpy_3d(&sim_sync_per_thread, p));
}

obs_hipError_t hipMemcpy3DAsync(const obs_hipMemcpy3DParms *p, obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return sim_finish("hipMemcpy3DAsync", SIM_KIND_MEMCPY, NULL, &stream, sim_memcpy_3d_bytes(p),
                      sim_memcpy_3d(&route, p));
}

obs_hipError_t hipMemcpyPeer(void *dst, int dstDeviceId, const void *src, int srcDeviceId,
                             size_t sizeBytes)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyPeer", NULL, sizeBytes,
                         sim_memcpy_peer(&sim_sync_legacy, dst, dstDeviceId, src, srcDeviceId,
                                         sizeBytes));
}

obs_hipError_t hipMemcpyPeerAsync(void *dst, int dstDeviceId, const void *src, int srcDevice,
                                  size_t sizeBytes, obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyPeerAsync", &stream, sizeBytes,
                         sim_memcpy_peer(&route, dst, dstDeviceId, src, srcDevice, sizeBytes));
}

obs_hipError_t hipMemcpyToSymbol(const void *symbol, const void *src, size_t sizeBytes,
                                 size_t offset, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyToSymbol", NULL, sizeBytes,
                         sim_memcpy_symbol(&sim_sync_legacy, 1, (void *)src, symbol, sizeBytes,
                                           offset, kind));
}

obs_hipError_t hipMemcpyToSymbol_spt(const void *symbol, const void *src, size_t sizeBytes,
                                     size_t offset, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyToSymbol_spt", NULL, sizeBytes,
                         sim_memcpy_symbol(&sim_sync_per_thread, 1, (void *)src, symbol, sizeBytes,
                                           offset, kind));
}

obs_hipError_t hipMemcpyFromSymbol(void *dst, const void *symbol, size_t sizeBytes, size_t offset,
                                   obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyFromSymbol", NULL, sizeBytes,
                         sim_memcpy_symbol(&sim_sync_legacy, 0, dst, symbol, sizeBytes, offset,
                                           kind));
}

obs_hipError_t hipMemcpyFromSymbol_spt(void *dst, const void *symbol, size_t sizeBytes,
                                       size_t offset, obs_hipMemcpyKind kind)
{
    sim_enter();
    return SIM_COPY_DONE("hipMemcpyFromSymbol_spt", NULL, sizeBytes,
                         sim_memcpy_symbol(&sim_sync_per_thread, 0, dst, symbol, sizeBytes, offset,
                                           kind));
}

obs_hipError_t hipMemcpyToSymbolAsync(const void *symbol, const void *src, size_t sizeBytes,
                                      size_t offset, obs_hipMemcpyKind kind, obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyToSymbolAsync", &stream, sizeBytes,
                         sim_memcpy_symbol(&route, 1, (void *)src, symbol, sizeBytes, offset, kind));
}

obs_hipError_t hipMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t sizeBytes,
                                        size_t offset, obs_hipMemcpyKind kind,
                                        obs_hipStream_t stream)
{
    struct sim_copy_route route = sim_async(stream, 0);

    sim_enter();
    return SIM_COPY_DONE("hipMemcpyFromSymbolAsync", &stream, sizeBytes,
                         sim_memcpy_symbol(&route, 0, dst, symbol, sizeBytes, offset, kind));
}
