/* Prints what libearly_ctor's constructor got from the runtime, then makes
 * one call of its own (t_shim_lifecycle). */
#include <stdio.h>

#include "abi/cuda_abi.h"

extern int early_ctor_status;

int main(void)
{
    printf("early constructor status %d\n", early_ctor_status);
    return cudaDeviceSynchronize() == 0 ? 0 : 1;
}
