/* The simulated CUDA runtime's start-up (banner, environment) and its
 * ground-truth log: one tab-separated line per call, written with a single
 * write(2) to an O_APPEND file so that threads and forked children never
 * interleave inside a line (docs/architecture.md, "Ground-truth log"). */
#include "cudart_sim.h"
#include "sim_fault.h"
#include "sim_log.h"
#include "sim_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;

static const char sim_banner[] =
    "obsshim-sim: simulated CUDA runtime (no GPU; kernels are not executed)\n";

static void sim_lock_before_fork(void)
{
    pthread_mutex_lock(&sim_lock);
}

static void sim_unlock_after_fork(void)
{
    pthread_mutex_unlock(&sim_lock);
}

static void sim_init(void)
{
    sim_log_start(sim_banner);
    /* A child forked while another thread held the lock must not inherit it held. */
    pthread_atfork(sim_lock_before_fork, sim_unlock_after_fork, sim_unlock_after_fork);
}

void sim_enter(void)
{
    pthread_once(&sim_once, sim_init);
    sim_tool_api_begin(SIM_TOOL_RUNTIME);
}

static void sim_enter_quiet(void)
{
    pthread_once(&sim_once, sim_init);
}

/* The simulated libcupti attaches here (sim_tool.h). */
SIM_EXPORT void obssim_cudart_tool_attach(const struct sim_tool_port *port)
{
    sim_enter_quiet();
    sim_tool_attach(SIM_TOOL_RUNTIME, port);
}

static const char *const sim_kind_words[] = {
    [SIM_KIND_KERNEL] = "kernel", [SIM_KIND_MEMCPY] = "memcpy", [SIM_KIND_MEMSET] = "memset",
    [SIM_KIND_SYNC] = "sync",     [SIM_KIND_GRAPH] = "graph",   [SIM_KIND_ALLOC] = "alloc",
    [SIM_KIND_OTHER] = "other",
};

void sim_log_call(const char *api, enum sim_kind kind, const char *name, const void *stream,
                  long long bytes, int status)
{
    sim_log_line(api, sim_kind_words[kind], name, stream != SIM_NO_STREAM, (uintptr_t)stream, bytes, status);
    sim_tool_api_end(SIM_TOOL_RUNTIME, api, status);
}

obs_cudaError_t sim_finish(const char *api, enum sim_kind kind, const char *name, const void *stream,
                           long long bytes, obs_cudaError_t status)
{
    int injected = sim_fault_status(api);
    if (injected)
        status = injected;
    if (status != obs_cudaSuccess)
        sim_set_last_error(status);
    sim_log_call(api, kind, name, stream, bytes, (int)status);
    return status;
}
