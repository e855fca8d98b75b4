/* obs-report: result tables in three formats (see report_table.h). */
#include "report_table.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        return NULL;
    return s;
}

void rt_init(struct rtable *tb, const char *report, const struct rt_col *cols, size_t ncols, const char *title_fmt,
             ...)
{
    va_list ap;
    memset(tb, 0, sizeof *tb);
    tb->report = report;
    tb->ncols = ncols < RT_MAX_COLS ? ncols : RT_MAX_COLS;
    memcpy(tb->cols, cols, tb->ncols * sizeof *cols);
    va_start(ap, title_fmt);
    tb->title = vformat(title_fmt, ap);
    va_end(ap);
    if (tb->title == NULL)
        tb->failed = 1;
}

void rt_free(struct rtable *tb)
{
    size_t i;
    for (i = 0; i < tb->nrows * tb->ncols; i++)
        if (tb->cols[i % tb->ncols].type == RT_TEXT && tb->cells[i].set)
            free(tb->cells[i].v.s);
    for (i = 0; i < tb->nnotes; i++)
        free(tb->notes[i]);
    free(tb->notes);
    free(tb->cells);
    free(tb->title);
    memset(tb, 0, sizeof *tb);
}

void rt_row(struct rtable *tb)
{
    if (tb->failed)
        return;
    if (tb->nrows == tb->cap) {
        size_t cap = tb->cap ? tb->cap * 2 : 16;
        struct rt_cell *p = realloc(tb->cells, cap * tb->ncols * sizeof *p);
        if (p == NULL) {
            tb->failed = 1;
            return;
        }
        tb->cells = p;
        tb->cap = cap;
    }
    memset(&tb->cells[tb->nrows * tb->ncols], 0, tb->ncols * sizeof *tb->cells);
    tb->nrows++;
    tb->filled = 0;
}

/* The next cell of the current row, or NULL (failed, or too many cells). */
static struct rt_cell *next_cell(struct rtable *tb)
{
    if (tb->failed || tb->nrows == 0 || tb->filled >= tb->ncols)
        return NULL;
    return &tb->cells[(tb->nrows - 1) * tb->ncols + tb->filled++];
}

void rt_text(struct rtable *tb, const char *s)
{
    struct rt_cell *c = next_cell(tb);
    if (c == NULL)
        return;
    if (s == NULL)
        return; /* undefined */
    c->v.s = strdup(s);
    if (c->v.s == NULL)
        tb->failed = 1;
    else
        c->set = 1;
}

void rt_uint(struct rtable *tb, uint64_t v)
{
    struct rt_cell *c = next_cell(tb);
    if (c) {
        c->set = 1;
        c->v.u = v;
    }
}

void rt_int(struct rtable *tb, int64_t v)
{
    struct rt_cell *c = next_cell(tb);
    if (c) {
        c->set = 1;
        c->v.i = v;
    }
}

void rt_real(struct rtable *tb, double v)
{
    struct rt_cell *c = next_cell(tb);
    if (c && isfinite(v)) {
        c->set = 1;
        c->v.d = v;
    }
}

void rt_null(struct rtable *tb)
{
    next_cell(tb);
}

static int push_note(char ***notes, size_t *n, char *s)
{
    char **p;
    if (s == NULL)
        return -1;
    p = realloc(*notes, (*n + 1) * sizeof *p);
    if (p == NULL) {
        free(s);
        return -1;
    }
    p[(*n)++] = s;
    *notes = p;
    return 0;
}

void rt_note(struct rtable *tb, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    s = vformat(fmt, ap);
    va_end(ap);
    if (push_note(&tb->notes, &tb->nnotes, s) != 0)
        tb->failed = 1;
}

/* ---- cells as text --------------------------------------------------------------- */

const char *rt_cell_text(const struct rtable *tb, size_t r, size_t c, char *buf, size_t len)
{
    const struct rt_cell *cell = &tb->cells[r * tb->ncols + c];
    if (!cell->set)
        return "";
    switch (tb->cols[c].type) {
    case RT_TEXT:
        return cell->v.s;
    case RT_UINT:
        snprintf(buf, len, "%llu", (unsigned long long)cell->v.u);
        return buf;
    case RT_INT:
        snprintf(buf, len, "%lld", (long long)cell->v.i);
        return buf;
    default:
        snprintf(buf, len, "%.*f", abs(tb->cols[c].decimals), cell->v.d);
        if (tb->cols[c].decimals < 0 && strchr(buf, '.') != NULL) { /* "5176.000000" -> "5176" */
            size_t n = strlen(buf);
            while (buf[n - 1] == '0')
                buf[--n] = '\0';
            if (buf[n - 1] == '.')
                buf[--n] = '\0';
        }
        if (strcmp(buf, "-0") == 0 || (strncmp(buf, "-0.", 3) == 0 && strspn(buf + 3, "0") == strlen(buf + 3)))
            memmove(buf, buf + 1, strlen(buf)); /* no "-0.0" */
        return buf;
    }
}

int rt_col_of(const struct rtable *tb, const char *key)
{
    size_t c;
    for (c = 0; c < tb->ncols; c++)
        if (strcmp(tb->cols[c].key, key) == 0)
            return (int)c;
    return -1;
}

static void print_text_table(FILE *f, const struct rtable *tb)
{
    size_t w[RT_MAX_COLS], r, c, k;
    char buf[64];

    fprintf(f, "\n%s\n", tb->title);
    if (tb->nrows == 0) {
        fprintf(f, "%s\n", tb->empty ? tb->empty : " none");
    } else {
        for (c = 0; c < tb->ncols; c++) {
            w[c] = strlen(tb->cols[c].head);
            for (r = 0; r < tb->nrows; r++) {
                const char *s = rt_cell_text(tb, r, c, buf, sizeof buf);
                size_t n = strlen(s[0] || tb->cols[c].type == RT_TEXT ? s : "-");
                if (n > w[c])
                    w[c] = n;
            }
        }
        /* the last column is left-aligned and not padded; text columns left-aligned */
        for (c = 0; c < tb->ncols; c++) {
            if (c + 1 < tb->ncols)
                fprintf(f, tb->cols[c].type == RT_TEXT ? " %-*s " : " %*s ", (int)w[c], tb->cols[c].head);
            else
                fprintf(f, " %s\n", tb->cols[c].head);
        }
        for (c = 0; c < tb->ncols; c++) {
            size_t n = c + 1 < tb->ncols ? w[c] : strlen(tb->cols[c].head);
            fputc(' ', f);
            for (k = 0; k < n; k++)
                fputc('-', f);
            fputs(c + 1 < tb->ncols ? " " : "\n", f);
        }
        for (r = 0; r < tb->nrows; r++)
            for (c = 0; c < tb->ncols; c++) {
                const char *s = rt_cell_text(tb, r, c, buf, sizeof buf);
                if (s[0] == '\0' && tb->cols[c].type != RT_TEXT)
                    s = "-";
                if (c + 1 < tb->ncols)
                    fprintf(f, tb->cols[c].type == RT_TEXT ? " %-*s " : " %*s ", (int)w[c], s);
                else
                    fprintf(f, " %s\n", s);
            }
    }
    for (k = 0; k < tb->nnotes; k++)
        fprintf(f, " (%s)\n", tb->notes[k]);
}

static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void print_csv_table(FILE *f, const struct rtable *tb, int first)
{
    size_t r, c;
    char buf[64];
    if (!first)
        fputc('\n', f);
    fprintf(f, "# %s\n", tb->report);
    for (c = 0; c < tb->ncols; c++) {
        if (c)
            fputc(',', f);
        fputs(tb->cols[c].key, f);
    }
    fputc('\n', f);
    for (r = 0; r < tb->nrows; r++) {
        for (c = 0; c < tb->ncols; c++) {
            if (c)
                fputc(',', f);
            csv_field(f, rt_cell_text(tb, r, c, buf, sizeof buf));
        }
        fputc('\n', f);
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch == '\t')
            fputs("\\t", f);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void print_json_table(FILE *f, const struct rtable *tb, int first)
{
    size_t r, c;
    char buf[64];
    fprintf(f, "%s\n", first ? "" : ",");
    json_string(f, tb->report);
    fputs(": [", f);
    for (r = 0; r < tb->nrows; r++) {
        fprintf(f, "%s\n  {", r ? "," : "");
        for (c = 0; c < tb->ncols; c++) {
            const struct rt_cell *cell = &tb->cells[r * tb->ncols + c];
            if (c)
                fputs(", ", f);
            json_string(f, tb->cols[c].key);
            fputs(": ", f);
            if (!cell->set)
                fputs("null", f);
            else if (tb->cols[c].type == RT_TEXT)
                json_string(f, cell->v.s);
            else
                fputs(rt_cell_text(tb, r, c, buf, sizeof buf), f);
        }
        fputc('}', f);
    }
    fputs(tb->nrows ? "\n]" : "]", f);
}

/* A deep copy of tb into out (KEEP documents); -1 when out of memory. */
static int rt_copy(struct rtable *out, const struct rtable *tb)
{
    size_t i;
    *out = *tb;
    out->title = NULL;
    out->cells = NULL;
    out->notes = NULL;
    out->nrows = out->cap = out->nnotes = 0;
    out->title = strdup(tb->title ? tb->title : "");
    out->cells = calloc(tb->nrows * tb->ncols + 1, sizeof *out->cells);
    out->notes = calloc(tb->nnotes + 1, sizeof *out->notes);
    if (out->title == NULL || out->cells == NULL || out->notes == NULL)
        return -1;
    out->nrows = out->cap = tb->nrows;
    for (i = 0; i < tb->nrows * tb->ncols; i++) {
        out->cells[i] = tb->cells[i];
        if (tb->cols[i % tb->ncols].type == RT_TEXT && tb->cells[i].set &&
            (out->cells[i].v.s = strdup(tb->cells[i].v.s)) == NULL) {
            out->cells[i].set = 0;
            return -1;
        }
    }
    for (i = 0; i < tb->nnotes; i++) {
        if ((out->notes[i] = strdup(tb->notes[i])) == NULL)
            return -1;
        out->nnotes++;
    }
    return 0;
}

static void keep_table(struct report_doc *d, const struct rtable *tb)
{
    struct rtable *p = realloc(d->kept, (d->nkept + 1) * sizeof *p);
    if (p == NULL) {
        d->failed = 1;
        return;
    }
    d->kept = p;
    if (rt_copy(&d->kept[d->nkept], tb) != 0)
        d->failed = 1;
    d->nkept++; /* rt_free undoes a partial copy too */
}

const struct rtable *rdoc_kept(const struct report_doc *d, const char *report)
{
    size_t i;
    for (i = 0; i < d->nkept; i++)
        if (strcmp(d->kept[i].report, report) == 0)
            return &d->kept[i];
    return NULL;
}

void rdoc_free(struct report_doc *d)
{
    size_t i;
    for (i = 0; i < d->nkept; i++)
        rt_free(&d->kept[i]);
    free(d->kept);
    d->kept = NULL;
    d->nkept = 0;
    for (i = 0; i < d->nnotes; i++)
        free(d->notes[i]);
    free(d->notes);
    d->notes = NULL;
    d->nnotes = 0;
}

void rdoc_begin(struct report_doc *d, FILE *f, enum report_format format)
{
    memset(d, 0, sizeof *d);
    d->f = f;
    d->format = format;
    if (format == REPORT_JSON)
        fputc('{', f);
}

void rdoc_table(struct report_doc *d, const struct rtable *tb)
{
    size_t i;
    if (tb->failed) {
        d->failed = 1;
        return;
    }
    switch (d->format) {
    case REPORT_TABLE:
        print_text_table(d->f, tb);
        break;
    case REPORT_CSV:
        print_csv_table(d->f, tb, d->sections == 0);
        break;
    default:
        if (d->format == REPORT_KEEP)
            keep_table(d, tb);
        else
            print_json_table(d->f, tb, d->sections == 0);
        for (i = 0; i < tb->nnotes && !d->failed; i++) {
            char *s = NULL;
            if (asprintf(&s, "%s: %s", tb->report, tb->notes[i]) < 0 || push_note(&d->notes, &d->nnotes, s) != 0)
                d->failed = 1;
        }
        break;
    }
    d->sections++;
}

void rdoc_note(struct report_doc *d, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    s = vformat(fmt, ap);
    va_end(ap);
    if (s == NULL) {
        d->failed = 1;
        return;
    }
    if (d->format == REPORT_TABLE) {
        fprintf(d->f, "%s\n", s);
        free(s);
    } else if (d->format == REPORT_JSON || d->format == REPORT_KEEP) {
        if (push_note(&d->notes, &d->nnotes, s) != 0)
            d->failed = 1;
    } else {
        free(s);
    }
}

int rdoc_end(struct report_doc *d)
{
    size_t i;
    if (d->format == REPORT_JSON) {
        fprintf(d->f, "%s\n\"notes\": [", d->sections ? "," : "");
        for (i = 0; i < d->nnotes; i++) {
            fputs(i ? ", " : "", d->f);
            json_string(d->f, d->notes[i]);
        }
        fputs("]}\n", d->f);
    }
    if (d->format == REPORT_KEEP) {
        if (d->failed) {
            errno = ENOMEM;
            return -1;
        }
        return 0;
    }
    for (i = 0; i < d->nnotes; i++)
        free(d->notes[i]);
    free(d->notes);
    d->notes = NULL;
    d->nnotes = 0;
    if (d->failed) {
        errno = ENOMEM;
        return -1;
    }
    if (fflush(d->f) != 0 || ferror(d->f)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int report_format_parse(const char *name)
{
    if (strcmp(name, "table") == 0)
        return REPORT_TABLE;
    if (strcmp(name, "csv") == 0)
        return REPORT_CSV;
    if (strcmp(name, "json") == 0)
        return REPORT_JSON;
    return -1;
}
