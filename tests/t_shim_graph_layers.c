/* Layers of a graph-replayed decode step (docs/layers.md, "Graphs"), under
 * the shim on the simulated CUDA runtime: tests/apps/llm_loop
 * --graph-decode --layer-norm captures one decode step of 4 layers (an
 * embedding, 4 x [rms_norm, kv_cache_gather, attention, mlp], lm_head,
 * sampling) into a graph at start-up, instantiates it and replays it at
 * every step; while capturing it marks each layer in the log (LAYER/k,
 * LAYER_END), so the captured launches, in capture order, carry the truth
 * the exec's kernel nodes are checked against:
 *   - every kernel node's layer in the trace (GRAPH_NODES) is the truth's,
 *     or none outside layers;
 *   - live ranges stay at step level: no graph launch is inside a live
 *     LAYER range (the NVTX injection's log);
 *   - the reports: the summary's Graph launches table gives the exec's
 *     layers, `obs-report phases` counts the kernel nodes each layer
 *     replayed (4 a layer per graph launch in DECODE), the JSON graph
 *     slices carry node_layers, the SQLite export's OBS_GRAPH_NODES has
 *     each node with its layer (skipped without SQLite or the sqlite3 CLI);
 *   - OBS_LAYER=off: no node has a layer;
 *   - past the cap: a step of 8 200 layers (32 803 kernel nodes, more than
 *     the 32 768 kept in order) gets the GRAPH flag NODES_CUT, no node
 *     order and no layers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "phase_compare.h"
#include "shim_test.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"

struct run_paths {
    char log[4200], prefix[4096], obs[4200];
};

static void run_llm_loop(const char *tag, const char *extra, const char *layers, struct run_paths *p,
                         struct run_result *res)
{
    const char *argv[] = {shim_build_path("tests/apps/llm_loop"), "--steps", "6", "--prompts", "2", "--layers", layers,
                          "--layer-norm", "--graph-decode", NULL};
    char log_env[4300], out_env[4300], lib_env[4300], inject[4300];
    const char *env[] = {log_env, out_env, lib_env, inject, "OBS_SUMMARY=0", "OBS_TRACE=json", extra, NULL};
    snprintf(p->log, sizeof p->log, "%s/%s.log", test_tmpdir(), tag);
    snprintf(p->prefix, sizeof p->prefix, "%s/%s", test_tmpdir(), tag);
    snprintf(p->obs, sizeof p->obs, "%s.obs", p->prefix);
    remove(p->log);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", p->log);
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s", p->prefix);
    snprintf(lib_env, sizeof lib_env, "LD_LIBRARY_PATH=%s", shim_build_path("sim/.libs"));
    snprintf(inject, sizeof inject, "NVTX_INJECTION64_PATH=%s",
             shim_build_path("tests/nvtx_inject/.libs/libobsnvtxinject.so"));
    shim_run(argv, env, 1, 120, res);
}

/* Run it (one check: exit status 0) and open its trace. */
static struct obs_trace *run_traced(const char *tag, const char *extra, const char *layers, const char *what,
                                    struct run_paths *p)
{
    struct run_result res;
    struct obs_trace *t;
    run_llm_loop(tag, extra, layers, p, &res);
    ok(run_exited_with(&res, 0), "%s: exit status 0", what);
    run_result_free(&res);
    t = shim_trace_open(p->obs);
    if (t == NULL)
        bail("%s: no trace", what);
    return t;
}

static char *report(const char *cmd, const char *obs)
{
    const char *argv[] = {shim_build_path("obs-report"), cmd, obs, NULL};
    struct run_result r;
    char *out;
    shim_run(argv, NULL, 0, 60, &r);
    out = run_exited_with(&r, 0) && r.out != NULL ? strdup(r.out) : NULL;
    run_result_free(&r);
    return out;
}

/* OBS_GRAPH_NODES of `obs-report sqlite`: the exec's nodes by position,
 * their layers in order ("" for none). */
static void check_sqlite(const char *obs)
{
    char sqlite3_bin[4096], db[4300];
    const char *argv[] = {shim_build_path("obs-report"), "sqlite", obs, db, NULL};
    const char *q[] = {sqlite3_bin, "-init", "/dev/null", "-batch", "-noheader", db,
                       "SELECT COUNT(*) || ' ' || group_concat(IFNULL(layer, '-'), '') FROM "
                       "(SELECT layer FROM OBS_GRAPH_NODES WHERE graphId = 1 ORDER BY position)",
                       NULL};
    struct run_result r;
#ifndef HAVE_SQLITE
    skip("obs-report built without SQLite");
    return;
#endif
    if (test_on_path("sqlite3", sqlite3_bin, sizeof sqlite3_bin) == NULL) {
        skip("no sqlite3 CLI on PATH");
        return;
    }
    snprintf(db, sizeof db, "%s.sqlite", obs);
    shim_run(argv, NULL, 0, 60, &r);
    if (!run_exited_with(&r, 0))
        diag_text("obs-report sqlite", r.err);
    run_result_free(&r);
    shim_run(q, NULL, 0, 60, &r);
    if (r.out != NULL && r.out_len > 0 && r.out[r.out_len - 1] == '\n')
        r.out[--r.out_len] = '\0';
    ok(run_exited_with(&r, 0) && r.out != NULL && strcmp(r.out, "19 -0000111122223333--") == 0,
       "sqlite: OBS_GRAPH_NODES holds the 19 nodes in walk order with their layers (%s)",
       r.out ? r.out : "no output");
    run_result_free(&r);
}

/* The graph launches in DECODE, from the trace. */
static size_t decode_graph_launches(const struct obs_trace *t)
{
    size_t i, n = 0;
    for (i = 0; i < t->ncalls; i++)
        n += t->calls[i].kind == OBS_KIND_GRAPH && t->calls[i].phase != OBS_NONE &&
             strcmp(t->phases[t->calls[i].phase].phase, "PREFILL") != 0;
    return n;
}

/* `obs-report phases`' "Layers in graph launches" rows: each DECODE layer
 * 0..3 once, with as many graph launches as the trace has in DECODE and 4
 * kernel nodes per launch. */
static void check_phases_table(const char *text, size_t launches)
{
    const char *at = text ? strstr(text, "Layers in graph launches") : NULL;
    int rows = 0, good = 0;
    if (at != NULL) {
        const char *line = strchr(at, '\n');
        while (line != NULL && line[1] != '\0') {
            char phase[16];
            unsigned layer;
            unsigned long long inst, gl, kn;
            line++;
            if (sscanf(line, " %15s %u %llu %llu %llu", phase, &layer, &inst, &gl, &kn) == 5) {
                rows++;
                good += strcmp(phase, "DECODE") == 0 && layer == (unsigned)(rows - 1) && inst == launches &&
                        gl == launches && kn == 4 * launches;
            }
            line = strchr(line, '\n');
        }
    }
    ok(rows == 4 && good == 4 && launches > 0,
       "phases: Layers in graph launches: DECODE layers 0-3, each %zu graph launches, %zu instances and %zu kernel "
       "nodes (%d rows, %d as wanted)",
       launches, launches, 4 * launches, rows, good);
    if (rows != 4 || good != 4)
        diag_text("obs-report phases", text);
}

int main(void)
{
    struct run_paths p;
    struct pc_run run;
    struct pc_graph_score s;
    struct obs_trace *t;
    size_t i, graph_launches = 0, graph_in_layer = 0, eager_live_layer = 0;
    char *text;

    plan(15);
    t = run_traced("graph", NULL, "4", "llm_loop --graph-decode --layer-norm under the shim", &p);
    pc_read_log(p.log, &run);
    pc_graph_node_layers(t, &run, &s);
    diag("FIGURES graph layers llm_loop: captured=%zu nodes=%zu in_layers=%zu right=%zu names_differ=%zu", s.captured,
         s.nodes, s.in_layers, s.right, s.names_differ);
    ok(s.execs == 1 && s.captured == 19 && s.nodes == 19 && s.names_differ == 0,
       "the exec's 19 kernel nodes are the 19 captured launches, in capture order (%zu execs, %zu nodes, %zu names "
       "differ)",
       s.execs, s.nodes, s.names_differ);
    ok(s.in_layers == 16 && s.right == s.captured,
       "every kernel node has the layer the capture's marks say, or none (%zu of %zu right; %zu in layers)", s.right,
       s.captured, s.in_layers);
    for (i = 0; i < run.n; i++) {
        const struct pc_launch *l = &run.l[i];
        if (l->captured)
            continue;
        if (strcmp(run.names[l->name], "-") != 0) {
            eager_live_layer += l->live_layer >= 0; /* the prompts' layers are live: ranges are pushed in this run */
            continue;
        }
        graph_launches++;
        graph_in_layer += l->live_layer >= 0;
    }
    ok(graph_launches == 12 && graph_in_layer == 0 && eager_live_layer > 0,
       "live: none of the %zu graph launches is inside a LAYER range (%zu are): ranges stay at step level (%zu "
       "prompt launches are live in one)",
       graph_launches, graph_in_layer, eager_live_layer);
    text = report("summary", p.obs);
    ok(text != NULL && strstr(text, "Layers") != NULL && strstr(text, "4 (16 nodes)") != NULL,
       "summary: the Graph launches table says the exec has 4 layers over 16 kernel nodes");
    free(text);
    text = report("phases", p.obs);
    check_phases_table(text, decode_graph_launches(t));
    free(text);
    {
        char json[4300];
        size_t len = 0, n = 0;
        char *js, *q;
        snprintf(json, sizeof json, "%s.json", p.prefix);
        js = test_read_file(json, &len);
        for (q = js; q != NULL && (q = strstr(q, "\"node_layers\":\"-x1,0x4,1x4,2x4,3x4,-x2\"")) != NULL; q++)
            n++;
        ok(n == 12, "JSON: the 12 graph launch slices carry node_layers -x1,0x4,1x4,2x4,3x4,-x2 (%zu do)", n);
        free(js);
    }
    check_sqlite(p.obs);
    obs_trace_free(t);
    pc_run_free(&run);

    /* OBS_LAYER=off: no layers for the nodes either */
    t = run_traced("graph-off", "OBS_LAYER=off", "4", "OBS_LAYER=off", &p);
    pc_read_log(p.log, &run);
    pc_graph_node_layers(t, &run, &s);
    ok(s.execs == 1 && s.nodes == 19 && s.names_differ == 0,
       "OBS_LAYER=off: the exec's 19 kernel nodes are kept in order");
    ok(s.right == s.captured - s.in_layers, "OBS_LAYER=off: no node has a layer (%zu of %zu outside the truth's layers)",
       s.right, s.captured);
    {
        const struct obs_graph *g = t->ngraphs == 1 ? &t->graphs[0] : NULL;
        ok(g != NULL && g->layers == 0, "OBS_LAYER=off: the exec has no layers");
    }
    text = report("summary", p.obs);
    ok(text != NULL && strstr(text, "(16 nodes)") == NULL, "OBS_LAYER=off: the summary claims no layers");
    free(text);
    obs_trace_free(t);
    pc_run_free(&run);

    /* past the cap of kernel nodes kept in order */
    t = run_traced("graph-cut", NULL, "8200", "8 200 layers", &p);
    {
        const struct obs_graph *g = t->ngraphs == 1 ? &t->graphs[0] : NULL;
        ok(g != NULL && g->kernel_count == 32803 && (g->flags & OBS_GRAPH_NODES_CUT) && g->nnodes == 0 &&
               g->layers == 0,
           "8 200 layers: 32 803 kernel nodes, more than 32 768: GRAPH flag NODES_CUT, no node order, no layers "
           "(flags %u, %zu nodes kept)",
           g ? g->flags : 0u, g ? g->nnodes : (size_t)0);
    }
    obs_trace_free(t);
    return 0;
}
