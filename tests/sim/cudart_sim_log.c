/* The simulated CUDA runtime's start-up (banner, environment) and its
 * ground-truth log: one tab-separated line per call, written with a single
 * write(2) to an O_APPEND file so that threads and forked children never
 * interleave inside a line (docs/architecture.md, "Ground-truth log"). */
#include "cudart_sim.h"
#include "sim_fault.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t sim_once = PTHREAD_ONCE_INIT;
static int sim_log_fd = -1;

static const char sim_banner[] =
    "obsshim-sim: simulated CUDA runtime (no GPU; kernels are not executed)\n";

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

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
    const char *quiet = getenv("OBS_SIM_QUIET");
    const char *path = getenv("OBS_SIM_LOG");
    int saved_errno = errno;

    if (!(quiet && strcmp(quiet, "1") == 0))
        write_all(2, sim_banner, sizeof sim_banner - 1);
    if (path && *path) {
        sim_log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (sim_log_fd < 0) {
            char msg[4200];
            int n = snprintf(msg, sizeof msg, "obsshim-sim: cannot open OBS_SIM_LOG=%s: %s\n", path,
                             strerror(errno));
            write_all(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        }
    }
    sim_fault_init();
    /* A child forked while another thread held the lock must not inherit it held. */
    pthread_atfork(sim_lock_before_fork, sim_unlock_after_fork, sim_unlock_after_fork);
    errno = saved_errno;
}

void sim_enter(void)
{
    pthread_once(&sim_once, sim_init);
}

static const char *const sim_kind_words[] = {
    [SIM_KIND_KERNEL] = "kernel", [SIM_KIND_MEMCPY] = "memcpy", [SIM_KIND_MEMSET] = "memset",
    [SIM_KIND_SYNC] = "sync",     [SIM_KIND_GRAPH] = "graph",   [SIM_KIND_ALLOC] = "alloc",
    [SIM_KIND_OTHER] = "other",
};

void sim_log_call(const char *api, enum sim_kind kind, const char *name, const void *stream,
                  long long bytes, int status)
{
    char line[8192], stream_text[32], bytes_text[32];
    int n;
    int saved_errno;

    if (sim_log_fd < 0)
        return;
    saved_errno = errno;
    if (stream == SIM_NO_STREAM)
        strcpy(stream_text, "-");
    else
        snprintf(stream_text, sizeof stream_text, "0x%" PRIxPTR, (uintptr_t)stream);
    if (bytes < 0)
        strcpy(bytes_text, "-");
    else
        snprintf(bytes_text, sizeof bytes_text, "%lld", bytes);
    /* A name too long for the line is cut, never split over two writes. */
    n = snprintf(line, sizeof line, "%s\t%s\t%.7000s\t%s\t%s\t%d\n", api, sim_kind_words[kind],
                 name && *name ? name : "-", stream_text, bytes_text, status);
    if (n > 0 && (size_t)n < sizeof line) {
        ssize_t w;
        do
            w = write(sim_log_fd, line, (size_t)n);
        while (w < 0 && errno == EINTR);
    }
    errno = saved_errno;
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
