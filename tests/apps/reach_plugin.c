/* reach_plugin: a library that uses the CUDA and HIP runtimes two ways
 * each, for tests/t_shim_reach (loaded by reach_app with RTLD_LOCAL or
 * RTLD_DEEPBIND): calls to its imported symbols (cudaMalloc, cudaMemcpy,
 * cudaFree; hipMalloc, hipMemcpy, hipFree), and calls through pointers it
 * looks up itself with dlsym on a handle of the runtime (cudaMemset,
 * cudaDeviceSynchronize; hipMemset, hipDeviceSynchronize). Each line it
 * prints is "api status errno" for a call made with errno set to a marker
 * first. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include "abi/cuda_abi.h"
#include "abi/hip_abi.h"

#define ERRNO_MARKER 4242

int reach_plugin_run(int rounds);

static void report(const char *api, int status)
{
    printf("plugin %s %d %d\n", api, status, errno);
    errno = ERRNO_MARKER;
}

/* The same with HIP. */
static int run_hip(int rounds)
{
    static char host[256];
    void *rt = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    obs_fn_hipMemset memset_fn;
    obs_fn_hipDeviceSynchronize sync_fn;
    int i;

    if (rt == NULL)
        return -3;
    memset_fn = (obs_fn_hipMemset)dlsym(rt, "hipMemset");
    sync_fn = (obs_fn_hipDeviceSynchronize)dlsym(rt, "hipDeviceSynchronize");
    if (memset_fn == NULL || sync_fn == NULL)
        return -4;
    errno = ERRNO_MARKER;
    for (i = 0; i < rounds; i++) {
        void *dev = NULL;
        report("hipMalloc", hipMalloc(&dev, sizeof host));
        report("hipMemcpy", hipMemcpy(dev, host, sizeof host, obs_hipMemcpyHostToDevice));
        report("hipMemset", memset_fn(dev, 0, sizeof host));
        report("hipDeviceSynchronize", sync_fn());
        report("hipFree", hipFree(dev));
    }
    report("hipMemset", memset_fn(NULL, 0, 16));
    return 0;
}

__attribute__((visibility("default"))) int reach_plugin_run(int rounds)
{
    static char host[512];
    void *rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    obs_fn_cudaMemset memset_fn;
    obs_fn_cudaDeviceSynchronize sync_fn;
    int i;

    if (rt == NULL)
        return -1;
    memset_fn = (obs_fn_cudaMemset)dlsym(rt, "cudaMemset");
    sync_fn = (obs_fn_cudaDeviceSynchronize)dlsym(rt, "cudaDeviceSynchronize");
    if (memset_fn == NULL || sync_fn == NULL)
        return -2;
    errno = ERRNO_MARKER;
    for (i = 0; i < rounds; i++) {
        void *dev = NULL;
        report("cudaMalloc", cudaMalloc(&dev, sizeof host));
        report("cudaMemcpy", cudaMemcpy(dev, host, sizeof host, obs_cudaMemcpyHostToDevice));
        report("cudaMemset", memset_fn(dev, 0, sizeof host));
        report("cudaDeviceSynchronize", sync_fn());
        report("cudaFree", cudaFree(dev));
    }
    /* An invalid call: its error status comes back unchanged. */
    report("cudaMemset", memset_fn(NULL, 0, 16));
    return run_hip(rounds);
}
