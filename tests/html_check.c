/* What the tests of `obs-report html` share (see html_check.h). */
#include "html_check.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_format.h"
#include "trace/trace_writer.h"

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        abort();
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* ---- UTF-8 ----------------------------------------------------------------------- */

static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return (s[1] & 0xc0) == 0x80 ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (c == 0xe0 && s[1] < 0xa0) ||
            (c == 0xed && s[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80 ||
            (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

char *utf8_replace(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    char *out = xrealloc(NULL, strlen(s) * 3 + 1), *o = out;
    while (*p) {
        size_t n = utf8_len(p);
        if (n == 0 || (*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
            continue;
        }
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    *o = '\0';
    return out;
}

/* ---- entities ---------------------------------------------------------------------- */

/* The length of the entity at s ("&amp;" ...), 0 if it is not one we write. */
static size_t entity_len(const char *s, unsigned long *cp)
{
    static const struct {
        const char *name;
        unsigned long cp;
    } named[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}};
    size_t i;
    for (i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strncmp(s, named[i].name, strlen(named[i].name)) == 0) {
            *cp = named[i].cp;
            return strlen(named[i].name);
        }
    if (s[1] == '#') {
        char *end;
        int hex = s[2] == 'x' || s[2] == 'X';
        unsigned long v = strtoul(s + 2 + hex, &end, hex ? 16 : 10);
        if (end == s + 2 + hex || *end != ';' || v == 0 || v > 0x10ffff)
            return 0;
        *cp = v;
        return (size_t)(end - s) + 1;
    }
    return 0;
}

static size_t put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

char *html_unescape(const char *s, size_t len)
{
    char *out = xrealloc(NULL, len * 4 + 1), *o = out;
    size_t i = 0;
    while (i < len) {
        unsigned long cp;
        size_t n;
        if (s[i] == '&' && (n = entity_len(s + i, &cp)) > 0) {
            o += put_utf8(o, cp);
            i += n;
            continue;
        }
        *o++ = s[i++];
    }
    *o = '\0';
    return out;
}

/* ---- the page ------------------------------------------------------------------------ */

static int is_void(const char *tag)
{
    static const char *const v[] = {"area", "base", "br", "col", "embed", "hr", "img", "input",
                                    "link", "meta", "source", "track", "wbr", NULL};
    size_t i;
    for (i = 0; v[i]; i++)
        if (strcmp(tag, v[i]) == 0)
            return 1;
    return 0;
}

static void problem(struct html_doc *doc, const char *text, size_t at, const char *what)
{
    size_t line = 1, i;
    if (doc->problem[0])
        return;
    for (i = 0; i < at; i++)
        line += text[i] == '\n';
    snprintf(doc->problem, sizeof doc->problem, "line %zu: %s near \"%.40s\"", line, what, text + at);
}

void html_parse(const char *text, struct html_doc *doc)
{
    size_t len = strlen(text), i = 0, depth = 0, k;
    char **stack = NULL;

    memset(doc, 0, sizeof *doc);
    while (i < len) {
        unsigned long cp;
        if (text[i] == '&') {
            if (entity_len(text + i, &cp) == 0)
                problem(doc, text, i, "a bare '&'");
            i++;
            continue;
        }
        if (text[i] == '>') {
            problem(doc, text, i, "a bare '>'");
            i++;
            continue;
        }
        if (text[i] != '<') {
            size_t n = utf8_len((const unsigned char *)text + i);
            if (n == 0)
                problem(doc, text, i, "bytes that are not UTF-8");
            i += n ? n : 1;
            continue;
        }
        if (strncmp(text + i, "<!--", 4) == 0) {
            const char *e = strstr(text + i + 4, "-->");
            if (e == NULL) {
                problem(doc, text, i, "an unclosed comment");
                break;
            }
            i = (size_t)(e - text) + 3;
            continue;
        }
        if (strncasecmp(text + i, "<!DOCTYPE html>", 15) == 0) {
            i += 15;
            continue;
        }
        if (text[i + 1] == '/') { /* end tag */
            size_t s = i + 2, e = s;
            while (e < len && (isalnum((unsigned char)text[e]) || text[e] == '-'))
                e++;
            if (e == s || text[e] != '>') {
                problem(doc, text, i, "a bad end tag");
                i++;
                continue;
            }
            if (depth == 0 || strncasecmp(stack[depth - 1], text + s, e - s) != 0 ||
                stack[depth - 1][e - s] != '\0')
                problem(doc, text, i, depth ? "an end tag that does not close the open element" : "a stray end tag");
            else
                free(stack[--depth]);
            i = e + 1;
            continue;
        }
        if (!isalpha((unsigned char)text[i + 1])) {
            problem(doc, text, i, "a bare '<'");
            i++;
            continue;
        }
        {
            struct html_elem el;
            size_t s = i + 1, e = s;
            int self_closed = 0;
            memset(&el, 0, sizeof el);
            el.offset = i;
            while (e < len && (isalnum((unsigned char)text[e]) || text[e] == '-'))
                e++;
            el.tag = xstrndup(text + s, e - s);
            for (k = 0; el.tag[k]; k++)
                el.tag[k] = (char)tolower((unsigned char)el.tag[k]);
            for (;;) { /* attributes */
                size_t ns, ne;
                while (e < len && isspace((unsigned char)text[e]))
                    e++;
                if (e >= len) {
                    problem(doc, text, i, "an unclosed tag");
                    break;
                }
                if (text[e] == '>') {
                    e++;
                    break;
                }
                if (text[e] == '/' && text[e + 1] == '>') {
                    self_closed = 1;
                    e += 2;
                    break;
                }
                ns = e;
                while (e < len && (isalnum((unsigned char)text[e]) || text[e] == '-' || text[e] == '_' ||
                                   text[e] == ':'))
                    e++;
                ne = e;
                if (ne == ns) {
                    problem(doc, text, e, "a bad attribute");
                    e++;
                    continue;
                }
                el.attrs = xrealloc(el.attrs, (el.nattrs + 1) * sizeof *el.attrs);
                el.attrs[el.nattrs].name = xstrndup(text + ns, ne - ns);
                if (text[e] == '=') {
                    const char *q;
                    if (text[e + 1] != '"') {
                        problem(doc, text, e, "an unquoted attribute value");
                        el.attrs[el.nattrs].value = xstrndup("", 0);
                    } else {
                        q = strchr(text + e + 2, '"');
                        if (q == NULL) {
                            problem(doc, text, e, "an unterminated attribute value");
                            q = text + len;
                        }
                        if (memchr(text + e + 2, '<', (size_t)(q - (text + e + 2))) != NULL)
                            problem(doc, text, e, "a '<' inside an attribute value");
                        for (k = e + 2; k < (size_t)(q - text); k++)
                            if (text[k] == '&' && entity_len(text + k, &(unsigned long){0}) == 0)
                                problem(doc, text, k, "a bare '&' inside an attribute value");
                        el.attrs[el.nattrs].value = html_unescape(text + e + 2, (size_t)(q - (text + e + 2)));
                        e = (size_t)(q - text) + (*q ? 1 : 0);
                    }
                } else {
                    el.attrs[el.nattrs].value = xstrndup("", 0);
                }
                el.nattrs++;
            }
            el.end = e;
            doc->e = xrealloc(doc->e, (doc->n + 1) * sizeof *doc->e);
            doc->e[doc->n++] = el;
            if (!self_closed && !is_void(el.tag)) {
                stack = xrealloc(stack, (depth + 1) * sizeof *stack);
                stack[depth++] = xstrndup(el.tag, strlen(el.tag));
                if (strcmp(el.tag, "style") == 0 || strcmp(el.tag, "script") == 0 ||
                    strcmp(el.tag, "title") == 0) { /* raw text up to its end tag */
                    char close[16];
                    const char *c;
                    snprintf(close, sizeof close, "</%s>", el.tag);
                    c = strstr(text + e, close);
                    if (c == NULL) {
                        problem(doc, text, i, "an unclosed raw-text element");
                        break;
                    }
                    if (strcmp(el.tag, "title") == 0 && memchr(text + e, '<', (size_t)(c - (text + e))) != NULL)
                        problem(doc, text, e, "a '<' inside a title");
                    e = (size_t)(c - text);
                }
            }
            i = e;
        }
    }
    if (depth)
        problem(doc, text, len, "elements left open at the end");
    while (depth)
        free(stack[--depth]);
    free(stack);
}

void html_doc_free(struct html_doc *doc)
{
    size_t i, k;
    for (i = 0; i < doc->n; i++) {
        for (k = 0; k < doc->e[i].nattrs; k++) {
            free(doc->e[i].attrs[k].name);
            free(doc->e[i].attrs[k].value);
        }
        free(doc->e[i].attrs);
        free(doc->e[i].tag);
    }
    free(doc->e);
    memset(doc, 0, sizeof *doc);
}

const char *html_attr(const struct html_elem *e, const char *name)
{
    size_t k;
    for (k = 0; k < e->nattrs; k++)
        if (strcmp(e->attrs[k].name, name) == 0)
            return e->attrs[k].value;
    return NULL;
}

/* ---- report documents ------------------------------------------------------------------- */

struct jp {
    const char *s;
    int bad;
};

static void ws(struct jp *p)
{
    while (*p->s == ' ' || *p->s == '\n' || *p->s == '\t' || *p->s == '\r')
        p->s++;
}

static char *jstring(struct jp *p)
{
    char *out, *o;
    ws(p);
    if (*p->s != '"') {
        p->bad = 1;
        return NULL;
    }
    p->s++;
    out = o = xrealloc(NULL, strlen(p->s) + 1);
    while (*p->s && *p->s != '"') {
        if (*p->s == '\\') {
            p->s++;
            switch (*p->s) {
            case 'n':
                *o++ = '\n';
                break;
            case 't':
                *o++ = '\t';
                break;
            case 'u': {
                char hex[5] = {0};
                memcpy(hex, p->s + 1, 4);
                o += put_utf8(o, strtoul(hex, NULL, 16));
                p->s += 4;
                break;
            }
            default:
                *o++ = *p->s;
            }
            p->s++;
            continue;
        }
        *o++ = *p->s++;
    }
    *o = '\0';
    if (*p->s != '"')
        p->bad = 1;
    else
        p->s++;
    return out;
}

/* A scalar: its text (numbers), the decoded string, or NULL for null. */
static char *jscalar(struct jp *p, int *is_string)
{
    const char *b;
    ws(p);
    *is_string = 0;
    if (*p->s == '"') {
        *is_string = 1;
        return jstring(p);
    }
    if (strncmp(p->s, "null", 4) == 0) {
        p->s += 4;
        return NULL;
    }
    b = p->s;
    while (*p->s && strchr("-+.0123456789eE", *p->s))
        p->s++;
    if (p->s == b)
        p->bad = 1;
    return xstrndup(b, (size_t)(p->s - b));
}

static int expect(struct jp *p, char c)
{
    ws(p);
    if (*p->s != c) {
        p->bad = 1;
        return 0;
    }
    p->s++;
    return 1;
}

static int peek(struct jp *p, char c)
{
    ws(p);
    return *p->s == c;
}

int json_doc_parse(const char *text, struct json_doc *doc)
{
    struct jp p = {text, 0};
    memset(doc, 0, sizeof *doc);
    if (!expect(&p, '{'))
        return -1;
    while (!p.bad && !peek(&p, '}')) {
        struct json_report rep;
        memset(&rep, 0, sizeof rep);
        rep.name = jstring(&p);
        expect(&p, ':');
        expect(&p, '[');
        while (!p.bad && !peek(&p, ']')) {
            if (peek(&p, '"')) { /* notes */
                free(jstring(&p));
            } else {
                struct json_row row;
                memset(&row, 0, sizeof row);
                expect(&p, '{');
                while (!p.bad && !peek(&p, '}')) {
                    row.keys = xrealloc(row.keys, (row.n + 1) * sizeof *row.keys);
                    row.values = xrealloc(row.values, (row.n + 1) * sizeof *row.values);
                    row.is_string = xrealloc(row.is_string, (row.n + 1) * sizeof *row.is_string);
                    row.keys[row.n] = jstring(&p);
                    expect(&p, ':');
                    row.values[row.n] = jscalar(&p, &row.is_string[row.n]);
                    row.n++;
                    if (peek(&p, ','))
                        p.s++;
                }
                expect(&p, '}');
                rep.rows = xrealloc(rep.rows, (rep.nrows + 1) * sizeof *rep.rows);
                rep.rows[rep.nrows++] = row;
            }
            if (peek(&p, ','))
                p.s++;
        }
        expect(&p, ']');
        doc->r = xrealloc(doc->r, (doc->n + 1) * sizeof *doc->r);
        doc->r[doc->n++] = rep;
        if (peek(&p, ','))
            p.s++;
    }
    expect(&p, '}');
    return p.bad ? -1 : 0;
}

void json_doc_free(struct json_doc *doc)
{
    size_t i, j, k;
    for (i = 0; i < doc->n; i++) {
        for (j = 0; j < doc->r[i].nrows; j++) {
            struct json_row *row = &doc->r[i].rows[j];
            for (k = 0; k < row->n; k++) {
                free(row->keys[k]);
                free(row->values[k]);
            }
            free(row->keys);
            free(row->values);
            free(row->is_string);
        }
        free(doc->r[i].rows);
        free(doc->r[i].name);
    }
    free(doc->r);
    memset(doc, 0, sizeof *doc);
}

const struct json_report *json_report(const struct json_doc *doc, const char *name)
{
    size_t i;
    for (i = 0; i < doc->n; i++)
        if (doc->r[i].name && strcmp(doc->r[i].name, name) == 0)
            return &doc->r[i];
    return NULL;
}

const char *json_value(const struct json_row *row, const char *key, int *found)
{
    size_t k;
    for (k = 0; k < row->n; k++)
        if (strcmp(row->keys[k], key) == 0) {
            *found = 1;
            return row->values[k];
        }
    *found = 0;
    return NULL;
}

/* ---- the hostile trace -------------------------------------------------------------------------- */

#define H_TID 77
#define H_T0 5000000000ull

struct hrecs {
    union obs_record *r;
    size_t n;
    uint64_t t;   /* host clock */
    uint64_t gpu; /* device clock: work runs back to back, after its launch */
};

static union obs_record *hadd(struct hrecs *v, unsigned type)
{
    union obs_record *r;
    v->r = xrealloc(v->r, (v->n + 1) * sizeof *v->r);
    r = &v->r[v->n++];
    memset(r, 0, sizeof *r);
    r->call.type = (uint8_t)type;
    return r;
}

static void hphase(struct hrecs *v, unsigned event, uint16_t phase, uint32_t name, uint32_t step, uint32_t gen)
{
    union obs_record *r = hadd(v, OBS_REC_PHASE);
    r->phase.event = (uint8_t)event;
    r->phase.phase = phase;
    r->phase.name = name;
    r->phase.step = step;
    r->phase.generation = gen;
    r->phase.t = v->t++;
}

/* A call lasting dur on the host; with gpu_ns, a GPU span of that length
 * on stream 1 that starts when both the launch and the stream allow. */
static void hcall(struct hrecs *v, unsigned api, uint32_t name, uint32_t dur, uint64_t bytes, unsigned dir,
                  uint64_t gpu_ns)
{
    union obs_record *r = hadd(v, OBS_REC_CALL);
    uint64_t index = v->n - 1, begin = v->t;
    r->call.api = (uint16_t)api;
    r->call.t_begin = begin;
    r->call.t_dur = dur;
    r->call.name = name;
    r->call.stream = 1;
    r->call.flags = (uint8_t)((dir & OBS_CALL_DIR_MASK) | (gpu_ns ? OBS_CALL_GPU_TIMED : 0));
    if (name) {
        r->call.u.grid.x = 64;
        r->call.u.grid.y = 1;
        r->call.u.grid.z = 1;
        r->call.block_x = 128;
        r->call.block_y = 1;
        r->call.block_z = 1;
    } else {
        r->call.u.bytes = bytes;
    }
    v->t += dur + 300;
    if (gpu_ns) {
        union obs_record *s = hadd(v, OBS_REC_GPU_SPAN);
        if (v->gpu < begin + 500)
            v->gpu = begin + 500;
        s->gpu_span.tid = H_TID;
        s->gpu_span.call_index = index;
        s->gpu_span.gpu_begin = v->gpu;
        s->gpu_span.gpu_end = v->gpu + gpu_ns;
        s->gpu_span.stream = 1;
        v->gpu += gpu_ns + 200; /* an idle gap between pieces of work */
    }
}

int hostile_trace_write(const char *path)
{
    static const char meta[] = "cmdline=" HOSTILE_CMDLINE "\nexe=/opt/<serve>\n";
    static const char *const kernels[] = {HOSTILE_KERNEL_1, HOSTILE_KERNEL_2, HOSTILE_KERNEL_3, HOSTILE_KERNEL_4};
    struct hrecs v = {NULL, 0, H_T0, 0};
    struct obs_file_header h;
    uint32_t g, k;
    int fd, rc = 0;

    for (g = 0; g < HOSTILE_GENERATIONS; g++) {
        hphase(&v, OBS_PHASE_BEGIN, 200, 200, OBS_NO_STEP, g);
        hcall(&v, OBS_API_cudaMemcpyAsync, 0, 900, 1u << 20, OBS_DIR_HTOD, 3000);
        hcall(&v, OBS_API_cudaLaunchKernel, 1, 400, 0, 0, 20000 + 1000 * g);
        hcall(&v, OBS_API_cudaLaunchKernel, 4, 300, 0, 0, 4000);
        hphase(&v, OBS_PHASE_END, 200, 200, OBS_NO_STEP, g);
        for (k = 0; k < 2; k++) {
            hphase(&v, OBS_PHASE_BEGIN, 201, 210 + k, k, g);
            hcall(&v, OBS_API_cudaLaunchKernel, 2, 200, 0, 0, 6000 + 500 * k);
            if (k == 1) {
                hphase(&v, OBS_PHASE_BEGIN, 202, 202, k, g);
                hcall(&v, OBS_API_cudaLaunchKernel, 3, 250, 0, 0, 9000);
                hphase(&v, OBS_PHASE_END, 202, 202, k, g);
            }
            v.t = v.gpu > v.t ? v.gpu : v.t; /* the host waits for the token */
            hcall(&v, OBS_API_cudaStreamSynchronize, 0, 150, 0, 0, 0);
            hphase(&v, OBS_PHASE_END, 201, 210 + k, k, g);
        }
        v.t += 50000;
    }
    hcall(&v, OBS_API_cudaMemcpy, 0, 2000, 4096, OBS_DIR_DTOH, 1500);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(v.r);
        return -errno;
    }
    obs_trace_init_header(&h, 4321, OBS_FILE_GPU_TIME, H_T0, 0);
    rc |= obs_trace_write_header(fd, &h);
    rc |= obs_trace_write_meta(fd, meta, sizeof meta - 1);
    for (k = 0; k < 4; k++)
        rc |= obs_trace_write_string(fd, k + 1, OBS_STR_KERNEL_DEMANGLED, kernels[k], (uint32_t)strlen(kernels[k]));
    rc |= obs_trace_write_string(fd, H_TID, OBS_STR_THREAD_NAME, HOSTILE_THREAD, (uint32_t)strlen(HOSTILE_THREAD));
    rc |= obs_trace_write_string(fd, 200, OBS_STR_RANGE_NAME, "PREFILL", 7);
    rc |= obs_trace_write_string(fd, 201, OBS_STR_RANGE_NAME, "DECODE", 6);
    rc |= obs_trace_write_string(fd, 202, OBS_STR_RANGE_NAME, HOSTILE_PHASE, (uint32_t)strlen(HOSTILE_PHASE));
    rc |= obs_trace_write_string(fd, 210, OBS_STR_RANGE_NAME, "DECODE/STEP_0", 13);
    rc |= obs_trace_write_string(fd, 211, OBS_STR_RANGE_NAME, "DECODE/STEP_1", 13);
    rc |= obs_trace_write_records(fd, H_TID, 0, v.r, (uint32_t)v.n);
    free(v.r);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    return rc < 0 ? rc : 0;
}
