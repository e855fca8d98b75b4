/* A large output buffer in front of a FILE*, with number formatting that
 * writes straight into it: the CSV and JSON writers format millions of rows,
 * and printf per field would be their whole cost. */
#ifndef OBS_TRACE_OUTBUF_H
#define OBS_TRACE_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OBS_OUTBUF_SIZE (1u << 20)
/* The most one reserve may ask for; writers cap the strings they copy
 * (OBS_OUTBUF_MAX_STRING, before escaping) so that a row always fits. */
#define OBS_OUTBUF_MAX_ITEM (1u << 19)
#define OBS_OUTBUF_MAX_STRING 16384u

struct obs_outbuf {
    FILE *f;
    char *buf;
    size_t len, cap;
    int error; /* errno of the first failure, 0 if none */
};

int obs_outbuf_init(struct obs_outbuf *ob, FILE *f);
/* Write out what is buffered (keeps the buffer). Returns 0 or -1. */
int obs_outbuf_flush(struct obs_outbuf *ob);
/* Flush, fflush the FILE, free the buffer. Returns 0, or -1 with errno set
 * when anything failed since init. */
int obs_outbuf_finish(struct obs_outbuf *ob);
/* Make room for n <= OBS_OUTBUF_MAX_ITEM more bytes by flushing. */
char *obs_outbuf_reserve_slow(struct obs_outbuf *ob, size_t n);

/* A pointer where n (<= OBS_OUTBUF_MAX_ITEM) bytes may be written; then
 * obs_outbuf_commit(ob, end). Write errors are kept for obs_outbuf_finish. */
static inline char *obs_outbuf_reserve(struct obs_outbuf *ob, size_t n)
{
    if (ob->cap - ob->len >= n)
        return ob->buf + ob->len;
    return obs_outbuf_reserve_slow(ob, n);
}

static inline void obs_outbuf_commit(struct obs_outbuf *ob, char *end)
{
    ob->len = (size_t)(end - ob->buf);
}

static inline void obs_outbuf_write(struct obs_outbuf *ob, const char *s, size_t n)
{
    char *p = obs_outbuf_reserve(ob, n);
    memcpy(p, s, n);
    obs_outbuf_commit(ob, p + n);
}

static inline void obs_outbuf_puts(struct obs_outbuf *ob, const char *s)
{
    obs_outbuf_write(ob, s, strlen(s));
}

extern const char obs_digit_pairs[201];

extern const uint64_t obs_pow10[20];

/* Number of decimal digits of v (1 for 0). */
static inline unsigned obs_u64_digits(uint64_t v)
{
    /* log10 from log2 (1233/4096 ~ log10(2)), then one correction */
    unsigned t = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
    return t + 1 - ((v | 1) < obs_pow10[t]);
}

/* Decimal digits of v at p (at most 20); returns the end. Written from the
 * end backwards two digits at a time, with fixed-size copies only. */
static inline char *obs_fmt_u64(char *p, uint64_t v)
{
    char *end = p + obs_u64_digits(v), *q = end;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        q -= 2;
        memcpy(q, obs_digit_pairs + 2 * r, 2);
    }
    if (v >= 10) {
        q -= 2;
        memcpy(q, obs_digit_pairs + 2 * v, 2);
    } else {
        *--q = (char)('0' + v);
    }
    return end;
}

static inline char *obs_fmt_i64(char *p, int64_t v)
{
    if (v < 0) {
        *p++ = '-';
        return obs_fmt_u64(p, (uint64_t)0 - (uint64_t)v);
    }
    return obs_fmt_u64(p, (uint64_t)v);
}

/* ns as microseconds with exactly three decimals ("12.345"), so that
 * nanoseconds survive a reader that parses doubles. */
static inline char *obs_fmt_us3(char *p, uint64_t ns)
{
    unsigned frac = (unsigned)(ns % 1000);
    p = obs_fmt_u64(p, ns / 1000);
    *p++ = '.';
    *p++ = (char)('0' + frac / 100);
    memcpy(p, obs_digit_pairs + 2 * (frac % 100), 2);
    return p + 2;
}

static inline char *obs_put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* Spare bytes after a text built for obs_put_padded. */
#define OBS_TEXT_SLACK 16

/* obs_put for texts allocated with OBS_TEXT_SLACK spare bytes: copies in
 * 16-byte blocks (no call to memcpy for short strings) and may write up to
 * 15 bytes past p + n, which the caller's reservation must allow for. */
static inline char *obs_put_padded(char *p, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; i += 16)
        memcpy(p + i, s + i, 16);
    return p + n;
}

/* obs_put for a string literal. */
#define OBS_PUT_LIT(p, lit) obs_put((p), (lit), sizeof(lit) - 1)

#endif
