/* The layers among a graph exec's kernel nodes: see graph_layers.h. */
#include "graph_layers.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Three layers at least, as for a phase instance (the finder's runs of two
 * blocks): fewer is no repeated block, and no layers are claimed. */
#define MIN_LAYERS 3u

/* One workspace for the process, kept between instantiations: its per-name
 * tables are 1 MB, which would be mapped and faulted in each time (the
 * finder leaves count zeroed and stamp usable, so it need not be). An
 * instantiation that finds it busy (another thread's, or a child forked
 * while it was held) works in a fresh one. */
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obs_layer_work shared;
static uint32_t *shared_per_position, shared_cap;
static struct obs_layer_cut shared_cuts[OBS_GRAPH_LAYER_CUTS_MAX];

/* The last sequence searched with the shared workspace and what was found:
 * graphs captured for several batch sizes (vLLM's) have the same kernels in
 * the same order, and get their layers with a compare instead of a search,
 * as a repeated decode step does in the phase engine. */
static struct {
    uint32_t *names;
    uint16_t *layer;
    uint32_t n, cap, hint;
    int (*norm_like)(uint32_t id);
    int start_named;
    struct obs_layer_found found;
} memo;

static int memo_hit(const uint32_t *names, uint32_t n, uint32_t hint, int (*norm_like)(uint32_t id), int start_named)
{
    return memo.names != NULL && memo.n == n && memo.hint == hint && memo.norm_like == norm_like &&
           memo.start_named == start_named && memcmp(memo.names, names, n * sizeof *names) == 0;
}

static void memo_keep(const uint32_t *names, uint32_t n, uint32_t hint, int (*norm_like)(uint32_t id),
                      int start_named, const uint16_t *layer, struct obs_layer_found f)
{
    if (n > memo.cap) {
        uint32_t *nn = realloc(memo.names, (size_t)n * sizeof *nn);
        uint16_t *nl;
        if (nn == NULL)
            return;
        memo.names = nn;
        nl = realloc(memo.layer, (size_t)n * sizeof *nl);
        if (nl == NULL) {
            memo.n = 0;
            return;
        }
        memo.layer = nl;
        memo.cap = n;
    }
    memcpy(memo.names, names, (size_t)n * sizeof *names);
    memcpy(memo.layer, layer, (size_t)n * sizeof *layer);
    memo.n = n;
    memo.hint = hint;
    memo.norm_like = norm_like;
    memo.start_named = start_named;
    memo.found = f;
}

#define NAME_TABLES_BYTES (4u * (size_t)OBS_LAYER_NAME_IDS * sizeof(uint32_t))

/* The per-name tables (count, stamp, first, last; zeroed) into w, or -1.
 * Mapped, not calloc'ed: fresh pages come zeroed, where calloc may clear
 * the whole megabyte by hand (most of an instantiation's cost). */
static int name_tables(struct obs_layer_work *w)
{
    uint32_t *t = mmap(NULL, NAME_TABLES_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        return -1;
    w->count = t;
    w->stamp = t + OBS_LAYER_NAME_IDS;
    w->first = w->stamp + OBS_LAYER_NAME_IDS;
    w->last = w->first + OBS_LAYER_NAME_IDS;
    return 0;
}

/* Per-position tables (next, distinct, occ) of n entries from t. */
static void position_tables(struct obs_layer_work *w, uint32_t *t, uint32_t n)
{
    w->next = t;
    w->distinct = t + n;
    w->occ = t + 2u * (size_t)n;
    w->cap = n;
}

static struct obs_layer_found find(const uint32_t *names, uint32_t n, uint32_t hint, struct obs_layer_work *w,
                                   struct obs_layer_cut *cuts, uint16_t *layer_out)
{
    struct obs_layer_found f = obs_layers_find(names, n, hint, w, cuts, OBS_GRAPH_LAYER_CUTS_MAX);
    uint32_t i, j;
    if (f.layers < MIN_LAYERS) {
        f.layers = 0;
        f.anchor = UINT32_MAX;
    }
    for (i = 0; i < f.layers; i++)
        for (j = cuts[i].first; j <= cuts[i].last && j < n; j++)
            layer_out[j] = (uint16_t)(cuts[i].layer < 0xffffu ? cuts[i].layer : 0xfffeu);
    return f;
}

/* The shared workspace, grown to n positions; 0, or -1 (no memory: the caller works in its own). */
static int shared_ready(uint32_t n)
{
    if (shared.count == NULL && name_tables(&shared) != 0)
        return -1;
    if (n > shared_cap) {
        uint32_t *t = realloc(shared_per_position, 3u * (size_t)n * sizeof *t);
        if (t == NULL)
            return -1;
        shared_per_position = t;
        shared_cap = n;
    }
    position_tables(&shared, shared_per_position, shared_cap);
    return 0;
}

struct obs_layer_found obs_graph_node_layers(const uint32_t *names, uint32_t n, uint32_t hint,
                                             int (*norm_like)(uint32_t id), int start_named, uint16_t *layer_out)
{
    struct obs_layer_found f = {UINT32_MAX, 0, 0};
    struct obs_layer_work own = {0};
    struct obs_layer_cut *cuts;
    uint32_t *per_position;
    uint32_t i;

    for (i = 0; i < n; i++)
        layer_out[i] = 0xffffu;
    if (n == 0)
        return f;
    if (pthread_mutex_trylock(&shared_lock) == 0) {
        if (memo_hit(names, n, hint, norm_like, start_named)) {
            memcpy(layer_out, memo.layer, (size_t)n * sizeof *layer_out);
            f = memo.found;
            pthread_mutex_unlock(&shared_lock);
            return f;
        }
        if (shared_ready(n) == 0) {
            shared.norm_like = norm_like;
            shared.start_named = start_named;
            f = find(names, n, hint, &shared, shared_cuts, layer_out);
            memo_keep(names, n, hint, norm_like, start_named, layer_out, f);
            pthread_mutex_unlock(&shared_lock);
            return f;
        }
        pthread_mutex_unlock(&shared_lock);
    }
    cuts = malloc(OBS_GRAPH_LAYER_CUTS_MAX * sizeof *cuts);
    per_position = malloc(3u * (size_t)n * sizeof *per_position);
    if (cuts != NULL && per_position != NULL && name_tables(&own) == 0) {
        position_tables(&own, per_position, n);
        own.norm_like = norm_like;
        own.start_named = start_named;
        f = find(names, n, hint, &own, cuts, layer_out);
    }
    if (own.count != NULL)
        munmap(own.count, NAME_TABLES_BYTES);
    free(per_position);
    free(cuts);
    return f;
}
