/* Start-up and shutdown: see init.h.
 *
 * Start-up runs once (pthread_once), from our constructor or from the first
 * wrapper called before it (another library's constructor may call CUDA
 * first). It reads the settings and resolves the real functions; it opens
 * no file: the trace file is created by the first record, so a process that
 * never calls CUDA/HIP leaves nothing behind.
 *
 * Shutdown: the library destructor (after the app's atexit handlers and
 * static destructors, so their calls are recorded) closes every thread's
 * window, closes the trace, writes the timeline and prints the summary. exit()
 * and a return from main both get there. A signal whose default action
 * ends the process (asked to stop, abort(), a crash: fatal_signals below),
 * when the app has no handler of its own, is caught: the handler closes
 * every thread's window and marks the .obs ended (system calls only:
 * async-signal-safe); after a signal that asks to stop (SIGTERM, SIGINT,
 * SIGHUP, SIGXCPU) it has the timeline and summary made in a child process
 * (stop_postprocess.h) and waits for it; then it re-raises the signal with
 * the default action so the app dies of it as it would have. _exit() and
 * _Exit() are interposed to close the trace the same way before the real
 * one. No timeline or summary after a crash, abort() or _exit (obs-report
 * reads the .obs). SIGKILL cannot be caught: the trace then has no end
 * mark, and every call that returned is in it all the same (the records
 * are stored into the file as they are made). */
#include "init.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"
#include "capture/capture.h"
#include "gputime/gpu_time.h"
#include "phases/phase_engine.h"
#include "stop_postprocess.h"


static pthread_once_t init_once = PTHREAD_ONCE_INIT;

typedef void (*exit_fn)(int);
/* The C library's _exit and _Exit, resolved at start-up: they may be
 * called from a signal handler or a vfork child, where dlsym may not. */
static exit_fn real__exit, real__Exit;

static const char *env_lookup(const char *name)
{
    return getenv(name);
}

/* ---- fork --------------------------------------------------------------- */

static void fork_prepare(void)
{
    obs_kernel_names_fork_prepare();
    obs_streams_fork_prepare();
    obs_nccl_comms_fork_prepare();
    obs_graph_execs_fork_prepare();
    obs_recorder_fork_prepare();
}

static void fork_parent(void)
{
    obs_recorder_fork_parent();
    obs_graph_execs_fork_parent();
    obs_nccl_comms_fork_parent();
    obs_streams_fork_parent();
    obs_kernel_names_fork_parent();
}

/* The child starts a trace of its own (its own file, named with its pid),
 * under a new start time; the parent's buffered records stay the parent's. */
static void fork_child(void)
{
    obs_debug_fork_child();
    obs_output_mark_start();
    obs_recorder_fork_child();
    obs_capture_fork_child();
    obs_graph_execs_fork_child();
    obs_nccl_comms_fork_child();
    obs_streams_fork_child();
    obs_kernel_names_fork_child();
    OBS_DEBUG_LOG(INTERCEPT, 1, "fork: child pid %ld starts a trace of its own", (long)getpid());
}

/* ---- start-up ------------------------------------------------------------- */

static void prepare_output_pattern(void)
{
    char host[256], prepared[OBS_OUTPUT_MAX];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    if (obs_output_pattern_prepare(obs_cfg.output, host, env_lookup, prepared, sizeof prepared) != 0) {
        obs_log_warn("OBS_OUTPUT=%s: too long once expanded; using the default %s", obs_cfg.output,
                     OBS_OUTPUT_DEFAULT);
        strcpy(obs_cfg.output, OBS_OUTPUT_DEFAULT);
        obs_output_pattern_prepare(obs_cfg.output, host, env_lookup, prepared, sizeof prepared);
    }
    obs_output_set_pattern(prepared);
}

/* OBS_DEBUG / OBS_DEBUG_FILE: the levels, and the file's name with %h and
 * %q{} substituted now, as for OBS_OUTPUT (%p, %n: when it is created). */
static void start_debug_log(void)
{
    char host[256], prepared[OBS_OUTPUT_MAX], levels[96];
    prepared[0] = '\0';
    if (obs_cfg.debug_file[0] != '\0') {
        if (gethostname(host, sizeof host) != 0)
            strcpy(host, "localhost");
        host[sizeof host - 1] = '\0';
        if (obs_output_pattern_prepare(obs_cfg.debug_file, host, env_lookup, prepared, sizeof prepared) != 0) {
            obs_log_warn("OBS_DEBUG_FILE=%s: too long once expanded; debug lines go to stderr", obs_cfg.debug_file);
            prepared[0] = '\0';
        }
    }
    obs_debug_setup(obs_cfg.debug_levels, prepared);
    obs_debug_spec_format(obs_cfg.debug_levels, levels, sizeof levels);
    OBS_DEBUG_LOG(INTERCEPT, 1, "start-up: pid %ld, OBS_DEBUG=%s, OBS_ENABLE=%d, OBS_PHASES=%s, OBS_GPU_TIME=%s",
                  (long)getpid(), levels, obs_cfg.enable,
                  obs_cfg.phases_off ? "off" : obs_cfg.phases[0] != '\0' ? "rules" : "auto",
                  obs_gpu_time_mode_name(obs_cfg.gpu_time));
}

/* A thread's end, before the recorder writes its last records: the phase
 * engine settles what waited for later launches, GPU time its spans. */
static void thread_exit(void)
{
    obs_phase_thread_exit();
    obs_gpu_thread_exit();
    obs_capture_thread_exit();
}

/* The two parts that follow the engine's PHASE records (each only when
 * it is on: the hook is set only then): GPU time per phase range, the
 * capture windows. */
static void on_phase(const struct obs_rec_phase *r, uint64_t index)
{
    if (obs_cfg.gpu_time == OBS_GPU_TIME_STEPS)
        obs_gpu_on_phase(r, index);
    if (obs_cfg.capture.n > 0)
        obs_capture_on_phase(r, index);
}

static void init_body(void)
{
    struct obs_guard guard;

    obs_guard_enter(&guard); /* nothing below may record, whatever it calls */
    obs_config_load(&obs_cfg, env_lookup);
    start_debug_log();
    if (obs_clock_init(obs_cfg.clock != OBS_CLOCK_WANT_MONOTONIC) != OBS_CLOCK_TSC &&
        obs_cfg.clock == OBS_CLOCK_WANT_TSC)
        obs_log_warn("OBS_CLOCK=tsc: the kernel does not keep time with the TSC here; using clock_gettime");
    obs_output_mark_start();
    prepare_output_pattern();
    obs_output_set_on_open(obs_signals_install);
    obs_recorder_set_thread_exit_hook(thread_exit);
    obs_capture_init();
    if (obs_cfg.gpu_time == OBS_GPU_TIME_STEPS || obs_cfg.capture.n > 0)
        obs_recorder_set_phase_hook(on_phase); /* GPU time per phase range, capture windows: the live ranges */
    if (obs_cfg.record_window)
        obs_recorder_gate_init(); /* calls stored only inside the capture windows: capture/ opens and closes it */
    obs_kernel_names_init();
    obs_recorder_init();
    obs_real_resolve_all();
    real__exit = (exit_fn)obs_real_dlsym(RTLD_NEXT, "_exit");
    real__Exit = (exit_fn)obs_real_dlsym(RTLD_NEXT, "_Exit");
    if (pthread_atfork(fork_prepare, fork_parent, fork_child) != 0)
        obs_log_warn("pthread_atfork failed; forked children are not recorded");
    atomic_store(&obs_state, obs_cfg.enable ? OBS_STATE_RECORDING : OBS_STATE_DISABLED);
    obs_guard_leave(&guard);
}

void obs_init(void)
{
    pthread_once(&init_once, init_body);
}

/* wrapper.h's start-up case: obs_call_begin said no; if that is because
 * the constructor has not run yet (and this is not a nested call), start the
 * library and ask again. errno stays the app's. */
bool obs_hook_begin_slow(struct obs_hooked_call *c)
{
    struct obs_guard guard;

    if (atomic_load_explicit(&obs_state, memory_order_acquire) != OBS_STATE_UNINIT || obs_guard_held())
        return false;
    obs_guard_enter(&guard);
    obs_init();
    obs_guard_leave(&guard);
    return obs_call_begin(c);
}

__attribute__((constructor)) static void obs_constructor(void)
{
    obs_init();
}

/* ---- shutdown --------------------------------------------------------------- */

__attribute__((destructor)) static void obs_destructor(void)
{
    struct obs_guard guard;
    obs_guard_enter(&guard); /* post-processing makes no hooked call; guard anyway */
    OBS_DEBUG_LOG(INTERCEPT, 1, "exit: the destructor closes every thread's window and writes the files");
    /* the exiting thread's phase held open past its last sync; not in a fork child that recorded nothing
     * (an END record would give it a file of its own) */
    if (obs_output_open_here()) {
        obs_phase_end_open_ranges();
        obs_capture_finish(); /* after the last ENDs: windows still open stop there */
    }
    if (obs_recorder_finish(false, "exit"))
        obs_output_postprocess(NULL);
    obs_guard_leave(&guard);
}

/* The signals whose default action ends the process: asked to stop
 * (TERM, INT, HUP, QUIT, XCPU: a batch system's warning before its
 * SIGKILL), abort() and failed asserts (ABRT), crashes (SEGV, BUS, FPE,
 * ILL), a write to a closed pipe (PIPE: `app | head`). */
static const struct {
    int sig;
    const char *name;
    bool stop; /* asks the process to stop (not a crash): the timeline and summary are made too */
} fatal_signals[] = {
    {SIGTERM, "SIGTERM", true}, {SIGINT, "SIGINT", true},   {SIGHUP, "SIGHUP", true},   {SIGQUIT, "SIGQUIT", false},
    {SIGXCPU, "SIGXCPU", true}, {SIGABRT, "SIGABRT", false}, {SIGSEGV, "SIGSEGV", false}, {SIGBUS, "SIGBUS", false},
    {SIGFPE, "SIGFPE", false},  {SIGILL, "SIGILL", false},   {SIGPIPE, "SIGPIPE", false},
};
#define FATAL_SIGNAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

static void on_fatal_signal(int sig)
{
    struct obs_guard guard;
    const char *name = "signal";
    bool stop = false;
    size_t i;
    obs_guard_enter(&guard);
    for (i = 0; i < FATAL_SIGNAL_COUNT; i++)
        if (fatal_signals[i].sig == sig) {
            name = fatal_signals[i].name;
            stop = fatal_signals[i].stop;
        }
    if (obs_recorder_finish(true, name)) {
        /* A crash may have corrupted memory: nothing more than the .obs then. */
        if (stop)
            obs_stop_postprocess(name);
        else
            obs_output_report_ending(name);
    }
    /* SA_RESETHAND put the default action back: a stop signal (not blocked
     * in its handler, SA_NODEFER) kills us here; the others are blocked
     * while we run, so they are delivered (and kill us) when we return. A
     * fault (SEGV, BUS, FPE, ILL) would also recur at the faulting
     * instruction. */
    raise(sig);
    obs_guard_leave(&guard);
}

void obs_signals_install(void)
{
    size_t i;
    for (i = 0; i < FATAL_SIGNAL_COUNT; i++) {
        struct sigaction old, sa;
        if (sigaction(fatal_signals[i].sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue; /* the app handles (or ignores) it: leave it alone */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        /* A stop signal's handler waits for its timeline: the same signal
         * again (Ctrl-C twice) is not held back meanwhile, and ends the
         * process at once (its disposition is the default by then). */
        sa.sa_flags = SA_RESETHAND | (fatal_signals[i].stop ? SA_NODEFER : 0);
        sigaction(fatal_signals[i].sig, &sa, NULL);
    }
}

/* ---- _exit, _Exit ------------------------------------------------------------ */

/* No atexit handlers, no destructors: the buffers are written here, as on
 * a fatal signal. Not in a vfork child (it shares the parent's memory and
 * buffers: the parent writes them) nor in a fork child that recorded
 * nothing (no file of its own). */
static void finish_before_exit(const char *how)
{
    struct obs_guard guard;
    obs_guard_enter(&guard);
    if (obs_output_open_here()) {
        /* the exiting thread's phase held open past its last sync; not in a vfork child, whose thread
         * state is the parent's */
        obs_phase_end_open_ranges();
        if (obs_recorder_finish(true, how))
            obs_output_report_ending(how);
    }
    obs_guard_leave(&guard);
}

static __attribute__((noreturn)) void exit_now(exit_fn real, int status)
{
    if (real != NULL)
        real(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

OBS_EXPORT __attribute__((noreturn)) void _exit(int status)
{
    finish_before_exit("_exit");
    exit_now(real__exit, status);
}

OBS_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    finish_before_exit("_Exit");
    exit_now(real__Exit != NULL ? real__Exit : real__exit, status);
}
