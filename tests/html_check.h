/* What the tests of `obs-report html` share (tests/t_report_html.c,
 * tests/t_report_html_browser.c): reading the page back (tags, attributes,
 * entities; a well-formedness check), reading a report document written
 * with --format json, and a trace whose names need escaping. */
#ifndef OBS_TESTS_HTML_CHECK_H
#define OBS_TESTS_HTML_CHECK_H

#include <stddef.h>

/* ---- the page ------------------------------------------------------------------- */

struct html_attr {
    char *name, *value; /* value with its entities decoded */
};

struct html_elem {
    char *tag;              /* lower case */
    struct html_attr *attrs;
    size_t nattrs;
    size_t offset, end;     /* the start tag's bytes in the page: [offset, end) */
};

struct html_doc {
    struct html_elem *e;    /* every start tag, in order */
    size_t n;
    char problem[512];      /* the first well-formedness problem, "" if none */
};

/* Parse text: start tags with their attributes, and check it is well formed
 * enough: every '<' opens a tag, a comment or the doctype; tags nest and
 * close (void elements and self-closed SVG ones apart); attribute values
 * are quoted; every '&' starts a known entity; the text is UTF-8. */
void html_parse(const char *text, struct html_doc *doc);
void html_doc_free(struct html_doc *doc);
/* An attribute's value, or NULL. */
const char *html_attr(const struct html_elem *e, const char *name);

/* Decode &amp; &lt; &gt; &quot; &#39; &#NN; &#xNN; into a malloc'ed string. */
char *html_unescape(const char *s, size_t len);

/* ---- report documents (--format json) --------------------------------------------- */

struct json_row {
    char **keys, **values; /* values: the number's text, the decoded string, or NULL for null */
    int *is_string;
    size_t n;
};

struct json_report {
    char *name;
    struct json_row *rows;
    size_t nrows;
};

struct json_doc {
    struct json_report *r;
    size_t n;
};

/* Parse {"report": [{"key": value, ...}, ...], ..., "notes": [...]}.
 * Returns 0, or -1 when it is not such a document. */
int json_doc_parse(const char *text, struct json_doc *doc);
void json_doc_free(struct json_doc *doc);
const struct json_report *json_report(const struct json_doc *doc, const char *name);
/* The row's value text for key; *found 0 when the row has no such key. */
const char *json_value(const struct json_row *row, const char *key, int *found);

/* Invalid UTF-8 and control characters (but tab and newline) as U+FFFD,
 * as the page writes them (malloc'ed). */
char *utf8_replace(const char *s);

/* ---- a trace with names that need escaping ---------------------------------------------- */

/* Kernel names, as the reader gives them. */
#define HOSTILE_KERNEL_1 "void gemm<float, 128>(float const*, float*) [with T = \"a&b\"]"
#define HOSTILE_KERNEL_2 "</script><script>alert('x')</script>"
#define HOSTILE_KERNEL_3 "attn<&lt;&#62;>"
#define HOSTILE_KERNEL_4 "bad\xff\xfe utf8 \x01 ctl"
#define HOSTILE_PHASE "<KV&GATHER>"
#define HOSTILE_CMDLINE "serve --model '<b>x</b>' & \"quoted\""
#define HOSTILE_THREAD "worker <1> & \"two\""
#define HOSTILE_GENERATIONS 4

/* Write it: one thread, HOSTILE_GENERATIONS generations of PREFILL, DECODE
 * steps 0 and 1 (with a HOSTILE_PHASE range inside step 1) and a sync per
 * step, GPU spans for the kernels and an HtoD copy. Returns 0 or -errno. */
int hostile_trace_write(const char *path);

#endif
