/* Scenario files of tests/apps/llm_replay: a line-based description of an
 * LLM inference loop (kernels, the layer's kernel sequence, prompts, decode
 * steps, how a token is read back, chunked prefill, CUDA graphs, threads).
 * Format: docs/scenarios.md. The parser works on a buffer (no I/O), is
 * bounded (every table has a fixed size, every number a range) and reports
 * the first error with its line; tests/fuzz/scenario_fuzz.c fuzzes it. */
#ifndef OBS_TESTS_SCENARIO_H
#define OBS_TESTS_SCENARIO_H

#include <stddef.h>

#define SCN_MAX_KERNELS 64
#define SCN_MAX_SEQ 64      /* kernels in pre, layer, post */
#define SCN_MAX_PROMPTS 64
#define SCN_ID_MAX 32       /* kernel id, with its NUL */
#define SCN_NAME_MAX 240    /* kernel name, with its NUL */
#define SCN_LINE_MAX 1024
#define SCN_MAX_LAYERS 256
#define SCN_MAX_TOKENS 1000000u
#define SCN_MAX_STEPS 100000u
#define SCN_MAX_THREADS 8

enum scn_readback {
    SCN_READ_COPY,  /* cudaMemcpy DtoH of the token (synchronous) */
    SCN_READ_ASYNC, /* cudaMemcpyAsync DtoH + cudaStreamSynchronize */
    SCN_READ_EVENT, /* cudaMemcpyAsync DtoH + cudaEventRecord + cudaEventSynchronize */
    SCN_READ_NONE   /* no token read: it stays on the device (generate() with no streamer reads only the
                       stopping check's flag; a loop may read its tokens once at the end) */
};
enum scn_graph { SCN_GRAPH_NONE, SCN_GRAPH_WARMUP, SCN_GRAPH_AFTER_PREFILL };
/* What each evaluation copies in: the prompt's ids only (Hugging Face), its
 * ids and positions before every evaluation, each copy followed by a sync
 * (ggml's ggml_backend_tensor_set), or nothing. */
enum scn_inputs { SCN_INPUTS_PROMPT, SCN_INPUTS_PER_EVAL, SCN_INPUTS_NONE };
#define SCN_MAX_READ_BYTES (1u << 20)
#define SCN_MAX_SEQUENCES 64
enum scn_stream { SCN_STREAM_DEFAULT, SCN_STREAM_OWN, SCN_STREAM_NONBLOCKING };

struct scn_kernel {
    char id[SCN_ID_MAX];
    char name[SCN_NAME_MAX];
    unsigned per_token, base, block; /* grid.x = per_token * tokens + base */
    int kv;                          /* touches the KV cache: KV_GATHER in decode */
    int eager;                       /* launched eagerly after a decode graph, never captured */
};

/* An item of a sequence: a kernel, or another call (Hugging Face's
 * flag reads and input copies, the memsets in a layer). when = 'a'
 * (always), 'p' (prefill only), 'd' (decode only), 'm' (only for an
 * evaluation of more than one token: PyTorch reduces one element with a
 * copy, not a kernel). kind: SCN_ITEM_KERNEL (kernel), SCN_ITEM_COPY
 * (cudaMemcpyAsync in direction dir: 'h' host to device, 'd' device to
 * host, 'D' device to device), SCN_ITEM_MEMSET (cudaMemsetAsync),
 * SCN_ITEM_SYNC (cudaStreamSynchronize). A copy's or memset's bytes are
 * bytes x (per = 't': the evaluation's tokens; 'n': the tokens the
 * generation produced, in after_generation; 0: 1). */
enum scn_item_kind { SCN_ITEM_KERNEL, SCN_ITEM_COPY, SCN_ITEM_MEMSET, SCN_ITEM_SYNC };
#define SCN_MAX_ITEM_BYTES (1u << 24)
struct scn_item {
    int kernel;
    char when;
    char kind, dir, per;
    unsigned bytes;
};

struct scn_seq {
    struct scn_item items[SCN_MAX_SEQ];
    int n;
};

struct scn_prompt {
    unsigned tokens, steps, gap_ms, repeat;             /* check sizes */
    unsigned reads; /* sequences whose ids the prompt's read-back carries (a serving loop's batch); 0: no
                       read, a sync instead; default 1 */
    unsigned full_tokens, full_steps, full_repeat;      /* --full sizes */
};

struct scenario {
    char name[64];
    struct scn_kernel kernels[SCN_MAX_KERNELS];
    int nkernels;
    struct scn_seq pre, layer, post;
    /* Hugging Face generate() as PyTorch runs it: each forward begins with
     * an iteration of its own that reads a flag back (the mask check),
     * and each token read is followed by one (the stopping check) */
    struct scn_seq mask_check, stop_check;
    /* before_prompt: the calls that bring a prompt in (after the P mark,
     * before PREFILL: Hugging Face's ids and mask, each copied and synced);
     * prompt_prelude: generate()'s work before the prompt's forward (after
     * the F mark, in PREFILL: its flag reads); after_generation: after the
     * last step (the output read back). No kernel there with a graph. */
    struct scn_seq before_prompt, prompt_prelude, after_generation;
    unsigned layers;
    enum scn_readback readback;
    enum scn_graph graph;
    unsigned graph_sizes; /* graphs captured at warm-up (batch sizes 1, 2, 4 ...) */
    enum scn_stream stream;
    int prompt_copy_sync; /* the prompt's ids: cudaMemcpy (1) or cudaMemcpyAsync (0) */
    unsigned chunk;       /* prefill chunk in tokens; 0: one piece */
    int chunk_read;       /* each chunk reads back (the logits) as the last does, in place of a sync */
    enum scn_inputs inputs;
    unsigned read_bytes;  /* bytes of a read-back per sequence (4: a token id; ggml: the logits) */
    unsigned sequences;   /* sequences decoded per step from one prompt (llama.cpp's -np) */
    unsigned threads;
    struct scn_prompt prompts[SCN_MAX_PROMPTS];
    int nprompts;
};

/* Parse text[0, len) (need not be NUL-terminated). 0 on success; -1 with a
 * message "line N: ..." in err. */
int scenario_parse(const char *text, size_t len, struct scenario *out, char *err, size_t errlen);

/* Grid x of kernel k for an iteration over `tokens` tokens (at least 1). */
unsigned scenario_grid(const struct scn_kernel *k, unsigned tokens);

#endif
