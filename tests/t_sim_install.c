/* The simulator from an installed tree: `make install DESTDIR=<tmp>` (the
 * build's own make, OBS_MAKE, run in OBS_BUILDDIR), then the INSTALLED
 * obs-run --sim over the INSTALLED driver and shim:
 *   - the tree holds one <pkglibdir>/sim, with the driver alone
 *     (libcuda.so.1, libnvidia-ml.so.1 and libtool's files for them) and
 *     runtimes/, which holds libcudart.so.13, libamdhip64.so.5 and
 *     libcupti.so.13; obs-sim.7 is among the man pages;
 *   - the installed obs-run --sim runs tests/apps/driver_static_like (a C
 *     program that dlopens libcuda.so.1 and launches through
 *     cuGetProcAddress_v2 as nvcc's static cudart does: no nvcc needed)
 *     and, when nvcc built it, workload/obs_cuda_static: obs-run names the
 *     installed driver's directory; the loader (LD_DEBUG=libs) initialised
 *     the installed libcuda.so.1 and libobsshim.so and nothing of the build
 *     tree's; the driver's OBS_SIM_LOG holds the program's calls; the
 *     trace exists and holds as many launches as the log (driver_static_like:
 *     one record per hooked driver call, DRV_CALLS_HOOKED);
 *   - the installed HIP runtime runs tests/apps/hip_api_driver from
 *     LD_LIBRARY_PATH=<pkglibdir>/sim/runtimes;
 *   - make uninstall DESTDIR=<tmp> leaves no file behind.
 * Skips only when OBS_MAKE is not set (run outside make check). */
#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/driver_calls.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"

#define NOT_EXECUTED "kernels are not executed"

static char make_path[4096], dest[4096];

/* What the walk of the installed tree found. */
static struct {
    char simdir[4096], obs_run[4096], shim[4096], sim_man[4096];
    int drivers, files;
} found;

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int walk_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *name = path + ftw->base;
    (void)st;
    if (type != FTW_F && type != FTW_SL)
        return 0;
    found.files++;
    if (strcmp(name, "libcuda.so.1") == 0) {
        found.drivers++;
        snprintf(found.simdir, sizeof found.simdir, "%.*s", (int)ftw->base - 1, path);
    } else if (type == FTW_F && strcmp(name, "obs-run") == 0 && has_suffix(path, "/bin/obs-run")) {
        snprintf(found.obs_run, sizeof found.obs_run, "%s", path);
    } else if (strcmp(name, "libobsshim.so") == 0) {
        snprintf(found.shim, sizeof found.shim, "%s", path);
    } else if (strcmp(name, "obs-sim.7") == 0) {
        snprintf(found.sim_man, sizeof found.sim_man, "%s", path);
    }
    return 0;
}

static void walk_install(void)
{
    memset(&found, 0, sizeof found);
    if (nftw(dest, walk_entry, 16, FTW_PHYS) != 0)
        diag("cannot walk %s", dest);
}

/* make -C <builddir> TARGET DESTDIR=<dest>, on its own: not a part of the
 * make that runs the tests (its flags and jobserver are not passed on). */
static int run_make(const char *target)
{
    char destdir[4200];
    const char *argv[] = {make_path, "-C", test_builddir(), target, destdir, NULL};
    const char *env[] = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR", NULL};
    struct run_result res;
    int good;
    snprintf(destdir, sizeof destdir, "DESTDIR=%s", dest);
    if (run_program(argv, env, 600, &res) != 0)
        bail("cannot run %s", make_path);
    good = res.exited && res.status == 0;
    ok(good, "make %s DESTDIR=<tmp>: exit 0", target);
    if (!good) {
        diag_text("stdout", res.out);
        diag_text("stderr", res.err);
    }
    run_result_free(&res);
    return good;
}

/* The driver's directory holds the driver and NVML alone (and runtimes/);
 * runtimes/ holds the three simulated runtimes. */
static void check_layout(void)
{
    char runtimes[4200];
    struct dirent *e;
    DIR *d;
    int strays = 0, driver = 0, nvml = 0;
    static const char *const rt_libs[] = {"libcudart.so.13", "libamdhip64.so.5", "libcupti.so.13"};
    size_t i;

    is_int(1, found.drivers, "the installed tree has one libcuda.so.1");
    ok(has_suffix(found.simdir, "/obsshim/sim"), "it is in <pkglibdir>/sim (%s)", found.simdir);
    d = opendir(found.simdir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || strcmp(e->d_name, "runtimes") == 0)
            continue;
        driver += strcmp(e->d_name, "libcuda.so.1") == 0;
        nvml += strcmp(e->d_name, "libnvidia-ml.so.1") == 0;
        if (strncmp(e->d_name, "libcuda.", 8) != 0 && strncmp(e->d_name, "libnvidia-ml.", 13) != 0) {
            diag("stray in the driver's directory: %s", e->d_name);
            strays++;
        }
    }
    if (d != NULL)
        closedir(d);
    ok(d != NULL && driver == 1 && nvml == 1 && strays == 0,
       "<pkglibdir>/sim holds libcuda.so.1 and libnvidia-ml.so.1 alone (no runtime)");
    snprintf(runtimes, sizeof runtimes, "%s/runtimes", found.simdir);
    for (i = 0; i < sizeof rt_libs / sizeof rt_libs[0]; i++) {
        char lib[4400];
        snprintf(lib, sizeof lib, "%s/%s", runtimes, rt_libs[i]);
        ok(access(lib, R_OK) == 0, "<pkglibdir>/sim/runtimes holds %s", rt_libs[i]);
    }
    ok(found.obs_run[0] != '\0' && test_executable(found.obs_run), "obs-run is installed (%s)", found.obs_run);
    ok(found.shim[0] != '\0', "libobsshim.so is installed (%s)", found.shim);
    ok(found.sim_man[0] != '\0' && has_suffix(found.sim_man, "/man7/obs-sim.7"), "obs-sim.7 is installed (%s)",
       found.sim_man);
}

/* Every LD_DEBUG_OUTPUT file <prefix>.<pid>, joined (malloc'ed). */
static char *ld_debug_text(const char *prefix)
{
    char dir[4096], base[256], *all = strdup("");
    const char *slash = strrchr(prefix, '/');
    struct dirent *e;
    DIR *d;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - prefix), prefix);
    snprintf(base, sizeof base, "%s.", slash + 1);
    d = opendir(dir);
    while (d != NULL && all != NULL && (e = readdir(d)) != NULL) {
        char path[4400], *text, *grown;
        if (strncmp(e->d_name, base, strlen(base)) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        text = test_read_file(path, NULL);
        if (text == NULL)
            continue;
        grown = realloc(all, strlen(all) + strlen(text) + 1);
        if (grown != NULL)
            strcat(grown, text);
        all = grown;
        free(text);
    }
    if (d != NULL)
        closedir(d);
    if (all == NULL)
        bail("out of memory");
    return all;
}

/* The loader initialised lib (a full path), and nothing of the build tree's
 * simulator or shim. */
static void check_loaded(const char *ld_text, const char *lib, const char *label, const char *what)
{
    char line[4400], build_sim[4200], build_shim[4200];
    snprintf(line, sizeof line, "calling init: %s\n", lib);
    ok(strstr(ld_text, line) != NULL, "%s: the loader ran the installed %s", label, what);
    snprintf(build_sim, sizeof build_sim, "calling init: %s/sim/", test_builddir());
    snprintf(build_shim, sizeof build_shim, "calling init: %s/shim/", test_builddir());
    ok(strstr(ld_text, build_sim) == NULL && strstr(ld_text, build_shim) == NULL,
       "%s: nothing of the build tree's simulator or shim was loaded", label);
}

static size_t count_kind(const struct sim_call *calls, size_t n, const char *kind)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++)
        k += strcmp(calls[i].kind, kind) == 0;
    return k;
}

static size_t count_driver_hooked(const struct sim_call *calls, size_t n)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        int api = shim_api_index(calls[i].api);
        k += api > 0 && api >= OBS_API_cuLaunchKernel;
    }
    return k;
}

/* The installed obs-run --sim runs program (argv[0] a path) to its end over
 * the installed driver and shim. hooked: the trace's records must number the
 * log's hooked driver calls (driver_static_like), else only its launches
 * are compared. */
static void check_installed_obs_run(const char *label, const char *const prog_argv[], const char *expect,
                                    int hooked)
{
    char prefix[4300], trace[4400], log[4400], ld[4400], log_env[4500], ld_env[4500], lib[4400];
    char said[4400];
    const char *argv[16];
    const char *env[] = {log_env, ld_env, "LD_DEBUG=libs", "OBS_SIM_QUIET", "LD_PRELOAD", "LD_LIBRARY_PATH",
                         "OBS_SHIM_LIB", "OBS_SIM_DRIVER_DIR", "OBS_SUMMARY=0", NULL};
    struct run_result res;
    struct sim_call *calls = NULL;
    struct obs_trace *t;
    size_t ncalls, i, n = 0, traced = 0;
    char *ld_text;

    argv[n++] = found.obs_run;
    argv[n++] = "--sim";
    argv[n++] = "-o";
    argv[n++] = prefix;
    argv[n++] = "--";
    for (i = 0; prog_argv[i] != NULL && n < 15; i++)
        argv[n++] = prog_argv[i];
    argv[n] = NULL;
    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), label);
    snprintf(trace, sizeof trace, "%s.obs", prefix);
    snprintf(log, sizeof log, "%s.simlog", prefix);
    snprintf(ld, sizeof ld, "%s/ld-%s", test_tmpdir(), label);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    snprintf(ld_env, sizeof ld_env, "LD_DEBUG_OUTPUT=%s", ld);
    remove(log);
    remove(trace);
    if (run_program(argv, env, 300, &res) != 0)
        bail("cannot run %s", found.obs_run);
    ok(res.exited && res.status == 0 && res.out != NULL && strstr(res.out, expect) != NULL,
       "installed obs-run --sim %s: exit 0, prints '%s'", label, expect);
    if (!res.exited || res.status != 0)
        diag_text("stderr", res.err);
    snprintf(said, sizeof said, "simulated CUDA driver (%s)", found.simdir);
    ok(res.err != NULL && strstr(res.err, said) != NULL && count_lines_with(res.err, NOT_EXECUTED) == 1,
       "installed obs-run --sim %s: runs it over the installed driver, says once that kernels are not executed",
       label);

    ld_text = ld_debug_text(ld);
    snprintf(lib, sizeof lib, "%s/libcuda.so.1", found.simdir);
    check_loaded(ld_text, lib, label, "libcuda.so.1");
    snprintf(lib, sizeof lib, "calling init: %s\n", found.shim);
    ok(strstr(ld_text, lib) != NULL, "%s: the loader ran the installed libobsshim.so", label);
    free(ld_text);

    ncalls = sim_log_read(log, &calls);
    t = access(trace, R_OK) == 0 ? shim_trace_open(trace) : NULL;
    ok(t != NULL, "%s: the shim left its trace", label);
    for (i = 0; t != NULL && i < t->ncalls; i++)
        traced += t->calls[i].kind == OBS_KIND_KERNEL;
    if (hooked) {
        is_int(DRV_CALLS_KERNEL, (long long)count_kind(calls, ncalls, "kernel"),
               "%s: the installed driver's log holds its %d launches", label, DRV_CALLS_KERNEL);
        is_int(DRV_CALLS_HOOKED, (long long)count_driver_hooked(calls, ncalls),
               "%s: ... and its %d hooked driver calls", label, DRV_CALLS_HOOKED);
        is_int((long long)count_driver_hooked(calls, ncalls), t ? (long long)t->ncalls : -1,
               "%s: the trace has one record per hooked call in the log", label);
    } else {
        ok(count_kind(calls, ncalls, "kernel") > 0, "%s: the installed driver's log holds its launches (%zu)",
           label, count_kind(calls, ncalls, "kernel"));
    }
    is_int((long long)count_kind(calls, ncalls, "kernel"), (long long)traced,
           "%s: the trace holds the log's launches", label);
    if (t != NULL)
        obs_trace_free(t);
    free(calls);
    run_result_free(&res);
}

/* A HIP program on the installed simulated runtime, no shim. */
static void check_installed_hip_runtime(void)
{
    const char *bin = shim_build_path("tests/apps/hip_api_driver");
    const char *argv[] = {bin, NULL};
    char path_env[4400], log_env[4400], ld_env[4400], log[4300], ld[4300], lib[4400];
    const char *env[] = {path_env, log_env, ld_env, "LD_DEBUG=libs", "OBS_SIM_QUIET=1", "LD_PRELOAD", NULL};
    struct run_result res;
    struct sim_call *calls = NULL;
    size_t ncalls;
    char *ld_text;

    if (!test_executable(bin)) {
        skip_block(4, "%s was not built", bin);
        return;
    }
    snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s/runtimes", found.simdir);
    snprintf(log, sizeof log, "%s/hip.simlog", test_tmpdir());
    snprintf(ld, sizeof ld, "%s/ld-hip", test_tmpdir());
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    snprintf(ld_env, sizeof ld_env, "LD_DEBUG_OUTPUT=%s", ld);
    remove(log);
    if (run_program(argv, env, 120, &res) != 0)
        bail("cannot run %s", bin);
    ok(res.exited && res.status == 0, "hip_api_driver on <pkglibdir>/sim/runtimes: exit 0");
    ld_text = ld_debug_text(ld);
    snprintf(lib, sizeof lib, "%s/runtimes/libamdhip64.so.5", found.simdir);
    check_loaded(ld_text, lib, "hip_api_driver", "libamdhip64.so.5");
    free(ld_text);
    ncalls = sim_log_read(log, &calls);
    is_int(93, (long long)ncalls, "hip_api_driver: the installed runtime logged its 93 calls");
    free(calls);
    run_result_free(&res);
}

int main(void)
{
    const char *make = getenv("OBS_MAKE");
    const char *static_bin = shim_build_path("workload/obs_cuda_static");

    if (make == NULL || *make == '\0')
        skip_all("OBS_MAKE is not set (make check sets it)");
    if (strchr(make, '/') != NULL)
        snprintf(make_path, sizeof make_path, "%s", make);
    else if (test_on_path(make, make_path, sizeof make_path) == NULL)
        skip_all("OBS_MAKE=%s: not on PATH", make);
    plan_lazy();
    snprintf(dest, sizeof dest, "%s/dest", test_tmpdir());

    if (!run_make("install"))
        bail("make install failed: nothing to check");
    walk_install();
    check_layout();
    if (found.drivers != 1 || found.obs_run[0] == '\0' || found.shim[0] == '\0')
        bail("the installed tree lacks the driver, obs-run or the shim");

    {
        const char *argv[] = {shim_build_path("tests/apps/driver_static_like"), NULL};
        char expect[64];
        snprintf(expect, sizeof expect, "calls %d failed 0", DRV_CALLS_SEQUENCE);
        check_installed_obs_run("driver_static_like", argv, expect, 1);
    }
    if (test_executable(static_bin)) {
        const char *argv[] = {static_bin, "--repeat=2", "--decode=8", NULL};
        check_installed_obs_run("obs_cuda_static", argv, "TTFT_ms=", 0);
    } else {
        skip_block(8, "workload/obs_cuda_static was not built (no nvcc): the C program above stands for it");
    }
    check_installed_hip_runtime();

    run_make("uninstall");
    walk_install();
    is_int(0, found.files, "make uninstall DESTDIR=<tmp> leaves no file behind");
    return 0;
}
