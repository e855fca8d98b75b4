/* The serving view: see trace_serving.h. The ranges are mapped to their
 * iterations once, then one pass over the calls in sequence order fills the
 * iterations and follows each thread's input copies and reads; the rows,
 * sessions and summaries come from the iterations. */
#include "trace_serving.h"
#include "trace_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLED_READ_MIN 4u /* a token id: int32 or int64 (the engine's TOKEN_READ_MIN) */
#define NO_UNIT UINT32_MAX

const char *obs_iteration_kind_name(unsigned kind)
{
    static const char *const names[] = {"unknown", "decode", "mixed", "prompt"};
    return kind < OBS_ITER_KINDS ? names[kind] : "unknown";
}

const char *obs_iteration_source_name(unsigned source)
{
    return source == OBS_ITER_FROM_PREFILL ? "prompt" : source == OBS_ITER_FROM_STEP ? "step" : "range";
}

void obs_serving_free(struct obs_serving_stats *s)
{
    free(s->rows);
    memset(s, 0, sizeof *s);
}

int obs_trace_has_iterations(const struct obs_trace *t)
{
    size_t i;
    for (i = 0; i < t->nphases; i++)
        if (t->phases[i].calls > t->phases[i].calls_taken && strcmp(t->phases[i].phase, OBS_SERVING_PHASE) == 0)
            return 1;
    return 0;
}

/* ---- which iteration a range's calls belong to ------------------------------------------ */

struct unit_key {
    uint32_t thread, generation, k;
    uint8_t source;
};

static int cmp_key(const struct unit_key *x, const struct unit_key *y)
{
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->generation != y->generation)
        return x->generation < y->generation ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

static int cmp_key_q(const void *a, const void *b)
{
    return cmp_key(a, b);
}

/* The iteration of range r: the ITERATION range it is in (itself or an
 * enclosing one); forced, else the PREFILL it is in, else its decode step.
 * Returns 0 when it is in none. */
static int range_key(const struct obs_trace *t, uint32_t r, int forced, struct unit_key *key)
{
    uint32_t q, depth;
    const struct obs_phase *p = &t->phases[r];
    int prefill = 0;
    key->thread = p->thread;
    key->generation = p->generation;
    for (q = r, depth = 0; q != OBS_NONE && q < t->nphases && depth <= 256; q = t->phases[q].parent, depth++) {
        if (strcmp(t->phases[q].phase, OBS_SERVING_PHASE) == 0) {
            key->source = OBS_ITER_FROM_RANGE;
            key->k = obs_phase_step(t, q);
            key->generation = t->phases[q].generation;
            return 1;
        }
        prefill |= strcmp(t->phases[q].phase, "PREFILL") == 0;
    }
    if (!forced)
        return 0;
    if (prefill) {
        key->source = OBS_ITER_FROM_PREFILL;
        key->k = 0;
        return 1;
    }
    key->k = obs_phase_step(t, r);
    key->source = OBS_ITER_FROM_STEP;
    return key->k != UINT32_MAX;
}

/* ---- the pass over the calls --------------------------------------------------------------- */

/* A call that returns only once the device's work is done (the engine's
 * delimiter, as trace_phases.c reads it). */
static int host_delimiter(const struct obs_call *c)
{
    const char *name = obs_api_name(c->api);
    unsigned dir = c->flags & OBS_CALL_DIR_MASK;
    if (c->kind == OBS_KIND_SYNC)
        return strstr(name, "WaitEvent") == NULL;
    if (c->kind == OBS_KIND_MEMCPY)
        return strstr(name, "Async") == NULL && (dir == OBS_DIR_DTOH || dir == OBS_DIR_DEFAULT);
    return 0;
}

static int is_launch(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_GRAPH || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET;
}

/* Per thread, as the calls go by. */
struct thread_state {
    uint64_t in_copies, in_bytes, in_first; /* host-to-device copies since the last launch or read */
    int launched;                           /* a kernel or graph launch since the last delimiter */
    int read_here;                          /* a sampled-ids read since the last delimiter */
    int unread_before;                      /* the host iteration before launched and read nothing */
};

struct unit {
    struct unit_key key;
    struct obs_iteration_row row;
    int launched;                   /* its first kernel or graph launch was seen */
    uint64_t gpu_b, gpu_e;
};

static void unit_call(struct unit *u, const struct obs_call *c, size_t seq, const struct obs_trace *t)
{
    struct obs_iteration_row *r = &u->row;
    const struct obs_gpu_time *g = obs_call_gpu(t, c);
    if (r->calls == 0) {
        r->first_seq = seq;
        r->host_begin = c->host_begin;
        r->host_end = c->host_end;
    }
    r->last_seq = seq;
    if (c->host_begin < r->host_begin)
        r->host_begin = c->host_begin;
    if (c->host_end > r->host_end)
        r->host_end = c->host_end;
    r->calls++;
    r->launches += is_launch(c->kind);
    r->kernels += c->kind == OBS_KIND_KERNEL;
    if (g != NULL) {
        if (!r->gpu_timed || g->begin < u->gpu_b)
            u->gpu_b = g->begin;
        if (!r->gpu_timed || g->end > u->gpu_e)
            u->gpu_e = g->end;
        r->gpu_timed = 1;
    }
}

static void pass_calls(const struct obs_trace *t, struct unit *units, const uint32_t *unit_of,
                       struct thread_state *ts)
{
    size_t i;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        struct thread_state *th;
        struct unit *u;
        unsigned dir = c->flags & OBS_CALL_DIR_MASK;
        if (c->thread >= t->nthreads)
            continue;
        th = &ts[c->thread];
        u = c->phase != OBS_NONE && c->phase < t->nphases && unit_of[c->phase] != NO_UNIT ? &units[unit_of[c->phase]]
                                                                                             : NULL;
        if (u != NULL)
            unit_call(u, c, i, t);
        if (c->kind == OBS_KIND_MEMCPY && dir == OBS_DIR_HTOD) {
            if (th->in_copies++ == 0)
                th->in_first = c->u.bytes;
            th->in_bytes += c->u.bytes;
        } else if (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) {
            if (u != NULL && !u->launched) {
                u->launched = 1;
                u->row.input_copies = th->in_copies;
                u->row.input_bytes = th->in_bytes;
                u->row.first_input_bytes = th->in_first;
                if (c->kind == OBS_KIND_KERNEL)
                    u->row.first_blocks = (uint64_t)c->u.grid.x * c->u.grid.y * c->u.grid.z;
            }
            th->in_copies = th->in_bytes = th->in_first = 0;
            th->launched = 1;
        } else if (c->kind == OBS_KIND_MEMCPY && dir == OBS_DIR_DTOH && c->u.bytes >= SAMPLED_READ_MIN &&
                   (th->launched || th->unread_before)) {
            if (u != NULL)
                u->row.read_bytes = c->u.bytes;
            th->in_copies = th->in_bytes = th->in_first = 0;
            th->read_here = 1;
            th->unread_before = 0;
        }
        if (host_delimiter(c)) {
            th->unread_before = th->launched && !th->read_here;
            th->launched = th->read_here = 0;
        }
    }
}

/* OBS_GPU_TIME=steps: each range span counts for its range's iteration. */
static void add_range_spans(const struct obs_trace *t, struct unit *units, const uint32_t *unit_of)
{
    size_t i;
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *x = &t->range_spans[i];
        struct unit *u;
        if (x->range == OBS_NONE || x->range >= t->nphases || unit_of[x->range] == NO_UNIT)
            continue;
        u = &units[unit_of[x->range]];
        if (!u->row.gpu_timed || x->begin < u->gpu_b)
            u->gpu_b = x->begin;
        if (!u->row.gpu_timed || x->end > u->gpu_e)
            u->gpu_e = x->end;
        u->row.gpu_timed = 1;
    }
}

/* ---- the rows: estimates, kinds, gaps ------------------------------------------------------- */

static int cmp_row(const void *a, const void *b)
{
    const struct obs_iteration_row *x = a, *y = b;
    if (x->thread_index != y->thread_index)
        return x->thread_index < y->thread_index ? -1 : 1;
    return x->first_seq < y->first_seq ? -1 : x->first_seq > y->first_seq;
}

static void estimate(struct obs_iteration_row *r, unsigned id_bytes)
{
    r->has_tokens = r->input_copies > 0 && r->first_input_bytes >= id_bytes && r->first_input_bytes % id_bytes == 0;
    r->tokens = r->has_tokens ? r->first_input_bytes / id_bytes : 0;
    r->tokens_from = !r->has_tokens ? "" : r->first_blocks == r->tokens ? "copy+grid" : "copy";
    r->has_sequences = r->read_bytes % id_bytes == 0;
    r->sequences = r->has_sequences ? r->read_bytes / id_bytes : 0;
}

/* prev: the session's iteration before, or NULL. */
static void classify(struct obs_iteration_row *r, const struct obs_iteration_row *prev)
{
    r->kind = OBS_ITER_UNKNOWN;
    r->kind_from = "";
    if (r->has_tokens && r->has_sequences) {
        r->kind_from = "stream";
        if (r->tokens == r->sequences)
            r->kind = OBS_ITER_DECODE;
        else if (r->tokens > r->sequences)
            r->kind = r->sequences == 0 || prev == NULL || (prev->has_sequences && prev->sequences == 0)
                          ? OBS_ITER_PROMPT
                          : OBS_ITER_MIXED;
        else
            r->kind_from = "";
    } else if (!r->has_tokens && r->source != OBS_ITER_FROM_RANGE) {
        r->kind = r->source == OBS_ITER_FROM_PREFILL ? OBS_ITER_PROMPT : OBS_ITER_DECODE;
        r->kind_from = "phase";
    }
}

/* Sessions: gaps, GPU idle, forced iterations numbered in their session. */
static void link_sessions(struct obs_serving_stats *s)
{
    size_t i, in_session = 0;
    uint32_t prev_thread = UINT32_MAX;
    for (i = 0; i < s->nrows; i++) {
        struct obs_iteration_row *r = &s->rows[i];
        const struct obs_iteration_row *p = i > 0 ? &s->rows[i - 1] : NULL;
        if (p != NULL && (p->thread_index != r->thread_index || p->generation != r->generation))
            p = NULL;
        if (r->thread_index != prev_thread)
            s->threads++;
        prev_thread = r->thread_index;
        if (p == NULL) {
            s->sessions++;
            in_session = 0;
        }
        if (r->source != OBS_ITER_FROM_RANGE)
            r->iteration = (uint32_t)in_session;
        in_session++;
        r->has_gap = p != NULL;
        r->gap_ns = p != NULL && r->host_begin > p->host_end ? r->host_begin - p->host_end : 0;
        r->has_gpu_idle = p != NULL && p->gpu_timed && r->gpu_timed;
        r->gpu_idle_ns = r->has_gpu_idle && r->gpu_begin > p->gpu_end ? r->gpu_begin - p->gpu_end : 0;
        classify(r, p);
    }
}

/* ---- summaries -------------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void spread(uint64_t *v, size_t n, struct obs_serving_spread *sp)
{
    size_t i;
    memset(sp, 0, sizeof *sp);
    qsort(v, n, sizeof *v, cmp_u64);
    sp->n = n;
    for (i = 0; i < n; i++)
        sp->total_ns += v[i];
    if (n == 0)
        return;
    sp->p50_ns = obs_percentile(v, n, 50.0);
    sp->p90_ns = obs_percentile(v, n, 90.0);
    sp->p99_ns = obs_percentile(v, n, 99.0);
    sp->max_ns = v[n - 1];
}

static int summarise(struct obs_serving_stats *s)
{
    uint64_t *v = malloc((s->nrows ? s->nrows : 1) * sizeof *v);
    uint64_t sb = 0, se = 0, gb = 0, ge = 0;
    size_t i, n, k;
    int gpu_open = 0;
    if (v == NULL)
        return -1;
    for (k = 0; k <= OBS_ITER_KINDS; k++) {
        for (i = n = 0; i < s->nrows; i++)
            if (k == OBS_ITER_KINDS || s->rows[i].kind == k)
                v[n++] = s->rows[i].host_end - s->rows[i].host_begin;
        spread(v, n, &s->host[k]);
        if (k < OBS_ITER_KINDS)
            s->by_kind[k] = n;
        for (i = n = 0; i < s->nrows; i++)
            if ((k == OBS_ITER_KINDS || s->rows[i].kind == k) && s->rows[i].gpu_timed)
                v[n++] = s->rows[i].gpu_end - s->rows[i].gpu_begin;
        spread(v, n, &s->gpu[k]);
    }
    for (i = n = 0; i < s->nrows; i++)
        if (s->rows[i].has_gap)
            v[n++] = s->rows[i].gap_ns;
    spread(v, n, &s->gaps);
    for (i = n = 0; i < s->nrows; i++)
        if (s->rows[i].has_gpu_idle)
            v[n++] = s->rows[i].gpu_idle_ns;
    spread(v, n, &s->gpu_idle);
    s->has_gpu_idle = n > 0;
    /* wall times: per session, first begin to last end */
    for (i = 0; i < s->nrows; i++) {
        const struct obs_iteration_row *r = &s->rows[i];
        if (!r->has_gap) { /* a session's first iteration */
            s->wall_ns += se - sb;
            s->gpu_wall_ns += gpu_open ? ge - gb : 0;
            sb = r->host_begin;
            se = r->host_end;
            gpu_open = 0;
        }
        if (r->host_end > se)
            se = r->host_end;
        if (r->gpu_timed) {
            if (!gpu_open || r->gpu_begin < gb)
                gb = r->gpu_begin;
            if (!gpu_open || r->gpu_end > ge)
                ge = r->gpu_end;
            gpu_open = 1;
        }
        if (r->has_tokens) {
            s->tokens += r->tokens;
            s->rows_with_tokens++;
        }
        if (r->has_sequences) {
            s->sequences += r->sequences;
            s->rows_with_sequences++;
        }
    }
    s->wall_ns += se - sb;
    s->gpu_wall_ns += gpu_open ? ge - gb : 0;
    s->gap_share = s->wall_ns ? (double)s->gaps.total_ns / (double)s->wall_ns : 0.0;
    s->gpu_idle_share = s->gpu_wall_ns ? (double)s->gpu_idle.total_ns / (double)s->gpu_wall_ns : 0.0;
    s->has_tokens_per_s = s->nrows > 0 && s->rows_with_tokens == s->nrows && s->wall_ns > 0;
    s->tokens_per_s = s->has_tokens_per_s ? (double)s->tokens * 1e9 / (double)s->wall_ns : 0.0;
    s->has_generated_per_s = s->nrows > 0 && s->rows_with_sequences == s->nrows && s->wall_ns > 0;
    s->generated_per_s = s->has_generated_per_s ? (double)s->sequences * 1e9 / (double)s->wall_ns : 0.0;
    free(v);
    return 0;
}

/* ---- obs_serving_compute ----------------------------------------------------------------------- */

/* The iterations of the ranges (sorted unique keys) and each range's. */
static int map_ranges(const struct obs_trace *t, int forced, struct unit **units_out, size_t *nunits,
                      uint32_t **unit_of_out)
{
    struct unit_key *keys = malloc((t->nphases ? t->nphases : 1) * sizeof *keys);
    uint8_t *has = calloc(t->nphases ? t->nphases : 1, 1);
    uint32_t *unit_of = malloc((t->nphases ? t->nphases : 1) * sizeof *unit_of);
    struct unit *units = NULL;
    size_t i, n = 0, k = 0;
    if (keys == NULL || has == NULL || unit_of == NULL)
        goto fail;
    for (i = 0; i < t->nphases; i++) {
        has[i] = (uint8_t)range_key(t, (uint32_t)i, forced, &keys[n]);
        n += has[i];
    }
    qsort(keys, n, sizeof *keys, cmp_key_q);
    for (i = 0; i < n; i++)
        if (k == 0 || cmp_key(&keys[k - 1], &keys[i]) != 0)
            keys[k++] = keys[i];
    units = calloc(k ? k : 1, sizeof *units);
    if (units == NULL)
        goto fail;
    for (i = 0; i < k; i++)
        units[i].key = keys[i];
    for (i = 0; i < t->nphases; i++) {
        struct unit_key key;
        size_t lo = 0, hi = k;
        unit_of[i] = NO_UNIT;
        if (!has[i])
            continue;
        range_key(t, (uint32_t)i, forced, &key);
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_key(&keys[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        unit_of[i] = (uint32_t)lo;
    }
    free(keys);
    free(has);
    *units_out = units;
    *nunits = k;
    *unit_of_out = unit_of;
    return 0;
fail:
    free(keys);
    free(has);
    free(unit_of);
    free(units);
    return -1;
}

int obs_serving_compute(const struct obs_trace *t, const struct obs_serving_options *opt, struct obs_serving_stats *s)
{
    struct unit *units = NULL;
    uint32_t *unit_of = NULL;
    struct thread_state *ts = NULL;
    size_t nunits = 0, i;
    int rc = -1;

    memset(s, 0, sizeof *s);
    s->forced = opt && opt->forced;
    s->id_bytes = opt && opt->id_bytes ? opt->id_bytes : 4;
    s->gpu_steps = t->ngpu == 0 && t->nrange_spans > 0;
    s->gpu_time = t->ngpu > 0 || s->gpu_steps;
    if (map_ranges(t, s->forced, &units, &nunits, &unit_of) != 0)
        return -1;
    ts = calloc(t->nthreads ? t->nthreads : 1, sizeof *ts);
    s->rows = malloc((nunits ? nunits : 1) * sizeof *s->rows);
    if (ts == NULL || s->rows == NULL)
        goto out;
    pass_calls(t, units, unit_of, ts);
    if (s->gpu_steps)
        add_range_spans(t, units, unit_of);
    for (i = 0; i < nunits; i++) {
        struct unit *u = &units[i];
        struct obs_iteration_row *r = &u->row;
        if (r->calls == 0 || u->key.thread >= t->nthreads)
            continue;
        r->thread_index = u->key.thread;
        r->thread = t->threads[u->key.thread].tid;
        r->generation = u->key.generation;
        r->source = u->key.source;
        r->iteration = u->key.k;
        r->step = u->key.source == OBS_ITER_FROM_STEP ? u->key.k : UINT32_MAX;
        r->gpu_begin = r->gpu_timed ? u->gpu_b : 0;
        r->gpu_end = r->gpu_timed ? u->gpu_e : 0;
        estimate(r, s->id_bytes);
        s->ranges += r->source == OBS_ITER_FROM_RANGE;
        s->rows[s->nrows++] = *r;
    }
    qsort(s->rows, s->nrows, sizeof *s->rows, cmp_row);
    link_sessions(s);
    if (summarise(s) != 0)
        goto out;
    rc = 0;
out:
    free(units);
    free(unit_of);
    free(ts);
    if (rc != 0) {
        obs_serving_free(s);
        errno = ENOMEM;
    }
    return rc;
}
