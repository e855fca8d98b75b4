/* The virtual memory management API of the simulated driver, on host
 * memory: what PyTorch's caching allocator uses with
 * PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, NCCL and ggml at
 * start-up (device attribute 102 says it is there).
 *
 *   cuMemAddressReserve   an inaccessible anonymous mapping (PROT_NONE,
 *                         MAP_NORESERVE): address space only
 *   cuMemCreate           a memfd of that size: the "physical" memory,
 *                         zeroed, shareable between mappings
 *   cuMemMap              the memfd mapped over part of a reservation
 *                         (MAP_SHARED | MAP_FIXED), still inaccessible
 *   cuMemSetAccess        mprotect: read / read-write
 *   cuMemUnmap            the part becomes reserved address space again
 *   cuMemRelease          the handle goes; its memory lives while mapped
 *   cuMemAddressFree      munmap
 * plus the granularity (2 MiB, as on NVIDIA's GPUs), access and allocation
 * properties, the handle of a mapped address, and POSIX file descriptors
 * as shareable handles (a dup of the memfd: device attribute 103).
 * Physical memory is on a device, or on the host (location HOST_NUMA,
 * node 0, or HOST: how NCCL makes its host buffers, and probes that it can
 * at start-up). Mapped ranges are device memory for copies and memsets,
 * and for pointer attributes unless on the host (cudrv_sim_memory.c). All
 * under drv_lock. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cudrv_sim.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define VMM_GRANULARITY (2u * 1024 * 1024)

/* cuda.h's CUmemAllocationProp, CUmemLocation, CUmemAccessDesc. */
struct vmm_location {
    int type; /* CU_MEM_LOCATION_TYPE_DEVICE: 1 */
    int id;
};

struct vmm_prop {
    int type;                   /* CU_MEM_ALLOCATION_TYPE_PINNED: 1 */
    int requested_handle_types; /* CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR: 1 */
    struct vmm_location location;
    void *win32_metadata;
    unsigned char compression_type, rdma_capable;
    unsigned short usage;
    unsigned char reserved[4];
};

struct vmm_access_desc {
    struct vmm_location location;
    unsigned flags; /* 0 none, 1 read, 3 read-write */
};

_Static_assert(sizeof(struct vmm_prop) == 32, "CUmemAllocationProp is 32 bytes");
_Static_assert(sizeof(struct vmm_access_desc) == 12, "CUmemAccessDesc is 12 bytes");

#define LOCATION_DEVICE 1
#define LOCATION_HOST 2
#define LOCATION_HOST_NUMA 3
#define LOCATION_HOST_NUMA_CURRENT 4
#define ALLOCATION_PINNED 1
#define HANDLE_TYPE_POSIX_FD 1
#define ACCESS_READ 1u
#define ACCESS_READWRITE 3u

/* A cuMemCreate allocation (its handle is this struct's address). */
struct vmm_alloc {
    int fd;
    size_t size;
    int handle_types;
    struct vmm_location location; /* a device, or host memory (NCCL's cuMem host buffers) */
    unsigned refs; /* the handle until cuMemRelease, plus one per mapping and retain */
    struct vmm_alloc *next;
};

struct vmm_reservation {
    uintptr_t base;
    size_t size;
    struct vmm_reservation *next;
};

static struct vmm_alloc *vmm_allocs;
static struct vmm_reservation *vmm_reservations;

static struct vmm_alloc *alloc_lookup(unsigned long long handle)
{
    struct vmm_alloc *a;
    for (a = vmm_allocs; a; a = a->next)
        if ((unsigned long long)(uintptr_t)a == handle)
            return a;
    return NULL;
}

static void alloc_unref(struct vmm_alloc *a)
{
    struct vmm_alloc **link;
    if (--a->refs > 0)
        return;
    for (link = &vmm_allocs; *link; link = &(*link)->next)
        if (*link == a) {
            *link = a->next;
            break;
        }
    close(a->fd);
    free(a);
}

static const struct vmm_reservation *reservation_holding(uintptr_t p, size_t size)
{
    const struct vmm_reservation *r;
    for (r = vmm_reservations; r; r = r->next)
        if (p >= r->base && p - r->base <= r->size && size <= r->size - (p - r->base))
            return r;
    return NULL;
}

/* Under drv_lock. [p, p+size) is covered by mappings, end to end. */
static int mapped_cover(uintptr_t p, size_t size)
{
    uintptr_t q = p;
    while (q < p + size) {
        const struct drv_range *m = drv_range_find(q);
        if (m == NULL || m->kind != DRV_MEM_MAPPED)
            return 0;
        q = m->base + m->size;
    }
    return 1;
}

/* A device, or the host's one NUMA node (0): where physical memory may be
 * (CU_MEM_LOCATION_TYPE_HOST_NUMA: NCCL 2.2x allocates its host buffers so,
 * and probes it at start-up). */
static int valid_location(const struct vmm_location *l)
{
    switch (l->type) {
    case LOCATION_DEVICE:
        return drv_valid_device(l->id);
    case LOCATION_HOST:
    case LOCATION_HOST_NUMA_CURRENT:
        return 1;
    case LOCATION_HOST_NUMA:
        return l->id == 0;
    }
    return 0;
}

static int valid_device_prop(const struct vmm_prop *prop)
{
    return prop && prop->type == ALLOCATION_PINNED && valid_location(&prop->location) &&
           (prop->requested_handle_types & ~HANDLE_TYPE_POSIX_FD) == 0;
}

int drv_vmm_host_located(const void *owner)
{
    const struct vmm_alloc *a = owner;
    return a != NULL && a->location.type != LOCATION_DEVICE;
}

static obs_CUresult finish(const char *api, enum drv_kind kind, long long bytes, obs_CUresult err)
{
    return drv_finish(api, kind, NULL, DRV_NO_STREAM, bytes, err);
}

DRV_EXPORT obs_CUresult cuMemGetAllocationGranularity(size_t *granularity, const void *prop, int option)
{
    obs_CUresult err;
    drv_enter();
    err = granularity && valid_device_prop(prop) && (option == 0 || option == 1) ? drv_need_init()
                                                                                 : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *granularity = VMM_GRANULARITY; /* minimum and recommended alike */
    return finish("cuMemGetAllocationGranularity", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}

/* ---- physical allocations ---------------------------------------------------------- */

static obs_CUresult alloc_from_fd(unsigned long long *handle, int fd, size_t size, int handle_types,
                                   struct vmm_location location)
{
    struct vmm_alloc *a = calloc(1, sizeof *a);
    if (a == NULL) {
        close(fd);
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->fd = fd;
    a->size = size;
    a->handle_types = handle_types;
    a->location = location;
    a->refs = 1;
    pthread_mutex_lock(&drv_lock);
    a->next = vmm_allocs;
    vmm_allocs = a;
    pthread_mutex_unlock(&drv_lock);
    *handle = (unsigned long long)(uintptr_t)a;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuMemCreate(unsigned long long *handle, size_t size, const void *prop_arg,
                                    unsigned long long flags)
{
    const struct vmm_prop *prop = prop_arg;
    obs_CUresult err;
    int fd;
    drv_enter();
    err = handle && size > 0 && size % VMM_GRANULARITY == 0 && flags == 0 && valid_device_prop(prop)
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        fd = memfd_create("obsshim-sim-vmm", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
            if (fd >= 0)
                close(fd);
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            err = alloc_from_fd(handle, fd, size, prop->requested_handle_types, prop->location);
        }
    }
    return finish("cuMemCreate", DRV_KIND_ALLOC, (long long)size, err);
}

DRV_EXPORT obs_CUresult cuMemRelease(unsigned long long handle)
{
    struct vmm_alloc *a;
    long long bytes = DRV_NO_BYTES;
    obs_CUresult err;
    drv_enter();
    err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        a = alloc_lookup(handle);
        if (a == NULL) {
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        } else {
            bytes = (long long)a->size;
            alloc_unref(a);
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemRelease", DRV_KIND_ALLOC, bytes, err);
}

DRV_EXPORT obs_CUresult cuMemGetAllocationPropertiesFromHandle(void *prop_arg, unsigned long long handle)
{
    struct vmm_prop *prop = prop_arg;
    const struct vmm_alloc *a;
    obs_CUresult err;
    drv_enter();
    err = prop ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        a = alloc_lookup(handle);
        if (a == NULL) {
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        } else {
            memset(prop, 0, sizeof *prop);
            prop->type = ALLOCATION_PINNED;
            prop->requested_handle_types = a->handle_types;
            prop->location = a->location;
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemGetAllocationPropertiesFromHandle", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemExportToShareableHandle(void *shareable, unsigned long long handle, int handle_type,
                                                     unsigned long long flags)
{
    const struct vmm_alloc *a;
    obs_CUresult err;
    drv_enter();
    err = shareable && flags == 0 ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        a = alloc_lookup(handle);
        if (a == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else if (handle_type != HANDLE_TYPE_POSIX_FD || !(a->handle_types & HANDLE_TYPE_POSIX_FD))
            err = OBS_CUDA_ERROR_NOT_SUPPORTED;
        else if ((*(int *)shareable = dup(a->fd)) < 0)
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemExportToShareableHandle", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemImportFromShareableHandle(unsigned long long *handle, void *os_handle, int handle_type)
{
    struct stat st;
    obs_CUresult err;
    int fd = (int)(intptr_t)os_handle;
    drv_enter();
    err = handle && handle_type == HANDLE_TYPE_POSIX_FD ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && (fstat(fd, &st) != 0 || st.st_size <= 0))
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        /* The exporter's location is not carried by a descriptor: the importer's device. */
        struct vmm_location here = {LOCATION_DEVICE, drv_current_device()};
        int own = dup(fd);
        err = own < 0 ? OBS_CUDA_ERROR_OUT_OF_MEMORY
                      : alloc_from_fd(handle, own, (size_t)st.st_size, HANDLE_TYPE_POSIX_FD, here);
    }
    return finish("cuMemImportFromShareableHandle", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}

/* ---- address space ---------------------------------------------------------------- */

DRV_EXPORT obs_CUresult cuMemAddressReserve(obs_CUdeviceptr *ptr, size_t size, size_t alignment,
                                            obs_CUdeviceptr addr, unsigned long long flags)
{
    struct vmm_reservation *r = NULL;
    obs_CUresult err;
    drv_enter();
    if (alignment < VMM_GRANULARITY)
        alignment = VMM_GRANULARITY;
    err = ptr && size > 0 && size % VMM_GRANULARITY == 0 && flags == 0 && (alignment & (alignment - 1)) == 0 &&
                  size + alignment > size
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && (r = calloc(1, sizeof *r)) == NULL)
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    if (err == OBS_CUDA_SUCCESS) {
        /* Over-reserve, then cut to the alignment asked; addr is a hint. */
        char *raw = mmap((void *)(uintptr_t)addr, size + alignment, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (raw == MAP_FAILED) {
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            uintptr_t base = ((uintptr_t)raw + alignment - 1) & ~(uintptr_t)(alignment - 1);
            size_t head = base - (uintptr_t)raw, tail = alignment - head;
            if (head)
                munmap(raw, head);
            if (tail)
                munmap((void *)(base + size), tail);
            r->base = base;
            r->size = size;
            pthread_mutex_lock(&drv_lock);
            r->next = vmm_reservations;
            vmm_reservations = r;
            pthread_mutex_unlock(&drv_lock);
            *ptr = (obs_CUdeviceptr)base;
            r = NULL;
        }
    }
    free(r);
    return finish("cuMemAddressReserve", DRV_KIND_OTHER, (long long)size, err);
}

/* Under drv_lock. Drop every mapping in [p, p+size) (each wholly inside,
 * or 1 when one sticks out) and give the addresses back to the reservation. */
static obs_CUresult unmap_range(uintptr_t p, size_t size)
{
    uintptr_t q;
    for (q = p; q < p + size;) {
        const struct drv_range *m = drv_range_find(q);
        if (m == NULL) {
            q += VMM_GRANULARITY;
            continue;
        }
        if (m->kind != DRV_MEM_MAPPED || m->base < p || m->base + m->size > p + size)
            return OBS_CUDA_ERROR_INVALID_VALUE;
        q = m->base + m->size;
    }
    if (mmap((void *)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) ==
        MAP_FAILED)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    for (q = p; q < p + size;) {
        struct drv_range *m = drv_range_find(q);
        if (m == NULL) {
            q += VMM_GRANULARITY;
            continue;
        }
        q = m->base + m->size;
        alloc_unref(m->owner);
        drv_range_drop(m);
    }
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuMemAddressFree(obs_CUdeviceptr ptr, size_t size)
{
    struct vmm_reservation **link;
    obs_CUresult err;
    drv_enter();
    err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS) {
        err = OBS_CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_lock(&drv_lock);
        for (link = &vmm_reservations; *link; link = &(*link)->next)
            if ((*link)->base == (uintptr_t)ptr && (*link)->size == size) {
                struct vmm_reservation *r = *link;
                /* mappings left behind go with it */
                if (unmap_range(r->base, r->size) == OBS_CUDA_SUCCESS) {
                    *link = r->next;
                    munmap((void *)r->base, r->size);
                    free(r);
                    err = OBS_CUDA_SUCCESS;
                }
                break;
            }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemAddressFree", DRV_KIND_OTHER, (long long)size, err);
}

DRV_EXPORT obs_CUresult cuMemMap(obs_CUdeviceptr ptr, size_t size, size_t offset, unsigned long long handle,
                                 unsigned long long flags)
{
    struct vmm_alloc *a;
    struct drv_range *m;
    uintptr_t p = (uintptr_t)ptr, q;
    obs_CUresult err;
    drv_enter();
    err = size > 0 && flags == 0 && p % VMM_GRANULARITY == 0 && size % VMM_GRANULARITY == 0 &&
                  offset % VMM_GRANULARITY == 0
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        a = alloc_lookup(handle);
        if (a == NULL || offset > a->size || size > a->size - offset || reservation_holding(p, size) == NULL)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        for (q = p; err == OBS_CUDA_SUCCESS && q < p + size; q += VMM_GRANULARITY)
            if (drv_range_find(q) != NULL)
                err = OBS_CUDA_ERROR_INVALID_VALUE; /* already mapped */
        if (err == OBS_CUDA_SUCCESS &&
            mmap((void *)p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, a->fd, (off_t)offset) == MAP_FAILED)
            err = errno == ENOMEM ? OBS_CUDA_ERROR_OUT_OF_MEMORY : OBS_CUDA_ERROR_INVALID_VALUE;
        if (err == OBS_CUDA_SUCCESS) {
            m = drv_range_add(p, size, DRV_MEM_MAPPED);
            if (m == NULL) {
                mmap((void *)p, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
                err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
            } else {
                m->owner = a;
                m->flags = (unsigned)a->handle_types << 8; /* no access yet */
                a->refs++;
            }
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemMap", DRV_KIND_OTHER, (long long)size, err);
}

DRV_EXPORT obs_CUresult cuMemUnmap(obs_CUdeviceptr ptr, size_t size)
{
    obs_CUresult err;
    drv_enter();
    err = size > 0 && (uintptr_t)ptr % VMM_GRANULARITY == 0 && size % VMM_GRANULARITY == 0
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        err = reservation_holding((uintptr_t)ptr, size) ? unmap_range((uintptr_t)ptr, size)
                                                         : OBS_CUDA_ERROR_INVALID_VALUE;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemUnmap", DRV_KIND_OTHER, (long long)size, err);
}

/* ---- access --------------------------------------------------------------------------- */

DRV_EXPORT obs_CUresult cuMemSetAccess(obs_CUdeviceptr ptr, size_t size, const void *desc_arg, size_t count)
{
    const struct vmm_access_desc *desc = desc_arg;
    uintptr_t p = (uintptr_t)ptr, q;
    unsigned access = 0;
    obs_CUresult err;
    size_t i;
    drv_enter();
    err = size > 0 && desc && count > 0 ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    for (i = 0; err == OBS_CUDA_SUCCESS && i < count; i++) {
        if (!valid_location(&desc[i].location) ||
            (desc[i].flags != 0 && desc[i].flags != ACCESS_READ && desc[i].flags != ACCESS_READWRITE))
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            access = desc[i].flags;
    }
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        if (p + size < p || !mapped_cover(p, size))
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else if (mprotect((void *)p, size,
                          access == ACCESS_READWRITE ? PROT_READ | PROT_WRITE : access ? PROT_READ : PROT_NONE) != 0)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        for (q = p; err == OBS_CUDA_SUCCESS && q < p + size;) {
            struct drv_range *m = drv_range_find(q);
            m->flags = (m->flags & ~0xffu) | access;
            q = m->base + m->size;
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemSetAccess", DRV_KIND_OTHER, (long long)size, err);
}

DRV_EXPORT obs_CUresult cuMemGetAccess(unsigned long long *flags, const void *location_arg, obs_CUdeviceptr ptr)
{
    const struct vmm_location *location = location_arg;
    const struct drv_range *m;
    obs_CUresult err;
    drv_enter();
    err = flags && location && valid_location(location)
              ? drv_need_init()
              : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        m = drv_range_find((uintptr_t)ptr);
        if (m == NULL || m->kind != DRV_MEM_MAPPED)
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        else
            *flags = m->flags & 0xffu;
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemGetAccess", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemRetainAllocationHandle(unsigned long long *handle, void *addr)
{
    const struct drv_range *m;
    obs_CUresult err;
    drv_enter();
    err = handle ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        m = drv_range_find((uintptr_t)addr);
        if (m == NULL || m->kind != DRV_MEM_MAPPED) {
            err = OBS_CUDA_ERROR_INVALID_VALUE;
        } else {
            struct vmm_alloc *a = m->owner;
            a->refs++;
            *handle = (unsigned long long)(uintptr_t)a;
        }
        pthread_mutex_unlock(&drv_lock);
    }
    return finish("cuMemRetainAllocationHandle", DRV_KIND_OTHER, DRV_NO_BYTES, err);
}
