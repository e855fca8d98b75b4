/* Synthetic traces with PHASE records whose phase table, TTFT and tokens/s
 * are known exactly (worked out by hand in phase_trace.c), for the tests
 * of the reader's phase labels, the CSV/JSON phase outputs, the summary's
 * phase tables, `obs-report phases` and `suggest-phases`.
 *
 * Thread 200 ("main"): generation 0 (the warm-up: PREFILL, DECODE/STEP_0
 * with its KV_GATHER) and generation 1 (PREFILL with an HtoD copy, STEP_0,
 * DECODE/STEADY holding STEP_1..3, each with a KV_GATHER), all BEGIN/END
 * nested like the reference workload; later one sync outside any phase.
 * Thread 201 ("worker"): generation 2, shaped like 1, inside one wrong
 * BEGIN/END PREFILL range that RELABEL records (written outside-in)
 * override. Thread 202 writes the GPU spans. */
#ifndef OBS_PHASE_TRACE_H
#define OBS_PHASE_TRACE_H

#define PT_NO_GPU 0x1u /* host times only */

/* Kernel names (demangled) and their ids. */
#define PT_PREFILL "prefill_kernel(float*, float const*, int, int)"
#define PT_KV "kv_gather_kernel(float*, float const*, int, int)"
#define PT_DECODE "decode_kernel(float*, float const*, int, int)"

/* Write the trace. Returns 0 or -errno. */
int phase_trace_write(const char *path, unsigned options);

/* A trace of damaged PHASE records (an END with nothing open, an unknown
 * event, a RELABEL with first > last, a BEGIN whose phase id has no string,
 * a RELABEL of indexes that hold no call): 3 bad records, one call in the
 * unnamed phase 99, one memset in phase KV_GATHER with step 7. */
int phase_trace_write_damaged(const char *path);

/* Generation 5 on thread 200 labelled only by RELABELs of single runs, not
 * nested (PREFILL; KV_GATHER step k, then DECODE/STEP_k, k = 0..2), as a
 * phase engine that learns the roles late writes them. */
int phase_trace_write_flat(const char *path);

/* n (<= 100) decode calls on thread 200 (indexes 0 .. n-1), one RELABEL
 * over all of them (DECODE/STEADY), then one per call with step = its
 * index, written last call first. */
int phase_trace_write_relabels(const char *path, unsigned n);

#endif
