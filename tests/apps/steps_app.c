/* steps_app: a small generate loop for the OBS_GPU_TIME=steps tests (C
 * against shim/abi/cuda_abi.h, linked to libcudart.so.13), whose phases
 * the shim finds by rules (OBS_PHASES, set by the test: STEPS_APP_PHASES
 * below): per generation, a prefill of `layers` prefill_kernel launches,
 * then `steps` decode steps, each an embed_kernel (the step's opener),
 * `layers` decode_kernel and kv_gather_kernel launches and a sample_kernel,
 * each prefill and step ending in its token read (cudaMemcpyAsync DtoH + a
 * sync). With several streams the launches go round them, so one range
 * uses them all.
 *   OBS_PHASES='PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=embed_*,decode_*,sample_*'
 *   OBS_STEP='embed_*' 
 *
 * Usage: steps_app [options]
 *   --gens G        generations (default 2)
 *   --steps N       decode steps per generation (default 4)
 *   --layers L      launches of each kernel per prefill / step (default 3)
 *   --streams S     streams per thread, 1..4 (default 1)
 *   --threads T     T threads, each with its own streams, run the loop
 *   --capture       in each generation's step 1, the decode launches on the
 *                   first stream are captured into a graph, then launched
 *   --sync-copy     read tokens with a synchronous cudaMemcpy (stream 0
 *                   then: the legacy stream) instead of Async + sync
 *   --no-final-sync the last step reads no token and nothing synchronises
 *                   before exit
 *   --fork          after the first generation, fork: the child runs the
 *                   rest too and ends with _exit(0); the parent waits
 *   --signal        after the first generation, launch a second one's
 *                   prefill and end by SIGTERM sent to itself
 * Output: "launches N", "child exit S" (--fork), "done". Exit 0, or 1
 * when a call fails. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/cuda_abi.h"

#define MAX_STREAMS 4

static volatile int stub_marker;
static void prefill_stub(void)
{
    stub_marker = 1;
}
static void decode_stub(void)
{
    stub_marker = 2;
}
static void kv_stub(void)
{
    stub_marker = 3;
}
static void sample_stub(void)
{
    stub_marker = 4;
}
static void embed_stub(void)
{
    stub_marker = 5;
}

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};

__attribute__((constructor)) static void register_module(void)
{
    static const struct {
        void (*stub)(void);
        const char *name;
    } k[] = {{prefill_stub, "_Z14prefill_kernelPfi"},
             {decode_stub, "_Z13decode_kernelPfi"},
             {kv_stub, "_Z16kv_gather_kernelPfi"},
             {sample_stub, "_Z13sample_kernelPfi"},
             {embed_stub, "_Z12embed_kernelPfi"}};
    void **handle = __cudaRegisterFatBinary(&fake_wrapper);
    size_t i;
    for (i = 0; i < sizeof k / sizeof k[0]; i++)
        __cudaRegisterFunction(handle, (const char *)k[i].stub, (char *)k[i].name, k[i].name, -1, NULL, NULL, NULL,
                               NULL, NULL);
    __cudaRegisterFatBinaryEnd(handle);
}

static long gens = 2, steps = 4, layers = 3, nstreams = 1;
static int capture, sync_copy, no_final_sync;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static long launches;

static void fail(const char *what, int status)
{
    fprintf(stderr, "steps_app: %s failed (%d)\n", what, status);
    exit(1);
}

struct loop {
    obs_cudaStream_t s[MAX_STREAMS];
    void *dev;
    long launches;
};

static void launch(struct loop *l, void (*stub)(void), unsigned grid, obs_cudaStream_t s)
{
    float *out = NULL;
    int len = 0;
    void *args[2] = {&out, &len};
    const obs_dim3 g = {grid, 1, 1}, b = {128, 1, 1};
    int st = cudaLaunchKernel((const void *)stub, g, b, args, 0, s);
    if (st != obs_cudaSuccess)
        fail("cudaLaunchKernel", st);
    l->launches++;
}

/* The token read that ends a prefill or a step. */
static void read_token(struct loop *l)
{
    int token = 0, st;
    if (sync_copy) {
        if ((st = cudaMemcpy(&token, l->dev, sizeof token, obs_cudaMemcpyDeviceToHost)) != obs_cudaSuccess)
            fail("cudaMemcpy", st);
        return;
    }
    if ((st = cudaMemcpyAsync(&token, l->dev, sizeof token, obs_cudaMemcpyDeviceToHost, l->s[0])) != obs_cudaSuccess)
        fail("cudaMemcpyAsync", st);
    if (nstreams == 1)
        st = cudaStreamSynchronize(l->s[0]);
    else
        st = cudaDeviceSynchronize();
    if (st != obs_cudaSuccess)
        fail("synchronize", st);
}

static void decode_step(struct loop *l, long gen, long k, int last)
{
    long i;
    int st;
    obs_cudaGraph_t graph = NULL;
    obs_cudaGraphExec_t exec = NULL;
    int captured = capture && k == 1;

    launch(l, embed_stub, (unsigned)(2 + k), l->s[0]);
    if (captured && (st = cudaStreamBeginCapture(l->s[0], obs_cudaStreamCaptureModeThreadLocal)) != obs_cudaSuccess)
        fail("cudaStreamBeginCapture", st);
    for (i = 0; i < layers; i++) {
        obs_cudaStream_t s = captured ? l->s[0] : l->s[i % nstreams];
        launch(l, decode_stub, (unsigned)(16 + 8 * gen + i), s);
        launch(l, kv_stub, (unsigned)(4 + k + i), captured ? l->s[0] : l->s[(i + 1) % nstreams]);
    }
    if (captured) {
        if ((st = cudaStreamEndCapture(l->s[0], &graph)) != obs_cudaSuccess)
            fail("cudaStreamEndCapture", st);
        if ((st = cudaGraphInstantiate(&exec, graph, 0)) != obs_cudaSuccess)
            fail("cudaGraphInstantiate", st);
        if ((st = cudaGraphLaunch(exec, l->s[0])) != obs_cudaSuccess)
            fail("cudaGraphLaunch", st);
        l->launches++;
    }
    launch(l, sample_stub, 1, l->s[0]);
    if (!last || !no_final_sync)
        read_token(l);
    if (captured) {
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
    }
}

static void prefill(struct loop *l, long gen)
{
    long i;
    for (i = 0; i < layers; i++)
        launch(l, prefill_stub, (unsigned)(64 + 16 * gen + i), l->s[i % nstreams]);
    read_token(l);
}

static void generation(struct loop *l, long gen, int last_gen)
{
    long k;
    prefill(l, gen);
    for (k = 0; k < steps; k++)
        decode_step(l, gen, k, last_gen && k == steps - 1);
}

static void loop_start(struct loop *l)
{
    long i;
    int st;
    memset(l, 0, sizeof *l);
    for (i = 0; i < nstreams; i++)
        if ((st = cudaStreamCreate(&l->s[i])) != obs_cudaSuccess)
            fail("cudaStreamCreate", st);
    if ((st = cudaMalloc(&l->dev, 64)) != obs_cudaSuccess)
        fail("cudaMalloc", st);
}

static void loop_done(const struct loop *l)
{
    pthread_mutex_lock(&count_lock);
    launches += l->launches;
    pthread_mutex_unlock(&count_lock);
}

static void *thread_body(void *arg)
{
    struct loop l;
    long g;
    (void)arg;
    loop_start(&l);
    for (g = 0; g < gens; g++)
        generation(&l, g, g == gens - 1);
    loop_done(&l);
    return NULL;
}

int main(int argc, char **argv)
{
    long threads = 0, i;
    int do_fork = 0, sig = 0;
    struct loop l;

    for (i = 1; i < argc; i++) {
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--gens") == 0 && next)
            gens = atol(argv[++i]);
        else if (strcmp(argv[i], "--steps") == 0 && next)
            steps = atol(argv[++i]);
        else if (strcmp(argv[i], "--layers") == 0 && next)
            layers = atol(argv[++i]);
        else if (strcmp(argv[i], "--streams") == 0 && next)
            nstreams = atol(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && next)
            threads = atol(argv[++i]);
        else if (strcmp(argv[i], "--capture") == 0)
            capture = 1;
        else if (strcmp(argv[i], "--sync-copy") == 0)
            sync_copy = 1;
        else if (strcmp(argv[i], "--no-final-sync") == 0)
            no_final_sync = 1;
        else if (strcmp(argv[i], "--fork") == 0)
            do_fork = 1;
        else if (strcmp(argv[i], "--signal") == 0)
            sig = 1;
        else {
            fprintf(stderr, "usage: steps_app [--gens G] [--steps N] [--layers L] [--streams S] [--threads T] "
                            "[--capture] [--sync-copy] [--no-final-sync] [--fork] [--signal]\n");
            return 2;
        }
    }
    if (nstreams < 1 || nstreams > MAX_STREAMS || gens < 1 || steps < 0 || layers < 1)
        return 2;
    if (threads > 0) {
        pthread_t ids[64];
        for (i = 0; i < threads && i < 64; i++)
            pthread_create(&ids[i], NULL, thread_body, NULL);
        for (i = 0; i < threads && i < 64; i++)
            pthread_join(ids[i], NULL);
        printf("launches %ld\ndone\n", launches);
        return 0;
    }
    loop_start(&l);
    generation(&l, 0, gens == 1);
    if (sig) {
        loop_done(&l);
        printf("launches %ld\n", launches + 2 * layers + 1);
        fflush(stdout);
        prefill(&l, 1); /* its token read returns; the range is still open */
        launch(&l, embed_stub, 2, l.s[0]);
        for (i = 0; i < layers; i++)
            launch(&l, decode_stub, 16, l.s[0]);
        raise(SIGTERM);
        return 1;
    }
    if (do_fork) {
        pid_t pid;
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            long g;
            for (g = 1; g < gens; g++)
                generation(&l, g, g == gens - 1);
            cudaDeviceSynchronize();
            _exit(0);
        } else if (pid > 0) {
            int status = 0;
            long g;
            for (g = 1; g < gens; g++)
                generation(&l, g, g == gens - 1);
            waitpid(pid, &status, 0);
            loop_done(&l);
            printf("child exit %d\nlaunches %ld\ndone\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1, launches);
            return 0;
        }
        fail("fork", -1);
    }
    for (i = 1; i < gens; i++)
        generation(&l, i, i == gens - 1);
    loop_done(&l);
    printf("launches %ld\ndone\n", launches);
    return 0;
}
