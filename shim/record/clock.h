/* Host timestamps: CLOCK_MONOTONIC in nanoseconds, the time base of every
 * record. The hot path takes two per recorded call, so the read matters.
 *
 * Where the kernel itself keeps time with the TSC (x86-64, clocksource
 * "tsc": the kernel has checked that it is invariant and in step across
 * CPUs), obs_now_ns() reads the TSC (~10 ns here against ~24 ns for the
 * vDSO's clock_gettime) and converts it with a per-thread base taken from
 * clock_gettime at most OBS_CLOCK_REBASE_NS ago and a rate measured over
 * the whole run since start-up. So every value stays within a few tens of
 * ns of what clock_gettime would have said, and a thread's values never go
 * backwards (a rebase that lands below the last value is clamped up to it).
 * Elsewhere, or with OBS_CLOCK=monotonic, it is clock_gettime itself.
 * docs/performance.md has the figures; tests/t_clock.c the bounds. */
#ifndef OBS_CLOCK_H
#define OBS_CLOCK_H

#include <stdint.h>
#include <time.h>

#include "common/common.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define OBS_CLOCK_HAVE_TSC 1
#else
#define OBS_CLOCK_HAVE_TSC 0
#endif

/* A thread takes a fresh base from clock_gettime when its last one is older. */
#define OBS_CLOCK_REBASE_NS 1000000u
/* The rate is trusted once measured over at least this long. */
#define OBS_CLOCK_MIN_BASELINE_NS 2000000u

static inline uint64_t obs_clock_gettime_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Per-thread conversion state (initial-exec TLS, zero = "no base yet"). */
struct obs_clock_tls {
    uint64_t tsc_base;  /* TSC at the base */
    uint64_t ns_base;   /* CLOCK_MONOTONIC ns at the base */
    uint64_t tsc_span;  /* ticks the base is used for; 0: always take the slow path */
    uint64_t mult;      /* ns per tick, 32.32 fixed point */
    uint64_t last_ns;   /* last value returned on this thread */
};
extern __thread struct obs_clock_tls obs_clock_tls __attribute__((tls_model("initial-exec")));

/* Slow path (clock.c): a new base, or clock_gettime when the TSC is not used. */
uint64_t obs_now_ns_slow(void);

static inline uint64_t obs_now_ns(void)
{
#if OBS_CLOCK_HAVE_TSC
    struct obs_clock_tls *c = &obs_clock_tls;
    if (obs_likely(c->tsc_span != 0)) {
        uint64_t d = __rdtsc() - c->tsc_base; /* a TSC behind the base wraps: slow path */
        if (obs_likely(d < c->tsc_span)) {
            uint64_t ns = c->ns_base + (uint64_t)(((unsigned __int128)d * c->mult) >> 32);
            if (obs_unlikely(ns < c->last_ns))
                ns = c->last_ns;
            c->last_ns = ns;
            return ns;
        }
    }
    return obs_now_ns_slow();
#else
    return obs_clock_gettime_ns(CLOCK_MONOTONIC);
#endif
}

/* The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): a system call
 * (440 to 480 ns on the 2-core VM, no vDSO path), so never on a launch;
 * the phase engine reads it once per iteration, at its first delimiter, to
 * tell an idle gap from a busy one (docs/phases.md, "Idle gaps"). */
uint64_t obs_thread_cpu_ns(void);

static inline uint64_t obs_realtime_ns(void)
{
    return obs_clock_gettime_ns(CLOCK_REALTIME);
}

/* Which clock obs_now_ns() reads. */
enum obs_clock_source { OBS_CLOCK_MONOTONIC = 0, OBS_CLOCK_TSC = 1 };

/* Choose the source (once, at start-up, before any thread records):
 * want_tsc = 0 forces clock_gettime; otherwise the TSC is used where the
 * kernel's clocksource is "tsc". Returns the source chosen. */
enum obs_clock_source obs_clock_init(int want_tsc);
enum obs_clock_source obs_clock_source(void);
const char *obs_clock_source_name(enum obs_clock_source s); /* "tsc" / "monotonic" */

#endif
