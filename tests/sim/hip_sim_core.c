/* Simulated HIP runtime: first-call setup (banner, OBS_SIM_LOG), the
 * ground-truth log, the per-thread last error and the global lock. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/sim/hip_sim.h"
#include "tests/sim/sim_fault.h"

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
static int sim_log_fd = -1;
static __thread obs_hipError_t sim_thread_last_error;

static const char sim_banner[] =
    "obsshim-sim: simulated HIP runtime (no GPU; kernels are not executed)\n";

static void sim_write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

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
    const char *quiet = getenv("OBS_SIM_QUIET");
    const char *log_path = getenv("OBS_SIM_LOG");

    pthread_atfork(sim_atfork_prepare, sim_atfork_release, sim_atfork_release);
    sim_fault_init();
    if (log_path != NULL && log_path[0] != '\0') {
        sim_log_fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (sim_log_fd < 0) {
            static const char msg[] = "obsshim-sim: cannot open OBS_SIM_LOG; no log written\n";
            sim_write_all(2, msg, sizeof msg - 1);
        }
    }
    if (quiet == NULL || strcmp(quiet, "1") != 0)
        sim_write_all(2, sim_banner, sizeof sim_banner - 1);
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
    char line[1024];
    char stream_text[32] = "-";
    char bytes_text[32] = "-";
    int len;

    if (sim_log_fd < 0)
        return;
    if (stream != NULL)
        snprintf(stream_text, sizeof stream_text, "0x%" PRIxPTR, (uintptr_t)*stream);
    if (bytes >= 0)
        snprintf(bytes_text, sizeof bytes_text, "%lld", bytes);
    /* Names are cut at 768 bytes so that a line always fits whole. */
    len = snprintf(line, sizeof line, "%s\t%s\t%.768s\t%s\t%s\t%d\n", api, sim_kind_word(kind),
                   name != NULL && name[0] != '\0' ? name : "-", stream_text, bytes_text, status);
    if (len < 0 || (size_t)len >= sizeof line)
        return;
    /* One write(2) to an O_APPEND file: lines from threads and processes never interleave. */
    if (write(sim_log_fd, line, (size_t)len) < 0)
        return;
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
