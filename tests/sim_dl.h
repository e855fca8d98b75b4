/* What the tests that drive the simulated driver and NVML in their own
 * process share (tests/t_sim_driver_frameworks, tests/t_sim_gpus): the
 * libraries opened with dlopen, their symbols called by name, the log
 * (OBS_SIM_LOG) searched, and the layouts of cuda.h's cuMem structs the
 * calls take. */
#ifndef OBS_TESTS_SIM_DL_H
#define OBS_TESTS_SIM_DL_H

#include <stddef.h>

#include "abi/cuda_driver_abi.h"

/* The simulated libcuda.so.1 and libnvidia-ml.so.1 the test opened, and
 * the log it set OBS_SIM_LOG to. */
extern void *sim, *nvml;
extern char log_path[4200];

/* name in lib, or bail out. */
void *sym_in(void *lib, const char *name);
/* Lines of the log holding needle. */
size_t log_lines_with(const char *needle);

#define CALL(type, name, ...) (((type)sym_in(sim, #name))(__VA_ARGS__))
#define NVML(type, name, ...) (((type)sym_in(nvml, #name))(__VA_ARGS__))

/* The entry points the tests call, by type. */
typedef int (*fn_addr_free)(obs_CUdeviceptr, size_t);
typedef int (*fn_alloc)(obs_CUdeviceptr *, size_t);
typedef int (*fn_attr)(int *, int, int);
typedef int (*fn_capture_begin)(obs_CUstream, int);
typedef int (*fn_capture_end)(obs_CUstream, obs_CUgraph *);
typedef int (*fn_create)(unsigned long long *, size_t, const void *, unsigned long long);
typedef int (*fn_ctx)(obs_CUcontext);
typedef int (*fn_free)(obs_CUdeviceptr);
typedef int (*fn_granularity)(size_t *, const void *, int);
typedef int (*fn_init)(unsigned);
typedef int (*fn_map)(obs_CUdeviceptr, size_t, size_t, unsigned long long, unsigned long long);
typedef int (*fn_ptr_attr)(void *, int, obs_CUdeviceptr);
typedef int (*fn_release)(unsigned long long);
typedef int (*fn_reserve)(obs_CUdeviceptr *, size_t, size_t, obs_CUdeviceptr, unsigned long long);
typedef int (*fn_retain)(obs_CUcontext *, int);
typedef int (*fn_set_access)(obs_CUdeviceptr, size_t, const void *, size_t);
typedef int (*fn_stream)(obs_CUstream);
typedef int (*fn_unmap)(obs_CUdeviceptr, size_t);

/* CUmemAllocationProp, CUmemAccessDesc. */
struct prop {
    int type, handle_types, loc_type, loc_id;
    void *win32;
    unsigned char compression, rdma;
    unsigned short usage;
    unsigned char reserved[4];
};

struct access_desc {
    int loc_type, loc_id;
    unsigned flags;
};

#endif
