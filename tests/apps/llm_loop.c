/* llm_loop: a test program shaped like an LLM generate loop, on the CUDA
 * runtime ABI (shim/abi/cuda_abi.h; links the simulated libcudart.so.13).
 * Fake kernels are registered before main, as nvcc's code does. Then, per
 * prompt: the prompt tokens copied to the device, one prompt-sized
 * iteration (embedding, KV cache write, attention, MLP, LM head, sampling:
 * large grids) ending in a 4-byte device-to-host copy of the first token;
 * then --steps token steps, each a few small kernels (the KV gather among
 * them) ending in a 4-byte device-to-host copy of the new token. Every
 * prompt is a new generation; the same kernels serve the prompt and the
 * steps, only their grids differ.
 *
 * Its own ground truth goes to OBS_SIM_LOG (when set), interleaved in true
 * order with the simulator's lines, in the NVTX injection's format with the
 * default domain "-":
 *     llm_loopRangePush<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth
 *     llm_loopRangePop<TAB>range<TAB>-<TAB>-<TAB>-<TAB>depth
 * Ranges: PREFILL (the prompt iteration and its token copy); DECODE/STEP_0;
 * DECODE/STEADY around DECODE/STEP_1 ..; KV_GATHER around the gather.
 *
 * Usage: llm_loop [--steps N] [--prompts N] [--gap-ms N] [--layers N] [--chunks N]
 *                 [--graph-decode] [--step-input BYTES] [--layer-norm]
 * (--gap-ms: sleep between generations; --layers: the attention and MLP
 * kernels repeated per layer, the KV kernel among them; --chunks: the
 * prompt processed in chunks ended by a stream sync; --graph-decode: one
 * step captured into a graph at start-up, each step then a graph launch
 * (counted as one launch); --step-input: bytes copied to the device before
 * each step, as a serving engine's per-step inputs; --layer-norm: each layer
 * begins with an rms_norm kernel (a layer of four launches, as the layer
 * finder needs), and the layers are marked in the log as tests/frameworks
 * fw_truth.py marks them, LAYER/k at a layer's first launch and LAYER_END
 * after its last, also while a step is captured into a graph:
 *     llm_loopMark<TAB>range<TAB>LAYER/k<TAB>-<TAB>-<TAB>depth). Prints "generations G launches L"
 * and exits 0, or 1 when a runtime call failed. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abi/cuda_abi.h"

/* ---- fake kernels ---------------------------------------------------------------------- */

static volatile int stub_marker;
#define STUB(name)                   \
    static void name##_stub(void)    \
    {                                \
        stub_marker = __LINE__;      \
    }
STUB(embed_tokens)
STUB(kv_cache_write)
STUB(kv_cache_gather)
STUB(attention)
STUB(mlp)
STUB(lm_head)
STUB(sample_argmax)
STUB(rms_norm)

static const struct {
    void (*stub)(void);
    const char *mangled;
} kernels[] = {
    {embed_tokens_stub, "_Z12embed_tokensPKiPfi"},  {kv_cache_write_stub, "_Z14kv_cache_writePfPKfi"},
    {kv_cache_gather_stub, "_Z15kv_cache_gatherPfPKfi"}, {attention_stub, "_Z9attentionPfPKfi"},
    {mlp_stub, "_Z3mlpPfPKfi"},                      {lm_head_stub, "_Z7lm_headPfPKfi"},
    {sample_argmax_stub, "_Z13sample_argmaxPiPKfi"}, {rms_norm_stub, "_Z8rms_normPfPKfi"},
};
enum { K_EMBED, K_KV_WRITE, K_KV_GATHER, K_ATTENTION, K_MLP, K_LM_HEAD, K_SAMPLE, K_NORM };

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

/* ---- ground truth ---------------------------------------------------------------------- */

static int truth_fd = -1;
static int truth_depth;

static void truth_line(const char *line)
{
    if (truth_fd >= 0 && write(truth_fd, line, strlen(line)) < 0)
        truth_fd = -1;
}

static void range_push(const char *name)
{
    char line[128];
    snprintf(line, sizeof line, "llm_loopRangePush\trange\t%s\t-\t-\t%d\n", name, ++truth_depth);
    truth_line(line);
}

static void range_pop(void)
{
    char line[128];
    snprintf(line, sizeof line, "llm_loopRangePop\trange\t-\t-\t-\t%d\n", --truth_depth);
    truth_line(line);
}

static int layer_norm;

/* --layer-norm: a layer's boundary, as fw_truth.py marks it (k < 0: LAYER_END). */
static void layer_mark(int k)
{
    char line[128];
    if (!layer_norm)
        return;
    if (k >= 0)
        snprintf(line, sizeof line, "llm_loopMark\trange\tLAYER/%d\t-\t-\t%d\n", k, truth_depth);
    else
        snprintf(line, sizeof line, "llm_loopMark\trange\tLAYER_END\t-\t-\t%d\n", truth_depth);
    truth_line(line);
}

/* ---- the loop ---------------------------------------------------------------------------- */

static int failures;
static unsigned long launches;

static void launch(int k, unsigned grid, obs_cudaStream_t s)
{
    obs_dim3 g = {grid, 1, 1}, b = {256, 1, 1};
    void *args[1] = {NULL};
    if (cudaLaunchKernel((const void *)kernels[k].stub, g, b, args, 0, s) != obs_cudaSuccess)
        failures++;
    launches++;
}

static void copy_token_back(int *host, const int *dev)
{
    if (cudaMemcpy(host, dev, sizeof *host, obs_cudaMemcpyDeviceToHost) != obs_cudaSuccess)
        failures++;
}

static int layers = 1, chunks = 1, step_input;
static obs_cudaGraphExec_t step_graph;

/* The prompt-sized iteration: grids scale with the prompt length; the
 * transformer layers repeat the same kernels; with --chunks the prompt is
 * processed in chunks, each ended by a stream sync, the token read after
 * the last. */
static void prompt_iteration(unsigned prompt_len, obs_cudaStream_t s, int *host_token, int *dev_token)
{
    int c, l;
    unsigned chunk_len = prompt_len / (unsigned)chunks;
    range_push("PREFILL");
    for (c = 0; c < chunks; c++) {
        launch(K_EMBED, chunk_len * 16, s);
        for (l = 0; l < layers; l++) {
            layer_mark(l);
            if (layer_norm)
                launch(K_NORM, chunk_len * 16, s);
            launch(K_KV_WRITE, chunk_len * 16, s);
            launch(K_ATTENTION, chunk_len * 64, s);
            launch(K_MLP, chunk_len * 64, s);
            layer_mark(-1);
        }
        if (c + 1 < chunks && cudaStreamSynchronize(s) != obs_cudaSuccess)
            failures++;
    }
    launch(K_LM_HEAD, 512, s);
    launch(K_SAMPLE, 1, s);
    copy_token_back(host_token, dev_token);
    range_pop();
}

/* A decode step's kernels (also what --graph-decode captures: truth 0,
 * no KV_GATHER ranges around launches that are not executions). */
static void step_kernels(obs_cudaStream_t s, int truth)
{
    int l;
    launch(K_EMBED, 16, s);
    for (l = 0; l < layers; l++) {
        layer_mark(l);
        if (layer_norm)
            launch(K_NORM, 16, s);
        if (truth)
            range_push("KV_GATHER");
        launch(K_KV_GATHER, 64, s);
        if (truth)
            range_pop();
        launch(K_ATTENTION, 64, s);
        launch(K_MLP, 64, s);
        layer_mark(-1);
    }
    launch(K_LM_HEAD, 512, s);
    launch(K_SAMPLE, 1, s);
}

/* --graph-decode: capture one step at start-up, as vLLM does before it
 * serves (its launches are not executions: ground truth GRAPH_CAPTURE). */
static void capture_step_graph(obs_cudaStream_t s)
{
    obs_cudaGraph_t graph = NULL;
    range_push("GRAPH_CAPTURE");
    if (cudaStreamBeginCapture(s, 0) != obs_cudaSuccess)
        failures++;
    step_kernels(s, 0);
    if (cudaStreamEndCapture(s, &graph) != obs_cudaSuccess ||
        cudaGraphInstantiate(&step_graph, graph, 0) != obs_cudaSuccess)
        failures++;
    range_pop();
    if (cudaStreamSynchronize(s) != obs_cudaSuccess)
        failures++;
}

static void token_step(int step, obs_cudaStream_t s, int *host_token, int *dev_token)
{
    char name[48];
    static char input[65536];
    snprintf(name, sizeof name, "DECODE/STEP_%d", step);
    if (step_input > 0 &&
        cudaMemcpyAsync(dev_token, input, (size_t)step_input, obs_cudaMemcpyHostToDevice, s) != obs_cudaSuccess)
        failures++;
    range_push(name);
    if (step_graph != NULL) {
        if (cudaGraphLaunch(step_graph, s) != obs_cudaSuccess)
            failures++;
        launches++;
    } else {
        step_kernels(s, 1);
    }
    copy_token_back(host_token, dev_token);
    range_pop();
}

static int arg_value(int argc, char **argv, const char *name, int fallback)
{
    size_t n = strlen(name);
    int i;
    for (i = 1; i < argc; i++) {
        if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=')
            return atoi(argv[i] + n + 1);
        if (strcmp(argv[i], name) == 0 && i + 1 < argc)
            return atoi(argv[i + 1]);
    }
    return fallback;
}

int main(int argc, char **argv)
{
    int steps = arg_value(argc, argv, "--steps", 16), prompts = arg_value(argc, argv, "--prompts", 2);
    int gap_ms = arg_value(argc, argv, "--gap-ms", 0), p, t;
    const char *log = getenv("OBS_SIM_LOG");
    obs_cudaStream_t s = NULL;
    int *dev_token = NULL, host_token = 0;
    static int prompt_tokens[16384];

    layers = arg_value(argc, argv, "--layers", 1);
    step_input = arg_value(argc, argv, "--step-input", 0);
    chunks = arg_value(argc, argv, "--chunks", 1);
    for (p = 1; p < argc; p++)
        layer_norm |= strcmp(argv[p], "--layer-norm") == 0;
    if (layers < 1 || chunks < 1 || chunks > 64 || step_input < 0 || step_input > 65536) {
        fprintf(stderr, "llm_loop: --layers >= 1, --chunks 1 to 64, --step-input 0 to 65536\n");
        return 2;
    }
    if (log != NULL && *log != '\0')
        truth_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (cudaStreamCreate(&s) != obs_cudaSuccess || cudaMalloc((void **)&dev_token, 65536) != obs_cudaSuccess) {
        fprintf(stderr, "llm_loop: no runtime\n");
        return 1;
    }
    for (p = 1; p < argc; p++)
        if (strcmp(argv[p], "--graph-decode") == 0)
            capture_step_graph(s);
    for (p = 0; p < prompts; p++) {
        unsigned prompt_len = 512u + 256u * (unsigned)p;
        if (p > 0 && gap_ms > 0) {
            struct timespec ts = {gap_ms / 1000, (long)(gap_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
        if (cudaMemcpy(dev_token, prompt_tokens, 4u * prompt_len, obs_cudaMemcpyHostToDevice) != obs_cudaSuccess)
            failures++;
        prompt_iteration(prompt_len, s, &host_token, dev_token);
        token_step(0, s, &host_token, dev_token);
        if (steps > 1)
            range_push("DECODE/STEADY");
        for (t = 1; t < steps; t++)
            token_step(t, s, &host_token, dev_token);
        if (steps > 1)
            range_pop();
    }
    cudaFree(dev_token);
    cudaStreamDestroy(s);
    __cudaUnregisterFatBinary(fatbin_handle);
    printf("generations %d launches %lu\n", prompts, launches);
    return failures == 0 ? 0 : 1;
}
