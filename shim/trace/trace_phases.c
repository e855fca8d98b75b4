/* Phase statistics: see trace_phases.h. One pass over the calls with a few
 * arrays indexed by range, phase key and generation; nothing per call. */
#include "trace_phases.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorted unique values of v[0..n); returns the new count. */
static size_t unique_u32(uint32_t *v, size_t n)
{
    size_t i, k = 0;
    qsort(v, n, sizeof *v, cmp_u32);
    for (i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

/* Sorted unique values of v[0..n); returns the new count. */
static size_t unique_u64(uint64_t *v, size_t n)
{
    size_t i, k = 0;
    qsort(v, n, sizeof *v, cmp_u64);
    for (i = 0; i < n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    return k;
}

static size_t find_u64(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A host delimiter: a call that returns only once the device's work is
 * done (a synchronize other than a stream waiting for an event, a copy to
 * the host without Async): the phase engine's step boundaries, and the
 * host wall-clock's marks for TTFT and tokens/s. */
static int host_delimiter(const struct obs_call *c)
{
    const char *name = obs_api_name(c->api);
    unsigned dir = c->flags & OBS_CALL_DIR_MASK;
    if (name == NULL)
        return 0;
    if (c->kind == OBS_KIND_SYNC)
        return strstr(name, "WaitEvent") == NULL;
    if (c->kind == OBS_KIND_MEMCPY)
        return strstr(name, "Async") == NULL && (dir == OBS_DIR_DTOH || dir == OBS_DIR_DEFAULT);
    return 0;
}

static size_t find_u32(const uint32_t *v, size_t n, uint32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* rstep[] of a PREFILL range (a PREFILL range has no step). */
#define PREFILL_MARK (UINT32_MAX - 1)

/* [begin, end) span accumulator. */
struct span {
    uint64_t b, e;
};

static void span_add(struct span *s, uint64_t b, uint64_t e)
{
    if (b < s->b)
        s->b = b;
    if (e > s->e)
        s->e = e;
}

static int span_set(const struct span *s)
{
    return s->b != UINT64_MAX;
}

static uint64_t span_len(const struct span *s)
{
    return span_set(s) && s->e > s->b ? s->e - s->b : 0;
}

static int is_launch(unsigned kind)
{
    return kind == OBS_KIND_KERNEL || kind == OBS_KIND_GRAPH || kind == OBS_KIND_MEMCPY || kind == OBS_KIND_MEMSET;
}

static void count_call(struct obs_phase_row *r, const struct obs_call *c)
{
    r->calls++;
    if (is_launch(c->kind))
        r->launches++;
    if (c->kind == OBS_KIND_KERNEL)
        r->kernels++;
    if (c->kind == OBS_KIND_MEMCPY || c->kind == OBS_KIND_MEMSET)
        r->bytes += c->u.bytes;
}

const char *obs_phase_row_name(const struct obs_phase_row *r, char *buf, size_t len)
{
    if (r->phase && r->phase[0])
        return r->phase;
    snprintf(buf, len, "(phase id %u)", r->phase_id);
    return buf;
}

void obs_phase_stats_free(struct obs_phase_stats *s)
{
    free(s->phases);
    free(s->by_gen);
    free(s->gens);
    memset(s, 0, sizeof *s);
}

int obs_phase_stats_compute(const struct obs_trace *t, struct obs_phase_stats *s)
{
    size_t nr = t->nphases, i, ngen, nkey, best_n = 0;
    uint64_t *gens = NULL; /* (thread index << 32 | generation): generations are per thread */
    uint64_t *wall = NULL; /* host mode, per generation x 3: first PREFILL call's begin, end of the
                              last delimiter of step 0, of the steps after it */
    uint32_t *keys = NULL, *rgen = NULL, *rkey = NULL, *rstep = NULL; /* rstep: step, or PREFILL_MARK */
    uint64_t *key_first = NULL, *steps = NULL;
    /* The (generation, phase) pairs that occur, sorted (generation index
     * << 32 | key index), and each range's: a damaged trace can have as
     * many generations and phases as ranges, so no generations x phases
     * matrix. */
    uint64_t *cells = NULL;
    uint32_t *rcell = NULL;
    size_t ncell;
    struct span *rspan = NULL, *gspan = NULL; /* per range; per generation x 3 (prefill, first, steady) */
    uint64_t *rcalls = NULL;
    /* Per generation: graph nodes replayed in the decode outside any step
     * (a captured steady loop), and kernels launched in its DECODE/STEP_0. */
    uint64_t *graph_nodes = NULL, *step0_kernels = NULL;
    int rc = -1;

    memset(s, 0, sizeof *s);
    s->gpu_time = t->ngpu > 0;
    s->time_base = s->gpu_time ? "gpu" : "host";
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase == OBS_NONE)
            s->unlabelled_calls++;
    s->labelled_calls = t->ncalls - s->unlabelled_calls;
    if (nr == 0 || s->labelled_calls == 0)
        return 0;

    /* Generations and phase keys (phase ids) of the ranges, sorted unique. */
    gens = malloc(nr * sizeof *gens);
    keys = malloc(nr * sizeof *keys);
    rgen = malloc(nr * sizeof *rgen);
    rkey = malloc(nr * sizeof *rkey);
    rspan = malloc(nr * sizeof *rspan);
    rcalls = calloc(nr, sizeof *rcalls);
    rstep = malloc(nr * sizeof *rstep);
    cells = malloc(nr * sizeof *cells);
    rcell = malloc(nr * sizeof *rcell);
    if (!gens || !keys || !rgen || !rkey || !rspan || !rcalls || !rstep || !cells || !rcell)
        goto out;
    for (i = 0; i < nr; i++) {
        gens[i] = (uint64_t)t->phases[i].thread << 32 | t->phases[i].generation;
        keys[i] = t->phases[i].phase_id;
        rspan[i].b = UINT64_MAX;
        rspan[i].e = 0;
    }
    ngen = unique_u64(gens, nr);
    nkey = unique_u32(keys, nr);
    for (i = 0; i < nr; i++) {
        rgen[i] = (uint32_t)find_u64(gens, ngen, (uint64_t)t->phases[i].thread << 32 | t->phases[i].generation);
        rkey[i] = (uint32_t)find_u32(keys, nkey, t->phases[i].phase_id);
        rstep[i] = strcmp(t->phases[i].phase, "PREFILL") == 0 ? PREFILL_MARK : obs_phase_step(t, (uint32_t)i);
        cells[i] = (uint64_t)rgen[i] << 32 | rkey[i];
    }
    ncell = unique_u64(cells, nr);
    for (i = 0; i < nr; i++)
        rcell[i] = (uint32_t)find_u64(cells, ncell, (uint64_t)rgen[i] << 32 | rkey[i]);
    key_first = malloc(nkey * sizeof *key_first);
    gspan = malloc(ngen * 3 * sizeof *gspan);
    graph_nodes = calloc(ngen, sizeof *graph_nodes);
    step0_kernels = calloc(ngen, sizeof *step0_kernels);
    wall = calloc(ngen * 3, sizeof *wall);
    s->phases = calloc(nkey, sizeof *s->phases);
    s->by_gen = calloc(ncell, sizeof *s->by_gen);
    s->gens = calloc(ngen, sizeof *s->gens);
    if (!key_first || !gspan || !graph_nodes || !step0_kernels || !wall || !s->phases || !s->by_gen || !s->gens)
        goto out;
    for (i = 0; i < nkey; i++)
        key_first[i] = UINT64_MAX;
    for (i = 0; i < ngen * 3; i++) {
        gspan[i].b = UINT64_MAX;
        gspan[i].e = 0;
    }

    /* One pass over the calls. */
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t r = c->phase, g, k, step;
        const struct obs_gpu_time *gt;
        uint64_t b, e;
        int timed;
        if (r == OBS_NONE)
            continue;
        g = rgen[r];
        k = rkey[r];
        if (key_first[k] == UINT64_MAX)
            key_first[k] = i;
        count_call(&s->by_gen[rcell[r]], c);
        count_call(&s->phases[k], c);
        rcalls[r]++;
        step = rstep[r];
        if (step == 0 && c->kind == OBS_KIND_KERNEL)
            step0_kernels[g]++;
        /* A graph launch in the decode outside any step replays steps. */
        if (step == UINT32_MAX && c->kind == OBS_KIND_GRAPH)
            graph_nodes[g] += c->u.bytes;
        if (!s->gpu_time) {
            uint64_t *w = &wall[(size_t)g * 3];
            if (step == PREFILL_MARK && (w[0] == 0 || c->host_begin < w[0]))
                w[0] = c->host_begin;
            else if (step != PREFILL_MARK && host_delimiter(c) && c->host_end > w[step == 0 ? 1 : 2])
                w[step == 0 ? 1 : 2] = c->host_end;
        }
        gt = obs_call_gpu(t, c);
        timed = s->gpu_time ? gt != NULL : 1;
        if (!timed)
            continue;
        b = s->gpu_time ? gt->begin : c->host_begin;
        e = s->gpu_time ? gt->end : c->host_end;
        span_add(&rspan[r], b, e);
        if (step == PREFILL_MARK)
            span_add(&gspan[(size_t)g * 3], b, e);
        else if (step == 0)
            span_add(&gspan[(size_t)g * 3 + 1], b, e);
        else if (step != UINT32_MAX || c->kind == OBS_KIND_GRAPH)
            span_add(&gspan[(size_t)g * 3 + 2], b, e);
    }

    /* Times: per range spans summed into their phase (per generation, all). */
    for (i = 0; i < nr; i++) {
        struct obs_phase_row *row = &s->by_gen[rcell[i]];
        if (rcalls[i] == 0)
            continue;
        row->ranges++;
        s->phases[rkey[i]].ranges++;
        if (span_set(&rspan[i])) {
            row->time_ns += span_len(&rspan[i]);
            row->timed = 1;
            s->phases[rkey[i]].time_ns += span_len(&rspan[i]);
            s->phases[rkey[i]].timed = 1;
        }
    }

    /* Decode steps per generation: distinct (generation, step) of the ranges that label calls. */
    steps = malloc(nr * sizeof *steps);
    if (steps == NULL)
        goto out;
    {
        size_t n = 0;
        for (i = 0; i < nr; i++) {
            uint32_t step = obs_phase_step(t, (uint32_t)i);
            if (rcalls[i] && step != UINT32_MAX)
                steps[n++] = (uint64_t)rgen[i] << 32 | step;
        }
        qsort(steps, n, sizeof *steps, cmp_u64);
        for (i = 0; i < n; i++)
            if (i == 0 || steps[i] != steps[i - 1])
                s->gens[steps[i] >> 32].decode_steps++;
        /* Steps replayed from graphs: their nodes over the kernels of one
         * step, as DECODE/STEP_0 of the same generation launched them. */
        for (i = 0; i < ngen; i++)
            if (graph_nodes[i] > 0 && step0_kernels[i] > 0)
                s->gens[i].decode_steps += (uint32_t)(graph_nodes[i] / step0_kernels[i]);
    }

    /* Rows: phases in order of first call; generations ascending. */
    for (i = 0; i < nkey; i++) {
        s->phases[i].phase_id = keys[i];
        s->phases[i].generation = OBS_ALL_GENERATIONS;
    }
    {
        /* Keys in order of first call: key_first values are distinct call
         * indexes (a call has one phase), so sorting them sorts the keys. */
        size_t *order = malloc((nkey ? nkey : 1) * sizeof *order), a, n = 0, j;
        uint64_t *first = malloc((nkey ? nkey : 1) * sizeof *first), *sk = NULL;
        uint32_t *rank = malloc((nkey ? nkey : 1) * sizeof *rank), *name_of = NULL;
        struct obs_phase_row *sorted = NULL, *rows = NULL;
        int ok = 0;
        name_of = malloc((nkey ? nkey : 1) * sizeof *name_of);
        sk = malloc((ncell ? ncell : 1) * sizeof *sk);
        if (order == NULL || first == NULL || rank == NULL || name_of == NULL || sk == NULL)
            goto rows_out;
        for (a = 0; a < nkey; a++) {
            rank[a] = UINT32_MAX;
            name_of[a] = UINT32_MAX;
            if (key_first[a] != UINT64_MAX)
                first[n++] = key_first[a];
        }
        qsort(first, n, sizeof *first, cmp_u64);
        for (a = 0; a < n; a++) {
            order[a] = rkey[t->calls[first[a]].phase];
            rank[order[a]] = (uint32_t)a;
        }
        for (i = 0; i < nr; i++) /* a phase's name: that of its first range */
            if (name_of[rkey[i]] == UINT32_MAX)
                name_of[rkey[i]] = (uint32_t)i;
        sorted = malloc((n ? n : 1) * sizeof *sorted);
        if (sorted == NULL)
            goto rows_out;
        for (a = 0; a < n; a++) {
            sorted[a] = s->phases[order[a]];
            sorted[a].phase = t->phases[name_of[order[a]]].phase;
        }
        free(s->phases);
        s->phases = sorted;
        s->nphases = n;
        sorted = NULL;
        /* Rows: generations ascending, then phases in the order above. */
        for (i = 0, j = 0; i < ncell; i++) {
            uint32_t k = (uint32_t)(cells[i] & 0xffffffffu);
            if (rank[k] != UINT32_MAX && s->by_gen[i].calls > 0)
                sk[j++] = (cells[i] >> 32) << 32 | rank[k];
        }
        qsort(sk, j, sizeof *sk, cmp_u64);
        rows = malloc((j ? j : 1) * sizeof *rows);
        if (rows == NULL)
            goto rows_out;
        for (a = 0; a < j; a++) {
            size_t g = (size_t)(sk[a] >> 32), r = (size_t)(sk[a] & 0xffffffffu);
            struct obs_phase_row *row = &s->by_gen[find_u64(cells, ncell, (uint64_t)g << 32 | order[r])];
            struct obs_generation_row *gr = &s->gens[g];
            row->phase = s->phases[r].phase;
            row->phase_id = keys[order[r]];
            row->generation = (uint32_t)gens[g];
            row->thread = t->threads[gens[g] >> 32].tid;
            gr->calls += row->calls;
            gr->launches += row->launches;
            gr->kernels += row->kernels;
            gr->bytes += row->bytes;
            rows[s->nby_gen++] = *row;
        }
        free(s->by_gen);
        s->by_gen = rows;
        ok = 1;
    rows_out:
        free(order);
        free(first);
        free(rank);
        free(name_of);
        free(sk);
        if (!ok)
            goto out;
    }

    /* Generations: TTFT and tokens/s. */
    s->ngens = 0;
    for (i = 0; i < ngen; i++) {
        struct obs_generation_row *gr = &s->gens[i];
        const struct span *sp = &gspan[i * 3];
        if (gr->calls == 0)
            continue;
        gr->generation = (uint32_t)gens[i];
        gr->thread = t->threads[gens[i] >> 32].tid;
        gr->has_prefill = span_set(&sp[0]);
        gr->has_first_decode = span_set(&sp[1]);
        gr->has_steady = span_set(&sp[2]);
        gr->prefill_ns = span_len(&sp[0]);
        gr->first_decode_ns = span_len(&sp[1]);
        gr->steady_ns = span_len(&sp[2]);
        if (s->gpu_time) {
            gr->ttft_defined = gr->has_prefill && gr->has_first_decode;
            gr->ttft_ms = gr->ttft_defined ? (double)(gr->prefill_ns + gr->first_decode_ns) / 1e6 : 0.0;
            gr->tokens_defined = gr->decode_steps >= 2 && gr->has_steady && gr->steady_ns > 0;
            gr->tokens_per_s =
                gr->tokens_defined ? (double)(gr->decode_steps - 1) * 1e9 / (double)gr->steady_ns : 0.0;
        } else {
            /* Host wall-clock: what a stopwatch around the loop reads. The
             * launches are asynchronous, so only a delimiter (a sync, a
             * token read) marks where the device's work ended. */
            const uint64_t *w = &wall[i * 3];
            gr->ttft_defined = gr->has_prefill && w[1] > w[0];
            gr->ttft_ms = gr->ttft_defined ? (double)(w[1] - w[0]) / 1e6 : 0.0;
            gr->tokens_defined = gr->decode_steps >= 2 && w[1] > 0 && w[2] > w[1];
            gr->tokens_per_s = gr->tokens_defined ? (double)(gr->decode_steps - 1) * 1e9 / (double)(w[2] - w[1]) : 0.0;
            if ((gr->has_first_decode && w[1] == 0) || (gr->decode_steps >= 2 && w[2] == 0))
                s->unbounded_steps++;
        }
        s->gens[s->ngens++] = *gr;
    }
    /* Bests: over the generations with at least two decode steps when there
     * are any (a one-step generation, like the workload's warm-up, has no
     * steady rate and a lighter prefill), else over all. */
    for (i = 0; i < s->ngens; i++)
        if (s->gens[i].decode_steps >= 2)
            best_n++;
    for (i = 0; i < s->ngens; i++) {
        struct obs_generation_row *gr = &s->gens[i];
        gr->in_best = best_n ? gr->decode_steps >= 2 : 1;
        if (!gr->in_best)
            continue;
        s->best_over++;
        if (gr->ttft_defined && (!s->has_best_ttft || gr->ttft_ms < s->best_ttft_ms)) {
            s->has_best_ttft = 1;
            s->best_ttft_ms = gr->ttft_ms;
            s->best_ttft_generation = gr->generation;
        }
        if (gr->tokens_defined && (!s->has_best_tokens || gr->tokens_per_s > s->best_tokens_per_s)) {
            s->has_best_tokens = 1;
            s->best_tokens_per_s = gr->tokens_per_s;
            s->best_tokens_generation = gr->generation;
        }
    }
    rc = 0;
out:
    free(gens);
    free(wall);
    free(keys);
    free(rgen);
    free(rkey);
    free(rspan);
    free(rcalls);
    free(rstep);
    free(key_first);
    free(steps);
    free(graph_nodes);
    free(step0_kernels);
    free(gspan);
    free(cells);
    free(rcell);
    if (rc != 0)
        obs_phase_stats_free(s);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* v[0..n) sorted ascending, n > 0. */
static double sorted_median(const double *v, size_t n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Nearest rank of the 90th percentile: ceil(0.9 n), 1-based, in integers. */
static size_t rank_p90(size_t n)
{
    return (9 * n + 9) / 10;
}

int obs_generation_spread_compute(const struct obs_phase_stats *s, struct obs_generation_spread *out)
{
    double *ttft, *tokens;
    size_t i;

    memset(out, 0, sizeof *out);
    ttft = malloc((s->ngens ? s->ngens : 1) * sizeof *ttft);
    tokens = malloc((s->ngens ? s->ngens : 1) * sizeof *tokens);
    if (ttft == NULL || tokens == NULL) {
        free(ttft);
        free(tokens);
        return -1;
    }
    for (i = 0; i < s->ngens; i++) {
        const struct obs_generation_row *g = &s->gens[i];
        if (!g->in_best)
            continue;
        if (g->ttft_defined)
            ttft[out->ttft_n++] = g->ttft_ms;
        if (g->tokens_defined)
            tokens[out->tokens_n++] = g->tokens_per_s;
    }
    qsort(ttft, out->ttft_n, sizeof *ttft, cmp_double);
    qsort(tokens, out->tokens_n, sizeof *tokens, cmp_double);
    if (out->ttft_n) {
        out->ttft_best_ms = ttft[0];
        out->ttft_median_ms = sorted_median(ttft, out->ttft_n);
        out->ttft_p90_ms = ttft[rank_p90(out->ttft_n) - 1];
    }
    if (out->tokens_n) {
        out->tokens_best = tokens[out->tokens_n - 1];
        out->tokens_median = sorted_median(tokens, out->tokens_n);
        out->tokens_p90 = tokens[out->tokens_n - rank_p90(out->tokens_n)];
    }
    free(ttft);
    free(tokens);
    return 0;
}

int obs_report_phases_csv(const struct obs_trace *t, FILE *out)
{
    struct obs_phase_stats s;
    size_t i;
    if (obs_phase_stats_compute(t, &s) != 0) {
        errno = ENOMEM;
        return -1;
    }
    fputs(OBS_PHASES_CSV_HEADER "\n", out);
    for (i = 0; i < s.ngens; i++) {
        const struct obs_generation_row *g = &s.gens[i];
        fprintf(out, "%u,", g->generation);
        if (g->ttft_defined)
            fprintf(out, "%.6f", g->ttft_ms);
        fputc(',', out);
        if (g->tokens_defined)
            fprintf(out, "%.3f", g->tokens_per_s);
        fprintf(out, ",%u,%s,", g->decode_steps, s.time_base);
        if (g->has_prefill)
            fprintf(out, "%.6f", (double)g->prefill_ns / 1e6);
        fputc(',', out);
        if (g->has_first_decode)
            fprintf(out, "%.6f", (double)g->first_decode_ns / 1e6);
        fputc(',', out);
        if (g->has_steady)
            fprintf(out, "%.6f", (double)g->steady_ns / 1e6);
        fprintf(out, ",%llu,%llu,%llu,%llu,%d,%u\n", (unsigned long long)g->calls, (unsigned long long)g->launches,
                (unsigned long long)g->kernels, (unsigned long long)g->bytes, g->in_best, g->thread);
    }
    obs_phase_stats_free(&s);
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}
