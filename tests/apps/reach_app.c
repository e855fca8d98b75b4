/* reach_app: every way a program reaches the runtime other than calling
 * its global symbols, for tests/t_shim_reach. The program links no
 * runtime. Usage: reach_app MODE ROUNDS [PLUGIN]
 *   cuda-handle   dlopen("libcudart.so.13", RTLD_LOCAL), every entry point
 *                 looked up with dlsym on that handle: kernel registration,
 *                 cudaMalloc, cudaMemcpy (both ways), cudaMemset,
 *                 cudaMemcpyAsync, cudaLaunchKernel, cudaStreamSynchronize,
 *                 cudaDeviceSynchronize, cudaFree
 *   hip-handle    the same with dlopen("libamdhip64.so.5")
 *   both          libcudart.so.13 opened RTLD_GLOBAL: each call made once
 *                 through dlsym(handle) and once through the global symbol
 *                 (dlsym(RTLD_DEFAULT)), interleaved
 *   local PLUGIN  dlopen(PLUGIN, RTLD_LOCAL), run reach_plugin_run(ROUNDS)
 *   deepbind PLUGIN  the same with RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND
 *   deepbind-lazy PLUGIN  RTLD_LAZY | RTLD_LOCAL | RTLD_DEEPBIND (its PLT
 *                 slots not bound yet when the shim rebinds them)
 * Prints "api status errno" per call (errno set to a marker before each
 * call), then "done". Exit 0, or 1 when something could not be loaded. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_abi.h"
#include "abi/hip_abi.h"

#define ERRNO_MARKER 4242
#define KERNEL_NAME "_Z12reach_kernelPfi"

static void report(const char *api, long status)
{
    printf("%s %ld %d\n", api, status, errno);
    errno = ERRNO_MARKER;
}

static void *need(void *handle, const char *name)
{
    void *fn = dlsym(handle, name);
    if (fn == NULL) {
        fprintf(stderr, "reach_app: %s: %s\n", name, dlerror());
        exit(1);
    }
    return fn;
}

static void *open_lib(const char *name, int flags)
{
    void *h = dlopen(name, flags);
    if (h == NULL) {
        fprintf(stderr, "reach_app: %s\n", dlerror());
        exit(1);
    }
    return h;
}

static volatile int stub_marker;
static void reach_kernel_stub(void)
{
    stub_marker = 1;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

#define LOOKUP(h, name) obs_fn_##name name##_fn = (obs_fn_##name)need(h, #name)

static void cuda_handle(int rounds)
{
    void *rt = open_lib("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    LOOKUP(rt, __cudaRegisterFatBinary);
    LOOKUP(rt, __cudaRegisterFunction);
    LOOKUP(rt, __cudaRegisterFatBinaryEnd);
    LOOKUP(rt, cudaMalloc);
    LOOKUP(rt, cudaMemcpy);
    LOOKUP(rt, cudaMemcpyAsync);
    LOOKUP(rt, cudaMemset);
    LOOKUP(rt, cudaLaunchKernel);
    LOOKUP(rt, cudaStreamSynchronize);
    LOOKUP(rt, cudaDeviceSynchronize);
    LOOKUP(rt, cudaFree);
    static char host[1024];
    const obs_dim3 grid = {8, 1, 1}, block = {32, 1, 1};
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    void **module = __cudaRegisterFatBinary_fn(&fake_wrapper);
    int i;

    __cudaRegisterFunction_fn(module, (const char *)reach_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1, NULL,
                              NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd_fn(module);
    errno = ERRNO_MARKER;
    for (i = 0; i < rounds; i++) {
        void *dev = NULL;
        report("cudaMalloc", cudaMalloc_fn(&dev, sizeof host));
        report("cudaMemcpy", cudaMemcpy_fn(dev, host, sizeof host, obs_cudaMemcpyHostToDevice));
        report("cudaMemset", cudaMemset_fn(dev, 1, sizeof host));
        report("cudaMemcpyAsync", cudaMemcpyAsync_fn(host, dev, sizeof host, obs_cudaMemcpyDeviceToHost, NULL));
        report("cudaLaunchKernel", cudaLaunchKernel_fn((const void *)reach_kernel_stub, grid, block, args, 0, NULL));
        report("cudaStreamSynchronize", cudaStreamSynchronize_fn(NULL));
        report("cudaMemcpy", cudaMemcpy_fn(host, dev, sizeof host, obs_cudaMemcpyDeviceToHost));
        report("cudaDeviceSynchronize", cudaDeviceSynchronize_fn());
        report("cudaFree", cudaFree_fn(dev));
    }
    /* Failing calls: the runtime's error status comes back unchanged. */
    report("cudaMemcpy", cudaMemcpy_fn(NULL, host, 16, (obs_cudaMemcpyKind)77));
    report("cudaFree", cudaFree_fn((void *)0x1234));
}

static void hip_handle(int rounds)
{
    void *rt = open_lib("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    LOOKUP(rt, hipMalloc);
    LOOKUP(rt, hipMemcpy);
    LOOKUP(rt, hipMemset);
    LOOKUP(rt, hipDeviceSynchronize);
    LOOKUP(rt, hipFree);
    static char host[1024];
    int i;

    errno = ERRNO_MARKER;
    for (i = 0; i < rounds; i++) {
        void *dev = NULL;
        report("hipMalloc", hipMalloc_fn(&dev, sizeof host));
        report("hipMemcpy", hipMemcpy_fn(dev, host, sizeof host, obs_hipMemcpyHostToDevice));
        report("hipMemset", hipMemset_fn(dev, 0, sizeof host));
        report("hipMemcpy", hipMemcpy_fn(host, dev, sizeof host, obs_hipMemcpyDeviceToHost));
        report("hipDeviceSynchronize", hipDeviceSynchronize_fn());
        report("hipFree", hipFree_fn(dev));
    }
    report("hipMemcpy", hipMemcpy_fn(NULL, host, 16, (obs_hipMemcpyKind)77));
}

static void both(int rounds)
{
    void *rt = open_lib("libcudart.so.13", RTLD_NOW | RTLD_GLOBAL);
    obs_fn_cudaMemcpy by_handle = (obs_fn_cudaMemcpy)need(rt, "cudaMemcpy");
    obs_fn_cudaMemcpy global = (obs_fn_cudaMemcpy)need(RTLD_DEFAULT, "cudaMemcpy");
    obs_fn_cudaMalloc malloc_fn = (obs_fn_cudaMalloc)need(RTLD_DEFAULT, "cudaMalloc");
    obs_fn_cudaFree free_fn = (obs_fn_cudaFree)need(rt, "cudaFree");
    static char host[256];
    void *dev = NULL;
    int i;

    errno = ERRNO_MARKER;
    report("cudaMalloc", malloc_fn(&dev, sizeof host));
    for (i = 0; i < rounds; i++) {
        report("cudaMemcpy", by_handle(dev, host, sizeof host, obs_cudaMemcpyHostToDevice));
        report("cudaMemcpy", global(host, dev, sizeof host, obs_cudaMemcpyDeviceToHost));
    }
    report("cudaFree", free_fn(dev));
}

static void plugin(const char *path, int flags, int rounds)
{
    void *lib = open_lib(path, flags);
    int (*run)(int) = (int (*)(int))need(lib, "reach_plugin_run");
    printf("reach_plugin_run %d\n", run(rounds));
}

int main(int argc, char **argv)
{
    int rounds = argc > 2 ? atoi(argv[2]) : 0;
    if (argc < 3 || rounds < 0) {
        fprintf(stderr, "usage: reach_app cuda-handle|hip-handle|both|local|deepbind ROUNDS [PLUGIN]\n");
        return 2;
    }
    if (strcmp(argv[1], "cuda-handle") == 0)
        cuda_handle(rounds);
    else if (strcmp(argv[1], "hip-handle") == 0)
        hip_handle(rounds);
    else if (strcmp(argv[1], "both") == 0)
        both(rounds);
    else if (strcmp(argv[1], "local") == 0 && argc > 3)
        plugin(argv[3], RTLD_NOW | RTLD_LOCAL, rounds);
    else if (strcmp(argv[1], "deepbind") == 0 && argc > 3)
        plugin(argv[3], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND, rounds);
    else if (strcmp(argv[1], "deepbind-lazy") == 0 && argc > 3)
        plugin(argv[3], RTLD_LAZY | RTLD_LOCAL | RTLD_DEEPBIND, rounds);
    else {
        fprintf(stderr, "reach_app: unknown mode %s\n", argv[1]);
        return 2;
    }
    printf("done\n");
    return 0;
}
