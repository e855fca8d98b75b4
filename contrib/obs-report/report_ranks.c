/* obs-report ranks: the tables of the ranks of a run side by side, from
 * the model of trace_ranks.h (columns: docs/ranks.md):
 *   ranks:          per rank: its collectives, matched, how often it was the
 *                   straggler and the skew it caused, its communication time;
 *   rank_skew:      the collectives with the largest arrival skew;
 *   collective_ops: per operation: count, bytes, skew, duration, bus bandwidth;
 *   steps:          per decode step: the slowest rank, its compute and
 *                   communication split;
 *   collectives:    (all_colls) every matched collective. */
#include "reports.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *file_of(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s && s[1] ? s + 1 : path ? path : "";
}

static void ranks_table(const struct obs_ranks *r, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Rank", "rank", RT_INT, 0},
        {"Pid", "pid", RT_UINT, 0},
        {"Collectives", "collectives", RT_UINT, 0},
        {"Matched", "matched", RT_UINT, 0},
        {"Straggler", "straggler_count", RT_UINT, 0},
        {"Skew Caused (ns)", "skew_caused_ns", RT_UINT, 0},
        {"Comm (ns)", "comm_ns", RT_UINT, 0},
        {"Time Base", "time_base", RT_TEXT, 0},
        {"File", "file", RT_TEXT, 0},
    };
    size_t i;
    rt_init(tb, "ranks", cols, sizeof cols / sizeof cols[0], "Ranks: collectives, stragglers (%zu ranks)",
            r->ninputs);
    for (i = 0; i < r->ninputs; i++) {
        const struct obs_rank_input *in = &r->inputs[i];
        rt_row(tb);
        rt_int(tb, in->rank);
        rt_uint(tb, in->t->pid);
        rt_uint(tb, in->colls);
        rt_uint(tb, in->matched);
        rt_uint(tb, in->straggled);
        rt_uint(tb, in->skew_caused_ns);
        rt_uint(tb, in->comm_ns);
        rt_text(tb, in->gpu_time ? "gpu" : "host");
        rt_text(tb, file_of(in->t->path));
    }
    rt_note(tb, " Straggler: the matched collectives it called last (skew > 0); skew caused: the sum of their "
                "skews.");
}

#define COLL_COLS                                                                                            \
    {"Operation", "op", RT_TEXT, 0}, {"Seq", "seq", RT_UINT, 0}, {"Comm", "comm", RT_TEXT, 0},             \
        {"Bytes", "bytes", RT_UINT, 0}, {"Skew (ns)", "skew_ns", RT_UINT, 0},                              \
        {"First", "first_rank", RT_INT, 0}, {"Straggler", "straggler", RT_INT, 0},                         \
        {"Duration (ns)", "duration_ns", RT_UINT, 0}, {"BusBw (GB/s)", "busbw_gbs", RT_REAL, 3},           \
        {"Time Base", "time_base", RT_TEXT, 0}

static void coll_cells(const struct obs_rank_coll *c, struct rtable *tb)
{
    char comm[24];
    snprintf(comm, sizeof comm, "%016llx", (unsigned long long)c->hash);
    rt_text(tb, obs_rank_coll_name(c));
    rt_uint(tb, c->seq);
    rt_text(tb, comm);
    rt_uint(tb, c->bytes);
    rt_uint(tb, c->skew_ns);
    rt_int(tb, c->first_rank);
    rt_int(tb, c->straggler);
    rt_uint(tb, c->duration_ns);
    rt_real(tb, c->busbw_gbs);
    rt_text(tb, c->gpu ? "gpu" : "host");
}

static int skew_table(const struct obs_ranks *r, size_t top, struct rtable *tb)
{
    static const struct rt_col cols[] = {COLL_COLS, {"Step", "step", RT_UINT, 0}};
    size_t n, i;
    uint32_t *order = obs_ranks_by_skew(r, 1, &n);
    if (order == NULL)
        return -1;
    rt_init(tb, "rank_skew", cols, sizeof cols / sizeof cols[0], "Top %zu collectives by arrival skew",
            n < top ? n : top);
    tb->empty = " no collective matched on every rank";
    for (i = 0; i < n && i < top; i++) {
        const struct obs_rank_coll *c = &r->colls[order[i]];
        rt_row(tb);
        coll_cells(c, tb);
        if (c->step != UINT32_MAX)
            rt_uint(tb, c->step);
        else
            rt_null(tb);
    }
    rt_note(tb, " Skew: the last rank's call begin - the first's; duration: the slowest rank's (GPU time of its "
                "kernels, else the host span of the call that launched them).");
    free(order);
    return 0;
}

static void all_colls_table(const struct obs_ranks *r, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        COLL_COLS,
        {"Ranks", "nranks", RT_INT, 0},
        {"Parts", "parts", RT_UINT, 0},
        {"Complete", "complete", RT_UINT, 0},
        {"First Arrival (ns)", "first_arrival_ns", RT_UINT, 0},
        {"Bus Factor", "bus_factor", RT_REAL, 4},
        {"AlgBw (GB/s)", "algbw_gbs", RT_REAL, 3},
        {"Generation", "generation", RT_UINT, 0},
        {"Step", "step", RT_UINT, 0},
    };
    size_t i;
    rt_init(tb, "collectives", cols, sizeof cols / sizeof cols[0], "Collectives across the ranks (%zu)", r->ncolls);
    for (i = 0; i < r->ncolls; i++) {
        const struct obs_rank_coll *c = &r->colls[i];
        rt_row(tb);
        coll_cells(c, tb);
        rt_int(tb, c->nranks);
        rt_uint(tb, c->nparts);
        rt_uint(tb, (uint64_t)c->complete);
        rt_uint(tb, c->first_arrival - r->axis0);
        rt_real(tb, c->bus_factor);
        rt_real(tb, c->algbw_gbs);
        if (c->step != UINT32_MAX) {
            rt_uint(tb, c->generation);
            rt_uint(tb, c->step);
        } else {
            rt_null(tb);
            rt_null(tb);
        }
    }
    rt_note(tb, " First arrival: ns after the earliest input's start on the common axis.");
}

static void ops_table(const struct obs_ranks *r, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Count", "count", RT_UINT, 0},         {"Bytes", "bytes", RT_UINT, 0},
        {"Skew Avg (ns)", "skew_avg_ns", RT_REAL, 1}, {"Skew Max (ns)", "skew_max_ns", RT_UINT, 0},
        {"Duration Avg (ns)", "duration_avg_ns", RT_REAL, 1}, {"BusBw Avg (GB/s)", "busbw_avg_gbs", RT_REAL, 3},
        {"Operation", "op", RT_TEXT, 0},
    };
    size_t op;
    rt_init(tb, "collective_ops", cols, sizeof cols / sizeof cols[0], "Collectives by operation");
    tb->empty = " no collective matched on every rank";
    for (op = 0; op <= OBS_COLL_COUNT; op++) { /* OBS_COLL_COUNT: the send/receive pairs */
        uint64_t n = 0, bytes = 0, skew = 0, skew_max = 0, dur = 0;
        double bw = 0;
        size_t i;
        const char *name = NULL;
        for (i = 0; i < r->ncolls; i++) {
            const struct obs_rank_coll *c = &r->colls[i];
            if (!c->complete || (op == OBS_COLL_COUNT ? !c->p2p : c->p2p || c->op != op))
                continue;
            name = obs_rank_coll_name(c);
            n++;
            bytes += c->bytes;
            skew += c->skew_ns;
            skew_max = c->skew_ns > skew_max ? c->skew_ns : skew_max;
            dur += c->duration_ns;
            bw += c->busbw_gbs;
        }
        if (n == 0)
            continue;
        rt_row(tb);
        rt_uint(tb, n);
        rt_uint(tb, bytes);
        rt_real(tb, (double)skew / (double)n);
        rt_uint(tb, skew_max);
        rt_real(tb, (double)dur / (double)n);
        rt_real(tb, bw / (double)n);
        rt_text(tb, name);
    }
}

static void steps_table(const struct obs_ranks *r, struct rtable *tb)
{
    static const struct rt_col cols[] = {
        {"Generation", "generation", RT_UINT, 0},
        {"Step", "step", RT_UINT, 0},
        {"Ranks", "ranks", RT_UINT, 0},
        {"Slowest", "slowest_rank", RT_INT, 0},
        {"Step (ns)", "step_ns", RT_UINT, 0},
        {"Fastest (ns)", "fastest_step_ns", RT_UINT, 0},
        {"Compute (ns)", "compute_ns", RT_UINT, 0},
        {"Comm (ns)", "comm_ns", RT_UINT, 0},
        {"Comm %", "comm_pct", RT_REAL, 1},
        {"Collectives", "collectives", RT_UINT, 0},
        {"Time Base", "time_base", RT_TEXT, 0},
    };
    size_t i, k;
    rt_init(tb, "steps", cols, sizeof cols / sizeof cols[0], "Decode steps across the ranks (%zu)", r->nsteps);
    tb->empty = " no decode steps (no PHASE records with steps)";
    for (i = 0; i < r->nsteps; i++) {
        const struct obs_rank_step *st = &r->steps[i];
        const struct obs_rank_step_cell *c = &st->cells[st->slowest_input];
        uint64_t fastest = UINT64_MAX;
        for (k = 0; k < r->ninputs; k++)
            if (st->cells[k].present && st->cells[k].step_ns < fastest)
                fastest = st->cells[k].step_ns;
        rt_row(tb);
        rt_uint(tb, st->generation);
        rt_uint(tb, st->step);
        rt_uint(tb, st->ranks);
        rt_int(tb, st->slowest);
        rt_uint(tb, c->step_ns);
        rt_uint(tb, fastest);
        rt_uint(tb, c->compute_ns);
        rt_uint(tb, c->comm_ns);
        if (c->comm_ns + c->compute_ns > 0)
            rt_real(tb, 100.0 * (double)c->comm_ns / (double)(c->comm_ns + c->compute_ns));
        else
            rt_null(tb);
        rt_uint(tb, c->colls);
        rt_text(tb, st->gpu ? "gpu" : "host");
    }
    rt_note(tb, " The slowest rank's figures. Host: compute = the step's span - its NCCL calls' time; GPU: its other "
                "kernels' GPU time.");
}

int report_ranks(const struct obs_ranks *r, size_t top, int all_colls, struct report_doc *d)
{
    struct rtable tb;
    int failed = 0;
    rdoc_note(d, "%zu ranks, %zu collectives matched on every rank, %zu incomplete (%llu calls); clock: %s", r->ninputs,
              r->complete, r->ncolls - r->complete, (unsigned long long)r->unmatched,
              r->shared_clock ? "one CLOCK_MONOTONIC" : "each trace's own, aligned by its start pair");
    ranks_table(r, &tb);
    rdoc_table(d, &tb);
    failed |= tb.failed;
    rt_free(&tb);
    if (skew_table(r, top, &tb) != 0)
        return -1;
    rdoc_table(d, &tb);
    failed |= tb.failed;
    rt_free(&tb);
    ops_table(r, &tb);
    rdoc_table(d, &tb);
    failed |= tb.failed;
    rt_free(&tb);
    steps_table(r, &tb);
    rdoc_table(d, &tb);
    failed |= tb.failed;
    rt_free(&tb);
    if (all_colls) {
        all_colls_table(r, &tb);
        rdoc_table(d, &tb);
        failed |= tb.failed;
        rt_free(&tb);
    }
    if (failed) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}
