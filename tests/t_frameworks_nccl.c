/* Real NCCL on the simulated driver, under the shim: PyTorch's NCCL
 * (2.30.7) between one process per simulated GPU, run by torchrun
 * (tests/frameworks/fw_nccl.py; docs/frameworks.md, "NCCL"):
 *   tp-decode-2, tp-decode-4  a small decoder split over 2 and 4 ranks
 *                             (tensor parallel): two all-reduces per layer,
 *                             an all-gather of the logits per forward;
 *   pipeline-2                two stages on two ranks, sends and receives
 *                             between them.
 * Sockets on loopback only (NCCL_SOCKET_IFNAME=lo, GLOO_SOCKET_IFNAME=lo,
 * the rendezvous on 127.0.0.1 at a free port); OBS_SIM_GPUS = the ranks;
 * each rank's simulator log and trace named after its RANK. Each case runs
 * twice, at once: on the simulated driver alone, and under the shim
 * (obs-run --sim, the NVTX test tool loaded); each run under a timeout
 * (a hang is killed, not waited for). Checks:
 *   - both runs exit 0, every rank finishes, the same tokens per rank;
 *   - per rank, the trace holds the driver's log record by record (the
 *     launches NCCL makes inside its collectives among them), no stub
 *     called, no record lost;
 *   - per rank, the collectives recorded are the truth's (each
 *     torch.distributed call the program marked, fw_nccl.py): operation,
 *     count, element size, bytes; each recorded call inside the truth's
 *     marks before and after it; the kernels it caused NCCL's;
 *   - across the ranks: each collective has the same communicator
 *     identity and sequence number on every rank (a send and its receive:
 *     the same number); the skew of its arrivals (latest begin - earliest)
 *     within what the truth's marks allow, the straggler (the latest) a
 *     rank the truth allows to be last;
 *   - obs-report ranks' model of the same traces (trace_ranks.h): as many
 *     collectives matched on every rank as the truth has, none incomplete,
 *     each with the skew the records' begins give and a straggler the
 *     truth allows to be last; its Perfetto trace against its CSV
 *     (tests/ranks_perfetto_check.py);
 *   - live: a COMM/<op> range per NCCL call, each inside the prefill or a
 *     decode step, each all-reduce of a step after the first inside a
 *     LAYER/k range (tp-decode); in the trace, each collective in a phase
 *     (and, the same, in a layer).
 * Skipped, saying why, without the frameworks' environment or its torchrun,
 * and under a sanitizer. OBS_FRAMEWORKS_CASE=TEXT runs the cases whose
 * label holds TEXT. Printed: FIGURES lines (records, collectives, skew,
 * stragglers, time per case). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "driver_log.h"
#include "fw_common.h"
#include "fw_env.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"

#define RUN_TIMEOUT_S 600
#define MAX_RANKS 4
#define MAX_TRUTH 4096

static char torchrun[4300], script[4300];
static struct fw_env fw;

struct nccl_case {
    const char *label;
    const char *arg; /* fw_nccl.py's case */
    int ranks;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A port on 127.0.0.1 nobody listens on (the kernel's choice). */
static int free_port(void)
{
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    if (port == 0)
        bail("no free port on 127.0.0.1");
    return port;
}

/* torchrun of the case, under the shim or not; log and prefix are
 * patterns with %q{RANK}. */
static void run_case(const struct nccl_case *c, int shim, const char *log, const char *prefix, struct run_result *res)
{
    char nproc[16], port[16], gpus[32], log_env[4400];
    const char *argv[24], *env[24];
    struct fw_launch launch;
    size_t a = 0, e = 0;
    snprintf(nproc, sizeof nproc, "%d", c->ranks);
    snprintf(port, sizeof port, "%d", free_port());
    snprintf(gpus, sizeof gpus, "OBS_SIM_GPUS=%d", c->ranks);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    fw_launch_start(&launch, &fw, shim, prefix, argv, &a, env, &e);
    argv[a++] = torchrun;
    argv[a++] = "--nproc_per_node";
    argv[a++] = nproc;
    argv[a++] = "--master_addr";
    argv[a++] = "127.0.0.1";
    argv[a++] = "--master_port";
    argv[a++] = port;
    argv[a++] = script;
    argv[a++] = c->arg;
    argv[a] = NULL;
    env[e++] = gpus;
    env[e++] = log_env;
    env[e++] = "NCCL_SOCKET_IFNAME=lo";
    env[e++] = "GLOO_SOCKET_IFNAME=lo";
    env[e++] = "MASTER_ADDR=127.0.0.1";
    env[e++] = "OBS_SIM_LOG_TID=1";
    env[e++] = "OBS_CLOCK=monotonic"; /* the truth's marks (time.monotonic_ns) and the trace: one clock */
    env[e++] = "OMP_NUM_THREADS=1";
    env[e++] = "LD_PRELOAD";
    env[e++] = "PYTHONDONTWRITEBYTECODE=1";
    env[e] = NULL;
    if (run_program(argv, env, RUN_TIMEOUT_S, res) != 0)
        bail("cannot run %s", torchrun);
}

struct plain_arg {
    const struct nccl_case *c;
    const char *log;
};

static void plain_run(void *arg, struct run_result *res)
{
    const struct plain_arg *p = arg;
    run_case(p->c, 0, p->log, NULL, res);
}

/* "tokens RANK ids" of rank, or "" (a static buffer). */
static const char *tokens_of(const char *out, int rank)
{
    static char line[4096];
    char want[32];
    const char *p;
    snprintf(want, sizeof want, "tokens %d ", rank);
    line[0] = '\0';
    for (p = out ? strstr(out, want) : NULL; p && p != out && p[-1] != '\n'; p = strstr(p + 1, want))
        ;
    if (p != NULL)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
    return line;
}

/* ---- the truth ---------------------------------------------------------------------------------- */

struct truth_coll {
    char op[40];
    unsigned long long count, elem, t0, t1;
};

static size_t truth_read(const char *log, struct truth_coll *out, size_t max)
{
    char *text = test_read_file(log, NULL), *line, *save = NULL;
    size_t n = 0;
    if (text == NULL)
        return 0;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        struct truth_coll tc;
        if (strncmp(line, "fwtruthColl\tnccl\t", 17) != 0 || n == max)
            continue;
        if (sscanf(line + 17, "%39s count=%llu elem=%llu t0=%llu t1=%llu", tc.op, &tc.count, &tc.elem, &tc.t0,
                   &tc.t1) == 5)
            out[n++] = tc;
    }
    free(text);
    return n;
}

static unsigned op_of(const char *truth_op)
{
    if (strcmp(truth_op, "all_reduce") == 0 || strcmp(truth_op, "barrier") == 0)
        return OBS_COLL_ALL_REDUCE;
    if (strcmp(truth_op, "all_gather_into_tensor") == 0)
        return OBS_COLL_ALL_GATHER;
    if (strcmp(truth_op, "send") == 0)
        return OBS_COLL_SEND;
    if (strcmp(truth_op, "recv") == 0)
        return OBS_COLL_RECV;
    return OBS_COLL_INVALID;
}

/* ---- one rank ------------------------------------------------------------------------------------------- */

struct rank_run {
    struct obs_trace *t;
    struct truth_coll truth[MAX_TRUTH];
    size_t ntruth;
    size_t colls[MAX_TRUTH]; /* per truth collective: index into t->colls, or SIZE_MAX */
};

static int is_nccl_kernel(const struct obs_trace *t, size_t seq)
{
    const struct obs_call *c = &t->calls[seq];
    return c->kind == OBS_KIND_KERNEL && c->kernel != 0 && t->kernels[c->kernel].mangled != NULL &&
           strstr(t->kernels[c->kernel].mangled, "ncclDevKernel") != NULL;
}

/* The collectives against the truth: 5 checks. */
static void check_collectives(const char *label, int nranks, struct rank_run *r)
{
    const struct obs_trace *t = r->t;
    size_t i, k = 0, bad_op = 0, bad_size = 0, bad_time = 0, bad_kernels = 0, ops = 0;
    for (i = 0; i < t->ncolls; i++)
        ops += obs_coll_is_op(t->colls[i].op);
    is_int((long long)r->ntruth, (long long)ops, "%s: one collective or point-to-point record per call the program "
                                                   "made (%zu)", label, r->ntruth);
    for (i = 0; i < t->ncolls && k < r->ntruth; i++) {
        const struct obs_coll *c = &t->colls[i];
        const struct truth_coll *tc = &r->truth[k];
        const struct obs_comm *comm = obs_coll_comm(t, c);
        unsigned long long want_bytes;
        const struct obs_coll *launcher;
        size_t j;
        if (!obs_coll_is_op(c->op))
            continue;
        r->colls[k++] = i;
        if (c->op != op_of(tc->op) || c->status != 0) {
            if (bad_op++ < 3)
                diag("%s: call %zu: %s status %d, the truth's %s", label, k - 1, obs_coll_op_name(c->op), c->status,
                     tc->op);
            continue;
        }
        want_bytes = tc->count * tc->elem * (c->op == OBS_COLL_ALL_GATHER ? (unsigned long long)nranks : 1ull);
        if (strcmp(tc->op, "barrier") == 0 ? c->count != 1
                                            : c->count != tc->count || obs_nccl_type_bytes(c->datatype) != tc->elem ||
                                                  c->bytes != want_bytes || comm == NULL || comm->nranks != nranks) {
            if (bad_size++ < 3)
                diag("%s: call %zu %s: count %llu type %s bytes %llu; the truth's %llu x %llu", label, k - 1,
                     obs_coll_op_name(c->op), (unsigned long long)c->count, obs_nccl_type_name(c->datatype),
                     (unsigned long long)c->bytes, tc->count, tc->elem);
        }
        if (c->host_begin < tc->t0 || c->host_end > tc->t1)
            bad_time++;
        launcher = c->group_end != OBS_NONE ? &t->colls[c->group_end] : c;
        for (j = 0; j < launcher->ncalls; j++)
            if (t->calls[t->coll_calls[launcher->calls_first + j]].kind == OBS_KIND_KERNEL &&
                !is_nccl_kernel(t, t->coll_calls[launcher->calls_first + j]))
                break;
        if (c->kernels == 0 || j < launcher->ncalls)
            bad_kernels++;
    }
    for (; k < MAX_TRUTH; k++)
        r->colls[k] = SIZE_MAX;
    is_int(0, (long long)bad_op, "%s: each the truth's operation, in order, a success", label);
    is_int(0, (long long)bad_size, "%s: its count, element size, bytes (nccl-tests' size) and communicator size",
           label);
    is_int(0, (long long)bad_time, "%s: each recorded call inside the truth's marks before and after it", label);
    is_int(0, (long long)bad_kernels, "%s: each caused NCCL's kernels (a grouped send or receive: its group's)",
           label);
}

/* Live COMM ranges in the rank's log (domain obsshim), and the trace's
 * places of the collectives: 3 checks. */
static void check_places(const char *label, const char *log, const struct nccl_case *c, const struct obs_trace *t)
{
    char *text = test_read_file(log, NULL), *line, *save = NULL;
    char stack[64][128];
    int depth = 0, balanced = 1;
    size_t pushes = 0, in_step = 0, layered_want = 0, layered = 0, i, want_pushes = 0, placed = 0, trace_layer_want = 0,
           trace_layered = 0;
    for (i = 0; i < t->ncolls; i++)
        want_pushes += t->colls[i].op != OBS_COLL_GROUP_START;
    int ended = 0; /* the truth's end mark: the forwards are over (the barrier is in no layer) */
    for (line = text ? strtok_r(text, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
        char api[64], kind[16], name[128], domain[64];
        if (strncmp(line, "fwtruthStep\tstep\tend\t", 21) == 0)
            ended = 1;
        if (sscanf(line, "%63[^\t]\t%15[^\t]\t%127[^\t]\t%63[^\t]", api, kind, name, domain) != 4 ||
            strcmp(kind, "range") != 0 || strcmp(domain, "obsshim") != 0)
            continue;
        if (strstr(api, "RangePush") != NULL) {
            int step = -1, layer = 0;
            if (strncmp(name, "COMM/", 5) == 0) {
                pushes++;
                for (int d = 0; d < depth; d++) {
                    if (strcmp(stack[d], "PREFILL") == 0)
                        step = 0;
                    else if (strncmp(stack[d], "DECODE/STEP_", 12) == 0)
                        step = atoi(stack[d] + 12) + 1;
                    layer |= strncmp(stack[d], "LAYER/", 6) == 0;
                }
                in_step += step >= 0;
                if (step >= 2 && !ended && strcmp(name, "COMM/AllReduce") == 0) {
                    layered_want++;
                    layered += layer;
                }
            }
            if (depth < 64)
                snprintf(stack[depth], sizeof stack[depth], "%s", name);
            depth++;
        } else if (strstr(api, "RangePop") != NULL) {
            if (depth == 0)
                balanced = 0;
            else
                depth--;
        }
    }
    free(text);
    ok(pushes == want_pushes && balanced && depth == 0,
       "%s: a live COMM/<op> range per NCCL call but ncclGroupStart (%zu), pushes and pops balanced", label, pushes);
    ok(in_step == pushes && (strncmp(c->arg, "tp-", 3) != 0 || (layered_want > 0 && layered == layered_want)),
       "%s: each inside the prefill or a decode step (%zu of %zu), each all-reduce after step 0 inside a LAYER/k "
       "(%zu of %zu)", label, in_step, pushes, layered, layered_want);
    for (i = 0; i < t->ncolls; i++) {
        const struct obs_coll *co = &t->colls[i];
        uint32_t step = co->phase != OBS_NONE ? obs_phase_step(t, co->phase) : UINT32_MAX;
        if (!obs_coll_is_op(co->op))
            continue;
        placed += co->phase != OBS_NONE;
        if (co->op == OBS_COLL_ALL_REDUCE && co->count > 1 && step != UINT32_MAX && step >= 1) {
            trace_layer_want++;
            trace_layered += co->layer != OBS_NO_LAYER;
        }
    }
    ok(placed > 0 && (strncmp(c->arg, "tp-", 3) != 0 || trace_layered == trace_layer_want),
       "%s: in the trace, %zu collectives in a phase, the all-reduces after step 0 in a layer (%zu of %zu)", label,
       placed, trace_layered, trace_layer_want);
}

/* ---- across the ranks ------------------------------------------------------------------------------------ */

/* Arrivals of one collective on its ranks: the trace's skew within the
 * truth's bounds, its straggler one the truth allows to be last. */
static int arrivals_agree(const struct obs_coll *const *c, const struct truth_coll *const *tc, int n, double *skew,
                          int *straggler)
{
    unsigned long long tmin = UINT64_MAX, tmax = 0, max_t0 = 0, min_t1 = UINT64_MAX, max_t1 = 0, min_t0 = UINT64_MAX;
    int last = 0;
    for (int r = 0; r < n; r++) {
        if (c[r]->host_begin < tmin)
            tmin = c[r]->host_begin;
        if (c[r]->host_begin > tmax) {
            tmax = c[r]->host_begin;
            last = r;
        }
        max_t0 = tc[r]->t0 > max_t0 ? tc[r]->t0 : max_t0;
        min_t0 = tc[r]->t0 < min_t0 ? tc[r]->t0 : min_t0;
        max_t1 = tc[r]->t1 > max_t1 ? tc[r]->t1 : max_t1;
        min_t1 = tc[r]->t1 < min_t1 ? tc[r]->t1 : min_t1;
    }
    *skew = (double)(tmax - tmin);
    *straggler = last;
    return (double)(tmax - tmin) >= (max_t0 > min_t1 ? (double)(max_t0 - min_t1) : 0.0) &&
           (double)(tmax - tmin) <= (double)(max_t1 - min_t0) && tc[last]->t1 >= max_t0;
}

/* obs-report ranks' model (trace_ranks.h) of the same collective: found by
 * its communicator identity and sequence number, complete with n parts, the
 * same skew as the records' begins give, its straggler a rank the truth
 * allows to be last. */
static int ranks_agree(const struct obs_ranks *m, const struct obs_coll *const *c, const struct truth_coll *const *tc,
                       int n, double skew, const struct obs_trace *t0)
{
    const struct obs_comm *comm = obs_coll_comm(t0, c[0]);
    const struct obs_rank_coll *rc = comm ? obs_ranks_find(m, comm->hash, c[0]->seq) : NULL;
    unsigned long long max_t0 = 0;
    if (rc == NULL || !rc->complete || rc->nparts != (uint32_t)n || (double)rc->skew_ns != skew || rc->straggler < 0 ||
        rc->straggler >= n)
        return 0;
    for (int r = 0; r < n; r++)
        max_t0 = tc[r]->t0 > max_t0 ? tc[r]->t0 : max_t0;
    return tc[rc->straggler]->t1 >= max_t0;
}

static void check_across(const struct nccl_case *c, struct rank_run *runs)
{
    size_t k, matched = 0, bad_match = 0, bad_arrivals = 0, bad_ranks = 0, stragglers[MAX_RANKS] = {0},
              lib_stragglers[MAX_RANKS] = {0};
    double skew_sum = 0, skew_max = 0;
    int pipeline = strncmp(c->arg, "tp-", 3) != 0;
    const struct obs_trace *traces[MAX_RANKS];
    struct obs_ranks model;
    for (int r = 0; r < c->ranks; r++)
        traces[r] = runs[r].t;
    if (obs_ranks_build(traces, (size_t)c->ranks, &model) != 0)
        bail("obs_ranks_build: out of memory");
    for (k = 0; k < runs[0].ntruth; k++) {
        const struct obs_coll *cs[MAX_RANKS];
        const struct truth_coll *ts[MAX_RANKS];
        int n = 0, fine = 1;
        double skew;
        int last;
        for (int r = 0; r < c->ranks; r++) {
            size_t want = k;
            if (pipeline && r == 1) { /* the receive (send) of rank 0's send (receive): the same sequence number */
                size_t j;
                const struct obs_coll *c0 = runs[0].colls[k] != SIZE_MAX ? &runs[0].t->colls[runs[0].colls[k]] : NULL;
                for (j = 0; c0 && j < runs[1].ntruth; j++)
                    if (runs[1].colls[j] != SIZE_MAX && runs[1].t->colls[runs[1].colls[j]].seq == c0->seq)
                        break;
                want = c0 ? j : SIZE_MAX;
            }
            if (want >= runs[r].ntruth || runs[r].colls[want] == SIZE_MAX) {
                fine = 0;
                break;
            }
            cs[n] = &runs[r].t->colls[runs[r].colls[want]];
            ts[n] = &runs[r].truth[want];
            n++;
        }
        if (!fine) {
            bad_match++;
            continue;
        }
        for (int r = 1; r < n; r++) {
            const struct obs_comm *a = obs_coll_comm(runs[0].t, cs[0]), *b = obs_coll_comm(runs[r].t, cs[r]);
            int same_op = pipeline ? (cs[0]->op == OBS_COLL_SEND && cs[r]->op == OBS_COLL_RECV) ||
                                         (cs[0]->op == OBS_COLL_RECV && cs[r]->op == OBS_COLL_SEND) ||
                                         cs[0]->op == cs[r]->op
                                   : cs[0]->op == cs[r]->op;
            if (a == NULL || b == NULL || a->hash != b->hash || cs[0]->seq != cs[r]->seq || !same_op ||
                cs[0]->count != cs[r]->count)
                fine = 0;
        }
        if (!fine) {
            if (bad_match++ < 3)
                diag("%s: collective %zu: not the same on every rank", c->label, k);
            continue;
        }
        matched++;
        if (!arrivals_agree(cs, ts, n, &skew, &last))
            bad_arrivals++;
        if (!ranks_agree(&model, cs, ts, n, skew, runs[0].t)) {
            if (bad_ranks++ < 3)
                diag("%s: collective %zu: obs-report ranks does not agree", c->label, k);
        }
        skew_sum += skew;
        skew_max = skew > skew_max ? skew : skew_max;
        stragglers[last]++;
    }
    is_int(0, (long long)bad_match,
           "%s: each collective with the same communicator identity and sequence number on every rank (%zu)",
           c->label, matched);
    is_int(0, (long long)bad_arrivals,
           "%s: its skew within the truth's marks, its straggler a rank the truth allows to be last", c->label);
    is_int((long long)runs[0].ntruth, (long long)model.complete,
           "%s: obs-report ranks matches as many collectives on every rank as the truth has (%zu), none incomplete "
           "(%zu)",
           c->label, runs[0].ntruth, model.ncolls - model.complete);
    is_int(0, (long long)bad_ranks,
           "%s: each with the records' skew and a straggler the truth allows to be last (obs-report ranks)", c->label);
    for (int r = 0; r < c->ranks && r < MAX_RANKS; r++)
        if (model.inputs[r].rank >= 0 && model.inputs[r].rank < MAX_RANKS)
            lib_stragglers[model.inputs[r].rank] = model.inputs[r].straggled;
    diag("FIGURES ranks %s: %zu matched (truth %zu), %zu incomplete, stragglers by rank %zu %zu %zu %zu, steps %zu",
         c->label, model.complete, runs[0].ntruth, model.ncolls - model.complete, lib_stragglers[0],
         lib_stragglers[1], lib_stragglers[2], lib_stragglers[3], model.nsteps);
    {
        size_t nby;
        uint32_t *by = obs_ranks_by_skew(&model, 1, &nby);
        for (size_t i = 0; by && i < nby && i < 3; i++) {
            const struct obs_rank_coll *rc = &model.colls[by[i]];
            diag("FIGURES ranks %s: skew #%zu %s seq %u: %.1f us, straggler rank %ld, duration %.1f us (%s), busbw "
                 "%.3f GB/s",
                 c->label, i + 1, obs_rank_coll_name(rc), rc->seq, (double)rc->skew_ns / 1e3, rc->straggler,
                 (double)rc->duration_ns / 1e3, rc->gpu ? "gpu" : "host", rc->busbw_gbs);
        }
        free(by);
    }
    obs_ranks_free(&model);
    {
        const char *paths[MAX_RANKS];
        char prefix[4300], line[256];
        int rc;
        for (int r = 0; r < c->ranks; r++)
            paths[r] = runs[r].t->path;
        snprintf(prefix, sizeof prefix, "%s/%s-ranks", test_tmpdir(), c->label);
        rc = shim_ranks_perfetto_check(paths, (size_t)c->ranks, prefix, line, sizeof line);
        if (rc < 0)
            skip("%s: %s", c->label, line);
        else
            ok(rc == 1, "%s: obs-report ranks --perfetto: a process track per rank, each collective's flow through its "
                        "ranks from the first arrival to the straggler's (%s)",
               c->label, line);
    }
    diag("FIGURES collectives %s: %zu matched across %d ranks, skew mean %.1f us max %.1f us, stragglers by rank "
         "%zu %zu %zu %zu",
         c->label, matched, c->ranks, matched ? skew_sum / (double)matched / 1e3 : 0.0, skew_max / 1e3, stragglers[0],
         stragglers[1], stragglers[2], stragglers[3]);
}

/* Record by record, thread by thread (driver_log.h): 3 checks. */
static void compare(const char *label, const struct dlog *lg, const struct obs_trace *t, struct dlog_result *k)
{
    dlog_compare(label, lg, t, k);
    is_int((long long)lg->n, (long long)k->trace_records,
           "%s: as many launch/copy/memset/sync/graph records in the trace as in the driver's log (%zu)", label, lg->n);
    is_int(0, (long long)k->unmatched, "%s: every record of the log has its thread's next record in the trace", label);
    is_int(0, (long long)k->bad, "%s: record by record, thread by thread: kind, kernel name, stream, bytes, status",
           label);
}

/* ---- a case ---------------------------------------------------------------------------------------------- */

static struct rank_run runs[MAX_RANKS];

static void check_case(const struct nccl_case *c)
{
    char log_plain[4300], log_shim[4300], prefix[4300];
    struct plain_arg arg = {c, log_plain};
    struct run_result shim;
    struct fw_job job;
    char *out_plain = NULL;
    double t0 = now_s();
    int r;

    snprintf(log_plain, sizeof log_plain, "%s/%s-plain.log.%%q{RANK}", test_tmpdir(), c->label);
    snprintf(log_shim, sizeof log_shim, "%s/%s-shim.log.%%q{RANK}", test_tmpdir(), c->label);
    snprintf(prefix, sizeof prefix, "%s/%s.%%q{RANK}", test_tmpdir(), c->label);
    fw_job_start(&job, log_plain, plain_run, &arg);
    run_case(c, 1, log_shim, prefix, &shim);
    ok(fw_job_wait(c->label, &job, &out_plain), "%s: torchrun of %d ranks exits 0 on the simulated driver alone",
       c->label, c->ranks);
    ok(shim.exited && shim.status == 0, "%s: and under the shim", c->label);
    if (!shim.exited || shim.status != 0) {
        diag("%s under the shim: exit %d signal %d", c->label, shim.status, shim.signal);
        diag_text("stderr", shim.err ? shim.err : "");
    }
    for (r = 0; r < c->ranks; r++) {
        char label[64], log[4400], trace[4400], want[32];
        struct dlog lg;
        struct dlog_result k;
        snprintf(label, sizeof label, "%s[%d]", c->label, r);
        snprintf(want, sizeof want, "done %d\n", r);
        {
            char plain_tokens[4096];
            snprintf(plain_tokens, sizeof plain_tokens, "%s", tokens_of(out_plain, r));
            ok(out_plain && shim.out && strstr(out_plain, want) && strstr(shim.out, want) && plain_tokens[0] &&
                   strcmp(plain_tokens, tokens_of(shim.out, r)) == 0,
               "%s: finishes, the same tokens with and without the shim", label);
            if (strcmp(plain_tokens, tokens_of(shim.out, r)) != 0)
                diag("%s: without the shim \"%s\", with it \"%s\"", label, plain_tokens, tokens_of(shim.out, r));
        }
        snprintf(log, sizeof log, "%s/%s-shim.log.%d", test_tmpdir(), c->label, r);
        snprintf(trace, sizeof trace, "%s/%s.%d.obs", test_tmpdir(), c->label, r);
        dlog_read(log, &lg, NULL, NULL);
        is_int(0, (long long)lg.stub_calls, "%s: no logged stub of the driver is called", label);
        runs[r].t = shim_trace_open(trace);
        runs[r].ntruth = truth_read(log, runs[r].truth, MAX_TRUTH);
        if (runs[r].t == NULL || runs[r].ntruth == 0) {
            skip_block(12, "%s: no trace or no truth", label);
            dlog_free(&lg);
            continue;
        }
        compare(label, &lg, runs[r].t, &k);
        is_int(0, (long long)runs[r].t->records_lost, "%s: no record lost", label);
        diag("FIGURES records %s: %zu = log %zu (launches %zu, copies %zu, memsets %zu, syncs %zu), collectives %zu, "
             "communicator calls %zu",
             label, k.trace_records, lg.n, k.kernels, k.copies, k.memsets, k.syncs, runs[r].t->ncolls, runs[r].t->ncomms);
        check_collectives(label, c->ranks, &runs[r]);
        check_places(label, log, c, runs[r].t);
        dlog_free(&lg);
    }
    if (runs[0].t != NULL && (c->ranks < 2 || runs[1].t != NULL))
        check_across(c, runs);
    for (r = 0; r < c->ranks; r++) {
        obs_trace_free(runs[r].t);
        runs[r].t = NULL;
    }
    free(out_plain);
    run_result_free(&shim);
    diag("FIGURES time %s: %.1f s (with and without the shim at once)", c->label, now_s() - t0);
}

int main(void)
{
    static const struct nccl_case cases[] = {
        {"tp-decode-2", "tp-decode", 2},
        {"tp-decode-4", "tp-decode", 4},
        {"pipeline-2", "pipeline", 2},
    };
    const char *only = getenv("OBS_FRAMEWORKS_CASE");
    double start = now_s();
    size_t i;

    fw_env_require(&fw);
    snprintf(torchrun, sizeof torchrun, "%s/bin/torchrun", fw.dir);
    snprintf(script, sizeof script, "%s/fw_nccl.py", fw.scripts);
    if (!test_executable(torchrun))
        skip_all("no torchrun in %s", fw.dir);
    plan_lazy();
    diag("%s: %s", fw.dir, fw.versions);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (only == NULL || strstr(cases[i].label, only) != NULL)
            check_case(&cases[i]);
    diag("FIGURES time all: %.1f s", now_s() - start);
    return 0;
}
