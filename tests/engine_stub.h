/* A stand-in for what the phase engine (shim/phases/phase_engine.c) calls
 * below it, so that tests/t_phase_engine can link the engine's own source
 * and drive it call by call, with no runtime, no preload and no file:
 *
 *   record/  the per-thread record buffer (every CALL and PHASE record kept
 *            in memory, in order, with its per-thread index), the host
 *            clock (a virtual one the test advances), kernel names (a
 *            table the test fills), the output (string-table writes
 *            accepted and dropped);
 *   phases/  the live range sinks (each thread's stack of pushed range
 *            names, as an NVTX tool would see it).
 *
 * The engine's real obs_phase_before / obs_phase_after are called as the
 * wrappers call them (engine_stub_call below). Not thread-safe across
 * threads that share a buffer: each thread has its own, as in the shim. */
#ifndef OBS_ENGINE_STUB_H
#define OBS_ENGINE_STUB_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/trace.h"

/* The virtual clock (ns) that obs_now_ns() reads; starts at 1 s. */
void engine_stub_advance_ns(uint64_t ns);
/* A gap the thread spends busy (compiling): the host clock and its CPU time advance together. */
void engine_stub_busy_ns(uint64_t ns);
uint64_t engine_stub_now_ns(void);

/* The name id of a kernel name (interned on first use). */
uint32_t engine_stub_name(const char *mangled);

/* One hooked call made the way a wrapper makes it: the engine before the
 * "real call", the CALL record stored, the engine after. Returns the
 * per-thread index of its CALL record. live_out (at least 64 bytes), when
 * not NULL, receives the live range stack at the call, innermost last,
 * names separated by '|' ("" when none open). */
uint64_t engine_stub_call(const struct obs_rec_call *rec, uint16_t api, char *live_out, size_t live_len);

/* The calling thread's records (CALL and PHASE), index 0 first. */
const union obs_record *engine_stub_records(uint64_t *count);

/* Live ranges popped with nothing open on the calling thread (should stay 0). */
unsigned engine_stub_live_underflows(void);
/* Depth of the calling thread's live range stack now. */
unsigned engine_stub_live_depth(void);

#endif
