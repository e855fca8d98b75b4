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
#define STEP_SET_MAX 4 /* kernels OBS_STEP may name: each opening some steps, graph launches the rest */

struct item {
    char name[ITEM_MAX];
    int is_kernel; /* else a copy direction or memset */
    int usable;    /* can be written in a rule */
    int shared;    /* a kernel PREFILL and a decode phase both label (before the selectors) */
    uint64_t count[NPH], other, openers;
    uint64_t prompt_openers; /* generations whose PREFILL's first call it is */
    int phase;    /* the phase it goes to, -1 none */
    int step_set; /* OBS_STEP names it */
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
        if ((unsigned char)*s <= ' ' || strchr("*?[,;='\"\\", *s)) /* '[': a condition would begin */
            return 0;
    return 1;
}

static int cmp_name(const void *a, const void *b)
{
    const struct item *x = *(const struct item *const *)a, *y = *(const struct item *const *)b;
    return strcmp(x->name, y->name);
}

struct step_key {
    uint32_t thread; /* generations are per thread */
    uint64_t key;    /* generation << 32 | step */
    uint64_t first;  /* seq of the first call of a range of that step */
};

static int cmp_step_key(const void *a, const void *b)
{
    const struct step_key *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
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
    int after_htod;   /* a host-to-device copy came since the thread's previous launch */
    uint64_t htod_bytes; /* the largest of those copies (iter:after:memcpy:HtoD[bytes>=N]) */
    int prompt_first; /* a PREFILL iteration that does not continue the previous one (a prompt's first) */
    int before_token; /* its generation has read no token yet (or none has begun): iter:until:token holds */
    int reads_token;  /* it ends with a token read */
    int need;         /* a PREFILL iteration a selector other than iter:until:token must pick out */
    int selected;     /* a selector gives it PREFILL */
    int mixed;        /* it holds launches of PREFILL and of a decode phase */
    int warm_up;      /* no phase, before its thread's first labelled launch: a warm-up the trace took off
                       * (the rules take it off too: rules_copy, rules_warm_up), which no selector need
                       * tell from a prompt */
};

#define TOKEN_READ_MIN 4u /* the engine's: a token read is a copy from the device of at least 4 bytes */

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
 * call i belongs to (OBS_NONE outside any). Per iteration also what the
 * rules' selectors see: a copy in since the previous launch, whether its
 * generation has read its token (as the engine reads it: a copy from the
 * device of at least 4 bytes after a launch of the iteration, complete at
 * its delimiter). */
struct thread_scan {
    uint32_t cur, last; /* the current iteration, the latest */
    unsigned char htod, token, read;
    uint64_t htod_bytes; /* the largest copy in since the latest launch */
    uint32_t gen;       /* the generation of its latest labelled iteration */
    int in_gen;         /* a generation has begun */
};

static int find_iterations(const struct obs_trace *t, const long *kernel_item, const int *range_phase,
                           struct iteration **out, size_t *nout, uint32_t *iter_of)
{
    struct thread_scan *ts = calloc(t->nthreads + 1, sizeof *ts);
    struct iteration *its = NULL;
    size_t n = 0, cap = 0, i;
    if (ts == NULL)
        goto fail;
    for (i = 0; i <= t->nthreads; i++)
        ts[i].cur = ts[i].last = OBS_NONE;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t th = c->thread < t->nthreads ? c->thread : (uint32_t)t->nthreads;
        struct thread_scan *s = &ts[th];
        iter_of[i] = OBS_NONE;
        if (c->flags & OBS_CALL_NESTED) /* the engine does not see those */
            continue;
        if ((c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) && s->cur == OBS_NONE) {
            struct iteration *it;
            const struct iteration *prev;
            if (n == cap) {
                struct iteration *grown = realloc(its, (cap = cap ? 2 * cap : 256) * sizeof *its);
                if (grown == NULL)
                    goto fail;
                its = grown;
            }
            prev = s->last != OBS_NONE ? &its[s->last] : NULL;
            it = &its[n];
            memset(it, 0, sizeof *it);
            it->thread = th;
            it->phase = c->phase != OBS_NONE ? range_phase[c->phase] : -1;
            it->gen = c->phase != OBS_NONE ? t->phases[c->phase].generation : 0;
            it->item = c->kind == OBS_KIND_KERNEL && c->kernel ? kernel_item[c->kernel] : -1;
            it->threads = c->kind == OBS_KIND_KERNEL ? call_threads(c) : 0;
            it->after_htod = s->htod;
            it->htod_bytes = s->htod_bytes;
            it->prompt_first = it->phase == 0 && !(prev && prev->phase == 0 && prev->gen == it->gen);
            /* as the rules see it at this launch: the generation so far has read no token (a new one
             * begins at this launch, after the selectors were tried) */
            it->before_token = !s->in_gen || !s->token;
            it->warm_up = it->phase < 0 && !s->in_gen;
            if (c->phase != OBS_NONE && (!s->in_gen || it->gen != s->gen)) {
                s->in_gen = 1; /* a new generation: no token read in it yet */
                s->gen = it->gen;
                s->token = 0;
            }
            s->cur = s->last = (uint32_t)n++;
        }
        iter_of[i] = s->cur;
        if (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) {
            s->htod = 0;
            s->htod_bytes = 0;
        } else if (c->kind == OBS_KIND_MEMCPY && obs_call_direction(c) == OBS_DIR_HTOD) {
            s->htod = 1;
            if (c->u.bytes > s->htod_bytes)
                s->htod_bytes = c->u.bytes;
        }
        if (c->kind == OBS_KIND_MEMCPY && obs_call_direction(c) == OBS_DIR_DTOH && s->cur != OBS_NONE &&
            c->u.bytes >= TOKEN_READ_MIN)
            s->read = 1;
        if (is_delimiter(c)) {
            if (s->read && s->cur != OBS_NONE) {
                its[s->cur].reads_token = 1;
                s->token = 1;
            }
            s->cur = OBS_NONE;
            s->read = 0;
        }
    }
    free(ts);
    *out = its;
    *nout = n;
    return 0;
fail:
    free(ts);
    free(its);
    return -1;
}

/* A selector's threshold: the smallest power of two above every other
 * iteration's value, at most the smallest wanted one (it reads well). */
static uint64_t threshold_between(uint64_t max_other, uint64_t min_wanted)
{
    uint64_t threshold;
    for (threshold = 1; threshold <= max_other && threshold < (UINT64_C(1) << 62); threshold <<= 1)
        ;
    return threshold > min_wanted ? min_wanted : threshold;
}

static int wanted_iteration(const struct iteration *it, int want)
{
    return want == 3 ? it->need : it->phase == 0 && !(want == 2 && it->prompt_first);
}

/* `iter:NAME[threads>=T]` selectors for the iterations `want` picks out
 * (want: 1 all PREFILL iterations, 2 those that continue a prompt, 3 those
 * marked need), one
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
        if (!wanted_iteration(&its[i], want))
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
            if (wanted_iteration(&its[i], want)) {
                if (its[i].threads < min_prefill)
                    min_prefill = its[i].threads;
            } else if (its[i].phase != 0 && !its[i].warm_up) {
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
        threshold = threshold_between(max_other, min_prefill);
        if (others)
            snprintf(sel + used, len - used, "%siter:%s[threads>=%llu]", used ? "," : "", items[firsts[k]].name,
                     (unsigned long long)threshold);
        else
            snprintf(sel + used, len - used, "%siter:%s", used ? "," : "", items[firsts[k]].name);
    }
    return nfirsts > 0 ? 0 : -1;
}

/* `iter:after:memcpy:HtoD` for the iterations `want` picks out (1: every
 * prompt's first, 3: those marked need), when exactly they follow a copy
 * in; or, where copies in come before other iterations too, all of them
 * smaller, `iter:after:memcpy:HtoD[bytes>=N]` with N above every such copy
 * and at most the smallest one a wanted iteration follows (the smallest
 * power of two in that range): a prompt's token ids against a step's one
 * token, a position or a flag (a graph tree's inputs refilled per step).
 * Writes it into sel and *bytes (0: no condition); 0 when it separates
 * them, -1 when it cannot (or when a wanted iteration is no prompt's first:
 * the engine begins a new prompt at an iter:after: iteration after a token
 * read). */
static int htod_selector(const struct iteration *its, size_t n, int want, char *sel, size_t len, uint64_t *bytes)
{
    uint64_t min_want = UINT64_MAX, max_other = 0, threshold;
    size_t i, wanted = 0, others = 0;
    *bytes = 0;
    for (i = 0; i < n; i++) {
        const struct iteration *it = &its[i];
        if (want == 3 ? it->need : it->phase == 0 && it->prompt_first) {
            /* after a token read an iter:after: iteration begins the next prompt: a chunk read after its
             * prompt's first token needs a size selector (it continues the prompt) */
            if (!it->after_htod || !it->prompt_first)
                return -1;
            wanted++;
            if (it->htod_bytes < min_want)
                min_want = it->htod_bytes;
        } else if (it->phase != 0 && !it->warm_up && it->after_htod) {
            others++;
            if (it->htod_bytes > max_other)
                max_other = it->htod_bytes;
        }
    }
    if (wanted == 0 || (others > 0 && max_other >= min_want))
        return -1;
    if (others == 0) {
        snprintf(sel, len, "iter:after:memcpy:HtoD");
        return 0;
    }
    threshold = threshold_between(max_other, min_want);
    snprintf(sel, len, "iter:after:memcpy:HtoD[bytes>=%llu]", (unsigned long long)threshold);
    *bytes = threshold;
    return 0;
}

/* How the iterations of PREFILL are told apart (choose_selectors). */
enum selector_choice {
    SEL_NONE_PREFILL, /* no iteration begins in PREFILL */
    SEL_HTOD,         /* iter:after:memcpy:HtoD */
    SEL_THREADS,      /* iter:NAME[threads>=T] */
    SEL_HTOD_THREADS, /* both: the prompt's first iteration, then its later chunks */
    SEL_NONE_FOUND,   /* none separates them (why says why) */
    SEL_TOKEN,        /* a token loop: iter:until:token, with what the later prompts need */
    SEL_FORWARD,      /* a forward loop: iter:after:memcpy:HtoD,iter:until:forward */
};

/* When PREFILL and DECODE share kernels: choose the selectors (into sel)
 * and mark the iterations they select. why: the reason none was found. */
static enum selector_choice choose_selectors(struct iteration *its, size_t n, const struct item *items, char *sel,
                                             size_t len, int *htod_ok_out, uint64_t *htod_bytes, char *why,
                                             size_t whylen)
{
    int htod_ok, chunks = 0, prefill = 0;
    enum selector_choice choice;
    size_t i;
    char htod[80];
    sel[0] = '\0';
    why[0] = '\0';
    for (i = 0; i < n; i++) {
        if (its[i].phase == 0) {
            prefill++;
            chunks += !its[i].prompt_first;
        }
    }
    htod_ok = htod_selector(its, n, 1, htod, sizeof htod, htod_bytes) == 0;
    *htod_ok_out = htod_ok;
    if (prefill == 0)
        return SEL_NONE_PREFILL;
    if (htod_ok && !chunks) {
        snprintf(sel, len, "%s", htod);
        choice = SEL_HTOD;
    } else if (threads_selectors(its, n, 1, items, sel, len, why, whylen) == 0) {
        *htod_bytes = 0;
        choice = SEL_THREADS;
    } else if (htod_ok && (sel[0] = '\0', snprintf(sel, len, "%s", htod),
                           threads_selectors(its, n, 2, items, sel, len, why, whylen) == 0)) {
        choice = SEL_HTOD_THREADS;
    } else {
        sel[0] = '\0';
        return SEL_NONE_FOUND;
    }
    for (i = 0; i < n; i++)
        its[i].selected = its[i].phase == 0;
    return choice;
}

/* A token loop (its prompts read their token): iter:until:token selects
 * every prompt's iterations up to its token read (the thread's first
 * prompt's included); the prompts that begin after a token read (and,
 * without OBS_STEP, the chunks read after a prompt's first token read)
 * need another selector: iter:after:memcpy:HtoD when exactly they follow
 * a copy in, else the size of their first launch. With OBS_STEP the
 * work a PREFILL does after its token read stays in it (only OBS_STEP's
 * kernel opens the decode), unless it begins with that kernel. */
static enum selector_choice choose_token_selectors(struct iteration *its, size_t n, const struct item *items,
                                                   long step_item, char *sel, size_t len, int *htod_ok_out,
                                                   uint64_t *htod_bytes, char *why, size_t whylen)
{
    size_t i, need = 0;
    int htod_ok;
    sel[0] = '\0';
    why[0] = '\0';
    for (i = 0; i < n; i++) {
        struct iteration *it = &its[i];
        /* with OBS_STEP, a PREFILL iteration after the token read stays PREFILL unless it begins with
         * one of OBS_STEP's kernels (a chunk that reads its logits) */
        it->need = it->phase == 0 && !it->before_token &&
                   (step_item < 0 || it->prompt_first || (it->item >= 0 && items[it->item].step_set));
        need += (size_t)it->need;
    }
    htod_ok = need > 0 && htod_selector(its, n, 3, sel, len, htod_bytes) == 0;
    *htod_ok_out = htod_ok;
    if (htod_ok) {
        size_t used = strlen(sel);
        snprintf(sel + used, len - used, ",");
    } else if (need > 0 && threads_selectors(its, n, 3, items, sel, len, why, whylen) == 0) {
        size_t used = strlen(sel);
        snprintf(sel + used, len - used, ",");
    } else if (need > 0) {
        sel[0] = '\0';
        return SEL_NONE_FOUND;
    }
    {
        size_t used = strlen(sel);
        snprintf(sel + used, len - used, "iter:until:token");
    }
    for (i = 0; i < n; i++)
        its[i].selected = its[i].need || (its[i].before_token && its[i].phase == 0);
    return SEL_TOKEN;
}

/* A forward loop (its prompts read no token, each forward begins with
 * OBS_STEP's kernel: generate() with no streamer, tokens kept on the
 * device): iter:until:forward holds a prompt through its forward, to the
 * next forward's OBS_STEP launch, mid-iteration where no sync comes
 * between (an iteration of PREFILL and decode launches: mixed); a later
 * prompt begins with iter:after:memcpy:HtoD, which needs exactly the
 * prompts' first iterations to follow a copy in. */
static enum selector_choice choose_forward_selectors(struct iteration *its, size_t n, char *sel, size_t len,
                                                     int *htod_ok_out, uint64_t *htod_bytes, char *why,
                                                     size_t whylen)
{
    size_t i, used;
    int htod_ok = htod_selector(its, n, 1, sel, len, htod_bytes) == 0;
    *htod_ok_out = htod_ok;
    if (!htod_ok) {
        snprintf(why, whylen, "a prompt that reads no token needs iter:after:memcpy:HtoD to begin it");
        sel[0] = '\0';
        return SEL_NONE_FOUND;
    }
    used = strlen(sel);
    snprintf(sel + used, len - used, ",iter:until:forward");
    for (i = 0; i < n; i++)
        its[i].selected = its[i].phase == 0 && !its[i].mixed;
    return SEL_FORWARD;
}

/* ---- the analysis: items, their phases and globs, the step rule ---------------- */

/* What suggest-phases found, printed by the print_* functions below. */
struct suggestion {
    const struct obs_trace *t;
    size_t nlabelled;           /* calls with a phase */
    struct item *items;         /* kernel base names, copy directions, memset */
    size_t nitems;
    struct item **byname;       /* the kernel items sorted by name */
    size_t nkernel_items;
    long *kernel_item;          /* per kernel name id: its item (the first of equal base names), -1 none */
    long copy_item[OBS_DIR_COUNT], memset_item;
    int *range_phase;           /* per range: its rule phase, -1 none */
    uint64_t *range_first;      /* per range: its first call, UINT64_MAX none */
    uint64_t other_phase_calls; /* calls in phases no rule can name */
    uint32_t *unruled;          /* ranges whose phase no rule can name, one per phase name, in range order */
    size_t nunruled;
    size_t shared;              /* kernel items in PREFILL and in a decode phase */
    struct iteration *its;      /* when shared: the iterations, and each call's (iter_of) */
    size_t nits;
    uint32_t *iter_of;
    enum selector_choice selector;
    int htod_ok;
    uint64_t htod_bytes;        /* the selectors' iter:after:memcpy:HtoD[bytes>=N], 0 none */
    char selectors[1024], selector_why[400];
    char (*globs)[ITEM_MAX + 2]; /* per item with a phase: its pattern in OBS_PHASES */
    unsigned char *covered;      /* per item: an earlier item of its phase prints the same glob */
    size_t nsteps;               /* decode steps: distinct (generation, step) */
    size_t graph_openers;        /* those whose first call is a graph launch (a forward replayed) */
    size_t nprompts;             /* generations with a PREFILL: distinct (thread, generation) */
    long step_item;              /* the item OBS_STEP names (of several, the one opening most steps), -1 none */
    size_t nstep_set;            /* the items OBS_STEP names (struct item's step_set) */
    long step_rejected;          /* a token loop's best opener that runs more than once per step, -1 none */
    char step_glob[STEP_SET_MAX * (ITEM_MAX + 2) + 4]; /* a glob, two names (forward_step_glob), or a set's */
    int token_loop;              /* its prompts read their token: steps open after token reads */
    int forward_loop;            /* none does, and OBS_STEP's kernel begins each forward: iter:until:forward */
    size_t unread_prompts;       /* prompts none of whose iterations reads a token */
    int step_once;               /* step_item runs once per decode step */
    int step_graph_only;         /* every step opens at a graph launch: step_item begins the prompts */
    uint64_t step_runs;          /* its launches in the decode */
};

static void suggestion_free(struct suggestion *sg)
{
    free(sg->items);
    free(sg->byname);
    free(sg->kernel_item);
    free(sg->range_phase);
    free(sg->range_first);
    free(sg->unruled);
    free(sg->its);
    free(sg->iter_of);
    free(sg->globs);
    free(sg->covered);
}

/* The item of a call, or -1. */
static long item_of(const struct suggestion *sg, const struct obs_call *c)
{
    unsigned d;
    switch (c->kind) {
    case OBS_KIND_KERNEL:
        return c->kernel ? sg->kernel_item[c->kernel] : -1;
    case OBS_KIND_MEMCPY:
        d = obs_call_direction(c);
        return d != OBS_DIR_NONE && d < OBS_DIR_COUNT ? sg->copy_item[d] : -1;
    case OBS_KIND_MEMSET:
        return sg->memset_item;
    default:
        return -1;
    }
}

/* Items: kernel base names (deduplicated: equal names share the first of
 * their run in name order), copy directions, memset. */
static int build_items(struct suggestion *sg)
{
    const struct obs_trace *t = sg->t;
    struct item **rep;
    size_t i, n = 0;
    sg->items = calloc(t->nkernels + OBS_DIR_COUNT + 1, sizeof *sg->items);
    sg->byname = calloc(t->nkernels + 1, sizeof *sg->byname);
    sg->kernel_item = calloc(t->nkernels + 1, sizeof *sg->kernel_item);
    if (!sg->items || !sg->byname || !sg->kernel_item)
        return -1;
    for (i = 1; i < t->nkernels; i++) {
        obs_kernel_base_name_of(t->kernels[i].mangled, t->kernels[i].demangled, sg->items[n].name, ITEM_MAX);
        sg->items[n].is_kernel = 1;
        sg->byname[i - 1] = &sg->items[n++];
    }
    sg->nkernel_items = n;
    qsort(sg->byname, n, sizeof *sg->byname, cmp_name);
    rep = calloc(n + 1, sizeof *rep);
    if (rep == NULL)
        return -1;
    for (i = 0; i < n; i++)
        rep[sg->byname[i] - sg->items] = i > 0 && strcmp(sg->byname[i]->name, sg->byname[i - 1]->name) == 0
                                             ? rep[sg->byname[i - 1] - sg->items]
                                             : sg->byname[i];
    sg->kernel_item[0] = -1;
    for (i = 1; i < t->nkernels; i++)
        sg->kernel_item[i] = rep[i - 1] - sg->items;
    free(rep);
    for (i = 0; i < OBS_DIR_COUNT; i++) {
        sg->copy_item[i] = (long)n;
        snprintf(sg->items[n++].name, ITEM_MAX, "memcpy:%s", obs_direction_name((unsigned)i));
    }
    sg->memset_item = (long)n;
    snprintf(sg->items[n++].name, ITEM_MAX, "memset");
    sg->nitems = n;
    for (i = 0; i < n; i++) {
        sg->items[i].phase = -1;
        sg->items[i].usable = sg->items[i].is_kernel ? usable_text(sg->items[i].name) : 1;
    }
    return 0;
}

/* Each range's rule phase and first call; the calls no rule can name. */
static int scan_ranges(struct suggestion *sg)
{
    const struct obs_trace *t = sg->t;
    size_t i;
    sg->range_first = malloc(t->nphases * sizeof *sg->range_first);
    sg->range_phase = malloc(t->nphases * sizeof *sg->range_phase);
    if (!sg->range_first || !sg->range_phase)
        return -1;
    for (i = 0; i < t->nphases; i++) {
        sg->range_first[i] = UINT64_MAX;
        sg->range_phase[i] = rule_phase(t->phases[i].phase);
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        if (c->phase == OBS_NONE)
            continue;
        if (sg->range_first[c->phase] == UINT64_MAX)
            sg->range_first[c->phase] = i;
        if (sg->range_phase[c->phase] < 0)
            sg->other_phase_calls++;
    }
    return 0;
}

/* Calls per item and phase, skipping the calls of the iterations a
 * selector gives PREFILL when skip_selected. */
static void count_items(struct suggestion *sg, int skip_selected)
{
    const struct obs_trace *t = sg->t;
    size_t i;
    for (i = 0; i < sg->nitems; i++) {
        memset(sg->items[i].count, 0, sizeof sg->items[i].count);
        sg->items[i].other = 0;
    }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        long it = item_of(sg, c);
        int ph = c->phase != OBS_NONE ? sg->range_phase[c->phase] : -1;
        if (it < 0 || (skip_selected && sg->iter_of[i] != OBS_NONE && sg->its[sg->iter_of[i]].selected))
            continue;
        if (ph >= 0)
            sg->items[it].count[ph]++;
        else
            sg->items[it].other++;
    }
}

static int shared_kernel(const struct item *it)
{
    return it->is_kernel && it->count[0] && (it->count[1] || it->count[2]);
}

/* The prompts (a generation's PREFILL iterations) none of whose
 * iterations reads a token (unread_prompts). 0, or -1 out of memory. */
static int count_unread_prompts(struct suggestion *sg)
{
    struct step_key *keys = malloc((sg->nits + 1) * sizeof *keys);
    size_t i, n = 0;
    if (keys == NULL)
        return -1;
    for (i = 0; i < sg->nits; i++) {
        if (sg->its[i].phase != 0)
            continue;
        keys[n].thread = sg->its[i].thread;
        keys[n].key = sg->its[i].gen;
        keys[n++].first = sg->its[i].reads_token && !sg->its[i].mixed; /* sorted last */
    }
    qsort(keys, n, sizeof *keys, cmp_step_key);
    for (i = 0; i < n; i++)
        if ((i + 1 == n || keys[i + 1].thread != keys[i].thread || keys[i + 1].key != keys[i].key) && !keys[i].first)
            sg->unread_prompts++; /* the prompt's last key reads nothing: none of its iterations does */
    free(keys);
    return 0;
}

/* Iterations of every thread (find_iterations), those that hold PREFILL
 * and decode launches (mixed: a loop with no sync between its forwards);
 * a token loop when some PREFILL iteration reads its token (a mixed one's
 * read comes after decode steps: the tokens kept on the device, read at
 * the end). */
static int find_all_iterations(struct suggestion *sg)
{
    const struct obs_trace *t = sg->t;
    size_t i;
    sg->iter_of = malloc((t->ncalls + 1) * sizeof *sg->iter_of);
    if (sg->iter_of == NULL ||
        find_iterations(t, sg->kernel_item, sg->range_phase, &sg->its, &sg->nits, sg->iter_of) != 0)
        return -1;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t it = sg->iter_of[i];
        if (it != OBS_NONE && c->phase != OBS_NONE && (c->kind == OBS_KIND_KERNEL || c->kind == OBS_KIND_GRAPH) &&
            sg->range_phase[c->phase] > 0 && sg->its[it].phase == 0)
            sg->its[it].mixed = 1;
    }
    for (i = 0; i < sg->nits; i++)
        if (sg->its[i].phase == 0 && sg->its[i].reads_token && !sg->its[i].mixed)
            sg->token_loop = 1;
    return count_unread_prompts(sg);
}

static void prefix_run(struct item *const *byname, size_t n, const char *prefix, size_t cut, size_t *lo, size_t *hi);

/* Whether the marked kernel items run exactly once in every prompt (a
 * generation's PREFILL) and in every decode step of the trace. */
static int once_per_forward(struct suggestion *sg, const unsigned char *marked)
{
    const struct obs_trace *t = sg->t;
    struct step_key *keys = malloc((t->ncalls + 1) * sizeof *keys);
    size_t i, n = 0, prompts = 0, steps = 0;
    int ok = 1;
    if (keys == NULL)
        return 0;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        long it = c->kind == OBS_KIND_KERNEL ? item_of(sg, c) : -1;
        if (it < 0 || !marked[it] || c->phase == OBS_NONE || sg->range_phase[c->phase] < 0)
            continue;
        keys[n].thread = t->phases[c->phase].thread;
        keys[n].key = (uint64_t)t->phases[c->phase].generation << 32 |
                      (sg->range_phase[c->phase] == 0 ? UINT32_MAX : obs_phase_step(t, c->phase));
        keys[n++].first = 0;
    }
    qsort(keys, n, sizeof *keys, cmp_step_key);
    for (i = 0; i < n && ok; i++) {
        if (i > 0 && keys[i].thread == keys[i - 1].thread && keys[i].key == keys[i - 1].key)
            ok = 0; /* twice in one prompt or step */
        else if ((uint32_t)keys[i].key == UINT32_MAX)
            prompts++;
        else
            steps++;
    }
    free(keys);
    return ok && steps == sg->nsteps && prompts == sg->nprompts; /* each of them */
}

/* A forward loop's OBS_STEP: kernels that run once in every prompt (its
 * forward's first, or one the forward alone runs) and once in every step,
 * opening it. The step kernel when that is all it takes; else the longest
 * prefix of its name, at a word's end, with a star, that does it
 * (PyTorch's embedding lookup is indexSelectLargeIndex over a long prompt,
 * indexSelectSmallIndex over a few tokens); else the step kernel and one
 * kernel that runs in the prompts without it and nowhere else (its
 * vectorized_gather_kernel over a longer one). 0: none. */
static int forward_step_glob(struct suggestion *sg)
{
    const struct item *step = &sg->items[sg->step_item];
    const char *name = step->name;
    size_t len = strlen(name), cut, lo, hi, i;
    unsigned char *marked = calloc(sg->nitems + 1, 1);
    int found = 0;
    if (marked == NULL)
        return 0;
    for (cut = len; cut >= 4 && !found; cut--) {
        int word_end = cut == len || name[cut - 1] == '_' ||
                       (name[cut] >= 'A' && name[cut] <= 'Z' && !(name[cut - 1] >= 'A' && name[cut - 1] <= 'Z'));
        if (!word_end)
            continue;
        memset(marked, 0, sg->nitems);
        prefix_run(sg->byname, sg->nkernel_items, name, cut, &lo, &hi);
        for (i = lo; i < hi; i++)
            marked[sg->byname[i] - sg->items] = 1;
        if (!once_per_forward(sg, marked))
            continue;
        found = 1;
        if (cut < len) /* else the glob choose_step_rule wrote */
            snprintf(sg->step_glob, sizeof sg->step_glob, "%.*s*", (int)cut, name);
    }
    for (i = 0; i < sg->nitems && !found; i++) {
        const struct item *x = &sg->items[i];
        if (!x->is_kernel || !x->usable || x == step || !x->count[0] || x->count[1] || x->count[2] || x->other)
            continue;
        memset(marked, 0, sg->nitems);
        marked[sg->step_item] = marked[i] = 1;
        if (once_per_forward(sg, marked)) {
            size_t used = strlen(sg->step_glob);
            snprintf(sg->step_glob + used, sizeof sg->step_glob - used, ",%s", x->name);
            found = 1;
        }
    }
    free(marked);
    return found;
}

/* No prompt reads its token, and the OBS_STEP glob matches one launch in
 * each prompt (its forward's first) and in each step, opening each: a
 * forward loop. */
static int find_forward_loop(struct suggestion *sg)
{
    return !sg->token_loop && sg->step_item >= 0 && sg->step_once && sg->nsteps > 0 && sg->nprompts > 0 &&
           forward_step_glob(sg);
}

/* Kernels in both PREFILL and decode: names cannot tell them apart, an
 * iteration selector may; the per-name rules then cover the calls of the
 * iterations it does not select. A token loop always gets its selectors,
 * and so does a forward loop. */
static int split_shared_kernels(struct suggestion *sg)
{
    size_t i;
    for (i = 0; i < sg->nitems; i++) {
        sg->items[i].shared = shared_kernel(&sg->items[i]);
        sg->shared += (size_t)sg->items[i].shared;
    }
    /* a forward loop's prompts share the steps' kernels (else their names
     * tell them apart); its OBS_STEP stays as it was where no selector is
     * found for it */
    if (sg->shared > 0 && !sg->token_loop) {
        char step_glob[sizeof sg->step_glob];
        memcpy(step_glob, sg->step_glob, sizeof step_glob);
        sg->forward_loop = find_forward_loop(sg) &&
                           choose_forward_selectors(sg->its, sg->nits, sg->selectors, sizeof sg->selectors,
                                                    &sg->htod_ok, &sg->htod_bytes, sg->selector_why,
                                                    sizeof sg->selector_why) == SEL_FORWARD;
        if (sg->forward_loop)
            sg->selector = SEL_FORWARD;
        else
            memcpy(sg->step_glob, step_glob, sizeof step_glob);
    }
    if (sg->forward_loop) {
        /* chosen above */
    } else if (sg->token_loop) {
        sg->selector = choose_token_selectors(sg->its, sg->nits, sg->items, sg->step_item, sg->selectors,
                                              sizeof sg->selectors, &sg->htod_ok, &sg->htod_bytes, sg->selector_why,
                                              sizeof sg->selector_why);
        /* some prompts read no token (generate() with a streamer and without): they end at their forward */
        if (sg->selector == SEL_TOKEN && sg->unread_prompts > 0 && sg->step_item >= 0 && sg->step_once &&
            sg->nstep_set == 1 && forward_step_glob(sg)) {
            size_t used = strlen(sg->selectors);
            snprintf(sg->selectors + used, sizeof sg->selectors - used, ",iter:until:forward");
        }
    } else if (sg->shared == 0) {
        return 0;
    } else {
        sg->selector = choose_selectors(sg->its, sg->nits, sg->items, sg->selectors, sizeof sg->selectors,
                                        &sg->htod_ok, &sg->htod_bytes, sg->selector_why, sizeof sg->selector_why);
    }
    if (sg->selectors[0])
        count_items(sg, 1);
    return 0;
}

/* A serving loop's ITERATION/k range (docs/phases.md, "Serving loops"). */
static int is_iteration(const struct obs_phase *r)
{
    return strcmp(r->phase, "ITERATION") == 0;
}

/* Step openers: the first call of each (generation, step) counts for its
 * item; nsteps: the distinct (generation, step). */
static int count_step_openers(struct suggestion *sg)
{
    const struct obs_trace *t = sg->t;
    struct step_key *steps = malloc(t->nphases * sizeof *steps);
    size_t i, n = 0;
    if (steps == NULL)
        return -1;
    for (i = 0; i < t->nphases; i++) {
        uint32_t step = obs_phase_step(t, (uint32_t)i);
        if (sg->range_first[i] == UINT64_MAX || step == UINT32_MAX || is_iteration(&t->phases[i]))
            continue; /* a serving loop's iterations: OBS_ITERATION (print_iteration_rule) */
        steps[n].thread = t->phases[i].thread;
        steps[n].key = (uint64_t)t->phases[i].generation << 32 | step;
        steps[n].first = sg->range_first[i];
        n++;
    }
    qsort(steps, n, sizeof *steps, cmp_step_key);
    for (i = 0; i < n; i++) {
        long it;
        if (i > 0 && steps[i].key == steps[i - 1].key && steps[i].thread == steps[i - 1].thread)
            continue;
        sg->nsteps++;
        sg->graph_openers += t->calls[steps[i].first].kind == OBS_KIND_GRAPH;
        it = item_of(sg, &t->calls[steps[i].first]);
        if (it >= 0)
            sg->items[it].openers++;
    }
    /* the prompts: generations with a PREFILL range that labels calls */
    for (i = 0, n = 0; i < t->nphases; i++) {
        if (sg->range_first[i] == UINT64_MAX || sg->range_phase[i] != 0)
            continue;
        steps[n].thread = t->phases[i].thread;
        steps[n].key = (uint64_t)t->phases[i].generation << 32;
        steps[n++].first = 0;
    }
    qsort(steps, n, sizeof *steps, cmp_step_key);
    for (i = 0; i < n; i++)
        sg->nprompts += !(i > 0 && steps[i].key == steps[i - 1].key && steps[i].thread == steps[i - 1].thread);
    /* the kernel each prompt's first iteration begins with */
    for (i = 0; i < sg->nits; i++)
        if (sg->its[i].prompt_first && sg->its[i].item >= 0)
            sg->items[sg->its[i].item].prompt_openers++;
    free(steps);
    return 0;
}

/* Each item goes to the phase that labels most of its calls. In a token
 * loop with OBS_STEP, a kernel that runs in decode steps too is never
 * named PREFILL: the PREFILL calls the selectors leave (after the prompt's
 * first token read: a forward that reads inside itself, docs/phases.md)
 * stay PREFILL whatever their name until OBS_STEP's kernel opens the
 * decode, while a PREFILL name in a step would begin a new generation. */
static void assign_phases(struct suggestion *sg)
{
    size_t i;
    int step_rule = (sg->token_loop || sg->forward_loop) && sg->step_item >= 0;
    for (i = 0; i < sg->nitems; i++) {
        const struct item *it = &sg->items[i];
        int best = -1, p;
        for (p = 0; p < NPH; p++)
            if (it->count[p] && (step_rule && p == 0 && (it->count[1] || it->count[2]) ? 0 : 1) &&
                (best < 0 || it->count[p] > it->count[best]))
                best = p;
        sg->items[i].phase = best;
    }
}

struct named_range {
    const char *name;
    uint32_t index;
};

static int cmp_named_range(const void *a, const void *b)
{
    const struct named_range *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The ranges whose phase no rule can name: the first of each phase name,
 * in range order. */
static int find_unruled_phases(struct suggestion *sg)
{
    const struct obs_trace *t = sg->t;
    struct named_range *r;
    size_t i, n = 0;
    if (sg->other_phase_calls == 0)
        return 0;
    r = malloc(t->nphases * sizeof *r);
    sg->unruled = malloc(t->nphases * sizeof *sg->unruled);
    if (r == NULL || sg->unruled == NULL) {
        free(r);
        return -1;
    }
    for (i = 0; i < t->nphases; i++)
        if (sg->range_phase[i] < 0)
            r[n++] = (struct named_range){.name = t->phases[i].phase, .index = (uint32_t)i};
    qsort(r, n, sizeof *r, cmp_named_range);
    for (i = 0; i < n; i++)
        if (i == 0 || strcmp(r[i].name, r[i - 1].name) != 0)
            sg->unruled[sg->nunruled++] = r[i].index;
    free(r);
    qsort(sg->unruled, sg->nunruled, sizeof *sg->unruled, cmp_u32);
    return 0;
}

/* ---- globs: the shortest safe prefix of a kernel name ---------------------------- */

/* The kernel items whose names start with prefix[0..cut): [*lo, *hi) of
 * byname (sorted by strcmp, so they are one run). */
static void prefix_run(struct item *const *byname, size_t n, const char *prefix, size_t cut, size_t *lo, size_t *hi)
{
    size_t a = 0, b = n;
    while (a < b) { /* first name >= the prefix */
        size_t mid = a + (b - a) / 2;
        if (strncmp(byname[mid]->name, prefix, cut) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    b = n;
    while (a < b) { /* first name past the names with the prefix */
        size_t mid = a + (b - a) / 2;
        if (strncmp(byname[mid]->name, prefix, cut) <= 0)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
}

/* Prefix counts of the kernel items per phase in name order:
 * in_phase[(p + 1) * (n + 1) + i] = items of phase p (-1 .. NPH - 1)
 * among byname[0..i). */
static size_t *count_phases_by_name(struct item *const *byname, size_t n)
{
    size_t *in_phase = calloc((NPH + 1) * (n + 1), sizeof *in_phase), i;
    int p;
    if (in_phase == NULL)
        return NULL;
    for (p = -1; p < NPH; p++)
        for (i = 0; i < n; i++)
            in_phase[(size_t)(p + 1) * (n + 1) + i + 1] =
                in_phase[(size_t)(p + 1) * (n + 1) + i] + (byname[i]->phase == p);
    return in_phase;
}

/* The shortest prefix of it->name ending at '_' that no foreign kernel
 * item starts with (foreign: kernel items of another phase than it's, or
 * all but it itself with in_phase NULL), as "prefix*"; else the exact name. */
static void glob_for(const struct suggestion *sg, const size_t *in_phase, const struct item *it, char *out,
                     size_t len)
{
    size_t n = sg->nkernel_items, cut, lo, hi;
    for (cut = 1; it->name[cut - 1]; cut++) {
        size_t foreign;
        if (it->name[cut - 1] != '_')
            continue;
        prefix_run(sg->byname, n, it->name, cut, &lo, &hi);
        if (in_phase != NULL) {
            const size_t *mine = &in_phase[(size_t)(it->phase + 1) * (n + 1)];
            foreign = (hi - lo) - (mine[hi] - mine[lo]);
        } else {
            foreign = hi - lo - 1; /* it is in the run */
        }
        if (foreign == 0) {
            snprintf(out, len, "%.*s*", (int)cut, it->name);
            return;
        }
    }
    snprintf(out, len, "%s", it->name);
}

struct glob_of {
    int phase;
    const char *glob;
    size_t item;
};

static int cmp_glob_of(const void *a, const void *b)
{
    const struct glob_of *x = a, *y = b;
    int c = x->phase != y->phase ? (x->phase > y->phase) - (x->phase < y->phase) : strcmp(x->glob, y->glob);
    return c ? c : (x->item > y->item) - (x->item < y->item);
}

/* Each rule item's glob; covered: an earlier item of the same phase
 * already prints that glob (items sorted by phase, glob, index). */
static int make_globs(struct suggestion *sg)
{
    size_t *in_phase = count_phases_by_name(sg->byname, sg->nkernel_items);
    struct glob_of *g = malloc((sg->nitems + 1) * sizeof *g);
    size_t i, n = 0;
    int rc = -1;
    sg->globs = calloc(sg->nitems + 1, sizeof *sg->globs);
    sg->covered = calloc(sg->nitems + 1, 1);
    if (in_phase == NULL || g == NULL || sg->globs == NULL || sg->covered == NULL)
        goto out;
    for (i = 0; i < sg->nitems; i++) {
        const struct item *it = &sg->items[i];
        if (it->phase < 0 || !it->usable)
            continue;
        if (!it->is_kernel) {
            snprintf(sg->globs[i], sizeof sg->globs[i], "%s", it->name);
            continue;
        }
        glob_for(sg, in_phase, it, sg->globs[i], sizeof sg->globs[i]);
        g[n++] = (struct glob_of){.phase = it->phase, .glob = sg->globs[i], .item = i};
    }
    qsort(g, n, sizeof *g, cmp_glob_of);
    for (i = 1; i < n; i++)
        sg->covered[g[i].item] = g[i].phase == g[i - 1].phase && strcmp(g[i].glob, g[i - 1].glob) == 0;
    rc = 0;
out:
    free(in_phase);
    free(g);
    return rc;
}

/* A token loop's steps opened by a few kernels and graph launches (a
 * torch.compile'd step: its first calls run eagerly, compiling and
 * recording, then its CUDA graph tree replays): OBS_STEP names every
 * kernel that opens one, when there are at most STEP_SET_MAX, all usable,
 * and they and the graph launches open every step (with OBS_STEP a step
 * opens at the first of its launches, or of the graph launches, after
 * each token read). 1 when it does. */
static int step_set_rule(struct suggestion *sg)
{
    size_t i, n = 0, used = 0;
    uint64_t openers = 0;
    long set[STEP_SET_MAX];
    for (i = 0; i < sg->nitems; i++) {
        if (!sg->items[i].openers)
            continue;
        if (!sg->items[i].usable || !sg->items[i].is_kernel || n == STEP_SET_MAX)
            return 0;
        set[n++] = (long)i;
        openers += sg->items[i].openers;
    }
    /* with no graph launch opening a step, the rules' steps open at the first launch after each token read
     * (openers that take turns need no OBS_STEP); a replay's fill before it is what needs one */
    if (n < 2 || sg->graph_openers == 0 || openers + sg->graph_openers != sg->nsteps)
        return 0;
    sg->step_glob[0] = '\0';
    for (i = 0; i < n; i++) { /* most openers first; the plain names (usable_text: no glob characters) */
        size_t k, best = i;
        long x;
        for (k = i + 1; k < n; k++)
            if (sg->items[set[k]].openers > sg->items[set[best]].openers)
                best = k;
        x = set[best], set[best] = set[i], set[i] = x;
        sg->items[x].step_set = 1;
        used += (size_t)snprintf(sg->step_glob + used, sizeof sg->step_glob - used, "%s%s", i ? "," : "",
                                 sg->items[x].name);
    }
    sg->step_item = set[0];
    sg->nstep_set = n;
    sg->step_once = 1;
    for (i = 0; i < n; i++)
        sg->step_runs += sg->items[set[i]].count[1] + sg->items[set[i]].count[2];
    return 1;
}

/* OBS_STEP: the usable item that opens most decode steps. In a token
 * loop only one that opens every step (with OBS_STEP, only its first
 * launch after each token read opens a step, so it may run more than once
 * a step), or a few that do with graph launches (step_set_rule); without
 * one, the rules' steps open after token reads. */
static void choose_step_rule(struct suggestion *sg)
{
    size_t i;
    sg->step_item = -1;
    for (i = 0; i < sg->nitems; i++)
        if (sg->items[i].openers && sg->items[i].usable && sg->items[i].is_kernel &&
            (sg->step_item < 0 || sg->items[i].openers > sg->items[sg->step_item].openers))
            sg->step_item = (long)i;
    if (sg->step_item < 0 && sg->token_loop && sg->nsteps > 0 && sg->graph_openers == sg->nsteps) {
        /* every step replays a graph: OBS_STEP names the kernel every prompt's forward begins with and no
         * decode step launches, which only says that a graph launch after a token read opens the next step
         * (with it the calls before that launch stay where they are: the fill of the graph's inputs) */
        for (i = 0; i < sg->nitems; i++)
            if (sg->items[i].prompt_openers == sg->nprompts && sg->items[i].usable && sg->items[i].is_kernel &&
                !sg->items[i].count[1] && !sg->items[i].count[2])
                sg->step_item = (long)i;
        sg->step_graph_only = sg->step_item >= 0;
    }
    if (sg->step_item < 0)
        return;
    sg->step_runs = sg->items[sg->step_item].count[1] + sg->items[sg->step_item].count[2];
    /* in a token loop a graph launch after a token read opens the next step too, with OBS_STEP (a decode
     * step captured once, its graph replayed: the kernel begins the forward the graph replays) */
    sg->step_once = sg->items[sg->step_item].openers + (sg->token_loop ? sg->graph_openers : 0) == sg->nsteps &&
                    (sg->token_loop || sg->step_runs == sg->nsteps);
    if (sg->token_loop && !sg->step_once) {
        sg->step_rejected = sg->step_item;
        sg->step_item = -1;
        sg->step_runs = 0;
        if (step_set_rule(sg))
            sg->step_rejected = -1;
        return;
    }
    sg->items[sg->step_item].step_set = 1;
    sg->nstep_set = 1;
    glob_for(sg, NULL, &sg->items[sg->step_item], sg->step_glob, sizeof sg->step_glob);
}

/* A token loop's rules name kernels only: the engine decides at launches,
 * and a named copy would move a phase by itself. */
static void drop_transfers(struct suggestion *sg)
{
    size_t i;
    for (i = 0; i < sg->nitems; i++)
        if (!sg->items[i].is_kernel)
            sg->items[i].phase = -1;
}

/* The whole analysis; 0, or -1 out of memory. */
static int analyse(struct suggestion *sg)
{
    sg->step_rejected = -1;
    if (build_items(sg) != 0 || scan_ranges(sg) != 0)
        return -1;
    count_items(sg, 0);
    if (find_all_iterations(sg) != 0 || count_step_openers(sg) != 0)
        return -1;
    choose_step_rule(sg);
    if (split_shared_kernels(sg) != 0)
        return -1;
    assign_phases(sg);
    if (sg->token_loop || sg->forward_loop)
        drop_transfers(sg);
    if (find_unruled_phases(sg) != 0 || make_globs(sg) != 0)
        return -1;
    return 0;
}

/* ---- printing ------------------------------------------------------------------- */

static void print_header(const struct suggestion *sg, FILE *out)
{
    fprintf(out, "# obs-report suggest-phases: %s: %zu labelled calls, %zu decode steps\n", sg->t->path, sg->nlabelled,
            sg->nsteps);
    fprintf(out, "# rules that reproduce the trace's phases (globs over kernel base names); paste them before\n"
                 "# running the program under obsshim\n");
}

static void print_selector(const struct suggestion *sg, FILE *out)
{
    switch (sg->selector) {
    case SEL_NONE_PREFILL:
        fputs("# no iteration begins in PREFILL: no iteration selector\n", out);
        break;
    case SEL_HTOD:
        fprintf(out, "# iteration selector: every prompt's first iteration follows a host-to-device copy%s, no other "
                     "iteration does\n",
                sg->htod_bytes ? " of at least the bytes named" : "");
        break;
    case SEL_THREADS:
        fputs("# iteration selector: PREFILL iterations start with a larger launch than any other iteration "
              "starting with the same kernel\n",
              out);
        break;
    case SEL_HTOD_THREADS:
        fputs("# iteration selectors: a prompt's first iteration follows a host-to-device copy, its later chunks "
              "start with a larger launch than any other iteration starting with the same kernel\n",
              out);
        break;
    case SEL_TOKEN: {
        char bytes[160] = "";
        if (sg->htod_bytes)
            snprintf(bytes, sizeof bytes,
                     " of at least %llu bytes (other iterations follow smaller copies in: a step's token or position)",
                     (unsigned long long)sg->htod_bytes);
        fprintf(out, "# iteration selectors: a prompt's iterations up to its token read (iter:until:token)%s%s%s%s%s\n",
                strncmp(sg->selectors, "iter:after:", 11) == 0 ? "; a later prompt's first iteration follows a "
                                                                 "host-to-device copy"
                : strncmp(sg->selectors, "iter:until:", 11) != 0 ? "; later prompts and chunks read after a token "
                                                                   "start with a larger launch"
                                                                 : "",
                bytes, strncmp(sg->selectors, "iter:after:", 11) == 0 ? ", no other iteration does" : "",
                sg->step_item < 0      ? ""
                : sg->nstep_set > 1 ? "; only OBS_STEP's kernels (and graph launches) open the decode, so the work "
                                      "after a token read stays where it is"
                                    : "; only OBS_STEP's kernel opens the decode, so the work after a token read "
                                      "stays where it is",
                strstr(sg->selectors, "iter:until:forward") != NULL
                    ? "; a prompt that reads no token goes on until the next forward's OBS_STEP kernel "
                      "(iter:until:forward)"
                    : "");
        break;
    }
    case SEL_FORWARD:
        fputs("# iteration selectors: no prompt reads its token; each prompt's first iteration follows a "
              "host-to-device copy, no other iteration does, and a prompt goes on through its forward until the "
              "next forward's OBS_STEP kernel (iter:until:forward); only OBS_STEP's kernel opens the decode\n",
              out);
        break;
    case SEL_NONE_FOUND:
        fprintf(out,
                "# no iteration selector separates them (%s%s): the rules below go by names only and will not "
                "reproduce the trace's PREFILL\n",
                sg->htod_ok ? "" : "host-to-device copies do not precede exactly the prompts' first iterations; ",
                sg->selector_why);
        break;
    }
}

static void print_shared(const struct suggestion *sg, FILE *out)
{
    size_t listed = 0, i;
    if (sg->shared == 0) {
        if (sg->token_loop || sg->forward_loop)
            print_selector(sg, out);
        return;
    }
    fprintf(out, "# PREFILL and DECODE share %zu kernel%s (", sg->shared, sg->shared == 1 ? "" : "s");
    for (i = 0; i < sg->nitems; i++)
        if (sg->items[i].shared && listed++ < 4)
            fprintf(out, "%s%s", listed > 1 ? ", " : "", sg->items[i].name);
    fprintf(out, "%s): names cannot tell them apart\n", listed > 4 ? ", ..." : "");
    print_selector(sg, out);
}

static void print_unruled_phases(const struct suggestion *sg, FILE *out)
{
    size_t i;
    for (i = 0; i < sg->nunruled; i++) {
        const struct obs_phase *r = &sg->t->phases[sg->unruled[i]];
        if (is_iteration(r))
            continue; /* OBS_ITERATION says them (print_iteration_rule) */
        if (r->phase[0])
            fprintf(out, "# phase '%s' has no rule (OBS_PHASES names PREFILL, DECODE and KV_GATHER)\n", r->phase);
        else
            fprintf(out, "# phase id %u has no name in the trace: no rule\n", r->phase_id);
    }
}

static void print_item_notes(const struct suggestion *sg, FILE *out)
{
    size_t i;
    for (i = 0; i < sg->nitems; i++) {
        const struct item *it = &sg->items[i];
        int p, n = 0;
        if (it->phase < 0)
            continue;
        for (p = 0; p < NPH; p++)
            n += it->count[p] > 0;
        if (n > 1 || it->other)
            fprintf(out, "# note: %s is in PREFILL %llu, KV_GATHER %llu, DECODE %llu, elsewhere %llu times; "
                         "rule: %s\n",
                    it->name, (unsigned long long)it->count[0], (unsigned long long)it->count[1],
                    (unsigned long long)it->count[2], (unsigned long long)it->other, rule_phases[it->phase]);
        if (!it->usable)
            fprintf(out, "# left out: kernel name '%s' cannot be written as a glob\n", it->name);
    }
}

/* export OBS_PHASES='PREFILL=...;KV_GATHER=...;DECODE=...' */
static void print_phases_rule(const struct suggestion *sg, FILE *out)
{
    int p, first_rule = 1;
    size_t i;
    fputs("export OBS_PHASES='", out);
    for (p = 0; p < NPH; p++) {
        int first_pat = 1;
        if (p == 0 && sg->selectors[0]) {
            fprintf(out, "PREFILL=%s", sg->selectors);
            first_pat = 0;
            first_rule = 0;
        }
        for (i = 0; i < sg->nitems; i++) {
            if (sg->items[i].phase != p || !sg->items[i].usable || sg->covered[i])
                continue;
            fprintf(out, "%s%s%s%s", first_pat && !first_rule ? ";" : "", first_pat ? rule_phases[p] : "",
                    first_pat ? "=" : ",", sg->globs[i]);
            first_pat = 0;
            first_rule = 0;
        }
    }
    fputs("'\n", out);
}

static void print_step_rule(const struct suggestion *sg, FILE *out)
{
    const struct item *best = sg->step_item >= 0 ? &sg->items[sg->step_item] : NULL;
    if (sg->nsteps == 0) {
        fputs("# no step rule: the trace has no decode steps\n", out);
    } else if (best == NULL && sg->token_loop) {
        if (sg->step_rejected >= 0)
            fprintf(out, "# no OBS_STEP: %s opens %llu of the %zu decode steps, not all; steps open at the first launch "
                         "after a token read\n",
                    sg->items[sg->step_rejected].name, (unsigned long long)sg->items[sg->step_rejected].openers,
                    sg->nsteps);
        else
            fputs("# no OBS_STEP: steps open at the first launch after a token read\n", out);
    } else if (best == NULL) {
        fputs("# no step rule: the calls that open decode steps have no usable name\n", out);
    } else {
        if (sg->step_graph_only)
            fprintf(out, "# every one of the %zu decode steps opens at a graph launch (a forward replayed: a graph "
                         "launch after a token read opens the next step); OBS_STEP names the kernel each of the %zu "
                         "prompts' forwards begins with, which no step launches, so that the calls before each "
                         "replay stay where they are\n",
                    sg->nsteps, sg->nprompts);
        else if (sg->nstep_set > 1)
            fprintf(out, "# %zu kernels open %llu of the %zu decode steps (%s the most), graph launches the other %zu "
                         "(a graph launch after a token read opens the next step): OBS_STEP names them all\n",
                    sg->nstep_set, (unsigned long long)(sg->nsteps - sg->graph_openers), sg->nsteps, best->name,
                    sg->graph_openers);
        else if (best->openers < sg->nsteps && sg->token_loop && best->openers + sg->graph_openers == sg->nsteps)
            fprintf(out, "# %s opens %llu of the %zu decode steps, graph launches the other %zu (each replays a "
                         "forward: a graph launch after a token read opens the next step)\n",
                    best->name, (unsigned long long)best->openers, sg->nsteps, sg->graph_openers);
        else if (best->openers < sg->nsteps)
            fprintf(out, "# %s opens %llu of the %zu decode steps\n", best->name, (unsigned long long)best->openers,
                    sg->nsteps);
        fprintf(out, "export OBS_STEP='%s'\n", sg->step_glob);
    }
}

/* OBS_LAYER (docs/layers.md): the kernel most layer instances begin with
 * (the first kernel launch of each run of a thread's calls in one layer). */
static int print_layer_rule(const struct obs_trace *t, FILE *out)
{
    uint32_t *prev = malloc((t->nthreads ? t->nthreads : 1) * sizeof *prev);
    uint64_t *starts = calloc(t->nkernels ? t->nkernels : 1, sizeof *starts), total = 0, most = 0;
    unsigned char *waiting = calloc(t->nthreads ? t->nthreads : 1, 1);
    size_t i, best = 0;
    char name[ITEM_MAX];
    if (prev == NULL || starts == NULL || waiting == NULL) {
        free(prev);
        free(starts);
        free(waiting);
        return -1;
    }
    for (i = 0; i < t->nthreads; i++)
        prev[i] = OBS_NO_LAYER;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        if (c->thread >= t->nthreads)
            continue;
        if (c->layer != prev[c->thread] && c->layer != OBS_NO_LAYER)
            waiting[c->thread] = 1; /* a layer instance begins: its first kernel launch names it */
        prev[c->thread] = c->layer;
        if (waiting[c->thread] && c->kind == OBS_KIND_KERNEL && c->kernel < t->nkernels) {
            waiting[c->thread] = 0;
            starts[c->kernel]++;
            total++;
        }
    }
    for (i = 0; i < t->nkernels; i++)
        if (starts[i] > most) {
            most = starts[i];
            best = i;
        }
    if (total == 0) {
        fputs("# no OBS_LAYER: the trace has no layers (docs/layers.md)\n", out);
    } else {
        obs_kernel_base_name_of(t->kernels[best].mangled, t->kernels[best].demangled, name, sizeof name);
        if (!usable_text(name)) { /* as every name suggest-phases writes */
            fprintf(out, "# no OBS_LAYER: the kernel %llu of the %llu layers begin with has no usable base name\n",
                    (unsigned long long)most, (unsigned long long)total);
        } else {
            fprintf(out, "# the layers' first kernel: %llu of the %llu layer instances begin with it (docs/layers.md)\n",
                    (unsigned long long)most, (unsigned long long)total);
            fprintf(out, "export OBS_LAYER='%s'\n", name);
        }
    }
    free(prev);
    free(starts);
    free(waiting);
    return 0;
}

/* OBS_ITERATION (docs/phases.md, "Rules"): the kernels a serving loop's
 * iterations begin with (the first call of each ITERATION/k instance of a
 * thread), by base name, most first; each opens the next iteration at its
 * first launch after a token read. An instance begun by another call (a
 * graph launch, a copy) has no opener to name: said, and none written. */
#define ITER_OPENERS_MAX 4
static int print_iteration_rule(const struct obs_trace *t, FILE *out)
{
    struct opener {
        char name[ITEM_MAX];
        uint64_t n;
    } op[ITER_OPENERS_MAX];
    size_t nop = 0, i, j, iterations = 0, unnamed = 0;
    uint32_t *last = malloc((t->nthreads ? t->nthreads : 1) * sizeof *last);
    char glob[ITER_OPENERS_MAX * (ITEM_MAX + 1)];
    if (last == NULL)
        return -1;
    for (i = 0; i < t->nthreads; i++)
        last[i] = OBS_NONE;
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint32_t r = c->phase;
        char name[ITEM_MAX];
        if (c->thread >= t->nthreads || r == OBS_NONE || !is_iteration(&t->phases[r]))
            continue;
        if (last[c->thread] != OBS_NONE && t->phases[last[c->thread]].generation == t->phases[r].generation &&
            obs_phase_step(t, last[c->thread]) == obs_phase_step(t, r)) {
            last[c->thread] = r;
            continue;
        }
        last[c->thread] = r; /* the first call of an iteration */
        iterations++;
        name[0] = '\0';
        if (c->kind == OBS_KIND_KERNEL && c->kernel < t->nkernels)
            obs_kernel_base_name_of(t->kernels[c->kernel].mangled, t->kernels[c->kernel].demangled, name,
                                    sizeof name);
        if (!usable_text(name)) { /* as every name suggest-phases writes */
            unnamed++;
            continue;
        }
        for (j = 0; j < nop && strcmp(op[j].name, name) != 0; j++)
            ;
        if (j == nop && nop == ITER_OPENERS_MAX) {
            unnamed++;
            continue;
        }
        if (j == nop) {
            snprintf(op[nop].name, sizeof op[nop].name, "%s", name);
            op[nop++].n = 0;
        }
        op[j].n++;
    }
    free(last);
    if (iterations == 0)
        return 0;
    if (unnamed > 0) {
        fprintf(out, "# no OBS_ITERATION: %zu of the %zu serving-loop iterations begin with a call no kernel name "
                     "can open (a graph launch, a copy, or past %d kernels)\n",
                unnamed, iterations, ITER_OPENERS_MAX);
        return 0;
    }
    for (i = 1; i < nop; i++) /* most first */
        for (j = i; j > 0 && op[j].n > op[j - 1].n; j--) {
            struct opener tmp = op[j];
            op[j] = op[j - 1];
            op[j - 1] = tmp;
        }
    for (i = 0, j = 0; i < nop; i++) { /* j: the glob's length; each name and its comma fit */
        size_t len = strnlen(op[i].name, sizeof op[i].name - 1);
        if (j + (i > 0) + len + 1 > sizeof glob)
            break;
        if (i > 0)
            glob[j++] = ',';
        memcpy(glob + j, op[i].name, len);
        j += len;
    }
    glob[j] = '\0';
    fprintf(out, "# a serving loop: %zu iterations, each begun by %s (each opens the next iteration at its first "
                 "launch after a token read)\n",
            iterations, nop == 1 ? "this kernel" : "one of these kernels");
    fprintf(out, "export OBS_ITERATION='%s'\n", glob);
    return 0;
}

int obs_report_suggest_phases(const struct obs_trace *t, FILE *out)
{
    struct suggestion sg = {.t = t};
    size_t i;
    int rc = -1;

    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase != OBS_NONE)
            sg.nlabelled++;
    if (t->nphases == 0 || sg.nlabelled == 0) {
        fprintf(out, "# %s: the trace has no phases (no PHASE records label its calls)\n", t->path);
        return fflush(out) == 0 && !ferror(out) ? 1 : -1;
    }
    if (analyse(&sg) == 0) {
        print_header(&sg, out);
        print_shared(&sg, out);
        print_unruled_phases(&sg, out);
        print_item_notes(&sg, out);
        print_phases_rule(&sg, out);
        print_step_rule(&sg, out);
        rc = print_iteration_rule(t, out) == 0 && print_layer_rule(t, out) == 0 && fflush(out) == 0 && !ferror(out)
                 ? 0
                 : -1;
    }
    if (rc < 0 && errno == 0)
        errno = ENOMEM;
    suggestion_free(&sg);
    return rc;
}
