/* The model layers among a graph exec's kernel nodes: the node sequence
 * (name ids in walk order, the capture order of a stream-captured graph)
 * given to the same layer finder a phase instance's launches go to
 * (layer_finder.h), once per instantiation, never per launch. The phase
 * engine supplies its settings (obs_phase_graph_layers, phase_engine.h);
 * docs/layers.md, "Graphs". */
#ifndef OBS_GRAPH_LAYERS_H
#define OBS_GRAPH_LAYERS_H

#include <stdint.h>

#include "layer_finder.h"

/* Layers of one graph that fit a node's u16 (trace_format.h GRAPH_NODES). */
#define OBS_GRAPH_LAYER_CUTS_MAX 1024u

/* Finds the layers of names[0 .. n) and writes each node's layer k into
 * layer_out[0 .. n) (0xffff: before the first layer, after the last, or no
 * layers found). hint, norm_like, start_named: as the engine gives the
 * finder for an eager instance (layer_finder.h). Thread-safe; the
 * finder's workspace (1 MB of per-name tables) is allocated once and kept
 * for the next instantiation. Returns what the finder found (anchor UINT32_MAX,
 * layers 0: none, or no memory). */
struct obs_layer_found obs_graph_node_layers(const uint32_t *names, uint32_t n, uint32_t hint,
                                             int (*norm_like)(uint32_t id), int start_named, uint16_t *layer_out);

#endif
