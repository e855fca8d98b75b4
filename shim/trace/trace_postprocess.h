/* What the shim does with its trace at exit: read back the .obs file it just
 * wrote, write the Chrome trace JSON beside it and print the summary. */
#ifndef OBS_TRACE_POSTPROCESS_H
#define OBS_TRACE_POSTPROCESS_H

#include <stddef.h>

/* json_path: where to write the JSON (through a temporary file renamed into
 * place, so a reader never sees half of it), or NULL for none.
 * summary_fd: where to print the summary (e.g. 2), or -1 for none; the
 * descriptor stays open. summary_brief: 1 for the brief summary that fits
 * a screen (the shim's default), 0 for the full tables (OBS_SUMMARY=full;
 * trace_summary.h). Returns 0, or -1 with a one-line reason in err
 * ("obs-1234.json: No space left on device"). */
int obs_trace_postprocess(const char *obs_path, const char *json_path, int summary_fd, int summary_brief,
                          char *err, size_t errlen);

#endif
