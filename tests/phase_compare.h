/* Phases of every launch in three views, for the attribution tests
 * (tests/t_phases, tests/t_scenarios):
 *   truth  the program's own ranges: range lines of domain "-" in the
 *          ground-truth log (OBS_SIM_LOG)
 *   live   the shim's ranges as pushed: range lines of domain "obsshim"
 *   trace  the .obs file's phase, step and generation (RELABEL included)
 * A launch is a log line of kind kernel or graph (captured ones included),
 * and a trace CALL of kind KERNEL or GRAPH. Its phase is its innermost
 * range among PREFILL, KV_GATHER, DECODE/STEP_k, DECODE/STEADY (both
 * DECODE) and ITERATION/k (a serving loop's iteration: phase ITERATION),
 * its step the k of the innermost DECODE/STEP_k or ITERATION/k, its
 * generation (truth, live) the number of PREFILL and ITERATION/0 ranges its
 * thread pushed before it, from 0 (a serving session's first iteration
 * begins one). Its forward (truth): the FORWARD marks its thread wrote
 * before it (fw_truth.py: one per forward of the model; 0 before the
 * first). A launch inside a GRAPH_CAPTURE range of the truth is marked
 * captured (not an execution); a live PREFILL range that holds no launch
 * but captured ones is not counted as a generation (captured launches are
 * left out of the scores; pc_run.live_prefill_uncounted counts them). With a 7th column in the log (the thread's
 * gettid, OBS_SIM_LOG_TID=1) ranges are kept per thread and launches are
 * matched with the trace per thread; without it, in log order. Streams the
 * log (it may hold millions of lines). */
#ifndef OBS_TESTS_PHASE_COMPARE_H
#define OBS_TESTS_PHASE_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace_reader.h"

#define PC_NO_STEP (-1L)
#define PC_NO_GEN (-1L)

struct pc_label {
    char phase[12]; /* "PREFILL", "DECODE", "KV_GATHER", "ITERATION", "" */
    long step;      /* PC_NO_STEP: none */
    long gen;       /* PC_NO_GEN: none */
};

struct pc_launch {
    uint32_t name; /* index into pc_run.names */
    uint32_t thread; /* index into pc_run.tids */
    struct pc_label truth, live, trace;
    int truth_layer, live_layer, trace_layer; /* LAYER/k: k, -1 none (truth: the LAYER/k and LAYER_END marks of
                                                 fw_truth.py; live: the innermost LAYER/k range; trace: obs_call.layer) */
    uint8_t truth_part, trace_part; /* EMBED, HEAD (enum obs_layer_part; truth: the EMBED and HEAD marks of
                                       llm_replay and fw_truth.py; trace: obs_layer_parts) */
    uint8_t relabelled; /* the trace labels it with a RELABEL record */
    uint8_t captured;   /* inside the truth's GRAPH_CAPTURE */
    uint8_t in_trace;   /* a trace call was matched with it */
    size_t trace_call;  /* in_trace: that call's index in obs_trace.calls */
    uint32_t forward;   /* FORWARD marks of its thread before it (truth) */
};

/* A generation's host wall-clock figures, as tests/apps/llm_replay logs them:
 * its own stopwatch (ttft_ns, steady_ns), and the marks that name the calls
 * those figures run between (CLOCK_MONOTONIC ns, 0: none; the replay's
 * header comment says which call each mark names). fw_truth.py adds which
 * TTFT applies ("ttft=read": the first token's read, R; "ttft=forward":
 * the generation reads none, TTFT ends at the end of the prompt's forward,
 * mark_prompt_end) and that mark, the end of its last forward and the
 * begin of its first decode forward (mark_first_step). */
struct pc_timing {
    long tid, gen, steps;
    long long ttft_ns, steady_ns; /* -1: undefined */
    unsigned long long mark_prompt, mark_prefill, mark_prefill_read, mark_step0_read, mark_last_read;
    unsigned long long mark_prompt_end, mark_last_forward_end, mark_first_step; /* 0: none */
    int ttft_forward;                   /* 1: "ttft=forward" */
};

/* A serving loop's iteration as the truth's pre-hook saw it (fw_truth.py's
 * "ITERATION kind=K tokens=T requests=R prompts=P decodes=D sampled=S"
 * mark, right after its ITERATION/k push): its thread, generation (as a
 * launch's truth gen) and k, what the scheduler packed. */
struct pc_iteration {
    uint32_t thread; /* index into pc_run.tids */
    long gen, k;
    char kind[8];    /* "prompt", "mixed", "decode" */
    long tokens, requests, prompts, decodes, sampled;
};

struct pc_run {
    struct pc_launch *l;
    size_t n;
    char **names; /* distinct kernel names of the log ("-" for graph launches) */
    size_t nnames;
    long *tids; /* distinct thread ids of the log (one 0 without the column) */
    size_t ntids;
    int has_tid;
    size_t live_prefill_uncounted; /* live PREFILL ranges with no launch outside a capture */
    struct pc_timing *timing;
    size_t ntiming;
    struct pc_iteration *iters; /* in log order */
    size_t niters;
};

/* Read a log's launches with their truth and live labels (and the timing
 * lines). Returns the number of launches; run is zeroed first. */
size_t pc_read_log(const char *log_path, struct pc_run *run);

/* Fill l[].trace from the trace. Returns the number of launch calls in the
 * trace; *name_mismatch: matched launches whose kernel differs. */
size_t pc_trace_labels(const struct obs_trace *t, struct pc_run *run, size_t *name_mismatch);

/* Phase equal; then, when the phase is set, step equal and (with_gen)
 * generation equal. */
int pc_same(const struct pc_label *a, const struct pc_label *b, int with_gen);

/* "PHASE[/step][ gen G]" or "(none)". */
const char *pc_label_text(const struct pc_label *l, char *buf, size_t len);

/* The layers of graph execs' kernel nodes in the trace (GRAPH_NODES,
 * docs/layers.md "Graphs") against the truth of the launches captured into
 * them: the log's launches inside the truth's GRAPH_CAPTURE, in log order,
 * are the execs' kernel nodes in capture order (the simulated runtimes
 * list a captured graph's nodes so), exec after exec in id order (each
 * instantiated right after its capture), each taking as many captured
 * launches as it has kernel nodes. One thread's captures only: a log whose
 * captured launches come from several threads matches none. */
struct pc_graph_score {
    size_t captured;      /* captured launches in the log */
    size_t execs;         /* execs matched */
    size_t nodes;         /* kernel nodes of the execs matched, with their order kept */
    size_t in_layers;     /* those nodes' captured launches the truth puts in a layer */
    size_t right;         /* nodes whose layer (or none) is the truth's */
    size_t names_differ;  /* nodes whose kernel is not the captured launch's */
};
void pc_graph_node_layers(const struct obs_trace *t, const struct pc_run *run, struct pc_graph_score *s);

/* EMBED and HEAD (docs/layers.md, "Reports") against the truth's EMBED and
 * HEAD marks (tests/apps/llm_replay, tests/frameworks/fw_truth.py): in each
 * prompt or step (a run of a thread's launches with one generation and step
 * in the trace, PREFILL or not) where the truth has a launch in a layer,
 * each launch outside the layers must have the part the marks give it in
 * the trace, each in a layer none. Launches whose trace label is not the
 * truth's are left to the phase checks (other_label), and an instance that
 * holds a graph's capture (the captured launches, not run, have layers in
 * the trace and precede the step's own) is not scored (by_capture). The
 * first `show` wrong launches are printed with diag, `what` before each. */
struct pc_part_score {
    size_t scored;        /* launches of the instances scored */
    size_t in_layers;     /* of them in a layer (truth) */
    size_t embed, head;   /* of them EMBED, HEAD (truth) */
    size_t right;         /* of the scored, those whose part in the trace is the truth's */
    size_t outside_right; /* of the embed + head, those right */
    size_t other_label, by_capture;
};
void pc_embed_head(const struct pc_run *run, struct pc_part_score *s, const char *what, size_t show);

/* The serving view (shim/trace/trace_serving.h, automatic: ITERATION
 * ranges, 4-byte ids) against the truth's iterations (pc_run.iters): each
 * truth iteration's launches (the log's, matched with the trace's calls by
 * pc_trace_labels) are *exact* when they are all of one row's launches and
 * that row has no other: none split over rows (or outside every row),
 * none merged with another's. Of the exact ones: the row's kind, tokens
 * and sequences against the truth's kind, tokens and sampled. The first
 * `show` that differ are printed with diag, `what` before each. Returns 0,
 * or -1 (the view could not be computed). */
struct pc_serving_score {
    size_t truth, rows;             /* truth iterations (with launches); rows of the view */
    size_t exact, split, merged;    /* truth iterations exact; over several rows or none; sharing a row */
    size_t kinds_right, tokens_right, sequences_right; /* of the exact */
    size_t by_kind[3];              /* truth iterations: prompt, mixed, decode */
    double gap_share;               /* the view's host gaps over its wall time, 0-1 */
    size_t gaps;
    double gap_p50_ms, gap_p99_ms;
};
int pc_serving_score(const struct obs_trace *t, const struct pc_run *run, struct pc_serving_score *s, const char *what,
                     size_t show);

void pc_run_free(struct pc_run *run);

#endif
