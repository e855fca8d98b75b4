/* Between the reader (trace_reader.c) and the collectives' model
 * (trace_colls.c): the COLL and COMM records as read, and the function that
 * builds trace->colls and trace->comms from them. Internal to libobstrace. */
#ifndef OBS_TRACE_COLLS_BUILD_H
#define OBS_TRACE_COLLS_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

struct obs_trace;

/* A COLL or COMM record as read, with its thread and per-thread index, in
 * each thread's record order. */
struct obs_nccl_raw {
    union obs_record rec;
    uint64_t index;
    uint32_t thread;
};

/* Build t->colls, t->comms and t->coll_calls from the records (t->calls,
 * their phases and layers already built). Unknown ops and events are
 * counted in t->bad_coll_records. 0, or -1 when out of memory. */
int obs_trace_build_nccl(struct obs_trace *t, const struct obs_nccl_raw *raw, size_t n);

#endif
