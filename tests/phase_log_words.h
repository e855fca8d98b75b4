/* The words the phase engine's decision log (OBS_DEBUG=phases:N) begins its
 * lines with, after "tid=T call=N " (docs/phases.md, "Decision log"): the
 * decisions first (each has gen= and because=), then what the engine noted
 * on the way. t_phase_engine and t_debug_log check every line against it;
 * a word the engine starts to write goes here and into the docs together. */
#ifndef OBS_TESTS_PHASE_LOG_WORDS_H
#define OBS_TESTS_PHASE_LOG_WORDS_H

#include <stddef.h>

static const char *const phase_log_words[] = {
    /* decisions */
    "new-generation", "warm-up", "prefill-continues", "decode-starts", "step", "step-continues", "was-a-step",
    "was-a-prompt-chunk", "prompt-chunks", "not-a-step", "prompt-forward", "prompt-chunk", "forwards-found",
    "capture-replayed", "capture-fill", "serving-loop", "iteration-begins",
    /* notes */
    "learned", "gave-up", "learned-dropped", "iteration-selected", "iteration", "forward", "copy-in", "token-read",
    "flag-read", "memset", "delimiter", "launch", "lookup", "thread-state", "fallback", "unit-noted", "layers",
    "capture", "graph-layers", "busy-gap", "prep-relabelled"};
#define PHASE_LOG_DECISIONS 17u /* the first 17 words */
#define PHASE_LOG_WORDS (sizeof phase_log_words / sizeof phase_log_words[0])

#endif
