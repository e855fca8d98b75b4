/* The phase engine: see phase_engine.h and docs/phases.md. This file holds
 * its entry points (a recorded call's before and after, a graph's
 * instantiation is layer_track.c's, a thread's end, exit, set-up) and
 * dispatches each event to the mode's logic: the structure model
 * (phase_forwards.c, phase_learn.c) or the rules (phase_rules_mode.c);
 * phase_state.h lists the files.
 *
 * Per thread (phases are per thread, like NVTX ranges): a logical state
 * (the generation, the top phase PREFILL, DECODE or ITERATION, the decode
 * step or iteration), the stack of ranges open live (at most five:
 * DECODE/STEADY, DECODE/STEP_k, LAYER/k, KV_GATHER), and the mode's own
 * part. Each launch computes the stack its phase wants and moves the open
 * stack to it: pops and pushes (PHASE END/BEGIN records plus live ranges)
 * happen only where the two differ, so a launch inside an unchanged phase
 * costs a byte load and a few compares.
 *
 * State: everything process-wide is in one struct, obs_engine (the
 * settings set-up decides once, the per-name-id caches, the range names
 * and their handles); the hot-path flag obs_phase_on stays apart
 * (phase_engine.h reads it inline).
 *
 * Memory: per-thread state and the learning history are mmap'ed on a
 * thread's first event (history only in automatic mode, and unmapped once
 * learning ends); name classes are a global byte array per name id. */
#include "phase_engine.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ranges.h"
#include "phase_forwards.h"

OBS_HIDDEN OBS_HOT_DATA _Atomic int obs_phase_on;

_Atomic uint32_t obs_phase_bad_moves;

struct phase_engine obs_engine = {.once = PTHREAD_ONCE_INIT, .set = {.mode = OBS_PHASES_OFF}};

__thread struct phase_thread *phase_tls __attribute__((tls_model("initial-exec")));

void *map_zeroed(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void thread_gone(void *arg)
{
    struct phase_thread *p = arg;
    phase_tls = NULL; /* a hooked call from a later destructor starts afresh */
    if (obs_engine.set.mode == OBS_PHASES_AUTO) {
        free_history(&p->automatic);
        if (p->automatic.roles != NULL)
            munmap(p->automatic.roles, ROLE_CACHE);
    }
    if (p->layers != NULL)
        munmap(p->layers, layer_track_bytes());
    munmap(p, sizeof *p);
}

/* A thread's first event: map its state. Out of line, so that the inlined
 * fast path below stays a TLS load and a test. */
__attribute__((noinline, cold)) struct phase_thread *thread_state_slow(void)
{
    struct phase_thread *p;
    obs_call_note_slow();
    p = map_zeroed(sizeof *p);
    if (p == NULL) {
        OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u fallback because=no-memory: this thread's calls get no phases",
                      obs_thread_id(), obs_tls.call_counter);
        return NULL;
    }
    logic_move(&p->logic, MOVE_FORGET, 0, 0); /* the initial state */
    /* the tracker runs with OBS_LAYER=off too, so that phases do not change with it; it then writes nothing */
    p->layers = layer_track_new(!obs_cfg.layers_off); /* NULL: no memory, no layers for this thread */
    if (obs_engine.set.mode == OBS_PHASES_RULES)
        p->rules.first_index = p->rules.iter_index = p->rules.missed_first = UINT64_MAX;
    if (obs_engine.set.mode == OBS_PHASES_AUTO) {
        p->automatic.history = map_zeroed(HISTORY_CAP * sizeof *p->automatic.history);
        p->automatic.learn = p->automatic.history != NULL ? LEARNING : GAVE_UP;
        p->automatic.loop.window_first_index = p->automatic.loop.prep_launch_index = UINT64_MAX;
        p->automatic.gen_first_index = p->automatic.step0_index = p->automatic.thread_first_index =
            p->automatic.excess_index = p->automatic.iter_window_index = p->automatic.step_first_index = UINT64_MAX;
        p->automatic.iter_first_index = 0;
        if (p->automatic.history == NULL)
            OBS_DEBUG_LOG(PHASES, 1, "tid=%u call=%u fallback because=no-memory: no learning window, shape (b) only",
                          obs_thread_id(), obs_tls.call_counter);
    }
    OBS_DEBUG_LOG(PHASES, 2, "tid=%u call=%u thread-state mode=%s", obs_thread_id(), obs_tls.call_counter,
                  obs_engine.set.mode == OBS_PHASES_RULES ? "rules" : "auto");
    phase_tls = p;
    pthread_setspecific(obs_engine.thread_key, p);
    return p;
}


/* Level 4: every launch and the innermost range open after it (its label). */
static __attribute__((noinline, cold)) void log_launch(const struct phase_thread *p, const struct obs_rec_call *rec,
                                                       bool graph)
{
    char label[64] = "none";
    if (p->depth > 0) {
        const struct range *r = &p->open[p->depth - 1];
        if (r->step != OBS_NO_STEP)
            snprintf(label, sizeof label, "%s gen=%u step=%u", phase_names[r->phase & 3], r->gen, r->step);
        else
            snprintf(label, sizeof label, "%s gen=%u", phase_names[r->phase & 3], r->gen);
    }
    obs_debug_write(OBS_DBG_PHASES, "tid=%u call=%u launch name=%u threads=%llu graph=%d phase=%s", obs_thread_id(),
                    obs_tls.call_counter, graph ? 0 : rec->name, graph ? 0ull : (unsigned long long)launch_threads(rec),
                    graph, label);
}

void rules_not_a_step(struct phase_thread *p);

static void on_launch(struct phase_thread *p, const struct obs_rec_call *rec, bool graph)
{
    uint32_t name = graph ? GRAPH_TOKEN : rec->name;
    uint8_t cls = graph ? CLASS_KNOWN : class_of(name);
    bool new_segment = p->after_delimiter || !p->logic.started;
    bool steady_graph, kv, same_logic;
    struct range want[5];
    uint32_t layer1 = 0;
    unsigned n;

    if (obs_engine.set.mode == OBS_PHASES_RULES) {
        uint32_t gen_before = p->logic.gen;
        bool started_before = p->logic.started;
        cls = rules_class(&p->rules, p->logic.started, cls, rec, graph);
        graph = graph && p->rules.iter_phase == OBS_PHASE_NONE; /* a selected iteration's graph launch is one of its launches */
        struct logic before = p->logic;
        if (obs_unlikely(obs_engine.set.have_iteration_rule) && rules_iteration(p, cls, name, new_segment))
            steady_graph = false; /* a serving loop's: OBS_PHASES and OBS_STEP do not apply */
        else
            steady_graph = step_rules_mode(p, cls, name, graph, new_segment);
        if (obs_unlikely((cls & CLASS_STEP) || graph) && obs_engine.set.have_step_rule)
            rules_step_launch(p, &before, cls, name, graph);
        if (obs_unlikely(p->logic.gen != gen_before && started_before))
            rules_last_step_ends(p); /* before the launch that begins the next generation is counted */
        if (obs_unlikely(p->rules.missed_first != UINT64_MAX)) {
            if (p->logic.gen != gen_before || !started_before)
                rules_not_a_step(p); /* a new generation: that iteration was none of the last step */
            else
                p->rules.missed_first = UINT64_MAX; /* the step goes on: a read inside its forward */
        }
        kv = (cls & CLASS_PHASE_MASK) == OBS_PHASE_KV_GATHER;
        p->rules.iter_after = 0; /* iter:after: counts what came since the last launch */
        p->rules.iter_after_bytes = 0;
        p->rules.after_token = false;
        p->rules.iter_launched = true;
    } else {
        steady_graph = auto_launch(p, name, cls, rec, graph, new_segment);
        kv = (cls & CLASS_KV_DEFAULT) != 0;
    }
    p->after_delimiter = false;
    /* the same generation, phase and step as the last launch: the same layer instance too */
    same_logic = p->last_want.valid && p->last_want.gen == p->logic.gen && p->last_want.step == p->logic.step &&
                 p->last_want.top == p->logic.top;
    if (obs_likely(p->layers != NULL))
        layer1 = layer_launch(p->layers, &p->logic, name, same_logic);
    kv = kv && !graph && p->logic.top == OBS_PHASE_DECODE;
    if (obs_likely(same_logic && p->last_want.pushes == p->pushes && p->last_want.kv == kv &&
                   p->last_want.steady_graph == steady_graph && p->last_want.layer1 == layer1)) {
        p->held_end_t = 0; /* as move_to to the ranges already open */
    } else if (same_logic && p->last_want.pushes == p->pushes && !kv && !p->last_want.kv && !steady_graph &&
               !p->last_want.steady_graph && p->depth > 0) {
        layer_switch(p, layer1); /* only the layer changed: the innermost range (live only: no record) */
    } else {
        n = wanted_with_layer(&p->logic, kv, steady_graph, layer1, want);
        move_to(p, want, n);
        p->last_want.pushes = p->pushes;
        p->last_want.gen = p->logic.gen;
        p->last_want.step = p->logic.step;
        p->last_want.top = p->logic.top;
        p->last_want.kv = kv;
        p->last_want.steady_graph = steady_graph;
        p->last_want.layer1 = layer1;
        p->last_want.valid = true;
        if (obs_likely(p->layers != NULL))
            layer_launch_moved(p->layers);
    }
}

void obs_phase_before(const struct obs_hooked_call *c, uint16_t api)
{
    struct phase_thread *p;
    uint8_t ev = api < OBS_API_COUNT ? obs_engine.set.api_event[api] : EV_OTHER;
    unsigned dir;
    if (ev == EV_OTHER || ev == EV_HOST_SYNC)
        return;
    p = thread_state();
    if (p == NULL)
        return;
    switch (ev) {
    case EV_LAUNCH:
        on_launch(p, &c->rec, false);
        if (obs_debug_on(OBS_DBG_PHASES, 4))
            log_launch(p, &c->rec, false);
        if (obs_engine.set.launch_ranges && c->rec.name != 0) {
            obs_range_push(launch_handle(c->rec.name));
            p->launch_range_open = true;
        }
        break;
    case EV_GRAPH:
        on_launch(p, &c->rec, true);
        if (obs_debug_on(OBS_DBG_PHASES, 4))
            log_launch(p, &c->rec, true);
        break;
    case EV_COPY:
    case EV_COPY_SYNC:
        dir = c->rec.flags & OBS_CALL_DIR_MASK;
        if (obs_engine.set.mode == OBS_PHASES_RULES) {
            if (obs_unlikely(obs_engine.set.rules.iter_bytes_mask != 0))
                p->rules.iter_after_bytes |= obs_phase_rules_transfer_bytes(&obs_engine.set.rules, OBS_PATTERN_MEMCPY,
                                                                            (uint8_t)dir, c->rec.u.bytes);
            rules_copy(p, dir, c->rec.u.bytes);
            on_classified_transfer(p, obs_engine.set.copy_class[dir % OBS_DIR_COUNT], 1u << (dir % OBS_DIR_COUNT));
        }
        else
            on_auto_copy(p, dir, c->rec.u.bytes);
        break;
    case EV_MEMSET:
        if (obs_engine.set.mode == OBS_PHASES_RULES) {
            if (obs_unlikely(obs_engine.set.rules.iter_bytes_mask != 0))
                p->rules.iter_after_bytes |= obs_phase_rules_transfer_bytes(&obs_engine.set.rules, OBS_PATTERN_MEMSET,
                                                                            0, c->rec.u.bytes);
            on_classified_transfer(p, obs_engine.set.memset_class, OBS_AFTER_MEMSET);
        }
        else
            on_auto_memset(p, c->rec.u.bytes);
        break;
    default:
        break;
    }
}

/* A host delimiter (a sync, or a synchronous copy from the device) ends
 * the iteration. In automatic mode the phase may go on after it (a
 * prompt's next chunk, a step's next iteration, the work that follows a
 * token read), which the next launch tells: the ranges stay open until
 * then (one range per prompt and per step in nsys, as in the trace), and
 * if the phase does not go on, its trace END carries the time of the first
 * delimiter after its last launch. Rules hold them the same way (the next
 * launch's phase is given at the launch: a prompt of several iterations is
 * one PREFILL range live). A thread that learned shape (a) ends the ranges
 * at every delimiter. */
static __attribute__((noinline)) void on_delimiter(struct phase_thread *p, uint8_t ev)
{
    uint64_t now = obs_now_ns();
    if (!p->after_delimiter && (obs_engine.set.mode == OBS_PHASES_AUTO || obs_engine.set.have_iteration_rule)) {
        /* the iteration's first delimiter: a system call once an iteration, never per launch (rules: where
         * OBS_ITERATION's idle gaps need it) */
        p->quiet_from_t = now;
        p->quiet_from_cpu = obs_thread_cpu_ns();
    }
    if (obs_engine.set.mode == OBS_PHASES_AUTO)
        auto_delimiter(p, now, ev == EV_HOST_SYNC);
    else
        rules_delimiter(p, now);
    p->after_delimiter = true;
    p->delimiter_t = now;
}

void obs_phase_after(const struct obs_hooked_call *c, uint16_t api, int32_t status)
{
    struct phase_thread *p = phase_tls;
    uint8_t ev = api < OBS_API_COUNT ? obs_engine.set.api_event[api] : EV_OTHER;
    unsigned dir;
    struct obs_guard guard;
    (void)status;
    if (ev == EV_OTHER || ev == EV_COPY || ev == EV_MEMSET)
        return;
    if (p == NULL)
        p = thread_state();
    if (p == NULL) {
        obs_call_forget_slow();
        return;
    }
    obs_guard_enter(&guard); /* our records are made outside any hooked call; errno is the real call's */
    if (p->launch_range_open) {
        obs_range_pop();
        p->launch_range_open = false;
    }
    if ((ev == EV_LAUNCH || ev == EV_GRAPH) && obs_engine.set.mode == OBS_PHASES_AUTO) {
        auto_launch_stored(&p->automatic, c);
    } else if ((ev == EV_LAUNCH || ev == EV_GRAPH) && obs_unlikely(p->rules.marks != 0)) {
        rules_launch_stored(&p->rules, c);
    }
    dir = c->rec.flags & OBS_CALL_DIR_MASK;
    if (ev == EV_HOST_SYNC || (ev == EV_COPY_SYNC && (dir == OBS_DIR_DTOH || dir == OBS_DIR_DEFAULT)))
        on_delimiter(p, ev);
    obs_call_forget_slow(); /* slow paths taken after the real call belong to no call */
    obs_guard_leave(&guard);
}

/* A graph's instantiation (see phase_engine.h): what the structure model
 * learns from it (a forward captured), then its kernel nodes' layers. Set
 * up by a recorded call already (the captured launches were): never set up
 * from here, where the settings may not be loaded yet. */
void obs_phase_graph_layers(struct obs_graph_walk *w)
{
    struct phase_thread *p = phase_tls;
    if (atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    if (p != NULL && obs_engine.set.mode == OBS_PHASES_AUTO)
        auto_graph_instantiated(p, w);
    else if (p != NULL && obs_engine.set.mode == OBS_PHASES_RULES)
        rules_graph_instantiated(p, w);
    if (!obs_cfg.layers_off)
        layer_graph_nodes(p, w);
}

/* The thread's end: what waited for launches that will not come. */
static void settle_waiting(struct phase_thread *p)
{
    if (p->layers != NULL)
        layer_due_run(p->layers);
    if (p->layers != NULL && p->layers->n > p->layers->seg)
        layer_analyse(p->layers, "exit"); /* the thread's last instance: nothing ends it */
    if (obs_engine.set.mode == OBS_PHASES_RULES && p->rules.missed_first != UINT64_MAX)
        rules_not_a_step(p); /* the thread's last iteration: nothing followed it */
    if (obs_engine.set.mode == OBS_PHASES_RULES)
        rules_last_step_ends(p);
    if (obs_engine.set.mode == OBS_PHASES_AUTO)
        last_step_ends(&p->logic, p, obs_thread_next_index(), false);
}

void obs_phase_thread_exit(void)
{
    struct phase_thread *p = phase_tls; /* NULL once its own destructor ran (thread_gone) */
    if (p == NULL || atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    settle_waiting(p);
}

void obs_phase_end_open_ranges(void)
{
    struct phase_thread *p = phase_tls;
    if (p == NULL || atomic_load_explicit(&obs_phase_on, memory_order_acquire) != 1)
        return;
    settle_waiting(p);
    if (p->depth == 0)
        return;
    if (p->launch_range_open) {
        obs_range_pop();
        p->launch_range_open = false;
    }
    move_to(p, NULL, 0);
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* One message for a bad rule: the text with a caret under the offending
 * character (a window of it when long), and what is used instead. */
static void report_bad_rule(const char *var, const char *text, const struct obs_phase_rule_error *err,
                            const char *instead)
{
    char shown[81];
    size_t len = strlen(text), col = err->column ? err->column - 1 : 0, from = 0, n, i;
    if (col > 60)
        from = col - 60;
    n = len - from < 80 ? len - from : 80;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)text[from + i];
        shown[i] = ch >= ' ' && ch < 0x7f ? (char)ch : '?';
    }
    shown[n] = '\0';
    obs_log_warn("%s: %s at column %zu; %s instead\n"
                 "obsshim:   %s%s\n"
                 "obsshim:   %*s^",
                 var, err->what, err->column, instead, from > 0 ? "..." : "", shown, (int)(col - from + (from > 0 ? 3 : 0)),
                 "");
}

/* OBS_LAYER has OBS_STEP's grammar (a glob list): its parser's words, said of a layer. */
static void layer_rule_words(char *what, size_t len)
{
    static const struct {
        const char *from, *to;
    } words[] = {{"a step opens with a kernel", "a layer begins with a kernel"}, {"OBS_STEP", "OBS_LAYER"}};
    char out[sizeof ((struct obs_phase_rule_error *)0)->what];
    size_t i;
    for (i = 0; i < sizeof words / sizeof words[0]; i++) {
        char *at = strstr(what, words[i].from);
        if (at != NULL) {
            snprintf(out, sizeof out, "%.*s%s%s", (int)(at - what), what, words[i].to, at + strlen(words[i].from));
            snprintf(what, len, "%s", out);
        }
    }
}

static void setup(void)
{
    struct engine_settings *set = &obs_engine.set;
    struct obs_phase_rule_error err;
    const char *phases = obs_cfg.phases, *step = obs_cfg.step, *iteration = obs_cfg.iteration;
    unsigned i;

    build_api_table();
    set->gen_gap_ns = (uint64_t)obs_cfg.gen_gap_ms * 1000000u;
    if (obs_cfg.phases_off || pthread_key_create(&obs_engine.thread_key, thread_gone) != 0) {
        OBS_DEBUG_LOG(PHASES, 1, "set-up mode=off because=%s", obs_cfg.phases_off ? "OBS_PHASES=off" : "no-thread-key");
        atomic_store(&obs_phase_on, 2);
        return;
    }
    set->mode = OBS_PHASES_AUTO;
    if (phases[0] != '\0' || step[0] != '\0' || iteration[0] != '\0') {
        if (obs_phase_rules_parse(phases, false, &set->rules, &err) != 0) {
            report_bad_rule("OBS_PHASES", phases, &err, "automatic phases are used");
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_PHASES column=%zu mode=auto", err.column);
        } else if (obs_phase_rules_parse(step, true, &set->step_rules, &err) != 0) {
            report_bad_rule("OBS_STEP", step, &err, "automatic phases are used");
            set->rules.count = 0;
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_STEP column=%zu mode=auto", err.column);
        } else if (obs_phase_rules_parse(iteration, true, &set->iteration_rules, &err) != 0) {
            report_bad_rule("OBS_ITERATION", iteration, &err, "automatic phases are used");
            set->rules.count = set->step_rules.count = 0;
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_ITERATION column=%zu mode=auto",
                          err.column);
        } else if (set->rules.count > 0 || set->step_rules.count > 0 || set->iteration_rules.count > 0) {
            set->mode = OBS_PHASES_RULES;
            set->have_step_rule = set->step_rules.count > 0;
            set->have_iteration_rule = set->iteration_rules.count > 0;
            for (i = 0; i < OBS_DIR_COUNT; i++)
                set->copy_class[i] = obs_phase_rules_match_memcpy(&set->rules, (uint8_t)i);
            set->memset_class = obs_phase_rules_match_memset(&set->rules);
            if (set->rules.sized_mask | set->rules.iter_kernel_mask)
                obs_engine.names.rules_masks = map_zeroed(CLASS_CACHE * sizeof *obs_engine.names.rules_masks);
        }
    }
    if (obs_cfg.layer[0] != '\0') {
        if (obs_phase_rules_parse(obs_cfg.layer, true, &set->layer_rules, &err) != 0) {
            layer_rule_words(err.what, sizeof err.what);
            report_bad_rule("OBS_LAYER", obs_cfg.layer, &err, "the layers are found automatically");
            OBS_DEBUG_LOG(PHASES, 1, "fallback because=bad-rule variable=OBS_LAYER column=%zu layers=auto", err.column);
        } else {
            set->have_layer_rule = set->layer_rules.count > 0;
        }
    }
    if (obs_ranges_init(obs_cfg.nvtx_domain)) {
        set->ranges_on = true;
        obs_engine.ranges.step_handles = map_zeroed(STEP_HANDLES * sizeof *obs_engine.ranges.step_handles);
        obs_engine.ranges.iter_handles = map_zeroed(STEP_HANDLES * sizeof *obs_engine.ranges.iter_handles);
        range_names_setup();
        if (obs_cfg.nvtx_launch) {
            obs_engine.names.launch_handles = map_zeroed(CLASS_CACHE * sizeof *obs_engine.names.launch_handles);
            set->launch_ranges = obs_engine.names.launch_handles != NULL;
        }
    }
    pthread_atfork(NULL, NULL, names_fork_child);
    OBS_DEBUG_LOG(PHASES, 1,
                  "set-up mode=%s patterns=%u step_patterns=%u iteration_patterns=%u gen_gap_ms=%u live_ranges=%s "
                  "nvtx_launch=%d",
                  set->mode == OBS_PHASES_RULES ? "rules" : "auto", set->rules.count, set->step_rules.count,
                  set->iteration_rules.count,
                  obs_cfg.gen_gap_ms, set->ranges_on ? "on" : "off (no NVTX tool or roctx loaded)",
                  set->launch_ranges);
    atomic_store(&obs_phase_on, 1);
}

bool obs_phase_engine_init(void)
{
    pthread_once(&obs_engine.once, setup);
    return atomic_load(&obs_phase_on) == 1;
}

enum obs_phase_mode obs_phase_engine_mode(void)
{
    return obs_engine.set.mode;
}
