/* Live COMM/<op> ranges (NVTX, roctx) around the NCCL calls the shim
 * records (intercept/hooks_nccl.c): "COMM/AllReduce", "COMM/Send",
 * "COMM/GroupEnd" ..., pushed as a leaf on top of the thread's phase ranges
 * (ranges.h), so that nsys, ncu and rocprof show each collective inside the
 * step and layer it was made in. The trace needs no record of its own: the
 * COLL record is the range (its host span, the calls inside it), and
 * readers nest it in the phase tracks (trace_phase_slices.h). Kept apart
 * from the phase engine: two calls, no state of the engine's. */
#ifndef OBS_COMM_RANGES_H
#define OBS_COMM_RANGES_H

/* Open the range of a call of op (enum obs_coll_op, trace_format.h) on the
 * calling thread; nothing when no range sink is loaded. No lock, no
 * allocation but the first time an op's name is registered. */
void obs_comm_range_begin(unsigned op);
/* Close it (a no-op when a phase change inside the call closed it first). */
void obs_comm_range_end(void);

#endif
