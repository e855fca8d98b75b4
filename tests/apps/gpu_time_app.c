/* gpu_time_app: a small GPU program for the GPU-time tests, in C against
 * shim/abi/cuda_abi.h (built as gpu_time_app, linked to libcudart.so.13) or
 * shim/abi/hip_abi.h (built with -DOBS_APP_HIP as gpu_time_hip_app, linked
 * to libamdhip64.so.5): launches never synchronised, threads that exit with
 * work pending, an app killed before its work is resolved, the last error
 * as the app sees it, and a quick launch loop. One kernel is registered
 * from a constructor, as nvcc's and hipcc's code does.
 *
 * Usage: gpu_time_app [options]
 *   --launches N   launch N times on a stream (default 10)
 *   --no-sync      make no synchronisation call at all
 *   --threads T    each of T threads makes --launches launches on a stream
 *                  of its own and exits without synchronising
 *   --signal       after the launches, end by SIGTERM sent to itself
 *   --bench N      time N launches (after 1000 to warm up); prints
 *                  "ns_per_launch X"
 *   --last-error   instead, print the last error around valid and failing
 *                  calls: "what status" lines (see last_error_checks)
 * Output: "launches N" and "done" (normal paths). Exit 0, or 1 when a
 * call fails unexpectedly. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef OBS_APP_HIP
#include "abi/hip_abi.h"
typedef obs_hipStream_t app_stream;
typedef obs_hipDim3 app_dim3;
#define APP_SUCCESS obs_hipSuccess
#define app_stream_create hipStreamCreate
#define app_launch hipLaunchKernel
#define app_stream_sync hipStreamSynchronize
#define app_device_sync hipDeviceSynchronize
#define app_get_last_error hipGetLastError
#define app_peek_last_error hipPeekAtLastError
#define app_malloc hipMalloc
#define app_memcpy(d, s, n) hipMemcpy((d), (s), (n), obs_hipMemcpyHostToDevice)
#else
#include "abi/cuda_abi.h"
typedef obs_cudaStream_t app_stream;
typedef obs_dim3 app_dim3;
#define APP_SUCCESS obs_cudaSuccess
#define app_stream_create cudaStreamCreate
#define app_launch cudaLaunchKernel
#define app_stream_sync cudaStreamSynchronize
#define app_device_sync cudaDeviceSynchronize
#define app_get_last_error cudaGetLastError
#define app_peek_last_error cudaPeekAtLastError
#define app_malloc cudaMalloc
#define app_memcpy(d, s, n) cudaMemcpy((d), (s), (n), obs_cudaMemcpyHostToDevice)
#endif

#define KERNEL_NAME "_Z10gpu_kernelPfi"

static volatile int stub_marker;
static void gpu_kernel_stub(void)
{
    stub_marker = 1;
}

#ifdef OBS_APP_HIP
static const char app_code_object[] = "__CLANG_OFFLOAD_BUNDLE__ (fake)";
static const struct obs_hip_fatbin_wrapper app_fatbin = {OBS_HIP_FATBIN_MAGIC, 1, app_code_object, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **modules = __hipRegisterFatBinary(&app_fatbin);
    __hipRegisterFunction(modules, (const void *)gpu_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME,
                          (unsigned int)-1, NULL, NULL, NULL, NULL, NULL);
}
#else
static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)gpu_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}
#endif

static int launch_one(app_stream s, unsigned grid_x)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const app_dim3 grid = {grid_x, 1, 1}, block = {128, 1, 1};
    return (int)app_launch((const void *)gpu_kernel_stub, grid, block, args, 0, s);
}

static void launch_many(long n, app_stream s)
{
    long i;
    for (i = 0; i < n; i++)
        if (launch_one(s, 8) != APP_SUCCESS) {
            fprintf(stderr, "gpu_time_app: launch failed\n");
            exit(1);
        }
}

/* What the app reads as its last error around calls that succeed and fail.
 * The shim's own event calls must leave every value printed unchanged. */
static int last_error_checks(void)
{
    app_stream s = NULL;
    void *dev = NULL;
    char host[256] = {0};

    if (app_stream_create(&s) != APP_SUCCESS || app_malloc(&dev, sizeof host) != APP_SUCCESS)
        return 1;
    printf("launch %d\n", launch_one(s, 8));
    printf("peek after a launch %d\n", (int)app_peek_last_error());
    printf("get after a launch %d\n", (int)app_get_last_error());
    printf("launch with a zero grid %d\n", launch_one(s, 0));
    printf("get after the failed launch %d\n", (int)app_get_last_error());
    printf("get again %d\n", (int)app_get_last_error());
    printf("launch with a zero grid %d\n", launch_one(s, 0));
    printf("launch %d\n", launch_one(s, 8));
    printf("get after a failed then a good launch %d\n", (int)app_get_last_error());
    printf("copy %d\n", (int)app_memcpy(dev, host, sizeof host));
    printf("get after a copy %d\n", (int)app_get_last_error());
    printf("launch with a zero grid %d\n", launch_one(s, 0));
    printf("stream sync %d\n", (int)app_stream_sync(s));
    printf("get after a failed launch and a sync %d\n", (int)app_get_last_error());
    printf("launch %d\n", launch_one(s, 8));
    printf("stream sync %d\n", (int)app_stream_sync(s));
    printf("get after a sync %d\n", (int)app_get_last_error());
    return 0;
}

static void *thread_body(void *arg)
{
    long n = *(const long *)arg;
    app_stream s = NULL;
    if (app_stream_create(&s) != APP_SUCCESS)
        exit(1);
    launch_many(n, s);
    return NULL; /* no sync: the work is pending when the thread exits */
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    long launches = 10, threads = 0, bench = 0, i;
    int no_sync = 0, sig = 0;
    app_stream s = NULL;

    for (i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--launches") == 0 && next)
            launches = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && next)
            threads = atol(argv[++i]);
        else if (strcmp(argv[i], "--bench") == 0 && next)
            bench = atol(argv[++i]);
        else if (strcmp(argv[i], "--no-sync") == 0)
            no_sync = 1;
        else if (strcmp(argv[i], "--signal") == 0)
            sig = 1;
        else if (strcmp(argv[i], "--last-error") == 0)
            return last_error_checks();
        else {
            fprintf(stderr, "usage: gpu_time_app [--launches N] [--no-sync] [--threads T] [--signal] "
                            "[--bench N] [--last-error]\n");
            return 2;
        }
    }
    if (app_stream_create(&s) != APP_SUCCESS)
        return 1;
    if (bench > 0) {
        double t0;
        launch_many(1000, s);
        t0 = now_ns();
        launch_many(bench, s);
        printf("ns_per_launch %.1f\n", (now_ns() - t0) / (double)bench);
    }
    if (threads > 0) {
        pthread_t ids[64];
        for (i = 0; i < threads && i < 64; i++)
            pthread_create(&ids[i], NULL, thread_body, &launches);
        for (i = 0; i < threads && i < 64; i++)
            pthread_join(ids[i], NULL);
    } else {
        launch_many(launches, s);
    }
    printf("launches %ld\n", threads > 0 ? threads * launches : launches);
    fflush(stdout);
    if (sig) {
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    if (!no_sync && app_device_sync() != APP_SUCCESS)
        return 1;
    printf("done\n");
    return 0;
}
