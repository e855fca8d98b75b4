/* The scenario parser: see scenario.h and docs/scenarios.md. */
#include "scenario.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_WORDS 80

struct parser {
    struct scenario *s;
    unsigned line;
    char *err;
    size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(p->err, p->errlen, "line %u: ", p->line);
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < p->errlen)
        vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* A decimal number in [lo, hi], the whole word. */
static int number(struct parser *p, const char *word, const char *what, unsigned lo, unsigned hi, unsigned *out)
{
    unsigned long v = 0;
    const char *c = word;
    if (*c == '\0')
        return fail(p, "%s: a number is expected", what);
    for (; *c; c++) {
        if (*c < '0' || *c > '9')
            return fail(p, "%s: '%s' is not a number", what, word);
        v = v * 10 + (unsigned long)(*c - '0');
        if (v > hi)
            return fail(p, "%s: %s is over %u", what, word, hi);
    }
    if (v < lo)
        return fail(p, "%s: %s is under %u", what, word, lo);
    *out = (unsigned)v;
    return 0;
}

/* "At+B", "At" or "B". */
static int grid_spec(struct parser *p, const char *word, unsigned *per_token, unsigned *base)
{
    char a[16] = "", b[16] = "";
    const char *t = strchr(word, 't');
    size_t la;
    *per_token = *base = 0;
    if (t == NULL)
        return number(p, word, "grid", 0, 1u << 30, base);
    la = (size_t)(t - word);
    if (la == 0 || la >= sizeof a)
        return fail(p, "grid: '%s' is not A, At or At+B", word);
    memcpy(a, word, la);
    if (number(p, a, "grid", 1, 1u << 20, per_token) != 0)
        return -1;
    if (t[1] == '\0')
        return 0;
    if (t[1] != '+' || strlen(t + 2) >= sizeof b)
        return fail(p, "grid: '%s' is not A, At or At+B", word);
    snprintf(b, sizeof b, "%s", t + 2);
    return number(p, b, "grid", 0, 1u << 30, base);
}

static int find_kernel(const struct scenario *s, const char *id, size_t len)
{
    int i;
    for (i = 0; i < s->nkernels; i++)
        if (strlen(s->kernels[i].id) == len && memcmp(s->kernels[i].id, id, len) == 0)
            return i;
    return -1;
}

static int printable_word(const char *w)
{
    for (; *w; w++)
        if ((unsigned char)*w <= ' ' || (unsigned char)*w >= 127)
            return 0;
    return 1;
}

static int kernel_line(struct parser *p, char **w, int n)
{
    struct scn_kernel k;
    int i, have_grid = 0;
    memset(&k, 0, sizeof k);
    k.block = 256;
    if (p->s->nkernels >= SCN_MAX_KERNELS)
        return fail(p, "more than %d kernels", SCN_MAX_KERNELS);
    for (i = 1; i < n; i++) {
        if (strncmp(w[i], "id=", 3) == 0) {
            size_t len = strlen(w[i] + 3);
            if (len == 0 || len >= SCN_ID_MAX)
                return fail(p, "kernel id: 1 to %d characters", SCN_ID_MAX - 1);
            if (strchr(w[i] + 3, ':') != NULL)
                return fail(p, "kernel id: no ':' allowed");
            memcpy(k.id, w[i] + 3, len + 1);
        } else if (strncmp(w[i], "name=", 5) == 0) {
            size_t len = strlen(w[i] + 5);
            if (len == 0 || len >= SCN_NAME_MAX)
                return fail(p, "kernel name: 1 to %d characters", SCN_NAME_MAX - 1);
            memcpy(k.name, w[i] + 5, len + 1);
        } else if (strncmp(w[i], "grid=", 5) == 0) {
            if (grid_spec(p, w[i] + 5, &k.per_token, &k.base) != 0)
                return -1;
            have_grid = 1;
        } else if (strncmp(w[i], "block=", 6) == 0) {
            if (number(p, w[i] + 6, "block", 1, 1024, &k.block) != 0)
                return -1;
        } else if (strcmp(w[i], "kv") == 0) {
            k.kv = 1;
        } else if (strcmp(w[i], "eager") == 0) {
            k.eager = 1;
        } else {
            return fail(p, "kernel: unknown field '%.40s'", w[i]);
        }
    }
    if (k.id[0] == '\0' || k.name[0] == '\0' || !have_grid)
        return fail(p, "kernel: id=, name= and grid= are required");
    if (k.per_token == 0 && k.base == 0)
        return fail(p, "kernel %s: grid 0", k.id);
    if (find_kernel(p->s, k.id, strlen(k.id)) >= 0)
        return fail(p, "kernel %s defined twice", k.id);
    p->s->kernels[p->s->nkernels++] = k;
    return 0;
}

/* "sync", or "h2d:N", "d2h:N", "d2d:N", "memset:N" with N a number,
 * optionally followed by t (x the evaluation's tokens) or n (x the tokens
 * generated). 1: it is one (filled in), 0: not such a word, -1: bad. */
static int call_item(struct parser *p, const char *what, const char *word, size_t len, struct scn_item *it)
{
    static const struct {
        const char *prefix;
        char kind, dir;
    } calls[] = {{"h2d:", SCN_ITEM_COPY, 'h'}, {"d2h:", SCN_ITEM_COPY, 'd'}, {"d2d:", SCN_ITEM_COPY, 'D'},
                 {"memset:", SCN_ITEM_MEMSET, 0}};
    char num[16];
    size_t j, plen, nlen;
    if (len == 4 && memcmp(word, "sync", 4) == 0) {
        it->kind = SCN_ITEM_SYNC;
        return 1;
    }
    for (j = 0; j < sizeof calls / sizeof calls[0]; j++) {
        plen = strlen(calls[j].prefix);
        if (len > plen && memcmp(word, calls[j].prefix, plen) == 0)
            break;
    }
    if (j == sizeof calls / sizeof calls[0])
        return 0;
    nlen = len - plen;
    it->kind = calls[j].kind;
    it->dir = calls[j].dir;
    it->per = 0;
    if (word[len - 1] == 't' || word[len - 1] == 'n') {
        it->per = word[len - 1];
        nlen--;
    }
    if (nlen == 0 || nlen >= sizeof num)
        return fail(p, "%s: '%.40s': a number of bytes, then t or n, expected", what, word);
    memcpy(num, word + plen, nlen);
    num[nlen] = '\0';
    if (number(p, num, what, 1, SCN_MAX_ITEM_BYTES, &it->bytes) != 0)
        return -1;
    return 1;
}

static int seq_line(struct parser *p, struct scn_seq *seq, char **w, int n)
{
    int i;
    for (i = 1; i < n; i++) {
        size_t len = strlen(w[i]);
        struct scn_item it;
        int r;
        memset(&it, 0, sizeof it);
        it.when = 'a';
        if (len > 2 && w[i][len - 2] == ':' && strchr("pdm", w[i][len - 1]) != NULL) {
            it.when = w[i][len - 1];
            len -= 2;
        }
        r = call_item(p, w[0], w[i], len, &it);
        if (r < 0)
            return -1;
        if (r == 0) {
            if (memchr(w[i], ':', len) != NULL)
                return fail(p, "%s: '%.40s': suffix :p, :d or :m expected", w[0], w[i]);
            it.kind = SCN_ITEM_KERNEL;
            it.kernel = find_kernel(p->s, w[i], len);
            if (it.kernel < 0)
                return fail(p, "%s: unknown kernel '%.40s' (define it first)", w[0], w[i]);
        }
        if (seq->n >= SCN_MAX_SEQ)
            return fail(p, "%s: more than %d items", w[0], SCN_MAX_SEQ);
        seq->items[seq->n++] = it;
    }
    return 0;
}

static int prompt_line(struct parser *p, char **w, int n)
{
    struct scn_prompt pr;
    int i, have_tokens = 0, have_steps = 0, have_full_steps = 0;
    memset(&pr, 0, sizeof pr);
    pr.repeat = 1;
    pr.reads = 1;
    if (p->s->nprompts >= SCN_MAX_PROMPTS)
        return fail(p, "more than %d prompt lines", SCN_MAX_PROMPTS);
    for (i = 1; i < n; i++) {
        static const struct {
            const char *key;
            size_t off;
            unsigned lo, hi;
        } keys[] = {
            {"tokens=", offsetof(struct scn_prompt, tokens), 1, SCN_MAX_TOKENS},
            {"steps=", offsetof(struct scn_prompt, steps), 0, SCN_MAX_STEPS},
            {"gap_ms=", offsetof(struct scn_prompt, gap_ms), 0, 60000},
            {"repeat=", offsetof(struct scn_prompt, repeat), 1, 1000},
            {"full_tokens=", offsetof(struct scn_prompt, full_tokens), 1, SCN_MAX_TOKENS},
            {"full_steps=", offsetof(struct scn_prompt, full_steps), 0, SCN_MAX_STEPS},
            {"full_repeat=", offsetof(struct scn_prompt, full_repeat), 1, 1000},
            {"reads=", offsetof(struct scn_prompt, reads), 0, SCN_MAX_SEQUENCES},
        };
        size_t j;
        for (j = 0; j < sizeof keys / sizeof keys[0]; j++)
            if (strncmp(w[i], keys[j].key, strlen(keys[j].key)) == 0)
                break;
        if (j == sizeof keys / sizeof keys[0])
            return fail(p, "prompt: unknown field '%.40s'", w[i]);
        if (number(p, w[i] + strlen(keys[j].key), keys[j].key, keys[j].lo, keys[j].hi,
                   (unsigned *)((char *)&pr + keys[j].off)) != 0)
            return -1;
        have_tokens |= j == 0;
        have_steps |= j == 1;
        have_full_steps |= j == 5;
    }
    if (!have_tokens || !have_steps)
        return fail(p, "prompt: tokens= and steps= are required");
    if (pr.full_tokens == 0)
        pr.full_tokens = pr.tokens;
    if (!have_full_steps)
        pr.full_steps = pr.steps;
    if (pr.full_repeat == 0)
        pr.full_repeat = pr.repeat;
    p->s->prompts[p->s->nprompts++] = pr;
    return 0;
}

static int choice(struct parser *p, char **w, int n, const char *const *words, int count, int *out)
{
    int i;
    if (n != 2)
        return fail(p, "%s: one value expected", w[0]);
    for (i = 0; i < count; i++)
        if (strcmp(w[1], words[i]) == 0) {
            *out = i;
            return 0;
        }
    return fail(p, "%s: unknown value '%.40s'", w[0], w[1]);
}

static int one_number(struct parser *p, char **w, int n, unsigned lo, unsigned hi, unsigned *out)
{
    if (n != 2)
        return fail(p, "%s: one value expected", w[0]);
    return number(p, w[1], w[0], lo, hi, out);
}

static int directive(struct parser *p, char **w, int n)
{
    static const char *const readbacks[] = {"copy", "async", "event", "none"};
    static const char *const graphs[] = {"none", "warmup", "after_prefill"};
    static const char *const streams[] = {"default", "own", "nonblocking"};
    static const char *const copies[] = {"async", "sync"};
    static const char *const inputs[] = {"prompt", "per_eval", "none"};
    static const char *const yesno[] = {"no", "yes"};
    struct scenario *s = p->s;
    int v;

    if (strcmp(w[0], "name") == 0) {
        if (n != 2 || strlen(w[1]) >= sizeof s->name)
            return fail(p, "name: one word of at most %zu characters", sizeof s->name - 1);
        snprintf(s->name, sizeof s->name, "%s", w[1]);
        return 0;
    }
    if (strcmp(w[0], "kernel") == 0)
        return kernel_line(p, w, n);
    if (strcmp(w[0], "pre") == 0)
        return seq_line(p, &s->pre, w, n);
    if (strcmp(w[0], "layer") == 0)
        return seq_line(p, &s->layer, w, n);
    if (strcmp(w[0], "post") == 0)
        return seq_line(p, &s->post, w, n);
    if (strcmp(w[0], "mask_check") == 0)
        return seq_line(p, &s->mask_check, w, n);
    if (strcmp(w[0], "stop_check") == 0)
        return seq_line(p, &s->stop_check, w, n);
    if (strcmp(w[0], "before_prompt") == 0)
        return seq_line(p, &s->before_prompt, w, n);
    if (strcmp(w[0], "prompt_prelude") == 0)
        return seq_line(p, &s->prompt_prelude, w, n);
    if (strcmp(w[0], "after_generation") == 0)
        return seq_line(p, &s->after_generation, w, n);
    if (strcmp(w[0], "prompt") == 0)
        return prompt_line(p, w, n);
    if (strcmp(w[0], "layers") == 0)
        return one_number(p, w, n, 1, SCN_MAX_LAYERS, &s->layers);
    if (strcmp(w[0], "chunk") == 0)
        return one_number(p, w, n, 0, SCN_MAX_TOKENS, &s->chunk);
    if (strcmp(w[0], "threads") == 0)
        return one_number(p, w, n, 1, SCN_MAX_THREADS, &s->threads);
    if (strcmp(w[0], "read_bytes") == 0)
        return one_number(p, w, n, 4, SCN_MAX_READ_BYTES, &s->read_bytes);
    if (strcmp(w[0], "sequences") == 0)
        return one_number(p, w, n, 1, SCN_MAX_SEQUENCES, &s->sequences);
    if (strcmp(w[0], "inputs") == 0) {
        if (choice(p, w, n, inputs, 3, &v) != 0)
            return -1;
        s->inputs = (enum scn_inputs)v;
        return 0;
    }
    if (strcmp(w[0], "chunk_read") == 0) {
        if (choice(p, w, n, yesno, 2, &v) != 0)
            return -1;
        s->chunk_read = v;
        return 0;
    }
    if (strcmp(w[0], "graph_sizes") == 0)
        return one_number(p, w, n, 1, 16, &s->graph_sizes);
    if (strcmp(w[0], "readback") == 0) {
        if (choice(p, w, n, readbacks, 4, &v) != 0)
            return -1;
        s->readback = (enum scn_readback)v;
        return 0;
    }
    if (strcmp(w[0], "graph") == 0) {
        if (choice(p, w, n, graphs, 3, &v) != 0)
            return -1;
        s->graph = (enum scn_graph)v;
        return 0;
    }
    if (strcmp(w[0], "stream") == 0) {
        if (choice(p, w, n, streams, 3, &v) != 0)
            return -1;
        s->stream = (enum scn_stream)v;
        return 0;
    }
    if (strcmp(w[0], "prompt_copy") == 0) {
        if (choice(p, w, n, copies, 2, &v) != 0)
            return -1;
        s->prompt_copy_sync = v;
        return 0;
    }
    return fail(p, "unknown directive '%.40s'", w[0]);
}

/* How many of a sequence's items are kernels. */
static int kernel_items(const struct scn_seq *q)
{
    int i, n = 0;
    for (i = 0; i < q->n; i++)
        n += q->items[i].kind == SCN_ITEM_KERNEL;
    return n;
}

static int check_whole(struct parser *p)
{
    const struct scenario *s = p->s;
    int kernels = kernel_items(&s->pre) + kernel_items(&s->layer) + kernel_items(&s->post);
    if (kernels == 0)
        return fail(p, "no kernels in pre, layer or post");
    if (s->graph != SCN_GRAPH_NONE && (kernels != s->pre.n + s->layer.n + s->post.n || s->before_prompt.n ||
                                       s->prompt_prelude.n || s->after_generation.n))
        return fail(p, "calls other than kernels, or before_prompt, prompt_prelude, after_generation, with a graph");
    if (kernel_items(&s->before_prompt) > 0)
        return fail(p, "before_prompt: calls only, no kernel (its launches would belong to no generation)");
    if (kernel_items(&s->after_generation) > 0)
        return fail(p, "after_generation: calls only, no kernel");
    if (s->nprompts == 0)
        return fail(p, "no prompt");
    if (s->graph != SCN_GRAPH_NONE && s->stream == SCN_STREAM_DEFAULT)
        return fail(p, "graph capture needs 'stream own' or 'stream nonblocking'");
    if (s->readback == SCN_READ_COPY && s->stream == SCN_STREAM_NONBLOCKING)
        return fail(p, "'readback copy' (legacy stream) does not wait for a non-blocking stream");
    if (s->readback == SCN_READ_NONE && s->chunk_read)
        return fail(p, "'chunk_read yes' reads a chunk back as 'readback' does: not with 'readback none'");
    if (s->graph != SCN_GRAPH_NONE && (s->mask_check.n || s->stop_check.n))
        return fail(p, "'mask_check' and 'stop_check' with a decode graph");
    if (s->graph != SCN_GRAPH_NONE && s->sequences > 1)
        return fail(p, "'sequences' above 1 with a decode graph (its batch is the graph's)");
    return 0;
}

int scenario_parse(const char *text, size_t len, struct scenario *out, char *err, size_t errlen)
{
    struct parser p = {out, 0, err, errlen};
    size_t pos = 0;

    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "unnamed");
    out->layers = 1;
    out->threads = 1;
    out->graph_sizes = 1;
    out->stream = SCN_STREAM_OWN;
    out->read_bytes = 4;
    out->sequences = 1;
    if (errlen > 0)
        err[0] = '\0';
    while (pos < len) {
        char line[SCN_LINE_MAX + 1], *words[MAX_WORDS], *c, *save = NULL;
        size_t end = pos, l;
        int n = 0;
        p.line++;
        while (end < len && text[end] != '\n')
            end++;
        l = end - pos;
        if (l > SCN_LINE_MAX)
            return fail(&p, "longer than %d characters", SCN_LINE_MAX);
        memcpy(line, text + pos, l);
        line[l] = '\0';
        pos = end + 1;
        if (memchr(line, '\0', l) != NULL)
            return fail(&p, "a NUL byte");
        if ((c = strchr(line, '#')) != NULL)
            *c = '\0';
        for (c = strtok_r(line, " \t\r", &save); c != NULL; c = strtok_r(NULL, " \t\r", &save)) {
            if (n == MAX_WORDS)
                return fail(&p, "more than %d words", MAX_WORDS);
            if (!printable_word(c))
                return fail(&p, "a character that is not printable ASCII");
            words[n++] = c;
        }
        if (n == 0)
            continue;
        if (directive(&p, words, n) != 0)
            return -1;
    }
    p.line++;
    return check_whole(&p);
}

unsigned scenario_grid(const struct scn_kernel *k, unsigned tokens)
{
    unsigned long long g = (unsigned long long)k->per_token * tokens + k->base;
    if (g == 0)
        g = 1;
    if (g > 0x7fffffffull)
        g = 0x7fffffffull;
    return (unsigned)g;
}
