/* Start-up and shutdown: see init.h.
 *
 * Start-up runs once (pthread_once), from our constructor or from the first
 * wrapper called before it (another library's constructor may call CUDA
 * first). It reads the settings and resolves the real functions; it opens
 * no file: the trace file is created by the first record, so a process that
 * never calls CUDA/HIP leaves nothing behind.
 *
 * Shutdown: the library destructor (after the app's atexit handlers and
 * static destructors, so their calls are recorded) flushes every thread's
 * buffer, closes the trace, writes the JSON and prints the summary. exit()
 * and a return from main both get there. A signal whose default action
 * ends the process (asked to stop, abort(), a crash: fatal_signals below),
 * when the app has no handler of its own, is caught: the handler only
 * flushes the buffers into the .obs (write(2) only: async-signal-safe),
 * then re-raises the signal with the default action so the app dies of it
 * as it would have. _exit() and _Exit() are interposed to do the same
 * flush before the real one. No JSON or summary on those paths; obs-report
 * reads the .obs. SIGKILL cannot be caught: the trace then has no end mark. */
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
#include "gputime/gpu_time.h"
#include "phases/phase_engine.h"


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
    if (obs_cfg.gpu_time == OBS_GPU_TIME_STEPS)
        obs_recorder_set_phase_hook(obs_gpu_on_phase); /* GPU time per phase range follows the live ranges */
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
    OBS_DEBUG_LOG(INTERCEPT, 1, "exit: the destructor flushes every thread and writes the files");
    /* the exiting thread's phase held open past its last sync; not in a fork child that recorded nothing
     * (an END record would give it a file of its own) */
    if (obs_output_open_here())
        obs_phase_end_open_ranges();
    if (obs_recorder_finish(false, "exit"))
        obs_output_postprocess();
    obs_guard_leave(&guard);
}

/* The signals whose default action ends the process: asked to stop
 * (TERM, INT, HUP, QUIT, XCPU: a batch system's warning before its
 * SIGKILL), abort() and failed asserts (ABRT), crashes (SEGV, BUS, FPE,
 * ILL), a write to a closed pipe (PIPE: `app | head`). */
static const struct {
    int sig;
    const char *name;
} fatal_signals[] = {
    {SIGTERM, "SIGTERM"}, {SIGINT, "SIGINT"}, {SIGHUP, "SIGHUP"}, {SIGQUIT, "SIGQUIT"},
    {SIGXCPU, "SIGXCPU"}, {SIGABRT, "SIGABRT"}, {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},
    {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},   {SIGPIPE, "SIGPIPE"},
};
#define FATAL_SIGNAL_COUNT (sizeof fatal_signals / sizeof fatal_signals[0])

static void on_fatal_signal(int sig)
{
    struct obs_guard guard;
    const char *name = "signal";
    size_t i;
    obs_guard_enter(&guard);
    for (i = 0; i < FATAL_SIGNAL_COUNT; i++)
        if (fatal_signals[i].sig == sig)
            name = fatal_signals[i].name;
    if (obs_recorder_finish(true, name))
        obs_output_report_ending(name);
    /* SA_RESETHAND put the default action back; the signal is blocked while
     * we run, so it is delivered (and kills us) when we return. A fault
     * (SEGV, BUS, FPE, ILL) would also recur at the faulting instruction. */
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
        sa.sa_flags = SA_RESETHAND;
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
