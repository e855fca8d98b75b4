/* cupti_app: a small CUDA program (C against shim/abi/cuda_abi.h, linked to
 * libcudart.so.13) for the OBS_GPU_TIME=cupti tests: per round, a kernel
 * launch, a host-to-device copy and a memset on a stream of its own.
 *
 * Usage: cupti_app [options]
 *   --rounds N     N rounds (default 10)
 *   --threads T    T threads, each with its own stream, make the rounds
 *   --no-sync      no synchronisation call at all
 *   --fork         after the rounds, fork: the child makes N rounds of its
 *                  own, synchronises and ends with _exit(0); the parent
 *                  makes N more, waits for it
 *   --signal       after the rounds and a sync, ask CUPTI to hand over what
 *                  it holds (cuptiActivityFlushAll, as a CUPTI-aware app
 *                  may), make N more rounds and end by SIGTERM sent to itself
 * Output: "rounds N", "child exit S" (--fork), "done". Exit 0, or 1 when a
 * call fails. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/cuda_abi.h"
#include "abi/cupti_abi.h"

#define KERNEL_NAME "_Z12cupti_kernelPfi"
#define COPY_BYTES 4096

static volatile int stub_marker;
static void cupti_kernel_stub(void)
{
    stub_marker = 1;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)cupti_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1, NULL,
                           NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

static long rounds = 10;

static void fail(const char *what, int status)
{
    fprintf(stderr, "cupti_app: %s failed (%d)\n", what, status);
    exit(1);
}

/* A kernel, a copy and a memset on s; grids and sizes vary with i so that
 * device times differ from round to round. */
static void run_rounds(obs_cudaStream_t s, long n)
{
    static char host[COPY_BYTES * 4];
    void *dev = NULL;
    long i;
    int st;

    if ((st = cudaMalloc(&dev, sizeof host)) != obs_cudaSuccess)
        fail("cudaMalloc", st);
    for (i = 0; i < n; i++) {
        float *out = NULL;
        int len = 0;
        void *args[2] = {&out, &len};
        const obs_dim3 grid = {(unsigned)(8 + i % 64), 1, 1}, block = {128, 1, 1};
        size_t bytes = COPY_BYTES * (size_t)(1 + i % 4);
        if ((st = cudaLaunchKernel((const void *)cupti_kernel_stub, grid, block, args, 0, s)) != obs_cudaSuccess)
            fail("cudaLaunchKernel", st);
        if ((st = cudaMemcpyAsync(dev, host, bytes, obs_cudaMemcpyHostToDevice, s)) != obs_cudaSuccess)
            fail("cudaMemcpyAsync", st);
        if ((st = cudaMemsetAsync(dev, (int)(i & 0xff), bytes / 2, s)) != obs_cudaSuccess)
            fail("cudaMemsetAsync", st);
    }
    if ((st = cudaFree(dev)) != obs_cudaSuccess)
        fail("cudaFree", st);
}

static void *thread_body(void *arg)
{
    obs_cudaStream_t s = NULL;
    int st;
    (void)arg;
    if ((st = cudaStreamCreate(&s)) != obs_cudaSuccess)
        fail("cudaStreamCreate", st);
    run_rounds(s, rounds);
    if ((st = cudaStreamSynchronize(s)) != obs_cudaSuccess)
        fail("cudaStreamSynchronize", st);
    return NULL;
}

/* What a CUPTI-aware app may do: have CUPTI deliver its buffers now. */
static void flush_cupti(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
    obs_fn_cuptiActivityFlushAll flush = h ? (obs_fn_cuptiActivityFlushAll)dlsym(h, "cuptiActivityFlushAll") : NULL;
    if (flush == NULL || flush(0) != OBS_CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_app: no libcupti to flush\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long threads = 0, i;
    int no_sync = 0, do_fork = 0, sig = 0, st;
    obs_cudaStream_t s = NULL;

    for (i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--rounds") == 0 && next)
            rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && next)
            threads = atol(argv[++i]);
        else if (strcmp(argv[i], "--no-sync") == 0)
            no_sync = 1;
        else if (strcmp(argv[i], "--fork") == 0)
            do_fork = 1;
        else if (strcmp(argv[i], "--signal") == 0)
            sig = 1;
        else {
            fprintf(stderr, "usage: cupti_app [--rounds N] [--threads T] [--no-sync] [--fork] [--signal]\n");
            return 2;
        }
    }
    if (threads > 0) {
        pthread_t ids[64];
        for (i = 0; i < threads && i < 64; i++)
            pthread_create(&ids[i], NULL, thread_body, NULL);
        for (i = 0; i < threads && i < 64; i++)
            pthread_join(ids[i], NULL);
        printf("rounds %ld\ndone\n", threads * rounds);
        return 0;
    }
    if ((st = cudaStreamCreate(&s)) != obs_cudaSuccess)
        fail("cudaStreamCreate", st);
    run_rounds(s, rounds);
    printf("rounds %ld\n", rounds);
    fflush(stdout);
    if (do_fork) {
        pid_t child = fork();
        int status = 0;
        if (child < 0)
            fail("fork", -1);
        if (child == 0) {
            /* _exit, as forked children commonly end (and LeakSanitizer's
             * exit-time check cannot stop the parent's threads here). */
            run_rounds(s, rounds);
            if ((st = cudaDeviceSynchronize()) != obs_cudaSuccess)
                fail("cudaDeviceSynchronize (child)", st);
            _exit(0);
        }
        run_rounds(s, rounds);
        if (waitpid(child, &status, 0) != child)
            fail("waitpid", -1);
        printf("child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    if (sig) {
        if ((st = cudaDeviceSynchronize()) != obs_cudaSuccess)
            fail("cudaDeviceSynchronize", st);
        flush_cupti();
        run_rounds(s, rounds);
        fflush(stdout);
        kill(getpid(), SIGTERM);
        for (;;)
            pause();
    }
    if (!no_sync && (st = cudaDeviceSynchronize()) != obs_cudaSuccess)
        fail("cudaDeviceSynchronize", st);
    printf("done\n");
    return 0;
}
