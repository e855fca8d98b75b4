/* The simulated CUDA driver (sim/, libcuda.so.1) on its own:
 *   - exports: every entry point of shim/abi/cuda_driver_abi.h's three
 *     lists and cudnnSimFakeEntry, nothing internal;
 *   - tests/apps/driver_linked (-lcuda) and tests/apps/driver_static_like
 *     (dlopen + cuGetProcAddress) against it: the ground-truth log holds
 *     exactly their calls, in order (api and status line by line), every
 *     hooked API, the counts per kind, the bytes, kernel names, node counts;
 *     the virtual clock against the cost model; cuGetProcAddress's variants
 *     by version and flags, NOT_FOUND and VERSION_NOT_SUFFICIENT; the 4-arg
 *     cuGetProcAddress; the banner rule; OBS_SIM_FAIL;
 *   - tests/apps/cuda_api_driver on the simulated runtime with
 *     OBS_SIM_CUDART_VIA_DRIVER=1: each runtime launch appears once as a
 *     runtime line and once (just before) as the driver launch it became;
 *   - in this process (dlopen, entry points from cuGetProcAddress_v2): the
 *     driver's error codes; in a child, OBS_SIM_SYNC_WAIT (host syncs wait
 *     for the virtual clock). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abi/cuda_driver_abi.h"
#include "apps/driver_calls.h"
#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"

#define BANNER "obsshim-sim: simulated CUDA driver (no GPU; kernels are not executed)"
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Lookups driver_static_like makes before the sequence. */
#define PROC_ROW_COUNT(base, version, per_thread, symbol) +1
#define PROC_ROWS (0 OBS_CUDA_DRIVER_PROC_VERSIONS(PROC_ROW_COUNT))
#define STATIC_PROBES 17
#define DRV_SIM_VERSION_FOR_TEST 13000

#define NAME_OF(name, ret, params, args) #name,
static const char *const hooked_api[] = {OBS_CUDA_DRIVER_API(NAME_OF)};
static const char *const support_api[] = {OBS_CUDA_DRIVER_SUPPORT_API(NAME_OF)
                                              OBS_CUDA_DRIVER_PROFILER_API(NAME_OF)};
static const char *const legacy_api[] = {OBS_CUDA_DRIVER_LEGACY_API(NAME_OF)};
#undef NAME_OF

/* ---- the ground-truth log and the apps' output ---------------------------------- */

struct log_line {
    const char *api, *kind, *name, *stream, *bytes;
    int status;
};

struct lines {
    char *text;
    struct log_line *v;
    size_t count, malformed;
};

static void push(struct lines *l, struct log_line line, size_t *cap)
{
    if (l->count == *cap) {
        *cap = *cap ? 2 * *cap : 512;
        l->v = realloc(l->v, *cap * sizeof *l->v);
        if (l->v == NULL)
            bail("out of memory");
    }
    l->v[l->count++] = line;
}

/* The log: six tab-separated columns. */
static void load_log(const char *path, struct lines *log)
{
    char *p, *save = NULL;
    size_t cap = 0;
    memset(log, 0, sizeof *log);
    log->text = test_read_file(path, NULL);
    if (log->text == NULL)
        return;
    for (p = strtok_r(log->text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        char *f[6], *q = p;
        int n = 0;
        while (n < 6) {
            f[n++] = q;
            q = strchr(q, '\t');
            if (q == NULL)
                break;
            *q++ = '\0';
        }
        if (n != 6 || q != NULL) {
            log->malformed++;
            continue;
        }
        push(log, (struct log_line){f[0], f[1], f[2], f[3], f[4], atoi(f[5])}, &cap);
    }
}

/* An app's "api status" lines (not the "= " values nor "calls N failed F"). */
static void load_output(const char *out, struct lines *calls)
{
    char *p, *save = NULL;
    size_t cap = 0;
    memset(calls, 0, sizeof *calls);
    calls->text = strdup(out ? out : "");
    for (p = strtok_r(calls->text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        char *space = strchr(p, ' ');
        if (p[0] == '=' || strncmp(p, "calls ", 6) == 0 || space == NULL) {
            continue;
        }
        *space = '\0';
        push(calls, (struct log_line){p, "", "", "", "", atoi(space + 1)}, &cap);
    }
}

static void free_lines(struct lines *l)
{
    free(l->text);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static size_t log_count(const struct lines *log, const char *api, const char *kind)
{
    size_t i, n = 0;
    for (i = 0; i < log->count; i++)
        if ((api == NULL || strcmp(log->v[i].api, api) == 0) &&
            (kind == NULL || strcmp(log->v[i].kind, kind) == 0))
            n++;
    return n;
}

static const struct log_line *log_first(const struct lines *log, const char *api)
{
    size_t i;
    for (i = 0; i < log->count; i++)
        if (strcmp(log->v[i].api, api) == 0)
            return &log->v[i];
    return NULL;
}

/* The value printed as "= key N" by an app, or -1. */
static long long printed_value(const char *out, const char *key)
{
    char needle[128];
    const char *p;
    snprintf(needle, sizeof needle, "\n= %s ", key);
    p = out ? strstr(out, needle) : NULL;
    return p ? atoll(p + strlen(needle)) : -1;
}

static const char *app_path(const char *name)
{
    return test_path(test_builddir(), name);
}

static void run_on_sim(const char *const argv[], const char *log_path, const char *extra_env,
                       struct run_result *res)
{
    char lib_env[4200], log_env[4200];
    const char *env[5];
    snprintf(lib_env, sizeof lib_env, "LD_LIBRARY_PATH=%s/sim/.libs", test_builddir());
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    env[0] = lib_env;
    env[1] = log_env;
    env[2] = "OBS_SIM_QUIET=1";
    env[3] = extra_env;
    env[4] = NULL;
    remove(log_path);
    if (run_program(argv, env, 120, res) != 0)
        bail("cannot run %s", argv[0]);
}

/* ---- exports ------------------------------------------------------------------------ */

static void *open_sim(void)
{
    return dlopen(test_path(test_builddir(), "sim/.libs/libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
}

static size_t missing_from(void *lib, const char *const *names, size_t n)
{
    size_t i, missing = 0;
    for (i = 0; i < n; i++)
        if (dlsym(lib, names[i]) == NULL) {
            diag("missing %s", names[i]);
            missing++;
        }
    return missing;
}

static void test_exports(void)
{
    void *lib = open_sim();
    if (!ok(lib != NULL, "dlopen the simulated libcuda.so.1")) {
        diag("%s", dlerror());
        skip_block(4, "no library");
        return;
    }
    is_int(0, (long long)missing_from(lib, hooked_api, COUNT_OF(hooked_api)),
           "all %zu hooked entry points exported", COUNT_OF(hooked_api));
    is_int(0, (long long)missing_from(lib, support_api, COUNT_OF(support_api)),
           "all %zu support entry points exported", COUNT_OF(support_api));
    is_int(0, (long long)missing_from(lib, legacy_api, COUNT_OF(legacy_api)),
           "all %zu CUDA 2.x entry points exported", COUNT_OF(legacy_api));
    ok(dlsym(lib, "cudnnSimFakeEntry") != NULL && dlsym(lib, "drv_finish") == NULL &&
           dlsym(lib, "drv_submit") == NULL && dlsym(lib, "sim_fault_status") == NULL &&
           dlsym(lib, "drv_lock") == NULL,
       "cudnnSimFakeEntry exported, internal helpers not");
}

/* ---- the apps ------------------------------------------------------------------------ */

/* Output and log agree line by line on (api, status). */
static void same_calls(const struct lines *calls, const struct lines *log, const char *app)
{
    size_t i, first_diff = (size_t)-1;
    for (i = 0; i < calls->count && i < log->count; i++)
        if (strcmp(calls->v[i].api, log->v[i].api) != 0 || calls->v[i].status != log->v[i].status) {
            first_diff = i;
            break;
        }
    if (first_diff != (size_t)-1)
        diag("line %zu: %s printed '%s %d', log has '%s %d'", first_diff + 1, app, calls->v[first_diff].api,
             calls->v[first_diff].status, log->v[first_diff].api, log->v[first_diff].status);
    ok(first_diff == (size_t)-1 && calls->count == log->count,
       "%s: its %zu calls are the log's %zu lines, in order (api, status)", app, calls->count, log->count);
}

static void check_sequence_log(const struct lines *log, const char *app)
{
    const struct log_line *l;
    size_t i, missing = 0;

    for (i = 0; i < COUNT_OF(hooked_api); i++)
        if (log_count(log, hooked_api[i], NULL) == 0) {
            diag("%s: no %s in the log", app, hooked_api[i]);
            missing++;
        }
    is_int(0, (long long)missing, "%s: every hooked API is in the log", app);
    is_int(DRV_CALLS_KERNEL, (long long)log_count(log, NULL, "kernel"), "%s: kernel lines", app);
    is_int(DRV_CALLS_GRAPH, (long long)log_count(log, NULL, "graph"), "%s: graph lines", app);
    /* The CUDA 2.x copies and memset are logged with their kind too. */
    is_int(DRV_CALLS_MEMCPY + 6, (long long)log_count(log, NULL, "memcpy"), "%s: memcpy lines", app);
    is_int(DRV_CALLS_MEMSET + 1, (long long)log_count(log, NULL, "memset"), "%s: memset lines", app);
    is_int(DRV_CALLS_SYNC, (long long)log_count(log, NULL, "sync"), "%s: sync lines", app);
    is_int(DRV_CALLS_LEGACY, (long long)log_count(log, NULL, NULL) - (long long)log_count(log, NULL, "other") -
               DRV_CALLS_HOOKED - 6 /* alloc and free */,
           "%s: the 9 CUDA 2.x calls are logged", app);

    l = log_first(log, "cuLaunchKernel");
    ok(l && strcmp(l->name, DRV_PREFILL_NAME) == 0, "%s: cuLaunchKernel logs the kernel's name", app);
    l = log_first(log, "cuLaunchKernel_ptsz");
    ok(l && strcmp(l->name, DRV_DECODE_NAME) == 0 && strcmp(l->stream, "0x0") == 0,
       "%s: cuLaunchKernel_ptsz on stream 0, a library kernel's function named", app);
    l = log_first(log, "cuMemcpyHtoD_v2");
    ok(l && strcmp(l->bytes, "4096") == 0 && strcmp(l->stream, "-") == 0,
       "%s: cuMemcpyHtoD_v2 4096 bytes, no stream", app);
    l = log_first(log, "cuMemcpy2DAsync_v2");
    ok(l && strcmp(l->bytes, "512") == 0, "%s: 2D copy bytes = width x height", app);
    l = log_first(log, "cuMemcpy3D_v2_ptds");
    ok(l && strcmp(l->bytes, "512") == 0, "%s: 3D copy bytes = width x height x depth", app);
    l = log_first(log, "cuMemsetD2D32_v2");
    ok(l && strcmp(l->bytes, "512") == 0, "%s: 2D memset bytes = elements x 4 x rows", app);
    l = log_first(log, "cuMemsetD16Async");
    ok(l && strcmp(l->bytes, "4096") == 0, "%s: D16 memset bytes = N x 2", app);
    l = log_first(log, "cuGraphLaunch");
    ok(l && strcmp(l->bytes, "3") == 0 && strcmp(l->kind, "graph") == 0, "%s: graph launch of 3 nodes", app);
    l = log_first(log, "cuMemAlloc");
    ok(l && l->status == OBS_CUDA_ERROR_NOT_SUPPORTED, "%s: the 32-bit cuMemAlloc returns 801", app);
    l = log_first(log, "cudnnSimFakeEntry");
    ok(l && l->status == 0, "%s: cudnnSimFakeEntry called", app);
}

static void check_clock(const char *out, const char *app)
{
    uint64_t launch = sim_kernel_cost_ns(64 * 256, 0);
    uint64_t replay = sim_kernel_cost_ns(64 * 256, 1) + sim_copy_cost_ns(4096, 1) + sim_memset_cost_ns(4096);
    is_int(DRV_SIM_VERSION_FOR_TEST, printed_value(out, "driver_version"), "%s: cuDriverGetVersion", app);
    is_int((long long)(4 * launch), printed_value(out, "elapsed_ns"),
           "%s: 4 launches between two events: 4 x kernel cost", app);
    is_int(3, printed_value(out, "graph_nodes"), "%s: captured graph has 3 nodes", app);
    is_int((long long)(2 * replay), printed_value(out, "graph_elapsed_ns"),
           "%s: 2 replays cost 2 x (graph kernel + DtoD copy + memset)", app);
}

static void test_linked(void)
{
    const char *log_path = test_path(test_tmpdir(), "linked.log");
    const char *argv[] = {app_path("tests/apps/driver_linked"), NULL};
    struct run_result res;
    struct lines log, calls;
    char want[64];

    run_on_sim(argv, log_path, NULL, &res);
    snprintf(want, sizeof want, "calls %d failed 0\n", DRV_CALLS_SEQUENCE);
    if (!ok(res.exited && res.status == 0 && strstr(res.out, want), "driver_linked: exit 0, %s", want))
        diag_text("stderr", res.err);
    load_log(log_path, &log);
    load_output(res.out, &calls);
    is_int(0, (long long)log.malformed, "driver_linked: every log line has 6 columns");
    same_calls(&calls, &log, "driver_linked");
    check_sequence_log(&log, "driver_linked");
    check_clock(res.out, "driver_linked");
    ok(strstr(res.err, BANNER) == NULL, "driver_linked: OBS_SIM_QUIET=1: no banner");
    free_lines(&log);
    free_lines(&calls);
    run_result_free(&res);
}

static const char *const probe_lines[] = {
    "= probe cuNoSuchEntry 13000 0 rc 500 status 1 symbol -",
    "= probe cudnnSimFakeEntry 13000 0 rc 500 status 1 symbol -",
    "= probe cuLaunchKernelEx 11050 0 rc 500 status 2 symbol -",
    "= probe cuLaunchKernel 13000 4 rc 1 status 1 symbol -",
    "= probe cuLaunchKernel 13010 0 rc 1 status 1 symbol -",
    "= probe cuMemcpyHtoD 13000 0 rc 0 status 0 symbol cuMemcpyHtoD_v2",
    "= probe cuMemcpyHtoD 13000 2 rc 0 status 0 symbol cuMemcpyHtoD_v2_ptds",
    "= probe cuMemcpyHtoD 3000 0 rc 0 status 0 symbol cuMemcpyHtoD",
    "= probe cuMemcpyHtoD 6050 2 rc 0 status 0 symbol cuMemcpyHtoD_v2",
    "= probe cuEventSynchronize 13000 2 rc 0 status 0 symbol cuEventSynchronize",
    "= probe cuCtxSynchronize 12090 0 rc 0 status 0 symbol cuCtxSynchronize",
    "= probe cuCtxSynchronize 13000 0 rc 0 status 0 symbol cuCtxSynchronize_v2",
    "= probe cuLaunchKernel 13000 1 rc 0 status 0 symbol cuLaunchKernel",
    "= probe cuGraphLaunch 13000 2 rc 0 status 0 symbol cuGraphLaunch_ptsz",
    "= probe cuGetProcAddress 11030 0 rc 0 status 0 symbol cuGetProcAddress",
    "= probe cuLaunchKernel 12000 2 rc 0 status -1 symbol cuLaunchKernel_ptsz",
    "= probe cuNoSuchEntry 12000 0 rc 500 status -1 symbol -",
};

static void test_static_like(void)
{
    const char *log_path = test_path(test_tmpdir(), "static.log");
    const char *argv[] = {app_path("tests/apps/driver_static_like"), NULL};
    const char *argv_v1[] = {app_path("tests/apps/driver_static_like"), "--proc-v1", NULL};
    struct run_result res;
    struct lines log, calls, sequence;
    size_t i, wrong = 0;
    char want[64];

    run_on_sim(argv, log_path, NULL, &res);
    snprintf(want, sizeof want, "calls %d failed 0\n", DRV_CALLS_SEQUENCE);
    if (!ok(res.exited && res.status == 0 && strstr(res.out, want), "driver_static_like: exit 0, %s", want))
        diag_text("stderr", res.err);
    load_log(log_path, &log);
    load_output(res.out, &calls);
    is_int(0, (long long)log.malformed, "driver_static_like: every log line has 6 columns");
    same_calls(&calls, &log, "driver_static_like");
    is_int(PROC_ROWS + STATIC_PROBES - 2, (long long)log_count(&log, "cuGetProcAddress_v2", NULL),
           "driver_static_like: %d lookups with cuGetProcAddress_v2", PROC_ROWS + STATIC_PROBES - 2);
    is_int(2, (long long)log_count(&log, "cuGetProcAddress", NULL), "and 2 with the 4-argument form");
    /* The first PROC_ROWS lines: one successful lookup per row, named by its base. */
    for (i = 0; i < (size_t)PROC_ROWS && i < log.count; i++)
        if (strcmp(log.v[i].api, "cuGetProcAddress_v2") != 0 || log.v[i].status != 0 ||
            strcmp(log.v[i].kind, "other") != 0)
            wrong++;
    is_int(0, (long long)wrong, "every row of OBS_CUDA_DRIVER_PROC_VERSIONS served (status 0)");
    ok(log.count > 13 && strcmp(log.v[12].name, "cuMemcpyHtoD") == 0,
       "a lookup logs the name asked for in the name column");
    for (i = 0; i < COUNT_OF(probe_lines); i++) {
        char needle[256];
        snprintf(needle, sizeof needle, "%s\n", probe_lines[i]);
        if (!ok(res.out && strstr(res.out, needle) != NULL, "%s", probe_lines[i] + 2))
            diag_text("output", res.out);
    }
    /* The sequence after the lookups: the same checks as for the linked app. */
    sequence = log;
    sequence.v = log.v + PROC_ROWS + STATIC_PROBES;
    sequence.count = log.count > (size_t)(PROC_ROWS + STATIC_PROBES) ? log.count - PROC_ROWS - STATIC_PROBES : 0;
    is_int(DRV_CALLS_SEQUENCE, (long long)sequence.count, "driver_static_like: %d calls after the lookups",
           DRV_CALLS_SEQUENCE);
    check_sequence_log(&sequence, "driver_static_like");
    check_clock(res.out, "driver_static_like");
    free_lines(&log);
    free_lines(&calls);
    run_result_free(&res);

    /* The CUDA 11.3 4-argument cuGetProcAddress serves the same entry points. */
    run_on_sim(argv_v1, log_path, NULL, &res);
    ok(res.exited && res.status == 0 && strstr(res.out, want), "driver_static_like --proc-v1: exit 0, %s",
       want);
    load_log(log_path, &log);
    is_int(PROC_ROWS + 2, (long long)log_count(&log, "cuGetProcAddress", NULL),
           "--proc-v1: every row looked up with cuGetProcAddress");
    free_lines(&log);
    run_result_free(&res);
}

static void test_banner_and_faults(void)
{
    const char *log_path = test_path(test_tmpdir(), "fault.log");
    const char *argv[] = {app_path("tests/apps/driver_linked"), NULL};
    char lib_env[4200];
    const char *env[3];
    struct run_result res;
    struct lines log;
    const struct log_line *l;

    snprintf(lib_env, sizeof lib_env, "LD_LIBRARY_PATH=%s/sim/.libs", test_builddir());
    env[0] = lib_env;
    env[1] = "OBS_SIM_QUIET";
    env[2] = NULL;
    if (run_program(argv, env, 120, &res) != 0)
        bail("cannot run driver_linked");
    ok(res.exited && res.status == 0 && strstr(res.err, BANNER "\n") != NULL &&
           strstr(strstr(res.err, BANNER) + 1, BANNER) == NULL,
       "without OBS_SIM_QUIET the banner goes to stderr once");
    run_result_free(&res);

    run_on_sim(argv, log_path, "OBS_SIM_FAIL=cuLaunchKernelEx:1:400,cuMemAlloc_v2:2:2", &res);
    ok(res.exited && res.status == 1 && strstr(res.out, "\ncuLaunchKernelEx 400\n") &&
           strstr(res.out, "failed 2\n"),
       "OBS_SIM_FAIL: the app sees the injected statuses");
    load_log(log_path, &log);
    l = log_first(&log, "cuLaunchKernelEx");
    ok(l && l->status == 400, "OBS_SIM_FAIL: the log shows 400 for cuLaunchKernelEx");
    ok(log.count > 0 && log_count(&log, "cuMemAlloc_v2", NULL) == 3, "cuMemAlloc_v2 still logged 3 times");
    {
        size_t i, n = 0;
        for (i = 0; i < log.count; i++)
            if (strcmp(log.v[i].api, "cuMemAlloc_v2") == 0 && ++n == 2)
                is_int(OBS_CUDA_ERROR_OUT_OF_MEMORY, log.v[i].status, "the 2nd cuMemAlloc_v2 fails with the injected 2");
    }
    free_lines(&log);
    run_result_free(&res);
}

/* ---- the simulated runtime through the driver ---------------------------------------- */

/* The driver entry point the real cudart calls for a runtime launch. */
static const char *driver_launch_for(const char *runtime_api)
{
    int ptsz = strstr(runtime_api, "_ptsz") != NULL;
    if (strstr(runtime_api, "Cooperative"))
        return ptsz ? "cuLaunchCooperativeKernel_ptsz" : "cuLaunchCooperativeKernel";
    if (strstr(runtime_api, "ExC"))
        return ptsz ? "cuLaunchKernelEx_ptsz" : "cuLaunchKernelEx";
    return ptsz ? "cuLaunchKernel_ptsz" : "cuLaunchKernel";
}

static void test_cudart_via_driver(void)
{
    const char *log_path = test_path(test_tmpdir(), "via.log");
    const char *argv[] = {app_path("tests/apps/cuda_api_driver"), NULL};
    struct run_result res;
    struct lines log;
    size_t i, runtime = 0, driver = 0, paired = 0;

    run_on_sim(argv, log_path, "OBS_SIM_CUDART_VIA_DRIVER=1", &res);
    ok(res.exited && res.status == 0 && strstr(res.out, "calls 98 failed 0\n"),
       "cuda_api_driver with OBS_SIM_CUDART_VIA_DRIVER=1: exit 0, same 98 calls");
    load_log(log_path, &log);
    for (i = 0; i < log.count; i++) {
        const struct log_line *l = &log.v[i];
        if (strcmp(l->kind, "kernel") != 0)
            continue;
        if (strncmp(l->api, "cuda", 4) == 0 || strncmp(l->api, "__cuda", 6) == 0) {
            runtime++;
            /* The driver call returns first: its line comes just before. */
            if (i > 0 && strcmp(log.v[i - 1].api, driver_launch_for(l->api)) == 0 &&
                strcmp(log.v[i - 1].name, l->name) == 0 && log.v[i - 1].status == 0)
                paired++;
        } else if (strncmp(l->api, "cu", 2) == 0) {
            driver++;
        }
    }
    is_int(9, (long long)runtime, "9 runtime launch lines");
    is_int(9, (long long)driver, "9 driver launch lines, one per runtime launch");
    is_int(9, (long long)paired, "each runtime launch preceded by its driver launch (same kernel, right flavour)");
    ok(log_count(&log, "cuGetProcAddress_v2", NULL) >= 9 && log_count(&log, "cuInit", NULL) == 1,
       "the runtime reached the driver through cuGetProcAddress_v2, after one cuInit");
    free_lines(&log);
    run_result_free(&res);

    run_on_sim(argv, log_path, NULL, &res);
    load_log(log_path, &log);
    is_int(0, (long long)log_count(&log, "cuLaunchKernel", NULL) + (long long)log_count(&log, "cuInit", NULL),
           "without OBS_SIM_CUDART_VIA_DRIVER the runtime never calls the driver");
    free_lines(&log);
    run_result_free(&res);
}

/* ---- error codes, in this process ---------------------------------------------------- */

static obs_fn_cuGetProcAddress_v2 get_proc;

static void *fetch(const char *name)
{
    void *fn = NULL;
    obs_CUdriverProcAddressQueryResult status;
    if (get_proc(name, &fn, 13000, 0, &status) != 0)
        bail("cuGetProcAddress_v2(%s) failed", name);
    return fn;
}

/* The read-only graph queries a tool walks a graph with, on a capture of
 * a CUfunction launch, a CUkernel launch and a memset: node types, and
 * the kernel of each kernel node (the CUDA 12.0 form: a CUkernel in kern,
 * func NULL; the CUDA 10.0 form: it in func). 12 checks. */
static void test_graph_queries(obs_CUstream s, obs_CUfunction f)
{
    obs_fn_cuLibraryLoadData load_library = (obs_fn_cuLibraryLoadData)fetch("cuLibraryLoadData");
    obs_fn_cuLibraryGetKernel get_kernel = (obs_fn_cuLibraryGetKernel)fetch("cuLibraryGetKernel");
    obs_fn_cuMemAlloc_v2 mem_alloc = (obs_fn_cuMemAlloc_v2)fetch("cuMemAlloc");
    obs_fn_cuLaunchKernel launch = (obs_fn_cuLaunchKernel)fetch("cuLaunchKernel");
    obs_fn_cuMemsetD8Async memset_async = (obs_fn_cuMemsetD8Async)fetch("cuMemsetD8Async");
    obs_fn_cuStreamBeginCapture_v2 begin = (obs_fn_cuStreamBeginCapture_v2)fetch("cuStreamBeginCapture");
    obs_fn_cuStreamEndCapture end = (obs_fn_cuStreamEndCapture)fetch("cuStreamEndCapture");
    obs_fn_cuGraphGetNodes get_nodes = (obs_fn_cuGraphGetNodes)fetch("cuGraphGetNodes");
    obs_fn_cuGraphNodeGetType get_type = (obs_fn_cuGraphNodeGetType)fetch("cuGraphNodeGetType");
    obs_fn_cuGraphKernelNodeGetParams_v2 params_v2 =
        (obs_fn_cuGraphKernelNodeGetParams_v2)fetch("cuGraphKernelNodeGetParams");
    obs_fn_cuGraphKernelNodeGetParams params_v1 = NULL;
    obs_CUlibrary lib = NULL;
    obs_CUkernel kernel = NULL;
    obs_CUdeviceptr d = 0;
    obs_CUgraph g = NULL;
    obs_CUgraphNode nodes[3] = {NULL, NULL, NULL};
    obs_CUgraphNodeType types[3] = {-1, -1, -1};
    obs_CUDA_KERNEL_NODE_PARAMS_v2 p1, p2;
    obs_CUDA_KERNEL_NODE_PARAMS_v1 old;
    size_t count = 0;
    obs_CUdriverProcAddressQueryResult status;

    if (get_proc("cuGraphKernelNodeGetParams", (void **)&params_v1, 11000, 0, &status) != 0)
        bail("cuGetProcAddress_v2(cuGraphKernelNodeGetParams, 11000) failed");
    is_int(0,
           load_library(&lib, "OBSSIMMOD\nk2\n", NULL, NULL, 0, NULL, NULL, 0) | get_kernel(&kernel, lib, "k2") |
               mem_alloc(&d, 64) | begin(s, 0) | launch(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) |
               launch((obs_CUfunction)kernel, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) | memset_async(d, 0, 64, s) |
               end(s, &g),
           "captured a CUfunction launch, a CUkernel launch and a memset");
    is_int(0, get_nodes(g, NULL, &count), "node count");
    is_int(3, (long long)count, "3 nodes");
    is_int(0, get_nodes(g, nodes, &count), "the nodes");
    is_int(0, get_type(nodes[0], &types[0]) | get_type(nodes[1], &types[1]) | get_type(nodes[2], &types[2]),
           "their types");
    ok(types[0] == OBS_CU_GRAPH_NODE_TYPE_KERNEL && types[1] == OBS_CU_GRAPH_NODE_TYPE_KERNEL &&
           types[2] == OBS_CU_GRAPH_NODE_TYPE_MEMSET,
       "kernel, kernel, memset");
    is_int(OBS_CUDA_ERROR_INVALID_HANDLE, get_type((obs_CUgraphNode)&count, &types[0]), "unknown node: 400");
    memset(&p1, 0xff, sizeof p1);
    memset(&p2, 0xff, sizeof p2);
    is_int(0, params_v2(nodes[0], &p1) | params_v2(nodes[1], &p2), "kernel node parameters (CUDA 12.0 form)");
    ok(p1.func == f && p1.kern == NULL, "a CUfunction launch: func, no kern");
    ok(p2.func == NULL && p2.kern == kernel, "a CUkernel launch: kern, func NULL");
    ok(params_v1(nodes[1], &old) == 0 && old.func == (obs_CUfunction)kernel,
       "the CUDA 10.0 form gives the CUkernel in func");
    is_int(OBS_CUDA_ERROR_INVALID_VALUE, params_v2(nodes[2], &p1), "kernel parameters of a memset node: 1");
}

static void test_error_codes(void)
{
    void *lib = open_sim();
    obs_fn_cuInit init;
    obs_fn_cuMemAlloc_v2 mem_alloc;
    obs_fn_cuDevicePrimaryCtxRetain retain;
    obs_fn_cuCtxSetCurrent set_current;
    obs_fn_cuModuleLoadData load;
    obs_fn_cuModuleGetFunction get_function;
    obs_fn_cuLaunchKernel launch;
    obs_fn_cuStreamSynchronize stream_sync;
    obs_fn_cuStreamCreate stream_create;
    obs_fn_cuStreamBeginCapture_v2 begin;
    obs_fn_cuStreamEndCapture end;
    obs_fn_cuEventCreate event_create;
    obs_fn_cuEventElapsedTime_v2 elapsed;
    obs_fn_cuGetErrorName error_name;
    obs_fn_cuMemcpyDtoH_v2 dtoh;
    obs_CUdeviceptr d = 0;
    obs_CUcontext ctx = NULL;
    obs_CUmodule mod = NULL;
    obs_CUfunction f = NULL;
    obs_CUstream s = NULL;
    obs_CUgraph g = (obs_CUgraph)1;
    obs_CUevent e0 = NULL, e1 = NULL;
    const char *text = "x";
    float ms;
    char buf[16];

    if (lib == NULL || (get_proc = (obs_fn_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2")) == NULL) {
        skip_block(16, "cannot open the simulated driver");
        return;
    }
    init = (obs_fn_cuInit)fetch("cuInit");
    mem_alloc = (obs_fn_cuMemAlloc_v2)fetch("cuMemAlloc");
    retain = (obs_fn_cuDevicePrimaryCtxRetain)fetch("cuDevicePrimaryCtxRetain");
    set_current = (obs_fn_cuCtxSetCurrent)fetch("cuCtxSetCurrent");
    load = (obs_fn_cuModuleLoadData)fetch("cuModuleLoadData");
    get_function = (obs_fn_cuModuleGetFunction)fetch("cuModuleGetFunction");
    launch = (obs_fn_cuLaunchKernel)fetch("cuLaunchKernel");
    stream_sync = (obs_fn_cuStreamSynchronize)fetch("cuStreamSynchronize");
    stream_create = (obs_fn_cuStreamCreate)fetch("cuStreamCreate");
    begin = (obs_fn_cuStreamBeginCapture_v2)fetch("cuStreamBeginCapture");
    end = (obs_fn_cuStreamEndCapture)fetch("cuStreamEndCapture");
    event_create = (obs_fn_cuEventCreate)fetch("cuEventCreate");
    elapsed = (obs_fn_cuEventElapsedTime_v2)fetch("cuEventElapsedTime");
    error_name = (obs_fn_cuGetErrorName)fetch("cuGetErrorName");
    dtoh = (obs_fn_cuMemcpyDtoH_v2)fetch("cuMemcpyDtoH");

    is_int(OBS_CUDA_ERROR_NOT_INITIALIZED, mem_alloc(&d, 64), "before cuInit: 3 (not initialized)");
    is_int(0, init(0), "cuInit");
    is_int(OBS_CUDA_ERROR_INVALID_CONTEXT, mem_alloc(&d, 64), "no current context: 201");
    is_int(0, retain(&ctx, 0), "primary context retained");
    is_int(0, set_current(ctx), "and made current");
    is_int(OBS_CUDA_ERROR_INVALID_IMAGE, load(&mod, "not a module"), "bad image: 200");
    is_int(0, load(&mod, "OBSSIMMOD\nk1\n"), "module with one kernel");
    is_int(OBS_CUDA_ERROR_NOT_FOUND, get_function(&f, mod, "k2"), "unknown kernel name: 500");
    is_int(OBS_CUDA_ERROR_INVALID_HANDLE,
           launch((obs_CUfunction)&f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), "unknown function: 400");
    is_int(0, get_function(&f, mod, "k1"), "k1 found");
    is_int(OBS_CUDA_ERROR_INVALID_VALUE, launch(f, 1, 1, 1, 2048, 1, 1, 0, NULL, NULL, NULL),
           "2048 threads per block: 1");
    is_int(OBS_CUDA_ERROR_INVALID_HANDLE, stream_sync((obs_CUstream)&g), "unknown stream: 400");
    is_int(OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, begin(NULL, 0), "capturing the legacy stream: 900");
    is_int(0, stream_create(&s, 0), "stream created");
    is_int(0, begin(s, 0), "capture begun");
    is_int(OBS_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, stream_sync(s), "synchronising a capturing stream: 900");
    is_int(OBS_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, end(s, &g), "and the capture is invalidated: 901");
    ok(g == NULL, "no graph from an invalidated capture");
    is_int(OBS_CUDA_ERROR_ILLEGAL_STATE, end(s, &g), "ending a capture that is not active: 401");
    is_int(0, event_create(&e0, 0) | event_create(&e1, 0), "two events");
    is_int(OBS_CUDA_ERROR_NOT_READY, elapsed(&ms, e0, e1), "elapsed time of unrecorded events: 600");
    is_int(OBS_CUDA_ERROR_INVALID_VALUE, dtoh(buf, (obs_CUdeviceptr)(uintptr_t)buf, sizeof buf),
           "DtoH from host memory: 1");
    is_int(OBS_CUDA_ERROR_INVALID_VALUE, error_name(12345, &text), "cuGetErrorName of an unknown code: 1");
    ok(text == NULL, "and NULL text");
    test_graph_queries(s, f);
}

/* In a child (the library reads OBS_SIM_SYNC_WAIT once): a kernel of
 * 1000000 blocks of 256 threads costs 2000 + 256e6 / 64 = 4 002 000 ns of
 * virtual time; each of the four ways to wait for it (stream sync, a
 * synchronous DtoH copy, context sync, event sync) waits for it with
 * OBS_SIM_SYNC_WAIT=1 and does not without. Which calls waited is read
 * from the log (OBS_SIM_LOG_WAITS=1: a "wait" line per wait), not timed;
 * with the option, the host's time around each way is at least the
 * kernel's cost (a lower bound that a busy host can only widen). Exit
 * status: a bit per way whose calls failed or returned too early. */
static int sync_wait_child(int wait, const char *log_path)
{
    void *lib;
    obs_CUcontext ctx = NULL;
    obs_CUmodule mod = NULL;
    obs_CUfunction f = NULL;
    obs_CUevent e = NULL;
    obs_CUdeviceptr d = 0;
    char buf[4];
    int way, failed = 0;
    const double cost_ms = 4.002;

    setenv("OBS_SIM_SYNC_WAIT", wait ? "1" : "0", 1);
    setenv("OBS_SIM_LOG", log_path, 1);
    setenv("OBS_SIM_LOG_WAITS", "1", 1);
    lib = open_sim();
    if (lib == NULL || (get_proc = (obs_fn_cuGetProcAddress_v2)dlsym(lib, "cuGetProcAddress_v2")) == NULL)
        return 0xff;
    if (((obs_fn_cuInit)fetch("cuInit"))(0) != 0 ||
        ((obs_fn_cuDevicePrimaryCtxRetain)fetch("cuDevicePrimaryCtxRetain"))(&ctx, 0) != 0 ||
        ((obs_fn_cuCtxSetCurrent)fetch("cuCtxSetCurrent"))(ctx) != 0 ||
        ((obs_fn_cuModuleLoadData)fetch("cuModuleLoadData"))(&mod, "OBSSIMMOD\nk1\n") != 0 ||
        ((obs_fn_cuModuleGetFunction)fetch("cuModuleGetFunction"))(&f, mod, "k1") != 0 ||
        ((obs_fn_cuMemAlloc_v2)fetch("cuMemAlloc"))(&d, sizeof buf) != 0 ||
        ((obs_fn_cuEventCreate)fetch("cuEventCreate"))(&e, 0) != 0)
        return 0xfe;
    for (way = 0; way < 4; way++) {
        struct timespec t0, t1;
        double ms;
        int rc;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = ((obs_fn_cuLaunchKernel)fetch("cuLaunchKernel"))(f, 1000000, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL);
        if (way == 0)
            rc |= ((obs_fn_cuStreamSynchronize)fetch("cuStreamSynchronize"))(NULL);
        else if (way == 1)
            rc |= ((obs_fn_cuMemcpyDtoH_v2)fetch("cuMemcpyDtoH"))(buf, d, sizeof buf);
        else if (way == 2)
            rc |= ((obs_fn_cuCtxSynchronize)fetch("cuCtxSynchronize"))();
        else
            rc |= ((obs_fn_cuEventRecord)fetch("cuEventRecord"))(e, NULL) |
                  ((obs_fn_cuEventSynchronize)fetch("cuEventSynchronize"))(e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        if (rc != 0 || (wait && ms < cost_ms))
            failed |= 1 << way;
    }
    return failed;
}

/* The log's "wait" lines after each of the child's four launches: waits[way]. */
static void waits_per_way(const char *log_path, int waits[4])
{
    FILE *f = fopen(log_path, "r");
    char line[512];
    int way = -1;
    memset(waits, 0, 4 * sizeof *waits);
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "cuLaunchKernel\t", 15) == 0)
            way++;
        else if (strncmp(line, "sim_clock_wait\twait\t", 20) == 0 && way >= 0 && way < 4)
            waits[way]++;
        else if (strncmp(line, "sim_clock_wait\t", 15) == 0)
            waits[0] += 100; /* a wait before the first launch: wrong */
    }
    if (f != NULL)
        fclose(f);
}

static void test_sync_wait(void)
{
    static const char *const ways[] = {"cuStreamSynchronize", "a synchronous cuMemcpyDtoH", "cuCtxSynchronize",
                                       "cuEventSynchronize"};
    char log_path[4200];
    int wait, way, waits[4];
    for (wait = 0; wait < 2; wait++) {
        int status = 0;
        pid_t pid;
        snprintf(log_path, sizeof log_path, "%s/sync-wait-%d.log", test_tmpdir(), wait);
        remove(log_path);
        pid = fork();
        if (pid == 0)
            _exit(sync_wait_child(wait, log_path));
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
            status = 0xff << 8;
        waits_per_way(log_path, waits);
        for (way = 0; way < 4; way++)
            ok(!(WEXITSTATUS(status) & (1 << way)) && WEXITSTATUS(status) < 0xf0 && waits[way] == wait,
               "OBS_SIM_SYNC_WAIT=%d: %s after a 4.002 ms kernel %s (%d wait lines)", wait, ways[way],
               wait ? "waits for it: one wait, host time at least 4.002 ms" : "does not wait", waits[way]);
        remove(log_path);
    }
}

int main(void)
{
    plan_lazy();
    setenv("OBS_SIM_QUIET", "1", 1);
    unsetenv("OBS_SIM_LOG");
    test_sync_wait();
    test_exports();
    test_linked();
    test_static_like();
    test_banner_and_faults();
    test_cudart_via_driver();
    test_error_codes();
    return 0;
}
