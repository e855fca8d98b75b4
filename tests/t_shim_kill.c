/* SIGKILL at any moment (issue 36): C programs on the simulated CUDA
 * runtime under the shim, each killed with SIGKILL at random moments
 * drawn from a seeded generator (the seed is printed; OBS_KILL_SEED=N
 * draws the same moments again), the simulator logging every call with
 * its thread id (OBS_SIM_LOG, OBS_SIM_LOG_TID=1). Each time:
 *   - every thread's records are the first calls the runtime logged from
 *     it, in order, record by record (kind, kernel name, stream, bytes,
 *     status: driver_log.h), and no record is not in the log;
 *   - at most one call of each thread's log is missing (the one it was in
 *     when it died: docs/shim.md, "Windows and lost records"), unless the
 *     exit path had begun closing the trace (its closing mark, then the end
 *     mark: the calls other threads make after the closing mark are not
 *     recorded, so a kill during exit()'s own work may miss many);
 *   - obs-report summary reads the trace with one warning line (no end
 *     mark), and obs-report perfetto writes the timeline from it (html
 *     too, every fourth kill).
 * Programs: tests/apps/llm_loop, a generate loop (copies, launches, syncs;
 * phase and layer records in the same windows), 20 kills, half of them
 * with 64-slot windows (a window switch every 59 records), and crash_app
 * thread-exit, 4 threads launching at once on 64-slot windows, 10 kills.
 * The moments are spread over the program's own run time, measured first
 * in a run that is not killed (and that trace is checked too: whole, ended
 * by exit). Printed: FIGURES kill lines, per kill the calls in the log and
 * in the trace, and what is missing. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_log.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

static char libpath[4300], report[4300];
static unsigned long long rng_state;

static unsigned long long rng_next(void)
{
    /* xorshift64*: the same moments for the same seed, everywhere */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct program {
    const char *label;
    const char *argv[12];
    const char *buffer_records; /* "OBS_BUFFER_RECORDS=64" or NULL */
    int others_run_on;          /* it ends by exit() from a thread while others launch */
};

/* One run, killed after kill_ms (< 0: not killed), its log and trace
 * under tag. Returns the run's wall time in ms. */
static double run_one(const struct program *p, const char *tag, long kill_ms, struct run_result *r, char *log,
                      char *obs, size_t len)
{
    char out_env[4400], log_env[4400], prefix[4300];
    const char *env[] = {libpath, out_env, log_env, "OBS_SIM_LOG_TID=1", "OBS_SUMMARY=0", "OBS_TRACE=none",
                         p->buffer_records, NULL};
    const char *all[16];
    char preload[4400];
    size_t n = 0, i;
    double t0;

    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), tag);
    snprintf(log, len, "%s.log", prefix);
    snprintf(obs, len, "%s.obs", prefix);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    unlink(log);
    unlink(obs);
    /* shim_run's environment, with a kill */
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim_lib());
    all[n++] = "OBS_SIM_QUIET=1";
    all[n++] = preload;
    for (i = 0; env[i] != NULL; i++)
        all[n++] = env[i];
    all[n] = NULL;
    t0 = now_ms();
    if ((kill_ms < 0 ? run_program(p->argv, all, 120, r) : run_program_signal(p->argv, all, 120, kill_ms, SIGKILL, r)) !=
        0)
        bail("cannot run %s", p->argv[0]);
    return now_ms() - t0;
}

/* obs-report COMMAND TRACE [-o OUT]: exit status; *err its stderr. */
static size_t file_size(const char *path)
{
    size_t len = 0;
    char *d = test_read_file(path, &len);
    free(d);
    return d != NULL ? len : 0;
}

/* A trace left by a kill against the log; kill_ms < 0: the run that was
 * not killed. */
static void check_kill(const struct program *p, int k, long kill_ms, const struct run_result *r, const char *log,
                       const char *obs)
{
    char label[128], out[4400], *err = NULL;
    struct dlog lg;
    struct dlog_result res;
    struct obs_trace *t = NULL;
    const char *ended, *closing;
    int killed = !r->exited && r->signal == SIGKILL;

    if (kill_ms < 0)
        snprintf(label, sizeof label, "%s, not killed", p->label);
    else
        snprintf(label, sizeof label, "%s, kill %d at %ld ms", p->label, k, kill_ms);
    dlog_read(log, &lg, NULL, NULL);
    if (access(obs, R_OK) == 0)
        t = shim_trace_open(obs);
    if (t == NULL) {
        /* killed before its first record made the file (or while it did):
         * nothing may have returned but the one call in progress */
        size_t threads = 0, i, j;
        for (i = 0; i < lg.n; i++) {
            for (j = 0; j < i && lg.r[j].tid != lg.r[i].tid; j++)
                ;
            threads += j == i;
        }
        ok(killed && lg.n <= threads,
           "%s: no trace yet, and no more than the call each thread was in logged (%zu calls, %zu threads)", label,
           lg.n, threads);
        diag("FIGURES kill %s: no trace (log %zu calls)", label, lg.n);
        skip_block(2, "no trace to read");
        dlog_free(&lg);
        return;
    }
    dlog_compare(label, &lg, t, &res);
    ended = obs_trace_meta(t, "end");
    closing = obs_trace_meta(t, "closing");
    diag("FIGURES kill %s: log %zu calls, trace %zu records (%zu threads), missing %zu (at most %zu of one thread)%s%s%s%s",
         label, lg.n, res.trace_records, (size_t)t->nthreads, res.unmatched, res.unmatched_worst,
         killed ? "" : "; ended before the kill", ended ? "; trace ended by " : "", ended ? ended : "",
         ended == NULL && closing != NULL ? "; killed while closing the trace" : "");
    if (ended != NULL)
        /* the exit path had closed the trace (exit() from a thread: the
         * others' calls after that are not recorded, docs/shim.md) */
        ok(res.bad == 0 && res.matched == res.trace_records && (p->others_run_on || res.unmatched == 0),
           "%s: ended by %s, each thread's records the first calls of its log%s (%zu of %zu)", label, ended,
           p->others_run_on ? "" : ", none missing", res.trace_records, lg.n);
    else if (closing != NULL)
        /* killed while the exit path closed the windows: its closing mark
         * says the others' calls from then on were not recorded */
        ok(killed && res.bad == 0 && res.matched == res.trace_records &&
               (p->others_run_on || res.unmatched_worst <= 1),
           "%s: killed while closing the trace (%s), each thread's records the first calls of its log (%zu of %zu)",
           label, closing, res.trace_records, lg.n);
    else
        ok(killed && res.bad == 0 && res.matched == res.trace_records && res.unmatched_worst <= 1,
           "%s: each thread's records are the first calls of its log, at most the one it was in missing (%zu "
           "of %zu; worst thread %zu)",
           label, res.trace_records, lg.n, res.unmatched_worst);
    snprintf(out, sizeof out, "%s.summary", obs);
    if (!ok(shim_obs_report("summary", obs, out, &err) == 0 &&
                (ended == NULL ? count_lines_with(err, "") == 1 && strstr(err, "warning: no end mark") != NULL
                               : count_lines_with(err, "") == 0),
            "%s: obs-report summary reads it%s", label, ended == NULL ? ", with one warning line (no end mark)" : ""))
        diag_text("stderr", err);
    free(err);
    snprintf(out, sizeof out, "%s.pftrace", obs);
    {
        int perfetto = shim_obs_report("perfetto", obs, out, NULL), html = 0;
        size_t bytes = file_size(out);
        if (k % 4 == 0) {
            char page[4400];
            snprintf(page, sizeof page, "%s.html", obs);
            html = shim_obs_report("html", obs, page, NULL) != 0 || file_size(page) == 0;
            unlink(page);
        }
        ok(perfetto == 0 && bytes > 0 && html == 0, "%s: obs-report perfetto writes its timeline (%zu bytes)%s", label,
           bytes, k % 4 == 0 ? ", html its page" : "");
    }
    unlink(out);
    obs_trace_free(t);
    dlog_free(&lg);
}

static void kill_program(const struct program *p, int kills)
{
    char log[4400], obs[4400], tag[64];
    struct run_result r;
    double span;
    int k;

    snprintf(tag, sizeof tag, "%s-whole", p->label);
    span = run_one(p, tag, -1, &r, log, obs, sizeof log);
    diag("%s: %.0f ms not killed", p->label, span);
    check_kill(p, 0, -1, &r, log, obs);
    run_result_free(&r);
    unlink(log);
    unlink(obs);
    for (k = 0; k < kills; k++) {
        /* a moment in the program's run (the last tenth left out: it ends there) */
        long at = (long)(rng_next() % (unsigned long long)(span * 0.9 + 1));
        snprintf(tag, sizeof tag, "%s-%d", p->label, k);
        run_one(p, tag, at, &r, log, obs, sizeof log);
        check_kill(p, k, at, &r, log, obs);
        run_result_free(&r);
        if (getenv("OBS_KEEP_TMP") == NULL) {
            unlink(log);
            unlink(obs);
        }
    }
}

int main(void)
{
    static char loop[4300], crash[4300];
    const char *seed_env = getenv("OBS_KILL_SEED");
    unsigned long long seed;

    snprintf(loop, sizeof loop, "%s", shim_build_path("tests/apps/llm_loop"));
    snprintf(crash, sizeof crash, "%s", shim_build_path("tests/apps/crash_app"));
    snprintf(report, sizeof report, "%s", shim_build_path("obs-report"));
    if (!test_executable(loop) || !test_executable(crash) || !test_executable(report))
        skip_all("llm_loop, crash_app or obs-report not built");
    shim_lib();
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    seed = seed_env != NULL && *seed_env != '\0' ? strtoull(seed_env, NULL, 10)
                                                 : (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
    rng_state = seed ? seed : 1;
    plan_lazy();
    diag("seed %llu (OBS_KILL_SEED=%llu draws the same moments)", seed, seed);
    {
        const struct program p = {"llm_loop",
                                  {loop, "--prompts", "30", "--steps", "64", "--layers", "8", "--layer-norm",
                                   "--step-input", "64", NULL},
                                  NULL, 0};
        const struct program small = {"llm_loop-64", {loop, "--prompts", "30", "--steps", "64", "--layers", "8",
                                                      "--layer-norm", "--step-input", "64", NULL},
                                      "OBS_BUFFER_RECORDS=64", 0};
        const struct program threads = {"threads-64", {crash, "thread-exit", "20000", NULL}, "OBS_BUFFER_RECORDS=64", 1};
        kill_program(&p, 10);
        kill_program(&small, 10);
        kill_program(&threads, 10);
    }
    return 0;
}
