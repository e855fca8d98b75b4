/* The simulators' log against a trace: see driver_log.h. */
#include "driver_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "tap/basic.h"

static int is_per_thread(const char *api)
{
    size_t l = strlen(api);
    return l > 5 && (strcmp(api + l - 5, "_ptsz") == 0 || strcmp(api + l - 5, "_ptds") == 0);
}

void dlog_read(const char *path, struct dlog *lg, dlog_line_fn fn, void *arg)
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
        struct dlog_rec *r;
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
        if (strcmp(fl[2], "stub") == 0 && strcmp(fl[1], "other") == 0)
            lg->stub_calls++;
        if (fn != NULL)
            fn(fl, nf, arg);
        if (dlog_kind_of(fl[1]) == OBS_KIND_NONE)
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

void dlog_free(struct dlog *lg)
{
    size_t i;
    for (i = 0; i < lg->n; i++) {
        free(lg->r[i].api);
        free(lg->r[i].name);
    }
    free(lg->r);
    memset(lg, 0, sizeof *lg);
}

unsigned dlog_kind_of(const char *kind)
{
    if (strcmp(kind, "kernel") == 0)
        return OBS_KIND_KERNEL;
    if (strcmp(kind, "memcpy") == 0)
        return OBS_KIND_MEMCPY;
    if (strcmp(kind, "memset") == 0)
        return OBS_KIND_MEMSET;
    if (strcmp(kind, "sync") == 0)
        return OBS_KIND_SYNC;
    if (strcmp(kind, "graph") == 0)
        return OBS_KIND_GRAPH;
    return OBS_KIND_NONE;
}

static int is_record(const struct obs_call *c)
{
    return c->kind >= OBS_KIND_KERNEL && c->kind <= OBS_KIND_GRAPH;
}

/* The trace's thread of tid, or t->nthreads. */
static unsigned thread_of(const struct obs_trace *t, long tid)
{
    unsigned th;
    for (th = 0; th < t->nthreads && (long)t->threads[th].tid != tid; th++)
        ;
    return th;
}

/* Does the record match the logged call? */
static int same_call(const struct obs_trace *t, const struct dlog_rec *r, const struct obs_call *c)
{
    unsigned kind = dlog_kind_of(r->kind);
    if (c->kind != kind)
        return 0;
    if (kind == OBS_KIND_KERNEL &&
        (c->kernel == 0 || t->kernels[c->kernel].mangled == NULL || strcmp(t->kernels[c->kernel].mangled, r->name) != 0))
        return 0;
    if ((kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_GRAPH) &&
        strtoull(r->bytes, NULL, 10) != c->u.bytes)
        return 0;
    if (r->status != c->status)
        return 0;
    if (kind != OBS_KIND_SYNC || r->has_stream) {
        const struct obs_stream *s = c->stream ? obs_trace_stream(t, c->stream) : NULL;
        unsigned long long handle = c->stream == 0 ? 0 : s ? s->handle : ~0ULL;
        return handle == r->stream;
    }
    return 1;
}

void dlog_compare(const char *label, const struct dlog *lg, const struct obs_trace *t, struct dlog_result *res)
{
    size_t i, j, shown = 0;
    size_t *cursor = calloc(t->nthreads ? t->nthreads : 1, sizeof *cursor);
    long *seen_tids = calloc(lg->n + 1, sizeof *seen_tids);
    size_t *unmatched_of = calloc(lg->n + 1, sizeof *unmatched_of);
    if (cursor == NULL || seen_tids == NULL || unmatched_of == NULL)
        bail("out of memory");
    memset(res, 0, sizeof *res);
    for (i = 0; i < t->ncalls; i++)
        res->trace_records += is_record(&t->calls[i]);
    for (i = 0; i < lg->n; i++) {
        const struct dlog_rec *r = &lg->r[i];
        const struct obs_call *c = NULL;
        unsigned kind = dlog_kind_of(r->kind), th = thread_of(t, r->tid);
        res->kernels += kind == OBS_KIND_KERNEL;
        res->copies += kind == OBS_KIND_MEMCPY;
        res->memsets += kind == OBS_KIND_MEMSET;
        res->syncs += kind == OBS_KIND_SYNC;
        res->graphs += kind == OBS_KIND_GRAPH;
        for (j = 0; j < res->threads && seen_tids[j] != r->tid; j++)
            ;
        if (j == res->threads)
            seen_tids[res->threads++] = r->tid;
        if (th < t->nthreads) {
            while (cursor[th] < t->ncalls &&
                   !(is_record(&t->calls[cursor[th]]) && t->calls[cursor[th]].thread == th))
                cursor[th]++;
            if (cursor[th] < t->ncalls)
                c = &t->calls[cursor[th]++];
        }
        if (c == NULL) {
            res->unmatched++;
            if (++unmatched_of[j] > res->unmatched_worst)
                res->unmatched_worst = unmatched_of[j];
            continue;
        }
        res->matched++;
        if (!same_call(t, r, c)) {
            res->bad++;
            if (shown++ < 5)
                diag("%s: log record %zu (tid %ld) %s %s %.80s stream %#llx bytes %s status %ld; trace %s %.80s "
                     "bytes %llu status %d",
                     label, i, r->tid, r->api, r->kind, r->name, r->stream, r->bytes, r->status, obs_api_name(c->api),
                     c->kernel ? t->kernels[c->kernel].mangled : "-", (unsigned long long)c->u.bytes, c->status);
        }
    }
    free(cursor);
    free(seen_tids);
    free(unmatched_of);
}
