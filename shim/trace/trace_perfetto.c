/* Perfetto protobuf export: see trace_perfetto.h. Each packet is encoded
 * into a small buffer (its length prefix needs its size), then copied into
 * a large output buffer; names are interned once per sequence. */
#include "trace_perfetto.h"
#include "trace_colls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protobuf_wire.h"
#include "trace_outbuf.h"
#include "trace_phase_slices.h"
#include "trace_progress.h"
#include "trace_run_pipe.h"
#include "trace_serving.h"

/* Field numbers (protos/perfetto/trace/...). */
enum {
    F_TRACE_PACKET = 1,
    /* TracePacket */
    F_PKT_CLOCK_SNAPSHOT = 6,
    F_PKT_TIMESTAMP = 8,
    F_PKT_SEQ_ID = 10,
    F_PKT_TRACK_EVENT = 11,
    F_PKT_INTERNED_DATA = 12,
    F_PKT_SEQ_FLAGS = 13,
    F_PKT_CLOCK_ID = 58,
    F_PKT_DEFAULTS = 59,
    F_PKT_TRACK_DESCRIPTOR = 60,
    F_PKT_FIRST_ON_SEQ = 87,
    F_PKT_COMPRESSED = 50,
    /* TracePacketDefaults */
    F_DEF_CLOCK_ID = 58,
    F_DEF_TRACK_EVENT = 11,
    F_TED_TRACK_UUID = 11,
    /* TrackEvent */
    F_TE_TYPE = 9,
    F_TE_NAME_IID = 10,
    F_TE_TRACK_UUID = 11,
    F_TE_COUNTER_VALUE = 30,
    F_TE_DEBUG_ANNOTATIONS = 4,
    /* DebugAnnotation */
    F_DA_STRING_VALUE = 6,
    F_DA_NAME = 10,
    /* the varint forms of flow_ids and terminating_flow_ids: 4 to 6 bytes
     * with the tag where the fixed64 forms (47, 48) take 10; trace
     * processor reads both */
    F_TE_FLOW_IDS_OLD = 36,
    F_TE_TERMINATING_FLOW_IDS_OLD = 42,
    /* InternedData, EventName */
    F_ID_EVENT_NAMES = 2,
    F_EN_IID = 1,
    F_EN_NAME = 2,
    /* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
    F_TD_UUID = 1,
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_THREAD = 4,
    F_TD_PARENT = 5,
    F_TD_COUNTER = 8,
    F_PD_PID = 1,
    F_PD_NAME = 6,
    F_THD_PID = 1,
    F_THD_TID = 2,
    F_THD_NAME = 5,
    /* ClockSnapshot */
    F_CS_CLOCKS = 1,
    F_CS_PRIMARY = 2,
    F_CL_ID = 1,
    F_CL_TIMESTAMP = 2,
    F_CL_INCREMENTAL = 3,
};

enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_COUNTER = 4 };
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2 };
enum { CLOCK_MONOTONIC_ID = 3, CLOCK_BOOTTIME_ID = 6, CLOCK_SEQ_INCREMENTAL = 64 };

/* Track uuids: the process, then one range per kind of track. */
#define UUID_PROCESS 1ull
#define UUID_THREAD(i) ((1ull << 32) + (i))
#define UUID_STREAM(i) ((2ull << 32) + (i))
#define UUID_PHASES(i) ((3ull << 32) + (i))
#define UUID_LOST (4ull << 32)
#define UUID_ITERS(i) ((5ull << 32) + (i))
#define UUID_ITERS_GPU(i) ((6ull << 32) + (i))

#define NAME_MAX_BYTES OBS_OUTBUF_MAX_STRING
#define PACKET_MAX (NAME_MAX_BYTES + 256)

/* A packet sequence: one track's events. */
struct pf_seq {
    uint32_t id;
    uint64_t uuid;
    uint64_t last_ts;
    int started;
};

struct pf {
    const struct obs_trace *t;
    struct obs_outbuf ob;
    struct obs_perfetto_counts n;
    uint8_t *pkt, *msg, *sub;  /* packet, nested message and its part: PACKET_MAX each */
    const char *annot_name;    /* the next BEGIN's debug annotation: node_layers (a graph launch's), iteration */
    char *annot;               /* its string value, or NULL */
    size_t annot_len;
    uint8_t *interned;         /* per name key: interned on the current sequence */
    size_t nkeys;
    const char **phase_names;  /* distinct phase slice names, by key - phase_key0 */
    uint8_t *phase_name_owned; /* that name was strdup'ed here (a derived DECODE/STEP_k) */
    size_t nphase_names, phase_key0;
    const uint32_t *streams;   /* ids of the streams with GPU time, sorted */
    size_t nstreams;
    const struct obs_perfetto_options *opt;
    uint8_t *run, *zrun;       /* compress: packets not yet written, and room to deflate them */
    size_t run_len;
    struct obs_run_pipe *pipe; /* opt->threaded: runs deflated and written on a thread (owns run) */
    const struct obs_serving_stats *serving; /* the iterations (trace_serving.h) */
    size_t kind_keys[OBS_ITER_KINDS];        /* their slices' names: the kinds */
};

/* Name keys: 1 .. nkernels-1 kernels, then the APIs, then phase names. */
static size_t api_key(const struct pf *w, unsigned api)
{
    return w->t->nkernels + (api < OBS_API_COUNT ? api : OBS_API_COUNT);
}

static size_t call_key(const struct pf *w, const struct obs_call *c)
{
    if (c->kernel && c->kind != OBS_KIND_GRAPH && c->kernel < w->t->nkernels && w->t->kernels[c->kernel].demangled[0])
        return c->kernel;
    return api_key(w, c->api);
}

static const char *key_name(const struct pf *w, size_t key)
{
    if (key < w->t->nkernels)
        return w->t->kernels[key].demangled;
    if (key < w->phase_key0)
        return obs_api_name((unsigned)(key - w->t->nkernels));
    return w->phase_names[key - w->phase_key0];
}

static void write_out(struct pf *w, const uint8_t *data, size_t len)
{
    obs_outbuf_write(&w->ob, (const char *)data, len);
    w->n.bytes += len;
}

/* Write a run of packets: one compressed_packets packet, or as it is when
 * it does not compress. On the pipe's thread when there is one (which then
 * alone touches w->ob, w->zrun and the byte counts until it is finished). */
static void write_run(struct pf *w, const uint8_t *run, size_t run_len)
{
    size_t zlen = OBS_PERFETTO_RUN_BYTES + 1024;
    if (w->opt->compress(w->zrun, &zlen, run, run_len) == 0 && zlen < run_len) {
        uint8_t head[1 + PB_VARINT_MAX + 2 + PB_VARINT_MAX], *p = head;
        size_t inner = 2 + pb_varint_len(zlen) + zlen; /* field 50: a 2-byte tag */
        p = pb_tag(p, F_TRACE_PACKET, PB_LEN);
        p = pb_varint(p, inner);
        p = pb_tag(p, F_PKT_COMPRESSED, PB_LEN);
        p = pb_varint(p, zlen);
        write_out(w, head, (size_t)(p - head));
        write_out(w, w->zrun, zlen);
        w->n.compressed_runs++;
    } else {
        write_out(w, run, run_len);
    }
}

static void consume_run(void *arg, const uint8_t *run, size_t len)
{
    write_run(arg, run, len);
}

/* The pending run: to the pipe (w->run becomes the next buffer), or written. */
static void flush_run(struct pf *w)
{
    if (w->run_len == 0)
        return;
    if (w->pipe)
        w->run = obs_run_pipe_submit(w->pipe, w->run_len);
    else
        write_run(w, w->run, w->run_len);
    w->run_len = 0;
}

/* Write the packet body [w->pkt, end) as one Trace.packet (into the
 * pending run when compressing). */
static void emit_packet(struct pf *w, const uint8_t *end)
{
    size_t len = (size_t)(end - w->pkt);
    uint8_t *p;
    w->n.packets++;
    if (w->run) {
        if (w->run_len + len + 1 + PB_VARINT_MAX > OBS_PERFETTO_RUN_BYTES)
            flush_run(w);
        p = pb_varint(pb_tag(w->run + w->run_len, F_TRACE_PACKET, PB_LEN), len);
        memcpy(p, w->pkt, len);
        w->run_len = (size_t)(p + len - w->run);
        return;
    }
    p = (uint8_t *)obs_outbuf_reserve(&w->ob, len + 1 + PB_VARINT_MAX);
    p = pb_tag(p, F_TRACE_PACKET, PB_LEN);
    p = pb_varint(p, len);
    memcpy(p, w->pkt, len);
    obs_outbuf_commit(&w->ob, (char *)p + len);
    w->n.bytes += 1 + pb_varint_len(len) + len;
}

/* A name cut to NAME_MAX_BYTES. */
static size_t name_len(const char *s)
{
    size_t n = strlen(s);
    return n > NAME_MAX_BYTES ? NAME_MAX_BYTES : n;
}

/* ---- sequences ---------------------------------------------------------------- */

/* Its first packets: incremental state cleared, the default track and the
 * incremental clock (timestamps from here on are deltas), set at ts. */
static void seq_start(struct pf *w, struct pf_seq *s, uint64_t ts)
{
    uint8_t *p = w->pkt, *m, *q;

    memset(w->interned, 0, w->nkeys);
    p = pb_uint(p, F_PKT_SEQ_ID, s->id);
    p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    p = pb_uint(p, F_PKT_FIRST_ON_SEQ, 1);
    q = pb_uint(w->sub, F_TED_TRACK_UUID, s->uuid);
    m = pb_uint(w->msg, F_DEF_CLOCK_ID, CLOCK_SEQ_INCREMENTAL);
    m = pb_bytes(m, F_DEF_TRACK_EVENT, w->sub, (size_t)(q - w->sub));
    p = pb_bytes(p, F_PKT_DEFAULTS, w->msg, (size_t)(m - w->msg));
    emit_packet(w, p);

    p = w->pkt;
    p = pb_uint(p, F_PKT_SEQ_ID, s->id);
    p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    q = pb_uint(w->sub, F_CL_ID, CLOCK_SEQ_INCREMENTAL);
    q = pb_uint(q, F_CL_TIMESTAMP, ts);
    q = pb_uint(q, F_CL_INCREMENTAL, 1);
    m = pb_bytes(w->msg, F_CS_CLOCKS, w->sub, (size_t)(q - w->sub));
    q = pb_uint(w->sub, F_CL_ID, CLOCK_MONOTONIC_ID);
    q = pb_uint(q, F_CL_TIMESTAMP, ts);
    m = pb_bytes(m, F_CS_CLOCKS, w->sub, (size_t)(q - w->sub));
    p = pb_bytes(p, F_PKT_CLOCK_SNAPSHOT, w->msg, (size_t)(m - w->msg));
    emit_packet(w, p);
    s->last_ts = ts;
    s->started = 1;
}

/* A slice BEGIN (name_key != SIZE_MAX) or END at ts on s's track; flow and
 * term_flow: a flow id leaving or ending here, 0 for none. */
static void put_event(struct pf *w, struct pf_seq *s, uint64_t ts, size_t name_key, uint64_t flow, uint64_t term_flow)
{
    uint8_t *p, *m;

    if (!s->started)
        seq_start(w, s, ts);
    if (ts < s->last_ts) /* callers keep each track's times in order; never go back */
        ts = s->last_ts;
    p = pb_uint(w->pkt, F_PKT_TIMESTAMP, ts - s->last_ts);
    s->last_ts = ts;
    p = pb_uint(p, F_PKT_SEQ_ID, s->id);
    /* the defaults, clock and names of the sequence apply (trace_packet.proto
     * asks for the flag on every packet after TracePacketDefaults) */
    p = pb_uint(p, F_PKT_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
    m = pb_uint(w->msg, F_TE_TYPE, name_key != SIZE_MAX ? TYPE_SLICE_BEGIN : TYPE_SLICE_END);
    if (name_key != SIZE_MAX)
        m = pb_uint(m, F_TE_NAME_IID, name_key + 1);
    if (name_key != SIZE_MAX && w->annot != NULL) {
        uint8_t *q = pb_bytes(w->sub, F_DA_NAME, w->annot_name, strlen(w->annot_name));
        q = pb_bytes(q, F_DA_STRING_VALUE, w->annot, w->annot_len);
        m = pb_bytes(m, F_TE_DEBUG_ANNOTATIONS, w->sub, (size_t)(q - w->sub));
        w->annot = NULL;
    }
    if (flow)
        m = pb_uint(m, F_TE_FLOW_IDS_OLD, flow);
    if (term_flow)
        m = pb_uint(m, F_TE_TERMINATING_FLOW_IDS_OLD, term_flow);
    p = pb_bytes(p, F_PKT_TRACK_EVENT, w->msg, (size_t)(m - w->msg));
    if (name_key != SIZE_MAX && !w->interned[name_key]) {
        const char *name = key_name(w, name_key);
        uint8_t *q = pb_uint(w->sub, F_EN_IID, name_key + 1);
        q = pb_bytes(q, F_EN_NAME, name, name_len(name));
        m = pb_bytes(w->msg, F_ID_EVENT_NAMES, w->sub, (size_t)(q - w->sub));
        p = pb_bytes(p, F_PKT_INTERNED_DATA, w->msg, (size_t)(m - w->msg));
        w->interned[name_key] = 1;
    }
    emit_packet(w, p);
}

/* Ends of the open slices of one track, to keep its slices nested. */
struct nest {
    uint64_t *end;
    size_t depth, cap;
};

/* Close the open slices that end by b (END events), clamp [b, *e) into
 * the one still open, and open it. */
static int nest_open(struct pf *w, struct pf_seq *s, struct nest *n, uint64_t b, uint64_t *e)
{
    while (n->depth > 0 && n->end[n->depth - 1] <= b)
        put_event(w, s, n->end[--n->depth], SIZE_MAX, 0, 0);
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

static void nest_close_all(struct pf *w, struct pf_seq *s, struct nest *n)
{
    while (n->depth > 0)
        put_event(w, s, n->end[--n->depth], SIZE_MAX, 0, 0);
}

/* ---- tracks ------------------------------------------------------------------- */

static void put_descriptor(struct pf *w, uint64_t uuid, uint64_t parent, const char *name, const uint8_t *sub,
                           size_t sublen, unsigned subfield)
{
    uint8_t *p = pb_uint(w->pkt, F_PKT_SEQ_ID, 1), *m;
    m = pb_uint(w->msg, F_TD_UUID, uuid);
    if (parent)
        m = pb_uint(m, F_TD_PARENT, parent);
    if (name)
        m = pb_bytes(m, F_TD_NAME, name, name_len(name));
    if (subfield)
        m = pb_bytes(m, subfield, sub, sublen);
    p = pb_bytes(p, F_PKT_TRACK_DESCRIPTOR, w->msg, (size_t)(m - w->msg));
    emit_packet(w, p);
    w->n.tracks++;
}

static const char *thread_label(const struct obs_thread *th, char *buf, size_t len)
{
    if (th->name && th->name[0])
        return th->name;
    snprintf(buf, len, "thread %u", th->tid);
    return buf;
}

uint8_t *obs_perfetto_clock_snapshot(uint8_t *p, uint8_t *msg, uint8_t *sub, uint64_t ts)
{
    uint8_t *m, *q = pb_uint(sub, F_CL_ID, CLOCK_MONOTONIC_ID);
    q = pb_uint(q, F_CL_TIMESTAMP, ts);
    m = pb_bytes(msg, F_CS_CLOCKS, sub, (size_t)(q - sub));
    q = pb_uint(sub, F_CL_ID, CLOCK_BOOTTIME_ID);
    q = pb_uint(q, F_CL_TIMESTAMP, ts);
    m = pb_bytes(m, F_CS_CLOCKS, sub, (size_t)(q - sub));
    m = pb_uint(m, F_CS_PRIMARY, CLOCK_MONOTONIC_ID);
    return pb_bytes(p, F_PKT_CLOCK_SNAPSHOT, msg, (size_t)(m - msg));
}

/* The trace clock (CLOCK_MONOTONIC, BOOTTIME read as the same) and the
 * descriptors of the process, threads, streams, phase tracks and counter. */
static void put_tracks(struct pf *w, const uint32_t *streams, size_t nstreams, const uint8_t *has_phases,
                       const uint8_t *has_iters, int lost)
{
    const struct obs_trace *t = w->t;
    const char *exe = obs_trace_meta(t, "exe"), *cmdline = obs_trace_meta(t, "cmdline");
    uint8_t local[4400], *q;
    char name[4200], buf[32];
    size_t i;

    emit_packet(w, obs_perfetto_clock_snapshot(pb_uint(w->pkt, F_PKT_SEQ_ID, 1), w->msg, w->sub, t->t_first));
    if (exe == NULL || exe[0] == '\0')
        exe = cmdline && cmdline[0] ? cmdline : "unknown";
    snprintf(name, sizeof name, "obsshim pid %u: %.4000s", t->pid, exe);
    q = pb_uint(local, F_PD_PID, t->pid);
    q = pb_string(q, F_PD_NAME, name);
    put_descriptor(w, UUID_PROCESS, 0, NULL, local, (size_t)(q - local), F_TD_PROCESS);
    for (i = 0; i < t->nthreads; i++) {
        const char *tn = thread_label(&t->threads[i], buf, sizeof buf);
        q = pb_uint(local, F_THD_PID, t->pid);
        q = pb_uint(q, F_THD_TID, t->threads[i].tid);
        q = pb_bytes(q, F_THD_NAME, tn, strlen(tn) > 4000 ? 4000 : strlen(tn));
        put_descriptor(w, UUID_THREAD(i), UUID_PROCESS, NULL, local, (size_t)(q - local), F_TD_THREAD);
        if (has_phases[i]) {
            snprintf(name, sizeof name, "phases: %.4000s", tn);
            put_descriptor(w, UUID_PHASES(i), UUID_PROCESS, name, NULL, 0, 0);
        }
        if (has_iters[i] & 1) {
            snprintf(name, sizeof name, "iterations: %.4000s", tn);
            put_descriptor(w, UUID_ITERS(i), UUID_PROCESS, name, NULL, 0, 0);
        }
        if (has_iters[i] & 2) {
            snprintf(name, sizeof name, "iterations on the GPU: %.4000s", tn);
            put_descriptor(w, UUID_ITERS_GPU(i), UUID_PROCESS, name, NULL, 0, 0);
        }
    }
    for (i = 0; i < nstreams; i++) {
        snprintf(name, sizeof name, "GPU stream %u", streams[i]);
        put_descriptor(w, UUID_STREAM(i), UUID_PROCESS, name, NULL, 0, 0);
    }
    if (lost)
        put_descriptor(w, UUID_LOST, UUID_PROCESS, "records lost", local, 0, F_TD_COUNTER);
}

/* ---- events ------------------------------------------------------------------- */

static int cmp_by_host_begin(const void *a, const void *b, void *arg)
{
    const struct obs_trace *t = arg;
    const struct obs_call *x = &t->calls[*(const uint32_t *)a], *y = &t->calls[*(const uint32_t *)b];
    if (x->host_begin != y->host_begin)
        return x->host_begin < y->host_begin ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int cmp_by_gpu_begin(const void *a, const void *b, void *arg)
{
    const struct obs_trace *t = arg;
    const struct obs_call *x = &t->calls[*(const uint32_t *)a], *y = &t->calls[*(const uint32_t *)b];
    uint64_t bx = t->gpu[x->gpu].begin, by = t->gpu[y->gpu].begin;
    if (bx != by)
        return bx < by ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Call indexes grouped by group_of (a value < ngroups, or ngroups to leave
 * a call out), in seq order within a group; start[g] .. start[g+1]. */
static uint32_t *group_calls(const struct obs_trace *t, size_t ngroups, size_t (*group_of)(const struct pf *, uint32_t),
                             const struct pf *w, size_t **start_out)
{
    size_t *start = calloc(ngroups + 2, sizeof *start), *fill, i, g;
    uint32_t *order = malloc((t->ncalls ? t->ncalls : 1) * sizeof *order);
    if (start == NULL || order == NULL)
        goto fail;
    for (i = 0; i < t->ncalls; i++)
        start[group_of(w, (uint32_t)i) + 1]++;
    for (g = 1; g <= ngroups + 1; g++)
        start[g] += start[g - 1];
    fill = malloc((ngroups + 1) * sizeof *fill);
    if (fill == NULL)
        goto fail;
    memcpy(fill, start, (ngroups + 1) * sizeof *fill);
    for (i = 0; i < t->ncalls; i++)
        order[fill[group_of(w, (uint32_t)i)]++] = (uint32_t)i;
    free(fill);
    *start_out = start;
    return order;
fail:
    free(start);
    free(order);
    return NULL;
}

static size_t thread_of(const struct pf *w, uint32_t i)
{
    return w->t->calls[i].thread;
}

static size_t stream_of(const struct pf *w, uint32_t i)
{
    const struct obs_call *c = &w->t->calls[i];
    size_t lo = 0, hi = w->nstreams;
    if (c->gpu == OBS_NONE)
        return w->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->streams[mid] < c->stream)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A graph launch's node_layers annotation, as the JSON's (docs/layers.md,
 * "Graphs"): its exec's kernel nodes' layers in walk order, run-length
 * coded ("-x1,0x4,1x4,-x2"); only where layers were found, and left out
 * where it would be over NODE_LAYERS_MAX bytes (hundreds of layers). */
#define NODE_LAYERS_MAX 4096u
static void graph_node_layers(struct pf *w, const struct obs_call *c)
{
    const struct obs_graph *g = c->kind == OBS_KIND_GRAPH ? obs_call_graph(w->t, c) : NULL;
    char *buf = (char *)w->sub + PACKET_MAX - NODE_LAYERS_MAX; /* the sub buffer's tail: free until put_event */
    size_t i = 0, j, len = 0;
    w->annot = NULL;
    if (g == NULL || g->layers == 0)
        return;
    while (i < g->nnodes) {
        char run[48];
        int n;
        for (j = i; j < g->nnodes && g->nodes[j].layer == g->nodes[i].layer; j++)
            ;
        if (g->nodes[i].layer == OBS_NO_LAYER)
            n = snprintf(run, sizeof run, "%s-x%zu", i ? "," : "", j - i);
        else
            n = snprintf(run, sizeof run, "%s%ux%zu", i ? "," : "", g->nodes[i].layer, j - i);
        if (n < 0 || len + (size_t)n > NODE_LAYERS_MAX - 64) /* room for the annotation's own fields */
            return;
        memcpy(buf + len, run, (size_t)n);
        len += (size_t)n;
        i = j;
    }
    w->annot_name = "node_layers";
    w->annot = buf;
    w->annot_len = len;
}

static int put_host_slices(struct pf *w)
{
    const struct obs_trace *t = w->t;
    size_t *start = NULL, th, i;
    uint32_t *order = group_calls(t, t->nthreads, thread_of, w, &start);
    struct nest nest = {0};
    int rc = order ? 0 : -1;

    for (th = 0; rc == 0 && th < t->nthreads; th++) {
        struct pf_seq s = {(uint32_t)(2 + th), UUID_THREAD(th), 0, 0};
        for (i = start[th] + 1; i < start[th + 1]; i++)
            if (t->calls[order[i]].host_begin < t->calls[order[i - 1]].host_begin) {
                qsort_r(order + start[th], start[th + 1] - start[th], sizeof *order, cmp_by_host_begin, (void *)t);
                break;
            }
        nest.depth = 0;
        /* progress: the host slices, then the device slices */
        for (i = start[th]; rc == 0 && i < start[th + 1]; obs_progress_tick(++i, t->ncalls + t->ngpu)) {
            const struct obs_call *c = &t->calls[order[i]];
            uint64_t b = c->host_begin, e = c->host_end;
            rc = nest_open(w, &s, &nest, b, &e);
            graph_node_layers(w, c);
            put_event(w, &s, b, call_key(w, c), c->gpu != OBS_NONE ? (uint64_t)order[i] + 1 : 0, 0);
            w->n.host_slices++;
            w->n.flows += c->gpu != OBS_NONE;
        }
        nest_close_all(w, &s, &nest);
    }
    free(nest.end);
    free(start);
    free(order);
    return rc;
}

static int put_gpu_slices(struct pf *w, size_t nstreams)
{
    const struct obs_trace *t = w->t;
    size_t *start = NULL, st, i;
    uint32_t *order = group_calls(t, nstreams, stream_of, w, &start);

    if (order == NULL)
        return -1;
    for (st = 0; st < nstreams; st++) {
        struct pf_seq s = {(uint32_t)(2 + t->nthreads + st), UUID_STREAM(st), 0, 0};
        uint64_t prev_end = 0;
        for (i = start[st] + 1; i < start[st + 1]; i++)
            if (t->gpu[t->calls[order[i]].gpu].begin < t->gpu[t->calls[order[i - 1]].gpu].begin) {
                qsort_r(order + start[st], start[st + 1] - start[st], sizeof *order, cmp_by_gpu_begin, (void *)t);
                break;
            }
        for (i = start[st]; i < start[st + 1]; obs_progress_tick(t->ncalls + ++i, t->ncalls + t->ngpu)) {
            const struct obs_call *c = &t->calls[order[i]];
            uint64_t b = t->gpu[c->gpu].begin, e = t->gpu[c->gpu].end;
            if (b < prev_end) /* a stream runs one thing at a time: clamp, as the JSON */
                b = prev_end;
            if (e < b)
                e = b;
            prev_end = e;
            put_event(w, &s, b, call_key(w, c), 0, (uint64_t)order[i] + 1);
            put_event(w, &s, e, SIZE_MAX, 0, 0);
            w->n.gpu_slices++;
        }
    }
    free(start);
    free(order);
    return 0;
}

/* OBS_GPU_TIME=steps: each stream's range spans as nested slices of its
 * GPU track (keys: their names' keys, by range span index). */
static int put_range_slices(struct pf *w, const size_t *rkeys)
{
    const struct obs_trace *t = w->t;
    struct nest nest = {0};
    struct pf_seq s = {0, 0, 0, 0};
    size_t i, n = 0, slot = SIZE_MAX;
    uint32_t *order;
    int rc = 0;

    if (t->ngpu != 0 || t->nrange_spans == 0) /* a trace with per-call spans draws those */
        return 0;
    if ((order = obs_range_spans_by_stream(t, &n)) == NULL)
        return -1;
    for (i = 0; i < n && rc == 0; i++) {
        const struct obs_range_span *r = &t->range_spans[order[i]];
        uint64_t b = r->begin, e = r->end;
        size_t lo = 0, hi = w->nstreams;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (w->streams[mid] < r->stream)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo != slot) {
            if (slot != SIZE_MAX)
                nest_close_all(w, &s, &nest);
            slot = lo;
            s = (struct pf_seq){(uint32_t)(2 + t->nthreads + slot), UUID_STREAM(slot), 0, 0};
            nest.depth = 0;
        }
        rc = nest_open(w, &s, &nest, b, &e);
        put_event(w, &s, b, rkeys[order[i]], 0, 0);
        w->n.gpu_slices++;
    }
    if (slot != SIZE_MAX)
        nest_close_all(w, &s, &nest);
    free(nest.end);
    free(order);
    return rc;
}

/* Distinct phase slice names: an open-addressing hash of their indexes
 * (in w->phase_names), 2^k slots, at most half full. */
struct name_set {
    uint32_t *slot; /* index + 1, 0 = empty */
    size_t mask;
};

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

/* The key of name: found, or added to w->phase_names (copied when it is
 * the caller's buffer). SIZE_MAX when out of memory. */
static size_t phase_name_key(struct pf *w, struct name_set *set, const char *name, int copy)
{
    size_t h = (size_t)name_hash(name) & set->mask;
    while (set->slot[h]) {
        const char *seen = w->phase_names[set->slot[h] - 1];
        if (strcmp(seen, name) == 0)
            return w->phase_key0 + set->slot[h] - 1;
        h = (h + 1) & set->mask;
    }
    if (copy) {
        name = strdup(name);
        if (name == NULL)
            return SIZE_MAX;
        w->phase_name_owned[w->nphase_names] = 1;
    }
    w->phase_names[w->nphase_names++] = name;
    set->slot[h] = (uint32_t)w->nphase_names;
    return w->phase_key0 + w->nphase_names - 1;
}

/* A COMM/<op> slice's annotation "nccl": the call, what it moves, its
 * communicator (identity, rank of ranks) and sequence number there. */
static void coll_annotation(struct pf *w, const struct obs_coll *c)
{
    static char buf[320];
    const struct obs_comm *comm = obs_coll_comm(w->t, c);
    int n = snprintf(buf, sizeof buf, "%s", obs_coll_op_name(c->op));
    if (obs_coll_is_op(c->op) && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " bytes=%llu count=%llu %s", (unsigned long long)c->bytes,
                      (unsigned long long)c->count, obs_nccl_type_name(c->datatype));
    if (c->redop != OBS_NCCL_NO_REDOP && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %s", obs_nccl_redop_name(c->redop));
    if (c->peer >= 0 && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " %s=%d",
                      c->op == OBS_COLL_SEND || c->op == OBS_COLL_RECV ? "peer" : "root", (int)c->peer);
    if (comm != NULL && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " comm=%016llx rank=%d/%d", (unsigned long long)comm->hash,
                      (int)comm->rank, (int)comm->nranks);
    if (c->seq != OBS_NO_SEQ && n > 0 && (size_t)n < sizeof buf)
        n += snprintf(buf + n, sizeof buf - (size_t)n, " seq=%u", c->seq);
    if (n < 0)
        return;
    w->annot = buf;
    w->annot_len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    w->annot_name = "nccl";
}

static int put_phase_slices(struct pf *w, const struct obs_phase_slice *sl, size_t nsl, size_t *keys)
{
    const struct obs_trace *t = w->t;
    struct nest nest = {0};
    struct pf_seq s = {0, 0, 0, 0};
    uint32_t thread = OBS_NONE;
    size_t i;
    int rc = 0;

    for (i = 0; i < nsl && rc == 0; i++) {
        uint64_t b = sl[i].b, e = sl[i].e;
        if (sl[i].thread != thread) {
            if (thread != OBS_NONE)
                nest_close_all(w, &s, &nest);
            thread = sl[i].thread;
            s = (struct pf_seq){(uint32_t)(2 + t->nthreads + w->nstreams + thread), UUID_PHASES(thread), 0, 0};
            nest.depth = 0;
        }
        rc = nest_open(w, &s, &nest, b, &e);
        if (sl[i].kind == OBS_PHASE_SLICE_COMM) /* what the call was, as the JSON's args */
            coll_annotation(w, &t->colls[sl[i].range]);
        put_event(w, &s, b, keys[i], 0, 0);
        w->n.phase_slices++;
    }
    if (thread != OBS_NONE)
        nest_close_all(w, &s, &nest);
    free(nest.end);
    return rc;
}

/* The serving loop's iterations (trace_serving.h): per thread a track of
 * one slice per iteration over its host span, named after its kind (the UI
 * colours slices by name), with an "iteration" annotation (its number,
 * generation, tokens and sequences, gap); where they have GPU spans, a
 * track of those too. gpu: which of the two. */
static int put_iteration_slices(struct pf *w, int gpu)
{
    const struct obs_serving_stats *sv = w->serving;
    const struct obs_trace *t = w->t;
    struct nest nest = {0};
    struct pf_seq s = {0, 0, 0, 0};
    uint32_t thread = OBS_NONE;
    char text[160];
    size_t i;
    int rc = 0;

    for (i = 0; i < sv->nrows && rc == 0; i++) {
        const struct obs_iteration_row *r = &sv->rows[i];
        uint64_t b = gpu ? r->gpu_begin : r->host_begin, e = gpu ? r->gpu_end : r->host_end;
        int n;
        if (gpu && !r->gpu_timed)
            continue;
        if (r->thread_index != thread) {
            if (thread != OBS_NONE)
                nest_close_all(w, &s, &nest);
            thread = r->thread_index;
            s = (struct pf_seq){(uint32_t)(2 + (gpu ? 3 : 2) * t->nthreads + w->nstreams + thread),
                                gpu ? UUID_ITERS_GPU(thread) : UUID_ITERS(thread), 0, 0};
            nest.depth = 0;
        }
        n = snprintf(text, sizeof text, "ITERATION/%u generation=%u kind=%s tokens=", r->iteration, r->generation,
                     obs_iteration_kind_name(r->kind));
        if (r->has_tokens)
            n += snprintf(text + n, sizeof text - (size_t)n, "%llu", (unsigned long long)r->tokens);
        n += snprintf(text + n, sizeof text - (size_t)n, " sequences=");
        if (r->has_sequences)
            n += snprintf(text + n, sizeof text - (size_t)n, "%llu", (unsigned long long)r->sequences);
        if (r->has_gap)
            n += snprintf(text + n, sizeof text - (size_t)n, " gap_ns=%llu", (unsigned long long)r->gap_ns);
        rc = nest_open(w, &s, &nest, b, &e);
        w->annot_name = "iteration";
        w->annot = text;
        w->annot_len = n > 0 && (size_t)n < sizeof text ? (size_t)n : strlen(text);
        put_event(w, &s, b, w->kind_keys[r->kind < OBS_ITER_KINDS ? r->kind : OBS_ITER_UNKNOWN], 0, 0);
        w->n.iteration_slices++;
    }
    if (thread != OBS_NONE)
        nest_close_all(w, &s, &nest);
    free(nest.end);
    return rc;
}

static int cmp_lost_time(const void *a, const void *b)
{
    const struct obs_lost *x = a, *y = b;
    return x->t_last < y->t_last ? -1 : x->t_last > y->t_last;
}

/* The "records lost" counter: the running total at each LOST record's last
 * loss, absolute CLOCK_MONOTONIC timestamps on the descriptors' sequence. */
static int put_lost_counter(struct pf *w)
{
    const struct obs_trace *t = w->t;
    struct obs_lost *lost = malloc((t->nlost ? t->nlost : 1) * sizeof *lost);
    uint64_t total = 0;
    size_t i;
    if (lost == NULL)
        return -1;
    if (t->nlost) /* t->lost is NULL when there are none */
        memcpy(lost, t->lost, t->nlost * sizeof *lost);
    qsort(lost, t->nlost, sizeof *lost, cmp_lost_time);
    for (i = 0; i < t->nlost; i++) {
        uint8_t *p = w->pkt, *m;
        total += lost[i].count;
        p = pb_uint(p, F_PKT_TIMESTAMP, lost[i].t_last);
        p = pb_uint(p, F_PKT_CLOCK_ID, CLOCK_MONOTONIC_ID);
        p = pb_uint(p, F_PKT_SEQ_ID, 1);
        m = pb_uint(w->msg, F_TE_TYPE, TYPE_COUNTER);
        m = pb_uint(m, F_TE_TRACK_UUID, UUID_LOST);
        m = pb_uint(m, F_TE_COUNTER_VALUE, total);
        p = pb_bytes(p, F_PKT_TRACK_EVENT, w->msg, (size_t)(m - w->msg));
        emit_packet(w, p);
        w->n.counter_events++;
    }
    free(lost);
    return 0;
}

/* Distinct streams of calls with GPU time (with none: of the range spans,
 * OBS_GPU_TIME=steps), sorted; *n gets their count. */
static uint32_t *gpu_streams(const struct obs_trace *t, size_t *n)
{
    uint32_t *ids = malloc(16 * sizeof *ids), last = 0;
    size_t cap = 16, count = 0, i, nitems = t->ngpu ? t->ncalls : t->nrange_spans;
    int have_last = 0;
    if (ids == NULL)
        return NULL;
    for (i = 0; i < nitems; i++) {
        uint32_t stream = t->ngpu ? t->calls[i].stream : t->range_spans[i].stream;
        size_t lo = 0, hi = count;
        if ((t->ngpu && t->calls[i].gpu == OBS_NONE) || (have_last && stream == last))
            continue;
        last = stream;
        have_last = 1;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ids[mid] < stream)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < count && ids[lo] == stream)
            continue;
        if (count == cap) {
            uint32_t *p = realloc(ids, (cap *= 2) * sizeof *ids);
            if (p == NULL) {
                free(ids);
                return NULL;
            }
            ids = p;
        }
        memmove(ids + lo + 1, ids + lo, (count - lo) * sizeof *ids);
        ids[lo] = stream;
        count++;
    }
    *n = count;
    return ids;
}

int obs_report_perfetto(const struct obs_trace *t, FILE *out, const struct obs_perfetto_options *opt,
                        struct obs_perfetto_counts *counts)
{
    static const struct obs_perfetto_options plain = {NULL};
    struct pf w;
    struct obs_phase_slice *sl = NULL;
    struct obs_serving_stats serving;
    size_t nsl = 0, nstreams = 0, i, *keys = NULL, *rkeys = NULL, nr = t->ngpu ? 0 : t->nrange_spans;
    uint32_t *streams = NULL;
    uint8_t *has_phases = NULL, *has_iters = NULL;
    int have_serving = 0;
    int rc = -1, saved;

    memset(&w, 0, sizeof w);
    w.t = t;
    w.opt = opt ? opt : &plain;
    if (obs_outbuf_init(&w.ob, out) != 0)
        return -1;
    errno = 0;
    w.pkt = malloc(3 * PACKET_MAX);
    streams = gpu_streams(t, &nstreams);
    sl = obs_phase_slices(t, &nsl);
    has_phases = calloc(t->nthreads + 1, 1);
    has_iters = calloc(t->nthreads + 1, 1);
    keys = malloc((nsl + 1) * sizeof *keys);
    rkeys = malloc((nr + 1) * sizeof *rkeys);
    w.phase_names = malloc((nsl + nr + OBS_ITER_KINDS + 1) * sizeof *w.phase_names);
    w.phase_name_owned = calloc(nsl + nr + OBS_ITER_KINDS + 1, 1);
    if (w.pkt == NULL || streams == NULL || sl == NULL || has_phases == NULL || has_iters == NULL || keys == NULL ||
        rkeys == NULL || w.phase_names == NULL || w.phase_name_owned == NULL)
        goto out;
    if (obs_trace_has_iterations(t)) {
        if (obs_serving_compute(t, NULL, &serving) != 0)
            goto out;
        have_serving = 1;
        w.serving = &serving;
        for (i = 0; i < serving.nrows; i++)
            has_iters[serving.rows[i].thread_index] |= (uint8_t)(1 | (serving.rows[i].gpu_timed ? 2 : 0));
    }
    if (w.opt->compress) {
        w.zrun = malloc(OBS_PERFETTO_RUN_BYTES + 1024);
        if (w.zrun == NULL)
            goto out;
        if (w.opt->threaded)
            w.pipe = obs_run_pipe_start(OBS_PERFETTO_RUN_BYTES, consume_run, &w);
        w.run = w.pipe ? obs_run_pipe_buffer(w.pipe) : malloc(OBS_PERFETTO_RUN_BYTES);
        if (w.run == NULL)
            goto out;
    }
    w.msg = w.pkt + PACKET_MAX;
    w.sub = w.msg + PACKET_MAX;
    w.streams = streams;
    w.nstreams = nstreams;
    w.phase_key0 = t->nkernels + OBS_API_COUNT + 1;
    {
        struct name_set set;
        size_t slots = 16, k = 0, j;
        while (slots < 2 * (nsl + nr + OBS_ITER_KINDS + 1))
            slots *= 2;
        set.mask = slots - 1;
        set.slot = calloc(slots, sizeof *set.slot);
        if (set.slot == NULL)
            goto out;
        for (i = 0; i < nsl; i++) {
            char buf[32];
            const char *name = obs_phase_slice_name(t, &sl[i], buf, sizeof buf);
            has_phases[sl[i].thread] = 1;
            keys[i] = phase_name_key(&w, &set, name, name == buf);
            if (keys[i] == SIZE_MAX)
                break;
        }
        for (k = 0; i == nsl && k < nr; k++) {
            char buf[256];
            const char *name = obs_range_span_name(t, &t->range_spans[k], buf, sizeof buf);
            rkeys[k] = phase_name_key(&w, &set, name, name == buf);
            if (rkeys[k] == SIZE_MAX)
                break;
        }
        for (j = 0; i == nsl && k == nr && j < OBS_ITER_KINDS; j++)
            w.kind_keys[j] = phase_name_key(&w, &set, obs_iteration_kind_name((unsigned)j), 0);
        free(set.slot);
        if (i < nsl || k < nr)
            goto out;
        for (j = 0; j < OBS_ITER_KINDS; j++)
            if (w.kind_keys[j] == SIZE_MAX)
                goto out;
    }
    w.nkeys = w.phase_key0 + w.nphase_names;
    w.interned = malloc(w.nkeys + 1);
    if (w.interned == NULL)
        goto out;
    put_tracks(&w, streams, nstreams, has_phases, has_iters, t->nlost > 0);
    if (put_host_slices(&w) != 0 || put_gpu_slices(&w, nstreams) != 0 || put_range_slices(&w, rkeys) != 0 ||
        put_phase_slices(&w, sl, nsl, keys) != 0 ||
        (have_serving && (put_iteration_slices(&w, 0) != 0 || put_iteration_slices(&w, 1) != 0)) ||
        put_lost_counter(&w) != 0)
        goto out;
    if (w.run)
        flush_run(&w);
    rc = 0;
out:
    saved = rc != 0 ? (errno ? errno : ENOMEM) : 0;
    if (w.pipe) { /* every run submitted is written */
        obs_run_pipe_finish(w.pipe);
        w.run = NULL;
    }
    if (obs_outbuf_finish(&w.ob) != 0) /* a write error since init */
        rc = -1;
    else if (rc != 0)
        errno = saved;
    if (counts)
        *counts = w.n;
    for (i = 0; i < w.nphase_names; i++)
        if (w.phase_name_owned[i])
            free((void *)w.phase_names[i]);
    free(w.phase_names);
    free(w.phase_name_owned);
    free(w.interned);
    free(w.run);
    free(w.zrun);
    free(w.pkt);
    free(keys);
    free(rkeys);
    free(has_phases);
    free(has_iters);
    if (have_serving)
        obs_serving_free(&serving);
    free(sl);
    free(streams);
    return rc;
}
