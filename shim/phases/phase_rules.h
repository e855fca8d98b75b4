/* Phase rules: the OBS_PHASES and OBS_STEP parser and matcher.
 *
 *   OBS_PHASES = rule { ";" rule }        rule    = PHASE "=" pattern { "," pattern }
 *   OBS_STEP   = glob { "," glob }        PHASE   = PREFILL | DECODE | KV_GATHER (any case)
 *   pattern    = glob | "memcpy" [ ":" KIND ] | "memset"
 *   KIND       = HtoD | DtoH | DtoD | HtoH | peer | default | *   (any case)
 *
 * A glob (`*` any run, `?` one character, anything else literal, case
 * sensitive) matches a kernel's base name: the demangled name without
 * namespace, template arguments, parameters or return type
 * (`void ns::decode_kernel<4>(float*, int)` -> `decode_kernel`). Patterns
 * are tried in the order written; the first match wins. Blanks around
 * names, patterns and separators are ignored; empty rules (`;;`, a
 * trailing `;`) are allowed.
 *
 * Pure C with fixed-size storage: parsing and matching allocate nothing,
 * and a parse that fails leaves one error (the 1-based column of the
 * offending character and what is wrong) for the caller's single message. */
#ifndef OBS_PHASE_RULES_H
#define OBS_PHASE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OBS_PHASE_RULES_TEXT_MAX 1024u /* characters of one variable */
#define OBS_PHASE_PATTERNS_MAX 32u     /* patterns in one variable */
#define OBS_PHASE_GLOB_MAX 128u        /* characters of one glob */

/* The phases rules can name. Values are stable: PHASE records and the
 * engine's caches use them. */
enum obs_phase_id {
    OBS_PHASE_NONE = 0,
    OBS_PHASE_PREFILL = 1,
    OBS_PHASE_DECODE = 2,
    OBS_PHASE_KV_GATHER = 3,
    OBS_PHASE_ID_COUNT
};

enum obs_pattern_kind { OBS_PATTERN_KERNEL = 0, OBS_PATTERN_MEMCPY = 1, OBS_PATTERN_MEMSET = 2 };

#define OBS_PATTERN_ANY_DIRECTION 0xffu

struct obs_phase_pattern {
    uint8_t kind;      /* enum obs_pattern_kind */
    uint8_t phase;     /* enum obs_phase_id (OBS_STEP: DECODE) */
    uint8_t direction; /* memcpy: enum obs_direction, or OBS_PATTERN_ANY_DIRECTION */
    char glob[OBS_PHASE_GLOB_MAX + 1];
};

struct obs_phase_rules {
    unsigned count;
    struct obs_phase_pattern patterns[OBS_PHASE_PATTERNS_MAX];
};

struct obs_phase_rule_error {
    size_t column;    /* 1-based, in bytes of the text */
    char what[160];   /* "unknown phase 'FOO' (expected PREFILL, DECODE or KV_GATHER)" */
};

/* Parse OBS_PHASES (step_rule false) or OBS_STEP (step_rule true: patterns
 * only, each meaning "opens a decode step"). text may be any bytes up to
 * its NUL. 0 on success (an all-blank text gives 0 rules), -1 with *err
 * filled and *out emptied on the first error. */
int obs_phase_rules_parse(const char *text, bool step_rule, struct obs_phase_rules *out,
                          struct obs_phase_rule_error *err);

/* The phase of the first pattern matching, or OBS_PHASE_NONE. */
uint8_t obs_phase_rules_match_kernel(const struct obs_phase_rules *r, const char *base_name);
uint8_t obs_phase_rules_match_memcpy(const struct obs_phase_rules *r, uint8_t direction);
uint8_t obs_phase_rules_match_memset(const struct obs_phase_rules *r);

/* Glob match (iterative: linear backtracking to the last star). */
bool obs_glob_match(const char *glob, const char *text);

/* Base names of kernels: kernel_base_name.h. */
#include "trace/trace.h"

/* "PREFILL", "DECODE", "KV_GATHER", or "" */
const char *obs_phase_id_name(unsigned phase);

#endif
