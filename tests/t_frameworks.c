/* Real frameworks on the simulated driver, under the shim: PyTorch (its
 * wheels' CUDA runtime 13.2, cuBLAS, cuBLASLt, cuDNN, NVML) and Hugging Face
 * transformers' generate(), with no GPU (docs/frameworks.md).
 *
 * The frameworks' environment is a Python virtual environment holding
 * torch and transformers (contrib/install-deps --frameworks makes it):
 * $OBS_FRAMEWORKS_ENV (make check passes it on), else
 * $HOME/.cache/obsshim/frameworks. Without one, or when it cannot import
 * both, the test skips and says why; under a sanitizer too.
 *
 * Cases (tests/frameworks/): PyTorch's features one by one (torch_basics.py,
 * with the default caching allocator and with expandable_segments), then
 * fw_generate.py's (a) Llama small and deep, (b) GPT-2, Llama with its
 * prompts prefilled in chunks (generate(prefill_chunk_size)), (c) decode by CUDA
 * graph over a static KV cache, (d) two models on two threads, and two
 * processes at once, (e) the layer shapes of issue 27: mixtures of experts
 * on every layer (Qwen2-MoE), alternating with dense layers (Qwen3-MoE),
 * after a dense first layer (Qwen3-MoE), Gemma 2's sliding-window and
 * global attention layers, (f) issue 34's loops of other shapes:
 * generate() with no streamer, in batches, sampled, returning a dict;
 * hand-written PyTorch decoders reading each token with .item(), keeping
 * them on the device, replaying a CUDA graph captured before the first
 * prompt (fw_loops.py); transformers' continuous batching (fw_serving.py),
 * (g) torch.compile: a compiled block, decode steps compiled in default
 * and reduce-overhead modes (fw_compiled.py). Each case runs twice, at
 * once: on the simulated driver alone (LD_LIBRARY_PATH=sim/driver) and under the shim with
 * default settings (contrib/obs-run --sim), except the two processes,
 * which run the llama case each, under the shim only. Checks:
 *   - both runs exit 0, every step of the basics runs;
 *   - the generated token ids are the same with and without the shim (the
 *     two processes': those of the llama case without it);
 *   - the driver's log (OBS_SIM_LOG) and the trace hold the same launches,
 *     copies, memsets, syncs and graph launches, thread by thread, record by
 *     record: kind, kernel name, stream, bytes (nodes of a graph launch),
 *     status; so each was recorded exactly once; no record lost;
 *   - no logged stub of the driver is called;
 *   - the ground truth the scripts wrote (fw_truth.py) has one timing line
 *     per generation.
 *   - the phase engine against that truth (tests/phase_compare.c): every
 *     launch's generation, phase and step in the trace, and live for every
 *     launch the trace did not relabel after the fact; TTFT, tokens/s and
 *     steps of the phase tables equal the spans of the calls the truth's
 *     marks name in the same trace (to the first token's read, or, where
 *     the generation reads none, to the first delimiter after its prompt's
 *     forward; the program's own TTFT printed beside; a serving loop's
 *     generation: none, first token "serving", docs/serving.md);
 *     obs-report suggest-phases' rules fed back reproduce the automatic
 *     labels (docs/phases.md, docs/phases-report.md);
 *   - a serving loop (fw_serving.py): the serving view against the truth's
 *     iterations (what the scheduler packed, from the forward's
 *     pre-hook): each one row exactly, none split or merged; its kind,
 *     tokens and sequences (docs/serving.md, "Tests");
 *   - layers: every launch's layer in the trace and live against the
 *     decoder layers' hooks, graph nodes' layers, and every launch outside
 *     layers in the trace's EMBED or HEAD as the truth's marks say
 *     (docs/layers.md, "Tests").
 * Checks today's engine is known to fail carry the reason as a TAP TODO
 * (struct fw_todo), never skipped or loosened: the engine's rewrite of
 * issue 34 makes them plain checks.
 * OBS_FRAMEWORKS_CASE=TEXT runs only the cases whose label contains TEXT
 * (procs compares its tokens with llama's: run both).
 * Printed: FIGURES lines of all of that, per case (one "FIGURES case"
 * line each, and their table at the end: launches, right in the trace,
 * live, live from the thread's second forward on, layers, TTFT),
 * the records per case, and what PyTorch asked of the driver: entry points
 * called, private tables, the runtime versions of the integrity checks, NVML. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver_log.h"
#include "fw_env.h"
#include "phase_compare.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"
#include "trace/trace.h"

#define RUN_TIMEOUT_S 900

static char python[4200], env_dir[4100];
static char obs_run[4300], driver_dir[4300], frameworks_dir[4300], inject_lib[4300];

/* ---- distinct names ---------------------------------------------------------------------------- */

struct name_set {
    char **names;
    size_t n, cap;
};

static void set_add(struct name_set *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->names = realloc(s->names, s->cap * sizeof *s->names);
        if (s->names == NULL)
            bail("out of memory");
    }
    if ((s->names[s->n++] = strdup(name)) == NULL)
        bail("out of memory");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void set_print(const char *what, struct name_set *s)
{
    char line[120];
    size_t i, len = 0;
    qsort(s->names, s->n, sizeof *s->names, by_name);
    diag("%s (%zu):", what, s->n);
    line[0] = '\0';
    for (i = 0; i < s->n; i++) {
        if (len && len + strlen(s->names[i]) + 1 > 100) {
            diag("  %s", line);
            len = 0;
        }
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", len ? " " : "", s->names[i]);
    }
    if (len)
        diag("  %s", line);
}

/* What PyTorch asked of the driver, over every run without the shim. */
static struct name_set called, stubs, tables, slots, integrity, nvml, refused;

/* ---- the driver's log (driver_log.h) ------------------------------------------------------------ */

/* Note what the program asked of the driver (runs without the shim). */
static void contract_line(char **f)
{
    if (strncmp(f[0], "cuGetProcAddress", 16) == 0) {
        if (strtol(f[5], NULL, 10) != 0)
            set_add(&refused, strcmp(f[2], "-") == 0 ? "\"\"(probe)" : f[2]);
    } else if (strcmp(f[0], "cuGetExportTable") == 0) {
        char t[64];
        snprintf(t, sizeof t, "%.8s%s", f[2], strtol(f[5], NULL, 10) ? "(refused)" : "");
        set_add(&tables, t);
    } else if (strncmp(f[0], "cuGetExportTable.", 17) == 0) {
        set_add(&slots, f[0] + 17);
        if (strcmp(f[0], "cuGetExportTable.integrity.1") == 0)
            set_add(&integrity, f[2]);
    } else if (strncmp(f[0], "nvml", 4) == 0) {
        set_add(&nvml, f[0]);
    } else if (strncmp(f[0], "cu", 2) == 0) {
        set_add(&called, f[0]);
    }
}

/* Every line of a log: the stubs called; with *contract, what was asked
 * of the driver. */
static void note_line(char **f, int nf, void *contract)
{
    (void)nf;
    if (strcmp(f[2], "stub") == 0 && strcmp(f[1], "other") == 0)
        set_add(&stubs, f[0]);
    if (*(const int *)contract)
        contract_line(f);
}

static void log_read(const char *path, struct dlog *lg, int contract)
{
    dlog_read(path, lg, note_line, &contract);
}

/* Record by record, thread by thread: the trace's calls of each thread in
 * their order against the log's lines of that thread (the tid column). */
static void compare(const char *label, const struct dlog *lg, const struct obs_trace *t, struct dlog_result *k)
{
    dlog_compare(label, lg, t, k);
    is_int((long long)lg->n, (long long)k->trace_records,
           "%s: as many launch/copy/memset/sync/graph records in the trace as in the driver's log (%zu)", label, lg->n);
    is_int(0, (long long)k->unmatched, "%s: every record of the log has its thread's next record in the trace", label);
    is_int(0, (long long)k->bad, "%s: record by record, thread by thread: kind, kernel name, stream, bytes, status",
           label);
}

/* ---- the cases ---------------------------------------------------------------------------------- */

/* Why a check of a case is known to fail on today's engine: a TAP TODO
 * (automake: XFAIL, so make check stays green) with the reason; NULL, a
 * plain check. The engine's rewrite (issue 34) turns them into plain
 * checks: a TODO that passes says so ("TODO passes now"). */
struct fw_todo {
    const char *phases_trace, *phases_live; /* generation, phase and step of every launch */
    const char *layers_trace, *layers_live; /* each launch's layer */
    const char *embed_head, *graph_layers;  /* EMBED/HEAD; a graph's kernel nodes' layers */
    const char *ttft;                       /* TTFT, tokens/s and steps of the phase tables against the named calls */
    const char *round_trip;                 /* suggest-phases' rules against the automatic labels */
    const char *serving_kinds;              /* the serving view's kind, tokens, sequences per iteration */
};

struct fw_case {
    const char *label;
    const char *script;      /* in tests/frameworks */
    const char *arg;         /* the case, or NULL */
    const char *extra_env;   /* or NULL */
    int compare_plain;       /* also run without the shim, compare the tokens */
    int procs;               /* 2: two child processes, logs and traces .0 and .1 */
    long generations;        /* per process; 0: the basics */
    int no_truth;            /* its "tokens" lines are outputs: compared, no phase truth (compiled-mlp) */
    struct fw_todo todo;
    /* a case run with rules of its own (docs/phases.md, "Limits": the rule that states a case the automatic
     * mode cannot tell): extra_env its OBS_PHASES, this its OBS_STEP; no round trip (its rules are given) */
    const char *rules_step;
};

#define NO_TODO {.phases_trace = NULL}

/* The reasons of the corpus' TODOs (issue 34): what today's engine and phase tables do with each loop (its
 * decision log, docs/phases.md "Limits"; 2026-12-02). */
#define WARMUP_LIVE_LAYERS                                                                                             \
    "live, the warm-up forwards before the first prompt are that generation's steps (nothing before the capture "  \
    "tells a warm-up): from its second decode forward on, the decode template pushes their LAYER ranges (their "   \
    "layers do run; the program's hooks mark none outside a generation, and the trace takes them back with the "   \
    "warm-up's labels): one warm-up forward's launches in its layers"
#define ONE_TOKEN_PROMPT_KIND                                                                                          \
    "a request whose prompt is one token, joining sequences that decode while another leaves, feeds one token as " \
    "each of them does: as many tokens as sequences sampled, as many as the iteration before, so the stream's "    \
    "sizes read it as decode only where the scheduler packed a prompt (docs/serving.md, \"Limits\")"
/* The torch.compile'd steps (issue 34): compiled-decode is right on every
 * launch since 2026-12-02 (busy gaps, autotuning inside a forward, the
 * compile-time launches joining their step: docs/phases.md "Idle gaps").
 * With reduce-overhead, CUDA graph trees copy each step's token into the
 * graph's static input with a launch before the replay, inside the
 * compiled call: the program's truth counts it in the step it feeds, while
 * a loop that replays its graph by hand (loop-graph: a copy, a launch,
 * then graph.replay()) counts the same calls in the step before, as the
 * engine does: the stream cannot say which (docs/phases.md, "Limits"). No
 * layer, EMBED or HEAD truth (no hook inside a compiled region): those
 * checks do not run. */
#define GRAPH_TREES_FILL                                                                                               \
    "the launch that copies each step's token into the CUDA graph tree's static input, before the replay, is in "  \
    "the step before, where the program counts it in the compiled call's step (a graph replayed by hand: the "     \
    "step before, loop-graph); live, also the first compiled call's compile-time launches (8), which the trace "   \
    "relabels into their step"

/* Rules begin a prompt's PREFILL at its first launch: the copy of its ids
 * before it (since the step's token read) stays in the step before, where
 * the automatic mode makes it the prompt's first call (start_generation's
 * relabel) and the truth names it; so TTFT from the PREFILL's first call
 * is the launch's, a little later, in a thread's later generations. */
#define RULES_PROMPT_AT_LAUNCH                                                                                         \
    "with rules a prompt's PREFILL begins at its first launch: the copy of its ids before it stays in the step "   \
    "before (the automatic mode makes it the prompt's first call), so the phase tables' TTFT starts at the "       \
    "launch, after the truth's first call, in every generation after a thread's first"

/* ok(), or a TODO with its reason (a TODO that passes is said to pass). */
static void check_todo(int good, const char *todo, const char *label, const char *fmt, ...) TAP_PRINTF(4, 5);
static void check_todo(int good, const char *todo, const char *label, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (todo != NULL && good)
        diag("%s: TODO passes now: take the mark off (%s)", label, todo);
    ok_todo(good, todo, "%s: %s", label, text);
}

/* ---- phases: the engine against the frameworks' truth (issues 22, 34) --------------------------- */

/* One process's figures, for its FIGURES line and the table at the end. */
struct fw_figures {
    char label[64];
    size_t launches, trace_ok, live_ok, kept, kept_live_ok;
    size_t later, later_live_ok;     /* launches from the thread's second forward on, and those right live */
    size_t layer_trace_ok, layer_live_ok;
    int no_layers;                   /* the truth marks no layer (a compiled forward): no layer figures */
    size_t timing, ttft_equal, ttft_read, ttft_forward, ttft_serving;
    double ttft_worst;               /* the largest |difference| against the program's clock (reads), % */
    int ttft_compared;
};

static struct fw_figures table[40];
static size_t ntable;

static double percent(size_t part, size_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* part of whole as "12.34 %" (sep: between the figure and the sign), or
 * "n/a" where there is no whole or no such figure (known == 0). */
static const char *percent_text(char *buf, size_t len, size_t part, size_t whole, int known, const char *sep)
{
    if (!known || whole == 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.2f%s%%", percent(part, whole), sep);
    return buf;
}

/* Each launch's generation, phase and step in the trace equal the truth's
 * (fw_truth.py: the model's forward hooks); live, every launch the trace
 * did not relabel after the fact, live generations numbered over those the
 * trace kept (kept_live_generations). Captured launches (inside the truth's
 * GRAPH_CAPTURE) are not executions: left out and counted. Also counted,
 * not checked: live from the thread's second forward on (the truth's
 * FORWARD marks: its first forward teaches the engine the template). */
/* Relabelled after the fact: a RELABEL record, or the trace took the label off (a RELABEL of no phase: the
 * launch is in no range in the trace, in one live). */
static int relabelled_after(const struct pc_launch *l)
{
    return l->relabelled || (l->trace.phase[0] == '\0' && l->live.phase[0] != '\0');
}

/* Live, a generation is a PREFILL range pushed (phase_compare.h). One the trace took back whole (every launch
 * of it relabelled: a warm-up before the first prompt, a serving loop's first iterations pushed as prompts
 * before the loop was known) was pushed all the same, so every later live generation's number runs one
 * ahead of the truth's, though its ranges are right. Returns each launch's live generation counted over
 * the live generations the trace kept (PC_NO_GEN where its own was taken back), in a new array. */
static long *kept_live_generations(const struct pc_run *run)
{
    long max = -1, *gen = calloc(run->n ? run->n : 1, sizeof *gen);
    size_t i, g, width;
    uint8_t *kept;
    for (i = 0; i < run->n; i++)
        if (run->l[i].live.gen > max)
            max = run->l[i].live.gen;
    width = (size_t)(max + 1);
    kept = calloc(run->ntids * width + 1, 1);
    if (gen == NULL || kept == NULL)
        bail("out of memory");
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        if (!l->captured && l->live.gen >= 0 && !relabelled_after(l))
            kept[l->thread * width + (size_t)l->live.gen] = 1;
    }
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        long n = 0;
        gen[i] = l->live.gen;
        if (l->live.gen < 0)
            continue;
        if (!kept[l->thread * width + (size_t)l->live.gen]) {
            gen[i] = PC_NO_GEN;
            continue;
        }
        for (g = 0; g < (size_t)l->live.gen; g++)
            n += kept[l->thread * width + g];
        gen[i] = n;
    }
    free(kept);
    return gen;
}

static void phase_attribution(const char *label, struct pc_run *run, const struct fw_todo *todo,
                              struct fw_figures *fig)
{
    size_t i, captured = 0, shown = 0, kept_raw_ok = 0;
    char a[64], b[64], d[64];
    long *kept_gen = kept_live_generations(run);
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        struct pc_label live = l->live;
        int tr, lv, relabelled;
        if (l->captured) {
            captured++;
            continue;
        }
        fig->launches++;
        tr = pc_same(&l->truth, &l->trace, 1);
        live.gen = kept_gen[i];
        lv = pc_same(&l->truth, &live, 1);
        fig->trace_ok += tr;
        fig->live_ok += lv;
        if (l->forward >= 2) {
            fig->later++;
            fig->later_live_ok += lv;
        }
        relabelled = relabelled_after(l);
        if (!relabelled) {
            fig->kept++;
            fig->kept_live_ok += lv;
            kept_raw_ok += pc_same(&l->truth, &l->live, 1);
        }
        if ((!tr || (!lv && !relabelled)) && shown++ < 3)
            diag("%s: launch %zu %.60s: truth %s live %s trace %s%s", label, i, run->names[l->name],
                 pc_label_text(&l->truth, a, sizeof a), pc_label_text(&l->live, b, sizeof b),
                 pc_label_text(&l->trace, d, sizeof d), relabelled ? " (relabelled)" : "");
    }
    diag("FIGURES phases %s launches=%zu trace_ok=%zu (%.2f%%) live_ok=%zu (%.2f%%) live_from_2nd_forward=%zu of %zu "
         "(%.2f%%) relabelled=%zu captured=%zu generations=%zu kept_live_ok=%zu of %zu (%zu with the live generations "
         "counted as pushed)",
         label, fig->launches, fig->trace_ok, percent(fig->trace_ok, fig->launches), fig->live_ok,
         percent(fig->live_ok, fig->launches), fig->later_live_ok, fig->later, percent(fig->later_live_ok, fig->later),
         fig->launches - fig->kept, captured, run->ntiming, fig->kept_live_ok, fig->kept, kept_raw_ok);
    free(kept_gen);
    check_todo(fig->launches > 0 && fig->trace_ok == fig->launches, todo->phases_trace, label,
               "trace: every launch has the truth's generation, phase and step (%zu of %zu)", fig->trace_ok,
               fig->launches);
    check_todo(fig->kept > 0 && fig->kept_live_ok == fig->kept, todo->phases_live, label,
               "live: every launch the trace did not relabel has the truth's generation, phase and step (%zu of %zu; "
               "%zu relabelled after the fact; live generations the trace took back whole not counted)",
               fig->kept_live_ok, fig->kept, fig->launches - fig->kept);
}

/* LAYER/k (docs/layers.md) against the truth of the decoder layers' forward
 * hooks: every launch's layer (or none) in the trace; live, no launch in a
 * LAYER range other than its own (live layers come from the template the
 * previous prompt or step left: the first of each kind has none). */
static void layer_attribution(const char *label, struct pc_run *run, const struct fw_todo *todo,
                              struct fw_figures *fig)
{
    size_t i, launches = 0, in_layers = 0, live_in = 0, live_none = 0, live_wrong = 0, live_outside = 0, shown = 0;
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        if (l->captured)
            continue;
        launches++;
        in_layers += l->truth_layer >= 0;
        fig->layer_trace_ok += l->trace_layer == l->truth_layer;
        fig->layer_live_ok += l->live_layer == l->truth_layer;
        live_in += l->truth_layer >= 0 && l->live_layer == l->truth_layer;
        live_none += l->live_layer < 0 && l->truth_layer >= 0;
        live_wrong += l->live_layer >= 0 && l->live_layer != l->truth_layer;
        live_outside += l->live_layer >= 0 && l->truth_layer < 0;
        if ((l->trace_layer != l->truth_layer || (l->live_layer >= 0 && l->live_layer != l->truth_layer)) &&
            shown++ < 3)
            diag("%s: launch %zu %.60s: truth layer %d, live %d, trace %d", label, i, run->names[l->name],
                 l->truth_layer, l->live_layer, l->trace_layer);
    }
    if (in_layers == 0) { /* compiled-decode: one compiled graph for the forward, no hook inside it */
        fig->no_layers = 1;
        skip_block(2, "%s: no decoder layer's hooks in the truth (the layers run inside a compiled graph)", label);
        return;
    }
    diag("FIGURES layers %s launches=%zu in_layers=%zu trace_ok=%zu (%.2f%%) live_ok=%zu (%.2f%%) live_none=%zu "
         "live_wrong=%zu",
         label, launches, in_layers, fig->layer_trace_ok, percent(fig->layer_trace_ok, launches), fig->layer_live_ok,
         percent(fig->layer_live_ok, launches), live_none, live_wrong);
    check_todo(launches > 0 && fig->layer_trace_ok == launches, todo->layers_trace, label,
               "trace: every launch has the layer its decoder layer's hooks say, or none (%zu of %zu)",
               fig->layer_trace_ok, launches);
    check_todo(live_wrong == 0, todo->layers_live, label,
               "live: no launch inside a LAYER range other than its own (%zu of %zu in the right one; %zu outside "
               "the layers in one)",
               live_in, in_layers, live_outside);
}

/* EMBED and HEAD (docs/layers.md, "Reports") against fw_truth.py's marks:
 * EMBED from a prompt's start and from each forward's pre-hook on the
 * model to its first layer, HEAD from its last decoder layer's end to the
 * next forward (the final norm, the LM head and the loop's sampling,
 * token read, stop check and cache updates between forwards: those of the
 * forward before). Every launch outside layers in a prompt or step with
 * layers must be in the trace's EMBED or HEAD as the hooks say (scored by
 * pc_embed_head: launches the trace labels with another step are left to
 * the phase checks, a step holding a graph's capture is not scored). */
static void embed_head_attribution(const char *label, const struct pc_run *run, const char *todo)
{
    struct pc_part_score s;
    size_t outside;
    pc_embed_head(run, &s, label, 50);
    outside = s.embed + s.head;
    diag("FIGURES embed/head %s: outside_layers=%zu (embed=%zu head=%zu) right=%zu (%.2f%%); scored=%zu "
         "in_layers=%zu right_all=%zu other_label=%zu by_capture=%zu",
         label, outside, s.embed, s.head, s.outside_right, percent(s.outside_right, outside), s.scored, s.in_layers,
         s.right, s.other_label, s.by_capture);
    check_todo(s.in_layers > 0 && s.embed > 0 && s.head > 0 && s.right == s.scored, todo, label,
               "trace: every launch of a prompt or step outside its layers is in EMBED or HEAD as the model's hooks "
               "say, none in a layer is (%zu of %zu outside layers; %zu of %zu launches)",
               s.outside_right, outside, s.right, s.scored);
}

/* A thread's calls in order, by thread id. */
static size_t thread_calls(const struct obs_trace *t, long tid, const struct obs_call ***out)
{
    size_t i, n = 0;
    uint32_t th = UINT32_MAX;
    *out = NULL;
    for (i = 0; i < t->nthreads; i++)
        if ((long)t->threads[i].tid == tid)
            th = (uint32_t)i;
    if (th == UINT32_MAX)
        return 0;
    *out = malloc((t->threads[th].calls + 1) * sizeof **out);
    if (*out == NULL)
        bail("out of memory");
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].thread == th)
            (*out)[n++] = &t->calls[i];
    return n;
}

/* A host delimiter, as docs/phases.md defines it: a synchronize (not a
 * stream waiting for an event), or a copy to the host (or of the default
 * kind) without Async. */
static int delimits(const struct obs_call *c)
{
    const char *api = obs_api_name(c->api);
    if (c->kind == OBS_KIND_SYNC)
        return strstr(api, "WaitEvent") == NULL;
    return c->kind == OBS_KIND_MEMCPY && strstr(api, "Async") == NULL &&
           (obs_call_direction(c) == OBS_DIR_DTOH || obs_call_direction(c) == OBS_DIR_DEFAULT);
}

/* The end of the last of the n calls that began at or before mark
 * (reads: the read that returned before it), or of the first delimiter
 * that began at or after it (delimiter: the device's work before the mark
 * is done there); 0: none. */
static uint64_t end_at(const struct obs_call *const *c, size_t n, unsigned long long mark, int delimiter)
{
    size_t k;
    uint64_t end = 0;
    if (mark == 0)
        return 0;
    for (k = 0; k < n; k++) {
        if (delimiter && c[k]->host_begin >= mark && delimits(c[k]))
            return c[k]->host_end;
        if (!delimiter && c[k]->host_begin <= mark)
            end = c[k]->host_end;
    }
    return end;
}

/* TTFT and tokens/s of the trace's phase tables (obs-report phases, the
 * summary, HTML and SQLite all compute them so) against the spans of the
 * calls the truth's marks name, in the same trace (fw_truth.py: P before
 * the prompt's ids are copied, F before the generate function, R after the
 * first token's read, L after the last's, E and Z the end of the prompt's
 * forward and of the last forward; docs/phases-report.md): TTFT from the
 * prompt's first call (its ids' copy; in a thread's first generation, whose
 * inputs the engine cannot tell from the model's set-up copies, the first
 * launch at or after F) to the end of the first token's read where the
 * generation reads one ("read", first token "prefill"), else ("forward")
 * to the end of the first delimiter after E (the next time the host knows
 * the prompt's forward done; with OBS_GPU_TIME=steps its device end, not
 * run here), none when a launch of the first decode forward (at or after
 * D) comes before it; tokens/s = steps / (end of the last read - end of
 * the first), or (forward) / (end of the first delimiter after Z - that
 * after E).
 * Structural: no clock read elsewhere is compared; the program's own TTFT
 * (R - F, its clock) is printed beside. A serving loop's generation (the
 * truth's ITERATION marks on that thread and generation) has no TTFT, steps
 * or rates in the phase tables (docs/serving.md: no per-request TTFT, the
 * program marks no request to the shim): its row must say first token
 * "serving", TTFT and tokens/s undefined, 0 decode steps. */
static int serving_generation(const struct pc_run *run, long tid, long gen)
{
    size_t k;
    for (k = 0; k < run->niters; k++)
        if (run->tids[run->iters[k].thread] == tid && run->iters[k].gen == gen)
            return 1;
    return 0;
}

static void phase_timing(const char *label, const struct pc_run *run, const struct obs_trace *t, const char *todo,
                         struct fw_figures *fig)
{
    struct obs_phase_stats s;
    size_t i, k;
    if (obs_phase_stats_compute(t, &s) != 0)
        bail("out of memory");
    fig->timing = run->ntiming;
    for (i = 0; i < run->ntiming; i++) {
        const struct pc_timing *g = &run->timing[i];
        const struct obs_call **c;
        const struct obs_call *first = NULL;
        const struct obs_generation_row *row = NULL;
        size_t n = thread_calls(t, g->tid, &c);
        int fwd = g->ttft_forward;
        uint64_t ttft_end = end_at(c, n, fwd ? g->mark_prompt_end : g->mark_prefill_read, fwd);
        uint64_t rate_end = end_at(c, n, fwd ? g->mark_last_forward_end : g->mark_last_read, fwd);
        double want_ttft = NAN, want_tps = NAN, program = g->ttft_ns >= 0 ? (double)g->ttft_ns / 1e6 : NAN;
        int serving = serving_generation(run, g->tid, g->gen);
        fig->ttft_forward += fwd && !serving;
        fig->ttft_read += !fwd && !serving;
        for (k = 0; k < n && first == NULL; k++) {
            int launch = c[k]->kind == OBS_KIND_KERNEL || c[k]->kind == OBS_KIND_GRAPH;
            if (c[k]->host_begin >= (g->gen == 0 ? g->mark_prefill : g->mark_prompt) && (g->gen != 0 || launch))
                first = c[k];
        }
        /* a launch of the first decode forward before the delimiter after the prompt's: none ends the
         * prompt's forward alone, host time cannot tell when it ended (no TTFT, no rate from it) */
        for (k = 0; fwd && ttft_end != 0 && g->mark_first_step != 0 && k < n; k++)
            if ((c[k]->kind == OBS_KIND_KERNEL || c[k]->kind == OBS_KIND_GRAPH) &&
                c[k]->host_begin >= g->mark_first_step && c[k]->host_end <= ttft_end)
                ttft_end = 0;
        if (first != NULL && ttft_end > first->host_begin)
            want_ttft = (double)(ttft_end - first->host_begin) / 1e6;
        if (g->steps >= 1 && ttft_end != 0 && rate_end > ttft_end)
            want_tps = (double)g->steps * 1e9 / (double)(rate_end - ttft_end);
        for (k = 0; k < s.ngens; k++)
            if ((long)s.gens[k].thread == g->tid && (long)s.gens[k].generation == g->gen)
                row = &s.gens[k];
        if (serving) {
            int none = row != NULL && row->serving && strcmp(row->first_token, OBS_FIRST_TOKEN_SERVING) == 0 &&
                       !row->ttft_defined && !row->tokens_defined && row->decode_steps == 0;
            fig->ttft_serving++;
            fig->ttft_equal += none;
            if (!none)
                diag("%s: thread %ld generation %ld, a serving loop's: the phase tables say first token %s, TTFT %s, "
                     "tokens/s %s, %ld steps (want serving, none, none, 0)",
                     label, g->tid, g->gen, row ? row->first_token : "(no row)",
                     row && row->ttft_defined ? "defined" : "none", row && row->tokens_defined ? "defined" : "none",
                     row ? (long)row->decode_steps : -1L);
            else
                diag("FIGURES ttft %s thread %ld generation %ld: a serving loop's, no TTFT in the phase tables (first "
                     "token serving); the program's clock to the first iteration's sampled-ids read: %.3f ms",
                     label, g->tid, g->gen, program);
            free(c);
            continue;
        }
        if (row != NULL && (isnan(want_ttft) ? !row->ttft_defined
                                              : row->ttft_defined && fabs(row->ttft_ms - want_ttft) <= 1e-9 * want_ttft) &&
            (fwd || strcmp(row->first_token, "prefill") == 0) && (long)row->decode_steps == g->steps &&
            (isnan(want_tps) ? !row->tokens_defined
                             : row->tokens_defined && fabs(row->tokens_per_s - want_tps) <= 1e-9 * want_tps))
            fig->ttft_equal++;
        else
            diag("%s: thread %ld generation %ld (TTFT to the %s): from the named calls TTFT %.6f ms, %.3f tokens/s, "
                 "%ld steps; the phase tables %.6f ms (%s), %.3f tokens/s, %ld steps",
                 label, g->tid, g->gen, fwd ? "prompt forward's end" : "token read", want_ttft, want_tps, g->steps,
                 row ? row->ttft_ms : NAN, row ? row->first_token : "no row", row ? row->tokens_per_s : NAN,
                 row ? (long)row->decode_steps : -1L);
        if (row != NULL && row->ttft_defined && !isnan(program) && program > 0) {
            /* the program's clock from its generate function's call (F), and (reads) from the prompt's ids copy
             * (P): the trace's TTFT starts at the latter, but in a thread's first generation at the former */
            double from_p = !fwd && g->mark_prompt && g->mark_prefill_read > g->mark_prompt
                                ? (double)(g->mark_prefill_read - g->mark_prompt) / 1e6
                                : program;
            double dev_f = 100.0 * (row->ttft_ms - program) / program;
            double dev_p = 100.0 * (row->ttft_ms - from_p) / from_p;
            /* the trace's TTFT lies between the two: its first call is at or after P (and in a thread's first
             * generation at or after F), its read ends before R; the nearer one says how far */
            double near = g->gen == 0 || fabs(dev_f) < fabs(dev_p) ? dev_f : dev_p;
            diag("FIGURES ttft %s thread %ld generation %ld: %.3f ms (first token %s; TTFT to the %s); the program's "
                 "clock: %.3f ms from its generate function (%+.2f%%), %.3f ms from the ids' copy (%+.2f%%)",
                 label, g->tid, g->gen, row->ttft_ms, row->first_token,
                 fwd ? "end of the prompt's forward" : "first token's read", program, dev_f, from_p, dev_p);
            if (!fwd) {
                fig->ttft_compared++;
                if (fabs(near) > fig->ttft_worst)
                    fig->ttft_worst = fabs(near);
            }
        }
        free(c);
    }
    diag("FIGURES ttft %s: %zu generations (%zu reading their first token, %zu not), %d beside the program's clock; "
         "the largest difference against the nearer of its two figures (from its generate function in a thread's "
         "first generation) %.2f%% (printed, not checked: two clocks)",
         label, run->ntiming, fig->ttft_read, fig->ttft_forward, fig->ttft_compared, fig->ttft_worst);
    check_todo(run->ntiming > 0 && fig->ttft_equal == run->ntiming, todo, label,
               "each generation's TTFT (to the first token's read, or to the delimiter after the prompt's forward "
               "where none is read), tokens/s and steps = the spans of the calls the truth names; a serving loop's: "
               "none, first token serving (%zu of %zu; %zu serving)",
               fig->ttft_equal, run->ntiming, fig->ttft_serving);
    obs_phase_stats_free(&s);
}

/* A decode step captured into a CUDA graph (llama-graph): its exec's kernel
 * nodes get their layers in the trace from the node walk (docs/layers.md,
 * "Graphs"); fw_truth.py's layer marks fire during the capture, so the
 * captured launches between them, in capture order, are the nodes' truth. */
static void graph_node_layers(const char *label, const struct pc_run *run, const struct obs_trace *t,
                              const char *todo)
{
    struct pc_graph_score s;
    pc_graph_node_layers(t, run, &s);
    diag("FIGURES graph layers %s: captured=%zu kernel_nodes=%zu in_layers=%zu right=%zu (%.2f%%) names_differ=%zu",
         label, s.captured, s.nodes, s.in_layers, s.right, percent(s.right, s.captured), s.names_differ);
    ok(s.execs == 1 && s.nodes == s.captured && s.names_differ == 0,
       "%s: the graph exec's %zu kernel nodes are the launches captured into it, in capture order", label, s.nodes);
    check_todo(s.captured > 0 && s.in_layers > 0 && s.right == s.captured, todo, label,
               "every kernel node of the graph has the layer its decoder layer's hooks said during the capture, or "
               "none (%zu of %zu; %zu in layers)",
               s.right, s.captured, s.in_layers);
}

/* cuDNN inside a stream capture (llama-graph-cudnn): its SDPA kernels
 * among the launches captured into the graph. Cases with cuDNN's SDPA off
 * have none and say nothing. */
static void captured_cudnn(const char *label, const struct pc_run *run)
{
    size_t i, captured = 0, cudnn = 0, eager = 0;
    for (i = 0; i < run->n; i++) {
        int is_cudnn = strncmp(run->names[run->l[i].name], "cudnn_", 6) == 0;
        captured += run->l[i].captured;
        cudnn += is_cudnn && run->l[i].captured;
        eager += is_cudnn && !run->l[i].captured;
    }
    if (cudnn == 0 && eager == 0)
        return;
    diag("FIGURES cudnn %s: %zu cuDNN launches captured of %zu captured, %zu eager", label, cudnn, captured, eager);
    ok(cudnn > 0, "%s: cuDNN's SDPA kernels captured into the CUDA graph (%zu)", label, cudnn);
}

/* A serving loop (the truth's ITERATION marks: fw_truth.py's Serving) in
 * the serving view (docs/serving.md; tests/phase_compare.h,
 * pc_serving_score): every iteration of the truth exact, one row holding
 * its launches and no other, none split or merged; each row's kind
 * (decode only, mixed, prompt only), tokens and sequences those the
 * scheduler packed (the forward's pre-hook on the host). Printed: those
 * figures, the host gaps' share of the view's wall time. */
static void serving_checks(const char *label, const struct pc_run *run, const struct obs_trace *t, const char *todo)
{
    struct pc_serving_score s;
    if (pc_serving_score(t, run, &s, label, 5) != 0)
        bail("out of memory");
    diag("FIGURES serving %s: iterations %zu (prompt %zu, mixed %zu, decode %zu), rows %zu; exact %zu (%.2f%%), split "
         "%zu, merged %zu; kinds right %zu (%.2f%%), tokens right %zu, sequences right %zu; host gaps %zu, p50 %.3f "
         "ms, p99 %.3f ms, %.2f%% of the wall time",
         label, s.truth, s.by_kind[0], s.by_kind[1], s.by_kind[2], s.rows, s.exact, percent(s.exact, s.truth), s.split,
         s.merged, s.kinds_right, percent(s.kinds_right, s.truth), s.tokens_right, s.sequences_right, s.gaps,
         s.gap_p50_ms, s.gap_p99_ms, 100.0 * s.gap_share);
    ok(s.truth > 0 && s.exact == s.truth && s.rows == s.truth,
       "%s: serving view: every iteration of the truth is one row, exact: none split, none merged (%zu of %zu; %zu "
       "rows)", label, s.exact, s.truth, s.rows);
    check_todo(s.truth > 0 && s.kinds_right == s.truth, todo, label,
               "serving view: every iteration's kind (decode only, mixed, prompt only) is the scheduler's (%zu of %zu)",
               s.kinds_right, s.truth);
    ok(s.truth > 0 && s.tokens_right == s.truth && s.sequences_right == s.truth,
       "%s: serving view: every iteration's tokens and sequences are those its forward fed and sampled (%zu and %zu "
       "of %zu)", label, s.tokens_right, s.sequences_right, s.truth);
}

/* Which TTFT the case's generations have (long: "to the ..."). */
static const char *ttft_to_text(const struct fw_figures *f, int long_form)
{
    if (f->ttft_read == 0 && f->ttft_forward == 0 && f->ttft_serving > 0)
        return long_form ? "none (a serving loop)" : "none (serving)";
    if (f->ttft_forward == 0)
        return long_form ? "to the token read" : "token read";
    if (f->ttft_read == 0)
        return long_form ? "to the prompt forward's end" : "prompt forward's end";
    return "both";
}

/* One line per process checked, and the table at the end ("n/a": live
 * from the second forward where the truth marks no forward, layers where
 * it marks no layer). */
static void figures_line(const struct fw_figures *f)
{
    char later[16], lt[16], ll[16];
    diag("FIGURES case %s: launches %zu; trace %.2f%%; live %.2f%%, from the thread's second forward on %s; "
         "layers trace %s, live %s; TTFT %s, %zu of %zu = the named calls' span, worst %.2f%% against the "
         "program's clock",
         f->label, f->launches, percent(f->trace_ok, f->launches), percent(f->live_ok, f->launches),
         percent_text(later, sizeof later, f->later_live_ok, f->later, 1, ""),
         percent_text(lt, sizeof lt, f->layer_trace_ok, f->launches, !f->no_layers, ""),
         percent_text(ll, sizeof ll, f->layer_live_ok, f->launches, !f->no_layers, ""),
         ttft_to_text(f, 1), f->ttft_equal, f->timing, f->ttft_worst);
}

static void phase_checks(const struct fw_case *c, const char *label, const char *log_path, const struct obs_trace *t)
{
    struct pc_run run;
    struct fw_figures fig;
    size_t mismatch = 0;
    memset(&fig, 0, sizeof fig);
    snprintf(fig.label, sizeof fig.label, "%s", label);
    pc_read_log(log_path, &run);
    pc_trace_labels(t, &run, &mismatch);
    phase_attribution(label, &run, &c->todo, &fig);
    layer_attribution(label, &run, &c->todo, &fig);
    for (size_t i = 0; i < run.n; i++)
        if (run.l[i].truth_layer >= 0 && !run.l[i].captured) {
            embed_head_attribution(label, &run, c->todo.embed_head);
            break;
        }
    for (size_t i = 0; i < run.n; i++)
        if (run.l[i].captured) {
            graph_node_layers(label, &run, t, c->todo.graph_layers);
            captured_cudnn(label, &run);
            break;
        }
    phase_timing(label, &run, t, c->todo.ttft, &fig);
    if (run.niters > 0)
        serving_checks(label, &run, t, c->todo.serving_kinds);
    figures_line(&fig);
    if (ntable < sizeof table / sizeof table[0])
        table[ntable++] = fig;
    pc_run_free(&run);
}

/* The table of every case's FIGURES line, at the end. */
static void figures_table(void)
{
    size_t i;
    if (ntable == 0)
        return;
    diag("FIGURES table: | case | launches | trace | live | live from 2nd forward | layers trace | layers live | "
         "TTFT to | TTFT = named calls | TTFT vs program's clock |");
    for (i = 0; i < ntable; i++) {
        const struct fw_figures *f = &table[i];
        char later[16], lt[16], ll[16], worst[32];
        if (f->ttft_compared)
            snprintf(worst, sizeof worst, "worst %.2f %%", f->ttft_worst);
        else
            snprintf(worst, sizeof worst, "n/a");
        diag("FIGURES table: | %s | %zu | %.2f %% | %.2f %% | %s | %s | %s | %s | %zu of %zu | %s |", f->label,
             f->launches, percent(f->trace_ok, f->launches), percent(f->live_ok, f->launches),
             percent_text(later, sizeof later, f->later_live_ok, f->later, 1, " "),
             percent_text(lt, sizeof lt, f->layer_trace_ok, f->launches, !f->no_layers, " "),
             percent_text(ll, sizeof ll, f->layer_live_ok, f->launches, !f->no_layers, " "),
             ttft_to_text(f, 0),
             f->ttft_equal, f->timing, worst);
    }
}

/* ---- runs --------------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_case(const struct fw_case *c, int shim, const char *log, const char *prefix, struct run_result *res,
                     int quiet, const char *const *rules)
{
    char script[4400], log_env[4400], path_env[4400], inject_env[4400], inductor_env[4500], triton_env[4500];
    const char *argv[12], *env[16];
    size_t a = 0, e = 0;
    snprintf(script, sizeof script, "%s/%s", frameworks_dir, c->script);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    if (shim) {
        argv[a++] = obs_run;
        argv[a++] = "--sim";
        argv[a++] = "-o";
        argv[a++] = prefix;
        argv[a++] = "--";
        snprintf(inject_env, sizeof inject_env, "NVTX_INJECTION64_PATH=%s", inject_lib);
        env[e++] = inject_env;
    } else {
        snprintf(path_env, sizeof path_env, "LD_LIBRARY_PATH=%s", driver_dir);
        env[e++] = path_env;
        env[e++] = "OBS_SIM_QUIET=1";
    }
    argv[a++] = python;
    argv[a++] = script;
    if (c->arg)
        argv[a++] = c->arg;
    argv[a] = NULL;
    env[e++] = log_env;
    env[e++] = "OBS_SIM_LOG_TID=1";
    env[e++] = "OBS_CLOCK=monotonic"; /* the truth's marks (time.monotonic_ns) and the trace: one clock */
    env[e++] = "LD_PRELOAD";
    env[e++] = "PYTHONDONTWRITEBYTECODE=1"; /* nothing written into the source tree */
    /* torch.compile's caches, empty for each run: a warm cache skips compilation and the autotuning launches
     * that come with it, so runs with and without the shim would not make the same calls */
    snprintf(inductor_env, sizeof inductor_env, "TORCHINDUCTOR_CACHE_DIR=%s.inductor", log);
    snprintf(triton_env, sizeof triton_env, "TRITON_CACHE_DIR=%s.triton", log);
    env[e++] = inductor_env;
    env[e++] = triton_env;
    if (c->extra_env)
        env[e++] = c->extra_env;
    if (c->rules_step)
        env[e++] = c->rules_step;
    if (rules != NULL) {
        env[e++] = rules[0];
        env[e++] = rules[1];
        env[e++] = rules[2];
    }
    env[e] = NULL;
    if (run_program(argv, env, RUN_TIMEOUT_S, res) != 0)
        bail("cannot run %s", python);
    if (!quiet && (!res->exited || res->status != 0)) {
        diag("%s%s: exit %d signal %d", c->label, shim ? " under the shim" : "", res->status, res->signal);
        diag_text("stderr", res->err);
    }
}

/* The "tokens CASE LABEL GEN IDS" lines, sorted (threads print in either
 * order). only_label: just that label's lines, as "GEN IDS" (a child of
 * the procs case against the llama case). */
static char *token_lines(const char *out, const char *only_label)
{
    char *copy = strdup(out ? out : ""), *save = NULL, *line, **lines = NULL, *joined;
    size_t n = 0, len = 1, i;
    if (copy == NULL)
        bail("out of memory");
    for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "tokens ", 7) != 0)
            continue;
        if (only_label != NULL) {
            char *label = strchr(line + 7, ' '), *gen = label ? strchr(label + 1, ' ') : NULL;
            if (gen == NULL || (size_t)(gen - label - 1) != strlen(only_label) ||
                strncmp(label + 1, only_label, strlen(only_label)) != 0)
                continue;
            line = gen + 1;
        }
        lines = realloc(lines, (n + 1) * sizeof *lines);
        if (lines == NULL)
            bail("out of memory");
        lines[n++] = line;
        len += strlen(line) + 1;
    }
    qsort(lines, n, sizeof *lines, by_name);
    joined = calloc(1, len);
    if (joined == NULL)
        bail("out of memory");
    for (i = 0; i < n; i++) {
        strcat(joined, lines[i]);
        strcat(joined, "\n");
    }
    free(lines);
    free(copy);
    return joined;
}

/* The run without the shim goes on in a child process while the test runs
 * the one with it (two cores halve the wait); its output comes back in
 * files. */
struct plain_job {
    pid_t pid;
    char out[4400], err[4400];
};

static void plain_start(const struct fw_case *c, const char *log, struct plain_job *job)
{
    snprintf(job->out, sizeof job->out, "%s.out", log);
    snprintf(job->err, sizeof job->err, "%s.err", log);
    fflush(stdout);
    fflush(stderr);
    job->pid = fork();
    if (job->pid < 0)
        bail("fork failed");
    if (job->pid == 0) {
        struct run_result res;
        run_case(c, 0, log, NULL, &res, 1, NULL);
        test_write_file(job->out, res.out ? res.out : "", res.out ? strlen(res.out) : 0);
        test_write_file(job->err, res.err ? res.err : "", res.err ? strlen(res.err) : 0);
        _exit(res.exited && res.status == 0 ? 0 : 1); /* no atexit: the temporary directory stays */
    }
}

/* 1 when the run exited 0; *out its stdout (malloc'ed). */
static int plain_wait(const char *label, struct plain_job *job, char **out)
{
    int status = 0;
    char *err;
    if (waitpid(job->pid, &status, 0) != job->pid)
        bail("waitpid failed");
    *out = test_read_file(job->out, NULL);
    if (*out == NULL)
        *out = strdup("");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        err = test_read_file(job->err, NULL);
        diag("%s: the run without the shim failed", label);
        diag_text("stderr", err ? err : "");
        free(err);
        return 0;
    }
    return 1;
}

/* Inductor's kernel names: triton_ then the kind (poi pointwise, red
 * reduction, per persistent reduction, tem template, for foreach) and
 * what it fused. */
static int is_inductor_name(const char *name)
{
    static const char *const kinds[] = {"triton_poi_", "triton_red_", "triton_per_", "triton_tem_", "triton_for_"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strncmp(name, kinds[i], strlen(kinds[i])) == 0)
            return 1;
    return 0;
}

/* torch.compile's Triton kernels (loaded from cubins with cuModuleLoad):
 * every launch the driver logged under such a name is in the trace under
 * it, mangled and displayed (compare() checked them record for record);
 * printed with the graph launches (Inductor's CUDA graph trees). Cases
 * that compile nothing have none and say nothing. */
static void triton_kernels(const char *label, const struct dlog *lg, const struct obs_trace *t)
{
    size_t i, logged = 0, traced = 0, named = 0, graphs = 0, distinct = 0;
    const char *first = NULL;
    for (i = 0; i < lg->n; i++)
        logged += dlog_kind_of(lg->r[i].kind) == OBS_KIND_KERNEL && is_inductor_name(lg->r[i].name);
    for (i = 1; i < t->nkernels; i++)
        if (t->kernels[i].mangled && is_inductor_name(t->kernels[i].mangled)) {
            distinct++;
            if (first == NULL)
                first = t->kernels[i].mangled;
        }
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        graphs += c->kind == OBS_KIND_GRAPH;
        if (c->kind != OBS_KIND_KERNEL || c->kernel == 0 || t->kernels[c->kernel].mangled == NULL ||
            !is_inductor_name(t->kernels[c->kernel].mangled))
            continue;
        traced++;
        named += strcmp(t->kernels[c->kernel].demangled, t->kernels[c->kernel].mangled) == 0;
    }
    if (logged == 0 && traced == 0)
        return;
    diag("FIGURES triton %s: %zu launches of %zu Triton kernels (e.g. %s), %zu graph launches", label, traced, distinct,
         first ? first : "-", graphs);
    ok(traced > 0 && traced == logged && named == traced,
       "%s: every Triton launch in the trace under Inductor's name, as the driver logged it (%zu of %zu)", label, named,
       logged);
}

static void check_process(const struct fw_case *c, const char *label, const char *log, const char *trace_path)
{
    struct dlog lg;
    struct obs_trace *t;
    struct dlog_result k;
    log_read(log, &lg, 0);
    is_int(0, (long long)lg.stub_calls, "%s: no logged stub of the driver is called under the shim", label);
    if (c->generations && !c->no_truth)
        is_int(c->generations, (long long)lg.timing, "%s: the truth has a timing line per generation", label);
    t = shim_trace_open(trace_path);
    ok(t != NULL, "%s: the trace reads", label);
    if (t != NULL) {
        compare(label, &lg, t, &k);
        is_int(0, (long long)t->records_lost, "%s: no record lost", label);
        diag("FIGURES records %s: %zu = log %zu (launches %zu, copies %zu, memsets %zu, syncs %zu, graph launches "
             "%zu; threads %zu), lost %llu",
             label, k.trace_records, lg.n, k.kernels, k.copies, k.memsets, k.syncs, k.graphs, k.threads,
             (unsigned long long)t->records_lost);
        triton_kernels(label, &lg, t);
        if (c->generations && !c->no_truth)
            phase_checks(c, label, log, t);
        obs_trace_free(t);
    }
    dlog_free(&lg);
}

/* ---- suggest-phases round trip ------------------------------------------------------------------ */

static int cmp_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each thread's launches as "phase step gen;" labels, one string per
 * thread, sorted (thread ids differ between runs). */
static char **launch_labels(const struct obs_trace *t)
{
    char **per = calloc(t->nthreads + 1, sizeof *per);
    size_t *len = calloc(t->nthreads + 1, sizeof *len), i;
    if (per == NULL || len == NULL)
        bail("out of memory");
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        char item[64];
        size_t n;
        if (c->kind != OBS_KIND_KERNEL && c->kind != OBS_KIND_GRAPH)
            continue;
        n = c->phase == OBS_NONE ? (size_t)snprintf(item, sizeof item, "-;")
                                 : (size_t)snprintf(item, sizeof item, "%s %d %u;", t->phases[c->phase].phase,
                                                    (int)obs_phase_step(t, c->phase), t->phases[c->phase].generation);
        per[c->thread] = realloc(per[c->thread], len[c->thread] + n + 1);
        if (per[c->thread] == NULL)
            bail("out of memory");
        memcpy(per[c->thread] + len[c->thread], item, n + 1);
        len[c->thread] += n;
    }
    for (i = 0; i < t->nthreads; i++)
        if (per[i] == NULL && (per[i] = strdup("")) == NULL)
            bail("out of memory");
    free(len);
    qsort(per, t->nthreads, sizeof *per, cmp_text);
    return per;
}

/* The rules obs-report suggest-phases writes for the automatic trace,
 * fed back through OBS_PHASES / OBS_STEP, label every launch as the
 * automatic mode did, those it took the labels off after the fact
 * included (docs/phases.md: the output sliced after the last generate(),
 * an iteration without the steps' opener; with OBS_STEP, one that reads
 * a token with no OBS_STEP launch since the last). */
static void round_trip(const struct fw_case *c, const char *prefix)
{
    static char phases[4200], step[1200], iteration[1200];
    const char *rules[3] = {phases, step, iteration};
    char rules_prefix[4400], trace_path[4500], rules_trace[4500], log[4500], *text = NULL, *line, *save = NULL;
    size_t len = 0, i, k, nproc = c->procs ? 2 : 1, total = 0, other = 0, unlabelled = 0, nthreads = 0, compared = 0;
    struct obs_trace *a, *b;
    struct run_result res;
    FILE *f;

    /* the rules from the (first) process's automatic trace */
    if (c->procs)
        snprintf(trace_path, sizeof trace_path, "%s.0.obs", prefix);
    else
        snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
    a = shim_trace_open(trace_path);
    snprintf(phases, sizeof phases, "OBS_PHASES=");
    snprintf(step, sizeof step, "OBS_STEP=");
    snprintf(iteration, sizeof iteration, "OBS_ITERATION=");
    f = open_memstream(&text, &len);
    if (f == NULL)
        bail("open_memstream");
    if (a != NULL)
        obs_report_suggest_phases(a, f);
    fclose(f);
    if (a != NULL)
        obs_trace_free(a);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *q = strchr(line, '\''), *e = q ? strrchr(line, '\'') : NULL;
        if (q == NULL || e == q)
            continue;
        *e = '\0';
        if (strncmp(line, "export OBS_PHASES=", 18) == 0)
            snprintf(phases, sizeof phases, "OBS_PHASES=%s", q + 1);
        else if (strncmp(line, "export OBS_STEP=", 16) == 0)
            snprintf(step, sizeof step, "OBS_STEP=%s", q + 1);
        else if (strncmp(line, "export OBS_ITERATION=", 21) == 0)
            snprintf(iteration, sizeof iteration, "OBS_ITERATION=%s", q + 1);
    }
    free(text);
    if (getenv("OBS_FRAMEWORKS_RULES") != NULL) { /* a development aid: these rules instead, "PHASES|STEP" */
        const char *r = getenv("OBS_FRAMEWORKS_RULES"), *bar = strchr(r, '|');
        snprintf(phases, sizeof phases, "OBS_PHASES=%.*s", bar ? (int)(bar - r) : (int)strlen(r), r);
        snprintf(step, sizeof step, "OBS_STEP=%s", bar ? bar + 1 : "");
    }
    snprintf(rules_prefix, sizeof rules_prefix, "%s-rules", prefix);
    snprintf(log, sizeof log, "%s-rules.log", prefix);
    run_case(c, 1, log, rules_prefix, &res, 0, rules);
    /* each process's automatic trace against its run with the rules */
    for (k = 0; k < nproc && res.exited && res.status == 0; k++) {
        if (c->procs) {
            snprintf(trace_path, sizeof trace_path, "%s.%zu.obs", prefix, k);
            snprintf(rules_trace, sizeof rules_trace, "%s.%zu.obs", rules_prefix, k);
        } else {
            snprintf(trace_path, sizeof trace_path, "%s.obs", prefix);
            snprintf(rules_trace, sizeof rules_trace, "%s.obs", rules_prefix);
        }
        a = shim_trace_open(trace_path);
        b = shim_trace_open(rules_trace);
        if (a != NULL && b != NULL && a->nthreads == b->nthreads) {
            char **la = launch_labels(a), **lb = launch_labels(b);
            compared++;
            nthreads += a->nthreads;
            for (i = 0; i < a->nthreads; i++) {
                const char *x = la[i], *y = lb[i];
                while (*x || *y) {
                    const char *ex = strchr(x, ';'), *ey = strchr(y, ';');
                    size_t nx = ex ? (size_t)(ex - x) : strlen(x), ny = ey ? (size_t)(ey - y) : strlen(y);
                    total++;
                    if (nx != ny || strncmp(x, y, nx) != 0) {
                        if (other + unlabelled < 3)
                            diag("%s: round trip: thread %zu launch %zu: automatic %.*s, rules %.*s", c->label, i,
                                 total - 1, (int)nx, x, (int)ny, y);
                        if (nx == 1 && x[0] == '-')
                            unlabelled++;
                        else
                            other++;
                    }
                    x += nx + (ex != NULL);
                    y += ny + (ey != NULL);
                }
                free(la[i]);
                free(lb[i]);
            }
            free(la);
            free(lb);
        }
        if (a != NULL)
            obs_trace_free(a);
        if (b != NULL)
            obs_trace_free(b);
        remove(rules_trace);
        if (c->procs) {
            char child_log[4520];
            snprintf(child_log, sizeof child_log, "%s.%zu", log, k);
            remove(child_log);
        }
    }
    diag("FIGURES round trip %s: %s %s%s%s: %zu launches, %zu labelled otherwise (%zu of them no phase in the "
         "automatic trace)",
         c->label, phases, step, iteration[14] ? " " : "", iteration[14] ? iteration : "", total, other + unlabelled,
         unlabelled);
    check_todo(compared == nproc && total > 0 && other == 0 && unlabelled == 0, c->todo.round_trip, c->label,
               "suggest-phases' rules fed back label every launch as the automatic mode did (%zu launches, %zu "
               "processes, %zu threads; %zu otherwise)",
               total, compared, nthreads, other + unlabelled);
    run_result_free(&res);
    remove(log);
}

/* The llama case's tokens without the shim ("GEN IDS"): each child of the
 * procs case runs that case and must give them. */
static char *llama_tokens;

static void check_case(const struct fw_case *c)
{
    char log_plain[4300], log_shim[4300], prefix[4300], trace[4400];
    struct run_result shim;
    struct plain_job job;
    double t0 = now_s();
    char *out_plain = NULL;

    snprintf(log_plain, sizeof log_plain, "%s/%s-plain.log", test_tmpdir(), c->label);
    snprintf(log_shim, sizeof log_shim, "%s/%s-shim.log", test_tmpdir(), c->label);
    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), c->label);
    if (c->compare_plain)
        plain_start(c, log_plain, &job);
    run_case(c, 1, log_shim, prefix, &shim, 0, NULL);
    if (c->compare_plain) {
        struct dlog lg;
        ok(plain_wait(c->label, &job, &out_plain), "%s: runs on the simulated driver alone", c->label);
        log_read(log_plain, &lg, 1);
        dlog_free(&lg);
    }
    ok(shim.exited && shim.status == 0, "%s: runs under the shim (obs-run --sim)", c->label);
    if (c->generations == 0) {
        const char *summary = shim.out ? strstr(shim.out, "basics:") : NULL;
        const char *end = summary ? strchr(summary, '\n') : NULL;
        ok(summary != NULL && strstr(summary, " 0 failed") != NULL, "%s: every step runs (%.*s)", c->label,
           summary ? (int)(end ? end - summary : (long)strlen(summary)) : 10, summary ? summary : "no summary");
        if (summary == NULL || strstr(summary, " 0 failed") == NULL)
            diag_text("stdout", shim.out ? shim.out : "");
    }
    if (c->compare_plain && c->generations) {
        char *tok_plain = token_lines(out_plain, NULL), *tok_shim = token_lines(shim.out, NULL);
        ok(count_lines_with(tok_plain, "tokens ") == (size_t)c->generations && strcmp(tok_plain, tok_shim) == 0,
           "%s: the same token ids with and without the shim (%zu generations)", c->label,
           count_lines_with(tok_plain, "tokens "));
        if (strcmp(tok_plain, tok_shim) != 0) {
            diag_text("without the shim", tok_plain);
            diag_text("with the shim", tok_shim);
        }
        if (strcmp(c->label, "llama") == 0)
            llama_tokens = token_lines(out_plain, "main");
        free(tok_plain);
        free(tok_shim);
    }
    free(out_plain);
    if (c->procs) {
        size_t i;
        for (i = 0; i < 2; i++) {
            char log[4400], label[64], child[8];
            char *tok;
            snprintf(child, sizeof child, "p%zu", i);
            tok = token_lines(shim.out, child);
            snprintf(label, sizeof label, "%s[%zu]", c->label, i);
            ok(llama_tokens != NULL && count_lines_with(tok, "[") == (size_t)c->generations &&
                   strcmp(tok, llama_tokens) == 0,
               "%s: the same token ids as the llama case without the shim (%zu generations)", label,
               count_lines_with(tok, "["));
            free(tok);
            snprintf(log, sizeof log, "%s.%zu", log_shim, i);
            snprintf(trace, sizeof trace, "%s.%zu.obs", prefix, i);
            check_process(c, label, log, trace);
        }
    } else {
        snprintf(trace, sizeof trace, "%s.obs", prefix);
        check_process(c, c->label, log_shim, trace);
    }
    if (c->generations && !c->no_truth && c->rules_step == NULL)
        round_trip(c, prefix);
    run_result_free(&shim);
    diag("FIGURES time %s: %.1f s (%s)", c->label, now_s() - t0,
         c->compare_plain ? "with and without the shim at once" : "under the shim");
}

int main(void)
{
    static const struct fw_case cases[] = {
        {"basics", "torch_basics.py", NULL, NULL, 1, 0, 0, 0, NO_TODO, NULL},
        {"basics-expandable", "torch_basics.py", NULL, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", 1, 0, 0, 0, NO_TODO, NULL},
        {"llama", "fw_generate.py", "llama", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"llama-deep", "fw_generate.py", "llama-deep", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"gpt2", "fw_generate.py", "gpt2", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"llama-chunked", "fw_generate.py", "llama-chunked", NULL, 1, 0, 4, 0, NO_TODO, NULL},
        {"llama-graph", "fw_generate.py", "llama-graph", NULL, 1, 0, 4, 0, NO_TODO, NULL},
        /* the same with cuDNN's SDPA: its attention graphs captured into the decode step's CUDA graph */
        {"llama-graph-cudnn", "fw_generate.py", "llama-graph-cudnn", NULL, 1, 0, 4, 0, NO_TODO, NULL},
        {"threads", "fw_generate.py", "threads", NULL, 1, 0, 14, 0, NO_TODO, NULL},
        {"procs", "fw_generate.py", "procs", NULL, 0, 1, 7, 0, NO_TODO, NULL},
        {"qwen2-moe", "fw_generate.py", "qwen2-moe", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"moe-alt", "fw_generate.py", "moe-alt", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"moe-first", "fw_generate.py", "moe-first", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"gemma2", "fw_generate.py", "gemma2", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        /* transformers' eager experts loop: count reads inside every MoE layer (docs/phases.md, "Reads inside a
         * forward") */
        {"moe-eager", "fw_generate.py", "moe-eager", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        /* the same loop in every other layer, dense layers between (docs/layers.md: two kinds in one block) */
        {"moe-alt-eager", "fw_generate.py", "moe-alt-eager", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        /* issue 34's corpus: loops of other shapes than generate() with a streamer (docs/frameworks.md); their
         * TODOs: today's engine (docs/phases.md, "Limits") */
        {"hf-plain", "fw_generate.py", "hf-plain", NULL, 1, 0, 6, 0, NO_TODO, NULL},
        {"hf-batch", "fw_generate.py", "hf-batch", NULL, 1, 0, 3, 0, NO_TODO, NULL},
        {"hf-sampled", "fw_generate.py", "hf-sampled", NULL, 1, 0, 7, 0, NO_TODO, NULL},
        {"loop-item", "fw_loops.py", "loop-item", NULL, 1, 0, 6, 0, NO_TODO, NULL},
        {"loop-device", "fw_loops.py", "loop-device", NULL, 1, 0, 6, 0, NO_TODO, NULL},
        {"loop-graph", "fw_loops.py", "loop-graph", NULL, 1, 0, 6, 0,
         {.layers_live = WARMUP_LIVE_LAYERS}, NULL},
        {"serving", "fw_serving.py", "serving", NULL, 1, 0, 1, 0,
         {.serving_kinds = ONE_TOKEN_PROMPT_KIND}, NULL},
        /* torch.compile: Inductor's Triton kernels from cubins (cuModuleLoad), its CUDA graph trees */
        {"compiled-mlp", "fw_compiled.py", "compiled-mlp", NULL, 1, 0, 4, 1, NO_TODO, NULL},
        {"compiled-decode", "fw_compiled.py", "compiled-decode", NULL, 1, 0, 3, 0, NO_TODO, NULL},
        {"compiled-decode-ro", "fw_compiled.py", "compiled-decode-ro", NULL, 1, 0, 3, 0,
         {.phases_trace = GRAPH_TREES_FILL, .phases_live = GRAPH_TREES_FILL}, NULL},
        /* the rules that state it (docs/phases.md, "Limits"): a prompt begins after a copy in of its ids (16
         * bytes or more; a step's token and position are 8), and a step at the first launch after its token
         * read of the graph tree's input refill (multi_tensor_apply_kernel) or of the first compiled call's
         * eager run (vectorized_elementwise_kernel): every launch where the program counts it */
        /* (not "...-rules": the round trip's run of compiled-decode-ro writes that prefix) */
        {"compiled-decode-ro-given-rules", "fw_compiled.py", "compiled-decode-ro",
         "OBS_PHASES=PREFILL=iter:after:memcpy:HtoD[bytes>=16],iter:until:token;DECODE=*", 1, 0, 3, 0,
         {.ttft = RULES_PROMPT_AT_LAUNCH},
         "OBS_STEP=vectorized_elementwise_kernel,multi_tensor_apply_kernel"},
    };
    struct fw_env fw;
    double start = now_s();
    const char *only = getenv("OBS_FRAMEWORKS_CASE"); /* run only the cases whose label contains this */
    size_t i;

    fw_env_require(&fw);
    snprintf(python, sizeof python, "%s", fw.python);
    snprintf(env_dir, sizeof env_dir, "%s", fw.dir);
    snprintf(obs_run, sizeof obs_run, "%s", fw.obs_run);
    snprintf(driver_dir, sizeof driver_dir, "%s", fw.driver_dir);
    snprintf(frameworks_dir, sizeof frameworks_dir, "%s", fw.scripts);
    snprintf(inject_lib, sizeof inject_lib, "%s", shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    plan_lazy();
    diag("%s: %s", env_dir, fw.versions);

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (only == NULL || strstr(cases[i].label, only) != NULL)
            check_case(&cases[i]);

    set_print("entry points PyTorch called (without the shim)", &called);
    set_print("lookups refused", &refused);
    set_print("private tables asked", &tables);
    set_print("table slots called", &slots);
    set_print("runtime versions of the integrity checks", &integrity);
    set_print("NVML calls", &nvml);
    if (stubs.n)
        set_print("STUBS CALLED", &stubs);
    figures_table();
    diag("FIGURES time all: %.1f s", now_s() - start);
    return 0;
}
