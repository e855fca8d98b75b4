/* Fuzz body for the scenario parser of tests/apps/llm_replay
 * (tests/apps/scenario.c). Built two ways: with -DOBS_LIBFUZZER and clang
 * -fsanitize=fuzzer,address,undefined as a libFuzzer target (`make
 * fuzz-scenario`, tests/fuzz/run-fuzz-scenario.sh, seeded with
 * tests/scenarios), and linked into tests/t_scenarios, which replays the
 * scenario files and bad inputs through it under make check. Invariants
 * checked here abort, so the fuzzer reports them as crashes. */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "scenario_fuzz.h"

static void check_seq(const struct scenario *s, const struct scn_seq *q)
{
    int i;
    if (q->n < 0 || q->n > SCN_MAX_SEQ)
        abort();
    for (i = 0; i < q->n; i++)
        if (q->items[i].kernel < 0 || q->items[i].kernel >= s->nkernels ||
            (q->items[i].when != 'a' && q->items[i].when != 'p' && q->items[i].when != 'd'))
            abort();
}

static void check_scenario(const struct scenario *s)
{
    int i;
    if (s->nkernels < 0 || s->nkernels > SCN_MAX_KERNELS || s->nprompts < 1 || s->nprompts > SCN_MAX_PROMPTS)
        abort();
    if (memchr(s->name, '\0', sizeof s->name) == NULL)
        abort();
    for (i = 0; i < s->nkernels; i++) {
        const struct scn_kernel *k = &s->kernels[i];
        if (memchr(k->id, '\0', sizeof k->id) == NULL || memchr(k->name, '\0', sizeof k->name) == NULL ||
            k->id[0] == '\0' || k->name[0] == '\0' || k->block < 1 || k->block > 1024 ||
            scenario_grid(k, 1) == 0 || scenario_grid(k, SCN_MAX_TOKENS) > 0x7fffffffu)
            abort();
    }
    check_seq(s, &s->pre);
    check_seq(s, &s->layer);
    check_seq(s, &s->post);
    if (s->pre.n + s->layer.n + s->post.n == 0 || s->layers < 1 || s->layers > SCN_MAX_LAYERS ||
        s->threads < 1 || s->threads > SCN_MAX_THREADS || s->graph_sizes < 1 || s->graph_sizes > 16)
        abort();
    for (i = 0; i < s->nprompts; i++) {
        const struct scn_prompt *p = &s->prompts[i];
        if (p->tokens < 1 || p->tokens > SCN_MAX_TOKENS || p->steps > SCN_MAX_STEPS || p->repeat < 1 ||
            p->full_tokens < 1 || p->full_repeat < 1)
            abort();
    }
}

int obs_fuzz_scenario(const uint8_t *data, size_t size)
{
    static struct scenario s;
    char err[256];
    memset(err, 'x', sizeof err);
    if (scenario_parse((const char *)data, size, &s, err, sizeof err) == 0) {
        if (err[0] != '\0')
            abort();
        check_scenario(&s);
    } else if (strncmp(err, "line ", 5) != 0 || memchr(err, '\0', sizeof err) == NULL) {
        abort();
    }
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_scenario(data, size);
}
#endif
