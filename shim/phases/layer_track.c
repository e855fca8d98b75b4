/* The layer tracker (layer_track.h): a phase instance's launches kept,
 * the layer finder run on each of its forwards, LAYER records, the live
 * template learned; the answers the structure model asks of it; a graph's
 * kernel nodes' layers at instantiation (docs/layers.md). */
#include "layer_track.h"

#include <stdlib.h>
#include <string.h>

#include "graph_layers.h"

int name_is_norm(uint32_t id)
{
    return id < CLASS_CACHE && (class_of(id) & CLASS_NORM) != 0;
}

/* The tables behind a thread's layer_track, in one mapping after it. */
size_t layer_track_bytes(void)
{
    return sizeof(struct layer_track) + (LAYER_SPAN_CAP + 1u) * (sizeof(uint32_t) + sizeof(uint64_t)) +
           4u * OBS_LAYER_NAME_IDS * sizeof(uint32_t) + 5u * LAYER_SPAN_CAP * sizeof(uint32_t);
}

struct layer_track *layer_track_new(bool emit)
{
    struct layer_track *lt = map_zeroed(layer_track_bytes());
    uint8_t *p;
    if (lt == NULL)
        return NULL;
    lt->emit = emit;
    p = (uint8_t *)(lt + 1);
    lt->index = (uint64_t *)p;
    p += (LAYER_SPAN_CAP + 1u) * sizeof(uint64_t); /* one spare: a launch past the cap is stored there, unkept */
    lt->names = (uint32_t *)p;
    p += (LAYER_SPAN_CAP + 1u) * sizeof(uint32_t);
    lt->work.count = (uint32_t *)p;
    lt->work.stamp = lt->work.count + OBS_LAYER_NAME_IDS;
    lt->work.first = lt->work.stamp + OBS_LAYER_NAME_IDS;
    lt->work.last = lt->work.first + OBS_LAYER_NAME_IDS;
    lt->work.next = lt->work.last + OBS_LAYER_NAME_IDS;
    lt->work.distinct = lt->work.next + LAYER_SPAN_CAP;
    lt->work.occ = lt->work.distinct + LAYER_SPAN_CAP;
    lt->memo_names[0] = lt->work.occ + LAYER_SPAN_CAP;
    lt->memo_names[1] = lt->memo_names[0] + LAYER_SPAN_CAP;
    lt->work.cap = LAYER_SPAN_CAP;
    lt->work.norm_like = name_is_norm;
    lt->work.start_named = obs_engine.set.have_layer_rule;
    lt->top = OBS_PHASE_NONE;
    lt->step = OBS_NO_STEP;
    lt->gen = UINT32_MAX; /* the first launch begins an instance */
    lt->next_name = NO_BOUND_NAME;
    return lt;
}

void write_layer(const struct layer_track *lt, uint32_t layer, uint32_t pass, uint32_t layers, uint64_t first,
                        uint64_t last, uint64_t t)
{
    union obs_record rec; /* every field set: struct obs_rec_layer is the whole record, with no padding */
    if (!lt->emit)
        return;
    if (layer != OBS_NO_LAYER && last >= lt->void_first && first < lt->void_end) {
        /* an instance analysed after its labels came off (a warm-up's): the calls keep no layer */
        if (first >= lt->void_first && last < lt->void_end)
            return;
        if (first < lt->void_first)
            last = lt->void_first - 1;
        else
            first = lt->void_end;
    }
    rec.layer.type = OBS_REC_LAYER;
    rec.layer.event = OBS_LAYER_LABEL;
    rec.layer.phase = lt->top;
    rec.layer.layer = layer;
    rec.layer.t = t;
    rec.layer.generation = lt->gen;
    rec.layer.step = lt->step;
    rec.layer.first_index = first;
    rec.layer.last_index = last;
    rec.layer.pass = pass;
    rec.layer.layers = layers;
    obs_recorder_append(&rec);
}

/* The live template from the layers found: each layer's first launch
 * opens it, the launch after a pass's last layer closes it. */
static void learn_template(struct layer_template *t, const uint32_t *names, uint32_t n,
                           const struct obs_layer_cut *cuts, uint32_t ncuts, uint32_t anchor)
{
    uint32_t i, from = 0, nb = 0;
    for (i = 0; i < ncuts && nb + 1 < LAYER_BOUNDS_MAX; i++) {
        uint32_t at = cuts[i].first, close = cuts[i].last + 1, j, occ = 0;
        bool last_of_pass = i + 1 == ncuts || cuts[i + 1].pass != cuts[i].pass;
        for (j = from; j <= at; j++)
            occ += names[j] == names[at];
        t->b[nb++] = (struct layer_bound){names[at], occ, cuts[i].layer + 1};
        from = at + 1;
        if (last_of_pass && close < n && !(i + 1 < ncuts && cuts[i + 1].first == close)) {
            for (occ = 0, j = from; j <= close; j++)
                occ += names[j] == names[close];
            t->b[nb++] = (struct layer_bound){names[close], occ, 0};
            from = close + 1;
        }
    }
    t->n = nb;
    t->anchor = anchor;
}

/* Whether the live ranges opened where the layers were found. */
static bool live_matched(const struct layer_track *lt, uint32_t ncuts)
{
    uint32_t i;
    if (lt->live_n != ncuts)
        return false;
    for (i = 0; i < ncuts; i++)
        if (lt->live_first[i] != lt->cuts[i].first + 1)
            return false;
    return true;
}

/* The instance's layers: found, written as LAYER records, learned for the
 * next instance of its kind. At a token read (the forward is over) or when
 * the instance ends. */
static __attribute__((noinline)) void layer_analyse_to(struct layer_track *lt, uint32_t end, uint64_t next,
                                                       uint64_t now, const char *because)
{
    unsigned kind = lt->top == OBS_PHASE_PREFILL ? 0u : 1u;
    struct obs_layer_found f;
    uint32_t i, in_pass = 0, base = lt->seg, len = end > lt->seg ? end - lt->seg : 0;
    bool matched, same = false;
    if (len == 0 || lt->top == OBS_PHASE_NONE)
        return;
    if (len == lt->memo_len[kind] && memcmp(lt->names + base, lt->memo_names[kind], len * sizeof *lt->names) == 0) {
        f = lt->memo_found[kind]; /* the same forward as the last: the same layers */
        same = true;
        memcpy(lt->cuts, lt->memo_cuts[kind], f.layers * sizeof *lt->cuts);
    } else {
        f = obs_layers_find(lt->names + base, len, lt->tpl_known[kind] ? lt->tpl[kind].anchor : UINT32_MAX, &lt->work,
                            lt->cuts, LAYER_CUTS_MAX);
        if (f.layers > 0) { /* a forward (not the few launches after a token read) */
            memcpy(lt->memo_names[kind], lt->names + base, len * sizeof *lt->names);
            lt->memo_len[kind] = len;
            lt->memo_found[kind] = f;
            memcpy(lt->memo_cuts[kind], lt->cuts, f.layers * sizeof *lt->cuts);
        }
    }
    for (i = 0; i < f.layers; i++) {
        const struct obs_layer_cut *c = &lt->cuts[i];
        uint64_t first = lt->index[base + c->first];
        uint64_t last = base + c->last + 1 < end ? lt->index[base + c->last + 1] - 1 : next - 1;
        if (c->layer == 0) { /* a new pass: how many layers it has */
            for (in_pass = 1; i + in_pass < f.layers && lt->cuts[i + in_pass].layer != 0; in_pass++)
                ;
            lt->pass_layers = in_pass;
        }
        if (first != UINT64_MAX && next != UINT64_MAX && last >= first && last < next)
            write_layer(lt, c->layer, c->pass, in_pass, first, last, now);
    }
    matched = live_matched(lt, f.layers);
    if (f.layers > 0 && !(matched && lt->live == &lt->tpl[kind])) { /* a template that matched stays as it is */
        learn_template(&lt->tpl[kind], lt->names + base, len, lt->cuts, f.layers, f.anchor);
        lt->tpl_known[kind] = true;
    }
    /* the next forward (a prompt's next chunk) is found, and followed live, from here */
    lt->seg = end;
    lt->next_bound = lt->occ = lt->layer1 = lt->live_n = 0;
    lt->next_name = lt->live != NULL && lt->live->n > 0 ? lt->live->b[0].name : NO_BOUND_NAME;
    if (obs_debug_on(OBS_DBG_PHASES, 2)) {
        struct logic l = {lt->top, true, lt->gen, lt->step, 0};
        log_decision(&l, "layers", because, " layers=%u passes=%u anchor=%u launches=%u same_as_last=%d live=%s",
                     f.layers, f.passes, f.anchor, len, same,
                     lt->live == NULL ? "none" : matched ? "matched" : "differed");
    }
}

void layer_analyse(struct layer_track *lt, const char *because)
{
    layer_analyse_to(lt, lt->n, obs_thread_next_index(), obs_now_ns(), because);
}

/* Rules with OBS_STEP: a token read may end a forward; the analysis waits
 * for the launches after it (layer_due_run at the next instance, the
 * thread's end or the process's exit): the step's last read is where its
 * forward ended. */
void layer_read_seen(struct layer_track *lt, uint64_t now)
{
    if (lt->n <= lt->seg)
        return;
    lt->due = true;
    lt->due_n = lt->n;
    lt->due_next = obs_thread_next_index();
    lt->due_t = now;
}

/* The forward the read ended: it did (its layers, as at the read). */
static void layer_analyse_due(struct layer_track *lt)
{
    lt->due = false;
    layer_analyse_to(lt, lt->due_n, lt->due_next, lt->due_t, "token-read");
}

void layer_due_run(struct layer_track *lt)
{
    if (lt->due)
        layer_analyse_due(lt);
}

/* The structure's question to the layer tracker: has the forward that
 * began `since` launches ago in the current instance run its whole stack?
 * Yes when the live template closed its last layer within those launches;
 * else the layer finder, on those launches, must find at least as many
 * layers as the thread's forwards have (3 before any was found: the
 * finder's least) and the last of them must end before the last launch.
 * Returns the launches from the forward's start to right after its stack,
 * 0: not over. Asked only at an embedding lookup that may begin the next
 * forward, and where no template answers (off the launch path). */
uint32_t layer_stack_end(struct layer_track *lt, uint32_t since)
{
    uint32_t from, n, want;
    struct obs_layer_found f;
    if (lt == NULL)
        return since > 0 ? since : 1; /* no tracker: every lookup may begin a forward */
    n = lt->n;
    from = n > since ? n - since : 0;
    if (from < lt->seg)
        from = lt->seg;
    if (lt->closed_at > from)
        return lt->closed_at - from;
    want = lt->pass_layers > STACK_LAYERS_MIN ? lt->pass_layers : STACK_LAYERS_MIN;
    if (n - from < want)
        return 0;
    f = obs_layers_find(lt->names + from, n - from, UINT32_MAX, &lt->work, lt->cuts, LAYER_CUTS_MAX);
    if (f.layers < want || lt->cuts[f.layers - 1].last + 1 >= n - from)
        return 0;
    return lt->cuts[f.layers - 1].last + 1;
}

/* A graph's kernel nodes' layers, found by the layer finder as in a phase
 * instance (obs_phase_graph_layers in phase_engine.c says when). Live
 * ranges are not touched: a graph launch stays one launch at step level
 * (its nodes run on the device with no host call to open a range at). */
void layer_graph_nodes(struct phase_thread *p, struct obs_graph_walk *w)
{
    uint32_t hint = UINT32_MAX;
    struct obs_layer_found f;
    uint16_t *layer;
    if (w->incomplete || w->order_cut || w->norder == 0 || w->layer != NULL)
        return;
    layer = malloc(w->norder * sizeof *layer);
    if (layer == NULL)
        return;
    if (p != NULL && p->layers != NULL && p->layers->tpl_known[1])
        hint = p->layers->tpl[1].anchor; /* a graph replays a decode step, mostly */
    f = obs_graph_node_layers(w->order, w->norder, hint, name_is_norm, obs_engine.set.have_layer_rule, layer);
    OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u graph-layers kernel_nodes=%u layers=%u passes=%u anchor=%u hint=%u",
                  obs_thread_id(), obs_tls.call_counter, w->norder, f.layers, f.passes, f.anchor, hint);
    if (f.layers == 0) {
        free(layer);
        return;
    }
    w->layer = layer;
}

/* Whether the current instance (the one ending, when a new one is due) is a
 * decode step whose stack the live template closed, its launches all kept. */
static bool step_tail_seen(const struct layer_track *lt)
{
    return lt->top == OBS_PHASE_DECODE && lt->closed_at != 0 && lt->closed_at <= lt->n &&
           lt->n < LAYER_SPAN_CAP;
}

static bool tail_has(const struct layer_track *lt, uint32_t family)
{
    uint32_t i;
    for (i = 0; i < lt->tail_nnames; i++)
        if (lt->tail_names[i] == family)
            return true;
    return false;
}

/* A decode step ends and the next step of its generation begins: the
 * kernel families it launched after its stack. */
static void keep_step_tail(struct layer_track *lt)
{
    uint32_t j;
    if (!step_tail_seen(lt))
        return;
    for (j = lt->closed_at; j < lt->n && !lt->tail_full; j++) {
        uint32_t f = name_family(lt->names[j]);
        if (tail_has(lt, f))
            continue;
        if (lt->tail_nnames < STEP_TAIL_NAMES)
            lt->tail_names[lt->tail_nnames++] = f;
        else
            lt->tail_full = true;
    }
}

uint64_t layer_last_step_departs(const struct layer_track *lt)
{
    uint32_t j;
    if (lt == NULL || lt->tail_nnames == 0 || lt->tail_full || !step_tail_seen(lt))
        return UINT64_MAX;
    for (j = lt->closed_at; j < lt->n; j++)
        if (!tail_has(lt, name_family(lt->names[j])))
            return lt->index[j];
    return UINT64_MAX;
}

/* A launch in another phase instance than the last: the last one's layers
 * (unless found already), then the new one's live template. */
__attribute__((noinline)) void layer_instance_changed(struct layer_track *lt, const struct logic *l)
{
    unsigned kind = l->top == OBS_PHASE_PREFILL ? 0u : 1u;
    if (lt->top == OBS_PHASE_DECODE && l->top == OBS_PHASE_DECODE && l->gen == lt->gen)
        keep_step_tail(lt); /* the next step of the generation */
    layer_due_run(lt);
    if (lt->n > lt->seg)
        layer_analyse(lt, "instance-ended");
    lt->n = lt->seg = 0;
    lt->anew = false;
    lt->gen = l->gen;
    lt->top = l->top;
    lt->raw_step = l->step;
    lt->step = l->top == OBS_PHASE_DECODE ? l->step : OBS_NO_STEP;
    lt->live = l->top != OBS_PHASE_NONE && lt->tpl_known[kind] ? &lt->tpl[kind] : NULL;
    lt->next_bound = lt->occ = lt->layer1 = lt->live_n = lt->closed_at = 0;
    lt->next_name = lt->live != NULL && lt->live->n > 0 ? lt->live->b[0].name : NO_BOUND_NAME;
}

/* A step opens, or a generation is taken back: the next launch begins a new
 * instance even where its generation, phase and step are those of the
 * current one (a prompt's last chunk read as step 0, then the real step 0). */
void layer_instance_anew(struct phase_thread *p)
{
    if (p->layers != NULL)
        p->layers->anew = true; /* its generation stays: the instance ending is analysed under it */
    p->last_want.valid = false; /* the next launch compares the instance */
}


/* A prompt's next chunk begins in the same instance: the layers of the
 * forward before are found now, and the next one is followed from here. */
void layer_forward_ended(struct phase_thread *p)
{
    if (p->layers != NULL && p->layers->n > p->layers->seg)
        layer_analyse(p->layers, "forward");
}
