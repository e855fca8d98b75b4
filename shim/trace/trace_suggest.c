/* suggest-phases: see trace_suggest.h. The rule syntax is the phase
 * engine's (shim/phases/phase_rules.h): PHASE=pattern,pattern;... with PHASE one
 * of PREFILL, DECODE, KV_GATHER; patterns are globs over kernel base
 * names, "memcpy:KIND" or "memset"; the first pattern that matches wins. */
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

int obs_report_suggest_phases(const struct obs_trace *t, FILE *out)
{
    size_t nitems = 0, i, k, nsteps = 0, nlabelled = 0;
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
        long it = item_of(c, kernel_item, copy_item, memset_item);
        int ph = c->phase != OBS_NONE ? range_phase[c->phase] : -1;
        if (c->phase != OBS_NONE && range_first[c->phase] == UINT64_MAX)
            range_first[c->phase] = i;
        if (c->phase != OBS_NONE && ph < 0)
            other_phase_calls++;
        if (it < 0)
            continue;
        if (ph >= 0)
            items[it].count[ph]++;
        else
            items[it].other++;
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

    /* Each item goes to the phase that labels most of its calls. */
    for (i = 0; i < nitems; i++) {
        int best = -1, p;
        for (p = 0; p < NPH; p++)
            if (items[i].count[p] && (best < 0 || items[i].count[p] > items[i].count[best]))
                best = p;
        items[i].phase = best;
    }

    fprintf(out, "# obs-report suggest-phases: %s: %zu labelled calls, %zu decode steps\n", t->path, nlabelled,
            nsteps);
    fprintf(out, "# rules that reproduce the trace's phases (globs over kernel base names); paste them before\n"
                 "# running the program under obsshim\n");
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
    return rc;
}
