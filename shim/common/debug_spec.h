/* OBS_DEBUG: which debug domains log, and how much (docs/shim.md, "Debug
 * log"). The text is outside input (the user's environment): this parser
 * is pure (no allocation, no global state) and has a fuzz target
 * (tests/fuzz/debug_spec_fuzz.c).
 *
 *   OBS_DEBUG = item { "," item }          blanks around items ignored, empty items allowed
 *   item      = name [ ":" LEVEL ] | LEVEL  a bare LEVEL is all:LEVEL
 *   name      = phases | intercept | record | gputime | output | capture | all | off | none   (any case)
 *   LEVEL     = 0 | 1 | 2 | 3 | 4          0: off; omitted: 1
 *
 * Items apply in order (all:2,record:0 is every domain at 2 but record);
 * off and none take no level and turn every domain off. */
#ifndef OBS_DEBUG_SPEC_H
#define OBS_DEBUG_SPEC_H

#include <stddef.h>
#include <stdint.h>

/* X(id, name, what it logs): the domains, in the order of their levels. */
#define OBS_DEBUG_DOMAIN_LIST(X)                                                                              \
    X(PHASES, "phases", "the phase engine: every decision with the signal that made it")                     \
    X(INTERCEPT, "intercept", "start-up, real functions resolved, pointers wrapped, fork")                    \
    X(RECORD, "record", "thread buffers, flushes, lost records, kernel names, streams, graph execs")          \
    X(GPUTIME, "gputime", "OBS_GPU_TIME: on or off, per device, event pools")                                 \
    X(OUTPUT, "output", "the trace file: created, chunks written, closed, files written at exit")           \
    X(CAPTURE, "capture", "OBS_CAPTURE: each window opened and closed, the profiler calls made")

enum obs_debug_domain {
#define OBS_DEBUG_DOMAIN_ENUM(id, name, what) OBS_DBG_##id,
    OBS_DEBUG_DOMAIN_LIST(OBS_DEBUG_DOMAIN_ENUM)
#undef OBS_DEBUG_DOMAIN_ENUM
    OBS_DEBUG_DOMAINS
};

#define OBS_DEBUG_LEVEL_MAX 4u
#define OBS_DEBUG_LEVEL_DEFAULT 1u /* a name with no level */

struct obs_debug_spec_error {
    size_t column;  /* 1-based column of the offending character */
    char what[112]; /* what is wrong, for the one warning */
};

/* Parse text into levels[OBS_DEBUG_DOMAINS] (all 0 first). Returns 0, or
 * -1 with err filled and every level 0. */
int obs_debug_spec_parse(const char *text, uint8_t levels[OBS_DEBUG_DOMAINS], struct obs_debug_spec_error *err);

/* The levels as OBS_DEBUG text that parses back to them ("phases:2,output:1",
 * "off" when none); returns its length (cut to len - 1). */
size_t obs_debug_spec_format(const uint8_t levels[OBS_DEBUG_DOMAINS], char *out, size_t len);

/* A domain's name ("phases" ...), "" for an unknown one. */
const char *obs_debug_domain_name(unsigned domain);

#endif
