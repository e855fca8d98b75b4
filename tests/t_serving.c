/* The serving view (docs/serving.md, shim/trace/trace_serving.h) of a
 * serving loop's trace: tests/apps/llm_replay on tests/scenarios/serving.scn
 * (18 iterations in two sessions, an idle gap between, OBS_GEN_GAP_MS=150)
 * under the shim on the simulated runtime, on the host clock and with
 * OBS_GPU_TIME=events and steps. By structure, never against a clock read
 * elsewhere:
 *   - the premise: the phase engine made one ITERATION range per forward,
 *     (generation, k) in call order as the scenario's iterations;
 *   - each row of the view: its host span is the first begin to the last
 *     end of the calls the test finds in that ITERATION range (an
 *     ancestor's) in the same trace, its gap the span from the session's
 *     previous iteration's end to its begin (none at a session's first),
 *     its calls, launches and kernels those calls' counts; its GPU span
 *     the envelope of those calls' device spans (events) or of the range
 *     spans counted for their ranges (steps), its GPU idle the device span
 *     from the previous one's GPU end; tokens, sequences and kind those of
 *     the scenario's line (ids copied first, tokens x 4 bytes; reads= x 4
 *     bytes read back; the kinds the rule gives); its input bytes the
 *     scenario's copies in (16 a token + 340);
 *   - the summaries: p50 / p90 / p99 of the iteration time by kind and of
 *     the gaps, the gap share and tokens/s, computed here from the rows'
 *     spans found above (linear interpolation between the closest ranks);
 *     GPU idle n/a on the host clock;
 *   - `obs-report serving --csv`: one row per iteration under the header,
 *     its host_ms the span found above; `--json`'s iterations rows too;
 *     the text's summary line; `phases` and `phases --csv` say "serving"
 *     and no per-request TTFT for both generations; the exit summary has
 *     its serving line and stays within its lines;
 *   - --id-bytes 8 halves the tokens, a bad --id-bytes is a usage error;
 *     --serving on a loop with no serving loop (tiny_loop) gives one row
 *     per prompt and decode step, none without it.
 * Exports: the SQLite export's OBS_ITERATIONS has one row per iteration
 * with the same spans; the Perfetto trace an iterations track with one
 * slice per iteration (tests/perfetto_check.py, and one on the GPU track
 * per GPU-timed iteration); the HTML page the iterations chart (a bar per
 * iteration, well formed, each bar's data-host_ms its span) and the gap
 * distribution. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gz_text.h"
#include "html_check.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace.h"

#define NITER 18

/* The scenario's iterations, in order (tests/scenarios/serving.scn). */
static const struct want_iter {
    unsigned gen, k, tokens, seqs;
    const char *kind;
} want[NITER] = {
    {0, 0, 64, 4, "prompt"}, {0, 1, 39, 4, "mixed"},  {0, 2, 8, 4, "mixed"},   {0, 3, 4, 4, "decode"},
    {0, 4, 4, 4, "decode"},  {0, 5, 4, 4, "decode"},  {0, 6, 42, 3, "mixed"},  {0, 7, 3, 3, "decode"},
    {0, 8, 1, 1, "decode"},  {0, 9, 1, 1, "decode"},  {0, 10, 1, 1, "decode"}, {0, 11, 1, 1, "decode"},
    {0, 12, 1, 1, "decode"}, {1, 0, 48, 0, "prompt"}, {1, 1, 16, 2, "prompt"}, {1, 2, 2, 2, "decode"},
    {1, 3, 2, 2, "decode"},  {1, 4, 2, 2, "decode"},
};

static char replay[4096], report[4096], sqlite3_bin[4096];
static const char *python, *protoc;

enum clock_mode { HOST, EVENTS, STEPS };
static const char *const mode_name[] = {"off", "events", "steps"};

/* An iteration as the test finds it in the trace. */
struct found {
    uint32_t thread, gen, k;
    uint64_t first_seq, begin, end, calls, launches, kernels;
    int gpu;
    uint64_t gpu_b, gpu_e;
};

/* The ITERATION range range r is in (itself or an enclosing one), or OBS_NONE. */
static uint32_t iteration_of(const struct obs_trace *t, uint32_t r)
{
    while (r != OBS_NONE && strcmp(t->phases[r].phase, "ITERATION") != 0)
        r = t->phases[r].parent;
    return r;
}

static int same_key(const struct found *f, uint32_t thread, uint32_t gen, uint32_t k)
{
    return f->thread == thread && f->gen == gen && f->k == k;
}

/* The iterations of t, in order of first call; *n their count (at most cap). */
static void find_iterations(const struct obs_trace *t, enum clock_mode mode, struct found *f, size_t cap, size_t *n)
{
    size_t i, j;
    *n = 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t r = c->phase != OBS_NONE ? iteration_of(t, c->phase) : OBS_NONE;
        struct found *x = NULL;
        if (r == OBS_NONE)
            continue;
        for (j = 0; j < *n && x == NULL; j++)
            if (same_key(&f[j], c->thread, t->phases[r].generation, obs_phase_step(t, r)))
                x = &f[j];
        if (x == NULL) {
            if (*n == cap)
                continue;
            x = &f[(*n)++];
            memset(x, 0, sizeof *x);
            x->thread = c->thread;
            x->gen = t->phases[r].generation;
            x->k = obs_phase_step(t, r);
            x->first_seq = i;
            x->begin = c->host_begin;
        }
        if (c->host_begin < x->begin)
            x->begin = c->host_begin;
        if (c->host_end > x->end)
            x->end = c->host_end;
        x->calls++;
        x->launches += c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH || c->kind == OBS_KIND_MEMCPY ||
                       c->kind == OBS_KIND_MEMSET;
        x->kernels += c->kind == OBS_KIND_KERNEL;
        if (mode == EVENTS && obs_call_gpu(t, c) != NULL) {
            const struct obs_gpu_time *g = obs_call_gpu(t, c);
            if (!x->gpu || g->begin < x->gpu_b)
                x->gpu_b = g->begin;
            if (!x->gpu || g->end > x->gpu_e)
                x->gpu_e = g->end;
            x->gpu = 1;
        }
    }
    for (i = 0; mode == STEPS && i < t->nrange_spans; i++) { /* the spans counted for the ranges */
        const struct obs_range_span *s = &t->range_spans[i];
        uint32_t r = s->range != OBS_NONE && s->range < t->nphases ? iteration_of(t, s->range) : OBS_NONE;
        for (j = 0; r != OBS_NONE && j < *n; j++)
            if (same_key(&f[j], s->thread, t->phases[r].generation, obs_phase_step(t, r))) {
                if (!f[j].gpu || s->begin < f[j].gpu_b)
                    f[j].gpu_b = s->begin;
                if (!f[j].gpu || s->end > f[j].gpu_e)
                    f[j].gpu_e = s->end;
                f[j].gpu = 1;
            }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The linear-interpolation percentile of v[0..n), sorted here. */
static double pctl(uint64_t *v, size_t n, double p)
{
    double pos = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)pos;
    qsort(v, n, sizeof *v, cmp_u64);
    if (lo + 1 >= n)
        return (double)v[n - 1];
    return (double)v[lo] + (pos - (double)lo) * ((double)v[lo + 1] - (double)v[lo]);
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * (fabs(a) > 1 ? fabs(a) : 1);
}

static unsigned kind_of(const char *name)
{
    unsigned k;
    for (k = 0; k < OBS_ITER_KINDS; k++)
        if (strcmp(obs_iteration_kind_name(k), name) == 0)
            return k;
    return OBS_ITER_UNKNOWN;
}

static struct run_result run_report(const char *const *args)
{
    const char *argv[12];
    struct run_result r;
    size_t i = 0;
    argv[i++] = report;
    while (*args && i < 11)
        argv[i++] = *args++;
    argv[i] = NULL;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    return r;
}

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    const char *p = text;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

static size_t lines_of(const char *text)
{
    return count_of(text, "\n");
}

/* ---- against the real serving loop ------------------------------------------------------ */

#define REAL_CASE "hf-serving"
#define REAL_MAX 64

/* The real loop's iterations as the view measures them, from its call
 * stream (tests/engine_cases/hf-serving.calls.gz: transformers'
 * generate_batch under the shim, its truth's @iter at each forward): the
 * first host-to-device copy after its thread's last launch or sampled-ids
 * read and before the iteration's first launch (the batch's ids), and its
 * last copy from the device of at least 4 bytes after one of its launches
 * (the sampled ids). Returns the count (at most REAL_MAX), -1 without zlib. */
struct real_iter {
    unsigned long long ids, read;
};

static long real_iterations(const char *path, struct real_iter *it)
{
    char *text, *tok, *save = NULL, *calls;
    long n = 0, cur[4] = {-1, -1, -1, -1};
    unsigned long long pending[4] = {0};
    int th = 0, waiting[4] = {0}, launched[4] = {0};
    if (!gz_text_available())
        return -1;
    if ((text = gz_text_read(path)) == NULL || (calls = strstr(text, "\ncalls\n")) == NULL)
        bail("cannot read the calls of %s", path);
    for (tok = strtok_r(calls + 7, " \n", &save); tok != NULL; tok = strtok_r(NULL, " \n", &save)) {
        unsigned long long bytes = strchr(tok, ':') ? strtoull(strchr(tok, ':') + 1, NULL, 10) : 0;
        if (tok[0] == 'T' && tok[1] >= '0' && tok[1] <= '3' && tok[2] == '\0') {
            th = tok[1] - '0';
        } else if (strcmp(tok, "@iter") == 0) {
            if (n == REAL_MAX)
                bail("%s: more than %d iterations", path, REAL_MAX);
            it[n].ids = it[n].read = 0;
            cur[th] = n++;
            waiting[th] = 1;
            launched[th] = 0;
        } else if (strcmp(tok, "@gen") == 0 || strcmp(tok, "@step") == 0 || strcmp(tok, "@none") == 0) {
            cur[th] = -1;
        } else if ((tok[0] == 'k' && tok[1] >= '0' && tok[1] <= '9') || strncmp(tok, "graph", 5) == 0) {
            if (waiting[th] && cur[th] >= 0)
                it[cur[th]].ids = pending[th];
            waiting[th] = 0;
            launched[th] = 1;
            pending[th] = 0;
        } else if (strncasecmp(tok, "h2d:", 4) == 0) {
            if (pending[th] == 0)
                pending[th] = bytes;
        } else if (strncasecmp(tok, "d2h:", 4) == 0 && bytes >= 4 && launched[th]) {
            if (cur[th] >= 0)
                it[cur[th]].read = bytes;
            pending[th] = 0;
        }
    }
    free(text);
    return n;
}

/* The scenario's first session (hf-serving's batches) against the real
 * loop's call stream, where their shapes meet (the scenario's forward is a
 * smaller model's, its other inputs fewer copies): as many iterations, each
 * with the real one's ids copy (its tokens) and sampled-ids read (its
 * sequences), byte for byte, as the view reads them from either stream. */
static void check_real(const struct obs_serving_stats *s)
{
    char path[4300], line[2048];
    struct real_iter real[REAL_MAX];
    long n;
    size_t i, rows = 0, same = 0, len = 0;
    snprintf(path, sizeof path, "%s/tests/engine_cases/" REAL_CASE ".calls.gz", test_srcdir());
    if ((n = real_iterations(path, real)) < 0) {
        skip("serving.scn against " REAL_CASE ": no zlib to read %s (configure found none)", path);
        return;
    }
    line[0] = '\0';
    for (i = 0; i < s->nrows; i++) {
        const struct obs_iteration_row *r = &s->rows[i];
        int eq;
        if (r->generation != 0)
            continue;
        eq = (long)rows < n && r->first_input_bytes == real[rows].ids && r->read_bytes == real[rows].read;
        same += eq;
        if (!eq)
            diag("serving.scn against " REAL_CASE ": iteration %zu: the scenario's ids %llu B, read %llu B; the real "
                 "loop's %llu B, %llu B", rows, (unsigned long long)r->first_input_bytes,
                 (unsigned long long)r->read_bytes, (long)rows < n ? real[rows].ids : 0ULL,
                 (long)rows < n ? real[rows].read : 0ULL);
        if (len < sizeof line - 32)
            len += (size_t)snprintf(line + len, sizeof line - len, "%sh2d:%llu d2h:%llu", rows ? " | " : "",
                                    (unsigned long long)r->first_input_bytes, (unsigned long long)r->read_bytes);
        rows++;
    }
    diag("FIGURES serving.scn against " REAL_CASE ": session 0's ids copy and sampled-ids read: %s", line);
    diag("FIGURES serving.scn against " REAL_CASE ": %zu of %ld iterations with the real loop's ids copy and "
         "sampled-ids read (%zu in the scenario's first session)", same, n, rows);
    ok(n > 0 && (long)rows == n && (long)same == n,
       "serving.scn's first session against " REAL_CASE " (the real generate_batch): as many iterations (%zu, %ld), "
       "each with its ids copy and sampled-ids read, byte for byte (%zu)", rows, n, same);
}

/* ---- the rows ---------------------------------------------------------------------------- */

static void check_rows(const char *label, enum clock_mode mode, const struct obs_serving_stats *s,
                       const struct found *f, size_t nf)
{
    size_t i, spans = 0, counts = 0, gaps = 0, sizes = 0, gpu = 0, idle = 0, input = 0;
    int order = nf == NITER;
    for (i = 0; i < nf && order; i++)
        order = f[i].gen == want[i].gen && f[i].k == want[i].k && f[i].thread == f[0].thread;
    ok(order, "%s: one ITERATION range per iteration, (generation, k) in call order as the scenario's %d (%zu found)",
       label, NITER, nf);
    if (!ok(s->nrows == nf && s->sessions == 2 && s->threads == 1 && s->ranges == nf,
            "%s: the view has the %zu iterations in 2 sessions on 1 thread", label, nf))
        diag("%s: %zu rows, %zu sessions, %zu threads", label, s->nrows, s->sessions, s->threads);
    if (s->nrows != nf || !order)
        return;
    for (i = 0; i < nf; i++) {
        const struct obs_iteration_row *r = &s->rows[i];
        int first = i == 0 || f[i - 1].gen != f[i].gen;
        spans += r->generation == f[i].gen && r->iteration == f[i].k && r->host_begin == f[i].begin &&
                 r->host_end == f[i].end && r->first_seq == f[i].first_seq;
        counts += r->calls == f[i].calls && r->launches == f[i].launches && r->kernels == f[i].kernels;
        gaps += first ? !r->has_gap : r->has_gap && r->gap_ns == f[i].begin - f[i - 1].end;
        sizes += r->has_tokens && r->tokens == want[i].tokens && r->has_sequences && r->sequences == want[i].seqs &&
                 strcmp(obs_iteration_kind_name(r->kind), want[i].kind) == 0 && strcmp(r->kind_from, "stream") == 0 &&
                 strcmp(r->tokens_from, "copy+grid") == 0 && r->read_bytes == 4u * want[i].seqs;
        input += r->input_bytes == 16u * want[i].tokens + 340u && r->first_input_bytes == 4u * want[i].tokens;
        if (mode == HOST)
            gpu += !r->gpu_timed && !r->has_gpu_idle;
        else
            gpu += r->gpu_timed == f[i].gpu && (!f[i].gpu || (r->gpu_begin == f[i].gpu_b && r->gpu_end == f[i].gpu_e));
        if (mode == HOST || first || !f[i].gpu || !f[i - 1].gpu)
            idle += !r->has_gpu_idle;
        else
            idle += r->has_gpu_idle && r->gpu_idle_ns == (f[i].gpu_b > f[i - 1].gpu_e ? f[i].gpu_b - f[i - 1].gpu_e : 0);
        if (strcmp(obs_iteration_kind_name(r->kind), want[i].kind) != 0 || !r->has_tokens ||
            r->tokens != want[i].tokens)
            diag("%s: iteration %zu: %s, %llu tokens, %llu sequences; the scenario's %s, %u, %u", label, i,
                 obs_iteration_kind_name(r->kind), (unsigned long long)r->tokens, (unsigned long long)r->sequences,
                 want[i].kind, want[i].tokens, want[i].seqs);
    }
    ok(spans == nf, "%s: each row's host span = the first begin to the last end of its range's calls (%zu of %zu)",
       label, spans, nf);
    ok(counts == nf, "%s: each row's calls, launches and kernels = those of its range's calls (%zu of %zu)", label,
       counts, nf);
    ok(gaps == nf, "%s: each gap = the previous iteration's last end to this one's first begin, none at a session's "
                   "first (%zu of %zu)",
       label, gaps, nf);
    ok(sizes == nf, "%s: tokens (first input copy / 4, the embedding's grid agrees), sequences (read / 4) and kind "
                    "are the scenario's (%zu of %zu)",
       label, sizes, nf);
    ok(input == nf, "%s: the input copies before each forward: the scenario's 16 bytes a token + 340 (%zu of %zu)",
       label, input, nf);
    if (mode == HOST)
        ok(gpu == nf && s->gpu[OBS_ITER_KINDS].n == 0 && !s->has_gpu_idle,
           "%s: no GPU span nor GPU idle on the host clock (%zu of %zu)", label, gpu, nf);
    else
        ok(gpu == nf && f[NITER - 1].gpu,
           "%s: each GPU span = the envelope of its calls' %s (%zu of %zu)", label,
           mode == EVENTS ? "device spans" : "range spans", gpu, nf);
    ok(idle == nf, "%s: each GPU idle = the previous iteration's GPU end to this one's GPU begin (%zu of %zu)", label,
       idle, nf);
}

/* ---- the summaries ------------------------------------------------------------------------- */

static void check_summaries(const char *label, enum clock_mode mode, const struct obs_serving_stats *s,
                            const struct found *f, size_t nf)
{
    uint64_t v[NITER], g[NITER], tokens = 0, seqs = 0, wall = 0, gap_total = 0, sb = 0, se = 0;
    size_t i, k, n, ng = 0, right = 0, checked = 0;
    if (nf != NITER || s->nrows != NITER) {
        ok(0, "%s: summaries (no rows to check them on)", label);
        ok(0, "%s: gaps", label);
        ok(0, "%s: tokens/s", label);
        return;
    }
    for (k = 0; k <= OBS_ITER_KINDS; k++) {
        for (i = n = 0; i < nf; i++)
            if (k == OBS_ITER_KINDS || kind_of(want[i].kind) == k)
                v[n++] = f[i].end - f[i].begin;
        if (n == 0) {
            right += s->host[k].n == 0;
            checked++;
            continue;
        }
        checked++;
        right += s->host[k].n == n && near(s->host[k].p50_ns, pctl(v, n, 50)) &&
                 near(s->host[k].p90_ns, pctl(v, n, 90)) && near(s->host[k].p99_ns, pctl(v, n, 99));
    }
    ok(right == checked, "%s: iteration time p50 / p90 / p99 by kind and in all = those of the rows' spans (%zu of %zu)",
       label, right, checked);
    for (i = 0; i < nf; i++) {
        if (i == 0 || f[i].gen != f[i - 1].gen) {
            wall += se - sb;
            sb = f[i].begin;
        } else {
            g[ng++] = f[i].begin - f[i - 1].end;
            gap_total += f[i].begin - f[i - 1].end;
        }
        se = f[i].end > se ? f[i].end : se;
        tokens += want[i].tokens;
        seqs += want[i].seqs;
    }
    wall += se - sb;
    ok(s->gaps.n == ng && ng == NITER - 2 && near(s->gaps.p50_ns, pctl(g, ng, 50)) &&
           near(s->gaps.p90_ns, pctl(g, ng, 90)) && near(s->gaps.p99_ns, pctl(g, ng, 99)) &&
           s->gaps.total_ns == gap_total && s->wall_ns == wall && near(s->gap_share, (double)gap_total / (double)wall),
       "%s: host gaps p50 / p90 / p99, total (%.3f ms) and share of the wall time (%.3f%% of %.3f ms) = those of the rows",
       label, (double)gap_total / 1e6, 100.0 * (double)gap_total / (double)wall, (double)wall / 1e6);
    ok(s->has_tokens_per_s && s->tokens == tokens && near(s->tokens_per_s, (double)tokens * 1e9 / (double)wall) &&
           s->has_generated_per_s && s->sequences == seqs &&
           near(s->generated_per_s, (double)seqs * 1e9 / (double)wall),
       "%s: tokens/s = the %llu tokens over the wall time, generated/s = the %llu sequences over it", label,
       (unsigned long long)tokens, (unsigned long long)seqs);
    if (mode != HOST) {
        uint64_t idle[NITER], total = 0, gwall = 0, gb = 0, ge = 0;
        size_t ni = 0;
        for (i = 0; i < nf; i++) {
            if (i == 0 || f[i].gen != f[i - 1].gen) {
                gwall += ge - gb;
                gb = f[i].gpu_b;
                ge = f[i].gpu_e;
            } else if (f[i].gpu && f[i - 1].gpu) {
                idle[ni] = f[i].gpu_b > f[i - 1].gpu_e ? f[i].gpu_b - f[i - 1].gpu_e : 0;
                total += idle[ni++];
            }
            gb = f[i].gpu_b < gb ? f[i].gpu_b : gb;
            ge = f[i].gpu_e > ge ? f[i].gpu_e : ge;
        }
        gwall += ge - gb;
        ok(ni > 0 && s->has_gpu_idle && s->gpu_idle.n == ni && s->gpu_idle.total_ns == total &&
               near(s->gpu_idle.p90_ns, pctl(idle, ni, 90)) && s->gpu_wall_ns == gwall,
           "%s: GPU idle between iterations: %zu pairs, %.3f ms of %.3f ms of GPU wall time, as the rows' GPU spans "
           "give",
           label, ni, (double)total / 1e6, (double)gwall / 1e6);
    }
}

/* ---- obs-report -------------------------------------------------------------------------------- */

/* The CSV's rows: as many as iterations, host_ms each row's span. */
static void check_csv(const char *label, const char *obs, const struct found *f, size_t nf)
{
    const char *args[] = {"serving", "--csv", obs, NULL};
    struct run_result r = run_report(args);
    char *line, *save = NULL, want_ms[64];
    size_t rows = 0, spans = 0;
    int header = 0;
    for (line = strtok_r(r.out, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *field[32], *p = line;
        int nfield = 0;
        if (!header) {
            header = strcmp(line, OBS_SERVING_CSV_HEADER) == 0 ? 1 : -1;
            continue;
        }
        while (nfield < 32) {
            field[nfield++] = p;
            if ((p = strchr(p, ',')) == NULL)
                break;
            *p++ = '\0';
        }
        if (rows < nf && nfield > 8) {
            snprintf(want_ms, sizeof want_ms, "%.6f", (double)(f[rows].end - f[rows].begin) / 1e6);
            spans += strcmp(field[8], want_ms) == 0;
        }
        rows++;
    }
    ok(run_exited_with(&r, 0) && header == 1 && rows == nf && spans == nf,
       "%s: serving --csv: the header, then one row per iteration (%zu), host_ms each span (%zu)", label, rows, spans);
    run_result_free(&r);
}

/* serving --json: an iterations row per iteration with its span, the
 * summary's gaps and the by-kind rows as the library's. */
static void check_json(const char *label, const char *obs, const struct obs_serving_stats *s, const struct found *f,
                       size_t nf)
{
    const char *json[] = {"serving", "--json", obs, NULL};
    struct run_result r = run_report(json);
    struct json_doc d;
    const struct json_report *it = NULL, *sum = NULL, *kinds = NULL;
    size_t i, spans = 0;
    int found = 0;
    char expect[64];
    if (run_exited_with(&r, 0) && json_doc_parse(r.out, &d) == 0) {
        it = json_report(&d, "iterations");
        sum = json_report(&d, "serving_summary");
        kinds = json_report(&d, "serving_by_kind");
        for (i = 0; it && i < it->nrows && i < nf; i++) {
            const char *v = json_value(&it->rows[i], "host_ms", &found);
            snprintf(expect, sizeof expect, "%.6f", (double)(f[i].end - f[i].begin) / 1e6);
            spans += found && v && strcmp(v, expect) == 0;
        }
        snprintf(expect, sizeof expect, "%zu", s->gaps.n);
        ok(it && it->nrows == nf && spans == nf && sum && sum->nrows == 1 &&
               strcmp(json_value(&sum->rows[0], "gaps", &found) ? json_value(&sum->rows[0], "gaps", &found) : "", expect) == 0 &&
               kinds && kinds->nrows >= 2,
           "%s: serving --json: an iterations row per iteration, host_ms its span (%zu of %zu); the summary's %s gaps; "
           "by kind",
           label, spans, nf, expect);
        json_doc_free(&d);
    } else {
        ok(0, "%s: serving --json: a report document", label);
    }
    run_result_free(&r);
}

static void check_cli(const char *label, const char *obs, size_t nf)
{
    const char *text[] = {"serving", obs, NULL};
    const char *ph[] = {"phases", obs, NULL}, *phcsv[] = {"phases", "--csv", obs, NULL};
    struct run_result r;
    r = run_report(text);
    ok(run_exited_with(&r, 0) && strstr(r.out, "Serving loop (ITERATION ranges: 18 iterations on 1 thread, 2 sessions") &&
           strstr(r.out, "no per-request TTFT") && count_of(r.out, "\n   0 ") + count_of(r.out, "\n   1 ") == nf,
       "%s: serving: the summary, no per-request TTFT, a line per iteration", label);
    run_result_free(&r);
    r = run_report(ph);
    ok(run_exited_with(&r, 0) && strstr(r.out, "\nServing loop (") && strstr(r.out, "no per-request TTFT") &&
           strstr(r.out, "first token 'serving': 2 generations"),
       "%s: phases: the serving section and no per-request TTFT for the 2 serving generations", label);
    run_result_free(&r);
    r = run_report(phcsv);
    ok(run_exited_with(&r, 0) && count_of(r.out, ",,0,") == 2 && count_of(r.out, ",serving,") == 2 &&
           count_of(r.out, ",none (serving)\n") == 2,
       "%s: phases --csv: both generations first_token serving, no TTFT nor rates, ttft_to none (serving)", label);
    run_result_free(&r);
}

/* ---- exports ------------------------------------------------------------------------------------ */

static void check_sqlite(const char *label, const char *obs, const struct found *f, size_t nf, const char *prefix)
{
    char db[4300], rows[128];
    const char *args[] = {"sqlite", "-q", obs, db, NULL};
    struct run_result r;
    uint64_t total = 0;
    size_t i;
    snprintf(db, sizeof db, "%s.sqlite", prefix);
    unlink(db);
#ifndef HAVE_SQLITE
    skip("%s: OBS_ITERATIONS: obs-report built without SQLite", label);
    (void)args;
    (void)r;
    (void)rows;
    (void)total;
    (void)i;
    (void)f;
    (void)nf;
    (void)obs;
    return;
#else
    if (sqlite3_bin[0] == '\0') {
        skip("%s: OBS_ITERATIONS: no sqlite3 command to query it", label);
        return;
    }
    r = run_report(args);
    run_result_free(&r);
    for (i = 0; i < nf; i++)
        total += f[i].end - f[i].begin;
    snprintf(rows, sizeof rows, "%zu|%llu|%zu\n", nf, (unsigned long long)total, nf - 2);
    {
        const char *q[] = {sqlite3_bin, "-init", "/dev/null", "-batch", "-bail", "-noheader", db,
                           "SELECT COUNT(*), SUM(end - start), COUNT(gapNs) FROM OBS_ITERATIONS", NULL};
        if (run_program(q, NULL, 60, &r) != 0)
            bail("cannot run %s", sqlite3_bin);
    }
    if (!ok(run_exited_with(&r, 0) && strcmp(r.out, rows) == 0,
            "%s: sqlite: OBS_ITERATIONS has a row per iteration (%zu), the spans' sum and the gaps (%zu)", label, nf,
            nf - 2))
        diag("%s: sqlite3: %s %s", label, r.out, r.err);
    run_result_free(&r);
#endif
}

static long long value_of(const char *out, const char *key)
{
    char k[64];
    const char *p;
    snprintf(k, sizeof k, "%s=", key);
    for (p = out; (p = strstr(p, k)) != NULL; p += strlen(k))
        if (p == out || p[-1] == '\n')
            return atoll(p + strlen(k));
    return -1;
}

static void check_perfetto(const char *label, const char *obs, enum clock_mode mode, size_t nf, const char *prefix)
{
    char pf[4300], csvp[4300], checker[4300], protodir[4300];
    const char *a1[] = {"perfetto", "-q", obs, "-o", pf, NULL}, *a2[] = {"csv", "-q", obs, "-o", csvp, NULL};
    const char *argv[] = {python, checker, protoc, protodir, pf, csvp, NULL};
    struct run_result r;
    if (python == NULL || *python == '\0' || protoc == NULL || *protoc == '\0') {
        skip("%s: perfetto: python3 or protoc not found by configure", label);
        return;
    }
    snprintf(pf, sizeof pf, "%s.pftrace", prefix);
    snprintf(csvp, sizeof csvp, "%s.csv", prefix);
    snprintf(checker, sizeof checker, "%s/tests/perfetto_check.py", test_srcdir());
    snprintf(protodir, sizeof protodir, "%s/tests/perfetto", test_srcdir());
    r = run_report(a1);
    run_result_free(&r);
    r = run_report(a2);
    run_result_free(&r);
    if (run_program(argv, NULL, 300, &r) != 0)
        bail("cannot run %s", python);
    if (!ok(value_of(r.out, "iteration_slices") == (long long)nf &&
                value_of(r.out, "gpu_iteration_slices") == (mode == HOST ? 0 : (long long)nf) &&
                strstr(r.err, "error: iterations") == NULL,
            "%s: perfetto: an iterations track, one slice per iteration named after its kind over its calls (%lld), "
            "%s on the GPU track (%lld)",
            label, value_of(r.out, "iteration_slices"), mode == HOST ? "none" : "one per iteration",
            value_of(r.out, "gpu_iteration_slices")))
        diag_text("perfetto_check", r.err);
    /* the phase track too: each ITERATION/k slice holds the calls its range labels, the next batch's input
     * copies after the delimiter its END carries the time of included, and none sits in a DECODE/STEP_k slice
     * (trace_phase_slices.c); and every other check of the checker */
    if (!ok(run_exited_with(&r, 0) && value_of(r.out, "phase_slices") > 0,
            "%s: perfetto: the whole checker passes: every call labelled ITERATION lies in a phase slice of its phase "
            "(%lld phase slices)",
            label, value_of(r.out, "phase_slices")))
        diag_text("perfetto_check", r.err);
    run_result_free(&r);
}

static void check_html(const char *label, const char *obs, const struct found *f, size_t nf, const char *prefix)
{
    char page[4300], expect[64];
    const char *args[] = {"html", obs, "-o", page, NULL};
    struct run_result r;
    struct html_doc doc;
    char *text;
    size_t len = 0, i, bars = 0, spans = 0;
    snprintf(page, sizeof page, "%s.html", prefix);
    r = run_report(args);
    text = test_read_file(page, &len);
    memset(&doc, 0, sizeof doc);
    if (text != NULL)
        html_parse(text, &doc);
    for (i = 0; i < doc.n; i++) {
        const char *cls = html_attr(&doc.e[i], "class"), *ms = html_attr(&doc.e[i], "data-host_ms");
        if (strcmp(doc.e[i].tag, "rect") != 0 || cls == NULL || strcmp(cls, "iter") != 0)
            continue;
        if (bars < nf && ms != NULL) {
            snprintf(expect, sizeof expect, "%.6f", (double)(f[bars].end - f[bars].begin) / 1e6);
            spans += strcmp(ms, expect) == 0;
        }
        bars++;
    }
    ok(run_exited_with(&r, 0) && text != NULL && doc.problem[0] == '\0' && strstr(text, "<section id=\"serving\">") &&
           strstr(text, "class=\"chart-iterations\"") && bars == nf && spans == nf &&
           strstr(text, "class=\"chart-gaps-serving\""),
       "%s: html: well formed; the iterations chart has a bar per iteration carrying its row (host_ms its span: %zu "
       "of %zu); the gap distribution",
       label, spans, nf);
    if (doc.problem[0])
        diag("%s: html: %s", label, doc.problem);
    html_doc_free(&doc);
    free(text);
    run_result_free(&r);
}

/* ---- one clock ----------------------------------------------------------------------------------- */

static void check_mode(enum clock_mode mode)
{
    char scn[4200], tag[64], label[64];
    const char *argv[] = {replay, scn, NULL};
    const char *env[] = {"OBS_GEN_GAP_MS=150", "OBS_CLOCK=monotonic", "OBS_SIM_LOG_OPS=0", NULL};
    struct sim_traced_run run;
    struct obs_serving_stats s;
    struct found f[NITER + 4];
    size_t nf = 0;
    snprintf(scn, sizeof scn, "%s/tests/scenarios/serving.scn", test_srcdir());
    snprintf(tag, sizeof tag, "serving-%s", mode_name[mode]);
    snprintf(label, sizeof label, "OBS_GPU_TIME=%s", mode_name[mode]);
    sim_traced_run_exec(tag, argv, mode_name[mode], env, &run);
    if (!ok(run_exited_with(&run.res, 0) && run.t != NULL, "%s: the serving scenario runs under the shim", label)) {
        diag_text("stderr", run.res.err);
        sim_traced_run_free(&run);
        return;
    }
    ok(strstr(run.res.err, "\nServing loop: 18 iterations (") && strstr(run.res.err, "no per-request TTFT") &&
           lines_of(run.res.err) <= OBS_SUMMARY_BRIEF_MAX_LINES + 1,
       "%s: the exit summary's serving lines, within its %d lines (%zu)", label, OBS_SUMMARY_BRIEF_MAX_LINES,
       lines_of(run.res.err));
    find_iterations(run.t, mode, f, NITER + 4, &nf);
    if (obs_serving_compute(run.t, NULL, &s) != 0)
        bail("out of memory");
    check_rows(label, mode, &s, f, nf);
    if (mode == HOST)
        check_real(&s);
    check_summaries(label, mode, &s, f, nf);
    check_csv(label, run.obs, f, nf);
    check_json(label, run.obs, &s, f, nf);
    obs_serving_free(&s);
    check_cli(label, run.obs, nf);
    check_sqlite(label, run.obs, f, nf, run.prefix);
    check_perfetto(label, run.obs, mode, nf, run.prefix);
    check_html(label, run.obs, f, nf, run.prefix);
    if (mode == HOST) {
        const char *a8[] = {"serving", "--id-bytes", "8", "--csv", run.obs, NULL};
        const char *bad[] = {"serving", "--id-bytes", "3", run.obs, NULL};
        struct run_result r = run_report(a8);
        ok(run_exited_with(&r, 0) && strstr(r.out, "\n") && strstr(strchr(r.out, '\n') + 1, ",32,copy,16,2,") != NULL,
           "--id-bytes 8: the first iteration's 256-byte ids are 32 tokens, its 16-byte read 2 sequences");
        run_result_free(&r);
        r = run_report(bad);
        ok(run_exited_with(&r, 2) && strstr(r.err, "bad --id-bytes '3'"), "--id-bytes 3: a usage error (exit 2)");
        run_result_free(&r);
    }
    sim_traced_run_free(&run);
}

/* --serving on a loop the engine found no serving loop in: a row per
 * prompt and decode step (tiny_loop: 2 prompts of 64 steps). */
static void check_forced(void)
{
    char scn[4200];
    const char *argv[] = {replay, scn, NULL};
    const char *env[] = {"OBS_CLOCK=monotonic", "OBS_SIM_LOG_OPS=0", NULL};
    struct sim_traced_run run;
    struct obs_serving_stats s, forced;
    struct obs_serving_options o = {1, 4};
    size_t i, prompts = 0, steps = 0, right = 0;
    snprintf(scn, sizeof scn, "%s/tests/scenarios/tiny_loop.scn", test_srcdir());
    sim_traced_run_exec("serving-forced", argv, "off", env, &run);
    if (run.t == NULL || obs_serving_compute(run.t, NULL, &s) != 0 || obs_serving_compute(run.t, &o, &forced) != 0)
        bail("tiny_loop: no trace, or out of memory");
    ok(s.nrows == 0 && !obs_trace_has_iterations(run.t) && strstr(run.res.err, "Serving loop") == NULL,
       "tiny_loop: no serving loop, no serving line in the exit summary");
    for (i = 0; i < forced.nrows; i++) {
        const struct obs_iteration_row *r = &forced.rows[i];
        if (r->source == OBS_ITER_FROM_PREFILL) {
            prompts++;
            right += r->kind == OBS_ITER_PROMPT && r->iteration == 0 && r->has_tokens && r->tokens == (r->generation ? 768u : 512u);
        } else if (r->source == OBS_ITER_FROM_STEP) {
            steps++;
            right += r->kind == OBS_ITER_DECODE && strcmp(r->kind_from, "phase") == 0 && r->iteration == r->step + 1;
        }
    }
    ok(forced.nrows == 130 && prompts == 2 && steps == 128 && right == 130 && forced.sessions == 2,
       "--serving: a row per prompt (2: kind prompt, 512 and 768 tokens) and per decode step (128: decode from its "
       "phase), numbered in their session (%zu rows, %zu right)",
       forced.nrows, right);
    obs_serving_free(&s);
    obs_serving_free(&forced);
    sim_traced_run_free(&run);
}

int main(void)
{
    snprintf(replay, sizeof replay, "%s", shim_build_path("tests/apps/llm_replay"));
    snprintf(report, sizeof report, "%s", shim_build_path("obs-report"));
    if (!test_executable(replay) || !test_executable(report))
        skip_all("tests/apps/llm_replay or obs-report not built");
    python = getenv("OBS_PYTHON3");
    protoc = getenv("OBS_PROTOC");
    if (test_on_path("sqlite3", sqlite3_bin, sizeof sqlite3_bin) == NULL)
        sqlite3_bin[0] = '\0';
    plan_lazy();
    check_mode(HOST);
    check_mode(EVENTS);
    check_mode(STEPS);
    check_forced();
    return 0;
}
