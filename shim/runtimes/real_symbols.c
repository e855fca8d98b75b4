/* Resolution of the real functions: see real_symbols.h. */
#include "real_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "common/common.h"

/* ---- the tables ------------------------------------------------------------ */

static const char *const cuda_sonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0",
                                           "libcudart.so", NULL};
static const char *const cuda_names[] = {
#define OBS_REAL_CUDA_NAME(name, ret, params, args) #name,
    OBS_CUDA_RUNTIME_API(OBS_REAL_CUDA_NAME) OBS_CUDA_RUNTIME_SUPPORT_API(OBS_REAL_CUDA_NAME)
#undef OBS_REAL_CUDA_NAME
};
static _Atomic(void *) cuda_fns[OBS_REAL_CUDA_COUNT];
static atomic_int cuda_warned[OBS_REAL_CUDA_COUNT];

OBS_HIDDEN struct obs_real_table obs_real_cuda = {
    .library = "CUDA runtime",
    .sonames = cuda_sonames,
    .names = cuda_names,
    .fns = cuda_fns,
    .warned = cuda_warned,
    .count = OBS_REAL_CUDA_COUNT,
    .symbols = NULL,
};

static const char *const hip_sonames[] = {"libamdhip64.so.5", "libamdhip64.so.6", NULL};
static const char *const hip_names[] = {
#define OBS_REAL_HIP_NAME(name, ret, params, args) #name,
    OBS_HIP_API(OBS_REAL_HIP_NAME) OBS_HIP_SUPPORT_API(OBS_REAL_HIP_NAME)
#undef OBS_REAL_HIP_NAME
};
static const char *const hip_symbols[OBS_REAL_HIP_COUNT] = {
#define OBS_REAL_HIP_SYMBOL(name, symbol) [OBS_REAL_HIP_##name] = symbol,
    OBS_HIP_CXX_SYMBOLS(OBS_REAL_HIP_SYMBOL)
#undef OBS_REAL_HIP_SYMBOL
};
static _Atomic(void *) hip_fns[OBS_REAL_HIP_COUNT];
static atomic_int hip_warned[OBS_REAL_HIP_COUNT];

OBS_HIDDEN struct obs_real_table obs_real_hip = {
    .library = "HIP runtime",
    .sonames = hip_sonames,
    .names = hip_names,
    .fns = hip_fns,
    .warned = hip_warned,
    .count = OBS_REAL_HIP_COUNT,
    .symbols = hip_symbols,
};

static const char *const cudrv_sonames[] = {"libcuda.so.1", NULL};
static const char *const cudrv_names[] = {
#define OBS_REAL_CUDRV_NAME(name, ret, params, args) #name,
    OBS_CUDA_DRIVER_API(OBS_REAL_CUDRV_NAME) OBS_CUDA_DRIVER_SUPPORT_API(OBS_REAL_CUDRV_NAME)
#undef OBS_REAL_CUDRV_NAME
};
static _Atomic(void *) cudrv_fns[OBS_REAL_CUDRV_COUNT];
static atomic_int cudrv_warned[OBS_REAL_CUDRV_COUNT];

OBS_HIDDEN struct obs_real_table obs_real_cudrv = {
    .library = "CUDA driver",
    .sonames = cudrv_sonames,
    .names = cudrv_names,
    .fns = cudrv_fns,
    .warned = cudrv_warned,
    .count = OBS_REAL_CUDRV_COUNT,
    .symbols = NULL,
};

/* The profiler control tables (real_symbols.h): outside all_tables, each
 * symbol looked up at its first use. */
#define OBS_REAL_PROF_NAME(name, ret, params, args) #name,
static const char *const cuda_profiler_names[] = {OBS_CUDA_RUNTIME_PROFILER_API(OBS_REAL_PROF_NAME)};
static const char *const cudrv_profiler_names[] = {OBS_CUDA_DRIVER_PROFILER_API(OBS_REAL_PROF_NAME)};
static const char *const hip_profiler_names[] = {OBS_HIP_PROFILER_API(OBS_REAL_PROF_NAME)};
#undef OBS_REAL_PROF_NAME
static _Atomic(void *) cuda_profiler_fns[OBS_REAL_CUDA_PROFILER_COUNT], cudrv_profiler_fns[OBS_REAL_CUDRV_PROFILER_COUNT],
    hip_profiler_fns[OBS_REAL_HIP_PROFILER_COUNT];
static atomic_int profiler_warned[3][2];

OBS_HIDDEN struct obs_real_table obs_real_cuda_profiler = {
    "CUDA runtime", cuda_sonames, cuda_profiler_names, cuda_profiler_fns, profiler_warned[0],
    OBS_REAL_CUDA_PROFILER_COUNT, NULL};
OBS_HIDDEN struct obs_real_table obs_real_cudrv_profiler = {
    "CUDA driver", cudrv_sonames, cudrv_profiler_names, cudrv_profiler_fns, profiler_warned[1],
    OBS_REAL_CUDRV_PROFILER_COUNT, NULL};
OBS_HIDDEN struct obs_real_table obs_real_hip_profiler = {
    "HIP runtime", hip_sonames, hip_profiler_names, hip_profiler_fns, profiler_warned[2],
    OBS_REAL_HIP_PROFILER_COUNT, NULL};

static const char *const nccl_sonames[] = {"libnccl.so.2", "libnccl.so", NULL};
static const char *const nccl_names[] = {
#define OBS_REAL_NCCL_NAME(name, ret, params, args) #name,
    OBS_NCCL_COLL_API(OBS_REAL_NCCL_NAME) OBS_NCCL_COMM_API(OBS_REAL_NCCL_NAME) OBS_NCCL_SUPPORT_API(OBS_REAL_NCCL_NAME)
#undef OBS_REAL_NCCL_NAME
};
static _Atomic(void *) nccl_fns[OBS_REAL_NCCL_COUNT];
static atomic_int nccl_warned[OBS_REAL_NCCL_COUNT];

OBS_HIDDEN struct obs_real_table obs_real_nccl = {
    .library = "NCCL",
    .sonames = nccl_sonames,
    .names = nccl_names,
    .fns = nccl_fns,
    .warned = nccl_warned,
    .count = OBS_REAL_NCCL_COUNT,
    .symbols = NULL,
};

/* Every table, for the one-time resolver. */
static struct obs_real_table *const all_tables[] = {&obs_real_cuda, &obs_real_hip, &obs_real_cudrv, &obs_real_nccl};

/* ---- resolution ------------------------------------------------------------- */

static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

/* The symbol behind entry index of t: its name unless the table says
 * otherwise (C++ linkage). */
static const char *symbol_of(const struct obs_real_table *t, unsigned index)
{
    return t->symbols != NULL && t->symbols[index] != NULL ? t->symbols[index] : t->names[index];
}

/* The next definition after the shim, else one in an already-loaded
 * library of the table (a runtime dlopen'ed with RTLD_LOCAL). */
static void *lookup_symbol(const struct obs_real_table *t, unsigned index)
{
    const char *name = symbol_of(t, index);
    void *fn = obs_real_dlsym(RTLD_NEXT, name);
    const char *const *soname;
    for (soname = t->sonames; fn == NULL && *soname != NULL; soname++) {
        void *lib = dlopen(*soname, RTLD_LAZY | RTLD_NOLOAD);
        if (lib != NULL) {
            fn = obs_real_dlsym(lib, name);
            dlclose(lib); /* RTLD_NOLOAD took a reference: give it back */
        }
    }
    return fn;
}

static void resolve_table(struct obs_real_table *t)
{
    unsigned i, found = 0;
    for (i = 0; i < t->count; i++) {
        if (atomic_load_explicit(&t->fns[i], memory_order_relaxed) == NULL) {
            void *fn = lookup_symbol(t, i);
            if (fn != NULL)
                atomic_store_explicit(&t->fns[i], fn, memory_order_release);
        }
        found += atomic_load_explicit(&t->fns[i], memory_order_relaxed) != NULL;
        OBS_DEBUG_LOG(INTERCEPT, 3, "real %s %s: %p", t->library, symbol_of(t, i),
                      atomic_load_explicit(&t->fns[i], memory_order_relaxed));
    }
    OBS_DEBUG_LOG(INTERCEPT, 1, "resolved the %s: %u of %u hooked entry points found", t->library, found, t->count);
}

static void resolve_every_table(void)
{
    size_t i;
    for (i = 0; i < sizeof all_tables / sizeof all_tables[0]; i++)
        resolve_table(all_tables[i]);
}

void obs_real_resolve_all(void)
{
    pthread_once(&resolve_once, resolve_every_table);
}

void *obs_real_resolve(struct obs_real_table *t, unsigned index)
{
    int saved_errno = errno; /* the app's errno is not ours to change */
    void *fn;
    obs_real_resolve_all();
    fn = atomic_load_explicit(&t->fns[index], memory_order_acquire);
    if (fn == NULL) {
        /* Loaded since? (dlopen after start-up.) Only missing symbols pay this. */
        fn = lookup_symbol(t, index);
        if (fn != NULL) {
            atomic_store_explicit(&t->fns[index], fn, memory_order_release);
            OBS_DEBUG_LOG(INTERCEPT, 1, "resolved %s %s late (loaded after start-up): %p", t->library,
                          symbol_of(t, index), fn);
        }
    }
    errno = saved_errno;
    return fn;
}

bool obs_real_table_has_any(struct obs_real_table *t)
{
    unsigned i;
    for (i = 0; i < t->count; i++)
        if (atomic_load_explicit(&t->fns[i], memory_order_relaxed) != NULL)
            return true;
    return false;
}

void obs_real_warn_missing(struct obs_real_table *t, unsigned index, const char *instead)
{
    obs_log_warn_once(&t->warned[index], "%s: not found in any loaded %s; the call is not made and %s",
                      t->names[index], t->library, instead);
}
