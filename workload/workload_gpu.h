// The CUDA / HIP spelling of the few runtime calls the workload makes, and
// GPU_CHECK: every call is checked; a failure prints the call, file and line
// and exits 1.
#ifndef OBS_WORKLOAD_GPU_H
#define OBS_WORKLOAD_GPU_H

#include <cstdio>
#include <cstdlib>

#if defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define GPU_API "HIP"
typedef hipError_t gpuError_t;
typedef hipStream_t gpuStream_t;
typedef hipEvent_t gpuEvent_t;
typedef hipGraph_t gpuGraph_t;
typedef hipGraphExec_t gpuGraphExec_t;
#define gpuSuccess hipSuccess
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemset hipMemset
#define gpuStreamCreate hipStreamCreate
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuEventCreate hipEventCreate
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventElapsedTime hipEventElapsedTime
#define gpuStreamBeginCapture(s) hipStreamBeginCapture((s), hipStreamCaptureModeGlobal)
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuGraphInstantiate(e, g) hipGraphInstantiate((e), (g), nullptr, nullptr, 0)
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphExecDestroy hipGraphExecDestroy
#define gpuGraphDestroy hipGraphDestroy
#else
#include <cuda_runtime.h>
#define GPU_API "CUDA"
typedef cudaError_t gpuError_t;
typedef cudaStream_t gpuStream_t;
typedef cudaEvent_t gpuEvent_t;
typedef cudaGraph_t gpuGraph_t;
typedef cudaGraphExec_t gpuGraphExec_t;
#define gpuSuccess cudaSuccess
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemset cudaMemset
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuEventCreate cudaEventCreate
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventElapsedTime cudaEventElapsedTime
#define gpuStreamBeginCapture(s) cudaStreamBeginCapture((s), cudaStreamCaptureModeGlobal)
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuGraphInstantiate(e, g) cudaGraphInstantiate((e), (g), 0)
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphExecDestroy cudaGraphExecDestroy
#define gpuGraphDestroy cudaGraphDestroy
#endif

static void gpu_check_failed(gpuError_t e, const char *call, const char *file, int line)
{
    std::fprintf(stderr, "%s error %d %s (%s) in %s at %s:%d\n", GPU_API, (int)e,
                 gpuGetErrorName(e), gpuGetErrorString(e), call, file, line);
    std::exit(1);
}

// Stringified after expansion, so the message names the real API
// (cudaStreamCreate, not gpuStreamCreate).
#define GPU_STRINGIFY_(x) #x
#define GPU_STRINGIFY(x) GPU_STRINGIFY_(x)
#define GPU_CHECK(call)                                                           \
    do {                                                                          \
        gpuError_t gpu_check_err_ = (call);                                       \
        if (gpu_check_err_ != gpuSuccess)                                         \
            gpu_check_failed(gpu_check_err_, GPU_STRINGIFY(call), __FILE__, __LINE__); \
    } while (0)

// A launch is checked through the runtime's last error.
#define GPU_LAUNCH(kernel, grid, block, stream, ...)                               \
    do {                                                                           \
        kernel<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__);                     \
        gpuError_t gpu_launch_err_ = gpuGetLastError();                            \
        if (gpu_launch_err_ != gpuSuccess)                                         \
            gpu_check_failed(gpu_launch_err_, #kernel "<<<>>>", __FILE__, __LINE__); \
    } while (0)

#endif
