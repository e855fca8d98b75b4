/* The ranks side by side (trace_ranks.h, obs-report ranks) on synthetic
 * traces of four ranks whose skews, stragglers, durations and steps are
 * worked out by hand below:
 *   communicator A (4 ranks): AllReduce seq 0 (1024 float32), AllGather
 *     seq 1 (256 float16 each), Broadcast seq 2 (10 uint8) that rank 3
 *     never calls (incomplete);
 *   communicator B (ranks 0 and 1): rank 0's Send seq 0, rank 1's Recv seq 0;
 *   per rank two decode steps (DECODE/STEP_0, _1 of generation 0), each a
 *     compute kernel and one collective with its NCCL kernel inside it.
 * Then the same with rank 3 on another host whose clock pair is 1000 ns
 * apart (its times move), with GPU spans (durations and steps in GPU time), the tables of `obs-report ranks --format json`,
 * and the Perfetto trace decoded by protoc (process tracks, flows;
 * tests/ranks_perfetto_check.py against the CSV). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "html_check.h"
#include "shim_test.h"
#include "tap/process.h"
#include "trace/trace.h"

#define NR 4
#define T0 1000000000ull
#define REAL0 1700000000000000000ull
#define HASH_A 0xabc0000000000001ull
#define HASH_B 0xdef0000000000002ull

/* Call begins (ns after T0) and host durations per rank. */
static const uint64_t ar_at[NR] = {2000, 2300, 2100, 2050}, ar_dur[NR] = {50, 60, 70, 80};
static const uint64_t ag_at[NR] = {5400, 5000, 5100, 5200};
#define AG_DUR 40
#define BC_AT 6000
#define P2P_AT_0 7000
#define P2P_AT_1 7250

struct recs {
    union obs_record r[64];
    uint32_t n;
    int gpu;                  /* give each kernel a GPU span: GPU_OFFSET after its call, gpu_dur long */
    union obs_record spans[32]; /* written by another thread, as the shim's GPU thread does */
    uint32_t nspans;
    uint32_t gpu_dur;         /* the next kernel's GPU duration */
};
#define GPU_OFFSET 1000

static union obs_record *add(struct recs *rs)
{
    union obs_record *r = &rs->r[rs->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static void comm(struct recs *rs, uint32_t id, uint64_t hash, int rank, int nranks)
{
    struct obs_rec_comm *c = &add(rs)->comm;
    c->type = OBS_REC_COMM;
    c->event = OBS_COMM_INIT_RANK;
    c->t_begin = T0 + 100;
    c->t_dur = 10;
    c->comm = id;
    c->hash = hash;
    c->rank = rank;
    c->nranks = nranks;
}

static void kernel(struct recs *rs, uint32_t name, uint64_t at, uint32_t dur)
{
    struct obs_rec_call *c = &add(rs)->call;
    c->type = OBS_REC_CALL;
    c->api = OBS_API_cudaLaunchKernel;
    c->t_begin = T0 + at;
    c->t_dur = dur;
    c->name = name;
    c->u.grid.x = 1;
    c->u.grid.y = c->u.grid.z = 1;
    c->block_x = c->block_y = c->block_z = 1;
    if (rs->gpu) {
        struct obs_rec_gpu_span *g = &rs->spans[rs->nspans++].gpu_span;
        memset(g, 0, sizeof *g);
        c->flags = OBS_CALL_GPU_TIMED;
        g->type = OBS_REC_GPU_SPAN;
        g->tid = 10;
        g->call_index = rs->n - 1;
        g->gpu_begin = T0 + at + GPU_OFFSET;
        g->gpu_end = g->gpu_begin + rs->gpu_dur;
    }
}

static int comm_id_rank; /* the rank being written: its all-reduce kernel's GPU time is 500 + 100 x rank */

/* A collective with its NCCL kernel launched inside it. */
static void coll(struct recs *rs, unsigned op, unsigned type, uint64_t count, uint32_t comm_id, uint32_t seq, int peer,
                 uint64_t at, uint32_t dur)
{
    struct obs_rec_coll *c;
    rs->gpu_dur = op == OBS_COLL_ALL_REDUCE ? 500 + 100 * (uint32_t)comm_id_rank : op == OBS_COLL_ALL_GATHER ? 200 : 100;
    kernel(rs, 2, at + 5, 5);
    c = &add(rs)->coll;
    c->type = OBS_REC_COLL;
    c->op = (uint8_t)op;
    c->datatype = (uint8_t)type;
    c->redop = op == OBS_COLL_ALL_REDUCE ? 0 : OBS_NCCL_NO_REDOP;
    c->t_begin = T0 + at;
    c->t_dur = dur;
    c->count = count;
    c->comm = comm_id;
    c->seq = seq;
    c->peer = peer;
    c->nested = 1;
}

static void phase(struct recs *rs, unsigned event, uint32_t step, uint64_t at)
{
    struct obs_rec_phase *p = &add(rs)->phase;
    p->type = OBS_REC_PHASE;
    p->event = (uint8_t)event;
    p->phase = 10;
    p->name = 11 + step;
    p->step = step;
    p->t = T0 + at;
}

/* Rank r's trace; host and the gap of its clock pair from the others'. */
static void write_rank(const char *path, int r, const char *meta_extra, uint64_t real_gap, int gpu)
{
    struct recs rs = {.n = 0, .gpu = gpu, .nspans = 0, .gpu_dur = 300};
    struct obs_file_header h;
    char meta[256];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), n;
    static const struct {
        uint32_t id, kind;
        const char *text;
    } strs[] = {{1, OBS_STR_KERNEL_MANGLED, "_Z4gemmv"},
                {2, OBS_STR_KERNEL_MANGLED, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"},
                {10, OBS_STR_RANGE_NAME, "DECODE"},
                {11, OBS_STR_RANGE_NAME, "DECODE/STEP_0"},
                {12, OBS_STR_RANGE_NAME, "DECODE/STEP_1"}};
    if (fd < 0)
        bail("cannot create %s", path);
    comm(&rs, 1, HASH_A, r, NR);
    if (r < 2)
        comm(&rs, 2, HASH_B, r, 2);
    comm_id_rank = r;
    phase(&rs, OBS_PHASE_BEGIN, 0, 1000);
    rs.gpu_dur = 300;
    kernel(&rs, 1, 1100, 200);
    coll(&rs, OBS_COLL_ALL_REDUCE, 7, 1024, 1, 0, -1, ar_at[r], (uint32_t)ar_dur[r]);
    phase(&rs, OBS_PHASE_END, 0, 3000);
    phase(&rs, OBS_PHASE_BEGIN, 1, 4000);
    rs.gpu_dur = 300;
    kernel(&rs, 1, 4100, 200);
    coll(&rs, OBS_COLL_ALL_GATHER, 6, 256, 1, 1, -1, ag_at[r], AG_DUR);
    phase(&rs, OBS_PHASE_END, 1, 5900);
    if (r < 3)
        coll(&rs, OBS_COLL_BROADCAST, 1, 10, 1, 2, 0, BC_AT, 30);
    if (r == 0)
        coll(&rs, OBS_COLL_SEND, 7, 100, 2, 0, 1, P2P_AT_0, 20);
    if (r == 1)
        coll(&rs, OBS_COLL_RECV, 7, 100, 2, 0, 0, P2P_AT_1, 20);
    obs_trace_init_header(&h, 1000 + (uint32_t)r, gpu ? OBS_FILE_GPU_TIME : 0, T0, REAL0 + real_gap);
    n = snprintf(meta, sizeof meta, "exe=/opt/tp\nrank=%d\n%s", r, meta_extra);
    if (obs_trace_write_header(fd, &h) != 0 || obs_trace_write_meta(fd, meta, (size_t)n) != 0)
        bail("cannot write %s", path);
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (obs_trace_write_string(fd, strs[i].id, strs[i].kind, strs[i].text, (uint32_t)strlen(strs[i].text)) != 0)
            bail("cannot write %s", path);
    if (obs_trace_write_records(fd, 10, 0, rs.r, rs.n) != 0 ||
        (rs.nspans > 0 && obs_trace_write_records(fd, 11, 0, rs.spans, rs.nspans) != 0) || close(fd) != 0)
        bail("cannot write %s", path);
}

static char paths[NR][512];
static struct obs_trace *traces[NR];

enum { ONE_HOST, OTHER_HOST, GPU_TIME };

static void write_all(int how)
{
    for (int r = 0; r < NR; r++) {
        char err[256];
        snprintf(paths[r], sizeof paths[r], "%s/rank%d-%d.obs", test_tmpdir(), r, how);
        if (how == OTHER_HOST)
            write_rank(paths[r], r, r == 3 ? "host=h2\n" : "host=h1\n", r == 3 ? 1000 : 0, 0);
        else /* one boot: the start pairs are not used */
            write_rank(paths[r], r, "host=h1\nboot_id=b0\n", r == 3 ? 5000000000ull : 0, how == GPU_TIME);
        if (obs_trace_open(paths[r], &traces[r], err, sizeof err) != 0)
            bail("%s: %s", paths[r], err);
    }
}

static void free_all(void)
{
    for (int r = 0; r < NR; r++)
        obs_trace_free(traces[r]);
}

static const struct obs_rank_coll *find_op(const struct obs_ranks *m, uint64_t hash, uint32_t seq)
{
    const struct obs_rank_coll *c = obs_ranks_find(m, hash, seq);
    if (c == NULL)
        bail("collective %llx/%u not found", (unsigned long long)hash, seq);
    return c;
}

static void test_model(void)
{
    struct obs_ranks m;
    const struct obs_rank_coll *c;
    const struct obs_rank_step *s;
    write_all(ONE_HOST);
    if (obs_ranks_build((const struct obs_trace *const *)traces, NR, &m) != 0)
        bail("obs_ranks_build: out of memory");
    ok(m.shared_clock && m.ninputs == NR && m.inputs[2].rank == 2, "one boot id: one clock; ranks from the meta");
    is_int(4, (long long)m.ncolls, "4 collectives by (communicator, seq)");
    is_int(3, (long long)m.complete, "3 complete");
    is_int(3, (long long)m.unmatched, "the broadcast rank 3 never called: 3 calls unmatched");

    c = find_op(&m, HASH_A, 0);
    ok(c->complete && c->op == OBS_COLL_ALL_REDUCE && c->nparts == 4, "AllReduce seq 0: 4 parts");
    is_int(300, (long long)c->skew_ns, "its skew: 2300 - 2000");
    ok(c->straggler == 1 && c->first_rank == 0, "straggler rank 1, first rank 0");
    is_int(80, (long long)c->duration_ns, "duration: the slowest rank's host span (80)");
    ok(!c->gpu && c->bytes == 4096 && c->bus_factor == 1.5, "host time, 4096 bytes, bus factor 2(n-1)/n = 1.5");
    ok(c->algbw_gbs == 4096.0 / 80 && c->busbw_gbs == 4096.0 / 80 * 1.5, "algbw 51.2 GB/s, busbw 76.8 GB/s");
    ok(c->generation == 0 && c->step == 0, "in step 0 of generation 0");

    c = find_op(&m, HASH_A, 1);
    ok(c->complete && c->skew_ns == 400 && c->straggler == 0 && c->first_rank == 1,
       "AllGather seq 1: skew 400, straggler rank 0, first rank 1");
    ok(c->bytes == 2048 && c->bus_factor == 0.75 && c->busbw_gbs == 2048.0 / 40 * 0.75,
       "its bytes 256 x 2 x 4 ranks, bus factor (n-1)/n, busbw 38.4 GB/s");

    c = find_op(&m, HASH_A, 2);
    ok(!c->complete && c->nparts == 3, "Broadcast seq 2: 3 parts of 4, incomplete");

    c = find_op(&m, HASH_B, 0);
    ok(c->complete && c->p2p && strcmp(obs_rank_coll_name(c), "SendRecv") == 0 && c->skew_ns == 250 &&
           c->straggler == 1 && c->bus_factor == 1.0,
       "Send/Recv seq 0 of communicator B: one pair, skew 250, straggler rank 1, factor 1");

    ok(m.inputs[0].straggled == 1 && m.inputs[1].straggled == 2 && m.inputs[2].straggled == 0 &&
           m.inputs[3].straggled == 0,
       "straggler counts per rank: 1 2 0 0");
    ok(m.inputs[1].skew_caused_ns == 550 && m.inputs[0].skew_caused_ns == 400, "skew caused: rank 1 550, rank 0 400");
    ok(m.inputs[0].colls == 4 && m.inputs[0].matched == 3 && m.inputs[2].colls == 3 && m.inputs[2].matched == 2 &&
           m.inputs[3].colls == 2 && m.inputs[3].matched == 2,
       "collectives and matched per rank");
    is_int(50 + 40 + 20, (long long)m.inputs[0].comm_ns, "rank 0's communication time: 50 + 40 + 20");

    is_int(2, (long long)m.nsteps, "two decode steps");
    s = &m.steps[0];
    ok(s->generation == 0 && s->step == 0 && s->ranks == 4 && s->slowest == 1,
       "step 0 on 4 ranks, the slowest rank 1");
    ok(s->cells[1].step_ns == 2360 - 1100 && s->cells[1].comm_ns == 60 && s->cells[1].compute_ns == 1200 &&
           s->cells[1].colls == 1 && s->cells[1].begin == T0 + 1100,
       "rank 1's step 0: 1260 ns from the gemm's begin to the all-reduce's end, comm 60, compute 1200");
    ok(s->cells[0].step_ns == 950 && s->cells[3].step_ns == 1030, "ranks 0 and 3: 950 and 1030 ns");
    s = &m.steps[1];
    ok(s->step == 1 && s->slowest == 0 && s->cells[0].step_ns == 1340 && s->cells[0].comm_ns == 40 &&
           s->cells[0].compute_ns == 1300,
       "step 1: the slowest rank 0, 1340 ns, comm 40, compute 1300");
    {
        size_t n;
        uint32_t *order = obs_ranks_by_skew(&m, 1, &n);
        ok(order && n == 3 && m.colls[order[0]].skew_ns == 400 && m.colls[order[1]].skew_ns == 300 &&
               m.colls[order[2]].skew_ns == 250,
           "by skew: 400, 300, 250 (complete ones)");
        free(order);
    }
    obs_ranks_free(&m);
    {
        const struct obs_trace *twice[NR] = {traces[0], traces[0], traces[1], traces[2]};
        if (obs_ranks_build(twice, NR, &m) != 0)
            bail("obs_ranks_build: out of memory");
        c = find_op(&m, HASH_A, 0);
        ok(c->nparts == 4 && !c->complete && m.complete == 0,
           "rank 0's trace given twice for rank 3's: 4 parts from 3 ranks, nothing complete");
        obs_ranks_free(&m);
    }
    free_all();

    write_all(OTHER_HOST);
    if (obs_ranks_build((const struct obs_trace *const *)traces, NR, &m) != 0)
        bail("obs_ranks_build: out of memory");
    c = find_op(&m, HASH_A, 0);
    ok(!m.shared_clock && m.inputs[3].offset == 1000 && c->skew_ns == 3050 - 2000 && c->straggler == 3,
       "rank 3 on another host, its clock pair 1000 ns on: its times move, it is the AllReduce's straggler (skew "
       "1050)");
    obs_ranks_free(&m);
    free_all();

    write_all(GPU_TIME);
    if (obs_ranks_build((const struct obs_trace *const *)traces, NR, &m) != 0)
        bail("obs_ranks_build: out of memory");
    c = find_op(&m, HASH_A, 0);
    ok(m.gpu_time && c->gpu && c->duration_ns == 800 && c->skew_ns == 300 && c->busbw_gbs == 4096.0 / 800 * 1.5,
       "GPU time: the AllReduce's duration the slowest rank's NCCL kernel (800 ns), busbw 7.68 GB/s, skew still "
       "from the calls");
    s = &m.steps[0];
    ok(s->gpu && s->slowest == 1 && s->cells[1].step_ns == 3905 - 2100 && s->cells[1].comm_ns == 600 &&
           s->cells[1].compute_ns == 300,
       "GPU time: step 0's slowest rank 1, 1805 ns from the gemm's GPU begin to the NCCL kernel's end, comm 600, "
       "compute 300 (the gemm)");
    s = &m.steps[1];
    ok(s->slowest == 0 && s->cells[0].step_ns == 1505 && s->cells[0].comm_ns == 200 && s->cells[0].compute_ns == 300,
       "GPU time: step 1's slowest rank 0, 1505 ns, comm 200, compute 300");
    obs_ranks_free(&m);
    free_all();
}

static char report[4200];

static void run_report(const char *const *extra, size_t nextra, struct run_result *r)
{
    const char *argv[16];
    size_t a = 0;
    argv[a++] = report;
    argv[a++] = "ranks";
    for (size_t i = 0; i < nextra; i++)
        argv[a++] = extra[i];
    for (int k = 0; k < NR; k++)
        argv[a++] = paths[k];
    argv[a] = NULL;
    run_program(argv, NULL, 60, r);
}

static void test_cli(void)
{
    static const char *json[] = {"--format", "json", "--collectives"};
    char out[600], cmd[2000];
    const char *protoc = getenv("OBS_PROTOC");
    struct run_result r;
    const char *pf[] = {"--perfetto", "-o", out};
    const char *html[] = {"--html", "-o", out};
    write_all(ONE_HOST);
    free_all();
    run_report(json, 3, &r);
    ok(run_exited_with(&r, 0) && r.out && strstr(r.out, "\"rank_skew\": [") &&
           strstr(r.out, "\"op\": \"AllGather\", \"seq\": 1, \"comm\": \"abc0000000000001\", \"bytes\": 2048, "
                         "\"skew_ns\": 400, \"first_rank\": 1, \"straggler\": 0, \"duration_ns\": 40, \"busbw_gbs\": "
                         "38.400") &&
           strstr(r.out, "\"rank\": 1, \"pid\": 1001, \"collectives\": 4, \"matched\": 3, \"straggler_count\": 2, "
                         "\"skew_caused_ns\": 550"),
       "ranks --format json: the rank_skew and ranks rows");
    if (r.out && !strstr(r.out, "\"skew_ns\": 400"))
        diag("%s", r.out);
    ok(r.out && strstr(r.out, "\"slowest_rank\": 1, \"step_ns\": 1260, \"fastest_step_ns\": 950, \"compute_ns\": "
                              "1200, \"comm_ns\": 60"),
       "its steps row of step 0");
    run_result_free(&r);

    snprintf(out, sizeof out, "%s/ranks.pftrace", test_tmpdir());
    run_report(pf, 3, &r);
    ok(run_exited_with(&r, 0), "ranks --perfetto -o: exit 0");
    run_result_free(&r);
    if (protoc == NULL || *protoc == '\0') {
        skip_block(1, "protoc not found by configure: cannot decode the .pftrace");
    } else {
        char *text;
        size_t flows = 0, ends = 0, pids = 0, names = 0;
        snprintf(cmd, sizeof cmd, "%s --decode=perfetto.protos.Trace -I %s/tests/perfetto perfetto_trace.proto < %s",
                 protoc, test_srcdir(), out);
        {
            const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
            run_program(argv, NULL, 60, &r);
        }
        text = r.out;
        for (const char *p = text; p && (p = strstr(p, "flow_ids_old: ")) != NULL; p++)
            if (p == text || p[-1] != '_')
                flows++;
        for (const char *p = text; p && (p = strstr(p, "terminating_flow_ids_old: ")) != NULL; p++)
            ends++;
        for (const char *p = text; p && (p = strstr(p, " pid: ")) != NULL; p++)
            pids++;
        for (const char *p = text; p && (p = strstr(p, "name: \"rank ")) != NULL; p++)
            names++;
        /* flows leave every part but the last: (4-1) + (4-1) + (3-1) + (2-1); each ends once */
        ok(run_exited_with(&r, 0) && flows == 9 && ends == 4 && pids == NR && names == NR,
           "protoc decodes it: 4 rank processes, 4 flows ending once each, 9 flow steps (%zu, %zu, %zu)", pids, ends,
           flows);
        run_result_free(&r);
    }
    {
        const char *t[NR] = {paths[0], paths[1], paths[2], paths[3]};
        char line[256], prefix[600];
        int rc;
        snprintf(prefix, sizeof prefix, "%s/checked", test_tmpdir());
        rc = shim_ranks_perfetto_check(t, NR, prefix, line, sizeof line);
        if (rc < 0)
            skip("%s", line);
        else
            ok(rc == 1, "ranks_perfetto_check.py: a process track per rank, slices at the arrivals, each collective's "
                        "flow through its ranks ending on the straggler's (%s)",
               line);
    }
    snprintf(out, sizeof out, "%s/ranks.html", test_tmpdir());
    run_report(html, 3, &r);
    {
        char *page = run_exited_with(&r, 0) ? test_read_file(out, NULL) : NULL;
        ok(page && strstr(page, "class=\"chart-stragglers\"") && strstr(page, "class=\"chart-skew\"") &&
               strstr(page, "data-report=\"ranks\"") && strstr(page, "data-straggler_count=\"2\"") &&
               strstr(page, "data-skew_ns=\"400\"") && strstr(page, "class=\"chart-steps\"") &&
               strstr(page, "data-step_ns=\"1260\""),
           "ranks --html: the stragglers, skew and steps charts, bars with their rows' data- attributes");
        {
            struct html_doc doc;
            html_parse(page ? page : "", &doc);
            ok(page && doc.problem[0] == '\0', "the page is well formed (%s)", doc.problem);
            html_doc_free(&doc);
        }
        free(page);
    }
    run_result_free(&r);
    {
        const char *argv[] = {report, "summary", paths[0], paths[1], paths[2], paths[3], NULL};
        struct run_result ranks;
        run_report(NULL, 0, &ranks);
        run_program(argv, NULL, 60, &r);
        ok(run_exited_with(&r, 0) && run_exited_with(&ranks, 0) && r.out && ranks.out &&
               strstr(r.out, "Top 3 collectives by arrival skew") && strcmp(r.out, ranks.out) == 0,
           "summary of the four traces: the ranks report, the rank-skew table in it");
        run_result_free(&r);
        run_result_free(&ranks);
    }
    {
        const char *argv[] = {report, "summary", "--step", "1", paths[0], paths[1], NULL};
        run_program(argv, NULL, 60, &r);
        ok(run_exited_with(&r, 2), "summary of several traces with a filter: usage error");
        run_result_free(&r);
    }
    {
        const char *argv[] = {report, "ranks", "/nonexistent/r0.obs", NULL};
        run_program(argv, NULL, 60, &r);
        ok(run_exited_with(&r, 1) && r.err && strstr(r.err, "obs-report: /nonexistent/r0.obs"),
           "a missing trace: its line, exit 1");
        run_result_free(&r);
    }
    {
        const char *argv[] = {report, "ranks", "--perfetto", "--html", paths[0], NULL};
        run_program(argv, NULL, 60, &r);
        ok(run_exited_with(&r, 2), "--perfetto with --html: usage error");
        run_result_free(&r);
    }
}

int main(void)
{
    snprintf(report, sizeof report, "%s/obs-report", test_builddir());
    plan(30 + 11);
    test_model();
    test_cli();
    return 0;
}
