/* The fuzz body of tests/fuzz/trace_fuzz.c: a trace read from bytes in
 * memory (obs_trace_load), its model checked, and the reports of
 * obs-report run on it with their output thrown away. Also replayed by
 * tests/t_trace_fuzz over the kept corpora. Aborts on a broken invariant. */
#ifndef OBS_TRACE_FUZZ_H
#define OBS_TRACE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* X(id, name): name is the FUZZ_TARGET of `make fuzz-trace` (`-` for `_`). */
#define OBS_FUZZ_TRACE_TARGETS(X)                                                                        \
    X(load, "load")                     /* obs_trace_load and the model's invariants only */           \
    X(summary, "summary")               /* obs_report_summary(_filtered), report_summary in 3 formats */ \
    X(csv, "csv")                       /* obs_report_csv, _collectives, _phases */                    \
    X(json, "json")                     /* obs_report_json, with and without args */                   \
    X(perfetto, "perfetto")             /* obs_report_perfetto, deflated runs */                       \
    X(phases, "phases")                 /* obs_report_phase_tables, _phases_csv, _steps, _serving */    \
    X(suggest_phases, "suggest-phases") /* obs_report_suggest_phases */                                \
    X(gaps, "gaps")                     /* report_gaps in 3 formats, with a filter */                  \
    X(top, "top")                       /* report_top */                                               \
    X(compare, "compare")               /* report_compare A B and B A */                               \
    X(merge, "merge")                   /* the merge command on A and B (memfd paths); ranks of A, B */ \
    X(sqlite, "sqlite")                 /* obs_sqlite_export into :memory: (with libsqlite3) */        \
    X(html, "html")                     /* report_html, one run and two */

enum obs_fuzz_trace_target {
#define OBS_FUZZ_ENUM(id, name) OBS_FUZZ_##id,
    OBS_FUZZ_TRACE_TARGETS(OBS_FUZZ_ENUM)
#undef OBS_FUZZ_ENUM
    OBS_FUZZ_TARGET_COUNT
};
#define OBS_FUZZ_ALL ((1u << OBS_FUZZ_TARGET_COUNT) - 1u) /* the `all` target: load, then every report */

extern const char *const obs_fuzz_trace_names[OBS_FUZZ_TARGET_COUNT];

/* Run the targets in mask (bits 1u << enum obs_fuzz_trace_target) on the
 * input. Trace A is the input; the two-trace reports (compare, merge, html
 * with two runs) take as B the input cut short at a point the input's last
 * byte chooses, which the reader reads as a trace cut by a crash: fewer
 * calls, kernels and phases in one run only. Returns 0. */
int obs_fuzz_trace(const uint8_t *data, size_t size, unsigned mask);

#endif
