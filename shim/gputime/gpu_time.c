/* GPU time with events: see gpu_time.h.
 *
 * Per thread and runtime family, one struct obs_gpu_thread (mmap'ed on the
 * thread's first timed call, pointed to from initial-exec TLS):
 *   - a pool of free events per device: a stack the owner pops on the hot
 *     path; refilled by resolution, or by creating a batch when it runs dry
 *     (a slow path, counted: gpu_time_events_created);
 *   - a ring of pending pairs: single producer (the owner's hot path),
 *     consumed under resolve_lock by the owner off the hot path or by the
 *     exit path. head and tail are plain release stores, no read-modify-write.
 *
 * Clock alignment. Event timestamps are device times; elapsed times between
 * events come back as float milliseconds. Once per family and device, a
 * reference event is recorded on a private non-blocking stream of ours
 * (idle, so it completes as soon as the device sees it) between two host
 * CLOCK_MONOTONIC reads h0 and h1, and waited for (our event only): its
 * device time is taken as (h0 + h1) / 2 on the host time base, within
 * (h1 - h0) / 2 (gpu_time_clock_error_ns in the meta; gpu_clock.c). A pair's begin is
 * then anchor_host + elapsed(anchor, begin) and its end begin +
 * elapsed(begin, end). The anchor starts as the reference event and moves,
 * per thread and device, to the begin event of each pair resolved: steps
 * between consecutive pairs are short, and a float elapsed time below
 * about 8 ms rounds back to the exact integer nanosecond, so the chain adds
 * no error however long the run (a gap of T seconds between two timed calls,
 * or between the reference and a thread's first one, adds at most ~60 ns x
 * T, the float's rounding). Host and device clocks
 * drifting apart during the run are not corrected.
 *
 * The app's last error. CUDA keeps the last failure until cudaGetLastError
 * reads it; HIP stores every call's result, success included. Before the
 * real call (CUDA): the last error is peeked first; if one of our calls
 * fails and it was cudaSuccess, cudaGetLastError resets it (the real call
 * then sets its own). HIP needs nothing there: the real call overwrites it.
 * After the real call, the end event is recorded only when the call
 * succeeded (a failed call has no device work, and HIP would otherwise lose
 * its error), and a failure of ours is reset in both families. Resolution
 * after a successful sync resets what our queries left (HIP: not-ready
 * statuses; CUDA: any failure) to success; with CUDA, when the app had an
 * unread error pending before, nothing is queried at all until it is read.
 * What cannot be restored: a CUDA error the app had not read yet, when one
 * of our calls fails on the same call (the app then reads ours), and, at
 * process exit (after main), whatever our last queries leave. */
#include "gpu_time.h"
#include "gpu_clock.h"
#include "gpu_time_cupti.h"
#include "gpu_time_steps.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"
#include "common/common.h"
#include "record/record.h"

#define OBS_GPU_RING 4096u       /* pending pairs per thread and family (power of two) */
#define OBS_GPU_BATCH 32u        /* events created at a time when a pool runs dry */
/* Events a thread may create per device: every pending pair, a batch, the anchor. */
#define OBS_GPU_POOL_CAP (2u * OBS_GPU_RING + OBS_GPU_BATCH + 2u)
#define OBS_GPU_EXIT_WAIT_NS 1000000000ull /* process exit waits this long for unfinished pairs */
#define OBS_GPU_POLL_NS 100000L            /* between two queries while waiting */

/* ---- state ------------------------------------------------------------------ */

struct obs_gpu_pair {
    void *begin, *end;
    uint64_t call_index; /* per-thread index of the CALL record */
    uint32_t stream;     /* stream id, for the span */
    uint16_t device;
    uint16_t reserved;
};

struct obs_gpu_pool {
    void **events;    /* free events; NULL until the device's first timed call */
    uint32_t count;
    uint32_t created; /* by this thread on this device, at most OBS_GPU_POOL_CAP */
};

struct obs_gpu_anchor {
    void *event;      /* NULL: the family's reference event */
    uint64_t host_ns; /* its device time on the host time base */
};

/* Counters; each written by one party at a time (no read-modify-write). */
struct obs_gpu_stats {
    _Atomic uint64_t timed;       /* pairs queued */
    _Atomic uint64_t spans;       /* GPU_SPAN records made */
    _Atomic uint64_t failed;      /* pairs whose query or elapsed time failed */
    _Atomic uint64_t created;     /* events created */
    _Atomic uint64_t capturing;   /* not timed: the stream was capturing a graph */
    _Atomic uint64_t call_failed; /* not timed: the call itself failed */
    _Atomic uint64_t no_room;     /* not timed: no free event or ring slot */
    _Atomic uint64_t our_errors;  /* not timed: one of our own runtime calls failed */
};

struct obs_gpu_thread {
    struct obs_gpu_thread *next; /* registry (registry_lock) */
    const struct obs_gpu_backend *be;
    uint32_t tid;
    bool exited;                 /* owner gone: the exit path resolves the rest */
    pthread_mutex_t resolve_lock;
    _Atomic uint64_t head;       /* pairs queued (owner) */
    _Atomic uint64_t tail;       /* pairs resolved or dropped (consumer) */
    struct obs_gpu_stats st;
    struct obs_gpu_anchor anchor[OBS_GPU_MAX_DEVICES]; /* consumer's */
    struct obs_gpu_pool pool[OBS_GPU_MAX_DEVICES];     /* owner's */
    size_t map_bytes;
    struct obs_gpu_pair ring[OBS_GPU_RING];
};

struct obs_gpu_family {
    _Atomic int unusable; /* the runtime lacks the event functions */
    atomic_int warned;
};

static struct obs_gpu_family families[OBS_GPU_FAMILIES];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obs_gpu_thread *registry;
static struct obs_gpu_stats retired; /* counters of thread states freed (registry_lock) */
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static atomic_bool closed; /* process exit resolved everything: no new pairs */
static atomic_int warned_device;

static __thread struct obs_gpu_thread *gpu_tls[OBS_GPU_FAMILIES] __attribute__((tls_model("initial-exec")));

/* enum obs_call_kind of every API. */
static const uint8_t api_kinds[OBS_API_COUNT] = {
#define OBS_GPU_API_KIND(id, name, kind, family) OBS_KIND_##kind,
    OBS_API_LIST(OBS_GPU_API_KIND)
#undef OBS_GPU_API_KIND
};

#define bump obs_gpu_bump
#define restore_last_error obs_gpu_restore_last_error

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

/* The child cannot use the parent's events (nor, on a real GPU, its
 * context): it forgets them all and starts afresh. */
static void fork_child(void)
{
    unsigned f;
    pthread_mutex_init(&registry_lock, NULL);
    registry = NULL;
    memset(&retired, 0, sizeof retired);
    for (f = 0; f < OBS_GPU_FAMILIES; f++)
        gpu_tls[f] = NULL;
    atomic_store(&closed, false);
}

static void process_setup(void)
{
    if (atexit(exit_handler) != 0)
        obs_log_warn("OBS_GPU_TIME=events: atexit failed; GPU times still pending at exit are not resolved");
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* The thread's first timed call of this family. */
static struct obs_gpu_thread *thread_setup(const struct obs_gpu_backend *be)
{
    struct obs_gpu_family *fam = &families[be->family];
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (sizeof(struct obs_gpu_thread) + page - 1) / page * page;
    struct obs_gpu_thread *th;

    if (atomic_load(&fam->unusable))
        return NULL;
    if (!be->available()) {
        atomic_store(&fam->unusable, 1);
        obs_log_warn_once(&fam->warned, "OBS_GPU_TIME=events: the %s lacks the event functions; "
                          "recording host times only", be->name);
        OBS_DEBUG_LOG(GPUTIME, 1, "off for the %s: no event functions", be->name);
        return NULL;
    }
    pthread_once(&setup_once, process_setup);
    th = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (th == MAP_FAILED) {
        obs_log_warn_once(&fam->warned, "OBS_GPU_TIME=events: cannot map %zu bytes (%s); "
                          "this thread's calls get no GPU time", bytes, strerror(errno));
        return NULL;
    }
    th->be = be;
    th->tid = obs_thread_id();
    th->map_bytes = bytes;
    pthread_mutex_init(&th->resolve_lock, NULL);
    pthread_mutex_lock(&registry_lock);
    th->next = registry;
    registry = th;
    pthread_mutex_unlock(&registry_lock);
    gpu_tls[be->family] = th;
    OBS_DEBUG_LOG(GPUTIME, 1, "on for thread %u through the %s", th->tid, be->name);
    return th;
}

/* ---- resolution ------------------------------------------------------------------ */

static void pool_put(struct obs_gpu_thread *th, unsigned d, void *event)
{
    struct obs_gpu_pool *p = &th->pool[d];
    if (p->events != NULL && p->count < OBS_GPU_POOL_CAP)
        p->events[p->count++] = event;
}

static void emit_span(const struct obs_gpu_thread *th, const struct obs_gpu_pair *p, uint64_t begin, uint64_t end)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.gpu_span.type = OBS_REC_GPU_SPAN;
    r.gpu_span.tid = th->tid;
    r.gpu_span.call_index = p->call_index;
    r.gpu_span.gpu_begin = begin;
    r.gpu_span.gpu_end = end;
    r.gpu_span.stream = p->stream;
    obs_recorder_append(&r);
}

/* The device times of a completed pair on the host time base, from the
 * thread's anchor on the pair's device. */
static int pair_times(struct obs_gpu_thread *th, const struct obs_gpu_pair *p, uint64_t *begin, uint64_t *end)
{
    const struct obs_gpu_backend *be = th->be;
    const struct obs_gpu_anchor *a = &th->anchor[p->device];
    void *anchor_event, *ref_event;
    uint64_t anchor_ns, ref_ns;
    float to_begin, duration;
    int64_t b, d;
    int st;

    if (!obs_gpu_clock_reference(be->family, p->device, &ref_event, &ref_ns))
        return -1; /* cannot happen: pairs are recorded once it is ready */
    anchor_event = a->event ? a->event : ref_event;
    anchor_ns = a->event ? a->host_ns : ref_ns;
    if ((st = be->elapsed_ms(&to_begin, anchor_event, p->begin)) != 0 ||
        (st = be->elapsed_ms(&duration, p->begin, p->end)) != 0)
        return st;
    b = (int64_t)anchor_ns + obs_gpu_ms_to_ns(to_begin);
    d = obs_gpu_ms_to_ns(duration);
    *begin = b > 0 ? (uint64_t)b : 0;
    *end = *begin + (d > 0 ? (uint64_t)d : 0);
    return 0;
}

/* Under th->resolve_lock: resolve pending pairs in order, up to the first
 * that has not completed (waiting for it until deadline, if any). own: the
 * caller is the owner, whose pool gets the events back. Returns how many of
 * our calls returned something other than success. */
static unsigned resolve_locked(struct obs_gpu_thread *th, bool own, uint64_t deadline)
{
    const struct obs_gpu_backend *be = th->be;
    uint64_t tail = atomic_load_explicit(&th->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&th->head, memory_order_acquire);
    unsigned not_ok = 0;

    while (tail != head) {
        struct obs_gpu_pair *p = &th->ring[tail % OBS_GPU_RING];
        struct obs_gpu_anchor *a = &th->anchor[p->device];
        uint64_t begin, end;
        int st = be->event_query(p->end);

        if (st == be->not_ready) {
            struct timespec pause = {.tv_sec = 0, .tv_nsec = OBS_GPU_POLL_NS};
            not_ok++;
            if (deadline == 0 || obs_now_ns() >= deadline)
                break;
            nanosleep(&pause, NULL);
            continue;
        }
        if (st == 0)
            st = pair_times(th, p, &begin, &end);
        if (st != 0) {
            /* Events in an unknown state: not reused. The call keeps its
             * GPU_TIMED flag and no span: readers count it missing. */
            not_ok++;
            bump(&th->st.failed, 1);
        } else {
            emit_span(th, p, begin, end);
            bump(&th->st.spans, 1);
            /* The begin event becomes the anchor: the next pair is one short step away. */
            if (own && a->event != NULL)
                pool_put(th, p->device, a->event);
            a->event = p->begin;
            a->host_ns = begin;
            if (own)
                pool_put(th, p->device, p->end);
        }
        atomic_store_explicit(&th->tail, ++tail, memory_order_release);
    }
    return not_ok;
}

/* The owner, off the hot path: resolve what has completed. target: the last
 * error the app must see afterwards (see the file comment). Never waits for
 * the exit path: when it holds the lock, this is skipped. */
static void resolve_own(struct obs_gpu_thread *th, int target)
{
    uint64_t t0 = obs_now_ns();
    bool in_call = obs_guard_held(); /* then the call's own cost sample covers this */
    struct obs_guard guard;
    unsigned not_ok;

    if (atomic_load_explicit(&th->tail, memory_order_relaxed) ==
            atomic_load_explicit(&th->head, memory_order_relaxed) ||
        pthread_mutex_trylock(&th->resolve_lock) != 0)
        return;
    obs_guard_enter(&guard); /* nothing we call may be recorded */
    not_ok = resolve_locked(th, true, 0);
    if (not_ok != 0)
        restore_last_error(th->be, target);
    obs_guard_leave(&guard);
    pthread_mutex_unlock(&th->resolve_lock);
    if (!in_call)
        obs_recorder_add_shim_ns(obs_now_ns() - t0);
}

/* ---- the hot path ------------------------------------------------------------------- */

/* Room for one more pair on device d: a ring slot and two free events.
 * Resolves first (when the app's last error allows queries), then creates
 * a batch of events. False: the call is not timed. */
static bool make_room(struct obs_gpu_thread *th, unsigned d, int prev_error)
{
    const struct obs_gpu_backend *be = th->be;
    struct obs_gpu_pool *p = &th->pool[d];
    bool may_query = be->every_call_sets_last_error || prev_error == 0;

    if (p->events == NULL) {
        void *mem = mmap(NULL, OBS_GPU_POOL_CAP * sizeof(void *), PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            return false;
        p->events = mem;
    }
    if (may_query)
        resolve_own(th, prev_error); /* HIP: the real call sets the last error anyway */
    if (atomic_load_explicit(&th->head, memory_order_relaxed) -
            atomic_load_explicit(&th->tail, memory_order_acquire) >= OBS_GPU_RING) {
        OBS_DEBUG_LOG(GPUTIME, 3, "thread %u: %u pairs pending, none resolvable: this call is not timed", th->tid,
                      OBS_GPU_RING);
        return false;
    }
    while (p->count < 2 && p->created < OBS_GPU_POOL_CAP) {
        unsigned n;
        for (n = 0; n < OBS_GPU_BATCH && p->created < OBS_GPU_POOL_CAP; n++) {
            void *ev = NULL;
            int st = be->event_create(&ev);
            if (st != 0) {
                restore_last_error(be, be->every_call_sets_last_error ? 0 : prev_error);
                return p->count >= 2;
            }
            p->created++;
            bump(&th->st.created, 1);
            p->events[p->count++] = ev;
        }
        OBS_DEBUG_LOG(GPUTIME, 2, "thread %u device %u: event pool grown to %u events", th->tid, d, p->created);
    }
    return p->count >= 2;
}

void obs_gpu_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call, uint16_t api)
{
    struct obs_gpu_thread *th;
    struct obs_gpu_pool *pool;
    unsigned d = obs_tls.device;
    bool capturing = false;
    int st;

    g->be = be;
    g->th = NULL;
    g->kind = api < OBS_API_COUNT ? api_kinds[api] : OBS_KIND_NONE;
    g->prev_error = 0;
    g->by_cupti = false;
    if (obs_cfg.gpu_time == OBS_GPU_TIME_STEPS) {
        obs_steps_before(be, g, call, api); /* sets by_steps */
        return;
    }
    g->by_steps = false;
    if (obs_cfg.gpu_time == OBS_GPU_TIME_CUPTI && obs_cupti_before(be, g, call))
        return;
    if (!obs_gpu_kind_is_timed(g->kind) || atomic_load_explicit(&closed, memory_order_relaxed))
        return;
    th = gpu_tls[be->family];
    if (th == NULL && (th = thread_setup(be)) == NULL)
        return;
    if (d >= OBS_GPU_MAX_DEVICES || (call->rec.stream == 0 && obs_streams_saturated())) {
        if (d >= OBS_GPU_MAX_DEVICES)
            obs_log_warn_once(&warned_device, "OBS_GPU_TIME=events: calls on devices %u and above get no "
                              "GPU time", OBS_GPU_MAX_DEVICES);
        bump(&th->st.no_room, 1);
        return;
    }
    g->stream = obs_stream_handle(call->rec.stream);
    if (!be->every_call_sets_last_error)
        g->prev_error = be->peek_last_error();
    /* Events recorded on a capturing stream would become nodes of the app's graph. */
    st = be->stream_capturing(g->stream, &capturing);
    if (st != 0 || capturing) {
        if (st != 0) {
            bump(&th->st.our_errors, 1);
            restore_last_error(be, g->prev_error);
        } else {
            bump(&th->st.capturing, 1);
        }
        return;
    }
    if (!obs_gpu_clock_ready(be, d, g->prev_error, "events")) {
        bump(&th->st.our_errors, 1);
        return;
    }
    pool = &th->pool[d];
    if ((pool->count < 2 || atomic_load_explicit(&th->head, memory_order_relaxed) -
                                    atomic_load_explicit(&th->tail, memory_order_acquire) >= OBS_GPU_RING) &&
        !make_room(th, d, g->prev_error)) {
        bump(&th->st.no_room, 1);
        return;
    }
    g->begin = pool->events[--pool->count];
    g->end = pool->events[--pool->count];
    if ((st = be->event_record(g->begin, g->stream)) != 0) {
        pool->count += 2; /* both are still there */
        bump(&th->st.our_errors, 1);
        restore_last_error(be, g->prev_error);
        return;
    }
    g->device = (uint16_t)d;
    g->th = th;
}

/* The pair's call is stored: queue it (the ring has room: make_room). */
static void queue_pair(struct obs_gpu_call *g, const struct obs_hooked_call *call)
{
    struct obs_gpu_thread *th = g->th;
    uint64_t index = obs_call_last_index(call);
    uint64_t head = atomic_load_explicit(&th->head, memory_order_relaxed);
    struct obs_gpu_pair *p;

    if (index == UINT64_MAX) { /* the record was not kept: nothing to time */
        pool_put(th, g->device, g->begin);
        pool_put(th, g->device, g->end);
        return;
    }
    p = &th->ring[head % OBS_GPU_RING];
    p->begin = g->begin;
    p->end = g->end;
    p->call_index = index;
    p->stream = call->rec.stream;
    p->device = g->device;
    atomic_store_explicit(&th->head, head + 1, memory_order_release);
    bump(&th->st.timed, 1);
}

void obs_gpu_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status)
{
    uint64_t t_end;
    struct obs_gpu_thread *th = g->th;
    const struct obs_gpu_backend *be = g->be;

    if (g->by_steps) {
        obs_steps_after(g, call, status);
        return;
    }
    if (g->by_cupti) {
        obs_cupti_after(g, call, status);
        return;
    }
    obs_guard_keep_errno(&call->guard); /* the real call's, for the app */
    t_end = obs_now_ns();

    if (th != NULL) {
        if (status != 0) {
            bump(&th->st.call_failed, 1);
        } else if (be->event_record(g->end, g->stream) == 0) {
            call->rec.flags |= OBS_CALL_GPU_TIMED;
        } else {
            bump(&th->st.our_errors, 1);
            restore_last_error(be, be->every_call_sets_last_error ? 0 : g->prev_error);
        }
        if (!(call->rec.flags & OBS_CALL_GPU_TIMED)) {
            pool_put(th, g->device, g->begin);
            pool_put(th, g->device, g->end);
            th = NULL;
        }
    }
    obs_guard_restore_errno(&call->guard);
    obs_call_finish_at(call, status, t_end); /* leaves the call's guard */
    if (th != NULL) {
        queue_pair(g, call);
    } else if (g->kind == OBS_KIND_SYNC && status == 0 && (th = gpu_tls[be->family]) != NULL) {
        /* The app synchronised: its earlier work is likely complete. With
         * CUDA, an unread error of the app's must not be replaced by ours. */
        int prev = be->every_call_sets_last_error ? 0 : be->peek_last_error();
        if (prev == 0)
            resolve_own(th, 0);
    }
    obs_guard_restore_errno(&call->guard);
}

/* ---- thread and process exit ------------------------------------------------------------ */

static void stats_add(struct obs_gpu_stats *to, const struct obs_gpu_stats *from)
{
    bump(&to->timed, atomic_load(&from->timed));
    bump(&to->spans, atomic_load(&from->spans));
    bump(&to->failed, atomic_load(&from->failed));
    bump(&to->created, atomic_load(&from->created));
    bump(&to->capturing, atomic_load(&from->capturing));
    bump(&to->call_failed, atomic_load(&from->call_failed));
    bump(&to->no_room, atomic_load(&from->no_room));
    bump(&to->our_errors, atomic_load(&from->our_errors));
}

/* Under registry_lock and th->resolve_lock, th fully resolved: give its
 * events back to the runtime and free it. */
static void thread_free_locked(struct obs_gpu_thread *th)
{
    struct obs_gpu_thread **link;
    unsigned d, i;

    for (d = 0; d < OBS_GPU_MAX_DEVICES; d++) {
        struct obs_gpu_pool *p = &th->pool[d];
        if (p->events == NULL)
            continue;
        if (th->anchor[d].event != NULL)
            th->be->event_destroy(th->anchor[d].event);
        for (i = 0; i < p->count; i++)
            th->be->event_destroy(p->events[i]);
        munmap(p->events, OBS_GPU_POOL_CAP * sizeof(void *));
    }
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

void obs_gpu_on_phase(const struct obs_rec_phase *r, uint64_t index)
{
    if (obs_cfg.gpu_time == OBS_GPU_TIME_STEPS)
        obs_steps_on_phase(r, index);
}

void obs_gpu_thread_exit(void)
{
    struct obs_guard guard;
    unsigned f;
    obs_steps_thread_exit();
    obs_cupti_thread_exit();
    for (f = 0; f < OBS_GPU_FAMILIES; f++) {
        struct obs_gpu_thread *th = gpu_tls[f];
        if (th == NULL)
            continue;
        gpu_tls[f] = NULL;
        obs_guard_enter(&guard);
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
}

/* The totals, as a META chunk (readers take the last value of a key). */
static void write_meta(const struct obs_gpu_stats *s, uint64_t missing)
{
    char text[1024];
    uint64_t error_ns = obs_gpu_clock_error_ns();
    int n;

    n = snprintf(text, sizeof text,
                 "gpu_time_pairs=%llu\ngpu_time_spans=%llu\ngpu_time_spans_missing=%llu\n"
                 "gpu_time_events_created=%llu\ngpu_time_untimed_capturing=%llu\n"
                 "gpu_time_untimed_call_failed=%llu\ngpu_time_untimed_no_room=%llu\n"
                 "gpu_time_untimed_runtime_error=%llu\ngpu_time_clock_error_ns=%llu\n",
                 (unsigned long long)atomic_load(&s->timed), (unsigned long long)atomic_load(&s->spans),
                 (unsigned long long)missing, (unsigned long long)atomic_load(&s->created),
                 (unsigned long long)atomic_load(&s->capturing), (unsigned long long)atomic_load(&s->call_failed),
                 (unsigned long long)atomic_load(&s->no_room), (unsigned long long)atomic_load(&s->our_errors),
                 (unsigned long long)error_ns);
    if (n <= 0 || (size_t)n >= sizeof text)
        return;
    obs_out_lock_acquire(&obs_out.lock, obs_thread_id());
    if (obs_output_ensure_open_locked())
        obs_output_write_meta_locked(text, (size_t)n);
    obs_out_lock_release(&obs_out.lock);
}

/* atexit, registered on the first timed call: after the app's later atexit
 * handlers, before the GPU runtime's teardown (registered earlier) and
 * before our destructor writes the trace. Waits a bounded time for work
 * still running; what does not complete is counted missing. */
static void exit_handler(void)
{
    uint64_t deadline = obs_now_ns() + OBS_GPU_EXIT_WAIT_NS, missing = 0;
    struct obs_gpu_stats total;
    struct obs_gpu_thread *th;
    struct obs_guard guard;
    int prev[OBS_GPU_FAMILIES];
    unsigned f;

    if (atomic_load(&obs_state) != OBS_STATE_RECORDING)
        return;
    obs_guard_enter(&guard);
    atomic_store(&closed, true);
    memset(&total, 0, sizeof total);
    for (f = 0; f < OBS_GPU_FAMILIES; f++)
        prev[f] = -1;
    pthread_mutex_lock(&registry_lock);
    for (th = registry; th != NULL; th = th->next) {
        const struct obs_gpu_backend *be = th->be;
        unsigned not_ok;
        if (prev[be->family] < 0)
            prev[be->family] = be->peek_last_error();
        pthread_mutex_lock(&th->resolve_lock);
        not_ok = resolve_locked(th, false, deadline);
        missing += atomic_load(&th->head) - atomic_load(&th->tail) + atomic_load(&th->st.failed);
        pthread_mutex_unlock(&th->resolve_lock);
        if (not_ok != 0)
            restore_last_error(be, prev[be->family]);
        stats_add(&total, &th->st);
    }
    missing += atomic_load(&retired.failed);
    stats_add(&total, &retired);
    pthread_mutex_unlock(&registry_lock);
    OBS_DEBUG_LOG(GPUTIME, 1, "exit: %llu pairs timed, %llu spans written, %llu missing",
                  (unsigned long long)atomic_load(&total.timed), (unsigned long long)atomic_load(&total.spans),
                  (unsigned long long)missing);
    write_meta(&total, missing);
    obs_guard_leave(&guard);
}
