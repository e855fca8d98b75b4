/* The .obs reader: every field of the fixture round-trips, calls come in
 * sequence order, GPU spans, phases, lost records, self cost, names and
 * meta are joined; damaged files (cut at every offset, foreign, newer,
 * other byte order, bad record size, corrupt chunk) are handled; pipes are
 * read; many threads merge in order; several spans of one call read as their
 * envelope, NO_WORK spans apart. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
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

/* Check the first n calls against the fixture; returns the number of mismatches. */
static int check_first_calls(const struct obs_trace *t, int gpu, size_t n)
{
    size_t i;
    int bad = 0;
    if (t->ncalls < n)
        return -1;
    for (i = 0; i < n; i++) {
        const struct fix_call *f = &fixture_calls[i];
        const struct obs_call *c = &t->calls[i];
        const struct obs_gpu_time *g = obs_call_gpu(t, c);
        const char *name = obs_call_kernel_name(t, c);
        const char *phase = c->phase != OBS_NONE ? t->phases[c->phase].phase : "";
        uint32_t step = obs_phase_step(t, c->phase);
        int kernel = obs_api_kind(f->api) == OBS_KIND_KERNEL;
        char what[64] = "";

#define CHECK(cond, label)                        \
    do {                                          \
        if (!(cond) && !what[0])                  \
            snprintf(what, sizeof what, "%s", label); \
    } while (0)
        CHECK(t->threads[c->thread].tid == f->tid, "tid");
        CHECK(c->index == f->index, "per-thread index");
        CHECK(c->api == f->api, "api");
        CHECK(c->kind == obs_api_kind(f->api), "kind");
        CHECK(strcmp(name ? name : "", f->name) == 0, "demangled name");
        CHECK(strcmp(c->kernel ? t->kernels[c->kernel].mangled : "", f->mangled) == 0, "mangled name");
        CHECK(c->kernel == 0 || t->kernels[c->kernel].id == f->kernel_id, "kernel id");
        CHECK(c->stream == f->stream, "stream");
        CHECK(!kernel || (c->u.grid.x == f->grid_x && c->u.grid.y == f->grid_y && c->u.grid.z == f->grid_z),
              "grid");
        CHECK(!kernel || (c->block_x == f->block_x && c->block_y == f->block_y && c->block_z == f->block_z),
              "block");
        CHECK(!kernel || c->shmem == f->shmem, "shmem");
        CHECK(kernel || c->u.bytes == f->bytes, "bytes");
        CHECK(obs_call_direction(c) == f->direction, "direction");
        CHECK((c->flags & OBS_CALL_NESTED) == (f->flags & OBS_CALL_NESTED), "nested flag");
        CHECK(c->host_begin == FIX_T0 + f->t_begin, "host begin");
        CHECK(c->host_end == FIX_T0 + f->t_begin + f->dur, "host end");
        CHECK(c->status == f->status, "status");
        if (gpu && f->gpu_begin >= 0)
            CHECK(g && g->begin == FIX_T0 + (uint64_t)f->gpu_begin && g->end == FIX_T0 + (uint64_t)f->gpu_end,
                  "gpu begin/end");
        else
            CHECK(g == NULL, "no gpu time");
        CHECK(strcmp(phase, f->phase) == 0, "phase");
        CHECK(f->step < 0 ? step == UINT32_MAX : step == (uint32_t)f->step, "step");
#undef CHECK
        if (what[0]) {
            diag("seq %zu: %s differs", i, what);
            bad++;
        }
    }
    return bad;
}

static int check_calls(const struct obs_trace *t, int gpu)
{
    return t->ncalls == fixture_ncalls ? check_first_calls(t, gpu, fixture_ncalls) : -1;
}

static void test_fixture(const char *dir)
{
    const char *path = test_path(dir, "fixture.obs");
    struct obs_trace *t;
    char err[256];
    const struct obs_stream *s;
    size_t i;
    int rc;

    if (fixture_write(path, 0) != 0)
        bail("cannot write the fixture");
    rc = obs_trace_open(path, &t, err, sizeof err);
    is_int(0, rc, "fixture opens (%s)", rc ? err : "ok");
    if (rc != 0)
        bail("cannot go on");
    is_int(OBS_TRACE_VERSION, t->version, "version");
    is_int(FIX_PID, t->pid, "pid");
    is_int(OBS_FILE_GPU_TIME, t->flags, "flags");
    ok(t->start_mono_ns == FIX_T0 && t->start_real_ns == FIX_REAL0, "start times");
    is_int((long long)fixture_ncalls, (long long)t->ncalls, "all calls read");
    is_int(0, check_calls(t, 1), "every field of every call, in sequence order");
    is_int(FIX_NTHREADS, (long long)t->nthreads, "threads");
    ok(t->nthreads == 4 && t->threads[0].tid == 100 && t->threads[3].tid == 103, "threads sorted by tid");
    is_string("main", t->threads[0].name, "thread name of 100");
    is_string(FIX_THREAD101_NAME, t->threads[1].name, "thread name of 101");
    ok(t->threads[2].name == NULL, "thread 102 has no name");
    ok(t->threads[0].calls == 9 && t->threads[1].calls == 3 && t->threads[2].calls == 4 && t->threads[3].calls == 0,
       "calls per thread");
    ok(t->threads[0].first_seq == 0 && t->threads[1].first_seq == 3 && t->threads[2].first_seq == 12 &&
           t->threads[3].first_seq == UINT64_MAX,
       "first seq per thread");
    is_int(FIX_NGPU, (long long)t->ngpu, "GPU spans joined");
    is_int(FIX_ORPHAN_SPANS, (long long)t->orphan_gpu_spans, "orphan GPU spans counted");
    is_int(FIX_LOST, (long long)t->records_lost, "records lost");
    is_int(2, (long long)t->nlost, "LOST records");
    is_int(FIX_SELF_CALLS, (long long)t->self_calls, "self cost: calls (largest snapshot per thread)");
    is_int(FIX_SELF_NS, (long long)t->self_ns, "self cost: ns");
    is_int(2, (long long)t->nself_cost, "self cost: threads");
    is_int(1, (long long)t->ngraphs, "graph records");
    ok(t->ngraphs == 1 && t->graphs[0].node_count == 12 && t->graphs[0].kernel_count == 10 &&
           t->graphs[0].handle == 0xabc,
       "graph record fields");
    is_int(2, (long long)t->nstreams, "stream records");
    s = obs_trace_stream(t, 2);
    ok(s && s->handle == 0x7f0000002000ull, "stream 2 handle");
    ok(obs_trace_stream(t, 3) == NULL, "stream 3 has no record");
    is_string(FIX_EXE, obs_trace_meta(t, "exe"), "meta exe");
    is_string(FIX_CMDLINE, obs_trace_meta(t, "cmdline"), "meta cmdline");
    ok(obs_trace_meta(t, "nothing") == NULL, "absent meta key");
    is_int(1, (long long)t->unknown_records, "unknown record kind counted");
    is_int(1, (long long)t->unknown_chunks, "unknown chunk type counted");
    is_int(0, (long long)t->ignored_bytes, "nothing ignored in a whole file");
    ok(t->ignored_reason == NULL, "no ignored reason");
    is_int((long long)(FIX_T0 + 1000), (long long)t->t_first, "earliest timestamp");
    is_int((long long)(FIX_T0 + FIX_T_LAST), (long long)t->t_last, "latest timestamp");
    /* 2 BEGIN/END ranges (thread 102), then 4 RELABEL ranges (threads 100, 101) */
    is_int(6, (long long)t->nphases, "phase ranges");
    if (t->nphases == 6) {
        is_string("PREFILL", t->phases[0].phase, "phase 0");
        ok(t->phases[0].begin == FIX_T0 + 1500 && t->phases[0].end == FIX_T0 + 8000 && t->phases[0].ended,
           "phase 0 range");
        is_string("DECODE/STEP_0", t->phases[1].name, "phase 1 full name");
        ok(t->phases[1].step == 0 && t->phases[1].end == FIX_T0 + 200000, "phase 1 step and end");
        ok(t->phases[0].calls == 0 && t->phases[1].calls == 0, "thread 102's ranges hold none of its calls");
        ok(t->phases[2].relabel && t->phases[2].calls == 5 && t->phases[2].begin == FIX_T0 + 2000 &&
               t->phases[2].end == FIX_T0 + 97000,
           "a RELABEL range spans the calls it labels (thread 100's PREFILL: 5 calls)");
        ok(t->phases[3].relabel && t->phases[3].calls == 3 && t->phases[3].generation == 2,
           "thread 100's DECODE/STEP_0 relabel: 3 calls, generation 2");
        is_int(0, (long long)t->bad_phase_records, "no bad phase records");
    } else {
        skip_block(8, "phase ranges missing");
    }
    /* kernel table: [0] no name, then id 1, 2, 3 from strings, 7 from a call */
    {
        int found = 0;
        for (i = 1; i < t->nkernels; i++)
            if (t->kernels[i].id == 2)
                found = strcmp(t->kernels[i].demangled, "decode_kernel()") == 0;
        ok(found, "the last demangled name of an id wins");
        is_int(5, (long long)t->nkernels, "kernel table: none + ids 1, 2, 3, 7");
    }
    obs_trace_free(t);

    /* Without GPU spans. */
    if (fixture_write(path, FIX_NO_GPU) != 0)
        bail("cannot write the fixture");
    rc = obs_trace_open(path, &t, err, sizeof err);
    is_int(0, rc, "fixture without GPU time opens");
    if (rc == 0) {
        is_int(0, (long long)t->ngpu, "no GPU time");
        is_int(0, check_calls(t, 0), "every field, no GPU time");
        is_int(FIX_SELF_CALLS, (long long)t->self_calls, "placeholder snapshots change nothing");
        obs_trace_free(t);
    } else {
        skip_block(3, "open failed");
    }
}

/* Walk the chunks of a whole file independently of the reader: the number
 * of CALL records complete within the first `cut` bytes, and the offset up
 * to which a reader can use the data. */
static size_t calls_before(const unsigned char *d, size_t len, size_t cut, size_t *usable)
{
    size_t pos = 64, calls = 0;
    *usable = 64;
    while (pos + 24 <= len) {
        struct obs_chunk_header ch;
        size_t end, k;
        memcpy(&ch, d + pos, sizeof ch);
        end = pos + 24 + ch.payload_bytes;
        if (pos + 24 > cut)
            break;
        if (end <= cut) {
            for (k = pos + 24; ch.type == OBS_CHUNK_RECORDS && k + 48 <= end; k += 48)
                calls += d[k] == OBS_REC_CALL;
            *usable = end;
        } else if (ch.type == OBS_CHUNK_RECORDS) { /* cut: its complete records */
            for (k = pos + 24; k + 48 <= cut; k += 48) {
                calls += d[k] == OBS_REC_CALL;
                *usable = k + 48;
            }
        } else if (ch.type == OBS_CHUNK_META) { /* cut: its complete lines */
            for (k = pos + 24; k < cut; k++)
                if (d[k] == '\n')
                    *usable = k + 1;
        } /* a cut STRINGS chunk (one entry each here) gives nothing */
        if (end > cut)
            break;
        pos = end;
    }
    return calls;
}

static void test_truncation(const char *dir)
{
    const char *path = test_path(dir, "fixture.obs");
    const char *cut_path = test_path(dir, "cut.obs");
    unsigned char *d;
    size_t len, cut, usable, bad_calls = 0, bad_err = 0, bad_ignored = 0, kept_mid = 0;
    struct obs_trace *t;
    char err[256];

    if (fixture_write(path, 0) != 0)
        bail("cannot write the fixture");
    d = (unsigned char *)slurp(path, &len);
    for (cut = 0; cut <= len; cut++) {
        int rc = obs_trace_load(d, cut, "cut", &t, err, sizeof err);
        if (cut < 64) {
            if (rc != OBS_TRACE_ERR_TRUNCATED || strcmp(err, "truncated header") != 0) {
                if (!bad_err)
                    diag("cut at %zu: rc %d, %s", cut, rc, err);
                bad_err++;
            }
            continue;
        }
        if (rc != 0) {
            if (!bad_err)
                diag("cut at %zu: rc %d, %s", cut, rc, err);
            bad_err++;
            continue;
        }
        if (t->ncalls != calls_before(d, len, cut, &usable)) {
            if (!bad_calls)
                diag("cut at %zu: %zu calls read, %zu expected", cut, t->ncalls, calls_before(d, len, cut, &usable));
            bad_calls++;
        }
        if (t->ignored_bytes != cut - usable || (t->ignored_bytes && t->ignored_offset != usable)) {
            if (!bad_ignored)
                diag("cut at %zu: ignored %llu at %llu, expected %zu at %zu", cut,
                     (unsigned long long)t->ignored_bytes, (unsigned long long)t->ignored_offset, cut - usable,
                     usable);
            bad_ignored++;
        }
        if (t->ignored_bytes && t->ignored_reason == NULL)
            bad_ignored++;
        /* a cut inside a records chunk keeps that chunk's complete records */
        if (cut == len - 48 - 10 && t->ncalls == fixture_ncalls - 2)
            kept_mid = 1;
        obs_trace_free(t);
    }
    is_int(0, (long long)bad_err, "cut inside the header: 'truncated header'; after it: reads");
    is_int(0, (long long)bad_calls, "every cut offset: exactly the complete call records are kept");
    is_int(0, (long long)bad_ignored, "every cut offset: the ignored bytes are reported");
    ok(kept_mid, "a cut in the middle of the last chunk keeps its first complete record");

    /* The same through files, at the interesting offsets. */
    {
        static const size_t header_cuts[] = {0, 5, 8, 40, 63};
        size_t k;
        int good = 1;
        for (k = 0; k < sizeof header_cuts / sizeof header_cuts[0]; k++) {
            test_write_file(cut_path, d, header_cuts[k]);
            if (obs_trace_open(cut_path, &t, err, sizeof err) != OBS_TRACE_ERR_TRUNCATED) {
                diag("file cut at %zu: %s", header_cuts[k], err);
                good = 0;
            }
        }
        ok(good, "files cut inside the header: truncated header");
        test_write_file(cut_path, d, 64);
        ok(obs_trace_open(cut_path, &t, err, sizeof err) == 0 && t->ncalls == 0 && t->ignored_bytes == 0,
           "header only: an empty trace");
        if (t)
            obs_trace_free(t);
        test_write_file(cut_path, d, 64 + 10);
        ok(obs_trace_open(cut_path, &t, err, sizeof err) == 0 && t->ignored_bytes == 10 &&
               strstr(t->ignored_reason, "chunk header") != NULL,
           "cut inside a chunk header: 10 bytes ignored");
        if (t)
            obs_trace_free(t);
        test_write_file(cut_path, d, len - 20);
        ok(obs_trace_open(cut_path, &t, err, sizeof err) == 0 && t->ncalls == fixture_ncalls - 1 &&
               t->ignored_bytes == 28 && strstr(t->ignored_reason, "incomplete chunk") != NULL,
           "cut inside the last record: the ones before kept, 28 bytes ignored");
        if (t) {
            /* the record cut is seq 14's: 0..13 are intact */
            is_int(0, check_first_calls(t, 1, 14), "the calls kept are intact");
            obs_trace_free(t);
        } else {
            skip("open failed");
        }
    }
    free(d);
}

static void test_bad_files(const char *dir)
{
    const char *path = test_path(dir, "bad.obs");
    const char *fix = test_path(dir, "fixture.obs");
    struct obs_file_header h;
    struct obs_trace *t;
    char err[256];
    unsigned char *d;
    size_t len;
    int rc;

    test_write_file(path, "hello, this is not a trace at all, just text\n", 45);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_FOREIGN && strcmp(err, "not an obsshim trace") == 0, "foreign file: %s", err);
    test_write_file(path, "ab", 2);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_FOREIGN, "short foreign file: %s", err);
    test_write_file(path, "OBS", 3);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_TRUNCATED, "a start of the magic: %s", err);
    test_write_file(path, "", 0);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_TRUNCATED && strcmp(err, "truncated header") == 0, "empty file: %s", err);

    if (fixture_write(fix, 0) != 0)
        bail("cannot write the fixture");
    d = (unsigned char *)slurp(fix, &len);
    memcpy(&h, d, sizeof h);

    h.version = OBS_TRACE_VERSION + 1;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_VERSION && strcmp(err, "trace version 2 is newer than this reader (1)") == 0,
       "newer version: %s", err);

    h.version = OBS_TRACE_VERSION;
    h.byte_order = 0x04030201u;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_BYTE_ORDER && strstr(err, "byte order") != NULL, "other byte order: %s", err);

    h.byte_order = OBS_BYTE_ORDER_MARK;
    h.record_size = 64;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_RECORD_SIZE && strstr(err, "record size 64") != NULL, "bad record size: %s", err);

    h.record_size = OBS_RECORD_SIZE;
    h.header_size = 32;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    rc = obs_trace_open(path, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_HEADER, "bad header size: %s", err);

    /* A larger header (a later minor revision): its extra bytes are skipped. */
    {
        unsigned char *big = calloc(1, len + 64);
        h.header_size = 128;
        memcpy(big, &h, sizeof h);
        memcpy(big + 128, d + 64, len - 64);
        rc = obs_trace_load(big, len + 64, "big header", &t, err, sizeof err);
        ok(rc == 0 && t->ncalls == fixture_ncalls, "a longer header is skipped");
        if (rc == 0)
            obs_trace_free(t);
        free(big);
    }

    /* A corrupt chunk header in the middle: what comes before is kept. */
    h.header_size = 64;
    memcpy(d, &h, sizeof h);
    {
        size_t pos = 64, chunks = 0, calls = 0;
        while (pos + 24 <= len && chunks < 6) { /* corrupt the 7th chunk */
            struct obs_chunk_header ch;
            size_t k;
            memcpy(&ch, d + pos, sizeof ch);
            if (ch.type == OBS_CHUNK_RECORDS)
                for (k = 0; k < ch.payload_bytes; k += 48)
                    calls += d[pos + 24 + k] == OBS_REC_CALL;
            pos += 24 + ch.payload_bytes;
            chunks++;
        }
        d[pos] ^= 0xff;
        rc = obs_trace_load(d, len, "corrupt", &t, err, sizeof err);
        ok(rc == 0 && t->ncalls == calls && t->ignored_offset == pos && t->ignored_bytes == len - pos &&
               strcmp(t->ignored_reason, "damaged chunk header") == 0,
           "damaged chunk header: %zu calls before it kept, the rest ignored", calls);
        if (rc == 0)
            obs_trace_free(t);
    }
    free(d);

    rc = obs_trace_open(test_path(dir, "does-not-exist.obs"), &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_IO && strcmp(err, strerror(ENOENT)) == 0, "missing file: %s", err);
    rc = obs_trace_open(dir, &t, err, sizeof err);
    ok(rc == OBS_TRACE_ERR_IO && strcmp(err, strerror(EISDIR)) == 0, "directory: %s", err);
}

/* A FIFO cannot be mapped: the reader reads it. */
static void test_fifo(const char *dir)
{
    const char *fifo = test_path(dir, "trace.fifo");
    const char *fix = test_path(dir, "fixture.obs");
    struct obs_trace *t;
    char err[256];
    size_t len;
    char *d;
    pid_t child;
    int rc, status;

    if (fixture_write(fix, 0) != 0 || mkfifo(fifo, 0600) != 0)
        bail("setup failed");
    d = slurp(fix, &len);
    child = fork();
    if (child == 0) {
        int fd = open(fifo, O_WRONLY);
        int written = fd >= 0 && write(fd, d, len) == (ssize_t)len;
        free(d);
        _exit(written ? 0 : 1);
    }
    rc = obs_trace_open(fifo, &t, err, sizeof err);
    waitpid(child, &status, 0);
    ok(rc == 0 && t->ncalls == fixture_ncalls && check_calls(t, 1) == 0, "a trace read from a FIFO");
    if (rc == 0)
        obs_trace_free(t);
    free(d);
}

/* Many threads, chunks interleaved: a k-way merge in (t_begin, tid, index). */
static void test_merge(const char *dir)
{
    const char *path = test_path(dir, "big.obs");
    struct obs_trace *t;
    char err[256];
    size_t i, bad = 0, with_gpu = 0;
    int rc;

    if (fixture_write_big(path, 100000, 7, 1) != 0)
        bail("cannot write the big trace");
    rc = obs_trace_open(path, &t, err, sizeof err);
    is_int(0, rc, "big trace opens");
    if (rc != 0) {
        skip_block(3, "no trace");
        return;
    }
    is_int(100000, (long long)t->ncalls, "100000 calls from 7 threads");
    for (i = 1; i < t->ncalls; i++) {
        const struct obs_call *a = &t->calls[i - 1], *b = &t->calls[i];
        uint32_t ta = t->threads[a->thread].tid, tb = t->threads[b->thread].tid;
        if (a->host_begin > b->host_begin || (a->host_begin == b->host_begin && (ta > tb || (ta == tb && a->index >= b->index))))
            bad++;
    }
    for (i = 0; i < t->ncalls; i++)
        with_gpu += t->calls[i].gpu != OBS_NONE;
    is_int(0, (long long)bad, "sequence order holds across threads");
    is_int(90000, (long long)with_gpu, "every launch and copy has its GPU time");
    obs_trace_free(t);
}

/* OBS_GPU_TIME=cupti's spans: several for one call (a graph launch's nodes)
 * read as their envelope, whatever their order; spans flagged NO_WORK give
 * no GPU time and are counted apart, unless a real span names the call too;
 * a flagged call without any span is missing; none is orphaned. */
static void test_cupti_spans(const char *dir)
{
    const char *path = test_path(dir, "cupti-spans.obs");
    struct obs_file_header h;
    union obs_record calls[5], spans[7];
    struct obs_trace *t;
    char err[256];
    int fd, rc, i;
    /* call index -> (begin, end, flags) of its spans, written out of order */
    static const struct {
        uint64_t index, begin, end;
        uint8_t flags;
    } sp[7] = {
        {0, 5000, 5600, 0},   {0, 4000, 4500, 0}, {0, 4400, 6000, 0}, /* call 0: 4000..6000 */
        {1, 3000, 3000, OBS_SPAN_NO_WORK},                              /* call 1: no device work */
        {2, 7000, 7000, OBS_SPAN_NO_WORK}, {2, 7100, 7900, 0},          /* call 2: 7100..7900 */
        {4, 9000, 9500, 0},                                             /* call 4: 9000..9500 */
    };

    memset(calls, 0, sizeof calls);
    for (i = 0; i < 5; i++) {
        calls[i].call.type = OBS_REC_CALL;
        calls[i].call.api = i == 0 ? OBS_API_cudaGraphLaunch : OBS_API_cudaLaunchKernel;
        calls[i].call.flags = OBS_CALL_GPU_TIMED; /* call 3: timed, no span: missing */
        calls[i].call.t_begin = FIX_T0 + 100 * (uint64_t)i;
        calls[i].call.t_dur = 50;
    }
    memset(spans, 0, sizeof spans);
    for (i = 0; i < 7; i++) {
        spans[i].gpu_span.type = OBS_REC_GPU_SPAN;
        spans[i].gpu_span.flags = sp[i].flags;
        spans[i].gpu_span.tid = 200;
        spans[i].gpu_span.call_index = sp[i].index;
        spans[i].gpu_span.gpu_begin = FIX_T0 + sp[i].begin;
        spans[i].gpu_span.gpu_end = FIX_T0 + sp[i].end;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bail("cannot write %s", path);
    obs_trace_init_header(&h, FIX_PID, OBS_FILE_GPU_TIME, FIX_T0, FIX_REAL0);
    if (obs_trace_write_header(fd, &h) != 0 || obs_trace_write_records(fd, 200, 0, calls, 5) != 0 ||
        obs_trace_write_records(fd, 201, 0, spans, 7) != 0)
        bail("cannot write %s", path);
    close(fd);
    rc = obs_trace_open(path, &t, err, sizeof err);
    is_int(0, rc, "cupti spans: the trace opens");
    if (rc != 0) {
        skip_block(4, "no trace");
        return;
    }
    ok(t->ncalls == 5 && t->ngpu == 3 && obs_call_gpu(t, &t->calls[0]) && obs_call_gpu(t, &t->calls[2]) &&
           obs_call_gpu(t, &t->calls[4]) && !obs_call_gpu(t, &t->calls[1]) && !obs_call_gpu(t, &t->calls[3]),
       "cupti spans: calls 0, 2 and 4 have GPU time, 1 (no device work) and 3 (missing) none");
    ok(obs_call_gpu(t, &t->calls[0]) && obs_call_gpu(t, &t->calls[0])->begin == FIX_T0 + 4000 &&
           obs_call_gpu(t, &t->calls[0])->end == FIX_T0 + 6000,
       "cupti spans: three spans of one call read as their envelope, in any order");
    ok(obs_call_gpu(t, &t->calls[2]) && obs_call_gpu(t, &t->calls[2])->begin == FIX_T0 + 7100 &&
           obs_call_gpu(t, &t->calls[2])->end == FIX_T0 + 7900,
       "cupti spans: a real span wins over a NO_WORK one");
    ok(t->no_work_gpu_calls == 1 && t->missing_gpu_spans == 1 && t->orphan_gpu_spans == 0,
       "cupti spans: 1 call with no device work, 1 missing, no orphan (%llu, %llu, %llu)",
       (unsigned long long)t->no_work_gpu_calls, (unsigned long long)t->missing_gpu_spans,
       (unsigned long long)t->orphan_gpu_spans);
    obs_trace_free(t);
}


/* GRAPH_NODES (docs/trace-format.md): an exec's kernel nodes in walk
 * order with their layers, 6 a record; the last record of a position wins,
 * a missing position ends the list, nodes of an id with no GRAPH record
 * are dropped; `layers` counts runs of nodes in one layer. */
static void test_graph_nodes(const char *dir)
{
    const char *path = test_path(dir, "graph-nodes.obs");
    /* exec 1: 9 nodes [-, 0, 0, 1, 1, 2, 2, -, -] in two records, position 2 written again (layer 0 -> 0 kept
     * as the later record says), then a record at position 12 (after a gap: not kept); exec 2: one record, no
     * GRAPH record of its own */
    static const uint16_t layers1[9] = {0xffffu, 0, 0, 1, 1, 2, 2, 0xffffu, 0xffffu};
    struct obs_file_header h;
    union obs_record recs[6];
    struct obs_trace *t;
    const struct obs_graph *g;
    char err[256];
    int fd, rc, i, right = 0;

    memset(recs, 0, sizeof recs);
    recs[0].graph.type = OBS_REC_GRAPH;
    recs[0].graph.id = 1;
    recs[0].graph.node_count = 9;
    recs[0].graph.kernel_count = 9;
    recs[1].graph_nodes.type = OBS_REC_GRAPH_NODES;
    recs[1].graph_nodes.graph = 1;
    recs[1].graph_nodes.first = 0;
    recs[1].graph_nodes.count = 6;
    for (i = 0; i < 6; i++) {
        recs[1].graph_nodes.name[i] = 100u + (uint32_t)i;
        recs[1].graph_nodes.layer[i] = i == 2 ? 7 : layers1[i]; /* position 2 wrong here, right below */
    }
    recs[2].graph_nodes.type = OBS_REC_GRAPH_NODES;
    recs[2].graph_nodes.graph = 1;
    recs[2].graph_nodes.first = 2;
    recs[2].graph_nodes.count = 1;
    recs[2].graph_nodes.name[0] = 102;
    recs[2].graph_nodes.layer[0] = layers1[2];
    recs[3].graph_nodes.type = OBS_REC_GRAPH_NODES;
    recs[3].graph_nodes.graph = 1;
    recs[3].graph_nodes.first = 6;
    recs[3].graph_nodes.count = 3;
    for (i = 0; i < 3; i++) {
        recs[3].graph_nodes.name[i] = 106u + (uint32_t)i;
        recs[3].graph_nodes.layer[i] = layers1[6 + i];
    }
    recs[4].graph_nodes.type = OBS_REC_GRAPH_NODES;
    recs[4].graph_nodes.graph = 1;
    recs[4].graph_nodes.first = 12;
    recs[4].graph_nodes.count = 1;
    recs[4].graph_nodes.name[0] = 112;
    recs[5].graph_nodes.type = OBS_REC_GRAPH_NODES;
    recs[5].graph_nodes.graph = 2;
    recs[5].graph_nodes.count = 1;
    recs[5].graph_nodes.name[0] = 100;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bail("cannot write %s", path);
    obs_trace_init_header(&h, FIX_PID, 0, FIX_T0, FIX_REAL0);
    if (obs_trace_write_header(fd, &h) != 0 || obs_trace_write_records(fd, 300, 0, recs, 6) != 0)
        bail("cannot write %s", path);
    for (i = 100; i <= 112; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        if (obs_trace_write_string(fd, (uint32_t)i, OBS_STR_KERNEL_MANGLED, name, (uint32_t)strlen(name)) != 0)
            bail("cannot write %s", path);
    }
    close(fd);
    rc = obs_trace_open(path, &t, err, sizeof err);
    is_int(0, rc, "graph nodes: the trace opens");
    if (rc != 0) {
        skip_block(3, "no trace");
        return;
    }
    g = obs_trace_graph(t, 1);
    ok(t->ngraphs == 1 && g != NULL && g->nnodes == 9 && t->unknown_records == 0,
       "graph nodes: positions 0-8 kept, the one after a gap and the exec with no GRAPH record dropped (%zu nodes)",
       g ? g->nnodes : (size_t)0);
    for (i = 0; g != NULL && i < (int)g->nnodes && i < 9; i++) {
        char want[16];
        snprintf(want, sizeof want, "k%d", 100 + i);
        right += strcmp(t->kernels[g->nodes[i].kernel].mangled, want) == 0 &&
                 g->nodes[i].layer == (layers1[i] == 0xffffu ? OBS_NO_LAYER : layers1[i]);
    }
    is_int(9, right, "graph nodes: each node's kernel and layer in walk order (the later record of position 2 wins)");
    is_int(3, g ? (long long)g->layers : -1, "graph nodes: 3 layer runs");
    obs_trace_free(t);
}

/* A trace cut as the shim opened it (SIGKILL between its first two writes:
 * the header, then META): a header alone, or a header and a META chunk cut
 * short, is unclosed, and its note says where it stopped; a file of records
 * and no META (a tool's, not the shim's) is not. */
static void test_opening_cut(const char *dir)
{
    static const char meta[] = "host\0h\0pid\0\061\0buffer_records\0\061024\0";
    const char *paths[3] = {test_path(dir, "cut-header.obs"), test_path(dir, "cut-meta.obs"),
                            test_path(dir, "no-meta.obs")};
    struct obs_file_header h;
    union obs_record call;
    char err[256], note[512];
    int k;

    memset(&call, 0, sizeof call);
    call.call.type = OBS_REC_CALL;
    call.call.api = OBS_API_cudaLaunchKernel;
    call.call.t_begin = FIX_T0 + 10;
    for (k = 0; k < 3; k++) {
        int fd = open(paths[k], O_WRONLY | O_CREAT | O_TRUNC, 0644), rc;
        struct obs_trace *t = NULL;
        obs_trace_init_header(&h, FIX_PID, 0, FIX_T0, FIX_REAL0);
        if (fd < 0 || obs_trace_write_header(fd, &h) != 0 ||
            (k == 1 && obs_trace_write_meta(fd, meta, sizeof meta - 1) != 0) ||
            (k == 2 && obs_trace_write_records(fd, 7, 0, &call, 1) != 0))
            bail("cannot write %s", paths[k]);
        close(fd);
        if (k == 1 && truncate(paths[k], 64 + 24 + 5) != 0) /* the META chunk's header and 5 bytes of it */
            bail("cannot cut %s", paths[k]);
        rc = obs_trace_open(paths[k], &t, err, sizeof err);
        if (rc != 0) {
            ok(0, "opening cut %d: the trace opens (%s)", k, err);
            continue;
        }
        if (k < 2)
            ok(obs_trace_opening_cut(t) && obs_trace_unclosed(t) && t->ncalls == 0 &&
                   strstr(obs_trace_unclosed_note(t, note, sizeof note),
                          "died while the shim was opening the trace") != NULL,
               "opening cut: %s is unclosed, its note says where it stopped (%s)",
               k == 0 ? "a header alone" : "a header and a cut META", note);
        else
            ok(!obs_trace_opening_cut(t) && !obs_trace_unclosed(t) && t->ncalls == 1,
               "opening cut: records with no META (not the shim's) are not unclosed");
        obs_trace_free(t);
    }
}

static void test_names(void)
{
    is_string("cudaLaunchKernel", obs_api_name(OBS_API_cudaLaunchKernel), "api name");
    is_string("hipFreeAsync", obs_api_name(OBS_API_hipFreeAsync), "last api name");
    is_string("unknown", obs_api_name(OBS_API_COUNT), "out-of-range api");
    is_int(OBS_KIND_MEMSET, obs_api_kind(OBS_API_hipMemsetD32Async), "api kind");
    is_string("graph", obs_call_kind_name(OBS_KIND_GRAPH), "kind name");
    is_string("DtoH", obs_direction_name(OBS_DIR_DTOH), "direction name");
    is_string("", obs_direction_name(OBS_DIR_NONE), "no direction");
}

int main(void)
{
    const char *dir;
    plan(95);
    dir = test_tmpdir();
    test_names();
    test_fixture(dir);
    test_truncation(dir);
    test_bad_files(dir);
    test_fifo(dir);
    test_merge(dir);
    test_cupti_spans(dir);
    test_graph_nodes(dir);
    test_opening_cut(dir);
    return 0;
}
