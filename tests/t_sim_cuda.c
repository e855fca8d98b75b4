/* The simulated CUDA runtime (sim/, libcudart.so.13) on its own:
 *   - exports: every entry point of shim/abi/cuda_abi.h at version node
 *     libcudart.so.13, nothing internal;
 *   - tests/apps/cuda_api_driver against it: the ground-truth log holds one
 *     line per call, in order, with the right kind, kernel name, stream,
 *     bytes and status; the --errors codes; 4 threads x 2000 launches;
 *     the stderr banner and OBS_SIM_QUIET;
 *   - in this process (the test links the simulator): copies and memsets move
 *     bytes, the virtual clock follows the cost model (legacy and non-blocking
 *     streams, StreamWaitEvent, per-thread streams), graph capture and replay,
 *     the launch protocol (__cudaGetKernel handles, the configuration stack),
 *     the per-thread last error, error names;
 *   - the real obs_cuda on it (when nvcc built it): exit 0, the TTFT line, and
 *     launches per kernel = warm-up + repeat x (1 prefill | decode gathers |
 *     decode steps), with and without --graphs. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_abi.h"
#include "trace/api_list.h"
#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#define BANNER "obsshim-sim: simulated CUDA runtime (no GPU; kernels are not executed)"
#define PREFILL_NAME "_Z14prefill_kernelPfPKfii"
#define DECODE_NAME "_Z13decode_kernelPfPKfii"
#define GATHER_NAME "_Z16kv_gather_kernelPfPKfii"

/* Call counts documented in tests/apps/cuda_api_driver.c. */
#define DRIVER_CALLS 98
#define DRIVER_ERROR_CALLS 25

/* ---- the API lists ------------------------------------------------------------ */

#define NAME_OF(name, ret, params, args) #name,
static const char *const runtime_api[] = {OBS_CUDA_RUNTIME_API(NAME_OF)};
static const char *const support_api[] = {OBS_CUDA_RUNTIME_SUPPORT_API(NAME_OF)
                                              OBS_CUDA_RUNTIME_PROFILER_API(NAME_OF)};
#undef NAME_OF
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

#define KIND_WORD(id, word) [OBS_KIND_##id] = word,
static const char *const kind_words[] = {OBS_CALL_KIND_LIST(KIND_WORD)};
#undef KIND_WORD
#define API_ROW(id, name, kind, family) {name, OBS_KIND_##kind},
static const struct {
    const char *name;
    int kind;
} api_rows[] = {OBS_API_LIST(API_ROW)};
#undef API_ROW

/* The kind word the log must show for api: shim/trace/api_list.h's, else "other". */
static const char *expected_kind(const char *api)
{
    size_t i;
    for (i = 1; i < COUNT_OF(api_rows); i++)
        if (strcmp(api_rows[i].name, api) == 0)
            return kind_words[api_rows[i].kind];
    return "other";
}

/* ---- the ground-truth log -------------------------------------------------------- */

struct log_line {
    const char *api, *kind, *name, *stream, *bytes;
    int status;
};

struct sim_log {
    char *text;
    struct log_line *lines;
    size_t count;
    size_t malformed;
};

static void load_log(const char *path, struct sim_log *log)
{
    char *p, *save = NULL;
    size_t cap = 0;

    memset(log, 0, sizeof *log);
    log->text = test_read_file(path, NULL);
    if (log->text == NULL)
        return;
    for (p = strtok_r(log->text, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
        char *f[7];
        int n = 0;
        char *q = p;
        while (n < 7) {
            f[n++] = q;
            q = strchr(q, '\t');
            if (q == NULL)
                break;
            *q++ = '\0';
        }
        if (n != 6) {
            log->malformed++;
            continue;
        }
        if (log->count == cap) {
            cap = cap ? 2 * cap : 1024;
            log->lines = realloc(log->lines, cap * sizeof *log->lines);
            if (log->lines == NULL)
                bail("out of memory");
        }
        log->lines[log->count++] = (struct log_line){f[0], f[1], f[2], f[3], f[4], atoi(f[5])};
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
    size_t i, n = 0;
    for (i = 0; i < log->count; i++)
        if ((api == NULL || strcmp(log->lines[i].api, api) == 0) &&
            (name == NULL || strcmp(log->lines[i].name, name) == 0) &&
            (status < 0 || log->lines[i].status == status))
            n++;
    return n;
}

static const struct log_line *log_first(const struct sim_log *log, const char *api)
{
    size_t i;
    for (i = 0; i < log->count; i++)
        if (strcmp(log->lines[i].api, api) == 0)
            return &log->lines[i];
    return NULL;
}

/* ---- running programs on the simulator ------------------------------------------- */

static const char *driver_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/apps/cuda_api_driver", test_builddir());
    return path;
}

/* Run argv on the simulator with OBS_SIM_LOG=log_path; quiet selects OBS_SIM_QUIET=1
 * (otherwise it is removed from the child's environment). */
static void run_on_sim(const char *const argv[], const char *log_path, int quiet, struct run_result *res)
{
    char log_env[4200];
    const char *env[4];
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    env[0] = sim_library_path_env();
    env[1] = log_env;
    env[2] = quiet ? "OBS_SIM_QUIET=1" : "OBS_SIM_QUIET";
    env[3] = NULL;
    remove(log_path);
    if (run_program(argv, env, 120, res) != 0)
        bail("cannot run %s", argv[0]);
}

/* ---- exports ------------------------------------------------------------------------ */

static void test_exports(void)
{
    const char *path = test_path(test_builddir(), "sim/.libs/libcudart.so.13");
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    size_t i, missing = 0;

    if (!ok(lib != NULL, "dlopen %s", path)) {
        diag("%s", dlerror());
        skip_block(4, "no library");
        return;
    }
    for (i = 0; i < COUNT_OF(runtime_api); i++)
        if (dlvsym(lib, runtime_api[i], "libcudart.so.13") == NULL) {
            diag("missing %s@libcudart.so.13", runtime_api[i]);
            missing++;
        }
    is_int(0, (long long)missing, "all %zu hooked entry points exported at libcudart.so.13",
           COUNT_OF(runtime_api));
    missing = 0;
    for (i = 0; i < COUNT_OF(support_api); i++)
        if (dlvsym(lib, support_api[i], "libcudart.so.13") == NULL) {
            diag("missing %s@libcudart.so.13", support_api[i]);
            missing++;
        }
    is_int(0, (long long)missing, "all %zu support entry points exported at libcudart.so.13",
           COUNT_OF(support_api));
    ok(dlsym(lib, "sim_submit") == NULL && dlsym(lib, "sim_lock") == NULL &&
           dlsym(lib, "sim_stream_lookup") == NULL,
       "internal helpers are not exported");
    ok(dlsym(lib, "cudaLaunchKernel") == (void *)cudaLaunchKernel,
       "this test is linked against the same library");
    dlclose(lib);
}

static void test_api_list_agrees(void)
{
    size_t i, absent = 0;
    for (i = 0; i < COUNT_OF(runtime_api); i++)
        if (strcmp(expected_kind(runtime_api[i]), "other") == 0) {
            diag("%s is hooked (cuda_abi.h) but has no kind in api_list.h", runtime_api[i]);
            absent++;
        }
    is_int(0, (long long)absent, "every hooked entry point has a kind in shim/trace/api_list.h");
}

/* ---- cuda_api_driver ------------------------------------------------------------- */

static void test_driver_valid(void)
{
    const char *log_path = test_path(test_tmpdir(), "driver.log");
    const char *argv[] = {driver_path(), NULL};
    struct run_result res;
    struct sim_log log;
    const struct log_line *l;
    size_t i, order_errors = 0, kind_errors = 0, bad_kernel_names = 0;
    size_t missing = 0, miscounted = 0;
    char *out_line, *save = NULL;
    char wanted_final[64];

    if (!test_executable(argv[0]))
        bail("%s was not built", argv[0]);
    run_on_sim(argv, log_path, 0, &res);
    is_int(0, res.status, "cuda_api_driver exits 0 on the simulator");
    snprintf(wanted_final, sizeof wanted_final, "calls %d failed 0\n", DRIVER_CALLS);
    ok(strstr(res.out, wanted_final) != NULL, "driver reports %d calls, none failed", DRIVER_CALLS);
    is_int(1, (long long)count_lines_with(res.err, BANNER), "banner printed once on stderr");

    load_log(log_path, &log);
    is_int(0, (long long)log.malformed, "every log line has 6 tab-separated fields");
    is_int(DRIVER_CALLS, (long long)log.count, "one log line per call");

    /* The driver is single-threaded: its stdout and the log list the same
     * calls in the same order, with the same statuses. */
    i = 0;
    for (out_line = strtok_r(res.out, "\n", &save); out_line; out_line = strtok_r(NULL, "\n", &save)) {
        char api[128];
        int status;
        if (strncmp(out_line, "calls ", 6) == 0)
            break;
        if (sscanf(out_line, "%127s %d", api, &status) != 2 || i >= log.count ||
            strcmp(api, log.lines[i].api) != 0 || status != log.lines[i].status) {
            if (order_errors++ < 5)
                diag("stdout '%s' vs log line %zu '%s %d'", out_line, i,
                     i < log.count ? log.lines[i].api : "(none)", i < log.count ? log.lines[i].status : -1);
        }
        i++;
    }
    is_int(0, (long long)order_errors, "log lines match the driver's calls, in order");

    for (i = 0; i < log.count; i++) {
        l = &log.lines[i];
        if (strcmp(l->kind, expected_kind(l->api)) != 0 && kind_errors++ < 5)
            diag("%s logged as %s, expected %s", l->api, l->kind, expected_kind(l->api));
        if (strcmp(l->kind, "kernel") == 0 && strcmp(l->name, PREFILL_NAME) != 0 &&
            strcmp(l->name, DECODE_NAME) != 0)
            bad_kernel_names++;
    }
    is_int(0, (long long)kind_errors, "kind column as in shim/trace/api_list.h (other for the rest)");
    is_int(0, (long long)bad_kernel_names, "every launch names its registered kernel");
    is_int(0, (long long)log_count(&log, NULL, NULL, -1) - (long long)log_count(&log, NULL, NULL, 0),
           "every call of the valid run returned 0");

    for (i = 0; i < COUNT_OF(runtime_api); i++) {
        size_t n = log_count(&log, runtime_api[i], NULL, -1);
        int twice = strcmp(runtime_api[i], "cudaLaunchKernel") == 0 ||
                    strcmp(runtime_api[i], "cudaMemcpyAsync") == 0 ||
                    strcmp(runtime_api[i], "cudaMalloc") == 0 || strcmp(runtime_api[i], "cudaFree") == 0;
        if (n == 0) {
            diag("%s never called", runtime_api[i]);
            missing++;
        } else if (n != (twice ? 2u : 1u)) {
            diag("%s called %zu times", runtime_api[i], n);
            miscounted++;
        }
    }
    is_int(0, (long long)missing, "every hooked entry point was called");
    is_int(0, (long long)miscounted, "each called as often as documented");

    is_int(2, (long long)log_count(&log, "__cudaRegisterFunction", NULL, 0), "two kernels registered");
    is_int(1, (long long)log_count(&log, "__cudaRegisterFunction", PREFILL_NAME, 0),
           "registration line names the mangled kernel");
    l = log_first(&log, "__cudaLaunchKernel");
    ok(l && strcmp(l->name, PREFILL_NAME) == 0, "__cudaLaunchKernel is named through its cudaKernel_t");
    l = log_first(&log, "cudaLaunchKernelExC");
    ok(l && strcmp(l->name, DECODE_NAME) == 0, "cudaLaunchKernelExC names its kernel");
    l = log_first(&log, "cudaLaunchKernel_ptsz");
    ok(l && strcmp(l->stream, "0x0") == 0, "stream 0 logged as 0x0");
    l = log_first(&log, "cudaMemcpy");
    ok(l && strcmp(l->stream, "-") == 0 && strcmp(l->bytes, "4096") == 0 && strcmp(l->name, "-") == 0,
       "cudaMemcpy: no stream, 4096 bytes, no name");
    l = log_first(&log, "cudaMemcpyAsync");
    ok(l && strncmp(l->stream, "0x", 2) == 0 && strcmp(l->stream, "0x0") != 0, "cudaMemcpyAsync: its stream");
    l = log_first(&log, "cudaMemcpy2D");
    ok(l && strcmp(l->bytes, "512") == 0, "cudaMemcpy2D: width x height bytes");
    l = log_first(&log, "cudaMemcpy3D");
    ok(l && strcmp(l->bytes, "256") == 0, "cudaMemcpy3D: extent bytes");
    l = log_first(&log, "cudaMemset3DAsync");
    ok(l && strcmp(l->bytes, "256") == 0, "cudaMemset3DAsync: extent bytes");
    l = log_first(&log, "cudaMalloc");
    ok(l && strcmp(l->bytes, "4096") == 0, "cudaMalloc: size");
    l = log_first(&log, "cudaGraphLaunch");
    ok(l && strcmp(l->bytes, "2") == 0, "cudaGraphLaunch: bytes column is the node count");
    l = log_first(&log, "cudaStreamSynchronize");
    ok(l && strcmp(l->kind, "sync") == 0 && strcmp(l->bytes, "-") == 0, "sync line");
    free_log(&log);
    run_result_free(&res);
}

static void test_driver_errors(void)
{
    const char *log_path = test_path(test_tmpdir(), "driver-errors.log");
    const char *argv[] = {driver_path(), "--errors", NULL};
    struct run_result res;
    struct sim_log log;
    char wanted_final[64];

    run_on_sim(argv, log_path, 1, &res);
    is_int(0, res.status, "--errors: every invalid call failed as CUDA fails");
    if (res.status != 0)
        diag_text("stderr", res.err);
    snprintf(wanted_final, sizeof wanted_final, "calls %d failed 0\n", DRIVER_CALLS + DRIVER_ERROR_CALLS);
    ok(strstr(res.out, wanted_final) != NULL, "--errors: %d calls", DRIVER_CALLS + DRIVER_ERROR_CALLS);
    is_int(0, (long long)res.err_len, "OBS_SIM_QUIET=1: nothing on stderr");

    load_log(log_path, &log);
    is_int(DRIVER_CALLS + DRIVER_ERROR_CALLS, (long long)log.count, "--errors: one log line per call");
    is_int(2, (long long)log_count(&log, "cudaLaunchKernel", PREFILL_NAME, 9),
           "zero grid / zero block: cudaErrorInvalidConfiguration (9)");
    is_int(1, (long long)log_count(&log, "cudaLaunchKernel", "-", 98),
           "NULL function: cudaErrorInvalidDeviceFunction (98)");
    is_int(1, (long long)log_count(&log, "cudaLaunchKernel", PREFILL_NAME, 400),
           "unknown stream: cudaErrorInvalidResourceHandle (400)");
    is_int(2, (long long)log_count(&log, "cudaGetLastError", NULL, 400),
           "a failed launch / graph launch sets the last error");
    is_int(1, (long long)log_count(&log, "__cudaLaunchKernel", NULL, 9), "__cudaLaunchKernel zero grid: 9");
    is_int(1, (long long)log_count(&log, "cudaLaunchKernelExC", NULL, 1), "ExC without config: 1");
    is_int(1, (long long)log_count(&log, "cudaMemcpy", NULL, 1), "cudaMemcpy NULL dst: 1");
    is_int(1, (long long)log_count(&log, "cudaMemcpy", NULL, 21),
           "cudaMemcpy unknown kind: cudaErrorInvalidMemcpyDirection (21)");
    is_int(1, (long long)log_count(&log, "cudaMemcpyAsync", NULL, 400), "cudaMemcpyAsync unknown stream: 400");
    is_int(1, (long long)log_count(&log, "cudaMemcpy2D", NULL, 12), "cudaMemcpy2D pitch < width: 12");
    is_int(1, (long long)log_count(&log, "cudaMemcpyToSymbol", NULL, 13), "NULL symbol: 13");
    is_int(1, (long long)log_count(&log, "cudaMemcpyPeer", NULL, 101), "peer device 1: 101");
    is_int(1, (long long)log_count(&log, "cudaMemset", NULL, 1), "cudaMemset NULL: 1");
    is_int(1, (long long)log_count(&log, "cudaMalloc", NULL, 1), "cudaMalloc NULL out-pointer: 1");
    is_int(1, (long long)log_count(&log, "cudaFree", NULL, 1), "cudaFree of host memory: 1");
    is_int(1, (long long)log_count(&log, "cudaStreamSynchronize", NULL, 400), "sync unknown stream: 400");
    is_int(1, (long long)log_count(&log, "cudaGraphLaunch_ptsz", NULL, 400), "unknown graph exec: 400");
    free_log(&log);
    run_result_free(&res);
}

static void test_driver_threads(void)
{
    const char *log_path = test_path(test_tmpdir(), "driver-threads.log");
    const char *argv[] = {driver_path(), "--threads", "4", "--launches", "2000", NULL};
    struct run_result res;
    struct sim_log log;
    size_t i, streams = 0;
    const char *seen[4] = {NULL};

    run_on_sim(argv, log_path, 1, &res);
    is_int(0, res.status, "--threads 4 --launches 2000 exits 0");
    load_log(log_path, &log);
    is_int(0, (long long)log.malformed, "threads: no torn log lines");
    is_int(8000, (long long)log_count(&log, "cudaLaunchKernel", PREFILL_NAME, 0), "threads: 8000 launches");
    is_int(4, (long long)log_count(&log, "cudaStreamSynchronize", NULL, 0), "threads: 4 syncs");
    for (i = 0; i < log.count; i++) {
        size_t k;
        if (strcmp(log.lines[i].api, "cudaLaunchKernel") != 0)
            continue;
        for (k = 0; k < streams && strcmp(seen[k], log.lines[i].stream) != 0; k++)
            ;
        if (k == streams && streams < 4)
            seen[streams++] = log.lines[i].stream;
    }
    is_int(4, (long long)streams, "threads: each launches on its own stream");
    free_log(&log);
    run_result_free(&res);
}

/* ---- in this process ----------------------------------------------------------------- */

static volatile int stub_marker;
static void big_kernel_stub(void)
{
    stub_marker = 1;
}
static void small_kernel_stub(void)
{
    stub_marker = 2;
}
static float device_table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

static const obs_dim3 big_grid = {16384, 1, 1}, block256 = {256, 1, 1}, small_grid = {16, 1, 1};
#define BIG_THREADS (16384ull * 256)
#define SMALL_THREADS (16ull * 256)
#define MB (1024u * 1024u)

static void register_in_process(void)
{
    static const unsigned long long image[4] = {1};
    static struct obs_fatbin_wrapper wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, image, NULL};
    void **h = __cudaRegisterFatBinary(&wrapper);
    __cudaRegisterFunction(h, (const char *)big_kernel_stub, (char *)"big", "_Z3bigv", -1, NULL, NULL, NULL,
                           NULL, NULL);
    __cudaRegisterFunction(h, (const char *)small_kernel_stub, (char *)"small", "_Z5smallv", -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterVar(h, (char *)device_table, (char *)"device_table", "device_table", 0,
                      sizeof device_table, 0, 0);
    __cudaRegisterFatBinaryEnd(h);
}

static int launch(const void *stub, obs_dim3 grid, obs_cudaStream_t s)
{
    return cudaLaunchKernel(stub, grid, block256, NULL, 0, s);
}

/* Elapsed ms between two events as the simulator reports it, in ns. */
static long long elapsed_ns(obs_cudaEvent_t a, obs_cudaEvent_t b)
{
    float ms = -1;
    if (cudaEventElapsedTime(&ms, a, b) != obs_cudaSuccess)
        return -1;
    return llround((double)ms * 1e6);
}

/* Event times are floats in ms: compare in ns with float's resolution. */
static void is_ns(unsigned long long wanted, long long seen, const char *what)
{
    long long tol = (long long)(wanted / 1000000) + 1;
    if (!ok(llabs(seen - (long long)wanted) <= tol, "%s: %llu ns", what, wanted))
        diag("seen %lld ns", seen);
}

static void test_memory_moves(void)
{
    char *d_a, *d_b, host[4096], back[4096], pitched[64 * 8];
    unsigned char *d_pitched;
    float table[8];
    size_t i;
    int good;
    obs_cudaStream_t s;

    for (i = 0; i < sizeof host; i++)
        host[i] = (char)(i * 13 + 1);
    cudaStreamCreate(&s);
    ok(cudaMalloc((void **)&d_a, sizeof host) == 0 && cudaMalloc((void **)&d_b, sizeof host) == 0 &&
           ((uintptr_t)d_a % 256) == 0,
       "cudaMalloc gives 256-byte aligned memory");
    cudaMemcpy(d_a, host, sizeof host, obs_cudaMemcpyHostToDevice);
    cudaMemcpyAsync(d_b, d_a, sizeof host, obs_cudaMemcpyDeviceToDevice, s);
    memset(back, 0, sizeof back);
    cudaMemcpy(back, d_b, sizeof back, obs_cudaMemcpyDeviceToHost);
    ok(memcmp(host, back, sizeof host) == 0, "HtoD, DtoD (async), DtoH round trip moves the bytes");

    cudaMemset(d_a, 0xab, 100);
    good = 1;
    for (i = 0; i < 100; i++)
        good &= (unsigned char)d_a[i] == 0xab;
    ok(good && d_a[100] == host[100], "cudaMemset sets exactly count bytes");

    /* 2D: 8 rows of 16 bytes into a 64-byte pitch; the rest of each row untouched. */
    ok(cudaMalloc((void **)&d_pitched, sizeof pitched) == 0, "pitched allocation");
    cudaMemset(d_pitched, 0, sizeof pitched);
    cudaMemcpy2D(d_pitched, 64, host, 16, 16, 8, obs_cudaMemcpyHostToDevice);
    good = 1;
    for (i = 0; i < 8; i++)
        good &= memcmp(d_pitched + 64 * i, host + 16 * i, 16) == 0 && d_pitched[64 * i + 16] == 0;
    ok(good, "cudaMemcpy2D copies width bytes per row at the pitches");
    cudaMemset2D(d_pitched, 64, 0x5a, 4, 8);
    ok(d_pitched[64 * 7] == 0x5a && d_pitched[64 * 7 + 4] == (unsigned char)host[16 * 7 + 4],
       "cudaMemset2D sets width bytes per row");

    /* 3D: a 4 x 2 x 2 box from position (1, 1, 1) of one pitched volume to (0, 0, 0) of another. */
    {
        unsigned char src[16 * 4 * 3], dst[16 * 4 * 3];
        struct obs_cudaMemcpy3DParms p;
        for (i = 0; i < sizeof src; i++)
            src[i] = (unsigned char)i;
        memset(dst, 0, sizeof dst);
        memset(&p, 0, sizeof p);
        p.srcPtr = (struct obs_cudaPitchedPtr){src, 16, 16, 4};
        p.dstPtr = (struct obs_cudaPitchedPtr){dst, 16, 16, 4};
        p.srcPos = (struct obs_cudaPos){1, 1, 1};
        p.extent = (struct obs_cudaExtent){4, 2, 2};
        p.kind = obs_cudaMemcpyHostToHost;
        is_int(0, cudaMemcpy3D(&p), "cudaMemcpy3D on pitched host memory");
        ok(dst[0] == src[64 + 16 + 1] && dst[3] == src[64 + 16 + 4] && dst[16] == src[64 + 32 + 1] &&
               dst[64] == src[128 + 16 + 1] && dst[4] == 0 && dst[32] == 0,
           "cudaMemcpy3D honours positions, pitches and slices");
    }

    /* Symbols: the registered variable has device storage of its own. */
    for (i = 0; i < 8; i++)
        table[i] = (float)(10 * i);
    is_int(0, cudaMemcpyToSymbol(device_table, table, sizeof table, 0, obs_cudaMemcpyHostToDevice),
           "cudaMemcpyToSymbol of a registered variable");
    ok(device_table[1] == 2.f, "the host shadow is not the device copy");
    memset(table, 0, sizeof table);
    cudaMemcpyFromSymbol(table, device_table, 2 * sizeof(float), 4 * sizeof(float), obs_cudaMemcpyDeviceToHost);
    ok(table[0] == 40.f && table[1] == 50.f, "cudaMemcpyFromSymbol with offset reads the device copy");
    is_int(obs_cudaErrorInvalidValue,
           cudaMemcpyToSymbol(device_table, table, sizeof table, 4, obs_cudaMemcpyHostToDevice),
           "copy past the end of a symbol: cudaErrorInvalidValue");
    cudaMemcpyPeer(d_b, 0, host + 1, 0, 10);
    ok(memcmp(d_b, host + 1, 10) == 0, "cudaMemcpyPeer on device 0 moves bytes");

    is_int(0, cudaFree(d_a), "cudaFree");
    is_int(obs_cudaErrorInvalidValue, cudaFree(d_a), "double cudaFree: cudaErrorInvalidValue");
    cudaFree(d_b);
    cudaFree(d_pitched);
    cudaStreamDestroy(s);
}

static void test_clock(void)
{
    obs_cudaStream_t a, b, nb;
    obs_cudaEvent_t base, e1, e2, e3, e4, e5, untimed, never;
    char *d_buf, *h_buf = malloc(MB);
    const unsigned long long k_big = sim_kernel_cost_ns(BIG_THREADS, 0);
    const unsigned long long k_small = sim_kernel_cost_ns(SMALL_THREADS, 0);
    const unsigned long long m_set = sim_memset_cost_ns(MB);

    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaStreamCreateWithFlags(&nb, OBS_CUDA_STREAM_NON_BLOCKING);
    cudaEventCreate(&base);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaEventCreate(&e3);
    cudaEventCreate(&e4);
    cudaEventCreate(&e5);
    cudaEventCreateWithFlags(&untimed, OBS_CUDA_EVENT_DISABLE_TIMING);
    cudaEventCreate(&never);
    cudaMalloc((void **)&d_buf, MB);
    memset(h_buf, 1, MB);

    /* One stream: launch, HtoD copy, DtoD copy, memset back to back. */
    cudaEventRecord(e1, a);
    launch((const void *)big_kernel_stub, big_grid, a);
    cudaEventRecord(e2, a);
    cudaMemcpyAsync(d_buf, h_buf, MB, obs_cudaMemcpyHostToDevice, a);
    cudaEventRecord(e3, a);
    cudaMemcpyAsync(d_buf, d_buf + 0, MB / 2, obs_cudaMemcpyDeviceToDevice, a);
    cudaMemsetAsync(d_buf, 0, MB, a);
    cudaEventRecord(e4, a);
    is_ns(k_big, elapsed_ns(e1, e2), "kernel of 16384 x 256 threads");
    is_ns(sim_copy_cost_ns(MB, 0), elapsed_ns(e2, e3), "1 MiB HtoD copy");
    is_ns(sim_copy_cost_ns(MB / 2, 1) + m_set, elapsed_ns(e3, e4), "512 KiB DtoD copy then 1 MiB memset");
    is_ns(k_big + sim_copy_cost_ns(MB, 0) + sim_copy_cost_ns(MB / 2, 1) + m_set, elapsed_ns(e1, e4),
          "costs add up on one stream");

    /* Legacy stream semantics. base: the legacy stream after everything so far. */
    cudaEventRecord(base, NULL);
    cudaStreamWaitEvent(nb, base, 0);
    launch((const void *)big_kernel_stub, big_grid, a);
    cudaEventRecord(e1, NULL);
    is_ns(k_big, elapsed_ns(base, e1), "the legacy stream waits for a blocking stream");
    cudaMemsetAsync(d_buf, 0, MB, NULL);
    cudaEventRecord(e2, b);
    is_ns(k_big + m_set, elapsed_ns(base, e2), "a blocking stream waits for the legacy stream");
    cudaEventRecord(e3, nb);
    is_ns(0, elapsed_ns(base, e3), "a non-blocking stream does not wait for the legacy stream");
    launch((const void *)big_kernel_stub, big_grid, nb);
    launch((const void *)big_kernel_stub, big_grid, nb); /* nb now ends after everything else */
    cudaEventRecord(e3, OBS_CUDA_STREAM_LEGACY);
    is_ns(k_big + m_set, elapsed_ns(base, e3), "the legacy stream (0x1) does not wait for a non-blocking one");

    /* StreamWaitEvent: b waits for a's second kernel. */
    launch((const void *)big_kernel_stub, big_grid, a); /* ends at base + 2 k_big + m_set */
    cudaEventRecord(e4, a);
    cudaStreamWaitEvent(b, e4, 0);
    launch((const void *)small_kernel_stub, small_grid, b);
    cudaEventRecord(e5, b);
    is_ns(2 * k_big + m_set + k_small, elapsed_ns(base, e5), "cudaStreamWaitEvent orders b after a");

    /* The per-thread default stream, reached as 0 through _ptsz and as 0x2. */
    cudaEventRecord_ptsz(e1, NULL);
    cudaLaunchKernel_ptsz((const void *)small_kernel_stub, small_grid, block256, NULL, 0, NULL);
    cudaEventRecord(e2, OBS_CUDA_STREAM_PER_THREAD);
    is_ns(k_small, elapsed_ns(e1, e2), "per-thread default stream: 0 with _ptsz and 0x2 are one stream");

    is_int(obs_cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&(float){0}, base, never),
           "ElapsedTime with a never-recorded event: 400");
    cudaEventRecord(untimed, a);
    is_int(obs_cudaErrorInvalidResourceHandle, cudaEventElapsedTime(&(float){0}, base, untimed),
           "ElapsedTime with a timing-disabled event: 400");
    is_int(0, cudaEventQuery(e5), "cudaEventQuery: complete at once");
    is_int(0, cudaEventSynchronize(e5), "cudaEventSynchronize returns at once");

    cudaEventDestroy(base);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaEventDestroy(e3);
    cudaEventDestroy(e4);
    cudaEventDestroy(e5);
    cudaEventDestroy(untimed);
    cudaEventDestroy(never);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaStreamDestroy(nb);
    is_int(obs_cudaErrorInvalidResourceHandle, cudaStreamSynchronize(a), "a destroyed stream is unknown: 400");
    is_int(obs_cudaErrorInvalidResourceHandle, cudaEventRecord(e1, NULL), "a destroyed event is unknown: 400");
    cudaFree(d_buf);
    free(h_buf);
}

static void test_graphs(void)
{
    obs_cudaStream_t s;
    obs_cudaEvent_t e0, e1, e2;
    obs_cudaGraph_t graph = NULL, bad_graph = (obs_cudaGraph_t)1;
    obs_cudaGraphExec_t exec = NULL;
    obs_cudaStreamCaptureStatus status = -1;
    char *d_src, *d_dst, *h_pattern = malloc(MB);
    size_t nodes = 0, i;
    obs_cudaGraphNode_t node_list[5];
    int untouched = 1;

    cudaStreamCreate(&s);
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaMalloc((void **)&d_src, MB);
    cudaMalloc((void **)&d_dst, MB);
    for (i = 0; i < MB; i++)
        h_pattern[i] = (char)(i * 31 + 7);
    cudaMemcpy(d_src, h_pattern, MB, obs_cudaMemcpyHostToDevice);
    cudaMemset(d_dst, 0, MB);

    cudaEventRecord(e0, s);
    is_int(0, cudaStreamBeginCapture(s, obs_cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    cudaStreamIsCapturing(s, &status);
    is_int(obs_cudaStreamCaptureStatusActive, status, "the stream is capturing");
    is_int(0, launch((const void *)big_kernel_stub, big_grid, s), "a launch is captured");
    is_int(0, cudaMemcpyAsync(d_dst, d_src, MB, obs_cudaMemcpyDeviceToDevice, s), "a copy is captured");
    is_int(0, cudaMemsetAsync(d_src, 0, 4096, s), "a memset is captured");
    is_int(0, cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
    cudaEventRecord(e1, s);
    for (i = 0; i < MB; i++)
        untouched &= d_dst[i] == 0;
    ok(untouched && d_src[0] == h_pattern[0], "captured work is not executed");
    is_ns(0, elapsed_ns(e0, e1), "capture costs no device time");
    cudaStreamIsCapturing(s, &status);
    is_int(obs_cudaStreamCaptureStatusNone, status, "capture over");

    is_int(0, cudaGraphGetNodes(graph, NULL, &nodes), "cudaGraphGetNodes (count)");
    is_int(3, (long long)nodes, "three nodes captured");
    nodes = 5;
    cudaGraphGetNodes(graph, node_list, &nodes);
    ok(nodes == 3 && node_list[2] != NULL && node_list[3] == NULL, "node handles; the rest set to NULL");
    is_int(0, cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    is_int(0, cudaGraphLaunch(exec, s), "cudaGraphLaunch");
    cudaEventRecord(e2, s);
    ok(memcmp(d_dst, h_pattern, MB) == 0 && d_src[0] == 0, "replay executes the copy and the memset");
    is_ns(sim_kernel_cost_ns(BIG_THREADS, 1) + sim_copy_cost_ns(MB, 1) + sim_memset_cost_ns(4096),
          elapsed_ns(e1, e2), "replay: kernel at graph-node cost, copy and memset as usual");
    cudaGraphLaunch_ptsz(exec, NULL);

    /* Capture errors, as CUDA reports them. */
    is_int(obs_cudaErrorStreamCaptureUnsupported, cudaStreamBeginCapture(NULL, obs_cudaStreamCaptureModeGlobal),
           "the legacy stream cannot capture");
    is_int(obs_cudaErrorIllegalState, cudaStreamEndCapture(s, &graph), "EndCapture without capture: 401");
    cudaStreamBeginCapture(s, obs_cudaStreamCaptureModeGlobal);
    is_int(obs_cudaErrorStreamCaptureImplicit, cudaMemset(d_dst, 0, 16),
           "legacy-stream work while a blocking stream captures: 906");
    is_int(obs_cudaErrorStreamCaptureInvalidated, launch((const void *)big_kernel_stub, big_grid, s),
           "launch into an invalidated capture: 901");
    is_int(obs_cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &bad_graph),
           "EndCapture of an invalidated capture: 901");
    ok(bad_graph == NULL, "and no graph");
    cudaStreamBeginCapture(s, obs_cudaStreamCaptureModeRelaxed);
    is_int(obs_cudaErrorStreamCaptureUnsupported, cudaStreamSynchronize(s), "sync of a capturing stream: 900");
    is_int(obs_cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &bad_graph),
           "which invalidates the capture");
    cudaGetLastError();

    is_int(0, cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
    is_int(0, cudaGraphDestroy(graph), "cudaGraphDestroy");
    is_int(obs_cudaErrorInvalidResourceHandle, cudaGraphLaunch(exec, s), "a destroyed exec is unknown");
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaEventDestroy(e2);
    cudaFree(d_src);
    cudaFree(d_dst);
    cudaStreamDestroy(s);
    free(h_pattern);
}

static void test_launch_protocol(void)
{
    obs_cudaKernel_t k1 = NULL, k2 = NULL;
    obs_dim3 grid = {0, 0, 0}, block = {0, 0, 0};
    size_t shmem = 0;
    void *stream = NULL;
    const obs_dim3 g1 = {7, 1, 1}, g2 = {9, 2, 1}, too_big = {1025, 1, 1};

    is_int(0, __cudaGetKernel(&k1, (const void *)big_kernel_stub), "__cudaGetKernel");
    __cudaGetKernel(&k2, (const void *)big_kernel_stub);
    ok(k1 != NULL && k1 == k2 && (const void *)k1 != (const void *)big_kernel_stub,
       "cudaKernel_t: stable, and not the host stub's address");
    is_int(obs_cudaErrorInvalidDeviceFunction, __cudaGetKernel(&k2, (const void *)test_launch_protocol),
           "__cudaGetKernel of an unregistered function: 98");
    is_int(0, __cudaLaunchKernel(k1, small_grid, block256, NULL, 0, NULL), "__cudaLaunchKernel with the handle");
    is_int(obs_cudaErrorInvalidDeviceFunction,
           __cudaLaunchKernel((obs_cudaKernel_t)big_kernel_stub, small_grid, block256, NULL, 0, NULL),
           "__cudaLaunchKernel with a host stub instead of a handle: 98");
    is_int(0, cudaLaunchKernel((const void *)k1, small_grid, block256, NULL, 0, NULL),
           "cudaLaunchKernel accepts a cudaKernel_t");
    is_int(obs_cudaErrorInvalidConfiguration,
           cudaLaunchKernel((const void *)big_kernel_stub, small_grid, too_big, NULL, 0, NULL),
           "more than 1024 threads per block: 9");
    cudaGetLastError();

    __cudaPushCallConfiguration(g1, block256, 16, (void *)0x1);
    __cudaPushCallConfiguration(g2, block256, 32, NULL);
    __cudaPopCallConfiguration(&grid, &block, &shmem, &stream);
    ok(grid.x == 9 && grid.y == 2 && shmem == 32 && stream == NULL, "pop returns the last push");
    __cudaPopCallConfiguration(&grid, &block, &shmem, &stream);
    ok(grid.x == 7 && block.x == 256 && shmem == 16 && stream == (void *)0x1, "then the one before");
    is_int(obs_cudaErrorMissingConfiguration, __cudaPopCallConfiguration(&grid, &block, &shmem, &stream),
           "pop of an empty stack: 52");
    cudaGetLastError();
}

static void *fail_a_launch(void *arg)
{
    const obs_dim3 zero = {0, 1, 1};
    int *seen = arg;
    cudaLaunchKernel((const void *)big_kernel_stub, zero, block256, NULL, 0, NULL);
    seen[0] = cudaPeekAtLastError();
    seen[1] = cudaGetLastError();
    seen[2] = cudaGetLastError();
    return NULL;
}

static void test_last_error(void)
{
    pthread_t t;
    int seen[3] = {-1, -1, -1};

    cudaGetLastError();
    pthread_create(&t, NULL, fail_a_launch, seen);
    pthread_join(t, NULL);
    ok(seen[0] == 9 && seen[1] == 9 && seen[2] == 0, "last error: peek keeps it, get returns and resets it");
    is_int(0, cudaGetLastError(), "the last error belongs to the thread that failed");
    is_string("cudaErrorInvalidConfiguration", cudaGetErrorName(9), "cudaGetErrorName");
    is_string("invalid resource handle", cudaGetErrorString(400), "cudaGetErrorString");
    is_string("unrecognized error code", cudaGetErrorName(12345), "unknown code");
    {
        int n = 0, dev = -1;
        ok(cudaGetDeviceCount(&n) == 0 && n == 1 && cudaGetDevice(&dev) == 0 && dev == 0,
           "one device, ordinal 0");
        is_int(obs_cudaErrorInvalidDevice, cudaSetDevice(1), "cudaSetDevice(1): 101");
        cudaGetLastError();
    }
}

static void test_log_format_in_process(const char *log_path)
{
    obs_cudaStream_t s;
    char *d;
    char wanted[256];
    size_t len;
    char *text;

    cudaStreamCreate(&s);
    cudaMalloc((void **)&d, 100);
    cudaMemcpyAsync(d, "0123456789", 10, obs_cudaMemcpyHostToDevice, s);
    cudaFree(d);
    cudaStreamDestroy(s);
    snprintf(wanted, sizeof wanted, "cudaMemcpyAsync\tmemcpy\t-\t%p\t10\t0\ncudaFree\talloc\t-\t-\t-\t0\n",
             (void *)s);
    text = test_read_file(log_path, &len);
    ok(text && strstr(text, wanted) != NULL, "log lines exactly as docs/architecture.md specifies");
    free(text);
}

/* ---- the real workload --------------------------------------------------------------------- */

static void check_workload(const char *bin, const char *label, const char *const extra[], int decode,
                           int repeat, int graphs)
{
    const char *log_path = test_path(test_tmpdir(), "obs_cuda.log");
    const char *argv[8] = {bin};
    struct run_result res;
    struct sim_log log;
    size_t i, n = 1;
    long long steps = graphs ? repeat : (long long)repeat * decode;
    long long captured = graphs ? decode - 1 : 0;
    char nodes[32];

    for (i = 0; extra[i] && n < 7; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    run_on_sim(argv, log_path, 0, &res);
    is_int(0, res.status, "%s: obs_cuda exits 0 on the simulator", label);
    if (res.status != 0)
        diag_text("stderr", res.err);
    ok(strstr(res.out, "TTFT_ms=") && strstr(res.out, "tokens_per_s=") && strstr(res.out, "(best of "),
       "%s: prints the TTFT line", label);
    diag("%s: %.*s", label, (int)strcspn(res.out, "\n"), res.out);
    ok(strstr(res.err, BANNER) != NULL, "%s: says it runs on the simulator", label);
    load_log(log_path, &log);
    /* warm-up 1 + repeat x (1 prefill | 1 gather per step | 1 decode per step);
     * with --graphs, steps 1.. are captured once and replayed: step 0 per repeat. */
    is_int(1 + repeat, (long long)log_count(&log, "__cudaLaunchKernel", PREFILL_NAME, 0), "%s: prefill launches",
           label);
    is_int(1 + steps + captured, (long long)log_count(&log, "__cudaLaunchKernel", GATHER_NAME, 0),
           "%s: gather launches", label);
    is_int(1 + steps + captured, (long long)log_count(&log, "__cudaLaunchKernel", DECODE_NAME, 0),
           "%s: decode launches", label);
    is_int(0, (long long)(log.count - log_count(&log, NULL, NULL, 0)), "%s: every call succeeded", label);
    if (graphs) {
        const struct log_line *l = log_first(&log, "cudaGraphLaunch");
        snprintf(nodes, sizeof nodes, "%d", 2 * (decode - 1));
        is_int(repeat, (long long)log_count(&log, "cudaGraphLaunch", NULL, 0), "%s: one graph launch per repeat",
               label);
        ok(l && strcmp(l->bytes, nodes) == 0, "%s: each replays %s nodes", label, nodes);
    }
    free_log(&log);
    run_result_free(&res);
}

static void test_workload(void)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[0], &why);
    static const char *const defaults[] = {NULL};
    static const char *const small[] = {"--decode", "8", "--repeat=3", NULL};
    static const char *const small_graphs[] = {"--decode=8", "--repeat", "3", "--graphs", NULL};

    if (bin == NULL) {
        skip_block(23, "obs_cuda: %s", why);
        return;
    }
    check_workload(bin, "defaults", defaults, 128, 20, 0);
    check_workload(bin, "--decode 8 --repeat 3", small, 8, 3, 0);
    check_workload(bin, "--decode 8 --repeat 3 --graphs", small_graphs, 8, 3, 1);
}

int main(void)
{
    const char *log_path;

    plan_lazy();
    /* This process uses the simulator too: quiet, with a log of its own. */
    log_path = test_path(test_tmpdir(), "in-process.log");
    setenv("OBS_SIM_QUIET", "1", 1);
    setenv("OBS_SIM_LOG", log_path, 1);

    test_exports();
    test_api_list_agrees();
    test_driver_valid();
    test_driver_errors();
    test_driver_threads();

    register_in_process();
    test_memory_moves();
    test_clock();
    test_graphs();
    test_launch_protocol();
    test_last_error();
    test_log_format_in_process(log_path);

    test_workload();
    return 0;
}
