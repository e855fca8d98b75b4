/* Writing .obs trace files (format: trace_format.h, docs/trace-format.md).
 *
 * Called by the shim's recorder, possibly from a signal handler at exit, so
 * these functions use write(2)/writev(2) only: no malloc, no stdio, no locks.
 * Each chunk (header and payload) goes out in one writev where the kernel
 * takes it whole, so appenders on an O_APPEND descriptor never interleave
 * inside a chunk; partial writes and EINTR are retried. errno is preserved.
 * All return 0 or -errno (-EINVAL for arguments that cannot be encoded). */
#ifndef OBS_TRACE_WRITER_H
#define OBS_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

/* Records per RECORDS chunk at most; longer runs are split into several
 * chunks (with consecutive first_index), which readers cannot tell apart. */
#define OBS_WRITER_MAX_CHUNK_RECORDS (1u << 22)

void obs_trace_init_header(struct obs_file_header *h, uint32_t pid, uint32_t flags,
                           uint64_t start_mono_ns, uint64_t start_real_ns);
int obs_trace_write_header(int fd, const struct obs_file_header *h);

/* One RECORDS chunk: n records made by thread tid, the first of which has
 * per-thread index first_index (the thread's count of records before it). */
int obs_trace_write_records(int fd, uint32_t tid, uint64_t first_index, const union obs_record *recs,
                            uint32_t n);

/* One STRINGS chunk holding one entry (kind: enum obs_string_kind). text
 * needs no NUL; len bytes are stored, padded to 8 with NULs. */
int obs_trace_write_string(int fd, uint32_t id, uint32_t kind, const char *text, uint32_t len);

/* Several string-table entries in one STRINGS chunk: entries holds bytes of
 * entries made with obs_string_entry_encode (one write instead of one per
 * name). */
int obs_trace_write_strings(int fd, const void *entries, uint32_t bytes);

/* Encode one entry (header, text, padding to 8) at out; returns the bytes
 * used, or 0 when it does not fit in cap. */
uint32_t obs_string_entry_encode(void *out, uint32_t cap, uint32_t id, uint32_t kind, const char *text, uint32_t len);

/* One META chunk: "key=value\n" lines, padded to 8 with NULs. */
int obs_trace_write_meta(int fd, const char *text, size_t len);

/* Frame a window (docs/trace-format.md, "Windows"): the RECORDS chunk
 * header of n record slots of thread tid whose first slot is at file offset
 * records_at (its header in the 24 bytes before), and, when the file's
 * content ends before that header (at end), a PAD chunk filling the gap,
 * which must then be 24 bytes or more. Written with pwrite(2) at those
 * offsets (the descriptor's position is left alone); the slots themselves
 * are not written. */
int obs_trace_frame_window(int fd, uint64_t end, uint64_t records_at, uint32_t tid, uint64_t first_index,
                           uint32_t n);

/* A framed window of n slots at records_at, of which the first keep hold
 * records: its chunk shrunk to them, and the slots after them made a PAD
 * chunk (keep < n; the slots' bytes are left as they are). The PAD's
 * header is written first, then the window's payload_bytes (4 bytes), so
 * that a kill in between leaves a readable file either way. */
int obs_trace_shrink_window(int fd, uint64_t records_at, uint32_t n, uint32_t keep);

/* n records (n <= 8) into a framed window's slots at file offset at, with
 * pwrite(2), so that a process killed in the middle leaves each slot whole
 * or of kind 0 (never written): first the slots with their first 8 bytes
 * (the kind) zero, then whole. */
int obs_trace_write_slots(int fd, uint64_t at, const union obs_record *recs, uint32_t n);

#endif
