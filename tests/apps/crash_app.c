/* crash_app: a CUDA program (C, against shim/abi/cuda_abi.h, linked to
 * libcudart.so.13) that ends every hard way there is, for
 * tests/t_shim_crash. It registers one kernel from a constructor, as nvcc's
 * code does, and launches it on a stream of its own.
 *
 * Usage: crash_app MODE N [DIR]
 *   sigkill N       N launches, then SIGKILL to itself
 *   term N, int N, hup N
 *                   N launches, then SIGTERM (SIGINT, SIGHUP) to itself:
 *                   the signals that ask a process to stop (set to their
 *                   default action first: a test suite run from a
 *                   background job or under nohup inherits SIGINT or SIGHUP
 *                   ignored)
 *   segv N          N launches, then a store through a null pointer
 *   abort N         N launches, then abort()
 *   _exit N         N launches, then _exit(5) (no atexit, no destructors)
 *   thread-exit N   4 threads launch without end; once each has made N,
 *                   another thread (not main) calls exit(7) while they go on
 *   cancel N        a thread launches without end; once it has made N, main
 *                   cancels it (pthread_cancel: deferred, so it acts at the
 *                   next cancellation point the thread reaches inside a
 *                   launch: the simulator's log write, or the shim's flush),
 *                   joins it, launches once more and returns 0
 *   rmdir N DIR     N launches, then DIR and everything in it removed, then
 *                   N more launches; returns 0
 *   fsize N BYTES   files this process writes limited to BYTES
 *                   (RLIMIT_FSIZE, SIGXFSZ left at its default: a write
 *                   past the limit kills the writer), then N launches;
 *                   returns 0
 *   closed-stderr N  stderr made a pipe whose reader is gone (as under
 *                   `app 2>&1 | head` once head has quit), then N
 *                   launches; returns 0 (the app itself writes nothing
 *                   there: a write would raise SIGPIPE)
 *   vfork N         N launches, then a vfork child that calls _exit(0) at
 *                   once (as a failed exec does), then N more; returns 0
 *   run N           N launches; returns 0
 * Stdout (unbuffered, the same with and without the shim): "launches N"
 * before the ending, "done" on the paths that return. Numbers that depend
 * on timing (launches of the endless threads) go to stderr. Core dumps are
 * turned off (RLIMIT_CORE 0). */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/cuda_abi.h"

#define KERNEL_NAME "_Z11app_kernelPfi"
#define WORKERS 4

static volatile int stub_marker;
static void app_kernel_stub(void)
{
    stub_marker = 1;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    __cudaRegisterFunction(handle, (const char *)app_kernel_stub, (char *)KERNEL_NAME, KERNEL_NAME, -1, NULL, NULL,
                           NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

/* One line on stdout with write(2): nothing left in a stdio buffer when the
 * process dies. */
static void say(const char *fmt, long n)
{
    char line[128];
    int len = snprintf(line, sizeof line, fmt, n);
    if (len > 0 && write(STDOUT_FILENO, line, (size_t)len) < 0)
        _exit(1);
}

static int launch(obs_cudaStream_t s)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const obs_dim3 grid = {4, 1, 1}, block = {64, 1, 1};
    return cudaLaunchKernel((const void *)app_kernel_stub, grid, block, args, 0, s) == obs_cudaSuccess;
}

static void launch_n(long n, obs_cudaStream_t s)
{
    long i;
    for (i = 0; i < n; i++)
        if (!launch(s)) {
            fprintf(stderr, "crash_app: launch failed\n");
            exit(1);
        }
    cudaStreamSynchronize(s);
}

/* ---- threads launching without end ------------------------------------------ */

static _Atomic long made[WORKERS];

static void *endless(void *arg)
{
    long *mine = arg;
    long i = (long)(mine - (long *)made);
    obs_cudaStream_t s = NULL;
    cudaStreamCreate(&s);
    for (;;) {
        if (!launch(s))
            break;
        atomic_fetch_add(&made[i], 1);
        if (atomic_load(&made[i]) % 1000 == 0)
            pthread_testcancel(); /* a cancellation point of the app's own */
    }
    return NULL;
}

static void wait_for(int workers, long n)
{
    int i;
    for (i = 0; i < workers; i++)
        while (atomic_load(&made[i]) < n)
            usleep(1000);
}

static void *exiter(void *arg)
{
    (void)arg;
    say("%ld threads launching; exit(7) from another thread\n", WORKERS);
    exit(7);
}

static int thread_exit(long n)
{
    pthread_t ids[WORKERS + 1];
    int i;
    for (i = 0; i < WORKERS; i++)
        pthread_create(&ids[i], NULL, endless, (void *)&made[i]);
    wait_for(WORKERS, n);
    pthread_create(&ids[WORKERS], NULL, exiter, NULL);
    pthread_join(ids[WORKERS], NULL); /* never returns: exit() ends the process */
    return 1;
}

static int cancel(long n, obs_cudaStream_t s)
{
    pthread_t id;
    pthread_create(&id, NULL, endless, (void *)&made[0]);
    wait_for(1, n);
    pthread_cancel(id);
    pthread_join(id, NULL);
    fprintf(stderr, "crash_app: worker launches %ld\n", atomic_load(&made[0]));
    say("cancelled\n", 0);
    launch_n(1, s);
    say("done\n", 0);
    return 0;
}

/* ---- the output directory removed ---------------------------------------------- */

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0 && errno == EISDIR)
            remove_tree(path);
    }
    closedir(d);
    rmdir(dir);
}

/* A real store through a null pointer, not a trap; not UBSan's to report
 * (make check-sanitize): the SIGSEGV is the point. */
__attribute__((no_sanitize("undefined"))) static void store_to_null(void)
{
    volatile uintptr_t null_address = 0; /* opaque to the compiler */
    *(volatile int *)null_address = 1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    long n = argc > 2 ? atol(argv[2]) : -1;
    struct rlimit no_core = {0, 0};
    obs_cudaStream_t s = NULL;

    if (n < 0 || ((strcmp(mode, "rmdir") == 0 || strcmp(mode, "fsize") == 0) && argc < 4)) {
        fprintf(stderr, "usage: crash_app sigkill|term|int|hup|segv|abort|_exit|thread-exit|cancel|run N, rmdir N DIR, "
                        "fsize N BYTES\n");
        return 2;
    }
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (strcmp(mode, "fsize") == 0) {
        struct rlimit fsize = {(rlim_t)atol(argv[3]), (rlim_t)atol(argv[3])};
        if (setrlimit(RLIMIT_FSIZE, &fsize) != 0) {
            perror("setrlimit");
            return 1;
        }
    }
    if (strcmp(mode, "thread-exit") == 0)
        return thread_exit(n);
    if (cudaStreamCreate(&s) != obs_cudaSuccess)
        return 1;
    if (strcmp(mode, "cancel") == 0)
        return cancel(n, s);
    if (strcmp(mode, "closed-stderr") == 0) {
        int p[2];
        if (pipe(p) != 0 || dup2(p[1], STDERR_FILENO) < 0)
            return 1;
        close(p[0]);
        close(p[1]);
    }
    launch_n(n, s);
    say("launches %ld\n", n);
    if (strcmp(mode, "sigkill") == 0) {
        kill(getpid(), SIGKILL);
    } else if (strcmp(mode, "term") == 0 || strcmp(mode, "int") == 0 || strcmp(mode, "hup") == 0) {
        kill(getpid(), mode[0] == 't' ? SIGTERM : mode[0] == 'i' ? SIGINT : SIGHUP);
        pause(); /* the signal is on its way */
    } else if (strcmp(mode, "segv") == 0) {
        store_to_null();
    } else if (strcmp(mode, "abort") == 0) {
        abort();
    } else if (strcmp(mode, "_exit") == 0) {
        _exit(5);
    } else if (strcmp(mode, "vfork") == 0) {
        pid_t child = vfork();
        if (child == 0)
            _exit(0); /* shares our memory: the shim must not write or close our trace */
        if (child < 0 || waitpid(child, NULL, 0) != child)
            return 1;
        launch_n(n, s);
    } else if (strcmp(mode, "rmdir") == 0) {
        remove_tree(argv[3]);
        launch_n(n, s);
    } else if (strcmp(mode, "run") != 0 && strcmp(mode, "fsize") != 0 && strcmp(mode, "closed-stderr") != 0) {
        fprintf(stderr, "crash_app: unknown mode %s\n", mode);
        return 2;
    }
    cudaStreamDestroy(s);
    say("done\n", 0);
    return 0;
}
