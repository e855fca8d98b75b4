/* Host timestamps: CLOCK_MONOTONIC in nanoseconds (the vDSO makes this a
 * user-space read, ~20 ns). The hot path takes two per recorded call. */
#ifndef OBS_CLOCK_H
#define OBS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t obs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t obs_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
