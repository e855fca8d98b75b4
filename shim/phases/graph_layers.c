/* The layers among a graph exec's kernel nodes: see graph_layers.h. */
#include "graph_layers.h"

#include <stdlib.h>

/* Three layers at least, as for a phase instance (the finder's runs of two
 * blocks): fewer is no repeated block, and no layers are claimed. */
#define MIN_LAYERS 3u

struct obs_layer_found obs_graph_node_layers(const uint32_t *names, uint32_t n, uint32_t hint,
                                             int (*norm_like)(uint32_t id), int start_named, uint16_t *layer_out)
{
    struct obs_layer_found f = {UINT32_MAX, 0, 0};
    struct obs_layer_work work = {0};
    struct obs_layer_cut *cuts;
    uint32_t *tables, i, j;

    for (i = 0; i < n; i++)
        layer_out[i] = 0xffffu;
    if (n == 0)
        return f;
    /* per name id: count, stamp, first, last (count and stamp zeroed, as the finder wants them before its first
     * call); per position: next, distinct, occ */
    tables = calloc(4u * OBS_LAYER_NAME_IDS + 3u * (size_t)n, sizeof *tables);
    cuts = malloc(OBS_GRAPH_LAYER_CUTS_MAX * sizeof *cuts);
    if (tables != NULL && cuts != NULL) {
        work.count = tables;
        work.stamp = work.count + OBS_LAYER_NAME_IDS;
        work.first = work.stamp + OBS_LAYER_NAME_IDS;
        work.last = work.first + OBS_LAYER_NAME_IDS;
        work.next = work.last + OBS_LAYER_NAME_IDS;
        work.distinct = work.next + n;
        work.occ = work.distinct + n;
        work.cap = n;
        work.norm_like = norm_like;
        work.start_named = start_named;
        f = obs_layers_find(names, n, hint, &work, cuts, OBS_GRAPH_LAYER_CUTS_MAX);
        if (f.layers < MIN_LAYERS) {
            f.layers = 0;
            f.anchor = UINT32_MAX;
        }
        for (i = 0; i < f.layers; i++)
            for (j = cuts[i].first; j <= cuts[i].last && j < n; j++)
                layer_out[j] = (uint16_t)(cuts[i].layer < 0xffffu ? cuts[i].layer : 0xfffeu);
    }
    free(tables);
    free(cuts);
    return f;
}
