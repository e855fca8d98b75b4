/* The phase engine: see phase_engine.h and docs/phases.md.
 *
 * Per thread (phases are per thread, like NVTX ranges): a logical state
 * (the generation, the top phase PREFILL or DECODE, the decode step), the
 * stack of ranges open live (at most three: DECODE/STEADY, DECODE/STEP_k,
 * KV_GATHER), and in automatic mode what learning needs. Each launch
 * computes the stack its phase wants and moves the open stack to it: pops
 * and pushes (PHASE END/BEGIN records plus live ranges) happen only where
 * the two differ, so a launch inside an unchanged phase costs a byte load
 * and a few compares.
 *
 * State: everything process-wide is in one struct, `engine` (the settings
 * set-up decides once, the per-name-id caches, the range names and their
 * handles); the hot-path flag obs_phase_on stays apart (phase_engine.h
 * reads it inline). Per thread, struct phase_thread: the fields both modes
 * use, then the mode's own part (rules: the current iteration; automatic:
 * the token loop and the learning).
 *
 * Memory: per-thread state and the learning history are mmap'ed on a
 * thread's first event (history only in automatic mode, and unmapped once
 * learning ends); name classes are a global byte array per name id. */
#include "phase_engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trace/trace.h"
#include "record/record.h"
#include "common/common.h"
#include "graph_layers.h"
#include "layer_finder.h"
#include "runtimes/real_symbols.h"
#include "phase_rules.h"
#include "ranges.h"

OBS_HIDDEN _Atomic int obs_phase_on;

/* ---- the engine's process-wide state: one struct ------------------------------------------ */

enum api_event { EV_OTHER = 0, EV_LAUNCH, EV_GRAPH, EV_COPY, EV_COPY_SYNC, EV_MEMSET, EV_HOST_SYNC };

#define CLASS_CACHE 65536u   /* name ids with a cached class (and mask, launch handle) */
#define STEP_HANDLES 65536u  /* DECODE/STEP_k (and ITERATION/k) with a cached live handle */
/* Step names are written ahead in batches of STEP_NAME_BATCH, one STRINGS
 * chunk each: a decode loop then pays one write per batch of steps, not one
 * per new step (the per-write cost is a lock, an fstat and a writev). */
#define STEP_NAME_BATCH 256u
/* 40 bytes per entry: 16 of header, "DECODE/STEP_4294967295" padded to 24. */
#define STEP_NAME_ENTRY 40u

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/* What set-up decides once, before obs_phase_on becomes 1 (readers load
 * that flag with acquire first, so they see all of this). */
struct engine_settings {
    enum obs_phase_mode mode;
    struct obs_phase_rules rules;      /* OBS_PHASES */
    struct obs_phase_rules step_rules; /* OBS_STEP */
    bool have_step_rule;
    struct obs_phase_rules layer_rules; /* OBS_LAYER: the layers' first kernel */
    bool have_layer_rule;
    uint64_t gen_gap_ns;               /* OBS_GEN_GAP_MS */
    bool ranges_on;                    /* a live range sink (NVTX tool, roctx) is loaded */
    bool launch_ranges;                /* OBS_NVTX_LAUNCH=1, with its handle cache */
    uint8_t api_event[OBS_API_COUNT];  /* enum api_event per recorded API */
    uint8_t copy_class[OBS_DIR_COUNT]; /* rules: the phase of a copy, per direction */
    uint8_t memset_class;              /* rules: the phase of a memset */
};

/* Per kernel name id, computed on first sight by whichever thread sees it
 * (relaxed atomics: any thread computes the same value). */
struct name_caches {
    _Atomic uint8_t class_of[CLASS_CACHE]; /* CLASS_* bits, 0 = not yet */
    _Atomic uint32_t *rules_masks;         /* rules with conditions or selectors: mmap'ed at set-up */
    _Atomic uint32_t *launch_handles;      /* OBS_NVTX_LAUNCH=1: mmap'ed at set-up */
    _Atomic(cxa_demangle_fn) demangle;     /* the C++ runtime's, looked up once */
};

#define LAYER_HANDLES 4096u /* LAYER/k with a cached live handle */

/* Range names: handles for the live ranges, strings for the trace. */
struct range_names {
    uint32_t fixed_handles[OBS_PHASE_STEP_NAME_BASE];
    _Atomic uint32_t layer_handles[LAYER_HANDLES];
    _Atomic uint32_t *step_handles;   /* mmap'ed at set-up when a sink is active */
    _Atomic uint32_t *iter_handles;   /* the same for ITERATION/k */
    _Atomic uint32_t fixed_written;   /* 0 or 1: PREFILL .. ITERATION are in the file */
    _Atomic uint32_t steps_written;   /* DECODE/STEP_0 .. STEP_{n-1} are in the file */
    _Atomic uint32_t iters_written;   /* ITERATION/0 .. ITERATION/{n-1} are */
    char step_batch[STEP_NAME_BATCH * STEP_NAME_ENTRY]; /* under obs_out.lock */
};

static struct phase_engine {
    pthread_once_t once;
    struct engine_settings set;
    struct name_caches names;
    struct range_names ranges;
    pthread_key_t thread_key; /* per-thread state, freed at thread exit */
} engine = {.once = PTHREAD_ONCE_INIT, .set = {.mode = OBS_PHASES_OFF}};

/* ---- what each API is to the engine ------------------------------------------------- */

static void build_api_table(void)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } apis[] = {
#define OBS_PHASE_API_ROW(id, name, kind, family) {name, OBS_KIND_##kind},
        OBS_API_LIST(OBS_PHASE_API_ROW)
#undef OBS_PHASE_API_ROW
    };
    unsigned i;
    for (i = 0; i < OBS_API_COUNT; i++) {
        const char *n = apis[i].name;
        switch (apis[i].kind) {
        case OBS_KIND_KERNEL:
            engine.set.api_event[i] = EV_LAUNCH;
            break;
        case OBS_KIND_GRAPH:
            engine.set.api_event[i] = EV_GRAPH;
            break;
        case OBS_KIND_MEMCPY: /* a copy without "Async" returns when it is done: the host waited */
            engine.set.api_event[i] = strstr(n, "Async") == NULL ? EV_COPY_SYNC : EV_COPY;
            break;
        case OBS_KIND_MEMSET:
            engine.set.api_event[i] = EV_MEMSET;
            break;
        case OBS_KIND_SYNC: /* a stream waiting for an event does not block the host */
            engine.set.api_event[i] = strstr(n, "WaitEvent") == NULL ? EV_HOST_SYNC : EV_OTHER;
            break;
        default:
            engine.set.api_event[i] = EV_OTHER;
        }
    }
}

/* ---- name classes: computed once per name id -------------------------------------------- */

#define CLASS_KNOWN 0x80u
#define CLASS_PHASE_MASK 0x03u
#define CLASS_STEP 0x04u       /* OBS_STEP matches */
#define CLASS_KV_DEFAULT 0x08u /* automatic mode: a KV_GATHER name */
#define CLASS_SIZED 0x10u      /* rules: the phase depends on the launch's size */
#define CLASS_ITER 0x20u       /* rules: an `iter:glob` selector's glob matches the name */
#define CLASS_NORM 0x40u       /* its base name says "norm" (any case), or with OBS_LAYER: the glob matches it:
                                  where a layer begins (layer_finder.c) */
#define CLASS_EMBED 0x10u      /* automatic mode (the bit rules use for CLASS_SIZED): an embedding lookup, the
                                  first kernel of a model's forward (embedding_globs) */

static const char *const phase_names[] = {"none", "PREFILL", "DECODE", "KV_GATHER"}; /* by enum obs_phase_id */

/* Automatic mode's KV_GATHER names: kernels whose base name says they read
 * or write the KV cache (gathers, cache writes such as vLLM's
 * reshape_and_cache, decode attention over a paged or blocked cache such
 * as vLLM's paged_attention and TensorRT-LLM's masked_multihead_attention). */
static const char *const kv_globs[] = {"*gather*", "*Gather*", "*GATHER*", "*cache*", "*Cache*",
                                       "*paged_attention*", "*PagedAttention*", "*multihead_attention*"};

/* PyTorch's generic tensor ops whose names say gather or KV but touch no
 * cache: torch.topk and torch.sort (gatherTopK, bitonicSortKVInPlace: keys
 * and values), torch.gather and indexing (vectorized_gather_kernel,
 * _scatter_gather_elementwise_kernel): a mixture of experts' router runs
 * them in every layer (tests/frameworks/fw_generate.py qwen2-moe). */
static const char *const not_kv_names[] = {"gatherTopK", "bitonicSortKVInPlace", "warpMergeSortKVInPlace",
                                           "vectorized_gather_kernel", "_scatter_gather_elementwise_kernel"};

/* Automatic mode: the kernels a forward of a decoder begins with, its
 * embedding lookup: PyTorch's (index_select: indexSelectSmallIndex,
 * indexSelectLargeIndex, or its gather for many indexes), ggml's get_rows,
 * TensorRT-LLM's lookup_kernel, and any kernel whose base name says embed
 * (an Inductor kernel that fused the lookup: triton_per_fused_..._embedding_...).
 * A forward's lookups come in a group (GPT-2: the tokens' and the
 * positions'); a launch of one inside a layer (a mixture of experts' router
 * gathers) begins no forward (docs/phases.md, "Forwards"). */
static const char *const embedding_globs[] = {"indexSelectSmallIndex", "indexSelectLargeIndex",
                                              "vectorized_gather_kernel", "*get_rows*", "lookup_kernel",
                                              "*embed*", "*Embed*", "*EMBED*"};

/* "kv" in any case, other than as the end of "qkv" (a fused query-key-value
 * projection, a GEMM that does not touch the cache). */
static bool kv_in_name(const char *name)
{
    const char *p;
    for (p = name; p[0] != '\0' && p[1] != '\0'; p++)
        if ((p[0] == 'k' || p[0] == 'K') && (p[1] == 'v' || p[1] == 'V') && !(p > name && (p[-1] == 'q' || p[-1] == 'Q')))
            return true;
    return false;
}

static bool norm_in_name(const char *name)
{
    const char *p;
    for (p = name; p[0] != '\0'; p++)
        if ((p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'o' && (p[2] | 0x20) == 'r' && (p[3] | 0x20) == 'm')
            return true;
    return false;
}

static uint8_t classify_name(const char *name)
{
    uint8_t cls = CLASS_KNOWN;
    unsigned i;
    const struct engine_settings *set = &engine.set;
    if (set->have_layer_rule ? obs_phase_rules_match_kernel(&set->layer_rules, name) != OBS_PHASE_NONE
                             : norm_in_name(name))
        cls |= CLASS_NORM;
    if (set->mode == OBS_PHASES_RULES) {
        cls |= obs_phase_rules_match_kernel(&set->rules, name) & CLASS_PHASE_MASK;
        if (set->have_step_rule && obs_phase_rules_match_kernel(&set->step_rules, name) != OBS_PHASE_NONE)
            cls |= CLASS_STEP;
        if (set->rules.sized_mask | set->rules.iter_kernel_mask) {
            uint32_t mask = obs_phase_rules_kernel_mask(&set->rules, name);
            cls |= (obs_phase_rules_sized(&set->rules, mask) ? CLASS_SIZED : 0) |
                   (mask & set->rules.iter_kernel_mask ? CLASS_ITER : 0);
        }
    } else {
        for (i = 0; i < sizeof kv_globs / sizeof kv_globs[0]; i++)
            if (obs_glob_match(kv_globs[i], name)) {
                cls |= CLASS_KV_DEFAULT;
                break;
            }
        if (kv_in_name(name))
            cls |= CLASS_KV_DEFAULT;
        for (i = 0; i < sizeof not_kv_names / sizeof not_kv_names[0]; i++)
            if (strcmp(not_kv_names[i], name) == 0)
                cls &= (uint8_t)~CLASS_KV_DEFAULT;
        for (i = 0; i < sizeof embedding_globs / sizeof embedding_globs[0]; i++)
            if (obs_glob_match(embedding_globs[i], name)) {
                cls |= CLASS_EMBED;
                break;
            }
    }
    return cls;
}

/* A kernel's base name (demangled with the C++ runtime's demangler, found
 * at run time, then cut to the base name). Slow path: once per name id. */
static void base_name_of(uint32_t id, char *out, size_t outlen)
{
    cxa_demangle_fn demangle = atomic_load(&engine.names.demangle);
    const char *mangled = obs_kernel_name_mangled(id);
    char *demangled = NULL;
    int status = -1;

    out[0] = '\0';
    if (mangled == NULL)
        return;
    if (demangle == NULL) {
        demangle = (cxa_demangle_fn)obs_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
        atomic_store(&engine.names.demangle, demangle);
    }
    if (demangle != NULL && strncmp(mangled, "_Z", 2) == 0) {
        demangled = demangle(mangled, NULL, NULL, &status);
        if (status != 0) {
            free(demangled);
            demangled = NULL;
        }
    }
    obs_kernel_base_name_of(mangled, demangled, out, outlen);
    free(demangled);
}

static uint8_t classify_slow(uint32_t id)
{
    char base[256];
    uint8_t cls;
    obs_call_note_slow();
    base_name_of(id, base, sizeof base);
    cls = classify_name(base);
    /* which rule (or KV glob) a name matched: once per name id */
    if (engine.set.mode == OBS_PHASES_RULES)
        OBS_DEBUG_LOG(PHASES, 2, "name id=%u base=%s mangled=%s rule=%s%s%s%s", id, base,
                      obs_kernel_name_mangled(id) != NULL ? obs_kernel_name_mangled(id) : "?",
                      phase_names[cls & CLASS_PHASE_MASK], cls & CLASS_STEP ? " OBS_STEP=yes" : "",
                      cls & CLASS_SIZED ? " by-size=yes" : "", cls & CLASS_ITER ? " iter-selector=yes" : "");
    else
        OBS_DEBUG_LOG(PHASES, 2, "name id=%u base=%s mangled=%s kv-glob=%s embedding=%s", id, base,
                      obs_kernel_name_mangled(id) != NULL ? obs_kernel_name_mangled(id) : "?",
                      cls & CLASS_KV_DEFAULT ? "yes" : "no", cls & CLASS_EMBED ? "yes" : "no");
    return cls;
}

/* OBS_NVTX_LAUNCH=1: a range per launch, named after the kernel's base name. */
static uint32_t launch_handle(uint32_t id)
{
    _Atomic uint32_t *handles = engine.names.launch_handles;
    uint32_t h = id < CLASS_CACHE ? atomic_load_explicit(&handles[id], memory_order_relaxed) : 0;
    char base[256];
    if (obs_likely(h != 0))
        return h;
    base_name_of(id, base, sizeof base);
    h = obs_range_handle(base[0] != '\0' ? base : "kernel", 0);
    if (id < CLASS_CACHE)
        atomic_store_explicit(&handles[id], h, memory_order_relaxed);
    return h;
}

static inline uint8_t class_of(uint32_t id)
{
    uint8_t cls;
    if (obs_unlikely(id == 0))
        return CLASS_KNOWN;
    if (obs_unlikely(id >= CLASS_CACHE))
        return classify_slow(id);
    cls = atomic_load_explicit(&engine.names.class_of[id], memory_order_relaxed);
    if (obs_unlikely(cls == 0)) {
        cls = classify_slow(id);
        atomic_store_explicit(&engine.names.class_of[id], cls, memory_order_relaxed);
    }
    return cls;
}

/* ---- range names: handles for the live ranges, strings for the trace ------------------- */

static const char *const fixed_names[] = {"", "PREFILL", "DECODE", "KV_GATHER", "DECODE/STEADY", "ITERATION"};
static const uint32_t fixed_colors[] = {0, 0xff1f77b4u, 0xff2ca02cu, 0xffd62728u, 0xff98df8au, 0xffff7f0eu};
#define STEP_COLOR 0xff2ca02cu
#define LAYER_COLOR 0xff9467bdu

/* A numbered range's name: "DECODE/STEP_k" or "ITERATION/k". */
static int numbered_name(char *out, size_t len, bool iteration, uint32_t k)
{
    return iteration ? snprintf(out, len, "ITERATION/%u", k) : snprintf(out, len, "DECODE/STEP_%u", k);
}

static uint32_t numbered_handle(bool iteration, uint32_t k)
{
    _Atomic uint32_t *handles = iteration ? engine.ranges.iter_handles : engine.ranges.step_handles;
    uint32_t h = 0;
    char name[40];
    if (k < STEP_HANDLES && handles != NULL) {
        h = atomic_load_explicit(&handles[k], memory_order_relaxed);
        if (obs_likely(h != 0))
            return h;
    }
    obs_call_note_slow();
    numbered_name(name, sizeof name, iteration, k);
    h = obs_range_handle(name, iteration ? fixed_colors[OBS_PHASE_ITERATION] : STEP_COLOR);
    if (k < STEP_HANDLES && handles != NULL)
        atomic_store_explicit(&handles[k], h, memory_order_relaxed);
    return h;
}

static uint32_t handle_of(uint32_t name_id)
{
    if (name_id < OBS_PHASE_STEP_NAME_BASE)
        return engine.ranges.fixed_handles[name_id];
    if (name_id >= OBS_PHASE_ITER_NAME_BASE)
        return numbered_handle(true, name_id - OBS_PHASE_ITER_NAME_BASE);
    return numbered_handle(false, name_id - OBS_PHASE_STEP_NAME_BASE);
}

/* The numbered names up to k written ahead, a batch per STRINGS chunk
 * (under the output lock). */
static void write_numbered_locked(bool iteration, uint32_t needed)
{
    struct range_names *rn = &engine.ranges;
    _Atomic uint32_t *written = iteration ? &rn->iters_written : &rn->steps_written;
    uint32_t base = iteration ? OBS_PHASE_ITER_NAME_BASE : OBS_PHASE_STEP_NAME_BASE, k;
    uint32_t limit = iteration ? UINT32_MAX - base : OBS_PHASE_ITER_NAME_BASE - base; /* the family's last number */
    char name[40];
    while ((k = atomic_load(written)) <= needed && k < limit) {
        char *batch = rn->step_batch; /* ours while the output lock is held */
        uint32_t used = 0, end = k + STEP_NAME_BATCH, n;
        if (end < k || end > limit)
            end = limit;
        for (n = k; n < end; n++) {
            int len = numbered_name(name, sizeof name, iteration, n);
            uint32_t got = obs_string_entry_encode(batch + used, (uint32_t)sizeof rn->step_batch - used, base + n,
                                                   OBS_STR_RANGE_NAME, name, (uint32_t)len);
            if (got == 0)
                break;
            used += got;
        }
        if (n == k || obs_output_write_strings_locked(batch, used) != 0)
            break;
        atomic_store(written, n);
    }
}

/* RANGE_NAME strings go into the trace when a PHASE record first needs
 * them (once per name and file: a forked child writes them again). */
static void write_names_slow(uint32_t name_needed)
{
    struct range_names *rn = &engine.ranges;
    uint32_t tid = obs_thread_id(), k;
    obs_call_note_slow();
    obs_out_lock_acquire(&obs_out.lock, tid);
    if (obs_output_ensure_open_locked()) {
        if (atomic_load(&rn->fixed_written) == 0) {
            bool ok = true;
            for (k = 1; k < sizeof fixed_names / sizeof fixed_names[0] && ok; k++)
                ok = obs_output_write_string_locked(k, OBS_STR_RANGE_NAME, fixed_names[k], strlen(fixed_names[k])) == 0;
            if (ok)
                atomic_store(&rn->fixed_written, 1);
        }
        if (name_needed >= OBS_PHASE_ITER_NAME_BASE)
            write_numbered_locked(true, name_needed - OBS_PHASE_ITER_NAME_BASE);
        else if (name_needed >= OBS_PHASE_STEP_NAME_BASE)
            write_numbered_locked(false, name_needed - OBS_PHASE_STEP_NAME_BASE);
    }
    obs_out_lock_release(&obs_out.lock);
}

static inline void ensure_names(uint32_t name_id)
{
    if (obs_unlikely(atomic_load_explicit(&engine.ranges.fixed_written, memory_order_relaxed) == 0) ||
        (name_id >= OBS_PHASE_STEP_NAME_BASE && name_id < OBS_PHASE_ITER_NAME_BASE &&
         obs_unlikely(name_id - OBS_PHASE_STEP_NAME_BASE >=
                      atomic_load_explicit(&engine.ranges.steps_written, memory_order_relaxed))) ||
        (name_id >= OBS_PHASE_ITER_NAME_BASE &&
         obs_unlikely(name_id - OBS_PHASE_ITER_NAME_BASE >=
                      atomic_load_explicit(&engine.ranges.iters_written, memory_order_relaxed))))
        write_names_slow(name_id);
}

static void names_fork_child(void)
{
    atomic_store(&engine.ranges.fixed_written, 0);
    atomic_store(&engine.ranges.steps_written, 0);
    atomic_store(&engine.ranges.iters_written, 0);
}

/* ---- per-thread state ------------------------------------------------------------------ */

/* One open range (or one wanted). */
struct range {
    uint8_t phase;  /* enum obs_phase_id */
    uint32_t step;  /* OBS_NO_STEP or k */
    uint32_t name;  /* range name id */
    uint32_t gen;
    uint32_t layer1; /* a live-only LAYER/k range: k + 1; 0: a phase range */
};

/* The logical state, what replaying a history reproduces. */
struct logic {
    uint8_t top;      /* OBS_PHASE_NONE, PREFILL or DECODE */
    bool started;     /* a generation has begun */
    uint32_t gen;
    uint32_t step;
    uint32_t opener;  /* name id that opened the current step */
};

enum learn_state { LEARNING = 0, LEARNED, GAVE_UP };

/* What a stored launch begins (auto_state.marks), so that its record index is kept. */
#define MARK_GEN 1u    /* a generation */
#define MARK_STEP0 2u  /* its decode step 0 */
#define MARK_THREAD 4u /* the thread's generation 0 */
#define MARK_EXCESS 8u /* the step's iteration the next step's forward usually begins in */
#define MARK_ITER 16u  /* an iteration */
#define MARK_FWD 32u   /* a forward (the ring of forwards a serving loop relabels) */
#define MARK_STEP 64u  /* a decode step */
#define FWD_RING 64u   /* the forwards a serving loop found late relabels as its iterations */

#define GRAPH_TOKEN UINT32_MAX
#define HISTORY_CAP 16384u
#define UNIT_MAX 64u
#define UNIT_MIN_REPEATS 3u
#define UNIT_MIN 2u /* one kernel repeated is a loop, not a decode step */
#define ROLE_CACHE 65536u
#define PROMPT_RATIO 4u
/* Generations of one forward each in a row, fed and read back, before one a quarter of the largest of them
 * reads as a serving loop (hf-serving: 64 tokens, 39, then 4) */
#define SERVING_SINGLE_RUN 2u

enum role { ROLE_UNKNOWN = 0, ROLE_PREFIX, ROLE_OPENER, ROLE_UNIT };

struct history_entry {
    uint64_t index;   /* per-thread record index of the launch, UINT64_MAX: not kept */
    uint32_t token;   /* name id, GRAPH_TOKEN for graph launches */
    uint8_t new_segment;
    uint8_t reserved[3];
};

/* What the first launch of an iteration (the launches between two host
 * delimiters) looks like, with what came in before it: what automatic
 * mode's shape (b) decides on. */
struct iteration_start {
    uint64_t threads; /* grid x block of the first launch, 0 for a graph launch */
    uint64_t htod;    /* host-to-device bytes since the last launch or token read */
    uint64_t now;
    uint32_t name;    /* its kernel name id */
    bool graph;       /* it is a graph launch */
    bool memset;      /* a memset since the last launch or token read */
};

/* An iteration's look, kept to compare later ones with: a prompt's
 * first iteration, a decode step's first. */
struct iteration_look {
    uint64_t threads, htod;
    uint32_t name;
    bool graph, memset;
};

#define TOKEN_READ_MIN 4u /* a token id is at least 4 bytes: a smaller read is a flag (a bool's .item()) */

/* How a generation began: what new_prompt compared. A generation told
 * from the last prompt alone (no decode step seen yet) may turn out to be
 * the previous one's step 0 (the next iteration looks just like it). */
enum gen_origin { ORIGIN_OTHER = 0, ORIGIN_AT_TOKEN_READ };

/* Shape (b)'s model of a thread: its forwards (each begins at the model's
 * embedding lookup, or at a graph launch that replays one), what its
 * prompts and decode steps looked like at their forwards' starts, and what
 * came in and went out between them (docs/phases.md, "Forwards"). A *token
 * read* is a copy from the device of at least TOKEN_READ_MIN bytes after a
 * launch of the same iteration, complete at the delimiter that ends the
 * iteration. */
struct token_loop {
    bool copied;             /* the thread copied between host and device: a host-fed loop */
    bool read_since_start;   /* it read something back after a launch since its generation 0 began */
    bool forwards;           /* its forwards have been seen to begin (an embedding lookup, a forward's graph) */
    bool reads_tokens;       /* one of its decode steps began after a token read: a prompt lasts until its token read */
    bool steps_unread;       /* one of its decode steps began with nothing read since the forward before it */
    bool steps_unread_before; /* as it was when the current generation began */
    bool step0_before_token; /* the generation's step 0 opened before its first token read */
    bool gen_token_read;     /* the current generation has read a token */
    bool fwd_token_read;     /* a token read since the current forward began */
    bool token_pending;      /* (a thread with no forwards) a token read completed and no step opened since */
    bool prev_embed;         /* the last launch was an embedding lookup: a forward's lookups come in a group */
    bool opened_here;        /* the iteration this launch begins opened a step at it: its forward is that one */
    bool forward_captured;   /* the current forward was a graph's capture (it ran nothing): its replay goes on in it */
    bool serving;            /* its forwards are a serving loop's iterations (for good) */
    bool serving_new_gen;    /* an idle gap: the next forward begins a new generation at ITERATION/0 */
    uint64_t step_threads_last; /* the last decode step's first launch's threads (non-graph) */
    uint32_t single_run;        /* generations in a row of one forward, fed from the host, that read it back */
    uint64_t single_max_threads; /* the largest of their forwards' first launches */
    uint32_t fwd_opener;     /* the lookup the current forward began with */
    uint32_t fwd_launches;   /* launches since the current forward began */
    uint32_t fwd_min[2];     /* the fewest launches a whole forward had, by kind (0 prompt, 1 decode step): 0 none yet */
    bool fwd_read;           /* a read from the device since the current forward began */
    bool fwd_delimited;      /* a host delimiter since it began */
    uint32_t fwd_read_at;    /* the last one's position: launches of the forward before it */
    /* the current iteration */
    bool iter_launched;        /* it has had a launch */
    bool unread_launches;      /* the iteration before had launches and read nothing: a read may still be theirs */
    uint64_t iter_token_bytes; /* its token read (0: none yet) */
    bool iter_read;            /* it read something back after a launch (a token or a flag) */
    /* since the last launch or token read: what the next iteration (its forward, a new prompt) brings in */
    bool window_dirty;
    uint64_t window_htod;
    uint64_t window_first_index; /* record index of its first copy in, UINT64_MAX: none */
    bool window_memset;
    bool prev_graph_first, graph_first; /* the previous / current forward is a graph launch */
    /* decode steps of the thread */
    bool decode_seen;
    bool decode_memset;        /* a decode step began after a memset */
    uint64_t decode_threads, decode_htod_max;
    /* the current generation */
    struct iteration_look prompt;     /* its first forward */
    struct iteration_look step0;      /* its first decode step's forward */
    uint8_t origin;                   /* enum gen_origin */
    uint32_t gen_iterations;          /* iterations since it began */
    uint32_t gen_forwards;            /* forwards since it began */
    uint32_t gen_token_reads;         /* token reads since it began */
    uint32_t gen_steps;               /* decode steps opened */
    bool steps_like_prompt;           /* every step so far looked like its first forward */
    /* a decode step's iterations after its output was read (a read after its stack): 1, 2... */
    bool iter_begun_here;             /* the current launch begins an iteration */
    bool step_opened_here;            /* a step opened at the current launch */
    bool step_output_read;            /* the current step's output was read */
    bool step_read;                   /* the current step read from the device */
    uint32_t step_iters;              /* the number of its last iteration since */
    uint32_t step_iters_usual;        /* the number of the one the last such step's successor began in (0: none) */
    uint64_t last_read_bytes;
    /* the generation before, while the current one may still rejoin it (was_a_step) */
    struct iteration_look prev_prompt;
    uint8_t prev_origin;
    uint32_t prev_gen_steps, prev_gen_iterations, prev_gen_token_reads;
};

/* OBS_PHASES rules: the current iteration (launches since the last host
 * delimiter) and the token reads (as in automatic mode: a copy from the
 * device of at least TOKEN_READ_MIN bytes after a launch of its iteration). */
struct rules_state {
    bool iter_open;      /* it has had its first launch */
    uint8_t iter_phase;  /* the phase a selector gave it, or NONE */
    uint8_t iter_kind;   /* the kind of that selector (enum obs_pattern_kind) */
    uint16_t iter_after; /* copies (bit per direction) and memsets since the last launch */
    bool iter_launched;   /* this iteration has had a launch */
    bool unread_launches; /* the iteration before had launches and read nothing (a sync, then the read) */
    bool iter_read;       /* this iteration read from the device */
    bool iter_token;      /* this iteration read a token */
    bool gen_token_read;  /* the current generation has read its token */
    bool ever_token_read; /* the thread has: steps then open after token reads */
    bool after_token;     /* a token read completed and no launch since */
    bool step_armed;      /* a token read completed since the current step opened: OBS_STEP may open the next */
    bool copied_in;       /* the thread has copied host to device */
    uint8_t marks;        /* RULES_MARK_*: what the next stored launch begins, for its record index */
    uint64_t first_index; /* the thread's first labelled launch (a warm-up's labels come off from there) */
    uint64_t iter_index;  /* the first launch of a decode iteration no OBS_STEP launch opened, or UINT64_MAX */
    uint64_t missed_first, missed_end; /* such an iteration that read a token: no step unless the step goes on */
};
#define RULES_MARK_FIRST 1u /* the thread's first labelled launch */
#define RULES_MARK_ITER 2u  /* the first launch of an iteration after a token read that opened no step */

/* Automatic mode: shape (b)'s token loop and shape (a)'s learning. */
struct auto_state {
    struct token_loop loop;
    uint64_t gen_first_index;   /* record index of the current generation's first call */
    uint64_t step0_index;       /* record index of the current generation's step 0 */
    uint64_t prev_gen_first_index;
    uint64_t thread_first_index; /* record index of the first launch of the thread's generation 0 */
    uint64_t excess_index;       /* the first launch of the current step's iteration step_iters_usual, or UINT64_MAX */
    uint64_t iter_first_index;   /* the first launch of the current iteration */
    uint64_t step_first_index;   /* the first launch of the current decode step */
    struct { uint64_t index; uint32_t gen; } fwd_ring[FWD_RING]; /* the last forwards' first launches */
    uint32_t fwd_count;          /* forwards stored in the ring, all told */
    uint32_t fwd_pending_gen;    /* the generation of the forward being stored */
    uint64_t iter_window_index;  /* the first copy in before it, UINT64_MAX: none */
    uint8_t marks;              /* MARK_*: what the next stored launch begins, for its record index */
    bool had_delimiter;         /* the thread has ended an iteration */
    uint32_t found_start, found_len; /* LEARNING: a unit found before the first delimiter, not taken yet */
    uint64_t learn_first_index; /* LEARNED: record index of the first launch learned from */
    uint8_t learn;                  /* enum learn_state */
    uint8_t *roles;                 /* LEARNED: role per name id */
    struct history_entry *history;  /* LEARNING */
    uint32_t history_n, segment_start;
    uint32_t run[UNIT_MAX + 1];     /* LEARNING: periodic stretch per period */
};

/* A thread's phase state: what both modes keep, then the mode's own part
 * (engine.set.mode says which; it never changes once set up). */
struct phase_thread {
    struct logic logic;
    struct layer_track *layers; /* NULL: no memory for it */
    struct range open[5];  /* the ranges open live, outermost first */
    unsigned depth;
    uint32_t pushes;       /* pushes and pops so far: the open stack is as the last launch left it while equal */
    /* what the last launch's ranges were computed from: a launch with the same wants the same ranges */
    struct {
        uint32_t pushes, gen, step, layer1;
        uint8_t top;
        bool kv, steady_graph, valid;
    } last_want;
    bool after_delimiter;  /* no launch since the last host delimiter */
    bool launch_range_open;
    uint64_t delimiter_t;
    uint64_t held_end_t;   /* a PREFILL kept open past a delimiter: its end, if it ends there */
    union {
        struct rules_state rules;         /* OBS_PHASES_RULES */
        struct auto_state automatic;      /* OBS_PHASES_AUTO */
    };
};

static size_t layer_track_bytes(void);
static struct layer_track *layer_track_new(bool emit);

static __thread struct phase_thread *phase_tls __attribute__((tls_model("initial-exec")));

static void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void free_history(struct auto_state *a)
{
    if (a->history != NULL)
        munmap(a->history, HISTORY_CAP * sizeof *a->history);
    a->history = NULL;
}

static void thread_gone(void *arg)
{
    struct phase_thread *p = arg;
    phase_tls = NULL; /* a hooked call from a later destructor starts afresh */
    if (engine.set.mode == OBS_PHASES_AUTO) {
        free_history(&p->automatic);
        if (p->automatic.roles != NULL)
            munmap(p->automatic.roles, ROLE_CACHE);
    }
    if (p->layers != NULL)
        munmap(p->layers, layer_track_bytes());
    munmap(p, sizeof *p);
}

/* A thread's first event: map its state. Out of line, so that the inlined
 * fast path below stays a TLS load and a test. */
static __attribute__((noinline, cold)) struct phase_thread *thread_state_slow(void)
{
    struct phase_thread *p;
    obs_call_note_slow();
    p = map_zeroed(sizeof *p);
    if (p == NULL) {
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u fallback because=no-memory: this thread's calls get no phases",
                      obs_thread_id(), obs_tls.call_counter);
        return NULL;
    }
    p->logic.step = OBS_NO_STEP;
    /* the tracker runs with OBS_LAYER=off too, so that phases do not change with it; it then writes nothing */
    p->layers = layer_track_new(!obs_cfg.layers_off); /* NULL: no memory, no layers for this thread */
    if (engine.set.mode == OBS_PHASES_RULES)
        p->rules.first_index = p->rules.iter_index = p->rules.missed_first = UINT64_MAX;
    if (engine.set.mode == OBS_PHASES_AUTO) {
        p->automatic.history = map_zeroed(HISTORY_CAP * sizeof *p->automatic.history);
        p->automatic.learn = p->automatic.history != NULL ? LEARNING : GAVE_UP;
        p->automatic.loop.window_first_index = UINT64_MAX;
        p->automatic.gen_first_index = p->automatic.step0_index = p->automatic.thread_first_index =
            p->automatic.excess_index = p->automatic.iter_window_index = p->automatic.step_first_index = UINT64_MAX;
        p->automatic.iter_first_index = 0;
        if (p->automatic.history == NULL)
            OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u fallback because=no-memory: no learning window, shape (b) only",
                          obs_thread_id(), obs_tls.call_counter);
    }
    OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u thread-state mode=%s", obs_thread_id(), obs_tls.call_counter,
                  engine.set.mode == OBS_PHASES_RULES ? "rules" : "auto");
    phase_tls = p;
    pthread_setspecific(engine.thread_key, p);
    return p;
}

static inline struct phase_thread *thread_state(void)
{
    struct phase_thread *p = phase_tls;
    if (obs_likely(p != NULL))
        return p;
    return thread_state_slow();
}

/* ---- records and live ranges ----------------------------------------------------------- */

static void write_phase_at(uint8_t event, const struct range *r, uint64_t first, uint64_t last, uint64_t t)
{
    union obs_record rec;
    /* A one-time slow path before the real call (names written, a step's handle) makes the call begin
     * where that path began (obs_call_started): the ranges it ends and opens change there too, so that
     * the call lies inside its range. */
    if (obs_unlikely(obs_tls.t_slow != 0) && obs_tls.t_slow < t)
        t = obs_tls.t_slow;
    memset(&rec, 0, sizeof rec);
    rec.phase.type = OBS_REC_PHASE;
    rec.phase.event = event;
    rec.phase.phase = r->phase;
    rec.phase.step = r->step;
    rec.phase.t = t;
    rec.phase.generation = r->gen;
    rec.phase.name = r->name;
    rec.phase.first_index = first;
    rec.phase.last_index = last;
    ensure_names(r->name);
    obs_recorder_append(&rec);
}

static void write_phase(uint8_t event, const struct range *r, uint64_t first, uint64_t last)
{
    write_phase_at(event, r, first, last, obs_now_ns());
}

static uint32_t layer_handle(uint32_t k)
{
    uint32_t h = k < LAYER_HANDLES ? atomic_load_explicit(&engine.ranges.layer_handles[k], memory_order_relaxed) : 0;
    char name[32];
    if (obs_likely(h != 0))
        return h;
    obs_call_note_slow();
    snprintf(name, sizeof name, "LAYER/%u", k);
    h = obs_range_handle(name, LAYER_COLOR);
    if (k < LAYER_HANDLES)
        atomic_store_explicit(&engine.ranges.layer_handles[k], h, memory_order_relaxed);
    return h;
}

/* A LAYER/k range is live only: the trace has LAYER records, written when
 * the phase instance's layers are known (layer_analyse). */
static void push_range(struct phase_thread *p, const struct range *r)
{
    p->pushes++;
    p->open[p->depth++] = *r;
    if (r->layer1 != 0) {
        if (engine.set.ranges_on)
            obs_range_push(layer_handle(r->layer1 - 1));
        return;
    }
    write_phase(OBS_PHASE_BEGIN, r, 0, 0);
    if (engine.set.ranges_on)
        obs_range_push(handle_of(r->name));
}

static void pop_range(struct phase_thread *p)
{
    const struct range *r = &p->open[--p->depth];
    p->pushes++;
    /* a PREFILL held open past its last delimiter ends there in the trace */
    if (r->layer1 == 0)
        write_phase_at(OBS_PHASE_END, r, 0, 0, p->held_end_t != 0 ? p->held_end_t : obs_now_ns());
    if (engine.set.ranges_on)
        obs_range_pop();
}

static bool same_range(const struct range *a, const struct range *b)
{
    return a->name == b->name && a->gen == b->gen && a->step == b->step && a->layer1 == b->layer1;
}

/* Close what the wanted stack does not share with the open one, open the rest. */
static void move_to(struct phase_thread *p, const struct range *want, unsigned n)
{
    unsigned common = 0, i;
    while (common < n && common < p->depth && same_range(&p->open[common], &want[common]))
        common++;
    while (p->depth > common)
        pop_range(p);
    p->held_end_t = 0;
    for (i = common; i < n; i++)
        push_range(p, &want[i]);
}

/* The ranges a state wants: [PREFILL], [DECODE/STEP_0 (, KV_GATHER)],
 * [DECODE/STEADY, DECODE/STEP_k (, KV_GATHER)], or [DECODE/STEADY] for a
 * graph launch inside the steady decode. */
static unsigned wanted(const struct logic *l, bool kv, bool steady_graph, struct range *out)
{
    unsigned n = 0;
    if (l->top == OBS_PHASE_PREFILL) {
        out[n++] = (struct range){OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        return n;
    }
    if (l->top == OBS_PHASE_ITERATION) {
        out[n++] = (struct range){OBS_PHASE_ITERATION, l->step, OBS_PHASE_ITER_NAME_BASE + l->step, l->gen, 0};
        return n;
    }
    if (l->top != OBS_PHASE_DECODE)
        return 0;
    if (steady_graph || l->step == OBS_NO_STEP) {
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen, 0};
        return n;
    }
    if (l->step > 0)
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen, 0};
    out[n++] = (struct range){OBS_PHASE_DECODE, l->step, OBS_PHASE_STEP_NAME_BASE + l->step, l->gen, 0};
    if (kv)
        out[n++] = (struct range){OBS_PHASE_KV_GATHER, l->step, OBS_PHASE_KV_GATHER, l->gen, 0};
    return n;
}

/* The wanted stack with the live layer (k + 1, 0: none) inside the phase's
 * ranges, around a KV_GATHER. */
static unsigned wanted_with_layer(const struct logic *l, bool kv, bool steady_graph, uint32_t layer1,
                                  struct range *out)
{
    unsigned n = wanted(l, kv, steady_graph, out);
    if (obs_likely(layer1 == 0) || n == 0 || steady_graph)
        return n;
    if (out[n - 1].phase == OBS_PHASE_KV_GATHER) {
        out[n] = out[n - 1];
        out[n - 1] = (struct range){out[n - 2].phase, out[n - 2].step, 0, l->gen, layer1};
        return n + 1;
    }
    out[n] = (struct range){out[n - 1].phase, out[n - 1].step, 0, l->gen, layer1};
    return n + 1;
}

/* ---- the decision log (OBS_DEBUG=phases:N, docs/phases.md "Reading a decision log") ---------- */

/* Level 2: each decision with the signal that made it and the numbers it
 * compared: "tid=T call=N <decision> gen=G [step=K] because=<signal> k=v ...".
 * call is the thread's N-th recorded call (its N-th row in obs-report csv).
 * Logged where the state changes, so a launch that changes nothing pays no
 * test of the level. */
#define LOG_DECISION(l, what, because, ...)                    \
    do {                                                       \
        if (obs_debug_on(OBS_DBG_PHASES, 2))                   \
            log_decision((l), (what), (because), __VA_ARGS__); \
    } while (0)

static __attribute__((cold, format(printf, 4, 5))) void log_decision(const struct logic *l, const char *what,
                                                                    const char *because, const char *fmt, ...)
{
    char extra[512], step[24] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
    if (l->top == OBS_PHASE_DECODE && l->step != OBS_NO_STEP)
        snprintf(step, sizeof step, " step=%u", l->step);
    obs_debug_write(OBS_DBG_PHASES, "tid=%u call=%u %s gen=%u%s because=%s%s", obs_thread_id(), obs_tls.call_counter,
                    what, l->gen, step, because, extra);
}

/* A launch's decision in rules mode or learned shape (a): out of line and
 * not variadic, so that the launch path around it stays as it was. */
static __attribute__((noinline, cold)) void log_launch_decision(const struct logic *l, const char *what,
                                                                const char *because, uint32_t name)
{
    log_decision(l, what, because, " name=%u", name);
}

#define LOG_LAUNCH_DECISION(l, what, because, name)            \
    do {                                                       \
        if (obs_debug_on(OBS_DBG_PHASES, 2))                   \
            log_launch_decision((l), (what), (because), (name)); \
    } while (0)

/* ---- layers: LAYER/k inside each phase instance (docs/layers.md) ----------------------------- */

/* Per thread: the current phase instance's launches (name ids, record
 * indexes), the finder's workspace, and per top phase (PREFILL, DECODE)
 * the live template learned from the last instance whose layers were
 * found: where its layers began and ended, as (kernel name, its count
 * since the previous boundary). A launch costs a store, the instance's
 * identity compared, and one compare with the next boundary's name. */
#define LAYER_SPAN_CAP 32768u   /* launches of one instance looked at */
#define LAYER_CUTS_MAX 1024u    /* layers of one instance */
#define LAYER_BOUNDS_MAX 1024u  /* boundaries of a template */
#define NO_BOUND_NAME (UINT32_MAX - 1u) /* no launch has it (graph launches: GRAPH_TOKEN) */

struct layer_bound {
    uint32_t name;   /* the launch's kernel name id */
    uint32_t occ;    /* its count since the previous boundary (this launch included) */
    uint32_t layer1; /* the layer it opens, + 1; 0: it closes the layer open */
};

struct layer_template {
    struct layer_bound b[LAYER_BOUNDS_MAX];
    uint32_t n;
    uint32_t anchor; /* the finder's anchor, tried first next time */
};

struct layer_track {
    bool emit; /* LAYER records and live LAYER/k ranges (OBS_LAYER=off: none; the structure still asks it) */
    /* the current instance */
    uint32_t *names;
    uint64_t *index;
    uint32_t n;
    uint32_t gen, step;
    uint8_t top;
    uint32_t seg;       /* the first launch not analysed yet: a token read ends a forward, analysed then */
    /* rules with OBS_STEP: the forward a token read ended is analysed once the launches after it show that
     * it ended (a step opens, a generation begins, the thread ends); a step that goes on drops it */
    bool due;
    uint32_t due_n;              /* the launches before the read */
    uint64_t due_next, due_t;    /* the record index after them, and the read's time */
    bool anew;                   /* the next launch begins an instance (layer_instance_anew) */
    /* live */
    const struct layer_template *live;
    uint32_t next_bound, occ, layer1;
    uint32_t next_name;   /* the next boundary's kernel, NO_BOUND_NAME: none (the one compare a launch makes) */
    uint32_t raw_step;    /* the logic's step as it was (the instance's identity, with gen and top) */
    uint32_t live_first[LAYER_CUTS_MAX]; /* the launches the live ranges opened at (position + 1; 0: none) */
    uint32_t live_n;
    uint32_t closed_at;   /* the position of the launch that closed the template's last layer, 0: none */
    uint64_t void_first, void_end; /* records whose labels came off [first, end): they get no layer either */
    uint32_t pass_layers; /* the layers of one pass the finder last found (a forward's), 0: none yet */
    /* learned, by top phase: [0] PREFILL, [1] DECODE */
    struct layer_template tpl[2];
    bool tpl_known[2];
    struct obs_layer_cut cuts[LAYER_CUTS_MAX];
    struct obs_layer_work work;
    /* per top phase, the last forward analysed and what was found in it: a
     * forward with the same kernels in the same order (decode steps, mostly)
     * takes its layers with a compare instead of a search */
    uint32_t *memo_names[2];
    uint32_t memo_len[2];
    struct obs_layer_found memo_found[2];
    struct obs_layer_cut memo_cuts[2][LAYER_CUTS_MAX];
};

static int name_is_norm(uint32_t id)
{
    return id < CLASS_CACHE && (class_of(id) & CLASS_NORM) != 0;
}

/* The tables behind a thread's layer_track, in one mapping after it. */
static size_t layer_track_bytes(void)
{
    return sizeof(struct layer_track) + (LAYER_SPAN_CAP + 1u) * (sizeof(uint32_t) + sizeof(uint64_t)) +
           4u * OBS_LAYER_NAME_IDS * sizeof(uint32_t) + 5u * LAYER_SPAN_CAP * sizeof(uint32_t);
}

static struct layer_track *layer_track_new(bool emit)
{
    struct layer_track *lt = map_zeroed(layer_track_bytes());
    uint8_t *p;
    if (lt == NULL)
        return NULL;
    lt->emit = emit;
    p = (uint8_t *)(lt + 1);
    lt->index = (uint64_t *)p;
    p += (LAYER_SPAN_CAP + 1u) * sizeof(uint64_t); /* one spare: a launch past the cap is stored there, unkept */
    lt->names = (uint32_t *)p;
    p += (LAYER_SPAN_CAP + 1u) * sizeof(uint32_t);
    lt->work.count = (uint32_t *)p;
    lt->work.stamp = lt->work.count + OBS_LAYER_NAME_IDS;
    lt->work.first = lt->work.stamp + OBS_LAYER_NAME_IDS;
    lt->work.last = lt->work.first + OBS_LAYER_NAME_IDS;
    lt->work.next = lt->work.last + OBS_LAYER_NAME_IDS;
    lt->work.distinct = lt->work.next + LAYER_SPAN_CAP;
    lt->work.occ = lt->work.distinct + LAYER_SPAN_CAP;
    lt->memo_names[0] = lt->work.occ + LAYER_SPAN_CAP;
    lt->memo_names[1] = lt->memo_names[0] + LAYER_SPAN_CAP;
    lt->work.cap = LAYER_SPAN_CAP;
    lt->work.norm_like = name_is_norm;
    lt->work.start_named = engine.set.have_layer_rule;
    lt->top = OBS_PHASE_NONE;
    lt->step = OBS_NO_STEP;
    lt->gen = UINT32_MAX; /* the first launch begins an instance */
    lt->next_name = NO_BOUND_NAME;
    return lt;
}

static void write_layer(const struct layer_track *lt, uint32_t layer, uint32_t pass, uint32_t layers, uint64_t first,
                        uint64_t last, uint64_t t)
{
    union obs_record rec; /* every field set: struct obs_rec_layer is the whole record, with no padding */
    if (!lt->emit)
        return;
    if (layer != OBS_NO_LAYER && last >= lt->void_first && first < lt->void_end) {
        /* an instance analysed after its labels came off (a warm-up's): the calls keep no layer */
        if (first >= lt->void_first && last < lt->void_end)
            return;
        if (first < lt->void_first)
            last = lt->void_first - 1;
        else
            first = lt->void_end;
    }
    rec.layer.type = OBS_REC_LAYER;
    rec.layer.event = OBS_LAYER_LABEL;
    rec.layer.phase = lt->top;
    rec.layer.layer = layer;
    rec.layer.t = t;
    rec.layer.generation = lt->gen;
    rec.layer.step = lt->step;
    rec.layer.first_index = first;
    rec.layer.last_index = last;
    rec.layer.pass = pass;
    rec.layer.layers = layers;
    obs_recorder_append(&rec);
}

/* The live template from the layers found: each layer's first launch
 * opens it, the launch after a pass's last layer closes it. */
static void learn_template(struct layer_template *t, const uint32_t *names, uint32_t n,
                           const struct obs_layer_cut *cuts, uint32_t ncuts, uint32_t anchor)
{
    uint32_t i, from = 0, nb = 0;
    for (i = 0; i < ncuts && nb + 1 < LAYER_BOUNDS_MAX; i++) {
        uint32_t at = cuts[i].first, close = cuts[i].last + 1, j, occ = 0;
        bool last_of_pass = i + 1 == ncuts || cuts[i + 1].pass != cuts[i].pass;
        for (j = from; j <= at; j++)
            occ += names[j] == names[at];
        t->b[nb++] = (struct layer_bound){names[at], occ, cuts[i].layer + 1};
        from = at + 1;
        if (last_of_pass && close < n && !(i + 1 < ncuts && cuts[i + 1].first == close)) {
            for (occ = 0, j = from; j <= close; j++)
                occ += names[j] == names[close];
            t->b[nb++] = (struct layer_bound){names[close], occ, 0};
            from = close + 1;
        }
    }
    t->n = nb;
    t->anchor = anchor;
}

/* Whether the live ranges opened where the layers were found. */
static bool live_matched(const struct layer_track *lt, uint32_t ncuts)
{
    uint32_t i;
    if (lt->live_n != ncuts)
        return false;
    for (i = 0; i < ncuts; i++)
        if (lt->live_first[i] != lt->cuts[i].first + 1)
            return false;
    return true;
}

/* The instance's layers: found, written as LAYER records, learned for the
 * next instance of its kind. At a token read (the forward is over) or when
 * the instance ends. */
static __attribute__((noinline)) void layer_analyse_to(struct layer_track *lt, uint32_t end, uint64_t next,
                                                       uint64_t now, const char *because)
{
    unsigned kind = lt->top == OBS_PHASE_PREFILL ? 0u : 1u;
    struct obs_layer_found f;
    uint32_t i, in_pass = 0, base = lt->seg, len = end > lt->seg ? end - lt->seg : 0;
    bool matched, same = false;
    if (len == 0 || lt->top == OBS_PHASE_NONE)
        return;
    if (len == lt->memo_len[kind] && memcmp(lt->names + base, lt->memo_names[kind], len * sizeof *lt->names) == 0) {
        f = lt->memo_found[kind]; /* the same forward as the last: the same layers */
        same = true;
        memcpy(lt->cuts, lt->memo_cuts[kind], f.layers * sizeof *lt->cuts);
    } else {
        f = obs_layers_find(lt->names + base, len, lt->tpl_known[kind] ? lt->tpl[kind].anchor : UINT32_MAX, &lt->work,
                            lt->cuts, LAYER_CUTS_MAX);
        if (f.layers > 0) { /* a forward (not the few launches after a token read) */
            memcpy(lt->memo_names[kind], lt->names + base, len * sizeof *lt->names);
            lt->memo_len[kind] = len;
            lt->memo_found[kind] = f;
            memcpy(lt->memo_cuts[kind], lt->cuts, f.layers * sizeof *lt->cuts);
        }
    }
    for (i = 0; i < f.layers; i++) {
        const struct obs_layer_cut *c = &lt->cuts[i];
        uint64_t first = lt->index[base + c->first];
        uint64_t last = base + c->last + 1 < end ? lt->index[base + c->last + 1] - 1 : next - 1;
        if (c->layer == 0) { /* a new pass: how many layers it has */
            for (in_pass = 1; i + in_pass < f.layers && lt->cuts[i + in_pass].layer != 0; in_pass++)
                ;
            lt->pass_layers = in_pass;
        }
        if (first != UINT64_MAX && next != UINT64_MAX && last >= first && last < next)
            write_layer(lt, c->layer, c->pass, in_pass, first, last, now);
    }
    matched = live_matched(lt, f.layers);
    if (f.layers > 0 && !(matched && lt->live == &lt->tpl[kind])) { /* a template that matched stays as it is */
        learn_template(&lt->tpl[kind], lt->names + base, len, lt->cuts, f.layers, f.anchor);
        lt->tpl_known[kind] = true;
    }
    /* the next forward (a prompt's next chunk) is found, and followed live, from here */
    lt->seg = end;
    lt->next_bound = lt->occ = lt->layer1 = lt->live_n = 0;
    lt->next_name = lt->live != NULL && lt->live->n > 0 ? lt->live->b[0].name : NO_BOUND_NAME;
    if (obs_debug_on(OBS_DBG_PHASES, 2)) {
        struct logic l = {lt->top, true, lt->gen, lt->step, 0};
        log_decision(&l, "layers", because, " layers=%u passes=%u anchor=%u launches=%u same_as_last=%d live=%s",
                     f.layers, f.passes, f.anchor, len, same,
                     lt->live == NULL ? "none" : matched ? "matched" : "differed");
    }
}

static void layer_analyse(struct layer_track *lt, const char *because)
{
    layer_analyse_to(lt, lt->n, obs_thread_next_index(), obs_now_ns(), because);
}

/* Rules with OBS_STEP: a token read may end a forward; the analysis waits
 * for the launches after it (layer_due_run at the next instance, the
 * thread's end or the process's exit): the step's last read is where its
 * forward ended. */
static void layer_read_seen(struct layer_track *lt, uint64_t now)
{
    if (lt->n <= lt->seg)
        return;
    lt->due = true;
    lt->due_n = lt->n;
    lt->due_next = obs_thread_next_index();
    lt->due_t = now;
}

/* The forward the read ended: it did (its layers, as at the read). */
static void layer_analyse_due(struct layer_track *lt)
{
    lt->due = false;
    layer_analyse_to(lt, lt->due_n, lt->due_next, lt->due_t, "token-read");
}

static void layer_due_run(struct layer_track *lt)
{
    if (lt->due)
        layer_analyse_due(lt);
}

/* The structure's question to the layer tracker: has the forward that
 * began `since` launches ago in the current instance run its whole stack?
 * Yes when the live template closed its last layer within those launches;
 * else the layer finder, on those launches, must find at least as many
 * layers as the thread's forwards have (3 before any was found: the
 * finder's least) and the last of them must end before the last launch.
 * Returns the launches from the forward's start to right after its stack,
 * 0: not over. Asked only at an embedding lookup that may begin the next
 * forward, and where no template answers (off the launch path). */
#define STACK_LAYERS_MIN 3u
static uint32_t layer_stack_end(struct layer_track *lt, uint32_t since)
{
    uint32_t from, n, want;
    struct obs_layer_found f;
    if (lt == NULL)
        return since > 0 ? since : 1; /* no tracker: every lookup may begin a forward */
    n = lt->n;
    from = n > since ? n - since : 0;
    if (from < lt->seg)
        from = lt->seg;
    if (lt->closed_at > from)
        return lt->closed_at - from;
    want = lt->pass_layers > STACK_LAYERS_MIN ? lt->pass_layers : STACK_LAYERS_MIN;
    if (n - from < want)
        return 0;
    f = obs_layers_find(lt->names + from, n - from, UINT32_MAX, &lt->work, lt->cuts, LAYER_CUTS_MAX);
    if (f.layers < want || lt->cuts[f.layers - 1].last + 1 >= n - from)
        return 0;
    return lt->cuts[f.layers - 1].last + 1;
}

/* Whether the thread's next launch is inside a layer of the live template
 * (the last launch opened or continued one and no boundary closed it): the
 * layer tracker's answer to the structure (a gather inside a mixture of
 * experts' layer begins no forward). No template yet, or none kept: no. */
static bool layer_inside(const struct layer_track *lt)
{
    return lt != NULL && lt->layer1 != 0;
}

/* A graph's kernel nodes: see phase_engine.h. Live ranges are not
 * touched: a graph launch stays one launch at step level (its nodes run on
 * the device with no host call to open a range at). */
void obs_phase_graph_layers(struct obs_graph_walk *w)
{
    struct phase_thread *p = phase_tls;
    uint32_t hint = UINT32_MAX;
    struct obs_layer_found f;
    uint16_t *layer;

    /* set up by a recorded call already (the captured launches were): never set up from here, where the
     * settings may not be loaded yet */
    if (atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    if (p != NULL && engine.set.mode == OBS_PHASES_AUTO && !w->incomplete && !w->order_cut && w->norder > 0) {
        /* a graph whose first kernel is the lookup the thread's current forward began with, no longer than
         * what that forward has launched: the forward was its capture (its launches ran nothing), and the
         * graph's first launch runs it (forward_begins) */
        struct token_loop *t = &p->automatic.loop;
        if (t->forwards && !t->graph_first && w->order[0] == t->fwd_opener && w->norder <= t->fwd_launches) {
            t->forward_captured = true;
            OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u capture kernel_nodes=%u forward_launches=%u opener=%u",
                          obs_thread_id(), obs_tls.call_counter, w->norder, t->fwd_launches, t->fwd_opener);
        }
    }
    if (obs_cfg.layers_off)
        return;
    if (w->incomplete || w->order_cut || w->norder == 0 || w->layer != NULL)
        return;
    layer = malloc(w->norder * sizeof *layer);
    if (layer == NULL)
        return;
    if (p != NULL && p->layers != NULL && p->layers->tpl_known[1])
        hint = p->layers->tpl[1].anchor; /* a graph replays a decode step, mostly */
    f = obs_graph_node_layers(w->order, w->norder, hint, name_is_norm, engine.set.have_layer_rule, layer);
    OBS_DEBUG_LOG(PHASES, 2, "tid=%u graph-layers kernel_nodes=%u layers=%u passes=%u anchor=%u hint=%u",
                  obs_thread_id(), w->norder, f.layers, f.passes, f.anchor, hint);
    if (f.layers == 0) {
        free(layer);
        return;
    }
    w->layer = layer;
}

static inline void layer_bound_seen(struct layer_track *lt);

/* A launch in another phase instance than the last: the last one's layers
 * (unless found already), then the new one's live template. */
static __attribute__((noinline)) void layer_instance_changed(struct layer_track *lt, const struct logic *l)
{
    unsigned kind = l->top == OBS_PHASE_PREFILL ? 0u : 1u;
    layer_due_run(lt);
    if (lt->n > lt->seg)
        layer_analyse(lt, "instance-ended");
    lt->n = lt->seg = 0;
    lt->anew = false;
    lt->gen = l->gen;
    lt->top = l->top;
    lt->raw_step = l->step;
    lt->step = l->top == OBS_PHASE_DECODE ? l->step : OBS_NO_STEP;
    lt->live = l->top != OBS_PHASE_NONE && lt->tpl_known[kind] ? &lt->tpl[kind] : NULL;
    lt->next_bound = lt->occ = lt->layer1 = lt->live_n = lt->closed_at = 0;
    lt->next_name = lt->live != NULL && lt->live->n > 0 ? lt->live->b[0].name : NO_BOUND_NAME;
}

/* A launch of the next boundary's kernel: the boundary when it is the
 * count-th since the one before. */
static inline void layer_bound_seen(struct layer_track *lt)
{
    const struct layer_bound *b = &lt->live->b[lt->next_bound];
    if (++lt->occ != b->occ)
        return;
    lt->layer1 = b->layer1;
    lt->occ = 0;
    if (b->layer1 != 0 && lt->live_n < LAYER_CUTS_MAX)
        lt->live_first[lt->live_n++] = lt->n - lt->seg + 1; /* within the forward being followed */
    lt->next_name = ++lt->next_bound < lt->live->n ? b[1].name : NO_BOUND_NAME;
    if (b->layer1 == 0 && lt->next_bound >= lt->live->n)
        lt->closed_at = lt->n; /* the stack the template follows is over */
}

/* A step opens, or a generation is taken back: the next launch begins a new
 * instance even where its generation, phase and step are those of the
 * current one (a prompt's last chunk read as step 0, then the real step 0). */
static void layer_instance_anew(struct phase_thread *p)
{
    if (p->layers != NULL)
        p->layers->anew = true; /* its generation stays: the instance ending is analysed under it */
    p->last_want.valid = false; /* the next launch compares the instance */
}

/* Per launch, before its ranges are moved: the instance it is in (unless
 * the launch before had the same generation, phase and step), its live
 * layer, its name kept for the analysis. Returns the live layer + 1. */
static inline uint32_t layer_launch(struct layer_track *lt, const struct logic *l, uint32_t name, bool same_logic)
{
    uint32_t n;
    if (!same_logic && (lt->anew || l->gen != lt->gen || l->step != lt->raw_step || l->top != lt->top))
        layer_instance_changed(lt, l);
    /* outside a phase (top NONE): no template (next_name never matches), layer1 0, and the names kept are
     * never analysed (layer_analyse looks at no NONE instance): no test needed here */
    if (obs_unlikely(name == lt->next_name))
        layer_bound_seen(lt);
    n = lt->n;
    lt->names[n] = name; /* past the cap: into the spare slot, not counted */
    lt->index[n] = obs_thread_next_index(); /* its CALL record's, unless ranges move (layer_launch_moved) */
    lt->n = n + (n < LAYER_SPAN_CAP);
    return lt->emit ? lt->layer1 : 0;
}

/* After the launch's ranges moved (PHASE records written before its CALL): its record index. */
static inline void layer_launch_moved(struct layer_track *lt)
{
    if (lt->n > 0 && lt->top != OBS_PHASE_NONE)
        lt->index[lt->n - 1] = obs_thread_next_index();
}

/* ---- the three ways a launch moves the logical state ------------------------------------ */

static void new_generation(struct logic *l)
{
    l->gen = l->started ? l->gen + 1 : 0;
    l->started = true;
    l->top = OBS_PHASE_PREFILL;
    l->step = OBS_NO_STEP;
}

static void enter_decode(struct logic *l, uint32_t opener)
{
    if (!l->started) {
        l->started = true;
        l->gen = 0;
    }
    l->top = OBS_PHASE_DECODE;
    l->step = 0;
    l->opener = opener;
}

/* OBS_PHASES rules. Returns true for a graph launch inside the decode. */
/* OBS_PHASES rules. Returns true for a graph launch inside the decode.
 * With OBS_STEP, only a launch it matches opens the decode (and each step);
 * without it, a step opens at the first launch after a token read, or, in
 * a thread that has read none, after a host delimiter or at a launch of the
 * kernel that opened the current step. */
static bool step_rules_mode(struct logic *l, struct rules_state *r, uint8_t cls, uint32_t name, bool graph,
                            bool new_segment)
{
    uint8_t phase = cls & CLASS_PHASE_MASK;
    bool had_started = l->started;
    if (graph && r->ever_token_read && r->after_token && !engine.set.have_step_rule &&
        (l->top == OBS_PHASE_DECODE || l->top == OBS_PHASE_PREFILL)) {
        /* a token loop replaying its step as a graph: the graph launch opens the next step */
        if (l->top == OBS_PHASE_DECODE)
            l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
        else
            enter_decode(l, name);
        LOG_LAUNCH_DECISION(l, l->step == 0 ? "decode-starts" : "step", "graph-launch-after-token-read", name);
        return false;
    }
    if (graph) /* in a token loop, a graph launch inside a step is one of the step's */
        return l->top == OBS_PHASE_DECODE && !r->ever_token_read;
    if (phase == OBS_PHASE_PREFILL) {
        /* an iteration iter:after: selects after the generation's token read is the next prompt (its
         * inputs came in); a size selector's, a chunk of this one */
        bool next_prompt = new_segment && r->iter_phase == OBS_PHASE_PREFILL && r->gen_token_read &&
                           (r->iter_kind == OBS_PATTERN_MEMCPY || r->iter_kind == OBS_PATTERN_MEMSET);
        if (l->top != OBS_PHASE_PREFILL || next_prompt) {
            const char *why = l->top == OBS_PHASE_PREFILL ? "selected-iteration-after-token-read" : "rule-PREFILL";
            new_generation(l);
            r->gen_token_read = false;
            LOG_LAUNCH_DECISION(l, "new-generation", why, name);
        }
    } else if (phase == OBS_PHASE_DECODE || phase == OBS_PHASE_KV_GATHER || (cls & CLASS_STEP)) {
        if (l->top != OBS_PHASE_DECODE) {
            if (engine.set.have_step_rule && !(cls & CLASS_STEP))
                return false; /* OBS_STEP opens the decode: this stays where it is */
            enter_decode(l, name);
            r->step_armed = false;
            LOG_LAUNCH_DECISION(l, "decode-starts", phase == OBS_PHASE_KV_GATHER ? "rule-KV_GATHER"
                                                    : phase == OBS_PHASE_DECODE  ? "rule-DECODE"
                                                                                 : "OBS_STEP",
                                name);
        } else if (engine.set.have_step_rule) {
            /* in a generation that reads tokens, one step per token read:
             * the first OBS_STEP launch after it (a kernel may run twice a
             * step); one that has read none (tokens kept on the device, the
             * last generation's output read at its end) steps at each */
            if ((cls & CLASS_STEP) && (!r->gen_token_read || r->step_armed)) {
                l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
                l->opener = name;
                r->step_armed = false;
                LOG_LAUNCH_DECISION(l, "step", "OBS_STEP", name);
            }
        } else if (r->ever_token_read ? r->after_token : new_segment || name == l->opener) {
            l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
            LOG_LAUNCH_DECISION(l, "step",
                                r->ever_token_read ? "first-launch-after-token-read"
                                : new_segment      ? "first-launch-after-delimiter"
                                                   : "opener-kernel-again",
                                name);
        }
    }
    if (!had_started && l->started)
        r->marks |= RULES_MARK_FIRST;
    /* a decode iteration that begins with no step opened since the token
     * read: if it reads a token still with none, it was no step (below) */
    if (new_segment && r->step_armed && engine.set.have_step_rule && l->top == OBS_PHASE_DECODE)
        r->marks |= RULES_MARK_ITER;
    return false;
}

/* Rules with conditions or selectors: which kernel patterns' globs a name
 * matches (obs_phase_rules_kernel_mask), per name id, computed once. */
static uint32_t rules_mask_of(uint32_t id)
{
    _Atomic uint32_t *masks = engine.names.rules_masks;
    uint32_t m = id < CLASS_CACHE && masks != NULL ? atomic_load_explicit(&masks[id], memory_order_relaxed) : 0;
    char base[256];
    if (obs_likely(m != 0))
        return m;
    base_name_of(id, base, sizeof base); /* slow path: once per name id */
    m = obs_phase_rules_kernel_mask(&engine.set.rules, base);
    if (id < CLASS_CACHE && masks != NULL)
        atomic_store_explicit(&masks[id], m, memory_order_relaxed);
    return m;
}

/* Rules: the class a launch counts as. At an iteration's first launch the
 * selectors choose the iteration's phase, which every launch of it takes;
 * otherwise a sized name's phase comes from its patterns' conditions. */
static uint8_t rules_class(struct rules_state *r, bool started, uint8_t cls, const struct obs_rec_call *rec,
                           bool graph)
{
    const struct obs_phase_rules *rules = &engine.set.rules;
    struct obs_launch_size size = {0, 0, 0};
    uint32_t mask = 0;
    if (!graph && ((cls & CLASS_SIZED) || (!r->iter_open && (cls & CLASS_ITER)))) {
        mask = rules_mask_of(rec->name);
        size = obs_launch_size_of((uint64_t)rec->u.grid.x * rec->u.grid.y * rec->u.grid.z,
                                  (uint64_t)rec->block_x * rec->block_y * rec->block_z);
    }
    if (!r->iter_open) {
        r->iter_open = true;
        unsigned after = r->iter_after | (!started || !r->gen_token_read ? OBS_AFTER_NO_TOKEN : 0u);
        r->iter_phase = rules->iter_mask == 0 ? OBS_PHASE_NONE
                        : obs_phase_rules_match_iteration_kind(rules, cls & CLASS_ITER ? mask : 0,
                                                               graph ? NULL : &size, after, &r->iter_kind);
        if (r->iter_phase != OBS_PHASE_NONE)
            OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u iteration-selected phase=%s because=selector after=0x%x",
                          obs_thread_id(), obs_tls.call_counter, phase_names[r->iter_phase & 3],
                          after);
    }
    if (r->iter_phase != OBS_PHASE_NONE)
        return (uint8_t)((cls & ~CLASS_PHASE_MASK) | r->iter_phase);
    if (cls & CLASS_SIZED)
        return (uint8_t)((cls & ~CLASS_PHASE_MASK) | obs_phase_rules_match_launch(rules, mask, &size));
    return cls;
}

/* Automatic mode, learned shape (a): roles from the repeating unit. */
static bool step_learned(struct logic *l, uint8_t role, uint32_t name, bool graph, bool live)
{
    if (graph)
        return l->top == OBS_PHASE_DECODE;
    if (role == ROLE_PREFIX) {
        if (l->top != OBS_PHASE_PREFILL) {
            new_generation(l);
            if (live)
                LOG_LAUNCH_DECISION(l, "new-generation", "prefix-kernel", name);
        }
    } else if (role == ROLE_OPENER) {
        if (l->top != OBS_PHASE_DECODE)
            enter_decode(l, name);
        else
            l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
        if (live)
            LOG_LAUNCH_DECISION(l, l->step == 0 ? "decode-starts" : "step", "opener-kernel", name);
    }
    return false;
}

/* Shape (b): does this iteration, or this forward, begin a new prompt?
 * One signal is enough: graph replay stopped (a forward eager after graph
 * ones); more bytes copied in since the last forward began than 4x the
 * most a decode step did (any, where steps copy none); a memset before the
 * iteration's first launch where decode steps had none (llama.cpp clears
 * its KV cache between conversations); a forward whose lookup is 4x the
 * size of the decode steps'. Before any decode step was seen (a prompt with
 * no decode steps, or the thread's first), a copy in of at least a quarter
 * of the last prompt's, or, where that copied none, a forward with the same
 * lookup at least a quarter of its size. The size signals are asked at a
 * forward's start only (an iteration's first launch is no lookup). */
enum prompt_signal {
    PROMPT_NO = 0,
    PROMPT_GRAPH_REPLAY_STOPPED,
    PROMPT_COPY_IN_OVER_STEPS,
    PROMPT_MEMSET_BEFORE_PROMPT,
    PROMPT_FIRST_LAUNCH_OVER_STEPS,
    PROMPT_COPY_IN_LIKE_LAST_PROMPT,
    PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
};
static const char *const prompt_signal_names[] = {"none",
                                                  "graph-replay-stopped",
                                                  "copy-in-over-4x-steps",
                                                  "memset-before-first-launch",
                                                  "first-launch-4x-steps",
                                                  "copy-in-quarter-of-last-prompt",
                                                  "first-kernel-quarter-of-last-prompt"};

static enum prompt_signal new_prompt(const struct token_loop *t, const struct iteration_start *s, bool at_forward)
{
    if (at_forward && t->prev_graph_first && !s->graph)
        return PROMPT_GRAPH_REPLAY_STOPPED;
    if (t->decode_seen) {
        if (s->htod > 0 && s->htod / PROMPT_RATIO >= t->decode_htod_max && s->htod > t->decode_htod_max)
            return PROMPT_COPY_IN_OVER_STEPS;
        if (s->memset && !t->decode_memset)
            return PROMPT_MEMSET_BEFORE_PROMPT;
        return at_forward && !s->graph && t->decode_threads > 0 && s->threads / PROMPT_RATIO >= t->decode_threads
                   ? PROMPT_FIRST_LAUNCH_OVER_STEPS
                   : PROMPT_NO;
    }
    if (t->prompt.htod > 0)
        return s->htod > 0 && s->htod * PROMPT_RATIO >= t->prompt.htod ? PROMPT_COPY_IN_LIKE_LAST_PROMPT : PROMPT_NO;
    return at_forward && !s->graph && s->name == t->prompt.name && t->prompt.threads > 0 &&
                   s->threads * PROMPT_RATIO >= t->prompt.threads && s->threads > 0
               ? PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
               : PROMPT_NO;
}

static struct iteration_look look_of(const struct iteration_start *s)
{
    return (struct iteration_look){s->threads, s->htod, s->name, s->graph, s->memset};
}

static bool same_look(const struct iteration_look *a, const struct iteration_look *b)
{
    return a->name == b->name && a->threads == b->threads && a->htod == b->htod && a->graph == b->graph;
}

/* b: the same first kernel as a, at fewer threads, or as large with fewer bytes in. */
static bool smaller_look(const struct iteration_look *a, const struct iteration_look *b)
{
    return !b->graph && !a->graph && a->name == b->name &&
           (b->threads < a->threads || (b->threads == a->threads && b->htod < a->htod));
}

/* Take the labels off the thread's records [first, now) in the trace: a
 * RELABEL of no phase (what looked like a generation was a warm-up). */
/* Take the labels off the thread's records [first, end), their layers
 * with them: those written (a LAYER record of none over them) and those
 * an analysis still due would write (write_layer leaves them out). */
static void unlabel_span(uint64_t first, uint64_t end)
{
    struct range none = {OBS_PHASE_NONE, OBS_NO_STEP, 0, 0, 0};
    struct layer_track *lt = phase_tls != NULL ? phase_tls->layers : NULL;
    if (first == UINT64_MAX || end == UINT64_MAX || end <= first)
        return;
    write_phase(OBS_PHASE_RELABEL, &none, first, end - 1);
    if (lt != NULL) {
        write_layer(lt, OBS_NO_LAYER, 0, 0, first, end - 1, obs_now_ns());
        lt->void_first = first;
        lt->void_end = end;
    }
}

static void unlabel_since(uint64_t first)
{
    unlabel_span(first, obs_thread_next_index());
}

/* The trace's labels of the thread's records [first, now) become r's. */
static void relabel_since(uint64_t first, const struct range *r)
{
    uint64_t next = obs_thread_next_index();
    if (first != UINT64_MAX && next != UINT64_MAX && next > first)
        write_phase(OBS_PHASE_RELABEL, r, first, next - 1);
}

static void forget_window(struct token_loop *t)
{
    t->window_dirty = false;
    t->window_htod = 0;
    t->window_memset = false;
    t->window_first_index = UINT64_MAX;
}

/* A new generation begins at this iteration. Its prompt's inputs, the
 * copies in since the last launch or token read, become its first calls
 * in the trace (a RELABEL: live they were outside every range), except in
 * the thread's first generation, where they cannot be told from the
 * model's own set-up copies. */
/* A generation's last step ends before the iteration the next step's
 * forward would have begun in (numbered as in the step before it) when no
 * forward began there: Hugging Face's output sliced after generate()
 * returned, a detokeniser's torch.cat and .tolist() after the loop, are
 * the program's own work, not the step's. Where a new prompt's forward
 * begins in that iteration, the iteration was the prompt's input
 * preparation: it becomes the new generation's (start_generation). Called
 * where the generation ends (the next one begins, the thread ends) with
 * the end of what comes off; returns where that iteration began, or
 * UINT64_MAX. */
static uint64_t last_step_ends(struct logic *l, struct phase_thread *p, uint64_t end, bool at_forward)
{
    struct auto_state *a = &p->automatic;
    uint64_t from = a->excess_index, prep = UINT64_MAX;
    a->excess_index = UINT64_MAX;
    a->loop.step_iters = 0;
    a->loop.step_output_read = false;
    if (!a->loop.forwards && a->loop.copied && l->top == OBS_PHASE_DECODE && !a->loop.step_read &&
        a->step_first_index != UINT64_MAX && a->step_first_index < end) {
        /* a thread whose steps end in their reads (no forward seen, copies: its steps open after token reads):
         * a last step that read nothing was none (a set-up's fills after one .item(), on another thread than
         * a serving loop's) */
        /* its only step: the generation was one read after set-up work, none (its prompt read one value) */
        uint64_t from_index = a->loop.gen_steps == 1 && a->gen_first_index != UINT64_MAX ? a->gen_first_index
                                                                                      : a->step_first_index;
        unlabel_span(from_index, end);
        LOG_DECISION(l, "not-a-step", "read-nothing-in-a-thread-whose-steps-end-in-reads",
                     " steps=%u unlabelled_from_record=%llu", a->loop.gen_steps, (unsigned long long)from_index);
        a->step_first_index = UINT64_MAX;
        return UINT64_MAX;
    }
    if (from == UINT64_MAX || l->top != OBS_PHASE_DECODE)
        return UINT64_MAX;
    if (at_forward) {
        /* the current iteration, with the copies in before it, prepared the new prompt */
        prep = a->iter_window_index != UINT64_MAX ? a->iter_window_index : a->iter_first_index;
        if (from >= a->iter_first_index)
            return prep;
        end = prep;
    }
    if (from < end) {
        unlabel_span(from, end);
        LOG_DECISION(l, "not-a-step", "no-forward-where-the-next-step-begins",
                     " iteration=%u unlabelled_from_record=%llu", a->loop.step_iters_usual, (unsigned long long)from);
    }
    return prep;
}

static void start_generation(struct logic *l, struct phase_thread *p, const struct iteration_start *s, uint8_t origin,
                             bool at_forward)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool first = !l->started;
    uint64_t prep = UINT64_MAX;
    if (!first)
        prep = last_step_ends(l, p, t->window_first_index != UINT64_MAX ? t->window_first_index : obs_thread_next_index(),
                              at_forward);
    if (!first && l->gen == 0 && !t->read_since_start && a->thread_first_index != UINT64_MAX) {
        /* the thread's generation 0 read nothing back, and the next prompt's input came in: it was a
         * warm-up (forwards run before a decode step is captured into a graph, after the weights came in);
         * its labels come off in the trace, and this is generation 0 */
        uint64_t end = t->window_first_index != UINT64_MAX ? t->window_first_index : obs_thread_next_index();
        unlabel_span(a->thread_first_index, end);
        LOG_DECISION(l, "warm-up", "generation-0-read-nothing-back", " unlabelled_from_record=%llu",
                     (unsigned long long)a->thread_first_index);
        l->started = false;
        first = true;
        t->decode_seen = false;
        t->decode_htod_max = t->decode_threads = 0;
        t->decode_memset = false;
        t->fwd_min[0] = t->fwd_min[1] = 0;
    }
    t->prev_prompt = t->prompt;
    t->prev_origin = t->origin;
    if (!first && t->gen_steps == 0 && t->gen_forwards == 1 && t->prompt.htod > 0 && t->gen_token_reads > 0 &&
        t->last_read_bytes < t->prompt.htod) {
        /* a generation of one forward, its inputs copied in, fewer bytes read back (sampled ids, not a host
         * sampler's logits: ggml's prompt chunks read theirs) */
        t->single_run++;
        if (t->prompt.threads > t->single_max_threads)
            t->single_max_threads = t->prompt.threads;
    } else {
        t->single_run = 0;
        t->single_max_threads = 0;
    }
    t->prev_gen_steps = t->gen_steps;
    t->prev_gen_iterations = t->gen_iterations;
    t->prev_gen_token_reads = t->gen_token_reads;
    a->prev_gen_first_index = a->gen_first_index;
    new_generation(l);
    layer_instance_anew(p);
    t->gen_token_read = false;
    t->token_pending = false;
    t->prompt = look_of(s);
    t->origin = origin;
    t->gen_iterations = t->gen_token_reads = t->gen_steps = t->gen_forwards = 0;
    t->steps_unread_before = t->steps_unread;
    t->steps_like_prompt = true;
    a->gen_first_index = UINT64_MAX;
    a->marks |= MARK_GEN | (first ? MARK_THREAD : 0u);
    if (prep == UINT64_MAX)
        prep = t->window_first_index;
    if (!first && prep != UINT64_MAX) {
        struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        relabel_since(prep, &prefill);
        a->gen_first_index = prep;
        a->marks &= (uint8_t)~MARK_GEN;
    }
}

static void remember_step(struct token_loop *t, const struct iteration_look *s)
{
    t->decode_seen = true;
    if (s->htod > t->decode_htod_max)
        t->decode_htod_max = s->htod;
    if (s->memset)
        t->decode_memset = true;
    if (!s->graph)
        t->decode_threads = s->threads;
}

static uint64_t launch_threads(const struct obs_rec_call *r)
{
    return (uint64_t)r->u.grid.x * r->u.grid.y * r->u.grid.z * r->block_x * r->block_y * r->block_z;
}

/* ---- the decision log, automatic mode's lines ------------------------------------------------ */

/* Level 3: what an iteration's first launch, or a forward's, brings before the decision. */
static __attribute__((cold)) void log_iteration(const struct phase_thread *p, const struct iteration_start *s,
                                                bool forward)
{
    const struct token_loop *t = &p->automatic.loop;
    obs_debug_write(OBS_DBG_PHASES,
                    "tid=%u call=%u %s name=%u threads=%llu htod=%llu memset=%d graph=%d prev_graph=%d "
                    "token_pending=%d token_read_gen=%d token_read_fwd=%d reads_tokens=%d copied=%d forwards=%d "
                    "decode_seen=%d steps_threads=%llu steps_htod_max=%llu prompt_name=%u prompt_threads=%llu "
                    "prompt_htod=%llu gen_forwards=%u gen_steps=%u top=%s",
                    obs_thread_id(), obs_tls.call_counter, forward ? "forward" : "iteration", s->name,
                    (unsigned long long)s->threads, (unsigned long long)s->htod, s->memset, s->graph,
                    t->prev_graph_first, t->token_pending, t->gen_token_read, t->fwd_token_read, t->reads_tokens,
                    t->copied, t->forwards, t->decode_seen, (unsigned long long)t->decode_threads,
                    (unsigned long long)t->decode_htod_max, t->prompt.name, (unsigned long long)t->prompt.threads,
                    (unsigned long long)t->prompt.htod, t->gen_forwards, t->gen_steps, phase_names[p->logic.top & 3]);
}

/* The numbers a new_prompt signal compared. */
static __attribute__((cold)) void prompt_numbers(char *out, size_t len, enum prompt_signal why,
                                                 const struct token_loop *t, const struct iteration_start *s)
{
    switch (why) {
    case PROMPT_COPY_IN_OVER_STEPS:
        snprintf(out, len, " htod=%llu steps_htod_max=%llu", (unsigned long long)s->htod,
                 (unsigned long long)t->decode_htod_max);
        break;
    case PROMPT_MEMSET_BEFORE_PROMPT:
        snprintf(out, len, " memset=1 steps_memset=0");
        break;
    case PROMPT_FIRST_LAUNCH_OVER_STEPS:
        snprintf(out, len, " threads=%llu steps_threads=%llu", (unsigned long long)s->threads,
                 (unsigned long long)t->decode_threads);
        break;
    case PROMPT_COPY_IN_LIKE_LAST_PROMPT:
        snprintf(out, len, " htod=%llu prompt_htod=%llu", (unsigned long long)s->htod,
                 (unsigned long long)t->prompt.htod);
        break;
    case PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT:
        snprintf(out, len, " name=%u threads=%llu prompt_threads=%llu", s->name, (unsigned long long)s->threads,
                 (unsigned long long)t->prompt.threads);
        break;
    default:
        snprintf(out, len, " graph=%d", s->graph);
        break;
    }
}

/* Level 1: shape (a) found. */
static __attribute__((cold)) void log_learned(const struct phase_thread *p, uint32_t unit_start, uint32_t unit_len)
{
    const struct auto_state *a = &p->automatic;
    char unit[400];
    size_t used = 0;
    uint32_t i;
    unit[0] = '\0';
    for (i = 0; i < unit_len && used < sizeof unit - 12; i++)
        used += (size_t)snprintf(unit + used, sizeof unit - used, "%s%u", i ? "," : "",
                                 a->history[unit_start + i].token);
    obs_debug_write(OBS_DBG_PHASES,
                    "tid=%u call=%u learned because=unit-repeated-%u-times unit=%s opener=%u window=%u "
                    "relabelled_from_record=%llu gen=%u",
                    obs_thread_id(), obs_tls.call_counter, UNIT_MIN_REPEATS, unit, a->history[unit_start].token,
                    a->history_n, (unsigned long long)a->learn_first_index, p->logic.gen);
}

/* Level 4: every launch and the innermost range open after it (its label). */
static __attribute__((noinline, cold)) void log_launch(const struct phase_thread *p, const struct obs_rec_call *rec,
                                                       bool graph)
{
    char label[64] = "none";
    if (p->depth > 0) {
        const struct range *r = &p->open[p->depth - 1];
        if (r->step != OBS_NO_STEP)
            snprintf(label, sizeof label, "%s gen=%u step=%u", phase_names[r->phase & 3], r->gen, r->step);
        else
            snprintf(label, sizeof label, "%s gen=%u", phase_names[r->phase & 3], r->gen);
    }
    obs_debug_write(OBS_DBG_PHASES, "tid=%u call=%u launch name=%u threads=%llu graph=%d phase=%s", obs_thread_id(),
                    obs_tls.call_counter, graph ? 0 : rec->name, graph ? 0ull : (unsigned long long)launch_threads(rec),
                    graph, label);
}

/* Shape (b): this iteration opens the next decode step (step 0 after the
 * prompt). What the generation's steps looked like may show, at this
 * point, that they were not steps: a prompt evaluated in chunks that each
 * read their logits (ggml's -b) reads like a prompt and steps until a
 * smaller iteration comes: the chunks looked like the prompt's first (or
 * one "step 0" was larger than the step after it: the prompt's last
 * chunk). They join the PREFILL in the trace (a RELABEL); live they
 * carried step ranges. */
enum chunk_signal { CHUNK_NO = 0, CHUNK_STEPS_LIKE_PROMPT, CHUNK_STEP0_LARGER };
static const char *const chunk_signal_names[] = {"none", "steps-looked-like-the-prompt-then-a-smaller-one",
                                                 "step0-larger-than-the-next"};

static enum chunk_signal chunks_not_steps(const struct token_loop *t, const struct iteration_look *s)
{
    if (t->gen_steps == 0 || s->htod == 0) /* a loop that feeds each evaluation (ggml): this one copied in */
        return CHUNK_NO;
    if (t->steps_like_prompt && smaller_look(&t->prompt, s))
        return CHUNK_STEPS_LIKE_PROMPT;
    if (t->gen_steps == 1 && !t->steps_like_prompt && smaller_look(&t->step0, s))
        return CHUNK_STEP0_LARGER;
    return CHUNK_NO;
}

static bool read_after_stack(struct phase_thread *p);

/* A prompt's next chunk begins in the same instance: the layers of the
 * forward before are found now, and the next one is followed from here. */
static void layer_forward_ended(struct phase_thread *p)
{
    if (p->layers != NULL && p->layers->n > p->layers->seg)
        layer_analyse(p->layers, "forward");
}

static void enter_serving(struct logic *l, struct phase_thread *p, const struct iteration_start *s, const char *because);

static void open_step_now(struct logic *l, struct phase_thread *p, const struct iteration_start *s, const char *because)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct iteration_look look = look_of(s);
    enum chunk_signal chunk = l->top == OBS_PHASE_DECODE ? chunks_not_steps(t, &look) : CHUNK_NO;
    if (chunk == CHUNK_NO && l->top == OBS_PHASE_DECODE && t->gen_steps >= 2 && t->forwards && !look.graph &&
        look.htod > 0 && t->last_read_bytes < look.htod && t->step_threads_last != 0 &&
        look.threads != t->step_threads_last) {
        /* a decode step fed from the host that reads back sampled ids (fewer bytes than it copies in; a host
         * sampler reads logits), whose batch is not the step before's: requests joined or left; a generation's
         * steps keep their batch (finished sequences stay, padded) */
        enter_serving(l, p, s, "a-decode-step-whose-batch-changed");
        return;
    }
    if (!look.graph)
        t->step_threads_last = look.threads;
    if (l->top == OBS_PHASE_DECODE && (t->step_output_read || read_after_stack(p)))
        t->step_iters_usual = t->step_iters + (t->iter_begun_here ? 1u : 0u);
    t->step_iters = 0;
    t->step_output_read = false;
    t->step_read = false;
    t->step_opened_here = true;
    a->marks |= MARK_STEP;
    a->excess_index = UINT64_MAX;
    layer_instance_anew(p);
    t->token_pending = false;
    if (chunk != CHUNK_NO) {
        struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        uint32_t steps = t->gen_steps;
        relabel_since(a->step0_index, &prefill);
        l->top = OBS_PHASE_PREFILL;
        l->step = OBS_NO_STEP;
        t->gen_steps = 0;
        t->decode_htod_max = 0; /* the chunks' copies were the prompt's */
        t->decode_memset = false;
        LOG_DECISION(l, "prompt-chunks", chunk_signal_names[chunk],
                     " steps=%u relabelled_from_record=%llu threads=%llu step0_threads=%llu prompt_threads=%llu", steps,
                     (unsigned long long)a->step0_index, (unsigned long long)s->threads,
                     (unsigned long long)t->step0.threads, (unsigned long long)t->prompt.threads);
    }
    if (l->top != OBS_PHASE_DECODE) {
        enter_decode(l, 0);
        t->step0_before_token = !t->gen_token_read;
        t->step0 = look;
        t->steps_like_prompt = same_look(&t->prompt, &look);
        a->step0_index = UINT64_MAX;
        a->marks |= MARK_STEP0;
        LOG_DECISION(l, "decode-starts", because,
                     " threads=%llu prompt_threads=%llu htod=%llu prompt_htod=%llu graph=%d read_bytes=%llu",
                     (unsigned long long)s->threads, (unsigned long long)t->prompt.threads,
                     (unsigned long long)s->htod, (unsigned long long)t->prompt.htod, s->graph,
                     (unsigned long long)t->last_read_bytes);
    } else {
        l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
        t->steps_like_prompt = t->steps_like_prompt && same_look(&t->prompt, &look);
        LOG_DECISION(l, "step", because, " threads=%llu htod=%llu graph=%d read_bytes=%llu",
                     (unsigned long long)s->threads, (unsigned long long)s->htod, s->graph,
                     (unsigned long long)t->last_read_bytes);
    }
    t->gen_steps++;
    remember_step(t, &look);
}

/* The generation read its first token after forwards that opened decode
 * steps before it (a thread's first prompt in chunks, before the thread is
 * known to read a token per step; a later prompt's last chunk of one token,
 * after the stop check's flag read): those forwards were its prompt's
 * chunks. They join the PREFILL in the trace (a RELABEL; live they carried
 * step ranges), and the forward that begins now opens step 0. */
static void steps_were_chunks(struct logic *l, struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
    relabel_since(a->step0_index, &prefill);
    t->steps_unread = t->steps_unread_before; /* they were no steps */
    LOG_DECISION(l, "prompt-chunks", "steps-before-the-first-token-read", " steps=%u relabelled_from_record=%llu",
                 t->gen_steps, (unsigned long long)a->step0_index);
    l->top = OBS_PHASE_PREFILL;
    l->step = OBS_NO_STEP;
    t->gen_steps = 0;
}

/* Shape (b): the generation that began at the last token read was not
 * one. It had one iteration that read a token, after a generation with no
 * decode step, and this iteration
 * - looks the same (kernel, size, bytes in): it was that generation's
 *   decode step 0 (ggml with a prompt of a few tokens, -np N sequences per
 *   step: a step is at least a quarter of the prompt), this is step 1;
 * - is smaller, copies its own inputs in (a loop that feeds every
 *   evaluation) and looks like the thread's decode steps (no larger, no
 *   more bytes in): it was that generation's last prompt chunk (ggml's -b,
 *   chunks that each read their logits), this is step 0.
 * Its labels become the step's, or the PREFILL's, in the trace (a
 * RELABEL); live it carried a PREFILL range of its own. */
enum rejoin_signal { REJOIN_NO = 0, REJOIN_AS_STEP, REJOIN_AS_CHUNK };
static const char *const rejoin_signal_names[] = {"none", "next-iteration-looks-the-same",
                                                  "next-iteration-smaller-and-copies-in"};

static enum rejoin_signal was_not_a_prompt(const struct logic *l, const struct token_loop *t,
                                           const struct iteration_start *s)
{
    struct iteration_look look = look_of(s);
    if (l->top != OBS_PHASE_PREFILL || t->origin != ORIGIN_AT_TOKEN_READ || t->prev_gen_steps != 0 ||
        t->gen_iterations != 1 || t->gen_token_reads != 1 || l->gen == 0)
        return REJOIN_NO;
    if (same_look(&t->prompt, &look))
        return REJOIN_AS_STEP;
    return s->htod > 0 && smaller_look(&t->prompt, &look) && t->decode_seen && !s->graph &&
                   s->threads <= t->decode_threads && s->htod <= t->decode_htod_max
               ? REJOIN_AS_CHUNK
               : REJOIN_NO;
}

static void rejoin_previous_generation(struct logic *l, struct phase_thread *p, const struct iteration_start *s,
                                       enum rejoin_signal how)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct range label;
    uint64_t from = a->gen_first_index;
    layer_instance_anew(p);
    struct iteration_look was = t->prompt;
    l->gen--;
    if (how == REJOIN_AS_STEP)
        label = (struct range){OBS_PHASE_DECODE, 0, OBS_PHASE_STEP_NAME_BASE, l->gen, 0};
    else
        label = (struct range){OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
    relabel_since(from, &label);
    LOG_DECISION(l, how == REJOIN_AS_STEP ? "was-a-step" : "was-a-prompt-chunk", rejoin_signal_names[how],
                 " relabelled_from_record=%llu threads=%llu htod=%llu was_threads=%llu was_htod=%llu",
                 (unsigned long long)from, (unsigned long long)s->threads, (unsigned long long)s->htod,
                 (unsigned long long)was.threads, (unsigned long long)was.htod);
    /* the previous generation goes on */
    t->prompt = t->prev_prompt;
    t->origin = t->prev_origin;
    t->gen_iterations += t->prev_gen_iterations;
    t->gen_token_reads += t->prev_gen_token_reads;
    a->gen_first_index = a->prev_gen_first_index;
    a->marks &= (uint8_t)~MARK_GEN;
    if (how == REJOIN_AS_STEP) {
        /* with that iteration as its step 0, and this one opening step 1 */
        enter_decode(l, 0);
        t->step0 = was;
        t->steps_like_prompt = same_look(&t->prompt, &t->step0);
        t->gen_steps = 1;
        a->step0_index = from;
        a->marks &= (uint8_t)~MARK_STEP0;
        remember_step(t, &t->step0);
    }
    open_step_now(l, p, s, t->forwards ? "forward" : "token-read");
}

/* Automatic mode, shape (b) (and the guess used while shape (a) is being
 * learned): the structure of a thread's launches (docs/phases.md,
 * "Forwards"). A *forward* of the model begins at its embedding lookup, or
 * at a graph launch; the launches between two host delimiters are an
 * *iteration*. A generation begins at an iteration (its input
 * preparation), or at a forward where only the forward tells; its first
 * forward is its prompt's, and every later forward the next decode step,
 * but for a prompt in chunks: in a thread whose steps follow token reads,
 * a forward with no token read since the last one is the prompt's next
 * chunk. A thread in which no forward was seen yet opens its steps at the
 * first launch after a token read (as before issue 34). */
/* Whether the current forward has run as many launches as its kind's
 * shortest whole forward, less a quarter: inside a forward (Gemma 2's
 * sliding-window layers copy 8 bytes in), what comes in is the forward's
 * own, not the next prompt's. */
#define FORWARD_RAN_SHARE 4u
static bool forward_ran(const struct token_loop *t, const struct logic *l)
{
    uint32_t least = t->fwd_min[l->top == OBS_PHASE_DECODE ? 1 : 0];
    return t->graph_first || least == 0 || t->fwd_launches >= least - least / FORWARD_RAN_SHARE;
}

static void steps_were_chunks(struct logic *l, struct phase_thread *p);

static void iteration_begins(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    enum prompt_signal prompt;
    enum rejoin_signal rejoin;
    if (obs_debug_on(OBS_DBG_PHASES, 3))
        log_iteration(p, s, false);
    if (t->serving) {
        /* a serving loop's iterations begin at their forwards; an idle gap begins a generation there */
        if (p->after_delimiter && s->now - p->delimiter_t > engine.set.gen_gap_ns)
            t->serving_new_gen = true;
    } else if (!l->started) {
        start_generation(l, p, s, ORIGIN_OTHER, false);
        LOG_DECISION(l, "new-generation", "first-iteration", " threads=%llu htod=%llu", (unsigned long long)s->threads,
                     (unsigned long long)s->htod);
    } else if (p->after_delimiter && s->now - p->delimiter_t > engine.set.gen_gap_ns) {
        start_generation(l, p, s, ORIGIN_OTHER, false);
        LOG_DECISION(l, "new-generation", "idle-gap", " gap_ms=%llu gen_gap_ms=%llu",
                     (unsigned long long)((s->now - p->delimiter_t) / 1000000u),
                     (unsigned long long)(engine.set.gen_gap_ns / 1000000u));
    } else if (l->top == OBS_PHASE_NONE) {
        start_generation(l, p, s, ORIGIN_OTHER, false);
        LOG_DECISION(l, "new-generation", "no-phase-open", " threads=%llu", (unsigned long long)s->threads);
    } else if (t->forwards) {
        /* a forward thread: what came in since the last forward may begin the next prompt here, before its
         * forward (its input preparation); a generation begun at the last token read may have been the
         * previous one's step (rejoin) */
        if (t->gen_forwards > 0 && forward_ran(t, l)) {
            if (t->token_pending && (rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
                rejoin_previous_generation(l, p, s, rejoin);
                t->opened_here = true;
            } else if ((prompt = new_prompt(t, s, false)) != PROMPT_NO) {
                char numbers[192] = "";
                if (obs_debug_on(OBS_DBG_PHASES, 2))
                    prompt_numbers(numbers, sizeof numbers, prompt, t, s);
                start_generation(l, p, s, t->token_pending ? ORIGIN_AT_TOKEN_READ : ORIGIN_OTHER, false);
                LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
            }
        }
    } else if (!t->token_pending) {
        if (l->top == OBS_PHASE_PREFILL)
            LOG_DECISION(l, "prefill-continues", "no-token-read-yet", " threads=%llu prompt_threads=%llu",
                         (unsigned long long)s->threads, (unsigned long long)t->prompt.threads);
        else
            LOG_DECISION(l, "step-continues", "no-token-read-since-it-began", " threads=%llu graph=%d",
                         (unsigned long long)s->threads, s->graph);
    } else if ((rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
        rejoin_previous_generation(l, p, s, rejoin);
    } else if ((prompt = new_prompt(t, s, true)) != PROMPT_NO) {
        char numbers[192] = "";
        if (obs_debug_on(OBS_DBG_PHASES, 2)) /* before start_generation replaces what it compared */
            prompt_numbers(numbers, sizeof numbers, prompt, t, s);
        start_generation(l, p, s, ORIGIN_AT_TOKEN_READ, false);
        LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
    } else {
        open_step_now(l, p, s, "token-read");
    }
    t->gen_iterations++;
}

/* A serving loop: the thread's forwards are iterations over a changing
 * batch (requests joining and leaving: transformers' generate_batch,
 * vLLM, SGLang, TensorRT-LLM's in-flight batching), each one the range
 * ITERATION/k of its own. Found at the first decode step whose batch
 * changed (open_step_now); the forwards before it, as far as the ring of
 * the last FWD_RING holds them, become the iterations 0, 1... of the
 * generation the oldest of them began, in the trace (a RELABEL each; live
 * they carried PREFILL and step ranges), and what came before the first
 * of them none. From here each forward opens the next iteration. */
static void enter_serving(struct logic *l, struct phase_thread *p, const struct iteration_start *s, const char *because)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    uint32_t have = a->fwd_count < FWD_RING ? a->fwd_count : FWD_RING, j, first = 0, k = 0;
    uint64_t next = obs_thread_next_index();
    uint32_t gen = l->gen;
    /* the ring's forwards of this thread's loop: those since its generation 0's first launch */
    while (first < have &&
           a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].index < a->thread_first_index)
        first++;
    if (first < have) {
        uint64_t begin = a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].index;
        gen = a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].gen;
        if (a->thread_first_index != UINT64_MAX && a->thread_first_index < begin)
            unlabel_span(a->thread_first_index, begin); /* before the loop's first forward: no iteration */
        for (j = first; j < have; j++, k++) {
            uint64_t from = a->fwd_ring[(a->fwd_count - have + j) % FWD_RING].index;
            uint64_t to = j + 1 < have ? a->fwd_ring[(a->fwd_count - have + j + 1) % FWD_RING].index : next;
            struct range it = {OBS_PHASE_ITERATION, k, OBS_PHASE_ITER_NAME_BASE + k, gen, 0};
            if (from != UINT64_MAX && to != UINT64_MAX && to > from)
                write_phase(OBS_PHASE_RELABEL, &it, from, to - 1);
        }
    }
    t->serving = true;
    t->serving_new_gen = false;
    layer_instance_anew(p);
    l->started = true;
    l->gen = gen;
    l->top = OBS_PHASE_ITERATION;
    l->step = k;
    LOG_DECISION(l, "serving-loop", because,
                 " threads=%llu last_step_threads=%llu largest_threads=%llu htod=%llu iterations_relabelled=%u",
                 (unsigned long long)s->threads, (unsigned long long)t->step_threads_last,
                 (unsigned long long)t->single_max_threads, (unsigned long long)s->htod, k);
}

/* A serving loop's next forward: its next iteration, or ITERATION/0 of a
 * new generation after an idle gap. */
static void serving_forward(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    layer_instance_anew(p);
    if (!l->started || l->top != OBS_PHASE_ITERATION || p->automatic.loop.serving_new_gen) {
        l->gen = l->started ? l->gen + 1 : 0;
        l->started = true;
        l->top = OBS_PHASE_ITERATION;
        l->step = 0;
        p->automatic.loop.serving_new_gen = false;
    } else {
        l->step++;
    }
    LOG_DECISION(l, "iteration-begins", "forward", " name=%u threads=%llu htod=%llu", s->name,
                 (unsigned long long)s->threads, (unsigned long long)s->htod);
}

/* A forward begins at this launch (an embedding lookup, a forward's graph). */
static void forward_begins(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    enum prompt_signal prompt;
    enum rejoin_signal rejoin;
    bool first = !t->forwards;
    unsigned kind = l->top == OBS_PHASE_DECODE ? 1u : 0u;
    if (obs_debug_on(OBS_DBG_PHASES, 3))
        log_iteration(p, s, true);
    if (t->forwards && l->started && !t->graph_first && !t->forward_captured &&
        (t->fwd_min[kind] == 0 || t->fwd_launches < t->fwd_min[kind]))
        t->fwd_min[kind] = t->fwd_launches; /* the forward before this one, whole */
    t->forwards = true;
    if (first && l->started && l->top == OBS_PHASE_DECODE && t->gen_steps > 0)
        LOG_DECISION(l, "forwards-found", "embedding-lookup", " name=%u", s->name); /* steps by reads until now */
    if (t->serving) {
        serving_forward(l, p, s);
    } else if (t->forward_captured && s->graph && l->started) {
        /* the forward before was this graph's capture: it ran nothing, this launch runs it; its step goes on */
        LOG_DECISION(l, "capture-replayed", "graph-of-the-captured-forward", " name=%u", t->fwd_opener);
    } else if (t->opened_here) {
        /* the iteration this launch begins opened its step (a generation taken back): this forward is it */
    } else if (!l->started || l->top == OBS_PHASE_NONE) {
        start_generation(l, p, s, ORIGIN_OTHER, true);
        LOG_DECISION(l, "new-generation", "first-forward", " name=%u threads=%llu", s->name,
                     (unsigned long long)s->threads);
    } else if (t->gen_forwards == 0) {
        /* the prompt's first forward: the generation began at its input preparation (whose copies in stay
         * the prompt's) */
        uint64_t htod = t->prompt.htod;
        bool memset = t->prompt.memset;
        t->prompt = look_of(s);
        t->prompt.htod = htod;
        t->prompt.memset = memset;
        if (t->single_run >= SERVING_SINGLE_RUN && !s->graph && htod > 0 &&
            s->threads * PROMPT_RATIO < t->single_max_threads) {
            /* generations of one forward each, fed from the host and read back, and now one a quarter of the
             * largest of them: no prompt is that small after such prompts; they were a serving loop's iterations,
             * the batch shrinking to the decode tokens of its requests */
            enter_serving(l, p, s, "one-forward-generations-then-a-quarter-sized-one");
        } else {
            LOG_DECISION(l, "prompt-forward", "first-forward-of-the-generation", " name=%u threads=%llu htod=%llu",
                         s->name, (unsigned long long)s->threads, (unsigned long long)s->htod);
        }
    } else if (l->top == OBS_PHASE_PREFILL && t->reads_tokens && !t->fwd_token_read && !read_after_stack(p)) {
        /* a thread whose steps follow token reads, and nothing read back after the last forward's stack (no
         * stop check): that forward's output went unused, this is the prompt's next chunk */
        LOG_DECISION(l, "prompt-chunk", "nothing-read-after-the-last-forward", " name=%u threads=%llu", s->name,
                     (unsigned long long)s->threads);
        layer_forward_ended(p);
    } else if (l->top == OBS_PHASE_PREFILL && !t->reads_tokens && !t->steps_unread && t->fwd_delimited &&
               !t->fwd_read) {
        /* a thread whose steps are not known yet: the last forward ended in a sync that read nothing (a prompt's
         * chunk: vLLM's, SGLang's chunked prefill); a step reads its token or a flag, or has no sync at all */
        LOG_DECISION(l, "prompt-chunk", "a-sync-and-nothing-read-since-the-last-forward", " name=%u threads=%llu",
                     s->name, (unsigned long long)s->threads);
        layer_forward_ended(p);
    } else if ((rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
        rejoin_previous_generation(l, p, s, rejoin);
    } else if ((prompt = new_prompt(t, s, true)) != PROMPT_NO) {
        char numbers[192] = "";
        if (obs_debug_on(OBS_DBG_PHASES, 2))
            prompt_numbers(numbers, sizeof numbers, prompt, t, s);
        start_generation(l, p, s, t->fwd_token_read ? ORIGIN_AT_TOKEN_READ : ORIGIN_OTHER, true);
        LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
    } else {
        if (l->top == OBS_PHASE_DECODE && t->step0_before_token && t->fwd_token_read && t->gen_token_reads == 1)
            steps_were_chunks(l, p); /* the prompt's first token was read only now: they were its chunks */
        if (t->fwd_token_read && l->top == OBS_PHASE_PREFILL)
            t->reads_tokens = true; /* its prompts last until their token read */
        if (!t->fwd_read)
            t->steps_unread = true; /* its tokens stay on the device */
        open_step_now(l, p, s, t->fwd_token_read ? "forward-after-token-read" : "forward");
    }
    t->forward_captured = false;
    t->gen_forwards++;
    t->fwd_launches = 0;
    a->marks |= MARK_FWD;
    a->fwd_pending_gen = l->gen;
    t->fwd_token_read = t->fwd_read = t->fwd_delimited = false;
    t->fwd_opener = s->graph ? 0 : s->name;
    t->prev_graph_first = t->graph_first;
    t->graph_first = s->graph;
}

static inline uint8_t role_of(const struct auto_state *a, uint32_t name)
{
    return name < ROLE_CACHE && a->roles != NULL ? a->roles[name] : ROLE_UNKNOWN;
}

/* ---- learning shape (a) ------------------------------------------------------------------ */

/* Relabel the history with the learned roles: one RELABEL record per run
 * of launches with the same label. */
static void relabel_history(struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    struct logic l = {OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
    struct range run = {0, 0, 0, 0, 0};
    uint64_t first = UINT64_MAX, last = 0;
    uint32_t i;

    for (i = 0; i < a->history_n; i++) {
        const struct history_entry *e = &a->history[i];
        bool graph = e->token == GRAPH_TOKEN;
        bool steady_graph = step_learned(&l, graph ? ROLE_UNKNOWN : role_of(a, e->token), e->token, graph, false);
        struct range want[5], label;
        unsigned n = wanted(&l, !graph && (class_of(e->token) & CLASS_KV_DEFAULT), steady_graph, want);
        if (e->index == UINT64_MAX)
            continue;
        if (n == 0)
            label = (struct range){OBS_PHASE_NONE, OBS_NO_STEP, 0, 0, 0};
        else
            label = want[n - 1];
        if (label.phase == OBS_PHASE_DECODE && label.step == OBS_NO_STEP && n > 0)
            label.name = OBS_PHASE_NAME_STEADY;
        if (first != UINT64_MAX && same_range(&run, &label) && run.phase == label.phase) {
            last = e->index;
            continue;
        }
        if (first != UINT64_MAX && run.phase != OBS_PHASE_NONE)
            write_phase(OBS_PHASE_RELABEL, &run, first, last);
        run = label;
        first = last = e->index;
    }
    if (first != UINT64_MAX && run.phase != OBS_PHASE_NONE)
        write_phase(OBS_PHASE_RELABEL, &run, first, last);
    p->logic = l;
}

/* Shape (a) found: the unit of unit_len launches starting at history
 * entry unit_start. Set the roles (its first name opens a step, the rest of
 * the unit follows; every other name seen so far is the prefix, PREFILL),
 * relabel what came before, go on with the learned state. */
static void learn_unit(struct phase_thread *p, uint32_t unit_start, uint32_t unit_len)
{
    struct auto_state *a = &p->automatic;
    uint32_t i;
    a->roles = map_zeroed(ROLE_CACHE);
    if (a->roles == NULL) {
        a->learn = GAVE_UP;
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=no-memory: shape (b) from here", obs_thread_id(),
                      obs_tls.call_counter);
        return;
    }
    for (i = 0; i < unit_len; i++) {
        uint32_t t = a->history[unit_start + i].token;
        if (t < ROLE_CACHE && a->roles[t] == ROLE_UNKNOWN)
            a->roles[t] = i == 0 ? ROLE_OPENER : ROLE_UNIT;
    }
    for (i = 0; i < a->history_n; i++) {
        uint32_t t = a->history[i].token;
        if (t < ROLE_CACHE && a->roles[t] == ROLE_UNKNOWN)
            a->roles[t] = ROLE_PREFIX;
    }
    relabel_history(p);
    a->learn_first_index = a->history_n > 0 ? a->history[0].index : UINT64_MAX;
    a->learn = LEARNED;
    if (obs_debug_on(OBS_DBG_PHASES, 1))
        log_learned(p, unit_start, unit_len);
    free_history(a);
}

/* A unit of one kernel repeated ([k, k]) is a plain loop, not a decode step. */
static bool single_kernel(const struct history_entry *unit, uint32_t len)
{
    uint32_t i;
    for (i = 1; i < len; i++)
        if (unit[i].token != unit[0].token)
            return false;
    return true;
}

/* Online: after appending history entry i (of the current segment), the
 * length of the periodic stretch ending at i for each period; the first
 * period whose stretch holds UNIT_MIN_REPEATS whole units is the unit.
 * Before the thread's first delimiter it is only noted: a prompt's layers
 * repeat too, and the copy or read that ends its iteration (a token loop)
 * must come first (on_delimiter takes the unit at the first delimiter). */
static void learn_online(struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    uint32_t i = a->history_n - 1, seg_i = i - a->segment_start, period, limit;
    uint32_t token = a->history[i].token;
    limit = seg_i < UNIT_MAX ? seg_i : UNIT_MAX;
    for (period = UNIT_MIN; period <= limit && a->found_len == 0; period++) {
        if (token != GRAPH_TOKEN && a->history[i - period].token == token) {
            if (++a->run[period] >= period * (UNIT_MIN_REPEATS - 1) &&
                !single_kernel(a->history + i - period + 1, period)) {
                if (a->had_delimiter) {
                    learn_unit(p, i - a->run[period] - period + 1, period);
                    return;
                }
                a->found_start = i - a->run[period] - period + 1;
                a->found_len = period;
                OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u unit-noted unit_len=%u: taken at the first delimiter",
                              obs_thread_id(), obs_tls.call_counter, period);
            }
        } else {
            a->run[period] = 0;
        }
    }
    if (a->history_n >= HISTORY_CAP) {
        a->learn = GAVE_UP; /* shape (b), or nothing to learn: stay as we are */
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=window-full launches=%u: shape (b) from here",
                      obs_thread_id(), obs_tls.call_counter, HISTORY_CAP);
    }
}

static void segment_ends(struct auto_state *a)
{
    a->segment_start = a->history_n;
    memset(a->run, 0, sizeof a->run);
}

/* ---- events ---------------------------------------------------------------------------- */

/* Automatic mode: the launch moves the learned state, or at an iteration's
 * first launch the token loop's; while learning it also feeds the history.
 * Every launch notes its kernel as seen and ends the window of what came
 * in before it. */
/* Whether this launch begins a forward of the model: an embedding lookup
 * (the first of a group, and not inside a layer: a mixture of experts'
 * router gathers), or a graph launch of a thread whose forwards began
 * (a decode step replayed). */
static bool forward_starts(const struct phase_thread *p, uint8_t cls, uint32_t name, bool graph)
{
    const struct token_loop *t = &p->automatic.loop;
    uint32_t stack_end;
    if (graph)
        return t->forwards;
    if (!(cls & CLASS_EMBED) || t->prev_embed || layer_inside(p->layers))
        return false;
    if (!t->forwards || t->gen_forwards == 0)
        return true; /* the thread's first, a generation's first (it began at its input preparation) */
    if (name == t->fwd_opener)
        return true; /* the lookup the current forward began with, outside its layers */
    /* another lookup (a decode step's index_select after a prompt's gather, a batch's gather after decode
     * steps) once the current forward has run its stack and something was read back after it: its output
     * consumed (a gather inside a layer of the thread's first forward, before any template, begins none,
     * nor does a serving loop's gather of the logits to sample, before their read) */
    if (!t->fwd_read && !t->steps_unread)
        return false;
    /* a forward replayed as a graph ran its stack in the graph launch */
    stack_end = t->graph_first ? 1 : layer_stack_end(p->layers, t->fwd_launches);
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u lookup name=%u opener=%u stack_end=%u read_at=%u", obs_thread_id(),
                  obs_tls.call_counter, name, t->fwd_opener, stack_end, t->fwd_read_at);
    /* a thread whose steps read nothing (tokens kept on the device): the stack alone */
    return stack_end != 0 && (t->steps_unread || t->fwd_read_at >= stack_end);
}

/* Whether something was read back after the current forward's stack. */
static bool read_after_stack(struct phase_thread *p)
{
    const struct token_loop *t = &p->automatic.loop;
    uint32_t end;
    if (!t->fwd_read)
        return false;
    end = t->graph_first ? 1 : layer_stack_end(p->layers, t->fwd_launches);
    return end != 0 && t->fwd_read_at >= end;
}

static bool auto_launch(struct phase_thread *p, uint32_t name, uint8_t cls, const struct obs_rec_call *rec,
                        bool graph, bool new_segment)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool steady_graph = false;
    if (a->learn == LEARNED) {
        steady_graph = step_learned(&p->logic, role_of(a, name), name, graph, true);
    } else {
        bool forward = forward_starts(p, cls, name, graph);
        if (new_segment || forward) {
            struct iteration_start s = {graph ? 0 : launch_threads(rec), t->window_htod, obs_now_ns(),
                                        name, graph, t->window_memset};
            t->opened_here = false;
            t->iter_begun_here = new_segment;
            t->step_opened_here = false;
            if (new_segment)
                iteration_begins(&p->logic, p, &s);
            if (forward)
                forward_begins(&p->logic, p, &s);
            if (new_segment) {
                a->marks |= MARK_ITER;
                a->iter_window_index = t->window_first_index;
            }
            /* the iterations after the step's output was read: the next step's forward usually begins in the
             * same one */
            if (new_segment && !t->step_opened_here && p->logic.top == OBS_PHASE_DECODE &&
                (t->step_output_read || (t->step_output_read = !layer_inside(p->layers) && read_after_stack(p))) &&
                ++t->step_iters == t->step_iters_usual)
                a->marks |= MARK_EXCESS;
        }
    }
    t->prev_embed = !graph && (cls & CLASS_EMBED);
    t->fwd_launches++;
    if (obs_unlikely(t->window_dirty))
        forget_window(t);
    t->iter_launched = true;
    if (a->learn == LEARNING) {
        struct history_entry *e = &a->history[a->history_n++];
        e->index = UINT64_MAX; /* filled in once the record is stored */
        e->token = name;
        e->new_segment = new_segment;
        learn_online(p); /* may switch this launch to the learned state */
    }
    return steady_graph;
}

/* The next layer inside the same phase range (no KV_GATHER open): pop the
 * layer range, push the next, as move_to would. */
static void layer_switch(struct phase_thread *p, uint32_t layer1)
{
    const struct range *phase_range;
    p->held_end_t = 0;
    if (layer1 != 0 && p->depth > 0 && p->open[p->depth - 1].layer1 != 0) {
        /* one layer after another (most switches): the innermost range's layer changes in place, as a pop and
         * a push would leave it, with no record to write */
        p->open[p->depth - 1].layer1 = layer1;
        p->pushes += 2;
        if (engine.set.ranges_on) {
            obs_range_pop();
            obs_range_push(layer_handle(layer1 - 1));
        }
        p->last_want.layer1 = layer1;
        p->last_want.pushes = p->pushes;
        return;
    }
    if (p->last_want.layer1 != 0)
        pop_range(p);
    if (layer1 != 0 && p->depth > 0) {
        phase_range = &p->open[p->depth - 1];
        push_range(p, &(struct range){phase_range->phase, phase_range->step, 0, phase_range->gen, layer1});
    }
    p->last_want.layer1 = layer1;
    p->last_want.pushes = p->pushes;
}

static void rules_not_a_step(struct phase_thread *p);

static void on_launch(struct phase_thread *p, const struct obs_rec_call *rec, bool graph)
{
    uint32_t name = graph ? GRAPH_TOKEN : rec->name;
    uint8_t cls = graph ? CLASS_KNOWN : class_of(name);
    bool new_segment = p->after_delimiter || !p->logic.started;
    bool steady_graph, kv, same_logic;
    struct range want[5];
    uint32_t layer1 = 0;
    unsigned n;

    if (engine.set.mode == OBS_PHASES_RULES) {
        uint32_t gen_before = p->logic.gen;
        bool started_before = p->logic.started;
        cls = rules_class(&p->rules, p->logic.started, cls, rec, graph);
        graph = graph && p->rules.iter_phase == OBS_PHASE_NONE; /* a selected iteration's graph launch is one of its launches */
        steady_graph = step_rules_mode(&p->logic, &p->rules, cls, name, graph, new_segment);
        if (obs_unlikely(p->rules.missed_first != UINT64_MAX)) {
            if (p->logic.gen != gen_before || !started_before)
                rules_not_a_step(p); /* a new generation: that iteration was none of the last step */
            else
                p->rules.missed_first = UINT64_MAX; /* the step goes on: a read inside its forward */
        }
        kv = (cls & CLASS_PHASE_MASK) == OBS_PHASE_KV_GATHER;
        p->rules.iter_after = 0; /* iter:after: counts what came since the last launch */
        p->rules.after_token = false;
        p->rules.iter_launched = true;
    } else {
        steady_graph = auto_launch(p, name, cls, rec, graph, new_segment);
        kv = (cls & CLASS_KV_DEFAULT) != 0;
    }
    p->after_delimiter = false;
    /* the same generation, phase and step as the last launch: the same layer instance too */
    same_logic = p->last_want.valid && p->last_want.gen == p->logic.gen && p->last_want.step == p->logic.step &&
                 p->last_want.top == p->logic.top;
    if (obs_likely(p->layers != NULL))
        layer1 = layer_launch(p->layers, &p->logic, name, same_logic);
    kv = kv && !graph && p->logic.top == OBS_PHASE_DECODE;
    if (obs_likely(same_logic && p->last_want.pushes == p->pushes && p->last_want.kv == kv &&
                   p->last_want.steady_graph == steady_graph && p->last_want.layer1 == layer1)) {
        p->held_end_t = 0; /* as move_to to the ranges already open */
    } else if (same_logic && p->last_want.pushes == p->pushes && !kv && !p->last_want.kv && !steady_graph &&
               !p->last_want.steady_graph && p->depth > 0) {
        layer_switch(p, layer1); /* only the layer changed: the innermost range (live only: no record) */
    } else {
        n = wanted_with_layer(&p->logic, kv, steady_graph, layer1, want);
        move_to(p, want, n);
        p->last_want.pushes = p->pushes;
        p->last_want.gen = p->logic.gen;
        p->last_want.step = p->logic.step;
        p->last_want.top = p->logic.top;
        p->last_want.kv = kv;
        p->last_want.steady_graph = steady_graph;
        p->last_want.layer1 = layer1;
        p->last_want.valid = true;
        if (obs_likely(p->layers != NULL))
            layer_launch_moved(p->layers);
    }
}

/* A copy or memset that rules name: it takes its phase (its iteration's,
 * inside an iteration a selector chose) without opening a step. Any copy
 * or memset counts for `iter:after:` selectors. */
static __attribute__((noinline)) void on_classified_transfer(struct phase_thread *p, uint8_t phase, unsigned after_bit)
{
    struct rules_state *r = &p->rules;
    struct range want[5];
    unsigned n;
    r->iter_after |= (uint16_t)after_bit;
    if (phase == OBS_PHASE_NONE)
        return;
    if (r->iter_open && r->iter_phase != OBS_PHASE_NONE) /* inside a selected iteration: its phase */
        phase = r->iter_phase;
    if (phase == OBS_PHASE_PREFILL && p->logic.top != OBS_PHASE_PREFILL) {
        new_generation(&p->logic);
        LOG_DECISION(&p->logic, "new-generation", "rule-names-this-copy-or-memset", " phase=PREFILL");
    } else if (phase != OBS_PHASE_PREFILL && p->logic.top != OBS_PHASE_DECODE) {
        if (engine.set.have_step_rule)
            return; /* OBS_STEP opens the decode: this stays where it is */
        enter_decode(&p->logic, 0);
        LOG_DECISION(&p->logic, "decode-starts", "rule-names-this-copy-or-memset", " phase=%s", phase_names[phase & 3]);
    }
    p->after_delimiter = false;
    n = wanted(&p->logic, phase == OBS_PHASE_KV_GATHER, false, want);
    move_to(p, want, n);
}

/* Rules: a token read (as in automatic mode), and a warm-up: launches
 * before the thread's first copy in that read nothing lose their labels
 * in the trace (live they carried their ranges), as in automatic mode. */
static __attribute__((noinline)) void rules_copy(struct phase_thread *p, unsigned dir, uint64_t bytes)
{
    struct rules_state *r = &p->rules;
    if (dir == OBS_DIR_DTOH && (r->iter_launched || r->unread_launches) && bytes >= TOKEN_READ_MIN)
        r->iter_token = true;
    if (dir == OBS_DIR_DTOH)
        r->iter_read = true;
    if (dir != OBS_DIR_HTOD || r->copied_in)
        return;
    r->copied_in = true;
    if (p->logic.started && !r->ever_token_read && r->first_index != UINT64_MAX) {
        uint64_t from = r->first_index;
        unlabel_since(from);
        p->logic = (struct logic){OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
        move_to(p, NULL, 0);
        r->first_index = UINT64_MAX;
        LOG_DECISION(&p->logic, "warm-up", "first-copy-in-after-launches-with-no-copy",
                     " htod=%llu unlabelled_from_record=%llu; the next launch begins generation 0",
                     (unsigned long long)bytes, (unsigned long long)from);
    }
}

/* Automatic mode: copies between host and device mark a host-fed loop
 * (no shape (a) for it); a copy in counts towards the next iteration's
 * inputs (the window since the last launch or token read); a copy out of
 * at least TOKEN_READ_MIN bytes after a launch of the iteration is its
 * token read (smaller: a flag). */
static __attribute__((noinline)) void on_auto_copy(struct phase_thread *p, unsigned dir, uint64_t bytes)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool first_copy = !t->copied;
    if (dir == OBS_DIR_HTOD) {
        if (t->window_first_index == UINT64_MAX)
            t->window_first_index = obs_thread_next_index();
        t->window_htod += bytes;
        t->window_dirty = true;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u copy-in bytes=%llu window_htod=%llu", obs_thread_id(),
                      obs_tls.call_counter, (unsigned long long)bytes, (unsigned long long)t->window_htod);
    } else if (dir == OBS_DIR_DTOH) {
        /* a read after launches of its iteration, or of the one before when that one read nothing (a host
         * sync, then the copy: torch.cuda.synchronize() before .tolist()) */
        bool after = t->iter_launched || t->unread_launches;
        bool token = after && bytes >= TOKEN_READ_MIN;
        if (token)
            t->iter_token_bytes = bytes;
        if (after)
            t->iter_read = true;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u %s bytes=%llu after_launch=%d", obs_thread_id(),
                      obs_tls.call_counter, token ? "token-read" : "flag-read", (unsigned long long)bytes, after);
    } else {
        return;
    }
    t->copied = true;
    if (dir == OBS_DIR_DTOH && (t->iter_launched || t->unread_launches))
        t->read_since_start = true;
    if (a->learn == LEARNING) {
        a->learn = GAVE_UP;
        a->found_len = 0;
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=copy-%s: a token loop, shape (b) for good",
                      obs_thread_id(), obs_tls.call_counter, dir == OBS_DIR_HTOD ? "in" : "out");
    } else if (a->learn == LEARNED) {
        /* What looked like steps was a warm-up (a model's layers captured
         * into a graph at start-up, before anything was copied): its labels
         * come off in the trace, the loop starts afresh, its first prompt
         * generation 0. */
        a->learn = GAVE_UP;
        munmap(a->roles, ROLE_CACHE);
        a->roles = NULL;
        p->logic = (struct logic){OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
        unlabel_since(a->learn_first_index);
        move_to(p, NULL, 0);
        OBS_DEBUG_LOG(PHASES, 1,
                      "tid=%u call=%u learned-dropped because=first-copy-%s unlabelled_from_record=%llu: a warm-up; "
                      "generations start again from 0",
                      obs_thread_id(), obs_tls.call_counter, dir == OBS_DIR_HTOD ? "in" : "out",
                      (unsigned long long)a->learn_first_index);
        return;
    }
    if (first_copy && dir == OBS_DIR_HTOD && p->logic.started) {
        /* The thread's first input arrives after launches that copied
         * nothing in and read nothing back: those were a warm-up (graphs
         * captured at start-up), not a generation. Their labels come off
         * in the trace (live they carried a PREFILL range); the next launch
         * begins generation 0. */
        uint64_t from = a->thread_first_index;
        unlabel_since(from);
        p->logic = (struct logic){OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
        move_to(p, NULL, 0);
        t->gen_forwards = 0;
        LOG_DECISION(&p->logic, "warm-up", "first-copy-in-after-launches-with-no-copy",
                     " htod=%llu unlabelled_from_record=%llu; the next launch begins generation 0",
                     (unsigned long long)bytes, (unsigned long long)from);
    }
}

/* Automatic mode: a memset before an iteration's first launch (llama.cpp
 * clears its KV cache this way between conversations). */
static __attribute__((noinline)) void on_auto_memset(struct phase_thread *p, uint64_t bytes)
{
    struct token_loop *t = &p->automatic.loop;
    t->window_memset = true;
    t->window_dirty = true;
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u memset bytes=%llu", obs_thread_id(), obs_tls.call_counter,
                  (unsigned long long)bytes);
}

void obs_phase_before(const struct obs_hooked_call *c, uint16_t api)
{
    struct phase_thread *p;
    uint8_t ev = api < OBS_API_COUNT ? engine.set.api_event[api] : EV_OTHER;
    unsigned dir;
    if (ev == EV_OTHER || ev == EV_HOST_SYNC)
        return;
    p = thread_state();
    if (p == NULL)
        return;
    switch (ev) {
    case EV_LAUNCH:
        on_launch(p, &c->rec, false);
        if (obs_debug_on(OBS_DBG_PHASES, 4))
            log_launch(p, &c->rec, false);
        if (engine.set.launch_ranges && c->rec.name != 0) {
            obs_range_push(launch_handle(c->rec.name));
            p->launch_range_open = true;
        }
        break;
    case EV_GRAPH:
        on_launch(p, &c->rec, true);
        if (obs_debug_on(OBS_DBG_PHASES, 4))
            log_launch(p, &c->rec, true);
        break;
    case EV_COPY:
    case EV_COPY_SYNC:
        dir = c->rec.flags & OBS_CALL_DIR_MASK;
        if (engine.set.mode == OBS_PHASES_RULES) {
            rules_copy(p, dir, c->rec.u.bytes);
            on_classified_transfer(p, engine.set.copy_class[dir % OBS_DIR_COUNT], 1u << (dir % OBS_DIR_COUNT));
        }
        else
            on_auto_copy(p, dir, c->rec.u.bytes);
        break;
    case EV_MEMSET:
        if (engine.set.mode == OBS_PHASES_RULES)
            on_classified_transfer(p, engine.set.memset_class, OBS_AFTER_MEMSET);
        else
            on_auto_memset(p, c->rec.u.bytes);
        break;
    default:
        break;
    }
}

/* Automatic mode, after a launch is stored: its record index where learning
 * or a new generation needs it. */
static void auto_launch_stored(struct auto_state *a, const struct obs_hooked_call *c)
{
    if (a->learn == LEARNING && a->history_n > 0 && a->history[a->history_n - 1].index == UINT64_MAX)
        a->history[a->history_n - 1].index = obs_call_last_index(c);
    if (obs_unlikely(a->marks != 0)) {
        uint64_t index = obs_call_last_index(c);
        if (a->marks & MARK_GEN)
            a->gen_first_index = index;
        if (a->marks & MARK_STEP0)
            a->step0_index = index;
        if (a->marks & MARK_THREAD)
            a->thread_first_index = index;
        if (a->marks & MARK_EXCESS)
            a->excess_index = index;
        if (a->marks & MARK_ITER)
            a->iter_first_index = index;
        if (a->marks & MARK_STEP)
            a->step_first_index = index;
        if (a->marks & MARK_FWD) {
            a->fwd_ring[a->fwd_count % FWD_RING].index = index;
            a->fwd_ring[a->fwd_count % FWD_RING].gen = a->fwd_pending_gen;
            a->fwd_count++;
        }
        a->marks = 0;
    }
}

/* Rules with OBS_STEP: a decode iteration that read a token with no
 * OBS_STEP launch since the previous token read was no step (Hugging
 * Face's output sliced and copied out after generate() returned, as the
 * automatic mode reads it: an iteration without the steps' opener) when
 * a new generation or the thread's end follows it; when the step goes on
 * it was a read inside the forward (docs/phases.md, "Reads inside a
 * forward"). Its labels come off in the trace then; live it carried the
 * step it followed. */
static __attribute__((noinline, cold)) void rules_not_a_step(struct phase_thread *p)
{
    unlabel_span(p->rules.missed_first, p->rules.missed_end);
    LOG_DECISION(&p->logic, "not-a-step", "token-read-with-no-OBS_STEP-launch-since-the-last",
                 " unlabelled_from_record=%llu", (unsigned long long)p->rules.missed_first);
    p->rules.missed_first = UINT64_MAX;
}

/* A host delimiter (a sync, or a synchronous copy from the device) ends
 * the iteration. In automatic mode the phase may go on after it (a
 * prompt's next chunk, a step's next iteration, the work that follows a
 * token read), which the next launch tells: the ranges stay open until
 * then (one range per prompt and per step in nsys, as in the trace), and
 * if the phase does not go on, its trace END carries the time of the first
 * delimiter after its last launch. Rules hold them the same way (the next
 * launch's phase is given at the launch: a prompt of several iterations is
 * one PREFILL range live). A thread that learned shape (a) ends the ranges
 * at every delimiter. */
static __attribute__((noinline)) void on_delimiter(struct phase_thread *p, uint8_t ev, unsigned dir)
{
    uint64_t now = obs_now_ns();
    if (engine.set.mode == OBS_PHASES_AUTO) {
        struct auto_state *a = &p->automatic;
        struct token_loop *t = &a->loop;
        bool token = t->iter_token_bytes > 0, close;
        if (a->learn == LEARNING && a->found_len != 0)
            learn_unit(p, a->found_start, a->found_len); /* noted in this first iteration, no copy in it */
        close = a->learn == LEARNED;
        if (close)
            move_to(p, NULL, 0);
        else if (p->held_end_t == 0)
            p->held_end_t = now;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter kind=%s token_read=%llu ranges=%s", obs_thread_id(),
                      obs_tls.call_counter, ev == EV_HOST_SYNC ? "sync" : "read",
                      (unsigned long long)t->iter_token_bytes, close ? "closed" : "held-open");
        if (token || !t->copied) /* a loop that never copied: each iteration may be the next step */
            t->token_pending = true;
        if (t->iter_read) {
            t->fwd_read = true;
            t->fwd_read_at = t->fwd_launches;
        }
        t->fwd_delimited = true;
        t->unread_launches = (t->iter_launched || t->unread_launches) && !t->iter_read;
        t->step_read = t->step_read || t->iter_read;
        t->iter_read = false;
        if (token) {
            t->gen_token_read = true;
            t->fwd_token_read = true;
            t->gen_token_reads++;
            t->last_read_bytes = t->iter_token_bytes;
            forget_window(t);
        }
        t->iter_token_bytes = 0;
        t->iter_launched = false;
        a->had_delimiter = true;
        if (a->learn == LEARNING)
            segment_ends(a);
    } else {
        if (p->held_end_t == 0)
            p->held_end_t = now;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter kind=%s ranges=held-open", obs_thread_id(),
                      obs_tls.call_counter, ev == EV_HOST_SYNC ? "sync" : "read");
        (void)dir;
        p->rules.iter_open = false;
        if (p->rules.iter_token && p->layers != NULL && engine.set.have_step_rule)
            layer_read_seen(p->layers, now); /* OBS_STEP says where a forward ends: its step's last read */
        else if (p->rules.iter_token && p->layers != NULL && p->layers->n > p->layers->seg)
            layer_analyse(p->layers, "token-read");
        if (p->rules.iter_token && p->rules.step_armed && p->rules.iter_index != UINT64_MAX &&
            p->logic.top == OBS_PHASE_DECODE)
        {
            p->rules.missed_first = p->rules.iter_index; /* no step, if no step follows (rules_not_a_step) */
            p->rules.missed_end = obs_thread_next_index();
        }
        p->rules.iter_index = UINT64_MAX;
        p->rules.unread_launches = (p->rules.iter_launched || p->rules.unread_launches) && !p->rules.iter_read;
        p->rules.iter_read = false;
        if (p->rules.iter_token) {
            p->rules.gen_token_read = p->rules.ever_token_read = p->rules.after_token = p->rules.step_armed = true;
            p->rules.iter_token = false;
        }
        p->rules.iter_launched = false;
    }
    p->after_delimiter = true;
    p->delimiter_t = now;
}

void obs_phase_after(const struct obs_hooked_call *c, uint16_t api, int32_t status)
{
    struct phase_thread *p = phase_tls;
    uint8_t ev = api < OBS_API_COUNT ? engine.set.api_event[api] : EV_OTHER;
    unsigned dir;
    struct obs_guard guard;
    (void)status;
    if (ev == EV_OTHER || ev == EV_COPY || ev == EV_MEMSET)
        return;
    if (p == NULL)
        p = thread_state();
    if (p == NULL) {
        obs_call_forget_slow();
        return;
    }
    obs_guard_enter(&guard); /* our records are made outside any hooked call; errno is the real call's */
    if (p->launch_range_open) {
        obs_range_pop();
        p->launch_range_open = false;
    }
    if ((ev == EV_LAUNCH || ev == EV_GRAPH) && engine.set.mode == OBS_PHASES_AUTO) {
        auto_launch_stored(&p->automatic, c);
    } else if ((ev == EV_LAUNCH || ev == EV_GRAPH) && obs_unlikely(p->rules.marks != 0)) {
        if (p->rules.marks & RULES_MARK_FIRST)
            p->rules.first_index = obs_call_last_index(c);
        if (p->rules.marks & RULES_MARK_ITER)
            p->rules.iter_index = obs_call_last_index(c);
        p->rules.marks = 0;
    }
    dir = c->rec.flags & OBS_CALL_DIR_MASK;
    if (ev == EV_HOST_SYNC || (ev == EV_COPY_SYNC && (dir == OBS_DIR_DTOH || dir == OBS_DIR_DEFAULT)))
        on_delimiter(p, ev, dir);
    obs_call_forget_slow(); /* slow paths taken after the real call belong to no call */
    obs_guard_leave(&guard);
}

/* The thread's end: what waited for launches that will not come. */
static void settle_waiting(struct phase_thread *p)
{
    if (p->layers != NULL)
        layer_due_run(p->layers);
    if (p->layers != NULL && p->layers->n > p->layers->seg)
        layer_analyse(p->layers, "exit"); /* the thread's last instance: nothing ends it */
    if (engine.set.mode == OBS_PHASES_RULES && p->rules.missed_first != UINT64_MAX)
        rules_not_a_step(p); /* the thread's last iteration: nothing followed it */
    if (engine.set.mode == OBS_PHASES_AUTO)
        last_step_ends(&p->logic, p, obs_thread_next_index(), false);
}

void obs_phase_thread_exit(void)
{
    struct phase_thread *p = phase_tls; /* NULL once its own destructor ran (thread_gone) */
    if (p == NULL || atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    settle_waiting(p);
}

void obs_phase_end_open_ranges(void)
{
    struct phase_thread *p = phase_tls;
    if (p == NULL || atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    settle_waiting(p);
    if (p->depth == 0)
        return;
    if (p->launch_range_open) {
        obs_range_pop();
        p->launch_range_open = false;
    }
    move_to(p, NULL, 0);
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* One message for a bad rule: the text with a caret under the offending
 * character (a window of it when long), and what is used instead. */
static void report_bad_rule(const char *var, const char *text, const struct obs_phase_rule_error *err,
                            const char *instead)
{
    char shown[81];
    size_t len = strlen(text), col = err->column ? err->column - 1 : 0, from = 0, n, i;
    if (col > 60)
        from = col - 60;
    n = len - from < 80 ? len - from : 80;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[from + i];
        shown[i] = ch >= ' ' && ch < 0x7f ? (char)ch : '?';
    }
    shown[n] = '\0';
    obs_log_warn("%s: %s at column %zu; %s instead\n"
                 "obsshim:   %s%s\n"
                 "obsshim:   %*s^",
                 var, err->what, err->column, instead, from > 0 ? "..." : "", shown, (int)(col - from + (from > 0 ? 3 : 0)),
                 "");
}

/* OBS_LAYER has OBS_STEP's grammar (a glob list): its parser's words, said of a layer. */
static void layer_rule_words(char *what, size_t len)
{
    static const struct {
        const char *from, *to;
    } words[] = {{"a step opens with a kernel", "a layer begins with a kernel"}, {"OBS_STEP", "OBS_LAYER"}};
    char out[sizeof ((struct obs_phase_rule_error *)0)->what];
    size_t i;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        char *at = strstr(what, words[i].from);
        if (at != NULL) {
            snprintf(out, sizeof out, "%.*s%s%s", (int)(at - what), what, words[i].to, at + strlen(words[i].from));
            snprintf(what, len, "%s", out);
        }
    }
}

static void setup(void)
{
    struct engine_settings *set = &engine.set;
    struct obs_phase_rule_error err;
    const char *phases = obs_cfg.phases, *step = obs_cfg.step;
    unsigned i;

    build_api_table();
    set->gen_gap_ns = (uint64_t)obs_cfg.gen_gap_ms * 1000000u;
    if (obs_cfg.phases_off || pthread_key_create(&engine.thread_key, thread_gone) != 0) {
        OBS_DEBUG_LOG(PHASES, 1, "set-up mode=off because=%s", obs_cfg.phases_off ? "OBS_PHASES=off" : "no-thread-key");
        atomic_store(&obs_phase_on, 2);
        return;
    }
    set->mode = OBS_PHASES_AUTO;
    if (phases[0] != '\0' || step[0] != '\0') {
        if (obs_phase_rules_parse(phases, false, &set->rules, &err) != 0) {
            report_bad_rule("OBS_PHASES", phases, &err, "automatic phases are used");
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_PHASES column=%zu mode=auto", err.column);
        } else if (obs_phase_rules_parse(step, true, &set->step_rules, &err) != 0) {
            report_bad_rule("OBS_STEP", step, &err, "automatic phases are used");
            set->rules.count = 0;
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_STEP column=%zu mode=auto", err.column);
        } else if (set->rules.count > 0 || set->step_rules.count > 0) {
            set->mode = OBS_PHASES_RULES;
            set->have_step_rule = set->step_rules.count > 0;
            for (i = 0; i < OBS_DIR_COUNT; i++)
                set->copy_class[i] = obs_phase_rules_match_memcpy(&set->rules, (uint8_t)i);
            set->memset_class = obs_phase_rules_match_memset(&set->rules);
            if (set->rules.sized_mask | set->rules.iter_kernel_mask)
                engine.names.rules_masks = map_zeroed(CLASS_CACHE * sizeof *engine.names.rules_masks);
        }
    }
    if (obs_cfg.layer[0] != '\0') {
        if (obs_phase_rules_parse(obs_cfg.layer, true, &set->layer_rules, &err) != 0) {
            layer_rule_words(err.what, sizeof err.what);
            report_bad_rule("OBS_LAYER", obs_cfg.layer, &err, "the layers are found automatically");
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_LAYER column=%zu layers=auto", err.column);
        } else {
            set->have_layer_rule = set->layer_rules.count > 0;
        }
    }
    if (obs_ranges_init(obs_cfg.nvtx_domain)) {
        set->ranges_on = true;
        engine.ranges.step_handles = map_zeroed(STEP_HANDLES * sizeof *engine.ranges.step_handles);
        engine.ranges.iter_handles = map_zeroed(STEP_HANDLES * sizeof *engine.ranges.iter_handles);
        for (i = 1; i < sizeof fixed_names / sizeof fixed_names[0]; i++)
            engine.ranges.fixed_handles[i] = obs_range_handle(fixed_names[i], fixed_colors[i]);
        if (obs_cfg.nvtx_launch) {
            engine.names.launch_handles = map_zeroed(CLASS_CACHE * sizeof *engine.names.launch_handles);
            set->launch_ranges = engine.names.launch_handles != NULL;
        }
    }
    pthread_atfork(NULL, NULL, names_fork_child);
    OBS_DEBUG_LOG(PHASES, 1, "set-up mode=%s patterns=%u step_patterns=%u gen_gap_ms=%u live_ranges=%s nvtx_launch=%d",
                  set->mode == OBS_PHASES_RULES ? "rules" : "auto", set->rules.count, set->step_rules.count,
                  obs_cfg.gen_gap_ms, set->ranges_on ? "on" : "off (no NVTX tool or roctx loaded)",
                  set->launch_ranges);
    atomic_store(&obs_phase_on, 1);
}

bool obs_phase_engine_init(void)
{
    pthread_once(&engine.once, setup);
    return atomic_load(&obs_phase_on) == 1;
}

enum obs_phase_mode obs_phase_engine_mode(void)
{
    return engine.set.mode;
}
