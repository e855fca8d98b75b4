/* The simulated CUDA driver's start-up (banner, environment), ground-truth
 * log, initialisation, devices, contexts, error strings, and its modules /
 * libraries with their functions and kernels.
 *
 * A module image is not a cubin: it is the text "OBSSIMMOD\n" followed by
 * one kernel name per line (NUL-terminated); anything else is
 * CUDA_ERROR_INVALID_IMAGE. Libraries (cuLibraryLoadData) read the same
 * format; each of their kernels is a CUkernel with a CUfunction of its own. */
#include "cudrv_sim.h"
#include "sim_fault.h"
#include "sim_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DRV_IMAGE_MAGIC "OBSSIMMOD\n"

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
    pthread_atfork(drv_lock_before_fork, drv_unlock_after_fork, drv_unlock_after_fork);
}

void drv_enter(void)
{
    pthread_once(&drv_once, drv_init);
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
    return status;
}

/* ---- initialisation, devices, contexts ------------------------------------ */

struct drv_ctx {
    int primary;
    struct drv_ctx *next;
};

static struct drv_ctx drv_primary_ctx = {.primary = 1};
static struct drv_ctx *drv_contexts = &drv_primary_ctx; /* every live context */
static unsigned drv_primary_refs;
static __thread struct drv_ctx *drv_current_ctx;

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

static struct drv_ctx *ctx_lookup(obs_CUcontext handle)
{
    struct drv_ctx *c;
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
        *count = 1;
    return drv_finish("cuDeviceGetCount", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGet(obs_CUdevice *device, int ordinal)
{
    obs_CUresult err;
    drv_enter();
    err = device ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && ordinal != 0)
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS)
        *device = 0;
    return drv_finish("cuDeviceGet", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

static obs_CUresult primary_retain(obs_CUcontext *pctx, obs_CUdevice dev)
{
    obs_CUresult err = pctx ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && dev != 0)
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        drv_primary_refs++;
        pthread_mutex_unlock(&drv_lock);
        *pctx = (obs_CUcontext)&drv_primary_ctx;
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
    if (err == OBS_CUDA_SUCCESS && dev != 0)
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS && drv_primary_refs == 0)
        err = OBS_CUDA_ERROR_INVALID_CONTEXT;
    else if (err == OBS_CUDA_SUCCESS)
        drv_primary_refs--;
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
    if (err == OBS_CUDA_SUCCESS && dev != 0)
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    c = calloc(1, sizeof *c);
    if (c == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&drv_lock);
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

/* ---- modules, libraries, functions, kernels ------------------------------------ */

struct drv_function {
    char *name;
    struct drv_module *module;
    struct drv_function *next;
};

/* A library's kernel: its own handle, with the function it resolves to. */
struct drv_kernel {
    struct drv_function *function;
    struct drv_kernel *next;
};

struct drv_module {
    int is_library;
    struct drv_function *functions;
    struct drv_kernel *kernels; /* libraries only */
    struct drv_module *next;
};

static struct drv_module *drv_modules;

static void module_free(struct drv_module *m)
{
    while (m->functions) {
        struct drv_function *f = m->functions;
        m->functions = f->next;
        free(f->name);
        free(f);
    }
    while (m->kernels) {
        struct drv_kernel *k = m->kernels;
        m->kernels = k->next;
        free(k);
    }
    free(m);
}

/* Parse an image into a module (not yet published). */
static obs_CUresult module_parse(const void *image, int is_library, struct drv_module **out)
{
    const char *p = image, *end;
    struct drv_module *m;

    if (p == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    if (strncmp(p, DRV_IMAGE_MAGIC, strlen(DRV_IMAGE_MAGIC)) != 0)
        return OBS_CUDA_ERROR_INVALID_IMAGE;
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    m->is_library = is_library;
    for (p += strlen(DRV_IMAGE_MAGIC); *p; p = *end ? end + 1 : end) {
        struct drv_function *f;
        end = strchr(p, '\n');
        if (end == NULL)
            end = p + strlen(p);
        if (end == p)
            continue;
        f = calloc(1, sizeof *f);
        if (f == NULL || (f->name = strndup(p, (size_t)(end - p))) == NULL) {
            free(f);
            module_free(m);
            return OBS_CUDA_ERROR_OUT_OF_MEMORY;
        }
        f->module = m;
        f->next = m->functions;
        m->functions = f;
        if (is_library) {
            struct drv_kernel *k = calloc(1, sizeof *k);
            if (k == NULL) {
                module_free(m);
                return OBS_CUDA_ERROR_OUT_OF_MEMORY;
            }
            k->function = f;
            k->next = m->kernels;
            m->kernels = k;
        }
    }
    *out = m;
    return OBS_CUDA_SUCCESS;
}

static obs_CUresult module_load(void **out, const void *image, int is_library)
{
    struct drv_module *m = NULL;
    obs_CUresult err = out ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        err = module_parse(image, is_library, &m);
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        m->next = drv_modules;
        drv_modules = m;
        pthread_mutex_unlock(&drv_lock);
        *out = m;
    }
    return err;
}

static struct drv_module *module_lookup(const void *handle, int is_library)
{
    struct drv_module *m;
    for (m = drv_modules; m; m = m->next)
        if ((const void *)m == handle && m->is_library == is_library)
            return m;
    return NULL;
}

static obs_CUresult module_unload(const void *handle, int is_library)
{
    struct drv_module **link;
    obs_CUresult err = drv_need_init();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = OBS_CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_modules; *link; link = &(*link)->next)
        if ((const void *)*link == handle && (*link)->is_library == is_library) {
            struct drv_module *m = *link;
            *link = m->next;
            module_free(m);
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuModuleLoadData(obs_CUmodule *module, const void *image)
{
    drv_enter();
    return drv_finish("cuModuleLoadData", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_load((void **)module, image, 0));
}

DRV_EXPORT obs_CUresult cuModuleUnload(obs_CUmodule hmod)
{
    drv_enter();
    return drv_finish("cuModuleUnload", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_unload(hmod, 0));
}

DRV_EXPORT obs_CUresult cuLibraryLoadData(obs_CUlibrary *library, const void *code,
                                          obs_CUjit_option *jitOptions, void **jitOptionsValues,
                                          unsigned int numJitOptions, obs_CUlibraryOption *libraryOptions,
                                          void **libraryOptionValues, unsigned int numLibraryOptions)
{
    drv_enter();
    return drv_finish("cuLibraryLoadData", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_load((void **)library, code, 1));
}

DRV_EXPORT obs_CUresult cuLibraryUnload(obs_CUlibrary library)
{
    drv_enter();
    return drv_finish("cuLibraryUnload", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_unload(library, 1));
}

static struct drv_function *function_in(struct drv_module *m, const char *name)
{
    struct drv_function *f;
    for (f = m->functions; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static obs_CUresult get_function(obs_CUfunction *out, obs_CUmodule hmod, const char *name)
{
    struct drv_module *m;
    struct drv_function *f = NULL;
    obs_CUresult err = out && name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    m = module_lookup(hmod, 0);
    if (m == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if ((f = function_in(m, name)) == NULL)
        err = OBS_CUDA_ERROR_NOT_FOUND;
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        *out = (obs_CUfunction)f;
    return err;
}

DRV_EXPORT obs_CUresult cuModuleGetFunction(obs_CUfunction *hfunc, obs_CUmodule hmod, const char *name)
{
    drv_enter();
    return drv_finish("cuModuleGetFunction", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_function(hfunc, hmod, name));
}

static obs_CUresult get_kernel(obs_CUkernel *out, obs_CUlibrary library, const char *name)
{
    struct drv_module *m;
    struct drv_kernel *k = NULL;
    obs_CUresult err = out && name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    m = module_lookup(library, 1);
    if (m == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else {
        for (k = m->kernels; k; k = k->next)
            if (strcmp(k->function->name, name) == 0)
                break;
        if (k == NULL)
            err = OBS_CUDA_ERROR_NOT_FOUND;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        *out = (obs_CUkernel)k;
    return err;
}

DRV_EXPORT obs_CUresult cuLibraryGetKernel(obs_CUkernel *pKernel, obs_CUlibrary library, const char *name)
{
    drv_enter();
    return drv_finish("cuLibraryGetKernel", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_kernel(pKernel, library, name));
}

/* Under drv_lock. */
static struct drv_kernel *kernel_lookup(obs_CUkernel handle)
{
    struct drv_module *m;
    struct drv_kernel *k;
    for (m = drv_modules; m; m = m->next)
        for (k = m->kernels; k; k = k->next)
            if ((obs_CUkernel)k == handle)
                return k;
    return NULL;
}

const struct drv_function *drv_function_find(obs_CUfunction handle)
{
    struct drv_module *m;
    struct drv_function *f;
    struct drv_kernel *k;
    for (m = drv_modules; m; m = m->next)
        for (f = m->functions; f; f = f->next)
            if ((obs_CUfunction)f == handle)
                return f;
    k = kernel_lookup((obs_CUkernel)handle);
    return k ? k->function : NULL;
}

int drv_is_kernel_handle(obs_CUfunction handle)
{
    return kernel_lookup((obs_CUkernel)handle) != NULL;
}

const char *drv_function_name(const struct drv_function *f)
{
    return f ? f->name : NULL;
}

static obs_CUresult function_name(const char **name, obs_CUfunction hfunc, const char **log_name)
{
    const struct drv_function *f;
    obs_CUresult err = name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    f = drv_function_find(hfunc);
    pthread_mutex_unlock(&drv_lock);
    if (f == NULL)
        return OBS_CUDA_ERROR_INVALID_HANDLE;
    *name = *log_name = f->name;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuFuncGetName(const char **name, obs_CUfunction hfunc)
{
    const char *log_name = NULL;
    obs_CUresult err;
    drv_enter();
    err = function_name(name, hfunc, &log_name);
    return drv_finish("cuFuncGetName", DRV_KIND_OTHER, log_name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelGetName(const char **name, obs_CUkernel hfunc)
{
    const char *log_name = NULL;
    obs_CUresult err;
    struct drv_kernel *k = NULL;
    drv_enter();
    err = name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        k = kernel_lookup(hfunc);
        pthread_mutex_unlock(&drv_lock);
        if (k == NULL)
            err = OBS_CUDA_ERROR_INVALID_HANDLE;
        else
            *name = log_name = k->function->name;
    }
    return drv_finish("cuKernelGetName", DRV_KIND_OTHER, log_name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelGetFunction(obs_CUfunction *pFunc, obs_CUkernel kernel)
{
    obs_CUresult err;
    struct drv_kernel *k = NULL;
    drv_enter();
    err = pFunc ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        k = kernel_lookup(kernel);
        pthread_mutex_unlock(&drv_lock);
        if (k == NULL)
            err = OBS_CUDA_ERROR_INVALID_HANDLE;
        else
            *pFunc = (obs_CUfunction)k->function;
    }
    return drv_finish("cuKernelGetFunction", DRV_KIND_OTHER, k ? k->function->name : NULL,
                      DRV_NO_STREAM, DRV_NO_BYTES, err);
}
