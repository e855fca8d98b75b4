/* Buffers of bytes ("runs") handed, in order, to a function that runs on a
 * thread of its own, while the caller fills the next one: obs-report's
 * Perfetto export deflates its packet runs there (about half its time on
 * one core), so that building packets and deflating them overlap. At most
 * OBS_RUN_PIPE_BUFFERS runs are in flight; the caller waits when all are. */
#ifndef OBS_TRACE_RUN_PIPE_H
#define OBS_TRACE_RUN_PIPE_H

#include <stddef.h>
#include <stdint.h>

#define OBS_RUN_PIPE_BUFFERS 4

struct obs_run_pipe;

/* consume(arg, run, len) is called on the pipe's thread for each run, in
 * the order submitted. NULL when the thread or memory cannot be had (the
 * caller then does the work itself). */
struct obs_run_pipe *obs_run_pipe_start(size_t run_bytes, void (*consume)(void *arg, const uint8_t *run, size_t len),
                                        void *arg);

/* The buffer to fill now (run_bytes of room). */
uint8_t *obs_run_pipe_buffer(struct obs_run_pipe *p);

/* Hand over the filled buffer (len bytes); returns the next one to fill. */
uint8_t *obs_run_pipe_submit(struct obs_run_pipe *p, size_t len);

/* Wait until every submitted run was consumed, stop the thread, free. */
void obs_run_pipe_finish(struct obs_run_pipe *p);

#endif
