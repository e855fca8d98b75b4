/* The call sequence shared by tests/apps/driver_static_like.c (entry points
 * fetched with cuGetProcAddress, as nvcc's static cudart does) and
 * tests/apps/driver_linked.c (linked with -lcuda): one pointer per driver
 * symbol, then the same calls through them. Counts are documented in
 * driver_calls.c and used by tests/t_sim_driver.c. */
#ifndef OBS_DRIVER_CALLS_H
#define OBS_DRIVER_CALLS_H

#include "abi/cuda_driver_abi.h"

/* Calls made by drv_run_calls(), by category (documented in driver_calls.c). */
#define DRV_CALLS_HOOKED 76   /* OBS_CUDA_DRIVER_API: its 67 symbols, 9 of them twice or more */
#define DRV_CALLS_KERNEL 9    /* of which kernel launches (2 captured) */
#define DRV_CALLS_GRAPH 3     /* graph launches */
#define DRV_CALLS_MEMCPY 30
#define DRV_CALLS_MEMSET 25
#define DRV_CALLS_SYNC 9
#define DRV_CALLS_SUPPORT 69  /* OBS_CUDA_DRIVER_SUPPORT_API but cuGetProcAddress* */
#define DRV_CALLS_LEGACY 9    /* OBS_CUDA_DRIVER_LEGACY_API once each: 801 from the simulator */
#define DRV_CALLS_FAKE 1      /* cudnnSimFakeEntry */
#define DRV_CALLS_SEQUENCE (DRV_CALLS_HOOKED + DRV_CALLS_SUPPORT + DRV_CALLS_LEGACY + DRV_CALLS_FAKE)

#define DRV_PREFILL_NAME "_Z14prefill_kernelPfPKfii"
#define DRV_DECODE_NAME "_Z13decode_kernelPfPKfii"

struct drv_api {
#define DRV_API_FIELD(name, ret, params, args) obs_fn_##name name;
    OBS_CUDA_DRIVER_API(DRV_API_FIELD)
    OBS_CUDA_DRIVER_SUPPORT_API(DRV_API_FIELD)
    OBS_CUDA_DRIVER_LEGACY_API(DRV_API_FIELD)
#undef DRV_API_FIELD
    int (*cudnnSimFakeEntry)(void);
};

/* Print "api status" and count the call; a failure when status != wanted. */
void drv_report(const char *api, int status, int wanted);
/* Run the whole sequence through api. */
void drv_run_calls(const struct drv_api *api);
/* Print "calls N failed F"; the exit status: 0 when F is 0, else 1. */
int drv_finish_report(void);

#endif
