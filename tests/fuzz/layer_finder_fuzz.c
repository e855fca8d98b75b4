/* Fuzz body for the layer finder (shim/phases/layer_finder.c,
 * obs_layers_find). Built two ways: with -DOBS_LIBFUZZER and clang
 * -fsanitize=fuzzer,address,undefined as a libFuzzer target (`make fuzz
 * FUZZ_TARGET=layer-finder`, tests/fuzz/run-fuzz-layer-finder.sh), and
 * linked into tests/t_layer_finder, which replays the kept corpus
 * (tests/fuzz/layer_finder_corpus) under make check.
 *
 * The input: four header bytes, then the sequence.
 *   byte 0, flags: bit 0 a norm_like callback (ids 0x40..0x4f are norms),
 *     bit 1 start_named (norm_like then says "the id byte 3 names"), bit 2
 *     the stamps jumped to UINT32_MAX - (byte 0 >> 4) before the third call
 *     (they wrap inside it), bit 3 cap one short of n (nothing is found);
 *   byte 1, max: the cuts the caller has room for (0xff: 1024, the engine's);
 *   byte 2, the hint: 0xff none, 0xfe 70000 (no name id), 0xfd 65535, else
 *     the id at position byte 2 % n;
 *   byte 3, the named id (start_named).
 *   Sequence bytes: 0x00..0xef an id of that value; 0xf0 65535, 0xf1 65534,
 *   0xf2 65536, 0xf3 65537, 0xf4 UINT32_MAX, 0xf5 UINT32_MAX - 1 (ids at and
 *   past OBS_LAYER_NAME_IDS: graph launches); 0xf6 B: 1000 + B; 0xf7 B:
 *   65535 - B; 0xf8..0xfd L: the last L launches again (byte - 0xf7) times;
 *   0xfe L R: the last L launches again R times (a stack of layers from a
 *   few bytes); 0xff: nothing. At most LF_FUZZ_CAP launches (the engine
 *   keeps 32 768 an instance; nothing in the finder but its loops' length
 *   depends on n, and 8 192 keeps the fuzzer fast: tests/t_layer_finder
 *   runs the larger sizes).
 *
 * The sequence, the per-position tables and the cuts are each allocated to
 * their exact size, so that ASan sees any access past them. The finder runs
 * on one workspace with the input's hint, with none, where bit 2 says so
 * with none again after the stamps jumped near their wrap, and with the
 * anchor of the second call as the hint (as the engine passes the last
 * instance's). Invariants checked here abort, so the fuzzer reports them as
 * crashes:
 *   - at most max cuts, nothing written past the cuts returned, the
 *     sequence left as it was;
 *   - no anchor: no layers and no passes; an anchor: a name id below
 *     OBS_LAYER_NAME_IDS that occurs three times or more, at least one pass;
 *     layers: at least one holds a launch of the anchor;
 *   - the cuts lie in [0, n), in order and apart; the first is layer 0 of
 *     pass 0; each next one is the next layer of its pass, beginning right
 *     after the one before, or layer 0 of the next pass; every pass but the
 *     last written has two layers or more; fewer cuts than max: the last
 *     cut's pass is the last pass;
 *   - n over cap: nothing found, nothing written;
 *   - count is zero again on return (every id of the sequence after each
 *     call, the whole table after the last), no stamp of the sequence's ids
 *     above stamp_now;
 *   - the same input, the same answer: the call after the stamps' jump
 *     equals the second, and so does the last one (the hint of its own
 *     anchor changes nothing), each unless the stamps wrapped inside it (a
 *     known fault: the run then in progress is cut, see
 *     tests/t_layer_finder). */
#include <stdlib.h>
#include <string.h>

#include "layer_finder_fuzz.h"
#include "phases/layer_finder.h"

#define LF_FUZZ_CAP 8192u
#define LF_CANARY 8u /* cuts past max checked untouched */
#define NONE UINT32_MAX

static uint32_t count[OBS_LAYER_NAME_IDS], stamp[OBS_LAYER_NAME_IDS], first[OBS_LAYER_NAME_IDS],
    last[OBS_LAYER_NAME_IDS];
static uint32_t named_id;

static int norm_ids(uint32_t id)
{
    return (id & ~0xfu) == 0x40u;
}

static int named(uint32_t id)
{
    return id == named_id;
}

/* The sequence the input's bytes describe; returns its length. */
static uint32_t decode(const uint8_t *d, size_t size, uint32_t *s)
{
    static const uint32_t big[] = {65535u, 65534u, 65536u, 65537u, UINT32_MAX, UINT32_MAX - 1u};
    uint32_t n = 0;
    size_t i = 0;
    while (i < size && n < LF_FUZZ_CAP) {
        uint8_t b = d[i++];
        uint32_t len, times, t, k;
        if (b < 0xf0u) {
            s[n++] = b;
            continue;
        }
        if (b <= 0xf5u) {
            s[n++] = big[b - 0xf0u];
            continue;
        }
        if (b == 0xffu || i >= size)
            continue;
        if (b == 0xf6u || b == 0xf7u) {
            s[n++] = b == 0xf6u ? 1000u + d[i] : 65535u - d[i];
            i++;
            continue;
        }
        len = d[i++];
        if (b == 0xfeu) {
            if (i >= size)
                break;
            times = d[i++];
        } else {
            times = b - 0xf7u;
        }
        if (len == 0 || len > n)
            continue;
        for (t = 0; t < times && n + len <= LF_FUZZ_CAP; t++)
            for (k = 0; k < len; k++, n++)
                s[n] = s[n - len];
    }
    return n;
}

static void fill_canary(struct obs_layer_cut *cuts, uint32_t from, uint32_t to)
{
    memset(cuts + from, 0xa5, (size_t)(to - from) * sizeof *cuts);
}

static int canary_intact(const struct obs_layer_cut *cuts, uint32_t from, uint32_t to)
{
    const unsigned char *p = (const unsigned char *)(cuts + from), *end = (const unsigned char *)(cuts + to);
    for (; p < end; p++)
        if (*p != 0xa5u)
            return 0;
    return 1;
}

static void check(const uint32_t *s, uint32_t n, const struct obs_layer_work *w, struct obs_layer_found f,
                  const struct obs_layer_cut *cuts, uint32_t max)
{
    uint32_t i, j, occurs = 0, in_pass = 0;
    int anchor_held = 0;
    if (f.layers > max || !canary_intact(cuts, f.layers, max + LF_CANARY))
        abort();
    for (i = 0; i < n; i++)
        if (s[i] < OBS_LAYER_NAME_IDS && (w->count[s[i]] != 0 || w->stamp[s[i]] > w->stamp_now))
            abort();
    if (n > w->cap && (f.anchor != NONE || f.layers != 0 || f.passes != 0))
        abort();
    if (f.anchor == NONE) {
        if (f.layers != 0 || f.passes != 0)
            abort();
        return;
    }
    if (f.anchor >= OBS_LAYER_NAME_IDS || f.passes == 0)
        abort();
    for (i = 0; i < n; i++)
        occurs += s[i] == f.anchor;
    if (occurs < 3)
        abort();
    for (i = 0; i < f.layers; i++) {
        const struct obs_layer_cut *c = &cuts[i];
        if (c->first > c->last || c->last >= n || c->pass >= f.passes)
            abort();
        if (i == 0) {
            if (c->layer != 0 || c->pass != 0)
                abort();
            in_pass = 1;
        } else if (c->pass == cuts[i - 1].pass) {
            if (c->layer != cuts[i - 1].layer + 1 || c->first != cuts[i - 1].last + 1)
                abort();
            in_pass++;
        } else {
            if (c->pass != cuts[i - 1].pass + 1 || c->layer != 0 || c->first <= cuts[i - 1].last || in_pass < 2)
                abort();
            in_pass = 1;
        }
        for (j = c->first; j <= c->last && !anchor_held; j++)
            anchor_held = s[j] == f.anchor;
    }
    if (f.layers > 0 && !anchor_held)
        abort();
    if (f.layers > 0 && f.layers < max && cuts[f.layers - 1].pass != f.passes - 1)
        abort();
}

static int same(struct obs_layer_found a, const struct obs_layer_cut *ca, struct obs_layer_found b,
                const struct obs_layer_cut *cb)
{
    return a.anchor == b.anchor && a.layers == b.layers && a.passes == b.passes &&
           (a.layers == 0 || memcmp(ca, cb, a.layers * sizeof *ca) == 0);
}

int obs_fuzz_layer_finder(const uint8_t *data, size_t size)
{
    static uint32_t decoded[LF_FUZZ_CAP];
    struct obs_layer_work w;
    struct obs_layer_found f1, f2, f3, f4;
    struct obs_layer_cut *c1 = NULL, *c2 = NULL, *c3 = NULL;
    uint32_t *s = NULL, *copy = NULL, n, max, hint, i, before, nonzero;
    uint8_t flags;
    if (size < 4)
        return 0;
    flags = data[0];
    max = data[1] == 0xffu ? 1024u : data[1];
    named_id = data[3];
    n = decode(data + 4, size - 4, decoded);
    hint = data[2] == 0xffu ? NONE : data[2] == 0xfeu ? 70000u : data[2] == 0xfdu ? 65535u : n > 0 ? decoded[data[2] % n] : NONE;

    s = malloc((n ? n : 1) * sizeof *s);
    copy = malloc((n ? n : 1) * sizeof *copy);
    c1 = malloc((max + LF_CANARY) * sizeof *c1);
    c2 = malloc((max + LF_CANARY) * sizeof *c2);
    c3 = malloc((max + LF_CANARY) * sizeof *c3);
    if (s == NULL || copy == NULL || c1 == NULL || c2 == NULL || c3 == NULL)
        goto out;
    memcpy(s, decoded, n * sizeof *s);
    memcpy(copy, decoded, n * sizeof *s);

    /* the name tables as the engine leaves them: zeroed once, then as the finder leaves them */
    memset(&w, 0, sizeof w);
    memset(count, 0, sizeof count);
    memset(stamp, 0, sizeof stamp);
    w.count = count;
    w.stamp = stamp;
    w.first = first;
    w.last = last;
    w.cap = (flags & 8u) && n > 0 ? n - 1 : n;
    /* each per-position table its own allocation of exactly cap entries */
    w.next = malloc((w.cap ? w.cap : 1) * sizeof *w.next);
    w.distinct = malloc((w.cap ? w.cap : 1) * sizeof *w.distinct);
    w.occ = malloc((w.cap ? w.cap : 1) * sizeof *w.occ);
    if (w.next == NULL || w.distinct == NULL || w.occ == NULL)
        goto out_w;
    if (flags & 1u) {
        w.norm_like = (flags & 2u) ? named : norm_ids;
        w.start_named = (flags & 2u) != 0;
    }

    fill_canary(c1, 0, max + LF_CANARY);
    f1 = obs_layers_find(s, n, hint, &w, c1, max);
    check(s, n, &w, f1, c1, max);

    fill_canary(c2, 0, max + LF_CANARY);
    f2 = obs_layers_find(s, n, NONE, &w, c2, max);
    check(s, n, &w, f2, c2, max);

    if ((flags & 4u) && w.stamp_now < UINT32_MAX - (flags >> 4))
        w.stamp_now = UINT32_MAX - (flags >> 4); /* upward only: no stale stamp can equal a new one */
    if (flags & 4u) {
        before = w.stamp_now;
        fill_canary(c3, 0, max + LF_CANARY);
        f3 = obs_layers_find(s, n, NONE, &w, c3, max);
        check(s, n, &w, f3, c3, max);
        /* where the stamps wrapped inside a call, the run then in progress is cut (a block after the wrap is
         * never alike the one before it), which can change the answer: tests/t_layer_finder's TODO */
        if (w.stamp_now >= before && !same(f2, c2, f3, c3))
            abort();
    }

    before = w.stamp_now;
    fill_canary(c3, 0, max + LF_CANARY);
    f4 = obs_layers_find(s, n, f2.anchor, &w, c3, max);
    check(s, n, &w, f4, c3, max);
    if (w.stamp_now >= before && !same(f2, c2, f4, c3))
        abort();

    if (memcmp(s, copy, n * sizeof *s) != 0)
        abort();
    for (i = 0, nonzero = 0; i < OBS_LAYER_NAME_IDS; i++)
        nonzero |= count[i];
    if (nonzero != 0)
        abort();
out_w:
    free(w.next);
    free(w.distinct);
    free(w.occ);
out:
    free(s);
    free(copy);
    free(c1);
    free(c2);
    free(c3);
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_layer_finder(data, size);
}
#endif
