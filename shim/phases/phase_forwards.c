/* Automatic mode's structure model (docs/phases.md, "Forwards"): a
 * decoder's forward is a prologue, N repetitions of its layer's kernels and
 * a head, and begins at its embedding lookup (or a graph launch that
 * replays one). Each forward is a prompt's (PREFILL; a prompt in chunks is
 * one), a decode step, or in a serving loop an iteration of its own.
 * Host syncs, reads, copies and gaps are evidence about which: a
 * generation begins at a prompt forward (or the input preparation before
 * it), a forward after a token read or a flag read is the next step, a
 * forward whose stack went unread is the prompt's next chunk. What the
 * evidence shows only later (the steps were chunks, a prompt was a step, a
 * warm-up, the last step's trailing work, a serving loop found at its third
 * iteration) is written as a RELABEL over the records already stored.
 * Every threshold it compares with is in phase_params.h. */
#include "phase_forwards.h"

#include <stdio.h>
#include <sys/mman.h>

/* Shape (b): does this iteration, or this forward, begin a new prompt?
 * One signal is enough: graph replay stopped (a forward eager after graph
 * ones); more bytes copied in since the last forward began than 4x the
 * most a decode step did (any, where steps copy none); a memset before the
 * iteration's first launch where decode steps had none (llama.cpp clears
 * its KV cache between conversations); a forward whose lookup is 4x the
 * size of the decode steps'. Before any decode step was seen (a prompt with
 * no decode steps, or the thread's first), a copy in of at least a quarter
 * of the last prompt's, or, where that copied none, a forward with the same
 * lookup at least a quarter of its size. The size signals are asked at a
 * forward's start only (an iteration's first launch is no lookup). */
enum prompt_signal {
    PROMPT_NO = 0,
    PROMPT_GRAPH_REPLAY_STOPPED,
    PROMPT_COPY_IN_OVER_STEPS,
    PROMPT_MEMSET_BEFORE_PROMPT,
    PROMPT_FIRST_LAUNCH_OVER_STEPS,
    PROMPT_COPY_IN_LIKE_LAST_PROMPT,
    PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
};
static const char *const prompt_signal_names[] = {"none",
                                                  "graph-replay-stopped",
                                                  "copy-in-over-4x-steps",
                                                  "memset-before-first-launch",
                                                  "first-launch-4x-steps",
                                                  "copy-in-quarter-of-last-prompt",
                                                  "first-kernel-quarter-of-last-prompt"};

static enum prompt_signal new_prompt(const struct token_loop *t, const struct iteration_start *s, bool at_forward)
{
    if (at_forward && t->prev_graph_first && !s->graph)
        return PROMPT_GRAPH_REPLAY_STOPPED;
    if (t->decode_seen) {
        if (s->htod > 0 && s->htod / PROMPT_RATIO >= t->decode_htod_max && s->htod > t->decode_htod_max)
            return PROMPT_COPY_IN_OVER_STEPS;
        if (s->memset && !t->decode_memset)
            return PROMPT_MEMSET_BEFORE_PROMPT;
        return at_forward && !s->graph && t->decode_threads > 0 && s->threads / PROMPT_RATIO >= t->decode_threads
                   ? PROMPT_FIRST_LAUNCH_OVER_STEPS
                   : PROMPT_NO;
    }
    if (t->prompt.htod > 0)
        return s->htod > 0 && s->htod * PROMPT_RATIO >= t->prompt.htod ? PROMPT_COPY_IN_LIKE_LAST_PROMPT : PROMPT_NO;
    return at_forward && !s->graph && s->name == t->prompt.name && t->prompt.threads > 0 &&
                   s->threads * PROMPT_RATIO >= t->prompt.threads && s->threads > 0
               ? PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT
               : PROMPT_NO;
}

static struct iteration_look look_of(const struct iteration_start *s)
{
    return (struct iteration_look){s->threads, s->htod, s->name, s->graph, s->memset};
}

static bool same_look(const struct iteration_look *a, const struct iteration_look *b)
{
    return a->name == b->name && a->threads == b->threads && a->htod == b->htod && a->graph == b->graph;
}

/* b: the same first kernel as a, at fewer threads, or as large with fewer bytes in. */
static bool smaller_look(const struct iteration_look *a, const struct iteration_look *b)
{
    return !b->graph && !a->graph && a->name == b->name &&
           (b->threads < a->threads || (b->threads == a->threads && b->htod < a->htod));
}

/* A new generation begins at this iteration. Its prompt's inputs, the
 * copies in since the last launch or token read, become its first calls
 * in the trace (a RELABEL: live they were outside every range), except in
 * the thread's first generation, where they cannot be told from the
 * model's own set-up copies. */
/* A generation's last step ends before the iteration the next step's
 * forward would have begun in (numbered as in the step before it) when no
 * forward began there: Hugging Face's output sliced after generate()
 * returned, a detokeniser's torch.cat and .tolist() after the loop, are
 * the program's own work, not the step's. Where no iteration tells (a loop
 * that syncs nothing between its steps), the step ends at its first launch
 * after its stack of a kernel the thread's steps never launched there
 * (decode steps repeat one another: layer_last_step_departs). Where a new
 * prompt's forward
 * begins in that iteration, the iteration was the prompt's input
 * preparation: it becomes the new generation's (start_generation). Called
 * where the generation ends (the next one begins, the thread ends) with
 * the end of what comes off; returns where that iteration began, or
 * UINT64_MAX. */
uint64_t last_step_ends(struct logic *l, struct phase_thread *p, uint64_t end, bool at_forward)
{
    struct auto_state *a = &p->automatic;
    uint64_t from = a->excess_index, prep = UINT64_MAX, departs = layer_last_step_departs(p->layers);
    const char *because = "no-forward-where-the-next-step-begins";
    a->excess_index = UINT64_MAX;
    if (departs < from) {
        from = departs;
        because = "a-kernel-new-after-the-steps-stacks";
    }
    a->loop.step_iters = 0;
    a->loop.step_output_read = false;
    if (!a->loop.forwards && a->loop.copied && l->top == OBS_PHASE_DECODE && !a->loop.step_read &&
        a->step_first_index != UINT64_MAX && a->step_first_index < end) {
        /* a thread whose steps end in their reads (no forward seen, copies: its steps open after token reads):
         * a last step that read nothing was none (a set-up's fills after one .item(), on another thread than
         * a serving loop's) */
        /* its only step: the generation was one read after set-up work, none (its prompt read one value) */
        uint64_t from_index = a->loop.gen_steps == 1 && a->gen_first_index != UINT64_MAX ? a->gen_first_index
                                                                                      : a->step_first_index;
        unlabel_span(from_index, end);
        LOG_DECISION(l, "not-a-step", "read-nothing-in-a-thread-whose-steps-end-in-reads",
                     " steps=%u unlabelled_from_record=%llu", a->loop.gen_steps, (unsigned long long)from_index);
        a->step_first_index = UINT64_MAX;
        return UINT64_MAX;
    }
    if (from == UINT64_MAX || l->top != OBS_PHASE_DECODE)
        return UINT64_MAX;
    if (at_forward) {
        /* the current iteration, with the copies in before it, prepared the new prompt */
        prep = a->iter_window_index != UINT64_MAX ? a->iter_window_index : a->iter_first_index;
        if (from >= a->iter_first_index)
            return prep;
        end = prep;
    }
    if (from < end) {
        unlabel_span(from, end);
        LOG_DECISION(l, "not-a-step", because, " iteration=%u unlabelled_from_record=%llu",
                     a->loop.step_iters_usual, (unsigned long long)from);
    }
    return prep;
}

static void start_generation(struct logic *l, struct phase_thread *p, const struct iteration_start *s, uint8_t origin,
                             bool at_forward)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool first = !l->started;
    uint64_t prep = UINT64_MAX;
    if (!first)
        prep = last_step_ends(l, p, t->window_first_index != UINT64_MAX ? t->window_first_index : obs_thread_next_index(),
                              at_forward);
    if (!first && l->gen == 0 && !t->read_since_start && a->thread_first_index != UINT64_MAX) {
        /* the thread's generation 0 read nothing back, and the next prompt's input came in: it was a
         * warm-up (forwards run before a decode step is captured into a graph, after the weights came in);
         * its labels come off in the trace, and this is generation 0, which begins at this launch as a
         * thread's first does (the calls since the delimiter, its inputs coming in, take no phase either:
         * they would keep the warm-up's last step) */
        uint64_t end = obs_thread_next_index();
        unlabel_span(a->thread_first_index, end);
        LOG_DECISION(l, "warm-up", "generation-0-read-nothing-back", " unlabelled_from_record=%llu",
                     (unsigned long long)a->thread_first_index);
        l->started = false;
        first = true;
        t->decode_seen = false;
        t->decode_htod_max = t->decode_threads = 0;
        t->decode_memset = false;
        t->fwd_min[0] = t->fwd_min[1] = 0;
    }
    t->prev_prompt = t->prompt;
    t->prev_origin = t->origin;
    if (!first && t->gen_steps == 0 && t->gen_forwards == 1 && t->prompt.htod > 0 && t->gen_token_reads > 0 &&
        t->last_read_bytes < t->prompt.htod) {
        /* a generation of one forward, its inputs copied in, fewer bytes read back (sampled ids, not a host
         * sampler's logits: ggml's prompt chunks read theirs) */
        t->single_run++;
        if (t->prompt.threads > t->single_max_threads)
            t->single_max_threads = t->prompt.threads;
    } else {
        t->single_run = 0;
        t->single_max_threads = 0;
    }
    t->prev_gen_steps = t->gen_steps;
    t->prev_gen_iterations = t->gen_iterations;
    t->prev_gen_token_reads = t->gen_token_reads;
    a->prev_gen_first_index = a->gen_first_index;
    logic_move(l, MOVE_PROMPT, 0, 0);
    layer_instance_anew(p);
    t->gen_token_read = false;
    t->token_pending = false;
    t->prompt = look_of(s);
    t->origin = origin;
    t->gen_iterations = t->gen_token_reads = t->gen_steps = t->gen_forwards = 0;
    t->steps_unread_before = t->steps_unread;
    t->steps_like_prompt = true;
    a->gen_first_index = UINT64_MAX;
    a->marks |= MARK_GEN | (first ? MARK_THREAD : 0u);
    if (prep == UINT64_MAX)
        prep = t->window_first_index;
    if (!first && prep != UINT64_MAX) {
        struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        relabel_since(prep, &prefill);
        a->gen_first_index = prep;
        a->marks &= (uint8_t)~MARK_GEN;
    }
}

static void remember_step(struct token_loop *t, const struct iteration_look *s)
{
    t->decode_seen = true;
    if (s->htod > t->decode_htod_max)
        t->decode_htod_max = s->htod;
    if (s->memset)
        t->decode_memset = true;
    if (!s->graph)
        t->decode_threads = s->threads;
}

/* ---- the decision log, automatic mode's lines ------------------------------------------------ */

/* Level 3: what an iteration's first launch, or a forward's, brings before the decision. */
static __attribute__((cold)) void log_iteration(const struct phase_thread *p, const struct iteration_start *s,
                                                bool forward)
{
    const struct token_loop *t = &p->automatic.loop;
    obs_debug_write(OBS_DBG_PHASES,
                    "tid=%u call=%u %s name=%u threads=%llu htod=%llu memset=%d graph=%d last_graph=%d prev_graph=%d "
                    "token_pending=%d token_read_gen=%d token_read_fwd=%d reads_tokens=%d copied=%d forwards=%d "
                    "decode_seen=%d steps_threads=%llu steps_htod_max=%llu prompt_name=%u prompt_threads=%llu "
                    "prompt_htod=%llu gen_forwards=%u gen_steps=%u top=%s",
                    obs_thread_id(), obs_tls.call_counter, forward ? "forward" : "iteration", s->name,
                    (unsigned long long)s->threads, (unsigned long long)s->htod, s->memset, s->graph,
                    t->graph_first, t->prev_graph_first, t->token_pending, t->gen_token_read, t->fwd_token_read,
                    t->reads_tokens, t->copied, t->forwards, t->decode_seen, (unsigned long long)t->decode_threads,
                    (unsigned long long)t->decode_htod_max, t->prompt.name, (unsigned long long)t->prompt.threads,
                    (unsigned long long)t->prompt.htod, t->gen_forwards, t->gen_steps, phase_names[p->logic.top & 3]);
}

/* The numbers a new_prompt signal compared. */
static __attribute__((cold)) void prompt_numbers(char *out, size_t len, enum prompt_signal why,
                                                 const struct token_loop *t, const struct iteration_start *s)
{
    switch (why) {
    case PROMPT_COPY_IN_OVER_STEPS:
        snprintf(out, len, " htod=%llu steps_htod_max=%llu", (unsigned long long)s->htod,
                 (unsigned long long)t->decode_htod_max);
        break;
    case PROMPT_MEMSET_BEFORE_PROMPT:
        snprintf(out, len, " memset=1 steps_memset=0");
        break;
    case PROMPT_FIRST_LAUNCH_OVER_STEPS:
        snprintf(out, len, " threads=%llu steps_threads=%llu", (unsigned long long)s->threads,
                 (unsigned long long)t->decode_threads);
        break;
    case PROMPT_COPY_IN_LIKE_LAST_PROMPT:
        snprintf(out, len, " htod=%llu prompt_htod=%llu", (unsigned long long)s->htod,
                 (unsigned long long)t->prompt.htod);
        break;
    case PROMPT_FIRST_KERNEL_LIKE_LAST_PROMPT:
        snprintf(out, len, " name=%u threads=%llu prompt_threads=%llu", s->name, (unsigned long long)s->threads,
                 (unsigned long long)t->prompt.threads);
        break;
    default:
        snprintf(out, len, " graph=%d", s->graph);
        break;
    }
}

/* Shape (b): this iteration opens the next decode step (step 0 after the
 * prompt). What the generation's steps looked like may show, at this
 * point, that they were not steps: a prompt evaluated in chunks that each
 * read their logits (ggml's -b) reads like a prompt and steps until a
 * smaller iteration comes: the chunks looked like the prompt's first (or
 * one "step 0" was larger than the step after it: the prompt's last
 * chunk). They join the PREFILL in the trace (a RELABEL); live they
 * carried step ranges. */
enum chunk_signal { CHUNK_NO = 0, CHUNK_STEPS_LIKE_PROMPT, CHUNK_STEP0_LARGER };
static const char *const chunk_signal_names[] = {"none", "steps-looked-like-the-prompt-then-a-smaller-one",
                                                 "step0-larger-than-the-next"};

static enum chunk_signal chunks_not_steps(const struct token_loop *t, const struct iteration_look *s)
{
    if (t->gen_steps == 0 || s->htod == 0) /* a loop that feeds each evaluation (ggml): this one copied in */
        return CHUNK_NO;
    if (t->steps_like_prompt && smaller_look(&t->prompt, s))
        return CHUNK_STEPS_LIKE_PROMPT;
    if (t->gen_steps == 1 && !t->steps_like_prompt && smaller_look(&t->step0, s) && s->threads < t->step0.threads)
        return CHUNK_STEP0_LARGER;
    return CHUNK_NO;
}

static bool read_after_stack(struct phase_thread *p);

static void open_step_now(struct logic *l, struct phase_thread *p, const struct iteration_start *s, const char *because)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct iteration_look look = look_of(s);
    enum chunk_signal chunk = l->top == OBS_PHASE_DECODE ? chunks_not_steps(t, &look) : CHUNK_NO;
    if (l->top == OBS_PHASE_DECODE && (t->step_output_read || read_after_stack(p)))
        t->step_iters_usual = t->step_iters + (t->iter_begun_here ? 1u : 0u);
    t->step_iters = 0;
    t->step_output_read = false;
    t->step_read = false;
    t->step_opened_here = true;
    a->marks |= MARK_STEP;
    a->excess_index = UINT64_MAX;
    layer_instance_anew(p);
    t->token_pending = false;
    if (chunk != CHUNK_NO) {
        struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        uint32_t steps = t->gen_steps;
        relabel_since(a->step0_index, &prefill);
        logic_move(l, MOVE_CHUNKS, 0, 0);
        t->gen_steps = 0;
        t->decode_htod_max = 0; /* the chunks' copies were the prompt's */
        t->decode_memset = false;
        LOG_DECISION(l, "prompt-chunks", chunk_signal_names[chunk],
                     " steps=%u relabelled_from_record=%llu threads=%llu step0_threads=%llu prompt_threads=%llu", steps,
                     (unsigned long long)a->step0_index, (unsigned long long)s->threads,
                     (unsigned long long)t->step0.threads, (unsigned long long)t->prompt.threads);
    }
    if (l->top != OBS_PHASE_DECODE) {
        logic_move(l, MOVE_DECODE, 0, 0);
        t->step0_before_token = !t->gen_token_read;
        t->step0 = look;
        t->steps_like_prompt = same_look(&t->prompt, &look);
        a->step0_index = UINT64_MAX;
        a->marks |= MARK_STEP0;
        LOG_DECISION(l, "decode-starts", because,
                     " threads=%llu prompt_threads=%llu htod=%llu prompt_htod=%llu graph=%d read_bytes=%llu",
                     (unsigned long long)s->threads, (unsigned long long)t->prompt.threads,
                     (unsigned long long)s->htod, (unsigned long long)t->prompt.htod, s->graph,
                     (unsigned long long)t->last_read_bytes);
    } else {
        logic_move(l, MOVE_STEP, 0, 0);
        t->steps_like_prompt = t->steps_like_prompt && same_look(&t->prompt, &look);
        LOG_DECISION(l, "step", because, " threads=%llu htod=%llu graph=%d read_bytes=%llu",
                     (unsigned long long)s->threads, (unsigned long long)s->htod, s->graph,
                     (unsigned long long)t->last_read_bytes);
    }
    t->gen_steps++;
    remember_step(t, &look);
}

/* The generation read its first token after forwards that opened decode
 * steps before it (a thread's first prompt in chunks, before the thread is
 * known to read a token per step; a later prompt's last chunk of one token,
 * after the stop check's flag read): those forwards were its prompt's
 * chunks. They join the PREFILL in the trace (a RELABEL; live they carried
 * step ranges), and the forward that begins now opens step 0. */
static void steps_were_chunks(struct logic *l, struct phase_thread *p)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct range prefill = {OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
    relabel_since(a->step0_index, &prefill);
    t->steps_unread = t->steps_unread_before; /* they were no steps */
    LOG_DECISION(l, "prompt-chunks", "steps-before-the-first-token-read", " steps=%u relabelled_from_record=%llu",
                 t->gen_steps, (unsigned long long)a->step0_index);
    logic_move(l, MOVE_CHUNKS, 0, 0);
    t->gen_steps = 0;
}

/* Shape (b): the generation that began at the last token read was not
 * one. It had one iteration that read a token, after a generation with no
 * decode step, and this iteration
 * - looks the same (kernel, size, bytes in): it was that generation's
 *   decode step 0 (ggml with a prompt of a few tokens, -np N sequences per
 *   step: a step is at least a quarter of the prompt), this is step 1;
 * - is smaller, copies its own inputs in (a loop that feeds every
 *   evaluation) and looks like the thread's decode steps (no larger, no
 *   more bytes in): it was that generation's last prompt chunk (ggml's -b,
 *   chunks that each read their logits), this is step 0.
 * Its labels become the step's, or the PREFILL's, in the trace (a
 * RELABEL); live it carried a PREFILL range of its own. */
enum rejoin_signal { REJOIN_NO = 0, REJOIN_AS_STEP, REJOIN_AS_CHUNK };
static const char *const rejoin_signal_names[] = {"none", "next-iteration-looks-the-same",
                                                  "next-iteration-smaller-and-copies-in"};

static enum rejoin_signal was_not_a_prompt(const struct logic *l, const struct token_loop *t,
                                           const struct iteration_start *s)
{
    struct iteration_look look = look_of(s);
    if (l->top != OBS_PHASE_PREFILL || t->origin != ORIGIN_AT_TOKEN_READ || t->prev_gen_steps != 0 ||
        t->gen_iterations != 1 || t->gen_token_reads != 1 || l->gen == 0)
        return REJOIN_NO;
    if (same_look(&t->prompt, &look))
        return REJOIN_AS_STEP;
    return s->htod > 0 && smaller_look(&t->prompt, &look) && t->decode_seen && !s->graph &&
                   s->threads <= t->decode_threads && s->htod <= t->decode_htod_max
               ? REJOIN_AS_CHUNK
               : REJOIN_NO;
}

static void rejoin_previous_generation(struct logic *l, struct phase_thread *p, const struct iteration_start *s,
                                       enum rejoin_signal how)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct range label;
    uint64_t from = a->gen_first_index;
    layer_instance_anew(p);
    struct iteration_look was = t->prompt;
    logic_move(l, MOVE_REJOIN, 0, 0);
    if (how == REJOIN_AS_STEP)
        label = (struct range){OBS_PHASE_DECODE, 0, OBS_PHASE_STEP_NAME_BASE, l->gen, 0};
    else
        label = (struct range){OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
    relabel_since(from, &label);
    LOG_DECISION(l, how == REJOIN_AS_STEP ? "was-a-step" : "was-a-prompt-chunk", rejoin_signal_names[how],
                 " relabelled_from_record=%llu threads=%llu htod=%llu was_threads=%llu was_htod=%llu",
                 (unsigned long long)from, (unsigned long long)s->threads, (unsigned long long)s->htod,
                 (unsigned long long)was.threads, (unsigned long long)was.htod);
    /* the previous generation goes on */
    t->prompt = t->prev_prompt;
    t->origin = t->prev_origin;
    t->gen_iterations += t->prev_gen_iterations;
    t->gen_token_reads += t->prev_gen_token_reads;
    a->gen_first_index = a->prev_gen_first_index;
    a->marks &= (uint8_t)~MARK_GEN;
    if (how == REJOIN_AS_STEP) {
        /* with that iteration as its step 0, and this one opening step 1 */
        logic_move(l, MOVE_DECODE, 0, 0);
        t->step0 = was;
        t->steps_like_prompt = same_look(&t->prompt, &t->step0);
        t->gen_steps = 1;
        a->step0_index = from;
        a->marks &= (uint8_t)~MARK_STEP0;
        remember_step(t, &t->step0);
    }
    open_step_now(l, p, s, t->forwards ? "forward" : "token-read");
}

/* Automatic mode, shape (b) (and the guess used while shape (a) is being
 * learned): the structure of a thread's launches (docs/phases.md,
 * "Forwards"). A *forward* of the model begins at its embedding lookup, or
 * at a graph launch; the launches between two host delimiters are an
 * *iteration*. A generation begins at an iteration (its input
 * preparation), or at a forward where only the forward tells; its first
 * forward is its prompt's, and every later forward the next decode step,
 * but for a prompt in chunks: in a thread whose steps follow token reads,
 * a forward with no token read since the last one is the prompt's next
 * chunk. A thread in which no forward was seen yet opens its steps at the
 * first launch after a token read (as before issue 34). */
/* Whether the current forward has run: as many launches as its kind's
 * shortest whole forward, less a quarter, and, in a thread whose steps
 * follow token reads, something read back since it began (its token, or
 * a stop flag where a generation reads no token). Inside a forward, what comes in is
 * the forward's own, not the next prompt's: Gemma 2's sliding-window
 * layers copy 8 bytes in; Triton's autotuning in the first call of a
 * torch.compile'd step clears the L2 with a memset before each timed
 * launch, hundreds of launches before the step's token is read. */
static bool forward_ran(const struct token_loop *t, const struct logic *l)
{
    uint32_t least = t->fwd_min[l->top == OBS_PHASE_DECODE ? 1 : 0];
    if (t->graph_first)
        return true;
    if (t->reads_tokens && !t->fwd_read)
        return false;
    return least == 0 || t->fwd_launches >= least - least / FORWARD_RAN_SHARE;
}

static void steps_were_chunks(struct logic *l, struct phase_thread *p);

bool thread_busy_since(uint64_t now, uint64_t from_t, uint64_t from_cpu, uint64_t *wall, uint64_t *cpu)
{
    *wall = now > from_t ? now - from_t : 0;
    *cpu = obs_thread_cpu_ns() - from_cpu;
    return *cpu * IDLE_GAP_CPU_SHARE >= *wall;
}

/* Whether the time since the last delimiter is an idle gap: longer than
 * OBS_GEN_GAP_MS, and spent blocked (a server waiting for its next
 * request), not busy (torch.compile compiling the step it was called for,
 * Triton autotuning: the program's own work, inside its generation). The
 * thread's CPU time is read only here, past the gap, and at an iteration's
 * first delimiter (on_delimiter). */
static bool idle_gap(const struct logic *l, const struct phase_thread *p, const struct iteration_start *s)
{
    uint64_t wall, cpu;
    if (s->now - p->delimiter_t <= obs_engine.set.gen_gap_ns)
        return false;
    if (!thread_busy_since(s->now, p->quiet_from_t, p->quiet_from_cpu, &wall, &cpu))
        return true;
    if (l->started && l->top != OBS_PHASE_NONE)
        LOG_DECISION(l, "busy-gap", "thread-ran-through-it", " gap_ms=%llu cpu_ms=%llu",
                     (unsigned long long)(wall / 1000000u), (unsigned long long)(cpu / 1000000u));
    return false;
}

static void iteration_begins(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    enum prompt_signal prompt;
    enum rejoin_signal rejoin;
    if (obs_debug_on(OBS_DBG_PHASES, 3))
        log_iteration(p, s, false);
    bool idle = p->after_delimiter && idle_gap(l, p, s);
    if (t->serving) {
        /* a serving loop's iterations begin at their forwards; an idle gap begins a generation there */
        if (idle)
            t->serving_new_gen = true;
    } else if (!l->started || l->top == OBS_PHASE_NONE) {
        start_generation(l, p, s, ORIGIN_OTHER, false);
        LOG_DECISION(l, "new-generation", "no-generation-open", " threads=%llu htod=%llu",
                     (unsigned long long)s->threads, (unsigned long long)s->htod);
    } else if (idle) {
        start_generation(l, p, s, ORIGIN_OTHER, false);
        LOG_DECISION(l, "new-generation", "idle-gap", " gap_ms=%llu gen_gap_ms=%llu",
                     (unsigned long long)((s->now - p->delimiter_t) / 1000000u),
                     (unsigned long long)(obs_engine.set.gen_gap_ns / 1000000u));
    } else if (t->forwards) {
        /* a forward thread: what came in since the last forward may begin the next prompt here, before its
         * forward (its input preparation); a generation begun at the last token read may have been the
         * previous one's step (rejoin) */
        if (t->gen_forwards > 0 && forward_ran(t, l)) {
            if (t->token_pending && (rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
                rejoin_previous_generation(l, p, s, rejoin);
                t->opened_here = true;
            } else if ((prompt = new_prompt(t, s, false)) != PROMPT_NO) {
                char numbers[192] = "";
                if (obs_debug_on(OBS_DBG_PHASES, 2))
                    prompt_numbers(numbers, sizeof numbers, prompt, t, s);
                start_generation(l, p, s, t->token_pending ? ORIGIN_AT_TOKEN_READ : ORIGIN_OTHER, false);
                LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
            }
        }
    } else if (!t->token_pending) {
        if (l->top == OBS_PHASE_PREFILL)
            LOG_DECISION(l, "prefill-continues", "no-token-read-yet", " threads=%llu prompt_threads=%llu",
                         (unsigned long long)s->threads, (unsigned long long)t->prompt.threads);
        else
            LOG_DECISION(l, "step-continues", "no-token-read-since-it-began", " threads=%llu graph=%d",
                         (unsigned long long)s->threads, s->graph);
    } else if ((rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
        rejoin_previous_generation(l, p, s, rejoin);
    } else if ((prompt = new_prompt(t, s, true)) != PROMPT_NO) {
        char numbers[192] = "";
        if (obs_debug_on(OBS_DBG_PHASES, 2)) /* before start_generation replaces what it compared */
            prompt_numbers(numbers, sizeof numbers, prompt, t, s);
        start_generation(l, p, s, ORIGIN_AT_TOKEN_READ, false);
        LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
    } else {
        open_step_now(l, p, s, "token-read");
    }
    t->gen_iterations++;
}

/* A serving loop: the thread's forwards are iterations over a changing
 * batch (requests joining and leaving: transformers' generate_batch,
 * vLLM, SGLang, TensorRT-LLM's in-flight batching), each one the range
 * ITERATION/k of its own. Found at a forward a PROMPT_RATIO-th the size
 * of the largest of SERVING_SINGLE_RUN or more one-forward generations
 * before it (forward_begins); those forwards, as far as the ring of
 * the last FWD_RING holds them, become the iterations 0, 1... of the
 * generation the oldest of them began, in the trace (a RELABEL each; live
 * they carried PREFILL and step ranges), and what came before the first
 * of them none. From here each forward opens the next iteration. */
static void enter_serving(struct logic *l, struct phase_thread *p, const struct iteration_start *s, const char *because)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    uint32_t have = a->fwd_count < FWD_RING ? a->fwd_count : FWD_RING, j, first = 0, k = 0;
    uint64_t next = obs_thread_next_index();
    uint32_t gen = l->gen;
    /* the ring's forwards of this thread's loop: those since its generation 0's first launch */
    while (first < have &&
           a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].index < a->thread_first_index)
        first++;
    if (first < have) {
        uint64_t begin = a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].index;
        gen = a->fwd_ring[(a->fwd_count - have + first) % FWD_RING].gen;
        if (a->thread_first_index != UINT64_MAX && a->thread_first_index < begin)
            unlabel_span(a->thread_first_index, begin); /* before the loop's first forward: no iteration */
        for (j = first; j < have; j++, k++) {
            uint64_t from = a->fwd_ring[(a->fwd_count - have + j) % FWD_RING].index;
            uint64_t to = j + 1 < have ? a->fwd_ring[(a->fwd_count - have + j + 1) % FWD_RING].index : next;
            struct range it = {OBS_PHASE_ITERATION, k, OBS_PHASE_ITER_NAME_BASE + k, gen, 0};
            if (from != UINT64_MAX && to != UINT64_MAX && to > from)
                write_phase(OBS_PHASE_RELABEL, &it, from, to - 1);
        }
    }
    t->serving = true;
    t->serving_new_gen = false;
    layer_instance_anew(p);
    logic_move(l, MOVE_SERVING, k, gen);
    LOG_DECISION(l, "serving-loop", because, " threads=%llu largest_threads=%llu htod=%llu iterations_relabelled=%u",
                 (unsigned long long)s->threads, (unsigned long long)t->single_max_threads,
                 (unsigned long long)s->htod, k);
}

/* A serving loop's next forward: its next iteration, or ITERATION/0 of a
 * new generation after an idle gap. */
static void serving_forward(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    layer_instance_anew(p);
    if (!l->started || l->top != OBS_PHASE_ITERATION || p->automatic.loop.serving_new_gen) {
        logic_move(l, MOVE_SERVING_GEN, 0, 0);
        p->automatic.loop.serving_new_gen = false;
    } else {
        logic_move(l, MOVE_ITERATION, 0, 0);
    }
    LOG_DECISION(l, "iteration-begins", "forward", " name=%u threads=%llu htod=%llu", s->name,
                 (unsigned long long)s->threads, (unsigned long long)s->htod);
}

/* Whether the output of the forward that is ending went unused, so that
 * the forward beginning now is the same prompt's next chunk. In a thread
 * whose steps follow token reads: nothing was read back after its stack
 * (no token, no stop check). In a thread whose steps are not known yet: it
 * ended in a sync that read nothing (vLLM's and SGLang's chunked prefill;
 * a step reads its token or a flag, or has no sync at all), after its
 * stack where the stack's end is known: a sync inside the stack is the
 * forward's own (a static KV cache made layer by layer in a thread's first
 * forward), not its end. */
static bool last_forward_unread(struct phase_thread *p)
{
    const struct token_loop *t = &p->automatic.loop;
    uint32_t end;
    if (t->reads_tokens)
        return !t->fwd_token_read && !read_after_stack(p);
    if (t->steps_unread || !t->fwd_delimited || t->fwd_read)
        return false;
    end = t->graph_first ? 1 : layer_stack_end(p->layers, t->fwd_launches);
    return end == 0 || t->fwd_delim_at >= end; /* 0: no end known (fewer layers than 3), any sync */
}

/* A forward begins at this launch (an embedding lookup, a forward's graph). */
static void forward_begins(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    enum prompt_signal prompt;
    enum rejoin_signal rejoin;
    bool first = !t->forwards;
    unsigned kind = l->top == OBS_PHASE_DECODE ? 1u : 0u;
    if (obs_debug_on(OBS_DBG_PHASES, 3))
        log_iteration(p, s, true);
    if (t->forwards && l->started && !t->graph_first && !t->forward_captured &&
        (t->fwd_min[kind] == 0 || t->fwd_launches < t->fwd_min[kind]))
        t->fwd_min[kind] = t->fwd_launches; /* the forward before this one, whole */
    t->forwards = true;
    t->fwd_before = *l;
    if (first && l->started && l->top == OBS_PHASE_DECODE && t->gen_steps > 0)
        LOG_DECISION(l, "forwards-found", "embedding-lookup", " name=%u", s->name); /* steps by reads until now */
    if (t->serving) {
        serving_forward(l, p, s);
    } else if (t->forward_captured && s->graph && l->started) {
        /* the forward before was this graph's capture: it ran nothing, this launch runs it; its step goes on.
         * The calls between the capture and this replay (the fill of the graph's inputs) come before the
         * forward that runs here: they keep the label the thread had before the captured forward began */
        LOG_DECISION(l, "capture-replayed", "graph-of-the-captured-forward", " name=%u", t->fwd_opener);
        capture_fill(l, &t->captured_before, t->capture_end_index);
    } else if (t->opened_here) {
        /* the iteration this launch begins opened its step (a generation taken back): this forward is it */
    } else if (!l->started || l->top == OBS_PHASE_NONE) {
        start_generation(l, p, s, ORIGIN_OTHER, true);
        LOG_DECISION(l, "new-generation", "no-generation-open", " name=%u threads=%llu", s->name,
                     (unsigned long long)s->threads);
    } else if (t->gen_forwards == 0) {
        /* the prompt's first forward: the generation began at its input preparation (whose copies in stay
         * the prompt's) */
        uint64_t htod = t->prompt.htod;
        bool memset = t->prompt.memset;
        t->prompt = look_of(s);
        t->prompt.htod = htod;
        t->prompt.memset = memset;
        if (t->single_run >= SERVING_SINGLE_RUN && !s->graph && htod > 0 &&
            s->threads * PROMPT_RATIO < t->single_max_threads) {
            /* generations of one forward each, fed from the host and read back, and now one a quarter of the
             * largest of them: no prompt is that small after such prompts; they were a serving loop's iterations,
             * the batch shrinking to the decode tokens of its requests */
            enter_serving(l, p, s, "one-forward-generations-then-a-quarter-sized-one");
        } else {
            LOG_DECISION(l, "prompt-forward", "first-forward-of-the-generation", " name=%u threads=%llu htod=%llu",
                         s->name, (unsigned long long)s->threads, (unsigned long long)s->htod);
        }
    } else if (l->top == OBS_PHASE_PREFILL && last_forward_unread(p)) {
        /* the last forward's output went unused: this is the prompt's next chunk */
        LOG_DECISION(l, "prompt-chunk", "the-last-forward-went-unread", " evidence=%s name=%u threads=%llu",
                     t->reads_tokens ? "no-read-after-its-stack" : "a-sync-that-read-nothing", s->name,
                     (unsigned long long)s->threads);
        layer_forward_ended(p);
    } else if ((rejoin = was_not_a_prompt(l, t, s)) != REJOIN_NO) {
        rejoin_previous_generation(l, p, s, rejoin);
    } else if ((prompt = new_prompt(t, s, true)) != PROMPT_NO) {
        char numbers[192] = "";
        if (obs_debug_on(OBS_DBG_PHASES, 2))
            prompt_numbers(numbers, sizeof numbers, prompt, t, s);
        start_generation(l, p, s, t->fwd_token_read ? ORIGIN_AT_TOKEN_READ : ORIGIN_OTHER, true);
        LOG_DECISION(l, "new-generation", prompt_signal_names[prompt], "%s", numbers);
    } else {
        if (l->top == OBS_PHASE_DECODE && t->step0_before_token && t->fwd_token_read && t->gen_token_reads == 1)
            steps_were_chunks(l, p); /* the prompt's first token was read only now: they were its chunks */
        if (t->fwd_token_read && l->top == OBS_PHASE_PREFILL)
            t->reads_tokens = true; /* its prompts last until their token read */
        if (!t->fwd_read)
            t->steps_unread = true; /* its tokens stay on the device */
        open_step_now(l, p, s, "forward");
    }
    t->forward_captured = false;
    t->gen_forwards++;
    t->fwd_launches = 0;
    a->marks |= MARK_FWD;
    a->fwd_pending_gen = l->gen;
    t->fwd_token_read = t->fwd_read = t->fwd_delimited = false;
    t->fwd_opener = s->graph ? 0 : s->name;
    t->prev_graph_first = t->graph_first;
    t->graph_first = s->graph;
}

/* ---- events ---------------------------------------------------------------------------- */

/* Automatic mode: the launch moves the learned state, or at an iteration's
 * first launch the token loop's; while learning it also feeds the history.
 * Every launch notes its kernel as seen and ends the window of what came
 * in before it. */
/* Whether this launch begins a forward of the model: an embedding lookup
 * (the first of a group, and not inside a layer: a mixture of experts'
 * router gathers), or a graph launch of a thread whose forwards began
 * (a decode step replayed). */
static bool forward_starts(const struct phase_thread *p, uint8_t cls, uint32_t name, bool graph)
{
    const struct token_loop *t = &p->automatic.loop;
    uint32_t stack_end;
    if (graph)
        return t->forwards;
    if (!(cls & (CLASS_EMBED | CLASS_GATHER)) || t->prev_embed)
        return false;
    if (!t->forwards || t->gen_forwards == 0)
        return true; /* the thread's first, a generation's first (it began at its input preparation): no
                      * forward of it runs yet, whose layer this could be inside */
    if (!(cls & CLASS_EMBED) || layer_inside(p->layers))
        return false; /* a gather begins no later forward (a router's, in a layer) */
    if (name == t->fwd_opener)
        return true; /* the lookup the current forward began with, outside its layers */
    /* another lookup (a decode step's index_select after a prompt's gather, a batch's gather after decode
     * steps) once the current forward has run its stack and something was read back after it: its output
     * consumed (a gather inside a layer of the thread's first forward, before any template, begins none,
     * nor does a serving loop's gather of the logits to sample, before their read) */
    if (!t->fwd_read && !t->steps_unread)
        return false;
    /* a forward replayed as a graph ran its stack in the graph launch */
    stack_end = t->graph_first ? 1 : layer_stack_end(p->layers, t->fwd_launches);
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u lookup name=%u opener=%u stack_end=%u read_at=%u", obs_thread_id(),
                  obs_tls.call_counter, name, t->fwd_opener, stack_end, t->fwd_read_at);
    /* a thread whose steps read nothing (tokens kept on the device): the stack alone */
    return stack_end != 0 && (t->steps_unread || t->fwd_read_at >= stack_end);
}

/* Whether something was read back after the current forward's stack. */
static bool read_after_stack(struct phase_thread *p)
{
    const struct token_loop *t = &p->automatic.loop;
    uint32_t end;
    if (!t->fwd_read)
        return false;
    end = t->graph_first ? 1 : layer_stack_end(p->layers, t->fwd_launches);
    return end != 0 && t->fwd_read_at >= end;
}

/* A decode step's forward just began, with launches between the last
 * forward's output read and it, and that stretch was longer than
 * OBS_GEN_GAP_MS with the thread busy through it (not an idle gap): the
 * host compiled this forward there (torch.compile's first call of a step,
 * and each recompilation: compile-time launches, each reading 2 bytes
 * back, in seconds of the thread's own CPU time), inside the call that runs
 * it. Those launches are the step's, in the trace (a RELABEL; live they kept
 * the phase they were in). Only for a step the generation asked for after
 * its token read (or in a thread whose steps read nothing): a "step" that
 * opens before the generation's first token read may be its prompt's next
 * chunk, taken back later (steps_were_chunks), and a busy second before it
 * (a loaded machine, a first call's set-up after a mask check's flag read)
 * is the prompt's own. */
static void prep_joins_step(struct logic *l, struct phase_thread *p, const struct iteration_start *s)
{
    struct token_loop *t = &p->automatic.loop;
    if (t->prep_launch_index != UINT64_MAX && t->step_opened_here && l->top == OBS_PHASE_DECODE &&
        (t->gen_token_read || t->steps_unread) &&
        t->prep_from_t != 0 && s->now - t->prep_from_t > obs_engine.set.gen_gap_ns) {
        uint64_t wall, cpu;
        if (thread_busy_since(s->now, t->prep_from_t, t->prep_from_cpu, &wall, &cpu)) {
            struct range step = {OBS_PHASE_DECODE, l->step, OBS_PHASE_STEP_NAME_BASE + l->step, l->gen, 0};
            relabel_since(t->prep_launch_index, &step);
            LOG_DECISION(l, "prep-relabelled", "busy-since-the-last-forward-read",
                         " relabelled_from_record=%llu wall_ms=%llu cpu_ms=%llu",
                         (unsigned long long)t->prep_launch_index, (unsigned long long)(wall / 1000000u),
                         (unsigned long long)(cpu / 1000000u));
        }
    }
    t->prep_launch_index = UINT64_MAX;
}

/* A launch that begins an iteration or may begin a forward (auto_launch,
 * phase_forwards.h, tests the cheap part first): the iteration's and the
 * forward's decisions. */
__attribute__((noinline)) void auto_boundary(struct phase_thread *p, uint32_t name, uint8_t cls,
                                             const struct obs_rec_call *rec, bool graph, bool new_segment)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    struct iteration_start s = {graph ? 0 : launch_threads(rec), t->window_htod, obs_now_ns(), name, graph,
                                t->window_memset};
    bool forward;
    t->opened_here = false;
    t->iter_begun_here = new_segment;
    t->step_opened_here = false;
    /* the iteration first: a generation it begins is the one the forward beginning here is the prompt of */
    if (new_segment)
        iteration_begins(&p->logic, p, &s);
    forward = forward_starts(p, cls, name, graph);
    if (forward) {
        /* a forward is fed by all the bytes that came in since the last forward's output read or its
         * beginning, launches on the way or not (a memset still counts only right before: a KV cache cleared) */
        s.htod = t->prep_htod;
        t->prep_htod = 0;
        forward_begins(&p->logic, p, &s);
        prep_joins_step(&p->logic, p, &s);
    } else if (!new_segment) {
        return;
    } else if (t->fwd_read && t->prep_launch_index == UINT64_MAX) {
        t->prep_launch_index = obs_thread_next_index(); /* the first launch since the forward's output was read */
    }
    if (new_segment) {
        a->marks |= MARK_ITER;
        a->iter_window_index = t->window_first_index;
    }
    /* the iterations after the step's output was read: the next step's forward usually begins in the
     * same one */
    if (new_segment && !t->step_opened_here && p->logic.top == OBS_PHASE_DECODE &&
        (t->step_output_read || (t->step_output_read = !layer_inside(p->layers) && read_after_stack(p))) &&
        ++t->step_iters == t->step_iters_usual)
        a->marks |= MARK_EXCESS;
}

/* Shape (a) is being learned: the launch into the history. */
__attribute__((noinline)) void auto_learn_launch(struct phase_thread *p, uint32_t name, bool new_segment)
{
    struct auto_state *a = &p->automatic;
    struct history_entry *e = &a->history[a->history_n++];
    e->index = UINT64_MAX; /* filled in once the record is stored */
    e->token = name;
    e->new_segment = new_segment;
    learn_online(p); /* may switch this launch to the learned state */
}

/* Automatic mode: copies between host and device mark a host-fed loop
 * (no shape (a) for it); a copy in counts towards the next iteration's
 * inputs (the window since the last launch or token read); a copy out of
 * at least TOKEN_READ_MIN bytes after a launch of the iteration is its
 * token read (smaller: a flag). */
__attribute__((noinline)) void on_auto_copy(struct phase_thread *p, unsigned dir, uint64_t bytes)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool first_copy = !t->copied;
    if (dir == OBS_DIR_HTOD) {
        if (t->window_first_index == UINT64_MAX)
            t->window_first_index = obs_thread_next_index();
        t->window_htod += bytes;
        t->prep_htod += bytes;
        t->window_dirty = true;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u copy-in bytes=%llu window_htod=%llu", obs_thread_id(),
                      obs_tls.call_counter, (unsigned long long)bytes, (unsigned long long)t->window_htod);
    } else if (dir == OBS_DIR_DTOH) {
        /* a read after launches of its iteration, or of the one before when that one read nothing (a host
         * sync, then the copy: torch.cuda.synchronize() before .tolist()) */
        bool after = t->iter_launched || t->unread_launches;
        bool token = after && bytes >= TOKEN_READ_MIN;
        if (token)
            t->iter_token_bytes = bytes;
        if (after)
            t->iter_read = true;
        OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u %s bytes=%llu after_launch=%d", obs_thread_id(),
                      obs_tls.call_counter, token ? "token-read" : "flag-read", (unsigned long long)bytes, after);
    } else {
        return;
    }
    t->copied = true;
    if (dir == OBS_DIR_DTOH && (t->iter_launched || t->unread_launches))
        t->read_since_start = true;
    if (a->learn == LEARNING) {
        a->learn = GAVE_UP;
        a->found_len = 0;
        free_history(a);
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u gave-up because=copy-%s: a token loop, shape (b) for good",
                      obs_thread_id(), obs_tls.call_counter, dir == OBS_DIR_HTOD ? "in" : "out");
    } else if (a->learn == LEARNED) {
        /* What looked like steps was a warm-up (a model's layers captured
         * into a graph at start-up, before anything was copied): its labels
         * come off in the trace, the loop starts afresh, its first prompt
         * generation 0. */
        a->learn = GAVE_UP;
        munmap(a->roles, ROLE_CACHE);
        a->roles = NULL;
        logic_move(&p->logic, MOVE_FORGET, 0, 0);
        unlabel_since(a->learn_first_index);
        move_to(p, NULL, 0);
        OBS_DEBUG_LOG(PHASES, 1,
                      "tid=%u call=%u learned-dropped because=first-copy-%s unlabelled_from_record=%llu: a warm-up; "
                      "generations start again from 0",
                      obs_thread_id(), obs_tls.call_counter, dir == OBS_DIR_HTOD ? "in" : "out",
                      (unsigned long long)a->learn_first_index);
        return;
    }
    if (first_copy && dir == OBS_DIR_HTOD && p->logic.started) {
        /* The thread's first input arrives after launches that copied
         * nothing in and read nothing back: those were a warm-up (graphs
         * captured at start-up), not a generation. Their labels come off
         * in the trace (live they carried a PREFILL range); the next launch
         * begins generation 0. */
        uint64_t from = a->thread_first_index;
        unlabel_since(from);
        logic_move(&p->logic, MOVE_FORGET, 0, 0);
        move_to(p, NULL, 0);
        t->gen_forwards = 0;
        LOG_DECISION(&p->logic, "warm-up", "first-copy-in-after-launches-with-no-copy",
                     " htod=%llu unlabelled_from_record=%llu; the next launch begins generation 0",
                     (unsigned long long)bytes, (unsigned long long)from);
    }
}

/* Automatic mode: a memset before an iteration's first launch (llama.cpp
 * clears its KV cache this way between conversations). */
__attribute__((noinline)) void on_auto_memset(struct phase_thread *p, uint64_t bytes)
{
    struct token_loop *t = &p->automatic.loop;
    t->window_memset = true;
    t->window_dirty = true;
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u memset bytes=%llu", obs_thread_id(), obs_tls.call_counter,
                  (unsigned long long)bytes);
}

/* Automatic mode, after a launch is stored: its record index where learning
 * or a new generation needs it. */
/* After a launch is stored (auto_launch_stored, phase_forwards.h): its
 * record index where learning or a mark needs it (obs_call_index: a place
 * among the thread's records, also when OBS_RECORD=window left the launch
 * out). */
__attribute__((noinline)) void auto_marks_stored(struct auto_state *a, const struct obs_hooked_call *c)
{
    if (a->learn == LEARNING && a->history_n > 0 && a->history[a->history_n - 1].index == UINT64_MAX)
        a->history[a->history_n - 1].index = obs_call_index(c);
    if (obs_unlikely(a->marks != 0)) {
        uint64_t index = obs_call_index(c);
        if (a->marks & MARK_GEN)
            a->gen_first_index = index;
        if (a->marks & MARK_STEP0)
            a->step0_index = index;
        if (a->marks & MARK_THREAD)
            a->thread_first_index = index;
        if (a->marks & MARK_EXCESS)
            a->excess_index = index;
        if (a->marks & MARK_ITER)
            a->iter_first_index = index;
        if (a->marks & MARK_STEP)
            a->step_first_index = index;
        if (a->marks & MARK_FWD) {
            a->fwd_ring[a->fwd_count % FWD_RING].index = index;
            a->fwd_ring[a->fwd_count % FWD_RING].gen = a->fwd_pending_gen;
            a->fwd_count++;
        }
        a->marks = 0;
    }
}

/* A host delimiter (a sync, or a synchronous copy from the device) ends
 * the iteration: what it read back becomes the forward's and the step's
 * evidence (a token read, a flag, nothing); the ranges stay open (but in a
 * thread that learned shape (a), which ends them at every delimiter). */
void auto_delimiter(struct phase_thread *p, uint64_t now, bool sync)
{
    struct auto_state *a = &p->automatic;
    struct token_loop *t = &a->loop;
    bool token = t->iter_token_bytes > 0, close;
    if (a->learn == LEARNING && a->found_len != 0)
        learn_unit(p, a->found_start, a->found_len); /* noted in this first iteration, no copy in it */
    close = a->learn == LEARNED;
    if (close)
        move_to(p, NULL, 0);
    else if (p->held_end_t == 0)
        p->held_end_t = now;
    OBS_DEBUG_LOG(PHASES, 3, "tid=%u call=%u delimiter kind=%s token_read=%llu ranges=%s", obs_thread_id(),
                  obs_tls.call_counter, sync ? "sync" : "read", (unsigned long long)t->iter_token_bytes,
                  close ? "closed" : "held-open");
    if (token || !t->copied) /* a loop that never copied: each iteration may be the next step */
        t->token_pending = true;
    if (token || (t->iter_read && !t->fwd_read && !t->reads_tokens)) {
        /* the forward's output read (its token; its stop flag in a loop that reads none: a flag read inside a
         * forward, a mask check, is not it): what comes in from here feeds the next forward */
        t->prep_htod = 0;
        t->prep_from_t = p->quiet_from_t; /* this iteration's first delimiter (on_delimiter) */
        t->prep_from_cpu = p->quiet_from_cpu;
    }
    if (t->iter_read) {
        t->fwd_read = true;
        t->fwd_read_at = t->fwd_launches;
    }
    t->fwd_delimited = true;
    t->fwd_delim_at = t->fwd_launches;
    t->unread_launches = (t->iter_launched || t->unread_launches) && !t->iter_read;
    t->step_read = t->step_read || t->iter_read;
    t->iter_read = false;
    if (token) {
        t->gen_token_read = true;
        t->fwd_token_read = true;
        t->gen_token_reads++;
        t->last_read_bytes = t->iter_token_bytes;
        forget_window(t);
    }
    t->iter_token_bytes = 0;
    t->iter_launched = false;
    a->had_delimiter = true;
    if (a->learn == LEARNING)
        segment_ends(a);
}

/* A graph instantiated on this thread: one whose first kernel is the
 * lookup the current forward began with, no longer than what that forward
 * has launched, was captured from it (its launches ran nothing), and the
 * graph's first launch runs it (forward_begins). */
void auto_graph_instantiated(struct phase_thread *p, const struct obs_graph_walk *w)
{
    struct token_loop *t = &p->automatic.loop;
    if (w->incomplete || w->order_cut || w->norder == 0)
        return;
    if (t->forwards && !t->graph_first && w->order[0] == t->fwd_opener && w->norder <= t->fwd_launches) {
        t->forward_captured = true;
        t->captured_before = t->fwd_before;
        t->capture_end_index = obs_thread_next_index();
        OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u capture kernel_nodes=%u forward_launches=%u opener=%u",
                      obs_thread_id(), obs_tls.call_counter, w->norder, t->fwd_launches, t->fwd_opener);
    }
}
