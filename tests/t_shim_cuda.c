/* The shim's CUDA runtime hooks against the simulator's ground truth:
 * tests/apps/cuda_api_driver calls every hooked entry point (and, with
 * --errors, again with invalid arguments). Under the shim:
 *   - the program's output (each call's return code) and exit status are
 *     those of a run without the shim;
 *   - the trace holds one CALL record per hooked call: per API, the count
 *     equals the simulator's log exactly;
 *   - record by record, in order: API, kernel name, stream handle, bytes
 *     and return code agree with the log;
 *   - the shim adds no call to the runtime except its read-only walk of the
 *     graph after a cudaGraphInstantiate (node count and kernels of graph
 *     launches);
 *   - SELF_COST covers every call, nothing is lost, the JSON is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define DRIVER_HOOKED_CALLS 60
#define DRIVER_ERROR_HOOKED_CALLS 22

/* Log lines of recorded APIs only. */
static size_t recorded_only(struct sim_call *calls, size_t n)
{
    size_t i, kept = 0;
    for (i = 0; i < n; i++)
        if (shim_api_index(calls[i].api) > 0)
            calls[kept++] = calls[i];
    return kept;
}

static int is_per_thread_variant(const char *api)
{
    size_t l = strlen(api);
    return l > 5 && (strcmp(api + l - 5, "_ptsz") == 0 || strcmp(api + l - 5, "_ptds") == 0);
}

/* The stream handle the trace should show for a log line, or -1 for "no
 * stream in the log" (then the record's stream is not compared). */
static long long expected_handle(const struct sim_call *c)
{
    unsigned long long h;
    if (strcmp(c->stream, "-") == 0)
        return -1;
    h = strtoull(c->stream, NULL, 16);
    if (h == 0 && is_per_thread_variant(c->api))
        return 2; /* handle 0 in a _ptsz call is the per-thread stream (cudaStreamPerThread) */
    return (long long)h;
}

static long long trace_handle(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_stream *s;
    if (c->stream == 0)
        return 0;
    s = obs_trace_stream(t, c->stream);
    return s ? (long long)s->handle : -2;
}

/* Compare the trace with the log record by record; one check per field. */
static void compare_records(const struct obs_trace *t, struct sim_call *log, size_t nlog, const char *mode)
{
    size_t i, n = t->ncalls < nlog ? t->ncalls : nlog;
    size_t bad_api = 0, bad_name = 0, bad_stream = 0, bad_bytes = 0, bad_status = 0;

    for (i = 0; i < n; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct sim_call *l = &log[i];
        long long want_handle = expected_handle(l);
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
        if (want_handle >= 0 && trace_handle(t, c) != want_handle && bad_stream++ == 0)
            diag("%s record %zu %s: stream 0x%llx, log %s", mode, i, l->api, (unsigned long long)trace_handle(t, c),
                 l->stream);
        if (strcmp(l->bytes, "-") != 0 && c->u.bytes != strtoull(l->bytes, NULL, 10) && bad_bytes++ == 0)
            diag("%s record %zu %s: bytes %llu, log %s", mode, i, l->api, (unsigned long long)c->u.bytes, l->bytes);
        if (c->status != l->status && bad_status++ == 0)
            diag("%s record %zu %s: status %d, log %ld", mode, i, l->api, c->status, l->status);
    }
    is_int(0, (long long)bad_api, "%s: records are the log's calls, in order", mode);
    is_int(0, (long long)bad_name, "%s: kernel names match the registered names", mode);
    is_int(0, (long long)bad_stream, "%s: stream handles match", mode);
    is_int(0, (long long)bad_bytes, "%s: byte counts (and graph node counts) match", mode);
    is_int(0, (long long)bad_status, "%s: return codes match", mode);
}

/* Per API: records in the trace == lines in the log. */
static void compare_counts(const struct obs_trace *t, const struct sim_call *log, size_t nlog, const char *mode)
{
    unsigned api;
    size_t i, mismatches = 0;
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
    is_int(0, (long long)mismatches, "%s: records per API equal the log's calls per API", mode);
}

/* Log lines per API of the run without and with the shim: equal except
 * for the shim's graph walk after each successful cudaGraphInstantiate
 * (graph_execs.h). The driver's graph has two nodes, a kernel and a copy:
 * cudaPeekAtLastError once (the app's pending error), cudaGraphGetNodes
 * twice (count, then nodes), cudaGraphNodeGetType per node,
 * cudaGraphKernelNodeGetParams per kernel node. */
static void compare_runtime_calls(struct sim_call *plain, size_t nplain, struct sim_call *shim, size_t nshim,
                                  const char *mode)
{
    static const struct {
        const char *api;
        size_t per_instantiation;
    } walk[] = {{"cudaPeekAtLastError", 1},
                {"cudaGraphGetNodes", 2},
                {"cudaGraphNodeGetType", 2},
                {"cudaGraphKernelNodeGetParams", 1}};
    size_t i, j, k, instantiations = 0, differ = 0, walk_wrong = 0, extra_total = 0;
    for (i = 0; i < nshim; i++)
        if (strcmp(shim[i].api, "cudaGraphInstantiate") == 0 && shim[i].status == 0)
            instantiations++;
    for (i = 0; i < nshim; i++) {
        size_t a = 0, b = 0;
        int seen = 0, walked = -1;
        for (j = 0; j < i; j++)
            if (strcmp(shim[j].api, shim[i].api) == 0)
                seen = 1;
        if (seen)
            continue;
        for (j = 0; j < nshim; j++)
            a += strcmp(shim[j].api, shim[i].api) == 0;
        for (j = 0; j < nplain; j++)
            b += strcmp(plain[j].api, shim[i].api) == 0;
        for (k = 0; k < sizeof walk / sizeof walk[0]; k++)
            if (strcmp(shim[i].api, walk[k].api) == 0)
                walked = (int)k;
        if (walked >= 0) {
            extra_total += a - b;
            if (a - b != walk[walked].per_instantiation * instantiations && walk_wrong++ < 3)
                diag("%s: %s: %zu extra calls for %zu instantiations", mode, shim[i].api, a - b, instantiations);
        } else if (a != b && differ++ < 3) {
            diag("%s: %s called %zu times under the shim, %zu without", mode, shim[i].api, a, b);
        }
    }
    is_int(0, (long long)differ + (nshim - extra_total == nplain ? 0 : 1),
           "%s: the shim makes no runtime call of its own but its graph walk", mode);
    is_int(0, (long long)walk_wrong, "%s: one read-only walk per graph instantiated (%zu)", mode, instantiations);
}

static void run_mode(const char *mode_flag, unsigned long hooked_calls)
{
    const char *driver = shim_build_path("tests/apps/cuda_api_driver");
    const char *mode = mode_flag ? mode_flag : "default";
    const char *argv[] = {driver, mode_flag, NULL};
    char log_plain[4200], log_shim[4200], log_env1[4300], log_env2[4300], out_env[4300], trace[4300],
        json[4300];
    struct run_result plain, shimmed;
    struct sim_call *lp, *ls;
    size_t nlp, nls, nls_all;
    struct obs_trace *t;

    snprintf(log_plain, sizeof log_plain, "%s/%s-plain.log", test_tmpdir(), mode + (mode[0] == '-' ? 2 : 0));
    snprintf(log_shim, sizeof log_shim, "%s/%s-shim.log", test_tmpdir(), mode + (mode[0] == '-' ? 2 : 0));
    snprintf(log_env1, sizeof log_env1, "OBS_SIM_LOG=%s", log_plain);
    snprintf(log_env2, sizeof log_env2, "OBS_SIM_LOG=%s", log_shim);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), mode + (mode[0] == '-' ? 2 : 0));
    snprintf(trace, sizeof trace, "%s/%s.obs", test_tmpdir(), mode + (mode[0] == '-' ? 2 : 0));
    snprintf(json, sizeof json, "%s/%s.json", test_tmpdir(), mode + (mode[0] == '-' ? 2 : 0));

    {
        const char *env_plain[] = {log_env1, NULL};
        const char *env_shim[] = {log_env2, out_env, "OBS_SUMMARY=0", "OBS_TRACE=json", NULL};
        shim_run(argv, env_plain, 0, 60, &plain);
        shim_run(argv, env_shim, 1, 60, &shimmed);
    }
    is_int(plain.status, shimmed.status, "%s: exit status %d with and without the shim", mode, plain.status);
    ok(plain.exited && shimmed.exited, "%s: both runs exited normally", mode);
    if (!is_string(plain.out, shimmed.out, "%s: every call returned the same code with and without the shim", mode))
        diag_text("stderr under the shim", shimmed.err);
    is_int(0, (long long)warning_lines(shimmed.err), "%s: no obsshim warning", mode);
    ok(count_lines_with(shimmed.err, "obsshim: wrote") == 1, "%s: one line names the files written", mode);

    nlp = sim_log_read(log_plain, &lp);
    nls_all = sim_log_read(log_shim, &ls);
    ok(nlp > 0 && nls_all > 0, "%s: the simulator wrote both ground-truth logs", mode);
    compare_runtime_calls(lp, nlp, ls, nls_all, mode);
    nls = recorded_only(ls, nls_all);
    is_int((long long)hooked_calls, (long long)nls, "%s: the log holds %lu hooked calls", mode, hooked_calls);

    t = shim_trace_open(trace);
    ok(t != NULL, "%s: the trace %s reads back", mode, trace);
    if (t == NULL) {
        skip_block(10, "no trace");
    } else {
        is_int((long long)nls, (long long)t->ncalls, "%s: one record per hooked call", mode);
        compare_counts(t, ls, nls, mode);
        compare_records(t, ls, nls, mode);
        is_int(0, (long long)t->records_lost, "%s: no record lost", mode);
        is_int((long long)t->ncalls, (long long)t->self_calls, "%s: the self-cost snapshot covers every call", mode);
        ok(t->ignored_bytes == 0, "%s: the file is complete (nothing ignored)", mode);
        obs_trace_free(t);
    }
    {
        char *text = test_read_file(json, NULL);
        ok(text != NULL, "%s: %s written", mode, json);
        free(text);
    }
    free(lp);
    free(ls);
    run_result_free(&plain);
    run_result_free(&shimmed);
}

int main(void)
{
    const char *driver = shim_build_path("tests/apps/cuda_api_driver");
    if (!test_executable(driver))
        skip_all("%s not built", driver);
    plan(2 * 21);
    run_mode(NULL, DRIVER_HOOKED_CALLS);
    run_mode("--errors", DRIVER_HOOKED_CALLS + DRIVER_ERROR_HOOKED_CALLS);
    return 0;
}
