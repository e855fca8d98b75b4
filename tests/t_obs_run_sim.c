/* obs-run --sim: a user's own program on the simulated CUDA driver, under
 * the shim, with NVIDIA's real runtime and libraries over the driver.
 *   - sim/driver holds the simulated driver alone (libcuda.so.1,
 *     libnvidia-ml.so.1; no simulated runtime);
 *   - an nvcc-built program with the shared cudart (workload/obs_cuda), one
 *     with nvcc's default static cudart (workload/obs_cuda_static) and a
 *     cuBLAS program (tests/apps/cublas_gemm) run to completion, print what
 *     they print on a GPU, and leave a trace with as many launches as the
 *     driver's log holds;
 *   - stderr says once that kernels are not executed (obs-run's line; the
 *     driver's own banner is silenced);
 *   - the LD_LIBRARY_PATH form (the directory first, no shim) runs them too,
 *     and then the driver's banner says it, once;
 *   - OBS_SIM_DRIVER_DIR naming a directory without the driver: exit 2.
 * PyTorch under obs-run --sim: tests/t_frameworks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"

#define NOT_EXECUTED "kernels are not executed"

static const char *obs_run, *driver_dir;

struct program {
    const char *label, *path, *expect; /* expect: a piece of its stdout */
};

static size_t log_kernels(const char *log)
{
    char *text = test_read_file(log, NULL);
    size_t n = text ? count_lines_with(text, "\tkernel\t") : 0;
    free(text);
    return n;
}

static size_t trace_kernels(const char *path)
{
    struct obs_trace *t = shim_trace_open(path);
    size_t i, n = 0;
    if (t == NULL)
        return 0;
    for (i = 0; i < t->ncalls; i++)
        n += t->calls[i].kind == OBS_KIND_KERNEL;
    obs_trace_free(t);
    return n;
}

static void check_under_obs_run(const struct program *p)
{
    char prefix[4300], trace[4300], log[4300], log_env[4400];
    const char *argv[] = {obs_run, "--sim", "-o", prefix, "--", p->path, NULL};
    const char *env[] = {log_env, "OBS_SIM_QUIET", "LD_PRELOAD", "OBS_SUMMARY=0", NULL};
    struct run_result res;
    size_t logged, traced;

    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), p->label);
    snprintf(trace, sizeof trace, "%s.obs", prefix);
    snprintf(log, sizeof log, "%s/%s.log", test_tmpdir(), p->label);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    remove(log);
    if (run_program(argv, env, 120, &res) != 0)
        bail("cannot run %s", obs_run);
    ok(res.exited && res.status == 0, "obs-run --sim %s: exit 0", p->label);
    if (!res.exited || res.status != 0)
        diag_text("stderr", res.err);
    ok(res.out && strstr(res.out, p->expect) != NULL, "obs-run --sim %s: prints what it prints on a GPU (%s)",
       p->label, p->expect);
    is_int(1, (long long)count_lines_with(res.err ? res.err : "", NOT_EXECUTED),
           "obs-run --sim %s: stderr says once that kernels are not executed", p->label);
    logged = log_kernels(log);
    traced = trace_kernels(trace);
    ok(logged > 0 && traced == logged, "obs-run --sim %s: the trace has the driver's %zu launches (%zu)", p->label,
       logged, traced);
    run_result_free(&res);
}

static void check_library_path_form(const struct program *p)
{
    char path_env[4400];
    const char *argv[] = {p->path, NULL};
    const char *env[] = {path_env, "OBS_SIM_QUIET", "LD_PRELOAD", NULL};
    struct run_result res;
    snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s", driver_dir);
    if (run_program(argv, env, 120, &res) != 0)
        bail("cannot run %s", p->path);
    ok(res.exited && res.status == 0 && res.out && strstr(res.out, p->expect) != NULL,
       "LD_LIBRARY_PATH=sim/driver %s: runs, prints what it prints on a GPU", p->label);
    if (!res.exited || res.status != 0) {
        diag("exited %d, status %d", res.exited, res.status);
        diag_text("stderr", res.err);
    }
    is_int(1, (long long)count_lines_with(res.err ? res.err : "", NOT_EXECUTED),
           "LD_LIBRARY_PATH=sim/driver %s: the driver's banner says once that kernels are not executed",
           p->label);
    run_result_free(&res);
}

int main(void)
{
    static const struct program programs[] = {
        {"obs_cuda", "workload/obs_cuda", "TTFT_ms="},
        {"obs_cuda_static", "workload/obs_cuda_static", "TTFT_ms="},
        {"cublas_gemm", "tests/apps/cublas_gemm", "failures 0"},
    };
    char dir_cuda[4300], dir_nvml[4300], dir_rt[4300];
    size_t i;

    obs_run = shim_build_path("contrib/obs-run");
    if (!test_executable(obs_run))
        skip_all("%s not built", obs_run);
    plan_lazy();
    driver_dir = shim_build_path("sim/driver");
    snprintf(dir_cuda, sizeof dir_cuda, "%s/libcuda.so.1", driver_dir);
    snprintf(dir_nvml, sizeof dir_nvml, "%s/libnvidia-ml.so.1", driver_dir);
    snprintf(dir_rt, sizeof dir_rt, "%s/libcudart.so.13", driver_dir);
    ok(access(dir_cuda, R_OK) == 0 && access(dir_nvml, R_OK) == 0 && access(dir_rt, F_OK) != 0,
       "sim/driver holds the simulated libcuda.so.1 and libnvidia-ml.so.1, no runtime");

    for (i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        struct program p = programs[i];
        p.path = shim_build_path(programs[i].path);
        if (!test_executable(p.path)) {
            skip("%s was not built (no nvcc)", programs[i].path);
            continue;
        }
        check_under_obs_run(&p);
        check_library_path_form(&p);
    }
    {
        const char *argv[] = {obs_run, "--sim", "--", "/bin/true", NULL};
        const char *env[] = {"OBS_SIM_DRIVER_DIR=/nonexistent", "LD_PRELOAD", NULL};
        struct run_result res;
        if (run_program(argv, env, 30, &res) != 0)
            bail("cannot run %s", obs_run);
        ok(res.exited && res.status == 2 && res.err && strstr(res.err, "OBS_SIM_DRIVER_DIR") != NULL,
           "OBS_SIM_DRIVER_DIR without the driver: exit 2, says why");
        run_result_free(&res);
    }
    return 0;
}
