/* Graph launches under the shim (graph_execs.h): each graph exec is walked
 * once when it is instantiated, and the trace holds one GRAPH record (node
 * and kernel node counts) with its kernels by name (GRAPH_KERNELS); every
 * graph launch names its exec and carries its node count; the summary's
 * "Graph launches" table and the JSON slices show them. The walk is
 * read-only: the app's output and its last-error behaviour are those of a
 * run without the shim, also when the shim's own queries fail
 * (OBS_SIM_FAIL).
 *
 * Programs: tests/apps/cuda_api_driver and hip_api_driver (a graph of a
 * kernel and a copy, launched twice / once); the real obs_cuda, obs_hip
 * (--graphs: one exec of 254 nodes, 127 KV gathers and 127 decodes at the
 * workload's defaults, launched 20 times), skipped when not built. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

struct want_kernel {
    const char *mangled; /* exact mangled name */
    unsigned count;
};

struct want_graph {
    uint64_t nodes, kernel_nodes;
    const struct want_kernel *kernels; /* in node order */
    size_t nkernels;
    unsigned launches;
    unsigned flags;
    const char *top;      /* the launch records' name: most frequent kernel, ties to the first */
    const char *row_text; /* expected in the summary table's row */
    const char *json_args; /* expected in each graph launch slice's args */
};

static const char *kernel_mangled(const struct obs_trace *t, uint32_t k)
{
    return k ? t->kernels[k].mangled : "(unnamed)";
}

/* 8 checks. */
static void check_trace(const struct obs_trace *t, const struct want_graph *w, const char *label)
{
    const struct obs_graph *g = t->ngraphs == 1 ? &t->graphs[0] : NULL;
    size_t i, bad_kernels = 0, bad_launch = 0, launches = 0;

    is_int(1, (long long)t->ngraphs, "%s: one GRAPH record", label);
    if (g == NULL) {
        skip_block(7, "no single graph");
        return;
    }
    is_int((long long)w->nodes, (long long)g->node_count, "%s: the exec has %llu nodes", label,
           (unsigned long long)w->nodes);
    is_int((long long)w->kernel_nodes, (long long)g->kernel_count, "%s: %llu of them kernel nodes", label,
           (unsigned long long)w->kernel_nodes);
    is_int((long long)w->flags, (long long)g->flags, "%s: walk flags %u", label, w->flags);
    is_int((long long)w->nkernels, (long long)g->nkernels, "%s: %zu distinct kernels", label, w->nkernels);
    for (i = 0; i < g->nkernels && i < w->nkernels; i++)
        if (strcmp(kernel_mangled(t, g->kernels[i].kernel), w->kernels[i].mangled) != 0 ||
            g->kernels[i].count != w->kernels[i].count) {
            bad_kernels++;
            diag("%s: kernel %zu is %s x%u, want %s x%u", label, i, kernel_mangled(t, g->kernels[i].kernel),
                 g->kernels[i].count, w->kernels[i].mangled, w->kernels[i].count);
        }
    is_int(0, (long long)bad_kernels, "%s: kernels by name, in node order", label);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        if (c->kind != OBS_KIND_GRAPH || c->status != 0)
            continue;
        launches++;
        /* the record's name: the most frequent kernel, ties to the first in node order */
        if (obs_call_graph(t, c) != g || c->u.bytes != w->nodes ||
            strcmp(kernel_mangled(t, c->kernel), w->top) != 0) {
            if (bad_launch++ == 0)
                diag("%s: launch seq %zu: graph %p, nodes %llu, name %s", label, i, (const void *)obs_call_graph(t, c),
                     (unsigned long long)c->u.bytes, kernel_mangled(t, c->kernel));
        }
    }
    is_int((long long)w->launches, (long long)launches, "%s: %u successful graph launches", label, w->launches);
    is_int(0, (long long)bad_launch, "%s: each names its exec, node count and most frequent kernel", label);
}

/* "Graph launches" in the summary with the exec's row. 2 checks. */
static void check_summary(const char *err, const struct want_graph *w, const char *label, int gpu)
{
    const char *table = strstr(err, gpu ? "Graph launches (GPU time" : "Graph launches (host API time");
    ok(table != NULL, "%s: the summary has the graph table (%s)", label, gpu ? "GPU time" : "host time");
    if (!ok(table != NULL && strstr(table, "Kernel nodes") != NULL && strstr(table, shim_names_as_printed(w->row_text)) != NULL,
            "%s: its row shows \"%s\"", label, w->row_text))
        diag_text("stderr", err);
}

struct run_spec {
    const char *label;
    const char *tag; /* file names */
    const char *const *argv;
    const char *fail; /* OBS_SIM_FAIL for both runs, or NULL */
    int gpu_time;
    int sim_libpath; /* run on the simulated runtimes (LD_LIBRARY_PATH) */
};

/* Every graph launch slice of the JSON carries the exec's node count and
 * kernels. 1 check. */
static void check_json(const char *path, const struct want_graph *w, const char *label)
{
    char *json = test_read_file(path, NULL);
    size_t with_args = json ? count_lines_with(json, shim_names_as_printed(w->json_args)) : 0;
    if (!is_int((long long)w->launches, (long long)with_args, "%s: %u JSON graph launch slices carry %s", label,
                w->launches, w->json_args) &&
        json != NULL) {
        const char *first = strstr(json, "\"cat\":\"graph\"");
        diag("first graph slice: %.400s", first ? first : "(none)");
    }
    free(json);
}

/* Runs without and with the shim; compares outputs; checks the trace, the
 * summary and the JSON. 4 + 8 + 2 + 1 checks. */
static void run_and_check(const struct run_spec *r, const struct want_graph *w)
{
    char libpath[4200], out_env[4300], trace[4300], json[4300], fail_env[300];
    const char *env_plain[6], *env_shim[8];
    size_t np = 0, ns = 0;
    struct run_result plain, shim;
    struct obs_trace *t;

    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), r->tag);
    snprintf(trace, sizeof trace, "%s/%s.obs", test_tmpdir(), r->tag);
    snprintf(json, sizeof json, "%s/%s.json", test_tmpdir(), r->tag);
    snprintf(fail_env, sizeof fail_env, "OBS_SIM_FAIL=%s", r->fail ? r->fail : "");
    if (r->sim_libpath)
        env_plain[np++] = env_shim[ns++] = libpath;
    env_plain[np++] = env_shim[ns++] = "OBS_SIM_QUIET=1";
    if (r->fail)
        env_plain[np++] = env_shim[ns++] = fail_env;
    env_shim[ns++] = out_env;
    env_shim[ns++] = "OBS_SUMMARY=full"; /* the graph table per exec */
    env_shim[ns++] = "OBS_TRACE=json";   /* the graph slices' args */
    if (r->gpu_time)
        env_shim[ns++] = "OBS_GPU_TIME=events";
    env_plain[np] = env_shim[ns] = NULL;
    shim_run(r->argv, env_plain, 0, 120, &plain);
    shim_run(r->argv, env_shim, 1, 120, &shim);

    ok(plain.exited && shim.exited, "%s: both runs exited", r->label);
    is_int(plain.status, shim.status, "%s: exit status %d with and without the shim", r->label, plain.status);
    if (!is_string(plain.out, shim.out, "%s: same output (return codes, last errors)", r->label))
        diag_text("stderr under the shim", shim.err);
    is_int(0, (long long)warning_lines(shim.err), "%s: no obsshim warning", r->label);
    t = shim_trace_open(trace);
    if (t == NULL) {
        ok(0, "%s: trace %s reads back", r->label, trace);
        skip_block(7 + 2 + 1, "no trace");
    } else {
        check_trace(t, w, r->label);
        obs_trace_free(t);
        check_summary(shim.err, w, r->label, r->gpu_time);
        check_json(json, w, r->label);
    }
    run_result_free(&plain);
    run_result_free(&shim);
}

#define CHECKS_PER_RUN 15

static const struct want_kernel cuda_driver_kernels[] = {{"_Z13decode_kernelPfPKfii", 1}};
static const struct want_kernel hip_driver_kernels[] = {{"_Z15obs_driver_fillPfi", 1}};
static const struct want_kernel unnamed_kernel[] = {{"(unnamed)", 1}};
static const struct want_kernel workload_kernels[] = {{"_Z16kv_gather_kernelPfPKfii", 127},
                                                      {"_Z13decode_kernelPfPKfii", 127}};

static void run_drivers(void)
{
    const char *cuda_argv[] = {shim_build_path("tests/apps/cuda_api_driver"), NULL};
    static char hip_path[4200];
    const char *hip_argv[] = {hip_path, NULL};
    const struct want_graph cuda = {2, 1, cuda_driver_kernels, 1, 2, 0, "_Z13decode_kernelPfPKfii",
                                    "  _Z13decode_kernelPfPKfii x1",
                                    "\"nodes\":2,\"graph\":1,\"kernel_nodes\":1,\"kernels\":{\"_Z13decode_kernelPfPKfii\":1}"};
    const struct want_graph hip = {2, 1, hip_driver_kernels, 1, 1, 0, "_Z15obs_driver_fillPfi",
                                   "  _Z15obs_driver_fillPfi x1",
                                   "\"nodes\":2,\"graph\":1,\"kernel_nodes\":1,\"kernels\":{\"_Z15obs_driver_fillPfi\":1}"};
    /* the kernel node's parameters cannot be read: counted, unnamed */
    const struct want_graph cuda_unnamed = {2, 1, unnamed_kernel, 1, 2, OBS_GRAPH_WALK_INCOMPLETE, "(unnamed)",
                                            "  (unnamed) x1",
                                            "\"nodes\":2,\"graph\":1,\"kernel_nodes\":1,\"kernels\":{\"(unnamed)\":1}"};
    /* the first node's type (the kernel) cannot be read, the second is a copy */
    const struct want_graph cuda_untyped = {2, 0, NULL, 0, 2, OBS_GRAPH_WALK_INCOMPLETE, "(unnamed)",
                                            "  2             0",
                                            "\"nodes\":2,\"graph\":1,\"kernel_nodes\":0,\"kernels\":{}"};
    struct run_spec r;

    snprintf(hip_path, sizeof hip_path, "%s", shim_build_path("tests/apps/hip_api_driver"));
    memset(&r, 0, sizeof r);
    r.label = r.tag = "cuda_api_driver";
    r.argv = cuda_argv;
    run_and_check(&r, &cuda);

    /* The shim's queries fail: the app's cudaGetLastError at the end still
     * reads cudaSuccess (the shim read its own error away). */
    r.label = "cuda_api_driver, GetParams fails";
    r.tag = "params-fail";
    r.fail = "cudaGraphKernelNodeGetParams:1";
    run_and_check(&r, &cuda_unnamed);

    r.label = "cuda_api_driver, NodeGetType fails";
    r.tag = "type-fail";
    r.fail = "cudaGraphNodeGetType:1";
    run_and_check(&r, &cuda_untyped);

    r.fail = NULL;
    r.label = r.tag = "hip_api_driver";
    r.argv = hip_argv;
    run_and_check(&r, &hip);
}

static void run_workloads(void)
{
    const struct want_graph w = {254, 254, workload_kernels, 2, 20, 0, "_Z16kv_gather_kernelPfPKfii",
                                 " x127, decode_kernel(float*, float const*, int, int) x127",
                                 "\"nodes\":254,\"graph\":1,\"kernel_nodes\":254,\"kernels\":{"
                                 "\"kv_gather_kernel(float*, float const*, int, int)\":127,"
                                 "\"decode_kernel(float*, float const*, int, int)\":127}"};
    size_t i;

    for (i = 0; i < WORKLOAD_BIN_COUNT; i++) {
        const struct workload_bin *b = &workload_bins[i];
        const char *why = NULL, *path;
        const char *argv[3];
        char label[64], tag[64];
        struct run_spec r;
        int gpu;

        if (!b->needs_sim)
            continue; /* static cudart: driver-level hooks, not these */
        path = workload_path(b, &why);
        for (gpu = 0; gpu < 2; gpu++) {
            if (path == NULL) {
                skip_block(CHECKS_PER_RUN, "%s: %s", b->label, why);
                continue;
            }
            argv[0] = path;
            argv[1] = "--graphs";
            argv[2] = NULL;
            snprintf(label, sizeof label, "%s --graphs%s", b->label, gpu ? ", GPU time" : "");
            snprintf(tag, sizeof tag, "%s-graphs%s", b->label, gpu ? "-gpu" : "");
            memset(&r, 0, sizeof r);
            r.label = label;
            r.tag = tag;
            r.argv = argv;
            r.gpu_time = gpu;
            r.sim_libpath = 1;
            run_and_check(&r, &w);
        }
    }
}

int main(void)
{
    const char *driver = shim_build_path("tests/apps/cuda_api_driver");
    if (!test_executable(driver))
        skip_all("%s not built", driver);
    plan(CHECKS_PER_RUN * (4 + 2 * 2));
    run_drivers();
    run_workloads();
    return 0;
}
