/* Minimal TAP producer: see basic.h. */
#include "basic.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long tap_next = 1;
static unsigned long tap_planned;
static unsigned long tap_failed;
static int tap_lazy;
static int tap_atexit_done;

static void tap_finish(void)
{
    fflush(stderr);
    if (tap_lazy)
        printf("1..%lu\n", tap_next - 1);
    else if (tap_planned != tap_next - 1)
        printf("# planned %lu tests but ran %lu\n", tap_planned, tap_next - 1);
    fflush(stdout);
}

static void tap_register_exit(void)
{
    if (!tap_atexit_done) {
        tap_atexit_done = 1;
        setvbuf(stdout, NULL, _IOLBF, 0);
        atexit(tap_finish);
    }
}

void plan(unsigned long count)
{
    tap_register_exit();
    tap_planned = count;
    printf("1..%lu\n", count);
    fflush(stdout);
}

void plan_lazy(void)
{
    tap_register_exit();
    tap_lazy = 1;
}

void skip_all(const char *fmt, ...)
{
    va_list ap;
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(0);
}

static int tap_result(int success, const char *fmt, va_list ap)
{
    if (!success)
        tap_failed++;
    printf("%sok %lu", success ? "" : "not ", tap_next++);
    if (fmt && *fmt) {
        printf(" - ");
        vprintf(fmt, ap);
    }
    printf("\n");
    fflush(stdout);
    return success;
}

int ok(int success, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tap_result(success, fmt, ap);
    va_end(ap);
    return success;
}

int ok_todo(int success, const char *todo, const char *fmt, ...)
{
    va_list ap;
    if (todo == NULL || success) {
        va_start(ap, fmt);
        tap_result(success, fmt, ap);
        va_end(ap);
        return success;
    }
    printf("not ok %lu", tap_next++);
    if (fmt && *fmt) {
        printf(" - ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
    }
    printf(" # TODO %s\n", todo);
    fflush(stdout);
    return success;
}

int is_int(long long wanted, long long seen, const char *fmt, ...)
{
    va_list ap;
    int success = (wanted == seen);
    va_start(ap, fmt);
    tap_result(success, fmt, ap);
    va_end(ap);
    if (!success)
        diag("wanted: %lld\n#   seen: %lld", wanted, seen);
    return success;
}

int is_string(const char *wanted, const char *seen, const char *fmt, ...)
{
    va_list ap;
    int success;
    if (wanted == NULL || seen == NULL)
        success = (wanted == seen);
    else
        success = (strcmp(wanted, seen) == 0);
    va_start(ap, fmt);
    tap_result(success, fmt, ap);
    va_end(ap);
    if (!success)
        diag("wanted: %s\n#   seen: %s", wanted ? wanted : "(null)", seen ? seen : "(null)");
    return success;
}

int is_double(double wanted, double seen, double rel_tol, const char *fmt, ...)
{
    va_list ap;
    double scale = fabs(wanted) > 1e-300 ? fabs(wanted) : 1.0;
    int success = !isnan(seen) && fabs(wanted - seen) / scale <= rel_tol;
    va_start(ap, fmt);
    tap_result(success, fmt, ap);
    va_end(ap);
    if (!success)
        diag("wanted: %.9g (relative tolerance %g)\n#   seen: %.9g", wanted, rel_tol, seen);
    return success;
}

void skip(const char *fmt, ...)
{
    va_list ap;
    printf("ok %lu # skip ", tap_next++);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void skip_block(unsigned long count, const char *fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    while (count-- > 0)
        skip("%s", reason);
}

void diag(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void diag_text(const char *label, const char *text)
{
    const char *p = text ? text : "";
    printf("# %s:\n", label);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        printf("#   %.*s\n", (int)n, p);
        p += n + (nl ? 1 : 0);
    }
    fflush(stdout);
}

void bail(const char *fmt, ...)
{
    va_list ap;
    fflush(stderr);
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(255);
}

unsigned long tap_failures(void)
{
    return tap_failed;
}
