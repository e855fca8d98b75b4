/* The kept trace fuzz corpora (tests/fuzz/trace_corpus: real traces;
 * tests/fuzz/trace_regressions: every input a fuzz target crashed on)
 * replayed with the normal build:
 *   - each file through the fuzz body with every target (tests/fuzz/
 *     trace_fuzz.c: load and the model's invariants, then every report),
 *     in a child process, which must exit normally (a crash, an abort from
 *     a broken invariant or a sanitizer report is a failure naming the file);
 *   - each file through every obs-report command, which must exit 0 or 1
 *     (1: a damaged trace, said on stderr), never by a signal or with 2.
 * The fuzz targets themselves: `make fuzz-trace` (tests/fuzz/run-trace-fuzz.sh). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"
#include "trace_fuzz.h"

#define MAX_FILES 256

/* The files of a corpus directory, sorted; returns the count. */
static size_t list_dir(const char *dir, char **names, size_t max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0, i, j;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL && n < max) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || (len > 3 && strcmp(e->d_name + len - 3, ".md") == 0))
            continue;
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (i = 1; i < n; i++) /* insertion sort: a stable, readable order */
        for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *x = names[j];
            names[j] = names[j - 1];
            names[j - 1] = x;
        }
    return n;
}

/* The fuzz body with every target on path, in a child. */
static void replay_fuzz_body(const char *path, const char *label)
{
    size_t len;
    char *data = test_read_file(path, &len);
    pid_t pid;
    int status = 0;

    if (data == NULL) {
        ok(0, "%s: readable", label);
        return;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        /* the reports' warnings about damaged inputs are expected */
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        obs_fuzz_trace((const uint8_t *)data, len, OBS_FUZZ_ALL);
        _exit(0);
    }
    free(data);
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        ok(0, "%s: fuzz body started", label);
        return;
    }
    if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the fuzz body (all targets) returns", label))
        diag("%s: %s %d", label, WIFSIGNALED(status) ? "killed by signal" : "exit status",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* Every obs-report command on path: exit status 0 or 1 only. */
static void replay_commands(const char *report, const char *path, const char *label)
{
    char db[4096];
    snprintf(db, sizeof db, "%s", test_path(test_tmpdir(), "fuzz.sqlite"));
    const char *const cmds[][10] = {
        {report, "summary", "-o", "/dev/null", path, NULL},
        {report, "summary", "--format", "json", "--step", "1", "-o", "/dev/null", path},
        {report, "csv", "-q", "-o", "/dev/null", path, NULL},
        {report, "json", "-q", "-o", "/dev/null", path, NULL},
        {report, "perfetto", "-q", "-o", "/dev/null", path, NULL},
        {report, "phases", "-o", "/dev/null", path, NULL},
        {report, "phases", "--csv", "-o", "/dev/null", path, NULL},
        {report, "suggest-phases", "-o", "/dev/null", path, NULL},
        {report, "serving", "-o", "/dev/null", path, NULL},
        {report, "serving", "--serving", "--csv", "-o", "/dev/null", path, NULL},
        {report, "serving", "--serving", "--id-bytes", "8", "--json", "-o", "/dev/null", path},
        {report, "gaps", "--format", "csv", "-o", "/dev/null", path, NULL},
        {report, "top", "5", "-o", "/dev/null", path, NULL},
        {report, "compare", "-o", "/dev/null", path, path, NULL},
        {report, "merge", "-o", "/dev/null", path, path, NULL},
        {report, "sqlite", "-q", path, db, NULL},
        {report, "html", "-o", "/dev/null", path, NULL},
        {report, "compare", "--html", "-o", "/dev/null", path, path, NULL},
    };
    size_t i, bad = 0;
    char what[256] = "";

    for (i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        struct run_result res;
        unlink(db);
        if (run_program(cmds[i], NULL, 120, &res) != 0) {
            bad++;
            snprintf(what, sizeof what, "%s: not started", cmds[i][1]);
            continue;
        }
        if (!(res.exited && (res.status == 0 || res.status == 1))) {
            bad++;
            snprintf(what, sizeof what, "%s %s: %s %d", cmds[i][1], cmds[i][2], res.exited ? "exit" : "signal",
                     res.exited ? res.status : res.signal);
            diag_text("stderr", res.err);
        }
        run_result_free(&res);
    }
    unlink(db);
    if (!ok(bad == 0, "%s: %zu obs-report commands exit 0 or 1", label, sizeof cmds / sizeof cmds[0]))
        diag("%s: %zu failed, the last: %s", label, bad, what);
}

int main(void)
{
    static const char *const dirs[] = {"tests/fuzz/trace_corpus", "tests/fuzz/trace_regressions"};
    char report[4096];
    size_t d, i, total[2] = {0, 0};

    plan_lazy();
    snprintf(report, sizeof report, "%s", test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        bail("%s is not built", report);
    for (d = 0; d < 2; d++) {
        char dir[4096], *names[MAX_FILES];
        size_t n;
        snprintf(dir, sizeof dir, "%s", test_path(test_srcdir(), dirs[d]));
        n = list_dir(dir, names, MAX_FILES);
        total[d] = n;
        for (i = 0; i < n; i++) {
            char path[8192], label[512];
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            snprintf(label, sizeof label, "%s/%s", d ? "regressions" : "corpus", names[i]);
            replay_fuzz_body(path, label);
            replay_commands(report, path, label);
            free(names[i]);
        }
    }
    /* the corpora are there: an empty directory would make this test pass vacuously */
    ok(total[0] >= 8, "trace_corpus holds %zu seed traces", total[0]);
    ok(total[1] >= 1, "trace_regressions holds %zu kept crash inputs", total[1]);
    return 0;
}
