/* The shim's host clock (shim/record/clock.c): which source it picks, that its
 * values stay within a bound of CLOCK_MONOTONIC read around them, that a
 * thread's values never go backwards, on one thread and on four; and, end
 * to end, that a trace says which clock wrote it (meta "clock") and that
 * OBS_CLOCK=monotonic and bad values do what the manual says. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "record/clock.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"

/* How far a value may sit outside [before, after]: the base pair's read
 * error plus the rate's error over one rebase period (clock.h); measured
 * well under 100 ns on the development VM (the diag lines print it). */
#define TOLERANCE_NS 2000u
/* Samples whose two surrounding reads are further apart were preempted:
 * they bound nothing and are skipped. */
#define WIDE_NS 20000u

struct sweep {
    uint64_t run_ns;
    uint64_t samples, skipped, outside, backwards;
    uint64_t max_early, max_late; /* ns before `before`, ns after `after` */
};

static void *sweep(void *arg)
{
    struct sweep *s = arg;
    uint64_t start = obs_clock_gettime_ns(CLOCK_MONOTONIC), prev = 0;
    for (;;) {
        uint64_t a = obs_clock_gettime_ns(CLOCK_MONOTONIC);
        uint64_t v = obs_now_ns();
        uint64_t b = obs_clock_gettime_ns(CLOCK_MONOTONIC);
        if (v < prev)
            s->backwards++;
        prev = v;
        if (b - a > WIDE_NS) {
            s->skipped++;
        } else {
            s->samples++;
            if (v < a && a - v > s->max_early)
                s->max_early = a - v;
            if (v > b && v - b > s->max_late)
                s->max_late = v - b;
            if (v + TOLERANCE_NS < a || v > b + TOLERANCE_NS)
                s->outside++;
        }
        if (b - start > s->run_ns)
            break;
    }
    return NULL;
}

static void check_sweep(const char *what, const struct sweep *s)
{
    diag("%s: %llu samples (%llu skipped as preempted), max %llu ns early, %llu ns late", what,
         (unsigned long long)s->samples, (unsigned long long)s->skipped, (unsigned long long)s->max_early,
         (unsigned long long)s->max_late);
    ok(s->samples > 1000, "%s: enough samples", what);
    is_int(0, (long long)s->outside, "%s: every value within %u ns of CLOCK_MONOTONIC around it", what,
           TOLERANCE_NS);
    is_int(0, (long long)s->backwards, "%s: values never go backwards on a thread", what);
}

static int kernel_uses_tsc(void)
{
    char buf[64] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f == NULL)
        return 0;
    if (fgets(buf, sizeof buf, f) == NULL)
        buf[0] = '\0';
    fclose(f);
    return strcmp(buf, "tsc\n") == 0;
}

static void test_in_process(void)
{
    enum obs_clock_source want = (OBS_CLOCK_HAVE_TSC && kernel_uses_tsc()) ? OBS_CLOCK_TSC : OBS_CLOCK_MONOTONIC;
    struct sweep one = {.run_ns = 300000000u}, four[4];
    pthread_t th[4];
    int i;

    /* monotonic first: the values are clock_gettime's own */
    is_int(OBS_CLOCK_MONOTONIC, obs_clock_init(0), "init(0): clock_gettime");
    is_string("monotonic", obs_clock_source_name(obs_clock_source()), "source name monotonic");
    {
        struct sweep m = {.run_ns = 20000000u};
        sweep(&m);
        check_sweep("monotonic", &m);
        is_int(0, (long long)(m.max_early + m.max_late), "monotonic: values exactly inside their bounds");
    }

    is_int(want, obs_clock_init(1), "init(1): %s (the kernel's clocksource decides)", obs_clock_source_name(want));
    diag("clock source: %s", obs_clock_source_name(obs_clock_source()));
    sweep(&one);
    check_sweep("one thread, 300 ms", &one);

    memset(four, 0, sizeof four);
    for (i = 0; i < 4; i++) {
        four[i].run_ns = 150000000u;
        if (pthread_create(&th[i], NULL, sweep, &four[i]) != 0)
            bail("pthread_create failed");
    }
    for (i = 0; i < 4; i++) {
        char what[64];
        pthread_join(th[i], NULL);
        snprintf(what, sizeof what, "thread %d of 4, 150 ms", i);
        check_sweep(what, &four[i]);
    }
}

/* End to end: the trace's meta names the clock; OBS_CLOCK=monotonic forces
 * clock_gettime; a bad value warns once and keeps the default. */
static void test_shim(void)
{
    const char *app = shim_build_path("tests/apps/shim_app");
    const char *dir = test_tmpdir();
    const char *want_auto = (OBS_CLOCK_HAVE_TSC && kernel_uses_tsc()) ? "tsc" : "monotonic";
    static const struct {
        const char *setting, *meta;
        int warnings;
    } cases[] = {
        {NULL, NULL, 0},
        {"OBS_CLOCK=monotonic", "monotonic", 0},
        {"OBS_CLOCK=auto", NULL, 0},
        {"OBS_CLOCK=sometimes", NULL, 1},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char prefix[4096], output[4200], trace_path[4200];
        const char *env[4] = {output, "OBS_JSON=0", NULL, NULL};
        const char *argv[] = {app, "--launches", "50", NULL};
        const char *label = cases[i].setting ? cases[i].setting : "default";
        const char *meta = cases[i].meta ? cases[i].meta : want_auto;
        struct run_result res;
        struct obs_trace *t;

        snprintf(prefix, sizeof prefix, "%s/clock-%zu", dir, i);
        snprintf(output, sizeof output, "OBS_OUTPUT=%s", prefix);
        snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
        env[2] = cases[i].setting;
        shim_run(argv, env, 1, 60, &res);
        is_int(0, res.status, "%s: app exits 0", label);
        is_int((long long)cases[i].warnings, (long long)warning_lines(res.err), "%s: %d warning line(s)", label,
               cases[i].warnings);
        if (cases[i].warnings)
            ok(strstr(res.err, "OBS_CLOCK=sometimes") != NULL, "%s: the warning names the variable", label);
        t = shim_trace_open(trace_path);
        ok(t != NULL, "%s: trace readable", label);
        if (t != NULL) {
            const char *m = obs_trace_meta(t, "clock");
            is_string(meta, m ? m : "(none)", "%s: meta clock=%s", label, meta);
            is_int(50, (long long)trace_api_count(t, shim_api_index("cudaLaunchKernel")), "%s: 50 launches recorded",
                   label);
            obs_trace_free(t);
        }
        run_result_free(&res);
    }
}

int main(void)
{
    plan_lazy();
    test_in_process();
    test_shim();
    return 0;
}
