/* Chrome trace JSON export: see trace_json.h. Events are formatted straight
 * into a large buffer; every string that repeats (kernel, API, thread and
 * phase names) is escaped once up front. */
#include "trace_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_layers.h"
#include "trace_outbuf.h"
#include "trace_colls.h"
#include "trace_phase_slices.h"
#include "trace_progress.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct json_text {
    char *s; /* escaped, without quotes */
    size_t len;
};

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len, i;
    unsigned c = s[0];
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        len = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (len > n)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* s as the inside of a JSON string: quotes, backslashes and control
 * characters escaped, invalid UTF-8 replaced by U+FFFD, cut at
 * OBS_OUTBUF_MAX_STRING bytes. */
static int json_text(struct json_text *out, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)u), i = 0, k = 0;
    char *d;
    if (n > OBS_OUTBUF_MAX_STRING)
        n = OBS_OUTBUF_MAX_STRING;
    d = malloc(6 * n + 1 + OBS_TEXT_SLACK);
    if (d == NULL)
        return -1;
    while (i < n) {
        unsigned c = u[i];
        size_t seq;
        if (c == '"' || c == '\\') {
            d[k++] = '\\';
            d[k++] = (char)c;
            i++;
        } else if (c < 0x20) {
            memcpy(d + k, "\\u00", 4);
            d[k + 4] = hex[c >> 4];
            d[k + 5] = hex[c & 15];
            k += 6;
            i++;
        } else if (c < 0x80) {
            d[k++] = (char)c;
            i++;
        } else if ((seq = utf8_seq(u + i, n - i)) > 0) {
            memcpy(d + k, u + i, seq);
            k += seq;
            i += seq;
        } else {
            memcpy(d + k, "\\ufffd", 6);
            k += 6;
            i++;
        }
    }
    d[k] = '\0';
    out->s = d;
    out->len = k;
    return 0;
}

static void free_texts(struct json_text *a, size_t n)
{
    size_t i;
    if (a == NULL)
        return;
    for (i = 0; i < n; i++)
        free(a[i].s);
    free(a);
}

/* Ends of the open slices of one track, to keep its slices nested. */
struct nest {
    uint64_t *end;
    size_t depth, cap;
};

/* Clamp [b, *e) so that it nests in the open slices, and open it. */
static int nest_slice(struct nest *n, uint64_t b, uint64_t *e)
{
    while (n->depth > 0 && n->end[n->depth - 1] <= b)
        n->depth--;
    if (n->depth > 0 && *e > n->end[n->depth - 1])
        *e = n->end[n->depth - 1];
    if (*e < b)
        *e = b;
    if (n->depth == n->cap) {
        size_t cap = n->cap ? n->cap * 2 : 8;
        uint64_t *p = realloc(n->end, cap * sizeof *p);
        if (p == NULL)
            return -1;
        n->end = p;
        n->cap = cap;
    }
    n->end[n->depth++] = *e;
    return 0;
}

struct json_ctx {
    const struct obs_trace *t;
    struct obs_outbuf ob;
    int64_t base;       /* ts 0 on the trace's clock */
    uint64_t flow_base; /* added to flow ids */
    uint32_t pid;       /* the pid the events carry */
    int no_args;
    struct json_text *kernel_name, *kernel_mangled, *thread_name, *phase_name, *api_name;
    struct json_text kind_name[OBS_KIND_COUNT + 1], gpu_cat[OBS_KIND_COUNT + 1], direction[OBS_DIR_COUNT + 1];
    char pid_text[24];
    size_t pid_len;
};


static char *put_ts(char *p, const struct json_ctx *x, uint64_t t)
{
    /* t - base, 0 when before it; in unsigned arithmetic, since a damaged
     * trace's times can be 2^63 or more (real host times are far below) */
    uint64_t d;
    if (x->base >= 0) {
        d = t > (uint64_t)x->base ? t - (uint64_t)x->base : 0;
    } else {
        uint64_t minus = (uint64_t)(-(x->base + 1)) + 1; /* -base, INT64_MIN included */
        d = t > UINT64_MAX - minus ? UINT64_MAX : t + minus;
    }
    return obs_fmt_us3(p, d);
}

/* ,"pid":P,"tid":T */
static char *put_pid_tid(char *p, const struct json_ctx *x, uint64_t tid)
{
    p = OBS_PUT_LIT(p, ",\"pid\":");
    p = obs_put(p, x->pid_text, x->pid_len);
    p = OBS_PUT_LIT(p, ",\"tid\":");
    return obs_fmt_u64(p, tid);
}

static void put_metadata(struct json_ctx *x, const char *what, uint64_t tid, const char *key,
                         const struct json_text *name, int64_t sort_index)
{
    char *p = obs_outbuf_reserve(&x->ob, 200 + (name ? name->len : 0));
    p = OBS_PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"");
    p = obs_put(p, what, strlen(what));
    *p++ = '"';
    p = put_pid_tid(p, x, tid);
    p = OBS_PUT_LIT(p, ",\"args\":{\"");
    p = obs_put(p, key, strlen(key));
    p = OBS_PUT_LIT(p, "\":");
    if (name) {
        *p++ = '"';
        p = obs_put(p, name->s, name->len);
        *p++ = '"';
    } else {
        p = obs_fmt_i64(p, sort_index);
    }
    p = OBS_PUT_LIT(p, "}},\n");
    obs_outbuf_commit(&x->ob, p);
}

static int put_metadata_events(struct json_ctx *x, const uint32_t *stream_ids, size_t nstreams,
                               const char *process_name)
{
    const struct obs_trace *t = x->t;
    const char *exe = obs_trace_meta(t, "exe");
    const char *cmdline = obs_trace_meta(t, "cmdline");
    char buf[4200];
    struct json_text jt;
    size_t i;

    if (exe == NULL || exe[0] == '\0')
        exe = cmdline && cmdline[0] ? cmdline : "unknown";
    snprintf(buf, sizeof buf, "obsshim pid %u: %.4000s", t->pid, exe);
    if (json_text(&jt, process_name ? process_name : buf) != 0)
        return -1;
    put_metadata(x, "process_name", x->pid, "name", &jt, 0);
    free(jt.s);

    for (i = 0; i < t->nthreads; i++) {
        const struct obs_thread *th = &t->threads[i];
        put_metadata(x, "thread_name", th->tid, "name", &x->thread_name[i], 0);
        /* main thread (first to call) first, then in order of first call */
        put_metadata(x, "thread_sort_index", th->tid, "sort_index", NULL,
                     th->first_seq == UINT64_MAX ? (int64_t)t->nthreads : (int64_t)th->first_seq);
    }
    if (t->nphases) { /* a phase track beside each thread that has shown ranges */
        size_t k, n = 0;
        uint32_t *order = obs_phase_ranges_shown(t, &n), last = OBS_NONE;
        if (order == NULL)
            return -1;
        for (k = 0; k < n; k++) {
            const struct obs_thread *th = &t->threads[t->phases[order[k]].thread];
            const struct json_text *tn = &x->thread_name[t->phases[order[k]].thread];
            char *name;
            if (t->phases[order[k]].thread == last)
                continue;
            last = t->phases[order[k]].thread;
            name = malloc(tn->len + 16);
            if (name == NULL) {
                free(order);
                return -1;
            }
            memcpy(name, "phases: ", 8);
            memcpy(name + 8, tn->s, tn->len);
            jt.s = name;
            jt.len = tn->len + 8;
            put_metadata(x, "thread_name", (uint64_t)OBS_JSON_PHASE_TID_BASE + last, "name", &jt, 0);
            put_metadata(x, "thread_sort_index", (uint64_t)OBS_JSON_PHASE_TID_BASE + last, "sort_index", NULL,
                         th->first_seq == UINT64_MAX ? (int64_t)t->nthreads : (int64_t)th->first_seq);
            free(name);
        }
        free(order);
    }
    for (i = 0; i < nstreams; i++) {
        snprintf(buf, sizeof buf, "GPU stream %u", stream_ids[i]);
        jt.s = buf;
        jt.len = strlen(buf);
        put_metadata(x, "thread_name", OBS_JSON_GPU_TID_BASE + i, "name", &jt, 0);
        put_metadata(x, "thread_sort_index", OBS_JSON_GPU_TID_BASE + i, "sort_index", NULL,
                     (int64_t)(t->ncalls + 1 + i));
    }
    return 0;
}

static int kind_has_bytes(unsigned kind)
{
    return kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET || kind == OBS_KIND_ALLOC ||
           kind == OBS_KIND_GRAPH;
}

/* The slice name of a call: its kernel's name, else its API's (graph
 * launches: the API's; their kernels are in the args). */
static const struct json_text *call_name(const struct json_ctx *x, const struct obs_call *c)
{
    if (c->kernel && c->kind != OBS_KIND_GRAPH && x->kernel_name[c->kernel].len)
        return &x->kernel_name[c->kernel];
    return &x->api_name[c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT];
}

/* Bytes put_graph_args may write for c. */
static size_t graph_args_len(const struct json_ctx *x, const struct obs_call *c)
{
    const struct obs_graph *g = obs_call_graph(x->t, c);
    size_t i, len = 64;
    for (i = 0; g && i < g->nkernels; i++)
        len += x->kernel_name[g->kernels[i].kernel].len + 32;
    for (i = 0; g && g->layers > 0 && i < g->nnodes; i++) /* at most a run per node: "k" "x" count "," */
        len += 48;
    return len;
}

/* The layers of an exec's kernel nodes in walk order, run-length coded:
 * "node_layers":"-x1,0x4,1x4,-x2" (layer k, or - for none, times the nodes
 * in a row): the layer of each node, docs/layers.md "Graphs". Only where
 * layers were found. */
static char *put_node_layers(char *p, const struct obs_graph *g)
{
    size_t i = 0, j;
    p = OBS_PUT_LIT(p, ",\"node_layers\":\"");
    while (i < g->nnodes) {
        for (j = i; j < g->nnodes && g->nodes[j].layer == g->nodes[i].layer; j++)
            ;
        if (i > 0)
            *p++ = ',';
        if (g->nodes[i].layer == OBS_NO_LAYER)
            *p++ = '-';
        else
            p = obs_fmt_u64(p, g->nodes[i].layer);
        *p++ = 'x';
        p = obs_fmt_u64(p, j - i);
        i = j;
    }
    *p++ = '"';
    return p;
}

/* A graph launch's exec: "graph":id, "kernels":{"name":count, ...} (kernel
 * nodes by name, as walked at instantiation; unnamed ones as "(unnamed)"). */
static char *put_graph_args(char *p, const struct json_ctx *x, const struct obs_call *c)
{
    const struct obs_graph *g = obs_call_graph(x->t, c);
    size_t i;
    if (g == NULL)
        return p;
    p = OBS_PUT_LIT(p, ",\"graph\":");
    p = obs_fmt_u64(p, g->id);
    p = OBS_PUT_LIT(p, ",\"kernel_nodes\":");
    p = obs_fmt_u64(p, g->kernel_count);
    p = OBS_PUT_LIT(p, ",\"kernels\":{");
    for (i = 0; i < g->nkernels; i++) {
        const struct json_text *name = &x->kernel_name[g->kernels[i].kernel];
        if (i)
            *p++ = ',';
        *p++ = '"';
        if (g->kernels[i].kernel && name->len)
            p = obs_put_padded(p, name->s, name->len);
        else
            p = OBS_PUT_LIT(p, "(unnamed)");
        p = OBS_PUT_LIT(p, "\":");
        p = obs_fmt_u64(p, g->kernels[i].count);
    }
    *p++ = '}';
    if (g->layers > 0)
        p = put_node_layers(p, g);
    return p;
}

static char *put_args(char *p, const struct json_ctx *x, const struct obs_call *c, uint64_t seq)
{
    const struct obs_trace *t = x->t;
    const struct json_text *api = &x->api_name[c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT];
    unsigned dir = obs_call_direction(c);

    p = OBS_PUT_LIT(p, ",\"args\":{\"seq\":");
    p = obs_fmt_u64(p, seq);
    if (call_name(x, c) != api) { /* a kernel's name: say which API launched it */
        p = OBS_PUT_LIT(p, ",\"api\":\"");
        p = obs_put_padded(p, api->s, api->len);
        *p++ = '"';
    }
    if (c->status != 0) {
        p = OBS_PUT_LIT(p, ",\"status\":");
        p = obs_fmt_i64(p, c->status);
    }
    p = OBS_PUT_LIT(p, ",\"stream\":");
    p = obs_fmt_u64(p, c->stream);
    if (c->kind == OBS_KIND_KERNEL) {
        p = OBS_PUT_LIT(p, ",\"grid\":[");
        p = obs_fmt_u64(p, c->u.grid.x);
        *p++ = ',';
        p = obs_fmt_u64(p, c->u.grid.y);
        *p++ = ',';
        p = obs_fmt_u64(p, c->u.grid.z);
        p = OBS_PUT_LIT(p, "],\"block\":[");
        p = obs_fmt_u64(p, c->block_x);
        *p++ = ',';
        p = obs_fmt_u64(p, c->block_y);
        *p++ = ',';
        p = obs_fmt_u64(p, c->block_z);
        p = OBS_PUT_LIT(p, "],\"shmem\":");
        p = obs_fmt_u64(p, c->shmem);
    }
    if (kind_has_bytes(c->kind)) {
        p = c->kind == OBS_KIND_GRAPH ? OBS_PUT_LIT(p, ",\"nodes\":") : OBS_PUT_LIT(p, ",\"bytes\":");
        p = obs_fmt_u64(p, c->u.bytes);
    }
    if (c->kind == OBS_KIND_GRAPH)
        p = put_graph_args(p, x, c);
    if (dir != OBS_DIR_NONE) {
        const struct json_text *d = &x->direction[dir < OBS_DIR_COUNT ? dir : OBS_DIR_COUNT];
        p = OBS_PUT_LIT(p, ",\"direction\":\"");
        p = obs_put_padded(p, d->s, d->len);
        *p++ = '"';
    }
    if (c->flags & OBS_CALL_NESTED)
        p = OBS_PUT_LIT(p, ",\"nested\":true");
    if (c->phase != OBS_NONE) {
        const struct json_text *ph = &x->phase_name[c->phase];
        uint32_t step = obs_phase_step(t, c->phase);
        p = OBS_PUT_LIT(p, ",\"phase\":\"");
        p = obs_put_padded(p, ph->s, ph->len);
        *p++ = '"';
        if (step != UINT32_MAX) {
            p = OBS_PUT_LIT(p, ",\"step\":");
            p = obs_fmt_u64(p, step);
        }
    }
    *p++ = '}';
    return p;
}

/* An NCCL call's arguments (no braces): what it is, what it moves, on
 * which communicator, and its place among the communicator's calls. Every
 * text is a fixed name: at most about 400 bytes. */
static char *put_coll_args(char *p, const struct obs_trace *t, const struct obs_coll *c)
{
    const struct obs_comm *comm = obs_coll_comm(t, c);
    const char *text;
    p = OBS_PUT_LIT(p, "\"op\":\"");
    text = obs_coll_op_name(c->op);
    p = obs_put(p, text, strlen(text));
    *p++ = '"';
    if (obs_coll_is_op(c->op)) {
        p = OBS_PUT_LIT(p, ",\"count\":");
        p = obs_fmt_u64(p, c->count);
        p = OBS_PUT_LIT(p, ",\"bytes\":");
        p = obs_fmt_u64(p, c->bytes);
        p = OBS_PUT_LIT(p, ",\"datatype\":\"");
        text = obs_nccl_type_name(c->datatype);
        p = obs_put(p, text, strlen(text));
        *p++ = '"';
    }
    if (c->redop != OBS_NCCL_NO_REDOP) {
        p = OBS_PUT_LIT(p, ",\"redop\":\"");
        text = obs_nccl_redop_name(c->redop);
        p = obs_put(p, text, strlen(text));
        *p++ = '"';
    }
    if (c->peer >= 0) {
        p = c->op == OBS_COLL_SEND || c->op == OBS_COLL_RECV ? OBS_PUT_LIT(p, ",\"peer\":")
                                                               : OBS_PUT_LIT(p, ",\"root\":");
        p = obs_fmt_i64(p, c->peer);
    }
    if (c->seq != OBS_NO_SEQ) {
        p = OBS_PUT_LIT(p, ",\"comm_seq\":");
        p = obs_fmt_u64(p, c->seq);
    }
    if (comm != NULL) {
        static const char hex[] = "0123456789abcdef";
        p = OBS_PUT_LIT(p, ",\"comm\":\"");
        for (int i = 60; i >= 0; i -= 4)
            *p++ = hex[(comm->hash >> i) & 0xf];
        p = OBS_PUT_LIT(p, "\",\"rank\":");
        p = obs_fmt_i64(p, comm->rank);
        p = OBS_PUT_LIT(p, ",\"nranks\":");
        p = obs_fmt_i64(p, comm->nranks);
    }
    if (c->group > 0) {
        p = OBS_PUT_LIT(p, ",\"group\":");
        p = obs_fmt_u64(p, c->group);
    }
    p = OBS_PUT_LIT(p, ",\"stream\":");
    p = obs_fmt_u64(p, c->stream);
    p = OBS_PUT_LIT(p, ",\"kernels\":");
    p = obs_fmt_u64(p, c->kernels);
    if (c->status != 0) {
        p = OBS_PUT_LIT(p, ",\"status\":");
        p = obs_fmt_i64(p, c->status);
    }
    return p;
}

/* NCCL's calls on their threads' tracks, around the launches they made. */
static int put_coll_slices(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    for (i = 0; i < t->ncolls; i++) {
        const struct obs_coll *c = &t->colls[i];
        const char *name = obs_coll_op_name(c->op);
        char *p = obs_outbuf_reserve(&x->ob, 800);
        p = OBS_PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"nccl\",\"name\":\"");
        p = obs_put(p, name, strlen(name));
        *p++ = '"';
        p = put_pid_tid(p, x, t->threads[c->thread].tid);
        p = OBS_PUT_LIT(p, ",\"ts\":");
        p = put_ts(p, x, c->host_begin);
        p = OBS_PUT_LIT(p, ",\"dur\":");
        p = obs_fmt_us3(p, c->host_end - c->host_begin);
        if (!x->no_args) {
            p = OBS_PUT_LIT(p, ",\"args\":{");
            p = put_coll_args(p, t, c);
            *p++ = '}';
        }
        p = OBS_PUT_LIT(p, "},\n");
        obs_outbuf_commit(&x->ob, p);
    }
    return 0;
}

static char *put_flow(char *p, const struct json_ctx *x, char ph, uint64_t tid, uint64_t ts, uint64_t id)
{
    p = OBS_PUT_LIT(p, "{\"ph\":\"");
    *p++ = ph;
    p = OBS_PUT_LIT(p, "\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
    p = obs_fmt_u64(p, x->flow_base + id);
    if (ph == 'f')
        p = OBS_PUT_LIT(p, ",\"bp\":\"e\"");
    p = put_pid_tid(p, x, tid);
    p = OBS_PUT_LIT(p, ",\"ts\":");
    p = put_ts(p, x, ts);
    return OBS_PUT_LIT(p, "},\n");
}

static int put_host_slices(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    struct nest *nests = calloc(t->nthreads ? t->nthreads : 1, sizeof *nests);
    size_t i;
    int rc = 0;

    if (nests == NULL)
        return -1;
    /* progress: the host slices, then the device slices */
    for (i = 0; i < t->ncalls && rc == 0; obs_progress_tick(++i, t->ncalls + t->ngpu)) {
        const struct obs_call *c = &t->calls[i];
        const struct json_text *name = call_name(x, c);
        const struct json_text *cat = &x->kind_name[c->kind < OBS_KIND_COUNT ? c->kind : OBS_KIND_COUNT];
        uint64_t tid = t->threads[c->thread].tid, b = c->host_begin, e = c->host_end;
        size_t extra = name->len + (c->phase != OBS_NONE ? x->phase_name[c->phase].len : 0) +
                       (c->kind == OBS_KIND_GRAPH ? graph_args_len(x, c) : 0);
        char *p = obs_outbuf_reserve(&x->ob, 640 + extra);

        rc = nest_slice(&nests[c->thread], b, &e);
        p = OBS_PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"");
        p = obs_put_padded(p, cat->s, cat->len);
        p = OBS_PUT_LIT(p, "\",\"name\":\"");
        p = obs_put_padded(p, name->s, name->len);
        *p++ = '"';
        p = put_pid_tid(p, x, tid);
        p = OBS_PUT_LIT(p, ",\"ts\":");
        p = put_ts(p, x, b);
        p = OBS_PUT_LIT(p, ",\"dur\":");
        p = obs_fmt_us3(p, e - b);
        if (!x->no_args)
            p = put_args(p, x, c, i);
        p = OBS_PUT_LIT(p, "},\n");
        if (c->gpu != OBS_NONE) /* flow start, inside the launch slice */
            p = put_flow(p, x, 's', tid, b + (e - b) / 2, i);
        obs_outbuf_commit(&x->ob, p);
    }
    for (i = 0; i < t->nthreads; i++)
        free(nests[i].end);
    free(nests);
    return rc;
}

static int cmp_seq_by_gpu_begin(const void *a, const void *b, void *arg)
{
    const struct obs_trace *t = arg;
    const struct obs_call *x = &t->calls[*(const uint32_t *)a];
    const struct obs_call *y = &t->calls[*(const uint32_t *)b];
    uint64_t bx = t->gpu[x->gpu].begin, by = t->gpu[y->gpu].begin;
    if (bx != by)
        return bx < by ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static size_t stream_slot(const uint32_t *ids, size_t n, uint32_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Distinct streams of calls with GPU time (with none: of the range spans,
 * OBS_GPU_TIME=steps), sorted; *n gets their count. */
static uint32_t *gpu_streams(const struct obs_trace *t, size_t *n)
{
    uint32_t *ids = NULL;
    size_t cap = 0, count = 0, i, nitems = t->ngpu ? t->ncalls : t->nrange_spans;
    uint32_t last = 0;
    int have_last = 0;
    for (i = 0; i < nitems; i++) {
        uint32_t stream = t->ngpu ? t->calls[i].stream : t->range_spans[i].stream;
        size_t k;
        if ((t->ngpu && t->calls[i].gpu == OBS_NONE) || (have_last && stream == last))
            continue;
        last = stream;
        have_last = 1;
        k = stream_slot(ids, count, stream);
        if (k < count && ids[k] == stream)
            continue;
        if (count == cap) {
            uint32_t *p = realloc(ids, (cap = cap ? cap * 2 : 16) * sizeof *ids);
            if (p == NULL) {
                free(ids);
                return NULL;
            }
            ids = p;
        }
        memmove(ids + k + 1, ids + k, (count - k) * sizeof *ids);
        ids[k] = stream;
        count++;
    }
    *n = count;
    if (ids == NULL)
        ids = malloc(sizeof *ids);
    return ids;
}

static const char *gpu_cat(unsigned kind)
{
    switch (kind) {
    case OBS_KIND_KERNEL:
        return "gpu_kernel";
    case OBS_KIND_MEMCPY:
        return "gpu_memcpy";
    case OBS_KIND_MEMSET:
        return "gpu_memset";
    case OBS_KIND_GRAPH:
        return "gpu_graph";
    default:
        return "gpu";
    }
}

/* Device slices, stream by stream in device order, never overlapping. */
static int put_gpu_slices(struct json_ctx *x, const uint32_t *ids, size_t nstreams)
{
    const struct obs_trace *t = x->t;
    size_t *start = calloc(nstreams + 1, sizeof *start), i, s;
    uint32_t *order = malloc((t->ngpu ? t->ngpu : 1) * sizeof *order);
    int rc = 0;

    if (start == NULL || order == NULL) {
        free(start);
        free(order);
        return -1;
    }
    /* counting sort of the calls with GPU time by stream, in seq order */
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].gpu != OBS_NONE)
            start[stream_slot(ids, nstreams, t->calls[i].stream) + 1]++;
    for (s = 1; s <= nstreams; s++)
        start[s] += start[s - 1];
    {
        size_t *fill = malloc((nstreams ? nstreams : 1) * sizeof *fill);
        if (fill == NULL) {
            free(start);
            free(order);
            return -1;
        }
        memcpy(fill, start, nstreams * sizeof *fill);
        for (i = 0; i < t->ncalls; i++)
            if (t->calls[i].gpu != OBS_NONE)
                order[fill[stream_slot(ids, nstreams, t->calls[i].stream)]++] = (uint32_t)i;
        free(fill);
    }
    for (s = 0; s < nstreams; s++) {
        uint64_t prev_end = 0;
        uint64_t tid = OBS_JSON_GPU_TID_BASE + s;
        for (i = start[s] + 1; i < start[s + 1]; i++)
            if (t->gpu[t->calls[order[i]].gpu].begin < t->gpu[t->calls[order[i - 1]].gpu].begin) {
                qsort_r(order + start[s], start[s + 1] - start[s], sizeof *order, cmp_seq_by_gpu_begin,
                        (void *)t);
                break;
            }
        for (i = start[s]; i < start[s + 1]; obs_progress_tick(t->ncalls + ++i, t->ncalls + t->ngpu)) {
            uint32_t seq = order[i];
            const struct obs_call *c = &t->calls[seq];
            const struct json_text *name = call_name(x, c);
            const struct json_text *cat = &x->gpu_cat[c->kind < OBS_KIND_COUNT ? c->kind : OBS_KIND_COUNT];
            uint64_t b = t->gpu[c->gpu].begin, e = t->gpu[c->gpu].end;
            char *p = obs_outbuf_reserve(&x->ob, 400 + name->len);
            if (b < prev_end) /* a stream runs one thing at a time: clamp */
                b = prev_end;
            if (e < b)
                e = b;
            prev_end = e;
            p = OBS_PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"");
            p = obs_put_padded(p, cat->s, cat->len);
            p = OBS_PUT_LIT(p, "\",\"name\":\"");
            p = obs_put_padded(p, name->s, name->len);
            *p++ = '"';
            p = put_pid_tid(p, x, tid);
            p = OBS_PUT_LIT(p, ",\"ts\":");
            p = put_ts(p, x, b);
            p = OBS_PUT_LIT(p, ",\"dur\":");
            p = obs_fmt_us3(p, e - b);
            if (!x->no_args) {
                p = OBS_PUT_LIT(p, ",\"args\":{\"seq\":");
                p = obs_fmt_u64(p, seq);
                *p++ = '}';
            }
            p = OBS_PUT_LIT(p, "},\n");
            p = put_flow(p, x, 'f', tid, b + (e - b) / 2, seq);
            obs_outbuf_commit(&x->ob, p);
        }
    }
    free(start);
    free(order);
    return rc;
}

/* OBS_GPU_TIME=steps: each stream's range spans as slices of its GPU
 * track, nested as the ranges were (DECODE/STEADY > DECODE/STEP_k >
 * KV_GATHER), named by the range their time counts for. */
static int put_range_slices(struct json_ctx *x, const uint32_t *ids, size_t nstreams)
{
    const struct obs_trace *t = x->t;
    struct nest nest = {0};
    size_t i, n = 0, slot = SIZE_MAX;
    uint32_t *order;
    int rc = 0;

    if (t->ngpu != 0 || t->nrange_spans == 0) /* a trace with per-call spans draws those */
        return 0;
    if ((order = obs_range_spans_by_stream(t, &n)) == NULL)
        return -1;
    for (i = 0; i < n && rc == 0; i++) {
        const struct obs_range_span *r = &t->range_spans[order[i]];
        const struct obs_phase *live = &t->phases[r->live];
        char buf[256];
        struct json_text name;
        uint64_t b = r->begin, e = r->end;
        size_t k = stream_slot(ids, nstreams, r->stream);
        char *p;
        if (k != slot) { /* a new track */
            nest.depth = 0;
            slot = k;
        }
        if (json_text(&name, obs_range_span_name(t, r, buf, sizeof buf)) != 0) {
            rc = -1;
            break;
        }
        rc = nest_slice(&nest, b, &e);
        p = obs_outbuf_reserve(&x->ob, 400 + name.len);
        p = OBS_PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"gpu_range\",\"name\":\"");
        p = obs_put(p, name.s, name.len);
        *p++ = '"';
        p = put_pid_tid(p, x, OBS_JSON_GPU_TID_BASE + k);
        p = OBS_PUT_LIT(p, ",\"ts\":");
        p = put_ts(p, x, b);
        p = OBS_PUT_LIT(p, ",\"dur\":");
        p = obs_fmt_us3(p, e - b);
        if (!x->no_args) {
            p = OBS_PUT_LIT(p, ",\"args\":{\"generation\":");
            p = obs_fmt_u64(p, live->generation);
            if (obs_phase_step(t, r->live) != UINT32_MAX) {
                p = OBS_PUT_LIT(p, ",\"step\":");
                p = obs_fmt_u64(p, obs_phase_step(t, r->live));
            }
            p = OBS_PUT_LIT(p, ",\"thread\":");
            p = obs_fmt_u64(p, t->threads[r->thread].tid);
            if (r->flags & OBS_RANGE_SPAN_RELABELLED)
                p = OBS_PUT_LIT(p, ",\"relabelled\":true");
            if (r->flags & OBS_RANGE_SPAN_MIXED)
                p = OBS_PUT_LIT(p, ",\"relabelled\":\"several\"");
            *p++ = '}';
        }
        p = OBS_PUT_LIT(p, "},\n");
        obs_outbuf_commit(&x->ob, p);
        free(name.s);
    }
    free(nest.end);
    free(order);
    return rc;
}

static int put_phase_slices(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    struct nest nest = {0};
    size_t i, n = 0;
    struct obs_phase_slice *sl = obs_phase_slices(t, &n);
    uint32_t last_thread = OBS_NONE;
    int rc = sl ? 0 : -1;
    for (i = 0; i < n && rc == 0; i++) {
        const struct obs_phase_slice *s = &sl[i];
        const struct obs_phase *ph = s->kind == OBS_PHASE_SLICE_RANGE ? &t->phases[s->range] : NULL;
        const struct json_text *name = ph ? &x->phase_name[s->range] : NULL;
        struct json_text full = {NULL, 0};
        char derived[48];
        uint64_t b = s->b, e = s->e;
        char *p;
        if (s->thread != last_thread) { /* a new track */
            nest.depth = 0;
            last_thread = s->thread;
        }
        if (ph == NULL) {
            if (s->kind == OBS_PHASE_SLICE_COMM)
                obs_phase_slice_name(t, s, derived, sizeof derived);
            else if (s->kind == OBS_PHASE_SLICE_STEP)
                snprintf(derived, sizeof derived, "DECODE/STEP_%u", s->step);
            else if (s->kind == OBS_PHASE_SLICE_LAYER) {
                char k[32];
                snprintf(derived, sizeof derived, "%s", obs_phase_slice_name(t, s, k, sizeof k));
            }
            else
                snprintf(derived, sizeof derived, "DECODE/STEADY");
            full.s = derived;
            full.len = strlen(derived);
        } else if (ph->name[0] && ph->name != ph->phase && json_text(&full, ph->name) != 0) {
            /* the slice shows the full range name ("DECODE/STEP_3") when there is one */
            rc = -1;
            break;
        }
        p = obs_outbuf_reserve(&x->ob, 800 + 2 * (name ? name->len : 0) + full.len);
        rc = nest_slice(&nest, b, &e);
        p = OBS_PUT_LIT(p, "{\"ph\":\"X\",\"cat\":\"phase\",\"name\":\"");
        if (full.s)
            p = obs_put(p, full.s, full.len);
        else if (name->len)
            p = obs_put(p, name->s, name->len);
        else
            p = OBS_PUT_LIT(p, "(phase)");
        if (full.s != derived)
            free(full.s);
        *p++ = '"';
        p = put_pid_tid(p, x, (uint64_t)OBS_JSON_PHASE_TID_BASE + s->thread);
        p = OBS_PUT_LIT(p, ",\"ts\":");
        p = put_ts(p, x, b);
        p = OBS_PUT_LIT(p, ",\"dur\":");
        p = obs_fmt_us3(p, e - b);
        p = OBS_PUT_LIT(p, ",\"args\":{\"phase\":\"");
        if (name)
            p = obs_put(p, name->s, name->len);
        else if (s->kind == OBS_PHASE_SLICE_LAYER && s->range == OBS_LAYER_EMBED)
            p = OBS_PUT_LIT(p, "EMBED");
        else if (s->kind == OBS_PHASE_SLICE_LAYER && s->range == OBS_LAYER_HEAD)
            p = OBS_PUT_LIT(p, "HEAD");
        else if (s->kind == OBS_PHASE_SLICE_LAYER)
            p = OBS_PUT_LIT(p, "LAYER");
        else if (s->kind == OBS_PHASE_SLICE_COMM)
            p = OBS_PUT_LIT(p, "COMM");
        else
            p = OBS_PUT_LIT(p, "DECODE");
        *p++ = '"';
        if (s->kind == OBS_PHASE_SLICE_COMM) {
            *p++ = ',';
            p = put_coll_args(p, t, &t->colls[s->range]);
        }
        if (s->kind == OBS_PHASE_SLICE_LAYER && s->range != OBS_LAYER_EMBED && s->range != OBS_LAYER_HEAD) {
            p = OBS_PUT_LIT(p, ",\"layer\":");
            p = obs_fmt_u64(p, s->range);
        }
        if (s->step != UINT32_MAX) {
            p = OBS_PUT_LIT(p, ",\"step\":");
            p = obs_fmt_u64(p, s->step);
        }
        p = OBS_PUT_LIT(p, ",\"generation\":");
        p = obs_fmt_u64(p, s->generation);
        if (ph == NULL && s->kind != OBS_PHASE_SLICE_COMM)
            p = OBS_PUT_LIT(p, ",\"derived\":true");
        else if (ph != NULL && ph->relabel)
            p = OBS_PUT_LIT(p, ",\"relabel\":true");
        p = OBS_PUT_LIT(p, "}},\n");
        obs_outbuf_commit(&x->ob, p);
    }
    free(nest.end);
    free(sl);
    return rc;
}

static int cmp_lost_time(const void *a, const void *b)
{
    const struct obs_lost *x = a, *y = b;
    return x->t_last < y->t_last ? -1 : x->t_last > y->t_last;
}

static char *put_counter(char *p, const struct json_ctx *x, uint64_t ts, uint64_t value)
{
    p = OBS_PUT_LIT(p, "{\"ph\":\"C\",\"name\":\"records\"");
    p = put_pid_tid(p, x, x->pid);
    p = OBS_PUT_LIT(p, ",\"ts\":");
    p = put_ts(p, x, ts);
    p = OBS_PUT_LIT(p, ",\"args\":{\"lost\":");
    p = obs_fmt_u64(p, value);
    return OBS_PUT_LIT(p, "}},\n");
}

/* Cumulative records lost over time, one point per LOST record. */
static int put_lost_counter(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    struct obs_lost *lost;
    uint64_t total = 0;
    size_t i;
    char *p;

    if (t->records_lost == 0)
        return 0;
    lost = malloc(t->nlost * sizeof *lost);
    if (lost == NULL)
        return -1;
    memcpy(lost, t->lost, t->nlost * sizeof *lost);
    qsort(lost, t->nlost, sizeof *lost, cmp_lost_time);
    p = obs_outbuf_reserve(&x->ob, 200);
    p = put_counter(p, x, t->t_first, 0);
    obs_outbuf_commit(&x->ob, p);
    for (i = 0; i < t->nlost; i++) {
        total += lost[i].count;
        p = obs_outbuf_reserve(&x->ob, 200);
        p = put_counter(p, x, lost[i].t_last ? lost[i].t_last : t->t_last, total);
        obs_outbuf_commit(&x->ob, p);
    }
    free(lost);
    return 0;
}

static void put_string_member(struct json_ctx *x, const char *key, const char *value, int comma)
{
    struct json_text k, v;
    if (json_text(&k, key) != 0)
        return;
    if (json_text(&v, value) != 0) {
        free(k.s);
        return;
    }
    {
        char *p = obs_outbuf_reserve(&x->ob, k.len + v.len + 8);
        if (comma)
            *p++ = ',';
        *p++ = '"';
        p = obs_put(p, k.s, k.len);
        p = OBS_PUT_LIT(p, "\":\"");
        p = obs_put(p, v.s, v.len);
        *p++ = '"';
        obs_outbuf_commit(&x->ob, p);
    }
    free(k.s);
    free(v.s);
}

static void put_number_member(struct json_ctx *x, const char *key, uint64_t value)
{
    char *p = obs_outbuf_reserve(&x->ob, strlen(key) + 32);
    p = OBS_PUT_LIT(p, ",\"");
    p = obs_put(p, key, strlen(key));
    p = OBS_PUT_LIT(p, "\":");
    p = obs_fmt_u64(p, value);
    obs_outbuf_commit(&x->ob, p);
}

static void put_other_data(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    obs_outbuf_puts(&x->ob, "\"otherData\":{");
    put_string_member(x, "generator", "obsshim " PACKAGE_VERSION, 0);
    put_string_member(x, "file", t->path, 1);
    put_number_member(x, "trace_version", t->version);
    put_number_member(x, "pid", t->pid);
    put_number_member(x, "records", t->ncalls);
    put_number_member(x, "records_lost", t->records_lost);
    put_number_member(x, "gpu_time", (t->flags & OBS_FILE_GPU_TIME) ? 1 : 0);
    if (t->flags & OBS_FILE_GPU_STEPS)
        put_number_member(x, "gpu_range_spans", t->nrange_spans);
    put_number_member(x, "base_mono_ns", (uint64_t)x->base);
    put_number_member(x, "start_mono_ns", t->start_mono_ns);
    put_number_member(x, "start_real_ns", t->start_real_ns);
    if (t->ignored_bytes)
        put_number_member(x, "ignored_bytes", t->ignored_bytes);
    /* Kernel names once each (slices carry the demangled name only). */
    obs_outbuf_puts(&x->ob, ",\"kernels\":[");
    for (i = 1; i < t->nkernels; i++) {
        char *p = obs_outbuf_reserve(&x->ob, 64 + x->kernel_name[i].len + x->kernel_mangled[i].len);
        if (i > 1)
            *p++ = ',';
        p = OBS_PUT_LIT(p, "{\"id\":");
        p = obs_fmt_u64(p, t->kernels[i].id);
        p = OBS_PUT_LIT(p, ",\"name\":\"");
        p = obs_put(p, x->kernel_name[i].s, x->kernel_name[i].len);
        p = OBS_PUT_LIT(p, "\",\"mangled\":\"");
        p = obs_put(p, x->kernel_mangled[i].s, x->kernel_mangled[i].len);
        p = OBS_PUT_LIT(p, "\"}");
        obs_outbuf_commit(&x->ob, p);
    }
    obs_outbuf_puts(&x->ob, "],\"meta\":{");
    for (i = 0; i < t->nmeta; i++)
        put_string_member(x, t->meta[i].key, t->meta[i].value, i > 0);
    obs_outbuf_puts(&x->ob, "}}");
}

static int build_texts(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    x->kernel_name = calloc(t->nkernels + 1, sizeof *x->kernel_name);
    x->kernel_mangled = calloc(t->nkernels + 1, sizeof *x->kernel_mangled);
    x->thread_name = calloc(t->nthreads + 1, sizeof *x->thread_name);
    x->phase_name = calloc(t->nphases + 1, sizeof *x->phase_name);
    x->api_name = calloc(OBS_API_COUNT + 1, sizeof *x->api_name);
    if (!x->kernel_name || !x->kernel_mangled || !x->thread_name || !x->phase_name || !x->api_name)
        return -1;
    for (i = 0; i < t->nkernels; i++) {
        const struct obs_kernel *k = &t->kernels[i];
        if (json_text(&x->kernel_name[i], k->demangled) != 0 ||
            json_text(&x->kernel_mangled[i], k->mangled) != 0)
            return -1;
    }
    for (i = 0; i < t->nthreads; i++) {
        char buf[32];
        const char *name = t->threads[i].name;
        if (name == NULL || name[0] == '\0') {
            snprintf(buf, sizeof buf, "thread %u", t->threads[i].tid);
            name = buf;
        }
        if (json_text(&x->thread_name[i], name) != 0)
            return -1;
    }
    for (i = 0; i < t->nphases; i++)
        if (json_text(&x->phase_name[i], t->phases[i].phase) != 0)
            return -1;
    for (i = 0; i <= OBS_API_COUNT; i++)
        if (json_text(&x->api_name[i], obs_api_name((unsigned)i)) != 0)
            return -1;
    for (i = 0; i <= OBS_KIND_COUNT; i++)
        if (json_text(&x->kind_name[i], obs_call_kind_name((unsigned)i)) != 0 ||
            json_text(&x->gpu_cat[i], gpu_cat((unsigned)i)) != 0)
            return -1;
    for (i = 0; i <= OBS_DIR_COUNT; i++)
        if (json_text(&x->direction[i], obs_direction_name((unsigned)i)) != 0)
            return -1;
    return 0;
}

static void free_ctx(struct json_ctx *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    free_texts(x->kernel_name, t->nkernels);
    free_texts(x->kernel_mangled, t->nkernels);
    free_texts(x->thread_name, t->nthreads);
    free_texts(x->phase_name, t->nphases);
    free_texts(x->api_name, OBS_API_COUNT + 1);
    for (i = 0; i <= OBS_KIND_COUNT; i++) {
        free(x->kind_name[i].s);
        free(x->gpu_cat[i].s);
    }
    for (i = 0; i <= OBS_DIR_COUNT; i++)
        free(x->direction[i].s);
}

/* Set up x for t (texts escaped once, the output buffer); x is freed by
 * free_ctx, the buffer by obs_outbuf_finish. Returns 0 or -1 (ENOMEM). */
static int init_ctx(struct json_ctx *x, const struct obs_trace *t, FILE *out, uint32_t pid, int64_t base,
                    const struct obs_json_options *opt)
{
    memset(x, 0, sizeof *x);
    x->t = t;
    x->base = base;
    x->pid = pid;
    x->no_args = opt ? opt->no_args : 0;
    x->pid_len = (size_t)(obs_fmt_u64(x->pid_text, pid) - x->pid_text);
    if (build_texts(x) != 0 || obs_outbuf_init(&x->ob, out) != 0)
        return -1;
    return 0;
}

/* Every event of the trace, each ending with ",\n", then its
 * process_sort_index: with ",\n" too, or with "\n" when it is the last
 * event of the list. */
static int put_events(struct json_ctx *x, const char *process_name, int64_t sort_index, int last)
{
    uint32_t *stream_ids;
    size_t nstreams = 0;
    int rc = -1;
    char *p;

    if ((stream_ids = gpu_streams(x->t, &nstreams)) == NULL)
        return -1;
    if (put_metadata_events(x, stream_ids, nstreams, process_name) == 0 && put_host_slices(x) == 0 &&
        put_coll_slices(x) == 0 &&
        put_gpu_slices(x, stream_ids, nstreams) == 0 && put_range_slices(x, stream_ids, nstreams) == 0 &&
        put_phase_slices(x) == 0 && put_lost_counter(x) == 0)
        rc = 0;
    free(stream_ids);
    if (rc != 0)
        return -1;
    p = obs_outbuf_reserve(&x->ob, 200);
    p = OBS_PUT_LIT(p, "{\"ph\":\"M\",\"name\":\"process_sort_index\"");
    p = put_pid_tid(p, x, x->pid);
    p = OBS_PUT_LIT(p, ",\"args\":{\"sort_index\":");
    p = obs_fmt_i64(p, sort_index);
    p = last ? OBS_PUT_LIT(p, "}}\n") : OBS_PUT_LIT(p, "}},\n");
    obs_outbuf_commit(&x->ob, p);
    return 0;
}

int obs_report_json(const struct obs_trace *t, FILE *out, const struct obs_json_options *opt)
{
    struct json_ctx x;
    int rc = -1, saved = ENOMEM;

    if (init_ctx(&x, t, out, t->pid, (int64_t)t->t_first, opt) != 0)
        goto out;
    obs_outbuf_puts(&x.ob, "{\"traceEvents\":[\n");
    /* Every event ends with ",\n"; the last one closes the list cleanly. */
    if (put_events(&x, NULL, 0, 1) != 0) {
        obs_outbuf_finish(&x.ob);
        errno = ENOMEM;
        goto out;
    }
    obs_outbuf_puts(&x.ob, "],\n\"displayTimeUnit\":\"ns\",\n");
    put_other_data(&x);
    obs_outbuf_puts(&x.ob, "}\n");
    rc = obs_outbuf_finish(&x.ob);
    saved = errno;
out:
    free_ctx(&x);
    errno = rc ? (saved ? saved : EIO) : 0;
    return rc;
}

/* Write text to out, reporting a failure with errno set. */
static int put_text(FILE *out, const char *text)
{
    errno = 0;
    if (fputs(text, out) == EOF) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int obs_json_merge_begin(FILE *out)
{
    return put_text(out, "{\"traceEvents\":[\n");
}

int obs_json_merge_part(const struct obs_trace *t, FILE *out, const struct obs_json_part *part,
                        const struct obs_json_options *opt)
{
    struct json_ctx x;
    int rc = -1, saved = ENOMEM;

    if (init_ctx(&x, t, out, part->pid, part->origin_ns, opt) != 0)
        goto out;
    x.flow_base = part->flow_id_base;
    if (put_events(&x, part->process_name, part->sort_index, part->last) != 0) {
        obs_outbuf_finish(&x.ob);
        errno = ENOMEM;
        goto out;
    }
    rc = obs_outbuf_finish(&x.ob);
    saved = errno;
out:
    free_ctx(&x);
    errno = rc ? (saved ? saved : EIO) : 0;
    return rc;
}

int obs_json_merge_end(FILE *out, const char *other_data)
{
    if (put_text(out, "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"obsshim " PACKAGE_VERSION
                      "\"") != 0)
        return -1;
    if (other_data && other_data[0] && (put_text(out, ",") != 0 || put_text(out, other_data) != 0))
        return -1;
    if (put_text(out, "}}\n") != 0 || fflush(out) != 0) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

char *obs_json_escape(const char *s)
{
    struct json_text jt;
    return json_text(&jt, s) == 0 ? jt.s : NULL;
}
