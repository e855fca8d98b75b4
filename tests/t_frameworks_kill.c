/* Hugging Face generate() on the simulated driver under the shim, killed
 * with SIGKILL at 20 random moments (issue 36; docs/shim.md, "How a
 * process ends"): tests/frameworks/fw_kill.py imports torch once, then
 * forks a child per kill that builds the llama model on the device and
 * generates until it is killed, a random time (seeded, the seed printed;
 * OBS_KILL_SEED=N draws the same ones) after it started on the device (5
 * kills: its weights being copied in) or after its generations started
 * (15 kills). The children share one driver log (OBS_SIM_LOG, with thread
 * ids), one after the other (fw_kill.py marks where each begins), and each
 * leaves its own trace (obs-run -o DIR/k-%p). For each kill, with the
 * log's calls of that child (driver_log.h, as t_frameworks compares a
 * whole run):
 *   - each thread's records are the first calls of its log, record by
 *     record (kind, kernel name, stream, bytes, status), none that the log
 *     does not have;
 *   - at most one call of each thread's log is missing (the one it was in);
 *   - obs-report summary reads the trace with one warning line, and
 *     obs-report perfetto writes its timeline.
 * A child killed before its first record made its trace: each of its
 * threads in the log has at most the one call it was in. Skips, saying why, without the frameworks' environment (as
 * t_frameworks does: fw_env.h). Printed: FIGURES lines per kill. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver_log.h"
#include "fw_env.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

#define KILLS 20
#define RUN_TIMEOUT_S 600

static char report[4300];

struct kill_line {
    long pid, delay_ms, status;
    char after[8];
};

/* Where each child's calls begin in the log: at each "fwkillChild mark K"
 * line, the log's count of calls so far. */
struct children {
    const struct dlog *lg;
    size_t begin[KILLS + 1], n;
};

static void child_mark(char **f, int nf, void *arg)
{
    struct children *c = arg;
    (void)nf;
    if (strcmp(f[0], "fwkillChild") == 0 && strcmp(f[1], "mark") == 0 && c->n < KILLS)
        c->begin[c->n++] = c->lg->n;
}

/* The "kill K pid P after M delay_ms D status S" lines. */
static size_t kill_lines(const char *out, struct kill_line *k, size_t max)
{
    const char *p = out;
    size_t n = 0;
    while (p != NULL && (p = strstr(p, "kill ")) != NULL && n < max) {
        int idx;
        if (sscanf(p, "kill %d pid %ld after %7s delay_ms %ld status %ld", &idx, &k[n].pid, k[n].after,
                   &k[n].delay_ms, &k[n].status) == 5)
            n++;
        p = strchr(p, '\n');
    }
    return n;
}

int main(void)
{
    struct fw_env fw;
    char dir[4300], script[4400], seed_text[32], log[4400], log_env[4500], prefix[4400];
    const char *seed_env = getenv("OBS_KILL_SEED");
    unsigned long long seed;
    struct kill_line kills[KILLS];
    struct run_result r;
    struct dlog lg;
    struct children ch;
    size_t nkills, k;
    time_t t0 = time(NULL);

    fw_env_require(&fw);
    snprintf(report, sizeof report, "%s", shim_build_path("obs-report"));
    if (!test_executable(report))
        skip_all("%s not built", report);
    seed = seed_env != NULL && *seed_env != '\0' ? strtoull(seed_env, NULL, 10) : (unsigned long long)time(NULL);
    snprintf(seed_text, sizeof seed_text, "%llu", seed);
    plan_lazy();
    diag("%s: %s; seed %s (OBS_KILL_SEED=%s draws the same moments)", fw.dir, fw.versions, seed_text, seed_text);

    snprintf(dir, sizeof dir, "%s", test_tmpdir());
    snprintf(script, sizeof script, "%s/fw_kill.py", fw.scripts);
    snprintf(log, sizeof log, "%s/sim.log", dir);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    snprintf(prefix, sizeof prefix, "%s/k-%%p", dir);
    {
        const char *argv[] = {fw.obs_run, "--sim", "-o", prefix, "--", fw.python, script, "20", seed_text, NULL};
        const char *env[] = {log_env, "OBS_SIM_LOG_TID=1", "OBS_SUMMARY=0", "OBS_TRACE=none", "LD_PRELOAD",
                             "PYTHONDONTWRITEBYTECODE=1", NULL};
        if (run_program(argv, env, RUN_TIMEOUT_S, &r) != 0)
            bail("cannot run %s", fw.python);
    }
    nkills = kill_lines(r.out, kills, KILLS);
    if (!ok(r.exited && r.status == 0 && nkills == KILLS, "fw_kill.py: %zu children killed (exit %d)", nkills,
            r.status))
        diag_text("stderr", r.err);
    memset(&ch, 0, sizeof ch);
    ch.lg = &lg;
    dlog_read(log, &lg, child_mark, &ch);
    is_int((long long)nkills, (long long)ch.n, "the log marks where each child's calls begin");
    for (k = 0; k < nkills && k < ch.n; k++) {
        char obs[4500], label[96], out[4600], *err = NULL;
        struct obs_trace *t;
        struct dlog_result res;
        struct dlog mine = lg; /* this child's calls: a view into the log */
        int killed = kills[k].status == SIGKILL;
        mine.r = lg.r + ch.begin[k];
        mine.n = (k + 1 < ch.n ? ch.begin[k + 1] : lg.n) - ch.begin[k];
        snprintf(obs, sizeof obs, "%s/k-%ld.obs", dir, kills[k].pid);
        snprintf(label, sizeof label, "kill %zu, %ld ms after '%s'", k, kills[k].delay_ms, kills[k].after);
        if (access(obs, R_OK) != 0) {
            size_t threads = 0, i, j;
            for (i = 0; i < mine.n; i++) {
                for (j = 0; j < i && mine.r[j].tid != mine.r[i].tid; j++)
                    ;
                threads += j == i;
            }
            diag("FIGURES kill %s: no trace (log %zu calls)", label, mine.n);
            ok(killed && mine.n <= threads,
               "%s: killed before its first record made its trace: no more than the call each thread was in "
               "logged (%zu calls, %zu threads)",
               label, mine.n, threads);
            continue;
        }
        t = shim_trace_open(obs);
        if (t == NULL) {
            ok(0, "%s: the trace reads", label);
            continue;
        }
        dlog_compare(label, &mine, t, &res);
        diag("FIGURES kill %s: log %zu calls (launches %zu, copies %zu, memsets %zu, syncs %zu; threads %zu), trace %zu "
             "records, missing %zu (at most %zu of one thread)%s",
             label, mine.n, res.kernels, res.copies, res.memsets, res.syncs, res.threads, res.trace_records,
             res.unmatched, res.unmatched_worst, killed ? "" : "; ended before the kill");
        ok(killed && res.bad == 0 && res.matched == res.trace_records && res.unmatched_worst <= 1,
           "%s: each thread's records are the first calls of its log, at most the one it was in missing (%zu of %zu)",
           label, res.trace_records, mine.n);
        snprintf(out, sizeof out, "%s.summary", obs);
        if (!ok(shim_obs_report("summary", obs, out, &err) == 0 && count_lines_with(err, "") == 1 &&
                    strstr(err, "warning: no end mark") != NULL,
                "%s: obs-report summary reads it, with one warning line", label))
            diag_text("stderr", err);
        free(err);
        unlink(out);
        snprintf(out, sizeof out, "%s.pftrace", obs);
        ok(shim_obs_report("perfetto", obs, out, NULL) == 0 && access(out, R_OK) == 0,
           "%s: obs-report perfetto writes its timeline", label);
        unlink(out);
        obs_trace_free(t);
        if (getenv("OBS_KEEP_TMP") == NULL)
            unlink(obs);
    }
    diag("FIGURES time: %ld s for %zu kills", (long)(time(NULL) - t0), nkills);
    dlog_free(&lg);
    run_result_free(&r);
    return 0;
}
