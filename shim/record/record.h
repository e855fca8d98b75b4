/* The record layer's public face: the per-thread record buffers and the
 * launch hot path (recorder.h, with the describe helpers of call_record.h),
 * the host clock (clock.h), kernel names (kernel_names.h), stream ids
 * (streams.h), what each graph exec replays (graph_execs.h), NCCL's
 * communicators (nccl_comms.h) and the trace
 * file (output.h, out_lock.h). Below it: common/ and trace/ only. */
#ifndef OBS_RECORD_H
#define OBS_RECORD_H

#include "call_record.h"
#include "clock.h"
#include "graph_execs.h"
#include "kernel_names.h"
#include "nccl_comms.h"
#include "out_lock.h"
#include "output.h"
#include "recorder.h"
#include "streams.h"

#endif
