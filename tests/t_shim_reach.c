/* Every way a program reaches the runtime other than its global symbols is
 * recorded, exactly once, with the runtime's status and errno unchanged
 * (tests/apps/reach_app, reach_plugin, reach_ctypes.py, on the simulated
 * runtimes). Ground truth is the simulator's OBS_SIM_LOG: for every
 * recorded API, the trace holds as many records as the runtime saw calls.
 *   - entry points looked up with dlsym on a handle of libcudart.so.13
 *     opened RTLD_LOCAL (registration too: the launch carries its name);
 *   - the same on libamdhip64.so.5;
 *   - one pointer from dlsym(handle), one from the global scope, calls
 *     through both interleaved: each call once;
 *   - a plugin opened RTLD_LOCAL calling its imported symbols and pointers
 *     it looked up on its own handle of the runtime, CUDA and HIP;
 *   - the same plugin opened RTLD_DEEPBIND (its symbols bind to the runtime
 *     before the preloaded shim), with RTLD_NOW and with RTLD_LAZY, and built
 *     with full RELRO (its GOT read-only);
 *   - Python ctypes (CDLL("libcudart.so.13").cudaMemcpy ...) under obs-run
 *     (skipped only without python3). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define ROUNDS 7

static char tmp[4096];
static char libpath[4300];

static const char *path_in(const char *dir, const char *name)
{
    return test_path(dir, name);
}

static const char *new_dir(const char *name)
{
    static char slots[4][4200];
    static unsigned next;
    char *p = slots[next++ % 4];
    snprintf(p, sizeof slots[0], "%s/%s", tmp, name);
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        bail("mkdir %s: %s", p, strerror(errno));
    dir_clear(p);
    return p;
}

/* Per recorded API, the trace's records against the log's calls. Returns
 * the number of calls of api_want in the log (-1: unreadable). */
static void check_once(const char *label, const char *log, const char *trace, int api_want, long want)
{
    struct sim_call *calls = NULL;
    size_t n = sim_log_read(log, &calls), i;
    static unsigned long in_log[OBS_API_COUNT];
    struct obs_trace *t = shim_trace_open(trace);
    unsigned long recorded = 0, mismatched = 0, apis = 0;
    int api;

    memset(in_log, 0, sizeof in_log);
    for (i = 0; i < n; i++) {
        int a = shim_api_index(calls[i].api);
        if (a >= 0)
            in_log[a]++;
    }
    free(calls);
    if (!ok(t != NULL, "%s: the trace reads back", label)) {
        skip_block(2, "no trace");
        return;
    }
    for (api = 0; api < OBS_API_COUNT; api++) {
        unsigned long seen = trace_api_count(t, api);
        if (seen == 0 && in_log[api] == 0)
            continue;
        apis++;
        recorded += seen;
        if (seen != in_log[api]) {
            mismatched++;
            diag("%s: API %d: %lu records, %lu calls in the simulator's log", label, api, seen, in_log[api]);
        }
    }
    ok(mismatched == 0 && apis > 0, "%s: every call the runtime saw recorded exactly once (%lu records, %lu APIs)",
       label, recorded, apis);
    is_int(want, (long long)trace_api_count(t, api_want), "%s: %ld records of the API counted by hand", label, want);
    obs_trace_free(t);
}

/* Run argv without and with the shim: same status and stdout (statuses
 * and errno printed per call). */
static void run_both(const char *label, const char *const argv[], const char *dir, struct run_result *shim)
{
    struct run_result plain;
    char out_var[4400], log_var[4400];
    snprintf(out_var, sizeof out_var, "OBS_OUTPUT=%s/t", dir);
    snprintf(log_var, sizeof log_var, "OBS_SIM_LOG=%s/sim.log", dir);
    {
        const char *env[] = {libpath, NULL};
        shim_run(argv, env, 0, 60, &plain);
    }
    {
        const char *env[] = {libpath, out_var, log_var, "OBS_SUMMARY=0", "OBS_JSON=0", NULL};
        shim_run(argv, env, 1, 60, shim);
    }
    ok(plain.exited && plain.status == 0 && strstr(plain.out, "done\n") != NULL, "%s: runs without the shim", label);
    ok(shim->exited && shim->status == 0, "%s: exit 0 under the shim", label);
    is_string(plain.out, shim->out, "%s: statuses and errno per call as without the shim", label);
    is_int(0, (long long)warning_lines(shim->err), "%s: no warning", label);
    run_result_free(&plain);
}

static void test_app(const char *label, const char *mode, const char *plugin, int api, long want);

/* A plugin: the CUDA API counted by hand, and the HIP one too (the plugin
 * uses both runtimes). */
static void test_plugin(const char *label, const char *mode, const char *plugin, int api, long want, int hip_api,
                        long hip_want)
{
    struct obs_trace *t;
    char trace[4300];
    test_app(label, mode, plugin, api, want);
    snprintf(trace, sizeof trace, "%s", path_in(tmp, mode));
    snprintf(trace + strlen(trace), sizeof trace - strlen(trace), "/t.obs");
    t = shim_trace_open(trace);
    is_int(hip_want, t ? (long long)trace_api_count(t, hip_api) : -1, "%s: %ld records of the HIP API counted by hand",
           label, hip_want);
    if (t)
        obs_trace_free(t);
}

static void test_app(const char *label, const char *mode, const char *plugin, int api, long want)
{
    const char *dir = new_dir(mode);
    char rounds[16];
    const char *argv[] = {shim_build_path("tests/apps/reach_app"), mode, rounds, plugin, NULL};
    struct run_result shim;

    snprintf(rounds, sizeof rounds, "%d", ROUNDS);
    run_both(label, argv, dir, &shim);
    check_once(label, path_in(dir, "sim.log"), path_in(dir, "t.obs"), api, want);
    run_result_free(&shim);
}

/* The launch made through a looked-up pointer carries the name its
 * looked-up registration gave. */
static void test_handle_names(void)
{
    const char *dir = new_dir("names");
    char rounds[] = "2";
    const char *argv[] = {shim_build_path("tests/apps/reach_app"), "cuda-handle", rounds, NULL};
    char out_var[4400];
    struct run_result shim;
    struct obs_trace *t;
    size_t i, named = 0, launches = 0;

    snprintf(out_var, sizeof out_var, "OBS_OUTPUT=%s/t", dir);
    {
        const char *env[] = {libpath, out_var, "OBS_SUMMARY=0", "OBS_JSON=0", NULL};
        shim_run(argv, env, 1, 60, &shim);
    }
    t = shim_trace_open(path_in(dir, "t.obs"));
    for (i = 0; t != NULL && i < t->ncalls; i++)
        if (t->calls[i].api == OBS_API_cudaLaunchKernel) {
            launches++;
            if (t->calls[i].kernel && strcmp(t->kernels[t->calls[i].kernel].mangled, "_Z12reach_kernelPfi") == 0)
                named++;
        }
    ok(launches == 2 && named == 2, "dlsym(handle): %zu of %zu launches named by the looked-up registration", named,
       launches);
    if (t)
        obs_trace_free(t);
    run_result_free(&shim);
}

static void test_ctypes(void)
{
    const char *python = getenv("OBS_PYTHON3");
    const char *dir;
    char script[4300], prefix[4400], log_var[4400], exe[4300];
    struct run_result plain, shim, which;
    size_t len;

    if (python == NULL || python[0] == '\0') {
        skip_block(8, "no python3 (OBS_PYTHON3 is empty)");
        return;
    }
    dir = new_dir("ctypes");
    /* The interpreter itself, not a launcher script in front of it. */
    {
        const char *argv[] = {python, "-c", "import sys; print(sys.executable)", NULL};
        const char *env[] = {"LD_PRELOAD", NULL};
        if (run_program(argv, env, 60, &which) != 0 || !which.exited || which.status != 0)
            bail("cannot run %s", python);
        len = strcspn(which.out, "\n");
        snprintf(exe, sizeof exe, "%.*s", (int)len, which.out);
        run_result_free(&which);
    }
    snprintf(script, sizeof script, "%s", test_path(test_srcdir(), "tests/apps/reach_ctypes.py"));
    snprintf(prefix, sizeof prefix, "%s/t", dir);
    snprintf(log_var, sizeof log_var, "OBS_SIM_LOG=%s/sim.log", dir);
    {
        const char *argv[] = {exe, script, "5", NULL};
        const char *env[] = {libpath, "OBS_SIM_QUIET=1", "LD_PRELOAD", NULL};
        if (run_program(argv, env, 60, &plain) != 0)
            bail("cannot run %s", exe);
    }
    {
        const char *argv[] = {shim_build_path("contrib/obs-run"), "-o", prefix, "--", exe, script, "5", NULL};
        const char *env[] = {libpath, log_var, "OBS_SIM_QUIET=1", "OBS_SUMMARY=0", "OBS_JSON=0", "LD_PRELOAD",
                             "OBS_SHIM_LIB", NULL};
        if (run_program(argv, env, 60, &shim) != 0)
            bail("cannot run obs-run");
    }
    ok(plain.exited && plain.status == 0 && strstr(plain.out, "done\n") != NULL, "ctypes: runs without the shim");
    if (!plain.exited || plain.status != 0)
        diag_text("python stderr", plain.err);
    ok(shim.exited && shim.status == 0, "ctypes under obs-run: exit 0");
    is_string(plain.out, shim.out, "ctypes: statuses and errno per call as without the shim");
    is_int(0, (long long)warning_lines(shim.err), "ctypes: no warning");
    check_once("ctypes", path_in(dir, "sim.log"), path_in(dir, "t.obs"), OBS_API_cudaMemcpy, 5 * 2 + 1);
    {
        struct obs_trace *t = shim_trace_open(path_in(dir, "t.obs"));
        is_int(5, t ? (long long)trace_api_count(t, OBS_API_hipMemcpy) : -1, "ctypes: 5 hipMemcpy recorded");
        if (t)
            obs_trace_free(t);
    }
    run_result_free(&plain);
    run_result_free(&shim);
}

int main(void)
{
    const char *plugin = shim_build_path("tests/apps/.libs/libreach_plugin.so");
    char plugin_path[4300], relro_path[4300];

    shim_lib();
    snprintf(tmp, sizeof tmp, "%s", test_tmpdir());
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(plugin_path, sizeof plugin_path, "%s", plugin);
    snprintf(relro_path, sizeof relro_path, "%s", shim_build_path("tests/apps/.libs/libreach_plugin_relro.so"));
    plan(8 * 7 + 5 + 1 + 8);

    test_app("dlsym(cudart handle)", "cuda-handle", NULL, OBS_API_cudaMemcpy, 2 * ROUNDS + 1);
    test_handle_names();
    test_app("dlsym(hip handle)", "hip-handle", NULL, OBS_API_hipMemcpy, 2 * ROUNDS + 1);
    test_app("dlsym(handle) and global symbol", "both", NULL, OBS_API_cudaMemcpy, 2 * ROUNDS);
    test_plugin("plugin RTLD_LOCAL", "local", plugin_path, OBS_API_cudaMemset, ROUNDS + 1, OBS_API_hipMemset,
                ROUNDS + 1);
    if (getenv("OBS_SANITIZE") != NULL && strcmp(getenv("OBS_SANITIZE"), "asan") == 0) {
        skip_block(4 * 8, "RTLD_DEEPBIND under ASan: its runtime refuses such a dlopen (google/sanitizers#611)");
    } else {
        test_plugin("plugin RTLD_DEEPBIND", "deepbind", plugin_path, OBS_API_cudaMemset, ROUNDS + 1,
                    OBS_API_hipMemset, ROUNDS + 1);
        test_plugin("plugin RTLD_DEEPBIND, imported symbols", "deepbind", plugin_path, OBS_API_cudaMalloc, ROUNDS,
                    OBS_API_hipMalloc, ROUNDS);
        test_plugin("plugin RTLD_DEEPBIND | RTLD_LAZY", "deepbind-lazy", plugin_path, OBS_API_cudaMemcpy, ROUNDS,
                    OBS_API_hipMemcpy, ROUNDS);
        test_plugin("full-RELRO plugin RTLD_DEEPBIND", "deepbind", relro_path, OBS_API_cudaFree, ROUNDS,
                    OBS_API_hipFree, ROUNDS);
    }
    test_ctypes();
    return 0;
}
