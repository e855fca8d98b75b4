/* What tests/t_frameworks_nccl adds to the framework tests' shared pieces
 * (the environment: fw_env.h; the driver's log against a trace:
 * driver_log.h): the start of a run's command line, under the shim or
 * not, and a run in a child process while the test makes another. */
#ifndef OBS_TESTS_FW_COMMON_H
#define OBS_TESTS_FW_COMMON_H

#include <stddef.h>

#include "fw_env.h"
#include "tap/process.h"

/* The start of a run's command and environment: under the shim `obs-run
 * --sim -o prefix --` and the NVTX test tool (the build's
 * tests/nvtx_inject library); without it the simulated driver first in
 * LD_LIBRARY_PATH, no banner. Appended to argv at *a and to env at *e; l
 * holds the entries' text. */
struct fw_launch {
    char inject_env[4400], path_env[4400];
};
void fw_launch_start(struct fw_launch *l, const struct fw_env *fw, int shim, const char *prefix, const char **argv,
                     size_t *a, const char **env, size_t *e);

/* A run that goes on in a child process while the test makes another
 * (the two cores halve the wait): run(arg, res) there, its stdout and
 * stderr back in files named after base (base.out, base.err). */
struct fw_job {
    int pid;
    char out[4400], err[4400];
};
void fw_job_start(struct fw_job *job, const char *base, void (*run)(void *arg, struct run_result *res), void *arg);
/* 1 when the run exited 0 (else its stderr goes to diag); *out its stdout
 * (malloc'ed). */
int fw_job_wait(const char *label, struct fw_job *job, char **out);

#endif
