/* OBS_CAPTURE: which stretches of a run the shim brackets with the
 * runtime's profiler start and stop (docs/capture.md). The text is outside
 * input (the user's environment): this parser is pure (no allocation, no
 * global state) and has a fuzz target (tests/fuzz/capture_spec_fuzz.c).
 *
 *   OBS_CAPTURE = window { "," window }      blanks around words and separators ignored
 *   window      = steps | iterations | generations
 *   steps       = ( "steps" | "step" ) ":" range [ "@" ( "generation" | "gen" ) ":" NUMBER ]
 *   iterations  = ( "iterations" | "iteration" | "iter" ) ":" range
 *   generations = ( "generations" | "generation" | "gen" ) ":" range
 *   range       = NUMBER [ "-" NUMBER ]        first <= last; one number: first = last
 *   NUMBER      = decimal digits, 0 .. 4294967294
 *   (words in any case; "off" alone: no window)
 *
 * Numbers count from 0, as the trace numbers steps, generations and a
 * thread's phase instances. steps:A-B are the decode steps A .. B of the
 * first generation in which one of them begins (@generation:G: of
 * generation G only); iterations:A-B the thread's phase instances A .. B
 * (each prompt's PREFILL and each decode step is one); generation:A-B
 * every range of generations A .. B. At most OBS_CAPTURE_WINDOWS_MAX
 * windows, OBS_CAPTURE_TEXT_MAX characters. */
#ifndef OBS_CAPTURE_SPEC_H
#define OBS_CAPTURE_SPEC_H

#include <stddef.h>
#include <stdint.h>

#define OBS_CAPTURE_WINDOWS_MAX 8u
#define OBS_CAPTURE_TEXT_MAX 256u           /* characters of the text */
#define OBS_CAPTURE_NUMBER_MAX 4294967294u  /* UINT32_MAX is "no step" in the trace */
#define OBS_CAPTURE_ANY_GENERATION UINT32_MAX

enum obs_capture_unit { OBS_CAPTURE_STEPS = 1, OBS_CAPTURE_ITERATIONS = 2, OBS_CAPTURE_GENERATIONS = 3 };

struct obs_capture_window {
    uint8_t unit;        /* enum obs_capture_unit */
    uint32_t first, last; /* inclusive, first <= last */
    uint32_t generation; /* steps: the generation they must be in, or OBS_CAPTURE_ANY_GENERATION */
};

struct obs_capture_spec {
    unsigned n; /* windows; 0: capture off */
    struct obs_capture_window w[OBS_CAPTURE_WINDOWS_MAX];
};

struct obs_capture_spec_error {
    size_t column;  /* 1-based column of the offending character */
    char what[112]; /* what is wrong, for the one warning */
};

/* Parse text into spec. Returns 0, or -1 with err filled and spec->n 0. */
int obs_capture_spec_parse(const char *text, struct obs_capture_spec *spec, struct obs_capture_spec_error *err);

/* One window as OBS_CAPTURE text that parses back to it ("steps:2-5",
 * "steps:3@generation:1", "iterations:0-9", "generation:2"); returns its
 * length (cut to len - 1). */
size_t obs_capture_window_format(const struct obs_capture_window *w, char *out, size_t len);

/* The whole spec the same way, windows joined by ","; "off" for none. */
size_t obs_capture_spec_format(const struct obs_capture_spec *spec, char *out, size_t len);

/* A window in words, for obs-run's line and the reports ("decode steps 2 to
 * 5 of the first generation that has them"); returns its length. */
size_t obs_capture_window_describe(const struct obs_capture_window *w, char *out, size_t len);

#endif
