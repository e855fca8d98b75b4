/* contrib/install-deps: the packages it asks for on Debian and Ubuntu
 * (os-release files written here, OBS_OS_RELEASE), --dry-run installs
 * nothing, one clear message on a distribution it does not know, apt-get
 * through sudo when not root, apt-get update and a retry when the first
 * install fails; --frameworks: python3-venv, then the frameworks' virtual
 * environment at OBS_FRAMEWORKS_ENV with the pinned torch and
 * transformers, reused when it is there; and the README's quick start and
 * .ci/run both run it (.ci/run with --frameworks). apt-get, sudo,
 * dpkg-query, id, python3 and the environment's python and pip are
 * stand-ins that log their calls: the test never installs anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tap/basic.h"
#include "tap/process.h"

static const char *dir, *fakebin, *fakeid, *log_path;

/* The stand-ins. dpkg-query reports only gcc installed; apt-get fails an
 * install until an update ran (a fresh machine's empty package lists). */
static void write_script(const char *path, const char *text)
{
    test_write_file(path, text, strlen(text));
    if (chmod(path, 0755) != 0)
        bail("chmod %s failed", path);
}

static void make_stand_ins(void)
{
    char text[8192];
    fakebin = strdup(test_path(dir, "bin"));
    fakeid = strdup(test_path(dir, "idbin"));
    log_path = strdup(test_path(dir, "calls.log"));
    if (mkdir(fakebin, 0755) != 0 || mkdir(fakeid, 0755) != 0)
        bail("mkdir failed");
    write_script(test_path(fakebin, "dpkg-query"),
                 "#!/bin/sh\nfor last; do :; done\n[ \"$last\" = gcc ] && printf 'ii '\nexit 0\n");
    snprintf(text, sizeof text,
             "#!/bin/sh\necho \"apt-get $*\" >> '%s'\n"
             "case $1 in\n"
             "  update) touch '%s.updated' ;;\n"
             "  install) [ -e '%s.updated' ] || [ -z \"${FAKE_APT_STALE:-}\" ] || exit 100 ;;\n"
             "esac\nexit 0\n",
             log_path, log_path, log_path);
    write_script(test_path(fakebin, "apt-get"), text);
    snprintf(text, sizeof text, "#!/bin/sh\necho \"sudo $1\" >> '%s'\nexec \"$@\"\n", log_path);
    write_script(test_path(fakebin, "sudo"), text);
    write_script(test_path(fakeid, "id"), "#!/bin/sh\n[ \"$1\" = -u ] && { echo 1000; exit 0; }\nexec /usr/bin/id \"$@\"\n");
    /* python3 -m venv DIR copies in DIR/bin the python and pip stand-ins:
     * pip install marks DIR installed, the python imports only then. */
    snprintf(text, sizeof text,
             "#!/bin/sh\necho \"venv-python $1\" >> '%s'\n"
             "[ -e \"$(dirname \"$0\")/../installed\" ] || exit 1\necho torch 2.15.0+cu132 transformers 5.24.0\n",
             log_path);
    write_script(test_path(dir, "venv-python"), text);
    snprintf(text, sizeof text, "#!/bin/sh\necho \"pip $*\" >> '%s'\ntouch \"$(dirname \"$0\")/../installed\"\n",
             log_path);
    write_script(test_path(dir, "venv-pip"), text);
    snprintf(text, sizeof text,
             "#!/bin/sh\necho \"python3 $*\" >> '%s'\n[ \"$1 $2\" = '-m venv' ] || exit 0\n"
             "mkdir -p \"$3/bin\" && cp '%s/venv-python' \"$3/bin/python\" && cp '%s/venv-pip' \"$3/bin/pip\"\n",
             log_path, dir, dir);
    write_script(test_path(fakebin, "python3"), text);
}

static const char *os_release(const char *name, const char *text)
{
    const char *path = test_path(dir, name);
    test_write_file(path, text, strlen(text));
    return path;
}

/* Run install-deps with the stand-ins first on PATH, a fresh call log. */
static void run_deps(const char *release, const char *arg1, const char *arg2, int as_user, const char *extra,
                     struct run_result *r)
{
    static char script[4200], path_env[9000], rel_env[4300];
    const char *argv[4], *env[5];
    size_t a = 0, e = 0;
    const char *path = getenv("PATH");
    snprintf(script, sizeof script, "%s/contrib/install-deps", test_srcdir());
    snprintf(path_env, sizeof path_env, "PATH=%s%s%s:%s", as_user ? fakeid : "", as_user ? ":" : "", fakebin,
             path ? path : "/usr/bin:/bin");
    snprintf(rel_env, sizeof rel_env, "OBS_OS_RELEASE=%s", release);
    remove(log_path);
    remove(test_path(dir, "calls.log.updated"));
    argv[a++] = script;
    if (arg1)
        argv[a++] = arg1;
    if (arg2)
        argv[a++] = arg2;
    argv[a] = NULL;
    env[e++] = path_env;
    env[e++] = rel_env;
    env[e++] = extra ? extra : "FAKE_APT_STALE";
    env[e] = NULL;
    if (run_program(argv, env, 60, r) != 0)
        bail("cannot run %s", script);
}

static char *calls(void)
{
    char *text = test_read_file(log_path, NULL);
    return text ? text : strdup("");
}

/* The words after "prefix" on its line of text, or "" (static). */
static const char *after(const char *text, const char *prefix)
{
    static char buf[1024];
    const char *p = text ? strstr(text, prefix) : NULL;
    const char *nl;
    buf[0] = '\0';
    if (p == NULL)
        return buf;
    p += strlen(prefix);
    nl = strchr(p, '\n');
    snprintf(buf, sizeof buf, "%.*s", (int)(nl ? nl - p : (long)strlen(p)), p);
    return buf;
}

#define ALL_BUT_GCC \
    "make autoconf automake libtool pkg-config libsqlite3-dev zlib1g-dev python3 sqlite3 groff-base man-db " \
    "protobuf-compiler"
#define DEBIAN_ALL ALL_BUT_GCC " chromium" /* Ubuntu's chromium is a snap wrapper: left out there */

static void test_dry_runs(void)
{
    struct run_result r;
    char *log;
    const char *debian = os_release("debian", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian "
                                              "GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian\n");
    const char *ubuntu22 = os_release("ubuntu22", "NAME=\"Ubuntu\"\nVERSION_ID=\"22.04\"\nID=ubuntu\nID_LIKE="
                                                  "debian\nPRETTY_NAME=\"Ubuntu 22.04.4 LTS\"\n");
    const char *ubuntu24 = os_release("ubuntu24", "ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n"
                                                  "PRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n");
    const char *mint = os_release("mint", "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\nVERSION_ID=\"21.3\"\n"
                                          "PRETTY_NAME=\"Linux Mint 21.3\"\n");
    const char *fedora = os_release("fedora", "NAME=\"Fedora Linux\"\nVERSION_ID=40\nID=fedora\n"
                                              "PRETTY_NAME=\"Fedora Linux 40 (Workstation Edition)\"\n");

    run_deps(debian, "--dry-run", NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 0), "Debian 12 --dry-run: exit 0");
    is_string(DEBIAN_ALL " hipcc libamdhip64-dev", after(r.out, "would install: "),
              "Debian 12: every package not installed yet, hipcc and libamdhip64-dev included");
    is_string("apt-get install -y -q --no-install-recommends " DEBIAN_ALL " hipcc libamdhip64-dev",
              after(r.out, "would run: "), "Debian 12 as root: the apt-get command, no sudo");
    log = calls();
    is_string("", log, "--dry-run runs neither apt-get nor sudo");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--dry-run", NULL, 1, NULL, &r);
    is_string("sudo apt-get install -y -q --no-install-recommends " DEBIAN_ALL " hipcc libamdhip64-dev",
              after(r.out, "would run: "), "Debian 12 as a user: through sudo");
    run_result_free(&r);

    run_deps(debian, "--dry-run", "--no-hip", 0, NULL, &r);
    is_string(DEBIAN_ALL, after(r.out, "would install: "), "--no-hip: without hipcc and libamdhip64-dev");
    run_result_free(&r);

    run_deps(ubuntu22, "--dry-run", NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 0), "Ubuntu 22.04 --dry-run: exit 0");
    is_string(ALL_BUT_GCC, after(r.out, "would install: "), "Ubuntu 22.04: the packages, no hipcc (it has none)");
    ok(strstr(r.out, "Ubuntu 22.04 has no hipcc package") != NULL, "Ubuntu 22.04: says why hipcc is left out");
    run_result_free(&r);

    run_deps(ubuntu24, "--dry-run", NULL, 0, NULL, &r);
    is_string(ALL_BUT_GCC " hipcc libamdhip64-dev", after(r.out, "would install: "),
              "Ubuntu 24.04: with hipcc and libamdhip64-dev");
    run_result_free(&r);

    run_deps(mint, "--dry-run", NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 0) && strcmp(after(r.out, "would install: "), ALL_BUT_GCC) == 0,
       "a derivative (ID_LIKE=\"ubuntu debian\"): the Debian packages, without hipcc");
    run_result_free(&r);

    run_deps(fedora, "--dry-run", NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 2), "Fedora: exit 2");
    is_string("", r.out, "Fedora: nothing on stdout");
    if (!ok(strstr(r.err, "install-deps: Fedora Linux 40 (Workstation Edition)") == r.err &&
                strstr(r.err, "is not a distribution this script knows") != NULL &&
                strstr(r.err, "install by hand") != NULL,
            "Fedora: one clear message naming it, and what to install by hand"))
        diag_text("stderr", r.err);
    run_result_free(&r);

    run_deps(test_path(dir, "no-such-os-release"), NULL, NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 2) && strstr(r.err, "not a distribution this script knows") != NULL,
       "no os-release file: the same message, exit 2");
    log = calls();
    is_string("", log, "an unknown distribution: apt-get never runs");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--dry-run", "--bogus", 0, NULL, &r);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option '--bogus'") != NULL, "a bad option: exit 2, said");
    run_result_free(&r);
}

static void test_installs(void)
{
    struct run_result r;
    char *log;
    const char *debian = test_path(dir, "debian");

    run_deps(debian, NULL, NULL, 0, NULL, &r);
    ok(run_exited_with(&r, 0), "Debian as root: exit 0");
    log = calls();
    is_string("apt-get install -y -q --no-install-recommends " DEBIAN_ALL " hipcc libamdhip64-dev\n", log,
              "as root: one apt-get install of the missing packages");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--no-hip", NULL, 1, NULL, &r);
    log = calls();
    is_string("sudo apt-get\napt-get install -y -q --no-install-recommends " DEBIAN_ALL "\n", log,
              "as a user: apt-get through sudo");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--no-hip", NULL, 0, "FAKE_APT_STALE=1", &r); /* install fails until an update */
    ok(run_exited_with(&r, 0), "empty package lists: exit 0 in the end");
    log = calls();
    is_string("apt-get install -y -q --no-install-recommends " DEBIAN_ALL "\napt-get update -q\n"
              "apt-get install -y -q --no-install-recommends " DEBIAN_ALL "\n",
              log, "empty package lists: install fails, update, install again");
    free(log);
    run_result_free(&r);
}

/* --frameworks: the environment made once, with the pinned versions, then
 * reused. */
static void test_frameworks(void)
{
    struct run_result r;
    char *log, env[4300], want[8600];
    const char *debian = test_path(dir, "debian");
    char *venv = strdup(test_path(dir, "fw/env"));
    struct stat st;

    snprintf(env, sizeof env, "OBS_FRAMEWORKS_ENV=%s", venv);
    run_deps(debian, "--dry-run", "--frameworks", 0, env, &r);
    ok(run_exited_with(&r, 0), "--frameworks --dry-run: exit 0");
    is_string(DEBIAN_ALL " python3-venv hipcc libamdhip64-dev", after(r.out, "would install: "),
              "--frameworks: python3-venv too (python3 -m venv needs it)");
    snprintf(want, sizeof want, "%s (python3 -m venv) and install torch==2.15.0 transformers==5.24.0", venv);
    is_string(want, after(r.out, "frameworks: would create "),
              "--frameworks --dry-run: says where and which versions it would install");
    log = calls();
    ok(strcmp(log, "") == 0 && stat(venv, &st) != 0, "--frameworks --dry-run: nothing run, nothing made");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--frameworks", NULL, 0, env, &r);
    ok(run_exited_with(&r, 0), "--frameworks: exit 0");
    log = calls();
    snprintf(want, sizeof want,
             "apt-get install -y -q --no-install-recommends " DEBIAN_ALL " python3-venv hipcc libamdhip64-dev\n"
             "python3 -m venv %s\npip install -q --disable-pip-version-check torch==2.15.0 "
             "transformers==5.24.0\nvenv-python -c\n",
             venv);
    is_string(want, log, "--frameworks: the packages, then a virtual environment with the pinned torch and "
                         "transformers");
    snprintf(want, sizeof want, "torch 2.15.0+cu132 transformers 5.24.0 in %s", venv);
    is_string(want, after(r.out, "frameworks: installed "), "--frameworks: says what it installed, where");
    free(log);
    run_result_free(&r);

    run_deps(debian, "--frameworks", "--no-hip", 0, env, &r);
    log = calls();
    ok(run_exited_with(&r, 0) && strstr(log, "venv") != NULL && strstr(log, "python3 -m venv") == NULL &&
           strstr(log, "pip ") == NULL && strstr(r.out, "reused") != NULL,
       "--frameworks again: the environment is reused (no venv, no pip)");
    free(log);
    run_result_free(&r);
    free(venv);
}

/* --duckdb, --spark --dry-run: python3-venv (and Java) too, and where and
 * which DuckDB or pyspark they would install (the pins). */
static void test_duckdb(void)
{
    struct run_result r;
    char *log, env[4300], want[8600];
    const char *debian = test_path(dir, "debian");
    char *venv = strdup(test_path(dir, "duck/env"));
    struct stat st;

    snprintf(env, sizeof env, "OBS_DUCKDB_ENV=%s", venv);
    run_deps(debian, "--dry-run", "--duckdb", 0, env, &r);
    ok(run_exited_with(&r, 0), "--duckdb --dry-run: exit 0");
    is_string(DEBIAN_ALL " python3-venv hipcc libamdhip64-dev", after(r.out, "would install: "),
              "--duckdb: python3-venv too");
    snprintf(want, sizeof want, "%s (python3 -m venv) and install duckdb==2.0.1", venv);
    is_string(want, after(r.out, "duckdb: would create "), "--duckdb --dry-run: says where and which version");
    log = calls();
    ok(strcmp(log, "") == 0 && stat(venv, &st) != 0, "--duckdb --dry-run: nothing run, nothing made");
    free(log);
    run_result_free(&r);

    snprintf(env, sizeof env, "OBS_SPARK_ENV=%s", venv);
    run_deps(debian, "--dry-run", "--spark", 0, env, &r);
    is_string(DEBIAN_ALL " python3-venv openjdk-17-jre-headless hipcc libamdhip64-dev", after(r.out, "would install: "),
              "--spark: python3-venv and Java 17 too");
    snprintf(want, sizeof want, "%s (python3 -m venv) and install pyspark==4.3.0", venv);
    is_string(want, after(r.out, "spark: would create "), "--spark --dry-run: says where and which version");
    run_result_free(&r);
    free(venv);
}

/* The README's quick start and .ci/run run the script (so they install the
 * same packages). */
static void test_callers(void)
{
    char *readme = test_read_file(test_path(test_srcdir(), "README.md"), NULL);
    char *ci = test_read_file(test_path(test_srcdir(), ".ci/run"), NULL);
    const char *quick = readme ? strstr(readme, "## Quick start") : NULL;
    const char *block = quick ? strstr(quick, "```sh\n") : NULL;
    ok(block != NULL && strncmp(block + 6, "contrib/install-deps", 20) == 0,
       "README: the quick start's first command is contrib/install-deps");
    ok(ci != NULL && strstr(ci, "\ncontrib/install-deps") != NULL, ".ci/run runs contrib/install-deps");
    ok(ci != NULL && strstr(ci, "contrib/install-deps --frameworks") != NULL && strstr(ci, "OBS_FRAMEWORKS_ENV") != NULL,
       ".ci/run makes the frameworks' environment and hands it to make check");
    ok(ci != NULL && strstr(ci, "contrib/install-deps --duckdb") != NULL && strstr(ci, "OBS_DUCKDB_ENV") != NULL,
       ".ci/run makes DuckDB's environment and hands it to make check");
    ok(ci != NULL && strstr(ci, "contrib/install-deps --spark") != NULL && strstr(ci, "OBS_SPARK_ENV") != NULL,
       ".ci/run makes Spark's environment and hands it to make check");
    free(readme);
    free(ci);
}

int main(void)
{
    plan(41);
    dir = test_tmpdir();
    make_stand_ins();
    test_dry_runs();
    test_installs();
    test_frameworks();
    test_duckdb();
    test_callers();
    return 0;
}
