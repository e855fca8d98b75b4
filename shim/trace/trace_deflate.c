/* zlib for the exports: see trace_deflate.h. */
#include "trace_deflate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_ZLIB
#include <zlib.h>

int obs_deflate_available(void)
{
    return 1;
}

int obs_deflate(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len)
{
    uLongf n = (uLongf)*dst_len;
    if (compress2(dst, &n, src, (uLong)src_len, 1) != Z_OK)
        return -1;
    *dst_len = (size_t)n;
    return 0;
}

#define GZ_CHUNK (1u << 18)

struct gz_cookie {
    FILE *raw;
    z_stream z;
    int error; /* errno of the first failure */
    unsigned char out[GZ_CHUNK];
};

/* Deflate what z holds (flush: Z_NO_FLUSH or Z_FINISH) and write it out. */
static int gz_pump(struct gz_cookie *g, int flush)
{
    int zr;
    do {
        size_t n;
        g->z.next_out = g->out;
        g->z.avail_out = GZ_CHUNK;
        zr = deflate(&g->z, flush);
        if (zr == Z_STREAM_ERROR) {
            g->error = EIO;
            return -1;
        }
        n = GZ_CHUNK - g->z.avail_out;
        if (n && fwrite(g->out, 1, n, g->raw) != n) {
            g->error = errno ? errno : EIO;
            return -1;
        }
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
    return 0;
}

static ssize_t gz_write(void *cookie, const char *buf, size_t size)
{
    struct gz_cookie *g = cookie;
    if (g->error) {
        errno = g->error;
        return -1;
    }
    g->z.next_in = (unsigned char *)(uintptr_t)buf;
    g->z.avail_in = (uInt)size; /* stdio hands over at most its buffer */
    if (gz_pump(g, Z_NO_FLUSH) != 0) {
        errno = g->error;
        return -1;
    }
    return (ssize_t)size;
}

static int gz_close(void *cookie)
{
    struct gz_cookie *g = cookie;
    int err = g->error;
    if (!err && gz_pump(g, Z_FINISH) != 0)
        err = g->error;
    deflateEnd(&g->z);
    if (fclose(g->raw) != 0 && !err)
        err = errno ? errno : EIO;
    free(g);
    if (err) {
        errno = err;
        return EOF;
    }
    return 0;
}

FILE *obs_gzip_fopen(FILE *raw)
{
    static const cookie_io_functions_t io = {NULL, gz_write, NULL, gz_close};
    struct gz_cookie *g = calloc(1, sizeof *g);
    FILE *f;
    if (g == NULL)
        return NULL;
    g->raw = raw;
    /* 15 + 16: a gzip header and trailer, for gunzip and the Perfetto UI;
     * level 3: a JSON timeline shrinks about 13-fold at twice the speed of
     * level 6 (16-fold) */
    if (deflateInit2(&g->z, 3, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        errno = ENOMEM;
        return NULL;
    }
    f = fopencookie(g, "w", io);
    if (f == NULL) {
        deflateEnd(&g->z);
        free(g);
        return NULL;
    }
    setvbuf(f, NULL, _IOFBF, 1u << 16);
    return f;
}

#else

int obs_deflate_available(void)
{
    return 0;
}

int obs_deflate(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len)
{
    (void)dst, (void)dst_len, (void)src, (void)src_len;
    return -1;
}

FILE *obs_gzip_fopen(FILE *raw)
{
    (void)raw;
    errno = ENOSYS;
    return NULL;
}

#endif
