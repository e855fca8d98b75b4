/* obs-report html: charts as inline SVG (see html_charts.h). Text is drawn
 * at 12 units (about 6.6 units a character), which sets how much of a
 * label fits. */
#include "html_charts.h"

#include <math.h>
#include <string.h>

#include "html_out.h"

#define CHAR_W 6.6
#define BAR_ROW 34      /* label line + bar */

/* Characters of UTF-8 text (continuation bytes not counted). */
static size_t text_chars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* Room right of the longest bar for the longest value text: between 90
 * units and half the chart. In a comparison (run set) a fixed share, so
 * that both runs' bars have the same span and their lengths compare. */
static double value_room(int width, size_t max_chars, const char *run)
{
    double room = (double)max_chars * CHAR_W + 14;
    if (run)
        return width * 0.5;
    if (room < 90)
        room = 90;
    return room > width * 0.5 ? width * 0.5 : room;
}

double html_nice_ceil(double v)
{
    double p, m;
    if (!(v > 0) || !isfinite(v))
        return 1.0;
    p = pow(10.0, floor(log10(v)));
    m = v / p;
    if (m <= 1.0 + 1e-9)
        return p;
    if (m <= 2.0 + 1e-9)
        return 2 * p;
    if (m <= 2.5 + 1e-9)
        return 2.5 * p;
    if (m <= 5.0 + 1e-9)
        return 5 * p;
    return 10 * p;
}

static void svg_begin(FILE *f, int w, int h, const char *cls, const char *run)
{
    fprintf(f, "<svg viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\"", w, h, w, h);
    if (cls)
        fprintf(f, " class=\"%s\"", cls);
    if (run)
        fprintf(f, " data-run=\"%s\"", run);
    fputs(">\n", f);
}

static void tip(FILE *f, const char *text)
{
    fputs("<title>", f);
    html_esc(f, text);
    fputs("</title>", f);
}

void html_bar_chart(FILE *f, const struct html_bar *bars, size_t n, const struct html_chart_opts *o)
{
    int w = o->width, h = (int)n * BAR_ROW + 6;
    double span, max = o->max;
    size_t i, label_chars = (size_t)((w - 8) / CHAR_W), room = 0;

    for (i = 0; i < n; i++) {
        if (!(o->max > 0) && bars[i].value > max)
            max = bars[i].value;
        if (text_chars(bars[i].value_text) > room)
            room = text_chars(bars[i].value_text);
    }
    span = w - value_room(w, room, o->run) - 8;
    if (!(max > 0))
        max = 1.0;
    svg_begin(f, w, h, o->cls, o->run);
    for (i = 0; i < n; i++) {
        const struct html_bar *b = &bars[i];
        double y = (double)i * BAR_ROW, len = span * (b->value > 0 ? b->value : 0) / max;
        if (len > span)
            len = span;
        if (b->value > 0 && len < 1)
            len = 1; /* something there: visible */
        fputs("<g class=\"bar\"", f);
        if (b->tb)
            html_row_data(f, b->tb, b->row, o->run);
        fputs(">", f);
        tip(f, b->tip ? b->tip : b->label);
        fprintf(f, "<text x=\"4\" y=\"%.1f\">", y + 12);
        html_esc_cut(f, b->label, label_chars);
        fputs("</text>", f);
        if (o->track)
            fprintf(f, "<rect class=\"track\" x=\"4\" y=\"%.1f\" width=\"%.1f\" height=\"13\" rx=\"2\"/>", y + 16,
                    span);
        fprintf(f, "<rect x=\"4\" y=\"%.1f\" width=\"%.2f\" height=\"13\" rx=\"2\" fill=\"%s\"/>", y + 16, len,
                b->fill ? b->fill : html_palette(0));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", 4 + (o->track ? span : len) + 6, y + 27);
        html_esc(f, b->value_text ? b->value_text : "");
        fputs("</text></g>\n", f);
    }
    fputs("</svg>\n", f);
}

void html_heat_map(FILE *f, const double *value, size_t nrows, size_t ncols, const struct html_heat_opts *o)
{
    const double left = 76, top = 22;
    double cw = ncols ? (o->width - left - 8) / (double)ncols : 1, ch = 16, max = 0;
    int h = (int)(top + ch * (double)nrows + 8);
    size_t r, c, every = ncols > 0 ? (size_t)ceil(40.0 / cw) : 1;
    char text[160], num[32], lab[64];
    if (cw > 40)
        cw = 40;
    for (r = 0; r < nrows * ncols; r++)
        if (!isnan(value[r]) && value[r] > max)
            max = value[r];
    svg_begin(f, o->width, h, o->cls, o->run);
    fprintf(f, "<text x=\"%.1f\" y=\"12\">", left);
    html_esc(f, o->col_title ? o->col_title : "");
    fputs("</text>\n", f);
    for (c = 0; c < ncols; c += every ? every : 1) {
        snprintf(lab, sizeof lab, o->col_fmt, c);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"small\">", left + cw * (double)c, top - 2);
        html_esc(f, lab);
        fputs("</text>", f);
    }
    for (r = 0; r < nrows; r++) {
        snprintf(lab, sizeof lab, o->row_fmt, r);
        fprintf(f, "\n<text x=\"4\" y=\"%.1f\">", top + ch * (double)r + 12);
        html_esc(f, lab);
        fputs("</text>", f);
        for (c = 0; c < ncols; c++) {
            double v = value[r * ncols + c], a = max > 0 && !isnan(v) ? 0.08 + 0.92 * v / max : 0;
            char col[32];
            snprintf(col, sizeof col, o->col_fmt, c);
            if (isnan(v))
                snprintf(text, sizeof text, "%s, %s %s: none", lab, o->col_title ? o->col_title : "", col);
            else
                snprintf(text, sizeof text, "%s, %s %s: %s", lab, o->col_title ? o->col_title : "", col,
                         html_ns(v, num, sizeof num));
            fprintf(f, "<rect class=\"cell\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
                       "fill=\"rgba(31,119,180,%.3f)\" data-row=\"%zu\" data-col=\"%zu\"",
                    left + cw * (double)c, top + ch * (double)r, cw > 1.5 ? cw - 1 : cw, ch - 1, a, r, c);
            if (!isnan(v))
                fprintf(f, " data-value=\"%.0f\"", v);
            fputs(">", f);
            tip(f, text);
            fputs("</rect>", f);
        }
    }
    fputs("\n</svg>\n", f);
}

void html_legend(FILE *f, const char *const *names, const char *const *fills, size_t n)
{
    size_t i;
    fputs("<div class=\"legend\">", f);
    for (i = 0; i < n; i++) {
        fprintf(f, "<span><i style=\"background:%s\"></i>", fills[i]);
        html_esc(f, names[i]);
        fputs("</span>", f);
    }
    fputs("</div>\n", f);
}

void html_line_chart(FILE *f, const struct html_point *p, size_t n, const struct html_ref *refs, size_t nrefs,
                     const struct html_line_opts *o)
{
    const double left = 64, right = 150, top = 26, bottom = 34;
    double w = o->width, h = o->height, pw = w - left - right, ph = h - top - bottom, ymax = o->ymax;
    size_t i, k, ticks = 5, xstep;
    int open = 0, markers = n <= HTML_MAX_POINTS;
    char buf[64];

    if (!(ymax > 0)) {
        for (i = 0; i < n; i++)
            if (p[i].defined && p[i].y > ymax)
                ymax = p[i].y;
        for (k = 0; k < nrefs; k++)
            if (refs[k].y > ymax)
                ymax = refs[k].y;
        ymax = html_nice_ceil(ymax * 1.1);
    }
    svg_begin(f, (int)w, (int)h, o->cls, o->run);
    /* y grid and labels */
    for (k = 0; k <= ticks; k++) {
        double v = ymax * (double)k / (double)ticks, y = top + ph - ph * (double)k / (double)ticks;
        fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", k ? "grid" : "axis",
                left, y, left + pw, y);
        fprintf(f, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left - 6, y + 4,
                html_num(v, buf, sizeof buf));
    }
    fprintf(f, "<text class=\"small\" x=\"4\" y=\"%.1f\">", top - 14);
    html_esc(f, o->y_title);
    fputs("</text>\n", f);
    /* x labels: about 10 of the points */
    xstep = n > 10 ? (n + 9) / 10 : 1;
    for (i = 0; i < n; i += xstep) {
        double x = left + pw * ((double)i + 0.5) / (double)n;
        fprintf(f, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, top + ph + 16);
        html_esc(f, p[i].x_label);
        fputs("</text>", f);
    }
    fprintf(f, "\n<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">generation</text>\n",
            left + pw / 2, h - 2);
    /* the line, broken where a value is undefined */
    for (i = 0; i < n; i++) {
        double x = left + pw * ((double)i + 0.5) / (double)n, y;
        if (!p[i].defined) {
            if (open)
                fputs("\"/>\n", f);
            open = 0;
            continue;
        }
        y = top + ph - ph * (p[i].y > ymax ? 1.0 : p[i].y / ymax);
        if (!open)
            fprintf(f, "<polyline class=\"line\" stroke=\"%s\" points=\"", o->stroke);
        fprintf(f, "%s%.1f,%.1f", open ? " " : "", x, y);
        open = 1;
    }
    if (open)
        fputs("\"/>\n", f);
    {
        /* labels at their lines, pushed apart (12 units) where lines are close */
        double ly[8];
        size_t order[8], a, b;
        if (nrefs > 8)
            nrefs = 8;
        for (k = 0; k < nrefs; k++) {
            ly[k] = top + ph - ph * (refs[k].y > ymax ? 1.0 : refs[k].y / ymax);
            order[k] = k;
        }
        for (a = 1; a < nrefs; a++) /* by height on the page */
            for (b = a; b > 0 && ly[order[b - 1]] > ly[order[b]]; b--) {
                size_t x = order[b];
                order[b] = order[b - 1];
                order[b - 1] = x;
            }
        for (k = 0; k < nrefs; k++) {
            double y = ly[k];
            fprintf(f, "<line class=\"ref\" stroke=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                    refs[k].stroke, left, y, left + pw, y);
        }
        {
            double at[8], shift;
            for (a = 0; a < nrefs; a++)
                at[a] = ly[order[a]] + 4;
            for (a = 1; a < nrefs; a++)
                if (at[a] < at[a - 1] + 12)
                    at[a] = at[a - 1] + 12;
            shift = nrefs ? (at[nrefs - 1] - (ly[order[nrefs - 1]] + 4)) / 2 : 0; /* centre the stack */
            for (a = 0; a < nrefs; a++) {
                fprintf(f, "<text class=\"small\" style=\"fill:%s\" x=\"%.1f\" y=\"%.1f\">", refs[order[a]].stroke,
                        left + pw + 6, at[a] - shift);
                html_esc(f, refs[order[a]].label);
                fputs("</text>\n", f);
            }
        }
    }
    if (markers)
        for (i = 0; i < n; i++) {
            double x = left + pw * ((double)i + 0.5) / (double)n, y;
            if (!p[i].defined)
                continue;
            y = top + ph - ph * (p[i].y > ymax ? 1.0 : p[i].y / ymax);
            fputs("<circle class=\"pt\"", f);
            if (p[i].tb)
                html_row_data(f, p[i].tb, p[i].row, o->run);
            fprintf(f, " cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\">",
                    x, y, n > 200 ? 2.0 : 3.5, p[i].hollow ? "#ffffff" : o->stroke, o->stroke);
            fputs("<title>generation ", f);
            html_esc(f, p[i].x_label);
            fputs(": ", f);
            html_esc(f, html_num(p[i].y, buf, sizeof buf));
            if (p[i].hollow)
                fputs(" (not counted in the bests)", f);
            fputs("</title></circle>\n", f);
        }
    fputs("</svg>\n", f);
}

void html_range_chart(FILE *f, const struct html_range *r, size_t n, const struct html_chart_opts *o)
{
    int w = o->width, h = (int)n * BAR_ROW + 6;
    double span, max = o->max;
    size_t i, label_chars = (size_t)((w - 8) / CHAR_W), room = 0;

    for (i = 0; i < n; i++) {
        if (!(o->max > 0) && r[i].max > max)
            max = r[i].max;
        if (text_chars(r[i].value_text) > room)
            room = text_chars(r[i].value_text);
    }
    span = w - value_room(w, room, o->run) - 8;
    if (!(max > 0))
        max = 1.0;
    svg_begin(f, w, h, o->cls, o->run);
    for (i = 0; i < n; i++) {
        double y = (double)i * BAR_ROW, xm = 4 + span * r[i].max / max;
        fputs("<g class=\"range\"", f);
        if (r[i].tb)
            html_row_data(f, r[i].tb, r[i].row, o->run);
        fputs(">", f);
        tip(f, r[i].value_text ? r[i].value_text : r[i].label);
        fprintf(f, "<text x=\"4\" y=\"%.1f\">", y + 12);
        html_esc_cut(f, r[i].label, label_chars);
        fputs("</text>", f);
        fprintf(f, "<line class=\"axis\" x1=\"4\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>", y + 22.5, xm, y + 22.5);
        fprintf(f, "<line class=\"axis\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\"/>", xm, y + 17, xm, y + 28);
        if (r[i].has_quantiles) {
            double x1 = 4 + span * r[i].median / max, x2 = 4 + span * r[i].p90 / max, xa = 4 + span * r[i].avg / max;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"11\" fill=\"%s\"/>", x1, y + 17,
                    x2 - x1 > 2 ? x2 - x1 : 2, html_palette(0));
            fprintf(f, "<path d=\"M%.2f %.1fl4 4.5l-4 4.5l-4 -4.5z\" fill=\"%s\"/>", xa, y + 18, html_palette(1));
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", 4 + span + 6, y + 27);
        html_esc(f, r[i].value_text ? r[i].value_text : "");
        fputs("</text></g>\n", f);
    }
    fputs("</svg>\n", f);
}

void html_time_chart(FILE *f, const struct html_span *s, size_t n, const struct html_time_opts *o)
{
    const double left = 64, right = 16, top = 26, bottom = 34;
    double w = o->width, h = o->height, pw = w - left - right, ph = h - top - bottom;
    double xmax = o->xmax, ymax = o->ymax;
    size_t i, k, ticks = 5;
    char buf[64];

    if (n > HTML_MAX_SPANS)
        n = HTML_MAX_SPANS;
    for (i = 0; i < n; i++) {
        if (!(o->xmax > 0) && s[i].x1 > xmax)
            xmax = s[i].x1;
        if (!(o->ymax > 0) && s[i].y > ymax)
            ymax = s[i].y;
    }
    xmax = o->xmax > 0 ? xmax : html_nice_ceil(xmax);
    ymax = o->ymax > 0 ? ymax : html_nice_ceil(ymax * 1.05);
    svg_begin(f, (int)w, (int)h, o->cls, o->run);
    for (k = 0; k <= ticks; k++) {
        double v = ymax * (double)k / (double)ticks, y = top + ph - ph * (double)k / (double)ticks;
        double xv = xmax * (double)k / (double)ticks, x = left + pw * (double)k / (double)ticks;
        fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", k ? "grid" : "axis",
                left, y, left + pw, y);
        fprintf(f, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>", left - 6, y + 4,
                html_num(v, buf, sizeof buf));
        fprintf(f, "<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x,
                top + ph + 16, html_num(xv, buf, sizeof buf));
    }
    fprintf(f, "<text class=\"small\" x=\"4\" y=\"%.1f\">", top - 14);
    html_esc(f, o->y_title ? o->y_title : "");
    fprintf(f, "</text>\n<text class=\"small\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", left + pw / 2, h - 2);
    html_esc(f, o->x_title ? o->x_title : "");
    fputs("</text>\n", f);
    for (i = 0; i < n; i++) {
        double x0 = left + pw * (s[i].x0 > 0 ? s[i].x0 : 0) / xmax, x1 = left + pw * s[i].x1 / xmax;
        double bh = ph * (s[i].y > ymax ? 1.0 : s[i].y > 0 ? s[i].y / ymax : 0);
        if (x0 > left + pw)
            x0 = left + pw;
        if (x1 > left + pw)
            x1 = left + pw;
        if (x1 - x0 < 1)
            x1 = x0 + 1;
        if (bh < 1)
            bh = 1; /* something there: visible */
        fputs("<rect class=\"iter\"", f);
        if (s[i].tb)
            html_row_data(f, s[i].tb, s[i].row, o->run);
        fprintf(f, " x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">", x0, top + ph - bh, x1 - x0,
                bh, s[i].fill ? s[i].fill : html_palette(0));
        tip(f, s[i].tip ? s[i].tip : "");
        fputs("</rect>\n", f);
    }
    fputs("</svg>\n", f);
}
