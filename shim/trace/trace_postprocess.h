/* What the shim does with its trace at exit: read back the .obs file it just
 * wrote, write a timeline beside it (Perfetto's .pftrace or the Chrome trace
 * JSON) and print the summary. */
#ifndef OBS_TRACE_POSTPROCESS_H
#define OBS_TRACE_POSTPROCESS_H

#include <stddef.h>

enum obs_timeline { OBS_TIMELINE_JSON, OBS_TIMELINE_PERFETTO };

/* path: where to write the timeline of that kind, or NULL for none; the
 * .pftrace is deflated where libobstrace has zlib (trace_deflate.h). The
 * file is new: written to a temporary beside it and linked into place only
 * where nothing has that name (file_create.h), so a reader never sees half
 * of it and a link planted at the name is neither followed nor replaced
 * ("<path> exists (a symbolic link) and is never replaced; ..."). With
 * path_is_device, path is instead a FIFO or character device the user named
 * on purpose (OBS_TRACE=perfetto:/dev/null), written as it is; anything
 * else there is refused. summary_fd: where to print the summary (e.g. 2),
 * or -1 for none; the descriptor stays open; it is printed even when the
 * timeline failed. summary_brief: 1 for the brief summary that fits a
 * screen (the shim's default), 0 for the full tables (OBS_SUMMARY=full;
 * trace_summary.h). Returns 0, or -1 with a one-line reason in err
 * ("obs-1234.pftrace: No space left on device"). */
int obs_trace_postprocess(const char *obs_path, const char *path, enum obs_timeline kind, int path_is_device,
                          int summary_fd, int summary_brief, char *err, size_t errlen);

#endif
