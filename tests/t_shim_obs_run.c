/* contrib/obs-run: runs a program with libobsshim.so preloaded.
 *   - --help; a missing PROGRAM or an unknown option is a usage error (2);
 *   - -o PREFIX sets the output prefix: the program's trace lands there;
 *   - the program's exit status and terminating signal come back unchanged;
 *   - an existing LD_PRELOAD is kept (after the shim);
 *   - OBS_PRELOAD_FIRST goes before the shim, once;
 *   - OBS_SHIM_LIB overrides where the library is found. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

static const char *obs_run;

/* obs-run with args; env as given (no LD_PRELOAD of ours: obs-run sets it). */
static void run(const char *const args[], const char *const env[], struct run_result *res)
{
    const char *argv[16];
    const char *all[16];
    size_t n = 0, i;
    argv[n++] = obs_run;
    for (i = 0; args[i] != NULL && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    n = 0;
    all[n++] = "OBS_SIM_QUIET=1";
    all[n++] = "LD_PRELOAD";
    all[n++] = "OBS_SHIM_LIB";
    for (i = 0; env != NULL && env[i] != NULL && n < 15; i++)
        all[n++] = env[i];
    all[n] = NULL;
    if (run_program(argv, all, 60, res) != 0)
        bail("cannot run %s", obs_run);
}

int main(void)
{
    struct run_result res;
    char prefix[4300], trace[4300], preload_env[4300], want[8600];
    const char *app = shim_build_path("tests/apps/shim_app");

    obs_run = shim_build_path("contrib/obs-run");
    if (!test_executable(obs_run))
        skip_all("%s not built", obs_run);
    plan(20);

    {
        const char *args[] = {"--help", NULL};
        run(args, NULL, &res);
        ok(res.exited && res.status == 0 && strstr(res.out, "Usage: obs-run") != NULL, "--help: usage, exit 0");
        run_result_free(&res);
    }
    {
        const char *args[] = {NULL};
        run(args, NULL, &res);
        ok(res.exited && res.status == 2 && strstr(res.err, "no PROGRAM") != NULL, "no program: exit 2");
        run_result_free(&res);
    }
    {
        const char *args[] = {"--bogus", "/bin/true", NULL};
        run(args, NULL, &res);
        ok(res.exited && res.status == 2 && strstr(res.err, "unknown option") != NULL, "unknown option: exit 2");
        run_result_free(&res);
    }
    snprintf(prefix, sizeof prefix, "%s/run", test_tmpdir());
    snprintf(trace, sizeof trace, "%s/run.obs", test_tmpdir());
    {
        const char *args[] = {"-o", prefix, "--", app, "--launches", "5", NULL};
        struct obs_trace *t;
        run(args, NULL, &res);
        ok(res.exited && res.status == 0, "-o PREFIX -- shim_app: exit 0");
        ok(strstr(res.err, "obsshim: wrote") != NULL && strstr(res.err, "run.obs") != NULL,
           "-o PREFIX: the shim says it wrote run.obs");
        t = shim_trace_open(trace);
        ok(t != NULL && trace_api_count(t, shim_api_index("cudaLaunchKernel")) == 5,
           "-o PREFIX: the trace has the 5 launches");
        if (t)
            obs_trace_free(t);
        run_result_free(&res);
    }
    {
        const char *args[] = {"/bin/sh", "-c", "exit 3", NULL};
        run(args, NULL, &res);
        ok(res.exited && res.status == 3, "exit status 3 comes back");
        run_result_free(&res);
    }
    {
        const char *args[] = {"/bin/sh", "-c", "kill -TERM $$", NULL};
        run(args, NULL, &res);
        ok(!res.exited && res.signal == SIGTERM, "death by SIGTERM comes back");
        run_result_free(&res);
    }
    {
        const char *args[] = {"/bin/sh", "-c", "echo \"$LD_PRELOAD\"", NULL};
        run(args, NULL, &res);
        ok(strstr(res.out, "libobsshim.so") != NULL, "LD_PRELOAD holds the shim");
        ok(res.out[0] == '/', "the shim's path is absolute");
        run_result_free(&res);
    }
    snprintf(preload_env, sizeof preload_env, "LD_PRELOAD=%s", shim_lib());
    {
        const char *args[] = {"/bin/sh", "-c", "echo \"$LD_PRELOAD\"", NULL};
        const char *env[] = {preload_env, NULL};
        run(args, env, &res);
        snprintf(want, sizeof want, ":%s\n", shim_lib());
        ok(strstr(res.out, want) != NULL, "an existing LD_PRELOAD is kept after the shim");
        run_result_free(&res);
    }
    {
        const char *args[] = {"/bin/true", NULL};
        const char *env[] = {"OBS_SHIM_LIB=/nonexistent/libobsshim.so", NULL};
        run(args, env, &res);
        ok(res.exited && res.status == 2 && strstr(res.err, "OBS_SHIM_LIB") != NULL,
           "OBS_SHIM_LIB naming no file: exit 2");
        run_result_free(&res);
    }
    /* Under make check-sanitize OBS_PRELOAD_FIRST is the ASan runtime,
     * which every preload of the ASan-built shim needs first. */
    const char *first = getenv("OBS_PRELOAD_FIRST");
    char first_prefix[4300] = "";
    if (first != NULL && first[0] != '\0')
        snprintf(first_prefix, sizeof first_prefix, "%s:", first);
    snprintf(preload_env, sizeof preload_env, "OBS_SHIM_LIB=%s", shim_lib());
    {
        const char *args[] = {"/bin/sh", "-c", "echo \"$LD_PRELOAD\"", NULL};
        const char *env[] = {preload_env, NULL};
        run(args, env, &res);
        snprintf(want, sizeof want, "%s%s\n", first_prefix, shim_lib());
        is_string(want, res.out, "OBS_SHIM_LIB is the library preloaded");
        run_result_free(&res);
    }
    {
        char first_env[4400], existing_env[4400];
        const char *f = first_prefix[0] ? first : "/nonexistent/libfirst.so";
        const char *args[] = {"/bin/sh", "-c", "echo \"$LD_PRELOAD\"", NULL};
        const char *env[] = {first_env, existing_env, NULL};
        snprintf(first_env, sizeof first_env, "OBS_PRELOAD_FIRST=%s", f);
        snprintf(existing_env, sizeof existing_env, "LD_PRELOAD=%s:/nonexistent/libother.so", f);
        run(args, env, &res);
        snprintf(want, sizeof want, "%s:%s:/nonexistent/libother.so\n", f, shim_lib());
        is_string(want, res.out, "OBS_PRELOAD_FIRST goes before the shim, once");
        run_result_free(&res);
    }
    {
        const char *args[] = {"--gpu-time", "/bin/sh", "-c", "echo \"$OBS_GPU_TIME\"", NULL};
        run(args, NULL, &res);
        is_string("events\n", res.out, "--gpu-time sets OBS_GPU_TIME=events");
        run_result_free(&res);
    }
    {
        static const char *const modes[] = {"steps", "events", "cupti", "off"};
        size_t i;
        for (i = 0; i < sizeof modes / sizeof modes[0]; i++) {
            char opt[64], want[64];
            const char *args[] = {opt, "/bin/sh", "-c", "echo \"$OBS_GPU_TIME\"", NULL};
            snprintf(opt, sizeof opt, "--gpu-time=%s", modes[i]);
            snprintf(want, sizeof want, "%s\n", modes[i]);
            run(args, NULL, &res);
            is_string(want, res.out, "%s sets OBS_GPU_TIME=%s", opt, modes[i]);
            run_result_free(&res);
        }
    }
    {
        const char *args[] = {"--gpu-time=kernels", "/bin/sh", "-c", "echo ran", NULL};
        run(args, NULL, &res);
        ok(res.status == 2 && strstr(res.err, "expected off, steps, events or cupti") != NULL &&
               strstr(res.out, "ran") == NULL,
           "--gpu-time=kernels: exit 2 with the modes named, the program not run");
        run_result_free(&res);
    }
    return 0;
}
