/* The recorder's slow paths: thread buffers, flushing, lost accounting,
 * self-cost snapshots, thread exit, process exit and fork. The hot path is
 * inline in recorder.h.
 *
 * Who writes what: a buffer's owner thread stores records and advances
 * `used`; any thread holding the output lock may write a buffer's records
 * [flushed, used) to the file. Only the owner resets a buffer (when it is
 * full, or when the thread exits), and only under the lock. */
#include "recorder.h"

#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/common.h"
#include "kernel_names.h"
#include "output.h"

OBS_HIDDEN _Atomic int obs_state;
OBS_HIDDEN __thread struct obs_tls obs_tls __attribute__((tls_model("initial-exec")));

static struct obs_tbuf *registry; /* every attached buffer (under obs_out.lock) */
static pthread_key_t thread_key;  /* destructor flushes a thread's buffer */
static int thread_key_ready;

/* Records of threads that could get no buffer at all (mmap failed). */
static _Atomic uint64_t lost_unbuffered, lost_unbuffered_first, lost_unbuffered_last;
static uint64_t lost_unbuffered_reported;

static atomic_int warned_mmap;

static void (*_Atomic thread_exit_hook)(void);

void obs_recorder_set_thread_exit_hook(void (*fn)(void))
{
    atomic_store_explicit(&thread_exit_hook, fn, memory_order_release);
}

static void (*_Atomic phase_hook)(const struct obs_rec_phase *r, uint64_t index);

void obs_recorder_set_phase_hook(void (*fn)(const struct obs_rec_phase *r, uint64_t index))
{
    atomic_store_explicit(&phase_hook, fn, memory_order_release);
}

static _Atomic(obs_records_writer) records_writer;

void obs_recorder_set_records_writer(obs_records_writer fn)
{
    atomic_store_explicit(&records_writer, fn, memory_order_release);
}

static void thread_detach(void *arg);

uint32_t obs_thread_id(void)
{
    if (obs_tls.tid == 0)
        obs_tls.tid = (uint32_t)syscall(SYS_gettid);
    return obs_tls.tid;
}

void obs_recorder_init(void)
{
    thread_key_ready = pthread_key_create(&thread_key, thread_detach) == 0;
}

/* ---- the wrapper's slow paths ------------------------------------------- */

bool obs_call_begin_slow(struct obs_hooked_call *c)
{
    struct obs_tls *t = &obs_tls;

    if (obs_guard_held())
        return false; /* nested inside another hooked call: its caller records */
    if (atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING)
        return false;
    obs_call_setup(c, t);
    return true;
}

void obs_call_sample(struct obs_hooked_call *c, uint64_t t_end)
{
    struct obs_tbuf *b = obs_tls.buf;
    uint64_t t_exit = obs_now_ns();
    if (b == NULL)
        return;
    atomic_store_explicit(&b->sampled_calls,
                          atomic_load_explicit(&b->sampled_calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&b->sampled_ns,
                          atomic_load_explicit(&b->sampled_ns, memory_order_relaxed) +
                              (c->rec.t_begin - c->t_entry) + (t_exit - t_end),
                          memory_order_relaxed);
}

/* ---- lost records ---------------------------------------------------------- */

static void count_lost(struct obs_tbuf *b, unsigned reason, uint64_t n, uint64_t t_first, uint64_t t_last)
{
    if (b->lost[reason] == b->lost_reported[reason] || t_first < b->lost_t_first[reason])
        b->lost_t_first[reason] = t_first;
    if (t_last > b->lost_t_last[reason])
        b->lost_t_last[reason] = t_last;
    b->lost[reason] += n;
}

static uint64_t record_time(const union obs_record *r)
{
    return r->type == OBS_REC_CALL ? r->call.t_begin : 0;
}

static void count_unbuffered(const union obs_record *r)
{
    uint64_t t = record_time(r) ? record_time(r) : obs_now_ns();
    uint64_t expected = 0;
    atomic_compare_exchange_strong(&lost_unbuffered_first, &expected, t);
    atomic_store(&lost_unbuffered_last, t);
    atomic_fetch_add(&lost_unbuffered, 1);
}

/* ---- writing a buffer ---------------------------------------------------- */

/* The SELF_COST snapshot (cumulative: readers keep the one with most calls)
 * and the LOST records not yet reported, into tail. */
static uint32_t build_tail(struct obs_tbuf *b, union obs_record *tail)
{
    uint64_t calls = atomic_load_explicit(&b->calls, memory_order_relaxed);
    uint64_t sampled = atomic_load_explicit(&b->sampled_calls, memory_order_relaxed);
    uint64_t sampled_ns = atomic_load_explicit(&b->sampled_ns, memory_order_relaxed);
    uint32_t n = 0;
    unsigned reason;

    memset(tail, 0, OBS_TBUF_TAIL_RECORDS * sizeof *tail);
    if (calls > 0) {
        struct obs_rec_self_cost *s = &tail[n++].self_cost;
        s->type = OBS_REC_SELF_COST;
        s->tid = b->tid;
        s->calls = calls;
        /* Per-call cost measured on every OBS_SAMPLE_PERIOD-th call, scaled
         * to all calls, plus the time spent writing buffers out. */
        s->shim_ns = (sampled > 0 ? (uint64_t)((double)sampled_ns / (double)sampled * (double)calls) : 0) +
                     atomic_load_explicit(&b->flush_ns, memory_order_relaxed);
    }
    for (reason = 1; reason < OBS_LOST_REASONS && n < OBS_TBUF_TAIL_RECORDS; reason++) {
        struct obs_rec_lost *l;
        if (b->lost[reason] == b->lost_reported[reason])
            continue;
        l = &tail[n++].lost;
        l->type = OBS_REC_LOST;
        l->reason = (uint8_t)reason;
        l->tid = b->tid;
        l->count = b->lost[reason] - b->lost_reported[reason];
        l->t_first = b->lost_t_first[reason];
        l->t_last = b->lost_t_last[reason];
    }
    return n;
}

static void mark_tail_reported(struct obs_tbuf *b)
{
    unsigned reason;
    for (reason = 1; reason < OBS_LOST_REASONS; reason++)
        b->lost_reported[reason] = b->lost[reason];
}

/* Under the lock: write b's records not yet in the file, then its tail.
 * The owner (owner = true) also empties the buffer. Returns the per-thread
 * index that follows what was written. */
static uint64_t flush_locked(struct obs_tbuf *b, bool owner, bool from_signal)
{
    uint32_t used = atomic_load_explicit(&b->used, memory_order_acquire);
    uint32_t tail_n = 0;
    union obs_record tail[OBS_TBUF_TAIL_RECORDS];
    uint64_t next;
    obs_records_writer write_records = atomic_load_explicit(&records_writer, memory_order_acquire);

    if (obs_output_ensure_open_locked()) {
        obs_kernel_names_write_pending_locked(from_signal);
        if (!from_signal && used > b->flushed) /* formatting is not for signal handlers */
            OBS_DEBUG_LOG(OUTPUT, 3, "thread %u: a chunk of %u records, indexes %llu..", b->tid, used - b->flushed,
                          (unsigned long long)(b->first_index + b->flushed));
        if (write_records == NULL)
            write_records = obs_output_write_records_locked;
        if (used > b->flushed &&
            write_records(b->tid, b->first_index + b->flushed, &b->recs[b->flushed], used - b->flushed) != 0) {
            uint64_t t_first = UINT64_MAX, t_last = 0;
            uint32_t i;
            for (i = b->flushed; i < used; i++) {
                uint64_t t = record_time(&b->recs[i]);
                if (t != 0 && t < t_first)
                    t_first = t;
                if (t > t_last)
                    t_last = t;
            }
            count_lost(b, OBS_LOST_WRITE_FAILED, used - b->flushed, t_first == UINT64_MAX ? 0 : t_first,
                       t_last);
        }
        tail_n = build_tail(b, tail);
        if (tail_n > 0 && obs_output_write_records_locked(b->tid, b->first_index + used, tail, tail_n) == 0)
            mark_tail_reported(b);
    }
    if (obs_out.status == OBS_OUTPUT_CLOSED) {
        /* The file went away under us (deleted, its descriptor taken by the
         * app): pass calls through from now on. Not after exit's close. */
        int recording = OBS_STATE_RECORDING;
        atomic_compare_exchange_strong(&obs_state, &recording, OBS_STATE_DISABLED);
    }
    next = b->first_index + used + tail_n;
    b->flushed = used;
    if (owner) {
        b->first_index = next;
        b->flushed = 0;
        atomic_store_explicit(&b->used, 0, memory_order_release);
    }
    return next;
}

/* The owner's buffer is full: write it out and start over. */
static void flush_full_buffer(struct obs_tbuf *b)
{
    uint64_t t0 = obs_now_ns();
    uint32_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    flush_locked(b, true, false);
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(RECORD, 3, "thread %u: buffer full, %u records written in %llu ns", b->tid, used,
                  (unsigned long long)(obs_now_ns() - t0));
    atomic_store_explicit(&b->flush_ns,
                          atomic_load_explicit(&b->flush_ns, memory_order_relaxed) + (obs_now_ns() - t0),
                          memory_order_relaxed);
}

/* ---- thread buffers --------------------------------------------------------- */

static void write_thread_name_locked(uint32_t tid)
{
    char name[64];
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0')
        obs_output_write_string_locked(tid, OBS_STR_THREAD_NAME, name, strlen(name));
}

/* First record of this thread: map its buffer, register it (and create the
 * trace file if this is the process's first record). NULL when none. */
static struct obs_tbuf *thread_attach(struct obs_tls *t)
{
    uint32_t capacity = obs_cfg.buffer_records;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = (sizeof(struct obs_tbuf) + (size_t)capacity * sizeof(union obs_record) + page - 1) / page * page;
    struct obs_tbuf *b;
    void *mem;
    bool open;

    if (atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING)
        return NULL;
    mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        obs_log_warn_once(&warned_mmap, "cannot map a %zu-byte trace buffer (%s); calls of such threads "
                          "are counted as lost", bytes, strerror(errno));
        return NULL;
    }
    b = mem; /* zero-filled */
    b->tid = obs_thread_id();
    b->capacity = capacity;
    b->limit = capacity - OBS_TBUF_TAIL_RECORDS;
    b->first_index = t->next_index;
    b->map_bytes = bytes;

    obs_out_lock_acquire(&obs_out.lock, b->tid);
    open = obs_output_ensure_open_locked();
    if (open) {
        b->next = registry;
        registry = b;
        write_thread_name_locked(b->tid);
    }
    obs_out_lock_release(&obs_out.lock);
    if (!open) {
        /* No trace file: recording stops here, as the warning said. */
        atomic_store(&obs_state, OBS_STATE_DISABLED);
        munmap(mem, bytes);
        return NULL;
    }
    if (thread_key_ready)
        pthread_setspecific(thread_key, b);
    t->buf = b;
    OBS_DEBUG_LOG(RECORD, 2, "thread %u: buffer of %u records (%zu bytes) mapped, first index %llu", b->tid, capacity,
                  bytes, (unsigned long long)b->first_index);
    return b;
}

static void registry_remove_locked(struct obs_tbuf *b)
{
    struct obs_tbuf **p;
    for (p = &registry; *p != NULL; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            return;
        }
}

/* pthread key destructor: the thread is exiting. */
static void thread_detach(void *arg)
{
    struct obs_tbuf *b = arg;
    struct obs_tls *t = &obs_tls;
    int saved_errno = errno;

    if (b == NULL || b != t->buf)
        return;
    void (*hook)(void) = atomic_load_explicit(&thread_exit_hook, memory_order_acquire);
    if (hook != NULL)
        hook(); /* GPU time: its GPU_SPAN records go into b, written below */
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    if (obs_guard_held()) {
        /* The thread ends inside a recorded call (cancelled in it, or
         * pthread_exit from a callback): made, never returned, not stored. */
        uint64_t now = obs_now_ns();
        count_lost(b, OBS_LOST_UNFINISHED, 1, now, now);
        obs_guard_drop();
    }
    flush_locked(b, true, false);
    registry_remove_locked(b);
    t->next_index = b->first_index; /* should the thread record again */
    t->buf = NULL;
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(RECORD, 2, "thread %u exits: its buffer written and unmapped, %llu records in all", b->tid,
                  (unsigned long long)t->next_index);
    munmap(b, b->map_bytes);
    errno = saved_errno;
}

/* Store r in the thread's buffer: attach or flush as needed. Returns its
 * per-thread index, UINT64_MAX when it could not be kept. */
static uint64_t store_record(struct obs_tls *t, const union obs_record *r, bool is_call)
{
    struct obs_tbuf *b = t->buf;
    uint32_t used;

    if (b == NULL)
        b = thread_attach(t);
    if (b == NULL) {
        if (atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_RECORDING)
            count_unbuffered(r);
        return UINT64_MAX;
    }
    if (atomic_load_explicit(&b->used, memory_order_relaxed) >= b->limit)
        flush_full_buffer(b);
    used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (used >= b->limit) { /* cannot happen: the flush empties it */
        obs_out_lock_acquire(&obs_out.lock, b->tid);
        count_lost(b, OBS_LOST_BUFFER_FULL, 1, record_time(r), record_time(r));
        obs_out_lock_release(&obs_out.lock);
        return UINT64_MAX;
    }
    b->recs[used] = *r;
    atomic_store_explicit(&b->used, used + 1, memory_order_release);
    if (is_call)
        atomic_store_explicit(&b->calls, atomic_load_explicit(&b->calls, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    return b->first_index + used;
}

void obs_call_store_slow(struct obs_hooked_call *c)
{
    union obs_record r;
    r.call = c->rec;
    store_record(&obs_tls, &r, true);
}

void obs_recorder_append(const union obs_record *r)
{
    uint64_t index = store_record(&obs_tls, r, false);
    if (r->type == OBS_REC_PHASE) {
        void (*hook)(const struct obs_rec_phase *, uint64_t) = atomic_load_explicit(&phase_hook, memory_order_acquire);
        if (hook != NULL)
            hook(&r->phase, index);
    }
}

void obs_recorder_add_shim_ns(uint64_t ns)
{
    struct obs_tbuf *b = obs_tls.buf;
    if (b != NULL)
        atomic_store_explicit(&b->flush_ns, atomic_load_explicit(&b->flush_ns, memory_order_relaxed) + ns,
                              memory_order_relaxed);
}

/* ---- process exit and fatal signals ------------------------------------------ */

/* Under the lock: LOST records of buffer-less threads, in a chunk of the
 * finishing thread at an index it has not used. */
static void write_unbuffered_lost_locked(uint32_t tid, uint64_t index)
{
    union obs_record r;
    uint64_t count = atomic_load(&lost_unbuffered);
    if (count == lost_unbuffered_reported)
        return;
    memset(&r, 0, sizeof r);
    r.lost.type = OBS_REC_LOST;
    r.lost.reason = OBS_LOST_NO_BUFFER;
    r.lost.tid = 0; /* several threads, possibly */
    r.lost.count = count - lost_unbuffered_reported;
    r.lost.t_first = atomic_load(&lost_unbuffered_first);
    r.lost.t_last = atomic_load(&lost_unbuffered_last);
    if (obs_output_write_records_locked(tid, index, &r, 1) == 0)
        lost_unbuffered_reported = count;
}

/* What no LOST record could carry (every write failed): say it here. */
static void report_unwritten_lost_locked(bool from_signal)
{
    uint64_t missing = atomic_load(&lost_unbuffered) - lost_unbuffered_reported;
    struct obs_tbuf *b;
    char n[24];
    unsigned reason;
    for (b = registry; b != NULL; b = b->next)
        for (reason = 1; reason < OBS_LOST_REASONS; reason++)
            missing += b->lost[reason] - b->lost_reported[reason];
    if (missing == 0)
        return;
    /* Not a second warning: the failed write already warned. */
    if (from_signal)
        obs_log_signal_safe(obs_log_u64(n, missing), " records were lost and could not be reported in the trace",
                            (char *)NULL);
    else
        obs_log_info("%llu records were lost and could not be reported in the trace", (unsigned long long)missing);
}

/* Under the lock: the end mark, built with no formatting (signal path). */
static void write_end_mark_locked(const char *ending)
{
    static const char key[] = "end=";
    char line[64];
    size_t len = 0, i;
    for (i = 0; key[i] != '\0'; i++)
        line[len++] = key[i];
    for (i = 0; ending[i] != '\0' && len < sizeof line - 1; i++)
        line[len++] = ending[i];
    line[len++] = '\n';
    obs_output_write_meta_locked(line, len);
}

bool obs_recorder_finish(bool from_signal, const char *ending)
{
    struct obs_tls *t = &obs_tls;
    uint32_t self = obs_thread_id();
    uint64_t self_next = t->next_index;
    struct obs_tbuf *b;
    bool was_open;

    /* From here on wrappers pass calls through. */
    atomic_store(&obs_state, OBS_STATE_FINISHED);
    if (from_signal) {
        /* Never wait for ourselves (the signal may have interrupted a flush
         * on this thread), nor for long for another thread. */
        if (!obs_out_lock_acquire_bounded(&obs_out.lock, self, 500)) {
            obs_log_signal_safe("warning: trace file busy; the last records were not written", (char *)NULL);
            return false;
        }
    } else {
        obs_out_lock_acquire(&obs_out.lock, self);
    }
    if (obs_out.status != OBS_OUTPUT_OPEN) {
        obs_out_lock_release(&obs_out.lock);
        return false;
    }
    for (b = registry; b != NULL; b = b->next) {
        uint64_t next = flush_locked(b, false, from_signal);
        if (b == t->buf)
            self_next = next;
    }
    write_unbuffered_lost_locked(self, self_next);
    report_unwritten_lost_locked(from_signal);
    write_end_mark_locked(ending);
    was_open = obs_output_close_locked();
    obs_out_lock_release(&obs_out.lock);
    return was_open;
}

/* ---- fork -------------------------------------------------------------------- */

void obs_recorder_fork_prepare(void)
{
    /* No flush in progress while the address space is copied. */
    obs_out_lock_acquire(&obs_out.lock, obs_thread_id());
}

void obs_recorder_fork_parent(void)
{
    obs_out_lock_release(&obs_out.lock);
}

void obs_recorder_fork_child(void)
{
    struct obs_tls *t = &obs_tls;
    struct obs_tbuf *b, *next;

    /* The inherited buffers hold the parent's records (the parent writes
     * them): drop them all; this process starts its own trace. */
    for (b = registry; b != NULL; b = next) {
        next = b->next;
        munmap(b, b->map_bytes);
    }
    registry = NULL;
    t->buf = NULL;
    t->tid = 0;
    t->next_index = 0;
    if (thread_key_ready)
        pthread_setspecific(thread_key, NULL);
    atomic_store(&lost_unbuffered, 0);
    atomic_store(&lost_unbuffered_first, 0);
    atomic_store(&lost_unbuffered_last, 0);
    lost_unbuffered_reported = 0;
    obs_output_fork_child(); /* also frees the output lock */
}
