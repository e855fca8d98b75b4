/* obs-report sqlite: the database answers the seed queries (nsys-style on
 * CUPTI_ACTIVITY_KIND_*, Perfetto-style on slices, run by the sqlite3 CLI
 * unchanged) with the figures `obs-report csv` gives for the same trace:
 * kernel launches and total time per name, copy bytes per direction,
 * memsets, API calls per name, calls per phase and step, one NVTX_EVENTS row
 * per phase range, one RUNTIME row per call. Traces: the fixture (every
 * record kind; with and without GPU time), tests/apps/llm_loop (copies,
 * automatic phases) and workload/obs_cuda (NVTX phases) under the shim on
 * the simulated runtime with OBS_GPU_TIME=events. Also: damaged input and
 * bad OUT paths give one line and exit 1 leaving no file, usage errors exit
 * 2, an existing OUT is replaced only on success, and a build without
 * SQLite says so. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"
#include "trace/trace_reader.h"
#include "workload_bins.h"

#define NO_SQLITE_LINE "obs-report: sqlite: built without SQLite (install libsqlite3-dev and re-run configure)\n"

static char report[4200], sqlite3_bin[4096];

static struct run_result run_report(const char *a1, const char *a2, const char *a3, const char *a4)
{
    const char *argv[] = {report, a1, a2, a3, a4, NULL};
    struct run_result r;
    if (run_program(argv, NULL, 300, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

static int file_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Entries of dir whose name starts with prefix (temporary files left behind). */
static size_t count_prefixed(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    closedir(d);
    return n;
}

/* Run sql with the sqlite3 CLI on db: rows tab-separated, no header, NULL
 * as "". Returns stdout (malloc'ed); *good: exit 0 and nothing on stderr. */
static char *query(const char *db, const char *sql, int *good)
{
    const char *argv[] = {sqlite3_bin, "-init", "/dev/null", "-batch", "-bail", "-noheader",
                          "-separator", "\t", db, sql, NULL};
    struct run_result r;
    char *out;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", sqlite3_bin);
    *good = run_exited_with(&r, 0) && r.err_len == 0;
    if (!*good)
        diag("sqlite3: status %d: %s (query: %s)", r.status, r.err, sql);
    out = r.out;
    r.out = NULL;
    run_result_free(&r);
    return out ? out : strdup("");
}

/* A one-number query. */
static long long query_int(const char *db, const char *sql)
{
    int good;
    char *out = query(db, sql, &good);
    long long v = good && out[0] ? strtoll(out, NULL, 10) : -1;
    free(out);
    return v;
}

/* ---- the CSV's figures -------------------------------------------------------------- */

enum { F_SEQ, F_TID, F_API, F_KIND, F_NAME, F_BYTES = 13, F_DIR, F_HB, F_HE, F_GB, F_GE, F_STATUS, F_PHASE, F_STEP, F_LAYER, F_GENERATION, F_RANGE, F_N };

/* A group of rows and its sums. */
struct group {
    char key[600];
    long long count, total, bytes;
};

struct groups {
    struct group *g;
    size_t n, cap;
};

static struct group *group_of(struct groups *gs, const char *key)
{
    size_t i;
    for (i = 0; i < gs->n; i++)
        if (strcmp(gs->g[i].key, key) == 0)
            return &gs->g[i];
    if (gs->n == gs->cap) {
        gs->cap = gs->cap ? gs->cap * 2 : 64;
        gs->g = realloc(gs->g, gs->cap * sizeof *gs->g);
        if (gs->g == NULL)
            bail("out of memory");
    }
    memset(&gs->g[gs->n], 0, sizeof gs->g[0]);
    snprintf(gs->g[gs->n].key, sizeof gs->g[0].key, "%s", key);
    return &gs->g[gs->n++];
}

static int cmp_group(const void *a, const void *b)
{
    return strcmp(((const struct group *)a)->key, ((const struct group *)b)->key);
}

/* The groups as the sqlite3 CLI prints "key\tcount[\tsum]" rows in key order. */
static char *groups_text(struct groups *gs, int with_total, int with_bytes)
{
    size_t i, len = 1, o = 0;
    char *s;
    if (gs->n > 0) /* gs->g is NULL then */
        qsort(gs->g, gs->n, sizeof *gs->g, cmp_group);
    for (i = 0; i < gs->n; i++)
        len += strlen(gs->g[i].key) + 64;
    s = malloc(len);
    if (s == NULL)
        bail("out of memory");
    s[0] = '\0';
    for (i = 0; i < gs->n; i++) {
        const struct group *g = &gs->g[i];
        o += (size_t)sprintf(s + o, "%s\t%lld", g->key, g->count);
        if (with_total)
            o += (size_t)sprintf(s + o, "\t%lld", g->total);
        if (with_bytes)
            o += (size_t)sprintf(s + o, "\t%lld", g->bytes);
        s[o++] = '\n';
        s[o] = '\0';
    }
    return s;
}

struct csv_figures {
    long long rows, kernels_gpu, memsets, memset_bytes, memset_ns, graphs;
    struct groups kernels;  /* name -> launches, total ns (GPU time if any, else host) */
    struct groups copies;   /* ENUM_CUDA_MEMCPY_OPER label -> copies, bytes */
    struct groups apis;     /* API name -> calls */
    struct groups phases;   /* "phase\tstep" -> calls */
};

static const char *copy_label(const char *dir)
{
    static const char *const map[][2] = {{"HtoD", "Host-to-Device"}, {"DtoH", "Device-to-Host"},
                                         {"DtoD", "Device-to-Device"}, {"HtoH", "Host-to-Host"},
                                         {"peer", "Peer-to-Peer"}};
    size_t i;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(dir, map[i][0]) == 0)
            return map[i][1];
    return "Unknown";
}

/* Read the CSV of trace. A kernel whose name id has no string has an empty
 * name there; the database labels it as the summary does, from its id in
 * the model (t). */
static void csv_read(const struct obs_trace *t, const char *trace, const char *csv_path, struct csv_figures *f)
{
    struct run_result r = run_report("csv", "-o", csv_path, trace);
    char *text, *line, *save = NULL;
    memset(f, 0, sizeof *f);
    if (!run_exited_with(&r, 0))
        bail("obs-report csv %s failed: %s", trace, r.err);
    run_result_free(&r);
    text = test_read_file(csv_path, NULL);
    if (text == NULL)
        bail("cannot read %s", csv_path);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *fld[F_N + 2];
        long long host, gpu = -1;
        if (strncmp(line, "seq,", 4) == 0)
            continue;
        if (test_csv_split(line, fld, F_N + 1) != F_N)
            bail("bad CSV row: %s", line);
        f->rows++;
        host = strtoll(fld[F_HE], NULL, 10) - strtoll(fld[F_HB], NULL, 10);
        if (fld[F_GB][0])
            gpu = strtoll(fld[F_GE], NULL, 10) - strtoll(fld[F_GB], NULL, 10);
        group_of(&f->apis, fld[F_API])->count++;
        if (fld[F_PHASE][0]) {
            char key[600];
            snprintf(key, sizeof key, "%s\t%s", fld[F_PHASE], fld[F_STEP]);
            group_of(&f->phases, key)->count++;
        }
        if (strcmp(fld[F_KIND], "kernel") == 0) {
            char label[64];
            const char *name = fld[F_NAME];
            struct group *g;
            size_t seq = strtoull(fld[F_SEQ], NULL, 10);
            if (name[0] == '\0' && seq < t->ncalls) {
                uint32_t k = t->calls[seq].kernel;
                if (k == 0)
                    snprintf(label, sizeof label, "(unnamed kernel)");
                else
                    snprintf(label, sizeof label, "(unnamed kernel, id %u)", t->kernels[k].id);
                name = label;
            }
            g = group_of(&f->kernels, name);
            g->count++;
            g->total += gpu >= 0 ? gpu : host;
            f->kernels_gpu += gpu >= 0;
        } else if (strcmp(fld[F_KIND], "memcpy") == 0) {
            struct group *g = group_of(&f->copies, copy_label(fld[F_DIR]));
            g->count++;
            g->bytes += strtoll(fld[F_BYTES], NULL, 10);
        } else if (strcmp(fld[F_KIND], "graph") == 0) {
            f->graphs++;
        } else if (strcmp(fld[F_KIND], "memset") == 0) {
            f->memsets++;
            f->memset_bytes += strtoll(fld[F_BYTES], NULL, 10);
            f->memset_ns += gpu >= 0 ? gpu : host;
        }
    }
    free(text);
}

static void csv_free(struct csv_figures *f)
{
    free(f->kernels.g);
    free(f->copies.g);
    free(f->apis.g);
    free(f->phases.g);
}

/* ---- one trace, cross-checked ----------------------------------------------------- */

static void check_query_text(const char *label, const char *db, const char *sql, const char *want,
                             const char *what)
{
    int good;
    char *got = query(db, sql, &good);
    ok(good, "%s: %s: the query runs", label, what);
    is_string(want, got, "%s: %s", label, what);
    free(got);
}

/* Rows "name\tlaunches\ttotal_ms..." of a seed query: launches and
 * total_ms of every kernel agree with the CSV. */
static void check_seed_rows(const char *label, const char *db, const char *sql, const struct csv_figures *f,
                            int total_col, const char *what)
{
    int good;
    char *out = query(db, sql, &good), *line, *save = NULL;
    size_t found = 0, bad = 0, i;
    ok(good, "%s: %s: the query runs", label, what);
    for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *col[8];
        int n = 0;
        char *p = line;
        col[n++] = p;
        while (n < 8 && (p = strchr(p, '\t')) != NULL) {
            *p++ = '\0';
            col[n++] = p;
        }
        for (i = 0; i < f->kernels.n; i++) {
            const struct group *g = &f->kernels.g[i];
            if (n > total_col && strcmp(col[0], g->key) == 0) {
                double ms = strtod(col[total_col], NULL);
                found++;
                if (strtoll(col[1], NULL, 10) != g->count || fabs(ms - (double)g->total / 1e6) > 1e-9 * (ms + 1)) {
                    diag("%s: %s: %s launches, %s ms; CSV: %lld, %.6f ms", what, g->key, col[1], col[total_col],
                         g->count, (double)g->total / 1e6);
                    bad++;
                }
            }
        }
    }
    is_int((long long)(f->kernels.n < 10 ? f->kernels.n : 10), (long long)(found < 10 ? found : 10),
           "%s: %s: every kernel name has its row", label, what);
    is_int(0, (long long)bad, "%s: %s: launches and total_ms equal the CSV's", label, what);
    free(out);
}

/* event_class: the ENUM_NSYS_EVENT_CLASS every call must have, -1: mixed. */
static void cross_check(const char *label, const char *trace, int event_class)
{
    char db[4300], csv[4300], sql[512];
    struct csv_figures f;
    struct obs_trace *t;
    struct run_result r;
    char *want;
    size_t i, shown = 0, gpu_work;
    long long v;

    snprintf(db, sizeof db, "%s.sqlite", trace);
    snprintf(csv, sizeof csv, "%s.csv", trace);
    t = shim_trace_open(trace);
    if (t == NULL)
        bail("%s: cannot read %s", label, trace);
    csv_read(t, trace, csv, &f);
    r = run_report("sqlite", trace, db, NULL);
    ok(run_exited_with(&r, 0) && r.err_len == 0 && r.out_len == 0, "%s: obs-report sqlite: exit 0, quiet", label);
    run_result_free(&r);

    /* nsys-style */
    want = groups_text(&f.kernels, 1, 0);
    check_query_text(label, db, "SELECT name, COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY name"
                         " ORDER BY name;",
                     want, "kernels per name (count, total ns) equal the CSV's");
    check_query_text(label, db,
                     "SELECT s.value, COUNT(*), SUM(k.end-k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                     " JOIN StringIds s ON k.demangledName = s.id GROUP BY 1 ORDER BY 1;",
                     want, "nsys join on demangledName: the same figures");
    free(want);
    check_seed_rows(label, db,
                    "SELECT name, COUNT(*) as calls, SUM(end-start)/1e6 as total_ms"
                    " FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY name ORDER BY total_ms DESC LIMIT 10;",
                    &f, 2, "seed 004 query on CUPTI_ACTIVITY_KIND_KERNEL");
    want = groups_text(&f.copies, 0, 1);
    check_query_text(label, db,
                     "SELECT o.label, COUNT(*), SUM(m.bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
                     " JOIN ENUM_CUDA_MEMCPY_OPER o ON o.id = m.copyKind GROUP BY o.label ORDER BY o.label;",
                     want, "copies and bytes per direction equal the CSV's");
    free(want);
    snprintf(sql, sizeof sql, "%lld\t%lld\t%lld\n", f.memsets, f.memset_bytes, f.memset_ns);
    check_query_text(label, db,
                     "SELECT COUNT(*), IFNULL(SUM(bytes), 0), IFNULL(SUM(end - start), 0)"
                     " FROM CUPTI_ACTIVITY_KIND_MEMSET;",
                     sql, "memsets: count, bytes, time equal the CSV's");
    want = groups_text(&f.apis, 0, 0);
    check_query_text(label, db,
                     "SELECT s.value, COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s"
                     " ON s.id = r.nameId GROUP BY 1 ORDER BY 1;",
                     want, "API calls per name equal the CSV's");
    free(want);
    is_int(f.rows, query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME;"),
           "%s: one RUNTIME row per call (%lld)", label, f.rows);
    if (event_class >= 0) {
        snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass = %d;",
                 event_class);
        is_int(f.rows, query_int(db, sql), "%s: every call has eventClass %d", label, event_class);
    }
    is_int(f.graphs, query_int(db, "SELECT COUNT(*) FROM OBS_GRAPH_LAUNCHES;"),
           "%s: one OBS_GRAPH_LAUNCHES row per graph launch (%lld)", label, f.graphs);
    is_int((long long)t->ncalls, f.rows, "%s: the CSV has every call", label);
    is_int(f.kernels_gpu, query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE timeBase = 'gpu';"),
           "%s: kernels on GPU time where the CSV has it (%lld)", label, f.kernels_gpu);
    is_int(0,
           query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
                         " ON r.correlationId = k.correlationId WHERE r.nameId NOT IN (SELECT id FROM StringIds"
                         " WHERE value LIKE '%Launch%');"),
           "%s: each kernel's correlationId names its launch call", label);
    snprintf(sql, sizeof sql,
             "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE globalTid / 0x1000000 %% 0x1000000 != %u;",
             t->pid);
    is_int(0, query_int(db, sql), "%s: globalTid decodes to the pid as nsys's", label);

    /* phases */
    for (i = 0; i < t->nphases; i++)
        shown += !(t->phases[i].calls == 0 && t->phases[i].calls_taken > 0 && !t->phases[i].relabel);
    is_int((long long)t->nphases, query_int(db, "SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59;"),
           "%s: one NVTX_EVENTS push/pop range per phase range (%zu)", label, t->nphases);
    is_int((long long)shown, query_int(db, "SELECT COUNT(*) FROM slices WHERE category = 'phase';"),
           "%s: a phase slice per range shown (%zu)", label, shown);
    want = groups_text(&f.phases, 0, 0);
    check_query_text(label, db,
                     "SELECT phase || char(9) || IFNULL(step, ''), COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"
                     " WHERE phase IS NOT NULL GROUP BY 1 ORDER BY 1;",
                     want, "calls per phase and step equal the CSV's");
    free(want);
    is_int(0,
           query_int(db, "SELECT COUNT(*) FROM slice c JOIN slice p ON p.id = c.parent_id"
                         " WHERE c.depth != p.depth + 1 OR c.track_id != p.track_id OR p.category != 'phase';"),
           "%s: a slice's parent is a phase range one level up, on its track", label);

    /* generations: the rows obs-report phases --csv prints (one definition, shim/trace/trace_phases.c) */
    {
        struct obs_phase_stats ps;
        char *rows = NULL;
        size_t rlen = 0, g;
        FILE *mem = open_memstream(&rows, &rlen);
        if (mem == NULL || obs_phase_stats_compute(t, &ps) != 0)
            bail("out of memory");
        for (g = 0; g < ps.ngens; g++) {
            const struct obs_generation_row *gr = &ps.gens[g];
            fprintf(mem, "%u|%u|%s|", gr->thread, gr->generation, gr->first_token);
            if (gr->ttft_defined)
                fprintf(mem, "%.6f", gr->ttft_ms);
            fprintf(mem, "|%u|%s\n", gr->decode_steps, gr->ttft_to);
        }
        fclose(mem);
        check_query_text(label, db,
                         "SELECT tid || '|' || generation || '|' || firstToken || '|' || CASE WHEN ttftMs IS NULL THEN ''"
                         " ELSE printf('%.6f', ttftMs) END || '|' || decodeSteps || '|' || ttftTo FROM OBS_GENERATIONS"
                         " ORDER BY rowid;",
                         rows, "OBS_GENERATIONS: each generation's TTFT definitions (firstToken, ttftTo), TTFT and steps "
                               "as obs-report phases");
        free(rows);
        obs_phase_stats_free(&ps);
    }

    /* trace_processor-style */
    gpu_work = (size_t)query_int(db, "SELECT (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)"
                                     " + (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
                                     " + (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)"
                                     " + (SELECT COUNT(*) FROM OBS_GRAPH_LAUNCHES);");
    v = query_int(db, "SELECT COUNT(*) FROM slices;");
    is_int((long long)(t->ncalls + gpu_work + shown), v, "%s: slices: calls + GPU work + phase ranges", label);
    check_seed_rows(label, db,
                    "SELECT name, COUNT(*) as launches, SUM(dur)/1e6 as total_ms, AVG(dur)/1e6 as avg_ms FROM slices"
                    " WHERE name IS NOT NULL GROUP BY name ORDER BY total_ms DESC LIMIT 50;",
                    &f, 2, "seed 002 query 1 on slices");
    {
        static const char *const seed_queries[] = {
            "SELECT ts/1e9 as start_sec, dur/1e9 as dur_sec, name FROM slices WHERE dur > 100000000 AND depth <= 2"
            " ORDER BY ts LIMIT 50;",
            "SELECT name, COUNT(*) as launches, AVG(dur)/1e3 as avg_us FROM slices WHERE dur < 100000 GROUP BY name"
            " HAVING launches > 1000 ORDER BY launches DESC LIMIT 30;",
            "SELECT name, COUNT(*) as count, SUM(dur)/1e6 as total_ms FROM slices WHERE name LIKE '%Memcpy%' OR"
            " name LIKE '%copy%' OR name LIKE '%Copy%' GROUP BY name ORDER BY total_ms DESC LIMIT 20;",
            "SELECT name, COUNT(*) as count, SUM(dur)/1e6 as total_ms, AVG(dur)/1e3 as avg_us FROM slices WHERE"
            " name LIKE '%fmha%' OR name LIKE '%attention%' OR name LIKE '%sdpa%' GROUP BY name ORDER BY total_ms"
            " DESC;",
            /* query_kernel_launches.sql and query_timeline.sql, as written */
            "SELECT\n  name,\n  COUNT(*) as launches,\n  SUM(dur)/1e6 as total_ms,\n  AVG(dur)/1e3 as avg_us,\n"
            "  MIN(dur)/1e3 as min_us,\n  MAX(dur)/1e3 as max_us\nFROM slices\n"
            "WHERE name LIKE '%kernel%' OR name LIKE '%Launch%'\nGROUP BY name\nORDER BY total_ms DESC\nLIMIT 50;\n",
            "SELECT\n  (ts - (SELECT MIN(ts) FROM slices))/1e9 as elapsed_sec,\n  dur/1e9 as duration_sec,\n  name,\n"
            "  CASE\n    WHEN name LIKE '%fmha%' THEN 'ATTENTION'\n    WHEN name LIKE '%nvjet%' THEN 'MATMUL'\n"
            "    WHEN name LIKE '%copy%' OR name LIKE '%Copy%' THEN 'MEMORY'\n"
            "    WHEN name LIKE '%cat%' OR name LIKE '%Cat%' THEN 'CONCAT'\n    ELSE 'OTHER'\n  END as category\n"
            "FROM slices\nWHERE depth = 0 AND dur > 10000000  -- >10ms events\nORDER BY ts\nLIMIT 100;\n",
            /* the NVTX query of a public nsys exporter */
            "SELECT n.start AS start_ns, n.end AS end_ns, n.globalTid AS thread_id, COALESCE(n.text, s.value,"
            " 'Unknown_Region') as name FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s ON n.textId = s.id WHERE"
            " n.eventType = 59 ORDER BY n.start;",
            "PRAGMA table_info(slices);",
        };
        size_t q, bad = 0;
        for (q = 0; q < sizeof seed_queries / sizeof seed_queries[0]; q++) {
            int good;
            free(query(db, seed_queries[q], &good));
            bad += !good;
        }
        is_int(0, (long long)bad, "%s: the other seed queries run unchanged", label);
    }
    if (f.copies.n) {
        int good;
        char *out = query(db,
                          "SELECT CASE WHEN name LIKE '%HtoD%' THEN 'Host\xe2\x86\x92" "Device' WHEN name LIKE"
                          " '%DtoH%' THEN 'Device\xe2\x86\x92Host' ELSE name END as direction, COUNT(*) as count"
                          " FROM slices WHERE name LIKE '%Memcpy%' GROUP BY direction ORDER BY direction;",
                          &good);
        char want_row[128];
        size_t k, bad = 0;
        for (k = 0; k < f.copies.n; k++) {
            const struct group *g = &f.copies.g[k];
            const char *dir = strcmp(g->key, "Host-to-Device") == 0   ? "Host\xe2\x86\x92" "Device"
                              : strcmp(g->key, "Device-to-Host") == 0 ? "Device\xe2\x86\x92Host"
                                                                      : NULL;
            if (dir == NULL)
                continue;
            snprintf(want_row, sizeof want_row, "%s\t%lld\n", dir, g->count);
            if (strstr(out, want_row) == NULL) {
                diag("no row '%s' in:\n%s", want_row, out);
                bad++;
            }
        }
        ok(good && bad == 0, "%s: seed 002 memory-ops query: copy slices per direction as in the CSV", label);
        free(out);
    } else {
        skip("%s: no copies", label);
    }
    obs_trace_free(t);
    csv_free(&f);
}

/* ---- fixture-only facts, errors, usage ------------------------------------------ */

static void test_fixture_facts(const char *fx, const char *fx_host)
{
    char db[4400];
    struct run_result r;
    snprintf(db, sizeof db, "%s.sqlite", fx);
    r = run_report("sqlite", fx, db, NULL); /* cross_check wrote it already: replaced */
    ok(run_exited_with(&r, 0), "fixture: an existing database is replaced");
    run_result_free(&r);
    is_int(1, query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE name = '(unnamed kernel, id 7)'"
                            " AND shortName = demangledName AND mangledName IS NULL;"),
           "fixture: a launch whose name id has no string is labelled as in the summary");
    is_int(1, query_int(db, "SELECT COUNT(*) FROM OBS_GRAPH_LAUNCHES;"), "fixture: the graph launch has its row");
    is_int(FIX_LOST, query_int(db, "SELECT SUM(count) FROM OBS_LOST;"), "fixture: OBS_LOST adds up to %d", FIX_LOST);
    is_int(FIX_PID, query_int(db, "SELECT value FROM OBS_META WHERE name = 'pid';"), "fixture: OBS_META has the pid");
    is_int(1, query_int(db, "SELECT COUNT(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId"
                            " WHERE s.value = 'worker, \"one\"' AND t.globalTid = 4242 * 16777216 + 101;"),
           "fixture: ThreadNames names thread 101");
    is_int(FIX_REAL0, query_int(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME;"),
           "fixture: TARGET_INFO_SESSION_START_TIME");

    snprintf(db, sizeof db, "%s.sqlite", fx_host);
    r = run_report("sqlite", fx_host, db, NULL);
    ok(run_exited_with(&r, 0), "fixture without GPU time: exported");
    run_result_free(&r);
    is_int(0,
           query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
                         " USING (correlationId) WHERE k.timeBase != 'host' OR k.start != r.start OR k.end != r.end;"),
           "without GPU time: kernel rows carry the launch's host times, timeBase 'host'");
    ok(query_int(db, "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL;") > 0, "without GPU time: kernels listed");
}

/* "obs-report: <path>: <reason>\n", exit 1, no OUT, no temporary file. */
static void fails_cleanly(const char *in, const char *out, const char *msg_path, const char *reason,
                          const char *what)
{
    char want[8600], dir[4300], *slash, prefix[4400];
    struct run_result r = run_report("sqlite", in, out, NULL);
    snprintf(want, sizeof want, "obs-report: %s: %s\n", msg_path, reason);
    snprintf(dir, sizeof dir, "%s", out);
    slash = strrchr(dir, '/');
    snprintf(prefix, sizeof prefix, "%s.tmp.", slash ? slash + 1 : dir);
    if (slash)
        *slash = '\0';
    ok(run_exited_with(&r, 1) && strcmp(r.err, want) == 0 && r.out_len == 0, "%s: exit 1, one line", what);
    if (strcmp(r.err, want) != 0)
        diag("stderr: '%s', wanted '%s'", r.err, want);
    ok(count_prefixed(dir, prefix) == 0, "%s: no temporary file left", what);
    run_result_free(&r);
}

static void test_errors(const char *dir, const char *fx)
{
    const char *bad = test_path(dir, "bad.obs");
    char out[4300], keep[4300], sub[4300];
    size_t len;
    char *d = test_read_file(fx, &len), *kept;

    if (d == NULL)
        bail("cannot read the fixture");
    snprintf(out, sizeof out, "%s/out.sqlite", dir);
    test_write_file(bad, d, 40);
    fails_cleanly(bad, out, bad, "truncated header", "a trace cut inside its header");
    ok(!file_exists(out), "a trace cut inside its header: no OUT");
    test_write_file(bad, "#!/bin/sh\necho this is a shell script\n", 38);
    fails_cleanly(bad, out, bad, "not an obsshim trace", "a foreign file");
    ok(!file_exists(out), "a foreign file: no OUT");

    snprintf(keep, sizeof keep, "%s/keep.sqlite", dir);
    test_write_file(keep, "precious", 8);
    fails_cleanly(bad, keep, bad, "not an obsshim trace", "a foreign file over an existing OUT");
    kept = test_read_file(keep, NULL);
    is_string("precious", kept, "an existing OUT is untouched when the export fails");
    free(kept);

    snprintf(sub, sizeof sub, "%s/no/such/dir/x.sqlite", dir);
    {
        struct run_result r = run_report("sqlite", fx, sub, NULL);
        char want[4400];
        snprintf(want, sizeof want, "obs-report: %s: No such file or directory\n", sub);
        is_string(want, r.err, "OUT in a missing directory: the reason");
        ok(run_exited_with(&r, 1), "OUT in a missing directory: exit 1");
        run_result_free(&r);
    }
    fails_cleanly(fx, dir, dir, "not a regular file", "OUT is a directory");
    free(d);
}

static void test_usage(const char *fx)
{
    struct run_result r;
    r = run_report("sqlite", NULL, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing argument"), "sqlite without arguments: exit 2");
    run_result_free(&r);
    r = run_report("sqlite", fx, NULL, NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "missing argument"), "sqlite without OUT: exit 2");
    run_result_free(&r);
    r = run_report("sqlite", fx, "a.sqlite", "b.sqlite");
    ok(run_exited_with(&r, 2) && strstr(r.err, "unexpected argument 'b.sqlite'"), "an extra argument: exit 2");
    run_result_free(&r);
    r = run_report("sqlite", fx, "-", NULL);
    ok(run_exited_with(&r, 2) && strstr(r.err, "OUT must be a file name"), "OUT '-': exit 2");
    run_result_free(&r);
    r = run_report("sqlite", "--frob", fx, "x.sqlite");
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option '--frob'") && strstr(r.err, "obs-report sqlite --help"),
       "an unknown option: exit 2");
    run_result_free(&r);
    r = run_report("sqlite", "-o", "x", fx);
    ok(run_exited_with(&r, 2) && strstr(r.err, "unknown option"), "-o is not an option of sqlite: exit 2");
    run_result_free(&r);
    r = run_report("sqlite", "--help", NULL, NULL);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Usage: obs-report sqlite") && strstr(r.out, "--verbose") &&
           strstr(r.out, "timeBase"),
       "sqlite --help");
    run_result_free(&r);
}

/* ---- simulator traces ---------------------------------------------------------------- */

/* Run argv under the shim with GPU time; the trace's path into trace. */
static int record(const char *tag, const char *const argv[], char *trace, size_t tracelen)
{
    char libpath[4200], out_env[4300];
    const char *env[] = {libpath, out_env, "OBS_GPU_TIME=events", "OBS_JSON=0", "OBS_SUMMARY=0", NULL};
    struct run_result r;
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/%s", test_tmpdir(), tag);
    snprintf(trace, tracelen, "%s/%s.obs", test_tmpdir(), tag);
    shim_run(argv, env, 1, 300, &r);
    ok(run_exited_with(&r, 0) && file_exists(trace), "%s under the shim (OBS_GPU_TIME=events): exit 0, trace written",
       tag);
    if (!run_exited_with(&r, 0))
        diag_text("stderr", r.err);
    run_result_free(&r);
    return file_exists(trace);
}

int main(void)
{
    const char *dir, *why = NULL, *bin;
    char fx[4300], fx_host[4300], trace[4300], app[4300];
    struct run_result r;

    snprintf(report, sizeof report, "%s/obs-report", test_builddir());
    if (!test_executable(report))
        skip_all("obs-report not built");
    dir = test_tmpdir();
    snprintf(fx, sizeof fx, "%s/fixture.obs", dir);
    snprintf(fx_host, sizeof fx_host, "%s/fixture_host.obs", dir);
    if (fixture_write(fx, 0) != 0 || fixture_write(fx_host, FIX_NO_GPU) != 0)
        bail("cannot write the fixture");
    plan_lazy();

#ifndef HAVE_SQLITE
    {
        char out[4300];
        snprintf(out, sizeof out, "%s/out.sqlite", dir);
        r = run_report("sqlite", fx, out, NULL);
        ok(run_exited_with(&r, 1), "built without SQLite: exit 1");
        is_string(NO_SQLITE_LINE, r.err, "built without SQLite: one line that says so");
        ok(!file_exists(out), "built without SQLite: no OUT");
        run_result_free(&r);
        r = run_report("sqlite", "--help", NULL, NULL);
        ok(run_exited_with(&r, 0) && strstr(r.out, "Usage: obs-report sqlite"), "built without SQLite: --help works");
        run_result_free(&r);
        skip("the export itself: obs-report built without SQLite (install libsqlite3-dev and re-run configure)");
        return 0;
    }
#else
    r = run_report("sqlite", fx, test_path(dir, "probe.sqlite"), NULL);
    if (strcmp(r.err, NO_SQLITE_LINE) == 0)
        bail("configure found SQLite but obs-report says it was built without it");
    run_result_free(&r);
#endif

    test_usage(fx);
    test_errors(dir, fx);
    if (test_on_path("sqlite3", sqlite3_bin, sizeof sqlite3_bin) == NULL) {
        skip("queries: no sqlite3 CLI on PATH (Debian: apt-get install sqlite3)");
        return 0;
    }

    cross_check("fixture", fx, -1);
    test_fixture_facts(fx, fx_host);

    snprintf(app, sizeof app, "%s/tests/apps/llm_loop", test_builddir());
    if (test_executable(app)) {
        const char *argv[] = {app, "--steps", "4", "--prompts", "2", NULL};
        if (record("llm_loop", argv, trace, sizeof trace))
            cross_check("llm_loop", trace, 0);
    } else {
        skip("llm_loop: tests/apps/llm_loop not built");
    }

    bin = workload_path(&workload_bins[0], &why);
    if (bin != NULL) {
        const char *argv[] = {bin, NULL}, *argv_graphs[] = {bin, "--graphs", NULL};
        if (record("obs_cuda", argv, trace, sizeof trace))
            cross_check("obs_cuda", trace, 0);
        if (record("obs_cuda_graphs", argv_graphs, trace, sizeof trace))
            cross_check("obs_cuda --graphs", trace, 0);
    } else {
        skip("obs_cuda: %s", why);
    }
    bin = workload_path(&workload_bins[2], &why);
    if (bin != NULL) {
        const char *argv[] = {bin, NULL};
        if (record("obs_hip", argv, trace, sizeof trace))
            cross_check("obs_hip", trace, 1000);
    } else {
        skip("obs_hip: %s", why);
    }
    return 0;
}
