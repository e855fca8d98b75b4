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
    for (i = 0; i < r->count; i++)
        if (r->patterns[i].kind == OBS_PATTERN_KERNEL && obs_glob_match(r->patterns[i].glob, base_name))
            return r->patterns[i].phase;
    return OBS_PHASE_NONE;
}

uint8_t obs_phase_rules_match_memcpy(const struct obs_phase_rules *r, uint8_t direction)
{
    unsigned i;
    for (i = 0; i < r->count; i++)
        if (r->patterns[i].kind == OBS_PATTERN_MEMCPY &&
            (r->patterns[i].direction == OBS_PATTERN_ANY_DIRECTION || r->patterns[i].direction == direction))
            return r->patterns[i].phase;
    return OBS_PHASE_NONE;
}

uint8_t obs_phase_rules_match_memset(const struct obs_phase_rules *r)
{
    unsigned i;
    for (i = 0; i < r->count; i++)
        if (r->patterns[i].kind == OBS_PATTERN_MEMSET)
            return r->patterns[i].phase;
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

/* One pattern at p->pos, ending at ',', ';', blank or NUL. */
static int parse_pattern(struct parser *p, uint8_t phase)
{
    const char *t = p->text;
    size_t begin, n;
    struct obs_phase_pattern *pat;
    char shown[40];

    skip_blanks(p);
    begin = p->pos;
    while (glob_char(t[p->pos]))
        p->pos++;
    n = p->pos - begin;
    if (n == 0) {
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
    if (n >= 6 && strncasecmp(t + begin, "memcpy", 6) == 0 && (n == 6 || t[begin + 6] == ':')) {
        pat->kind = OBS_PATTERN_MEMCPY;
        pat->direction = OBS_PATTERN_ANY_DIRECTION;
        if (n > 7 && parse_direction(t + begin + 7, n - 7, &pat->direction) != 0)
            return fail(p, begin + 7,
                        "unknown copy kind '%s' (expected HtoD, DtoH, DtoD, HtoH, peer, default or *)",
                        quote(t, begin + 7, n - 7, shown, sizeof shown));
        if (n == 7)
            return fail(p, begin + 7, "empty copy kind after 'memcpy:'%s", NULL);
    } else if (n == 6 && strncasecmp(t + begin, "memset", 6) == 0) {
        pat->kind = OBS_PATTERN_MEMSET;
    } else {
        pat->kind = OBS_PATTERN_KERNEL;
    }
    if (p->step_rule && pat->kind != OBS_PATTERN_KERNEL)
        return fail(p, begin, "a step opens with a kernel: '%s' is not a kernel pattern",
                    quote(t, begin, n, shown, sizeof shown));
    if (pat->kind == OBS_PATTERN_KERNEL) {
        if (n > OBS_PHASE_GLOB_MAX)
            return fail(p, begin + OBS_PHASE_GLOB_MAX, "pattern longer than %s characters", "128");
        memcpy(pat->glob, t + begin, n);
        pat->glob[n] = '\0';
    }
    p->out->count++;
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
    struct parser p = {text, 0, step_rule, out, err};
    size_t len;

    out->count = 0;
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
