/* The debug log: see debug_log.h. */
#include "debug_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "output_path.h"

OBS_HIDDEN OBS_HOT_DATA _Atomic uint8_t obs_debug_levels[OBS_DEBUG_DOMAINS];

#define DEBUG_LINE_MAX 1024u
#define DEBUG_UNIQUE_TRIES 1000ul

/* Where lines go: stderr until a file is asked for; the file is created by
 * the first line (so a process that logs nothing leaves nothing). */
enum sink_state { SINK_STDERR = 0, SINK_FILE_PENDING, SINK_OPENING, SINK_FILE };
static _Atomic int sink_state;
static _Atomic int sink_fd = STDERR_FILENO;
static char file_pattern[OBS_OUTPUT_MAX];

void obs_debug_setup(const uint8_t levels[OBS_DEBUG_DOMAINS], const char *pattern)
{
    unsigned d;
    if (pattern != NULL && pattern[0] != '\0' && strlen(pattern) < sizeof file_pattern) {
        strcpy(file_pattern, pattern);
        atomic_store(&sink_state, SINK_FILE_PENDING);
    }
    for (d = 0; d < OBS_DEBUG_DOMAINS; d++)
        atomic_store_explicit(&obs_debug_levels[d], levels[d], memory_order_relaxed);
}

/* Create the file, never opening one that exists nor following a link
 * planted at its name (O_EXCL makes both fail). With %n the first free
 * number is used. The descriptor, or -errno with the last name tried. */
static int create_file(char *path, size_t len)
{
    unsigned long n;
    int fd = -EEXIST;
    char other[OBS_OUTPUT_MAX];
    bool numbered;

    if (obs_output_expand(file_pattern, (unsigned long)getpid(), 1, path, len) != 0 ||
        obs_output_expand(file_pattern, (unsigned long)getpid(), 2, other, sizeof other) != 0)
        return -ENAMETOOLONG;
    numbered = strcmp(path, other) != 0; /* the pattern has %n */
    for (n = 1; n <= (numbered ? DEBUG_UNIQUE_TRIES : 1); n++) {
        if (obs_output_expand(file_pattern, (unsigned long)getpid(), n, path, len) != 0)
            return -ENAMETOOLONG;
        do
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd >= 0 || errno != EEXIST)
            return fd >= 0 ? fd : -errno;
    }
    return -EEXIST;
}

/* The descriptor lines go to; the first caller with a file pending creates
 * it (others write to stderr meanwhile: a line is never held back). */
static int sink(void)
{
    int expected = SINK_FILE_PENDING;
    int state = atomic_load(&sink_state);
    char path[OBS_OUTPUT_MAX];
    int fd;

    if (obs_likely(state != SINK_FILE_PENDING))
        return atomic_load(&sink_fd);
    if (!atomic_compare_exchange_strong(&sink_state, &expected, SINK_OPENING))
        return atomic_load(&sink_fd);
    fd = create_file(path, sizeof path);
    if (fd < 0) {
        obs_log_warn("OBS_DEBUG_FILE=%s: cannot create %s (%s; an existing file is never overwritten); debug lines "
                     "go to stderr",
                     file_pattern, path, strerror(-fd));
        atomic_store(&sink_state, SINK_STDERR);
        return STDERR_FILENO;
    }
    atomic_store(&sink_fd, fd);
    atomic_store(&sink_state, SINK_FILE);
    return fd;
}

void obs_debug_write(enum obs_debug_domain domain, const char *fmt, ...)
{
    char line[DEBUG_LINE_MAX];
    struct obs_write_guard g;
    int saved_errno = errno, n, fd;
    size_t len;
    va_list ap;

    n = snprintf(line, sizeof line, "obsshim[%s]: ", obs_debug_domain_name(domain));
    len = n > 0 ? (size_t)n : 0;
    va_start(ap, fmt);
    n = vsnprintf(line + len, sizeof line - len, fmt, ap);
    va_end(ap);
    len += n > 0 ? (size_t)n : 0;
    if (len > sizeof line - 2)
        len = sizeof line - 2; /* cut: the line still ends in a newline */
    line[len++] = '\n';
    fd = sink();
    obs_write_guard_begin(&g);
    /* One write: lines of several threads (and processes, O_APPEND) stay
     * whole; a short write to a full disk or pipe is not retried. */
    while (write(fd, line, len) < 0 && errno == EINTR)
        ;
    obs_write_guard_end(&g);
    errno = saved_errno;
}

void obs_debug_fork_child(void)
{
    char a[OBS_OUTPUT_MAX], b[OBS_OUTPUT_MAX];
    int state = atomic_load(&sink_state);
    if (state == SINK_OPENING) { /* the thread opening it is not in the child */
        atomic_store(&sink_state, SINK_FILE_PENDING);
        return;
    }
    if (state != SINK_FILE)
        return;
    /* a name with %p or %n differs in the child: the child's own file */
    if (obs_output_expand(file_pattern, 1, 1, a, sizeof a) == 0 &&
        obs_output_expand(file_pattern, 2, 2, b, sizeof b) == 0 && strcmp(a, b) != 0) {
        close(atomic_load(&sink_fd));
        atomic_store(&sink_fd, STDERR_FILENO);
        atomic_store(&sink_state, SINK_FILE_PENDING);
    }
}
