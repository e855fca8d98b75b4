/* The simulated CUDA driver's start-up (banner, environment), ground-truth
 * log, initialisation, device enumeration, contexts and error strings.
 * Device properties: cudrv_sim_device.c; modules: cudrv_sim_module.c. */
#include "cudrv_sim.h"
#include "sim_fault.h"
#include "sim_gpus.h"
#include "sim_log.h"
#include "sim_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pthread_mutex_t drv_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static int drv_initialised;

static const char drv_banner[] = "obsshim-sim: simulated CUDA driver (no GPU; kernels are not executed)\n";

static void drv_lock_before_fork(void)
{
    pthread_mutex_lock(&drv_lock);
}

static void drv_unlock_after_fork(void)
{
    pthread_mutex_unlock(&drv_lock);
}

static void drv_init(void)
{
    sim_log_start(drv_banner);
    sim_gpus_init();
    pthread_atfork(drv_lock_before_fork, drv_unlock_after_fork, drv_unlock_after_fork);
}

void drv_enter(void)
{
    pthread_once(&drv_once, drv_init);
    sim_tool_api_begin(SIM_TOOL_DRIVER);
}

/* The simulated libcupti attaches here (sim_tool.h). */
DRV_EXPORT void obssim_cudrv_tool_attach(const struct sim_tool_port *port)
{
    pthread_once(&drv_once, drv_init);
    sim_tool_attach(SIM_TOOL_DRIVER, port);
}

static const char *const drv_kind_words[] = {
    [DRV_KIND_KERNEL] = "kernel", [DRV_KIND_MEMCPY] = "memcpy", [DRV_KIND_MEMSET] = "memset",
    [DRV_KIND_SYNC] = "sync",     [DRV_KIND_GRAPH] = "graph",   [DRV_KIND_ALLOC] = "alloc",
    [DRV_KIND_OTHER] = "other",
};

obs_CUresult drv_finish(const char *api, enum drv_kind kind, const char *name, const void *stream,
                        long long bytes, obs_CUresult status)
{
    int injected = sim_fault_status(api);

    if (injected)
        status = injected;
    sim_log_line(api, drv_kind_words[kind], name, stream != DRV_NO_STREAM, (uintptr_t)stream, bytes, (int)status);
    sim_tool_api_end(SIM_TOOL_DRIVER, api, (int)status);
    return status;
}

/* ---- initialisation, devices, contexts ------------------------------------ */

struct drv_ctx {
    int primary;
    obs_CUdevice device;
    struct drv_ctx *next;
};

/* One primary context per device (OBS_SIM_GPUS, sim_gpus.h), linked into
 * the list of live contexts at the first lookup. */
static struct drv_ctx drv_primary_ctx[SIM_GPUS_MAX];
static struct drv_ctx *drv_contexts; /* every live context */
static int drv_contexts_ready;       /* under drv_lock */
static unsigned drv_primary_refs[SIM_GPUS_MAX];
static __thread struct drv_ctx *drv_current_ctx;

/* Under drv_lock. */
static void contexts_ready(void)
{
    if (drv_contexts_ready)
        return;
    for (int d = SIM_GPUS_MAX - 1; d >= 0; d--) {
        drv_primary_ctx[d].primary = 1;
        drv_primary_ctx[d].device = d;
        drv_primary_ctx[d].next = drv_contexts;
        drv_contexts = &drv_primary_ctx[d];
    }
    drv_contexts_ready = 1;
}

int drv_device_count(void)
{
    return (int)sim_gpus_visible();
}

int drv_valid_device(obs_CUdevice dev)
{
    return dev >= 0 && dev < drv_device_count();
}

obs_CUresult drv_need_init(void)
{
    return __atomic_load_n(&drv_initialised, __ATOMIC_ACQUIRE) ? OBS_CUDA_SUCCESS
                                                                : OBS_CUDA_ERROR_NOT_INITIALIZED;
}

obs_CUresult drv_need_context(void)
{
    obs_CUresult err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS && drv_current_ctx == NULL)
        err = OBS_CUDA_ERROR_INVALID_CONTEXT;
    return err;
}

obs_CUresult drv_need_context_of(const void *object)
{
    return object ? drv_need_init() : drv_need_context();
}

static struct drv_ctx *ctx_lookup(obs_CUcontext handle)
{
    struct drv_ctx *c;
    contexts_ready();
    for (c = drv_contexts; c; c = c->next)
        if ((obs_CUcontext)c == handle)
            return c;
    return NULL;
}

DRV_EXPORT obs_CUresult cuInit(unsigned int Flags)
{
    drv_enter();
    if (Flags == 0)
        __atomic_store_n(&drv_initialised, 1, __ATOMIC_RELEASE);
    return drv_finish("cuInit", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      Flags == 0 ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE);
}

DRV_EXPORT obs_CUresult cuDriverGetVersion(int *driverVersion)
{
    drv_enter();
    if (driverVersion)
        *driverVersion = DRV_SIM_DRIVER_VERSION;
    return drv_finish("cuDriverGetVersion", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      driverVersion ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE);
}

DRV_EXPORT obs_CUresult cuDeviceGetCount(int *count)
{
    obs_CUresult err;
    drv_enter();
    err = count ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *count = drv_device_count();
    return drv_finish("cuDeviceGetCount", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGet(obs_CUdevice *device, int ordinal)
{
    obs_CUresult err;
    drv_enter();
    err = device ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(ordinal))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS)
        *device = ordinal;
    return drv_finish("cuDeviceGet", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

int drv_primary_active(obs_CUdevice dev)
{
    int active;
    pthread_mutex_lock(&drv_lock);
    active = drv_valid_device(dev) && drv_primary_refs[dev] > 0;
    pthread_mutex_unlock(&drv_lock);
    return active;
}

obs_CUcontext drv_primary_context(obs_CUdevice dev)
{
    return (obs_CUcontext)&drv_primary_ctx[dev >= 0 && dev < SIM_GPUS_MAX ? dev : 0];
}

obs_CUcontext drv_current_context(void)
{
    return (obs_CUcontext)drv_current_ctx;
}

obs_CUdevice drv_current_device(void)
{
    struct drv_ctx *c = drv_current_ctx;
    return c ? c->device : 0;
}

obs_CUresult drv_context_device(obs_CUcontext handle, obs_CUdevice *dev)
{
    struct drv_ctx *c;
    pthread_mutex_lock(&drv_lock);
    c = ctx_lookup(handle);
    if (c)
        *dev = c->device;
    pthread_mutex_unlock(&drv_lock);
    return c ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_CONTEXT;
}

static obs_CUresult primary_retain(obs_CUcontext *pctx, obs_CUdevice dev)
{
    obs_CUresult err = pctx ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        drv_primary_refs[dev]++;
        pthread_mutex_unlock(&drv_lock);
        *pctx = drv_primary_context(dev);
    }
    return err;
}

DRV_EXPORT obs_CUresult cuDevicePrimaryCtxRetain(obs_CUcontext *pctx, obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuDevicePrimaryCtxRetain", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      primary_retain(pctx, dev));
}

static obs_CUresult primary_release(obs_CUdevice dev)
{
    obs_CUresult err = drv_need_init();
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS && drv_primary_refs[dev] == 0)
        err = OBS_CUDA_ERROR_INVALID_CONTEXT;
    else if (err == OBS_CUDA_SUCCESS)
        drv_primary_refs[dev]--;
    pthread_mutex_unlock(&drv_lock);
    return err;
}

/* CUDA 7.0's and 11.0's forms: the same in the simulator. */
DRV_EXPORT obs_CUresult cuDevicePrimaryCtxRelease(obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuDevicePrimaryCtxRelease", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      primary_release(dev));
}

DRV_EXPORT obs_CUresult cuDevicePrimaryCtxRelease_v2(obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuDevicePrimaryCtxRelease_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      primary_release(dev));
}

static obs_CUresult ctx_set_current(obs_CUcontext handle)
{
    obs_CUresult err = drv_need_init();
    struct drv_ctx *c = NULL;
    if (err == OBS_CUDA_SUCCESS && handle) {
        pthread_mutex_lock(&drv_lock);
        c = ctx_lookup(handle);
        pthread_mutex_unlock(&drv_lock);
        if (c == NULL)
            err = OBS_CUDA_ERROR_INVALID_CONTEXT;
    }
    if (err == OBS_CUDA_SUCCESS)
        drv_current_ctx = c;
    return err;
}

DRV_EXPORT obs_CUresult cuCtxSetCurrent(obs_CUcontext ctx)
{
    drv_enter();
    return drv_finish("cuCtxSetCurrent", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      ctx_set_current(ctx));
}

DRV_EXPORT obs_CUresult cuCtxGetCurrent(obs_CUcontext *pctx)
{
    obs_CUresult err;
    drv_enter();
    err = pctx ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *pctx = (obs_CUcontext)drv_current_ctx;
    return drv_finish("cuCtxGetCurrent", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* A created context becomes the thread's current one. */
static obs_CUresult ctx_create(obs_CUcontext *pctx, obs_CUdevice dev)
{
    obs_CUresult err = pctx ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    struct drv_ctx *c;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    c->device = dev;
    pthread_mutex_lock(&drv_lock);
    contexts_ready();
    c->next = drv_contexts;
    drv_contexts = c;
    pthread_mutex_unlock(&drv_lock);
    drv_current_ctx = c;
    *pctx = (obs_CUcontext)c;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuCtxCreate_v2(obs_CUcontext *pctx, unsigned int flags, obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuCtxCreate_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      ctx_create(pctx, dev));
}

DRV_EXPORT obs_CUresult cuCtxCreate_v3(obs_CUcontext *pctx, obs_CUexecAffinityParam *paramsArray,
                                       int numParams, unsigned int flags, obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuCtxCreate_v3", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      ctx_create(pctx, dev));
}

DRV_EXPORT obs_CUresult cuCtxCreate_v4(obs_CUcontext *pctx, obs_CUctxCreateParams *ctxCreateParams,
                                       unsigned int flags, obs_CUdevice dev)
{
    drv_enter();
    return drv_finish("cuCtxCreate_v4", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      ctx_create(pctx, dev));
}

static obs_CUresult ctx_destroy(obs_CUcontext handle)
{
    struct drv_ctx **link;
    obs_CUresult err = drv_need_init();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&drv_lock);
    contexts_ready();
    for (link = &drv_contexts; *link; link = &(*link)->next)
        if ((obs_CUcontext)*link == handle && !(*link)->primary) {
            struct drv_ctx *c = *link;
            *link = c->next;
            free(c);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS && (obs_CUcontext)drv_current_ctx == handle)
        drv_current_ctx = NULL;
    return err;
}

DRV_EXPORT obs_CUresult cuCtxDestroy_v2(obs_CUcontext ctx)
{
    drv_enter();
    return drv_finish("cuCtxDestroy_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      ctx_destroy(ctx));
}

/* ---- error strings ----------------------------------------------------------- */

static const struct {
    obs_CUresult code;
    const char *name, *text;
} drv_errors[] = {
    {OBS_CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {OBS_CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OBS_CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {OBS_CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {OBS_CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {OBS_CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {OBS_CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {OBS_CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {OBS_CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {OBS_CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {OBS_CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {OBS_CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {OBS_CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {OBS_CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began"},
    {OBS_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream"},
    {OBS_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread"},
    {OBS_CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Unknown codes: CUDA_ERROR_INVALID_VALUE and *pStr set to NULL, as the driver. */
static obs_CUresult error_text(obs_CUresult error, const char **pStr, int want_name)
{
    size_t i;
    if (pStr == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof drv_errors / sizeof drv_errors[0]; i++)
        if (drv_errors[i].code == error) {
            *pStr = want_name ? drv_errors[i].name : drv_errors[i].text;
            return OBS_CUDA_SUCCESS;
        }
    *pStr = NULL;
    return OBS_CUDA_ERROR_INVALID_VALUE;
}

DRV_EXPORT obs_CUresult cuGetErrorName(obs_CUresult error, const char **pStr)
{
    drv_enter();
    return drv_finish("cuGetErrorName", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      error_text(error, pStr, 1));
}

DRV_EXPORT obs_CUresult cuGetErrorString(obs_CUresult error, const char **pStr)
{
    drv_enter();
    return drv_finish("cuGetErrorString", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      error_text(error, pStr, 0));
}

/* ---- log callbacks (CUDA 12.9) ----------------------------------------------- */

/* The runtime registers a callback for the driver's error log at start-up
 * (cudart 13.2). The simulator writes no such log, so a callback is kept
 * only as a handle and never called. */
struct drv_log_callback {
    void *fn, *data;
};

DRV_EXPORT obs_CUresult cuLogsRegisterCallback(void *callbackFunc, void *userData, void **callback_out)
{
    struct drv_log_callback *cb = NULL;
    obs_CUresult err = callbackFunc ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE;
    drv_enter();
    if (err == OBS_CUDA_SUCCESS && (cb = calloc(1, sizeof *cb)) == NULL)
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    if (cb != NULL) {
        cb->fn = callbackFunc;
        cb->data = userData;
        if (callback_out)
            *callback_out = cb;
        else
            free(cb); /* no handle asked: it can never be unregistered */
    }
    return drv_finish("cuLogsRegisterCallback", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuLogsUnregisterCallback(void *callback)
{
    drv_enter();
    free(callback);
    return drv_finish("cuLogsUnregisterCallback", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      callback ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE);
}

/* Profiler control: no profiler runs here; each call is logged like any
 * other (a test sees where OBS_CAPTURE's start and stop land among the
 * program's calls, NVIDIA's runtime's cudaProfilerStart reaching it
 * included) and, as the real driver's, needs the thread's current context. */
DRV_EXPORT obs_CUresult cuProfilerStart(void)
{
    drv_enter();
    return drv_finish("cuProfilerStart", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, drv_need_context());
}

DRV_EXPORT obs_CUresult cuProfilerStop(void)
{
    drv_enter();
    return drv_finish("cuProfilerStop", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, drv_need_context());
}
