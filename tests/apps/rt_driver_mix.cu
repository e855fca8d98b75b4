// A program that mixes the CUDA runtime (nvcc's default static cudart,
// <<<>>> launches, cudaMemcpy ...) with direct driver calls (linked with
// -lcuda): a runtime kernel launched again through cuLaunchKernel with the
// CUfunction cudaGetFuncBySymbol gives, driver copies and memsets on the
// runtime's stream, events of both APIs. tests/t_real_cudart runs it over
// the simulated driver; every launch, copy, memset and synchronisation
// below must be recorded once by the shim.
//
// Only what does not depend on a kernel's own work is checked and printed
// (copies and memsets round-trip through device memory), so the output is
// the same on a GPU and on the simulated driver.
#include <cstdio>
#include <cstring>

#include <cuda.h>
#include <cuda_runtime.h>

#define MIX_N 4096

__global__ void scale_kernel(float *x, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= factor;
}

__global__ void add_kernel(float *x, const float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += y[i];
}

static int failures;

static void rt(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "runtime error %d %s in %s\n", (int)e, cudaGetErrorName(e), what);
        failures++;
    }
}

static void drv(CUresult e, const char *what)
{
    if (e != CUDA_SUCCESS) {
        const char *name = "?";
        cuGetErrorName(e, &name);
        std::fprintf(stderr, "driver error %d %s in %s\n", (int)e, name, what);
        failures++;
    }
}

int main()
{
    const size_t bytes = sizeof(float) * MIX_N;
    static float host[MIX_N], back[MIX_N];
    float *rt_buf = nullptr, *rt_buf2 = nullptr;
    CUdeviceptr drv_buf = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    CUevent drv_event = nullptr;
    CUcontext ctx = nullptr;
    cudaFunction_t add_fn = nullptr;
    int n = MIX_N, roundtrip_ok, memset_ok = 1;
    unsigned blocks = (MIX_N + 255) / 256;

    for (int i = 0; i < MIX_N; i++)
        host[i] = (float)i;

    // The runtime creates the primary context; the driver works in it.
    rt(cudaSetDevice(0), "cudaSetDevice");
    rt(cudaFree(0), "cudaFree(0)");
    drv(cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
    if (ctx == nullptr) {
        std::fprintf(stderr, "no current context after the runtime's initialisation\n");
        failures++;
    }
    rt(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    rt(cudaEventCreate(&start), "cudaEventCreate start");
    rt(cudaEventCreate(&stop), "cudaEventCreate stop");
    drv(cuEventCreate(&drv_event, CU_EVENT_DEFAULT), "cuEventCreate");
    rt(cudaMalloc(&rt_buf, bytes), "cudaMalloc");
    rt(cudaMalloc(&rt_buf2, bytes), "cudaMalloc 2");
    drv(cuMemAlloc(&drv_buf, bytes), "cuMemAlloc");

    // Runtime: copy in, launch (<<<>>>), memset.
    rt(cudaEventRecord(start, stream), "cudaEventRecord start");
    rt(cudaMemcpyAsync(rt_buf, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync HtoD");
    scale_kernel<<<blocks, 256, 0, stream>>>(rt_buf2, 2.0f, n);
    rt(cudaGetLastError(), "scale_kernel launch");
    rt(cudaMemsetAsync(rt_buf2, 0, bytes, stream), "cudaMemsetAsync");

    // Driver: the runtime's kernel through its CUfunction, on the runtime's stream.
    rt(cudaGetFuncBySymbol(&add_fn, (const void *)add_kernel), "cudaGetFuncBySymbol");
    {
        void *args[] = {&rt_buf2, &rt_buf2, &n};
        drv(cuLaunchKernel((CUfunction)add_fn, blocks, 1, 1, 256, 1, 1, 0, (CUstream)stream, args, nullptr),
            "cuLaunchKernel");
    }
    drv(cuMemcpyDtoDAsync(drv_buf, (CUdeviceptr)rt_buf, bytes, (CUstream)stream), "cuMemcpyDtoDAsync");
    drv(cuEventRecord(drv_event, (CUstream)stream), "cuEventRecord");
    drv(cuStreamWaitEvent(nullptr, drv_event, 0), "cuStreamWaitEvent");
    drv(cuMemsetD32(drv_buf + bytes / 2, 0x3f800000u, MIX_N / 2), "cuMemsetD32"); // 1.0f in the upper half

    // Both: a runtime launch again, a driver copy out, a runtime copy out.
    scale_kernel<<<blocks, 256, 0, stream>>>(rt_buf2, 0.5f, n);
    rt(cudaEventRecord(stop, stream), "cudaEventRecord stop");
    rt(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    drv(cuMemcpyDtoH(back, drv_buf, bytes), "cuMemcpyDtoH");
    roundtrip_ok = std::memcmp(back, host, bytes / 2) == 0;
    for (int i = MIX_N / 2; i < MIX_N; i++)
        memset_ok &= back[i] == 1.0f;
    rt(cudaMemcpy(back, rt_buf, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy DtoH");
    roundtrip_ok &= std::memcmp(back, host, bytes) == 0;
    drv(cuCtxSynchronize(), "cuCtxSynchronize");
    rt(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    {
        float ms = -1.0f;
        rt(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        if (!(ms >= 0.0f))
            failures++;
    }
    drv(cuMemFree(drv_buf), "cuMemFree");
    rt(cudaFree(rt_buf), "cudaFree");
    rt(cudaFree(rt_buf2), "cudaFree 2");
    drv(cuEventDestroy(drv_event), "cuEventDestroy");
    rt(cudaEventDestroy(start), "cudaEventDestroy start");
    rt(cudaEventDestroy(stop), "cudaEventDestroy stop");
    rt(cudaStreamDestroy(stream), "cudaStreamDestroy");
    std::printf("runtime+driver: 3 launches, 4 copies, 2 memsets; round trip %s, memset %s, failures %d\n",
                roundtrip_ok ? "ok" : "WRONG", memset_ok ? "ok" : "WRONG", failures);
    return failures == 0 && roundtrip_ok && memset_ok ? 0 : 1;
}
