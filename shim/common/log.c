/* Diagnostics with write(2): see log.h. */
#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define OBS_LOG_PREFIX "obsshim: "

static void guarded_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGPIPE);
    sigaddset(set, SIGXFSZ);
}

void obs_write_guard_begin(struct obs_write_guard *g)
{
    sigset_t set, pending;
    guarded_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, &g->old);
    if (sigpending(&pending) != 0)
        sigemptyset(&pending);
    g->pipe_was_pending = sigismember(&pending, SIGPIPE) == 1;
    g->xfsz_was_pending = sigismember(&pending, SIGXFSZ) == 1;
}

static void take_back(int sig)
{
    sigset_t one;
    const struct timespec now = {0, 0};
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigtimedwait(&one, NULL, &now);
}

void obs_write_guard_end(struct obs_write_guard *g)
{
    sigset_t pending;
    if (sigpending(&pending) == 0) {
        if (!g->pipe_was_pending && sigismember(&pending, SIGPIPE) == 1)
            take_back(SIGPIPE);
        if (!g->xfsz_was_pending && sigismember(&pending, SIGXFSZ) == 1)
            take_back(SIGXFSZ);
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static void write_all_stderr(const char *text, size_t len)
{
    struct obs_write_guard g;
    obs_write_guard_begin(&g);
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break; /* stderr closed or full: nothing better to do */
        text += n;
        len -= (size_t)n;
    }
    obs_write_guard_end(&g);
}

/* One line, one write(2), so that lines of concurrent processes do not mix. */
static void log_line(const char *kind, const char *fmt, va_list ap)
{
    char line[1024];
    int saved_errno = errno;
    size_t len = (size_t)snprintf(line, sizeof line, "%s%s", OBS_LOG_PREFIX, kind);
    int n = vsnprintf(line + len, sizeof line - len, fmt, ap);
    if (n < 0)
        n = 0;
    len += (size_t)n;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    write_all_stderr(line, len);
    errno = saved_errno;
}

void obs_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}

void obs_log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void obs_log_warn_at(const char *var, const char *text, size_t column, const char *what, const char *instead)
{
    char shown[81];
    size_t len = strlen(text), at = column > 0 ? column - 1 : 0, from = at > 60 ? at - 60 : 0, n, i;
    const char *cut = from > 0 ? "..." : "";
    n = len > from ? (len - from < 80 ? len - from : 80) : 0;
    for (i = 0; i < n; i++) /* control characters would break the caret's line-up */
        shown[i] = text[from + i] >= ' ' && text[from + i] < 0x7f ? text[from + i] : '?';
    shown[n] = '\0';
    obs_log_warn("%s: %s at column %zu; %s\nobsshim:   %s%s\nobsshim:   %*s^", var, what, column, instead, cut, shown,
                 (int)(at - from + strlen(cut)), "");
}

void obs_log_warn_once(atomic_int *once, const char *fmt, ...)
{
    va_list ap;
    if (atomic_exchange(once, 1) != 0)
        return;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}

void obs_log_signal_safe(const char *first, ...)
{
    char line[1024];
    size_t len = sizeof OBS_LOG_PREFIX - 1;
    const char *part;
    va_list ap;
    int saved_errno = errno;

    memcpy(line, OBS_LOG_PREFIX, len);
    va_start(ap, first);
    for (part = first; part != NULL; part = va_arg(ap, const char *)) {
        size_t n = strlen(part);
        if (n > sizeof line - 1 - len)
            n = sizeof line - 1 - len;
        memcpy(line + len, part, n);
        len += n;
    }
    va_end(ap);
    line[len++] = '\n';
    write_all_stderr(line, len);
    errno = saved_errno;
}

char *obs_log_u64(char *buf, unsigned long long v)
{
    char tmp[21];
    size_t n = 0, i;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return buf;
}
