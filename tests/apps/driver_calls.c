/* The driver call sequence of driver_static_like and driver_linked: every
 * entry point of OBS_CUDA_DRIVER_API at least once, with valid arguments,
 * the way a CUDA program using the driver would.
 *
 * Output: one line "api status" per call, in order; lines starting with
 * "= " are values for the tests (the virtual time between two events, the
 * node count of the captured graph), not calls.
 *
 * Calls, all returning CUDA_SUCCESS unless said otherwise (counts in
 * driver_calls.h):
 *   hooked (DRV_CALLS_HOOKED = 76): the 67 symbols of OBS_CUDA_DRIVER_API
 *     once each, plus cuLaunchKernel 3 more times (a CUkernel passed as a
 *     CUfunction, 2 launches captured into graphs), cuMemcpyAsync and
 *     cuMemsetD8Async once more (captured), cuMemcpyDtoH_v2 once more,
 *     cuGraphLaunch once more, cuStreamSynchronize 2 more times.
 *     By kind: 9 kernel launches (2 of them captured, so 7 run at once),
 *     3 graph launches of the 3-node graph, 30 copies, 25 memsets, 9 syncs.
 *   support (DRV_CALLS_SUPPORT = 69): initialisation, device, contexts,
 *     module and library, names, streams, events, allocations, 4 captures,
 *     instantiation, graph queries, error strings.
 *   legacy (DRV_CALLS_LEGACY = 9): each CUDA 2.x entry point once; the
 *     simulator returns 801 (CUDA_ERROR_NOT_SUPPORTED) for each.
 *   cudnnSimFakeEntry (DRV_CALLS_FAKE = 1), found with dlsym or linked.
 * Values printed: "= driver_version", "= elapsed_ns" (4 launches of 16384
 * threads on one stream between two events), "= graph_nodes" (3),
 * "= graph_elapsed_ns" (2 replays of the graph between two events).
 * driver_static_like adds its cuGetProcAddress calls before these. */
#include "driver_calls.h"

#include <stdio.h>
#include <string.h>

static unsigned long calls_made, calls_failed;

void drv_report(const char *api, int status, int wanted)
{
    printf("%s %d\n", api, status);
    calls_made++;
    if (status != wanted) {
        calls_failed++;
        fprintf(stderr, "driver app: %s returned %d, expected %d\n", api, status, wanted);
    }
}

int drv_finish_report(void)
{
    printf("calls %lu failed %lu\n", calls_made, calls_failed);
    fflush(stdout);
    return calls_failed ? 1 : 0;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        calls_failed++;
        fprintf(stderr, "driver app: check failed: %s\n", what);
    }
}

#define CALL(name, args) drv_report(#name, (int)api->name args, OBS_CUDA_SUCCESS)
#define CALL_EXPECT(wanted, name, args) drv_report(#name, (int)api->name args, (wanted))

#define N_BYTES 4096
#define PITCH 128
#define ROWS 8
#define WIDTH 64

static const char module_image[] = "OBSSIMMOD\n" DRV_PREFILL_NAME "\n" DRV_DECODE_NAME "\n";

struct state {
    obs_CUdevice dev;
    obs_CUcontext ctx;
    obs_CUmodule mod;
    obs_CUlibrary lib;
    obs_CUfunction prefill, decode, lib_decode;
    obs_CUkernel kernel;
    obs_CUstream s;
    obs_CUevent e0, e1;
    obs_CUdeviceptr d_a, d_b, d_c;
    unsigned char h_src[N_BYTES], h_dst[N_BYTES];
    void *params[1];
};

static void setup(const struct drv_api *api, struct state *st)
{
    int version = 0, count = 0;
    obs_CUcontext cur = NULL;
    const char *name = NULL;

    CALL(cuInit, (0));
    CALL(cuDriverGetVersion, (&version));
    printf("= driver_version %d\n", version);
    CALL(cuDeviceGetCount, (&count));
    check(count == 1, "one device");
    CALL(cuDeviceGet, (&st->dev, 0));
    CALL(cuDevicePrimaryCtxRetain, (&st->ctx, st->dev));
    CALL(cuCtxSetCurrent, (st->ctx));
    CALL(cuCtxGetCurrent, (&cur));
    check(cur == st->ctx, "current context is the primary one");
    CALL(cuModuleLoadData, (&st->mod, module_image));
    CALL(cuModuleGetFunction, (&st->prefill, st->mod, DRV_PREFILL_NAME));
    CALL(cuModuleGetFunction, (&st->decode, st->mod, DRV_DECODE_NAME));
    CALL(cuFuncGetName, (&name, st->prefill));
    check(name && strcmp(name, DRV_PREFILL_NAME) == 0, "cuFuncGetName");
    CALL(cuLibraryLoadData, (&st->lib, module_image, NULL, NULL, 0, NULL, NULL, 0));
    CALL(cuLibraryGetKernel, (&st->kernel, st->lib, DRV_DECODE_NAME));
    name = NULL;
    CALL(cuKernelGetName, (&name, st->kernel));
    check(name && strcmp(name, DRV_DECODE_NAME) == 0, "cuKernelGetName");
    CALL(cuKernelGetFunction, (&st->lib_decode, st->kernel));
    CALL(cuStreamCreate, (&st->s, 0));
    CALL(cuEventCreate, (&st->e0, 0));
    CALL(cuEventCreate, (&st->e1, 0));
    CALL(cuMemAlloc_v2, (&st->d_a, N_BYTES));
    CALL(cuMemAlloc_v2, (&st->d_b, N_BYTES));
    CALL(cuMemAlloc_v2, (&st->d_c, N_BYTES));
}

/* 64 blocks of 256 threads: 16384 threads per launch. */
#define GRID 64u
#define BLOCK 256u

static void launches(const struct drv_api *api, struct state *st)
{
    obs_CUlaunchAttribute attr;
    obs_CUlaunchConfig cfg;
    float ms = -1.f;

    memset(&attr, 0, sizeof attr);
    attr.id = OBS_CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attr.value.priority = 0;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = GRID, cfg.gridDimY = 1, cfg.gridDimZ = 1;
    cfg.blockDimX = BLOCK, cfg.blockDimY = 1, cfg.blockDimZ = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;

    CALL(cuEventRecord, (st->e0, st->s));
    /* Four launches on st->s between e0 and e1 (the test checks the time). */
    CALL(cuLaunchKernel, (st->prefill, GRID, 1, 1, BLOCK, 1, 1, 0, st->s, st->params, NULL));
    CALL(cuLaunchKernel, ((obs_CUfunction)st->kernel, GRID, 1, 1, BLOCK, 1, 1, 0, st->s, st->params, NULL));
    cfg.hStream = st->s;
    CALL(cuLaunchKernelEx, (&cfg, st->prefill, st->params, NULL));
    CALL(cuLaunchCooperativeKernel, (st->decode, GRID, 1, 1, BLOCK, 1, 1, 0, st->s, st->params));
    CALL(cuEventRecord, (st->e1, st->s));
    CALL(cuEventSynchronize, (st->e1));
    CALL(cuEventElapsedTime_v2, (&ms, st->e0, st->e1));
    printf("= elapsed_ns %.0f\n", (double)ms * 1e6);
    CALL(cuEventElapsedTime, (&ms, st->e0, st->e1));
    /* The per-thread default stream. */
    CALL(cuLaunchKernel_ptsz, (st->lib_decode, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, st->params, NULL));
    cfg.hStream = NULL;
    CALL(cuLaunchKernelEx_ptsz, (&cfg, st->decode, st->params, NULL));
    CALL(cuLaunchCooperativeKernel_ptsz, (st->prefill, GRID, 1, 1, BLOCK, 1, 1, 0, NULL, st->params));
    CALL(cuEventRecord_ptsz, (st->e1, NULL));
}

static void copies(const struct drv_api *api, struct state *st)
{
    obs_CUDA_MEMCPY2D c2;
    obs_CUDA_MEMCPY3D c3;
    size_t i;

    for (i = 0; i < N_BYTES; i++)
        st->h_src[i] = (unsigned char)(i * 7 + 3);
    CALL(cuMemcpyHtoD_v2, (st->d_a, st->h_src, N_BYTES));
    CALL(cuMemcpyDtoD_v2, (st->d_b, st->d_a, N_BYTES));
    memset(st->h_dst, 0, N_BYTES);
    CALL(cuMemcpyDtoH_v2, (st->h_dst, st->d_b, N_BYTES));
    check(memcmp(st->h_src, st->h_dst, N_BYTES) == 0, "HtoD, DtoD, DtoH round trip");
    CALL(cuMemcpyHtoD_v2_ptds, (st->d_a, st->h_src, N_BYTES));
    CALL(cuMemcpyDtoH_v2_ptds, (st->h_dst, st->d_a, N_BYTES));
    CALL(cuMemcpyDtoD_v2_ptds, (st->d_c, st->d_a, N_BYTES));
    CALL(cuMemcpyHtoDAsync_v2, (st->d_a, st->h_src, N_BYTES, st->s));
    CALL(cuMemcpyHtoDAsync_v2_ptsz, (st->d_a, st->h_src, N_BYTES, NULL));
    CALL(cuMemcpyDtoHAsync_v2, (st->h_dst, st->d_a, N_BYTES, st->s));
    CALL(cuMemcpyDtoHAsync_v2_ptsz, (st->h_dst, st->d_a, N_BYTES, NULL));
    CALL(cuMemcpyDtoDAsync_v2, (st->d_b, st->d_a, N_BYTES, st->s));
    CALL(cuMemcpyDtoDAsync_v2_ptsz, (st->d_b, st->d_a, N_BYTES, NULL));
    CALL(cuMemcpy, (st->d_b, st->d_a, N_BYTES));
    CALL(cuMemcpy_ptds, (st->d_b, st->d_a, N_BYTES));
    CALL(cuMemcpyAsync, (st->d_c, st->d_b, N_BYTES, st->s));
    CALL(cuMemcpyAsync_ptsz, (st->d_c, st->d_b, N_BYTES, NULL));
    CALL(cuMemcpyPeer, (st->d_b, st->ctx, st->d_a, st->ctx, N_BYTES));
    CALL(cuMemcpyPeer_ptds, (st->d_b, st->ctx, st->d_a, st->ctx, N_BYTES));
    CALL(cuMemcpyPeerAsync, (st->d_b, st->ctx, st->d_a, st->ctx, N_BYTES, st->s));
    CALL(cuMemcpyPeerAsync_ptsz, (st->d_b, st->ctx, st->d_a, st->ctx, N_BYTES, NULL));

    /* 2D: WIDTH bytes x ROWS rows from a host buffer of pitch PITCH to the device. */
    memset(&c2, 0, sizeof c2);
    c2.srcMemoryType = OBS_CU_MEMORYTYPE_HOST;
    c2.srcHost = st->h_src;
    c2.srcPitch = PITCH;
    c2.dstMemoryType = OBS_CU_MEMORYTYPE_DEVICE;
    c2.dstDevice = st->d_c;
    c2.dstPitch = PITCH;
    c2.WidthInBytes = WIDTH;
    c2.Height = ROWS;
    CALL(cuMemcpy2D_v2, (&c2));
    CALL(cuMemcpy2D_v2_ptds, (&c2));
    CALL(cuMemcpy2DAsync_v2, (&c2, st->s));
    CALL(cuMemcpy2DAsync_v2_ptsz, (&c2, NULL));

    /* 3D: WIDTH x ROWS/2 x 2 slices, device to device. */
    memset(&c3, 0, sizeof c3);
    c3.srcMemoryType = OBS_CU_MEMORYTYPE_DEVICE;
    c3.srcDevice = st->d_a;
    c3.srcPitch = PITCH;
    c3.srcHeight = ROWS / 2;
    c3.dstMemoryType = OBS_CU_MEMORYTYPE_DEVICE;
    c3.dstDevice = st->d_b;
    c3.dstPitch = PITCH;
    c3.dstHeight = ROWS / 2;
    c3.WidthInBytes = WIDTH;
    c3.Height = ROWS / 2;
    c3.Depth = 2;
    CALL(cuMemcpy3D_v2, (&c3));
    CALL(cuMemcpy3D_v2_ptds, (&c3));
    CALL(cuMemcpy3DAsync_v2, (&c3, st->s));
    CALL(cuMemcpy3DAsync_v2_ptsz, (&c3, NULL));
}

static void memsets(const struct drv_api *api, struct state *st)
{
    unsigned int word = 0;

    CALL(cuMemsetD8_v2, (st->d_c, 0x11, N_BYTES));
    CALL(cuMemsetD8_v2_ptds, (st->d_c, 0x12, N_BYTES));
    CALL(cuMemsetD16_v2, (st->d_c, 0x1313, N_BYTES / 2));
    CALL(cuMemsetD16_v2_ptds, (st->d_c, 0x1414, N_BYTES / 2));
    CALL(cuMemsetD32_v2, (st->d_c, 0x15151515u, N_BYTES / 4));
    CALL(cuMemsetD32_v2_ptds, (st->d_c, 0x16161616u, N_BYTES / 4));
    CALL(cuMemsetD8Async, (st->d_c, 0x17, N_BYTES, st->s));
    CALL(cuMemsetD8Async_ptsz, (st->d_c, 0x18, N_BYTES, NULL));
    CALL(cuMemsetD16Async, (st->d_c, 0x1919, N_BYTES / 2, st->s));
    CALL(cuMemsetD16Async_ptsz, (st->d_c, 0x1a1a, N_BYTES / 2, NULL));
    CALL(cuMemsetD32Async, (st->d_c, 0x1b1b1b1bu, N_BYTES / 4, st->s));
    CALL(cuMemsetD32Async_ptsz, (st->d_c, 0x1c1c1c1cu, N_BYTES / 4, NULL));
    CALL(cuMemsetD2D8_v2, (st->d_c, PITCH, 0x21, WIDTH, ROWS));
    CALL(cuMemsetD2D8_v2_ptds, (st->d_c, PITCH, 0x22, WIDTH, ROWS));
    CALL(cuMemsetD2D16_v2, (st->d_c, PITCH, 0x2323, WIDTH / 2, ROWS));
    CALL(cuMemsetD2D16_v2_ptds, (st->d_c, PITCH, 0x2424, WIDTH / 2, ROWS));
    CALL(cuMemsetD2D32_v2, (st->d_c, PITCH, 0x25252525u, WIDTH / 4, ROWS));
    CALL(cuMemsetD2D32_v2_ptds, (st->d_c, PITCH, 0x26262626u, WIDTH / 4, ROWS));
    CALL(cuMemsetD2D8Async, (st->d_c, PITCH, 0x27, WIDTH, ROWS, st->s));
    CALL(cuMemsetD2D8Async_ptsz, (st->d_c, PITCH, 0x28, WIDTH, ROWS, NULL));
    CALL(cuMemsetD2D16Async, (st->d_c, PITCH, 0x2929, WIDTH / 2, ROWS, st->s));
    CALL(cuMemsetD2D16Async_ptsz, (st->d_c, PITCH, 0x2a2a, WIDTH / 2, ROWS, NULL));
    CALL(cuMemsetD2D32Async, (st->d_c, PITCH, 0x2b2b2b2bu, WIDTH / 4, ROWS, st->s));
    CALL(cuMemsetD2D32Async_ptsz, (st->d_c, PITCH, 0x2c2c2c2cu, WIDTH / 4, ROWS, NULL));
    /* The last memset wrote 0x2c2c2c2c into row 0: read one word back. */
    CALL(cuMemcpyDtoH_v2, (&word, st->d_c, sizeof word));
    check(word == 0x2c2c2c2cu, "cuMemsetD2D32Async_ptsz wrote its value");
}

static void syncs(const struct drv_api *api, struct state *st)
{
    CALL(cuCtxSynchronize, ());
    CALL(cuCtxSynchronize_v2, (st->ctx));
    CALL(cuStreamSynchronize, (st->s));
    CALL(cuStreamSynchronize_ptsz, (NULL));
    CALL(cuStreamWaitEvent, (st->s, st->e1, 0));
    CALL(cuStreamWaitEvent_ptsz, (NULL, st->e0, 0));
    CALL(cuEventQuery, (st->e1));
}

/* Four captures, one per form of cuStreamBeginCapture: the current one
 * (_v2) with a launch, a copy and a memset, replayed 3 times; the CUDA 10.0
 * one-argument form with one launch of a CUkernel (passed as a CUfunction:
 * its node holds the CUkernel); the two per-thread forms, empty. */
static void graphs(const struct drv_api *api, struct state *st)
{
    obs_CUgraph g1 = NULL, g2 = NULL, g3 = NULL, g4 = NULL;
    obs_CUgraphExec x1 = NULL, x2 = NULL, x3 = NULL;
    obs_CUstreamCaptureStatus status = -1;
    size_t nodes = 0;

    CALL(cuStreamBeginCapture_v2, (st->s, OBS_CU_STREAM_CAPTURE_MODE_GLOBAL));
    CALL(cuLaunchKernel, (st->decode, GRID, 1, 1, BLOCK, 1, 1, 0, st->s, st->params, NULL));
    CALL(cuMemcpyAsync, (st->d_b, st->d_a, N_BYTES, st->s));
    CALL(cuMemsetD8Async, (st->d_c, 0x31, N_BYTES, st->s));
    CALL(cuStreamIsCapturing, (st->s, &status));
    check(status == OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE, "capture active");
    CALL(cuStreamEndCapture, (st->s, &g1));
    CALL(cuGraphGetNodes, (g1, NULL, &nodes));
    printf("= graph_nodes %zu\n", nodes);
    CALL(cuGraphInstantiateWithFlags, (&x1, g1, 0));
    CALL(cuEventRecord, (st->e0, st->s));
    CALL(cuGraphLaunch, (x1, st->s));
    CALL(cuGraphLaunch, (x1, st->s));
    CALL(cuEventRecord, (st->e1, st->s));
    CALL(cuStreamSynchronize, (st->s));
    {
        float ms = -1.f;
        CALL(cuEventElapsedTime_v2, (&ms, st->e0, st->e1));
        printf("= graph_elapsed_ns %.0f\n", (double)ms * 1e6);
    }
    CALL(cuGraphLaunch_ptsz, (x1, NULL));

    CALL(cuStreamBeginCapture, (st->s));
    CALL(cuLaunchKernel, ((obs_CUfunction)st->kernel, GRID, 1, 1, BLOCK, 1, 1, 0, st->s, st->params, NULL));
    CALL(cuStreamIsCapturing_ptsz, (st->s, &status));
    CALL(cuStreamEndCapture_ptsz, (st->s, &g2));
    CALL(cuGraphInstantiate, (&x2, g2, NULL, NULL, 0));

    CALL(cuStreamBeginCapture_ptsz, (st->s));
    CALL(cuStreamEndCapture, (st->s, &g3));
    CALL(cuGraphInstantiate_v2, (&x3, g3, NULL, NULL, 0));
    CALL(cuStreamBeginCapture_v2_ptsz, (st->s, OBS_CU_STREAM_CAPTURE_MODE_RELAXED));
    CALL(cuStreamEndCapture, (st->s, &g4));
    CALL(cuStreamSynchronize, (st->s));

    CALL(cuGraphExecDestroy, (x1));
    CALL(cuGraphExecDestroy, (x2));
    CALL(cuGraphExecDestroy, (x3));
    CALL(cuGraphDestroy, (g1));
    CALL(cuGraphDestroy, (g2));
    CALL(cuGraphDestroy, (g3));
    CALL(cuGraphDestroy, (g4));
}

static void teardown(const struct drv_api *api, struct state *st)
{
    obs_CUcontext c2 = NULL, c3 = NULL, c4 = NULL;
    const char *text = NULL;

    CALL(cuEventDestroy_v2, (st->e0));
    CALL(cuEventDestroy_v2, (st->e1));
    CALL(cuStreamDestroy_v2, (st->s));
    CALL(cuMemFree_v2, (st->d_a));
    CALL(cuMemFree_v2, (st->d_b));
    CALL(cuMemFree_v2, (st->d_c));
    CALL(cuModuleUnload, (st->mod));
    CALL(cuLibraryUnload, (st->lib));
    CALL(cuGetErrorName, (OBS_CUDA_ERROR_INVALID_HANDLE, &text));
    check(text && strcmp(text, "CUDA_ERROR_INVALID_HANDLE") == 0, "cuGetErrorName(400)");
    CALL(cuGetErrorString, (OBS_CUDA_ERROR_NOT_FOUND, &text));
    CALL(cuCtxCreate_v2, (&c2, 0, st->dev));
    CALL(cuCtxCreate_v3, (&c3, NULL, 0, 0, st->dev));
    CALL(cuCtxCreate_v4, (&c4, NULL, 0, st->dev));
    CALL(cuCtxDestroy_v2, (c2));
    CALL(cuCtxDestroy_v2, (c3));
    CALL(cuCtxDestroy_v2, (c4));
    CALL(cuCtxSetCurrent, (st->ctx));
    CALL(cuDevicePrimaryCtxRelease_v2, (st->dev));
}

static void legacy(const struct drv_api *api, struct state *st)
{
    obs_CUdeviceptr_v1 p = 0;
    const int unsupported = OBS_CUDA_ERROR_NOT_SUPPORTED;

    CALL_EXPECT(unsupported, cuMemAlloc, (&p, N_BYTES));
    CALL_EXPECT(unsupported, cuMemcpyHtoD, (p, st->h_src, N_BYTES));
    CALL_EXPECT(unsupported, cuMemcpyDtoH, (st->h_dst, p, N_BYTES));
    CALL_EXPECT(unsupported, cuMemcpyDtoD, (p, p, N_BYTES));
    CALL_EXPECT(unsupported, cuMemcpyHtoDAsync, (p, st->h_src, N_BYTES, NULL));
    CALL_EXPECT(unsupported, cuMemcpyDtoHAsync, (st->h_dst, p, N_BYTES, NULL));
    CALL_EXPECT(unsupported, cuMemcpyDtoDAsync, (p, p, N_BYTES, NULL));
    CALL_EXPECT(unsupported, cuMemsetD8, (p, 0, N_BYTES));
    CALL_EXPECT(unsupported, cuMemFree, (p));
}

void drv_run_calls(const struct drv_api *api)
{
    static struct state st;

    setup(api, &st);
    launches(api, &st);
    copies(api, &st);
    memsets(api, &st);
    syncs(api, &st);
    graphs(api, &st);
    legacy(api, &st);
    teardown(api, &st);
    if (api->cudnnSimFakeEntry)
        drv_report("cudnnSimFakeEntry", api->cudnnSimFakeEntry(), 0);
    else
        drv_report("cudnnSimFakeEntry", -1, 0);
}
