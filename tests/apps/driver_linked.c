/* driver_linked: the call sequence of driver_calls.c through the CUDA
 * driver's exported symbols, linked with -lcuda (the simulated
 * libcuda.so.1, or in principle the real one): each _ptsz/_ptds variant is
 * called by its own symbol, as code built with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM would. Output: DRV_CALLS_SEQUENCE
 * "api status" lines (and "= " value lines), then "calls N failed F";
 * exit 0 when F is 0. */
#include "driver_calls.h"

int cudnnSimFakeEntry(void);

int main(void)
{
    static const struct drv_api api = {
#define LINKED(name, ret, params, args) .name = name,
        OBS_CUDA_DRIVER_API(LINKED) OBS_CUDA_DRIVER_SUPPORT_API(LINKED) OBS_CUDA_DRIVER_LEGACY_API(LINKED)
#undef LINKED
        .cudnnSimFakeEntry = cudnnSimFakeEntry,
    };
    drv_run_calls(&api);
    return drv_finish_report();
}
