/* cuda_api_driver: calls every CUDA runtime entry point that obsshim hooks
 * (OBS_CUDA_RUNTIME_API in shim/abi/cuda_abi.h), with valid arguments, the
 * way an nvcc-built program would: a fake fat binary and two fake kernels are
 * registered from a constructor before main, as nvcc's generated code does.
 * Written in C against shim/abi/cuda_abi.h only, so it needs no toolkit; it
 * links against libcudart.so.13 (the simulator in sim/, or in principle
 * the real one).
 *
 * Output: one line "api status" per call made (registration included), then
 * "calls N failed F", where F counts calls that did not return what the
 * driver expected. Exit status 0 when F is 0, 1 otherwise, 2 on bad usage.
 *
 * Modes and their exact call counts (the shim's tests compare its records
 * with these and with the simulator's ground-truth log):
 *
 *   (no option)   every hooked API once, except cudaLaunchKernel,
 *                 cudaMemcpyAsync, cudaMalloc and cudaFree: twice each (the
 *                 second launch and copy are captured into the graph).
 *                 Hooked calls: DRIVER_HOOKED_CALLS = 60 (56 APIs).
 *                 Support calls (registration, streams, events, capture,
 *                 errors, devices): DRIVER_SUPPORT_CALLS = 38.
 *                 All 98 return cudaSuccess.
 *   --errors      the same, then DRIVER_ERROR_CALLS = 25 more calls with
 *                 invalid arguments (22 hooked + 3 support calls), each
 *                 expected to fail with the CUDA error code listed in
 *                 run_error_cases below, or to report the sticky last error.
 *   --threads N --launches M
 *                 registration (5 calls), then N threads each doing
 *                 cudaStreamCreate, M x cudaLaunchKernel on its stream,
 *                 cudaStreamSynchronize, cudaStreamDestroy (streams are
 *                 destroyed only once every thread has synchronised, so
 *                 each thread's stream has its own handle); then
 *                 __cudaUnregisterFatBinary. Hooked calls: N * (M + 1).
 *                 Per-thread calls are not printed one by one; each thread
 *                 prints "thread I launches M failed F".
 *
 * Registration is the same in every mode: __cudaRegisterFatBinary,
 * __cudaRegisterFunction x 2 (_Z14prefill_kernelPfPKfii and
 * _Z13decode_kernelPfPKfii), __cudaRegisterVar (dev_scale),
 * __cudaRegisterFatBinaryEnd; __cudaUnregisterFatBinary is called at the
 * end of main (not from atexit) so that it is printed and counted too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_abi.h"

#define DRIVER_HOOKED_CALLS 60
#define DRIVER_SUPPORT_CALLS 38
#define DRIVER_ERROR_CALLS 25

#define PREFILL_NAME "_Z14prefill_kernelPfPKfii"
#define DECODE_NAME "_Z13decode_kernelPfPKfii"

/* ---- bookkeeping ------------------------------------------------------------ */

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long calls_made, calls_failed;

/* Print "api status" and count a call that should have returned wanted. */
static void report(const char *api, int status, int wanted)
{
    pthread_mutex_lock(&report_lock);
    printf("%s %d\n", api, status);
    calls_made++;
    if (status != wanted) {
        calls_failed++;
        fprintf(stderr, "cuda_api_driver: %s returned %d, expected %d\n", api, status, wanted);
    }
    pthread_mutex_unlock(&report_lock);
}

#define CALL(api, args) report(#api, (int)api args, obs_cudaSuccess)
#define CALL_EXPECT(wanted, api, args) report(#api, (int)api args, (wanted))

/* ---- what nvcc would have generated ------------------------------------------ */

/* Host stubs: their addresses identify the kernels. Different bodies keep
 * the compiler from folding them into one function. */
static volatile int stub_marker;
static void prefill_kernel_stub(void)
{
    stub_marker = 1;
}
static void decode_kernel_stub(void)
{
    stub_marker = 2;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};
static void **fatbin_handle;

/* The host shadow of a __device__ float dev_scale[4]. */
static float dev_scale[4] = {1.f, 2.f, 3.f, 4.f};

__attribute__((constructor)) static void register_module(void)
{
    fatbin_handle = __cudaRegisterFatBinary(&fake_wrapper);
    report("__cudaRegisterFatBinary", fatbin_handle ? 0 : -1, 0);
    __cudaRegisterFunction(fatbin_handle, (const char *)prefill_kernel_stub, (char *)PREFILL_NAME,
                           PREFILL_NAME, -1, NULL, NULL, NULL, NULL, NULL);
    report("__cudaRegisterFunction", 0, 0);
    __cudaRegisterFunction(fatbin_handle, (const char *)decode_kernel_stub, (char *)DECODE_NAME,
                           DECODE_NAME, -1, NULL, NULL, NULL, NULL, NULL);
    report("__cudaRegisterFunction", 0, 0);
    __cudaRegisterVar(fatbin_handle, (char *)dev_scale, (char *)"dev_scale", "dev_scale", 0,
                      sizeof dev_scale, 0, 0);
    report("__cudaRegisterVar", 0, 0);
    __cudaRegisterFatBinaryEnd(fatbin_handle);
    report("__cudaRegisterFatBinaryEnd", 0, 0);
}

static void unregister_module(void)
{
    __cudaUnregisterFatBinary(fatbin_handle);
    report("__cudaUnregisterFatBinary", 0, 0);
}

/* ---- the valid run ------------------------------------------------------------ */

#define N_BYTES 4096
#define PITCH 64

struct driver_state {
    obs_cudaStream_t s, s_nb;
    obs_cudaEvent_t e0, e1;
    char *d_a, *d_b, *d_c, *d_d;
    obs_cudaKernel_t prefill_handle;
    obs_cudaGraph_t graph;
    obs_cudaGraphExec_t exec;
    char h_src[N_BYTES], h_dst[N_BYTES];
    float h_scale[4];
    float *k_out;
    const float *k_in;
    int k_n, k_rounds;
    void *k_args[4];
};

static const obs_dim3 grid4 = {4, 1, 1}, block64 = {64, 1, 1};

static void run_setup(struct driver_state *st)
{
    int count = 0, device = -1;
    CALL(cudaGetDeviceCount, (&count));
    CALL(cudaSetDevice, (0));
    CALL(cudaGetDevice, (&device));
    CALL(cudaStreamCreate, (&st->s));
    CALL(cudaStreamCreateWithFlags, (&st->s_nb, OBS_CUDA_STREAM_NON_BLOCKING));
    CALL(cudaEventCreate, (&st->e0));
    CALL(cudaEventCreateWithFlags, (&st->e1, 0));
    CALL(cudaMalloc, ((void **)&st->d_a, N_BYTES));
    CALL(cudaMalloc, ((void **)&st->d_b, N_BYTES));
    CALL(cudaMallocAsync, ((void **)&st->d_c, N_BYTES, st->s));
    CALL(cudaMallocAsync_ptsz, ((void **)&st->d_d, N_BYTES, NULL));
    for (int i = 0; i < N_BYTES; i++)
        st->h_src[i] = (char)(i * 7 + 3);
    st->k_out = (float *)st->d_a;
    st->k_in = (const float *)st->d_b;
    st->k_n = N_BYTES / (int)sizeof(float);
    st->k_rounds = 2;
    st->k_args[0] = &st->k_out;
    st->k_args[1] = &st->k_in;
    st->k_args[2] = &st->k_n;
    st->k_args[3] = &st->k_rounds;
}

static void run_launches(struct driver_state *st)
{
    obs_dim3 grid, block;
    size_t shmem;
    obs_cudaStream_t stream;
    obs_cudaLaunchAttribute attr;
    obs_cudaLaunchConfig_t config;

    CALL(cudaLaunchKernel, ((const void *)prefill_kernel_stub, grid4, block64, st->k_args, 0, st->s));
    CALL(cudaLaunchKernel_ptsz, ((const void *)decode_kernel_stub, grid4, block64, st->k_args, 0, NULL));

    /* CUDA 13's <<<>>>: __cudaGetKernel once, then push/pop/launch per call. */
    CALL(__cudaGetKernel, (&st->prefill_handle, (const void *)prefill_kernel_stub));
    CALL(__cudaPushCallConfiguration, (grid4, block64, 0, st->s));
    CALL(__cudaPopCallConfiguration, (&grid, &block, &shmem, &stream));
    CALL(__cudaLaunchKernel, (st->prefill_handle, grid, block, st->k_args, shmem, stream));
    CALL(__cudaPushCallConfiguration, (grid4, block64, 0, NULL));
    CALL(__cudaPopCallConfiguration, (&grid, &block, &shmem, &stream));
    CALL(__cudaLaunchKernel_ptsz, (st->prefill_handle, grid, block, st->k_args, shmem, stream));

    memset(&attr, 0, sizeof attr);
    attr.id = 2; /* cudaLaunchAttributeCooperative, value 0 */
    memset(&config, 0, sizeof config);
    config.gridDim = grid4;
    config.blockDim = block64;
    config.stream = st->s;
    config.attrs = &attr;
    config.numAttrs = 1;
    CALL(cudaLaunchKernelExC, (&config, (const void *)decode_kernel_stub, st->k_args));
    config.stream = OBS_CUDA_STREAM_PER_THREAD;
    config.numAttrs = 0;
    config.attrs = NULL;
    CALL(cudaLaunchKernelExC_ptsz, (&config, (const void *)decode_kernel_stub, st->k_args));

    CALL(cudaLaunchCooperativeKernel, ((const void *)prefill_kernel_stub, grid4, block64, st->k_args, 0, st->s));
    CALL(cudaLaunchCooperativeKernel_ptsz,
         ((const void *)prefill_kernel_stub, grid4, block64, st->k_args, 0, NULL));
}

static struct obs_cudaMemcpy3DParms parms_3d(char *dst, char *src, obs_cudaMemcpyKind kind)
{
    struct obs_cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = (struct obs_cudaPitchedPtr){src, PITCH, PITCH, 4};
    p.dstPtr = (struct obs_cudaPitchedPtr){dst, PITCH, PITCH, 4};
    p.extent = (struct obs_cudaExtent){16, 4, 4}; /* 16 bytes x 4 rows x 4 slices */
    p.kind = kind;
    return p;
}

static void run_copies(struct driver_state *st)
{
    struct obs_cudaMemcpy3DParms p;
    const obs_cudaMemcpyKind h2d = obs_cudaMemcpyHostToDevice, d2h = obs_cudaMemcpyDeviceToHost;
    const obs_cudaMemcpyKind d2d = obs_cudaMemcpyDeviceToDevice;

    CALL(cudaMemcpy, (st->d_a, st->h_src, N_BYTES, h2d));
    CALL(cudaMemcpy_ptds, (st->d_b, st->d_a, N_BYTES, d2d));
    CALL(cudaMemcpyAsync, (st->h_dst, st->d_b, N_BYTES, d2h, st->s));
    CALL(cudaMemcpyAsync_ptsz, (st->d_c, st->d_a, N_BYTES, obs_cudaMemcpyDefault, NULL));

    CALL(cudaMemcpy2D, (st->d_b, PITCH, st->h_src, PITCH, 32, 16, h2d));
    CALL(cudaMemcpy2D_ptds, (st->d_c, PITCH, st->d_b, PITCH, 32, 16, d2d));
    CALL(cudaMemcpy2DAsync, (st->h_dst, PITCH, st->d_c, PITCH, 32, 16, d2h, st->s));
    CALL(cudaMemcpy2DAsync_ptsz, (st->d_d, PITCH, st->d_c, PITCH, 32, 16, d2d, st->s));

    p = parms_3d(st->d_b, st->d_a, d2d);
    CALL(cudaMemcpy3D, (&p));
    p = parms_3d(st->d_c, st->d_b, d2d);
    CALL(cudaMemcpy3D_ptds, (&p));
    p = parms_3d(st->d_d, st->d_c, d2d);
    CALL(cudaMemcpy3DAsync, (&p, st->s));
    p = parms_3d(st->d_a, st->d_d, d2d);
    CALL(cudaMemcpy3DAsync_ptsz, (&p, NULL));

    CALL(cudaMemcpyPeer, (st->d_b, 0, st->d_a, 0, N_BYTES));
    CALL(cudaMemcpyPeerAsync, (st->d_c, 0, st->d_b, 0, N_BYTES, st->s));

    st->h_scale[0] = 0.5f;
    CALL(cudaMemcpyToSymbol, (dev_scale, st->h_scale, sizeof st->h_scale, 0, h2d));
    CALL(cudaMemcpyToSymbol_ptds, (dev_scale, st->h_scale, sizeof(float), sizeof(float), h2d));
    CALL(cudaMemcpyFromSymbol, (st->h_scale, dev_scale, sizeof st->h_scale, 0, d2h));
    CALL(cudaMemcpyFromSymbol_ptds, (st->h_scale, dev_scale, sizeof(float), 0, d2h));
    CALL(cudaMemcpyToSymbolAsync, (dev_scale, st->d_a, sizeof(float), 0, d2d, st->s));
    CALL(cudaMemcpyToSymbolAsync_ptsz, (dev_scale, st->h_scale, sizeof(float), 0, h2d, NULL));
    CALL(cudaMemcpyFromSymbolAsync, (st->d_b, dev_scale, sizeof(float), 0, d2d, st->s));
    CALL(cudaMemcpyFromSymbolAsync_ptsz, (st->h_scale, dev_scale, sizeof(float), 0, d2h, NULL));
}

static void run_memsets(struct driver_state *st)
{
    struct obs_cudaPitchedPtr pp = {st->d_a, PITCH, PITCH, 4};
    struct obs_cudaExtent ext = {16, 4, 4};

    CALL(cudaMemset, (st->d_a, 1, N_BYTES));
    CALL(cudaMemset_ptds, (st->d_b, 2, N_BYTES));
    CALL(cudaMemsetAsync, (st->d_c, 3, N_BYTES, st->s));
    CALL(cudaMemsetAsync_ptsz, (st->d_d, 4, N_BYTES, NULL));
    CALL(cudaMemset2D, (st->d_a, PITCH, 5, 32, 16));
    CALL(cudaMemset2D_ptds, (st->d_b, PITCH, 6, 32, 16));
    CALL(cudaMemset2DAsync, (st->d_c, PITCH, 7, 32, 16, st->s));
    CALL(cudaMemset2DAsync_ptsz, (st->d_d, PITCH, 8, 32, 16, NULL));
    CALL(cudaMemset3D, (pp, 9, ext));
    pp.ptr = st->d_b;
    CALL(cudaMemset3D_ptds, (pp, 10, ext));
    pp.ptr = st->d_c;
    CALL(cudaMemset3DAsync, (pp, 11, ext, st->s));
    pp.ptr = st->d_d;
    CALL(cudaMemset3DAsync_ptsz, (pp, 12, ext, NULL));
}

static void run_graphs(struct driver_state *st)
{
    obs_cudaStreamCaptureStatus status = -1;
    size_t nodes = 0;

    CALL(cudaStreamBeginCapture, (st->s, obs_cudaStreamCaptureModeGlobal));
    CALL(cudaStreamIsCapturing, (st->s, &status));
    /* Captured, not executed: become the graph's two nodes. */
    CALL(cudaLaunchKernel, ((const void *)decode_kernel_stub, grid4, block64, st->k_args, 0, st->s));
    CALL(cudaMemcpyAsync, (st->d_b, st->d_a, N_BYTES, obs_cudaMemcpyDeviceToDevice, st->s));
    CALL(cudaStreamEndCapture, (st->s, &st->graph));
    CALL(cudaGraphGetNodes, (st->graph, NULL, &nodes));
    CALL(cudaGraphInstantiate, (&st->exec, st->graph, 0));
    CALL(cudaGraphLaunch, (st->exec, st->s));
    CALL(cudaGraphLaunch_ptsz, (st->exec, NULL));
}

static void run_syncs(struct driver_state *st)
{
    float ms = -1.f;
    CALL(cudaEventRecord, (st->e0, st->s));
    CALL(cudaStreamWaitEvent, (st->s_nb, st->e0, 0));
    CALL(cudaStreamWaitEvent_ptsz, (NULL, st->e0, 0));
    CALL(cudaEventRecord_ptsz, (st->e1, st->s_nb));
    CALL(cudaEventSynchronize, (st->e1));
    CALL(cudaEventQuery, (st->e1));
    CALL(cudaEventElapsedTime, (&ms, st->e0, st->e1));
    CALL(cudaStreamSynchronize, (st->s));
    CALL(cudaStreamSynchronize_ptsz, (NULL));
    CALL(cudaStreamQuery, (st->s_nb));
    CALL(cudaDeviceSynchronize, ());
}

static void run_teardown(struct driver_state *st)
{
    CALL(cudaGraphExecDestroy, (st->exec));
    CALL(cudaGraphDestroy, (st->graph));
    CALL(cudaFreeAsync, (st->d_c, st->s));
    CALL(cudaFreeAsync_ptsz, (st->d_d, NULL));
    CALL(cudaFree, (st->d_a));
    CALL(cudaFree, (st->d_b));
    CALL(cudaEventDestroy, (st->e0));
    CALL(cudaEventDestroy, (st->e1));
    CALL(cudaStreamDestroy, (st->s));
    CALL(cudaStreamDestroy, (st->s_nb));
    CALL(cudaGetLastError, ());
    CALL(cudaPeekAtLastError, ());
    report("cudaGetErrorName", strcmp(cudaGetErrorName(obs_cudaSuccess), "cudaSuccess") == 0 ? 0 : 1, 0);
    report("cudaGetErrorString", cudaGetErrorString(obs_cudaErrorInvalidValue) != NULL ? 0 : 1, 0);
}

/* ---- --errors: invalid arguments ---------------------------------------------- */

/* Handles that were never created: the runtime must reject them. */
static char never_created[64];
#define BOGUS_STREAM ((obs_cudaStream_t)never_created)
#define BOGUS_EVENT ((obs_cudaEvent_t)(never_created + 16))
#define BOGUS_EXEC ((obs_cudaGraphExec_t)(never_created + 32))

static void run_error_cases(struct driver_state *st)
{
    const obs_dim3 zero_grid = {0, 1, 1}, zero_block = {0, 1, 1}, zero_grid_y = {1, 0, 1};
    const obs_cudaMemcpyKind h2d = obs_cudaMemcpyHostToDevice;
    const void *prefill = (const void *)prefill_kernel_stub;
    char host_only[16];

    CALL_EXPECT(obs_cudaErrorInvalidConfiguration, cudaLaunchKernel,
                (prefill, zero_grid, block64, st->k_args, 0, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidConfiguration, cudaLaunchKernel,
                (prefill, grid4, zero_block, st->k_args, 0, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidDeviceFunction, cudaLaunchKernel,
                (NULL, grid4, block64, st->k_args, 0, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaLaunchKernel,
                (prefill, grid4, block64, st->k_args, 0, BOGUS_STREAM));
    /* The failed launch left its error for cudaGetLastError, which resets it. */
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaGetLastError, ());
    CALL_EXPECT(obs_cudaSuccess, cudaPeekAtLastError, ());
    CALL_EXPECT(obs_cudaErrorInvalidConfiguration, __cudaLaunchKernel,
                (st->prefill_handle, zero_grid, block64, st->k_args, 0, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidValue, cudaLaunchKernelExC, (NULL, prefill, st->k_args));
    CALL_EXPECT(obs_cudaErrorInvalidConfiguration, cudaLaunchCooperativeKernel,
                (prefill, zero_grid_y, block64, st->k_args, 0, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidValue, cudaMemcpy, (NULL, st->h_src, N_BYTES, h2d));
    CALL_EXPECT(obs_cudaErrorInvalidMemcpyDirection, cudaMemcpy,
                (st->d_a, st->h_src, N_BYTES, (obs_cudaMemcpyKind)7));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaMemcpyAsync,
                (st->d_a, st->h_src, N_BYTES, h2d, BOGUS_STREAM));
    CALL_EXPECT(obs_cudaErrorInvalidPitchValue, cudaMemcpy2D, (st->d_b, 16, st->h_src, PITCH, 32, 4, h2d));
    CALL_EXPECT(obs_cudaErrorInvalidSymbol, cudaMemcpyToSymbol, (NULL, st->h_src, 4, 0, h2d));
    CALL_EXPECT(obs_cudaErrorInvalidDevice, cudaMemcpyPeer, (st->d_b, 1, st->d_a, 0, N_BYTES));
    CALL_EXPECT(obs_cudaErrorInvalidValue, cudaMemset, (NULL, 0, N_BYTES));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaMemsetAsync, (st->d_a, 0, N_BYTES, BOGUS_STREAM));
    CALL_EXPECT(obs_cudaErrorInvalidValue, cudaMalloc, (NULL, 16));
    CALL_EXPECT(obs_cudaErrorInvalidValue, cudaFree, (host_only));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaStreamSynchronize, (BOGUS_STREAM));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaStreamWaitEvent, (st->s, BOGUS_EVENT, 0));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaEventSynchronize, (BOGUS_EVENT));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaGraphLaunch, (BOGUS_EXEC, st->s));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaGraphLaunch_ptsz, (BOGUS_EXEC, NULL));
    CALL_EXPECT(obs_cudaErrorInvalidResourceHandle, cudaGetLastError, ());
}

/* ---- --threads N --launches M -------------------------------------------------- */

struct thread_job {
    int index;
    long launches;
    unsigned long failed;
};

/* Every stream lives until all threads are done, so that no two threads'
 * streams can share an address. */
static pthread_barrier_t streams_done;

static void *thread_main(void *arg)
{
    struct thread_job *job = arg;
    obs_cudaStream_t s = NULL;
    float *out = NULL;
    const float *in = NULL;
    int n = 0, rounds = 1;
    void *args[4] = {&out, &in, &n, &rounds};
    const obs_dim3 grid = {1, 1, 1}, block = {32, 1, 1};

    if (cudaStreamCreate(&s) != obs_cudaSuccess)
        job->failed++;
    for (long i = 0; i < job->launches; i++)
        if (cudaLaunchKernel((const void *)prefill_kernel_stub, grid, block, args, 0, s) != obs_cudaSuccess)
            job->failed++;
    if (cudaStreamSynchronize(s) != obs_cudaSuccess)
        job->failed++;
    pthread_barrier_wait(&streams_done);
    if (cudaStreamDestroy(s) != obs_cudaSuccess)
        job->failed++;
    return NULL;
}

static int run_threads(long threads, long launches)
{
    pthread_t *ids = calloc((size_t)threads, sizeof *ids);
    struct thread_job *jobs = calloc((size_t)threads, sizeof *jobs);
    long i;

    if (ids == NULL || jobs == NULL || pthread_barrier_init(&streams_done, NULL, (unsigned)threads) != 0)
        return 1;
    for (i = 0; i < threads; i++) {
        jobs[i].index = (int)i;
        jobs[i].launches = launches;
        if (pthread_create(&ids[i], NULL, thread_main, &jobs[i]) != 0) {
            fprintf(stderr, "cuda_api_driver: cannot start thread %ld\n", i);
            return 1;
        }
    }
    for (i = 0; i < threads; i++) {
        pthread_join(ids[i], NULL);
        printf("thread %d launches %ld failed %lu\n", jobs[i].index, jobs[i].launches, jobs[i].failed);
        calls_made += (unsigned long)launches + 3;
        calls_failed += jobs[i].failed;
    }
    pthread_barrier_destroy(&streams_done);
    free(ids);
    free(jobs);
    return 0;
}

static int usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--errors] [--threads N --launches M]\n", prog);
    return 2;
}

static int parse_count(const char *text, long *out)
{
    char *end;
    long v = text ? strtol(text, &end, 10) : 0;
    if (text == NULL || *end != '\0' || v <= 0 || v > 100000000L)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    static struct driver_state st;
    int errors = 0;
    long threads = 0, launch_count = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--errors") == 0)
            errors = 1;
        else if (strcmp(argv[i], "--threads") == 0 && parse_count(argv[i + 1], &threads) == 0)
            i++;
        else if (strcmp(argv[i], "--launches") == 0 && parse_count(argv[i + 1], &launch_count) == 0)
            i++;
        else
            return usage(argv[0]);
    }
    if ((threads > 0) != (launch_count > 0) || (threads > 0 && errors) || threads > 4096)
        return usage(argv[0]);

    if (threads > 0) {
        if (run_threads(threads, launch_count) != 0)
            return 1;
    } else {
        run_setup(&st);
        run_launches(&st);
        run_copies(&st);
        run_memsets(&st);
        run_graphs(&st);
        run_syncs(&st);
        if (errors)
            run_error_cases(&st);
        run_teardown(&st);
    }
    unregister_module();
    /* Keeps the counts documented at the top of this file true. */
    if (threads == 0 &&
        calls_made != DRIVER_HOOKED_CALLS + DRIVER_SUPPORT_CALLS + (errors ? DRIVER_ERROR_CALLS : 0)) {
        fprintf(stderr, "cuda_api_driver: made %lu calls, the header says otherwise\n", calls_made);
        calls_failed++;
    }
    printf("calls %lu failed %lu\n", calls_made, calls_failed);
    return calls_failed == 0 ? 0 : 1;
}
