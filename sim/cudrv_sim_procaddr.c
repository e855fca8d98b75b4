/* cuGetProcAddress and cuGetProcAddress_v2 of the simulated CUDA driver:
 * entry points served by (base name, CUDA version, flags) from the table
 * OBS_CUDA_DRIVER_PROC_VERSIONS in shim/abi/cuda_driver_abi.h, the way the
 * real driver serves them: the newest variant not newer than the version
 * asked for; with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the
 * _ptsz/_ptds variant where one exists. Every variant is its own exported
 * function, so a pointer tells which one it is.
 *
 * OBS_SIM_PROC_TRAMPOLINES=1 serves instead, per variant, a distinct
 * internal trampoline (a static function that calls the variant's
 * implementation), as a real driver may hand out internal entry points: the
 * pointer then says nothing, and with -Bsymbolic-functions the trampoline
 * never reaches a preloaded shim's exported wrapper.
 *
 * Names that table does not list are served from the rows generated from
 * the toolkit's cudaTypedefs.h (cudrv_sim_names.h, about 630 rows): the
 * same rule, the symbol's exported address, which is either simulated or a
 * logged error stub (cudrv_sim_stubs.c); no trampolines for those. So a
 * lookup fails only for a name CUDA 13.0 does not know, and every lookup
 * is in the log with what it got.
 *
 * Also cudnnSimFakeEntry: an exported symbol named like another library's
 * (cuDNN), reachable through dlsym only, never through cuGetProcAddress. */
#include "cudrv_sim.h"
#include "cudrv_sim_names.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One trampoline per entry point: trampoline_<name> calls <name>. */
#define TRAMPOLINE(name, ret, params, args) \
    static __attribute__((unused)) ret trampoline_##name params \
    {                                       \
        return name args;                   \
    }
OBS_CUDA_DRIVER_API(TRAMPOLINE)
OBS_CUDA_DRIVER_SUPPORT_API(TRAMPOLINE)
OBS_CUDA_DRIVER_LEGACY_API(TRAMPOLINE)
#undef TRAMPOLINE

struct proc_row {
    const char *base;
    int version;
    int per_thread;
    const char *symbol;
    void *fn;
    void *trampoline;
};

static const struct proc_row proc_table[] = {
#define PROC_ROW(base, version, per_thread, symbol) \
    {#base, version, per_thread, #symbol, (void *)symbol, (void *)trampoline_##symbol},
    OBS_CUDA_DRIVER_PROC_VERSIONS(PROC_ROW)
#undef PROC_ROW
};

struct generated_row {
    const char *base;
    int version;
    int per_thread;
    const char *symbol;
};

static const struct generated_row generated_table[] = {
#define GENERATED_ROW(base, version, per_thread, symbol) {#base, version, per_thread, #symbol},
    OBS_CUDRV_SIM_PROC_ROWS(GENERATED_ROW)
#undef GENERATED_ROW
};

/* The table's rule over the generated rows: *pfn set on success. */
static obs_CUresult lookup_generated(const char *symbol, void **pfn, int version, obs_cuuint64_t flags,
                                     obs_CUdriverProcAddressQueryResult *status)
{
    const struct generated_row *best = NULL, *best_pt = NULL;
    int known = 0;
    size_t i;

    for (i = 0; i < sizeof generated_table / sizeof generated_table[0]; i++) {
        const struct generated_row *r = &generated_table[i];
        if (strcmp(r->base, symbol) != 0)
            continue;
        known = 1;
        if (r->version > version)
            continue;
        if (r->per_thread) {
            if (best_pt == NULL || r->version > best_pt->version)
                best_pt = r;
        } else if (best == NULL || r->version > best->version) {
            best = r;
        }
    }
    if ((flags & OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt)
        best = best_pt;
    if (best == NULL || (*pfn = drv_public_symbol(best->symbol)) == NULL) {
        if (status && known)
            *status = OBS_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return OBS_CUDA_ERROR_NOT_FOUND;
    }
    if (status)
        *status = OBS_CU_GET_PROC_ADDRESS_SUCCESS;
    return OBS_CUDA_SUCCESS;
}

static pthread_once_t trampolines_once = PTHREAD_ONCE_INIT;
static int serve_trampolines;

static void read_trampolines_setting(void)
{
    const char *on = getenv("OBS_SIM_PROC_TRAMPOLINES");
    serve_trampolines = on != NULL && strcmp(on, "1") == 0;
}

static obs_CUresult lookup(const char *symbol, void **pfn, int version, obs_cuuint64_t flags,
                           obs_CUdriverProcAddressQueryResult *status)
{
    const struct proc_row *best = NULL, *best_pt = NULL;
    int known = 0;
    size_t i;

    if (status)
        *status = OBS_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (pfn)
        *pfn = NULL;
    if (symbol == NULL || pfn == NULL ||
        (flags & ~(obs_cuuint64_t)(OBS_CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                   OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) ||
        version > DRV_SIM_DRIVER_VERSION)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof proc_table / sizeof proc_table[0]; i++) {
        const struct proc_row *r = &proc_table[i];
        if (strcmp(r->base, symbol) != 0)
            continue;
        known = 1;
        if (r->version > version)
            continue;
        if (r->per_thread) {
            if (best_pt == NULL || r->version > best_pt->version)
                best_pt = r;
        } else if (best == NULL || r->version > best->version) {
            best = r;
        }
    }
    if ((flags & OBS_CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt)
        best = best_pt;
    if (!known)
        return lookup_generated(symbol, pfn, version, flags, status);
    if (best == NULL) {
        if (status && known)
            *status = OBS_CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        return OBS_CUDA_ERROR_NOT_FOUND;
    }
    pthread_once(&trampolines_once, read_trampolines_setting);
    *pfn = serve_trampolines ? best->trampoline : best->fn;
    if (status)
        *status = OBS_CU_GET_PROC_ADDRESS_SUCCESS;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, obs_cuuint64_t flags)
{
    drv_enter();
    return drv_finish("cuGetProcAddress", DRV_KIND_OTHER, symbol, DRV_NO_STREAM, DRV_NO_BYTES,
                      lookup(symbol, pfn, cudaVersion, flags, NULL));
}

DRV_EXPORT obs_CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                            obs_cuuint64_t flags, obs_CUdriverProcAddressQueryResult *symbolStatus)
{
    drv_enter();
    return drv_finish("cuGetProcAddress_v2", DRV_KIND_OTHER, symbol, DRV_NO_STREAM, DRV_NO_BYTES,
                      lookup(symbol, pfn, cudaVersion, flags, symbolStatus));
}

/* Not a driver entry point: a shim must never wrap it for its "cu" prefix. */
DRV_EXPORT int cudnnSimFakeEntry(void);
DRV_EXPORT int cudnnSimFakeEntry(void)
{
    drv_enter();
    return drv_finish("cudnnSimFakeEntry", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, OBS_CUDA_SUCCESS);
}
