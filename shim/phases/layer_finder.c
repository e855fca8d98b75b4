/* Layers in one phase instance: see layer_finder.h and docs/layers.md.
 *
 * The method, on the instance's kernel name ids s[0 .. n):
 *  1. an *anchor* is a name whose occurrences cut the sequence into blocks
 *     (occurrence to occurrence) that look alike: consecutive blocks share
 *     at least two thirds of their distinct names, or one block's names are
 *     all in the other's (a name set, so that MoE layers whose expert
 *     kernels run a varying number of times still match, and a MoE layer
 *     with a shared expert next to a dense one; the two halves of one
 *     layer, attention and MLP, do not); or, two kinds alternating (a dense
 *     layer and a MoE one with no shared expert, sliding-window and global
 *     attention), a block has the name set of the one two before, 3/4 of
 *     the smaller of its and its neighbour's sets lie in the larger (at
 *     most twice its size), it is 2/3 to 3/2 as long, and the two agree
 *     over 3/4 of the shorter from their starts and their ends (the same
 *     part of two layers; not llama.cpp's attention and MLP halves). A
 *     *run* is a stretch of such blocks; the block before it joins it when
 *     it is alike in that last way (a first layer that differs: a dense
 *     layer before MoE ones). A block holding a rare name (at most a third
 *     as frequent as the anchor) that also runs before the first anchor or
 *     after the last (an embedding, an LM head: a prompt in chunks passes
 *     through the stack once per chunk) ends the run, and so does, in a
 *     regular run, a last block unlike the two before it and more than an
 *     eighth longer or shorter than the one before (an anchor in what
 *     follows the stack: Gemma 2's logit soft-capping). An anchor is
 *     *regular* when at least half of its runs' blocks have the name set of
 *     the block before (or all but a tenth of their union: experts' GEMM
 *     kernels vary with their tokens) or of the one before that (layers;
 *     not the pieces of a layer that Qwen3's four norms cut, alike by their
 *     names but each unlike the next). The anchor chosen is the regular one that covers
 *     the most launches with runs of at least two blocks (three layers),
 *     else the irregular one that does; ties go to the more frequent name,
 *     then the earlier one. The shortest block that repeats is the layer:
 *     where the chosen name's blocks are whole forwards (a prompt's chunks
 *     with no token read between them), a regular name with one run in each
 *     (or one fewer), all of at least three blocks and as many, covering
 *     with their last layers at least two thirds of what the chosen name's
 *     do, is taken instead: a pass per run;
 *  2. each run of m + 1 anchors is m + 1 layers (of three blocks or more,
 *     the first is dropped when it begins unlike the next at once and the
 *     next like the one after over 4 launches: the anchor ran in what
 *     precedes the stack too). A layer begins d launches
 *     before its anchor, d the length over which the launches before the
 *     run's first two anchors (or its first and third: alternating kinds)
 *     agree (so the first layer begins right after what precedes the
 *     stack; one differing launch is stepped over, a first layer that
 *     differs slightly), or at a normalisation kernel up to 4 launches
 *     later when that start is none (what precedes the stack may end with
 *     the layers' last kernel: GPT-2's embedding add);
 *  3. the last layer of a run ends where the tail of the two layers before
 *     it (the launches their ends agree on) first ends after its anchor, or
 *     that of the layers two and four before it (alternating kinds), the
 *     longer tail first (fewer layers: the tail all layers and the next, or
 *     the one after next, agree on), if that makes it at least 3/4 as long
 *     as the shortest of the others; else where ever shorter tails of the
 *     layer before it (half, a quarter .. its last kernel) first end at
 *     least 3/4 of the shortest after its start (experts that run a varying
 *     number of times); else it is as long as the layer before
 *     it, unless that leaves it under 3/4 of the shortest: then its anchor
 *     began what follows the stack (a final norm that is the layers' first
 *     kernel), and the layer before is the last;
 *  4. where every layer of a pass holds two layers of two kinds (a dense
 *     layer and an eager MoE one 1.5 to 3 times as long: step 1's anchor
 *     cut each pair once), each is split where the second begins
 *     (split_pairs).
 * Layers are contiguous inside a run; what precedes the first and follows
 * the last is outside every layer. */
#include "layer_finder.h"

#include <string.h>

#define NONE UINT32_MAX
#define MIN_BLOCKS 2u   /* a run: at least two blocks alike (three layers) */
#define RARE_RATIO 3u   /* a name at most a third as frequent as the anchor is rare */
#define RUNS_MAX 256u
#define SPLIT_AGREE_MIN 8u    /* two kinds of layers in one: they begin alike over at least this many launches */
#define LAYER_PAIRS_MAX 512u  /* layers of a pass looked at for two kinds in each */
#define BLOCK_MIN 4u
#define CONTAINED_MIN 3u
#define PASS_BLOCKS_MIN 3u /* layers found inside repeated forwards: at least four a pass */
#define NORM_WINDOW 4u  /* how far after the agreed start a norm kernel may begin the layer */ /* a block's names all in its neighbour's: at least this many */    /* a layer is at least 4 launches (norm, attention, MLP, residual) */

struct run {
    uint32_t first_occ, blocks; /* occurrences of the anchor: first_occ .. first_occ + blocks */
};

/* Count each name, chain its positions, list the distinct ones. */
static uint32_t index_names(const uint32_t *s, uint32_t n, struct obs_layer_work *w, uint32_t *last)
{
    uint32_t i, nd = 0;
    for (i = n; i-- > 0;) {
        uint32_t id = s[i];
        if (id >= OBS_LAYER_NAME_IDS) {
            w->next[i] = NONE;
            continue;
        }
        if (w->count[id]++ == 0) {
            w->next[i] = NONE;
            w->distinct[nd++] = id;
            last[id] = i;
        } else {
            w->next[i] = w->first[id];
        }
        w->first[id] = i;
    }
    return nd;
}

/* Whether a name is rare next to the anchor and runs outside its occurrences. */
static int marker(const struct obs_layer_work *w, const uint32_t *last, uint32_t id, uint32_t anchor_count,
                  uint32_t p_first, uint32_t p_last)
{
    if (id >= OBS_LAYER_NAME_IDS)
        return 0;
    return w->count[id] * RARE_RATIO <= anchor_count && (w->first[id] < p_first || last[id] > p_last);
}

/* Whether a block's name set is that of one of the two blocks before it (a
 * stack of like layers, or of two kinds alternating), by an order-free hash
 * of the set and its size. */
struct block_sig {
    uint32_t hash, distinct, len;
    uint32_t shared; /* names it shares with the block before */
    int ok;          /* no marker in it, long enough */
};

static int same_set(const struct block_sig *a, const struct block_sig *b)
{
    return a->ok && b->ok && a->hash == b->hash && a->distinct == b->distinct;
}

/* Two blocks of two kinds of layers (a dense layer and a MoE one with no shared expert): at least 3/4 of the
 * smaller name set in the larger, which is at most twice its size, and 2/3 to 3/2 as long. */
static int kinds_alike(const struct block_sig *b, const struct block_sig *prev)
{
    uint32_t small = b->distinct < prev->distinct ? b->distinct : prev->distinct;
    uint32_t large = b->distinct < prev->distinct ? prev->distinct : b->distinct;
    return b->ok && prev->ok && 4u * b->shared >= 3u * small && 2u * small >= large && 3u * b->len >= 2u * prev->len &&
           2u * b->len <= 3u * prev->len;
}

/* Whether consecutive blocks [a, b) and [b, c) are the same part of two layers: the launches after their
 * anchors and those before their ends agree over at least 3/4 of the shorter (a dense layer and a MoE one
 * differ in their MLP only; the attention and MLP halves of a llama.cpp layer, alike by their names, do not). */
static int ends_agree(const uint32_t *s, uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t shorter = b - a < c - b ? b - a : c - b, head = 0, tail = 0;
    while (head < shorter && s[a + head] == s[b + head])
        head++;
    while (tail < shorter - head && s[b - 1 - tail] == s[c - 1 - tail])
        tail++;
    return 4u * (head + tail) >= 3u * shorter;
}

/* A run of blocks run_start .. end - 1 (anchors run_start .. end), kept when it has MIN_BLOCKS. A regular
 * run's last block, unlike the two before it by its names and more than an eighth longer or shorter than the
 * one before, is no layer's: the anchor that ends it is in what follows the stack (Gemma 2's final logit
 * soft-capping runs the attention's scaling kernel). */
static void commit_run(struct run *runs, uint32_t *nr, const uint32_t *occ, uint32_t run_start, uint32_t end,
                       uint32_t reg_run, int tail_reg, uint32_t tail_len, uint32_t tail_prev_len, uint32_t *covered,
                       uint32_t *reg_total, uint32_t *cont_total)
{
    uint32_t cont = end - run_start - 1;
    if (!tail_reg && 2u * reg_run >= cont && cont > 0 && end - run_start > MIN_BLOCKS &&
        8u * (tail_len > tail_prev_len ? tail_len - tail_prev_len : tail_prev_len - tail_len) > tail_prev_len) {
        end--;
        cont--;
    }
    if (end - run_start < MIN_BLOCKS || *nr >= RUNS_MAX)
        return;
    runs[*nr].first_occ = run_start;
    runs[*nr].blocks = end - run_start;
    *covered += occ[end] - occ[run_start];
    (*nr)++;
    *reg_total += reg_run;
    *cont_total += cont;
}

/* The runs an anchor makes; returns the launches they cover. *regular: of
 * the blocks that continue a run, those whose name set equals that of the
 * block before or the one before that (the layers of a stack; not the
 * pieces of one layer, whose sets differ in turn: Qwen3's four norms). */
static uint32_t runs_of(const uint32_t *s, struct obs_layer_work *w, const uint32_t *last, uint32_t *regular,
                        const uint32_t *occ, uint32_t nocc, struct run *runs, uint32_t *nruns)
{
    uint32_t j, covered = 0, prev_distinct = 0, run_start = NONE, nr = 0, reg_run = 0, reg_total = 0, cont_total = 0;
    uint32_t tail_len = 0, tail_prev_len = 0;
    int prev_ok = 0, tail_reg = 0;
    uint32_t p_first = occ[0], p_last = occ[nocc - 1];
    uint32_t *stamps = w->stamp;
    struct block_sig b1 = {0, 0, 0, 0, 0}, b2 = {0, 0, 0, 0, 0};
    uint32_t free_from = 0; /* the first anchor no kept run ends at */
    for (j = 0; j + 1 < nocc; j++) {
        uint32_t stamp = ++w->stamp_now, prev = stamp - 1, distinct = 0, shared = 0, i, end, hash = 0;
        int has_marker = 0, alike, reg;
        struct block_sig b;
        if (stamp == 0 || prev == 0) { /* wrapped, or the first call: start the stamps afresh */
            if (stamp != 1) /* the first call's table is zeroed already */
                memset(w->stamp, 0, OBS_LAYER_NAME_IDS * sizeof *w->stamp);
            w->stamp_now = 2;
            stamp = 2;
            prev = 1;
            prev_ok = 0;
        }
        for (i = occ[j], end = occ[j + 1]; i < end; i++) {
            uint32_t id = s[i], was;
            if (id >= OBS_LAYER_NAME_IDS || (was = stamps[id]) == stamp)
                continue;
            shared += was == prev;
            stamps[id] = stamp;
            distinct++;
            hash += (id + 1u) * 2654435761u ^ (id >> 5);
            if (!has_marker && marker(w, last, id, nocc, p_first, p_last))
                has_marker = 1;
        }
        if (occ[j + 1] - occ[j] < BLOCK_MIN)
            has_marker = 1; /* too short for a layer: no run goes through it */
        b.hash = hash;
        b.distinct = distinct;
        b.len = occ[j + 1] - occ[j];
        b.ok = !has_marker;
        b.shared = shared;
        /* regular: the names of the block before (or all but a tenth of their union: experts whose GEMM
         * kernels vary with their tokens), or of the block two before */
        reg = same_set(&b, &b1) || same_set(&b, &b2) ||
              (b.ok && b1.ok && 10u * shared >= 9u * (prev_distinct + distinct - shared));
        /* alike the block before: Jaccard of the name sets >= 2/3, or one set inside the other and at least
         * half its size (a MoE layer with a shared expert next to a dense one; not a MoE layer's experts
         * inside the whole layer around them); or two kinds alternating: alike as kinds_alike says, and the
         * same set as the block two before */
        alike = prev_ok && !has_marker &&
                (3u * shared >= 2u * (prev_distinct + distinct - shared) ||
                 (shared >= CONTAINED_MIN && 2u * shared >= (distinct > prev_distinct ? distinct : prev_distinct) &&
                  (shared == distinct || shared == prev_distinct)) ||
                 (same_set(&b, &b2) && kinds_alike(&b, &b1) && ends_agree(s, occ[j - 1], occ[j], occ[j + 1])));
        if (has_marker) {
            prev_ok = 0;
        } else {
            prev_ok = 1;
        }
        if (alike) {
            if (run_start == NONE) {
                run_start = j - 1;
                reg_run = 0;
                /* a first layer that differs (a dense layer before MoE ones): the block before the run is one
                 * more when it and the run's first block are alike as kinds_alike and ends_agree say (not what
                 * precedes the stack) */
                if (j >= 2 && j - 2 >= free_from && kinds_alike(&b1, &b2) && ends_agree(s, occ[j - 2], occ[j - 1], occ[j]))
                    run_start = j - 2;
            }
            reg_run += reg != 0;
            tail_reg = reg;
            tail_len = b.len;
            tail_prev_len = b1.len;
        } else if (run_start != NONE) {
            commit_run(runs, &nr, occ, run_start, j, reg_run, tail_reg, tail_len, tail_prev_len, &covered, &reg_total,
                       &cont_total);
            free_from = j + 1;
            run_start = NONE;
        }
        prev_distinct = distinct;
        b2 = b1;
        b1 = b;
    }
    if (run_start != NONE)
        commit_run(runs, &nr, occ, run_start, j, reg_run, tail_reg, tail_len, tail_prev_len, &covered, &reg_total,
                   &cont_total);
    *nruns = nr;
    if (regular != NULL)
        *regular = 2u * reg_total >= cont_total;
    return covered;
}

/* The launches a set of runs puts in layers, each run's last layer as long as its average one. */
static uint32_t layered_cover(const uint32_t *occ, const struct run *runs, uint32_t nr)
{
    uint64_t cover = 0;
    uint32_t r;
    for (r = 0; r < nr; r++) {
        uint64_t span = occ[runs[r].first_occ + runs[r].blocks] - occ[runs[r].first_occ];
        cover += span + span / runs[r].blocks;
    }
    return cover > UINT32_MAX ? UINT32_MAX : (uint32_t)cover;
}

/* The anchor's positions, in order (the chain index_names made). */
static uint32_t occurrences(const struct obs_layer_work *w, uint32_t anchor, uint32_t *occ)
{
    uint32_t n = 0, i;
    for (i = w->first[anchor]; i != NONE; i = w->next[i])
        occ[n++] = i;
    return n;
}

/* How far back from a and b (a < b) the launches agree, at most cap, not
 * below floor; one differing launch is stepped over when the two before it agree. */
static uint32_t agree_back(const uint32_t *s, uint32_t a, uint32_t b, uint32_t cap, uint32_t floor)
{
    uint32_t d = 0, j;
    for (j = 1; j < cap && a >= floor + j; j++) {
        if (s[a - j] == s[b - j]) {
            d = j;
            continue;
        }
        if (j + 2 < cap && a >= floor + j + 2 && s[a - j - 1] == s[b - j - 1] && s[a - j - 2] == s[b - j - 2]) {
            d = j;
            continue;
        }
        break;
    }
    return d;
}

/* Where the tail [tail_end - len + 1, tail_end] next ends at or after from, before limit. */
static uint32_t find_tail(const uint32_t *s, uint32_t tail_end, uint32_t len, uint32_t from, uint32_t limit)
{
    uint32_t e, k;
    for (e = from; e <= limit; e++) {
        if (s[e] != s[tail_end] || e + 1 < len)
            continue;
        for (k = 1; k < len && s[e - k] == s[tail_end - k]; k++)
            ;
        if (k == len)
            return e;
    }
    return NONE;
}

/* Where layer c holds a second layer of another kind: the launch p after its first at which its first
 * kernel runs again and what follows agrees with the layer's own start over at least 3/4 of the shorter part
 * and SPLIT_AGREE_MIN launches (a dense layer then a MoE one begin with the same norm and attention; the
 * attention and MLP halves of one layer agree over their norm only). NONE: no such launch. */
static uint32_t second_kind_at(const uint32_t *s, const struct obs_layer_cut *c)
{
    uint32_t p, best = NONE, best_agree = 0;
    for (p = c->first + 1; p <= c->last; p++) {
        uint32_t h = 0, part;
        if (s[p] != s[c->first])
            continue;
        while (p + h <= c->last && c->first + h < p && s[c->first + h] == s[p + h])
            h++;
        part = p - c->first < c->last + 1 - p ? p - c->first : c->last + 1 - p;
        /* each part a layer: the first at least a quarter of the whole, the second at least 2/3 of the first
         * (not the norm and projection a Qwen3 attention runs three times over) */
        if (4u * (p - c->first) < c->last + 1 - c->first || 3u * (c->last + 1 - p) < 2u * (p - c->first))
            continue;
        if (h >= SPLIT_AGREE_MIN && 4u * h >= 3u * part && h > best_agree) {
            best = p;
            best_agree = h;
        }
    }
    return best;
}

/* 4: a pass each of whose layers holds two layers of two kinds (a dense layer and an eager MoE one 1.5 to 3
 * times as long, too unlike in length for alternating kinds, 1: the anchor then cuts each pair once) has
 * twice as many: each is split where the second begins. Returns the layers. */
static uint32_t split_pairs(const uint32_t *s, struct obs_layer_cut *cuts, uint32_t nl, uint32_t max)
{
    uint32_t i = 0, out_n = nl, at[LAYER_PAIRS_MAX];
    while (i < nl) {
        uint32_t j = i, k, pass = cuts[i].pass;
        while (j < nl && cuts[j].pass == pass)
            j++;
        for (k = i; k < j && k - i < LAYER_PAIRS_MAX; k++)
            if ((at[k - i] = second_kind_at(s, &cuts[k])) == NONE)
                break;
        if (k == j && j - i >= 2 && out_n + (j - i) <= max) {
            /* make room for the pass's second halves, then write its layers from the last */
            uint32_t m = j - i, t;
            memmove(&cuts[j + m], &cuts[j], (out_n - j) * sizeof *cuts);
            for (t = m; t-- > 0;) {
                struct obs_layer_cut c = cuts[i + t];
                cuts[i + 2 * t] = (struct obs_layer_cut){c.first, at[t] - 1, 2 * t, pass};
                cuts[i + 2 * t + 1] = (struct obs_layer_cut){at[t], c.last, 2 * t + 1, pass};
            }
            out_n += m;
            nl += m;
            j += m;
        }
        i = j;
    }
    return out_n;
}

struct obs_layer_found obs_layers_find(const uint32_t *s, uint32_t n, uint32_t hint, struct obs_layer_work *w,
                                       struct obs_layer_cut *cuts, uint32_t max)
{
    struct obs_layer_found found = {NONE, 0, 0};
    struct run runs[RUNS_MAX];
    uint32_t *last = w->last, *occ = w->occ;
    uint32_t nd, i, best = NONE, best_cover = 0, best_count = 0, nruns = 0, r, start_floor = 0, ncand = 0;
    uint32_t reg = 0, irr = NONE, irr_cover = 0, irr_count = 0;
    int hint_taken = 0;
    uint32_t starts[RUNS_MAX], ds[RUNS_MAX];

    if (n < 6 || n > w->cap)
        return found;
    nd = index_names(s, n, w, last);
    if (hint == NONE)
        hint = NONE - 1; /* never a name id: the search below runs */
    if (hint < OBS_LAYER_NAME_IDS && w->count[hint] >= MIN_BLOCKS + 1) {
        uint32_t nocc = occurrences(w, hint, occ);
        if (runs_of(s, w, last, &reg, occ, nocc, runs, &nruns) > 0 && reg) {
            best = hint;
            hint_taken = 1;
        }
    }
    if (!hint_taken) { /* the widest names first: a name's runs cover at most its span, so the rest are skipped */
        uint32_t j;
        for (j = 0; j < nd; j++) { /* candidates to the front (the names stay in distinct: their counts are reset) */
            uint32_t id = w->distinct[j];
            if (w->count[id] >= MIN_BLOCKS + 1) {
                w->distinct[j] = w->distinct[ncand];
                w->distinct[ncand++] = id;
            }
        }
        for (j = 1; j < ncand; j++) { /* insertion sort by span, widest first (tens of names) */
            uint32_t id = w->distinct[j], span = last[id] - w->first[id], m = j;
            while (m > 0 && last[w->distinct[m - 1]] - w->first[w->distinct[m - 1]] < span) {
                w->distinct[m] = w->distinct[m - 1];
                m--;
            }
            w->distinct[m] = id;
        }
    }
    /* the anchor: the regular one (its blocks' name sets repeat block to block, or every other block) whose
     * runs cover the most, else the irregular one that does (pieces of layers alike by their names) */
    for (i = 0; !hint_taken && i < ncand; i++) { /* no hint, or it made no run: every name */
        uint32_t id = w->distinct[i], nocc, cover, nr, span = last[id] - w->first[id];
        if ((best != NONE && span < best_cover) || (best == NONE && irr != NONE && 2u * span < irr_cover))
            break; /* its runs cover at most its span: neither it nor a narrower one can win */
        nocc = occurrences(w, id, occ);
        cover = runs_of(s, w, last, &reg, occ, nocc, runs, &nr);
        if (cover == 0)
            continue;
        if (!reg) {
            if (irr == NONE || cover > irr_cover || (cover == irr_cover && w->count[id] > irr_count) ||
                (cover == irr_cover && w->count[id] == irr_count && w->first[id] < w->first[irr])) {
                irr = id;
                irr_cover = cover;
                irr_count = w->count[id];
            }
            continue;
        }
        if (best == NONE || cover > best_cover || (cover == best_cover && w->count[id] > best_count) ||
            (cover == best_cover && w->count[id] == best_count && w->first[id] < w->first[best])) {
            best = id;
            best_cover = cover;
            best_count = w->count[id];
        }
    }
    if (best == NONE)
        best = irr;
    if (best != NONE && !hint_taken) {
        /* the shortest block that repeats: a prompt's chunks with no token read between them are whole
         * forwards that repeat, each holding the layers. A name whose runs, as many as best's layers, each
         * as long (a pass through the stack in each forward), cover with their last layers at least 2/3 of
         * what best's do is the layer (an expert loop covers less of its layer; half-layers alike in some
         * layers and not others make fewer runs) */
        uint32_t nr, wcover, wlayers = 0, j, fine = NONE, fine_cover = 0;
        uint32_t nocc = occurrences(w, best, occ);
        runs_of(s, w, last, NULL, occ, nocc, runs, &nr);
        wcover = layered_cover(occ, runs, nr);
        for (r = 0; r < nr; r++)
            wlayers += runs[r].blocks + 1;
        for (j = 0; j < ncand && wlayers >= 2; j++) {
            uint32_t id = w->distinct[j], cover;
            if (w->count[id] / 3u < wlayers)
                continue; /* three layers a pass at least */
            nocc = occurrences(w, id, occ);
            if (runs_of(s, w, last, &reg, occ, nocc, runs, &nr) == 0 || !reg || nr < 2 || nr > wlayers ||
                nr + 1 < wlayers || runs[0].blocks < PASS_BLOCKS_MIN)
                continue;
            for (r = 1; r < nr && runs[r].blocks == runs[0].blocks; r++)
                ;
            if (r < nr)
                continue;
            cover = layered_cover(occ, runs, nr);
            if ((uint64_t)cover * 3u < (uint64_t)wcover * 2u)
                continue;
            if (fine == NONE || cover > fine_cover) {
                fine = id;
                fine_cover = cover;
            }
        }
        if (fine != NONE)
            best = fine;
    }
    if (best != NONE) {
        uint32_t nocc = occurrences(w, best, occ);
        if (!hint_taken) /* the hint's runs are those computed above */
            runs_of(s, w, last, NULL, occ, nocc, runs, &nruns);
        /* 2: each run's offset d from its first two anchors */
        for (r = 0; r < nruns; r++) {
            uint32_t a0, gapmin = NONE, b;
            if (runs[r].blocks >= 3) {
                /* the anchor ran in what precedes the stack too (a MoE layer's expert mask kernel in the
                 * position setup): its first block begins unlike the next at once, which begins like the one
                 * after (over at least 4 launches; experts run a varying number of times further on) */
                uint32_t f = runs[r].first_occ, h01 = 0, h12 = 0;
                while (occ[f] + h01 + 1 < occ[f + 1] && s[occ[f] + h01 + 1] == s[occ[f + 1] + h01 + 1])
                    h01++;
                while (occ[f + 1] + h12 + 1 < occ[f + 2] && s[occ[f + 1] + h12 + 1] == s[occ[f + 2] + h12 + 1])
                    h12++;
                if (h01 == 0 && h12 >= BLOCK_MIN) {
                    runs[r].first_occ++;
                    runs[r].blocks--;
                }
            }
            a0 = runs[r].first_occ;
            for (b = 0; b < runs[r].blocks; b++)
                if (occ[a0 + b + 1] - occ[a0 + b] < gapmin)
                    gapmin = occ[a0 + b + 1] - occ[a0 + b];
            ds[r] = agree_back(s, occ[a0], occ[a0 + 1], gapmin, start_floor);
            if (runs[r].blocks >= 2) { /* alternating kinds: the first layer begins like the one after next */
                uint32_t d2 = agree_back(s, occ[a0], occ[a0 + 2], gapmin, start_floor);
                if (d2 > ds[r])
                    ds[r] = d2;
            }
            if (w->start_named) {
                /* OBS_LAYER names the first kernel: the launch of it nearest that start */
                uint32_t k2, dd = NONE;
                for (k2 = 0; k2 < gapmin && dd == NONE; k2++) {
                    if (k2 <= ds[r] && w->norm_like(s[occ[a0] - (ds[r] - k2)]))
                        dd = ds[r] - k2;
                    else if (ds[r] + k2 < gapmin && occ[a0] >= start_floor + ds[r] + k2 &&
                             w->norm_like(s[occ[a0] - (ds[r] + k2)]))
                        dd = ds[r] + k2;
                }
                if (dd != NONE)
                    ds[r] = dd;
            } else if (w->norm_like != NULL && ds[r] > 0 && !w->norm_like(s[occ[a0] - ds[r]])) {
                /* the launches before the stack may end like a layer (an embedding's add before layers that end
                 * with a residual add): a layer starts with its norm, when one is a few launches later */
                uint32_t k2;
                for (k2 = 1; k2 <= NORM_WINDOW && k2 < ds[r]; k2++)
                    if (w->norm_like(s[occ[a0] - ds[r] + k2])) {
                        ds[r] -= k2;
                        break;
                    }
            }
            starts[r] = occ[a0] - ds[r];
            start_floor = occ[a0 + runs[r].blocks] + 1;
        }
        /* 3: the layers, the last of each run by its tail */
        for (r = 0; r < nruns; r++) {
            uint32_t a0 = runs[r].first_occ, m = runs[r].blocks, d = ds[r], k, e = NONE, q, shortest = NONE;
            uint32_t last_layer_out = 0;
            uint32_t limit = r + 1 < nruns ? starts[r + 1] - 1 : n - 1;
            uint32_t last_start = occ[a0 + m] - d, prev_start = occ[a0 + m - 1] - d;
            for (k = 0; k < m; k++)
                if (occ[a0 + k + 1] - occ[a0 + k] < shortest)
                    shortest = occ[a0 + k + 1] - occ[a0 + k];
            /* the tail the layers end with: of the two layers before the last (q = 1), or of the layers two
             * and four before it (q = 2: alternating kinds), the longer first (where there are not as many,
             * of each layer and the one q after it); the last layer ends like the layer q before it, and is at
             * least 3/4 as long as the shortest of the others */
            {
                uint32_t tails[3] = {0, 0, 0}, order[2] = {1, 2}, t;
                for (q = 1; q <= 2; q++) {
                    uint32_t tail = NONE;
                    for (k = m >= 2 * q ? m - 2 * q : 0; k + q + 1 <= m; k++) { /* ends of layers k and k + q */
                        uint32_t end_a = occ[a0 + k + 1] - d - 1, end_b = occ[a0 + k + q + 1] - d - 1;
                        uint32_t len_a = end_a + 1 - (occ[a0 + k] - d), len_b = end_b + 1 - (occ[a0 + k + q] - d);
                        uint32_t j = 0;
                        while (j < len_a && j < len_b && s[end_a - j] == s[end_b - j])
                            j++;
                        if (tail == NONE || j < tail)
                            tail = j;
                        if (m >= 2 * q)
                            break; /* the last pair of one kind only */
                    }
                    tails[q] = tail == NONE ? 0 : tail;
                }
                if (tails[2] > tails[1]) {
                    order[0] = 2;
                    order[1] = 1;
                }
                for (t = 0; t < 2 && e == NONE; t++) {
                    uint32_t tail = tails[order[t]], ref_end;
                    q = order[t];
                    ref_end = occ[a0 + m - q + 1] - d - 1; /* the end of layer m - q */
                    if (tail > 0) {
                        uint32_t from = last_start + tail - 1 > occ[a0 + m] ? last_start + tail - 1 : occ[a0 + m];
                        e = find_tail(s, ref_end, tail, from, limit);
                        if (e != NONE && 4u * (e + 1 - last_start) < 3u * shortest)
                            e = NONE;
                    }
                }
                /* experts that run a varying number of times, each its GEMMs sized by its tokens: the tail of
                 * the layer before, shorter and shorter (down to its last kernel), ending where the last layer
                 * is at least 3/4 as long as the shortest */
                if (e == NONE && tails[1] > 1) {
                    uint32_t ref_end = occ[a0 + m] - d - 1, len, floor_end = last_start + (3u * shortest + 3u) / 4u - 1;
                    for (len = tails[1] / 2u; len >= 1 && e == NONE; len /= 2u) {
                        uint32_t from = last_start + len - 1 > occ[a0 + m] ? last_start + len - 1 : occ[a0 + m];
                        if (from < floor_end)
                            from = floor_end;
                        e = find_tail(s, ref_end, len, from, limit);
                    }
                }
            }
            if (e == NONE) {
                e = last_start + (last_start - prev_start) - 1;
                if (e > limit)
                    e = limit;
                /* no tail, and too short for a layer: the last anchor began what follows the stack (a final norm
                 * that is the layers' first kernel), not a layer */
                if (4u * (e + 1 - last_start) < 3u * shortest)
                    last_layer_out = 1;
            }
            for (k = 0; k + last_layer_out <= m && found.layers < max; k++) {
                struct obs_layer_cut *c = &cuts[found.layers++];
                c->first = occ[a0 + k] - d;
                c->last = k < m ? occ[a0 + k + 1] - d - 1 : e;
                c->layer = k;
                c->pass = r;
            }
        }
        found.layers = split_pairs(s, cuts, found.layers, max);
        found.anchor = best;
        found.passes = nruns;
    }
    for (i = 0; i < nd; i++) /* the per-name counts start at zero next time */
        w->count[w->distinct[i]] = 0;
    return found;
}
