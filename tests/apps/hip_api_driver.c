/* hip_api_driver: a HIP application in C that calls every entry point of
 * OBS_HIP_API (shim/abi/hip_abi.h), so that the shim's tests can compare
 * what it recorded with the simulated runtime's ground-truth log
 * (OBS_SIM_LOG). It links against libamdhip64.so.5 like a hipcc-built
 * program and runs on the simulator through LD_LIBRARY_PATH.
 *
 * Usage: hip_api_driver [--errors] [--threads N --launches M]
 *
 * Default mode: registers a fake fat binary, two kernels and a __device__
 * variable as hipcc's generated constructor does, then makes the calls
 * below with valid arguments. Every call into the runtime, support calls
 * included, prints one line "api status" in call order, so stdout lists
 * exactly the calls the runtime saw (the ground-truth log has the same
 * sequence); the last line is "calls N unexpected U". Deterministic counts:
 *   every OBS_HIP_API entry point: exactly 1 call, except 2 calls each to
 *   hipLaunchKernel and hipMemcpyAsync (the second of each is made on a
 *   capturing stream and becomes a graph node: 2 nodes, replayed by the one
 *   hipGraphLaunch, logged with bytes 2), hipStreamSynchronize and
 *   hipMemcpyDtoH (after the replay, to check the copy it ran);
 *   61 OBS_HIP_API calls in all, 93 calls into the runtime, all returning 0.
 * --errors: the same registration, then invalid calls, each printed with
 *   the status it got, 44 calls into the runtime in all (setup included);
 *   "calls N unexpected U" counts those that did not return the documented
 *   HIP error code (see error_calls()).
 * --threads N --launches M: N threads, each creates its own stream, makes
 *   M hipLaunchKernel calls on it, synchronizes and destroys it. Only the
 *   summary "threads N launches M total T failed F" is printed; the log
 *   holds T = N * M hipLaunchKernel lines.
 * Exit status: 0 when every call returned what was expected and every
 * copy moved the right bytes, 1 otherwise, 2 on a usage error. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/abi/hip_abi.h"

#define BUF_BYTES 4096u

/* What hipcc emits for a translation unit with kernels: a fat binary
 * wrapper, one host stub address per kernel and a shadow per __device__
 * variable. The stubs' addresses are all that registration needs. */
static const char driver_code_object[] = "__CLANG_OFFLOAD_BUNDLE__ (fake)";
static const struct obs_hip_fatbin_wrapper driver_fatbin = {OBS_HIP_FATBIN_MAGIC, 1,
                                                            driver_code_object, NULL};
static const char driver_kernel_a = 'a', driver_kernel_b = 'b';
static const char kernel_a_name[] = "_Z15obs_driver_fillPfi";
static const char kernel_b_name[] = "_Z15obs_driver_copyPKfPfi";
static const char module_kernel_name[] = "_Z17obs_driver_modulePf";
static unsigned char driver_symbol[256]; /* host shadow of a __device__ array */

static unsigned long calls_made, calls_unexpected;
static void **driver_modules;

/* Prints "api status" and counts the call; returns status. */
static int report(const char *api, int status, int expected)
{
    printf("%s %d\n", api, status);
    ++calls_made;
    if (status != expected) {
        ++calls_unexpected;
        fprintf(stderr, "hip_api_driver: %s returned %d, expected %d\n", api, status, expected);
    }
    return status;
}

static int ok(const char *api, int status)
{
    return report(api, status, obs_hipSuccess);
}

static void check_bytes(const char *what, const void *got, const void *want, size_t n)
{
    if (memcmp(got, want, n) != 0) {
        ++calls_unexpected;
        fprintf(stderr, "hip_api_driver: %s: wrong bytes\n", what);
    }
}

static void register_module(void)
{
    driver_modules = __hipRegisterFatBinary(&driver_fatbin);
    report("__hipRegisterFatBinary", driver_modules != NULL ? 0 : 1, 0);
    __hipRegisterFunction(driver_modules, &driver_kernel_a, (char *)kernel_a_name, kernel_a_name,
                          (unsigned int)-1, NULL, NULL, NULL, NULL, NULL);
    report("__hipRegisterFunction", 0, 0);
    __hipRegisterFunction(driver_modules, &driver_kernel_b, (char *)kernel_b_name, kernel_b_name,
                          (unsigned int)-1, NULL, NULL, NULL, NULL, NULL);
    report("__hipRegisterFunction", 0, 0);
    __hipRegisterVar(driver_modules, driver_symbol, (char *)"obs_driver_symbol",
                     (char *)"obs_driver_symbol", 0, sizeof driver_symbol, 0, 0);
    report("__hipRegisterVar", 0, 0);
}

static void unregister_module(void)
{
    __hipUnregisterFatBinary(driver_modules);
    report("__hipUnregisterFatBinary", 0, 0);
}

/* kernel<<<grid, block, 0, stream>>>(args) as hipcc compiles it. */
static int triple_chevron(const void *stub, obs_hipDim3 grid, obs_hipDim3 block,
                          obs_hipStream_t stream, void **args)
{
    obs_hipDim3 g, b;
    size_t shmem;
    obs_hipStream_t s;

    if (ok("__hipPushCallConfiguration", __hipPushCallConfiguration(grid, block, 0, stream)) != 0)
        return 1;
    ok("__hipPopCallConfiguration", __hipPopCallConfiguration(&g, &b, &shmem, &s));
    return ok("hipLaunchKernel", hipLaunchKernel(stub, g, b, args, shmem, s));
}

static void fill_pattern(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = (unsigned char)(seed + i * 7);
}

static int valid_calls(void)
{
    static unsigned char h_src[BUF_BYTES], h_src2[BUF_BYTES], h_dst[BUF_BYTES];
    obs_hipDim3 grid = {4, 1, 1}, block = {64, 1, 1};
    obs_hipStream_t s = NULL;
    obs_hipEvent_t e0 = NULL, e1 = NULL;
    obs_hipModule_t module = NULL;
    obs_hipFunction_t fn = NULL;
    obs_hipGraph_t graph = NULL;
    obs_hipGraphExec_t exec = NULL;
    obs_hipStreamCaptureStatus capture = obs_hipStreamCaptureStatusNone;
    char *dev = NULL, *a, *b, *c, *d;
    void *async_buf = NULL;
    float *kernel_out = NULL;
    int n_elems = 64, device_count = 0;
    void *args[2];
    float elapsed = 0.f;
    size_t nodes = 0;

    fill_pattern(h_src, BUF_BYTES, 1);
    fill_pattern(h_src2, BUF_BYTES, 101);
    register_module();
    ok("hipGetDeviceCount", hipGetDeviceCount(&device_count));
    ok("hipStreamCreate", hipStreamCreate(&s));
    ok("hipEventCreate", hipEventCreate(&e0));
    ok("hipEventCreate", hipEventCreate(&e1));
    ok("hipMalloc", hipMalloc((void **)&dev, 4 * BUF_BYTES));
    if (dev == NULL || s == NULL || e0 == NULL || e1 == NULL)
        return 1;
    a = dev;
    b = dev + BUF_BYTES;
    c = dev + 2 * BUF_BYTES;
    d = dev + 3 * BUF_BYTES;
    kernel_out = (float *)d;
    args[0] = &kernel_out;
    args[1] = &n_elems;
    ok("hipModuleLoadData", hipModuleLoadData(&module, driver_code_object));
    ok("hipModuleGetFunction", hipModuleGetFunction(&fn, module, module_kernel_name));

    /* launches */
    triple_chevron(&driver_kernel_a, grid, block, s, args);
    ok("hipLaunchKernel_spt", hipLaunchKernel_spt(&driver_kernel_b, grid, block, args, 0, NULL));
    ok("hipModuleLaunchKernel", hipModuleLaunchKernel(fn, 4, 1, 1, 64, 1, 1, 0, s, args, NULL));
    ok("hipExtLaunchKernel", hipExtLaunchKernel(&driver_kernel_a, grid, block, args, 0, s, e0, e1, 0));
    ok("hipExtModuleLaunchKernel",
       hipExtModuleLaunchKernel(fn, 256, 1, 1, 64, 1, 1, 0, s, args, NULL, NULL, NULL, 0));
    ok("hipLaunchCooperativeKernel",
       hipLaunchCooperativeKernel(&driver_kernel_b, grid, block, args, 0, s));
    ok("hipLaunchCooperativeKernel_spt",
       hipLaunchCooperativeKernel_spt(&driver_kernel_b, grid, block, args, 0, NULL));
    ok("hipEventElapsedTime", hipEventElapsedTime(&elapsed, e0, e1));
    {
        const char *name = hipKernelNameRefByPtr(&driver_kernel_a, s);
        report("hipKernelNameRefByPtr", name != NULL && strcmp(name, kernel_a_name) == 0 ? 0 : 1, 0);
    }

    /* copies; round trips are checked after the stream is synchronized */
    ok("hipMemcpy", hipMemcpy(a, h_src, BUF_BYTES, obs_hipMemcpyHostToDevice));
    ok("hipMemcpy_spt", hipMemcpy_spt(h_dst, a, BUF_BYTES, obs_hipMemcpyDeviceToHost));
    check_bytes("hipMemcpy round trip", h_dst, h_src, BUF_BYTES);
    ok("hipMemcpyAsync", hipMemcpyAsync(b, a, BUF_BYTES, obs_hipMemcpyDeviceToDevice, s));
    ok("hipMemcpyAsync_spt", hipMemcpyAsync_spt(h_dst, b, BUF_BYTES, obs_hipMemcpyDefault, NULL));
    ok("hipMemcpyHtoD", hipMemcpyHtoD(c, h_src2, BUF_BYTES));
    ok("hipMemcpyDtoH", hipMemcpyDtoH(h_dst, c, BUF_BYTES));
    check_bytes("hipMemcpyHtoD/DtoH round trip", h_dst, h_src2, BUF_BYTES);
    ok("hipMemcpyDtoD", hipMemcpyDtoD(d, c, BUF_BYTES));
    ok("hipMemcpyHtoDAsync", hipMemcpyHtoDAsync(a, h_src2, BUF_BYTES, s));
    ok("hipMemcpyDtoHAsync", hipMemcpyDtoHAsync(h_dst, d, BUF_BYTES, s));
    ok("hipMemcpyDtoDAsync", hipMemcpyDtoDAsync(b, a, BUF_BYTES, s));
    ok("hipMemcpy2D", hipMemcpy2D(a, 64, h_src, 64, 32, 16, obs_hipMemcpyHostToDevice));
    ok("hipMemcpy2D_spt", hipMemcpy2D_spt(h_dst, 64, a, 64, 32, 16, obs_hipMemcpyDeviceToHost));
    ok("hipMemcpy2DAsync", hipMemcpy2DAsync(b, 64, a, 64, 32, 16, obs_hipMemcpyDeviceToDevice, s));
    {
        obs_hipMemcpy3DParms p;
        obs_hipExtent extent = {16, 4, 2};
        obs_hipPitchedPtr host = {h_src, 32, 16, 4}, host_out = {h_dst, 32, 16, 4};
        obs_hipPitchedPtr dev_a = {a, 32, 16, 4}, dev_b = {b, 32, 16, 4};

        memset(&p, 0, sizeof p);
        p.extent = extent;
        p.srcPtr = host;
        p.dstPtr = dev_a;
        p.kind = obs_hipMemcpyHostToDevice;
        ok("hipMemcpy3D", hipMemcpy3D(&p));
        p.srcPtr = dev_a;
        p.dstPtr = host_out;
        p.kind = obs_hipMemcpyDeviceToHost;
        ok("hipMemcpy3D_spt", hipMemcpy3D_spt(&p));
        p.srcPtr = dev_a;
        p.dstPtr = dev_b;
        p.kind = obs_hipMemcpyDeviceToDevice;
        ok("hipMemcpy3DAsync", hipMemcpy3DAsync(&p, s));
    }
    ok("hipMemcpyPeer", hipMemcpyPeer(b, 0, a, 0, BUF_BYTES));
    ok("hipMemcpyPeerAsync", hipMemcpyPeerAsync(c, 0, b, 0, BUF_BYTES, s));
    ok("hipMemcpyToSymbol",
       hipMemcpyToSymbol(driver_symbol, h_src, 64, 0, obs_hipMemcpyHostToDevice));
    ok("hipMemcpyToSymbol_spt",
       hipMemcpyToSymbol_spt(driver_symbol, h_src + 64, 64, 64, obs_hipMemcpyHostToDevice));
    ok("hipMemcpyFromSymbol",
       hipMemcpyFromSymbol(h_dst, driver_symbol, 128, 0, obs_hipMemcpyDeviceToHost));
    check_bytes("hipMemcpyToSymbol/FromSymbol round trip", h_dst, h_src, 128);
    ok("hipMemcpyFromSymbol_spt",
       hipMemcpyFromSymbol_spt(h_dst, driver_symbol, 64, 64, obs_hipMemcpyDeviceToHost));
    ok("hipMemcpyToSymbolAsync",
       hipMemcpyToSymbolAsync(driver_symbol, h_src2, 32, 128, obs_hipMemcpyHostToDevice, s));
    ok("hipMemcpyFromSymbolAsync",
       hipMemcpyFromSymbolAsync(h_dst, driver_symbol, 32, 128, obs_hipMemcpyDeviceToHost, s));

    /* memsets */
    ok("hipMemset", hipMemset(a, 0x11, BUF_BYTES));
    ok("hipMemset_spt", hipMemset_spt(a, 0x12, BUF_BYTES));
    ok("hipMemsetAsync", hipMemsetAsync(a, 0x13, BUF_BYTES, s));
    ok("hipMemsetD8", hipMemsetD8(a, 0x14, BUF_BYTES));
    ok("hipMemsetD8Async", hipMemsetD8Async(a, 0x15, BUF_BYTES, s));
    ok("hipMemsetD16", hipMemsetD16(a, 0x1617, BUF_BYTES / 2));
    ok("hipMemsetD16Async", hipMemsetD16Async(a, 0x1819, BUF_BYTES / 2, s));
    ok("hipMemsetD32", hipMemsetD32(a, 0x1a1b1c1d, BUF_BYTES / 4));
    ok("hipMemsetD32Async", hipMemsetD32Async(a, 0x1e1f2021, BUF_BYTES / 4, s));
    ok("hipMemset2D", hipMemset2D(a, 64, 0x22, 32, 16));
    ok("hipMemset2D_spt", hipMemset2D_spt(a, 64, 0x23, 32, 16));
    ok("hipMemset2DAsync", hipMemset2DAsync(a, 64, 0x24, 32, 16, s));
    {
        obs_hipPitchedPtr p = {b, 32, 16, 4};
        obs_hipExtent extent = {16, 4, 2};

        ok("hipMemset3D", hipMemset3D(p, 0x25, extent));
        ok("hipMemset3D_spt", hipMemset3D_spt(p, 0x26, extent));
        ok("hipMemset3DAsync", hipMemset3DAsync(p, 0x27, extent, s));
    }

    /* synchronisation */
    ok("hipStreamWaitEvent", hipStreamWaitEvent(s, e1, 0));
    ok("hipStreamWaitEvent_spt", hipStreamWaitEvent_spt(NULL, e1, 0));
    ok("hipEventSynchronize", hipEventSynchronize(e1));
    ok("hipStreamSynchronize", hipStreamSynchronize(s));
    ok("hipStreamSynchronize_spt", hipStreamSynchronize_spt(NULL));
    ok("hipDeviceSynchronize", hipDeviceSynchronize());
    ok("hipStreamQuery", hipStreamQuery(s));
    ok("hipEventQuery", hipEventQuery(e1));

    /* a graph: a launch and a copy captured, then replayed once */
    ok("hipStreamBeginCapture", hipStreamBeginCapture(s, obs_hipStreamCaptureModeGlobal));
    triple_chevron(&driver_kernel_a, grid, block, s, args);
    ok("hipMemcpyAsync", hipMemcpyAsync(c, h_src, BUF_BYTES, obs_hipMemcpyHostToDevice, s));
    ok("hipStreamIsCapturing", hipStreamIsCapturing(s, &capture));
    if (capture != obs_hipStreamCaptureStatusActive)
        ++calls_unexpected;
    ok("hipStreamEndCapture", hipStreamEndCapture(s, &graph));
    ok("hipGraphGetNodes", hipGraphGetNodes(graph, NULL, &nodes));
    if (nodes != 2) {
        ++calls_unexpected;
        fprintf(stderr, "hip_api_driver: captured %zu nodes, expected 2\n", nodes);
    }
    ok("hipGraphInstantiate", hipGraphInstantiate(&exec, graph, NULL, NULL, 0));
    ok("hipGraphLaunch", hipGraphLaunch(exec, s));
    ok("hipStreamSynchronize", hipStreamSynchronize(s));
    ok("hipMemcpyDtoH", hipMemcpyDtoH(h_dst, c, BUF_BYTES));
    check_bytes("graph replay of a captured copy", h_dst, h_src, BUF_BYTES);
    ok("hipGraphExecDestroy", hipGraphExecDestroy(exec));
    ok("hipGraphDestroy", hipGraphDestroy(graph));

    /* allocation */
    ok("hipMallocAsync", hipMallocAsync(&async_buf, 1024, s));
    ok("hipFreeAsync", hipFreeAsync(async_buf, s));
    ok("hipFree", hipFree(dev));

    /* errors and teardown */
    ok("hipGetLastError", hipGetLastError());
    ok("hipPeekAtLastError", hipPeekAtLastError());
    ok("hipModuleUnload", hipModuleUnload(module));
    ok("hipEventDestroy", hipEventDestroy(e0));
    ok("hipEventDestroy", hipEventDestroy(e1));
    ok("hipStreamDestroy", hipStreamDestroy(s));
    unregister_module();
    return 0;
}

/* Invalid calls and the code HIP returns for each. */
static void error_calls(void)
{
    obs_hipDim3 grid = {4, 1, 1}, block = {64, 1, 1}, zero = {0, 1, 1};
    obs_hipStream_t bogus_stream = (obs_hipStream_t)(uintptr_t)0xdead0;
    obs_hipEvent_t bogus_event = (obs_hipEvent_t)(uintptr_t)0xdead8;
    obs_hipModule_t module = NULL;
    obs_hipFunction_t fn = NULL;
    char *dev = NULL;
    char host[64];
    int n = 1;
    void *args[1] = {&n};

    register_module();
    ok("hipMalloc", hipMalloc((void **)&dev, 4096));
    ok("hipModuleLoadData", hipModuleLoadData(&module, driver_code_object));
    ok("hipModuleGetFunction", hipModuleGetFunction(&fn, module, module_kernel_name));

    report("hipLaunchKernel", hipLaunchKernel(&driver_kernel_a, zero, block, args, 0, NULL),
           obs_hipErrorInvalidConfiguration);
    report("hipGetLastError", hipGetLastError(), obs_hipErrorInvalidConfiguration);
    report("hipGetLastError", hipGetLastError(), obs_hipSuccess);
    report("hipLaunchKernel", hipLaunchKernel(&driver_kernel_a, grid, zero, args, 0, NULL),
           obs_hipErrorInvalidConfiguration);
    report("hipPeekAtLastError", hipPeekAtLastError(), obs_hipErrorInvalidConfiguration);
    report("hipLaunchKernel", hipLaunchKernel(&n, grid, block, args, 0, NULL),
           obs_hipErrorInvalidDeviceFunction);
    report("hipLaunchKernel", hipLaunchKernel(&driver_kernel_a, grid, block, args, 0, bogus_stream),
           obs_hipErrorInvalidHandle);
    report("hipLaunchKernel_spt",
           hipLaunchKernel_spt(&driver_kernel_a, grid, zero, args, 0, NULL),
           obs_hipErrorInvalidConfiguration);
    report("hipModuleLaunchKernel", hipModuleLaunchKernel(fn, 0, 1, 1, 64, 1, 1, 0, NULL, args, NULL),
           obs_hipErrorInvalidConfiguration);
    report("hipModuleLaunchKernel", hipModuleLaunchKernel(NULL, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL),
           obs_hipErrorInvalidImage);
    report("hipExtLaunchKernel",
           hipExtLaunchKernel(&driver_kernel_b, grid, zero, args, 0, NULL, NULL, NULL, 0),
           obs_hipErrorInvalidConfiguration);
    report("hipExtModuleLaunchKernel",
           hipExtModuleLaunchKernel(fn, 256, 1, 1, 0, 1, 1, 0, NULL, args, NULL, NULL, NULL, 0),
           obs_hipErrorInvalidConfiguration);
    report("hipLaunchCooperativeKernel",
           hipLaunchCooperativeKernel(&driver_kernel_b, grid, block, args, 0, bogus_stream),
           obs_hipErrorInvalidHandle);
    report("hipGraphLaunch", hipGraphLaunch(NULL, NULL), obs_hipErrorInvalidValue);
    report("hipMemcpy", hipMemcpy(NULL, host, sizeof host, obs_hipMemcpyHostToDevice),
           obs_hipErrorInvalidValue);
    report("hipMemcpy", hipMemcpy(dev, host, sizeof host, (obs_hipMemcpyKind)99),
           obs_hipErrorInvalidMemcpyDirection);
    report("hipMemcpyAsync",
           hipMemcpyAsync(dev, host, sizeof host, obs_hipMemcpyHostToDevice, bogus_stream),
           obs_hipErrorInvalidHandle);
    report("hipMemcpy2D", hipMemcpy2D(dev, 16, host, 64, 32, 2, obs_hipMemcpyHostToDevice),
           obs_hipErrorInvalidPitchValue);
    report("hipMemcpy3D", hipMemcpy3D(NULL), obs_hipErrorInvalidValue);
    report("hipMemcpyPeer", hipMemcpyPeer(dev, 1, dev + 64, 0, 64), obs_hipErrorInvalidDevice);
    report("hipMemcpyToSymbol", hipMemcpyToSymbol(host, host, 8, 0, obs_hipMemcpyHostToDevice),
           obs_hipErrorInvalidSymbol);
    report("hipMemcpyFromSymbol",
           hipMemcpyFromSymbol(host, driver_symbol, 8, sizeof driver_symbol,
                               obs_hipMemcpyDeviceToHost),
           obs_hipErrorInvalidValue);
    report("hipMemset", hipMemset(NULL, 0, 64), obs_hipErrorInvalidValue);
    report("hipMemset", hipMemset(host, 0, sizeof host), obs_hipErrorInvalidValue);
    report("hipMemsetAsync", hipMemsetAsync(dev, 0, 64, bogus_stream), obs_hipErrorInvalidHandle);
    report("hipMemsetD32", hipMemsetD32(dev, 0, 2048), obs_hipErrorInvalidValue); /* 8 KiB > 4 KiB */
    report("hipStreamSynchronize", hipStreamSynchronize(bogus_stream), obs_hipErrorInvalidHandle);
    report("hipStreamWaitEvent", hipStreamWaitEvent(NULL, bogus_event, 0), obs_hipErrorInvalidHandle);
    report("hipEventSynchronize", hipEventSynchronize(NULL), obs_hipErrorInvalidHandle);
    report("hipMalloc", hipMalloc(NULL, 64), obs_hipErrorInvalidValue);
    report("hipFree", hipFree(host), obs_hipErrorInvalidValue);
    report("hipMallocAsync", hipMallocAsync((void **)&dev, 64, bogus_stream),
           obs_hipErrorInvalidHandle);
    report("hipStreamBeginCapture", hipStreamBeginCapture(NULL, obs_hipStreamCaptureModeGlobal),
           obs_hipErrorStreamCaptureUnsupported);
    report("hipStreamDestroy", hipStreamDestroy(NULL), obs_hipErrorInvalidHandle);

    ok("hipModuleUnload", hipModuleUnload(module));
    ok("hipFree", hipFree(dev));
    unregister_module();
}

/* ---- --threads N --launches M ---- */

struct thread_job {
    unsigned long launches, failed;
};

static void *launch_thread(void *arg)
{
    struct thread_job *job = arg;
    obs_hipDim3 grid = {1, 1, 1}, block = {64, 1, 1};
    obs_hipStream_t s = NULL;
    int n = 64;
    void *args[1] = {&n};

    if (hipStreamCreate(&s) != obs_hipSuccess) {
        job->failed = job->launches;
        return NULL;
    }
    for (unsigned long i = 0; i < job->launches; ++i)
        if (hipLaunchKernel(&driver_kernel_a, grid, block, args, 0, s) != obs_hipSuccess)
            ++job->failed;
    if (hipStreamSynchronize(s) != obs_hipSuccess || hipStreamDestroy(s) != obs_hipSuccess)
        ++job->failed;
    return NULL;
}

static int threaded_launches(unsigned long threads, unsigned long launches)
{
    pthread_t *ids = calloc(threads, sizeof *ids);
    struct thread_job *jobs = calloc(threads, sizeof *jobs);
    unsigned long failed = 0, started = 0;

    if (ids == NULL || jobs == NULL) {
        fprintf(stderr, "hip_api_driver: out of memory\n");
        return 1;
    }
    driver_modules = __hipRegisterFatBinary(&driver_fatbin);
    __hipRegisterFunction(driver_modules, &driver_kernel_a, (char *)kernel_a_name, kernel_a_name,
                          (unsigned int)-1, NULL, NULL, NULL, NULL, NULL);
    for (unsigned long t = 0; t < threads; ++t) {
        jobs[t].launches = launches;
        if (pthread_create(&ids[t], NULL, launch_thread, &jobs[t]) != 0)
            break;
        ++started;
    }
    for (unsigned long t = 0; t < started; ++t) {
        pthread_join(ids[t], NULL);
        failed += jobs[t].failed;
    }
    failed += (threads - started) * launches;
    __hipUnregisterFatBinary(driver_modules);
    printf("threads %lu launches %lu total %lu failed %lu\n", threads, launches, threads * launches,
           failed);
    free(ids);
    free(jobs);
    return failed == 0 ? 0 : 1;
}

static int parse_count(const char *text, unsigned long *out)
{
    char *end = NULL;
    unsigned long v;

    if (text == NULL || text[0] < '0' || text[0] > '9')
        return 0;
    v = strtoul(text, &end, 10);
    if (*end != '\0' || v == 0 || v > 100000000ul)
        return 0;
    *out = v;
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: hip_api_driver [--errors] [--threads N --launches M]\n");
    return 2;
}

int main(int argc, char **argv)
{
    unsigned long threads = 0, launches = 0;
    int errors = 0;

    for (int i = 1; i < argc; ++i) {
        int parsed;
        if (strcmp(argv[i], "--errors") == 0)
            parsed = errors = 1;
        else if (strcmp(argv[i], "--threads") == 0)
            parsed = i + 1 < argc && parse_count(argv[++i], &threads);
        else if (strcmp(argv[i], "--launches") == 0)
            parsed = i + 1 < argc && parse_count(argv[++i], &launches);
        else
            parsed = 0;
        if (!parsed)
            return usage();
    }
    if ((threads != 0) != (launches != 0) || (threads != 0 && errors))
        return usage();
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    if (threads != 0)
        return threaded_launches(threads, launches);
    if (errors)
        error_calls();
    else if (valid_calls() != 0)
        ++calls_unexpected;
    printf("calls %lu unexpected %lu\n", calls_made, calls_unexpected);
    return calls_unexpected == 0 ? 0 : 1;
}
