/* Reading .obs trace files into the in-memory model: see trace_reader.h.
 *
 * Three passes over the file's bytes (mapped, or read when not mappable):
 *  1. walk the chunk headers: note RECORDS chunks, parse STRINGS and META,
 *     skip PAD, stop at the first damaged or incomplete chunk (keeping the
 *     complete records it holds);
 *  2. per thread, walk its records in per-thread order: count calls, check
 *     whether their begin times already ascend, collect the small record
 *     kinds (GPU spans, streams, lost, phases, graphs, self cost);
 *  3. merge the threads' calls by (t_begin, tid, per-thread index) and decode
 *     each straight into calls[seq], joining its GPU span on the way.
 * A thread whose calls do not ascend in time (calls made while inside
 * another hooked call are recorded when they return) is sorted on its own
 * first; the merge is then a k-way heap merge over threads. Records of
 * kind 0 are window slots never written: skipped. The file may still be
 * being written (a trace read while its program runs): slots may fill
 * between the passes, so passes 3 and after take no more calls than pass 2
 * counted. */
#include "trace_reader.h"
#include "trace_colls_build.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------- */

static const char *const api_names[] = {
#define OBS_API_NAME(id, name, kind, family) name,
    OBS_API_LIST(OBS_API_NAME)
#undef OBS_API_NAME
};

static const unsigned char api_kinds[] = {
#define OBS_API_KIND(id, name, kind, family) OBS_KIND_##kind,
    OBS_API_LIST(OBS_API_KIND)
#undef OBS_API_KIND
};

static const char *const kind_names[] = {
#define OBS_KIND_NAME(id, name) name,
    OBS_CALL_KIND_LIST(OBS_KIND_NAME)
#undef OBS_KIND_NAME
};

static const char *const direction_names[] = {
#define OBS_DIR_NAME(id, name) name,
    OBS_DIRECTION_LIST(OBS_DIR_NAME)
#undef OBS_DIR_NAME
};

const char *obs_api_name(unsigned api)
{
    return api < OBS_API_COUNT ? api_names[api] : "unknown";
}

unsigned obs_api_kind(unsigned api)
{
    return api < OBS_API_COUNT ? api_kinds[api] : OBS_KIND_NONE;
}

const char *obs_call_kind_name(unsigned kind)
{
    return kind < OBS_KIND_COUNT ? kind_names[kind] : "unknown";
}

const char *obs_direction_name(unsigned direction)
{
    return direction < OBS_DIR_COUNT ? direction_names[direction] : "unknown";
}

const char *obs_lost_reason_name(unsigned reason)
{
    switch (reason) {
    case OBS_LOST_BUFFER_FULL:
        return "buffer full";
    case OBS_LOST_WRITE_FAILED:
        return "write failed";
    case OBS_LOST_NO_BUFFER:
        return "no buffer";
    case OBS_LOST_UNFINISHED:
        return "unfinished";
    default:
        return "other";
    }
}

/* ---- memory: growable arrays and a string arena ---------------------------- */

/* Arrays of millions of entries. (Huge pages were tried: on virtual
 * machines whose memory the host backs lazily they made loading slower.) */
static void *big_alloc(size_t bytes)
{
    return malloc(bytes ? bytes : 1);
}

struct vec {
    void *data;
    size_t n, cap, size;
};

static void *vec_push(struct vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *p = realloc(v->data, cap * v->size);
        if (p == NULL)
            return NULL;
        v->data = p;
        v->cap = cap;
    }
    return (char *)v->data + v->size * v->n++;
}

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
};

struct obs_trace_store {
    struct arena_block *blocks;
};

static char *store_strndup(struct obs_trace_store *s, const char *text, size_t len)
{
    struct arena_block *b = s->blocks;
    char *p;
    if (b == NULL || b->cap - b->used < len + 1) {
        size_t cap = len + 1 > 65536 ? len + 1 : 65536;
        b = malloc(sizeof *b + cap);
        if (b == NULL)
            return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = s->blocks;
        s->blocks = b;
    }
    p = b->data + b->used;
    memcpy(p, text, len);
    p[len] = '\0';
    b->used += len + 1;
    return p;
}

/* ---- loading state --------------------------------------------------------- */

struct rec_chunk {
    uint32_t tid, nrec;
    uint64_t first_index;
    const uint8_t *data;
    size_t file_order;
};

struct str_entry {
    uint32_t kind, id;
    const char *text;
    size_t order;
};

/* A GPU_SPAN record (in the file's bytes) filed under its call's index. */
struct span_ref {
    uint64_t call_index;
    const uint8_t *rec;
};

struct phase_ev {
    uint64_t t, index;        /* host ns; per-thread index of the PHASE record */
    uint64_t first, last;     /* RELABEL: the index range it labels */
    uint32_t thread, phase, step, generation, name;
    uint32_t open;            /* innermost BEGIN/END range open after it, OBS_NONE if none */
    uint32_t range;           /* RELABEL: the range it makes, OBS_NONE if none */
    uint8_t event;
};

/* A LAYER record: the thread's calls [first, last] ran in layer. */
struct layer_ev {
    uint64_t first, last;
    uint32_t thread, layer;
};

/* A RANGE_SPAN record, as read. */
struct rspan_tmp {
    uint64_t begin_index, b, e;
    uint32_t tid, stream;
};

/* Per-thread RELABEL paint: disjoint index segments, each labelled by the
 * latest RELABEL written over it. */
struct relabel_seg {
    uint64_t a, b; /* [a, b] */
    uint32_t range;
};

struct stream_tmp {
    struct obs_stream s;
    size_t order;
};

struct graph_pair {
    uint32_t graph, kernel, count;
    size_t order;
};

struct graph_node_tmp {
    uint32_t graph, pos, kernel, layer;
    size_t order;
};

struct call_key {
    uint64_t t, index;
    const uint8_t *rec;
};

struct thread_work {
    size_t chunk_begin, chunk_end;
    size_t span_begin, span_end;
    uint64_t ncalls;
    int unsorted;
    struct call_key *keys;
};

struct cursor {
    uint32_t thread;
    int keyed;
    const struct rec_chunk *chunk, *chunk_end;
    uint32_t rec_i;
    const struct call_key *key, *key_end;
    uint64_t t, index;
    const uint8_t *rec;
    size_t span_i, span_end;
};

#define KERNEL_DIRECT 4096 /* ids below this are looked up in a plain table */

struct kernel_map {
    uint32_t *slots; /* kernel index + 1, 0 = empty */
    size_t mask;
    uint32_t direct[KERNEL_DIRECT]; /* kernel index + 1 of small ids, 0 = not yet known */
};

struct loader {
    struct obs_trace *t;
    char *err;
    size_t errlen;
    struct span_ref *span_refs; /* spans by thread, then call index (group_spans) */
    struct vec chunks, strings, spans, streams, lost, phase_evs, graphs, self_cost, meta, kernels, rspans, layer_evs;
    struct vec graph_pairs; /* struct graph_pair, from GRAPH_KERNELS records */
    struct vec graph_nodes; /* struct graph_node_tmp, from GRAPH_NODES records */
    struct vec nccl;        /* struct obs_nccl_raw: COLL and COMM records, in each thread's order */
    struct thread_work *work;
    struct kernel_map kmap;
    uint32_t last_kernel_id, last_kernel_index;
};

static int fail(struct loader *L, int code, const char *fmt, const char *arg, unsigned long long a,
                unsigned long long b)
{
    if (L->err && L->errlen) {
        if (arg)
            snprintf(L->err, L->errlen, fmt, arg);
        else
            snprintf(L->err, L->errlen, fmt, a, b);
    }
    return code;
}

#define NOMEM(L) fail((L), OBS_TRACE_ERR_NOMEM, "%s", "out of memory", 0, 0)

/* ---- header ------------------------------------------------------------------ */

static uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

static int check_header(struct loader *L, const uint8_t *d, size_t len, struct obs_file_header *h)
{
    size_t magic_len = sizeof h->magic;
    if (len < magic_len) {
        if (memcmp(d, OBS_TRACE_MAGIC, len) == 0)
            return fail(L, OBS_TRACE_ERR_TRUNCATED, "%s", "truncated header", 0, 0);
        return fail(L, OBS_TRACE_ERR_FOREIGN, "%s", "not an obsshim trace", 0, 0);
    }
    if (memcmp(d, OBS_TRACE_MAGIC, magic_len) != 0)
        return fail(L, OBS_TRACE_ERR_FOREIGN, "%s", "not an obsshim trace", 0, 0);
    if (len < sizeof *h)
        return fail(L, OBS_TRACE_ERR_TRUNCATED, "%s", "truncated header", 0, 0);
    memcpy(h, d, sizeof *h);
    if (h->byte_order != OBS_BYTE_ORDER_MARK) {
        if (h->byte_order == bswap32(OBS_BYTE_ORDER_MARK))
            return fail(L, OBS_TRACE_ERR_BYTE_ORDER, "%s",
                        "trace written on a machine of the other byte order (not supported)", 0, 0);
        return fail(L, OBS_TRACE_ERR_HEADER, "damaged header (byte-order mark 0x%08llx at offset %llu)", NULL,
                    h->byte_order, (unsigned long long)offsetof(struct obs_file_header, byte_order));
    }
    if (h->version > OBS_TRACE_VERSION)
        return fail(L, OBS_TRACE_ERR_VERSION, "trace version %llu is newer than this reader (%llu)", NULL,
                    h->version, OBS_TRACE_VERSION);
    if (h->version == 0)
        return fail(L, OBS_TRACE_ERR_HEADER, "damaged header (version 0 at offset %llu)", NULL,
                    (unsigned long long)offsetof(struct obs_file_header, version), 0);
    if (h->header_size < sizeof *h || h->header_size > (1u << 20))
        return fail(L, OBS_TRACE_ERR_HEADER, "damaged header (header size %llu at offset %llu)", NULL,
                    h->header_size, (unsigned long long)offsetof(struct obs_file_header, header_size));
    if (len < h->header_size)
        return fail(L, OBS_TRACE_ERR_TRUNCATED, "%s", "truncated header", 0, 0);
    if (h->record_size != OBS_RECORD_SIZE)
        return fail(L, OBS_TRACE_ERR_RECORD_SIZE, "bad record size %llu (this reader knows %llu)", NULL,
                    h->record_size, OBS_RECORD_SIZE);
    return 0;
}

/* ---- pass 1: chunks ------------------------------------------------------------ */

static int add_string(struct loader *L, uint32_t kind, uint32_t id, const char *text, size_t len)
{
    struct str_entry *e;
    if (kind == OBS_STR_INVALID || kind >= OBS_STR_COUNT)
        return 0; /* a kind this reader does not know: skip */
    e = vec_push(&L->strings);
    if (e == NULL)
        return -1;
    e->kind = kind;
    e->id = id;
    e->order = L->strings.n;
    e->text = store_strndup(L->t->store, text, len);
    return e->text ? 0 : -1;
}

/* Parse string entries from p[0..len); returns the bytes used by complete entries. */
static size_t parse_strings(struct loader *L, const uint8_t *p, size_t len, int *nomem)
{
    size_t off = 0;
    while (len - off >= sizeof(struct obs_string_entry)) {
        struct obs_string_entry e;
        size_t need;
        memcpy(&e, p + off, sizeof e);
        /* The length is checked against what is left before it is padded,
         * and padded in size_t: OBS_PAD8's ~7u would cut a length near
         * 2^32 to 0 and the text would run past the chunk. */
        if (e.len > len - off - sizeof e)
            break;
        need = sizeof e + (((size_t)e.len + 7) & ~(size_t)7); /* complete with its padding */
        if (need > len - off)
            break;
        if (add_string(L, e.kind, e.id, (const char *)p + off + sizeof e, e.len) != 0) {
            *nomem = 1;
            return off;
        }
        off += need;
    }
    return off;
}

/* Parse "key=value\n" lines from p[0..len); NUL padding is skipped. */
static int parse_meta(struct loader *L, const uint8_t *p, size_t len)
{
    size_t i = 0;
    while (i < len) {
        size_t start = i, end, eq;
        struct obs_meta *m;
        while (i < len && p[i] != '\n')
            i++;
        end = i++;
        while (end > start && (p[end - 1] == '\0' || p[end - 1] == '\r'))
            end--;
        while (start < end && p[start] == '\0')
            start++;
        if (end == start)
            continue;
        for (eq = start; eq < end && p[eq] != '='; eq++)
            ;
        m = vec_push(&L->meta);
        if (m == NULL)
            return -1;
        m->key = store_strndup(L->t->store, (const char *)p + start, eq - start);
        m->value = eq < end ? store_strndup(L->t->store, (const char *)p + eq + 1, end - eq - 1)
                            : store_strndup(L->t->store, "", 0);
        if (m->key == NULL || m->value == NULL)
            return -1;
    }
    return 0;
}

static void note_ignored(struct obs_trace *t, uint64_t offset, uint64_t bytes, const char *reason)
{
    if (bytes == 0)
        return;
    t->ignored_offset = offset;
    t->ignored_bytes = bytes;
    t->ignored_reason = reason;
}

/* The last chunk is cut short: what was used of it is kept; the rest of the
 * file, from the chunk's start when none of it was usable, is ignored. */
static void note_incomplete(struct obs_trace *t, size_t pos, size_t header, size_t used, size_t len)
{
    size_t from = used ? pos + header + used : pos;
    note_ignored(t, from, len - from, "incomplete chunk at end of file");
}

static int all_zero(const uint8_t *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != 0)
            return 0;
    return 1;
}

static int read_chunks(struct loader *L, const uint8_t *d, size_t len, size_t pos)
{
    struct obs_trace *t = L->t;
    size_t order = 0;

    while (pos < len) {
        struct obs_chunk_header ch;
        size_t avail, take;
        const uint8_t *payload;
        int complete;

        if (len - pos < sizeof ch) {
            note_ignored(t, pos, len - pos, "incomplete chunk header at end of file");
            break;
        }
        memcpy(&ch, d + pos, sizeof ch);
        if (ch.magic != OBS_CHUNK_MAGIC) {
            /* Zeros from here to the end: space the shim had allocated for
             * a window and not framed yet when it was killed. The end. */
            if (!all_zero(d + pos, len - pos))
                note_ignored(t, pos, len - pos, "damaged chunk header");
            break;
        }
        payload = d + pos + sizeof ch;
        avail = len - pos - sizeof ch;
        complete = ch.payload_bytes <= avail;
        take = complete ? ch.payload_bytes : avail;

        if (ch.type == OBS_CHUNK_RECORDS) {
            uint32_t nrec = (uint32_t)(take / OBS_RECORD_SIZE);
            size_t used = (size_t)nrec * OBS_RECORD_SIZE;
            if (ch.first_index > UINT64_MAX - nrec) { /* its indexes would wrap: not a chunk the shim wrote */
                note_ignored(t, pos, len - pos, "damaged chunk header");
                break;
            }
            if (nrec > 0) {
                struct rec_chunk *c = vec_push(&L->chunks);
                if (c == NULL)
                    return NOMEM(L);
                c->tid = ch.tid;
                c->nrec = nrec;
                c->first_index = ch.first_index;
                c->data = payload;
                c->file_order = order++;
            }
            if (!complete) {
                note_incomplete(t, pos, sizeof ch, used, len);
                break;
            }
            if (used != take) /* not a whole number of records: keep going, but say so */
                note_ignored(t, pos + sizeof ch + used, take - used, "partial record inside a chunk");
        } else if (ch.type == OBS_CHUNK_STRINGS) {
            int nomem = 0;
            size_t used = parse_strings(L, payload, take, &nomem);
            if (nomem)
                return NOMEM(L);
            if (!complete) {
                note_incomplete(t, pos, sizeof ch, used, len);
                break;
            }
            if (used != take) /* an entry longer than its chunk: the chunk's frame still holds */
                note_ignored(t, pos + sizeof ch + used, take - used, "damaged string entry");
        } else if (ch.type == OBS_CHUNK_META) {
            size_t used = take;
            if (!complete) /* keep whole lines only */
                while (used > 0 && payload[used - 1] != '\n')
                    used--;
            if (parse_meta(L, payload, used) != 0)
                return NOMEM(L);
            if (!complete) {
                note_incomplete(t, pos, sizeof ch, used, len);
                break;
            }
        } else {
            if (ch.type != OBS_CHUNK_PAD) /* PAD: the bytes before a window (docs/trace-format.md, "Windows") */
                t->unknown_chunks++;
            if (!complete) {
                note_ignored(t, pos, len - pos, "incomplete chunk at end of file");
                break;
            }
        }
        pos += sizeof ch + ch.payload_bytes;
    }
    return 0;
}

/* ---- sorting helpers ----------------------------------------------------------- */

/* qsort, but never with a NULL base: an empty table has no array at all. */
static void sort_items(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

static int cmp_chunk(const void *a, const void *b)
{
    const struct rec_chunk *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->first_index != y->first_index)
        return x->first_index < y->first_index ? -1 : 1;
    return x->file_order < y->file_order ? -1 : x->file_order > y->file_order;
}

static int cmp_key(const void *a, const void *b)
{
    const struct call_key *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_span_index(const void *a, const void *b)
{
    const struct span_ref *x = a, *y = b;
    return x->call_index < y->call_index ? -1 : x->call_index > y->call_index;
}

static int cmp_string(const void *a, const void *b)
{
    const struct str_entry *x = a, *y = b;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_stream(const void *a, const void *b)
{
    const struct stream_tmp *x = a, *y = b;
    if (x->s.id != y->s.id)
        return x->s.id < y->s.id ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_self_cost(const void *a, const void *b)
{
    const struct obs_self_cost *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The last string of (kind, id), or NULL; strings are sorted by cmp_string. */
static const char *find_string(const struct loader *L, uint32_t kind, uint32_t id)
{
    const struct str_entry *s = L->strings.data;
    size_t lo = 0, hi = L->strings.n;
    while (lo < hi) { /* first entry > (kind, id) */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].kind < kind || (s[mid].kind == kind && s[mid].id <= id))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && s[lo - 1].kind == kind && s[lo - 1].id == id)
        return s[lo - 1].text;
    return NULL;
}

/* ---- kernel names ---------------------------------------------------------------- */

static uint32_t hash_u32(uint32_t v)
{
    v ^= v >> 16;
    v *= 0x7feb352du;
    v ^= v >> 15;
    v *= 0x846ca68bu;
    v ^= v >> 16;
    return v;
}

static int kmap_insert(struct kernel_map *m, const struct obs_kernel *k, uint32_t id, uint32_t index,
                       size_t count);

static int kmap_grow(struct kernel_map *m, const struct obs_kernel *k, size_t count)
{
    size_t cap = 64, i;
    while (cap < count * 4)
        cap *= 2;
    free(m->slots);
    m->slots = calloc(cap, sizeof *m->slots);
    if (m->slots == NULL)
        return -1;
    m->mask = cap - 1;
    for (i = 1; i < count; i++)
        kmap_insert(m, k, k[i].id, (uint32_t)i, 0);
    return 0;
}

static int kmap_insert(struct kernel_map *m, const struct obs_kernel *k, uint32_t id, uint32_t index,
                       size_t count)
{
    size_t h;
    if (count && (m->slots == NULL || count * 2 > m->mask + 1))
        return kmap_grow(m, k, count);
    for (h = hash_u32(id) & m->mask; m->slots[h]; h = (h + 1) & m->mask)
        if (k[m->slots[h] - 1].id == id)
            break;
    m->slots[h] = index + 1;
    return 0;
}

static uint32_t kmap_find(const struct kernel_map *m, const struct obs_kernel *k, uint32_t id)
{
    size_t h;
    for (h = hash_u32(id) & m->mask; m->slots[h]; h = (h + 1) & m->mask)
        if (k[m->slots[h] - 1].id == id)
            return m->slots[h] - 1;
    return OBS_NONE;
}

static int build_kernels(struct loader *L)
{
    const struct str_entry *s = L->strings.data;
    struct obs_kernel *k;
    size_t i;

    k = vec_push(&L->kernels);
    if (k == NULL)
        return -1;
    k->id = 0;
    k->mangled = k->demangled = "";
    for (i = 0; i < L->strings.n; i++) {
        if (s[i].kind != OBS_STR_KERNEL_MANGLED && s[i].kind != OBS_STR_KERNEL_DEMANGLED)
            continue;
        if (s[i].id == 0)
            continue;
        /* strings are sorted by (kind, id): a new id for the mangled kind is a
         * new kernel; demangled-only ids are added below. */
        if (s[i].kind == OBS_STR_KERNEL_MANGLED && (i + 1 == L->strings.n || s[i + 1].kind != s[i].kind ||
                                                    s[i + 1].id != s[i].id)) {
            k = vec_push(&L->kernels);
            if (k == NULL)
                return -1;
            k->id = s[i].id;
            k->mangled = s[i].text;
            k->demangled = NULL;
        }
    }
    if (kmap_grow(&L->kmap, L->kernels.data, L->kernels.n) != 0)
        return -1;
    for (i = 0; i < L->strings.n; i++) {
        uint32_t idx;
        if (s[i].kind != OBS_STR_KERNEL_DEMANGLED || s[i].id == 0)
            continue;
        if (i + 1 < L->strings.n && s[i + 1].kind == s[i].kind && s[i + 1].id == s[i].id)
            continue; /* a later entry for the same id wins */
        idx = kmap_find(&L->kmap, L->kernels.data, s[i].id);
        if (idx == OBS_NONE) {
            k = vec_push(&L->kernels);
            if (k == NULL)
                return -1;
            k->id = s[i].id;
            k->mangled = "";
            idx = (uint32_t)(L->kernels.n - 1);
            if (kmap_insert(&L->kmap, L->kernels.data, k->id, idx, L->kernels.n) != 0)
                return -1;
        }
        ((struct obs_kernel *)L->kernels.data)[idx].demangled = s[i].text;
    }
    k = L->kernels.data;
    for (i = 1; i < L->kernels.n; i++)
        if (k[i].demangled == NULL || k[i].demangled[0] == '\0')
            k[i].demangled = k[i].mangled;
    L->last_kernel_id = 0;
    L->last_kernel_index = 0;
    return 0;
}

/* Kernel index for a CALL's name id; unknown ids get an entry with empty names. */
static uint32_t kernel_index(struct loader *L, uint32_t id)
{
    uint32_t idx;
    struct obs_kernel *k;
    if (id == 0)
        return 0;
    if (id < KERNEL_DIRECT && L->kmap.direct[id])
        return L->kmap.direct[id] - 1;
    if (id == L->last_kernel_id)
        return L->last_kernel_index;
    idx = kmap_find(&L->kmap, L->kernels.data, id);
    if (idx == OBS_NONE) {
        k = vec_push(&L->kernels);
        if (k == NULL)
            return 0;
        k->id = id;
        k->mangled = k->demangled = "";
        idx = (uint32_t)(L->kernels.n - 1);
        if (kmap_insert(&L->kmap, L->kernels.data, id, idx, L->kernels.n) != 0)
            return 0;
    }
    L->last_kernel_id = id;
    L->last_kernel_index = idx;
    if (id < KERNEL_DIRECT)
        L->kmap.direct[id] = idx + 1;
    return idx;
}

/* ---- pass 2: per-thread scan -------------------------------------------------------- */

static uint32_t thread_of(const struct obs_trace *t, uint32_t tid)
{
    size_t lo = 0, hi = t->nthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->threads[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nthreads && t->threads[lo].tid == tid ? (uint32_t)lo : OBS_NONE;
}

static int build_threads(struct loader *L)
{
    struct obs_trace *t = L->t;
    struct rec_chunk *c = L->chunks.data;
    size_t i, n = 0;

    sort_items(c, L->chunks.n, sizeof *c, cmp_chunk);
    for (i = 0; i < L->chunks.n; i++)
        if (i == 0 || c[i].tid != c[i - 1].tid)
            n++;
    t->threads = calloc(n ? n : 1, sizeof *t->threads);
    L->work = calloc(n ? n : 1, sizeof *L->work);
    if (t->threads == NULL || L->work == NULL)
        return -1;
    t->nthreads = 0;
    for (i = 0; i < L->chunks.n; i++) {
        if (i == 0 || c[i].tid != c[i - 1].tid) {
            t->threads[t->nthreads].tid = c[i].tid;
            t->threads[t->nthreads].first_seq = UINT64_MAX;
            L->work[t->nthreads].chunk_begin = i;
            t->nthreads++;
        }
        L->work[t->nthreads - 1].chunk_end = i + 1;
    }
    return 0;
}

static int scan_record(struct loader *L, const uint8_t *p)
{
    union obs_record r;
    memcpy(&r, p, sizeof r);
    switch (r.type) {
    case OBS_REC_GPU_SPAN: { /* kept as a pointer: there may be millions */
        const uint8_t **s = vec_push(&L->spans);
        if (s == NULL)
            return -1;
        *s = p;
        break;
    }
    case OBS_REC_STREAM: {
        struct stream_tmp *s = vec_push(&L->streams);
        if (s == NULL)
            return -1;
        s->s.id = r.stream.id;
        s->s.device = r.stream.device;
        s->s.handle = r.stream.handle;
        s->order = L->streams.n;
        break;
    }
    case OBS_REC_LOST: {
        struct obs_lost *l = vec_push(&L->lost);
        if (l == NULL)
            return -1;
        l->tid = r.lost.tid;
        l->reason = r.lost.reason;
        l->count = r.lost.count;
        l->t_first = r.lost.t_first;
        l->t_last = r.lost.t_last < r.lost.t_first ? r.lost.t_first : r.lost.t_last;
        break;
    }
    case OBS_REC_GRAPH: {
        struct obs_graph *g = vec_push(&L->graphs);
        if (g == NULL)
            return -1;
        memset(g, 0, sizeof *g);
        g->id = r.graph.id;
        g->flags = r.graph.flags;
        g->handle = r.graph.handle;
        g->node_count = r.graph.node_count;
        g->kernel_count = r.graph.kernel_count;
        g->nkernels = L->graphs.n; /* file order until finish_graphs */
        break;
    }
    case OBS_REC_GRAPH_KERNELS: {
        unsigned i, n = r.graph_kernels.count;
        for (i = 0; i < n && i < OBS_GRAPH_KERNEL_PAIRS; i++) {
            struct graph_pair *gp = vec_push(&L->graph_pairs);
            if (gp == NULL)
                return -1;
            gp->graph = r.graph_kernels.graph;
            gp->kernel = kernel_index(L, r.graph_kernels.pairs[i].name);
            gp->count = r.graph_kernels.pairs[i].count;
            gp->order = L->graph_pairs.n;
        }
        break;
    }
    case OBS_REC_GRAPH_NODES: {
        unsigned i, n = r.graph_nodes.count;
        for (i = 0; i < n && i < OBS_GRAPH_NODES_PER_RECORD && r.graph_nodes.first <= UINT32_MAX - i; i++) {
            struct graph_node_tmp *gn = vec_push(&L->graph_nodes);
            if (gn == NULL)
                return -1;
            gn->graph = r.graph_nodes.graph;
            gn->pos = r.graph_nodes.first + i;
            gn->kernel = kernel_index(L, r.graph_nodes.name[i]);
            gn->layer = r.graph_nodes.layer[i] == OBS_GRAPH_NO_LAYER ? OBS_NO_LAYER : r.graph_nodes.layer[i];
            gn->order = L->graph_nodes.n;
        }
        break;
    }
    case OBS_REC_RANGE_SPAN: {
        struct rspan_tmp *x = vec_push(&L->rspans);
        if (x == NULL)
            return -1;
        x->begin_index = r.range_span.begin_index;
        x->tid = r.range_span.tid;
        x->stream = r.range_span.stream;
        x->b = r.range_span.gpu_begin;
        x->e = r.range_span.gpu_end < r.range_span.gpu_begin ? r.range_span.gpu_begin : r.range_span.gpu_end;
        break;
    }
    case OBS_REC_SELF_COST: {
        struct obs_self_cost *s = vec_push(&L->self_cost);
        if (s == NULL)
            return -1;
        s->tid = r.self_cost.tid;
        s->calls = r.self_cost.calls;
        s->shim_ns = r.self_cost.shim_ns;
        s->once_ns = r.self_cost.once_ns <= r.self_cost.shim_ns ? r.self_cost.once_ns : r.self_cost.shim_ns;
        break;
    }
    case OBS_REC_INVALID: /* a window's slot never written: not a record */
        break;
    default:
        L->t->unknown_records++;
        break;
    }
    return 0;
}

/* PHASE records are kept in each thread's record order (threads and their
 * chunks are walked in order), which is the order that BEGIN/END nest in. */
static int add_phase_ev(struct loader *L, const uint8_t *p, uint32_t thread, uint64_t index)
{
    struct obs_rec_phase r;
    struct phase_ev *e = vec_push(&L->phase_evs);
    if (e == NULL)
        return -1;
    memcpy(&r, p, sizeof r);
    e->t = r.t;
    e->index = index;
    e->first = r.first_index;
    e->last = r.last_index;
    e->thread = thread;
    e->event = r.event;
    e->phase = r.phase;
    e->step = r.step;
    e->generation = r.generation;
    e->name = r.name;
    e->open = OBS_NONE;
    e->range = OBS_NONE;
    return 0;
}

/* LAYER records, kept in each thread's record order (the latest wins). */
static int add_layer_ev(struct loader *L, const uint8_t *p, uint32_t thread)
{
    struct obs_rec_layer r;
    struct layer_ev *e;
    memcpy(&r, p, sizeof r);
    if (r.event != OBS_LAYER_LABEL || r.first_index > r.last_index) {
        L->t->bad_layer_records++;
        return 0;
    }
    e = vec_push(&L->layer_evs);
    if (e == NULL)
        return -1;
    e->first = r.first_index;
    e->last = r.last_index;
    e->thread = thread;
    e->layer = r.layer;
    return 0;
}

static int scan_threads(struct loader *L)
{
    struct obs_trace *t = L->t;
    const struct rec_chunk *c = L->chunks.data;
    size_t ti, ci;

    for (ti = 0; ti < t->nthreads; ti++) {
        struct thread_work *w = &L->work[ti];
        uint64_t prev_t = 0, n = 0;
        for (ci = w->chunk_begin; ci < w->chunk_end; ci++) {
            const uint8_t *p = c[ci].data, *end = p + (size_t)c[ci].nrec * OBS_RECORD_SIZE;
            for (; p < end; p += OBS_RECORD_SIZE) {
                if (p[0] == OBS_REC_CALL) {
                    uint64_t tb;
                    memcpy(&tb, p + offsetof(struct obs_rec_call, t_begin), sizeof tb);
                    if (tb < prev_t)
                        w->unsorted = 1;
                    prev_t = tb;
                    n++;
                } else if (p[0] == OBS_REC_PHASE) {
                    uint64_t index = c[ci].first_index + (uint64_t)(p - c[ci].data) / OBS_RECORD_SIZE;
                    if (add_phase_ev(L, p, (uint32_t)ti, index) != 0)
                        return -1;
                } else if (p[0] == OBS_REC_LAYER) {
                    if (add_layer_ev(L, p, (uint32_t)ti) != 0)
                        return -1;
                } else if (p[0] == OBS_REC_COLL || p[0] == OBS_REC_COMM) {
                    struct obs_nccl_raw *x = vec_push(&L->nccl);
                    if (x == NULL)
                        return -1;
                    memcpy(&x->rec, p, sizeof x->rec);
                    x->index = c[ci].first_index + (uint64_t)(p - c[ci].data) / OBS_RECORD_SIZE;
                    x->thread = (uint32_t)ti;
                } else if (scan_record(L, p) != 0) {
                    return -1;
                }
            }
        }
        w->ncalls = n;
        t->threads[ti].calls = n;
        t->ncalls += n;
    }
    return 0;
}

/* Sort each thread's GPU spans by call index (counting sort by thread, then
 * a check, and qsort only where a thread's spans are out of order). */
static uint32_t span_tid(const uint8_t *rec)
{
    uint32_t tid;
    memcpy(&tid, rec + offsetof(struct obs_rec_gpu_span, tid), sizeof tid);
    return tid;
}

static int group_spans(struct loader *L)
{
    struct obs_trace *t = L->t;
    const uint8_t **s = L->spans.data;
    struct span_ref *sorted;
    size_t *count, i, ti, n = L->spans.n;
    uint32_t last_tid = 0, last_thread = OBS_NONE;

    count = calloc(t->nthreads + 2, sizeof *count);
    if (count == NULL)
        return -1;
    /* pass 1: spans per thread (unknown tids: the last bucket, orphans) */
    for (i = 0; i < n; i++) {
        uint32_t tid = span_tid(s[i]);
        if (last_thread == OBS_NONE || tid != last_tid) {
            uint32_t th = thread_of(t, tid);
            last_tid = tid;
            last_thread = th == OBS_NONE ? (uint32_t)t->nthreads : th;
        }
        count[last_thread + 1]++;
    }
    for (ti = 1; ti <= t->nthreads + 1; ti++)
        count[ti] += count[ti - 1];
    for (ti = 0; ti < t->nthreads; ti++) {
        L->work[ti].span_begin = count[ti];
        L->work[ti].span_end = count[ti + 1];
    }
    sorted = big_alloc(n * sizeof *sorted);
    if (sorted == NULL) {
        free(count);
        return -1;
    }
    /* pass 2: file them by thread, in the order met */
    last_thread = OBS_NONE;
    for (i = 0; i < n; i++) {
        uint32_t tid = span_tid(s[i]);
        if (last_thread == OBS_NONE || tid != last_tid) {
            uint32_t th = thread_of(t, tid);
            last_tid = tid;
            last_thread = th == OBS_NONE ? (uint32_t)t->nthreads : th;
        }
        memcpy(&sorted[count[last_thread]].call_index, s[i] + offsetof(struct obs_rec_gpu_span, call_index),
               sizeof sorted->call_index);
        sorted[count[last_thread]++].rec = s[i];
    }
    free(count);
    free(L->spans.data);
    L->spans.data = NULL;
    L->span_refs = sorted;
    for (ti = 0; ti < t->nthreads; ti++) {
        struct thread_work *w = &L->work[ti];
        for (i = w->span_begin + 1; i < w->span_end; i++)
            if (sorted[i].call_index < sorted[i - 1].call_index) {
                sort_items(sorted + w->span_begin, w->span_end - w->span_begin, sizeof *sorted, cmp_span_index);
                break;
            }
    }
    return 0;
}

/* ---- pass 3: merge and decode ----------------------------------------------------------- */

static int cursor_next(struct cursor *cur)
{
    if (cur->keyed) {
        if (cur->key == cur->key_end)
            return 0;
        cur->t = cur->key->t;
        cur->index = cur->key->index;
        cur->rec = cur->key->rec;
        cur->key++;
        return 1;
    }
    while (cur->chunk < cur->chunk_end) {
        while (cur->rec_i < cur->chunk->nrec) {
            const uint8_t *p = cur->chunk->data + (size_t)cur->rec_i * OBS_RECORD_SIZE;
            uint32_t i = cur->rec_i++;
            if (p[0] == OBS_REC_CALL) {
                memcpy(&cur->t, p + offsetof(struct obs_rec_call, t_begin), sizeof cur->t);
                cur->index = cur->chunk->first_index + i;
                cur->rec = p;
                return 1;
            }
        }
        cur->chunk++;
        cur->rec_i = 0;
    }
    return 0;
}

static int cursor_before(const struct cursor *a, const struct cursor *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->thread != b->thread) /* threads are sorted by tid */
        return a->thread < b->thread;
    return a->index < b->index;
}

static void heap_sift_down(struct cursor **heap, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct cursor *tmp;
        if (l < n && cursor_before(heap[l], heap[m]))
            m = l;
        if (r < n && cursor_before(heap[r], heap[m]))
            m = r;
        if (m == i)
            return;
        tmp = heap[i];
        heap[i] = heap[m];
        heap[m] = tmp;
        i = m;
    }
}

/* The GPU spans of the call at the cursor's head: how many (0: none), the
 * first in *first (consecutive in the thread's sorted spans). */
static size_t find_spans(const struct loader *L, struct cursor *cur, const struct span_ref **first)
{
    const struct span_ref *s = L->span_refs;
    size_t at, n = 0;
    if (cur->span_i >= cur->span_end)
        return 0;
    if (cur->keyed) { /* calls come in time order: binary search for the first of the index */
        size_t lo = cur->span_i, hi = cur->span_end;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid].call_index < cur->index)
                lo = mid + 1;
            else
                hi = mid;
        }
        at = lo;
        while (at + n < cur->span_end && s[at + n].call_index == cur->index)
            n++;
    } else { /* calls come in index order: walk forward */
        while (cur->span_i < cur->span_end && s[cur->span_i].call_index < cur->index)
            cur->span_i++;
        at = cur->span_i;
        while (at + n < cur->span_end && s[at + n].call_index == cur->index)
            n++;
        cur->span_i += n;
    }
    *first = n > 0 ? &s[at] : NULL;
    return n;
}

static void decode_call(struct loader *L, struct obs_call *c, const uint8_t *p, uint32_t thread,
                        uint64_t index)
{
    struct obs_rec_call r;
    uint64_t dur;
    memcpy(&r, p, sizeof r);
    dur = (r.flags & OBS_CALL_DUR_US) ? (uint64_t)r.t_dur * 1000u : r.t_dur;
    c->host_begin = r.t_begin;
    c->host_end = dur > UINT64_MAX - r.t_begin ? UINT64_MAX : r.t_begin + dur; /* damaged: no wrap */
    memcpy(&c->u, &r.u, sizeof c->u);
    c->index = index;
    c->thread = thread;
    c->kernel = kernel_index(L, r.name);
    c->stream = r.stream;
    c->shmem = r.shmem;
    c->gpu = OBS_NONE;
    c->phase = OBS_NONE;
    c->status = r.status;
    c->api = r.api;
    c->device = r.device;
    c->block_x = r.block_x;
    c->block_y = r.block_y;
    c->block_z = r.block_z;
    c->kind = (uint8_t)obs_api_kind(r.api);
    c->flags = r.flags;
}

static int merge_calls(struct loader *L)
{
    struct obs_trace *t = L->t;
    const struct rec_chunk *chunks = L->chunks.data;
    struct cursor *cur;
    struct cursor **heap;
    size_t nheap = 0, ti, seq = 0, ngpu = 0, spans_used = 0;
    size_t nspans = L->spans.n;

    t->calls = big_alloc(t->ncalls * sizeof *t->calls);
    t->gpu = big_alloc(nspans * sizeof *t->gpu);
    cur = calloc(t->nthreads ? t->nthreads : 1, sizeof *cur);
    heap = calloc(t->nthreads ? t->nthreads : 1, sizeof *heap);
    if (t->calls == NULL || t->gpu == NULL || cur == NULL || heap == NULL) {
        free(cur);
        free(heap);
        return -1;
    }
    for (ti = 0; ti < t->nthreads; ti++) {
        struct thread_work *w = &L->work[ti];
        struct cursor *c = &cur[ti];
        c->thread = (uint32_t)ti;
        c->chunk = chunks + w->chunk_begin;
        c->chunk_end = chunks + w->chunk_end;
        c->span_i = w->span_begin;
        c->span_end = w->span_end;
        if (w->unsorted && w->ncalls > 0) {
            /* Sort this thread's calls by (t_begin, index) on their own. */
            size_t k = 0;
            w->keys = malloc(w->ncalls * sizeof *w->keys);
            if (w->keys == NULL) {
                free(cur);
                free(heap);
                return -1;
            }
            while (k < w->ncalls && cursor_next(c)) { /* a file still being written may have more by now */
                w->keys[k].t = c->t;
                w->keys[k].index = c->index;
                w->keys[k].rec = c->rec;
                k++;
            }
            sort_items(w->keys, k, sizeof *w->keys, cmp_key);
            c->keyed = 1;
            c->key = w->keys;
            c->key_end = w->keys + k;
        }
        if (cursor_next(c))
            heap[nheap++] = c;
    }
    for (ti = nheap / 2; ti-- > 0;)
        heap_sift_down(heap, nheap, ti);

    /* seq < ncalls: the calls counted in pass 2, however many a file that
     * is still being written (a live trace) holds by now */
    while (nheap > 0 && seq < t->ncalls) {
        struct cursor *c = heap[0];
        struct obs_call *call = &t->calls[seq];
        const struct span_ref *span;
        size_t n;
        decode_call(L, call, c->rec, c->thread, c->index);
        if (t->threads[c->thread].first_seq == UINT64_MAX)
            t->threads[c->thread].first_seq = seq;
        /* ngpu < nspans: calls of one thread that share an index (a damaged
         * file) find the same spans, and t->gpu has one entry per span at most */
        if (ngpu < nspans && c->span_i < c->span_end && (n = find_spans(L, c, &span)) > 0) {
            /* Several spans (CUPTI: a graph launch's nodes): their envelope.
             * Spans flagged NO_WORK count only when there is nothing else. */
            uint64_t b = UINT64_MAX, e = 0;
            size_t k, real = 0;
            for (k = 0; k < n; k++) {
                uint64_t kb, ke;
                uint8_t flags = span[k].rec[offsetof(struct obs_rec_gpu_span, flags)];
                if (flags & OBS_SPAN_NO_WORK)
                    continue;
                memcpy(&kb, span[k].rec + offsetof(struct obs_rec_gpu_span, gpu_begin), sizeof kb);
                memcpy(&ke, span[k].rec + offsetof(struct obs_rec_gpu_span, gpu_end), sizeof ke);
                if (ke < kb)
                    ke = kb;
                b = kb < b ? kb : b;
                e = ke > e ? ke : e;
                real++;
            }
            spans_used += n;
            if (real > 0) {
                t->gpu[ngpu].begin = b;
                t->gpu[ngpu].end = e;
                call->gpu = (uint32_t)ngpu++;
            } else {
                t->no_work_gpu_calls++;
            }
        } else if (call->flags & OBS_CALL_GPU_TIMED) {
            t->missing_gpu_spans++; /* its events were recorded; their times never came */
        }
        seq++;
        if (!cursor_next(c))
            heap[0] = heap[--nheap];
        if (nheap > 1)
            heap_sift_down(heap, nheap, 0);
    }
    free(cur);
    free(heap);
    t->ncalls = seq;
    t->ngpu = ngpu;
    t->orphan_gpu_spans = spans_used >= nspans ? 0 : nspans - spans_used;
    return 0;
}

/* ---- phases ------------------------------------------------------------------------------ */

/* Rules (trace_format.h, docs/trace-format.md): per thread, in record
 * order, BEGIN opens a range inside the innermost open one and END closes
 * the innermost open range of its phase (with the ranges opened inside it),
 * else the innermost; a call is labelled by the innermost range open at its
 * per-thread index, unless a RELABEL covers that index: then by the latest
 * RELABEL written over it. No allocation per call: per-thread cursors walk
 * the (index-sorted) events and paint segments as calls go. */

static const char *range_string(const struct loader *L, uint32_t id, const char *fallback)
{
    const char *s = find_string(L, OBS_STR_RANGE_NAME, id);
    return s ? s : fallback;
}

static void init_range(const struct loader *L, struct obs_phase *r, const struct phase_ev *e, uint32_t thread,
                       uint32_t parent, uint32_t depth)
{
    memset(r, 0, sizeof *r);
    r->begin = r->end = e->t;
    r->phase_id = e->phase;
    r->name_id = e->name;
    r->phase = range_string(L, e->phase, "");
    r->name = e->name ? range_string(L, e->name, r->phase) : r->phase;
    r->step = e->step;
    r->generation = e->generation;
    r->parent = parent;
    r->thread = thread;
    r->depth = depth;
}

/* Paint [a, b] with range over the thread's segments segs[*n] (sorted, disjoint). */
static int paint(struct vec *v, size_t first_seg, uint64_t a, uint64_t b, uint32_t range)
{
    struct relabel_seg *s = (struct relabel_seg *)v->data + first_seg;
    size_t n = v->n - first_seg, lo = 0, hi = n, i, j, add;
    struct relabel_seg left, right, *p;
    int has_left = 0, has_right = 0;

    if (n == 0 || s[n - 1].b < a) { /* the usual case: past every segment so far */
        p = vec_push(v);
        if (p == NULL)
            return -1;
        p->a = a;
        p->b = b;
        p->range = range;
        return 0;
    }
    while (lo < hi) { /* first segment ending at or after a */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].b < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    i = lo;
    for (j = i; j < n && s[j].a <= b; j++)
        ;
    if (i < j && s[i].a < a) {
        left = s[i];
        left.b = a - 1;
        has_left = 1;
    }
    if (i < j && s[j - 1].b > b) {
        right = s[j - 1];
        right.a = b + 1;
        has_right = 1;
    }
    add = 1 + (size_t)has_left + (size_t)has_right;
    if (v->n + add > v->cap) {
        size_t cap = v->cap ? v->cap : 16;
        void *grown;
        while (cap < v->n + add)
            cap *= 2;
        grown = realloc(v->data, cap * v->size);
        if (grown == NULL)
            return -1;
        v->data = grown;
        v->cap = cap;
    }
    s = (struct relabel_seg *)v->data + first_seg;
    memmove(s + i + add, s + j, (n - j) * sizeof *s);
    p = s + i;
    if (has_left)
        *p++ = left;
    p->a = a;
    p->b = b;
    p->range = range;
    p++;
    if (has_right)
        *p = right;
    v->n = first_seg + n - (j - i) + add;
    return 0;
}

struct phase_cursor {
    size_t ev_begin, ev_end, ev_pos;    /* events of the thread; pos: last with index < call's, or SIZE_MAX */
    size_t seg_begin, seg_end, seg_pos; /* its RELABEL segments */
};

static uint32_t open_range_at(const struct phase_ev *ev, struct phase_cursor *pc, uint64_t index)
{
    size_t pos = pc->ev_pos;
    if (pos == SIZE_MAX) {
        if (pc->ev_begin == pc->ev_end || ev[pc->ev_begin].index > index)
            return OBS_NONE;
        pos = pc->ev_begin;
    }
    if (ev[pos].index + 64 < index || ev[pos].index > index + 64) {
        /* a far jump (calls out of time order, damaged times): binary
         * search, so that the walk costs O(log n), not O(events), per call */
        size_t lo = pc->ev_begin, hi = pc->ev_end;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ev[mid].index < index)
                lo = mid + 1;
            else
                hi = mid;
        }
        pos = lo > pc->ev_begin ? lo - 1 : pc->ev_begin;
    }
    while (pos + 1 < pc->ev_end && ev[pos + 1].index < index)
        pos++;
    while (pos > pc->ev_begin && ev[pos].index > index)
        pos--;
    if (ev[pos].index > index) {
        pc->ev_pos = SIZE_MAX;
        return OBS_NONE;
    }
    pc->ev_pos = pos;
    return ev[pos].open;
}

/* The paint of a RELABEL of phase 0: its calls lose their label. */
#define UNLABELLED (OBS_NONE - 1)

/* Ranges nest at most this deep in a thread (BEGIN/END and RELABEL
 * alike); deeper ones are damage, skipped and counted. Readers walk a
 * range's parents per call and per range (obs_phase_step), so an unbounded
 * depth from a damaged file would cost O(records x depth). Real traces
 * nest a few deep (DECODE/STEADY > DECODE/STEP_k > KV_GATHER). */
#define PHASE_MAX_DEPTH 256

static uint32_t relabel_at(const struct relabel_seg *seg, struct phase_cursor *pc, uint64_t index)
{
    size_t pos = pc->seg_pos;
    if (pc->seg_begin == pc->seg_end)
        return OBS_NONE;
    while (pos + 1 < pc->seg_end && seg[pos].b < index)
        pos++;
    while (pos > pc->seg_begin && seg[pos].a > index)
        pos--;
    pc->seg_pos = pos;
    return seg[pos].a <= index && index <= seg[pos].b ? seg[pos].range : OBS_NONE;
}

/* Each call's layer: the latest LAYER record over its per-thread index.
 * The same paint as RELABEL (disjoint segments per thread), with the layer
 * in place of a range. */
static int build_layers(struct loader *L)
{
    struct obs_trace *t = L->t;
    const struct layer_ev *ev = L->layer_evs.data;
    size_t n = L->layer_evs.n, i, ci;
    struct phase_cursor *pc;
    struct vec segs = {NULL, 0, 0, sizeof(struct relabel_seg)};
    int rc = -1;

    for (ci = 0; ci < t->ncalls; ci++)
        t->calls[ci].layer = OBS_NO_LAYER;
    if (n == 0)
        return 0;
    pc = calloc(t->nthreads ? t->nthreads : 1, sizeof *pc);
    if (pc == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        if (i == 0 || ev[i].thread != ev[i - 1].thread)
            pc[ev[i].thread].seg_begin = pc[ev[i].thread].seg_end = pc[ev[i].thread].seg_pos = segs.n;
        if (paint(&segs, pc[ev[i].thread].seg_begin, ev[i].first, ev[i].last, ev[i].layer) != 0)
            goto out;
        pc[ev[i].thread].seg_end = segs.n;
    }
    for (ci = 0; ci < t->ncalls; ci++) {
        struct obs_call *c = &t->calls[ci];
        if (c->thread < t->nthreads)
            c->layer = relabel_at(segs.data, &pc[c->thread], c->index);
    }
    rc = 0;
out:
    free(pc);
    free(segs.data);
    return rc;
}

static int build_range_spans(struct loader *L, const struct phase_ev *ev, const struct phase_cursor *pc,
                             const uint32_t *live);

static int build_phases(struct loader *L)
{
    struct obs_trace *t = L->t;
    struct phase_ev *ev = L->phase_evs.data;
    size_t n = L->phase_evs.n, i, depth = 0, nranges = 0, ci, nrelabel = 0;
    uint32_t *stack = NULL, *live = NULL;
    struct phase_cursor *pc = NULL;
    struct vec segs = {NULL, 0, 0, sizeof(struct relabel_seg)};
    int rc = -1;

    if (n == 0)
        return build_range_spans(L, NULL, NULL, NULL);
    t->phases = calloc(n, sizeof *t->phases);
    stack = malloc(n * sizeof *stack);
    pc = calloc(t->nthreads ? t->nthreads : 1, sizeof *pc);
    /* the live range of each call, for the range spans */
    live = L->rspans.n || (t->flags & OBS_FILE_GPU_STEPS) ? malloc((t->ncalls ? t->ncalls : 1) * sizeof *live) : NULL;
    if (t->phases == NULL || stack == NULL || pc == NULL ||
        ((L->rspans.n || (t->flags & OBS_FILE_GPU_STEPS)) && live == NULL))
        goto out;
    for (i = 0; i < t->nthreads; i++)
        pc[i].ev_begin = pc[i].ev_end = pc[i].ev_pos = SIZE_MAX;

    /* BEGIN/END ranges, thread by thread (events are grouped by thread). */
    for (i = 0; i < n; i++) {
        struct phase_ev *e = &ev[i];
        if (i == 0 || e->thread != ev[i - 1].thread) {
            depth = 0;
            pc[e->thread].ev_begin = i;
        }
        pc[e->thread].ev_end = i + 1;
        if (e->event == OBS_PHASE_BEGIN && depth >= PHASE_MAX_DEPTH) {
            t->bad_phase_records++;
        } else if (e->event == OBS_PHASE_BEGIN) {
            init_range(L, &t->phases[nranges], e, e->thread, depth ? stack[depth - 1] : OBS_NONE,
                       (uint32_t)depth);
            t->phases[nranges].end = UINT64_MAX;
            stack[depth++] = (uint32_t)nranges++;
        } else if (e->event == OBS_PHASE_END) {
            size_t k, found = depth;
            if (depth == 0) {
                t->bad_phase_records++;
            } else {
                for (k = depth; k-- > 0 && found == depth;) /* same phase and generation */
                    if (t->phases[stack[k]].phase_id == e->phase && t->phases[stack[k]].generation == e->generation)
                        found = k;
                for (k = depth; k-- > 0 && found == depth;) /* same phase */
                    if (t->phases[stack[k]].phase_id == e->phase)
                        found = k;
                if (found == depth)
                    found = depth - 1; /* like a pop */
                for (k = found; k < depth; k++) { /* ranges opened inside it end with it */
                    t->phases[stack[k]].end = e->t;
                    t->phases[stack[k]].ended = 1;
                }
                depth = found;
            }
        } else if (e->event == OBS_PHASE_RELABEL) {
            if (e->first > e->last)
                t->bad_phase_records++;
            else
                nrelabel++;
        } else {
            t->bad_phase_records++;
        }
        e->open = depth ? stack[depth - 1] : OBS_NONE;
    }
    for (i = 0; i < nranges; i++) {
        struct obs_phase *r = &t->phases[i];
        if (!r->ended)
            r->end = t->t_last > r->begin ? t->t_last : r->begin;
        if (r->end < r->begin)
            r->end = r->begin;
    }

    /* RELABEL ranges: the parent is the nearest earlier RELABEL of the
     * thread whose index range holds this one (a stack, as they nest when
     * written outside-in); the latest written paints over earlier ones. */
    for (i = 0; nrelabel && i < n; i++) {
        struct phase_ev *e = &ev[i];
        struct obs_phase *r;
        if (i == 0 || e->thread != ev[i - 1].thread) {
            depth = 0;
            pc[e->thread].seg_begin = pc[e->thread].seg_end = segs.n;
        }
        if (e->event != OBS_PHASE_RELABEL || e->first > e->last)
            continue;
        if (e->phase == 0) { /* no phase: takes the labels off, makes no range */
            if (paint(&segs, pc[e->thread].seg_begin, e->first, e->last, UNLABELLED) != 0)
                goto out;
            pc[e->thread].seg_end = segs.n;
            pc[e->thread].seg_pos = pc[e->thread].seg_begin;
            continue;
        }
        while (depth > 0) {
            const struct phase_ev *outer = &ev[stack[depth - 1]];
            if (outer->first <= e->first && e->last <= outer->last)
                break;
            depth--;
        }
        if (depth >= PHASE_MAX_DEPTH) {
            t->bad_phase_records++;
            continue;
        }
        r = &t->phases[nranges];
        init_range(L, r, e, e->thread, OBS_NONE, (uint32_t)depth);
        r->relabel = 1;
        r->begin = UINT64_MAX;
        r->end = 0;
        if (depth)
            r->parent = ev[stack[depth - 1]].range;
        e->range = (uint32_t)nranges;
        stack[depth++] = (uint32_t)i;
        if (paint(&segs, pc[e->thread].seg_begin, e->first, e->last, (uint32_t)nranges) != 0)
            goto out;
        pc[e->thread].seg_end = segs.n;
        pc[e->thread].seg_pos = pc[e->thread].seg_begin;
        nranges++;
    }
    t->nphases = nranges;

    /* Label each call; count calls per range and its enclosing ones. */
    for (ci = 0; ci < t->ncalls; ci++) {
        struct obs_call *c = &t->calls[ci];
        struct phase_cursor *p = &pc[c->thread];
        uint32_t opened, r;
        if (live != NULL)
            live[ci] = OBS_NONE;
        if (p->ev_begin == SIZE_MAX)
            continue;
        opened = open_range_at(ev, p, c->index);
        if (live != NULL)
            live[ci] = opened;
        r = relabel_at(segs.data, p, c->index);
        if (r == UNLABELLED) {
            for (; opened != OBS_NONE; opened = t->phases[opened].parent)
                t->phases[opened].calls_taken++;
            c->phase = OBS_NONE;
        } else if (r != OBS_NONE) {
            for (; opened != OBS_NONE; opened = t->phases[opened].parent)
                t->phases[opened].calls_taken++;
            for (c->phase = r; r != OBS_NONE; r = t->phases[r].parent) {
                struct obs_phase *x = &t->phases[r];
                x->calls++;
                if (c->host_begin < x->begin)
                    x->begin = c->host_begin;
                if (c->host_end > x->end)
                    x->end = c->host_end;
            }
        } else {
            for (c->phase = opened; opened != OBS_NONE; opened = t->phases[opened].parent)
                t->phases[opened].calls++;
        }
    }
    for (i = 0; i < n; i++) /* a RELABEL that labels no call sits at its record's time */
        if (ev[i].range != OBS_NONE && t->phases[ev[i].range].calls == 0)
            t->phases[ev[i].range].begin = t->phases[ev[i].range].end = ev[i].t;
    rc = build_range_spans(L, ev, pc, live);
out:
    free(stack);
    free(pc);
    free(live);
    free(segs.data);
    return rc;
}

/* ---- range spans (OBS_GPU_TIME=steps) ----------------------------------------------------- */

/* Each RANGE_SPAN names its live range by the per-thread index of its
 * BEGIN record; its time counts for the final label of the calls that the
 * live range labels itself on the span's stream (docs/trace-format.md). */

static int cmp_range_span(const void *a, const void *b)
{
    const struct obs_range_span *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->live != y->live)
        return x->live < y->live ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* The span of (live range, stream), or NULL (spans sorted; a live range is
 * one thread's, so its index orders them within the thread). */
static struct obs_range_span *find_range_span(struct obs_trace *t, uint32_t thread, uint32_t live, uint32_t stream)
{
    size_t lo = 0, hi = t->nrange_spans;
    struct obs_range_span key;
    key.thread = thread;
    key.live = live;
    key.stream = stream;
    key.begin = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_range_span(&t->range_spans[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->nrange_spans && t->range_spans[lo].thread == thread && t->range_spans[lo].live == live &&
        t->range_spans[lo].stream == stream)
        return &t->range_spans[lo];
    return NULL;
}

static uint32_t thread_of_tid(const struct obs_trace *t, uint32_t tid)
{
    size_t lo = 0, hi = t->nthreads;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->threads[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nthreads && t->threads[lo].tid == tid ? (uint32_t)lo : OBS_NONE;
}

/* The BEGIN/END range made by the BEGIN record at index of a thread, or
 * the range a RELABEL record there makes (the span of the calls it took
 * out of the open ranges' tail), or OBS_NONE. */
static uint32_t range_of_begin(const struct phase_ev *ev, const struct phase_cursor *pc, uint64_t index)
{
    size_t lo, hi;
    if (ev == NULL || pc->ev_begin == SIZE_MAX)
        return OBS_NONE;
    lo = pc->ev_begin;
    hi = pc->ev_end;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ev[mid].index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < pc->ev_end && ev[lo].index == index && ev[lo].event == OBS_PHASE_BEGIN)
        return ev[lo].open;
    if (lo < pc->ev_end && ev[lo].index == index && ev[lo].event == OBS_PHASE_RELABEL)
        return ev[lo].range;
    return OBS_NONE;
}

static int is_device_work(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_GRAPH || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET;
}

/* The final label seen so far of a span's own calls: not yet, or several. */
#define OWN_UNSET (OBS_NONE - 2)
#define OWN_MIXED (OBS_NONE - 3)

static int build_range_spans(struct loader *L, const struct phase_ev *ev, const struct phase_cursor *pc,
                             const uint32_t *live)
{
    struct obs_trace *t = L->t;
    const struct rspan_tmp *raw = L->rspans.data;
    size_t n = L->rspans.n, i, k = 0, ci;
    uint32_t *missing_on = NULL; /* per range: stream id + 1 last counted missing, 0 none */

    if (n == 0 && !(t->flags & OBS_FILE_GPU_STEPS))
        return 0;
    t->range_spans = calloc(n ? n : 1, sizeof *t->range_spans);
    if (live != NULL && (t->flags & OBS_FILE_GPU_STEPS))
        missing_on = calloc(t->nphases ? t->nphases : 1, sizeof *missing_on);
    if (t->range_spans == NULL || (live != NULL && (t->flags & OBS_FILE_GPU_STEPS) && missing_on == NULL)) {
        free(missing_on);
        return -1;
    }
    for (i = 0; i < n; i++) {
        struct obs_range_span *x = &t->range_spans[k];
        uint32_t th = thread_of_tid(t, raw[i].tid);
        uint32_t r = th != OBS_NONE && pc != NULL ? range_of_begin(ev, &pc[th], raw[i].begin_index) : OBS_NONE;
        if (r == OBS_NONE) {
            t->orphan_range_spans++;
            continue;
        }
        x->begin = raw[i].b;
        x->end = raw[i].e;
        x->thread = th;
        x->stream = raw[i].stream;
        x->live = r;
        x->range = OWN_UNSET;
        k++;
    }
    t->nrange_spans = k;
    qsort(t->range_spans, k, sizeof *t->range_spans, cmp_range_span);
    /* Duplicates of one (live range, stream): a damaged file; the first is kept. */
    for (i = 0, n = 0; i < k; i++) {
        if (n > 0 && t->range_spans[n - 1].thread == t->range_spans[i].thread &&
            t->range_spans[n - 1].live == t->range_spans[i].live &&
            t->range_spans[n - 1].stream == t->range_spans[i].stream) {
            t->orphan_range_spans++;
            continue;
        }
        t->range_spans[n++] = t->range_spans[i];
    }
    t->nrange_spans = n;

    /* Each call with device work: the spans of its live range and of the
     * ranges around it on its stream; the final labels of each span's own
     * calls; (range, stream) pairs with work and no span. */
    for (ci = 0; live != NULL && ci < t->ncalls; ci++) {
        const struct obs_call *c = &t->calls[ci];
        uint32_t a;
        struct obs_range_span *taken = NULL;
        if (!is_device_work(c->kind))
            continue;
        /* A RELABEL's span (the tail the shim took out of the open ranges)
         * holds its calls on the stream: not the live ranges' spans. */
        for (a = c->phase; a != OBS_NONE && taken == NULL; a = t->phases[a].parent)
            if (t->phases[a].relabel)
                taken = find_range_span(t, c->thread, a, c->stream);
        if (taken != NULL) {
            taken->calls++;
            if (taken->range == OWN_UNSET)
                taken->range = c->phase;
            else if (taken->range != c->phase)
                taken->range = OWN_MIXED;
            continue;
        }
        if (live[ci] == OBS_NONE)
            continue;
        for (a = live[ci]; a != OBS_NONE; a = t->phases[a].parent) {
            struct obs_range_span *x = find_range_span(t, c->thread, a, c->stream);
            if (x == NULL) {
                if (missing_on != NULL && missing_on[a] != c->stream + 1u) {
                    t->missing_range_spans++;
                    missing_on[a] = c->stream + 1u;
                }
                continue;
            }
            x->calls++;
            if (a != live[ci])
                continue;
            if (x->range == OWN_UNSET)
                x->range = c->phase;
            else if (x->range != c->phase)
                x->range = OWN_MIXED;
        }
    }
    for (i = 0; i < t->nrange_spans; i++) {
        struct obs_range_span *x = &t->range_spans[i];
        if (x->range == OWN_UNSET) {
            x->flags |= OBS_RANGE_SPAN_CONTAINER;
            x->range = OBS_NONE;
        } else if (x->range == OWN_MIXED) {
            x->flags |= OBS_RANGE_SPAN_MIXED;
            x->range = OBS_NONE;
        } else if (x->range != x->live) {
            x->flags |= OBS_RANGE_SPAN_RELABELLED;
        }
    }
    free(missing_on);
    return 0;
}

/* ---- small tables ------------------------------------------------------------------------- */

static int cmp_graph(const void *a, const void *b)
{
    const struct obs_graph *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->nkernels < y->nkernels ? -1 : x->nkernels > y->nkernels; /* file order */
}

static int cmp_graph_pair(const void *a, const void *b)
{
    const struct graph_pair *x = a, *y = b;
    if (x->graph != y->graph)
        return x->graph < y->graph ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_graph_node(const void *a, const void *b)
{
    const struct graph_node_tmp *x = a, *y = b;
    if (x->graph != y->graph)
        return x->graph < y->graph ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Each graph's kernel nodes in walk order: positions 0, 1, ... (the last
 * record of a position wins; a missing position ends the list), and the
 * layer instances among them. */
static int finish_graph_nodes(struct loader *L, struct obs_graph *g, size_t n)
{
    struct obs_trace *t = L->t;
    struct graph_node_tmp *gn = L->graph_nodes.data;
    size_t i, p = 0;

    sort_items(gn, L->graph_nodes.n, sizeof *gn, cmp_graph_node);
    t->graph_nodes = big_alloc(L->graph_nodes.n * sizeof *t->graph_nodes);
    if (t->graph_nodes == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        struct obs_graph_node *out = t->graph_nodes + t->ngraph_nodes;
        g[i].nodes = out;
        g[i].nnodes = 0;
        g[i].layers = 0;
        while (p < L->graph_nodes.n && gn[p].graph < g[i].id)
            p++;
        for (; p < L->graph_nodes.n && gn[p].graph == g[i].id; p++) {
            if (gn[p].pos + 1 == g[i].nnodes) { /* the same position again: the later record */
                out[g[i].nnodes - 1] = (struct obs_graph_node){gn[p].kernel, gn[p].layer};
                continue;
            }
            if (gn[p].pos != g[i].nnodes)
                continue; /* after a gap: not kept */
            out[g[i].nnodes++] = (struct obs_graph_node){gn[p].kernel, gn[p].layer};
        }
        t->ngraph_nodes += g[i].nnodes;
    }
    for (i = 0; i < n; i++) {
        size_t k;
        for (k = 0; k < g[i].nnodes; k++)
            if (g[i].nodes[k].layer != OBS_NO_LAYER && (k == 0 || g[i].nodes[k - 1].layer != g[i].nodes[k].layer))
                g[i].layers++;
    }
    return 0;
}

/* Graphs by id (the last record of an id wins), each with its kernels by
 * name; pairs of an id with no GRAPH record are dropped. */
static int finish_graphs(struct loader *L)
{
    struct obs_trace *t = L->t;
    struct obs_graph *g = L->graphs.data;
    struct graph_pair *gp = L->graph_pairs.data;
    size_t i, n = 0, p = 0;

    sort_items(g, L->graphs.n, sizeof *g, cmp_graph);
    for (i = 0; i < L->graphs.n; i++) {
        if (n > 0 && g[n - 1].id == g[i].id)
            g[n - 1] = g[i];
        else
            g[n++] = g[i];
    }
    sort_items(gp, L->graph_pairs.n, sizeof *gp, cmp_graph_pair);
    t->graph_kernels = big_alloc(L->graph_pairs.n * sizeof *t->graph_kernels);
    if (t->graph_kernels == NULL)
        return -1;
    for (i = 0; i < n; i++) {
        g[i].kernels = t->graph_kernels + t->ngraph_kernels;
        g[i].nkernels = 0;
        while (p < L->graph_pairs.n && gp[p].graph < g[i].id)
            p++;
        for (; p < L->graph_pairs.n && gp[p].graph == g[i].id; p++) {
            t->graph_kernels[t->ngraph_kernels].kernel = gp[p].kernel;
            t->graph_kernels[t->ngraph_kernels].count = gp[p].count;
            t->ngraph_kernels++;
            g[i].nkernels++;
        }
    }
    if (finish_graph_nodes(L, g, n) != 0)
        return -1;
    t->graphs = g;
    t->ngraphs = n;
    L->graphs.data = NULL;
    return 0;
}

static int finish_tables(struct loader *L)
{
    struct obs_trace *t = L->t;
    const struct str_entry *s = L->strings.data;
    size_t i, n;

    /* Thread names: the last THREAD_NAME entry of each tid wins. */
    for (i = 0; i < L->strings.n; i++) {
        uint32_t th;
        if (s[i].kind != OBS_STR_THREAD_NAME)
            continue;
        th = thread_of(t, s[i].id);
        if (th != OBS_NONE)
            t->threads[th].name = s[i].text;
    }

    /* Streams: sorted by id; the last record of an id wins (qsort is not
     * stable, so the file position breaks ties). */
    if (L->streams.n) {
        struct stream_tmp *st = L->streams.data;
        sort_items(st, L->streams.n, sizeof *st, cmp_stream);
        t->streams = malloc(L->streams.n * sizeof *t->streams);
        if (t->streams == NULL)
            return -1;
        n = 0;
        for (i = 0; i < L->streams.n; i++) {
            if (i + 1 < L->streams.n && st[i + 1].s.id == st[i].s.id)
                continue;
            t->streams[n++] = st[i].s;
        }
        t->nstreams = n;
    }

    /* Self cost: per tid, the snapshot with the most calls. */
    if (L->self_cost.n) {
        struct obs_self_cost *sc = L->self_cost.data;
        sort_items(sc, L->self_cost.n, sizeof *sc, cmp_self_cost);
        n = 0;
        for (i = 0; i < L->self_cost.n; i++) {
            if (n > 0 && sc[n - 1].tid == sc[i].tid) {
                if (sc[i].calls > sc[n - 1].calls ||
                    (sc[i].calls == sc[n - 1].calls && sc[i].shim_ns > sc[n - 1].shim_ns))
                    sc[n - 1] = sc[i];
            } else {
                sc[n++] = sc[i];
            }
        }
        for (i = 0; i < n; i++) {
            t->self_calls += sc[i].calls;
            t->self_ns += sc[i].shim_ns;
            t->self_once_ns += sc[i].once_ns;
        }
        t->self_cost = sc;
        t->nself_cost = n;
        L->self_cost.data = NULL;
    }

    t->lost = L->lost.data;
    t->nlost = L->lost.n;
    L->lost.data = NULL;
    for (i = 0; i < t->nlost; i++)
        t->records_lost += t->lost[i].count;
    if (finish_graphs(L) != 0)
        return -1;
    t->meta = L->meta.data;
    t->nmeta = L->meta.n;
    L->meta.data = NULL;
    t->kernels = L->kernels.data;
    t->nkernels = L->kernels.n;
    L->kernels.data = NULL;
    return 0;
}

static void find_time_bounds(struct loader *L)
{
    struct obs_trace *t = L->t;
    const struct phase_ev *ev = L->phase_evs.data;
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t i;

#define OBS_SPAN(b, e)   \
    do {                 \
        if ((b) < lo)    \
            lo = (b);    \
        if ((e) > hi)    \
            hi = (e);    \
    } while (0)
    for (i = 0; i < t->ncalls; i++)
        OBS_SPAN(t->calls[i].host_begin, t->calls[i].host_end);
    for (i = 0; i < t->ngpu; i++)
        OBS_SPAN(t->gpu[i].begin, t->gpu[i].end);
    for (i = 0; i < L->rspans.n; i++)
        OBS_SPAN(((const struct rspan_tmp *)L->rspans.data)[i].b, ((const struct rspan_tmp *)L->rspans.data)[i].e);
    for (i = 0; i < L->phase_evs.n; i++)
        OBS_SPAN(ev[i].t, ev[i].t);
    for (i = 0; i < t->nlost; i++)
        if (t->lost[i].t_first)
            OBS_SPAN(t->lost[i].t_first, t->lost[i].t_last);
#undef OBS_SPAN
    t->t_first = lo == UINT64_MAX ? 0 : lo;
    t->t_last = hi;
}

/* ---- entry points ------------------------------------------------------------------------- */

static void loader_free(struct loader *L)
{
    size_t i;
    free(L->chunks.data);
    free(L->strings.data);
    free(L->spans.data);
    free(L->span_refs);
    free(L->streams.data);
    free(L->lost.data);
    free(L->phase_evs.data);
    free(L->layer_evs.data);
    free(L->graphs.data);
    free(L->graph_pairs.data);
    free(L->graph_nodes.data);
    free(L->nccl.data);
    free(L->self_cost.data);
    free(L->meta.data);
    free(L->kernels.data);
    free(L->rspans.data);
    free(L->kmap.slots);
    if (L->work && L->t)
        for (i = 0; i < L->t->nthreads; i++)
            free(L->work[i].keys);
    free(L->work);
}

static void loader_init(struct loader *L, struct obs_trace *t, char *err, size_t errlen)
{
    memset(L, 0, sizeof *L);
    L->t = t;
    L->err = err;
    L->errlen = errlen;
    L->chunks.size = sizeof(struct rec_chunk);
    L->strings.size = sizeof(struct str_entry);
    L->spans.size = sizeof(const uint8_t *);
    L->streams.size = sizeof(struct stream_tmp);
    L->lost.size = sizeof(struct obs_lost);
    L->phase_evs.size = sizeof(struct phase_ev);
    L->layer_evs.size = sizeof(struct layer_ev);
    L->graphs.size = sizeof(struct obs_graph);
    L->graph_pairs.size = sizeof(struct graph_pair);
    L->graph_nodes.size = sizeof(struct graph_node_tmp);
    L->nccl.size = sizeof(struct obs_nccl_raw);
    L->self_cost.size = sizeof(struct obs_self_cost);
    L->meta.size = sizeof(struct obs_meta);
    L->kernels.size = sizeof(struct obs_kernel);
    L->rspans.size = sizeof(struct rspan_tmp);
}

int obs_trace_load(const void *data, size_t len, const char *name, struct obs_trace **out, char *err,
                   size_t errlen)
{
    struct obs_trace *t;
    struct obs_file_header h;
    struct loader L;
    int rc;

    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    t = calloc(1, sizeof *t);
    if (t == NULL || (t->store = calloc(1, sizeof *t->store)) == NULL) {
        free(t);
        if (err && errlen)
            snprintf(err, errlen, "out of memory");
        return OBS_TRACE_ERR_NOMEM;
    }
    loader_init(&L, t, err, errlen);
    t->path = store_strndup(t->store, name ? name : "", name ? strlen(name) : 0);
    t->file_bytes = len;
    rc = check_header(&L, data, len, &h);
    if (rc == 0) {
        t->version = h.version;
        t->pid = h.pid;
        t->flags = h.flags;
        t->start_mono_ns = h.start_mono_ns;
        t->start_real_ns = h.start_real_ns;
        rc = read_chunks(&L, data, len, h.header_size);
    }
    if (rc == 0) {
        sort_items(L.strings.data, L.strings.n, L.strings.size, cmp_string);
        if (t->path == NULL || build_kernels(&L) != 0 || build_threads(&L) != 0 || scan_threads(&L) != 0 ||
            group_spans(&L) != 0 || merge_calls(&L) != 0 || finish_tables(&L) != 0)
            rc = NOMEM(&L);
    }
    if (rc == 0) {
        find_time_bounds(&L);
        if (build_phases(&L) != 0 || build_layers(&L) != 0 ||
            obs_trace_build_nccl(t, L.nccl.data, L.nccl.n) != 0)
            rc = NOMEM(&L);
    }
    loader_free(&L);
    if (rc != 0) {
        obs_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int obs_trace_open(const char *path, struct obs_trace **out, char *err, size_t errlen)
{
    struct stat st;
    void *data = NULL;
    size_t len = 0;
    int fd, rc, mapped = 0;

    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "%s", strerror(e));
        return OBS_TRACE_ERR_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "%s", strerror(EISDIR));
        return OBS_TRACE_ERR_IO;
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        len = (size_t)st.st_size;
        data = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (data == MAP_FAILED)
            data = NULL;
        else
            mapped = 1;
    }
    if (!mapped) { /* a pipe, or mmap refused: read it all */
        size_t cap = 1 << 16;
        len = 0;
        data = malloc(cap);
        for (;;) {
            ssize_t got;
            if (data == NULL) {
                close(fd);
                snprintf(err, errlen, "out of memory");
                return OBS_TRACE_ERR_NOMEM;
            }
            if (len == cap) {
                void *p = realloc(data, cap * 2);
                if (p == NULL) {
                    free(data);
                    data = NULL;
                    continue;
                }
                data = p;
                cap *= 2;
            }
            got = read(fd, (char *)data + len, cap - len);
            if (got < 0 && errno == EINTR)
                continue;
            if (got < 0) {
                int e = errno;
                free(data);
                close(fd);
                snprintf(err, errlen, "%s", strerror(e));
                return OBS_TRACE_ERR_IO;
            }
            if (got == 0)
                break;
            len += (size_t)got;
        }
    }
    close(fd);
    rc = obs_trace_load(data ? data : "", len, path, out, err, errlen);
    if (mapped)
        munmap(data, len);
    else
        free(data);
    return rc;
}

void obs_trace_free(struct obs_trace *t)
{
    if (t == NULL)
        return;
    free(t->calls);
    free(t->threads);
    free(t->kernels);
    free(t->streams);
    free(t->gpu);
    free(t->phases);
    free(t->lost);
    free(t->graphs);
    free(t->graph_kernels);
    free(t->graph_nodes);
    free(t->self_cost);
    free(t->meta);
    free(t->range_spans);
    free(t->colls);
    free(t->comms);
    free(t->coll_calls);
    if (t->store) {
        struct arena_block *b = t->store->blocks;
        while (b) {
            struct arena_block *next = b->next;
            free(b);
            b = next;
        }
        free(t->store);
    }
    free(t);
}

const char *obs_trace_meta(const struct obs_trace *t, const char *key)
{
    size_t i;
    const char *v = NULL;
    for (i = 0; i < t->nmeta; i++) /* the last value of a key wins */
        if (strcmp(t->meta[i].key, key) == 0)
            v = t->meta[i].value;
    return v;
}

int obs_trace_opening_cut(const struct obs_trace *t)
{
    /* nothing usable after the header: the file ends there, or what follows
     * it (the shim's META, written next) was cut */
    uint64_t usable = t->ignored_bytes ? t->ignored_offset : t->file_bytes;
    return t->nmeta == 0 && usable <= sizeof(struct obs_file_header);
}

int obs_trace_unclosed(const struct obs_trace *t)
{
    if (obs_trace_meta(t, "end") != NULL)
        return 0;
    return obs_trace_meta(t, "buffer_records") != NULL || obs_trace_opening_cut(t);
}

const char *obs_trace_unclosed_note(const struct obs_trace *t, char *buf, size_t len)
{
    int n;
    if (obs_trace_opening_cut(t))
        n = snprintf(buf, len,
                     "no end mark: the process died while the shim was opening the trace (SIGKILL?), before "
                     "its metadata; %llu calls read",
                     (unsigned long long)t->ncalls);
    else if (obs_trace_meta(t, "closing") != NULL)
        /* killed while its exit path (or a signal's) closed the windows */
        n = snprintf(buf, len,
                     "no end mark: the process was killed (SIGKILL?) while it closed the trace (%s); %llu calls read "
                     "from %llu thread%s; calls made after that began are not recorded",
                     obs_trace_meta(t, "closing"), (unsigned long long)t->ncalls, (unsigned long long)t->nthreads,
                     t->nthreads == 1 ? "" : "s");
    else if (obs_trace_meta(t, "record_windows") != NULL)
        n = snprintf(buf, len,
                     "no end mark: the process was killed (SIGKILL?) or is still running; %llu calls read from %llu "
                     "thread%s; each thread misses at most the call it was in",
                     (unsigned long long)t->ncalls, (unsigned long long)t->nthreads, t->nthreads == 1 ? "" : "s");
    else
        n = snprintf(buf, len,
                     "no end mark: the process died before the shim could close the trace (SIGKILL?); %llu calls "
                     "read; each thread's last %s records at most are missing",
                     (unsigned long long)t->ncalls, obs_trace_meta(t, "buffer_records"));
    if (t->ignored_bytes && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; %llu bytes at offset %llu ignored (%s)",
                 (unsigned long long)t->ignored_bytes, (unsigned long long)t->ignored_offset, t->ignored_reason);
    return buf;
}

const struct obs_graph *obs_trace_graph(const struct obs_trace *t, uint32_t id)
{
    size_t lo = 0, hi = t->ngraphs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->graphs[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->ngraphs && t->graphs[lo].id == id ? &t->graphs[lo] : NULL;
}

const struct obs_stream *obs_trace_stream(const struct obs_trace *t, uint32_t id)
{
    size_t lo = 0, hi = t->nstreams;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->streams[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nstreams && t->streams[lo].id == id ? &t->streams[lo] : NULL;
}
