/* The traces of all ranks of a run side by side (obs-report ranks;
 * docs/ranks.md): NCCL collectives matched across the traces by their
 * communicator's identity (COMM hash) and the communicator's sequence
 * number, and per matched collective its arrival skew (first to last
 * rank's call begin), its straggler (the rank that called last), its
 * duration and bus bandwidth (nccl-tests' conventions, trace_colls.h); per
 * decode step (generation, DECODE/STEP_k) of each rank the compute and
 * communication split and the slowest rank. Every output (the report's
 * tables, the Perfetto rank tracks, the HTML charts) reads this one model.
 *
 * Times: each trace's host CLOCK_MONOTONIC, on one axis. Traces of one boot
 * of one host (the same boot_id meta value on all, or none has one and all
 * have the same host) read one clock: no offset. Otherwise each trace's
 * times are moved by its own start pair (start_real_ns - start_mono_ns)
 * minus the first trace's, as `obs-report merge --clock realtime` does. */
#ifndef OBS_TRACE_RANKS_H
#define OBS_TRACE_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"

/* One trace (one process, a rank). */
struct obs_rank_input {
    const struct obs_trace *t;
    long rank;        /* the trace's "rank" meta value when every trace has one, else its position */
    int64_t offset;   /* ns added to its times to put them on the common axis */
    int gpu_time;     /* the trace has per-call GPU spans */
    uint64_t colls;   /* its collectives and point-to-point calls with a communicator and a sequence number */
    uint64_t matched; /* ... of them in a matched collective */
    uint64_t straggled; /* matched collectives it called last (with a skew > 0) */
    uint64_t skew_caused_ns; /* the sum of their skews: the time the others waited for it */
    uint64_t comm_ns; /* its own duration summed over its matched collectives */
};

/* One rank's part in a collective. */
struct obs_rank_part {
    uint32_t input; /* index into ranks->inputs */
    uint32_t coll;  /* index into that trace's colls */
    uint64_t arrive, end; /* the call's host begin and end on the common axis */
    uint64_t dur_ns;      /* its duration: the GPU span of the kernels it caused (gpu), else the host span of
                             the call that launched it (the call, or its group's ncclGroupEnd) */
    int gpu;              /* dur_ns is GPU time */
};

/* A collective (or a send and its receive) matched across the traces. */
struct obs_rank_coll {
    uint64_t hash;     /* the communicator's identity */
    uint32_t seq;      /* its sequence number there */
    uint8_t op;        /* the first part's operation (a point-to-point pair: OBS_COLL_SEND) */
    uint8_t p2p;       /* a send and a receive */
    int32_t nranks;    /* the communicator's size (from the first part's COMM record; -1 unknown) */
    size_t parts_first; /* ranks->parts[parts_first .. parts_first + nparts - 1], by arrival */
    uint32_t nparts;
    int complete;      /* a part from each rank it needs: nranks for a collective, two for a send/receive */
    uint64_t first_arrival, last_arrival, skew_ns; /* last - first */
    long first_rank, straggler; /* the ranks (obs_rank_input.rank) that called first and last */
    uint32_t straggler_input;
    uint64_t duration_ns; /* the longest part's duration */
    int gpu;              /* every part's duration is GPU time ("gpu"); else "host" */
    uint64_t bytes;       /* what it moves (obs_coll_bytes, the first part's) */
    double bus_factor;    /* obs_coll_bus_factor(op, nranks) */
    double algbw_gbs, busbw_gbs; /* bytes / duration, x bus_factor (GB/s = bytes/ns); 0 when duration is 0 */
    uint32_t generation, step; /* the first part's decode step (UINT32_MAX: none) */
};

/* One rank's share of a decode step. */
struct obs_rank_step_cell {
    int present;        /* the rank ran this step */
    uint64_t begin;     /* its first begin on the common axis */
    uint64_t step_ns;   /* the step's span: first begin to last end of its calls and collectives (GPU time
                           of its calls in gpu mode) */
    uint64_t comm_ns;   /* its collectives' durations (each launching call once) */
    uint64_t compute_ns; /* host: step_ns - comm_ns (time outside NCCL calls); gpu: its other kernels' GPU time */
    uint32_t colls;     /* collectives and point-to-point calls in it */
};

/* A decode step (generation, step) across the ranks. */
struct obs_rank_step {
    uint32_t generation, step;
    int gpu;           /* every present rank measured it in GPU time */
    uint32_t ranks;    /* ranks that ran it */
    uint32_t slowest_input; /* the present rank with the longest step_ns */
    long slowest;      /* its rank */
    struct obs_rank_step_cell *cells; /* ninputs cells, by input */
};

struct obs_ranks {
    struct obs_rank_input *inputs;
    size_t ninputs;
    struct obs_rank_coll *colls; /* by first arrival */
    size_t ncolls;
    size_t complete;       /* colls that are complete */
    struct obs_rank_part *parts;
    size_t nparts;
    struct obs_rank_step *steps; /* by generation, step */
    size_t nsteps;
    uint64_t unmatched;    /* parts in an incomplete collective (a rank's trace missing, a rank given twice) */
    int shared_clock;      /* 1: one CLOCK_MONOTONIC for all; 0: moved by their start pairs */
    int gpu_time;          /* every trace has GPU spans */
    uint64_t axis0;        /* the earliest time of any input on the common axis */
};

/* The trace's "rank" meta value (the shim's RANK, OMPI_COMM_WORLD_RANK ...)
 * as a number >= 0, or -1 (none, not a number). */
long obs_trace_rank(const struct obs_trace *t);

/* Build the model of n traces (in rank order or not: ranks come from the
 * "rank" meta values). Returns 0, or -1 when out of memory. */
int obs_ranks_build(const struct obs_trace *const *t, size_t n, struct obs_ranks *out);
void obs_ranks_free(struct obs_ranks *r);

/* The collective's parts. */
static inline const struct obs_rank_part *obs_rank_coll_parts(const struct obs_ranks *r, const struct obs_rank_coll *c)
{
    return &r->parts[c->parts_first];
}

/* "AllReduce", ... ; a send/receive pair: "SendRecv". */
const char *obs_rank_coll_name(const struct obs_rank_coll *c);

/* The matched collective of (hash, seq), or NULL. */
const struct obs_rank_coll *obs_ranks_find(const struct obs_ranks *r, uint64_t hash, uint32_t seq);

/* The collectives' indexes by skew, largest first (ties: by first arrival);
 * malloc'ed, r->ncolls entries, or NULL when out of memory. Only complete
 * ones when complete_only (*n gets the count). */
uint32_t *obs_ranks_by_skew(const struct obs_ranks *r, int complete_only, size_t *n);

#endif
