/* The real nvcc-built workload (workload/obs_cuda, -cudart shared) under the
 * shim, on the simulated runtime: the binary imports versioned symbols
 * (cudaMalloc@libcudart.so.13 ...) and CUDA 13's <<<>>> path
 * (__cudaGetKernel + __cudaLaunchKernel); the shim's unversioned
 * definitions must interpose them all.
 *   - output and exit status as without the shim (the simulator's clock
 *     makes the TTFT line deterministic);
 *   - launches per kernel name equal the simulator's log, names mangled as
 *     registered and demangled (the process has a C++ runtime);
 *   - with --graphs: graph launches and their node counts match too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#define MAX_NAMES 16

struct name_count {
    char name[256];
    unsigned long log, trace;
};

static struct name_count *slot(struct name_count *names, size_t *n, const char *name)
{
    size_t i;
    for (i = 0; i < *n; i++)
        if (strcmp(names[i].name, name) == 0)
            return &names[i];
    if (*n == MAX_NAMES)
        return NULL;
    snprintf(names[*n].name, sizeof names[*n].name, "%s", name);
    names[*n].log = names[*n].trace = 0;
    return &names[(*n)++];
}

static void run_case(const char *bin, const char *flag)
{
    const char *label = flag ? flag : "default";
    const char *argv[] = {bin, flag, NULL};
    char libpath[4200], log_env[4400], log_path[4300], out_env[4300], trace[4300];
    struct run_result plain, shim;
    struct sim_call *log;
    size_t nlog, i, nnames = 0, mismatched = 0, demangled = 0;
    struct name_count names[MAX_NAMES];
    unsigned long graph_log = 0, graph_trace = 0, graph_bytes_ok = 0;
    struct obs_trace *t;
    const char *tag = flag ? flag + 2 : "default";

    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(log_path, sizeof log_path, "%s/%s.log", test_tmpdir(), tag);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), tag);
    snprintf(trace, sizeof trace, "%s/%s.obs", test_tmpdir(), tag);
    {
        const char *env_plain[] = {libpath, NULL};
        const char *env_shim[] = {libpath, log_env, out_env, "OBS_JSON=0", NULL};
        shim_run(argv, env_plain, 0, 120, &plain);
        shim_run(argv, env_shim, 1, 120, &shim);
    }
    ok(shim.exited && shim.status == 0 && plain.status == 0, "obs_cuda %s: exit 0 with and without the shim", label);
    is_string(plain.out, shim.out, "obs_cuda %s: same output", label);
    ok(strstr(shim.err, "Kernels") != NULL, "obs_cuda %s: summary printed", label);
    is_int(0, (long long)warning_lines(shim.err), "obs_cuda %s: no warning", label);

    nlog = sim_log_read(log_path, &log);
    t = shim_trace_open(trace);
    ok(t != NULL && nlog > 0, "obs_cuda %s: trace and log read", label);
    if (t == NULL || nlog == 0) {
        skip_block(6, "nothing to compare");
        return;
    }
    for (i = 0; i < nlog; i++) {
        struct name_count *s;
        if (strcmp(log[i].kind, "kernel") == 0 && (s = slot(names, &nnames, log[i].name)) != NULL)
            s->log++;
        if (strncmp(log[i].api, "cudaGraphLaunch", 15) == 0)
            graph_log++;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        struct name_count *s;
        if (obs_api_kind(c->api) == OBS_KIND_KERNEL &&
            (s = slot(names, &nnames, c->kernel ? t->kernels[c->kernel].mangled : "(none)")) != NULL)
            s->trace++;
        if (obs_api_kind(c->api) == OBS_KIND_GRAPH)
            graph_trace++;
    }
    for (i = 0; i < nlog; i++) /* node counts, in order */
        if (strncmp(log[i].api, "cudaGraphLaunch", 15) == 0) {
            size_t j, seen = 0;
            for (j = 0; j < t->ncalls; j++)
                if (obs_api_kind(t->calls[j].api) == OBS_KIND_GRAPH && seen++ == graph_bytes_ok) {
                    if (t->calls[j].u.bytes == strtoull(log[i].bytes, NULL, 10))
                        graph_bytes_ok++;
                    break;
                }
        }
    for (i = 0; i < nnames; i++)
        if (names[i].log != names[i].trace) {
            mismatched++;
            diag("%s: %lu launches in the log, %lu in the trace", names[i].name, names[i].log, names[i].trace);
        }
    ok(nnames >= 3, "obs_cuda %s: %zu kernels launched", label, nnames);
    is_int(0, (long long)mismatched, "obs_cuda %s: launches per kernel name equal the log's", label);
    for (i = 1; i < t->nkernels; i++)
        if (strchr(t->kernels[i].demangled, '(') != NULL && strcmp(t->kernels[i].demangled, t->kernels[i].mangled) != 0)
            demangled++;
    is_int((long long)t->nkernels - 1, (long long)demangled, "obs_cuda %s: every kernel name demangled", label);
    is_int((long long)graph_log, (long long)graph_trace, "obs_cuda %s: %lu graph launches", label, graph_log);
    is_int((long long)graph_log, (long long)graph_bytes_ok, "obs_cuda %s: graph node counts match the log", label);
    is_int(0, (long long)t->records_lost, "obs_cuda %s: nothing lost", label);
    obs_trace_free(t);
    free(log);
    run_result_free(&plain);
    run_result_free(&shim);
}

int main(void)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[0], &why);
    if (bin == NULL)
        skip_all("obs_cuda: %s", why);
    plan(2 * 11);
    run_case(bin, NULL);
    run_case(bin, "--graphs");
    return 0;
}
