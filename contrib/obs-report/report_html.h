/* obs-report html: a run's overview as one self-contained HTML page, or two
 * runs side by side (compare --html). The page draws the reports of
 * `obs-report summary` and `gaps` (computed by the same code, kept in
 * REPORT_KEEP documents) and a timeline of one generation:
 *   overview cards, time per phase, TTFT and tokens/s per generation, the
 *   top kernels, device idle gaps, launch gaps and sync share, copies by
 *   direction, API calls, one generation's timeline.
 * Every drawn item that stands for a report row carries its values as
 * data- attributes (html_out.h). Sections and attributes: docs/reports.md,
 * "html". */
#ifndef OBS_REPORT_HTML_H
#define OBS_REPORT_HTML_H

#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

struct html_options {
    int has_generation;  /* draw this generation's timeline (else the median-TTFT one) */
    uint32_t generation;
};

/* Write the page for one run (nruns 1) or two (A, B: a comparison).
 * Returns 0, or -1 with errno set (out of memory, a write error). */
int report_html(FILE *f, struct obs_trace *const *t, size_t nruns, const struct html_options *o);

/* The command's work (`html`, `compare --html`): open the traces (a
 * damaged one: its message, exit status 1, no output file), write the page
 * to output (NULL or "-": standard output) through a temporary file that
 * is renamed into place when all went well. Returns the exit status. */
int report_html_run(const char *const *paths, size_t npaths, const char *output, const struct html_options *o);

/* `obs-report ranks --html`: the ranks of a run on one page (report_ranks_html.c):
 * stragglers per rank, the collectives with the largest skew and the
 * decode steps' slowest ranks as bar charts, each bar carrying its row of
 * `ranks --format json` (the ranks, rank_skew and steps reports) as data-
 * attributes. Returns 0, or -1 with errno set. */
int report_ranks_html(FILE *f, const struct obs_ranks *r, size_t top);

#endif
