/* The trace as an SQLite database: nsys export tables (StringIds,
 * CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET/RUNTIME, NVTX_EVENTS, ...) and
 * trace_processor-style `slice`/`slices` views. Tables and columns:
 * docs/sqlite.md. Only built with libsqlite3 (configure --with-sqlite). */
#ifndef OBS_SQLITE_EXPORT_H
#define OBS_SQLITE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* Row counts of an export, for the caller's report line and the tests. */
struct obs_sqlite_counts {
    uint64_t runtime, kernels, memcpys, memsets, graphs, ranges, slices, strings, iterations;
};

/* Write t into a new database at path: a file that does not exist or is
 * empty (the caller creates a temporary file and renames it into place).
 * Returns 0, or -1 with a one-line reason in err (the file may be left
 * behind: the caller removes it). */
int obs_sqlite_export(const struct obs_trace *t, const char *path, struct obs_sqlite_counts *counts, char *err,
                      size_t errlen);

/* The SQLite library version in use ("3.40.1"). */
const char *obs_sqlite_version(void);

#endif
