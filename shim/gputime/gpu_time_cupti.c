/* OBS_GPU_TIME=cupti: see gpu_time_cupti.h.
 *
 * State:
 *   - per thread (mmap'ed on its first timed call, never freed: reused by a
 *     later thread once drained), a ring of the calls queued for their API
 *     record: single producer (the owner's hot path, release store of head),
 *     single consumer (under cons_lock, release store of tail);
 *   - under cons_lock: the correlation table (direct-mapped, 2^17 slots:
 *     correlation id -> thread, record index, stream), the device records
 *     waiting for their API record, the API records waiting for their call;
 *   - CUPTI's buffers: a pool of 256 KiB maps under pool_lock (CUPTI asks for
 *     one every ~1000 launches, sometimes on an app thread: a short lock,
 *     never an allocation once the pool holds enough; at most 64 are made,
 *     then CUPTI drops records and counts them).
 * Lock order: cons_lock, then the output lock (spans are appended to the
 * consumer thread's buffer); pool_lock alone. */
#include "gpu_time_cupti.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/common.h"
#include "cupti_lib.h"
#include "record/record.h"
#include "trace/trace.h"

#define RING 32768u               /* calls per thread waiting for their API record (power of two): 1 MiB */
#define CORR_SLOTS (1u << 17)     /* correlation table */
#define PENDING_DEVICE 4096u      /* device records waiting for their API record */
#define PENDING_API 4096u         /* API records waiting for their call to be queued */
#define GIVE_UP_BEHIND 1024u      /* a call this far behind the newest matched one gets no API record */
#define SETTLE_NS 5000000000ull   /* a call with no device record this long after its API record had none */
#define BUFFER_BYTES (256u * 1024u)
#define BUFFERS_FIRST 4u          /* mapped when the session starts */
#define BUFFERS_MAX 64u

/* ---- state ---------------------------------------------------------------------------- */

struct queued_call {
    uint64_t index;          /* per-thread index of the CALL record */
    uint64_t t_begin, t_end; /* host times around the real call */
    uint32_t stream;
    uint8_t matched;         /* consumer's: an API record found it */
};

struct cupti_thread {
    struct cupti_thread *next; /* registry: pushed at the head, never removed */
    _Atomic uint32_t tid;
    _Atomic bool exited;
    _Atomic uint64_t head;     /* calls queued (owner) */
    _Atomic uint64_t tail;     /* calls done with (consumer) */
    _Atomic uint64_t last_end; /* t_end of its newest kernel/copy/memset/graph call, queued or not (owner) */
    _Atomic uint64_t queued, no_room, not_kept; /* counters (owner) */
    uint64_t newest_matched;   /* consumer: ring position + 1 of the newest call an API record found */
    struct queued_call ring[RING];
};

struct corr_slot {
    uint32_t corr;       /* 0: empty */
    uint32_t tid;        /* 0: an API record of no timed call ("not ours") */
    uint64_t index;
    uint64_t api_end;
    uint32_t stream;
    uint8_t state;       /* SLOT_WAITING, SLOT_SPANNED, SLOT_INCOMPLETE */
};
enum { SLOT_WAITING = 1, SLOT_SPANNED = 2, SLOT_INCOMPLETE = 3 };

struct device_record {
    uint32_t corr;
    uint64_t start, end;
};

struct api_record {
    uint32_t corr, tid;
    uint64_t start, end;
};

/* Counters (meta gpu_time_cupti_*), under cons_lock; the hot path's are
 * per thread (struct cupti_thread). */
struct cupti_stats {
    uint64_t spans, calls_spanned, no_work, no_api_record, orphan_records, untimed_records, incomplete,
        dropped, buffers, evicted, api_unmatched;
    _Atomic uint64_t buffers_mapped, buffers_refused; /* under pool_lock */
};

enum session_state { SESSION_UNTRIED = 0, SESSION_ACTIVE, SESSION_FALLBACK, SESSION_CLOSED };

static _Atomic int session = SESSION_UNTRIED;
static pthread_once_t session_once = PTHREAD_ONCE_INIT;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static char fallback_why[512];
static atomic_int fallback_meta_written, warned_hip, warned_fallback;

static pthread_mutex_t cons_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct cupti_thread *) threads;
static struct corr_slot *corr_table;          /* CORR_SLOTS, mapped at session start */
static struct device_record *pending_device;  /* PENDING_DEVICE */
static struct api_record *pending_api;        /* PENDING_API */
/* The two waiting lists are rings: [start, start + n) modulo their size. */
static size_t npending_device, npending_api, start_device, start_api;
static struct cupti_thread *last_found;       /* consumer's cache */
static struct cupti_stats st;

struct pool_buffer {
    struct pool_buffer *next;
};
static struct pool_buffer *free_buffers;

static __thread struct cupti_thread *cupti_tls __attribute__((tls_model("initial-exec")));

static inline void bump(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n, memory_order_relaxed);
}

/* ---- CUPTI's buffers ------------------------------------------------------------------- */

static void *map_buffer(void)
{
    void *m;
    if (atomic_load(&st.buffers_mapped) >= BUFFERS_MAX)
        return NULL;
    m = mmap(NULL, BUFFER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    bump(&st.buffers_mapped, 1);
    return m;
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *b = NULL;
    int saved_errno = errno;
    pthread_mutex_lock(&pool_lock);
    if (free_buffers != NULL) {
        b = free_buffers;
        free_buffers = free_buffers->next;
    } else if ((b = map_buffer()) == NULL) {
        bump(&st.buffers_refused, 1); /* CUPTI drops the records and counts them */
    }
    pthread_mutex_unlock(&pool_lock);
    *buffer = b;
    *size = b != NULL ? BUFFER_BYTES : 0;
    *max_records = 0;
    errno = saved_errno;
}

static void buffer_return(uint8_t *buffer)
{
    struct pool_buffer *b = (struct pool_buffer *)(void *)buffer;
    if (b == NULL)
        return;
    pthread_mutex_lock(&pool_lock);
    b->next = free_buffers;
    free_buffers = b;
    pthread_mutex_unlock(&pool_lock);
}

/* ---- matching (under cons_lock) ------------------------------------------------------------ */

static struct cupti_thread *thread_find(uint32_t tid)
{
    struct cupti_thread *th;
    if (last_found != NULL && atomic_load_explicit(&last_found->tid, memory_order_relaxed) == tid)
        return last_found;
    for (th = atomic_load_explicit(&threads, memory_order_acquire); th != NULL; th = th->next)
        if (atomic_load_explicit(&th->tid, memory_order_relaxed) == tid)
            return last_found = th;
    return NULL;
}

static void emit_span(uint32_t tid, uint64_t index, uint64_t begin, uint64_t end, uint32_t stream, uint8_t flags)
{
    union obs_record r;
    memset(&r, 0, sizeof r);
    r.gpu_span.type = OBS_REC_GPU_SPAN;
    r.gpu_span.flags = flags;
    r.gpu_span.tid = tid;
    r.gpu_span.call_index = index;
    r.gpu_span.gpu_begin = begin;
    r.gpu_span.gpu_end = end;
    r.gpu_span.stream = stream;
    obs_recorder_append(&r);
}

/* A slot about to be reused: its call, if it had no device record long
 * enough after its API record, had none to have. */
static void slot_retire(struct corr_slot *s, uint64_t now_api_start)
{
    if (s->corr == 0 || s->tid == 0 || s->state != SLOT_WAITING)
        return;
    if (s->api_end + SETTLE_NS <= now_api_start) {
        emit_span(s->tid, s->index, s->api_end, s->api_end, s->stream, OBS_SPAN_NO_WORK);
        st.no_work++;
    } else {
        st.evicted++; /* its device record may still come: the call will read as missing */
    }
}

static struct corr_slot *slot_of(uint32_t corr)
{
    return &corr_table[corr & (CORR_SLOTS - 1)];
}

static void file_correlation(const struct api_record *a, const struct cupti_thread *th, const struct queued_call *c)
{
    struct corr_slot *s = slot_of(a->corr);
    if (s->corr == a->corr && s->tid != 0)
        return; /* a second record with the id (driver and runtime): the call is filed */
    if (s->corr != a->corr)
        slot_retire(s, a->start);
    s->corr = a->corr;
    s->tid = th != NULL ? atomic_load_explicit(&th->tid, memory_order_relaxed) : 0;
    s->index = c != NULL ? c->index : 0;
    s->stream = c != NULL ? c->stream : 0;
    s->api_end = a->end;
    s->state = SLOT_WAITING;
}

/* Past calls of th that no API record found and never will: the newest
 * matched call is far ahead of them. */
static void advance_tail(struct cupti_thread *th)
{
    uint64_t tail = atomic_load_explicit(&th->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&th->head, memory_order_acquire);
    while (tail < head && tail + 1 < th->newest_matched) {
        const struct queued_call *c = &th->ring[tail % RING];
        if (!c->matched && tail + GIVE_UP_BEHIND >= th->newest_matched)
            break;
        if (!c->matched)
            st.no_api_record++;
        tail++;
    }
    atomic_store_explicit(&th->tail, tail, memory_order_release);
}

/* 1: matched (or known to be no call of ours: filed as such); 0: its call
 * may not be queued yet (keep it); final: no more waiting. */
static int match_api(const struct api_record *a, bool final)
{
    struct cupti_thread *th = thread_find(a->tid);
    uint64_t lo, hi, tail, head, pos, last_end;
    struct queued_call *c = NULL;

    if (th == NULL) {
        file_correlation(a, NULL, NULL);
        st.api_unmatched++;
        return 1;
    }
    /* Before head: a call queued up to last_end is then in [tail, head). */
    last_end = atomic_load_explicit(&th->last_end, memory_order_acquire);
    tail = atomic_load_explicit(&th->tail, memory_order_relaxed);
    head = atomic_load_explicit(&th->head, memory_order_acquire);
    /* The last call that began at or before the record's start ... */
    lo = tail, hi = head;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (th->ring[mid % RING].t_begin <= a->start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > tail && th->ring[(lo - 1) % RING].t_end >= a->start)
        pos = lo - 1;  /* ... holds it (a driver record inside a runtime call) */
    else if (lo < head && th->ring[lo % RING].t_begin <= a->end)
        pos = lo;      /* the record holds the next one (a runtime record around a driver call) */
    else
        pos = UINT64_MAX;
    if (pos != UINT64_MAX) {
        c = &th->ring[pos % RING];
        c->matched = 1;
        if (pos + 1 > th->newest_matched)
            th->newest_matched = pos + 1;
        file_correlation(a, th, c);
        advance_tail(th);
        return 1;
    }
    /* Calls are queued after they return: one that overlaps this record
     * may still come, unless a queued call already ends after it. */
    if (!final && last_end < a->end)
        return 0;
    file_correlation(a, NULL, NULL);
    st.api_unmatched++;
    return 1;
}

/* 1: used (a span, or dropped as no call's); 0: its API record has not come. */
static int match_device(const struct device_record *d)
{
    struct corr_slot *s = slot_of(d->corr);
    if (s->corr != d->corr)
        return 0;
    if (s->tid == 0) {
        st.untimed_records++;
        return 1;
    }
    if (d->start == 0 && d->end == 0) { /* a forced flush of work still running */
        st.incomplete++;
        if (s->state == SLOT_WAITING)
            s->state = SLOT_INCOMPLETE;
        return 1;
    }
    emit_span(s->tid, s->index, d->start, d->end, s->stream, 0);
    st.spans++;
    if (s->state != SLOT_SPANNED)
        st.calls_spanned++;
    s->state = SLOT_SPANNED;
    return 1;
}

static void keep_device(const struct device_record *d)
{
    if (npending_device == PENDING_DEVICE) { /* the oldest has waited longest */
        st.orphan_records++;
        start_device = (start_device + 1) % PENDING_DEVICE;
        npending_device--;
    }
    pending_device[(start_device + npending_device++) % PENDING_DEVICE] = *d;
}

static void keep_api(const struct api_record *a)
{
    if (npending_api == PENDING_API) {
        match_api(&pending_api[start_api], true);
        start_api = (start_api + 1) % PENDING_API;
        npending_api--;
    }
    pending_api[(start_api + npending_api++) % PENDING_API] = *a;
}

/* What waits: API records first (their calls may be queued now), then the
 * device records that wait for them. Each list keeps its order. */
static void retry_pending(bool final)
{
    size_t i, kept = 0;
    for (i = 0; i < npending_api; i++) {
        struct api_record *a = &pending_api[(start_api + i) % PENDING_API];
        if (!match_api(a, final))
            pending_api[(start_api + kept++) % PENDING_API] = *a;
    }
    npending_api = kept;
    for (i = 0, kept = 0; i < npending_device; i++) {
        struct device_record *d = &pending_device[(start_device + i) % PENDING_DEVICE];
        if (!match_device(d)) {
            if (final)
                st.orphan_records++;
            else
                pending_device[(start_device + kept++) % PENDING_DEVICE] = *d;
        }
    }
    npending_device = kept;
}

/* Kernel, copy and memset records share the offsets read here (cupti_abi.h). */
static bool device_record_of(const obs_CUpti_Activity *r, struct device_record *d)
{
    const uint8_t *p = (const uint8_t *)r;
    size_t corr_at;
    switch (r->kind) {
    case OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case OBS_CUPTI_ACTIVITY_KIND_KERNEL:
        corr_at = OBS_CUPTI_KERNEL_CORRELATION_OFFSET;
        break;
    case OBS_CUPTI_ACTIVITY_KIND_MEMCPY:
    case OBS_CUPTI_ACTIVITY_KIND_MEMSET:
        corr_at = OBS_CUPTI_COPY_CORRELATION_OFFSET;
        break;
    default:
        return false;
    }
    memcpy(&d->start, p + OBS_CUPTI_KERNEL_START_OFFSET, sizeof d->start);
    memcpy(&d->end, p + OBS_CUPTI_KERNEL_START_OFFSET + 8, sizeof d->end);
    memcpy(&d->corr, p + corr_at, sizeof d->corr);
    return true;
}

static void use_device(const struct device_record *d)
{
    if (!match_device(d))
        keep_device(d);
}

/* A graph launch's nodes come as one device record each, one after the
 * other: a run of records with one correlation id (and times) makes one
 * span, their envelope (readers take the envelope of a call's spans
 * anyway). */
static void consume_buffer(uint8_t *buffer, size_t valid)
{
    obs_CUpti_Activity *r = NULL;
    struct device_record run = {0, 0, 0};
    bool in_run = false;

    /* API records first: a buffer may hold both halves of a call. */
    while (obs_cupti.cuptiActivityGetNextRecord(buffer, valid, &r) == OBS_CUPTI_SUCCESS)
        if (r->kind == OBS_CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == OBS_CUPTI_ACTIVITY_KIND_DRIVER) {
            const obs_CUpti_ActivityAPI *api = (const obs_CUpti_ActivityAPI *)(const void *)r;
            struct api_record a = {api->correlationId, api->threadId, api->start, api->end};
            if (!match_api(&a, false))
                keep_api(&a);
        }
    r = NULL;
    while (obs_cupti.cuptiActivityGetNextRecord(buffer, valid, &r) == OBS_CUPTI_SUCCESS) {
        struct device_record d;
        if (!device_record_of(r, &d))
            continue;
        if (in_run && d.corr == run.corr && d.start != 0 && d.end != 0) {
            run.start = d.start < run.start ? d.start : run.start;
            run.end = d.end > run.end ? d.end : run.end;
            continue;
        }
        if (in_run)
            use_device(&run);
        in_run = d.start != 0 || d.end != 0; /* a record without times goes alone */
        if (in_run)
            run = d;
        else
            use_device(&d);
    }
    if (in_run)
        use_device(&run);
}

/* CUPTI's buffer-completed callback: on CUPTI's worker thread, or on the
 * thread that flushes. Nothing recorded meanwhile (a driver call CUPTI
 * makes here passes through the hooks). */
static void buffer_completed(void *context, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid)
{
    uint64_t t0 = obs_now_ns();
    bool in_call = obs_guard_held(); /* then the call's own cost sample covers this */
    struct obs_guard guard;
    size_t dropped = 0;
    (void)context, (void)stream_id, (void)size;

    obs_guard_enter(&guard);
    pthread_mutex_lock(&cons_lock);
    if (atomic_load(&session) == SESSION_ACTIVE && buffer != NULL) {
        st.buffers++;
        consume_buffer(buffer, valid);
        retry_pending(false);
        if (obs_cupti.cuptiActivityGetNumDroppedRecords != NULL &&
            obs_cupti.cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == OBS_CUPTI_SUCCESS)
            st.dropped += dropped;
    }
    pthread_mutex_unlock(&cons_lock);
    buffer_return(buffer);
    if (!in_call)
        obs_recorder_add_shim_ns(obs_now_ns() - t0);
    obs_guard_leave(&guard);
}

/* CUPTI's timestamps: the trace's clock. */
static uint64_t cupti_timestamp(void)
{
    return obs_now_ns();
}

/* ---- the session ---------------------------------------------------------------------------- */

static void write_meta_text(const char *text, size_t len)
{
    obs_out_lock_acquire(&obs_out.lock, obs_thread_id());
    if (obs_output_ensure_open_locked())
        obs_output_write_meta_locked(text, len);
    obs_out_lock_release(&obs_out.lock);
}

/* Once per process (and per forked child): the trace says which GPU time it
 * has, and why not CUPTI's. */
static void note_fallback(void)
{
    char text[700];
    int n;
    if (atomic_load_explicit(&fallback_meta_written, memory_order_relaxed) != 0 ||
        atomic_exchange(&fallback_meta_written, 1) != 0)
        return;
    obs_log_warn_once(&warned_fallback, "OBS_GPU_TIME=cupti: %s; timing with events instead (OBS_GPU_TIME=events)",
                      fallback_why);
    n = snprintf(text, sizeof text, "gpu_time=events\ngpu_time_fallback=cupti: %s\n", fallback_why);
    if (n > 0 && (size_t)n < sizeof text)
        write_meta_text(text, (size_t)n);
}

static void *map_zeroed(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static void session_start(void)
{
    struct obs_cupti_callbacks cb = {buffer_requested, buffer_completed, cupti_timestamp};
    bool other_client = false;
    unsigned i;

    corr_table = map_zeroed((size_t)CORR_SLOTS * sizeof *corr_table);
    pending_device = map_zeroed(PENDING_DEVICE * sizeof *pending_device);
    pending_api = map_zeroed(PENDING_API * sizeof *pending_api);
    if (corr_table == NULL || pending_device == NULL || pending_api == NULL) {
        snprintf(fallback_why, sizeof fallback_why, "cannot map its tables (%s)", strerror(errno));
        atomic_store(&session, SESSION_FALLBACK);
        return;
    }
    for (i = 0; i < BUFFERS_FIRST; i++)
        buffer_return(map_buffer());
    if (!obs_cupti_session_start(obs_cfg.cupti_path, &cb, fallback_why, sizeof fallback_why, &other_client)) {
        atomic_store(&session, SESSION_FALLBACK);
        return;
    }
    {
        char text[4400];
        int n = snprintf(text, sizeof text, "gpu_time=cupti\ngpu_time_cupti_library=%s\n", obs_cupti.path);
        if (n > 0 && (size_t)n < sizeof text)
            write_meta_text(text, (size_t)n);
    }
    atomic_store(&session, SESSION_ACTIVE);
}

/* ---- process exit, fork --------------------------------------------------------------------- */

/* At exit, after the final flush: the calls whose API record came but no
 * device record did, not even an incomplete one, had no device work. Two
 * slots may name one call (a runtime and a driver record): a span of either
 * wins over the other's NO_WORK (readers). */
static void settle_waiting_slots(void)
{
    size_t i;
    for (i = 0; i < CORR_SLOTS; i++) {
        struct corr_slot *s = &corr_table[i];
        if (s->corr != 0 && s->tid != 0 && s->state == SLOT_WAITING) {
            emit_span(s->tid, s->index, s->api_end, s->api_end, s->stream, OBS_SPAN_NO_WORK);
            st.no_work++;
            s->state = SLOT_SPANNED;
        }
    }
}

static uint64_t queued_not_matched(void)
{
    struct cupti_thread *th;
    uint64_t n = 0;
    for (th = atomic_load(&threads); th != NULL; th = th->next) {
        uint64_t i, head = atomic_load(&th->head);
        for (i = atomic_load(&th->tail); i < head; i++)
            n += !th->ring[i % RING].matched;
    }
    return n;
}

static void write_totals(void)
{
    char text[1500];
    uint64_t queued = 0, no_room = 0, not_kept = 0;
    struct cupti_thread *th;
    int n;
    for (th = atomic_load(&threads); th != NULL; th = th->next) {
        queued += atomic_load(&th->queued);
        no_room += atomic_load(&th->no_room);
        not_kept += atomic_load(&th->not_kept);
    }
    n = snprintf(
        text, sizeof text,
        "gpu_time_cupti_calls=%llu\ngpu_time_cupti_spans=%llu\ngpu_time_cupti_calls_spanned=%llu\n"
        "gpu_time_cupti_no_device_work=%llu\ngpu_time_cupti_no_api_record=%llu\ngpu_time_cupti_untimed_no_room=%llu\n"
        "gpu_time_cupti_untimed_not_kept=%llu\ngpu_time_cupti_orphan_records=%llu\n"
        "gpu_time_cupti_untimed_records=%llu\ngpu_time_cupti_api_unmatched=%llu\ngpu_time_cupti_incomplete=%llu\n"
        "gpu_time_cupti_dropped=%llu\ngpu_time_cupti_evicted=%llu\ngpu_time_cupti_buffers=%llu\n"
        "gpu_time_cupti_buffers_mapped=%llu\ngpu_time_cupti_buffers_refused=%llu\n",
        (unsigned long long)queued, (unsigned long long)st.spans,
        (unsigned long long)st.calls_spanned, (unsigned long long)st.no_work, (unsigned long long)st.no_api_record,
        (unsigned long long)no_room, (unsigned long long)not_kept,
        (unsigned long long)st.orphan_records, (unsigned long long)st.untimed_records,
        (unsigned long long)st.api_unmatched, (unsigned long long)st.incomplete, (unsigned long long)st.dropped,
        (unsigned long long)st.evicted, (unsigned long long)st.buffers,
        (unsigned long long)atomic_load(&st.buffers_mapped), (unsigned long long)atomic_load(&st.buffers_refused));
    if (n > 0 && (size_t)n < sizeof text)
        write_meta_text(text, (size_t)n);
}

/* atexit, registered on the first timed call: after the app's later atexit
 * handlers, before the runtime's teardown and our destructor. CUPTI hands
 * over what it holds (completed records, then the rest); calls made after
 * this are not timed. */
static void exit_handler(void)
{
    struct obs_guard guard;
    if (atomic_load(&obs_state) != OBS_STATE_RECORDING || atomic_load(&session) != SESSION_ACTIVE)
        return;
    obs_guard_enter(&guard);
    obs_cupti.cuptiActivityFlushAll(0);
    obs_cupti.cuptiActivityFlushAll(OBS_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&cons_lock);
    retry_pending(true);
    st.no_api_record += queued_not_matched();
    settle_waiting_slots();
    atomic_store(&session, SESSION_CLOSED);
    write_totals();
    pthread_mutex_unlock(&cons_lock);
    obs_guard_leave(&guard);
}

/* The parent's CUPTI session is the parent's (CUPTI's threads are not in
 * this process): the child times its calls with events and never touches
 * this state again, so nothing is locked across fork (the simulated
 * runtime's own fork handler takes its lock, which CUPTI's buffer request
 * is made under): the locks are made anew and the state dropped, whatever
 * another thread was doing with it. */
static void fork_child(void)
{
    free_buffers = NULL;
    pthread_mutex_init(&pool_lock, NULL);
    pthread_mutex_init(&registry_lock, NULL);
    pthread_mutex_init(&cons_lock, NULL);
    atomic_store(&threads, NULL);
    last_found = NULL;
    cupti_tls = NULL;
    npending_api = npending_device = start_api = start_device = 0;
    memset(&st, 0, sizeof st);
    if (atomic_load(&session) == SESSION_ACTIVE || atomic_load(&session) == SESSION_CLOSED) {
        snprintf(fallback_why, sizeof fallback_why, "this process was forked from one whose CUPTI session it "
                 "cannot use");
        atomic_store(&session, SESSION_FALLBACK);
    }
    atomic_store(&fallback_meta_written, 0);
    atomic_store(&warned_hip, 0);
    atomic_store(&warned_fallback, 1); /* said by the parent; the child's trace says it in its meta */
}

static void process_setup(void)
{
    if (atexit(exit_handler) != 0)
        obs_log_warn("OBS_GPU_TIME=cupti: atexit failed; records CUPTI still holds at exit are not read");
}

static void fork_setup(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

/* ---- threads ---------------------------------------------------------------------------------- */

/* Under cons_lock: no call of th waits for its API record any more. */
static bool ring_drained(const struct cupti_thread *th)
{
    uint64_t i, head = atomic_load(&th->head);
    for (i = atomic_load(&th->tail); i < head; i++)
        if (!th->ring[i % RING].matched)
            return false;
    return true;
}

/* The thread's first timed call: a drained ring of an exited thread, else a new one. */
static struct cupti_thread *thread_setup(void)
{
    uint32_t tid = obs_thread_id();
    struct cupti_thread *th;

    pthread_once(&exit_once, process_setup);
    pthread_mutex_lock(&cons_lock);
    for (th = atomic_load(&threads); th != NULL; th = th->next)
        if (atomic_load(&th->exited) && ring_drained(th)) {
            atomic_store(&th->tid, tid);
            atomic_store(&th->last_end, 0);
            atomic_store(&th->exited, false);
            break;
        }
    pthread_mutex_unlock(&cons_lock);
    if (th == NULL) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        size_t bytes = (sizeof *th + page - 1) / page * page;
        th = map_zeroed(bytes);
        if (th == NULL)
            return NULL;
        atomic_store(&th->tid, tid);
        pthread_mutex_lock(&registry_lock);
        th->next = atomic_load(&threads);
        atomic_store_explicit(&threads, th, memory_order_release);
        pthread_mutex_unlock(&registry_lock);
    }
    cupti_tls = th;
    return th;
}

void obs_cupti_thread_exit(void)
{
    struct cupti_thread *th = cupti_tls;
    if (th == NULL)
        return;
    cupti_tls = NULL;
    atomic_store(&th->exited, true);
}

/* ---- the hot path ------------------------------------------------------------------------------ */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static bool rocprofiler_sdk_present(void);

/* HIP calls: events, said once, and in the trace's meta. */
static void note_hip(void)
{
    char text[400];
    int n;
    if (atomic_load_explicit(&warned_hip, memory_order_relaxed) != 0 || atomic_exchange(&warned_hip, 1) != 0)
        return;
    n = snprintf(text, sizeof text,
                 "HIP calls are timed with events (the rocprofiler-sdk backend is not written; "
                 "librocprofiler-sdk.so %s)",
                 rocprofiler_sdk_present() ? "is installed" : "is not installed here");
    obs_log_warn("OBS_GPU_TIME=cupti: %s", text);
    if (n > 0 && (size_t)n < sizeof text) {
        char meta[500];
        n = snprintf(meta, sizeof meta, "gpu_time=events\ngpu_time_fallback=cupti: %s\n", text);
        if (n > 0 && (size_t)n < sizeof meta)
            write_meta_text(meta, (size_t)n);
    }
}

/* rocprofiler-sdk, named in the HIP message: loaded already, or where ROCm
 * installs it (not opened: loading it would start it as a tool). */
static bool rocprofiler_sdk_present(void)
{
    static const char *const paths[] = {"/opt/rocm/lib/librocprofiler-sdk.so", "/opt/rocm/lib64/librocprofiler-sdk.so",
                                        "/usr/lib/x86_64-linux-gnu/librocprofiler-sdk.so"};
    size_t i;
    void *h = dlopen("librocprofiler-sdk.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h != NULL) {
        dlclose(h);
        return true;
    }
    (void)dlerror();
    for (i = 0; i < sizeof paths / sizeof paths[0]; i++)
        if (access(paths[i], F_OK) == 0)
            return true;
    return false;
}

bool obs_cupti_before(const struct obs_gpu_backend *be, struct obs_gpu_call *g, struct obs_hooked_call *call)
{
    int state = atomic_load_explicit(&session, memory_order_acquire);
    struct cupti_thread *th;
    (void)call;

    if (obs_unlikely(be->family != OBS_GPU_FAMILY_CUDA)) {
        note_hip();
        return false;
    }
    if (obs_unlikely(state != SESSION_ACTIVE)) {
        if (state == SESSION_UNTRIED) {
            obs_call_note_slow();
            pthread_once(&fork_once, fork_setup);
            pthread_once(&session_once, session_start);
            state = atomic_load(&session);
        }
        if (state == SESSION_FALLBACK) {
            note_fallback();
            return false;
        }
    }
    g->by_cupti = true;
    g->cth = NULL;
    if (state != SESSION_ACTIVE || !obs_gpu_kind_is_timed(g->kind))
        return true;
    th = cupti_tls;
    if (obs_unlikely(th == NULL)) {
        obs_call_note_slow();
        th = thread_setup();
    }
    g->cth = th;
    return true;
}

void obs_cupti_after(struct obs_gpu_call *g, struct obs_hooked_call *call, int32_t status)
{
    uint64_t t_end;
    struct cupti_thread *th = g->cth;
    uint64_t head = 0, index;
    bool queue = false;

    obs_guard_keep_errno(&call->guard); /* the real call's, for the app */
    t_end = obs_now_ns();
    if (th != NULL && status == 0) {
        head = atomic_load_explicit(&th->head, memory_order_relaxed);
        if (head - atomic_load_explicit(&th->tail, memory_order_acquire) < RING &&
            atomic_load_explicit(&session, memory_order_relaxed) == SESSION_ACTIVE) {
            call->rec.flags |= OBS_CALL_GPU_TIMED;
            queue = true;
        } else {
            bump(&th->no_room, 1);
        }
    }
    obs_guard_restore_errno(&call->guard);
    obs_call_finish_at(call, status, t_end); /* leaves the call's guard */
    if (queue) {
        index = obs_call_last_index(call);
        if (index == UINT64_MAX) {
            bump(&th->not_kept, 1); /* counted lost by the recorder: nothing to time */
        } else {
            struct queued_call *c = &th->ring[head % RING];
            c->index = index;
            c->t_begin = call->rec.t_begin;
            c->t_end = t_end;
            c->stream = call->rec.stream;
            c->matched = 0;
            atomic_store_explicit(&th->head, head + 1, memory_order_release);
            bump(&th->queued, 1);
        }
    }
    /* Every call of the thread that CUPTI records has ended by now: an API
     * record ending before this one that found no queued call never will. */
    if (th != NULL)
        atomic_store_explicit(&th->last_end, t_end, memory_order_release);
    obs_guard_restore_errno(&call->guard);
}
