/* NCCL collectives in the trace model: see trace_colls.h. */
#include "trace_colls.h"
#include "trace_colls_build.h"

#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {
    [OBS_COLL_INVALID] = "unknown",
#define OBS_COLL_NAME(id, name, bus) [OBS_COLL_##id] = name,
    OBS_COLL_OP_LIST(OBS_COLL_NAME)
#undef OBS_COLL_NAME
};

static const unsigned char op_bus[] = {
    [OBS_COLL_INVALID] = OBS_BUS_NONE,
#define OBS_COLL_BUS(id, name, bus) [OBS_COLL_##id] = bus,
    OBS_COLL_OP_LIST(OBS_COLL_BUS)
#undef OBS_COLL_BUS
};

static const char *const event_names[] = {
    [OBS_COMM_INVALID] = "unknown",
#define OBS_COMM_NAME(id, name) [OBS_COMM_##id] = name,
    OBS_COMM_EVENT_LIST(OBS_COMM_NAME)
#undef OBS_COMM_NAME
};

static const char *const type_names[OBS_NCCL_TYPES] = {
#define OBS_TYPE_NAME(value, name, bytes) [value] = name,
    OBS_NCCL_TYPE_LIST(OBS_TYPE_NAME)
#undef OBS_TYPE_NAME
};

static const unsigned char type_bytes[OBS_NCCL_TYPES] = {
#define OBS_TYPE_BYTES(value, name, bytes) [value] = bytes,
    OBS_NCCL_TYPE_LIST(OBS_TYPE_BYTES)
#undef OBS_TYPE_BYTES
};

static const char *const redop_names[OBS_NCCL_REDOPS] = {
#define OBS_REDOP_NAME(value, name) [value] = name,
    OBS_NCCL_REDOP_LIST(OBS_REDOP_NAME)
#undef OBS_REDOP_NAME
};

const char *obs_coll_op_name(unsigned op)
{
    return op < OBS_COLL_COUNT ? op_names[op] : "unknown";
}

const char *obs_coll_op_short(unsigned op)
{
    const char *name = obs_coll_op_name(op);
    return strncmp(name, "nccl", 4) == 0 ? name + 4 : name;
}

int obs_coll_is_op(unsigned op)
{
    return op > OBS_COLL_INVALID && op < OBS_COLL_COUNT && op != OBS_COLL_GROUP_START && op != OBS_COLL_GROUP_END;
}

const char *obs_comm_event_name(unsigned event)
{
    return event < OBS_COMM_COUNT ? event_names[event] : "unknown";
}

int obs_comm_event_makes(unsigned event)
{
    return event == OBS_COMM_INIT_RANK || event == OBS_COMM_INIT_RANK_CONFIG || event == OBS_COMM_INIT_RANK_SCALABLE ||
           event == OBS_COMM_INIT_ALL || event == OBS_COMM_SPLIT;
}

const char *obs_nccl_type_name(unsigned datatype)
{
    if (datatype == OBS_NCCL_NO_TYPE)
        return "";
    return datatype < OBS_NCCL_TYPES ? type_names[datatype] : "unknown";
}

unsigned obs_nccl_type_bytes(unsigned datatype)
{
    return datatype < OBS_NCCL_TYPES ? type_bytes[datatype] : 0;
}

const char *obs_nccl_redop_name(unsigned redop)
{
    if (redop < OBS_NCCL_REDOPS)
        return redop_names[redop];
    return redop == OBS_NCCL_REDOP_CUSTOM ? "custom" : "";
}

static int times_ranks(unsigned op)
{
    return op == OBS_COLL_ALL_GATHER || op == OBS_COLL_REDUCE_SCATTER || op == OBS_COLL_ALL_TO_ALL ||
           op == OBS_COLL_GATHER || op == OBS_COLL_SCATTER;
}

uint64_t obs_coll_bytes(unsigned op, unsigned datatype, uint64_t count, int32_t nranks)
{
    uint64_t size = obs_nccl_type_bytes(datatype), n = nranks > 1 ? (uint64_t)nranks : 1, bytes;
    if (!obs_coll_is_op(op) || size == 0)
        return 0;
    if (count > UINT64_MAX / size)
        return UINT64_MAX; /* a damaged count: saturate */
    bytes = count * size;
    if (times_ranks(op))
        bytes = bytes > UINT64_MAX / n ? UINT64_MAX : bytes * n;
    return bytes;
}

double obs_coll_bus_factor(unsigned op, int32_t nranks)
{
    double n = nranks;
    if (op >= OBS_COLL_COUNT || nranks < 1)
        return 0;
    switch (op_bus[op]) {
    case OBS_BUS_ONE:
        return 1;
    case OBS_BUS_N1_N:
        return (n - 1) / n;
    case OBS_BUS_2N1_N:
        return 2 * (n - 1) / n;
    }
    return 0;
}

/* ---- building the model ----------------------------------------------------------------- */

static uint64_t record_end(uint64_t begin, uint32_t dur, int in_us)
{
    uint64_t d = in_us ? (uint64_t)dur * 1000u : dur;
    return begin > UINT64_MAX - d ? UINT64_MAX : begin + d;
}

/* (thread, index) order, and (begin, thread, index) order. */
struct order_key {
    uint64_t a, b, c;
    uint32_t pos;
};

static int cmp_key(const void *x, const void *y)
{
    const struct order_key *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    if (p->c != q->c)
        return p->c < q->c ? -1 : 1;
    return p->pos < q->pos ? -1 : p->pos > q->pos;
}

/* Sort n items of size bytes in array by (begin, thread, index) given in
 * keys; map[old position] = new position. */
static int sort_by_time(void *array, size_t n, size_t size, struct order_key *keys, uint32_t *map)
{
    char *copy = malloc(n > 0 ? n * size : 1);
    size_t i;
    if (copy == NULL)
        return -1;
    qsort(keys, n, sizeof *keys, cmp_key);
    memcpy(copy, array, n * size);
    for (i = 0; i < n; i++) {
        memcpy((char *)array + i * size, copy + (size_t)keys[i].pos * size, size);
        map[keys[i].pos] = (uint32_t)i;
    }
    free(copy);
    return 0;
}

struct id_entry {
    uint32_t id, comm;
};

static int cmp_id(const void *x, const void *y)
{
    const struct id_entry *p = x, *q = y;
    if (p->id != q->id)
        return p->id < q->id ? -1 : 1;
    return p->comm < q->comm ? -1 : p->comm > q->comm;
}

/* The comm index that made id (the last such record in time order), else OBS_NONE. */
static uint32_t made_by(const struct id_entry *ids, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    if (id == 0)
        return OBS_NONE;
    while (lo < hi) { /* the first entry past id */
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid].id <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && ids[lo - 1].id == id ? ids[lo - 1].comm : OBS_NONE;
}

/* The calls by (thread, per-thread index): seqs. */
struct call_at {
    uint64_t index;
    uint32_t thread;
    uint32_t pad;
    size_t seq;
};

static int cmp_call_at(const void *x, const void *y)
{
    const struct call_at *p = x, *q = y;
    if (p->thread != q->thread)
        return p->thread < q->thread ? -1 : 1;
    if (p->index != q->index)
        return p->index < q->index ? -1 : 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* The first entry at or after (thread, index). */
static size_t call_lower_bound(const struct call_at *a, size_t n, uint32_t thread, uint64_t index)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid].thread < thread || (a[mid].thread == thread && a[mid].index < index))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int build_comms(struct obs_trace *t, const struct obs_nccl_raw *raw, size_t n, uint32_t **parent_ids)
{
    struct order_key *keys;
    uint32_t *map, *pids;
    size_t i, k = 0;

    for (i = 0; i < n; i++)
        if (raw[i].rec.type == OBS_REC_COMM)
            k++;
    t->comms = calloc(k ? k : 1, sizeof *t->comms);
    keys = calloc(k ? k : 1, sizeof *keys);
    map = calloc(k ? k : 1, sizeof *map);
    pids = calloc(k ? k : 1, sizeof *pids);
    *parent_ids = pids;
    if (t->comms == NULL || keys == NULL || map == NULL || pids == NULL) {
        free(keys);
        free(map);
        return -1;
    }
    for (i = 0; i < n; i++) {
        const struct obs_rec_comm *r = &raw[i].rec.comm;
        struct obs_comm *c;
        if (raw[i].rec.type != OBS_REC_COMM)
            continue;
        if (r->event == OBS_COMM_INVALID || r->event >= OBS_COMM_COUNT) {
            t->bad_coll_records++;
            continue;
        }
        c = &t->comms[t->ncomms];
        c->host_begin = r->t_begin;
        c->host_end = record_end(r->t_begin, r->t_dur, r->flags & OBS_COMM_DUR_US);
        c->hash = r->hash;
        c->index = raw[i].index;
        c->thread = raw[i].thread;
        c->id = r->comm;
        c->made = OBS_NONE;
        c->parent = OBS_NONE;
        c->status = r->status;
        c->rank = r->rank;
        c->nranks = r->nranks;
        c->color = r->color;
        c->event = r->event;
        pids[t->ncomms] = r->parent;
        keys[t->ncomms].a = c->host_begin;
        keys[t->ncomms].b = c->thread;
        keys[t->ncomms].c = c->index;
        keys[t->ncomms].pos = (uint32_t)t->ncomms;
        t->ncomms++;
    }
    if (sort_by_time(t->comms, t->ncomms, sizeof *t->comms, keys, map) != 0) {
        free(keys);
        free(map);
        return -1;
    }
    /* the parent ids follow their records */
    for (i = 0; i < t->ncomms; i++)
        keys[i].a = pids[keys[i].pos];
    for (i = 0; i < t->ncomms; i++)
        pids[i] = (uint32_t)keys[i].a;
    free(keys);
    free(map);
    return 0;
}

int obs_trace_build_nccl(struct obs_trace *t, const struct obs_nccl_raw *raw, size_t n)
{
    struct id_entry *ids = NULL;
    struct order_key *keys = NULL;
    struct call_at *calls = NULL;
    uint32_t *map = NULL, *parent_ids = NULL, *by_thread = NULL, *pending = NULL;
    size_t i, k, nids = 0, npending = 0, ncolls = 0, cap = 0;
    int rc = -1;

    if (build_comms(t, raw, n, &parent_ids) != 0)
        goto out;
    ids = calloc(t->ncomms ? t->ncomms : 1, sizeof *ids);
    if (ids == NULL)
        goto out;
    for (i = 0; i < t->ncomms; i++)
        if (obs_comm_event_makes(t->comms[i].event) && t->comms[i].id != 0) {
            ids[nids].id = t->comms[i].id;
            ids[nids].comm = (uint32_t)i;
            nids++;
        }
    qsort(ids, nids, sizeof *ids, cmp_id);
    for (i = 0; i < t->ncomms; i++) {
        t->comms[i].made = made_by(ids, nids, t->comms[i].id);
        if (t->comms[i].event == OBS_COMM_SPLIT)
            t->comms[i].parent = made_by(ids, nids, parent_ids[i]);
    }

    /* the collectives, in time order */
    for (i = 0; i < n; i++)
        if (raw[i].rec.type == OBS_REC_COLL)
            ncolls++;
    t->colls = calloc(ncolls ? ncolls : 1, sizeof *t->colls);
    keys = calloc(ncolls ? ncolls : 1, sizeof *keys);
    map = calloc(ncolls ? ncolls : 1, sizeof *map);
    if (t->colls == NULL || keys == NULL || map == NULL)
        goto out;
    for (i = 0; i < n; i++) {
        const struct obs_rec_coll *r = &raw[i].rec.coll;
        struct obs_coll *c;
        const struct obs_comm *comm;
        if (raw[i].rec.type != OBS_REC_COLL)
            continue;
        if (r->op == OBS_COLL_INVALID || r->op >= OBS_COLL_COUNT) {
            t->bad_coll_records++;
            continue;
        }
        c = &t->colls[t->ncolls];
        c->host_begin = r->t_begin;
        c->host_end = record_end(r->t_begin, r->t_dur, r->flags & OBS_COLL_DUR_US);
        c->index = raw[i].index;
        c->count = r->count;
        c->thread = raw[i].thread;
        c->stream = r->stream;
        c->comm_id = r->comm;
        c->comm = made_by(ids, nids, r->comm);
        c->seq = r->seq;
        c->group_end = OBS_NONE;
        c->phase = OBS_NONE;
        c->layer = OBS_NO_LAYER;
        c->status = r->status;
        c->peer = r->peer;
        c->op = r->op;
        c->datatype = r->datatype;
        c->redop = r->redop;
        c->group = r->group;
        c->flags = r->flags;
        c->ncalls = r->nested; /* for now: the records inside it */
        comm = obs_coll_comm(t, c);
        c->bytes = obs_coll_bytes(c->op, c->datatype, c->count, comm ? comm->nranks : 1);
        keys[t->ncolls].a = c->host_begin;
        keys[t->ncolls].b = c->thread;
        keys[t->ncolls].c = c->index;
        keys[t->ncolls].pos = (uint32_t)t->ncolls;
        t->ncolls++;
    }
    if (sort_by_time(t->colls, t->ncolls, sizeof *t->colls, keys, map) != 0)
        goto out;

    /* per thread in record order: a group's calls go with the ncclGroupEnd that closed it */
    by_thread = malloc((t->ncolls ? t->ncolls : 1) * sizeof *by_thread);
    pending = malloc((t->ncolls ? t->ncolls : 1) * sizeof *pending);
    if (by_thread == NULL || pending == NULL)
        goto out;
    for (i = 0; i < t->ncolls; i++) {
        keys[i].a = t->colls[i].thread;
        keys[i].b = t->colls[i].index;
        keys[i].c = 0;
        keys[i].pos = (uint32_t)i;
    }
    qsort(keys, t->ncolls, sizeof *keys, cmp_key);
    for (i = 0; i < t->ncolls; i++)
        by_thread[i] = keys[i].pos;
    for (i = 0; i < t->ncolls; i++) {
        struct obs_coll *c = &t->colls[by_thread[i]];
        if (i > 0 && t->colls[by_thread[i - 1]].thread != c->thread)
            npending = 0;
        if (c->op == OBS_COLL_GROUP_END && c->group <= 1) {
            for (k = 0; k < npending; k++)
                t->colls[pending[k]].group_end = by_thread[i];
            npending = 0;
        } else if (c->group > 0 && obs_coll_is_op(c->op)) {
            pending[npending++] = by_thread[i];
        }
    }

    /* the calls each one caused: its thread's records [index - nested, index - 1] */
    calls = malloc((t->ncalls ? t->ncalls : 1) * sizeof *calls);
    if (calls == NULL)
        goto out;
    for (i = 0; i < t->ncalls; i++) {
        calls[i].index = t->calls[i].index;
        calls[i].thread = t->calls[i].thread;
        calls[i].pad = 0;
        calls[i].seq = i;
    }
    qsort(calls, t->ncalls, sizeof *calls, cmp_call_at);
    for (i = 0; i < t->ncolls; i++) {
        struct obs_coll *c = &t->colls[i];
        uint64_t nested = c->ncalls, lo = c->index > nested ? c->index - nested : 0;
        size_t at = call_lower_bound(calls, t->ncalls, c->thread, lo);
        c->ncalls = 0;
        c->calls_first = t->ncoll_calls;
        for (; nested > 0 && at < t->ncalls && calls[at].thread == c->thread && calls[at].index < c->index; at++) {
            if (t->ncoll_calls == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                size_t *p = realloc(t->coll_calls, ncap * sizeof *p);
                if (p == NULL)
                    goto out;
                t->coll_calls = p;
                cap = ncap;
            }
            t->coll_calls[t->ncoll_calls++] = calls[at].seq;
            c->ncalls++;
            c->kernels += t->calls[calls[at].seq].kind == OBS_KIND_KERNEL;
        }
    }
    for (i = 0; i < t->ncolls; i++) { /* a grouped call: its group's calls */
        struct obs_coll *c = &t->colls[i];
        if (c->group_end != OBS_NONE && c->ncalls == 0) {
            const struct obs_coll *g = &t->colls[c->group_end];
            c->calls_first = g->calls_first;
            c->ncalls = g->ncalls;
            c->kernels = g->kernels;
        }
        if (c->ncalls > 0) {
            const struct obs_call *first = &t->calls[t->coll_calls[c->calls_first]];
            c->phase = first->phase;
            c->layer = first->layer;
        }
        if (c->host_begin < t->t_first || t->t_first == 0)
            t->t_first = c->host_begin;
        if (c->host_end > t->t_last)
            t->t_last = c->host_end;
    }
    for (i = 0; i < t->ncomms; i++) {
        if (t->comms[i].host_begin < t->t_first || t->t_first == 0)
            t->t_first = t->comms[i].host_begin;
        if (t->comms[i].host_end > t->t_last)
            t->t_last = t->comms[i].host_end;
    }
    rc = 0;
out:
    free(ids);
    free(keys);
    free(map);
    free(parent_ids);
    free(by_thread);
    free(pending);
    free(calls);
    return rc;
}
