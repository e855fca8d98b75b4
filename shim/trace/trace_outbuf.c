/* Buffered output for the trace writers: see trace_outbuf.h. */
#include "trace_outbuf.h"

#include <errno.h>
#include <stdlib.h>


const char obs_digit_pairs[201] = "00010203040506070809"
                                  "10111213141516171819"
                                  "20212223242526272829"
                                  "30313233343536373839"
                                  "40414243444546474849"
                                  "50515253545556575859"
                                  "60616263646566676869"
                                  "70717273747576777879"
                                  "80818283848586878889"
                                  "90919293949596979899";

const uint64_t obs_pow10[20] = {1ull,
                                 10ull,
                                 100ull,
                                 1000ull,
                                 10000ull,
                                 100000ull,
                                 1000000ull,
                                 10000000ull,
                                 100000000ull,
                                 1000000000ull,
                                 10000000000ull,
                                 100000000000ull,
                                 1000000000000ull,
                                 10000000000000ull,
                                 100000000000000ull,
                                 1000000000000000ull,
                                 10000000000000000ull,
                                 100000000000000000ull,
                                 1000000000000000000ull,
                                 10000000000000000000ull};

int obs_outbuf_init(struct obs_outbuf *ob, FILE *f)
{
    ob->f = f;
    ob->len = 0;
    ob->error = 0;
    ob->cap = OBS_OUTBUF_SIZE;
    _Static_assert(OBS_OUTBUF_SIZE >= 2 * OBS_OUTBUF_MAX_ITEM, "an item always fits");
    ob->buf = malloc(ob->cap);
    if (ob->buf == NULL) {
        ob->cap = 0;
        ob->error = ENOMEM;
        return -1;
    }
    return 0;
}

int obs_outbuf_flush(struct obs_outbuf *ob)
{
    if (ob->len > 0 && ob->error == 0) {
        if (fwrite(ob->buf, 1, ob->len, ob->f) != ob->len)
            ob->error = errno ? errno : EIO;
    }
    ob->len = 0;
    return ob->error ? -1 : 0;
}

char *obs_outbuf_reserve_slow(struct obs_outbuf *ob, size_t n)
{
    (void)n; /* callers never ask for more than OBS_OUTBUF_MAX_ITEM < the buffer */
    obs_outbuf_flush(ob);
    return ob->buf;
}

int obs_outbuf_finish(struct obs_outbuf *ob)
{
    int err;
    obs_outbuf_flush(ob);
    if (ob->error == 0 && fflush(ob->f) != 0)
        ob->error = errno ? errno : EIO;
    if (ob->error == 0 && ferror(ob->f))
        ob->error = EIO;
    err = ob->error;
    free(ob->buf);
    ob->buf = NULL;
    ob->cap = ob->len = 0;
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}
