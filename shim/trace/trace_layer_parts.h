/* EMBED and HEAD: the calls of a phase instance (a prompt's PREFILL, one
 * decode step) before its first layer and after its last (docs/layers.md,
 * "Reports"). Derived by the readers from the calls' layers (LAYER
 * records) and their phase, generation and step; the shim writes no record
 * and pushes no live range for them.
 *
 * A phase instance is a run of a thread's calls, in its record order, with
 * one generation and step and PREFILL (or not: DECODE and its KV_GATHER);
 * calls with no phase are in none. A pass through the layer stack is a run
 * of its layered calls whose layer numbers do not go down (a prompt in
 * chunks passes once per chunk, each from LAYER/0). In an instance with
 * layers, the calls before the first pass's first layered call are its
 * EMBED, those after the last pass's last layered call its HEAD (up to the
 * instance's end: the sampling, a token read). Between two passes, the calls
 * are the earlier pass's HEAD, then the later one's EMBED from a kernel
 * launch: the split that leaves the most kernels seen only in the
 * instance's last HEAD (a final norm, an LM head) before it and the most
 * seen only in its first EMBED (an embedding lookup) after it; among those,
 * the first kernel of the longest run of kernels that ends the stretch and
 * repeats, name by name, the end of the first EMBED (the embedding run
 * again) where that run starts at one, else the last (HEAD alone where
 * that is the stretch's end). A later pass may skip part of the first
 * EMBED (Hugging Face checks the attention mask in its first forward only):
 * such a run stops short of its lookup. */
#ifndef OBS_TRACE_LAYER_PARTS_H
#define OBS_TRACE_LAYER_PARTS_H

#include <stdint.h>

#include "trace_reader.h"

enum obs_layer_part { OBS_LAYER_PART_NONE = 0, OBS_LAYER_PART_EMBED = 1, OBS_LAYER_PART_HEAD = 2 };

/* Per call (t->calls' order): its part, OBS_LAYER_PART_NONE for a call in
 * a layer or in an instance with none. malloc'ed (t->ncalls bytes, at
 * least 1), NULL when out of memory. */
uint8_t *obs_layer_parts(const struct obs_trace *t);

#endif
