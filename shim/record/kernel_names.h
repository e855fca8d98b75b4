/* Kernel names: a small id per distinct name, stored in CALL records and
 * written into the trace's string table as soon as it is interned (or,
 * when the trace file does not exist yet, when it is created), mangled
 * and, when the process has a C++ runtime, demangled: a trace cut short
 * by SIGKILL names every kernel it records. A name written before the
 * C++ runtime was loaded gets its demangled form at a later window.
 *
 * Sources: __cudaRegisterFunction gives hostFun -> mangled device name at
 * load time; __cudaGetKernel maps a cudaKernel_t to its hostFun; a pointer
 * seen by no registration gets a run-time fallback name (the symbol dladdr
 * finds, else "<kernel 0x...>"), computed once and cached. Lookups on the
 * hot path are lock-free (ptrmap.h); inserts take a mutex. */
#ifndef OBS_KERNEL_NAMES_H
#define OBS_KERNEL_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

extern struct obs_ptrmap obs_names_by_host_fun; /* hostFun -> name id */
extern struct obs_ptrmap obs_names_by_handle;   /* cudaKernel_t (and the like) -> name id */

/* At start-up: look for the C++ demangler. */
void obs_kernel_names_init(void);

/* The id of a name (mangled form); interned on first sight. 0 on failure. */
uint32_t obs_kernel_name_intern(const char *mangled);
/* __cudaRegisterFunction: host stub pointer -> device function name. */
void obs_kernel_names_register(const void *host_fun, const char *device_name);
/* __cudaGetKernel: the handle names what host_fun names. */
void obs_kernel_names_alias(const void *handle, const void *host_fun);
/* hipModuleGetFunction and the like: a function handle -> its name. */
void obs_kernel_names_register_handle(const void *handle, const char *name);

/* The mangled text of name id (as registered), or NULL for an unknown id.
 * Stable once interned; for slow paths (the phase engine classifies each
 * name once). */
const char *obs_kernel_name_mangled(uint32_t id);

/* Slow path of the lookups below: a fallback name, cached. */
uint32_t obs_kernel_name_fallback(const void *ptr, bool is_handle);

/* A launch by host function pointer (which may also be a handle). */
static inline uint32_t obs_kernel_name_of_host_fun(const void *host_fun)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_names_by_host_fun, (uintptr_t)host_fun, &id)) ||
        obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)host_fun, &id))
        return (uint32_t)id;
    return host_fun != NULL ? obs_kernel_name_fallback(host_fun, false) : 0;
}

/* A launch by kernel handle (cudaKernel_t). */
static inline uint32_t obs_kernel_name_of_handle(const void *handle)
{
    uint64_t id;
    if (obs_likely(obs_ptrmap_get(&obs_names_by_handle, (uintptr_t)handle, &id)) ||
        obs_ptrmap_get(&obs_names_by_host_fun, (uintptr_t)handle, &id))
        return (uint32_t)id;
    return handle != NULL ? obs_kernel_name_fallback(handle, true) : 0;
}

/* Under the output lock: write names not yet in this trace, and the
 * demangled forms of names written without one that can now be had.
 * from_signal: no demangling (it allocates). */
void obs_kernel_names_write_pending_locked(bool from_signal);

void obs_kernel_names_fork_prepare(void);
void obs_kernel_names_fork_parent(void);
void obs_kernel_names_fork_child(void); /* the child's trace needs every name again */

#endif
