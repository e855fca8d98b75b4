/* The ranks of a run as one native Perfetto trace (obs-report ranks
 * --perfetto; docs/ranks.md): one process track per rank (its trace's pid,
 * moved by 10000000 when an earlier rank has it, named "rank R: FILE (pid
 * P)"), under it a "collectives" track with one slice per collective the
 * rank took part in (its call's host span on the common axis of
 * trace_ranks.h, named after the operation, an "nccl" annotation with the
 * sequence number, bytes, skew, straggler, duration and bus bandwidth) and
 * a "steps" track with one slice per decode step (its compute and
 * communication split); and a flow per collective through its ranks'
 * slices in arrival order, ending on the straggler's (flow id = the
 * collective's index in ranks->colls + 1). Timestamps: absolute
 * CLOCK_MONOTONIC ns of the common axis, one packet sequence, every
 * packet sorted by time. */
#ifndef OBS_TRACE_RANKS_PERFETTO_H
#define OBS_TRACE_RANKS_PERFETTO_H

#include <stdint.h>
#include <stdio.h>

#include "trace_ranks.h"

struct obs_ranks_perfetto_counts {
    uint64_t packets, process_tracks, coll_slices, step_slices, flows;
};

/* paths[i]: the name shown for input i (NULL: the trace's own path).
 * counts may be NULL. Returns 0, or -1 with errno set (a write error, out
 * of memory). */
int obs_ranks_perfetto(const struct obs_ranks *r, const char *const *paths, FILE *out,
                       struct obs_ranks_perfetto_counts *counts);

#endif
