/* Every public driver symbol (the toolkit's stub libcuda.so exports about
 * 640; list in cudrv_sim_names.h), so that a library resolving driver
 * symbols with plain dlsym (cuBLASLt resolves about 90 that way) finds them
 * all. Each name has a weak definition here that logs the call
 * ("<name>	other	stub	-	-	801") and returns CUDA_ERROR_NOT_SUPPORTED; the
 * entry points the simulator implements are strong definitions in the other
 * files and replace these at link time. drv_public_symbol() gives the final
 * address of any name, for cuGetProcAddress.
 *
 * The stubs are declared without parameters: this file must not see the
 * prototypes of cuda_driver_abi.h. */
#define OBS_CUDA_DRIVER_ABI_NO_PROTOTYPES
#include "cudrv_sim.h"
#include "cudrv_sim_names.h"

#include <string.h>

static obs_CUresult stub_called(const char *api)
{
    drv_enter();
    return drv_finish(api, DRV_KIND_OTHER, "stub", DRV_NO_STREAM, DRV_NO_BYTES, OBS_CUDA_ERROR_NOT_SUPPORTED);
}

#define DEFINE_STUB(name)                                            \
    DRV_EXPORT __attribute__((weak, noinline)) obs_CUresult name(void); \
    obs_CUresult name(void)                                          \
    {                                                                \
        return stub_called(#name);                                   \
    }
OBS_CUDRV_SIM_PUBLIC_NAMES(DEFINE_STUB)
#undef DEFINE_STUB

static const struct {
    const char *name;
    void *fn;
} public_symbols[] = {
#define SYMBOL_ROW(name) {#name, (void *)name},
    OBS_CUDRV_SIM_PUBLIC_NAMES(SYMBOL_ROW)
#undef SYMBOL_ROW
};

void *drv_public_symbol(const char *name)
{
    size_t lo = 0, hi = sizeof public_symbols / sizeof public_symbols[0];
    while (lo < hi) { /* the list is sorted (C locale) */
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, public_symbols[mid].name);
        if (c == 0)
            return public_symbols[mid].fn;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}
