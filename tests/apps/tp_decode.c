/* tp_decode: one rank of a tensor-parallel generate loop, over the stand-in
 * libnccl.so.2 (nccl_standin.c) and the simulated runtime: the multi-rank
 * traces of tests/t_parquet and of the 1,024-rank benchmark
 * (contrib/bench/parquet_bench.sh).
 *
 *   tp_decode RANK NRANKS SEED [--layers N] [--steps N] [--prompts N]
 *             [--barrier FILE] [--slow-rank R] [--slow-us N]
 *
 * Per prompt: the prompt copied to the device; a prompt-sized iteration;
 * --steps token steps; each iteration: an embedding, per layer rms_norm,
 * qkv_proj, attention, o_proj, an all-reduce, mlp_up, mlp_down, an
 * all-reduce (Megatron's two per layer), then lm_head, an all-gather of the
 * logits, sample_argmax and a 4-byte device-to-host copy of the token. Ranks
 * share one communicator (the unique id is made from SEED) and never talk:
 * the stand-in does no communication.
 *
 * --barrier FILE: every rank waits for all NRANKS at each collective (a
 * counter in FILE, mapped shared; the file must start empty or zero), as
 * NCCL's ranks wait for each other, so that arrivals line up. Then at each
 * collective of layer 0 rank --slow-rank (the known straggler) waits until
 * every other rank's call of it has returned (a second counter: so it is
 * the last to call, however the machine schedules the ranks) and sleeps
 * --slow-us microseconds more (the skew is at least that). Prints "rank R
 * collectives C launches L"; exits 0, 1 when a call failed, 2 on a usage
 * error. */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "abi/cuda_abi.h"
#include "abi/nccl_abi.h"
#include "nccl_seed_id.h"

static volatile int stub_marker;
#define STUB(name)                \
    static void name##_stub(void) \
    {                             \
        stub_marker = __LINE__;   \
    }
STUB(embed_tokens)
STUB(rms_norm)
STUB(qkv_proj)
STUB(attention)
STUB(o_proj)
STUB(mlp_up)
STUB(mlp_down)
STUB(lm_head)
STUB(sample_argmax)

static const struct {
    void (*stub)(void);
    const char *mangled;
} kernels[] = {
    {embed_tokens_stub, "_Z12embed_tokensPKiPfi"}, {rms_norm_stub, "_Z8rms_normPfPKfi"},
    {qkv_proj_stub, "_Z8qkv_projPfPKfi"},          {attention_stub, "_Z9attentionPfPKfi"},
    {o_proj_stub, "_Z6o_projPfPKfi"},              {mlp_up_stub, "_Z6mlp_upPfPKfi"},
    {mlp_down_stub, "_Z8mlp_downPfPKfi"},          {lm_head_stub, "_Z7lm_headPfPKfi"},
    {sample_argmax_stub, "_Z13sample_argmaxPiPKfi"},
};
enum { K_EMBED, K_NORM, K_QKV, K_ATTENTION, K_O_PROJ, K_MLP_UP, K_MLP_DOWN, K_LM_HEAD, K_SAMPLE };

static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};
static void **fatbin_handle;

__attribute__((constructor)) static void register_module(void)
{
    size_t i;
    fatbin_handle = __cudaRegisterFatBinary(&fake_wrapper);
    for (i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        __cudaRegisterFunction(fatbin_handle, (const char *)kernels[i].stub, (char *)kernels[i].mangled,
                               kernels[i].mangled, -1, NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin_handle);
}

static int rank, nranks, layers = 4, slow_rank = -1, slow_us;
static int failures;
static unsigned long launches, collectives, arrivals, late_waits;
/* Shared by the ranks: [0] arrivals at collectives so far, [1] calls of
 * layer 0's collectives returned on the ranks that are not slow. */
static volatile unsigned long *barrier_count;
static obs_ncclComm_t comm;
static obs_cudaStream_t stream;
static void *buf;

static void launch(int k, unsigned grid)
{
    obs_dim3 g = {grid, 1, 1}, b = {256, 1, 1};
    void *args[1] = {NULL};
    failures += cudaLaunchKernel((const void *)kernels[k].stub, g, b, args, 0, stream) != obs_cudaSuccess;
    launches++;
}

/* Wait until every rank has come to this collective: the counter only
 * grows, so the n-th barrier is passed at n * NRANKS arrivals. */
static void wait_for(int which, unsigned long count)
{
    while (__atomic_load_n(&barrier_count[which], __ATOMIC_SEQ_CST) < count)
        sched_yield();
}

static void barrier(void)
{
    if (barrier_count == NULL)
        return;
    arrivals++;
    __atomic_add_fetch(&barrier_count[0], 1, __ATOMIC_SEQ_CST);
    wait_for(0, arrivals * (unsigned long)nranks);
}

static int is_late(int layer)
{
    return rank == slow_rank && layer == 0 && slow_us > 0;
}

static void before_collective(int layer)
{
    barrier();
    if (is_late(layer)) {
        struct timespec ts = {slow_us / 1000000, (long)(slow_us % 1000000) * 1000L};
        if (barrier_count != NULL)
            wait_for(1, ++late_waits * (unsigned long)(nranks - 1));
        nanosleep(&ts, NULL);
    }
    collectives++;
}

/* A rank that is not late has called layer 0's collective: count it. */
static void after_collective(int layer)
{
    if (barrier_count != NULL && layer == 0 && slow_rank >= 0 && slow_rank < nranks && rank != slow_rank &&
        slow_us > 0)
        __atomic_add_fetch(&barrier_count[1], 1, __ATOMIC_SEQ_CST);
}

static void all_reduce(int layer, size_t count)
{
    before_collective(layer);
    failures += ncclAllReduce(buf, buf, count, obs_ncclBfloat16, obs_ncclSum, comm, stream) != obs_ncclSuccess;
    after_collective(layer);
}

/* One forward pass over `tokens` tokens, ending in the token read back. */
static void iteration(unsigned tokens, int *host_token)
{
    int l;
    launch(K_EMBED, tokens);
    for (l = 0; l < layers; l++) {
        launch(K_NORM, tokens);
        launch(K_QKV, tokens * 4);
        launch(K_ATTENTION, tokens * 4);
        launch(K_O_PROJ, tokens * 4);
        all_reduce(l, 4096u * tokens);
        launch(K_MLP_UP, tokens * 8);
        launch(K_MLP_DOWN, tokens * 8);
        all_reduce(l, 4096u * tokens);
    }
    launch(K_LM_HEAD, 512);
    before_collective(-1);
    failures += ncclAllGather(buf, buf, 8000, obs_ncclBfloat16, comm, stream) != obs_ncclSuccess;
    launch(K_SAMPLE, 1);
    failures += cudaMemcpy(host_token, buf, sizeof *host_token, obs_cudaMemcpyDeviceToHost) != obs_cudaSuccess;
}

static int map_barrier(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    void *p;
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        return -1;
    p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    barrier_count = p;
    return 0;
}

int main(int argc, char **argv)
{
    int steps = 8, prompts = 1, p, t, i, host_token = 0;
    const char *barrier_path = NULL;
    static int prompt[16384];

    if (argc < 4 || (argc - 4) % 2 != 0) {
        fprintf(stderr, "usage: tp_decode RANK NRANKS SEED [--layers N] [--steps N] [--prompts N] "
                        "[--barrier FILE] [--slow-rank R] [--slow-us N]\n");
        return 2;
    }
    rank = atoi(argv[1]);
    nranks = atoi(argv[2]);
    for (i = 4; i + 1 < argc; i += 2) {
        const char *v = argv[i + 1];
        if (strcmp(argv[i], "--layers") == 0)
            layers = atoi(v);
        else if (strcmp(argv[i], "--steps") == 0)
            steps = atoi(v);
        else if (strcmp(argv[i], "--prompts") == 0)
            prompts = atoi(v);
        else if (strcmp(argv[i], "--barrier") == 0)
            barrier_path = v;
        else if (strcmp(argv[i], "--slow-rank") == 0)
            slow_rank = atoi(v);
        else if (strcmp(argv[i], "--slow-us") == 0)
            slow_us = atoi(v);
        else {
            fprintf(stderr, "tp_decode: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (nranks < 1 || rank < 0 || rank >= nranks || layers < 1 || steps < 1 || prompts < 1 || slow_us < 0)
        return 2;
    if (barrier_path != NULL && map_barrier(barrier_path) != 0) {
        perror(barrier_path);
        return 1;
    }
    if (cudaStreamCreate(&stream) != obs_cudaSuccess || cudaMalloc(&buf, 1 << 20) != obs_cudaSuccess ||
        ncclCommInitRank(&comm, nranks, nccl_seed_id((unsigned)atoi(argv[3])), rank) != obs_ncclSuccess) {
        fprintf(stderr, "tp_decode: no runtime\n");
        return 1;
    }
    for (p = 0; p < prompts; p++) {
        unsigned len = 256u + 128u * (unsigned)p;
        failures += cudaMemcpy(buf, prompt, 4u * len, obs_cudaMemcpyHostToDevice) != obs_cudaSuccess;
        iteration(len, &host_token);
        for (t = 0; t < steps; t++)
            iteration(1, &host_token);
    }
    failures += cudaStreamSynchronize(stream) != obs_cudaSuccess;
    failures += ncclCommDestroy(comm) != obs_ncclSuccess;
    cudaFree(buf);
    cudaStreamDestroy(stream);
    __cudaUnregisterFatBinary(fatbin_handle);
    printf("rank %d collectives %lu launches %lu\n", rank, collectives, launches);
    return failures == 0 ? 0 : 1;
}
