/* obs-report html: writing one self-contained HTML page (inline CSS and
 * SVG; no script, no font, no address outside the page). Every string that
 * comes from a trace (kernel and range names, the command line, the path)
 * goes out through html_esc, which makes it safe as text and as a quoted
 * attribute value. Numbers a chart draws carry the row they come from as
 * data- attributes (html_row_data), the same text `obs-report summary
 * --format json` prints, so a test can check the page against it. */
#ifndef OBS_HTML_OUT_H
#define OBS_HTML_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "report_table.h"

/* Write s escaped: & < > " ' as entities; control characters (but tab and
 * newline) and bytes that are not UTF-8 as U+FFFD. */
void html_esc(FILE *f, const char *s);
/* The first max characters (UTF-8) of s escaped, then "…" when s is longer. */
void html_esc_cut(FILE *f, const char *s, size_t max);
/* printf, then escaped. */
void html_escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Human-readable amounts into buf (64 bytes do): "812 ns", "1.48 µs",
 * "3.20 ms", "1.250 s"; "67.1 MB" (10^n bytes); "14 368" is not used:
 * counts print as plain integers. */
const char *html_ns(double ns, char *buf, size_t len);
const char *html_ms(double ms, char *buf, size_t len);
const char *html_bytes(double bytes, char *buf, size_t len);
/* "%.*g"-like for axis labels: 3 significant digits, no exponent below 1e9. */
const char *html_num(double v, char *buf, size_t len);

/* ' data-report="R" data-row="I" data-KEY="VALUE"...' for every defined
 * cell of row r of tb (VALUE as rt_cell_text gives it, escaped), and
 * ' data-run="RUN"' when run is not NULL. */
void html_row_data(FILE *f, const struct rtable *tb, size_t r, const char *run);

/* A cell of row r by column key: defined (1) with *v set, or 0. */
int html_cell_num(const struct rtable *tb, size_t r, const char *key, double *v);
/* A text cell by key, or NULL (undefined or no such column). */
const char *html_cell_str(const struct rtable *tb, size_t r, const char *key);

/* The page around the sections: doctype, head with the inline style
 * sheet, body; title is escaped. */
void html_page_begin(FILE *f, const char *title);
void html_page_end(FILE *f);

/* A fixed palette (CSS fill values) for names: the same name, the same colour. */
const char *html_palette(size_t i);
size_t html_name_colour(const char *name);
/* A phase's fill (light tones, distinct from the palette's kind colours). */
const char *html_phase_fill(const char *phase);

#endif
