/* Statistics of a set of durations (count, total, min, max, mean, median,
 * standard deviation; percentiles): shared by the summary tables, the
 * queries, the gaps report and the serving view. */
#ifndef OBS_TRACE_STATS_H
#define OBS_TRACE_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Statistics of a set of durations, as nsys computes them: the median of an
 * even count is the mean of the two middle values; the standard deviation is
 * the sample one (n - 1), 0 for a single value. values is reordered. */
struct obs_duration_stats {
    uint64_t count, total, min, max;
    double avg, median, stddev;
};
void obs_duration_stats(uint64_t *values, size_t n, struct obs_duration_stats *out);

/* The linear-interpolation percentile (p in 0..100) of sorted values, 0 for none
 * (the gaps report's and the serving view's p50/p90/p99). */
double obs_percentile(const uint64_t *sorted, size_t n, double p);

#endif
