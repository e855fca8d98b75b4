/* obs-report's progress line (see report_cli.h): the writers report calls
 * done (trace_progress.h); this draws "\r<line>" on stderr when it is a
 * terminal, at most every PROGRESS_INTERVAL_NS, with the rate and the time
 * left at that rate. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report_cli.h"

#define PROGRESS_INTERVAL_NS 250000000ull

int cli_quiet;

static struct {
    int on, drawn; /* drawn: 1 the reading line, 2 a progress line */
    char label[96];
    uint64_t t0, last; /* t0: the trace read, the writing starts */
    uint64_t calls;           /* of the trace: the writers' units may be more (device slices) */
} progress;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* n as "950", "12.3 k", "10.0 M". */
static const char *human(char *buf, size_t len, double n)
{
    if (n >= 1e6)
        snprintf(buf, len, "%.1f M", n / 1e6);
    else if (n >= 1e4)
        snprintf(buf, len, "%.1f k", n / 1e3);
    else
        snprintf(buf, len, "%.0f", n);
    return buf;
}

static void progress_draw(uint64_t done, uint64_t total)
{
    uint64_t t = now_ns();
    double secs, rate;
    char line[256], a[32], b[32];
    int n;

    if (progress.drawn > 1 && t - progress.last < PROGRESS_INTERVAL_NS)
        return; /* the first report draws at once */
    progress.last = t;
    if (total == 0 || done > total)
        done = total;
    secs = (double)(t - progress.t0) / 1e9;
    rate = secs > 0 ? (double)done / secs : 0;
    n = snprintf(line, sizeof line, "\r%s: %3.0f%% of %s calls", progress.label,
                 total ? 100.0 * (double)done / (double)total : 100.0, human(a, sizeof a, (double)progress.calls));
    if (rate > 0 && n > 0 && (size_t)n < sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, ", %s calls/s, ETA %.0f s",
                 human(b, sizeof b, rate * (double)progress.calls / (double)total), (double)(total - done) / rate);
    fprintf(stderr, "%s\033[K", line);
    fflush(stderr);
    progress.drawn = 2;
}

void cli_progress_begin(const char *command, const char *trace_path)
{
    const char *base = trace_path ? strrchr(trace_path, '/') : NULL;
    memset(&progress, 0, sizeof progress);
    if (cli_quiet || !isatty(STDERR_FILENO))
        return;
    snprintf(progress.label, sizeof progress.label, "obs-report %s: %.60s", command,
             base ? base + 1 : trace_path ? trace_path : "");
    progress.on = 1;
    /* reading the trace comes first: say so at once */
    fprintf(stderr, "%s: reading\033[K", progress.label);
    fflush(stderr);
    progress.drawn = 1;
    obs_progress_set(progress_draw);
}

void cli_progress_calls(uint64_t calls)
{
    progress.calls = calls;
    progress.t0 = now_ns(); /* the rate counts the writing only */
}

void cli_progress_end(void)
{
    obs_progress_set(NULL);
    if (progress.on && progress.drawn) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    progress.on = 0;
}
