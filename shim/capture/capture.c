/* Capture windows: see capture.h and docs/capture.md.
 *
 * Each window of OBS_CAPTURE is a small state machine, fed the PHASE
 * records of the threads:
 *
 *     WAITING --(a BEGIN that is its first instance)--> OPEN --(its end)--> DONE
 *
 *   - open (open_window): the BEGIN of the window's first instance (steps:
 *     a decode step numbered first .. last, in the generation asked for;
 *     iterations: the thread's instance numbered first .. last, prompts,
 *     steps and serving iterations counted alike; generation:
 *     any range of a generation first .. last), on a thread that claims
 *     the window (the first one there: the window is that thread's);
 *   - close (close_window): on the owner, the END of the window's last
 *     instance (steps: step `last` of its generation; iterations: the
 *     instance numbered `last`), or the BEGIN of an instance past the
 *     window (steps: of another generation, which ended before step
 *     `last`; generation: of a generation past it), the owner's exit, or
 *     the process's exit;
 *   - DONE windows never open again.
 * The profiler starts when the first window opens and stops when the last
 * open one closes (windows may overlap). The state changes, the
 * profiler's calls and the meta lines that say them are made under the
 * output lock.
 *
 * OBS_RECORD=window: the recorder's store gate (record/recorder.h) opens
 * with the profiler's start and closes with its stop, under the same lock:
 * a CALL record is stored while a window is open. On the window's thread
 * that is exact, the calls after its opening BEGIN and before its closing
 * record (both are made on that thread, before its next call is stored);
 * on other threads, the calls that return while it is open (what a
 * profiler captures of them). */
#include "capture.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "runtimes/real_symbols.h"

/* The trace's fixed RANGE_NAME ids of the phases that make instances
 * (docs/trace-format.md, PHASE and LAYER records; phases/phase_ids.h:
 * OBS_PHASE_ITERATION, the phase of a serving loop's ITERATION/k). */
#define RANGE_PREFILL 1u
#define RANGE_DECODE 2u
#define RANGE_ITERATION 5u

enum window_state { WAITING = 0, OPEN = 1, DONE = 2 };

/* Why a window closed, for the meta (capture_<i>_end=). */
static const char *const end_reasons[] = {"", "after-last", "generation-ended", "thread-exit", "process-exit"};
enum end_reason { END_NONE = 0, END_AFTER_LAST, END_GENERATION_ENDED, END_THREAD_EXIT, END_PROCESS_EXIT };

/* The instance a record is about: a prompt (its PREFILL), a decode step,
 * or a serving loop's iteration (ITERATION/k: one forward over a changing
 * batch, once the engine has seen the loop). The one place that reads
 * phase ids. */
enum instance_kind { NOT_AN_INSTANCE = 0, PROMPT, STEP, ITERATION };

struct instance_key {
    uint16_t phase;
    uint32_t step, gen;
};

struct window {
    struct obs_capture_window spec;
    _Atomic int state;        /* enum window_state */
    _Atomic uint32_t owner;   /* the thread whose phases opened it (0: none yet) */
    uint32_t gen;             /* steps: the generation it is in */
    bool end_known;           /* end: the key of the instance whose END closes it */
    struct instance_key end;
    /* Set under the output lock, said in the meta (capture_<i>_start_ns ...). */
    _Atomic uint64_t t_start, t_stop;         /* host ns; t_stop UINT64_MAX while open */
    _Atomic uint64_t start_index, stop_index; /* the owner's records strictly between them are inside */
};

static struct window windows[OBS_CAPTURE_WINDOWS_MAX];
static unsigned nwindows;
static unsigned open_count; /* under the output lock */

/* Per thread: its instances so far (iterations), the last one's key (a
 * range the engine closes at a sync and reopens at the next launch is the
 * same instance), the BEGIN indexes of its last instances (a warm-up whose
 * labels the engine takes off later is no iteration). */
#define RECENT_INSTANCES 8u
#define STACKED_BEGINS 3u /* BEGINs one launch may write before its CALL (DECODE/STEADY, STEP_k, KV_GATHER) */
struct capture_tls {
    uint32_t instances;
    bool have_last;
    struct instance_key last;
    uint64_t recent[RECENT_INSTANCES]; /* BEGIN indexes + 1; 0: none, or no longer counted */
    unsigned next_recent;
};
static __thread struct capture_tls capture_tls __attribute__((tls_model("initial-exec")));

/* ---- the profilers ------------------------------------------------------------- */

typedef int (*roctx_control_fn)(uint64_t tid);
static roctx_control_fn roctx_resume, roctx_pause;
static pthread_once_t roctx_once = PTHREAD_ONCE_INIT;

/* rocprofv3 --selected-regions follows roctxProfilerResume / Pause of
 * rocprofiler-sdk's roctx; looked up where a roctx is already loaded (the
 * shim's own live ranges load it), never loaded for this. */
static void roctx_find(void)
{
    static const char *const names[] = {"librocprofiler-sdk-roctx.so.1", "librocprofiler-sdk-roctx.so",
                                        "libroctx64.so.4"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0] && roctx_resume == NULL; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h == NULL)
            continue;
        roctx_resume = (roctx_control_fn)obs_real_dlsym(h, "roctxProfilerResume");
        roctx_pause = (roctx_control_fn)obs_real_dlsym(h, "roctxProfilerPause");
        if (roctx_resume == NULL || roctx_pause == NULL)
            roctx_resume = roctx_pause = NULL;
    }
}

/* "api=status" appended to said (",' between). */
static void say_call(char *said, size_t len, const char *api, int status)
{
    size_t used = strlen(said);
    snprintf(said + used, len - used, "%s%s=%d", used > 0 ? "," : "", api, status);
}

/* The profiler's start (or stop) through every runtime family the process
 * has: CUDA through its exported runtime when there is one (which reaches
 * the driver's itself), else the driver's (nvcc's static cudart exports
 * nothing); HIP's, and rocprofiler-sdk's roctx pause/resume when loaded.
 * Under the guard: nothing they call is recorded, errno is kept, and the
 * app's CUDA last error stays as it was. */
static void call_profilers(bool start, char *said, size_t len)
{
    struct obs_guard guard;
    obs_fn_cudaProfilerStart rt =
        start ? OBS_CUDA_PROFILER_REAL(cudaProfilerStart) : OBS_CUDA_PROFILER_REAL(cudaProfilerStop);
    obs_fn_cuProfilerStart drv = start ? OBS_CUDRV_PROFILER_REAL(cuProfilerStart) : OBS_CUDRV_PROFILER_REAL(cuProfilerStop);
    obs_fn_hipProfilerStart hip = start ? OBS_HIP_PROFILER_REAL(hipProfilerStart) : OBS_HIP_PROFILER_REAL(hipProfilerStop);

    obs_guard_enter(&guard);
    said[0] = '\0';
    if (rt != NULL) {
        obs_fn_cudaPeekAtLastError peek = OBS_CUDA_REAL(cudaPeekAtLastError);
        obs_fn_cudaGetLastError get = OBS_CUDA_REAL(cudaGetLastError);
        int before = peek != NULL ? (int)peek() : 0, status = (int)rt();
        if (status != 0 && before == 0 && get != NULL)
            get(); /* our failure is not the app's to read */
        say_call(said, len, start ? "cudaProfilerStart" : "cudaProfilerStop", status);
    } else if (drv != NULL) {
        say_call(said, len, start ? "cuProfilerStart" : "cuProfilerStop", (int)drv());
    }
    if (hip != NULL) {
        say_call(said, len, start ? "hipProfilerStart" : "hipProfilerStop", (int)hip());
        pthread_once(&roctx_once, roctx_find);
        if (roctx_resume != NULL)
            say_call(said, len, start ? "roctxProfilerResume" : "roctxProfilerPause",
                     start ? roctx_resume(0) : roctx_pause(0));
    }
    if (said[0] == '\0')
        snprintf(said, len, "none");
    obs_guard_leave(&guard);
}

/* ---- the meta ----------------------------------------------------------------------- */

/* Under the output lock: meta lines, when the trace is open. */
static void meta_locked(const char *text, size_t len)
{
    if (len > 0 && obs_output_ensure_open_locked())
        obs_output_write_meta_locked(text, len);
}

static void say_open_locked(unsigned i, const struct window *w, uint32_t tid, const char *said)
{
    char spec[64], text[512];
    int n;
    obs_capture_window_format(&w->spec, spec, sizeof spec);
    n = snprintf(text, sizeof text,
                 "capture_%u=%s\ncapture_%u_tid=%u\ncapture_%u_generation=%u\ncapture_%u_start_ns=%llu\n"
                 "capture_%u_start_index=%llu\ncapture_%u_start=%s\n",
                 i, spec, i, (unsigned)tid, i, (unsigned)w->gen, i,
                 (unsigned long long)atomic_load(&w->t_start), i,
                 (unsigned long long)atomic_load(&w->start_index), i, said);
    meta_locked(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
}

static void say_close_locked(unsigned i, const struct window *w, enum end_reason why, const char *said)
{
    char text[320];
    int n = snprintf(text, sizeof text,
                     "capture_%u_stop_ns=%llu\ncapture_%u_stop_index=%llu\ncapture_%u_stop=%s\ncapture_%u_end=%s\n", i,
                     (unsigned long long)atomic_load(&w->t_stop), i, (unsigned long long)atomic_load(&w->stop_index),
                     i, said, i, end_reasons[why]);
    meta_locked(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
}

/* ---- opening and closing ----------------------------------------------------------- */

/* Set once the shim's exit handler has run (or the library's destructor,
 * which runs after the runtimes' own exit handlers): no profiler is called
 * from then on. */
static _Atomic bool runtimes_gone;

/* Under the output lock: one more window open (start) or one fewer; the
 * profiler starts with the first and stops with the last, and the store
 * gate (OBS_RECORD=window) opens and closes with it. */
static void profiler_turn(bool start, char *said, size_t len)
{
    bool first = start ? open_count++ == 0 : --open_count == 0;
    if (first)
        obs_recorder_gate_set_locked(start); /* nothing without OBS_RECORD=window */
    if (!first)
        snprintf(said, len, start ? "already-started" : "still-started");
    else if (atomic_load(&runtimes_gone))
        snprintf(said, len, "none-after-exit");
    else
        call_profilers(start, said, len);
}

static void close_held(uint32_t tid, enum end_reason why);

/* At exit, while the runtimes are still there (an exit handler registered
 * after theirs runs before them): the windows still open stop. */
static void close_at_exit(void)
{
    close_held(0, END_PROCESS_EXIT);
    atomic_store(&runtimes_gone, true); /* the runtimes' exit handlers may run next */
}

static void register_exit_handler(void)
{
    if (atexit(close_at_exit) != 0)
        OBS_DEBUG_LOG(CAPTURE, 1, "atexit failed: a window still open at exit stops when the library ends");
}
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* The owner: w goes OPEN, its bounds from the opening record (its index and
 * time); the profiler starts when no other window is open. */
static void open_window(unsigned i, const struct obs_rec_phase *r, uint64_t index, uint32_t tid)
{
    struct window *w = &windows[i];
    char said[160] = "";
    pthread_once(&exit_once, register_exit_handler);
    obs_out_lock_acquire(&obs_out.lock, tid);
    atomic_store(&w->start_index, index);
    atomic_store(&w->t_start, r->t);
    atomic_store(&w->stop_index, UINT64_MAX);
    atomic_store(&w->t_stop, UINT64_MAX);
    w->gen = r->generation;
    profiler_turn(true, said, sizeof said);
    atomic_store_explicit(&w->state, OPEN, memory_order_release);
    say_open_locked(i, w, tid, said);
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(CAPTURE, 1, "window %u opens on thread %u at record %llu (generation %u): %s", i, (unsigned)tid,
                  (unsigned long long)index, (unsigned)r->generation, said);
}

/* w goes DONE: the owner's records from stop_index on are outside it; the
 * profiler stops when no other window is open. */
static void close_window(unsigned i, uint64_t stop_index, enum end_reason why, uint32_t tid)
{
    struct window *w = &windows[i];
    char said[160] = "";
    obs_out_lock_acquire(&obs_out.lock, tid);
    if (atomic_load(&w->state) != OPEN) {
        obs_out_lock_release(&obs_out.lock);
        return;
    }
    atomic_store(&w->stop_index, stop_index);
    atomic_store(&w->t_stop, obs_now_ns());
    profiler_turn(false, said, sizeof said);
    atomic_store_explicit(&w->state, DONE, memory_order_release);
    say_close_locked(i, w, why, said);
    obs_out_lock_release(&obs_out.lock);
    OBS_DEBUG_LOG(CAPTURE, 1, "window %u closes (%s) at record %llu: %s", i, end_reasons[why],
                  (unsigned long long)stop_index, said);
}

/* ---- what the records say ------------------------------------------------------------ */

static enum instance_kind instance_of(const struct obs_rec_phase *r)
{
    if (r->phase == RANGE_PREFILL)
        return PROMPT;
    if (r->phase == RANGE_DECODE && r->step != OBS_NO_STEP)
        return STEP;
    if (r->phase == RANGE_ITERATION && r->step != OBS_NO_STEP)
        return ITERATION;
    return NOT_AN_INSTANCE;
}

static struct instance_key key_of(const struct obs_rec_phase *r)
{
    return (struct instance_key){r->phase, r->step, r->generation};
}

static bool same_key(const struct instance_key *a, const struct instance_key *b)
{
    return a->phase == b->phase && a->step == b->step && a->gen == b->gen;
}

static bool in_range(uint32_t v, const struct obs_capture_window *s)
{
    return v >= s->first && v <= s->last;
}

/* Does BEGIN r (the thread's instance number `iteration` when it is one)
 * open w? */
static bool opens(const struct window *w, const struct obs_rec_phase *r, enum instance_kind kind,
                  uint32_t iteration)
{
    const struct obs_capture_window *s = &w->spec;
    switch (s->unit) {
    case OBS_CAPTURE_STEPS:
        return kind == STEP && in_range(r->step, s) &&
               (s->generation == OBS_CAPTURE_ANY_GENERATION || s->generation == r->generation);
    case OBS_CAPTURE_ITERATIONS:
        return kind != NOT_AN_INSTANCE && in_range(iteration, s);
    case OBS_CAPTURE_GENERATIONS:
        return in_range(r->generation, s);
    }
    return false;
}

/* Is BEGIN r on the owner past the open window w? */
static bool past(const struct window *w, const struct obs_rec_phase *r, enum instance_kind kind)
{
    if (w->spec.unit == OBS_CAPTURE_STEPS)
        return kind != NOT_AN_INSTANCE && r->generation != w->gen;
    if (w->spec.unit == OBS_CAPTURE_GENERATIONS)
        return !in_range(r->generation, &w->spec);
    return false;
}

/* The instance whose END closes w, once its BEGIN is seen. */
static void note_end(struct window *w, const struct obs_rec_phase *r, enum instance_kind kind, uint32_t iteration)
{
    if (w->spec.unit == OBS_CAPTURE_STEPS && kind == STEP && r->step == w->spec.last && r->generation == w->gen) {
        w->end = key_of(r);
        w->end_known = true;
    }
    if (w->spec.unit == OBS_CAPTURE_ITERATIONS && kind != NOT_AN_INSTANCE && iteration == w->spec.last) {
        w->end = key_of(r);
        w->end_known = true;
    }
}

static void on_begin(const struct obs_rec_phase *r, uint64_t index, uint32_t tid)
{
    struct capture_tls *t = &capture_tls;
    enum instance_kind kind = instance_of(r);
    uint32_t iteration = t->instances;
    unsigned i;

    if (kind != NOT_AN_INSTANCE) {
        struct instance_key k = key_of(r);
        if (t->have_last && same_key(&t->last, &k)) {
            iteration = t->instances - 1; /* reopened: the same instance */
        } else {
            t->instances++;
            t->last = k;
            t->have_last = true;
            t->recent[t->next_recent++ % RECENT_INSTANCES] = index + 1; /* + 1: 0 is "none" */
        }
    }
    for (i = 0; i < nwindows; i++) {
        struct window *w = &windows[i];
        int state = atomic_load_explicit(&w->state, memory_order_acquire);
        if (state == DONE)
            continue;
        if (state == OPEN) {
            if (atomic_load(&w->owner) != tid)
                continue;
            if (past(w, r, kind)) {
                close_window(i, index, w->spec.unit == OBS_CAPTURE_STEPS ? END_GENERATION_ENDED : END_AFTER_LAST,
                             tid);
                continue;
            }
            note_end(w, r, kind, iteration);
            continue;
        }
        if (!opens(w, r, kind, iteration))
            continue;
        {
            uint32_t none = 0;
            if (!atomic_compare_exchange_strong(&w->owner, &none, tid) && none != tid)
                continue; /* another thread's window */
        }
        w->end_known = false;
        open_window(i, r, index, tid);
        note_end(w, r, kind, iteration);
    }
}

static void on_end(const struct obs_rec_phase *r, uint64_t index, uint32_t tid)
{
    struct instance_key k = key_of(r);
    unsigned i;
    for (i = 0; i < nwindows; i++) {
        struct window *w = &windows[i];
        if (atomic_load_explicit(&w->state, memory_order_acquire) != OPEN || atomic_load(&w->owner) != tid)
            continue;
        if (w->end_known && same_key(&w->end, &k))
            close_window(i, index, END_AFTER_LAST, tid);
    }
}

/* A RELABEL of no phase takes a warm-up's labels off (docs/phases.md): the
 * instances it began there were no iterations. Iterations counted into a
 * window already open stay counted (what the profiler saw). */
static void on_relabel(const struct obs_rec_phase *r)
{
    struct capture_tls *t = &capture_tls;
    unsigned i;
    if (r->phase != 0 || r->last_index == UINT64_MAX)
        return;
    for (i = 0; i < RECENT_INSTANCES; i++) {
        uint64_t begin = t->recent[i];
        if (begin == 0)
            continue;
        begin--;
        if (begin + STACKED_BEGINS >= r->first_index && begin <= r->last_index && t->instances > 0) {
            t->instances--;
            t->recent[i] = 0;
            t->have_last = false; /* the next BEGIN of that key is a new instance */
        }
    }
}

void obs_capture_on_phase(const struct obs_rec_phase *r, uint64_t index)
{
    uint32_t tid = obs_thread_id();
    if (index == UINT64_MAX) /* not kept: no index to bound the window by */
        index = obs_thread_next_index();
    if (r->event == OBS_PHASE_BEGIN)
        on_begin(r, index, tid);
    else if (r->event == OBS_PHASE_END)
        on_end(r, index, tid);
    else if (r->event == OBS_PHASE_RELABEL)
        on_relabel(r);
}

/* Close every window t holds open (any thread's when tid is 0). */
static void close_held(uint32_t tid, enum end_reason why)
{
    uint32_t self = obs_thread_id();
    unsigned i;
    for (i = 0; i < nwindows; i++) {
        struct window *w = &windows[i];
        uint32_t owner = atomic_load(&w->owner);
        if (atomic_load_explicit(&w->state, memory_order_acquire) != OPEN || (tid != 0 && owner != tid))
            continue;
        /* the owner's next record, or, for another thread's window, all it wrote */
        close_window(i, owner == self ? obs_thread_next_index() : UINT64_MAX, why, self);
    }
}

void obs_capture_thread_exit(void)
{
    if (nwindows > 0)
        close_held(obs_thread_id(), END_THREAD_EXIT);
}

void obs_capture_init(void)
{
    unsigned i;
    nwindows = obs_cfg.capture.n;
    for (i = 0; i < nwindows; i++)
        windows[i].spec = obs_cfg.capture.w[i];
    if (nwindows > 0 && obs_cfg.phases_off)
        obs_log_warn("OBS_CAPTURE: the phase engine is off (OBS_PHASES=off): no window can begin");
}

void obs_capture_finish(void)
{
    char spec[OBS_CAPTURE_TEXT_MAX * 2], text[OBS_CAPTURE_TEXT_MAX * 2 + 256];
    uint32_t self = obs_thread_id();
    unsigned i;
    int n;

    if (nwindows == 0)
        return;
    atomic_store(&runtimes_gone, true);
    close_held(0, END_PROCESS_EXIT);
    obs_capture_spec_format(&obs_cfg.capture, spec, sizeof spec);
    obs_out_lock_acquire(&obs_out.lock, self);
    n = snprintf(text, sizeof text, "capture=%s\nrecord=%s\n", spec, obs_cfg.record_window ? "window" : "all");
    meta_locked(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
    for (i = 0; i < nwindows; i++) {
        char one[64], words[160];
        if (atomic_load(&windows[i].state) != WAITING)
            continue;
        obs_capture_window_format(&windows[i].spec, one, sizeof one);
        n = snprintf(text, sizeof text, "capture_%u=%s\ncapture_%u_end=never-began\n", i, one, i);
        meta_locked(text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0);
        obs_capture_window_describe(&windows[i].spec, words, sizeof words);
        obs_log_warn("OBS_CAPTURE: %s (%s) never began: the profiler was not started for it", one, words);
    }
    obs_out_lock_release(&obs_out.lock);
}

void obs_capture_fork_child(void)
{
    unsigned i;
    for (i = 0; i < nwindows; i++) {
        atomic_store(&windows[i].state, WAITING);
        atomic_store(&windows[i].owner, 0);
        windows[i].end_known = false;
    }
    open_count = 0;
    memset(&capture_tls, 0, sizeof capture_tls);
}
