/* Ranks side by side: see trace_ranks.h. The collectives are matched by
 * sorting every trace's (communicator hash, sequence number) keys together;
 * the steps by sorting each rank's (generation, step) sums together. */
#include "trace_ranks.h"
#include "trace_colls.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

long obs_trace_rank(const struct obs_trace *t)
{
    const char *v = obs_trace_meta(t, "rank");
    char *end;
    long r;
    if (v == NULL || v[0] < '0' || v[0] > '9')
        return -1;
    errno = 0;
    r = strtol(v, &end, 10);
    return errno == 0 && *end == '\0' && r <= INT_MAX ? r : -1;
}

static int same_text(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

/* One clock for all: the same boot id everywhere, or no boot id anywhere and one host. */
static int one_clock(const struct obs_trace *const *t, size_t n)
{
    const char *boot0 = obs_trace_meta(t[0], "boot_id"), *host0 = obs_trace_meta(t[0], "host");
    size_t i;
    for (i = 1; i < n; i++) {
        const char *boot = obs_trace_meta(t[i], "boot_id");
        if (boot0 != NULL || boot != NULL) {
            if (!same_text(boot0, boot))
                return 0;
        } else if (!same_text(host0, obs_trace_meta(t[i], "host"))) {
            return 0;
        }
    }
    return 1;
}

static void set_inputs(struct obs_ranks *r, const struct obs_trace *const *t, size_t n)
{
    int all_ranked = 1;
    size_t i;
    for (i = 0; i < n; i++)
        all_ranked &= obs_trace_rank(t[i]) >= 0;
    r->shared_clock = one_clock(t, n);
    r->gpu_time = n > 0;
    for (i = 0; i < n; i++) {
        struct obs_rank_input *in = &r->inputs[i];
        in->t = t[i];
        in->rank = all_ranked ? obs_trace_rank(t[i]) : (long)i;
        if (!r->shared_clock && t[i]->start_real_ns != 0 && t[0]->start_real_ns != 0)
            in->offset = (int64_t)((t[i]->start_real_ns - t[i]->start_mono_ns) -
                                   (t[0]->start_real_ns - t[0]->start_mono_ns));
        in->gpu_time = t[i]->ngpu > 0;
        r->gpu_time &= in->gpu_time;
    }
}

static uint64_t on_axis(const struct obs_rank_input *in, uint64_t ts)
{
    return (uint64_t)((int64_t)ts + in->offset);
}

/* The call that launched c's work: its group's ncclGroupEnd, or itself. */
static const struct obs_coll *launcher(const struct obs_trace *t, const struct obs_coll *c)
{
    return c->group_end != OBS_NONE ? &t->colls[c->group_end] : c;
}

/* A launching call's duration: the GPU span of its kernels when each has
 * one (gpu set), else its host span. */
static uint64_t launch_duration(const struct obs_trace *t, const struct obs_coll *l, int *gpu)
{
    uint64_t b = UINT64_MAX, e = 0;
    uint32_t i, timed = 0;
    for (i = 0; i < l->ncalls; i++) {
        const struct obs_call *c = &t->calls[t->coll_calls[l->calls_first + i]];
        if (c->kind != OBS_KIND_KERNEL || c->gpu == OBS_NONE)
            continue;
        timed++;
        b = t->gpu[c->gpu].begin < b ? t->gpu[c->gpu].begin : b;
        e = t->gpu[c->gpu].end > e ? t->gpu[c->gpu].end : e;
    }
    *gpu = l->kernels > 0 && timed == l->kernels && e >= b;
    if (*gpu)
        return e - b;
    return l->host_end > l->host_begin ? l->host_end - l->host_begin : 0;
}

/* ---- collectives -------------------------------------------------------------------------------- */

struct coll_key {
    uint64_t hash, arrive;
    uint32_t seq, input, coll;
};

static int cmp_coll_key(const void *x, const void *y)
{
    const struct coll_key *p = x, *q = y;
    if (p->hash != q->hash)
        return p->hash < q->hash ? -1 : 1;
    if (p->seq != q->seq)
        return p->seq < q->seq ? -1 : 1;
    if (p->arrive != q->arrive)
        return p->arrive < q->arrive ? -1 : 1;
    return p->input < q->input ? -1 : p->input > q->input;
}

static int cmp_rank_coll(const void *x, const void *y)
{
    const struct obs_rank_coll *p = x, *q = y;
    if (p->first_arrival != q->first_arrival)
        return p->first_arrival < q->first_arrival ? -1 : 1;
    if (p->hash != q->hash)
        return p->hash < q->hash ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static int is_p2p(unsigned op)
{
    return op == OBS_COLL_SEND || op == OBS_COLL_RECV;
}

/* Fill c from its parts (sorted by arrival). slot[input]: the first input
 * of its rank; seen[slot]: the last collective (index + 1) a part of that
 * rank was in, to count distinct ranks in one pass (one trace given twice
 * is one rank twice). */
static void finish_coll(struct obs_ranks *r, struct obs_rank_coll *c, const uint32_t *slot, uint32_t *seen)
{
    const struct obs_rank_part *p = &r->parts[c->parts_first];
    const struct obs_rank_input *in0 = &r->inputs[p[0].input];
    const struct obs_coll *first = &in0->t->colls[p[0].coll];
    const struct obs_comm *comm = obs_coll_comm(in0->t, first);
    uint32_t i, distinct = 0, mark = (uint32_t)(c - r->colls) + 1;
    c->op = first->op;
    c->p2p = (uint8_t)is_p2p(first->op);
    c->nranks = comm ? comm->nranks : -1;
    c->first_arrival = p[0].arrive;
    c->last_arrival = p[c->nparts - 1].arrive;
    c->skew_ns = c->last_arrival - c->first_arrival;
    c->first_rank = in0->rank;
    c->straggler_input = p[c->nparts - 1].input;
    c->straggler = r->inputs[c->straggler_input].rank;
    c->gpu = 1;
    for (i = 0; i < c->nparts; i++) {
        distinct += seen[slot[p[i].input]] != mark;
        seen[slot[p[i].input]] = mark;
        c->gpu &= p[i].gpu;
        if (p[i].dur_ns > c->duration_ns)
            c->duration_ns = p[i].dur_ns;
    }
    c->complete = distinct == c->nparts && (c->p2p ? c->nparts == 2 : c->nranks > 0 && c->nparts == (uint32_t)c->nranks);
    c->bytes = first->bytes;
    c->bus_factor = c->p2p ? 1.0 : obs_coll_bus_factor(c->op, c->nranks);
    if (c->duration_ns > 0) {
        c->algbw_gbs = (double)c->bytes / (double)c->duration_ns;
        c->busbw_gbs = c->algbw_gbs * c->bus_factor;
    }
    c->generation = c->step = UINT32_MAX;
    if (first->phase != OBS_NONE) {
        c->step = obs_phase_step(in0->t, first->phase);
        c->generation = c->step != UINT32_MAX ? in0->t->phases[first->phase].generation : UINT32_MAX;
    }
}

struct rank_at {
    long rank;
    uint32_t input;
};

static int cmp_rank_at(const void *x, const void *y)
{
    const struct rank_at *p = x, *q = y;
    if (p->rank != q->rank)
        return p->rank < q->rank ? -1 : 1;
    return p->input < q->input ? -1 : p->input > q->input;
}

/* slot[input] = the first input with its rank. 0, or -1 (out of memory). */
static int rank_slots(const struct obs_ranks *r, uint32_t *slot)
{
    struct rank_at *at = malloc((r->ninputs ? r->ninputs : 1) * sizeof *at);
    size_t i;
    if (at == NULL)
        return -1;
    for (i = 0; i < r->ninputs; i++)
        at[i] = (struct rank_at){r->inputs[i].rank, (uint32_t)i};
    if (r->ninputs > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(at, r->ninputs, sizeof *at, cmp_rank_at);
    for (i = 0; i < r->ninputs; i++)
        slot[at[i].input] = i > 0 && at[i - 1].rank == at[i].rank ? slot[at[i - 1].input] : at[i].input;
    free(at);
    return 0;
}

static int match_colls(struct obs_ranks *r)
{
    struct coll_key *keys;
    uint32_t *seen;
    size_t i, k, n = 0, s, e;
    for (i = 0; i < r->ninputs; i++)
        n += r->inputs[i].t->ncolls;
    keys = malloc((n ? n : 1) * sizeof *keys);
    seen = calloc(2 * r->ninputs, sizeof *seen); /* then the slots */
    r->parts = malloc((n ? n : 1) * sizeof *r->parts);
    r->colls = calloc(n ? n : 1, sizeof *r->colls);
    if (keys == NULL || seen == NULL || r->parts == NULL || r->colls == NULL || rank_slots(r, seen + r->ninputs) != 0) {
        free(keys);
        free(seen);
        return -1;
    }
    n = 0;
    for (i = 0; i < r->ninputs; i++) {
        struct obs_rank_input *in = &r->inputs[i];
        const struct obs_trace *t = in->t;
        for (k = 0; k < t->ncolls; k++) {
            const struct obs_coll *c = &t->colls[k];
            const struct obs_comm *comm = obs_coll_comm(t, c);
            if (!obs_coll_is_op(c->op) || c->seq == OBS_NO_SEQ || comm == NULL || comm->hash == 0)
                continue;
            keys[n].hash = comm->hash;
            keys[n].seq = c->seq;
            keys[n].arrive = on_axis(in, c->host_begin);
            keys[n].input = (uint32_t)i;
            keys[n].coll = (uint32_t)k;
            in->colls++;
            n++;
        }
    }
    if (n > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(keys, n, sizeof *keys, cmp_coll_key);
    for (s = 0; s < n; s = e) {
        struct obs_rank_coll *c = &r->colls[r->ncolls++];
        for (e = s; e < n && keys[e].hash == keys[s].hash && keys[e].seq == keys[s].seq; e++) {
            struct obs_rank_part *p = &r->parts[e];
            const struct obs_rank_input *in = &r->inputs[keys[e].input];
            const struct obs_coll *co = &in->t->colls[keys[e].coll];
            p->input = keys[e].input;
            p->coll = keys[e].coll;
            p->arrive = keys[e].arrive;
            p->end = on_axis(in, co->host_end);
            p->dur_ns = launch_duration(in->t, launcher(in->t, co), &p->gpu);
        }
        c->hash = keys[s].hash;
        c->seq = keys[s].seq;
        c->parts_first = s;
        c->nparts = (uint32_t)(e - s);
        finish_coll(r, c, seen + r->ninputs, seen);
    }
    r->nparts = n;
    free(keys);
    free(seen);
    for (i = 0; i < r->ncolls; i++) {
        const struct obs_rank_coll *c = &r->colls[i];
        const struct obs_rank_part *p = obs_rank_coll_parts(r, c);
        if (!c->complete) {
            r->unmatched += c->nparts;
            continue;
        }
        r->complete++;
        for (k = 0; k < c->nparts; k++) {
            r->inputs[p[k].input].matched++;
            r->inputs[p[k].input].comm_ns += p[k].dur_ns;
        }
        if (c->skew_ns > 0) {
            r->inputs[c->straggler_input].straggled++;
            r->inputs[c->straggler_input].skew_caused_ns += c->skew_ns;
        }
    }
    /* the parts stay where they are: only the collectives move */
    if (r->ncolls > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(r->colls, r->ncolls, sizeof *r->colls, cmp_rank_coll);
    return 0;
}

/* ---- steps -------------------------------------------------------------------------------------- */

/* One call's or launching collective's share of its step. */
struct step_item {
    uint64_t key; /* generation << 32 | step */
    uint64_t b, e;    /* its span (0, 0: none) */
    uint64_t comm_ns, compute_ns;
    uint32_t colls;
};

struct step_sum {
    uint64_t key;
    uint32_t input;
    struct obs_rank_step_cell cell;
};

static int cmp_u64_key(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static int cmp_step_sum(const void *x, const void *y)
{
    const struct step_sum *p = x, *q = y;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return p->input < q->input ? -1 : p->input > q->input;
}

static uint64_t step_key(const struct obs_trace *t, uint32_t phase)
{
    uint32_t step = obs_phase_step(t, phase);
    if (step == UINT32_MAX)
        return UINT64_MAX;
    return (uint64_t)t->phases[phase].generation << 32 | step;
}

/* The steps of one input summed into sums (appended at *nsums). */
static int rank_steps(const struct obs_rank_input *in, uint32_t input, struct step_sum **sums, size_t *nsums,
                      size_t *cap)
{
    const struct obs_trace *t = in->t;
    int gpu = in->gpu_time;
    uint8_t *in_coll = calloc(t->ncalls ? t->ncalls : 1, 1);
    struct step_item *it = malloc((t->ncalls + t->ncolls + 1) * sizeof *it);
    size_t i, k, n = 0, s, e;
    if (in_coll == NULL || it == NULL) {
        free(in_coll);
        free(it);
        return -1;
    }
    for (i = 0; i < t->ncolls; i++) {
        const struct obs_coll *c = &t->colls[i];
        uint64_t key = c->phase != OBS_NONE ? step_key(t, c->phase) : UINT64_MAX;
        int launches = (obs_coll_is_op(c->op) && c->group_end == OBS_NONE) ||
                       (c->op == OBS_COLL_GROUP_END && c->group <= 1 && c->ncalls > 0);
        for (k = 0; launches && k < c->ncalls; k++)
            in_coll[t->coll_calls[c->calls_first + k]] = 1;
        if (key == UINT64_MAX || (!launches && !obs_coll_is_op(c->op)))
            continue;
        memset(&it[n], 0, sizeof it[n]);
        it[n].key = key;
        it[n].colls = obs_coll_is_op(c->op);
        if (launches) {
            int timed;
            it[n].comm_ns = launch_duration(t, c, &timed);
            if (!gpu) {
                it[n].b = c->host_begin;
                it[n].e = c->host_end;
            }
        }
        n++;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t key = c->phase != OBS_NONE ? step_key(t, c->phase) : UINT64_MAX;
        if (key == UINT64_MAX || (gpu && c->gpu == OBS_NONE))
            continue;
        memset(&it[n], 0, sizeof it[n]);
        it[n].key = key;
        it[n].b = gpu ? t->gpu[c->gpu].begin : c->host_begin;
        it[n].e = gpu ? t->gpu[c->gpu].end : c->host_end;
        if (gpu && c->kind == OBS_KIND_KERNEL && !in_coll[i] && it[n].e > it[n].b)
            it[n].compute_ns = it[n].e - it[n].b;
        n++;
    }
    free(in_coll);
    /* the key first in each item: sort by it */
    if (n > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(it, n, sizeof *it, cmp_u64_key);
    for (s = 0; s < n; s = e) {
        struct obs_rank_step_cell cell = {1, 0, 0, 0, 0, 0};
        uint64_t b = UINT64_MAX, en = 0;
        for (e = s; e < n && it[e].key == it[s].key; e++) {
            if (it[e].e != 0 || it[e].b != 0) {
                b = it[e].b < b ? it[e].b : b;
                en = it[e].e > en ? it[e].e : en;
            }
            cell.comm_ns += it[e].comm_ns;
            cell.compute_ns += it[e].compute_ns;
            cell.colls += it[e].colls;
        }
        cell.step_ns = en > b ? en - b : 0;
        cell.begin = en > b ? on_axis(in, b) : 0;
        if (!gpu)
            cell.compute_ns = cell.step_ns > cell.comm_ns ? cell.step_ns - cell.comm_ns : 0;
        if (*nsums == *cap) {
            size_t ncap = *cap ? *cap * 2 : 64;
            struct step_sum *p = realloc(*sums, ncap * sizeof *p);
            if (p == NULL) {
                free(it);
                return -1;
            }
            *sums = p;
            *cap = ncap;
        }
        (*sums)[*nsums].key = it[s].key;
        (*sums)[*nsums].input = input;
        (*sums)[*nsums].cell = cell;
        (*nsums)++;
    }
    free(it);
    return 0;
}

static int build_steps(struct obs_ranks *r)
{
    struct step_sum *sums = NULL;
    size_t nsums = 0, cap = 0, i, s, e, nsteps = 0;
    for (i = 0; i < r->ninputs; i++)
        if (rank_steps(&r->inputs[i], (uint32_t)i, &sums, &nsums, &cap) != 0) {
            free(sums);
            return -1;
        }
    if (nsums > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(sums, nsums, sizeof *sums, cmp_step_sum);
    for (s = 0; s < nsums; s = e) {
        for (e = s; e < nsums && sums[e].key == sums[s].key; e++)
            ;
        nsteps++;
    }
    r->steps = calloc(nsteps ? nsteps : 1, sizeof *r->steps);
    if (r->steps == NULL) {
        free(sums);
        return -1;
    }
    for (s = 0; s < nsums; s = e) {
        struct obs_rank_step *st = &r->steps[r->nsteps];
        uint64_t longest = 0;
        st->cells = calloc(r->ninputs, sizeof *st->cells);
        if (st->cells == NULL) {
            free(sums);
            return -1;
        }
        r->nsteps++;
        st->generation = (uint32_t)(sums[s].key >> 32);
        st->step = (uint32_t)sums[s].key;
        st->gpu = 1;
        st->slowest_input = sums[s].input;
        for (e = s; e < nsums && sums[e].key == sums[s].key; e++) {
            st->cells[sums[e].input] = sums[e].cell;
            st->ranks++;
            st->gpu &= r->inputs[sums[e].input].gpu_time;
            if (sums[e].cell.step_ns > longest) {
                longest = sums[e].cell.step_ns;
                st->slowest_input = sums[e].input;
            }
        }
        st->slowest = r->inputs[st->slowest_input].rank;
    }
    free(sums);
    return 0;
}

int obs_ranks_build(const struct obs_trace *const *t, size_t n, struct obs_ranks *out)
{
    size_t i;
    memset(out, 0, sizeof *out);
    out->inputs = calloc(n ? n : 1, sizeof *out->inputs);
    if (out->inputs == NULL)
        return -1;
    out->ninputs = n;
    if (n == 0)
        return 0;
    set_inputs(out, t, n);
    out->axis0 = UINT64_MAX;
    for (i = 0; i < n; i++) {
        uint64_t first = on_axis(&out->inputs[i], t[i]->t_first ? t[i]->t_first : t[i]->start_mono_ns);
        out->axis0 = first < out->axis0 ? first : out->axis0;
    }
    if (match_colls(out) != 0 || build_steps(out) != 0) {
        obs_ranks_free(out);
        return -1;
    }
    return 0;
}

void obs_ranks_free(struct obs_ranks *r)
{
    size_t i;
    for (i = 0; i < r->nsteps; i++)
        free(r->steps[i].cells);
    free(r->steps);
    free(r->colls);
    free(r->parts);
    free(r->inputs);
    memset(r, 0, sizeof *r);
}

const char *obs_rank_coll_name(const struct obs_rank_coll *c)
{
    return c->p2p ? "SendRecv" : obs_coll_op_short(c->op);
}

const struct obs_rank_coll *obs_ranks_find(const struct obs_ranks *r, uint64_t hash, uint32_t seq)
{
    size_t i;
    for (i = 0; i < r->ncolls; i++)
        if (r->colls[i].hash == hash && r->colls[i].seq == seq)
            return &r->colls[i];
    return NULL;
}

static int cmp_by_skew(const void *x, const void *y, void *arg)
{
    const struct obs_ranks *r = arg;
    const struct obs_rank_coll *p = &r->colls[*(const uint32_t *)x], *q = &r->colls[*(const uint32_t *)y];
    if (p->skew_ns != q->skew_ns)
        return p->skew_ns > q->skew_ns ? -1 : 1;
    return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

uint32_t *obs_ranks_by_skew(const struct obs_ranks *r, int complete_only, size_t *n)
{
    uint32_t *order = malloc((r->ncolls ? r->ncolls : 1) * sizeof *order);
    size_t i, k = 0;
    if (order == NULL)
        return NULL;
    for (i = 0; i < r->ncolls; i++)
        if (!complete_only || r->colls[i].complete)
            order[k++] = (uint32_t)i;
    qsort_r(order, k, sizeof *order, cmp_by_skew, (void *)r);
    *n = k;
    return order;
}
