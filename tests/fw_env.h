/* The frameworks' Python environment (torch and transformers in a virtual
 * environment: contrib/install-deps --frameworks makes it), for the tests
 * that run tests/frameworks/ scripts on the simulated driver under
 * contrib/obs-run --sim: t_frameworks, t_frameworks_kill and
 * t_frameworks_nccl (which needs torchrun there too). */
#ifndef OBS_TESTS_FW_ENV_H
#define OBS_TESTS_FW_ENV_H

struct fw_env {
    char dir[4100];        /* $OBS_FRAMEWORKS_ENV, else $HOME/.cache/obsshim/frameworks */
    char python[4200];     /* its bin/python */
    char versions[256];    /* "torch 2.15.0 cuda 13.2 transformers 5.24.0" */
    char obs_run[4300];    /* the build's contrib/obs-run */
    char driver_dir[4300]; /* sim/driver */
    char scripts[4300];    /* the source tree's tests/frameworks */
};

/* Find it and check that it imports torch and transformers; skip_all with
 * the reason when it cannot be used (under a sanitizer: PyTorch with the
 * sanitizer's runtime preloaded is another test; none there; it cannot
 * import them; obs-run not built). */
void fw_env_require(struct fw_env *e);

#endif
