/* The phase engine under unit test: shim/phases/phase_engine.c linked, as
 * it is, with a stand-in for the layers below it (tests/engine_stub.c: the
 * record buffer, a virtual clock, kernel names, the live range sinks), and
 * fed sequences of calls as the wrappers would make them. Each case is a
 * line of the table below: the settings, the calls, and the truth written
 * into them as markers; the test checks, for every launch, the
 * generation, phase and step the trace gives it (BEGIN/END nesting and
 * RELABEL records, read as docs/trace-format.md says readers read them)
 * against the truth, and that the live ranges agree with the trace
 * wherever the trace did not relabel after the fact.
 *
 * Why linked with a stub rather than rebuilt with -DUNIT_TEST (uftrace's
 * way): the engine's public entry points (obs_phase_before/after) are what
 * a rewrite keeps, its static helpers are what it changes; the cases here
 * stay valid across a rewrite and the engine's source carries no test-only
 * branches. Each case runs in a forked child, so that each starts with the
 * engine not set up (its settings are read once per process) and nothing
 * learned.
 *
 * Cases the current engine gets wrong carry the reason as a TAP TODO
 * (automake: XFAIL), so make check stays green; one that passes prints a
 * plain ok and says "TODO case passes now". The engine rewrite of issue 22
 * takes the marks off.
 *
 * The call language (a case's `calls`), tokens separated by blanks:
 *   NAME[:SIZE]     a kernel launch (cudaLaunchKernel); SIZE = N (grid N,
 *                   block 1) or GxB; each number may be a product a*b and
 *                   end in k (x 1024); default 1
 *   graph           a graph launch (cudaGraphLaunch)
 *   h2d:N d2h:N d2d:N   cudaMemcpyAsync of N bytes in that direction
 *   H2D:N D2H:N     cudaMemcpy (synchronous: D2H is a host delimiter)
 *   memset:N        cudaMemsetAsync
 *   sync devsync evsync   cudaStreamSynchronize / DeviceSynchronize / EventSynchronize
 *   wait            cudaStreamWaitEvent (not a host delimiter)
 *   +N              N ms with no call (an idle gap: the thread blocked)
 *   +Nb             N ms with no call, the thread busy all of it (compiling)
 *   T0 .. T3        the calls that follow run on host thread 0 .. 3
 *   ( ... )*N       the group N times
 * and the truth, which applies to the launches that follow on the current
 * thread:
 *   @gen    a new generation: PREFILL of the thread's next generation
 *   @step   the next decode step (step 0 after the prompt)
 *   @steady DECODE/STEADY with no step (a graph launch holding the steps)
 *   @none   no phase (a warm-up whose labels come off)
 *   @iter   a serving loop's next iteration (ITERATION/k: one forward over
 *           a packed batch, prompts and decode tokens of several requests;
 *           the first after another phase begins the thread's next
 *           generation at ITERATION/0; docs/phases.md, "Serving loops")
 * and markers that change no label:
 *   @fwd    a forward of the model begins (the program's hook): the FIGURES
 *           line counts live labels from each thread's second forward on
 *           (its first teaches the engine the template)
 *   @ttft   where the program's TTFT ends: its first token's read returned
 *           (the call before), or, where it reads none, its prompt's
 *           forward returned (TTFT then ends at the first delimiter from
 *           here); carried for a TTFT check of the real cases, not made
 *           here (t_frameworks makes it on the programs themselves)
 * A launch is KV_GATHER inside a decode step when its name contains "kv"
 * (not as the end of "qkv": a fused projection).
 * A call token may end in =P, =D, =K, =S or =- to state its phase itself
 * (copies are checked only when they do), or =~: a launch captured into a
 * graph, not checked; before the next call that is not one, the graph of
 * those launches is instantiated (obs_phase_graph_layers with their
 * kernels as its nodes, in capture order), as the shim's hooks do.
 *
 * Labels in the messages: P<gen>, D<gen>.<step>, K<gen>.<step>, S<gen>,
 * I<gen>.<iteration>, - (none); live ranges carry no generation: P,
 * D.<step> ...
 *
 * Every case also runs with the decision log on (OBS_DEBUG=phases:4,
 * OBS_DEBUG_FILE in the test's directory): each line must have the shape
 * docs/phases.md gives, and a case's `log` pieces must each be in a line
 * (the signal that made a decision, named).
 *
 * OBS_ENGINE_DUMP=NAME prints every call of that case with its labels
 * and its decision log (OBS_ENGINE_DUMP=all: of every case); OBS_ENGINE_ENV=NAME=VALUE gives
 * every case one more setting (a development aid: what a threshold does
 * to the real cases), after the case's own. */
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine_stub.h"
#include "gz_text.h"
#include "phase_log_words.h"
#include "common/config.h"
#include "phases/phase_engine.h"
#include "phases/phase_machine.h"
#include "phases/phase_rules.h"
#include "record/graph_execs.h"
#include "record/record.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/kernel_base_name.h"


/* ---- the table ---------------------------------------------------------------------------------- */

struct engine_case {
    const char *name;    /* what it shows */
    const char *rule;    /* the rule of docs/phases.md, or the issue-22 shape, it covers */
    const char *env[4];  /* OBS_* settings of the case ("NAME=value") */
    const char *calls;   /* the calls with their truth */
    const char *todo;    /* NULL, or why the current engine gets it wrong */
    int launch_ranges;   /* OBS_NVTX_LAUNCH=1: each launch's range is its kernel's base name */
    const char *log[4];  /* what its decision log must say (OBS_DEBUG=phases:4), each a piece of one line */
};

/* A Hugging Face style eager forward pass over T tokens (a string of digits):
 * an embedding, 2 layers, the LM head over the last token and a sampler. */
#define HF_LAYER(T) "rms:" T "*64 qkv:" T "*192 rope:" T "*64 kv_write:" T "*64 attn:" T "*64 o_proj:" T "*64 up:" T "*256 act:" T "*256 down:" T "*64 "
#define HF_FORWARD(T) "embed:" T "*64 (" HF_LAYER(T) ")*2 lm_head:512 argmax:1 "
/* A serving loop's forward over a packed batch of T tokens: the embedding,
 * 2 layers, the LM head, the gather of the rows to sample (the embedding's
 * kernel again) and the sampler. */
#define SV_FORWARD(T) "embed:" T "*64 (" HF_LAYER(T) ")*2 lm_head:512 embed:4 argmax:1 "
/* The same with 4 layers: the layers repeat 3 times and more in one pass. */
#define HF_FORWARD4(T) "embed:" T "*64 (" HF_LAYER(T) ")*4 lm_head:512 argmax:1 "
/* The prompt's ids copied in (8 bytes a token), its pass, the token read
 * with a synchronous copy; a step: the pass over one token and its read. */
#define HF_PROMPT(T) "@gen h2d:" T "*8 " HF_FORWARD(T) "D2H:8 "
#define HF_STEP "@step " HF_FORWARD("1") "D2H:8 "

/* ggml (llama.cpp, the GPT-2 examples; CUDA backend): each evaluation of
 * T tokens copies its inputs in (ids, positions) and synchronises before
 * launching, then reads the logits back (async copy + sync), prompt
 * chunks included. */
#define GGML_LAYER(T) "norm:" T "*16 mul_mat:" T "*192 cpy_f32_f16:" T "*8 mul_mat:" T "*64 soft_max:" T "*16 mul_mat:" T "*64 add:" T "*64 norm:" T "*16 mul_mat:" T "*256 gelu:" T "*256 mul_mat:" T "*64 add:" T "*64 "
#define GGML_EVAL(T) "h2d:" T "*4 h2d:" T "*4 sync get_rows:" T "*64 (" GGML_LAYER(T) ")*2 norm:" T "*16 mul_mat:" T "*3141 d2h:201028 sync "

/* The reference workload (seed 000): a prefill kernel, then per step a KV
 * gather and a decode kernel; no copies, no sync inside a generation. */
#define WL_GEN(STEPS) "@gen prefill_kernel:16k (@step kv_gather_kernel:16k decode_kernel:16) *" STEPS " sync "

/* Layers (docs/layers.md), with their truth: @L<k> before a layer's first
 * launch, @L- before the first launch after the last. Synthetic shapes of
 * the kernels' order in Hugging Face models (the real traces' own order:
 * tests/engine_cases, checked by t_frameworks). Llama: two RMS norms and
 * two residual adds per layer, the final norm the same kernels as the
 * layers' first. */
#define LL_LAYER(T) "rms:" T "*64 qkv:" T "*192 rope:" T "*64 cat:" T "*64 attn:" T "*64 o_proj:" T "*64 add:" T "*64 rms:" T "*64 up:" T "*256 act:" T "*256 down:" T "*64 add:" T "*64 "
#define LL_FORWARD(T) "embed:" T "*64 cos:" T " sin:" T " @L0 " LL_LAYER(T) "@L1 " LL_LAYER(T) "@L2 " LL_LAYER(T) "@L3 " LL_LAYER(T) "@L- rms:" T "*64 lm_head:512 argmax:1 "
/* the first layer with one kernel of its own in place of another (a first dense layer's MLP) */
#define LL_LAYER0(T) "rms:" T "*64 qkv:" T "*192 rope:" T "*64 cat:" T "*64 attn:" T "*64 o_proj:" T "*64 add:" T "*64 rms:" T "*64 up:" T "*256 gelu:" T "*256 down:" T "*64 add:" T "*64 "
#define LL_FORWARD_FIRST(T) "embed:" T "*64 cos:" T " sin:" T " @L0 " LL_LAYER0(T) "@L1 " LL_LAYER(T) "@L2 " LL_LAYER(T) "@L3 " LL_LAYER(T) "@L4 " LL_LAYER(T) "@L- rms:" T "*64 lm_head:512 argmax:1 "
/* alternating kinds: a dense MLP, then a mixture of experts (router, top-k, E experts, combine), with or
 * without a shared expert (the dense MLP's kernels) */
#define ATTN_PART(T) "rms:" T "*64 qkv:" T "*192 rope:" T "*64 cat:" T "*64 attn:" T "*64 o_proj:" T "*64 add:" T "*64 rms:" T "*64 "
#define DENSE_MLP(T) "up:" T "*256 act:" T "*256 down:" T "*64 add:" T "*64 "
#define EXPERT(T) "index:" T " eup:" T "*128 eact:" T "*128 edown:" T "*64 index_add:" T "*64 "
#define MOE_MLP(T, EXPERTS) "router:" T "*8 softmax:" T "*8 topk:" T "*8 " EXPERTS "add:" T "*64 "
#define ALT_FORWARD(T) "embed:" T "*64 cos:" T " sin:" T " @L0 " ATTN_PART(T) DENSE_MLP(T) "@L1 " ATTN_PART(T) MOE_MLP(T, EXPERT(T) EXPERT(T)) "@L2 " ATTN_PART(T) DENSE_MLP(T) "@L3 " ATTN_PART(T) MOE_MLP(T, EXPERT(T) EXPERT(T)) "@L4 " ATTN_PART(T) DENSE_MLP(T) "@L5 " ATTN_PART(T) MOE_MLP(T, EXPERT(T) EXPERT(T)) "@L- rms:" T "*64 lm_head:512 argmax:1 "
#define SHARED_EXPERT(T) "up:" T "*256 act:" T "*256 down:" T "*64 "
#define ALT_SHARED_FORWARD(T) "embed:" T "*64 cos:" T " sin:" T " @L0 " ATTN_PART(T) DENSE_MLP(T) "@L1 " ATTN_PART(T) MOE_MLP(T, SHARED_EXPERT(T) EXPERT(T) EXPERT(T)) "@L2 " ATTN_PART(T) DENSE_MLP(T) "@L3 " ATTN_PART(T) MOE_MLP(T, SHARED_EXPERT(T) EXPERT(T)) "@L4 " ATTN_PART(T) DENSE_MLP(T) "@L5 " ATTN_PART(T) MOE_MLP(T, SHARED_EXPERT(T) EXPERT(T) EXPERT(T) EXPERT(T)) "@L- rms:" T "*64 lm_head:512 argmax:1 "
/* every layer a mixture of experts, 1 to 4 experts run per layer */
#define MOE_FORWARD(T, A, B, C, D) "embed:" T "*64 cos:" T " sin:" T " @L0 " ATTN_PART(T) MOE_MLP(T, A) "@L1 " ATTN_PART(T) MOE_MLP(T, B) "@L2 " ATTN_PART(T) MOE_MLP(T, C) "@L3 " ATTN_PART(T) MOE_MLP(T, D) "@L- rms:" T "*64 lm_head:512 argmax:1 "
/* GPT-2 shaped, with no kernel named a norm: the embeddings' add ends what precedes the stack as the residual
 * add ends each layer */
#define G2_LAYER(T) "ln:" T "*64 qkv:" T "*192 attn:" T "*64 proj:" T "*64 add:" T "*64 ln:" T "*64 fc:" T "*256 gelu:" T "*256 fc2:" T "*64 add:" T "*64 "
#define G2_FORWARD(T) "wte:" T "*64 wpe:" T "*64 add:" T "*64 @L0 " G2_LAYER(T) "@L1 " G2_LAYER(T) "@L2 " G2_LAYER(T) "@L3 " G2_LAYER(T) "@L- ln:" T "*64 lm_head:512 argmax:1 "
/* transformers' eager experts loop, as PyTorch runs it: the count of experts hit read back (nonzero, 4 bytes and
 * a sync), then per expert its token count the same way; the experts' GEMMs are the attention's GEMM kernel, the
 * loop's index copy the prologue's copy kernel (docs/phases.md, "Reads inside a forward") */
#define RD_ATTN(T) "rms:" T "*64 gemm:" T "*192 rope:" T "*64 attn:" T "*64 gemm:" T "*64 add:" T "*64 rms:" T "*64 "
#define RD_EXPERT(T) "copy:1 nonzero:1 d2h:4 sync gemm:" T "*128 act:" T "*128 gemm:" T "*64 index_add:" T "*64 "
#define RD_MOE(T, EXPERTS) "gemm:" T "*8 softmax:" T "*8 topk:" T "*8 nonzero:" T " d2h:4 sync " EXPERTS "add:" T "*64 "
#define RD_FORWARD(T, A, B, C) "embed:" T "*64 copy:" T " cos:" T " sin:" T " @L0 " RD_ATTN(T) RD_MOE(T, A) "@L1 " \
    RD_ATTN(T) RD_MOE(T, B) "@L2 " RD_ATTN(T) RD_MOE(T, C) "@L- rms:" T "*64 gemm:512 argmax:1 "
#define R1 RD_EXPERT("1")
#define R2 RD_EXPERT("1") RD_EXPERT("1")
#define E1 EXPERT("1")
#define E2 EXPERT("1") EXPERT("1")
#define E3 EXPERT("1") EXPERT("1") EXPERT("1")
#define E4 EXPERT("1") EXPERT("1") EXPERT("1") EXPERT("1")

static const struct engine_case cases[] = {
    /* ---- emission rule -------------------------------------------------------------------------- */
    {"a stream waiting for an event is no delimiter", "Emission rule; Rules: selectors (delimiters)", {NULL},
     HF_PROMPT("16") "(@step embed:64 wait mlp:64 wait mlp:64 D2H:8)*3", NULL, 0, {NULL}},
    {"the sync or token copy that ends a step falls inside it", "Emission rule",
     {NULL}, HF_PROMPT("16") "(@step embed:64 mlp:64 d2h:8=D sync=D)*3", NULL, 0, {NULL}},
    {"a prompt's PREFILL stays open past a plain sync, the next launch tells", "Emission rule (one exception)",
     {NULL}, "@gen h2d:4k (embed:2k*64 mlp:2k*64 sync=P)*3 embed:1k*64 mlp:1k*64 D2H:8 (@step embed:64 mlp:64 D2H:8)*3",
     NULL, 0, {NULL}},
    {"OBS_NVTX_LAUNCH=1: a range per launch inside the phase ranges, live only", "Emission rule (OBS_NVTX_LAUNCH)",
     {"OBS_NVTX_LAUNCH=1", NULL}, HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 1, {NULL}},

    /* ---- automatic mode, shape (b) ------------------------------------------------------------------ */
    {"token loop: the prompt, then one step per iteration", "Automatic (b): first iteration; next decode step",
     {NULL}, HF_PROMPT("16") "(" HF_STEP ")*5", NULL, 0, {"new-generation gen=0 because=no-generation-open", "decode-starts gen=0 step=0 because=forward", "step gen=0 step=1 because=forward", "gave-up because=copy-in"}},
    {"idle gap over OBS_GEN_GAP_MS starts a generation", "Automatic (b): idle gap", {NULL},
     HF_PROMPT("16") "(" HF_STEP ")*3 +1500 @gen " HF_FORWARD("1") "D2H:8 (" HF_STEP ")*2", NULL, 0, {"new-generation gen=1 because=idle-gap gap_ms=1500"}},
    {"a busy gap over OBS_GEN_GAP_MS does not (torch.compile compiling the step it was called for)",
     "Automatic (b): idle gap (busy)", {NULL},
     HF_PROMPT("16") "(" HF_STEP ")*3 +1500b " HF_STEP "(" HF_STEP ")*2", NULL, 0,
     {"busy-gap gen=0 step=2 because=thread-ran-through-it gap_ms=1500 cpu_ms=1500"}},
    {"idle gap under OBS_GEN_GAP_MS does not", "Automatic (b): idle gap (OBS_GEN_GAP_MS)",
     {"OBS_GEN_GAP_MS=5000", NULL}, HF_PROMPT("16") "(" HF_STEP ")*3 +1500 " HF_STEP "(" HF_STEP ")*2", NULL, 0, {NULL}},
    {"graph replay stopped: a new prompt", "Automatic (b): graph replay stopped", {NULL},
     HF_PROMPT("16") "(@step graph sample:1 D2H:8)*3 @gen " HF_FORWARD("1") "D2H:8 (@step graph sample:1 D2H:8)*3",
     NULL, 0, {"new-generation gen=1 because=graph-replay-stopped"}},
    {"more bytes in than 4x the steps' (serving loop: each step copies its input in)",
     "Automatic (b): copy in over 4x the decode steps'", {NULL},
     "@gen h2d:2k " HF_FORWARD("64") "D2H:8 (@step h2d:16 " HF_FORWARD("1") "D2H:8)*3 @gen h2d:1k " HF_FORWARD("64")
     "D2H:8 (@step h2d:16 " HF_FORWARD("1") "D2H:8)*3",
     NULL, 0, {"new-generation gen=1 because=copy-in-over-4x-steps htod=1024 steps_htod_max=16"}},
    {"any bytes in where the steps copy none (1-token prompt next)", "Automatic (b): copy in where steps copy none",
     {NULL}, HF_PROMPT("16") "(" HF_STEP ")*3 " HF_PROMPT("1") "(" HF_STEP ")*3", NULL, 0, {"new-generation gen=1 because=copy-in-over-4x-steps htod=8 steps_htod_max=0"}},
    {"a first launch 4x the steps' (no copy in)", "Automatic (b): first launch 4x the steps'", {NULL},
     HF_PROMPT("16") "(" HF_STEP ")*3 @gen " HF_FORWARD("16") "D2H:8 (" HF_STEP ")*3", NULL, 0, {"new-generation gen=1 because=first-launch-4x-steps"}},
    {"prompts with no decode step, back to back", "Automatic (b): before any decode step, a quarter of the last prompt's bytes",
     {NULL}, HF_PROMPT("64") HF_PROMPT("32") HF_PROMPT("48") HF_PROMPT("64"), NULL, 0, {"new-generation gen=3 because=copy-in-quarter-of-last-prompt"}},
    {"chunked prefill: chunks end in a sync and read no token", "Automatic (b): PREFILL goes on until the token read",
     {NULL}, "@gen h2d:8k (" HF_FORWARD("256") "sync)*3 " HF_FORWARD("128") "D2H:8 (" HF_STEP ")*3 "
     "@gen h2d:4k (" HF_FORWARD("256") "sync)*2 " HF_FORWARD("16") "D2H:8 (" HF_STEP ")*2", NULL, 0, {"prompt-chunk gen=0 because=the-last-forward-went-unread evidence=a-sync-that-read-nothing", "prompt-chunk gen=1 because=the-last-forward-went-unread evidence=no-read-after-its-stack"}},
    {"chunked prefill, a flag read inside the first chunk's forward (a mask check), then a second of busy host work "
     "(a loaded machine, a first call's set-up): the next chunk, first taken for step 0, is no step, and the "
     "stretch before it stays the prompt's",
     "Automatic (b): a busy stretch joins a decode step only after a token read",
     {NULL}, "@gen h2d:8k embed:64*64 D2H:1 +1500b (" HF_LAYER("64") ")*2 lm_head:512 argmax:1 D2H:1 "
     HF_FORWARD("64") "D2H:1 " HF_FORWARD("64") "D2H:8 (" HF_STEP ")*3", NULL, 0, {NULL}},
    {"chunked prefill whose last chunk is a quarter of the first (first prompt)",
     "Automatic (b): the next chunk at no less than a quarter of the prompt's size",
     {NULL}, "@gen h2d:8k " HF_FORWARD("256") "sync " HF_FORWARD("64") "D2H:8 (" HF_STEP ")*3", NULL, 0, {NULL}},
    {"chunked prefill whose next chunk starts with another kernel (first prompt)",
     "Automatic (b): PREFILL goes on until the token read (a chunk that starts with another kernel)",
     {NULL}, "@gen h2d:8k " HF_FORWARD("256") "sync rms:256*64 " HF_FORWARD("256") "D2H:8 (" HF_STEP ")*3", NULL, 0, {NULL}},
    {"a warm-up iteration before the first prompt loses its labels", "Automatic (b): warm-up", {NULL},
     "@none (embed:64 mlp:64)*2 sync " HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 0, {"warm-up gen=0 because=first-copy-in-after-launches-with-no-copy"}},
    {"two warm-up iterations before the first prompt", "Automatic (b): warm-up (several iterations)", {NULL},
     "@none (embed:64 mlp:64 sync)*2 " HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 0, {"warm-up gen=0 because=first-copy-in-after-launches-with-no-copy"}},
    {"a warm-up with no delimiter before the first prompt's copy (vLLM's graphs captured at start-up)",
     "Automatic (b): warm-up (the first copy in)", {NULL},
     "@none (embed:64 mlp:64)*3 " HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 0,
     {"warm-up gen=0 because=first-copy-in-after-launches-with-no-copy"}},
    {"KV kernels: KV_GATHER inside a step, PREFILL inside the prompt", "Automatic (b): KV_GATHER globs", {NULL},
     "@gen h2d:128 embed:1k kv_gather:1k mlp:1k D2H:8 (@step embed:64 kv_gather:64 mlp:64 D2H:8)*3", NULL, 0, {NULL}},
    {"a graph launch in a step is that step's launch", "Automatic (b): next decode step (graph launch)", {NULL},
     HF_PROMPT("16") "(@step graph D2H:8)*4", NULL, 0, {NULL}},
    {"two threads, each its own generations", "Automatic: per thread", {NULL},
     "T0 " HF_PROMPT("16") "T1 " HF_PROMPT("32") "T0 " HF_STEP "T1 " HF_STEP HF_STEP "T0 " HF_STEP HF_PROMPT("8")
     "T1 " HF_STEP "T0 " HF_STEP, NULL, 0, {NULL}},
    {"a step that reads back twice (token, then a stop flag)", "Automatic (b): work after the token read stays in its step (a stop flag read back)", {NULL},
     HF_PROMPT("16") "(@step " HF_FORWARD("1") "D2H:8 flag:1 D2H:4)*3", NULL, 0, {"decode-starts gen=0 step=0 because=forward", "step gen=0 step=2 because=forward threads=64 htod=0 graph=0 read_bytes=4"}},
    {"a new 1-token prompt at once, copying no more than a step", "Limits (b): a token-sized prompt that follows at once",
     {NULL}, "@gen h2d:128 " HF_FORWARD("16") "D2H:8 (@step h2d:8 " HF_FORWARD("1") "D2H:8)*3 @gen h2d:8 " HF_FORWARD("1")
     "D2H:8 (@step h2d:8 " HF_FORWARD("1") "D2H:8)*2",
     "docs/phases.md Limits: no signal tells this prompt from a step (new_prompt: no copy-in, size or graph signal)", 0, {NULL}},

    /* ---- automatic mode, shape (a) ------------------------------------------------------------------ */
    {"reference workload: the step unit learned, the window relabelled", "Automatic (a): unit, opener, prefix", {NULL},
     WL_GEN("5") WL_GEN("5") WL_GEN("4"),
     NULL, 0, {"learned because=unit-repeated-3-times unit=2,3 opener=2", "new-generation gen=1 because=prefix-kernel", "step gen=1 step=1 because=opener-kernel"}},
    {"after a sync the learned state carries on; a graph in the decode is STEADY", "Automatic (a): after a sync", {NULL},
     WL_GEN("4") "(@step kv_gather_kernel:16k decode_kernel:16)*2 sync @steady graph sync " WL_GEN("3"), NULL, 0, {NULL}},
    {"a kernel never seen before stays in the current phase", "Automatic (a): unknown kernel", {NULL},
     WL_GEN("4") "(@step kv_gather_kernel:16k decode_kernel:16 other:1)*1 " WL_GEN("3"), NULL, 0, {NULL}},
    {"a unit with no KV kernel: steps have no KV_GATHER", "Automatic (a): KV_GATHER by name", {NULL},
     "@gen prefill_kernel:16k (@step attn:16 decode_kernel:16)*5 sync", NULL, 0, {NULL}},
    {"one kernel repeated is no unit", "Automatic (a): a unit of one kernel", {NULL},
     "@gen prefill_kernel:16k (decode_kernel:16)*12 sync @step (decode_kernel:16)*4 sync", NULL, 0, {NULL}},
    {"the first copy drops what was learned: a warm-up", "Automatic (a): the first copy makes a token loop",
     {NULL}, "@none " "prefill_kernel:16k (kv_gather_kernel:16k decode_kernel:16)*4 sync " HF_PROMPT("16") "(" HF_STEP ")*3",
     NULL, 0, {"learned-dropped because=first-copy-in"}},
    {"forwards after the weights' copies that read nothing back, then a prompt: a warm-up; the prompt's input "
     "copies take no phase, as a thread's first prompt's", "Automatic (b): a warm-up after the weights came in",
     {NULL}, "H2D:65536 @none h2d:128 sync " HF_FORWARD4("16") "(h2d:8 " HF_FORWARD4("1") ")*2 devsync "
     "h2d:128=- sync=- memset:4096=- @gen " HF_FORWARD4("16") "D2H:8 (@step " HF_FORWARD4("1") "D2H:8)*3",
     NULL, 0, {"because=generation-0-read-nothing-back unlabelled_from_record"}},
    {"16384 launches with no unit: shape (b) for good", "Automatic (a): the window fills", {NULL},
     "@gen a:64 b:64 c:64 sync (@step a:1 b:1 c:1 sync)*5500 @step (x:1 y:1)*6 sync", NULL, 0, {"gave-up because=window-full launches=16384"}},
    {"a prefix ending with the unit's second kernel", "Limits (a): P D K D K shifts the step boundary",
     {NULL}, "@gen prefill_kernel:16k decode_kernel:16 (@step kv_gather_kernel:16k decode_kernel:16)*5",
     "docs/phases.md Limits: the unit is aligned to where its repetition starts (learn_online)", 0, {NULL}},
    {"a prefix ending with the unit's second kernel, with OBS_STEP", "Limits (a): what rules say for P D K D K",
     {"OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*", "OBS_STEP=kv_gather*", NULL},
     "@gen prefill_kernel:16k decode_kernel:16 (@step kv_gather_kernel:16k decode_kernel:16)*5", NULL, 0, {NULL}},
    {"steps that repeat layers, no sync, no copy", "Limits (a): layers read as steps", {NULL},
     "@gen prefill_kernel:16k (@step (kv_attn:64 mlp:64)*3 lm_head:16)*5",
     "docs/phases.md Limits: the shortest period is the unit (learn_online takes the first period that repeats 3 times)",
     0, {NULL}},

    /* ---- rules ------------------------------------------------------------------------------------ */
    {"rules, OBS_ITERATION: each forward of a serving loop an iteration, opened by its embedding's first launch "
     "after the sampled ids' read (the logits' gather after the head, the same kernel, opens none); the set-up's "
     "launches before the first none",
     "Rules: OBS_ITERATION", {"OBS_ITERATION=embed", NULL},
     "@none init:4096 init:4096 (@iter h2d:512 " SV_FORWARD("64") "D2H:32)*3 (@iter h2d:64 " SV_FORWARD("4")
     "D2H:32)*4", NULL, 0, {"iteration-begins gen=0 because=OBS_ITERATION"}},
    {"rules, OBS_ITERATION: an idle gap over OBS_GEN_GAP_MS, and the next iteration is ITERATION/0 of the next "
     "generation (a busy one is not)",
     "Rules: OBS_ITERATION (idle gap)", {"OBS_ITERATION=embed", NULL},
     "(@iter h2d:512 " SV_FORWARD("64") "D2H:32)*2 +1500b (@iter h2d:64 " SV_FORWARD("4") "D2H:32)*2 +1500 @none "
     "(@iter h2d:512 " SV_FORWARD("64") "D2H:32)*2",
     NULL, 0, {"iteration-begins gen=1 because=OBS_ITERATION-after-an-idle-gap"}},
    {"rules: forwards after the weights' copies, each copying its input in and reading nothing (a warm-up before a "
     "capture), lose their labels when the prompt's iteration begins: generation 0 begins there, as in automatic "
     "mode",
     "Rules: a warm-up after the weights came in",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;DECODE=sample*", "OBS_STEP=embed", NULL},
     "H2D:4096 H2D:4096 @none (h2d:32 embed:64 attn:64 mlp:64 sync)*3 @gen h2d:64 embed:64 attn:64 mlp:64 sample:1 "
     "D2H:8 (@step graph sample:1 D2H:8)*3 @gen h2d:64 embed:64 attn:64 mlp:64 sample:1 D2H:8 (@step graph sample:1 "
     "D2H:8)*2",
     NULL, 0, {"warm-up gen=0 because=generation-0-read-nothing-back-and-inputs-came-in"}},
    {"rules: copies in and syncs inside the first prompt's forward (a static cache made layer by layer) begin no "
     "forward: no warm-up",
     "Rules: a warm-up after the weights came in (copies inside a forward)",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;DECODE=sample*", "OBS_STEP=embed", NULL},
     "H2D:4096 @gen h2d:32 embed:64 attn:64 sync h2d:32 attn:64 sync h2d:32 attn:64 mlp:64 sample:1 D2H:8 (@step "
     "graph sample:1 D2H:8)*3",
     NULL, 0, {NULL}},
    {"rules: a first prompt in chunks, each copied in, reading nothing between them", "Limits (rules): a first "
     "prompt's chunks copied in one by one",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;DECODE=sample*", "OBS_STEP=embed", NULL},
     "H2D:4096 @gen (h2d:32 embed:64 attn:64 mlp:64 sync)*2 h2d:32 embed:64 attn:64 mlp:64 sample:1 D2H:8 (@step "
     "graph sample:1 D2H:8)*3",
     "docs/phases.md Rules: a generation 0 that read nothing back when an iter:after: iteration begins was a warm-up "
     "(rules_warm_up); a size selector keeps such chunks",
     0, {NULL}},
    {"reference rules with OBS_STEP", "Rules: OBS_STEP opens the next step",
     {"OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*", "OBS_STEP=kv_gather*", NULL},
     WL_GEN("5") WL_GEN("3"), NULL, 0, {"new-generation gen=1 because=rule-PREFILL", "step gen=0 step=1 because=OBS_STEP", "name id=2 base=kv_gather_kernel mangled=kv_gather_kernel rule=KV_GATHER OBS_STEP=yes"}},
    {"rules without OBS_STEP: the opener kernel or the first launch after a sync",
     "Rules: a new step without OBS_STEP",
     {"OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*,sample*", NULL},
     WL_GEN("5") "@gen prefill_kernel:16k D2H:4 (@step decode_kernel:16 sample:1 D2H:4)*3", NULL, 0, {"because=opener-kernel-again", "because=first-launch-after-token-read"}},
    {"rules without OBS_STEP, no token read: the first launch after a sync", "Rules: a new step without OBS_STEP (no token read)",
     {"OBS_PHASES=PREFILL=prefill_*;DECODE=decode_*,sample*", NULL},
     "@gen prefill_kernel:16k sync (@step decode_kernel:16 sample:1 sync)*3", NULL, 0, {"because=first-launch-after-delimiter"}},
    {"rules: iter:until:token keeps a prompt's iterations in PREFILL until its token read; with OBS_STEP only its "
     "kernel opens a step, the work after a token read stays",
     "Rules: iter:until:token; OBS_STEP opens the decode",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;KV_GATHER=kv_*;DECODE=*", "OBS_STEP=embed_sel", NULL},
     "@gen h2d:24 sync h2d:24 sync prep:128 D2H:1 embed_sel:768 mask:128 d2h:1 sync " HF_FORWARD("3")
     "d2h:8 sync stop:1 d2h:1 sync "
     "(@step d2d:8 embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("1") "d2h:8 sync stop:1 d2h:1 sync)*4 "
     "@gen h2d:64 sync h2d:64 sync prep:128 D2H:1 embed_sel:2k mask:128 d2h:1 sync " HF_FORWARD("8")
     "d2h:32 sync stop:4 d2h:1 sync act:128=P "
     "(@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "d2h:32 sync stop:4 d2h:1 sync act:128)*3",
     NULL, 0, {"iteration-selected phase=PREFILL because=selector after=0x6004", "step gen=1 step=2 because=OBS_STEP"}},
    {"rules: iter:until:forward keeps a prompt that reads no token in PREFILL through its forward, until the "
     "next OBS_STEP launch (Hugging Face generate() with no streamer: a 1-byte stop flag read, no token)",
     "Rules: iter:until:forward",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:forward;KV_GATHER=kv_*;DECODE=*", "OBS_STEP=embed_sel", NULL},
     "@gen h2d:24 sync h2d:24 sync prep:128 D2H:1 embed_sel:768 mask:128 d2h:1 sync " HF_FORWARD("3")
     "stop:1 d2h:1 sync "
     "(@step d2d:8 embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("1") "stop:1 d2h:1 sync)*4 "
     "@gen h2d:64 sync h2d:64 sync prep:128 D2H:1 embed_sel:2k mask:128 d2h:1 sync " HF_FORWARD("8")
     "stop:4 d2h:1 sync "
     "(@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "stop:4 d2h:1 sync)*3",
     NULL, 0, {"decode-starts gen=0 step=0 because=second-forward",
               "new-generation gen=1 because=rule-PREFILL", "step gen=1 step=2 because=OBS_STEP"}},
    {"rules: iter:until:forward ends mid-iteration at the second forward: tokens kept on the device, no sync "
     "between forwards, read once after the generation",
     "Rules: iter:until:forward",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:forward;KV_GATHER=kv_*;DECODE=*", "OBS_STEP=embed_sel", NULL},
     "@gen h2d:24 sync embed_sel:768 " HF_FORWARD("3") "(fill:1 @step embed_sel:256 " HF_FORWARD("1") ")*4 cat:8 D2H:40 "
     "@gen h2d:64 sync embed_sel:2k " HF_FORWARD("8") "(fill:1 @step embed_sel:256 " HF_FORWARD("1") ")*4 cat:8 D2H:40",
     NULL, 0, {"decode-starts gen=0 step=0 because=second-forward",
               "step gen=1 step=3 because=OBS_STEP"}},
    {"rules: launches before the first copy in that read nothing are a warm-up", "Rules: a warm-up",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;KV_GATHER=kv_*;DECODE=*", NULL},
     "@none (embed:64 mlp:64)*3 " HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 0,
     {"warm-up gen=0 because=first-copy-in-after-launches-with-no-copy"}},
    {"globs match base names of mangled names", "Rules: base names",
     {"OBS_PHASES=PREFILL=prefill_kernel;DECODE=decode_kernel", NULL},
     "@gen _Z14prefill_kernelPfPKfii:16k (@step _ZN2ns13decode_kernelILi4EEEvPfi:16 sync)*3", NULL, 0, {NULL}},
    {"patterns in order, first match wins", "Rules: first match", {"OBS_PHASES=PREFILL=pre*;DECODE=pre_dec*,dec*", NULL},
     "@gen pre:1k pre_dec:1k (@step dec:1 sync)*2", NULL, 0, {NULL}},
    {"a launch no rule names stays in its phase (none before any)", "Rules: unnamed launches",
     {"OBS_PHASES=PREFILL=prefill*;DECODE=decode*", NULL},
     "other:1 @gen prefill:1k other:1 @step decode:1 other:1 sync @step decode:1 other:1 sync", NULL, 0, {NULL}},
    {"a KV_GATHER match in PREFILL starts the decode", "Rules: KV_GATHER sub-phase",
     {"OBS_PHASES=PREFILL=prefill*;KV_GATHER=kv*;DECODE=decode*", NULL},
     "@gen prefill:1k (@step kv_gather:1k decode:16)*4", NULL, 0, {"decode-starts gen=0 step=0 because=rule-KV_GATHER"}},
    {"named copies and memsets take their phase, open no step", "Rules: memcpy:KIND, memset",
     {"OBS_PHASES=PREFILL=memcpy:HtoD,memset,prefill*;DECODE=decode*", NULL},
     "@gen h2d:2k=P memset:64=P prefill:1k D2H:8 (@step decode:1 D2H:8)*2 @gen memset:64=P h2d:1k=P prefill:1k D2H:8 "
     "(@step decode:1 D2H:8)*2",
     NULL, 0, {"new-generation gen=0 because=rule-names-this-copy-or-memset"}},
    {"size conditions on the launch", "Rules: conditions",
     {"OBS_PHASES=PREFILL=embed*[threads>=64k],gemm*[grid>=128][block=256];KV_GATHER=kv_*;DECODE=embed*,gemm*", NULL},
     "@gen embed:256x256 gemm:256x256 D2H:8 (@step embed:1x256 gemm:1x256 kv_write:1 D2H:8)*3 "
     "@gen embed:512x256 gemm:128x256 D2H:8 (@step embed:1x256 gemm:127x256 D2H:8)*2",
     NULL, 0, {NULL}},
    {"selector iter:after:memcpy:HtoD (Hugging Face eager)", "Rules: iter:after:memcpy",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;KV_GATHER=kv_*;DECODE=*", NULL},
     HF_PROMPT("16") "(" HF_STEP ")*3 " HF_PROMPT("4") "(" HF_STEP ")*3", NULL, 0, {"iteration-selected phase=PREFILL because=selector", "new-generation gen=1 because=rule-PREFILL"}},
    {"a synchronous read that delimits counts for the iteration after it", "Rules: iter:after:memcpy:DtoH",
     {"OBS_PHASES=DECODE=iter:after:memcpy:DtoH;PREFILL=*", NULL},
     "@gen embed:1k mlp:1k D2H:8 (@step embed:1 mlp:1 D2H:8)*3", NULL, 0, {NULL}},
    {"a named copy in a selected iteration takes the iteration's phase", "Rules: copies inside selected iterations",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;DECODE=*,memcpy:DtoH", NULL},
     "@gen h2d:128 embed:1k mlp:1k D2H:8=P (@step embed:1 mlp:1 D2H:8=D)*3", NULL, 0, {NULL}},
    {"selector iter:after:memset", "Rules: iter:after:memset",
     {"OBS_PHASES=PREFILL=iter:after:memset;DECODE=*", NULL},
     "@gen memset:64 embed:1k mlp:1k D2H:8 (@step embed:1 mlp:1 D2H:8)*3", NULL, 0, {NULL}},
    {"selector on the first kernel's size selects every chunk", "Rules: iter:glob[cond]",
     {"OBS_PHASES=PREFILL=iter:embed*[threads>=65536];KV_GATHER=kv_*;DECODE=*", NULL},
     "@gen h2d:8k (" HF_FORWARD("2048") "sync)*3 " HF_FORWARD("1024") "D2H:8 (" HF_STEP ")*3", NULL, 0, {NULL}},
    {"selector iter:after:memcpy:HtoD selects only a chunked prompt's first chunk", "Rules: iter:after (limit)",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;KV_GATHER=kv_*;DECODE=*", NULL},
     "@gen h2d:8k " HF_FORWARD("2048") "sync (@step " HF_FORWARD("2048") "sync)*2 @step " HF_FORWARD("1024") "D2H:8 ("
     HF_STEP ")*3",
     NULL, 0, {NULL}},
    {"both selectors: every chunk", "Rules: selectors in order",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:embed*[threads>=65536];KV_GATHER=kv_*;DECODE=*", NULL},
     "@gen h2d:8k (" HF_FORWARD("2048") "sync)*3 " HF_FORWARD("1024") "D2H:8 (" HF_STEP ")*3", NULL, 0, {NULL}},
    {"a graph launch: the selected iteration's; after a token read, the next step's", "Rules: graph launches",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD;DECODE=*", NULL},
     "@gen h2d:64 graph D2H:8 @step embed:1 D2H:8 @step graph D2H:8 @step graph D2H:8", NULL, 0,
     {"step gen=0 step=1 because=graph-launch-after-token-read"}},
    {"rules with OBS_STEP: a graph launch after a token read opens the next step (a decode step captured once, "
     "replayed; the fill of its inputs before the replay stays where it is)",
     "Rules: graph launches (OBS_STEP)",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;DECODE=*", "OBS_STEP=embed_sel", NULL},
     "@gen h2d:24 sync embed_sel:768 mlp:768 D2H:8 fill:1 @step graph argmax:1 D2H:8 "
     "(fill:1 @step graph argmax:1 D2H:8)*3 "
     "@gen h2d:64 sync embed_sel:2k mlp:2k D2H:8 fill:1 @step graph argmax:1 D2H:8 "
     "(fill:1 @step graph argmax:1 D2H:8)*2",
     NULL, 0, {"decode-starts gen=0 step=0 because=graph-launch-after-token-read",
               "step gen=1 step=2 because=graph-launch-after-token-read"}},
    {"rules with [bytes]: a torch.compile'd step's CUDA graph tree (its first two calls eager, compiling and "
     "recording, then replays; each step copies 8 bytes in, a prompt its ids, 24 and 72; OBS_STEP names the two "
     "eager steps' openers, graph launches open the rest)",
     "Rules: copy sizes ([bytes])",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD[bytes>=16],iter:until:token;DECODE=*",
      "OBS_STEP=vec,triton_embed", NULL},
     "@gen h2d:24 sync embed:768 vec:768 mlp:768 D2H:8 h2d:8 sync "
     "@step vec:1 triton_embed:1 mlp:1 vec:1 D2H:8 h2d:8 sync fill:1 "
     "@step triton_embed:1 mlp:1 graph D2H:8 h2d:8 sync fill:1 "
     "(@step graph D2H:8 h2d:8 sync fill:1)*3 "
     "memset:4096 @gen h2d:72 sync embed:2k vec:2k mlp:2k D2H:8 h2d:8 sync fill:1 "
     "(@step graph D2H:8 h2d:8 sync fill:1)*3",
     NULL, 0, {"new-generation gen=1 because=rule-PREFILL",
               "step gen=0 step=1 because=OBS_STEP", "step gen=0 step=2 because=graph-launch-after-token-read"}},
    {"a graph launch in the decode of a loop that reads no token: STEADY", "Rules: graph launches (no token read)",
     {"OBS_PHASES=PREFILL=prefill*;DECODE=decode*", NULL},
     "@gen prefill:1k sync @step decode:1 sync @steady graph sync graph sync", NULL, 0, {NULL}},
    {"a bad rule: automatic mode", "Rules: bad rules", {"OBS_PHASES=PREFILL=prefill_*;F", NULL},
     HF_PROMPT("16") "(" HF_STEP ")*3", NULL, 0, {"fallback because=bad-rule variable=OBS_PHASES column=19 mode=auto"}},
    {"OBS_PHASES=off: no phases", "OBS_PHASES=off", {"OBS_PHASES=off", NULL},
     "@none h2d:128 " HF_FORWARD("16") "D2H:8 (" HF_FORWARD("1") "D2H:8)*3", NULL, 0, {"set-up mode=off because=OBS_PHASES=off"}},

    /* ---- framework shapes of issue 22 --------------------------------------------------------------- */
    {"ggml: an ordinary prompt", "Issue 22: loops that copy inputs in and sync before every step", {NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*6 @gen " GGML_EVAL("24") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {NULL}},
    {"ggml: a 1-token prompt", "Issue 22: prompts of 1-4 tokens", {NULL},
     "@gen " GGML_EVAL("1") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {"was-a-step gen=0 because=next-iteration-looks-the-same"}},
    {"ggml: a 2-token prompt", "Issue 22: prompts of 1-4 tokens", {NULL},
     "@gen " GGML_EVAL("2") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {"was-a-step gen=0 because=next-iteration-looks-the-same"}},
    {"ggml: a 2-token prompt, with a size selector", "Issue 22: what rules can say (docs/phases.md example)",
     {"OBS_PHASES=PREFILL=iter:get_rows*[threads>=128];DECODE=*", NULL},
     "@gen " GGML_EVAL("2") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {NULL}},
    {"ggml: a 4-token prompt", "Issue 22: prompts of 1-4 tokens", {NULL},
     "@gen " GGML_EVAL("4") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {"was-a-step gen=0 because=next-iteration-looks-the-same"}},
    {"ggml: a 2-token prompt after an ordinary one", "Issue 22: prompts of 1-4 tokens", {NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*3 @gen " GGML_EVAL("2") "(@step " GGML_EVAL("1") ")*3",
     "issue 22: after decode steps new_prompt needs a copy-in (never seen: ggml syncs after it) or a first launch at "
     "least 4x the steps' (2 tokens is 2x): the short prompt reads as the next decode step",
     0, {NULL}},
    {"ggml: a 2-token prompt after an ordinary one, with a size selector",
     "Limits (b): what rules say for a token-sized prompt that follows at once",
     {"OBS_PHASES=PREFILL=iter:get_rows*[threads>=128];DECODE=*", NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*3 @gen " GGML_EVAL("2") "(@step " GGML_EVAL("1") ")*3", NULL,
     0, {NULL}},
    {"ggml: a prompt in chunks that each read their logits (-b 4)", "Issue 22: prompts in chunks that each read logits",
     {NULL}, "@gen " GGML_EVAL("4") GGML_EVAL("4") GGML_EVAL("4") GGML_EVAL("4") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {"was-a-step gen=0 because=next-iteration-looks-the-same", "prompt-chunks gen=0 because=steps-looked-like-the-prompt-then-a-smaller-one steps=3"}},
    {"ggml: a prompt in chunks of 32 + 2", "Issue 22: 32+2 chunks", {NULL},
     "@gen " GGML_EVAL("32") GGML_EVAL("2") "(@step " GGML_EVAL("1") ")*4", NULL, 0, {"prompt-chunks gen=0 because=step0-larger-than-the-next steps=1"}},
    {"ggml: 4 sequences decoded in parallel (-np 4)", "Issue 22: 4 parallel sequences per step", {NULL},
     "@gen " GGML_EVAL("8") "(@step " GGML_EVAL("4") ")*5", NULL, 0, {"was-a-step gen=0 because=next-iteration-looks-the-same"}},
    {"ggml: a later prompt in chunks of 4 that each read their logits", "Issue 22: chunks after decode steps", {NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*3 @gen " GGML_EVAL("4") GGML_EVAL("4") GGML_EVAL("4")
     "(@step " GGML_EVAL("1") ")*3", NULL, 0,
     {"was-a-step gen=1 because=next-iteration-looks-the-same", "prompt-chunks gen=1 because=steps-looked-like-the-prompt-then-a-smaller-one"}},
    {"ggml: later prompts in two chunks that read their logits, then steps", "Issue 22: a prompt's last chunk", {NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*3 @gen " GGML_EVAL("4") GGML_EVAL("4") "(@step " GGML_EVAL("1")
     ")*3 @gen " GGML_EVAL("32") GGML_EVAL("8") "(@step " GGML_EVAL("1") ")*3", NULL, 0,
     {"was-a-prompt-chunk gen=1 because=next-iteration-smaller-and-copies-in", "was-a-prompt-chunk gen=2"}},
    {"ggml: a first prompt in two equal chunks that read their logits", "Limits (b): a first prompt in two chunks", {NULL},
     "@gen " GGML_EVAL("4") GGML_EVAL("4") "(@step " GGML_EVAL("1") ")*3",
     "docs/phases.md Limits: with no decode step seen yet, the second chunk reads as a new prompt (a quarter of the "
     "first's bytes) and the step after it cannot tell a last chunk from a new prompt of a scoring loop", 0, {NULL}},
    {"ggml: a first prompt in two equal chunks that read their logits, with a size selector",
     "Limits (b): what rules say for a first prompt in two chunks",
     {"OBS_PHASES=PREFILL=iter:get_rows*[threads>=128];DECODE=*", NULL},
     "@gen " GGML_EVAL("4") GGML_EVAL("4") "(@step " GGML_EVAL("1") ")*3", NULL, 0, {NULL}},
    {"ggml: a 2-token prompt after decode steps, the KV cache cleared first (llama.cpp)",
     "Automatic (b): a memset before the first launch where steps had none", {NULL},
     "@gen " GGML_EVAL("32") "(@step " GGML_EVAL("1") ")*3 @gen memset:65536 sync " GGML_EVAL("2") "(@step " GGML_EVAL("1")
     ")*3", NULL, 0, {"new-generation gen=1 because=memset-before-first-launch"}},
    {"Hugging Face generate (real): a stop check after each token read, the next forward's mask check, padded inputs "
     "prepared before the next forward",
     "Automatic (b): work after the read stays in its step; the last step ends where no forward begins", {NULL},
     "@gen h2d:24 sync h2d:24 sync prep:128 D2H:1 embed_sel:768 mask:128 d2h:1 sync " HF_FORWARD4("3")
     "d2h:8 sync stop:1 d2h:1 sync "
     "(@step d2d:8 embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD4("1") "d2h:8 sync stop:1 d2h:1 sync)*4 "
     "@gen h2d:64 sync h2d:64 sync prep:128 D2H:1 embed_sel:2k mask:128 d2h:1 sync " HF_FORWARD4("8")
     "d2h:32 sync stop:4 d2h:1 sync act:128=P "
     "(@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD4("4") "d2h:32 sync stop:4 d2h:1 sync act:128)*3 "
     "@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD4("4") "d2h:32 sync stop:4 d2h:1 sync @none act:128 d2h:192 sync",
     NULL, 0, {"decode-starts gen=0 step=0 because=forward", "not-a-step gen=1 step=3 because=no-forward-where-the-next-step-begins iteration=2"}},
    {"a model of 2 layers: its output sliced after generate() returned",
     "Limits (b): a stack of fewer than 3 layers", {NULL},
     "@gen h2d:24 sync h2d:24 sync prep:128 D2H:1 embed_sel:768 mask:128 d2h:1 sync " HF_FORWARD("3")
     "d2h:8 sync stop:1 d2h:1 sync "
     "(@step d2d:8 embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("1") "d2h:8 sync stop:1 d2h:1 sync)*4 "
     "@gen h2d:64 sync h2d:64 sync prep:128 D2H:1 embed_sel:2k mask:128 d2h:1 sync " HF_FORWARD("8")
     "d2h:32 sync stop:4 d2h:1 sync act:128=P "
     "(@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "d2h:32 sync stop:4 d2h:1 sync act:128)*3 "
     "@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "d2h:32 sync stop:4 d2h:1 sync @none act:128 d2h:192 sync",
     "docs/phases.md Limits: the stack's end is found from 3 layers on (layer_stack_end): with 2, the token read after it is not seen, the last step's iterations are not numbered, the output slicing stays in the last step", 0, {NULL}},
    {"Hugging Face generate (real) with suggest-phases' rules: the output sliced after generate() is no step",
     "Rules: OBS_STEP, a decode iteration that reads a token with no OBS_STEP launch since the last is no step",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;KV_GATHER=kv_*;DECODE=*", "OBS_STEP=embed_sel", NULL},
     "@gen h2d:24 sync h2d:24 sync prep:128 D2H:1 embed_sel:768 mask:128 d2h:1 sync " HF_FORWARD("3")
     "d2h:8 sync stop:1 d2h:1 sync "
     "(@step d2d:8 embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("1") "d2h:8 sync stop:1 d2h:1 sync)*4 "
     "@gen h2d:64 sync h2d:64 sync prep:128 D2H:1 embed_sel:2k mask:128 d2h:1 sync " HF_FORWARD("8")
     "d2h:32 sync stop:4 d2h:1 sync act:128=P "
     "(@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "d2h:32 sync stop:4 d2h:1 sync act:128)*3 "
     "@step embed_sel:256 mask:128 d2h:1 sync " HF_FORWARD("4") "d2h:32 sync stop:4 d2h:1 sync @none act:128 d2h:192 sync",
     NULL, 0, {"not-a-step gen=1 step=3 because=token-read-with-no-OBS_STEP-launch-since-the-last", NULL}},
    {"a loop that copies nothing in before its prompt", "Issue 22: a loop that copies nothing before its prompt", {NULL},
     "@gen " HF_FORWARD4("16") "D2H:8 (@step " HF_FORWARD4("1") "D2H:8)*5", NULL, 0, {"unit-noted", "gave-up because=copy-out"}},
    {"Hugging Face: prompts of 16, 1, 4 and 2 tokens back to back", "Issue 22: prompts of 1-4 tokens (HF copies them in)",
     {NULL}, HF_PROMPT("16") "(" HF_STEP ")*3 " HF_PROMPT("1") "(" HF_STEP ")*3 " HF_PROMPT("4") "(" HF_STEP ")*2 "
     HF_PROMPT("2") "(" HF_STEP ")*2", NULL, 0, {NULL}},
    {"Hugging Face: a batch of 4 sequences", "Issue 22: parallel sequences (one batch)", {NULL},
     "@gen h2d:4*16*8 " HF_FORWARD("64") "D2H:32 (@step " HF_FORWARD("4") "D2H:32)*4", NULL, 0, {NULL}},
    {"serving loop: inputs copied in and a sync before every step", "Issue 22: loops that copy inputs in and sync",
     {NULL}, "@gen h2d:2k=- sync=- " HF_FORWARD("256") "d2h:8 sync (@step h2d:16 sync " HF_FORWARD("1") "d2h:8=D sync=D)*4 "
     "@gen h2d:1k sync " HF_FORWARD("128") "d2h:8 sync (@step h2d:16 sync " HF_FORWARD("1") "d2h:8 sync)*3", NULL, 0, {NULL}},
    /* ---- layers (docs/layers.md) ------------------------------------------------------------------- */
    {"layers: a Llama-shaped stack of 4, a prompt and 4 steps", "Layers: plain stack", {NULL},
     "@gen h2d:16*8 " LL_FORWARD("16") "D2H:8 (@step " LL_FORWARD("1") "D2H:8)*4 @gen h2d:9*8 " LL_FORWARD("9")
     "D2H:8 (@step " LL_FORWARD("1") "D2H:8)*2", NULL, 0, {"layers gen=0 because=instance-ended layers=4 passes=1"}},
    {"layers: a first layer that differs (one kernel of its own)", "Layers: first layer differs", {NULL},
     "@gen h2d:16*8 " LL_FORWARD_FIRST("16") "D2H:8 (@step " LL_FORWARD_FIRST("1") "D2H:8)*3", NULL, 0, {NULL}},
    {"layers: alternating kinds, dense and mixture of experts with a shared expert", "Layers: period-2 kinds", {NULL},
     "@gen h2d:16*8 " ALT_SHARED_FORWARD("16") "D2H:8 (@step " ALT_SHARED_FORWARD("1") "D2H:8)*3", NULL, 0, {NULL}},
    {"layers: alternating kinds, dense and mixture of experts", "Layers: period-2 kinds", {NULL},
     "@gen h2d:16*8 " ALT_FORWARD("16") "D2H:8 (@step " ALT_FORWARD("1") "D2H:8)*3",
     "a dense and a MoE layer here share fewer of their kernels (8 of 17) than a Llama layer's attention and MLP "
     "halves do (53 %), and the MoE layer is 1.8 times as long: the finder reads each pair as one layer (the "
     "real Qwen3-MoE of tests/engine_cases/hf-moe-alt, 0.9 of the dense layer's names in the MoE one's and 1.3 "
     "times as long, is read right; looser bounds break llama.cpp's and ggml GPT-2's halves)",
     0, {NULL}},
    {"layers: mixture of experts, 1 to 4 experts a layer, varying by step", "Layers: MoE", {NULL},
     "@gen h2d:16*8 " MOE_FORWARD("16", E4, E4, E4, E4) "D2H:8 @step " MOE_FORWARD("1", E2, E1, E3, E2) "D2H:8 @step "
     MOE_FORWARD("1", E1, E4, E2, E2) "D2H:8 @step " MOE_FORWARD("1", E3, E3, E1, E4) "D2H:8", NULL, 0, {NULL}},
    {"reads inside a forward: an eager experts loop reading its counts back in every layer",
     "Automatic (b): reads inside a forward", {NULL},
     "@gen h2d:16*8 " RD_FORWARD("16", R2 R2, R2 R1, R1 R2) "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R2, R1, R2)
     "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R1, R2, R2) "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R2, R2, R1)
     "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R1, R1, R1) "D2H:8 check:1 D2H:1 @none copy:4 D2H:32",
     NULL, 0, {"decode-starts gen=0 step=0 because=forward",
               "not-a-step gen=0 step=3 because=no-forward-where-the-next-step-begins iteration=2"}},
    {"reads inside a forward, with rules: OBS_STEP opens the steps, the reads between are none",
     "Rules: OBS_STEP; Automatic (b): reads inside a forward",
     {"OBS_PHASES=PREFILL=iter:after:memcpy:HtoD,iter:until:token;DECODE=*", "OBS_STEP=embed", NULL},
     "@gen h2d:16*8 " RD_FORWARD("16", R2 R2, R2 R1, R1 R2) "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R2, R1, R2)
     "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R1, R2, R2) "D2H:8 check:1 D2H:1 @step " RD_FORWARD("1", R2, R2, R1)
     "D2H:8 check:1 D2H:1 @none copy:4 D2H:32",
     NULL, 0, {"not-a-step gen=0 step=2 because=token-read-with-no-OBS_STEP-launch-since-the-last"}},
    {"reads inside a forward, then a new prompt whose first launch is as large as a prompt's",
     "Automatic (b): reads inside a forward", {NULL},
     "@gen h2d:16*8 " RD_FORWARD("16", R2, R2, R2) "D2H:8 (@step " RD_FORWARD("1", R2, R1, R2) "D2H:8)*3 "
     "@gen h2d:64*8 " RD_FORWARD("64", R2 R2, R2 R2, R2 R2) "D2H:8 (@step " RD_FORWARD("1", R1, R2, R2) "D2H:8)*2",
     NULL, 0, {"new-generation gen=1 because=copy-in-over-4x-steps"}},
    {"layers: GPT-2 shaped, no kernel named a norm, automatic", "Layers: a prefix that ends like a layer", {NULL},
     "@gen h2d:16*8 " G2_FORWARD("16") "D2H:8 (@step " G2_FORWARD("1") "D2H:8)*3",
     "the embeddings' add, before the stack, is the layers' last kernel: each layer is read one launch early "
     "(OBS_LAYER names the first kernel: the next case)",
     0, {NULL}},
    {"layers: GPT-2 shaped, OBS_LAYER=ln names the layers' first kernel", "Layers: OBS_LAYER", {"OBS_LAYER=ln"},
     "@gen h2d:16*8 " G2_FORWARD("16") "D2H:8 (@step " G2_FORWARD("1") "D2H:8)*3", NULL, 0, {NULL}},
    {"layers: a prompt in 3 chunks, each a pass through the stack", "Layers: chunked prompt", {NULL},
     "@gen h2d:96*8 " LL_FORWARD("32") "sync " LL_FORWARD("32") "sync " LL_FORWARD("32") "D2H:8 (@step " LL_FORWARD("1")
     "D2H:8)*3", NULL, 0, {NULL}},
};
#define CASE_COUNT (sizeof cases / sizeof cases[0])

/* ---- the call language -------------------------------------------------------------------------- */

enum call_kind { K_LAUNCH, K_GRAPH, K_COPY, K_MEMSET, K_SYNC, K_IDLE, K_THREAD, K_MARK };

struct call {
    uint8_t kind;
    uint8_t dir;
    char mark;       /* K_MARK: 'g' gen, 's' step, 'y' steady, 'n' none, 'i' iteration, 'f' forward, 't' TTFT */
    char expect;     /* '\0', or the phase stated with =X */
    uint16_t api;
    unsigned thread; /* K_THREAD */
    uint32_t grid, block;
    uint64_t bytes, idle_ms;
    int busy;        /* K_IDLE: the thread busy through it (+Nb) */
    char kernel[96];
    char truth[24];  /* filled by the truth pass: the label, "" = not checked */
    int layer;       /* K_MARK 'L': the layer (-1: none); a launch: its true layer, -1 none, -2 not checked */
    unsigned forward; /* the truth pass: @fwd markers of its thread before it */
};

struct call_list {
    struct call *v;
    size_t n, cap;
};

static void push_call(struct call_list *l, const struct call *c)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (l->v == NULL)
            bail("out of memory");
    }
    l->v[l->n++] = *c;
}

/* "64", "16k", "4*16*8". */
static int parse_number(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 1;
    size_t i = 0;
    if (len == 0)
        return -1;
    while (i < len) {
        uint64_t f = 0;
        size_t start = i;
        while (i < len && isdigit((unsigned char)s[i]))
            f = f * 10 + (uint64_t)(s[i++] - '0');
        if (i == start)
            return -1;
        if (i < len && s[i] == 'k') {
            f *= 1024;
            i++;
        }
        v *= f;
        if (i < len && s[i] != '*')
            return -1;
        if (i < len)
            i++;
    }
    *out = v;
    return 0;
}

static const struct {
    const char *word;
    uint8_t kind;
    uint16_t api;
    uint8_t dir;
} call_words[] = {
    {"h2d", K_COPY, OBS_API_cudaMemcpyAsync, OBS_DIR_HTOD},
    {"d2h", K_COPY, OBS_API_cudaMemcpyAsync, OBS_DIR_DTOH},
    {"d2d", K_COPY, OBS_API_cudaMemcpyAsync, OBS_DIR_DTOD},
    {"H2D", K_COPY, OBS_API_cudaMemcpy, OBS_DIR_HTOD},
    {"D2H", K_COPY, OBS_API_cudaMemcpy, OBS_DIR_DTOH},
    {"memset", K_MEMSET, OBS_API_cudaMemsetAsync, OBS_DIR_NONE},
    {"sync", K_SYNC, OBS_API_cudaStreamSynchronize, OBS_DIR_NONE},
    {"devsync", K_SYNC, OBS_API_cudaDeviceSynchronize, OBS_DIR_NONE},
    {"evsync", K_SYNC, OBS_API_cudaEventSynchronize, OBS_DIR_NONE},
    {"wait", K_SYNC, OBS_API_cudaStreamWaitEvent, OBS_DIR_NONE},
    {"graph", K_GRAPH, OBS_API_cudaGraphLaunch, OBS_DIR_NONE},
};

static void parse_token(const char *tok, size_t len, struct call_list *out, const char *case_name)
{
    struct call c;
    const char *colon, *eq = memchr(tok, '=', len);
    size_t word_len, i;

    memset(&c, 0, sizeof c);
    c.layer = -2;
    if (eq != NULL) {
        if (eq + 2 != tok + len || strchr("PDKS-~", eq[1]) == NULL)
            bail("%s: bad expectation in '%.*s'", case_name, (int)len, tok);
        c.expect = eq[1];
        len = (size_t)(eq - tok);
    }
    if (tok[0] == '@') {
        static const char *const marks[] = {"@gen", "@step", "@steady", "@none", "@iter", "@fwd", "@ttft"};
        static const char codes[] = "gsynift";
        for (i = 0; i < sizeof marks / sizeof marks[0]; i++)
            if (strlen(marks[i]) == len && strncmp(tok, marks[i], len) == 0)
                c.mark = codes[i];
        if (len >= 3 && tok[1] == 'L' && (tok[2] == '-' || isdigit((unsigned char)tok[2]))) {
            c.mark = 'L'; /* @L<k>: the launches that follow are in layer k; @L-: in none */
            c.layer = tok[2] == '-' ? -1 : atoi(tok + 2);
        }
        if (c.mark == '\0')
            bail("%s: unknown marker '%.*s'", case_name, (int)len, tok);
        c.kind = K_MARK;
        push_call(out, &c);
        return;
    }
    if (tok[0] == '+') {
        c.kind = K_IDLE;
        if (len > 2 && tok[len - 1] == 'b') { /* +Nb: the thread busy for it (compiling), not blocked */
            c.busy = 1;
            len--;
        }
        if (parse_number(tok + 1, len - 1, &c.idle_ms) != 0)
            bail("%s: bad idle time '%.*s'", case_name, (int)len, tok);
        push_call(out, &c);
        return;
    }
    if (len == 2 && tok[0] == 'T' && tok[1] >= '0' && tok[1] <= '3') {
        c.kind = K_THREAD;
        c.thread = (unsigned)(tok[1] - '0');
        push_call(out, &c);
        return;
    }
    colon = memchr(tok, ':', len);
    word_len = colon != NULL ? (size_t)(colon - tok) : len;
    for (i = 0; i < sizeof call_words / sizeof call_words[0]; i++)
        if (strlen(call_words[i].word) == word_len && strncmp(tok, call_words[i].word, word_len) == 0) {
            c.kind = call_words[i].kind;
            c.api = call_words[i].api;
            c.dir = call_words[i].dir;
            if ((c.kind == K_COPY || c.kind == K_MEMSET) &&
                (colon == NULL || parse_number(colon + 1, len - word_len - 1, &c.bytes) != 0))
                bail("%s: '%.*s' needs its bytes", case_name, (int)len, tok);
            push_call(out, &c);
            return;
        }
    /* a kernel */
    c.kind = K_LAUNCH;
    c.api = OBS_API_cudaLaunchKernel;
    if (word_len == 0 || word_len >= sizeof c.kernel)
        bail("%s: bad kernel '%.*s'", case_name, (int)len, tok);
    memcpy(c.kernel, tok, word_len);
    c.grid = c.block = 1;
    if (colon != NULL) {
        const char *size = colon + 1, *x = memchr(size, 'x', len - word_len - 1);
        size_t size_len = len - word_len - 1;
        uint64_t g, b = 1;
        if (parse_number(size, x != NULL ? (size_t)(x - size) : size_len, &g) != 0 ||
            (x != NULL && parse_number(x + 1, size_len - (size_t)(x + 1 - size), &b) != 0) || g > UINT32_MAX ||
            b > UINT16_MAX)
            bail("%s: bad size in '%.*s'", case_name, (int)len, tok);
        c.grid = (uint32_t)g;
        c.block = (uint32_t)b;
    }
    push_call(out, &c);
}

/* Parse until ')' or the end; groups are expanded in place. */
static const char *parse_calls(const char *p, struct call_list *out, int depth, const char *case_name)
{
    for (;;) {
        const char *start;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '\0' || *p == ')')
            return p;
        if (*p == '(') {
            struct call_list group = {NULL, 0, 0};
            uint64_t times = 1;
            size_t i, k;
            p = parse_calls(p + 1, &group, depth + 1, case_name);
            if (*p != ')')
                bail("%s: '(' without ')'", case_name);
            p++;
            while (isspace((unsigned char)*p))
                p++;
            if (*p == '*') {
                start = ++p;
                while (isdigit((unsigned char)*p))
                    p++;
                if (parse_number(start, (size_t)(p - start), &times) != 0)
                    bail("%s: bad repetition", case_name);
            }
            for (k = 0; k < times; k++)
                for (i = 0; i < group.n; i++)
                    push_call(out, &group.v[i]);
            free(group.v);
            continue;
        }
        start = p;
        while (*p != '\0' && !isspace((unsigned char)*p) && *p != '(' && *p != ')')
            p++;
        parse_token(start, (size_t)(p - start), out, case_name);
    }
}

/* ---- the truth: the markers, walked per thread ------------------------------------------------------ */

struct truth_state {
    int started;
    unsigned gen, step;
    char phase; /* '-', 'P', 'D' (step), 'S' (steady), 'I' (a serving iteration) */
    int layer;  /* -1: none */
    unsigned forwards;
};

static int case_has_layers(const struct call_list *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        if (l->v[i].kind == K_MARK && l->v[i].mark == 'L')
            return 1;
    return 0;
}

static void label_text(char *out, size_t len, char phase, unsigned gen, unsigned step)
{
    if (phase == '-')
        snprintf(out, len, "-");
    else if (phase == 'P' || phase == 'S')
        snprintf(out, len, "%c%u", phase, gen);
    else if (step == OBS_NO_STEP)
        snprintf(out, len, "%c%u", phase, gen);
    else
        snprintf(out, len, "%c%u.%u", phase, gen, step);
}

/* The automatic mode's KV_GATHER names in this test's kernels: "kv", but
 * not as the end of "qkv" (a fused projection). */
static int kv_named(const char *kernel)
{
    const char *p = kernel;
    while ((p = strstr(p, "kv")) != NULL) {
        if (p == kernel || p[-1] != 'q')
            return 1;
        p += 2;
    }
    return 0;
}

static void apply_truth(struct call_list *l)
{
    struct truth_state st[4];
    unsigned t = 0;
    size_t i;
    int layers = case_has_layers(l);
    memset(st, 0, sizeof st);
    for (i = 0; i < 4; i++) {
        st[i].phase = '-';
        st[i].layer = -1;
    }
    for (i = 0; i < l->n; i++) {
        struct call *c = &l->v[i];
        struct truth_state *s = &st[t];
        char phase;
        if (c->kind == K_THREAD) {
            t = c->thread;
            continue;
        }
        if (c->kind == K_LAUNCH || c->kind == K_GRAPH)
            c->layer = layers && c->expect != '~' ? s->layer : -2;
        c->forward = s->forwards;
        if (c->kind == K_MARK) {
            if (c->mark == 'f') {
                s->forwards++;
                continue;
            }
            if (c->mark == 't')
                continue;
            if (c->mark != 'L')
                s->layer = -1; /* a new phase instance: outside its layers until one is marked */
            if (c->mark == 'L') {
                s->layer = c->layer;
            } else if (c->mark == 'g') {
                s->gen = s->started ? s->gen + 1 : 0;
                s->started = 1;
                s->phase = 'P';
            } else if (c->mark == 's') {
                if (!s->started)
                    s->started = 1;
                s->step = s->phase == 'D' ? s->step + 1 : 0;
                s->phase = 'D';
            } else if (c->mark == 'y') {
                s->phase = 'S';
            } else if (c->mark == 'i') {
                if (s->phase == 'I') {
                    s->step++;
                } else {
                    s->gen = s->started ? s->gen + 1 : 0;
                    s->started = 1;
                    s->step = 0;
                    s->phase = 'I';
                }
            } else {
                s->phase = '-';
            }
            continue;
        }
        if (c->kind != K_LAUNCH && c->kind != K_GRAPH && c->expect == '\0')
            continue;
        if (c->expect == '~') /* not checked (a launch captured into a graph) */
            continue;
        phase = s->phase;
        if (phase == 'D' && c->kind == K_LAUNCH && kv_named(c->kernel))
            phase = 'K';
        if (c->expect != '\0')
            phase = c->expect;
        label_text(c->truth, sizeof c->truth, phase, s->gen,
                   phase == 'D' || phase == 'K' || phase == 'I' ? s->step : OBS_NO_STEP);
    }
}

/* ---- running a case in a child ------------------------------------------------------------------ */

/* What the child leaves for each call (shared memory). */
struct call_result {
    int trace_layer, live_layer; /* -1: none */
    char trace[24], live[24];
    char live_inner[96]; /* innermost live range (OBS_NVTX_LAUNCH checks) */
    uint8_t relabelled, done;
};

struct case_result {
    char structure[256]; /* "" or the first structural problem */
    unsigned threads;
    uint32_t bad_moves; /* moves the state machine's table does not allow (phase_machine.h) */
};

static struct {
    const struct engine_case *c;
    char log_path[512];
    struct call_list *calls;
    struct call_result *results;
    struct case_result *summary;
    const char *env[8];
} run;

static const char *case_lookup(const char *name)
{
    size_t n = strlen(name), i;
    const char *extra = getenv("OBS_ENGINE_ENV");
    for (i = 0; run.env[i] != NULL; i++)
        if (strncmp(run.env[i], name, n) == 0 && run.env[i][n] == '=')
            return run.env[i] + n + 1;
    if (extra != NULL && strncmp(extra, name, n) == 0 && extra[n] == '=')
        return extra + n + 1;
    return NULL;
}

/* One worker per host thread of the case; the main thread hands it calls one at a time. */
struct worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    size_t job;      /* index into run.calls, SIZE_MAX - 1: analyse, SIZE_MAX: none */
    int busy, started;
    uint64_t *index; /* per call: its record index on this thread */
    /* the kernels of the launches captured into a graph (=~) since the
     * last instantiation: the graph instantiated from them before the next
     * call that was not captured, as torch.cuda.CUDAGraph's capture_end and
     * every stream capture's cudaGraphInstantiate do under the shim */
    struct obs_graph_walk capture;
};

#define JOB_NONE SIZE_MAX
#define JOB_ANALYSE (SIZE_MAX - 1)
static struct worker workers[4];

static void note_structure(const char *fmt, ...) TAP_PRINTF(1, 2);
static void note_structure(const char *fmt, ...)
{
    va_list ap;
    if (run.summary->structure[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(run.summary->structure, sizeof run.summary->structure, fmt, ap);
    va_end(ap);
}

/* A case read from tests/engine_cases/ names its kernels k1, k2 ... and
 * gives their real names in a table. */
static struct {
    char **names; /* [n] the real name of kn, names[0] unused */
    size_t n;
} aliases;

static const char *kernel_name(const char *kernel)
{
    char *end;
    unsigned long n;
    if (aliases.n == 0 || kernel[0] != 'k')
        return kernel;
    n = strtoul(kernel + 1, &end, 10);
    return *end == '\0' && n > 0 && n < aliases.n ? aliases.names[n] : kernel;
}

/* A launch captured into a graph: its kernel a node of the graph. */
static void capture_kernel(struct worker *w, uint32_t name)
{
    struct obs_graph_walk *g = &w->capture;
    if (g->norder == g->order_cap) {
        uint32_t cap = g->order_cap ? 2 * g->order_cap : 64;
        uint32_t *grown = realloc(g->order, cap * sizeof *grown);
        if (grown == NULL)
            abort();
        g->order = grown;
        g->order_cap = cap;
    }
    g->order[g->norder++] = name;
    g->nodes++;
    g->kernels++;
}

/* The graph of the captured launches instantiated, as the shim's
 * instantiation hooks tell the engine (obs_phase_graph_layers). */
static void instantiate_capture(struct worker *w)
{
    struct obs_graph_walk *g = &w->capture;
    obs_phase_graph_layers(g);
    free(g->order);
    free(g->layer);
    memset(g, 0, sizeof *g);
}

static void do_call(struct worker *w, size_t i)
{
    struct call *c = &run.calls->v[i];
    struct call_result *r = &run.results[i];
    struct obs_rec_call rec;
    char live[256];

    engine_stub_advance_ns(1000); /* 1 us a call: distinct times */
    if (w->capture.norder > 0 && !(c->kind == K_LAUNCH && c->expect == '~'))
        instantiate_capture(w);
    if (c->kind == K_LAUNCH)
        rec = obs_launch_record(engine_stub_name(kernel_name(c->kernel)), c->grid, 1, 1, c->block, 1, 1, 0, 0);
    else if (c->kind == K_GRAPH)
        rec = obs_bytes_record(8, OBS_DIR_NONE, 0);
    else
        rec = obs_bytes_record(c->bytes, c->dir, 0);
    w->index[i] = engine_stub_call(&rec, c->api, live, sizeof live);
    if (c->kind == K_LAUNCH && c->expect == '~')
        capture_kernel(w, rec.name);
    /* the live label: innermost phase range, step of the innermost step range */
    {
        char *save = NULL, *part;
        char phase = '-';
        unsigned step = OBS_NO_STEP;
        r->live_inner[0] = '\0';
        r->live_layer = -1;
        for (part = strtok_r(live, "|", &save); part != NULL; part = strtok_r(NULL, "|", &save)) {
            if (strncmp(part, "LAYER/", 6) == 0) {
                r->live_layer = atoi(part + 6);
                continue; /* not a phase */
            }
            if (strcmp(part, "PREFILL") == 0) {
                phase = 'P';
            } else if (strcmp(part, "DECODE/STEADY") == 0) {
                phase = 'S';
            } else if (strncmp(part, "DECODE/STEP_", 12) == 0) {
                phase = 'D';
                step = (unsigned)strtoul(part + 12, NULL, 10);
            } else if (strcmp(part, "KV_GATHER") == 0) {
                phase = 'K';
            } else if (strncmp(part, "ITERATION/", 10) == 0) { /* a serving iteration (none pushed yet) */
                phase = 'I';
                step = (unsigned)strtoul(part + 10, NULL, 10);
            }
            snprintf(r->live_inner, sizeof r->live_inner, "%s", part);
        }
        if (phase == '-' || phase == 'P' || phase == 'S')
            snprintf(r->live, sizeof r->live, "%c", phase);
        else if (step == OBS_NO_STEP)
            snprintf(r->live, sizeof r->live, "%c", phase);
        else
            snprintf(r->live, sizeof r->live, "%c.%u", phase, step);
    }
}

/* The trace's label of each of this thread's calls, as readers give it
 * (trace_format.h): the ranges open at the call (innermost phase, step of
 * the innermost range that has one), unless a RELABEL covers its index
 * (the latest written wins). Also checks that BEGIN/END nest. */
static void analyse(struct worker *w, unsigned thread)
{
    uint64_t count, k;
    const union obs_record *recs = engine_stub_records(&count);
    struct obs_rec_phase open[8];
    unsigned depth = 0;
    size_t i;
    char *labels;
    uint8_t *relabelled;
    int *layer_of;

    obs_phase_end_open_ranges(); /* as at exit: the last instance's layers are written */
    recs = engine_stub_records(&count);
    labels = calloc(count ? count : 1, 24);
    relabelled = calloc(count ? count : 1, 1);
    layer_of = malloc((count ? count : 1) * sizeof *layer_of);
    if (labels == NULL || relabelled == NULL || layer_of == NULL)
        abort();
    for (k = 0; k < count; k++)
        layer_of[k] = -1;
    for (k = 0; k < count; k++) { /* LAYER records: the latest over an index wins */
        const struct obs_rec_layer *ly = &recs[k].layer;
        uint64_t j;
        if (recs[k].call.type != OBS_REC_LAYER)
            continue;
        if (ly->first_index > ly->last_index || ly->last_index >= k)
            note_structure("thread %u: record %llu: LAYER of [%llu, %llu] out of range", thread, (unsigned long long)k,
                           (unsigned long long)ly->first_index, (unsigned long long)ly->last_index);
        for (j = ly->first_index; j <= ly->last_index && j < count; j++)
            layer_of[j] = ly->layer == OBS_NO_LAYER ? -1 : (int)ly->layer;
    }
    for (k = 0; k < count; k++) {
        const union obs_record *r = &recs[k];
        if (r->call.type == OBS_REC_PHASE) {
            const struct obs_rec_phase *ph = &r->phase;
            if (ph->event == OBS_PHASE_BEGIN) {
                if (depth >= 3)
                    note_structure("thread %u: record %llu: a 4th range opens", thread, (unsigned long long)k);
                if (depth < 8)
                    open[depth++] = *ph;
            } else if (ph->event == OBS_PHASE_END) {
                if (depth == 0 || open[depth - 1].name != ph->name || open[depth - 1].generation != ph->generation ||
                    open[depth - 1].step != ph->step)
                    note_structure("thread %u: record %llu: END does not close the innermost open range", thread,
                                   (unsigned long long)k);
                if (depth > 0)
                    depth--;
            } else if (ph->event == OBS_PHASE_RELABEL) {
                if (ph->first_index > ph->last_index || ph->last_index >= k)
                    note_structure("thread %u: record %llu: RELABEL of [%llu, %llu] out of range", thread,
                                   (unsigned long long)k, (unsigned long long)ph->first_index,
                                   (unsigned long long)ph->last_index);
            }
        } else if (r->call.type == OBS_REC_CALL) {
            char phase = '-';
            unsigned step = OBS_NO_STEP, gen = 0, d;
            for (d = 0; d < depth; d++) {
                phase = open[d].phase == OBS_PHASE_PREFILL     ? 'P'
                        : open[d].phase == OBS_PHASE_KV_GATHER ? 'K'
                        : open[d].phase == OBS_PHASE_ITERATION ? 'I'
                                                               : 'D';
                gen = open[d].generation;
                if (open[d].step != OBS_NO_STEP)
                    step = open[d].step;
            }
            if (phase == 'D' && step == OBS_NO_STEP)
                phase = 'S';
            label_text(labels + k * 24, 24, phase, gen, step);
        }
    }
    for (k = 0; k < count; k++) {
        const struct obs_rec_phase *ph = &recs[k].phase;
        uint64_t j;
        if (recs[k].call.type != OBS_REC_PHASE || ph->event != OBS_PHASE_RELABEL || ph->last_index >= count)
            continue;
        for (j = ph->first_index; j <= ph->last_index; j++) {
            char phase = ph->phase == OBS_PHASE_NONE      ? '-'
                         : ph->phase == OBS_PHASE_PREFILL ? 'P'
                         : ph->phase == OBS_PHASE_KV_GATHER ? 'K'
                         : ph->phase == OBS_PHASE_ITERATION ? 'I'
                         : ph->step == OBS_NO_STEP        ? 'S'
                                                          : 'D';
            if (recs[j].call.type != OBS_REC_CALL)
                continue;
            label_text(labels + j * 24, 24, phase, ph->generation, ph->step);
            relabelled[j] = 1;
        }
    }
    if (engine_stub_live_underflows() != 0)
        note_structure("thread %u: %u live pops with nothing open", thread, engine_stub_live_underflows());
    for (i = 0; i < run.calls->n; i++) {
        if (w->index[i] == UINT64_MAX || w->index[i] >= count)
            continue;
        snprintf(run.results[i].trace, sizeof run.results[i].trace, "%s", labels + w->index[i] * 24);
        run.results[i].trace_layer = layer_of[w->index[i]];
        run.results[i].relabelled = relabelled[w->index[i]];
        run.results[i].done = 1;
    }
    free(labels);
    free(relabelled);
    free(layer_of);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    unsigned thread = (unsigned)(w - workers);
    pthread_mutex_lock(&w->lock);
    for (;;) {
        size_t job;
        while (!w->busy)
            pthread_cond_wait(&w->cond, &w->lock);
        job = w->job;
        pthread_mutex_unlock(&w->lock);
        if (job == JOB_ANALYSE)
            analyse(w, thread);
        else
            do_call(w, job);
        pthread_mutex_lock(&w->lock);
        w->busy = 0;
        pthread_cond_broadcast(&w->cond);
        if (job == JOB_ANALYSE)
            break;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void hand_over(unsigned t, size_t job)
{
    struct worker *w = &workers[t];
    size_t i;
    if (!w->started) {
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);
        w->index = malloc(run.calls->n * sizeof *w->index);
        if (w->index == NULL)
            abort();
        for (i = 0; i < run.calls->n; i++)
            w->index[i] = UINT64_MAX;
        if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
            abort();
        w->started = 1;
    }
    pthread_mutex_lock(&w->lock);
    w->job = job;
    w->busy = 1;
    pthread_cond_broadcast(&w->cond);
    while (w->busy)
        pthread_cond_wait(&w->cond, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

static void child_run(void)
{
    size_t i;
    unsigned t = 0;
    uint8_t levels[OBS_DEBUG_DOMAINS] = {0};
    obs_config_load(&obs_cfg, case_lookup);
    levels[OBS_DBG_PHASES] = OBS_DEBUG_LEVEL_MAX;
    obs_debug_setup(levels, run.log_path);
    for (i = 0; i < run.calls->n; i++) {
        const struct call *c = &run.calls->v[i];
        if (c->kind == K_THREAD)
            t = c->thread;
        else if (c->kind == K_IDLE && c->busy)
            engine_stub_busy_ns(c->idle_ms * 1000000u);
        else if (c->kind == K_IDLE)
            engine_stub_advance_ns(c->idle_ms * 1000000u);
        else if (c->kind != K_MARK)
            hand_over(t, i);
    }
    for (t = 0; t < 4; t++)
        if (workers[t].started) {
            hand_over(t, JOB_ANALYSE);
            pthread_join(workers[t].thread, NULL);
            run.summary->threads++;
        }
    run.summary->bad_moves = atomic_load(&obs_phase_bad_moves);
}

static void *shared_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        bail("mmap: out of memory");
    return p;
}

/* ---- the checks ------------------------------------------------------------------------------------ */

static const char *call_text(const struct call *c, char *buf, size_t len)
{
    if (c->kind == K_LAUNCH)
        snprintf(buf, len, "%s:%ux%u", c->kernel, c->grid, c->block);
    else if (c->kind == K_GRAPH)
        snprintf(buf, len, "graph");
    else
        snprintf(buf, len, "api %u bytes %llu", c->api, (unsigned long long)c->bytes);
    return buf;
}

/* The live label has no generation: "D0.3" -> "D.3", "P1" -> "P". */
static void without_gen(const char *label, char *out, size_t len)
{
    const char *dot = strchr(label, '.');
    if (label[0] == '-' || label[0] == '\0')
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%c%s", label[0], dot != NULL ? dot : "");
}

/* The decision log (docs/phases.md, "Reading a decision log"): every line
 * "obsshim[phases]: " then either "tid=T call=N <word> ..." with a word of
 * the documented list, or a process-wide "set-up", "fallback" or "name"
 * line; a because= has a value; a decision (new-generation, warm-up,
 * prefill-continues, decode-starts, step) has gen= and because=. Each of
 * the case's pieces is in some line. */
static int check_log(const struct engine_case *c, const char *path, char *problem, size_t len)
{
    static const char prefix[] = "obsshim[phases]: ";
    const char *const *words = phase_log_words;
    const size_t decisions = PHASE_LOG_DECISIONS;
    size_t size = 0, lines = 0, k;
    char *text = test_read_file(path, &size), *line, *save = NULL;
    int good = 1;
    if (text == NULL) {
        snprintf(problem, len, "%s not written", path);
        return 0;
    }
    for (line = strtok_r(text, "\n", &save); line != NULL && good; line = strtok_r(NULL, "\n", &save)) {
        const char *body = line + sizeof prefix - 1, *because = strstr(line, " because="), *word = NULL;
        unsigned tid, call;
        int at = 0;
        lines++;
        if (strncmp(line, prefix, sizeof prefix - 1) != 0) {
            good = 0;
        } else if (sscanf(body, "tid=%u call=%u %n", &tid, &call, &at) == 2 && at > 0) {
            word = body + at;
            good = 0;
            for (k = 0; k < PHASE_LOG_WORDS; k++)
                if (strncmp(word, words[k], strlen(words[k])) == 0 &&
                    (word[strlen(words[k])] == ' ' || word[strlen(words[k])] == '\0'))
                    good = 1;
            for (k = 0; good && k < decisions; k++) /* a decision: gen= and because= */
                if (strncmp(word, words[k], strlen(words[k])) == 0 && word[strlen(words[k])] == ' ' &&
                    (strstr(word, " gen=") == NULL || because == NULL))
                    good = 0;
        } else if (strncmp(body, "set-up ", 7) != 0 && strncmp(body, "fallback ", 9) != 0 &&
                   strncmp(body, "name id=", 8) != 0) {
            good = 0;
        }
        if (good && because != NULL && (because[9] == ' ' || because[9] == '\0'))
            good = 0;
        if (!good)
            snprintf(problem, len, "line %zu has not the documented shape: %.300s", lines, line);
    }
    free(text);
    if (!good)
        return 0;
    text = test_read_file(path, &size);
    for (k = 0; k < 4 && c->log[k] != NULL && good; k++)
        if (strstr(text, c->log[k]) == NULL) {
            snprintf(problem, len, "no line says '%s'", c->log[k]);
            good = 0;
        }
    free(text);
    if (good && lines == 0) {
        snprintf(problem, len, "empty");
        good = 0;
    }
    return good;
}

static unsigned cases_passing, cases_todo_failing, cases_todo_passing, case_serial;
/* the state machine's moves from a state its table does not allow, over every run, and the first case with one */
static unsigned long bad_moves_total, moves_runs;
static char bad_moves_case[200];

static void count_bad_moves(const struct engine_case *c, const struct case_result *summary, const char *how)
{
    moves_runs++;
    if (summary->bad_moves == 0)
        return;
    if (bad_moves_total == 0)
        snprintf(bad_moves_case, sizeof bad_moves_case, "%s%s: %u", c->name, how, summary->bad_moves);
    bad_moves_total += summary->bad_moves;
}


/* The case in `run` through the engine in a forked child (a fresh engine),
 * its decision log in a file of its own. Returns 0, or the child's status
 * (-1: it could not be waited for). */
static int run_in_child(void)
{
    pid_t pid;
    int status = 0;
    snprintf(run.log_path, sizeof run.log_path, "%s/case-%u.log", test_tmpdir(), case_serial++);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bail("fork failed");
    if (pid == 0) {
        child_run();
        _exit(0);
    }
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : (status != 0 ? status : -1);
}

/* The same calls again with OBS_LAYER=off: the layer tracker still runs
 * (docs/layers.md), so every call's phase, generation and step in the
 * trace is the one it had with layers on; only the layers go. */
static void check_layers_off(const struct engine_case *c, struct call_list *calls_in,
                             const struct call_result *with_layers, struct case_result *summary)
{
    struct call_list calls = *calls_in;
    struct call_result *off = shared_map(calls.n * sizeof *off);
    size_t i, k, differ = 0, first = SIZE_MAX, layered = 0;
    int status;
    memset(&run, 0, sizeof run);
    run.c = c;
    run.calls = calls_in;
    run.results = off;
    run.summary = summary;
    for (k = 0; k < 3 && c->env[k] != NULL; k++)
        run.env[k] = c->env[k];
    run.env[k++] = "OBS_LAYER=off";
    run.env[k] = NULL;
    if ((status = run_in_child()) != 0) {
        ok(0, "%s: OBS_LAYER=off: the engine ran the calls (child status %d)", c->name, status);
        munmap(off, calls.n * sizeof *off);
        return;
    }
    count_bad_moves(c, summary, " (OBS_LAYER=off)");
    for (i = 0; i < calls.n; i++) {
        if (calls.v[i].kind == K_MARK || !with_layers[i].done)
            continue;
        if (strcmp(with_layers[i].trace, off[i].trace) != 0 && differ++ == 0)
            first = i;
        layered += off[i].trace_layer != -1 || off[i].live_layer != -1;
    }
    if (first != SIZE_MAX)
        diag("%s: OBS_LAYER=off: call %zu: trace %s, with layers %s", c->name, first, off[first].trace,
             with_layers[first].trace);
    ok(differ == 0 && layered == 0,
       "%s: OBS_LAYER=off: every call's phase, generation and step as with layers (%zu differ), no layer in the trace "
       "or live (%zu have one)",
       c->name, differ, layered);
    munmap(off, calls.n * sizeof *off);
}

/* layers_test: a real program's case, whose layers get a test of their
 * own (skipped, saying so, where the case has no layer truth: a program
 * with no layer hooks); layers_todo: NULL, or why its layers are known
 * wrong (a TODO test; its phases stay a plain check). */
static void check_case(const struct engine_case *c, int layers_test, const char *layers_todo)
{
    struct call_list calls = {NULL, 0, 0};
    struct call_result *results;
    struct case_result *summary;
    const char *dump = getenv("OBS_ENGINE_DUMP");
    size_t i, launches = 0, checked = 0, trace_ok = 0, live_checked = 0, live_ok = 0, shown = 0, live_shown = 0, relabelled = 0;
    size_t launch_range_ok = 0, live_launches = 0, live_truth_ok = 0, later = 0, later_live_ok = 0;
    char later_text[160] = "";
    char first_live[200] = "", log_problem[800] = "";
    int status, trace_all, live_all, log_ok, layers_all;

    parse_calls(c->calls, &calls, 0, c->name);
    apply_truth(&calls);
    results = shared_map(calls.n * sizeof *results);
    summary = shared_map(sizeof *summary);
    memset(&run, 0, sizeof run);
    run.c = c;
    run.calls = &calls;
    run.results = results;
    run.summary = summary;
    for (i = 0; i < 4 && c->env[i] != NULL; i++)
        run.env[i] = c->env[i];
    run.env[i] = NULL;
    if ((status = run_in_child()) != 0) {
        ok(0, "%s: the engine ran the calls (child status %d)", c->name, status);
        ok(0, "%s: live ranges equal the trace", c->name);
        return;
    }
    count_bad_moves(c, summary, "");

    for (i = 0; i < calls.n; i++) {
        const struct call *k = &calls.v[i];
        const struct call_result *r = &results[i];
        char text[128], live_wanted[24];
        if (dump != NULL && (strcmp(dump, c->name) == 0 || strcmp(dump, "all") == 0) && k->kind != K_MARK)
            diag("%5zu %-40s truth %-8s trace %-8s live %-6s%s", i, call_text(k, text, sizeof text), k->truth,
                 r->trace, r->live, r->relabelled ? " relabelled" : "");
        if (k->truth[0] == '\0' || !r->done)
            continue;
        if (k->kind == K_LAUNCH || k->kind == K_GRAPH)
            launches++;
        checked++;
        {
            char truth_live[24];
            without_gen(k->truth, truth_live, sizeof truth_live);
            live_truth_ok += strcmp(truth_live, r->live) == 0;
            if (k->forward >= 2) { /* from the thread's second forward on (@fwd) */
                later++;
                later_live_ok += strcmp(truth_live, r->live) == 0;
            }
        }
        if (strcmp(k->truth, r->trace) == 0) {
            trace_ok++;
        } else if (shown++ < 3) {
            diag("%s: call %zu (%s): truth %s, trace %s", c->name, i, call_text(k, text, sizeof text), k->truth,
                 r->trace);
        }
        if (r->relabelled) {
            relabelled++;
            continue;
        }
        live_checked++;
        without_gen(r->trace, live_wanted, sizeof live_wanted);
        if (c->launch_ranges && k->kind == K_LAUNCH) {
            char base[96];
            live_launches++; /* a launch the trace relabelled is not checked live (above) */
            obs_kernel_base_name_of(k->kernel, NULL, base, sizeof base);
            launch_range_ok += strcmp(r->live_inner, base) == 0;
        }
        if (strcmp(live_wanted, r->live) == 0)
            live_ok++;
        else if (live_shown++ == 0)
            snprintf(first_live, sizeof first_live, "call %zu (%s): trace %s, live %s", i,
                     call_text(k, text, sizeof text), r->trace, r->live);
    }
    trace_all = checked > 0 && trace_ok == checked;
    layers_all = 0;
    if (case_has_layers(&calls)) { /* LAYER/k: the trace's (LAYER records) and the live one against the truth */
        size_t lc = 0, lt_ok = 0, lv_ok = 0, lv_none = 0, lv_wrong = 0;
        char first_bad[256] = "", text[128];
        for (i = 0; i < calls.n; i++) {
            const struct call *k = &calls.v[i];
            const struct call_result *r = &results[i];
            if (k->layer < -1 || !r->done)
                continue;
            lc++;
            lt_ok += r->trace_layer == k->layer;
            lv_ok += r->live_layer == k->layer;
            lv_none += r->live_layer == -1 && k->layer != -1;
            /* a call the trace relabelled (a warm-up's, live inside a PREFILL) is not held to its live layer */
            lv_wrong += r->live_layer != -1 && r->live_layer != k->layer && !r->relabelled;
            if (r->trace_layer != k->layer && first_bad[0] == '\0')
                snprintf(first_bad, sizeof first_bad, "call %zu (%s): layer %d in the trace, truth %d", i,
                         call_text(k, text, sizeof text), r->trace_layer, k->layer);
            if (r->live_layer != -1 && r->live_layer != k->layer && !r->relabelled && first_bad[0] == '\0')
                snprintf(first_bad, sizeof first_bad, "call %zu (%s): live LAYER/%d, truth %d", i,
                         call_text(k, text, sizeof text), r->live_layer, k->layer);
        }
        diag("FIGURES layers \"%s\": launches %zu, trace right %zu, live right %zu (no live layer where one is true: "
             "%zu, live layer wrong: %zu)",
             c->name, lc, lt_ok, lv_ok, lv_none, lv_wrong);
        if (first_bad[0] != '\0')
            diag("%s: %s", c->name, first_bad);
        layers_all = lc > 0 && lt_ok == lc && lv_wrong == 0;
        if (layers_todo == NULL)
            trace_all = trace_all && layers_all;
    }
    if (later > 0)
        snprintf(later_text, sizeof later_text, "; from each thread's second forward on, live %zu of %zu",
                 later_live_ok, later);
    diag("FIGURES case \"%s\": calls checked %zu (launches %zu), trace %zu, live %zu (the live range's phase and "
         "step equal the truth's), relabelled in the trace %zu%s",
         c->name, checked, launches, trace_ok, live_truth_ok, relabelled, later_text);
    log_ok = check_log(c, run.log_path, log_problem, sizeof log_problem);
    if (dump != NULL && (strcmp(dump, c->name) == 0 || strcmp(dump, "all") == 0)) {
        FILE *f = fopen(run.log_path, "r"); /* and its decision log */
        char line[1024];
        while (f != NULL && fgets(line, sizeof line, f) != NULL)
            diag("log %s", line);
        if (f != NULL)
            fclose(f);
    }
    live_all = live_ok == live_checked && summary->structure[0] == '\0' &&
               (!c->launch_ranges || (live_launches > 0 && launch_range_ok == live_launches));
    if (c->todo != NULL && trace_all) {
        diag("%s: TODO case passes now: take its TODO mark off (%s)", c->name, c->todo);
        cases_todo_passing++;
    } else if (c->todo != NULL) {
        cases_todo_failing++;
    } else if (trace_all) {
        cases_passing++;
    }
    ok_todo(trace_all, c->todo, "%s [%s]: %zu of %zu calls right in the trace (%zu launches)", c->name, c->rule,
            trace_ok, checked, launches);
    if (layers_test && !case_has_layers(&calls)) {
        skip("%s: no layer truth (the program has no layer hooks: tests/engine_cases/README.md)", c->name);
    } else if (layers_test) {
        if (layers_todo != NULL && layers_all)
            diag("%s: TODO layers pass now: take its layers-todo mark off (%s)", c->name, layers_todo);
        ok_todo(layers_all, layers_todo,
                "%s: layers: every launch has the truth's layer (or none) in the trace, none is live in another "
                "(but those the trace relabelled)",
                c->name);
    }
    if (first_live[0] != '\0')
        diag("%s: %s", c->name, first_live);
    if (summary->structure[0] != '\0')
        diag("%s: %s", c->name, summary->structure);
    if (log_problem[0] != '\0')
        diag("%s: decision log: %s", c->name, log_problem);
    ok(live_all && log_ok,
       "%s: ranges nest; live equals the trace for the %zu calls not relabelled (%zu relabelled)%s; decision log "
       "well formed%s",
       c->name, live_checked, relabelled, c->launch_ranges ? "; a launch range per launch" : "",
       c->log[0] != NULL ? ", names its signals" : "");
    if (layers_test)
        check_layers_off(c, &calls, results, summary);
    munmap(results, calls.n * sizeof *results);
    munmap(summary, sizeof *summary);
    free(calls.v);
}

/* ---- cases from real programs (tests/engine_cases/NAME.calls.gz) ---------------------------------- */

struct file_case {
    struct engine_case c;
    char name[128], rule[512], todo[512], layers_todo[512];
    char *calls;
    char **names;
    size_t nnames;
};


/* "# what", "name N", optionally "todo WHY" (the engine is known to get
 * it wrong: a TODO check) and "layers-todo WHY" (its layers only: a TODO
 * test of their own, the phases a plain one), "kernel kI NAME", "calls",
 * then the calls. */
static int load_file_case(const char *path, struct file_case *fc)
{
#ifdef HAVE_ZLIB
    char *text = gz_text_read(path), *line, *next, *what = NULL;
    memset(fc, 0, sizeof *fc);
    if (text == NULL)
        return -1;
    for (line = text; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        if (line[0] == '#' && what == NULL) {
            what = line + 1 + (line[1] == ' ');
        } else if (strncmp(line, "name ", 5) == 0) {
            snprintf(fc->name, sizeof fc->name, "real: %s", line + 5);
        } else if (strncmp(line, "todo ", 5) == 0) {
            snprintf(fc->todo, sizeof fc->todo, "%s", line + 5);
        } else if (strncmp(line, "layers-todo ", 12) == 0) {
            snprintf(fc->layers_todo, sizeof fc->layers_todo, "%s", line + 12);
        } else if (strncmp(line, "kernel k", 8) == 0) {
            unsigned long k = strtoul(line + 8, NULL, 10);
            const char *real = strchr(line + 8, ' ');
            if (real == NULL || k == 0 || k > 100000)
                bail("%s: bad kernel line", path);
            if (k >= fc->nnames) {
                fc->names = realloc(fc->names, (k + 1) * sizeof *fc->names);
                if (fc->names == NULL)
                    bail("out of memory");
                memset(fc->names + fc->nnames, 0, (k + 1 - fc->nnames) * sizeof *fc->names);
                fc->nnames = k + 1;
            }
            fc->names[k] = strdup(real + 1);
        } else if (strcmp(line, "calls") == 0) {
            fc->calls = next != NULL ? strdup(next) : strdup("");
            break;
        }
    }
    if (fc->calls == NULL || fc->name[0] == '\0')
        bail("%s: no name or no calls", path);
    snprintf(fc->rule, sizeof fc->rule, "%s", what != NULL ? what : "a real program's trace");
    for (next = fc->calls; *next != '\0'; next++)
        if (*next == '\n')
            *next = ' ';
    free(text);
    fc->c.name = fc->name;
    fc->c.rule = fc->rule;
    fc->c.env[0] = NULL;
    fc->c.calls = fc->calls;
    fc->c.todo = fc->todo[0] != '\0' ? fc->todo : NULL;
    return 0;
#else
    (void)path;
    (void)fc;
    return -1;
#endif
}

static void file_case_free(struct file_case *fc)
{
    size_t k;
    for (k = 0; k < fc->nnames; k++)
        free(fc->names[k]);
    free(fc->names);
    free(fc->calls);
    memset(fc, 0, sizeof *fc);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case files' paths, sorted. */
static size_t case_files(char ***paths)
{
    const char *dir = test_path(test_srcdir(), "tests/engine_cases");
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    *paths = NULL;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 9 && strcmp(e->d_name + len - 9, ".calls.gz") == 0) {
            *paths = realloc(*paths, (n + 1) * sizeof **paths);
            if (*paths == NULL || ((*paths)[n] = malloc(strlen(dir) + len + 2)) == NULL)
                bail("out of memory");
            sprintf((*paths)[n++], "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    qsort(*paths, n, sizeof **paths, by_text);
    return n;
}


/* ---- graph nodes: the layers among a graph exec's kernel nodes (docs/layers.md, "Graphs") -------- */

/* A graph exec's kernel nodes in capture order, written in the call
 * language (kernel tokens and @Lk / @L- truth; sizes ignored, no groups):
 * obs_phase_graph_layers must give each node the layer the truth says, or
 * none where no layers are claimed; it pushes no live range and writes no
 * record (a graph launch's ranges stay at step level). */
struct graph_case {
    const char *name;
    const char *env[4];
    const char *nodes;
    int layers_found; /* 1: the truth's layers; 0: no layers claimed, whatever the truth */
};

static const struct graph_case graph_cases[] = {
    {"graph nodes: a Llama-shaped decode step of 4 layers", {NULL}, LL_FORWARD("1"), 1},
    {"graph nodes: alternating dense and MoE layers (6) with a shared expert", {NULL}, ALT_SHARED_FORWARD("1"), 1},
    {"graph nodes: GPT-2 shaped, OBS_LAYER=ln", {"OBS_LAYER=ln"}, G2_FORWARD("1"), 1},
    {"graph nodes: OBS_LAYER=off finds none", {"OBS_LAYER=off"}, LL_FORWARD("1"), 0},
    {"graph nodes: no repeated block, no layers", {NULL},
     "embed:1 cos:1 sin:1 rms:64 qkv:192 rope:64 attn:64 o_proj:64 add:64 up:256 act:256 down:64 lm_head:512 argmax:1", 0},
};
#define GRAPH_CASE_COUNT (sizeof graph_cases / sizeof graph_cases[0])
#define GRAPH_NODES_MAX 512

struct graph_result {
    int ran, layered;    /* the child ran; w.layer was set */
    unsigned live_depth; /* live ranges open after the call */
    uint64_t records;    /* records written by the call */
    uint32_t n;
    uint16_t layer[GRAPH_NODES_MAX];
};

/* The nodes' names and truth (-1: none). */
static uint32_t graph_nodes_parse(const char *text, char names[][32], int *truth)
{
    uint32_t n = 0;
    int cur = -1;
    const char *p = text;
    while (*p != '\0' && n < GRAPH_NODES_MAX) {
        size_t len = strcspn(p, " ");
        if (len > 0 && p[0] == '@' && p[1] == 'L')
            cur = p[2] == '-' ? -1 : atoi(p + 2);
        else if (len > 0) {
            size_t name_len = strcspn(p, ": ");
            snprintf(names[n], 32, "%.*s", (int)(name_len < 31 ? name_len : 31), p);
            truth[n++] = cur;
        }
        p += len;
        while (*p == ' ')
            p++;
    }
    return n;
}

static void graph_case_child(const struct graph_case *gc, struct graph_result *out)
{
    static char names[GRAPH_NODES_MAX][32];
    static int truth[GRAPH_NODES_MAX];
    static uint32_t order[GRAPH_NODES_MAX];
    struct obs_graph_walk w;
    uint64_t before, after;
    uint32_t i, n;
    size_t k;
    for (k = 0; k < 4 && gc->env[k] != NULL; k++)
        run.env[k] = gc->env[k];
    run.env[k] = NULL;
    obs_config_load(&obs_cfg, case_lookup);
    if (!obs_phase_engine_init())
        _exit(3);
    n = graph_nodes_parse(gc->nodes, names, truth);
    for (i = 0; i < n; i++)
        order[i] = engine_stub_name(names[i]);
    memset(&w, 0, sizeof w); /* as obs_graph_walk_init and obs_graph_walk_add_kernel leave it (record/, not linked here) */
    w.nodes = w.kernels = n;
    w.order = order;
    w.norder = w.order_cap = n;
    engine_stub_records(&before);
    obs_phase_graph_layers(&w);
    engine_stub_records(&after);
    out->n = n;
    out->layered = w.layer != NULL;
    for (i = 0; i < n; i++)
        out->layer[i] = w.layer != NULL ? w.layer[i] : 0xffffu;
    out->live_depth = engine_stub_live_depth();
    out->records = after - before;
    out->ran = 1;
    free(w.layer);
}

/* 2 checks. */
static void check_graph_case(const struct graph_case *gc)
{
    static char names[GRAPH_NODES_MAX][32];
    static int truth[GRAPH_NODES_MAX];
    struct graph_result *r = shared_map(sizeof *r);
    uint32_t n = graph_nodes_parse(gc->nodes, names, truth), i, right = 0, in_layers = 0, shown = 0;
    int status = 0;
    pid_t pid;
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        bail("fork failed");
    if (pid == 0) {
        graph_case_child(gc, r);
        _exit(0);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !r->ran || r->n != n) {
        ok(0, "%s: the engine ran (child status %d)", gc->name, status);
        ok(0, "%s: no live range, no record", gc->name);
        munmap(r, sizeof *r);
        return;
    }
    for (i = 0; i < n; i++) {
        int want = gc->layers_found ? truth[i] : -1, got = r->layer[i] == 0xffffu ? -1 : (int)r->layer[i];
        in_layers += want >= 0;
        right += want == got;
        if (want != got && shown++ < 3)
            diag("%s: node %u %s: truth layer %d, found %d", gc->name, i, names[i], want, got);
    }
    diag("FIGURES graph nodes %s: nodes=%u in_layers=%u right=%u", gc->name, n, in_layers, right);
    ok(right == n && (gc->layers_found ? r->layered && in_layers > 0 : !r->layered),
       "%s: every kernel node has its layer (%u of %u; %u in layers)", gc->name, right, n, in_layers);
    ok(r->live_depth == 0 && r->records == 0,
       "%s: no live range pushed, no record written (live depth %u, records %llu)", gc->name, r->live_depth,
       (unsigned long long)r->records);
    munmap(r, sizeof *r);
}

/* Real cases again with rules (docs/phases.md, "Rules"): those that
 * obs-report suggest-phases writes for the program's automatic trace
 * (tests/t_frameworks' round trip), which must give the truth's labels as
 * well, live from the first launch (rules decide at the launch). */
static const struct {
    const char *file; /* the case file's name holds this */
    const char *env[3];
} rules_twins[] = {
    /* transformers' continuous batching: each forward an ITERATION/k, opened by its embedding (a gather over the
     * first, larger batches, indexSelectSmallIndex later) at its first launch after the sampled ids' read */
    {"hf-serving", {"OBS_ITERATION=indexSelectSmallIndex,vectorized_gather_kernel", NULL}},
};
#define RULES_TWIN_COUNT (sizeof rules_twins / sizeof rules_twins[0])

static size_t twins_of(char **paths, size_t nfiles)
{
    size_t n = 0, i, k;
    for (i = 0; i < nfiles; i++)
        for (k = 0; k < RULES_TWIN_COUNT; k++)
            n += strstr(paths[i], rules_twins[k].file) != NULL;
    return n;
}

int main(void)
{
    size_t i, k, nfiles;
    char **paths;
    const char *only = getenv("OBS_ENGINE_CASE"); /* run only the cases whose name contains this */
    nfiles = case_files(&paths);
    /* a real program's case: its layers, and again with OBS_LAYER=off; the state machine's moves at the end */
    plan((int)(2 * (CASE_COUNT + GRAPH_CASE_COUNT) + 4 * (nfiles + twins_of(paths, nfiles)) + 1));
    for (i = 0; i < CASE_COUNT; i++) {
        if (only != NULL && strstr(cases[i].name, only) == NULL) {
            skip("not %s", only);
            skip("not %s", only);
            continue;
        }
        check_case(&cases[i], 0, NULL);
    }
    for (i = 0; i < nfiles; i++) {
        struct file_case fc;
        if (only != NULL && strstr(paths[i], only) == NULL) {
            for (k = 0; k < 4 * (1 + twins_of(&paths[i], 1)); k++) /* as many tests as the file case makes */
                skip("not %s", only);
            continue;
        }
        if (load_file_case(paths[i], &fc) != 0) {
#ifdef HAVE_ZLIB
            bail("%s: cannot read it", paths[i]);
#else
            skip("%s: no zlib to read it (configure found none)", paths[i]);
            skip("%s: no zlib to read it (configure found none)", paths[i]);
            skip("%s: no zlib to read it (configure found none)", paths[i]);
            continue;
#endif
        }
        aliases.names = fc.names;
        aliases.n = fc.nnames;
        check_case(&fc.c, 1, fc.layers_todo[0] != '\0' ? fc.layers_todo : NULL);
        for (k = 0; k < RULES_TWIN_COUNT; k++)
            if (strstr(paths[i], rules_twins[k].file) != NULL) {
                struct engine_case twin = fc.c;
                char name[300];
                size_t e;
                snprintf(name, sizeof name, "%s, rules %s", fc.c.name, rules_twins[k].env[0]);
                twin.name = name;
                twin.todo = NULL;
                for (e = 0; e < 3; e++)
                    twin.env[e] = rules_twins[k].env[e];
                twin.env[3] = NULL;
                check_case(&twin, 1, NULL);
            }
        aliases.names = NULL;
        aliases.n = 0;
        file_case_free(&fc);
    }
    for (i = 0; i < nfiles; i++)
        free(paths[i]);
    free(paths);
    for (i = 0; i < GRAPH_CASE_COUNT; i++) {
        if (only != NULL && strstr(graph_cases[i].name, only) == NULL) {
            skip("not %s", only);
            skip("not %s", only);
            continue;
        }
        check_graph_case(&graph_cases[i]);
    }
    ok(moves_runs > 0 && bad_moves_total == 0,
       "the state machine: every move over %lu runs of the cases from a state its table allows (%lu not%s%s)",
       moves_runs, bad_moves_total, bad_moves_case[0] ? "; first: " : "", bad_moves_case);
    diag("FIGURES engine cases %zu and %zu from real programs: %u right, %u TODO still wrong, %u TODO now right",
         CASE_COUNT, nfiles, cases_passing, cases_todo_failing, cases_todo_passing);
    return 0;
}
