/* Where the tests find the reference workload binaries and the simulated
 * runtimes, and why a binary is missing (for skip messages). */
#ifndef OBS_TESTS_WORKLOAD_BINS_H
#define OBS_TESTS_WORKLOAD_BINS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap/basic.h"
#include "tap/process.h"

struct workload_bin {
    const char *label;    /* obs_cuda, obs_cuda_static, obs_hip */
    const char *compiler; /* env var naming the compiler that builds it */
    int needs_sim;        /* 1: dynamically linked runtime, run it on the simulator */
};

static const struct workload_bin workload_bins[] = {
    {"obs_cuda", "OBS_NVCC", 1},
    {"obs_cuda_static", "OBS_NVCC", 0},
    {"obs_hip", "OBS_HIPCC", 1},
};
#define WORKLOAD_BIN_COUNT (sizeof workload_bins / sizeof workload_bins[0])

/* Path of a workload binary, or NULL with *why set when it was not built. */
static inline const char *workload_path(const struct workload_bin *b, const char **why)
{
    static char path[4096];
    const char *cc = getenv(b->compiler);
    snprintf(path, sizeof path, "%s/workload/%s", test_builddir(), b->label);
    if (test_executable(path))
        return path;
    if (cc == NULL || *cc == '\0')
        *why = strcmp(b->compiler, "OBS_NVCC") == 0 ? "nvcc not found by configure (no CUDA toolkit)"
                                                    : "hipcc not found by configure (no HIP toolkit)";
    else
        *why = "workload binary not built";
    return NULL;
}

/* "LD_LIBRARY_PATH=<build>/sim/.libs" for running on the simulators. */
static inline const char *sim_library_path_env(void)
{
    static char env[4200];
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s/sim/.libs", test_builddir());
    return env;
}

#endif
