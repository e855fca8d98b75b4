/* shim_dlopen PLUGIN: load PLUGIN with dlopen(RTLD_NOW | RTLD_LOCAL) and run
 * its shim_plugin_run(3) (3 cudaMalloc + 3 cudaFree); print the status. The
 * program itself links no CUDA runtime. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *lib;
    int (*run)(int);
    if (argc != 2) {
        fprintf(stderr, "usage: shim_dlopen PLUGIN\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "shim_dlopen: %s\n", dlerror());
        return 1;
    }
    run = (int (*)(int))dlsym(lib, "shim_plugin_run");
    if (run == NULL) {
        fprintf(stderr, "shim_dlopen: %s\n", dlerror());
        return 1;
    }
    printf("shim_plugin_run %d\n", run(3));
    return 0;
}
