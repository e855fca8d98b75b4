/* What the framework tests share: see fw_common.h. */
#include "fw_common.h"
#include "shim_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"

char python[4200], env_dir[4100];
char obs_run[4300], driver_dir[4300], inject_lib[4300];

const char *find_environment(void)
{
    const char *dir = getenv("OBS_FRAMEWORKS_ENV"), *home = getenv("HOME");
    if (dir != NULL && *dir != '\0')
        snprintf(env_dir, sizeof env_dir, "%s", dir);
    else if (home != NULL)
        snprintf(env_dir, sizeof env_dir, "%s/.cache/obsshim/frameworks", home);
    else
        return NULL;
    snprintf(python, sizeof python, "%s/bin/python", env_dir);
    return test_executable(python) ? python : NULL;
}

void fw_paths(void)
{
    snprintf(obs_run, sizeof obs_run, "%s", test_path(test_builddir(), "contrib/obs-run"));
    snprintf(driver_dir, sizeof driver_dir, "%s", test_path(test_builddir(), "sim/driver"));
    snprintf(inject_lib, sizeof inject_lib, "%s",
             test_path(test_builddir(), "tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    if (!test_executable(obs_run))
        skip_all("%s not built", obs_run);
}

void fw_plan(char *versions)
{
    plan_lazy();
    diag("%s: %s", env_dir, versions);
    free(versions);
}

void fw_launch_start(struct fw_launch *l, int shim, const char *prefix, const char **argv, size_t *a,
                     const char **env, size_t *e)
{
    if (shim) {
        argv[(*a)++] = obs_run;
        argv[(*a)++] = "--sim";
        argv[(*a)++] = "-o";
        argv[(*a)++] = prefix;
        argv[(*a)++] = "--";
        snprintf(l->inject_env, sizeof l->inject_env, "NVTX_INJECTION64_PATH=%s", inject_lib);
        env[(*e)++] = l->inject_env;
    } else {
        snprintf(l->path_env, sizeof l->path_env, "LD_LIBRARY_PATH=%s", driver_dir);
        env[(*e)++] = l->path_env;
        env[(*e)++] = "OBS_SIM_QUIET=1";
    }
}

char *fw_require(const char *also)
{
    char code[512];
    const char *argv[] = {NULL, "-c", code, NULL};
    struct run_result res;
    char *line;

    if (getenv("OBS_SANITIZE") != NULL && *getenv("OBS_SANITIZE") != '\0')
        skip_all("not under a sanitizer (PyTorch with the sanitizer's runtime preloaded is another test)");
    if (find_environment() == NULL)
        skip_all("no frameworks environment at %s (contrib/install-deps --frameworks makes it; "
                 "OBS_FRAMEWORKS_ENV names another)", env_dir[0] ? env_dir : "$HOME/.cache/obsshim/frameworks");
    if (also != NULL)
        snprintf(code, sizeof code,
                 "import torch, %s; print('torch', torch.__version__, 'cuda', torch.version.cuda, '%s', %s.__version__)",
                 also, also, also);
    else
        snprintf(code, sizeof code, "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)");
    argv[0] = python;
    if (run_program(argv, (const char *const[]){"LD_PRELOAD", "PYTHONDONTWRITEBYTECODE=1", NULL}, 300, &res) != 0 ||
        !res.exited || res.status != 0)
        skip_all("%s cannot import torch%s%s", python, also ? " and " : "", also ? also : "");
    line = res.out ? strtok(res.out, "\n") : NULL;
    line = strdup(line ? line : "");
    run_result_free(&res);
    if (line == NULL)
        bail("out of memory");
    return line;
}

/* ---- distinct names ---------------------------------------------------------------------------- */

void set_add(struct name_set *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->names = realloc(s->names, s->cap * sizeof *s->names);
        if (s->names == NULL)
            bail("out of memory");
    }
    if ((s->names[s->n++] = strdup(name)) == NULL)
        bail("out of memory");
}

int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void set_print(const char *what, struct name_set *s)
{
    char line[120];
    size_t i, len = 0;
    qsort(s->names, s->n, sizeof *s->names, by_name);
    diag("%s (%zu):", what, s->n);
    line[0] = '\0';
    for (i = 0; i < s->n; i++) {
        if (len && len + strlen(s->names[i]) + 1 > 100) {
            diag("  %s", line);
            len = 0;
        }
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", len ? " " : "", s->names[i]);
    }
    if (len)
        diag("  %s", line);
}

/* ---- the driver's log ------------------------------------------------------------------------------- */



static int recorded_kind(const char *kind)
{
    return strcmp(kind, "kernel") == 0 || strcmp(kind, "memcpy") == 0 || strcmp(kind, "memset") == 0 ||
           strcmp(kind, "sync") == 0 || strcmp(kind, "graph") == 0;
}

static int is_per_thread(const char *api)
{
    size_t l = strlen(api);
    return l > 5 && (strcmp(api + l - 5, "_ptsz") == 0 || strcmp(api + l - 5, "_ptds") == 0);
}


void log_read(const char *path, struct log *lg, void (*note)(char **fields), struct name_set *stubs)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    memset(lg, 0, sizeof *lg);
    if (f == NULL)
        return;
    while ((len = getline(&line, &cap, f)) > 0) {
        char *fl[8], *p = line;
        int nf = 0;
        struct rec *r;
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        while (nf < 8) {
            fl[nf++] = p;
            p = strchr(p, '\t');
            if (p == NULL)
                break;
            *p++ = '\0';
        }
        if (nf < 6)
            continue;
        if (strcmp(fl[1], "timing") == 0) {
            lg->timing++;
            continue;
        }
        if (strcmp(fl[1], "range") == 0)
            continue;
        if (strcmp(fl[2], "stub") == 0 && strcmp(fl[1], "other") == 0) {
            lg->stub_calls++;
            if (stubs != NULL)
                set_add(stubs, fl[0]);
        }
        if (note != NULL)
            note(fl);
        if (!recorded_kind(fl[1]))
            continue;
        if (lg->n == lg->cap) {
            lg->cap = lg->cap ? 2 * lg->cap : 4096;
            lg->r = realloc(lg->r, lg->cap * sizeof *lg->r);
            if (lg->r == NULL)
                bail("out of memory");
        }
        r = &lg->r[lg->n++];
        memset(r, 0, sizeof *r);
        snprintf(r->kind, sizeof r->kind, "%s", fl[1]);
        snprintf(r->bytes, sizeof r->bytes, "%s", fl[4]);
        r->api = strdup(fl[0]);
        r->name = strdup(fl[2]);
        if (r->api == NULL || r->name == NULL)
            bail("out of memory");
        r->has_stream = strcmp(fl[3], "-") != 0;
        r->stream = r->has_stream ? strtoull(fl[3], NULL, 16) : 0;
        if (r->stream == 0 && is_per_thread(fl[0]))
            r->stream = 2; /* 0 of a per-thread entry point: the per-thread stream */
        r->status = strtol(fl[5], NULL, 10);
        r->tid = nf >= 7 ? strtol(fl[6], NULL, 10) : 0;
    }
    free(line);
    fclose(f);
}

void log_free(struct log *lg)
{
    size_t i;
    for (i = 0; i < lg->n; i++) {
        free(lg->r[i].api);
        free(lg->r[i].name);
    }
    free(lg->r);
    memset(lg, 0, sizeof *lg);
}

/* ---- the log against the trace -------------------------------------------------------------------- */

unsigned kind_of(const char *kind)
{
    unsigned k = sim_log_kind(kind);
    return k != OBS_KIND_NONE ? k : OBS_KIND_GRAPH; /* the log's records are of the five kinds */
}

int is_record(const struct obs_call *c)
{
    return c->kind >= OBS_KIND_KERNEL && c->kind <= OBS_KIND_GRAPH;
}


/* Record by record, thread by thread: the trace's calls of each thread in
 * their order against the log's lines of that thread (the tid column). */
void compare(const char *label, const struct log *lg, const struct obs_trace *t, struct counts *k)
{
    size_t i, j, ntrace = 0, bad = 0, unmatched = 0, shown = 0;
    size_t *cursor = calloc(t->nthreads ? t->nthreads : 1, sizeof *cursor);
    long *seen_tids = calloc(lg->n + 1, sizeof *seen_tids);
    if (cursor == NULL || seen_tids == NULL)
        bail("out of memory");
    memset(k, 0, sizeof *k);
    for (i = 0; i < t->ncalls; i++)
        ntrace += is_record(&t->calls[i]);
    for (i = 0; i < lg->n; i++) {
        const struct rec *r = &lg->r[i];
        const struct obs_call *c = NULL;
        unsigned kind = kind_of(r->kind), th;
        int wrong = 0;
        k->kernels += kind == OBS_KIND_KERNEL;
        k->copies += kind == OBS_KIND_MEMCPY;
        k->memsets += kind == OBS_KIND_MEMSET;
        k->syncs += kind == OBS_KIND_SYNC;
        k->graphs += kind == OBS_KIND_GRAPH;
        for (j = 0; j < k->threads && seen_tids[j] != r->tid; j++)
            ;
        if (j == k->threads)
            seen_tids[k->threads++] = r->tid;
        for (th = 0; th < t->nthreads && (long)t->threads[th].tid != r->tid; th++)
            ;
        if (th < t->nthreads) {
            while (cursor[th] < t->ncalls &&
                   !(is_record(&t->calls[cursor[th]]) && t->calls[cursor[th]].thread == th))
                cursor[th]++;
            if (cursor[th] < t->ncalls)
                c = &t->calls[cursor[th]++];
        }
        if (c == NULL) {
            unmatched++;
            continue;
        }
        if (c->kind != kind)
            wrong = 1;
        else if (kind == OBS_KIND_KERNEL &&
                 (c->kernel == 0 || t->kernels[c->kernel].mangled == NULL || strcmp(t->kernels[c->kernel].mangled, r->name) != 0))
            wrong = 1;
        else if ((kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH) &&
                 strtoull(r->bytes, NULL, 10) != c->u.bytes)
            wrong = 1;
        else if (r->status != c->status)
            wrong = 1;
        else if (kind != OBS_KIND_SYNC || r->has_stream) {
            const struct obs_stream *s = c->stream ? obs_trace_stream(t, c->stream) : NULL;
            unsigned long long handle = c->stream == 0 ? 0 : s ? s->handle : ~0ULL;
            wrong = handle != r->stream;
        }
        if (wrong) {
            bad++;
            if (shown++ < 5)
                diag("%s: log record %zu (tid %ld) %s %s %.80s stream %#llx bytes %s status %ld; trace %s %.80s "
                     "bytes %llu status %d",
                     label, i, r->tid, r->api, r->kind, r->name, r->stream, r->bytes, r->status, obs_api_name(c->api),
                     c->kernel ? t->kernels[c->kernel].mangled : "-", (unsigned long long)c->u.bytes, c->status);
        }
    }
    k->records = lg->n;
    is_int((long long)lg->n, (long long)ntrace,
           "%s: as many launch/copy/memset/sync/graph records in the trace as in the driver's log (%zu)", label, lg->n);
    is_int(0, (long long)unmatched, "%s: every record of the log has its thread's next record in the trace", label);
    is_int(0, (long long)bad, "%s: record by record, thread by thread: kind, kernel name, stream, bytes, status",
           label);
    free(cursor);
    free(seen_tids);
}

/* ---- a run in the background ------------------------------------------------------------------------ */

void fw_job_start(struct fw_job *job, const char *base, void (*run)(void *arg, struct run_result *res), void *arg)
{
    snprintf(job->out, sizeof job->out, "%s.out", base);
    snprintf(job->err, sizeof job->err, "%s.err", base);
    fflush(stdout);
    fflush(stderr);
    job->pid = fork();
    if (job->pid < 0)
        bail("fork failed");
    if (job->pid == 0) {
        struct run_result res;
        run(arg, &res);
        test_write_file(job->out, res.out ? res.out : "", res.out ? strlen(res.out) : 0);
        test_write_file(job->err, res.err ? res.err : "", res.err ? strlen(res.err) : 0);
        _exit(res.exited && res.status == 0 ? 0 : 1); /* no atexit: the temporary directory stays */
    }
}

int fw_job_wait(const char *label, struct fw_job *job, char **out)
{
    int status = 0;
    char *err;
    if (waitpid(job->pid, &status, 0) != job->pid)
        bail("waitpid failed");
    *out = test_read_file(job->out, NULL);
    if (*out == NULL)
        *out = strdup("");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        err = test_read_file(job->err, NULL);
        diag("%s: the run without the shim failed", label);
        diag_text("stderr", err ? err : "");
        free(err);
        return 0;
    }
    return 1;
}
