/* Selecting calls of a trace and grouping kernel launches: the filters that
 * obs-report's summary, gaps and top share (--phase, --step, --kernel,
 * --window), and per-kernel-name statistics (nsys cuda_gpu_kern_sum) used by
 * the summary's kernel table, top and compare. Definitions: docs/reports.md. */
#ifndef OBS_TRACE_QUERY_H
#define OBS_TRACE_QUERY_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_reader.h"
#include "trace_stats.h"

/* Which calls to keep. All set fields must match; a zero-initialised
 * filter keeps everything. */
struct obs_call_filter {
    const char *phase;                    /* phase name, exact: obs_phase.phase (or the full range name,
                                             obs_phase.name) of the call's range or an enclosing one; NULL: any */
    const char *phase2;                   /* a second phase name that must match too (per-phase reports
                                             inside a --phase selection); NULL: none */
    uint32_t step;                        /* step number (obs_phase_step of the call's range) */
    int has_step;
    regex_t kernel_re;                    /* POSIX extended regex, searched in the demangled kernel
                                             name; calls that are not kernel launches never match */
    int has_kernel_re;
    const char *kernel_pattern;           /* the regex's text (obs_call_filter_set_kernel), for messages */
    uint64_t t_from, t_to;                /* ns after trace->t_first; the call's host_begin in [t_from, t_to) */
    int has_window;
};

/* Parse "FROM:TO" into f's window. Each side is a number with a unit (ns,
 * us, ms, s; "1.5s", "250ms"), or empty: from the start / to the end
 * ("10ms:", ":300us"). TO must be after FROM. Returns 0, or -1 with a
 * one-line reason in err (f unchanged). */
int obs_call_filter_parse_window(const char *text, struct obs_call_filter *f, char *err, size_t errlen);

/* Compile a kernel regex into f (REG_EXTENDED | REG_NOSUB). Returns 0, or
 * -1 with regerror()'s text in err. */
int obs_call_filter_set_kernel(struct obs_call_filter *f, const char *regex, char *err, size_t errlen);

/* Whether c passes f (f NULL: 1). */
int obs_call_filter_match(const struct obs_trace *t, const struct obs_call *c, const struct obs_call_filter *f);

/* "phase PREFILL, step 3, kernel /^decode/, window 10ms:250ms" ("all calls"
 * for an inactive filter) into buf. */
void obs_call_filter_describe(const struct obs_call_filter *f, char *buf, size_t len);

/* Whether c is in phase name: its range or an enclosing one has that phase
 * name or full range name. */
int obs_call_in_phase(const struct obs_trace *t, const struct obs_call *c, const char *name);

/* Whether f selects anything less than the whole trace. */
int obs_call_filter_active(const struct obs_call_filter *f);

/* Frees the compiled regex (if any); f may be NULL. */
void obs_call_filter_free(struct obs_call_filter *f);

/* Whether calls of this kind (enum obs_call_kind) are timed on the GPU in
 * this trace: some call of that kind has a GPU span. The reports then count
 * GPU spans for that kind, and calls without one are skipped. */
int obs_trace_kind_has_gpu_time(const struct obs_trace *t, unsigned kind);

/* The duration counted for c: its GPU span when gpu_mode, else its host API
 * time. Returns 0 (and leaves *ns) for a call with no GPU span in gpu_mode. */
int obs_call_duration(const struct obs_trace *t, const struct obs_call *c, int gpu_mode, uint64_t *ns);

/* One kernel name's launches. */
struct obs_kernel_stat {
    const char *name;            /* demangled name; "(unnamed kernel, id N)" when the trace has none */
    uint32_t kernel;             /* index into trace->kernels: the first of the ids with this name */
    struct obs_duration_stats st;
    double pct;                  /* st.total / total_ns * 100 */
    char *owned_name;            /* private: storage behind name for unnamed kernels */
};

struct obs_kernel_stats {
    int gpu_time;                /* 1: GPU spans; 0: host API times */
    struct obs_kernel_stat *rows;
    size_t nrows;
    uint64_t total_ns;           /* sum over rows */
    uint64_t launches;           /* sum of st.count */
    uint64_t skipped;            /* launches that passed the filter but have no GPU span (gpu_time) */
};

/* Kernel launches grouped by demangled name, sorted by total time desc, then
 * name. Times are GPU spans when the trace has GPU time for kernels (as the
 * summary decides: obs_trace_kind_has_gpu_time), else host API times. f may
 * be NULL. Returns 0 or -1 (ENOMEM). */
int obs_kernel_stats_compute(const struct obs_trace *t, const struct obs_call_filter *f, struct obs_kernel_stats *out);
void obs_kernel_stats_free(struct obs_kernel_stats *s);

/* The row of a kernel name, or NULL. */
const struct obs_kernel_stat *obs_kernel_stats_find(const struct obs_kernel_stats *s, const char *name);

#endif
