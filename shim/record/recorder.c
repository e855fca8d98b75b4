/* The recorder's slow paths: thread windows, lost accounting, self-cost
 * snapshots, the store gate (OBS_RECORD=window), thread exit, process exit
 * and fork. The hot path is inline in recorder.h.
 *
 * Who writes what: a window's owner thread stores records into its slots
 * [0, room) and advances `used`; nobody else touches them. Its last slots
 * [room, capacity) get the SELF_COST and LOST records from whoever closes
 * the window, under the output lock: the owner when the window is full or
 * the thread exits, the exit path at the end. Only the owner gets a new
 * window, under the lock, and never once the trace is finished. `limit`,
 * where the hot path stops, is written under the lock only: by the owner
 * with its window, by whoever opens or closes the store gate. */
#include "recorder.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/common.h"
#include "kernel_names.h"
#include "output.h"

OBS_HIDDEN OBS_HOT_DATA _Atomic int obs_state;
OBS_HIDDEN __thread struct obs_tls obs_tls __attribute__((tls_model("initial-exec")));

static struct obs_tbuf *registry; /* every attached buffer (under obs_out.lock) */
static pthread_key_t thread_key;  /* destructor closes a thread's window */
static int thread_key_ready;

/* Records of threads that could get no buffer at all (mmap failed). */
static _Atomic uint64_t lost_unbuffered, lost_unbuffered_first, lost_unbuffered_last;
static uint64_t lost_unbuffered_reported;

static atomic_int warned_mmap;

/* The store gate (OBS_RECORD=window): set up at start-up; open or closed
 * under the lock, read by the slow path without it. Calls left out by
 * threads that have ended (under the lock). */
static bool gated;
static _Atomic bool gate_open;
static uint64_t skipped_ended;

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

/* A sampled call begins: its entry time, no slow path met yet. */
void obs_call_sample_begin(struct obs_hooked_call *c)
{
    obs_tls.slow_in_call = 0;
    c->t_entry = obs_now_ns();
}

/* A sampled call's cost: from the wrapper's entry to its exit, less the
 * real call (from its begin time, which a slow path noted before it moved
 * back to where that path began: that path is timed whole, apart; to its
 * end, the begin time plus the record's duration) and less the slow paths
 * timed whole inside it (obs_slow_add: they count once, in slow_ns, not 64
 * times). */
void obs_call_sample(const struct obs_hooked_call *c)
{
    struct obs_tbuf *b = obs_tls.buf;
    uint64_t t_exit = obs_now_ns();
    uint64_t dur = (c->rec.flags & OBS_CALL_DUR_US) ? (uint64_t)c->rec.t_dur * 1000u : c->rec.t_dur;
    uint64_t t_end = c->rec.t_begin + dur, ns;
    if (t_end > t_exit || c->rec.t_begin < c->t_entry)
        return; /* not a call timed here (cannot be: the record's times are the wrapper's) */
    ns = (c->rec.t_begin - c->t_entry) + (t_exit - t_end);
    if (b == NULL)
        return;
    ns = ns > obs_tls.slow_in_call ? ns - obs_tls.slow_in_call : 0;
    atomic_store_explicit(&b->sampled_calls,
                          atomic_load_explicit(&b->sampled_calls, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&b->sampled_ns, atomic_load_explicit(&b->sampled_ns, memory_order_relaxed) + ns,
                          memory_order_relaxed);
}

static void slow_ns_add(uint64_t ns, bool once)
{
    struct obs_tbuf *b = obs_tls.buf;
    if (b == NULL) {
        obs_tls.slow_pending += ns; /* the thread's buffer takes it when it is made */
        obs_tls.once_pending += once ? ns : 0;
        return;
    }
    atomic_store_explicit(&b->slow_ns, atomic_load_explicit(&b->slow_ns, memory_order_relaxed) + ns,
                          memory_order_relaxed);
    if (once)
        atomic_store_explicit(&b->once_ns, atomic_load_explicit(&b->once_ns, memory_order_relaxed) + ns,
                              memory_order_relaxed);
}

void obs_slow_add(uint64_t ns, bool once)
{
    if (obs_tls.t_slow != 0)
        return; /* inside a noted slow path: timed whole when it ends */
    obs_tls.slow_in_call += ns;
    slow_ns_add(ns, once);
}

/* A slow path noted before the real call ends where the call begins: its
 * time (counted once) and the call's begin time, where it began. The
 * sampled part before the call ends where it began too: no need to take it
 * out of the sample. */
void obs_call_slow_began(struct obs_hooked_call *c)
{
    uint64_t now = obs_now_ns();
    c->rec.t_begin = obs_tls.t_slow;
    slow_ns_add(now - obs_tls.t_slow, true);
    obs_tls.t_slow = 0;
}

/* A slow path noted after the real call, now forgotten: timed whole. */
void obs_call_slow_forgotten(void)
{
    uint64_t ns = obs_now_ns() - obs_tls.t_slow;
    obs_tls.t_slow = 0;
    obs_slow_add(ns, true);
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

/* ---- closing a window ------------------------------------------------------ */

/* The SELF_COST snapshot (cumulative: readers keep the one with most calls)
 * and the LOST records not yet reported, into tail. */
static uint32_t build_tail(struct obs_tbuf *b, union obs_record *tail)
{
    uint64_t others = atomic_load_explicit(&b->others, memory_order_relaxed);
    uint64_t stored = b->stored_before + atomic_load_explicit(&b->used, memory_order_relaxed);
    uint64_t calls = (stored > others ? stored - others : 0) + /* the owner may be storing one right now */
                     atomic_load_explicit(&b->skipped, memory_order_relaxed); /* left out by the gate: made all the same */
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
         * to all calls, plus the slow paths, each timed whole; the one-time
         * work among them apart too. */
        s->once_ns = atomic_load_explicit(&b->once_ns, memory_order_relaxed);
        s->shim_ns = (sampled > 0 ? (uint64_t)((double)sampled_ns / (double)sampled * (double)calls) : 0) +
                     atomic_load_explicit(&b->slow_ns, memory_order_relaxed);
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

/* Record slots that fit in `pages` pages: as many as fit, leaving 0 or at
 * least 24 bytes before the next page, so that a window right after it
 * frames itself there with no page skipped. */
static uint32_t window_fit(uint32_t pages)
{
    uint64_t room = (uint64_t)pages * obs_output_page_size() - sizeof(struct obs_chunk_header);
    uint64_t n = room / OBS_RECORD_SIZE;
    uint64_t gap = room - n * OBS_RECORD_SIZE;
    if (gap > 0 && gap < sizeof(struct obs_chunk_header))
        n--;
    return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* The slots of a window of `pages` pages: what fits, at most
 * OBS_BUFFER_RECORDS. */
static uint32_t window_slots(uint32_t pages)
{
    uint32_t n = window_fit(pages);
    return n < obs_cfg.buffer_records ? n : obs_cfg.buffer_records;
}

/* Pages of the largest window: the most whose slots do not pass
 * OBS_BUFFER_RECORDS (one at least). Rounded down, not up: a window of
 * exactly OBS_BUFFER_RECORDS slots would leave most of its last page
 * unused, and the next window (whose slots start on a page) a PAD of
 * nearly a page before it; as it is, windows follow each other with a
 * PAD of 24 to 72 bytes at most. */
static uint32_t window_max_pages(void)
{
    uint32_t pages = 1;
    while (window_fit(pages + 1) <= obs_cfg.buffer_records)
        pages++;
    return pages;
}

/* Memory at recs in place of a window: anonymous and zero (a store the
 * owner makes past the end of the trace lands there, not in the file). A
 * failure leaves it a hole; nothing is stored into it with room 0. */
static void window_take_out(struct obs_tbuf *b, size_t bytes)
{
    const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE;
    if (bytes == 0)
        return;
#ifdef SYS_mmap
    /* The system call itself: ThreadSanitizer would take the C library's
     * mmap for a write to the range that races with the owner's stores,
     * which is the point: the kernel replaces the mapping at once, and
     * the owner's next store lands in the file's page before it or in the
     * anonymous page after; no other thread reads that memory. */
    syscall(SYS_mmap, b->recs, bytes, prot, flags, -1, 0);
#else
    mmap(b->recs, bytes, prot, flags, -1, 0);
#endif
}

/* Under the lock, by the owner, its window full: the last slots get its
 * SELF_COST and LOST records, through the mapping. */
static void window_tail_locked(struct obs_tbuf *b)
{
    union obs_record tail[OBS_TBUF_TAIL_RECORDS];
    uint32_t n = build_tail(b, tail), i;
    for (i = 0; i < n; i++)
        obs_record_commit(&b->recs[b->room + i], &tail[i]);
    mark_tail_reported(b);
}

/* Under the lock: the thread's window closed for good (its exit, or the
 * end of the trace, for any thread), by whoever calls. First it is taken
 * out of the file: a thread still running stores into memory from there
 * on, and the file no longer changes. Its SELF_COST and LOST records go
 * into the slots after the last one used (pwrite: whole or kind 0 if
 * killed meanwhile; a store the owner had just made there belonged to a
 * call that had not returned), and the file keeps only the slots used
 * (obs_output_shrink_window_locked). With no window, the LOST records not
 * yet reported go into a chunk of their own at the thread's next index.
 * Only the owner changes its fields (the hot path reads them without the
 * lock). */
static void window_end_locked(struct obs_tbuf *b, bool owner)
{
    union obs_record tail[OBS_TBUF_TAIL_RECORDS];
    uint32_t n = build_tail(b, tail), used;

    if (b->capacity == 0) {
        /* atomic: the owner may be leaving a call out (skip_call) */
        uint64_t at = __atomic_load_n(&b->first_index, __ATOMIC_RELAXED);
        if (n > 0 && obs_output_write_records_locked(b->tid, at, tail, n) == 0) {
            mark_tail_reported(b);
            if (owner)
                b->first_index += n;
        }
        return;
    }
    window_take_out(b, b->window_bytes);
    used = atomic_load_explicit(&b->used, memory_order_relaxed); /* at most room: room for n */
    if (n == 0 || obs_output_write_slots_locked(b->window_at + (uint64_t)used * OBS_RECORD_SIZE, tail, n) == 0) {
        mark_tail_reported(b);
        obs_output_shrink_window_locked(b->window_at, b->capacity, used + n);
    }
    if (owner) {
        b->stored_before += used;
        b->first_index += used + n;
        b->capacity = 0;
        b->room = 0;
        atomic_store_explicit(&b->limit, 0, memory_order_relaxed);
        atomic_store_explicit(&b->used, 0, memory_order_relaxed);
        b->window_bytes = 0;
    }
}

/* Under the lock, by the owner: its next window (the first, or after a
 * full one, whose last slots are written first), twice the size of the
 * last up to OBS_BUFFER_RECORDS. False when none could be had (disk full,
 * file size limit, the file gone): calls are counted lost until the next
 * try. */
static bool window_next_locked(struct obs_tbuf *b)
{
    uint32_t pages = b->pages == 0 ? 1 : b->pages * 2, n;
    size_t old_bytes = b->window_bytes, bytes;
    uint64_t at;
    int rc;

    if (pages > b->max_pages)
        pages = b->max_pages;
    if (b->capacity > 0) {
        window_tail_locked(b);
        b->stored_before += atomic_load_explicit(&b->used, memory_order_relaxed);
        b->first_index += b->capacity;
    }
    b->room = 0;
    atomic_store_explicit(&b->limit, 0, memory_order_relaxed);
    b->capacity = 0;
    atomic_store_explicit(&b->used, 0, memory_order_relaxed);
    n = window_slots(pages);
    bytes = (size_t)pages * obs_output_page_size();
    /* The new window's mapping replaces the old one at once (windows only
     * grow); the old one's pages stay in the file. */
    rc = obs_output_map_window_locked(b->tid, b->first_index, n, b->recs, bytes, &at);
    if (rc != 0) {
        b->window_bytes = 0;
        window_take_out(b, old_bytes > bytes ? old_bytes : bytes);
        b->retry_in = obs_cfg.buffer_records; /* as often as a window would fill */
        if (obs_out.status == OBS_OUTPUT_CLOSED) {
            /* The file went away under us (deleted, its descriptor taken by
             * the app): pass calls through from now on. */
            int recording = OBS_STATE_RECORDING;
            atomic_compare_exchange_strong(&obs_state, &recording, OBS_STATE_DISABLED);
        }
        return false;
    }
    b->pages = pages;
    b->window_at = at;
    b->window_bytes = bytes;
    b->capacity = n;
    b->room = n - OBS_TBUF_TAIL_RECORDS;
    b->skipping = false;
    if (!gated || atomic_load_explicit(&gate_open, memory_order_relaxed))
        atomic_store_explicit(&b->limit, b->room, memory_order_relaxed);
    return true;
}

/* The owner's window is full (or it has none): the next one. False when
 * the record cannot be stored (no window; or the trace is finished). */
static bool window_switch(struct obs_tbuf *b)
{
    uint64_t t0 = obs_now_ns();
    uint32_t used = atomic_load_explicit(&b->used, memory_order_relaxed);
    bool got = false;

    obs_out_lock_acquire(&obs_out.lock, b->tid);
    if (atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_RECORDING &&
        obs_out.status == OBS_OUTPUT_OPEN) {
        obs_kernel_names_write_pending_locked(false); /* demangled forms the C++ runtime can now give */
        got = window_next_locked(b);
    }
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(RECORD, 3, "thread %u: window of %u records full, the next: %u records at %llu (%llu ns)",
                  b->tid, used, b->capacity, (unsigned long long)b->window_at,
                  (unsigned long long)(obs_now_ns() - t0));
    obs_slow_add(obs_now_ns() - t0, false);
    return got;
}

/* ---- thread buffers --------------------------------------------------------- */

static void write_thread_name_locked(uint32_t tid)
{
    char name[64];
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0')
        obs_output_write_string_locked(tid, OBS_STR_THREAD_NAME, name, strlen(name));
}

/* First record of this thread: its page and the address space of its
 * largest window, registered (the trace file created if this is the
 * process's first record), and its first window. NULL when none. */
static struct obs_tbuf *thread_attach(struct obs_tls *t)
{
    size_t page = obs_output_page_size(), header = offsetof(struct obs_tbuf, recs);
    uint32_t max_pages = window_max_pages();
    size_t bytes = page + (size_t)max_pages * page;
    struct obs_tbuf *b;
    void *mem;
    bool open;

    if (atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING)
        return NULL;
    if (header > page)
        return NULL; /* a page smaller than the struct: cannot happen */
    mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mem == MAP_FAILED) {
        obs_log_warn_once(&warned_mmap, "cannot map a %zu-byte trace buffer (%s); calls of such threads "
                          "are counted as lost", bytes, strerror(errno));
        return NULL;
    }
    /* zero-filled; the struct ends where its page does: recs[] starts the next page */
    b = (struct obs_tbuf *)((char *)mem + page - header);
    b->tid = obs_thread_id();
    b->first_index = t->next_index;
    b->max_pages = max_pages;
    b->region = mem;
    b->region_bytes = bytes;

    obs_out_lock_acquire(&obs_out.lock, b->tid);
    open = obs_output_ensure_open_locked();
    if (open) {
        b->next = registry;
        registry = b;
        write_thread_name_locked(b->tid);
        /* names interned before the file existed (registered at load time),
         * before any record of this thread can use them */
        obs_kernel_names_write_pending_locked(false);
        window_next_locked(b);
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
    atomic_store_explicit(&b->slow_ns, t->slow_pending, memory_order_relaxed); /* timed before it had a buffer */
    atomic_store_explicit(&b->once_ns, t->once_pending, memory_order_relaxed);
    t->slow_pending = t->once_pending = 0;
    t->buf = b;
    OBS_DEBUG_LOG(RECORD, 2, "thread %u: a window of %u records (largest %u) at %llu, first index %llu", b->tid,
                  b->capacity, window_slots(max_pages), (unsigned long long)b->window_at,
                  (unsigned long long)b->first_index);
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
        hook(); /* GPU time: its GPU_SPAN records go into b, closed below */
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    if (obs_guard_held()) {
        /* The thread ends inside a recorded call (cancelled in it, or
         * pthread_exit from a callback): made, never returned, not stored. */
        uint64_t now = obs_now_ns();
        count_lost(b, OBS_LOST_UNFINISHED, 1, now, now);
        obs_guard_drop();
    }
    if (obs_out.status == OBS_OUTPUT_OPEN)
        window_end_locked(b, true);
    skipped_ended += atomic_load_explicit(&b->skipped, memory_order_relaxed);
    registry_remove_locked(b);
    t->next_index = b->first_index; /* should the thread record again */
    t->buf = NULL;
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(RECORD, 2, "thread %u exits: its window closed and unmapped, %llu record slots in all", b->tid,
                  (unsigned long long)t->next_index);
    munmap(b->region, b->region_bytes);
    errno = saved_errno;
}

/* A record with no window to go into, the trace still being recorded:
 * counted (the file cannot grow). After the end of the trace a call is
 * simply not recorded. */
static void count_windowless(struct obs_tbuf *b, const union obs_record *r)
{
    uint64_t t = record_time(r) ? record_time(r) : obs_now_ns();
    if (atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_RECORDING)
        return;
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    count_lost(b, OBS_LOST_WRITE_FAILED, 1, t, t);
    obs_out_lock_release(&obs_out.lock);
}

/* ---- the store gate ----------------------------------------------------------- */

void obs_recorder_gate_init(void)
{
    gated = true;
    atomic_store(&gate_open, false);
}

/* Under the lock: the calls the gate left out so far, as META (a later
 * line wins); no formatting (the signal path writes it too). */
static void write_skipped_locked(void)
{
    char line[64], num[24];
    static const char key[] = "record_window_outside_calls=";
    uint64_t total = skipped_ended;
    const char *digits;
    size_t len = 0, i;
    struct obs_tbuf *b;
    for (b = registry; b != NULL; b = b->next)
        total += atomic_load_explicit(&b->skipped, memory_order_relaxed);
    digits = obs_log_u64(num, total);
    for (i = 0; key[i] != '\0'; i++)
        line[len++] = key[i];
    for (i = 0; digits[i] != '\0' && len < sizeof line - 1; i++)
        line[len++] = digits[i];
    line[len++] = '\n';
    obs_output_write_meta_locked(line, len);
}

void obs_recorder_gate_set_locked(bool open)
{
    struct obs_tbuf *b;
    if (!gated)
        return;
    atomic_store_explicit(&gate_open, open, memory_order_release);
    /* The threads' hot paths: stored again, or every call to the slow path. */
    for (b = registry; b != NULL; b = b->next)
        atomic_store_explicit(&b->limit, open ? b->room : 0, memory_order_relaxed);
    if (!open && obs_out.status == OBS_OUTPUT_OPEN)
        write_skipped_locked();
}

/* The first call left out: the thread's window ends here (what it holds
 * stays in the file, its SELF_COST and LOST records after it), so that
 * the index can be passed over; a call stored later gets a new window, at
 * the index after. False when the trace is finished. */
static __attribute__((noinline)) bool skip_from_window(struct obs_tbuf *b)
{
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    if (obs_out.status == OBS_OUTPUT_OPEN)
        window_end_locked(b, true);
    obs_out_lock_release(&obs_out.lock);
    if (b->capacity > 0)
        return false;
    OBS_DEBUG_LOG(RECORD, 2, "thread %u: a call outside the capture windows: its window closed, calls left out "
                  "from index %llu (OBS_RECORD=window)", b->tid, (unsigned long long)b->first_index);
    return true;
}

/* The gate closed: the call (begun at t_begin) is not stored, but takes
 * its index. */
static void skip_call(struct obs_tbuf *b, uint64_t t_begin)
{
    uint64_t index;
    if (b->capacity > 0 && !skip_from_window(b))
        return;
    index = b->first_index;
    if (!b->skipping) {
        b->skip_from = index;
        b->skipping = true;
    }
    /* atomic: the exit path reads it (window_end_locked) */
    __atomic_store_n(&b->first_index, index + 1, __ATOMIC_RELAXED);
    atomic_store_explicit(&b->skipped, atomic_load_explicit(&b->skipped, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    b->skipped_t_begin = t_begin;
    b->skipped_index = index;
}

/* A label that falls on indexes since the run of calls left out began:
 * nothing in the trace to label. */
static bool labels_nothing(const struct obs_tbuf *b, const union obs_record *r)
{
    if (!b->skipping)
        return false;
    if (r->type == OBS_REC_LAYER)
        return r->layer.first_index >= b->skip_from;
    return r->type == OBS_REC_PHASE && r->phase.event == OBS_PHASE_RELABEL && r->phase.first_index >= b->skip_from;
}

/* The gate closed and no window (a call was left out since): a record of
 * another kind is written alone, a chunk of one at its index, so that the
 * indexes of the calls left out after it stay free; a label of nothing
 * (labels_nothing) is not written. */
static uint64_t store_alone(struct obs_tbuf *b, const union obs_record *r)
{
    uint64_t index = UINT64_MAX;
    if (labels_nothing(b, r))
        return UINT64_MAX;
    obs_out_lock_acquire(&obs_out.lock, b->tid);
    if (atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_RECORDING &&
        obs_out.status == OBS_OUTPUT_OPEN) {
        if (obs_output_write_records_locked(b->tid, b->first_index, r, 1) == 0) {
            index = b->first_index;
            b->first_index = index + 1; /* under the lock, as the exit path reads it */
        } else {
            uint64_t t = record_time(r) ? record_time(r) : obs_now_ns();
            count_lost(b, OBS_LOST_WRITE_FAILED, 1, t, t);
        }
    }
    obs_out_lock_release(&obs_out.lock);
    return index;
}

/* ---- storing a record ------------------------------------------------------------ */

/* Store r in the thread's window: attach or switch windows as needed; the
 * store gate's turn when there is one. Returns its per-thread index,
 * UINT64_MAX when it was not stored. */
static uint64_t store_record(struct obs_tls *t, const union obs_record *r, bool is_call)
{
    struct obs_tbuf *b = t->buf;
    uint32_t used;

    if (b == NULL) {
        uint64_t t0 = obs_now_ns();
        b = thread_attach(t);
        /* the thread's set-up (the process's first: the trace file, and the names registered so far) */
        obs_slow_add(obs_now_ns() - t0, true);
    }
    if (b == NULL) {
        if (atomic_load_explicit(&obs_state, memory_order_acquire) == OBS_STATE_RECORDING)
            count_unbuffered(r);
        return UINT64_MAX;
    }
    if (obs_unlikely(gated) && !atomic_load_explicit(&gate_open, memory_order_acquire)) {
        if (is_call) {
            skip_call(b, r->call.t_begin);
            return UINT64_MAX;
        }
        if (b->capacity == 0)
            return store_alone(b, r);
    }
    if (atomic_load_explicit(&b->used, memory_order_relaxed) >= b->room) {
        /* full, or none since a try failed: a new one (after a failure, only
         * once as many calls as a window holds have gone by) */
        bool try_now = b->capacity > 0 || b->retry_in == 0 || --b->retry_in == 0;
        if (!try_now || !window_switch(b)) {
            count_windowless(b, r);
            return UINT64_MAX;
        }
    }
    used = atomic_load_explicit(&b->used, memory_order_relaxed);
    if (!is_call) /* before the record, so that a SELF_COST made meanwhile never counts it as a call */
        atomic_store_explicit(&b->others, atomic_load_explicit(&b->others, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    obs_record_commit(&b->recs[used], r);
    atomic_store_explicit(&b->used, used + 1, memory_order_relaxed);
    return b->first_index + used;
}

void obs_call_store_slow(struct obs_hooked_call *c)
{
    struct obs_tbuf *b = obs_tls.buf;
    union obs_record r;
    if (obs_unlikely(gated) && b != NULL && !atomic_load_explicit(&gate_open, memory_order_acquire)) {
        skip_call(b, c->rec.t_begin); /* every call outside the windows comes here: kept short */
        return;
    }
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
    obs_slow_add(ns, false);
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

/* Under the lock: a META line KEY=ENDING, built with no formatting
 * (signal path). */
static void write_ending_meta_locked(const char *key, const char *ending)
{
    char line[64];
    size_t len = 0, i;
    for (i = 0; key[i] != '\0' && len < sizeof line / 2; i++)
        line[len++] = key[i];
    line[len++] = '=';
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

    if (from_signal) {
        /* Never wait for ourselves (the signal may have interrupted a window switch
         * on this thread), nor for long for another thread. */
        if (!obs_out_lock_acquire_bounded(&obs_out.lock, self, 500)) {
            atomic_store(&obs_state, OBS_STATE_FINISHED);
            obs_log_signal_safe("warning: trace file busy (the signal came during the shim's own write): every "
                                "record is in it, but not its end mark",
                                (char *)NULL);
            return false;
        }
    } else {
        obs_out_lock_acquire(&obs_out.lock, self);
    }
    if (obs_out.status != OBS_OUTPUT_OPEN) {
        atomic_store(&obs_state, OBS_STATE_FINISHED);
        obs_out_lock_release(&obs_out.lock);
        return false;
    }
    /* The closing mark before other threads' calls stop being recorded:
     * a kill between here and the end mark leaves a trace that says its
     * other threads' last calls were not recorded by design, not lost
     * (docs/shim.md, "What survives which ending"). */
    write_ending_meta_locked("closing", ending);
    /* From here on wrappers pass calls through. */
    atomic_store(&obs_state, OBS_STATE_FINISHED);
    /* kernel names not written yet (none: each is written when it is
     * first named) and demangled forms the C++ runtime can now give */
    obs_kernel_names_write_pending_locked(from_signal);
    for (b = registry; b != NULL; b = b->next) {
        window_end_locked(b, b == t->buf);
        if (b == t->buf)
            self_next = b->first_index;
    }
    write_unbuffered_lost_locked(self, self_next);
    report_unwritten_lost_locked(from_signal);
    if (gated)
        write_skipped_locked();
    write_ending_meta_locked("end", ending);
    was_open = obs_output_close_locked();
    obs_out_lock_release(&obs_out.lock);
    return was_open;
}

/* ---- fork -------------------------------------------------------------------- */

void obs_recorder_fork_prepare(void)
{
    /* No window being made while the address space is copied. */
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

    /* The inherited windows are the parent's (its file, its records):
     * drop them all; this process starts its own trace. */
    for (b = registry; b != NULL; b = next) {
        next = b->next;
        munmap(b->region, b->region_bytes);
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
    atomic_store(&gate_open, false); /* the child's windows start again (capture/) */
    skipped_ended = 0;
    obs_output_fork_child(); /* also frees the output lock */
}
