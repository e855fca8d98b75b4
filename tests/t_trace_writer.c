/* The .obs writer: the exact bytes of the header and of each chunk kind,
 * padding, error returns with errno preserved, and whole chunks delivered
 * through partial writes (a pipe read slowly while signals interrupt the
 * writer). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

static char *slurp(const char *path, size_t *len)
{
    char *d = test_read_file(path, len);
    if (d == NULL)
        bail("cannot read %s", path);
    return d;
}

static void test_header(const char *dir)
{
    struct obs_file_header h, back;
    const char *path = test_path(dir, "header.obs");
    size_t len;
    char *d;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    memset(&h, 0xff, sizeof h);
    obs_trace_init_header(&h, 1234, OBS_FILE_GPU_TIME, 111, 222);
    ok(memcmp(h.magic, "OBSTRACE", 8) == 0, "magic");
    is_int(OBS_TRACE_VERSION, h.version, "version");
    is_int(64, h.header_size, "header size");
    is_int(OBS_BYTE_ORDER_MARK, h.byte_order, "byte-order mark");
    is_int(48, h.record_size, "record size");
    is_int(1234, h.pid, "pid");
    is_int(OBS_FILE_GPU_TIME, h.flags, "flags");
    ok(h.start_mono_ns == 111 && h.start_real_ns == 222, "start times");
    ok(h.reserved[0] == 0 && h.reserved[1] == 0, "reserved fields zeroed");
    is_int(0, obs_trace_write_header(fd, &h), "write_header returns 0");
    close(fd);
    d = slurp(path, &len);
    is_int(64, (long long)len, "header is 64 bytes on disk");
    memcpy(&back, d, sizeof back);
    ok(memcmp(&back, &h, sizeof h) == 0, "header bytes are the struct");
    free(d);
}

static void test_records(const char *dir)
{
    union obs_record recs[3];
    struct obs_chunk_header ch;
    const char *path = test_path(dir, "records.obs");
    size_t len, i;
    char *d;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    memset(recs, 0, sizeof recs);
    for (i = 0; i < 3; i++) {
        recs[i].call.type = OBS_REC_CALL;
        recs[i].call.api = (uint16_t)(OBS_API_cudaMemcpy + i);
        recs[i].call.t_begin = 1000 + i;
    }
    is_int(0, obs_trace_write_records(fd, 77, 500, recs, 3), "write_records returns 0");
    is_int(0, obs_trace_write_records(fd, 77, 503, recs, 0), "zero records: returns 0");
    close(fd);
    d = slurp(path, &len);
    is_int(24 + 3 * 48, (long long)len, "one chunk: header + 3 records, nothing for n = 0");
    memcpy(&ch, d, sizeof ch);
    is_int(OBS_CHUNK_MAGIC, ch.magic, "chunk magic");
    is_int(OBS_CHUNK_RECORDS, ch.type, "chunk type RECORDS");
    is_int(77, ch.tid, "chunk tid");
    is_int(3 * 48, ch.payload_bytes, "payload bytes");
    is_int(500, (long long)ch.first_index, "first index");
    ok(memcmp(d + 24, recs, sizeof recs) == 0, "records follow verbatim");
    free(d);
}

static void test_string_and_meta(const char *dir)
{
    struct obs_chunk_header ch;
    struct obs_string_entry e;
    const char *path = test_path(dir, "strings.obs");
    size_t len;
    char *d;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    static const char zeros[8];

    is_int(0, obs_trace_write_string(fd, 9, OBS_STR_KERNEL_MANGLED, "_Z1fv", 5), "write_string (5 bytes)");
    is_int(0, obs_trace_write_string(fd, 10, OBS_STR_THREAD_NAME, "eight ch", 8), "write_string (8 bytes)");
    is_int(0, obs_trace_write_meta(fd, "a=b\n", 4), "write_meta");
    close(fd);
    d = slurp(path, &len);
    is_int((24 + 16 + 8) + (24 + 16 + 8) + (24 + 8), (long long)len, "three chunks, each padded to 8");

    memcpy(&ch, d, sizeof ch);
    is_int(OBS_CHUNK_STRINGS, ch.type, "STRINGS chunk");
    is_int(24, ch.payload_bytes, "entry + text padded to 8");
    memcpy(&e, d + 24, sizeof e);
    ok(e.id == 9 && e.kind == OBS_STR_KERNEL_MANGLED && e.len == 5 && e.reserved == 0, "entry fields");
    ok(memcmp(d + 40, "_Z1fv", 5) == 0 && memcmp(d + 45, zeros, 3) == 0, "text then NUL padding");

    memcpy(&ch, d + 48, sizeof ch);
    is_int(24, ch.payload_bytes, "8-byte text needs no padding");
    memcpy(&e, d + 72, sizeof e);
    ok(e.id == 10 && e.kind == OBS_STR_THREAD_NAME && memcmp(d + 88, "eight ch", 8) == 0, "second entry");

    memcpy(&ch, d + 96, sizeof ch);
    is_int(OBS_CHUNK_META, ch.type, "META chunk");
    is_int(8, ch.payload_bytes, "meta padded to 8");
    ok(memcmp(d + 120, "a=b\n", 4) == 0 && memcmp(d + 124, zeros, 4) == 0, "meta text then NULs");
    free(d);
}

/* Several entries in one STRINGS chunk (what the phase engine writes for a
 * batch of step names): exact bytes, and the reader takes every entry. */
static void test_string_batch(const char *dir)
{
    const char *path = test_path(dir, "batch.obs");
    char entries[256], err[256];
    uint32_t used = 0, got;
    struct obs_file_header h;
    struct obs_chunk_header ch;
    struct obs_trace *t = NULL;
    size_t len, i, found = 0;
    char *d;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    got = obs_string_entry_encode(entries, sizeof entries, 7, OBS_STR_RANGE_NAME, "DECODE/STEP_0", 13);
    is_int(16 + 16, got, "encode: header + 13 bytes padded to 16");
    used += got;
    used += obs_string_entry_encode(entries + used, sizeof entries - used, 8, OBS_STR_RANGE_NAME, "DECODE/STEP_1", 13);
    used += obs_string_entry_encode(entries + used, sizeof entries - used, 9, OBS_STR_KERNEL_MANGLED, "_Z1gv", 5);
    is_int(0, obs_string_entry_encode(entries, 20, 1, OBS_STR_RANGE_NAME, "too long for 20", 15),
           "encode: 0 when it does not fit");
    obs_trace_init_header(&h, 42, 0, 1000, 2000);
    is_int(0, obs_trace_write_header(fd, &h), "header");
    is_int(0, obs_trace_write_strings(fd, entries, used), "write_strings: one chunk of three entries");
    is_int(-EINVAL, obs_trace_write_strings(fd, entries, 12), "write_strings: a size not a multiple of 8 is refused");
    close(fd);
    d = slurp(path, &len);
    memcpy(&ch, d + sizeof h, sizeof ch);
    ok(ch.type == OBS_CHUNK_STRINGS && ch.payload_bytes == used && len == sizeof h + sizeof ch + used,
       "one STRINGS chunk holding exactly the entries");
    free(d);
    is_int(0, obs_trace_open(path, &t, err, sizeof err), "the reader opens it");
    if (t != NULL) {
        for (i = 0; i < t->nkernels; i++)
            if (t->kernels[i].id == 9 && strcmp(t->kernels[i].mangled, "_Z1gv") == 0)
                found = 1;
        ok(found, "the reader takes the third entry of the chunk");
        obs_trace_free(t);
    } else {
        skip("no trace");
    }
}

static void test_errors(void)
{
    union obs_record r;
    struct obs_file_header h;
    int rc;

    memset(&r, 0, sizeof r);
    obs_trace_init_header(&h, 1, 0, 0, 0);
    errno = 4242;
    rc = obs_trace_write_records(-1, 1, 0, &r, 1);
    is_int(-EBADF, rc, "bad descriptor: -EBADF");
    is_int(4242, errno, "errno preserved on failure");
    errno = 4243;
    is_int(-EBADF, obs_trace_write_header(-1, &h), "write_header: -EBADF");
    is_int(-EBADF, obs_trace_write_string(-1, 1, 1, "x", 1), "write_string: -EBADF");
    is_int(-EBADF, obs_trace_write_meta(-1, "x", 1), "write_meta: -EBADF");
    is_int(4243, errno, "errno preserved");
    is_int(-EINVAL, obs_trace_write_string(1, 1, 1, NULL, 3), "NULL text with a length: -EINVAL");
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

/* A large chunk into a pipe that a child drains slowly, with SIGALRM (no
 * SA_RESTART) interrupting the writer: writev returns short counts and
 * EINTR, and the chunk must still arrive whole and in order. */
static void test_partial_writes(void)
{
    enum { N = 40000 }; /* ~1.9 MB */
    union obs_record *recs = calloc(N, sizeof *recs);
    struct sigaction sa;
    struct itimerval it;
    int p[2], status = 0, rc, i;
    pid_t child;

    if (recs == NULL || pipe(p) != 0)
        bail("setup failed");
    for (i = 0; i < N; i++) {
        recs[i].call.type = OBS_REC_CALL;
        recs[i].call.t_begin = (uint64_t)i * 7;
    }
    child = fork();
    if (child == 0) {
        /* Read slowly; check the header and that every byte is right. */
        struct obs_chunk_header ch;
        size_t want = sizeof ch + (size_t)N * 48, got = 0;
        char *buf = malloc(want);
        close(p[1]);
        while (got < want) {
            ssize_t n = read(p[0], buf + got, want - got < 4096 ? want - got : 4096);
            if (n <= 0)
                _exit(2);
            got += (size_t)n;
            if ((got / 4096) % 16 == 0)
                usleep(200);
        }
        memcpy(&ch, buf, sizeof ch);
        if (ch.magic != OBS_CHUNK_MAGIC || ch.payload_bytes != (uint32_t)N * 48 || ch.first_index != 9)
            _exit(3);
        if (memcmp(buf + sizeof ch, recs, (size_t)N * 48) != 0)
            _exit(4);
        _exit(read(p[0], buf, 1) == 0 ? 0 : 5);
    }
    close(p[0]);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: writes are interrupted */
    sigaction(SIGALRM, &sa, NULL);
    memset(&it, 0, sizeof it);
    it.it_interval.tv_usec = 300;
    it.it_value.tv_usec = 300;
    setitimer(ITIMER_REAL, &it, NULL);
    rc = obs_trace_write_records(p[1], 5, 9, recs, N);
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    close(p[1]);
    waitpid(child, &status, 0);
    is_int(0, rc, "write through interruptions returns 0");
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader got the whole chunk, in order (status %d)",
       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    diag("%d signals arrived while writing", (int)alarms);
    free(recs);
}

int main(void)
{
    const char *dir;
    plan(51);
    dir = test_tmpdir();
    test_header(dir);
    test_records(dir);
    test_string_and_meta(dir);
    test_string_batch(dir);
    test_errors();
    test_partial_writes();
    return 0;
}
