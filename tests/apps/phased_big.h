/* Large synthetic traces with phases, for timing `obs-report phases` and
 * `suggest-phases` (mktrace phased): LLM-shaped generations per thread,
 * labelled with BEGIN/END PHASE records as the phase engine writes them.
 *
 * Each generation: PREFILL (a host-to-device copy, `layers` x (a
 * prefill-only kernel, a shared kernel with a large grid), a synchronous
 * 4-byte device-to-host copy), then `steps` decode steps DECODE/STEP_k
 * (steps 1.. inside DECODE/STEADY), each a KV_GATHER range with one
 * gather kernel, `layers` x (a decode-only kernel, a shared kernel with a
 * small grid, one of two kernels with the same base name), a synchronous
 * 4-byte token copy. The kernel names (nkernels of them, at least 8) are
 * spread over the four groups (prefill-only, decode-only, shared, KV),
 * every one launched. A thread stops at the generation that would pass
 * its share of n calls, so the trace has at most n calls. */
#ifndef OBS_PHASED_BIG_H
#define OBS_PHASED_BIG_H

#include <stdint.h>

struct phased_big_opts {
    uint64_t calls;     /* at most this many calls in all */
    unsigned threads;   /* host threads (tids 6000 ...) */
    unsigned kernels;   /* distinct kernel names */
    unsigned layers;    /* per iteration */
    unsigned steps;     /* decode steps per generation */
    int gpu;            /* a GPU span per launch and copy */
};

/* Returns 0 or -errno. */
int phased_big_write(const char *path, const struct phased_big_opts *o);

#endif
