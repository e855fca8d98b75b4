/* CSV export of a trace: one row per recorded call, in sequence order. */
#ifndef OBS_TRACE_CSV_H
#define OBS_TRACE_CSV_H

#include <stdio.h>

#include "trace_reader.h"

/* The header row, without the newline. */
#define OBS_CSV_HEADER                                                                            \
    "seq,tid,api,kind,name,stream,grid_x,grid_y,grid_z,block_x,block_y,block_z,shmem,bytes,"      \
    "direction,host_begin_ns,host_end_ns,gpu_begin_ns,gpu_end_ns,status,phase,step,layer"

/* Write the header and one row per call. Fields that do not apply to a call
 * are empty (grid/block/shmem: kernels; bytes: copies, memsets, allocations,
 * graph launches (node count); direction: copies; gpu_*: calls with GPU
 * time; phase/step: calls inside a phase; layer: calls inside a model layer,
 * docs/layers.md). name is the demangled kernel
 * name; text fields are quoted per RFC 4180 when they need it. Returns 0,
 * or -1 with errno set when writing failed. */
int obs_report_csv(const struct obs_trace *t, FILE *out);

#endif
