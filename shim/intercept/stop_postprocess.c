/* The exit path's timeline and summary after a stop signal: see
 * stop_postprocess.h. Everything here runs in a signal handler: system
 * calls and our own signal-safe logging only. */
#include "stop_postprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"
#include "record/record.h"

/* What the child says, in memory it shares with the parent. */
struct child_status {
    _Atomic int done; /* 1: it has written what there was to write, and said so */
};

/* A copy of this process (no CLONE_VM), whose end sends no signal: the
 * app's SIGCHLD handler and waitpid(-1) never see it (waitpid needs
 * __WALL). No atfork handler runs: the app's would take its locks. */
static pid_t copy_process(void)
{
    return (pid_t)syscall(SYS_clone, 0UL, 0UL, 0UL, 0UL, 0UL);
}

/* The child: the exit path's post-processing, then out at once (no atexit
 * handler, no destructor of the app's). SIGALRM ends it if it is still at
 * it 10 minutes on, orphaned (its parent killed meanwhile) and stuck. */
static void __attribute__((noreturn)) child_run(struct child_status *st, const char *how)
{
    struct sigaction dfl;
    sigset_t alarm_only;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGALRM, &dfl, NULL);
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alarm_only, NULL);
    alarm(600);
    obs_output_postprocess(how);
    atomic_store(&st->done, 1);
    for (;;)
        syscall(SYS_exit_group, 0);
}

/* "/proc/PID/NAME" into path (no formatting: signal handler). */
static void proc_path(char *path, pid_t pid, const char *name)
{
    char num[24], *p = path;
    const char *q;
    for (q = "/proc/"; *q; q++)
        *p++ = *q;
    for (q = obs_log_u64(num, (unsigned long long)pid); *q; q++)
        *p++ = *q;
    *p++ = '/';
    for (q = name; *q; q++)
        *p++ = *q;
    *p = '\0';
}

/* The file at path, up to len - 1 bytes, NUL-terminated; its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    if (fd < 0)
        return -1;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return n;
}

/* The number after "key: " in text, or 0. */
static unsigned long long field_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    unsigned long long v = 0;
    if (p == NULL)
        return 0;
    for (p += strlen(key); *p == ' '; p++)
        ;
    while (*p >= '0' && *p <= '9')
        v = v * 10 + (unsigned long long)(*p++ - '0');
    return v;
}

/* How far the child has got: its CPU time (ticks, /proc/PID/stat) plus
 * the bytes it has read and written with system calls (/proc/PID/io,
 * where it can be read: a slow pipe it writes to moves these, not the
 * CPU time), and its state letter; false when /proc says nothing. */
static bool child_progress(pid_t pid, unsigned long long *progress, char *state)
{
    char path[64], buf[512], *p;
    size_t field;

    proc_path(path, pid, "stat");
    if (read_small(path, buf, sizeof buf) <= 0)
        return false;
    p = strrchr(buf, ')'); /* the command may hold spaces and parentheses */
    if (p == NULL || p[1] != ' ')
        return false;
    *state = p[2];
    /* fields after the command: 3 state ... 14 utime, 15 stime */
    *progress = 0;
    for (field = 3, p += 2; *p != '\0' && field <= 15; field++) {
        unsigned long long v = 0;
        while (*p == ' ')
            p++;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (unsigned long long)(*p++ - '0');
        while (*p != ' ' && *p != '\0')
            p++;
        if (field == 14 || field == 15)
            *progress += v;
    }
    proc_path(path, pid, "io");
    if (read_small(path, buf, sizeof buf) > 0)
        *progress += field_after(buf, "rchar:") + field_after(buf, "wchar:");
    return field > 15;
}

static void say_not_written(const char *how, const char *why)
{
    bool json = obs_cfg.trace_export == OBS_TRACE_JSON;
    obs_log_signal_safe(how, ": wrote ", obs_out.prefix, OBS_TRACE_SUFFIX, "; the timeline and summary were not made (",
                        why, "; obs-report ", json ? "json " : "perfetto ", obs_out.prefix, OBS_TRACE_SUFFIX, " -o ",
                        obs_out.prefix, json ? OBS_JSON_SUFFIX : OBS_PFTRACE_SUFFIX, " writes it)", (char *)NULL);
}

void obs_stop_postprocess(const char *how)
{
    struct child_status *st;
    const struct timespec tick = {0, 10 * 1000 * 1000}; /* 10 ms */
    unsigned long long progress = 0, last_progress = 0;
    unsigned polls = 0, stalled_s = 0;
    pid_t pid;
    int status;
    char state = 'R';

    st = mmap(NULL, sizeof *st, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (st == MAP_FAILED) {
        say_not_written(how, "no memory");
        return;
    }
    pid = copy_process();
    if (pid == 0)
        child_run(st, how);
    if (pid < 0) {
        say_not_written(how, "no child process could be made");
        munmap(st, sizeof *st);
        return;
    }
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG | __WALL);
        if (got == pid || (got < 0 && errno == ECHILD))
            break; /* ended (or reaped by someone else) */
        nanosleep(&tick, NULL);
        if (++polls % 100 != 0)
            continue;
        /* once a second: is it getting anywhere? */
        if (!child_progress(pid, &progress, &state))
            continue;
        if (progress == last_progress && state == 'S')
            stalled_s++;
        else
            stalled_s = 0;
        last_progress = progress;
        if (stalled_s >= OBS_STOP_STALL_S) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, __WALL);
            break;
        }
    }
    if (!atomic_load(&st->done)) {
        if (stalled_s >= OBS_STOP_STALL_S)
            say_not_written(how, "its writer made no progress for " OBS_STOP_STALL_TEXT " s: a lock the signal "
                                 "interrupted?");
        else
            say_not_written(how, "its writer failed");
    }
    munmap(st, sizeof *st);
}
