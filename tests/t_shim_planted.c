/* Files the shim writes never follow what someone else planted at their
 * names (docs/shim.md, "Security notes"). Before the program starts,
 * tests/apps/plant_exec (whose pid the program keeps: it execs it) plants a
 * symbolic link to an unrelated file, a hard link to that file, or a
 * directory at every name the shim could write for that pid
 * (OBS_OUTPUT=DIR/run-%p): <prefix>.obs, <prefix>.pftrace, <prefix>.json
 * and the temporaries' old, guessable names <prefix>.pftrace.tmp.<pid> and
 * <prefix>.json.tmp.<pid>, for <prefix> and <prefix>-1; then it runs
 * tests/apps/shim_app under the shim as nobody when the test runs as root
 * and nobody can run it, else as the test's own user (a diag line says
 * which). Each time:
 *   - the unrelated file keeps its content and every planted entry stays as
 *     it was: nothing is written through, over or into them;
 *   - the app's exit status and stdout are those of a run without the shim;
 *   - one obsshim: warning names the refused path; the trace and timeline
 *     go to the next free prefix (<prefix>-1), complete;
 *   - no temporary file is left.
 * The issue's own case (OBS_OUTPUT=DIR/run, a link at run.pftrace only).
 * The same three with the thing planted while the program runs, after the
 * .obs exists (and at the old temporary's name before it starts): the
 * timeline is refused at exit (one warning naming it), the .obs is
 * complete. And the explicit setting OBS_TRACE=KIND:PATH writes into
 * a FIFO or a character device named on purpose (/dev/null, a FIFO with a
 * reader) and into nothing else (a regular file, a FIFO with no reader:
 * one warning, untouched, no hang). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"

#define PRECIOUS "precious\n"

static const char *app, *wrapper, *base;
static const char *run_user;            /* "nobody", or NULL: the test's own user */
static uid_t run_uid;
static gid_t run_gid;

enum how { HOW_SYMLINK, HOW_HARDLINK, HOW_DIR };
static const char *const how_name[] = {"symlink", "hardlink", "dir"};
static const char *const how_flag[] = {"--symlink", "--hardlink", "--dir"};

/* A fresh directory the program's user can write to (mode 0777: anyone
 * else can plant there too, as in a shared scratch directory). */
static const char *new_dir(const char *name)
{
    static char slots[4][4200];
    static unsigned next;
    char *p = slots[next++ % 4];
    snprintf(p, sizeof slots[0], "%s/%s", base, name);
    if (mkdir(p, 0777) != 0 || chmod(p, 0777) != 0)
        bail("mkdir %s: %s", p, strerror(errno));
    return p;
}

/* DIR/victim, "precious", belonging to the program's user: a file it may
 * write, which a link planted by someone else makes it overwrite. */
static char *make_victim(const char *dir)
{
    char *path = strdup(test_path(dir, "victim"));
    test_write_file(path, PRECIOUS, strlen(PRECIOUS));
    if (chown(path, run_uid, run_gid) != 0)
        bail("chown %s: %s", path, strerror(errno));
    return path;
}

static int victim_intact(const char *victim)
{
    size_t len = 0;
    char *text = test_read_file(victim, &len);
    int same = text != NULL && len == strlen(PRECIOUS) && memcmp(text, PRECIOUS, len) == 0;
    if (!same)
        diag("%s now holds %zu bytes (was \"precious\\n\", 9)", victim, text ? len : 0);
    free(text);
    return same;
}

/* Is what was planted at name still there as it was? */
static int planted_intact(enum how how, const char *name, const char *victim)
{
    struct stat st, vst;
    char target[4096];
    ssize_t n;
    if (lstat(name, &st) != 0)
        return 0;
    switch (how) {
    case HOW_SYMLINK:
        n = readlink(name, target, sizeof target - 1);
        if (n < 0)
            return 0;
        target[n] = '\0';
        return S_ISLNK(st.st_mode) && strcmp(target, victim) == 0;
    case HOW_HARDLINK:
        return S_ISREG(st.st_mode) && stat(victim, &vst) == 0 && st.st_ino == vst.st_ino && st.st_nlink == vst.st_nlink;
    case HOW_DIR: {
        DIR *d = opendir(name);
        struct dirent *e;
        size_t entries = 0;
        while (d != NULL && (e = readdir(d)) != NULL)
            entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
        if (d != NULL)
            closedir(d);
        return S_ISDIR(st.st_mode) && d != NULL && entries == 0;
    }
    }
    return 0;
}

/* plant_exec [--as USER] [--record FILE] [HOW TARGET NAME...] -- shim_app ARGS */
static void run_planted(const char *record, int how, const char *victim, const char *const names[],
                        const char *const args[], const char *const env[], int preload, struct run_result *res)
{
    const char *argv[40];
    size_t n = 0, i;
    argv[n++] = wrapper;
    if (run_user != NULL) {
        argv[n++] = "--as";
        argv[n++] = run_user;
    }
    if (record != NULL) {
        argv[n++] = "--record";
        argv[n++] = record;
    }
    if (how >= 0) {
        argv[n++] = how_flag[how];
        if (how != HOW_DIR)
            argv[n++] = victim;
        for (i = 0; names[i] != NULL && n < 20; i++)
            argv[n++] = names[i];
    }
    argv[n++] = "--";
    argv[n++] = app;
    for (i = 0; args != NULL && args[i] != NULL && n < 38; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    shim_run(argv, env, preload, 60, res);
}

/* The app's exit status and stdout are those of the run without the shim. */
static int same_as_plain(const struct run_result *shim, const struct run_result *plain)
{
    int same = shim->exited && plain->exited && shim->status == plain->status && strcmp(shim->out, plain->out) == 0;
    if (!same) {
        diag("without the shim: status %d; with it: status %d (signal %d)", plain->status, shim->status, shim->signal);
        diag_text("stdout without", plain->out);
        diag_text("stdout with", shim->out);
    }
    return same;
}

/* Entries of dir holding ".tmp." that nobody planted (a temporary of the
 * shim's left behind). */
static size_t stray_temps(const char *dir, char planted[][4200], size_t nplanted)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t stray = 0, i;
    while (d != NULL && (e = readdir(d)) != NULL) {
        int known = 0;
        if (strstr(e->d_name, ".tmp.") == NULL)
            continue;
        for (i = 0; i < nplanted; i++) {
            const char *slash = strrchr(planted[i], '/');
            known |= strcmp(slash ? slash + 1 : planted[i], e->d_name) == 0;
        }
        if (!known) {
            diag("left behind: %s/%s", dir, e->d_name);
            stray++;
        }
    }
    if (d != NULL)
        closedir(d);
    return stray;
}

/* A regular file of the program's user with something in it. */
static int output_file(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        diag("%s: %s", path, strerror(errno));
        return 0;
    }
    return S_ISREG(st.st_mode) && st.st_size > 0 && st.st_uid == run_uid && st.st_nlink == 1;
}

static long launches_in(const char *path)
{
    struct obs_trace *t = shim_trace_open(path);
    long n;
    if (t == NULL)
        return -1;
    n = (long)trace_api_count(t, OBS_API_cudaLaunchKernel);
    obs_trace_free(t);
    return n;
}

/* ---- planted before the program starts ---------------------------------------- */

static void test_planted_before(enum how how, int json)
{
    char label[64], name[8][4200], planted[8][4200], want[4200], record_path[4200];
    const char *dir, *names[8];
    const char *const args[] = {"--launches", "10", "--exit", "7", NULL};
    const char *kind = json ? ".json" : ".pftrace";
    char *victim, *record, *line, *save = NULL, out_env[4300];
    struct run_result plain, shim;
    size_t nplanted = 0, i;
    long pid = -1;
    int all_intact = 1;

    snprintf(label, sizeof label, "%s before start%s", how_name[how], json ? ", OBS_TRACE=json" : "");
    snprintf(name[0], sizeof name[0], "%s%s", how_name[how], json ? "-json" : "");
    dir = new_dir(name[0]);
    victim = make_victim(dir);
    snprintf(name[0], sizeof name[0], "%s/run-%%p.obs", dir);
    snprintf(name[1], sizeof name[1], "%s/run-%%p.pftrace", dir);
    snprintf(name[2], sizeof name[2], "%s/run-%%p.json", dir);
    /* the old temporaries' guessable names, for the wanted prefix and the
     * one the shim moves to */
    snprintf(name[3], sizeof name[3], "%s/run-%%p.pftrace.tmp.%%p", dir);
    snprintf(name[4], sizeof name[4], "%s/run-%%p.json.tmp.%%p", dir);
    snprintf(name[5], sizeof name[5], "%s/run-%%p-1.pftrace.tmp.%%p", dir);
    snprintf(name[6], sizeof name[6], "%s/run-%%p-1.json.tmp.%%p", dir);
    for (i = 0; i < 7; i++)
        names[i] = name[i];
    names[7] = NULL;
    snprintf(record_path, sizeof record_path, "%s/../%s-%s.planted", dir, how_name[how], json ? "json" : "pf");
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/run-%%p", dir);
    {
        const char *env[] = {out_env, json ? "OBS_TRACE=json" : "OBS_TRACE=perfetto", NULL};
        run_planted(NULL, -1, NULL, NULL, args, NULL, 0, &plain);
        run_planted(record_path, (int)how, victim, names, args, env, 1, &shim);
    }
    record = test_read_file(record_path, NULL);
    for (line = record ? strtok_r(record, "\n", &save) : NULL; line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "pid ", 4) == 0)
            pid = atol(line + 4);
        else if (nplanted < 8)
            snprintf(planted[nplanted++], sizeof planted[0], "%s", line);
    }
    free(record);
    if (!ok(pid > 0 && nplanted == 7, "%s: seven names planted for the program's pid", label)) {
        diag_text("stderr", shim.err);
        bail("plant_exec did not plant");
    }
    ok(same_as_plain(&shim, &plain), "%s: exit status and stdout as without the shim", label);
    ok(victim_intact(victim), "%s: the unrelated file keeps its content", label);
    for (i = 0; i < nplanted; i++)
        if (!planted_intact(how, planted[i], victim)) {
            diag("changed: %s", planted[i]);
            all_intact = 0;
        }
    ok(all_intact, "%s: every planted %s is as it was", label, how_name[how]);
    snprintf(want, sizeof want, "obsshim: warning: %s/run-%ld.obs exists; writing %s/run-%ld-1.obs and %s/run-%ld-1%s instead\n",
             dir, pid, dir, pid, dir, pid, kind);
    if (!ok(warning_lines(shim.err) == 1 && strstr(shim.err, want) != NULL,
            "%s: one obsshim: warning names the refused path and the names used", label))
        diag_text("stderr", shim.err);
    snprintf(want, sizeof want, "%s/run-%ld-1.obs", dir, pid);
    is_int(10, launches_in(want), "%s: run-PID-1.obs holds the 10 launches", label);
    ok(output_file(want), "%s: run-PID-1.obs is a new file of the program's user", label);
    snprintf(want, sizeof want, "%s/run-%ld-1%s", dir, pid, kind);
    ok(output_file(want), "%s: run-PID-1%s is a new file of the program's user", label, kind);
    is_int(0, (long long)stray_temps(dir, planted, nplanted), "%s: no temporary left", label);
    run_result_free(&plain);
    run_result_free(&shim);
    free(victim);
}

/* The issue's case: OBS_OUTPUT=DIR/run and a symbolic link at run.pftrace
 * only, to an unrelated file. */
static void test_issue_case(void)
{
    const char *dir = new_dir("issue");
    const char *const args[] = {"--launches", "10", "--exit", "7", NULL};
    char name[4200], out_env[4300], want[4200], *victim = make_victim(dir);
    const char *names[] = {name, NULL};
    struct run_result plain, shim;
    size_t len = 0;
    char *after;

    snprintf(name, sizeof name, "%s/run.pftrace", dir);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/run", dir);
    {
        const char *env[] = {out_env, NULL};
        run_planted(NULL, -1, NULL, NULL, args, NULL, 0, &plain);
        run_planted(NULL, HOW_SYMLINK, victim, names, args, env, 1, &shim);
    }
    after = test_read_file(victim, &len);
    diag("issue case: %s held \"precious\\n\" (9 bytes) before the run, %zu bytes after%s", victim, len,
         after && len == 9 && memcmp(after, PRECIOUS, 9) == 0 ? " (\"precious\\n\")" : "");
    free(after);
    ok(same_as_plain(&shim, &plain), "issue case: exit status and stdout as without the shim");
    ok(victim_intact(victim) && planted_intact(HOW_SYMLINK, name, victim),
       "issue case: the linked file keeps its content, the link stays");
    snprintf(want, sizeof want, "obsshim: warning: %s/run.pftrace exists; writing %s/run-1.obs and %s/run-1.pftrace instead\n",
             dir, dir, dir);
    if (!ok(warning_lines(shim.err) == 1 && strstr(shim.err, want) != NULL,
            "issue case: one obsshim: warning names run.pftrace"))
        diag_text("stderr", shim.err);
    ok(output_file(test_path(dir, "run-1.obs")) && output_file(test_path(dir, "run-1.pftrace")),
       "issue case: run-1.obs and run-1.pftrace written instead");
    run_result_free(&plain);
    run_result_free(&shim);
    free(victim);
}

/* ---- planted while the program runs --------------------------------------------- */

static void test_planted_during(enum how how, int json)
{
    char label[64], dname[64], name[4200], out_env[4300], want[4200], ref_name[4200], temp_name[4300];
    char record_path[4200], planted[1][4200];
    const char *dir, *ref;
    const char *kind = json ? ".json" : ".pftrace";
    char *victim, *ref_victim, *record;
    struct run_result plain, shim;

    snprintf(label, sizeof label, "%s during the run%s", how_name[how], json ? ", OBS_TRACE=json" : "");
    snprintf(dname, sizeof dname, "during-%s%s", how_name[how], json ? "-json" : "");
    dir = new_dir(dname);
    victim = make_victim(dir);
    snprintf(dname, sizeof dname, "during-%s%s-plain", how_name[how], json ? "-json" : "");
    ref = new_dir(dname);
    ref_victim = make_victim(ref);
    snprintf(name, sizeof name, "%s/race%s", dir, kind);
    snprintf(record_path, sizeof record_path, "%s.planted", dir);
    snprintf(ref_name, sizeof ref_name, "%s/race%s", ref, kind);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/race", dir);
    snprintf(temp_name, sizeof temp_name, "%s.tmp.%%p", name); /* the old temporary's name, before start */
    {
        const char *args_plain[] = {"--launches", "10", "--plant", how_name[how], ref_name, ref_victim, "--exit", "7", NULL};
        const char *args[] = {"--launches", "10", "--plant", how_name[how], name, victim, "--exit", "7", NULL};
        const char *env[] = {out_env, json ? "OBS_TRACE=json" : "OBS_TRACE=perfetto", NULL};
        const char *temps[] = {temp_name, NULL};
        run_planted(NULL, -1, NULL, NULL, args_plain, NULL, 0, &plain);
        run_planted(record_path, (int)how, victim, temps, args, env, 1, &shim);
    }
    record = test_read_file(record_path, NULL);
    if (record == NULL || sscanf(record, "pid %*ld\n%4199[^\n]", planted[0]) != 1)
        bail("plant_exec did not plant %s", temp_name);
    free(record);
    ok(same_as_plain(&shim, &plain), "%s: exit status and stdout as without the shim", label);
    ok(victim_intact(victim), "%s: the unrelated file keeps its content", label);
    ok(planted_intact(how, name, victim) && planted_intact(how, planted[0], victim),
       "%s: the planted %ss (the timeline's name, the old temporary's) are as they were", label, how_name[how]);
    snprintf(want, sizeof want, "obsshim: warning: %s exists (", name);
    if (!ok(warning_lines(shim.err) == 1 && strstr(shim.err, want) != NULL &&
                strstr(shim.err, "and is never replaced; the timeline was not written") != NULL,
            "%s: one obsshim: warning names the refused %s", label, kind))
        diag_text("stderr", shim.err);
    snprintf(want, sizeof want, "obsshim: wrote %s/race.obs\n", dir);
    ok(strstr(shim.err, want) != NULL, "%s: the wrote line names the .obs only", label);
    is_int(10, launches_in(test_path(dir, "race.obs")), "%s: race.obs holds the 10 launches", label);
    is_int(0, (long long)stray_temps(dir, planted, 1), "%s: no temporary left", label);
    run_result_free(&plain);
    run_result_free(&shim);
    free(victim);
    free(ref_victim);
}

/* ---- OBS_TRACE=KIND:PATH, a FIFO or character device named on purpose ------------ */

static void run_device(const char *dir, const char *setting, struct run_result *plain, struct run_result *shim)
{
    const char *const args[] = {"--launches", "10", "--exit", "7", NULL};
    char out_env[4300], trace_env[4300];
    const char *env[] = {out_env, trace_env, NULL};
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/dev", dir);
    snprintf(trace_env, sizeof trace_env, "OBS_TRACE=%s", setting);
    run_planted(NULL, -1, NULL, NULL, args, NULL, 0, plain);
    run_planted(NULL, -1, NULL, NULL, args, env, 1, shim);
}

static void test_device(void)
{
    const char *dir;
    char want[4200], fifo[4200], setting[4300], *victim;
    struct run_result plain, shim;
    unsigned char buf[65536];
    ssize_t got;
    size_t total = 0;
    int fd;

    dir = new_dir("dev-null");
    run_device(dir, "perfetto:/dev/null", &plain, &shim);
    snprintf(want, sizeof want, "obsshim: wrote %s/dev.obs /dev/null\n", dir);
    ok(same_as_plain(&shim, &plain) && warning_lines(shim.err) == 0 && strstr(shim.err, want) != NULL &&
           access(test_path(dir, "dev.pftrace"), F_OK) != 0,
       "OBS_TRACE=perfetto:/dev/null: the timeline discarded, no warning, no .pftrace");
    if (shim.err && warning_lines(shim.err) != 0)
        diag_text("stderr", shim.err);
    run_result_free(&plain);
    run_result_free(&shim);

    dir = new_dir("dev-fifo");
    snprintf(fifo, sizeof fifo, "%s/timeline.fifo", dir);
    if (mkfifo(fifo, 0666) != 0 || chmod(fifo, 0666) != 0)
        bail("mkfifo %s: %s", fifo, strerror(errno));
    fd = open(fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* the reader, there before the program ends */
    if (fd < 0)
        bail("open %s: %s", fifo, strerror(errno));
    (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    snprintf(setting, sizeof setting, "perfetto:%s", fifo);
    run_device(dir, setting, &plain, &shim);
    while ((got = read(fd, buf + total, sizeof buf - total)) > 0 && total < sizeof buf)
        total += (size_t)got;
    close(fd);
    ok(same_as_plain(&shim, &plain) && warning_lines(shim.err) == 0 && total > 100 && buf[0] == 0x0a,
       "OBS_TRACE=perfetto:FIFO: the timeline goes to the FIFO's reader (%zu bytes, a Perfetto trace)", total);
    if (warning_lines(shim.err) != 0)
        diag_text("stderr", shim.err);
    run_result_free(&plain);
    run_result_free(&shim);

    dir = new_dir("dev-fifo-unread");
    snprintf(fifo, sizeof fifo, "%s/timeline.fifo", dir);
    if (mkfifo(fifo, 0666) != 0 || chmod(fifo, 0666) != 0)
        bail("mkfifo %s: %s", fifo, strerror(errno));
    snprintf(setting, sizeof setting, "perfetto:%s", fifo); /* nobody reading */
    run_device(dir, setting, &plain, &shim);
    snprintf(want, sizeof want, "obsshim: warning: %s: a FIFO with no reader", fifo);
    if (!ok(same_as_plain(&shim, &plain) && warning_lines(shim.err) == 1 && strstr(shim.err, want) != NULL &&
                launches_in(test_path(dir, "dev.obs")) == 10,
            "OBS_TRACE=perfetto:FIFO with no reader: one warning, no wait, the .obs written"))
        diag_text("stderr", shim.err);
    run_result_free(&plain);
    run_result_free(&shim);

    dir = new_dir("dev-file");
    victim = make_victim(dir);
    snprintf(setting, sizeof setting, "json:%s", victim);
    run_device(dir, setting, &plain, &shim);
    snprintf(want, sizeof want, "obsshim: warning: %s: not a FIFO or character device", victim);
    ok(same_as_plain(&shim, &plain) && warning_lines(shim.err) == 1 && strstr(shim.err, want) != NULL &&
           victim_intact(victim) && launches_in(test_path(dir, "dev.obs")) == 10,
       "OBS_TRACE=json:FILE (a regular file): refused with one warning, the file untouched, the .obs written");
    if (warning_lines(shim.err) != 1)
        diag_text("stderr", shim.err);
    run_result_free(&plain);
    run_result_free(&shim);
    free(victim);
}

/* ---- who runs the program --------------------------------------------------------- */

/* As root: nobody, when nobody can run the app with the shim in a
 * directory it can write (the build tree readable by all). */
static void choose_user(void)
{
    struct passwd *pw = geteuid() == 0 ? getpwnam("nobody") : NULL;
    run_uid = geteuid();
    run_gid = getegid();
    if (pw != NULL) {
        const char *dir, *const args[] = {"--launches", "1", NULL};
        char out_env[4300], want[4400];
        struct run_result r;
        run_user = "nobody";
        run_uid = pw->pw_uid;
        run_gid = pw->pw_gid;
        dir = new_dir("probe");
        snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/probe", dir);
        {
            const char *env[] = {out_env, NULL};
            run_planted(NULL, -1, NULL, NULL, args, env, 1, &r);
        }
        snprintf(want, sizeof want, "obsshim: wrote %s/probe.obs %s/probe.pftrace\n", dir, dir);
        if (!run_exited_with(&r, 0) || strstr(r.err, want) == NULL) {
            diag("nobody cannot run %s under the shim here:", app);
            diag_text("stderr", r.err);
            run_user = NULL;
            run_uid = geteuid();
            run_gid = getegid();
        }
        run_result_free(&r);
    }
    if (run_user != NULL)
        diag("the programs run as nobody (uid %ld), the links are planted by root", (long)run_uid);
    else if (geteuid() == 0)
        diag("the programs run as root (nobody cannot run them here): planter and program are the same user");
    else
        diag("the programs run as uid %ld, the test's own (not root: it cannot switch user)", (long)run_uid);
}

int main(void)
{
    int how, json;
    app = strdup(shim_build_path("tests/apps/shim_app"));
    wrapper = strdup(shim_build_path("tests/apps/plant_exec"));
    if (!test_executable(app) || !test_executable(wrapper))
        bail("tests/apps/shim_app or tests/apps/plant_exec was not built");
    plan_lazy();
    base = test_tmpdir();
    if (chmod(base, 0711) != 0) /* others may pass through to the directories below */
        bail("chmod %s: %s", base, strerror(errno));
    choose_user();
    for (how = HOW_SYMLINK; how <= HOW_DIR; how++)
        test_planted_before((enum how)how, 0);
    test_planted_before(HOW_SYMLINK, 1);
    test_issue_case();
    for (json = 0; json <= 1; json++)
        for (how = HOW_SYMLINK; how <= HOW_DIR; how++)
            test_planted_during((enum how)how, json);
    test_device();
    return 0;
}
