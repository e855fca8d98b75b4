/* obs-report merge: several traces on one Chrome-trace timeline.
 *   - synthetic traces (the fixture, with its header's clock readings
 *     changed): one pid per input, the same file twice gives two pids, the
 *     time axis (a shared CLOCK_MONOTONIC detected or not, --clock), ranks
 *     from meta and the sort order, --no-args, a trace with no realtime
 *     start, damaged inputs (exit 1, no output file), usage errors (exit 2);
 *   - the workload run twice on the simulated CUDA runtime (and once on the
 *     HIP one when it is built) under the shim, merged: valid JSON (every
 *     process passes tests/trace_json_check.py's checks, flow ids stay
 *     unique), events per process equal to `obs-report json` of its trace,
 *     process names and order, timestamps aligned to within 1 us. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_format.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"
#include "workload_bins.h"

#define PID_STRIDE 10000000u /* what a repeated pid is moved by (docs/merge.md) */

static const char *report, *python;

/* Run obs-report with the arguments (NULL-terminated, at most 12). */
static struct run_result run_report(const char *a1, ...)
{
    const char *argv[16] = {report, a1};
    struct run_result r;
    va_list ap;
    size_t n = 2;
    va_start(ap, a1);
    while (a1 != NULL && n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

/* Run a checker script (trace_merge_check.py or trace_json_check.py) on
 * path; *out gets its key=value lines. Returns its exit status. */
static int run_checker(const char *script_name, const char *path, char **out)
{
    char script[4096];
    const char *argv[] = {python, script, path, NULL};
    struct run_result r;
    snprintf(script, sizeof script, "%s/tests/%s", test_srcdir(), script_name);
    if (run_program(argv, NULL, 300, &r) != 0)
        bail("cannot run %s", python);
    if (r.err_len)
        diag_text(script_name, r.err);
    *out = r.out;
    free(r.err);
    return r.exited ? r.status : 128 + r.signal;
}

/* "pid.<pid>.<key>" of merged checker output. */
static const char *pid_value(const char *out, uint64_t pid, const char *key)
{
    char k[128];
    snprintf(k, sizeof k, "pid.%" PRIu64 ".%s", pid, key);
    return test_key_value(out, k);
}

static long long pid_number(const char *out, uint64_t pid, const char *key)
{
    const char *v = pid_value(out, pid, key);
    return v[0] ? strtoll(v, NULL, 10) : -1;
}

/* ts (ns) of the host slice of seq 0 of a process. */
static long long seq0_ts(const char *out, uint64_t pid)
{
    return pid_number(out, pid, "seq.0");
}

/* A copy of the fixture with other clock readings in its header, and a
 * "rank" meta value when rank is not NULL. */
static void write_variant(const char *fixture, const char *path, uint64_t start_mono, uint64_t start_real,
                          const char *rank)
{
    struct obs_file_header h;
    size_t len;
    char *d = test_read_file(fixture, &len);
    if (d == NULL)
        bail("cannot read %s", fixture);
    memcpy(&h, d, sizeof h);
    h.start_mono_ns = start_mono;
    h.start_real_ns = start_real;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    free(d);
    if (rank != NULL) {
        char meta[64];
        int fd = open(path, O_WRONLY | O_APPEND);
        int n = snprintf(meta, sizeof meta, "rank=%s\n", rank);
        if (fd < 0 || obs_trace_write_meta(fd, meta, (size_t)n) != 0)
            bail("cannot append meta to %s", path);
        close(fd);
    }
}

/* Merge (arguments NULL-terminated after out) and check: exit 0 and a valid
 * merged file. *checked gets the checker's output. */
static int merge_ok(char **checked, const char *out, const char *a1, ...)
{
    const char *argv[16] = {report, "merge", "-o", out, a1};
    struct run_result r;
    va_list ap;
    size_t n = 5;
    int good;
    va_start(ap, a1);
    while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (run_program(argv, NULL, 300, &r) != 0)
        bail("cannot run %s", report);
    good = run_exited_with(&r, 0) && r.out_len == 0;
    if (!good)
        diag("merge: status %d, stderr '%s'", r.status, r.err);
    run_result_free(&r);
    *checked = NULL;
    if (!good)
        return 0;
    return run_checker("trace_merge_check.py", out, checked) == 0;
}

/* Events of `obs-report json` of one trace. */
static long long single_events(const char *obs, const char *json)
{
    struct run_result r = run_report("json", obs, "-o", json, NULL);
    char *out;
    long long n = -1;
    if (run_exited_with(&r, 0) && run_checker("trace_json_check.py", json, &out) == 0)
        n = strtoll(test_key_value(out, "events"), NULL, 10);
    else
        out = NULL;
    run_result_free(&r);
    free(out);
    return n;
}

static void test_usage(const char *fixture)
{
    struct run_result r;

    r = run_report("merge", NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing argument") && r.out_len == 0, "no input: exit 2");
    run_result_free(&r);
    r = run_report("merge", "-o", "x.json", NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing argument"), "-o but no input: exit 2");
    run_result_free(&r);
    r = run_report("merge", "--clock", "sideways", fixture, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "--clock must be auto, realtime or monotonic"), "a bad --clock: exit 2");
    run_result_free(&r);
    r = run_report("merge", fixture, "--clock", NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "needs an argument"), "--clock without a value: exit 2");
    run_result_free(&r);
    r = run_report("merge", "--frob", fixture, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option '--frob'"), "an unknown option: exit 2");
    run_result_free(&r);
    r = run_report("merge", "--help", NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Usage: obs-report merge") && strstr(r.out, "--no-args") &&
           strstr(r.out, "--clock") && strstr(r.out, "--output"),
       "merge --help");
    run_result_free(&r);
    r = run_report("merge", fixture, NULL);
    ok(run_exited_with(&r, 0) && strncmp(r.out, "{\"traceEvents\":[", 16) == 0, "no -o: the JSON on standard output");
    run_result_free(&r);
}

/* The fixture twice: two processes, two pids, identical timelines. */
static void test_same_file_twice(const char *dir, const char *fixture)
{
    char *json = strdup(test_path(dir, "twice.json")), *out;
    long long single = single_events(fixture, test_path(dir, "single.json"));
    char want[64];

    ok(merge_ok(&out, json, fixture, fixture, NULL), "the fixture twice: merged, valid");
    snprintf(want, sizeof want, "%u,%u", FIX_PID, FIX_PID + PID_STRIDE);
    is_string(want, test_key_value(out, "pids"), "two pids: its own, then pid + 10000000");
    ok(single > 0 && pid_number(out, FIX_PID, "events") == single &&
           pid_number(out, FIX_PID + PID_STRIDE, "events") == single,
       "events per pid = events of obs-report json (%lld)", single);
    is_string("rank 0: obs_cuda (pid 4242, fixture.obs)", pid_value(out, FIX_PID, "process_name"),
              "process name: rank, program, pid, file");
    is_string("rank 1: obs_cuda (pid 4242, fixture.obs)", pid_value(out, FIX_PID + PID_STRIDE, "process_name"),
              "the second copy: rank 1, its own pid in the name");
    ok(pid_number(out, FIX_PID, "flows") == FIX_NGPU && pid_number(out, FIX_PID + PID_STRIDE, "flows") == FIX_NGPU,
       "each copy keeps its flows (ids do not collide)");
    /* ts 0 is the start (FIX_T0); the first call is at FIX_T0 + 1000 */
    ok(pid_number(out, FIX_PID, "first_ts_ns") == 1000 && pid_number(out, FIX_PID + PID_STRIDE, "first_ts_ns") == 1000,
       "ts relative to the earliest start: both first events at 1 us");
    is_string("monotonic", test_key_value(out, "other.clock_alignment"), "one clock");
    free(out);
    free(json);
}

/* Clock readings: B's start offset differs by 300 us (same host: the same
 * boot, clock noise), C's by 2.5 s (another boot). */
static void test_clocks(const char *dir, const char *fixture)
{
    char *b = strdup(test_path(dir, "b.obs")), *c = strdup(test_path(dir, "c.obs"));
    char *z = strdup(test_path(dir, "z.obs")), *json = strdup(test_path(dir, "clock.json"));
    const unsigned long long late = 2500000000ull, noise = 300000;
    uint64_t p2 = FIX_PID + PID_STRIDE;
    struct run_result r;
    char *out;

    write_variant(fixture, b, FIX_T0, FIX_REAL0 + noise, NULL);
    write_variant(fixture, c, FIX_T0, FIX_REAL0 + late, NULL);
    write_variant(fixture, z, FIX_T0, 0, NULL);

    ok(merge_ok(&out, json, fixture, b, NULL), "offsets 300 us apart on one host: merged");
    ok(seq0_ts(out, FIX_PID) == 1000 && seq0_ts(out, p2) == 1000 &&
           strcmp(test_key_value(out, "other.clock_alignment"), "monotonic") == 0,
       "... taken as one boot: the shared CLOCK_MONOTONIC, same ts");
    free(out);
    ok(merge_ok(&out, json, "--clock", "realtime", fixture, b, NULL) && seq0_ts(out, FIX_PID) == 1000 &&
           seq0_ts(out, p2) == 1000 + (long long)noise &&
           strcmp(test_key_value(out, "other.clock_alignment"), "realtime") == 0,
       "--clock realtime: each its own offset, 300 us apart");
    free(out);

    ok(merge_ok(&out, json, fixture, c, NULL), "offsets 2.5 s apart: merged");
    ok(seq0_ts(out, FIX_PID) == 1000 && seq0_ts(out, p2) == 1000 + (long long)late &&
           strcmp(test_key_value(out, "other.clock_alignment"), "realtime") == 0,
       "... another boot: the realtime axis, the later start 2.5 s later");
    free(out);
    ok(merge_ok(&out, json, c, fixture, NULL) && seq0_ts(out, FIX_PID) == 1000 + (long long)late &&
           seq0_ts(out, p2) == 1000,
       "argument order does not move the times");
    free(out);
    ok(merge_ok(&out, json, "--clock", "monotonic", fixture, c, NULL) && seq0_ts(out, FIX_PID) == 1000 &&
           seq0_ts(out, p2) == 1000,
       "--clock monotonic: one offset for all");
    free(out);

    r = run_report("merge", "-o", json, fixture, z, NULL);
    ok(run_exited_with(&r, 0) && count_lines_with(r.err, "z.obs: warning: the trace has no CLOCK_REALTIME start") == 1,
       "a trace with no realtime start: a warning naming it, exit 0");
    run_result_free(&r);
    ok(run_checker("trace_merge_check.py", json, &out) == 0 && seq0_ts(out, FIX_PID) == 1000 &&
           seq0_ts(out, p2) == 1000,
       "... shown as starting with the earliest input");
    free(out);
    free(b);
    free(c);
    free(z);
    free(json);
}

/* Ranks from meta (all inputs have one) sort the processes. */
static void test_ranks(const char *dir, const char *fixture)
{
    char *r1 = strdup(test_path(dir, "r1.obs")), *r0 = strdup(test_path(dir, "r0.obs"));
    char *json = strdup(test_path(dir, "ranks.json")), *out;
    char want[64];

    write_variant(fixture, r1, FIX_T0, FIX_REAL0, "1");
    write_variant(fixture, r0, FIX_T0, FIX_REAL0, "0");
    ok(merge_ok(&out, json, r1, r0, NULL), "ranks in meta: merged");
    snprintf(want, sizeof want, "%u,%u", FIX_PID + PID_STRIDE, FIX_PID);
    is_string(want, test_key_value(out, "pids"), "sorted by rank: rank 0 (the second argument) first");
    is_string("rank 0: obs_cuda (pid 4242, r0.obs)", pid_value(out, FIX_PID + PID_STRIDE, "process_name"),
              "rank 0 from meta");
    ok(pid_number(out, FIX_PID + PID_STRIDE, "sort_index") == 0 && pid_number(out, FIX_PID, "sort_index") == 1,
       "process_sort_index follows the rank");
    free(out);
    ok(merge_ok(&out, json, r1, fixture, NULL) &&
           strcmp(pid_value(out, FIX_PID, "process_name"), "rank 0: obs_cuda (pid 4242, r1.obs)") == 0,
       "an input without a rank: ranks by argument position");
    free(out);
    ok(merge_ok(&out, json, "--no-args", r1, fixture, NULL) && pid_number(out, FIX_PID, "host_slices") == 16,
       "--no-args: valid");
    free(out);
    {
        char *text = test_read_file(json, NULL);
        ok(text && strstr(text, "\"args\":{\"seq\"") == NULL, "--no-args: no slice args");
        free(text);
    }
    free(r1);
    free(r0);
    free(json);
}

static int temp_files(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* A damaged or foreign input: one line naming it, exit 1, no output. */
static void test_damaged(const char *dir, const char *fixture)
{
    char *bad = strdup(test_path(dir, "bad.obs")), *json = strdup(test_path(dir, "damaged.json"));
    char *keep = strdup(test_path(dir, "keep.json")), want[4200], *text;
    struct run_result r;
    size_t len;
    char *d = test_read_file(fixture, &len);

    test_write_file(bad, d, len - 20); /* the last record cut, as by a crash */
    r = run_report("merge", "-o", json, fixture, bad, NULL);
    ok(run_exited_with(&r, 0) && count_lines_with(r.err, "read up to the last complete record") == 1 &&
           count_lines_with(r.err, "bad.obs: warning:") == 1,
       "a trace cut by a crash: merged, one warning line naming it");
    run_result_free(&r);
    ok(run_checker("trace_merge_check.py", json, &text) == 0 &&
           pid_number(text, FIX_PID + PID_STRIDE, "host_slices") == (long long)fixture_ncalls - 1,
       "... with its complete records");
    free(text);
    unlink(json);

    test_write_file(bad, d, 40);
    free(d);
    r = run_report("merge", "-o", json, fixture, bad, NULL);
    snprintf(want, sizeof want, "obs-report: %s: truncated header\n", bad);
    ok(run_exited_with(&r, 1) && strcmp(r.err, want) == 0,
       "a trace cut inside its header among good ones: exit 1, one line naming it");
    ok(access(json, F_OK) != 0 && temp_files(dir, "damaged.json") == 0, "... and no output file, not even a temporary");
    run_result_free(&r);

    test_write_file(bad, "#!/bin/sh\necho hello\n", 21);
    test_write_file(keep, "old", 3);
    r = run_report("merge", "-o", keep, bad, fixture, NULL);
    snprintf(want, sizeof want, "obs-report: %s: not an obsshim trace\n", bad);
    text = test_read_file(keep, NULL);
    ok(run_exited_with(&r, 1) && strcmp(r.err, want) == 0 && text && strcmp(text, "old") == 0,
       "a foreign file: exit 1, an existing output left as it was");
    free(text);
    run_result_free(&r);
    r = run_report("merge", fixture, test_path(dir, "missing.obs"), NULL);
    ok(run_exited_with(&r, 1) && strstr(r.err, "missing.obs: No such file or directory") && r.out_len == 0,
       "a missing file: exit 1, nothing on standard output");
    run_result_free(&r);
    r = run_report("merge", "-o", test_path(dir, "no/such/dir/x.json"), fixture, NULL);
    ok(run_exited_with(&r, 1) && strstr(r.err, "no/such/dir/x.json: No such file or directory"),
       "an unwritable output: exit 1");
    run_result_free(&r);
    free(bad);
    free(json);
    free(keep);
}

struct sim_run {
    char obs[4200];
    const char *label;
    uint32_t pid;
    uint64_t start_mono, start_real, first_begin;
    long long events; /* of obs-report json */
    int meta_ok;      /* the trace's meta has rank (from RANK) and the kernel's boot_id */
};

/* The kernel's boot id, as the shim should record it. */
static const char *kernel_boot_id(void)
{
    static char id[128];
    char *text = test_read_file("/proc/sys/kernel/random/boot_id", NULL);
    id[0] = '\0';
    if (text != NULL) {
        snprintf(id, sizeof id, "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
    }
    return id;
}

static int sim_trace(const char *dir, const char *bin, const char *label, const char *tag, struct sim_run *s)
{
    const char *argv[] = {bin, "--repeat", "1", NULL}; /* one rep: a small trace, a quick check */
    char out_env[4300], rank_env[32];
    const char *env[] = {sim_library_path_env(), out_env, rank_env, "OBS_GPU_TIME=events", "OBS_JSON=0",
                         "OBS_SUMMARY=0", NULL};
    struct run_result r;
    struct obs_trace *t;
    char err[256];

    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", dir, tag);
    snprintf(rank_env, sizeof rank_env, "RANK=%s", tag + strcspn(tag, "0123456789")); /* as torchrun sets it */
    snprintf(s->obs, sizeof s->obs, "%s/%s.obs", dir, tag);
    s->label = label;
    shim_run(argv, env, 1, 120, &r);
    if (!r.exited || r.status != 0) {
        diag("%s: status %d, stderr '%s'", bin, r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    if (obs_trace_open(s->obs, &t, err, sizeof err) != 0 || t->ncalls == 0) {
        diag("%s: %s", s->obs, err);
        return -1;
    }
    s->pid = t->pid;
    s->start_mono = t->start_mono_ns;
    s->start_real = t->start_real_ns;
    s->first_begin = t->calls[0].host_begin;
    {
        const char *rank = obs_trace_meta(t, "rank"), *boot = obs_trace_meta(t, "boot_id");
        s->meta_ok = rank != NULL && strcmp(rank, tag + strcspn(tag, "0123456789")) == 0 && boot != NULL &&
                     boot[0] != '\0' && strcmp(boot, kernel_boot_id()) == 0;
        if (!s->meta_ok)
            diag("%s: meta rank '%s', boot_id '%s' (kernel: '%s')", s->obs, rank ? rank : "(none)",
                 boot ? boot : "(none)", kernel_boot_id());
    }
    obs_trace_free(t);
    s->events = single_events(s->obs, test_path(dir, "sim-single.json"));
    return 0;
}

static long long llabs_diff(long long a, long long b)
{
    return a > b ? a - b : b - a;
}

#define SIM_TESTS 13

/* The workload under the shim on the simulators, one process per "rank". */
static void test_simulator(const char *dir)
{
    struct sim_run runs[3];
    uint64_t pids[3];
    size_t n = 0, i;
    char *json = strdup(test_path(dir, "all.json")), *out;
    int all_ok = 1, distinct = 1, names = 1, events = 1, mono_aligned = 1, real_aligned = 1, later = 1;
    char want[256], pid_list[128] = "";

    /* obs_cuda twice and obs_hip once; with one toolkit only, its binary twice */
    {
        const char *why_cuda = NULL, *why_hip = NULL;
        const char *cuda = workload_path(&workload_bins[0], &why_cuda);
        char *cuda_path = cuda ? strdup(cuda) : NULL;
        const char *hip = workload_path(&workload_bins[2], &why_hip);
        char *hip_path = hip ? strdup(hip) : NULL;
        const char *label = cuda_path ? "obs_cuda" : "obs_hip";
        char *twice = cuda_path ? cuda_path : hip_path;

        if (twice == NULL) {
            skip_block(SIM_TESTS, "no workload binary: %s; %s", why_cuda, why_hip);
            free(json);
            return;
        }
        if (sim_trace(dir, twice, label, "rank0", &runs[n]) == 0)
            n++;
        if (sim_trace(dir, twice, label, "rank1", &runs[n]) == 0)
            n++;
        if (cuda_path && hip_path && sim_trace(dir, hip_path, "obs_hip", "rank2", &runs[n]) == 0)
            n++;
        else if (hip_path == NULL)
            diag("obs_hip not merged: %s", why_hip);
        free(cuda_path);
        free(hip_path);
    }
    if (!ok(n >= 2, "the workload ran under the shim (%zu traces)", n)) {
        skip_block(SIM_TESTS - 1, "no traces to merge");
        free(json);
        return;
    }

    /* the expected pids: each its own, moved up when an earlier one has it */
    for (i = 0; i < n; i++) {
        size_t k;
        pids[i] = runs[i].pid;
        for (k = 0; k < i; k++)
            if (pids[k] == pids[i])
                pids[i] += PID_STRIDE, k = (size_t)-1;
        snprintf(pid_list + strlen(pid_list), sizeof pid_list - strlen(pid_list), "%s%" PRIu64, i ? "," : "",
                 pids[i]);
    }
    all_ok = n == 3 ? merge_ok(&out, json, runs[0].obs, runs[1].obs, runs[2].obs, NULL)
                    : merge_ok(&out, json, runs[0].obs, runs[1].obs, NULL);
    ok(all_ok, "%zu simulator traces merged; every process passes the JSON checks", n);
    if (!all_ok) {
        skip_block(SIM_TESTS - 2, "the merge failed");
        free(out);
        free(json);
        return;
    }
    {
        struct stat st;
        if (stat(json, &st) == 0)
            diag("merged %zu traces: %lld bytes, %s events", n, (long long)st.st_size, test_key_value(out, "events"));
    }
    is_string(pid_list, test_key_value(out, "pids"), "one pid per input, in argument (rank) order");
    for (i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < i; k++)
            distinct &= pids[k] != pids[i];
        snprintf(want, sizeof want, "rank %zu: %s (pid %" PRIu32 ", rank%zu.obs)", i, runs[i].label, runs[i].pid, i);
        if (strcmp(pid_value(out, pids[i], "process_name"), want) != 0) {
            diag("process name '%s', expected '%s'", pid_value(out, pids[i], "process_name"), want);
            names = 0;
        }
        if (pid_number(out, pids[i], "events") != runs[i].events || runs[i].events <= 0) {
            diag("pid %" PRIu64 ": %lld events, obs-report json: %lld", pids[i], pid_number(out, pids[i], "events"),
                 runs[i].events);
            events = 0;
        }
        names &= pid_number(out, pids[i], "sort_index") == (long long)i;
        diag("pid %" PRIu64 ": %lld events, %lld host slices, %lld GPU slices, first call at ts %lld ns", pids[i],
             pid_number(out, pids[i], "events"), pid_number(out, pids[i], "host_slices"),
             pid_number(out, pids[i], "gpu_slices"), seq0_ts(out, pids[i]));
    }
    ok(distinct, "the pids are distinct");
    {
        int meta = 1;
        for (i = 0; i < n; i++)
            meta &= runs[i].meta_ok;
        ok(meta, "the shim recorded rank (from RANK) and the kernel's boot_id in every trace's meta");
    }
    ok(events, "events per pid = events of obs-report json of each trace");
    ok(names, "process names say rank, program, pid and file; sort indexes follow the ranks");
    ok(pid_number(out, pids[0], "gpu_slices") > 0 && pid_number(out, pids[1], "flows") > 0,
       "GPU slices and flows in every process");
    is_string("monotonic", test_key_value(out, "other.clock_alignment"),
              "one host, one boot: the shared CLOCK_MONOTONIC is used");
    /* on the shared monotonic clock, ts differences are monotonic differences */
    for (i = 1; i < n; i++) {
        long long d = seq0_ts(out, pids[i]) - seq0_ts(out, pids[0]);
        long long want_d = (long long)(runs[i].first_begin - runs[0].first_begin);
        if (llabs_diff(d, want_d) > 1000) {
            diag("input %zu: first call %lld ns after input 0's, CLOCK_MONOTONIC says %lld", i, d, want_d);
            mono_aligned = 0;
        }
    }
    ok(mono_aligned, "first calls apart by their CLOCK_MONOTONIC difference (within 1 us)");
    ok(llabs_diff(seq0_ts(out, pids[0]), (long long)(runs[0].first_begin - runs[0].start_mono)) <= 1000,
       "ts 0 is the earliest start: input 0's first call at its time since its start");
    free(out);

    all_ok = n == 3 ? merge_ok(&out, json, "--clock", "realtime", runs[0].obs, runs[1].obs, runs[2].obs, NULL)
                    : merge_ok(&out, json, "--clock", "realtime", runs[0].obs, runs[1].obs, NULL);
    for (i = 1; all_ok && i < n; i++) {
        /* first call = start + lead; starts apart by the start_real difference */
        long long lead_i = (long long)(runs[i].first_begin - runs[i].start_mono);
        long long lead_0 = (long long)(runs[0].first_begin - runs[0].start_mono);
        long long starts = (seq0_ts(out, pids[i]) - lead_i) - (seq0_ts(out, pids[0]) - lead_0);
        long long want_d = (long long)(runs[i].start_real - runs[0].start_real);
        if (llabs_diff(starts, want_d) > 1000) {
            diag("input %zu: started %lld ns after input 0, start_real_ns says %lld", i, starts, want_d);
            real_aligned = 0;
        }
        later &= want_d > 0 && seq0_ts(out, pids[i]) > seq0_ts(out, pids[i - 1]);
    }
    ok(all_ok && real_aligned,
       "--clock realtime: a later input's start is later by the start_real_ns difference (within 1 us)");
    ok(all_ok && later, "the runs, made one after the other, follow one another on the timeline");
    free(out);
    free(json);
}

int main(void)
{
    const char *dir;
    char *fixture;

    report = strdup(test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        bail("%s was not built", report);
    python = getenv("OBS_PYTHON3");
    if (python == NULL || python[0] == '\0' || !test_executable(python))
        skip_all("python3 not found (OBS_PYTHON3 is empty): cannot parse the JSON");
    plan_lazy();
    dir = test_tmpdir();
    fixture = strdup(test_path(dir, "fixture.obs"));
    if (fixture_write(fixture, 0) != 0)
        bail("cannot write the fixture");
    test_usage(fixture);
    test_same_file_twice(dir, fixture);
    test_clocks(dir, fixture);
    test_ranks(dir, fixture);
    test_damaged(dir, fixture);
    test_simulator(dir);
    free(fixture);
    return 0;
}
