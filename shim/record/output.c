/* The trace file of this process: see output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "clock.h"
#include "common/common.h"
#include "trace/trace.h"

OBS_HIDDEN struct obs_output obs_out = {.fd = -1};

static uint64_t start_mono_ns, start_real_ns; /* the trace header's start */
static void (*on_open)(void);

void obs_output_mark_start(void)
{
    start_mono_ns = obs_now_ns();
    start_real_ns = obs_realtime_ns();
}

void obs_output_set_on_open(void (*fn)(void))
{
    on_open = fn;
}

static char output_pattern[OBS_OUTPUT_MAX];
static atomic_int warned_write;

/* Keep the descriptor out of the low numbers an app opens, dup2()s onto or
 * closes in a loop; the first free one from here up. */
#define OBS_TRACE_FD_MIN 512

static int move_fd_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, OBS_TRACE_FD_MIN);
    if (high < 0)
        return fd; /* no room up there (RLIMIT_NOFILE): keep it where it is */
    close(fd);
    return high;
}

/* Does obs_out.fd still name our file? An app that closes every descriptor
 * (daemons do) may have put one of its own files at that number: then
 * writing would corrupt the app's file. And is the file still there? When
 * it was deleted (its directory removed during the run), what was written
 * is gone and whatever follows would only fill the disk until exit:
 * recording stops, with one warning, and no "wrote" line at exit. */
static bool fd_is_ours(void)
{
    struct stat st;
    if (fstat(obs_out.fd, &st) == 0 && (unsigned long long)st.st_dev == obs_out.dev &&
        (unsigned long long)st.st_ino == obs_out.ino) {
        if (st.st_nlink > 0)
            return true;
        obs_log_signal_safe("warning: ", obs_out.prefix, OBS_TRACE_SUFFIX,
                            " was deleted while the program ran (its directory removed?); the records written "
                            "to it are gone and nothing more is recorded",
                            (char *)NULL);
        close(obs_out.fd);
        obs_out.fd = -1;
        obs_out.status = OBS_OUTPUT_CLOSED; /* the recorder stops recording */
        return false;
    }
    obs_log_signal_safe("warning: the descriptor of ", obs_out.prefix, OBS_TRACE_SUFFIX,
                        " was closed by the program; nothing more is written to it", (char *)NULL);
    obs_out.fd = -1; /* not ours to close */
    obs_out.status = OBS_OUTPUT_CLOSED;
    return false;
}

/* A write past RLIMIT_FSIZE raises SIGXFSZ, whose default action kills the
 * process: each of our writes (and the exit-time JSON and summary, which
 * may also meet a closed stderr pipe) runs under obs_write_guard (log.h),
 * so that it fails with EFBIG (EPIPE) instead, as on a full disk. */

void obs_output_set_pattern(const char *prepared)
{
    snprintf(output_pattern, sizeof output_pattern, "%s", prepared);
}

/* "key=value\n" for the META chunk; newlines in value become spaces. */
static size_t meta_add(char *buf, size_t len, size_t cap, const char *key, const char *value)
{
    size_t i;
    int n = snprintf(buf + len, cap - len, "%s=", key);
    if (n < 0 || (size_t)n >= cap - len)
        return len;
    len += (size_t)n;
    for (i = 0; value[i] != '\0' && len + 2 < cap; i++)
        buf[len++] = (value[i] == '\n' || value[i] == '\r') ? ' ' : value[i];
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

/* The command line, arguments separated by spaces. */
static void read_cmdline(char *out, size_t outlen)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, outlen - 1) : -1;
    ssize_t i;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        out[0] = '\0';
        return;
    }
    while (n > 0 && out[n - 1] == '\0')
        n--;
    for (i = 0; i < n; i++)
        if (out[i] == '\0')
            out[i] = ' ';
    out[n] = '\0';
}

/* The kernel's boot id: traces with the same one share CLOCK_MONOTONIC
 * (obs-report merge aligns them on it). "" when unreadable. */
static void read_boot_id(char *buf, size_t len)
{
    ssize_t n = -1;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, buf, len - 1);
        close(fd);
    }
    if (n < 0)
        n = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
}

/* The process's rank as the usual launchers export it (torchrun, Open MPI,
 * MPICH/PMI, PMIx, Slurm), for obs-report merge; NULL when none is set or
 * the value is not a plain number. */
static const char *launcher_rank(void)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    size_t i;
    for (i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && v[0] != '\0' && v[strspn(v, "0123456789")] == '\0' && strlen(v) < 12)
            return v;
    }
    return NULL;
}

static int write_meta(int fd)
{
    char meta[8192], value[4096];
    size_t len = 0;

    meta[0] = '\0';
    if (gethostname(value, sizeof value) != 0)
        value[0] = '\0';
    value[sizeof value - 1] = '\0';
    len = meta_add(meta, len, sizeof meta, "host", value);
    snprintf(value, sizeof value, "%ld", (long)getpid());
    len = meta_add(meta, len, sizeof meta, "pid", value);
    snprintf(value, sizeof value, "%ld", (long)getppid());
    len = meta_add(meta, len, sizeof meta, "ppid", value);
    {
        ssize_t n = readlink("/proc/self/exe", value, sizeof value - 1);
        value[n > 0 ? n : 0] = '\0';
    }
    len = meta_add(meta, len, sizeof meta, "exe", value);
    read_cmdline(value, sizeof value);
    len = meta_add(meta, len, sizeof meta, "cmdline", value);
#ifdef PACKAGE_VERSION
    len = meta_add(meta, len, sizeof meta, "shim_version", PACKAGE_VERSION);
#endif
    len = meta_add(meta, len, sizeof meta, "output", obs_cfg.output);
    len = meta_add(meta, len, sizeof meta, "gpu_time", obs_gpu_time_mode_name(obs_cfg.gpu_time));
    snprintf(value, sizeof value, "%u", obs_cfg.buffer_records);
    len = meta_add(meta, len, sizeof meta, "buffer_records", value);
    /* records go into the file as they are made (docs/trace-format.md, "Windows"): a trace with no end mark
     * misses only the call each thread was in */
    len = meta_add(meta, len, sizeof meta, "record_windows", "1");
    snprintf(value, sizeof value, "%u", OBS_SAMPLE_PERIOD);
    len = meta_add(meta, len, sizeof meta, "self_cost_sample_period", value);
    len = meta_add(meta, len, sizeof meta, "clock", obs_clock_source_name(obs_clock_source()));
    read_boot_id(value, sizeof value);
    len = meta_add(meta, len, sizeof meta, "boot_id", value);
    {
        const char *rank = launcher_rank();
        if (rank != NULL)
            len = meta_add(meta, len, sizeof meta, "rank", rank);
    }
    return obs_trace_write_meta(fd, meta, len);
}

static int write_preamble(int fd)
{
    struct obs_file_header h;
    uint32_t flags = obs_cfg.gpu_time == OBS_GPU_TIME_STEPS ? OBS_FILE_GPU_STEPS
                     : obs_cfg.gpu_time != OBS_GPU_TIME_OFF ? OBS_FILE_GPU_TIME
                                                            : 0;
    int rc;
    obs_trace_init_header(&h, (uint32_t)getpid(), flags, start_mono_ns, start_real_ns);
    rc = obs_trace_write_header(fd, &h);
    return rc != 0 ? rc : write_meta(fd);
}

/* The timeline's suffix when it is written beside the .obs (whose prefix
 * must leave that name free too), else NULL. */
static const char *timeline_suffix(void)
{
    if (obs_cfg.trace_export == OBS_TRACE_NONE || obs_cfg.trace_device[0] != '\0')
        return NULL;
    return obs_cfg.trace_export == OBS_TRACE_PERFETTO ? OBS_PFTRACE_SUFFIX : OBS_JSON_SUFFIX;
}

bool obs_output_ensure_open_locked(void)
{
    int renamed = 0, fd, rc;
    char taken[sizeof obs_out.prefix + 16];
    const char *timeline = timeline_suffix();

    if (obs_out.status != OBS_OUTPUT_NOT_OPEN)
        return obs_out.status == OBS_OUTPUT_OPEN;
    fd = obs_output_create(output_pattern, (unsigned long)getpid(), timeline, obs_out.prefix,
                           sizeof obs_out.prefix, &renamed, taken, sizeof taken);
    if (fd < 0) {
        obs_log_warn("cannot create %s%s: %s; nothing is recorded in this process",
                     obs_out.prefix, OBS_TRACE_SUFFIX, strerror(-fd));
        obs_out.status = OBS_OUTPUT_FAILED;
        return false;
    }
    if (renamed && timeline != NULL)
        obs_log_warn("%s exists; writing %s%s and %s%s instead", taken, obs_out.prefix, OBS_TRACE_SUFFIX,
                     obs_out.prefix, timeline);
    else if (renamed)
        obs_log_warn("%s exists; writing %s%s instead", taken, obs_out.prefix, OBS_TRACE_SUFFIX);
    {
        struct obs_write_guard g;
        obs_write_guard_begin(&g);
        rc = write_preamble(fd);
        obs_write_guard_end(&g);
    }
    if (rc != 0) {
        char path[sizeof obs_out.prefix + 8];
        snprintf(path, sizeof path, "%s%s", obs_out.prefix, OBS_TRACE_SUFFIX);
        obs_log_warn("cannot write %s: %s; nothing is recorded in this process", path, strerror(-rc));
        close(fd);
        unlink(path);
        obs_out.status = OBS_OUTPUT_FAILED;
        return false;
    }
    fd = move_fd_high(fd);
    {
        struct stat st;
        if (fstat(fd, &st) == 0) {
            obs_out.dev = (unsigned long long)st.st_dev;
            obs_out.ino = (unsigned long long)st.st_ino;
        }
    }
    obs_out.fd = fd;
    obs_out.pid = (long)getpid();
    obs_out.status = OBS_OUTPUT_OPEN;
    if (on_open != NULL)
        on_open();
    OBS_DEBUG_LOG(OUTPUT, 1, "created %s%s (O_EXCL%s), descriptor %d", obs_out.prefix, OBS_TRACE_SUFFIX,
                  renamed ? ", name taken: numbered" : "", fd);
    return true;
}

/* Cut the file back to where a failed chunk began, so that what follows
 * stays readable. */
static void undo_partial_write(off_t before, int err)
{
    if (before >= 0) {
        if (ftruncate(obs_out.fd, before) != 0 || lseek(obs_out.fd, before, SEEK_SET) != before) {
            /* Cannot repair: stop writing rather than leave chunks unreadable. */
            close(obs_out.fd);
            obs_out.fd = -1;
            obs_out.status = OBS_OUTPUT_CLOSED;
        }
    }
    obs_out.chunks_failed++;
    obs_log_warn_once(&warned_write, "writing %s%s: %s; records that cannot be written are counted as lost",
                      obs_out.prefix, OBS_TRACE_SUFFIX, strerror(-err));
}

int obs_output_write_records_locked(uint32_t tid, uint64_t first_index, const union obs_record *recs,
                                    uint32_t n)
{
    struct obs_write_guard g;
    off_t before;
    int rc;
    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    before = lseek(obs_out.fd, 0, SEEK_CUR);
    obs_write_guard_begin(&g);
    rc = obs_trace_write_records(obs_out.fd, tid, first_index, recs, n);
    obs_write_guard_end(&g);
    if (rc != 0)
        undo_partial_write(before, rc);
    return rc;
}

int obs_output_write_string_locked(uint32_t id, uint32_t kind, const char *text, size_t len)
{
    struct obs_write_guard g;
    off_t before;
    int rc;
    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    if (len > UINT32_MAX)
        return -EINVAL;
    before = lseek(obs_out.fd, 0, SEEK_CUR);
    obs_write_guard_begin(&g);
    rc = obs_trace_write_string(obs_out.fd, id, kind, text, (uint32_t)len);
    obs_write_guard_end(&g);
    if (rc != 0)
        undo_partial_write(before, rc);
    return rc;
}

int obs_output_write_strings_locked(const void *entries, uint32_t bytes)
{
    struct obs_write_guard g;
    off_t before;
    int rc;
    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    before = lseek(obs_out.fd, 0, SEEK_CUR);
    obs_write_guard_begin(&g);
    rc = obs_trace_write_strings(obs_out.fd, entries, bytes);
    obs_write_guard_end(&g);
    if (rc != 0)
        undo_partial_write(before, rc);
    return rc;
}

size_t obs_output_page_size(void)
{
    static _Atomic size_t page; /* any thread's first window may ask first */
    size_t p = atomic_load_explicit(&page, memory_order_relaxed);
    if (p == 0) {
        long v = sysconf(_SC_PAGESIZE);
        p = v > 0 ? (size_t)v : 4096;
        atomic_store_explicit(&page, p, memory_order_relaxed);
    }
    return p;
}

int obs_output_map_window_locked(uint32_t tid, uint64_t first_index, uint32_t n, void *addr, size_t map_bytes,
                                 uint64_t *at)
{
    const uint64_t header = sizeof(struct obs_chunk_header), page = obs_output_page_size();
    struct obs_write_guard g;
    off_t pos;
    uint64_t end, records, file_end;
    int rc;

    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    pos = lseek(obs_out.fd, 0, SEEK_CUR);
    if (pos < 0)
        return -errno;
    end = (uint64_t)pos;
    records = (end + header + page - 1) / page * page;
    if (records - header > end && records - header - end < header)
        records += page; /* no room for a PAD chunk's header in the gap: the next page */
    file_end = records + (uint64_t)n * OBS_RECORD_SIZE;
    obs_write_guard_begin(&g); /* past RLIMIT_FSIZE: EFBIG, not SIGXFSZ */
    /* Blocks first, then the frame: a kill in between leaves zeros at the
     * end of the file, which readers take for space never framed. */
    rc = posix_fallocate(obs_out.fd, (off_t)end, (off_t)(file_end - end));
    rc = rc != 0 ? -rc : obs_trace_frame_window(obs_out.fd, end, records, tid, first_index, n);
    obs_write_guard_end(&g);
    if (rc == 0 && mmap(addr, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, obs_out.fd,
                        (off_t)records) == MAP_FAILED)
        rc = -errno;
    if (rc == 0 && lseek(obs_out.fd, (off_t)file_end, SEEK_SET) != (off_t)file_end)
        rc = -errno; /* cannot happen on a regular file */
#ifdef MADV_POPULATE_WRITE
    /* Fault the pages in now, writable, all at once (Linux 5.14 and
     * later; elsewhere the first store into each page does, one fault per
     * 85 records on the per-call path). */
    if (rc == 0)
        (void)madvise(addr, (size_t)((uint64_t)n * OBS_RECORD_SIZE + page - 1) / page * page, MADV_POPULATE_WRITE);
#endif
    if (rc != 0) {
        undo_partial_write(pos, rc);
        return rc;
    }
    OBS_DEBUG_LOG(OUTPUT, 3, "thread %u: a window of %u slots at %llu, indexes %llu..", tid, n,
                  (unsigned long long)records, (unsigned long long)first_index);
    *at = records;
    return 0;
}

int obs_output_write_slots_locked(uint64_t at, const union obs_record *recs, uint32_t n)
{
    struct obs_write_guard g;
    int rc;
    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    obs_write_guard_begin(&g);
    rc = obs_trace_write_slots(obs_out.fd, at, recs, n);
    obs_write_guard_end(&g);
    return rc;
}

void obs_output_shrink_window_locked(uint64_t at, uint32_t n, uint32_t keep)
{
    uint64_t keep_end = at + (uint64_t)keep * OBS_RECORD_SIZE, end = at + (uint64_t)n * OBS_RECORD_SIZE;
    off_t pos;
    struct obs_write_guard g;
    int rc;

    if (keep >= n || obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return;
    pos = lseek(obs_out.fd, 0, SEEK_CUR);
    obs_write_guard_begin(&g);
    rc = obs_trace_shrink_window(obs_out.fd, at, n, keep);
    obs_write_guard_end(&g);
    if (rc != 0)
        return; /* the window stays as it was: its unwritten slots read as nothing */
    if (pos >= 0 && (uint64_t)pos == end && ftruncate(obs_out.fd, (off_t)keep_end) == 0) {
        lseek(obs_out.fd, (off_t)keep_end, SEEK_SET); /* the window ended the file: it ends where its records do */
        return;
    }
    obs_output_release_space_locked(keep_end + sizeof(struct obs_chunk_header), end);
}

void obs_output_release_space_locked(uint64_t from, uint64_t to)
{
#ifdef FALLOC_FL_PUNCH_HOLE
    const uint64_t page = obs_output_page_size();
    from = (from + page - 1) / page * page;
    to = to / page * page;
    if (obs_out.status == OBS_OUTPUT_OPEN && obs_out.fd >= 0 && to > from)
        (void)fallocate(obs_out.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from));
#else
    (void)from;
    (void)to;
#endif
}

int obs_output_write_meta_locked(const char *text, size_t len)
{
    struct obs_write_guard g;
    off_t before;
    int rc;
    if (obs_out.status != OBS_OUTPUT_OPEN || !fd_is_ours())
        return -EBADF;
    before = lseek(obs_out.fd, 0, SEEK_CUR);
    obs_write_guard_begin(&g);
    rc = obs_trace_write_meta(obs_out.fd, text, len);
    obs_write_guard_end(&g);
    if (rc != 0)
        undo_partial_write(before, rc);
    return rc;
}

bool obs_output_close_locked(void)
{
    bool was_open = obs_out.status == OBS_OUTPUT_OPEN;
    if (obs_out.fd >= 0)
        close(obs_out.fd);
    obs_out.fd = -1;
    if (obs_out.status == OBS_OUTPUT_OPEN)
        obs_out.status = OBS_OUTPUT_CLOSED;
    return was_open;
}

void obs_output_postprocess(const char *how)
{
    char obs_path[sizeof obs_out.prefix + 8], timeline_path[sizeof obs_out.prefix + 16], err[1024];
    int perfetto = obs_cfg.trace_export == OBS_TRACE_PERFETTO, rc;

    snprintf(obs_path, sizeof obs_path, "%s%s", obs_out.prefix, OBS_TRACE_SUFFIX);
    if (obs_cfg.trace_device[0] != '\0') /* OBS_TRACE=KIND:PATH */
        snprintf(timeline_path, sizeof timeline_path, "%s", obs_cfg.trace_device);
    else
        snprintf(timeline_path, sizeof timeline_path, "%s%s", obs_out.prefix,
                 perfetto ? OBS_PFTRACE_SUFFIX : OBS_JSON_SUFFIX);
    if (how == NULL)
        how = "";
    if (obs_cfg.trace_export == OBS_TRACE_NONE && !obs_cfg.summary) { /* nothing to read the trace back for */
        obs_log_info("%s%swrote %s", how, how[0] ? ": " : "", obs_path);
        return;
    }
    err[0] = '\0';
    OBS_DEBUG_LOG(OUTPUT, 1, "exit: reading %s back for the %s%s", obs_path,
                  obs_cfg.trace_export != OBS_TRACE_NONE ? "timeline " : "",
                  obs_cfg.trace_export != OBS_TRACE_NONE ? timeline_path : "summary only");
    {
        struct obs_write_guard g; /* the timeline past a file size limit, the summary to a closed pipe: they fail */
        obs_write_guard_begin(&g);
        rc = obs_trace_postprocess(obs_path, obs_cfg.trace_export != OBS_TRACE_NONE ? timeline_path : NULL,
                                   perfetto ? OBS_TIMELINE_PERFETTO : OBS_TIMELINE_JSON,
                                   obs_cfg.trace_device[0] != '\0', obs_cfg.summary != OBS_SUMMARY_OFF ? STDERR_FILENO : -1,
                                   obs_cfg.summary != OBS_SUMMARY_FULL, err, sizeof err);
        obs_write_guard_end(&g);
    }
    if (rc != 0) {
        /* err already names the file it is about (the trace or the timeline). */
        if (err[0])
            obs_log_warn("%s", err);
        else
            obs_log_warn("%s: post-processing failed", obs_path);
        obs_log_info("%s%swrote %s", how, how[0] ? ": " : "", obs_path);
        return;
    }
    if (obs_cfg.trace_export != OBS_TRACE_NONE)
        obs_log_info("%s%swrote %s %s", how, how[0] ? ": " : "", obs_path, timeline_path);
    else
        obs_log_info("%s%swrote %s", how, how[0] ? ": " : "", obs_path);
}

void obs_output_report_ending(const char *how)
{
    obs_log_signal_safe(how, ": wrote ", obs_out.prefix, OBS_TRACE_SUFFIX,
                        " (no timeline or summary on this path; run obs-report on it)", (char *)NULL);
}

bool obs_output_open_here(void)
{
    return obs_out.status == OBS_OUTPUT_OPEN && obs_out.pid == (long)getpid();
}

void obs_output_fork_child(void)
{
    /* The descriptor is shared with the parent: close our copy only. */
    if (obs_out.fd >= 0)
        close(obs_out.fd);
    obs_out.fd = -1;
    if (obs_out.status == OBS_OUTPUT_OPEN || obs_out.status == OBS_OUTPUT_CLOSED)
        obs_out.status = OBS_OUTPUT_NOT_OPEN;
    obs_out.prefix[0] = '\0';
    obs_out.chunks_failed = 0;
    atomic_store(&warned_write, 0);
    obs_out_lock_reset_child(&obs_out.lock);
}
