/* OBS_PHASES / OBS_STEP rules, applied per call (docs/phases.md, "Rules"):
 * the class a launch counts as (its name's rule, an iteration's selector,
 * a sized pattern's condition), the decode's steps from OBS_STEP or from
 * token reads, copies and memsets the rules name, and a warm-up's labels
 * taken off at the first copy in. The rules' grammar is phase_rules.c. */
#include "layer_track.h"


/* Whether the rules hold an `iter:until:forward` selector of PREFILL (asked
 * once a forward, at an OBS_STEP launch in a selected PREFILL iteration). */
static bool rules_bound_prompts_by_forward(void)
{
    const struct obs_phase_rules *rules = &obs_engine.set.rules;
    for (unsigned i = 0; i < rules->count; i++)
        if (rules->patterns[i].kind == OBS_PATTERN_UNTIL_FORWARD && rules->patterns[i].phase == OBS_PHASE_PREFILL)
            return true;
    return false;
}

/* Rules with OBS_STEP, as the automatic mode's "generation 0 read
 * nothing back": a thread's generation 0 that ran a forward (an OBS_STEP
 * launch), read nothing back from the device and is still a prompt when
 * a forward begins (an OBS_STEP launch) with an iteration an `iter:after:`
 * selector picks (its inputs came in, after a host delimiter) was a
 * warm-up (forwards run before a decode step is captured into a graph,
 * after the weights came in: each copies its input in and syncs, and
 * reads nothing). Copies and syncs inside a prompt's forward (Hugging
 * Face's static cache made layer by layer) begin no forward; a prompt's
 * chunks copied in one by one do, and read nothing either, so a first
 * prompt in such chunks keeps only its last (docs/phases.md, "Rules").
 * Its labels come off in the trace (live they carried a PREFILL range);
 * this launch begins generation 0. */
static __attribute__((noinline, cold)) void rules_warm_up(struct phase_thread *p, uint32_t name)
{
    struct rules_state *r = &p->rules;
    uint64_t from = r->first_index;
    unlabel_since(from);
    logic_move(&p->logic, MOVE_FORGET, 0, 0);
    move_to(p, NULL, 0);
    r->first_index = UINT64_MAX;
    r->marks |= RULES_MARK_FIRST; /* this launch: generation 0's first */
    r->gen_forwards = 0;
    OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u warm-up gen=0 because=generation-0-read-nothing-back-and-inputs-came-in "
                  "name=%u unlabelled_from_record=%llu; this launch begins generation 0",
                  obs_thread_id(), obs_tls.call_counter, name, (unsigned long long)from);
}

/* OBS_PHASES rules. Returns true for a graph launch inside the decode.
 * With OBS_STEP, only a launch it matches opens the decode (and each step);
 * without it, a step opens at the first launch after a token read, or, in
 * a thread that has read none, after a host delimiter or at a launch of the
 * kernel that opened the current step. */
bool step_rules_mode(struct phase_thread *p, uint8_t cls, uint32_t name, bool graph, bool new_segment)
{
    struct logic *l = &p->logic;
    struct rules_state *r = &p->rules;
    uint8_t phase = cls & CLASS_PHASE_MASK;
    bool had_started = l->started;
    /* a token loop replaying its step as a graph: the graph launch opens the next step. Without OBS_STEP,
     * the launch right after the token read; with it (naming the kernel a forward begins with, which a
     * replayed forward launches none of), the first graph launch after the token read of the prompt or
     * the step, a fill of the graph's inputs before it staying where it is */
    if (graph && r->ever_token_read && (l->top == OBS_PHASE_DECODE || l->top == OBS_PHASE_PREFILL) &&
        (obs_engine.set.have_step_rule ? r->gen_token_read && r->step_armed : r->after_token)) {
        if (l->top == OBS_PHASE_DECODE)
            logic_move(l, MOVE_STEP, 0, 0);
        else
            logic_move(l, MOVE_DECODE, name, 0);
        r->step_armed = false;
        r->iter_stepped = true;
        LOG_LAUNCH_DECISION(l, l->step == 0 ? "decode-starts" : "step", "graph-launch-after-token-read", name);
        return false;
    }
    if (graph) /* in a token loop, a graph launch inside a step is one of the step's */
        return l->top == OBS_PHASE_DECODE && !r->ever_token_read;
    bool second_forward = false;
    if (phase == OBS_PHASE_PREFILL && l->top == OBS_PHASE_PREFILL && (cls & CLASS_STEP) &&
        r->iter_phase == OBS_PHASE_PREFILL && r->gen_forwards >= 1 &&
        !(new_segment && r->gen_token_read && (r->iter_kind == OBS_PATTERN_MEMCPY || r->iter_kind == OBS_PATTERN_MEMSET)) &&
        rules_bound_prompts_by_forward()) {
        /* iter:until:forward: the prompt's generation begins its second
         * forward (the first, the prompt's, began at the last OBS_STEP
         * launch): the PREFILL selection ends, whichever selector made it;
         * this launch and the rest of the iteration go by their patterns */
        r->iter_phase = OBS_PHASE_NONE;
        cls = r->unselected_cls;
        phase = cls & CLASS_PHASE_MASK;
        second_forward = true;
    }
    if (phase == OBS_PHASE_PREFILL) {
        /* an iteration iter:after: selects after the generation's token read is the next prompt (its
         * inputs came in); a size selector's, a chunk of this one */
        bool after_copy = new_segment && r->iter_phase == OBS_PHASE_PREFILL &&
                          (r->iter_kind == OBS_PATTERN_MEMCPY || r->iter_kind == OBS_PATTERN_MEMSET);
        bool next_prompt = after_copy && r->gen_token_read;
        if (after_copy && !next_prompt && (cls & CLASS_STEP) && l->started && l->top == OBS_PHASE_PREFILL &&
            l->gen == 0 && r->gen_forwards >= 1 && !r->read_back && r->first_index != UINT64_MAX)
            rules_warm_up(p, name); /* generation 0 begins here, as the automatic mode's */
        if (l->top != OBS_PHASE_PREFILL || next_prompt) {
            const char *why = l->top == OBS_PHASE_PREFILL ? "selected-iteration-after-token-read" : "rule-PREFILL";
            logic_move(l, MOVE_PROMPT, 0, 0);
            r->gen_token_read = false;
            r->gen_forwards = 0;
            LOG_LAUNCH_DECISION(l, "new-generation", why, name);
        }
    } else if (phase == OBS_PHASE_DECODE || phase == OBS_PHASE_KV_GATHER || (cls & CLASS_STEP)) {
        if (l->top != OBS_PHASE_DECODE) {
            if (obs_engine.set.have_step_rule && !(cls & CLASS_STEP))
                return false; /* OBS_STEP opens the decode: this stays where it is */
            logic_move(l, MOVE_DECODE, name, 0);
            r->step_armed = false;
            r->iter_stepped = (cls & CLASS_STEP) != 0;
            LOG_LAUNCH_DECISION(l, "decode-starts", second_forward                ? "second-forward"
                                                    : phase == OBS_PHASE_KV_GATHER ? "rule-KV_GATHER"
                                                    : phase == OBS_PHASE_DECODE    ? "rule-DECODE"
                                                                                   : "OBS_STEP",
                                name);
        } else if (obs_engine.set.have_step_rule) {
            /* in a generation that reads tokens, one step per token read:
             * the first OBS_STEP launch after it (a kernel may run twice a
             * step); one that has read none (tokens kept on the device, the
             * last generation's output read at its end) steps at each */
            if ((cls & CLASS_STEP) && (!r->gen_token_read || r->step_armed)) {
                logic_move(l, MOVE_STEP, 0, 0);
                l->opener = name;
                r->step_armed = false;
                r->iter_stepped = true;
                LOG_LAUNCH_DECISION(l, "step", "OBS_STEP", name);
            }
        } else if (r->ever_token_read ? r->after_token : new_segment || name == l->opener) {
            logic_move(l, MOVE_STEP, 0, 0);
            LOG_LAUNCH_DECISION(l, "step",
                                r->ever_token_read ? "first-launch-after-token-read"
                                : new_segment      ? "first-launch-after-delimiter"
                                                   : "opener-kernel-again",
                                name);
        }
    }
    if ((cls & CLASS_STEP) && r->gen_forwards < 2)
        r->gen_forwards++; /* a forward begins (iter:until:forward) */
    if (!had_started && l->started)
        r->marks |= RULES_MARK_FIRST;
    /* a decode iteration that begins with no step opened since the token
     * read (or, in a generation that reads none, any): if it reads a token
     * still with none opened in it, it was no step (rules_delimiter) */
    if (new_segment && (r->step_armed || !r->gen_token_read) && obs_engine.set.have_step_rule &&
        l->top == OBS_PHASE_DECODE && !r->iter_stepped)
        r->marks |= RULES_MARK_ITER;
    return false;
}

/* Rules with conditions or selectors: which kernel patterns' globs a name
 * matches (obs_phase_rules_kernel_mask), per name id, computed once. */
static uint32_t rules_mask_of(uint32_t id)
{
    _Atomic uint32_t *masks = obs_engine.names.rules_masks;
    uint32_t m = id < CLASS_CACHE && masks != NULL ? atomic_load_explicit(&masks[id], memory_order_relaxed) : 0;
    char base[256];
    if (obs_likely(m != 0))
        return m;
    base_name_of(id, base, sizeof base); /* slow path: once per name id */
    m = obs_phase_rules_kernel_mask(&obs_engine.set.rules, base);
    if (id < CLASS_CACHE && masks != NULL)
        atomic_store_explicit(&masks[id], m, memory_order_relaxed);
    return m;
}

/* Rules: the class a launch counts as. At an iteration's first launch the
 * selectors choose the iteration's phase, which every launch of it takes;
 * otherwise a sized name's phase comes from its patterns' conditions. */
uint8_t rules_class(struct rules_state *r, bool started, uint8_t cls, const struct obs_rec_call *rec,
                           bool graph)
{
    const struct obs_phase_rules *rules = &obs_engine.set.rules;
    struct obs_launch_size size = {0, 0, 0};
    uint32_t mask = 0;
    if (!graph && ((cls & CLASS_SIZED) || (!r->iter_open && (cls & CLASS_ITER)))) {
        mask = rules_mask_of(rec->name);
        size = obs_launch_size_of((uint64_t)rec->u.grid.x * rec->u.grid.y * rec->u.grid.z,
                                  (uint64_t)rec->block_x * rec->block_y * rec->block_z);
    }
    if (!r->iter_open) {
        r->iter_open = true;
        /* with iter:until:forward, no prompt goes on past its generation's
         * second forward: iter:until:token neither (a generation that
         * reads no token) */
        bool first_forward = !started || r->gen_forwards < 2;
        bool no_token = (!started || !r->gen_token_read) && (first_forward || !rules_bound_prompts_by_forward());
        unsigned after = r->iter_after | (no_token ? OBS_AFTER_NO_TOKEN : 0u) |
                         (first_forward ? OBS_AFTER_FIRST_FORWARD : 0u);
        r->iter_phase = rules->iter_mask == 0 ? OBS_PHASE_NONE
                        : obs_phase_rules_match_iteration_kind(rules, cls & CLASS_ITER ? mask : 0,
                                                               graph ? NULL : &size, after, r->iter_after_bytes,
                                                               &r->iter_kind);
        if (r->iter_phase != OBS_PHASE_NONE)
            OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u iteration-selected phase=%s because=selector after=0x%x",
                          obs_thread_id(), obs_tls.call_counter, phase_names[r->iter_phase & 3],
                          after);
    }
    if (r->iter_phase != OBS_PHASE_NONE) {
        if (r->iter_phase == OBS_PHASE_PREFILL && (cls & CLASS_STEP) && !graph) /* for iter:until:forward */
            r->unselected_cls = (cls & CLASS_SIZED)
                                    ? (uint8_t)((cls & ~CLASS_PHASE_MASK) | obs_phase_rules_match_launch(rules, mask, &size))
                                    : cls;
        return (uint8_t)((cls & ~CLASS_PHASE_MASK) | r->iter_phase);
    }
    if (cls & CLASS_SIZED)
        return (uint8_t)((cls & ~CLASS_PHASE_MASK) | obs_phase_rules_match_launch(rules, mask, &size));
    return cls;
}

/* A copy or memset that rules name: it takes its phase (its iteration's,
 * inside an iteration a selector chose) without opening a step. Any copy
 * or memset counts for `iter:after:` selectors. */
__attribute__((noinline)) void on_classified_transfer(struct phase_thread *p, uint8_t phase, unsigned after_bit)
{
    struct rules_state *r = &p->rules;
    struct range want[5];
    unsigned n;
    r->iter_after |= (uint16_t)after_bit;
    if (phase == OBS_PHASE_NONE)
        return;
    if (r->iter_open && r->iter_phase != OBS_PHASE_NONE) /* inside a selected iteration: its phase */
        phase = r->iter_phase;
    if (phase == OBS_PHASE_PREFILL && p->logic.top != OBS_PHASE_PREFILL) {
        logic_move(&p->logic, MOVE_PROMPT, 0, 0);
        r->gen_forwards = 0;
        LOG_DECISION(&p->logic, "new-generation", "rule-names-this-copy-or-memset", " phase=PREFILL");
    } else if (phase != OBS_PHASE_PREFILL && p->logic.top != OBS_PHASE_DECODE) {
        if (obs_engine.set.have_step_rule)
            return; /* OBS_STEP opens the decode: this stays where it is */
        logic_move(&p->logic, MOVE_DECODE, 0, 0);
        LOG_DECISION(&p->logic, "decode-starts", "rule-names-this-copy-or-memset", " phase=%s", phase_names[phase & 3]);
    }
    p->after_delimiter = false;
    n = wanted(&p->logic, phase == OBS_PHASE_KV_GATHER, false, want);
    move_to(p, want, n);
}

/* Rules: a token read (as in automatic mode), and a warm-up: launches
 * before the thread's first copy in that read nothing lose their labels
 * in the trace (live they carried their ranges), as in automatic mode. */
__attribute__((noinline)) void rules_copy(struct phase_thread *p, unsigned dir, uint64_t bytes)
{
    struct rules_state *r = &p->rules;
    if (dir == OBS_DIR_DTOH && (r->iter_launched || r->unread_launches) && bytes >= TOKEN_READ_MIN)
        r->iter_token = true;
    if (dir == OBS_DIR_DTOH)
        r->iter_read = true;
    if (dir == OBS_DIR_DTOH && (r->iter_launched || r->unread_launches))
        r->read_back = true;
    if (dir != OBS_DIR_HTOD || r->copied_in)
        return;
    r->copied_in = true;
    if (p->logic.started && !r->ever_token_read && r->first_index != UINT64_MAX) {
        uint64_t from = r->first_index;
        unlabel_since(from);
        logic_move(&p->logic, MOVE_FORGET, 0, 0);
        move_to(p, NULL, 0);
        r->first_index = UINT64_MAX;
        LOG_DECISION(&p->logic, "warm-up", "first-copy-in-after-launches-with-no-copy",
                     " htod=%llu unlabelled_from_record=%llu; the next launch begins generation 0",
                     (unsigned long long)bytes, (unsigned long long)from);
    }
}

/* Rules with OBS_STEP: a decode iteration that read a token with no
 * OBS_STEP launch since the previous token read was no step (Hugging
 * Face's output sliced and copied out after generate() returned, as the
 * automatic mode reads it: an iteration without the steps' opener) when
 * a new generation or the thread's end follows it; when the step goes on
 * it was a read inside the forward (docs/phases.md, "Reads inside a
 * forward"). Its labels come off in the trace then; live it carried the
 * step it followed. */
__attribute__((noinline, cold)) void rules_not_a_step(struct phase_thread *p)
{
    unlabel_span(p->rules.missed_first, p->rules.missed_end);
    LOG_DECISION(&p->logic, "not-a-step", "token-read-with-no-OBS_STEP-launch-since-the-last",
                 " unlabelled_from_record=%llu", (unsigned long long)p->rules.missed_first);
    p->rules.missed_first = UINT64_MAX;
}

/* Rules, as in automatic mode: a generation's last decode step ends at its
 * first launch after its stack of a kernel family (base name) the
 * thread's steps never launched there (layer_last_step_departs: a
 * detokeniser's torch.cat after a loop that reads nothing between its
 * steps) when a new generation or the thread's
 * end follows it. Its labels come off from there in the trace; live they
 * carried the step. */
__attribute__((noinline, cold)) void rules_last_step_ends(struct phase_thread *p)
{
    uint64_t from = layer_last_step_departs(p->layers), end = obs_thread_next_index();
    if (from >= end)
        return;
    unlabel_span(from, end);
    LOG_DECISION(&p->logic, "not-a-step", "a-kernel-new-after-the-steps-stacks",
                 " unlabelled_from_record=%llu", (unsigned long long)from);
}

/* OBS_ITERATION (docs/phases.md, "Rules"): a serving loop, each of whose
 * forwards is an ITERATION/k of its own. A launch OBS_ITERATION matches
 * opens the thread's first iteration, and then, the first such launch
 * after each token read (the iteration's sampled ids read back: a serving
 * loop reads them every iteration), the next; its first, or the first after an idle
 * gap (as automatic mode's: longer than OBS_GEN_GAP_MS from a delimiter,
 * the thread blocked through it), ITERATION/0 of the next generation.
 * Every other launch of a thread in an iteration is that iteration's.
 * Returns true for the launches it placed: OBS_PHASES and OBS_STEP do not
 * apply to them (a thread's launches before its first iteration go by
 * them). */
bool rules_iteration(struct phase_thread *p, uint8_t cls, uint32_t name, bool new_segment)
{
    struct logic *l = &p->logic;
    bool in_loop = l->started && l->top == OBS_PHASE_ITERATION;
    if (new_segment && in_loop && p->after_delimiter) {
        uint64_t now = obs_now_ns(), wall, cpu;
        if (now - p->delimiter_t > obs_engine.set.gen_gap_ns &&
            !thread_busy_since(now, p->quiet_from_t, p->quiet_from_cpu, &wall, &cpu))
            p->rules.gap_pending = true;
    }
    /* in the loop, the first match after each token read (an iteration's sampled ids): the kernel may run more
     * than once an iteration (a gather begins the forward, another picks the logits to sample) */
    if (!(cls & CLASS_ITERATION) || (in_loop && !p->rules.step_armed))
        return in_loop;
    p->rules.step_armed = false;
    if (!in_loop || p->rules.gap_pending) {
        logic_move(l, MOVE_SERVING_GEN, 0, 0);
        LOG_LAUNCH_DECISION(l, "iteration-begins", in_loop ? "OBS_ITERATION-after-an-idle-gap" : "OBS_ITERATION",
                            name);
        p->rules.gap_pending = false;
    } else {
        logic_move(l, MOVE_ITERATION, 0, 0);
        LOG_LAUNCH_DECISION(l, "iteration-begins", "OBS_ITERATION", name);
    }
    layer_instance_anew(p);
    return true;
}

/* Rules with OBS_STEP, as the automatic mode does with a forward captured
 * into a graph (docs/phases.md, "Rules"): an OBS_STEP launch that opened a
 * step is remembered with the label before it; a graph instantiated from
 * its kernel on was captured from that step's forward (which ran nothing),
 * and at the graph's first launch, where the step goes on, the calls since
 * the instantiation (the fill of the graph's inputs) take that label back:
 * they come before the forward the replay runs. */
void rules_step_launch(struct phase_thread *p, const struct logic *before, uint8_t cls, uint32_t name, bool graph)
{
    struct rules_state *r = &p->rules;
    const struct logic *l = &p->logic;
    bool moved = l->gen != before->gen || l->step != before->step || l->top != before->top;
    if (!graph) {
        if (moved && (cls & CLASS_STEP) && l->top == OBS_PHASE_DECODE) {
            r->step_opener = name;
            r->step_before = *before;
        }
        return;
    }
    if (r->captured && !moved && l->top == OBS_PHASE_DECODE)
        capture_fill(l, &r->captured_before, r->capture_end_index);
    r->captured = false;
}

void rules_graph_instantiated(struct phase_thread *p, const struct obs_graph_walk *w)
{
    struct rules_state *r = &p->rules;
    if (w->incomplete || w->order_cut || w->norder == 0 || !obs_engine.set.have_step_rule)
        return;
    if (p->logic.top == OBS_PHASE_DECODE && r->step_opener != 0 && w->order[0] == r->step_opener) {
        r->captured = true;
        r->captured_before = r->step_before;
        r->capture_end_index = obs_thread_next_index();
        OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u capture kernel_nodes=%u opener=%u", obs_thread_id(),
                      obs_tls.call_counter, w->norder, r->step_opener);
    }
}

/* A host delimiter ends the rules' iteration: its token read may end a
 * forward (its layers found; with OBS_STEP once the launches after it show
 * it did), and a decode iteration that read a token with no OBS_STEP launch
 * may have been no step (rules_not_a_step). The ranges stay open. */
void rules_delimiter(struct phase_thread *p, uint64_t now)
{
    struct rules_state *r = &p->rules;
    if (p->held_end_t == 0)
        p->held_end_t = now;
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter ranges=held-open", obs_thread_id(), obs_tls.call_counter);
    r->iter_open = false;
    if (r->iter_token && p->layers != NULL && obs_engine.set.have_step_rule)
        layer_read_seen(p->layers, now); /* OBS_STEP says where a forward ends: its step's last read */
    else if (r->iter_token && p->layers != NULL && p->layers->n > p->layers->seg)
        layer_analyse(p->layers, "token-read");
    if (r->iter_token && (r->step_armed || (!r->gen_token_read && !r->iter_stepped)) && r->iter_index != UINT64_MAX &&
        p->logic.top == OBS_PHASE_DECODE) {
        r->missed_first = r->iter_index; /* no step, if no step follows (rules_not_a_step) */
        r->missed_end = obs_thread_next_index();
    }
    r->iter_index = UINT64_MAX;
    r->unread_launches = (r->iter_launched || r->unread_launches) && !r->iter_read;
    r->iter_read = false;
    if (r->iter_token) {
        r->gen_token_read = r->ever_token_read = r->after_token = r->step_armed = true;
        r->iter_token = false;
    }
    r->iter_launched = false;
    r->iter_stepped = false;
}

/* After a launch is stored: its record index where a mark asked for it
 * (obs_call_index, as in automatic mode). */
void rules_launch_stored(struct rules_state *r, const struct obs_hooked_call *c)
{
    if (r->marks & RULES_MARK_FIRST)
        r->first_index = obs_call_index(c);
    if (r->marks & RULES_MARK_ITER)
        r->iter_index = obs_call_index(c);
    r->marks = 0;
}
