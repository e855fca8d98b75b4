/* The man pages (man/obs-run.1, man/obs-report.1, man/libobsshim.7,
 * man/obs-sim.7, man/obs-parquet.1): each renders with groff -man -ww and man -l without a
 * warning (skipped, saying why, when neither tool is installed), and they
 * stay true to the code: every OBS_* variable shim/common/config.c reads
 * (grepped from the source now) and NVTX_INJECTION64_PATH are described
 * under ENVIRONMENT in libobsshim.7; every OBS_SIM_* variable the .c
 * files of sim/ (the simulator) read, under ENVIRONMENT in obs-sim.7;
 * every command that `obs-report --help` lists, and every long option of
 * each command's --help, is in obs-report.1; every long option of
 * `obs-run --help` is in obs-run.1, and of `obs-parquet --help` in
 * obs-parquet.1 (man/obs-parquet.1). */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"

static const char *const pages[] = {"obs-run.1", "obs-report.1", "libobsshim.7", "obs-sim.7", "obs-parquet.1"};
#define PAGE_COUNT (sizeof pages / sizeof pages[0])

/* The text between ".SH <name>" and the next ".SH" (malloc'ed, "" if none). */
static char *section(const char *page, const char *name)
{
    char head[64];
    const char *start, *end;
    char *out;
    snprintf(head, sizeof head, "\n.SH %s\n", name);
    start = strstr(page, head);
    if (start == NULL)
        return strdup("");
    start += strlen(head) - 1;
    end = strstr(start, "\n.SH ");
    if (end == NULL)
        end = start + strlen(start);
    out = malloc((size_t)(end - start) + 2);
    if (out == NULL)
        bail("out of memory");
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\n';
    out[end - start + 1] = '\0';
    return out;
}

/* roff source spelling of a name: '-' written as "\-". */
static void roff_escape(const char *name, char *out, size_t outlen)
{
    size_t o = 0;
    for (; *name != '\0' && o + 3 < outlen; name++) {
        if (*name == '-')
            out[o++] = '\\';
        out[o++] = *name;
    }
    out[o] = '\0';
}

/* True when text has a line ".B <name>" (a tagged paragraph's tag). */
static int has_tag_line(const char *text, const char *name)
{
    char line[256];
    snprintf(line, sizeof line, "\n.B %s\n", name);
    return strstr(text, line) != NULL;
}

/* 3 checks per page and tool: exit 0, no warning, the page's name shown. */
static void check_render(const char *tool, const char *const argv[], const char *page, const char *shown)
{
    static const char *const env[] = {"LC_ALL=C.UTF-8", "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80", NULL};
    struct run_result r;
    run_program(argv, env, 60, &r);
    is_int(0, r.exited ? r.status : -1, "%s %s: exit status 0", tool, page);
    if (!ok(r.err_len == 0, "%s %s: no warning", tool, page))
        diag_text("stderr", r.err);
    ok(r.out != NULL && strstr(r.out, shown) != NULL, "%s %s: renders its NAME line", tool, page);
    run_result_free(&r);
}

static void check_rendering(const char *mandir)
{
    char groff_buf[4096], man_buf[4096];
    const char *groff = test_on_path("groff", groff_buf, sizeof groff_buf);
    const char *man = test_on_path("man", man_buf, sizeof man_buf);
    size_t i;
    static const char *const shown[] = {"obs-run - run a program", "obs-report - report on a trace",
                                        "libobsshim - make CUDA and HIP programs",
                                        "obs-sim - run real CUDA programs with no GPU",
                                        "obs-parquet - traces as Parquet"};

    for (i = 0; i < PAGE_COUNT; i++) {
        const char *path = test_path(mandir, pages[i]);
        if (groff != NULL) {
            const char *argv[] = {groff, "-man", "-Tutf8", "-ww", path, NULL};
            check_render("groff", argv, pages[i], shown[i]);
        } else {
            skip_block(3, "groff is not installed");
        }
        if (man != NULL) {
            const char *argv[] = {man, "--warnings", "-l", path, NULL};
            check_render("man -l", argv, pages[i], shown[i]);
        } else {
            skip_block(3, "man is not installed");
        }
    }
}

/* Each string literal "<prefix>NAME" (NAME upper case, digits, '_') of
 * source, once each, is a tag in env (a page's ENVIRONMENT). Returns how
 * many names were found. */
static int check_names_described(const char *source, const char *source_name, const char *prefix, const char *env,
                                 const char *page)
{
    char quoted_prefix[64];
    const char *p;
    int found = 0;

    snprintf(quoted_prefix, sizeof quoted_prefix, "\"%s", prefix);
    for (p = strstr(source, quoted_prefix); p != NULL; p = strstr(p + 1, quoted_prefix)) {
        char name[128];
        size_t len = 1;
        while (p[len] != '\0' && (isupper((unsigned char)p[len]) || isdigit((unsigned char)p[len]) || p[len] == '_'))
            len++;
        if (p[len] != '"' || len - 1 >= sizeof name)
            continue;
        memcpy(name, p + 1, len - 1);
        name[len - 1] = '\0';
        /* a source may name a variable more than once (warnings): check once. */
        {
            char quoted[140];
            snprintf(quoted, sizeof quoted, "\"%s\"", name);
            if (strstr(source, quoted) != p)
                continue;
        }
        found++;
        ok(has_tag_line(env, name), "%s ENVIRONMENT describes %s (read by %s)", page, name, source_name);
    }
    return found;
}

/* Every "OBS_..." string literal of shim/common/config.c is a tag in ENVIRONMENT. */
static void check_environment(const char *srcdir, const char *page)
{
    char *config = test_read_file(test_path(srcdir, "shim/common/config.c"), NULL);
    char *env = section(page, "ENVIRONMENT");
    int found;

    if (config == NULL)
        bail("cannot read %s", test_path(srcdir, "shim/common/config.c"));
    found = check_names_described(config, "shim/common/config.c", "OBS_", env, "libobsshim.7");
    ok(found >= 5, "shim/common/config.c names %d OBS_* variables (the grep works)", found);
    ok(has_tag_line(env, "NVTX_INJECTION64_PATH"), "libobsshim.7 ENVIRONMENT describes NVTX_INJECTION64_PATH");
    free(env);
    free(config);
}

/* Every "OBS_SIM_..." string literal of the simulator's sources (the .c
 * files of sim/, joined: a variable read by several is checked once) is a
 * tag in obs-sim.7's ENVIRONMENT. */
static void check_sim_environment(const char *srcdir, const char *page)
{
    char dir[4096];
    char *env = section(page, "ENVIRONMENT");
    char *all = NULL;
    size_t all_len = 0;
    int files = 0, found;
    struct dirent *e;
    DIR *d;

    snprintf(dir, sizeof dir, "%s/sim", srcdir);
    d = opendir(dir);
    if (d == NULL)
        bail("cannot open %s", dir);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), len;
        char *text, *grown;
        if (n < 3 || strcmp(e->d_name + n - 2, ".c") != 0)
            continue;
        text = test_read_file(test_path(dir, e->d_name), &len);
        if (text == NULL)
            bail("cannot read %s/%s", dir, e->d_name);
        grown = realloc(all, all_len + len + 2);
        if (grown == NULL)
            bail("out of memory");
        all = grown;
        memcpy(all + all_len, text, len);
        all_len += len;
        all[all_len++] = '\n';
        all[all_len] = '\0';
        free(text);
        files++;
    }
    closedir(d);
    ok(files >= 10, "sim/ has %d C sources (the walk works)", files);
    found = all != NULL ? check_names_described(all, "sim/", "OBS_SIM_", env, "obs-sim.7") : 0;
    ok(found >= 5, "the sources of sim/ name %d OBS_SIM_* variables (the grep works)", found);
    free(all);
    free(env);
}

/* Each "--long-option" at the start of an indented line of help. */
static void check_long_options(const char *help, const char *page_text, const char *page, const char *what)
{
    const char *line = help;
    while (line != NULL && *line != '\0') {
        const char *p = line, *q;
        const char *eol = strchr(line, '\n');
        while (*p == ' ')
            p++;
        if (p > line && p[0] == '-' && p[1] == '-' && isalpha((unsigned char)p[2])) {
            char option[64], escaped[140];
            q = p + 2;
            while (isalnum((unsigned char)*q) || *q == '-')
                q++;
            if ((size_t)(q - p) < sizeof option) {
                memcpy(option, p, (size_t)(q - p));
                option[q - p] = '\0';
                roff_escape(option, escaped, sizeof escaped);
                ok(strstr(page_text, escaped) != NULL, "%s names %s's option %s", page, what, option);
            }
        }
        /* a line "  -h, --help" starts with the short option */
        if (p > line && p[0] == '-' && p[1] != '-') {
            const char *comma = strstr(p, ", --");
            if (comma != NULL && (eol == NULL || comma < eol)) {
                char option[64], escaped[140];
                p = comma + 2;
                q = p + 2;
                while (isalnum((unsigned char)*q) || *q == '-')
                    q++;
                if ((size_t)(q - p) < sizeof option) {
                    memcpy(option, p, (size_t)(q - p));
                    option[q - p] = '\0';
                    roff_escape(option, escaped, sizeof escaped);
                    ok(strstr(page_text, escaped) != NULL, "%s names %s's option %s", page, what, option);
                }
            }
        }
        line = eol != NULL ? eol + 1 : NULL;
    }
}

static char *help_of(const char *const argv[], const char *what)
{
    struct run_result r;
    char *out;
    run_program(argv, NULL, 60, &r);
    is_int(0, r.exited ? r.status : -1, "%s --help: exit status 0", what);
    out = strdup(r.out != NULL ? r.out : "");
    run_result_free(&r);
    return out;
}

static void check_obs_report(const char *builddir, const char *page)
{
    const char *report = test_path(builddir, "obs-report");
    const char *argv[] = {report, "--help", NULL};
    char *help, *commands;
    const char *p;
    int listed = 0;

    if (!test_executable(report)) {
        skip("obs-report is not built (%s)", report);
        return;
    }
    help = help_of(argv, "obs-report");
    commands = section(page, "COMMANDS");
    check_long_options(help, page, "obs-report.1", "obs-report");
    p = strstr(help, "\nCommands:\n");
    if (p != NULL)
        p += strlen("\nCommands:\n");
    /* "  name    description" lines up to the blank line */
    while (p != NULL && p[0] == ' ' && p[1] == ' ' && islower((unsigned char)p[2])) {
        char name[64], escaped[140], *full;
        const char *cmd_argv[] = {report, name, "--help", NULL};
        size_t len = strcspn(p + 2, " \n");
        if (len >= sizeof name)
            break;
        memcpy(name, p + 2, len);
        name[len] = '\0';
        listed++;
        roff_escape(name, escaped, sizeof escaped);
        ok(has_tag_line(commands, escaped), "obs-report.1 COMMANDS describes '%s'", name);
        full = help_of(cmd_argv, name);
        check_long_options(full, page, "obs-report.1", name);
        free(full);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    ok(listed >= 5, "obs-report --help lists %d commands (the parse works)", listed);
    free(commands);
    free(help);
}

static void check_obs_run(const char *builddir, const char *page)
{
    const char *run = test_path(builddir, "contrib/obs-run");
    const char *argv[] = {"/bin/sh", run, "--help", NULL};
    char *help;
    if (access(run, R_OK) != 0) {
        skip("contrib/obs-run is not built (%s)", run);
        return;
    }
    help = help_of(argv, "obs-run");
    check_long_options(help, page, "obs-run.1", "obs-run");
    ok(strstr(page, "\n.B OBS_SHIM_LIB\n") != NULL, "obs-run.1 describes OBS_SHIM_LIB");
    free(help);
}

/* obs-parquet's --help (Python's argparse: any python3 prints it, DuckDB
 * is imported only to export or query). */
static void check_obs_parquet(const char *srcdir, const char *page)
{
    const char *python = getenv("OBS_PYTHON3");
    const char *tool = test_path(srcdir, "contrib/parquet/obs-parquet");
    const char *argv[] = {python, tool, "--help", NULL};
    char *help;
    if (python == NULL || *python == '\0') {
        skip("python3 not found by configure");
        return;
    }
    help = help_of(argv, "obs-parquet");
    check_long_options(help, page, "obs-parquet.1", "obs-parquet");
    ok(strstr(help, "--query") != NULL && strstr(help, "--output") != NULL,
       "obs-parquet --help shows --query and --output (the parse works)");
    free(help);
}

int main(void)
{
    const char *srcdir = test_srcdir();
    const char *builddir = test_builddir();
    char mandir[4096];
    char *text[PAGE_COUNT];
    size_t i;

    plan_lazy();
    snprintf(mandir, sizeof mandir, "%s/man", srcdir);
    for (i = 0; i < PAGE_COUNT; i++) {
        text[i] = test_read_file(test_path(mandir, pages[i]), NULL);
        if (text[i] == NULL)
            bail("cannot read %s/%s", mandir, pages[i]);
    }
    check_rendering(mandir);
    check_environment(srcdir, text[2]);
    check_sim_environment(srcdir, text[3]);
    check_obs_report(builddir, text[1]);
    check_obs_run(builddir, text[0]);
    check_obs_parquet(srcdir, text[4]);
    for (i = 0; i < PAGE_COUNT; i++)
        free(text[i]);
    return 0;
}
