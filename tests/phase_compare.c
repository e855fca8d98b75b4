/* Phases of every launch in three views: see phase_compare.h. */
#include "phase_compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap/basic.h"
#include "trace/trace_layer_parts.h"
#include "trace/trace_serving.h"

#define MAX_DEPTH 32
#define MAX_THREADS 64

struct range_stack {
    char names[MAX_DEPTH][32];
    int depth;
};

struct thread_state {
    struct range_stack truth, live;
    long truth_gen, live_gen; /* PREFILL ranges pushed so far - 1 */
    int live_pending;         /* a live PREFILL pushed, no launch outside a capture in it yet */
    int truth_layer;          /* the layer the truth's marks say it is in, -1: none */
    int truth_part;           /* the EMBED and HEAD marks: OBS_LAYER_PART_*, reset by a range */
    uint32_t forwards;        /* the truth's FORWARD marks so far */
};

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (p == NULL)
        bail("out of memory");
    return p;
}

static void stack_push(struct range_stack *s, const char *name)
{
    if (s->depth < MAX_DEPTH)
        snprintf(s->names[s->depth], sizeof s->names[0], "%s", name);
    s->depth++;
}

static void stack_pop(struct range_stack *s)
{
    if (s->depth > 0)
        s->depth--;
}

/* The label the open ranges give a launch. */
static struct pc_label label_of(const struct range_stack *s, long gen, int *captured)
{
    struct pc_label l = {"", PC_NO_STEP, PC_NO_GEN};
    int i, top = s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH;
    if (captured != NULL)
        *captured = 0;
    for (i = top - 1; i >= 0; i--) {
        const char *n = s->names[i];
        if (captured != NULL && strcmp(n, "GRAPH_CAPTURE") == 0)
            *captured = 1;
        if (l.phase[0] == '\0') {
            if (strcmp(n, "PREFILL") == 0 || strcmp(n, "KV_GATHER") == 0)
                snprintf(l.phase, sizeof l.phase, "%s", n);
            else if (strncmp(n, "DECODE/STEP_", 12) == 0 || strcmp(n, "DECODE/STEADY") == 0)
                snprintf(l.phase, sizeof l.phase, "DECODE");
            else if (strncmp(n, "ITERATION/", 10) == 0)
                snprintf(l.phase, sizeof l.phase, "ITERATION");
        }
        if (l.step == PC_NO_STEP && strncmp(n, "DECODE/STEP_", 12) == 0)
            l.step = strtol(n + 12, NULL, 10);
        if (l.step == PC_NO_STEP && strncmp(n, "ITERATION/", 10) == 0)
            l.step = strtol(n + 10, NULL, 10);
    }
    if (l.phase[0] != '\0')
        l.gen = gen;
    return l;
}

/* The innermost LAYER/k range open, -1: none. */
static int layer_of(const struct range_stack *s)
{
    int i, top = s->depth < MAX_DEPTH ? s->depth : MAX_DEPTH;
    for (i = top - 1; i >= 0; i--)
        if (strncmp(s->names[i], "LAYER/", 6) == 0)
            return atoi(s->names[i] + 6);
    return -1;
}

static uint32_t intern_name(struct pc_run *run, const char *name)
{
    static size_t last;
    size_t i;
    if (last < run->nnames && strcmp(run->names[last], name) == 0)
        return (uint32_t)last;
    for (i = 0; i < run->nnames; i++)
        if (strcmp(run->names[i], name) == 0)
            return (uint32_t)(last = i);
    run->names = xrealloc(run->names, (run->nnames + 1) * sizeof *run->names);
    run->names[run->nnames] = strdup(name);
    if (run->names[run->nnames] == NULL)
        bail("out of memory");
    last = run->nnames;
    return (uint32_t)run->nnames++;
}

static struct thread_state states[MAX_THREADS];

static uint32_t thread_index(struct pc_run *run, long tid)
{
    size_t i;
    for (i = 0; i < run->ntids; i++)
        if (run->tids[i] == tid)
            return (uint32_t)i;
    if (run->ntids == MAX_THREADS)
        bail("phase_compare: more than %d threads in the log", MAX_THREADS);
    run->tids = xrealloc(run->tids, (run->ntids + 1) * sizeof *run->tids);
    run->tids[run->ntids] = tid;
    memset(&states[run->ntids], 0, sizeof states[0]);
    states[run->ntids].truth_gen = states[run->ntids].live_gen = -1;
    states[run->ntids].truth_layer = -1;
    return (uint32_t)run->ntids++;
}

/* Split a log line at tabs (in place): fields, their count. */
static int split_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        f[n++] = p;
        p = strchr(p, '\t');
        if (p == NULL)
            break;
        *p++ = '\0';
    }
    return n;
}

/* fw_truth.py's mark after an ITERATION/k push: what the iteration carries. */
static void iteration_mark(struct pc_run *run, const char *text, uint32_t ti, const struct thread_state *st)
{
    struct pc_iteration it;
    struct pc_label l = label_of(&st->truth, st->truth_gen, NULL);
    memset(&it, 0, sizeof it);
    if (strcmp(l.phase, "ITERATION") != 0 ||
        sscanf(text, "ITERATION kind=%7s tokens=%ld requests=%ld prompts=%ld decodes=%ld sampled=%ld", it.kind,
               &it.tokens, &it.requests, &it.prompts, &it.decodes, &it.sampled) != 6)
        bail("a bad ITERATION mark in the truth: %s", text);
    it.thread = ti;
    it.gen = l.gen;
    it.k = l.step;
    run->iters = xrealloc(run->iters, (run->niters + 1) * sizeof *run->iters);
    run->iters[run->niters++] = it;
}

static void timing_line(struct pc_run *run, const char *text, long tid)
{
    struct pc_timing t = {tid, 0, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const char *marks = strstr(text, " marks="), *end = strstr(text, " prompt_end_ns="),
               *last = strstr(text, " last_forward_end_ns="), *first_step = strstr(text, " first_step_ns=");
    if (sscanf(text, "gen=%ld steps=%ld ttft_ns=%lld steady_ns=%lld", &t.gen, &t.steps, &t.ttft_ns,
               &t.steady_ns) != 4)
        return;
    if (marks != NULL && sscanf(marks, " marks=%llu,%llu,%llu,%llu,%llu", &t.mark_prompt, &t.mark_prefill,
                                &t.mark_prefill_read, &t.mark_step0_read, &t.mark_last_read) != 5)
        t.mark_prompt = t.mark_prefill = t.mark_prefill_read = t.mark_step0_read = t.mark_last_read = 0;
    if (end != NULL)
        t.mark_prompt_end = strtoull(end + 15, NULL, 10);
    if (last != NULL)
        t.mark_last_forward_end = strtoull(last + 21, NULL, 10);
    if (first_step != NULL)
        t.mark_first_step = strtoull(first_step + 15, NULL, 10);
    t.ttft_forward = strstr(text, " ttft=forward") != NULL;
    run->timing = xrealloc(run->timing, (run->ntiming + 1) * sizeof *run->timing);
    run->timing[run->ntiming++] = t;
}

size_t pc_read_log(const char *log_path, struct pc_run *run)
{
    FILE *f = fopen(log_path, "r");
    char *line = NULL;
    size_t cap = 0, lcap = 0;
    ssize_t len;

    memset(run, 0, sizeof *run);
    if (f == NULL)
        return 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        char *fl[8];
        int nf, captured;
        long tid = 0;
        uint32_t ti;
        struct thread_state *st;
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        nf = split_fields(line, fl, 8);
        if (nf < 6)
            continue;
        if (nf >= 7) {
            tid = strtol(fl[6], NULL, 10);
            run->has_tid = 1;
        }
        ti = thread_index(run, tid);
        st = &states[ti];
        if (strcmp(fl[1], "range") == 0) {
            int truth = strcmp(fl[3], "-") == 0, live = strcmp(fl[3], "obsshim") == 0;
            struct range_stack *s = truth ? &st->truth : live ? &st->live : NULL;
            if (s == NULL)
                continue;
            if (truth && strstr(fl[0], "Mark") != NULL) { /* the layer marks of llm_replay and fw_truth.py */
                if (strncmp(fl[2], "LAYER/", 6) == 0)
                    st->truth_layer = atoi(fl[2] + 6), st->truth_part = OBS_LAYER_PART_NONE;
                else if (strcmp(fl[2], "LAYER_END") == 0 || strcmp(fl[2], "FORWARD_END") == 0)
                    st->truth_layer = -1;
                else if (strcmp(fl[2], "EMBED") == 0)
                    st->truth_part = OBS_LAYER_PART_EMBED;
                else if (strcmp(fl[2], "HEAD") == 0)
                    st->truth_part = OBS_LAYER_PART_HEAD;
                else if (strcmp(fl[2], "FORWARD") == 0)
                    st->forwards++;
                else if (strncmp(fl[2], "ITERATION ", 10) == 0)
                    iteration_mark(run, fl[2], ti, st);
                continue;
            }
            if (truth && (strstr(fl[0], "RangePush") != NULL || strstr(fl[0], "RangePop") != NULL)) {
                /* a prompt or step begins or ends: no EMBED or HEAD (KV_GATHER is inside layers); other lines
                 * of domain "-" (the NVTX injection's start, a library's nvtxDomainCreateA) change nothing */
                const char *name = strstr(fl[0], "RangePop") == NULL ? fl[2]
                                   : s->depth > 0 && s->depth <= MAX_DEPTH ? s->names[s->depth - 1]
                                                                            : "";
                if (strcmp(name, "KV_GATHER") != 0)
                    st->truth_part = OBS_LAYER_PART_NONE;
            }
            if (strstr(fl[0], "RangePush") != NULL) {
                stack_push(s, fl[2]);
                if (strcmp(fl[2], "PREFILL") == 0 || strcmp(fl[2], "ITERATION/0") == 0) {
                    if (truth) {
                        st->truth_gen++;
                    } else {
                        run->live_prefill_uncounted += st->live_pending;
                        st->live_pending = 1;
                    }
                }
            } else if (strstr(fl[0], "RangePop") != NULL) {
                stack_pop(s);
            }
            continue;
        }
        if (strcmp(fl[1], "timing") == 0) {
            timing_line(run, fl[2], tid);
            continue;
        }
        if (strcmp(fl[1], "kernel") != 0 && strcmp(fl[1], "graph") != 0)
            continue;
        if (run->n == lcap) {
            lcap = lcap ? lcap * 2 : 4096;
            run->l = xrealloc(run->l, lcap * sizeof *run->l);
        }
        memset(&run->l[run->n], 0, sizeof run->l[0]);
        run->l[run->n].name = intern_name(run, fl[2]);
        run->l[run->n].thread = ti;
        run->l[run->n].truth = label_of(&st->truth, st->truth_gen, &captured);
        run->l[run->n].captured = (uint8_t)captured;
        if (!captured && st->live_pending) {
            st->live_gen++;
            st->live_pending = 0;
        }
        run->l[run->n].live = label_of(&st->live, st->live_gen, NULL);
        run->l[run->n].truth_layer = st->truth_layer;
        run->l[run->n].truth_part = (uint8_t)st->truth_part;
        run->l[run->n].forward = st->forwards;
        run->l[run->n].live_layer = layer_of(&st->live);
        run->l[run->n].trace_layer = -1;
        run->l[run->n].trace = (struct pc_label){"", PC_NO_STEP, PC_NO_GEN};
        run->n++;
    }
    for (size_t t = 0; t < run->ntids; t++)
        run->live_prefill_uncounted += states[t].live_pending;
    free(line);
    fclose(f);
    return run->n;
}

static struct pc_label trace_label(const struct obs_trace *t, const struct obs_call *c, uint8_t *relabelled)
{
    struct pc_label lab = {"", PC_NO_STEP, PC_NO_GEN};
    *relabelled = 0;
    if (c->phase != OBS_NONE) {
        uint32_t step = obs_phase_step(t, c->phase), gen = t->phases[c->phase].generation;
        snprintf(lab.phase, sizeof lab.phase, "%s", t->phases[c->phase].phase);
        lab.step = step == UINT32_MAX ? PC_NO_STEP : (long)step;
        lab.gen = gen == UINT32_MAX ? PC_NO_GEN : (long)gen;
        *relabelled = t->phases[c->phase].relabel;
    }
    return lab;
}

static int name_differs(const struct obs_trace *t, const struct obs_call *c, const char *name)
{
    const char *demangled = obs_call_kernel_name(t, c);
    if (c->kind != OBS_KIND_KERNEL)
        return 0;
    return strcmp(demangled ? demangled : "", name) != 0 && t->kernels[c->kernel].mangled != NULL &&
           strcmp(t->kernels[c->kernel].mangled, name) != 0;
}

void pc_graph_node_layers(const struct obs_trace *t, const struct pc_run *run, struct pc_graph_score *s)
{
    size_t i, g, next = 0, *cap;
    uint32_t thread = UINT32_MAX;
    memset(s, 0, sizeof *s);
    cap = malloc((run->n ? run->n : 1) * sizeof *cap); /* the captured launches, in log order */
    if (cap == NULL)
        bail("out of memory");
    for (i = 0; i < run->n; i++)
        if (run->l[i].captured) {
            if (thread != UINT32_MAX && run->l[i].thread != thread) {
                free(cap);
                s->captured = 0;
                return;
            }
            thread = run->l[i].thread;
            cap[s->captured++] = i;
        }
    for (g = 0; g < t->ngraphs && next + t->graphs[g].kernel_count <= s->captured; g++) {
        const struct obs_graph *gr = &t->graphs[g];
        size_t k;
        if (gr->kernel_count == 0)
            continue;
        if (gr->nnodes != gr->kernel_count) { /* no order kept (cut, incomplete): its launches are skipped */
            next += gr->kernel_count;
            continue;
        }
        s->execs++;
        for (k = 0; k < gr->nnodes; k++) {
            const struct pc_launch *l = &run->l[cap[next + k]];
            const struct obs_graph_node *nd = &gr->nodes[k];
            const char *mangled = t->kernels[nd->kernel].mangled, *demangled = t->kernels[nd->kernel].demangled;
            int layer = nd->layer == OBS_NO_LAYER ? -1 : (int)nd->layer;
            s->nodes++;
            s->in_layers += l->truth_layer >= 0;
            s->right += layer == l->truth_layer;
            s->names_differ += !(mangled != NULL && strcmp(mangled, run->names[l->name]) == 0) &&
                               !(demangled != NULL && strcmp(demangled, run->names[l->name]) == 0);
        }
        next += gr->nnodes;
    }
    free(cap);
}

size_t pc_trace_labels(const struct obs_trace *t, struct pc_run *run, size_t *name_mismatch)
{
    size_t i, k = 0, *cursor, **lists, *counts;
    uint8_t *part = obs_layer_parts(t);
    *name_mismatch = 0;
    if (part == NULL)
        bail("out of memory");
    /* Each thread's log launches in order (one list without the tid column). */
    counts = calloc(run->ntids + 1, sizeof *counts);
    cursor = calloc(run->ntids + 1, sizeof *cursor);
    lists = calloc(run->ntids + 1, sizeof *lists);
    if (counts == NULL || cursor == NULL || lists == NULL)
        bail("out of memory");
    for (i = 0; i < run->n; i++)
        counts[run->has_tid ? run->l[i].thread : 0]++;
    for (i = 0; i <= run->ntids; i++)
        lists[i] = xrealloc(NULL, (counts[i] ? counts[i] : 1) * sizeof **lists);
    memset(counts, 0, (run->ntids + 1) * sizeof *counts);
    for (i = 0; i < run->n; i++) {
        size_t g = run->has_tid ? run->l[i].thread : 0;
        lists[g][counts[g]++] = i;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        size_t g = 0, j;
        struct pc_launch *l;
        if (c->kind != OBS_KIND_KERNEL && c->kind != OBS_KIND_GRAPH)
            continue;
        k++;
        if (run->has_tid) {
            long tid = (long)t->threads[c->thread].tid;
            for (g = 0; g < run->ntids && run->tids[g] != tid; g++)
                ;
            if (g == run->ntids)
                continue; /* a thread the log does not know */
        }
        if (cursor[g] >= counts[g])
            continue;
        j = lists[g][cursor[g]++];
        l = &run->l[j];
        l->trace = trace_label(t, c, &l->relabelled);
        l->trace_layer = c->layer == OBS_NO_LAYER ? -1 : (int)c->layer;
        l->trace_part = part[i];
        l->in_trace = 1;
        l->trace_call = i;
        if (name_differs(t, c, run->names[l->name]))
            (*name_mismatch)++;
    }
    for (i = 0; i <= run->ntids; i++)
        free(lists[i]);
    free(lists);
    free(counts);
    free(part);
    free(cursor);
    return k;
}

int pc_same(const struct pc_label *a, const struct pc_label *b, int with_gen)
{
    if (strcmp(a->phase, b->phase) != 0)
        return 0;
    if (a->phase[0] == '\0')
        return 1;
    return a->step == b->step && (!with_gen || a->gen == b->gen);
}

const char *pc_label_text(const struct pc_label *l, char *buf, size_t len)
{
    char step[24] = "", gen[24] = "";
    if (l->step != PC_NO_STEP)
        snprintf(step, sizeof step, "/%ld", l->step);
    if (l->gen != PC_NO_GEN)
        snprintf(gen, sizeof gen, " gen %ld", l->gen);
    snprintf(buf, len, "%s%s%s", l->phase[0] ? l->phase : "(none)", step, gen);
    return buf;
}

void pc_embed_head(const struct pc_run *run, struct pc_part_score *s, const char *what, size_t show)
{
    size_t i, j, k, th, nl, shown = 0;
    size_t *list = malloc((run->n ? run->n : 1) * sizeof *list);
    char a[64], b[64];
    static const char *const part_name[] = {"none", "EMBED", "HEAD"};
    if (list == NULL)
        bail("out of memory");
    memset(s, 0, sizeof *s);
    for (th = 0; th < (run->ntids ? run->ntids : 1); th++) {
        for (i = nl = 0; i < run->n; i++) /* this thread's launches in order */
            if (run->l[i].thread == th)
                list[nl++] = i;
        for (i = 0; i < nl; i = j) {
            const struct pc_launch *a0 = &run->l[list[i]];
            int layered = 0, capture = 0;
            /* the instance as the trace labels it (its parts follow those labels): the next launches with
             * a0's step and generation, PREFILL or not */
            for (j = i; j < nl && run->l[list[j]].trace.gen == a0->trace.gen &&
                        run->l[list[j]].trace.step == a0->trace.step &&
                        (strcmp(run->l[list[j]].trace.phase, "PREFILL") == 0) ==
                            (strcmp(a0->trace.phase, "PREFILL") == 0);
                 j++) {
                layered |= run->l[list[j]].truth_layer >= 0 && !run->l[list[j]].captured;
                capture |= run->l[list[j]].captured;
            }
            for (k = i; k < j; k++) {
                const struct pc_launch *l = &run->l[list[k]];
                int want = layered && l->truth_layer < 0 && a0->truth.phase[0] ? l->truth_part : OBS_LAYER_PART_NONE;
                if (l->captured || !l->in_trace)
                    continue;
                if (capture) {
                    s->by_capture++;
                    continue;
                }
                if (!pc_same(&l->truth, &l->trace, 1)) {
                    s->other_label++;
                    continue;
                }
                s->scored++;
                s->embed += want == OBS_LAYER_PART_EMBED;
                s->head += want == OBS_LAYER_PART_HEAD;
                s->in_layers += l->truth_layer >= 0;
                s->right += l->trace_part == want;
                s->outside_right += want != OBS_LAYER_PART_NONE && l->trace_part == want;
                if (l->trace_part != want && shown++ < show)
                    diag("%s: launch %zu %.60s (%s; trace %s): truth %s, trace %s", what, list[k],
                         run->names[l->name], pc_label_text(&l->truth, a, sizeof a),
                         pc_label_text(&l->trace, b, sizeof b), part_name[want % 3], part_name[l->trace_part % 3]);
            }
        }
    }
    free(list);
}

/* The row of the view whose calls hold call i (its thread's, between its
 * first and last call: seq is the index in obs_trace.calls), or SIZE_MAX. */
static size_t row_of_call(const struct obs_trace *t, const struct obs_serving_stats *v, size_t i)
{
    size_t r;
    for (r = 0; r < v->nrows; r++)
        if (v->rows[r].thread_index == t->calls[i].thread && i >= v->rows[r].first_seq && i <= v->rows[r].last_seq)
            return r;
    return SIZE_MAX;
}

static int kind_index(const char *kind)
{
    return strcmp(kind, "prompt") == 0 ? 0 : strcmp(kind, "mixed") == 0 ? 1 : 2;
}

int pc_serving_score(const struct obs_trace *t, const struct pc_run *run, struct pc_serving_score *s, const char *what,
                     size_t show)
{
    struct obs_serving_stats v;
    size_t i, k, *row_launches, shown = 0;
    memset(s, 0, sizeof *s);
    if (obs_serving_compute(t, NULL, &v) != 0)
        return -1;
    s->rows = v.nrows;
    s->gap_share = v.gap_share;
    s->gaps = v.gaps.n;
    s->gap_p50_ms = v.gaps.p50_ns / 1e6;
    s->gap_p99_ms = v.gaps.p99_ns / 1e6;
    row_launches = calloc(v.nrows + 1, sizeof *row_launches);
    if (row_launches == NULL)
        bail("out of memory");
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].kind == OBS_KIND_KERNEL || t->calls[i].kind == OBS_KIND_GRAPH) {
            size_t r = row_of_call(t, &v, i);
            if (r != SIZE_MAX)
                row_launches[r]++;
        }
    for (k = 0; k < run->niters; k++) {
        const struct pc_iteration *it = &run->iters[k];
        size_t n = 0, row = SIZE_MAX, rows_hit = 0;
        int outside = 0;
        for (i = 0; i < run->n; i++) {
            const struct pc_launch *l = &run->l[i];
            size_t r;
            if (l->thread != it->thread || l->captured || strcmp(l->truth.phase, "ITERATION") != 0 ||
                l->truth.gen != it->gen || l->truth.step != it->k)
                continue;
            n++;
            r = l->in_trace ? row_of_call(t, &v, l->trace_call) : SIZE_MAX;
            if (r == SIZE_MAX) {
                outside = 1;
            } else if (r != row) { /* a row other than the last launch's */
                rows_hit++;
                row = r;
            }
        }
        if (n == 0)
            continue;
        s->truth++;
        s->by_kind[kind_index(it->kind)]++;
        if (outside || rows_hit != 1) {
            s->split++;
        } else if (row_launches[row] != n) {
            s->merged++;
        } else {
            const struct obs_iteration_row *w = &v.rows[row];
            int kind = strcmp(obs_iteration_kind_name(w->kind), it->kind) == 0;
            int tokens = w->has_tokens && (long)w->tokens == it->tokens;
            int seqs = w->has_sequences && (long)w->sequences == it->sampled;
            s->exact++;
            s->kinds_right += kind;
            s->tokens_right += tokens;
            s->sequences_right += seqs;
            if ((!kind || !tokens || !seqs) && shown++ < show)
                diag("%s: iteration %ld/%ld (thread %ld): truth %s, %ld tokens, %ld requests (%ld in their prompt, "
                     "%ld decoding), %ld sampled; the view %s, %s%llu tokens, %s%llu sequences",
                     what, it->gen, it->k, run->tids[it->thread], it->kind, it->tokens, it->requests, it->prompts,
                     it->decodes, it->sampled, obs_iteration_kind_name(w->kind), w->has_tokens ? "" : "no ",
                     (unsigned long long)w->tokens, w->has_sequences ? "" : "no ", (unsigned long long)w->sequences);
            continue;
        }
        if (shown++ < show)
            diag("%s: iteration %ld/%ld (thread %ld, %zu launches): %s", what, it->gen, it->k, run->tids[it->thread], n,
                 outside || rows_hit != 1 ? "split over rows of the view (or outside every row)"
                                          : "shares its row with other launches");
    }
    free(row_launches);
    obs_serving_free(&v);
    return 0;
}

void pc_run_free(struct pc_run *run)
{
    size_t i;
    for (i = 0; i < run->nnames; i++)
        free(run->names[i]);
    free(run->names);
    free(run->l);
    free(run->tids);
    free(run->timing);
    free(run->iters);
    memset(run, 0, sizeof *run);
}
