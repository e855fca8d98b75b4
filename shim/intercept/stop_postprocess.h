/* The timeline and summary after a signal that asks the process to stop
 * (SIGTERM, SIGINT, SIGHUP, SIGXCPU), from its handler, once the .obs is
 * closed: the exit path's post-processing (obs_output_postprocess) does
 * what is not async-signal-safe (malloc, stdio, zlib), so it runs in a
 * child process, a copy of this one made with clone(2) (no atfork
 * handlers, no SIGCHLD: the app's waitpid(-1) never sees it). Whatever the
 * signal interrupted (a malloc holding a lock, on any thread), the app's
 * own memory is never touched: the worst the child can do is fail or hang.
 * The handler waits for it, and ends it when it makes no progress (no CPU
 * time and no byte read or written for OBS_STOP_STALL_S seconds while it
 * sleeps: a lock held by a thread that is not there, a FIFO's reader that
 * stopped reading); then the signal ends the process as it would have.
 * docs/shim.md, "How a process ends". */
#ifndef OBS_STOP_POSTPROCESS_H
#define OBS_STOP_POSTPROCESS_H

#define OBS_STOP_STALL_S 5
#define OBS_STOP_STALL_TEXT "5" /* the same, for messages built without formatting */

/* Async-signal-safe. how: the signal's name. Prints one line either way:
 * the child's "obsshim: SIGTERM: wrote X.obs X.pftrace" (after the
 * summary), or "obsshim: SIGTERM: wrote X.obs; the timeline was not
 * written (why; obs-report perfetto X.obs -o X.pftrace writes it)". */
void obs_stop_postprocess(const char *how);

#endif
