/* EMBED and HEAD of each phase instance with layers: see trace_layer_parts.h. */
#include "trace_layer_parts.h"

#include <stdlib.h>
#include <string.h>

/* The instance key of a call: PREFILL or not, generation, step. */
struct key {
    uint32_t generation, step;
    uint8_t decode;
};

static struct key key_of(const struct obs_trace *t, const struct obs_call *c)
{
    const struct obs_phase *p = &t->phases[c->phase];
    return (struct key){p->generation, obs_phase_step(t, c->phase), strcmp(p->phase, "PREFILL") != 0};
}

static int same_key(struct key a, struct key b)
{
    return a.generation == b.generation && a.step == b.step && a.decode == b.decode;
}

/* The stretch between two passes, calls list[from, to): HEAD, then EMBED
 * from the first kernel of the longest run of kernels ending it that
 * repeats the end of the first EMBED's kernels (embed[0, nembed)). */
static void split_between(const struct obs_trace *t, const size_t *list, size_t from, size_t to,
                          const uint32_t *embed, size_t nembed, uint8_t *part)
{
    size_t i = to, matched = 0, embed_from = to;
    while (i > from && matched < nembed) {
        const struct obs_call *c = &t->calls[list[i - 1]];
        i--;
        if (c->kind != OBS_KIND_KERNEL)
            continue;
        if (c->kernel != embed[nembed - 1 - matched])
            break;
        matched++;
        embed_from = i;
    }
    for (i = from; i < to; i++)
        part[list[i]] = i < embed_from ? OBS_LAYER_PART_HEAD : OBS_LAYER_PART_EMBED;
}

/* One instance, list[s, e) (its calls in record order). */
static int mark_instance(const struct obs_trace *t, const size_t *list, size_t s, size_t e, uint8_t *part)
{
    size_t i, first = e, last = e, nembed = 0;
    uint32_t prev = 0;
    uint32_t *embed;
    for (i = s; i < e; i++)
        if (t->calls[list[i]].layer != OBS_NO_LAYER) {
            if (first == e)
                first = i;
            last = i;
        }
    if (first == e)
        return 0; /* no layers: no EMBED or HEAD */
    embed = malloc((first - s + 1) * sizeof *embed);
    if (embed == NULL)
        return -1;
    for (i = s; i < first; i++) {
        part[list[i]] = OBS_LAYER_PART_EMBED;
        if (t->calls[list[i]].kind == OBS_KIND_KERNEL)
            embed[nembed++] = t->calls[list[i]].kernel;
    }
    for (i = last + 1; i < e; i++)
        part[list[i]] = OBS_LAYER_PART_HEAD;
    /* passes after the first: a layered call whose layer is below the one before begins one */
    for (i = first, prev = t->calls[list[first]].layer; i <= last; i++) {
        const struct obs_call *c = &t->calls[list[i]];
        size_t gap;
        if (c->layer == OBS_NO_LAYER)
            continue;
        if (c->layer < prev) {
            for (gap = i; gap > first && t->calls[list[gap - 1]].layer == OBS_NO_LAYER; gap--)
                ;
            split_between(t, list, gap, i, embed, nembed, part);
        }
        prev = c->layer;
    }
    free(embed);
    return 0;
}

uint8_t *obs_layer_parts(const struct obs_trace *t)
{
    uint8_t *part = calloc(t->ncalls ? t->ncalls : 1, 1);
    size_t *start = calloc((size_t)t->nthreads + 1, sizeof *start), *list = NULL, *fill = NULL, i, th;
    if (part == NULL || start == NULL)
        goto fail;
    /* each thread's calls with a phase, in their order in t->calls (the thread's record order) */
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase != OBS_NONE && t->calls[i].thread < t->nthreads)
            start[t->calls[i].thread + 1]++;
    for (th = 0; th < t->nthreads; th++)
        start[th + 1] += start[th];
    list = malloc((start[t->nthreads] ? start[t->nthreads] : 1) * sizeof *list);
    fill = malloc(((size_t)t->nthreads + 1) * sizeof *fill);
    if (list == NULL || fill == NULL)
        goto fail;
    memcpy(fill, start, ((size_t)t->nthreads + 1) * sizeof *fill);
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].phase != OBS_NONE && t->calls[i].thread < t->nthreads)
            list[fill[t->calls[i].thread]++] = i;
    for (th = 0; th < t->nthreads; th++) {
        size_t s = start[th], j;
        for (j = start[th]; j <= start[th + 1]; j++)
            if (j == start[th + 1] || !same_key(key_of(t, &t->calls[list[j]]), key_of(t, &t->calls[list[s]]))) {
                if (j > s && mark_instance(t, list, s, j, part) != 0)
                    goto fail;
                s = j;
            }
    }
    free(start);
    free(list);
    free(fill);
    return part;
fail:
    free(part);
    free(start);
    free(list);
    free(fill);
    return NULL;
}
