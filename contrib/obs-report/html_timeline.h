/* obs-report html: a compact timeline of one generation as inline SVG.
 * Lanes: the generation's phase ranges (one lane per nesting depth), each
 * host thread's API calls, and each GPU stream's work (kernels, copies,
 * memsets, graph launches) by kind colour; items narrower than a pixel are
 * merged so that the SVG stays small whatever the generation's size.
 *
 * The window is the generation's calls (those its phase ranges label) from
 * the first begin to the last end, host and GPU. Where the device clock
 * does not line up with the host's (most of the generation's GPU work would
 * begin before the call that launched it: a simulated or unsynchronised
 * clock), the device lanes get an axis of their own, and a note says so. */
#ifndef OBS_HTML_TIMELINE_H
#define OBS_HTML_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

struct html_timeline {
    uint32_t thread;     /* index into trace->threads */
    uint32_t generation;
    uint64_t host_begin, host_end; /* the window of its labelled calls, host clock */
    uint64_t dev_begin, dev_end;   /* of their GPU spans (0, 0 without) */
    int own_device_axis;           /* device clock not aligned with the host's */
    uint64_t calls, kernels;       /* labelled calls and kernel launches */
};

/* Find the generation (thread tid, generation gen) and its window. Returns
 * 0, or -1 when the trace has no call in it. */
int html_timeline_find(const struct obs_trace *t, uint32_t tid, uint32_t gen, struct html_timeline *tl);

/* Draw it width units wide. host_scale_ns, dev_scale_ns: the time across
 * the plot on each clock (0: tl's own windows; one clock: the host's is
 * used for both), so that two runs can share them. run: "a"/"b" or NULL.
 * Returns 0, or -1 when out of memory. */
int html_timeline_draw(FILE *f, const struct obs_trace *t, const struct html_timeline *tl, int width,
                       uint64_t host_scale_ns, uint64_t dev_scale_ns, const char *run);

#endif
