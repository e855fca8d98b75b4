/* Start-up and ground-truth log of the simulated runtimes: see sim_log.h. */
#include "sim_log.h"
#include "sim_log_name.h"
#include "sim_clock.h"
#include "sim_fault.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sim_log_fd = -1;
static int sim_log_tid; /* OBS_SIM_LOG_TID=1: a 7th column, the caller's gettid() */
static int sim_log_ops; /* OBS_SIM_LOG_OPS=1: a sim_op line per device operation */

void sim_write_all(int fd, const char *buf, size_t len)
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

void sim_log_start(const char *banner)
{
    const char *quiet = getenv("OBS_SIM_QUIET");
    const char *path = getenv("OBS_SIM_LOG");
    const char *tid = getenv("OBS_SIM_LOG_TID");
    const char *ops = getenv("OBS_SIM_LOG_OPS");
    int saved_errno = errno;

    sim_log_tid = tid != NULL && strcmp(tid, "1") == 0;
    sim_log_ops = ops != NULL && strcmp(ops, "1") == 0;

    if (!(quiet && strcmp(quiet, "1") == 0))
        sim_write_all(2, banner, strlen(banner));
    if (path && *path) {
        char name[4096];
        if (!sim_log_name_expand(path, name, sizeof name))
            errno = ENAMETOOLONG;
        else
            sim_log_fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (sim_log_fd < 0) {
            char msg[4200];
            int n = snprintf(msg, sizeof msg, "obsshim-sim: cannot open OBS_SIM_LOG=%s: %s\n", path,
                             strerror(errno));
            sim_write_all(2, msg, n > 0 && (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        }
    }
    sim_fault_init();
    sim_clock_init();
    errno = saved_errno;
}

static void write_line(const char *line, int n)
{
    if (n > 0) {
        ssize_t w;
        do
            w = write(sim_log_fd, line, (size_t)n);
        while (w < 0 && errno == EINTR);
    }
}

void sim_log_line(const char *api, const char *kind, const char *name, int has_stream, uintptr_t stream,
                  long long bytes, int status)
{
    char line[8192], stream_text[32] = "-", bytes_text[32] = "-", tid_text[32] = "";
    int n, saved_errno;

    if (sim_log_fd < 0)
        return;
    saved_errno = errno;
    if (has_stream)
        snprintf(stream_text, sizeof stream_text, "0x%" PRIxPTR, stream);
    if (bytes >= 0)
        snprintf(bytes_text, sizeof bytes_text, "%lld", bytes);
    if (sim_log_tid)
        snprintf(tid_text, sizeof tid_text, "\t%ld", (long)syscall(SYS_gettid));
    /* A name too long for the line is cut, never split over two writes. */
    n = snprintf(line, sizeof line, "%s\t%s\t%.7000s\t%s\t%s\t%d%s\n", api, kind, name && *name ? name : "-",
                 stream_text, bytes_text, status, tid_text);
    if (n > 0 && (size_t)n < sizeof line)
        write_line(line, n);
    errno = saved_errno;
}

void sim_log_op(const char *kind, const char *name, uintptr_t stream, uint64_t start_ns, uint64_t end_ns)
{
    char line[8192], tid_text[32] = "";
    int n, saved_errno;

    if (sim_log_fd < 0 || !sim_log_ops)
        return;
    saved_errno = errno;
    if (sim_log_tid)
        snprintf(tid_text, sizeof tid_text, "\t%ld", (long)syscall(SYS_gettid));
    n = snprintf(line, sizeof line, "sim_op\t%s\t%.7000s\t0x%" PRIxPTR "\t%" PRIu64 "\t%" PRIu64 "%s\n", kind,
                 name && *name ? name : "-", stream, start_ns, end_ns, tid_text);
    if (n > 0 && (size_t)n < sizeof line)
        write_line(line, n);
    errno = saved_errno;
}
