/* Emission: the live ranges (NVTX / roctx, through ranges.h) and the
 * PHASE records (BEGIN, END, RELABEL) that the trace holds, the range
 * names and their handles. The structure model says what it wants open;
 * move_to turns the difference into pops and pushes (docs/phases.md,
 * "Emission rule"). */
#include "layer_track.h"

#include <stdio.h>
#include <string.h>

#include "ranges.h"

/* ---- range names: handles for the live ranges, strings for the trace ------------------- */

static const char *const fixed_names[] = {"", "PREFILL", "DECODE", "KV_GATHER", "DECODE/STEADY", "ITERATION"};
static const uint32_t fixed_colors[] = {0, 0xff1f77b4u, 0xff2ca02cu, 0xffd62728u, 0xff98df8au, 0xffff7f0eu};
#define STEP_COLOR 0xff2ca02cu
#define LAYER_COLOR 0xff9467bdu

/* A numbered range's name: "DECODE/STEP_k" or "ITERATION/k". */
static int numbered_name(char *out, size_t len, bool iteration, uint32_t k)
{
    return iteration ? snprintf(out, len, "ITERATION/%u", k) : snprintf(out, len, "DECODE/STEP_%u", k);
}

static uint32_t numbered_handle(bool iteration, uint32_t k)
{
    _Atomic uint32_t *handles = iteration ? obs_engine.ranges.iter_handles : obs_engine.ranges.step_handles;
    uint32_t h = 0;
    char name[40];
    if (k < STEP_HANDLES && handles != NULL) {
        h = atomic_load_explicit(&handles[k], memory_order_relaxed);
        if (obs_likely(h != 0))
            return h;
    }
    obs_call_note_slow();
    numbered_name(name, sizeof name, iteration, k);
    h = obs_range_handle(name, iteration ? fixed_colors[OBS_PHASE_ITERATION] : STEP_COLOR);
    if (k < STEP_HANDLES && handles != NULL)
        atomic_store_explicit(&handles[k], h, memory_order_relaxed);
    return h;
}

static uint32_t handle_of(uint32_t name_id)
{
    if (name_id < OBS_PHASE_STEP_NAME_BASE)
        return obs_engine.ranges.fixed_handles[name_id];
    if (name_id >= OBS_PHASE_ITER_NAME_BASE)
        return numbered_handle(true, name_id - OBS_PHASE_ITER_NAME_BASE);
    return numbered_handle(false, name_id - OBS_PHASE_STEP_NAME_BASE);
}

/* The numbered names up to k written ahead, a batch per STRINGS chunk
 * (under the output lock). */
static void write_numbered_locked(bool iteration, uint32_t needed)
{
    struct range_names *rn = &obs_engine.ranges;
    _Atomic uint32_t *written = iteration ? &rn->iters_written : &rn->steps_written;
    uint32_t base = iteration ? OBS_PHASE_ITER_NAME_BASE : OBS_PHASE_STEP_NAME_BASE, k;
    uint32_t limit = iteration ? UINT32_MAX - base : OBS_PHASE_ITER_NAME_BASE - base; /* the family's last number */
    char name[40];
    while ((k = atomic_load(written)) <= needed && k < limit) {
        char *batch = rn->step_batch; /* ours while the output lock is held */
        uint32_t used = 0, end = k + STEP_NAME_BATCH, n;
        if (end < k || end > limit)
            end = limit;
        for (n = k; n < end; n++) {
            int len = numbered_name(name, sizeof name, iteration, n);
            uint32_t got = obs_string_entry_encode(batch + used, (uint32_t)sizeof rn->step_batch - used, base + n,
                                                   OBS_STR_RANGE_NAME, name, (uint32_t)len);
            if (got == 0)
                break;
            used += got;
        }
        if (n == k || obs_output_write_strings_locked(batch, used) != 0)
            break;
        atomic_store(written, n);
    }
}

/* RANGE_NAME strings go into the trace when a PHASE record first needs
 * them (once per name and file: a forked child writes them again). */
static void write_names_slow(uint32_t name_needed)
{
    struct range_names *rn = &obs_engine.ranges;
    uint32_t tid = obs_thread_id(), k;
    obs_call_note_slow();
    obs_out_lock_acquire(&obs_out.lock, tid);
    if (obs_output_ensure_open_locked()) {
        if (atomic_load(&rn->fixed_written) == 0) {
            bool ok = true;
            for (k = 1; k < sizeof fixed_names / sizeof fixed_names[0] && ok; k++)
                ok = obs_output_write_string_locked(k, OBS_STR_RANGE_NAME, fixed_names[k], strlen(fixed_names[k])) == 0;
            if (ok)
                atomic_store(&rn->fixed_written, 1);
        }
        if (name_needed >= OBS_PHASE_ITER_NAME_BASE)
            write_numbered_locked(true, name_needed - OBS_PHASE_ITER_NAME_BASE);
        else if (name_needed >= OBS_PHASE_STEP_NAME_BASE)
            write_numbered_locked(false, name_needed - OBS_PHASE_STEP_NAME_BASE);
    }
    obs_out_lock_release(&obs_out.lock);
}

static inline void ensure_names(uint32_t name_id)
{
    if (obs_unlikely(atomic_load_explicit(&obs_engine.ranges.fixed_written, memory_order_relaxed) == 0) ||
        (name_id >= OBS_PHASE_STEP_NAME_BASE && name_id < OBS_PHASE_ITER_NAME_BASE &&
         obs_unlikely(name_id - OBS_PHASE_STEP_NAME_BASE >=
                      atomic_load_explicit(&obs_engine.ranges.steps_written, memory_order_relaxed))) ||
        (name_id >= OBS_PHASE_ITER_NAME_BASE &&
         obs_unlikely(name_id - OBS_PHASE_ITER_NAME_BASE >=
                      atomic_load_explicit(&obs_engine.ranges.iters_written, memory_order_relaxed))))
        write_names_slow(name_id);
}

void names_fork_child(void)
{
    atomic_store(&obs_engine.ranges.fixed_written, 0);
    atomic_store(&obs_engine.ranges.steps_written, 0);
    atomic_store(&obs_engine.ranges.iters_written, 0);
}

/* ---- records and live ranges ----------------------------------------------------------- */

static void write_phase_at(uint8_t event, const struct range *r, uint64_t first, uint64_t last, uint64_t t)
{
    union obs_record rec;
    /* A one-time slow path before the real call (names written, a step's handle) makes the call begin
     * where that path began (obs_call_started): the ranges it ends and opens change there too, so that
     * the call lies inside its range. */
    if (obs_unlikely(obs_tls.t_slow != 0) && obs_tls.t_slow < t)
        t = obs_tls.t_slow;
    memset(&rec, 0, sizeof rec);
    rec.phase.type = OBS_REC_PHASE;
    rec.phase.event = event;
    rec.phase.phase = r->phase;
    rec.phase.step = r->step;
    rec.phase.t = t;
    rec.phase.generation = r->gen;
    rec.phase.name = r->name;
    rec.phase.first_index = first;
    rec.phase.last_index = last;
    ensure_names(r->name);
    obs_recorder_append(&rec);
}

void write_phase(uint8_t event, const struct range *r, uint64_t first, uint64_t last)
{
    write_phase_at(event, r, first, last, obs_now_ns());
}

static uint32_t layer_handle(uint32_t k)
{
    uint32_t h = k < LAYER_HANDLES ? atomic_load_explicit(&obs_engine.ranges.layer_handles[k], memory_order_relaxed) : 0;
    char name[32];
    if (obs_likely(h != 0))
        return h;
    obs_call_note_slow();
    snprintf(name, sizeof name, "LAYER/%u", k);
    h = obs_range_handle(name, LAYER_COLOR);
    if (k < LAYER_HANDLES)
        atomic_store_explicit(&obs_engine.ranges.layer_handles[k], h, memory_order_relaxed);
    return h;
}

/* A LAYER/k range is live only: the trace has LAYER records, written when
 * the phase instance's layers are known (layer_analyse). */
static void push_range(struct phase_thread *p, const struct range *r)
{
    p->pushes++;
    p->open[p->depth++] = *r;
    if (r->layer1 != 0) {
        if (obs_engine.set.ranges_on)
            obs_range_push(layer_handle(r->layer1 - 1));
        return;
    }
    write_phase(OBS_PHASE_BEGIN, r, 0, 0);
    if (obs_engine.set.ranges_on)
        obs_range_push(handle_of(r->name));
}

static void pop_range(struct phase_thread *p)
{
    const struct range *r = &p->open[--p->depth];
    p->pushes++;
    /* a PREFILL held open past its last delimiter ends there in the trace */
    if (r->layer1 == 0)
        write_phase_at(OBS_PHASE_END, r, 0, 0, p->held_end_t != 0 ? p->held_end_t : obs_now_ns());
    if (obs_engine.set.ranges_on)
        obs_range_pop();
}

bool same_range(const struct range *a, const struct range *b)
{
    return a->name == b->name && a->gen == b->gen && a->step == b->step && a->layer1 == b->layer1;
}

/* Close what the wanted stack does not share with the open one, open the rest. */
void move_to(struct phase_thread *p, const struct range *want, unsigned n)
{
    unsigned common = 0, i;
    while (common < n && common < p->depth && same_range(&p->open[common], &want[common]))
        common++;
    while (p->depth > common)
        pop_range(p);
    p->held_end_t = 0;
    for (i = common; i < n; i++)
        push_range(p, &want[i]);
}

/* The ranges a state wants: [PREFILL], [DECODE/STEP_0 (, KV_GATHER)],
 * [DECODE/STEADY, DECODE/STEP_k (, KV_GATHER)], or [DECODE/STEADY] for a
 * graph launch inside the steady decode. */
unsigned wanted(const struct logic *l, bool kv, bool steady_graph, struct range *out)
{
    unsigned n = 0;
    if (l->top == OBS_PHASE_PREFILL) {
        out[n++] = (struct range){OBS_PHASE_PREFILL, OBS_NO_STEP, OBS_PHASE_PREFILL, l->gen, 0};
        return n;
    }
    if (l->top == OBS_PHASE_ITERATION) {
        out[n++] = (struct range){OBS_PHASE_ITERATION, l->step, OBS_PHASE_ITER_NAME_BASE + l->step, l->gen, 0};
        return n;
    }
    if (l->top != OBS_PHASE_DECODE)
        return 0;
    if (steady_graph || l->step == OBS_NO_STEP) {
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen, 0};
        return n;
    }
    if (l->step > 0)
        out[n++] = (struct range){OBS_PHASE_DECODE, OBS_NO_STEP, OBS_PHASE_NAME_STEADY, l->gen, 0};
    out[n++] = (struct range){OBS_PHASE_DECODE, l->step, OBS_PHASE_STEP_NAME_BASE + l->step, l->gen, 0};
    if (kv)
        out[n++] = (struct range){OBS_PHASE_KV_GATHER, l->step, OBS_PHASE_KV_GATHER, l->gen, 0};
    return n;
}

/* The wanted stack with the live layer (k + 1, 0: none) inside the phase's
 * ranges, around a KV_GATHER. */
unsigned wanted_with_layer(const struct logic *l, bool kv, bool steady_graph, uint32_t layer1,
                                  struct range *out)
{
    unsigned n = wanted(l, kv, steady_graph, out);
    if (obs_likely(layer1 == 0) || n == 0 || steady_graph)
        return n;
    if (out[n - 1].phase == OBS_PHASE_KV_GATHER) {
        out[n] = out[n - 1];
        out[n - 1] = (struct range){out[n - 2].phase, out[n - 2].step, 0, l->gen, layer1};
        return n + 1;
    }
    out[n] = (struct range){out[n - 1].phase, out[n - 1].step, 0, l->gen, layer1};
    return n + 1;
}

/* Take the labels off the thread's records [first, now) in the trace: a
 * RELABEL of no phase (what looked like a generation was a warm-up). */
/* Take the labels off the thread's records [first, end), their layers
 * with them: those written (a LAYER record of none over them) and those
 * an analysis still due would write (write_layer leaves them out). */
void unlabel_span(uint64_t first, uint64_t end)
{
    struct range none = {OBS_PHASE_NONE, OBS_NO_STEP, 0, 0, 0};
    struct layer_track *lt = phase_tls != NULL ? phase_tls->layers : NULL;
    if (first == UINT64_MAX || end == UINT64_MAX || end <= first)
        return;
    write_phase(OBS_PHASE_RELABEL, &none, first, end - 1);
    if (lt != NULL) {
        write_layer(lt, OBS_NO_LAYER, 0, 0, first, end - 1, obs_now_ns());
        lt->void_first = first;
        lt->void_end = end;
    }
}

void unlabel_since(uint64_t first)
{
    unlabel_span(first, obs_thread_next_index());
}

/* The trace's labels of the thread's records [first, now) become r's. */
void relabel_since(uint64_t first, const struct range *r)
{
    uint64_t next = obs_thread_next_index();
    if (first != UINT64_MAX && next != UINT64_MAX && next > first)
        write_phase(OBS_PHASE_RELABEL, r, first, next - 1);
}

void capture_fill(const struct logic *l, const struct logic *before, uint64_t first)
{
    struct range want[4];
    unsigned n;
    if (first >= obs_thread_next_index() || !before->started || before->gen != l->gen ||
        (before->top != OBS_PHASE_PREFILL && before->top != OBS_PHASE_DECODE))
        return;
    n = wanted(before, false, false, want);
    if (n == 0)
        return;
    relabel_since(first, &want[n - 1]);
    LOG_DECISION(l, "capture-fill", "calls-before-the-replay-of-the-captured-forward", " relabelled_from_record=%llu",
                 (unsigned long long)first);
}

/* The next layer inside the same phase range (no KV_GATHER open): pop the
 * layer range, push the next, as move_to would. */
void layer_switch(struct phase_thread *p, uint32_t layer1)
{
    const struct range *phase_range;
    p->held_end_t = 0;
    if (layer1 != 0 && p->depth > 0 && p->open[p->depth - 1].layer1 != 0) {
        /* one layer after another (most switches): the innermost range's layer changes in place, as a pop and
         * a push would leave it, with no record to write */
        p->open[p->depth - 1].layer1 = layer1;
        p->pushes += 2;
        if (obs_engine.set.ranges_on) {
            obs_range_pop();
            obs_range_push(layer_handle(layer1 - 1));
        }
        p->last_want.layer1 = layer1;
        p->last_want.pushes = p->pushes;
        return;
    }
    if (p->last_want.layer1 != 0)
        pop_range(p);
    if (layer1 != 0 && p->depth > 0) {
        phase_range = &p->open[p->depth - 1];
        push_range(p, &(struct range){phase_range->phase, phase_range->step, 0, phase_range->gen, layer1});
    }
    p->last_want.layer1 = layer1;
    p->last_want.pushes = p->pushes;
}

/* At set-up, with a live sink: the fixed ranges' handles. */
void range_names_setup(void)
{
    unsigned i;
    for (i = 1; i < sizeof fixed_names / sizeof fixed_names[0]; i++)
        obs_engine.ranges.fixed_handles[i] = obs_range_handle(fixed_names[i], fixed_colors[i]);
}
