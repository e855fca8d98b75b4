/* The phase engine's one state machine (docs/phases.md, "The state
 * machine", draws it): a thread's logical state is where its launches are,
 * (top phase, generation, step or iteration), and only the moves declared
 * here change it. Both modes and shape (a) make the same moves; what
 * decides each move (the signals, the rules, the learned unit) is theirs.
 * The table says from which states each move may be made; a move from any
 * other is counted in obs_phase_bad_moves (t_phase_engine asserts none over
 * its whole corpus) and made anyway, so that the program is never
 * disturbed by the engine's own mistake. */
#ifndef OBS_PHASE_MACHINE_H
#define OBS_PHASE_MACHINE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/common.h"
#include "phase_ids.h"
#include "phase_rules.h"

#pragma GCC visibility push(hidden)

/* The state. top: OBS_PHASE_NONE (no generation open: before the first,
 * or after a warm-up's labels came off), PREFILL, DECODE or ITERATION. */
struct logic {
    uint8_t top;
    bool started;    /* a generation has begun */
    uint32_t gen;
    uint32_t step;   /* DECODE: the step (OBS_NO_STEP: DECODE/STEADY with no step); ITERATION: its number */
    uint32_t opener; /* DECODE: the name id that opened the current step (rules, shape (a)) */
};

enum logic_move {
    MOVE_PROMPT = 0,  /* -> PREFILL of the next generation (the thread's first: 0) */
    MOVE_DECODE,      /* NONE, PREFILL -> DECODE/STEP_0 (with no prompt seen: generation 0) */
    MOVE_STEP,        /* DECODE k -> DECODE k + 1 */
    MOVE_CHUNKS,      /* DECODE -> PREFILL of the same generation: its steps were the prompt's chunks */
    MOVE_REJOIN,      /* PREFILL g -> PREFILL g - 1: the generation just begun was the last one's step or chunk */
    MOVE_SERVING,     /* -> ITERATION k of generation g: a serving loop, found at its k-th forward */
    MOVE_ITERATION,   /* ITERATION k -> ITERATION k + 1 */
    MOVE_SERVING_GEN, /* -> ITERATION 0 of the next generation (an idle gap in a serving loop) */
    MOVE_FORGET,      /* -> NONE, no generation begun: what looked like one was a warm-up */
    MOVE_COUNT
};

#define FROM(s) (1u << (s))
#define FROM_ANY (FROM(OBS_PHASE_NONE) | FROM(OBS_PHASE_PREFILL) | FROM(OBS_PHASE_DECODE) | FROM(OBS_PHASE_ITERATION))

struct logic_move_rule {
    const char *name;
    uint8_t from; /* FROM() bits */
    uint8_t to;   /* the top phase after it */
};

static const struct logic_move_rule logic_moves[MOVE_COUNT] = {
    [MOVE_PROMPT] = {"prompt", FROM_ANY, OBS_PHASE_PREFILL},
    [MOVE_DECODE] = {"decode", FROM(OBS_PHASE_NONE) | FROM(OBS_PHASE_PREFILL), OBS_PHASE_DECODE},
    [MOVE_STEP] = {"step", FROM(OBS_PHASE_DECODE), OBS_PHASE_DECODE},
    [MOVE_CHUNKS] = {"chunks", FROM(OBS_PHASE_DECODE), OBS_PHASE_PREFILL},
    [MOVE_REJOIN] = {"rejoin", FROM(OBS_PHASE_PREFILL), OBS_PHASE_PREFILL},
    [MOVE_SERVING] = {"serving", FROM_ANY, OBS_PHASE_ITERATION},
    [MOVE_ITERATION] = {"iteration", FROM(OBS_PHASE_ITERATION), OBS_PHASE_ITERATION},
    [MOVE_SERVING_GEN] = {"serving-generation", FROM_ANY, OBS_PHASE_ITERATION},
    [MOVE_FORGET] = {"forget", FROM_ANY, OBS_PHASE_NONE},
};

/* Moves made from a state the table does not allow (0 on every case). */
extern _Atomic uint32_t obs_phase_bad_moves;

/* Make move m. arg: MOVE_DECODE the opener's name id, MOVE_SERVING the
 * iteration's number; gen: MOVE_SERVING's generation. */
static inline void logic_move(struct logic *l, enum logic_move m, uint32_t arg, uint32_t gen)
{
    if (obs_unlikely(!(logic_moves[m].from & FROM(l->top & 7u)) || (m == MOVE_REJOIN && l->gen == 0)))
        atomic_fetch_add_explicit(&obs_phase_bad_moves, 1, memory_order_relaxed);
    switch (m) {
    case MOVE_PROMPT:
        l->gen = l->started ? l->gen + 1 : 0;
        l->started = true;
        l->step = OBS_NO_STEP;
        break;
    case MOVE_DECODE:
        if (!l->started)
            l->gen = 0;
        l->started = true;
        l->step = 0;
        l->opener = arg;
        break;
    case MOVE_STEP:
    case MOVE_ITERATION:
        l->step = l->step == OBS_NO_STEP ? 0 : l->step + 1;
        break;
    case MOVE_CHUNKS:
        l->step = OBS_NO_STEP;
        break;
    case MOVE_REJOIN:
        l->gen = l->gen > 0 ? l->gen - 1 : 0;
        break;
    case MOVE_SERVING:
        l->started = true;
        l->gen = gen;
        l->step = arg;
        break;
    case MOVE_SERVING_GEN:
        l->gen = l->started ? l->gen + 1 : 0;
        l->started = true;
        l->step = 0;
        break;
    case MOVE_FORGET:
    default:
        *l = (struct logic){OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
        return;
    }
    l->top = logic_moves[m].to;
}

#undef FROM_ANY
#undef FROM

#pragma GCC visibility pop

#endif
