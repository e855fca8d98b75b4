/* Live ranges (ranges.h): names interned into handles off the hot path, and
 * push/pop by handle into every sink that loaded (NVTX tool, roctx).
 *
 * A handle indexes a table of entries built once at registration: the
 * interned name (for roctx) and a ready NVTX event-attributes struct (the
 * registered string and the colour), so that a push passes a pointer and
 * builds nothing. The table grows in fixed chunks published with atomics;
 * entries never move or change once their handle is returned. */
#include "ranges.h"

#include "common/common.h"
#include "range_sinks.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_CHUNK_SHIFT 8
#define RANGE_CHUNK_SIZE (1u << RANGE_CHUNK_SHIFT)
#define RANGE_CHUNKS 256u
#define RANGE_MAX_HANDLE (RANGE_CHUNK_SIZE * RANGE_CHUNKS - 1u) /* handle 0 means none */
#define RANGE_HASH_SIZE (1u << 17)                              /* > 2 x the handles */

struct range_entry {
    struct obs_nvtx_event_attributes nvtx_attr;
    const char *name;
};

static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static bool ranges_initialised;             /* under ranges_lock */
static atomic_bool ranges_on;               /* some sink loaded */
static struct range_entry *_Atomic range_chunks[RANGE_CHUNKS];
static _Atomic uint32_t range_count;        /* handles 1 .. range_count are valid */
static uint32_t *range_hash;                /* name -> handle, open addressing; under ranges_lock */
static atomic_int range_full_warned;

/* This thread's pushes not yet popped: pops beyond them are ignored. */
static __thread uint32_t range_depth __attribute__((tls_model("initial-exec")));
/* A leaf range is open on top of them (obs_range_push_leaf). */
static __thread bool range_leaf __attribute__((tls_model("initial-exec")));

bool obs_ranges_init(const char *domain)
{
    pthread_mutex_lock(&ranges_lock);
    if (!ranges_initialised) {
        int saved_errno = errno;
        bool nvtx = obs_nvtx_attach(domain != NULL ? domain : "obsshim");
        bool roctx = obs_roctx_load();
        ranges_initialised = true;
        atomic_store_explicit(&ranges_on, nvtx || roctx, memory_order_release);
        errno = saved_errno;
    }
    pthread_mutex_unlock(&ranges_lock);
    return obs_ranges_active();
}

bool obs_ranges_active(void)
{
    return atomic_load_explicit(&ranges_on, memory_order_acquire);
}

static struct range_entry *range_entry_at(uint32_t handle)
{
    struct range_entry *chunk = atomic_load_explicit(&range_chunks[handle >> RANGE_CHUNK_SHIFT],
                                                     memory_order_acquire);
    return &chunk[handle & (RANGE_CHUNK_SIZE - 1)];
}

/* A new entry for name; 0 when the table is full or memory is short.
 * Called with ranges_lock held. */
static uint32_t range_add(const char *name, uint32_t argb)
{
    uint32_t handle = atomic_load_explicit(&range_count, memory_order_relaxed) + 1;
    if (handle > RANGE_MAX_HANDLE)
        return 0;
    uint32_t chunk_index = handle >> RANGE_CHUNK_SHIFT;
    struct range_entry *chunk = atomic_load_explicit(&range_chunks[chunk_index], memory_order_relaxed);
    if (chunk == NULL) {
        chunk = calloc(RANGE_CHUNK_SIZE, sizeof *chunk);
        if (chunk == NULL)
            return 0;
        atomic_store_explicit(&range_chunks[chunk_index], chunk, memory_order_release);
    }
    char *copy = strdup(name);
    if (copy == NULL)
        return 0;
    struct range_entry *e = &chunk[handle & (RANGE_CHUNK_SIZE - 1)];
    e->name = copy;
    obs_nvtx_describe(&e->nvtx_attr, copy, argb); /* registers the string with the tool */
    atomic_store_explicit(&range_count, handle, memory_order_release);
    return handle;
}

uint32_t obs_range_handle(const char *name, uint32_t argb)
{
    if (name == NULL || !obs_ranges_active())
        return 0;
    int saved_errno = errno;
    uint32_t handle = 0;
    pthread_mutex_lock(&ranges_lock);
    if (range_hash == NULL)
        range_hash = calloc(RANGE_HASH_SIZE, sizeof *range_hash);
    if (range_hash != NULL) {
        uint32_t slot = obs_name_hash(name) & (RANGE_HASH_SIZE - 1);
        while (range_hash[slot] != 0 && strcmp(range_entry_at(range_hash[slot])->name, name) != 0)
            slot = (slot + 1) & (RANGE_HASH_SIZE - 1);
        handle = range_hash[slot];
        if (handle == 0) {
            handle = range_add(name, argb);
            if (handle != 0)
                range_hash[slot] = handle;
        }
    }
    pthread_mutex_unlock(&ranges_lock);
    if (handle == 0)
        obs_log_warn_once(&range_full_warned,
                          "no room for more range names (at most %u); some phases are not "
                          "emitted as ranges", RANGE_MAX_HANDLE);
    errno = saved_errno;
    return handle;
}

static void push_handle(uint32_t handle)
{
    const struct range_entry *e = range_entry_at(handle);
    int saved_errno = errno; /* called inside the app's API calls */
    range_depth++;
    obs_nvtx_push(&e->nvtx_attr);
    obs_roctx_push(e->name);
    errno = saved_errno;
}

static void pop_one(void)
{
    int saved_errno = errno;
    range_depth--;
    obs_roctx_pop();
    obs_nvtx_pop();
    errno = saved_errno;
}

void obs_range_pop_leaf(void)
{
    if (!range_leaf)
        return;
    range_leaf = false;
    if (range_depth > 0)
        pop_one();
}

void obs_range_push(uint32_t handle)
{
    if (handle == 0 || handle > atomic_load_explicit(&range_count, memory_order_acquire))
        return;
    obs_range_pop_leaf();
    push_handle(handle);
}

void obs_range_pop(void)
{
    obs_range_pop_leaf();
    if (range_depth == 0)
        return;
    pop_one();
}

void obs_range_push_leaf(uint32_t handle)
{
    if (handle == 0 || handle > atomic_load_explicit(&range_count, memory_order_acquire))
        return;
    obs_range_pop_leaf();
    push_handle(handle);
    range_leaf = true;
}
