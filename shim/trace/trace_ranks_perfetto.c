/* The ranks' Perfetto trace: see trace_ranks_perfetto.h. Small (a slice
 * per collective and rank, not per call): the events are collected, sorted
 * by time and written one packet each with absolute timestamps and names
 * given in full (no interning, no incremental clock, no compression). */
#include "trace_ranks_perfetto.h"
#include "trace_colls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "protobuf_wire.h"
#include "trace_perfetto.h"

/* Field numbers (Perfetto's protos/perfetto/trace/...; tests/perfetto/). */
enum {
    F_TRACE_PACKET = 1,
    F_PKT_TIMESTAMP = 8,
    F_PKT_SEQ_ID = 10,
    F_PKT_TRACK_EVENT = 11,
    F_PKT_CLOCK_ID = 58,
    F_PKT_TRACK_DESCRIPTOR = 60,
    F_TE_DEBUG_ANNOTATIONS = 4,
    F_TE_TYPE = 9,
    F_TE_TRACK_UUID = 11,
    F_TE_NAME = 23,
    F_TE_FLOW_IDS_OLD = 36,
    F_TE_TERMINATING_FLOW_IDS_OLD = 42,
    F_DA_STRING_VALUE = 6,
    F_DA_NAME = 10,
    F_TD_UUID = 1,
    F_TD_NAME = 2,
    F_TD_PROCESS = 3,
    F_TD_PARENT = 5,
    F_PD_PID = 1,
    F_PD_NAME = 6,
};
enum { TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2 };
enum { CLOCK_MONOTONIC_ID = 3 };

#define UUID_PROCESS(i) ((7ull << 32) + (i))
#define UUID_COLLS(i) ((8ull << 32) + (i))
#define UUID_STEPS(i) ((9ull << 32) + (i))
#define PID_STRIDE 10000000u /* as obs-report merge moves a pid an earlier input has */
#define PACKET_MAX 1024

/* A slice to draw: its track, span, and what its BEGIN carries. */
struct slice {
    uint64_t b, e, track;
    uint64_t flow, term_flow;
    uint32_t input;
    uint32_t what; /* collective index, or step index | STEP_BIT */
};
#define STEP_BIT 0x80000000u

/* One BEGIN or END. */
struct event {
    uint64_t ts;
    uint32_t slice;
    uint32_t end;
};

struct writer {
    FILE *out;
    const struct obs_ranks *r;
    struct obs_ranks_perfetto_counts n;
    uint8_t pkt[PACKET_MAX], msg[PACKET_MAX], sub[PACKET_MAX];
    int failed;
};

static void emit(struct writer *w, const uint8_t *end)
{
    uint8_t head[1 + PB_VARINT_MAX], *h = pb_varint(pb_tag(head, F_TRACE_PACKET, PB_LEN), (uint64_t)(end - w->pkt));
    if (fwrite(head, 1, (size_t)(h - head), w->out) != (size_t)(h - head) ||
        fwrite(w->pkt, 1, (size_t)(end - w->pkt), w->out) != (size_t)(end - w->pkt))
        w->failed = 1;
    w->n.packets++;
}

static void put_track(struct writer *w, uint64_t uuid, uint64_t parent, const char *name, uint32_t pid,
                      const char *process_name)
{
    uint8_t *p = pb_uint(w->pkt, F_PKT_SEQ_ID, 1), *m = pb_uint(w->msg, F_TD_UUID, uuid);
    if (parent)
        m = pb_uint(m, F_TD_PARENT, parent);
    if (name)
        m = pb_string(m, F_TD_NAME, name);
    if (process_name) {
        uint8_t *q = pb_uint(w->sub, F_PD_PID, pid);
        q = pb_string(q, F_PD_NAME, process_name);
        m = pb_bytes(m, F_TD_PROCESS, w->sub, (size_t)(q - w->sub));
    }
    p = pb_bytes(p, F_PKT_TRACK_DESCRIPTOR, w->msg, (size_t)(m - w->msg));
    emit(w, p);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

static void put_tracks(struct writer *w, const char *const *paths)
{
    const struct obs_ranks *r = w->r;
    size_t i, k;
    emit(w, obs_perfetto_clock_snapshot(pb_uint(w->pkt, F_PKT_SEQ_ID, 1), w->msg, w->sub, r->axis0));
    for (i = 0; i < r->ninputs; i++) {
        const struct obs_trace *t = r->inputs[i].t;
        const char *path = paths && paths[i] ? paths[i] : t->path ? t->path : "";
        uint32_t pid = t->pid;
        char name[320];
        for (k = 0; k < i; k++) /* an earlier rank's pid: moved (docs/merge.md) */
            if (r->inputs[k].t->pid == t->pid) {
                pid = t->pid + PID_STRIDE * (uint32_t)(i + 1);
                break;
            }
        snprintf(name, sizeof name, "rank %ld: %.200s (pid %u)", r->inputs[i].rank, base_name(path), t->pid);
        put_track(w, UUID_PROCESS(i), 0, NULL, pid, name);
        put_track(w, UUID_COLLS(i), UUID_PROCESS(i), "collectives", 0, NULL);
        put_track(w, UUID_STEPS(i), UUID_PROCESS(i), "steps", 0, NULL);
        w->n.process_tracks++;
    }
}

static void put_event(struct writer *w, const struct slice *s, uint64_t ts, int end)
{
    const struct obs_ranks *r = w->r;
    uint8_t *p = pb_uint(w->pkt, F_PKT_TIMESTAMP, ts), *m;
    char name[64], annot[400];
    p = pb_uint(p, F_PKT_CLOCK_ID, CLOCK_MONOTONIC_ID);
    p = pb_uint(p, F_PKT_SEQ_ID, 1);
    m = pb_uint(w->msg, F_TE_TYPE, end ? TYPE_SLICE_END : TYPE_SLICE_BEGIN);
    m = pb_uint(m, F_TE_TRACK_UUID, s->track);
    if (!end) {
        const char *aname;
        uint8_t *q;
        if (s->what & STEP_BIT) {
            const struct obs_rank_step *st = &r->steps[s->what & ~STEP_BIT];
            const struct obs_rank_step_cell *c = &st->cells[s->input];
            snprintf(name, sizeof name, "DECODE/STEP_%u", st->step);
            snprintf(annot, sizeof annot,
                     "generation=%u step_ns=%llu comm_ns=%llu compute_ns=%llu collectives=%u slowest=rank %ld "
                     "time_base=%s",
                     st->generation, (unsigned long long)c->step_ns, (unsigned long long)c->comm_ns,
                     (unsigned long long)c->compute_ns, c->colls, st->slowest, st->gpu ? "gpu" : "host");
            aname = "step";
        } else {
            const struct obs_rank_coll *c = &r->colls[s->what];
            snprintf(name, sizeof name, "%s", obs_rank_coll_name(c));
            snprintf(annot, sizeof annot,
                     "seq=%u comm=%016llx bytes=%llu skew_ns=%llu first=rank %ld straggler=rank %ld "
                     "duration_ns=%llu busbw_gbs=%.3f time_base=%s%s",
                     c->seq, (unsigned long long)c->hash, (unsigned long long)c->bytes,
                     (unsigned long long)c->skew_ns, c->first_rank, c->straggler,
                     (unsigned long long)c->duration_ns, c->busbw_gbs, c->gpu ? "gpu" : "host",
                     c->complete ? "" : " incomplete");
            aname = "nccl";
        }
        m = pb_string(m, F_TE_NAME, name);
        q = pb_string(w->sub, F_DA_NAME, aname);
        q = pb_string(q, F_DA_STRING_VALUE, annot);
        m = pb_bytes(m, F_TE_DEBUG_ANNOTATIONS, w->sub, (size_t)(q - w->sub));
        if (s->flow)
            m = pb_uint(m, F_TE_FLOW_IDS_OLD, s->flow);
        if (s->term_flow)
            m = pb_uint(m, F_TE_TERMINATING_FLOW_IDS_OLD, s->term_flow);
    }
    p = pb_bytes(p, F_PKT_TRACK_EVENT, w->msg, (size_t)(m - w->msg));
    emit(w, p);
}

static int cmp_slice(const void *x, const void *y)
{
    const struct slice *p = x, *q = y;
    if (p->track != q->track)
        return p->track < q->track ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return p->what < q->what ? -1 : p->what > q->what;
}

/* By time; at one time in slice order, a slice's BEGIN before its END: the
 * slices of a track are in time order and do not overlap, so at a shared
 * time one ends before the next begins (a zero-length one too). */
static int cmp_event(const void *x, const void *y)
{
    const struct event *p = x, *q = y;
    if (p->ts != q->ts)
        return p->ts < q->ts ? -1 : 1;
    if (p->slice != q->slice)
        return p->slice < q->slice ? -1 : 1;
    return p->end < q->end ? -1 : p->end > q->end;
}

int obs_ranks_perfetto(const struct obs_ranks *r, const char *const *paths, FILE *out,
                       struct obs_ranks_perfetto_counts *counts)
{
    struct writer *w = calloc(1, sizeof *w);
    size_t nsl = 0, i, k, cap = r->nparts + r->nsteps * r->ninputs + 1;
    struct slice *sl = malloc(cap * sizeof *sl);
    struct event *ev = malloc(2 * cap * sizeof *ev);
    int rc = -1;

    if (w == NULL || sl == NULL || ev == NULL) {
        errno = ENOMEM;
        goto out;
    }
    w->out = out;
    w->r = r;
    for (i = 0; i < r->ncolls; i++) {
        const struct obs_rank_coll *c = &r->colls[i];
        const struct obs_rank_part *p = obs_rank_coll_parts(r, c);
        for (k = 0; k < c->nparts; k++) {
            struct slice *s = &sl[nsl++];
            s->b = p[k].arrive;
            s->e = p[k].end > p[k].arrive ? p[k].end : p[k].arrive;
            s->track = UUID_COLLS(p[k].input);
            s->input = p[k].input;
            s->what = (uint32_t)i;
            s->flow = c->nparts > 1 && k + 1 < c->nparts ? i + 1 : 0;
            s->term_flow = c->nparts > 1 && k + 1 == c->nparts ? i + 1 : 0;
        }
        w->n.flows += c->nparts > 1;
        w->n.coll_slices += c->nparts;
    }
    for (i = 0; i < r->nsteps; i++)
        for (k = 0; k < r->ninputs; k++) {
            const struct obs_rank_step_cell *c = &r->steps[i].cells[k];
            struct slice *s;
            if (!c->present || c->step_ns == 0)
                continue;
            s = &sl[nsl++];
            s->b = c->begin;
            s->e = c->begin + c->step_ns;
            s->track = UUID_STEPS(k);
            s->input = (uint32_t)k;
            s->what = (uint32_t)i | STEP_BIT;
            s->flow = s->term_flow = 0;
            w->n.step_slices++;
        }
    /* a track shows one slice at a time: each begins where the one before it ended, at the earliest */
    if (nsl > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(sl, nsl, sizeof *sl, cmp_slice);
    for (i = 1; i < nsl; i++)
        if (sl[i].track == sl[i - 1].track && sl[i].b < sl[i - 1].e) {
            sl[i].b = sl[i - 1].e;
            if (sl[i].e < sl[i].b)
                sl[i].e = sl[i].b;
        }
    for (i = 0; i < nsl; i++) {
        ev[2 * i] = (struct event){sl[i].b, (uint32_t)i, 0};
        ev[2 * i + 1] = (struct event){sl[i].e, (uint32_t)i, 1};
    }
    if (2 * nsl > 1) /* qsort takes no NULL, even with nothing to sort */
        qsort(ev, 2 * nsl, sizeof *ev, cmp_event);
    put_tracks(w, paths);
    for (i = 0; i < 2 * nsl; i++)
        put_event(w, &sl[ev[i].slice], ev[i].ts, (int)ev[i].end);
    if (fflush(out) != 0 || ferror(out) || w->failed) {
        if (errno == 0)
            errno = EIO;
        goto out;
    }
    rc = 0;
out:
    if (counts)
        *counts = w ? w->n : (struct obs_ranks_perfetto_counts){0};
    free(w);
    free(sl);
    free(ev);
    return rc;
}
