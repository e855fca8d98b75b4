/* Simulated HIP runtime: first-call setup (banner, OBS_SIM_LOG), the
 * ground-truth log, the per-thread last error and the global lock. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hip_sim.h"
#include "sim_fault.h"
#include "sim_log.h"

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
static __thread obs_hipError_t sim_thread_last_error;

static const char sim_banner[] =
    "obsshim-sim: simulated HIP runtime (no GPU; kernels are not executed)\n";

/* A fork while another thread holds the lock must not leave the child with
 * a lock nobody will release. */
static void sim_atfork_prepare(void)
{
    pthread_mutex_lock(&sim_lock);
}

static void sim_atfork_release(void)
{
    pthread_mutex_unlock(&sim_lock);
}

static void sim_init(void)
{
    pthread_atfork(sim_atfork_prepare, sim_atfork_release, sim_atfork_release);
    sim_log_start(sim_banner);
}

void sim_enter(void)
{
    pthread_once(&sim_once, sim_init);
}

static const char *sim_kind_word(enum sim_kind kind)
{
    switch (kind) {
    case SIM_KIND_KERNEL:
        return "kernel";
    case SIM_KIND_MEMCPY:
        return "memcpy";
    case SIM_KIND_MEMSET:
        return "memset";
    case SIM_KIND_SYNC:
        return "sync";
    case SIM_KIND_GRAPH:
        return "graph";
    case SIM_KIND_ALLOC:
        return "alloc";
    case SIM_KIND_OTHER:
        break;
    }
    return "other";
}

void sim_log_call(const char *api, enum sim_kind kind, const char *name,
                  const obs_hipStream_t *stream, long long bytes, int status)
{
    sim_log_line(api, sim_kind_word(kind), name, stream != NULL, stream != NULL ? (uintptr_t)*stream : 0, bytes,
                 status);
}

obs_hipError_t sim_finish(const char *api, enum sim_kind kind, const char *name,
                          const obs_hipStream_t *stream, long long bytes, obs_hipError_t status)
{
    int injected = sim_fault_status(api);
    if (injected)
        status = (obs_hipError_t)injected;
    sim_log_call(api, kind, name, stream, bytes, status);
    sim_thread_last_error = status;
    return status;
}

obs_hipError_t sim_last_error_get(void)
{
    return sim_thread_last_error;
}

void sim_last_error_set(obs_hipError_t status)
{
    sim_thread_last_error = status;
}
