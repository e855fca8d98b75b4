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
 * length written). Returns 0, or -1 (no zlib, no room). Level 1: on the
 * packets of a 10 M-call trace it takes a fifth less CPU than level 3 for a
 * file 15 % larger (11.1 bytes per call instead of 9.6): time is what a
 * large trace runs short of. */
int obs_deflate(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len);

/* A FILE that writes what it is given gzip-compressed into raw; closing it
 * finishes the stream and closes raw (its result is fclose's: 0, or EOF
 * with errno set). NULL with errno set (ENOSYS without zlib). */
FILE *obs_gzip_fopen(FILE *raw);

#endif
