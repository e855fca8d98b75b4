/* The reader is total: obs-report survives every damaged trace.
 *
 * Real traces (the reference workload on the simulator with GPU time, a
 * test app with threads and a CUDA graph, the synthetic fixture with every
 * record kind) are damaged a few hundred ways, deterministically: flipped
 * bytes, runs of 0xff, cuts at many offsets, a word copied elsewhere, zeroed
 * ranges, huge length fields in STRINGS entries and chunk headers, extreme
 * values in record fields, records turned into another kind, chunks
 * appended twice. Every obs-report command runs on each. For each run:
 * no signal, no hang, exit 0 or 1; on 1 exactly one error line on stderr,
 * starting "obs-report: " and naming the file (besides the reader's
 * "obs-report: FILE: warning: ..." lines), and no output file (nor
 * temporary) left; on 0 nothing but "obs-report: " lines on stderr (no sanitizer
 * report). Then, under RLIMIT_AS of 512 MB, each count and length field
 * set to its maximum: still exit 0 or 1, and never "out of memory" (memory
 * is bounded by the file, not by what a damaged field says). Last, three
 * damaged traces that were cheap to write and costly to read (100 000
 * nested BEGINs; 20 000 generations of 20 000 phases; calls at random
 * times among BEGIN/END): every command within the 30 s timeout.
 *
 * OBS_REPORT=PATH runs another obs-report (a sanitizer build);
 * OBS_MUTATE_RLIMIT=0 skips the RLIMIT_AS part; OBS_MUTATE_SCALE=N runs
 * N times as many mutations. Under ASan (OBS_SANITIZE=asan, make
 * check-sanitize) RLIMIT_AS cannot be set (the runtime reserves terabytes
 * of shadow address space): every allocation is capped at 512 MB instead
 * (ASAN_OPTIONS max_allocation_size_mb, allocator_may_return_null), so a
 * damaged count that allocates by it still ends in "out of memory". */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_format.h"
#include "workload_bins.h"

static const char *report;
static const char *workdir;
/* How memory is bounded in the bounded-memory checks: RLIMIT_AS (the
 * normal build), ASan's per-allocation cap (set for every run), none. */
enum { LIMIT_NONE, LIMIT_RLIMIT, LIMIT_ASAN } memory_limit = LIMIT_RLIMIT;

/* ---- deterministic randomness (xorshift64*) ---------------------------- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(size_t n)
{
    return n ? (size_t)(rng() % n) : 0;
}

/* 1 to max bytes of value at a random offset (cut at the end); how many,
 * the offset in *off. */
static size_t fill_run(uint8_t *x, size_t len, uint8_t value, size_t max, size_t *off)
{
    size_t k;
    *off = rng_below(len);
    k = 1 + rng_below(max);
    if (*off + k > len)
        k = len - *off;
    memset(x + *off, value, k);
    return k;
}

/* ---- the layout of an undamaged trace ---------------------------------- */

struct layout {
    size_t *chunks; /* offsets of chunk headers */
    size_t nchunks;
    size_t *strings; /* offsets of string entries */
    size_t nstrings;
    size_t *records; /* offsets of records */
    size_t nrecords;
};

static void push(size_t **v, size_t *n, size_t x)
{
    size_t *p = realloc(*v, (*n + 1) * sizeof **v);
    if (p == NULL)
        bail("out of memory");
    p[(*n)++] = x;
    *v = p;
}

static void layout_of(const uint8_t *d, size_t len, struct layout *l)
{
    struct obs_file_header h;
    size_t pos;
    memset(l, 0, sizeof *l);
    memcpy(&h, d, sizeof h);
    pos = h.header_size;
    while (pos + sizeof(struct obs_chunk_header) <= len) {
        struct obs_chunk_header ch;
        size_t p, end;
        memcpy(&ch, d + pos, sizeof ch);
        if (ch.magic != OBS_CHUNK_MAGIC || ch.payload_bytes > len - pos - sizeof ch)
            break;
        push(&l->chunks, &l->nchunks, pos);
        p = pos + sizeof ch;
        end = p + ch.payload_bytes;
        if (ch.type == OBS_CHUNK_RECORDS)
            for (; p + OBS_RECORD_SIZE <= end; p += OBS_RECORD_SIZE)
                push(&l->records, &l->nrecords, p);
        else if (ch.type == OBS_CHUNK_STRINGS)
            while (p + sizeof(struct obs_string_entry) <= end) {
                struct obs_string_entry e;
                memcpy(&e, d + p, sizeof e);
                push(&l->strings, &l->nstrings, p);
                p += sizeof e + (((size_t)e.len + 7) & ~(size_t)7);
            }
        pos = end;
    }
}

/* ---- mutations ----------------------------------------------------------- */

static const uint64_t interesting[] = {0,
                                       1,
                                       2,
                                       7,
                                       47,
                                       48,
                                       0x7f,
                                       0xff,
                                       0xffff,
                                       0x10000,
                                       0x7fffffff,
                                       0x80000000,
                                       0xfffffff8,
                                       0xfffffff9,
                                       0xfffffffe,
                                       0xffffffff,
                                       0x100000000ull,
                                       0x7fffffffffffffffull,
                                       0x8000000000000000ull,
                                       0xfffffffffffffff8ull,
                                       0xffffffffffffffffull};
#define NINTERESTING (sizeof interesting / sizeof interesting[0])

static void put32(uint8_t *d, size_t len, size_t off, uint32_t v)
{
    if (off + 4 <= len)
        memcpy(d + off, &v, 4);
}

static void put64(uint8_t *d, size_t len, size_t off, uint64_t v)
{
    if (off + 8 <= len)
        memcpy(d + off, &v, 8);
}

enum {
    M_FLIP,
    M_FF_RUN,
    M_TRUNCATE,
    M_COPY_WORD,
    M_ZERO_RANGE,
    M_STRING_LEN,
    M_CHUNK_HEADER,
    M_RECORD_FIELD,
    M_RECORD_KIND,
    M_DUP_CHUNK,
    M_COUNT
};

static const char *const mutation_names[] = {"flip",         "0xff run",     "truncate",    "copy word",
                                             "zero range",   "string len",   "chunk header", "record field",
                                             "record kind",  "chunk twice"};

/* Damage a copy of d (len bytes) the m-th way; returns the new length
 * (*out is malloc'ed) and describes it in what. */
static size_t mutate(const uint8_t *d, size_t len, const struct layout *l, unsigned m, uint8_t **out, char *what,
                     size_t whatlen)
{
    unsigned kind = m % M_COUNT;
    size_t n = len, off, k;
    uint8_t *x = malloc(len * 2 + 64);

    if (x == NULL)
        bail("out of memory");
    memcpy(x, d, len);
    rng_state = 0x9e3779b97f4a7c15ull ^ ((uint64_t)m * 0x100000001b3ull) ^ len;
    rng();
    switch (kind) {
    case M_FLIP:
        for (k = 1 + rng_below(4); k-- > 0;) {
            off = rng_below(len);
            x[off] ^= (uint8_t)(1 + rng_below(255));
        }
        snprintf(what, whatlen, "flipped bytes (last at %zu)", off);
        break;
    case M_FF_RUN:
        k = fill_run(x, len, 0xff, 32, &off);
        snprintf(what, whatlen, "%zu bytes of 0xff at %zu", k, off);
        break;
    case M_TRUNCATE:
        /* every few at small offsets (header, first chunk header), else anywhere */
        n = (m / M_COUNT) % 3 == 0 ? rng_below(120) : rng_below(len);
        snprintf(what, whatlen, "cut at %zu of %zu", n, len);
        break;
    case M_COPY_WORD: {
        size_t from = rng_below(len - 8), to = rng_below(len - 8);
        memcpy(x + to, d + from, 8);
        snprintf(what, whatlen, "8 bytes from %zu copied to %zu", from, to);
        break;
    }
    case M_ZERO_RANGE:
        k = fill_run(x, len, 0, 256, &off);
        snprintf(what, whatlen, "%zu bytes zeroed at %zu", k, off);
        break;
    case M_STRING_LEN: {
        uint64_t v = interesting[rng_below(NINTERESTING)];
        off = l->nstrings ? l->strings[rng_below(l->nstrings)] : sizeof(struct obs_file_header);
        if (rng_below(4) == 0) /* the id or kind instead */
            put32(x, n, off + 4 * rng_below(2), (uint32_t)v);
        else
            put32(x, n, off + offsetof(struct obs_string_entry, len), (uint32_t)v);
        snprintf(what, whatlen, "string entry at %zu: a field set to 0x%llx", off, (unsigned long long)v);
        break;
    }
    case M_CHUNK_HEADER: {
        uint64_t v = interesting[rng_below(NINTERESTING)];
        off = l->nchunks ? l->chunks[rng_below(l->nchunks)] : sizeof(struct obs_file_header);
        switch (rng_below(4)) {
        case 0:
        case 1: /* payload_bytes, the likeliest to be huge */
            put32(x, n, off + offsetof(struct obs_chunk_header, payload_bytes), (uint32_t)v);
            break;
        case 2:
            put64(x, n, off + offsetof(struct obs_chunk_header, first_index), v);
            break;
        default:
            put32(x, n, off + 4 * (1 + rng_below(2)), (uint32_t)v); /* type or tid */
            break;
        }
        snprintf(what, whatlen, "chunk header at %zu: a field set to 0x%llx", off, (unsigned long long)v);
        break;
    }
    case M_RECORD_FIELD: {
        uint64_t v = interesting[rng_below(NINTERESTING)];
        size_t field;
        off = l->nrecords ? l->records[rng_below(l->nrecords)] : sizeof(struct obs_file_header);
        field = 1 + rng_below(OBS_RECORD_SIZE - 1);
        if (rng_below(2)) {
            field &= ~(size_t)7;
            put64(x, n, off + field, v);
        } else if (field < 4) {
            x[off + field] = (uint8_t)v;
        } else {
            field &= ~(size_t)3;
            put32(x, n, off + field, (uint32_t)v);
        }
        snprintf(what, whatlen, "record (kind %u) at %zu: offset %zu set to 0x%llx", x[off], off, field,
                 (unsigned long long)v);
        break;
    }
    case M_RECORD_KIND:
        off = l->nrecords ? l->records[rng_below(l->nrecords)] : sizeof(struct obs_file_header);
        k = x[off];
        x[off] = (uint8_t)(1 + rng_below(9));
        snprintf(what, whatlen, "record at %zu: kind %zu made %u", off, k, x[off]);
        break;
    default: { /* a chunk appended again: duplicate ids, indexes, strings */
        size_t c = l->nchunks ? rng_below(l->nchunks) : 0, end;
        off = l->nchunks ? l->chunks[c] : len;
        end = c + 1 < l->nchunks ? l->chunks[c + 1] : len;
        if (end - off > len)
            end = off + len;
        memcpy(x + len, d + off, end - off);
        n = len + (end - off);
        snprintf(what, whatlen, "chunk at %zu (%zu bytes) appended again", off, end - off);
        break;
    }
    }
    *out = x;
    return n;
}

/* ---- running obs-report ------------------------------------------------------ */

#define NCOMMANDS 12

static const char *const command_names[NCOMMANDS] = {"summary", "csv",   "json", "perfetto", "phases",  "suggest-phases",
                                                     "gaps",    "top",   "compare", "merge", "sqlite", "html"};

/* Entries left in dir (output files, temporaries); removes them. */
static size_t dir_leftovers(const char *dir, char *first, size_t firstlen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[4608];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n++ == 0 && first)
            snprintf(first, firstlen, "%s", e->d_name);
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    return n;
}

/* Message lines of stderr that are not warnings ("obs-report: FILE:
 * warning: ..." lines, which a readable damaged trace gets); *bad: lines
 * not starting with "obs-report: " at all. */
static size_t stderr_lines(const char *text, size_t *bad)
{
    size_t n = 0;
    *bad = 0;
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        const char *w = strstr(text, ": warning: ");
        if (strncmp(text, "obs-report: ", 12) != 0)
            (*bad)++;
        else if (w == NULL || w > text + len)
            n++;
        if (nl == NULL)
            break;
        text = nl + 1;
    }
    return n;
}

/* Run command c on trace (orig: an undamaged trace, for compare). Returns
 * NULL when the run was as it must be, else why not (static text). */
static const char *run_command(unsigned c, const char *trace, const char *orig, int bounded, int *status)
{
    static char why[512];
    char outdir[4200], out[4300], left[256];
    const char *argv[12];
    struct run_result r;
    size_t nlines, bad, nleft;
    int i = 0;
    const char *res = NULL;

    snprintf(outdir, sizeof outdir, "%s/out", workdir);
    snprintf(out, sizeof out, "%s/result", outdir);
    argv[i++] = report;
    argv[i++] = command_names[c];
    if (strcmp(command_names[c], "top") == 0)
        argv[i++] = "5";
    if (strcmp(command_names[c], "sqlite") == 0) {
        argv[i++] = "-q";
        argv[i++] = trace;
        argv[i++] = out;
    } else {
        if (c == 1 || c == 2 || c == 3)
            argv[i++] = "-q";
        argv[i++] = "-o";
        argv[i++] = out;
        if (strcmp(command_names[c], "compare") == 0)
            argv[i++] = orig;
        argv[i++] = trace;
    }
    argv[i] = NULL;
    if (run_program(argv, NULL, 30, &r) != 0)
        bail("cannot run %s", report);
    *status = r.exited ? r.status : -1;
    nleft = dir_leftovers(outdir, left, sizeof left);
    nlines = stderr_lines(r.err, &bad);
    if (!r.exited) {
        snprintf(why, sizeof why, "%s: killed by signal %d%s", command_names[c], r.signal,
                 r.signal == 9 ? " (timed out after 30 s?)" : "");
        res = why;
    } else if (r.status != 0 && r.status != 1) {
        snprintf(why, sizeof why, "%s: exit status %d", command_names[c], r.status);
        res = why;
    } else if (r.status == 1 && (nlines != 1 || bad != 0 || strstr(r.err, trace) == NULL)) {
        snprintf(why, sizeof why, "%s: exit 1 with %zu error lines (and %zu not 'obs-report: '): %.300s",
                 command_names[c], nlines, bad, r.err);
        res = why;
    } else if (r.status == 1 && nleft != 0) {
        snprintf(why, sizeof why, "%s: exit 1 but %zu files left in the output folder (%s)", command_names[c],
                 nleft, left);
        res = why;
    } else if (bounded && (strstr(r.err, "out of memory") || strstr(r.err, "Cannot allocate memory"))) {
        snprintf(why, sizeof why, "%s: ran out of memory: %.300s", command_names[c], r.err);
        res = why;
    } else if (r.status == 0 && bad != 0) {
        snprintf(why, sizeof why, "%s: exit 0 with other stderr lines: %.300s", command_names[c], r.err);
        res = why;
    }
    run_result_free(&r);
    return res;
}

/* All commands on one damaged trace: one TAP line. Returns 1 if all fine.
 * bounded: running out of memory is a failure too (RLIMIT_AS is set). */
static int check_all(const char *label, const char *trace, const char *orig, int bounded, unsigned *crashes)
{
    unsigned c, failed = 0, exit1 = 0;
    for (c = 0; c < NCOMMANDS; c++) {
        int status;
        const char *why = run_command(c, trace, orig, bounded, &status);
        if (why != NULL) {
            failed++;
            diag("%s: %s", label, why);
            if (strstr(why, "signal"))
                (*crashes)++;
        }
        if (status == 1)
            exit1++;
    }
    return ok(failed == 0, "%s: %u commands ran, %u exit 1, %u wrong", label, NCOMMANDS, exit1, failed);
}

/* ---- the traces ------------------------------------------------------------------ */

struct source {
    const char *label;
    char path[4200];
    unsigned mutations;
};

static int workload_trace(struct source *s)
{
    const char *why = NULL, *bin = workload_path(&workload_bins[0], &why);
    const char *argv[] = {bin, "--repeat", "1", NULL};
    char out_env[4300];
    const char *env[] = {sim_library_path_env(), out_env, "OBS_GPU_TIME=events", "OBS_JSON=0", "OBS_SUMMARY=0",
                         NULL};
    struct run_result r;

    if (bin == NULL) {
        diag("reference workload: %s", why);
        return -1;
    }
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/workload", workdir);
    snprintf(s->path, sizeof s->path, "%s/workload.obs", workdir);
    shim_run(argv, env, 1, 120, &r);
    if (!r.exited || r.status != 0) {
        diag("%s: status %d, stderr '%s'", bin, r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    return access(s->path, R_OK);
}

static int threads_trace(struct source *s)
{
    const char *driver = shim_build_path("tests/apps/cuda_api_driver");
    const char *argv[] = {driver, "--threads", "3", "--launches", "40", NULL};
    const char *graph_argv[] = {driver, NULL};
    char out_env[4300];
    const char *env[] = {out_env, "OBS_GPU_TIME=events", "OBS_BUFFER_RECORDS=16", "OBS_JSON=0", "OBS_SUMMARY=0",
                         NULL};
    struct run_result r;
    int graphs;

    if (!test_executable(driver)) {
        diag("%s not built", driver);
        return -1;
    }
    /* one app run with threads, one with a graph, in one file (as processes
     * appending to one OBS_OUTPUT do) */
    for (graphs = 0; graphs < 2; graphs++) {
        snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/threads%d", workdir, graphs);
        shim_run(graphs ? graph_argv : argv, env, 1, 120, &r);
        if (!r.exited || r.status != 0) {
            diag("%s: status %d, stderr '%s'", driver, r.status, r.err);
            run_result_free(&r);
            return -1;
        }
        run_result_free(&r);
    }
    {
        char p0[4300], p1[4300];
        size_t n0, n1;
        char *d0, *d1;
        snprintf(p0, sizeof p0, "%s/threads0.obs", workdir);
        snprintf(p1, sizeof p1, "%s/threads1.obs", workdir);
        d0 = test_read_file(p0, &n0);
        d1 = test_read_file(p1, &n1);
        if (d0 == NULL || d1 == NULL || n1 < 64) {
            free(d0);
            free(d1);
            return -1;
        }
        /* the graph run's chunks after the threads run's: one trace with both */
        d0 = realloc(d0, n0 + n1);
        if (d0 == NULL)
            bail("out of memory");
        memcpy(d0 + n0, d1 + 64, n1 - 64);
        snprintf(s->path, sizeof s->path, "%s/threads.obs", workdir);
        test_write_file(s->path, d0, n0 + n1 - 64);
        free(d0);
        free(d1);
    }
    return 0;
}

static int fixture_trace(struct source *s)
{
    snprintf(s->path, sizeof s->path, "%s/fixture.obs", workdir);
    return fixture_write(s->path, 0);
}

/* Mutations of one trace; returns how many crashed a command. */
static unsigned mutate_source(const struct source *s, unsigned *bad)
{
    size_t len, n;
    uint8_t *d = (uint8_t *)test_read_file(s->path, &len), *x;
    struct layout l;
    unsigned m, crashes = 0;
    char damaged[4300], what[256], label[400];

    if (d == NULL || len < 128)
        bail("cannot read %s", s->path);
    layout_of(d, len, &l);
    diag("%s: %zu bytes, %zu chunks, %zu records, %zu strings", s->label, len, l.nchunks, l.nrecords, l.nstrings);
    snprintf(damaged, sizeof damaged, "%s/damaged.obs", workdir);
    for (m = 0; m < s->mutations; m++) {
        unsigned before = crashes;
        n = mutate(d, len, &l, m, &x, what, sizeof what);
        test_write_file(damaged, x, n);
        free(x);
        snprintf(label, sizeof label, "%s #%u %s: %s", s->label, m, mutation_names[m % M_COUNT], what);
        if (!check_all(label, damaged, s->path, 0, &crashes))
            (*bad)++;
        if (crashes != before)
            crashes = before + 1; /* count mutations, not commands */
    }
    free(l.chunks);
    free(l.strings);
    free(l.records);
    free(d);
    return crashes;
}

/* ---- bounded memory --------------------------------------------------------------- */

/* Every count and length field of the trace at its maximum, one at a
 * time, under RLIMIT_AS: a damaged count must not make the reader (or a
 * command) allocate by it. */
static void test_bounded_memory(const struct source *s)
{
    size_t len, i;
    uint8_t *d = (uint8_t *)test_read_file(s->path, &len);
    struct layout l;
    struct rlimit old, lim;
    char damaged[4300];
    unsigned crashes = 0;
    struct {
        const char *what;
        size_t off;
        int wide;
    } fields[16];
    size_t nfields = 0;

    if (d == NULL)
        bail("cannot read %s", s->path);
    layout_of(d, len, &l);
    if (l.nchunks) {
        fields[nfields].what = "first chunk's payload_bytes";
        fields[nfields].off = l.chunks[0] + offsetof(struct obs_chunk_header, payload_bytes);
        fields[nfields++].wide = 0;
        fields[nfields].what = "last chunk's payload_bytes";
        fields[nfields].off = l.chunks[l.nchunks - 1] + offsetof(struct obs_chunk_header, payload_bytes);
        fields[nfields++].wide = 0;
        fields[nfields].what = "last chunk's first_index";
        fields[nfields].off = l.chunks[l.nchunks - 1] + offsetof(struct obs_chunk_header, first_index);
        fields[nfields++].wide = 1;
    }
    if (l.nstrings) {
        fields[nfields].what = "first string's len";
        fields[nfields].off = l.strings[0] + offsetof(struct obs_string_entry, len);
        fields[nfields++].wide = 0;
        fields[nfields].what = "last string's len";
        fields[nfields].off = l.strings[l.nstrings - 1] + offsetof(struct obs_string_entry, len);
        fields[nfields++].wide = 0;
    }
    for (i = 0; i < l.nrecords && nfields + 6 <= sizeof fields / sizeof fields[0]; i++) {
        const uint8_t *r = d + l.records[i];
        if (r[0] == OBS_REC_GRAPH) {
            fields[nfields].what = "GRAPH node_count";
            fields[nfields].off = l.records[i] + offsetof(struct obs_rec_graph, node_count);
            fields[nfields++].wide = 1;
            fields[nfields].what = "GRAPH kernel_count";
            fields[nfields].off = l.records[i] + offsetof(struct obs_rec_graph, kernel_count);
            fields[nfields++].wide = 1;
        } else if (r[0] == OBS_REC_LOST && nfields < 12) {
            fields[nfields].what = "LOST count";
            fields[nfields].off = l.records[i] + offsetof(struct obs_rec_lost, count);
            fields[nfields++].wide = 1;
        } else if (r[0] == OBS_REC_PHASE && r[1] == OBS_PHASE_RELABEL && nfields < 12) {
            fields[nfields].what = "RELABEL last_index";
            fields[nfields].off = l.records[i] + offsetof(struct obs_rec_phase, last_index);
            fields[nfields++].wide = 1;
        }
    }

    getrlimit(RLIMIT_AS, &old);
    lim = old;
    lim.rlim_cur = 512ull << 20;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur)
        lim.rlim_cur = old.rlim_max;
    snprintf(damaged, sizeof damaged, "%s/huge.obs", workdir);
    for (i = 0; i < nfields; i++) {
        uint8_t *x = malloc(len);
        char label[256];
        if (x == NULL)
            bail("out of memory");
        memcpy(x, d, len);
        if (fields[i].wide)
            put64(x, len, fields[i].off, UINT64_MAX);
        else
            put32(x, len, fields[i].off, UINT32_MAX);
        test_write_file(damaged, x, len);
        free(x);
        if (memory_limit == LIMIT_ASAN)
            snprintf(label, sizeof label, "%s: %s at its maximum, allocations capped at 512 MB (ASan)", s->label,
                     fields[i].what);
        else
            snprintf(label, sizeof label, "%s: %s at its maximum, RLIMIT_AS %llu MB", s->label, fields[i].what,
                     (unsigned long long)(lim.rlim_cur >> 20));
        if (memory_limit == LIMIT_RLIMIT && setrlimit(RLIMIT_AS, &lim) != 0)
            bail("setrlimit");
        check_all(label, damaged, s->path, 1, &crashes);
        if (memory_limit == LIMIT_RLIMIT)
            setrlimit(RLIMIT_AS, &old);
    }
    free(l.chunks);
    free(l.strings);
    free(l.records);
    free(d);
}

/* ---- worst cases for time and memory ------------------------------------------------ */

/* A trace of one thread's records built in memory: header (the fixture's),
 * one RECORDS chunk. */
struct synth {
    uint8_t *d;
    size_t len, cap;
};

static void synth_add(struct synth *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        w->cap = (w->len + n) * 2;
        w->d = realloc(w->d, w->cap);
        if (w->d == NULL)
            bail("out of memory");
    }
    memcpy(w->d + w->len, p, n);
    w->len += n;
}

static void synth_phase(struct synth *w, unsigned event, unsigned phase, uint32_t generation, uint64_t t,
                        uint64_t first, uint64_t last)
{
    struct obs_rec_phase r;
    memset(&r, 0, sizeof r);
    r.type = OBS_REC_PHASE;
    r.event = (uint8_t)event;
    r.phase = (uint16_t)phase;
    r.step = UINT32_MAX;
    r.t = t;
    r.generation = generation;
    r.first_index = first;
    r.last_index = last;
    synth_add(w, &r, sizeof r);
}

static void synth_call(struct synth *w, uint64_t t)
{
    struct obs_rec_call r;
    memset(&r, 0, sizeof r);
    r.type = OBS_REC_CALL;
    r.api = 1;
    r.t_begin = t;
    r.t_dur = 100;
    synth_add(w, &r, sizeof r);
}

/* Damage that is cheap to write and was expensive to read: deep nesting,
 * as many generations and phases as ranges, calls at random times among
 * phase records. Each: every command within 30 s and RLIMIT_AS. */
static void test_worst_cases(const char *fixture)
{
    int limit_memory = memory_limit != LIMIT_NONE, set_rlimit = memory_limit == LIMIT_RLIMIT;
    static const char *const names[] = {"100 000 nested BEGINs", "20 000 generations x 20 000 phases",
                                        "50 000 calls at random times among 50 000 BEGIN/END"};
    size_t flen, k;
    char *fx = test_read_file(fixture, &flen);
    char path[4300];
    struct rlimit old, lim;

    if (fx == NULL || flen < sizeof(struct obs_file_header))
        bail("cannot read %s", fixture);
    getrlimit(RLIMIT_AS, &old);
    lim = old;
    lim.rlim_cur = old.rlim_max != RLIM_INFINITY && old.rlim_max < (512ull << 20) ? old.rlim_max : 512ull << 20;
    snprintf(path, sizeof path, "%s/worst.obs", workdir);
    for (k = 0; k < 3; k++) {
        struct synth w = {NULL, 0, 0};
        struct obs_chunk_header ch;
        size_t i, payload;
        unsigned crashes = 0;
        char label[128];
        synth_add(&w, fx, sizeof(struct obs_file_header));
        memset(&ch, 0, sizeof ch);
        synth_add(&w, &ch, sizeof ch); /* filled in below */
        rng_state = 0x5eed0000u + k;
        for (i = 0; i < (k == 0 ? 100000u : k == 1 ? 20000u : 50000u); i++) {
            if (k == 0) {
                synth_phase(&w, OBS_PHASE_BEGIN, 1, 0, 1000 + i, 0, 0);
            } else if (k == 1) {
                synth_phase(&w, OBS_PHASE_BEGIN, 1 + i % 65000, (uint32_t)i, 1000 + 3 * i, 0, 0);
                synth_call(&w, 1001 + 3 * i);
                synth_phase(&w, OBS_PHASE_END, 1 + i % 65000, (uint32_t)i, 1002 + 3 * i, 0, 0);
            } else {
                synth_call(&w, rng() >> 24);
                synth_phase(&w, i % 2 ? OBS_PHASE_END : OBS_PHASE_BEGIN, 1, 0, 1000 + i, 0, 0);
            }
        }
        payload = w.len - sizeof(struct obs_file_header) - sizeof ch;
        ch.magic = OBS_CHUNK_MAGIC;
        ch.type = OBS_CHUNK_RECORDS;
        ch.tid = 7;
        ch.payload_bytes = (uint32_t)payload;
        memcpy(w.d + sizeof(struct obs_file_header), &ch, sizeof ch);
        test_write_file(path, w.d, w.len);
        free(w.d);
        snprintf(label, sizeof label, "%s (%zu bytes)%s", names[k], w.len,
                 set_rlimit ? ", RLIMIT_AS 512 MB" : limit_memory ? ", allocations capped at 512 MB (ASan)" : "");
        if (set_rlimit && setrlimit(RLIMIT_AS, &lim) != 0)
            bail("setrlimit");
        check_all(label, path, fixture, limit_memory, &crashes);
        if (set_rlimit)
            setrlimit(RLIMIT_AS, &old);
    }
    free(fx);
}

int main(void)
{
    struct source sources[3];
    size_t nsources = 0, i;
    const char *scale_env = getenv("OBS_MUTATE_SCALE"), *rlimit_env = getenv("OBS_MUTATE_RLIMIT");
    const char *sanitizer = getenv("OBS_SANITIZE");
    unsigned scale = scale_env && atoi(scale_env) > 0 ? (unsigned)atoi(scale_env) : 1;
    unsigned crashes = 0, bad = 0, total = 0;
    char outdir[4300];

    report = getenv("OBS_REPORT");
    if (report == NULL || *report == '\0')
        report = strdup(test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        skip_all("%s not built", report);
    workdir = test_tmpdir();
    snprintf(outdir, sizeof outdir, "%s/out", workdir);
    if (mkdir(outdir, 0700) != 0)
        bail("cannot create %s", outdir);
    plan_lazy();
    if (rlimit_env && strcmp(rlimit_env, "0") == 0) {
        memory_limit = LIMIT_NONE;
    } else if (sanitizer && strcmp(sanitizer, "asan") == 0) {
        const char *o = getenv("ASAN_OPTIONS");
        char opts[4400];
        snprintf(opts, sizeof opts, "%s%smax_allocation_size_mb=512:allocator_may_return_null=1", o ? o : "",
                 o && *o ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        memory_limit = LIMIT_ASAN;
    } else if (sanitizer && *sanitizer) {
        memory_limit = LIMIT_NONE; /* TSan: its shadow, like ASan's, rules out RLIMIT_AS */
    }

    sources[nsources].label = "workload";
    sources[nsources].mutations = 200 * scale;
    if (workload_trace(&sources[nsources]) == 0)
        nsources++;
    else
        skip("reference workload trace: not available (see the diag above)");
    sources[nsources].label = "threads+graph app";
    sources[nsources].mutations = 130 * scale;
    if (threads_trace(&sources[nsources]) == 0)
        nsources++;
    else
        skip("threads and graph app trace: not available (see the diag above)");
    sources[nsources].label = "fixture";
    sources[nsources].mutations = 70 * scale;
    if (fixture_trace(&sources[nsources]) != 0)
        bail("cannot write the fixture");
    nsources++;

    for (i = 0; i < nsources; i++) {
        unsigned c;
        /* the undamaged trace itself: every command exits 0 */
        unsigned dummy = 0;
        check_all(sources[i].label, sources[i].path, sources[i].path, 0, &dummy);
        c = mutate_source(&sources[i], &bad);
        diag("%s: %u of %u mutations crashed a command (a signal)", sources[i].label, c, sources[i].mutations);
        crashes += c;
        total += sources[i].mutations;
    }
    ok(crashes == 0, "no mutation crashed a command (%u of %u did; %u handled wrongly)", crashes, total, bad);

    if (memory_limit == LIMIT_NONE)
        skip("bounded-memory checks: %s", sanitizer && *sanitizer ? "under TSan" : "OBS_MUTATE_RLIMIT=0");
    else
        for (i = 0; i < nsources; i++)
            test_bounded_memory(&sources[i]);
    test_worst_cases(sources[nsources - 1].path);
    return 0;
}
