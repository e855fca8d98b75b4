/* The structure model's launch path (automatic mode): the per-launch part
 * inline, for the launch wrapper's path; the decisions at an iteration's
 * or a forward's first launch, learning and the marks' record indexes out
 * of line in phase_forwards.c. */
#ifndef OBS_PHASE_FORWARDS_H
#define OBS_PHASE_FORWARDS_H

#include "layer_track.h"

#pragma GCC visibility push(hidden)

__attribute__((noinline)) void auto_boundary(struct phase_thread *p, uint32_t name, uint8_t cls,
                                             const struct obs_rec_call *rec, bool graph, bool new_segment);
__attribute__((noinline)) void auto_learn_launch(struct phase_thread *p, uint32_t name, bool new_segment);
__attribute__((noinline)) void auto_marks_stored(struct auto_state *a, const struct obs_hooked_call *c);

/* What came in since the last launch or token read is the next forward's: forgotten once it began. */
static inline void forget_window(struct token_loop *t)
{
    t->window_dirty = false;
    t->window_htod = 0;
    t->window_memset = false;
    t->window_first_index = UINT64_MAX;
}

/* A launch: the learned state moves (shape (a)), or at an iteration's first
 * launch, or at an embedding lookup (or a graph launch of a thread whose
 * forwards began) that may begin a forward, the structure's decisions;
 * every launch counts in its forward and ends the window of what came in
 * before it. Returns true for a graph launch inside shape (a)'s decode. */
static inline bool auto_launch(struct phase_thread *p, uint32_t name, uint8_t cls, const struct obs_rec_call *rec,
                               bool graph, bool new_segment)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool steady_graph = false;
    if (a->learn == LEARNED)
        steady_graph = step_learned(&p->logic, role_of(a, name), name, graph, true);
    else if (new_segment || (graph ? t->forwards : (cls & (CLASS_EMBED | CLASS_GATHER)) && !t->prev_embed))
        auto_boundary(p, name, cls, rec, graph, new_segment);
    t->prev_embed = !graph && (cls & (CLASS_EMBED | CLASS_GATHER));
    t->fwd_launches++;
    if (obs_unlikely(t->window_dirty))
        forget_window(t);
    t->iter_launched = true;
    if (obs_unlikely(a->learn == LEARNING))
        auto_learn_launch(p, name, new_segment);
    return steady_graph;
}

/* After a launch is stored. */
static inline void auto_launch_stored(struct auto_state *a, const struct obs_hooked_call *c)
{
    if (obs_unlikely(a->learn == LEARNING || a->marks != 0))
        auto_marks_stored(a, c);
}

#pragma GCC visibility pop

#endif
