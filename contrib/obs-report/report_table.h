/* obs-report: typed result tables and the three output formats of the
 * reports (summary, gaps, top, compare), so that each report is computed
 * once and printed as an nsys-style text table, a CSV section or a JSON
 * array. Layouts: docs/reports.md, "Formats".
 *
 *   table: "Title" line, header, dashed rule, rows (numbers right-aligned,
 *          the last column left-aligned); notes under the table.
 *   csv:   "# report_name" line, a header row of column keys, one row per
 *          row; sections separated by one blank line.
 *   json:  one object, {"report_name": [{"key": value, ...}, ...], ...,
 *          "notes": ["...", ...]}; numbers are JSON numbers, undefined
 *          values null. */
#ifndef OBS_REPORT_TABLE_H
#define OBS_REPORT_TABLE_H

#include <stdint.h>
#include <stdio.h>

/* REPORT_KEEP prints nothing: the document keeps a copy of each table (and
 * its notes, as JSON would) for a caller that lays them out itself (the
 * HTML page, report_html.h). */
enum report_format { REPORT_TABLE, REPORT_CSV, REPORT_JSON, REPORT_KEEP };

/* Column types. RT_REAL prints with the column's decimals in every format. */
enum rt_type { RT_TEXT, RT_UINT, RT_INT, RT_REAL };

#define RT_MAX_COLS 32

struct rt_col {
    const char *head; /* table format header: "Total Time (ns)" */
    const char *key;  /* CSV header / JSON key: "total_ns" */
    enum rt_type type;
    int decimals; /* RT_REAL: digits after the point; negative: at most -decimals, trailing zeros dropped */
};

struct rt_cell {
    int set; /* 0: undefined ("-" in tables, empty in CSV, null in JSON) */
    union {
        uint64_t u;
        int64_t i;
        double d;
        char *s;
    } v;
};

struct rtable {
    const char *report; /* "cuda_gpu_kern_sum": CSV section name and JSON key */
    char *title;        /* table format title */
    size_t ncols, nrows, cap, filled;
    struct rt_col cols[RT_MAX_COLS];
    struct rt_cell *cells; /* nrows * ncols */
    char **notes;          /* lines printed under the table (table format) */
    size_t nnotes;
    const char *empty;     /* table format, when there are no rows: " no kernel launches" */
    int failed;            /* out of memory: the document reports it */
};

/* cols is copied; title is formatted (printf). */
void rt_init(struct rtable *tb, const char *report, const struct rt_col *cols, size_t ncols, const char *title_fmt,
             ...) __attribute__((format(printf, 5, 6)));
void rt_free(struct rtable *tb);

/* Start a row, then give its cells in column order. */
void rt_row(struct rtable *tb);
void rt_text(struct rtable *tb, const char *s);
void rt_uint(struct rtable *tb, uint64_t v);
void rt_int(struct rtable *tb, int64_t v);
void rt_real(struct rtable *tb, double v);
void rt_null(struct rtable *tb);
void rt_note(struct rtable *tb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The cell's text as CSV and JSON print it ("" when undefined): a number
 * with its column's decimals, or the text. buf: 64 bytes do. */
const char *rt_cell_text(const struct rtable *tb, size_t r, size_t c, char *buf, size_t len);
/* The column of key, or -1. */
int rt_col_of(const struct rtable *tb, const char *key);

/* A document: several tables in one format. */
struct report_doc {
    FILE *f;
    enum report_format format;
    size_t sections;
    char **notes; /* JSON and KEEP: the "notes" array */
    size_t nnotes;
    struct rtable *kept; /* KEEP: copies of the tables, in order */
    size_t nkept;
    int failed;
};

void rdoc_begin(struct report_doc *d, FILE *f, enum report_format format);
/* Print a table (and free nothing: the caller frees it). */
void rdoc_table(struct report_doc *d, const struct rtable *tb);
/* A line of text: printed as is in table format; a JSON note; a "# note:"
 * comment is never written into CSV (it stays parseable), so CSV drops it. */
void rdoc_note(struct report_doc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Finish; returns 0, or -1 (out of memory or a write error; errno set).
 * A KEEP document keeps its tables and notes until rdoc_free. */
int rdoc_end(struct report_doc *d);
/* KEEP: the kept table of that report name, or NULL. */
const struct rtable *rdoc_kept(const struct report_doc *d, const char *report);
/* KEEP: free the kept tables and notes. */
void rdoc_free(struct report_doc *d);

/* "table" | "csv" | "json" -> format; -1 if none of them. */
int report_format_parse(const char *name);

#endif
