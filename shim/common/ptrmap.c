/* Lock-free-read pointer map: see ptrmap.h. Tables come from mmap so that
 * the shim never touches the application's malloc heap from its hooks. */
#include "ptrmap.h"

#include <string.h>
#include <sys/mman.h>

#define OBS_PTRMAP_FIRST_CAPACITY 1024u

static struct obs_ptrmap_table *table_new(size_t capacity)
{
    size_t bytes = sizeof(struct obs_ptrmap_table) + capacity * sizeof(struct obs_ptrmap_slot);
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct obs_ptrmap_table *t;
    if (mem == MAP_FAILED)
        return NULL;
    t = mem; /* zero-filled: every slot empty */
    t->mask = capacity - 1;
    return t;
}

/* Store into t, which has room. */
static void table_store(struct obs_ptrmap_table *t, uintptr_t key, uint64_t value)
{
    size_t i;
    for (i = obs_ptrmap_hash(key) & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
        if (k == key) {
            atomic_store_explicit(&t->slots[i].value, value, memory_order_relaxed);
            return;
        }
        if (k == 0) {
            atomic_store_explicit(&t->slots[i].value, value, memory_order_relaxed);
            atomic_store_explicit(&t->slots[i].key, key, memory_order_release);
            t->used++;
            return;
        }
    }
}

int obs_ptrmap_put(struct obs_ptrmap *m, uintptr_t key, uint64_t value)
{
    struct obs_ptrmap_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (key == 0)
        return -1;
    if (t == NULL || (t->used + 1) * 2 > t->mask + 1) {
        /* Keep the load at most 1/2 so that probes stay short. */
        size_t capacity = t ? (t->mask + 1) * 2 : OBS_PTRMAP_FIRST_CAPACITY;
        struct obs_ptrmap_table *grown = table_new(capacity);
        size_t i;
        if (grown == NULL)
            return -1;
        for (i = 0; t != NULL && i <= t->mask; i++) {
            uintptr_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
            if (k != 0)
                table_store(grown, k, atomic_load_explicit(&t->slots[i].value, memory_order_relaxed));
        }
        grown->older = t;
        atomic_store_explicit(&m->table, grown, memory_order_release);
        t = grown;
    }
    table_store(t, key, value);
    return 0;
}

void obs_ptrmap_clear(struct obs_ptrmap *m)
{
    struct obs_ptrmap_table *t = atomic_load_explicit(&m->table, memory_order_relaxed);
    if (t == NULL)
        return;
    memset(t->slots, 0, (t->mask + 1) * sizeof t->slots[0]);
    t->used = 0;
}
