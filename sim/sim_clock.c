/* The simulators' host-synchronised clock (OBS_SIM_SYNC_WAIT): see sim_clock.h. */
#include "sim_clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_log.h"

static int sync_wait, log_waits;
static uint64_t epoch_ns;
static __thread uint64_t last_end_ns;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void sim_clock_init(void)
{
    const char *v = getenv("OBS_SIM_SYNC_WAIT");
    const char *w = getenv("OBS_SIM_LOG_WAITS");
    sync_wait = v != NULL && strcmp(v, "1") == 0;
    log_waits = w != NULL && strcmp(w, "1") == 0;
    epoch_ns = monotonic_ns();
}

int sim_clock_sync_wait(void)
{
    return sync_wait;
}

uint64_t sim_clock_floor(void)
{
    uint64_t now;
    if (!sync_wait)
        return 0;
    now = monotonic_ns();
    return now > epoch_ns ? now - epoch_ns : 0;
}

void sim_clock_note_end(uint64_t end_ns)
{
    last_end_ns = end_ns;
}

uint64_t sim_clock_last_end(void)
{
    return last_end_ns;
}

void sim_clock_wait(uint64_t end_ns)
{
    struct timespec until;
    uint64_t t;
    int saved_errno = errno;

    if (!sync_wait)
        return;
    if (log_waits) /* before the sleep: the line says the call waited, not how long */
        sim_log_line("sim_clock_wait", "wait", NULL, 0, 0, (long long)end_ns, 0);
    t = epoch_ns + end_ns;
    until.tv_sec = (time_t)(t / 1000000000ull);
    until.tv_nsec = (long)(t % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
        ;
    errno = saved_errno;
}
