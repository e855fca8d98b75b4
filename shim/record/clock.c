/* Host clock slow paths: choosing the source, and taking a thread's TSC
 * base (see clock.h for the scheme and its bounds). */
#include "clock.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

__thread struct obs_clock_tls obs_clock_tls __attribute__((tls_model("initial-exec")));

/* Set once by obs_clock_init before recording starts; read by any thread. */
static _Atomic int clock_source = OBS_CLOCK_MONOTONIC;
static uint64_t ref_tsc, ref_ns; /* the start-up pair the rate is measured from */

#if OBS_CLOCK_HAVE_TSC
/* One (TSC, CLOCK_MONOTONIC) pair: the TSC midway between two reads around
 * clock_gettime, the tightest of three tries (a preempted try is wide). */
static void read_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    int i;
    for (i = 0; i < 3; i++) {
        uint64_t a = __rdtsc();
        uint64_t n = obs_clock_gettime_ns(CLOCK_MONOTONIC);
        uint64_t b = __rdtsc();
        if (b >= a && b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
        if (best < 2048)
            break;
    }
    if (best == UINT64_MAX) { /* the TSC went backwards: no usable pair */
        *tsc = __rdtsc();
        *ns = obs_clock_gettime_ns(CLOCK_MONOTONIC);
    }
}

/* The kernel keeps CLOCK_MONOTONIC with the TSC only after checking that it
 * is invariant and synchronised across CPUs: trust the TSC exactly then. */
static int kernel_clocksource_is_tsc(void)
{
    char buf[32];
    ssize_t n;
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strcmp(buf, "tsc\n") == 0 || strcmp(buf, "tsc") == 0;
}
#endif

enum obs_clock_source obs_clock_init(int want_tsc)
{
#if OBS_CLOCK_HAVE_TSC
    if (want_tsc && kernel_clocksource_is_tsc()) {
        read_pair(&ref_tsc, &ref_ns);
        atomic_store_explicit(&clock_source, OBS_CLOCK_TSC, memory_order_release);
        return OBS_CLOCK_TSC;
    }
#else
    (void)want_tsc;
#endif
    atomic_store_explicit(&clock_source, OBS_CLOCK_MONOTONIC, memory_order_release);
    return OBS_CLOCK_MONOTONIC;
}

enum obs_clock_source obs_clock_source(void)
{
    return (enum obs_clock_source)atomic_load_explicit(&clock_source, memory_order_acquire);
}

const char *obs_clock_source_name(enum obs_clock_source s)
{
    return s == OBS_CLOCK_TSC ? "tsc" : "monotonic";
}

uint64_t obs_thread_cpu_ns(void)
{
    return obs_clock_gettime_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t obs_now_ns_slow(void)
{
#if OBS_CLOCK_HAVE_TSC
    struct obs_clock_tls *c = &obs_clock_tls;
    uint64_t tsc, ns, elapsed_ns, elapsed_tsc;

    if (atomic_load_explicit(&clock_source, memory_order_acquire) != OBS_CLOCK_TSC)
        return obs_clock_gettime_ns(CLOCK_MONOTONIC);
    read_pair(&tsc, &ns);
    elapsed_ns = ns - ref_ns;
    elapsed_tsc = tsc - ref_tsc;
    if (ns > ref_ns && tsc > ref_tsc && elapsed_ns >= OBS_CLOCK_MIN_BASELINE_NS) {
        /* The rate over everything since start-up: its error is the pairs'
         * read error over the baseline, and shrinks as the run goes on. */
        uint64_t mult = (uint64_t)(((unsigned __int128)elapsed_ns << 32) / elapsed_tsc);
        c->tsc_base = tsc;
        c->ns_base = ns;
        c->mult = mult;
        c->tsc_span = mult ? (uint64_t)(((unsigned __int128)OBS_CLOCK_REBASE_NS << 32) / mult) : 0;
    } else {
        c->tsc_span = 0; /* too early to trust a rate: clock_gettime until then */
    }
    if (ns < c->last_ns)
        ns = c->last_ns;
    c->last_ns = ns;
    return ns;
#else
    return obs_clock_gettime_ns(CLOCK_MONOTONIC);
#endif
}
