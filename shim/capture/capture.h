/* Capture windows (OBS_CAPTURE, docs/capture.md): the runtime's profiler
 * start at the first launch of a window's first step (or iteration, or
 * generation) and its stop after the window's last, so that `nsys profile
 * --capture-range=cudaProfilerApi`, `ncu --profile-from-start off` and
 * rocprofv3's `--selected-regions` capture exactly those steps of an
 * unmodified program; with OBS_RECORD=window the shim's own trace keeps
 * only the calls inside them (the recorder's store gate, opened and closed
 * with the profiler).
 *
 * What it follows: the PHASE records the phase engine writes (BEGIN and
 * END, exactly where the live ranges are pushed and popped), handed to it
 * by the recorder as they are stored (the hook intercept/ registers at
 * start-up, obs_recorder_set_phase_hook), as GPU time per phase range
 * does. The phase engine is never asked anything, so a new engine that
 * writes the same records is followed the same way. A BEGIN is written
 * inside the launch's wrapper before the launch is enqueued, an END before
 * the next phase's first launch is enqueued or right after the host sync
 * that ends its phase: the start lands just before the window's first
 * launch, the stop after its last call and before the next step's first
 * launch. Nothing of this runs per launch. */
#ifndef OBS_CAPTURE_H
#define OBS_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "record/record.h"

/* At start-up, from obs_cfg.capture (set up once, before any record). */
void obs_capture_init(void);

/* The recorder's phase hook (on the thread that appended r): windows
 * open and close here. */
void obs_capture_on_phase(const struct obs_rec_phase *r, uint64_t index);

/* A thread's end (the recorder's thread-exit hook): a window it holds open
 * closes there. */
void obs_capture_thread_exit(void);

/* At process exit, after the exiting thread's ranges were ended and before
 * the recorder ends the trace: windows still open close (the profiler's
 * stop), a window that never began is said once on stderr, and the trace's
 * meta gets the spec (capture=, record=). */
void obs_capture_finish(void);

/* In a fork child: the windows start again, for the child's own trace. */
void obs_capture_fork_child(void);

#endif
