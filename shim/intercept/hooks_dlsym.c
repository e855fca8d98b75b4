/* How nvcc's static cudart, cuBLAS and Triton reach the CUDA driver: they
 * dlopen libcuda.so.1, dlsym cuGetProcAddress(_v2) (or an entry point) and
 * fetch every entry point through it. No exported symbol of ours is on that
 * path, so the shim interposes the two lookups themselves:
 *
 *   dlsym(handle, name)        the real dlsym first; a pointer that is the
 *                              real address of a driver symbol we hook, under
 *                              that very name, becomes our wrapper of it;
 *   cuGetProcAddress(_v2)      the real one first; a pointer that is the real
 *                              address of one of the variants the driver
 *                              serves for that base name (the rows of
 *                              OBS_CUDA_DRIVER_PROC_VERSIONS) and that we
 *                              hook becomes our wrapper of that exact variant
 *                              (the driver chose the ABI from version and
 *                              flags; we wrap what it chose).
 *
 * Everything else passes through untouched: failed lookups, unknown names,
 * pointers we do not recognise, the CUDA 2.x variants, other libraries'
 * "cu"-prefixed names (cudnn*, cublas*). Lookups of cuGetProcAddress itself
 * give our wrapper of the form the driver returned.
 *
 * dlsym(RTLD_NEXT, ...) and dlsym(RTLD_DEFAULT, ...) resolve relative to
 * their caller (glibc takes the caller from the return address). On x86-64
 * the exported dlsym is a small assembly trampoline that jumps, not calls,
 * to the C library's dlsym for those two handles, so the caller seen is the
 * application's and the answer is exactly the one it would get without the
 * shim (our exported driver symbols are found there by plain interposition
 * anyway). Elsewhere the C fallback forwards them from inside the shim:
 * RTLD_NEXT then resolves relative to the shim (documented limit).
 *
 * The shim's own lookups use obs_real_dlsym (runtimes/real_dlsym.c: the C
 * library's dlsym, found with dlvsym), never this hook; the trampoline
 * below reads the pointer it keeps. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "abi/cuda_driver_abi.h"
#include "cuda_proc_resolve.h"
#include "hooks_driver.h"
#include "hooks_runtime.h"
#include "deepbind_rebind.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"

OBS_EXPORT obs_CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags);
OBS_EXPORT obs_CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags,
                                            obs_CUdriverProcAddressQueryResult *symbolStatus);

/* ---- recognising driver pointers ---------------------------------------------- */

/* Our hooked driver symbols (the recorded ones, the graph instantiations
 * and the two cuGetProcAddress forms) by name. */
struct hooked_symbol {
    const char *name;
    unsigned index; /* enum obs_real_cudrv_index */
};

static const struct hooked_symbol hooked[] = {
#define OBS_HOOKED_ROW(name, ret, params, args) {#name, OBS_REAL_CUDRV_##name},
    OBS_CUDA_DRIVER_API(OBS_HOOKED_ROW)
#undef OBS_HOOKED_ROW
#define OBS_HOOKED_INSTANTIATE_ROW(name, params, args) {#name, OBS_REAL_CUDRV_##name},
    OBS_CUDRV_INSTANTIATE_API(OBS_HOOKED_INSTANTIATE_ROW)
#undef OBS_HOOKED_INSTANTIATE_ROW
    {"cuGetProcAddress", OBS_REAL_CUDRV_cuGetProcAddress},
    {"cuGetProcAddress_v2", OBS_REAL_CUDRV_cuGetProcAddress_v2},
};
#define HOOKED_COUNT (sizeof hooked / sizeof hooked[0])

/* What cuGetProcAddress serves per base name: the variant symbols. */
struct proc_row {
    const char *base, *symbol;
};
static const struct proc_row proc_rows[] = {
#define OBS_PROC_ROW(base, version, per_thread, symbol) {#base, #symbol},
    OBS_CUDA_DRIVER_PROC_VERSIONS(OBS_PROC_ROW)
#undef OBS_PROC_ROW
};
#define PROC_ROW_COUNT (sizeof proc_rows / sizeof proc_rows[0])

/* Per proc row, the hooked[] entry of its symbol, or -1 (filled once). */
static int proc_row_hooked[PROC_ROW_COUNT];
static pthread_once_t proc_rows_once = PTHREAD_ONCE_INIT;

static int hooked_index_of(const char *name)
{
    size_t i;
    for (i = 0; i < HOOKED_COUNT; i++)
        if (strcmp(hooked[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void proc_rows_setup(void)
{
    size_t i;
    for (i = 0; i < PROC_ROW_COUNT; i++)
        proc_row_hooked[i] = hooked_index_of(proc_rows[i].symbol);
}

static obs_CUresult proc_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags);
static obs_CUresult proc_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags,
                                             obs_CUdriverProcAddressQueryResult *symbolStatus);

/* Our wrapper of hooked[h], or NULL. */
static void *wrapper_of(int h)
{
    unsigned index = hooked[h].index;
    if (index == OBS_REAL_CUDRV_cuGetProcAddress)
        return (void *)cuGetProcAddress;
    if (index == OBS_REAL_CUDRV_cuGetProcAddress_v2)
        return (void *)cuGetProcAddress_v2;
    return obs_driver_wrapper_of(index);
}

/* Our wrapper of hooked[h] for calls through a pointer the driver handed
 * out through cuGetProcAddress (kept by obs_cudrv_proc_claim), or NULL. */
static void *proc_wrapper_of(int h)
{
    unsigned index = hooked[h].index;
    if (index == OBS_REAL_CUDRV_cuGetProcAddress)
        return (void *)proc_cuGetProcAddress;
    if (index == OBS_REAL_CUDRV_cuGetProcAddress_v2)
        return (void *)proc_cuGetProcAddress_v2;
    return obs_driver_proc_wrapper_of(index);
}

/* fn, or our wrapper when fn is the real address of hooked[h]. */
static void *wrap_if_real(int h, void *fn)
{
    void *wrapper;
    if (h < 0 || fn != obs_real_get(&obs_real_cudrv, hooked[h].index))
        return fn;
    wrapper = wrapper_of(h);
    return wrapper != NULL ? wrapper : fn;
}

/* ---- recognising runtime pointers (CUDA runtime, HIP) ------------------------- */

/* A program may fetch runtime entry points itself: ctypes.CDLL("libcudart.so.13")
 * .cudaMemcpy, a plugin that dlopens the runtime RTLD_LOCAL and looks its
 * functions up. The same rule as for the driver: the real address of a
 * symbol we hook, under that very name, becomes our wrapper, which calls
 * exactly that address (obs_real_get gives it): one record per call, the
 * runtime's status and errno. */
struct runtime_family {
    struct obs_real_table *table;
    void *(*wrapper_of)(unsigned index);
};

static const struct runtime_family runtime_families[] = {
    {&obs_real_cuda, obs_cudart_wrapper_of},
    {&obs_real_hip, obs_hip_wrapper_of},
    {&obs_real_nccl, obs_nccl_wrapper_of},
};
#define RUNTIME_FAMILY_COUNT (sizeof runtime_families / sizeof runtime_families[0])

/* The index of the entry of t whose symbol is name, or -1. */
static int runtime_index_of(const struct obs_real_table *t, const char *name)
{
    unsigned i;
    for (i = 0; i < t->count; i++) {
        const char *symbol = t->symbols != NULL && t->symbols[i] != NULL ? t->symbols[i] : t->names[i];
        if (strcmp(symbol, name) == 0)
            return (int)i;
    }
    return -1;
}

/* Could name be a runtime symbol we hook? (cuda*, __cuda*, hip*, __hip*,
 * HIP's one C++ symbol, and NCCL's nccl*.) */
static bool runtime_prefix(const char *name)
{
    if (name[0] == 'n')
        return strncmp(name, "nccl", 4) == 0;
    if (name[0] == '_' && name[1] == '_')
        name += 2;
    return strncmp(name, "cuda", 4) == 0 || strncmp(name, "hip", 3) == 0 || strncmp(name, "_Z24hip", 7) == 0;
}

void *obs_runtime_hook_of(const char *name, void **real)
{
    size_t f;
    if (name == NULL || !runtime_prefix(name))
        return NULL;
    for (f = 0; f < RUNTIME_FAMILY_COUNT; f++) {
        int index = runtime_index_of(runtime_families[f].table, name);
        void *wrapper;
        if (index < 0)
            continue;
        wrapper = runtime_families[f].wrapper_of((unsigned)index);
        if (wrapper == NULL)
            return NULL;
        *real = obs_real_get(runtime_families[f].table, (unsigned)index);
        return *real != NULL ? wrapper : NULL;
    }
    return NULL;
}

void *obs_driver_hook_of(const char *name, void **real)
{
    int h;
    void *wrapper;
    if (name == NULL || name[0] != 'c' || name[1] != 'u' || (h = hooked_index_of(name)) < 0)
        return NULL;
    wrapper = wrapper_of(h);
    *real = obs_real_get(&obs_real_cudrv, hooked[h].index);
    return wrapper != NULL && *real != NULL ? wrapper : NULL;
}

/* dlsym(handle, name) gave fn: wrap it only when it is that very symbol of
 * the driver or of a runtime (NCCL's among them). The cheap test first:
 * every such name starts with "cu", "hip", "__cu", "__hip", "_Z24hip" or
 * "nccl". */
static void *wrap_dlsym_result(const char *name, void *fn)
{
    void *real = NULL, *wrapper;
    if (fn == NULL || name == NULL)
        return fn;
    if (name[0] == 'c' && name[1] == 'u' && (wrapper = obs_driver_hook_of(name, &real)) != NULL)
        return fn == real ? wrapper : fn;
    wrapper = obs_runtime_hook_of(name, &real);
    return wrapper != NULL && fn == real ? wrapper : fn;
}

/* True when fn is the address of an exported symbol not named symbol: that
 * function, whatever the table says (never wrapped under another
 * signature). Internal entry points have no symbol of their own. */
static bool exported_as_other(void *fn, const char *symbol)
{
    Dl_info info;
    return dladdr(fn, &info) != 0 && info.dli_saddr == fn && info.dli_sname != NULL &&
           strcmp(info.dli_sname, symbol) != 0;
}

/* cuGetProcAddress(base, version, flags) gave fn. First by address: the
 * exported symbol of one of the variants served for base (or of base
 * itself) gets that variant's wrapper. Otherwise (an internal entry point)
 * by what the driver served: the variant the table resolves (base,
 * version, flags) to, when we hook it, gets its proc wrapper around fn;
 * anything else passes through. */
static void *wrap_proc_result(const char *base, int version, obs_cuuint64_t flags, void *fn)
{
    size_t i;
    int row, h;
    void *wrapped;

    if (fn == NULL || base == NULL)
        return fn;
    pthread_once(&proc_rows_once, proc_rows_setup);
    for (i = 0; i < PROC_ROW_COUNT; i++)
        if (proc_row_hooked[i] >= 0 && strcmp(proc_rows[i].base, base) == 0 &&
            (wrapped = wrap_if_real(proc_row_hooked[i], fn)) != fn)
            return wrapped;
    if ((wrapped = wrap_if_real(hooked_index_of(base), fn)) != fn)
        return wrapped;
    row = obs_cuda_proc_resolve(base, version, flags);
    h = row >= 0 ? proc_row_hooked[row] : -1;
    if (h < 0 || exported_as_other(fn, proc_rows[row].symbol) || !obs_cudrv_proc_claim(hooked[h].index, fn))
        return fn;
    wrapped = proc_wrapper_of(h);
    return wrapped != NULL ? wrapped : fn;
}

/* After a lookup: hand out our wrapper where one applies (errno kept). */
static obs_CUresult finish_lookup(obs_CUresult status, const char *symbol, void **pfn, int cudaVersion,
                                  obs_cuuint64_t flags)
{
    if (status == OBS_CUDA_SUCCESS && pfn != NULL) {
        struct obs_guard guard;
        void *found = *pfn;
        obs_guard_enter(&guard);
        *pfn = wrap_proc_result(symbol, cudaVersion, flags, *pfn);
        OBS_DEBUG_LOG(INTERCEPT, *pfn != found ? 2 : 3, "cuGetProcAddress %s version %d flags %llu: %s %p",
                      symbol != NULL ? symbol : "(null)", cudaVersion, (unsigned long long)flags,
                      *pfn != found ? "the hook handed out for" : "passed through", found);
        obs_guard_leave(&guard);
    }
    return status;
}

/* ---- the exported lookups --------------------------------------------------------- */

/* A handle lookup (not RTLD_NEXT / RTLD_DEFAULT on x86-64: see above). */
OBS_HIDDEN void *obs_dlsym_hook(void *handle, const char *name);
OBS_HIDDEN __attribute__((used)) void *obs_dlsym_hook(void *handle, const char *name)
{
    struct obs_guard guard;
    void *fn;

    obs_deepbind_rebind(); /* a library opened RTLD_DEEPBIND since the last lookup? (errno kept) */
    fn = obs_real_dlsym(handle, name);
    if (fn == NULL)
        return NULL; /* dlerror() stays the C library's */
    obs_guard_enter(&guard); /* the real dlsym's errno is kept */
    {
        void *found = fn;
        fn = wrap_dlsym_result(name, fn);
        if (fn != found)
            OBS_DEBUG_LOG(INTERCEPT, 2, "dlsym %s: the hook handed out for %p", name, found);
    }
    obs_guard_leave(&guard);
    return fn;
}

#if defined(__x86_64__) && defined(__ELF__)
/* dlsym: RTLD_NEXT ((void *)-1) and RTLD_DEFAULT (0) jump straight to the C
 * library's dlsym (resolving it first if needed, arguments kept), so that
 * its return address, the caller it resolves RTLD_NEXT for, is the
 * application's; any other handle goes to obs_dlsym_hook. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".p2align 4\n"
        "dlsym:\n"
        "    cmpq $-1, %rdi\n"
        "    je 1f\n"
        "    testq %rdi, %rdi\n"
        "    je 1f\n"
        "    jmp obs_dlsym_hook\n"
        "1:  movq obs_dlsym_libc(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jne 2f\n"
        "    pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call obs_dlsym_resolve_libc\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "2:  jmp *%rax\n"
        ".size dlsym, .-dlsym\n");
#else
/* Portable fallback: RTLD_NEXT is resolved relative to the shim. */
OBS_EXPORT void *dlsym(void *handle, const char *name)
{
    if (handle == RTLD_NEXT || handle == RTLD_DEFAULT)
        return obs_real_dlsym(handle, name);
    return obs_dlsym_hook(handle, name);
}
#endif

/* CUDA 11.3 - 12.x form (4 arguments). */
OBS_EXPORT obs_CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags)
{
    obs_fn_cuGetProcAddress real = OBS_CUDRV_REAL(cuGetProcAddress);

    if (real == NULL)
        return obs_cudrv_missing(OBS_REAL_CUDRV_cuGetProcAddress);
    return finish_lookup(real(symbol, pfn, cudaVersion, flags), symbol, pfn, cudaVersion, flags);
}

/* CUDA 12.0+ form (5 arguments: what cuda.h calls cuGetProcAddress). */
OBS_EXPORT obs_CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags,
                                            obs_CUdriverProcAddressQueryResult *symbolStatus)
{
    obs_fn_cuGetProcAddress_v2 real = OBS_CUDRV_REAL(cuGetProcAddress_v2);

    if (real == NULL)
        return obs_cudrv_missing(OBS_REAL_CUDRV_cuGetProcAddress_v2);
    return finish_lookup(real(symbol, pfn, cudaVersion, flags, symbolStatus), symbol, pfn, cudaVersion, flags);
}

/* The two lookups again, for a cuGetProcAddress(_v2) that the driver handed
 * out through cuGetProcAddress as an internal entry point: they call that. */
static obs_CUresult proc_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags)
{
    obs_fn_cuGetProcAddress real = (obs_fn_cuGetProcAddress)obs_cudrv_proc_fn(OBS_REAL_CUDRV_cuGetProcAddress);

    if (real == NULL)
        return obs_cudrv_missing(OBS_REAL_CUDRV_cuGetProcAddress);
    return finish_lookup(real(symbol, pfn, cudaVersion, flags), symbol, pfn, cudaVersion, flags);
}

static obs_CUresult proc_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags,
                                             obs_CUdriverProcAddressQueryResult *symbolStatus)
{
    obs_fn_cuGetProcAddress_v2 real =
        (obs_fn_cuGetProcAddress_v2)obs_cudrv_proc_fn(OBS_REAL_CUDRV_cuGetProcAddress_v2);

    if (real == NULL)
        return obs_cudrv_missing(OBS_REAL_CUDRV_cuGetProcAddress_v2);
    return finish_lookup(real(symbol, pfn, cudaVersion, flags, symbolStatus), symbol, pfn, cudaVersion, flags);
}
