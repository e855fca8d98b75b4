/* What each call says to the phase engine: the event an API is (a launch,
 * a graph launch, a copy, a memset, a host sync), and per kernel name id
 * its class, computed once: the phase a rule gives it, an embedding lookup
 * (a forward's first kernel), a KV-cache name, a norm (where a layer
 * begins). docs/phases.md, "Signals". */
#include "phase_state.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/real_symbols.h"
#include "ranges.h"

/* ---- what each API is to the engine ------------------------------------------------------ */

void build_api_table(void)
{
    static const struct {
        const char *name;
        uint8_t kind;
    } apis[] = {
#define OBS_PHASE_API_ROW(id, name, kind, family) {name, OBS_KIND_##kind},
        OBS_API_LIST(OBS_PHASE_API_ROW)
#undef OBS_PHASE_API_ROW
    };
    unsigned i;
    for (i = 0; i < OBS_API_COUNT; i++) {
        const char *n = apis[i].name;
        switch (apis[i].kind) {
        case OBS_KIND_KERNEL:
            obs_engine.set.api_event[i] = EV_LAUNCH;
            break;
        case OBS_KIND_GRAPH:
            obs_engine.set.api_event[i] = EV_GRAPH;
            break;
        case OBS_KIND_MEMCPY: /* a copy without "Async" returns when it is done: the host waited */
            obs_engine.set.api_event[i] = strstr(n, "Async") == NULL ? EV_COPY_SYNC : EV_COPY;
            break;
        case OBS_KIND_MEMSET:
            obs_engine.set.api_event[i] = EV_MEMSET;
            break;
        case OBS_KIND_SYNC: /* a stream waiting for an event does not block the host */
            obs_engine.set.api_event[i] = strstr(n, "WaitEvent") == NULL ? EV_HOST_SYNC : EV_OTHER;
            break;
        default:
            obs_engine.set.api_event[i] = EV_OTHER;
        }
    }
}

/* Automatic mode's KV_GATHER names: kernels whose base name says they read
 * or write the KV cache (gathers, cache writes such as vLLM's
 * reshape_and_cache, decode attention over a paged or blocked cache such
 * as vLLM's paged_attention and TensorRT-LLM's masked_multihead_attention). */
static const char *const kv_globs[] = {"*gather*", "*Gather*", "*GATHER*", "*cache*", "*Cache*",
                                       "*paged_attention*", "*PagedAttention*", "*multihead_attention*"};

/* PyTorch's generic tensor ops whose names say gather or KV but touch no
 * cache: torch.topk and torch.sort (gatherTopK, bitonicSortKVInPlace: keys
 * and values), torch.gather and indexing (vectorized_gather_kernel,
 * _scatter_gather_elementwise_kernel): a mixture of experts' router runs
 * them in every layer (tests/frameworks/fw_generate.py qwen2-moe). */
static const char *const not_kv_names[] = {"gatherTopK", "bitonicSortKVInPlace", "warpMergeSortKVInPlace",
                                           "vectorized_gather_kernel", "_scatter_gather_elementwise_kernel"};

/* Automatic mode: the kernels a forward of a decoder begins with, its
 * embedding lookup: PyTorch's (index_select: indexSelectSmallIndex,
 * indexSelectLargeIndex, or its gather for many indexes), ggml's get_rows,
 * TensorRT-LLM's lookup_kernel, and any kernel whose base name says embed
 * (an Inductor kernel that fused the lookup: triton_per_fused_..._embedding_...).
 * A forward's lookups come in a group (GPT-2: the tokens' and the
 * positions'); a launch of one inside a layer (a mixture of experts' router
 * gathers) begins no forward (docs/phases.md, "Forwards"). */
static const char *const embedding_globs[] = {"indexSelectSmallIndex", "indexSelectLargeIndex",
                                              "vectorized_gather_kernel", "*get_rows*", "lookup_kernel",
                                              "*embed*", "*Embed*", "*EMBED*"};

/* PyTorch's generic gather, which an embedding takes for a longer prompt
 * (the 24-layer Llama's prompts of 37 and 91 tokens: tests/frameworks
 * llama-deep) and a mixture of experts' router inside its layers: a
 * generation's first forward may begin with it, no later one does. */
static const char *const gather_names[] = {"_scatter_gather_elementwise_kernel"};

/* "kv" in any case, other than as the end of "qkv" (a fused query-key-value
 * projection, a GEMM that does not touch the cache). */
static bool kv_in_name(const char *name)
{
    const char *p;
    for (p = name; p[0] != '\0' && p[1] != '\0'; p++)
        if ((p[0] == 'k' || p[0] == 'K') && (p[1] == 'v' || p[1] == 'V') && !(p > name && (p[-1] == 'q' || p[-1] == 'Q')))
            return true;
    return false;
}

static bool norm_in_name(const char *name)
{
    const char *p;
    for (p = name; p[0] != '\0'; p++)
        if ((p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'o' && (p[2] | 0x20) == 'r' && (p[3] | 0x20) == 'm')
            return true;
    return false;
}

static uint8_t classify_name(const char *name)
{
    uint8_t cls = CLASS_KNOWN;
    unsigned i;
    const struct engine_settings *set = &obs_engine.set;
    if (set->have_layer_rule ? obs_phase_rules_match_kernel(&set->layer_rules, name) != OBS_PHASE_NONE
                             : norm_in_name(name))
        cls |= CLASS_NORM;
    if (set->mode == OBS_PHASES_RULES) {
        cls |= obs_phase_rules_match_kernel(&set->rules, name) & CLASS_PHASE_MASK;
        if (set->have_step_rule && obs_phase_rules_match_kernel(&set->step_rules, name) != OBS_PHASE_NONE)
            cls |= CLASS_STEP;
        if (set->have_iteration_rule && obs_phase_rules_match_kernel(&set->iteration_rules, name) != OBS_PHASE_NONE)
            cls |= CLASS_ITERATION;
        if (set->rules.sized_mask | set->rules.iter_kernel_mask) {
            uint32_t mask = obs_phase_rules_kernel_mask(&set->rules, name);
            cls |= (obs_phase_rules_sized(&set->rules, mask) ? CLASS_SIZED : 0) |
                   (mask & set->rules.iter_kernel_mask ? CLASS_ITER : 0);
        }
    } else {
        for (i = 0; i < sizeof kv_globs / sizeof kv_globs[0]; i++)
            if (obs_glob_match(kv_globs[i], name)) {
                cls |= CLASS_KV_DEFAULT;
                break;
            }
        if (kv_in_name(name))
            cls |= CLASS_KV_DEFAULT;
        for (i = 0; i < sizeof not_kv_names / sizeof not_kv_names[0]; i++)
            if (strcmp(not_kv_names[i], name) == 0)
                cls &= (uint8_t)~CLASS_KV_DEFAULT;
        for (i = 0; i < sizeof embedding_globs / sizeof embedding_globs[0]; i++)
            if (obs_glob_match(embedding_globs[i], name)) {
                cls |= CLASS_EMBED;
                break;
            }
        for (i = 0; i < sizeof gather_names / sizeof gather_names[0]; i++)
            if (strcmp(gather_names[i], name) == 0)
                cls |= CLASS_GATHER;
    }
    return cls;
}

/* A kernel's base name (demangled with the C++ runtime's demangler, found
 * at run time, then cut to the base name). Slow path: once per name id. */
void base_name_of(uint32_t id, char *out, size_t outlen)
{
    cxa_demangle_fn demangle = atomic_load(&obs_engine.names.demangle);
    const char *mangled = obs_kernel_name_mangled(id);
    char *demangled = NULL;
    int status = -1;

    out[0] = '\0';
    if (mangled == NULL)
        return;
    if (demangle == NULL) {
        demangle = (cxa_demangle_fn)obs_real_dlsym(RTLD_DEFAULT, "__cxa_demangle");
        atomic_store(&obs_engine.names.demangle, demangle);
    }
    if (demangle != NULL && strncmp(mangled, "_Z", 2) == 0) {
        demangled = demangle(mangled, NULL, NULL, &status);
        if (status != 0) {
            free(demangled);
            demangled = NULL;
        }
    }
    obs_kernel_base_name_of(mangled, demangled, out, outlen);
    free(demangled);
}

uint8_t classify_slow(uint32_t id)
{
    char base[256];
    uint8_t cls;
    obs_call_note_slow();
    base_name_of(id, base, sizeof base);
    cls = classify_name(base);
    if (id < CLASS_CACHE) {
        uint32_t h = obs_name_hash(base); /* name_family; 0 stays "not classified yet" */
        atomic_store_explicit(&obs_engine.names.family_of[id], h != 0 ? h : 1u, memory_order_relaxed);
    }
    /* which rule (or KV glob) a name matched: once per name id */
    if (obs_engine.set.mode == OBS_PHASES_RULES)
        OBS_DEBUG_LOG(PHASES, 2, "name id=%u base=%s mangled=%s rule=%s%s%s%s%s", id, base,
                      obs_kernel_name_mangled(id) != NULL ? obs_kernel_name_mangled(id) : "?",
                      phase_names[cls & CLASS_PHASE_MASK], cls & CLASS_STEP ? " OBS_STEP=yes" : "",
                      cls & CLASS_SIZED ? " by-size=yes" : "", cls & CLASS_ITER ? " iter-selector=yes" : "",
                      cls & CLASS_ITERATION ? " OBS_ITERATION=yes" : "");
    else
        OBS_DEBUG_LOG(PHASES, 2, "name id=%u base=%s mangled=%s kv-glob=%s embedding=%s", id, base,
                      obs_kernel_name_mangled(id) != NULL ? obs_kernel_name_mangled(id) : "?",
                      cls & CLASS_KV_DEFAULT ? "yes" : "no",
                      cls & CLASS_EMBED ? "yes" : cls & CLASS_GATHER ? "first-forward" : "no");
    return cls;
}

/* OBS_NVTX_LAUNCH=1: a range per launch, named after the kernel's base name. */
uint32_t launch_handle(uint32_t id)
{
    _Atomic uint32_t *handles = obs_engine.names.launch_handles;
    uint32_t h = id < CLASS_CACHE ? atomic_load_explicit(&handles[id], memory_order_relaxed) : 0;
    char base[256];
    if (obs_likely(h != 0))
        return h;
    base_name_of(id, base, sizeof base);
    h = obs_range_handle(base[0] != '\0' ? base : "kernel", 0);
    if (id < CLASS_CACHE)
        atomic_store_explicit(&handles[id], h, memory_order_relaxed);
    return h;
}
