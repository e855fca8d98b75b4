/* Diagnostics: every message the shim prints goes through here, to stderr
 * with write(2) and an "obsshim: " prefix. Never called on the hot path. */
#ifndef OBS_LOG_H
#define OBS_LOG_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__GNUC__)
#define OBS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OBS_PRINTF(f, a)
#endif

/* "obsshim: warning: <message>" */
void obs_log_warn(const char *fmt, ...) OBS_PRINTF(1, 2);
/* "obsshim: <message>" */
void obs_log_info(const char *fmt, ...) OBS_PRINTF(1, 2);
/* One warning for a bad setting text, with the text and a caret under the
 * offending character (1-based column; a window of the text when long):
 *   obsshim: warning: VAR: WHAT at column N; INSTEAD
 *   obsshim:   the text
 *   obsshim:       ^                                                     */
void obs_log_warn_at(const char *var, const char *text, size_t column, const char *what, const char *instead);
/* obs_log_warn the first time only: *once starts at 0 (static storage). */
void obs_log_warn_once(atomic_int *once, const char *fmt, ...) OBS_PRINTF(2, 3);
/* Async-signal-safe: concatenates the NULL-terminated list of strings after
 * the prefix and a newline is added; no formatting, no allocation. */
void obs_log_signal_safe(const char *first, ...);
/* Decimal text of v into buf (at least 21 bytes); returns buf. Signal-safe. */
char *obs_log_u64(char *buf, unsigned long long v);

/* The shim's own writes must not raise a signal in the app: SIGPIPE (its
 * stderr a closed pipe: `app 2>&1 | head`) or SIGXFSZ (the trace past
 * RLIMIT_FSIZE), whose default actions kill it and whose handlers are the
 * app's. Between begin and end both are blocked on the calling thread; one
 * that a write in between raised is taken back before they are unblocked
 * (the write fails with EPIPE or EFBIG instead); one already pending stays.
 * Async-signal-safe. */
struct obs_write_guard {
    sigset_t old;
    bool pipe_was_pending, xfsz_was_pending;
};
void obs_write_guard_begin(struct obs_write_guard *g);
void obs_write_guard_end(struct obs_write_guard *g);

#endif
