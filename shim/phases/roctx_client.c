/* roctx, found at run time: the shim is never linked against ROCm (Debian
 * ships no roctracer). The first library that loads and has both
 * roctxRangePushA and roctxRangePop is used; rocprof (v1-v3) then shows
 * obsshim's ranges like any roctx range. roctx has no domains: our ranges
 * share the thread's roctx stack with the application's. */
#include "range_sinks.h"

#include "runtimes/real_symbols.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

typedef int (*roctx_push_fn)(const char *message);
typedef int (*roctx_pop_fn)(void);

static roctx_push_fn roctx_push;
static roctx_pop_fn roctx_pop;
static atomic_bool roctx_loaded;

/* rocprofiler-sdk's roctx first (ROCm 6.2+), then the roctracer one. */
static const char *const roctx_libraries[] = {
    "librocprofiler-sdk-roctx.so",
    "librocprofiler-sdk-roctx.so.1",
    "libroctx64.so.4",
    "libroctx64.so",
};

bool obs_roctx_load(void)
{
    for (size_t i = 0; i < sizeof roctx_libraries / sizeof roctx_libraries[0]; i++) {
        void *lib = dlopen(roctx_libraries[i], RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL)
            continue;
        void *push = obs_real_dlsym(lib, "roctxRangePushA");
        void *pop = obs_real_dlsym(lib, "roctxRangePop");
        if (push != NULL && pop != NULL) {
            memcpy(&roctx_push, &push, sizeof roctx_push);
            memcpy(&roctx_pop, &pop, sizeof roctx_pop);
            atomic_store_explicit(&roctx_loaded, true, memory_order_release);
            return true;
        }
        dlclose(lib);
    }
    (void)dlerror(); /* leave no stale error for the application's dlerror() */
    return false;
}

bool obs_roctx_active(void)
{
    return atomic_load_explicit(&roctx_loaded, memory_order_acquire);
}

/* The empty asm after each call keeps this frame (no tail call): a tool that
 * looks at its caller (dladdr on the return address, as the test stand-in
 * does to tell obsshim's ranges from the application's) then sees the shim. */
void obs_roctx_push(const char *name)
{
    if (!atomic_load_explicit(&roctx_loaded, memory_order_acquire))
        return;
    roctx_push(name);
    __asm__ volatile("" ::: "memory");
}

void obs_roctx_pop(void)
{
    if (!atomic_load_explicit(&roctx_loaded, memory_order_acquire))
        return;
    roctx_pop();
    __asm__ volatile("" ::: "memory");
}
