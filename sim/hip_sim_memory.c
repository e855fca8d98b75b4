/* Simulated HIP runtime: "device" memory. Allocations are host memory,
 * remembered so that hipFree can refuse strangers, memsets can insist on a
 * device pointer and hipMemcpyDefault can tell device from host. Symbols
 * (__device__ variables) get their own device storage, initialised from
 * the host shadow variable as the code object would initialise them. */
#include <stdlib.h>
#include <string.h>

#include "hip_sim.h"

#define SIM_ALLOC_ALIGN 256 /* what hipMalloc guarantees */

struct sim_alloc {
    struct sim_alloc *next;
    char *base;
    size_t size;
    const void *symbol; /* host shadow variable, for symbol storage */
    void **modules;     /* the fat binary that registered the symbol */
};

static struct sim_alloc *sim_allocs;

static struct sim_alloc *sim_alloc_containing_locked(const void *p, size_t len)
{
    const char *c = p;

    for (struct sim_alloc *a = sim_allocs; a != NULL; a = a->next)
        if (c >= a->base && c < a->base + a->size && len <= (size_t)(a->base + a->size - c))
            return a;
    return NULL;
}

int sim_device_range_locked(const void *p, size_t len)
{
    return p != NULL && sim_alloc_containing_locked(p, len) != NULL;
}

static struct sim_alloc *sim_alloc_add_locked(size_t size)
{
    struct sim_alloc *a = calloc(1, sizeof *a);
    void *base = NULL;

    if (a == NULL || posix_memalign(&base, SIM_ALLOC_ALIGN, size) != 0) {
        free(a);
        return NULL;
    }
    a->base = base;
    a->size = size;
    a->next = sim_allocs;
    sim_allocs = a;
    return a;
}

/* Frees the allocation that starts at p; 0 when p starts none. */
static int sim_alloc_free_locked(const void *p)
{
    for (struct sim_alloc **link = &sim_allocs; *link != NULL; link = &(*link)->next) {
        struct sim_alloc *a = *link;
        if (a->base == p && a->symbol == NULL) {
            *link = a->next;
            free(a->base);
            free(a);
            return 1;
        }
    }
    return 0;
}

char *sim_symbol_storage_locked(const void *symbol, size_t *size)
{
    for (struct sim_alloc *a = sim_allocs; a != NULL; a = a->next) {
        if (a->symbol != NULL && a->symbol == symbol) {
            *size = a->size;
            return a->base;
        }
    }
    return NULL;
}

void sim_symbol_register_locked(void **modules, const void *host_var, size_t size)
{
    struct sim_alloc *a;
    size_t old_size;

    if (host_var == NULL || size == 0 || sim_symbol_storage_locked(host_var, &old_size) != NULL)
        return;
    a = sim_alloc_add_locked(size);
    if (a == NULL)
        return;
    memcpy(a->base, host_var, size);
    a->symbol = host_var;
    a->modules = modules;
}

void sim_symbols_release_locked(void **modules)
{
    struct sim_alloc **link = &sim_allocs;

    while (*link != NULL) {
        struct sim_alloc *a = *link;
        if (a->symbol != NULL && a->modules == modules) {
            *link = a->next;
            free(a->base);
            free(a);
        } else {
            link = &a->next;
        }
    }
}

/* ---- hipMalloc / hipFree (+Async) ---- */

static obs_hipError_t sim_malloc(void **ptr, size_t size, const obs_hipStream_t *stream)
{
    obs_hipError_t status = obs_hipSuccess;

    if (ptr == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    if (stream != NULL && sim_stream_get_locked(*stream, 0) == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else if (size == 0) {
        *ptr = NULL; /* HIP returns success and a null pointer */
    } else {
        struct sim_alloc *a = sim_alloc_add_locked(size);
        if (a == NULL)
            status = obs_hipErrorOutOfMemory;
        else
            *ptr = a->base;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

static obs_hipError_t sim_free(void *ptr, const obs_hipStream_t *stream)
{
    obs_hipError_t status = obs_hipSuccess;

    pthread_mutex_lock(&sim_lock);
    if (stream != NULL && sim_stream_get_locked(*stream, 0) == NULL)
        status = obs_hipErrorInvalidHandle;
    else if (ptr == NULL)
        status = stream != NULL ? obs_hipErrorInvalidValue : obs_hipSuccess; /* hipFree(NULL) is a no-op */
    else if (!sim_alloc_free_locked(ptr))
        status = obs_hipErrorInvalidValue;
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipMalloc(void **ptr, size_t size)
{
    sim_enter();
    return sim_finish("hipMalloc", SIM_KIND_ALLOC, NULL, NULL, (long long)size,
                      sim_malloc(ptr, size, NULL));
}

obs_hipError_t hipFree(void *ptr)
{
    sim_enter();
    return sim_finish("hipFree", SIM_KIND_ALLOC, NULL, NULL, SIM_NO_BYTES, sim_free(ptr, NULL));
}

/* Stream-ordered allocation: the simulator's device is always idle, so
 * memory is allocated and released at once. */
obs_hipError_t hipMallocAsync(void **dev_ptr, size_t size, obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipMallocAsync", SIM_KIND_ALLOC, NULL, &stream, (long long)size,
                      sim_malloc(dev_ptr, size, &stream));
}

obs_hipError_t hipFreeAsync(void *dev_ptr, obs_hipStream_t stream)
{
    sim_enter();
    return sim_finish("hipFreeAsync", SIM_KIND_ALLOC, NULL, &stream, SIM_NO_BYTES,
                      sim_free(dev_ptr, &stream));
}
