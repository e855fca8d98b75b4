/* The recorder: one record per intercepted call, stored by the calling
 * thread straight into the trace file, through a window of it the thread
 * has mapped (MAP_SHARED): what a thread has stored is in the file's pages
 * at once, so it is kept when the process dies, SIGKILL included.
 *
 * Hot path (obs_call_begin / obs_call_started / obs_call_finish, inline):
 * a state check, two clock reads, a 48-byte store into the thread's window
 * (its first 8 bytes, which hold the kind, last, with a release store: a
 * slot is in the file whole or reads as kind 0, "not written") and the
 * fill count (the only counter: the calls are what it counts, less the
 * records of other kinds, which come from slow paths). No locks, no allocation, no getenv, no formatting, no
 * read-modify-write atomics. Everything else (first call of a thread, a
 * full window, no window to be had) is in recorder.c.
 *
 * Per-thread state is split in two: struct obs_tls (tiny, initial-exec TLS:
 * re-entry depth (the guard, obs_guard_enter), sample counter, the buffer
 * pointer) and struct obs_tbuf (its own anonymous page: what the recorder
 * keeps of the thread, the counters, and at its end the window's record
 * slots, mapped from the file right after that page so that they are at a
 * fixed offset from it). Buffers are in a registry so that the exit and
 * signal paths can close every thread's window; a pthread key destructor
 * closes a thread's window when the thread exits.
 *
 * A wrapper does:
 *     if (obs_guard_held())                    // nested (wrapper.h)
 *         return real(args);
 *     if (!obs_call_begin_outermost(&call))    // not recording
 *         return real(args);
 *     call.rec = describe(args);               // stream, grid, bytes ...
 *     obs_call_started(&call, OBS_API_x);
 *     status = real(args);
 *     obs_call_finish(&call, status);
 *     ...                                      // the phase engine's part after the call
 *     obs_call_done(&call);                    // a sampled call's cost
 *     return status;
 */
#ifndef OBS_RECORDER_H
#define OBS_RECORDER_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "common/common.h"
#include "output.h" /* OBS_SAMPLE_PERIOD */
#include "trace/trace.h"

/* Process-wide state, checked first by every wrapper. */
enum obs_state {
    OBS_STATE_UNINIT = 0,  /* constructor not run yet: wrappers run init */
    OBS_STATE_RECORDING,   /* normal operation */
    OBS_STATE_DISABLED,    /* OBS_ENABLE=0, or no usable output: pass-through */
    OBS_STATE_FINISHED     /* exit or a fatal signal has written the trace */
};
extern _Atomic int obs_state;


/* The last slots of each window hold the SELF_COST and LOST records (one
 * per reason) written when the window is closed (full, the thread's exit,
 * the process's end): records stop at room, before them. */
#define OBS_TBUF_TAIL_RECORDS OBS_LOST_REASONS

struct obs_tbuf {
    struct obs_tbuf *next;  /* registry (under the output lock) */
    uint32_t tid;
    uint32_t capacity;      /* record slots of the window mapped at recs (0: none) */
    uint32_t room;          /* capacity - OBS_TBUF_TAIL_RECORDS: a new window when reached; 0 with none */
    /* Where the hot path stops storing: room, or 0 (no window; the store
     * gate closed, obs_recorder_gate_set_locked: every call takes the slow
     * path). Written under the output lock (by whoever closes the gate),
     * read by the owner without it. */
    _Atomic uint32_t limit;
    _Atomic uint32_t used;  /* slots stored (by the owner only) */
    uint64_t first_index;   /* per-thread index of recs[0] */
    uint64_t window_at;     /* file offset of recs[0] */
    size_t window_bytes;    /* mapped at recs, from the file (0: none) */
    uint32_t pages;         /* the window's size in pages: doubles up to max_pages */
    uint32_t max_pages;     /* OBS_BUFFER_RECORDS' window */
    uint32_t retry_in;      /* no window: calls until the next try */
    void *region;           /* this struct's page and the largest window, for munmap */
    size_t region_bytes;
    /* CALL records made = stored_before + used - others: the hot path
     * counts nothing but `used`. stored_before: slots stored in the
     * thread's closed windows (by the owner, under the lock); others: the
     * records of other kinds among them (owner, relaxed). */
    uint64_t stored_before;
    _Atomic uint64_t others;
    /* Written by the owner with relaxed stores, read by whoever closes its window. */
    _Atomic uint64_t sampled_calls; /* calls whose cost was measured */
    _Atomic uint64_t sampled_ns;    /* their summed cost inside the shim, slow paths taken out */
    _Atomic uint64_t slow_ns;       /* time in slow paths, each measured whole: windows, GPU events
                                     * resolved, and the one-time work below */
    _Atomic uint64_t once_ns;       /* of it, one-time work: the thread's set-up (the process's first: the
                                     * trace file and the kernel names registered so far), first uses
                                     * (obs_call_note_slow: a name's class, a step's range name) */
    /* The store gate closed: the calls not stored (each took its index),
     * and the last of them, for obs_call_index; where the run of indexes
     * with no call stored began (skipping: since a call was left out with
     * no window; the owner's). */
    _Atomic uint64_t skipped;
    uint64_t skipped_t_begin, skipped_index;
    uint64_t skip_from;
    bool skipping;
    /* Lost records by reason (under the lock): made, and already reported. */
    uint64_t lost[OBS_LOST_REASONS], lost_reported[OBS_LOST_REASONS];
    uint64_t lost_t_first[OBS_LOST_REASONS], lost_t_last[OBS_LOST_REASONS];
    union obs_record recs[] __attribute__((aligned(64)));
};

/* Store r into slot: all but its first 8 bytes, then those (the kind) with
 * a release store. A slot's bytes are zero until then, so whoever reads
 * the file (after SIGKILL, or while the program runs) sees it whole or of
 * kind 0. */
static inline void obs_record_commit(union obs_record *slot, const void *r)
{
    uint64_t head;
    memcpy(&slot->words[1], (const char *)r + sizeof head, OBS_RECORD_SIZE - sizeof head);
    memcpy(&head, r, sizeof head);
    __atomic_store_n(&slot->words[0], head, __ATOMIC_RELEASE);
}

/* What every recorded call reads first, in the first of its two cache
 * lines; the rest is for slow paths. */
struct obs_tls {
    struct obs_tbuf *buf;  /* NULL until the thread's first record */
    uint32_t depth;        /* hooked calls in progress on this thread */
    uint32_t call_counter; /* for sampling */
    uint32_t tid;          /* cached gettid(), 0 = not yet */
    uint32_t device;       /* current device (cudaSetDevice), for records */
    uint64_t t_slow;       /* when a one-time slow path began before the real call, else 0 */
    /* the thread's last stream and its id (obs_stream_id): a framework launches on one stream mostly, and
     * the stream map's lines are then not touched */
    uintptr_t stream_handle;
    uint32_t stream_id;
    uint64_t next_index;   /* per-thread index to continue from after a detach */
    uint64_t slow_in_call; /* sampled calls: slow-path time measured whole inside its sampled parts */
    uint64_t slow_pending; /* slow-path time measured before the thread had a buffer */
    uint64_t once_pending; /* of it, one-time work */
};
extern __thread struct obs_tls obs_tls __attribute__((tls_model("initial-exec")));

/* The re-entry guard. While a thread holds it, the hooked calls it makes
 * pass straight through (obs_call_begin says no): the shim's own work
 * around an application's call, at start-up and at exit is never recorded,
 * and a runtime call made inside a recorded one is recorded once. It
 * carries the application's errno: obs_guard_leave puts back the value
 * obs_guard_enter saw, or the one obs_guard_keep_errno took (what the real
 * call left). Guards nest. Only these functions write obs_tls.depth. */
struct obs_guard {
    int errno_value; /* what errno is to be when the shim returns to the app */
};

static inline void obs_guard_enter(struct obs_guard *g)
{
    g->errno_value = errno;
    obs_tls.depth++;
}

static inline void obs_guard_leave(const struct obs_guard *g)
{
    obs_tls.depth--;
    errno = g->errno_value;
}

/* errno as it is now (the real call's) is what the app gets back. */
static inline void obs_guard_keep_errno(struct obs_guard *g)
{
    g->errno_value = errno;
}

/* errno back to the carried value (before the real call; after work done
 * past obs_guard_leave). */
static inline void obs_guard_restore_errno(const struct obs_guard *g)
{
    errno = g->errno_value;
}

/* True inside a hooked call or the shim's own work on this thread. */
static inline bool obs_guard_held(void)
{
    return obs_tls.depth != 0;
}

/* A thread that ends inside a recorded call (cancelled in it) never leaves
 * the guard: its exit path drops it. */
static inline void obs_guard_drop(void)
{
    obs_tls.depth = 0;
}

/* A call being recorded: the record is described (on the stack) before
 * the real call and stored after it, under the guard. */
struct obs_hooked_call {
    struct obs_rec_call rec;
    uint64_t t_entry;  /* sampled calls: wrapper entry time */
    struct obs_guard guard;
    bool sampled;
};

/* Slow paths (recorder.c). */
bool obs_call_begin_slow(struct obs_hooked_call *c);
void obs_call_store_slow(struct obs_hooked_call *c);
void obs_call_sample_begin(struct obs_hooked_call *c);
void obs_call_sample(const struct obs_hooked_call *c);
void obs_call_slow_began(struct obs_hooked_call *c);
void obs_call_slow_forgotten(void);

/* Self cost (docs/shim.md, "Self cost"): the 2nd call of a thread and every
 * OBS_SAMPLE_PERIOD-th after it are timed from the wrapper's entry to its
 * exit (obs_call_done), the real call taken out, and so are the slow paths
 * met inside them (each slow path is timed whole, on every call that takes
 * it, and counted once: obs_slow_add). */
static inline void obs_call_setup(struct obs_hooked_call *c, struct obs_tls *t)
{
    obs_guard_enter(&c->guard);
    c->sampled = (++t->call_counter % OBS_SAMPLE_PERIOD) == 2; /* the 2nd call, then every period */
    if (obs_unlikely(c->sampled))
        obs_call_sample_begin(c); /* out of line: the wrapper's path stays as small as it was */
}

/* True: this call is to be recorded (describe it in c->rec, then
 * obs_call_started). False: pass it through untouched (shim not recording,
 * not started yet, or a hooked call made from inside another one). errno is
 * as on entry. */
static inline bool obs_call_begin(struct obs_hooked_call *c)
{
    struct obs_tls *t = &obs_tls;
    if (obs_unlikely(atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING) ||
        obs_unlikely(obs_guard_held()))
        return obs_call_begin_slow(c);
    obs_call_setup(c, t);
    return true;
}

/* obs_call_begin where the caller passed a nested call through already
 * (the wrappers, wrapper.h: cudart's driver calls inside a recorded call
 * leave at their first test, none of the slow paths' code touched). */
static inline bool obs_call_begin_outermost(struct obs_hooked_call *c)
{
    if (obs_unlikely(atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING))
        return obs_call_begin_slow(c);
    obs_call_setup(c, &obs_tls);
    return true;
}

/* Just before the real call: the record's type and api, the host begin
 * time; errno back to the app's. */
static inline void obs_call_started(struct obs_hooked_call *c, uint16_t api)
{
    c->rec.type = OBS_REC_CALL;
    c->rec.api = api;
    obs_guard_restore_errno(&c->guard);
    if (obs_unlikely(obs_tls.t_slow != 0))
        obs_call_slow_began(c); /* the call begins where the slow path began */
    else
        c->rec.t_begin = obs_now_ns();
}

/* A one-time slow path (a thread's first call, a kernel name seen for the
 * first time) that runs before the real call: the call's begin time is
 * taken here, so that the app's timeline (a prompt's TTFT) does not start
 * late by the shim's own set-up; the work counts in the call's time. */
static inline void obs_call_note_slow(void)
{
    if (obs_tls.t_slow == 0)
        obs_tls.t_slow = obs_now_ns();
}

/* Forget a slow path noted after the real call (it belongs to no call's
 * time; its time counts in the self cost). */
static inline void obs_call_forget_slow(void)
{
    if (obs_unlikely(obs_tls.t_slow != 0))
        obs_call_slow_forgotten();
}

/* Store rec in the thread's window when there is room. */
static inline bool obs_tbuf_append(struct obs_tbuf *b, const struct obs_rec_call *rec)
{
    uint32_t used;
    if (obs_unlikely(b == NULL))
        return false;
    used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (obs_unlikely(used >= atomic_load_explicit(&b->limit, memory_order_relaxed)))
        return false;
    obs_record_commit(&b->recs[used], rec);
    atomic_store_explicit(&b->used, used + 1, memory_order_relaxed);
    return true;
}

/* Just after the real call, with its end time already taken (GPU timing
 * records an event between the two): status, store. errno stays as it is
 * on entry (the real call's). */
static inline void obs_call_finish_at(struct obs_hooked_call *c, int32_t status, uint64_t t_end)
{
    uint64_t dur = t_end - c->rec.t_begin;
    struct obs_tls *t = &obs_tls;

    obs_guard_keep_errno(&c->guard);
    c->rec.status = status;
    if (obs_unlikely(dur > UINT32_MAX)) {
        c->rec.flags |= OBS_CALL_DUR_US;
        dur = dur / 1000 > UINT32_MAX ? UINT32_MAX : dur / 1000;
    }
    c->rec.t_dur = (uint32_t)dur;
    if (obs_unlikely(!obs_tbuf_append(t->buf, &c->rec)))
        obs_call_store_slow(c);
    obs_guard_leave(&c->guard);
}

/* Just after the real call: end time, status, store. errno stays as the
 * real call left it. */
static inline void obs_call_finish(struct obs_hooked_call *c, int32_t status)
{
    obs_call_finish_at(c, status, obs_now_ns());
}

/* The wrapper's last act, after the phase engine's part after the call: a
 * sampled call's cost is taken here. */
static inline void obs_call_done(const struct obs_hooked_call *c)
{
    if (obs_unlikely(c->sampled))
        obs_call_sample(c);
}

/* The per-thread index the calling thread's next record will have
 * (UINT64_MAX before its first). */
static inline uint64_t obs_thread_next_index(void)
{
    struct obs_tbuf *b = obs_tls.buf;
    if (b == NULL)
        return UINT64_MAX;
    return b->first_index + atomic_load_explicit(&b->used, memory_order_relaxed);
}

/* After obs_call_finish: the per-thread index of the CALL record it stored
 * (GPU_SPAN records name it), or UINT64_MAX when it was not stored. */
static inline uint64_t obs_call_last_index(const struct obs_hooked_call *c)
{
    struct obs_tbuf *b = obs_tls.buf;
    uint32_t used;
    if (b == NULL)
        return UINT64_MAX;
    used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (used == 0 || b->recs[used - 1].type != OBS_REC_CALL || b->recs[used - 1].call.t_begin != c->rec.t_begin)
        return UINT64_MAX;
    return b->first_index + used - 1;
}

/* After obs_call_finish: the call's per-thread index, whether it was
 * stored or left out by the store gate (which gives such a call its index
 * all the same); UINT64_MAX when it was lost. For what marks a place among
 * the thread's records (the phase engine's spans), where
 * obs_call_last_index is for what needs the record (its GPU time). */
static inline uint64_t obs_call_index(const struct obs_hooked_call *c)
{
    struct obs_tbuf *b = obs_tls.buf;
    uint64_t index = obs_call_last_index(c);
    if (obs_likely(index != UINT64_MAX) || b == NULL)
        return index;
    return b->skipped_t_begin != 0 && b->skipped_t_begin == c->rec.t_begin ? b->skipped_index : UINT64_MAX;
}

/* Append a non-CALL record (STREAM, GPU_SPAN ...) to the calling thread's
 * buffer, from a slow path: inside a recorded call (depth 1), or GPU event
 * resolution (which holds the depth guard itself). Counted as lost when it
 * cannot be kept. */
void obs_recorder_append(const union obs_record *r);

/* Time the shim spent on this thread outside any recorded call (resolving
 * GPU events): counted in its SELF_COST like its window switches. */
void obs_recorder_add_shim_ns(uint64_t ns);

/* A slow path timed whole (a window switch): counted in the thread's
 * SELF_COST once, and taken out of the sampled call it happened in, if any.
 * Not inside a slow path noted with obs_call_note_slow (that one is timed
 * whole from its start). once: one-time work (a thread's set-up), which the
 * summary gives apart from the per-call figure. */
void obs_slow_add(uint64_t ns, bool once);

/* The calling thread's id (cached). */
uint32_t obs_thread_id(void);

/* Lifecycle (intercept/init.c). */
void obs_recorder_init(void);
/* fn runs on each thread's exit before its buffer is written (GPU time
 * resolves the thread's pending spans into it). Set once at start-up. */
void obs_recorder_set_thread_exit_hook(void (*fn)(void));
/* fn runs, on the calling thread, after each PHASE record it appends, with
 * the record's per-thread index (UINT64_MAX: not kept): GPU time per phase
 * range (OBS_GPU_TIME=steps) follows the live ranges' BEGIN and END. Set
 * once at start-up. */
void obs_recorder_set_phase_hook(void (*fn)(const struct obs_rec_phase *r, uint64_t index));
/* The store gate, for OBS_RECORD=window (docs/capture.md). With it set
 * up, a CALL record is stored only while the gate is open. A call made
 * while it is closed is not stored but takes its per-thread index all the
 * same, so that the thread's records keep their order and every index
 * means one record (the thread's chunks have a gap there:
 * docs/trace-format.md, "Per-thread index"); it counts in the thread's
 * SELF_COST (the shim wrapped it, its cost was sampled) and in the META
 * line record_window_outside_calls (written at each closing of the gate
 * and at the end), never as lost. Records of other kinds are stored but
 * for labels of nothing (below). The launch path is the same code:
 * closing the gate sets every thread's limit to 0, so that its calls take
 * the slow path, which leaves them out (the first one ends the thread's
 * window there; records of other kinds are written alone, a chunk each,
 * until a call is stored again; a LAYER record, or a PHASE RELABEL, that
 * labels only indexes of that run, calls left out, is not written: it
 * would label nothing in the trace). Set up once at start-up, before any
 * record: the gate starts closed. */
void obs_recorder_gate_init(void);
/* Under the output lock: open or close the gate. */
void obs_recorder_gate_set_locked(bool open);
/* Close every thread's window (its SELF_COST and LOST records into its
 * last slots; then the window is taken out of the file: a thread still
 * running stores into memory from there on, so the file no longer
 * changes), mark the trace ended (META "end=<ending>": "exit", "_exit",
 * "SIGSEGV" ...) and close it; from_signal: only async-signal-safe work (no
 * allocation, no demangling, no formatting). Returns true when a trace file
 * was open. A trace with no end mark was left by a process that died
 * before the shim could close it (SIGKILL), or is still being written. */
bool obs_recorder_finish(bool from_signal, const char *ending);
void obs_recorder_fork_prepare(void);
void obs_recorder_fork_parent(void);
void obs_recorder_fork_child(void);

#endif
