/* The shim never harms the app, and the trace survives every way a process
 * ends. tests/apps/shim_app (one registered kernel, launches on a stream)
 * runs with and without the shim:
 *   - return from main, exit(), SIGTERM/SIGINT with no handler (the app
 *     still dies of the signal; the .obs is complete, and the .pftrace is
 *     written too), a handler of the app's own (untouched: it runs, then
 *     exit closes the trace);
 *   - fork: parent and child each leave a complete trace of their own,
 *     never the same file (also with a fixed OBS_OUTPUT);
 *   - the app closing every descriptor and reusing the trace's number: the
 *     shim notices and never writes into the app's file;
 *   - output directory missing / not a directory, a file size limit (the
 *     disk filling up): one warning, the app runs on with the same output
 *     and status; what could not be written is counted, never dropped
 *     silently, and the file stays readable;
 *   - every bad OBS_* value: one warning naming it and the default used;
 *   - OBS_ENABLE=0 and programs without CUDA: no output, no file;
 *   - errno and return codes identical, also on the shim's first-call path;
 *   - a hooked symbol whose real function exists nowhere: not called;
 *   - a launch of a function no registration named gets a fallback name;
 *   - a runtime loaded only by a dlopen(RTLD_LOCAL)ed library (out of
 *     dlsym(RTLD_NEXT)'s reach) is still found and its calls recorded;
 *   - a library's constructor calling the runtime before the shim's own
 *     constructor has run: recorded (the wrapper starts the library);
 *   - output names: %p %h %q{VAR} %n %%, OBS_JSON=0, OBS_SUMMARY=0. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

static const char *app;
static char tmp[4096];

/* A fresh directory under the test's temporary directory. */
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

/* shim_app with up to 8 arguments. */
static void run_app(const char *const args[], const char *const env[], int preload, struct run_result *res)
{
    const char *argv[10];
    size_t n = 0, i;
    argv[n++] = app;
    for (i = 0; args != NULL && args[i] != NULL && n < 9; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    shim_run(argv, env, preload, 60, res);
}

static char *env_var(const char *name, const char *fmt, const char *arg)
{
    static char slots[8][4300];
    static unsigned next;
    char *p = slots[next++ % 8];
    int n = snprintf(p, sizeof slots[0], "%s=", name);
    snprintf(p + n, sizeof slots[0] - (size_t)n, fmt, arg);
    return p;
}

/* Launch records in trace path (-1 when it cannot be read). */
static long launches_in(const char *path, struct obs_trace **keep)
{
    struct obs_trace *t = shim_trace_open(path);
    long n;
    if (t == NULL)
        return -1;
    n = (long)trace_api_count(t, OBS_API_cudaLaunchKernel);
    if (keep)
        *keep = t;
    else
        obs_trace_free(t);
    return n;
}

static int file_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static const char *path_in(const char *dir, const char *name)
{
    return test_path(dir, name);
}

/* ---- how a process ends ------------------------------------------------------ */

static void test_return_and_exit(void)
{
    const char *dir = new_dir("ends");
    struct run_result plain, shim;
    {
        const char *args[] = {"--launches", "10", NULL};
        const char *env[] = {env_var("OBS_OUTPUT", "%s/ret", dir), NULL};
        run_app(args, NULL, 0, &plain);
        run_app(args, env, 1, &shim);
        ok(shim.exited && shim.status == 0, "return from main: exit status 0");
        is_string(plain.out, shim.out, "return from main: same stdout as without the shim");
        is_int(10, launches_in(path_in(dir, "ret.obs"), NULL), "return from main: 10 launches recorded");
        ok(file_exists(path_in(dir, "ret.pftrace")), "return from main: Perfetto trace written (the default timeline)");
        ok(strstr(shim.err, "Kernels") != NULL, "return from main: summary printed to stderr");
        ok(count_lines_with(shim.err, "obsshim: wrote") == 1 && strstr(shim.err, "ret.obs") &&
               strstr(shim.err, "ret.pftrace"),
           "return from main: one line names both files");
        run_result_free(&plain);
        run_result_free(&shim);
    }
    {
        const char *args[] = {"--launches", "50", "--exit", "7", NULL};
        const char *env[] = {env_var("OBS_OUTPUT", "%s/exit", dir), NULL};
        run_app(args, NULL, 0, &plain);
        run_app(args, env, 1, &shim);
        ok(shim.exited && shim.status == 7 && plain.status == 7, "exit(7): status 7 with and without the shim");
        is_string(plain.out, shim.out, "exit(7): same stdout");
        is_int(50, launches_in(path_in(dir, "exit.obs"), NULL), "exit(7): 50 launches recorded");
        ok(file_exists(path_in(dir, "exit.pftrace")), "exit(7): Perfetto trace written");
        run_result_free(&plain);
        run_result_free(&shim);
    }
}

static void test_signal(const char *name, int sig)
{
    const char *dir = new_dir(name);
    const char *args[] = {"--launches", "50", "--signal", name, NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/sig", dir), NULL};
    char line[64];
    struct run_result plain, shim;

    run_app(args, NULL, 0, &plain);
    run_app(args, env, 1, &shim);
    ok(!plain.exited && plain.signal == sig, "SIG%s, no handler: dies of it without the shim", name);
    ok(!shim.exited && shim.signal == sig, "SIG%s, no handler: still dies of it under the shim", name);
    is_string(plain.out, shim.out, "SIG%s: same stdout", name);
    is_int(50, launches_in(path_in(dir, "sig.obs"), NULL), "SIG%s: the trace holds all 50 launches", name);
    ok(file_exists(path_in(dir, "sig.pftrace")), "SIG%s: the timeline too (made by a child of the handler)", name);
    snprintf(line, sizeof line, "obsshim: SIG%s: wrote", name);
    ok(strstr(shim.err, line) != NULL && strstr(shim.err, "sig.pftrace\n") != NULL,
       "SIG%s: says what it wrote, the timeline included", name);
    run_result_free(&plain);
    run_result_free(&shim);
}

static void test_own_handler(void)
{
    const char *dir = new_dir("handler");
    const char *args[] = {"--launches", "50", "--own-handler", "--signal", "TERM", NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/own", dir), NULL};
    struct run_result plain, shim;

    run_app(args, NULL, 0, &plain);
    run_app(args, env, 1, &shim);
    ok(shim.exited && shim.status == 3 && plain.status == 3, "own SIGTERM handler: it runs (exit 3) under the shim");
    is_string(plain.out, shim.out, "own SIGTERM handler: same stdout");
    is_int(50, launches_in(path_in(dir, "own.obs"), NULL), "own SIGTERM handler: trace complete");
    ok(file_exists(path_in(dir, "own.pftrace")), "own SIGTERM handler: timeline written by the exit path");
    run_result_free(&plain);
    run_result_free(&shim);
}

/* ---- fork ------------------------------------------------------------------- */

static void test_fork(void)
{
    const char *dir = new_dir("fork");
    const char *args[] = {"--launches", "20", "--fork", NULL};
    struct run_result shim;
    long child = 0, parent = 0;
    const char *p;
    char child_obs[4300], parent_obs[4300], name[64];
    struct obs_trace *tc = NULL, *tp = NULL;

    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/fork-%%p", dir), NULL};
        run_app(args, env, 1, &shim);
    }
    ok(shim.exited && shim.status == 0, "fork: exit 0");
    if ((p = strstr(shim.out, "child ")) != NULL)
        child = strtol(p + 6, NULL, 10);
    if ((p = strstr(shim.out, "parent ")) != NULL)
        parent = strtol(p + 7, NULL, 10);
    ok(child > 0 && parent > 0 && child != parent, "fork: parent %ld and child %ld ran", parent, child);
    snprintf(name, sizeof name, "fork-%ld.obs", parent);
    snprintf(parent_obs, sizeof parent_obs, "%s", path_in(dir, name));
    snprintf(name, sizeof name, "fork-%ld.obs", child);
    snprintf(child_obs, sizeof child_obs, "%s", path_in(dir, name));
    is_int(40, launches_in(parent_obs, &tp), "fork: the parent's trace has its 40 launches");
    is_int(20, launches_in(child_obs, &tc), "fork: the child's own trace has its 20 launches");
    ok(tp && tc && tp->pid == (uint32_t)parent && tc->pid == (uint32_t)child, "fork: each file says whose it is");
    is_int(2, (long long)dir_count_suffix(dir, ".pftrace", NULL, 0), "fork: two Perfetto traces");
    if (tp)
        obs_trace_free(tp);
    if (tc)
        obs_trace_free(tc);
    run_result_free(&shim);

    /* A fixed name: the child must not overwrite (or append to) the parent's. */
    dir = new_dir("fork-fixed");
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/same", dir), NULL};
        run_app(args, env, 1, &shim);
    }
    is_int(2, (long long)dir_count_suffix(dir, ".obs", NULL, 0), "fork, fixed OBS_OUTPUT: two traces");
    {
        long a = launches_in(path_in(dir, "same.obs"), NULL), b = launches_in(path_in(dir, "same-1.obs"), NULL);
        ok((a == 40 && b == 20) || (a == 20 && b == 40), "fork, fixed OBS_OUTPUT: complete and separate (%ld, %ld)",
           a, b);
    }
    is_int(1, (long long)warning_lines(shim.err), "fork, fixed OBS_OUTPUT: one warning about the taken name");
    run_result_free(&shim);
}

/* ---- output problems -------------------------------------------------------- */

static void test_unwritable(void)
{
    const char *dir = new_dir("unwritable");
    const char *args[] = {"--launches", "20", NULL};
    char file_as_dir[4300];
    struct run_result plain, shim;
    FILE *f;

    run_app(args, NULL, 0, &plain);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/missing/sub/x", dir), NULL};
        run_app(args, env, 1, &shim);
    }
    ok(shim.exited && shim.status == plain.status, "missing directory: same exit status");
    is_string(plain.out, shim.out, "missing directory: same stdout");
    is_int(1, (long long)warning_lines(shim.err), "missing directory: one warning");
    ok(strstr(shim.err, "cannot create") && strstr(shim.err, "missing/sub/x.obs"), "missing directory: it names the file");
    run_result_free(&shim);

    snprintf(file_as_dir, sizeof file_as_dir, "%s/plainfile", dir);
    f = fopen(file_as_dir, "w");
    if (f)
        fclose(f);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/x", file_as_dir), NULL};
        run_app(args, env, 1, &shim);
    }
    ok(shim.exited && shim.status == plain.status, "not a directory: same exit status");
    is_string(plain.out, shim.out, "not a directory: same stdout");
    is_int(1, (long long)warning_lines(shim.err), "not a directory: one warning");
    run_result_free(&shim);
    run_result_free(&plain);
}

static void test_stolen_fd(void)
{
    const char *dir = new_dir("stolen");
    char app_file[4300];
    const char *args[] = {"--launches", "2000", "--steal-fds", app_file, NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/s", dir), "OBS_BUFFER_RECORDS=1024", "OBS_SUMMARY=0", NULL};
    struct run_result shim;
    struct obs_trace *t;
    char *content;

    snprintf(app_file, sizeof app_file, "%s/app.txt", dir);
    run_app(args, env, 1, &shim);
    ok(shim.exited && shim.status == 0, "descriptor stolen: the app runs on");
    content = test_read_file(app_file, NULL);
    is_string("app data\n", content ? content : "(missing)", "descriptor stolen: the app's file is untouched");
    free(content);
    is_int(1, (long long)count_lines_with(shim.err, "was closed by the program"), "descriptor stolen: one warning");
    t = shim_trace_open(path_in(dir, "s.obs"));
    ok(t != NULL, "descriptor stolen: what was written before reads back");
    if (t)
        obs_trace_free(t);
    run_result_free(&shim);
}

static void test_disk_full(void)
{
    const char *dir = new_dir("full");
    const char *args[] = {"--launches", "20000", "--fsize-limit", "150000", NULL};
    /* OBS_PHASES=off: LOST counts records, and the phase engine's PHASE
     * records would be counted with the calls. */
    const char *env[] = {env_var("OBS_OUTPUT", "%s/full", dir), "OBS_BUFFER_RECORDS=1024", "OBS_JSON=0",
                         "OBS_SUMMARY=0", "OBS_PHASES=off", NULL};
    struct run_result plain, shim;
    struct obs_trace *t = NULL;
    const char *p;
    long unreported = 0;

    run_app(args, NULL, 0, &plain);
    run_app(args, env, 1, &shim);
    ok(shim.exited && shim.status == 0 && plain.status == 0, "disk full: the app runs on (exit 0)");
    is_string(plain.out, shim.out, "disk full: same stdout");
    is_int(1, (long long)warning_lines(shim.err), "disk full: one warning");
    ok(strstr(shim.err, "File too large") != NULL, "disk full: it says why");
    if ((p = strstr(shim.err, "obsshim: ")) != NULL && (p = strstr(shim.err, " records were lost")) != NULL) {
        while (p > shim.err && p[-1] >= '0' && p[-1] <= '9')
            p--;
        unreported = strtol(p, NULL, 10);
    }
    launches_in(path_in(dir, "full.obs"), &t);
    ok(t != NULL && t->ignored_bytes == 0, "disk full: what was written reads back whole");
    if (t != NULL) {
        /* Every call is in the file, counted in a LOST record, or reported
         * on stderr because not even that could be written. */
        is_int(20001, (long long)(t->ncalls + t->records_lost + (uint64_t)unreported),
               "disk full: recorded %zu + lost in file %llu + reported lost %ld = every call", t->ncalls,
               (unsigned long long)t->records_lost, unreported);
        ok(t->ncalls < 20001, "disk full: the limit was hit (%zu calls kept)", t->ncalls);
        obs_trace_free(t);
    } else {
        skip_block(2, "no trace");
    }
    run_result_free(&plain);
    run_result_free(&shim);
}

/* ---- settings ------------------------------------------------------------------ */

static void test_bad_values(void)
{
    static const char *const bad[][2] = {
        {"OBS_ENABLE", "maybe"},      {"OBS_JSON", "2"},          {"OBS_SUMMARY", "yesplease"},
        {"OBS_GPU_TIME", "cuda"},     {"OBS_BUFFER_RECORDS", "12"}, {"OBS_BUFFER_RECORDS", "lots"},
        {"OBS_OUTPUT", "out-%x"},     {"OBS_OUTPUT", ""},         {"OBS_OUTPUT", "x%q{"},
    };
    const char *args[] = {"--launches", "3", NULL};
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *dir = new_dir("bad");
        struct run_result shim;
        char setting[256], prefix[4300];
        int output_var = strcmp(bad[i][0], "OBS_OUTPUT") == 0;
        snprintf(setting, sizeof setting, "%s=%s", bad[i][0], bad[i][1]);
        snprintf(prefix, sizeof prefix, "OBS_OUTPUT=%s/b", dir);
        {
            /* Quiet summary, unless OBS_SUMMARY is the variable under test. */
            const char *quiet = strcmp(bad[i][0], "OBS_SUMMARY") == 0 ? NULL : "OBS_SUMMARY=0";
            const char *env[] = {setting, output_var ? quiet : prefix, output_var ? NULL : quiet, NULL};
            if (chdir(dir) != 0)
                bail("chdir %s", dir);
            run_app(args, env, 1, &shim);
            if (chdir(tmp) != 0)
                bail("chdir %s", tmp);
        }
        ok(shim.exited && shim.status == 0, "%s: the app runs", setting);
        ok(warning_lines(shim.err) == 1 && strstr(shim.err, bad[i][0]) != NULL && strstr(shim.err, "default") != NULL,
           "%s: one warning naming it and the default", setting);
        if (warning_lines(shim.err) != 1)
            diag_text("stderr", shim.err);
        is_int(1, (long long)dir_count_suffix(dir, ".obs", NULL, 0), "%s: the default applies (a trace is written)",
               setting);
        run_result_free(&shim);
    }
}

static void test_quiet_cases(void)
{
    const char *dir = new_dir("quiet");
    struct run_result plain, shim;
    const char *args[] = {"--launches", "100", NULL};

    if (chdir(dir) != 0)
        bail("chdir %s", dir);
    {
        const char *env[] = {"OBS_ENABLE=0", NULL};
        run_app(args, NULL, 0, &plain);
        run_app(args, env, 1, &shim);
        is_string(plain.out, shim.out, "OBS_ENABLE=0: same stdout");
        is_string("", shim.err, "OBS_ENABLE=0: nothing on stderr");
        is_int(0, (long long)dir_count_suffix(dir, "", NULL, 0), "OBS_ENABLE=0: no file");
        run_result_free(&plain);
        run_result_free(&shim);
    }
    {
        const char *argv[] = {"/bin/echo", "no", "cuda", "here", NULL};
        shim_run(argv, NULL, 0, 30, &plain);
        shim_run(argv, NULL, 1, 30, &shim);
        ok(shim.exited && shim.status == 0, "/bin/echo under the shim: exit 0");
        is_string(plain.out, shim.out, "/bin/echo: same stdout");
        is_string("", shim.err, "/bin/echo: nothing on stderr");
        is_int(0, (long long)dir_count_suffix(dir, "", NULL, 0), "/bin/echo: no file left behind");
        run_result_free(&plain);
        run_result_free(&shim);
    }
    {
        const char *argv[] = {"/bin/sh", "-c", "exit 3", NULL};
        shim_run(argv, NULL, 1, 30, &shim);
        ok(shim.exited && shim.status == 3 && shim.err[0] == '\0', "/bin/sh -c 'exit 3': status 3, silent");
        run_result_free(&shim);
    }
    if (chdir(tmp) != 0)
        bail("chdir %s", tmp);
}

static void test_errno(void)
{
    const char *dir = new_dir("errno");
    const char *args[] = {"--errno", NULL};
    struct run_result plain, shim;
    FILE *f;

    run_app(args, NULL, 0, &plain);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/e", dir), NULL};
        run_app(args, env, 1, &shim);
    }
    ok(strstr(plain.out, "done") != NULL, "errno: the app ran its checks");
    is_string(plain.out, shim.out, "errno: every return code and errno as without the shim");
    run_result_free(&shim);

    /* The first record creates the file: make that path fail inside (EEXIST). */
    f = fopen(path_in(dir, "taken.obs"), "w");
    if (f)
        fclose(f);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/taken", dir), NULL};
        run_app(args, env, 1, &shim);
    }
    is_string(plain.out, shim.out, "errno: the same when the shim's file creation hits EEXIST");
    ok(file_exists(path_in(dir, "taken-1.obs")), "errno: the taken name was not reused (taken-1.obs)");
    run_result_free(&shim);
    run_result_free(&plain);
}

static void test_missing_runtime(void)
{
    const char *nolib = shim_build_path("tests/apps/shim_nolib");
    const char *argv[] = {nolib, NULL};
    struct run_result plain, shim;

    shim_run(argv, NULL, 0, 30, &plain);
    shim_run(argv, NULL, 1, 30, &shim);
    ok(strstr(plain.out, "cudaMalloc absent") != NULL, "no CUDA runtime: the program finds no cudaMalloc alone");
    is_int(2, (long long)count_lines_with(shim.out, "cudaMalloc status 3 errno-kept 1"),
           "no CUDA runtime: the shim's cudaMalloc returns cudaErrorInitializationError, errno kept");
    is_int(2, (long long)count_lines_with(shim.out, "cudaDeviceSynchronize status 3 errno-kept 1"),
           "no CUDA runtime: the same for cudaDeviceSynchronize");
    is_int(2, (long long)warning_lines(shim.err), "no CUDA runtime: one warning per missing function");
    ok(shim.exited && shim.status == 0, "no CUDA runtime: the program exits normally");
    run_result_free(&plain);
    run_result_free(&shim);
}

static void test_unregistered_kernel(void)
{
    const char *dir = new_dir("unreg");
    const char *args[] = {"--launches", "2", "--unregistered", NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/u", dir), "OBS_SUMMARY=0", NULL};
    struct run_result plain, shim;
    struct obs_trace *t = NULL;
    size_t i, named = 0, fallback = 0;

    run_app(args, NULL, 0, &plain);
    run_app(args, env, 1, &shim);
    is_string(plain.out, shim.out, "unregistered kernel: the runtime's answer is unchanged");
    launches_in(path_in(dir, "u.obs"), &t);
    for (i = 0; t != NULL && i < t->ncalls; i++) {
        const char *name = t->calls[i].kernel ? t->kernels[t->calls[i].kernel].mangled : "";
        if (strcmp(name, "_Z11app_kernelPfi") == 0)
            named++;
        else if (strncmp(name, "<kernel 0x", 10) == 0 || strcmp(name, "unregistered_stub") == 0)
            fallback++;
    }
    is_int(2, (long long)named, "unregistered kernel: registered launches carry their name");
    is_int(1, (long long)fallback, "unregistered kernel: the other gets a fallback name");
    if (t)
        obs_trace_free(t);
    run_result_free(&plain);
    run_result_free(&shim);
}

static void test_local_runtime(void)
{
    const char *dir = new_dir("local");
    const char *plugin = shim_build_path("tests/apps/.libs/libshim_plugin.so");
    const char *argv[] = {shim_build_path("tests/apps/shim_dlopen"), plugin, NULL};
    char libpath[4300];
    struct run_result shim;
    struct obs_trace *t = NULL;

    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    {
        const char *env[] = {libpath, env_var("OBS_OUTPUT", "%s/l", dir), "OBS_SUMMARY=0", NULL};
        shim_run(argv, env, 1, 30, &shim);
    }
    is_string("shim_plugin_run 0\n", shim.out, "RTLD_LOCAL runtime: the calls succeed under the shim");
    is_int(0, (long long)warning_lines(shim.err), "RTLD_LOCAL runtime: no warning (the real functions were found)");
    launches_in(path_in(dir, "l.obs"), &t);
    ok(t != NULL && trace_api_count(t, OBS_API_cudaMalloc) == 3 && trace_api_count(t, OBS_API_cudaFree) == 3,
       "RTLD_LOCAL runtime: 3 cudaMalloc and 3 cudaFree recorded");
    if (t)
        obs_trace_free(t);
    run_result_free(&shim);
}

/* The LD_DEBUG=files line "calling init: ...LIB..." in err, or NULL. */
static const char *init_line(const char *err, const char *lib)
{
    const char *p = err, *q;
    while ((q = strstr(p, "calling init: ")) != NULL) {
        const char *eol = strchr(q, '\n');
        size_t len = eol ? (size_t)(eol - q) : strlen(q);
        if (memmem(q, len, lib, strlen(lib)) != NULL)
            return q;
        p = q + 1;
    }
    return NULL;
}

/* A library linked by the program calls the runtime from its constructor,
 * which the dynamic linker runs before the preloaded shim's (LD_DEBUG=files
 * shows the order): the wrapper starts the library itself and records. */
static void test_early_constructor(void)
{
    const char *dir = new_dir("early");
    const char *argv[] = {shim_build_path("tests/apps/early_app"), NULL};
    char libpath[4300];
    struct run_result plain, shim;
    struct obs_trace *t = NULL;
    const char *early_init, *shim_init;

    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    {
        const char *env[] = {libpath, NULL};
        shim_run(argv, env, 0, 30, &plain);
    }
    {
        const char *env[] = {libpath, env_var("OBS_OUTPUT", "%s/e", dir), "OBS_SUMMARY=0", "LD_DEBUG=files", NULL};
        shim_run(argv, env, 1, 30, &shim);
    }
    ok(shim.exited && shim.status == 0 && plain.exited && plain.status == 0,
       "constructor before the shim's: exit 0 with and without the shim");
    is_string("early constructor status 0\n", shim.out, "constructor before the shim's: its calls succeed");
    is_string(plain.out, shim.out, "constructor before the shim's: same stdout as without the shim");
    early_init = init_line(shim.err, "libearly_ctor.so");
    shim_init = init_line(shim.err, "libobsshim.so");
    ok(early_init != NULL && shim_init != NULL && early_init < shim_init,
       "constructor before the shim's: the dynamic linker ran libearly_ctor's init first");
    launches_in(path_in(dir, "e.obs"), &t);
    ok(t != NULL && trace_api_count(t, OBS_API_cudaMalloc) == 1 && trace_api_count(t, OBS_API_cudaMemset) == 1 &&
           trace_api_count(t, OBS_API_cudaDeviceSynchronize) == 2,
       "constructor before the shim's: its cudaMalloc, cudaMemset and cudaDeviceSynchronize recorded, and main's");
    if (t)
        obs_trace_free(t);
    run_result_free(&plain);
    run_result_free(&shim);
}

static void test_names(void)
{
    const char *dir = new_dir("names");
    const char *args[] = {"--launches", "2", NULL};
    struct run_result shim;
    char host[256], want[600];
    int i;

    for (i = 0; i < 2; i++) {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/n-%%n", dir), "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
        run_result_free(&shim);
    }
    ok(file_exists(path_in(dir, "n-1.obs")) && file_exists(path_in(dir, "n-2.obs")), "%%n: n-1 then n-2");
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/tag-%%q{OBS_TEST_TAG}-%%%%", dir), "OBS_TEST_TAG=blue",
                             "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
        run_result_free(&shim);
    }
    ok(file_exists(path_in(dir, "tag-blue-%.obs")), "%%q{VAR} and %%%%: tag-blue-%%.obs");
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/h-%%h", dir), "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
        run_result_free(&shim);
    }
    snprintf(want, sizeof want, "h-%s.obs", host);
    ok(file_exists(path_in(dir, want)), "%%h: %s", want);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/nojson", dir), "OBS_JSON=0", NULL};
        run_app(args, env, 1, &shim);
    }
    ok(file_exists(path_in(dir, "nojson.obs")) && !file_exists(path_in(dir, "nojson.json")) &&
           !file_exists(path_in(dir, "nojson.pftrace")) && strstr(shim.err, "Kernels") != NULL,
       "OBS_JSON=0 (the older switch): trace and summary, no timeline");
    run_result_free(&shim);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/json", dir), "OBS_TRACE=json", "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
    }
    ok(file_exists(path_in(dir, "json.json")) && !file_exists(path_in(dir, "json.pftrace")) &&
           strstr(shim.err, "json.json") != NULL && warning_lines(shim.err) == 0,
       "OBS_TRACE=json: the JSON, named on the wrote line, no .pftrace");
    run_result_free(&shim);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/none", dir), "OBS_TRACE=none", "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
    }
    ok(file_exists(path_in(dir, "none.obs")) && !file_exists(path_in(dir, "none.json")) &&
           !file_exists(path_in(dir, "none.pftrace")) && warning_lines(shim.err) == 0,
       "OBS_TRACE=none: the .obs only");
    run_result_free(&shim);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/bad", dir), "OBS_TRACE=chrome", "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
    }
    ok(file_exists(path_in(dir, "bad.pftrace")) && !file_exists(path_in(dir, "bad.json")) &&
           warning_lines(shim.err) == 1 && strstr(shim.err, "obsshim: warning: OBS_TRACE=chrome") != NULL,
       "OBS_TRACE=chrome: one obsshim: warning, the default (perfetto)");
    if (warning_lines(shim.err) != 1)
        diag_text("stderr", shim.err);
    run_result_free(&shim);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/nosum", dir), "OBS_SUMMARY=0", NULL};
        run_app(args, env, 1, &shim);
    }
    ok(file_exists(path_in(dir, "nosum.pftrace")) && strstr(shim.err, "Kernels") == NULL &&
           count_lines_with(shim.err, "obsshim:") == 1,
       "OBS_SUMMARY=0: the timeline, and only the line naming the files");
    run_result_free(&shim);
}

int main(void)
{
    app = shim_build_path("tests/apps/shim_app");
    if (!test_executable(app))
        skip_all("%s not built", app);
    snprintf(tmp, sizeof tmp, "%s", test_tmpdir());
    if (chdir(tmp) != 0)
        bail("chdir %s", tmp);
    plan_lazy();
    test_return_and_exit();
    test_signal("TERM", SIGTERM);
    test_signal("INT", SIGINT);
    test_own_handler();
    test_fork();
    test_unwritable();
    test_stolen_fd();
    test_disk_full();
    test_bad_values();
    test_quiet_cases();
    test_errno();
    test_missing_runtime();
    test_unregistered_kernel();
    test_local_runtime();
    test_early_constructor();
    test_names();
    return 0;
}
