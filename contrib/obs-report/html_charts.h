/* obs-report html: the charts of the page as inline SVG (html_out.h):
 * horizontal bars, a line per generation with reference lines, and ranges
 * (median to p90, up to the max) for gap statistics. Each drawn item that
 * stands for a report row carries that row's data- attributes. A chart's
 * scale is given by the caller (max), so the two runs of a comparison
 * share it. */
#ifndef OBS_HTML_CHARTS_H
#define OBS_HTML_CHARTS_H

#include <stddef.h>
#include <stdio.h>

#include "report_table.h"

struct html_bar {
    const char *label;      /* above the bar, cut to the width (the tooltip has it whole) */
    const char *value_text; /* right of the bar */
    const char *tip;        /* tooltip; NULL: the label */
    double value;           /* the bar's length on the chart's scale */
    const char *fill;       /* CSS colour */
    const struct rtable *tb; /* the row it stands for (data- attributes), NULL: none */
    size_t row;
};

struct html_chart_opts {
    int width;       /* SVG user units (the page scales it to its column) */
    double max;      /* the value of a full-length bar (<= 0: the largest value) */
    int track;       /* draw the full length as a light track behind each bar (shares of 100%) */
    const char *run; /* "a", "b" in a comparison: data-run; NULL: one run */
    const char *cls; /* CSS class of the <svg> (tests find charts by it) */
};

void html_bar_chart(FILE *f, const struct html_bar *bars, size_t n, const struct html_chart_opts *o);

struct html_point {
    const char *x_label; /* the generation's label on the axis and in the tooltip */
    double y;
    int defined;         /* 0: no value (a gap in the line) */
    int hollow;          /* drawn as a ring: not counted in the bests */
    const struct rtable *tb;
    size_t row;
};

struct html_ref {
    const char *label; /* "median 0.137 ms" */
    double y;
    const char *stroke;
};

struct html_line_opts {
    int width, height;
    double ymax;          /* the top of the y axis (<= 0: from the values) */
    const char *y_title;  /* "TTFT (ms)" */
    const char *stroke;   /* the line's colour */
    const char *run, *cls;
};

/* Points in order along x (one per generation). Past HTML_MAX_POINTS the
 * line is drawn without a marker per point (the table has the values). */
#define HTML_MAX_POINTS 1000
void html_line_chart(FILE *f, const struct html_point *p, size_t n, const struct html_ref *refs, size_t nrefs,
                     const struct html_line_opts *o);

struct html_range {
    const char *label;
    int has_quantiles; /* median and p90 defined */
    double avg, median, p90, max;
    const char *value_text;
    const struct rtable *tb;
    size_t row;
};

/* One row per item: a line from 0 to its max, a box from median to p90, a
 * mark at the average; opts.max is the scale's end. */
void html_range_chart(FILE *f, const struct html_range *r, size_t n, const struct html_chart_opts *o);

/* A heat map: nrows x ncols cells, value[r * ncols + c] (NAN: none, drawn
 * empty), darker for more (the scale: 0 to the largest value); rows and
 * columns labelled (row_label(r), col_label(c) written by the callers'
 * printf formats with r and c), each cell's tooltip "<row> <col>: <value>"
 * and data-row, data-col, data-value attributes. */
struct html_heat_opts {
    int width;
    const char *row_fmt, *col_fmt; /* "LAYER/%zu", "%zu" */
    const char *col_title;         /* "decode step" */
    const char *run, *cls;
};
void html_heat_map(FILE *f, const double *value, size_t nrows, size_t ncols, const struct html_heat_opts *o);

/* Items over time (a serving loop's iterations): each a bar from x0 to x1
 * on the time axis (at least a unit wide), of height y, bottom-aligned,
 * in its fill, with its row's data- attributes and a tooltip. The axes
 * run from 0 to xmax and ymax (<= 0: from the items). Past
 * HTML_MAX_SPANS items only the first HTML_MAX_SPANS are drawn. */
#define HTML_MAX_SPANS 5000
struct html_span {
    double x0, x1, y;
    const char *fill;
    const char *tip;
    const struct rtable *tb;
    size_t row;
};
struct html_time_opts {
    int width, height;
    double xmax, ymax;
    const char *x_title, *y_title; /* "ms after the trace's start", "iteration time (ms)" */
    const char *run, *cls;
};
void html_time_chart(FILE *f, const struct html_span *s, size_t n, const struct html_time_opts *o);

/* A legend of coloured squares: names[i] in fills[i]. */
void html_legend(FILE *f, const char *const *names, const char *const *fills, size_t n);

/* A "nice" axis end at or above v (1, 2, 2.5, 5 x 10^k). */
double html_nice_ceil(double v);

#endif
