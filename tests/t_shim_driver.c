/* The shim's CUDA driver hooks against the simulated driver's ground truth
 * (sim/, libcuda.so.1).
 *
 *   - tests/apps/driver_static_like (dlopen + dlsym + cuGetProcAddress_v2,
 *     as nvcc's static cudart; also --proc-v1, the 4-argument form) and
 *     tests/apps/driver_linked (-lcuda) under the shim: stdout and exit
 *     status as without it; one CALL record per hooked call: per API the
 *     count equals the simulator's log exactly, and the totals equal
 *     DRV_CALLS_* of driver_calls.h; record by record the API, kernel name
 *     (from cuFuncGetName / cuKernelGetName), stream handle (handle 0 of a
 *     _ptsz/_ptds entry point: the per-thread stream 0x2), bytes (memsets in
 *     bytes from element counts, 2D width x height) and status agree with
 *     the log; copy directions; the shim asks the driver a name once per
 *     function handle; each graph instantiation (cuGraphInstantiateWithFlags,
 *     cuGraphInstantiate, cuGraphInstantiate_v2) is walked once with the
 *     driver's read-only queries: one GRAPH record per exec (nodes, kernel
 *     nodes, kernels by name), every cuGraphLaunch record names its exec,
 *     node count and kernel, the summary's "Graph launches" table shows it;
 *   - tests/apps/driver_lookup_app: what dlsym and cuGetProcAddress(_v2)
 *     hand back, by the object holding the pointer (dladdr): the shim's
 *     wrapper of the exact variant for hooked symbols, the driver's own
 *     pointer for the CUDA 2.x variants, support entry points,
 *     cudnnSimFakeEntry and failed lookups (too old a version, unknown
 *     name); dlsym(RTLD_NEXT / RTLD_DEFAULT) resolved relative to the
 *     program, not to the shim;
 *   - with OBS_SIM_PROC_TRAMPOLINES=1 (the simulated driver hands out an
 *     internal trampoline per variant, not the exported symbol):
 *     driver_static_like (and --proc-v1) records exactly what it records
 *     without it (graph walks included), stdout as without the shim; driver_lookup_app gets the
 *     shim's proc wrapper for exactly the hooked variants (cuGetProcAddress
 *     itself included), the driver's pointer for the others;
 *   - the resolver (shim/intercept/cuda_proc_resolve.c): which variant (name,
 *     version, flags) is served, unknown names, too old or too new
 *     versions, unknown flags;
 *   - tests/apps/cuda_api_driver with OBS_SIM_CUDART_VIA_DRIVER=1: the
 *     simulated runtime reaches the driver through cuGetProcAddress_v2 as
 *     the real cudart does; every launch is recorded exactly once (by the
 *     runtime hook), no driver record;
 *   - OBS_GPU_TIME=events on driver_static_like: a GPU span for every
 *     successful launch, copy, memset and graph launch not captured, kernel
 *     spans equal to the cost model;
 *   - the real workload/obs_cuda (nvcc, shared cudart) under the shim, with
 *     and without OBS_SIM_CUDART_VIA_DRIVER=1: the same records per API,
 *     no driver record, the same stdout; workload/obs_cuda_static (NVIDIA's
 *     static cudart) runs on the simulated driver to the same stdout with
 *     and without the shim (its records: tests/t_real_cudart). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/api_list.h"
#include "intercept/cuda_proc_resolve.h"
#include "apps/driver_calls.h"
#include "shim_test.h"
#include "sim/cost_model.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_summary.h"
#include "workload_bins.h"

#define GRID_THREADS (64u * 256u) /* driver_calls.c: 64 blocks of 256 threads */
#define N_BYTES 4096u

static const char *sim_env(void)
{
    static char env[4200];
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s/sim/.libs", test_builddir());
    return env;
}

static int is_driver_api(int api)
{
    return api > 0 && api >= OBS_API_cuLaunchKernel;
}

static int is_per_thread(const char *api)
{
    size_t l = strlen(api);
    return l > 5 && (strcmp(api + l - 5, "_ptsz") == 0 || strcmp(api + l - 5, "_ptds") == 0);
}

/* Log lines of recorded driver APIs only, in order. */
static size_t driver_lines(struct sim_call *calls, size_t n)
{
    size_t i, kept = 0;
    for (i = 0; i < n; i++)
        if (is_driver_api(shim_api_index(calls[i].api)))
            calls[kept++] = calls[i];
    return kept;
}

static unsigned long long expected_handle(const struct sim_call *c)
{
    unsigned long long h = strcmp(c->stream, "-") == 0 ? 0 : strtoull(c->stream, NULL, 16);
    return h == 0 && is_per_thread(c->api) ? 2 : h;
}

static long long trace_handle(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_stream *s;
    if (c->stream == 0)
        return 0;
    s = obs_trace_stream(t, c->stream);
    return s ? (long long)s->handle : -2;
}

/* The direction a driver copy must carry (driver_calls.c's arguments). */
static const char *expected_direction(const char *api)
{
    if (strncmp(api, "cuMemcpyHtoD", 12) == 0 || strncmp(api, "cuMemcpy2D", 10) == 0)
        return "HtoD"; /* the 2D copies go from a host buffer to the device */
    if (strncmp(api, "cuMemcpyDtoH", 12) == 0)
        return "DtoH";
    if (strncmp(api, "cuMemcpyDtoD", 12) == 0 || strncmp(api, "cuMemcpy3D", 10) == 0)
        return "DtoD";
    if (strncmp(api, "cuMemcpyPeer", 12) == 0)
        return "peer";
    return "default"; /* cuMemcpy, cuMemcpyAsync: unified addresses */
}

static void compare_records(const struct obs_trace *t, const struct sim_call *log, size_t nlog, const char *mode)
{
    size_t i, n = t->ncalls < nlog ? t->ncalls : nlog;
    size_t bad_api = 0, bad_name = 0, bad_stream = 0, bad_bytes = 0, bad_status = 0, bad_dir = 0, bad_grid = 0;

    is_int((long long)nlog, (long long)t->ncalls, "%s: one record per hooked call in the log", mode);
    for (i = 0; i < n; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct sim_call *l = &log[i];
        if (strcmp(obs_api_name(c->api), l->api) != 0) {
            if (bad_api++ == 0)
                diag("%s record %zu: trace %s, log %s", mode, i, obs_api_name(c->api), l->api);
            continue;
        }
        if (strcmp(l->name, "-") != 0) {
            const char *name = c->kernel ? t->kernels[c->kernel].mangled : "";
            if (strcmp(name, l->name) != 0 && bad_name++ == 0)
                diag("%s record %zu %s: name %s, log %s", mode, i, l->api, name, l->name);
        }
        if (trace_handle(t, c) != (long long)expected_handle(l) && bad_stream++ == 0)
            diag("%s record %zu %s: stream 0x%llx, log %s", mode, i, l->api, (unsigned long long)trace_handle(t, c),
                 l->stream);
        /* Graph launches: node counts come from the graph hooks, not these. */
        if (c->kind != OBS_KIND_GRAPH && strcmp(l->bytes, "-") != 0 &&
            c->u.bytes != strtoull(l->bytes, NULL, 10) && bad_bytes++ == 0)
            diag("%s record %zu %s: bytes %llu, log %s", mode, i, l->api, (unsigned long long)c->u.bytes, l->bytes);
        if (c->status != l->status && bad_status++ == 0)
            diag("%s record %zu %s: status %d, log %ld", mode, i, l->api, c->status, l->status);
        if (c->kind == OBS_KIND_MEMCPY &&
            strcmp(obs_direction_name(c->flags & OBS_CALL_DIR_MASK), expected_direction(l->api)) != 0 &&
            bad_dir++ == 0)
            diag("%s record %zu %s: direction %s", mode, i, l->api, obs_direction_name(c->flags & OBS_CALL_DIR_MASK));
        if (c->kind == OBS_KIND_KERNEL && (c->u.grid.x != 64 || c->u.grid.y != 1 || c->block_x != 256) &&
            bad_grid++ == 0)
            diag("%s record %zu %s: grid %u block %u", mode, i, l->api, c->u.grid.x, c->block_x);
    }
    is_int(0, (long long)bad_api, "%s: records are the log's hooked calls, in order", mode);
    is_int(0, (long long)bad_name, "%s: kernel names from the driver", mode);
    is_int(0, (long long)bad_stream, "%s: stream handles (_ptsz/_ptds handle 0: per-thread 0x2)", mode);
    is_int(0, (long long)bad_bytes, "%s: bytes of copies and memsets", mode);
    is_int(0, (long long)bad_status, "%s: return codes", mode);
    is_int(0, (long long)bad_dir, "%s: copy directions", mode);
    is_int(0, (long long)bad_grid, "%s: launch grids and blocks (cuLaunchKernelEx: its config)", mode);
}

static void compare_counts(const struct obs_trace *t, const struct sim_call *log, size_t nlog, const char *mode)
{
    unsigned api;
    size_t i, mismatches = 0;
    unsigned long by_kind[OBS_KIND_COUNT] = {0};

    for (api = 1; api < OBS_API_COUNT; api++) {
        unsigned long in_log = 0, in_trace = trace_api_count(t, (int)api);
        for (i = 0; i < nlog; i++)
            if (strcmp(log[i].api, obs_api_name(api)) == 0)
                in_log++;
        if (in_log != in_trace) {
            mismatches++;
            diag("%s: %s: %lu records, %lu log lines", mode, obs_api_name(api), in_trace, in_log);
        }
    }
    is_int(0, (long long)mismatches, "%s: records per API equal the simulator's calls per API", mode);
    for (i = 0; i < t->ncalls; i++)
        by_kind[t->calls[i].kind]++;
    is_int(DRV_CALLS_HOOKED, (long long)t->ncalls, "%s: DRV_CALLS_HOOKED records", mode);
    ok(by_kind[OBS_KIND_KERNEL] == DRV_CALLS_KERNEL && by_kind[OBS_KIND_GRAPH] == DRV_CALLS_GRAPH &&
           by_kind[OBS_KIND_MEMCPY] == DRV_CALLS_MEMCPY && by_kind[OBS_KIND_MEMSET] == DRV_CALLS_MEMSET &&
           by_kind[OBS_KIND_SYNC] == DRV_CALLS_SYNC,
       "%s: by kind %lu kernel, %lu graph, %lu memcpy, %lu memset, %lu sync as in driver_calls.h", mode,
       by_kind[OBS_KIND_KERNEL], by_kind[OBS_KIND_GRAPH], by_kind[OBS_KIND_MEMCPY], by_kind[OBS_KIND_MEMSET],
       by_kind[OBS_KIND_SYNC]);
}

/* Log lines of api (NULL: any) that name a kernel, and the distinct names. */
static size_t name_queries(const struct sim_call *log, size_t n)
{
    size_t i, count = 0;
    for (i = 0; i < n; i++)
        if (strcmp(log[i].api, "cuFuncGetName") == 0 || strcmp(log[i].api, "cuKernelGetName") == 0)
            count++;
    return count;
}

/* Log lines of api. */
static size_t log_api_count(const struct sim_call *log, size_t n, const char *api)
{
    size_t i, count = 0;
    for (i = 0; i < n; i++)
        if (strcmp(log[i].api, api) == 0)
            count++;
    return count;
}

/* The shim's graph walks in driver_calls.c's sequence, one per
 * instantiation: the exec of 3 nodes (a kernel, a copy, a memset; by
 * cuGraphInstantiateWithFlags), the one of 1 kernel node launched by a
 * CUkernel (cuGraphInstantiate: the CUDA 12.0 query gives it in kern, func
 * NULL) and the empty one (cuGraphInstantiate_v2). Their queries: the node count
 * and the nodes of each non-empty graph, the count of the empty one; each
 * node's type; the 2 kernel nodes' parameters (the CUDA 12.0 form). The
 * kernels were launched before, so their names are cached: no name query. */
static const struct {
    const char *api;
    size_t calls;
} walk_queries[] = {
    {"cuGraphGetNodes", 5},
    {"cuGraphNodeGetType", 4},
    {"cuGraphKernelNodeGetParams_v2", 2},
};
#define WALK_QUERY_APIS (sizeof walk_queries / sizeof walk_queries[0])
#define WALK_QUERIES 11u

static const char *mangled_of(const struct obs_trace *t, uint32_t k)
{
    return k ? t->kernels[k].mangled : "(unnamed)";
}

/* 1 + 3 x 5 + 2 + 2 checks: the three GRAPH records (ids in instantiation
 * order), every graph launch of the 3-node exec naming it, and the
 * summary's "Graph launches" table. */
static void check_graphs(const struct obs_trace *t, const char *label)
{
    static const struct {
        uint64_t nodes, kernel_nodes;
        const char *kernel; /* the only kernel, or NULL */
    } want[] = {{3, 1, DRV_DECODE_NAME}, {1, 1, DRV_DECODE_NAME /* a CUkernel's */}, {0, 0, NULL}};
    size_t i, launches = 0, bad_launch = 0;
    char *text = NULL;
    size_t text_len = 0;
    FILE *mem;
    struct obs_summary_options opt = {OBS_SUMMARY_GRAPHS};
    const char *table;

    is_int(3, (long long)t->ngraphs, "%s: a GRAPH record per instantiation", label);
    for (i = 0; i < 3; i++) {
        const struct obs_graph *g = obs_trace_graph(t, (uint32_t)i + 1);
        if (g == NULL) {
            skip_block(5, "%s: no graph %zu", label, i + 1);
            continue;
        }
        is_int((long long)want[i].nodes, (long long)g->node_count, "%s: exec %zu has %llu nodes", label, i + 1,
               (unsigned long long)want[i].nodes);
        is_int((long long)want[i].kernel_nodes, (long long)g->kernel_count, "%s: exec %zu: %llu kernel nodes",
               label, i + 1, (unsigned long long)want[i].kernel_nodes);
        is_int(0, (long long)g->flags, "%s: exec %zu: complete walk", label, i + 1);
        is_int(want[i].kernel ? 1 : 0, (long long)g->nkernels, "%s: exec %zu: distinct kernels", label, i + 1);
        ok(want[i].kernel == NULL ||
               (g->nkernels == 1 && strcmp(mangled_of(t, g->kernels[0].kernel), want[i].kernel) == 0 &&
                g->kernels[0].count == 1),
           "%s: exec %zu: %s%s", label, i + 1, want[i].kernel ? want[i].kernel : "no kernel",
           want[i].kernel ? " x1" : "");
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_graph *g;
        if (c->kind != OBS_KIND_GRAPH)
            continue;
        launches++;
        g = obs_call_graph(t, c);
        if (g == NULL || g->id != 1 || c->u.bytes != 3 || strcmp(mangled_of(t, c->kernel), DRV_DECODE_NAME) != 0) {
            bad_launch++;
            diag("%s: graph launch %zu: exec %u, %llu nodes, name %s", label, i, g ? g->id : 0,
                 (unsigned long long)c->u.bytes, mangled_of(t, c->kernel));
        }
    }
    is_int(DRV_CALLS_GRAPH, (long long)launches, "%s: %d graph launches", label, DRV_CALLS_GRAPH);
    is_int(0, (long long)bad_launch, "%s: each carries exec 1, its 3 nodes and its kernel's name", label);
    mem = open_memstream(&text, &text_len);
    if (mem != NULL) {
        obs_report_summary(t, mem, &opt);
        fclose(mem);
    }
    table = text ? strstr(text, "Graph launches (host API time") : NULL;
    ok(table != NULL, "%s: the summary has the graph launches table", label);
    if (!ok(table != NULL && strstr(table, "Kernel nodes") != NULL && strstr(table, shim_names_as_printed(DRV_DECODE_NAME " x1")) != NULL,
            "%s: its row shows the exec's kernel", label))
        diag_text("summary", text ? text : "(none)");
    free(text);
}

/* One driver app with and without the shim; trampolines: with
 * OBS_SIM_PROC_TRAMPOLINES=1 in both runs (cuGetProcAddress hands out
 * internal entry points, not the exported symbols). */
static void check_driver_app(const char *label, const char *app, const char *arg, size_t own_name_queries,
                             int trampolines)
{
    char log0[4096], log1[4096], prefix[4096], out_var[4200], log_var0[4200], log_var1[4200], trace_path[4200];
    const char *argv[3] = {app, arg, NULL};
    const char *env0[5], *env1[6];
    struct run_result plain, shimmed;
    struct sim_call *log = NULL, *log_plain = NULL;
    size_t nlog, nplain, nhooked;
    struct obs_trace *t;

    snprintf(log0, sizeof log0, "%s/drv-%s-plain.log", test_tmpdir(), label);
    snprintf(log1, sizeof log1, "%s/drv-%s-shim.log", test_tmpdir(), label);
    snprintf(prefix, sizeof prefix, "%s/drv-%s", test_tmpdir(), label);
    snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    snprintf(out_var, sizeof out_var, "OBS_OUTPUT=%s", prefix);
    snprintf(log_var0, sizeof log_var0, "OBS_SIM_LOG=%s", log0);
    snprintf(log_var1, sizeof log_var1, "OBS_SIM_LOG=%s", log1);
    remove(log0);
    remove(log1);
    remove(trace_path);
    env0[0] = sim_env(), env0[1] = log_var0, env0[2] = trampolines ? "OBS_SIM_PROC_TRAMPOLINES=1" : NULL;
    env0[3] = NULL;
    env1[0] = sim_env(), env1[1] = log_var1, env1[2] = out_var, env1[3] = "OBS_SUMMARY=0";
    env1[4] = trampolines ? "OBS_SIM_PROC_TRAMPOLINES=1" : NULL, env1[5] = NULL;
    shim_run(argv, env0, 0, 60, &plain);
    shim_run(argv, env1, 1, 60, &shimmed);
    ok(plain.exited && plain.status == 0, "%s: runs on the simulated driver without the shim", label);
    if (trampolines)
        ok(strstr(plain.out, " symbol other\n") != NULL && strstr(plain.out, " symbol cu") == NULL,
           "%s: the driver hands out internal entry points (no probe gets an exported symbol)", label);
    ok(shimmed.exited && shimmed.status == plain.status, "%s: same exit status under the shim (%d)", label,
       shimmed.status);
    if (!is_string(plain.out, shimmed.out, "%s: same stdout under the shim", label))
        diag_text("stderr", shimmed.err);
    nplain = sim_log_read(log0, &log_plain);
    nlog = sim_log_read(log1, &log);
    is_int((long long)nplain + (long long)own_name_queries + WALK_QUERIES, (long long)nlog,
           "%s: the shim's only driver calls are %zu name queries, one per function handle, and %u graph "
           "queries",
           label, own_name_queries, WALK_QUERIES);
    is_int((long long)name_queries(log_plain, nplain) + (long long)own_name_queries,
           (long long)name_queries(log, nlog), "%s: ... of them cuFuncGetName / cuKernelGetName", label);
    {
        size_t q, bad = 0;
        for (q = 0; q < WALK_QUERY_APIS; q++)
            if (log_api_count(log, nlog, walk_queries[q].api) !=
                log_api_count(log_plain, nplain, walk_queries[q].api) + walk_queries[q].calls) {
                bad++;
                diag("%s: %s: %zu log lines with the shim, %zu without", label, walk_queries[q].api,
                     log_api_count(log, nlog, walk_queries[q].api),
                     log_api_count(log_plain, nplain, walk_queries[q].api));
            }
        is_int(0, (long long)bad, "%s: ... and the graph walks' queries, once per instantiation", label);
    }
    nhooked = driver_lines(log, nlog);
    t = shim_trace_open(trace_path);
    /* Every app makes hooked calls: no trace means none was recorded. */
    if (!ok(t != NULL, "%s: a trace was written", label)) {
        skip_block(30, "%s: no trace", label);
    } else {
        compare_counts(t, log, nhooked, label);
        compare_records(t, log, nhooked, label);
        check_graphs(t, label);
        obs_trace_free(t);
    }
    free(log);
    free(log_plain);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* driver_lookup_app: the expected "-> OBJECT SYMBOL" of each lookup. */
static const struct {
    const char *label, *shimmed;
} lookups[] = {
    {"dlsym libcuda cuLaunchKernel rc 0", "libobsshim.so cuLaunchKernel"},
    {"dlsym libcuda cuMemcpyHtoD_v2_ptds rc 0", "libobsshim.so cuMemcpyHtoD_v2_ptds"},
    {"dlsym libcuda cuMemcpyHtoD rc 0", "libcuda.so.1 cuMemcpyHtoD"},
    {"dlsym libcuda cuInit rc 0", "libcuda.so.1 cuInit"},
    {"dlsym libcuda cudnnSimFakeEntry rc 0", "libcuda.so.1 cudnnSimFakeEntry"},
    {"dlsym libcuda cuGetProcAddress rc 0", "libobsshim.so cuGetProcAddress"},
    {"dlsym libcuda cuGetProcAddress_v2 rc 0", "libobsshim.so cuGetProcAddress_v2"},
    {"dlsym libcuda cuNoSuchEntry rc -1", "- -"},
    {"dlsym RTLD_NEXT cuLaunchKernel rc 0", "libobsshim.so cuLaunchKernel"},
    {"dlsym RTLD_NEXT cuInit rc -1", "- -"},
    {"dlsym RTLD_NEXT fopen rc 0", "libc.so.6 fopen64"},
    {"dlsym RTLD_DEFAULT cuLaunchKernel rc 0", "libobsshim.so cuLaunchKernel"},
    {"dlsym RTLD_DEFAULT cuInit rc -1", "- -"},
    {"proc_v2 cuLaunchKernel 4000 0 rc 0", "libobsshim.so cuLaunchKernel"},
    {"proc_v2 cuLaunchKernel 7000 2 rc 0", "libobsshim.so cuLaunchKernel_ptsz"},
    {"proc_v2 cuLaunchKernel 13000 1 rc 0", "libobsshim.so cuLaunchKernel"},
    {"proc_v2 cuLaunchKernelEx 11060 0 rc 0", "libobsshim.so cuLaunchKernelEx"},
    {"proc_v2 cuLaunchKernelEx 11050 0 rc 500", "- -"},
    {"proc_v2 cuGraphLaunch 10000 2 rc 0", "libobsshim.so cuGraphLaunch_ptsz"},
    {"proc_v2 cuMemcpyHtoD 3000 0 rc 0", "libcuda.so.1 cuMemcpyHtoD"},
    {"proc_v2 cuMemcpyHtoD 3020 0 rc 0", "libobsshim.so cuMemcpyHtoD_v2"},
    {"proc_v2 cuMemcpyHtoD 7000 2 rc 0", "libobsshim.so cuMemcpyHtoD_v2_ptds"},
    {"proc_v2 cuMemsetD8 2000 0 rc 0", "libcuda.so.1 cuMemsetD8"},
    {"proc_v2 cuMemsetD8 13000 2 rc 0", "libobsshim.so cuMemsetD8_v2_ptds"},
    {"proc_v2 cuCtxSynchronize 13000 0 rc 0", "libobsshim.so cuCtxSynchronize_v2"},
    {"proc_v2 cuCtxSynchronize 12090 0 rc 0", "libobsshim.so cuCtxSynchronize"},
    {"proc_v2 cuInit 2000 0 rc 0", "libcuda.so.1 cuInit"},
    {"proc_v2 cuGetProcAddress 11030 0 rc 0", "libobsshim.so cuGetProcAddress"},
    {"proc_v2 cuGetProcAddress 12000 0 rc 0", "libobsshim.so cuGetProcAddress_v2"},
    {"proc_v2 cudnnSimFakeEntry 13000 0 rc 500", "- -"},
    {"proc_v2 cuNoSuchEntry 13000 0 rc 500", "- -"},
    {"proc_v2 cuLaunchKernel 13010 0 rc 1", "- -"},
    {"proc_v1 cuLaunchKernel 12000 2 rc 0", "libobsshim.so cuLaunchKernel_ptsz"},
    {"proc_v1 cudnnSimFakeEntry 12000 0 rc 500", "- -"},
    {"proc_v2(proc_v2) cuLaunchKernel 13000 0 rc 0", "libobsshim.so cuLaunchKernel"},
};
#define LOOKUPS (sizeof lookups / sizeof lookups[0])

/* The "-> ..." part of label's line in out, or "" (static buffer). */
static const char *lookup_result(const char *out, const char *label)
{
    static char result[512];
    char needle[512];
    const char *p, *end;
    snprintf(needle, sizeof needle, "%s -> ", label);
    result[0] = '\0';
    for (p = out; p != NULL && (p = strstr(p, needle)) != NULL; p++)
        if (p == out || p[-1] == '\n') {
            p += strlen(needle);
            end = strchr(p, '\n');
            snprintf(result, sizeof result, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
            break;
        }
    return result;
}

/* The expected "-> OBJECT SYMBOL" of lookups[i] under the shim. RTLD_NEXT
 * fopen: what the app gets without the shim (relative to the app), the C
 * library's, or the ASan runtime's interceptor in a build with ASan. */
static const char *lookup_want(size_t i, const char *plain_out)
{
    static char want[512];
    if (strcmp(lookups[i].label, "dlsym RTLD_NEXT fopen rc 0") == 0 &&
        strncmp(lookup_result(plain_out, lookups[i].label), "libasan.so ", 11) == 0) {
        snprintf(want, sizeof want, "%s", lookup_result(plain_out, lookups[i].label));
        return want;
    }
    return lookups[i].shimmed;
}

static void check_lookups(void)
{
    const char *argv[] = {shim_build_path("tests/apps/driver_lookup_app"), NULL};
    const char *env[] = {sim_env(), "OBS_OUTPUT=/dev/null/never", NULL};
    struct run_result plain, shimmed;
    size_t i, bad_plain = 0, bad_shimmed = 0;

    shim_run(argv, env, 0, 60, &plain);
    shim_run(argv, env, 1, 60, &shimmed);
    ok(plain.exited && plain.status == 0 && shimmed.exited && shimmed.status == 0,
       "driver_lookup_app runs with and without the shim");
    for (i = 0; i < LOOKUPS; i++) {
        const char *seen = lookup_result(plain.out, lookups[i].label);
        /* Without the shim the driver's own pointer, or nothing (a failed
         * lookup, a symbol no object of the global scope exports). */
        const char *want = strncmp(lookups[i].shimmed, "libobsshim.so ", 14) == 0 &&
                                   strstr(lookups[i].label, "RTLD_") == NULL
                               ? lookups[i].shimmed + 14
                               : NULL;
        if (want != NULL) {
            char full[256];
            snprintf(full, sizeof full, "libcuda.so.1 %s", want);
            if (strcmp(seen, full) != 0 && bad_plain++ < 3)
                diag("without the shim: %s -> %s", lookups[i].label, seen);
        } else if (strstr(lookups[i].label, "RTLD_") == NULL && strcmp(seen, lookups[i].shimmed) != 0 &&
                   bad_plain++ < 3) {
            diag("without the shim: %s -> %s", lookups[i].label, seen);
        }
        want = lookup_want(i, plain.out);
        seen = lookup_result(shimmed.out, lookups[i].label);
        if (strcmp(seen, want) != 0 && bad_shimmed++ < 5)
            diag("under the shim: %s -> '%s', expected '%s'", lookups[i].label, seen, want);
    }
    is_int(0, (long long)bad_plain, "without the shim every lookup gives the driver's own pointer");
    is_int(0, (long long)bad_shimmed,
           "under the shim: our wrapper of the exact variant for hooked symbols; CUDA 2.x variants, support "
           "entry points, cudnn*, failed lookups passed through; RTLD_NEXT/RTLD_DEFAULT relative to the app");
    is_string(lookup_result(plain.out, "dlsym RTLD_NEXT cuLaunchKernel rc -1"), "- -",
              "without the shim RTLD_NEXT does not see the RTLD_LOCAL driver");
    is_string("libcuda.so.1 cudnnSimFakeEntry", lookup_result(shimmed.out, "dlsym libcuda cudnnSimFakeEntry rc 0"),
              "cudnnSimFakeEntry passes through unwrapped (the driver's pointer)");
    is_string("libcuda.so.1 cuMemcpyHtoD", lookup_result(shimmed.out, "proc_v2 cuMemcpyHtoD 3000 0 rc 0"),
              "a version below the _v2 ABI gets the driver's CUDA 2.x pointer, unwrapped");
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* With OBS_SIM_PROC_TRAMPOLINES=1 no cuGetProcAddress result is an
 * exported symbol ("?" as its symbol): the shim's wrapper ("libobsshim.so
 * ?", its proc wrapper) for exactly the lookups it wraps by address without
 * trampolines, the driver's own pointer for the others; dlsym as before. */
static void check_lookups_trampolines(void)
{
    const char *argv[] = {shim_build_path("tests/apps/driver_lookup_app"), NULL};
    const char *env[] = {sim_env(), "OBS_OUTPUT=/dev/null/never", "OBS_SIM_PROC_TRAMPOLINES=1", NULL};
    struct run_result plain, shimmed;
    size_t i, bad_plain = 0, bad_shimmed = 0, wrapped = 0;

    shim_run(argv, env, 0, 60, &plain);
    shim_run(argv, env, 1, 60, &shimmed);
    ok(plain.exited && plain.status == 0 && shimmed.exited && shimmed.status == 0,
       "trampolines: driver_lookup_app runs with and without the shim");
    for (i = 0; i < LOOKUPS; i++) {
        const char *label = lookups[i].label, *want = lookup_want(i, plain.out), *want_plain = want, *seen;
        int proc = strncmp(label, "proc_", 5) == 0;
        if (proc && strncmp(want, "libobsshim.so ", 14) == 0)
            want = "libobsshim.so ?", want_plain = "libcuda.so.1 ?", wrapped++;
        else if (proc && strncmp(want, "libcuda.so.1 ", 13) == 0)
            want = want_plain = "libcuda.so.1 ?";
        seen = lookup_result(shimmed.out, label);
        if (strcmp(seen, want) != 0 && bad_shimmed++ < 5)
            diag("trampolines, under the shim: %s -> '%s', expected '%s'", label, seen, want);
        seen = lookup_result(plain.out, label);
        if (proc && strcmp(seen, want_plain) != 0 && bad_plain++ < 3)
            diag("trampolines, without the shim: %s -> '%s', expected '%s'", label, seen, want_plain);
    }
    is_int(0, (long long)bad_plain, "trampolines: without the shim every successful lookup is an internal pointer");
    is_int(0, (long long)bad_shimmed,
           "trampolines: the %zu lookups of hooked variants (cuGetProcAddress too) get a proc wrapper; CUDA 2.x "
           "variants, support entry points, failed lookups pass through; dlsym unchanged",
           wrapped);
    is_string("libobsshim.so ?", lookup_result(shimmed.out, "proc_v2(proc_v2) cuLaunchKernel 13000 0 rc 0"),
              "trampolines: a lookup through the cuGetProcAddress_v2 that cuGetProcAddress_v2 handed out is "
              "wrapped too");
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* The resolver behind the proc wrappers: which variant (name, version,
 * flags) is served, by the table's rule. */
static void check_resolver(void)
{
    static const struct {
        const char *base;
        int version;
        unsigned flags;
        const char *want; /* NULL: no row */
    } cases[] = {
        {"cuMemcpyHtoD", 3000, 0, "cuMemcpyHtoD"},          /* the CUDA 2.x ABI: not hooked */
        {"cuMemcpyHtoD", 3020, 0, "cuMemcpyHtoD_v2"},
        {"cuMemcpyHtoD", 7000, 0, "cuMemcpyHtoD_v2"},
        {"cuMemcpyHtoD", 7000, 2, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemcpyHtoD", 7000, 1, "cuMemcpyHtoD_v2"},       /* legacy stream asked */
        {"cuMemcpyHtoD", 6050, 2, "cuMemcpyHtoD_v2"},       /* no per-thread row old enough */
        {"cuMemcpyHtoD", 13000, 2, "cuMemcpyHtoD_v2_ptds"},
        {"cuLaunchKernel", 4000, 0, "cuLaunchKernel"},
        {"cuLaunchKernel", 7000, 2, "cuLaunchKernel_ptsz"},
        {"cuLaunchKernel", 13000, 0, "cuLaunchKernel"},
        {"cuLaunchKernel", 3020, 0, NULL},                  /* older than the first row */
        {"cuLaunchKernel", 13010, 0, NULL},                 /* newer than the table knows */
        {"cuLaunchKernel", 7000, 4, NULL},                  /* unknown flag */
        {"cuCtxSynchronize", 12090, 0, "cuCtxSynchronize"},
        {"cuCtxSynchronize", 13000, 2, "cuCtxSynchronize_v2"}, /* no per-thread row: the legacy one */
        {"cuStreamBeginCapture", 10010, 2, "cuStreamBeginCapture_v2_ptsz"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
        {"cuNoSuchEntry", 13000, 0, NULL},
        {"cudnnSimFakeEntry", 13000, 0, NULL},
        {"cuLaunchKernel_ptsz", 13000, 0, NULL},            /* a variant symbol is no base name */
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = obs_cuda_proc_row_symbol(obs_cuda_proc_resolve(cases[i].base, cases[i].version,
                                                                         cases[i].flags));
        is_string(cases[i].want ? cases[i].want : "(none)", got ? got : "(none)", "resolve %s %d flags %u",
                  cases[i].base, cases[i].version, cases[i].flags);
    }
    is_int(-1, obs_cuda_proc_resolve(NULL, 13000, 0), "resolve NULL: no row");
    is_string("(none)", obs_cuda_proc_row_symbol(obs_cuda_proc_row_count()) ? "row" : "(none)",
              "no symbol past the last row");
}

/* The simulated runtime reaching the driver through cuGetProcAddress. */
static void check_runtime_via_driver(void)
{
    char logp[4096], prefix[4096], out_var[4200], log_var[4200], trace_path[4200];
    const char *argv[] = {shim_build_path("tests/apps/cuda_api_driver"), NULL};
    const char *env[6];
    struct run_result plain, shimmed;
    struct sim_call *log = NULL;
    size_t nlog, i, runtime_launches = 0, driver_launches = 0;
    unsigned long trace_runtime = 0, trace_driver = 0;
    struct obs_trace *t;

    snprintf(logp, sizeof logp, "%s/drv-via.log", test_tmpdir());
    snprintf(prefix, sizeof prefix, "%s/drv-via", test_tmpdir());
    snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    snprintf(out_var, sizeof out_var, "OBS_OUTPUT=%s", prefix);
    snprintf(log_var, sizeof log_var, "OBS_SIM_LOG=%s", logp);
    remove(trace_path);
    env[0] = sim_env(), env[1] = "OBS_SIM_CUDART_VIA_DRIVER=1", env[2] = "OBS_SUMMARY=0", env[3] = NULL;
    shim_run(argv, env, 0, 60, &plain);
    env[3] = out_var, env[4] = log_var, env[5] = NULL;
    remove(logp);
    shim_run(argv, env, 1, 60, &shimmed);
    ok(shimmed.exited && shimmed.status == plain.status && plain.exited && plain.status == 0,
       "cuda_api_driver via the driver: same exit status under the shim");
    is_string(plain.out, shimmed.out, "cuda_api_driver via the driver: same stdout under the shim");
    nlog = sim_log_read(logp, &log);
    for (i = 0; i < nlog; i++)
        if (strcmp(log[i].kind, "kernel") == 0) {
            if (strncmp(log[i].api, "cu", 2) == 0 && strncmp(log[i].api, "cuda", 4) != 0)
                driver_launches++;
            else
                runtime_launches++;
        }
    ok(runtime_launches > 0 && driver_launches == runtime_launches,
       "every runtime launch reached the driver (%zu runtime, %zu driver launches in the log)", runtime_launches,
       driver_launches);
    t = shim_trace_open(trace_path);
    if (t == NULL) {
        skip_block(2, "no trace");
    } else {
        for (i = 0; i < t->ncalls; i++)
            if (t->calls[i].kind == OBS_KIND_KERNEL) {
                if (is_driver_api(t->calls[i].api))
                    trace_driver++;
                else
                    trace_runtime++;
            }
        is_int((long long)runtime_launches, (long long)trace_runtime,
               "every launch recorded once, by the runtime hook");
        is_int(0, (long long)trace_driver, "no driver record for a launch the runtime hook recorded");
        obs_trace_free(t);
    }
    free(log);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* OBS_GPU_TIME=events on the driver. */
static void check_gpu_time(void)
{
    char prefix[4096], out_var[4200], trace_path[4200];
    const char *argv[] = {shim_build_path("tests/apps/driver_static_like"), NULL};
    const char *env[5];
    struct run_result plain, shimmed;
    struct obs_trace *t;
    size_t i, spans = 0, kernel_spans = 0, bad_kernel = 0, bad_htod = 0;
    const uint64_t kernel_ns = sim_kernel_cost_ns(GRID_THREADS, 0);
    const uint64_t htod_ns = sim_copy_cost_ns(N_BYTES, 0);

    snprintf(prefix, sizeof prefix, "%s/drv-gpu", test_tmpdir());
    snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    snprintf(out_var, sizeof out_var, "OBS_OUTPUT=%s", prefix);
    remove(trace_path);
    env[0] = sim_env(), env[1] = NULL;
    shim_run(argv, env, 0, 60, &plain);
    env[1] = out_var, env[2] = "OBS_GPU_TIME=events", env[3] = "OBS_SUMMARY=0", env[4] = NULL;
    shim_run(argv, env, 1, 60, &shimmed);
    ok(shimmed.exited && shimmed.status == 0, "GPU time: driver_static_like exits 0");
    is_string(plain.out, shimmed.out, "GPU time: same stdout (the shim's events are its own)");
    t = shim_trace_open(trace_path);
    if (t == NULL) {
        skip_block(3, "no trace");
    } else {
        for (i = 0; i < t->ncalls; i++) {
            const struct obs_call *c = &t->calls[i];
            uint64_t dur;
            if (c->gpu == OBS_NONE || c->gpu >= t->ngpu)
                continue;
            spans++;
            dur = t->gpu[c->gpu].end - t->gpu[c->gpu].begin;
            if (c->kind == OBS_KIND_KERNEL) {
                kernel_spans++;
                if (dur != kernel_ns && bad_kernel++ == 0)
                    diag("%s: %llu ns, cost model %llu", obs_api_name(c->api), (unsigned long long)dur,
                         (unsigned long long)kernel_ns);
            }
            if ((c->api == OBS_API_cuMemcpyHtoD_v2 || c->api == OBS_API_cuMemcpyHtoDAsync_v2) && dur != htod_ns &&
                bad_htod++ == 0)
                diag("%s: %llu ns, cost model %llu", obs_api_name(c->api), (unsigned long long)dur,
                     (unsigned long long)htod_ns);
        }
        /* Every successful launch, copy, memset and graph launch but the 4
         * calls captured into graphs (2 launches, a copy, a memset). */
        is_int(DRV_CALLS_KERNEL + DRV_CALLS_GRAPH + DRV_CALLS_MEMCPY + DRV_CALLS_MEMSET - 4, (long long)spans,
               "GPU time: a span for every driver launch, copy, memset and graph launch not captured");
        ok(kernel_spans == DRV_CALLS_KERNEL - 2 && bad_kernel == 0,
           "GPU time: %zu kernel spans of %llu ns each (the cost model)", kernel_spans,
           (unsigned long long)kernel_ns);
        is_int(0, (long long)bad_htod, "GPU time: HtoD copies take the cost model's %llu ns",
               (unsigned long long)htod_ns);
        obs_trace_free(t);
    }
    run_result_free(&plain);
    run_result_free(&shimmed);
}

/* Records per API of a trace, into counts[OBS_API_COUNT]; false if unreadable. */
static int api_counts(const char *path, unsigned long *counts)
{
    struct obs_trace *t = shim_trace_open(path);
    size_t i;
    memset(counts, 0, OBS_API_COUNT * sizeof *counts);
    if (t == NULL)
        return 0;
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].api < OBS_API_COUNT)
            counts[t->calls[i].api]++;
    obs_trace_free(t);
    return 1;
}

static void check_workloads(void)
{
    const char *why = NULL, *path = workload_path(&workload_bins[0], &why);
    char prefix[2][4096], out_var[2][4200], trace_path[2][4200];
    unsigned long counts[2][OBS_API_COUNT];
    struct run_result res[2];
    unsigned api;
    int m;

    if (path == NULL) {
        skip_block(5, "obs_cuda: %s", why);
    } else {
        const char *argv[] = {path, NULL};
        size_t driver_records = 0, mismatches = 0;
        for (m = 0; m < 2; m++) {
            const char *env[5] = {sim_env(), out_var[m], "OBS_SUMMARY=0", m ? "OBS_SIM_CUDART_VIA_DRIVER=1" : NULL,
                                  NULL};
            snprintf(prefix[m], sizeof prefix[m], "%s/drv-obs-cuda-%d", test_tmpdir(), m);
            snprintf(trace_path[m], sizeof trace_path[m], "%s.obs", prefix[m]);
            snprintf(out_var[m], sizeof out_var[m], "OBS_OUTPUT=%s", prefix[m]);
            remove(trace_path[m]);
            shim_run(argv, env, 1, 120, &res[m]);
        }
        ok(res[0].exited && res[0].status == 0 && res[1].exited && res[1].status == 0,
           "obs_cuda under the shim, launches via the driver or not: exit 0");
        is_string(res[0].out, res[1].out, "obs_cuda: the same stdout via the driver");
        ok(api_counts(trace_path[0], counts[0]) && api_counts(trace_path[1], counts[1]), "obs_cuda: both traces read");
        for (api = 1; api < OBS_API_COUNT; api++) {
            if (counts[0][api] != counts[1][api] && mismatches++ < 3)
                diag("%s: %lu records, via the driver %lu", obs_api_name(api), counts[0][api], counts[1][api]);
            if (api >= OBS_API_cuLaunchKernel)
                driver_records += counts[1][api];
        }
        is_int(0, (long long)mismatches, "obs_cuda: the same records per API via the driver (%lu launches)",
               counts[1][OBS_API___cudaLaunchKernel]);
        is_int(0, (long long)driver_records, "obs_cuda: each launch recorded once, by the runtime hook");
        run_result_free(&res[0]);
        run_result_free(&res[1]);
    }

    path = workload_path(&workload_bins[1], &why);
    if (path == NULL) {
        skip_block(2, "obs_cuda_static: %s", why);
    } else {
        const char *argv[] = {path, NULL};
        const char *env[5] = {sim_env(), out_var[0], "OBS_SUMMARY=0", "OBS_SIM_QUIET=1", NULL};
        snprintf(prefix[0], sizeof prefix[0], "%s/drv-obs-cuda-static", test_tmpdir());
        snprintf(out_var[0], sizeof out_var[0], "OBS_OUTPUT=%s", prefix[0]);
        shim_run(argv, env, 0, 60, &res[0]);
        shim_run(argv, env, 1, 60, &res[1]);
        ok(res[0].exited && res[1].exited && res[0].status == 0 && res[1].status == 0,
           "obs_cuda_static on the simulated driver: exit 0 with and without the shim (%d)", res[1].status);
        is_string(res[0].out, res[1].out, "obs_cuda_static: the same stdout under the shim");
        run_result_free(&res[0]);
        run_result_free(&res[1]);
    }
}

int main(void)
{
    plan_lazy();
    /* The shim asks the driver once per function handle: driver_calls.c
     * launches 4 (prefill, decode, the library kernel as a CUfunction, the
     * library kernel's own CUfunction). */
    check_driver_app("driver_static_like", shim_build_path("tests/apps/driver_static_like"), NULL, 4, 0);
    check_driver_app("driver_static_like_v1", shim_build_path("tests/apps/driver_static_like"), "--proc-v1", 4, 0);
    check_driver_app("driver_linked", shim_build_path("tests/apps/driver_linked"), NULL, 4, 0);
    /* A driver that hands out internal entry points: the same records. */
    check_driver_app("driver_static_like_tramp", shim_build_path("tests/apps/driver_static_like"), NULL, 4, 1);
    check_driver_app("driver_static_like_v1_tramp", shim_build_path("tests/apps/driver_static_like"), "--proc-v1",
                     4, 1);
    check_lookups();
    check_lookups_trampolines();
    check_resolver();
    check_runtime_via_driver();
    check_gpu_time();
    check_workloads();
    return 0;
}
