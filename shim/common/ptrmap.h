/* A map from pointer-sized keys (kernel handles, stream handles, graph execs)
 * to 64-bit values whose lookups are lock-free: a lookup is a few plain
 * atomic loads, so the hot path can use it. Inserts are rare (first sight of
 * a handle) and are serialised by the caller (one writer at a time). The
 * table grows by publishing a copy twice the size; old tables are kept (never
 * freed) because a reader may still be probing one. Key 0 is reserved. */
#ifndef OBS_PTRMAP_H
#define OBS_PTRMAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct obs_ptrmap_slot {
    _Atomic uintptr_t key; /* 0 = empty; published after value */
    _Atomic uint64_t value;
};

struct obs_ptrmap_table {
    size_t mask; /* capacity - 1 (capacity a power of two) */
    size_t used;
    struct obs_ptrmap_table *older; /* kept alive for readers */
    struct obs_ptrmap_slot slots[];
};

struct obs_ptrmap {
    _Atomic(struct obs_ptrmap_table *) table; /* NULL until the first insert */
};

static inline size_t obs_ptrmap_hash(uintptr_t key)
{
    /* Handles are aligned pointers: drop the low bits, then mix. */
    uint64_t h = (uint64_t)(key >> 4) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20);
}

/* True and *value set when key is present. Lock-free; any thread. */
static inline bool obs_ptrmap_get(struct obs_ptrmap *m, uintptr_t key, uint64_t *value)
{
    struct obs_ptrmap_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
    size_t i;
    if (t == NULL || key == 0)
        return false;
    for (i = obs_ptrmap_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
        if (k == key) {
            *value = atomic_load_explicit(&t->slots[i].value, memory_order_relaxed);
            return true;
        }
        if (k == 0)
            return false;
    }
}

/* Insert or replace. The caller serialises writers. Returns 0, or -1 when
 * memory for the table could not be had (the entry is then missing). */
int obs_ptrmap_put(struct obs_ptrmap *m, uintptr_t key, uint64_t value);

/* Forget every entry (single-threaded use only: a fork child). */
void obs_ptrmap_clear(struct obs_ptrmap *m);

#endif
