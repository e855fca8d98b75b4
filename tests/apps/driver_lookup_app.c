/* driver_lookup_app: what dlsym and cuGetProcAddress hand back, as seen by
 * a program that reaches the CUDA driver like nvcc's static cudart
 * (dlopen("libcuda.so.1"), dlsym, cuGetProcAddress_v2 / cuGetProcAddress).
 * For each lookup it prints one line
 *     LABEL rc RC -> OBJECT SYMBOL
 * OBJECT being the file name (no directory) of the object that holds the
 * pointer returned and SYMBOL its symbol (dladdr), or "- -" for NULL: with
 * the shim preloaded, "libobsshim.so" marks a pointer the shim wrapped,
 * "libcuda.so.1" one it passed through untouched. Exit status 0. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "abi/cuda_driver_abi.h"

static void show(const char *label, int rc, void *fn)
{
    Dl_info info;
    const char *file = "-", *sym = "-";
    if (fn != NULL && dladdr(fn, &info) != 0) {
        file = info.dli_fname ? info.dli_fname : "?";
        if (strrchr(file, '/'))
            file = strrchr(file, '/') + 1;
        sym = info.dli_sname && info.dli_saddr == fn ? info.dli_sname : "?";
    } else if (fn != NULL) {
        file = sym = "?";
    }
    printf("%s rc %d -> %s %s\n", label, rc, file, sym);
}

static void by_dlsym(void *handle, const char *handle_name, const char *name)
{
    char label[256];
    void *fn = dlsym(handle, name);
    snprintf(label, sizeof label, "dlsym %s %s", handle_name, name);
    show(label, fn == NULL ? (dlerror() != NULL ? -1 : -2) : 0, fn);
}

static void by_proc(obs_fn_cuGetProcAddress_v2 v2, obs_fn_cuGetProcAddress v1, const char *name, int version,
                    unsigned flags)
{
    char label[256];
    void *fn = NULL;
    int rc;
    if (v1 != NULL)
        rc = v1(name, &fn, version, flags);
    else
        rc = v2(name, &fn, version, flags, NULL);
    snprintf(label, sizeof label, "%s %s %d %u", v1 ? "proc_v1" : "proc_v2", name, version, flags);
    show(label, rc, fn);
}

int main(void)
{
    static const struct {
        const char *name;
        int version;
        unsigned flags;
    } queries[] = {
        {"cuLaunchKernel", 4000, 0},     {"cuLaunchKernel", 7000, 2},  {"cuLaunchKernel", 13000, 1},
        {"cuLaunchKernelEx", 11060, 0},  {"cuLaunchKernelEx", 11050, 0}, {"cuGraphLaunch", 10000, 2},
        {"cuMemcpyHtoD", 3000, 0},       {"cuMemcpyHtoD", 3020, 0},    {"cuMemcpyHtoD", 7000, 2},
        {"cuMemsetD8", 2000, 0},         {"cuMemsetD8", 13000, 2},     {"cuCtxSynchronize", 13000, 0},
        {"cuCtxSynchronize", 12090, 0},  {"cuInit", 2000, 0},          {"cuGetProcAddress", 11030, 0},
        {"cuGetProcAddress", 12000, 0},  {"cudnnSimFakeEntry", 13000, 0}, {"cuNoSuchEntry", 13000, 0},
        {"cuLaunchKernel", 13010, 0},
    };
    static const char *const dlsym_names[] = {"cuLaunchKernel",  "cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD",
                                              "cuInit",          "cudnnSimFakeEntry",    "cuGetProcAddress",
                                              "cuGetProcAddress_v2", "cuNoSuchEntry"};
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    obs_fn_cuGetProcAddress_v2 v2;
    obs_fn_cuGetProcAddress v1;
    size_t i;

    if (lib == NULL) {
        fprintf(stderr, "driver_lookup_app: %s\n", dlerror());
        return 1;
    }
    for (i = 0; i < sizeof dlsym_names / sizeof dlsym_names[0]; i++)
        by_dlsym(lib, "libcuda", dlsym_names[i]);
    /* RTLD_NEXT / RTLD_DEFAULT resolve relative to this program: libcuda is
     * RTLD_LOCAL, so only what an object of the global scope exports. */
    by_dlsym(RTLD_NEXT, "RTLD_NEXT", "cuLaunchKernel");
    by_dlsym(RTLD_NEXT, "RTLD_NEXT", "cuInit");
    by_dlsym(RTLD_NEXT, "RTLD_NEXT", "fopen");
    by_dlsym(RTLD_DEFAULT, "RTLD_DEFAULT", "cuLaunchKernel");
    by_dlsym(RTLD_DEFAULT, "RTLD_DEFAULT", "cuInit");
    v2 = (obs_fn_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2");
    v1 = (obs_fn_cuGetProcAddress)dlsym(lib, "cuGetProcAddress");
    if (v2 == NULL || v1 == NULL) {
        fprintf(stderr, "driver_lookup_app: no cuGetProcAddress in libcuda.so.1\n");
        return 1;
    }
    for (i = 0; i < sizeof queries / sizeof queries[0]; i++)
        by_proc(v2, NULL, queries[i].name, queries[i].version, queries[i].flags);
    by_proc(NULL, v1, "cuLaunchKernel", 12000, 2);
    by_proc(NULL, v1, "cudnnSimFakeEntry", 12000, 0);
    /* A cuGetProcAddress_v2 fetched through cuGetProcAddress_v2 works too. */
    {
        void *again = NULL;
        int rc = v2("cuGetProcAddress", &again, 12000, 0, NULL);
        void *fn = NULL;
        if (rc == 0 && again != NULL)
            rc = ((obs_fn_cuGetProcAddress_v2)again)("cuLaunchKernel", &fn, 13000, 0, NULL);
        show("proc_v2(proc_v2) cuLaunchKernel 13000 0", rc, fn);
    }
    return 0;
}
