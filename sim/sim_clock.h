/* OBS_SIM_SYNC_WAIT=1: the virtual device clock of the simulators runs with
 * the host's. Virtual time 0 is the library's start on CLOCK_MONOTONIC; an
 * operation never starts before the host enqueued it (its start is at least
 * "now"), and a host sync (stream, device, event) or a synchronous copy
 * sleeps until the virtual time at which the work it waits for ends. So the
 * host's wall-clock around a sync matches the cost model (cost_model.h),
 * as on a real GPU. Unset or 0: host calls never sleep and virtual time
 * starts at 0 (the default, what the other tests expect).
 * Each library compiles its own copy, like sim_log.c. */
#ifndef OBS_SIM_CLOCK_H
#define OBS_SIM_CLOCK_H

#include <stdint.h>

/* From sim_log_start: read OBS_SIM_SYNC_WAIT, set the epoch. */
void sim_clock_init(void);

/* 1 when OBS_SIM_SYNC_WAIT=1. */
int sim_clock_sync_wait(void);

/* The earliest virtual time at which an operation enqueued now may start:
 * the host's time since the epoch with OBS_SIM_SYNC_WAIT=1, else 0. */
uint64_t sim_clock_floor(void);

/* Remember (per thread) the virtual end time of the operation just enqueued,
 * for a synchronous copy to wait for it. */
void sim_clock_note_end(uint64_t end_ns);
/* The value noted last on this thread. */
uint64_t sim_clock_last_end(void);

/* With OBS_SIM_SYNC_WAIT=1, sleep until virtual time end_ns (return at once
 * if it has passed); else nothing. With OBS_SIM_LOG_WAITS=1 too, each such
 * wait first writes a log line "sim_clock_wait wait - - END_NS 0", so that
 * tests see which calls waited without timing them. Never call it holding a
 * simulator lock. errno is preserved. */
void sim_clock_wait(uint64_t end_ns);

#endif
