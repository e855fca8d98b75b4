/* The serving view of a trace: one row per iteration of a serving loop
 * and the loop's summaries. Shown by `obs-report serving` (table, --csv,
 * --json), a short section of the summary and of `obs-report phases`, the
 * SQLite export (OBS_ITERATIONS), the HTML page and the Perfetto trace (an
 * iterations track). Definitions: docs/serving.md.
 *
 * An iteration is a phase engine ITERATION range (phase "ITERATION", range
 * name "ITERATION/k", one per forward of a serving loop: docs/phases.md,
 * "Serving loops"); with obs_serving_options.forced also, in every thread,
 * each generation's prompt (its PREFILL calls) and each decode step (the
 * calls of DECODE/STEP_k and its KV_GATHER). Its calls are those the range
 * labels, its inner ranges' included. A *session* is one (thread,
 * generation): the iterations between two idle gaps.
 *
 * Measured, per iteration:
 *   host span: the first begin to the last end of its calls (host);
 *   GPU span: with OBS_GPU_TIME=events (or cupti), the first device begin
 *     to the last device end of its calls; with OBS_GPU_TIME=steps the
 *     envelope of the range spans counted for its ranges (a span its calls
 *     were relabelled out of counts for none: trace_reader.h);
 *   gap: host time from the end of the session's previous iteration (its
 *     last call's end) to this one's first call's begin; none for a
 *     session's first iteration;
 *   GPU idle: device time from the previous iteration's GPU end to this
 *     one's GPU begin (0 when they overlap), both GPU-timed;
 *   calls, launches (kernels, graphs, copies, memsets), kernels;
 *   input: the host-to-device copies of its thread after the thread's last
 *     kernel or graph launch or sampled-ids read, before the iteration's
 *     first kernel or graph launch (the batch's inputs, as the phase
 *     engine's "copy in"): their count, bytes and the first one's bytes;
 *   read: its last sampled-ids read, a copy from the device of at least 4
 *     bytes after a launch of its host iteration (or of the one before,
 *     where that read nothing: a sync, then the copy), as the engine's
 *     token read; read_bytes its bytes (0: none);
 *   first_blocks: the grid blocks of its first kernel launch (0: it began
 *     with a graph launch or launched no kernel).
 * Estimated:
 *   tokens = the first input copy's bytes / id_bytes (the batch's token
 *     ids; undefined without an input copy or when not a whole multiple);
 *     tokens_from says "copy", or "copy+grid" where first_blocks equals it
 *     (an embedding lookup of one block per token agrees);
 *   sequences = read_bytes / id_bytes (a sampled token id per sequence;
 *     0 without a read; undefined when not a whole multiple);
 *   kind, from tokens T and sequences S (kind_from "stream"):
 *     decode  T == S (every sequence fed one token);
 *     prompt  T > S and no sequence decodes: S == 0, or the session's first
 *             iteration, or the previous iteration sampled none;
 *     mixed   T > S otherwise (prompt tokens, and the previous iteration's
 *             sequences may go on decoding);
 *     unknown T < S, or T or S undefined; where T is undefined, a forced
 *             prompt is "prompt" and a forced decode step "decode"
 *             (kind_from "phase": the engine's label).
 * Summaries (p50, p90, p99: linear interpolation between the closest
 * ranks of the sorted values, as `obs-report gaps`):
 *   iteration time by kind (host span; GPU span where GPU-timed);
 *   gaps: their spread, total and share of the wall time (the sum over
 *     sessions of first begin to last end of their iterations);
 *   GPU idle between iterations: spread, total, share of the GPU wall time
 *     (the sum over sessions of first GPU begin to last GPU end); n/a
 *     without GPU time;
 *   tokens/s: the estimated tokens over the wall time; generated/s: the
 *     sequences (one new token each) over the wall time; each undefined
 *     unless every iteration has its figure. */
#ifndef OBS_TRACE_SERVING_H
#define OBS_TRACE_SERVING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

/* The phase of the engine's serving iterations (phase_ids.h: id 5). */
#define OBS_SERVING_PHASE "ITERATION"

enum obs_iteration_kind { OBS_ITER_UNKNOWN, OBS_ITER_DECODE, OBS_ITER_MIXED, OBS_ITER_PROMPT, OBS_ITER_KINDS };

/* "unknown", "decode", "mixed", "prompt". */
const char *obs_iteration_kind_name(unsigned kind);

/* What an iteration is: an ITERATION range, or (forced) a prompt or a decode step. */
enum obs_iteration_source { OBS_ITER_FROM_RANGE, OBS_ITER_FROM_PREFILL, OBS_ITER_FROM_STEP };

struct obs_iteration_row {
    uint32_t thread;       /* its thread's id (tid) */
    uint32_t thread_index; /* index into trace->threads */
    uint32_t generation;
    uint32_t iteration;    /* k of ITERATION/k; forced: its place in the session, from 0 */
    uint32_t step;         /* OBS_ITER_FROM_STEP: the decode step; else UINT32_MAX */
    uint8_t source;        /* enum obs_iteration_source */
    uint8_t kind;          /* enum obs_iteration_kind */
    const char *kind_from; /* "stream", "phase", or "" (unknown) */
    const char *tokens_from; /* "copy", "copy+grid", or "" (no tokens) */
    uint64_t first_seq, last_seq; /* its first and last call (seq) */
    uint64_t host_begin, host_end;
    int has_gap;
    uint64_t gap_ns;
    int gpu_timed;
    uint64_t gpu_begin, gpu_end;
    int has_gpu_idle;
    uint64_t gpu_idle_ns;
    uint64_t calls, launches, kernels;
    uint64_t input_copies, input_bytes, first_input_bytes;
    uint64_t read_bytes; /* its last sampled-ids read; 0: none */
    uint64_t first_blocks;
    int has_tokens, has_sequences;
    uint64_t tokens, sequences;
};

/* The spread of a list of times (ns): n = 0: none. */
struct obs_serving_spread {
    size_t n;
    double p50_ns, p90_ns, p99_ns;
    uint64_t max_ns, total_ns;
};

struct obs_serving_options {
    int forced;        /* every thread's prompts and decode steps are iterations too */
    unsigned id_bytes; /* bytes of a token id (tokens, sequences); 0: 4 */
};

struct obs_serving_stats {
    int forced;
    unsigned id_bytes;
    int gpu_time;  /* the trace has GPU time (per call, or OBS_GPU_TIME=steps) */
    int gpu_steps; /* per phase range and stream (OBS_GPU_TIME=steps) */
    struct obs_iteration_row *rows; /* by thread, then first call */
    size_t nrows;
    size_t threads, sessions;       /* threads and (thread, generation) with iterations */
    size_t ranges;                  /* of the rows, ITERATION ranges' */
    size_t by_kind[OBS_ITER_KINDS]; /* rows of each kind */
    /* iteration time: [kind], [OBS_ITER_KINDS] all */
    struct obs_serving_spread host[OBS_ITER_KINDS + 1], gpu[OBS_ITER_KINDS + 1];
    struct obs_serving_spread gaps, gpu_idle;
    uint64_t wall_ns, gpu_wall_ns;
    double gap_share, gpu_idle_share; /* of wall_ns, of gpu_wall_ns (0 when undefined) */
    int has_gpu_idle;                 /* some pair of consecutive iterations both GPU-timed */
    uint64_t tokens, sequences;       /* sums over the rows that have them */
    size_t rows_with_tokens, rows_with_sequences;
    int has_tokens_per_s, has_generated_per_s; /* every row has tokens, sequences */
    double tokens_per_s, generated_per_s;       /* over wall_ns */
};

/* opt may be NULL (automatic: ITERATION ranges only; 4-byte ids). Returns
 * 0 (a trace without iterations gives nrows 0), or -1 (out of memory). */
int obs_serving_compute(const struct obs_trace *t, const struct obs_serving_options *opt, struct obs_serving_stats *s);
void obs_serving_free(struct obs_serving_stats *s);

/* Whether the trace has an ITERATION range that labels calls (the view is
 * chosen automatically then). */
int obs_trace_has_iterations(const struct obs_trace *t);


/* `obs-report serving --csv`: a header line, then one row per iteration:
 *   thread,generation,iteration,kind,kind_from,source,step,begin_ms,host_ms,
 *   gpu_ms,gap_ms,gpu_idle_ms,calls,launches,kernels,input_copies,
 *   input_bytes,first_input_bytes,tokens,tokens_from,read_bytes,sequences,
 *   first_blocks,first_seq,last_seq
 * (begin_ms: after the trace's first timestamp; undefined values empty).
 * Returns 0, or -1 with errno set. */
#define OBS_SERVING_CSV_HEADER                                                                                \
    "thread,generation,iteration,kind,kind_from,source,step,begin_ms,host_ms,gpu_ms,gap_ms,gpu_idle_ms,calls," \
    "launches,kernels,input_copies,input_bytes,first_input_bytes,tokens,tokens_from,read_bytes,sequences,"     \
    "first_blocks,first_seq,last_seq"
int obs_report_serving_csv(const struct obs_trace *t, const struct obs_serving_options *opt, FILE *out);

/* "range", "prompt", "step": an iteration's source. */
const char *obs_iteration_source_name(unsigned source);

/* `obs-report serving`'s text: the serving section (below, in full, of
 * the iterations opt chooses) and a table of the iterations; or a line
 * saying there are none. Returns 0, or -1 with errno set. */
int obs_report_serving(const struct obs_trace *t, const struct obs_serving_options *opt, FILE *out);

/* The short serving section of the summary and of `obs-report phases`
 * (nothing when the trace has no ITERATION range): the iterations by
 * kind with their time's p50 / p90 / p99, the host gaps and their share,
 * GPU idle, tokens/s, "no per-request TTFT", a pointer to `obs-report
 * serving`. brief: OBS_SERVING_BRIEF_LINES lines, a blank one and two (the
 * exit summary prints them in place of its Generations block, where every
 * generation is a serving loop's). Returns 0, or -1 (out of memory). */
#define OBS_SERVING_BRIEF_LINES 3
int obs_report_serving_section(const struct obs_trace *t, FILE *out, int brief);

#endif
