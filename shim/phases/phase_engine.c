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
#include "runtimes/real_symbols.h"
#include "phase_rules.h"
#include "ranges.h"

OBS_HIDDEN _Atomic int obs_phase_on;

/* ---- the engine's process-wide state: one struct ------------------------------------------ */

enum api_event { EV_OTHER = 0, EV_LAUNCH, EV_GRAPH, EV_COPY, EV_COPY_SYNC, EV_MEMSET, EV_HOST_SYNC };

#define CLASS_CACHE 65536u   /* name ids with a cached class (and mask, launch handle) */
#define STEP_HANDLES 65536u  /* DECODE/STEP_k with a cached live handle */
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

/* Range names: handles for the live ranges, strings for the trace. */
struct range_names {
    uint32_t fixed_handles[OBS_PHASE_STEP_NAME_BASE];
    _Atomic uint32_t *step_handles;   /* mmap'ed at set-up when a sink is active */
    _Atomic uint32_t fixed_written;   /* 0 or 1: PREFILL .. DECODE/STEADY are in the file */
    _Atomic uint32_t steps_written;   /* DECODE/STEP_0 .. STEP_{n-1} are in the file */
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

static const char *const phase_names[] = {"none", "PREFILL", "DECODE", "KV_GATHER"}; /* by enum obs_phase_id */

/* Automatic mode's KV_GATHER names: kernels whose base name says they read
 * or write the KV cache (gathers, cache writes such as vLLM's
 * reshape_and_cache, decode attention over a paged or blocked cache such
 * as vLLM's paged_attention and TensorRT-LLM's masked_multihead_attention). */
static const char *const kv_globs[] = {"*gather*", "*Gather*", "*GATHER*", "*kv*", "*KV*", "*Kv*", "*cache*", "*Cache*",
                                       "*paged_attention*", "*PagedAttention*", "*multihead_attention*"};

static uint8_t classify_name(const char *name)
{
    uint8_t cls = CLASS_KNOWN;
    unsigned i;
    const struct engine_settings *set = &engine.set;
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
        OBS_DEBUG_LOG(PHASES, 2, "name id=%u base=%s mangled=%s kv-glob=%s", id, base,
                      obs_kernel_name_mangled(id) != NULL ? obs_kernel_name_mangled(id) : "?",
                      cls & CLASS_KV_DEFAULT ? "yes" : "no");
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

static const char *const fixed_names[] = {"", "PREFILL", "DECODE", "KV_GATHER", "DECODE/STEADY"};
static const uint32_t fixed_colors[] = {0, 0xff1f77b4u, 0xff2ca02cu, 0xffd62728u, 0xff98df8au};
#define STEP_COLOR 0xff2ca02cu

static uint32_t step_handle(uint32_t step)
{
    _Atomic uint32_t *handles = engine.ranges.step_handles;
    uint32_t h = 0;
    char name[40];
    if (step < STEP_HANDLES && handles != NULL) {
        h = atomic_load_explicit(&handles[step], memory_order_relaxed);
        if (obs_likely(h != 0))
            return h;
    }
    obs_call_note_slow();
    snprintf(name, sizeof name, "DECODE/STEP_%u", step);
    h = obs_range_handle(name, STEP_COLOR);
    if (step < STEP_HANDLES && handles != NULL)
        atomic_store_explicit(&handles[step], h, memory_order_relaxed);
    return h;
}

static uint32_t handle_of(uint32_t name_id)
{
    if (name_id < OBS_PHASE_STEP_NAME_BASE)
        return engine.ranges.fixed_handles[name_id];
    return step_handle(name_id - OBS_PHASE_STEP_NAME_BASE);
}

/* RANGE_NAME strings go into the trace when a PHASE record first needs
 * them (once per name and file: a forked child writes them again). */
static void write_names_slow(uint32_t step_needed)
{
    struct range_names *rn = &engine.ranges;
    uint32_t tid = obs_thread_id(), k;
    char name[40];
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
        while (step_needed != OBS_NO_STEP && (k = atomic_load(&rn->steps_written)) <= step_needed) {
            char *batch = rn->step_batch; /* ours while the output lock is held */
            uint32_t used = 0, end = k + STEP_NAME_BATCH, n;
            if (end < k) /* wrapped: the last step numbers */
                end = OBS_NO_STEP;
            for (n = k; n < end; n++) {
                int len = snprintf(name, sizeof name, "DECODE/STEP_%u", n);
                uint32_t got = obs_string_entry_encode(batch + used, (uint32_t)sizeof rn->step_batch - used,
                                                       OBS_PHASE_STEP_NAME_BASE + n, OBS_STR_RANGE_NAME, name,
                                                       (uint32_t)len);
                if (got == 0)
                    break;
                used += got;
            }
            if (n == k || obs_output_write_strings_locked(batch, used) != 0)
                break;
            atomic_store(&rn->steps_written, n);
        }
    }
    obs_out_lock_release(&obs_out.lock);
}

static inline void ensure_names(uint32_t name_id)
{
    uint32_t step = name_id >= OBS_PHASE_STEP_NAME_BASE ? name_id - OBS_PHASE_STEP_NAME_BASE : OBS_NO_STEP;
    if (obs_unlikely(atomic_load_explicit(&engine.ranges.fixed_written, memory_order_relaxed) == 0) ||
        (step != OBS_NO_STEP &&
         obs_unlikely(step >= atomic_load_explicit(&engine.ranges.steps_written, memory_order_relaxed))))
        write_names_slow(step);
}

static void names_fork_child(void)
{
    atomic_store(&engine.ranges.fixed_written, 0);
    atomic_store(&engine.ranges.steps_written, 0);
}

/* ---- per-thread state ------------------------------------------------------------------ */

/* One open range (or one wanted). */
struct range {
    uint8_t phase;  /* enum obs_phase_id */
    uint32_t step;  /* OBS_NO_STEP or k */
    uint32_t name;  /* range name id */
    uint32_t gen;
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

#define GRAPH_TOKEN UINT32_MAX
#define HISTORY_CAP 16384u
#define UNIT_MAX 64u
#define UNIT_MIN_REPEATS 3u
#define UNIT_MIN 2u /* one kernel repeated is a loop, not a decode step */
#define ROLE_CACHE 65536u
#define PROMPT_RATIO 4u

enum role { ROLE_UNKNOWN = 0, ROLE_PREFIX, ROLE_OPENER, ROLE_UNIT };

struct history_entry {
    uint64_t index;   /* per-thread record index of the launch, UINT64_MAX: not kept */
    uint32_t token;   /* name id, GRAPH_TOKEN for graph launches */
    uint8_t new_segment;
    uint8_t reserved[3];
};

/* What the first launch of an iteration (the launches between two host
 * delimiters) looks like: what automatic mode's shape (b) decides on. */
struct iteration_start {
    uint64_t threads; /* grid x block of the first launch, 0 for a graph launch */
    uint64_t htod;    /* host-to-device bytes copied since the delimiter */
    uint64_t now;
    uint32_t name;    /* its kernel name id */
    bool graph;       /* it is a graph launch */
};

/* Shape (b)'s memory of a thread: what its prompts and decode steps looked
 * like, to tell the next iteration's kind. */
struct token_loop {
    bool copied;          /* the thread copied between host and device: a host-fed loop */
    bool iter_token_read; /* a device-to-host copy in the current iteration */
    bool gen_token_read;  /* the current generation has read its first token */
    bool ever_token_read; /* some generation of this thread read a token */
    uint64_t htod;        /* host-to-device bytes since the last delimiter, up to the first launch */
    bool prev_graph_first, graph_first; /* the previous / current iteration began with a graph launch */
    bool decode_seen;     /* the references below hold decode iterations */
    uint64_t decode_threads, decode_htod_max;
    uint64_t prompt_threads, prompt_htod;
    uint32_t prompt_name;
};

/* OBS_PHASES rules: the current iteration (launches since the last host delimiter). */
struct rules_state {
    bool iter_open;      /* it has had its first launch */
    uint8_t iter_phase;  /* the phase a selector gave it, or NONE */
    uint16_t iter_after; /* copies (bit per direction) and memsets since the delimiter */
};

/* Automatic mode: shape (b)'s token loop and shape (a)'s learning. */
struct auto_state {
    struct token_loop loop;
    uint64_t gen_first_index;   /* record index of the current generation's first launch */
    bool mark_gen_first;        /* the next stored launch starts a generation */
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
    struct range open[4];  /* the ranges open live, outermost first */
    unsigned depth;
    bool after_delimiter;  /* no launch since the last host delimiter */
    bool launch_range_open;
    uint64_t delimiter_t;
    uint64_t held_end_t;   /* a PREFILL kept open past a delimiter: its end, if it ends there */
    union {
        struct rules_state rules;         /* OBS_PHASES_RULES */
        struct auto_state automatic;      /* OBS_PHASES_AUTO */
    };
};

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
    if (engine.set.mode == OBS_PHASES_AUTO) {
        p->automatic.history = map_zeroed(HISTORY_CAP * sizeof *p->automatic.history);
        p->automatic.learn = p->automatic.history != NULL ? LEARNING : GAVE_UP;
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

static void push_range(struct phase_thread *p, const struct range *r)
{
    p->open[p->depth++] = *r;
    write_phase(OBS_PHASE_BEGIN, r, 0, 0);
    if (engine.set.ranges_on)
        obs_range_push(handle_of(r->name));
}

static void pop_range(struct phase_thread *p)
{
    const struct range *r = &p->open[--p->depth];
    /* a PREFILL held open past its last delimiter ends there in the trace */
    write_phase_at(OBS_PHASE_END, r, 0, 0, p->held_end_t != 0 ? p->held_end_t : obs_now_ns());
    if (engine.set.ranges_on)
        obs_range_pop();
}

static bool same_range(const struct range *a, const struct range *b)
{
    return a->name == b->name && a->gen == b->gen && a->step == b->step;
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
        out[n++] = (struct range){OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen};
        return n;
    }
    if (l->top != OBS_PHASE_DECODE)
        return 0;
    if (steady_graph || l->step == OBS_NO_STEP) {
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen};
        return n;
    }
    if (l->step > 0)
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen};
    out[n++] = (struct range){OBS_PHASE_DECODE, l->step, OBS_PHASE_STEP_NAME_BASE + l->step, l->gen};
    if (kv)
        out[n++] = (struct range){OBS_PHASE_KV_GATHER, l->step, OBS_PHASE_KV_GATHER, l->gen};
    return n;
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
static bool step_rules_mode(struct logic *l, uint8_t cls, uint32_t name, bool graph, bool new_segment)
{
    uint8_t phase = cls & CLASS_PHASE_MASK;
    if (graph)
        return l->top == OBS_PHASE_DECODE;
    if (phase == OBS_PHASE_PREFILL) {
        if (l->top != OBS_PHASE_PREFILL) {
            new_generation(l);
            LOG_LAUNCH_DECISION(l, "new-generation", "rule-PREFILL", name);
        }
    } else if (phase == OBS_PHASE_DECODE || phase == OBS_PHASE_KV_GATHER || (cls & CLASS_STEP)) {
        if (l->top != OBS_PHASE_DECODE) {
            enter_decode(l, name);
            LOG_LAUNCH_DECISION(l, "decode-starts", phase == OBS_PHASE_KV_GATHER ? "rule-KV_GATHER"
                                                    : phase == OBS_PHASE_DECODE  ? "rule-DECODE"
                                                                                 : "OBS_STEP",
                                name);
        } else if (engine.set.have_step_rule) {
            if (cls & CLASS_STEP) {
                l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
                l->opener = name;
                LOG_LAUNCH_DECISION(l, "step", "OBS_STEP", name);
            }
        } else if (new_segment || name == l->opener) {
            l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
            LOG_LAUNCH_DECISION(l, "step", new_segment ? "first-launch-after-delimiter" : "opener-kernel-again", name);
        }
    }
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
static uint8_t rules_class(struct rules_state *r, uint8_t cls, const struct obs_rec_call *rec, bool graph)
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
        r->iter_phase = rules->iter_mask == 0 ? OBS_PHASE_NONE
                        : obs_phase_rules_match_iteration(rules, cls & CLASS_ITER ? mask : 0,
                                                          graph ? NULL : &size, r->iter_after);
        if (r->iter_phase != OBS_PHASE_NONE)
            OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u iteration-selected phase=%s because=selector after=0x%x",
                          obs_thread_id(), obs_tls.call_counter, phase_names[r->iter_phase & 3],
                          (unsigned)r->iter_after);
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

/* Shape (b): does this iteration begin a new prompt? One signal is
 * enough: graph replay stopped and eager launches resumed; more bytes copied
 * in than before any decode step (any, where steps copy none); a first
 * launch 4x the size of the decode steps' first launch. Before any decode
 * step was seen (a prompt with no decode steps), a copy in of at least a
 * quarter of the last prompt's bytes. */
enum prompt_signal {
    PROMPT_NO = 0,
    PROMPT_GRAPH_REPLAY_STOPPED,
    PROMPT_COPY_IN_OVER_STEPS,
    PROMPT_FIRST_LAUNCH_OVER_STEPS,
    PROMPT_COPY_IN_LIKE_LAST_PROMPT,
    PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
};
static const char *const prompt_signal_names[] = {"none", "graph-replay-stopped", "copy-in-over-4x-steps",
                                                  "first-launch-4x-steps", "copy-in-quarter-of-last-prompt",
                                                  "first-kernel-quarter-of-last-prompt"};

static enum prompt_signal new_prompt(const struct token_loop *t, const struct iteration_start *s)
{
    if (t->prev_graph_first && !s->graph)
        return PROMPT_GRAPH_REPLAY_STOPPED;
    if (t->decode_seen) {
        if (s->htod > 0 && s->htod / PROMPT_RATIO >= t->decode_htod_max && s->htod > t->decode_htod_max)
            return PROMPT_COPY_IN_OVER_STEPS;
        return !s->graph && t->decode_threads > 0 && s->threads / PROMPT_RATIO >= t->decode_threads
                   ? PROMPT_FIRST_LAUNCH_OVER_STEPS
                   : PROMPT_NO;
    }
    if (t->prompt_htod > 0)
        return s->htod > 0 && s->htod * PROMPT_RATIO >= t->prompt_htod ? PROMPT_COPY_IN_LIKE_LAST_PROMPT : PROMPT_NO;
    return !s->graph && s->name == t->prompt_name && t->prompt_threads > 0 &&
                   s->threads * PROMPT_RATIO >= t->prompt_threads && s->threads > 0 && t->ever_token_read
               ? PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
               : PROMPT_NO;
}

/* Shape (b): an iteration after a prompt's iteration that read no token is
 * more of the prompt in a host-fed loop: a chunk of a chunked prefill in a
 * loop that reads its tokens; before any token was read, one that starts
 * like the prompt did and about as large, or the prompt's input arriving
 * after a warm-up that copied none (graph capture at start-up). A decode
 * step otherwise. */
enum chunk_signal { CHUNK_NO = 0, CHUNK_NO_TOKEN_READ_YET, CHUNK_LIKE_PROMPT_START };
static const char *const chunk_signal_names[] = {"none", "no-token-read-yet", "first-kernel-over-quarter-of-prompt"};

static enum chunk_signal prompt_continues(const struct token_loop *t, const struct iteration_start *s)
{
    if (!t->copied || t->gen_token_read)
        return CHUNK_NO;
    if (t->ever_token_read)
        return CHUNK_NO_TOKEN_READ_YET;
    return !s->graph && s->name == t->prompt_name && s->threads * PROMPT_RATIO > t->prompt_threads
               ? CHUNK_LIKE_PROMPT_START
               : CHUNK_NO;
}

static void remember_prompt(struct token_loop *t, const struct iteration_start *s)
{
    t->gen_token_read = false;
    t->prompt_threads = s->threads;
    t->prompt_htod = s->htod;
    t->prompt_name = s->name;
}

static void remember_step(struct token_loop *t, const struct iteration_start *s)
{
    t->decode_seen = true;
    if (s->htod > t->decode_htod_max)
        t->decode_htod_max = s->htod;
    if (!s->graph)
        t->decode_threads = s->threads;
}

/* Automatic mode, shape (b) (and the guess used while shape (a) is being
 * learned): the launches between two host delimiters are an iteration; a
 * generation's iterations up to the one that reads its first token are
 * PREFILL, each later one the next decode step, until a new prompt. */
/* Take the labels off the thread's records [first, now) in the trace: a
 * RELABEL of no phase (what looked like a generation was a warm-up). */
static void unlabel_since(uint64_t first)
{
    uint64_t next = obs_thread_next_index();
    struct range none = {OBS_PHASE_NONE, OBS_NO_STEP, 0, 0};
    if (first != UINT64_MAX && next != UINT64_MAX && next > first)
        write_phase(OBS_PHASE_RELABEL, &none, first, next - 1);
}

static void start_generation(struct logic *l, struct auto_state *a, const struct iteration_start *s)
{
    new_generation(l);
    remember_prompt(&a->loop, s);
    a->mark_gen_first = true;
}

static uint64_t launch_threads(const struct obs_rec_call *r)
{
    return (uint64_t)r->u.grid.x * r->u.grid.y * r->u.grid.z * r->block_x * r->block_y * r->block_z;
}

/* ---- the decision log, automatic mode's lines ------------------------------------------------ */

/* Level 3: what an iteration's first launch brings, before the decision. */
static __attribute__((cold)) void log_iteration(const struct phase_thread *p, const struct iteration_start *s)
{
    const struct token_loop *t = &p->automatic.loop;
    obs_debug_write(OBS_DBG_PHASES,
                    "tid=%u call=%u iteration name=%u threads=%llu htod=%llu graph=%d prev_graph=%d "
                    "token_read_gen=%d token_read_ever=%d copied=%d decode_seen=%d steps_threads=%llu "
                    "steps_htod_max=%llu prompt_name=%u prompt_threads=%llu prompt_htod=%llu top=%s",
                    obs_thread_id(), obs_tls.call_counter, s->name, (unsigned long long)s->threads,
                    (unsigned long long)s->htod, s->graph, t->graph_first, t->gen_token_read, t->ever_token_read,
                    t->copied, t->decode_seen, (unsigned long long)t->decode_threads,
                    (unsigned long long)t->decode_htod_max, t->prompt_name, (unsigned long long)t->prompt_threads,
                    (unsigned long long)t->prompt_htod, phase_names[p->logic.top & 3]);
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
    case PROMPT_FIRST_LAUNCH_OVER_STEPS:
        snprintf(out, len, " threads=%llu steps_threads=%llu", (unsigned long long)s->threads,
                 (unsigned long long)t->decode_threads);
        break;
    case PROMPT_COPY_IN_LIKE_LAST_PROMPT:
        snprintf(out, len, " htod=%llu prompt_htod=%llu", (unsigned long long)s->htod,
                 (unsigned long long)t->prompt_htod);
        break;
    case PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT:
        snprintf(out, len, " name=%u threads=%llu prompt_threads=%llu token_read_ever=1", s->name,
                 (unsigned long long)s->threads, (unsigned long long)t->prompt_threads);
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

static __attribute__((noinline)) void step_iterations(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    enum prompt_signal prompt;
    enum chunk_signal chunk;
    if (obs_debug_on(OBS_DBG_PHASES, 3))
        log_iteration(p, s);
    if (!l->started) {
        start_generation(l, a, s);
        LOG_DECISION(l, "new-generation", "first-iteration", " threads=%llu htod=%llu", (unsigned long long)s->threads,
                     (unsigned long long)s->htod);
    } else if (p->after_delimiter && s->now - p->delimiter_t > engine.set.gen_gap_ns) {
        start_generation(l, a, s);
        LOG_DECISION(l, "new-generation", "idle-gap", " gap_ms=%llu gen_gap_ms=%llu",
                     (unsigned long long)((s->now - p->delimiter_t) / 1000000u),
                     (unsigned long long)(engine.set.gen_gap_ns / 1000000u));
    } else if (l->top == OBS_PHASE_PREFILL && !t->ever_token_read && !t->gen_token_read && s->htod > 0 &&
               t->prompt_htod == 0) {
        /* The thread's first prompt arrives after iterations that copied
         * nothing in and read nothing back: those were a warm-up (graphs
         * captured at start-up). Not a generation: their labels come off
         * in the trace, and the prompt takes the generation's number. */
        uint64_t warm_up_from = a->gen_first_index;
        unlabel_since(a->gen_first_index);
        l->started = l->gen > 0;
        l->gen = l->gen > 0 ? l->gen - 1 : 0;
        start_generation(l, a, s);
        LOG_DECISION(l, "warm-up", "copy-in-after-iterations-with-no-copy",
                     " htod=%llu unlabelled_from_record=%llu; this iteration is the prompt",
                     (unsigned long long)s->htod, (unsigned long long)warm_up_from);
    } else if (l->top == OBS_PHASE_PREFILL && (chunk = prompt_continues(t, s)) != CHUNK_NO) {
        /* the prompt's next chunk */
        LOG_DECISION(l, "prefill-continues", chunk_signal_names[chunk], " threads=%llu prompt_threads=%llu",
                     (unsigned long long)s->threads, (unsigned long long)t->prompt_threads);
    } else if ((l->top == OBS_PHASE_PREFILL || l->top == OBS_PHASE_DECODE) &&
               (prompt = new_prompt(t, s)) != PROMPT_NO) {
        char numbers[192] = "";
        if (obs_debug_on(OBS_DBG_PHASES, 2)) /* before start_generation replaces what it compared */
            prompt_numbers(numbers, sizeof numbers, prompt, t, s);
        start_generation(l, a, s);
        LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
    } else if (l->top == OBS_PHASE_PREFILL) {
        enter_decode(l, 0);
        remember_step(t, s);
        LOG_DECISION(l, "decode-starts", "no-prompt-signal",
                     " threads=%llu prompt_threads=%llu htod=%llu prompt_htod=%llu graph=%d token_read=%d",
                     (unsigned long long)s->threads, (unsigned long long)t->prompt_threads,
                     (unsigned long long)s->htod, (unsigned long long)t->prompt_htod, s->graph, t->gen_token_read);
    } else if (l->top == OBS_PHASE_DECODE) {
        l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
        remember_step(t, s);
        LOG_DECISION(l, "step", "next-iteration", " threads=%llu htod=%llu graph=%d", (unsigned long long)s->threads,
                     (unsigned long long)s->htod, s->graph);
    } else {
        start_generation(l, a, s);
        LOG_DECISION(l, "new-generation", "no-phase-open", " threads=%llu", (unsigned long long)s->threads);
    }
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
    struct range run = {0, 0, 0, 0};
    uint64_t first = UINT64_MAX, last = 0;
    uint32_t i;

    for (i = 0; i < a->history_n; i++) {
        const struct history_entry *e = &a->history[i];
        bool graph = e->token == GRAPH_TOKEN;
        bool steady_graph = step_learned(&l, graph ? ROLE_UNKNOWN : role_of(a, e->token), e->token, graph, false);
        struct range want[4], label;
        unsigned n = wanted(&l, !graph && (class_of(e->token) & CLASS_KV_DEFAULT), steady_graph, want);
        if (e->index == UINT64_MAX)
            continue;
        if (n == 0)
            label = (struct range){OBS_PHASE_NONE, OBS_NO_STEP, 0, 0};
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
 * period whose stretch holds UNIT_MIN_REPEATS whole units is the unit. */
static void learn_online(struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    uint32_t i = a->history_n - 1, seg_i = i - a->segment_start, period, limit;
    uint32_t token = a->history[i].token;
    limit = seg_i < UNIT_MAX ? seg_i : UNIT_MAX;
    for (period = UNIT_MIN; period <= limit; period++) {
        if (token != GRAPH_TOKEN && a->history[i - period].token == token) {
            if (++a->run[period] >= period * (UNIT_MIN_REPEATS - 1) &&
                !single_kernel(a->history + i - period + 1, period)) {
                learn_unit(p, i - a->run[period] - period + 1, period);
                return;
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
 * first launch the token loop's; while learning it also feeds the history. */
static bool auto_launch(struct phase_thread *p, uint32_t name, const struct obs_rec_call *rec, bool graph,
                        bool new_segment)
{
    struct auto_state *a = &p->automatic;
    bool steady_graph = false;
    if (a->learn == LEARNED) {
        steady_graph = step_learned(&p->logic, role_of(a, name), name, graph, true);
    } else if (new_segment) {
        struct iteration_start s = {graph ? 0 : launch_threads(rec), a->loop.htod, obs_now_ns(), name, graph};
        a->loop.prev_graph_first = a->loop.graph_first;
        a->loop.graph_first = graph;
        step_iterations(&p->logic, p, &s);
    }
    if (a->learn == LEARNING) {
        struct history_entry *e = &a->history[a->history_n++];
        e->index = UINT64_MAX; /* filled in once the record is stored */
        e->token = name;
        e->new_segment = new_segment;
        learn_online(p); /* may switch this launch to the learned state */
    }
    return steady_graph;
}

static void on_launch(struct phase_thread *p, const struct obs_rec_call *rec, bool graph)
{
    uint32_t name = graph ? GRAPH_TOKEN : rec->name;
    uint8_t cls = graph ? CLASS_KNOWN : class_of(name);
    bool new_segment = p->after_delimiter || !p->logic.started;
    bool steady_graph, kv;
    struct range want[4];
    unsigned n;

    if (engine.set.mode == OBS_PHASES_RULES) {
        cls = rules_class(&p->rules, cls, rec, graph);
        graph = graph && p->rules.iter_phase == OBS_PHASE_NONE; /* a selected iteration's graph launch is one of its launches */
        steady_graph = step_rules_mode(&p->logic, cls, name, graph, new_segment);
        kv = (cls & CLASS_PHASE_MASK) == OBS_PHASE_KV_GATHER;
    } else {
        steady_graph = auto_launch(p, name, rec, graph, new_segment);
        kv = (cls & CLASS_KV_DEFAULT) != 0;
    }
    p->after_delimiter = false;
    n = wanted(&p->logic, kv && !graph && p->logic.top == OBS_PHASE_DECODE, steady_graph, want);
    move_to(p, want, n);
}

/* A copy or memset that rules name: it takes its phase (its iteration's,
 * inside an iteration a selector chose) without opening a step. Any copy
 * or memset counts for `iter:after:` selectors. */
static __attribute__((noinline)) void on_classified_transfer(struct phase_thread *p, uint8_t phase, unsigned after_bit)
{
    struct rules_state *r = &p->rules;
    struct range want[4];
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
        enter_decode(&p->logic, 0);
        LOG_DECISION(&p->logic, "decode-starts", "rule-names-this-copy-or-memset", " phase=%s", phase_names[phase & 3]);
    }
    p->after_delimiter = false;
    n = wanted(&p->logic, phase == OBS_PHASE_KV_GATHER, false, want);
    move_to(p, want, n);
}

/* Automatic mode: copies between host and device mark a host-fed loop
 * (no shape (a) for it), a copy in counts towards the next iteration's
 * input, a copy out is a token read. */
static __attribute__((noinline)) void on_auto_copy(struct phase_thread *p, unsigned dir, uint64_t bytes)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    if (dir == OBS_DIR_HTOD) {
        t->htod += bytes;
    } else if (dir == OBS_DIR_DTOH) {
        t->iter_token_read = true;
    } else {
        return;
    }
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u %s bytes=%llu htod=%llu", obs_thread_id(), obs_tls.call_counter,
                  dir == OBS_DIR_HTOD ? "copy-in" : "token-read", (unsigned long long)bytes,
                  (unsigned long long)t->htod);
    t->copied = true;
    if (a->learn == LEARNING) {
        a->learn = GAVE_UP;
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
    }
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
        if (engine.set.mode == OBS_PHASES_RULES)
            on_classified_transfer(p, engine.set.copy_class[dir % OBS_DIR_COUNT], 1u << (dir % OBS_DIR_COUNT));
        else
            on_auto_copy(p, dir, c->rec.u.bytes);
        break;
    case EV_MEMSET:
        if (engine.set.mode == OBS_PHASES_RULES)
            on_classified_transfer(p, engine.set.memset_class, OBS_AFTER_MEMSET);
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
    if (obs_unlikely(a->mark_gen_first)) {
        a->gen_first_index = obs_call_last_index(c);
        a->mark_gen_first = false;
    }
}

/* A host delimiter (a sync, or a synchronous copy from the device) ends
 * the iteration: the ranges end with it, except a prompt's PREFILL that
 * has read no token yet: it may go on (a chunk of a chunked prefill),
 * which the next launch tells. It stays open until then (one PREFILL range
 * per prompt in nsys, as in the trace); if it does not go on, its trace END
 * carries this delimiter's time. */
static __attribute__((noinline)) void on_delimiter(struct phase_thread *p, uint8_t ev, unsigned dir)
{
    uint64_t now = obs_now_ns();
    if (engine.set.mode == OBS_PHASES_AUTO) {
        struct auto_state *a = &p->automatic;
        bool prompt_may_go_on = a->learn != LEARNED && p->logic.top == OBS_PHASE_PREFILL && p->depth > 0 &&
                                !a->loop.gen_token_read && !a->loop.iter_token_read;
        if (!prompt_may_go_on)
            move_to(p, NULL, 0);
        else
            p->held_end_t = now;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter kind=%s token_read=%d ranges=%s", obs_thread_id(),
                      obs_tls.call_counter, ev == EV_HOST_SYNC ? "sync" : "read", a->loop.iter_token_read,
                      prompt_may_go_on ? "prefill-held-open" : "closed");
        if (a->loop.iter_token_read) {
            a->loop.gen_token_read = true;
            a->loop.ever_token_read = true;
        }
        a->loop.iter_token_read = false;
        a->loop.htod = 0;
        if (a->learn == LEARNING)
            segment_ends(a);
    } else {
        move_to(p, NULL, 0);
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter kind=%s ranges=closed", obs_thread_id(),
                      obs_tls.call_counter, ev == EV_HOST_SYNC ? "sync" : "read");
        p->rules.iter_open = false; /* a synchronous copy that delimits counts for the next iteration */
        p->rules.iter_after = ev == EV_COPY_SYNC ? (uint16_t)(1u << (dir % OBS_DIR_COUNT)) : 0;
    }
    p->after_delimiter = true;
    p->delimiter_t = now;
}

void obs_phase_after(const struct obs_hooked_call *c, uint16_t api, int32_t status)
{
    struct phase_thread *p = phase_tls;
    uint8_t ev = api < OBS_API_COUNT ? engine.set.api_event[api] : EV_OTHER;
    unsigned dir;
    int saved_errno;
    (void)status;
    if (ev == EV_OTHER || ev == EV_COPY || ev == EV_MEMSET)
        return;
    if (p == NULL)
        p = thread_state();
    if (p == NULL) {
        obs_call_forget_slow();
        return;
    }
    saved_errno = errno; /* the real call's, kept for the app */
    obs_tls.depth = 1;   /* our records are made outside any hooked call */
    if (p->launch_range_open) {
        obs_range_pop();
        p->launch_range_open = false;
    }
    if ((ev == EV_LAUNCH || ev == EV_GRAPH) && engine.set.mode == OBS_PHASES_AUTO)
        auto_launch_stored(&p->automatic, c);
    dir = c->rec.flags & OBS_CALL_DIR_MASK;
    if (ev == EV_HOST_SYNC || (ev == EV_COPY_SYNC && (dir == OBS_DIR_DTOH || dir == OBS_DIR_DEFAULT)))
        on_delimiter(p, ev, dir);
    obs_call_forget_slow(); /* slow paths taken after the real call belong to no call */
    obs_tls.depth = 0;
    errno = saved_errno;
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* One message for a bad rule: the text with a caret under the offending
 * character (a window of it when long), and what is used instead. */
static void report_bad_rule(const char *var, const char *text, const struct obs_phase_rule_error *err)
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
    obs_log_warn("%s: %s at column %zu; automatic phases are used instead\n"
                 "obsshim:   %s%s\n"
                 "obsshim:   %*s^",
                 var, err->what, err->column, from > 0 ? "..." : "", shown, (int)(col - from + (from > 0 ? 3 : 0)),
                 "");
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
            report_bad_rule("OBS_PHASES", phases, &err);
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_PHASES column=%zu mode=auto", err.column);
        } else if (obs_phase_rules_parse(step, true, &set->step_rules, &err) != 0) {
            report_bad_rule("OBS_STEP", step, &err);
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
    if (obs_ranges_init(obs_cfg.nvtx_domain)) {
        set->ranges_on = true;
        engine.ranges.step_handles = map_zeroed(STEP_HANDLES * sizeof *engine.ranges.step_handles);
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
