/* Fuzz body for the OBS_PHASES / OBS_STEP parser (shim/phases/phase_rules.c).
 * Built two ways: with -DOBS_LIBFUZZER and clang -fsanitize=fuzzer,address
 * as a libFuzzer target (`make fuzz`, tests/fuzz/run-fuzz.sh), and linked
 * into tests/t_phase_rules, which replays the kept corpus under make check.
 * Invariants checked here abort, so the fuzzer reports them as crashes. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phases/phase_rules.h"
#include "phase_rules_fuzz.h"

static const char *const sample_names[] = {
    "prefill_kernel", "kv_gather_kernel", "decode_kernel", "void ns::decode_kernel<4>(float*, int)", "", "*",
    "embed_tokens",   "f[abi:cxx11]",
};

/* The conditions one by one, as written: what the ranges must agree with. */
static bool conds_hold(const struct obs_phase_pattern *p, const struct obs_launch_size *s)
{
    unsigned k;
    for (k = 0; k < p->nconds; k++) {
        const struct obs_size_cond *c = &p->conds[k];
        uint64_t v = c->field == OBS_SIZE_GRID ? s->grid : c->field == OBS_SIZE_BLOCK ? s->block : s->threads;
        if (c->field == OBS_SIZE_BYTES)
            v = s->threads; /* a copy's bytes, passed as threads */
        bool ok = c->op == OBS_OP_LT ? v < c->value
                  : c->op == OBS_OP_LE ? v <= c->value
                  : c->op == OBS_OP_GT ? v > c->value
                  : c->op == OBS_OP_GE ? v >= c->value
                                       : v == c->value;
        if (!ok)
            return false;
    }
    return true;
}

static void check_rules(const struct obs_phase_rules *r)
{
    static const uint64_t sizes[][2] = {{1, 1}, {16, 256}, {2048, 256}, {UINT64_MAX, 1024}, {0, 0}};
    uint32_t all = r->count >= 32 ? UINT32_MAX : (1u << r->count) - 1u;
    unsigned i, k;
    if (r->count > OBS_PHASE_PATTERNS_MAX)
        abort();
    /* the masks name existing patterns of the right kind */
    if ((r->sized_mask | r->iter_mask) & ~all || (r->iter_kernel_mask & ~r->iter_mask) || (r->sized_mask & r->iter_mask) ||
        (r->iter_bytes_mask & ~r->iter_mask) || (r->iter_bytes_mask & r->iter_kernel_mask))
        abort();
    for (i = 0; i < r->count; i++) {
        const struct obs_phase_pattern *p = &r->patterns[i];
        if (p->phase == OBS_PHASE_NONE || p->phase >= OBS_PHASE_ID_COUNT)
            abort();
        if (p->kind == OBS_PATTERN_KERNEL && (p->glob[0] == '\0' || strlen(p->glob) > OBS_PHASE_GLOB_MAX))
            abort();
        bool transfer = p->iteration && (p->kind == OBS_PATTERN_MEMCPY || p->kind == OBS_PATTERN_MEMSET);
        if (p->nconds > OBS_PHASE_CONDS_MAX || (p->nconds > 0 && p->kind != OBS_PATTERN_KERNEL && !transfer))
            abort();
        /* a kernel's conditions on its size, an iter:after: selector's on the bytes */
        for (k = 0; k < p->nconds; k++)
            if ((transfer ? p->conds[k].field != OBS_SIZE_BYTES : p->conds[k].field > OBS_SIZE_BLOCK) ||
                p->conds[k].op > OBS_OP_EQ)
                abort();
        if (((r->iter_bytes_mask >> i) & 1u) != (transfer && p->nconds > 0))
            abort();
        for (k = 0; transfer && k < sizeof sizes / sizeof sizes[0] + p->nconds; k++) {
            /* the bytes of a copy (memset) met exactly when the conditions, one by one, hold */
            struct obs_launch_size b;
            uint32_t met;
            b.threads = k < sizeof sizes / sizeof sizes[0] ? sizes[k][0] : p->conds[k - sizeof sizes / sizeof sizes[0]].value;
            met = obs_phase_rules_transfer_bytes(r, p->kind, p->kind == OBS_PATTERN_MEMCPY ? p->direction : 0,
                                                 b.threads);
            if (p->nconds > 0 && ((met >> i) & 1u) != conds_hold(p, &b))
                abort();
        }
        for (k = 0; k < sizeof sizes / sizeof sizes[0] + p->nconds; k++) {
            /* the sample sizes, and each condition's own value as threads, grid and block */
            struct obs_launch_size s;
            if (k < sizeof sizes / sizeof sizes[0]) {
                s = obs_launch_size_of(sizes[k][0], sizes[k][1]);
            } else {
                uint64_t v = p->conds[k - sizeof sizes / sizeof sizes[0]].value;
                s.threads = s.grid = s.block = v;
            }
            if (p->kind == OBS_PATTERN_KERNEL && obs_phase_pattern_holds(p, &s) != conds_hold(p, &s))
                abort();
        }
        if (((r->iter_mask >> i) & 1u) != (p->iteration != 0) ||
            ((r->sized_mask >> i) & 1u) != (!p->iteration && p->nconds > 0))
            abort();
    }
    for (i = 0; i < sizeof sample_names / sizeof sample_names[0]; i++) {
        uint32_t mask = obs_phase_rules_kernel_mask(r, sample_names[i]);
        if (obs_phase_rules_match_kernel(r, sample_names[i]) >= OBS_PHASE_ID_COUNT || (mask & ~all))
            abort();
        (void)obs_phase_rules_sized(r, mask);
        for (k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            struct obs_launch_size s = obs_launch_size_of(sizes[k][0], sizes[k][1]);
            /* a name no conditional pattern decides has the plain answer at any size */
            if (!obs_phase_rules_sized(r, mask) &&
                obs_phase_rules_match_launch(r, mask, &s) != obs_phase_rules_match_kernel(r, sample_names[i]))
                abort();
            if (obs_phase_rules_match_iteration(r, mask, &s, k * 0x1111u) >= OBS_PHASE_ID_COUNT)
                abort();
        }
        if (obs_phase_rules_match_iteration(r, mask, NULL, OBS_AFTER_MEMSET) >= OBS_PHASE_ID_COUNT)
            abort();
    }
    for (i = 0; i < 8; i++)
        (void)obs_phase_rules_match_memcpy(r, (uint8_t)i);
    (void)obs_phase_rules_match_memset(r);
}

int obs_fuzz_phase_rules(const uint8_t *data, size_t size)
{
    static char text[2 * OBS_PHASE_RULES_TEXT_MAX + 2];
    struct obs_phase_rules rules;
    struct obs_phase_rule_error err;
    char base[64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1, len;
    int step;

    memcpy(text, data, n);
    text[n] = '\0';
    len = strlen(text);
    for (step = 0; step < 2; step++) {
        if (obs_phase_rules_parse(text, step != 0, &rules, &err) == 0) {
            check_rules(&rules);
        } else {
            /* One error, pointing inside the text (or just past its end). */
            if (err.column == 0 || err.column > len + 1 || err.what[0] == '\0' || rules.count != 0)
                abort();
        }
    }
    /* The text as a kernel name and as a glob. */
    obs_kernel_base_name(text, base, sizeof base);
    if (strlen(base) >= sizeof base)
        abort();
    if (obs_mangled_base_name(text, base, sizeof base) && strlen(base) >= sizeof base)
        abort();
    (void)obs_glob_match(text, "decode_kernel");
    (void)obs_glob_match("*de*_k*l", text);
    (void)obs_glob_match(text, text);
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_phase_rules(data, size);
}
#endif
