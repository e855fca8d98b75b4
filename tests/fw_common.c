/* What the NCCL framework test adds to the shared pieces: see fw_common.h. */
#include "fw_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

void fw_launch_start(struct fw_launch *l, const struct fw_env *fw, int shim, const char *prefix, const char **argv,
                     size_t *a, const char **env, size_t *e)
{
    if (shim) {
        argv[(*a)++] = fw->obs_run;
        argv[(*a)++] = "--sim";
        argv[(*a)++] = "-o";
        argv[(*a)++] = prefix;
        argv[(*a)++] = "--";
        snprintf(l->inject_env, sizeof l->inject_env, "NVTX_INJECTION64_PATH=%s",
                 shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
        env[(*e)++] = l->inject_env;
    } else {
        snprintf(l->path_env, sizeof l->path_env, "LD_LIBRARY_PATH=%s", fw->driver_dir);
        env[(*e)++] = l->path_env;
        env[(*e)++] = "OBS_SIM_QUIET=1";
    }
}

/* ---- a run in the background ------------------------------------------------------------------------ */

void fw_job_start(struct fw_job *job, const char *base, void (*run)(void *arg, struct run_result *res), void *arg)
{
    snprintf(job->out, sizeof job->out, "%s.out", base);
    snprintf(job->err, sizeof job->err, "%s.err", base);
    fflush(stdout);
    fflush(stderr);
    job->pid = fork();
    if (job->pid < 0)
        bail("fork failed");
    if (job->pid == 0) {
        struct run_result res;
        run(arg, &res);
        test_write_file(job->out, res.out ? res.out : "", res.out ? strlen(res.out) : 0);
        test_write_file(job->err, res.err ? res.err : "", res.err ? strlen(res.err) : 0);
        _exit(res.exited && res.status == 0 ? 0 : 1); /* no atexit: the temporary directory stays */
    }
}

int fw_job_wait(const char *label, struct fw_job *job, char **out)
{
    int status = 0;
    char *err;
    if (waitpid(job->pid, &status, 0) != job->pid)
        bail("waitpid failed");
    *out = test_read_file(job->out, NULL);
    if (*out == NULL)
        *out = strdup("");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        err = test_read_file(job->err, NULL);
        diag("%s: the run without the shim failed", label);
        diag_text("stderr", err ? err : "");
        free(err);
        return 0;
    }
    return 1;
}
