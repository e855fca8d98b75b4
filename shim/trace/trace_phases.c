/* Phase statistics: see trace_phases.h. One pass over the calls with a few
 * arrays indexed by range, phase key and generation; nothing per call. */
#include "trace_phases.h"

#include "trace_serving.h"

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

/* A range's step for the spans of TTFT and tokens/s: a PREFILL range has
 * none of its own. */
#define PREFILL_MARK (UINT32_MAX - 1)

/* Whether range r is a serving loop's iteration or inside one (an
 * ITERATION/k range numbers iterations, not decode steps). */
static int in_iteration(const struct obs_trace *t, uint32_t r)
{
    uint32_t depth = 0;
    for (; r != OBS_NONE && r < t->nphases && depth <= 256; r = t->phases[r].parent, depth++)
        if (strcmp(t->phases[r].phase, OBS_SERVING_PHASE) == 0)
            return 1;
    return 0;
}

/* [begin, end) span accumulator. */
struct span {
    uint64_t b, e;
};

static const struct span span_empty = {.b = UINT64_MAX, .e = 0};

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
    free(s->steps);
    free(s->phases);
    free(s->by_gen);
    free(s->gens);
    memset(s, 0, sizeof *s);
}

/* ---- the work of obs_phase_stats_compute ---------------------------------------- */

/* Per range (index into t->phases): where the calls it labels count. */
struct range_acc {
    uint32_t gen;     /* index into phase_work.gens */
    uint32_t key;     /* index into phase_work.keys */
    uint32_t cell;    /* index into phase_work.cells */
    uint32_t step;    /* obs_phase_step, or PREFILL_MARK for a PREFILL range; UINT32_MAX in an ITERATION */
    uint64_t calls;   /* calls it labels itself */
    struct span span; /* of those calls, in the time base */
};

/* Per generation: what TTFT and tokens/s are made of (see the section
 * "TTFT and tokens/s" below). */
struct gen_acc {
    struct span prefill, first_decode, steady; /* in the time base */
    /* Host mode: the first PREFILL call's begin, the end of the last
     * delimiter of step 0 and of the steps after it (0: none). */
    uint64_t prefill_begin, step0_end, steady_end;
    /* Graph nodes replayed in the decode outside any step (a captured
     * steady loop), and kernels launched in its DECODE/STEP_0. */
    uint64_t graph_nodes, step0_kernels;
    /* Token reads (find_token_reads): the PREFILL's last, the steps' last:
     * host end of the delimiter that completed it, device end of the copy
     * (0: none), bytes. */
    uint64_t prompt_read_end, prompt_read_gpu_end, prompt_read_bytes;
    uint64_t last_read_end, last_read_gpu_end, last_read_bytes;
    int step0_read; /* step 0 reads a token */
    int reads_back; /* a call of it copies from the device (any size: a flag, a token) */
    /* The prompt's forward (find_prompt_forwards): the PREFILL iteration
     * taken for it, its first and last PREFILL launch and the delimiter
     * that ends it (indexes into t->calls; fwd_end NO_CALL: none bounds it
     * alone), and the kernels of the PREFILL's largest iteration. */
    int has_forward;
    size_t fwd_first, fwd_last, fwd_end;
    uint64_t fwd_max_kernels;
    /* Its decode steps' forwards the same way: the delimiter after the
     * last of them (NO_CALL: none), and the kernels of the largest. */
    size_t last_step_fwd_end;
    uint64_t step_fwd_max_kernels;
    int serving; /* it holds a serving loop's ITERATION ranges */
};

#define NO_CALL SIZE_MAX

/* Generations and phase keys are numbered by sorted unique value; a
 * damaged trace can have as many generations and phases as ranges, so
 * the (generation, phase) pairs that occur are kept sorted (cells), never
 * a generations x phases matrix. */
struct phase_work {
    const struct obs_trace *t;
    size_t ngen, nkey, ncell;
    uint64_t *gens;      /* (thread index << 32 | generation): generations are per thread */
    uint32_t *keys;      /* phase ids */
    uint64_t *cells;     /* generation index << 32 | key index */
    uint64_t *key_first; /* per key: its first call's index, UINT64_MAX none */
    struct range_acc *ranges;
    struct gen_acc *gen;
    size_t *order;       /* the keys of the phase rows, in order of first call */
    uint32_t *rank;      /* per key: its row in order, UINT32_MAX none */
};

static void work_free(struct phase_work *w)
{
    free(w->gens);
    free(w->keys);
    free(w->cells);
    free(w->key_first);
    free(w->ranges);
    free(w->gen);
    free(w->order);
    free(w->rank);
}

static uint64_t range_gen_id(const struct obs_phase *p)
{
    return (uint64_t)p->thread << 32 | p->generation;
}

/* Number the generations, phase keys and cells; each range's indexes. */
static int index_ranges(struct phase_work *w)
{
    const struct obs_trace *t = w->t;
    size_t nr = t->nphases, i;
    w->gens = malloc(nr * sizeof *w->gens);
    w->keys = malloc(nr * sizeof *w->keys);
    w->cells = malloc(nr * sizeof *w->cells);
    w->ranges = malloc(nr * sizeof *w->ranges);
    if (!w->gens || !w->keys || !w->cells || !w->ranges)
        return -1;
    for (i = 0; i < nr; i++) {
        w->gens[i] = range_gen_id(&t->phases[i]);
        w->keys[i] = t->phases[i].phase_id;
    }
    w->ngen = unique_u64(w->gens, nr);
    w->nkey = unique_u32(w->keys, nr);
    for (i = 0; i < nr; i++) {
        struct range_acc *r = &w->ranges[i];
        r->gen = (uint32_t)find_u64(w->gens, w->ngen, range_gen_id(&t->phases[i]));
        r->key = (uint32_t)find_u32(w->keys, w->nkey, t->phases[i].phase_id);
        r->step = strcmp(t->phases[i].phase, "PREFILL") == 0 ? PREFILL_MARK
                  : in_iteration(t, (uint32_t)i)                 ? UINT32_MAX
                                                                 : obs_phase_step(t, (uint32_t)i);
        r->calls = 0;
        r->span = span_empty;
        w->cells[i] = (uint64_t)r->gen << 32 | r->key;
    }
    w->ncell = unique_u64(w->cells, nr);
    for (i = 0; i < nr; i++)
        w->ranges[i].cell = (uint32_t)find_u64(w->cells, w->ncell, (uint64_t)w->ranges[i].gen << 32 | w->ranges[i].key);
    return 0;
}

/* The accumulators and the tables of s, sized by the numbering. */
static int alloc_accumulators(struct phase_work *w, struct obs_phase_stats *s)
{
    size_t i;
    w->key_first = malloc(w->nkey * sizeof *w->key_first);
    w->gen = malloc(w->ngen * sizeof *w->gen);
    s->phases = calloc(w->nkey, sizeof *s->phases);
    s->by_gen = calloc(w->ncell, sizeof *s->by_gen);
    s->gens = calloc(w->ngen, sizeof *s->gens);
    if (!w->key_first || !w->gen || !s->phases || !s->by_gen || !s->gens)
        return -1;
    for (i = 0; i < w->nkey; i++)
        w->key_first[i] = UINT64_MAX;
    for (i = 0; i < w->ngen; i++) {
        struct gen_acc *g = &w->gen[i];
        memset(g, 0, sizeof *g);
        g->prefill = g->first_decode = g->steady = span_empty;
        g->last_step_fwd_end = NO_CALL;
    }
    return 0;
}

/* ---- TTFT and tokens/s: the definitions (trace_phases.h) ------------------------ */

/* Host mode: the marks of a stopwatch around the loop. */
static void add_wall_marks(struct gen_acc *g, uint32_t step, const struct obs_call *c)
{
    uint64_t *mark = step == 0 ? &g->step0_end : &g->steady_end;
    if (step == PREFILL_MARK && (g->prefill_begin == 0 || c->host_begin < g->prefill_begin))
        g->prefill_begin = c->host_begin;
    else if (step != PREFILL_MARK && host_delimiter(c) && c->host_end > *mark)
        *mark = c->host_end;
}

/* The span a timed call [b, e) adds to: PREFILL, step 0, the steps after
 * it (and graph launches in the decode outside any step: replayed steps). */
static void add_generation_span(struct gen_acc *g, uint32_t step, int graph, uint64_t b, uint64_t e)
{
    if (step == PREFILL_MARK)
        span_add(&g->prefill, b, e);
    else if (step == 0)
        span_add(&g->first_decode, b, e);
    else if (step != UINT32_MAX || graph)
        span_add(&g->steady, b, e);
}

static void generation_spans(struct obs_generation_row *gr, const struct gen_acc *g)
{
    gr->has_prefill = span_set(&g->prefill);
    gr->has_first_decode = span_set(&g->first_decode);
    gr->has_steady = span_set(&g->steady);
    gr->prefill_ns = span_len(&g->prefill);
    gr->first_decode_ns = span_len(&g->first_decode);
    gr->steady_ns = span_len(&g->steady);
}

/* GPU time: the sum of the spans. */
static void generation_rates_gpu(struct obs_generation_row *gr)
{
    gr->ttft_defined = gr->has_prefill && gr->has_first_decode;
    gr->ttft_ms = gr->ttft_defined ? (double)(gr->prefill_ns + gr->first_decode_ns) / 1e6 : 0.0;
    gr->tokens_defined = gr->decode_steps >= 2 && gr->has_steady && gr->steady_ns > 0;
    gr->tokens_per_s = gr->tokens_defined ? (double)(gr->decode_steps - 1) * 1e9 / (double)gr->steady_ns : 0.0;
}

/* Host wall-clock: what a stopwatch around the loop reads. The launches
 * are asynchronous, so only a delimiter (a sync, a token read) marks where
 * the device's work ended. Returns 1 when no delimiter bounds its steps. */
static int generation_rates_host(struct obs_generation_row *gr, const struct gen_acc *g)
{
    gr->ttft_defined = gr->has_prefill && g->step0_end > g->prefill_begin;
    gr->ttft_ms = gr->ttft_defined ? (double)(g->step0_end - g->prefill_begin) / 1e6 : 0.0;
    gr->tokens_defined = gr->decode_steps >= 2 && g->step0_end > 0 && g->steady_end > g->step0_end;
    gr->tokens_per_s =
        gr->tokens_defined ? (double)(gr->decode_steps - 1) * 1e9 / (double)(g->steady_end - g->step0_end) : 0.0;
    return (gr->has_first_decode && g->step0_end == 0) || (gr->decode_steps >= 2 && g->steady_end == 0);
}

/* The first token from the prompt's own logits: TTFT to the end of the
 * PREFILL's token read; a token per step (per sequence) after it. */
static void generation_rates_token(struct obs_generation_row *gr, const struct gen_acc *g, int gpu)
{
    uint64_t begin = gpu ? g->prefill.b : g->prefill_begin;
    uint64_t first = gpu ? g->prompt_read_gpu_end : g->prompt_read_end;
    uint64_t last = gpu ? g->last_read_gpu_end : g->last_read_end;
    gr->first_token = "prefill";
    gr->ttft_to = OBS_TTFT_TO_TOKEN_READ;
    gr->ttft_defined = gr->has_prefill && first > begin;
    gr->ttft_ms = gr->ttft_defined ? (double)(first - begin) / 1e6 : 0.0;
    gr->sequences = 1;
    if (g->prompt_read_bytes > 0 && g->last_read_bytes > g->prompt_read_bytes &&
        g->last_read_bytes % g->prompt_read_bytes == 0)
        gr->sequences = (uint32_t)(g->last_read_bytes / g->prompt_read_bytes);
    gr->steps_defined = gr->decode_steps >= 1 && first > 0 && last > first;
    gr->steps_per_s = gr->steps_defined ? (double)gr->decode_steps * 1e9 / (double)(last - first) : 0.0;
    gr->itl_ms = gr->steps_defined ? (double)(last - first) / 1e6 / (double)gr->decode_steps : 0.0;
    gr->tokens_defined = gr->steps_defined;
    gr->tokens_per_s = gr->steps_per_s * gr->sequences;
}

/* Token reads, per thread in call order: a copy from the device of at
 * least TOKEN_READ_MIN bytes after a launch of the same iteration,
 * complete at the delimiter that ends the iteration (the copy itself when
 * synchronous). Each counts for the generation and step of the read copy:
 * the PREFILL's last one, and the last one of its steps. */
#define TOKEN_READ_MIN 4u

/* OBS_GPU_TIME=steps times no single call: a token read's device end is
 * the end of its range's span on the read's stream (the marks enclose the
 * read's copy: the sync that completes it has one), else of its range's
 * spans; 0: none. Spans are sorted by thread, live range, stream. */
static uint64_t read_end_from_span(const struct phase_work *w, const struct obs_call *read)
{
    const struct obs_trace *t = w->t;
    const struct range_acc *r = &w->ranges[read->phase];
    size_t lo = 0, hi = t->nrange_spans;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct obs_range_span *x = &t->range_spans[mid];
        if (x->thread < read->thread ||
            (x->thread == read->thread &&
             (x->live < read->phase || (x->live == read->phase && x->stream < read->stream))))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->nrange_spans && t->range_spans[lo].thread == read->thread && t->range_spans[lo].live == read->phase &&
        t->range_spans[lo].stream == read->stream && t->range_spans[lo].range == read->phase)
        return t->range_spans[lo].end;
    return span_set(&r->span) ? r->span.e : 0;
}

static void token_read_done(struct phase_work *w, const struct obs_call *read, const struct obs_call *end)
{
    const struct range_acc *r;
    const struct obs_gpu_time *gt = obs_call_gpu(w->t, read);
    struct gen_acc *g;
    uint64_t gpu_end;
    if (read->phase == OBS_NONE)
        return;
    r = &w->ranges[read->phase];
    g = &w->gen[r->gen];
    gpu_end = gt != NULL ? gt->end : (w->t->flags & OBS_FILE_GPU_STEPS) ? read_end_from_span(w, read) : 0;
    if (r->step == PREFILL_MARK) {
        if (end->host_end >= g->prompt_read_end) {
            g->prompt_read_end = end->host_end;
            g->prompt_read_gpu_end = gpu_end;
            g->prompt_read_bytes = read->u.bytes;
        }
    } else {
        g->step0_read |= r->step == 0;
    }
    if (r->step != PREFILL_MARK && end->host_end >= g->last_read_end) {
        g->last_read_end = end->host_end;
        g->last_read_gpu_end = gpu_end;
        g->last_read_bytes = read->u.bytes;
    }
}

static int find_token_reads(struct phase_work *w)
{
    const struct obs_trace *t = w->t;
    size_t *pending = malloc((t->nthreads ? t->nthreads : 1) * sizeof *pending), i;
    uint8_t *launched = calloc(t->nthreads ? t->nthreads : 1, 1);
    if (pending == NULL || launched == NULL) {
        free(pending);
        free(launched);
        return -1;
    }
    for (i = 0; i < t->nthreads; i++)
        pending[i] = SIZE_MAX;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t th = c->thread;
        if (th >= t->nthreads)
            continue;
        if (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH)
            launched[th] = 1;
        else if (c->kind == OBS_KIND_MEMCPY && (c->flags & OBS_CALL_DIR_MASK) == OBS_DIR_DTOH && launched[th] &&
                 c->u.bytes >= TOKEN_READ_MIN)
            pending[th] = i;
        if (host_delimiter(c)) {
            if (pending[th] != SIZE_MAX)
                token_read_done(w, &t->calls[pending[th]], c);
            pending[th] = SIZE_MAX;
            launched[th] = 0;
        }
    }
    free(pending);
    free(launched);
    return 0;
}

/* ---- the prompt's forward, where the PREFILL reads no token ----------------------- */

/* The PREFILL range holds more than the prompt's forward: the input
 * preparation before it (Hugging Face generate()'s set-up and mask checks:
 * iterations of 1 to 7 launches, each ending in a flag read) and what
 * follows it until the next forward begins (its next inputs: copies, or two
 * kernels with a padded batch, after the stopping check's sync). The
 * forward launches every layer's kernels, and its sampling and stopping
 * check follow it in the same iteration. So the forward is the last PREFILL
 * iteration with at least FORWARD_SHARE_NUM / FORWARD_SHARE_DEN of the
 * kernels of the PREFILL's largest: it skips the small iterations after the
 * forward, keeps the last of a prompt's chunks (each of which has about as
 * many kernels, the last with the sampling), and the part that ends a
 * forward split by a read inside it (the mask check after the embedding,
 * 5 launches before hundreds) or by several. A kernel counts 1, a graph
 * launch its nodes. */
#define FORWARD_SHARE_NUM 1u
#define FORWARD_SHARE_DEN 2u

/* A run of a generation's PREFILL launches in one iteration of a thread. */
struct prefill_iteration {
    uint32_t gen;        /* index into phase_work.gens; UINT32_MAX: none open */
    size_t first, last;  /* its first and last PREFILL launch */
    uint64_t kernels;    /* kernels it launched (a graph: its nodes) */
    int foreign;         /* a launch of another range came after its last */
};

static uint64_t launch_kernels(const struct obs_call *c)
{
    if (c->kind == OBS_KIND_KERNEL)
        return 1;
    if (c->kind == OBS_KIND_GRAPH)
        return c->u.bytes ? c->u.bytes : 1;
    return 0;
}

/* An iteration ends (at the delimiter end, NO_CALL: none bounds it alone):
 * it is the generation's forward if it holds the share of the kernels. */
static void forward_offer(struct phase_work *w, struct prefill_iteration *it, size_t end)
{
    struct gen_acc *g = &w->gen[it->gen];
    if (it->kernels > g->fwd_max_kernels)
        g->fwd_max_kernels = it->kernels;
    if (it->kernels * FORWARD_SHARE_DEN >= g->fwd_max_kernels * FORWARD_SHARE_NUM) {
        g->has_forward = 1;
        g->fwd_first = it->first;
        g->fwd_last = it->last;
        g->fwd_end = end;
    }
    it->gen = UINT32_MAX;
}

/* A decode iteration ends (at the delimiter after it, NO_CALL: another
 * generation's launch came first): the generation's last step forward so
 * far if it holds the share of the kernels of its largest. */
static void step_forward_offer(struct phase_work *w, struct prefill_iteration *it, size_t end)
{
    struct gen_acc *g = &w->gen[it->gen];
    if (it->kernels > g->step_fwd_max_kernels)
        g->step_fwd_max_kernels = it->kernels;
    if (it->kernels * FORWARD_SHARE_DEN >= g->step_fwd_max_kernels * FORWARD_SHARE_NUM)
        g->last_step_fwd_end = end;
    it->gen = UINT32_MAX;
}

/* The launches of a generation's decode steps between two delimiters of a
 * thread: one iteration (the delimiter after them ends it, whatever ran
 * between). */
static void step_iteration_add(struct phase_work *w, struct prefill_iteration *it, const struct range_acc *r,
                               const struct obs_call *c)
{
    if (r == NULL || r->step == PREFILL_MARK || r->step == UINT32_MAX)
        return;
    if (it->gen != UINT32_MAX && it->gen != r->gen)
        step_forward_offer(w, it, NO_CALL);
    if (it->gen == UINT32_MAX) {
        it->gen = r->gen;
        it->kernels = 0;
    }
    it->kernels += launch_kernels(c);
}

/* Per thread in call order: the PREFILL iterations of each generation, its
 * decode steps' iterations, and whether a generation copies anything from
 * the device (reads_back). */
static int find_prompt_forwards(struct phase_work *w)
{
    const struct obs_trace *t = w->t;
    size_t nth = t->nthreads ? t->nthreads : 1, i;
    struct prefill_iteration *open = malloc(2 * nth * sizeof *open), *steps = open + nth;
    if (open == NULL)
        return -1;
    for (i = 0; i < 2 * nth; i++)
        open[i].gen = UINT32_MAX;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        struct prefill_iteration *it;
        if (c->thread >= t->nthreads)
            continue;
        it = &open[c->thread];
        if (c->kind == OBS_KIND_MEMCPY && (c->flags & OBS_CALL_DIR_MASK) == OBS_DIR_DTOH && c->phase != OBS_NONE)
            w->gen[w->ranges[c->phase].gen].reads_back = 1;
        if (host_delimiter(c) && steps[c->thread].gen != UINT32_MAX)
            step_forward_offer(w, &steps[c->thread], i);
        if (is_launch(c->kind)) {
            const struct range_acc *r = c->phase != OBS_NONE ? &w->ranges[c->phase] : NULL;
            step_iteration_add(w, &steps[c->thread], r, c);
            if (r != NULL && r->step == PREFILL_MARK) {
                if (it->gen != UINT32_MAX && it->gen != r->gen)
                    forward_offer(w, it, NO_CALL);
                if (it->gen == UINT32_MAX) {
                    it->gen = r->gen;
                    it->first = i;
                    it->kernels = 0;
                }
                it->last = i;
                it->kernels += launch_kernels(c);
                it->foreign = 0;
            } else if (it->gen != UINT32_MAX) {
                it->foreign = 1;
            }
        }
        if (host_delimiter(c) && it->gen != UINT32_MAX)
            forward_offer(w, it, it->foreign ? NO_CALL : i);
    }
    for (i = 0; i < t->nthreads; i++) {
        if (open[i].gen != UINT32_MAX)
            forward_offer(w, &open[i], NO_CALL);
        if (steps[i].gen != UINT32_MAX)
            step_forward_offer(w, &steps[i], NO_CALL);
    }
    free(open);
    return 0;
}

/* GPU time: the latest device end of the forward's PREFILL launches (with
 * OBS_GPU_TIME=steps, of their PREFILL range's span on their stream); 0:
 * none timed. */
static uint64_t forward_gpu_end(const struct phase_work *w, const struct gen_acc *g)
{
    const struct obs_trace *t = w->t;
    uint32_t th = t->calls[g->fwd_last].thread, gen = w->ranges[t->calls[g->fwd_last].phase].gen;
    uint64_t end = 0;
    size_t i;
    for (i = g->fwd_first; i <= g->fwd_last; i++) {
        const struct obs_call *c = &t->calls[i];
        const struct obs_gpu_time *gt;
        uint64_t e;
        if (c->thread != th || !is_launch(c->kind) || c->phase == OBS_NONE ||
            w->ranges[c->phase].step != PREFILL_MARK || w->ranges[c->phase].gen != gen)
            continue;
        gt = obs_call_gpu(t, c);
        e = gt != NULL ? gt->end : (t->flags & OBS_FILE_GPU_STEPS) ? read_end_from_span(w, c) : 0;
        if (e > end)
            end = e;
    }
    return end;
}

/* The PREFILL reads no token, step 0 none either, and the generation reads
 * something back: TTFT from the first PREFILL call to the end of the
 * prompt's forward, tokens/s the decode steps' tokens after it. Returns 1 on host time when no delimiter bounds the
 * forward alone (unbounded_forwards). */
static int generation_ttft_forward(struct obs_generation_row *gr, const struct phase_work *w,
                                   const struct gen_acc *g, int gpu)
{
    uint64_t begin = gpu ? g->prefill.b : g->prefill_begin, end = 0, last;
    gr->ttft_to = gpu ? OBS_TTFT_TO_FORWARD_DEVICE : OBS_TTFT_TO_FORWARD_DELIMITER;
    if (g->has_forward && gpu)
        end = forward_gpu_end(w, g);
    else if (g->has_forward && g->fwd_end != NO_CALL)
        end = w->t->calls[g->fwd_end].host_end;
    gr->ttft_defined = gr->has_prefill && end > begin;
    gr->ttft_ms = gr->ttft_defined ? (double)(end - begin) / 1e6 : 0.0;
    /* Each decode step makes one more token after the prompt's: tokens/s
     * from the prompt forward's end to the end of the last step's forward
     * (the delimiter after it; on GPU time the steps' span's device end). */
    last = gpu ? (span_set(&g->steady) ? g->steady.e : span_set(&g->first_decode) ? g->first_decode.e : 0)
           : g->last_step_fwd_end != NO_CALL ? w->t->calls[g->last_step_fwd_end].host_end
                                             : 0;
    gr->tokens_defined = gr->ttft_defined && gr->decode_steps >= 1 && last > end;
    gr->tokens_per_s = gr->tokens_defined ? (double)gr->decode_steps * 1e9 / (double)(last - end) : 0.0;
    return !gpu && g->has_forward && g->fwd_end == NO_CALL;
}

/* ---- the steps of obs_phase_stats_compute ---------------------------------------- */

/* One labelled call: its counts, its range's span, its generation's marks. */
static void add_call(struct phase_work *w, struct obs_phase_stats *s, size_t i)
{
    const struct obs_call *c = &w->t->calls[i];
    struct range_acc *r = &w->ranges[c->phase];
    struct gen_acc *g = &w->gen[r->gen];
    const struct obs_gpu_time *gt;
    uint64_t b, e;

    if (w->key_first[r->key] == UINT64_MAX)
        w->key_first[r->key] = i;
    count_call(&s->by_gen[r->cell], c);
    count_call(&s->phases[r->key], c);
    r->calls++;
    if (r->step == 0 && c->kind == OBS_KIND_KERNEL)
        g->step0_kernels++;
    /* A graph launch in the decode outside any step replays steps. */
    if (r->step == UINT32_MAX && c->kind == OBS_KIND_GRAPH)
        g->graph_nodes += c->u.bytes;
    if (!s->gpu_time)
        add_wall_marks(g, r->step, c);
    gt = obs_call_gpu(w->t, c);
    if (s->gpu_time && gt == NULL) /* untimed in the GPU time base */
        return;
    b = s->gpu_time ? gt->begin : c->host_begin;
    e = s->gpu_time ? gt->end : c->host_end;
    span_add(&r->span, b, e);
    add_generation_span(g, r->step, c->kind == OBS_KIND_GRAPH, b, e);
}

/* OBS_GPU_TIME=steps: each range span counts for the range its calls'
 * final label names, as the spans of those calls would (a span of a range
 * with no step in the decode holds its graph launches: replayed steps). */
static void add_range_spans(struct phase_work *w, struct obs_phase_stats *s)
{
    const struct obs_trace *t = w->t;
    size_t i;
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *x = &t->range_spans[i];
        struct range_acc *r;
        if (x->flags & OBS_RANGE_SPAN_MIXED)
            s->mixed_spans++;
        if (x->range == OBS_NONE || x->range >= t->nphases)
            continue;
        r = &w->ranges[x->range];
        s->range_spans++;
        if (x->flags & OBS_RANGE_SPAN_RELABELLED)
            s->relabelled_spans++;
        span_add(&r->span, x->begin, x->end);
        add_generation_span(&w->gen[r->gen], r->step, 1, x->begin, x->end);
    }
}

/* Times: per range spans summed into their phase (per generation, all). */
static void sum_range_times(struct phase_work *w, struct obs_phase_stats *s)
{
    size_t i;
    for (i = 0; i < w->t->nphases; i++) {
        const struct range_acc *r = &w->ranges[i];
        struct obs_phase_row *row = &s->by_gen[r->cell], *all = &s->phases[r->key];
        if (r->calls == 0)
            continue;
        row->ranges++;
        all->ranges++;
        if (span_set(&r->span)) {
            row->time_ns += span_len(&r->span);
            row->timed = 1;
            all->time_ns += span_len(&r->span);
            all->timed = 1;
        }
    }
}

/* Per decode step: the envelope of its ranges' spans, their calls; rows
 * by thread, generation (w->gens is sorted by both), step. */
static int gather_step_rows(struct phase_work *w, struct obs_phase_stats *s)
{
    const struct obs_trace *t = w->t;
    uint64_t *keys = malloc((t->nphases ? t->nphases : 1) * sizeof *keys);
    size_t n = 0, i;
    if (keys == NULL)
        return -1;
    for (i = 0; i < t->nphases; i++) {
        const struct range_acc *r = &w->ranges[i];
        if (r->calls && r->step != UINT32_MAX && r->step != PREFILL_MARK)
            keys[n++] = (uint64_t)r->gen << 32 | r->step;
    }
    n = unique_u64(keys, n);
    s->steps = calloc(n ? n : 1, sizeof *s->steps);
    if (s->steps == NULL) {
        free(keys);
        return -1;
    }
    for (i = 0; i < n; i++) {
        s->steps[i].generation = (uint32_t)w->gens[keys[i] >> 32];
        s->steps[i].thread = t->threads[w->gens[keys[i] >> 32] >> 32].tid;
        s->steps[i].step = (uint32_t)keys[i];
    }
    {
        struct span *sp = malloc((n ? n : 1) * sizeof *sp);
        if (sp == NULL) {
            free(keys);
            return -1;
        }
        for (i = 0; i < n; i++)
            sp[i] = span_empty;
        for (i = 0; i < t->nphases; i++) {
            const struct range_acc *r = &w->ranges[i];
            size_t k;
            if (!r->calls || r->step == UINT32_MAX || r->step == PREFILL_MARK)
                continue;
            k = find_u64(keys, n, (uint64_t)r->gen << 32 | r->step);
            s->steps[k].calls += r->calls;
            if (span_set(&r->span))
                span_add(&sp[k], r->span.b, r->span.e);
        }
        for (i = 0; i < n; i++) {
            s->steps[i].timed = span_set(&sp[i]);
            s->steps[i].time_ns = span_len(&sp[i]);
        }
        free(sp);
    }
    s->nsteps = n;
    free(keys);
    return 0;
}

/* Decode steps per generation: distinct (generation, step) of the ranges
 * that label calls, plus the steps replayed from graphs. */
static int count_decode_steps(struct phase_work *w, struct obs_phase_stats *s)
{
    const struct obs_trace *t = w->t;
    uint64_t *steps = malloc(t->nphases * sizeof *steps);
    size_t n = 0, i;
    if (steps == NULL)
        return -1;
    for (i = 0; i < t->nphases; i++) {
        uint32_t step = obs_phase_step(t, (uint32_t)i);
        if (w->ranges[i].calls && in_iteration(t, (uint32_t)i))
            w->gen[w->ranges[i].gen].serving = 1;
        else if (w->ranges[i].calls && step != UINT32_MAX)
            steps[n++] = (uint64_t)w->ranges[i].gen << 32 | step;
    }
    qsort(steps, n, sizeof *steps, cmp_u64);
    for (i = 0; i < n; i++)
        if (i == 0 || steps[i] != steps[i - 1])
            s->gens[steps[i] >> 32].decode_steps++;
    free(steps);
    /* Steps replayed from graphs: their nodes over the kernels of one
     * step, as DECODE/STEP_0 of the same generation launched them. */
    for (i = 0; i < w->ngen; i++)
        if (w->gen[i].graph_nodes > 0 && w->gen[i].step0_kernels > 0)
            s->gens[i].decode_steps += (uint32_t)(w->gen[i].graph_nodes / w->gen[i].step0_kernels);
    return 0;
}

/* The phase rows in order of first call, each named by its first range
 * (w->order, w->rank). key_first values are distinct call indexes (a call
 * has one phase), so sorting them sorts the keys. */
static int order_phase_rows(struct phase_work *w, struct obs_phase_stats *s)
{
    const struct obs_trace *t = w->t;
    size_t nkey = w->nkey, n = 0, a;
    uint64_t *first = malloc((nkey ? nkey : 1) * sizeof *first);
    uint32_t *name_of = malloc((nkey ? nkey : 1) * sizeof *name_of);
    struct obs_phase_row *sorted = NULL;
    int rc = -1;

    w->order = malloc((nkey ? nkey : 1) * sizeof *w->order);
    w->rank = malloc((nkey ? nkey : 1) * sizeof *w->rank);
    if (first == NULL || name_of == NULL || w->order == NULL || w->rank == NULL)
        goto out;
    for (a = 0; a < nkey; a++) {
        s->phases[a].phase_id = w->keys[a];
        s->phases[a].generation = OBS_ALL_GENERATIONS;
        w->rank[a] = UINT32_MAX;
        name_of[a] = UINT32_MAX;
        if (w->key_first[a] != UINT64_MAX)
            first[n++] = w->key_first[a];
    }
    qsort(first, n, sizeof *first, cmp_u64);
    for (a = 0; a < n; a++) {
        w->order[a] = w->ranges[t->calls[first[a]].phase].key;
        w->rank[w->order[a]] = (uint32_t)a;
    }
    for (a = 0; a < t->nphases; a++) /* a phase's name: that of its first range */
        if (name_of[w->ranges[a].key] == UINT32_MAX)
            name_of[w->ranges[a].key] = (uint32_t)a;
    sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (sorted == NULL)
        goto out;
    for (a = 0; a < n; a++) {
        sorted[a] = s->phases[w->order[a]];
        sorted[a].phase = t->phases[name_of[w->order[a]]].phase;
    }
    free(s->phases);
    s->phases = sorted;
    s->nphases = n;
    rc = 0;
out:
    free(first);
    free(name_of);
    return rc;
}

/* The per-generation rows: generations ascending, then phases in the
 * order of the phase rows; each generation's totals. */
static int gather_generation_rows(struct phase_work *w, struct obs_phase_stats *s)
{
    const struct obs_trace *t = w->t;
    uint64_t *sk = malloc((w->ncell ? w->ncell : 1) * sizeof *sk);
    struct obs_phase_row *rows = NULL;
    size_t i, j = 0;
    if (sk == NULL)
        return -1;
    for (i = 0; i < w->ncell; i++) {
        uint32_t k = (uint32_t)(w->cells[i] & 0xffffffffu);
        if (w->rank[k] != UINT32_MAX && s->by_gen[i].calls > 0)
            sk[j++] = (w->cells[i] >> 32) << 32 | w->rank[k];
    }
    qsort(sk, j, sizeof *sk, cmp_u64);
    rows = malloc((j ? j : 1) * sizeof *rows);
    if (rows == NULL) {
        free(sk);
        return -1;
    }
    for (i = 0; i < j; i++) {
        size_t g = (size_t)(sk[i] >> 32), r = (size_t)(sk[i] & 0xffffffffu);
        struct obs_phase_row *row = &s->by_gen[find_u64(w->cells, w->ncell, (uint64_t)g << 32 | w->order[r])];
        struct obs_generation_row *gr = &s->gens[g];
        row->phase = s->phases[r].phase;
        row->phase_id = w->keys[w->order[r]];
        row->generation = (uint32_t)w->gens[g];
        row->thread = t->threads[w->gens[g] >> 32].tid;
        gr->calls += row->calls;
        gr->launches += row->launches;
        gr->kernels += row->kernels;
        gr->bytes += row->bytes;
        rows[s->nby_gen++] = *row;
    }
    free(sk);
    free(s->by_gen);
    s->by_gen = rows;
    return 0;
}

/* The generations that have calls, with their TTFT and tokens/s. */
static void finish_generations(struct phase_work *w, struct obs_phase_stats *s)
{
    size_t i;
    s->ngens = 0;
    for (i = 0; i < w->ngen; i++) {
        struct obs_generation_row *gr = &s->gens[i];
        if (gr->calls == 0)
            continue;
        gr->generation = (uint32_t)w->gens[i];
        gr->thread = w->t->threads[w->gens[i] >> 32].tid;
        generation_spans(gr, &w->gen[i]);
        gr->first_token = "step0";
        gr->ttft_to = OBS_TTFT_TO_STEP0;
        gr->sequences = 1;
        if (w->gen[i].serving) {
            /* a serving loop's batch, not a request: no TTFT, no steps (trace_serving.h) */
            gr->serving = 1;
            gr->first_token = OBS_FIRST_TOKEN_SERVING;
            gr->ttft_to = OBS_TTFT_TO_SERVING;
            s->gens[s->ngens++] = *gr;
            continue;
        }
        if (w->gen[i].prompt_read_end != 0)
            generation_rates_token(gr, &w->gen[i], s->gpu_time);
        else if (s->gpu_time)
            generation_rates_gpu(gr);
        else if (generation_rates_host(gr, &w->gen[i]))
            s->unbounded_steps++;
        /* The prompt's token is made but not read back (docs/phases-report.md). */
        if (w->gen[i].prompt_read_end == 0 && !w->gen[i].step0_read && w->gen[i].reads_back &&
            generation_ttft_forward(gr, w, &w->gen[i], s->gpu_time))
            s->unbounded_forwards++;
        if (gr->first_token[0] == 's' && gr->tokens_defined) {
            gr->steps_defined = 1;
            gr->steps_per_s = gr->tokens_per_s;
            gr->itl_ms = 1e3 / gr->tokens_per_s;
        }
        s->gens[s->ngens++] = *gr;
    }
}

/* Bests: over the generations with at least two decode steps when there
 * are any (a one-step generation, like the workload's warm-up, has no
 * steady rate and a lighter prefill), else over all. */
static void choose_bests(struct obs_phase_stats *s)
{
    size_t i, best_n = 0;
    for (i = 0; i < s->ngens; i++)
        if (s->gens[i].decode_steps >= 2)
            best_n++;
    for (i = 0; i < s->ngens; i++) {
        struct obs_generation_row *gr = &s->gens[i];
        gr->in_best = gr->serving ? 0 : best_n ? gr->decode_steps >= 2 : 1;
        s->serving_gens += gr->serving;
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
}

int obs_phase_stats_compute(const struct obs_trace *t, struct obs_phase_stats *s)
{
    struct phase_work w = {.t = t};
    size_t i;
    int rc = -1;

    memset(s, 0, sizeof *s);
    s->gpu_steps = t->ngpu == 0 && t->nrange_spans > 0;
    s->gpu_time = t->ngpu > 0 || s->gpu_steps;
    s->time_base = s->gpu_time ? "gpu" : "host";
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase == OBS_NONE)
            s->unlabelled_calls++;
    s->labelled_calls = t->ncalls - s->unlabelled_calls;
    if (t->nphases == 0 || s->labelled_calls == 0)
        return 0;
    if (index_ranges(&w) != 0 || alloc_accumulators(&w, s) != 0)
        goto out;
    for (i = 0; i < t->ncalls; i++) /* the one pass over the calls */
        if (t->calls[i].phase != OBS_NONE)
            add_call(&w, s, i);
    if (s->gpu_steps)
        add_range_spans(&w, s);
    sum_range_times(&w, s);
    if (find_token_reads(&w) != 0 || find_prompt_forwards(&w) != 0 || count_decode_steps(&w, s) != 0 || order_phase_rows(&w, s) != 0 ||
        gather_generation_rows(&w, s) != 0 || gather_step_rows(&w, s) != 0)
        goto out;
    finish_generations(&w, s);
    choose_bests(s);
    rc = 0;
out:
    work_free(&w);
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
        fprintf(out, ",%llu,%llu,%llu,%llu,%d,%u,%s,", (unsigned long long)g->calls, (unsigned long long)g->launches,
                (unsigned long long)g->kernels, (unsigned long long)g->bytes, g->in_best, g->thread, g->first_token);
        if (g->steps_defined)
            fprintf(out, "%.3f", g->steps_per_s);
        fprintf(out, ",%u,", g->sequences);
        if (g->steps_defined)
            fprintf(out, "%.6f", g->itl_ms);
        fprintf(out, ",%s\n", g->ttft_to);
    }
    obs_phase_stats_free(&s);
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

int obs_report_steps(const struct obs_trace *t, FILE *out, int csv)
{
    struct obs_phase_stats s;
    size_t i;
    int multithread = 0;
    if (obs_phase_stats_compute(t, &s) != 0) {
        errno = ENOMEM;
        return -1;
    }
    for (i = 1; i < s.nsteps; i++)
        multithread |= s.steps[i].thread != s.steps[0].thread;
    if (csv)
        fputs(OBS_STEPS_CSV_HEADER "\n", out);
    else
        fprintf(out, "\nDecode steps (%s; a step's time is its ranges' first begin to last end)\n%s%11s %8s %10s %6s\n",
                s.gpu_steps ? "GPU time per phase range and stream (OBS_GPU_TIME=steps)"
                : s.gpu_time ? "GPU time"
                             : "host API time",
                multithread ? "     Thread " : "", "Generation", "Step", "Time (ms)", "Calls");
    for (i = 0; i < s.nsteps; i++) {
        const struct obs_step_row *r = &s.steps[i];
        if (csv) {
            fprintf(out, "%u,%u,", r->generation, r->step);
            if (r->timed)
                fprintf(out, "%.6f", (double)r->time_ns / 1e6);
            fprintf(out, ",%s,%llu,%u\n", s.time_base, (unsigned long long)r->calls, r->thread);
        } else {
            char ms[32] = "-";
            if (r->timed)
                snprintf(ms, sizeof ms, "%.3f", (double)r->time_ns / 1e6);
            if (multithread)
                fprintf(out, " %10u", r->thread);
            fprintf(out, " %10u %8u %10s %6llu\n", r->generation, r->step, ms, (unsigned long long)r->calls);
        }
    }
    if (!csv && s.nsteps == 0)
        fprintf(out, " no decode steps\n");
    obs_phase_stats_free(&s);
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}
