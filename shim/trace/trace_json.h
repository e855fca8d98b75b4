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

/* Several traces on one timeline (obs-report merge, docs/merge.md):
 *   obs_json_merge_begin(out);
 *   obs_json_merge_part(t, out, &part, opt);   once per trace
 *   obs_json_merge_end(out, other_data);
 * Each part writes the same events obs_report_json writes for its trace
 * (its process_sort_index included), under its own pid and time origin.
 * Each returns 0, or -1 with errno set when writing failed. */
struct obs_json_part {
    uint32_t pid;             /* the pid every event of this trace carries */
    const char *process_name; /* NULL: "obsshim pid N: <exe>" as obs_report_json */
    int64_t sort_index;       /* process_sort_index: processes are shown in this order */
    int64_t origin_ns;        /* ts 0 on this trace's own CLOCK_MONOTONIC (may be < 0, or later than
                                 some of its events: those get ts 0) */
    uint64_t flow_id_base;    /* added to flow ids (a call's seq): flow ids are global in the format,
                                 so each part needs its own range */
    int last;                 /* the last part: its last event closes the list */
};

int obs_json_merge_begin(FILE *out);
int obs_json_merge_part(const struct obs_trace *t, FILE *out, const struct obs_json_part *part,
                        const struct obs_json_options *opt);
/* other_data: the members of "otherData" as JSON text without the braces
 * (the caller escapes it), or NULL. */
int obs_json_merge_end(FILE *out, const char *other_data);

/* s as the inside of a JSON string (quotes, backslashes and control
 * characters escaped, invalid UTF-8 replaced), malloc'ed; NULL when out of memory. */
char *obs_json_escape(const char *s);

#endif
