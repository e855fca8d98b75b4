/* NCCL collectives in the trace model: the names of their operations,
 * data types, reductions and communicator calls, what a collective moves
 * (bytes, bus bandwidth factor, as nccl-tests reports them), and the
 * model's colls / comms built from COLL and COMM records (trace_reader.h;
 * format: docs/trace-format.md, COLL and COMM). */
#ifndef OBS_TRACE_COLLS_H
#define OBS_TRACE_COLLS_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"
#include "trace_reader.h"

/* "ncclAllReduce" ... ("unknown" out of range); without the prefix:
 * "AllReduce" (the COMM/<op> range names). */
const char *obs_coll_op_name(unsigned op);
const char *obs_coll_op_short(unsigned op);
/* A collective or point-to-point call (it has a sequence number), not a
 * group call. */
int obs_coll_is_op(unsigned op);
/* "ncclCommInitRank" ... ("unknown"). */
const char *obs_comm_event_name(unsigned event);
/* The communicator calls that make one: the inits and ncclCommSplit. */
int obs_comm_event_makes(unsigned event);
/* "float32" ... ("" for OBS_NCCL_NO_TYPE, "unknown" otherwise); its size
 * in bytes (0 when unknown). */
const char *obs_nccl_type_name(unsigned datatype);
unsigned obs_nccl_type_bytes(unsigned datatype);
/* "sum" ... "custom" (ncclRedOpCreatePreMulSum), "" for none. */
const char *obs_nccl_redop_name(unsigned redop);

/* The data a collective moves, as nccl-tests sizes it: count x the type's
 * size, times nranks for AllGather (count is what each rank sends),
 * ReduceScatter (what each rank receives), AlltoAll, Gather and Scatter
 * (per peer); nranks < 1 counts as 1. 0 for group calls. */
uint64_t obs_coll_bytes(unsigned op, unsigned datatype, uint64_t count, int32_t nranks);
/* nccl-tests' bus bandwidth factor: 2(n-1)/n for AllReduce, (n-1)/n for
 * AllGather, ReduceScatter, AlltoAll, Gather, Scatter, 1 for Broadcast,
 * Reduce, Send, Recv; 0 for group calls and when n < 1. */
double obs_coll_bus_factor(unsigned op, int32_t nranks);

/* The communicator that made c's comm, or NULL. */
static inline const struct obs_comm *obs_coll_comm(const struct obs_trace *t, const struct obs_coll *c)
{
    return c->comm != OBS_NONE ? &t->comms[c->comm] : NULL;
}

#endif
