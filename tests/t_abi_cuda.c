/* shim/abi/cuda_abi.h against the real CUDA headers: every struct the shim,
 * the simulator and the test apps pass across the ABI has the real size,
 * alignment and field offsets; the error codes, copy kinds, capture enums,
 * flags and special stream handles have the real values; and every entry
 * point of the two X-macro lists exists, at version libcudart.so.13, in the
 * real libcudart.so.13.
 * Built with the toolkit's headers only when configure found CUDA
 * (OBS_HAVE_CUDA_HEADERS); otherwise it skips, saying why. */
#include "tap/basic.h"

#ifndef OBS_HAVE_CUDA_HEADERS

int main(void)
{
    skip_all("CUDA toolkit not found by configure: no real cuda_runtime_api.h to compare with");
}

#else

#include <dlfcn.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#include <cuda_runtime_api.h>
#include <fatbinary_section.h>

/* Beside the real prototypes, ours would conflict: types only. */
#define OBS_CUDA_ABI_NO_PROTOTYPES
#include "abi/cuda_abi.h"

#define SAME_LAYOUT(obs, real)                                                              \
    do {                                                                                    \
        is_int((long long)sizeof(real), (long long)sizeof(obs), "sizeof(" #real ")");       \
        is_int((long long)alignof(real), (long long)alignof(obs), "alignof(" #real ")");    \
    } while (0)
#define SAME_OFFSET(obs, real, field)                                                       \
    is_int((long long)offsetof(real, field), (long long)offsetof(obs, field),               \
           "offsetof(" #real ", " #field ")")
#define SAME_VALUE(obs, real) is_int((long long)(real), (long long)(obs), #real)

static void test_structs(void)
{
    SAME_LAYOUT(obs_dim3, dim3);
    SAME_OFFSET(obs_dim3, dim3, x);
    SAME_OFFSET(obs_dim3, dim3, y);
    SAME_OFFSET(obs_dim3, dim3, z);

    SAME_LAYOUT(struct obs_cudaPitchedPtr, struct cudaPitchedPtr);
    SAME_OFFSET(struct obs_cudaPitchedPtr, struct cudaPitchedPtr, ptr);
    SAME_OFFSET(struct obs_cudaPitchedPtr, struct cudaPitchedPtr, pitch);
    SAME_OFFSET(struct obs_cudaPitchedPtr, struct cudaPitchedPtr, xsize);
    SAME_OFFSET(struct obs_cudaPitchedPtr, struct cudaPitchedPtr, ysize);

    SAME_LAYOUT(struct obs_cudaExtent, struct cudaExtent);
    SAME_OFFSET(struct obs_cudaExtent, struct cudaExtent, width);
    SAME_OFFSET(struct obs_cudaExtent, struct cudaExtent, height);
    SAME_OFFSET(struct obs_cudaExtent, struct cudaExtent, depth);

    SAME_LAYOUT(struct obs_cudaPos, struct cudaPos);
    SAME_OFFSET(struct obs_cudaPos, struct cudaPos, x);
    SAME_OFFSET(struct obs_cudaPos, struct cudaPos, y);
    SAME_OFFSET(struct obs_cudaPos, struct cudaPos, z);

    SAME_LAYOUT(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, srcArray);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, srcPos);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, srcPtr);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, dstArray);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, dstPos);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, dstPtr);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, extent);
    SAME_OFFSET(struct obs_cudaMemcpy3DParms, struct cudaMemcpy3DParms, kind);

    SAME_LAYOUT(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, srcArray);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, srcPos);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, srcPtr);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, srcDevice);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, dstArray);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, dstPos);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, dstPtr);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, dstDevice);
    SAME_OFFSET(struct obs_cudaMemcpy3DPeerParms, struct cudaMemcpy3DPeerParms, extent);

    SAME_LAYOUT(obs_cudaLaunchAttribute, cudaLaunchAttribute);
    SAME_OFFSET(obs_cudaLaunchAttribute, cudaLaunchAttribute, id);
    SAME_OFFSET(obs_cudaLaunchAttribute, cudaLaunchAttribute, val);
    is_int((long long)sizeof(cudaLaunchAttributeValue), (long long)sizeof(((obs_cudaLaunchAttribute *)0)->val),
           "sizeof(cudaLaunchAttributeValue)");

    SAME_LAYOUT(obs_cudaLaunchConfig_t, cudaLaunchConfig_t);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, gridDim);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, blockDim);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, dynamicSmemBytes);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, stream);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, attrs);
    SAME_OFFSET(obs_cudaLaunchConfig_t, cudaLaunchConfig_t, numAttrs);

    SAME_LAYOUT(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, func);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, gridDim);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, blockDim);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, sharedMemBytes);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, kernelParams);
    SAME_OFFSET(struct obs_cudaKernelNodeParams, struct cudaKernelNodeParams, extra);
    is_int((long long)sizeof(enum cudaGraphNodeType), (long long)sizeof(obs_cudaGraphNodeType),
           "sizeof(enum cudaGraphNodeType)");

    SAME_LAYOUT(struct obs_fatbin_wrapper, __fatBinC_Wrapper_t);
    SAME_OFFSET(struct obs_fatbin_wrapper, __fatBinC_Wrapper_t, magic);
    SAME_OFFSET(struct obs_fatbin_wrapper, __fatBinC_Wrapper_t, version);
    SAME_OFFSET(struct obs_fatbin_wrapper, __fatBinC_Wrapper_t, data);
    SAME_OFFSET(struct obs_fatbin_wrapper, __fatBinC_Wrapper_t, filename_or_fatbins);
    SAME_VALUE(OBS_FATBIN_WRAPPER_MAGIC, FATBINC_MAGIC);

    /* Enums and handles passed by value. */
    is_int((long long)sizeof(cudaError_t), (long long)sizeof(obs_cudaError_t), "sizeof(cudaError_t)");
    is_int((long long)sizeof(enum cudaMemcpyKind), (long long)sizeof(obs_cudaMemcpyKind),
           "sizeof(enum cudaMemcpyKind)");
    is_int((long long)sizeof(enum cudaStreamCaptureMode), (long long)sizeof(obs_cudaStreamCaptureMode),
           "sizeof(enum cudaStreamCaptureMode)");
    is_int((long long)sizeof(enum cudaStreamCaptureStatus), (long long)sizeof(obs_cudaStreamCaptureStatus),
           "sizeof(enum cudaStreamCaptureStatus)");
    is_int((long long)sizeof(cudaStream_t), (long long)sizeof(obs_cudaStream_t), "sizeof(cudaStream_t)");
    is_int((long long)sizeof(cudaKernel_t), (long long)sizeof(obs_cudaKernel_t), "sizeof(cudaKernel_t)");
}

static void test_values(void)
{
    SAME_VALUE(obs_cudaSuccess, cudaSuccess);
    SAME_VALUE(obs_cudaErrorInvalidValue, cudaErrorInvalidValue);
    SAME_VALUE(obs_cudaErrorMemoryAllocation, cudaErrorMemoryAllocation);
    SAME_VALUE(obs_cudaErrorInitializationError, cudaErrorInitializationError);
    SAME_VALUE(obs_cudaErrorInvalidConfiguration, cudaErrorInvalidConfiguration);
    SAME_VALUE(obs_cudaErrorInvalidPitchValue, cudaErrorInvalidPitchValue);
    SAME_VALUE(obs_cudaErrorInvalidSymbol, cudaErrorInvalidSymbol);
    SAME_VALUE(obs_cudaErrorInvalidDevicePointer, cudaErrorInvalidDevicePointer);
    SAME_VALUE(obs_cudaErrorInvalidMemcpyDirection, cudaErrorInvalidMemcpyDirection);
    SAME_VALUE(obs_cudaErrorMissingConfiguration, cudaErrorMissingConfiguration);
    SAME_VALUE(obs_cudaErrorInvalidDeviceFunction, cudaErrorInvalidDeviceFunction);
    SAME_VALUE(obs_cudaErrorNoDevice, cudaErrorNoDevice);
    SAME_VALUE(obs_cudaErrorInvalidDevice, cudaErrorInvalidDevice);
    SAME_VALUE(obs_cudaErrorInvalidResourceHandle, cudaErrorInvalidResourceHandle);
    SAME_VALUE(obs_cudaErrorIllegalState, cudaErrorIllegalState);
    SAME_VALUE(obs_cudaErrorNotReady, cudaErrorNotReady);
    SAME_VALUE(obs_cudaErrorNotSupported, cudaErrorNotSupported);
    SAME_VALUE(obs_cudaErrorStreamCaptureUnsupported, cudaErrorStreamCaptureUnsupported);
    SAME_VALUE(obs_cudaErrorStreamCaptureInvalidated, cudaErrorStreamCaptureInvalidated);
    SAME_VALUE(obs_cudaErrorStreamCaptureUnmatched, cudaErrorStreamCaptureUnmatched);
    SAME_VALUE(obs_cudaErrorStreamCaptureImplicit, cudaErrorStreamCaptureImplicit);
    SAME_VALUE(obs_cudaErrorStreamCaptureWrongThread, cudaErrorStreamCaptureWrongThread);
    SAME_VALUE(obs_cudaErrorUnknown, cudaErrorUnknown);

    SAME_VALUE(obs_cudaMemcpyHostToHost, cudaMemcpyHostToHost);
    SAME_VALUE(obs_cudaMemcpyHostToDevice, cudaMemcpyHostToDevice);
    SAME_VALUE(obs_cudaMemcpyDeviceToHost, cudaMemcpyDeviceToHost);
    SAME_VALUE(obs_cudaMemcpyDeviceToDevice, cudaMemcpyDeviceToDevice);
    SAME_VALUE(obs_cudaMemcpyDefault, cudaMemcpyDefault);

    SAME_VALUE(obs_cudaStreamCaptureModeGlobal, cudaStreamCaptureModeGlobal);
    SAME_VALUE(obs_cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeThreadLocal);
    SAME_VALUE(obs_cudaStreamCaptureModeRelaxed, cudaStreamCaptureModeRelaxed);
    SAME_VALUE(obs_cudaStreamCaptureStatusNone, cudaStreamCaptureStatusNone);
    SAME_VALUE(obs_cudaStreamCaptureStatusActive, cudaStreamCaptureStatusActive);
    SAME_VALUE(obs_cudaStreamCaptureStatusInvalidated, cudaStreamCaptureStatusInvalidated);
    SAME_VALUE(obs_cudaGraphNodeTypeKernel, cudaGraphNodeTypeKernel);
    SAME_VALUE(obs_cudaGraphNodeTypeMemcpy, cudaGraphNodeTypeMemcpy);
    SAME_VALUE(obs_cudaGraphNodeTypeMemset, cudaGraphNodeTypeMemset);
    SAME_VALUE(obs_cudaGraphNodeTypeGraph, cudaGraphNodeTypeGraph);
    SAME_VALUE(obs_cudaGraphNodeTypeEmpty, cudaGraphNodeTypeEmpty);
    SAME_VALUE(obs_cudaGraphNodeTypeEventRecord, cudaGraphNodeTypeEventRecord);

    SAME_VALUE(OBS_CUDA_STREAM_NON_BLOCKING, cudaStreamNonBlocking);
    SAME_VALUE(OBS_CUDA_EVENT_BLOCKING_SYNC, cudaEventBlockingSync);
    SAME_VALUE(OBS_CUDA_EVENT_DISABLE_TIMING, cudaEventDisableTiming);
    SAME_VALUE(OBS_CUDA_EVENT_INTERPROCESS, cudaEventInterprocess);
    SAME_VALUE((uintptr_t)OBS_CUDA_STREAM_LEGACY, (uintptr_t)cudaStreamLegacy);
    SAME_VALUE((uintptr_t)OBS_CUDA_STREAM_PER_THREAD, (uintptr_t)cudaStreamPerThread);
}

#define NAME_OF(name, ret, params, args) #name,
static const char *const abi_names[] = {OBS_CUDA_RUNTIME_API(NAME_OF) OBS_CUDA_RUNTIME_SUPPORT_API(NAME_OF)
                                            OBS_CUDA_RUNTIME_PROFILER_API(NAME_OF)};
#undef NAME_OF

/* The real library must define every entry point the lists name, at the
 * version node the simulator copies. */
static void test_real_library(void)
{
    char path[4096];
    void *lib;
    size_t i, missing = 0;

    snprintf(path, sizeof path, "%s/libcudart.so.13", OBS_CUDA_LIBDIR);
    lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (lib == NULL) {
        skip("cannot load the real %s: %s", path, dlerror());
        return;
    }
    for (i = 0; i < sizeof abi_names / sizeof abi_names[0]; i++)
        if (dlvsym(lib, abi_names[i], "libcudart.so.13") == NULL) {
            diag("%s@libcudart.so.13 is not in %s", abi_names[i], path);
            missing++;
        }
    is_int(0, (long long)missing, "all %zu listed entry points exist in the real libcudart.so.13",
           sizeof abi_names / sizeof abi_names[0]);
    dlclose(lib);
}

int main(void)
{
    plan_lazy();
    test_structs();
    test_values();
    test_real_library();
    return 0;
}

#endif
