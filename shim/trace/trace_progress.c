/* Progress of the exports: see trace_progress.h. */
#include "trace_progress.h"

#include <stddef.h>

static obs_progress_fn progress_fn;

void obs_progress_set(obs_progress_fn fn)
{
    progress_fn = fn;
}

void obs_progress_report(uint64_t done, uint64_t total)
{
    if (progress_fn != NULL)
        progress_fn(done, total);
}
