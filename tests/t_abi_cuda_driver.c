/* shim/abi/cuda_driver_abi.h against the real CUDA driver headers: every
 * struct passed across the driver ABI has the real size, alignment and
 * field offsets (kernel node parameters included); error codes, memory
 * types, capture enums, graph node types, flags,
 * cuGetProcAddress's flags and query results and the special stream
 * handles have the real values; every (name, version) row of
 * OBS_CUDA_DRIVER_PROC_VERSIONS without a per-thread suffix names a
 * PFN_<name>_v<version> typedef of cudaTypedefs.h (checked at compile
 * time); and every entry point of the three X-macro lists is exported by the
 * toolkit's stub libcuda.so.
 * Built with the toolkit's headers only when configure found CUDA
 * (OBS_HAVE_CUDA_HEADERS); otherwise it skips, saying why. */
#include "tap/basic.h"

#ifndef OBS_HAVE_CUDA_HEADERS

int main(void)
{
    skip_all("CUDA toolkit not found by configure: no real cuda.h to compare with");
}

#else

#include <dlfcn.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

/* The CUDA 2.x PFN_<name>_v2000 typedefs are declared only for the
 * driver's own build; they are what the legacy rows are checked against. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

#define OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES
#include "abi/cuda_driver_abi.h"

#define SAME_LAYOUT(obs, real)                                                              \
    do {                                                                                    \
        is_int((long long)sizeof(real), (long long)sizeof(obs), "sizeof(" #real ")");       \
        is_int((long long)alignof(real), (long long)alignof(obs), "alignof(" #real ")");    \
    } while (0)
#define SAME_OFFSET(obs, real, field)                                                       \
    is_int((long long)offsetof(real, field), (long long)offsetof(obs, field),               \
           "offsetof(" #real ", " #field ")")
#define SAME_VALUE(obs, real) is_int((long long)(real), (long long)(obs), #real)

/* A compile error here names a row whose version cudaTypedefs.h does not know. */
#define PFN_EXISTS(base, version, per_thread, symbol)                                       \
    typedef PFN_##base##_v##version obs_check_##symbol##_##version##_##per_thread;
#define LEGACY_ROWS_ONLY(base, version, per_thread, symbol) PFN_ROW_##per_thread(base, version, per_thread, symbol)
#define PFN_ROW_0(base, version, per_thread, symbol) PFN_EXISTS(base, version, per_thread, symbol)
#define PFN_ROW_1(base, version, per_thread, symbol)
OBS_CUDA_DRIVER_PROC_VERSIONS(LEGACY_ROWS_ONLY)

static void test_structs(void)
{
    SAME_LAYOUT(obs_CUlaunchAttribute, CUlaunchAttribute);
    SAME_OFFSET(obs_CUlaunchAttribute, CUlaunchAttribute, id);
    SAME_OFFSET(obs_CUlaunchAttribute, CUlaunchAttribute, value);
    is_int((long long)sizeof(CUlaunchAttributeValue), (long long)sizeof(((obs_CUlaunchAttribute *)0)->value),
           "sizeof(CUlaunchAttributeValue)");
    SAME_OFFSET(obs_CUlaunchAttribute, CUlaunchAttribute, value.priority);
    SAME_OFFSET(obs_CUlaunchAttribute, CUlaunchAttribute, value.cooperative);

    SAME_LAYOUT(obs_CUlaunchConfig, CUlaunchConfig);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, gridDimX);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, blockDimZ);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, sharedMemBytes);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, hStream);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, attrs);
    SAME_OFFSET(obs_CUlaunchConfig, CUlaunchConfig, numAttrs);

    SAME_LAYOUT(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcXInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcY);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcMemoryType);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcHost);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcDevice);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcArray);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, srcPitch);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstXInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstY);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstMemoryType);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstHost);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstDevice);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstArray);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, dstPitch);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, WidthInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY2D, CUDA_MEMCPY2D, Height);

    SAME_LAYOUT(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcXInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcZ);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcLOD);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcMemoryType);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcHost);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcDevice);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcArray);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, reserved0);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcPitch);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, srcHeight);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstXInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstZ);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstLOD);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstMemoryType);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstHost);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstDevice);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstArray);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, reserved1);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstPitch);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, dstHeight);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, WidthInBytes);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, Height);
    SAME_OFFSET(obs_CUDA_MEMCPY3D, CUDA_MEMCPY3D, Depth);

    SAME_LAYOUT(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, func);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, gridDimX);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, blockDimZ);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, sharedMemBytes);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, kernelParams);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v1, CUDA_KERNEL_NODE_PARAMS_v1, extra);
    SAME_LAYOUT(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2, func);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2, extra);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2, kern);
    SAME_OFFSET(obs_CUDA_KERNEL_NODE_PARAMS_v2, CUDA_KERNEL_NODE_PARAMS_v2, ctx);

    /* Scalars and handles passed by value. */
    is_int((long long)sizeof(CUresult), (long long)sizeof(obs_CUresult), "sizeof(CUresult)");
    is_int((long long)sizeof(CUdeviceptr), (long long)sizeof(obs_CUdeviceptr), "sizeof(CUdeviceptr)");
    is_int((long long)sizeof(CUdeviceptr_v1), (long long)sizeof(obs_CUdeviceptr_v1), "sizeof(CUdeviceptr_v1)");
    is_int((long long)sizeof(CUdevice), (long long)sizeof(obs_CUdevice), "sizeof(CUdevice)");
    is_int((long long)sizeof(cuuint64_t), (long long)sizeof(obs_cuuint64_t), "sizeof(cuuint64_t)");
    is_int((long long)sizeof(CUmemorytype), (long long)sizeof(obs_CUmemorytype), "sizeof(CUmemorytype)");
    is_int((long long)sizeof(CUstreamCaptureMode), (long long)sizeof(obs_CUstreamCaptureMode),
           "sizeof(CUstreamCaptureMode)");
    is_int((long long)sizeof(CUstreamCaptureStatus), (long long)sizeof(obs_CUstreamCaptureStatus),
           "sizeof(CUstreamCaptureStatus)");
    is_int((long long)sizeof(CUdriverProcAddressQueryResult), (long long)sizeof(obs_CUdriverProcAddressQueryResult),
           "sizeof(CUdriverProcAddressQueryResult)");
    is_int((long long)sizeof(CUlaunchAttributeID), (long long)sizeof(obs_CUlaunchAttributeID),
           "sizeof(CUlaunchAttributeID)");
    is_int((long long)sizeof(CUjit_option), (long long)sizeof(obs_CUjit_option), "sizeof(CUjit_option)");
    is_int((long long)sizeof(CUlibraryOption), (long long)sizeof(obs_CUlibraryOption), "sizeof(CUlibraryOption)");
    is_int((long long)sizeof(CUstream), (long long)sizeof(obs_CUstream), "sizeof(CUstream)");
    is_int((long long)sizeof(CUkernel), (long long)sizeof(obs_CUkernel), "sizeof(CUkernel)");
    is_int((long long)sizeof(CUgraphNodeType), (long long)sizeof(obs_CUgraphNodeType), "sizeof(CUgraphNodeType)");
}

static void test_values(void)
{
    SAME_VALUE(OBS_CUDA_SUCCESS, CUDA_SUCCESS);
    SAME_VALUE(OBS_CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_INVALID_VALUE);
    SAME_VALUE(OBS_CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY);
    SAME_VALUE(OBS_CUDA_ERROR_NOT_INITIALIZED, CUDA_ERROR_NOT_INITIALIZED);
    SAME_VALUE(OBS_CUDA_ERROR_NO_DEVICE, CUDA_ERROR_NO_DEVICE);
    SAME_VALUE(OBS_CUDA_ERROR_INVALID_DEVICE, CUDA_ERROR_INVALID_DEVICE);
    SAME_VALUE(OBS_CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_IMAGE);
    SAME_VALUE(OBS_CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_INVALID_CONTEXT);
    SAME_VALUE(OBS_CUDA_ERROR_FILE_NOT_FOUND, CUDA_ERROR_FILE_NOT_FOUND);
    SAME_VALUE(OBS_CUDA_ERROR_INVALID_HANDLE, CUDA_ERROR_INVALID_HANDLE);
    SAME_VALUE(OBS_CUDA_ERROR_ILLEGAL_STATE, CUDA_ERROR_ILLEGAL_STATE);
    SAME_VALUE(OBS_CUDA_ERROR_NOT_FOUND, CUDA_ERROR_NOT_FOUND);
    SAME_VALUE(OBS_CUDA_ERROR_NOT_READY, CUDA_ERROR_NOT_READY);
    SAME_VALUE(OBS_CUDA_ERROR_NOT_SUPPORTED, CUDA_ERROR_NOT_SUPPORTED);
    SAME_VALUE(OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    SAME_VALUE(OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    SAME_VALUE(OBS_CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
    SAME_VALUE(OBS_CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    SAME_VALUE(OBS_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    SAME_VALUE(OBS_CUDA_ERROR_UNKNOWN, CUDA_ERROR_UNKNOWN);

    SAME_VALUE(OBS_CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST);
    SAME_VALUE(OBS_CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE);
    SAME_VALUE(OBS_CU_MEMORYTYPE_ARRAY, CU_MEMORYTYPE_ARRAY);
    SAME_VALUE(OBS_CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_GLOBAL);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_MODE_RELAXED, CU_STREAM_CAPTURE_MODE_RELAXED);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_STATUS_NONE, CU_STREAM_CAPTURE_STATUS_NONE);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    SAME_VALUE(OBS_CU_STREAM_CAPTURE_STATUS_INVALIDATED, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_DEFAULT, CU_GET_PROC_ADDRESS_DEFAULT);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_LEGACY_STREAM, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_SUCCESS, CU_GET_PROC_ADDRESS_SUCCESS);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    SAME_VALUE(OBS_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    SAME_VALUE(OBS_CU_LAUNCH_ATTRIBUTE_COOPERATIVE, CU_LAUNCH_ATTRIBUTE_COOPERATIVE);
    SAME_VALUE(OBS_CU_LAUNCH_ATTRIBUTE_PRIORITY, CU_LAUNCH_ATTRIBUTE_PRIORITY);
    SAME_VALUE(OBS_CU_STREAM_NON_BLOCKING, CU_STREAM_NON_BLOCKING);
    SAME_VALUE(OBS_CU_EVENT_BLOCKING_SYNC, CU_EVENT_BLOCKING_SYNC);
    SAME_VALUE(OBS_CU_EVENT_DISABLE_TIMING, CU_EVENT_DISABLE_TIMING);
    SAME_VALUE(OBS_CU_GRAPH_NODE_TYPE_KERNEL, CU_GRAPH_NODE_TYPE_KERNEL);
    SAME_VALUE(OBS_CU_GRAPH_NODE_TYPE_MEMCPY, CU_GRAPH_NODE_TYPE_MEMCPY);
    SAME_VALUE(OBS_CU_GRAPH_NODE_TYPE_MEMSET, CU_GRAPH_NODE_TYPE_MEMSET);
    SAME_VALUE(OBS_CU_GRAPH_NODE_TYPE_GRAPH, CU_GRAPH_NODE_TYPE_GRAPH);
    SAME_VALUE(OBS_CU_GRAPH_NODE_TYPE_EVENT_RECORD, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
    SAME_VALUE((uintptr_t)OBS_CU_STREAM_LEGACY, (uintptr_t)CU_STREAM_LEGACY);
    SAME_VALUE((uintptr_t)OBS_CU_STREAM_PER_THREAD, (uintptr_t)CU_STREAM_PER_THREAD);
}

#define NAME_OF(name, ret, params, args) #name,
static const char *const abi_names[] = {OBS_CUDA_DRIVER_API(NAME_OF) OBS_CUDA_DRIVER_SUPPORT_API(NAME_OF)
                                            OBS_CUDA_DRIVER_LEGACY_API(NAME_OF) OBS_CUDA_DRIVER_PROFILER_API(NAME_OF)};
#undef NAME_OF

/* The toolkit's stub libcuda.so exports every symbol of the real driver. */
static void test_stub_library(void)
{
    char path[4096];
    void *lib;
    size_t i, missing = 0;

    snprintf(path, sizeof path, "%s/stubs/libcuda.so", OBS_CUDA_LIBDIR);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        skip("no stub driver at %s: %s", path, dlerror());
        return;
    }
    for (i = 0; i < sizeof abi_names / sizeof abi_names[0]; i++)
        if (dlsym(lib, abi_names[i]) == NULL) {
            diag("the real driver has no %s", abi_names[i]);
            missing++;
        }
    is_int(0, (long long)missing, "all %zu entry points of the lists are real driver symbols",
           sizeof abi_names / sizeof abi_names[0]);
    dlclose(lib);
}

int main(void)
{
    plan_lazy();
    test_structs();
    test_values();
    test_stub_library();
    return 0;
}

#endif
