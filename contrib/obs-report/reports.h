/* obs-report: the reports behind summary --format, gaps, top, compare and
 * serving --json.
 * Each builds rtables (report_table.h) and prints them in the document's
 * format. Definitions of every column: docs/reports.md. All return 0, or
 * -1 with errno set (out of memory, a write error). */
#ifndef OBS_REPORTS_H
#define OBS_REPORTS_H

#include <stddef.h>

#include "report_table.h"
#include "trace/trace.h"

/* summary: cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,
 * nvtx_kern_sum, generations, bests, api_calls, phases, generation_spread.
 * In table format the summary's text (obs_report_summary_filtered) comes
 * first, then the copy and per-phase kernel tables. */
int report_summary(const struct obs_trace *t, const struct obs_call_filter *f, struct report_doc *d);

/* gaps: device_gaps, launch_gaps, sync_share, launches_per_step. */
int report_gaps(const struct obs_trace *t, const struct obs_call_filter *f, struct report_doc *d);

/* top N: top_kernels, slowest_launches. */
int report_top(const struct obs_trace *t, const struct obs_call_filter *f, size_t n, struct report_doc *d);

/* compare A B: metrics, kernels, only_in_a, only_in_b, phases. */
int report_compare(const struct obs_trace *a, const struct obs_trace *b, struct report_doc *d);

/* serving: serving_summary, serving_by_kind, iterations (trace_serving.h;
 * opt may be NULL). */
int report_serving(const struct obs_trace *t, const struct obs_serving_options *opt, struct report_doc *d);

/* ranks: ranks, rank_skew (the top collectives by skew), collective_ops,
 * steps and, with all_colls, collectives: the ranks of a run side by side
 * (trace_ranks.h; report_ranks.c, docs/ranks.md). */
int report_ranks(const struct obs_ranks *r, size_t top, int all_colls, struct report_doc *d);
#define RANKS_TOP 10 /* rows of rank_skew */

/* The command's work (`ranks`, `summary` of several traces; cmd_ranks.c):
 * read every trace (a damaged one: its line, exit status 1, no output),
 * build the model, write what to output (NULL or "-": standard output)
 * through a temporary file renamed into place when all went well. Returns
 * the exit status. */
enum ranks_output { RANKS_TABLES, RANKS_PERFETTO, RANKS_HTML };
int report_ranks_run(char *const *paths, int n, const char *output, enum report_format format,
                     enum ranks_output what, int all_colls);

/* The "trace" section the csv/json documents start with: file, pid,
 * duration, calls, the selection and the time bases. */
void report_trace_table(struct rtable *tb, const struct obs_trace *t, const struct obs_call_filter *f);

/* Distinct phase names of t's ranges (non-empty), in order of first range;
 * *names is malloc'ed (the strings are the trace's). Returns the count, or
 * (size_t)-1 when out of memory. */
size_t report_phase_names(const struct obs_trace *t, const char ***names);


#endif
