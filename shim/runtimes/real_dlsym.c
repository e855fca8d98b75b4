/* The C library's dlsym, found once with dlvsym: every lookup the shim
 * makes for itself (the real runtimes' entry points, libcupti, the NVTX
 * tool, roctx, the C++ demangler) goes through obs_real_dlsym, never
 * through the dlsym the shim exports (intercept/hooks_dlsym.c), whose
 * RTLD_NEXT / RTLD_DEFAULT trampoline also reads obs_dlsym_libc here. It
 * lives in this layer, not beside the hook, because the layers below the
 * hooks call it (docs/architecture.md, "Layers"). */
#include "real_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "common/common.h"

/* Read by the trampoline: the real dlsym once known. ("used": the
 * trampoline's references are invisible to the compiler.) */
OBS_HIDDEN __attribute__((used)) _Atomic(obs_dlsym_fn) obs_dlsym_libc;

static void *dlsym_unavailable(void *handle, const char *name)
{
    (void)handle;
    (void)name;
    return NULL;
}

/* glibc 2.34 moved dlsym into libc (GLIBC_2.34); older ones have the
 * architecture's base version. Never NULL. Not instrumented: a sanitizer's
 * runtime, preloaded first, calls dlsym(RTLD_NEXT) while it starts. */
OBS_HIDDEN __attribute__((used)) OBS_NO_SANITIZE obs_dlsym_fn obs_dlsym_resolve_libc(void)
{
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
    obs_dlsym_fn fn = atomic_load_explicit(&obs_dlsym_libc, memory_order_acquire);
    size_t i;
    int saved_errno = errno;

    for (i = 0; fn == NULL && i < sizeof versions / sizeof versions[0]; i++)
        fn = (obs_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (fn == NULL)
        fn = dlsym_unavailable;
    atomic_store_explicit(&obs_dlsym_libc, fn, memory_order_release);
    errno = saved_errno;
    return fn;
}

void *obs_real_dlsym(void *handle, const char *name)
{
    obs_dlsym_fn fn = atomic_load_explicit(&obs_dlsym_libc, memory_order_acquire);
    if (fn == NULL)
        fn = obs_dlsym_resolve_libc();
    return fn(handle, name);
}

void *obs_real_dlsym_address(void)
{
    obs_dlsym_fn fn = atomic_load_explicit(&obs_dlsym_libc, memory_order_acquire);
    return (void *)(fn != NULL ? fn : obs_dlsym_resolve_libc());
}
