/* obs-report ranks --html: see report_html.h. The charts draw the rows of
 * the ranks report (report_ranks.c), kept in a REPORT_KEEP document, so
 * each bar's data- attributes are the numbers `ranks --format json`
 * prints. */
#include "report_html.h"

#include <errno.h>
#include <stdlib.h>

#include "html_charts.h"
#include "html_out.h"
#include "reports.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* Bars for rows of tb: value = column key, label and value text written by label_of and text_of. */
static int bars_of(FILE *f, const struct rtable *tb, const char *key, const char *cls, int ns,
                   void (*label_of)(const struct rtable *tb, size_t row, char *buf, size_t len))
{
    struct html_bar *bars = calloc(tb->nrows ? tb->nrows : 1, sizeof *bars);
    char (*labels)[96] = calloc(tb->nrows ? tb->nrows : 1, sizeof *labels);
    char (*texts)[64] = calloc(tb->nrows ? tb->nrows : 1, sizeof *texts);
    struct html_chart_opts o = {1100, 0, 0, NULL, cls};
    size_t r;
    if (bars == NULL || labels == NULL || texts == NULL) {
        free(bars);
        free(labels);
        free(texts);
        return -1;
    }
    for (r = 0; r < tb->nrows; r++) {
        double v = 0;
        html_cell_num(tb, r, key, &v);
        label_of(tb, r, labels[r], sizeof labels[r]);
        if (ns)
            html_ns(v, texts[r], sizeof texts[r]);
        else
            snprintf(texts[r], sizeof texts[r], "%.0f", v);
        bars[r].label = labels[r];
        bars[r].value_text = texts[r];
        bars[r].value = v;
        bars[r].fill = html_palette(r);
        bars[r].tb = tb;
        bars[r].row = r;
    }
    html_bar_chart(f, bars, tb->nrows, &o);
    free(bars);
    free(labels);
    free(texts);
    return 0;
}

static void rank_label(const struct rtable *tb, size_t row, char *buf, size_t len)
{
    double rank = 0;
    const char *file = html_cell_str(tb, row, "file");
    html_cell_num(tb, row, "rank", &rank);
    snprintf(buf, len, "rank %.0f (%s)", rank, file ? file : "");
}

static void coll_label(const struct rtable *tb, size_t row, char *buf, size_t len)
{
    double seq = 0, straggler = 0;
    const char *op = html_cell_str(tb, row, "op");
    html_cell_num(tb, row, "seq", &seq);
    html_cell_num(tb, row, "straggler", &straggler);
    snprintf(buf, len, "%s seq %.0f: straggler rank %.0f", op ? op : "", seq, straggler);
}

static void step_label(const struct rtable *tb, size_t row, char *buf, size_t len)
{
    double gen = 0, step = 0, slowest = 0, pct = 0;
    html_cell_num(tb, row, "generation", &gen);
    html_cell_num(tb, row, "step", &step);
    html_cell_num(tb, row, "slowest_rank", &slowest);
    if (html_cell_num(tb, row, "comm_pct", &pct))
        snprintf(buf, len, "generation %.0f step %.0f: slowest rank %.0f, %.1f%% communication", gen, step, slowest,
                 pct);
    else
        snprintf(buf, len, "generation %.0f step %.0f: slowest rank %.0f", gen, step, slowest);
}

int report_ranks_html(FILE *f, const struct obs_ranks *r, size_t top)
{
    struct report_doc d;
    const struct rtable *ranks, *skew, *steps;
    size_t i;
    int rc = -1;

    rdoc_begin(&d, NULL, REPORT_KEEP);
    if (report_ranks(r, top, 0, &d) != 0 || rdoc_end(&d) != 0)
        goto done;
    ranks = rdoc_kept(&d, "ranks");
    skew = rdoc_kept(&d, "rank_skew");
    steps = rdoc_kept(&d, "steps");
    if (ranks == NULL || skew == NULL || steps == NULL) {
        errno = ENOMEM;
        goto done;
    }
    html_page_begin(f, "obs-report: ranks");
    fputs("<header>\n<h1>obs-report: ranks side by side</h1>\n", f);
    for (i = 0; i < d.nnotes; i++) {
        fputs("<p class=\"muted\">", f);
        html_esc(f, d.notes[i]);
        fputs("</p>\n", f);
    }
    fputs("</header>\n<section id=\"stragglers\">\n<h2>Stragglers per rank</h2>\n"
          "<p class=\"note\">How many matched collectives each rank called last (with a skew above 0).</p>\n",
          f);
    if (bars_of(f, ranks, "straggler_count", "chart-stragglers", 0, rank_label) != 0)
        goto done;
    fputs("</section>\n<section id=\"skew\">\n<h2>Collectives with the largest arrival skew</h2>\n"
          "<p class=\"note\">Skew: the last rank's call begin minus the first's.</p>\n",
          f);
    if (skew->nrows == 0)
        fputs("<p class=\"note\">No collective matched on every rank.</p>\n", f);
    else if (bars_of(f, skew, "skew_ns", "chart-skew", 1, coll_label) != 0)
        goto done;
    fputs("</section>\n<section id=\"steps\">\n<h2>Decode steps: the slowest rank</h2>\n"
          "<p class=\"note\">Per decode step, the slowest rank's step time and its share of communication.</p>\n",
          f);
    if (steps->nrows == 0)
        fputs("<p class=\"note\">No decode steps (no PHASE records with steps).</p>\n", f);
    else if (bars_of(f, steps, "step_ns", "chart-steps", 1, step_label) != 0)
        goto done;
    fprintf(f, "</section>\n<footer>Written by obs-report %s (obsshim). The numbers are those of "
               "<code>obs-report ranks --format json</code> of the same traces.</footer>\n",
            PACKAGE_VERSION);
    html_page_end(f);
    rc = 0;
done:
    rdoc_free(&d);
    return rc;
}
