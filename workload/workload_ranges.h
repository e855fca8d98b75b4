// Ground-truth ranges of the reference workload: NVTX3 (header-only) on CUDA,
// roctx found at run time with dlopen on HIP (the HIP build links no roctracer).
// Ranges go to the default domain; they are what obsshim's phases are checked against.
#ifndef OBS_WORKLOAD_RANGES_H
#define OBS_WORKLOAD_RANGES_H

#if defined(__HIP_PLATFORM_AMD__)
#include <dlfcn.h>

struct RocTx {
    int (*push)(const char *) = nullptr;
    int (*pop)() = nullptr;
    bool tried = false;
};

static RocTx &roctx_get()
{
    static RocTx r;
    if (!r.tried) {
        r.tried = true;
        static const char *const libs[] = {"librocprofiler-sdk-roctx.so", "librocprofiler-sdk-roctx.so.1",
                                           "libroctx64.so.4", "libroctx64.so"};
        for (const char *lib : libs) {
            void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
            if (h == nullptr)
                continue;
            r.push = (int (*)(const char *))dlsym(h, "roctxRangePushA");
            r.pop = (int (*)())dlsym(h, "roctxRangePop");
            if (r.push && r.pop)
                break;
            r.push = nullptr;
            r.pop = nullptr;
        }
    }
    return r;
}

static void range_push(bool on, const char *name)
{
    if (on && roctx_get().push)
        roctx_get().push(name);
}
static void range_pop(bool on)
{
    if (on && roctx_get().pop)
        roctx_get().pop();
}
#else
#include <nvtx3/nvToolsExt.h>

static void range_push(bool on, const char *name)
{
    if (on)
        nvtxRangePushA(name);
}
static void range_pop(bool on)
{
    if (on)
        nvtxRangePop();
}
#endif

#endif
