/* The output lock: a word holding the owner's thread id; waiters yield, then
 * sleep briefly (a holder is writing a buffer to the file: ~1 ms). */
#include "out_lock.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

static bool try_take(struct obs_out_lock *l, uint32_t self)
{
    uint32_t expected = 0;
    return atomic_compare_exchange_strong_explicit(&l->owner, &expected, self,
                                                   memory_order_acquire, memory_order_relaxed);
}

static void pause_a_little(unsigned spins)
{
    if (spins < 64) {
        sched_yield();
    } else {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000}; /* 0.1 ms */
        nanosleep(&ts, NULL);
    }
}

/* No cancellation while waiting (nanosleep is a cancellation point) nor
 * while holding: see out_lock.h. */
static int cancel_off(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

static void cancel_restore(int old)
{
    if (old != PTHREAD_CANCEL_DISABLE)
        pthread_setcancelstate(old, NULL);
}

void obs_out_lock_acquire(struct obs_out_lock *l, uint32_t self)
{
    unsigned spins = 0;
    int old = cancel_off();
    while (!try_take(l, self))
        pause_a_little(spins++);
    l->cancel_state = old;
}

bool obs_out_lock_acquire_bounded(struct obs_out_lock *l, uint32_t self, unsigned max_wait_ms)
{
    unsigned spins = 0, waited_slices = 0;
    int old = cancel_off();
    while (!try_take(l, self)) {
        if (atomic_load_explicit(&l->owner, memory_order_relaxed) == self ||
            (spins >= 64 && ++waited_slices > max_wait_ms * 10)) {
            cancel_restore(old);
            return false;
        }
        pause_a_little(spins++);
    }
    l->cancel_state = old;
    return true;
}

void obs_out_lock_release(struct obs_out_lock *l)
{
    int old = l->cancel_state;
    atomic_store_explicit(&l->owner, 0, memory_order_release);
    cancel_restore(old);
}

void obs_out_lock_reset_child(struct obs_out_lock *l)
{
    obs_out_lock_release(l);
}
