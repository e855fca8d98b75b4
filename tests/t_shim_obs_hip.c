/* The real hipcc-built workload (workload/obs_hip) under the shim, on the
 * simulated libamdhip64.so.5: the binary imports versioned symbols
 * (hipMalloc@hip_4.2 ...), registers its kernels from hipcc's generated
 * constructor (__hipRegisterFunction) and launches with <<<>>>
 * (__hipPushCallConfiguration / __hipPopCallConfiguration / hipLaunchKernel);
 * the shim's unversioned definitions must interpose them all.
 *   - output and exit status as without the shim (the simulator's clock
 *     makes the TTFT line deterministic);
 *   - launches per kernel name equal the simulator's log (defaults: 21
 *     prefill, 2561 KV gather, 2561 decode), names mangled as registered
 *     and demangled (the process has a C++ runtime);
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

/* Launches in the trace of the kernel whose demangled name starts with
 * function (e.g. "prefill_kernel("). */
static unsigned long launches_of(const struct obs_trace *t, const char *function)
{
    unsigned long n = 0;
    size_t i;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        if (obs_api_kind(c->api) == OBS_KIND_KERNEL && c->kernel != 0 &&
            strncmp(t->kernels[c->kernel].demangled, function, strlen(function)) == 0)
            n++;
    }
    return n;
}

static void run_case(const char *bin, const char *flag)
{
    const char *label = flag ? flag : "default";
    const char *argv[] = {bin, flag, NULL};
    char log_env[4400], log_path[4300], out_env[4300], trace[4300];
    struct run_result plain, shim;
    struct sim_call *log;
    size_t nlog, i, nnames = 0, mismatched = 0, demangled = 0;
    struct name_count names[MAX_NAMES];
    unsigned long graph_log = 0, graph_trace = 0, graph_bytes_ok = 0, graph_nodes = 0;
    struct obs_trace *t;
    const char *tag = flag ? flag + 2 : "default";

    snprintf(log_path, sizeof log_path, "%s/hip-%s.log", test_tmpdir(), tag);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/hip-%s", test_tmpdir(), tag);
    snprintf(trace, sizeof trace, "%s/hip-%s.obs", test_tmpdir(), tag);
    {
        const char *env_plain[] = {sim_library_path_env(), NULL};
        const char *env_shim[] = {sim_library_path_env(), log_env, out_env, "OBS_JSON=0", NULL};
        shim_run(argv, env_plain, 0, 120, &plain);
        shim_run(argv, env_shim, 1, 120, &shim);
    }
    ok(shim.exited && shim.status == 0 && plain.status == 0, "obs_hip %s: exit 0 with and without the shim", label);
    is_string(plain.out, shim.out, "obs_hip %s: same output", label);
    ok(strstr(shim.err, "Kernels") != NULL, "obs_hip %s: summary printed", label);
    is_int(0, (long long)warning_lines(shim.err), "obs_hip %s: no warning", label);
    if (warning_lines(shim.err))
        diag_text("stderr under the shim", shim.err);

    nlog = sim_log_read(log_path, &log);
    t = shim_trace_open(trace);
    ok(t != NULL && nlog > 0, "obs_hip %s: trace and log read", label);
    if (t == NULL || nlog == 0) {
        skip_block(flag ? 7 : 8, "nothing to compare");
        run_result_free(&plain);
        run_result_free(&shim);
        return;
    }
    for (i = 0; i < nlog; i++) {
        struct name_count *s;
        if (strcmp(log[i].kind, "kernel") == 0 && (s = slot(names, &nnames, log[i].name)) != NULL)
            s->log++;
        if (strcmp(log[i].api, "hipGraphLaunch") == 0) {
            graph_log++;
            graph_nodes = strtoul(log[i].bytes, NULL, 10);
        }
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
        if (strcmp(log[i].api, "hipGraphLaunch") == 0) {
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
    is_int(3, (long long)nnames, "obs_hip %s: 3 kernels launched", label);
    is_int(0, (long long)mismatched, "obs_hip %s: launches per kernel name equal the log's", label);
    if (flag == NULL) {
        unsigned long prefill = launches_of(t, "prefill_kernel("), gather = launches_of(t, "kv_gather_kernel("),
                      decode = launches_of(t, "decode_kernel(");
        ok(prefill == 21 && gather == 2561 && decode == 2561,
           "obs_hip default: 21 / 2561 / 2561 launches of prefill / kv_gather / decode (saw %lu / %lu / %lu)",
           prefill, gather, decode);
    }
    for (i = 1; i < t->nkernels; i++)
        if (strchr(t->kernels[i].demangled, '(') != NULL && strcmp(t->kernels[i].demangled, t->kernels[i].mangled) != 0)
            demangled++;
    is_int((long long)t->nkernels - 1, (long long)demangled, "obs_hip %s: every kernel name demangled", label);
    if (flag != NULL)
        ok(graph_log > 0 && graph_nodes > 0, "obs_hip %s: %lu graph launches of %lu nodes in the log", label, graph_log,
           graph_nodes);
    else
        is_int(0, (long long)graph_log, "obs_hip %s: no graph launch", label);
    is_int((long long)graph_log, (long long)graph_trace, "obs_hip %s: %lu graph launches recorded", label, graph_log);
    is_int((long long)graph_log, (long long)graph_bytes_ok, "obs_hip %s: graph node counts match the log", label);
    is_int(0, (long long)t->records_lost, "obs_hip %s: nothing lost", label);
    obs_trace_free(t);
    free(log);
    run_result_free(&plain);
    run_result_free(&shim);
}

int main(void)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[2], &why);
    if (bin == NULL)
        skip_all("obs_hip: %s", why);
    plan(13 + 12);
    run_case(bin, NULL);
    run_case(bin, "--graphs");
    return 0;
}
