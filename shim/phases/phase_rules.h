/* Phase rules: the OBS_PHASES and OBS_STEP parser and matcher.
 *
 *   OBS_PHASES = rule { ";" rule }        rule    = PHASE "=" pattern { "," pattern }
 *   OBS_STEP   = glob { "," glob }        PHASE   = PREFILL | DECODE | KV_GATHER (any case)
 *   OBS_ITERATION = glob { "," glob }     (OBS_STEP's grammar: the phase engine's serving-loop rule)
 *   pattern    = glob { cond } | "memcpy" [ ":" KIND ] | "memset" | selector
 *   selector   = "iter:after:memcpy" [ ":" KIND ] { bytes } | "iter:after:memset" { bytes }
 *              | "iter:until:token" | "iter:until:forward" | "iter:" glob { cond }
 *   cond       = "[" SIZE OP NUMBER "]"   SIZE = threads | grid | block   OP = < | <= | > | >= | =
 *   bytes      = "[" "bytes" OP NUMBER "]"
 *   NUMBER     = decimal digits [ "k" | "M" ]   (k = 1024, M = 1048576)
 *   KIND       = HtoD | DtoH | DtoD | HtoH | peer | default | *   (any case; so are memcpy,
 *                memset, iter:, after:)
 *
 * A glob (`*` any run, `?` one character, anything else literal, case
 * sensitive) matches a kernel's base name: the demangled name without
 * namespace, template arguments, parameters or return type
 * (`void ns::decode_kernel<4>(float*, int)` -> `decode_kernel`). A `[`
 * opens a condition only when a word and an operator follow it
 * (`[threads>=`); otherwise it is a literal glob character, as before
 * conditions existed (`f[abi:cxx11]`).
 *
 * Conditions are on the launch: threads = grid x block threads, grid =
 * grid.x*y*z blocks, block = threads per block; all of a pattern's
 * conditions must hold. A launch takes the phase of the first per-launch
 * pattern (kernel or copy kind) whose glob and conditions hold.
 *
 * Selectors (`iter:`) choose whole iterations, an iteration being the
 * launches between two host delimiters (a *Synchronize other than a stream
 * waiting for an event, or a synchronous DtoH/default copy). At an
 * iteration's first launch they are tried in the order written:
 * `iter:after:memcpy:KIND` holds when a copy of that kind came since the
 * thread's previous launch (a synchronous copy that delimits counts for the
 * iteration after it), `iter:after:memset` likewise for a memset; with
 * `[bytes OP N]` conditions, a copy (memset) whose size meets them all
 * (a prompt's token ids copied in, larger than a step's one token),
 * `iter:until:token` while the thread's generation has read no token yet
 * (a copy from the device of at least 4 bytes after a launch of its
 * iteration) or none has begun, `iter:until:forward` while the thread's
 * generation has not begun its second forward (a forward begins at an
 * OBS_STEP launch: the first is the prompt's; at the second the selection
 * ends, mid-iteration), `iter:glob[conds]` when the first launch
 * is a kernel whose base name and size match. The first that holds gives
 * its phase to every launch of the iteration, in place of the per-launch
 * patterns.
 *
 * Patterns are tried in the order written; the first match wins. Blanks
 * around names, patterns and separators and inside conditions are
 * ignored; empty rules (`;;`, a trailing `;`) are allowed. OBS_STEP takes
 * plain kernel globs only (no conditions, no selectors).
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
#define OBS_PHASE_CONDS_MAX 4u         /* conditions on one pattern */

/* The phases rules can name. Values are stable: PHASE records and the
 * engine's caches use them. */
enum obs_phase_id {
    OBS_PHASE_NONE = 0,
    OBS_PHASE_PREFILL = 1,
    OBS_PHASE_DECODE = 2,
    OBS_PHASE_KV_GATHER = 3,
    OBS_PHASE_ID_COUNT
};

enum obs_pattern_kind {
    OBS_PATTERN_KERNEL = 0,
    OBS_PATTERN_MEMCPY = 1,
    OBS_PATTERN_MEMSET = 2,
    OBS_PATTERN_UNTIL_TOKEN = 3,
    OBS_PATTERN_UNTIL_FORWARD = 4
};

#define OBS_PATTERN_ANY_DIRECTION 0xffu

enum obs_size_field { OBS_SIZE_THREADS = 0, OBS_SIZE_GRID = 1, OBS_SIZE_BLOCK = 2, OBS_SIZE_BYTES = 3 };
#define OBS_SIZE_FIELDS 4u
enum obs_size_op { OBS_OP_LT = 0, OBS_OP_LE, OBS_OP_GT, OBS_OP_GE, OBS_OP_EQ };

struct obs_size_cond {
    uint8_t field; /* enum obs_size_field */
    uint8_t op;    /* enum obs_size_op */
    uint64_t value;
};

struct obs_phase_pattern {
    uint8_t kind;      /* enum obs_pattern_kind */
    uint8_t phase;     /* enum obs_phase_id (OBS_STEP: DECODE) */
    uint8_t direction; /* memcpy: enum obs_direction, or OBS_PATTERN_ANY_DIRECTION */
    uint8_t iteration; /* an `iter:` selector: KERNEL = iter:glob, MEMCPY/MEMSET = iter:after:... */
    uint8_t nconds;    /* kernel globs: conditions on the launch's size; iter:after: ones on the bytes */
    struct obs_size_cond conds[OBS_PHASE_CONDS_MAX];
    /* the conditions as ranges, per enum obs_size_field: lo <= value <= hi
     * (no condition: 0 .. UINT64_MAX; none can hold: lo > hi) */
    uint64_t lo[OBS_SIZE_FIELDS], hi[OBS_SIZE_FIELDS];
    char glob[OBS_PHASE_GLOB_MAX + 1];
};

struct obs_phase_rules {
    unsigned count;
    uint32_t sized_mask;       /* bit i: pattern i is a per-launch kernel glob with conditions */
    uint32_t iter_mask;        /* bit i: pattern i is an iteration selector */
    uint32_t iter_kernel_mask; /* bit i: pattern i is an `iter:glob` selector */
    uint32_t iter_bytes_mask;  /* bit i: pattern i is an `iter:after:` selector with [bytes] conditions */
    struct obs_phase_pattern patterns[OBS_PHASE_PATTERNS_MAX];
};

/* A launch's size, as conditions read it (products saturate at UINT64_MAX). */
struct obs_launch_size {
    uint64_t threads, grid, block;
};

/* What came since the last launch, for `iter:after:`: bit (1 << direction)
 * per copy direction, OBS_AFTER_MEMSET for a memset; and, for
 * `iter:until:token`, OBS_AFTER_NO_TOKEN while the thread's generation has
 * read no token yet (or none has begun); for `iter:until:forward`,
 * OBS_AFTER_FIRST_FORWARD while it has begun at most one forward. */
#define OBS_AFTER_MEMSET 0x8000u
#define OBS_AFTER_NO_TOKEN 0x4000u
#define OBS_AFTER_FIRST_FORWARD 0x2000u

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

/* The phase of the first per-launch pattern matching, or OBS_PHASE_NONE.
 * Selectors are skipped, and so are kernel globs with conditions (their
 * answer depends on the launch: see obs_phase_rules_kernel_mask). */
uint8_t obs_phase_rules_match_kernel(const struct obs_phase_rules *r, const char *base_name);
uint8_t obs_phase_rules_match_memcpy(const struct obs_phase_rules *r, uint8_t direction);
uint8_t obs_phase_rules_match_memset(const struct obs_phase_rules *r);

/* Rules with conditions or selectors. A name's mask (computed once per
 * name: glob matching) has bit i set when pattern i is a kernel glob or an
 * `iter:glob` selector whose glob matches base_name. sized: whether a
 * launch of that name must evaluate conditions (a conditional per-launch
 * pattern comes before its first plain match). The launch and iteration
 * matchers then only compare integers. */
uint32_t obs_phase_rules_kernel_mask(const struct obs_phase_rules *r, const char *base_name);
bool obs_phase_rules_sized(const struct obs_phase_rules *r, uint32_t mask);
struct obs_launch_size obs_launch_size_of(uint64_t grid_blocks, uint64_t block_threads);

/* Whether a pattern's conditions hold for a launch of this size (six
 * compares: inline, on the launch path). */
static inline bool obs_phase_pattern_holds(const struct obs_phase_pattern *p, const struct obs_launch_size *size)
{
    return size->threads >= p->lo[0] && size->threads <= p->hi[0] && size->grid >= p->lo[1] &&
           size->grid <= p->hi[1] && size->block >= p->lo[2] && size->block <= p->hi[2];
}

/* The phase of the first per-launch kernel pattern in mask that holds for
 * a launch of this size, or OBS_PHASE_NONE. */
static inline uint8_t obs_phase_rules_match_launch(const struct obs_phase_rules *r, uint32_t mask,
                                                   const struct obs_launch_size *size)
{
    uint32_t m = mask & ~r->iter_mask;
    while (m != 0) {
        unsigned i = (unsigned)__builtin_ctz(m);
        m &= m - 1;
        if (i < r->count && obs_phase_pattern_holds(&r->patterns[i], size))
            return r->patterns[i].phase;
    }
    return OBS_PHASE_NONE;
}
/* The `iter:after:` selectors with [bytes] conditions that a copy of this
 * direction (kind OBS_PATTERN_MEMCPY) or a memset (OBS_PATTERN_MEMSET) of
 * this many bytes meets: bit i for pattern i (at each copy or memset, never
 * at a launch; 0 at once when the rules have none). */
uint32_t obs_phase_rules_transfer_bytes(const struct obs_phase_rules *r, uint8_t kind, uint8_t direction,
                                        uint64_t bytes);
/* The phase of the first selector that holds for an iteration whose first
 * launch has this mask and size (size NULL: a graph launch, no kernel
 * selector holds) after what `after` says came since the delimiter (and
 * `sized`, obs_phase_rules_transfer_bytes' bits of those copies and
 * memsets: for selectors with [bytes] conditions). */
uint8_t obs_phase_rules_match_iteration(const struct obs_phase_rules *r, uint32_t mask,
                                        const struct obs_launch_size *size, unsigned after);
/* The same, and *kind the kind of the selector that held (enum obs_pattern_kind). */
uint8_t obs_phase_rules_match_iteration_kind(const struct obs_phase_rules *r, uint32_t mask,
                                             const struct obs_launch_size *size, unsigned after, uint32_t sized,
                                             uint8_t *kind);

/* Glob match (iterative: linear backtracking to the last star). */
bool obs_glob_match(const char *glob, const char *text);

/* Base names of kernels: kernel_base_name.h. */
#include "trace/trace.h"

/* "PREFILL", "DECODE", "KV_GATHER", or "" */
const char *obs_phase_id_name(unsigned phase);

#endif
