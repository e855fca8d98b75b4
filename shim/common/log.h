/* Diagnostics: every message the shim prints goes through here, to stderr
 * with write(2) and an "obsshim: " prefix. Never called on the hot path. */
#ifndef OBS_LOG_H
#define OBS_LOG_H

#include <stdatomic.h>

#if defined(__GNUC__)
#define OBS_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define OBS_PRINTF(f, a)
#endif

/* "obsshim: warning: <message>" */
void obs_log_warn(const char *fmt, ...) OBS_PRINTF(1, 2);
/* "obsshim: <message>" */
void obs_log_info(const char *fmt, ...) OBS_PRINTF(1, 2);
/* obs_log_warn the first time only: *once starts at 0 (static storage). */
void obs_log_warn_once(atomic_int *once, const char *fmt, ...) OBS_PRINTF(2, 3);
/* Async-signal-safe: concatenates the NULL-terminated list of strings after
 * the prefix and a newline is added; no formatting, no allocation. */
void obs_log_signal_safe(const char *first, ...);
/* Decimal text of v into buf (at least 21 bytes); returns buf. Signal-safe. */
char *obs_log_u64(char *buf, unsigned long long v);

#endif
