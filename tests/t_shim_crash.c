/* Crash and kill safety: every hard way a process can end, with and without
 * the shim (tests/apps/crash_app on the simulated CUDA runtime, small
 * buffers so that records are both flushed and still buffered when the end
 * comes). For each: the app's own exit status or signal and its stdout are
 * unchanged, the trace reads back (and obs-report reads it) up to its last
 * complete record, and what is missing is accounted for. Ground truth is
 * the simulator's OBS_SIM_LOG (with the calling thread's id) where the
 * process can write it:
 *   - SIGKILL: the trace holds every call that returned, in order (the
 *     records are in the file as they are made: no call was in progress
 *     here, so none is missing), and has no end mark (obs-report says so,
 *     in one note); cut inside its last record, it still reads up to the
 *     last complete one (t_shim_kill kills at random moments);
 *   - SIGSEGV in the app, abort(), _exit(): every call is in the trace,
 *     which is marked ended by that signal or call; _exit() in a vfork
 *     child leaves the parent's trace alone;
 *   - SIGTERM, SIGINT, SIGHUP: the same, and the exit path's timeline and
 *     summary too (made by a child process of the handler): the .pftrace
 *     is the one obs-report perfetto writes from the .obs, byte for byte
 *     (OBS_TRACE=json: the .json); into a FIFO whose reader has stopped
 *     reading, the child makes no progress and is ended after 5 s, with
 *     one line saying so, and the app dies of its signal;
 *   - exit() from a thread while four others launch: every thread's records
 *     are the first calls the runtime saw from it, at least those made
 *     before exit was called, none lost;
 *   - a thread cancelled mid-launch (pthread_cancel): the launch it was
 *     cancelled in is counted lost ("unfinished"), every other call is
 *     recorded in the log's order; cancelled inside the shim's own flush, the
 *     app neither hangs nor loses a record;
 *   - a file size limit with SIGXFSZ at its default, and a full file system
 *     (a small tmpfs in a user namespace; skipped where none can be made):
 *     the app runs on, records kept + LOST records + those reported lost on
 *     stderr = every call;
 *   - the output directory removed during the run: one warning saying so,
 *     no "wrote" line, nothing re-created;
 *   - stderr a pipe whose reader has quit: the shim's exit-time summary
 *     does not kill the app with SIGPIPE. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/api_list.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define BUFFER_RECORDS "64"

static const char *app;
static char tmp[4096], libpath[4300];

static const char *path_in(const char *dir, const char *name)
{
    return test_path(dir, name);
}

static const char *new_dir(const char *name)
{
    static char slots[4][4200];
    static unsigned next;
    char *p = slots[next++ % 4];
    snprintf(p, sizeof slots[0], "%s/%s", tmp, name);
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        bail("mkdir %s: %s", p, strerror(errno));
    dir_clear(p);
    return p;
}

static char *env_var(const char *name, const char *dir, const char *file)
{
    static char slots[8][4400];
    static unsigned next;
    char *p = slots[next++ % 8];
    snprintf(p, sizeof slots[0], "%s=%s/%s", name, dir, file);
    return p;
}

/* crash_app MODE N [ARG], without the shim (plain) and with it. */
static void run_both(const char *const args[], const char *const shim_env[], int timeout_s,
                     struct run_result *plain, struct run_result *shim)
{
    const char *argv[6];
    const char *plain_env[] = {libpath, NULL};
    size_t n = 0, i;
    argv[n++] = app;
    for (i = 0; args[i] != NULL && n < 5; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    shim_run(argv, plain_env, 0, timeout_s, plain);
    shim_run(argv, shim_env, 1, timeout_s, shim);
}

/* Same ending (status or signal) and same stdout with and without the shim. */
static void same_as_plain(const char *label, const struct run_result *plain, const struct run_result *shim,
                          int want_signal, int want_status)
{
    if (want_signal)
        ok(!plain->exited && plain->signal == want_signal && !shim->exited && shim->signal == want_signal,
           "%s: dies of signal %d, without the shim (%d) and under it (%d)", label, want_signal, plain->signal,
           shim->signal);
    else
        ok(plain->exited && plain->status == want_status && shim->exited && shim->status == want_status,
           "%s: exit %d, without the shim (%d) and under it (%d, signal %d)", label, want_status, plain->status,
           shim->status, shim->signal);
    is_string(plain->out, shim->out, "%s: same stdout", label);
}

/* ---- the simulator's log, with thread ids ----------------------------------- */

struct logged {
    int api;      /* enum obs_api; only recorded APIs are kept */
    unsigned tid;
};

static size_t read_log(const char *path, struct logged **out)
{
    char *text = test_read_file(path, NULL), *line, *save = NULL;
    size_t n = 0, cap = 0;
    *out = NULL;
    if (text == NULL)
        return 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char api[64];
        const char *tab = strchr(line, '\t'), *last = strrchr(line, '\t');
        size_t len = tab ? (size_t)(tab - line) : 0;
        int index;
        if (tab == NULL || len >= sizeof api)
            continue;
        memcpy(api, line, len);
        api[len] = '\0';
        if ((index = shim_api_index(api)) < 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            *out = realloc(*out, cap * sizeof **out);
            if (*out == NULL)
                bail("out of memory");
        }
        (*out)[n].api = index;
        (*out)[n].tid = (unsigned)strtoul(last + 1, NULL, 10);
        n++;
    }
    free(text);
    return n;
}

/* Per thread of the log: are the trace's records of that thread the first
 * calls the log shows from it, in order? Returns the calls of the log not in
 * the trace (the largest per thread in *worst), or -1 on a mismatch. */
static long trace_is_prefix(const struct obs_trace *t, const struct logged *log, size_t nlog, long *worst)
{
    size_t th, i, j;
    long missing = 0;
    *worst = 0;
    for (th = 0; th < t->nthreads; th++) {
        unsigned tid = t->threads[th].tid;
        size_t in_log = 0;
        for (i = 0, j = 0; i < t->ncalls; i++) {
            if (t->calls[i].thread != th)
                continue;
            while (j < nlog && log[j].tid != tid)
                j++;
            if (j == nlog || log[j].api != t->calls[i].api) {
                diag("thread %u: record %zu (api %u) is not the log's next call of that thread", tid, i,
                     t->calls[i].api);
                return -1;
            }
            j++;
        }
        for (i = 0; i < nlog; i++)
            in_log += log[i].tid == tid;
        missing += (long)(in_log - t->threads[th].calls);
        if ((long)(in_log - t->threads[th].calls) > *worst)
            *worst = (long)(in_log - t->threads[th].calls);
    }
    /* A thread of the log with no record at all. */
    for (i = 0; i < nlog; i++) {
        for (th = 0; th < t->nthreads && t->threads[th].tid != log[i].tid; th++)
            ;
        if (th == t->nthreads)
            missing++;
    }
    return missing;
}

static const char *meta_or(const struct obs_trace *t, const char *key, const char *fallback)
{
    const char *v = obs_trace_meta(t, key);
    return v ? v : fallback;
}

/* obs-report summary FILE: exit 0; *err_out gets its stderr (malloc'ed). */
static int report_reads(const char *trace, char **err_out)
{
    const char *argv[] = {shim_build_path("obs-report"), "summary", trace, NULL};
    struct run_result r;
    int good;
    if (run_program(argv, NULL, 60, &r) != 0)
        bail("cannot run obs-report");
    good = r.exited && r.status == 0 && strstr(r.out, " records, ") != NULL;
    if (err_out)
        *err_out = strdup(r.err ? r.err : "");
    run_result_free(&r);
    return good;
}

/* ---- the endings ------------------------------------------------------------------ */

/* SEGV, abort, _exit: every call in the trace, marked ended by how. */
/* A run that ended by how (a caught signal or call): every call the
 * runtime logged is in the trace, in order, none lost, ended by how, and
 * obs-report reads it with no warning. */
static void every_call_recorded(const char *label, const char *dir, const char *how)
{
    struct logged *log = NULL;
    size_t nlog = read_log(path_in(dir, "sim.log"), &log);
    struct obs_trace *t = shim_trace_open(path_in(dir, "t.obs"));
    char *err = NULL;
    long worst;

    if (!ok(t != NULL && t->ignored_bytes == 0, "%s: the trace reads back whole", label)) {
        skip_block(3, "no trace");
    } else {
        is_int(0, trace_is_prefix(t, log, nlog, &worst),
               "%s: every one of the %zu calls the runtime saw is recorded, in order", label, nlog);
        is_int(0, (long long)t->records_lost, "%s: 0 records lost", label);
        is_string(how, meta_or(t, "end", "(none)"), "%s: the trace is marked ended by %s", label, how);
    }
    ok(report_reads(path_in(dir, "t.obs"), &err) && strstr(err, "warning") == NULL,
       "%s: obs-report summary reads it, no warning", label);
    free(err);
    if (t)
        obs_trace_free(t);
    free(log);
}

static void test_caught(const char *label, const char *mode, int want_signal, int want_status, const char *how)
{
    const char *dir = new_dir(mode);
    const char *args[] = {mode, "1000", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), env_var("OBS_SIM_LOG", dir, "sim.log"),
                         "OBS_SIM_LOG_TID=1", "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, NULL};
    struct run_result plain, shim;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain(label, &plain, &shim, want_signal, want_status);
    every_call_recorded(label, dir, how);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* SIGTERM, SIGINT, SIGHUP (asked to stop): every call, ended by the
 * signal, and the files the exit path makes: the timeline beside the
 * .obs, as obs-report writes it from the .obs, and the summary. */
static void test_stop_signal(const char *label, const char *mode, int sig, const char *how, int json)
{
    const char *dir = new_dir(mode);
    const char *args[] = {mode, "1000", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), env_var("OBS_SIM_LOG", dir, "sim.log"),
                         "OBS_SIM_LOG_TID=1", "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, json ? "OBS_TRACE=json" : NULL,
                         NULL};
    const char *suffix = json ? ".json" : ".pftrace";
    struct run_result plain, shim;
    size_t len_a = 0, len_b = 0;
    char want[9000], timeline[4400], again[4400], *a, *b;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain(label, &plain, &shim, sig, 0);
    every_call_recorded(label, dir, how);
    snprintf(timeline, sizeof timeline, "%s", path_in(dir, json ? "t.json" : "t.pftrace"));
    snprintf(want, sizeof want, "obsshim: %s: wrote %s %s\n", how, path_in(dir, "t.obs"), timeline);
    ok(strstr(shim.err, want) != NULL && strstr(shim.err, "\nKernels (") != NULL,
       "%s: the summary and the line naming the .obs and the %s", label, suffix);
    if (strstr(shim.err, want) == NULL)
        diag_text("stderr", shim.err);
    snprintf(again, sizeof again, "%s%s", path_in(dir, "again"), suffix);
    shim_obs_report(json ? "json" : "perfetto", path_in(dir, "t.obs"), again, NULL);
    a = test_read_file(timeline, &len_a);
    b = test_read_file(again, &len_b);
    ok(a != NULL && b != NULL && len_a > 0 && len_a == len_b && memcmp(a, b, len_a) == 0,
       "%s: %s is the one obs-report writes from the .obs, byte for byte (%zu bytes)", label, suffix, len_a);
    free(a);
    free(b);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* The timeline into a FIFO whose reader stopped reading: the child making
 * it blocks; the handler ends it once it has made no progress for 5 s,
 * says so in one line, and the app dies of its signal. */
static void test_stop_stalled(void)
{
    const char *dir = new_dir("term-stalled");
    char fifo[4400], trace_env[4500];
    const char *argv[] = {app, "term", "100000", NULL};
    struct run_result r;
    struct obs_trace *t;
    struct timespec t0, t1;
    double took;
    int reader;

    snprintf(fifo, sizeof fifo, "%s", path_in(dir, "timeline.fifo"));
    if (mkfifo(fifo, 0600) != 0 || (reader = open(fifo, O_RDONLY | O_NONBLOCK)) < 0)
        bail("cannot make a FIFO: %s", strerror(errno));
    snprintf(trace_env, sizeof trace_env, "OBS_TRACE=perfetto:%s", fifo);
    {
        const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), trace_env, "OBS_SUMMARY=0", NULL};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        shim_run(argv, env, 1, 120, &r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    }
    close(reader);
    took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    ok(!r.exited && r.signal == SIGTERM, "stalled timeline: the app dies of SIGTERM (signal %d)", r.signal);
    ok(strstr(r.err, "the timeline and summary were not made (its writer made no progress for 5 s") != NULL &&
           count_lines_with(r.err, "obsshim: SIGTERM:") == 1,
       "stalled timeline: one line says the child made no progress");
    if (strstr(r.err, "made no progress") == NULL)
        diag_text("stderr", r.err);
    ok(took >= 5.0 && took < 30.0, "stalled timeline: ended after %.1f s (5 s without progress)", took);
    t = shim_trace_open(path_in(dir, "t.obs"));
    ok(t != NULL && trace_api_count(t, OBS_API_cudaLaunchKernel) == 100000 &&
           strcmp(meta_or(t, "end", ""), "SIGTERM") == 0,
       "stalled timeline: the .obs holds every launch and is ended by SIGTERM");
    if (t)
        obs_trace_free(t);
    run_result_free(&r);
}

/* SIGKILL: nothing runs. Every call that returned is there, in order (the
 * records went into the file's pages as they were made), and the trace
 * says it was not closed. */
static void test_sigkill(void)
{
    const char *dir = new_dir("sigkill");
    /* 1010: the kill comes in the middle of a window (64 records each) */
    const char *args[] = {"sigkill", "1010", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), env_var("OBS_SIM_LOG", dir, "sim.log"),
                         "OBS_SIM_LOG_TID=1", "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, NULL};
    struct run_result plain, shim;
    struct logged *log = NULL;
    size_t nlog, whole_calls = 0;
    struct obs_trace *t;
    long worst = 0, missing = -1;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain("SIGKILL", &plain, &shim, SIGKILL, 0);
    nlog = read_log(path_in(dir, "sim.log"), &log);
    t = shim_trace_open(path_in(dir, "t.obs"));
    if (!ok(t != NULL && t->ignored_bytes == 0, "SIGKILL: the trace reads back")) {
        skip_block(4, "no trace");
    } else {
        whole_calls = t->ncalls;
        missing = trace_is_prefix(t, log, nlog, &worst);
        ok(missing >= 0, "SIGKILL: the %zu records are the first calls the runtime saw, in order", t->ncalls);
        is_int(0, missing, "SIGKILL: no call is missing (none was in progress; %zu in the log)", nlog);
        ok(obs_trace_meta(t, "end") == NULL, "SIGKILL: no end mark");
        is_int(0, (long long)t->records_lost, "SIGKILL: no LOST record claims to count them");
        obs_trace_free(t);
    }
    {
        char *err = NULL;
        ok(report_reads(path_in(dir, "t.obs"), &err) && strstr(err, "no end mark") != NULL &&
               count_lines_with(err, "") == 1,
           "SIGKILL: obs-report reads it and says it has no end mark, in one line");
        if (err != NULL && count_lines_with(err, "") != 1)
            diag_text("stderr", err);
        free(err);
    }
    /* A copy cut inside its last record (taken while the file was being
     * written, or a disk that filled): read up to the last complete one. */
    {
        char cut[4400];
        size_t len = 0, end;
        char *data = test_read_file(path_in(dir, "t.obs"), &len);
        FILE *f;
        snprintf(cut, sizeof cut, "%s", path_in(dir, "cut.obs"));
        if (data == NULL || len < 200 || (f = fopen(cut, "wb")) == NULL)
            bail("cannot copy the trace");
        for (end = len; end > 0 && data[end - 1] == 0; end--) /* the window's unwritten slots */
            ;
        fwrite(data, 1, end > 20 ? end - 20 : 0, f);
        fclose(f);
        free(data);
        t = shim_trace_open(cut);
        ok(t != NULL && t->ignored_bytes > 0 && t->ncalls > 0 && t->ncalls < whole_calls,
           "SIGKILL in a write: read up to the last complete record (%zu of %zu records, %llu bytes ignored)",
           t ? t->ncalls : 0, whole_calls, t ? (unsigned long long)t->ignored_bytes : 0ULL);
        if (t)
            obs_trace_free(t);
        ok(report_reads(cut, NULL), "SIGKILL in a write: obs-report reads it");
    }
    free(log);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* exit(7) from a thread while four others launch without end. */
static void test_thread_exit(void)
{
    const char *dir = new_dir("thread-exit");
    const char *args[] = {"thread-exit", "2000", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), env_var("OBS_SIM_LOG", dir, "sim.log"),
                         "OBS_SIM_LOG_TID=1", "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, "OBS_SUMMARY=0", NULL};
    struct run_result plain, shim;
    struct logged *log = NULL;
    size_t nlog, th, busy = 0;
    struct obs_trace *t;
    long worst;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain("exit() from a thread", &plain, &shim, 0, 7);
    nlog = read_log(path_in(dir, "sim.log"), &log);
    t = shim_trace_open(path_in(dir, "t.obs"));
    if (!ok(t != NULL && t->ignored_bytes == 0, "exit() from a thread: the trace reads back whole")) {
        skip_block(5, "no trace");
    } else {
        ok(trace_is_prefix(t, log, nlog, &worst) >= 0,
           "exit() from a thread: each thread's records (%zu in all) are the first calls the runtime saw from it",
           t->ncalls);
        for (th = 0; th < t->nthreads; th++)
            busy += t->threads[th].calls >= 2000;
        is_int(4, (long long)busy, "exit() from a thread: the 4 launching threads each have their 2000 calls "
                                   "made before exit() was called");
        is_int(0, (long long)t->records_lost, "exit() from a thread: 0 records lost");
        is_string("exit", meta_or(t, "end", "(none)"), "exit() from a thread: ended by exit");
        is_string("exit", meta_or(t, "closing", "(none)"),
                  "exit() from a thread: its closing mark, written before the others' calls stop being recorded");
        obs_trace_free(t);
    }
    /* Killed after the closing mark, before the end mark (a SIGKILL during
     * exit()'s own work): the copy without its last META chunk. The reader
     * says, in one line, that the others' last calls were not recorded. */
    {
        static const char end_line[] = "end=exit\n";
        char cut[4400], *err = NULL;
        size_t len = 0, at, chunk = 0;
        char *data = test_read_file(path_in(dir, "t.obs"), &len);
        FILE *f;
        snprintf(cut, sizeof cut, "%s", path_in(dir, "closing.obs"));
        for (at = len; data != NULL && at >= sizeof end_line - 1; at--)
            if (memcmp(data + at - (sizeof end_line - 1), end_line, sizeof end_line - 1) == 0)
                break;
        for (chunk = at; data != NULL && chunk >= 4; chunk--)
            if (memcmp(data + chunk - 4, "CHNK", 4) == 0)
                break;
        if (data == NULL || chunk < 4 || (f = fopen(cut, "wb")) == NULL)
            bail("cannot copy the trace without its end mark");
        fwrite(data, 1, chunk - 4, f);
        fclose(f);
        free(data);
        t = shim_trace_open(cut);
        ok(t != NULL && obs_trace_meta(t, "end") == NULL && t->ignored_bytes == 0 &&
               meta_or(t, "closing", NULL) != NULL && t->ncalls >= 4 * 2000,
           "killed while exit() closed the trace: its records read whole (%zu), a closing mark and no end mark",
           t ? t->ncalls : 0);
        if (t)
            obs_trace_free(t);
        ok(report_reads(cut, &err) && count_lines_with(err, "") == 1 &&
               strstr(err, "no end mark: the process was killed (SIGKILL?) while it closed the trace (exit)") != NULL &&
               strstr(err, "calls made after that began are not recorded") != NULL,
           "killed while exit() closed the trace: obs-report says so in one line");
        if (err != NULL && count_lines_with(err, "") != 1)
            diag_text("stderr", err);
        free(err);
    }
    free(log);
    run_result_free(&plain);
    run_result_free(&shim);
}

static uint64_t lost_for(const struct obs_trace *t, unsigned reason)
{
    uint64_t n = 0;
    size_t i;
    for (i = 0; i < t->nlost; i++)
        if (t->lost[i].reason == reason)
            n += t->lost[i].count;
    return n;
}

/* pthread_cancel of a thread inside a launch. */
static void test_cancel(void)
{
    const char *dir = new_dir("cancel");
    const char *args[] = {"cancel", "3000", NULL};
    struct run_result plain, shim;
    struct logged *log = NULL;
    size_t nlog;
    struct obs_trace *t;
    long worst;

    /* With the log: the worker's next cancellation point is the simulator's
     * log write inside a launch. */
    {
        const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), env_var("OBS_SIM_LOG", dir, "sim.log"),
                             "OBS_SIM_LOG_TID=1", "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, "OBS_SUMMARY=0", NULL};
        run_both(args, env, 30, &plain, &shim);
    }
    same_as_plain("cancelled mid-launch", &plain, &shim, 0, 0);
    nlog = read_log(path_in(dir, "sim.log"), &log);
    t = shim_trace_open(path_in(dir, "t.obs"));
    if (!ok(t != NULL && t->ignored_bytes == 0, "cancelled mid-launch: the trace reads back whole")) {
        skip_block(2, "no trace");
    } else {
        /* The cancelled launch was made and never returned: counted
         * "unfinished". Its runtime logged it, or was cancelled in the
         * log's write first. */
        long missing = trace_is_prefix(t, log, nlog, &worst);
        uint64_t unfinished = lost_for(t, OBS_LOST_UNFINISHED);
        ok(unfinished == 1 && t->records_lost == 1,
           "cancelled mid-launch: the launch it was cancelled in is counted lost, unfinished (%llu of %llu lost)",
           (unsigned long long)unfinished, (unsigned long long)t->records_lost);
        ok(missing >= 0 && (uint64_t)missing <= unfinished,
           "cancelled mid-launch: every other call the runtime saw is recorded, in order (%zu records, %ld "
           "more in its log)",
           t->ncalls, missing);
        obs_trace_free(t);
    }
    free(log);
    run_result_free(&plain);
    run_result_free(&shim);

    /* No log: the worker's likeliest cancellation point is the shim's own
     * flush (a write(2), every 60 launches), which must not be one. */
    dir = new_dir("cancel-flush");
    {
        const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), "OBS_BUFFER_RECORDS=" BUFFER_RECORDS,
                             "OBS_SUMMARY=0", NULL};
        run_both(args, env, 30, &plain, &shim);
    }
    same_as_plain("cancelled in the shim's flush", &plain, &shim, 0, 0);
    t = shim_trace_open(path_in(dir, "t.obs"));
    {
        const char *p = strstr(shim.err, "worker launches ");
        long made = p ? strtol(p + strlen("worker launches "), NULL, 10) : -1;
        /* the worker's launches, then main's one launch and its sync */
        is_int(made + 1, t ? (long long)trace_api_count(t, OBS_API_cudaLaunchKernel) : -1,
               "cancelled in the shim's flush: every launch that returned is recorded (%ld + 1)", made);
    }
    if (t)
        obs_trace_free(t);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* Records kept + LOST records + "N records were lost" on stderr. */
static long accounted(const struct obs_trace *t, const char *err)
{
    const char *p = strstr(err, " records were lost");
    long unreported = 0;
    if (p != NULL) {
        while (p > err && p[-1] >= '0' && p[-1] <= '9')
            p--;
        unreported = strtol(p, NULL, 10);
    }
    return (long)t->ncalls + (long)t->records_lost + unreported;
}

/* The calls crash_app run N makes, as the shim records them. */
static long calls_of_run(const char *n)
{
    const char *dir = new_dir("count");
    const char *argv[] = {app, "run", n, NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), "OBS_SUMMARY=0", "OBS_JSON=0",
                         "OBS_PHASES=off", NULL};
    struct run_result r;
    struct obs_trace *t;
    long calls = -1;
    shim_run(argv, env, 1, 60, &r);
    if ((t = shim_trace_open(path_in(dir, "t.obs"))) != NULL) {
        calls = (long)t->ncalls;
        obs_trace_free(t);
    }
    run_result_free(&r);
    return calls;
}

/* A file size limit, SIGXFSZ left at its default (it kills the writer). */
static void test_file_size_limit(long total)
{
    const char *dir = new_dir("fsize");
    const char *args[] = {"fsize", "20000", "150000", NULL};
    /* OBS_PHASES=off: LOST counts records, and PHASE records would count. */
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), "OBS_BUFFER_RECORDS=1024", "OBS_SUMMARY=0",
                         "OBS_PHASES=off", NULL};
    struct run_result plain, shim;
    struct obs_trace *t;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain("file size limit", &plain, &shim, 0, 0);
    ok(strstr(shim.err, "File too large") != NULL, "file size limit: the shim says why");
    t = shim_trace_open(path_in(dir, "t.obs"));
    if (!ok(t != NULL && t->ignored_bytes == 0, "file size limit: what was written reads back whole")) {
        skip_block(2, "no trace");
    } else {
        ok(t->ncalls < (size_t)total, "file size limit: the limit was hit (%zu of %ld calls kept)", t->ncalls,
           total);
        is_int(total, accounted(t, shim.err), "file size limit: kept %zu + lost %llu + reported lost = %ld calls",
               t->ncalls, (unsigned long long)t->records_lost, total);
        obs_trace_free(t);
    }
    ok(report_reads(path_in(dir, "t.obs"), NULL), "file size limit: obs-report reads it");
    run_result_free(&plain);
    run_result_free(&shim);
}

/* name's full path on $PATH, or NULL. */
static const char *on_path(const char *name)
{
    static char found[4200];
    const char *path = getenv("PATH");
    while (path != NULL && *path != '\0') {
        size_t len = strcspn(path, ":");
        snprintf(found, sizeof found, "%.*s/%s", (int)len, path, name);
        if (len > 0 && access(found, X_OK) == 0)
            return found;
        path += len + (path[len] == ':');
    }
    return NULL;
}

/* A full file system: a 128 KiB tmpfs mounted in a user and mount
 * namespace (unshare -Urm), where unprivileged namespaces are allowed. */
static void test_full_fs(long total)
{
    const char *dir = new_dir("fullfs"), *keep = new_dir("fullfs-copy");
    const char *found = on_path("unshare");
    char unshare[4200], preload[4400], script[512];
    struct run_result r, plain, shim;
    struct obs_trace *t;

    if (found == NULL) {
        skip_block(6, "no unshare(1)");
        return;
    }
    snprintf(unshare, sizeof unshare, "%s", found);
    {
        const char *probe[] = {unshare, "-Urm", "true", NULL};
        if (run_program(probe, NULL, 30, &r) != 0)
            bail("cannot run %s", unshare);
    }
    if (!r.exited || r.status != 0) {
        run_result_free(&r);
        skip_block(6, "no user namespace with a mount of our own here (unshare -Urm failed)");
        return;
    }
    run_result_free(&r);
    /* set through env(1), not run_program: OBS_PRELOAD_FIRST added here */
    {
        const char *first = getenv("OBS_PRELOAD_FIRST");
        int has_first = first != NULL && first[0] != '\0';
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s%s%s", has_first ? first : "", has_first ? ":" : "",
                 shim_lib());
    }
    /* $1 the mount point, $2 where to copy the trace to before the mount
     * goes away with the namespace; the rest is the command. */
    snprintf(script, sizeof script,
             "d=$1; k=$2; shift 2; mount -t tmpfs -o size=128k tmpfs \"$d\" || exit 99; "
             "\"$@\"; st=$?; cp \"$d\"/t.obs \"$k\"/ 2>/dev/null; exit $st");
    {
        const char *argv[] = {app, "run", "20000", NULL};
        const char *env[] = {libpath, NULL};
        shim_run(argv, env, 0, 60, &plain);
    }
    {
        /* LD_LIBRARY_PATH through env(1) as well: unshare, sh and mount
         * then get no sanitizer runtime from run_program (unshare dies of
         * SIGSEGV with TSan's preloaded) */
        const char *argv[] = {unshare, "-Urm", "sh", "-c", script, "sh", dir, keep, "env", preload, libpath, app,
                              "run", "20000", NULL};
        const char *env[] = {env_var("OBS_OUTPUT", dir, "t"), "OBS_BUFFER_RECORDS=1024", "OBS_SUMMARY=0",
                             "OBS_JSON=0", "OBS_PHASES=off", NULL};
        shim_run(argv, env, 0, 60, &shim);
    }
    if (shim.exited && shim.status == 99) {
        skip_block(6, "cannot mount a tmpfs in the namespace");
    } else {
        same_as_plain("full file system", &plain, &shim, 0, 0);
        ok(strstr(shim.err, "No space left on device") != NULL, "full file system: the shim says why");
        t = shim_trace_open(path_in(keep, "t.obs"));
        if (!ok(t != NULL && t->ignored_bytes == 0, "full file system: what was written reads back whole")) {
            skip_block(2, "no trace");
        } else {
            ok(t->ncalls < (size_t)total, "full file system: it filled up (%zu of %ld calls kept)", t->ncalls,
               total);
            is_int(total, accounted(t, shim.err),
                   "full file system: kept %zu + lost %llu + reported lost = %ld calls", t->ncalls,
                   (unsigned long long)t->records_lost, total);
            obs_trace_free(t);
        }
    }
    run_result_free(&plain);
    run_result_free(&shim);
}

/* A vfork child calling _exit shares the parent's memory: it must neither
 * write the parent's buffers nor close its trace. */
static void test_vfork_exit(void)
{
    const char *dir = new_dir("vfork");
    const char *args[] = {"vfork", "500", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), "OBS_BUFFER_RECORDS=" BUFFER_RECORDS, NULL};
    struct run_result plain, shim;
    struct obs_trace *t;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain("_exit() in a vfork child", &plain, &shim, 0, 0);
    ok(strstr(shim.err, "_exit: wrote") == NULL, "_exit() in a vfork child: the child wrote nothing");
    is_int(1, (long long)dir_count_suffix(dir, ".obs", NULL, 0), "_exit() in a vfork child: one trace");
    t = shim_trace_open(path_in(dir, "t.obs"));
    is_int(1000, t ? (long long)trace_api_count(t, OBS_API_cudaLaunchKernel) : -1,
           "_exit() in a vfork child: the parent's launches before and after it are all recorded");
    ok(t != NULL && strcmp(meta_or(t, "end", ""), "exit") == 0 && t->records_lost == 0,
       "_exit() in a vfork child: the parent's trace ended by its exit, nothing lost");
    if (t)
        obs_trace_free(t);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* Its stderr a pipe nobody reads any more: the shim's exit-time lines and
 * summary must not kill the app with SIGPIPE. */
static void test_closed_stderr(void)
{
    const char *dir = new_dir("closed-stderr");
    const char *args[] = {"closed-stderr", "1000", NULL};
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), NULL};
    struct run_result plain, shim;
    struct obs_trace *t;

    run_both(args, env, 60, &plain, &shim);
    same_as_plain("stderr a closed pipe", &plain, &shim, 0, 0);
    t = shim_trace_open(path_in(dir, "t.obs"));
    is_int(1000, t ? (long long)trace_api_count(t, OBS_API_cudaLaunchKernel) : -1,
           "stderr a closed pipe: the trace is complete");
    ok(t != NULL && strcmp(meta_or(t, "end", ""), "exit") == 0, "stderr a closed pipe: ended by exit");
    if (t)
        obs_trace_free(t);
    run_result_free(&plain);
    run_result_free(&shim);
}

/* The output directory removed (rm -rf) while the app runs. */
static void test_dir_removed(void)
{
    const char *dir = new_dir("removed");
    const char *env[] = {libpath, env_var("OBS_OUTPUT", dir, "t"), "OBS_BUFFER_RECORDS=1024", NULL};
    struct run_result plain, shim;
    struct stat st;

    /* the plain run removes the directory too: make it again between */
    {
        const char *argv[] = {app, "rmdir", "5000", dir, NULL};
        const char *plain_env[] = {libpath, NULL};
        shim_run(argv, plain_env, 0, 60, &plain);
        if (mkdir(dir, 0755) != 0)
            bail("mkdir %s: %s", dir, strerror(errno));
        shim_run(argv, env, 1, 60, &shim);
    }
    same_as_plain("output directory removed", &plain, &shim, 0, 0);
    is_int(1, (long long)warning_lines(shim.err), "output directory removed: one warning");
    ok(strstr(shim.err, "was deleted while the program ran") != NULL, "output directory removed: it says so");
    ok(strstr(shim.err, "obsshim: wrote") == NULL, "output directory removed: no claim to have written it");
    ok(stat(dir, &st) != 0 && errno == ENOENT, "output directory removed: the shim did not make it again");
    if (mkdir(dir, 0755) != 0)
        bail("mkdir %s: %s", dir, strerror(errno));
    run_result_free(&plain);
    run_result_free(&shim);
}

int main(void)
{
    long total;

    static char app_path[4200]; /* shim_build_path's buffers rotate */
    snprintf(app_path, sizeof app_path, "%s", shim_build_path("tests/apps/crash_app"));
    app = app_path;
    if (!test_executable(app))
        skip_all("%s not built", app);
    shim_lib();
    snprintf(tmp, sizeof tmp, "%s", test_tmpdir());
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    plan_lazy();

    test_sigkill();
    test_caught("SIGSEGV", "segv", SIGSEGV, 0, "SIGSEGV");
    test_caught("abort()", "abort", SIGABRT, 0, "SIGABRT");
    test_caught("_exit()", "_exit", 0, 5, "_exit");
    test_stop_signal("SIGTERM", "term", SIGTERM, "SIGTERM", 0);
    test_stop_signal("SIGINT", "int", SIGINT, "SIGINT", 0);
    test_stop_signal("SIGHUP", "hup", SIGHUP, "SIGHUP", 0);
    test_stop_signal("SIGTERM, OBS_TRACE=json", "term", SIGTERM, "SIGTERM", 1);
    test_stop_stalled();
    test_vfork_exit();
    test_thread_exit();
    /* pthread_cancel unwinds the thread (a forced unwind) past frames whose
     * redzones ASan then never clears: the thread's exit, in the shim's
     * flush, reports a stack-buffer-overflow that is not one. */
    if (getenv("OBS_SANITIZE") != NULL && strcmp(getenv("OBS_SANITIZE"), "asan") == 0)
        skip("pthread_cancel under ASan: forced unwinding leaves stale stack redzones (false reports)");
    else
        test_cancel();
    total = calls_of_run("20000");
    test_file_size_limit(total);
    test_full_fs(total);
    test_dir_removed();
    test_closed_stderr();
    return 0;
}
