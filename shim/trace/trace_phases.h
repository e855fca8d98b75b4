/* Phase statistics of a trace: the phase table (time, launches, kernels,
 * bytes per phase and per generation) and, per generation, TTFT, the
 * decode steps per second and tokens per second. Shown by the summary, by
 * `obs-report phases`, the HTML page and the SQLite export; definitions in
 * docs/phases-report.md.
 *
 * Times are GPU times (device spans) when the trace has any GPU span, host
 * API times otherwise (time_base says which); calls without a GPU span do
 * not count towards times in GPU mode. A trace of OBS_GPU_TIME=steps has
 * no span per call but one per phase range and stream (RANGE_SPAN): GPU
 * time too (gpu_steps), each range's span counted for the final label of
 * its calls (trace_reader.h, obs_range_span), the same definitions below
 * over those spans instead of the calls'. Generations are per thread: one row
 * per (thread, generation).
 *   time of a phase in a generation: the sum over the ranges of that phase
 *     (each BEGIN/END or RELABEL range) of the span from the first begin to
 *     the last end of the calls that range labels itself (not those of
 *     ranges inside it); one range (PREFILL) gives exactly that span;
 *   T_prefill: span of the generation's calls of phase "PREFILL";
 *   T_first_decode: span of its calls with step 0 (any phase: KV_GATHER too);
 *   T_decode_after_first: span of its calls with step >= 1;
 *   N_decode: the number of distinct steps among its calls.
 * The rates by one of two definitions (first_token says which), TTFT by
 * one of three (ttft_to says which):
 *   "prefill": the prompt's own logits give the first token (every real
 *     framework): a *token read* (a copy from the device of at least 4
 *     bytes after a launch of the same iteration, complete at the host
 *     delimiter that ends the iteration) labelled PREFILL.
 *       TTFT = end of the PREFILL's last token read - begin of the first
 *         PREFILL call (its input copies, when the engine saw them);
 *       steps/s = N_decode / (end of the last step's token read - end of
 *         the PREFILL's); tokens/s = steps/s x sequences, sequences = the
 *         last step's read bytes over the PREFILL's when a whole multiple
 *         (several sequences decoded from one prompt), else 1; ITL = 1/steps/s.
 *     Host time: "end" is the delimiter's host end; GPU time: the read
 *     copy's device end, and the begin the first PREFILL call's device begin.
 *   "step0": no token read in the PREFILL: tokens/s = (N_decode - 1) /
 *     T_decode_after_first (GPU time) or over the time from step 0's last
 *     delimiter to the last step's (host time); undefined where no
 *     delimiter bounds the steps (shape (a): launches only, counted in
 *     unbounded_steps). Its TTFT ends where ttft_to says:
 *   ttft_to, where TTFT ends (OBS_TTFT_TO_*):
 *     "token-read": first token "prefill", above;
 *     "forward-end (device)", "forward-end (next delimiter)": the PREFILL
 *       reads no token, step 0 reads none either and the generation
 *       reads something back from the device (a flag: Hugging Face generate()
 *       with no streamer; its tokens later: a loop that keeps them on the
 *       device): the first token is the prompt's own, made by the prompt's
 *       forward, and TTFT runs from the first PREFILL call to the end of
 *       the prompt's forward. The forward is the last PREFILL iteration (its
 *       launches between two host delimiters of the thread) with at least
 *       FORWARD_SHARE of the kernels of the PREFILL's largest iteration
 *       (trace_phases.c: the input preparation before it and the work
 *       after it until the next forward are iterations of a few launches).
 *       GPU time: the latest device end of that iteration's launches (with
 *       OBS_GPU_TIME=steps, the end of their PREFILL range's span on their
 *       stream); host time: the host end of the delimiter that ends the
 *       iteration, undefined when a launch of another range comes before
 *       it (no delimiter bounds the forward alone: unbounded_forwards);
 *     "step0-end": the PREFILL reads no token and step 0 reads one (the
 *       program's first token is step 0's), or the generation reads
 *       nothing back at all (no copy from the device among its calls: the
 *       seed workload, whose prefill emits no token and whose own clock
 *       counts step 0): TTFT = T_prefill + T_first_decode
 *       (GPU time), or the end of the last delimiter of step 0 - begin of
 *       the first PREFILL call (host time). */
#ifndef OBS_TRACE_PHASES_H
#define OBS_TRACE_PHASES_H

#include <stdint.h>
#include <stdio.h>

#include "trace_reader.h"

#define OBS_ALL_GENERATIONS UINT32_MAX

struct obs_phase_row {
    const char *phase;      /* phase name; "" when the id has no string */
    uint32_t phase_id;
    uint32_t generation;    /* OBS_ALL_GENERATIONS in the per-phase table */
    uint32_t thread;        /* per-generation rows: the thread's id (tid) */
    uint64_t time_ns;       /* see above; 0 when untimed */
    int timed;              /* some call of it had a time in the time base */
    uint64_t ranges, calls; /* ranges that label calls; calls */
    uint64_t launches;      /* calls that enqueue GPU work: kernels, graphs, copies, memsets */
    uint64_t kernels;       /* kernel launches */
    uint64_t bytes;         /* bytes of copies and memsets */
};

/* Where a generation's TTFT ends (obs_generation_row.ttft_to; above). */
#define OBS_TTFT_TO_TOKEN_READ "token-read"
#define OBS_TTFT_TO_FORWARD_DEVICE "forward-end (device)"
#define OBS_TTFT_TO_FORWARD_DELIMITER "forward-end (next delimiter)"
#define OBS_TTFT_TO_STEP0 "step0-end"
/* A serving loop's generation (its calls are ITERATION/k ranges, one per
 * forward over a changing batch): its first_token and ttft_to; no TTFT,
 * steps or rates (a request's first token is not in the stream unless the
 * program marks its requests; the iterations: trace_serving.h). */
#define OBS_FIRST_TOKEN_SERVING "serving"
#define OBS_TTFT_TO_SERVING "none (serving)"

struct obs_generation_row {
    uint32_t generation;
    uint32_t thread; /* its thread's id (tid) */
    uint64_t prefill_ns, first_decode_ns, steady_ns;
    int has_prefill, has_first_decode, has_steady; /* the span had timed calls */
    uint32_t decode_steps;                         /* N_decode */
    uint64_t calls, launches, kernels, bytes;
    const char *first_token;                      /* "prefill" or "step0": whether the PREFILL reads its token */
    const char *ttft_to;                          /* where TTFT ends: an OBS_TTFT_TO_* word */
    int ttft_defined, tokens_defined, steps_defined;
    double ttft_ms, tokens_per_s, steps_per_s, itl_ms;
    uint32_t sequences; /* per decode step ("prefill": by the read sizes; else 1) */
    int in_best; /* counted for best_* (generations with >= 2 decode steps, if any; never a serving one) */
    int serving; /* a serving loop's iterations (first_token OBS_FIRST_TOKEN_SERVING) */
};

/* One decode step of a generation: the span from the first begin to the
 * last end of the calls its ranges label (DECODE/STEP_k and its KV_GATHER;
 * OBS_GPU_TIME=steps: the spans counted for them), in the time base. */
struct obs_step_row {
    uint32_t generation;
    uint32_t thread; /* its thread's id (tid) */
    uint32_t step;
    uint64_t time_ns;
    int timed;       /* some call (or range span) of it had a time in the time base */
    uint64_t calls;
};

struct obs_phase_stats {
    int gpu_time;                    /* 1: GPU spans; 0: host API times */
    int gpu_steps;                   /* 1: the GPU spans are per phase range and stream (OBS_GPU_TIME=steps) */
    size_t range_spans;              /* gpu_steps: spans counted (for the final label of their calls) */
    size_t relabelled_spans;         /* ... of which their calls' final label is not the live range's */
    size_t mixed_spans;              /* spans not counted: their calls were relabelled into several ranges */
    const char *time_base;           /* "gpu" or "host" */
    struct obs_phase_row *phases;    /* per phase over all generations, in order of first call */
    size_t nphases;
    struct obs_phase_row *by_gen;    /* per generation (ascending), then phase as above */
    size_t nby_gen;
    struct obs_generation_row *gens; /* ascending generation */
    size_t ngens;
    uint64_t labelled_calls, unlabelled_calls;
    int has_best_ttft, has_best_tokens;
    double best_ttft_ms, best_tokens_per_s;
    uint32_t best_ttft_generation, best_tokens_generation;
    size_t best_over; /* generations counted for the bests */
    size_t serving_gens; /* generations of serving loops (not counted) */
    size_t unbounded_steps; /* host time: generations whose steps no delimiter bounds (tokens/s n/a; TTFT too
                               where it ends at step 0) */
    size_t unbounded_forwards; /* host time: "forward-end" generations whose prompt's forward no delimiter
                                  bounds alone (TTFT n/a) */
    struct obs_step_row *steps;      /* by thread, generation, step */
    size_t nsteps;
};

/* Returns 0, or -1 (out of memory). A trace without phases gives empty tables. */
int obs_phase_stats_compute(const struct obs_trace *t, struct obs_phase_stats *s);
void obs_phase_stats_free(struct obs_phase_stats *s);

/* How TTFT and tokens/s spread over the generations counted for the bests
 * (in_best), for the brief summary: the best (as best_*), the median (the
 * mean of the two middle values for an even count) and p90, the value that
 * 9 in 10 of them do at least as well as: the 90th percentile of TTFT
 * (lower is better) and the 10th of tokens/s (higher is better), by
 * nearest rank. n = 0: nothing defined. */
struct obs_generation_spread {
    size_t ttft_n, tokens_n;
    double ttft_best_ms, ttft_median_ms, ttft_p90_ms;
    double tokens_best, tokens_median, tokens_p90;
};
/* Returns 0, or -1 (out of memory). */
int obs_generation_spread_compute(const struct obs_phase_stats *s, struct obs_generation_spread *out);

/* The name a phase row shows: its phase name or "(phase id N)". buf: 32 bytes. */
const char *obs_phase_row_name(const struct obs_phase_row *r, char *buf, size_t len);

/* `obs-report phases --csv`: a header line, then one row per generation:
 *   generation,ttft_ms,tokens_per_s,decode_steps,time_base,prefill_ms,
 *   first_decode_ms,steady_ms,calls,launches,kernels,bytes,in_best,thread,
 *   first_token,steps_per_s,sequences,itl_ms,ttft_to
 * Undefined values are empty fields. Returns 0, or -1 with errno set. */
#define OBS_PHASES_CSV_HEADER                                                                                 \
    "generation,ttft_ms,tokens_per_s,decode_steps,time_base,prefill_ms,first_decode_ms,steady_ms,calls,"      \
    "launches,kernels,bytes,in_best,thread,first_token,steps_per_s,sequences,itl_ms,ttft_to"
int obs_report_phases_csv(const struct obs_trace *t, FILE *out);

/* `obs-report phases --steps [--csv]`: one row per decode step of each
 * generation (obs_step_row): a table, or a header line
 *   generation,step,time_ms,time_base,calls,thread
 * then one row per step (time_ms empty when untimed). Returns 0, or -1
 * with errno set. */
#define OBS_STEPS_CSV_HEADER "generation,step,time_ms,time_base,calls,thread"
int obs_report_steps(const struct obs_trace *t, FILE *out, int csv);

#endif
