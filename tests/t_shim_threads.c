/* Many threads, many calls, bounded memory: cuda_api_driver with 8 threads
 * x 100 000 launches under the shim, with small buffers (4096 records per
 * thread) so that each thread streams ~200 chunks to the file. Every launch
 * is recorded (800 000 cudaLaunchKernel records, 8 threads x 100 001 calls),
 * none is lost, and the process's peak memory stays far below what keeping
 * the records in memory would take (800 000 x 48 bytes = 38 MB). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define THREADS 8
#define LAUNCHES 100000L
#define BUFFER_RECORDS 4096
#define RSS_LIMIT_KB (16 * 1024)

int main(void)
{
    const char *driver = shim_build_path("tests/apps/cuda_api_driver");
    const char *argv[] = {driver, "--threads", "8", "--launches", "100000", NULL};
    char out_env[4200], trace[4200], want_line[64];
    const char *env[] = {out_env, "OBS_BUFFER_RECORDS=4096", "OBS_JSON=0", "OBS_SUMMARY=0", NULL};
    struct run_result res;
    struct rusage usage;
    struct obs_trace *t;
    size_t i, per_thread_ok = 0, ordered = 1;

    if (!test_executable(driver))
        skip_all("%s not built", driver);
    plan(13);

    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/threads", test_tmpdir());
    snprintf(trace, sizeof trace, "%s/threads.obs", test_tmpdir());
    shim_run(argv, env, 1, 120, &res);
    getrusage(RUSAGE_CHILDREN, &usage); /* the driver is this test's first child */

    ok(res.exited && res.status == 0, "the driver exits 0 under the shim");
    snprintf(want_line, sizeof want_line, "calls %ld failed 0", 5 + THREADS * (LAUNCHES + 3) + 1);
    ok(strstr(res.out, want_line) != NULL, "every call succeeded (%s)", want_line);
    is_int(0, (long long)warning_lines(res.err), "no obsshim warning");
    if (warning_lines(res.err))
        diag_text("stderr", res.err);
    if (getenv("OBS_SANITIZE") != NULL) /* make check-sanitize / check-tsan */
        skip("peak RSS under a sanitizer: its shadow memory and quarantine are counted (%ld kB)", usage.ru_maxrss);
    else
        ok(usage.ru_maxrss < RSS_LIMIT_KB, "peak RSS %ld kB < %d kB: records go to the file, not kept",
           usage.ru_maxrss, RSS_LIMIT_KB);

    t = shim_trace_open(trace);
    ok(t != NULL, "the trace reads back");
    if (t == NULL) {
        skip_block(8, "no trace");
        return 0;
    }
    is_int(THREADS * LAUNCHES, (long long)trace_api_count(t, OBS_API_cudaLaunchKernel),
           "all %ld launches recorded", THREADS * LAUNCHES);
    is_int(THREADS, (long long)trace_api_count(t, OBS_API_cudaStreamSynchronize), "one sync per thread");
    is_int(THREADS * (LAUNCHES + 1), (long long)t->ncalls, "no other record");
    is_int(0, (long long)t->records_lost, "0 records lost");
    is_int(THREADS, (long long)t->nthreads, "%d threads in the trace", THREADS);
    for (i = 0; i < t->nthreads; i++)
        per_thread_ok += t->threads[i].calls == (uint64_t)LAUNCHES + 1;
    is_int(THREADS, (long long)per_thread_ok, "each thread has its %ld calls", LAUNCHES + 1);
    /* Per thread, calls keep the order they were made in: per-thread index
     * and begin time both ascend (chunks were written in order). */
    for (i = 1; i < t->ncalls; i++) {
        const struct obs_call *a = &t->calls[i - 1], *b = &t->calls[i];
        if (a->thread == b->thread && (a->index >= b->index || a->host_begin > b->host_begin))
            ordered = 0;
    }
    ok(ordered, "per thread, indices and times ascend");
    is_int((long long)t->ncalls, (long long)t->self_calls, "self-cost snapshots cover every call");
    obs_trace_free(t);
    run_result_free(&res);
    return 0;
}
