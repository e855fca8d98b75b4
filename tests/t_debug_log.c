/* The debug log (OBS_DEBUG, OBS_DEBUG_FILE; docs/shim.md "Debug log",
 * docs/phases.md "Reading a decision log"):
 *   - the OBS_DEBUG parser (shim/common/debug_spec.c): good values, each
 *     kind of bad value with its column, the round trip through its
 *     formatter, and the kept fuzz corpus (tests/fuzz/debug_spec_corpus)
 *     replayed through the fuzz body;
 *   - under the shim: off by default (no line), a bad value (one warning,
 *     nothing else changes), OBS_DEBUG_FILE created with O_EXCL (an
 *     existing file and a planted symbolic link are left alone, lines go to
 *     stderr), %p per process across a fork;
 *   - a known scenario's decision log (chunked_prefill, two host threads,
 *     OBS_DEBUG=phases:2): every line has the documented shape, each
 *     thread's decisions come in the order the scenario makes them with the
 *     signals expected, and each decision's call= is the launch in the
 *     trace that carries the phase, generation and step the line says;
 *   - lines from four threads at level 4 stay whole (one per launch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/debug_spec.h"
#include "corpus_replay.h"
#include "debug_spec_fuzz.h"
#include "phase_log_words.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"

/* ---- the parser ------------------------------------------------------------------------------ */

static int levels_are(const uint8_t *l, unsigned phases, unsigned intercept, unsigned record, unsigned gputime,
                      unsigned output)
{
    return l[OBS_DBG_PHASES] == phases && l[OBS_DBG_INTERCEPT] == intercept && l[OBS_DBG_RECORD] == record &&
           l[OBS_DBG_GPUTIME] == gputime && l[OBS_DBG_OUTPUT] == output;
}

static void test_parser(void)
{
    static const struct {
        const char *text;
        unsigned p, i, r, g, o;
    } good[] = {
        {"", 0, 0, 0, 0, 0},
        {"phases", 1, 0, 0, 0, 0},
        {"phases:2", 2, 0, 0, 0, 0},
        {"PHASES:4,Output:3", 4, 0, 0, 0, 3},
        {" phases:2 , intercept ", 2, 1, 0, 0, 0},
        {"all:3,record:0", 3, 3, 0, 3, 3},
        {"2", 2, 2, 2, 2, 2},
        {"all", 1, 1, 1, 1, 1},
        {",,gputime:2,", 0, 0, 0, 2, 0},
        {"all:4,off", 0, 0, 0, 0, 0},
        {"none", 0, 0, 0, 0, 0},
        {"phases:1,phases:3", 3, 0, 0, 0, 0},
    };
    static const struct {
        const char *text;
        size_t column;
        const char *what;
    } bad[] = {
        {"bogus", 1, "unknown domain"},
        {"phases:5", 8, "level out of range"},
        {"phases:22", 8, "level out of range"},
        {"phases:", 8, "expected a level"},
        {"phases2", 7, "expected ','"},
        {"phases :2", 8, "expected ','"},
        {"off:1", 4, "off takes no level"},
        {"phases;record", 7, "expected ','"},
        {"phases,:", 8, "expected a domain name"},
        {"phases,r3cord", 8, "unknown domain"},
    };
    uint8_t levels[OBS_DEBUG_DOMAINS];
    struct obs_debug_spec_error err;
    char text[128];
    size_t i;

    for (i = 0; i < sizeof good / sizeof good[0]; i++) {
        int rc = obs_debug_spec_parse(good[i].text, levels, &err);
        ok(rc == 0 && levels_are(levels, good[i].p, good[i].i, good[i].r, good[i].g, good[i].o),
           "OBS_DEBUG='%s': phases %u intercept %u record %u gputime %u output %u", good[i].text, good[i].p,
           good[i].i, good[i].r, good[i].g, good[i].o);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = obs_debug_spec_parse(bad[i].text, levels, &err);
        ok(rc == -1 && err.column == bad[i].column && strstr(err.what, bad[i].what) != NULL &&
               levels_are(levels, 0, 0, 0, 0, 0),
           "OBS_DEBUG='%s' is refused at column %zu (%s), every domain off", bad[i].text, bad[i].column, bad[i].what);
        if (rc != -1 || err.column != bad[i].column)
            diag("got rc %d column %zu: %s", rc, err.column, err.what);
    }
    obs_debug_spec_parse("all:3,record:0,phases:2", levels, &err);
    obs_debug_spec_format(levels, text, sizeof text);
    is_string("phases:2,intercept:3,gputime:3,output:3,capture:3", text, "formatted back as it parses");
    memset(levels, 0, sizeof levels);
    obs_debug_spec_format(levels, text, sizeof text);
    is_string("off", text, "nothing on formats as off");
    is_string("gputime", obs_debug_domain_name(OBS_DBG_GPUTIME), "domain names");
}

/* Every file of the kept corpus through the fuzz body (it aborts on failure). */
static void test_corpus(void)
{
    const char *dir = test_path(test_srcdir(), "tests/fuzz/debug_spec_corpus");
    size_t failed, files = fuzz_corpus_replay(dir, obs_fuzz_debug_spec, &failed);

    if (files == (size_t)-1) {
        ok(0, "corpus directory %s readable", dir);
        return;
    }
    ok(files >= 20 && failed == 0, "fuzz corpus replayed: %zu files, %zu unreadable", files, failed);
}

/* ---- under the shim --------------------------------------------------------------------------- */

static const char *env_var(const char *name, const char *fmt, const char *dir)
{
    static char slots[8][4400];
    static unsigned next;
    char *s = slots[next++ % 8];
    int n = snprintf(s, sizeof slots[0], "%s=", name);
    snprintf(s + n, sizeof slots[0] - (size_t)n, fmt, dir);
    return s;
}

static void run_shim_app(const char *const args[], const char *const env[], struct run_result *res)
{
    const char *argv[16];
    size_t i = 0;
    argv[i++] = shim_build_path("tests/apps/shim_app");
    for (; args != NULL && *args != NULL && i < 15; args++)
        argv[i++] = *args;
    argv[i] = NULL;
    shim_run(argv, env, 1, 60, res);
}

static size_t debug_lines(const char *text, const char *domain)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "obsshim[%s]: ", domain);
    return count_lines_with(text, domain[0] != '\0' ? prefix : "obsshim[");
}

static void test_off_and_bad(const char *dir)
{
    const char *args[] = {"--launches", "5", NULL};
    struct run_result plain, off, badv;
    const char *argv[] = {shim_build_path("tests/apps/shim_app"), "--launches", "5", NULL};

    shim_run(argv, NULL, 0, 60, &plain);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/off", dir), NULL};
        run_shim_app(args, env, &off);
    }
    ok(off.exited && off.status == 0 && debug_lines(off.err, "") == 0, "OBS_DEBUG unset: no debug line");
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/bad", dir), "OBS_DEBUG=phases:9", NULL};
        run_shim_app(args, env, &badv);
    }
    is_int(1, (long long)warning_lines(badv.err), "OBS_DEBUG=phases:9: one warning");
    ok(strstr(badv.err, "obsshim: warning: OBS_DEBUG=phases:9: level out of range (expected 0 to 4) at column 8; "
                        "debug logging stays off") != NULL,
       "it names the value, what is wrong, the column and what is used instead");
    ok(debug_lines(badv.err, "") == 0, "and no debug line follows");
    ok(badv.exited && plain.exited && badv.status == plain.status && strcmp(badv.out, plain.out) == 0,
       "the app's output and exit status are unchanged");
    run_result_free(&plain);
    run_result_free(&off);
    run_result_free(&badv);
}

static void test_file(const char *dir)
{
    const char *args[] = {"--launches", "5", NULL};
    struct run_result res;
    char path[4400], victim[4400], *text;
    struct stat st;

    /* created, %p expanded, nothing on stderr */
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/f", dir), "OBS_DEBUG=intercept,phases:2,record:2",
                             env_var("OBS_DEBUG_FILE", "%s/debug-%%p.log", dir), NULL};
        run_shim_app(args, env, &res);
    }
    ok(res.exited && res.status == 0 && debug_lines(res.err, "") == 0, "OBS_DEBUG_FILE: no debug line on stderr");
    is_int(1, (long long)dir_count_suffix(dir, ".log", path, sizeof path), "one debug file, named with the pid");
    text = test_read_file(path, NULL);
    ok(text != NULL && debug_lines(text, "intercept") >= 2 && debug_lines(text, "phases") >= 2 &&
           debug_lines(text, "record") >= 1 && debug_lines(text, "output") == 0,
       "it holds the lines of the domains asked for, and of no other");
    ok(text != NULL && strstr(text, "obsshim[intercept]: start-up: pid ") != NULL &&
           strstr(text, "obsshim[intercept]: resolved the CUDA runtime: ") != NULL,
       "start-up and the real functions resolved (intercept:1)");
    free(text);
    run_result_free(&res);

    /* an existing file is not overwritten */
    snprintf(path, sizeof path, "%s/taken.log", dir);
    test_write_file(path, "the user's\n", 11);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/t", dir), "OBS_DEBUG=intercept",
                             env_var("OBS_DEBUG_FILE", "%s/taken.log", dir), NULL};
        run_shim_app(args, env, &res);
    }
    text = test_read_file(path, NULL);
    ok(text != NULL && strcmp(text, "the user's\n") == 0, "an existing OBS_DEBUG_FILE is left as it was");
    ok(res.exited && res.status == 0 && strstr(res.err, "OBS_DEBUG_FILE=") != NULL &&
           strstr(res.err, "File exists") != NULL && debug_lines(res.err, "intercept") >= 1,
       "one warning says so; the lines go to stderr");
    free(text);
    run_result_free(&res);

    /* a symbolic link planted at the name is not followed */
    snprintf(victim, sizeof victim, "%s/victim", dir);
    test_write_file(victim, "keep\n", 5);
    snprintf(path, sizeof path, "%s/planted.log", dir);
    if (symlink(victim, path) != 0)
        bail("symlink %s", path);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/s", dir), "OBS_DEBUG=intercept",
                             env_var("OBS_DEBUG_FILE", "%s/planted.log", dir), NULL};
        run_shim_app(args, env, &res);
    }
    text = test_read_file(victim, NULL);
    ok(text != NULL && strcmp(text, "keep\n") == 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode),
       "a symbolic link at OBS_DEBUG_FILE's name is not followed: its target is unchanged");
    ok(res.exited && res.status == 0 && strstr(res.err, "OBS_DEBUG_FILE=") != NULL &&
           debug_lines(res.err, "intercept") >= 1,
       "one warning; the lines go to stderr");
    free(text);
    run_result_free(&res);
}

static void test_fork(const char *dir)
{
    const char *args[] = {"--launches", "5", "--fork", NULL};
    struct run_result res;
    char sub[4200], path[4400], *text = NULL;
    long child = 0;
    const char *p;

    snprintf(sub, sizeof sub, "%s/fork", dir);
    mkdir(sub, 0755);
    {
        const char *env[] = {env_var("OBS_OUTPUT", "%s/x-%%p", sub), "OBS_DEBUG=intercept",
                             env_var("OBS_DEBUG_FILE", "%s/debug-%%p.log", sub), NULL};
        run_shim_app(args, env, &res);
    }
    if ((p = strstr(res.out, "child ")) != NULL)
        child = strtol(p + 6, NULL, 10);
    is_int(2, (long long)dir_count_suffix(sub, ".log", NULL, 0), "fork, OBS_DEBUG_FILE with %%p: a file per process");
    snprintf(path, sizeof path, "%s/debug-%ld.log", sub, child);
    if (child > 0)
        text = test_read_file(path, NULL);
    ok(text != NULL && strstr(text, "fork: child pid ") != NULL && strstr(text, "start-up") == NULL,
       "the child's file has the child's lines (the fork), not the parent's start-up");
    free(text);
    run_result_free(&res);
}

/* ---- a scenario's decision log ------------------------------------------------------------------ */

struct decision {
    unsigned tid, call, gen, step; /* step UINT32_MAX: none */
    char what[32], because[64];
};

/* "obsshim[phases]: tid=T call=N WHAT gen=G [step=K] because=B ..." */
static int parse_decision(const char *line, struct decision *d)
{
    int n = 0;
    const char *rest, *b;
    d->step = UINT32_MAX;
    if (sscanf(line, "obsshim[phases]: tid=%u call=%u %31s gen=%u%n", &d->tid, &d->call, d->what, &d->gen, &n) != 4)
        return 0;
    if (strcmp(d->what, "layers") == 0) /* what the layer finder found: not a phase decision */
        return 0;
    rest = line + n;
    if (sscanf(rest, " step=%u", &d->step) != 1)
        d->step = UINT32_MAX;
    b = strstr(rest, " because=");
    if (b == NULL || sscanf(b, " because=%63s", d->because) != 1)
        return 0;
    return 1;
}

/* The n-th (1-based) call of thread tid in t, or NULL. */
static const struct obs_call *nth_call(const struct obs_trace *t, unsigned tid, unsigned n)
{
    size_t i;
    unsigned seen = 0;
    for (i = 0; i < t->ncalls; i++)
        if (t->threads[t->calls[i].thread].tid == tid && ++seen == n)
            return &t->calls[i];
    return NULL;
}

static void test_decision_log(const char *dir)
{
    const char *const *shape_words = phase_log_words;
    const char *argv[] = {shim_build_path("tests/apps/llm_replay"), "--threads", "2",
                          test_path(test_srcdir(), "tests/scenarios/chunked_prefill.scn"), NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/scn", dir), "OBS_DEBUG=phases:2",
                         env_var("OBS_DEBUG_FILE", "%s/scn.debug", dir), "OBS_TRACE=none", "OBS_SUMMARY=0", NULL};
    /* each thread, in order: (what, because, gen, step); step ~0u: none */
    static const struct {
        const char *what, *because;
        unsigned gen, step;
    } expected[] = {
        {"new-generation", "no-generation-open", 0, ~0u},
        {"prompt-forward", "first-forward-of-the-generation", 0, ~0u},
        {"prompt-chunk", "the-last-forward-went-unread", 0, ~0u},
        {"prompt-chunk", "the-last-forward-went-unread", 0, ~0u},
        {"decode-starts", "forward", 0, 0},
        {"step", "forward", 0, 1}, {"step", "forward", 0, 2},
        {"step", "forward", 0, 3}, {"step", "forward", 0, 4},
        {"step", "forward", 0, 5}, {"step", "forward", 0, 6},
        {"step", "forward", 0, 7},
        {"new-generation", "copy-in-over-4x-steps", 1, ~0u},
        {"prompt-forward", "first-forward-of-the-generation", 1, ~0u},
        {"decode-starts", "forward", 1, 0},
        {"step", "forward", 1, 1}, {"step", "forward", 1, 2},
        {"step", "forward", 1, 3}, {"step", "forward", 1, 4},
        {"step", "forward", 1, 5}, {"step", "forward", 1, 6},
        {"step", "forward", 1, 7},
    };
    const size_t nexpected = sizeof expected / sizeof expected[0];
    struct run_result res;
    char *text, *line, *save = NULL, path[4400];
    struct decision d[256];
    size_t nd = 0, lines = 0, shaped = 0, i, k;
    unsigned tids[2] = {0, 0};
    size_t in_order[2] = {0, 0}, matched = 0, checked = 0;
    struct obs_trace *t;

    shim_run(argv, env, 1, 120, &res);
    ok(res.exited && res.status == 0 && strstr(res.out, "scenario chunked_prefill threads 2") != NULL,
       "chunked_prefill, 2 threads, OBS_DEBUG=phases:2: the replay runs");
    snprintf(path, sizeof path, "%s/scn.debug", dir);
    text = test_read_file(path, NULL);
    if (text == NULL) {
        skip_block(5, "no decision log written");
        run_result_free(&res);
        return;
    }
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        unsigned tid, call;
        int at = 0;
        lines++;
        if (sscanf(line, "obsshim[phases]: tid=%u call=%u %n", &tid, &call, &at) == 2 && at > 0) {
            for (k = 0; k < PHASE_LOG_WORDS; k++)
                if (strncmp(line + at, shape_words[k], strlen(shape_words[k])) == 0 &&
                    line[at + strlen(shape_words[k])] == ' ')
                    break;
            shaped += k < PHASE_LOG_WORDS;
            if (nd < sizeof d / sizeof d[0] && parse_decision(line, &d[nd]))
                nd++;
        } else if (strncmp(line, "obsshim[phases]: set-up ", 24) == 0 || strncmp(line, "obsshim[phases]: name id=", 25) == 0) {
            shaped++;
        }
    }
    ok(lines > 0 && shaped == lines, "every line has the documented shape (%zu of %zu)", shaped, lines);
    /* per thread, the decisions in order */
    for (i = 0; i < nd; i++) {
        unsigned slot = tids[0] == 0 || tids[0] == d[i].tid ? 0 : 1;
        size_t n;
        if (tids[slot] == 0)
            tids[slot] = d[i].tid;
        if (tids[slot] != d[i].tid)
            continue;
        n = in_order[slot];
        if (n < nexpected && strcmp(d[i].what, expected[n].what) == 0 &&
            strcmp(d[i].because, expected[n].because) == 0 && d[i].gen == expected[n].gen &&
            d[i].step == expected[n].step)
            in_order[slot]++;
        else if (n < nexpected)
            diag("thread %u decision %zu: %s gen=%u step=%u because=%s; expected %s gen=%u because=%s", d[i].tid, n,
                 d[i].what, d[i].gen, d[i].step, d[i].because, expected[n].what, expected[n].gen,
                 expected[n].because);
    }
    ok(tids[0] != 0 && tids[1] != 0 && tids[0] != tids[1] && nd == 2 * nexpected,
       "two threads, %zu decisions each (%zu in all)", nexpected, nd);
    ok(in_order[0] == nexpected && in_order[1] == nexpected,
       "each thread's decisions in order with the signals expected: the prompt's chunks go on (a sync and "
       "nothing read since the forward before), decode starts at the forward after the prompt's token read, a "
       "step at each forward after a token read, the second prompt by its copy-in (%zu, %zu of %zu)",
       in_order[0], in_order[1], nexpected);
    /* call= names the launch the trace labels as the line says */
    snprintf(path, sizeof path, "%s/scn.obs", dir);
    t = shim_trace_open(path);
    for (i = 0; t != NULL && i < nd; i++) {
        const struct obs_call *c = nth_call(t, d[i].tid, d[i].call);
        uint32_t step;
        const char *phase;
        checked++;
        if (c == NULL || (c->kind != OBS_KIND_KERNEL && c->kind != OBS_KIND_GRAPH) || c->phase == OBS_NONE)
            continue;
        phase = t->phases[c->phase].phase;
        step = obs_phase_step(t, c->phase);
        if (obs_call_generation(t, c) == d[i].gen &&
            (d[i].step == UINT32_MAX ? strcmp(phase, "PREFILL") == 0 && step == UINT32_MAX
                                     : strcmp(phase, "PREFILL") != 0 && step == d[i].step))
            matched++;
        else
            diag("thread %u call %u: the trace says %s gen %u step %u, the log %s gen %u step %u", d[i].tid,
                 d[i].call, phase, obs_call_generation(t, c), step, d[i].what, d[i].gen, d[i].step);
    }
    ok(t != NULL && checked == nd && matched == nd,
       "each decision's call= is a launch the trace labels with that phase, generation and step (%zu of %zu)",
       matched, nd);
    if (t != NULL) {
        size_t gens = 0;
        for (i = 0; i < t->nphases; i++)
            gens += strcmp(t->phases[i].phase, "PREFILL") == 0 && !t->phases[i].relabel;
        is_int(4, (long long)gens, "the trace has the 4 generations the log starts (2 per thread)");
        obs_trace_free(t);
    } else {
        skip("no trace");
    }
    free(text);
    run_result_free(&res);
}

/* Four threads at level 4 (a line per launch), into one file: every line whole. */
static void test_whole_lines(const char *dir)
{
    const char *argv[] = {shim_build_path("tests/apps/llm_replay"), "--threads", "4",
                          test_path(test_srcdir(), "tests/scenarios/tiny_loop.scn"), NULL};
    const char *env[] = {env_var("OBS_OUTPUT", "%s/whole", dir), "OBS_DEBUG=all:4",
                         env_var("OBS_DEBUG_FILE", "%s/whole.debug", dir), "OBS_TRACE=none", "OBS_SUMMARY=0", NULL};
    static const char *const domains[] = {"phases", "intercept", "record", "gputime", "output"};
    struct run_result res;
    char *text, *line, *save = NULL, path[4400];
    size_t lines = 0, whole = 0, launch_lines = 0, k;
    long launches = -1;
    const char *p;

    shim_run(argv, env, 1, 120, &res);
    if ((p = strstr(res.out, " launches ")) != NULL)
        launches = strtol(p + 10, NULL, 10);
    snprintf(path, sizeof path, "%s/whole.debug", dir);
    text = test_read_file(path, NULL);
    for (line = text != NULL ? strtok_r(text, "\n", &save) : NULL; line != NULL; line = strtok_r(NULL, "\n", &save)) {
        lines++;
        for (k = 0; k < sizeof domains / sizeof domains[0]; k++) {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "obsshim[%s]: ", domains[k]);
            if (strncmp(line, prefix, strlen(prefix)) == 0 && strstr(line + 1, "obsshim[") == NULL)
                break;
        }
        whole += k < sizeof domains / sizeof domains[0];
        launch_lines += strstr(line, " launch name=") != NULL;
    }
    ok(res.exited && res.status == 0 && lines > 0 && whole == lines,
       "4 threads, OBS_DEBUG=all:4: every line whole, one domain prefix each (%zu of %zu)", whole, lines);
    is_int(launches, (long long)launch_lines, "one phases line per launch, none lost or merged");
    free(text);
    run_result_free(&res);
}

int main(void)
{
    const char *dir;
    plan_lazy();
    test_parser();
    test_corpus();
    if (!test_executable(shim_build_path("tests/apps/shim_app")) ||
        !test_executable(shim_build_path("tests/apps/llm_replay")))
        bail("tests/apps/shim_app or llm_replay not built (make check builds them)");
    dir = test_tmpdir();
    test_off_and_bad(dir);
    test_file(dir);
    test_fork(dir);
    test_decision_log(dir);
    test_whole_lines(dir);
    return 0;
}
