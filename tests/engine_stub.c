/* The layers below the phase engine, stood in for: see engine_stub.h. */
#include "engine_stub.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phases/phase_engine.h"
#include "phases/ranges.h"
#include "record/record.h"

/* ---- what record/ exports -------------------------------------------------------------------- */

__thread struct obs_tls obs_tls __attribute__((tls_model("initial-exec")));
__thread struct obs_clock_tls obs_clock_tls __attribute__((tls_model("initial-exec")));
struct obs_output obs_out;

static _Atomic uint64_t virtual_ns = 1000000000u;

/* obs_now_ns() takes this path: obs_clock_tls.tsc_span stays 0. */
uint64_t obs_now_ns_slow(void)
{
    return atomic_load(&virtual_ns);
}

void engine_stub_advance_ns(uint64_t ns)
{
    atomic_fetch_add(&virtual_ns, ns);
}

/* The threads' CPU time: one clock for all of them, advanced by a busy
 * gap only (a call's own time is too short to matter to an idle gap). */
static _Atomic uint64_t virtual_cpu_ns;

uint64_t obs_thread_cpu_ns(void)
{
    return atomic_load(&virtual_cpu_ns);
}

void engine_stub_busy_ns(uint64_t ns)
{
    atomic_fetch_add(&virtual_ns, ns);
    atomic_fetch_add(&virtual_cpu_ns, ns);
}

uint64_t engine_stub_now_ns(void)
{
    return atomic_load(&virtual_ns);
}

#define STUB_NAMES 4096u
static char *names[STUB_NAMES];
static uint32_t name_count;
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

uint32_t engine_stub_name(const char *mangled)
{
    uint32_t i, id = 0;
    pthread_mutex_lock(&names_lock);
    for (i = 1; i <= name_count && id == 0; i++)
        if (strcmp(names[i], mangled) == 0)
            id = i;
    if (id == 0 && name_count + 1 < STUB_NAMES) {
        id = ++name_count;
        names[id] = strdup(mangled);
    }
    pthread_mutex_unlock(&names_lock);
    return id;
}

const char *obs_kernel_name_mangled(uint32_t id)
{
    const char *n;
    pthread_mutex_lock(&names_lock);
    n = id >= 1 && id <= name_count ? names[id] : NULL;
    pthread_mutex_unlock(&names_lock);
    return n;
}

static _Atomic uint32_t next_tid = 100;

uint32_t obs_thread_id(void)
{
    if (obs_tls.tid == 0)
        obs_tls.tid = atomic_fetch_add(&next_tid, 1);
    return obs_tls.tid;
}

/* The thread's buffer, grown as needed (the shim's is fixed and flushed;
 * here every record stays, so that the test reads them all back). */
static struct obs_tbuf *thread_buffer(void)
{
    struct obs_tbuf *b = obs_tls.buf;
    if (b == NULL || atomic_load(&b->used) == b->capacity) {
        uint32_t cap = b == NULL ? 1024u : b->capacity * 2u;
        b = realloc(b, sizeof *b + (size_t)cap * sizeof b->recs[0]);
        if (b == NULL)
            abort();
        if (obs_tls.buf == NULL) {
            memset(b, 0, sizeof *b);
            b->tid = obs_thread_id();
        }
        b->capacity = b->limit = cap;
        obs_tls.buf = b;
    }
    return b;
}

static void append(const union obs_record *r)
{
    struct obs_tbuf *b = thread_buffer();
    uint32_t used = atomic_load(&b->used);
    b->recs[used] = *r;
    atomic_store(&b->used, used + 1);
}

void obs_recorder_append(const union obs_record *r)
{
    append(r);
}

/* The recorder's self-cost accounting: nothing to account here. */
void obs_call_slow_forgotten(void)
{
    obs_tls.t_slow = 0;
}

const union obs_record *engine_stub_records(uint64_t *count)
{
    struct obs_tbuf *b = obs_tls.buf;
    *count = b != NULL ? atomic_load(&b->used) : 0;
    return b != NULL ? b->recs : NULL;
}

void obs_out_lock_acquire(struct obs_out_lock *l, uint32_t self)
{
    (void)l;
    (void)self;
}

void obs_out_lock_release(struct obs_out_lock *l)
{
    (void)l;
}

bool obs_output_ensure_open_locked(void)
{
    return true;
}

int obs_output_write_string_locked(uint32_t id, uint32_t kind, const char *text, size_t len)
{
    (void)id;
    (void)kind;
    (void)text;
    (void)len;
    return 0;
}

int obs_output_write_strings_locked(const void *entries, uint32_t bytes)
{
    (void)entries;
    (void)bytes;
    return 0;
}

/* ---- what phases/ranges.h exports: a per-thread stack of names ---------------------------------- */

#define STUB_HANDLES 70000u /* every DECODE/STEP_k name a long case registers */
#define STUB_DEPTH 16u
static char *handle_names[STUB_HANDLES];
static uint32_t handle_count;

static __thread uint32_t live_stack[STUB_DEPTH];
static __thread unsigned live_depth, live_underflows;

bool obs_ranges_init(const char *domain)
{
    (void)domain;
    return true;
}

bool obs_ranges_active(void)
{
    return true;
}

uint32_t obs_range_handle(const char *name, uint32_t argb)
{
    uint32_t i, h = 0;
    (void)argb;
    pthread_mutex_lock(&names_lock);
    for (i = 1; i <= handle_count && h == 0; i++)
        if (strcmp(handle_names[i], name) == 0)
            h = i;
    if (h == 0 && handle_count + 1 < STUB_HANDLES) {
        h = ++handle_count;
        handle_names[h] = strdup(name);
    }
    pthread_mutex_unlock(&names_lock);
    return h;
}

void obs_range_push(uint32_t handle)
{
    if (handle != 0 && live_depth < STUB_DEPTH)
        live_stack[live_depth++] = handle;
}

void obs_range_pop(void)
{
    if (live_depth == 0)
        live_underflows++;
    else
        live_depth--;
}

unsigned engine_stub_live_underflows(void)
{
    return live_underflows;
}

unsigned engine_stub_live_depth(void)
{
    return live_depth;
}

static void live_text(char *out, size_t len)
{
    size_t used = 0;
    unsigned i;
    out[0] = '\0';
    pthread_mutex_lock(&names_lock);
    for (i = 0; i < live_depth; i++) {
        int n = snprintf(out + used, len - used, "%s%s", i ? "|" : "", handle_names[live_stack[i]]);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    pthread_mutex_unlock(&names_lock);
}

/* ---- a hooked call, as intercept/wrapper.h makes it ----------------------------------------------- */

uint64_t engine_stub_call(const struct obs_rec_call *rec, uint16_t api, char *live_out, size_t live_len)
{
    struct obs_hooked_call call;
    union obs_record stored;
    struct obs_tbuf *b;
    bool phases;
    uint64_t index;

    memset(&call, 0, sizeof call);
    call.rec = *rec;
    obs_tls.depth = 1; /* obs_call_begin */
    obs_tls.call_counter++;
    phases = obs_phase_enabled();
    if (phases)
        obs_phase_before(&call, api);
    call.rec.type = OBS_REC_CALL;
    call.rec.api = api;
    call.rec.t_begin = engine_stub_now_ns(); /* unique: the caller advances the clock per call */
    if (live_out != NULL)
        live_text(live_out, live_len);
    b = thread_buffer();
    index = b->first_index + atomic_load(&b->used);
    stored.call = call.rec;
    append(&stored);
    obs_tls.depth = 0; /* obs_call_finish */
    if (phases)
        obs_phase_after(&call, api, 0);
    return index;
}
