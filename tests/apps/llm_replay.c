/* llm_replay: replays an LLM inference loop described by a scenario file
 * (tests/scenarios/NAME.scn, format in docs/scenarios.md) on the CUDA
 * runtime ABI (shim/abi/cuda_abi.h, linked to the simulated libcudart.so.13)
 * or, built with -DOBS_APP_HIP as llm_replay_hip, on the HIP ABI (linked to
 * the simulated libamdhip64.so.5). Kernels are registered at start with the
 * scenario's names; they are never run, the simulator charges their cost.
 *
 * Each host thread (scenario "threads", or --threads) drives its own loop on
 * its own stream ("stream default": the legacy stream with one thread, each
 * thread's per-thread default stream with several): per prompt, the prompt's ids copied HtoD, the prefill (in
 * chunks with a stream sync after each but the last, when "chunk" is set:
 * pre, layers x layer, post kernels with grids scaled by the tokens), the
 * token read back (sync cudaMemcpy, cudaMemcpyAsync + cudaStreamSynchronize
 * or + cudaEventRecord/cudaEventSynchronize; or none), then the decode steps (the same
 * sequence with decode-sized grids, or one cudaGraphLaunch of a graph
 * captured at warm-up or after the first prefill, plus the "eager" kernels),
 * each ending in the token read back.
 *
 * Ground truth goes to OBS_SIM_LOG (when set), interleaved in true order
 * with the simulator's lines, in llm_loop's format (domain "-"), with the
 * thread's gettid() as a 7th column when OBS_SIM_LOG_TID=1:
 *     llm_replayRangePush<TAB>range<TAB>NAME<TAB>-<TAB>-<TAB>depth[<TAB>tid]
 *     llm_replayRangePop<TAB>range<TAB>-<TAB>-<TAB>-<TAB>depth[<TAB>tid]
 * per thread: PREFILL around a prompt's launches (all chunks) and its token
 * read-back; DECODE/STEP_0; DECODE/STEADY around DECODE/STEP_1 ..;
 * KV_GATHER around the decode launches of kernels marked kv; GRAPH_CAPTURE
 * around a capture (those launches are not executions). Marks around each
 * layer's launches when the scenario has two or more (docs/layers.md), as
 * tests/frameworks/fw_truth.py writes them:
 *     llm_replayMark<TAB>range<TAB>LAYER/k<TAB>-<TAB>-<TAB>depth[<TAB>tid]
 *     llm_replayMark<TAB>range<TAB>LAYER_END<TAB>-<TAB>-<TAB>depth[<TAB>tid]
 * and, with them, an EMBED mark at the start of a prompt, of each of its
 * chunks and of each decode step, a HEAD mark before a pass's post kernels
 * (the launches from EMBED to LAYER/0 are before the layers, from HEAD to
 * the next mark or range after them: docs/layers.md, "Reports"). And one line per
 * generation with the host wall-clock figures (CLOCK_MONOTONIC):
 *     llm_replayGeneration<TAB>timing<TAB>gen=G steps=S ttft_ns=T steady_ns=D t0_ns=A marks=P,F,R,S,L<TAB>-<TAB>-<TAB>0[<TAB>tid]
 * ttft_ns: just before the prompt's first call (its ids' copy) to the
 * return of the prefill's token read-back (the first token is the prompt's
 * own); steady_ns: from there to the return of the last step's read-back
 * (-1 without a decode step); t0_ns: the prefill's first launch,
 * CLOCK_MONOTONIC; tokens/s = S / steady_ns (a token per step). These are
 * the replay's own stopwatch, for the reader. The marks name the calls the figures run between, for tests
 * that take the times from the trace itself (tests/t_scenarios): P just
 * before the prompt's first call (its ids' copy), F just before the
 * prefill's first launch, R just after the prefill's token read returned,
 * S and L just after step 0's and the last step's read returned (each
 * CLOCK_MONOTONIC ns; 0: no such instant). With "readback none" (no token
 * read: it stays on the device) R, S and L are taken just after the
 * stopping check's flag read returned, the first sync after the forward,
 * or, with no stop_check, just after the forward's last launch returned;
 * ttft_ns and steady_ns then run to those instants. A call of this thread began
 * after P or F iff it is that call or a later one; a call began before R,
 * S or L iff it is that read's last call or an earlier one (same clock,
 * same thread, read outside the calls).
 *
 * Usage: llm_replay [--full] [--threads N] [--time] FILE.scn
 * Prints "scenario NAME threads T generations G launches L captured C"
 * (the same with and without a shim), exits 0; 1 when a runtime call failed;
 * 2 on a bad scenario or usage. --time adds a line "loop_ns N": the
 * CLOCK_MONOTONIC time from just before the first thread's loop to the
 * last one's end (what a shim adds per launch, without process start and
 * exit: contrib/bench/gpu_time_bench.sh), and "loop_cpu_ns M": the CPU time
 * all the process's threads used meanwhile (CLOCK_PROCESS_CPUTIME_ID: a
 * tool's own threads included). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "scenario.h"

#ifdef OBS_APP_HIP
#include "abi/hip_abi.h"
typedef obs_hipStream_t rt_stream;
typedef obs_hipEvent_t rt_event;
typedef obs_hipGraph_t rt_graph;
typedef obs_hipGraphExec_t rt_exec;
typedef obs_hipDim3 rt_dim3;
#define RT_OK obs_hipSuccess
#define RT_D2H obs_hipMemcpyDeviceToHost
#define RT_H2D obs_hipMemcpyHostToDevice
#define RT_D2D obs_hipMemcpyDeviceToDevice
#define rt_memset_async hipMemsetAsync
#define RT_NONBLOCKING 1u
#define RT_PER_THREAD OBS_HIP_STREAM_PER_THREAD
#define rt_launch hipLaunchKernel
#define rt_stream_create hipStreamCreate
#define rt_stream_create_flags hipStreamCreateWithFlags
#define rt_stream_destroy hipStreamDestroy
#define rt_stream_sync hipStreamSynchronize
#define rt_malloc hipMalloc
#define rt_free hipFree
#define rt_memcpy hipMemcpy
#define rt_memcpy_async hipMemcpyAsync
#define rt_event_create hipEventCreate
#define rt_event_record hipEventRecord
#define rt_event_sync hipEventSynchronize
#define rt_event_destroy hipEventDestroy
#define rt_begin_capture(s) hipStreamBeginCapture((s), obs_hipStreamCaptureModeThreadLocal)
#define rt_end_capture hipStreamEndCapture
#define rt_instantiate(e, g) hipGraphInstantiate((e), (g), NULL, NULL, 0)
#define rt_graph_launch hipGraphLaunch
#define RT_LOG_API "llm_replay_hip"
#else
#include "abi/cuda_abi.h"
typedef obs_cudaStream_t rt_stream;
typedef obs_cudaEvent_t rt_event;
typedef obs_cudaGraph_t rt_graph;
typedef obs_cudaGraphExec_t rt_exec;
typedef obs_dim3 rt_dim3;
#define RT_OK obs_cudaSuccess
#define RT_D2H obs_cudaMemcpyDeviceToHost
#define RT_H2D obs_cudaMemcpyHostToDevice
#define RT_D2D obs_cudaMemcpyDeviceToDevice
#define rt_memset_async cudaMemsetAsync
#define RT_NONBLOCKING OBS_CUDA_STREAM_NON_BLOCKING
#define RT_PER_THREAD OBS_CUDA_STREAM_PER_THREAD
#define rt_launch cudaLaunchKernel
#define rt_stream_create cudaStreamCreate
#define rt_stream_create_flags cudaStreamCreateWithFlags
#define rt_stream_destroy cudaStreamDestroy
#define rt_stream_sync cudaStreamSynchronize
#define rt_malloc cudaMalloc
#define rt_free cudaFree
#define rt_memcpy cudaMemcpy
#define rt_memcpy_async cudaMemcpyAsync
#define rt_event_create cudaEventCreate
#define rt_event_record cudaEventRecord
#define rt_event_sync cudaEventSynchronize
#define rt_event_destroy cudaEventDestroy
#define rt_begin_capture(s) cudaStreamBeginCapture((s), obs_cudaStreamCaptureModeThreadLocal)
#define rt_end_capture cudaStreamEndCapture
#define rt_instantiate(e, g) cudaGraphInstantiate((e), (g), 0)
#define rt_graph_launch cudaGraphLaunch
#define RT_LOG_API "llm_replay"
#endif

static struct scenario scn;
static int full_sizes;
static unsigned nthreads;

/* ---- kernels: one host "stub" address per scenario kernel ----------------------------------- */

static char kernel_stubs[SCN_MAX_KERNELS];

#ifdef OBS_APP_HIP
static const char app_code_object[] = "__CLANG_OFFLOAD_BUNDLE__ (fake)";
static const struct obs_hip_fatbin_wrapper app_fatbin = {OBS_HIP_FATBIN_MAGIC, 1, app_code_object, NULL};

static void register_kernels(void)
{
    void **modules = __hipRegisterFatBinary(&app_fatbin);
    int i;
    for (i = 0; i < scn.nkernels; i++)
        __hipRegisterFunction(modules, &kernel_stubs[i], scn.kernels[i].name, scn.kernels[i].name,
                              (unsigned int)-1, NULL, NULL, NULL, NULL, NULL);
}

static void unregister_kernels(void)
{
}
#else
static const unsigned long long fake_fatbin[8] = {0x00100001ba55ed50ull, 0x40ull};
static struct obs_fatbin_wrapper fake_wrapper = {OBS_FATBIN_WRAPPER_MAGIC, 1, fake_fatbin, NULL};
static void **fatbin_handle;

static void register_kernels(void)
{
    int i;
    fatbin_handle = __cudaRegisterFatBinary(&fake_wrapper);
    for (i = 0; i < scn.nkernels; i++)
        __cudaRegisterFunction(fatbin_handle, &kernel_stubs[i], scn.kernels[i].name, scn.kernels[i].name, -1,
                               NULL, NULL, NULL, NULL, NULL);
    __cudaRegisterFatBinaryEnd(fatbin_handle);
}

static void unregister_kernels(void)
{
    __cudaUnregisterFatBinary(fatbin_handle);
}
#endif

/* ---- ground truth ------------------------------------------------------------------------------ */

static int truth_fd = -1;
static int truth_tid_column;

static void truth_write(const char *api, const char *kind, const char *name, int value)
{
    char line[512], tid[32] = "";
    int n;
    if (truth_fd < 0)
        return;
    if (truth_tid_column)
        snprintf(tid, sizeof tid, "\t%ld", (long)syscall(SYS_gettid));
    n = snprintf(line, sizeof line, "%s%s\t%s\t%s\t-\t-\t%d%s\n", RT_LOG_API, api, kind, name, value, tid);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t w;
        do
            w = write(truth_fd, line, (size_t)n);
        while (w < 0 && errno == EINTR);
    }
}

/* ---- one thread's loop ------------------------------------------------------------------------ */

struct worker {
    pthread_t thread;
    int index;
    rt_stream stream;
    rt_event event;
    rt_exec exec[16];
    int have_graph;
    int *dev_ids, *dev_token, host_token;
    char *dev_logits, *host_logits; /* read_bytes x sequences: a read-back of more than a token id */
    int *host_ids;
    size_t ids_cap;
    char *dev_scratch, *host_scratch; /* the copies and memsets of the scenario's sequences */
    size_t scratch_cap;
    unsigned gen_tokens; /* tokens the generation produced: the 'n' of after_generation */
    int depth;
    unsigned long launches, captured, generations, failures;
};

static void push(struct worker *w, const char *name)
{
    truth_write("RangePush", "range", name, ++w->depth);
}

static void pop(struct worker *w)
{
    truth_write("RangePop", "range", "-", --w->depth);
}

static void check(struct worker *w, int status, const char *what)
{
    if (status != (int)RT_OK) {
        if (w->failures++ == 0)
            fprintf(stderr, "llm_replay: thread %d: %s failed (%d)\n", w->index, what, status);
    }
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

enum pass { PASS_PREFILL, PASS_DECODE, PASS_CAPTURE, PASS_EAGER_AFTER_GRAPH };

static void launch_kernel(struct worker *w, int k, unsigned tokens, int capturing)
{
    const struct scn_kernel *kd = &scn.kernels[k];
    rt_dim3 grid = {scenario_grid(kd, tokens), 1, 1}, block = {kd->block, 1, 1};
    void *args[2] = {&w->dev_token, &w->dev_ids};
    check(w, (int)rt_launch((const void *)&kernel_stubs[k], grid, block, args, 0, w->stream), "kernel launch");
    if (capturing)
        w->captured++;
    else
        w->launches++;
}

/* A sequence's other calls (scenario.h, struct scn_item). */
static void run_call(struct worker *w, const struct scn_item *it, unsigned tokens)
{
    size_t n = (size_t)it->bytes * (it->per == 't' ? tokens : it->per == 'n' ? w->gen_tokens : 1u);
    if (n > w->scratch_cap)
        n = w->scratch_cap;
    switch (it->kind) {
    case SCN_ITEM_COPY:
        if (it->dir == 'h')
            check(w, (int)rt_memcpy_async(w->dev_scratch, w->host_scratch, n, RT_H2D, w->stream), "copy in");
        else if (it->dir == 'd')
            check(w, (int)rt_memcpy_async(w->host_scratch, w->dev_scratch, n, RT_D2H, w->stream), "copy out");
        else
            check(w, (int)rt_memcpy_async(w->dev_scratch + n, w->dev_scratch, n, RT_D2D, w->stream), "copy");
        break;
    case SCN_ITEM_MEMSET:
        check(w, (int)rt_memset_async(w->dev_scratch, 0, n, w->stream), "memset");
        break;
    case SCN_ITEM_SYNC:
        check(w, (int)rt_stream_sync(w->stream), "stream sync");
        break;
    }
}

/* One sequence of a pass: which kernels it launches, with KV_GATHER ranges
 * around the kv kernels of an eager decode step, and its other calls. */
static void run_seq(struct worker *w, const struct scn_seq *seq, enum pass pass, unsigned tokens)
{
    int i;
    for (i = 0; i < seq->n; i++) {
        const struct scn_item *it = &seq->items[i];
        const struct scn_kernel *kd = &scn.kernels[it->kernel];
        int kv_range;
        if ((pass == PASS_PREFILL && it->when == 'd') || (pass != PASS_PREFILL && it->when == 'p') ||
            (it->when == 'm' && tokens <= 1))
            continue;
        if (it->kind != SCN_ITEM_KERNEL) {
            run_call(w, it, tokens);
            continue;
        }
        if (pass == PASS_CAPTURE && kd->eager)
            continue;
        if (pass == PASS_EAGER_AFTER_GRAPH && !kd->eager)
            continue;
        kv_range = kd->kv && (pass == PASS_DECODE || pass == PASS_EAGER_AFTER_GRAPH);
        if (kv_range)
            push(w, "KV_GATHER");
        launch_kernel(w, it->kernel, tokens, pass == PASS_CAPTURE);
        if (kv_range)
            pop(w);
    }
}

/* The truth's EMBED and HEAD marks (docs/layers.md, "Reports"): what runs
 * from an EMBED mark to the first LAYER/k mark is before the layers (a
 * prompt's or step's setup, a chunk's inputs, the pre kernels), from a HEAD
 * mark to the next EMBED or LAYER/k mark or range after them (the post
 * kernels, a chunk's read). Written where the LAYER/k marks are. */
static void part_mark(struct worker *w, const char *part)
{
    if (scn.layers > 1)
        truth_write("Mark", "range", part, w->depth);
}

static void run_pass(struct worker *w, enum pass pass, unsigned tokens)
{
    unsigned l;
    run_seq(w, &scn.pre, pass, tokens);
    for (l = 0; l < scn.layers; l++) {
        char name[32];
        snprintf(name, sizeof name, "LAYER/%u", l);
        if (scn.layers > 1) /* one "layer" is no repetition: no layers to find */
            truth_write("Mark", "range", name, w->depth); /* the launches up to LAYER_END are layer l's */
        run_seq(w, &scn.layer, pass, tokens);
        if (scn.layers > 1)
            truth_write("Mark", "range", "LAYER_END", w->depth);
    }
    part_mark(w, "HEAD");
    run_seq(w, &scn.post, pass, tokens);
}

/* What the host reads back after an evaluation: a token id (4 bytes), or
 * read_bytes per sequence (ggml reads the logits back). */
static void read_token(struct worker *w, unsigned seqs)
{
    size_t bytes = (size_t)scn.read_bytes * seqs;
    if (seqs == 0 && scn.readback != SCN_READ_NONE) { /* a prompt's reads=0: nothing sampled, a sync ends it */
        check(w, (int)rt_stream_sync(w->stream), "stream sync");
        return;
    }
    void *host = scn.read_bytes == 4 && seqs == 1 ? (void *)&w->host_token : (void *)w->host_logits;
    const void *dev = scn.read_bytes == 4 && seqs == 1 ? (const void *)w->dev_token : (const void *)w->dev_logits;
    switch (scn.readback) {
    case SCN_READ_COPY:
        check(w, (int)rt_memcpy(host, dev, bytes, RT_D2H), "token copy");
        break;
    case SCN_READ_ASYNC:
        check(w, (int)rt_memcpy_async(host, dev, bytes, RT_D2H, w->stream), "token copy");
        check(w, (int)rt_stream_sync(w->stream), "stream sync");
        break;
    case SCN_READ_EVENT:
        check(w, (int)rt_memcpy_async(host, dev, bytes, RT_D2H, w->stream), "token copy");
        check(w, (int)rt_event_record(w->event, w->stream), "event record");
        check(w, (int)rt_event_sync(w->event), "event sync");
        break;
    case SCN_READ_NONE: /* the token stays on the device */
        break;
    }
}

/* readback none: no token read ends the forward, the stopping check's flag
 * read does (when there is one): where the R, S and L marks are taken. */
static int marks_after_stop_check(void)
{
    return scn.readback == SCN_READ_NONE && scn.stop_check.n > 0;
}

/* mask_check / stop_check: an iteration of its own that reads a 1-byte
 * flag back (`bool(x.item())`: a cudaMemcpyAsync DtoH and a sync). */
static void flag_iteration(struct worker *w, const struct scn_seq *seq, enum pass pass, unsigned tokens)
{
    if (seq->n == 0)
        return;
    run_seq(w, seq, pass, tokens);
    check(w, (int)rt_memcpy_async(w->host_logits, w->dev_logits, 1, RT_D2H, w->stream), "flag copy");
    check(w, (int)rt_stream_sync(w->stream), "flag sync");
}

/* Capture the decode step (tokens = batch size) into w->exec[slot]. */
static void capture(struct worker *w, int slot, unsigned tokens)
{
    rt_graph g = NULL;
    push(w, "GRAPH_CAPTURE");
    check(w, (int)rt_begin_capture(w->stream), "begin capture");
    run_pass(w, PASS_CAPTURE, tokens);
    check(w, (int)rt_end_capture(w->stream, &g), "end capture");
    check(w, (int)rt_instantiate(&w->exec[slot], g), "graph instantiate");
    pop(w);
    w->have_graph = 1;
}

static void copy_prompt(struct worker *w, unsigned tokens)
{
    size_t bytes = (size_t)tokens * sizeof(int);
    if (scn.inputs != SCN_INPUTS_PROMPT)
        return;
    if (bytes > w->ids_cap)
        bytes = w->ids_cap;
    if (scn.prompt_copy_sync)
        check(w, (int)rt_memcpy(w->dev_ids, w->host_ids, bytes, RT_H2D), "prompt copy");
    else
        check(w, (int)rt_memcpy_async(w->dev_ids, w->host_ids, bytes, RT_H2D, w->stream), "prompt copy");
}

/* inputs per_eval: an evaluation's inputs, its tokens' ids and positions,
 * each copied in and synchronised (ggml_backend_tensor_set). */
static void copy_eval_inputs(struct worker *w, unsigned tokens)
{
    size_t bytes = (size_t)tokens * sizeof(int);
    int k;
    if (scn.inputs != SCN_INPUTS_PER_EVAL)
        return;
    if (bytes > w->ids_cap)
        bytes = w->ids_cap;
    for (k = 0; k < 2; k++) {
        check(w, (int)rt_memcpy_async(w->dev_ids, w->host_ids, bytes, RT_H2D, w->stream), "input copy");
        check(w, (int)rt_stream_sync(w->stream), "input sync");
    }
}

/* reads: sequences whose ids the prompt's read-back carries (prompt reads=). */
static void generation(struct worker *w, unsigned tokens, unsigned steps, unsigned reads)
{
    unsigned done = 0, k;
    uint64_t t0, t_first = 0, t_end = 0, t_prompt, t_prefill_read;
    char name[48], timing[256];

    t_prompt = now_ns();
    copy_prompt(w, tokens);
    run_seq(w, &scn.before_prompt, PASS_PREFILL, tokens);
    push(w, "PREFILL");
    t0 = now_ns();
    part_mark(w, "EMBED");
    run_seq(w, &scn.prompt_prelude, PASS_PREFILL, tokens);
    while (done < tokens) {
        unsigned piece = scn.chunk && tokens - done > scn.chunk ? scn.chunk : tokens - done;
        part_mark(w, "EMBED");
        copy_eval_inputs(w, piece);
        flag_iteration(w, &scn.mask_check, PASS_PREFILL, piece);
        run_pass(w, PASS_PREFILL, piece);
        done += piece;
        if (done < tokens && scn.chunk_read)
            read_token(w, 1);
        else if (done < tokens)
            check(w, (int)rt_stream_sync(w->stream), "chunk sync");
    }
    read_token(w, reads);
    t_prefill_read = now_ns();
    flag_iteration(w, &scn.stop_check, PASS_PREFILL, 1);
    if (marks_after_stop_check())
        t_prefill_read = now_ns();
    pop(w);
    if (scn.graph == SCN_GRAPH_AFTER_PREFILL && !w->have_graph && steps > 0)
        capture(w, 0, 1);
    for (k = 0; k < steps; k++) {
        if (k == 1)
            push(w, "DECODE/STEADY");
        snprintf(name, sizeof name, "DECODE/STEP_%u", k);
        push(w, name);
        part_mark(w, "EMBED");
        if (w->have_graph) {
            check(w, (int)rt_graph_launch(w->exec[0], w->stream), "graph launch");
            w->launches++;
            run_pass(w, PASS_EAGER_AFTER_GRAPH, 1);
        } else {
            copy_eval_inputs(w, scn.sequences);
            flag_iteration(w, &scn.mask_check, PASS_DECODE, scn.sequences);
            run_pass(w, PASS_DECODE, scn.sequences);
        }
        read_token(w, scn.sequences);
        /* The read-back's return ends the step's token read: before the truth line. */
        t_end = now_ns();
        flag_iteration(w, &scn.stop_check, PASS_DECODE, scn.sequences);
        if (marks_after_stop_check())
            t_end = now_ns();
        if (k == 0)
            t_first = t_end;
        pop(w);
    }
    if (steps > 1)
        pop(w);
    w->gen_tokens = steps + 1;
    run_seq(w, &scn.after_generation, PASS_DECODE, 1);
    snprintf(timing, sizeof timing, "gen=%lu steps=%u ttft_ns=%lld steady_ns=%lld t0_ns=%llu marks=%llu,%llu,%llu,%llu,%llu",
             w->generations, steps, (long long)(t_prefill_read - t_prompt),
             steps > 0 ? (long long)(t_end - t_prefill_read) : -1LL, (unsigned long long)t0, (unsigned long long)t_prompt,
             (unsigned long long)t0, (unsigned long long)t_prefill_read, (unsigned long long)t_first,
             (unsigned long long)(steps > 0 ? t_end : 0));
    truth_write("Generation", "timing", timing, 0);
    w->generations++;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    unsigned max_tokens = 1, i;
    int p, r;

    for (p = 0; p < scn.nprompts; p++) {
        unsigned t = full_sizes ? scn.prompts[p].full_tokens : scn.prompts[p].tokens;
        if (t > max_tokens)
            max_tokens = t;
    }
    if (max_tokens < scn.sequences)
        max_tokens = scn.sequences;
    {
        const struct scn_seq *seqs[] = {&scn.pre, &scn.layer, &scn.post, &scn.mask_check, &scn.stop_check,
                                        &scn.before_prompt, &scn.prompt_prelude, &scn.after_generation};
        unsigned max_steps = 0;
        size_t q;
        for (p = 0; p < scn.nprompts; p++) {
            unsigned st = full_sizes ? scn.prompts[p].full_steps : scn.prompts[p].steps;
            if (st > max_steps)
                max_steps = st;
        }
        w->scratch_cap = 64;
        for (q = 0; q < sizeof seqs / sizeof seqs[0]; q++)
            for (i = 0; i < (unsigned)seqs[q]->n; i++) {
                const struct scn_item *it = &seqs[q]->items[i];
                size_t n = (size_t)it->bytes *
                           (it->per == 't' ? max_tokens : it->per == 'n' ? (size_t)max_steps + 1 : 1u);
                if (it->kind != SCN_ITEM_KERNEL && n > w->scratch_cap)
                    w->scratch_cap = n;
            }
    }
    w->ids_cap = (size_t)max_tokens * sizeof(int);
    w->host_ids = calloc(max_tokens, sizeof(int));
    if (w->host_ids == NULL) {
        w->failures++;
        return NULL;
    }
    /* "stream default": the legacy stream with one thread; with several,
     * each thread's per-thread default stream (--default-stream per-thread). */
    if (scn.stream == SCN_STREAM_DEFAULT && nthreads > 1)
        w->stream = RT_PER_THREAD;
    if (scn.stream == SCN_STREAM_OWN)
        check(w, (int)rt_stream_create(&w->stream), "stream create");
    else if (scn.stream == SCN_STREAM_NONBLOCKING)
        check(w, (int)rt_stream_create_flags(&w->stream, RT_NONBLOCKING), "stream create");
    check(w, (int)rt_malloc((void **)&w->dev_ids, w->ids_cap), "malloc");
    check(w, (int)rt_malloc((void **)&w->dev_token, 64), "malloc");
    {
        unsigned seqs = scn.sequences;
        for (p = 0; p < scn.nprompts; p++)
            if (scn.prompts[p].reads > seqs)
                seqs = scn.prompts[p].reads;
        w->host_logits = malloc((size_t)scn.read_bytes * seqs);
        if (w->host_logits == NULL)
            w->failures++;
        check(w, (int)rt_malloc((void **)&w->dev_logits, (size_t)scn.read_bytes * seqs), "malloc");
    }
    w->host_scratch = calloc(w->scratch_cap, 1);
    if (w->host_scratch == NULL)
        w->failures++;
    check(w, (int)rt_malloc((void **)&w->dev_scratch, 2 * w->scratch_cap), "malloc"); /* d2d: two halves */
    if (scn.readback == SCN_READ_EVENT)
        check(w, (int)rt_event_create(&w->event), "event create");
    if (w->failures)
        return NULL;
    /* vLLM-like: the decode graphs are captured before the first request,
     * one per batch size; the batch of one is replayed. */
    if (scn.graph == SCN_GRAPH_WARMUP)
        for (i = scn.graph_sizes; i-- > 0;)
            capture(w, (int)i, 1u << i);
    for (p = 0; p < scn.nprompts; p++) {
        const struct scn_prompt *pr = &scn.prompts[p];
        unsigned repeat = full_sizes ? pr->full_repeat : pr->repeat;
        for (r = 0; r < (int)repeat; r++) {
            if (pr->gap_ms > 0 && w->generations > 0) {
                struct timespec ts = {(time_t)(pr->gap_ms / 1000), (long)(pr->gap_ms % 1000) * 1000000L};
                nanosleep(&ts, NULL);
            }
            generation(w, full_sizes ? pr->full_tokens : pr->tokens, full_sizes ? pr->full_steps : pr->steps,
                       pr->reads);
        }
    }
    if (scn.readback == SCN_READ_EVENT)
        rt_event_destroy(w->event);
    rt_free(w->dev_ids);
    rt_free(w->dev_token);
    rt_free(w->dev_logits);
    free(w->host_logits);
    rt_free(w->dev_scratch);
    free(w->host_scratch);
    if (scn.stream != SCN_STREAM_DEFAULT)
        rt_stream_destroy(w->stream);
    free(w->host_ids);
    return NULL;
}

/* ---- main ------------------------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    size_t n;
    if (f == NULL)
        return NULL;
    buf = malloc(1 << 20);
    if (buf == NULL) {
        fclose(f);
        return NULL;
    }
    n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    *len = n;
    return buf;
}

static int usage(void)
{
    fprintf(stderr, "usage: llm_replay [--full] [--threads N] [--time] FILE.scn\n");
    return 2;
}

int main(int argc, char **argv)
{
    static struct worker workers[SCN_MAX_THREADS];
    const char *path = NULL, *log = getenv("OBS_SIM_LOG"), *tid = getenv("OBS_SIM_LOG_TID");
    unsigned threads = 0, t;
    unsigned long launches = 0, captured = 0, generations = 0, failures = 0;
    char err[256], *text;
    size_t len = 0;
    int i, timed = 0;
    struct timespec t0, t1, c0, c1;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--full") == 0)
            full_sizes = 1;
        else if (strcmp(argv[i], "--time") == 0)
            timed = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 1 || v > SCN_MAX_THREADS)
                return usage();
            threads = (unsigned)v;
        } else if (argv[i][0] == '-' || path != NULL)
            return usage();
        else
            path = argv[i];
    }
    if (path == NULL)
        return usage();
    text = read_file(path, &len);
    if (text == NULL) {
        fprintf(stderr, "llm_replay: %s: %s\n", path, strerror(errno));
        return 2;
    }
    if (scenario_parse(text, len, &scn, err, sizeof err) != 0) {
        fprintf(stderr, "llm_replay: %s: %s\n", path, err);
        free(text);
        return 2;
    }
    free(text);
    if (threads == 0)
        threads = scn.threads;
    nthreads = threads;
    if (log != NULL && *log != '\0')
        truth_fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    truth_tid_column = tid != NULL && strcmp(tid, "1") == 0;
    register_kernels();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (t = 0; t < threads; t++) {
        workers[t].index = (int)t;
        if (threads == 1)
            worker_main(&workers[t]);
        else if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) != 0)
            workers[t].failures++;
    }
    for (t = 0; t < threads; t++) {
        if (threads > 1 && workers[t].failures == 0)
            pthread_join(workers[t].thread, NULL);
        launches += workers[t].launches;
        captured += workers[t].captured;
        generations += workers[t].generations;
        failures += workers[t].failures;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    unregister_kernels();
    printf("scenario %s threads %u generations %lu launches %lu captured %lu\n", scn.name, threads, generations,
           launches, captured);
    if (timed)
        printf("loop_ns %lld\nloop_cpu_ns %lld\n",
               (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec),
               (long long)(c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec));
    return failures == 0 ? 0 : 1;
}
