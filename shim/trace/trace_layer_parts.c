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

/* Where a kernel of an instance with several passes was seen: in its first
 * EMBED, in its last HEAD (after its last layered call). */
enum { SEEN_EMBED = 1, SEEN_HEAD = 2 };

static uint8_t seen_of(const struct obs_trace *t, const struct obs_call *c, const uint8_t *seen)
{
    return c->kernel != 0 && c->kernel < t->nkernels ? seen[c->kernel] : 0;
}

/* The start of the longest run of kernels ending list[from, to) that
 * repeats the end of the first EMBED's kernels (embed[0, nembed)); to when
 * none does. */
static size_t repeated_embed(const struct obs_trace *t, const size_t *list, size_t from, size_t to,
                             const uint32_t *embed, size_t nembed)
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
    return embed_from;
}

/* The stretch between two passes, calls list[from, to): HEAD, then EMBED.
 * The split leaves before it the most kernels seen only in the instance's
 * last HEAD (a final norm, an LM head) and after it the most seen only in
 * its first EMBED (an embedding lookup, positions): a later pass may skip
 * part of the first EMBED (Hugging Face checks the attention mask in its
 * first forward only), so a run repeating the first EMBED's end can stop
 * short of the lookup. Among the best splits: the start of that run when
 * it is one, else the last (kernels seen in both or neither, between the
 * LM head and the lookup, are the earlier pass's). */
static void split_between(const struct obs_trace *t, const size_t *list, size_t from, size_t to,
                          const uint32_t *embed, size_t nembed, const uint8_t *seen, uint8_t *part)
{
    size_t i, embed_only = 0, head_left = 0, embed_left = 0, best = 0, best_at = to, at_repeated = 0;
    size_t repeated = repeated_embed(t, list, from, to, embed, nembed), embed_from;
    for (i = from; i < to; i++)
        if (t->calls[list[i]].kind == OBS_KIND_KERNEL)
            embed_only += seen_of(t, &t->calls[list[i]], seen) == SEEN_EMBED;
    /* the splits: before each kernel, and at the end (all HEAD) */
    for (i = from; i <= to; i++) {
        const struct obs_call *c = i < to ? &t->calls[list[i]] : NULL;
        size_t score;
        uint8_t where;
        if (c != NULL && c->kind != OBS_KIND_KERNEL)
            continue;
        score = head_left + embed_only - embed_left;
        if (score >= best) {
            best = score;
            best_at = i;
        }
        if (i == repeated)
            at_repeated = score;
        where = c != NULL ? seen_of(t, c, seen) : 0;
        head_left += where == SEEN_HEAD;
        embed_left += where == SEEN_EMBED;
    }
    embed_from = at_repeated == best ? repeated : best_at;
    for (i = from; i < to; i++)
        part[list[i]] = i < embed_from ? OBS_LAYER_PART_HEAD : OBS_LAYER_PART_EMBED;
}

/* Mark where each kernel of the instance's first EMBED, list[s, first),
 * and of its last HEAD, list[last + 1, e), was seen. */
static uint8_t *seen_in_parts(const struct obs_trace *t, const size_t *list, size_t s, size_t first, size_t last,
                              size_t e)
{
    uint8_t *seen = calloc(t->nkernels ? t->nkernels : 1, 1);
    size_t i;
    if (seen == NULL)
        return NULL;
    for (i = s; i < e; i++) {
        const struct obs_call *c = &t->calls[list[i]];
        if (c->kind == OBS_KIND_KERNEL && c->kernel < t->nkernels && (i < first || i > last))
            seen[c->kernel] |= i < first ? SEEN_EMBED : SEEN_HEAD;
    }
    return seen;
}

/* One instance, list[s, e) (its calls in record order). */
static int mark_instance(const struct obs_trace *t, const size_t *list, size_t s, size_t e, uint8_t *part)
{
    size_t i, first = e, last = e, nembed = 0;
    uint32_t prev = 0;
    uint32_t *embed;
    uint8_t *seen = NULL; /* made at the instance's first split */
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
            if (seen == NULL && (seen = seen_in_parts(t, list, s, first, last, e)) == NULL) {
                free(embed);
                return -1;
            }
            split_between(t, list, gap, i, embed, nembed, seen, part);
        }
        prev = c->layer;
    }
    free(seen);
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
