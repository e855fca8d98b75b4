/* Progress of the exports over a trace's calls (CSV, JSON, Perfetto; the
 * SQLite export in obs-report too), for obs-report's progress line: one
 * process-wide callback, NULL by default (the shim never sets one), that a
 * writer reaches every OBS_PROGRESS_EVERY calls, so that the cost is one
 * test per call where nobody watches. */
#ifndef OBS_TRACE_PROGRESS_H
#define OBS_TRACE_PROGRESS_H

#include <stdint.h>

#define OBS_PROGRESS_EVERY 65536u

/* done of total units of work (calls, or calls times passes) so far. */
typedef void (*obs_progress_fn)(uint64_t done, uint64_t total);

void obs_progress_set(obs_progress_fn fn);
void obs_progress_report(uint64_t done, uint64_t total);

/* In a writer's loop over calls: report every OBS_PROGRESS_EVERY. */
static inline void obs_progress_tick(uint64_t done, uint64_t total)
{
    if ((done & (OBS_PROGRESS_EVERY - 1)) == 0)
        obs_progress_report(done, total);
}

#endif
