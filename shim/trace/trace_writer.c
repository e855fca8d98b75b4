/* Writing .obs trace files: see trace_writer.h. Async-signal-safe: only
 * write(2)/writev(2), no allocation, no stdio. */
#include "trace_writer.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static const char obs_zero_pad[8];

/* Write all of iov[0..cnt) (cnt <= 4), retrying partial writes and EINTR.
 * Returns 0 or -errno. The iovec array is consumed. */
static int write_iov_all(int fd, struct iovec *iov, int cnt)
{
    while (cnt > 0) {
        ssize_t done = writev(fd, iov, cnt);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (done == 0)
            return -EIO; /* a regular file never does this; do not spin */
        while (cnt > 0 && (size_t)done >= iov->iov_len) {
            done -= (ssize_t)iov->iov_len;
            iov++;
            cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= (size_t)done;
        }
    }
    return 0;
}

/* A chunk header followed by up to three payload pieces, in one writev. */
static int write_chunk(int fd, uint32_t type, uint32_t tid, uint64_t first_index, const void *p1,
                       size_t n1, const void *p2, size_t n2, size_t pad)
{
    struct obs_chunk_header ch;
    struct iovec iov[4];
    int cnt = 0, saved_errno = errno, rc;
    size_t payload = n1 + n2 + pad;

    if (payload > UINT32_MAX)
        return -EINVAL;
    memset(&ch, 0, sizeof ch);
    ch.magic = OBS_CHUNK_MAGIC;
    ch.type = type;
    ch.tid = tid;
    ch.payload_bytes = (uint32_t)payload;
    ch.first_index = first_index;
    iov[cnt].iov_base = &ch;
    iov[cnt++].iov_len = sizeof ch;
    if (n1) {
        iov[cnt].iov_base = (void *)p1;
        iov[cnt++].iov_len = n1;
    }
    if (n2) {
        iov[cnt].iov_base = (void *)p2;
        iov[cnt++].iov_len = n2;
    }
    if (pad) {
        iov[cnt].iov_base = (void *)obs_zero_pad;
        iov[cnt++].iov_len = pad;
    }
    rc = write_iov_all(fd, iov, cnt);
    errno = saved_errno;
    return rc;
}

void obs_trace_init_header(struct obs_file_header *h, uint32_t pid, uint32_t flags,
                           uint64_t start_mono_ns, uint64_t start_real_ns)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, OBS_TRACE_MAGIC, sizeof h->magic);
    h->version = OBS_TRACE_VERSION;
    h->header_size = (uint32_t)sizeof *h;
    h->byte_order = OBS_BYTE_ORDER_MARK;
    h->record_size = OBS_RECORD_SIZE;
    h->pid = pid;
    h->flags = flags;
    h->start_mono_ns = start_mono_ns;
    h->start_real_ns = start_real_ns;
}

int obs_trace_write_header(int fd, const struct obs_file_header *h)
{
    struct iovec iov = {(void *)h, sizeof *h};
    int saved_errno = errno, rc = write_iov_all(fd, &iov, 1);
    errno = saved_errno;
    return rc;
}

int obs_trace_write_records(int fd, uint32_t tid, uint64_t first_index, const union obs_record *recs,
                            uint32_t n)
{
    while (n > 0) {
        uint32_t part = n < OBS_WRITER_MAX_CHUNK_RECORDS ? n : OBS_WRITER_MAX_CHUNK_RECORDS;
        int rc = write_chunk(fd, OBS_CHUNK_RECORDS, tid, first_index, recs,
                             (size_t)part * OBS_RECORD_SIZE, NULL, 0, 0);
        if (rc != 0)
            return rc;
        recs += part;
        first_index += part;
        n -= part;
    }
    return 0;
}

int obs_trace_write_string(int fd, uint32_t id, uint32_t kind, const char *text, uint32_t len)
{
    struct obs_string_entry e;

    if (len > UINT32_MAX - 64 || (len > 0 && text == NULL))
        return -EINVAL;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.kind = kind;
    e.len = len;
    return write_chunk(fd, OBS_CHUNK_STRINGS, 0, 0, &e, sizeof e, text, len, OBS_PAD8(len) - len);
}

int obs_trace_write_strings(int fd, const void *entries, uint32_t bytes)
{
    if (bytes == 0 || entries == NULL || bytes % 8 != 0)
        return -EINVAL;
    return write_chunk(fd, OBS_CHUNK_STRINGS, 0, 0, entries, bytes, NULL, 0, 0);
}

uint32_t obs_string_entry_encode(void *out, uint32_t cap, uint32_t id, uint32_t kind, const char *text, uint32_t len)
{
    struct obs_string_entry e;
    uint32_t need;

    if (len > UINT32_MAX - 64 || (len > 0 && text == NULL))
        return 0;
    need = (uint32_t)sizeof e + OBS_PAD8(len);
    if (need > cap)
        return 0;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.kind = kind;
    e.len = len;
    memcpy(out, &e, sizeof e);
    memcpy((char *)out + sizeof e, text, len);
    memset((char *)out + sizeof e + len, 0, OBS_PAD8(len) - len);
    return need;
}

/* Write all of buf at offset, retrying partial writes and EINTR. */
static int pwrite_all(int fd, const void *buf, size_t len, uint64_t offset)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t done = pwrite(fd, p, len, (off_t)offset);
        if (done < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (done == 0)
            return -EIO;
        p += done;
        len -= (size_t)done;
        offset += (uint64_t)done;
    }
    return 0;
}

int obs_trace_frame_window(int fd, uint64_t end, uint64_t records_at, uint32_t tid, uint64_t first_index,
                           uint32_t n)
{
    struct obs_chunk_header ch;
    uint64_t header_at = records_at - sizeof ch;
    int saved_errno = errno, rc = 0;

    if (records_at < end + sizeof ch || (header_at > end && header_at - end < sizeof ch) ||
        (uint64_t)n * OBS_RECORD_SIZE > UINT32_MAX || header_at - end - (header_at > end ? sizeof ch : 0) > UINT32_MAX)
        return -EINVAL;
    memset(&ch, 0, sizeof ch);
    ch.magic = OBS_CHUNK_MAGIC;
    if (header_at > end) { /* the gap: a PAD chunk whose payload is left as it is (zeros) */
        ch.type = OBS_CHUNK_PAD;
        ch.payload_bytes = (uint32_t)(header_at - end - sizeof ch);
        rc = pwrite_all(fd, &ch, sizeof ch, end);
    }
    if (rc == 0) {
        ch.type = OBS_CHUNK_RECORDS;
        ch.tid = tid;
        ch.payload_bytes = n * OBS_RECORD_SIZE;
        ch.first_index = first_index;
        rc = pwrite_all(fd, &ch, sizeof ch, header_at);
    }
    errno = saved_errno;
    return rc;
}

int obs_trace_shrink_window(int fd, uint64_t records_at, uint32_t n, uint32_t keep)
{
    struct obs_chunk_header ch;
    uint32_t payload = keep * OBS_RECORD_SIZE;
    int saved_errno = errno, rc;

    if (keep >= n || records_at < sizeof ch)
        return -EINVAL;
    memset(&ch, 0, sizeof ch);
    ch.magic = OBS_CHUNK_MAGIC;
    ch.type = OBS_CHUNK_PAD;
    ch.payload_bytes = (n - keep) * OBS_RECORD_SIZE - (uint32_t)sizeof ch; /* slots are 48 bytes: room for it */
    rc = pwrite_all(fd, &ch, sizeof ch, records_at + payload);
    if (rc == 0)
        rc = pwrite_all(fd, &payload, sizeof payload,
                        records_at - sizeof ch + offsetof(struct obs_chunk_header, payload_bytes));
    errno = saved_errno;
    return rc;
}

int obs_trace_write_slots(int fd, uint64_t at, const union obs_record *recs, uint32_t n)
{
    union obs_record headless[8];
    int saved_errno = errno, rc;
    uint32_t i;

    if (n > 8)
        return -EINVAL;
    if (n == 0)
        return 0;
    memcpy(headless, recs, (size_t)n * sizeof *recs);
    for (i = 0; i < n; i++)
        headless[i].words[0] = 0;
    rc = pwrite_all(fd, headless, (size_t)n * sizeof *recs, at);
    if (rc == 0)
        rc = pwrite_all(fd, recs, (size_t)n * sizeof *recs, at);
    errno = saved_errno;
    return rc;
}

int obs_trace_write_meta(int fd, const char *text, size_t len)
{
    if (len > UINT32_MAX - 8 || (len > 0 && text == NULL))
        return -EINVAL;
    return write_chunk(fd, OBS_CHUNK_META, 0, 0, text, len, NULL, 0, (size_t)(OBS_PAD8(len) - len));
}
