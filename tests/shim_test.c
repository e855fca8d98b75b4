/* Helpers for the shim's tests: see shim_test.h. */
#include "shim_test.h"

#include <dirent.h>
#include <limits.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/api_list.h"
#include "workload_bins.h"
#include "tap/basic.h"

const char *shim_build_path(const char *rel)
{
    static char slots[8][4096];
    static unsigned next;
    char *p = slots[next++ % 8];
    snprintf(p, sizeof slots[0], "%s/%s", test_builddir(), rel);
    return p;
}

const char *shim_lib(void)
{
    static char path[4096];
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "%s/shim/.libs/libobsshim.so", test_builddir());
        if (access(path, R_OK) != 0)
            bail("%s is missing (build the shim first)", path);
    }
    return path;
}

const char *shim_names_as_printed(const char *text)
{
    typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
    static char slots[4][4096];
    static unsigned next;
    char *out = slots[next++ % 4];
    demangle_fn demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    size_t o = 0;

    while (*text != '\0' && o + 1 < sizeof slots[0]) {
        if (demangle != NULL && text[0] == '_' && text[1] == 'Z') {
            size_t n = strspn(text, "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
            char name[512];
            char *d;
            int status = -1;
            snprintf(name, sizeof name, "%.*s", (int)n, text);
            d = demangle(name, NULL, NULL, &status);
            if (d != NULL && status == 0 && o + strlen(d) + 1 < sizeof slots[0]) {
                memcpy(out + o, d, strlen(d));
                o += strlen(d);
                text += n;
                free(d);
                continue;
            }
            free(d);
        }
        out[o++] = *text++;
    }
    out[o] = '\0';
    return out;
}

void shim_run(const char *const argv[], const char *const env[], int preload, int timeout_s,
              struct run_result *res)
{
    const char *all[64];
    char preload_var[4200];
    size_t n = 0, i;

    all[n++] = "OBS_SIM_QUIET=1";
    if (preload) {
        snprintf(preload_var, sizeof preload_var, "LD_PRELOAD=%s", shim_lib());
        all[n++] = preload_var;
    } else {
        all[n++] = "LD_PRELOAD"; /* never inherited by accident */
    }
    for (i = 0; env != NULL && env[i] != NULL && n < 63; i++)
        all[n++] = env[i];
    all[n] = NULL;
    if (run_program(argv, all, timeout_s, res) != 0)
        bail("cannot run %s", argv[0]);
}

size_t sim_log_read(const char *path, struct sim_call **calls)
{
    char *text = test_read_file(path, NULL), *line, *save = NULL;
    size_t n = 0, cap = 0;
    *calls = NULL;
    if (text == NULL)
        return 0;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        struct sim_call c;
        char status[32];
        memset(&c, 0, sizeof c);
        if (sscanf(line, "%63[^\t]\t%15[^\t]\t%255[^\t]\t%31[^\t]\t%31[^\t]\t%31s", c.api, c.kind, c.name, c.stream,
                   c.bytes, status) != 6)
            continue;
        c.status = strtol(status, NULL, 10);
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            *calls = realloc(*calls, cap * sizeof **calls);
            if (*calls == NULL)
                bail("out of memory");
        }
        (*calls)[n++] = c;
    }
    free(text);
    return n;
}

int shim_api_index(const char *name)
{
    unsigned i;
    for (i = 1; i < OBS_API_COUNT; i++)
        if (strcmp(obs_api_name(i), name) == 0)
            return (int)i;
    return -1;
}

struct obs_trace *shim_trace_open(const char *path)
{
    struct obs_trace *t = NULL;
    char err[512];
    if (obs_trace_open(path, &t, err, sizeof err) != 0) {
        diag("cannot read %s: %s", path, err);
        return NULL;
    }
    return t;
}

unsigned long trace_api_count(const struct obs_trace *t, int api)
{
    unsigned long n = 0;
    size_t i;
    for (i = 0; t != NULL && i < t->ncalls; i++)
        if (t->calls[i].api == api)
            n++;
    return n;
}

size_t dir_count_suffix(const char *dir, const char *suffix, char *found, size_t foundlen)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0, sl = strlen(suffix);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l >= sl && strcmp(e->d_name + l - sl, suffix) == 0 && strcmp(e->d_name, ".") != 0 &&
            strcmp(e->d_name, "..") != 0) {
            n++;
            if (found != NULL)
                snprintf(found, foundlen, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    return n;
}

void dir_clear(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}

size_t warning_lines(const char *text)
{
    return count_lines_with(text, "obsshim: warning");
}

size_t sim_ranges_env(const char **env, const char *log, const char *prefix, int hip)
{
    static char log_env[4300], out_env[4300], path_env[8600], inject_env[4300];
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", prefix);
    if (hip)
        snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s:%s", shim_build_path("sim/.libs"),
                 shim_build_path("tests/nvtx_inject/.libs"));
    else
        snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(inject_env, sizeof inject_env, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    env[0] = log_env;
    env[1] = out_env;
    env[2] = path_env;
    env[3] = hip ? "NVTX_INJECTION64_PATH" : inject_env;
    return 4;
}

void sim_traced_run_exec(const char *tag, const char *const argv[], const char *gpu_time, const char *const *extra,
                         struct sim_traced_run *r)
{
    char out_env[4300], log_env[4300], mode_env[64];
    const char *env[40];
    size_t n = 0;

    memset(r, 0, sizeof *r);
    snprintf(r->prefix, sizeof r->prefix, "%s/%s", test_tmpdir(), tag);
    snprintf(r->log, sizeof r->log, "%s.log", r->prefix);
    snprintf(r->obs, sizeof r->obs, "%s.obs", r->prefix);
    snprintf(r->json, sizeof r->json, "%s.json", r->prefix);
    unlink(r->log);
    unlink(r->obs);
    unlink(r->json);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", r->prefix);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", r->log);
    snprintf(mode_env, sizeof mode_env, "OBS_GPU_TIME=%s", gpu_time != NULL ? gpu_time : "off");
    env[n++] = sim_library_path_env();
    env[n++] = log_env;
    env[n++] = out_env;
    env[n++] = "OBS_SIM_LOG_OPS=1";
    env[n++] = mode_env;
    env[n++] = "OBS_TRACE=json";
    while (extra != NULL && *extra != NULL && n < 39)
        env[n++] = *extra++;
    env[n] = NULL;
    shim_run(argv, env, gpu_time != NULL, 120, &r->res);
    if (gpu_time != NULL && access(r->obs, R_OK) == 0)
        r->t = shim_trace_open(r->obs);
}

void sim_traced_run_free(struct sim_traced_run *r)
{
    if (r->t != NULL)
        obs_trace_free(r->t);
    run_result_free(&r->res);
}

int trace_json_check_counts(const char *json, struct run_result *pr, unsigned long *slices, unsigned long *flows)
{
    const char *python = getenv("OBS_PYTHON3");
    char script[4096];
    const char *argv[4], *p;

    *slices = *flows = ULONG_MAX; /* not printed */
    if (python == NULL || *python == '\0')
        return -1;
    snprintf(script, sizeof script, "%s/tests/trace_json_check.py", test_srcdir());
    argv[0] = python;
    argv[1] = script;
    argv[2] = json;
    argv[3] = NULL;
    if (run_program(argv, NULL, 120, pr) != 0)
        bail("cannot run %s", python);
    if ((p = strstr(pr->out, "\ngpu_slices=")) != NULL)
        *slices = strtoul(p + 12, NULL, 10);
    if ((p = strstr(pr->out, "\nflows=")) != NULL)
        *flows = strtoul(p + 7, NULL, 10);
    return 0;
}

/* `obs-report ranks ARGS... TRACES...`: its result (r freed by the caller). */
static void ranks_run(const char *const *args, const char *const *traces, size_t n, struct run_result *r)
{
    const char **argv = calloc(n + 12, sizeof *argv);
    size_t a = 0, i;
    if (argv == NULL)
        bail("out of memory");
    argv[a++] = shim_build_path("obs-report");
    argv[a++] = "ranks";
    for (i = 0; args[i] && a < 10; i++)
        argv[a++] = args[i];
    for (i = 0; i < n; i++)
        argv[a++] = traces[i];
    argv[a] = NULL;
    if (run_program(argv, NULL, 300, r) != 0)
        bail("cannot run %s", argv[0]);
    free(argv);
}

int shim_ranks_perfetto_check(const char *const *traces, size_t n, const char *prefix, char *line, size_t linelen)
{
    const char *python = getenv("OBS_PYTHON3"), *protoc = getenv("OBS_PROTOC");
    char pf[4300], csv[4300], checker[4300], protodir[4300];
    const char *pf_args[] = {"--perfetto", "-o", pf, NULL}, *csv_args[] = {"--format", "csv", "--collectives", "-o", csv,
                                                                           NULL};
    struct run_result r;
    int good;
    if (python == NULL || *python == '\0' || protoc == NULL || *protoc == '\0') {
        snprintf(line, linelen, "python3 or protoc not found by configure");
        return -1;
    }
    snprintf(pf, sizeof pf, "%s.pftrace", prefix);
    snprintf(csv, sizeof csv, "%s.csv", prefix);
    ranks_run(pf_args, traces, n, &r);
    good = run_exited_with(&r, 0);
    if (!good)
        diag_text("obs-report ranks --perfetto", r.err ? r.err : "");
    run_result_free(&r);
    ranks_run(csv_args, traces, n, &r);
    good = good && run_exited_with(&r, 0);
    run_result_free(&r);
    snprintf(checker, sizeof checker, "%s/tests/ranks_perfetto_check.py", test_srcdir());
    snprintf(protodir, sizeof protodir, "%s/tests/perfetto", test_srcdir());
    {
        const char *argv[] = {python, checker, protoc, protodir, pf, csv, NULL};
        if (run_program(argv, NULL, 300, &r) != 0)
            bail("cannot run %s", python);
    }
    snprintf(line, linelen, "%.*s", (int)strcspn(r.out ? r.out : "", "\n"), r.out ? r.out : "");
    good = good && run_exited_with(&r, 0);
    if (!run_exited_with(&r, 0))
        diag_text("ranks_perfetto_check.py", r.err ? r.err : "");
    run_result_free(&r);
    return good;
}

int shim_obs_report(const char *command, const char *trace, const char *out, char **err)
{
    static char report[4200];
    int conversion = strcmp(command, "perfetto") == 0 || strcmp(command, "csv") == 0 || strcmp(command, "json") == 0;
    const char *quiet[] = {report, command, "-q", trace, "-o", out, NULL};
    const char *plain[] = {report, command, trace, "-o", out, NULL};
    struct run_result r;
    int status;
    if (report[0] == '\0')
        snprintf(report, sizeof report, "%s", shim_build_path("obs-report"));
    if (run_program(conversion ? quiet : plain, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    status = r.exited ? r.status : -1;
    if (err != NULL && (*err = strdup(r.err ? r.err : "")) == NULL)
        bail("out of memory");
    run_result_free(&r);
    return status;
}
