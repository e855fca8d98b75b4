/* bench_loop: the launch and copy loops of `make bench` and `make bench-scale`,
 * a small CUDA program (C, against shim/abi/cuda_abi.h, linked to
 * libcudart.so.13: the simulated runtime here, a real one anywhere else). It
 * registers one kernel from a constructor, as nvcc's code does.
 *
 * Usage: bench_loop [--launches N] [--copies N] [--threads T] [--clock N]
 *                   [--touch MIB [--code KIB] [--warmup N]]
 *   --launches N  time N cudaLaunchKernel calls on one stream (after 1000
 *                 to warm up the first-call paths); prints "ns_per_launch X"
 *   --touch MIB   a framework's cache pressure between launches (make
 *                 bench-cache, contrib/bench/cache_pressure.sh): before each
 *                 of the N launches, read and write one byte of every 64-byte
 *                 line of a MIB buffer (0: none) and run KIB of straight-line
 *                 code (--code, 0 to 64, default 0: an interpreter's code
 *                 evicting the instruction cache), as the interpreter and the
 *                 framework do between two launches; each launch is timed
 *                 alone (a clock read before and after it), so that the
 *                 touching is not in the figure. Prints "ns_per_launch_call X"
 *                 (the median time inside cudaLaunchKernel: robust to a
 *                 preempted launch), "ns_per_launch_call_mean" and
 *                 "ns_per_iteration Y" (the whole loop per launch, touching
 *                 included: what the shim's evictions cost the program
 *                 after the call shows there). --warmup N: launches before
 *                 the timed ones (default 1000), untouched. Before them one
 *                 256-byte copy to the device, as a framework copies its
 *                 weights before it launches anything
 *   --copies N    time N 256-byte cudaMemcpy HtoD (after 100 to warm up);
 *                 prints "ns_per_copy X"
 *   --threads T   with T > 1: each of T threads makes --launches launches on
 *                 its own stream, untimed per call; prints "launches TOTAL"
 *                 and "wall_s S" (the scale run)
 *   --clock N     time N clock_gettime(CLOCK_MONOTONIC) calls; prints
 *                 "ns_per_clock_gettime X", and on x86-64 N rdtsc reads:
 *                 "ns_per_rdtsc X" (context for the figures: the shim's
 *                 host clock reads one or the other, shim/record/clock.h) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "abi/cuda_abi.h"

#define KERNEL_NAME "_Z12bench_kernelPfi"
#define COPY_BYTES 256
#define MAX_THREADS 64

static volatile int stub_marker;
static void bench_kernel_stub(void)
{
    stub_marker = 1;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)bench_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1,
                           NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void launch_many(long n, obs_cudaStream_t s)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const obs_dim3 grid = {4, 1, 1}, block = {64, 1, 1};
    for (long i = 0; i < n; i++)
        if (cudaLaunchKernel((const void *)bench_kernel_stub, grid, block, args, 0, s) != obs_cudaSuccess) {
            fprintf(stderr, "bench_loop: launch failed\n");
            exit(1);
        }
}

/* --code: a sled of 64 KiB of 4-byte no-ops ending in a return, entered
 * KIB before its end: that much code fetched, as an interpreter's would
 * be, which evicts the first-level instruction cache. */
#define CODE_SLED_KIB 64
#if defined(__x86_64__)
__asm__(".text\n.p2align 12\n.globl bench_code_sled\n.hidden bench_code_sled\n.type bench_code_sled, @function\n"
        "bench_code_sled:\n.rept 16384\nnopl 0(%rax)\n.endr\nret\n.size bench_code_sled, .-bench_code_sled\n");
#define HAVE_CODE_SLED 1
#elif defined(__aarch64__)
__asm__(".text\n.p2align 12\n.globl bench_code_sled\n.hidden bench_code_sled\n.type bench_code_sled, %function\n"
        "bench_code_sled:\n.rept 16384\nnop\n.endr\nret\n.size bench_code_sled, .-bench_code_sled\n");
#define HAVE_CODE_SLED 1
#else
#define HAVE_CODE_SLED 0
#endif
#if HAVE_CODE_SLED
extern char bench_code_sled[];
#endif

static void run_code(long kib)
{
#if HAVE_CODE_SLED
    void (*entry)(void);
    if (kib <= 0)
        return;
    entry = (void (*)(void))(void *)(bench_code_sled + (CODE_SLED_KIB - kib) * 1024);
    entry();
#else
    (void)kib;
#endif
}

/* Every 64-byte line of buf read and written. */
static void touch_lines(unsigned char *buf, size_t bytes)
{
    for (size_t j = 0; j < bytes; j += 64)
        buf[j]++;
    __asm__ volatile("" ::: "memory");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The --touch loop: n launches, each timed alone, after the touching. The
 * median of the n times is the figure: on a shared machine a launch now
 * and then is preempted, which moves a mean by microseconds. */
static void launch_touching(long n, obs_cudaStream_t s, unsigned char *buf, size_t bytes, long code_kib)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const obs_dim3 grid = {4, 1, 1}, block = {64, 1, 1};
    double *in_call = calloc((size_t)n, sizeof *in_call), sum = 0, t_loop;
    if (in_call == NULL)
        exit(1);
    t_loop = now_ns();
    for (long i = 0; i < n; i++) {
        double t0, t1;
        touch_lines(buf, bytes);
        run_code(code_kib);
        t0 = now_ns();
        if (cudaLaunchKernel((const void *)bench_kernel_stub, grid, block, args, 0, s) != obs_cudaSuccess) {
            fprintf(stderr, "bench_loop: launch failed\n");
            exit(1);
        }
        t1 = now_ns();
        in_call[i] = t1 - t0;
    }
    t_loop = now_ns() - t_loop;
    for (long i = 0; i < n; i++)
        sum += in_call[i];
    qsort(in_call, (size_t)n, sizeof *in_call, cmp_double);
    printf("ns_per_launch_call %.2f\nns_per_launch_call_mean %.2f\nns_per_iteration %.2f\n",
           n % 2 ? in_call[n / 2] : (in_call[n / 2 - 1] + in_call[n / 2]) / 2, sum / (double)n, t_loop / (double)n);
    free(in_call);
}

static void copy_many(long n, void *dev, const char *host)
{
    for (long i = 0; i < n; i++)
        if (cudaMemcpy(dev, host, COPY_BYTES, obs_cudaMemcpyHostToDevice) != obs_cudaSuccess) {
            fprintf(stderr, "bench_loop: copy failed\n");
            exit(1);
        }
}

static void *thread_body(void *p)
{
    long n = *(const long *)p;
    obs_cudaStream_t s = NULL;
    if (cudaStreamCreate(&s) != obs_cudaSuccess)
        exit(1);
    launch_many(n, s);
    cudaStreamSynchronize(s);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_loop [--launches N] [--copies N] [--threads T] [--clock N] "
                    "[--touch MIB [--code KIB] [--warmup N]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long launches = 0, copies = 0, threads = 1, clocks = 0, touch_mib = -1, code_kib = 0, warmup = 1000;
    for (int i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next == NULL)
            return usage();
        if (strcmp(argv[i], "--launches") == 0)
            launches = atol(next);
        else if (strcmp(argv[i], "--copies") == 0)
            copies = atol(next);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = atol(next);
        else if (strcmp(argv[i], "--clock") == 0)
            clocks = atol(next);
        else if (strcmp(argv[i], "--touch") == 0)
            touch_mib = atol(next);
        else if (strcmp(argv[i], "--code") == 0)
            code_kib = atol(next);
        else if (strcmp(argv[i], "--warmup") == 0)
            warmup = atol(next);
        else
            return usage();
        i++;
    }
    if (launches < 0 || copies < 0 || threads < 1 || threads > MAX_THREADS || clocks < 0 || touch_mib > 4096 ||
        code_kib < 0 || code_kib > CODE_SLED_KIB || warmup < 0)
        return usage();

    if (clocks > 0) {
        struct timespec ts;
        double t0 = now_ns();
        for (long i = 0; i < clocks; i++)
            clock_gettime(CLOCK_MONOTONIC, &ts);
        printf("ns_per_clock_gettime %.2f\n", (now_ns() - t0) / (double)clocks);
#if defined(__x86_64__)
        {
            volatile unsigned long long sink = 0;
            t0 = now_ns();
            for (long i = 0; i < clocks; i++)
                sink += __rdtsc();
            printf("ns_per_rdtsc %.2f\n", (now_ns() - t0) / (double)clocks);
            (void)sink;
        }
#endif
    }
    if (threads > 1 && launches > 0) {
        pthread_t ids[MAX_THREADS];
        double t0 = now_ns();
        for (long i = 0; i < threads; i++)
            if (pthread_create(&ids[i], NULL, thread_body, &launches) != 0)
                return 1;
        for (long i = 0; i < threads; i++)
            pthread_join(ids[i], NULL);
        printf("launches %ld\nwall_s %.3f\n", launches * threads, (now_ns() - t0) / 1e9);
        return 0;
    }
    obs_cudaStream_t s = NULL;
    if (cudaStreamCreate(&s) != obs_cudaSuccess)
        return 1;
    if (launches > 0 && touch_mib >= 0) {
        size_t bytes = (size_t)touch_mib << 20;
        unsigned char *buf = bytes > 0 ? calloc(1, bytes) : NULL;
        if (bytes > 0 && buf == NULL)
            return 1;
        static char host[COPY_BYTES];
        void *dev = NULL;
        /* a framework's first copy to the device (its weights) comes before its launches */
        if (cudaMalloc(&dev, COPY_BYTES) != obs_cudaSuccess ||
            cudaMemcpy(dev, host, COPY_BYTES, obs_cudaMemcpyHostToDevice) != obs_cudaSuccess)
            return 1;
        launch_many(warmup, s); /* first-call paths */
        touch_lines(buf, bytes); /* its pages faulted in before the timed loop */
        launch_touching(launches, s, buf, bytes, HAVE_CODE_SLED ? code_kib : 0);
        printf("touch_mib %ld\ncode_kib %ld\n", touch_mib, HAVE_CODE_SLED ? code_kib : 0L);
        free(buf);
    } else if (launches > 0) {
        launch_many(1000, s); /* first-call paths: buffer, names, stream */
        double t0 = now_ns();
        launch_many(launches, s);
        printf("ns_per_launch %.2f\n", (now_ns() - t0) / (double)launches);
    }
    if (copies > 0) {
        static char host[COPY_BYTES];
        void *dev = NULL;
        if (cudaMalloc(&dev, COPY_BYTES) != obs_cudaSuccess)
            return 1;
        copy_many(100, dev, host);
        double t0 = now_ns();
        copy_many(copies, dev, host);
        printf("ns_per_copy %.2f\n", (now_ns() - t0) / (double)copies);
        cudaFree(dev);
    }
    cudaStreamSynchronize(s);
    return 0;
}
