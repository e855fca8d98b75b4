/* The text summary of a trace: see trace_summary.h. Tables are laid out like
 * nsys stats: right-aligned numeric columns two spaces apart, a dashed rule
 * under the header, the name last and left-aligned. */
#include "trace_summary.h"
#include "trace_colls.h"
#include "trace_phases.h"
#include "trace_serving.h"
#include "trace_query.h"
#include "trace_stats.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tables -------------------------------------------------------------------- */

#define MAX_COLS 11

struct table {
    size_t ncols, nrows, cap;
    const char *head[MAX_COLS];
    unsigned left; /* bit c: column c is text, left-aligned */
    char **cells; /* nrows * ncols */
    int failed;
};

static void table_init(struct table *tb, size_t ncols, const char *const *head, unsigned left)
{
    size_t i;
    memset(tb, 0, sizeof *tb);
    tb->ncols = ncols;
    tb->left = left;
    for (i = 0; i < ncols; i++)
        tb->head[i] = head[i];
}

/* Add a row of ncols cells (const char *), copied. */
static void table_row(struct table *tb, ...)
{
    va_list ap;
    size_t i;
    if (tb->failed)
        return;
    if (tb->nrows == tb->cap) {
        size_t cap = tb->cap ? tb->cap * 2 : 16;
        char **p = realloc(tb->cells, cap * tb->ncols * sizeof *p);
        if (p == NULL) {
            tb->failed = 1;
            return;
        }
        tb->cells = p;
        tb->cap = cap;
    }
    va_start(ap, tb);
    for (i = 0; i < tb->ncols; i++) {
        const char *cell = va_arg(ap, const char *);
        char *copy = strdup(cell ? cell : "");
        if (copy == NULL)
            tb->failed = 1;
        tb->cells[tb->nrows * tb->ncols + i] = copy;
    }
    va_end(ap);
    tb->nrows++;
}

static void table_print(struct table *tb, FILE *out)
{
    size_t w[MAX_COLS], r, c, k;
    for (c = 0; c < tb->ncols; c++) {
        w[c] = strlen(tb->head[c]);
        for (r = 0; r < tb->nrows; r++) {
            const char *cell = tb->cells[r * tb->ncols + c];
            size_t n = cell ? strlen(cell) : 0;
            if (n > w[c])
                w[c] = n;
        }
    }
    /* the last column (the name) is left-aligned and not padded */
    for (c = 0; c < tb->ncols; c++) {
        if (c + 1 < tb->ncols)
            fprintf(out, (tb->left >> c) & 1 ? " %-*s " : " %*s ", (int)w[c], tb->head[c]);
        else
            fprintf(out, " %s\n", tb->head[c]);
    }
    for (c = 0; c < tb->ncols; c++) {
        size_t n = c + 1 < tb->ncols ? w[c] : strlen(tb->head[c]);
        fputc(' ', out);
        for (k = 0; k < n; k++)
            fputc('-', out);
        fputs(c + 1 < tb->ncols ? " " : "\n", out);
    }
    for (r = 0; r < tb->nrows; r++)
        for (c = 0; c < tb->ncols; c++) {
            const char *cell = tb->cells[r * tb->ncols + c];
            if (c + 1 < tb->ncols)
                fprintf(out, (tb->left >> c) & 1 ? " %-*s " : " %*s ", (int)w[c], cell ? cell : "");
            else
                fprintf(out, " %s\n", cell ? cell : "");
        }
}

static void table_free(struct table *tb)
{
    size_t i;
    for (i = 0; i < tb->nrows * tb->ncols; i++)
        free(tb->cells[i]);
    free(tb->cells);
}

/* Small formatting helpers into rotating static buffers (one table row's worth). */
static char *fmt_slot(void)
{
    static char slots[MAX_COLS * 2][64];
    static unsigned next;
    return slots[next++ % (MAX_COLS * 2)];
}

static const char *u64s(uint64_t v)
{
    char *b = fmt_slot();
    snprintf(b, 64, "%llu", (unsigned long long)v);
    return b;
}

static const char *f1s(double v)
{
    char *b = fmt_slot();
    snprintf(b, 64, "%.1f", v);
    return b;
}

static const char *f3s(double v)
{
    char *b = fmt_slot();
    snprintf(b, 64, "%.3f", v);
    return b;
}

static const char *f2s(double v)
{
    char *b = fmt_slot();
    snprintf(b, 64, "%.2f", v);
    return b;
}

/* ---- helpers over calls --------------------------------------------------------- */

/* Whether calls of this kind are timed on the GPU in this trace, and the
 * duration counted for a call: trace_query.h. */
#define kind_has_gpu_time obs_trace_kind_has_gpu_time
#define call_time obs_call_duration

/* ---- sections --------------------------------------------------------------------- */

/* OBS_GPU_TIME=steps: what the range spans cover, and how they were
 * counted (trace_reader.h, obs_range_span). */
static void print_steps_header(const struct obs_trace *t, FILE *out)
{
    uint64_t streams[8], relabelled = 0, mixed = 0, container = 0;
    size_t i, j, nstreams = 0;
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *x = &t->range_spans[i];
        relabelled += (x->flags & OBS_RANGE_SPAN_RELABELLED) != 0;
        mixed += (x->flags & OBS_RANGE_SPAN_MIXED) != 0;
        container += (x->flags & OBS_RANGE_SPAN_CONTAINER) != 0;
        for (j = 0; j < nstreams && streams[j] != x->stream; j++)
            ;
        if (j == nstreams && nstreams < sizeof streams / sizeof streams[0])
            streams[nstreams++] = x->stream;
    }
    fprintf(out, "GPU time: steps (an event pair per phase range and stream, not per call); phase range spans: %llu "
                 "on %zu stream%s; missing: %llu%s",
            (unsigned long long)t->nrange_spans, nstreams, nstreams == 1 ? "" : "s",
            (unsigned long long)t->missing_range_spans,
            t->missing_range_spans ? " (ranges with launches on a stream and no span there: the process ended "
                                     "first, or not timed: capturing, a ninth stream, no event; the meta's "
                                     "gpu_time_steps_untimed_* say which)"
                                   : "");
    if (relabelled || mixed)
        fprintf(out, "; counted by the trace's final labels, which differ from the live ranges for %llu: %llu "
                     "for the range they were relabelled into, %llu for none (relabelled into several ranges: "
                     "the time cannot be split)",
                (unsigned long long)(relabelled + mixed), (unsigned long long)relabelled, (unsigned long long)mixed);
    if (container)
        fprintf(out, "; %llu around inner ranges only (DECODE/STEADY), counted through those",
                (unsigned long long)container);
    if (t->orphan_range_spans)
        fprintf(out, "; %llu name no range of the trace (not counted)", (unsigned long long)t->orphan_range_spans);
    fputc('\n', out);
}

/* OBS_CAPTURE's windows as the shim's meta says them (capture_<i>_*,
 * docs/capture.md), and what OBS_RECORD=window left out: a line each. */
static void print_capture(const struct obs_trace *t, FILE *out)
{
    const char *spec = obs_trace_meta(t, "capture"), *outside = obs_trace_meta(t, "record_window_outside_calls");
    const char *record = obs_trace_meta(t, "record");
    unsigned i;
    int any = spec != NULL;
    for (i = 0; i < 8 && !any; i++) {
        char key[32];
        snprintf(key, sizeof key, "capture_%u", i);
        any = obs_trace_meta(t, key) != NULL;
    }
    if (!any)
        return;
    fprintf(out, "Capture windows (OBS_CAPTURE=%s; the profiler started and stopped around each):\n",
            spec != NULL ? spec : "?");
    for (i = 0; i < 8; i++) {
        char key[48];
        const char *w, *v[8];
        static const char *const field[] = {"tid", "generation", "start_ns", "stop_ns", "start", "stop", "end"};
        unsigned k;
        snprintf(key, sizeof key, "capture_%u", i);
        if ((w = obs_trace_meta(t, key)) == NULL)
            continue;
        for (k = 0; k < sizeof field / sizeof field[0]; k++) {
            snprintf(key, sizeof key, "capture_%u_%s", i, field[k]);
            v[k] = obs_trace_meta(t, key);
        }
        if (v[6] != NULL && strcmp(v[6], "never-began") == 0) {
            fprintf(out, "  %s: never began\n", w);
            continue;
        }
        fprintf(out, "  %s: thread %s, generation %s", w, v[0] ? v[0] : "?", v[1] ? v[1] : "?");
        if (v[2] != NULL && v[3] != NULL && strtoull(v[3], NULL, 10) >= strtoull(v[2], NULL, 10))
            fprintf(out, ", %.3f ms", (double)(strtoull(v[3], NULL, 10) - strtoull(v[2], NULL, 10)) / 1e6);
        fprintf(out, "; start %s, stop %s (%s)\n", v[4] ? v[4] : "?", v[5] ? v[5] : "none: still open when the trace ended",
                v[6] ? v[6] : "open");
    }
    if ((record != NULL && strcmp(record, "window") == 0) || outside != NULL)
        fprintf(out, "Recorded: only the calls inside the windows (OBS_RECORD=window); %s calls outside them were "
                     "not recorded\n",
                outside != NULL ? outside : "0");
}

static void print_header(const struct obs_trace *t, FILE *out)
{
    const char *exe = obs_trace_meta(t, "exe");
    const char *cmdline = obs_trace_meta(t, "cmdline");
    uint64_t dur = t->t_last > t->t_first ? t->t_last - t->t_first : 0;
    fprintf(out, "obsshim: %s: pid %u, duration %.3f ms, %llu records, %llu records lost\n", t->path, t->pid,
            (double)dur / 1e6, (unsigned long long)t->ncalls, (unsigned long long)t->records_lost);
    if (cmdline && cmdline[0])
        fprintf(out, "command: %s\n", cmdline);
    else if (exe && exe[0])
        fprintf(out, "command: %s\n", exe);
    if (t->records_lost) {
        uint64_t by_reason[OBS_LOST_REASONS] = {0};
        size_t i;
        int first = 1;
        for (i = 0; i < t->nlost; i++)
            by_reason[t->lost[i].reason < OBS_LOST_REASONS ? t->lost[i].reason : 0] += t->lost[i].count;
        fprintf(out, "records lost:");
        for (i = 1; i <= OBS_LOST_REASONS; i++) {
            unsigned r = i % OBS_LOST_REASONS; /* 1, 2, 3, 4, then 0 (other) */
            if (by_reason[r]) {
                fprintf(out, "%s %llu %s", first ? "" : ",", (unsigned long long)by_reason[r],
                        obs_lost_reason_name(r));
                first = 0;
            }
        }
        fputc('\n', out);
    }
    if (obs_trace_unclosed(t)) {
        /* Written by the shim, never closed by it: SIGKILL, or a crash it
         * could not catch, or still running. One line for all of it. */
        char note[320];
        fprintf(out, "warning: %s: %s\n", t->path, obs_trace_unclosed_note(t, note, sizeof note));
    } else if (t->ignored_bytes) {
        fprintf(out,
                "warning: %s: %llu bytes at offset %llu ignored (%s); the records before them were read%s\n",
                t->path, (unsigned long long)t->ignored_bytes, (unsigned long long)t->ignored_offset,
                t->ignored_reason,
                t->ignored_offset + t->ignored_bytes < t->file_bytes ? ", and the chunks after them" : "");
    }
    if (t->orphan_gpu_spans)
        fprintf(out, "warning: %llu GPU time records name calls missing from the trace\n",
                (unsigned long long)t->orphan_gpu_spans);
    if (t->flags & OBS_FILE_GPU_TIME) {
        /* The mode the shim used (the last gpu_time in the meta: a fallback rewrites it). */
        const char *mode = obs_trace_meta(t, "gpu_time");
        const char *fallback = obs_trace_meta(t, "gpu_time_fallback");
        int cupti;
        if (mode == NULL || strcmp(mode, "off") == 0)
            mode = "events";
        cupti = strcmp(mode, "cupti") == 0;
        fprintf(out, "GPU time: %s%s%s%s; calls with GPU spans: %llu; GPU spans missing: %llu%s", mode,
                fallback ? " (" : "", fallback ? fallback : "", fallback ? ")" : "", (unsigned long long)t->ngpu,
                (unsigned long long)t->missing_gpu_spans,
                !t->missing_gpu_spans ? ""
                : cupti ? " (timed calls whose CUPTI records never came: the process ended first, or CUPTI "
                          "dropped them)"
                        : " (timed calls whose events never completed or could not be read: the process ended "
                          "first, or the runtime failed)");
        if (t->no_work_gpu_calls)
            fprintf(out, "; calls with no device work: %llu (captured into a graph, or empty)",
                    (unsigned long long)t->no_work_gpu_calls);
        fputc('\n', out);
    }
    if ((t->flags & OBS_FILE_GPU_STEPS) || t->nrange_spans || t->orphan_range_spans)
        print_steps_header(t, out);
    print_capture(t, out);
}

/* Brief: the OBS_SUMMARY_BRIEF_KERNELS names with the most time (the stats
 * come sorted by total time) and the rest in one row, the launches left out
 * said in the title; a fold of one row would save nothing, so it is shown. */
static int print_kernels(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f, int brief)
{
    static const char *const head[] = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)",
                                       "Min (ns)", "Max (ns)",        "StdDev (ns)", "Name"};
    struct obs_kernel_stats ks;
    struct table tb;
    size_t i, shown;

    if (obs_kernel_stats_compute(t, f, &ks) != 0)
        return -1;
    shown = brief && ks.nrows > OBS_SUMMARY_BRIEF_KERNELS + 1 ? OBS_SUMMARY_BRIEF_KERNELS : ks.nrows;
    fprintf(out, "\nKernels (%s", ks.gpu_time                       ? "GPU time"
                                   : (t->flags & OBS_FILE_GPU_STEPS) ? "host API time: OBS_GPU_TIME=steps times phase "
                                                                       "ranges, not kernels"
                                                                     : "host API time: the trace has no GPU time for "
                                                                       "kernels");
    if (shown < ks.nrows)
        fprintf(out, "; the %zu of %zu names with the most time, the rest in one row", shown, ks.nrows);
    if (brief && ks.skipped)
        fprintf(out, "; launches without GPU time, not counted: %llu", (unsigned long long)ks.skipped);
    fprintf(out, ")\n");
    if (ks.nrows == 0) {
        fprintf(out, " no kernel launches recorded\n");
    } else {
        table_init(&tb, 9, head, 0);
        for (i = 0; i < shown; i++) {
            const struct obs_duration_stats *s = &ks.rows[i].st;
            table_row(&tb, f1s(ks.rows[i].pct), u64s(s->total), u64s(s->count), f1s(s->avg), f1s(s->median),
                      u64s(s->min), u64s(s->max), f1s(s->stddev), ks.rows[i].name);
        }
        if (shown < ks.nrows) {
            uint64_t total = 0, count = 0, min = UINT64_MAX, max = 0;
            double pct = 0;
            char name[64];
            for (i = shown; i < ks.nrows; i++) {
                const struct obs_duration_stats *s = &ks.rows[i].st;
                pct += ks.rows[i].pct;
                total += s->total;
                count += s->count;
                if (s->min < min)
                    min = s->min;
                if (s->max > max)
                    max = s->max;
            }
            snprintf(name, sizeof name, "(%zu other kernels)", ks.nrows - shown);
            table_row(&tb, f1s(pct), u64s(total), u64s(count), f1s(count ? (double)total / (double)count : 0.0),
                      "-", u64s(count ? min : 0), u64s(max), "-", name);
        }
        table_print(&tb, out);
        table_free(&tb);
    }
    if (!brief && ks.skipped)
        fprintf(out, " (launches without GPU time, not counted: %llu)\n", (unsigned long long)ks.skipped);
    obs_kernel_stats_free(&ks);
    return 0;
}

static const char *gbps(uint64_t bytes, uint64_t ns)
{
    return ns ? f2s((double)bytes / (double)ns) : "-";
}

/* Copies (by direction; a direction this reader does not know counts as
 * OBS_DIR_COUNT) or memsets (all in [0]) that a filter keeps, with the time
 * base the tables use for that kind. */
struct transfer_sums {
    int gpu_mode;
    uint64_t count[OBS_DIR_COUNT + 1], bytes[OBS_DIR_COUNT + 1], ns[OBS_DIR_COUNT + 1];
    uint64_t counted, skipped; /* skipped: no GPU span in GPU mode */
};

static void sum_transfers(const struct obs_trace *t, const struct obs_call_filter *f, unsigned kind,
                          struct transfer_sums *s)
{
    size_t i;
    memset(s, 0, sizeof *s);
    s->gpu_mode = kind_has_gpu_time(t, kind);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        unsigned d = kind == OBS_KIND_MEMCPY ? obs_call_direction(c) : 0;
        uint64_t x;
        if (c->kind != kind || !obs_call_filter_match(t, c, f))
            continue;
        if (d >= OBS_DIR_COUNT)
            d = OBS_DIR_COUNT;
        if (!call_time(t, c, s->gpu_mode, &x)) {
            s->skipped++;
            continue;
        }
        s->count[d]++;
        s->bytes[d] += c->u.bytes;
        s->ns[d] += x;
        s->counted++;
    }
}

static const char *direction_label(size_t d)
{
    return d == OBS_DIR_NONE ? "unknown" : d == OBS_DIR_COUNT ? "other" : obs_direction_name((unsigned)d);
}

static int print_copies(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    static const char *const head[] = {"Count", "Total Bytes", "Total Time (ns)", "Avg (ns)", "GB/s",
                                       "Direction"};
    struct transfer_sums cs;
    size_t i;
    struct table tb;

    sum_transfers(t, f, OBS_KIND_MEMCPY, &cs);
    fprintf(out, "\nCopies by direction (%s)\n", cs.gpu_mode ? "GPU time" : "host API time");
    if (!cs.counted) {
        fprintf(out, " no copies recorded\n");
    } else {
        table_init(&tb, 6, head, 0);
        for (i = 0; i <= OBS_DIR_COUNT; i++) {
            if (!cs.count[i])
                continue;
            table_row(&tb, u64s(cs.count[i]), u64s(cs.bytes[i]), u64s(cs.ns[i]),
                      f1s((double)cs.ns[i] / (double)cs.count[i]), gbps(cs.bytes[i], cs.ns[i]), direction_label(i));
        }
        table_print(&tb, out);
        table_free(&tb);
    }
    if (cs.skipped)
        fprintf(out, " (copies without GPU time, not counted: %llu)\n", (unsigned long long)cs.skipped);
    return 0;
}

static int print_memsets(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    static const char *const head[] = {"Count", "Total Bytes", "Total Time (ns)", "Avg (ns)", "GB/s", "Name"};
    struct transfer_sums ms;
    struct table tb;

    sum_transfers(t, f, OBS_KIND_MEMSET, &ms);
    fprintf(out, "\nMemsets (%s)\n", ms.gpu_mode ? "GPU time" : "host API time");
    if (!ms.counted) {
        fprintf(out, " no memsets recorded\n");
    } else {
        table_init(&tb, 6, head, 0);
        table_row(&tb, u64s(ms.count[0]), u64s(ms.bytes[0]), u64s(ms.ns[0]),
                  f1s((double)ms.ns[0] / (double)ms.count[0]), gbps(ms.bytes[0], ms.ns[0]), "memset");
        table_print(&tb, out);
        table_free(&tb);
    }
    if (ms.skipped)
        fprintf(out, " (memsets without GPU time, not counted: %llu)\n", (unsigned long long)ms.skipped);
    return 0;
}

/* Brief: copies by direction and memsets in one table (unknown and other
 * directions in one row), what was left out said in the title. */
static int print_transfers_brief(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    static const char *const head[] = {"Count", "Total Bytes", "Total Time (ns)", "Avg (ns)", "GB/s",
                                       "Direction"};
    struct transfer_sums cs, ms;
    int gpu_mode;
    size_t i;
    struct table tb;

    sum_transfers(t, f, OBS_KIND_MEMCPY, &cs);
    sum_transfers(t, f, OBS_KIND_MEMSET, &ms);
    cs.count[OBS_DIR_NONE] += cs.count[OBS_DIR_COUNT];
    cs.bytes[OBS_DIR_NONE] += cs.bytes[OBS_DIR_COUNT];
    cs.ns[OBS_DIR_NONE] += cs.ns[OBS_DIR_COUNT];
    gpu_mode = cs.counted || cs.skipped ? cs.gpu_mode : ms.gpu_mode;
    fprintf(out, "\nCopies by direction and memsets (%s", gpu_mode ? "GPU time" : "host API time");
    if (cs.skipped || ms.skipped)
        fprintf(out, "; without GPU time, not counted: %llu cop%s, %llu memset%s", (unsigned long long)cs.skipped,
                cs.skipped == 1 ? "y" : "ies", (unsigned long long)ms.skipped, ms.skipped == 1 ? "" : "s");
    fprintf(out, ")\n");
    if (!cs.counted && !ms.counted) {
        fprintf(out, " no copies or memsets recorded\n");
        return 0;
    }
    table_init(&tb, 6, head, 0);
    for (i = 0; i < OBS_DIR_COUNT; i++) {
        if (!cs.count[i])
            continue;
        table_row(&tb, u64s(cs.count[i]), u64s(cs.bytes[i]), u64s(cs.ns[i]),
                  f1s((double)cs.ns[i] / (double)cs.count[i]), gbps(cs.bytes[i], cs.ns[i]), direction_label(i));
    }
    if (ms.counted)
        table_row(&tb, u64s(ms.count[0]), u64s(ms.bytes[0]), u64s(ms.ns[0]),
                  f1s((double)ms.ns[0] / (double)ms.count[0]), gbps(ms.bytes[0], ms.ns[0]),
                  ms.gpu_mode == gpu_mode ? "memset" : ms.gpu_mode ? "memset (GPU time)" : "memset (host API time)");
    table_print(&tb, out);
    table_free(&tb);
    return 0;
}

struct api_row {
    unsigned api;
    uint64_t calls, ns;
};

static int cmp_api_row(const void *a, const void *b)
{
    const struct api_row *x = a, *y = b;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    return strcmp(obs_api_name(x->api), obs_api_name(y->api));
}

/* Brief: the OBS_SUMMARY_BRIEF_APIS most called and the rest in one row;
 * one fewer when the trace has NCCL calls, whose line follows the graph
 * launches' (the section keeps its lines). */
static int print_apis(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f, int brief)
{
    static const char *const head[] = {"Calls", "Total Time (ns)", "Avg (ns)", "Kind", "Name"};
    struct api_row rows[OBS_API_COUNT + 1];
    size_t i, n = 0, shown, most = OBS_SUMMARY_BRIEF_APIS - (t->ncolls > 0);
    struct table tb;

    memset(rows, 0, sizeof rows);
    for (i = 0; i <= OBS_API_COUNT; i++)
        rows[i].api = (unsigned)i;
    for (i = 0; i < t->ncalls; i++) {
        unsigned api = t->calls[i].api < OBS_API_COUNT ? t->calls[i].api : OBS_API_COUNT;
        if (!obs_call_filter_match(t, &t->calls[i], f))
            continue;
        rows[api].calls++;
        rows[api].ns += t->calls[i].host_end - t->calls[i].host_begin;
    }
    for (i = 0; i <= OBS_API_COUNT; i++)
        if (rows[i].calls)
            rows[n++] = rows[i];
    qsort(rows, n, sizeof *rows, cmp_api_row);
    shown = brief && n > most + 1 ? most : n;
    fprintf(out, "\nAPI calls (host time");
    if (shown < n)
        fprintf(out, "; the %zu of %zu most called, the rest in one row", shown, n);
    fprintf(out, ")\n");
    if (n == 0) {
        fprintf(out, " no calls recorded\n");
        return 0;
    }
    table_init(&tb, 5, head, 1u << 3);
    for (i = 0; i < shown; i++)
        table_row(&tb, u64s(rows[i].calls), u64s(rows[i].ns), f1s((double)rows[i].ns / (double)rows[i].calls),
                  obs_call_kind_name(obs_api_kind(rows[i].api)), obs_api_name(rows[i].api));
    if (shown < n) {
        uint64_t calls = 0, ns = 0;
        char name[64];
        for (i = shown; i < n; i++) {
            calls += rows[i].calls;
            ns += rows[i].ns;
        }
        snprintf(name, sizeof name, "(%zu other APIs)", n - shown);
        table_row(&tb, u64s(calls), u64s(ns), f1s((double)ns / (double)calls), "-", name);
    }
    table_print(&tb, out);
    table_free(&tb);
    return 0;
}

/* One row per graph exec launched (launches of an exec the trace does not
 * describe share a row with exec "?"): its kernels by name, as walked. */
struct graph_row {
    uint32_t id;
    uint64_t launches, ns, nodes;
};

static int cmp_graph_row(const void *a, const void *b)
{
    const struct graph_row *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* "name x127, name2 x127" (malloc'ed), "" when the exec's kernels are unknown. */
static const char *graph_kernel_name(const struct obs_trace *t, const struct obs_graph_kernel *k)
{
    const char *name = k->kernel ? t->kernels[k->kernel].demangled : "";
    return name[0] ? name : "(unnamed)";
}

static char *graph_kernels_text(const struct obs_trace *t, const struct obs_graph *g)
{
    size_t i, len = 1;
    char *text, *p;
    /* the same name as printed below: ", " + name + " x" + up to 10 digits */
    for (i = 0; g && i < g->nkernels; i++)
        len += strlen(graph_kernel_name(t, &g->kernels[i])) + 16;
    text = malloc(len);
    if (text == NULL)
        return NULL;
    p = text;
    *p = '\0';
    for (i = 0; g && i < g->nkernels; i++)
        p += sprintf(p, "%s%s x%u", i ? ", " : "", graph_kernel_name(t, &g->kernels[i]), g->kernels[i].count);
    return text;
}

/* The model layers among an exec's kernel nodes (docs/layers.md,
 * "Graphs"): "4 (16 nodes)", "-" when none were found, "" when the trace
 * keeps no node order for it. */
static const char *graph_layers_text(const struct obs_graph *g, char *buf, size_t len)
{
    size_t k, in = 0;
    if (g == NULL || g->nnodes == 0)
        return "";
    if (g->layers == 0)
        return "-";
    for (k = 0; k < g->nnodes; k++)
        in += g->nodes[k].layer != OBS_NO_LAYER;
    snprintf(buf, len, "%u (%zu nodes)", g->layers, in);
    return buf;
}

static int print_graphs(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    static const char *const head[] = {"Exec", "Launches", "Total Time (ns)", "Avg (ns)", "Nodes", "Kernel nodes",
                                       "Layers", "Kernels"};
    int gpu_mode = kind_has_gpu_time(t, OBS_KIND_GRAPH);
    struct graph_row *rows = NULL;
    size_t i, j, n = 0;
    struct table tb;
    int rc = 0;

    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_graph *g;
        uint64_t ns;
        uint32_t id;
        if (c->kind != OBS_KIND_GRAPH || !obs_call_filter_match(t, c, f) || !call_time(t, c, gpu_mode, &ns))
            continue;
        g = obs_call_graph(t, c);
        id = g ? g->id : 0;
        for (j = 0; j < n && rows[j].id != id; j++)
            ;
        if (j == n) {
            struct graph_row *grown = realloc(rows, (n + 1) * sizeof *rows);
            if (grown == NULL) {
                free(rows);
                return -1;
            }
            rows = grown;
            memset(&rows[n], 0, sizeof rows[n]);
            rows[n].id = id;
            n++;
        }
        rows[j].launches++;
        rows[j].ns += ns;
        if (c->u.bytes > rows[j].nodes)
            rows[j].nodes = c->u.bytes;
    }
    if (n == 0)
        return 0;
    qsort(rows, n, sizeof *rows, cmp_graph_row);
    fprintf(out, "\nGraph launches (%s; nodes and kernels as walked when the exec was instantiated)\n",
            gpu_mode ? "GPU time" : "host API time");
    table_init(&tb, 8, head, 0);
    for (i = 0; i < n && rc == 0; i++) {
        const struct obs_graph *g = rows[i].id ? obs_trace_graph(t, rows[i].id) : NULL;
        char *kernels = graph_kernels_text(t, g), layers[48];
        if (kernels == NULL) {
            rc = -1;
            break;
        }
        table_row(&tb, g ? u64s(g->id) : "?", u64s(rows[i].launches), u64s(rows[i].ns),
                  f1s((double)rows[i].ns / (double)rows[i].launches), u64s(g ? g->node_count : rows[i].nodes),
                  g ? u64s(g->kernel_count) : "", graph_layers_text(g, layers, sizeof layers), kernels);
        free(kernels);
    }
    if (rc == 0 && !tb.failed)
        table_print(&tb, out);
    else
        rc = -1;
    table_free(&tb);
    free(rows);
    return rc;
}

/* Brief: the graph launches in one line under the API table. */
static int print_graphs_brief(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    int gpu_mode = kind_has_gpu_time(t, OBS_KIND_GRAPH);
    uint32_t *ids = NULL;
    size_t i, j, nids = 0, launches = 0, skipped = 0;
    uint64_t ns = 0;

    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_graph *g;
        uint64_t x;
        uint32_t id;
        if (c->kind != OBS_KIND_GRAPH || !obs_call_filter_match(t, c, f))
            continue;
        if (!call_time(t, c, gpu_mode, &x)) {
            skipped++;
            continue;
        }
        launches++;
        ns += x;
        g = obs_call_graph(t, c);
        id = g ? g->id : 0;
        for (j = 0; j < nids && ids[j] != id; j++)
            ;
        if (j == nids) {
            uint32_t *grown = realloc(ids, (nids + 1) * sizeof *ids);
            if (grown == NULL) {
                free(ids);
                return -1;
            }
            ids = grown;
            ids[nids++] = id;
        }
    }
    free(ids);
    if (launches == 0 && skipped == 0)
        return 0;
    fprintf(out, "Graph launches (%s): %zu launch%s of %zu exec%s, %llu ns, avg %.1f ns",
            gpu_mode ? "GPU time" : "host API time", launches, launches == 1 ? "" : "es", nids, nids == 1 ? "" : "s",
            (unsigned long long)ns, launches ? (double)ns / (double)launches : 0.0);
    if (skipped)
        fprintf(out, "; without GPU time, not counted: %zu", skipped);
    fprintf(out, " (per exec: obs-report summary)\n");
    return 0;
}

/* NCCL: per operation the calls, the data they move (nccl-tests' size,
 * trace_colls.h), their host time (the call's span: a collective outside a
 * group launches its kernels in it, one inside a group in the ncclGroupEnd
 * that closes it) and the kernels they launched; brief: one line. */
struct coll_row {
    unsigned op;
    uint64_t calls, bytes, ns, kernels;
};

static int print_collectives(const struct obs_trace *t, FILE *out, int brief)
{
    static const char *const head[] = {"Calls", "Total Bytes", "Total Time (ns)", "Avg (ns)", "Kernels", "Op"};
    struct coll_row rows[OBS_COLL_COUNT];
    uint64_t calls = 0, bytes = 0, ns = 0, grouped = 0;
    uint32_t comms = 0;
    struct table tb;
    size_t i;
    int rc = 0;

    if (t->ncolls == 0)
        return 0;
    memset(rows, 0, sizeof rows);
    for (i = 0; i < t->ncolls; i++) {
        const struct obs_coll *c = &t->colls[i];
        struct coll_row *r = &rows[c->op < OBS_COLL_COUNT ? c->op : 0];
        uint64_t d = c->host_end - c->host_begin;
        r->op = c->op;
        r->calls++;
        r->bytes += c->bytes;
        r->ns += d;
        if (c->group_end == OBS_NONE)
            r->kernels += c->kernels; /* a grouped call's are its group's: counted once, at its ncclGroupEnd */
        if (obs_coll_is_op(c->op)) {
            calls++;
            bytes += c->bytes;
            ns += d;
            grouped += c->group > 0;
        }
    }
    for (i = 0; i < t->ncomms; i++)
        comms += t->comms[i].made == i && t->comms[i].id != 0;
    if (brief) {
        fprintf(out,
                "Collectives (NCCL, host API time): %llu call%s (%llu in groups) on %u communicator%s, %llu bytes, "
                "%llu ns (per operation: obs-report summary)\n",
                (unsigned long long)calls, calls == 1 ? "" : "s", (unsigned long long)grouped, comms,
                comms == 1 ? "" : "s", (unsigned long long)bytes, (unsigned long long)ns);
        return 0;
    }
    fprintf(out, "\nCollectives (NCCL, host API time; %u communicator%s; bytes as nccl-tests sizes them)\n", comms,
            comms == 1 ? "" : "s");
    table_init(&tb, 6, head, 1u << 5);
    for (i = 1; i < OBS_COLL_COUNT; i++) {
        if (rows[i].calls == 0)
            continue;
        table_row(&tb, u64s(rows[i].calls), obs_coll_is_op((unsigned)i) ? u64s(rows[i].bytes) : "",
                  u64s(rows[i].ns), f1s((double)rows[i].ns / (double)rows[i].calls), u64s(rows[i].kernels),
                  obs_coll_op_name((unsigned)i));
    }
    if (!tb.failed)
        table_print(&tb, out);
    else
        rc = -1;
    table_free(&tb);
    return rc;
}

static const char *ms3(uint64_t ns)
{
    char *b = fmt_slot();
    snprintf(b, 64, "%.3f", (double)ns / 1e6);
    return b;
}

static const char *phase_time(const struct obs_phase_row *r)
{
    return r->timed ? u64s(r->time_ns) : "-";
}

/* A generation's name in the tables: its number, with its thread's id
 * when generations of several threads are shown (each thread counts its own). */
/* Whether the generations come from more than one thread (then their
 * labels name the thread). Once per table: a damaged trace may have as
 * many generations as records. */
static int generations_multithread(const struct obs_phase_stats *s)
{
    size_t i;
    for (i = 1; i < s->ngens; i++)
        if (s->gens[i].thread != s->gens[0].thread)
            return 1;
    return 0;
}

static const char *generation_label(int multithread, const struct obs_generation_row *g)
{
    char *buf;
    if (!multithread)
        return u64s(g->generation);
    buf = fmt_slot();
    snprintf(buf, 64, "%u (tid %u)", g->generation, g->thread);
    return buf;
}

/* Phase tables (see trace_phases.h for the definitions). */
static int print_phases(const struct obs_trace *t, FILE *out)
{
    static const char *const head_p[] = {"Time (ns)", "Ranges", "Calls", "Launches", "Kernels", "Bytes", "Phase"};
    static const char *const head_g[] = {"Generation", "Time (ns)", "Ranges", "Calls", "Launches",
                                         "Kernels",    "Bytes",     "Phase"};
    static const char *const head_t[] = {"Generation", "Prefill (ms)", "First decode (ms)", "TTFT (ms)",
                                         "First token", "Decode steps", "Steady (ms)", "Steps/s", "Seqs",
                                         "Tokens/s",   "TTFT to"};
    struct obs_phase_stats s;
    struct table tb;
    const char *base;
    size_t i, serving = 0;
    int one_step = 0, multithread;

    if (t->nphases == 0) {
        fprintf(out, "\nPhases: none recorded (the trace has no PHASE records)\n");
        return 0;
    }
    if (obs_phase_stats_compute(t, &s) != 0)
        return -1;
    base = s.gpu_steps ? "GPU time per phase range and stream (OBS_GPU_TIME=steps)"
           : s.gpu_time ? "GPU time"
                        : "host API time: the trace has no GPU time";
    fprintf(out, "\nPhases (%s; a phase's time is the sum over its ranges of first call begin to last call end)\n",
            base);
    if (s.nphases == 0) {
        fprintf(out, " no calls inside phases\n");
        obs_phase_stats_free(&s);
        return 0;
    }
    table_init(&tb, 7, head_p, 0);
    for (i = 0; i < s.nphases; i++) {
        char buf[32];
        const struct obs_phase_row *r = &s.phases[i];
        table_row(&tb, phase_time(r), u64s(r->ranges), u64s(r->calls), u64s(r->launches), u64s(r->kernels),
                  u64s(r->bytes), obs_phase_row_name(r, buf, sizeof buf));
    }
    table_print(&tb, out);
    table_free(&tb);
    if (s.unlabelled_calls)
        fprintf(out, " (calls outside any phase: %llu)\n", (unsigned long long)s.unlabelled_calls);

    fprintf(out, "\nPhases by generation (%s)\n", s.gpu_time ? "GPU time" : "host API time");
    table_init(&tb, 8, head_g, 0);
    for (i = 0; i < s.nby_gen; i++) {
        char buf[32];
        const struct obs_phase_row *r = &s.by_gen[i];
        table_row(&tb, u64s(r->generation), phase_time(r), u64s(r->ranges), u64s(r->calls), u64s(r->launches),
                  u64s(r->kernels), u64s(r->bytes), obs_phase_row_name(r, buf, sizeof buf));
    }
    table_print(&tb, out);
    table_free(&tb);

    fprintf(out, "\nGenerations (%s)\n", s.gpu_time ? "GPU time" : "host wall-clock between host syncs");
    fprintf(out, " first token 'prefill': the prompt's own token; TTFT = the prompt's first call to the end of the "
                 "PREFILL's token read; steps/s = decode steps / time from there to the last step's token read; "
                 "tokens/s = steps/s x sequences per step (from the read sizes)\n");
    if (s.gpu_time)
        fprintf(out, " first token 'step0' (the prefill reads no token): tokens/s = (N_decode - 1) / "
                     "T_decode_after_first; TTFT to 'forward-end (device)' (step 0 reads no token either, the "
                     "program reads something back: the first token is the prompt's, not read) = the prompt's first "
                     "call to the device end of the prompt's forward; to 'step0-end' = T_prefill + T_first_decode\n");
    else
        fprintf(out, " first token 'step0' (the prefill reads no token): tokens/s = (N_decode - 1) / time from step "
                     "0's last sync or token copy to the last step's; TTFT to 'forward-end (next delimiter)' (step 0 "
                     "reads no token either, the program reads something back: the first token is the prompt's, not "
                     "read) = the prompt's first call to the end of the sync or copy that ends the prompt's forward; "
                     "to 'step0-end' = to the end of step 0's last sync or token copy\n");
    table_init(&tb, 11, head_t, 0);
    multithread = generations_multithread(&s);
    for (i = 0; i < s.ngens; i++) {
        const struct obs_generation_row *g = &s.gens[i];
        char seqs[16];
        if (!g->tokens_defined && g->decode_steps < 2 && strcmp(g->first_token, "step0") == 0)
            one_step = 1;
        serving += g->serving;
        snprintf(seqs, sizeof seqs, "%u", g->sequences);
        table_row(&tb, generation_label(multithread, g), g->has_prefill ? ms3(g->prefill_ns) : "-",
                  g->has_first_decode ? ms3(g->first_decode_ns) : "-", g->ttft_defined ? f3s(g->ttft_ms) : "-",
                  g->first_token, u64s(g->decode_steps), g->has_steady ? ms3(g->steady_ns) : "-",
                  g->steps_defined ? f2s(g->steps_per_s) : "n/a", seqs,
                  g->tokens_defined ? f2s(g->tokens_per_s) : "n/a", g->ttft_to);
    }
    table_print(&tb, out);
    table_free(&tb);
    if (one_step)
        fprintf(out, " (n/a: a generation with fewer than two decode steps has no steady tokens/s)\n");
    if (serving)
        fprintf(out, " (first token 'serving': %zu generation%s of a serving loop, one ITERATION/k range per forward "
                     "over a changing batch: no per-request TTFT, steps or tokens/s here, and not counted in the "
                     "bests; the serving section below and obs-report serving have its iterations)\n",
                serving, serving == 1 ? "" : "s");
    fprintf(out, "Best TTFT: ");
    if (s.has_best_ttft)
        fprintf(out, "%.3f ms (generation %u)", s.best_ttft_ms, s.best_ttft_generation);
    else
        fprintf(out, "n/a");
    fprintf(out, "; best tokens/s: ");
    if (s.has_best_tokens)
        fprintf(out, "%.2f (generation %u)", s.best_tokens_per_s, s.best_tokens_generation);
    else
        fprintf(out, "n/a");
    fprintf(out, "; over %zu generation%s%s\n", s.best_over, s.best_over == 1 ? "" : "s",
            s.best_over + s.serving_gens < s.ngens ? " with at least two decode steps" : "");
    if (s.unbounded_steps)
        fprintf(out, " (n/a: in %zu generation%s no host sync or token copy bounds the decode steps, so host time "
                     "cannot tell when they ran; OBS_GPU_TIME=steps measures them on the GPU)\n",
                s.unbounded_steps, s.unbounded_steps == 1 ? "" : "s");
    if (s.unbounded_forwards)
        fprintf(out, " (TTFT n/a: in %zu generation%s no host sync or copy from the device ends the prompt's "
                     "forward before the next step's launches, so host time cannot tell when it ended; "
                     "OBS_GPU_TIME=steps measures it on the GPU)\n",
                s.unbounded_forwards, s.unbounded_forwards == 1 ? "" : "s");
    if (t->bad_phase_records)
        fprintf(out, "warning: %llu PHASE records could not be used (unknown event, END with nothing open, "
                     "an empty RELABEL, or nested more than 256 deep)\n",
                (unsigned long long)t->bad_phase_records);
    obs_phase_stats_free(&s);
    return obs_report_serving_section(t, out, 0);
}

/* Brief: the phases over all generations (the OBS_SUMMARY_BRIEF_PHASES
 * with the most time, in order of first call, and the rest in one row),
 * then one block for all generations: their count and the best, median and
 * p90 of TTFT and tokens/s (trace_phases.h, obs_generation_spread). */
/* Where the generations' TTFT ended (trace_phases.h, ttft_to), the end of
 * the TTFT line: "; N of M ..." for each definition used, with its word. */
static void print_first_token_definitions(const struct obs_phase_stats *s, FILE *out)
{
    static const struct {
        const char *ttft_to, *text;
    } defs[] = {
        {OBS_TTFT_TO_TOKEN_READ, "from the prompt's first call to the end of its token read (first token: the "
                                 "prompt's own)"},
        {OBS_TTFT_TO_FORWARD_DEVICE, "from the prompt's first call to the device end of the prompt's forward (the "
                                     "prefill reads no token; ttft_to forward-end (device))"},
        {OBS_TTFT_TO_FORWARD_DELIMITER, "from the prompt's first call to the end of the sync or copy that ends the "
                                        "prompt's forward (the prefill reads no token; ttft_to forward-end (next "
                                        "delimiter))"},
        {OBS_TTFT_TO_STEP0, "T_prefill + T_first_decode (the prefill reads no token)"},
        {OBS_TTFT_TO_SERVING, "none: a serving loop's iterations, no per-request TTFT (not counted)"},
    };
    size_t i, d;
    for (d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        size_t n = 0;
        for (i = 0; i < s->ngens; i++)
            n += strcmp(s->gens[i].ttft_to, defs[d].ttft_to) == 0;
        if (n == 0)
            continue;
        fprintf(out, "; %zu of %zu %s", n, s->ngens, defs[d].text);
    }
    fputc('\n', out);
}

static int print_phases_brief(const struct obs_trace *t, FILE *out)
{
    static const char *const head[] = {"Time (ns)", "Ranges", "Calls", "Launches", "Kernels", "Bytes", "Phase"};
    struct obs_phase_stats s;
    struct obs_generation_spread sp;
    struct obs_phase_row rest;
    unsigned char *keep;
    struct table tb;
    size_t i, k, shown;

    if (obs_phase_stats_compute(t, &s) != 0)
        return -1;
    keep = calloc(s.nphases ? s.nphases : 1, 1);
    if (keep == NULL || obs_generation_spread_compute(&s, &sp) != 0) {
        free(keep);
        obs_phase_stats_free(&s);
        return -1;
    }
    shown = s.nphases > OBS_SUMMARY_BRIEF_PHASES + 1 ? OBS_SUMMARY_BRIEF_PHASES : s.nphases;
    for (k = 0; k < shown; k++) { /* pick the next with the most time (timed first), then calls */
        size_t best = s.nphases;
        for (i = 0; i < s.nphases; i++) {
            const struct obs_phase_row *r = &s.phases[i], *b = best < s.nphases ? &s.phases[best] : NULL;
            if (keep[i])
                continue;
            if (b == NULL || r->timed > b->timed || (r->timed == b->timed && r->time_ns > b->time_ns) ||
                (r->timed == b->timed && r->time_ns == b->time_ns && r->calls > b->calls))
                best = i;
        }
        keep[best] = 1;
    }
    fprintf(out, "\nPhases over all generations (%s", s.gpu_time ? "GPU time" : "host API time");
    if (shown < s.nphases)
        fprintf(out, "; the %zu of %zu with the most time, the rest in one row", shown, s.nphases);
    if (s.unlabelled_calls)
        fprintf(out, "; calls outside any phase: %llu", (unsigned long long)s.unlabelled_calls);
    if (t->bad_phase_records)
        fprintf(out, "; PHASE records not used: %llu", (unsigned long long)t->bad_phase_records);
    fprintf(out, ")\n");
    if (s.nphases == 0) {
        fprintf(out, " no calls inside phases\n");
    } else {
        memset(&rest, 0, sizeof rest);
        table_init(&tb, 7, head, 0);
        for (i = 0; i < s.nphases; i++) {
            char buf[32];
            const struct obs_phase_row *r = &s.phases[i];
            if (!keep[i]) {
                rest.time_ns += r->timed ? r->time_ns : 0;
                rest.timed |= r->timed;
                rest.ranges += r->ranges;
                rest.calls += r->calls;
                rest.launches += r->launches;
                rest.kernels += r->kernels;
                rest.bytes += r->bytes;
                continue;
            }
            table_row(&tb, phase_time(r), u64s(r->ranges), u64s(r->calls), u64s(r->launches), u64s(r->kernels),
                      u64s(r->bytes), obs_phase_row_name(r, buf, sizeof buf));
        }
        if (shown < s.nphases) {
            char name[64];
            snprintf(name, sizeof name, "(%zu other phases)", s.nphases - shown);
            table_row(&tb, phase_time(&rest), u64s(rest.ranges), u64s(rest.calls), u64s(rest.launches),
                      u64s(rest.kernels), u64s(rest.bytes), name);
        }
        table_print(&tb, out);
        table_free(&tb);
    }
    if (s.ngens > s.serving_gens) { /* a serving loop's generations have the serving line below */
        /* host time: n/a where no delimiter bounds the steps (trace_phases.h) */
        const char *why_na = s.unbounded_steps ? " (no host sync or token copy bounds the decode steps; "
                                                 "OBS_GPU_TIME=steps measures them on the GPU)"
                                               : "";
        fprintf(out, "\nGenerations (%s): %zu", s.gpu_time ? "GPU time" : "host wall-clock between host syncs",
                s.ngens);
        if (s.serving_gens) /* its serving lines would not fit the brief's lines: a pointer */
            fprintf(out, " (%zu of a serving loop, not counted: obs-report serving)", s.serving_gens);
        fprintf(out, "; best / median / p90 over ");
        if (s.best_over + s.serving_gens < s.ngens)
            fprintf(out, "the %zu with at least two decode steps", s.best_over);
        else
            fprintf(out, "all");
        fprintf(out, " (per generation: obs-report phases)\n");
        if (sp.ttft_n)
            fprintf(out, " TTFT (ms): best %.3f (generation %u), median %.3f, p90 %.3f", sp.ttft_best_ms,
                    s.best_ttft_generation, sp.ttft_median_ms, sp.ttft_p90_ms);
        else
            fprintf(out, " TTFT (ms): n/a%s",
                    s.unbounded_forwards ? " (no host sync or copy from the device ends the prompt's forward before "
                                           "the next step's launches; OBS_GPU_TIME=steps measures it on the GPU)"
                                         : why_na);
        print_first_token_definitions(&s, out);
        for (i = 0; i < s.ngens && s.gens[i].sequences <= 1; i++)
            ;
        if (sp.tokens_n)
            fprintf(out, " tokens/s: best %.2f (generation %u), median %.2f, p90 %.2f%s\n", sp.tokens_best,
                    s.best_tokens_generation, sp.tokens_median, sp.tokens_p90,
                    i < s.ngens ? "; steps/s x sequences per step where the read sizes tell them" : "");
        else
            fprintf(out, " tokens/s: n/a%s\n",
                    s.unbounded_steps ? why_na : " (no generation with at least two decode steps)");
    }
    free(keep);
    if (s.ngens > 0 && s.serving_gens == s.ngens) { /* in the Generations block's lines */
        obs_phase_stats_free(&s);
        return obs_report_serving_section(t, out, 1);
    }
    obs_phase_stats_free(&s);
    return 0;
}

int obs_report_phase_tables(const struct obs_trace *t, FILE *out)
{
    print_capture(t, out);
    if (print_phases(t, out) != 0) {
        errno = ENOMEM;
        return -1;
    }
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* Full: a section at the end; brief: a line of the header. */
static void print_self_cost(const struct obs_trace *t, FILE *out, int brief)
{
    if (!brief)
        fputc('\n', out);
    if (t->self_calls == 0) {
        fprintf(out, "Shim cost: not measured\n");
        return;
    }
    /* per call: the one-time work apart (traces before issue 36 do not tell it apart: 0) */
    fprintf(out, "Shim cost: %.1f ns per recorded call (%llu calls on %zu thread%s",
            (double)(t->self_ns - t->self_once_ns) / (double)t->self_calls, (unsigned long long)t->self_calls,
            t->nself_cost, t->nself_cost == 1 ? "" : "s");
    if (t->self_once_ns > 0)
        fprintf(out, "), and %.1f ms once (set-up, first uses", (double)t->self_once_ns / 1e6);
    fprintf(out, ")\n");
}

/* What a filter keeps, and how many calls that is. The phase tables stay
 * those of the whole trace (TTFT needs every call of a generation). */
static void print_selection(const struct obs_trace *t, FILE *out, const struct obs_call_filter *f)
{
    size_t i, kept = 0;
    char text[512];

    for (i = 0; i < t->ncalls; i++)
        kept += obs_call_filter_match(t, &t->calls[i], f);
    obs_call_filter_describe(f, text, sizeof text);
    fprintf(out, "selection: %s: %zu of %zu calls (phase tables: the whole trace)\n", text, kept, t->ncalls);
}

int obs_report_summary(const struct obs_trace *t, FILE *out, const struct obs_summary_options *opt)
{
    return obs_report_summary_filtered(t, out, opt, NULL);
}

int obs_report_summary_filtered(const struct obs_trace *t, FILE *out, const struct obs_summary_options *opt,
                                const struct obs_call_filter *f)
{
    unsigned want = opt && opt->sections ? opt->sections : ~0u;
    int brief = opt && opt->brief;
    int rc = 0;

    if (want & OBS_SUMMARY_HEADER) {
        print_header(t, out);
        if (obs_call_filter_active(f))
            print_selection(t, out, f);
    }
    if (brief && (want & OBS_SUMMARY_SELF_COST))
        print_self_cost(t, out, 1);
    if (rc == 0 && (want & OBS_SUMMARY_KERNELS))
        rc = print_kernels(t, out, f, brief);
    if (rc == 0 && brief && (want & (OBS_SUMMARY_COPIES | OBS_SUMMARY_MEMSETS)))
        rc = print_transfers_brief(t, out, f);
    if (rc == 0 && !brief && (want & OBS_SUMMARY_COPIES))
        rc = print_copies(t, out, f);
    if (rc == 0 && !brief && (want & OBS_SUMMARY_MEMSETS))
        rc = print_memsets(t, out, f);
    if (rc == 0 && (want & OBS_SUMMARY_APIS))
        rc = print_apis(t, out, f, brief);
    if (rc == 0 && (want & OBS_SUMMARY_GRAPHS))
        rc = brief ? print_graphs_brief(t, out, f) : print_graphs(t, out, f);
    if (rc == 0 && (want & OBS_SUMMARY_COLLECTIVES))
        rc = print_collectives(t, out, brief);
    if (rc == 0 && (want & OBS_SUMMARY_PHASES) && t->nphases)
        rc = brief ? print_phases_brief(t, out) : print_phases(t, out);
    if (rc == 0 && !brief && (want & OBS_SUMMARY_SELF_COST))
        print_self_cost(t, out, 0);
    if (rc != 0) {
        errno = ENOMEM;
        return -1;
    }
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}
