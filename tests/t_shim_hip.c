/* The shim's HIP hooks against the simulator's ground truth.
 *
 * tests/apps/hip_api_driver calls every entry point of OBS_HIP_API (and,
 * with --errors, again with invalid arguments). Under the shim:
 *   - the program's output (each call's return code) and exit status are
 *     those of a run without the shim;
 *   - the trace holds one CALL record per hooked call: per API, the count
 *     equals the simulator's log exactly;
 *   - record by record, in order: API, kernel name, stream handle (handle 0
 *     of an _spt entry point is the per-thread stream, 0x2), bytes (graph
 *     launches: node count) and return code agree with the log;
 *   - copy directions (implicit ones included), module launch grids in
 *     blocks (hipExtModuleLaunchKernel's work items divided by the block);
 *   - the shim's own runtime calls are only hipGraphGetNodes after each
 *     hipGraphInstantiate and one name query per kernel pointer that no
 *     registration named.
 * With failures injected (OBS_SIM_FAIL), the same output and the injected
 * codes in the records.
 * --threads 8 --launches 100000: 800 000 hipLaunchKernel records, 0 lost.
 *
 * This program is also its own test app (argv[1]):
 *   --app-errno    dlopen()s the simulator with RTLD_LOCAL, then makes calls
 *                  with errno set to a mark and prints "api status errno",
 *                  so that the shim's soname fallback, errno pass-through
 *                  and the run-time name fallback are seen;
 *   --app-missing  calls hooked entry points with no HIP runtime loaded:
 *                  the shim must not call what is not there. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/api_list.h"
#include "shim/abi/hip_abi.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define DRIVER_HOOKED_CALLS 61
#define DRIVER_ERROR_HOOKED_CALLS 31
#define THREADS 8
#define LAUNCHES 100000L

static int is_spt(const char *api)
{
    size_t l = strlen(api);
    return l > 4 && strcmp(api + l - 4, "_spt") == 0;
}

/* Log lines of recorded APIs only. */
static size_t recorded_only(struct sim_call *calls, size_t n)
{
    size_t i, kept = 0;
    for (i = 0; i < n; i++)
        if (shim_api_index(calls[i].api) > 0)
            calls[kept++] = calls[i];
    return kept;
}

/* The stream handle the trace should show for a log line: the handle as
 * passed; a call with none ("-") or handle 0 is on the null stream, or on
 * the per-thread stream (hipStreamPerThread, 0x2) for an _spt entry point. */
static unsigned long long expected_handle(const struct sim_call *c)
{
    unsigned long long h = strcmp(c->stream, "-") == 0 ? 0 : strtoull(c->stream, NULL, 16);
    return h == 0 && is_spt(c->api) ? 2 : h;
}

static long long trace_handle(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_stream *s;
    if (c->stream == 0)
        return 0;
    s = obs_trace_stream(t, c->stream);
    return s ? (long long)s->handle : -2;
}

/* Compare the trace with the log record by record; one check per field. */
static void compare_records(const struct obs_trace *t, struct sim_call *log, size_t nlog, const char *mode)
{
    size_t i, n = t->ncalls < nlog ? t->ncalls : nlog;
    size_t bad_api = 0, bad_name = 0, bad_stream = 0, bad_bytes = 0, bad_status = 0;

    for (i = 0; i < n; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct sim_call *l = &log[i];
        if (strcmp(obs_api_name(c->api), l->api) != 0) {
            if (bad_api++ == 0)
                diag("%s record %zu: trace %s, log %s", mode, i, obs_api_name(c->api), l->api);
            continue;
        }
        if (strcmp(l->name, "-") != 0) {
            const char *name = c->kernel ? t->kernels[c->kernel].mangled : "";
            if (strcmp(name, l->name) != 0 && bad_name++ == 0)
                diag("%s record %zu %s: name %s, log %s", mode, i, l->api, name, l->name);
        }
        if (trace_handle(t, c) != (long long)expected_handle(l) && bad_stream++ == 0)
            diag("%s record %zu %s: stream 0x%llx, log %s", mode, i, l->api, (unsigned long long)trace_handle(t, c),
                 l->stream);
        if (strcmp(l->bytes, "-") != 0 && c->u.bytes != strtoull(l->bytes, NULL, 10) && bad_bytes++ == 0)
            diag("%s record %zu %s: bytes %llu, log %s", mode, i, l->api, (unsigned long long)c->u.bytes, l->bytes);
        if (c->status != l->status && bad_status++ == 0)
            diag("%s record %zu %s: status %d, log %ld", mode, i, l->api, c->status, l->status);
    }
    is_int(0, (long long)bad_api, "%s: records are the log's calls, in order", mode);
    is_int(0, (long long)bad_name, "%s: kernel names match the registered names", mode);
    is_int(0, (long long)bad_stream, "%s: stream handles match (_spt: the per-thread stream)", mode);
    is_int(0, (long long)bad_bytes, "%s: byte counts (and graph node counts) match", mode);
    is_int(0, (long long)bad_status, "%s: return codes match", mode);
}

/* Per API: records in the trace == lines in the log. */
static void compare_counts(const struct obs_trace *t, const struct sim_call *log, size_t nlog, const char *mode)
{
    unsigned api;
    size_t i, mismatches = 0;
    for (api = 1; api < OBS_API_COUNT; api++) {
        unsigned long in_log = 0, in_trace = trace_api_count(t, (int)api);
        for (i = 0; i < nlog; i++)
            if (strcmp(log[i].api, obs_api_name(api)) == 0)
                in_log++;
        if (in_log != in_trace) {
            mismatches++;
            diag("%s: %s: %lu records, %lu log lines", mode, obs_api_name(api), in_trace, in_log);
        }
    }
    is_int(0, (long long)mismatches, "%s: records per API equal the log's calls per API", mode);
}

static size_t count_api(const struct sim_call *log, size_t n, const char *api)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++)
        k += strcmp(log[i].api, api) == 0;
    return k;
}

/* Calls per API without and with the shim: equal except for the shim's
 * graph walk after each successful instantiation (the driver's graph has a
 * kernel and a copy: hipGraphGetNodes twice, hipGraphNodeGetType per node,
 * hipGraphKernelNodeGetParams per kernel node; hipRuntimeGetVersion once
 * per process, for the node type numbering) and its kernel name queries
 * (name_queries in all). */
static void compare_runtime_calls(const struct sim_call *plain, size_t nplain, const struct sim_call *shim,
                                  size_t nshim, size_t name_queries, const char *mode)
{
    static const struct {
        const char *api;
        size_t per_instantiation;
    } walk[] = {{"hipGraphGetNodes", 2}, {"hipGraphNodeGetType", 2}, {"hipGraphKernelNodeGetParams", 1}};
    const struct sim_call *logs[2] = {plain, shim};
    size_t sizes[2] = {nplain, nshim};
    size_t i, k, w, instantiations = 0, extra_names = 0, extra_version = 0, differ = 0, walk_wrong = 0;

    for (i = 0; i < nshim; i++)
        if (strcmp(shim[i].api, "hipGraphInstantiate") == 0 && shim[i].status == 0)
            instantiations++;
    for (k = 0; k < 2; k++)
        for (i = 0; i < sizes[k]; i++) {
            const char *api = logs[k][i].api;
            size_t a, b;
            int walked = -1;
            if (count_api(logs[k], i, api) != 0 || (k == 1 && count_api(plain, nplain, api) != 0))
                continue; /* counted already */
            a = count_api(shim, nshim, api);
            b = count_api(plain, nplain, api);
            for (w = 0; w < sizeof walk / sizeof walk[0]; w++)
                if (strcmp(api, walk[w].api) == 0)
                    walked = (int)w;
            if (walked >= 0) {
                if (a - b != walk[walked].per_instantiation * instantiations && walk_wrong++ < 3)
                    diag("%s: %s: %zu extra calls for %zu instantiations", mode, api, a - b, instantiations);
            } else if (strcmp(api, "hipRuntimeGetVersion") == 0) {
                extra_version = a - b;
            } else if (strcmp(api, "hipKernelNameRefByPtr") == 0 || strcmp(api, "hipKernelNameRef") == 0) {
                extra_names += a - b;
            } else if (a != b && differ++ < 3) {
                diag("%s: %s called %zu times under the shim, %zu without", mode, api, a, b);
            }
        }
    is_int(0, (long long)differ, "%s: the shim makes no runtime call of its own but graph walks and names", mode);
    is_int(0, (long long)walk_wrong + (extra_version == (instantiations > 0) ? 0 : 1),
           "%s: one read-only walk per graph instantiated (%zu)", mode, instantiations);
    is_int((long long)name_queries, (long long)extra_names, "%s: %zu kernel name queries (unnamed pointers)", mode,
           name_queries);
}

/* Default mode: the direction of every copy, in call order. */
static void check_directions(const struct obs_trace *t)
{
    static const struct {
        const char *api;
        unsigned dir;
    } want[] = {
        {"hipMemcpy", OBS_DIR_HTOD},           {"hipMemcpy_spt", OBS_DIR_DTOH},
        {"hipMemcpyAsync", OBS_DIR_DTOD},      {"hipMemcpyAsync_spt", OBS_DIR_DEFAULT},
        {"hipMemcpyHtoD", OBS_DIR_HTOD},       {"hipMemcpyDtoH", OBS_DIR_DTOH},
        {"hipMemcpyDtoD", OBS_DIR_DTOD},       {"hipMemcpyHtoDAsync", OBS_DIR_HTOD},
        {"hipMemcpyDtoHAsync", OBS_DIR_DTOH},  {"hipMemcpyDtoDAsync", OBS_DIR_DTOD},
        {"hipMemcpy2D", OBS_DIR_HTOD},         {"hipMemcpy2D_spt", OBS_DIR_DTOH},
        {"hipMemcpy2DAsync", OBS_DIR_DTOD},    {"hipMemcpy3D", OBS_DIR_HTOD},
        {"hipMemcpy3D_spt", OBS_DIR_DTOH},     {"hipMemcpy3DAsync", OBS_DIR_DTOD},
        {"hipMemcpyPeer", OBS_DIR_PEER},       {"hipMemcpyPeerAsync", OBS_DIR_PEER},
        {"hipMemcpyToSymbol", OBS_DIR_HTOD},   {"hipMemcpyToSymbol_spt", OBS_DIR_HTOD},
        {"hipMemcpyFromSymbol", OBS_DIR_DTOH}, {"hipMemcpyFromSymbol_spt", OBS_DIR_DTOH},
        {"hipMemcpyToSymbolAsync", OBS_DIR_HTOD}, {"hipMemcpyFromSymbolAsync", OBS_DIR_DTOH},
        {"hipMemcpyAsync", OBS_DIR_HTOD}, /* captured */
        {"hipMemcpyDtoH", OBS_DIR_DTOH},  /* after the replay */
    };
    const size_t nwant = sizeof want / sizeof want[0];
    size_t i, n = 0, bad = 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        unsigned dir = c->flags & OBS_CALL_DIR_MASK;
        if (c->kind != OBS_KIND_MEMCPY)
            continue;
        if (n >= nwant || strcmp(obs_api_name(c->api), want[n].api) != 0 || dir != want[n].dir) {
            if (bad++ == 0)
                diag("copy %zu: %s direction %u, expected %s %u", n, obs_api_name(c->api), dir,
                     n < nwant ? want[n].api : "nothing", n < nwant ? want[n].dir : 0);
        }
        n++;
    }
    ok(bad == 0 && n == nwant, "default: %zu copies, each with its direction", n);
}

/* Default mode: every launch is 4 blocks of 64 (hipExtModuleLaunchKernel:
 * 256 work items in groups of 64), and peer copies record the destination
 * device. */
static void check_launch_shapes(const struct obs_trace *t)
{
    size_t i, launches = 0, bad = 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        if (c->kind != OBS_KIND_KERNEL)
            continue;
        launches++;
        if (c->u.grid.x != 4 || c->u.grid.y != 1 || c->u.grid.z != 1 || c->block_x != 64 || c->block_y != 1 ||
            c->block_z != 1) {
            if (bad++ == 0)
                diag("%s: grid %u,%u,%u block %u,%u,%u", obs_api_name(c->api), c->u.grid.x, c->u.grid.y,
                     c->u.grid.z, c->block_x, c->block_y, c->block_z);
        }
    }
    ok(bad == 0 && launches == 8, "default: %zu launches, all grid (4,1,1) in blocks, block (64,1,1)", launches);
}

static void run_mode(const char *mode_flag, unsigned long hooked_calls, size_t name_queries)
{
    const char *driver = shim_build_path("tests/apps/hip_api_driver");
    const char *mode = mode_flag ? mode_flag + 2 : "default";
    const char *argv[] = {driver, mode_flag, NULL};
    char log_plain[4200], log_shim[4200], log_env1[4300], log_env2[4300], out_env[4300], trace[4300],
        json[4300];
    struct run_result plain, shimmed;
    struct sim_call *lp, *ls;
    size_t nlp, nls, nls_all;
    struct obs_trace *t;

    snprintf(log_plain, sizeof log_plain, "%s/hip-%s-plain.log", test_tmpdir(), mode);
    snprintf(log_shim, sizeof log_shim, "%s/hip-%s-shim.log", test_tmpdir(), mode);
    snprintf(log_env1, sizeof log_env1, "OBS_SIM_LOG=%s", log_plain);
    snprintf(log_env2, sizeof log_env2, "OBS_SIM_LOG=%s", log_shim);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/hip-%s", test_tmpdir(), mode);
    snprintf(trace, sizeof trace, "%s/hip-%s.obs", test_tmpdir(), mode);
    snprintf(json, sizeof json, "%s/hip-%s.json", test_tmpdir(), mode);
    {
        const char *env_plain[] = {log_env1, NULL};
        const char *env_shim[] = {log_env2, out_env, "OBS_SUMMARY=0", "OBS_TRACE=json", NULL};
        shim_run(argv, env_plain, 0, 60, &plain);
        shim_run(argv, env_shim, 1, 60, &shimmed);
    }
    is_int(plain.status, shimmed.status, "%s: exit status %d with and without the shim", mode, plain.status);
    ok(plain.exited && shimmed.exited && plain.status == 0, "%s: both runs exited normally, status 0", mode);
    if (!is_string(plain.out, shimmed.out, "%s: every call returned the same code with and without the shim", mode))
        diag_text("stderr under the shim", shimmed.err);
    is_int(0, (long long)warning_lines(shimmed.err), "%s: no obsshim warning", mode);
    ok(count_lines_with(shimmed.err, "obsshim: wrote") == 1, "%s: one line names the files written", mode);

    nlp = sim_log_read(log_plain, &lp);
    nls_all = sim_log_read(log_shim, &ls);
    ok(nlp > 0 && nls_all > 0, "%s: the simulator wrote both ground-truth logs", mode);
    compare_runtime_calls(lp, nlp, ls, nls_all, name_queries, mode);
    nls = recorded_only(ls, nls_all);
    is_int((long long)hooked_calls, (long long)nls, "%s: the log holds %lu hooked calls", mode, hooked_calls);

    t = shim_trace_open(trace);
    ok(t != NULL, "%s: the trace %s reads back", mode, trace);
    if (t == NULL) {
        skip_block(mode_flag ? 10 : 12, "no trace");
    } else {
        is_int((long long)nls, (long long)t->ncalls, "%s: one record per hooked call", mode);
        compare_counts(t, ls, nls, mode);
        compare_records(t, ls, nls, mode);
        is_int(0, (long long)t->records_lost, "%s: no record lost", mode);
        is_int((long long)t->ncalls, (long long)t->self_calls, "%s: the self-cost snapshot covers every call", mode);
        ok(t->ignored_bytes == 0, "%s: the file is complete (nothing ignored)", mode);
        if (mode_flag == NULL) {
            check_directions(t);
            check_launch_shapes(t);
        }
        obs_trace_free(t);
    }
    {
        char *text = test_read_file(json, NULL);
        ok(text != NULL, "%s: %s written", mode, json);
        free(text);
    }
    free(lp);
    free(ls);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* Injected failures (OBS_SIM_FAIL): the app sees the runtime's codes,
 * the records carry them. */
static void run_injected(void)
{
    const char *driver = shim_build_path("tests/apps/hip_api_driver");
    const char *argv[] = {driver, NULL};
    const char *fail = "OBS_SIM_FAIL=hipMalloc:1,hipLaunchKernel:2:719,hipMemcpyHtoD:1,hipStreamSynchronize:2:700,"
                       "hipExtModuleLaunchKernel:1:98";
    char log_shim[4200], log_env[4300], out_env[4300], trace[4300];
    struct run_result plain, shimmed;
    struct sim_call *ls;
    size_t nls, i, failed = 0, bad = 0;
    struct obs_trace *t;

    snprintf(log_shim, sizeof log_shim, "%s/hip-injected.log", test_tmpdir());
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_shim);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/hip-injected", test_tmpdir());
    snprintf(trace, sizeof trace, "%s/hip-injected.obs", test_tmpdir());
    {
        const char *env_plain[] = {fail, NULL};
        const char *env_shim[] = {fail, log_env, out_env, "OBS_SUMMARY=0", "OBS_JSON=0", NULL};
        shim_run(argv, env_plain, 0, 60, &plain);
        shim_run(argv, env_shim, 1, 60, &shimmed);
    }
    ok(plain.exited && shimmed.exited && plain.status == 1 && shimmed.status == 1,
       "injected: the driver sees the failures (exit 1) with and without the shim");
    is_string(plain.out, shimmed.out, "injected: every call returned the same code with and without the shim");
    nls = sim_log_read(log_shim, &ls);
    nls = recorded_only(ls, nls);
    t = shim_trace_open(trace);
    if (t != NULL && t->ncalls == nls) {
        for (i = 0; i < nls; i++) {
            failed += t->calls[i].status != 0;
            bad += t->calls[i].status != ls[i].status || strcmp(obs_api_name(t->calls[i].api), ls[i].api) != 0;
        }
    }
    ok(t != NULL && t->ncalls == nls && nls == DRIVER_HOOKED_CALLS, "injected: one record per hooked call");
    ok(bad == 0 && failed == 5, "injected: each record has the log's status (%zu failed)", failed);
    if (t != NULL)
        obs_trace_free(t);
    free(ls);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* 8 threads x 100 000 launches, small buffers streamed to the file. */
static void run_threads(void)
{
    const char *driver = shim_build_path("tests/apps/hip_api_driver");
    const char *argv[] = {driver, "--threads", "8", "--launches", "100000", NULL};
    char out_env[4200], trace[4200], want_line[128];
    const char *env[] = {out_env, "OBS_BUFFER_RECORDS=4096", "OBS_JSON=0", "OBS_SUMMARY=0", NULL};
    struct run_result res;
    struct obs_trace *t;
    size_t i, per_thread_ok = 0;

    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/hip-threads", test_tmpdir());
    snprintf(trace, sizeof trace, "%s/hip-threads.obs", test_tmpdir());
    shim_run(argv, env, 1, 180, &res);
    ok(res.exited && res.status == 0, "threads: the driver exits 0 under the shim");
    snprintf(want_line, sizeof want_line, "threads %d launches %ld total %ld failed 0", THREADS, LAUNCHES,
             THREADS * LAUNCHES);
    ok(strstr(res.out, want_line) != NULL, "threads: every launch succeeded (%s)", want_line);
    is_int(0, (long long)warning_lines(res.err), "threads: no obsshim warning");
    t = shim_trace_open(trace);
    ok(t != NULL, "threads: the trace reads back");
    if (t == NULL) {
        skip_block(6, "no trace");
        run_result_free(&res);
        return;
    }
    is_int(THREADS * LAUNCHES, (long long)trace_api_count(t, OBS_API_hipLaunchKernel),
           "threads: all %ld hipLaunchKernel calls recorded", THREADS * LAUNCHES);
    is_int(THREADS, (long long)trace_api_count(t, OBS_API_hipStreamSynchronize), "threads: one sync per thread");
    is_int(THREADS * (LAUNCHES + 1), (long long)t->ncalls, "threads: no other record");
    is_int(0, (long long)t->records_lost, "threads: 0 records lost");
    for (i = 0; i < t->nthreads; i++)
        per_thread_ok += t->threads[i].calls == (uint64_t)LAUNCHES + 1;
    is_int(THREADS, (long long)per_thread_ok, "threads: %d threads with %ld calls each", THREADS, LAUNCHES + 1);
    is_int((long long)t->ncalls, (long long)t->self_calls, "threads: self-cost snapshots cover every call");
    obs_trace_free(t);
    run_result_free(&res);
}

/* ---- this program as the app under test ----------------------------------------- */

#define ERRNO_MARK 7000

/* What became of errno across a call: "kept" when it is still the mark. */
static void print_call(const char *api, int status, int mark)
{
    if (errno == mark)
        printf("%s %d errno-kept\n", api, status);
    else
        printf("%s %d errno=%d\n", api, status, errno);
}

/* A hooked entry point as the app's own calls would reach it: the first
 * definition in the global scope (the shim's, when preloaded), else the
 * one in the runtime the app dlopen()ed. */
static void *entry(void *runtime, const char *symbol)
{
    void *fn = dlsym(RTLD_DEFAULT, symbol);
    if (fn == NULL && runtime != NULL)
        fn = dlsym(runtime, symbol);
    if (fn == NULL) {
        printf("%s missing\n", symbol);
        exit(3);
    }
    return fn;
}

#define APP_CALL(runtime, name, call_args)                                      \
    do {                                                                        \
        obs_fn_##name fn_ = (obs_fn_##name)entry(runtime, #name);               \
        int status_;                                                            \
        errno = ERRNO_MARK + __LINE__;                                          \
        status_ = fn_ call_args;                                                \
        print_call(#name, status_, ERRNO_MARK + __LINE__);                      \
    } while (0)

static char unregistered_kernel; /* a "host stub" no registration names */

static void app_ext_module_launch(void *runtime)
{
    obs_fn_hipExtModuleLaunchKernel fn =
        (obs_fn_hipExtModuleLaunchKernel)entry(runtime, OBS_HIP_SYMBOL_hipExtModuleLaunchKernel);
    int status;
    errno = ERRNO_MARK;
    status = fn(NULL, 256, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL, NULL, NULL, 0);
    print_call("hipExtModuleLaunchKernel", status, ERRNO_MARK);
}

static int app_errno(const char *runtime_path)
{
    void *runtime = dlopen(runtime_path, RTLD_NOW | RTLD_LOCAL);
    static unsigned char host[4096];
    obs_hipDim3 grid = {2, 1, 1}, block = {32, 1, 1};
    void *dev = NULL;
    int n = 1;
    void *args[1] = {&n};

    if (runtime == NULL) {
        printf("dlopen failed: %s\n", dlerror());
        return 3;
    }
    APP_CALL(runtime, hipMalloc, (&dev, sizeof host));
    APP_CALL(runtime, hipMemcpy, (dev, host, 64, obs_hipMemcpyHostToDevice));
    APP_CALL(runtime, hipLaunchKernel, (&unregistered_kernel, grid, block, args, 0, NULL));
    APP_CALL(runtime, hipLaunchKernel, (&unregistered_kernel, grid, block, args, 0, NULL));
    APP_CALL(runtime, hipMemsetD32, (dev, 0, 2 * sizeof host / 4)); /* too long: invalid */
    app_ext_module_launch(runtime);
    APP_CALL(runtime, hipStreamSynchronize, (NULL));
    APP_CALL(runtime, hipFree, (dev));
    APP_CALL(runtime, hipFree, (host)); /* not device memory */
    fflush(stdout);
    return 0;
}

static int app_missing(void)
{
    void *dev = NULL;
    APP_CALL(NULL, hipMalloc, (&dev, 64));
    APP_CALL(NULL, hipMalloc, (&dev, 64));
    app_ext_module_launch(NULL);
    fflush(stdout);
    return 0;
}

static void run_errno_app(const char *self)
{
    const char *runtime = shim_build_path("sim/.libs/libamdhip64.so.5");
    const char *argv[] = {self, "--app-errno", runtime, NULL};
    char log_plain[4200], log_shim[4200], env_plain_log[4300], env_shim_log[4300], out_env[4300], trace[4300];
    struct run_result plain, shimmed;
    struct sim_call *lp, *ls;
    size_t nlp, nls;
    struct obs_trace *t;

    snprintf(log_plain, sizeof log_plain, "%s/errno-plain.log", test_tmpdir());
    snprintf(log_shim, sizeof log_shim, "%s/errno-shim.log", test_tmpdir());
    snprintf(env_plain_log, sizeof env_plain_log, "OBS_SIM_LOG=%s", log_plain);
    snprintf(env_shim_log, sizeof env_shim_log, "OBS_SIM_LOG=%s", log_shim);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/errno", test_tmpdir());
    snprintf(trace, sizeof trace, "%s/errno.obs", test_tmpdir());
    {
        const char *env_plain[] = {env_plain_log, NULL};
        const char *env_shim[] = {env_shim_log, out_env, "OBS_SUMMARY=0", "OBS_JSON=0", NULL};
        shim_run(argv, env_plain, 0, 60, &plain);
        shim_run(argv, env_shim, 1, 60, &shimmed);
    }
    ok(plain.exited && plain.status == 0 && shimmed.exited && shimmed.status == 0,
       "dlopen app: exits 0 with and without the shim");
    ok(strstr(plain.out, "hipFree 1 ") != NULL && strstr(plain.out, "hipLaunchKernel 98 ") != NULL &&
           strstr(plain.out, "hipExtModuleLaunchKernel 200 ") != NULL,
       "dlopen app: the runtime's errors were seen");
    if (!is_string(plain.out, shimmed.out, "dlopen app: return codes and errno as without the shim"))
        diag_text("stderr under the shim", shimmed.err);
    is_int(0, (long long)warning_lines(shimmed.err), "dlopen app: no warning (runtime found by its soname)");
    nlp = sim_log_read(log_plain, &lp);
    nls = sim_log_read(log_shim, &ls);
    is_int(1, (long long)(count_api(ls, nls, "hipKernelNameRefByPtr") - count_api(lp, nlp, "hipKernelNameRefByPtr")),
           "dlopen app: one name query for two launches of an unnamed kernel");
    t = shim_trace_open(trace);
    ok(t != NULL, "dlopen app: the trace reads back");
    if (t != NULL) {
        size_t i, unnamed_ok = 0;
        is_int(9, (long long)t->ncalls, "dlopen app: 9 calls recorded");
        is_int(1, (long long)trace_api_count(t, OBS_API_hipExtModuleLaunchKernel),
               "dlopen app: hipExtModuleLaunchKernel recorded through its C++ symbol");
        for (i = 0; i < t->ncalls; i++)
            if (t->calls[i].api == OBS_API_hipLaunchKernel && t->calls[i].kernel != 0 && t->calls[i].status == 98)
                unnamed_ok++;
        is_int(2, (long long)unnamed_ok, "dlopen app: the unnamed kernel's launches carry a fallback name");
        obs_trace_free(t);
    } else {
        skip_block(3, "no trace");
    }
    free(lp);
    free(ls);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

static void run_missing_app(const char *self)
{
    const char *argv[] = {self, "--app-missing", NULL};
    char dir[4200], out_env[4300];
    struct run_result res;
    const char *env[] = {out_env, "OBS_SUMMARY=0", NULL};

    snprintf(dir, sizeof dir, "%s/missing", test_tmpdir());
    if (mkdir(dir, 0755) != 0)
        bail("mkdir %s", dir);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/trace", dir);
    shim_run(argv, env, 1, 60, &res);
    ok(res.exited && res.status == 0, "no runtime: the app runs to its end");
    is_string("hipMalloc 3 errno-kept\nhipMalloc 3 errno-kept\nhipExtModuleLaunchKernel 3 errno-kept\n", res.out,
              "no runtime: hipErrorNotInitialized, errno untouched, nothing called");
    is_int(2, (long long)warning_lines(res.err), "no runtime: one warning per missing entry point");
    ok(strstr(res.err, "hipMalloc: not found") != NULL && strstr(res.err, "hipExtModuleLaunchKernel: not found"),
       "no runtime: the warnings name the entry points");
    is_int(0, (long long)dir_count_suffix(dir, ".obs", NULL, 0), "no runtime: no trace file");
    run_result_free(&res);
}

int main(int argc, char **argv)
{
    const char *driver = shim_build_path("tests/apps/hip_api_driver");

    if (argc == 3 && strcmp(argv[1], "--app-errno") == 0)
        return app_errno(argv[2]);
    if (argc == 2 && strcmp(argv[1], "--app-missing") == 0)
        return app_missing();
    if (!test_executable(driver))
        skip_all("%s not built", driver);
    plan(24 + 22 + 4 + 10 + 9 + 5);
    run_mode(NULL, DRIVER_HOOKED_CALLS, 0);
    run_mode("--errors", DRIVER_ERROR_HOOKED_CALLS, 1);
    run_injected();
    run_threads();
    run_errno_app(shim_build_path("tests/t_shim_hip"));
    run_missing_app(shim_build_path("tests/t_shim_hip"));
    return 0;
}
