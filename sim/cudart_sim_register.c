/* Registration and launch configuration in the simulated CUDA runtime: what
 * nvcc's generated host code calls before main (__cudaRegisterFatBinary,
 * __cudaRegisterFunction, __cudaRegisterVar, __cudaRegisterFatBinaryEnd) and
 * around each <<<>>> (__cudaPushCallConfiguration, __cudaPopCallConfiguration,
 * __cudaGetKernel), and __cudaUnregisterFatBinary at exit. */
#include "cudart_sim.h"

#include <stdlib.h>
#include <string.h>

/* The handle returned by __cudaRegisterFatBinary is the address of slot. */
struct sim_module {
    void *slot;
    const void *wrapper;
    struct sim_module *next;
};

/* Kernels and variables are never freed: their addresses are the
 * cudaKernel_t handles and their names go into log lines written outside the
 * lock. Unregistering only retires them. */
struct sim_kernel {
    const void *host_fun;
    char *name;
    void **module; /* NULL once retired */
    struct sim_kernel *next;
};

struct sim_var {
    const void *host_var;
    char *storage;
    size_t size;
    void **module;
    struct sim_var *next;
};

static struct sim_module *sim_modules;
static struct sim_kernel *sim_kernels;
static struct sim_var *sim_vars;

const struct sim_kernel *sim_kernel_find(const void *func_or_handle)
{
    const struct sim_kernel *k;
    if (func_or_handle == NULL)
        return NULL;
    for (k = sim_kernels; k; k = k->next)
        if (k->module && (k->host_fun == func_or_handle || (const void *)k == func_or_handle))
            return k;
    return NULL;
}

const struct sim_kernel *sim_kernel_find_handle(obs_cudaKernel_t handle)
{
    const struct sim_kernel *k;
    for (k = sim_kernels; k; k = k->next)
        if (k->module && (obs_cudaKernel_t)k == handle)
            return k;
    return NULL;
}

const char *sim_kernel_name(const struct sim_kernel *k)
{
    return k ? k->name : NULL;
}

int sim_symbol_find(const void *symbol, char **storage, size_t *size)
{
    const struct sim_var *v;
    for (v = sim_vars; v; v = v->next)
        if (v->module && v->host_var == symbol) {
            *storage = v->storage;
            *size = v->size;
            return 1;
        }
    return 0;
}

SIM_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    struct sim_module *m;
    sim_enter();
    m = calloc(1, sizeof *m);
    if (m) {
        m->wrapper = fatCubin;
        pthread_mutex_lock(&sim_lock);
        m->next = sim_modules;
        sim_modules = m;
        pthread_mutex_unlock(&sim_lock);
    }
    sim_log_call("__cudaRegisterFatBinary", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, 0);
    return m ? &m->slot : NULL;
}

SIM_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    sim_enter();
    sim_log_call("__cudaRegisterFatBinaryEnd", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, 0);
}

static void retire_module(void **handle)
{
    struct sim_module **link;
    struct sim_kernel *k;
    struct sim_var *v;

    pthread_mutex_lock(&sim_lock);
    for (k = sim_kernels; k; k = k->next)
        if (k->module == handle)
            k->module = NULL;
    for (v = sim_vars; v; v = v->next)
        if (v->module == handle)
            v->module = NULL;
    for (link = &sim_modules; *link; link = &(*link)->next)
        if (&(*link)->slot == handle) {
            struct sim_module *m = *link;
            *link = m->next;
            free(m);
            break;
        }
    pthread_mutex_unlock(&sim_lock);
}

SIM_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    sim_enter();
    if (fatCubinHandle)
        retire_module(fatCubinHandle);
    sim_log_call("__cudaUnregisterFatBinary", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, 0);
}

SIM_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                       const char *deviceName, int thread_limit, void *tid, void *bid,
                                       obs_dim3 *bDim, obs_dim3 *gDim, int *wSize)
{
    struct sim_kernel *k;
    sim_enter();
    k = calloc(1, sizeof *k);
    if (k && hostFun && deviceName && (k->name = strdup(deviceName)) != NULL) {
        k->host_fun = hostFun;
        k->module = fatCubinHandle;
        pthread_mutex_lock(&sim_lock);
        k->next = sim_kernels;
        sim_kernels = k;
        pthread_mutex_unlock(&sim_lock);
    } else {
        free(k);
    }
    sim_log_call("__cudaRegisterFunction", SIM_KIND_OTHER, deviceName, SIM_NO_STREAM, SIM_NO_BYTES, 0);
}

/* A __device__ variable gets its own "device" storage, initialised from its
 * host shadow; cudaMemcpyToSymbol/FromSymbol with the shadow's address use it. */
SIM_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                  const char *deviceName, int ext, size_t size, int constant, int global)
{
    struct sim_var *v;
    sim_enter();
    v = calloc(1, sizeof *v);
    if (v && hostVar && (v->storage = calloc(1, size ? size : 1)) != NULL) {
        memcpy(v->storage, hostVar, size);
        v->host_var = hostVar;
        v->size = size;
        v->module = fatCubinHandle;
        pthread_mutex_lock(&sim_lock);
        v->next = sim_vars;
        sim_vars = v;
        pthread_mutex_unlock(&sim_lock);
    } else {
        free(v);
    }
    sim_log_call("__cudaRegisterVar", SIM_KIND_OTHER, deviceName, SIM_NO_STREAM, SIM_NO_BYTES, 0);
}

/* __cudaGetKernel: a cudaKernel_t per host stub, deliberately not the stub's
 * address, so that whoever sees only the handle must map it back. */
static obs_cudaError_t get_kernel(obs_cudaKernel_t *out, const void *host_fun, const char **name)
{
    const struct sim_kernel *k = NULL;
    obs_cudaError_t err;

    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    if (host_fun) {
        for (k = sim_kernels; k; k = k->next)
            if (k->module && k->host_fun == host_fun)
                break;
    }
    pthread_mutex_unlock(&sim_lock);
    if (k) {
        *out = (obs_cudaKernel_t)k;
        *name = k->name;
        err = obs_cudaSuccess;
    } else {
        err = obs_cudaErrorInvalidDeviceFunction;
    }
    return err;
}

SIM_EXPORT obs_cudaError_t __cudaGetKernel(obs_cudaKernel_t *kernel, const void *hostFun)
{
    const char *name = NULL;
    obs_cudaError_t err;
    sim_enter();
    err = get_kernel(kernel, hostFun, &name);
    return sim_finish("__cudaGetKernel", SIM_KIND_OTHER, name, SIM_NO_STREAM, SIM_NO_BYTES, err);
}

/* ---- launch configuration: a per-thread stack, as <<<>>> nests pushes ----- */

#define SIM_CONFIG_DEPTH 32

struct sim_call_config {
    obs_dim3 grid, block;
    size_t shmem;
    void *stream;
};

static __thread struct sim_call_config sim_configs[SIM_CONFIG_DEPTH];
static __thread unsigned sim_config_depth;

SIM_EXPORT unsigned __cudaPushCallConfiguration(obs_dim3 grid, obs_dim3 block, size_t shmem, void *stream)
{
    unsigned status = 1;
    sim_enter();
    if (sim_config_depth < SIM_CONFIG_DEPTH) {
        struct sim_call_config *c = &sim_configs[sim_config_depth++];
        c->grid = grid;
        c->block = block;
        c->shmem = shmem;
        c->stream = stream;
        status = 0;
    }
    sim_log_call("__cudaPushCallConfiguration", SIM_KIND_OTHER, NULL, stream, SIM_NO_BYTES, (int)status);
    return status;
}

static obs_cudaError_t pop_config(obs_dim3 *grid, obs_dim3 *block, size_t *shmem, void *stream)
{
    const struct sim_call_config *c;
    if (sim_config_depth == 0)
        return obs_cudaErrorMissingConfiguration;
    c = &sim_configs[--sim_config_depth];
    if (grid)
        *grid = c->grid;
    if (block)
        *block = c->block;
    if (shmem)
        *shmem = c->shmem;
    if (stream)
        *(void **)stream = c->stream;
    return obs_cudaSuccess;
}

SIM_EXPORT obs_cudaError_t __cudaPopCallConfiguration(obs_dim3 *grid, obs_dim3 *block, size_t *shmem,
                                                      void *stream)
{
    sim_enter();
    return sim_finish("__cudaPopCallConfiguration", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      pop_config(grid, block, shmem, stream));
}
