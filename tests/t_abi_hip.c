/* shim/abi/hip_abi.h against the real HIP 5.2 headers and library:
 *   - every entry point of OBS_HIP_API and OBS_HIP_SUPPORT_API that the C
 *     headers declare has exactly the real signature (with the obs_ type
 *     names mapped to the real types, the function types must be compatible);
 *   - the structs' sizes and field offsets, the enum values and the flags;
 *   - when the real libamdhip64.so.5 loads: every symbol of the simulator's
 *     version script exists there at the same version node (this covers the
 *     entry points the C headers do not declare, e.g. the C++ symbol of
 *     hipExtModuleLaunchKernel).
 * Compiled with -DOBS_HAVE_HIP_HEADERS when configure found hipcc; without
 * it, or without the headers, the test skips and says why. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tap/basic.h"
#include "tap/process.h"

#if defined(OBS_HAVE_HIP_HEADERS) && defined(__has_include)
#if __has_include(<hip/hip_runtime_api.h>)
#define HIP_HEADERS_FOUND 1
#endif
#endif

#ifndef HIP_HEADERS_FOUND

int main(void)
{
#ifdef OBS_HAVE_HIP_HEADERS
    skip_all("hipcc was found but <hip/hip_runtime_api.h> is not on the include path");
#else
    skip_all("no HIP headers: configure found no hipcc (install hipcc and libamdhip64-dev)");
#endif
}

#else

#include <hip/hip_runtime_api.h>
#define OBS_HIP_ABI_REAL_TYPES 1
#define OBS_HIP_ABI_NO_PROTOTYPES 1
#include "abi/hip_abi.h"
#include "hip_sim_map.h"

/* ---- signatures ---- */

/* Declared by no C header: hipcc emits the registration calls itself, and
 * hip_ext.h declares hipExtModuleLaunchKernel for C++ only. They stand for a
 * null pointer of our own type below, and are checked in the library. */
#define __hipRegisterFatBinary (*(obs_fn___hipRegisterFatBinary)0)
#define __hipRegisterFunction (*(obs_fn___hipRegisterFunction)0)
#define __hipRegisterVar (*(obs_fn___hipRegisterVar)0)
#define __hipUnregisterFatBinary (*(obs_fn___hipUnregisterFatBinary)0)
#define hipExtModuleLaunchKernel (*(obs_fn_hipExtModuleLaunchKernel)0)
static const char *const undeclared_in_c[] = {"__hipRegisterFatBinary", "__hipRegisterFunction",
                                              "__hipRegisterVar", "__hipUnregisterFatBinary",
                                              "hipExtModuleLaunchKernel"};

struct signature_check {
    const char *name;
    int compatible;
};

#define SIGNATURE_CHECK(name, ret, params, args) \
    {#name, __builtin_types_compatible_p(__typeof__(&name), obs_fn_##name)},
static const struct signature_check signature_checks[] = {
    OBS_HIP_API(SIGNATURE_CHECK) OBS_HIP_SUPPORT_API(SIGNATURE_CHECK) OBS_HIP_PROFILER_API(SIGNATURE_CHECK)};
#undef SIGNATURE_CHECK

static int is_undeclared_in_c(const char *name)
{
    for (size_t i = 0; i < sizeof undeclared_in_c / sizeof undeclared_in_c[0]; ++i)
        if (strcmp(name, undeclared_in_c[i]) == 0)
            return 1;
    return 0;
}

static void check_signatures(void)
{
    for (size_t i = 0; i < sizeof signature_checks / sizeof signature_checks[0]; ++i) {
        const struct signature_check *c = &signature_checks[i];
        if (is_undeclared_in_c(c->name))
            skip("%s: not declared by the C headers (looked up in the library below)", c->name);
        else
            ok(c->compatible, "signature of %s matches hip_runtime_api.h", c->name);
    }
}

/* ---- layouts ---- */

#define SAME_SIZE(ours, theirs) \
    is_int((long long)sizeof(theirs), (long long)sizeof(ours), "sizeof(%s) == sizeof(%s)", #ours, #theirs)
#define SAME_OFFSET(ours, theirs, field)                                                      \
    is_int((long long)offsetof(theirs, field), (long long)offsetof(ours, field), "%s.%s at %zu", \
           #ours, #field, offsetof(theirs, field))

static void check_layouts(void)
{
    SAME_SIZE(struct obs_hipDim3, dim3);
    SAME_OFFSET(struct obs_hipDim3, dim3, x);
    SAME_OFFSET(struct obs_hipDim3, dim3, y);
    SAME_OFFSET(struct obs_hipDim3, dim3, z);

    SAME_SIZE(struct obs_hipPitchedPtr, hipPitchedPtr);
    SAME_OFFSET(struct obs_hipPitchedPtr, hipPitchedPtr, ptr);
    SAME_OFFSET(struct obs_hipPitchedPtr, hipPitchedPtr, pitch);
    SAME_OFFSET(struct obs_hipPitchedPtr, hipPitchedPtr, xsize);
    SAME_OFFSET(struct obs_hipPitchedPtr, hipPitchedPtr, ysize);

    SAME_SIZE(struct obs_hipExtent, hipExtent);
    SAME_OFFSET(struct obs_hipExtent, hipExtent, width);
    SAME_OFFSET(struct obs_hipExtent, hipExtent, height);
    SAME_OFFSET(struct obs_hipExtent, hipExtent, depth);

    SAME_SIZE(struct obs_hipPos, hipPos);
    SAME_OFFSET(struct obs_hipPos, hipPos, x);
    SAME_OFFSET(struct obs_hipPos, hipPos, y);
    SAME_OFFSET(struct obs_hipPos, hipPos, z);

    SAME_SIZE(struct obs_hipKernelNodeParams, hipKernelNodeParams);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, blockDim);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, extra);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, func);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, gridDim);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, kernelParams);
    SAME_OFFSET(struct obs_hipKernelNodeParams, hipKernelNodeParams, sharedMemBytes);
    SAME_SIZE(int, hipGraphNodeType);

    SAME_SIZE(struct obs_hipMemcpy3DParms, hipMemcpy3DParms);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, srcArray);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, srcPos);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, srcPtr);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, dstArray);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, dstPos);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, dstPtr);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, extent);
    SAME_OFFSET(struct obs_hipMemcpy3DParms, hipMemcpy3DParms, kind);

    /* Without the real headers the enums are typedef'ed to int and the
     * handles to pointers: same size, same register class. */
    SAME_SIZE(int, hipError_t);
    SAME_SIZE(int, hipMemcpyKind);
    SAME_SIZE(int, hipStreamCaptureMode);
    SAME_SIZE(int, hipStreamCaptureStatus);
    SAME_SIZE(void *, hipStream_t);
    SAME_SIZE(void *, hipDeviceptr_t);
}

/* ---- values ---- */

#define SAME_VALUE(name) is_int((long long)name, (long long)obs_##name, "%s = %lld", #name, (long long)name)
#define SAME_FLAG(ours, theirs) \
    is_int((long long)(theirs), (long long)(ours), "%s = %s (%#llx)", #ours, #theirs, (unsigned long long)(theirs))

static void check_values(void)
{
    SAME_VALUE(hipSuccess);
    SAME_VALUE(hipErrorInvalidValue);
    SAME_VALUE(hipErrorOutOfMemory);
    SAME_VALUE(hipErrorNotInitialized);
    SAME_VALUE(hipErrorInvalidConfiguration);
    SAME_VALUE(hipErrorInvalidPitchValue);
    SAME_VALUE(hipErrorInvalidSymbol);
    SAME_VALUE(hipErrorInvalidDevicePointer);
    SAME_VALUE(hipErrorInvalidMemcpyDirection);
    SAME_VALUE(hipErrorMissingConfiguration);
    SAME_VALUE(hipErrorInvalidDeviceFunction);
    SAME_VALUE(hipErrorNoDevice);
    SAME_VALUE(hipErrorInvalidDevice);
    SAME_VALUE(hipErrorInvalidImage);
    SAME_VALUE(hipErrorNotFound);
    SAME_VALUE(hipErrorInvalidHandle);
    SAME_VALUE(hipErrorIllegalState);
    SAME_VALUE(hipErrorNotReady);
    SAME_VALUE(hipErrorContextIsDestroyed);
    SAME_VALUE(hipErrorNotSupported);
    SAME_VALUE(hipErrorStreamCaptureUnsupported);
    SAME_VALUE(hipErrorStreamCaptureInvalidated);
    SAME_VALUE(hipErrorStreamCaptureUnmatched);
    SAME_VALUE(hipErrorStreamCaptureWrongThread);
    SAME_VALUE(hipErrorUnknown);
    is_int(hipErrorInvalidResourceHandle, obs_hipErrorInvalidHandle,
           "hipErrorInvalidResourceHandle is hipErrorInvalidHandle");

    SAME_VALUE(hipMemcpyHostToHost);
    SAME_VALUE(hipMemcpyHostToDevice);
    SAME_VALUE(hipMemcpyDeviceToHost);
    SAME_VALUE(hipMemcpyDeviceToDevice);
    SAME_VALUE(hipMemcpyDefault);

    SAME_VALUE(hipStreamCaptureModeGlobal);
    SAME_VALUE(hipStreamCaptureModeThreadLocal);
    SAME_VALUE(hipStreamCaptureModeRelaxed);
    SAME_VALUE(hipStreamCaptureStatusNone);
    SAME_VALUE(hipStreamCaptureStatusActive);
    SAME_VALUE(hipStreamCaptureStatusInvalidated);
    /* hipGraphNodeType as HIP 5.2 numbers it (5.3 renumbered: hooks_hip.c) */
    SAME_VALUE(hipGraphNodeTypeKernel);
    SAME_VALUE(hipGraphNodeTypeMemcpy);
    SAME_VALUE(hipGraphNodeTypeMemset);
    SAME_VALUE(hipGraphNodeTypeGraph);
    SAME_VALUE(hipGraphNodeTypeEmpty);
    SAME_VALUE(hipGraphNodeTypeEventRecord);

    SAME_FLAG(OBS_HIP_STREAM_DEFAULT, hipStreamDefault);
    SAME_FLAG(OBS_HIP_STREAM_NON_BLOCKING, hipStreamNonBlocking);
    SAME_FLAG(OBS_HIP_EVENT_DEFAULT, hipEventDefault);
    SAME_FLAG(OBS_HIP_EVENT_BLOCKING_SYNC, hipEventBlockingSync);
    SAME_FLAG(OBS_HIP_EVENT_DISABLE_TIMING, hipEventDisableTiming);
    SAME_FLAG(OBS_HIP_EXT_ANY_ORDER_LAUNCH, hipExtAnyOrderLaunch);
    SAME_FLAG((uintptr_t)OBS_HIP_STREAM_PER_THREAD, (uintptr_t)hipStreamPerThread);
}

/* ---- the real library ---- */

#define MAP_MAX 256

static void check_real_library(void)
{
    static struct hip_map_entry map[MAP_MAX];
    const char *map_path = test_path(test_srcdir(), "sim/libamdhip64.map");
    int n = hip_map_read(map_path, map, MAP_MAX);
    void *real;

    if (!ok(n > 0, "read %d symbols from %s", n, map_path))
        return;
    ok(hip_map_read(map_path, map, MAP_MAX) < MAP_MAX, "the version script fits the table");
    real = dlopen("libamdhip64.so.5", RTLD_LAZY | RTLD_LOCAL);
    if (real == NULL) {
        skip_block((unsigned long)n, "the real libamdhip64.so.5 does not load: %s", dlerror());
        return;
    }
    for (int i = 0; i < n; ++i)
        ok(dlvsym(real, map[i].symbol, map[i].node) != NULL, "real library: %s@%s", map[i].symbol,
           map[i].node);
    ok(dlsym(real, OBS_HIP_SYMBOL_hipExtModuleLaunchKernel) != NULL,
       "real library exports hipExtModuleLaunchKernel as %s", OBS_HIP_SYMBOL_hipExtModuleLaunchKernel);
    dlclose(real);
}

int main(void)
{
    plan_lazy();
    check_signatures();
    check_layouts();
    check_values();
    check_real_library();
    return 0;
}

#endif
