/* The real functions behind the interposed ones, resolved lazily and
 * thread-safely: a wrapper loads its pointer (one atomic load); when it is
 * unset, obs_real_resolve runs the one-time resolver of all tables
 * (pthread_once, also run from the constructor) and, for a symbol still
 * missing, looks again (the runtime may have been dlopen'ed since); errno
 * is left as it was. Lookup order: dlsym(RTLD_NEXT)
 * (the next definition after the shim), then the table's libraries already
 * loaded by the process (dlopen RTLD_NOLOAD), for runtimes opened with
 * RTLD_LOCAL. A symbol found nowhere stays NULL: its wrapper never calls it. */
#ifndef OBS_REAL_SYMBOLS_H
#define OBS_REAL_SYMBOLS_H

#include <stdatomic.h>
#include <stdbool.h>

#include "abi/cuda_abi.h"
#include "abi/cuda_driver_abi.h"
#include "abi/hip_abi.h"
#include "abi/nccl_abi.h"

struct obs_real_table {
    const char *library;        /* for messages: "CUDA runtime" */
    const char *const *sonames; /* NULL-terminated; searched when RTLD_NEXT fails */
    const char *const *names;
    _Atomic(void *) *fns;
    atomic_int *warned; /* one "missing" warning per symbol */
    unsigned count;
    /* NULL, or per index the symbol to look up when it is not the name
     * (an entry point exported with C++ linkage); NULL entries: the name. */
    const char *const *symbols;
};

/* Slow path of obs_real_get. */
void *obs_real_resolve(struct obs_real_table *t, unsigned index);
/* Resolve every symbol of every table now (idempotent, pthread_once). */
void obs_real_resolve_all(void);
/* True when some symbol of t was found: its library is loaded. */
bool obs_real_table_has_any(struct obs_real_table *t);
/* Warn once that t's symbol index is missing and what happens instead. */
void obs_real_warn_missing(struct obs_real_table *t, unsigned index, const char *instead);

static inline void *obs_real_get(struct obs_real_table *t, unsigned index)
{
    void *fn = atomic_load_explicit(&t->fns[index], memory_order_acquire);
    return fn != NULL ? fn : obs_real_resolve(t, index);
}

/* The CUDA runtime table: every entry of OBS_CUDA_RUNTIME_API and
 * OBS_CUDA_RUNTIME_SUPPORT_API (shim/abi/cuda_abi.h). */
enum obs_real_cuda_index {
#define OBS_REAL_CUDA_ENUM(name, ret, params, args) OBS_REAL_CUDA_##name,
    OBS_CUDA_RUNTIME_API(OBS_REAL_CUDA_ENUM) OBS_CUDA_RUNTIME_SUPPORT_API(OBS_REAL_CUDA_ENUM)
#undef OBS_REAL_CUDA_ENUM
    OBS_REAL_CUDA_COUNT
};
extern struct obs_real_table obs_real_cuda;

/* The real function, typed: NULL when the runtime lacks it. */
#define OBS_CUDA_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_cuda, OBS_REAL_CUDA_##name))

/* The HIP runtime table: every entry of OBS_HIP_API and OBS_HIP_SUPPORT_API
 * (shim/abi/hip_abi.h); the entries of OBS_HIP_CXX_SYMBOLS are looked up
 * under their C++ symbol. */
enum obs_real_hip_index {
#define OBS_REAL_HIP_ENUM(name, ret, params, args) OBS_REAL_HIP_##name,
    OBS_HIP_API(OBS_REAL_HIP_ENUM) OBS_HIP_SUPPORT_API(OBS_REAL_HIP_ENUM)
#undef OBS_REAL_HIP_ENUM
    OBS_REAL_HIP_COUNT
};
extern struct obs_real_table obs_real_hip;

#define OBS_HIP_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_hip, OBS_REAL_HIP_##name))

/* The CUDA driver table (libcuda.so.1): every entry of OBS_CUDA_DRIVER_API
 * and OBS_CUDA_DRIVER_SUPPORT_API (shim/abi/cuda_driver_abi.h), each under
 * its exact variant symbol (cuLaunchKernel_ptsz, cuMemcpyHtoD_v2 ...). A
 * driver dlopen'ed with RTLD_LOCAL (nvcc's static cudart) is found by its
 * soname. */
enum obs_real_cudrv_index {
#define OBS_REAL_CUDRV_ENUM(name, ret, params, args) OBS_REAL_CUDRV_##name,
    OBS_CUDA_DRIVER_API(OBS_REAL_CUDRV_ENUM) OBS_CUDA_DRIVER_SUPPORT_API(OBS_REAL_CUDRV_ENUM)
#undef OBS_REAL_CUDRV_ENUM
    OBS_REAL_CUDRV_COUNT
};
extern struct obs_real_table obs_real_cudrv;

#define OBS_CUDRV_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_cudrv, OBS_REAL_CUDRV_##name))

/* The runtimes' profiler control (OBS_CUDA_RUNTIME_PROFILER_API,
 * OBS_CUDA_DRIVER_PROFILER_API, OBS_HIP_PROFILER_API), for OBS_CAPTURE's
 * windows only: three tables of their own, with their family's sonames,
 * that start-up does not resolve (a process that captures nothing pays no
 * lookup for them); each symbol is looked up at its first use. */
#define OBS_REAL_PROF_ENUM(name, ret, params, args) OBS_REAL_PROF_##name,
enum obs_real_cuda_profiler_index { OBS_CUDA_RUNTIME_PROFILER_API(OBS_REAL_PROF_ENUM) OBS_REAL_CUDA_PROFILER_COUNT };
enum obs_real_cudrv_profiler_index { OBS_CUDA_DRIVER_PROFILER_API(OBS_REAL_PROF_ENUM) OBS_REAL_CUDRV_PROFILER_COUNT };
enum obs_real_hip_profiler_index { OBS_HIP_PROFILER_API(OBS_REAL_PROF_ENUM) OBS_REAL_HIP_PROFILER_COUNT };
#undef OBS_REAL_PROF_ENUM
extern struct obs_real_table obs_real_cuda_profiler, obs_real_cudrv_profiler, obs_real_hip_profiler;

#define OBS_CUDA_PROFILER_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_cuda_profiler, OBS_REAL_PROF_##name))
#define OBS_CUDRV_PROFILER_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_cudrv_profiler, OBS_REAL_PROF_##name))
#define OBS_HIP_PROFILER_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_hip_profiler, OBS_REAL_PROF_##name))

/* The NCCL table (libnccl.so.2): every entry of OBS_NCCL_COLL_API,
 * OBS_NCCL_COMM_API and OBS_NCCL_SUPPORT_API (shim/abi/nccl_abi.h). NCCL is
 * usually loaded after the shim starts (PyTorch's libtorch_cuda.so needs
 * it, RTLD_LOCAL): its symbols are found at their first call, by soname. */
enum obs_real_nccl_index {
#define OBS_REAL_NCCL_ENUM(name, ret, params, args) OBS_REAL_NCCL_##name,
    OBS_NCCL_COLL_API(OBS_REAL_NCCL_ENUM) OBS_NCCL_COMM_API(OBS_REAL_NCCL_ENUM)
        OBS_NCCL_SUPPORT_API(OBS_REAL_NCCL_ENUM)
#undef OBS_REAL_NCCL_ENUM
    OBS_REAL_NCCL_COUNT
};
extern struct obs_real_table obs_real_nccl;

#define OBS_NCCL_REAL(name) ((obs_fn_##name)obs_real_get(&obs_real_nccl, OBS_REAL_NCCL_##name))

/* The C library's dlsym, never the shim's own hook (intercept/hooks_dlsym.c):
 * every lookup the shim makes for itself goes through it (real_dlsym.c). */
typedef void *(*obs_dlsym_fn)(void *handle, const char *name);
void *obs_real_dlsym(void *handle, const char *name);
/* Its address (what a library bound past the shim calls), never NULL. */
void *obs_real_dlsym_address(void);
/* The trampoline of the exported dlsym (x86-64) reads the pointer and, when
 * it is still NULL, calls the resolver. */
extern _Atomic(obs_dlsym_fn) obs_dlsym_libc;
obs_dlsym_fn obs_dlsym_resolve_libc(void);

#endif
