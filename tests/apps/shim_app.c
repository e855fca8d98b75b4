/* shim_app: a small CUDA program (C, against shim/abi/cuda_abi.h, linked to
 * libcudart.so.13) for the shim's lifecycle tests: how it ends (return,
 * exit(), a signal with or without a handler of its own), fork, a file
 * size limit (the disk filling up), errno pass-through, and a quick timing
 * loop. It registers one kernel from a constructor, as nvcc's code does.
 *
 * Usage: shim_app [options]
 *   --launches N      cudaLaunchKernel N times on a stream (default 10)
 *   --copies N        cudaMemcpy HtoD N times (default 0)
 *   --exit CODE       end with exit(CODE) from a nested function
 *   --signal SIG      end by sending itself SIG (TERM or INT) and waiting
 *   --own-handler     install a SIGTERM/SIGINT handler that exit(3)s first
 *   --fork            fork after the launches; the child makes --launches
 *                     more, prints "child PID" and exits 0; the parent
 *                     waits for it, then launches as many again
 *   --fsize-limit B   limit files this process writes to B bytes (SIGXFSZ
 *                     ignored): the shim's writes fail as on a full disk
 *   --errno           print "api status errno" for calls made with errno
 *                     set to a marker first (valid and invalid arguments)
 *   --bench N         time N launches; print "ns_per_launch X"
 *   --threads T       run the launches on T threads (each --launches)
 *   --unregistered    also launch a host function no registration named
 *                     (the runtime refuses it; the shim still names it)
 *   --steal-fds PATH  after the launches, write "app data" to PATH, close
 *                     every other descriptor from 3 up and put PATH's on
 *                     512..1023 (as daemons do): the shim's must not write
 *                     into the app's file
 *   --plant HOW NAME TARGET
 *                     after the launches (the trace file exists), make
 *                     NAME a symbolic link (HOW symlink) or a hard link
 *                     (hardlink) to TARGET, or a directory (dir, TARGET
 *                     unused): what someone else may plant at the name of
 *                     the timeline the shim writes at exit
 * Output: "launches N" and "done" on stdout at the end (normal paths). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "abi/cuda_abi.h"

#define KERNEL_NAME "_Z11app_kernelPfi"

static volatile int stub_marker;
static void app_kernel_stub(void)
{
    stub_marker = 1;
}
static void unregistered_stub(void)
{
    stub_marker = 2;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)app_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1,
                           NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

static long launches_done;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void launch_many(long n, obs_cudaStream_t s)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const obs_dim3 grid = {4, 1, 1}, block = {64, 1, 1};
    long i;
    for (i = 0; i < n; i++)
        if (cudaLaunchKernel((const void *)app_kernel_stub, grid, block, args, 0, s) != obs_cudaSuccess) {
            fprintf(stderr, "shim_app: launch failed\n");
            exit(1);
        }
    pthread_mutex_lock(&count_lock);
    launches_done += n;
    pthread_mutex_unlock(&count_lock);
}

static void copy_many(long n)
{
    static char host[256];
    void *dev = NULL;
    long i;
    if (n == 0)
        return;
    if (cudaMalloc(&dev, sizeof host) != obs_cudaSuccess)
        exit(1);
    for (i = 0; i < n; i++)
        cudaMemcpy(dev, host, sizeof host, obs_cudaMemcpyHostToDevice);
    cudaFree(dev);
}

/* ---- --errno -------------------------------------------------------------- */

#define ERRNO_MARK 4242

#define ERRNO_CALL(name, args)                                   \
    do {                                                         \
        int status_;                                             \
        errno = ERRNO_MARK + __LINE__;                           \
        status_ = (int)name args;                                \
        printf("%s %d %d\n", #name, status_, errno - ERRNO_MARK); \
    } while (0)

static void errno_checks(void)
{
    void *dev = NULL;
    char host[64] = {0};
    const obs_dim3 grid = {1, 1, 1}, block = {1, 1, 1}, zero = {0, 1, 1};
    obs_cudaStream_t s = NULL;

    ERRNO_CALL(cudaMalloc, (&dev, sizeof host));
    ERRNO_CALL(cudaStreamCreate, (&s));
    ERRNO_CALL(cudaMemcpy, (dev, host, sizeof host, obs_cudaMemcpyHostToDevice));
    ERRNO_CALL(cudaMemcpy, (NULL, host, sizeof host, obs_cudaMemcpyHostToDevice));
    ERRNO_CALL(cudaMemcpyAsync, (dev, host, sizeof host, (obs_cudaMemcpyKind)77, s));
    ERRNO_CALL(cudaLaunchKernel, ((const void *)app_kernel_stub, grid, block, NULL, 0, s));
    ERRNO_CALL(cudaLaunchKernel, ((const void *)app_kernel_stub, zero, block, NULL, 0, s));
    ERRNO_CALL(cudaMemset, (dev, 0, sizeof host));
    ERRNO_CALL(cudaMemset, (NULL, 0, sizeof host));
    ERRNO_CALL(cudaStreamSynchronize, (s));
    ERRNO_CALL(cudaStreamSynchronize, ((obs_cudaStream_t)0x12345));
    ERRNO_CALL(cudaDeviceSynchronize, ());
    ERRNO_CALL(cudaFree, (dev));
    ERRNO_CALL(cudaFree, ((void *)0x10));
    ERRNO_CALL(cudaStreamDestroy, (s));
}

/* ---- endings --------------------------------------------------------------- */

static void on_signal_exit(int sig)
{
    (void)sig;
    printf("caught\n");
    fflush(stdout);
    exit(3);
}

static void nested_exit(int code)
{
    printf("launches %ld\nexiting %d\n", launches_done, code);
    fflush(stdout);
    exit(code);
}

static void send_self(int sig)
{
    printf("launches %ld\nsignalling\n", launches_done);
    fflush(stdout);
    kill(getpid(), sig);
    for (;;)
        pause();
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct thread_arg {
    long launches;
};

static void *thread_body(void *p)
{
    struct thread_arg *a = p;
    obs_cudaStream_t s = NULL;
    cudaStreamCreate(&s);
    launch_many(a->launches, s);
    cudaStreamSynchronize(s);
    return NULL;
}

static void run_launches(long launches, long threads, obs_cudaStream_t s)
{
    pthread_t ids[64];
    struct thread_arg arg = {launches};
    long i;
    if (threads <= 1) {
        launch_many(launches, s);
        return;
    }
    for (i = 0; i < threads && i < 64; i++)
        pthread_create(&ids[i], NULL, thread_body, &arg);
    for (i = 0; i < threads && i < 64; i++)
        pthread_join(ids[i], NULL);
}

static void steal_fds(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), i;
    if (fd < 0 || write(fd, "app data\n", 9) != 9)
        exit(1);
    for (i = 3; i < 1024; i++)
        if (i != fd)
            close(i);
    for (i = 512; i < 1024; i++)
        dup2(fd, i);
}

static void plant(const char *how, const char *name, const char *target)
{
    int rc = strcmp(how, "symlink") == 0    ? symlink(target, name)
             : strcmp(how, "hardlink") == 0 ? link(target, name)
             : strcmp(how, "dir") == 0      ? mkdir(name, 0755)
                                            : (errno = EINVAL, -1);
    if (rc != 0) {
        fprintf(stderr, "shim_app: --plant %s %s: %s\n", how, name, strerror(errno));
        exit(1);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: shim_app [--launches N] [--copies N] [--exit CODE] [--signal TERM|INT] "
                    "[--own-handler] [--fork] [--fsize-limit BYTES] [--errno] [--bench N] [--threads T] "
                    "[--unregistered] [--steal-fds PATH] [--plant symlink|hardlink|dir NAME TARGET]\n");
    return 2;
}

int main(int argc, char **argv)
{
    long launches = 10, copies = 0, bench = 0, fsize = 0, threads = 1;
    int exit_code = -1, sig = 0, own_handler = 0, do_fork = 0, do_errno = 0, unregistered = 0, i;
    const char *steal = NULL, *plant_how = NULL, *plant_name = NULL, *plant_target = NULL;
    obs_cudaStream_t s = NULL;

    for (i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--launches") == 0 && next)
            launches = atol(argv[++i]);
        else if (strcmp(argv[i], "--copies") == 0 && next)
            copies = atol(argv[++i]);
        else if (strcmp(argv[i], "--exit") == 0 && next)
            exit_code = atoi(argv[++i]);
        else if (strcmp(argv[i], "--signal") == 0 && next) {
            i++;
            sig = strcmp(argv[i], "INT") == 0 ? SIGINT : strcmp(argv[i], "TERM") == 0 ? SIGTERM : -1;
            if (sig < 0)
                return usage();
        } else if (strcmp(argv[i], "--own-handler") == 0)
            own_handler = 1;
        else if (strcmp(argv[i], "--fork") == 0)
            do_fork = 1;
        else if (strcmp(argv[i], "--fsize-limit") == 0 && next)
            fsize = atol(argv[++i]);
        else if (strcmp(argv[i], "--errno") == 0)
            do_errno = 1;
        else if (strcmp(argv[i], "--bench") == 0 && next)
            bench = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && next)
            threads = atol(argv[++i]);
        else if (strcmp(argv[i], "--unregistered") == 0)
            unregistered = 1;
        else if (strcmp(argv[i], "--steal-fds") == 0 && next)
            steal = argv[++i];
        else if (strcmp(argv[i], "--plant") == 0 && i + 3 < argc) {
            plant_how = argv[++i];
            plant_name = argv[++i];
            plant_target = argv[++i];
        } else
            return usage();
    }

    if (fsize > 0) {
        struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
            perror("setrlimit");
            return 1;
        }
    }
    if (own_handler) {
        signal(SIGTERM, on_signal_exit);
        signal(SIGINT, on_signal_exit);
    }
    if (do_errno) {
        errno_checks();
        printf("done\n");
        return 0;
    }
    if (cudaStreamCreate(&s) != obs_cudaSuccess)
        return 1;
    if (bench > 0) {
        double t0;
        launch_many(1000, s); /* warm: first-call paths */
        t0 = now_ns();
        launch_many(bench, s);
        printf("ns_per_launch %.1f\n", (now_ns() - t0) / (double)bench);
    }
    run_launches(launches, threads, s);
    copy_many(copies);
    if (plant_how != NULL)
        plant(plant_how, plant_name, plant_target);
    if (steal != NULL) {
        steal_fds(steal);
        launch_many(launches, s);
    }
    if (unregistered) {
        const obs_dim3 one = {1, 1, 1};
        printf("unregistered status %d\n",
               (int)cudaLaunchKernel((const void *)unregistered_stub, one, one, NULL, 0, s));
    }
    if (do_fork) {
        pid_t child;
        fflush(stdout);
        child = fork();
        if (child < 0)
            return 1;
        if (child == 0) {
            launch_many(launches, s);
            printf("child %ld launches %ld\n", (long)getpid(), launches);
            exit(0);
        }
        waitpid(child, NULL, 0);
        launch_many(launches, s);
        printf("parent %ld\n", (long)getpid());
    }
    cudaStreamSynchronize(s);
    if (exit_code >= 0)
        nested_exit(exit_code);
    if (sig != 0)
        send_self(sig);
    cudaStreamDestroy(s);
    printf("launches %ld\ndone\n", launches_done);
    return 0;
}
