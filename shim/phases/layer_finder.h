/* Finding a model's layers in one phase instance (a prompt, a decode step):
 * the launches' kernel name ids in order, and where the repeated block that
 * is a transformer layer begins and ends each time. docs/layers.md has the
 * method. Pure: no I/O, no allocation (the caller's workspace), so that
 * tests run it on any sequence. Called at phase boundaries, never per launch. */
#ifndef OBS_LAYER_FINDER_H
#define OBS_LAYER_FINDER_H

#include <stdint.h>

/* Name ids at or above this never anchor a layer (graph launches, names
 * beyond the per-name tables). */
#define OBS_LAYER_NAME_IDS 65536u

/* One layer found: positions [first, last] in the sequence. */
struct obs_layer_cut {
    uint32_t first, last;
    uint32_t layer;  /* k within its pass, from 0 */
    uint32_t pass;   /* passes through the stack within the instance (prompt chunks), from 0 */
};

/* What the finder keeps between calls and works in: per-name tables
 * (OBS_LAYER_NAME_IDS entries each, count and stamp zeroed before the
 * first call) and per-position ones (cap entries). */
struct obs_layer_work {
    uint32_t *count;  /* per name id: occurrences (zeroed again before returning) */
    uint32_t *stamp;  /* per name id: the block that last held it */
    uint32_t *first;  /* per name id: its first position, when count > 0 */
    uint32_t *last;   /* per name id: its last position, when count > 0 */
    uint32_t *next;   /* per position: the next position of the same name, UINT32_MAX: none */
    uint32_t *distinct; /* per position: the distinct name ids */
    uint32_t *occ;    /* per position: an anchor's positions */
    uint32_t stamp_now;
    uint32_t cap;
    /* whether a name id is a normalisation (its base name says "norm"), or
     * NULL: where the first layer's start is ambiguous, a layer begins at one */
    int (*norm_like)(uint32_t id);
    /* 1: norm_like says the kernel OBS_LAYER names, which begins every
     * layer: a layer begins at the launch of it nearest where the
     * launches before two anchors stop agreeing */
    int start_named;
};

/* The anchor found: the name whose occurrences mark one block per layer. */
struct obs_layer_found {
    uint32_t anchor;  /* name id, UINT32_MAX when no layers were found */
    uint32_t layers;  /* cuts written */
    uint32_t passes;
};

/* Find the layers of names[0 .. n) (n <= work->cap). Writes at most max
 * cuts in order. hint: the anchor found in an earlier instance of the
 * same kind, tried first (UINT32_MAX: none). */
struct obs_layer_found obs_layers_find(const uint32_t *names, uint32_t n, uint32_t hint, struct obs_layer_work *work,
                                       struct obs_layer_cut *cuts, uint32_t max);

#endif
