// A cuBLAS program with a known number of GEMMs, built by nvcc with its
// default static cudart and linked with NVIDIA's libcublas.so.13: what
// tests/t_real_cudart runs over the simulated driver (sim/,
// libcuda.so.1), where cuBLAS's kernels reach the driver with their own
// names but are not executed.
//
// Calls: CUBLAS_GEMM_SGEMM cublasSgemm and CUBLAS_GEMM_EX cublasGemmEx
// (FP32 in, FP32 out), each on the handle's stream, then one
// cudaStreamSynchronize; inputs copied in with cudaMemcpy, the result
// copied out with cudaMemcpy. Prints one line (the same on a GPU: no value
// computed by a kernel is printed) and exits 0 when every call succeeded.
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CUBLAS_GEMM_SGEMM 5
#define CUBLAS_GEMM_EX 3
#define GEMM_N 256

static int failures;

static void check_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error %d %s in %s\n", (int)e, cudaGetErrorName(e), what);
        failures++;
    }
}

static void check_blas(cublasStatus_t s, const char *what)
{
    if (s != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cuBLAS error %d in %s\n", (int)s, what);
        failures++;
    }
}

int main()
{
    const int n = GEMM_N;
    const size_t bytes = sizeof(float) * n * n;
    float *host = static_cast<float *>(std::malloc(bytes));
    float *a = nullptr, *b = nullptr, *c = nullptr;
    const float alpha = 1.0f, beta = 0.0f;
    cublasHandle_t handle = nullptr;
    cudaStream_t stream = nullptr;
    int sgemm = 0, gemm_ex = 0;

    if (host == nullptr)
        return 2;
    for (int i = 0; i < n * n; i++)
        host[i] = (float)(i % 17) * 0.25f;
    check_cuda(cudaMalloc(&a, bytes), "cudaMalloc a");
    check_cuda(cudaMalloc(&b, bytes), "cudaMalloc b");
    check_cuda(cudaMalloc(&c, bytes), "cudaMalloc c");
    check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
    check_cuda(cudaMemcpy(a, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy a");
    check_cuda(cudaMemcpy(b, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy b");
    check_blas(cublasCreate(&handle), "cublasCreate");
    check_blas(cublasSetStream(handle, stream), "cublasSetStream");
    if (failures == 0) {
        for (int i = 0; i < CUBLAS_GEMM_SGEMM; i++) {
            cublasStatus_t s = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
            check_blas(s, "cublasSgemm");
            sgemm += s == CUBLAS_STATUS_SUCCESS;
        }
        for (int i = 0; i < CUBLAS_GEMM_EX; i++) {
            cublasStatus_t s = cublasGemmEx(handle, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_32F, n, b,
                                            CUDA_R_32F, n, &beta, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT);
            check_blas(s, "cublasGemmEx");
            gemm_ex += s == CUBLAS_STATUS_SUCCESS;
        }
    }
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    check_cuda(cudaMemcpy(host, c, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy c");
    if (handle)
        check_blas(cublasDestroy(handle), "cublasDestroy");
    check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    check_cuda(cudaFree(a), "cudaFree a");
    check_cuda(cudaFree(b), "cudaFree b");
    check_cuda(cudaFree(c), "cudaFree c");
    std::free(host);
    std::printf("cublasSgemm %d cublasGemmEx %d n=%d failures %d\n", sgemm, gemm_ex, n, failures);
    return failures == 0 ? 0 : 1;
}
