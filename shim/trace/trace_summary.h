/* The text summary of a trace: what the shim prints at exit and what
 * `obs-report summary` prints. The full summary (below) grows with the run;
 * the brief one (obs_summary_options.brief, what the shim prints at exit
 * unless OBS_SUMMARY=full) fits a screen: see OBS_SUMMARY_BRIEF_MAX_LINES.
 *
 *   obsshim: FILE: pid P, duration D ms, N records, L records lost
 *   Kernels (GPU time | host API time ...)   nsys cuda_gpu_kern_sum columns
 *   Copies by direction                      count, bytes, time, GB/s
 *   Memsets                                  count, bytes, time, GB/s
 *   API calls                                calls and host time per API
 *   Graph launches                           per graph exec launched: launches, time
 *                                            (GPU time when timed), nodes, kernels by name
 *   Collectives                              NCCL, per operation: calls, bytes, host time,
 *                                            kernels launched (brief: one line)
 *   Phases, Phases by generation, Generations (TTFT, tokens/s)   when the
 *                                            trace has phases (trace_phases.h)
 *   Serving loop                             when it has ITERATION ranges
 *                                            (trace_serving.h)
 *   Shim cost: X ns per recorded call        (or "not measured"; with the slow paths' part)
 */
#ifndef OBS_TRACE_SUMMARY_H
#define OBS_TRACE_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"
#include "trace_stats.h"

/* Sections, for obs_summary_options.sections (0 = all). */
#define OBS_SUMMARY_HEADER 0x01u
#define OBS_SUMMARY_KERNELS 0x02u
#define OBS_SUMMARY_COPIES 0x04u
#define OBS_SUMMARY_MEMSETS 0x08u
#define OBS_SUMMARY_APIS 0x10u
#define OBS_SUMMARY_SELF_COST 0x20u
#define OBS_SUMMARY_PHASES 0x40u
#define OBS_SUMMARY_GRAPHS 0x80u
#define OBS_SUMMARY_COLLECTIVES 0x100u

/* The brief summary never prints more lines than this (the shim's
 * "obsshim: wrote" line after it included), whatever the run: the header
 * with records lost and the shim's cost; the 10 kernels with the most time
 * and the rest in one row; copies by direction and memsets in one table;
 * the 5 most called APIs (4 when NCCL's line follows) and the rest in one
 * row, graph launches in one line, NCCL collectives in one line; the 5 phases with the most time (over all generations) and the
 * rest in one row; the generations' count with best / median / p90 TTFT
 * and tokens/s, or, where every generation is a serving loop's, the two
 * lines of its serving section in their place. The detail stays with
 * `obs-report summary`, `phases` and `serving`. */
#define OBS_SUMMARY_BRIEF_MAX_LINES 60
#define OBS_SUMMARY_BRIEF_KERNELS 10
#define OBS_SUMMARY_BRIEF_APIS 5
#define OBS_SUMMARY_BRIEF_PHASES 5

struct obs_summary_options {
    unsigned sections;
    int brief; /* 1: the screen-sized summary above; 0: the full tables */
};

/* opt may be NULL. Returns 0, or -1 with errno set when writing failed. */
int obs_report_summary(const struct obs_trace *t, FILE *out, const struct obs_summary_options *opt);

/* The same with a filter (trace_query.h; NULL: every call): the kernel,
 * copy, memset, API and graph tables count only the calls it keeps, and a
 * "selection:" line under the header says what it kept. The phase tables
 * stay those of the whole trace. */
struct obs_call_filter;
int obs_report_summary_filtered(const struct obs_trace *t, FILE *out, const struct obs_summary_options *opt,
                                const struct obs_call_filter *filter);

/* The phase tables alone (`obs-report phases`): per phase, per phase and
 * generation, per generation with TTFT and tokens/s, and the bests; or one
 * line saying the trace has no phases. Returns 0, or -1 with errno set. */
int obs_report_phase_tables(const struct obs_trace *t, FILE *out);

#endif
