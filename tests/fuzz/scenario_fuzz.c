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

/* A sequence's items: a kernel that exists, or a call with its direction
 * and bytes in range; 'kernels' counts the kernels, 'calls_only' wants none. */
static void check_seq(const struct scenario *s, const struct scn_seq *q, int *kernels, int calls_only)
{
    int i;
    if (q->n < 0 || q->n > SCN_MAX_SEQ)
        abort();
    for (i = 0; i < q->n; i++) {
        const struct scn_item *it = &q->items[i];
        if (it->when != 'a' && it->when != 'p' && it->when != 'd' && it->when != 'm')
            abort();
        switch (it->kind) {
        case SCN_ITEM_KERNEL:
            if (calls_only || it->kernel < 0 || it->kernel >= s->nkernels)
                abort();
            if (kernels != NULL)
                (*kernels)++;
            break;
        case SCN_ITEM_COPY:
            if (it->dir != 'h' && it->dir != 'd' && it->dir != 'D')
                abort();
            /* fall through */
        case SCN_ITEM_MEMSET:
            if (it->bytes < 1 || it->bytes > SCN_MAX_ITEM_BYTES || (it->per != 0 && it->per != 't' && it->per != 'n'))
                abort();
            break;
        case SCN_ITEM_SYNC:
            break;
        default:
            abort();
        }
    }
}

static void check_scenario(const struct scenario *s)
{
    int i, kernels = 0;
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
    check_seq(s, &s->pre, &kernels, 0);
    check_seq(s, &s->layer, &kernels, 0);
    check_seq(s, &s->post, &kernels, 0);
    check_seq(s, &s->mask_check, NULL, 0);
    check_seq(s, &s->stop_check, NULL, 0);
    check_seq(s, &s->prompt_prelude, NULL, 0);
    check_seq(s, &s->before_prompt, NULL, 1);
    check_seq(s, &s->after_generation, NULL, 1);
    /* a read-back the replay knows; none with chunks that read back */
    if ((unsigned)s->readback > SCN_READ_NONE || (s->readback == SCN_READ_NONE && s->chunk_read))
        abort();
    if (kernels == 0 || s->layers < 1 || s->layers > SCN_MAX_LAYERS ||
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
