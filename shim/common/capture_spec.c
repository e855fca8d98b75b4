/* The OBS_CAPTURE parser: see capture_spec.h. */
#include "capture_spec.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The words of a unit, the canonical one first. */
static const struct {
    const char *word;
    uint8_t unit;
} unit_words[] = {
    {"steps", OBS_CAPTURE_STEPS},           {"step", OBS_CAPTURE_STEPS},
    {"iterations", OBS_CAPTURE_ITERATIONS}, {"iteration", OBS_CAPTURE_ITERATIONS},
    {"iter", OBS_CAPTURE_ITERATIONS},       {"generation", OBS_CAPTURE_GENERATIONS},
    {"generations", OBS_CAPTURE_GENERATIONS}, {"gen", OBS_CAPTURE_GENERATIONS},
};

static const char *unit_word(uint8_t unit)
{
    return unit == OBS_CAPTURE_STEPS ? "steps" : unit == OBS_CAPTURE_ITERATIONS ? "iterations" : "generation";
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_blanks(const char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

static int fail(struct obs_capture_spec_error *err, struct obs_capture_spec *spec, const char *text, const char *at,
                const char *what)
{
    err->column = (size_t)(at - text) + 1;
    snprintf(err->what, sizeof err->what, "%s", what);
    spec->n = 0;
    return -1;
}

/* A word at p (letters): its length. */
static size_t word_len(const char *p)
{
    size_t n = 0;
    while (is_alpha(p[n]))
        n++;
    return n;
}

/* The unit a word names, 0 for none. */
static uint8_t word_unit(const char *w, size_t n)
{
    size_t i;
    for (i = 0; i < sizeof unit_words / sizeof unit_words[0]; i++)
        if (strlen(unit_words[i].word) == n && strncasecmp(w, unit_words[i].word, n) == 0)
            return unit_words[i].unit;
    return 0;
}

/* A NUMBER at *p: 0 and *p past it, or -1 with *p where it went wrong and
 * *why the reason. */
static int parse_number(const char **p, uint32_t *out, const char **why)
{
    const char *q = *p;
    uint64_t v = 0;
    if (!is_digit(*q)) {
        *why = "expected a number";
        return -1;
    }
    while (is_digit(*q)) {
        v = v * 10 + (uint64_t)(*q - '0');
        if (v > OBS_CAPTURE_NUMBER_MAX) {
            *why = "number too large (at most 4294967294)";
            *p = q;
            return -1;
        }
        q++;
    }
    *out = (uint32_t)v;
    *p = q;
    return 0;
}

/* ":" with blanks around it at *p. */
static int expect_colon(const char **p)
{
    const char *q = skip_blanks(*p);
    if (*q != ':') {
        *p = q;
        return -1;
    }
    *p = skip_blanks(q + 1);
    return 0;
}

int obs_capture_spec_parse(const char *text, struct obs_capture_spec *spec, struct obs_capture_spec_error *err)
{
    const char *p = text, *why = NULL;
    size_t n;

    memset(spec, 0, sizeof *spec);
    err->column = 0;
    err->what[0] = '\0';
    if (strnlen(text, OBS_CAPTURE_TEXT_MAX + 1) > OBS_CAPTURE_TEXT_MAX)
        return fail(err, spec, text, text + OBS_CAPTURE_TEXT_MAX, "text too long (at most 256 characters)");
    p = skip_blanks(p);
    n = word_len(p);
    if (n == 3 && strncasecmp(p, "off", 3) == 0 && *skip_blanks(p + 3) == '\0')
        return 0;
    if (*p == '\0')
        return fail(err, spec, text, p, "expected a window (steps:A-B, iterations:A-B or generation:N)");
    for (;;) {
        struct obs_capture_window w;
        const char *word = p, *at;

        n = word_len(p);
        w.unit = word_unit(p, n);
        if (w.unit == 0)
            return fail(err, spec, text, word, "expected steps, iterations or generation");
        p += n;
        if (expect_colon(&p) != 0)
            return fail(err, spec, text, p, "expected ':' after the unit");
        at = p;
        if (parse_number(&p, &w.first, &why) != 0)
            return fail(err, spec, text, p, why);
        w.last = w.first;
        p = skip_blanks(p);
        if (*p == '-') {
            p = skip_blanks(p + 1);
            if (parse_number(&p, &w.last, &why) != 0)
                return fail(err, spec, text, p, why);
            if (w.last < w.first)
                return fail(err, spec, text, at, "the range ends before it begins");
            p = skip_blanks(p);
        }
        w.generation = OBS_CAPTURE_ANY_GENERATION;
        if (*p == '@') {
            const char *q = skip_blanks(p + 1);
            size_t qn = word_len(q);
            if (w.unit != OBS_CAPTURE_STEPS)
                return fail(err, spec, text, p, "only steps take '@generation:N'");
            if (word_unit(q, qn) != OBS_CAPTURE_GENERATIONS || (qn != 3 && qn != 10))
                return fail(err, spec, text, q, "expected 'generation' after '@'");
            p = q + qn;
            if (expect_colon(&p) != 0)
                return fail(err, spec, text, p, "expected ':' after 'generation'");
            if (parse_number(&p, &w.generation, &why) != 0)
                return fail(err, spec, text, p, why);
            p = skip_blanks(p);
        }
        if (spec->n == OBS_CAPTURE_WINDOWS_MAX)
            return fail(err, spec, text, word, "too many windows (at most 8)");
        spec->w[spec->n++] = w;
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return fail(err, spec, text, p, "expected ',' or the end");
        p = skip_blanks(p + 1);
    }
}

size_t obs_capture_window_format(const struct obs_capture_window *w, char *out, size_t len)
{
    char range[32], gen[40] = "";
    int n;
    if (w->first == w->last)
        snprintf(range, sizeof range, "%u", (unsigned)w->first);
    else
        snprintf(range, sizeof range, "%u-%u", (unsigned)w->first, (unsigned)w->last);
    if (w->unit == OBS_CAPTURE_STEPS && w->generation != OBS_CAPTURE_ANY_GENERATION)
        snprintf(gen, sizeof gen, "@generation:%u", (unsigned)w->generation);
    n = snprintf(out, len, "%s:%s%s", unit_word(w->unit), range, gen);
    if (n < 0)
        return 0;
    return (size_t)n < len ? (size_t)n : (len > 0 ? len - 1 : 0);
}

size_t obs_capture_spec_format(const struct obs_capture_spec *spec, char *out, size_t len)
{
    size_t used = 0;
    unsigned i;
    if (len == 0)
        return 0;
    out[0] = '\0';
    if (spec->n == 0) {
        snprintf(out, len, "off");
        return strlen(out);
    }
    for (i = 0; i < spec->n && used + 1 < len; i++) {
        if (i > 0) {
            out[used++] = ',';
            out[used] = '\0';
        }
        used += obs_capture_window_format(&spec->w[i], out + used, len - used);
    }
    return used;
}

size_t obs_capture_window_describe(const struct obs_capture_window *w, char *out, size_t len)
{
    char what[48], which[96] = "";
    int n;
    const char *noun = w->unit == OBS_CAPTURE_STEPS        ? "decode step"
                       : w->unit == OBS_CAPTURE_ITERATIONS ? "iteration"
                                                           : "generation";
    if (w->first == w->last)
        snprintf(what, sizeof what, "%s %u", noun, (unsigned)w->first);
    else
        snprintf(what, sizeof what, "%ss %u to %u", noun, (unsigned)w->first, (unsigned)w->last);
    if (w->unit == OBS_CAPTURE_STEPS && w->generation == OBS_CAPTURE_ANY_GENERATION)
        snprintf(which, sizeof which, " of the first generation that has %s", w->first == w->last ? "it" : "them");
    else if (w->unit == OBS_CAPTURE_STEPS)
        snprintf(which, sizeof which, " of generation %u", (unsigned)w->generation);
    if (w->unit == OBS_CAPTURE_ITERATIONS)
        snprintf(which, sizeof which, " of the first thread that has %s (prompts, decode steps and serving iterations)",
                 w->first == w->last ? "it" : "them");
    n = snprintf(out, len, "%s%s", what, which);
    if (n < 0)
        return 0;
    return (size_t)n < len ? (size_t)n : (len > 0 ? len - 1 : 0);
}
