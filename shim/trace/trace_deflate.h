/* zlib for the exports, where configure found it (HAVE_ZLIB): deflated
 * packet runs in a .pftrace (trace_perfetto.h), .json.gz from obs-report.
 * Without zlib the functions say so and the callers write uncompressed or
 * refuse with one message. */
#ifndef OBS_TRACE_DEFLATE_H
#define OBS_TRACE_DEFLATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1 when built with zlib. */
int obs_deflate_available(void);

/* src deflated in the zlib format into dst (*dst_len: its room, then the
 * length written). Returns 0, or -1 (no zlib, no room). Level 3: on these
 * packets it is as fast as level 1 and a third smaller. */
int obs_deflate(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len);

/* A FILE that writes what it is given gzip-compressed into raw; closing it
 * finishes the stream and closes raw (its result is fclose's: 0, or EOF
 * with errno set). NULL with errno set (ENOSYS without zlib). */
FILE *obs_gzip_fopen(FILE *raw);

#endif
