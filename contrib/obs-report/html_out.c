/* obs-report html: escaping, amounts, data- attributes and the page frame
 * (see html_out.h). */
#include "html_out.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Length of the UTF-8 sequence at s (1..4), or 0 when it is not one
 * (overlong forms, surrogates and code points past U+10FFFF included). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
            return 0;
        if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
            return 0;
        if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

/* Escape up to max characters of s; returns whether s had more. */
static int esc_n(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t chars = 0;
    while (*p) {
        size_t n;
        if (chars == max)
            return 1;
        chars++;
        switch (*p) {
        case '&':
            fputs("&amp;", f);
            p++;
            continue;
        case '<':
            fputs("&lt;", f);
            p++;
            continue;
        case '>':
            fputs("&gt;", f);
            p++;
            continue;
        case '"':
            fputs("&quot;", f);
            p++;
            continue;
        case '\'':
            fputs("&#39;", f);
            p++;
            continue;
        default:
            break;
        }
        if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) {
            fputs("&#xfffd;", f);
            p++;
            continue;
        }
        n = utf8_len(p);
        if (n == 0) {
            fputs("&#xfffd;", f);
            p++;
            continue;
        }
        fwrite(p, 1, n, f);
        p += n;
    }
    return 0;
}

void html_esc(FILE *f, const char *s)
{
    esc_n(f, s ? s : "", (size_t)-1);
}

void html_esc_cut(FILE *f, const char *s, size_t max)
{
    if (esc_n(f, s ? s : "", max))
        fputs("\xe2\x80\xa6", f); /* … */
}

void html_escf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    html_esc(f, s ? s : "");
    free(s);
}

const char *html_ns(double ns, char *buf, size_t len)
{
    if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.2f \xc2\xb5s", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", ns / 1e9);
    return buf;
}

const char *html_ms(double ms, char *buf, size_t len)
{
    return html_ns(ms * 1e6, buf, len);
}

const char *html_bytes(double b, char *buf, size_t len)
{
    if (b < 1e3)
        snprintf(buf, len, "%.0f B", b);
    else if (b < 1e6)
        snprintf(buf, len, "%.1f kB", b / 1e3);
    else if (b < 1e9)
        snprintf(buf, len, "%.1f MB", b / 1e6);
    else
        snprintf(buf, len, "%.2f GB", b / 1e9);
    return buf;
}

const char *html_num(double v, char *buf, size_t len)
{
    double a = v < 0 ? -v : v;
    if (a >= 1e9 || (a > 0 && a < 1e-3))
        snprintf(buf, len, "%.2e", v);
    else if (a >= 100 || a == (double)(long long)a)
        snprintf(buf, len, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, len, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3g", v);
    return buf;
}

void html_row_data(FILE *f, const struct rtable *tb, size_t r, const char *run)
{
    char buf[64];
    size_t c;
    fputs(" data-report=\"", f);
    html_esc(f, tb->report);
    fprintf(f, "\" data-row=\"%zu\"", r);
    if (run)
        fprintf(f, " data-run=\"%s\"", run);
    for (c = 0; c < tb->ncols; c++) {
        if (!tb->cells[r * tb->ncols + c].set)
            continue;
        fprintf(f, " data-%s=\"", tb->cols[c].key);
        html_esc(f, rt_cell_text(tb, r, c, buf, sizeof buf));
        fputc('"', f);
    }
}

int html_cell_num(const struct rtable *tb, size_t r, const char *key, double *v)
{
    int c = tb ? rt_col_of(tb, key) : -1;
    const struct rt_cell *cell;
    if (c < 0 || r >= tb->nrows)
        return 0;
    cell = &tb->cells[r * tb->ncols + (size_t)c];
    if (!cell->set)
        return 0;
    switch (tb->cols[c].type) {
    case RT_UINT:
        *v = (double)cell->v.u;
        return 1;
    case RT_INT:
        *v = (double)cell->v.i;
        return 1;
    case RT_REAL:
        *v = cell->v.d;
        return 1;
    default:
        return 0;
    }
}

const char *html_cell_str(const struct rtable *tb, size_t r, const char *key)
{
    int c = tb ? rt_col_of(tb, key) : -1;
    const struct rt_cell *cell;
    if (c < 0 || r >= tb->nrows || tb->cols[c].type != RT_TEXT)
        return NULL;
    cell = &tb->cells[r * tb->ncols + (size_t)c];
    return cell->set ? cell->v.s : NULL;
}

/* Colours: Tableau 10, readable on white and told apart by most eyes. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

/* Phases: Tableau 20's light tones, dark text reads on them, and none is
 * a kind colour of the timeline. */
static const char *const phase_palette[] = {"#a0cbe8", "#ffbe7d", "#8cd17d", "#ff9d9a", "#86bcb6",
                                            "#f1ce63", "#d4a6c8", "#fabfd2", "#d7b5a6", "#b6992d"};

const char *html_phase_fill(const char *phase)
{
    /* the phase engine's names get tones of their own, so that they differ on every page */
    if (phase && strcmp(phase, "PREFILL") == 0)
        return phase_palette[1];
    if (phase && strcmp(phase, "DECODE") == 0)
        return phase_palette[0];
    if (phase && strcmp(phase, "KV_GATHER") == 0)
        return phase_palette[2];
    return phase_palette[3 + html_name_colour(phase) % 7];
}

const char *html_palette(size_t i)
{
    return palette[i % (sizeof palette / sizeof palette[0])];
}

size_t html_name_colour(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; name && *name; name++)
        h = (h ^ (unsigned char)*name) * 16777619u;
    return h % (sizeof palette / sizeof palette[0]);
}

static const char style[] =
    ":root{--fg:#1d232b;--muted:#5b6571;--rule:#d8dde3;--bg:#ffffff;--panel:#f5f7f9;--accent:#4e79a7}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;padding:24px 32px;background:var(--bg);color:var(--fg);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "h1{font-size:22px;margin:0 0 4px}\n"
    "h2{font-size:17px;margin:28px 0 6px;padding-top:12px;border-top:1px solid var(--rule)}\n"
    "h3{font-size:14px;margin:10px 0 4px;color:var(--muted);font-weight:600}\n"
    "p{margin:4px 0}\n"
    ".muted,.note{color:var(--muted)}\n"
    ".note{font-size:12.5px}\n"
    "code,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12.5px}\n"
    ".runs{display:grid;grid-template-columns:repeat(var(--runs),minmax(0,1fr));gap:28px}\n"
    ".run-head{font-weight:600;margin:6px 0;overflow-wrap:anywhere}\n"
    ".cards{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}\n"
    ".card{background:var(--panel);border:1px solid var(--rule);border-radius:6px;padding:8px 12px;min-width:120px}\n"
    ".card .v{font-size:20px;font-weight:600}\n"
    ".card .k{font-size:12px;color:var(--muted)}\n"
    ".card.warn{border-color:#e15759;background:#fdf0f0}\n"
    "svg{display:block;width:100%;height:auto;overflow:visible}\n"
    "svg text{font-size:12px;fill:var(--fg)}\n"
    "svg text.small{font-size:10.5px;fill:var(--muted)}\n"
    "svg text.in{fill:#1d232b}\n"
    "svg rect.ph{stroke:#ffffff;stroke-width:1}\n"
    "svg .axis{stroke:#8a949e;stroke-width:1}\n"
    "svg .grid{stroke:#e6e9ed;stroke-width:1}\n"
    "svg .ref{stroke-width:1.5;stroke-dasharray:5 4}\n"
    "svg .track{fill:#eef1f4}\n"
    "svg .line{fill:none;stroke-width:2}\n"
    "table{border-collapse:collapse;margin:6px 0;font-size:12.5px}\n"
    "th,td{padding:3px 8px;border-bottom:1px solid var(--rule);text-align:right;vertical-align:top}\n"
    "th{background:var(--panel);font-weight:600}\n"
    "td.t,th.t{text-align:left}\n"
    "td.up{color:#b3261e}td.down{color:#2e7d32}\n"
    "details{margin:6px 0}\n"
    "summary{cursor:pointer;color:var(--accent)}\n"
    ".legend{display:flex;flex-wrap:wrap;gap:12px;font-size:12px;color:var(--muted);margin:4px 0}\n"
    ".legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;"
    "vertical-align:-1px}\n"
    "footer{margin-top:32px;padding-top:10px;border-top:1px solid var(--rule);color:var(--muted);"
    "font-size:12px}\n"
    "@media print{body{padding:0}h2{break-after:avoid}}\n";

void html_page_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"obs-report html\">\n<title>",
          f);
    html_esc(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

void html_page_end(FILE *f)
{
    fputs("</body>\n</html>\n", f);
}
