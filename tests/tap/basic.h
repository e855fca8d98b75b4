/* Minimal TAP producer for obsshim's tests (in the spirit of C TAP Harness).
 * Output goes to stdout; automake's tap-driver.sh reads it. */
#ifndef OBS_TAP_BASIC_H
#define OBS_TAP_BASIC_H

#include <stddef.h>

#if defined(__GNUC__)
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_NORETURN __attribute__((noreturn))
#else
#define TAP_PRINTF(f, a)
#define TAP_NORETURN
#endif

/* Announce the number of tests. plan_lazy() prints the plan at exit instead. */
void plan(unsigned long count);
void plan_lazy(void);

/* Skip the whole file with a reason ("1..0 # SKIP reason") and exit 0. */
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;

/* Each returns the truth of the check so that callers can react to failure. */
int ok(int success, const char *fmt, ...) TAP_PRINTF(2, 3);
int is_int(long long wanted, long long seen, const char *fmt, ...) TAP_PRINTF(3, 4);
int is_string(const char *wanted, const char *seen, const char *fmt, ...) TAP_PRINTF(3, 4);
int is_double(double wanted, double seen, double rel_tol, const char *fmt, ...) TAP_PRINTF(4, 5);
/* ok() for a check known to fail for now: with todo not NULL a failure is
 * printed "not ok N - ... # TODO todo" (tap-driver: XFAIL) and not counted;
 * a success is a plain "ok" (never XPASS: a known failure that got fixed,
 * or a noisy one that passed this time, does not fail the run). */
int ok_todo(int success, const char *todo, const char *fmt, ...) TAP_PRINTF(3, 4);
void skip(const char *fmt, ...) TAP_PRINTF(1, 2);
void skip_block(unsigned long count, const char *fmt, ...) TAP_PRINTF(2, 3);

/* Diagnostics: "# ..." lines. */
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Print a multi-line text as diagnostics, each line prefixed with "# ". */
void diag_text(const char *label, const char *text);

/* Abort the test file: "Bail out! reason", exit 255. */
void bail(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;

/* Number of failures so far. */
unsigned long tap_failures(void);

#endif
