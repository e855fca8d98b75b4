/* The OBS_DEBUG parser: see debug_spec.h. */
#include "debug_spec.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const domain_names[OBS_DEBUG_DOMAINS] = {
#define OBS_DEBUG_DOMAIN_NAME(id, name, what) name,
    OBS_DEBUG_DOMAIN_LIST(OBS_DEBUG_DOMAIN_NAME)
#undef OBS_DEBUG_DOMAIN_NAME
};

const char *obs_debug_domain_name(unsigned domain)
{
    return domain < OBS_DEBUG_DOMAINS ? domain_names[domain] : "";
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int fail(struct obs_debug_spec_error *err, uint8_t *levels, const char *text, const char *at,
                const char *what)
{
    err->column = (size_t)(at - text) + 1;
    snprintf(err->what, sizeof err->what, "%s", what);
    memset(levels, 0, OBS_DEBUG_DOMAINS);
    return -1;
}

/* The domain a word names: 0 .. OBS_DEBUG_DOMAINS - 1, OBS_DEBUG_DOMAINS
 * for all, OBS_DEBUG_DOMAINS + 1 for off/none, -1 for none of them. */
static int word_domain(const char *w, size_t n)
{
    unsigned d;
    for (d = 0; d < OBS_DEBUG_DOMAINS; d++)
        if (strlen(domain_names[d]) == n && strncasecmp(w, domain_names[d], n) == 0)
            return (int)d;
    if (n == 3 && strncasecmp(w, "all", 3) == 0)
        return OBS_DEBUG_DOMAINS;
    if ((n == 3 && strncasecmp(w, "off", 3) == 0) || (n == 4 && strncasecmp(w, "none", 4) == 0))
        return OBS_DEBUG_DOMAINS + 1;
    return -1;
}

static void set_level(uint8_t *levels, int domain, uint8_t level)
{
    unsigned d;
    if (domain < OBS_DEBUG_DOMAINS) {
        levels[domain] = level;
        return;
    }
    for (d = 0; d < OBS_DEBUG_DOMAINS; d++)
        levels[d] = level;
}

int obs_debug_spec_parse(const char *text, uint8_t levels[OBS_DEBUG_DOMAINS], struct obs_debug_spec_error *err)
{
    const char *p = text;
    memset(levels, 0, OBS_DEBUG_DOMAINS);
    err->column = 0;
    err->what[0] = '\0';
    for (;;) {
        const char *word;
        size_t n;
        int domain;
        uint8_t level = OBS_DEBUG_LEVEL_DEFAULT;

        while (is_blank(*p))
            p++;
        if (*p == '\0')
            return 0;
        if (*p == ',') { /* an empty item */
            p++;
            continue;
        }
        word = p;
        if (*p >= '0' && *p <= '9') { /* a bare level: every domain */
            domain = OBS_DEBUG_DOMAINS;
            n = 0;
        } else {
            while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))
                p++;
            n = (size_t)(p - word);
            if (n == 0)
                return fail(err, levels, text, p, "expected a domain name (phases, intercept, record, gputime, "
                                                  "output, all or off)");
            domain = word_domain(word, n);
            if (domain < 0)
                return fail(err, levels, text, word, "unknown domain (expected phases, intercept, record, gputime, "
                                                     "output, all or off)");
            if (*p == ':') {
                if (domain == OBS_DEBUG_DOMAINS + 1)
                    return fail(err, levels, text, p, "off takes no level");
                p++;
                if (!(*p >= '0' && *p <= '9'))
                    return fail(err, levels, text, p, "expected a level from 0 to 4 after ':'");
            }
        }
        if (*p >= '0' && *p <= '9' && (n == 0 || p[-1] == ':')) {
            if (*p - '0' > (int)OBS_DEBUG_LEVEL_MAX || (p[1] >= '0' && p[1] <= '9'))
                return fail(err, levels, text, p, "level out of range (expected 0 to 4)");
            level = (uint8_t)(*p - '0');
            p++;
        }
        if (domain == OBS_DEBUG_DOMAINS + 1)
            level = 0;
        while (is_blank(*p))
            p++;
        if (*p != ',' && *p != '\0')
            return fail(err, levels, text, p, "expected ',' or the end after an item");
        set_level(levels, domain, level);
    }
}

size_t obs_debug_spec_format(const uint8_t levels[OBS_DEBUG_DOMAINS], char *out, size_t len)
{
    size_t used = 0;
    unsigned d;
    if (len == 0)
        return 0;
    out[0] = '\0';
    for (d = 0; d < OBS_DEBUG_DOMAINS; d++) {
        int n;
        if (levels[d] == 0)
            continue;
        n = snprintf(out + used, len - used, "%s%s:%u", used ? "," : "", domain_names[d], (unsigned)levels[d]);
        if (n < 0 || (size_t)n >= len - used) {
            out[used] = '\0';
            return used;
        }
        used += (size_t)n;
    }
    if (used == 0 && len > 3) {
        memcpy(out, "off", 4);
        used = 3;
    }
    return used;
}
