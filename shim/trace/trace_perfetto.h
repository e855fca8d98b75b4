/* A native Perfetto trace (.pftrace: a perfetto.protos.Trace, protobuf)
 * from a trace, the same timeline as the JSON (trace_json.h) at a fraction
 * of its size, so that the Perfetto UI opens long runs:
 *   - track descriptors: the process; a thread track per host thread
 *     (pid, tid, name); a track per GPU stream with GPU time ("GPU stream
 *     <id>"); a phase track per thread with phase ranges ("phases:
 *     <thread>"); a "records lost" counter track when records were lost;
 *   - one packet sequence per track that has events, whose first packets
 *     set its default track and a sequence-scoped incremental clock (each
 *     timestamp is the delta from the previous one), so an event is a
 *     TYPE_SLICE_BEGIN or _END with a small timestamp and, on BEGIN, an
 *     interned name (InternedData.event_names, sent once per sequence);
 *   - host slices: one per API call (name: the kernel's demangled name, or
 *     the API's), nested as the calls are (overlaps clamped, as the JSON);
 *     device slices: one per call with GPU time on its stream's track, in
 *     device order, never overlapping; a flow from each launch slice to its
 *     device slice (flow_ids_old on the launch, terminating_flow_ids_old on
 *     the device slice: the varint forms, 5 bytes where flow_ids takes 10;
 *     id = the call's seq + 1);
 *   - phase slices as the JSON draws them (trace_phase_slices.h);
 *   - a serving loop's iterations (trace_serving.h): per thread with
 *     ITERATION ranges an "iterations: <thread>" track, one slice per
 *     iteration over its host span named after its kind (decode, mixed,
 *     prompt, unknown) with an "iteration" annotation, and where they have
 *     GPU spans an "iterations on the GPU: <thread>" track of those;
 *   - timestamps: CLOCK_MONOTONIC ns, declared as the trace's clock.
 * Field numbers are Perfetto's own (protos/perfetto/trace/); tests decode
 * the output with protoc against those messages (tests/perfetto/). */
#ifndef OBS_TRACE_PERFETTO_H
#define OBS_TRACE_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

/* What was written, for tests and messages. */
struct obs_perfetto_counts {
    uint64_t packets, bytes; /* packets before compression; bytes written */
    uint64_t compressed_runs;
    uint64_t host_slices, gpu_slices, flows, phase_slices, counter_events, iteration_slices;
    uint64_t tracks;
};

/* compress: NULL writes the packets as they are; else the packets go out in
 * runs of at most OBS_PERFETTO_RUN_BYTES, each run deflated (zlib format)
 * into one TracePacket.compressed_packets, as Perfetto's own service does:
 * compress(dst, &dst_len, src, src_len) with dst_len the room in dst
 * (OBS_PERFETTO_RUN_BYTES + 1024) returns 0 and sets dst_len, or -1 (the
 * run is then written uncompressed). obs_deflate (trace_deflate.h) is the
 * one to give where obs_deflate_available(). */
#define OBS_PERFETTO_RUN_BYTES (448u * 1024u)
struct obs_perfetto_options {
    int (*compress)(uint8_t *dst, size_t *dst_len, const uint8_t *src, size_t src_len);
    /* 1: compress and write on a thread of its own while the packets are
     * built (trace_run_pipe.h; obs-report). 0: all on the caller's thread
     * (the shim at exit starts no thread in the program). Same bytes. */
    int threaded;
};

/* opt and counts may be NULL. Returns 0, or -1 with errno set when writing
 * failed or memory ran out. */
int obs_report_perfetto(const struct obs_trace *t, FILE *out, const struct obs_perfetto_options *opt,
                        struct obs_perfetto_counts *counts);

/* The trace's clock for a writer of packets (this one, trace_ranks_perfetto.c):
 * a TracePacket.clock_snapshot field appended at p, CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME (read as the same) both at ts, monotonic the primary
 * clock. msg and sub: scratch room for the nested messages (64 bytes do).
 * Returns the end. */
uint8_t *obs_perfetto_clock_snapshot(uint8_t *p, uint8_t *msg, uint8_t *sub, uint64_t ts);

#endif
