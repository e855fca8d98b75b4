/* shim_nolib: a program with no CUDA runtime that looks CUDA entry points
 * up at run time (dlsym RTLD_DEFAULT) and calls the ones it finds, twice.
 * Alone it finds none; under the shim it finds the shim's wrappers, whose
 * real functions exist nowhere: they must not crash, must return an error
 * code and leave errno alone.
 * Output per symbol: "NAME absent" or "NAME status S errno-kept K". */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

typedef int (*malloc_fn)(void **ptr, size_t size);
typedef int (*sync_fn)(void);

int main(void)
{
    malloc_fn cuda_malloc = (malloc_fn)dlsym(RTLD_DEFAULT, "cudaMalloc");
    sync_fn cuda_sync = (sync_fn)dlsym(RTLD_DEFAULT, "cudaDeviceSynchronize");
    int round;

    for (round = 0; round < 2; round++) {
        void *p = NULL;
        int status;
        if (cuda_malloc == NULL) {
            printf("cudaMalloc absent\n");
        } else {
            errno = 1234;
            status = cuda_malloc(&p, 64);
            printf("cudaMalloc status %d errno-kept %d\n", status, errno == 1234);
        }
        if (cuda_sync == NULL) {
            printf("cudaDeviceSynchronize absent\n");
        } else {
            errno = 4321;
            status = cuda_sync();
            printf("cudaDeviceSynchronize status %d errno-kept %d\n", status, errno == 4321);
        }
    }
    return 0;
}
