/* GPU time per phase range: see gpu_time_steps.h.
 *
 * Per thread, one struct steps_thread (mmap'ed at the thread's first
 * PHASE record, pointed to from initial-exec TLS):
 *   - the mirror of its open ranges (at most STEPS_DEPTH tracked), each
 *     with the streams it used (a bit per stream slot) and its begin mark
 *     per stream;
 *   - its stream slots (at most STEPS_STREAMS): handle, device, the
 *     latest mark recorded there and whether work was enqueued since;
 *   - its marks: events with a reference count (held by a stream slot's
 *     latest mark, a range's begin, a queued pair's begin and end, the
 *     clock anchor of a device); one at zero goes back to its device's
 *     free list. Only the owner counts references, so only it recycles;
 *   - the queue of closed (range, stream) pairs: single producer (the
 *     owner), consumed under resolve_lock by the owner off the hot path or
 *     by the exit path; head and tail are plain release stores.
 *
 * Clock: a mark's device time is the elapsed time from the device's anchor
 * (gpu_clock.h's reference event at first, then the last mark resolved on
 * that device) added to the anchor's; computed once per mark (a mark often
 * ends one range and begins the next) and kept.
 *
 * The app's last error: as gpu_time.c keeps it. Each batch of our calls
 * (the marks of one boundary) peeks at it first (CUDA) and, when one of
 * our calls fails, restores it (success can be restored; CUDA: unless the
 * app had an unread error). errno: every runtime call of ours is made
 * under a guard, which keeps it. */
#include "gpu_time_steps.h"
#include "gpu_clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "record/record.h"

#define STEPS_STREAMS 8u     /* streams per thread whose ranges are timed */
#define STEPS_DEPTH 8u       /* open ranges tracked per thread (the engine nests 3) */
#define STEPS_MARKS 512u     /* marks (events) per thread */
#define STEPS_RING 1024u     /* closed (range, stream) pairs pending per thread (power of two) */
#define STEPS_RESOLVE_AT (STEPS_RING * 3u / 4u) /* the owner resolves when this many are pending */
#define STEPS_RESOLVE_BATCH 16u /* after a host sync, the owner resolves once this many are pending */
#define NO_MARK 0xffffu
#define NO_SLOT 0xffu
#define EXIT_WAIT_NS 1000000000ull /* process exit waits this long for pairs still running */
#define POLL_NS 100000L            /* between two queries while waiting */

/* ---- state ----------------------------------------------------------------------- */

struct mark {
    void *event;      /* NULL: never created */
    uint64_t time_ns; /* device time on the host time base, once resolved */
    uint16_t refs;
    uint16_t device;
    uint16_t next_free;
    uint8_t resolved;
    uint8_t broken; /* a query or elapsed time of ours failed on it: never reused */
};

struct stream_slot {
    const struct obs_gpu_backend *be;
    uintptr_t handle;
    uint32_t id;        /* stream id of CALL records */
    uint32_t mark_call; /* obs_tls.call_counter when mark was recorded */
    uint16_t mark;      /* latest mark recorded on it, NO_MARK */
    uint16_t device;
    bool dirty;         /* work enqueued by this thread since that mark */
    /* The split point of the open ranges' work here (see "Tails"): the
     * mark the stream stood at after a host sync (pre, held) and a mark
     * recorded before the first copy or memset after it (resume, held);
     * NO_MARK: none. */
    bool resume_launched;  /* a kernel or graph came after resume */
    uint16_t pre, resume;
    uint64_t mark_index;   /* obs_thread_next_index() when mark was recorded */
    uint64_t pre_index;    /* mark_index of pre: the stream's calls before it have lower indexes */
    uint64_t resume_index; /* obs_thread_next_index() before the resume call */
};

struct open_range {
    uint64_t begin_index; /* its BEGIN record's per-thread index (UINT64_MAX: not kept) */
    uint32_t step, gen, name;
    uint16_t phase;
    uint16_t seen;        /* bit per stream slot: the range had work there */
    uint16_t begin[STEPS_STREAMS]; /* its begin mark per stream slot, NO_MARK: untimed */
    uint16_t cut[STEPS_STREAMS];   /* its end there when a RELABEL took its tail (held), else NO_MARK */
};

struct pending {
    uint64_t begin_index;
    uint32_t stream, step, gen, name;
    uint16_t phase, begin, end, reserved;
};

/* Counters; each written by one party at a time (no read-modify-write). */
struct steps_stats {
    _Atomic uint64_t pairs;       /* (range, stream) pairs queued */
    _Atomic uint64_t spans;       /* RANGE_SPAN records made */
    _Atomic uint64_t failed;      /* pairs whose query or elapsed time failed */
    _Atomic uint64_t marks;       /* events recorded */
    _Atomic uint64_t created;     /* events created */
    _Atomic uint64_t capturing;   /* not timed: the stream was capturing a graph */
    _Atomic uint64_t no_room;     /* not timed: no free mark or queue slot */
    _Atomic uint64_t our_errors;  /* not timed: one of our own runtime calls failed */
    _Atomic uint64_t streams;     /* not timed: calls on a thread's ninth stream and beyond */
    _Atomic uint64_t depth;       /* not timed: ranges nested deeper than STEPS_DEPTH */
    _Atomic uint64_t device;      /* not timed: device 16 and above, or not the current one */
    _Atomic uint64_t open_exit;   /* ranges still open on another live thread at process exit */
};

struct steps_thread {
    struct steps_thread *next; /* registry (registry_lock) */
    uint32_t tid;
    bool exited;               /* owner gone: the exit path resolves the rest */
    pthread_mutex_t resolve_lock;
    _Atomic uint64_t head;     /* pairs queued (owner) */
    _Atomic uint64_t tail;     /* pairs resolved or dropped (consumer) */
    struct steps_stats st;
    /* the owner's */
    unsigned depth;            /* ranges tracked in open[] */
    unsigned overflow;         /* open ranges deeper than STEPS_DEPTH */
    bool capturing;            /* the last mark failed because its stream was capturing a graph */
    unsigned hot_slot;         /* the slot of obs_steps_hot.stream1 */
    uint16_t cut_slots;        /* bit per stream slot: an open range has a cut there */
    uint32_t last_id;          /* hot-path cache: the last stream id seen and its slot */
    unsigned last_slot;
    unsigned nstreams;
    unsigned unused;           /* marks never created: [unused, STEPS_MARKS) */
    uint16_t free_head[OBS_GPU_MAX_DEVICES];
    struct open_range open[STEPS_DEPTH];
    struct stream_slot streams[STEPS_STREAMS];
    /* the consumer's (resolve_lock) */
    uint16_t anchor[OBS_GPU_MAX_DEVICES]; /* NO_MARK: the reference event */
    size_t map_bytes;
    struct mark marks[STEPS_MARKS];
    struct pending ring[STEPS_RING];
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct steps_thread *registry;
static struct steps_stats retired; /* counters of thread states freed (registry_lock) */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static atomic_bool closed; /* process exit resolved everything: no new marks */
static atomic_int warned_map;

static __thread struct steps_thread *steps_tls __attribute__((tls_model("initial-exec")));
OBS_HIDDEN __thread struct obs_steps_hot obs_steps_hot __attribute__((tls_model("initial-exec")));

/* The hot stream's dirty bit (set inline by obs_gpu_steps_fast) into its
 * slot, before anything reads or clears the slot's. */
static inline void hot_fold(struct steps_thread *th)
{
    if (obs_steps_hot.dirty) {
        obs_steps_hot.dirty = 0;
        if (obs_steps_hot.stream1 != 0 && th->hot_slot < th->nstreams)
            th->streams[th->hot_slot].dirty = true;
    }
}

/* No stream is hot: the next launch takes obs_steps_before. */
static inline void hot_clear(struct steps_thread *th)
{
    hot_fold(th);
    obs_steps_hot.stream1 = 0;
}

/* Per API: a host synchronisation (a sync other than a stream waiting for
 * an event), a synchronous copy. */
enum { API_HOST_SYNC = 1, API_SYNC_COPY = 2 };
static uint8_t api_flags[OBS_API_COUNT];

#define bump obs_gpu_bump

/* ---- one-time setup, fork -------------------------------------------------------- */

static void exit_handler(void);

static void fork_prepare(void)
{
    pthread_mutex_lock(&registry_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&registry_lock);
}

/* The child cannot use the parent's events: it forgets them and starts
 * afresh with the ranges it opens itself (ENDs of ranges opened in the
 * parent find nothing open here and are ignored). */
static void fork_child(void)
{
    pthread_mutex_init(&registry_lock, NULL);
    registry = NULL;
    memset(&retired, 0, sizeof retired);
    steps_tls = NULL;
    obs_steps_hot.stream1 = 0;
    obs_steps_hot.dirty = 0;
    atomic_store(&closed, false);
}

static void process_setup(void)
{
    static const struct {
        const char *name;
        unsigned kind;
    } apis[OBS_API_COUNT] = {
#define STEPS_API(id, name, kind, family) {name, OBS_KIND_##kind},
        OBS_API_LIST(STEPS_API)
#undef STEPS_API
    };
    unsigned i;
    for (i = 0; i < OBS_API_COUNT; i++) {
        if (apis[i].kind == OBS_KIND_SYNC && strstr(apis[i].name, "WaitEvent") == NULL)
            api_flags[i] = API_HOST_SYNC;
        else if (apis[i].kind == OBS_KIND_MEMCPY && strstr(apis[i].name, "Async") == NULL)
            api_flags[i] = API_SYNC_COPY;
    }
    if (atexit(exit_handler) != 0)
        obs_log_warn("OBS_GPU_TIME=steps: atexit failed; GPU times still pending at exit are not resolved");
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The thread's first PHASE record. */
static struct steps_thread *thread_setup(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (sizeof(struct steps_thread) + page - 1) / page * page;
    struct steps_thread *th;
    unsigned d;

    pthread_once(&setup_once, process_setup);
    th = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (th == MAP_FAILED) {
        obs_log_warn_once(&warned_map, "OBS_GPU_TIME=steps: cannot map %zu bytes (%s); this thread's ranges get "
                          "no GPU time", bytes, strerror(errno));
        return NULL;
    }
    th->tid = obs_thread_id();
    th->map_bytes = bytes;
    th->last_slot = NO_SLOT;
    for (d = 0; d < OBS_GPU_MAX_DEVICES; d++) {
        th->free_head[d] = NO_MARK;
        th->anchor[d] = NO_MARK;
    }
    pthread_mutex_init(&th->resolve_lock, NULL);
    pthread_mutex_lock(&registry_lock);
    th->next = registry;
    registry = th;
    pthread_mutex_unlock(&registry_lock);
    steps_tls = th;
    OBS_DEBUG_LOG(GPUTIME, 1, "steps: on for thread %u", th->tid);
    return th;
}

/* ---- marks ----------------------------------------------------------------------- */

/* Owner only (or the exit path for a thread that has exited). */
static void mark_release(struct steps_thread *th, uint16_t m)
{
    struct mark *k;
    if (m == NO_MARK)
        return;
    k = &th->marks[m];
    if (k->refs == 0 || --k->refs != 0 || k->broken)
        return;
    k->resolved = 0;
    k->next_free = th->free_head[k->device];
    th->free_head[k->device] = m;
}

static void mark_hold(struct steps_thread *th, uint16_t m)
{
    if (m != NO_MARK)
        th->marks[m].refs++;
}

static unsigned resolve_locked(struct steps_thread *th, bool own, uint64_t deadline);
static void resolve_own(struct steps_thread *th);

/* A free mark of device d (its event created if needed), or NO_MARK. */
static uint16_t mark_get(struct steps_thread *th, const struct obs_gpu_backend *be, unsigned d, int prev_error)
{
    uint16_t m = th->free_head[d];
    if (m == NO_MARK && th->unused >= STEPS_MARKS) {
        resolve_own(th); /* queued pairs hold marks */
        m = th->free_head[d];
    }
    if (m != NO_MARK) {
        th->free_head[d] = th->marks[m].next_free;
        return m;
    }
    if (th->unused < STEPS_MARKS) {
        struct mark *k = &th->marks[th->unused];
        int st = be->event_create(&k->event);
        if (st != 0) {
            k->event = NULL;
            obs_gpu_restore_last_error(be, be->every_call_sets_last_error ? 0 : prev_error);
            bump(&th->st.our_errors, 1);
            return NO_MARK;
        }
        k->device = (uint16_t)d;
        bump(&th->st.created, 1);
        return (uint16_t)th->unused++;
    }
    bump(&th->st.no_room, 1);
    return NO_MARK;
}

/* Record a new mark on stream slot s: it becomes the slot's latest mark
 * (held by it) and the slot is clean. NO_MARK when it cannot be (counted).
 * Runtime calls: under the caller's guard; prev_error as peeked. */
static uint16_t mark_record(struct steps_thread *th, struct stream_slot *s, int prev_error)
{
    const struct obs_gpu_backend *be = s->be;
    bool capturing = false;
    uint16_t m;
    int st;

    if (atomic_load_explicit(&closed, memory_order_relaxed))
        return NO_MARK;
    if (s->device >= OBS_GPU_MAX_DEVICES || s->device != obs_tls.device) {
        bump(&th->st.device, 1);
        return NO_MARK;
    }
    if (!obs_gpu_clock_ready(be, s->device, prev_error, "steps")) {
        bump(&th->st.our_errors, 1);
        return NO_MARK;
    }
    /* An event recorded on a capturing stream would become a node of the app's graph. */
    st = be->stream_capturing(s->handle, &capturing);
    if (st != 0 || capturing) {
        if (st != 0) {
            bump(&th->st.our_errors, 1);
            obs_gpu_restore_last_error(be, be->every_call_sets_last_error ? 0 : prev_error);
        } else {
            bump(&th->st.capturing, 1);
            th->capturing = true;
        }
        return NO_MARK;
    }
    m = mark_get(th, be, s->device, prev_error);
    if (m == NO_MARK)
        return NO_MARK;
    if ((st = be->event_record(th->marks[m].event, s->handle)) != 0) {
        th->marks[m].refs = 1;
        mark_release(th, m);
        bump(&th->st.our_errors, 1);
        obs_gpu_restore_last_error(be, be->every_call_sets_last_error ? 0 : prev_error);
        return NO_MARK;
    }
    bump(&th->st.marks, 1);
    th->marks[m].refs = 1; /* the slot's */
    th->marks[m].resolved = 0;
    mark_release(th, s->mark);
    s->mark = m;
    s->mark_call = obs_tls.call_counter;
    s->mark_index = obs_thread_next_index();
    s->dirty = false;
    return m;
}

/* The app's last error before a batch of our calls (CUDA keeps failures
 * until read; HIP: every call sets it, the app's own call comes after). */
static int app_last_error(const struct obs_gpu_backend *be)
{
    return be->every_call_sets_last_error ? 0 : be->peek_last_error();
}

/* ---- stream slots ------------------------------------------------------------------ */

/* The slot of stream id, made on first sight; NO_SLOT when not timed. */
static __attribute__((noinline)) unsigned stream_slot(struct steps_thread *th, uint32_t id,
                                                       const struct obs_gpu_backend *be)
{
    unsigned i;
    for (i = 0; i < th->nstreams; i++)
        if (th->streams[i].id == id && th->streams[i].be->family == be->family)
            break;
    if (i == th->nstreams) {
        struct stream_slot *s;
        if (i >= STEPS_STREAMS || (id == 0 && obs_streams_saturated())) {
            bump(&th->st.streams, 1);
            return NO_SLOT;
        }
        s = &th->streams[th->nstreams++];
        memset(s, 0, sizeof *s);
        s->be = be;
        s->id = id;
        s->handle = obs_stream_handle(id);
        s->device = (uint16_t)obs_tls.device;
        s->mark = NO_MARK;
        s->pre = s->resume = NO_MARK;
        OBS_DEBUG_LOG(GPUTIME, 2, "steps: thread %u times ranges on stream %u (device %u)", th->tid, id,
                      (unsigned)s->device);
    }
    th->last_id = id;
    th->last_slot = i;
    return i;
}

/* ---- ranges ------------------------------------------------------------------------ */

/* The first timed call of the open ranges on slot i that have none there
 * yet: their begin mark, shared with a close made in this same call. */
static __attribute__((noinline)) void begin_marks(struct steps_thread *th, unsigned i)
{
    struct stream_slot *s = &th->streams[i];
    uint16_t m = NO_MARK;
    unsigned r, bit = 1u << i;
    struct obs_guard guard;

    obs_guard_enter(&guard);
    th->capturing = false;
    if (!s->dirty && s->mark != NO_MARK && s->mark_call == obs_tls.call_counter)
        m = s->mark; /* recorded just now, by a range that closed at this call */
    else
        m = mark_record(th, s, app_last_error(s->be));
    obs_guard_leave(&guard);
    if (m == NO_MARK && th->capturing)
        return; /* the call's work goes into the app's graph: the next call on the stream tries again */
    for (r = th->depth; r-- > 0 && !(th->open[r].seen & bit);) {
        th->open[r].seen |= (uint16_t)bit;
        th->open[r].begin[i] = m;
        mark_hold(th, m);
    }
}

/* A closed range's pair on one stream, into the queue. */
static void queue_pair(struct steps_thread *th, const struct open_range *r, const struct stream_slot *s,
                       uint16_t begin, uint16_t end)
{
    uint64_t head = atomic_load_explicit(&th->head, memory_order_relaxed);
    struct pending *p;

    if (head - atomic_load_explicit(&th->tail, memory_order_acquire) >= STEPS_RING) {
        resolve_own(th);
        if (head - atomic_load_explicit(&th->tail, memory_order_acquire) >= STEPS_RING) {
            bump(&th->st.no_room, 1);
            mark_release(th, begin);
            return;
        }
    }
    p = &th->ring[head % STEPS_RING];
    p->begin_index = r->begin_index;
    p->stream = s->id;
    p->step = r->step;
    p->gen = r->gen;
    p->name = r->name;
    p->phase = r->phase;
    p->begin = begin; /* the range's hold passes to the pair */
    p->end = end;
    mark_hold(th, end);
    atomic_store_explicit(&th->head, head + 1, memory_order_release);
    bump(&th->st.pairs, 1);
}

/* The innermost tracked range ends: a pair per stream it used. */
static void range_end(struct steps_thread *th)
{
    struct open_range *r = &th->open[--th->depth];
    unsigned i;
    int prev_error = 0;
    const struct obs_gpu_backend *peeked = NULL;
    struct obs_guard guard;

    obs_guard_enter(&guard);
    for (i = 0; i < th->nstreams; i++) {
        struct stream_slot *s = &th->streams[i];
        uint16_t end;
        uint16_t cut = r->cut[i];
        r->cut[i] = NO_MARK;
        if (!(r->seen & (1u << i)) || r->begin[i] == NO_MARK) {
            mark_release(th, cut);
            continue;
        }
        if (cut != NO_MARK) {
            end = cut; /* a RELABEL took the work after it (the pair holds it now) */
        } else if (s->dirty) {
            if (peeked != s->be) {
                peeked = s->be;
                prev_error = app_last_error(s->be);
            }
            end = mark_record(th, s, prev_error);
        } else {
            end = s->mark;
        }
        if (end == NO_MARK) {
            mark_release(th, r->begin[i]);
            continue;
        }
        if (r->begin_index == UINT64_MAX) { /* its BEGIN is not in the trace: nothing to name */
            mark_release(th, r->begin[i]);
            mark_release(th, cut);
            continue;
        }
        queue_pair(th, r, s, r->begin[i], end);
        mark_release(th, cut);
    }
    obs_guard_leave(&guard);
    r->seen = 0;
    if (atomic_load_explicit(&th->head, memory_order_relaxed) -
            atomic_load_explicit(&th->tail, memory_order_relaxed) >= STEPS_RESOLVE_AT)
        resolve_own(th);
}

/* Marks on every stream with work since its last mark: before a host
 * sync (its work then ends where the sync waited for it), after a
 * synchronous copy. */
static void marks_on_dirty(struct steps_thread *th, unsigned only_slot)
{
    const struct obs_gpu_backend *peeked = NULL;
    int prev_error = 0;
    unsigned i;
    struct obs_guard guard;

    hot_fold(th);
    obs_guard_enter(&guard);
    for (i = 0; i < th->nstreams; i++) {
        struct stream_slot *s = &th->streams[i];
        if (!s->dirty || (only_slot != NO_SLOT && i != only_slot))
            continue;
        if (peeked != s->be) {
            peeked = s->be;
            prev_error = app_last_error(s->be);
        }
        mark_record(th, s, prev_error);
    }
    obs_guard_leave(&guard);
}

/* A synchronous copy is a host sync too, and on the legacy stream it is
 * ordered after every blocking stream's work and before any later: the
 * other streams' work up to here ends where it is (their marks now, before
 * the copy); the copy's own stream gets its mark after it. */
static __attribute__((noinline)) void marks_before_sync_copy(struct steps_thread *th, uint32_t copy_stream)
{
    unsigned i;
    for (i = 0; i < th->nstreams; i++)
        if (th->streams[i].dirty && th->streams[i].id != copy_stream)
            marks_on_dirty(th, i);
}

/* ---- tails: a range's work after its last host sync that the trace relabels ---------- */

static void resume_drop(struct steps_thread *th, struct stream_slot *s)
{
    mark_release(th, s->pre);
    mark_release(th, s->resume);
    s->pre = s->resume = NO_MARK;
}

static void resume_drop_all(struct steps_thread *th)
{
    unsigned i;
    for (i = 0; i < th->nstreams; i++)
        if (th->streams[i].resume != NO_MARK)
            resume_drop(th, &th->streams[i]);
}

/* Before a copy or memset on slot i, where the open ranges already have
 * work: if the stream stands at a mark (nothing enqueued since the host
 * sync that made it), a mark before the call, so that a RELABEL of the
 * calls from here on (a new prompt's input copies, made after the last
 * step's token read and before the launch that ends the step) can take
 * them out of the open ranges exactly. The first such mark holds over
 * later copies, memsets and syncs, until a launch comes. */
static __attribute__((noinline)) void resume_mark(struct steps_thread *th, unsigned i)
{
    struct stream_slot *s = &th->streams[i];
    struct obs_guard guard;
    uint16_t pre = s->mark, m;
    uint64_t pre_index = s->mark_index;

    if (s->dirty || pre == NO_MARK || (s->resume != NO_MARK && !s->resume_launched))
        return;
    resume_drop(th, s);
    mark_hold(th, pre);
    obs_guard_enter(&guard);
    m = mark_record(th, s, app_last_error(s->be));
    obs_guard_leave(&guard);
    if (m == NO_MARK) {
        mark_release(th, pre);
        return;
    }
    mark_hold(th, m);
    s->pre = pre;
    s->pre_index = pre_index;
    s->resume = m;
    s->resume_index = obs_thread_next_index();
    s->resume_launched = false;
}

/* A RELABEL record. Where the calls it labels on a stream are exactly the
 * open ranges' work there since the stream's resume mark (it labels from
 * a record at or after the host sync's mark, at or before the resume,
 * through itself; no launch there since), the open ranges end at the
 * sync's mark (their cut) and the RELABEL gets the pair (resume, the
 * stream's mark now), named by the RELABEL record's index: each span then
 * holds the work of calls of one final label. Elsewhere the open ranges
 * keep the work; readers count such a span for its calls' final labels. */
static void relabel_tails(struct steps_thread *th, const struct obs_rec_phase *rec, uint64_t index)
{
    struct open_range rl;
    struct obs_guard guard;
    unsigned i, k;

    if (th->depth == 0 || rec->last_index + 1 < index)
        return;
    memset(&rl, 0, sizeof rl);
    rl.begin_index = index;
    rl.phase = rec->phase;
    rl.step = rec->step;
    rl.gen = rec->generation;
    rl.name = rec->name;
    obs_guard_enter(&guard);
    for (i = 0; i < th->nstreams; i++) {
        struct stream_slot *s = &th->streams[i];
        uint16_t end;
        if (s->resume == NO_MARK || s->resume_launched || rec->first_index < s->pre_index ||
            rec->first_index > s->resume_index || !(th->open[th->depth - 1].seen & (1u << i)))
            continue;
        end = s->dirty ? mark_record(th, s, app_last_error(s->be)) : s->mark;
        if (end == NO_MARK) {
            resume_drop(th, s);
            continue;
        }
        for (k = 0; k < th->depth; k++) {
            struct open_range *r = &th->open[k];
            if (!(r->seen & (1u << i)) || r->begin[i] == NO_MARK || r->cut[i] != NO_MARK)
                continue;
            r->cut[i] = s->pre;
            mark_hold(th, s->pre);
        }
        th->cut_slots |= (uint16_t)(1u << i);
        if (rec->phase != 0) { /* a RELABEL of no phase takes the labels off: no span */
            queue_pair(th, &rl, s, s->resume, end); /* the slot's hold on resume passes to the pair */
            s->resume = NO_MARK;
        }
        resume_drop(th, s);
        OBS_DEBUG_LOG(GPUTIME, 2, "steps: thread %u: RELABEL at record %llu takes the open ranges' tail on stream %u",
                      th->tid, (unsigned long long)index, s->id);
    }
    obs_guard_leave(&guard);
}

/* Work on slot i after a cut: the open ranges keep it (their span ends
 * where the stream is when they close). */
static __attribute__((noinline)) void cuts_drop(struct steps_thread *th, unsigned i)
{
    unsigned k;
    for (k = 0; k < th->depth; k++) {
        mark_release(th, th->open[k].cut[i]);
        th->open[k].cut[i] = NO_MARK;
    }
    th->cut_slots &= (uint16_t)~(1u << i);
}

void obs_steps_on_phase(const struct obs_rec_phase *rec, uint64_t index)
{
    struct steps_thread *th = steps_tls;

    if (atomic_load_explicit(&closed, memory_order_relaxed))
        return;
    if (th != NULL)
        hot_clear(th); /* the innermost range changes */
    if (rec->event == OBS_PHASE_BEGIN) {
        struct open_range *r;
        if (th == NULL && (th = thread_setup()) == NULL)
            return;
        if (th->depth >= STEPS_DEPTH) {
            th->overflow++;
            bump(&th->st.depth, 1);
            return;
        }
        r = &th->open[th->depth++];
        r->begin_index = index;
        r->phase = rec->phase;
        r->step = rec->step;
        r->gen = rec->generation;
        r->name = rec->name;
        r->seen = 0;
        memset(r->cut, 0xff, sizeof r->cut); /* NO_MARK */
        resume_drop_all(th);
        OBS_DEBUG_LOG(GPUTIME, 2, "steps: thread %u opens range %u (step %u gen %u) at record %llu", th->tid,
                      (unsigned)rec->name, (unsigned)rec->step, (unsigned)rec->generation,
                      (unsigned long long)index);
    } else if (rec->event == OBS_PHASE_END && th != NULL) {
        unsigned k, found = th->depth;
        if (th->overflow > 0) { /* the phase engine pops its innermost range first */
            th->overflow--;
            return;
        }
        /* As readers do: the innermost range of its phase and generation,
         * else of its phase, else the innermost; those inside it end too. */
        for (k = th->depth; k-- > 0 && found == th->depth;)
            if (th->open[k].phase == rec->phase && th->open[k].gen == rec->generation)
                found = k;
        for (k = th->depth; k-- > 0 && found == th->depth;)
            if (th->open[k].phase == rec->phase)
                found = k;
        if (found == th->depth && th->depth > 0)
            found = th->depth - 1;
        while (th->depth > found)
            range_end(th);
        resume_drop_all(th);
    } else if (rec->event == OBS_PHASE_RELABEL && th != NULL) {
        relabel_tails(th, rec, index);
    }
}

/* ---- the hot path ------------------------------------------------------------------- */

void obs_steps_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call,
                      uint16_t api)
{
    struct steps_thread *th = steps_tls;
    unsigned slot;
    uint32_t id;

    g->by_steps = true;
    if (th == NULL || th->depth == 0)
        return;
    hot_fold(th);
    if (api < OBS_API_COUNT && (api_flags[api] & API_SYNC_COPY))
        marks_before_sync_copy(th, call->rec.stream);
    if (obs_gpu_kind_is_timed(g->kind)) {
        id = call->rec.stream;
        slot = th->last_slot;
        if (id != th->last_id || slot == NO_SLOT || th->streams[slot].be->family != be->family) {
            slot = stream_slot(th, id, be);
            if (slot == NO_SLOT)
                return;
        }
        if (th->cut_slots & (1u << slot))
            cuts_drop(th, slot);
        if (!(th->open[th->depth - 1].seen & (1u << slot))) {
            begin_marks(th, slot);
        } else if (g->kind == OBS_KIND_MEMCPY || g->kind == OBS_KIND_MEMSET) {
            resume_mark(th, slot);
            if (th->streams[slot].resume != NO_MARK && !th->streams[slot].resume_launched) {
                hot_clear(th); /* the next launch here comes by to say a launch followed */
                th->streams[slot].dirty = true;
                return;
            }
        } else if (th->streams[slot].resume != NO_MARK) {
            th->streams[slot].resume_launched = true;
        }
        th->streams[slot].dirty = true;
        if (th->open[th->depth - 1].seen & (1u << slot)) { /* the next launch here needs nothing more */
            th->hot_slot = slot;
            obs_steps_hot.stream1 = id + 1u;
        }
    } else if (api < OBS_API_COUNT && (api_flags[api] & API_HOST_SYNC)) {
        marks_on_dirty(th, NO_SLOT);
    }
}

void obs_steps_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status)
{
    struct steps_thread *th = steps_tls;
    uint16_t api = call->rec.api;

    obs_call_finish(call, status); /* leaves the call's guard, errno the real call's */
    if (th == NULL || status != 0 || api >= OBS_API_COUNT || !api_flags[api])
        return;
    if (api_flags[api] & API_SYNC_COPY) {
        if (th->depth > 0 && th->last_slot != NO_SLOT && th->last_id == call->rec.stream)
            marks_on_dirty(th, th->last_slot); /* the copy's end, the stream idle after it */
    } else if (atomic_load_explicit(&th->head, memory_order_relaxed) -
                   atomic_load_explicit(&th->tail, memory_order_relaxed) >=
               STEPS_RESOLVE_BATCH) {
        resolve_own(th); /* the app synchronised: its earlier work is likely complete */
    }
    (void)g;
}

/* ---- resolution ------------------------------------------------------------------ */

/* The device time of mark m, from the device's anchor; it becomes the
 * anchor (the next mark is one short step away). Under resolve_lock. */
static int mark_time(struct steps_thread *th, uint16_t m, const struct obs_gpu_backend *be, bool own)
{
    struct mark *k = &th->marks[m];
    uint16_t a = th->anchor[k->device];
    void *anchor_event;
    uint64_t anchor_ns;
    float ms;
    int64_t t;
    int st;

    if (k->resolved)
        return 0;
    if (a != NO_MARK) {
        anchor_event = th->marks[a].event;
        anchor_ns = th->marks[a].time_ns;
    } else if (!obs_gpu_clock_reference(be->family, k->device, &anchor_event, &anchor_ns)) {
        return -1; /* cannot happen: marks are recorded once it is ready */
    }
    if ((st = be->elapsed_ms(&ms, anchor_event, k->event)) != 0)
        return st;
    t = (int64_t)anchor_ns + obs_gpu_ms_to_ns(ms);
    k->time_ns = t > 0 ? (uint64_t)t : 0;
    k->resolved = 1;
    if (own) {
        mark_hold(th, m);
        mark_release(th, a);
    }
    th->anchor[k->device] = m;
    return 0;
}

static void emit_span(const struct steps_thread *th, const struct pending *p, uint64_t begin, uint64_t end)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.range_span.type = OBS_REC_RANGE_SPAN;
    r.range_span.phase = p->phase;
    r.range_span.tid = th->tid;
    r.range_span.begin_index = p->begin_index;
    r.range_span.gpu_begin = begin;
    r.range_span.gpu_end = end > begin ? end : begin;
    r.range_span.stream = p->stream;
    r.range_span.step = p->step;
    r.range_span.generation = p->gen;
    r.range_span.name = p->name;
    obs_recorder_append(&r);
}

/* The backend of a pending pair's stream. */
static const struct obs_gpu_backend *pair_backend(const struct steps_thread *th, const struct pending *p)
{
    unsigned i;
    for (i = 0; i < th->nstreams; i++)
        if (th->streams[i].id == p->stream && th->streams[i].device == th->marks[p->end].device)
            return th->streams[i].be;
    return th->nstreams ? th->streams[0].be : NULL;
}

/* Under th->resolve_lock: resolve pending pairs in order, up to the first
 * whose end mark has not completed (waiting for it until deadline, if
 * any). own: the caller counts references (the owner, or the exit path
 * for an exited thread). Returns how many of our calls did not succeed. */
static unsigned resolve_locked(struct steps_thread *th, bool own, uint64_t deadline)
{
    uint64_t tail = atomic_load_explicit(&th->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&th->head, memory_order_acquire);
    unsigned not_ok = 0;

    while (tail != head) {
        struct pending *p = &th->ring[tail % STEPS_RING];
        const struct obs_gpu_backend *be = pair_backend(th, p);
        int st = -1;

        /* No query first: an elapsed time to an event not yet complete says
         * "not ready" itself (both marks' times are kept once known). */
        if (be != NULL && (st = mark_time(th, p->begin, be, own)) == 0)
            st = mark_time(th, p->end, be, own);
        if (be != NULL && st == be->not_ready) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = POLL_NS};
            not_ok++;
            if (deadline == 0 || obs_now_ns() >= deadline)
                break;
            nanosleep(&pause, NULL);
            continue;
        }
        if (st != 0) {
            /* Events in an unknown state: never reused; the range reads as missing. */
            not_ok++;
            th->marks[p->begin].broken = 1;
            th->marks[p->end].broken = 1;
            bump(&th->st.failed, 1);
        } else {
            emit_span(th, p, th->marks[p->begin].time_ns, th->marks[p->end].time_ns);
            bump(&th->st.spans, 1);
        }
        if (own) {
            mark_release(th, p->begin);
            mark_release(th, p->end);
        }
        atomic_store_explicit(&th->tail, ++tail, memory_order_release);
    }
    return not_ok;
}

/* The owner, off the hot path: resolve what has completed. Never waits for
 * the exit path: when it holds the lock, this is skipped. */
static void resolve_own(struct steps_thread *th)
{
    uint64_t t0 = obs_now_ns();
    bool in_call = obs_guard_held(); /* then the call's own cost sample covers this */
    const struct obs_gpu_backend *be = th->nstreams ? th->streams[0].be : NULL;
    struct obs_guard guard;
    int prev_error;
    unsigned not_ok;

    if (be == NULL || atomic_load_explicit(&th->tail, memory_order_relaxed) ==
                          atomic_load_explicit(&th->head, memory_order_relaxed))
        return;
    /* With CUDA, an unread error of the app's must not be replaced by ours. */
    prev_error = app_last_error(be);
    if (prev_error != 0 || pthread_mutex_trylock(&th->resolve_lock) != 0)
        return;
    obs_guard_enter(&guard); /* nothing we call may be recorded */
    not_ok = resolve_locked(th, true, 0);
    if (not_ok != 0)
        obs_gpu_restore_last_error(be, 0);
    obs_guard_leave(&guard);
    pthread_mutex_unlock(&th->resolve_lock);
    if (!in_call)
        obs_recorder_add_shim_ns(obs_now_ns() - t0);
}

/* ---- thread and process exit ------------------------------------------------------------ */

static void stats_add(struct steps_stats *to, const struct steps_stats *from)
{
    bump(&to->pairs, atomic_load(&from->pairs));
    bump(&to->spans, atomic_load(&from->spans));
    bump(&to->failed, atomic_load(&from->failed));
    bump(&to->marks, atomic_load(&from->marks));
    bump(&to->created, atomic_load(&from->created));
    bump(&to->capturing, atomic_load(&from->capturing));
    bump(&to->no_room, atomic_load(&from->no_room));
    bump(&to->our_errors, atomic_load(&from->our_errors));
    bump(&to->streams, atomic_load(&from->streams));
    bump(&to->depth, atomic_load(&from->depth));
    bump(&to->device, atomic_load(&from->device));
    bump(&to->open_exit, atomic_load(&from->open_exit));
}

/* Under registry_lock and th->resolve_lock, th fully resolved: give its
 * events back to the runtime and free it. */
static void thread_free_locked(struct steps_thread *th)
{
    struct steps_thread **link;
    unsigned i;

    for (i = 0; i < th->unused; i++)
        if (th->marks[i].event != NULL && th->nstreams > 0)
            th->streams[0].be->event_destroy(th->marks[i].event);
    for (link = &registry; *link != NULL; link = &(*link)->next)
        if (*link == th) {
            *link = th->next;
            break;
        }
    stats_add(&retired, &th->st);
    pthread_mutex_unlock(&th->resolve_lock);
    pthread_mutex_destroy(&th->resolve_lock);
    munmap(th, th->map_bytes);
}

/* The thread's open ranges end now (it exits, or the process does). */
static void close_all(struct steps_thread *th)
{
    hot_clear(th);
    th->overflow = 0;
    while (th->depth > 0)
        range_end(th);
}

void obs_steps_thread_exit(void)
{
    struct steps_thread *th = steps_tls;
    struct obs_guard guard;

    if (th == NULL)
        return;
    obs_guard_enter(&guard);
    if (!atomic_load(&closed))
        close_all(th);
    hot_clear(th);
    steps_tls = NULL;
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&th->resolve_lock);
    resolve_locked(th, true, 0); /* the thread's last error no longer matters */
    if (atomic_load(&th->tail) == atomic_load(&th->head)) {
        thread_free_locked(th); /* unlocks th */
    } else {
        th->exited = true; /* what is still running is resolved at process exit */
        pthread_mutex_unlock(&th->resolve_lock);
    }
    pthread_mutex_unlock(&registry_lock);
    obs_guard_leave(&guard);
}

/* The totals, as a META chunk (readers take the last value of a key). */
static void write_meta(const struct steps_stats *s, uint64_t missing)
{
    char text[1024];
    int n = snprintf(
        text, sizeof text,
        "gpu_time_steps_pairs=%llu\ngpu_time_steps_spans=%llu\ngpu_time_steps_missing=%llu\n"
        "gpu_time_steps_marks=%llu\ngpu_time_steps_events_created=%llu\ngpu_time_steps_untimed_capturing=%llu\n"
        "gpu_time_steps_untimed_no_room=%llu\ngpu_time_steps_untimed_runtime_error=%llu\n"
        "gpu_time_steps_untimed_streams=%llu\ngpu_time_steps_untimed_depth=%llu\n"
        "gpu_time_steps_untimed_device=%llu\ngpu_time_steps_open_at_exit=%llu\ngpu_time_clock_error_ns=%llu\n",
        (unsigned long long)atomic_load(&s->pairs), (unsigned long long)atomic_load(&s->spans),
        (unsigned long long)missing, (unsigned long long)atomic_load(&s->marks),
        (unsigned long long)atomic_load(&s->created), (unsigned long long)atomic_load(&s->capturing),
        (unsigned long long)atomic_load(&s->no_room), (unsigned long long)atomic_load(&s->our_errors),
        (unsigned long long)atomic_load(&s->streams), (unsigned long long)atomic_load(&s->depth),
        (unsigned long long)atomic_load(&s->device), (unsigned long long)atomic_load(&s->open_exit),
        (unsigned long long)obs_gpu_clock_error_ns());
    if (n <= 0 || (size_t)n >= sizeof text)
        return;
    obs_out_lock_acquire(&obs_out.lock, obs_thread_id());
    if (obs_output_ensure_open_locked())
        obs_output_write_meta_locked(text, (size_t)n);
    obs_out_lock_release(&obs_out.lock);
}

/* atexit, registered at the first PHASE record: after the app's later
 * atexit handlers, before the GPU runtime's teardown (registered earlier)
 * and before our destructor writes the trace. The exiting thread's open
 * ranges end here; a bounded wait for work still running; what does not
 * complete is counted missing. */
static void exit_handler(void)
{
    uint64_t deadline = obs_now_ns() + EXIT_WAIT_NS, missing = 0;
    struct steps_thread *me = steps_tls, *th;
    struct steps_stats total;
    struct obs_guard guard;

    if (atomic_load(&obs_state) != OBS_STATE_RECORDING)
        return;
    obs_guard_enter(&guard);
    if (me != NULL)
        close_all(me);
    atomic_store(&closed, true);
    memset(&total, 0, sizeof total);
    pthread_mutex_lock(&registry_lock);
    for (th = registry; th != NULL; th = th->next) {
        const struct obs_gpu_backend *be = th->nstreams ? th->streams[0].be : NULL;
        int prev = be != NULL ? app_last_error(be) : 0;
        unsigned not_ok;
        pthread_mutex_lock(&th->resolve_lock);
        not_ok = resolve_locked(th, th == me || th->exited, deadline);
        missing += atomic_load(&th->head) - atomic_load(&th->tail) + atomic_load(&th->st.failed);
        if (th != me && !th->exited)
            bump(&th->st.open_exit, th->depth + th->overflow);
        pthread_mutex_unlock(&th->resolve_lock);
        if (not_ok != 0 && be != NULL)
            obs_gpu_restore_last_error(be, prev);
        stats_add(&total, &th->st);
    }
    missing += atomic_load(&retired.failed);
    stats_add(&total, &retired);
    pthread_mutex_unlock(&registry_lock);
    OBS_DEBUG_LOG(GPUTIME, 1, "steps: exit: %llu range pairs, %llu spans written, %llu missing, %llu marks",
                  (unsigned long long)atomic_load(&total.pairs), (unsigned long long)atomic_load(&total.spans),
                  (unsigned long long)missing, (unsigned long long)atomic_load(&total.marks));
    write_meta(&total, missing);
    obs_guard_leave(&guard);
}
