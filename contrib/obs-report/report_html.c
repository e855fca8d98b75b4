/* obs-report html: the page (see report_html.h). Each section is drawn
 * for every run, in columns; in a comparison the runs share each chart's
 * scale, so equal lengths mean equal amounts. */
#include "report_html.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html_charts.h"
#include "html_out.h"
#include "html_timeline.h"
#include "reports.h"
#include "trace/trace.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define TOP_ROWS 10          /* kernels, APIs: the rest folded into one bar */
#define MAX_PHASE_BARS 20
#define MAX_TABLE_ROWS 2000  /* rows of a table under <details> */
#define DOT " \xc2\xb7 "       /* " · " between the figures of a value text */

struct run {
    const struct obs_trace *t;
    struct report_doc sum, gaps; /* REPORT_KEEP: summary's and gaps' reports */
    struct report_doc serv;      /* REPORT_KEEP: serving's (serving --json) */
    const char *run;             /* data-run: "a", "b"; NULL for one run */
    const char *name;            /* "A", "B" */
};

static const struct rtable *tab(const struct run *r, const char *report)
{
    const struct rtable *tb = rdoc_kept(&r->sum, report);
    if (tb == NULL)
        tb = rdoc_kept(&r->gaps, report);
    return tb ? tb : rdoc_kept(&r->serv, report);
}

static double num(const struct rtable *tb, size_t row, const char *key)
{
    double v = 0;
    html_cell_num(tb, row, key, &v);
    return v;
}

static const char *str(const struct rtable *tb, size_t row, const char *key)
{
    const char *s = html_cell_str(tb, row, key);
    return s ? s : "";
}

/* Rows drawn of a long table: all when one more would do, else TOP_ROWS. */
static size_t shown_rows(size_t n)
{
    return n > TOP_ROWS + 1 ? TOP_ROWS : n;
}

/* The largest value of key over the first limit rows of report, over the runs. */
static double runs_max(const struct run *runs, size_t nruns, const char *report, const char *key, size_t limit)
{
    double mx = 0, v;
    size_t i, r;
    for (i = 0; i < nruns; i++) {
        const struct rtable *tb = tab(&runs[i], report);
        for (r = 0; tb && r < tb->nrows && r < limit; r++)
            if (html_cell_num(tb, r, key, &v) && v > mx)
                mx = v;
    }
    return mx;
}

static void section_begin(FILE *f, const char *id, const char *title, size_t nruns)
{
    fprintf(f, "<section id=\"%s\">\n<h2>", id);
    html_esc(f, title);
    fprintf(f, "</h2>\n<div class=\"runs\" style=\"--runs:%zu\">\n", nruns);
}

static void section_end(FILE *f)
{
    fputs("</div>\n</section>\n", f);
}

static void run_begin(FILE *f, const struct run *r, size_t nruns)
{
    fputs("<div class=\"run\">\n", f);
    if (nruns > 1) {
        fprintf(f, "<div class=\"run-head\">%s: <span class=\"mono\">", r->name);
        html_esc(f, r->t->path);
        fputs("</span></div>\n", f);
    }
}

static void note(FILE *f, const char *text)
{
    fputs("<p class=\"note\">", f);
    html_esc(f, text);
    fputs("</p>\n", f);
}

/* An rtable as an HTML table under <details> (the numbers as CSV has them). */
static void details_table(FILE *f, const struct rtable *tb, const char *what)
{
    size_t r, c, rows = tb->nrows < MAX_TABLE_ROWS ? tb->nrows : MAX_TABLE_ROWS;
    char buf[64];
    if (tb->nrows == 0)
        return;
    fprintf(f, "<details><summary>%s: %zu row%s</summary>\n<table><tr>", what, tb->nrows, tb->nrows == 1 ? "" : "s");
    for (c = 0; c < tb->ncols; c++) {
        fprintf(f, "<th%s>", tb->cols[c].type == RT_TEXT ? " class=\"t\"" : "");
        html_esc(f, tb->cols[c].head);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (r = 0; r < rows; r++) {
        fputs("<tr>", f);
        for (c = 0; c < tb->ncols; c++) {
            const char *s = rt_cell_text(tb, r, c, buf, sizeof buf);
            fprintf(f, "<td%s>", tb->cols[c].type == RT_TEXT ? " class=\"t\"" : "");
            html_esc(f, s[0] || tb->cols[c].type == RT_TEXT ? s : "-");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    if (rows < tb->nrows)
        fprintf(f, "<p class=\"note\">The first %zu rows; <code>obs-report summary --format csv</code> has them "
                   "all.</p>\n",
                rows);
    fputs("</details>\n", f);
}

/* ---- overview ------------------------------------------------------------------------- */

static void card(FILE *f, const char *key, const char *value, int warn)
{
    fprintf(f, "<div class=\"card%s\"><div class=\"v\">", warn ? " warn" : "");
    html_esc(f, value);
    fputs("</div><div class=\"k\">", f);
    html_esc(f, key);
    fputs("</div></div>\n", f);
}

static void overview(FILE *f, const struct run *runs, size_t nruns)
{
    size_t i, r;
    char buf[320], b2[64];
    section_begin(f, "overview", "Overview", nruns);
    for (i = 0; i < nruns; i++) {
        const struct run *rn = &runs[i];
        const struct rtable *tr = tab(rn, "trace"), *ks = tab(rn, "cuda_gpu_kern_sum"),
                            *sp = tab(rn, "generation_spread");
        const char *cmd = obs_trace_meta(rn->t, "cmdline");
        double launches = 0, kns = 0, v;
        run_begin(f, rn, nruns);
        if (cmd && cmd[0]) {
            fputs("<p class=\"mono\">", f);
            html_esc(f, cmd);
            fputs("</p>\n", f);
        }
        for (r = 0; ks && r < ks->nrows; r++) {
            launches += num(ks, r, "instances");
            kns += num(ks, r, "total_ns");
        }
        fputs("<div class=\"cards\"", f);
        if (tr && tr->nrows)
            html_row_data(f, tr, 0, rn->run);
        fputs(">\n", f);
        card(f, "duration", html_ms(num(tr, 0, "duration_ms"), buf, sizeof buf), 0);
        snprintf(buf, sizeof buf, "%.0f", num(tr, 0, "calls"));
        card(f, "calls recorded", buf, 0);
        snprintf(buf, sizeof buf, "%.0f", launches);
        card(f, "kernel launches", buf, 0);
        snprintf(buf, sizeof buf, "%s", html_ns(kns, b2, sizeof b2));
        card(f, strcmp(str(tr, 0, "kernel_time_base"), "gpu") == 0 ? "kernel time (GPU)" : "kernel time (host API)",
             buf, 0);
        snprintf(buf, sizeof buf, "%.0f", num(tr, 0, "records_lost"));
        card(f, "records lost", buf, num(tr, 0, "records_lost") > 0);
        if (html_cell_num(tr, 0, "shim_ns_per_call", &v))
            snprintf(buf, sizeof buf, "%.1f ns", v);
        else
            snprintf(buf, sizeof buf, "not measured");
        card(f, "shim cost per call", buf, 0);
        fputs("</div>\n", f);
        if (sp && sp->nrows) {
            fputs("<div class=\"cards\"", f);
            html_row_data(f, sp, 0, rn->run);
            fputs(">\n", f);
            snprintf(buf, sizeof buf, "%.0f", num(sp, 0, "generations"));
            card(f, "generations", buf, 0);
            if (html_cell_num(sp, 0, "ttft_median_ms", &v)) {
                card(f, "TTFT, median", html_ms(v, buf, sizeof buf), 0);
                card(f, "TTFT, best", html_ms(num(sp, 0, "ttft_best_ms"), buf, sizeof buf), 0);
            } else {
                card(f, "TTFT", "n/a", 0);
            }
            if (html_cell_num(sp, 0, "tokens_median_per_s", &v)) {
                snprintf(buf, sizeof buf, "%.1f", v);
                card(f, "tokens/s, median", buf, 0);
                snprintf(buf, sizeof buf, "%.1f", num(sp, 0, "tokens_best_per_s"));
                card(f, "tokens/s, best", buf, 0);
            } else {
                card(f, "tokens/s", "n/a", 0);
            }
            fputs("</div>\n", f);
        }
        if (strcmp(str(tr, 0, "gpu_time"), "steps") == 0)
            snprintf(buf, sizeof buf, "Times: kernels and copies on the host API clock; phases, decode steps, TTFT "
                                      "and tokens/s on the GPU clock, from an event pair per phase range and stream "
                                      "(OBS_GPU_TIME=steps; OBS_GPU_TIME=events or cupti time each kernel).");
        else
            snprintf(buf, sizeof buf, "Times: kernels on the %s clock, copies on the %s clock (%s%s).",
                     strcmp(str(tr, 0, "kernel_time_base"), "gpu") == 0 ? "GPU" : "host API",
                     strcmp(str(tr, 0, "copy_time_base"), "gpu") == 0 ? "GPU" : "host API",
                     strcmp(str(tr, 0, "kernel_time_base"), "gpu") == 0 ? "OBS_GPU_TIME=" : "",
                     strcmp(str(tr, 0, "kernel_time_base"), "gpu") == 0
                         ? str(tr, 0, "gpu_time")
                         : "record with OBS_GPU_TIME=steps for GPU time per phase and step, events or cupti per "
                           "kernel");
        note(f, buf);
        fputs("</div>\n", f);
    }
    section_end(f);
}

/* ---- comparison ------------------------------------------------------------------------ */

static void compare_section(FILE *f, const struct report_doc *cmp)
{
    const struct rtable *m = rdoc_kept(cmp, "metrics"), *k = rdoc_kept(cmp, "kernels");
    size_t r, c;
    char buf[64];
    fputs("<section id=\"changes\">\n<h2>What changed from A to B</h2>\n", f);
    if (m) {
        fputs("<table><tr><th class=\"t\">Metric</th><th>A</th><th>B</th><th>B &#8722; A</th><th>B / A</th>"
              "<th>Change (%)</th></tr>\n",
              f);
        for (r = 0; r < m->nrows; r++) {
            double ch = 0;
            int has = html_cell_num(m, r, "change_pct", &ch);
            const char *name = str(m, r, "metric");
            /* lower is better for times, higher for rates; counts are neither */
            int judged = strstr(name, "_ms") != NULL || strstr(name, "_ns") != NULL || strstr(name, "tokens") != NULL;
            int good = has && ch != 0 && ((strstr(name, "tokens") != NULL) == (ch > 0));
            fputs("<tr", f);
            html_row_data(f, m, r, NULL);
            fputs(">", f);
            for (c = 0; c < m->ncols; c++) {
                const char *s = rt_cell_text(m, r, c, buf, sizeof buf);
                const char *cls = m->cols[c].type == RT_TEXT ? " class=\"t\""
                                  : strcmp(m->cols[c].key, "change_pct") == 0 && has && ch != 0 && judged
                                      ? (good ? " class=\"down\"" : " class=\"up\"")
                                      : "";
                fprintf(f, "<td%s>", cls);
                html_esc(f, s[0] ? s : "-");
                fputs("</td>", f);
            }
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
        note(f, "Green: better in B (shorter times, more tokens/s); red: worse; counts are not judged. Ratios and "
                "changes: B / A.");
    }
    if (k && k->nrows) {
        size_t n = shown_rows(k->nrows);
        fprintf(f, "<h3>Kernels whose total time changed most (%zu of %zu)</h3>\n", n, k->nrows);
        fputs("<table><tr><th>Total A</th><th>Total B</th><th>B &#8722; A</th><th>B / A</th><th>Count A</th>"
              "<th>Count B</th><th class=\"t\">Name</th></tr>\n",
              f);
        for (r = 0; r < n; r++) {
            double ra;
            fputs("<tr", f);
            html_row_data(f, k, r, NULL);
            fputs(">", f);
            fprintf(f, "<td>%s</td>", html_ns(num(k, r, "total_a_ns"), buf, sizeof buf));
            fprintf(f, "<td>%s</td>", html_ns(num(k, r, "total_b_ns"), buf, sizeof buf));
            fprintf(f, "<td class=\"%s\">%s%s</td>", num(k, r, "total_delta_ns") > 0 ? "up" : "down",
                    num(k, r, "total_delta_ns") < 0 ? "&#8722;" : "+",
                    html_ns(fabs(num(k, r, "total_delta_ns")), buf, sizeof buf));
            if (html_cell_num(k, r, "ratio", &ra))
                fprintf(f, "<td>%.4f</td>", ra);
            else
                fputs("<td>-</td>", f);
            fprintf(f, "<td>%.0f</td><td>%.0f</td><td class=\"t mono\">", num(k, r, "count_a"),
                    num(k, r, "count_b"));
            html_esc(f, str(k, r, "name"));
            fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n", f);
}

/* ---- phases ------------------------------------------------------------------------------ */

static int phases_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double max = runs_max(runs, nruns, "phases", "time_ns", MAX_PHASE_BARS);
    size_t i, r;
    char buf[64], text[192];
    section_begin(f, "phases", "Time per phase", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *tb = tab(&runs[i], "phases");
        struct html_bar *bars;
        struct html_chart_opts o = {width, max, 0, runs[i].run, "chart-phases"};
        double total = 0, v;
        size_t n = tb ? (tb->nrows < MAX_PHASE_BARS ? tb->nrows : MAX_PHASE_BARS) : 0;
        run_begin(f, &runs[i], nruns);
        if (n == 0) {
            note(f, "No phases: the trace has no PHASE records (the phase engine found no generation, or "
                    "OBS_PHASES=0).");
            fputs("</div>\n", f);
            continue;
        }
        bars = calloc(n, sizeof *bars);
        if (bars == NULL)
            return -1;
        for (r = 0; r < tb->nrows; r++)
            total += num(tb, r, "time_ns");
        for (r = 0; r < n; r++) {
            int timed = html_cell_num(tb, r, "time_ns", &v);
            bars[r].label = str(tb, r, "phase");
            bars[r].value = timed ? v : 0;
            if (timed)
                snprintf(text, sizeof text, "%s" DOT "%.1f%%" DOT "%.0f range%s", html_ns(v, buf, sizeof buf),
                         total > 0 ? 100.0 * v / total : 0.0, num(tb, r, "ranges"),
                         num(tb, r, "ranges") == 1 ? "" : "s");
            else
                snprintf(text, sizeof text, "untimed" DOT "%.0f calls", num(tb, r, "calls"));
            bars[r].value_text = strdup(text);
            bars[r].fill = html_phase_fill(bars[r].label);
            bars[r].tb = tb;
            bars[r].row = r;
        }
        fprintf(f, "<p class=\"note\">%s; a phase's time is the sum over its ranges of first call begin to last call "
                   "end, calls of ranges nested in it not counted.</p>\n",
                strcmp(str(tb, 0, "time_base"), "gpu") == 0 ? "GPU time" : "Host API time");
        html_bar_chart(f, bars, n, &o);
        if (n < tb->nrows)
            fprintf(f, "<p class=\"note\">%zu more phases in the table.</p>\n", tb->nrows - n);
        for (r = 0; r < tb->nnotes; r++)
            note(f, tb->notes[r]);
        details_table(f, tb, "Phases");
        for (r = 0; r < n; r++)
            free((char *)bars[r].value_text);
        free(bars);
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- layers ---------------------------------------------------------------------------------- */

/* Model layers (docs/layers.md): the slowest layers by average time per
 * instance, and one generation's layers x decode steps; the numbers are
 * those of `obs-report phases --layers --csv` (data-phase, data-layer,
 * data-avg_ns on each bar). */
static int layers_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    size_t i, r, k;
    char buf[64], text[192];
    section_begin(f, "layers", "Layers", nruns);
    for (i = 0; i < nruns; i++) {
        struct obs_layer_stats s;
        struct html_bar bars[TOP_ROWS];
        char labels[TOP_ROWS][48], *texts[TOP_ROWS];
        unsigned char *used;
        struct html_chart_opts o = {width, 0, 0, runs[i].run, "chart-layers"};
        size_t n;
        run_begin(f, &runs[i], nruns);
        if (obs_layer_stats_compute(runs[i].t, &s) != 0)
            return -1;
        if (s.nrows == 0) {
            note(f, "No layers: no prompt or decode step of the trace repeats a block of launches the layer finder "
                    "reads as model layers (docs/layers.md).");
            fputs("</div>\n", f);
            obs_layer_stats_free(&s);
            continue;
        }
        used = calloc(s.nrows, 1);
        if (used == NULL) {
            obs_layer_stats_free(&s);
            return -1;
        }
        n = s.nrows < TOP_ROWS ? s.nrows : TOP_ROWS;
        for (k = 0; k < n; k++) { /* the next slowest by average per instance */
            size_t best = s.nrows;
            for (r = 0; r < s.nrows; r++)
                if (!used[r] && (best == s.nrows || s.rows[r].time_ns / s.rows[r].instances >
                                                        s.rows[best].time_ns / s.rows[best].instances))
                    best = r;
            used[best] = 1;
            if (s.rows[best].layer == OBS_LAYER_EMBED || s.rows[best].layer == OBS_LAYER_HEAD) /* EMBED, HEAD */
                snprintf(labels[k], sizeof labels[k], "%s %s", s.rows[best].phase,
                         obs_layer_label(s.rows[best].layer, text, sizeof text));
            else
                snprintf(labels[k], sizeof labels[k], "%s LAYER/%u", s.rows[best].phase, s.rows[best].layer);
            snprintf(text, sizeof text, "%s avg" DOT "%s max" DOT "%llu instances",
                     html_ns((double)(s.rows[best].time_ns / s.rows[best].instances), buf, sizeof buf),
                     html_ns((double)s.rows[best].max_ns, buf + 32, sizeof buf - 32),
                     (unsigned long long)s.rows[best].instances);
            texts[k] = strdup(text);
            bars[k] = (struct html_bar){labels[k], texts[k], NULL,
                                        (double)(s.rows[best].time_ns / s.rows[best].instances),
                                        html_phase_fill(s.rows[best].phase), NULL, 0};
        }
        fprintf(f, "<p class=\"note\">%s; a layer's instance is one pass of a prompt or decode step through it, first "
                   "call begin to last call end; EMBED and HEAD: the calls of a prompt or step before its first layer and after its "
                   "last; the slowest %zu of %zu rows by average per instance.</p>\n",
                s.gpu_time ? "GPU time" : "Host API time", n, s.nrows);
        html_bar_chart(f, bars, n, &o);
        for (k = 0; k < n; k++)
            free(texts[k]);
        free(used);
        if (s.map_steps > 0 && s.map_layers > 0) {
            size_t cells = (size_t)s.map_layers * s.map_steps;
            double *v = malloc(cells * sizeof *v);
            struct html_heat_opts h = {width, "LAYER/%zu", "%zu", "decode step", runs[i].run, "chart-layer-steps"};
            if (v == NULL) {
                obs_layer_stats_free(&s);
                return -1;
            }
            for (k = 0; k < cells; k++)
                v[k] = s.map_ns[k] == UINT64_MAX ? NAN : (double)s.map_ns[k];
            fprintf(f, "<p class=\"note\">Layers x decode steps of generation %u of thread %u (the one with the most "
                       "steps): darker is slower.</p>\n",
                    s.map_generation, s.map_tid);
            html_heat_map(f, v, s.map_layers, s.map_steps, &h);
            free(v);
        }
        fputs("</div>\n", f);
        obs_layer_stats_free(&s);
    }
    section_end(f);
    return 0;
}

/* ---- generations ----------------------------------------------------------------------------- */

static double gen_ymax(const struct run *runs, size_t nruns, const char *key, const char *ref1, const char *ref2,
                       const char *ref3)
{
    double m = runs_max(runs, nruns, "generations", key, (size_t)-1), v;
    size_t i;
    for (i = 0; i < nruns; i++) {
        const struct rtable *sp = tab(&runs[i], "generation_spread");
        if (html_cell_num(sp, 0, ref1, &v) && v > m)
            m = v;
        if (html_cell_num(sp, 0, ref2, &v) && v > m)
            m = v;
        if (html_cell_num(sp, 0, ref3, &v) && v > m)
            m = v;
    }
    return html_nice_ceil(m * 1.1);
}

static int gen_chart(FILE *f, const struct run *rn, const char *key, const char *title, double ymax, int width,
                     const char *stroke, int is_ttft)
{
    const struct rtable *g = tab(rn, "generations"), *sp = tab(rn, "generation_spread");
    struct html_point *p;
    struct html_ref refs[3];
    struct html_line_opts o;
    char labels[3][96], buf[64];
    size_t r, nrefs = 0;
    double v;
    char(*xl)[16];

    p = calloc(g->nrows ? g->nrows : 1, sizeof *p);
    xl = calloc(g->nrows ? g->nrows : 1, sizeof *xl);
    if (p == NULL || xl == NULL) {
        free(p);
        free(xl);
        return -1;
    }
    for (r = 0; r < g->nrows; r++) {
        snprintf(xl[r], sizeof xl[r], "%.0f", num(g, r, "generation"));
        p[r].x_label = xl[r];
        p[r].defined = html_cell_num(g, r, key, &p[r].y);
        p[r].hollow = num(g, r, "in_best") == 0;
        p[r].tb = g;
        p[r].row = r;
    }
    {
        static const char *const ttft_keys[] = {"ttft_best_ms", "ttft_median_ms", "ttft_p90_ms"};
        static const char *const tok_keys[] = {"tokens_best_per_s", "tokens_median_per_s", "tokens_p90_per_s"};
        static const char *const names[] = {"best", "median", "p90"};
        static const char *const strokes[] = {"#59a14f", "#4e79a7", "#e15759"};
        size_t k;
        for (k = 0; k < 3; k++)
            if (sp && sp->nrows && html_cell_num(sp, 0, is_ttft ? ttft_keys[k] : tok_keys[k], &v)) {
                snprintf(labels[nrefs], sizeof labels[nrefs], "%s %s%s", names[k], html_num(v, buf, sizeof buf),
                         is_ttft ? " ms" : "/s");
                refs[nrefs].label = labels[nrefs];
                refs[nrefs].y = v;
                refs[nrefs].stroke = strokes[k];
                nrefs++;
            }
    }
    memset(&o, 0, sizeof o);
    o.width = width;
    o.height = 220;
    o.ymax = ymax;
    o.y_title = title;
    o.stroke = stroke;
    o.run = rn->run;
    o.cls = is_ttft ? "chart-ttft" : "chart-tokens";
    html_line_chart(f, p, g->nrows, refs, nrefs, &o);
    free(p);
    free(xl);
    return 0;
}

/* Where a generation's TTFT ends, in words (its ttft_to). */
static const char *ttft_to_words(const char *ttft_to)
{
    if (strcmp(ttft_to, OBS_TTFT_TO_TOKEN_READ) == 0)
        return "the prompt's token read: the first token is the prompt's own";
    if (strcmp(ttft_to, OBS_TTFT_TO_FORWARD_DEVICE) == 0)
        return "the device end of the prompt's forward: its token is not read back";
    if (strcmp(ttft_to, OBS_TTFT_TO_FORWARD_DELIMITER) == 0)
        return "the host sync or copy that ends the prompt's forward: its token is not read back";
    if (strcmp(ttft_to, OBS_TTFT_TO_STEP0) == 0)
        return "the end of decode step 0: the first token is step 0's";
    return ttft_to;
}

/* Which TTFT and rate definitions the generations used (docs/phases-report.md):
 * one note per ttft_to word used. */
static void first_token_note(FILE *f, const struct rtable *g)
{
    static const struct {
        const char *ttft_to, *text;
    } defs[] = {
        {OBS_TTFT_TO_TOKEN_READ, "TTFT from the prompt's first call to the end of its token read (first token "
                                 "'prefill': the prompt's own); tokens/s from the steps' token reads after it"},
        {OBS_TTFT_TO_FORWARD_DEVICE, "TTFT from the prompt's first call to the device end of the prompt's forward "
                                     "(first token 'step0': the prefill reads no token, nor does step 0, and the "
                                     "program reads something back; the first token is the prompt's own, not read "
                                     "back); tokens/s = (N_decode - 1) / T_decode_after_first"},
        {OBS_TTFT_TO_FORWARD_DELIMITER, "TTFT from the prompt's first call to the end of the host sync or copy "
                                        "from the device that ends the prompt's forward (first token 'step0': the "
                                        "prefill reads no token, nor does step 0, and the program reads something "
                                        "back; the first token is the prompt's own, not read back); tokens/s = "
                                        "(N_decode - 1) / T_decode_after_first"},
        {OBS_TTFT_TO_STEP0, "TTFT = T_prefill + T_first_decode (first token 'step0': the prefill reads no token); "
                            "tokens/s = (N_decode - 1) / T_decode_after_first"},
    };
    size_t r, d, seqs = 0;
    char text[768];
    for (r = 0; r < g->nrows; r++)
        seqs += num(g, r, "sequences") > 1;
    for (d = 0; d < sizeof defs / sizeof defs[0]; d++) {
        size_t n = 0;
        for (r = 0; r < g->nrows; r++)
            n += strcmp(str(g, r, "ttft_to"), defs[d].ttft_to) == 0;
        if (n == 0)
            continue;
        snprintf(text, sizeof text, "TTFT to '%s' in %zu of %zu generations: %s%s.", defs[d].ttft_to, n, g->nrows,
                 defs[d].text,
                 d == 0 && seqs ? ", times the sequences per step where the read sizes tell them" : "");
        note(f, text);
    }
}

static int generations_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double ymax_ttft = gen_ymax(runs, nruns, "ttft_ms", "ttft_best_ms", "ttft_median_ms", "ttft_p90_ms");
    double ymax_tok = gen_ymax(runs, nruns, "tokens_per_s", "tokens_best_per_s", "tokens_median_per_s",
                               "tokens_p90_per_s");
    size_t i, k;
    char buf[64], b2[64], b3[64];
    section_begin(f, "generations", "TTFT and tokens/s per generation", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *g = tab(&runs[i], "generations"), *sp = tab(&runs[i], "generation_spread");
        double v;
        run_begin(f, &runs[i], nruns);
        if (g == NULL || g->nrows == 0) {
            note(f, "No generations: the trace has no phases.");
            fputs("</div>\n", f);
            continue;
        }
        if (sp && sp->nrows) {
            fputs("<p class=\"spread\"", f);
            html_row_data(f, sp, 0, runs[i].run);
            fprintf(f, ">%.0f generations (%s); best / median / p90 over the %.0f ", num(sp, 0, "generations"),
                    strcmp(str(sp, 0, "time_base"), "gpu") == 0 ? "GPU time" : "host wall-clock between host syncs",
                    num(sp, 0, "generations_counted"));
            fputs(num(sp, 0, "generations_counted") < num(sp, 0, "generations") ? "with at least two decode steps"
                                                                               : "counted",
                  f);
            if (html_cell_num(sp, 0, "ttft_best_ms", &v))
                fprintf(f, ": TTFT %s / %s / %s", html_ms(v, buf, sizeof buf),
                        html_ms(num(sp, 0, "ttft_median_ms"), b2, sizeof b2),
                        html_ms(num(sp, 0, "ttft_p90_ms"), b3, sizeof b3));
            if (html_cell_num(sp, 0, "tokens_best_per_s", &v))
                fprintf(f, "; tokens/s %.1f / %.1f / %.1f", v, num(sp, 0, "tokens_median_per_s"),
                        num(sp, 0, "tokens_p90_per_s"));
            fputs(".</p>\n", f);
            for (k = 0; k < sp->nnotes; k++)
                note(f, sp->notes[k]);
        }
        fputs("<h3>TTFT</h3>\n", f);
        first_token_note(f, g);
        if (gen_chart(f, &runs[i], "ttft_ms", "TTFT (ms)", ymax_ttft, width, "#4e79a7", 1) != 0)
            return -1;
        fputs("<h3>Tokens per second (steady decode)</h3>\n", f);
        if (gen_chart(f, &runs[i], "tokens_per_s", "tokens/s", ymax_tok, width, "#f28e2b", 0) != 0)
            return -1;
        note(f, "Rings: generations not counted in the bests (fewer than two decode steps, like a warm-up). "
                "Dashed: best, median and p90 (p90: the value 9 in 10 counted generations do at least as well as).");
        if (g->nrows > HTML_MAX_POINTS)
            fprintf(f, "<p class=\"note\">%zu generations: the line has no marker per generation.</p>\n", g->nrows);
        details_table(f, g, "Generations");
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- the serving loop ------------------------------------------------------------------------------ */

/* Fills of the iteration kinds (serving --csv's kind). */
static const char *kind_fill(const char *kind)
{
    if (strcmp(kind, "decode") == 0)
        return "#4e79a7";
    if (strcmp(kind, "mixed") == 0)
        return "#f28e2b";
    if (strcmp(kind, "prompt") == 0)
        return "#e15759";
    return "#bab0ac";
}

#define GAP_BINS 10

/* The host gaps' distribution: GAP_BINS bins of equal width from 0 to
 * the runs' largest gap (nice), a bar each with its count. */
static int gap_histogram(FILE *f, const struct rtable *it, double gmax, int width, const char *run)
{
    struct html_bar bars[GAP_BINS];
    struct html_chart_opts o = {width, 0, 0, run, "chart-gaps-serving"};
    char labels[GAP_BINS][96], texts[GAP_BINS][48], a[32], b[32];
    size_t counts[GAP_BINS] = {0}, r, k, n = 0;
    double v;
    for (r = 0; r < it->nrows; r++)
        if (html_cell_num(it, r, "gap_ms", &v)) {
            k = gmax > 0 ? (size_t)(v / gmax * GAP_BINS) : 0;
            counts[k < GAP_BINS ? k : GAP_BINS - 1]++;
            n++;
        }
    if (n == 0) {
        note(f, "No host gaps: no session has two iterations.");
        return 0;
    }
    for (k = 0; k < GAP_BINS; k++) {
        snprintf(labels[k], sizeof labels[k], "%s to %s", html_ms(gmax * (double)k / GAP_BINS, a, sizeof a),
                 html_ms(gmax * (double)(k + 1) / GAP_BINS, b, sizeof b));
        snprintf(texts[k], sizeof texts[k], "%zu gap%s", counts[k], counts[k] == 1 ? "" : "s");
        memset(&bars[k], 0, sizeof bars[k]);
        bars[k].label = labels[k];
        bars[k].value_text = texts[k];
        bars[k].value = (double)counts[k];
        bars[k].fill = html_palette(2);
    }
    html_bar_chart(f, bars, GAP_BINS, &o);
    return 0;
}

/* Iterations over time coloured by kind, and the host gaps' distribution;
 * only when a run has a serving loop (ITERATION ranges). */
static int serving_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    static const char *const kinds[] = {"decode", "mixed", "prompt", "unknown"};
    const char *fills[4];
    double xmax = 0, ymax = 0, gmax = 0, v, b, h;
    size_t i, r, any = 0;
    char buf[64], b2[64], b3[64];
    for (i = 0; i < nruns; i++) {
        const struct rtable *it = tab(&runs[i], "iterations");
        for (r = 0; it && r < it->nrows; r++) {
            any++;
            b = num(it, r, "begin_ms");
            h = num(it, r, "host_ms");
            if (b + h > xmax)
                xmax = b + h;
            if (!html_cell_num(it, r, "gpu_ms", &v))
                v = h;
            if (v > ymax)
                ymax = v;
            if (html_cell_num(it, r, "gap_ms", &v) && v > gmax)
                gmax = v;
        }
    }
    if (any == 0)
        return 0;
    xmax = html_nice_ceil(xmax);
    ymax = html_nice_ceil(ymax * 1.05);
    gmax = html_nice_ceil(gmax);
    for (i = 0; i < 4; i++)
        fills[i] = kind_fill(kinds[i]);
    section_begin(f, "serving", "Serving loop: iterations over time, host gaps", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *it = tab(&runs[i], "iterations"), *sm = tab(&runs[i], "serving_summary");
        const struct rtable *bk = tab(&runs[i], "serving_by_kind");
        struct html_span *sp;
        struct html_time_opts o;
        char(*tips)[160];
        int gpu = 0;
        run_begin(f, &runs[i], nruns);
        if (it == NULL || it->nrows == 0) {
            note(f, "No serving loop: the trace has no ITERATION ranges.");
            fputs("</div>\n", f);
            continue;
        }
        for (r = 0; r < it->nrows; r++)
            gpu |= html_cell_num(it, r, "gpu_ms", &v);
        if (sm && sm->nrows) {
            fputs("<p class=\"spread\"", f);
            html_row_data(f, sm, 0, runs[i].run);
            fprintf(f, ">%.0f iterations in %.0f session%s (%s); host gap before an iteration p50 / p90 / p99: %s / %s / "
                       "%s, %.1f%% of the wall time",
                    num(sm, 0, "iterations"), num(sm, 0, "sessions"), num(sm, 0, "sessions") == 1 ? "" : "s",
                    gpu ? "GPU time where measured" : "host time: no GPU time", html_ms(num(sm, 0, "gap_p50_ms"), buf, sizeof buf),
                    html_ms(num(sm, 0, "gap_p90_ms"), b2, sizeof b2), html_ms(num(sm, 0, "gap_p99_ms"), b3, sizeof b3),
                    num(sm, 0, "gap_share_pct"));
            if (html_cell_num(sm, 0, "gpu_idle_share_pct", &v))
                fprintf(f, "; GPU idle between iterations %s, %.1f%% of the GPU wall time",
                        html_ms(num(sm, 0, "gpu_idle_total_ms"), buf, sizeof buf), v);
            else
                fputs("; GPU idle between iterations n/a (no GPU time)", f);
            if (html_cell_num(sm, 0, "tokens_per_s", &v))
                fprintf(f, "; %.1f tokens/s fed (estimated)", v);
            if (html_cell_num(sm, 0, "generated_per_s", &v))
                fprintf(f, ", %.1f generated/s", v);
            fputs(". No per-request TTFT.</p>\n", f);
        }
        if (bk && bk->nrows) {
            fputs("<p class=\"note\">Iteration time p50 / p90 / p99 by kind:", f);
            for (r = 0; r < bk->nrows; r++)
                fprintf(f, "%s %s (%.0f) %s / %s / %s", r ? ";" : "", str(bk, r, "kind"), num(bk, r, "iterations"),
                        html_ms(num(bk, r, gpu ? "gpu_p50_ms" : "host_p50_ms"), buf, sizeof buf),
                        html_ms(num(bk, r, gpu ? "gpu_p90_ms" : "host_p90_ms"), b2, sizeof b2),
                        html_ms(num(bk, r, gpu ? "gpu_p99_ms" : "host_p99_ms"), b3, sizeof b3));
            fprintf(f, " (%s).</p>\n", gpu ? "GPU spans" : "host spans");
        }
        fputs("<h3>Iterations over time</h3>\n", f);
        html_legend(f, kinds, fills, 4);
        sp = calloc(it->nrows, sizeof *sp);
        tips = calloc(it->nrows, sizeof *tips);
        if (sp == NULL || tips == NULL) {
            free(sp);
            free(tips);
            return -1;
        }
        for (r = 0; r < it->nrows; r++) {
            sp[r].x0 = num(it, r, "begin_ms");
            sp[r].x1 = sp[r].x0 + num(it, r, "host_ms");
            if (!html_cell_num(it, r, "gpu_ms", &sp[r].y))
                sp[r].y = num(it, r, "host_ms");
            sp[r].fill = kind_fill(str(it, r, "kind"));
            snprintf(tips[r], sizeof tips[r], "generation %.0f, ITERATION/%.0f: %s, host %s%s%s", num(it, r, "generation"),
                     num(it, r, "iteration"), str(it, r, "kind"), html_ms(num(it, r, "host_ms"), buf, sizeof buf),
                     html_cell_num(it, r, "gpu_ms", &v) ? ", GPU " : "",
                     html_cell_num(it, r, "gpu_ms", &v) ? html_ms(v, b2, sizeof b2) : "");
            sp[r].tip = tips[r];
            sp[r].tb = it;
            sp[r].row = r;
        }
        memset(&o, 0, sizeof o);
        o.width = width;
        o.height = 240;
        o.xmax = xmax;
        o.ymax = ymax;
        o.x_title = "ms after the trace's start (each bar: an iteration's host span)";
        o.y_title = gpu ? "iteration time (ms; GPU span where measured, else host span)" : "iteration time (ms, host span)";
        o.run = runs[i].run;
        o.cls = "chart-iterations";
        html_time_chart(f, sp, it->nrows, &o);
        free(sp);
        free(tips);
        if (it->nrows > HTML_MAX_SPANS)
            fprintf(f, "<p class=\"note\">The first %d of %zu iterations are drawn.</p>\n", HTML_MAX_SPANS, it->nrows);
        note(f, "Kinds from the stream (estimated): decode, every sequence fed one token (tokens = sampled "
                "sequences); prompt, more tokens than sequences and none decoding; mixed, more tokens while sequences "
                "may decode. docs/serving.md.");
        fputs("<h3>Host gaps before the iterations</h3>\n", f);
        if (gap_histogram(f, it, gmax, width, runs[i].run) != 0)
            return -1;
        for (r = 0; sm && r < sm->nnotes; r++)
            note(f, sm->notes[r]);
        details_table(f, it, "Iterations");
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- kernels ------------------------------------------------------------------------------------ */

static int kernels_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double max = runs_max(runs, nruns, "cuda_gpu_kern_sum", "total_ns", TOP_ROWS + 1);
    size_t i, r;
    char text[192], b1[64], b2[64], rest[64];
    section_begin(f, "kernels", "Top kernels", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *tb = tab(&runs[i], "cuda_gpu_kern_sum");
        struct html_chart_opts o = {width, max, 0, runs[i].run, "chart-kernels"};
        struct html_bar *bars;
        size_t n, shown;
        run_begin(f, &runs[i], nruns);
        if (tb == NULL || tb->nrows == 0) {
            note(f, "No kernel launches recorded.");
            fputs("</div>\n", f);
            continue;
        }
        shown = shown_rows(tb->nrows);
        n = shown + (shown < tb->nrows);
        bars = calloc(n, sizeof *bars);
        if (bars == NULL)
            return -1;
        for (r = 0; r < shown; r++) {
            snprintf(text, sizeof text, "%s" DOT "%.1f%%" DOT "%.0f\xc3\x97 avg %s",
                     html_ns(num(tb, r, "total_ns"), b1, sizeof b1), num(tb, r, "time_pct"),
                     num(tb, r, "instances"), html_ns(num(tb, r, "avg_ns"), b2, sizeof b2));
            bars[r].label = str(tb, r, "name");
            bars[r].value = num(tb, r, "total_ns");
            bars[r].value_text = strdup(text);
            bars[r].fill = html_palette(0);
            bars[r].tb = tb;
            bars[r].row = r;
        }
        if (shown < tb->nrows) {
            double total = 0, pct = 0, count = 0;
            for (r = shown; r < tb->nrows; r++) {
                total += num(tb, r, "total_ns");
                pct += num(tb, r, "time_pct");
                count += num(tb, r, "instances");
            }
            snprintf(rest, sizeof rest, "(%zu other kernels)", tb->nrows - shown);
            snprintf(text, sizeof text, "%s" DOT "%.1f%%" DOT "%.0f\xc3\x97", html_ns(total, b1, sizeof b1), pct,
                     count);
            bars[shown].label = rest;
            bars[shown].value = total;
            bars[shown].value_text = strdup(text);
            bars[shown].fill = html_palette(9);
        }
        fputs("<p class=\"note\">", f);
        html_esc(f, tb->title);
        fputs("; by total time.</p>\n", f);
        html_bar_chart(f, bars, n, &o);
        for (r = 0; r < tb->nnotes; r++)
            note(f, tb->notes[r]);
        details_table(f, tb, "All kernels");
        for (r = 0; r < n; r++)
            free((char *)bars[r].value_text);
        free(bars);
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- gaps ------------------------------------------------------------------------------------------ */

static int gaps_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double lmax = runs_max(runs, nruns, "launch_gaps", "max_ns", (size_t)-1);
    size_t i, r;
    char text[192], b1[64], b2[64], b3[64], label[96];
    section_begin(f, "gaps", "Where the GPU waits: device idle gaps, launch gaps, synchronisation", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *dg = tab(&runs[i], "device_gaps"), *lg = tab(&runs[i], "launch_gaps"),
                            *ss = tab(&runs[i], "sync_share");
        struct html_chart_opts share = {width, 100.0, 1, runs[i].run, "chart-device-gaps"};
        struct html_chart_opts lopt = {width, lmax, 0, runs[i].run, "chart-launch-gaps"};
        run_begin(f, &runs[i], nruns);

        fputs("<h3>Device idle time per stream (share of the stream's span, first begin to last end)</h3>\n", f);
        if (dg == NULL || dg->nrows == 0) {
            note(f, dg && dg->empty ? dg->empty : "none");
        } else {
            struct html_bar *bars = calloc(dg->nrows, sizeof *bars);
            char **labels = calloc(dg->nrows, sizeof *labels);
            if (bars == NULL || labels == NULL) {
                free(bars);
                free(labels);
                return -1;
            }
            for (r = 0; r < dg->nrows; r++) {
                snprintf(label, sizeof label, "GPU %.0f stream %.0f" DOT "%.0f items", num(dg, r, "device"),
                         num(dg, r, "stream"), num(dg, r, "work_items"));
                snprintf(text, sizeof text, "%.1f%% idle" DOT "%.0f/%.0f gaps > 0" DOT "max %s",
                         num(dg, r, "gap_pct"), num(dg, r, "idle_gaps"), num(dg, r, "gaps"),
                         html_ns(num(dg, r, "max_ns"), b1, sizeof b1));
                labels[r] = strdup(label);
                bars[r].label = labels[r] ? labels[r] : "";
                bars[r].value = num(dg, r, "gap_pct");
                bars[r].value_text = strdup(text);
                bars[r].fill = html_palette(3);
                bars[r].tb = dg;
                bars[r].row = r;
            }
            html_bar_chart(f, bars, dg->nrows, &share);
            for (r = 0; r < dg->nrows; r++) {
                free(labels[r]);
                free((char *)bars[r].value_text);
            }
            free(labels);
            free(bars);
        }

        fputs("<h3>Host time between launches, per thread (end of one launch call to the next's begin)</h3>\n", f);
        if (lg == NULL || lg->nrows == 0) {
            note(f, lg && lg->empty ? lg->empty : "none");
        } else {
            struct html_range *rg = calloc(lg->nrows, sizeof *rg);
            char **labels = calloc(lg->nrows, sizeof *labels), **texts = calloc(lg->nrows, sizeof *texts);
            if (rg == NULL || labels == NULL || texts == NULL) {
                free(rg);
                free(labels);
                free(texts);
                return -1;
            }
            for (r = 0; r < lg->nrows; r++) {
                double med = 0, p90 = 0;
                snprintf(label, sizeof label, "tid %.0f" DOT "%.0f launches", num(lg, r, "tid"),
                         num(lg, r, "launches"));
                rg[r].has_quantiles = html_cell_num(lg, r, "med_ns", &med) && html_cell_num(lg, r, "p90_ns", &p90);
                rg[r].median = med;
                rg[r].p90 = p90;
                rg[r].avg = num(lg, r, "avg_ns");
                rg[r].max = num(lg, r, "max_ns");
                if (rg[r].has_quantiles)
                    snprintf(text, sizeof text, "med %s" DOT "p90 %s" DOT "max %s", html_ns(med, b1, sizeof b1),
                             html_ns(p90, b2, sizeof b2), html_ns(rg[r].max, b3, sizeof b3));
                else
                    snprintf(text, sizeof text, "no gap");
                labels[r] = strdup(label);
                texts[r] = strdup(text);
                rg[r].label = labels[r] ? labels[r] : "";
                rg[r].value_text = texts[r];
                rg[r].tb = lg;
                rg[r].row = r;
            }
            html_range_chart(f, rg, lg->nrows, &lopt);
            note(f, "Line: 0 to the longest gap; box: median to p90; diamond: the average. CUDA graphs remove "
                    "this time.");
            for (r = 0; r < lg->nrows; r++) {
                free(labels[r]);
                free(texts[r]);
            }
            free(labels);
            free(texts);
            free(rg);
        }

        fputs("<h3>Synchronisation share of wall time (host time in the *Synchronize APIs)</h3>\n", f);
        if (ss == NULL || ss->nrows == 0) {
            note(f, "No calls.");
        } else {
            struct html_chart_opts so = {width, 100.0, 1, runs[i].run, "chart-sync"};
            struct html_bar *bars = calloc(ss->nrows, sizeof *bars);
            char **texts = calloc(ss->nrows, sizeof *texts);
            if (bars == NULL || texts == NULL) {
                free(bars);
                free(texts);
                return -1;
            }
            for (r = 0; r < ss->nrows; r++) {
                snprintf(text, sizeof text, "%.3f%%" DOT "%.0f calls" DOT "%s", num(ss, r, "wall_pct"),
                         num(ss, r, "calls"), html_ns(num(ss, r, "total_ns"), b1, sizeof b1));
                texts[r] = strdup(text);
                bars[r].label = str(ss, r, "api");
                bars[r].value = num(ss, r, "wall_pct");
                bars[r].value_text = texts[r];
                bars[r].fill = html_palette(3);
                bars[r].tb = ss;
                bars[r].row = r;
            }
            html_bar_chart(f, bars, ss->nrows, &so);
            for (r = 0; r < ss->nnotes; r++)
                note(f, ss->notes[r]);
            for (r = 0; r < ss->nrows; r++)
                free(texts[r]);
            free(texts);
            free(bars);
        }
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- copies --------------------------------------------------------------------------------------- */

static int copies_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double smax = runs_max(runs, nruns, "cuda_gpu_mem_size_sum", "total_mb", (size_t)-1);
    double tmax = runs_max(runs, nruns, "cuda_gpu_mem_time_sum", "total_ns", (size_t)-1);
    size_t i, r, k;
    char text[192], b1[64], b2[64];
    section_begin(f, "copies", "Copies by direction, and memsets", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *sz = tab(&runs[i], "cuda_gpu_mem_size_sum"), *tm = tab(&runs[i], "cuda_gpu_mem_time_sum");
        struct html_chart_opts so = {width, smax, 0, runs[i].run, "chart-copy-bytes"};
        struct html_chart_opts to = {width, tmax, 0, runs[i].run, "chart-copy-time"};
        struct html_bar *bars;
        size_t n = (sz ? sz->nrows : 0) + (tm ? tm->nrows : 0);
        run_begin(f, &runs[i], nruns);
        if (n == 0) {
            note(f, "No copies or memsets recorded.");
            fputs("</div>\n", f);
            continue;
        }
        bars = calloc(n, sizeof *bars);
        if (bars == NULL)
            return -1;
        fputs("<h3>Bytes by operation</h3>\n", f);
        for (r = 0; sz && r < sz->nrows; r++) {
            snprintf(text, sizeof text, "%s" DOT "%.0f op%s", html_bytes(num(sz, r, "total_mb") * 1e6, b1, sizeof b1),
                     num(sz, r, "count"), num(sz, r, "count") == 1 ? "" : "s");
            bars[r].label = str(sz, r, "operation");
            bars[r].value = num(sz, r, "total_mb");
            bars[r].value_text = strdup(text);
            bars[r].fill = html_palette(html_name_colour(bars[r].label));
            bars[r].tb = sz;
            bars[r].row = r;
        }
        if (sz && sz->nrows)
            html_bar_chart(f, bars, sz->nrows, &so);
        fputs("<h3>Time by operation</h3>\n", f);
        if (tm)
            for (r = 0, k = sz ? sz->nrows : 0; r < tm->nrows; r++, k++) {
                const char *op = str(tm, r, "operation");
                double bytes = 0, ns = num(tm, r, "total_ns");
                size_t j;
                for (j = 0; sz && j < sz->nrows; j++)
                    if (strcmp(str(sz, j, "operation"), op) == 0)
                        bytes = num(sz, j, "total_mb") * 1e6;
                if (ns > 0 && bytes > 0)
                    snprintf(text, sizeof text, "%s" DOT "%.1f%%" DOT "%.2f GB/s", html_ns(ns, b1, sizeof b1),
                             num(tm, r, "time_pct"), bytes / ns);
                else
                    snprintf(text, sizeof text, "%s" DOT "%.1f%%", html_ns(ns, b2, sizeof b2), num(tm, r, "time_pct"));
                bars[k].label = op;
                bars[k].value = ns;
                bars[k].value_text = strdup(text);
                bars[k].fill = html_palette(html_name_colour(op));
                bars[k].tb = tm;
                bars[k].row = r;
            }
        if (tm && tm->nrows) {
            fputs("<p class=\"note\">", f);
            html_esc(f, tm->title);
            fputs("</p>\n", f);
            html_bar_chart(f, bars + (sz ? sz->nrows : 0), tm->nrows, &to);
            for (r = 0; r < tm->nnotes; r++)
                note(f, tm->notes[r]);
        } else {
            note(f, tm && tm->empty ? tm->empty : "none");
        }
        for (r = 0; r < n; r++)
            free((char *)bars[r].value_text);
        free(bars);
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- API calls ------------------------------------------------------------------------------------ */

static unsigned kind_of(const char *name)
{
    unsigned k;
    for (k = 0; k < OBS_KIND_COUNT; k++)
        if (strcmp(obs_call_kind_name(k), name) == 0)
            return k;
    return OBS_KIND_NONE;
}

static int apis_section(FILE *f, const struct run *runs, size_t nruns, int width)
{
    double max = runs_max(runs, nruns, "api_calls", "calls", TOP_ROWS + 1);
    size_t i, r;
    char text[192], b1[64], rest[64];
    static const unsigned fills[OBS_KIND_COUNT] = {9, 0, 1, 5, 3, 6, 4};
    section_begin(f, "apis", "API calls", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *tb = tab(&runs[i], "api_calls");
        struct html_chart_opts o = {width, max, 0, runs[i].run, "chart-apis"};
        struct html_bar *bars;
        size_t shown, n;
        run_begin(f, &runs[i], nruns);
        if (tb == NULL || tb->nrows == 0) {
            note(f, "No calls recorded.");
            fputs("</div>\n", f);
            continue;
        }
        shown = shown_rows(tb->nrows);
        n = shown + (shown < tb->nrows);
        bars = calloc(n, sizeof *bars);
        if (bars == NULL)
            return -1;
        for (r = 0; r < shown; r++) {
            unsigned k = kind_of(str(tb, r, "kind"));
            snprintf(text, sizeof text, "%.0f call%s" DOT "%s in all", num(tb, r, "calls"),
                     num(tb, r, "calls") == 1 ? "" : "s", html_ns(num(tb, r, "total_ns"), b1, sizeof b1));
            bars[r].label = str(tb, r, "api");
            bars[r].value = num(tb, r, "calls");
            bars[r].value_text = strdup(text);
            bars[r].fill = html_palette(fills[k < OBS_KIND_COUNT ? k : 0]);
            bars[r].tb = tb;
            bars[r].row = r;
        }
        if (shown < tb->nrows) {
            double calls = 0, ns = 0;
            for (r = shown; r < tb->nrows; r++) {
                calls += num(tb, r, "calls");
                ns += num(tb, r, "total_ns");
            }
            snprintf(rest, sizeof rest, "(%zu other APIs)", tb->nrows - shown);
            snprintf(text, sizeof text, "%.0f calls" DOT "%s in all", calls, html_ns(ns, b1, sizeof b1));
            bars[shown].label = rest;
            bars[shown].value = calls;
            bars[shown].value_text = strdup(text);
            bars[shown].fill = html_palette(9);
        }
        note(f, "Most called first; host time (from the call's begin to its return).");
        html_bar_chart(f, bars, n, &o);
        details_table(f, tb, "All APIs");
        for (r = 0; r < n; r++)
            free((char *)bars[r].value_text);
        free(bars);
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- timeline -------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The generation to draw: o's, else the counted one with the median TTFT
 * (the lower middle one), else the last. Returns its row, or -1. */
static long pick_generation(const struct rtable *g, const struct html_options *o)
{
    size_t r, n = 0;
    long best = -1;
    double *v;
    if (g == NULL || g->nrows == 0)
        return -1;
    if (o && o->has_generation) {
        for (r = 0; r < g->nrows; r++)
            if (num(g, r, "generation") == (double)o->generation)
                return (long)r;
        return -1;
    }
    v = malloc(g->nrows * sizeof *v);
    if (v == NULL)
        return (long)g->nrows - 1;
    for (r = 0; r < g->nrows; r++) {
        double x;
        if (num(g, r, "in_best") != 0 && html_cell_num(g, r, "ttft_ms", &x))
            v[n++] = x;
    }
    qsort(v, n, sizeof *v, cmp_double);
    if (n) {
        double med = v[(n - 1) / 2], x;
        for (r = 0; r < g->nrows && best < 0; r++)
            if (num(g, r, "in_best") != 0 && html_cell_num(g, r, "ttft_ms", &x) && x == med)
                best = (long)r;
    }
    free(v);
    return best >= 0 ? best : (long)g->nrows - 1;
}

static int timeline_section(FILE *f, const struct run *runs, size_t nruns, int width, const struct html_options *o)
{
    struct html_timeline tl[2];
    long row[2];
    uint64_t hscale = 0, dscale = 0;
    size_t i;
    char buf[64], b2[64];

    for (i = 0; i < nruns; i++) {
        const struct rtable *g = tab(&runs[i], "generations");
        row[i] = pick_generation(g, o);
        if (row[i] >= 0 && html_timeline_find(runs[i].t, (uint32_t)num(g, (size_t)row[i], "tid"),
                                              (uint32_t)num(g, (size_t)row[i], "generation"), &tl[i]) != 0)
            row[i] = -1;
        if (row[i] >= 0 && tl[i].host_end - tl[i].host_begin > hscale)
            hscale = tl[i].host_end - tl[i].host_begin;
        if (row[i] >= 0 && tl[i].dev_end - tl[i].dev_begin > dscale)
            dscale = tl[i].dev_end - tl[i].dev_begin;
    }
    section_begin(f, "timeline", "Timeline of one generation", nruns);
    for (i = 0; i < nruns; i++) {
        const struct rtable *g = tab(&runs[i], "generations");
        double v;
        run_begin(f, &runs[i], nruns);
        if (row[i] < 0) {
            if (o && o->has_generation)
                fprintf(f, "<p class=\"note\">No generation %u in this run.</p>\n", o->generation);
            else
                note(f, "No generations: the trace has no phases.");
            fputs("</div>\n", f);
            continue;
        }
        fputs("<p class=\"tl-head\"", f);
        html_row_data(f, g, (size_t)row[i], runs[i].run);
        fprintf(f, ">Generation %u of thread %u%s: ", tl[i].generation, runs[i].t->threads[tl[i].thread].tid,
                o && o->has_generation ? "" : " (the median TTFT)");
        if (html_cell_num(g, (size_t)row[i], "ttft_ms", &v))
            fprintf(f, "TTFT %s (to %s)", html_ms(v, buf, sizeof buf),
                    ttft_to_words(str(g, (size_t)row[i], "ttft_to")));
        else
            fprintf(f, "TTFT n/a (to %s)", ttft_to_words(str(g, (size_t)row[i], "ttft_to")));
        if (html_cell_num(g, (size_t)row[i], "tokens_per_s", &v))
            fprintf(f, ", %.1f tokens/s", v);
        fprintf(f, ", %.0f decode steps, %llu calls, %llu kernel launches; first call to last end %s.</p>\n",
                num(g, (size_t)row[i], "decode_steps"), (unsigned long long)tl[i].calls,
                (unsigned long long)tl[i].kernels,
                html_ns((double)(tl[i].host_end - tl[i].host_begin), b2, sizeof b2));
        if (tl[i].own_device_axis)
            note(f, "The device clock does not line up with the host's in this trace (most GPU work begins before "
                    "the call that launched it: a simulated or unsynchronised clock), so the GPU lanes have an axis "
                    "of their own.");
        if (html_timeline_draw(f, runs[i].t, &tl[i], width, hscale, dscale, runs[i].run) != 0)
            return -1;
        fputs("</div>\n", f);
    }
    section_end(f);
    return 0;
}

/* ---- the page ---------------------------------------------------------------------------------------- */

int report_html(FILE *f, struct obs_trace *const *t, size_t nruns, const struct html_options *o)
{
    struct run runs[2];
    struct report_doc cmp;
    int width = nruns > 1 ? 560 : 1100, rc = -1;
    size_t i;
    char title[512];

    if (nruns < 1 || nruns > 2) {
        errno = EINVAL;
        return -1;
    }
    memset(runs, 0, sizeof runs);
    memset(&cmp, 0, sizeof cmp);
    rdoc_begin(&cmp, NULL, REPORT_KEEP);
    for (i = 0; i < nruns; i++) {
        runs[i].t = t[i];
        runs[i].run = nruns > 1 ? (i ? "b" : "a") : NULL;
        runs[i].name = i ? "B" : "A";
        rdoc_begin(&runs[i].sum, NULL, REPORT_KEEP);
        rdoc_begin(&runs[i].gaps, NULL, REPORT_KEEP);
        rdoc_begin(&runs[i].serv, NULL, REPORT_KEEP);
        if (report_summary(t[i], NULL, &runs[i].sum) != 0 || rdoc_end(&runs[i].sum) != 0 ||
            report_gaps(t[i], NULL, &runs[i].gaps) != 0 || rdoc_end(&runs[i].gaps) != 0 ||
            report_serving(t[i], NULL, &runs[i].serv) != 0 || rdoc_end(&runs[i].serv) != 0)
            goto done;
    }
    if (nruns > 1 && (report_compare(t[0], t[1], &cmp) != 0 || rdoc_end(&cmp) != 0))
        goto done;

    if (nruns > 1)
        snprintf(title, sizeof title, "obs-report: %s vs %s", t[0]->path, t[1]->path);
    else
        snprintf(title, sizeof title, "obs-report: %s", t[0]->path);
    html_page_begin(f, title);
    fputs("<header>\n<h1>", f);
    html_esc(f, title);
    fputs("</h1>\n", f);
    for (i = 0; i < nruns; i++) {
        fprintf(f, "<p class=\"muted\">%s<span class=\"mono\">", nruns > 1 ? (i ? "B: " : "A: ") : "");
        html_esc(f, t[i]->path);
        fprintf(f, "</span>: pid %u, %zu calls, %zu thread%s</p>\n", t[i]->pid, t[i]->ncalls, t[i]->nthreads,
                t[i]->nthreads == 1 ? "" : "s");
    }
    fputs("</header>\n", f);
    overview(f, runs, nruns);
    if (nruns > 1)
        compare_section(f, &cmp);
    if (phases_section(f, runs, nruns, width) != 0 || layers_section(f, runs, nruns, width) != 0 ||
        generations_section(f, runs, nruns, width) != 0 || serving_section(f, runs, nruns, width) != 0 ||
        kernels_section(f, runs, nruns, width) != 0 || gaps_section(f, runs, nruns, width) != 0 ||
        copies_section(f, runs, nruns, width) != 0 || apis_section(f, runs, nruns, width) != 0 ||
        timeline_section(f, runs, nruns, width, o) != 0)
        goto done;
    fprintf(f,
            "<footer>Written by obs-report %s (obsshim). A single page with no script and nothing loaded from "
            "elsewhere. "
            "The numbers are those of <code>obs-report summary --format json</code> and <code>obs-report gaps "
            "--format json</code> of the same trace%s; each chart item carries its report row as data- "
            "attributes.</footer>\n",
            PACKAGE_VERSION, nruns > 1 ? "s (and <code>compare --format json</code>)" : "");
    html_page_end(f);
    rc = 0;
done:
    for (i = 0; i < nruns; i++) {
        rdoc_free(&runs[i].sum);
        rdoc_free(&runs[i].gaps);
        rdoc_free(&runs[i].serv);
    }
    rdoc_free(&cmp);
    if (rc != 0 && errno == 0)
        errno = ENOMEM;
    return rc;
}
