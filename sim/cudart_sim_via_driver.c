/* OBS_SIM_CUDART_VIA_DRIVER=1: the simulated runtime hands its kernel
 * launches to the CUDA driver the way the real cudart does, so that a
 * launch passes through both layers (runtime entry point, then driver entry
 * point), as with the real libraries. Off by default.
 *
 * The driver is reached as the real cudart reaches it: dlopen
 * "libcuda.so.1" (the simulated one under sim/.libs), dlsym
 * "cuGetProcAddress_v2", every entry point fetched with version 13000 and
 * flags 0, or 2 for the _ptsz variants. Each kernel becomes a driver module
 * of its own at its first launch (CUDA's lazy loading); each runtime stream
 * a driver stream at its first use (never destroyed: the handle may be
 * reused, the driver stream stays valid). The driver's line is logged
 * before the runtime's, as the driver call returns first. Simplified: only
 * kernel launches are routed (not copies, memsets or graph launches), and a
 * launch on a capturing runtime stream runs at once in the driver. */
#include "cudart_sim.h"

#define OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES
#include "abi/cuda_driver_abi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VIA_DRIVER_VERSION 13000

static pthread_once_t via_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t via_lock = PTHREAD_MUTEX_INITIALIZER;
static int via_enabled;
static obs_CUcontext via_ctx;
static __thread int via_ctx_current;

static struct {
    obs_fn_cuInit init;
    obs_fn_cuDevicePrimaryCtxRetain primary_retain;
    obs_fn_cuCtxSetCurrent set_current;
    obs_fn_cuModuleLoadData module_load;
    obs_fn_cuModuleGetFunction get_function;
    obs_fn_cuStreamCreate stream_create;
    obs_fn_cuLaunchKernel launch[2];              /* [per_thread_api] */
    obs_fn_cuLaunchKernelEx launch_ex[2];
    obs_fn_cuLaunchCooperativeKernel launch_coop[2];
} drv;

struct via_function {
    char *name;
    obs_CUfunction fn;
    struct via_function *next;
};
struct via_stream {
    obs_cudaStream_t runtime;
    obs_CUstream driver;
    struct via_stream *next;
};
static struct via_function *via_functions;
static struct via_stream *via_streams;

static void via_warn(const char *what)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "obsshim-sim: OBS_SIM_CUDART_VIA_DRIVER: %s; launches stay in the runtime\n",
                     what);
    if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
        return;
}

static void *fetch(obs_fn_cuGetProcAddress_v2 get_proc, const char *name, unsigned flags)
{
    void *fn = NULL;
    obs_CUdriverProcAddressQueryResult status;
    if (get_proc(name, &fn, VIA_DRIVER_VERSION, flags, &status) != 0)
        return NULL;
    return fn;
}

static void via_init(void)
{
    const char *on = getenv("OBS_SIM_CUDART_VIA_DRIVER");
    obs_fn_cuGetProcAddress_v2 get_proc;
    obs_CUdevice dev = 0;
    void *lib;
    int i;

    if (!(on && strcmp(on, "1") == 0))
        return;
    lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    get_proc = lib ? (obs_fn_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2") : NULL;
    if (get_proc == NULL) {
        via_warn("no libcuda.so.1 with cuGetProcAddress_v2");
        return;
    }
    drv.init = (obs_fn_cuInit)fetch(get_proc, "cuInit", 0);
    drv.primary_retain = (obs_fn_cuDevicePrimaryCtxRetain)fetch(get_proc, "cuDevicePrimaryCtxRetain", 0);
    drv.set_current = (obs_fn_cuCtxSetCurrent)fetch(get_proc, "cuCtxSetCurrent", 0);
    drv.module_load = (obs_fn_cuModuleLoadData)fetch(get_proc, "cuModuleLoadData", 0);
    drv.get_function = (obs_fn_cuModuleGetFunction)fetch(get_proc, "cuModuleGetFunction", 0);
    drv.stream_create = (obs_fn_cuStreamCreate)fetch(get_proc, "cuStreamCreate", 0);
    for (i = 0; i < 2; i++) {
        unsigned flags = i ? OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : 0;
        drv.launch[i] = (obs_fn_cuLaunchKernel)fetch(get_proc, "cuLaunchKernel", flags);
        drv.launch_ex[i] = (obs_fn_cuLaunchKernelEx)fetch(get_proc, "cuLaunchKernelEx", flags);
        drv.launch_coop[i] = (obs_fn_cuLaunchCooperativeKernel)fetch(get_proc, "cuLaunchCooperativeKernel", flags);
        if (!drv.launch[i] || !drv.launch_ex[i] || !drv.launch_coop[i]) {
            via_warn("a launch entry point is missing");
            return;
        }
    }
    if (!drv.init || !drv.primary_retain || !drv.set_current || !drv.module_load || !drv.get_function ||
        !drv.stream_create || drv.init(0) != 0 || drv.primary_retain(&via_ctx, dev) != 0) {
        via_warn("cannot initialise the driver");
        return;
    }
    via_enabled = 1;
}

/* Under via_lock. The driver function for a kernel, loaded at first use. */
static obs_CUfunction function_for(const char *name)
{
    struct via_function *f;
    obs_CUmodule mod;
    char *image;
    size_t len;

    for (f = via_functions; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f->fn;
    len = strlen(name);
    image = malloc(len + sizeof "OBSSIMMOD\n\n");
    f = calloc(1, sizeof *f);
    if (image == NULL || f == NULL || (f->name = strdup(name)) == NULL) {
        free(image);
        free(f);
        return NULL;
    }
    snprintf(image, len + sizeof "OBSSIMMOD\n\n", "OBSSIMMOD\n%s\n", name);
    if (drv.module_load(&mod, image) != 0 || drv.get_function(&f->fn, mod, name) != 0) {
        free(image);
        free(f->name);
        free(f);
        return NULL;
    }
    free(image);
    f->next = via_functions;
    via_functions = f;
    return f->fn;
}

/* Under via_lock. Special handles pass unchanged; a user stream gets its
 * own driver stream. */
static int stream_for(obs_cudaStream_t runtime, obs_CUstream *out)
{
    struct via_stream *s;
    if (runtime == NULL || runtime == OBS_CUDA_STREAM_LEGACY || runtime == OBS_CUDA_STREAM_PER_THREAD) {
        *out = (obs_CUstream)runtime;
        return 0;
    }
    for (s = via_streams; s; s = s->next)
        if (s->runtime == runtime) {
            *out = s->driver;
            return 0;
        }
    s = calloc(1, sizeof *s);
    if (s == NULL || drv.stream_create(&s->driver, 0) != 0) {
        free(s);
        return -1;
    }
    s->runtime = runtime;
    s->next = via_streams;
    via_streams = s;
    *out = s->driver;
    return 0;
}

void sim_via_driver_launch(enum sim_via_launch how, const char *kernel_name, obs_dim3 grid, obs_dim3 block,
                           size_t shmem, obs_cudaStream_t stream, int per_thread_api)
{
    obs_CUfunction fn;
    obs_CUstream s;
    int pt = per_thread_api ? 1 : 0;

    pthread_once(&via_once, via_init);
    if (!via_enabled || kernel_name == NULL)
        return;
    if (!via_ctx_current) {
        if (drv.set_current(via_ctx) != 0)
            return;
        via_ctx_current = 1;
    }
    pthread_mutex_lock(&via_lock);
    fn = function_for(kernel_name);
    if (fn == NULL || stream_for(stream, &s) != 0) {
        pthread_mutex_unlock(&via_lock);
        return;
    }
    pthread_mutex_unlock(&via_lock);
    switch (how) {
    case SIM_VIA_LAUNCH:
        drv.launch[pt](fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, s, NULL, NULL);
        break;
    case SIM_VIA_LAUNCH_EX: {
        obs_CUlaunchConfig cfg = {grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, s, NULL, 0};
        drv.launch_ex[pt](&cfg, fn, NULL, NULL);
        break;
    }
    case SIM_VIA_LAUNCH_COOPERATIVE:
        drv.launch_coop[pt](fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)shmem, s, NULL);
        break;
    }
}
