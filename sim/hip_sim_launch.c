/* Simulated HIP runtime: kernel registration (what hipcc's generated
 * constructors call), the <<<>>> call configuration, fake modules and every
 * launch flavour. Kernels are not executed: a launch checks its arguments
 * as HIP does and charges the cost model's kernel time to its stream. */
#include <stdlib.h>
#include <string.h>

#include "hip_sim.h"

/* A kernel registered by __hipRegisterFunction: host stub -> device name. */
struct sim_kernel {
    struct sim_kernel *next;
    const void *host_function;
    char *name;
    void **modules;
};

/* What __hipRegisterFatBinary hands back: the address of `slot`. */
struct sim_fatbin {
    void *slot;
    const void *wrapper;
};

/* A module from hipModuleLoadData and the functions got from it. */
struct sim_module {
    struct sim_module *next;
};

struct sim_function {
    struct sim_function *next;
    struct sim_module *module;
    char *name;
};

static struct sim_kernel *sim_kernels;
static struct sim_module *sim_modules;
static struct sim_function *sim_functions;

static struct sim_kernel *sim_kernel_get_locked(const void *host_function)
{
    for (struct sim_kernel *k = sim_kernels; k != NULL; k = k->next)
        if (k->host_function == host_function)
            return k;
    return NULL;
}

static struct sim_function *sim_function_get_locked(obs_hipFunction_t handle)
{
    for (struct sim_function *f = sim_functions; f != NULL; f = f->next)
        if ((obs_hipFunction_t)f == handle)
            return f;
    return NULL;
}

static struct sim_module *sim_module_get_locked(obs_hipModule_t handle)
{
    for (struct sim_module *m = sim_modules; m != NULL; m = m->next)
        if ((obs_hipModule_t)m == handle)
            return m;
    return NULL;
}

/* ---- registration ---- */

void **__hipRegisterFatBinary(const void *data)
{
    struct sim_fatbin *fatbin;

    sim_enter();
    /* The code object is never read: kernels do not run. */
    fatbin = calloc(1, sizeof *fatbin);
    if (fatbin != NULL)
        fatbin->wrapper = data;
    sim_log_call("__hipRegisterFatBinary", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, 0);
    return fatbin != NULL ? &fatbin->slot : NULL;
}

void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                           const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                           obs_hipDim3 *blockDim, obs_hipDim3 *gridDim, int *wSize)
{
    const char *name = deviceName != NULL ? deviceName : deviceFunction;
    struct sim_kernel *k;
    char *copy;

    sim_enter();
    copy = name != NULL ? strdup(name) : NULL;
    if (copy != NULL && hostFunction != NULL) {
        pthread_mutex_lock(&sim_lock);
        k = sim_kernel_get_locked(hostFunction);
        if (k == NULL && (k = calloc(1, sizeof *k)) != NULL) {
            k->host_function = hostFunction;
            k->next = sim_kernels;
            sim_kernels = k;
        }
        if (k != NULL) {
            free(k->name);
            k->name = copy;
            k->modules = modules;
            copy = NULL;
        }
        pthread_mutex_unlock(&sim_lock);
    }
    free(copy);
    sim_log_call("__hipRegisterFunction", SIM_KIND_OTHER, name, NULL, SIM_NO_BYTES, 0);
}

void __hipRegisterVar(void **modules, void *var, char *hostVar, char *deviceVar, int ext,
                      size_t size, int constant, int global)
{
    sim_enter();
    pthread_mutex_lock(&sim_lock);
    sim_symbol_register_locked(modules, var, size);
    pthread_mutex_unlock(&sim_lock);
    sim_log_call("__hipRegisterVar", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, 0);
}

void __hipUnregisterFatBinary(void **modules)
{
    struct sim_kernel **link;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    link = &sim_kernels;
    while (*link != NULL) {
        struct sim_kernel *k = *link;
        if (k->modules == modules) {
            *link = k->next;
            free(k->name);
            free(k);
        } else {
            link = &k->next;
        }
    }
    sim_symbols_release_locked(modules);
    pthread_mutex_unlock(&sim_lock);
    /* modules is &fatbin->slot, the first member. */
    free(modules);
    sim_log_call("__hipUnregisterFatBinary", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, 0);
}

/* ---- <<<>>>: the configuration pushed by the caller, popped by the stub ---- */

struct sim_call_config {
    obs_hipDim3 grid, block;
    size_t shared_mem;
    obs_hipStream_t stream;
};

#define SIM_CONFIG_DEPTH 16 /* <<<>>> inside kernel arguments nests */
static __thread struct sim_call_config sim_configs[SIM_CONFIG_DEPTH];
static __thread int sim_config_depth;

obs_hipError_t __hipPushCallConfiguration(obs_hipDim3 gridDim, obs_hipDim3 blockDim,
                                          size_t sharedMem, obs_hipStream_t stream)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;

    sim_enter();
    if (sim_config_depth < SIM_CONFIG_DEPTH) {
        struct sim_call_config *c = &sim_configs[sim_config_depth++];
        c->grid = gridDim;
        c->block = blockDim;
        c->shared_mem = sharedMem;
        c->stream = stream;
        status = obs_hipSuccess;
    }
    return sim_finish("__hipPushCallConfiguration", SIM_KIND_OTHER, NULL, &stream, SIM_NO_BYTES,
                      status);
}

obs_hipError_t __hipPopCallConfiguration(obs_hipDim3 *gridDim, obs_hipDim3 *blockDim,
                                         size_t *sharedMem, obs_hipStream_t *stream)
{
    obs_hipError_t status = obs_hipErrorMissingConfiguration;

    sim_enter();
    if (sim_config_depth > 0) {
        const struct sim_call_config *c = &sim_configs[--sim_config_depth];
        if (gridDim != NULL)
            *gridDim = c->grid;
        if (blockDim != NULL)
            *blockDim = c->block;
        if (sharedMem != NULL)
            *sharedMem = c->shared_mem;
        if (stream != NULL)
            *stream = c->stream;
        status = obs_hipSuccess;
    }
    return sim_finish("__hipPopCallConfiguration", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      status);
}

/* ---- modules ---- */

static obs_hipError_t sim_module_load(obs_hipModule_t *module, const void *image)
{
    struct sim_module *m;

    if (module == NULL || image == NULL)
        return obs_hipErrorInvalidValue;
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return obs_hipErrorOutOfMemory;
    pthread_mutex_lock(&sim_lock);
    m->next = sim_modules;
    sim_modules = m;
    pthread_mutex_unlock(&sim_lock);
    *module = (obs_hipModule_t)m;
    return obs_hipSuccess;
}

obs_hipError_t hipModuleLoadData(obs_hipModule_t *module, const void *image)
{
    sim_enter();
    return sim_finish("hipModuleLoadData", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_module_load(module, image));
}

/* A fake module contains every kernel asked for; asking twice gives the
 * same handle. */
static obs_hipError_t sim_module_get_function(obs_hipFunction_t *function, obs_hipModule_t module,
                                              const char *name)
{
    obs_hipError_t status = obs_hipSuccess;
    struct sim_module *m;
    struct sim_function *f = NULL;

    if (function == NULL || name == NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    m = sim_module_get_locked(module);
    if (m == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else {
        for (f = sim_functions; f != NULL; f = f->next)
            if (f->module == m && strcmp(f->name, name) == 0)
                break;
        if (f == NULL && (f = calloc(1, sizeof *f)) != NULL) {
            f->name = strdup(name);
            if (f->name == NULL) {
                free(f);
                f = NULL;
            } else {
                f->module = m;
                f->next = sim_functions;
                sim_functions = f;
            }
        }
        if (f == NULL)
            status = obs_hipErrorOutOfMemory;
        else
            *function = (obs_hipFunction_t)f;
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

obs_hipError_t hipModuleGetFunction(obs_hipFunction_t *function, obs_hipModule_t module,
                                    const char *kname)
{
    sim_enter();
    return sim_finish("hipModuleGetFunction", SIM_KIND_OTHER, kname, NULL, SIM_NO_BYTES,
                      sim_module_get_function(function, module, kname));
}

static obs_hipError_t sim_module_unload(obs_hipModule_t module)
{
    struct sim_module *m = NULL;
    struct sim_function **link;

    pthread_mutex_lock(&sim_lock);
    for (struct sim_module **p = &sim_modules; *p != NULL; p = &(*p)->next) {
        if ((obs_hipModule_t)*p == module) {
            m = *p;
            *p = m->next;
            break;
        }
    }
    link = &sim_functions;
    while (m != NULL && *link != NULL) {
        struct sim_function *f = *link;
        if (f->module == m) {
            *link = f->next;
            free(f->name);
            free(f);
        } else {
            link = &f->next;
        }
    }
    pthread_mutex_unlock(&sim_lock);
    free(m);
    return m != NULL ? obs_hipSuccess : obs_hipErrorInvalidHandle;
}

obs_hipError_t hipModuleUnload(obs_hipModule_t module)
{
    sim_enter();
    return sim_finish("hipModuleUnload", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_module_unload(module));
}

/* ---- kernel names ---- */

const char *hipKernelNameRef(const obs_hipFunction_t f)
{
    const char *name = NULL;
    struct sim_function *function;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    function = sim_function_get_locked(f);
    if (function != NULL)
        name = function->name;
    pthread_mutex_unlock(&sim_lock);
    sim_log_call("hipKernelNameRef", SIM_KIND_OTHER, name, NULL, SIM_NO_BYTES, 0);
    return name;
}

const char *hipKernelNameRefByPtr(const void *hostFunction, obs_hipStream_t stream)
{
    const char *name = NULL;
    struct sim_kernel *k;

    sim_enter();
    pthread_mutex_lock(&sim_lock);
    k = sim_kernel_get_locked(hostFunction);
    if (k != NULL)
        name = k->name;
    pthread_mutex_unlock(&sim_lock);
    sim_log_call("hipKernelNameRefByPtr", SIM_KIND_OTHER, name, &stream, SIM_NO_BYTES, 0);
    return name;
}

/* ---- launches ---- */

/* One launch, whatever the entry point, once the function is resolved. */
struct sim_launch {
    obs_hipStream_t stream;
    int per_thread_default;   /* _spt: stream 0 is the thread's default stream */
    uint32_t global[3];       /* work items per dimension (grid x block) */
    uint32_t local[3];        /* block */
    obs_hipEvent_t start_event, stop_event; /* hipExt*: recorded around the kernel */
};

static uint64_t sim_threads(const uint32_t global[3])
{
    unsigned __int128 t = (unsigned __int128)global[0] * global[1] * global[2];
    return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
}

static void sim_launch_dims(struct sim_launch *l, obs_hipDim3 grid, obs_hipDim3 block)
{
    uint64_t g[3] = {grid.x, grid.y, grid.z};
    uint32_t b[3] = {block.x, block.y, block.z};

    for (int i = 0; i < 3; ++i) {
        uint64_t items = g[i] * b[i];
        l->global[i] = items > UINT32_MAX ? UINT32_MAX : (uint32_t)items;
        l->local[i] = b[i];
    }
}

/* Checks the configuration and stream, then runs or captures the kernel. */
static obs_hipError_t sim_launch_locked(const struct sim_launch *l, const char *name, const void *func)
{
    struct sim_stream *s = sim_stream_get_locked(l->stream, l->per_thread_default);
    struct sim_event *start = NULL, *stop = NULL;
    struct sim_node node;

    if (s == NULL)
        return obs_hipErrorInvalidHandle;
    for (int i = 0; i < 3; ++i) /* a zero grid or block dimension */
        if (l->global[i] == 0 || l->local[i] == 0)
            return obs_hipErrorInvalidConfiguration;
    if (l->start_event != NULL && (start = sim_event_get_locked(l->start_event)) == NULL)
        return obs_hipErrorInvalidHandle;
    if (l->stop_event != NULL && (stop = sim_event_get_locked(l->stop_event)) == NULL)
        return obs_hipErrorInvalidHandle;
    memset(&node, 0, sizeof node);
    node.kind = SIM_NODE_KERNEL;
    node.name = name;
    node.threads = sim_threads(l->global);
    node.func = func;
    memcpy(node.global, l->global, sizeof node.global);
    memcpy(node.local, l->local, sizeof node.local);
    if (s->capture != NULL)
        return sim_capture_add_locked(s, &node);
    if (start != NULL) {
        start->time_ns = sim_stream_ready_locked(s);
        start->recorded = 1;
    }
    sim_node_run_locked(s, &node, 0);
    if (stop != NULL) {
        stop->time_ns = s->tail_ns;
        stop->recorded = 1;
    }
    return obs_hipSuccess;
}

/* Launch by host stub (hipLaunchKernel and friends); *name gets the
 * registered device name for the log. */
static obs_hipError_t sim_launch_host_function(const void *host_function,
                                               const struct sim_launch *l, const char **name)
{
    obs_hipError_t status;
    struct sim_kernel *k;

    pthread_mutex_lock(&sim_lock);
    k = sim_kernel_get_locked(host_function);
    if (k == NULL) {
        status = obs_hipErrorInvalidDeviceFunction;
    } else {
        *name = k->name;
        status = sim_launch_locked(l, k->name, host_function);
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

/* Launch by module function (hipModuleLaunchKernel, hipExtModuleLaunchKernel). */
static obs_hipError_t sim_launch_module_function(obs_hipFunction_t f, const struct sim_launch *l,
                                                 void **kernel_params, void **extra,
                                                 const char **name)
{
    obs_hipError_t status;
    struct sim_function *function;

    if (f == NULL)
        return obs_hipErrorInvalidImage; /* what HIP returns for a null function */
    if (kernel_params != NULL && extra != NULL)
        return obs_hipErrorInvalidValue;
    pthread_mutex_lock(&sim_lock);
    function = sim_function_get_locked(f);
    if (function == NULL) {
        status = obs_hipErrorInvalidHandle;
    } else {
        *name = function->name;
        status = sim_launch_locked(l, function->name, (const void *)f);
    }
    pthread_mutex_unlock(&sim_lock);
    return status;
}

static obs_hipError_t sim_launch_kernel(const char *api, const void *function, obs_hipDim3 grid,
                                        obs_hipDim3 block, obs_hipStream_t stream,
                                        int per_thread_default, obs_hipEvent_t start_event,
                                        obs_hipEvent_t stop_event)
{
    struct sim_launch l;
    const char *name = NULL;
    obs_hipError_t status;

    sim_enter();
    memset(&l, 0, sizeof l);
    l.stream = stream;
    l.per_thread_default = per_thread_default;
    l.start_event = start_event;
    l.stop_event = stop_event;
    sim_launch_dims(&l, grid, block);
    status = sim_launch_host_function(function, &l, &name);
    return sim_finish(api, SIM_KIND_KERNEL, name, &stream, SIM_NO_BYTES, status);
}

obs_hipError_t hipLaunchKernel(const void *function_address, obs_hipDim3 numBlocks,
                               obs_hipDim3 dimBlocks, void **args, size_t sharedMemBytes,
                               obs_hipStream_t stream)
{
    return sim_launch_kernel("hipLaunchKernel", function_address, numBlocks, dimBlocks, stream, 0,
                             NULL, NULL);
}

obs_hipError_t hipLaunchKernel_spt(const void *function_address, obs_hipDim3 numBlocks,
                                   obs_hipDim3 dimBlocks, void **args, size_t sharedMemBytes,
                                   obs_hipStream_t stream)
{
    return sim_launch_kernel("hipLaunchKernel_spt", function_address, numBlocks, dimBlocks, stream,
                             1, NULL, NULL);
}

obs_hipError_t hipExtLaunchKernel(const void *function_address, obs_hipDim3 numBlocks,
                                  obs_hipDim3 dimBlocks, void **args, size_t sharedMemBytes,
                                  obs_hipStream_t stream, obs_hipEvent_t startEvent,
                                  obs_hipEvent_t stopEvent, int flags)
{
    return sim_launch_kernel("hipExtLaunchKernel", function_address, numBlocks, dimBlocks, stream,
                             0, startEvent, stopEvent);
}

obs_hipError_t hipLaunchCooperativeKernel(const void *f, obs_hipDim3 gridDim, obs_hipDim3 blockDimX,
                                          void **kernelParams, unsigned int sharedMemBytes,
                                          obs_hipStream_t stream)
{
    return sim_launch_kernel("hipLaunchCooperativeKernel", f, gridDim, blockDimX, stream, 0, NULL,
                             NULL);
}

obs_hipError_t hipLaunchCooperativeKernel_spt(const void *f, obs_hipDim3 gridDim,
                                              obs_hipDim3 blockDim, void **kernelParams,
                                              uint32_t sharedMemBytes, obs_hipStream_t hStream)
{
    return sim_launch_kernel("hipLaunchCooperativeKernel_spt", f, gridDim, blockDim, hStream, 1,
                             NULL, NULL);
}

obs_hipError_t hipModuleLaunchKernel(obs_hipFunction_t f, unsigned int gridDimX,
                                     unsigned int gridDimY, unsigned int gridDimZ,
                                     unsigned int blockDimX, unsigned int blockDimY,
                                     unsigned int blockDimZ, unsigned int sharedMemBytes,
                                     obs_hipStream_t stream, void **kernelParams, void **extra)
{
    obs_hipDim3 grid = {gridDimX, gridDimY, gridDimZ};
    obs_hipDim3 block = {blockDimX, blockDimY, blockDimZ};
    struct sim_launch l;
    const char *name = NULL;
    obs_hipError_t status;

    sim_enter();
    memset(&l, 0, sizeof l);
    l.stream = stream;
    sim_launch_dims(&l, grid, block);
    status = sim_launch_module_function(f, &l, kernelParams, extra, &name);
    return sim_finish("hipModuleLaunchKernel", SIM_KIND_KERNEL, name, &stream, SIM_NO_BYTES,
                      status);
}

/* Exported as the C++ symbol hip_ext.h declares (see hip_abi.h). */
obs_hipError_t hipExtModuleLaunchKernel(obs_hipFunction_t f, uint32_t globalWorkSizeX,
                                        uint32_t globalWorkSizeY, uint32_t globalWorkSizeZ,
                                        uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                        uint32_t localWorkSizeZ, size_t sharedMemBytes,
                                        obs_hipStream_t hStream, void **kernelParams, void **extra,
                                        obs_hipEvent_t startEvent, obs_hipEvent_t stopEvent,
                                        uint32_t flags)
{
    struct sim_launch l;
    const char *name = NULL;
    obs_hipError_t status;

    sim_enter();
    memset(&l, 0, sizeof l);
    l.stream = hStream;
    l.global[0] = globalWorkSizeX;
    l.global[1] = globalWorkSizeY;
    l.global[2] = globalWorkSizeZ;
    l.local[0] = localWorkSizeX;
    l.local[1] = localWorkSizeY;
    l.local[2] = localWorkSizeZ;
    l.start_event = startEvent;
    l.stop_event = stopEvent;
    status = sim_launch_module_function(f, &l, kernelParams, extra, &name);
    /* The log names the API, not its mangled symbol (shim/trace/api_list.h does too). */
    return sim_finish("hipExtModuleLaunchKernel", SIM_KIND_KERNEL, name, &hStream, SIM_NO_BYTES,
                      status);
}
