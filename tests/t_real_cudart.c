/* NVIDIA's own runtime on the simulated driver: the toolkit's real
 * libcudart.so.13 (shared), libcudart_static.a (nvcc's default) and
 * libcublas.so.13 run over the libcuda.so.1 of sim/, with no GPU, and the
 * shim records what they do exactly once.
 *
 * The library path holds a directory with only the simulated libcuda.so.1
 * (a symbolic link made here) and the toolkit's lib64, so every runtime and
 * library is NVIDIA's and only the driver is simulated. Programs:
 *   obs_cuda         workload/obs_cuda (nvcc -cudart shared)
 *   obs_cuda_static  workload/obs_cuda_static (nvcc's default static cudart)
 *                    (both also with --graphs: stream capture, graph launches)
 *   cublas_gemm      tests/apps/cublas_gemm (static cudart + libcublas.so.13:
 *                    CUBLAS_GEMM_SGEMM cublasSgemm, CUBLAS_GEMM_EX cublasGemmEx)
 *   rt_driver_mix    tests/apps/rt_driver_mix (static cudart and -lcuda), also
 *                    built with --default-stream per-thread (_ptsz/_ptds)
 * For each, run without and with the shim (OBS_SIM_LOG both times, the NVTX
 * test tool loaded):
 *   - exit 0 and the stdout the program prints on a GPU (the workload: what
 *     it prints on the simulated runtime, the same cost model), the same
 *     with the shim;
 *   - the driver's ground truth (log lines of kind kernel, memcpy, memset,
 *     sync, graph) equals the trace's records of those kinds record by
 *     record: kind, kernel name (mangled as the driver saw it, demangled in
 *     the trace), bytes, stream handle, status; so each launch, copy, memset
 *     and synchronisation is recorded exactly once, whichever layer (the
 *     shared cudart's exports, the driver's pointers handed out by
 *     cuGetProcAddress, -lcuda, cuBLASLt's dlsym) it passed through;
 *   - without the shim the program makes the same such calls;
 *   - no logged stub is called, and what the program needed of the driver
 *     is printed: entry points looked up (and refused), entry points
 *     called, private tables served;
 *   - the workloads: every launch's phase in the trace is the one its NVTX
 *     ranges give (100%);
 * and that the runtime really checks the driver's integrity hash
 * (OBS_SIM_INTEGRITY=wrong: error 103).
 * Skips (with the reason) when nvcc or the toolkit's runtime libraries are
 * missing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#define CUBLAS_GEMM_SGEMM 5 /* tests/apps/cublas_gemm.cu */
#define CUBLAS_GEMM_EX 3
#define NO_STEP (-1L)

static char cuda_lib64[4200];   /* the toolkit's lib64 */
static char library_path[8600]; /* LD_LIBRARY_PATH=<driver only>:<lib64> */
static char inject_env[4300];   /* NVTX_INJECTION64_PATH=... */

/* ---- environment ----------------------------------------------------------------------- */

/* The toolkit's lib64 from OBS_NVCC (<home>/bin/nvcc); NULL with *why set
 * when nvcc or the real runtime libraries are missing. */
static const char *toolkit_lib64(const char **why)
{
    const char *nvcc = getenv("OBS_NVCC");
    char home[4096], *slash;
    static const char *const needed[] = {"libcudart.so.13"}; /* cuBLAS: its program is built or not */
    size_t i;
    if (nvcc == NULL || *nvcc == '\0') {
        *why = "nvcc not found by configure (no CUDA toolkit)";
        return NULL;
    }
    snprintf(home, sizeof home, "%s", nvcc);
    for (i = 0; i < 2; i++) {
        slash = strrchr(home, '/');
        if (slash == NULL) {
            *why = "cannot tell the toolkit's directory from OBS_NVCC";
            return NULL;
        }
        *slash = '\0';
    }
    snprintf(cuda_lib64, sizeof cuda_lib64, "%s/lib64", home);
    for (i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", cuda_lib64, needed[i]);
        if (access(path, R_OK) != 0) {
            static char msg[4600];
            snprintf(msg, sizeof msg, "the toolkit has no %s", path);
            *why = msg;
            return NULL;
        }
    }
    return cuda_lib64;
}

/* A directory holding only the simulated libcuda.so.1 (a link). */
static void make_driver_dir(void)
{
    char dir[4200], link_path[4300];
    const char *driver = shim_build_path("sim/.libs/libcuda.so.1");
    if (access(driver, R_OK) != 0)
        bail("%s is missing (build the simulators first)", driver);
    snprintf(dir, sizeof dir, "%s/driver-only", test_tmpdir());
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        bail("cannot create %s", dir);
    snprintf(link_path, sizeof link_path, "%s/libcuda.so.1", dir);
    remove(link_path);
    if (symlink(driver, link_path) != 0)
        bail("cannot link %s", link_path);
    snprintf(library_path, sizeof library_path, "LD_LIBRARY_PATH=%s:%s", dir, cuda_lib64);
    snprintf(inject_env, sizeof inject_env, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
}

/* ---- one run ---------------------------------------------------------------------------- */

struct run {
    struct run_result res;
    char log[4200], trace[4300];
};

static void run_program_on_driver(const char *label, const char *path, const char *arg, int preload, struct run *r)
{
    char log_env[4300], out_env[4300], prefix[4200];
    const char *argv[] = {path, arg, NULL};
    const char *env[] = {library_path, log_env, out_env, inject_env, "OBS_SUMMARY=0", "OBS_JSON=0", NULL};
    snprintf(r->log, sizeof r->log, "%s/%s-%s.log", test_tmpdir(), label, preload ? "shim" : "plain");
    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), label);
    snprintf(r->trace, sizeof r->trace, "%s.obs", prefix);
    remove(r->log);
    if (preload)
        remove(r->trace);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", r->log);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    shim_run(argv, env, preload, 300, &r->res);
    if (!r->res.exited || r->res.status != 0) {
        diag("%s%s: exit %d signal %d", label, preload ? " under the shim" : "", r->res.status, r->res.signal);
        diag_text("stderr", r->res.err);
    }
}

/* ---- the log -------------------------------------------------------------------------------- */

static int recorded_kind(const char *kind)
{
    return strcmp(kind, "kernel") == 0 || strcmp(kind, "memcpy") == 0 || strcmp(kind, "memset") == 0 ||
           strcmp(kind, "sync") == 0 || strcmp(kind, "graph") == 0;
}

static int is_lookup(const char *api)
{
    return strncmp(api, "cuGetProcAddress", 16) == 0;
}

static int is_table_slot(const char *api)
{
    return strncmp(api, "cuGetExportTable.", 17) == 0;
}

/* Distinct strings, in first-seen order. */
struct name_set {
    char (*names)[256];
    size_t n, cap;
};

static int set_add(struct name_set *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return 0;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->names = realloc(s->names, s->cap * sizeof *s->names);
        if (s->names == NULL)
            bail("out of memory");
    }
    snprintf(s->names[s->n++], sizeof s->names[0], "%s", name);
    return 1;
}

static void set_print(const char *label, const char *what, const struct name_set *s)
{
    char line[900];
    size_t i, len = 0;
    diag("%s: %s (%zu):", label, what, s->n);
    line[0] = '\0';
    for (i = 0; i < s->n; i++) {
        if (len + strlen(s->names[i]) + 2 > 100) {
            diag("  %s", line);
            len = 0;
            line[0] = '\0';
        }
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", len ? " " : "", s->names[i]);
    }
    if (len)
        diag("  %s", line);
}

/* What the program asked of the driver (a run without the shim). */
static void driver_contract(const char *label, const struct sim_call *calls, size_t n)
{
    struct name_set looked_up = {0}, refused = {0}, called = {0}, tables = {0}, slots = {0}, stubs = {0};
    size_t i, lookups = 0;
    for (i = 0; i < n; i++) {
        const struct sim_call *c = &calls[i];
        if (strcmp(c->kind, "range") == 0) /* the NVTX test tool's lines */
            continue;
        if (is_lookup(c->api)) {
            const char *name = strcmp(c->name, "-") == 0 ? "\"\"(probe)" : c->name; /* cudart asks for "" first */
            lookups++;
            set_add(&looked_up, name);
            if (c->status != 0)
                set_add(&refused, name);
        } else if (strcmp(c->api, "cuGetExportTable") == 0) {
            char t[64];
            snprintf(t, sizeof t, "%.8s%s", c->name, c->status ? "(refused)" : "");
            set_add(&tables, t);
        } else if (is_table_slot(c->api)) {
            set_add(&slots, c->api + 17);
        } else {
            set_add(&called, c->api);
            if (strcmp(c->name, "stub") == 0)
                set_add(&stubs, c->api);
        }
    }
    diag("FIGURES %s: lookups %zu, entry points looked up %zu (refused %zu), called %zu (stubs among them %zu), "
         "private tables asked %zu, table slots called %zu",
         label, lookups, looked_up.n, refused.n, called.n, stubs.n, tables.n, slots.n);
    if (strcmp(label, "obs_cuda") == 0) /* the same list for every cudart; printed once */
        set_print(label, "entry points looked up", &looked_up);
    set_print(label, "entry points called", &called);
    set_print(label, "lookups refused", &refused);
    set_print(label, "private tables asked", &tables);
    set_print(label, "table slots called", &slots);
    if (stubs.n)
        set_print(label, "STUBS CALLED", &stubs);
    is_int(0, (long long)stubs.n, "%s: no logged stub of the simulated driver is called", label);
    ok(called.n > 0 && tables.n > 0, "%s: NVIDIA's runtime reached the simulated driver (%zu entry points called)",
       label, called.n);
    free(looked_up.names);
    free(refused.names);
    free(called.names);
    free(tables.names);
    free(slots.names);
    free(stubs.names);
}

/* ---- ground truth against the trace -------------------------------------------------- */


static int is_per_thread(const char *api)
{
    size_t l = strlen(api);
    return l > 5 && (strcmp(api + l - 5, "_ptsz") == 0 || strcmp(api + l - 5, "_ptds") == 0);
}

/* The stream handle a record of this log line must carry: the handle as
 * passed; 0 of a per-thread entry point is the per-thread stream (0x2). */
static unsigned long long log_stream(const struct sim_call *c)
{
    unsigned long long h = strcmp(c->stream, "-") == 0 ? 0 : strtoull(c->stream, NULL, 16);
    return h == 0 && is_per_thread(c->api) ? 2 : h;
}

static unsigned long long trace_stream(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_stream *s;
    if (c->stream == 0)
        return 0;
    s = obs_trace_stream(t, c->stream);
    return s ? s->handle : ~0ULL;
}

struct record_counts {
    size_t records, kernels, copies, memsets, syncs, graphs;
};

/* Log lines and trace calls of the recorded kinds, compared in order. */
static void compare_records(const char *label, const struct sim_call *calls, size_t n, const struct obs_trace *t,
                            struct record_counts *counts)
{
    size_t i, k = 0, nlog = 0, ntrace = 0, bad_kind = 0, bad_name = 0, bad_demangled = 0, bad_bytes = 0,
              bad_stream = 0, bad_status = 0, shown = 0;
    memset(counts, 0, sizeof *counts);
    for (i = 0; i < t->ncalls; i++)
        ntrace += t->calls[i].kind >= OBS_KIND_KERNEL && t->calls[i].kind <= OBS_KIND_GRAPH;
    for (i = 0; i < n; i++) {
        const struct sim_call *c = &calls[i];
        const struct obs_call *r;
        unsigned kind;
        int wrong = 0;
        if (!recorded_kind(c->kind))
            continue;
        nlog++;
        kind = sim_log_kind(c->kind);
        counts->kernels += kind == OBS_KIND_KERNEL;
        counts->copies += kind == OBS_KIND_MEMCPY;
        counts->memsets += kind == OBS_KIND_MEMSET;
        counts->syncs += kind == OBS_KIND_SYNC;
        counts->graphs += kind == OBS_KIND_GRAPH;
        while (k < t->ncalls && !(t->calls[k].kind >= OBS_KIND_KERNEL && t->calls[k].kind <= OBS_KIND_GRAPH))
            k++;
        if (k == t->ncalls)
            continue;
        r = &t->calls[k++];
        if (r->kind != kind) {
            bad_kind++;
            wrong = 1;
        } else if (kind == OBS_KIND_KERNEL) {
            const struct obs_kernel *kn = &t->kernels[r->kernel];
            if (r->kernel == 0 || strcmp(kn->mangled, c->name) != 0) {
                bad_name++;
                wrong = 1;
            } else if (strncmp(c->name, "_Z", 2) == 0 &&
                       (kn->demangled == NULL || strcmp(kn->demangled, kn->mangled) == 0 || kn->demangled[0] == '\0')) {
                bad_demangled++;
                wrong = 1;
            }
        } else if ((kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH) &&
                   strtoull(c->bytes, NULL, 10) != r->u.bytes) {
            bad_bytes++;
            wrong = 1;
        }
        if (kind != OBS_KIND_SYNC || strcmp(c->stream, "-") != 0) {
            if (log_stream(c) != trace_stream(t, r)) {
                bad_stream++;
                wrong = 1;
            }
        }
        if (c->status != r->status) {
            bad_status++;
            wrong = 1;
        }
        if (wrong && shown++ < 5)
            diag("%s: record %zu: log %s %s %s stream %s bytes %s status %ld; trace %s %s stream %#llx bytes %llu "
                 "status %d",
                 label, nlog - 1, c->api, c->kind, c->name, c->stream, c->bytes, c->status, obs_api_name(r->api),
                 r->kernel ? t->kernels[r->kernel].mangled : "-", trace_stream(t, r),
                 (unsigned long long)r->u.bytes, r->status);
    }
    counts->records = nlog;
    is_int((long long)nlog, (long long)ntrace,
           "%s: as many launch/copy/memset/sync/graph records in the trace as in the driver's log (%zu)", label, nlog);
    is_int(0, (long long)bad_kind, "%s: record by record, the same kind", label);
    is_int(0, (long long)bad_name, "%s: every launch with the kernel name the driver saw", label);
    is_int(0, (long long)bad_demangled, "%s: every C++ kernel name demangled in the trace", label);
    is_int(0, (long long)bad_bytes, "%s: every copy and memset with the driver's byte count, graph launch with its "
                                    "node count", label);
    is_int(0, (long long)bad_stream, "%s: every record on the driver's stream", label);
    is_int(0, (long long)bad_status, "%s: every record with the driver's status", label);
}

/* The same launch/copy/memset/sync calls (api, name, bytes, status) in
 * both logs: the shim changes nothing the program does. */
static void compare_logs(const char *label, const struct sim_call *a, size_t na, const struct sim_call *b, size_t nb)
{
    size_t i = 0, j = 0, same = 0, ca = 0, cb = 0;
    for (;;) {
        while (i < na && !recorded_kind(a[i].kind))
            i++;
        while (j < nb && !recorded_kind(b[j].kind))
            j++;
        if (i == na || j == nb)
            break;
        ca++, cb++;
        same += strcmp(a[i].api, b[j].api) == 0 && strcmp(a[i].name, b[j].name) == 0 &&
                strcmp(a[i].bytes, b[j].bytes) == 0 && a[i].status == b[j].status;
        i++, j++;
    }
    for (; i < na; i++)
        ca += recorded_kind(a[i].kind);
    for (; j < nb; j++)
        cb += recorded_kind(b[j].kind);
    ok(ca == cb && same == ca, "%s: without the shim the same %zu launch/copy/memset/sync calls reach the driver "
                               "(%zu with it, %zu alike)", label, ca, cb, same);
}

/* ---- phases ---------------------------------------------------------------------------------- */

struct label {
    char phase[12];
    long step;
};

/* The label of the innermost workload ranges open (default domain). */
static struct label label_of(char stack[][256], int depth)
{
    struct label l = {"", NO_STEP};
    int i;
    for (i = (depth < 32 ? depth : 32) - 1; i >= 0; i--) {
        const char *nm = stack[i];
        if (l.phase[0] == '\0') {
            if (strcmp(nm, "PREFILL") == 0 || strcmp(nm, "KV_GATHER") == 0)
                snprintf(l.phase, sizeof l.phase, "%s", nm);
            else if (strncmp(nm, "DECODE/STEP_", 12) == 0 || strcmp(nm, "DECODE/STEADY") == 0)
                snprintf(l.phase, sizeof l.phase, "DECODE");
        }
        if (l.step == NO_STEP && strncmp(nm, "DECODE/STEP_", 12) == 0)
            l.step = strtol(nm + 12, NULL, 10);
    }
    return l;
}

static void check_phases(const char *label, const struct sim_call *calls, size_t n, const struct obs_trace *t)
{
    static char stack[32][256];
    int depth = 0;
    size_t i, k = 0, launches = 0, equal = 0, shown = 0;
    for (i = 0; i < n; i++) {
        const struct sim_call *c = &calls[i];
        struct label truth, seen = {"", NO_STEP};
        if (strcmp(c->kind, "range") == 0) {
            if (strcmp(c->stream, "-") != 0) /* the shim's own ranges: domain obsshim */
                continue;
            if (strstr(c->api, "RangePush") != NULL) {
                if (depth < 32)
                    snprintf(stack[depth], sizeof stack[0], "%s", c->name);
                depth++;
            } else if (strstr(c->api, "RangePop") != NULL && depth > 0) {
                depth--;
            }
            continue;
        }
        if (strcmp(c->kind, "kernel") != 0 && strcmp(c->kind, "graph") != 0)
            continue;
        truth = label_of(stack, depth);
        while (k < t->ncalls && t->calls[k].kind != OBS_KIND_KERNEL && t->calls[k].kind != OBS_KIND_GRAPH)
            k++;
        if (k < t->ncalls) {
            const struct obs_call *r = &t->calls[k++];
            if (r->phase != OBS_NONE) {
                uint32_t step = obs_phase_step(t, r->phase);
                snprintf(seen.phase, sizeof seen.phase, "%s", t->phases[r->phase].phase);
                seen.step = step == UINT32_MAX ? NO_STEP : (long)step;
            }
        }
        launches++;
        if (strcmp(truth.phase, seen.phase) == 0 && truth.step == seen.step)
            equal++;
        else if (shown++ < 5)
            diag("%s: launch %zu %s: ranges say %s/%ld, trace %s/%ld", label, launches - 1, c->name,
                 truth.phase[0] ? truth.phase : "(none)", truth.step, seen.phase[0] ? seen.phase : "(none)",
                 seen.step);
    }
    diag("FIGURES %s: phase attribution %zu/%zu launches (%.2f%%)", label, equal, launches,
         launches ? 100.0 * (double)equal / (double)launches : 0.0);
    ok(launches > 0 && equal == launches, "%s: every launch has the phase and step of its NVTX ranges (%zu/%zu)",
       label, equal, launches);
}

/* ---- one program ------------------------------------------------------------------------ */

struct program {
    const char *label;    /* also the file names' stem */
    const char *path;     /* relative to the build directory */
    const char *arg;      /* one argument, or NULL */
    const char *expected; /* stdout, or NULL: what the workload prints on the simulated runtime */
    int phases;           /* the workload: check phase attribution */
};

/* What obs_cuda prints on the simulated runtime (the libcudart.so.13 of sim/). */
static char *workload_output_on_simulated_runtime(const char *arg)
{
    const char *argv[] = {shim_build_path("workload/obs_cuda"), arg, NULL};
    const char *env[] = {sim_library_path_env(), NULL};
    struct run_result res;
    char *out;
    shim_run(argv, env, 0, 120, &res);
    out = res.exited && res.status == 0 && res.out ? strdup(res.out) : NULL;
    run_result_free(&res);
    return out;
}

static void check_program(const struct program *p, const char *expected_out)
{
    const char *path = shim_build_path(p->path);
    struct run plain, shim;
    struct sim_call *log_plain = NULL, *log_shim = NULL;
    size_t n_plain, n_shim, lines_shim, i;
    struct obs_trace *t;
    struct record_counts counts;
    char *text;

    if (!test_executable(path)) {
        skip("%s: %s was not built", p->label, p->path);
        return;
    }
    run_program_on_driver(p->label, path, p->arg, 0, &plain);
    run_program_on_driver(p->label, path, p->arg, 1, &shim);
    ok(plain.res.exited && plain.res.status == 0, "%s: runs to completion on the simulated driver", p->label);
    ok(shim.res.exited && shim.res.status == 0, "%s: runs to completion under the shim", p->label);
    if (expected_out)
        is_string(expected_out, plain.res.out, "%s: prints what it prints on a GPU", p->label);
    is_string(plain.res.out, shim.res.out, "%s: the same output under the shim", p->label);

    n_plain = sim_log_read(plain.log, &log_plain);
    n_shim = sim_log_read(shim.log, &log_shim);
    text = test_read_file(shim.log, NULL);
    lines_shim = 0;
    for (i = 0; text && text[i]; i++)
        lines_shim += text[i] == '\n';
    free(text);
    is_int((long long)lines_shim, (long long)n_shim, "%s: every line of the driver's log read (%zu)", p->label,
           n_shim);
    driver_contract(p->label, log_plain, n_plain);
    {
        size_t stubs = 0;
        for (i = 0; i < n_shim; i++)
            stubs += strcmp(log_shim[i].name, "stub") == 0 && strcmp(log_shim[i].kind, "range") != 0;
        is_int(0, (long long)stubs, "%s: under the shim too, no stub is called (the shim's own queries included)",
               p->label);
    }
    compare_logs(p->label, log_plain, n_plain, log_shim, n_shim);
    t = shim_trace_open(shim.trace);
    ok(t != NULL, "%s: the trace reads", p->label);
    if (t != NULL) {
        compare_records(p->label, log_shim, n_shim, t, &counts);
        diag("FIGURES %s: records %zu (launches %zu, copies %zu, memsets %zu, syncs %zu, graph launches %zu), "
             "lost %llu",
             p->label, counts.records, counts.kernels, counts.copies, counts.memsets, counts.syncs, counts.graphs,
             (unsigned long long)t->records_lost);
        is_int(0, (long long)t->records_lost, "%s: no record lost", p->label);
        if (p->phases)
            check_phases(p->label, log_shim, n_shim, t);
        if (strcmp(p->label, "cublas_gemm") == 0)
            ok(counts.kernels >= CUBLAS_GEMM_SGEMM + CUBLAS_GEMM_EX,
               "cublas_gemm: at least one launch per GEMM call (%zu for %d)", counts.kernels,
               CUBLAS_GEMM_SGEMM + CUBLAS_GEMM_EX);
        obs_trace_free(t);
    }
    free(log_plain);
    free(log_shim);
    run_result_free(&plain.res);
    run_result_free(&shim.res);
}

/* The runtime really checks the simulated driver's integrity hash: one bit
 * flipped (OBS_SIM_INTEGRITY=wrong) and every call fails with 103. */
static void check_integrity_is_verified(void)
{
    const char *path = shim_build_path("workload/obs_cuda_static");
    const char *argv[] = {path, NULL};
    const char *env[] = {library_path, "OBS_SIM_INTEGRITY=wrong", NULL};
    struct run_result res;
    if (!test_executable(path)) {
        skip("integrity check: workload/obs_cuda_static was not built");
        return;
    }
    shim_run(argv, env, 0, 60, &res);
    ok(res.exited && res.status != 0 && res.err && strstr(res.err, "CUDA error 103 ") != NULL,
       "a wrong integrity hash: NVIDIA's runtime refuses the driver with error 103 (exit %d)", res.status);
    run_result_free(&res);
}

int main(void)
{
    const char *why = NULL;
    char *workload_out[2];
    char cublas_out[128];
    static const struct program programs[] = {
        {"obs_cuda", "workload/obs_cuda", NULL, NULL, 1},
        {"obs_cuda_static", "workload/obs_cuda_static", NULL, NULL, 1},
        {"obs_cuda-graphs", "workload/obs_cuda", "--graphs", NULL, 1},
        {"obs_cuda_static-graphs", "workload/obs_cuda_static", "--graphs", NULL, 1},
        {"cublas_gemm", "tests/apps/cublas_gemm", NULL, "", 0},
        {"rt_driver_mix", "tests/apps/rt_driver_mix", NULL,
         "runtime+driver: 3 launches, 4 copies, 2 memsets; round trip ok, memset ok, failures 0\n", 0},
        {"rt_driver_mix_ptsz", "tests/apps/rt_driver_mix_ptsz", NULL,
         "runtime+driver: 3 launches, 4 copies, 2 memsets; round trip ok, memset ok, failures 0\n", 0},
    };
    size_t i;

    if (toolkit_lib64(&why) == NULL)
        skip_all("%s", why);
    plan_lazy();
    make_driver_dir();
    workload_out[0] = workload_output_on_simulated_runtime(NULL);
    workload_out[1] = workload_output_on_simulated_runtime("--graphs");
    ok(workload_out[0] != NULL && workload_out[1] != NULL,
       "obs_cuda runs on the simulated runtime, with and without --graphs (its output is the reference)");
    snprintf(cublas_out, sizeof cublas_out, "cublasSgemm %d cublasGemmEx %d n=256 failures 0\n", CUBLAS_GEMM_SGEMM,
             CUBLAS_GEMM_EX);
    for (i = 0; i < sizeof programs / sizeof programs[0]; i++) {
        const struct program *p = &programs[i];
        const char *expected = p->expected != NULL ? (*p->expected ? p->expected : cublas_out)
                                                   : workload_out[p->arg != NULL];
        check_program(p, expected);
    }
    check_integrity_is_verified();
    free(workload_out[0]);
    free(workload_out[1]);
    return 0;
}
