/* The simulated HIP runtime (sim/, libamdhip64.so.5) on its own:
 *   - exports: every entry point of shim/abi/hip_abi.h is in the version
 *     script and resolves at its node; nothing internal is exported;
 *   - tests/apps/hip_api_driver against it: the ground-truth log holds
 *     exactly the calls the driver reports, in order and with their statuses,
 *     every OBS_HIP_API entry point among them, with the right kind, kernel
 *     name, stream and bytes; the --errors codes; 4 threads x 2000 launches;
 *     the stderr banner and OBS_SIM_QUIET;
 *   - in this process (the test links the simulator): copies and memsets move
 *     the right bytes, the virtual clock follows the cost model (legacy,
 *     blocking, non-blocking and per-thread streams, hipStreamWaitEvent,
 *     hipExtLaunchKernel's events), graph capture and replay, modules, the
 *     call configuration stack, error codes, the last error, error names;
 *   - the real obs_hip on it (when hipcc built it): exit 0, the TTFT line,
 *     launches per kernel = warm-up + repeat x (1 prefill | decode gathers |
 *     decode steps), with and without --graphs. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/hip_abi.h"
#include "trace/api_list.h"
#include "sim/cost_model.h"
#include "hip_sim_map.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#define BANNER "obsshim-sim: simulated HIP runtime (no GPU; kernels are not executed)"
#define PREFILL_NAME "_Z14prefill_kernelPfPKfii"
#define GATHER_NAME "_Z16kv_gather_kernelPfPKfii"
#define DECODE_NAME "_Z13decode_kernelPfPKfii"

/* Documented in tests/apps/hip_api_driver.c. */
#define DRIVER_CALLS 93
#define DRIVER_API_CALLS 61
#define DRIVER_KERNEL_A "_Z15obs_driver_fillPfi"
#define DRIVER_KERNEL_B "_Z15obs_driver_copyPKfPfi"
#define DRIVER_MODULE_KERNEL "_Z17obs_driver_modulePf"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- the API lists ---- */

#define NAME_OF(name, ret, params, args) #name,
static const char *const hooked_api[] = {OBS_HIP_API(NAME_OF)};
static const char *const support_api[] = {OBS_HIP_SUPPORT_API(NAME_OF) OBS_HIP_PROFILER_API(NAME_OF)};
#undef NAME_OF

#define KIND_WORD(id, word) [OBS_KIND_##id] = word,
static const char *const kind_words[] = {OBS_CALL_KIND_LIST(KIND_WORD)};
#undef KIND_WORD
#define API_ROW(id, name, kind, family) {name, OBS_KIND_##kind, OBS_FAMILY_##family},
static const struct {
    const char *name;
    int kind, family;
} api_rows[] = {OBS_API_LIST(API_ROW)};
#undef API_ROW

/* The kind word the log must show for api: shim/trace/api_list.h's, else "other". */
static const char *expected_kind(const char *api)
{
    for (size_t i = 1; i < COUNT_OF(api_rows); i++)
        if (strcmp(api_rows[i].name, api) == 0)
            return kind_words[api_rows[i].kind];
    return "other";
}

/* The exported symbol of an entry point (C++ ones are mangled). */
static const char *exported_symbol(const char *name)
{
    if (strcmp(name, "hipExtModuleLaunchKernel") == 0)
        return OBS_HIP_SYMBOL_hipExtModuleLaunchKernel;
    return name;
}

/* ---- the ground-truth log ---- */

struct log_line {
    const char *api, *kind, *name, *stream, *bytes;
    int status;
};

struct sim_log {
    char *text;
    struct log_line *lines;
    size_t count, malformed;
};

static void load_log(const char *path, struct sim_log *log)
{
    char *line, *save = NULL;
    size_t cap = 0;

    memset(log, 0, sizeof *log);
    log->text = test_read_file(path, NULL);
    if (log->text == NULL)
        return;
    for (line = strtok_r(log->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *field[6], *p = line;
        int n = 0;
        while (n < 6 && p != NULL) {
            field[n++] = p;
            p = strchr(p, '\t');
            if (p != NULL)
                *p++ = '\0';
        }
        if (n != 6 || p != NULL) {
            log->malformed++;
            continue;
        }
        if (log->count == cap) {
            cap = cap ? 2 * cap : 1024;
            log->lines = realloc(log->lines, cap * sizeof *log->lines);
            if (log->lines == NULL)
                bail("out of memory");
        }
        log->lines[log->count++] =
            (struct log_line){field[0], field[1], field[2], field[3], field[4], atoi(field[5])};
    }
}

static void free_log(struct sim_log *log)
{
    free(log->text);
    free(log->lines);
    memset(log, 0, sizeof *log);
}

/* Lines for api (NULL: any) with name (NULL: any) and status (-1: any). */
static size_t log_count(const struct sim_log *log, const char *api, const char *name, int status)
{
    size_t n = 0;
    for (size_t i = 0; i < log->count; i++)
        if ((api == NULL || strcmp(log->lines[i].api, api) == 0) &&
            (name == NULL || strcmp(log->lines[i].name, name) == 0) &&
            (status < 0 || log->lines[i].status == status))
            n++;
    return n;
}

static const struct log_line *log_first(const struct sim_log *log, const char *api)
{
    for (size_t i = 0; i < log->count; i++)
        if (strcmp(log->lines[i].api, api) == 0)
            return &log->lines[i];
    return NULL;
}

/* ---- running programs on the simulator ---- */

static const char *driver_path(void)
{
    return test_path(test_builddir(), "tests/apps/hip_api_driver");
}

/* Runs argv on the simulator with OBS_SIM_LOG=log_path (NULL: none); quiet
 * sets OBS_SIM_QUIET=1, otherwise it is removed from the child's environment. */
static void run_on_sim(const char *const argv[], const char *log_path, int quiet,
                       struct run_result *res)
{
    char log_env[4200];
    const char *env[4];

    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path != NULL ? log_path : "");
    env[0] = sim_library_path_env();
    env[1] = log_path != NULL ? log_env : "OBS_SIM_LOG";
    env[2] = quiet ? "OBS_SIM_QUIET=1" : "OBS_SIM_QUIET";
    env[3] = NULL;
    if (log_path != NULL)
        remove(log_path);
    if (run_program(argv, env, 120, res) != 0)
        bail("cannot run %s", argv[0]);
}

/* The "api status" lines a driver printed, compared with the log's. */
static void check_same_calls(const char *out, const struct sim_log *log, const char *what)
{
    size_t i = 0, mismatches = 0;
    const char *p = out;

    while (p != NULL && *p != '\0') {
        char api[128];
        int status;
        const char *nl = strchr(p, '\n');
        if (sscanf(p, "%127s %d", api, &status) == 2 && strcmp(api, "calls") != 0) {
            if (i >= log->count || strcmp(log->lines[i].api, api) != 0 ||
                log->lines[i].status != status) {
                if (mismatches++ < 5)
                    diag("call %zu: driver says %s %d, log says %s %d", i, api, status,
                         i < log->count ? log->lines[i].api : "(nothing)",
                         i < log->count ? log->lines[i].status : -1);
            }
            i++;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    ok(mismatches == 0 && i == log->count,
       "%s: the log holds exactly the %zu calls the driver made, in order, with their statuses",
       what, i);
}

/* ---- exports ---- */

#define MAP_MAX 256

static void test_exports(void)
{
    static struct hip_map_entry map[MAP_MAX];
    const char *map_path = test_path(test_srcdir(), "sim/libamdhip64.map");
    int n = hip_map_read(map_path, map, MAP_MAX);
    size_t missing = 0, unmapped = 0;
    Dl_info info = {0}; /* read below even when dladdr fails */

    if (!ok(n > 0 && n < MAP_MAX, "read %d symbols from %s", n, map_path)) {
        skip_block(5, "no version script");
        return;
    }
    for (int i = 0; i < n; i++)
        if (dlvsym(RTLD_DEFAULT, map[i].symbol, map[i].node) == NULL) {
            diag("missing %s@%s", map[i].symbol, map[i].node);
            missing++;
        }
    is_int(0, (long long)missing, "all %d symbols of the version script resolve at their node", n);
    for (size_t i = 0; i < COUNT_OF(hooked_api) + COUNT_OF(support_api); i++) {
        const char *name = i < COUNT_OF(hooked_api) ? hooked_api[i]
                                                    : support_api[i - COUNT_OF(hooked_api)];
        int found = 0;
        for (int j = 0; j < n && !found; j++)
            found = strcmp(map[j].symbol, exported_symbol(name)) == 0;
        if (!found) {
            diag("%s is not in the version script", name);
            unmapped++;
        }
    }
    is_int(0, (long long)unmapped, "all %zu hooked and %zu support entry points are versioned",
           COUNT_OF(hooked_api), COUNT_OF(support_api));
    is_int((long long)(COUNT_OF(hooked_api) + COUNT_OF(support_api)), n,
           "the version script exports nothing else");
    ok(dlsym(RTLD_DEFAULT, "sim_enter") == NULL && dlsym(RTLD_DEFAULT, "sim_lock") == NULL &&
           dlsym(RTLD_DEFAULT, "sim_stream_get_locked") == NULL &&
           dlsym(RTLD_DEFAULT, "sim_null_stream") == NULL,
       "internal helpers are not exported");
    ok(dladdr((void *)hipMalloc, &info) != 0 && info.dli_fname != NULL &&
           strstr(info.dli_fname, "libamdhip64.so.5") != NULL,
       "hipMalloc comes from libamdhip64.so.5 (%s)", info.dli_fname ? info.dli_fname : "?");
}

/* ---- the driver ---- */

static void test_driver_valid(void)
{
    const char *log_path = test_path(test_tmpdir(), "driver.log");
    const char *argv[] = {driver_path(), NULL};
    struct run_result res;
    struct sim_log log;
    size_t absent = 0, wrong_kind = 0, api_calls = 0;
    const struct log_line *l;

    run_on_sim(argv, log_path, 1, &res);
    if (!is_int(0, res.status, "hip_api_driver exits 0")) {
        diag_text("stdout", res.out);
        diag_text("stderr", res.err);
    }
    ok(strstr(res.out, "calls 93 unexpected 0\n") != NULL, "driver: 93 calls, none unexpected");
    is_int(0, (long long)count_lines_with(res.err, "obsshim-sim:"),
           "OBS_SIM_QUIET=1: no banner");
    load_log(log_path, &log);
    is_int(DRIVER_CALLS, (long long)log.count, "the log has one line per call");
    is_int(0, (long long)log.malformed, "every log line has 6 tab-separated fields");
    check_same_calls(res.out, &log, "driver");
    for (size_t i = 0; i < COUNT_OF(hooked_api); i++) {
        size_t n = log_count(&log, hooked_api[i], NULL, 0);
        if (n == 0) {
            diag("%s never called", hooked_api[i]);
            absent++;
        }
        api_calls += n;
    }
    is_int(0, (long long)absent, "every one of the %zu OBS_HIP_API entry points was called",
           COUNT_OF(hooked_api));
    is_int(DRIVER_API_CALLS, (long long)api_calls, "%d calls to OBS_HIP_API entry points",
           DRIVER_API_CALLS);
    for (size_t i = 0; i < log.count; i++)
        if (strcmp(log.lines[i].kind, expected_kind(log.lines[i].api)) != 0) {
            diag("%s logged as %s", log.lines[i].api, log.lines[i].kind);
            wrong_kind++;
        }
    is_int(0, (long long)wrong_kind, "every line's kind is shim/trace/api_list.h's (other elsewhere)");
    is_int((long long)log.count, (long long)log_count(&log, NULL, NULL, 0), "every status is 0");
    is_int(2, (long long)log_count(&log, "hipLaunchKernel", DRIVER_KERNEL_A, 0),
           "hipLaunchKernel lines carry the registered name");
    is_int(1, (long long)log_count(&log, "hipLaunchKernel_spt", DRIVER_KERNEL_B, 0),
           "hipLaunchKernel_spt names its kernel");
    is_int(1, (long long)log_count(&log, "hipModuleLaunchKernel", DRIVER_MODULE_KERNEL, 0),
           "hipModuleLaunchKernel names the module function");
    is_int(1, (long long)log_count(&log, "hipExtModuleLaunchKernel", DRIVER_MODULE_KERNEL, 0),
           "hipExtModuleLaunchKernel is logged under its API name");
    l = log_first(&log, "hipGraphLaunch");
    is_string("2", l ? l->bytes : "", "hipGraphLaunch: bytes = the graph's 2 nodes");
    l = log_first(&log, "hipLaunchKernel_spt");
    is_string("0x0", l ? l->stream : "", "stream 0 is logged as 0x0");
    l = log_first(&log, "hipLaunchKernel");
    ok(l != NULL && strncmp(l->stream, "0x", 2) == 0 && strcmp(l->stream, "0x0") != 0,
       "a created stream is logged as its handle (%s)", l ? l->stream : "?");
    l = log_first(&log, "hipMemcpy");
    ok(l != NULL && strcmp(l->stream, "-") == 0 && strcmp(l->bytes, "4096") == 0,
       "hipMemcpy: no stream, 4096 bytes");
    l = log_first(&log, "hipMemcpy2D");
    is_string("512", l ? l->bytes : "", "hipMemcpy2D: width x height bytes");
    l = log_first(&log, "hipMemcpy3D");
    is_string("128", l ? l->bytes : "", "hipMemcpy3D: width x height x depth bytes");
    l = log_first(&log, "hipMemsetD32");
    is_string("4096", l ? l->bytes : "", "hipMemsetD32: count x 4 bytes");
    l = log_first(&log, "hipMalloc");
    is_string("16384", l ? l->bytes : "", "hipMalloc: the size");
    l = log_first(&log, "hipFree");
    is_string("-", l ? l->bytes : "", "hipFree: no size");
    l = log_first(&log, "__hipRegisterFunction");
    is_string(DRIVER_KERNEL_A, l ? l->name : "", "registration is logged with the kernel name");
    free_log(&log);
    run_result_free(&res);
}

static void test_driver_errors(void)
{
    const char *log_path = test_path(test_tmpdir(), "errors.log");
    const char *argv[] = {driver_path(), "--errors", NULL};
    static const struct {
        const char *api;
        int status;
    } expected[] = {
        {"hipLaunchKernel", 9},     {"hipLaunchKernel", 98},       {"hipLaunchKernel", 400},
        {"hipModuleLaunchKernel", 200}, {"hipMemcpy", 1},          {"hipMemcpy", 21},
        {"hipMemcpy2D", 12},        {"hipMemcpyToSymbol", 13},     {"hipMemcpyPeer", 101},
        {"hipMemset", 1},           {"hipMemsetAsync", 400},       {"hipStreamSynchronize", 400},
        {"hipGraphLaunch", 1},      {"hipFree", 1},                {"hipStreamBeginCapture", 900},
        {"hipGetLastError", 9},     {"hipPeekAtLastError", 9},
    };
    struct run_result res;
    struct sim_log log;
    size_t missing = 0;

    run_on_sim(argv, log_path, 1, &res);
    if (!is_int(0, res.status, "hip_api_driver --errors exits 0 (every code as expected)")) {
        diag_text("stdout", res.out);
        diag_text("stderr", res.err);
    }
    ok(strstr(res.out, " unexpected 0\n") != NULL, "--errors: no unexpected status");
    load_log(log_path, &log);
    check_same_calls(res.out, &log, "--errors");
    for (size_t i = 0; i < COUNT_OF(expected); i++)
        if (log_count(&log, expected[i].api, NULL, expected[i].status) == 0) {
            diag("no %s returning %d in the log", expected[i].api, expected[i].status);
            missing++;
        }
    is_int(0, (long long)missing, "the log shows the %zu error codes HIP returns",
           COUNT_OF(expected));
    free_log(&log);
    run_result_free(&res);
}

static void test_driver_threads(void)
{
    const char *log_path = test_path(test_tmpdir(), "threads.log");
    const char *argv[] = {driver_path(), "--threads", "4", "--launches", "2000", NULL};
    struct run_result res;
    struct sim_log log;

    run_on_sim(argv, log_path, 1, &res);
    is_int(0, res.status, "4 threads x 2000 launches: exit 0");
    ok(strstr(res.out, "threads 4 launches 2000 total 8000 failed 0") != NULL,
       "4 threads x 2000 launches: none failed");
    load_log(log_path, &log);
    is_int(8000, (long long)log_count(&log, "hipLaunchKernel", DRIVER_KERNEL_A, 0),
           "8000 launch lines, all successful");
    is_int(0, (long long)log.malformed, "concurrent log lines never interleave");
    is_int(4, (long long)log_count(&log, "hipStreamCreate", NULL, 0), "one stream per thread");
    free_log(&log);
    run_result_free(&res);
}

static void test_banner(void)
{
    const char *argv[] = {driver_path(), NULL};
    const char *usage_argv[] = {driver_path(), "--bogus", NULL};
    struct run_result res;

    run_on_sim(argv, NULL, 0, &res);
    is_int(0, res.status, "driver without OBS_SIM_LOG exits 0");
    is_int(1, (long long)count_lines_with(res.err, BANNER), "the banner is printed once on stderr");
    ok(strstr(res.out, "obsshim-sim") == NULL, "nothing of it on stdout");
    run_result_free(&res);
    run_on_sim(usage_argv, NULL, 1, &res);
    is_int(2, res.status, "driver: a bad option exits 2");
    run_result_free(&res);
}

/* ---- in this process ---- */

static const char fake_code_object[] = "__CLANG_OFFLOAD_BUNDLE__ (test)";
static const struct obs_hip_fatbin_wrapper fake_fatbin = {OBS_HIP_FATBIN_MAGIC, 1,
                                                          fake_code_object, NULL};
static const char big_stub = 'B', small_stub = 'S';
#define BIG_NAME "_Z10big_kernelPf"
#define SMALL_NAME "_Z12small_kernelPf"
static unsigned char device_symbol_shadow[64];
static void **fake_modules;

/* grid 16384 x block 256 (the workload's prefill) and 16 x 256 (its decode). */
static const obs_hipDim3 big_grid = {16384, 1, 1}, small_grid = {16, 1, 1}, block256 = {256, 1, 1};
#define BIG_COST 67536
#define SMALL_COST 2064

static void register_fake_module(void)
{
    fake_modules = __hipRegisterFatBinary(&fake_fatbin);
    __hipRegisterFunction(fake_modules, &big_stub, (char *)BIG_NAME, BIG_NAME, (unsigned)-1, NULL,
                          NULL, NULL, NULL, NULL);
    __hipRegisterFunction(fake_modules, &small_stub, (char *)SMALL_NAME, SMALL_NAME, (unsigned)-1,
                          NULL, NULL, NULL, NULL, NULL);
    memset(device_symbol_shadow, 0x5a, sizeof device_symbol_shadow);
    __hipRegisterVar(fake_modules, device_symbol_shadow, (char *)"symbol", (char *)"symbol", 0,
                     sizeof device_symbol_shadow, 0, 0);
}

static int launch(const void *stub, obs_hipDim3 grid, obs_hipStream_t s)
{
    return hipLaunchKernel(stub, grid, block256, NULL, 0, s);
}

/* Nanoseconds between two recorded events (exact for the sub-ms spans used). */
static long long elapsed_ns(obs_hipEvent_t a, obs_hipEvent_t b)
{
    float ms = -1.f;
    if (hipEventElapsedTime(&ms, a, b) != obs_hipSuccess)
        return -999999;
    return llround((double)ms * 1e6);
}

static obs_hipEvent_t new_event(void)
{
    obs_hipEvent_t e = NULL;
    if (hipEventCreate(&e) != obs_hipSuccess)
        bail("hipEventCreate failed");
    return e;
}

static obs_hipStream_t new_stream(unsigned int flags)
{
    obs_hipStream_t s = NULL;
    if (hipStreamCreateWithFlags(&s, flags) != obs_hipSuccess)
        bail("hipStreamCreateWithFlags failed");
    return s;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed * 31 + i * 7);
}

static void test_memory(void)
{
    enum { N = 4096 };
    static unsigned char host[N], back[N], zero[N];
    unsigned char *dev = NULL, *dev2 = NULL;
    uint16_t h16[8];
    uint32_t h32[8];
    size_t bad = 0;

    is_int(0, hipMalloc((void **)&dev, N), "hipMalloc");
    is_int(0, hipMalloc((void **)&dev2, N), "hipMalloc again");
    ok(dev != NULL && ((uintptr_t)dev & 255) == 0, "allocations are 256-byte aligned");
    fill(host, N, 1);
    is_int(0, hipMemcpy(dev, host, N, obs_hipMemcpyHostToDevice), "hipMemcpy HtoD");
    is_int(0, hipMemcpyDtoD(dev2, dev, N), "hipMemcpyDtoD");
    is_int(0, hipMemcpy(back, dev2, N, obs_hipMemcpyDefault), "hipMemcpy Default");
    ok(memcmp(back, host, N) == 0, "HtoD, DtoD, DtoH move the bytes");

    is_int(0, hipMemset(dev, 0xab, 100), "hipMemset 100 bytes");
    is_int(0, hipMemcpyDtoH(back, dev, N), "read back");
    for (size_t i = 0; i < N; i++)
        bad += back[i] != (i < 100 ? 0xab : host[i]);
    is_int(0, (long long)bad, "hipMemset sets exactly its bytes");

    is_int(0, hipMemsetD16(dev, 0x1234, 8), "hipMemsetD16");
    is_int(0, hipMemcpyDtoH(h16, dev, sizeof h16), "read back");
    ok(h16[0] == 0x1234 && h16[7] == 0x1234, "hipMemsetD16 writes 16-bit values");
    is_int(0, hipMemsetD32Async(dev, 0x7e57c0de, 8, NULL), "hipMemsetD32Async");
    is_int(0, hipMemcpyDtoH(h32, dev, sizeof h32), "read back");
    ok(h32[0] == 0x7e57c0de && h32[7] == 0x7e57c0de, "hipMemsetD32 writes 32-bit values");

    /* 2D: 16 rows of 32 bytes at pitch 64; the other 32 bytes of each row stay. */
    is_int(0, hipMemset(dev, 0, N), "clear");
    is_int(0, hipMemcpy2D(dev, 64, host, 64, 32, 16, obs_hipMemcpyHostToDevice), "hipMemcpy2D");
    is_int(0, hipMemcpyDtoH(back, dev, N), "read back");
    bad = 0;
    for (size_t i = 0; i < N; i++)
        bad += back[i] != (i < 64 * 16 && i % 64 < 32 ? host[i] : 0);
    is_int(0, (long long)bad, "hipMemcpy2D copies width bytes per row, leaves the pitch gap");
    is_int(0, hipMemset2D(dev, 64, 0xee, 8, 4), "hipMemset2D");
    is_int(0, hipMemcpyDtoH(back, dev, N), "read back");
    ok(back[0] == 0xee && back[7] == 0xee && back[8] == host[8] && back[64] == 0xee &&
           back[3 * 64 + 7] == 0xee && back[4 * 64] == host[4 * 64],
       "hipMemset2D fills width x height inside the pitch");

    /* 3D: a 4 x 2 x 2 box at (1, 1, 1) of a 16 x 4 x 3 pitched volume. */
    {
        obs_hipMemcpy3DParms p;
        obs_hipPitchedPtr vol = {dev2, 16, 16, 4}, src = {host, 16, 16, 4};
        memset(&p, 0, sizeof p);
        is_int(0, hipMemset(dev2, 0, N), "clear");
        p.srcPtr = src;
        p.dstPtr = vol;
        p.srcPos = (struct obs_hipPos){1, 1, 1};
        p.dstPos = (struct obs_hipPos){1, 1, 1};
        p.extent = (obs_hipExtent){4, 2, 2};
        p.kind = obs_hipMemcpyHostToDevice;
        is_int(0, hipMemcpy3D(&p), "hipMemcpy3D");
        is_int(0, hipMemcpyDtoH(back, dev2, N), "read back");
        bad = 0;
        for (size_t z = 0; z < 3; z++)
            for (size_t y = 0; y < 4; y++)
                for (size_t x = 0; x < 16; x++) {
                    size_t at = z * 64 + y * 16 + x;
                    int inside = z >= 1 && z < 3 && y >= 1 && y < 3 && x >= 1 && x < 5;
                    bad += back[at] != (inside ? host[at] : 0);
                }
        is_int(0, (long long)bad, "hipMemcpy3D copies exactly the box");
    }

    /* symbols: their own device storage, initialised from the shadow */
    memset(back, 0, sizeof back);
    is_int(0, hipMemcpyFromSymbol(back, device_symbol_shadow, 8, 0, obs_hipMemcpyDeviceToHost),
           "hipMemcpyFromSymbol");
    ok(back[0] == 0x5a && back[7] == 0x5a, "a symbol starts with its initial value");
    is_int(0, hipMemcpyToSymbol(device_symbol_shadow, host, 16, 48, obs_hipMemcpyHostToDevice),
           "hipMemcpyToSymbol at offset 48");
    is_int(0, hipMemcpyFromSymbol(back, device_symbol_shadow, 16, 48, obs_hipMemcpyDeviceToHost),
           "hipMemcpyFromSymbol at offset 48");
    ok(memcmp(back, host, 16) == 0 && device_symbol_shadow[48] == 0x5a,
       "symbol copies go to device storage, not to the host shadow");
    is_int(obs_hipErrorInvalidValue,
           hipMemcpyToSymbol(device_symbol_shadow, host, 17, 48, obs_hipMemcpyHostToDevice),
           "a copy past the symbol's end: hipErrorInvalidValue");

    is_int(0, hipMemcpyPeer(dev2, 0, dev, 0, 64), "hipMemcpyPeer between device 0 and itself");
    is_int(obs_hipErrorInvalidValue, hipMemset(zero, 1, 8), "hipMemset on host memory");
    is_int(obs_hipErrorInvalidValue, hipMemset(dev + N - 4, 1, 8), "hipMemset past the allocation");
    is_int(0, hipMemcpy(dev, host, 0, obs_hipMemcpyHostToDevice), "a 0-byte copy succeeds");
    is_int(0, hipFree(dev), "hipFree");
    is_int(obs_hipErrorInvalidValue, hipFree(dev), "hipFree twice: hipErrorInvalidValue");
    is_int(0, hipFree(NULL), "hipFree(NULL) succeeds");
    is_int(0, hipFree(dev2), "hipFree the other");
}

static void test_clock(void)
{
    enum { MIB = 1 << 20 };
    obs_hipStream_t a = new_stream(0), b, c = new_stream(OBS_HIP_STREAM_NON_BLOCKING), d;
    obs_hipEvent_t e0 = new_event(), e1 = new_event(), e2 = new_event(), e3 = new_event();
    unsigned char *dev = NULL, *dev2 = NULL, *host = malloc(MIB);

    if (host == NULL || hipMalloc((void **)&dev, MIB) != 0 || hipMalloc((void **)&dev2, MIB) != 0)
        bail("allocation failed");
    memset(host, 1, MIB);

    hipEventRecord(e0, a);
    is_int(0, launch(&big_stub, big_grid, a), "big launch");
    hipEventRecord(e1, a);
    is_int(BIG_COST, elapsed_ns(e0, e1), "a 16384 x 256 kernel takes 2000 + 4194304/64 ns");
    is_int((long long)sim_kernel_cost_ns(16384ull * 256, 0), BIG_COST, "(as cost_model.h says)");
    launch(&small_stub, small_grid, a);
    hipEventRecord(e2, a);
    is_int(SMALL_COST, elapsed_ns(e1, e2), "a 16 x 256 kernel takes 2064 ns");

    hipEventRecord(e0, a);
    hipMemcpyAsync(dev, host, MIB, obs_hipMemcpyHostToDevice, a);
    hipEventRecord(e1, a);
    is_int((long long)sim_copy_cost_ns(MIB, 0), elapsed_ns(e0, e1), "1 MiB HtoD: 1000 + bytes/25 ns");
    hipMemcpyAsync(dev2, dev, MIB, obs_hipMemcpyDeviceToDevice, a);
    hipEventRecord(e2, a);
    is_int((long long)sim_copy_cost_ns(MIB, 1), elapsed_ns(e1, e2), "1 MiB DtoD: 1000 + bytes/1000 ns");
    hipMemcpyAsync(dev2, dev, MIB, obs_hipMemcpyDefault, a);
    hipEventRecord(e3, a);
    is_int((long long)sim_copy_cost_ns(MIB, 1), elapsed_ns(e2, e3),
           "hipMemcpyDefault between allocations is costed DtoD");
    hipEventRecord(e0, a);
    hipMemsetAsync(dev, 0, MIB, a);
    hipEventRecord(e1, a);
    is_int((long long)sim_memset_cost_ns(MIB), elapsed_ns(e0, e1), "1 MiB memset: 1000 + bytes/1000 ns");

    /* legacy null stream: waits for every blocking stream, and they for it */
    hipEventRecord(e0, a);
    launch(&big_stub, big_grid, a);
    hipEventRecord(e1, NULL);
    is_int(BIG_COST, elapsed_ns(e0, e1), "the null stream waits for a blocking stream's work");
    launch(&small_stub, small_grid, NULL);
    b = new_stream(0);
    launch(&small_stub, small_grid, b);
    hipEventRecord(e2, b);
    is_int(2 * SMALL_COST, elapsed_ns(e1, e2), "a new blocking stream waits for the null stream");
    launch(&small_stub, small_grid, c);
    hipEventRecord(e3, c);
    ok(elapsed_ns(e1, e3) < 0, "a non-blocking stream does not wait for the null stream");
    hipEventRecord(e0, NULL);
    hipStreamWaitEvent(c, e0, 0);
    launch(&big_stub, big_grid, c);
    launch(&big_stub, big_grid, c);
    hipEventRecord(e1, NULL);
    is_int(0, elapsed_ns(e0, e1), "nor does the null stream wait for a non-blocking stream");
    hipEventRecord(e2, c);
    is_int(2 * BIG_COST, elapsed_ns(e0, e2), "(which ran its kernels after the null stream's event)");

    /* hipStreamWaitEvent raises the stream's tail to the event */
    d = new_stream(OBS_HIP_STREAM_NON_BLOCKING);
    hipEventRecord(e0, a);
    launch(&big_stub, big_grid, a);
    hipEventRecord(e1, a);
    is_int(0, hipStreamWaitEvent(d, e1, 0), "hipStreamWaitEvent");
    launch(&small_stub, small_grid, d);
    hipEventRecord(e2, d);
    is_int(SMALL_COST, elapsed_ns(e1, e2), "work after hipStreamWaitEvent starts at the event");

    /* the per-thread default stream: an ordinary blocking stream */
    hipEventRecord(e0, OBS_HIP_STREAM_PER_THREAD);
    is_int(0, hipLaunchKernel_spt(&big_stub, big_grid, block256, NULL, 0, NULL),
           "hipLaunchKernel_spt on stream 0");
    hipEventRecord(e1, OBS_HIP_STREAM_PER_THREAD);
    is_int(BIG_COST, elapsed_ns(e0, e1), "_spt stream 0 is the thread's default stream");
    hipEventRecord(e2, NULL);
    ok(elapsed_ns(e1, e2) >= 0, "the null stream waits for the per-thread stream");

    /* hipExtLaunchKernel records its events around the kernel */
    is_int(0, hipExtLaunchKernel(&big_stub, big_grid, block256, NULL, 0, a, e0, e1, 0),
           "hipExtLaunchKernel with events");
    is_int(BIG_COST, elapsed_ns(e0, e1), "its start/stop events span the kernel");

    is_int(0, hipStreamSynchronize(a), "hipStreamSynchronize returns at once");
    is_int(0, hipDeviceSynchronize(), "hipDeviceSynchronize");
    is_int(0, hipEventQuery(e1), "hipEventQuery: complete");
    is_int(0, hipStreamQuery(c), "hipStreamQuery: complete");
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    hipEventDestroy(e2);
    hipEventDestroy(e3);
    hipStreamDestroy(a);
    hipStreamDestroy(b);
    hipStreamDestroy(c);
    hipStreamDestroy(d);
    hipFree(dev);
    hipFree(dev2);
    free(host);
}

static void test_graphs(void)
{
    enum { N = 256 };
    static unsigned char host[N], back[N];
    obs_hipStream_t s = new_stream(0);
    obs_hipEvent_t e0 = new_event(), e1 = new_event();
    obs_hipGraph_t graph = NULL;
    obs_hipGraphExec_t exec = NULL, exec2 = NULL;
    obs_hipGraphNode_t nodes[4] = {NULL, NULL, NULL, (obs_hipGraphNode_t)1};
    obs_hipStreamCaptureStatus status = obs_hipStreamCaptureStatusInvalidated;
    unsigned char *dev = NULL;
    size_t count = 0;
    char log_buffer[16] = "junk";

    hipMalloc((void **)&dev, N);
    hipMemset(dev, 0, N);
    fill(host, N, 3);
    hipEventRecord(e0, s);
    is_int(0, hipStreamBeginCapture(s, obs_hipStreamCaptureModeGlobal), "hipStreamBeginCapture");
    is_int(0, hipStreamIsCapturing(s, &status), "hipStreamIsCapturing");
    is_int(obs_hipStreamCaptureStatusActive, status, "the stream is capturing");
    is_int(0, launch(&big_stub, big_grid, s), "a launch while capturing succeeds");
    is_int(obs_hipErrorInvalidImage, hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
           "a bad launch still fails while capturing");
    is_int(0, launch(&small_stub, small_grid, s), "another");
    is_int(0, hipMemcpyAsync(dev, host, N, obs_hipMemcpyHostToDevice, s), "a copy while capturing");
    is_int(0, hipMemsetAsync(dev, 7, 1, s), "a memset while capturing");
    is_int(obs_hipErrorStreamCaptureUnsupported, hipStreamSynchronize(s),
           "hipStreamSynchronize on a capturing stream: hipErrorStreamCaptureUnsupported");
    is_int(obs_hipErrorIllegalState, hipStreamBeginCapture(s, obs_hipStreamCaptureModeGlobal),
           "a second BeginCapture: hipErrorIllegalState");
    is_int(0, hipStreamEndCapture(s, &graph), "hipStreamEndCapture");
    hipEventRecord(e1, s);
    is_int(0, elapsed_ns(e0, e1), "captured work takes no device time");
    hipMemcpy(back, dev, N, obs_hipMemcpyDeviceToHost);
    ok(back[0] == 0 && back[N - 1] == 0, "captured copies and memsets did not run");
    is_int(0, hipGraphGetNodes(graph, NULL, &count), "hipGraphGetNodes (count)");
    is_int(4, (long long)count, "4 nodes captured");
    count = 4;
    is_int(0, hipGraphGetNodes(graph, nodes, &count), "hipGraphGetNodes (nodes)");
    ok(nodes[0] != NULL && nodes[3] != NULL && nodes[0] != nodes[3], "4 distinct node handles");
    is_int(0, hipGraphInstantiate(&exec, graph, NULL, log_buffer, sizeof log_buffer),
           "hipGraphInstantiate");
    is_string("", log_buffer, "an empty instantiation log");
    is_int(0, hipGraphDestroy(graph), "the graph can go once instantiated");
    hipEventRecord(e0, s);
    is_int(0, hipGraphLaunch(exec, s), "hipGraphLaunch");
    hipEventRecord(e1, s);
    is_int((long long)(sim_kernel_cost_ns(16384ull * 256, 1) + sim_kernel_cost_ns(16ull * 256, 1) +
                       sim_copy_cost_ns(N, 0) + sim_memset_cost_ns(1)),
           elapsed_ns(e0, e1), "a replay costs 500 + threads/64 per kernel, plus its copies");
    hipMemcpy(back, dev, N, obs_hipMemcpyDeviceToHost);
    ok(back[0] == 7 && memcmp(back + 1, host + 1, N - 1) == 0,
       "the replay ran the copy, then the memset");
    hipEventRecord(e0, s);
    hipGraphLaunch(exec, s);
    hipGraphLaunch(exec, s);
    hipEventRecord(e1, s);
    is_int(2 * (BIG_COST - 1500 + SMALL_COST - 1500 + (long long)sim_copy_cost_ns(N, 0) +
                (long long)sim_memset_cost_ns(1)),
           elapsed_ns(e0, e1), "every replay costs the same");

    /* a graph launched into a capture joins it */
    is_int(0, hipStreamBeginCapture(s, obs_hipStreamCaptureModeRelaxed), "capture again");
    is_int(0, hipGraphLaunch(exec, s), "a graph launched while capturing");
    is_int(0, hipStreamEndCapture(s, &graph), "end");
    count = 0;
    hipGraphGetNodes(graph, NULL, &count);
    is_int(4, (long long)count, "its nodes joined the new graph");
    is_int(0, hipGraphInstantiate(&exec2, graph, NULL, NULL, 0), "instantiate it");

    is_int(obs_hipErrorStreamCaptureUnsupported,
           hipStreamBeginCapture(NULL, obs_hipStreamCaptureModeGlobal),
           "the legacy stream cannot capture");
    is_int(obs_hipErrorIllegalState, hipStreamEndCapture(s, &graph),
           "EndCapture without capture: hipErrorIllegalState");
    is_int(obs_hipErrorInvalidValue, hipStreamBeginCapture(s, 7), "an unknown capture mode");
    is_int(0, hipStreamIsCapturing(NULL, &status), "hipStreamIsCapturing(0)");
    is_int(obs_hipStreamCaptureStatusNone, status, "the null stream is not capturing");
    is_int(obs_hipErrorInvalidValue, hipGraphLaunch(NULL, s), "hipGraphLaunch(NULL)");
    is_int(0, hipGraphExecDestroy(exec), "hipGraphExecDestroy");
    is_int(obs_hipErrorInvalidValue, hipGraphLaunch(exec, s), "a destroyed exec");
    is_int(obs_hipErrorInvalidValue, hipGraphExecDestroy(exec), "destroyed twice");
    hipGraphExecDestroy(exec2);
    hipGraphDestroy(graph);
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    hipStreamDestroy(s);
    hipFree(dev);
}

static void test_modules_and_config(void)
{
    obs_hipModule_t module = NULL;
    obs_hipFunction_t f = NULL, g = NULL;
    obs_hipStream_t s = new_stream(0), popped = NULL;
    obs_hipEvent_t e0 = new_event(), e1 = new_event();
    obs_hipDim3 grid, block, g1 = {1, 2, 3}, b1 = {4, 5, 6}, g2 = {7, 8, 9}, b2 = {10, 11, 12};
    size_t shmem = 0;
    void *params[1] = {NULL};

    is_int(0, hipModuleLoadData(&module, fake_code_object), "hipModuleLoadData");
    is_int(0, hipModuleGetFunction(&f, module, "_Z3fooPf"), "hipModuleGetFunction");
    is_int(0, hipModuleGetFunction(&g, module, "_Z3fooPf"), "again");
    ok(f != NULL && f == g, "the same name gives the same function");
    is_string("_Z3fooPf", hipKernelNameRef(f), "hipKernelNameRef");
    is_string(BIG_NAME, hipKernelNameRefByPtr(&big_stub, s), "hipKernelNameRefByPtr");
    hipEventRecord(e0, s);
    is_int(0, hipModuleLaunchKernel(f, 16384, 1, 1, 256, 1, 1, 0, s, params, NULL),
           "hipModuleLaunchKernel");
    is_int(0, hipExtModuleLaunchKernel(f, 16 * 256, 1, 1, 256, 1, 1, 0, s, params, NULL, NULL,
                                       NULL, 0),
           "hipExtModuleLaunchKernel (global sizes are work items)");
    hipEventRecord(e1, s);
    is_int(BIG_COST + SMALL_COST, elapsed_ns(e0, e1), "both cost as their work items say");
    is_int(obs_hipErrorInvalidValue,
           hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, params, params),
           "kernelParams and extra together: hipErrorInvalidValue");
    is_int(0, hipModuleUnload(module), "hipModuleUnload");
    is_int(obs_hipErrorInvalidHandle, hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL),
           "a function of an unloaded module: hipErrorInvalidHandle");
    is_int(obs_hipErrorInvalidValue, hipModuleLoadData(&module, NULL), "hipModuleLoadData(NULL image)");

    is_int(0, __hipPushCallConfiguration(g1, b1, 16, s), "push a configuration");
    is_int(0, __hipPushCallConfiguration(g2, b2, 32, NULL), "push another");
    is_int(0, __hipPopCallConfiguration(&grid, &block, &shmem, &popped), "pop");
    ok(grid.x == 7 && block.z == 12 && shmem == 32 && popped == NULL, "the last pushed comes first");
    is_int(0, __hipPopCallConfiguration(&grid, &block, &shmem, &popped), "pop again");
    ok(grid.y == 2 && block.x == 4 && shmem == 16 && popped == s, "then the first");
    is_int(obs_hipErrorMissingConfiguration, __hipPopCallConfiguration(&grid, &block, &shmem, &popped),
           "pop with nothing pushed: hipErrorMissingConfiguration");
    hipEventDestroy(e0);
    hipEventDestroy(e1);
    hipStreamDestroy(s);
}

static void *fail_in_thread(void *arg)
{
    (void)arg;
    hipSetDevice(3);
    return NULL;
}

static void test_errors(void)
{
    obs_hipDim3 zero = {0, 1, 1};
    obs_hipStream_t dead = new_stream(0), bogus = (obs_hipStream_t)(uintptr_t)0xbad0;
    obs_hipEvent_t e = new_event(), timing_off = NULL, unrecorded = new_event();
    float ms = 0.f;
    int count = 0;
    pthread_t thread;

    hipStreamDestroy(dead);
    is_int(obs_hipErrorInvalidConfiguration, launch(&big_stub, zero, NULL), "zero grid: 9");
    is_int(obs_hipErrorInvalidConfiguration,
           hipLaunchKernel(&big_stub, big_grid, zero, NULL, 0, NULL), "zero block: 9");
    is_int(obs_hipErrorInvalidConfiguration,
           hipLaunchCooperativeKernel(&big_stub, big_grid, zero, NULL, 0, NULL),
           "zero block, cooperative: 9");
    is_int(obs_hipErrorInvalidDeviceFunction, launch(NULL, big_grid, NULL),
           "a null function: hipErrorInvalidDeviceFunction");
    is_int(obs_hipErrorInvalidDeviceFunction, launch(&count, big_grid, NULL),
           "an unregistered function: hipErrorInvalidDeviceFunction");
    is_int(obs_hipErrorInvalidHandle, launch(&big_stub, big_grid, bogus), "an unknown stream: 400");
    is_int(obs_hipErrorInvalidHandle, launch(&big_stub, big_grid, dead), "a destroyed stream: 400");
    is_int(obs_hipErrorInvalidHandle, hipStreamDestroy(dead), "destroying it again: 400");
    is_int(obs_hipErrorInvalidHandle, hipStreamDestroy(NULL), "destroying the null stream: 400");
    is_int(obs_hipErrorInvalidHandle, hipStreamDestroy(OBS_HIP_STREAM_PER_THREAD),
           "destroying hipStreamPerThread: 400");
    is_int(obs_hipErrorInvalidValue, hipStreamCreate(NULL), "hipStreamCreate(NULL): 1");
    is_int(obs_hipErrorInvalidValue, hipMemcpy(NULL, &count, 4, obs_hipMemcpyHostToDevice),
           "hipMemcpy to NULL: 1");
    is_int(obs_hipErrorInvalidMemcpyDirection, hipMemcpy(&ms, &count, 4, 5),
           "memcpy kind 5: hipErrorInvalidMemcpyDirection (21)");
    is_int(obs_hipErrorInvalidMemcpyDirection, hipMemcpy2DAsync(&ms, 4, &count, 4, 4, 1, -1, NULL),
           "memcpy kind -1: 21");
    is_int(obs_hipErrorInvalidHandle, hipMemcpyAsync(&ms, &count, 4, obs_hipMemcpyHostToHost, bogus),
           "hipMemcpyAsync on an unknown stream: 400");
    is_int(obs_hipErrorInvalidValue, hipMalloc(NULL, 4), "hipMalloc(NULL): 1");
    is_int(obs_hipErrorInvalidValue, hipMemset(NULL, 0, 4), "hipMemset(NULL): 1");
    is_int(obs_hipErrorInvalidHandle, hipStreamSynchronize(bogus), "hipStreamSynchronize(unknown): 400");
    is_int(obs_hipErrorInvalidHandle, hipEventRecord(NULL, NULL), "hipEventRecord(NULL): 400");
    is_int(obs_hipErrorInvalidHandle, hipEventElapsedTime(&ms, e, unrecorded),
           "hipEventElapsedTime on unrecorded events: 400");
    is_int(obs_hipErrorInvalidValue, hipEventElapsedTime(NULL, e, e), "hipEventElapsedTime(NULL): 1");
    hipEventCreateWithFlags(&timing_off, OBS_HIP_EVENT_DISABLE_TIMING);
    hipEventRecord(e, NULL);
    hipEventRecord(timing_off, NULL);
    is_int(obs_hipErrorInvalidHandle, hipEventElapsedTime(&ms, e, timing_off),
           "an event without timing: 400");
    is_int(obs_hipErrorInvalidValue, hipStreamWaitEvent(NULL, e, 1), "hipStreamWaitEvent flags 1: 1");
    is_int(obs_hipErrorInvalidDevice, hipSetDevice(1), "hipSetDevice(1): hipErrorInvalidDevice");
    is_int(0, hipGetDeviceCount(&count), "hipGetDeviceCount");
    is_int(1, count, "one device");
    is_int(0, hipRuntimeGetVersion(&count), "hipRuntimeGetVersion");
    is_int(50221153, count, "HIP 5.2.21153");

    /* HIP keeps the result of the thread's last call, success included */
    launch(&big_stub, zero, NULL);
    is_int(obs_hipErrorInvalidConfiguration, hipPeekAtLastError(), "hipPeekAtLastError: the failure");
    is_int(obs_hipErrorInvalidConfiguration, hipPeekAtLastError(), "peeking does not reset it");
    is_int(obs_hipErrorInvalidConfiguration, hipGetLastError(), "hipGetLastError: the failure");
    is_int(0, hipGetLastError(), "hipGetLastError reset it");
    launch(&big_stub, zero, NULL);
    hipGetDeviceCount(&count);
    is_int(0, hipGetLastError(), "a successful call replaces the last error (as in HIP)");
    pthread_create(&thread, NULL, fail_in_thread, NULL);
    pthread_join(thread, NULL);
    is_int(0, hipGetLastError(), "another thread's failure is not ours");

    is_string("hipErrorInvalidConfiguration", hipGetErrorName(9), "hipGetErrorName(9)");
    is_string("hipErrorInvalidHandle", hipGetErrorName(400), "hipGetErrorName(400)");
    is_string("hipSuccess", hipGetErrorName(0), "hipGetErrorName(0)");
    is_string("hipErrorUnknown", hipGetErrorName(123456), "an unknown code");
    is_string("invalid argument", hipGetErrorString(1), "hipGetErrorString(1)");
    hipEventDestroy(e);
    hipEventDestroy(unrecorded);
    hipEventDestroy(timing_off);
}

/* The log this process wrote: what in-process calls look like. */
static void test_own_log(const char *log_path)
{
    struct sim_log log;
    const struct log_line *l;

    load_log(log_path, &log);
    ok(log.count > 100 && log.malformed == 0, "this process logged %zu well-formed lines", log.count);
    l = log_first(&log, "hipGraphLaunch");
    is_string("4", l ? l->bytes : "", "hipGraphLaunch is logged with its node count");
    l = log_first(&log, "hipLaunchKernel");
    is_string(BIG_NAME, l ? l->name : "", "hipLaunchKernel with the registered name");
    ok(log_count(&log, "hipLaunchKernel", NULL, obs_hipErrorInvalidConfiguration) >= 2,
       "failed launches are logged with their status");
    l = log_first(&log, "hipMemcpy2D");
    is_string("512", l ? l->bytes : "", "hipMemcpy2D: 512 bytes");
    free_log(&log);
}

/* ---- the real obs_hip ---- */

struct kernel_counts {
    size_t prefill, gather, decode, graph_launches, graph_nodes_per_launch;
    long long ttft_ns, tokens_x100;
};

/* Kernels executed per name: launches outside capture, plus each graph
 * launch's captured nodes. */
static void count_executed(const struct sim_log *log, size_t *prefill, size_t *gather,
                           size_t *decode, size_t *graph_launches)
{
    size_t cap_p = 0, cap_g = 0, cap_d = 0;
    int capturing = 0;

    *prefill = *gather = *decode = *graph_launches = 0;
    for (size_t i = 0; i < log->count; i++) {
        const struct log_line *l = &log->lines[i];
        if (strcmp(l->api, "hipStreamBeginCapture") == 0)
            capturing = 1;
        else if (strcmp(l->api, "hipStreamEndCapture") == 0)
            capturing = 0;
        else if (strcmp(l->api, "hipGraphLaunch") == 0)
            ++*graph_launches;
        else if (strcmp(l->api, "hipLaunchKernel") == 0 && l->status == 0) {
            size_t *n = NULL;
            if (strcmp(l->name, PREFILL_NAME) == 0)
                n = capturing ? &cap_p : prefill;
            else if (strcmp(l->name, GATHER_NAME) == 0)
                n = capturing ? &cap_g : gather;
            else if (strcmp(l->name, DECODE_NAME) == 0)
                n = capturing ? &cap_d : decode;
            if (n != NULL)
                ++*n;
        }
    }
    *prefill += *graph_launches * cap_p;
    *gather += *graph_launches * cap_g;
    *decode += *graph_launches * cap_d;
}

static void test_obs_hip_run(const char *path, int graphs)
{
    const int warmup = 1, repeat = 3, decode = 16;
    const char *log_path = test_path(test_tmpdir(), graphs ? "obs_hip_graphs.log" : "obs_hip.log");
    const char *argv[] = {path, "--repeat", "3", "--decode", "16", graphs ? "--graphs" : NULL, NULL};
    const char *mode = graphs ? "obs_hip --graphs" : "obs_hip";
    struct run_result res;
    struct sim_log log;
    size_t prefill, gather, dec, graph_launches;
    double ttft = 0, tps = 0;
    const char *line;
    const struct log_line *gl;

    run_on_sim(argv, log_path, 1, &res);
    if (!is_int(0, res.status, "%s on the simulator exits 0", mode))
        diag_text("stderr", res.err);
    line = strstr(res.out, "TTFT_ms=");
    ok(line != NULL && sscanf(line, "TTFT_ms=%lf tokens_per_s=%lf", &ttft, &tps) == 2 &&
           strstr(line, "(best of 3 reps)") != NULL,
       "%s prints the TTFT line", mode);
    {
        /* defaults: 16384 blocks for prefill and gather, 16 for decode, block 256 */
        double prefill_ns = (double)sim_kernel_cost_ns(16384ull * 256, 0);
        double step_ns = prefill_ns + (double)sim_kernel_cost_ns(16ull * 256, 0);
        double steady_ns = graphs ? (double)(sim_kernel_cost_ns(16384ull * 256, 1) +
                                             sim_kernel_cost_ns(16ull * 256, 1))
                                  : step_ns;
        is_double((prefill_ns + step_ns) / 1e6, ttft, 5e-3, "%s: TTFT_ms is the cost model's", mode);
        is_double(1e9 / steady_ns, tps, 1e-4, "%s: tokens_per_s is the cost model's", mode);
    }
    load_log(log_path, &log);
    count_executed(&log, &prefill, &gather, &dec, &graph_launches);
    is_int(warmup + repeat * 1, (long long)prefill, "%s: prefill runs warm-up + repeat x 1", mode);
    is_int(warmup + repeat * decode, (long long)gather,
           "%s: KV gather runs warm-up + repeat x decode", mode);
    is_int(warmup + repeat * decode, (long long)dec, "%s: decode runs warm-up + repeat x decode",
           mode);
    is_int(warmup * 3 + repeat * (1 + 2 * decode), (long long)(prefill + gather + dec),
           "%s: %d kernels in all", mode, warmup * 3 + repeat * (1 + 2 * decode));
    is_int(graphs ? repeat : 0, (long long)graph_launches, "%s: %d graph launches", mode,
           graphs ? repeat : 0);
    gl = log_first(&log, "hipGraphLaunch");
    if (graphs)
        is_string("30", gl ? gl->bytes : "", "%s: each replays 2 x (decode - 1) nodes", mode);
    else
        ok(gl == NULL, "%s: no graph", mode);
    is_int((long long)log.count, (long long)log_count(&log, NULL, NULL, 0),
           "%s: every call succeeded", mode);
    free_log(&log);
    run_result_free(&res);
}

static void test_obs_hip(void)
{
    const char *why = "";
    const char *path = workload_path(&workload_bins[2], &why);
    const char *argv[3];
    struct run_result res;

    if (path == NULL) {
        skip("obs_hip on the simulator: %s", why);
        return;
    }
    /* the defaults once, as a user would run it */
    argv[0] = path;
    argv[1] = NULL;
    run_on_sim(argv, NULL, 0, &res);
    is_int(0, res.status, "obs_hip with its defaults exits 0");
    ok(strstr(res.out, "TTFT_ms=0.137 tokens_per_s=14367.8") != NULL &&
           strstr(res.out, "(best of 20 reps)") != NULL,
       "obs_hip defaults: TTFT_ms=0.137 tokens_per_s=14367.8x (best of 20 reps)");
    is_int(1, (long long)count_lines_with(res.err, BANNER), "obs_hip: the banner says it is simulated");
    diag("obs_hip defaults on the simulator: %.*s", (int)strcspn(res.out, "\n"), res.out);
    run_result_free(&res);
    test_obs_hip_run(path, 0);
    test_obs_hip_run(path, 1);
}

int main(void)
{
    static char own_log[4096];

    /* test_path() hands out rotating buffers: keep a copy */
    snprintf(own_log, sizeof own_log, "%s", test_path(test_tmpdir(), "in_process.log"));
    plan_lazy();
    if (!test_executable(driver_path()))
        bail("%s was not built", driver_path());
    test_exports();
    test_driver_valid();
    test_driver_errors();
    test_driver_threads();
    test_banner();

    /* in this process: quiet, with its own log */
    setenv("OBS_SIM_QUIET", "1", 1);
    setenv("OBS_SIM_LOG", own_log, 1);
    register_fake_module();
    test_memory();
    test_clock();
    test_graphs();
    test_modules_and_config();
    test_errors();
    test_own_log(own_log);
    __hipUnregisterFatBinary(fake_modules);

    test_obs_hip();
    return 0;
}
