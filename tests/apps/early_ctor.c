/* A library whose constructor uses the runtime. Linked into early_app, its
 * constructor runs before a preloaded libobsshim's own (the dynamic linker
 * initialises the preloaded object after the libraries the program links),
 * so these calls reach the shim's wrappers before its constructor: the
 * wrapper must start the library itself and record them (t_shim_lifecycle). */
#include <stddef.h>

#include "abi/cuda_abi.h"

int early_ctor_status = -1;

__attribute__((constructor)) static void early_ctor(void)
{
    void *p = NULL;
    int rc = cudaMalloc(&p, 256);
    if (rc == 0)
        rc = cudaMemset(p, 0, 256);
    if (rc == 0)
        rc = cudaDeviceSynchronize();
    early_ctor_status = rc;
}
