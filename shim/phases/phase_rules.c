/* OBS_PHASES / OBS_STEP: see phase_rules.h. No allocation, no recursion:
 * the parser and the matchers are fuzzed (tests/fuzz/). */
#include "phase_rules.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "trace/trace.h"

static const char *const phase_names[OBS_PHASE_ID_COUNT] = {"", "PREFILL", "DECODE", "KV_GATHER"};

const char *obs_phase_id_name(unsigned phase)
{
    return phase < OBS_PHASE_ID_COUNT ? phase_names[phase] : "";
}

/* ---- matching ------------------------------------------------------------------ */

bool obs_glob_match(const char *glob, const char *text)
{
    const char *star = NULL, *resume = NULL;
    while (*text != '\0') {
        if (*glob == '*') {
            star = ++glob;
            resume = text;
        } else if (*glob != '\0' && (*glob == '?' || *glob == *text)) {
            glob++;
            text++;
        } else if (star != NULL) {
            glob = star;
            text = ++resume;
        } else {
            return false;
        }
    }
    while (*glob == '*')
        glob++;
    return *glob == '\0';
}

uint8_t obs_phase_rules_match_kernel(const struct obs_phase_rules *r, const char *base_name)
{
    unsigned i;
    for (i = 0; i < r->count; i++) {
        const struct obs_phase_pattern *p = &r->patterns[i];
        if (p->kind == OBS_PATTERN_KERNEL && !p->iteration && p->nconds == 0 && obs_glob_match(p->glob, base_name))
            return p->phase;
    }
    return OBS_PHASE_NONE;
}

static bool direction_matches(uint8_t wanted, uint8_t direction)
{
    return wanted == OBS_PATTERN_ANY_DIRECTION || wanted == direction;
}

uint8_t obs_phase_rules_match_memcpy(const struct obs_phase_rules *r, uint8_t direction)
{
    unsigned i;
    for (i = 0; i < r->count; i++)
        if (r->patterns[i].kind == OBS_PATTERN_MEMCPY && !r->patterns[i].iteration &&
            direction_matches(r->patterns[i].direction, direction))
            return r->patterns[i].phase;
    return OBS_PHASE_NONE;
}

uint8_t obs_phase_rules_match_memset(const struct obs_phase_rules *r)
{
    unsigned i;
    for (i = 0; i < r->count; i++)
        if (r->patterns[i].kind == OBS_PATTERN_MEMSET && !r->patterns[i].iteration)
            return r->patterns[i].phase;
    return OBS_PHASE_NONE;
}

uint32_t obs_phase_rules_kernel_mask(const struct obs_phase_rules *r, const char *base_name)
{
    uint32_t mask = 0;
    unsigned i;
    for (i = 0; i < r->count && i < 32; i++)
        if (r->patterns[i].kind == OBS_PATTERN_KERNEL && obs_glob_match(r->patterns[i].glob, base_name))
            mask |= 1u << i;
    return mask;
}

bool obs_phase_rules_sized(const struct obs_phase_rules *r, uint32_t mask)
{
    uint32_t m = mask & ~r->iter_mask;
    if (m == 0)
        return false;
    /* the first per-launch kernel pattern of the name decides */
    return (r->sized_mask >> __builtin_ctz(m)) & 1u;
}

struct obs_launch_size obs_launch_size_of(uint64_t grid_blocks, uint64_t block_threads)
{
    struct obs_launch_size s = {.threads = 0, .grid = grid_blocks, .block = block_threads};
    if (__builtin_mul_overflow(grid_blocks, block_threads, &s.threads))
        s.threads = UINT64_MAX;
    return s;
}

#define AFTER_ANY_COPY ((1u << OBS_DIR_COUNT) - 1u)

uint8_t obs_phase_rules_match_iteration(const struct obs_phase_rules *r, uint32_t mask,
                                        const struct obs_launch_size *size, unsigned after)
{
    uint8_t kind;
    return obs_phase_rules_match_iteration_kind(r, mask, size, after, 0, &kind);
}

uint32_t obs_phase_rules_transfer_bytes(const struct obs_phase_rules *r, uint8_t kind, uint8_t direction,
                                        uint64_t bytes)
{
    uint32_t m = r->iter_bytes_mask, met = 0;
    while (m != 0) {
        unsigned i = (unsigned)__builtin_ctz(m);
        const struct obs_phase_pattern *p;
        m &= m - 1;
        if (i >= r->count)
            break;
        p = &r->patterns[i];
        if (p->kind != kind ||
            (kind == OBS_PATTERN_MEMCPY && p->direction != OBS_PATTERN_ANY_DIRECTION && p->direction != direction))
            continue;
        if (bytes >= p->lo[OBS_SIZE_BYTES] && bytes <= p->hi[OBS_SIZE_BYTES])
            met |= 1u << i;
    }
    return met;
}

uint8_t obs_phase_rules_match_iteration_kind(const struct obs_phase_rules *r, uint32_t mask,
                                             const struct obs_launch_size *size, unsigned after, uint32_t sized,
                                             uint8_t *kind)
{
    uint32_t m = r->iter_mask;
    while (m != 0) {
        unsigned i = (unsigned)__builtin_ctz(m);
        const struct obs_phase_pattern *p = &r->patterns[i < r->count ? i : 0];
        bool holds;
        m &= m - 1;
        if (i >= r->count)
            break;
        if ((r->iter_bytes_mask >> i) & 1u)
            holds = ((sized >> i) & 1u) != 0; /* a copy or memset of the size came */
        else if (p->kind == OBS_PATTERN_MEMCPY)
            holds = p->direction == OBS_PATTERN_ANY_DIRECTION ? (after & AFTER_ANY_COPY) != 0
                                                               : p->direction < 16 && ((after >> p->direction) & 1u);
        else if (p->kind == OBS_PATTERN_MEMSET)
            holds = (after & OBS_AFTER_MEMSET) != 0;
        else if (p->kind == OBS_PATTERN_UNTIL_TOKEN)
            holds = (after & OBS_AFTER_NO_TOKEN) != 0;
        else if (p->kind == OBS_PATTERN_UNTIL_FORWARD)
            holds = (after & OBS_AFTER_FIRST_FORWARD) != 0;
        else
            holds = size != NULL && ((mask >> i) & 1u) && obs_phase_pattern_holds(p, size);
        if (holds) {
            *kind = p->kind;
            return p->phase;
        }
    }
    *kind = OBS_PATTERN_KERNEL;
    return OBS_PHASE_NONE;
}

/* ---- parsing ----------------------------------------------------------------------- */

struct parser {
    const char *text;
    size_t pos;
    bool step_rule;
    struct obs_phase_rules *out;
    struct obs_phase_rule_error *err;
};

static int fail(struct parser *p, size_t pos, const char *fmt, const char *arg)
{
    p->err->column = pos + 1;
    snprintf(p->err->what, sizeof p->err->what, fmt, arg != NULL ? arg : "");
    p->out->count = 0;
    p->out->sized_mask = p->out->iter_mask = p->out->iter_kernel_mask = p->out->iter_bytes_mask = 0;
    return -1;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static void skip_blanks(struct parser *p)
{
    while (is_blank(p->text[p->pos]))
        p->pos++;
}

/* Characters a glob may hold: printable ASCII, not a separator or blank. */
static bool glob_char(char c)
{
    return c > ' ' && c < 0x7f && c != ';' && c != ',' && c != '=';
}

/* A short, printable copy of text[from, from+n) for messages. */
static const char *quote(const char *text, size_t from, size_t n, char *buf, size_t buflen)
{
    size_t i;
    if (n > buflen - 1)
        n = buflen - 1;
    for (i = 0; i < n && text[from + i] != '\0'; i++) {
        unsigned char c = (unsigned char)text[from + i];
        buf[i] = c >= ' ' && c < 0x7f ? (char)c : '?';
    }
    buf[i] = '\0';
    return buf;
}

static int parse_direction(const char *word, size_t n, uint8_t *direction)
{
    static const struct {
        const char *name;
        uint8_t direction;
    } kinds[] = {{"HtoD", OBS_DIR_HTOD}, {"DtoH", OBS_DIR_DTOH},       {"DtoD", OBS_DIR_DTOD},
                 {"HtoH", OBS_DIR_HTOH}, {"peer", OBS_DIR_PEER},       {"default", OBS_DIR_DEFAULT},
                 {"*", OBS_PATTERN_ANY_DIRECTION}};
    size_t i;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i].name) == n && strncasecmp(kinds[i].name, word, n) == 0) {
            *direction = kinds[i].direction;
            return 0;
        }
    return -1;
}

static bool is_letter(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Does a condition start at s ('[', blanks, a word, blanks, an operator)?
 * Any other '[' is a literal glob character. */
static bool condition_starts(const char *s)
{
    size_t i = 1, word;
    if (s[0] != '[')
        return false;
    while (is_blank(s[i]))
        i++;
    for (word = i; is_letter(s[i]); i++)
        ;
    if (i == word)
        return false;
    while (is_blank(s[i]))
        i++;
    return s[i] == '<' || s[i] == '>' || s[i] == '=';
}

/* A condition as a range: lo[field] .. hi[field] narrowed to it. */
static void narrow(const struct obs_size_cond *c, uint64_t *lo, uint64_t *hi)
{
    uint64_t l = 0, h = UINT64_MAX, v = c->value;
    switch (c->op) {
    case OBS_OP_LT:
        if (v == 0)
            l = 1, h = 0; /* never */
        else
            h = v - 1;
        break;
    case OBS_OP_LE:
        h = v;
        break;
    case OBS_OP_GT:
        if (v == UINT64_MAX)
            l = 1, h = 0;
        else
            l = v + 1;
        break;
    case OBS_OP_GE:
        l = v;
        break;
    default:
        l = h = v;
    }
    if (l > lo[c->field])
        lo[c->field] = l;
    if (h < hi[c->field])
        hi[c->field] = h;
}

/* "[" SIZE OP NUMBER "]" at p->pos (condition_starts holds there). */
static int parse_condition(struct parser *p, struct obs_size_cond *c)
{
    static const char *const fields[OBS_SIZE_FIELDS] = {"threads", "grid", "block", "bytes"};
    const char *t = p->text;
    size_t word, n, number;
    uint64_t v = 0, scale = 1;
    unsigned i;
    char shown[40];

    p->pos++;
    skip_blanks(p);
    for (word = p->pos; is_letter(t[p->pos]); p->pos++)
        ;
    n = p->pos - word;
    for (i = 0; i < OBS_SIZE_FIELDS; i++)
        if (strlen(fields[i]) == n && strncasecmp(fields[i], t + word, n) == 0)
            break;
    if (i == OBS_SIZE_FIELDS)
        return fail(p, word, "unknown size '%s' (expected threads, grid, block or bytes)",
                    quote(t, word, n, shown, sizeof shown));
    if ((i == OBS_SIZE_BYTES) != (p->out->patterns[p->out->count].kind != OBS_PATTERN_KERNEL))
        return fail(p, word,
                    i == OBS_SIZE_BYTES ? "a kernel's condition is on threads, grid or block, not '%s'"
                                        : "a copy's or memset's condition is on bytes, not '%s'",
                    quote(t, word, n, shown, sizeof shown));
    c->field = (uint8_t)i;
    skip_blanks(p);
    if (t[p->pos] == '<' || t[p->pos] == '>') {
        bool eq = t[p->pos + 1] == '=';
        c->op = t[p->pos] == '<' ? (eq ? OBS_OP_LE : OBS_OP_LT) : (eq ? OBS_OP_GE : OBS_OP_GT);
        p->pos += eq ? 2 : 1;
    } else {
        c->op = OBS_OP_EQ;
        p->pos++;
    }
    skip_blanks(p);
    number = p->pos;
    if (t[p->pos] < '0' || t[p->pos] > '9')
        return fail(p, p->pos, "expected a number in the condition, found '%s'",
                    t[p->pos] == '\0' ? "end of text" : quote(t, p->pos, 1, shown, sizeof shown));
    for (; t[p->pos] >= '0' && t[p->pos] <= '9'; p->pos++)
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, (uint64_t)(t[p->pos] - '0'), &v))
            return fail(p, number, "number too large (at most %s)", "18446744073709551615");
    if (t[p->pos] == 'k' || t[p->pos] == 'M') {
        scale = t[p->pos] == 'k' ? 1024u : 1048576u;
        p->pos++;
    }
    if (__builtin_mul_overflow(v, scale, &v))
        return fail(p, number, "number too large (at most %s)", "18446744073709551615");
    c->value = v;
    narrow(c, p->out->patterns[p->out->count].lo, p->out->patterns[p->out->count].hi);
    skip_blanks(p);
    if (t[p->pos] != ']')
        return fail(p, p->pos, "expected ']' to close the condition, found '%s'",
                    t[p->pos] == '\0' ? "end of text" : quote(t, p->pos, 1, shown, sizeof shown));
    p->pos++;
    return 0;
}

/* memcpy[:KIND] or memset at t[begin, begin+n); 1 when it is neither. */
static int parse_transfer(struct parser *p, size_t begin, size_t n, struct obs_phase_pattern *pat)
{
    const char *t = p->text;
    char shown[40];
    if (n >= 6 && strncasecmp(t + begin, "memcpy", 6) == 0 && (n == 6 || t[begin + 6] == ':')) {
        pat->kind = OBS_PATTERN_MEMCPY;
        pat->direction = OBS_PATTERN_ANY_DIRECTION;
        if (n > 7 && parse_direction(t + begin + 7, n - 7, &pat->direction) != 0)
            return fail(p, begin + 7,
                        "unknown copy kind '%s' (expected HtoD, DtoH, DtoD, HtoH, peer, default or *)",
                        quote(t, begin + 7, n - 7, shown, sizeof shown));
        if (n == 7)
            return fail(p, begin + 7, "empty copy kind after 'memcpy:'%s", NULL);
        return 0;
    }
    if (n == 6 && strncasecmp(t + begin, "memset", 6) == 0) {
        pat->kind = OBS_PATTERN_MEMSET;
        return 0;
    }
    return 1;
}

/* An `iter:after:memcpy` or `iter:after:memset` selector: [bytes] conditions apply. */
static bool bytes_selector(const struct obs_phase_pattern *pat)
{
    return pat->iteration && (pat->kind == OBS_PATTERN_MEMCPY || pat->kind == OBS_PATTERN_MEMSET);
}

/* One pattern at p->pos, ending at ',', ';', blank or NUL. */
static int parse_pattern(struct parser *p, uint8_t phase)
{
    const char *t = p->text;
    size_t begin, body, n, i;
    struct obs_phase_pattern *pat;
    char shown[40];
    int rc;

    skip_blanks(p);
    begin = p->pos;
    if (strncasecmp(t + begin, "iter:", 5) == 0)
        p->pos += 5;
    body = p->pos;
    while (glob_char(t[p->pos]) && !condition_starts(t + p->pos))
        p->pos++;
    n = p->pos - body;
    if (n == 0) {
        if (body > begin)
            return fail(p, p->pos, "empty selector after 'iter:' (expected a kernel glob, after:memcpy[:KIND], "
                                   "after:memset, until:token or until:forward)%s", NULL);
        if (t[p->pos] == '[')
            return fail(p, p->pos, "a condition needs a kernel glob before it%s", NULL);
        if (t[p->pos] == '\0' || t[p->pos] == ',' || t[p->pos] == ';')
            return fail(p, p->pos, "empty pattern%s", NULL);
        return fail(p, p->pos, "unexpected character '%s' (not allowed in a pattern)",
                    quote(t, p->pos, 1, shown, sizeof shown));
    }
    if (p->out->count >= OBS_PHASE_PATTERNS_MAX)
        return fail(p, begin, "too many patterns (at most %s)", "32");
    pat = &p->out->patterns[p->out->count];
    memset(pat, 0, sizeof *pat);
    pat->phase = phase;
    pat->iteration = body > begin;
    pat->hi[0] = pat->hi[1] = pat->hi[2] = pat->hi[3] = UINT64_MAX;
    if (p->step_rule && pat->iteration)
        return fail(p, begin, "a step opens with a kernel: '%s' is not a kernel glob",
                    quote(t, begin, p->pos - begin, shown, sizeof shown));
    if (pat->iteration && n == 11 && strncasecmp(t + body, "until:token", 11) == 0) {
        pat->kind = OBS_PATTERN_UNTIL_TOKEN;
        rc = 0;
    } else if (pat->iteration && n == 13 && strncasecmp(t + body, "until:forward", 13) == 0) {
        pat->kind = OBS_PATTERN_UNTIL_FORWARD;
        rc = 0;
    } else if (pat->iteration && n >= 6 && strncasecmp(t + body, "after:", 6) == 0) {
        rc = parse_transfer(p, body + 6, n - 6, pat);
        if (rc > 0)
            return fail(p, body + 6, "expected memcpy, memcpy:KIND or memset after 'iter:after:', found '%s'",
                        quote(t, body + 6, n - 6, shown, sizeof shown));
    } else {
        rc = parse_transfer(p, body, n, pat);
        if (rc == 0 && pat->iteration)
            return fail(p, body, "an iteration after a copy or memset is 'iter:after:%s'",
                        quote(t, body, n, shown, sizeof shown));
    }
    if (rc < 0)
        return -1;
    if (rc > 0)
        pat->kind = OBS_PATTERN_KERNEL;
    if (p->step_rule && pat->kind != OBS_PATTERN_KERNEL)
        return fail(p, begin, "a step opens with a kernel: '%s' is not a kernel pattern",
                    quote(t, begin, n, shown, sizeof shown));
    if (pat->kind == OBS_PATTERN_KERNEL) {
        if (n > OBS_PHASE_GLOB_MAX)
            return fail(p, body + OBS_PHASE_GLOB_MAX, "pattern longer than %s characters", "128");
        memcpy(pat->glob, t + body, n);
        pat->glob[n] = '\0';
    }
    if ((pat->kind == OBS_PATTERN_KERNEL || bytes_selector(pat)) && is_blank(t[p->pos])) { /* blanks before a condition */
        size_t after = p->pos;
        while (is_blank(t[after]))
            after++;
        if (condition_starts(t + after))
            p->pos = after;
    }
    while (t[p->pos] == '[') { /* only conditions stop the scan at '[' */
        if (pat->kind != OBS_PATTERN_KERNEL && !bytes_selector(pat))
            return fail(p, p->pos,
                        "conditions apply to kernel globs and iter:after: copies and memsets only, not to '%s'",
                        quote(t, body, n, shown, sizeof shown));
        if (p->step_rule)
            return fail(p, p->pos, "OBS_STEP takes plain kernel globs (no conditions)%s", NULL);
        if (pat->nconds >= OBS_PHASE_CONDS_MAX)
            return fail(p, p->pos, "too many conditions on one pattern (at most %s)", "4");
        if (parse_condition(p, &pat->conds[pat->nconds]) != 0)
            return -1;
        pat->nconds++;
        if (t[p->pos] == '[' && !condition_starts(t + p->pos))
            break;
    }
    if (pat->nconds > 0 && glob_char(t[p->pos]))
        return fail(p, p->pos, "unexpected character '%s' after a condition",
                    quote(t, p->pos, 1, shown, sizeof shown));
    i = p->out->count++;
    if (pat->iteration)
        p->out->iter_mask |= 1u << i;
    if (pat->iteration && pat->kind == OBS_PATTERN_KERNEL)
        p->out->iter_kernel_mask |= 1u << i;
    if (bytes_selector(pat) && pat->nconds > 0)
        p->out->iter_bytes_mask |= 1u << i;
    if (!pat->iteration && pat->nconds > 0)
        p->out->sized_mask |= 1u << i;
    skip_blanks(p);
    return 0;
}

/* pattern { "," pattern }, up to ';' or NUL. */
static int parse_pattern_list(struct parser *p, uint8_t phase)
{
    char shown[8];
    for (;;) {
        if (parse_pattern(p, phase) != 0)
            return -1;
        if (p->text[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->text[p->pos] == '\0' || (p->text[p->pos] == ';' && !p->step_rule))
            return 0;
        return fail(p, p->pos, "unexpected character '%s' after a pattern",
                    quote(p->text, p->pos, 1, shown, sizeof shown));
    }
}

static int parse_phase_name(struct parser *p, uint8_t *phase)
{
    const char *t = p->text;
    size_t begin, n;
    unsigned i;
    char shown[40];

    skip_blanks(p);
    begin = p->pos;
    while ((t[p->pos] >= 'A' && t[p->pos] <= 'Z') || (t[p->pos] >= 'a' && t[p->pos] <= 'z') ||
           (t[p->pos] >= '0' && t[p->pos] <= '9') || t[p->pos] == '_' || t[p->pos] == '/')
        p->pos++;
    n = p->pos - begin;
    if (n == 0) {
        if (t[p->pos] == '=')
            return fail(p, p->pos, "empty phase name before '='%s", NULL);
        return fail(p, p->pos, "expected a phase name (PREFILL, DECODE or KV_GATHER), found '%s'",
                    quote(t, p->pos, 1, shown, sizeof shown));
    }
    for (i = 1; i < OBS_PHASE_ID_COUNT; i++)
        if (strlen(phase_names[i]) == n && strncasecmp(phase_names[i], t + begin, n) == 0)
            break;
    if (i == OBS_PHASE_ID_COUNT)
        return fail(p, begin, "unknown phase '%s' (expected PREFILL, DECODE or KV_GATHER)",
                    quote(t, begin, n, shown, sizeof shown));
    *phase = (uint8_t)i;
    skip_blanks(p);
    if (t[p->pos] != '=')
        return fail(p, p->pos, "expected '=' after the phase name, found '%s'",
                    t[p->pos] == '\0' ? "end of text" : quote(t, p->pos, 1, shown, sizeof shown));
    p->pos++;
    return 0;
}

int obs_phase_rules_parse(const char *text, bool step_rule, struct obs_phase_rules *out,
                          struct obs_phase_rule_error *err)
{
    struct parser p = {.text = text, .pos = 0, .step_rule = step_rule, .out = out, .err = err};
    size_t len;

    out->count = 0;
    out->sized_mask = out->iter_mask = out->iter_kernel_mask = out->iter_bytes_mask = 0;
    err->column = 0;
    err->what[0] = '\0';
    if (text == NULL)
        return 0;
    len = strnlen(text, OBS_PHASE_RULES_TEXT_MAX + 1);
    if (len > OBS_PHASE_RULES_TEXT_MAX)
        return fail(&p, OBS_PHASE_RULES_TEXT_MAX, "text longer than %s characters", "1024");
    skip_blanks(&p);
    if (text[p.pos] == '\0')
        return 0;
    if (step_rule)
        return parse_pattern_list(&p, OBS_PHASE_DECODE);
    for (;;) {
        uint8_t phase;
        skip_blanks(&p);
        if (text[p.pos] == ';') { /* an empty rule */
            p.pos++;
            continue;
        }
        if (text[p.pos] == '\0')
            return 0;
        if (parse_phase_name(&p, &phase) != 0 || parse_pattern_list(&p, phase) != 0)
            return -1;
        if (text[p.pos] == ';')
            p.pos++;
    }
}
