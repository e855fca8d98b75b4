/* obs-report, the program: --help and --version, usage errors (exit 2),
 * unreadable traces (one line "obs-report: FILE: reason", exit 1) for every
 * command, a trace left by a crash (read, with a warning), -o output. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_format.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

static const char *report;

/* Run obs-report with up to 5 arguments (NULL-terminated). */
static struct run_result run(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
    const char *argv[] = {report, a1, a2, a3, a4, a5, NULL};
    struct run_result r;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

static void test_help(void)
{
    static const char *const commands[] = {"summary", "csv", "json"};
    struct run_result r;
    size_t i;

    r = run("--help", NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Usage: obs-report COMMAND") && strstr(r.out, "summary") &&
           strstr(r.out, "csv") && strstr(r.out, "json"),
       "--help lists the commands");
    run_result_free(&r);
    r = run("-h", NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Usage: obs-report"), "-h");
    run_result_free(&r);
    r = run("--version", NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "obs-report (obsshim) " PACKAGE_VERSION), "--version");
    run_result_free(&r);
    for (i = 0; i < 3; i++) {
        char usage[64];
        snprintf(usage, sizeof usage, "Usage: obs-report %s", commands[i]);
        r = run(commands[i], "--help", NULL, NULL, NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, usage) && strstr(r.out, "--output") && r.err_len == 0,
           "%s --help", commands[i]);
        run_result_free(&r);
        r = run(commands[i], "-h", NULL, NULL, NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, usage), "%s -h", commands[i]);
        run_result_free(&r);
    }
}

static void test_usage_errors(const char *fixture)
{
    struct run_result r;

    r = run(NULL, NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing command"), "no command: exit 2");
    run_result_free(&r);
    r = run("frobnicate", fixture, NULL, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown command 'frobnicate'") && strstr(r.err, "--help"),
       "unknown command: exit 2");
    run_result_free(&r);
    r = run("--bogus", NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option"), "unknown global option: exit 2");
    run_result_free(&r);
    r = run("summary", NULL, NULL, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing argument"), "summary without a file: exit 2");
    run_result_free(&r);
    r = run("csv", fixture, "extra.obs", NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unexpected argument 'extra.obs'"), "an extra argument: exit 2");
    run_result_free(&r);
    r = run("json", fixture, "-o", NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "needs an argument"), "-o without a file: exit 2");
    run_result_free(&r);
    r = run("summary", "--frob", fixture, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option '--frob'") && strstr(r.err, "obs-report summary --help"),
       "unknown command option: exit 2, hint names the command");
    run_result_free(&r);
}

/* Every command prints exactly "obs-report: PATH: reason\n" and exits 1. */
static int fails_cleanly(const char *path, const char *reason)
{
    static const char *const commands[] = {"summary", "csv", "json"};
    char want[1024];
    size_t i;
    int good = 1;
    snprintf(want, sizeof want, "obs-report: %s: %s\n", path, reason);
    for (i = 0; i < 3; i++) {
        struct run_result r = run(commands[i], path, NULL, NULL, NULL);
        if (!run_exited_with(&r, 1) || strcmp(r.err, want) != 0 || r.out_len != 0) {
            diag("%s %s: status %d, stderr '%s'", commands[i], path, r.status, r.err);
            good = 0;
        }
        run_result_free(&r);
    }
    return good;
}

static void test_bad_traces(const char *dir, const char *fixture)
{
    const char *path = test_path(dir, "bad.obs");
    struct obs_file_header h;
    size_t len;
    char *d = test_read_file(fixture, &len);
    char reason[128];

    if (d == NULL)
        bail("cannot read the fixture");
    test_write_file(path, d, 40);
    ok(fails_cleanly(path, "truncated header"), "header cut at 40 bytes: truncated header, exit 1");
    test_write_file(path, d, 7);
    ok(fails_cleanly(path, "truncated header"), "header cut inside the magic: truncated header, exit 1");
    test_write_file(path, "#!/bin/sh\necho this is a shell script\n", 38);
    ok(fails_cleanly(path, "not an obsshim trace"), "a foreign file: exit 1");

    memcpy(&h, d, sizeof h);
    h.version = OBS_TRACE_VERSION + 5;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    snprintf(reason, sizeof reason, "trace version %u is newer than this reader (%u)", OBS_TRACE_VERSION + 5,
             OBS_TRACE_VERSION);
    ok(fails_cleanly(path, reason), "a newer version: exit 1");

    h.version = OBS_TRACE_VERSION;
    h.byte_order = 0x04030201u;
    memcpy(d, &h, sizeof h);
    test_write_file(path, d, len);
    ok(fails_cleanly(path, "trace written on a machine of the other byte order (not supported)"),
       "the other byte order: exit 1");

    ok(fails_cleanly(test_path(dir, "missing.obs"), "No such file or directory"), "a missing file: exit 1");
    ok(fails_cleanly(dir, "Is a directory"), "a directory: exit 1");
    if (geteuid() != 0) {
        h.byte_order = OBS_BYTE_ORDER_MARK;
        memcpy(d, &h, sizeof h);
        test_write_file(path, d, len);
        chmod(path, 0);
        ok(fails_cleanly(path, "Permission denied"), "an unreadable file: exit 1");
        chmod(path, 0644);
    } else {
        skip("running as root: every file is readable");
    }
    free(d);
}

static void test_crashed(const char *dir, const char *fixture)
{
    const char *path = test_path(dir, "crashed.obs");
    struct run_result r;
    size_t len;
    char *d = test_read_file(fixture, &len);

    if (d == NULL)
        bail("cannot read the fixture");
    test_write_file(path, d, len - 20); /* the last record cut */
    r = run("csv", path, NULL, NULL, NULL);
    ok(run_exited_with(&r, 0), "a trace cut by a crash: csv exits 0");
    is_int(1 + (long long)fixture_ncalls - 1, (long long)count_lines_with(r.out, ","),
           "every complete record is a row");
    if (!ok(count_lines_with(r.err, "warning: 28 bytes at offset") == 1 &&
                count_lines_with(r.err, "read up to the last complete record") == 1,
            "one warning line on stderr"))
        diag_text("stderr", r.err);
    run_result_free(&r);
    r = run("summary", path, NULL, NULL, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "15 records") && strstr(r.out, "warning:"),
       "summary of a crashed trace: counts and a warning");
    run_result_free(&r);
    free(d);
}

static void test_output(const char *dir, const char *fixture)
{
    char *csv = strdup(test_path(dir, "out.csv")), *json = strdup(test_path(dir, "out.json"));
    struct run_result r, r2;
    char *text;
    struct stat st;

    r = run("csv", fixture, NULL, NULL, NULL);
    r2 = run("csv", "-o", csv, fixture, NULL);
    text = test_read_file(csv, NULL);
    ok(run_exited_with(&r2, 0) && r2.out_len == 0 && text && strcmp(text, r.out) == 0,
       "csv -o FILE writes what csv prints");
    ok(strncmp(r.out, "seq,tid,api,kind,name,", 22) == 0, "csv starts with its header");
    free(text);
    run_result_free(&r);
    run_result_free(&r2);
    r = run("json", fixture, "--output", json, NULL);
    text = test_read_file(json, NULL);
    ok(run_exited_with(&r, 0) && text && strncmp(text, "{\"traceEvents\":[", 16) == 0, "json --output FILE");
    free(text);
    run_result_free(&r);
    r = run("summary", fixture, "-o", "-", NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Kernels (GPU time)"), "summary -o - prints");
    run_result_free(&r);
    r = run("csv", fixture, "-o", test_path(dir, "no/such/dir/x.csv"), NULL);
    {
        char want[1024];
        snprintf(want, sizeof want, "obs-report: %s: No such file or directory\n", test_path(dir, "no/such/dir/x.csv"));
        if (!ok(run_exited_with(&r, 1) && strcmp(r.err, want) == 0, "an unwritable output: exit 1, one line"))
            diag_text("stderr", r.err);
    }
    run_result_free(&r);
    /* A path a rename would replace is written through (here a FIFO-free
     * stand-in for /dev/null: a symlink). */
    if (symlink(csv, test_path(dir, "link.csv")) != 0)
        bail("symlink failed");
    r = run("csv", fixture, "-o", test_path(dir, "link.csv"), NULL);
    ok(run_exited_with(&r, 0) && lstat(test_path(dir, "link.csv"), &st) == 0 && S_ISLNK(st.st_mode),
       "-o through a symlink keeps the symlink");
    run_result_free(&r);
    {
        /* The temporary beside OUT is a name the user did not choose: a new
         * file, so a link planted at its old guessable name (OUT.tmp.PID,
         * planted by tests/apps/plant_exec, which becomes obs-report and
         * keeps its pid) is not followed. */
        char wrapper[4200], victim[4200], out[4200], name[4300];
        const char *argv[12];
        size_t n = 0, len = 0;
        char *text;
        snprintf(wrapper, sizeof wrapper, "%s/tests/apps/plant_exec", test_builddir());
        snprintf(victim, sizeof victim, "%s/victim.txt", dir);
        snprintf(out, sizeof out, "%s/planted.csv", dir);
        snprintf(name, sizeof name, "%s.tmp.%%p", out);
        test_write_file(victim, "precious\n", 9);
        argv[n++] = wrapper;
        argv[n++] = "--symlink";
        argv[n++] = victim;
        argv[n++] = name;
        argv[n++] = "--";
        argv[n++] = report;
        argv[n++] = "csv";
        argv[n++] = "-o";
        argv[n++] = out;
        argv[n++] = fixture;
        argv[n] = NULL;
        if (run_program(argv, NULL, 120, &r) != 0)
            bail("cannot run %s", wrapper);
        text = test_read_file(victim, &len);
        ok(run_exited_with(&r, 0) && text != NULL && len == 9 && memcmp(text, "precious\n", 9) == 0,
           "-o FILE: a link planted at the old temporary's name OUT.tmp.PID is not followed");
        free(text);
        text = test_read_file(out, NULL);
        ok(lstat(out, &st) == 0 && S_ISREG(st.st_mode) && text != NULL && strncmp(text, "seq,tid,api,", 12) == 0,
           "-o FILE: ... and OUT is written all the same");
        if (r.err_len)
            diag_text("stderr", r.err);
        free(text);
        run_result_free(&r);
    }
    free(csv);
    free(json);
}

int main(void)
{
    const char *dir, *fixture;
    report = test_path(test_builddir(), "obs-report");
    report = strdup(report);
    if (!test_executable(report))
        bail("%s was not built", report);
    plan(36);
    dir = test_tmpdir();
    fixture = strdup(test_path(dir, "fixture.obs"));
    if (fixture_write(fixture, 0) != 0)
        bail("cannot write the fixture");
    test_help();
    test_usage_errors(fixture);
    test_bad_traces(dir, fixture);
    test_crashed(dir, fixture);
    test_output(dir, fixture);
    free((char *)fixture);
    return 0;
}
