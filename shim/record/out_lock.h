/* The one lock around the trace file and the registry of thread buffers.
 * Taken once per buffer flush, never per call. It records its owner (a
 * thread id) so that a signal handler can see that its own thread was
 * interrupted inside a flush and must not wait for itself. */
#ifndef OBS_OUT_LOCK_H
#define OBS_OUT_LOCK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct obs_out_lock {
    _Atomic uint32_t owner; /* thread id holding it, 0 = free */
};

void obs_out_lock_acquire(struct obs_out_lock *l, uint32_t self);
/* Try for at most max_wait_ms; false when it could not be had or when self
 * already holds it (a signal arriving inside a flush). */
bool obs_out_lock_acquire_bounded(struct obs_out_lock *l, uint32_t self, unsigned max_wait_ms);
void obs_out_lock_release(struct obs_out_lock *l);

#endif
