/* The one lock around the trace file and the registry of thread buffers.
 * Taken once per window switch, never per call. It records its owner (a
 * thread id) so that a signal handler can see that its own thread was
 * interrupted inside a window switch and must not wait for itself.
 *
 * The holder cannot be cancelled (pthread_cancel): a write(2) of ours is a
 * cancellation point, and a thread cancelled there would keep the lock
 * forever (every later window and the exit path would wait for a dead
 * thread). Cancellation is disabled from the first try to take it until it
 * is released; a pending request acts at the thread's next cancellation
 * point after that, outside the shim. */
#ifndef OBS_OUT_LOCK_H
#define OBS_OUT_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct obs_out_lock {
    _Atomic uint32_t owner; /* thread id holding it, 0 = free */
    int cancel_state;       /* the holder's cancel state before it took the lock */
};

void obs_out_lock_acquire(struct obs_out_lock *l, uint32_t self);
/* Try for at most max_wait_ms; false when it could not be had or when self
 * already holds it (a signal arriving inside a window switch). */
bool obs_out_lock_acquire_bounded(struct obs_out_lock *l, uint32_t self, unsigned max_wait_ms);
void obs_out_lock_release(struct obs_out_lock *l);
/* Fork child: the forking thread held it (fork prepare); free it. */
void obs_out_lock_reset_child(struct obs_out_lock *l);

#endif
