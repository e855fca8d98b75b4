/* Fuzz body for the OBS_PHASES / OBS_STEP parser (shim/phases/phase_rules.c).
 * Built two ways: with -DOBS_LIBFUZZER and clang -fsanitize=fuzzer,address
 * as a libFuzzer target (`make fuzz`, tests/fuzz/run-fuzz.sh), and linked
 * into tests/t_phase_rules, which replays the kept corpus under make check.
 * Invariants checked here abort, so the fuzzer reports them as crashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "phases/phase_rules.h"
#include "phase_rules_fuzz.h"

static const char *const sample_names[] = {
    "prefill_kernel", "kv_gather_kernel", "decode_kernel", "void ns::decode_kernel<4>(float*, int)", "", "*",
};

static void check_rules(const struct obs_phase_rules *r)
{
    unsigned i;
    if (r->count > OBS_PHASE_PATTERNS_MAX)
        abort();
    for (i = 0; i < r->count; i++) {
        const struct obs_phase_pattern *p = &r->patterns[i];
        if (p->phase == OBS_PHASE_NONE || p->phase >= OBS_PHASE_ID_COUNT)
            abort();
        if (p->kind == OBS_PATTERN_KERNEL && (p->glob[0] == '\0' || strlen(p->glob) > OBS_PHASE_GLOB_MAX))
            abort();
    }
    for (i = 0; i < sizeof sample_names / sizeof sample_names[0]; i++)
        if (obs_phase_rules_match_kernel(r, sample_names[i]) >= OBS_PHASE_ID_COUNT)
            abort();
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
