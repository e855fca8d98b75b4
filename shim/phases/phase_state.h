/* What the phase engine's files share (private to shim/phases/): the
 * process-wide state, the per-thread state both modes keep, the name
 * classes, the logical state's moves and the decision log's macros. The
 * files, by responsibility (docs/architecture.md, "The phase engine"):
 *   phase_engine.c      the entry points: a recorded call's before and
 *                       after, a thread's end, set-up; dispatch by event
 *   phase_signals.c     what each call says: the API table, the names'
 *                       classes (embedding lookups, KV names, norms)
 *   phase_forwards.c    the structure model (automatic mode): forwards,
 *                       prompts, chunks, steps, generations, serving
 *                       iterations, from the signals
 *   phase_learn.c       shape (a): the step unit of a loop that never copies
 *   phase_rules_mode.c  OBS_PHASES / OBS_STEP rules applied per call
 *   layer_track.c/.h    the layer tracker: a phase instance's launches,
 *                       the layer finder run on them, live LAYER/k
 *   phase_emit.c        ranges and records: PHASE, RELABEL, range names
 *   phase_decision_log.c  the decision log's lines (OBS_DEBUG=phases)
 *   phase_params.h      every threshold, with the case it came from */
#ifndef OBS_PHASE_STATE_H
#define OBS_PHASE_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "layer_finder.h"
#include "phase_ids.h"
#include "phase_machine.h"
#include "phase_params.h"
#include "phase_rules.h"
#include "record/record.h"

#pragma GCC visibility push(hidden)

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
    struct obs_phase_rules iteration_rules; /* OBS_ITERATION: each launch it matches opens a serving loop's next
                                              * ITERATION/k */
    bool have_iteration_rule;
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
    _Atomic uint32_t family_of[CLASS_CACHE]; /* a hash of the base name (name_family), 0 = not yet */
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

/* The one process-wide struct (phase_engine.c defines it). */
struct phase_engine {
    pthread_once_t once;
    struct engine_settings set;
    struct name_caches names;
    struct range_names ranges;
    pthread_key_t thread_key; /* per-thread state, freed at thread exit */
};
extern struct phase_engine obs_engine;

/* ---- name classes: computed once per name id -------------------------------------------- */

#define CLASS_KNOWN 0x80u
#define CLASS_PHASE_MASK 0x03u
#define CLASS_STEP 0x04u       /* OBS_STEP matches */
#define CLASS_KV_DEFAULT 0x08u /* automatic mode: a KV_GATHER name */
#define CLASS_ITERATION 0x08u  /* rules (the bit automatic mode uses for CLASS_KV_DEFAULT): OBS_ITERATION matches */
#define CLASS_SIZED 0x10u      /* rules: the phase depends on the launch's size */
#define CLASS_ITER 0x20u       /* rules: an `iter:glob` selector's glob matches the name */
#define CLASS_NORM 0x40u       /* its base name says "norm" (any case), or with OBS_LAYER: the glob matches it:
                                  where a layer begins (layer_finder.c) */
#define CLASS_EMBED 0x10u      /* automatic mode (the bit rules use for CLASS_SIZED): an embedding lookup, the
                                  first kernel of a model's forward (embedding_globs) */
#define CLASS_GATHER 0x20u     /* automatic mode (the bit rules use for CLASS_ITER): a generic gather, which may
                                  begin a generation's first forward only (gather_names) */

static const char *const phase_names[] = {"none", "PREFILL", "DECODE", "KV_GATHER"}; /* by enum obs_phase_id */

/* The class of a name id the first time (phase_signals.c), once per id. */
uint8_t classify_slow(uint32_t id);

/* A kernel's family: its base name (the same op built for another vector
 * width or alignment, vectorized_elementwise_kernel<8, F> and <2, F>, is
 * one), as a hash computed with its class; the id itself where none is
 * cached. Off the launch path. */
static inline uint32_t name_family(uint32_t id)
{
    uint32_t f = id < CLASS_CACHE ? atomic_load_explicit(&obs_engine.names.family_of[id], memory_order_relaxed) : 0;
    return f != 0 ? f : id;
}

static inline uint8_t class_of(uint32_t id)
{
    uint8_t cls;
    if (obs_unlikely(id == 0))
        return CLASS_KNOWN;
    if (obs_unlikely(id >= CLASS_CACHE))
        return classify_slow(id);
    cls = atomic_load_explicit(&obs_engine.names.class_of[id], memory_order_relaxed);
    if (obs_unlikely(cls == 0)) {
        cls = classify_slow(id);
        atomic_store_explicit(&obs_engine.names.class_of[id], cls, memory_order_relaxed);
    }
    return cls;
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
#define ROLE_CACHE 65536u

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
    struct logic fwd_before; /* the logic as the current forward began, before its decision */
    struct logic captured_before;  /* the captured forward's: where the calls before its replay belong */
    uint64_t capture_end_index;    /* the first record after its graph's instantiation */
    bool serving;            /* its forwards are a serving loop's iterations (for good) */
    bool serving_new_gen;    /* an idle gap: the next forward begins a new generation at ITERATION/0 */
    uint32_t single_run;        /* generations in a row of one forward, fed from the host, that read it back */
    uint64_t single_max_threads; /* the largest of their forwards' first launches */
    uint32_t fwd_opener;     /* the lookup the current forward began with */
    uint32_t fwd_launches;   /* launches since the current forward began */
    uint32_t fwd_min[2];     /* the fewest launches a whole forward had, by kind (0 prompt, 1 decode step): 0 none yet */
    bool fwd_read;           /* a read from the device since the current forward began */
    bool fwd_delimited;      /* a host delimiter since it began */
    uint32_t fwd_read_at;    /* the last read's position: launches of the forward before it */
    uint32_t fwd_delim_at;   /* the last delimiter's position, the same way */
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
    /* the bytes copied in since the current forward's output read (its token; its stop flag in a thread that reads
     * no token) or its beginning: what the host fed the next forward, whatever it launched on the way
     * (torch.compile's first call compiles between its input copy and the forward: compile-time launches end the
     * window above, not this) */
    uint64_t prep_htod;
    /* the same stretch: its first launch (its record index, UINT64_MAX: none yet), and the time and the thread's
     * CPU time at the read that began it (a long stretch the thread was busy through: the host compiled the
     * forward that ends it, prep_joins_step) */
    uint64_t prep_launch_index;
    uint64_t prep_from_t, prep_from_cpu;
    /* the forward running (until the next one begins: then the one that just ended) began with a graph
     * launch; prev_graph_first: the one before it (graph-replay-stopped compares it) */
    bool prev_graph_first, graph_first;
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
    uint32_t iter_after_bytes; /* the [bytes] selectors those copies and memsets met (obs_phase_rules_transfer_bytes) */
    bool iter_launched;   /* this iteration has had a launch */
    bool unread_launches; /* the iteration before had launches and read nothing (a sync, then the read) */
    bool iter_read;       /* this iteration read from the device */
    bool iter_token;      /* this iteration read a token */
    bool gen_token_read;  /* the current generation has read its token */
    uint8_t gen_forwards; /* OBS_STEP launches of the current generation, up to 2 (iter:until:forward) */
    uint8_t unselected_cls; /* an OBS_STEP launch in a selected PREFILL iteration: its class by its patterns */
    bool ever_token_read; /* the thread has: steps then open after token reads */
    bool after_token;     /* a token read completed and no launch since */
    bool step_armed;      /* a token read completed since the current step opened: OBS_STEP may open the next */
    bool iter_stepped;    /* an OBS_STEP launch opened a step in this iteration */
    bool copied_in;       /* the thread has copied host to device */
    bool read_back;       /* it has read from the device after a launch since its first labelled launch */
    uint8_t marks;        /* RULES_MARK_*: what the next stored launch begins, for its record index */
    uint64_t first_index; /* the thread's first labelled launch (a warm-up's labels come off from there) */
    uint64_t iter_index;  /* the first launch of a decode iteration no OBS_STEP launch opened, or UINT64_MAX */
    uint64_t missed_first, missed_end; /* such an iteration that read a token: no step unless the step goes on */
    bool gap_pending;     /* OBS_ITERATION: an idle gap came since the last iteration began (the next begins a
                           * generation) */
    /* the step an OBS_STEP launch opened last: its kernel and the logic before it; a graph instantiated from
     * that kernel on (its forward captured: it ran nothing) gives the calls between the instantiation and its
     * first launch (the fill of its inputs) that label back (rules_graph_instantiated) */
    uint32_t step_opener;
    struct logic step_before;
    bool captured;
    struct logic captured_before;
    uint64_t capture_end_index;
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
    uint32_t same_run;              /* LEARNING: history's last entries of its last name, back to back */
    uint32_t run[UNIT_MAX + 1];     /* LEARNING: periodic stretch per period */
};

/* A thread's phase state: what both modes keep, then the mode's own part
 * (obs_engine.set.mode says which; it never changes once set up). */
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
    /* the first delimiter after the thread's last launch: its time and the thread's CPU time then (an idle gap
     * is one the thread spent blocked, not busy: idle_gap() in phase_forwards.c) */
    uint64_t quiet_from_t, quiet_from_cpu;
    uint64_t held_end_t;   /* a PREFILL kept open past a delimiter: its end, if it ends there */
    union {
        struct rules_state rules;         /* OBS_PHASES_RULES */
        struct auto_state automatic;      /* OBS_PHASES_AUTO */
    };
};


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

#define LOG_LAUNCH_DECISION(l, what, because, name)            \
    do {                                                       \
        if (obs_debug_on(OBS_DBG_PHASES, 2))                   \
            log_launch_decision((l), (what), (because), (name)); \
    } while (0)

__attribute__((cold, format(printf, 4, 5))) void log_decision(const struct logic *l, const char *what,
                                                             const char *because, const char *fmt, ...);
/* A launch's decision in rules mode or learned shape (a): out of line and
 * not variadic, so that the launch path around it stays as it was. */
__attribute__((noinline, cold)) void log_launch_decision(const struct logic *l, const char *what, const char *because,
                                                         uint32_t name);

static inline uint64_t launch_threads(const struct obs_rec_call *r)
{
    return (uint64_t)r->u.grid.x * r->u.grid.y * r->u.grid.z * r->block_x * r->block_y * r->block_z;
}

/* ---- the thread's state --------------------------------------------------------------- */


extern __thread struct phase_thread *phase_tls __attribute__((tls_model("initial-exec")));

/* A thread's first event: map its state (phase_engine.c). Out of line, so
 * that the inlined fast path below stays a TLS load and a test. */
__attribute__((noinline, cold)) struct phase_thread *thread_state_slow(void);

static inline struct phase_thread *thread_state(void)
{
    struct phase_thread *p = phase_tls;
    if (obs_likely(p != NULL))
        return p;
    return thread_state_slow();
}

void *map_zeroed(size_t bytes);

/* ---- phase_signals.c ------------------------------------------------------------------ */

void build_api_table(void);
void base_name_of(uint32_t id, char *out, size_t outlen);
uint32_t launch_handle(uint32_t id);

/* ---- phase_emit.c: ranges and records -------------------------------------------------- */

void write_phase(uint8_t event, const struct range *r, uint64_t first, uint64_t last);
void move_to(struct phase_thread *p, const struct range *want, unsigned n);
unsigned wanted(const struct logic *l, bool kv, bool steady_graph, struct range *out);
unsigned wanted_with_layer(const struct logic *l, bool kv, bool steady_graph, uint32_t layer1, struct range *out);
bool same_range(const struct range *a, const struct range *b);
void layer_switch(struct phase_thread *p, uint32_t layer1);
void unlabel_span(uint64_t first, uint64_t end);

/* Whether the thread ran for at least a 1/IDLE_GAP_CPU_SHARE of the time
 * since from_t, when its CPU time was from_cpu (wall, cpu: the two spans):
 * a gap it was busy through is its own work, not idle (phase_forwards.c). */
bool thread_busy_since(uint64_t now, uint64_t from_t, uint64_t from_cpu, uint64_t *wall, uint64_t *cpu);
void unlabel_since(uint64_t first);
void relabel_since(uint64_t first, const struct range *r);
/* The first replay of a forward captured into a graph (automatic mode and
 * OBS_STEP rules): the calls since the graph's instantiation (from first:
 * the fill of its inputs) come before the forward it runs, and take, in
 * the trace, the label before the captured forward's decision (before),
 * when it was in the same generation's PREFILL or a decode step. */
void capture_fill(const struct logic *l, const struct logic *before, uint64_t first);
void range_names_setup(void);
void names_fork_child(void);

/* ---- layer_track.c (the structure's questions to the tracker: layer_track.h) ----------- */

struct layer_track;
size_t layer_track_bytes(void);
struct layer_track *layer_track_new(bool emit);
void layer_instance_anew(struct phase_thread *p);
void layer_forward_ended(struct phase_thread *p);
void layer_graph_nodes(struct phase_thread *p, struct obs_graph_walk *w);

/* ---- phase_rules_mode.c ---------------------------------------------------------------- */

uint8_t rules_class(struct rules_state *r, bool started, uint8_t cls, const struct obs_rec_call *rec, bool graph);
bool step_rules_mode(struct phase_thread *p, uint8_t cls, uint32_t name, bool graph, bool new_segment);
__attribute__((noinline)) void on_classified_transfer(struct phase_thread *p, uint8_t phase, unsigned after_bit);
__attribute__((noinline)) void rules_copy(struct phase_thread *p, unsigned dir, uint64_t bytes);
__attribute__((noinline, cold)) void rules_not_a_step(struct phase_thread *p);
__attribute__((noinline, cold)) void rules_last_step_ends(struct phase_thread *p);
bool rules_iteration(struct phase_thread *p, uint8_t cls, uint32_t name, bool new_segment);
void rules_graph_instantiated(struct phase_thread *p, const struct obs_graph_walk *w);
void rules_step_launch(struct phase_thread *p, const struct logic *before, uint8_t cls, uint32_t name, bool graph);
void rules_delimiter(struct phase_thread *p, uint64_t now);
void rules_launch_stored(struct rules_state *r, const struct obs_hooked_call *c);

/* ---- phase_learn.c: shape (a) ---------------------------------------------------------- */

void free_history(struct auto_state *a);
bool step_learned(struct logic *l, uint8_t role, uint32_t name, bool graph, bool live);
void learn_unit(struct phase_thread *p, uint32_t unit_start, uint32_t unit_len);
void learn_online(struct phase_thread *p);
void segment_ends(struct auto_state *a);

static inline uint8_t role_of(const struct auto_state *a, uint32_t name)
{
    return name < ROLE_CACHE && a->roles != NULL ? a->roles[name] : ROLE_UNKNOWN;
}

/* ---- phase_forwards.c: the structure model --------------------------------------------- */

__attribute__((noinline)) void on_auto_copy(struct phase_thread *p, unsigned dir, uint64_t bytes);
__attribute__((noinline)) void on_auto_memset(struct phase_thread *p, uint64_t bytes);
void auto_delimiter(struct phase_thread *p, uint64_t now, bool sync);
uint64_t last_step_ends(struct logic *l, struct phase_thread *p, uint64_t end, bool at_forward);
void auto_graph_instantiated(struct phase_thread *p, const struct obs_graph_walk *w);

#pragma GCC visibility pop

#endif
