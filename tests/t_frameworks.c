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
 * global attention layers. Each case runs twice, at once: on the simulated
 * driver alone (LD_LIBRARY_PATH=sim/driver) and under the shim with
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
 *     marks name in the same trace (the streamer's own TTFT printed beside);
 *     obs-report suggest-phases' rules fed back reproduce the automatic
 *     labels (docs/phases.md, docs/phases-report.md);
 *   - layers: every launch's layer in the trace and live against the
 *     decoder layers' hooks, graph nodes' layers, and every launch outside
 *     layers in the trace's EMBED or HEAD as the truth's marks say
 *     (docs/layers.md, "Tests").
 * OBS_FRAMEWORKS_CASE=TEXT runs only the cases whose label contains TEXT
 * (procs compares its tokens with llama's: run both).
 * Printed: FIGURES lines of all of that, per case,
 * the records per case, and what PyTorch asked of the driver: entry points
 * called, private tables, the runtime versions of the integrity checks, NVML. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fw_common.h"
#include "phase_compare.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"
#include "trace/trace.h"

#define RUN_TIMEOUT_S 900

static char frameworks_dir[4300];

/* What PyTorch asked of the driver, over every run without the shim. */
static struct name_set called, stubs, tables, slots, integrity, nvml, refused;

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

/* Why the case's phase checks (phases, layers, TTFT, the suggest-phases
 * round trip) are known to fail for now, or NULL: TAP TODOs, reported and
 * not counted (the case's records, outputs and exit are checked plainly). */
static const char *phase_todo;

/* The shim's phases against the truth the scripts wrote: printed only. */
/* ---- phases: the engine against the frameworks' truth (issue 22) -------------------------------- */

/* Each launch's generation, phase and step in the trace equal the truth's
 * (fw_truth.py: the model's forward hooks); live, every launch the trace
 * did not relabel after the fact. Captured launches (inside the truth's
 * GRAPH_CAPTURE) are not executions: left out and counted. */
static void phase_attribution(const char *label, struct pc_run *run)
{
    size_t i, launches = 0, trace_ok = 0, live_ok = 0, captured = 0, kept = 0, kept_live_ok = 0, shown = 0;
    char a[64], b[64], d[64];
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        int tr, lv, relabelled;
        if (l->captured) {
            captured++;
            continue;
        }
        launches++;
        tr = pc_same(&l->truth, &l->trace, 1);
        lv = pc_same(&l->truth, &l->live, 1);
        trace_ok += tr;
        live_ok += lv;
        /* relabelled after the fact: a RELABEL record, or the trace took the label off (a RELABEL of no
         * phase: the launch is in no range in the trace, in one live) */
        relabelled = l->relabelled || (l->trace.phase[0] == '\0' && l->live.phase[0] != '\0');
        if (!relabelled) {
            kept++;
            kept_live_ok += lv;
        }
        if ((!tr || (!lv && !relabelled)) && shown++ < 3)
            diag("%s: launch %zu %.60s: truth %s live %s trace %s%s", label, i, run->names[l->name],
                 pc_label_text(&l->truth, a, sizeof a), pc_label_text(&l->live, b, sizeof b),
                 pc_label_text(&l->trace, d, sizeof d), relabelled ? " (relabelled)" : "");
    }
    diag("FIGURES phases %s launches=%zu trace_ok=%zu (%.2f%%) live_ok=%zu (%.2f%%) relabelled=%zu captured=%zu "
         "generations=%zu",
         label, launches, trace_ok, launches ? 100.0 * (double)trace_ok / (double)launches : 0.0, live_ok,
         launches ? 100.0 * (double)live_ok / (double)launches : 0.0, launches - kept, captured, run->ntiming);
    ok_todo(launches > 0 && trace_ok == launches, phase_todo,
       "%s: trace: every launch has the truth's generation, phase and step (%zu of %zu)", label, trace_ok, launches);
    ok_todo(kept > 0 && kept_live_ok == kept, phase_todo,
       "%s: live: every launch the trace did not relabel has the truth's generation, phase and step (%zu of %zu; "
       "%zu relabelled after the fact)",
       label, kept_live_ok, kept, launches - kept);
}

/* LAYER/k (docs/layers.md) against the truth of the decoder layers' forward
 * hooks: every launch's layer (or none) in the trace; live, no launch in a
 * LAYER range other than its own (live layers come from the template the
 * previous prompt or step left: the first of each kind has none). */
static void layer_attribution(const char *label, struct pc_run *run)
{
    size_t i, launches = 0, in_layers = 0, trace_ok = 0, live_ok = 0, live_in = 0, live_none = 0, live_wrong = 0;
    size_t shown = 0;
    for (i = 0; i < run->n; i++) {
        const struct pc_launch *l = &run->l[i];
        if (l->captured)
            continue;
        launches++;
        in_layers += l->truth_layer >= 0;
        trace_ok += l->trace_layer == l->truth_layer;
        live_ok += l->live_layer == l->truth_layer;
        live_in += l->truth_layer >= 0 && l->live_layer == l->truth_layer;
        live_none += l->live_layer < 0 && l->truth_layer >= 0;
        live_wrong += l->live_layer >= 0 && l->live_layer != l->truth_layer;
        if ((l->trace_layer != l->truth_layer || (l->live_layer >= 0 && l->live_layer != l->truth_layer)) &&
            shown++ < 3)
            diag("%s: launch %zu %.60s: truth layer %d, live %d, trace %d", label, i, run->names[l->name],
                 l->truth_layer, l->live_layer, l->trace_layer);
    }
    if (in_layers == 0) { /* compiled-decode: one compiled graph for the forward, no hook inside it */
        skip_block(2, "%s: no decoder layer's hooks in the truth (the layers run inside a compiled graph)", label);
        return;
    }
    diag("FIGURES layers %s launches=%zu in_layers=%zu trace_ok=%zu (%.2f%%) live_ok=%zu (%.2f%%) live_none=%zu "
         "live_wrong=%zu",
         label, launches, in_layers, trace_ok, launches ? 100.0 * (double)trace_ok / (double)launches : 0.0, live_ok,
         launches ? 100.0 * (double)live_ok / (double)launches : 0.0, live_none, live_wrong);
    ok_todo(launches > 0 && trace_ok == launches, phase_todo,
       "%s: trace: every launch has the layer its decoder layer's hooks say, or none (%zu of %zu)", label, trace_ok,
       launches);
    ok_todo(live_wrong == 0, phase_todo, "%s: live: no launch inside a LAYER range other than its own (%zu of %zu in the right one)",
       label, live_in, in_layers);
}

/* EMBED and HEAD (docs/layers.md, "Reports") against fw_truth.py's marks:
 * EMBED from a prompt's start and from each forward's pre-hook on the
 * model to its first layer, HEAD from its last decoder layer's end to the
 * next forward (the final norm, the LM head and generate()'s sampling,
 * token read, stop check and cache updates between forwards: those of the
 * forward before). Every launch outside layers in a prompt or step with
 * layers must be in the trace's EMBED or HEAD as the hooks say (scored by
 * pc_embed_head: launches the trace labels with another step are left to
 * the phase checks, a step holding a graph's capture is not scored). */
static void embed_head_attribution(const char *label, const struct pc_run *run)
{
    struct pc_part_score s;
    size_t outside;
    pc_embed_head(run, &s, label, 50);
    outside = s.embed + s.head;
    diag("FIGURES embed/head %s: outside_layers=%zu (embed=%zu head=%zu) right=%zu (%.2f%%); scored=%zu "
         "in_layers=%zu right_all=%zu other_label=%zu by_capture=%zu",
         label, outside, s.embed, s.head, s.outside_right,
         outside ? 100.0 * (double)s.outside_right / (double)outside : 0.0, s.scored, s.in_layers, s.right,
         s.other_label, s.by_capture);
    ok_todo(s.in_layers > 0 && s.embed > 0 && s.head > 0 && s.right == s.scored, phase_todo,
       "%s: trace: every launch of a prompt or step outside its layers is in EMBED or HEAD as the model's hooks "
       "say, none in a layer is (%zu of %zu outside layers; %zu of %zu launches)",
       label, s.outside_right, outside, s.right, s.scored);
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

/* TTFT and tokens/s of the trace's phase tables (obs-report phases, the
 * summary, HTML and SQLite all compute them so) against the spans of the
 * calls the truth's marks name, in the same trace (fw_truth.py: P before
 * the prompt's ids are copied, F before generate(), R after the first
 * token's read, L after the last's; docs/phases-report.md, first token
 * "prefill"): TTFT from the prompt's first call (its ids' copy; in a
 * thread's first generation, whose inputs the engine cannot tell from the
 * model's set-up copies, generate()'s first launch) to the end of the first
 * token read; tokens/s = steps / (end of the last read - end of the
 * first). Structural: no clock read elsewhere is compared; the streamer's
 * own TTFT (R - F, Python's clock) is printed beside. */
static void phase_timing(const char *label, const struct pc_run *run, const struct obs_trace *t)
{
    struct obs_phase_stats s;
    size_t i, k, equal = 0, defined = 0;
    double worst = 0.0;
    if (obs_phase_stats_compute(t, &s) != 0)
        bail("out of memory");
    for (i = 0; i < run->ntiming; i++) {
        const struct pc_timing *g = &run->timing[i];
        const struct obs_call **c;
        const struct obs_call *first = NULL, *read = NULL, *last = NULL;
        const struct obs_generation_row *row = NULL;
        size_t n = thread_calls(t, g->tid, &c);
        double want_ttft = NAN, want_tps = NAN, streamer = g->ttft_ns >= 0 ? (double)g->ttft_ns / 1e6 : NAN;
        for (k = 0; k < n; k++) {
            int launch = c[k]->kind == OBS_KIND_KERNEL || c[k]->kind == OBS_KIND_GRAPH;
            if (first == NULL && c[k]->host_begin >= (g->gen == 0 ? g->mark_prefill : g->mark_prompt) &&
                (g->gen != 0 || launch))
                first = c[k];
            if (c[k]->host_begin <= g->mark_prefill_read)
                read = c[k];
            if (g->mark_last_read && c[k]->host_begin <= g->mark_last_read)
                last = c[k];
        }
        if (first != NULL && read != NULL && read->host_end > first->host_begin)
            want_ttft = (double)(read->host_end - first->host_begin) / 1e6;
        if (g->steps >= 1 && read != NULL && last != NULL && last->host_end > read->host_end)
            want_tps = (double)g->steps * 1e9 / (double)(last->host_end - read->host_end);
        for (k = 0; k < s.ngens; k++)
            if ((long)s.gens[k].thread == g->tid && (long)s.gens[k].generation == g->gen)
                row = &s.gens[k];
        if (row != NULL && !isnan(want_ttft) && row->ttft_defined && strcmp(row->first_token, "prefill") == 0 &&
            fabs(row->ttft_ms - want_ttft) <= 1e-9 * want_ttft && (long)row->decode_steps == g->steps &&
            (isnan(want_tps) ? !row->tokens_defined
                             : row->tokens_defined && fabs(row->tokens_per_s - want_tps) <= 1e-9 * want_tps))
            equal++;
        else
            diag("%s: thread %ld generation %ld: from the named calls TTFT %.6f ms, %.3f tokens/s, %ld steps; the "
                 "phase tables %.6f ms (%s), %.3f tokens/s, %ld steps",
                 label, g->tid, g->gen, want_ttft, want_tps, g->steps, row ? row->ttft_ms : NAN,
                 row ? row->first_token : "no row", row ? row->tokens_per_s : NAN,
                 row ? (long)row->decode_steps : -1L);
        if (row != NULL && row->ttft_defined && !isnan(streamer) && streamer > 0) {
            /* the streamer's clock from generate()'s call (F) and from the prompt's ids copy (P): the
             * trace's TTFT starts at the latter, but in a thread's first generation at the former */
            double from_p = g->mark_prompt && g->mark_prefill_read > g->mark_prompt
                                ? (double)(g->mark_prefill_read - g->mark_prompt) / 1e6
                                : streamer;
            double dev_f = 100.0 * (row->ttft_ms - streamer) / streamer;
            double dev_p = 100.0 * (row->ttft_ms - from_p) / from_p;
            /* the trace's TTFT lies between the two: its first call is at or after P (and in a thread's first
             * generation at or after F), its read ends before R; the nearer one says how far */
            double near = g->gen == 0 || fabs(dev_f) < fabs(dev_p) ? dev_f : dev_p;
            defined++;
            diag("FIGURES ttft %s thread %ld generation %ld: %.3f ms (first token %s); the streamer's clock: %.3f ms "
                 "from generate() (%+.2f%%), %.3f ms from the ids' copy (%+.2f%%)",
                 label, g->tid, g->gen, row->ttft_ms, row->first_token, streamer, dev_f, from_p, dev_p);
            if (fabs(near) > worst)
                worst = fabs(near);
        }
        free(c);
    }
    diag("FIGURES ttft %s: %zu generations beside the streamer's clock; the largest difference against the nearer "
         "of its two figures (from generate() in a thread's first generation) %.2f%% (printed, not checked: two "
         "clocks)",
         label, defined, worst);
    ok_todo(run->ntiming > 0 && equal == run->ntiming, phase_todo,
       "%s: each generation's TTFT (first token from the prefill), tokens/s and steps = the spans of the calls the "
       "truth names (%zu of %zu)",
       label, equal, run->ntiming);
    obs_phase_stats_free(&s);
}

/* A decode step captured into a CUDA graph (llama-graph): its exec's kernel
 * nodes get their layers in the trace from the node walk (docs/layers.md,
 * "Graphs"); fw_truth.py's layer marks fire during the capture, so the
 * captured launches between them, in capture order, are the nodes' truth. */
static void graph_node_layers(const char *label, const struct pc_run *run, const struct obs_trace *t)
{
    struct pc_graph_score s;
    pc_graph_node_layers(t, run, &s);
    diag("FIGURES graph layers %s: captured=%zu kernel_nodes=%zu in_layers=%zu right=%zu (%.2f%%) names_differ=%zu",
         label, s.captured, s.nodes, s.in_layers, s.right, s.captured ? 100.0 * (double)s.right / (double)s.captured : 0.0,
         s.names_differ);
    ok(s.execs == 1 && s.nodes == s.captured && s.names_differ == 0,
       "%s: the graph exec's %zu kernel nodes are the launches captured into it, in capture order", label, s.nodes);
    ok(s.captured > 0 && s.in_layers > 0 && s.right == s.captured,
       "%s: every kernel node of the graph has the layer its decoder layer's hooks said during the capture, or none "
       "(%zu of %zu; %zu in layers)",
       label, s.right, s.captured, s.in_layers);
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

static void phase_checks(const char *label, const char *log_path, const struct obs_trace *t)
{
    struct pc_run run;
    size_t mismatch = 0;
    pc_read_log(log_path, &run);
    pc_trace_labels(t, &run, &mismatch);
    phase_attribution(label, &run);
    layer_attribution(label, &run);
    for (size_t i = 0; i < run.n; i++)
        if (run.l[i].truth_layer >= 0 && !run.l[i].captured) {
            embed_head_attribution(label, &run);
            break;
        }
    for (size_t i = 0; i < run.n; i++)
        if (run.l[i].captured) {
            graph_node_layers(label, &run, t);
            captured_cudnn(label, &run);
            break;
        }
    phase_timing(label, &run, t);
    pc_run_free(&run);
}

/* ---- runs --------------------------------------------------------------------------------------- */

struct fw_case {
    const char *label;
    const char *script;      /* in tests/frameworks */
    const char *arg;         /* the case, or NULL */
    const char *extra_env;   /* or NULL */
    int compare_plain;       /* also run without the shim, compare the tokens */
    int procs;               /* 2: two child processes, logs and traces .0 and .1 */
    long generations;        /* per process; 0: the basics */
    int no_truth;            /* its "tokens" lines are outputs: compared, no phase truth (compiled-mlp) */
    const char *phases_todo; /* why its phase checks are TAP TODOs for now, or NULL */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_case(const struct fw_case *c, int shim, const char *log, const char *prefix, struct run_result *res,
                     int quiet, const char *const *rules)
{
    char script[4400], log_env[4400], inductor_env[4500], triton_env[4500];
    const char *argv[12], *env[16];
    struct fw_launch launch;
    size_t a = 0, e = 0;
    snprintf(script, sizeof script, "%s/%s", frameworks_dir, c->script);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log);
    fw_launch_start(&launch, shim, prefix, argv, &a, env, &e);
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
    if (rules != NULL) {
        env[e++] = rules[0];
        env[e++] = rules[1];
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

/* The run without the shim, in the background (fw_common.h). */
struct plain_arg {
    const struct fw_case *c;
    const char *log;
};

static void plain_run(void *arg, struct run_result *res)
{
    const struct plain_arg *p = arg;
    run_case(p->c, 0, p->log, NULL, res, 1, NULL);
}

static void plain_start(const struct fw_case *c, const char *log, struct fw_job *job)
{
    struct plain_arg arg = {c, log};
    fw_job_start(job, log, plain_run, &arg);
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
static void triton_kernels(const char *label, const struct log *lg, const struct obs_trace *t)
{
    size_t i, logged = 0, traced = 0, named = 0, graphs = 0, distinct = 0;
    const char *first = NULL;
    for (i = 0; i < lg->n; i++)
        logged += kind_of(lg->r[i].kind) == OBS_KIND_KERNEL && is_inductor_name(lg->r[i].name);
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
    struct log lg;
    struct obs_trace *t;
    struct counts k;
    log_read(log, &lg, NULL, &stubs);
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
             label, k.records, lg.n, k.kernels, k.copies, k.memsets, k.syncs, k.graphs, k.threads,
             (unsigned long long)t->records_lost);
        triton_kernels(label, &lg, t);
        if (c->generations && !c->no_truth)
            phase_checks(label, log, t);
        obs_trace_free(t);
    }
    log_free(&lg);
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
    static char phases[4200], step[1200];
    const char *rules[2] = {phases, step};
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
    }
    free(text);
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
    diag("FIGURES round trip %s: %s %s: %zu launches, %zu labelled otherwise (%zu of them no phase in the automatic "
         "trace)",
         c->label, phases, step, total, other + unlabelled, unlabelled);
    ok_todo(compared == nproc && total > 0 && other == 0 && unlabelled == 0, phase_todo,
       "%s: suggest-phases' rules fed back label every launch as the automatic mode did (%zu launches, %zu "
       "processes, %zu threads; %zu otherwise)",
       c->label, total, compared, nthreads, other + unlabelled);
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
    struct fw_job job;
    double t0 = now_s();
    char *out_plain = NULL;

    phase_todo = c->phases_todo;
    snprintf(log_plain, sizeof log_plain, "%s/%s-plain.log", test_tmpdir(), c->label);
    snprintf(log_shim, sizeof log_shim, "%s/%s-shim.log", test_tmpdir(), c->label);
    snprintf(prefix, sizeof prefix, "%s/%s", test_tmpdir(), c->label);
    if (c->compare_plain)
        plain_start(c, log_plain, &job);
    run_case(c, 1, log_shim, prefix, &shim, 0, NULL);
    if (c->compare_plain) {
        struct log lg;
        ok(fw_job_wait(c->label, &job, &out_plain), "%s: runs on the simulated driver alone", c->label);
        log_read(log_plain, &lg, contract_line, &stubs);
        log_free(&lg);
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
    if (c->generations && !c->no_truth)
        round_trip(c, prefix);
    run_result_free(&shim);
    diag("FIGURES time %s: %.1f s (%s)", c->label, now_s() - t0,
         c->compare_plain ? "with and without the shim at once" : "under the shim");
}

/* Issue 34: the phase engine finds steps by token reads after eager
 * kernels it learnt; a compiled step runs other kernels (8 to 13 % of the
 * launches in the right step, 2026-12-01). */
#define COMPILED_TODO "the phase engine does not yet find compiled decode steps (issue 34)"

int main(void)
{
    static const struct fw_case cases[] = {
        {"basics", "torch_basics.py", NULL, NULL, 1, 0, 0, 0, NULL},
        {"basics-expandable", "torch_basics.py", NULL, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", 1, 0, 0, 0, NULL},
        {"llama", "fw_generate.py", "llama", NULL, 1, 0, 7, 0, NULL},
        {"llama-deep", "fw_generate.py", "llama-deep", NULL, 1, 0, 7, 0, NULL},
        {"gpt2", "fw_generate.py", "gpt2", NULL, 1, 0, 7, 0, NULL},
        {"llama-chunked", "fw_generate.py", "llama-chunked", NULL, 1, 0, 4, 0, NULL},
        {"llama-graph", "fw_generate.py", "llama-graph", NULL, 1, 0, 4, 0, NULL},
        /* the same with cuDNN's SDPA: its attention graphs captured into the decode step's CUDA graph */
        {"llama-graph-cudnn", "fw_generate.py", "llama-graph-cudnn", NULL, 1, 0, 4, 0, NULL},
        {"threads", "fw_generate.py", "threads", NULL, 1, 0, 14, 0, NULL},
        {"procs", "fw_generate.py", "procs", NULL, 0, 1, 7, 0, NULL},
        {"qwen2-moe", "fw_generate.py", "qwen2-moe", NULL, 1, 0, 7, 0, NULL},
        {"moe-alt", "fw_generate.py", "moe-alt", NULL, 1, 0, 7, 0, NULL},
        {"moe-first", "fw_generate.py", "moe-first", NULL, 1, 0, 7, 0, NULL},
        {"gemma2", "fw_generate.py", "gemma2", NULL, 1, 0, 7, 0, NULL},
        /* transformers' eager experts loop: count reads inside every MoE layer (docs/phases.md, "Reads inside a
         * forward") */
        {"moe-eager", "fw_generate.py", "moe-eager", NULL, 1, 0, 7, 0, NULL},
        /* the same loop in every other layer, dense layers between (docs/layers.md: two kinds in one block) */
        {"moe-alt-eager", "fw_generate.py", "moe-alt-eager", NULL, 1, 0, 7, 0, NULL},
        /* torch.compile: Inductor's Triton kernels from cubins (cuModuleLoad), its CUDA graph trees */
        {"compiled-mlp", "fw_compiled.py", "compiled-mlp", NULL, 1, 0, 4, 1, NULL},
        {"compiled-decode", "fw_compiled.py", "compiled-decode", NULL, 1, 0, 3, 0, COMPILED_TODO},
        {"compiled-decode-ro", "fw_compiled.py", "compiled-decode-ro", NULL, 1, 0, 3, 0, COMPILED_TODO},
    };
    double start = now_s();
    char *versions;
    const char *only = getenv("OBS_FRAMEWORKS_CASE"); /* run only the cases whose label contains this */
    size_t i;

    versions = fw_require("transformers");
    fw_paths();
    snprintf(frameworks_dir, sizeof frameworks_dir, "%s", test_path(test_srcdir(), "tests/frameworks"));
    fw_plan(versions);

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
    diag("FIGURES time all: %.1f s", now_s() - start);
    return 0;
}
