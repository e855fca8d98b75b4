/* The simulators' ground-truth log (OBS_SIM_LOG with OBS_SIM_LOG_TID=1:
 * "api kind name stream bytes status tid" per call, the same from the
 * simulated driver and the simulated runtime) against the trace the shim
 * left, record by record, thread by thread: launches, copies, memsets,
 * syncs and graph launches, each with its kind, kernel name, stream,
 * bytes (a graph launch's nodes) and status. Shared by t_frameworks (the
 * trace holds every call of the log) and the kill tests t_shim_kill and
 * t_frameworks_kill (each thread's records are the first calls of its log,
 * and at most `bound` calls of a thread's log are missing, at its end). */
#ifndef OBS_TESTS_DRIVER_LOG_H
#define OBS_TESTS_DRIVER_LOG_H

#include <stddef.h>

#include "trace/trace.h"

struct dlog_rec {
    char kind[8], bytes[24];
    char *name, *api;
    unsigned long long stream;
    long status, tid;
    int has_stream;
};

struct dlog {
    struct dlog_rec *r; /* the calls of the recorded kinds, in the log's order */
    size_t n, cap;
    size_t timing;      /* "timing" lines (a framework script's ground truth) */
    size_t stub_calls;  /* calls of a stub of the simulated driver (kind other, name stub) */
};

/* Called with every line's fields (tab-separated, at least 6) before it
 * is kept or not. */
typedef void (*dlog_line_fn)(char **fields, int nfields, void *arg);

/* The call kind (OBS_KIND_*) of a log's kind word ("kernel", "memcpy",
 * "memset", "sync", "graph"), OBS_KIND_NONE for the others. */
unsigned dlog_kind_of(const char *kind);

/* Read a log (an empty one when it cannot be read); fn may be NULL. */
void dlog_read(const char *path, struct dlog *lg, dlog_line_fn fn, void *arg);
void dlog_free(struct dlog *lg);

struct dlog_result {
    size_t kernels, copies, memsets, syncs, graphs; /* of the log */
    size_t threads;            /* of the log */
    size_t trace_records;      /* launch/copy/memset/sync/graph records in the trace */
    size_t matched;            /* log calls with their thread's next record in the trace */
    size_t unmatched;          /* log calls with none */
    size_t unmatched_worst;    /* the most of one thread */
    size_t bad;                /* matched, but the record differs (diagnosed, 5 at most) */
};

/* Walk the log in order; each call takes the next trace record of its
 * thread. A part of a log (several processes one after the other in one
 * log) is a struct dlog whose r and n point into it. */
void dlog_compare(const char *label, const struct dlog *lg, const struct obs_trace *t, struct dlog_result *res);

#endif
