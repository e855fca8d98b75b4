/* Range lines of the ground-truth log: see range_log.h. */
#include "range_log.h"
#include "sim/sim_log_name.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RANGE_LOG_NAME_MAX 512

static pthread_once_t range_log_once = PTHREAD_ONCE_INIT;
static int range_log_fd = -1;
static int range_log_tid; /* OBS_SIM_LOG_TID=1: a 7th column, the caller's gettid() */

static void range_log_open(void)
{
    const char *path = getenv("OBS_SIM_LOG");
    const char *tid = getenv("OBS_SIM_LOG_TID");
    range_log_tid = tid != NULL && strcmp(tid, "1") == 0;
    char name[4096];
    /* the simulators' file: the same name pattern (sim/sim_log_name.h) */
    if (path != NULL && *path != '\0' && sim_log_name_expand(path, name, sizeof name))
        range_log_fd = open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static const char *or_dash(const char *s)
{
    return s != NULL && *s != '\0' ? s : "-";
}

void range_log_line(const char *api, const char *name, const char *domain, const char *attrs,
                    long long value)
{
    int saved_errno = errno;
    pthread_once(&range_log_once, range_log_open);
    if (range_log_fd < 0) {
        errno = saved_errno;
        return;
    }
    char clean[RANGE_LOG_NAME_MAX + 1];
    size_t n = 0;
    for (const char *p = or_dash(name); *p && n < RANGE_LOG_NAME_MAX; p++)
        clean[n++] = (*p == '\t' || *p == '\n' || *p == '\r') ? ' ' : *p;
    clean[n] = '\0';

    char line[RANGE_LOG_NAME_MAX + 1024], tid_text[32] = "";
    if (range_log_tid)
        snprintf(tid_text, sizeof tid_text, "\t%ld", (long)syscall(SYS_gettid));
    int len = snprintf(line, sizeof line, "%s\trange\t%s\t%.255s\t%.255s\t%lld%s\n", api, clean,
                       or_dash(domain), or_dash(attrs), value, tid_text);
    if (len > 0 && (size_t)len < sizeof line) {
        /* One write: a short write to a regular file is not expected here. */
        ssize_t w;
        do
            w = write(range_log_fd, line, (size_t)len);
        while (w < 0 && errno == EINTR);
    }
    errno = saved_errno;
}
