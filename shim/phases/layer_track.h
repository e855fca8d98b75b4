/* The layer tracker: LAYER/k inside each phase instance (docs/layers.md).
 * It keeps the current instance's launches, runs the layer finder on each
 * forward it holds (layer_finder.c), writes LAYER records, and follows the
 * last instance's template live. It feeds the structure model with
 * answers about the launches (has this forward run its whole stack, is the
 * next launch inside a layer) and takes no phase decision: with
 * OBS_LAYER=off it runs the same and writes nothing, so that phases never
 * move with it. The per-launch part is inline here (on the launch path);
 * the rest is layer_track.c. */
#ifndef OBS_LAYER_TRACK_H
#define OBS_LAYER_TRACK_H

#include "phase_state.h"

#pragma GCC visibility push(hidden)

/* Per thread: the current phase instance's launches (name ids, record
 * indexes), the finder's workspace, and per top phase (PREFILL, DECODE)
 * the live template learned from the last instance whose layers were
 * found: where its layers began and ended, as (kernel name, its count
 * since the previous boundary). A launch costs a store, the instance's
 * identity compared, and one compare with the next boundary's name. */
#define LAYER_SPAN_CAP 32768u   /* launches of one instance looked at */
#define LAYER_CUTS_MAX 1024u    /* layers of one instance */
#define LAYER_BOUNDS_MAX 1024u  /* boundaries of a template */
#define NO_BOUND_NAME (UINT32_MAX - 1u) /* no launch has it (graph launches: GRAPH_TOKEN) */

struct layer_bound {
    uint32_t name;   /* the launch's kernel name id */
    uint32_t occ;    /* its count since the previous boundary (this launch included) */
    uint32_t layer1; /* the layer it opens, + 1; 0: it closes the layer open */
};

struct layer_template {
    struct layer_bound b[LAYER_BOUNDS_MAX];
    uint32_t n;
    uint32_t anchor; /* the finder's anchor, tried first next time */
};

/* The kernel families a thread's decode steps launch after their stack (the
 * head, the sampling, the next step's input preparation), at most this many. */
#define STEP_TAIL_NAMES 64u

struct layer_track {
    bool emit; /* LAYER records and live LAYER/k ranges (OBS_LAYER=off: none; the structure still asks it) */
    /* the current instance */
    uint32_t *names;
    uint64_t *index;
    uint32_t n;
    uint32_t gen, step;
    uint8_t top;
    uint32_t seg;       /* the first launch not analysed yet: a token read ends a forward, analysed then */
    /* rules with OBS_STEP: the forward a token read ended is analysed once the launches after it show that
     * it ended (a step opens, a generation begins, the thread ends); a step that goes on drops it */
    bool due;
    uint32_t due_n;              /* the launches before the read */
    uint64_t due_next, due_t;    /* the record index after them, and the read's time */
    bool anew;                   /* the next launch begins an instance (layer_instance_anew) */
    /* live */
    const struct layer_template *live;
    uint32_t next_bound, occ, layer1;
    uint32_t next_name;   /* the next boundary's kernel, NO_BOUND_NAME: none (the one compare a launch makes) */
    uint32_t raw_step;    /* the logic's step as it was (the instance's identity, with gen and top) */
    uint32_t live_first[LAYER_CUTS_MAX]; /* the launches the live ranges opened at (position + 1; 0: none) */
    uint32_t live_n;
    uint32_t closed_at;   /* the position of the launch that closed the template's last layer, 0: none */
    uint64_t void_first, void_end; /* records whose labels came off [first, end): they get no layer either */
    uint32_t pass_layers; /* the layers of one pass the finder last found (a forward's), 0: none yet */
    /* the kernel families (name_family) the thread's decode steps that a step of their generation followed
     * launched after their stack, as the live template closed it; tail_full: more than STEP_TAIL_NAMES (then
     * none is said new) */
    uint32_t tail_names[STEP_TAIL_NAMES];
    uint32_t tail_nnames;
    bool tail_full;
    /* learned, by top phase: [0] PREFILL, [1] DECODE */
    struct layer_template tpl[2];
    bool tpl_known[2];
    struct obs_layer_cut cuts[LAYER_CUTS_MAX];
    struct obs_layer_work work;
    /* per top phase, the last forward analysed and what was found in it: a
     * forward with the same kernels in the same order (decode steps, mostly)
     * takes its layers with a compare instead of a search */
    uint32_t *memo_names[2];
    uint32_t memo_len[2];
    struct obs_layer_found memo_found[2];
    struct obs_layer_cut memo_cuts[2][LAYER_CUTS_MAX];
};

/* Whether the thread's next launch is inside a layer of the live template
 * (the last launch opened or continued one and no boundary closed it): the
 * layer tracker's answer to the structure (a gather inside a mixture of
 * experts' layer begins no forward). No template yet, or none kept: no. */
static inline bool layer_inside(const struct layer_track *lt)
{
    return lt != NULL && !lt->anew && lt->layer1 != 0; /* anew: the next launch begins an instance, in no layer */
}

/* A launch in another phase instance than the last: the last one's layers
 * (unless found already), then the new one's live template (layer_track.c). */
__attribute__((noinline)) void layer_instance_changed(struct layer_track *lt, const struct logic *l);

/* A launch of the next boundary's kernel: the boundary when it is the
 * count-th since the one before. */
static inline void layer_bound_seen(struct layer_track *lt)
{
    const struct layer_bound *b = &lt->live->b[lt->next_bound];
    if (++lt->occ != b->occ)
        return;
    lt->layer1 = b->layer1;
    lt->occ = 0;
    if (b->layer1 != 0 && lt->live_n < LAYER_CUTS_MAX)
        lt->live_first[lt->live_n++] = lt->n - lt->seg + 1; /* within the forward being followed */
    lt->next_name = ++lt->next_bound < lt->live->n ? b[1].name : NO_BOUND_NAME;
    if (b->layer1 == 0 && lt->next_bound >= lt->live->n)
        lt->closed_at = lt->n; /* the stack the template follows is over */
}

/* Per launch, before its ranges are moved: the instance it is in (unless
 * the launch before had the same generation, phase and step), its live
 * layer, its name kept for the analysis. Returns the live layer + 1. */
static inline uint32_t layer_launch(struct layer_track *lt, const struct logic *l, uint32_t name, bool same_logic)
{
    uint32_t n;
    if (!same_logic && (lt->anew || l->gen != lt->gen || l->step != lt->raw_step || l->top != lt->top))
        layer_instance_changed(lt, l);
    /* outside a phase (top NONE): no template (next_name never matches), layer1 0, and the names kept are
     * never analysed (layer_analyse looks at no NONE instance): no test needed here */
    if (obs_unlikely(name == lt->next_name))
        layer_bound_seen(lt);
    n = lt->n;
    lt->names[n] = name; /* past the cap: into the spare slot, not counted */
    lt->index[n] = obs_thread_next_index(); /* its CALL record's, unless ranges move (layer_launch_moved) */
    lt->n = n + (n < LAYER_SPAN_CAP);
    return lt->emit ? lt->layer1 : 0;
}

/* After the launch's ranges moved (PHASE records written before its CALL): its record index. */
static inline void layer_launch_moved(struct layer_track *lt)
{
    if (lt->n > 0 && lt->top != OBS_PHASE_NONE)
        lt->index[lt->n - 1] = obs_thread_next_index();
}

/* A generation's last decode step, as the next generation begins (before
 * the launch that begins it is counted): the record index of the step's
 * first launch after its stack of a kernel family (its base name) no
 * decode step of the thread launched after its own where a step followed
 * (decode steps repeat one another: a kernel new there is the program's
 * own work after its loop, a detokeniser's torch.cat), or UINT64_MAX:
 * none, or not known. */
uint64_t layer_last_step_departs(const struct layer_track *lt);

int name_is_norm(uint32_t id);
void write_layer(const struct layer_track *lt, uint32_t layer, uint32_t pass, uint32_t layers, uint64_t first,
                 uint64_t last, uint64_t t);
void layer_analyse(struct layer_track *lt, const char *because);
void layer_read_seen(struct layer_track *lt, uint64_t now);
void layer_due_run(struct layer_track *lt);
uint32_t layer_stack_end(struct layer_track *lt, uint32_t since);

#pragma GCC visibility pop

#endif
