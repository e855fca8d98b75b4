/* The device clock on the host time base: see gpu_clock.h. */
#include "gpu_clock.h"

#include <pthread.h>
#include <string.h>

#include "common/common.h"
#include "record/record.h"

/* The reference event of a family on a device. */
struct reference {
    _Atomic int state; /* 0 not made yet, 1 ready, -1 unusable */
    void *event;
    uint64_t host_ns;  /* its device time on the host time base */
    uint64_t error_ns; /* half the calibration window */
    uintptr_t stream;  /* our private stream */
};

static struct reference refs[OBS_GPU_FAMILIES][OBS_GPU_MAX_DEVICES];
static pthread_mutex_t ref_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
    pthread_mutex_lock(&ref_lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&ref_lock);
}

/* The child cannot use the parent's events (nor, on a real GPU, its
 * context): it makes its own references. */
static void fork_child(void)
{
    pthread_mutex_init(&ref_lock, NULL);
    memset(refs, 0, sizeof refs);
}

static void register_fork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

bool obs_gpu_clock_ready(const struct obs_gpu_backend *be, unsigned d, int prev_error, const char *mode)
{
    struct reference *r = &refs[be->family][d];
    int state = atomic_load_explicit(&r->state, memory_order_acquire);
    int st = 0;
    const char *what = NULL;
    uint64_t h0, h1;

    if (state != 0)
        return state > 0;
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&ref_lock);
    state = atomic_load(&r->state);
    if (state == 0) {
        if ((st = be->stream_create_private(&r->stream)) != 0)
            what = "creating a stream";
        else if ((st = be->event_create(&r->event)) != 0)
            what = "creating an event";
        if (what == NULL) {
            h0 = obs_now_ns();
            if ((st = be->event_record(r->event, r->stream)) != 0)
                what = "recording an event";
            else if ((st = be->event_synchronize(r->event)) != 0)
                what = "waiting for an event";
            h1 = obs_now_ns();
            r->host_ns = h0 + (h1 - h0) / 2;
            r->error_ns = (h1 - h0 + 1) / 2;
        }
        state = what == NULL ? 1 : -1;
        atomic_store_explicit(&r->state, state, memory_order_release);
    }
    pthread_mutex_unlock(&ref_lock);
    if (what == NULL)
        OBS_DEBUG_LOG(GPUTIME, 1, "device %u: reference event at host %llu ns (+/- %llu ns); %s calls timed there", d,
                      (unsigned long long)r->host_ns, (unsigned long long)r->error_ns, be->name);
    if (what != NULL) {
        OBS_DEBUG_LOG(GPUTIME, 1, "off on device %u: %s failed (status %d)", d, what, st);
        obs_log_warn("OBS_GPU_TIME=%s: %s for the reference event on device %u failed (%s status %d); "
                     "calls on that device get no GPU time", mode, what, d, be->name, st);
        obs_gpu_restore_last_error(be, be->every_call_sets_last_error ? 0 : prev_error);
    }
    return state > 0;
}

bool obs_gpu_clock_reference(unsigned family, unsigned d, void **event, uint64_t *host_ns)
{
    const struct reference *r;
    if (family >= OBS_GPU_FAMILIES || d >= OBS_GPU_MAX_DEVICES)
        return false;
    r = &refs[family][d];
    if (atomic_load_explicit(&r->state, memory_order_acquire) <= 0)
        return false;
    *event = r->event;
    *host_ns = r->host_ns;
    return true;
}

uint64_t obs_gpu_clock_error_ns(void)
{
    uint64_t error_ns = 0;
    unsigned f, d;
    for (f = 0; f < OBS_GPU_FAMILIES; f++)
        for (d = 0; d < OBS_GPU_MAX_DEVICES; d++)
            if (atomic_load(&refs[f][d].state) > 0 && refs[f][d].error_ns > error_ns)
                error_ns = refs[f][d].error_ns;
    return error_ns;
}

int64_t obs_gpu_ms_to_ns(float ms)
{
    double ns = (double)ms * 1e6;
    return (int64_t)(ns < 0 ? ns - 0.5 : ns + 0.5);
}
