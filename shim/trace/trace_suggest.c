/* suggest-phases: see trace_suggest.h. The rule syntax is the phase
 * engine's (shim/phases/phase_rules.h): PHASE=pattern,pattern;... with PHASE one
 * of PREFILL, DECODE, KV_GATHER; patterns are globs over kernel base
 * names, "memcpy:KIND" or "memset"; the first pattern that matches wins;
 * "iter:" selectors choose whole iterations (launches between two host
 * delimiters) for a phase. */
#include "trace_suggest.h"
#include "kernel_base_name.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NPH 3 /* the phases a rule can name, in the order rules are printed */
static const char *const rule_phases[NPH] = {"PREFILL", "KV_GATHER", "DECODE"};

#define ITEM_MAX 256 /* a base name longer than this is cut (and then not used) */

struct item {
    char name[ITEM_MAX];
    int is_kernel; /* else a copy direction or memset */
    int usable;    /* can be written in a rule */
    uint64_t count[NPH], other, openers;
    int phase; /* the phase it goes to, -1 none */
};

static int rule_phase(const char *phase)
{
    int i;
    for (i = 0; i < NPH; i++)
        if (strcasecmp(phase, rule_phases[i]) == 0)
            return i;
    return -1;
}

static int usable_text(const char *s)
{
    if (s[0] == '\0' || strlen(s) >= 128) /* the engine's glob limit */
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || strchr("*?,;='\"\\", *s))
            return 0;
    return 1;
}

static int cmp_name(const void *a, const void *b)
{
    const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
    return strcmp(x->name, y->name);
}

static int starts_with(const char *s, const char *prefix, size_t n)
{
    return strncmp(s, prefix, n) == 0;
}

/* The shortest prefix of it->name ending at '_' that no foreign kernel
 * item starts with (foreign: kernel items other than those of `phase`, or
 * all but `it` itself when phase < 0), as "prefix*"; else the exact name. */
static void glob_for(const struct item *items, size_t n, const struct item *it, int phase, char *out, size_t len)
{
    size_t cut, k;
    for (cut = 1; it->name[cut - 1]; cut++) {
        int safe = 1;
        if (it->name[cut - 1] != '_')
            continue;
        for (k = 0; k < n && safe; k++) {
            const struct item *f = &items[k];
            int foreign = phase >= 0 ? f->phase != phase : f != it;
            if (f->is_kernel && foreign && starts_with(f->name, it->name, cut))
                safe = 0;
        }
        if (safe) {
            snprintf(out, len, "%.*s*", (int)cut, it->name);
            return;
        }
    }
    snprintf(out, len, "%s", it->name);
}

struct step_key {
    uint64_t key;   /* generation << 32 | step */
    uint64_t first; /* seq of the first call of a range of that step */
};

static int cmp_step_key(const void *a, const void *b)
{
    const struct step_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* ---- iteration selectors: prefill and decode running the same kernels ---- */

/* An iteration: a thread's launches between two host delimiters, as the
 * engine sees them (a *Synchronize other than a stream waiting for an
 * event, or a synchronous DtoH/default copy). */
struct iteration {
    uint32_t thread, gen;
    int phase;        /* rule phase of its first launch's range, -1 none */
    long item;        /* its first launch's kernel item, -1 for a graph launch or no name */
    uint64_t threads; /* grid x block threads of the first launch */
    int after_htod;   /* a host-to-device copy came since the delimiter */
    int prompt_first; /* a PREFILL iteration that does not continue the previous one (a prompt's first) */
    int selected;     /* a selector gives it PREFILL */
};

static int is_delimiter(const struct obs_call *c)
{
    const char *api = obs_api_name(c->api);
    unsigned d = obs_call_direction(c);
    if (c->kind == OBS_KIND_SYNC)
        return strstr(api, "WaitEvent") == NULL;
    if (c->kind == OBS_KIND_MEMCPY)
        return strstr(api, "Async") == NULL && (d == OBS_DIR_DTOH || d == OBS_DIR_DEFAULT);
    return 0;
}

static uint64_t call_threads(const struct obs_call *c)
{
    uint64_t grid = (uint64_t)c->u.grid.x * c->u.grid.y * c->u.grid.z, block, threads;
    block = (uint64_t)c->block_x * c->block_y * c->block_z;
    return __builtin_mul_overflow(grid, block, &threads) ? UINT64_MAX : threads;
}

/* Split each thread's calls into iterations; iter_of[i]: the iteration
 * call i belongs to (OBS_NONE outside any). */
static int find_iterations(const struct obs_trace *t, const long *kernel_item, const int *range_phase,
                           struct iteration **out, size_t *nout, uint32_t *iter_of)
{
    uint32_t *cur = malloc((t->nthreads + 1) * sizeof *cur);
    unsigned char *htod = calloc(t->nthreads + 1, 1);
    struct iteration *its = NULL;
    size_t n = 0, cap = 0, i;
    if (cur == NULL || htod == NULL)
        goto fail;
    for (i = 0; i <= t->nthreads; i++)
        cur[i] = OBS_NONE;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t th = c->thread < t->nthreads ? c->thread : (uint32_t)t->nthreads;
        iter_of[i] = OBS_NONE;
        if (c->flags & OBS_CALL_NESTED) /* the engine does not see those */
            continue;
        if ((c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) && cur[th] == OBS_NONE) {
            struct iteration *it;
            const struct iteration *prev = NULL;
            size_t k;
            if (n == cap) {
                struct iteration *grown = realloc(its, (cap = cap ? 2 * cap : 256) * sizeof *its);
                if (grown == NULL)
                    goto fail;
                its = grown;
            }
            for (k = n; k > 0 && prev == NULL; k--) /* the thread's previous iteration */
                if (its[k - 1].thread == th)
                    prev = &its[k - 1];
            it = &its[n];
            memset(it, 0, sizeof *it);
            it->thread = th;
            it->phase = c->phase != OBS_NONE ? range_phase[c->phase] : -1;
            it->gen = c->phase != OBS_NONE ? t->phases[c->phase].generation : 0;
            it->item = c->kind == OBS_KIND_KERNEL && c->kernel ? kernel_item[c->kernel] : -1;
            it->threads = c->kind == OBS_KIND_KERNEL ? call_threads(c) : 0;
            it->after_htod = htod[th];
            it->prompt_first = it->phase == 0 && !(prev && prev->phase == 0 && prev->gen == it->gen);
            cur[th] = (uint32_t)n++;
        }
        iter_of[i] = cur[th];
        if (c->kind == OBS_KIND_MEMCPY && obs_call_direction(c) == OBS_DIR_HTOD)
            htod[th] = 1;
        if (is_delimiter(c)) {
            cur[th] = OBS_NONE;
            htod[th] = 0;
        }
    }
    free(cur);
    free(htod);
    *out = its;
    *nout = n;
    return 0;
fail:
    free(cur);
    free(htod);
    free(its);
    return -1;
}

/* `iter:NAME[threads>=T]` selectors for the iterations `want` picks out
 * (want: 1 all PREFILL iterations, 2 those that continue a prompt), one
 * per first kernel, T above every other non-PREFILL iteration starting
 * with that kernel and at most the smallest wanted one (the smallest
 * power of two in that range, which reads well). Appends to sel; 0 when
 * it separates them, -1 when it cannot. */
static int threads_selectors(const struct iteration *its, size_t n, int want, const struct item *items, char *sel,
                             size_t len, char *why, size_t whylen)
{
    long firsts[4];
    size_t nfirsts = 0, i, k;
    for (i = 0; i < n; i++) {
        if (its[i].phase != 0 || (want == 2 && its[i].prompt_first))
            continue;
        if (its[i].item < 0 || !items[its[i].item].usable) {
            snprintf(why, whylen, "a PREFILL iteration starts with a graph launch or a kernel with no usable name");
            return -1;
        }
        for (k = 0; k < nfirsts && firsts[k] != its[i].item; k++)
            ;
        if (k == nfirsts) {
            if (nfirsts == 4) {
                snprintf(why, whylen, "PREFILL iterations start with more than 4 different kernels");
                return -1;
            }
            firsts[nfirsts++] = its[i].item;
        }
    }
    for (k = 0; k < nfirsts; k++) {
        uint64_t min_prefill = UINT64_MAX, max_other = 0, threshold;
        int others = 0;
        size_t used = strlen(sel);
        for (i = 0; i < n; i++) {
            if (its[i].item != firsts[k])
                continue;
            if (its[i].phase == 0 && !(want == 2 && its[i].prompt_first)) {
                if (its[i].threads < min_prefill)
                    min_prefill = its[i].threads;
            } else if (its[i].phase != 0) {
                others++;
                if (its[i].threads > max_other)
                    max_other = its[i].threads;
            }
        }
        if (others && max_other >= min_prefill) {
            snprintf(why, whylen, "%s starts PREFILL iterations with %llu threads and others with up to %llu",
                     items[firsts[k]].name, (unsigned long long)min_prefill, (unsigned long long)max_other);
            return -1;
        }
        for (threshold = 1; threshold <= max_other && threshold < (UINT64_C(1) << 62); threshold <<= 1)
            ;
        if (threshold > min_prefill)
            threshold = min_prefill;
        if (others)
            snprintf(sel + used, len - used, "%siter:%s[threads>=%llu]", used ? "," : "", items[firsts[k]].name,
                     (unsigned long long)threshold);
        else
            snprintf(sel + used, len - used, "%siter:%s", used ? "," : "", items[firsts[k]].name);
    }
    return nfirsts > 0 ? 0 : -1;
}

/* When PREFILL and DECODE share kernels: choose the selectors (into sel)
 * and mark the iterations they select. Writes why on out. */
static void choose_selectors(struct iteration *its, size_t n, const struct item *items, char *sel, size_t len,
                             FILE *out)
{
    int htod_ok = 1, chunks = 0, prefill = 0;
    size_t i;
    char why[400] = "";
    sel[0] = '\0';
    for (i = 0; i < n; i++) {
        if (its[i].phase == 0) {
            prefill++;
            if (its[i].prompt_first)
                htod_ok &= its[i].after_htod;
            else
                chunks++;
        } else {
            htod_ok &= !its[i].after_htod;
        }
    }
    if (prefill == 0) {
        fputs("# no iteration begins in PREFILL: no iteration selector\n", out);
        return;
    }
    if (htod_ok && !chunks) {
        snprintf(sel, len, "iter:after:memcpy:HtoD");
        fputs("# iteration selector: every prompt's first iteration follows a host-to-device copy, no other "
              "iteration does\n",
              out);
    } else if (threads_selectors(its, n, 1, items, sel, len, why, sizeof why) == 0) {
        fputs("# iteration selector: PREFILL iterations start with a larger launch than any other iteration "
              "starting with the same kernel\n",
              out);
    } else if (htod_ok && (sel[0] = '\0', snprintf(sel, len, "iter:after:memcpy:HtoD"),
                           threads_selectors(its, n, 2, items, sel, len, why, sizeof why) == 0)) {
        fputs("# iteration selectors: a prompt's first iteration follows a host-to-device copy, its later chunks "
              "start with a larger launch than any other iteration starting with the same kernel\n",
              out);
    } else {
        sel[0] = '\0';
        fprintf(out,
                "# no iteration selector separates them (%s%s): the rules below go by names only and will not "
                "reproduce the trace's PREFILL\n",
                htod_ok ? "" : "host-to-device copies do not precede exactly the prompts' first iterations; ", why);
        return;
    }
    for (i = 0; i < n; i++)
        its[i].selected = its[i].phase == 0;
}

/* The item of a call, or -1. */
static long item_of(const struct obs_call *c, const long *kernel_item, const long *copy_item, long memset_item)
{
    unsigned d;
    switch (c->kind) {
    case OBS_KIND_KERNEL:
        return c->kernel ? kernel_item[c->kernel] : -1;
    case OBS_KIND_MEMCPY:
        d = obs_call_direction(c);
        return d != OBS_DIR_NONE && d < OBS_DIR_COUNT ? copy_item[d] : -1;
    case OBS_KIND_MEMSET:
        return memset_item;
    default:
        return -1;
    }
}

/* Calls per item and phase (skipping the calls of selected iterations when
 * its is given). */
static void count_items(const struct obs_trace *t, struct item *items, const long *kernel_item,
                        const long *copy_item, long memset_item, const int *range_phase, const struct iteration *its,
                        const uint32_t *iter_of)
{
    size_t i;
    if (its != NULL)
        for (i = 0; i < t->nkernels + OBS_DIR_COUNT + 1; i++) {
            memset(items[i].count, 0, sizeof items[i].count);
            items[i].other = 0;
        }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        long it = item_of(c, kernel_item, copy_item, memset_item);
        int ph = c->phase != OBS_NONE ? range_phase[c->phase] : -1;
        if (it < 0 || (its != NULL && iter_of[i] != OBS_NONE && its[iter_of[i]].selected))
            continue;
        if (ph >= 0)
            items[it].count[ph]++;
        else
            items[it].other++;
    }
}

int obs_report_suggest_phases(const struct obs_trace *t, FILE *out)
{
    size_t nitems = 0, i, k, nsteps = 0, nlabelled = 0, shared = 0, nits = 0;
    struct iteration *its = NULL;
    uint32_t *iter_of = NULL;
    char selectors[1024] = "";
    struct item *items = NULL, **byname = NULL;
    long *kernel_item = NULL, copy_item[OBS_DIR_COUNT], memset_item;
    uint64_t *range_first = NULL, other_phase_calls = 0;
    struct step_key *steps = NULL;
    int rc = -1, *range_phase = NULL;
    char glob[ITEM_MAX + 2];

    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase != OBS_NONE)
            nlabelled++;
    if (t->nphases == 0 || nlabelled == 0) {
        fprintf(out, "# %s: the trace has no phases (no PHASE records label its calls)\n", t->path);
        return fflush(out) == 0 && !ferror(out) ? 1 : -1;
    }

    /* Items: kernel base names (deduplicated), copy directions, memset. */
    items = calloc(t->nkernels + OBS_DIR_COUNT + 1, sizeof *items);
    byname = calloc(t->nkernels + 1, sizeof *byname);
    kernel_item = calloc(t->nkernels + 1, sizeof *kernel_item);
    range_first = malloc(t->nphases * sizeof *range_first);
    range_phase = malloc(t->nphases * sizeof *range_phase);
    steps = malloc(t->nphases * sizeof *steps);
    if (!items || !byname || !kernel_item || !range_first || !range_phase || !steps)
        goto out;
    for (i = 1; i < t->nkernels; i++) {
        obs_kernel_base_name_of(t->kernels[i].mangled, t->kernels[i].demangled, items[nitems].name, ITEM_MAX);
        items[nitems].is_kernel = 1;
        byname[i - 1] = &items[nitems++];
    }
    qsort(byname, nitems, sizeof *byname, cmp_name);
    {
        /* merge equal names into the first of their run */
        struct item **rep = calloc(nitems + 1, sizeof *rep);
        if (rep == NULL)
            goto out;
        for (i = 0; i < nitems; i++)
            rep[byname[i] - items] = i > 0 && strcmp(byname[i]->name, byname[i - 1]->name) == 0
                                         ? rep[byname[i - 1] - items]
                                         : byname[i];
        kernel_item[0] = -1;
        for (i = 1; i < t->nkernels; i++)
            kernel_item[i] = rep[i - 1] - items;
        free(rep);
    }
    for (i = 0; i < OBS_DIR_COUNT; i++) {
        copy_item[i] = (long)nitems;
        snprintf(items[nitems].name, ITEM_MAX, "memcpy:%s", obs_direction_name((unsigned)i));
        nitems++;
    }
    memset_item = (long)nitems;
    snprintf(items[nitems++].name, ITEM_MAX, "memset");
    for (i = 0; i < nitems; i++) {
        items[i].phase = -1;
        items[i].usable = items[i].is_kernel ? usable_text(items[i].name) : 1;
    }

    /* Count calls per item and phase; each range's first call. */
    for (i = 0; i < t->nphases; i++) {
        range_first[i] = UINT64_MAX;
        range_phase[i] = rule_phase(t->phases[i].phase);
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        int ph = c->phase != OBS_NONE ? range_phase[c->phase] : -1;
        if (c->phase != OBS_NONE && range_first[c->phase] == UINT64_MAX)
            range_first[c->phase] = i;
        if (c->phase != OBS_NONE && ph < 0)
            other_phase_calls++;
    }
    count_items(t, items, kernel_item, copy_item, memset_item, range_phase, NULL, NULL);
    /* Kernels in both PREFILL and decode: names cannot tell them apart, an
     * iteration selector may; the per-name rules then cover the calls of
     * the iterations it does not select. */
    for (i = 0; i < nitems; i++)
        if (items[i].is_kernel && items[i].count[0] && (items[i].count[1] || items[i].count[2]))
            shared++;
    if (shared) {
        iter_of = malloc((t->ncalls + 1) * sizeof *iter_of);
        if (iter_of == NULL || find_iterations(t, kernel_item, range_phase, &its, &nits, iter_of) != 0)
            goto out;
    }
    /* Step openers: the first call of each (generation, step). */
    for (i = 0; i < t->nphases; i++) {
        uint32_t step = obs_phase_step(t, (uint32_t)i);
        if (range_first[i] == UINT64_MAX || step == UINT32_MAX)
            continue;
        steps[nsteps].key = (uint64_t)t->phases[i].generation << 32 | step;
        steps[nsteps].first = range_first[i];
        nsteps++;
    }
    qsort(steps, nsteps, sizeof *steps, cmp_step_key);
    for (i = 0, k = 0; i < nsteps; i++) {
        long it;
        if (i > 0 && steps[i].key == steps[i - 1].key)
            continue;
        k++;
        it = item_of(&t->calls[steps[i].first], kernel_item, copy_item, memset_item);
        if (it >= 0)
            items[it].openers++;
    }
    nsteps = k;

    fprintf(out, "# obs-report suggest-phases: %s: %zu labelled calls, %zu decode steps\n", t->path, nlabelled,
            nsteps);
    fprintf(out, "# rules that reproduce the trace's phases (globs over kernel base names); paste them before\n"
                 "# running the program under obsshim\n");
    if (shared) {
        size_t listed = 0;
        fprintf(out, "# PREFILL and DECODE share %zu kernel%s (", shared, shared == 1 ? "" : "s");
        for (i = 0; i < nitems; i++)
            if (items[i].is_kernel && items[i].count[0] && (items[i].count[1] || items[i].count[2]) && listed++ < 4)
                fprintf(out, "%s%s", listed > 1 ? ", " : "", items[i].name);
        fprintf(out, "%s): names cannot tell them apart\n", listed > 4 ? ", ..." : "");
        choose_selectors(its, nits, items, selectors, sizeof selectors, out);
        if (selectors[0]) /* the names' rules cover the iterations not selected */
            count_items(t, items, kernel_item, copy_item, memset_item, range_phase, its, iter_of);
    }
    /* Each item goes to the phase that labels most of its calls. */
    for (i = 0; i < nitems; i++) {
        int best = -1, p;
        for (p = 0; p < NPH; p++)
            if (items[i].count[p] && (best < 0 || items[i].count[p] > items[i].count[best]))
                best = p;
        items[i].phase = best;
    }

    if (other_phase_calls) {
        for (i = 0; i < t->nphases; i++) /* name each such phase once */
            if (range_phase[i] < 0) {
                size_t j;
                int seen = 0;
                for (j = 0; j < i && !seen; j++)
                    seen = range_phase[j] < 0 && strcmp(t->phases[j].phase, t->phases[i].phase) == 0;
                if (seen)
                    continue;
                if (t->phases[i].phase[0])
                    fprintf(out, "# phase '%s' has no rule (OBS_PHASES names PREFILL, DECODE and KV_GATHER)\n",
                            t->phases[i].phase);
                else
                    fprintf(out, "# phase id %u has no name in the trace: no rule\n", t->phases[i].phase_id);
            }
    }
    for (i = 0; i < nitems; i++) {
        int p, n = 0;
        if (items[i].phase < 0)
            continue;
        for (p = 0; p < NPH; p++)
            n += items[i].count[p] > 0;
        if (n > 1 || items[i].other)
            fprintf(out, "# note: %s is in PREFILL %llu, KV_GATHER %llu, DECODE %llu, elsewhere %llu times; "
                         "rule: %s\n",
                    items[i].name, (unsigned long long)items[i].count[0], (unsigned long long)items[i].count[1],
                    (unsigned long long)items[i].count[2], (unsigned long long)items[i].other,
                    rule_phases[items[i].phase]);
        if (!items[i].usable)
            fprintf(out, "# left out: kernel name '%s' cannot be written as a glob\n", items[i].name);
    }

    fputs("export OBS_PHASES='", out);
    {
        int p, first_rule = 1;
        for (p = 0; p < NPH; p++) {
            int first_pat = 1;
            if (p == 0 && selectors[0]) {
                fprintf(out, "PREFILL=%s", selectors);
                first_pat = 0;
                first_rule = 0;
            }
            for (i = 0; i < nitems; i++) {
                size_t j;
                int covered = 0;
                if (items[i].phase != p || !items[i].usable)
                    continue;
                if (items[i].is_kernel) {
                    glob_for(items, nitems, &items[i], p, glob, sizeof glob);
                    /* an earlier item of this phase may already print the same glob */
                    for (j = 0; j < i && !covered; j++) {
                        char other[ITEM_MAX + 2];
                        if (items[j].phase != p || !items[j].usable || !items[j].is_kernel)
                            continue;
                        glob_for(items, nitems, &items[j], p, other, sizeof other);
                        covered = strcmp(other, glob) == 0;
                    }
                } else {
                    snprintf(glob, sizeof glob, "%s", items[i].name);
                }
                if (covered)
                    continue;
                fprintf(out, "%s%s%s%s", first_pat && !first_rule ? ";" : "", first_pat ? rule_phases[p] : "",
                        first_pat ? "=" : ",", glob);
                first_pat = 0;
                first_rule = 0;
            }
        }
    }
    fputs("'\n", out);
    if (nsteps) {
        long best = -1;
        for (i = 0; i < nitems; i++)
            if (items[i].openers && items[i].usable && (best < 0 || items[i].openers > items[best].openers))
                best = (long)i;
        if (best < 0) {
            fputs("# no step rule: the calls that open decode steps have no usable name\n", out);
        } else {
            if (items[best].is_kernel)
                glob_for(items, nitems, &items[best], -1, glob, sizeof glob);
            else
                snprintf(glob, sizeof glob, "%s", items[best].name);
            if (items[best].openers < nsteps)
                fprintf(out, "# %s opens %llu of the %zu decode steps\n", items[best].name,
                        (unsigned long long)items[best].openers, nsteps);
            fprintf(out, "export OBS_STEP='%s'\n", glob);
        }
    } else {
        fputs("# no step rule: the trace has no decode steps\n", out);
    }
    rc = fflush(out) == 0 && !ferror(out) ? 0 : -1;
out:
    if (rc < 0 && errno == 0)
        errno = ENOMEM;
    free(items);
    free(byname);
    free(kernel_item);
    free(range_first);
    free(range_phase);
    free(steps);
    free(iter_of);
    free(its);
    return rc;
}
