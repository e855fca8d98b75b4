/* Automatic mode, shape (a): a thread that never copies between host and
 * device (the reference workload, graph loops captured at start-up) has
 * its decode step's unit learned from the launch stream: the shortest
 * period that repeats UNIT_MIN_REPEATS times back to back in one
 * iteration (docs/phases.md, "Shape (a)"). Once learned, its first kernel
 * opens each step and every kernel seen before it is the prompt's. */
#include "phase_state.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

void free_history(struct auto_state *a)
{
    if (a->history != NULL)
        munmap(a->history, HISTORY_CAP * sizeof *a->history);
    a->history = NULL;
}

/* Automatic mode, learned shape (a): roles from the repeating unit. */
bool step_learned(struct logic *l, uint8_t role, uint32_t name, bool graph, bool live)
{
    if (graph)
        return l->top == OBS_PHASE_DECODE;
    if (role == ROLE_PREFIX) {
        if (l->top != OBS_PHASE_PREFILL) {
            logic_move(l, MOVE_PROMPT, 0, 0);
            if (live)
                LOG_LAUNCH_DECISION(l, "new-generation", "prefix-kernel", name);
        }
    } else if (role == ROLE_OPENER) {
        if (l->top != OBS_PHASE_DECODE)
            logic_move(l, MOVE_DECODE, name, 0);
        else
            logic_move(l, MOVE_STEP, 0, 0);
        if (live)
            LOG_LAUNCH_DECISION(l, l->step == 0 ? "decode-starts" : "step", "opener-kernel", name);
    }
    return false;
}

/* Level 1: shape (a) found. */
static __attribute__((cold)) void log_learned(const struct phase_thread *p, uint32_t unit_start, uint32_t unit_len)
{
    const struct auto_state *a = &p->automatic;
    char unit[400];
    size_t used = 0;
    uint32_t i;
    unit[0] = '\0';
    for (i = 0; i < unit_len && used < sizeof unit - 12; i++)
        used += (size_t)snprintf(unit + used, sizeof unit - used, "%s%u", i ? "," : "",
                                 a->history[unit_start + i].token);
    obs_debug_write(OBS_DBG_PHASES,
                    "tid=%u call=%u learned because=unit-repeated-%u-times unit=%s opener=%u window=%u "
                    "relabelled_from_record=%llu gen=%u",
                    obs_thread_id(), obs_tls.call_counter, UNIT_MIN_REPEATS, unit, a->history[unit_start].token,
                    a->history_n, (unsigned long long)a->learn_first_index, p->logic.gen);
}


/* ---- learning shape (a) ------------------------------------------------------------------ */

/* Relabel the history with the learned roles: one RELABEL record per run
 * of launches with the same label. */
static void relabel_history(struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    struct logic l = {OBS_PHASE_NONE, false, 0, OBS_NO_STEP, 0};
    struct range run = {0, 0, 0, 0, 0};
    uint64_t first = UINT64_MAX, last = 0;
    uint32_t i;

    for (i = 0; i < a->history_n; i++) {
        const struct history_entry *e = &a->history[i];
        bool graph = e->token == GRAPH_TOKEN;
        bool steady_graph = step_learned(&l, graph ? ROLE_UNKNOWN : role_of(a, e->token), e->token, graph, false);
        struct range want[5], label;
        unsigned n = wanted(&l, !graph && (class_of(e->token) & CLASS_KV_DEFAULT), steady_graph, want);
        if (e->index == UINT64_MAX)
            continue;
        if (n == 0)
            label = (struct range){OBS_PHASE_NONE, OBS_NO_STEP, 0, 0, 0};
        else
            label = want[n - 1];
        if (label.phase == OBS_PHASE_DECODE && label.step == OBS_NO_STEP && n > 0)
            label.name = OBS_PHASE_NAME_STEADY;
        if (first != UINT64_MAX && same_range(&run, &label) && run.phase == label.phase) {
            last = e->index;
            continue;
        }
        if (first != UINT64_MAX && run.phase != OBS_PHASE_NONE)
            write_phase(OBS_PHASE_RELABEL, &run, first, last);
        run = label;
        first = last = e->index;
    }
    if (first != UINT64_MAX && run.phase != OBS_PHASE_NONE)
        write_phase(OBS_PHASE_RELABEL, &run, first, last);
    p->logic = l;
}

/* Shape (a) found: the unit of unit_len launches starting at history
 * entry unit_start. Set the roles (its first name opens a step, the rest of
 * the unit follows; every other name seen so far is the prefix, PREFILL),
 * relabel what came before, go on with the learned state. */
void learn_unit(struct phase_thread *p, uint32_t unit_start, uint32_t unit_len)
{
    struct auto_state *a = &p->automatic;
    uint32_t i;
    a->roles = map_zeroed(ROLE_CACHE);
    if (a->roles == NULL) {
        a->learn = GAVE_UP;
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=no-memory: shape (b) from here", obs_thread_id(),
                      obs_tls.call_counter);
        return;
    }
    for (i = 0; i < unit_len; i++) {
        uint32_t t = a->history[unit_start + i].token;
        if (t < ROLE_CACHE && a->roles[t] == ROLE_UNKNOWN)
            a->roles[t] = i == 0 ? ROLE_OPENER : ROLE_UNIT;
    }
    for (i = 0; i < a->history_n; i++) {
        uint32_t t = a->history[i].token;
        if (t < ROLE_CACHE && a->roles[t] == ROLE_UNKNOWN)
            a->roles[t] = ROLE_PREFIX;
    }
    relabel_history(p);
    a->learn_first_index = a->history_n > 0 ? a->history[0].index : UINT64_MAX;
    a->learn = LEARNED;
    if (obs_debug_on(OBS_DBG_PHASES, 1))
        log_learned(p, unit_start, unit_len);
    free_history(a);
}

/* Online: after appending history entry i (of the current segment), the
 * length of the periodic stretch ending at i for each period; the first
 * period whose stretch holds UNIT_MIN_REPEATS whole units is the unit.
 * Before the thread's first delimiter it is only noted: a prompt's layers
 * repeat too, and the copy or read that ends its iteration (a token loop)
 * must come first (on_delimiter takes the unit at the first delimiter). */
/* learn_online found the unit of `period` launches ending at history entry
 * i, its stretch run launches long: taken (true: learned) or, before the
 * thread's first delimiter, noted. */
static __attribute__((noinline)) bool unit_found(struct phase_thread *p, uint32_t i, uint32_t period, uint32_t run)
{
    struct auto_state *a = &p->automatic;
    if (a->had_delimiter) {
        learn_unit(p, i - run - period + 1, period);
        return true;
    }
    a->found_start = i - run - period + 1;
    a->found_len = period;
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u unit-noted unit_len=%u: taken at the first delimiter", obs_thread_id(),
                  obs_tls.call_counter, period);
    return false;
}

void learn_online(struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    uint32_t i = a->history_n - 1, seg_i = i - a->segment_start, period, limit;
    uint32_t token = a->history[i].token;
    /* A unit of one kernel repeated ([k, k]) is a plain loop, not a decode
     * step: the unit of `period` launches ending here is one kernel when the
     * last same_run launches were all this one. (Testing each unit's
     * launches instead cost a loop of one kernel ~13 000 instructions a
     * launch for its first 16 384 launches, callgrind on bench_loop.) */
    uint32_t same = a->same_run = i > 0 && a->history[i - 1].token == token ? a->same_run + 1 : 1;
    limit = seg_i < UNIT_MAX ? seg_i : UNIT_MAX;
    if (a->found_len == 0) {
        /* locals, and the rare case out of line: the loop is a load, a compare and a store a period */
        const struct history_entry *here = a->history + i;
        uint32_t *run = a->run;
        if (token != GRAPH_TOKEN && same > limit) {
            /* one kernel over every period's reach: each period's stretch grows, none is a unit */
            for (period = UNIT_MIN; period <= limit; period++)
                run[period]++;
            limit = 0;
        }
        for (period = UNIT_MIN; period <= limit; period++) {
            if (token != GRAPH_TOKEN && (here - period)->token == token) {
                uint32_t r = run[period] + 1;
                run[period] = r;
                if (obs_unlikely(r >= period * (UNIT_MIN_REPEATS - 1) && same < period)) {
                    if (unit_found(p, i, period, r))
                        return;
                    break; /* noted: the periods after it wait */
                }
            } else {
                run[period] = 0;
            }
        }
    }
    if (a->history_n >= HISTORY_CAP) {
        a->learn = GAVE_UP; /* shape (b), or nothing to learn: stay as we are */
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=window-full launches=%u: shape (b) from here",
                      obs_thread_id(), obs_tls.call_counter, HISTORY_CAP);
    }
}

void segment_ends(struct auto_state *a)
{
    a->segment_start = a->history_n;
    memset(a->run, 0, sizeof a->run);
}
