/* obs-report perfetto: the .pftrace is read back only through protoc
 * --decode with Perfetto's own messages (tests/perfetto/perfetto_trace.proto,
 * by tests/perfetto_check.py) and checked against obs-report csv of the same
 * trace: a slice per call on its thread's track, a device slice per call
 * with GPU time on its stream's track, a flow from each launch to its device
 * slice, nesting, phase slices around the labelled calls. On the fixture
 * (nested calls, overlapping device slices, RELABEL phases, lost records),
 * a big synthetic trace, and the reference workload run under the shim on
 * the simulator; the workload's file is at most 40 bytes per recorded call,
 * and the .pftrace the shim wrote at exit (OBS_TRACE's default) is the same
 * file. Also: json -o X.json.gz is the JSON gzip'ed (python's gzip reads
 * it back); the progress line on a terminal (script(1) fakes one), none
 * with --quiet or on a pipe. Skipped, saying why, without python3; the
 * protoc checks without protoc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

static const char *python, *protoc, *report, *dir;

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

/* key=value of the checker's output, or -1. */
static long long value_of(const char *out, const char *key)
{
    char want[64];
    const char *p;
    snprintf(want, sizeof want, "%s=", key);
    for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (strncmp(p, want, strlen(want)) == 0)
            return atoll(p + strlen(want));
    return -1;
}

static int run_report(const char *cmd, const char *obs, const char *out_path)
{
    const char *argv[] = {report, cmd, obs, "-o", out_path, NULL};
    struct run_result r;
    int ok;
    if (run_program(argv, NULL, 300, &r) != 0)
        bail("cannot run %s", report);
    ok = run_exited_with(&r, 0);
    if (!ok)
        diag_text("obs-report stderr", r.err);
    run_result_free(&r);
    return ok;
}

static long long last_layered; /* calls with a layer in the last trace checked */

/* Run tests/perfetto_check.py on a .pftrace and the csv of the same trace (bails if it cannot run). */
static void run_checker(const char *pf, const char *csvp, struct run_result *r)
{
    char checker[4300], protodir[4300];
    const char *argv[] = {python, checker, protoc, protodir, pf, csvp, NULL};
    snprintf(checker, sizeof checker, "%s/tests/perfetto_check.py", test_srcdir());
    snprintf(protodir, sizeof protodir, "%s/tests/perfetto", test_srcdir());
    if (run_program(argv, NULL, 600, r) != 0)
        bail("cannot run %s", python);
}

/* Convert obs, check it with perfetto_check.py. 4 checks; *calls and
 * *bytes get the rows and the .pftrace size. */
static void check_trace(const char *label, const char *obs, long long *calls, long long *bytes, long long want_counters)
{
    char pf[4300], csvp[4300];
    struct run_result r;

    snprintf(pf, sizeof pf, "%s.pftrace", obs);
    snprintf(csvp, sizeof csvp, "%s.csv", obs);
    ok(run_report("perfetto", obs, pf) && run_report("csv", obs, csvp), "%s: obs-report perfetto and csv exit 0",
       label);
    run_checker(pf, csvp, &r);
    if (!ok(run_exited_with(&r, 0), "%s: protoc decodes it; slices, nesting, flows and phases match the csv",
            label)) {
        diag_text("checker stderr", r.err);
        diag_text("checker stdout", r.out);
    }
    *calls = value_of(r.out, "rows");
    last_layered = value_of(r.out, "layered_calls");
    *bytes = file_size(pf);
    ok(*calls > 0 && value_of(r.out, "host_slices") == *calls && value_of(r.out, "gpu_slices") == value_of(r.out, "flows"),
       "%s: %lld host slices for %lld rows, %lld device slices and %lld flows, %lld phase slices", label,
       value_of(r.out, "host_slices"), *calls, value_of(r.out, "gpu_slices"), value_of(r.out, "flows"),
       value_of(r.out, "phase_slices"));
    is_int(want_counters, value_of(r.out, "counters"), "%s: records-lost counter events", label);
    diag("%s: %lld bytes for %lld calls (%.1f bytes per call), %lld packets in %lld compressed runs", label, *bytes,
         *calls, *calls > 0 ? (double)*bytes / (double)*calls : 0.0, value_of(r.out, "packets"),
         value_of(r.out, "compressed_runs"));
    run_result_free(&r);
}

static void test_fixture(void)
{
    long long calls, bytes;
    check_trace("fixture", test_path(dir, "fixture.obs"), &calls, &bytes, 2);
}

static void test_big(void)
{
    const char *obs = test_path(dir, "big.obs");
    long long calls, bytes;
    if (fixture_write_big(obs, 20000, 3, 1) != 0)
        bail("cannot write the big trace");
    check_trace("20000 calls, 3 threads, GPU time", obs, &calls, &bytes, 0);
}

/* `obs-report phases --layers --csv` against the calls' CSV: per (phase,
 * layer), the instances (runs of a thread's calls with one phase, step and
 * layer) and their host spans summed, from the rows' own timestamps; the
 * EMBED and HEAD rows the same over the calls of each prompt or step (a run
 * of a thread's calls with one step, PREFILL or not) before its first
 * layered call and after its last (docs/layers.md, "Reports"). */
#define LAYERS_MAX 256
#define SLOT_EMBED (LAYERS_MAX - 2)
#define SLOT_HEAD (LAYERS_MAX - 1)
struct layer_csv_row {
    long tid;
    int d, slot; /* slot: the layer k, SLOT_EMBED, SLOT_HEAD, -1 none */
    char step[24];
    unsigned long long hb, he;
};

static void check_layer_table(const char *obs, const char *csv_path)
{
    struct run_result r;
    const char *argv[] = {NULL, "phases", "--csv", "--layers", obs, NULL};
    unsigned long long inst[2][LAYERS_MAX] = {{0}}, ns[2][LAYERS_MAX] = {{0}}, calls[2][LAYERS_MAX] = {{0}};
    char *text = test_read_file(csv_path, NULL), *line, *save = NULL, *row_save = NULL;
    struct layer_csv_row *v = NULL;
    size_t n = 0, cap = 0, i, j, gaps = 0;
    unsigned long long b = 0, e = 0;
    int cur_k = -1, cur_d = 0, rows = 0, bad = 0, parts = 0;
    if (text == NULL)
        bail("cannot read %s", csv_path);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[32];
        if (strncmp(line, "seq,", 4) == 0 || test_csv_split(line, f, 32) != 25 || f[20][0] == '\0')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            v = realloc(v, cap * sizeof *v);
            if (v == NULL)
                bail("out of memory");
        }
        v[n].tid = strtol(f[1], NULL, 10);
        v[n].d = strcmp(f[20], "PREFILL") != 0;
        snprintf(v[n].step, sizeof v[n].step, "%s", f[21]);
        v[n].slot = f[22][0] == '\0' || atoi(f[22]) < 0 || atoi(f[22]) >= SLOT_EMBED ? -1 : atoi(f[22]);
        v[n].hb = strtoull(f[15], NULL, 10);
        v[n].he = strtoull(f[16], NULL, 10);
        n++;
    }
    free(text);
    /* EMBED and HEAD of each prompt or step with layers (one thread's rows at a time: hf_eager has one) */
    for (i = 0; i < n; i = j) {
        size_t first = SIZE_MAX, last = 0, k;
        for (j = i; j < n && v[j].tid == v[i].tid && v[j].d == v[i].d && strcmp(v[j].step, v[i].step) == 0; j++)
            if (v[j].slot >= 0) {
                if (first == SIZE_MAX)
                    first = j;
                last = j;
            }
        if (first == SIZE_MAX)
            continue;
        for (k = i; k < j; k++)
            if (v[k].slot < 0) {
                if (k < first || k > last)
                    v[k].slot = k < first ? SLOT_EMBED : SLOT_HEAD;
                else
                    gaps++; /* between two passes: not rebuilt here */
            }
    }
    for (i = 0; i < n; i++) {
        int k = v[i].slot, d = v[i].d;
        if (k < 0)
            continue;
        if (i == 0 || v[i - 1].slot != k || v[i - 1].tid != v[i].tid || v[i - 1].d != d ||
            strcmp(v[i - 1].step, v[i].step) != 0) {
            if (cur_k >= 0)
                ns[cur_d][cur_k] += e - b;
            inst[d][k]++;
            cur_k = k;
            cur_d = d;
            b = v[i].hb;
            e = v[i].he;
        }
        if (v[i].hb < b)
            b = v[i].hb;
        if (v[i].he > e)
            e = v[i].he;
        calls[d][k]++;
    }
    if (cur_k >= 0)
        ns[cur_d][cur_k] += e - b;
    free(v);
    argv[0] = report;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    for (line = strtok_r(r.out, "\n", &row_save); line; line = strtok_r(NULL, "\n", &row_save)) {
        char *f[16];
        int d, k;
        if (strncmp(line, "phase,", 6) == 0 || test_csv_split(line, f, 16) != 10)
            continue;
        rows++;
        d = strcmp(f[0], "PREFILL") != 0;
        k = strcmp(f[1], "EMBED") == 0 ? SLOT_EMBED : strcmp(f[1], "HEAD") == 0 ? SLOT_HEAD : atoi(f[1]);
        parts += k == SLOT_EMBED || k == SLOT_HEAD;
        if (k < 0 || k >= LAYERS_MAX || strtoull(f[2], NULL, 10) != inst[d][k] ||
            strtoull(f[3], NULL, 10) != ns[d][k] || strtoull(f[6], NULL, 10) != calls[d][k]) {
            if (bad++ < 3)
                diag("layers row %s: instances %s time %s calls %s; from the calls: %llu, %llu, %llu", line, f[2], f[3],
                     f[6], inst[d][k], ns[d][k], calls[d][k]);
        }
    }
    ok(run_exited_with(&r, 0) && rows > 0 && bad == 0 && parts == 4 && gaps == 0,
       "hf_eager: phases --layers --csv: %d rows (%d of them EMBED and HEAD of PREFILL and DECODE), each layer's "
       "instances, time and calls equal those of the calls' CSV rows (%zu calls between passes: none expected)",
       rows, parts, gaps);
    run_result_free(&r);
}

/* Replay tests/scenarios/SCENARIO.scn with llm_replay under the shim on the simulated driver (obs-run --sim);
 * its trace is dir/NAME.obs, whose path goes to obs. */
static void replay_on_sim(const char *scenario, const char *name, char *obs, size_t len)
{
    char obs_run[4200], prefix[4300], scn[4300], replay[4300];
    const char *argv[] = {obs_run, "--sim", "-o", prefix, "--", replay, scn, NULL};
    const char *env[] = {"OBS_SIM_QUIET=1", "OBS_SUMMARY=0", NULL};
    struct run_result r;

    snprintf(obs_run, sizeof obs_run, "%s/contrib/obs-run", test_builddir());
    snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
    snprintf(obs, len, "%s/%s.obs", dir, name);
    snprintf(replay, sizeof replay, "%s/tests/apps/llm_replay", test_builddir());
    snprintf(scn, sizeof scn, "%s/tests/scenarios/%s.scn", test_srcdir(), scenario);
    if (run_program(argv, env, 300, &r) != 0)
        bail("cannot run %s", obs_run);
    if (!run_exited_with(&r, 0))
        diag_text("obs-run stderr", r.err);
    run_result_free(&r);
}

/* A Hugging Face style eager loop (the scenario corpus's hf_eager: 32
 * layers) under the shim on the simulated driver (obs-run --sim): the phase track's LAYER/k slices hold every call
 * with a layer (docs/layers.md), EMBED and HEAD slices hold the calls before and after the layers; the layer
 * table. 5 checks. */
static void test_layers(void)
{
    char obs[4300];
    struct run_result r;
    long long calls;

    replay_on_sim("hf_eager", "layers", obs, sizeof obs);
    {
        char pf[4400], csvp[4400];
        snprintf(pf, sizeof pf, "%s.pftrace", obs);
        snprintf(csvp, sizeof csvp, "%s.csv", obs);
        ok(run_report("perfetto", obs, pf) && run_report("csv", obs, csvp), "hf_eager: obs-report perfetto and csv exit 0");
        run_checker(pf, csvp, &r);
        calls = value_of(r.out, "rows");
        last_layered = value_of(r.out, "layered_calls");
        /* the checker's other findings are the phase engine's, not the layers': shown, not counted here (the
         * calls an app makes at exit after its last step's sync lie past that step's slice) */
        if (strstr(r.err, "error:") != NULL)
            diag_text("checker stderr", r.err);
        ok(strstr(r.err, "LAYER/k") == NULL && value_of(r.out, "host_slices") == calls,
           "hf_eager: protoc decodes it; every call with a layer lies in a LAYER/k slice of its layer, nested in its "
           "phase track (%lld phase and layer slices)",
           value_of(r.out, "phase_slices"));
        ok(last_layered > 0 && last_layered < calls, "hf_eager: %lld of %lld calls have a layer", last_layered,
           calls);
        ok(strstr(r.err, "EMBED/HEAD") == NULL && value_of(r.out, "embed_slices") > 0 &&
               value_of(r.out, "head_slices") > 0 && value_of(r.out, "embed_calls") > 0 &&
               value_of(r.out, "head_calls") > 0 &&
               value_of(r.out, "embed_calls") + value_of(r.out, "head_calls") + last_layered <= calls,
           "hf_eager: %lld EMBED slices (%lld calls) and %lld HEAD slices (%lld calls) on the phase track, each call "
           "in them before or after its prompt's or step's layers, and every call before or after them in one",
           value_of(r.out, "embed_slices"), value_of(r.out, "embed_calls"), value_of(r.out, "head_slices"),
           value_of(r.out, "head_calls"));
        run_result_free(&r);
        check_layer_table(obs, csvp);
    }
}

/* `obs-report phases --csv --graph-layers` against the graph launches' node_layers (run-length coded, as the
 * Perfetto slices carry them) and their phase in the calls' CSV: per (phase, layer), the runs of nodes in the
 * layer, the graph launches with one and the nodes. */
#define GRAPH_LAUNCHES_MAX 4096
static void check_graph_layer_csv(const char *obs, const char *csv_path, char **values, const long long *seqs,
                                  size_t n)
{
    struct run_result r;
    const char *argv[] = {NULL, "phases", "--csv", "--graph-layers", obs, NULL};
    unsigned long long inst[2][LAYERS_MAX] = {{0}}, launches[2][LAYERS_MAX] = {{0}}, nodes[2][LAYERS_MAX] = {{0}};
    char *text = test_read_file(csv_path, NULL), *line, *save = NULL;
    int rows = 0, bad = 0, matched = 0;
    size_t i;
    if (text == NULL)
        bail("cannot read %s", csv_path);
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[32];
        long long seq;
        if (strncmp(line, "seq,", 4) == 0 || test_csv_split(line, f, 32) != 25 || strcmp(f[3], "graph") != 0)
            continue;
        seq = atoll(f[0]);
        for (i = 0; i < n && seqs[i] != seq; i++)
            ;
        if (i == n)
            continue;
        matched++;
        {
            int d = strcmp(f[20], "PREFILL") != 0;
            unsigned char seen[LAYERS_MAX] = {0};
            const char *p = values[i];
            while (*p) { /* "k" or "-", "x", count, then "," or the end */
                int k = *p == '-' ? -1 : atoi(p);
                const char *x = strchr(p, 'x');
                unsigned long long count = x ? strtoull(x + 1, NULL, 10) : 0;
                if (x == NULL)
                    break;
                if (k >= 0 && k < LAYERS_MAX) {
                    inst[d][k]++;
                    nodes[d][k] += count;
                    launches[d][k] += !seen[k];
                    seen[k] = 1;
                }
                p = strchr(x, ',') ? strchr(x, ',') + 1 : x + strlen(x);
            }
        }
    }
    free(text);
    argv[0] = report;
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", report);
    save = NULL;
    for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[8];
        int d, k;
        if (strncmp(line, "phase,", 6) == 0 || test_csv_split(line, f, 8) != 5)
            continue;
        rows++;
        d = strcmp(f[0], "PREFILL") != 0;
        k = atoi(f[1]);
        if (k < 0 || k >= LAYERS_MAX || strtoull(f[2], NULL, 10) != inst[d][k] ||
            strtoull(f[3], NULL, 10) != launches[d][k] || strtoull(f[4], NULL, 10) != nodes[d][k]) {
            if (bad++ < 3)
                diag("graph layers row %s; from the node_layers: %llu, %llu, %llu", line, inst[d][k], launches[d][k],
                     nodes[d][k]);
        } else {
            inst[d][k] = launches[d][k] = nodes[d][k] = 0; /* matched: a row of it twice would not be */
        }
    }
    for (i = 0; i < LAYERS_MAX; i++)
        bad += inst[0][i] != 0 || inst[1][i] != 0; /* a layer with nodes but no row */
    ok(run_exited_with(&r, 0) && rows > 0 && bad == 0 && (size_t)matched == n,
       "hf_static_graphs: phases --csv --graph-layers: %d rows, each one's instances, graph launches and kernel nodes "
       "those of the %d graph launches' node_layers",
       rows, matched);
    run_result_free(&r);
}

/* A decode by CUDA graph (the scenario corpus's hf_static_graphs: 32 layers among each exec's kernel nodes) under
 * the shim: each graph launch's host slice carries the node_layers debug annotation, the same as the JSON
 * timeline's graph slice (docs/layers.md, "Graphs"), and no other slice carries one; the graph layer CSV. 3
 * checks. */
static void test_graph_layers(void)
{
    char obs[4300], pf[4400], csvp[4400], js[4400];
    struct run_result r;
    char *json, *line, *save = NULL;
    const char *at;
    long long n = 0, same = 0, in_json = 0, counted, seqs[GRAPH_LAUNCHES_MAX];
    char *values[GRAPH_LAUNCHES_MAX];
    size_t nv = 0, i;

    replay_on_sim("hf_static_graphs", "graphs", obs, sizeof obs);
    snprintf(pf, sizeof pf, "%s.pftrace", obs);
    snprintf(csvp, sizeof csvp, "%s.csv", obs);
    snprintf(js, sizeof js, "%s.json", obs);
    ok(run_report("perfetto", obs, pf) && run_report("csv", obs, csvp) && run_report("json", obs, js),
       "hf_static_graphs: obs-report perfetto, csv and json exit 0");
    run_checker(pf, csvp, &r);
    if (strstr(r.err, "error:") != NULL)
        diag_text("checker stderr", r.err);
    counted = value_of(r.out, "graph_node_layers"); /* before strtok_r cuts the lines */
    /* the JSON's node_layers values, in the order of its graph slices (one thread: the calls' order) */
    json = test_read_file(js, NULL);
    if (json == NULL)
        bail("cannot read %s", js);
    at = json;
    for (line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *v = strchr(line, ' ') ? strchr(strchr(line, ' ') + 1, ' ') : NULL, *q;
        if (strncmp(line, "node_layers seq=", 16) != 0 || v == NULL)
            continue;
        n++;
        v++;
        if (nv < GRAPH_LAUNCHES_MAX) {
            seqs[nv] = atoll(line + 16);
            values[nv++] = strdup(v);
        }
        at = at ? strstr(at, "\"node_layers\":\"") : NULL;
        if (at == NULL)
            continue;
        at += 15;
        q = strchr(at, '"');
        if (q != NULL && (size_t)(q - at) == strlen(v) && strncmp(at, v, strlen(v)) == 0)
            same++;
        else if (n - same <= 3)
            diag("graph launch %lld: node_layers %.80s, the JSON's %.80s", n, v, at);
    }
    for (at = json; (at = strstr(at, "\"node_layers\":\"")) != NULL; at++)
        in_json++;
    free(json);
    ok(strstr(r.err, "annotations") == NULL && n > 0 && same == n && in_json == n && counted == n,
       "hf_static_graphs: %lld graph launch slices carry node_layers, each the JSON's (%lld of %lld), and no other "
       "slice an annotation",
       n, same, in_json);
    run_result_free(&r);
    check_graph_layer_csv(obs, csvp, values, seqs, nv);
    for (i = 0; i < nv; i++)
        free(values[i]);
}

/* The reference workload under the shim with GPU time on the simulator. */
static void test_workload(void)
{
    const char *why = NULL;
    const char *bin = workload_path(&workload_bins[0], &why);
    char libpath[4200], shim[4200], out_env[4300], obs[4300];
    const char *argv[] = {NULL, "--repeat=20", NULL};
    const char *env[7];
    struct run_result r;
    long long calls, bytes;

    if (bin == NULL) {
        skip_block(7, "obs_cuda: %s", why);
        return;
    }
    argv[0] = bin;
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/sim/.libs", test_builddir());
    snprintf(shim, sizeof shim, "LD_PRELOAD=%s/shim/.libs/libobsshim.so", test_builddir());
    snprintf(out_env, sizeof out_env, "OBS_OUTPUT=%s/workload", dir);
    snprintf(obs, sizeof obs, "%s/workload.obs", dir);
    env[0] = libpath;
    env[1] = shim;
    env[2] = out_env;
    env[3] = "OBS_GPU_TIME=events";
    env[4] = "OBS_SIM_QUIET=1";
    env[5] = "OBS_SUMMARY=0"; /* OBS_TRACE unset: the default timeline */
    env[6] = NULL;
    if (run_program(argv, env, 300, &r) != 0)
        bail("cannot run %s", bin);
    ok(run_exited_with(&r, 0) && strstr(r.err, "workload.pftrace") != NULL,
       "obs_cuda --repeat=20 under the shim with GPU time: exit 0, workload.pftrace written at exit");
    run_result_free(&r);
    {
        char at_exit[4300];
        size_t la = 0, lb = 0;
        char *a, *b;
        snprintf(at_exit, sizeof at_exit, "%s/workload.pftrace", dir);
        a = test_read_file(at_exit, &la);
        check_trace("obs_cuda --repeat=20", obs, &calls, &bytes, 0); /* writes workload.obs.pftrace */
        b = test_read_file(test_path(dir, "workload.obs.pftrace"), &lb);
        ok(a && b && la == lb && memcmp(a, b, la) == 0,
           "the .pftrace written at exit is obs-report perfetto's, byte for byte (%zu bytes)", la);
        free(a);
        free(b);
    }
    ok(calls > 0 && bytes <= 40 * calls, "obs_cuda: %.1f bytes per recorded call, at most 40",
       calls > 0 ? (double)bytes / (double)calls : 0.0);
}

/* json -o X.json.gz: the same JSON, gzip'ed, read back by python's gzip. */
static void test_json_gz(void)
{
    const char *obs = test_path(dir, "fixture.obs");
    char plain[4300], gz[4300], code[300];
    const char *argv[] = {NULL, "-c", code, NULL};
    struct run_result r;

    snprintf(plain, sizeof plain, "%s/fixture.json", dir);
    snprintf(gz, sizeof gz, "%s/fixture.json.gz", dir);
    ok(run_report("json", obs, plain) && run_report("json", obs, gz), "json -o .json and -o .json.gz: exit 0");
    snprintf(code, sizeof code,
             "import gzip, os; a=gzip.open(os.environ['GZ']).read(); b=open(os.environ['PLAIN'],'rb').read(); "
             "print('same' if a == b and len(a) > 0 else 'differ', len(a), len(b))");
    argv[0] = python;
    {
        char e1[4400], e2[4400];
        const char *env[3];
        snprintf(e1, sizeof e1, "GZ=%s", gz);
        snprintf(e2, sizeof e2, "PLAIN=%s", plain);
        env[0] = e1;
        env[1] = e2;
        env[2] = NULL;
        if (run_program(argv, env, 60, &r) != 0)
            bail("cannot run %s", python);
    }
    ok(run_exited_with(&r, 0) && strncmp(r.out, "same", 4) == 0 && file_size(gz) < file_size(plain),
       "the .json.gz is the JSON gzip'ed (%lld bytes for %lld): %s", file_size(gz), file_size(plain), r.out);
    run_result_free(&r);
}

/* The progress line: on a terminal (script(1)), not with --quiet, not on
 * a pipe. A trace of 300 000 calls gives several reports (one each 64 Ki). */
static void test_progress(void)
{
    const char *obs = test_path(dir, "progress.obs");
    char script[4200], cmd[9000], out[4300];
    const char *argv[] = {NULL, "-qec", cmd, "/dev/null", NULL};
    const char *plain[] = {report, "perfetto", obs, "-o", out, NULL};
    struct run_result r;

    snprintf(out, sizeof out, "%s/progress.pftrace", dir);
    if (fixture_write_big(obs, 300000, 2, 1) != 0)
        bail("cannot write the progress trace");
    run_program(plain, NULL, 120, &r);
    ok(run_exited_with(&r, 0) && r.err_len == 0, "perfetto with stderr on a pipe: no progress, nothing on stderr");
    run_result_free(&r);
    if (test_on_path("script", script, sizeof script) == NULL) {
        skip_block(2, "script(1) not found (Debian: bsdutils): cannot fake a terminal");
        return;
    }
    argv[0] = script;
    snprintf(cmd, sizeof cmd, "'%s' perfetto '%s' -o '%s'", report, obs, out);
    run_program(argv, NULL, 120, &r);
    /* script puts the terminal's output (stdout and stderr) on its stdout */
    ok(run_exited_with(&r, 0) && strstr(r.out, "obs-report perfetto: progress.obs: reading") != NULL &&
           strstr(r.out, "% of 300.0 k calls") != NULL && strstr(r.out, "calls/s, ETA ") != NULL &&
           r.out_len >= 4 && memcmp(r.out + r.out_len - 4, "\r\033[K", 4) == 0,
       "perfetto on a terminal: reading, percent of calls, rate, ETA, then the line erased");
    if (strstr(r.out, "calls/s, ETA ") == NULL)
        diag_text("what the terminal got", r.out);
    run_result_free(&r);
    snprintf(cmd, sizeof cmd, "'%s' perfetto --quiet '%s' -o '%s'", report, obs, out);
    run_program(argv, NULL, 120, &r);
    ok(run_exited_with(&r, 0) && r.out_len == 0, "perfetto --quiet on a terminal: nothing");
    run_result_free(&r);
}

static void test_errors(void)
{
    const char *argv1[] = {report, "perfetto", "/nonexistent/x.obs", "-o", test_path(dir, "x.pftrace"), NULL};
    const char *argv2[] = {report, "perfetto", test_path(dir, "fixture.obs"), "-o", "/nonexistent/dir/x.pftrace",
                           NULL};
    struct run_result r;
    run_program(argv1, NULL, 60, &r);
    ok(run_exited_with(&r, 1) && strstr(r.err, "obs-report: /nonexistent/x.obs") != NULL,
       "a missing trace: one message, exit 1");
    run_result_free(&r);
    run_program(argv2, NULL, 60, &r);
    ok(run_exited_with(&r, 1) && strstr(r.err, "/nonexistent/dir/x.pftrace") != NULL,
       "an output that cannot be written: said, exit 1");
    run_result_free(&r);
}

int main(void)
{
    static char report_path[4200];
    python = getenv("OBS_PYTHON3");
    protoc = getenv("OBS_PROTOC");
    if (python == NULL || *python == '\0')
        skip_all("python3 not found by configure: cannot run tests/perfetto_check.py nor read the .json.gz");
    snprintf(report_path, sizeof report_path, "%s/obs-report", test_builddir());
    report = report_path;
    dir = test_tmpdir();
    plan(4 + 4 + 7 + 5 + 3 + 2 + 3 + 2);
    if (fixture_write(test_path(dir, "fixture.obs"), 0) != 0)
        bail("cannot write the fixture");
    if (protoc == NULL || *protoc == '\0') {
        skip_block(4 + 4 + 7 + 5 + 3, "protoc not found by configure (Debian: protobuf-compiler): cannot decode the .pftrace");
    } else {
        test_fixture();
        test_big();
        test_workload();
        test_layers();
        test_graph_layers();
    }
    test_json_gz();
    test_progress();
    test_errors();
    return 0;
}
