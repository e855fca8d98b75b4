/* Chrome trace JSON (the format Perfetto and chrome://tracing open) from a
 * trace:
 *   {"traceEvents":[...], "displayTimeUnit":"ns", "otherData":{...}}
 * ts/dur are microseconds relative to the trace's earliest timestamp, with
 * three decimals so that nanoseconds survive. Tracks:
 *   - one per host thread (pid = the process, tid = the thread): an X slice
 *     per API call, cat = its kind, name = the kernel name or the API name,
 *     args = seq, api (when the name is a kernel's), status (when not 0),
 *     stream, grid/block/shmem, bytes (graph launches: nodes), direction,
 *     nested, phase/step;
 *   - one per GPU stream with GPU time (tid OBS_JSON_GPU_TID_BASE + n,
 *     named "GPU stream <id>"): an X slice per kernel/copy/memset/graph, and
 *     a flow (s on the launch, f with "bp":"e" on the device slice, id = seq);
 *   - per host thread with phase ranges, a phase track (tid
 *     OBS_JSON_PHASE_TID_BASE + the thread's index, named "phases: <thread>"):
 *     an X slice per range (cat "phase", name = the full range name such as
 *     "DECODE/STEP_3", args phase/step/generation), nested as the ranges are
 *     (DECODE/STEADY > DECODE/STEP_k > KV_GATHER); ranges from RELABEL records
 *     span the calls they label, and a BEGIN/END range all of whose calls a
 *     RELABEL took is left out;
 *   - a "records" counter (C events, arg "lost") when records were lost.
 * Slices on one track always nest: overlapping ones are clamped. otherData
 * holds the file's facts, each kernel's demangled and mangled names once,
 * and the meta key/values. */
#ifndef OBS_TRACE_JSON_H
#define OBS_TRACE_JSON_H

#include <stdio.h>

#include "trace_reader.h"

#define OBS_JSON_GPU_TID_BASE 1000000000u
#define OBS_JSON_PHASE_TID_BASE 900000000u

struct obs_json_options {
    int no_args; /* leave "args" out of slices (smaller files) */
};

/* opt may be NULL. Returns 0, or -1 with errno set when writing failed. */
int obs_report_json(const struct obs_trace *t, FILE *out, const struct obs_json_options *opt);

#endif
