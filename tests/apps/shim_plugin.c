/* shim_plugin: a library that uses the CUDA runtime, for a program that
 * loads it with dlopen(RTLD_LOCAL) (as Python loads torch): the runtime then
 * sits outside the global scope, where dlsym(RTLD_NEXT) cannot see it. The
 * shim must still find the real functions and record the calls. */
#include "abi/cuda_abi.h"

int shim_plugin_run(int rounds);

__attribute__((visibility("default"))) int shim_plugin_run(int rounds)
{
    int i, status = 0;
    for (i = 0; i < rounds && status == 0; i++) {
        void *p = 0;
        status = cudaMalloc(&p, 128);
        if (status == 0)
            status = cudaFree(p);
    }
    return status;
}
