/* CSV export of a trace: one row per recorded call, in sequence order. */
#ifndef OBS_TRACE_CSV_H
#define OBS_TRACE_CSV_H

#include <stdio.h>

#include "trace_reader.h"

/* The header row, without the newline. */
#define OBS_CSV_HEADER                                                                            \
    "seq,tid,api,kind,name,stream,grid_x,grid_y,grid_z,block_x,block_y,block_z,shmem,bytes,"      \
    "direction,host_begin_ns,host_end_ns,gpu_begin_ns,gpu_end_ns,status,phase,step,layer,generation,range"

/* Write the header and one row per call. Fields that do not apply to a call
 * are empty (grid/block/shmem: kernels; bytes: copies, memsets, allocations,
 * graph launches (node count); direction: copies; gpu_*: calls with GPU
 * time; phase/step: calls inside a phase; layer: calls inside a model layer,
 * docs/layers.md; generation/range: calls inside a phase, the generation
 * and the index of the range that labels the call, the `range` of
 * obs_report_csv_phases). name is the demangled kernel
 * name; text fields are quoted per RFC 4180 when they need it. Returns 0,
 * or -1 with errno set when writing failed. */
int obs_report_csv(const struct obs_trace *t, FILE *out);

/* The header of the NCCL table, without the newline. */
#define OBS_CSV_COLL_HEADER                                                                       \
    "tid,api,kind,comm,rank,nranks,seq,count,datatype,bytes,redop,peer,stream,group,calls,"      \
    "kernels,host_begin_ns,host_end_ns,status,phase,step,layer"

/* The NCCL calls instead (obs-report csv --collectives): one row per
 * collective, point-to-point, group and communicator call, in time order
 * (docs/trace-format.md, COLL and COMM). kind is coll or comm; comm is the
 * communicator's identity (16 hex digits, the same on every rank), rank and
 * nranks this process's rank in it and its size; seq the call's sequence
 * number on the communicator; bytes the data it moves (nccl-tests' size);
 * peer the root or the peer; calls and kernels the records it caused and the
 * kernel launches among them (a call inside a group: its group's); phase,
 * step and layer those of its first call. Returns 0, or -1 with errno set. */
int obs_report_csv_collectives(const struct obs_trace *t, FILE *out);

/* The header of the phase-range table, without the newline. */
#define OBS_CSV_PHASE_HEADER                                                                      \
    "range,tid,name,phase,step,generation,depth,parent,relabel,ended,begin_ns,end_ns,calls"

/* The phase ranges instead (obs-report csv --phases): one row per range in
 * the trace's order (range = its index, what the calls' range column
 * names); step the decode step, looked up outwards as for the calls; parent
 * the enclosing range (empty at depth 0); relabel 1 for a RELABEL range;
 * ended 0 for a BEGIN/END range no END closed; begin/end host times; calls
 * those it or a range inside it labels. Returns 0, or -1 with errno set. */
int obs_report_csv_phases(const struct obs_trace *t, FILE *out);

#endif
