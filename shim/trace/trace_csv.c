/* CSV export: see trace_csv.h. Rows are formatted straight into a large
 * buffer (no printf per field, no memcpy call per string: every text is
 * prepared once, with slack for obs_put_padded): this runs over millions of
 * calls. */
#include "trace_csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_colls.h"
#include "trace_outbuf.h"
#include "trace_progress.h"

struct csv_text {
    char *s;
    size_t len;
};

/* s as one CSV field (quoted when it holds a comma, quote or line break),
 * cut at OBS_OUTBUF_MAX_STRING bytes. */
static int csv_field(struct csv_text *out, const char *s)
{
    size_t n = s ? strlen(s) : 0, i, k = 0;
    int quote = 0;
    if (n > OBS_OUTBUF_MAX_STRING)
        n = OBS_OUTBUF_MAX_STRING;
    for (i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
            quote = 1;
    out->s = malloc(2 * n + 3 + OBS_TEXT_SLACK);
    if (out->s == NULL)
        return -1;
    if (quote)
        out->s[k++] = '"';
    for (i = 0; i < n; i++) {
        if (s[i] == '"')
            out->s[k++] = '"';
        out->s[k++] = s[i];
    }
    if (quote)
        out->s[k++] = '"';
    out->len = k;
    return 0;
}

static void free_texts(struct csv_text *a, size_t n)
{
    size_t i;
    if (a == NULL)
        return;
    for (i = 0; i < n; i++)
        free(a[i].s);
    free(a);
}

/* "api,kind," for every api value, and for out-of-range ones. */
static int build_api_prefixes(struct csv_text *a)
{
    unsigned api;
    for (api = 0; api <= OBS_API_COUNT; api++) {
        const char *name = obs_api_name(api), *kind = obs_call_kind_name(obs_api_kind(api));
        size_t n = strlen(name) + strlen(kind) + 2;
        a[api].s = malloc(n + 1 + OBS_TEXT_SLACK);
        if (a[api].s == NULL)
            return -1;
        snprintf(a[api].s, n + 1, "%s,%s,", name, kind);
        a[api].len = n;
    }
    return 0;
}

static int kind_has_bytes(unsigned kind)
{
    return kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_ALLOC ||
           kind == OBS_KIND_GRAPH;
}

int obs_report_csv(const struct obs_trace *t, FILE *out)
{
    struct csv_text api_prefix[OBS_API_COUNT + 1], directions[OBS_DIR_COUNT + 1];
    struct csv_text *names = NULL, *phases = NULL;
    struct obs_outbuf ob;
    size_t i, nphases = t->nphases;
    int rc = -1, saved;

    memset(api_prefix, 0, sizeof api_prefix);
    memset(directions, 0, sizeof directions);
    names = calloc(t->nkernels ? t->nkernels : 1, sizeof *names);
    phases = calloc(nphases ? nphases : 1, sizeof *phases);
    if (names == NULL || phases == NULL || build_api_prefixes(api_prefix) != 0)
        goto out;
    for (i = 0; i < t->nkernels; i++)
        if (csv_field(&names[i], t->kernels[i].demangled) != 0)
            goto out;
    for (i = 0; i <= OBS_DIR_COUNT; i++)
        if (csv_field(&directions[i], obs_direction_name((unsigned)i)) != 0)
            goto out;
    for (i = 0; i < nphases; i++)
        if (csv_field(&phases[i], t->phases[i].phase) != 0)
            goto out;
    if (obs_outbuf_init(&ob, out) != 0)
        goto out;

    obs_outbuf_puts(&ob, OBS_CSV_HEADER "\n");
    for (i = 0; i < t->ncalls; obs_progress_tick(++i, t->ncalls)) {
        const struct obs_call *c = &t->calls[i];
        const struct csv_text *api = &api_prefix[c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT];
        const struct csv_text *name = &names[c->kernel];
        const struct csv_text *phase = c->phase != OBS_NONE ? &phases[c->phase] : NULL;
        unsigned dir = obs_call_direction(c);
        char *p = obs_outbuf_reserve(&ob, 400 + name->len + (phase ? phase->len : 0));

        p = obs_fmt_u64(p, i);
        *p++ = ',';
        p = obs_fmt_u64(p, t->threads[c->thread].tid);
        *p++ = ',';
        p = obs_put_padded(p, api->s, api->len);
        p = obs_put_padded(p, name->s, name->len);
        *p++ = ',';
        p = obs_fmt_u64(p, c->stream);
        *p++ = ',';
        if (c->kind == OBS_KIND_KERNEL) {
            p = obs_fmt_u64(p, c->u.grid.x);
            *p++ = ',';
            p = obs_fmt_u64(p, c->u.grid.y);
            *p++ = ',';
            p = obs_fmt_u64(p, c->u.grid.z);
            *p++ = ',';
            p = obs_fmt_u64(p, c->block_x);
            *p++ = ',';
            p = obs_fmt_u64(p, c->block_y);
            *p++ = ',';
            p = obs_fmt_u64(p, c->block_z);
            *p++ = ',';
            p = obs_fmt_u64(p, c->shmem);
            *p++ = ',';
        } else {
            p = OBS_PUT_LIT(p, ",,,,,,,");
        }
        if (kind_has_bytes(c->kind))
            p = obs_fmt_u64(p, c->u.bytes);
        *p++ = ',';
        if (dir != OBS_DIR_NONE)
            p = obs_put_padded(p, directions[dir < OBS_DIR_COUNT ? dir : OBS_DIR_COUNT].s,
                               directions[dir < OBS_DIR_COUNT ? dir : OBS_DIR_COUNT].len);
        *p++ = ',';
        p = obs_fmt_u64(p, c->host_begin);
        *p++ = ',';
        p = obs_fmt_u64(p, c->host_end);
        *p++ = ',';
        if (c->gpu != OBS_NONE) {
            p = obs_fmt_u64(p, t->gpu[c->gpu].begin);
            *p++ = ',';
            p = obs_fmt_u64(p, t->gpu[c->gpu].end);
            *p++ = ',';
        } else {
            p = OBS_PUT_LIT(p, ",,");
        }
        p = obs_fmt_i64(p, c->status);
        *p++ = ',';
        if (phase) {
            uint32_t step = obs_phase_step(t, c->phase);
            p = obs_put_padded(p, phase->s, phase->len);
            *p++ = ',';
            if (step != UINT32_MAX)
                p = obs_fmt_u64(p, step);
        } else {
            *p++ = ',';
        }
        *p++ = ',';
        if (c->layer != OBS_NO_LAYER)
            p = obs_fmt_u64(p, c->layer);
        *p++ = ',';
        if (phase) {
            p = obs_fmt_u64(p, t->phases[c->phase].generation);
            *p++ = ',';
            p = obs_fmt_u64(p, c->phase);
        } else {
            *p++ = ',';
        }
        *p++ = '\n';
        obs_outbuf_commit(&ob, p);
    }
    rc = obs_outbuf_finish(&ob);
out:
    saved = errno;
    free_texts(names, t->nkernels);
    free_texts(phases, nphases);
    for (i = 0; i <= OBS_API_COUNT; i++)
        free(api_prefix[i].s);
    for (i = 0; i <= OBS_DIR_COUNT; i++)
        free(directions[i].s);
    if (rc != 0 && saved == 0)
        saved = ENOMEM;
    errno = saved;
    return rc;
}

/* ---- the NCCL calls ------------------------------------------------------------------------- */

static void put_hash(FILE *out, uint64_t hash)
{
    fprintf(out, "%016llx,", (unsigned long long)hash);
}

static void put_label(FILE *out, const struct obs_trace *t, uint32_t phase, uint32_t layer)
{
    uint32_t step = obs_phase_step(t, phase);
    struct csv_text ph = {NULL, 0};
    if (phase != OBS_NONE && csv_field(&ph, t->phases[phase].phase) == 0)
        fwrite(ph.s, 1, ph.len, out);
    free(ph.s);
    fputc(',', out);
    if (step != UINT32_MAX)
        fprintf(out, "%u", step);
    fputc(',', out);
    if (layer != OBS_NO_LAYER)
        fprintf(out, "%u", layer);
    fputc('\n', out);
}

int obs_report_csv_collectives(const struct obs_trace *t, FILE *out)
{
    size_t i = 0, k = 0;
    errno = 0;
    fputs(OBS_CSV_COLL_HEADER "\n", out);
    while (i < t->ncolls || k < t->ncomms) { /* both in time order: merged */
        int coll = k == t->ncomms || (i < t->ncolls && t->colls[i].host_begin <= t->comms[k].host_begin);
        if (coll) {
            const struct obs_coll *c = &t->colls[i++];
            const struct obs_comm *comm = obs_coll_comm(t, c);
            fprintf(out, "%u,%s,coll,", t->threads[c->thread].tid, obs_coll_op_name(c->op));
            if (comm)
                put_hash(out, comm->hash), fprintf(out, "%d,%d,", comm->rank, comm->nranks);
            else
                fputs(",,,", out);
            if (c->seq != OBS_NO_SEQ)
                fprintf(out, "%u", c->seq);
            fputc(',', out);
            if (obs_coll_is_op(c->op))
                fprintf(out, "%llu,%s,%llu,", (unsigned long long)c->count, obs_nccl_type_name(c->datatype),
                        (unsigned long long)c->bytes);
            else
                fputs(",,,", out);
            fprintf(out, "%s,", obs_nccl_redop_name(c->redop));
            if (c->peer >= 0)
                fprintf(out, "%d", c->peer);
            fprintf(out, ",%u,%u,%u,%u,%llu,%llu,%d,", c->stream, c->group, c->ncalls, c->kernels,
                    (unsigned long long)c->host_begin, (unsigned long long)c->host_end, (int)c->status);
            put_label(out, t, c->phase, c->layer);
        } else {
            const struct obs_comm *c = &t->comms[k++];
            fprintf(out, "%u,%s,comm,", t->threads[c->thread].tid, obs_comm_event_name(c->event));
            if (c->id != 0)
                put_hash(out, c->hash);
            else
                fputc(',', out);
            fprintf(out, "%d,%d,,,,,,,,,,,", c->rank, c->nranks);
            fprintf(out, "%llu,%llu,%d,", (unsigned long long)c->host_begin, (unsigned long long)c->host_end,
                    (int)c->status);
            put_label(out, t, OBS_NONE, OBS_NO_LAYER);
        }
    }
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

/* ---- the phase ranges ----------------------------------------------------------------------- */

static int put_csv_text(FILE *out, const char *s)
{
    struct csv_text f = {NULL, 0};
    if (csv_field(&f, s) != 0)
        return -1;
    fwrite(f.s, 1, f.len, out);
    free(f.s);
    return 0;
}

int obs_report_csv_phases(const struct obs_trace *t, FILE *out)
{
    size_t i;
    errno = 0;
    fputs(OBS_CSV_PHASE_HEADER "\n", out);
    for (i = 0; i < t->nphases; i++) {
        const struct obs_phase *p = &t->phases[i];
        uint32_t step = obs_phase_step(t, (uint32_t)i);
        fprintf(out, "%zu,%u,", i, t->threads[p->thread].tid);
        if (put_csv_text(out, p->name) != 0)
            return -1;
        fputc(',', out);
        if (put_csv_text(out, p->phase) != 0)
            return -1;
        fputc(',', out);
        if (step != UINT32_MAX)
            fprintf(out, "%u", step);
        fprintf(out, ",%u,%u,", p->generation, p->depth);
        if (p->parent != OBS_NONE)
            fprintf(out, "%u", p->parent);
        fprintf(out, ",%d,%d,%llu,%llu,%llu\n", p->relabel, p->relabel ? 1 : p->ended,
                (unsigned long long)p->begin, (unsigned long long)p->end, (unsigned long long)p->calls);
    }
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}
