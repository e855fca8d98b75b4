/* obs-report html and compare --html (docs/reports.md, "html"), and the
 * reports `summary --format json` gained for it (api_calls, phases,
 * generation_spread). On the fixture, on a trace whose names need escaping
 * (html_check.h) and on the reference workload run under the shim on the
 * simulated CUDA runtime, with and without OBS_GPU_TIME=events:
 *   - the page is self-contained (no address outside it, no script, no
 *     external style, font or image) and well formed (tags nest, values
 *     quoted, every '&' an entity, UTF-8);
 *   - every drawn item's data- attributes equal the row of `summary
 *     --format json` / `gaps --format json` it stands for, and the charts
 *     hold the rows they should (top kernels, every phase, a point per
 *     generation, every stream and thread); bar lengths follow the values;
 *   - the timeline's kernel launches equal its generation's;
 *   - names with < > & " ' and bytes that are not UTF-8 come out escaped;
 *   - compare --html equals `html A B`, and each side equals its own run;
 *   - a damaged trace: exit 1, its message, no output file (an existing
 *     one untouched); bad options exit 2.
 * The new summary reports are checked against what this test works out from
 * the hostile trace's known shape and from the generations rows. */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "html_check.h"
#include "html_out.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

static const char *report;

static struct run_result report_run(const char *first, ...)
{
    const char *argv[32];
    struct run_result r;
    va_list ap;
    size_t n = 0;
    argv[n++] = report;
    argv[n++] = first;
    va_start(ap, first);
    while (n < 31 && (argv[n] = va_arg(ap, const char *)) != NULL)
        n++;
    va_end(ap);
    argv[n] = NULL;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

/* `obs-report CMD --format json ARGS` parsed; bails out when it fails. */
static void json_of(struct json_doc *doc, const char *cmd, const char *a, const char *b)
{
    struct run_result r = report_run(cmd, "--format", "json", a, b, NULL);
    if (!run_exited_with(&r, 0) || json_doc_parse(r.out, doc) != 0)
        bail("obs-report %s --format json %s: status %d: %s", cmd, a, r.status, r.err);
    run_result_free(&r);
}

static char *read_page(const char *path)
{
    char *text = test_read_file(path, NULL);
    if (text == NULL)
        bail("cannot read %s", path);
    return text;
}

/* ---- self-contained and well formed ---------------------------------------------------- */

static void check_page_form(const char *label, const char *page, struct html_doc *doc)
{
    static const char *const outside[] = {"http:", "https:", "ftp:", "file:", "//", "<script", "<link", "<img",
                                          "<iframe", "<object", "<embed", " src=", " href=", "url(", "@import",
                                          "@font-face", NULL};
    size_t i;
    const char *found = NULL;
    for (i = 0; outside[i] && found == NULL; i++)
        if (strstr(page, outside[i]))
            found = outside[i];
    if (!ok(found == NULL, "%s: self-contained: no address, script, link, image, font or import", label))
        diag("found \"%s\" at: %.80s", found, strstr(page, found));
    ok(strncmp(page, "<!DOCTYPE html>\n<html lang=\"en\">", 31) == 0 && strstr(page, "<meta charset=\"utf-8\">") &&
           strstr(page, "<style>") && strstr(page, "</html>\n"),
       "%s: a doctype, UTF-8, an inline style sheet, closed", label);
    html_parse(page, doc);
    if (!ok(doc->problem[0] == '\0', "%s: well formed (%zu start tags)", label, doc->n))
        diag("%s", doc->problem);
}

/* ---- numbers: the page's data- attributes against the json reports ----------------------------- */

struct page_counts {
    char report[48];
    size_t elems;
};

/* Compare every element of run (NULL: elements without data-run) with
 * the rows of the documents; count the elements per report. */
static void check_numbers(const char *label, const struct html_doc *doc, const char *run,
                          const struct json_doc *const *docs, size_t ndocs, struct page_counts *counts,
                          size_t *ncounts)
{
    size_t i, k, d, compared = 0, bad = 0, elems = 0;
    for (i = 0; i < doc->n; i++) {
        const struct html_elem *e = &doc->e[i];
        const char *rep = html_attr(e, "data-report"), *row_s = html_attr(e, "data-row"),
                   *erun = html_attr(e, "data-run");
        const struct json_report *jr = NULL;
        size_t row;
        if (rep == NULL)
            continue;
        if ((run == NULL) != (erun == NULL) || (run && strcmp(run, erun) != 0))
            continue;
        elems++;
        for (d = 0; d < ndocs && jr == NULL; d++)
            jr = json_report(docs[d], rep);
        row = row_s ? strtoul(row_s, NULL, 10) : (size_t)-1;
        if (jr == NULL || row >= jr->nrows) {
            if (bad++ < 5)
                diag("%s: element <%s data-report=\"%s\" data-row=\"%s\">: no such report row", label, e->tag, rep,
                     row_s ? row_s : "?");
            continue;
        }
        for (k = 0; k < *ncounts && strcmp(counts[k].report, rep) != 0; k++)
            ;
        if (k == *ncounts && k < 32) {
            snprintf(counts[k].report, sizeof counts[k].report, "%s", rep);
            counts[k].elems = 0;
            (*ncounts)++;
        }
        if (k < 32)
            counts[k].elems++;
        for (k = 0; k < e->nattrs; k++) {
            const char *name = e->attrs[k].name, *want;
            int found;
            char *norm;
            if (strncmp(name, "data-", 5) != 0 || strcmp(name, "data-report") == 0 || strcmp(name, "data-row") == 0 ||
                strcmp(name, "data-run") == 0)
                continue;
            want = json_value(&jr->rows[row], name + 5, &found);
            norm = want ? utf8_replace(want) : NULL;
            compared++;
            if (!found || want == NULL || strcmp(norm, e->attrs[k].value) != 0) {
                if (bad++ < 5)
                    diag("%s: %s row %zu %s: page \"%s\", json %s%s%s", label, rep, row, name + 5, e->attrs[k].value,
                         found ? (want ? "\"" : "null") : "(no such key)", want ? want : "", want ? "\"" : "");
            }
            free(norm);
        }
        /* and the json row's defined values are all on the element */
        for (k = 0; k < jr->rows[row].n; k++) {
            char attr[96];
            snprintf(attr, sizeof attr, "data-%s", jr->rows[row].keys[k]);
            if (jr->rows[row].values[k] != NULL && html_attr(e, attr) == NULL && bad++ < 5)
                diag("%s: %s row %zu: %s missing on the page", label, rep, row, attr);
        }
    }
    ok(bad == 0 && compared > 0, "%s: %zu values on %zu drawn items equal the json reports' rows", label, compared,
       elems);
}

static size_t count_of(const struct page_counts *c, size_t n, const char *report_name)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (strcmp(c[k].report, report_name) == 0)
            return c[k].elems;
    return 0;
}

static size_t rows_of(const struct json_doc *doc, const char *name)
{
    const struct json_report *r = json_report(doc, name);
    return r ? r->nrows : 0;
}

static size_t shown(size_t n)
{
    return n > 11 ? 10 : n;
}

/* Elements of report rep inside the <svg> of class cls (of run). */
static size_t in_chart(const struct html_doc *doc, const char *page, const char *cls, const char *run,
                       const char *rep, size_t *charts)
{
    size_t i, j, n = 0;
    *charts = 0;
    for (i = 0; i < doc->n; i++) {
        const char *c = html_attr(&doc->e[i], "class"), *r = html_attr(&doc->e[i], "data-run");
        const char *end;
        if (strcmp(doc->e[i].tag, "svg") != 0 || c == NULL || strcmp(c, cls) != 0 || (run == NULL) != (r == NULL) ||
            (run && strcmp(run, r) != 0))
            continue;
        (*charts)++;
        end = strstr(page + doc->e[i].end, "</svg>");
        for (j = i + 1; j < doc->n && end && page + doc->e[j].offset < end; j++) {
            const char *er = html_attr(&doc->e[j], "data-report");
            if (er && strcmp(er, rep) == 0)
                n++;
        }
    }
    return n;
}

/* Rows of generations whose key is defined. */
static size_t defined_rows(const struct json_doc *doc, const char *rep, const char *key)
{
    const struct json_report *r = json_report(doc, rep);
    size_t i, n = 0;
    int found;
    for (i = 0; r && i < r->nrows; i++)
        n += json_value(&r->rows[i], key, &found) != NULL;
    return n;
}

/* The charts hold the rows they should. */
static void check_coverage(const char *label, const struct html_doc *doc, const char *page, const char *run,
                           const struct json_doc *sum, const struct json_doc *gaps, const struct page_counts *c,
                           size_t nc)
{
    size_t charts, n;
    is_int((long long)shown(rows_of(sum, "cuda_gpu_kern_sum")), (long long)count_of(c, nc, "cuda_gpu_kern_sum"),
           "%s: a bar per top kernel (the rest folded)", label);
    is_int((long long)rows_of(sum, "phases"), (long long)count_of(c, nc, "phases"), "%s: a bar per phase", label);
    is_int((long long)shown(rows_of(sum, "api_calls")), (long long)count_of(c, nc, "api_calls"),
           "%s: a bar per top API", label);
    is_int((long long)(rows_of(sum, "cuda_gpu_mem_size_sum") + rows_of(sum, "cuda_gpu_mem_time_sum")),
           (long long)(count_of(c, nc, "cuda_gpu_mem_size_sum") + count_of(c, nc, "cuda_gpu_mem_time_sum")),
           "%s: a bar per copy operation, bytes and time", label);
    is_int((long long)(rows_of(gaps, "device_gaps") + rows_of(gaps, "launch_gaps") + rows_of(gaps, "sync_share")),
           (long long)(count_of(c, nc, "device_gaps") + count_of(c, nc, "launch_gaps") +
                       count_of(c, nc, "sync_share")),
           "%s: an item per stream, per thread and per sync API", label);
    n = in_chart(doc, page, "chart-ttft", run, "generations", &charts);
    ok(charts == (rows_of(sum, "generations") ? 1u : 0u) && n == defined_rows(sum, "generations", "ttft_ms"),
       "%s: a TTFT point per generation with a TTFT (%zu)", label, n);
    n = in_chart(doc, page, "chart-tokens", run, "generations", &charts);
    ok(charts == (rows_of(sum, "generations") ? 1u : 0u) && n == defined_rows(sum, "generations", "tokens_per_s"),
       "%s: a tokens/s point per generation with tokens/s (%zu)", label, n);
    is_int(rows_of(sum, "generation_spread") ? 2 : 0, (long long)count_of(c, nc, "generation_spread"),
           "%s: the spread in the cards and above the charts", label);
    is_int(1, (long long)count_of(c, nc, "trace"), "%s: the trace row in the cards", label);
}

/* Lengths in proportion to their values (within a unit), over the items
 * of run, or of both runs when any_run (a comparison's shared scale): the
 * items of report rep, their value key, their length the number in attr
 * of the first tag beginning with mark after the item's start, less 4 (the
 * charts' left edge). */
struct lengths {
    const char *rep, *key, *mark, *attr;
};
static const struct lengths kernel_bars = {"cuda_gpu_kern_sum", "data-total_ns", "<rect x=", "width=\""};
static const struct lengths gap_ranges = {"launch_gaps", "data-max_ns", "<line class=\"axis\" x1=\"4\"", "x2=\""};

static void check_lengths(const char *label, const struct html_doc *doc, const char *page, const char *run,
                          int any_run, const struct lengths *L)
{
    size_t i, n = 0;
    double *width = calloc(doc->n + 1, sizeof *width), *total = calloc(doc->n + 1, sizeof *total);
    double w0 = -1, t0 = 0, worst = 0;
    if (width == NULL || total == NULL)
        bail("out of memory");
    for (i = 0; i < doc->n; i++) {
        const struct html_elem *e = &doc->e[i];
        const char *rep = html_attr(e, "data-report"), *r = html_attr(e, "data-run"), *tot, *tag, *w;
        if (rep == NULL || strcmp(rep, L->rep) != 0 ||
            (!any_run && ((run == NULL) != (r == NULL) || (run && strcmp(run, r) != 0))))
            continue;
        tot = html_attr(e, L->key);
        tag = strstr(page + e->end, L->mark);
        w = tag ? strstr(tag, L->attr) : NULL;
        if (tot == NULL || w == NULL)
            continue;
        width[n] = strtod(w + strlen(L->attr), NULL) - (strcmp(L->attr, "x2=\"") == 0 ? 4.0 : 0.0);
        total[n] = strtod(tot, NULL);
        n++;
    }
    /* The scale from the longest item: its length's rounding (0.01 unit)
     * is the smallest share of it, whatever the values (a short first item
     * as the reference magnified its rounding in the others). */
    for (i = 0; i < n; i++)
        if (total[i] > t0) {
            t0 = total[i];
            w0 = width[i];
        }
    for (i = 0; t0 > 0 && i < n; i++) {
        double want = w0 * total[i] / t0, err = fabs(want - width[i]);
        if (want >= 1 && err > worst)
            worst = err;
    }
    free(width);
    free(total);
    ok(n > 0 && worst <= 1.0, "%s: %zu %s items long in proportion to %s (worst %.2f units off)", label, n, L->rep,
       L->key + 5, worst);
}

/* The timeline's kernels equal its generation's row. */
static void check_timeline(const char *label, const struct html_doc *doc, const char *run, const struct json_doc *sum)
{
    const struct json_report *g = json_report(sum, "generations");
    size_t i, k, seen = 0, good = 0;
    for (i = 0; i < doc->n; i++) {
        const struct html_elem *e = &doc->e[i];
        const char *c = html_attr(e, "class"), *r = html_attr(e, "data-run");
        if (c == NULL || strcmp(c, "timeline") != 0 || (run == NULL) != (r == NULL) || (run && strcmp(run, r) != 0))
            continue;
        seen++;
        for (k = 0; g && k < g->nrows; k++) {
            int f1, f2, f3;
            const char *gen = json_value(&g->rows[k], "generation", &f1), *tid = json_value(&g->rows[k], "tid", &f2),
                       *kern = json_value(&g->rows[k], "kernels", &f3);
            if (gen && tid && kern && strcmp(gen, html_attr(e, "data-generation")) == 0 &&
                strcmp(tid, html_attr(e, "data-tid")) == 0) {
                if (strcmp(kern, html_attr(e, "data-kernels")) == 0 && strtoul(html_attr(e, "data-calls"), NULL, 10))
                    good++;
                else
                    diag("%s: timeline of generation %s: %s kernels, the generations row %s", label, gen,
                         html_attr(e, "data-kernels"), kern);
            }
        }
    }
    if (g && g->nrows)
        ok(seen == 1 && good == 1, "%s: the timeline draws its generation's kernel launches", label);
    else
        ok(seen == 0, "%s: no timeline without generations", label);
}

/* The whole check of one run's page. */
static void check_single_page(const char *label, const char *obs, const char *page_path)
{
    struct json_doc sum, gaps;
    const struct json_doc *docs[2];
    struct html_doc doc;
    struct page_counts counts[32];
    size_t nc = 0;
    char *page = read_page(page_path);

    json_of(&sum, "summary", obs, NULL);
    json_of(&gaps, "gaps", obs, NULL);
    docs[0] = &sum;
    docs[1] = &gaps;
    check_page_form(label, page, &doc);
    check_numbers(label, &doc, NULL, docs, 2, counts, &nc);
    check_coverage(label, &doc, page, NULL, &sum, &gaps, counts, nc);
    if (rows_of(&sum, "cuda_gpu_kern_sum") > 1)
        check_lengths(label, &doc, page, NULL, 0, &kernel_bars);
    check_timeline(label, &doc, NULL, &sum);
    html_doc_free(&doc);
    json_doc_free(&sum);
    json_doc_free(&gaps);
    free(page);
}

static int write_page(const char *label, const char *obs, const char *out, const char *opt1, const char *opt2)
{
    struct run_result r = report_run("html", obs, "-o", out, opt1, opt2, NULL);
    int good = run_exited_with(&r, 0) && r.out_len == 0 && access(out, R_OK) == 0;
    if (!ok(good, "%s: obs-report html writes %s", label, out))
        diag_text("stderr", r.err);
    run_result_free(&r);
    return good;
}

/* ---- escaping ------------------------------------------------------------------------------------- */

static void check_escaping(const char *page)
{
    ok(strstr(page, "</script>") == NULL && strstr(page, "<b>") == NULL && strstr(page, "<KV") == NULL &&
           strstr(page, "<float") == NULL && strstr(page, "<1>") == NULL && strstr(page, "<serve>") == NULL,
       "hostile: no name reaches the page unescaped");
    ok(strstr(page, "&lt;/script&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != NULL,
       "hostile: a kernel named like a script is text");
    ok(strstr(page, "void gemm&lt;float, 128&gt;(float const*, float*) [with T = &quot;a&amp;b&quot;]") != NULL,
       "hostile: a template kernel name with quotes and & is escaped");
    ok(strstr(page, "attn&lt;&amp;lt;&amp;#62;&gt;") != NULL, "hostile: entity-like text is escaped again");
    ok(strstr(page, "bad&#xfffd;&#xfffd; utf8 &#xfffd; ctl") != NULL,
       "hostile: bytes that are not UTF-8 and a control character become U+FFFD");
    ok(strstr(page, "&lt;KV&amp;GATHER&gt;") != NULL, "hostile: the phase name is escaped");
    ok(strstr(page, "serve --model &#39;&lt;b&gt;x&lt;/b&gt;&#39; &amp; &quot;quoted&quot;") != NULL,
       "hostile: the command line is escaped");
}

/* The summary's new reports on the hostile trace, whose shape is known. */
static void check_summary_json(const char *obs)
{
    struct json_doc sum;
    const struct json_report *api, *ph, *sp, *g;
    size_t i;
    int found;
    double ttft[HOSTILE_GENERATIONS], tok[HOSTILE_GENERATIONS];
    size_t nt = 0, nk = 0;

    json_of(&sum, "summary", obs, NULL);
    api = json_report(&sum, "api_calls");
    ph = json_report(&sum, "phases");
    sp = json_report(&sum, "generation_spread");
    g = json_report(&sum, "generations");
    ok(api && api->nrows == 4 && strcmp(json_value(&api->rows[0], "api", &found), "cudaLaunchKernel") == 0 &&
           strcmp(json_value(&api->rows[0], "calls", &found), "20") == 0 &&
           strcmp(json_value(&api->rows[0], "total_ns", &found), "5400") == 0 &&
           strcmp(json_value(&api->rows[0], "kind", &found), "kernel") == 0 &&
           strcmp(json_value(&api->rows[1], "api", &found), "cudaStreamSynchronize") == 0 &&
           strcmp(json_value(&api->rows[1], "calls", &found), "8") == 0 &&
           strcmp(json_value(&api->rows[2], "api", &found), "cudaMemcpyAsync") == 0 &&
           strcmp(json_value(&api->rows[3], "calls", &found), "1") == 0,
       "summary json: api_calls, most called first, with their host time");
    ok(ph && ph->nrows == 3 && strcmp(json_value(&ph->rows[0], "phase", &found), "PREFILL") == 0 &&
           strcmp(json_value(&ph->rows[0], "calls", &found), "12") == 0 &&
           strcmp(json_value(&ph->rows[0], "ranges", &found), "4") == 0 &&
           strcmp(json_value(&ph->rows[0], "bytes", &found), "4194304") == 0 &&
           strcmp(json_value(&ph->rows[1], "phase", &found), "DECODE") == 0 &&
           strcmp(json_value(&ph->rows[1], "calls", &found), "16") == 0 &&
           strcmp(json_value(&ph->rows[1], "ranges", &found), "8") == 0 &&
           strcmp(json_value(&ph->rows[2], "phase", &found), HOSTILE_PHASE) == 0 &&
           strcmp(json_value(&ph->rows[2], "kernels", &found), "4") == 0 &&
           json_value(&ph->rows[2], "time_ns", &found) != NULL,
       "summary json: phases over all generations (calls, ranges, bytes, kernels)");
    for (i = 0; g && i < g->nrows; i++) {
        const char *v = json_value(&g->rows[i], "ttft_ms", &found);
        if (v && nt < HOSTILE_GENERATIONS)
            ttft[nt++] = strtod(v, NULL);
        v = json_value(&g->rows[i], "tokens_per_s", &found);
        if (v && nk < HOSTILE_GENERATIONS)
            tok[nk++] = strtod(v, NULL);
    }
    /* sort; median of 4: mean of the middle two; p90 by nearest rank: TTFT
     * the 4th lowest (ceil(0.9 * 4) = 4), tokens/s the 1st lowest */
    for (i = 1; i < nt; i++) {
        double x = ttft[i];
        size_t j = i;
        for (; j > 0 && ttft[j - 1] > x; j--)
            ttft[j] = ttft[j - 1];
        ttft[j] = x;
    }
    for (i = 1; i < nk; i++) {
        double x = tok[i];
        size_t j = i;
        for (; j > 0 && tok[j - 1] > x; j--)
            tok[j] = tok[j - 1];
        tok[j] = x;
    }
    if (sp && sp->nrows == 1 && nt == 4 && nk == 4) {
        const struct json_row *r = &sp->rows[0];
        is_string("4", json_value(r, "generations", &found), "summary json: generation_spread counts 4 generations");
        is_double(ttft[0], strtod(json_value(r, "ttft_best_ms", &found), NULL), 1e-6, "spread: best TTFT");
        is_double((ttft[1] + ttft[2]) / 2, strtod(json_value(r, "ttft_median_ms", &found), NULL), 1e-5,
                  "spread: median TTFT (mean of the middle two)");
        is_double(ttft[3], strtod(json_value(r, "ttft_p90_ms", &found), NULL), 1e-6, "spread: p90 TTFT");
        is_double(tok[3], strtod(json_value(r, "tokens_best_per_s", &found), NULL), 1e-6, "spread: best tokens/s");
        is_double((tok[1] + tok[2]) / 2, strtod(json_value(r, "tokens_median_per_s", &found), NULL), 1e-5,
                  "spread: median tokens/s");
        is_double(tok[0], strtod(json_value(r, "tokens_p90_per_s", &found), NULL), 1e-6, "spread: p90 tokens/s");
        ok(ttft[0] < ttft[3], "spread: the generations differ (%.6f .. %.6f ms)", ttft[0], ttft[3]);
    } else {
        ok(0, "summary json: one generation_spread row and 4 TTFT and tokens/s values (%zu, %zu)", nt, nk);
    }
    {
        const struct json_report *tr = json_report(&sum, "trace");
        ok(tr && tr->nrows == 1 && strcmp(json_value(&tr->rows[0], "records_lost", &found), "0") == 0 && found &&
               json_value(&tr->rows[0], "shim_ns_per_call", &found) == NULL && found,
           "summary json: trace has records_lost and shim_ns_per_call (null: not measured)");
    }
    json_doc_free(&sum);
}

/* html_esc on random bytes: the output is well-formed text, and decoding
 * it gives the input with invalid UTF-8 and controls as U+FFFD. */
static void check_escaper(void)
{
    static const char alphabet[] = "<>&\"'; #x\x01\x7f\xc3\xa9\xe2\x80\xa6\xf0\x9f\x98\x80\xff\xc0\xed\xa0";
    size_t i, k, bad = 0;
    unsigned seed = 12345;
    for (i = 0; i < 20000; i++) {
        char in[40], *out = NULL, *wrapped = NULL, *dec, *want;
        size_t len = 0, n = (seed = seed * 1103515245u + 12345u) >> 16 & 31;
        struct html_doc doc;
        FILE *f;
        for (k = 0; k < n; k++) {
            seed = seed * 1103515245u + 12345u;
            in[k] = (seed >> 16) & 1 ? alphabet[(seed >> 17) % (sizeof alphabet - 1)] : (char)((seed >> 17) & 0xff);
            if (in[k] == '\0')
                in[k] = 'a';
        }
        in[n] = '\0';
        f = open_memstream(&out, &len);
        if (f == NULL)
            bail("open_memstream");
        html_esc(f, in);
        fclose(f);
        if (asprintf(&wrapped, "<p title=\"%s\">%s</p>", out, out) < 0)
            bail("out of memory");
        html_parse(wrapped, &doc);
        dec = html_unescape(out, strlen(out));
        want = utf8_replace(in);
        if ((doc.problem[0] || strcmp(dec, want) != 0 || strpbrk(out, "<>\"'") != NULL) && bad++ < 3)
            diag("escaping %zu bytes: %s; decoded %s, want %s", n, doc.problem[0] ? doc.problem : "round trip", dec,
                 want);
        html_doc_free(&doc);
        free(dec);
        free(want);
        free(out);
        free(wrapped);
    }
    ok(bad == 0, "html_esc: 20000 random byte strings come out as well-formed text that decodes to the input "
                 "(invalid UTF-8 and controls as U+FFFD)");
}

/* ---- compare ------------------------------------------------------------------------------------- */

static void check_compare(const char *label, const char *a, const char *b)
{
    const char *dir = test_tmpdir();
    char p1[4200], p2[4200], *page, *page2;
    struct json_doc sa, ga, sb, gb, cmp;
    const struct json_doc *docs[2];
    struct html_doc doc;
    struct page_counts counts[32];
    size_t nc = 0, charts;
    struct run_result r;

    snprintf(p1, sizeof p1, "%s/%s-compare.html", dir, label);
    snprintf(p2, sizeof p2, "%s/%s-html2.html", dir, label);
    r = report_run("compare", "--html", "-o", p1, a, b, NULL);
    ok(run_exited_with(&r, 0), "%s: compare --html writes the page", label);
    run_result_free(&r);
    r = report_run("html", "-o", p2, a, b, NULL);
    ok(run_exited_with(&r, 0), "%s: html A B writes the page", label);
    run_result_free(&r);
    page = read_page(p1);
    page2 = read_page(p2);
    ok(strcmp(page, page2) == 0, "%s: compare --html and html A B write the same page", label);
    free(page2);

    json_of(&sa, "summary", a, NULL);
    json_of(&ga, "gaps", a, NULL);
    json_of(&sb, "summary", b, NULL);
    json_of(&gb, "gaps", b, NULL);
    json_of(&cmp, "compare", a, b);
    check_page_form(label, page, &doc);
    docs[0] = &sa;
    docs[1] = &ga;
    check_numbers("compare side A", &doc, "a", docs, 2, counts, &nc);
    check_coverage("compare side A", &doc, page, "a", &sa, &ga, counts, nc);
    check_timeline("compare side A", &doc, "a", &sa);
    nc = 0;
    docs[0] = &sb;
    docs[1] = &gb;
    check_numbers("compare side B", &doc, "b", docs, 2, counts, &nc);
    check_coverage("compare side B", &doc, page, "b", &sb, &gb, counts, nc);
    check_timeline("compare side B", &doc, "b", &sb);
    nc = 0;
    docs[0] = &cmp;
    check_numbers("compare: what changed", &doc, NULL, docs, 1, counts, &nc);
    is_int((long long)rows_of(&cmp, "metrics"), (long long)count_of(counts, nc, "metrics"),
           "compare: a row per metric");
    check_lengths("compare: both runs on one scale", &doc, page, NULL, 1, &kernel_bars);
    check_lengths("compare: both runs on one scale", &doc, page, NULL, 1, &gap_ranges);
    in_chart(&doc, page, "chart-kernels", "a", "cuda_gpu_kern_sum", &charts);
    ok(charts == 1 && strstr(page, "--runs:2") != NULL, "compare: two columns, each with its charts");
    html_doc_free(&doc);
    json_doc_free(&sa);
    json_doc_free(&ga);
    json_doc_free(&sb);
    json_doc_free(&gb);
    json_doc_free(&cmp);
    free(page);
}

/* ---- damaged traces and bad options --------------------------------------------------------------------- */

static size_t leftovers(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static void check_damaged(const char *good)
{
    const char *dir = test_tmpdir();
    char bad[4200], cut[4200], out[4200], keep[4200];
    size_t len;
    char *data = test_read_file(good, &len);
    struct run_result r;

    if (data == NULL || len < 64)
        bail("cannot read %s", good);
    snprintf(bad, sizeof bad, "%s/damaged.obs", dir);
    snprintf(cut, sizeof cut, "%s/cut.obs", dir);
    snprintf(out, sizeof out, "%s/damaged-page.html", dir);
    snprintf(keep, sizeof keep, "%s/kept-page.html", dir);
    data[0] ^= 0x5a; /* the magic */
    test_write_file(bad, data, len);
    data[0] ^= 0x5a;
    test_write_file(cut, data, 20); /* half a header */
    free(data);

    r = report_run("html", bad, "-o", out, NULL);
    ok(run_exited_with(&r, 1) && strstr(r.err, "damaged.obs: ") && count_lines_with(r.err, "obs-report:") == 1,
       "damaged trace: exit 1 and one message (%s)", r.err);
    ok(access(out, F_OK) != 0 && leftovers(dir, "damaged-page.html") == 0,
       "damaged trace: no output file, no temporary file left");
    run_result_free(&r);
    r = report_run("html", cut, "-o", out, NULL);
    ok(run_exited_with(&r, 1) && access(out, F_OK) != 0 && leftovers(dir, "damaged-page.html") == 0,
       "truncated header: exit 1, no output file (%s)", r.err);
    run_result_free(&r);
    test_write_file(keep, "before\n", 7);
    r = report_run("html", bad, "-o", keep, NULL);
    {
        char *k = test_read_file(keep, NULL);
        ok(run_exited_with(&r, 1) && k && strcmp(k, "before\n") == 0 && leftovers(dir, "kept-page.html") == 1,
           "damaged trace: an existing output file is left as it was");
        free(k);
    }
    run_result_free(&r);
    r = report_run("compare", "--html", "-o", out, good, bad, NULL);
    ok(run_exited_with(&r, 1) && access(out, F_OK) != 0 && leftovers(dir, "damaged-page.html") == 0,
       "compare --html with a damaged B: exit 1, no output file");
    run_result_free(&r);
    r = report_run("html", test_path(dir, "missing.obs"), "-o", out, NULL);
    ok(run_exited_with(&r, 1) && access(out, F_OK) != 0, "a missing trace: exit 1, no output file");
    run_result_free(&r);
    r = report_run("html", good, "-o", test_path(dir, "no/such/dir/page.html"), NULL);
    ok(run_exited_with(&r, 1) && strstr(r.err, "page.html"), "an output that cannot be written: exit 1 (%s)", r.err);
    run_result_free(&r);
}

static void check_usage(const char *good)
{
    static const struct {
        const char *a[6];
        const char *why;
    } cases[] = {
        {{"html", NULL}, "no trace"},
        {{"html", "--generation", "x", "T", NULL}, "a generation that is not a number"},
        {{"html", "--generation", "-1", "T", NULL}, "a negative generation"},
        {{"html", "T", "T", "T", NULL}, "three traces"},
        {{"html", "--format", "json", "T", NULL}, "an option html does not have"},
        {{"compare", "--html", "--format", "json", "T", "T"}, "compare --html with --format"},
    };
    size_t i, k;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *argv[10];
        struct run_result r;
        size_t n = 0;
        argv[n++] = report;
        for (k = 0; k < 6 && cases[i].a[k]; k++)
            argv[n++] = strcmp(cases[i].a[k], "T") == 0 ? good : cases[i].a[k];
        argv[n] = NULL;
        if (run_program(argv, NULL, 60, &r) != 0)
            bail("cannot run %s", report);
        ok(run_exited_with(&r, 2) && strstr(r.err, "obs-report") && r.out_len == 0, "usage: %s: exit 2", cases[i].why);
        run_result_free(&r);
    }
    {
        struct run_result r = report_run("html", "--help", NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, "--generation N") && strstr(r.out, "Usage: obs-report html"),
           "html --help");
        run_result_free(&r);
        r = report_run("--help", NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, "  html "), "obs-report --help lists html");
        run_result_free(&r);
    }
}

/* ---- workload traces ------------------------------------------------------------------------------- */

static int make_workload_trace(const char *workload, const char *name, int gpu, const char *const *args,
                               char *path, size_t len)
{
    char out_env[4200], prefix[4100], inject[4200];
    const char *argv[12];
    const char *env[8];
    struct run_result r;
    size_t n = 0, e = 0, i;

    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), name);
    snprintf(path, len, "%s.obs", prefix);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    argv[n++] = workload;
    for (i = 0; args[i] && n < 11; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    env[e++] = out_env;
    env[e++] = sim_library_path_env();
    env[e++] = inject;
    env[e++] = "OBS_SUMMARY=0";
    env[e++] = "OBS_JSON=0";
    if (gpu)
        env[e++] = "OBS_GPU_TIME=events";
    env[e] = NULL;
    shim_run(argv, env, 1, 120, &r);
    if (!run_exited_with(&r, 0) || access(path, R_OK) != 0) {
        diag("%s: status %d, stderr: %s", name, r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    return 0;
}

/* A trace with model layers (the scenario corpus's hf_eager under the shim:
 * 32 layers, 2 generations of 6 decode steps): the Layers section's bars
 * (the slowest 10) and its heat map (a cell per layer and decode step of
 * one generation, darker for more). */
static void check_layers_page(const char *dir)
{
    char obs_run[4200], prefix[4300], obs[4300], scn[4300], replay[4300], page[4300];
    const char *argv[] = {NULL, "--sim", "-o", NULL, "--", NULL, NULL, NULL};
    const char *env[] = {"OBS_SIM_QUIET=1", "OBS_SUMMARY=0", "OBS_TRACE=none", NULL};
    struct run_result r;
    struct html_doc doc;
    size_t i, bars = 0, cells = 0, charts = 0, valued = 0;
    char *text;

    snprintf(obs_run, sizeof obs_run, "%s/contrib/obs-run", test_builddir());
    snprintf(prefix, sizeof prefix, "%s/layers", dir);
    snprintf(obs, sizeof obs, "%s/layers.obs", dir);
    snprintf(replay, sizeof replay, "%s/tests/apps/llm_replay", test_builddir());
    snprintf(scn, sizeof scn, "%s/tests/scenarios/hf_eager.scn", test_srcdir());
    argv[0] = obs_run;
    argv[3] = prefix;
    argv[5] = replay;
    argv[6] = scn;
    if (run_program(argv, env, 300, &r) != 0 || !run_exited_with(&r, 0))
        bail("cannot run %s under %s", replay, obs_run);
    run_result_free(&r);
    snprintf(page, sizeof page, "%s/layers.html", dir);
    if (!write_page("layers", obs, page, NULL, NULL))
        return;
    text = read_page(page);
    check_page_form("layers", text, &doc);
    for (i = 0; i < doc.n; i++) {
        const char *c = html_attr(&doc.e[i], "class");
        if (c == NULL)
            continue;
        if (strcmp(doc.e[i].tag, "svg") == 0 && (strcmp(c, "chart-layers") == 0 || strcmp(c, "chart-layer-steps") == 0))
            charts++;
        if (strcmp(doc.e[i].tag, "rect") == 0 && strcmp(c, "cell") == 0) {
            cells++;
            valued += html_attr(&doc.e[i], "data-value") != NULL;
        }
    }
    {
        const char *from = strstr(text, "class=\"chart-layers\""), *to = from ? strstr(from, "</svg>") : NULL;
        for (const char *p = from; p && to && (p = strstr(p, "<g class=\"bar\"")) != NULL && p < to; p++)
            bars++;
    }
    ok(charts == 2 && bars == 10 && cells == 32 * 6 && valued == cells,
       "layers: the slowest 10 layers as bars (%zu), a heat map of 32 layers x 6 decode steps (%zu cells, %zu with a "
       "value)",
       bars, cells, valued);
    html_doc_free(&doc);
    free(text);
}

int main(void)
{
    static const char *const args_a[] = {"--decode", "8", "--repeat", "3", NULL};
    static const char *const args_b[] = {"--decode", "4", "--repeat", "2", "--graphs", NULL};
    const char *dir, *workload = NULL, *why = "obs_cuda not built";
    char fixture[4200], hostile[4200], page[4200], wl_gpu[4200], wl_host[4200], wl_b[4200];
    size_t i;

    report = strdup(test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        bail("%s was not built", report);
    plan_lazy();
    dir = test_tmpdir();
    check_escaper();

    snprintf(hostile, sizeof hostile, "%s/hostile.obs", dir);
    if (hostile_trace_write(hostile) != 0)
        bail("cannot write %s", hostile);
    check_summary_json(hostile);
    snprintf(page, sizeof page, "%s/hostile.html", dir);
    if (write_page("hostile", hostile, page, NULL, NULL)) {
        char *text = read_page(page);
        check_escaping(text);
        free(text);
        check_single_page("hostile", hostile, page);
    }
    snprintf(page, sizeof page, "%s/hostile-g2.html", dir);
    if (write_page("hostile --generation 2", hostile, page, "--generation", "2")) {
        char *text = read_page(page);
        ok(strstr(text, "class=\"timeline\" data-generation=\"2\"") != NULL, "--generation 2: its timeline");
        free(text);
    }
    snprintf(page, sizeof page, "%s/hostile-g99.html", dir);
    if (write_page("hostile --generation 99", hostile, page, "--generation", "99")) {
        char *text = read_page(page);
        ok(strstr(text, "No generation 99 in this run.") != NULL && strstr(text, "class=\"timeline\"") == NULL,
           "--generation 99: says there is none");
        free(text);
    }

    check_layers_page(dir);

    snprintf(fixture, sizeof fixture, "%s/fixture.obs", dir);
    if (fixture_write(fixture, 0) != 0)
        bail("cannot write the fixture");
    snprintf(page, sizeof page, "%s/fixture.html", dir);
    if (write_page("fixture", fixture, page, NULL, NULL))
        check_single_page("fixture", fixture, page);
    {
        /* a trace of a header and nothing else: every section says it has nothing */
        char empty[4200], *data = test_read_file(fixture, NULL);
        snprintf(empty, sizeof empty, "%s/empty.obs", dir);
        if (data == NULL)
            bail("cannot read %s", fixture);
        test_write_file(empty, data, 64);
        free(data);
        snprintf(page, sizeof page, "%s/empty.html", dir);
        if (write_page("header only", empty, page, NULL, NULL)) {
            struct html_doc doc;
            char *text = read_page(page);
            check_page_form("header only", text, &doc);
            ok(strstr(text, "No kernel launches recorded.") &&
                   strstr(text, "No generations: the trace has no phases.") &&
                   strstr(text, "class=\"timeline\"") == NULL,
               "header only: the sections say there is nothing to draw");
            html_doc_free(&doc);
            free(text);
        }
    }
    check_damaged(fixture);
    check_usage(fixture);
    check_compare("hostile-fixture", hostile, fixture);

    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        if (strcmp(workload_bins[i].label, "obs_cuda") == 0)
            workload = workload_path(&workload_bins[i], &why);
    if (workload == NULL) {
        skip("workload traces: %s", why);
        return 0;
    }
    if (make_workload_trace(workload, "wl-gpu", 1, args_a, wl_gpu, sizeof wl_gpu) != 0 ||
        make_workload_trace(workload, "wl-host", 0, args_a, wl_host, sizeof wl_host) != 0 ||
        make_workload_trace(workload, "wl-b", 1, args_b, wl_b, sizeof wl_b) != 0)
        bail("the workload did not run under the shim");
    snprintf(page, sizeof page, "%s/wl-gpu.html", dir);
    if (write_page("workload, GPU time", wl_gpu, page, NULL, NULL))
        check_single_page("workload, GPU time", wl_gpu, page);
    snprintf(page, sizeof page, "%s/wl-host.html", dir);
    if (write_page("workload, host time", wl_host, page, NULL, NULL)) {
        char *text = read_page(page);
        check_single_page("workload, host time", wl_host, page);
        ok(strstr(text, "not available: the trace has no GPU time") != NULL,
           "workload, host time: the device gaps say they need GPU time");
        free(text);
    }
    check_compare("workload", wl_gpu, wl_b);
    return 0;
}
