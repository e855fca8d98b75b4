/* The trace as an SQLite database (docs/sqlite.md): nsys's export tables
 * where the meaning is the same, so that nsys-style queries run unchanged,
 * plus trace_processor's `slice`/`slices` for Perfetto-style queries.
 *
 * One transaction, one prepared statement per table, journal off: the
 * database is a fresh temporary file that the caller renames into place
 * only when everything was written, so a crash leaves nothing half-done in
 * OUT and durability buys nothing. Every string is interned once into
 * StringIds before the rows go in; the per-call loop only binds integers
 * and strings the model already holds. */
#include "sqlite_export.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/trace.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* nsys's serialized ids: globalTid = pid * 2^24 + tid (docs/sqlite.md). */
#define GLOBAL_ID(pid, tid) ((int64_t)(pid) * 0x1000000 + (int64_t)(tid))

/* ENUM_NSYS_EVENT_CLASS ids: nsys's for CUDA; HIP is ours (nsys has none). */
#define EVENT_CLASS_CUDA_RUNTIME 0
#define EVENT_CLASS_CUDA_DRIVER 1
#define EVENT_CLASS_HIP_RUNTIME 1000
#define NVTX_PUSH_POP_RANGE 59

static const char schema_sql[] =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT NOT NULL, label TEXT NOT NULL);\n"
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);\n"
    "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);\n"
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL REFERENCES StringIds(id), priority INTEGER,"
    " globalTid INTEGER);\n"
    "CREATE TABLE OBS_META (name TEXT NOT NULL, value TEXT, source TEXT NOT NULL);\n"
    "CREATE TABLE OBS_LOST (globalTid INTEGER, tid INTEGER, reason TEXT, count INTEGER, start INTEGER,"
    " end INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " eventClass INTEGER NOT NULL REFERENCES ENUM_NSYS_EVENT_CLASS(id), globalTid INTEGER,"
    " correlationId INTEGER, nameId INTEGER NOT NULL REFERENCES StringIds(id), returnValue INTEGER NOT NULL,"
    " callchainId INTEGER, kind TEXT, nested INTEGER, phase TEXT, step INTEGER, generation INTEGER,"
    " rangeId INTEGER, layer INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
    " globalPid INTEGER, demangledName INTEGER NOT NULL REFERENCES StringIds(id),"
    " shortName INTEGER NOT NULL REFERENCES StringIds(id), mangledName INTEGER REFERENCES StringIds(id),"
    " launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER, gridX INTEGER NOT NULL,"
    " gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,"
    " blockZ INTEGER NOT NULL, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER NOT NULL,"
    " localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER, sharedMemoryExecuted INTEGER,"
    " graphNodeId INTEGER, name TEXT NOT NULL, timeBase TEXT NOT NULL, apiStart INTEGER, apiEnd INTEGER,"
    " globalTid INTEGER, phase TEXT, step INTEGER, generation INTEGER, rangeId INTEGER, layer INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
    " globalPid INTEGER, bytes INTEGER NOT NULL,"
    " copyKind INTEGER NOT NULL REFERENCES ENUM_CUDA_MEMCPY_OPER(id), srcKind INTEGER, dstKind INTEGER,"
    " srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,"
    " graphNodeId INTEGER, timeBase TEXT NOT NULL, apiStart INTEGER, apiEnd INTEGER, globalTid INTEGER,"
    " phase TEXT, step INTEGER, generation INTEGER, rangeId INTEGER, layer INTEGER);\n"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
    " deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
    " globalPid INTEGER, value INTEGER, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER,"
    " timeBase TEXT NOT NULL, apiStart INTEGER, apiEnd INTEGER, globalTid INTEGER, phase TEXT, step INTEGER,"
    " generation INTEGER, rangeId INTEGER, layer INTEGER);\n"
    "CREATE TABLE OBS_GRAPH_LAUNCHES (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,"
    " streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, graphId INTEGER, nodes INTEGER,"
    " kernelNodes INTEGER, name TEXT, timeBase TEXT NOT NULL, apiStart INTEGER, apiEnd INTEGER,"
    " globalTid INTEGER, phase TEXT, step INTEGER, generation INTEGER, rangeId INTEGER, layer INTEGER);\n"
    "CREATE TABLE OBS_GRAPHS (graphId INTEGER PRIMARY KEY, handle INTEGER, nodes INTEGER, kernelNodes INTEGER,"
    " walkIncomplete INTEGER);\n"
    "CREATE TABLE OBS_GRAPH_KERNELS (graphId INTEGER NOT NULL, name TEXT, count INTEGER NOT NULL);\n"
    "CREATE TABLE OBS_GRAPH_NODES (graphId INTEGER NOT NULL, position INTEGER NOT NULL, name TEXT, layer INTEGER);\n"
    "CREATE TABLE OBS_GPU_RANGES (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,"
    " streamId INTEGER NOT NULL, globalTid INTEGER, liveRangeId INTEGER NOT NULL, rangeId INTEGER, name TEXT,"
    " phase TEXT, step INTEGER, generation INTEGER, calls INTEGER NOT NULL, relabelled INTEGER NOT NULL,"
    " severalRanges INTEGER NOT NULL, container INTEGER NOT NULL);\n"
    "CREATE TABLE OBS_GENERATIONS (globalTid INTEGER, tid INTEGER NOT NULL, generation INTEGER NOT NULL,"
    " firstToken TEXT NOT NULL, ttftMs REAL, tokensPerS REAL, stepsPerS REAL, sequences INTEGER, itlMs REAL,"
    " decodeSteps INTEGER NOT NULL, timeBase TEXT NOT NULL, prefillMs REAL, firstDecodeMs REAL, steadyMs REAL,"
    " inBest INTEGER NOT NULL, ttftTo TEXT NOT NULL);\n"
    "CREATE TABLE OBS_ITERATIONS (globalTid INTEGER, tid INTEGER NOT NULL, generation INTEGER NOT NULL,"
    " iteration INTEGER NOT NULL, kind TEXT NOT NULL, kindFrom TEXT NOT NULL, source TEXT NOT NULL, step INTEGER,"
    " start INTEGER NOT NULL, end INTEGER NOT NULL, gpuStart INTEGER, gpuEnd INTEGER, gapNs INTEGER,"
    " gpuIdleNs INTEGER, calls INTEGER NOT NULL, launches INTEGER NOT NULL, kernels INTEGER NOT NULL,"
    " inputCopies INTEGER NOT NULL, inputBytes INTEGER NOT NULL, firstInputBytes INTEGER NOT NULL, tokens INTEGER,"
    " tokensFrom TEXT NOT NULL, readBytes INTEGER NOT NULL, sequences INTEGER, firstBlocks INTEGER NOT NULL,"
    " firstSeq INTEGER NOT NULL, lastSeq INTEGER NOT NULL);\n"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
    " rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER,"
    " textId INTEGER REFERENCES StringIds(id), domainId INTEGER, phase TEXT, step INTEGER,"
    " generation INTEGER, depth INTEGER, parentRangeId INTEGER, relabel INTEGER, ended INTEGER,"
    " calls INTEGER, callsTaken INTEGER);\n"
    "CREATE TABLE track (id INTEGER PRIMARY KEY, name TEXT, type TEXT, globalTid INTEGER, tid INTEGER,"
    " deviceId INTEGER, streamId INTEGER);\n"
    "CREATE TABLE obs_slice (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, dur INTEGER NOT NULL,"
    " category_id INTEGER REFERENCES StringIds(id), name_id INTEGER REFERENCES StringIds(id),"
    " track_id INTEGER, depth INTEGER NOT NULL, parent_id INTEGER, correlation_id INTEGER);\n"
    "CREATE VIEW slice AS SELECT s.id AS id, s.ts AS ts, s.dur AS dur, c.value AS category, n.value AS name,"
    " s.track_id AS track_id, s.depth AS depth, s.parent_id AS parent_id, s.correlation_id AS correlation_id"
    " FROM obs_slice AS s LEFT JOIN StringIds AS c ON c.id = s.category_id"
    " LEFT JOIN StringIds AS n ON n.id = s.name_id;\n"
    "CREATE VIEW slices AS SELECT * FROM slice;\n";

/* nsys's ENUM_CUDA_MEMCPY_OPER (the CUpti_ActivityMemcpyKind values). */
static const struct {
    int id;
    const char *name, *label;
} memcpy_opers[] = {
    {0, "CUDA_MEMCPY_OPER_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMCPY_OPER_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_OPER_DTOH", "Device-to-Host"},
    {3, "CUDA_MEMCPY_OPER_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_OPER_ATOH", "Array-to-Host"},
    {5, "CUDA_MEMCPY_OPER_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_OPER_ATOD", "Array-to-Device"},
    {7, "CUDA_MEMCPY_OPER_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_OPER_DTOD", "Device-to-Device"},
    {9, "CUDA_MEMCPY_OPER_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_OPER_PTOP", "Peer-to-Peer"},
};

/* A copy direction of the trace as an ENUM_CUDA_MEMCPY_OPER id; "default"
 * (cudaMemcpyDefault: the runtime chose) is unknown to us. */
static int copy_kind(unsigned direction)
{
    switch (direction) {
    case OBS_DIR_HTOD:
        return 1;
    case OBS_DIR_DTOH:
        return 2;
    case OBS_DIR_DTOD:
        return 8;
    case OBS_DIR_HTOH:
        return 9;
    case OBS_DIR_PEER:
        return 10;
    default:
        return 0;
    }
}

/* GPU slice names of copies, by ENUM_CUDA_MEMCPY_OPER id: what Chrome-trace
 * profilers call them, so that name LIKE '%Memcpy%' / '%HtoD%' finds them. */
static const char *copy_slice_name(int kind)
{
    switch (kind) {
    case 1:
        return "Memcpy HtoD";
    case 2:
        return "Memcpy DtoH";
    case 8:
        return "Memcpy DtoD";
    case 9:
        return "Memcpy HtoH";
    case 10:
        return "Memcpy PtoP";
    default:
        return "Memcpy";
    }
}

static const unsigned char api_family[] = {
#define OBS_API_FAMILY(id, name, kind, family) OBS_FAMILY_##family,
    OBS_API_LIST(OBS_API_FAMILY)
#undef OBS_API_FAMILY
};

/* ---- strings -------------------------------------------------------------------------- */

/* StringIds as it is filled: value -> id, open addressing. */
struct interner {
    char **keys;
    int64_t *ids;
    size_t cap, n;
    int64_t next_id;
    sqlite3_stmt *insert;
};

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int interner_grow(struct interner *in)
{
    size_t cap = in->cap ? in->cap * 2 : 1024, i;
    char **keys = calloc(cap, sizeof *keys);
    int64_t *ids = calloc(cap, sizeof *ids);
    if (keys == NULL || ids == NULL) {
        free(keys);
        free(ids);
        return -1;
    }
    for (i = 0; i < in->cap; i++)
        if (in->keys[i]) {
            size_t j = hash_str(in->keys[i]) & (cap - 1);
            while (keys[j])
                j = (j + 1) & (cap - 1);
            keys[j] = in->keys[i];
            ids[j] = in->ids[i];
        }
    free(in->keys);
    free(in->ids);
    in->keys = keys;
    in->ids = ids;
    in->cap = cap;
    return 0;
}

/* The StringIds id of s, inserting it the first time; -1 on error. */
static int64_t intern(struct interner *in, const char *s)
{
    size_t j;
    char *copy;
    if (in->n * 2 >= in->cap && interner_grow(in) != 0)
        return -1;
    j = hash_str(s) & (in->cap - 1);
    while (in->keys[j]) {
        if (strcmp(in->keys[j], s) == 0)
            return in->ids[j];
        j = (j + 1) & (in->cap - 1);
    }
    copy = strdup(s);
    if (copy == NULL)
        return -1;
    sqlite3_bind_int64(in->insert, 1, in->next_id);
    sqlite3_bind_text(in->insert, 2, copy, -1, SQLITE_STATIC);
    if (sqlite3_step(in->insert) != SQLITE_DONE) {
        free(copy);
        return -1;
    }
    sqlite3_reset(in->insert);
    in->keys[j] = copy;
    in->ids[j] = in->next_id;
    in->n++;
    return in->next_id++;
}

static void interner_free(struct interner *in)
{
    size_t i;
    for (i = 0; i < in->cap; i++)
        free(in->keys[i]);
    free(in->keys);
    free(in->ids);
}

/* ---- rows ------------------------------------------------------------------------------- */

/* A prepared INSERT and the next parameter to bind. */
struct row {
    sqlite3_stmt *st;
    int col;
};

static void put_int(struct row *r, int64_t v)
{
    sqlite3_bind_int64(r->st, ++r->col, v);
}

static void put_null(struct row *r)
{
    sqlite3_bind_null(r->st, ++r->col);
}

/* Text that lives as long as the statement's step (the model's strings, literals). */
static void put_text(struct row *r, const char *s)
{
    if (s)
        sqlite3_bind_text(r->st, ++r->col, s, -1, SQLITE_STATIC);
    else
        put_null(r);
}

static void put_opt(struct row *r, uint32_t v, uint32_t none)
{
    if (v == none)
        put_null(r);
    else
        put_int(r, v);
}

/* Run the row; a row that bound the wrong number of parameters is a bug
 * here, reported as such rather than written half-empty. */
static int row_done(struct row *r)
{
    int rc;
    if (r->col != sqlite3_bind_parameter_count(r->st))
        return SQLITE_MISUSE;
    rc = sqlite3_step(r->st);
    sqlite3_reset(r->st);
    r->col = 0;
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- the export ------------------------------------------------------------------------- */

enum {
    ST_RUNTIME,
    ST_KERNEL,
    ST_MEMCPY,
    ST_MEMSET,
    ST_GRAPH_LAUNCH,
    ST_NVTX,
    ST_SLICE,
    ST_TRACK,
    ST_META,
    ST_COUNT
};

static const char *const insert_sql[ST_COUNT] = {
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
    "?,?,?,?,?,?)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO OBS_GRAPH_LAUNCHES VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO obs_slice VALUES (?,?,?,?,?,?,?,?,?)",
    "INSERT INTO track VALUES (?,?,?,?,?,?,?)",
    "INSERT INTO OBS_META VALUES (?,?,?)",
};

struct exporter {
    const struct obs_trace *t;
    sqlite3 *db;
    struct row rows[ST_COUNT];
    struct interner strings;
    struct obs_sqlite_counts *n;
    int64_t *api_id;                            /* StringIds of API names, [OBS_API_COUNT + 1] */
    int64_t *kernel_demangled, *kernel_mangled; /* per kernel index; mangled: 0 = none */
    int64_t *kernel_short;
    const char **kernel_label;                  /* the name column: demangled, or a label */
    char **kernel_label_owned;
    int64_t *phase_name_id;                     /* per phase range: full name */
    uint32_t *phase_step;                       /* obs_phase_step() of each range */
    uint8_t *phase_shown;                       /* gets a slice (not wholly taken by RELABELs) */
    int64_t cat_api[4], cat_kernel, cat_memcpy, cat_memset, cat_graph, cat_phase;
    int64_t *copy_name_id;                      /* per ENUM_CUDA_MEMCPY_OPER id */
    int64_t memset_name_id;
    /* GPU tracks: (device << 32 | stream) -> track id, open addressing */
    uint64_t *track_keys;
    int64_t *track_ids;
    size_t track_cap, ntracks_gpu;
    int64_t next_track;
    char *err;
    size_t errlen;
};

static int fail(struct exporter *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct exporter *x, const char *fmt, ...)
{
    va_list ap;
    if (x->err[0])
        return -1; /* keep the first reason */
    va_start(ap, fmt);
    vsnprintf(x->err, x->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int db_fail(struct exporter *x, const char *what)
{
    return fail(x, "%s: %s", what, sqlite3_errmsg(x->db));
}

static int exec(struct exporter *x, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(x->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail(x, "%s", msg ? msg : sqlite3_errmsg(x->db));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int meta(struct exporter *x, const char *name, const char *value, const char *source)
{
    struct row *r = &x->rows[ST_META];
    put_text(r, name);
    put_text(r, value);
    put_text(r, source);
    return row_done(r) == SQLITE_OK ? 0 : db_fail(x, "OBS_META");
}

static int meta_u64(struct exporter *x, const char *name, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    return meta(x, name, buf, "reader");
}

static int64_t thread_gtid(const struct exporter *x, uint32_t thread)
{
    return GLOBAL_ID(x->t->pid, x->t->threads[thread].tid);
}

/* Track id of the GPU stream (device, stream), created on first use. */
static int64_t gpu_track(struct exporter *x, unsigned device, uint32_t stream)
{
    uint64_t key = ((uint64_t)device << 32 | stream) + 1; /* 0 marks a free slot */
    size_t j;
    if (x->ntracks_gpu * 2 >= x->track_cap) {
        size_t cap = x->track_cap ? x->track_cap * 2 : 64, i;
        uint64_t *keys = calloc(cap, sizeof *keys);
        int64_t *ids = calloc(cap, sizeof *ids);
        if (keys == NULL || ids == NULL) {
            free(keys);
            free(ids);
            return fail(x, "out of memory");
        }
        for (i = 0; i < x->track_cap; i++)
            if (x->track_keys[i]) {
                size_t k = (x->track_keys[i] * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
                while (keys[k])
                    k = (k + 1) & (cap - 1);
                keys[k] = x->track_keys[i];
                ids[k] = x->track_ids[i];
            }
        free(x->track_keys);
        free(x->track_ids);
        x->track_keys = keys;
        x->track_ids = ids;
        x->track_cap = cap;
    }
    j = (key * 0x9e3779b97f4a7c15ull >> 20) & (x->track_cap - 1);
    while (x->track_keys[j]) {
        if (x->track_keys[j] == key)
            return x->track_ids[j];
        j = (j + 1) & (x->track_cap - 1);
    }
    {
        struct row *r = &x->rows[ST_TRACK];
        char name[64];
        snprintf(name, sizeof name, "GPU %u stream %u", device, stream);
        put_int(r, x->next_track);
        put_text(r, name);
        put_text(r, "gpu_stream");
        put_null(r);
        put_null(r);
        put_int(r, device);
        put_int(r, stream);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "track");
    }
    x->track_keys[j] = key;
    x->track_ids[j] = x->next_track;
    x->ntracks_gpu++;
    return x->next_track++;
}

static int prepare(struct exporter *x)
{
    size_t i;
    for (i = 0; i < ST_COUNT; i++)
        if (sqlite3_prepare_v2(x->db, insert_sql[i], -1, &x->rows[i].st, NULL) != SQLITE_OK)
            return db_fail(x, "prepare");
    if (sqlite3_prepare_v2(x->db, "INSERT INTO StringIds VALUES (?,?)", -1, &x->strings.insert, NULL) != SQLITE_OK)
        return db_fail(x, "prepare");
    x->strings.next_id = 1;
    return 0;
}

/* Every string the rows refer to, interned before the first row. */
static int intern_names(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    static const char *const api_cat[4] = {"cuda_api", "cuda_api", "hip_api", "cuda_driver"};

    x->api_id = malloc((OBS_API_COUNT + 1) * sizeof *x->api_id);
    x->kernel_demangled = malloc((t->nkernels + 1) * sizeof *x->kernel_demangled);
    x->kernel_mangled = malloc((t->nkernels + 1) * sizeof *x->kernel_mangled);
    x->kernel_short = malloc((t->nkernels + 1) * sizeof *x->kernel_short);
    x->kernel_label = calloc(t->nkernels + 1, sizeof *x->kernel_label);
    x->kernel_label_owned = calloc(t->nkernels + 1, sizeof *x->kernel_label_owned);
    x->phase_name_id = malloc((t->nphases + 1) * sizeof *x->phase_name_id);
    x->phase_step = malloc((t->nphases + 1) * sizeof *x->phase_step);
    x->phase_shown = malloc(t->nphases + 1);
    x->copy_name_id = malloc(11 * sizeof *x->copy_name_id);
    if (!x->api_id || !x->kernel_demangled || !x->kernel_mangled || !x->kernel_short || !x->kernel_label ||
        !x->kernel_label_owned || !x->phase_name_id || !x->phase_step || !x->phase_shown || !x->copy_name_id)
        return fail(x, "out of memory");

    for (i = 0; i <= OBS_API_COUNT; i++)
        if ((x->api_id[i] = intern(&x->strings, obs_api_name((unsigned)i))) < 0)
            return db_fail(x, "StringIds");
    for (i = 0; i < t->nkernels; i++) {
        const struct obs_kernel *k = &t->kernels[i];
        char base[512], label[64];
        if (i == 0 || k->demangled[0] == '\0') {
            /* as the summary shows it: no string in the trace for this id */
            if (i == 0)
                snprintf(label, sizeof label, "(unnamed kernel)");
            else
                snprintf(label, sizeof label, "(unnamed kernel, id %u)", k->id);
            x->kernel_label_owned[i] = strdup(label);
            if (x->kernel_label_owned[i] == NULL)
                return fail(x, "out of memory");
            x->kernel_label[i] = x->kernel_label_owned[i];
            snprintf(base, sizeof base, "%s", label);
        } else {
            x->kernel_label[i] = k->demangled;
            obs_kernel_base_name_of(k->mangled, k->demangled, base, sizeof base);
            if (base[0] == '\0')
                snprintf(base, sizeof base, "%s", k->demangled);
        }
        x->kernel_demangled[i] = intern(&x->strings, x->kernel_label[i]);
        x->kernel_short[i] = intern(&x->strings, base);
        x->kernel_mangled[i] = i > 0 && k->mangled[0] ? intern(&x->strings, k->mangled) : 0;
        if (x->kernel_demangled[i] < 0 || x->kernel_short[i] < 0 || x->kernel_mangled[i] < 0)
            return db_fail(x, "StringIds");
    }
    for (i = 0; i < t->nphases; i++) {
        const struct obs_phase *p = &t->phases[i];
        if ((x->phase_name_id[i] = intern(&x->strings, p->name)) < 0)
            return db_fail(x, "StringIds");
        x->phase_step[i] = obs_phase_step(t, (uint32_t)i);
        /* as in the JSON: a BEGIN/END range whose calls RELABELs all took is left out */
        x->phase_shown[i] = !(p->calls == 0 && p->calls_taken > 0 && !p->relabel);
    }
    for (i = 0; i < 4; i++)
        if ((x->cat_api[i] = intern(&x->strings, api_cat[i])) < 0)
            return db_fail(x, "StringIds");
    for (i = 0; i <= 10; i++)
        if ((x->copy_name_id[i] = intern(&x->strings, copy_slice_name((int)i))) < 0)
            return db_fail(x, "StringIds");
    x->cat_kernel = intern(&x->strings, "kernel");
    x->cat_memcpy = intern(&x->strings, "memcpy");
    x->cat_memset = intern(&x->strings, "memset");
    x->cat_graph = intern(&x->strings, "graph");
    x->cat_phase = intern(&x->strings, "phase");
    x->memset_name_id = intern(&x->strings, "Memset");
    if (x->cat_kernel < 0 || x->cat_memcpy < 0 || x->cat_memset < 0 || x->cat_graph < 0 || x->cat_phase < 0 ||
        x->memset_name_id < 0)
        return db_fail(x, "StringIds");
    return 0;
}

static int write_enums(struct exporter *x)
{
    char sql[256];
    size_t i;
    for (i = 0; i < sizeof memcpy_opers / sizeof memcpy_opers[0]; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (%d, '%s', '%s')", memcpy_opers[i].id,
                 memcpy_opers[i].name, memcpy_opers[i].label);
        if (exec(x, sql) != 0)
            return -1;
    }
    return exec(x, "INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES"
                   " (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', 'CUDA runtime'),"
                   " (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver'),"
                   " (1000, 'OBS_HIP_RUNTIME', 'HIP runtime (obsshim)');"
                   "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES"
                   " (59, 'NvtxPushPopRange', 'NVTX PushPop Range');");
}

static int write_process(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    const char *exe = obs_trace_meta(t, "exe"), *cmdline = obs_trace_meta(t, "cmdline");
    sqlite3_stmt *st = NULL;
    char iso[64] = "";
    time_t secs = (time_t)(t->start_real_ns / 1000000000u);
    struct tm tm;
    size_t i;
    int rc;

    if (t->start_real_ns && gmtime_r(&secs, &tm))
        snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:%02d.%09lluZ", tm.tm_year + 1900, tm.tm_mon + 1,
                 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (unsigned long long)(t->start_real_ns % 1000000000u));
    if (sqlite3_prepare_v2(x->db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, ?, NULL)", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(x, "prepare");
    sqlite3_bind_int64(st, 1, (int64_t)t->start_real_ns);
    sqlite3_bind_text(st, 2, iso, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(x, "TARGET_INFO_SESSION_START_TIME");

    if (sqlite3_prepare_v2(x->db, "INSERT INTO PROCESSES VALUES (?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
        return db_fail(x, "prepare");
    sqlite3_bind_int64(st, 1, GLOBAL_ID(t->pid, 0));
    sqlite3_bind_int64(st, 2, t->pid);
    sqlite3_bind_text(st, 3, exe && exe[0] ? exe : cmdline, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_fail(x, "PROCESSES");

    /* one track per host thread: ids 0 .. nthreads-1 */
    if (sqlite3_prepare_v2(x->db, "INSERT INTO ThreadNames VALUES (?, 0, ?)", -1, &st, NULL) != SQLITE_OK)
        return db_fail(x, "prepare");
    for (i = 0; i < t->nthreads; i++) {
        const struct obs_thread *th = &t->threads[i];
        struct row *r = &x->rows[ST_TRACK];
        char name[300];
        if (th->name && th->name[0]) {
            int64_t id = intern(&x->strings, th->name);
            if (id < 0)
                break;
            sqlite3_bind_int64(st, 1, id);
            sqlite3_bind_int64(st, 2, thread_gtid(x, (uint32_t)i));
            if (sqlite3_step(st) != SQLITE_DONE)
                break;
            sqlite3_reset(st);
            snprintf(name, sizeof name, "%s %u", th->name, th->tid);
        } else {
            snprintf(name, sizeof name, "thread %u", th->tid);
        }
        put_int(r, (int64_t)i);
        put_text(r, name);
        put_text(r, "thread");
        put_int(r, thread_gtid(x, (uint32_t)i));
        put_int(r, th->tid);
        put_null(r);
        put_null(r);
        if (row_done(r) != SQLITE_OK)
            break;
    }
    sqlite3_finalize(st);
    if (i < t->nthreads)
        return db_fail(x, "threads");
    x->next_track = (int64_t)t->nthreads;
    return 0;
}

/* How the trace's GPU times were taken: off, steps, or the shim's mode (the
 * last gpu_time of its meta: events, cupti; a trace from before the meta
 * said nothing else: events). */
static const char *gpu_time_mode(const struct obs_trace *t)
{
    const char *mode = obs_trace_meta(t, "gpu_time");
    if (t->flags & OBS_FILE_GPU_STEPS)
        return "steps";
    if (!(t->flags & OBS_FILE_GPU_TIME))
        return "off";
    return mode != NULL && strcmp(mode, "off") != 0 ? mode : "events";
}

static int write_meta(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    int rc = 0;
    char ver[64];

    for (i = 0; i < t->nmeta && rc == 0; i++)
        rc = meta(x, t->meta[i].key, t->meta[i].value, "trace");
    snprintf(ver, sizeof ver, "obs-report %s (SQLite %s)", PACKAGE_VERSION, sqlite3_libversion());
    if (rc == 0)
        rc = meta(x, "exporter", ver, "reader");
    if (rc == 0)
        rc = meta(x, "file", t->path, "reader");
    if (rc == 0)
        rc = meta(x, "time_base", "CLOCK_MONOTONIC ns; utc_ns = ns - start_mono_ns + start_real_ns", "reader");
    if (rc == 0)
        rc = meta(x, "gpu_time", gpu_time_mode(t), "reader");
    if (rc == 0 && t->ignored_reason)
        rc = meta(x, "ignored_reason", t->ignored_reason, "reader");
    {
        const struct {
            const char *name;
            uint64_t v;
        } nums[] = {
            {"version", t->version},
            {"pid", t->pid},
            {"flags", t->flags},
            {"start_mono_ns", t->start_mono_ns},
            {"start_real_ns", t->start_real_ns},
            {"file_bytes", t->file_bytes},
            {"t_first", t->t_first},
            {"t_last", t->t_last},
            {"calls", t->ncalls},
            {"threads", t->nthreads},
            {"gpu_spans", t->ngpu},
            {"records_lost", t->records_lost},
            {"missing_gpu_spans", t->missing_gpu_spans},
            {"orphan_gpu_spans", t->orphan_gpu_spans},
            {"no_work_gpu_calls", t->no_work_gpu_calls},
            {"ignored_bytes", t->ignored_bytes},
            {"ignored_offset", t->ignored_offset},
            {"unknown_records", t->unknown_records},
            {"unknown_chunks", t->unknown_chunks},
            {"bad_phase_records", t->bad_phase_records},
            {"self_calls", t->self_calls},
            {"self_ns", t->self_ns},
        };
        for (i = 0; i < sizeof nums / sizeof nums[0] && rc == 0; i++)
            rc = meta_u64(x, nums[i].name, nums[i].v);
    }
    if (rc != 0)
        return -1;

    {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(x->db, "INSERT INTO OBS_LOST VALUES (?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
            return db_fail(x, "prepare");
        for (i = 0; i < t->nlost; i++) {
            const struct obs_lost *l = &t->lost[i];
            sqlite3_bind_int64(st, 1, GLOBAL_ID(t->pid, l->tid));
            sqlite3_bind_int64(st, 2, l->tid);
            sqlite3_bind_text(st, 3, obs_lost_reason_name(l->reason), -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 4, (int64_t)l->count);
            sqlite3_bind_int64(st, 5, (int64_t)l->t_first);
            sqlite3_bind_int64(st, 6, (int64_t)l->t_last);
            if (sqlite3_step(st) != SQLITE_DONE)
                break;
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        if (i < t->nlost)
            return db_fail(x, "OBS_LOST");
    }
    return 0;
}

static int write_graphs(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    sqlite3_stmt *g = NULL, *k = NULL, *nd = NULL;
    size_t i, j;
    int ok = 1;
    if (sqlite3_prepare_v2(x->db, "INSERT INTO OBS_GRAPHS VALUES (?, ?, ?, ?, ?)", -1, &g, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(x->db, "INSERT INTO OBS_GRAPH_KERNELS VALUES (?, ?, ?)", -1, &k, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(x->db, "INSERT INTO OBS_GRAPH_NODES VALUES (?, ?, ?, ?)", -1, &nd, NULL) != SQLITE_OK) {
        sqlite3_finalize(g);
        sqlite3_finalize(k);
        return db_fail(x, "prepare");
    }
    for (i = 0; i < t->ngraphs && ok; i++) {
        const struct obs_graph *gr = &t->graphs[i];
        sqlite3_bind_int64(g, 1, gr->id);
        sqlite3_bind_int64(g, 2, (int64_t)gr->handle);
        sqlite3_bind_int64(g, 3, (int64_t)gr->node_count);
        sqlite3_bind_int64(g, 4, (int64_t)gr->kernel_count);
        sqlite3_bind_int64(g, 5, (gr->flags & OBS_GRAPH_WALK_INCOMPLETE) != 0);
        ok = sqlite3_step(g) == SQLITE_DONE;
        sqlite3_reset(g);
        for (j = 0; j < gr->nkernels && ok; j++) {
            sqlite3_bind_int64(k, 1, gr->id);
            sqlite3_bind_text(k, 2, x->kernel_label[gr->kernels[j].kernel], -1, SQLITE_STATIC);
            sqlite3_bind_int64(k, 3, gr->kernels[j].count);
            ok = sqlite3_step(k) == SQLITE_DONE;
            sqlite3_reset(k);
        }
        for (j = 0; j < gr->nnodes && ok; j++) { /* kernel nodes in walk order, with their layers */
            sqlite3_bind_int64(nd, 1, gr->id);
            sqlite3_bind_int64(nd, 2, (int64_t)j);
            sqlite3_bind_text(nd, 3, x->kernel_label[gr->nodes[j].kernel], -1, SQLITE_STATIC);
            if (gr->nodes[j].layer == OBS_NO_LAYER)
                sqlite3_bind_null(nd, 4);
            else
                sqlite3_bind_int64(nd, 4, gr->nodes[j].layer);
            ok = sqlite3_step(nd) == SQLITE_DONE;
            sqlite3_reset(nd);
        }
    }
    sqlite3_finalize(g);
    sqlite3_finalize(k);
    sqlite3_finalize(nd);
    return ok ? 0 : db_fail(x, "OBS_GRAPHS");
}

/* OBS_GPU_TIME=steps: a row per range span (trace_reader.h,
 * obs_range_span): liveRangeId the BEGIN/END range measured (or the
 * RELABEL range whose calls it holds), rangeId the range its time counts
 * for (NVTX_EVENTS.rangeId; NULL: none), name, phase, step and generation
 * of that range (else of the live one). */
static int write_gpu_ranges(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    sqlite3_stmt *st = NULL;
    size_t i;
    int ok = 1;
    if (t->nrange_spans == 0)
        return 0;
    if (sqlite3_prepare_v2(x->db, "INSERT INTO OBS_GPU_RANGES VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(x, "prepare");
    for (i = 0; i < t->nrange_spans && ok; i++) {
        const struct obs_range_span *r = &t->range_spans[i];
        uint32_t shown = r->range != OBS_NONE ? r->range : r->live;
        const struct obs_phase *p = &t->phases[shown];
        const struct obs_stream *sm = obs_trace_stream(t, r->stream);
        char buf[256];
        sqlite3_bind_int64(st, 1, (int64_t)r->begin);
        sqlite3_bind_int64(st, 2, (int64_t)r->end);
        if (sm != NULL)
            sqlite3_bind_int64(st, 3, sm->device);
        else
            sqlite3_bind_null(st, 3);
        sqlite3_bind_int64(st, 4, r->stream);
        sqlite3_bind_int64(st, 5, thread_gtid(x, r->thread));
        sqlite3_bind_int64(st, 6, r->live);
        if (r->range != OBS_NONE)
            sqlite3_bind_int64(st, 7, r->range);
        else
            sqlite3_bind_null(st, 7);
        sqlite3_bind_text(st, 8, obs_range_span_name(t, r, buf, sizeof buf), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 9, p->phase, -1, SQLITE_STATIC);
        if (x->phase_step[shown] != UINT32_MAX)
            sqlite3_bind_int64(st, 10, x->phase_step[shown]);
        else
            sqlite3_bind_null(st, 10);
        sqlite3_bind_int64(st, 11, p->generation);
        sqlite3_bind_int64(st, 12, (int64_t)r->calls);
        sqlite3_bind_int64(st, 13, (r->flags & OBS_RANGE_SPAN_RELABELLED) != 0);
        sqlite3_bind_int64(st, 14, (r->flags & OBS_RANGE_SPAN_MIXED) != 0);
        sqlite3_bind_int64(st, 15, (r->flags & OBS_RANGE_SPAN_CONTAINER) != 0);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return ok ? 0 : db_fail(x, "OBS_GPU_RANGES");
}

/* OBS_GENERATIONS: obs-report phases --csv's rows (trace_phases.h). */
static void bind_real_or_null(sqlite3_stmt *st, int col, int defined, double v)
{
    if (defined)
        sqlite3_bind_double(st, col, v);
    else
        sqlite3_bind_null(st, col);
}

static int write_generations(struct exporter *x)
{
    struct obs_phase_stats s;
    sqlite3_stmt *st = NULL;
    size_t i, th;
    int ok = 1;
    if (obs_phase_stats_compute(x->t, &s) != 0)
        return fail(x, "out of memory");
    if (sqlite3_prepare_v2(x->db, "INSERT INTO OBS_GENERATIONS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &st, NULL) != SQLITE_OK) {
        obs_phase_stats_free(&s);
        return db_fail(x, "prepare");
    }
    for (i = 0; i < s.ngens && ok; i++) {
        const struct obs_generation_row *g = &s.gens[i];
        for (th = 0; th < x->t->nthreads && x->t->threads[th].tid != g->thread; th++)
            ;
        if (th < x->t->nthreads)
            sqlite3_bind_int64(st, 1, thread_gtid(x, (uint32_t)th));
        else
            sqlite3_bind_null(st, 1);
        sqlite3_bind_int64(st, 2, g->thread);
        sqlite3_bind_int64(st, 3, g->generation);
        sqlite3_bind_text(st, 4, g->first_token, -1, SQLITE_STATIC);
        bind_real_or_null(st, 5, g->ttft_defined, g->ttft_ms);
        bind_real_or_null(st, 6, g->tokens_defined, g->tokens_per_s);
        bind_real_or_null(st, 7, g->steps_defined, g->steps_per_s);
        sqlite3_bind_int64(st, 8, g->sequences);
        bind_real_or_null(st, 9, g->steps_defined, g->itl_ms);
        sqlite3_bind_int64(st, 10, g->decode_steps);
        sqlite3_bind_text(st, 11, s.time_base, -1, SQLITE_STATIC);
        bind_real_or_null(st, 12, g->has_prefill, (double)g->prefill_ns / 1e6);
        bind_real_or_null(st, 13, g->has_first_decode, (double)g->first_decode_ns / 1e6);
        bind_real_or_null(st, 14, g->has_steady, (double)g->steady_ns / 1e6);
        sqlite3_bind_int64(st, 15, g->in_best);
        sqlite3_bind_text(st, 16, g->ttft_to, -1, SQLITE_STATIC);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    obs_phase_stats_free(&s);
    return ok ? 0 : db_fail(x, "OBS_GENERATIONS");
}

/* OBS_ITERATIONS: obs-report serving --csv's rows (trace_serving.h), the
 * ITERATION ranges' iterations. */
static void bind_u64_or_null(sqlite3_stmt *st, int col, int defined, uint64_t v)
{
    if (defined)
        sqlite3_bind_int64(st, col, (sqlite3_int64)v);
    else
        sqlite3_bind_null(st, col);
}

static int write_iterations(struct exporter *x)
{
    struct obs_serving_stats s;
    sqlite3_stmt *st = NULL;
    size_t i;
    int ok = 1;
    if (!obs_trace_has_iterations(x->t))
        return 0;
    if (obs_serving_compute(x->t, NULL, &s) != 0)
        return fail(x, "out of memory");
    if (sqlite3_prepare_v2(x->db, "INSERT INTO OBS_ITERATIONS VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        obs_serving_free(&s);
        return db_fail(x, "prepare");
    }
    for (i = 0; i < s.nrows && ok; i++) {
        const struct obs_iteration_row *r = &s.rows[i];
        sqlite3_bind_int64(st, 1, thread_gtid(x, r->thread_index));
        sqlite3_bind_int64(st, 2, r->thread);
        sqlite3_bind_int64(st, 3, r->generation);
        sqlite3_bind_int64(st, 4, r->iteration);
        sqlite3_bind_text(st, 5, obs_iteration_kind_name(r->kind), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, r->kind_from, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, obs_iteration_source_name(r->source), -1, SQLITE_STATIC);
        bind_u64_or_null(st, 8, r->step != UINT32_MAX, r->step);
        sqlite3_bind_int64(st, 9, (sqlite3_int64)r->host_begin);
        sqlite3_bind_int64(st, 10, (sqlite3_int64)r->host_end);
        bind_u64_or_null(st, 11, r->gpu_timed, r->gpu_begin);
        bind_u64_or_null(st, 12, r->gpu_timed, r->gpu_end);
        bind_u64_or_null(st, 13, r->has_gap, r->gap_ns);
        bind_u64_or_null(st, 14, r->has_gpu_idle, r->gpu_idle_ns);
        sqlite3_bind_int64(st, 15, (sqlite3_int64)r->calls);
        sqlite3_bind_int64(st, 16, (sqlite3_int64)r->launches);
        sqlite3_bind_int64(st, 17, (sqlite3_int64)r->kernels);
        sqlite3_bind_int64(st, 18, (sqlite3_int64)r->input_copies);
        sqlite3_bind_int64(st, 19, (sqlite3_int64)r->input_bytes);
        sqlite3_bind_int64(st, 20, (sqlite3_int64)r->first_input_bytes);
        bind_u64_or_null(st, 21, r->has_tokens, r->tokens);
        sqlite3_bind_text(st, 22, r->tokens_from, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 23, (sqlite3_int64)r->read_bytes);
        bind_u64_or_null(st, 24, r->has_sequences, r->sequences);
        sqlite3_bind_int64(st, 25, (sqlite3_int64)r->first_blocks);
        sqlite3_bind_int64(st, 26, (sqlite3_int64)r->first_seq);
        sqlite3_bind_int64(st, 27, (sqlite3_int64)r->last_seq);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    x->n->iterations = s.nrows;
    obs_serving_free(&s);
    return ok ? 0 : db_fail(x, "OBS_ITERATIONS");
}

/* NVTX_EVENTS and a slice per range; slice id = range index = rangeId. */
static int write_phases(struct exporter *x)
{
    const struct obs_trace *t = x->t;
    size_t i;
    for (i = 0; i < t->nphases; i++) {
        const struct obs_phase *p = &t->phases[i];
        struct row *r = &x->rows[ST_NVTX];
        int64_t gtid = thread_gtid(x, p->thread);
        put_int(r, (int64_t)p->begin);
        put_int(r, (int64_t)p->end);
        put_int(r, NVTX_PUSH_POP_RANGE);
        put_int(r, (int64_t)i);
        put_null(r); /* category */
        put_null(r); /* color */
        put_text(r, p->name);
        put_int(r, gtid);
        put_int(r, gtid);
        put_int(r, x->phase_name_id[i]);
        put_int(r, 0); /* the default domain */
        put_text(r, p->phase);
        put_opt(r, x->phase_step[i], UINT32_MAX);
        put_int(r, p->generation);
        put_int(r, p->depth);
        put_opt(r, p->parent, OBS_NONE);
        put_int(r, p->relabel);
        put_int(r, p->relabel ? 1 : p->ended);
        put_int(r, (int64_t)p->calls);
        put_int(r, (int64_t)p->calls_taken);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "NVTX_EVENTS");
        x->n->ranges++;
        if (!x->phase_shown[i])
            continue;
        r = &x->rows[ST_SLICE];
        put_int(r, (int64_t)i);
        put_int(r, (int64_t)p->begin);
        put_int(r, (int64_t)(p->end > p->begin ? p->end - p->begin : 0));
        put_int(r, x->cat_phase);
        put_int(r, x->phase_name_id[i]);
        put_int(r, p->thread);
        put_int(r, p->depth);
        put_opt(r, p->parent, OBS_NONE);
        put_null(r);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "obs_slice");
        x->n->slices++;
    }
    return 0;
}

/* The phase columns: phase, step, generation, rangeId (all NULL outside a
 * phase), then layer (NULL outside a model layer, docs/layers.md). */
static void put_phase(struct exporter *x, struct row *r, const struct obs_call *c)
{
    const struct obs_phase *p = c->phase != OBS_NONE ? &x->t->phases[c->phase] : NULL;
    if (p) {
        put_text(r, p->phase);
        put_opt(r, x->phase_step[c->phase], UINT32_MAX);
        put_int(r, p->generation);
        put_int(r, c->phase);
    } else {
        put_null(r);
        put_null(r);
        put_null(r);
        put_null(r);
    }
    put_opt(r, c->layer, OBS_NO_LAYER);
}

/* The columns every activity table ends with: timeBase, apiStart, apiEnd,
 * globalTid and the phase columns. */
static void put_activity_tail(struct exporter *x, struct row *r, const struct obs_call *c, int gpu)
{
    put_text(r, gpu ? "gpu" : "host");
    put_int(r, (int64_t)c->host_begin);
    put_int(r, (int64_t)c->host_end);
    put_int(r, thread_gtid(x, c->thread));
    put_phase(x, r, c);
}

static int write_call(struct exporter *x, size_t seq)
{
    const struct obs_trace *t = x->t;
    const struct obs_call *c = &t->calls[seq];
    const struct obs_gpu_time *g = obs_call_gpu(t, c);
    uint64_t start = g ? g->begin : c->host_begin, end = g ? g->end : c->host_end;
    int64_t gpid = GLOBAL_ID(t->pid, 0), api_slice = (int64_t)(t->nphases + 2 * seq);
    unsigned family = c->api < OBS_API_COUNT ? api_family[c->api] : 0;
    int64_t gpu_name = -1, gpu_cat = -1, track;
    struct row *r;

    /* every call: CUPTI_ACTIVITY_KIND_RUNTIME and its API slice */
    r = &x->rows[ST_RUNTIME];
    put_int(r, (int64_t)c->host_begin);
    put_int(r, (int64_t)c->host_end);
    put_int(r, family == OBS_FAMILY_HIP           ? EVENT_CLASS_HIP_RUNTIME
               : family == OBS_FAMILY_CUDA_DRIVER ? EVENT_CLASS_CUDA_DRIVER
                                                  : EVENT_CLASS_CUDA_RUNTIME);
    put_int(r, thread_gtid(x, c->thread));
    put_int(r, (int64_t)seq);
    put_int(r, x->api_id[c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT]);
    put_int(r, c->status);
    put_null(r); /* callchainId */
    put_text(r, obs_call_kind_name(c->kind));
    put_int(r, (c->flags & OBS_CALL_NESTED) != 0);
    put_phase(x, r, c);
    if (row_done(r) != SQLITE_OK)
        return db_fail(x, "CUPTI_ACTIVITY_KIND_RUNTIME");
    x->n->runtime++;

    r = &x->rows[ST_SLICE];
    put_int(r, api_slice);
    put_int(r, (int64_t)c->host_begin);
    put_int(r, (int64_t)(c->host_end - c->host_begin));
    put_int(r, x->cat_api[family < 4 ? family : 0]);
    put_int(r, x->api_id[c->api < OBS_API_COUNT ? c->api : OBS_API_COUNT]);
    put_int(r, c->thread);
    if (c->phase != OBS_NONE && x->phase_shown[c->phase]) {
        put_int(r, (int64_t)t->phases[c->phase].depth + 1);
        put_int(r, c->phase);
    } else {
        put_int(r, 0);
        put_null(r);
    }
    put_int(r, (int64_t)seq);
    if (row_done(r) != SQLITE_OK)
        return db_fail(x, "obs_slice");
    x->n->slices++;

    /* work on the GPU: its activity table and a slice on its stream's track */
    switch (c->kind) {
    case OBS_KIND_KERNEL:
        r = &x->rows[ST_KERNEL];
        put_int(r, (int64_t)start);
        put_int(r, (int64_t)end);
        put_int(r, c->device);
        put_int(r, 0); /* contextId: one context per device */
        put_int(r, c->stream);
        put_int(r, (int64_t)seq);
        put_int(r, gpid);
        put_int(r, x->kernel_demangled[c->kernel]);
        put_int(r, x->kernel_short[c->kernel]);
        if (x->kernel_mangled[c->kernel] > 0)
            put_int(r, x->kernel_mangled[c->kernel]);
        else
            put_null(r);
        put_null(r); /* launchType */
        put_null(r); /* cacheConfig */
        put_null(r); /* registersPerThread */
        put_int(r, c->u.grid.x);
        put_int(r, c->u.grid.y);
        put_int(r, c->u.grid.z);
        put_int(r, c->block_x);
        put_int(r, c->block_y);
        put_int(r, c->block_z);
        put_null(r); /* staticSharedMemory */
        put_int(r, c->shmem);
        put_null(r); /* localMemoryPerThread */
        put_null(r); /* localMemoryTotal */
        put_null(r); /* gridId */
        put_null(r); /* sharedMemoryExecuted */
        put_null(r); /* graphNodeId */
        put_text(r, x->kernel_label[c->kernel]);
        put_activity_tail(x, r, c, g != NULL);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "CUPTI_ACTIVITY_KIND_KERNEL");
        x->n->kernels++;
        gpu_name = x->kernel_demangled[c->kernel];
        gpu_cat = x->cat_kernel;
        break;
    case OBS_KIND_MEMCPY: {
        int kind = copy_kind(obs_call_direction(c));
        r = &x->rows[ST_MEMCPY];
        put_int(r, (int64_t)start);
        put_int(r, (int64_t)end);
        put_int(r, c->device);
        put_int(r, 0);
        put_int(r, c->stream);
        put_int(r, (int64_t)seq);
        put_int(r, gpid);
        put_int(r, (int64_t)c->u.bytes);
        put_int(r, kind);
        put_null(r); /* srcKind */
        put_null(r); /* dstKind */
        put_null(r); /* srcDeviceId */
        put_null(r); /* srcContextId */
        if (kind == 10) /* peer copies record the destination device */
            put_int(r, c->device);
        else
            put_null(r);
        put_null(r); /* dstContextId */
        put_null(r); /* graphNodeId */
        put_activity_tail(x, r, c, g != NULL);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "CUPTI_ACTIVITY_KIND_MEMCPY");
        x->n->memcpys++;
        gpu_name = x->copy_name_id[kind];
        gpu_cat = x->cat_memcpy;
        break;
    }
    case OBS_KIND_MEMSET:
        r = &x->rows[ST_MEMSET];
        put_int(r, (int64_t)start);
        put_int(r, (int64_t)end);
        put_int(r, c->device);
        put_int(r, 0);
        put_int(r, c->stream);
        put_int(r, (int64_t)seq);
        put_int(r, gpid);
        put_null(r); /* value: not recorded */
        put_int(r, (int64_t)c->u.bytes);
        put_null(r); /* graphNodeId */
        put_null(r); /* memKind */
        put_activity_tail(x, r, c, g != NULL);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "CUPTI_ACTIVITY_KIND_MEMSET");
        x->n->memsets++;
        gpu_name = x->memset_name_id;
        gpu_cat = x->cat_memset;
        break;
    case OBS_KIND_GRAPH: {
        const struct obs_graph *gr = obs_call_graph(t, c);
        char name[48];
        r = &x->rows[ST_GRAPH_LAUNCH];
        put_int(r, (int64_t)start);
        put_int(r, (int64_t)end);
        put_int(r, c->device);
        put_int(r, c->stream);
        put_int(r, (int64_t)seq);
        put_int(r, gpid);
        if (c->shmem)
            put_int(r, c->shmem);
        else
            put_null(r);
        put_int(r, (int64_t)c->u.bytes);
        if (gr)
            put_int(r, (int64_t)gr->kernel_count);
        else
            put_null(r);
        put_text(r, c->kernel ? x->kernel_label[c->kernel] : NULL);
        put_activity_tail(x, r, c, g != NULL);
        if (row_done(r) != SQLITE_OK)
            return db_fail(x, "OBS_GRAPH_LAUNCHES");
        x->n->graphs++;
        if (c->shmem)
            snprintf(name, sizeof name, "Graph %u", c->shmem);
        else
            snprintf(name, sizeof name, "Graph");
        if ((gpu_name = intern(&x->strings, name)) < 0)
            return db_fail(x, "StringIds");
        gpu_cat = x->cat_graph;
        break;
    }
    default:
        return 0;
    }

    if ((track = gpu_track(x, c->device, c->stream)) < 0)
        return -1;
    r = &x->rows[ST_SLICE];
    put_int(r, api_slice + 1);
    put_int(r, (int64_t)start);
    put_int(r, (int64_t)(end > start ? end - start : 0));
    put_int(r, gpu_cat);
    put_int(r, gpu_name);
    put_int(r, track);
    put_int(r, 0);
    put_null(r);
    put_int(r, (int64_t)seq);
    if (row_done(r) != SQLITE_OK)
        return db_fail(x, "obs_slice");
    x->n->slices++;
    return 0;
}

static void exporter_free(struct exporter *x)
{
    size_t i;
    for (i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(x->rows[i].st);
    sqlite3_finalize(x->strings.insert);
    interner_free(&x->strings);
    if (x->kernel_label_owned)
        for (i = 0; i <= x->t->nkernels; i++)
            free(x->kernel_label_owned[i]);
    free(x->kernel_label_owned);
    free(x->kernel_label);
    free(x->api_id);
    free(x->kernel_demangled);
    free(x->kernel_mangled);
    free(x->kernel_short);
    free(x->phase_name_id);
    free(x->phase_step);
    free(x->phase_shown);
    free(x->copy_name_id);
    free(x->track_keys);
    free(x->track_ids);
}

int obs_sqlite_export(const struct obs_trace *t, const char *path, struct obs_sqlite_counts *counts, char *err,
                      size_t errlen)
{
    struct exporter x;
    struct obs_sqlite_counts local;
    char pragmas[200];
    size_t i;
    int rc = -1;

    memset(&x, 0, sizeof x);
    memset(&local, 0, sizeof local);
    x.t = t;
    x.n = counts ? counts : &local;
    memset(x.n, 0, sizeof *x.n);
    x.err = err;
    x.errlen = errlen;
    err[0] = '\0';

    if (sqlite3_open_v2(path, &x.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fail(&x, "%s", x.db ? sqlite3_errmsg(x.db) : "cannot open the database");
        sqlite3_close(x.db);
        return -1;
    }
    /* A fresh private file renamed into place at the end: no journal, no
     * fsync. Big pages write big traces faster; every table takes at least
     * one, so small traces keep the default. */
    snprintf(pragmas, sizeof pragmas,
             "PRAGMA page_size=%d; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
             " PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;",
             t->ncalls >= 100000 ? 65536 : 4096);
    if (exec(&x, pragmas) != 0 || exec(&x, schema_sql) != 0 || prepare(&x) != 0 || exec(&x, "BEGIN") != 0)
        goto out;
    if (intern_names(&x) != 0 || write_enums(&x) != 0 || write_process(&x) != 0 || write_meta(&x) != 0 ||
        write_graphs(&x) != 0 || write_phases(&x) != 0 || write_generations(&x) != 0 || write_iterations(&x) != 0 ||
        write_gpu_ranges(&x) != 0)
        goto out;
    for (i = 0; i < t->ncalls; obs_progress_tick(++i, t->ncalls))
        if (write_call(&x, i) != 0)
            goto out;
    if (exec(&x, "COMMIT") != 0)
        goto out;
    x.n->strings = x.strings.n;
    rc = 0;
out:
    exporter_free(&x);
    if (sqlite3_close(x.db) != SQLITE_OK && rc == 0)
        rc = fail(&x, "%s", sqlite3_errmsg(x.db));
    return rc;
}

const char *obs_sqlite_version(void)
{
    return sqlite3_libversion();
}
