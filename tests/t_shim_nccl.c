/* NCCL calls under the shim (intercept/hooks_nccl.c), on the stand-in
 * libnccl.so.2 (tests/apps/nccl_standin.c) over the simulated runtime:
 * tests/apps/nccl_app, four ranks of one run (separate processes that
 * share a unique id and never talk), with the NVTX test tool loaded.
 *
 *   - the program's output and exit status are those of a run without
 *     the shim; every CUDA call it and the stand-in made is recorded once
 *     (the kernel launches NCCL makes inside a collective, against the
 *     simulator's log);
 *   - one COLL record per collective, point-to-point and group call, with
 *     its operation, data type, count, bytes, reduction, root or peer,
 *     status, group depth; NCCL calling its own API (ncclBcast into
 *     ncclBroadcast) recorded once; a call fetched with dlsym on the
 *     library's handle recorded once;
 *   - the launches each caused: an ungrouped call its own, a call inside a
 *     group its group's, launched in the ncclGroupEnd that closed the
 *     outermost group; a refused call none;
 *   - COMM records: the inits (rank, size, identity from the unique id),
 *     the split (its parent, color, the identity every rank of that color
 *     shares), NCCL_SPLIT_NOCOLOR (no communicator), InitRankScalable,
 *     InitAll (one record per communicator), finalize, destroy, abort;
 *   - across the ranks: the same communicator identities, and per
 *     communicator the same sequence numbers for the same calls;
 *   - live: a COMM/<op> range (NVTX) around each call but ncclGroupStart,
 *     inside the phase open at it, push and pop balanced (the first one,
 *     in which the engine opens the first phase, ended early by it);
 *   - in the trace: COMM/<op> slices inside their phase's slice; the
 *     summary's Collectives table; obs-report csv --collectives; the JSON's
 *     nccl slices;
 *   - threads at once, each with its own communicator: each thread's calls
 *     numbered on its communicator (make check-tsan runs this test). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"

#define RANKS 4

/* The calls of the script in order: op, datatype (0xff none), count,
 * redop (0xff none), peer (-1), group depth, status, kernels it caused,
 * communicator ("c" the first, "s" the split, "-" none). */
struct want_coll {
    unsigned op, datatype;
    uint64_t count;
    unsigned redop;
    int peer_of_rank0, group, status;
    unsigned kernels;
    char comm;
};

/* peer: for rank r, r's own value: -2 means (r + 1) % n, -3 means (r - 1) % n. */
static const struct want_coll script[] = {
    {OBS_COLL_ALL_REDUCE, 7, 1024, 0, -1, 0, 0, 1, 'c'},
    {OBS_COLL_ALL_GATHER, 6, 256, 0xff, -1, 0, 0, 1, 'c'},
    {OBS_COLL_REDUCE_SCATTER, 9, 128, 2, -1, 0, 0, 1, 'c'},
    {OBS_COLL_BROADCAST, 2, 64, 0xff, 1, 0, 0, 1, 'c'},
    {OBS_COLL_BCAST, 0, 32, 0xff, 0, 0, 0, 1, 'c'},
    {OBS_COLL_REDUCE, 8, 16, 4, 0, 0, 0, 1, 'c'},
    {OBS_COLL_ALL_TO_ALL, 1, 8, 0xff, -1, 0, 0, 1, 'c'},
    {OBS_COLL_GATHER, 4, 4, 0xff, 0, 0, 0, 1, 'c'},
    {OBS_COLL_SCATTER, 5, 2, 0xff, 0, 0, 0, 1, 'c'},
    {OBS_COLL_GROUP_START, 0xff, 0, 0xff, -1, 0, 0, 0, '-'},
    {OBS_COLL_SEND, 7, 100, 0xff, -2, 1, 0, 2, 'c'},
    {OBS_COLL_RECV, 7, 100, 0xff, -3, 1, 0, 2, 'c'},
    {OBS_COLL_GROUP_END, 0xff, 0, 0xff, -1, 1, 0, 2, '-'},
    {OBS_COLL_GROUP_START, 0xff, 0, 0xff, -1, 0, 0, 0, '-'},
    {OBS_COLL_GROUP_START, 0xff, 0, 0xff, -1, 1, 0, 0, '-'},
    {OBS_COLL_ALL_REDUCE, 2, 10, 3, -1, 2, 0, 2, 'c'},
    {OBS_COLL_GROUP_END, 0xff, 0, 0xff, -1, 2, 0, 0, '-'},
    {OBS_COLL_ALL_REDUCE, 2, 20, 1, -1, 1, 0, 2, 'c'},
    {OBS_COLL_GROUP_END, 0xff, 0, 0xff, -1, 1, 0, 2, '-'},
    {OBS_COLL_ALL_REDUCE, 7, 7, 0, -1, 0, 4, 0, 'c'},
    {OBS_COLL_ALL_REDUCE, 7, 512, 0, -1, 0, 0, 1, 's'},
    {OBS_COLL_ALL_REDUCE, 3, 3, 0, -1, 0, 0, 1, 'c'},
};
#define SCRIPT_CALLS (sizeof script / sizeof script[0])

/* ... and its communicator calls. */
static const unsigned comm_script[] = {OBS_COMM_INIT_RANK,         OBS_COMM_SPLIT,    OBS_COMM_SPLIT,
                                       OBS_COMM_INIT_RANK_SCALABLE, OBS_COMM_INIT_ALL, OBS_COMM_INIT_ALL,
                                       OBS_COMM_INIT_RANK_CONFIG,  OBS_COMM_FINALIZE, OBS_COMM_DESTROY,
                                       OBS_COMM_ABORT,             OBS_COMM_DESTROY,  OBS_COMM_DESTROY,
                                       OBS_COMM_DESTROY,           OBS_COMM_DESTROY};
#define COMM_CALLS (sizeof comm_script / sizeof comm_script[0])

static struct sim_traced_run runs[RANKS];
static char *plain_out;

static const char *inject_path(void)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/tests/nvtx_inject/.libs/libobsnvtxinject.so", test_builddir());
    return path;
}

static void run_ranks(void)
{
    char inject[4300];
    const char *extra[4];
    struct run_result plain;
    char rank_text[RANKS][8];
    snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s", inject_path());
    extra[0] = inject;
    extra[1] = "OBS_SIM_LOG_TID=1";
    extra[2] = NULL;
    for (int r = 0; r < RANKS; r++) {
        char tag[32];
        const char *argv[] = {shim_build_path("tests/apps/nccl_app"), rank_text[r], "4", "1234", NULL};
        snprintf(rank_text[r], sizeof rank_text[r], "%d", r);
        snprintf(tag, sizeof tag, "rank%d", r);
        sim_traced_run_exec(tag, argv, "off", extra, &runs[r]);
    }
    {
        const char *argv[] = {shim_build_path("tests/apps/nccl_app"), "0", "4", "1234", NULL};
        const char *env[] = {"OBS_SIM_LOG", NULL};
        shim_run(argv, env, 0, 60, &plain);
        plain_out = plain.out;
        plain.out = NULL;
        ok(run_exited_with(&plain, 0), "without the shim: exit 0");
        run_result_free(&plain);
    }
}

static int peer_of(int want, int rank)
{
    return want == -2 ? (rank + 1) % RANKS : want == -3 ? (rank + RANKS - 1) % RANKS : want;
}

/* The first-made communicator, and the split's (made by a split), in t. */
static const struct obs_comm *made_by_event(const struct obs_trace *t, unsigned event)
{
    for (size_t i = 0; i < t->ncomms; i++)
        if (t->comms[i].event == event && t->comms[i].id != 0)
            return &t->comms[i];
    return NULL;
}

/* 7 checks. */
static void check_colls(int rank, const struct obs_trace *t)
{
    const struct obs_comm *first = made_by_event(t, OBS_COMM_INIT_RANK), *split = made_by_event(t, OBS_COMM_SPLIT);
    size_t i, bad = 0, bad_link = 0, bad_seq = 0, bad_group = 0;
    uint32_t seq_c = 0;

    is_int(SCRIPT_CALLS, (long long)t->ncolls, "rank %d: one COLL record per call (%zu)", rank, SCRIPT_CALLS);
    if (t->ncolls != SCRIPT_CALLS || first == NULL || split == NULL) {
        skip_block(6, "rank %d: not the script's calls", rank);
        return;
    }
    for (i = 0; i < SCRIPT_CALLS; i++) {
        const struct obs_coll *c = &t->colls[i];
        const struct want_coll *w = &script[i];
        const struct obs_comm *comm = obs_coll_comm(t, c);
        const struct obs_comm *want_comm = w->comm == 'c' ? first : w->comm == 's' ? split : NULL;
        int peer = w->peer_of_rank0 == -1 ? -1 : peer_of(w->peer_of_rank0, rank);
        if (c->op != w->op || c->datatype != w->datatype || c->count != w->count || c->redop != w->redop ||
            c->peer != peer || c->status != w->status || comm != want_comm) {
            if (bad++ < 3)
                diag("rank %d: call %zu: %s type %u count %llu redop %u peer %d status %d comm %p; want %s %u %llu "
                     "%u %d %d %p",
                     rank, i, obs_coll_op_name(c->op), c->datatype, (unsigned long long)c->count, c->redop, c->peer,
                     c->status, (const void *)comm, obs_coll_op_name(w->op), w->datatype,
                     (unsigned long long)w->count, w->redop, peer, w->status, (const void *)want_comm);
        }
        if (c->kernels != w->kernels) {
            if (bad_link++ < 3)
                diag("rank %d: call %zu (%s): %u kernels, want %u", rank, i, obs_coll_op_name(c->op), c->kernels,
                     w->kernels);
        }
        if (c->group != w->group || (w->group > 0 && obs_coll_is_op(w->op)) != (c->group_end != OBS_NONE))
            bad_group++;
        if (w->comm == 'c' && c->seq != seq_c++)
            bad_seq++;
        if (w->comm == 's' && c->seq != 0)
            bad_seq++;
        if (w->comm == '-' && c->seq != OBS_NO_SEQ)
            bad_seq++;
    }
    is_int(0, (long long)bad, "rank %d: each call's operation, type, count, reduction, root or peer, status and "
                              "communicator (ncclBcast's inner ncclBroadcast and the dlsym'ed call once each)",
           rank);
    is_int(0, (long long)bad_link, "rank %d: the kernels each caused (its own; a grouped call its group's, at "
                                   "the outermost ncclGroupEnd; a refused one none)",
           rank);
    is_int(0, (long long)bad_group, "rank %d: group depths, and each grouped call's ncclGroupEnd", rank);
    is_int(0, (long long)bad_seq, "rank %d: sequence numbers per communicator, from 0 (group calls: none)", rank);
    ok(t->colls[0].bytes == 4096 && t->colls[1].bytes == 256 * 2 * RANKS && t->colls[2].bytes == 128 * 2 * RANKS &&
           t->colls[10].bytes == 400,
       "rank %d: bytes as nccl-tests sizes them (all-gather and reduce-scatter: times the ranks)", rank);
    {
        size_t k, with_phase = 0;
        for (k = 1; k < t->ncolls; k++)
            with_phase += t->colls[k].ncalls == 0 || t->colls[k].phase != OBS_NONE;
        is_int((long long)t->ncolls - 1, (long long)with_phase,
               "rank %d: every call after the first that launched is in the phase the engine opened", rank);
    }
}

/* 4 checks. */
static void check_comms(int rank, const struct obs_trace *t, uint64_t *hash_first, uint64_t *hash_split)
{
    size_t i, bad = 0;
    const struct obs_comm *first = made_by_event(t, OBS_COMM_INIT_RANK), *split = made_by_event(t, OBS_COMM_SPLIT);
    is_int(COMM_CALLS, (long long)t->ncomms, "rank %d: one COMM record per communicator made or ended (%zu)", rank,
           COMM_CALLS);
    for (i = 0; i < t->ncomms && i < COMM_CALLS; i++)
        if (t->comms[i].event != comm_script[i] || t->comms[i].status != 0)
            bad++;
    is_int(0, (long long)bad, "rank %d: in order, each a success", rank);
    ok(first && first->rank == rank && first->nranks == RANKS && first->hash != 0 && split && split->rank == rank &&
           split->nranks == RANKS && split->color == rank % 2 && split->parent == (uint32_t)(first - t->comms),
       "rank %d: rank and size of the init and the split, the split's color and parent", rank);
    {
        const struct obs_comm *nocolor = NULL, *all0 = NULL, *all1 = NULL, *last = &t->comms[t->ncomms - 1];
        for (i = 0; i < t->ncomms; i++) {
            if (t->comms[i].event == OBS_COMM_SPLIT && t->comms[i].id == 0)
                nocolor = &t->comms[i];
            if (t->comms[i].event == OBS_COMM_INIT_ALL)
                *(all0 ? &all1 : &all0) = &t->comms[i];
        }
        ok(nocolor && nocolor->rank == -1 && all0 && all1 && all0->rank == 0 && all1->rank == 1 &&
               all0->hash == all1->hash && all0->id != all1->id && first && last->made == (uint32_t)(first - t->comms),
           "rank %d: NOCOLOR makes none; InitAll one record per communicator; the last destroy ends the first", rank);
    }
    *hash_first = first ? first->hash : 0;
    *hash_split = split ? split->hash : 0;
}

/* Live ranges in the log: COMM/<op> pushes, nested inside the phase. */
static void check_live(int rank, const char *log_path)
{
    char *text = test_read_file(log_path, NULL), *line, *save = NULL;
    int depth = 0, bad_depth = 0, comm_pushes = 0, inside_phase = 0, balanced = 1;
    int phase_depth = 0;
    if (text == NULL) {
        skip_block(3, "rank %d: no log", rank);
        return;
    }
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char api[128], kind[16], name[256];
        if (sscanf(line, "%127[^\t]\t%15[^\t]\t%255[^\t]", api, kind, name) != 3 || strcmp(kind, "range") != 0)
            continue;
        if (strstr(api, "RangePush")) {
            depth++;
            if (strncmp(name, "COMM/", 5) == 0) {
                comm_pushes++;
                inside_phase += phase_depth > 0 && depth == phase_depth + 1;
            } else {
                phase_depth = depth;
            }
        } else if (strstr(api, "RangePop")) {
            if (depth == 0)
                balanced = 0;
            else
                depth--;
            if (depth < phase_depth)
                phase_depth = depth;
        }
        bad_depth += depth < 0;
    }
    free(text);
    is_int(SCRIPT_CALLS - 3, comm_pushes, "rank %d: a live COMM/<op> range per call but ncclGroupStart", rank);
    ok(balanced && depth == 0 && bad_depth == 0, "rank %d: pushes and pops balanced", rank);
    is_int(SCRIPT_CALLS - 4, inside_phase,
           "rank %d: each inside the open phase range (the first, in which the engine opens it, ended by it)",
           rank);
}

/* The records against the simulator's log: the CUDA calls. */
static void check_records(int rank, const struct sim_traced_run *r)
{
    struct sim_call *calls = NULL;
    size_t n = sim_log_read(r->log, &calls), i, launches_log = 0, launches_trace = 0, mallocs = 0;
    for (i = 0; i < n; i++) {
        launches_log += strcmp(calls[i].api, "cudaLaunchKernel") == 0;
        mallocs += strcmp(calls[i].api, "cudaMalloc") == 0;
    }
    for (i = 0; i < r->t->ncalls; i++)
        launches_trace += r->t->calls[i].kind == OBS_KIND_KERNEL;
    is_int(15, (long long)launches_log, "rank %d: the stand-in launched 15 kernels", rank);
    is_int((long long)launches_log, (long long)launches_trace, "rank %d: each launch recorded once", rank);
    is_int((long long)mallocs, (long long)trace_api_count(r->t, shim_api_index("cudaMalloc")),
           "rank %d: and each cudaMalloc (7: the app's, one per communicator made)", rank);
    free(calls);
}

static void check_reports(const struct sim_traced_run *r)
{
    char csv[4300];
    const char *argv_sum[] = {shim_build_path("obs-report"), "summary", r->obs, NULL};
    const char *argv_csv[] = {shim_build_path("obs-report"), "csv", "--collectives", r->obs, "-o", csv, NULL};
    struct run_result res;
    char *text;
    snprintf(csv, sizeof csv, "%s.coll.csv", r->prefix);
    run_program(argv_sum, NULL, 60, &res);
    ok(run_exited_with(&res, 0) && res.out && strstr(res.out, "Collectives (NCCL") &&
           count_lines_with(res.out, "  ncclAllReduce") == 1,
       "obs-report summary: the Collectives table, a row per operation");
    run_result_free(&res);
    run_program(argv_csv, NULL, 60, &res);
    text = test_read_file(csv, NULL);
    ok(run_exited_with(&res, 0) && text && count_lines_with(text, ",coll,") == SCRIPT_CALLS &&
           count_lines_with(text, ",comm,") == COMM_CALLS + 1 /* the header too */ && strncmp(text, OBS_CSV_COLL_HEADER "\n", 20) == 0,
       "obs-report csv --collectives: a row per COLL and COMM record");
    free(text);
    run_result_free(&res);
    text = test_read_file(r->json, NULL);
    ok(text && count_lines_with(text, "\"cat\":\"nccl\",\"name\":\"ncclAllReduce\"") == 6 &&
           count_lines_with(text, "\"name\":\"COMM/AllReduce\"") == 6 && strstr(text, "\"bytes\":4096") != NULL,
       "the JSON: nccl slices on the thread, COMM/<op> slices on its phase track, with their bytes");
    free(text);
}

/* Threads at once, each with its own communicator (the stand-in's script
 * first, then 4 threads of 40 all-reduces, every other one in a group). */
static void check_threads(void)
{
    struct sim_traced_run run;
    const char *argv[] = {shim_build_path("tests/apps/nccl_app"), "0", "2", "99", "4", NULL};
    const char *extra[] = {"OBS_SIM_LOG_TID=1", NULL};
    size_t i, j, threads_seen = 0, bad = 0;
    sim_traced_run_exec("threads", argv, "off", extra, &run);
    ok(run_exited_with(&run.res, 0) && count_lines_with(run.res.out, " done") == 4,
       "threads: 4 threads with a communicator each, under the shim");
    if (run.t == NULL) {
        skip_block(2, "threads: no trace");
        sim_traced_run_free(&run);
        return;
    }
    for (i = 0; i < run.t->nthreads; i++) {
        uint32_t comm = 0, next = 0, ops = 0;
        int mine = 0;
        for (j = 0; j < run.t->ncolls; j++) {
            const struct obs_coll *c = &run.t->colls[j];
            if (c->thread != i || c->op != OBS_COLL_ALL_REDUCE || c->count != 256)
                continue;
            mine = 1;
            if (comm == 0)
                comm = c->comm_id;
            ops++;
            bad += c->comm_id != comm || c->seq != next++ || c->kernels != 1;
        }
        threads_seen += mine && ops == 40;
        bad += mine && ops != 40;
    }
    is_int(4, (long long)threads_seen, "threads: each thread's 40 all-reduces recorded on its own communicator");
    is_int(0, (long long)bad, "threads: their sequence numbers 0 .. 39, one kernel each (in a group: its group's)");
    sim_traced_run_free(&run);
}

int main(void)
{
    uint64_t first[RANKS], split[RANKS];
    size_t r, i;
    int same_seq = 1;

    plan_lazy();
    run_ranks();
    for (r = 0; r < RANKS; r++) {
        ok(run_exited_with(&runs[r].res, 0), "rank %zu: exit 0 under the shim", r);
        if (r == 0)
            is_string(plain_out ? plain_out : "", runs[r].res.out ? runs[r].res.out : "",
                      "rank 0: the same output as without the shim");
        if (runs[r].t == NULL) {
            skip_block(20, "rank %zu: no trace", r);
            continue;
        }
        check_records((int)r, &runs[r]);
        check_colls((int)r, runs[r].t);
        check_comms((int)r, runs[r].t, &first[r], &split[r]);
        check_live((int)r, runs[r].log);
    }
    for (r = 1; r < RANKS; r++) {
        if (runs[r].t == NULL || runs[0].t == NULL || runs[r].t->ncolls != runs[0].t->ncolls)
            same_seq = 0;
        else
            for (i = 0; i < runs[0].t->ncolls; i++)
                same_seq &= runs[r].t->colls[i].seq == runs[0].t->colls[i].seq &&
                            runs[r].t->colls[i].op == runs[0].t->colls[i].op;
    }
    ok(first[0] == first[1] && first[1] == first[2] && first[2] == first[3],
       "every rank: the same identity for the communicator of one unique id");
    ok(split[0] == split[2] && split[1] == split[3] && split[0] != split[1] && split[0] != first[0],
       "a split's identity: shared by the ranks of one color, another for the other color");
    ok(same_seq, "every rank: the same sequence number for the same call");
    if (runs[0].t != NULL)
        check_reports(&runs[0]);
    check_threads();
    for (r = 0; r < RANKS; r++)
        sim_traced_run_free(&runs[r]);
    free(plain_out);
    return 0;
}
