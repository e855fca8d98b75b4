/* obs-report html in a real browser: headless Chromium (Debian's
 * `chromium`) loads the pages (the reference workload under the shim on the
 * simulated CUDA runtime with OBS_GPU_TIME=events, or the fixture without
 * it; the trace whose names need escaping; a comparison of two runs) and
 *   - logs no console message (the page has no script: any message is an
 *     error, such as a resource it could not load);
 *   - builds the DOM we wrote: as many <svg> and data-report items after
 *     parsing as in the file (a name that broke out of its escaping would
 *     change them);
 *   - paints something: the screenshot (1280 x 2000) has many colours and
 *     a share of pixels that are not white (tests/png_stats.py).
 * Then the serving view's charts (check_serving): a serving loop's page
 * (tests/scenarios/serving.scn), whole and its serving section alone, with
 * the same checks, a bar per iteration in Chromium's DOM, the gaps' chart,
 * and the bars coloured by kind in the screenshot.
 * Two pages that must fail show that the checks can: one with a script
 * error (a console message), one blank (a screenshot of one colour).
 * Skips, saying why, without chromium or python3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "html_check.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"
#include "workload_bins.h"

#define SHOT_W 1280
#define SHOT_H 2000

static const char *report, *chromium, *python;
static char home_env[4200], xdg_env[4200];

static void run_checked(const char *const *argv, int timeout, struct run_result *r)
{
    const char *env[] = {home_env, xdg_env, NULL};
    if (run_program(argv, env, timeout, r) != 0)
        bail("cannot run %s", argv[0]);
}

/* Lines of Chromium's log that are console messages (":CONSOLE"). */
static size_t console_lines(const char *log)
{
    return count_lines_with(log, ":CONSOLE");
}

struct shot {
    int loaded;            /* chromium exited 0 and wrote the screenshot */
    size_t console;        /* console messages */
    long w, h, colours, nonwhite_permille;
};

static void screenshot(const char *page, const char *png, struct shot *s)
{
    char url[4300], shot_arg[4300], size[64], profile[4300];
    struct run_result r;
    memset(s, 0, sizeof *s);
    snprintf(url, sizeof url, "file://%s", page);
    snprintf(shot_arg, sizeof shot_arg, "--screenshot=%s", png);
    snprintf(size, sizeof size, "--window-size=%d,%d", SHOT_W, SHOT_H);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", test_tmpdir());
    {
        const char *argv[] = {chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
                              "--enable-logging=stderr", "--v=0", profile, shot_arg, size, url, NULL};
        remove(png);
        run_checked(argv, 120, &r);
    }
    s->loaded = run_exited_with(&r, 0) && access(png, R_OK) == 0;
    s->console = console_lines(r.err);
    if (!s->loaded)
        diag("chromium: status %d; stderr (tail): %s", r.status,
             r.err_len > 2000 ? r.err + r.err_len - 2000 : r.err);
    if (s->console) { /* the console lines only, not Chromium's chatter about D-Bus */
        const char *line = r.err;
        while (line && *line) {
            const char *nl = strchr(line, '\n');
            int n = nl ? (int)(nl - line) : (int)strlen(line);
            if (strstr(line, ":CONSOLE") && strstr(line, ":CONSOLE") < line + n)
                diag("console: %.*s", n, line);
            line = nl ? nl + 1 : NULL;
        }
    }
    run_result_free(&r);
    if (!s->loaded)
        return;
    {
        const char *argv[] = {python, test_path(test_srcdir(), "tests/png_stats.py"), png, NULL};
        run_checked(argv, 120, &r);
        if (!run_exited_with(&r, 0) ||
            sscanf(r.out, "%ld %ld %ld %ld", &s->w, &s->h, &s->colours, &s->nonwhite_permille) != 4)
            diag("png_stats.py: status %d: %s%s", r.status, r.out, r.err);
        run_result_free(&r);
    }
}

static size_t count_str(const char *text, const char *needle)
{
    size_t n = 0;
    const char *p = text;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

/* The DOM Chromium builds has the page's charts and items. */
static void check_dom(const char *label, const char *page)
{
    char url[4300], profile[4300];
    struct run_result r;
    char *text = test_read_file(page, NULL);
    snprintf(url, sizeof url, "file://%s", page);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", test_tmpdir());
    {
        const char *argv[] = {chromium, "--headless", "--disable-gpu", "--no-sandbox", profile, "--dump-dom",
                              url, NULL};
        run_checked(argv, 120, &r);
    }
    if (text == NULL)
        bail("cannot read %s", page);
    ok(run_exited_with(&r, 0) && count_str(r.out, "<svg") == count_str(text, "<svg") &&
           count_str(r.out, "data-report=\"") == count_str(text, "data-report=\"") &&
           count_str(r.out, "<section") == count_str(text, "<section") && count_str(text, "data-report=\"") > 0,
       "%s: Chromium's DOM has the page's %zu charts, %zu data items and %zu sections", label,
       count_str(text, "<svg"), count_str(text, "data-report=\""), count_str(text, "<section"));
    free(text);
    run_result_free(&r);
}

static void check_page(const char *label, const char *page)
{
    char png[4300];
    struct shot s;
    snprintf(png, sizeof png, "%s.png", page);
    screenshot(page, png, &s);
    ok(s.loaded, "%s: headless Chromium loads the page and writes a screenshot", label);
    is_int(0, (long long)s.console, "%s: no console message", label);
    ok(s.w == SHOT_W && s.h == SHOT_H && s.colours >= 50 && s.nonwhite_permille >= 20,
       "%s: the screenshot is drawn: %ldx%ld, %ld colours, %ld per mille not white", label, s.w, s.h, s.colours,
       s.nonwhite_permille);
    check_dom(label, page);
}

static int html_page(const char *out, const char *a, const char *b)
{
    struct run_result r;
    const char *argv[] = {report, "html", "-o", out, a, b, NULL};
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    if (!run_exited_with(&r, 0)) {
        diag("obs-report html %s: status %d: %s", a, r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    return 0;
}

static int workload_trace(const char *workload, char *path, size_t len)
{
    char out_env[4200], prefix[4100], inject[4200];
    const char *argv[] = {workload, "--decode", "8", "--repeat", "3", NULL};
    const char *env[8];
    struct run_result r;
    size_t e = 0;
    snprintf(prefix, sizeof prefix, "%s/workload", test_tmpdir());
    snprintf(path, len, "%s.obs", prefix);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    env[e++] = out_env;
    env[e++] = sim_library_path_env();
    env[e++] = inject;
    env[e++] = "OBS_SUMMARY=0";
    env[e++] = "OBS_JSON=0";
    env[e++] = "OBS_GPU_TIME=events";
    env[e] = NULL;
    shim_run(argv, env, 1, 120, &r);
    if (!run_exited_with(&r, 0) || access(path, R_OK) != 0) {
        diag("workload: status %d: %s", r.status, r.err);
        run_result_free(&r);
        return -1;
    }
    run_result_free(&r);
    return 0;
}

/* ---- the serving view's charts ------------------------------------------------------------- */

/* The page's serving section alone, in a page of its own (the report's
 * head, its styles; then only that section): what the screenshot shows.
 * Returns 0, or -1 when the page has no serving section. */
static int serving_section_page(const char *page, const char *out)
{
    char *text = test_read_file(page, NULL), *body, *sec, *end;
    FILE *f;
    if (text == NULL)
        bail("cannot read %s", page);
    body = strstr(text, "<body");
    body = body ? strchr(body, '>') : NULL;
    sec = strstr(text, "<section id=\"serving\">");
    end = sec ? strstr(sec, "</section>") : NULL;
    if (body == NULL || sec == NULL || end == NULL) {
        free(text);
        return -1;
    }
    if ((f = fopen(out, "w")) == NULL)
        bail("cannot write %s", out);
    fprintf(f, "%.*s%.*s</body></html>\n", (int)(body + 1 - text), text, (int)(end + 10 - sec), sec);
    fclose(f);
    free(text);
    return 0;
}

/* Pixels of exactly colour #rrggbb in png (png_stats.py), -1 on failure. */
static long colour_pixels(const char *png, const char *colour)
{
    const char *argv[] = {python, test_path(test_srcdir(), "tests/png_stats.py"), png, colour, NULL};
    struct run_result r;
    long w, h, c, nw, n = -1;
    run_checked(argv, 120, &r);
    if (!run_exited_with(&r, 0) || sscanf(r.out, "%ld %ld %ld %ld %ld", &w, &h, &c, &nw, &n) != 5)
        n = -1;
    run_result_free(&r);
    return n;
}

/* The serving view's charts (docs/serving.md, "Outputs"): tests/apps/
 * llm_replay on tests/scenarios/serving.scn under the shim (18 iterations
 * in two sessions, OBS_GPU_TIME=events), its page checked whole like the
 * others, then its serving section alone: Chromium's DOM has the
 * iterations chart with a bar per iteration of the view (its rows,
 * obs_serving_compute) and the host gaps' chart; the screenshot is drawn,
 * and coloured by kind: the colour of a kind with no iteration (unknown)
 * paints its legend swatch only, the kind with the most host time paints
 * more than that (its bars). */
static void check_serving(const char *dir)
{
    char prefix[4200], obs[4300], page[4300], section[4300], png[4400], out_env[4300], url[4400], profile[4300];
    char replay[4300], scn[4300];
    const char *argv[] = {replay, scn, NULL};
    const char *env[8];
    char colours[4][8];
    double host_ms[OBS_ITER_KINDS] = {0};
    struct run_result r;
    struct obs_trace *t;
    struct obs_serving_stats v;
    size_t i, e = 0, bars_file = 0, bars_dom = 0;
    char *text, *p;
    long swatch = -1, most = -1;
    unsigned top = OBS_ITER_DECODE;
    int legend = 0;

    snprintf(replay, sizeof replay, "%s", shim_build_path("tests/apps/llm_replay"));
    snprintf(scn, sizeof scn, "%s", test_path(test_srcdir(), "tests/scenarios/serving.scn"));
    snprintf(prefix, sizeof prefix, "%s/serving", dir);
    snprintf(obs, sizeof obs, "%s.obs", prefix);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    env[e++] = out_env;
    env[e++] = sim_library_path_env();
    env[e++] = "OBS_SUMMARY=0";
    env[e++] = "OBS_JSON=0";
    env[e++] = "OBS_GPU_TIME=events";
    env[e++] = "OBS_GEN_GAP_MS=150";
    env[e] = NULL;
    shim_run(argv, env, 1, 120, &r);
    t = run_exited_with(&r, 0) ? shim_trace_open(obs) : NULL;
    run_result_free(&r);
    if (t == NULL || obs_serving_compute(t, NULL, &v) != 0) {
        ok(0, "serving: llm_replay serving.scn under the shim writes a trace");
        if (t != NULL)
            obs_trace_free(t);
        return;
    }
    for (i = 0; i < v.nrows; i++)
        if (v.rows[i].kind < OBS_ITER_KINDS)
            host_ms[v.rows[i].kind] += (double)(v.rows[i].host_end - v.rows[i].host_begin) / 1e6;
    for (i = 0; i < OBS_ITER_KINDS; i++)
        if (host_ms[i] > host_ms[top])
            top = (unsigned)i;
    snprintf(page, sizeof page, "%s/serving.html", dir);
    snprintf(section, sizeof section, "%s/serving-section.html", dir);
    if (html_page(page, obs, NULL) != 0 || serving_section_page(page, section) != 0) {
        ok(0, "serving: obs-report html writes a page with a serving section");
        obs_serving_free(&v);
        obs_trace_free(t);
        return;
    }
    check_page("serving loop", page);
    check_page("the serving section alone", section);

    text = test_read_file(section, NULL);
    bars_file = count_str(text, "<rect class=\"iter\"");
    snprintf(url, sizeof url, "file://%s", section);
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", test_tmpdir());
    {
        const char *dump[] = {chromium, "--headless", "--disable-gpu", "--no-sandbox", profile, "--dump-dom", url, NULL};
        run_checked(dump, 120, &r);
    }
    bars_dom = run_exited_with(&r, 0) ? count_str(r.out, "<rect class=\"iter\"") : 0;
    ok(bars_dom == v.nrows && bars_file == v.nrows && v.nrows > 0 && strstr(r.out, "chart-iterations") &&
           strstr(r.out, "chart-gaps-serving"),
       "serving: Chromium's DOM has the iterations chart, a bar per iteration of the view (%zu of %zu; the file %zu), "
       "and the host gaps' chart", bars_dom, v.nrows, bars_file);
    run_result_free(&r);

    /* the legend's colours (<i style="background:#rrggbb"></i>KIND) */
    memset(colours, 0, sizeof colours);
    for (p = text; (p = strstr(p, "<i style=\"background:#")) != NULL; p++) {
        const char *c = p + 21, *name = strstr(c, "</i>");
        for (i = 0; name != NULL && i < OBS_ITER_KINDS; i++) {
            const char *kind = obs_iteration_kind_name((unsigned)i);
            if (strncmp(name + 4, kind, strlen(kind)) == 0 && name[4 + strlen(kind)] == '<') {
                snprintf(colours[i], sizeof colours[i], "%.7s", c);
                legend++;
            }
        }
    }
    free(text);
    snprintf(png, sizeof png, "%s.png", section);
    if (legend == OBS_ITER_KINDS && v.by_kind[OBS_ITER_UNKNOWN] == 0) {
        swatch = colour_pixels(png, colours[OBS_ITER_UNKNOWN]);
        most = colour_pixels(png, colours[top]);
    }
    diag("FIGURES html serving: %zu iterations (decode %zu, mixed %zu, prompt %zu); pixels of %s's colour %s: %ld "
         "(the kind with the most host time, %.3f ms), of unknown's %s: %ld (no iteration: its legend swatch)",
         v.nrows, v.by_kind[OBS_ITER_DECODE], v.by_kind[OBS_ITER_MIXED], v.by_kind[OBS_ITER_PROMPT],
         obs_iteration_kind_name(top), colours[top], most, host_ms[top], colours[OBS_ITER_UNKNOWN], swatch);
    ok(legend == OBS_ITER_KINDS && swatch > 0 && most > swatch,
       "serving: the screenshot is coloured by kind: %s's bars paint %ld pixels of its colour, a kind with no "
       "iteration only its legend swatch (%ld)", obs_iteration_kind_name(top), most, swatch);
    obs_serving_free(&v);
    obs_trace_free(t);
}

int main(void)
{
    static const char *const names[] = {"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", NULL};
    static char found[4096];
    const char *dir, *workload = NULL, *why = "";
    char run_obs[4200], hostile[4200], page[4200], bad[4200], blank[4200];
    size_t i;

    chromium = getenv("OBS_CHROMIUM");
    if (chromium && *chromium && !test_executable(chromium))
        skip_all("OBS_CHROMIUM=%s is not an executable", chromium);
    for (i = 0; (chromium == NULL || *chromium == '\0') && names[i]; i++)
        chromium = test_on_path(names[i], found, sizeof found);
    if (chromium == NULL || *chromium == '\0')
        skip_all("no chromium on PATH (Debian: apt-get install chromium)");
    python = getenv("OBS_PYTHON3");
    if (python == NULL || *python == '\0')
        skip_all("no python3 to read the screenshots (configure found none)");
    report = strdup(test_path(test_builddir(), "obs-report"));
    if (!test_executable(report))
        bail("%s was not built", report);
    plan_lazy();
    dir = test_tmpdir();
    snprintf(home_env, sizeof home_env, "HOME=%s", dir);
    snprintf(xdg_env, sizeof xdg_env, "XDG_CONFIG_HOME=%s/config", dir);
    diag("browser: %s", chromium);

    /* the checks can fail: a script error is a console message, a blank page one colour */
    snprintf(bad, sizeof bad, "%s/script-error.html", dir);
    test_write_file(bad, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body><p>x</p>"
                         "<script>no_such_function();</script></body></html>\n",
                    strlen("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body><p>x</p>"
                           "<script>no_such_function();</script></body></html>\n"));
    snprintf(blank, sizeof blank, "%s/blank.html", dir);
    test_write_file(blank, "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body></body>"
                           "</html>\n",
                    strlen("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body></body>"
                           "</html>\n"));
    {
        struct shot s;
        char png[4300];
        snprintf(png, sizeof png, "%s.png", bad);
        screenshot(bad, png, &s);
        ok(s.loaded && s.console >= 1, "control: a page with a script error logs a console message (%zu)", s.console);
        snprintf(png, sizeof png, "%s.png", blank);
        screenshot(blank, png, &s);
        ok(s.loaded && s.w == SHOT_W && s.colours < 50 && s.nonwhite_permille < 20,
           "control: a blank page's screenshot counts as blank (%ld colours, %ld per mille)", s.colours,
           s.nonwhite_permille);
    }

    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        if (strcmp(workload_bins[i].label, "obs_cuda") == 0)
            workload = workload_path(&workload_bins[i], &why);
    if (workload != NULL && workload_trace(workload, run_obs, sizeof run_obs) == 0) {
        diag("run: the reference workload (--decode 8 --repeat 3, OBS_GPU_TIME=events)");
    } else {
        diag("run: the fixture (%s)", workload ? "the workload did not run" : why);
        snprintf(run_obs, sizeof run_obs, "%s/fixture.obs", dir);
        if (fixture_write(run_obs, 0) != 0)
            bail("cannot write the fixture");
    }
    snprintf(hostile, sizeof hostile, "%s/hostile.obs", dir);
    if (hostile_trace_write(hostile) != 0)
        bail("cannot write %s", hostile);

    snprintf(page, sizeof page, "%s/run.html", dir);
    if (html_page(page, run_obs, NULL) == 0)
        check_page("run", page);
    else
        ok(0, "run: obs-report html");
    snprintf(page, sizeof page, "%s/hostile.html", dir);
    if (html_page(page, hostile, NULL) == 0)
        check_page("names that need escaping", page);
    else
        ok(0, "hostile: obs-report html");
    snprintf(page, sizeof page, "%s/compare.html", dir);
    if (html_page(page, run_obs, hostile) == 0)
        check_page("two runs side by side", page);
    else
        ok(0, "compare: obs-report html A B");
    check_serving(dir);
    return 0;
}
