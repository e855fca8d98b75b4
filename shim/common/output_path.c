/* Output file names and exclusive creation: see output_path.h. */
#include "output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OBS_UNIQUE_TRIES 10000

/* Length of the NAME in "%q{NAME}" starting at p (p points after "%q"),
 * or 0 when malformed. */
static size_t env_name_length(const char *p)
{
    size_t n = 0;
    if (*p != '{')
        return 0;
    p++;
    while (p[n] == '_' || (p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= 'a' && p[n] <= 'z') ||
           (p[n] >= '0' && p[n] <= '9'))
        n++;
    return (n > 0 && p[n] == '}') ? n : 0;
}

int obs_output_pattern_check(const char *pattern, char *why, size_t whylen)
{
    const char *p;
    if (pattern[0] == '\0') {
        snprintf(why, whylen, "empty prefix");
        return -1;
    }
    if (strlen(pattern) > OBS_OUTPUT_MAX / 2) {
        snprintf(why, whylen, "longer than %d characters", OBS_OUTPUT_MAX / 2);
        return -1;
    }
    for (p = pattern; *p; p++) {
        if (*p != '%')
            continue;
        p++;
        switch (*p) {
        case 'p':
        case 'h':
        case 'n':
        case '%':
            break;
        case 'q':
            if (env_name_length(p + 1) == 0) {
                snprintf(why, whylen, "%%q must be followed by {VARIABLE}");
                return -1;
            }
            p += env_name_length(p + 1) + 2;
            break;
        case '\0':
            snprintf(why, whylen, "ends with a lone %%");
            return -1;
        default:
            snprintf(why, whylen, "unknown escape %%%c (known: %%p %%h %%q{VAR} %%n %%%%)", *p);
            return -1;
        }
    }
    return 0;
}

struct text_out {
    char *buf;
    size_t len, cap;
    int overflow;
};

static void put_text(struct text_out *o, const char *s, size_t n, int double_percent)
{
    size_t i;
    for (i = 0; i < n; i++) {
        size_t need = (double_percent && s[i] == '%') ? 2 : 1;
        if (o->len + need >= o->cap) {
            o->overflow = 1;
            return;
        }
        o->buf[o->len++] = s[i];
        if (need == 2)
            o->buf[o->len++] = '%';
    }
    o->buf[o->len] = '\0';
}

int obs_output_pattern_prepare(const char *pattern, const char *host, const char *(*lookup)(const char *name),
                               char *out, size_t outlen)
{
    struct text_out o = {.buf = out, .len = 0, .cap = outlen, .overflow = 0};
    const char *p;
    if (outlen == 0)
        return -1;
    out[0] = '\0';
    for (p = pattern; *p; p++) {
        if (*p != '%' || p[1] == '\0') {
            put_text(&o, p, 1, 0);
            continue;
        }
        p++;
        if (*p == 'h') {
            put_text(&o, host, strlen(host), 1);
        } else if (*p == 'q' && env_name_length(p + 1) > 0) {
            char name[256];
            size_t n = env_name_length(p + 1);
            const char *value;
            if (n >= sizeof name)
                return -1;
            memcpy(name, p + 2, n);
            name[n] = '\0';
            value = lookup(name);
            if (value != NULL)
                put_text(&o, value, strlen(value), 1);
            p += n + 2;
        } else { /* %p %n %% stay for obs_output_expand */
            put_text(&o, p - 1, 2, 0);
        }
    }
    return o.overflow ? -1 : 0;
}

int obs_output_expand(const char *prepared, unsigned long pid, unsigned long n, char *out,
                      size_t outlen)
{
    struct text_out o = {.buf = out, .len = 0, .cap = outlen, .overflow = 0};
    const char *p;
    char number[32];
    if (outlen == 0)
        return -1;
    out[0] = '\0';
    for (p = prepared; *p; p++) {
        if (*p != '%' || p[1] == '\0') {
            put_text(&o, p, 1, 0);
            continue;
        }
        p++;
        if (*p == 'p' || *p == 'n') {
            int len = snprintf(number, sizeof number, "%lu", *p == 'p' ? pid : n);
            put_text(&o, number, (size_t)len, 0);
        } else if (*p == '%') {
            put_text(&o, "%", 1, 0);
        } else {
            put_text(&o, p - 1, 2, 0);
        }
    }
    return o.overflow ? -1 : 0;
}

static int has_unique_number(const char *prepared)
{
    const char *p;
    for (p = prepared; *p; p++)
        if (*p == '%' && p[1] != '\0') {
            if (p[1] == 'n')
                return 1;
            p++;
        }
    return 0;
}

/* Is anything at <prefix><suffix> (formatted into path)? Any entry counts
 * (a file, a directory, a symbolic link, dangling or not): the exit path
 * never writes through or over one. */
static int name_taken(const char *prefix, const char *suffix, char *path, size_t pathlen)
{
    struct stat st;
    if (snprintf(path, pathlen, "%s%s", prefix, suffix) >= (int)pathlen)
        return 0; /* too long to be created either: the create says so */
    return lstat(path, &st) == 0;
}

/* Open <prefix>.obs exclusively, when neither it nor <prefix><companion>
 * (the timeline written at exit) exists: the descriptor, or -errno
 * (-EEXIST with the taken path in taken, when taken is not NULL). O_EXCL
 * never opens an existing entry, a symbolic link included; O_NOFOLLOW says
 * so twice. Read and write: the recorder maps windows of it (MAP_SHARED
 * needs both). */
static int create_exclusive(const char *prefix, const char *companion, char *taken, size_t takenlen)
{
    char path[OBS_OUTPUT_MAX + 16];
    int fd;
    if (name_taken(prefix, OBS_TRACE_SUFFIX, path, sizeof path) ||
        (companion != NULL && name_taken(prefix, companion, path, sizeof path))) {
        fd = -EEXIST;
    } else {
        if (snprintf(path, sizeof path, "%s%s", prefix, OBS_TRACE_SUFFIX) >= (int)sizeof path)
            return -ENAMETOOLONG;
        do
            fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd < 0)
            fd = -errno;
    }
    if (fd == -EEXIST && taken != NULL)
        snprintf(taken, takenlen, "%s", path);
    return fd;
}

int obs_output_create(const char *prepared, unsigned long pid, const char *companion, char *prefix,
                      size_t prefixlen, int *renamed, char *taken, size_t takenlen)
{
    int unique = has_unique_number(prepared);
    char base[OBS_OUTPUT_MAX];
    unsigned long n;
    int fd = -EEXIST;

    *renamed = 0;
    if (takenlen == 0)
        taken = NULL;
    if (taken != NULL)
        taken[0] = '\0';
    if (!unique) {
        if (obs_output_expand(prepared, pid, 0, prefix, prefixlen) != 0)
            return -ENAMETOOLONG;
        fd = create_exclusive(prefix, companion, taken, takenlen);
        if (fd != -EEXIST)
            return fd;
        /* Taken (another process, an earlier run, or something planted):
         * never overwrite it. taken keeps this first name found taken. */
        snprintf(base, sizeof base, "%s", prefix);
    }
    for (n = 1; n <= OBS_UNIQUE_TRIES; n++) {
        if (unique) {
            if (obs_output_expand(prepared, pid, n, prefix, prefixlen) != 0)
                return -ENAMETOOLONG;
        } else if (snprintf(prefix, prefixlen, "%s-%lu", base, n) >= (int)prefixlen) {
            return -ENAMETOOLONG;
        }
        fd = create_exclusive(prefix, companion, NULL, 0);
        if (fd != -EEXIST) {
            *renamed = !unique && fd >= 0;
            return fd;
        }
    }
    return fd;
}
