/* Memory pools and stream-ordered allocation in the simulated driver:
 * NCCL 2.30 makes a pool for each communicator (cudaMemPoolCreate, its
 * release threshold raised with cudaMemPoolSetAttribute) and allocates its
 * work buffers from it with cudaMallocAsync / cudaMallocFromPoolAsync on
 * its own stream; before these were simulated its ncclCommInitRank failed
 * with "operation not supported".
 *
 *   cuMemPoolCreate / Destroy     a pool: its properties, attributes and
 *                                 the allocations it holds
 *   cuMemPoolSetAttribute / Get   the reuse switches and release threshold
 *                                 as set; reserved and used memory (current
 *                                 and high water marks) as allocated
 *   cuMemPoolTrimTo               nothing to give back: memory is released
 *                                 when freed
 *   cuMemPoolSetAccess / Get      each device reads and writes its own
 *                                 pools' memory (no peer access)
 *   cuDeviceGetDefaultMemPool     one default pool per device, the
 *   cuDeviceGet/SetMemPool        device's current pool until another is set
 *   cuMemAllocAsync,              device memory (cudrv_sim_memory.c) made
 *   cuMemAllocFromPoolAsync,      at once: streams run their work when it
 *   cuMemFreeAsync (+ _ptsz)      is enqueued here; not inside a capture
 *                                 (graphs get no allocation nodes here)
 * Pools cannot be shared between processes (no export, device attribute
 * 119 is 0). */
#include "cudrv_sim.h"
#include "sim_gpus.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* cuda.h's CUmemPoolProps (88 bytes). */
struct pool_props {
    int alloc_type;   /* CU_MEM_ALLOCATION_TYPE_PINNED: 1 */
    int handle_types; /* CU_MEM_HANDLE_TYPE_NONE 0, POSIX_FILE_DESCRIPTOR 1 */
    struct {
        int type; /* CU_MEM_LOCATION_TYPE_DEVICE: 1 */
        int id;
    } location;
    void *win32_security_attributes;
    size_t max_size;
    unsigned short usage;
    unsigned char reserved[54];
};
_Static_assert(sizeof(struct pool_props) == 88, "CUmemPoolProps is 88 bytes");

/* CUmemPool_attribute. */
enum {
    ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
    ATTR_REUSE_ALLOW_OPPORTUNISTIC,
    ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
    ATTR_RELEASE_THRESHOLD,
    ATTR_RESERVED_MEM_CURRENT,
    ATTR_RESERVED_MEM_HIGH,
    ATTR_USED_MEM_CURRENT,
    ATTR_USED_MEM_HIGH,
    ATTR_ALLOCATION_TYPE,
    ATTR_EXPORTED_HANDLE_TYPES,
    ATTR_LOCATION_ID,
    ATTR_LOCATION_TYPE,
    ATTR_MAX_POOL_SIZE
};

#define LOCATION_DEVICE 1
#define ALLOCATION_PINNED 1
#define ACCESS_READWRITE 3
#define ERROR_STREAM_CAPTURE_UNSUPPORTED 900

struct pool {
    struct pool_props props;
    int reuse[3]; /* attributes 1..3 */
    uint64_t release_threshold;
    uint64_t used, used_high;
    enum { POOL_CREATED, POOL_DEFAULT, POOL_DESTROYED } state; /* destroyed: its memory is still out */
    struct pool *next;
};

/* A stream-ordered allocation, until cuMemFreeAsync. */
struct pool_alloc {
    uintptr_t p;
    size_t size;
    struct pool *pool;
    struct pool_alloc *next;
};

static struct pool default_pools[SIM_GPUS_MAX];
static struct pool *current_pools[SIM_GPUS_MAX]; /* NULL: the default */
static struct pool *pools;                       /* created ones */
static struct pool_alloc *pool_allocs;

static obs_CUresult finish(const char *api, enum drv_kind kind, const void *stream, long long bytes,
                           obs_CUresult err)
{
    return drv_finish(api, kind, NULL, stream, bytes, err);
}

/* Under drv_lock. A device's default pool, made on first use. */
static struct pool *default_pool(obs_CUdevice dev)
{
    struct pool *p = &default_pools[dev];
    if (p->state != POOL_DEFAULT) {
        p->state = POOL_DEFAULT;
        p->props.alloc_type = ALLOCATION_PINNED;
        p->props.location.type = LOCATION_DEVICE;
        p->props.location.id = dev;
        p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
    }
    return p;
}

/* Under drv_lock. A pool handle we made (a device's default included). */
static struct pool *pool_lookup(void *handle)
{
    struct pool *p;
    for (int d = 0; d < SIM_GPUS_MAX; d++)
        if (handle == &default_pools[d] && default_pools[d].state == POOL_DEFAULT)
            return &default_pools[d];
    for (p = pools; p; p = p->next)
        if ((void *)p == handle)
            return p;
    return NULL;
}

DRV_EXPORT obs_CUresult cuMemPoolCreate(void **pool, const void *props_arg)
{
    const struct pool_props *props = props_arg;
    struct pool *p = NULL;
    obs_CUresult err;
    drv_enter();
    err = pool && props && props->alloc_type == ALLOCATION_PINNED && props->location.type == LOCATION_DEVICE &&
                  drv_valid_device(props->location.id) && (props->handle_types & ~1) == 0
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && (p = calloc(1, sizeof *p)) == NULL)
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    if (err == OBS_CUDA_SUCCESS) {
        p->props = *props;
        p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
        pthread_mutex_lock(&drv_lock);
        p->next = pools;
        pools = p;
        pthread_mutex_unlock(&drv_lock);
        *pool = p;
    }
    return finish("cuMemPoolCreate", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Memory still allocated from a destroyed pool stays valid until it is
 * freed (as cuda.h says), so its allocations keep a pointer: a destroyed
 * pool is unlinked and kept. */
DRV_EXPORT obs_CUresult cuMemPoolDestroy(void *pool)
{
    struct pool **link;
    obs_CUresult err;
    drv_enter();
    err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS) {
        err = OBS_CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_lock(&drv_lock);
        for (link = &pools; *link; link = &(*link)->next)
            if ((void *)*link == pool) {
                struct pool *p = *link;
                int held = 0;
                *link = p->next;
                for (int d = 0; d < SIM_GPUS_MAX; d++)
                    if (current_pools[d] == p)
                        current_pools[d] = NULL;
                for (const struct pool_alloc *a = pool_allocs; a; a = a->next)
                    held |= a->pool == p;
                if (!held)
                    free(p);
                else
                    p->state = POOL_DESTROYED;
                err = OBS_CUDA_SUCCESS;
                break;
            }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemPoolDestroy", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

static obs_CUresult pool_attribute(void *handle, int attr, void *value, int set)
{
    struct pool *p;
    obs_CUresult err = value ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    p = pool_lookup(handle);
    if (p == NULL)
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    else if (attr >= ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES && attr <= ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) {
        if (set)
            p->reuse[attr - 1] = *(const int *)value != 0;
        else
            *(int *)value = p->reuse[attr - 1];
    } else if (attr == ATTR_RELEASE_THRESHOLD) {
        if (set)
            p->release_threshold = *(const uint64_t *)value;
        else
            *(uint64_t *)value = p->release_threshold;
    } else if (attr >= ATTR_RESERVED_MEM_CURRENT && attr <= ATTR_USED_MEM_HIGH) {
        /* reserved = used: freed memory goes back at once */
        int high = attr == ATTR_RESERVED_MEM_HIGH || attr == ATTR_USED_MEM_HIGH;
        if (set && (!high || *(const uint64_t *)value != 0))
            err = OBS_CUDA_ERROR_INVALID_VALUE; /* only the high marks may be reset, to 0 */
        else if (set)
            p->used_high = p->used;
        else
            *(uint64_t *)value = high ? p->used_high : p->used;
    } else if (attr >= ATTR_ALLOCATION_TYPE && attr <= ATTR_MAX_POOL_SIZE && !set) {
        switch (attr) {
        case ATTR_ALLOCATION_TYPE:
            *(int *)value = p->props.alloc_type;
            break;
        case ATTR_EXPORTED_HANDLE_TYPES:
            *(int *)value = p->props.handle_types;
            break;
        case ATTR_LOCATION_ID:
            *(int *)value = p->props.location.id;
            break;
        case ATTR_LOCATION_TYPE:
            *(int *)value = p->props.location.type;
            break;
        default:
            *(size_t *)value = p->props.max_size;
        }
    } else {
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuMemPoolSetAttribute(void *pool, int attr, void *value)
{
    drv_enter();
    return finish("cuMemPoolSetAttribute", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES,
                  pool_attribute(pool, attr, value, 1));
}

DRV_EXPORT obs_CUresult cuMemPoolGetAttribute(void *pool, int attr, void *value)
{
    drv_enter();
    return finish("cuMemPoolGetAttribute", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES,
                  pool_attribute(pool, attr, value, 0));
}

DRV_EXPORT obs_CUresult cuMemPoolTrimTo(void *pool, size_t minBytesToKeep)
{
    obs_CUresult err;
    drv_enter();
    (void)minBytesToKeep;
    err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        if (pool_lookup(pool) == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemPoolTrimTo", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* CUmemAccessDesc: a location (type, id) and flags. The pool's own device
 * has read-write access; another device none (no peer access here). */
DRV_EXPORT obs_CUresult cuMemPoolSetAccess(void *pool, const void *map, size_t count)
{
    const int *desc = map;
    obs_CUresult err;
    drv_enter();
    err = map || count == 0 ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        struct pool *p;
        pthread_mutex_lock(&drv_lock);
        p = pool_lookup(pool);
        for (size_t i = 0; p && err == OBS_CUDA_SUCCESS && i < count; i++, desc += 3)
            if (desc[0] != LOCATION_DEVICE || !drv_valid_device(desc[1]))
                err = OBS_CUDA_ERROR_INVALID_VALUE;
            else if (desc[1] != p->props.location.id && desc[2] != 0)
                err = OBS_CUDA_ERROR_INVALID_DEVICE;
        if (p == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemPoolSetAccess", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemPoolGetAccess(int *flags, void *pool, const void *location)
{
    const int *l = location;
    obs_CUresult err;
    drv_enter();
    err = flags && l && l[0] == LOCATION_DEVICE && drv_valid_device(l[1]) ? drv_need_init()
                                                                          : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        struct pool *p;
        pthread_mutex_lock(&drv_lock);
        p = pool_lookup(pool);
        if (p == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            *flags = l[1] == p->props.location.id ? ACCESS_READWRITE : 0;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemPoolGetAccess", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* A device's default pool, or its current one (the default unless set). */
static obs_CUresult device_pool(const char *api, void **pool_out, obs_CUdevice dev, int current)
{
    obs_CUresult err = pool_out ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        *pool_out = current && current_pools[dev] ? current_pools[dev] : default_pool(dev);
        pthread_mutex_unlock(&drv_lock);
    }
    return finish(api, DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGetDefaultMemPool(void **pool_out, obs_CUdevice dev)
{
    drv_enter();
    return device_pool("cuDeviceGetDefaultMemPool", pool_out, dev, 0);
}

DRV_EXPORT obs_CUresult cuDeviceGetMemPool(void **pool_out, obs_CUdevice dev)
{
    drv_enter();
    return device_pool("cuDeviceGetMemPool", pool_out, dev, 1);
}

DRV_EXPORT obs_CUresult cuDeviceSetMemPool(obs_CUdevice dev, void *pool)
{
    obs_CUresult err;
    drv_enter();
    err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS) {
        struct pool *p;
        pthread_mutex_lock(&drv_lock);
        p = pool_lookup(pool);
        if (p == NULL || p->props.location.id != dev)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            current_pools[dev] = p->state == POOL_DEFAULT ? NULL : p;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuDeviceSetMemPool", DRV_KIND_OTHER, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Under drv_lock. The stream of a stream-ordered allocation or free: one
 * that exists, and is not capturing (graphs get no allocation nodes here). */
static obs_CUresult ordered_stream(obs_CUstream stream, int per_thread)
{
    struct drv_stream *s;
    obs_CUresult err = drv_stream_lookup(stream, per_thread, &s);
    if (err == OBS_CUDA_SUCCESS && drv_stream_capturing(s))
        err = ERROR_STREAM_CAPTURE_UNSUPPORTED;
    return err;
}

/* An allocation from pool (NULL: the current pool of the stream's
 * device) on stream, made now. */
static obs_CUresult alloc_async(obs_CUdeviceptr *dptr, size_t size, void *pool, obs_CUstream stream,
                                int per_thread)
{
    struct pool *p = NULL;
    struct pool_alloc *a;
    obs_CUresult err = dptr && size > 0 ? drv_need_context_of(DRV_OBJ(stream)) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = ordered_stream(stream, per_thread);
    if (err == OBS_CUDA_SUCCESS) {
        obs_CUdevice dev = drv_current_device();
        p = pool ? pool_lookup(pool) : current_pools[dev] ? current_pools[dev] : default_pool(dev);
        if (p == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err != OBS_CUDA_SUCCESS)
        return err;
    if ((a = calloc(1, sizeof *a)) == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    err = drv_mem_alloc(dptr, size);
    if (err != OBS_CUDA_SUCCESS) {
        free(a);
        return err;
    }
    a->p = (uintptr_t)*dptr;
    a->size = size;
    a->pool = p;
    pthread_mutex_lock(&drv_lock);
    a->next = pool_allocs;
    pool_allocs = a;
    p->used += size;
    if (p->used > p->used_high)
        p->used_high = p->used;
    pthread_mutex_unlock(&drv_lock);
    return OBS_CUDA_SUCCESS;
}

static obs_CUresult free_async(obs_CUdeviceptr dptr, obs_CUstream stream, int per_thread, long long *bytes)
{
    struct pool_alloc **link, *a = NULL;
    obs_CUresult err = drv_need_context_of(DRV_OBJ(stream));
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    err = ordered_stream(stream, per_thread);
    for (link = &pool_allocs; err == OBS_CUDA_SUCCESS && *link; link = &(*link)->next)
        if ((*link)->p == (uintptr_t)dptr) {
            a = *link;
            *link = a->next;
            a->pool->used -= a->size;
            break;
        }
    if (err == OBS_CUDA_SUCCESS && a == NULL)
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (a != NULL && a->pool->state == POOL_DESTROYED) { /* its destroyed pool's last memory? */
        int held = 0;
        for (const struct pool_alloc *b = pool_allocs; b; b = b->next)
            held |= b->pool == a->pool;
        if (!held)
            free(a->pool);
    }
    pthread_mutex_unlock(&drv_lock);
    if (a != NULL) {
        *bytes = (long long)a->size;
        drv_mem_release(dptr);
        free(a);
    }
    return err;
}

#define ALLOC_ASYNC(api, per_thread)                                                                   \
    DRV_EXPORT obs_CUresult api(obs_CUdeviceptr *dptr, size_t bytesize, obs_CUstream hStream)         \
    {                                                                                                  \
        drv_enter();                                                                                   \
        return finish(#api, DRV_KIND_ALLOC, hStream, (long long)bytesize,                              \
                      alloc_async(dptr, bytesize, NULL, hStream, per_thread));                         \
    }
#define ALLOC_FROM_POOL_ASYNC(api, per_thread)                                                         \
    DRV_EXPORT obs_CUresult api(obs_CUdeviceptr *dptr, size_t bytesize, void *pool, obs_CUstream hStream) \
    {                                                                                                  \
        drv_enter();                                                                                   \
        return finish(#api, DRV_KIND_ALLOC, hStream, (long long)bytesize,                              \
                      alloc_async(dptr, bytesize, pool, hStream, per_thread));                         \
    }
#define FREE_ASYNC(api, per_thread)                                                                    \
    DRV_EXPORT obs_CUresult api(obs_CUdeviceptr dptr, obs_CUstream hStream)                           \
    {                                                                                                  \
        long long bytes = DRV_NO_BYTES;                                                                \
        obs_CUresult err;                                                                              \
        drv_enter();                                                                                   \
        err = free_async(dptr, hStream, per_thread, &bytes);                                          \
        return finish(#api, DRV_KIND_ALLOC, hStream, bytes, err);                                      \
    }

ALLOC_ASYNC(cuMemAllocAsync, 0)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, 1)
ALLOC_FROM_POOL_ASYNC(cuMemAllocFromPoolAsync, 0)
ALLOC_FROM_POOL_ASYNC(cuMemAllocFromPoolAsync_ptsz, 1)
FREE_ASYNC(cuMemFreeAsync, 0)
FREE_ASYNC(cuMemFreeAsync_ptsz, 1)
