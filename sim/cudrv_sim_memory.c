/* Memory the simulated driver hands out, and what it answers about a
 * pointer: device allocations (cuMemAlloc), page-locked host memory
 * (cuMemHostAlloc, cuMemAllocHost, cuMemHostRegister), the ranges the
 * virtual memory API maps (cudrv_sim_vmm.c registers them here), pointer
 * attributes and address ranges.
 *
 * Every kind of memory is plain host memory of this process (unified
 * addressing: a pointer means the same on host and "device"). The table
 * of ranges is a list under drv_lock: a program has tens to hundreds of
 * them (PyTorch's caching allocator asks for large blocks and keeps them). */
#include "cudrv_sim.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRV_ALLOC_ALIGNMENT 256u
#define DRV_HOST_ALIGNMENT 4096u

static struct drv_range *drv_ranges;
static unsigned long long drv_next_buffer_id = 1;

struct drv_range *drv_range_add(uintptr_t base, size_t size, enum drv_mem_kind kind)
{
    struct drv_range *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->base = base;
    r->size = size;
    r->kind = kind;
    r->device = drv_current_device();
    r->id = drv_next_buffer_id++;
    r->next = drv_ranges;
    drv_ranges = r;
    return r;
}

struct drv_range *drv_range_find(uintptr_t p)
{
    struct drv_range *r;
    for (r = drv_ranges; r; r = r->next)
        if (p >= r->base && p - r->base < r->size)
            return r;
    return NULL;
}

void drv_range_drop(struct drv_range *r)
{
    struct drv_range **link;
    for (link = &drv_ranges; *link; link = &(*link)->next)
        if (*link == r) {
            *link = r->next;
            free(r);
            return;
        }
}

static int is_device_kind(enum drv_mem_kind k)
{
    return k == DRV_MEM_DEVICE || k == DRV_MEM_MAPPED;
}

/* [p, p+len) lies in device memory: one allocation, or mappings that
 * follow each other (the virtual memory API maps a reservation piece by
 * piece, and a tensor may span two pieces). */
int drv_is_device_range(obs_CUdeviceptr p, size_t len)
{
    uintptr_t q = (uintptr_t)p, end;
    if (len == 0)
        len = 1;
    if (q + len < q)
        return 0;
    end = q + len;
    while (q < end) {
        const struct drv_range *r = drv_range_find(q);
        if (r == NULL || !is_device_kind(r->kind))
            return 0;
        q = r->base + r->size;
    }
    return 1;
}

/* ---- device memory ----------------------------------------------------------------- */

static obs_CUresult mem_alloc(obs_CUdeviceptr *out, size_t size)
{
    void *base = NULL;
    obs_CUresult err = out && size > 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    /* 256-byte aligned, as the real driver's (cuBLASLt refuses a workspace
     * that is not); zeroed so that runs are reproducible. */
    if (posix_memalign(&base, DRV_ALLOC_ALIGNMENT, size) != 0)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    memset(base, 0, size);
    pthread_mutex_lock(&drv_lock);
    if (drv_range_add((uintptr_t)base, size, DRV_MEM_DEVICE) == NULL)
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&drv_lock);
    if (err != OBS_CUDA_SUCCESS) {
        free(base);
        return err;
    }
    *out = (obs_CUdeviceptr)(uintptr_t)base;
    return OBS_CUDA_SUCCESS;
}

obs_CUresult drv_mem_alloc(obs_CUdeviceptr *out, size_t size)
{
    return mem_alloc(out, size);
}

DRV_EXPORT obs_CUresult cuMemAlloc_v2(obs_CUdeviceptr *dptr, size_t bytesize)
{
    drv_enter();
    return drv_finish("cuMemAlloc_v2", DRV_KIND_ALLOC, NULL, DRV_NO_STREAM, (long long)bytesize,
                      mem_alloc(dptr, bytesize));
}

/* Free the range of this kind that starts at p. */
static obs_CUresult range_free(uintptr_t p, enum drv_mem_kind kind, long long *size)
{
    struct drv_range *r;
    obs_CUresult err = OBS_CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&drv_lock);
    r = drv_range_find(p);
    if (r != NULL && r->base == p && r->kind == kind) {
        *size = (long long)r->size;
        drv_range_drop(r);
        err = OBS_CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS && kind != DRV_MEM_HOST_REGISTERED)
        free((void *)p);
    return err;
}

static obs_CUresult mem_free(obs_CUdeviceptr p, long long *size)
{
    obs_CUresult err = drv_need_context();
    if (err != OBS_CUDA_SUCCESS || p == 0) /* freeing 0 does nothing: cudart's cudaFree(0) probe */
        return err;
    return range_free((uintptr_t)p, DRV_MEM_DEVICE, size);
}

void drv_mem_release(obs_CUdeviceptr p)
{
    long long size;
    mem_free(p, &size);
}

DRV_EXPORT obs_CUresult cuMemFree_v2(obs_CUdeviceptr dptr)
{
    long long size = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = mem_free(dptr, &size);
    return drv_finish("cuMemFree_v2", DRV_KIND_ALLOC, NULL, DRV_NO_STREAM, size, err);
}

/* ---- page-locked host memory ----------------------------------------------------------- */

/* CU_MEMHOSTALLOC_PORTABLE | DEVICEMAP | WRITECOMBINED */
#define HOST_ALLOC_FLAGS 0x7u
/* CU_MEMHOSTREGISTER_PORTABLE | DEVICEMAP | IOMEMORY | READ_ONLY */
#define HOST_REGISTER_FLAGS 0xfu

static obs_CUresult host_alloc(void **pp, size_t size, unsigned flags)
{
    void *base = NULL;
    struct drv_range *r;
    obs_CUresult err = pp && (flags & ~HOST_ALLOC_FLAGS) == 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    if (size == 0) { /* as the real driver: success, nothing allocated */
        *pp = NULL;
        return OBS_CUDA_SUCCESS;
    }
    if (posix_memalign(&base, DRV_HOST_ALIGNMENT, size) != 0)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    memset(base, 0, size);
    pthread_mutex_lock(&drv_lock);
    r = drv_range_add((uintptr_t)base, size, DRV_MEM_HOST);
    if (r != NULL)
        r->flags = flags;
    pthread_mutex_unlock(&drv_lock);
    if (r == NULL) {
        free(base);
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pp = base;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    drv_enter();
    return drv_finish("cuMemHostAlloc", DRV_KIND_ALLOC, NULL, DRV_NO_STREAM, (long long)bytesize,
                      host_alloc(pp, bytesize, Flags));
}

DRV_EXPORT obs_CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    drv_enter();
    return drv_finish("cuMemAllocHost_v2", DRV_KIND_ALLOC, NULL, DRV_NO_STREAM, (long long)bytesize,
                      host_alloc(pp, bytesize, 0));
}

DRV_EXPORT obs_CUresult cuMemFreeHost(void *p)
{
    long long size = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = drv_need_context();
    if (err == OBS_CUDA_SUCCESS)
        err = range_free((uintptr_t)p, DRV_MEM_HOST, &size);
    return drv_finish("cuMemFreeHost", DRV_KIND_ALLOC, NULL, DRV_NO_STREAM, size, err);
}

DRV_EXPORT obs_CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    struct drv_range *r;
    obs_CUresult err;
    drv_enter();
    err = p && bytesize && (Flags & ~HOST_REGISTER_FLAGS) == 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        if (drv_range_find((uintptr_t)p) || drv_range_find((uintptr_t)p + bytesize - 1))
            err = 712; /* CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED */
        else if ((r = drv_range_add((uintptr_t)p, bytesize, DRV_MEM_HOST_REGISTERED)) == NULL)
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        else
            r->flags = Flags;
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuMemHostRegister_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, (long long)bytesize, err);
}

DRV_EXPORT obs_CUresult cuMemHostUnregister(void *p)
{
    long long size = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = p ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && range_free((uintptr_t)p, DRV_MEM_HOST_REGISTERED, &size) != OBS_CUDA_SUCCESS)
        err = 713; /* CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED */
    return drv_finish("cuMemHostUnregister", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, size, err);
}

static int is_host_kind(enum drv_mem_kind k)
{
    return k == DRV_MEM_HOST || k == DRV_MEM_HOST_REGISTERED;
}

DRV_EXPORT obs_CUresult cuMemHostGetDevicePointer_v2(obs_CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    const struct drv_range *r;
    obs_CUresult err;
    drv_enter();
    err = pdptr && Flags == 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        r = drv_range_find((uintptr_t)p);
        if (r == NULL || !is_host_kind(r->kind))
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            *pdptr = (obs_CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuMemHostGetDevicePointer_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    const struct drv_range *r;
    obs_CUresult err;
    drv_enter();
    err = pFlags ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        r = drv_range_find((uintptr_t)p);
        if (r == NULL || r->kind != DRV_MEM_HOST)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            *pFlags = r->flags;
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuMemHostGetFlags", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* ---- pointer attributes ------------------------------------------------------------------ */

enum {
    ATTR_CONTEXT = 1, ATTR_MEMORY_TYPE, ATTR_DEVICE_POINTER, ATTR_HOST_POINTER, ATTR_P2P_TOKENS,
    ATTR_SYNC_MEMOPS, ATTR_BUFFER_ID, ATTR_IS_MANAGED, ATTR_DEVICE_ORDINAL, ATTR_IS_LEGACY_IPC_CAPABLE,
    ATTR_RANGE_START_ADDR, ATTR_RANGE_SIZE, ATTR_MAPPED, ATTR_ALLOWED_HANDLE_TYPES, ATTR_IS_RDMA_CAPABLE,
    ATTR_ACCESS_FLAGS, ATTR_MEMPOOL_HANDLE, ATTR_MAPPING_SIZE, ATTR_MAPPING_BASE_ADDR, ATTR_MEMORY_BLOCK_ID,
    ATTR_IS_HW_DECOMPRESS_CAPABLE
};

#define MEMORYTYPE_HOST 1u
#define MEMORYTYPE_DEVICE 2u

/* One attribute of the memory at p (r: its range, NULL when p is in none).
 * The answers' sizes are cuda.h's: booleans are C bools, ids and handles
 * 64 bits, the memory type and ordinal 32. A pointer in no range: the
 * defaults cuPointerGetAttributes gives (zeros), and 1 (invalid value) for
 * cuPointerGetAttribute. */
static obs_CUresult pointer_attribute(void *data, int attribute, uintptr_t p, const struct drv_range *r)
{
    int device = r && is_device_kind(r->kind) && !(r->kind == DRV_MEM_MAPPED && drv_vmm_host_located(r->owner));
    switch (attribute) {
    case ATTR_CONTEXT:
        *(obs_CUcontext *)data = r ? drv_primary_context(r->device) : NULL;
        break;
    case ATTR_MEMORY_TYPE:
        *(unsigned *)data = r ? (device ? MEMORYTYPE_DEVICE : MEMORYTYPE_HOST) : 0;
        break;
    case ATTR_DEVICE_POINTER:
        *(obs_CUdeviceptr *)data = r ? (obs_CUdeviceptr)p : 0;
        break;
    case ATTR_HOST_POINTER:
        /* device memory has no host mapping a program may use */
        *(void **)data = r && !device ? (void *)p : NULL;
        break;
    case ATTR_P2P_TOKENS:
        memset(data, 0, 2 * sizeof(unsigned long long)); /* CUDA_POINTER_ATTRIBUTE_P2P_TOKENS: none */
        return OBS_CUDA_ERROR_NOT_SUPPORTED;
    case ATTR_IS_LEGACY_IPC_CAPABLE:
        /* What NVIDIA's driver says of cuMemAlloc memory (not of cuMem
         * mappings or host memory): NCCL's ncclCommRegister tells the two
         * kinds apart by it, and takes memory that is neither for cuMem's
         * (then fails on cuMemRetainAllocationHandle). The IPC entry points
         * themselves are stubs: with no peer access nothing calls them. */
        *(bool *)data = r != NULL && r->kind == DRV_MEM_DEVICE;
        break;
    case ATTR_SYNC_MEMOPS:
    case ATTR_IS_MANAGED:
    case ATTR_IS_RDMA_CAPABLE:
    case ATTR_IS_HW_DECOMPRESS_CAPABLE:
        *(bool *)data = false; /* no managed memory, IPC, RDMA or decompression here */
        break;
    case ATTR_MAPPED:
        *(bool *)data = r != NULL;
        break;
    case ATTR_BUFFER_ID:
    case ATTR_MEMORY_BLOCK_ID:
        *(unsigned long long *)data = r ? r->id : 0;
        break;
    case ATTR_DEVICE_ORDINAL:
        *(int *)data = r ? r->device : -2; /* -2: cudaInvalidDeviceId */
        break;
    case ATTR_RANGE_START_ADDR:
    case ATTR_MAPPING_BASE_ADDR:
        *(obs_CUdeviceptr *)data = r ? (obs_CUdeviceptr)r->base : 0;
        break;
    case ATTR_RANGE_SIZE:
    case ATTR_MAPPING_SIZE:
        *(size_t *)data = r ? r->size : 0;
        break;
    case ATTR_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = r && r->kind == DRV_MEM_MAPPED ? r->flags >> 8 : 0;
        break;
    case ATTR_ACCESS_FLAGS:
        *(unsigned *)data = r ? (r->kind == DRV_MEM_MAPPED ? (r->flags & 0xffu) : 3u) : 0;
        break;
    case ATTR_MEMPOOL_HANDLE:
        *(void **)data = NULL;
        break;
    default:
        return OBS_CUDA_ERROR_INVALID_VALUE;
    }
    return r || attribute == ATTR_MAPPED ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE;
}

DRV_EXPORT obs_CUresult cuPointerGetAttribute(void *data, int attribute, obs_CUdeviceptr ptr)
{
    char name[16];
    obs_CUresult err;
    drv_enter();
    snprintf(name, sizeof name, "%d", attribute);
    err = data ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        err = pointer_attribute(data, attribute, (uintptr_t)ptr, drv_range_find((uintptr_t)ptr));
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuPointerGetAttribute", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Several attributes at once; a pointer the driver does not know gets the
 * defaults and success (cuda.h). The name column lists the attributes. */
DRV_EXPORT obs_CUresult cuPointerGetAttributes(unsigned int numAttributes, int *attributes, void **data,
                                               obs_CUdeviceptr ptr)
{
    char name[128] = "";
    size_t len = 0;
    unsigned i;
    obs_CUresult err;
    drv_enter();
    err = numAttributes && attributes && data ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    for (i = 0; attributes && i < numAttributes && len + 12 < sizeof name; i++)
        len += (size_t)snprintf(name + len, sizeof name - len, "%s%d", i ? "," : "", attributes[i]);
    if (err == OBS_CUDA_SUCCESS) {
        const struct drv_range *r;
        pthread_mutex_lock(&drv_lock);
        r = drv_range_find((uintptr_t)ptr);
        for (i = 0; i < numAttributes && err == OBS_CUDA_SUCCESS; i++) {
            obs_CUresult one;
            if (data[i] == NULL)
                continue;
            one = pointer_attribute(data[i], attributes[i], (uintptr_t)ptr, r);
            if (one != OBS_CUDA_SUCCESS && (r != NULL || attributes[i] < ATTR_CONTEXT ||
                                            attributes[i] > ATTR_IS_HW_DECOMPRESS_CAPABLE))
                err = one;
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuPointerGetAttributes", DRV_KIND_OTHER, name[0] ? name : NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      err);
}

DRV_EXPORT obs_CUresult cuMemGetAddressRange_v2(obs_CUdeviceptr *pbase, size_t *psize, obs_CUdeviceptr dptr)
{
    const struct drv_range *r;
    obs_CUresult err;
    drv_enter();
    err = drv_need_context();
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        r = drv_range_find((uintptr_t)dptr);
        if (r == NULL || !is_device_kind(r->kind)) {
            err = OBS_CUDA_ERROR_NOT_FOUND;
        } else {
            if (pbase)
                *pbase = (obs_CUdeviceptr)r->base;
            if (psize)
                *psize = r->size;
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return drv_finish("cuMemGetAddressRange_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}
