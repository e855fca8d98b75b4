/* The trace file of this process: created on the first record (so a
 * process that makes no CUDA/HIP call leaves no file), grown under the
 * output lock a chunk or a window at a time (a window: record slots that a
 * thread maps and stores into, docs/trace-format.md "Windows"), closed and
 * post-processed (timeline, summary) at exit. A failed write is undone (the
 * file is cut back to the last complete chunk) so that later chunks stay
 * readable; its records are counted lost. */
#ifndef OBS_OUTPUT_H
#define OBS_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"
#include "out_lock.h"
#include "trace/trace.h"

/* Every OBS_SAMPLE_PERIOD-th call of a thread takes two extra timestamps to
 * measure the shim's own cost (SELF_COST records); the trace's meta says so. */
#define OBS_SAMPLE_PERIOD 64u

enum obs_output_status {
    OBS_OUTPUT_NOT_OPEN = 0, /* no record yet */
    OBS_OUTPUT_OPEN,
    OBS_OUTPUT_FAILED,       /* could not be created: recording disabled */
    OBS_OUTPUT_CLOSED        /* finished (exit or signal) */
};

struct obs_output {
    struct obs_out_lock lock; /* guards everything below and the thread registry */
    int fd;
    enum obs_output_status status;
    unsigned long long dev, ino;      /* what fd must still be (the app may close it) */
    char prefix[OBS_OUTPUT_MAX + 32]; /* the expanded prefix in use */
    uint64_t chunks_failed;            /* writes that failed (disk full ...) */
    long pid;                          /* the process that created the file */
};
extern struct obs_output obs_out;

/* The trace's start: CLOCK_MONOTONIC and CLOCK_REALTIME now, kept for the
 * file header. Called at start-up and in a forked child. */
void obs_output_mark_start(void);

/* fn runs (under the lock) each time the trace file has been created: the
 * library installs its closing signal handlers then. Set at start-up. */
void obs_output_set_on_open(void (*fn)(void));

/* Set at start-up: %h and %q{} substituted (output_path.h). */
void obs_output_set_pattern(const char *prepared);

/* Under the lock: create the file unless done already. True when open. A
 * failure warns once and leaves status FAILED. */
bool obs_output_ensure_open_locked(void);

/* Under the lock: one RECORDS chunk. 0 or -errno (then nothing of it
 * remains in the file). Warns once per process on failure. */
int obs_output_write_records_locked(uint32_t tid, uint64_t first_index, const union obs_record *recs,
                                    uint32_t n);
/* Under the lock: one string-table entry. 0 or -errno. */
int obs_output_write_string_locked(uint32_t id, uint32_t kind, const char *text, size_t len);
/* Pre-encoded string-table entries (obs_string_entry_encode) as one chunk. */
int obs_output_write_strings_locked(const void *entries, uint32_t bytes);

/* Under the lock: one META chunk of "key=value\n" lines (a later value of
 * a key wins over the header's). 0 or -errno. */
int obs_output_write_meta_locked(const char *text, size_t len);

/* The page size windows are mapped in (sysconf, read once). */
size_t obs_output_page_size(void);

/* Under the lock: a window of n record slots for thread tid (first slot
 * index first_index) at the file's end, its slots from a page boundary
 * (*at), framed by a RECORDS chunk header (and a PAD chunk before it), the
 * disk blocks under it allocated first, so that a store through the
 * mapping never needs a block the file system has not got (that would be
 * SIGBUS), then mapped over [addr, addr + map_bytes) (MAP_SHARED |
 * MAP_FIXED). 0 or -errno; on failure the file is as it was, and what was
 * at addr may be gone (the caller puts memory back). Warns once per
 * process. */
int obs_output_map_window_locked(uint32_t tid, uint64_t first_index, uint32_t n, void *addr, size_t map_bytes,
                                 uint64_t *at);

/* Under the lock: n records (n <= 8) into window slots at file offset at
 * (obs_trace_write_slots: a kill in the middle leaves each whole or of
 * kind 0). 0 or -errno. */
int obs_output_write_slots_locked(uint64_t at, const union obs_record *recs, uint32_t n);

/* Under the lock: a window closed for good (no mapping of it left) with
 * its first keep of n slots used: the file keeps only those; the rest is
 * cut off the file when the window ends it, else made a PAD chunk whose
 * blocks are given back. */
void obs_output_shrink_window_locked(uint64_t at, uint32_t n, uint32_t keep);

/* Under the lock: give back the disk blocks of the whole pages inside
 * [from, to) of the file (a window's slots that will never be written);
 * nothing where the file system cannot. */
void obs_output_release_space_locked(uint64_t from, uint64_t to);

/* Under the lock: close the file (status CLOSED). True when one was open. */
bool obs_output_close_locked(void);

/* After close, outside any signal handler (or in the child the stop
 * signals' handler forks): write the timeline and the summary (unless
 * turned off), then one "obsshim: wrote ..." line, prefixed "how: " when
 * how is not NULL ("SIGTERM: wrote ..."). */
void obs_output_postprocess(const char *how);

/* Signal or _exit path after close: one line saying what was written
 * ("SIGTERM: wrote ..."). */
void obs_output_report_ending(const char *how);

/* True when the trace file is open and this process created it (false in a
 * vfork child, which shares the parent's memory and so its buffers). */
bool obs_output_open_here(void);

/* Fork child: the inherited file belongs to the parent. */
void obs_output_fork_child(void);

#endif
