/* Live ranges: the shim's NVTX client and roctx loader (shim/phases/ranges.c,
 * nvtx_client.c, roctx_client.c), and the test tools that record ranges into
 * the ground-truth log (tests/nvtx_inject: libobsnvtxinject.so, loaded
 * through NVTX_INJECTION64_PATH, and the roctx stand-in libroctx64.so.4).
 *   - shim/abi/nvtx_abi.h against the CUDA toolkit's nvtx3 headers (when
 *     configure found CUDA);
 *   - the real obs_cuda on the simulated runtime with the injection: its own
 *     NVTX ranges (header-only NVTX3, default domain) interleave with its
 *     launches in the log exactly as the source nests them (each prefill
 *     inside PREFILL, each gather inside KV_GATHER inside DECODE/STEP_k, in
 *     step order; steps after the first inside DECODE/STEADY; with --graphs
 *     the graph launch inside DECODE/STEADY), and --no-ranges removes them;
 *     under the shim the same, and the shim's own client attaches to the
 *     same tool, with its ranges in the obsshim domain;
 *   - the real obs_hip on the simulated HIP runtime with the roctx stand-in:
 *     the same through roctx;
 *   - tests/apps/ranges_app driving the shim's API: ranges in the domain
 *     "obsshim" (or the default domain), registered strings, colours, the
 *     nesting, no-op pops and handles, several threads, roctx, both sinks at
 *     once, and nothing at all (no-op, inactive) without a tool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/nvtx_abi.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

#ifdef OBS_HAVE_NVTX_HEADERS
#define NVTX_AS_SYSTEM_HEADER
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#endif

#define MAX_FIELDS 6
#define WORKLOAD_ARGS "--ctx", "64", "--hidden", "256", "--decode", "4", "--repeat", "2"
#define DECODE_STEPS 4
#define REPEATS 2

/* ---- log parsing ---------------------------------------------------------- */

struct log_line {
    char *f[MAX_FIELDS]; /* api, kind, name, stream/domain, bytes/attrs, status/depth */
};

struct log {
    struct log_line *lines;
    size_t n;
    char *text;
};

static void log_free(struct log *l)
{
    free(l->lines);
    free(l->text);
    memset(l, 0, sizeof *l);
}

/* Reads and splits the log; lines with fewer than 6 fields are kept with
 * empty fields (and fail the checks that look at them). */
static int log_read(const char *path, struct log *l)
{
    memset(l, 0, sizeof *l);
    size_t len;
    l->text = test_read_file(path, &len);
    if (l->text == NULL)
        return -1;
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += l->text[i] == '\n';
    l->lines = calloc(cap, sizeof *l->lines);
    char *p = l->text;
    while (*p) {
        char *end = strchr(p, '\n');
        if (end)
            *end = '\0';
        struct log_line *ln = &l->lines[l->n++];
        for (int i = 0; i < MAX_FIELDS; i++) {
            ln->f[i] = p;
            char *tab = strchr(p, '\t');
            if (tab && i < MAX_FIELDS - 1) {
                *tab = '\0';
                p = tab + 1;
            } else {
                p += strlen(p);
            }
        }
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

static size_t count_api(const struct log *l, const char *api)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += strcmp(l->lines[i].f[0], api) == 0;
    return n;
}

static size_t count_kind(const struct log *l, const char *kind)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += strcmp(l->lines[i].f[1], kind) == 0;
    return n;
}

/* The range lines only, "api name domain attrs depth" one per line. */
static size_t count_exact(const char *text, const char *line)
{
    size_t count = 0, n = strlen(line);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        count += len == n && memcmp(p, line, n) == 0;
        p += len + (nl ? 1 : 0);
    }
    return count;
}

static char *range_lines(const struct log *l)
{
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (size_t i = 0; i < l->n; i++) {
        const struct log_line *ln = &l->lines[i];
        if (strcmp(ln->f[1], "range") != 0)
            continue;
        char buf[1200];
        int n = snprintf(buf, sizeof buf, "%s %s %s %s %s\n", ln->f[0], ln->f[2], ln->f[3], ln->f[4],
                         ln->f[5]);
        if (n < 0)
            continue;
        while (len + (size_t)n + 1 > cap)
            out = realloc(out, cap *= 2);
        memcpy(out + len, buf, (size_t)n + 1);
        len += (size_t)n;
    }
    return out;
}

/* ---- running ---------------------------------------------------------------- */

static const char *inject_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/nvtx_inject/.libs/libobsnvtxinject.so", test_builddir());
    return path;
}

static const char *tools_dir(void)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/nvtx_inject/.libs", test_builddir());
    return dir;
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

/* Runs argv with a fresh OBS_SIM_LOG; env: extra settings, NULL-terminated. */
static int run_logged(const char *const argv[], const char *const *env, const char *log_path,
                      struct run_result *res)
{
    const char *full[16];
    char log_env[4200];
    size_t n = 0;
    remove(log_path);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    full[n++] = log_env;
    full[n++] = "OBS_SIM_QUIET=1";
    full[n++] = "LD_PRELOAD";
    for (; env && *env && n < 15; env++)
        full[n++] = *env;
    full[n] = NULL;
    if (run_program(argv, full, 120, res) != 0)
        return -1;
    if (!res->exited || res->status != 0) {
        diag("%s exited %d (signal %d)", argv[0], res->status, res->signal);
        diag_text("stderr", res->err);
    }
    return 0;
}

/* ---- the NVTX ABI against the real headers ---------------------------------- */

static void check_nvtx_abi(void)
{
#ifdef OBS_HAVE_NVTX_HEADERS
    int bad = 0, checks = 0;
#define SAME(ours, theirs)                                                                          \
    do {                                                                                            \
        checks++;                                                                                   \
        if ((long long)(ours) != (long long)(theirs)) {                                             \
            bad++;                                                                                  \
            diag("%s = %lld, nvtx3 says %s = %lld", #ours, (long long)(ours), #theirs,              \
                 (long long)(theirs));                                                              \
        }                                                                                           \
    } while (0)
    typedef struct obs_nvtx_event_attributes A;
    SAME(OBS_NVTX_VERSION, NVTX_VERSION);
    SAME(sizeof(A), sizeof(nvtxEventAttributes_t));
    SAME(offsetof(A, version), offsetof(nvtxEventAttributes_t, version));
    SAME(offsetof(A, size), offsetof(nvtxEventAttributes_t, size));
    SAME(offsetof(A, category), offsetof(nvtxEventAttributes_t, category));
    SAME(offsetof(A, color_type), offsetof(nvtxEventAttributes_t, colorType));
    SAME(offsetof(A, color), offsetof(nvtxEventAttributes_t, color));
    SAME(offsetof(A, payload_type), offsetof(nvtxEventAttributes_t, payloadType));
    SAME(offsetof(A, payload), offsetof(nvtxEventAttributes_t, payload));
    SAME(sizeof(((A *)0)->payload), sizeof(((nvtxEventAttributes_t *)0)->payload));
    SAME(offsetof(A, message_type), offsetof(nvtxEventAttributes_t, messageType));
    SAME(offsetof(A, message), offsetof(nvtxEventAttributes_t, message));
    SAME(sizeof(((A *)0)->message), sizeof(((nvtxEventAttributes_t *)0)->message));
    SAME(OBS_NVTX_COLOR_ARGB, NVTX_COLOR_ARGB);
    SAME(OBS_NVTX_MESSAGE_ASCII, NVTX_MESSAGE_TYPE_ASCII);
    SAME(OBS_NVTX_MESSAGE_UNICODE, NVTX_MESSAGE_TYPE_UNICODE);
    SAME(OBS_NVTX_MESSAGE_REGISTERED, NVTX_MESSAGE_TYPE_REGISTERED);
    SAME(OBS_NVTX_PAYLOAD_UNKNOWN, NVTX_PAYLOAD_UNKNOWN);

    SAME(OBS_NVTX_MODULE_CORE, NVTX_CB_MODULE_CORE);
    SAME(OBS_NVTX_MODULE_CUDA, NVTX_CB_MODULE_CUDA);
    SAME(OBS_NVTX_MODULE_OPENCL, NVTX_CB_MODULE_OPENCL);
    SAME(OBS_NVTX_MODULE_CUDART, NVTX_CB_MODULE_CUDART);
    SAME(OBS_NVTX_MODULE_CORE2, NVTX_CB_MODULE_CORE2);
    SAME(OBS_NVTX_MODULE_SYNC, NVTX_CB_MODULE_SYNC);
    SAME(OBS_NVTX_MODULE_COUNT, NVTX_CB_MODULE_SIZE);
    SAME(OBS_NVTX_CORE_MarkEx, NVTX_CBID_CORE_MarkEx);
    SAME(OBS_NVTX_CORE_MarkA, NVTX_CBID_CORE_MarkA);
    SAME(OBS_NVTX_CORE_RangeStartEx, NVTX_CBID_CORE_RangeStartEx);
    SAME(OBS_NVTX_CORE_RangeEnd, NVTX_CBID_CORE_RangeEnd);
    SAME(OBS_NVTX_CORE_RangePushEx, NVTX_CBID_CORE_RangePushEx);
    SAME(OBS_NVTX_CORE_RangePushA, NVTX_CBID_CORE_RangePushA);
    SAME(OBS_NVTX_CORE_RangePop, NVTX_CBID_CORE_RangePop);
    SAME(OBS_NVTX_CORE_NameOsThreadW, NVTX_CBID_CORE_NameOsThreadW);
    SAME(OBS_NVTX_CORE_SIZE, NVTX_CBID_CORE_SIZE);
    SAME(OBS_NVTX_CORE2_DomainMarkEx, NVTX_CBID_CORE2_DomainMarkEx);
    SAME(OBS_NVTX_CORE2_DomainRangePushEx, NVTX_CBID_CORE2_DomainRangePushEx);
    SAME(OBS_NVTX_CORE2_DomainRangePop, NVTX_CBID_CORE2_DomainRangePop);
    SAME(OBS_NVTX_CORE2_DomainRegisterStringA, NVTX_CBID_CORE2_DomainRegisterStringA);
    SAME(OBS_NVTX_CORE2_DomainCreateA, NVTX_CBID_CORE2_DomainCreateA);
    SAME(OBS_NVTX_CORE2_Initialize, NVTX_CBID_CORE2_Initialize);
    SAME(OBS_NVTX_CORE2_SIZE, NVTX_CBID_CORE2_SIZE);
    SAME(OBS_NVTX_CUDA_SIZE, NVTX_CBID_CUDA_SIZE);
    SAME(OBS_NVTX_OPENCL_SIZE, NVTX_CBID_OPENCL_SIZE);
    SAME(OBS_NVTX_CUDART_SIZE, NVTX_CBID_CUDART_SIZE);
    SAME(OBS_NVTX_SYNC_SIZE, NVTX_CBID_SYNC_SIZE);
    SAME(OBS_NVTX_ETID_CALLBACKS, NVTX_ETID_CALLBACKS);
    SAME(OBS_NVTX_ETID_RESERVED0, NVTX_ETID_RESERVED0);
    SAME(OBS_NVTX_ETID_VERSIONINFO, NVTX_ETID_VERSIONINFO);
    SAME(sizeof(struct obs_nvtx_export_callbacks), sizeof(NvtxExportTableCallbacks));
    SAME(offsetof(struct obs_nvtx_export_callbacks, get_module_function_table),
         offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable));
    SAME(sizeof(struct obs_nvtx_export_version_info), sizeof(NvtxExportTableVersionInfo));
    SAME(offsetof(struct obs_nvtx_export_version_info, version),
         offsetof(NvtxExportTableVersionInfo, version));
    SAME(offsetof(struct obs_nvtx_export_version_info, set_injection_nvtx_version),
         offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion));
#undef SAME
    ok(bad == 0, "shim/abi/nvtx_abi.h matches the nvtx3 headers (%d values, %d differ)", checks, bad);
#else
    skip("nvtx3 headers not available (configure found no CUDA toolkit)");
#endif
}

/* ---- workloads: ground-truth ranges interleaved with launches ------------- */

struct walk {
    size_t prefill, gather, decode, graph; /* launches seen in the right ranges */
    size_t launches, pushes, pops;
    size_t wrong;       /* launches outside their range, steps out of order */
    size_t bad_range;   /* depth column or domain not as the stack says */
    size_t left_open;   /* ranges still open at the end */
};

#define STACK_MAX 16

/* Replays push_api/pop_api lines (default domain "-") as a stack and checks
 * every launch against it. */
static void walk_log(const struct log *l, const char *push_api, const char *pop_api, struct walk *w)
{
    const char *stack[STACK_MAX];
    size_t depth = 0;
    int next_step = 0, gather_step = -1;
    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < l->n; i++) {
        const struct log_line *ln = &l->lines[i];
        if (strcmp(ln->f[1], "range") == 0) {
            if (strcmp(ln->f[0], push_api) == 0) {
                w->pushes++;
                if (depth < STACK_MAX)
                    stack[depth] = ln->f[2];
                depth++;
            } else if (strcmp(ln->f[0], pop_api) == 0) {
                w->pops++;
                if (depth == 0) {
                    w->bad_range++;
                    continue;
                }
                depth--;
            } else {
                continue;
            }
            if (strcmp(ln->f[3], "-") != 0 || atol(ln->f[5]) != (long)depth)
                w->bad_range++;
            continue;
        }
        const char *top = depth > 0 && depth <= STACK_MAX ? stack[depth - 1] : "";
        const char *below = depth > 1 && depth <= STACK_MAX ? stack[depth - 2] : "";
        const char *below2 = depth > 2 && depth <= STACK_MAX ? stack[depth - 3] : "";
        if (strcmp(ln->f[1], "graph") == 0) {
            w->launches++;
            if (strcmp(top, "DECODE/STEADY") == 0 && depth == 1)
                w->graph++;
            else
                w->wrong++;
            continue;
        }
        if (strcmp(ln->f[1], "kernel") != 0)
            continue;
        w->launches++;
        int step = -1;
        if (strstr(ln->f[2], "prefill_kernel")) {
            if (depth == 1 && strcmp(top, "PREFILL") == 0) {
                w->prefill++;
                next_step = 0;
            } else {
                w->wrong++;
            }
        } else if (strstr(ln->f[2], "kv_gather_kernel")) {
            /* KV_GATHER inside DECODE/STEP_k (k in order), itself top-level for
             * k = 0 and inside DECODE/STEADY or GRAPH_CAPTURE after. */
            if (strcmp(top, "KV_GATHER") == 0 && sscanf(below, "DECODE/STEP_%d", &step) == 1 &&
                step == next_step &&
                (step == 0 ? depth == 2
                           : depth == 3 && (strcmp(below2, "DECODE/STEADY") == 0 ||
                                            strcmp(below2, "GRAPH_CAPTURE") == 0))) {
                w->gather++;
                gather_step = step;
            } else {
                w->wrong++;
            }
        } else if (strstr(ln->f[2], "decode_kernel")) {
            if (sscanf(top, "DECODE/STEP_%d", &step) == 1 && step == gather_step &&
                step == next_step && depth == (step == 0 ? 1u : 2u)) {
                w->decode++;
                next_step++;
            } else {
                w->wrong++;
            }
        } else {
            w->wrong++;
        }
    }
    w->left_open = depth;
}

static void check_walk(const char *label, const struct walk *w, int graphs)
{
    size_t gathers = graphs ? 1 + (DECODE_STEPS - 1) + REPEATS : 1 + REPEATS * DECODE_STEPS;
    is_int(1 + REPEATS, (long long)w->prefill, "%s: every prefill launch inside PREFILL", label);
    is_int((long long)gathers, (long long)w->gather,
           "%s: every gather inside KV_GATHER inside DECODE/STEP_k, steps in order", label);
    is_int((long long)gathers, (long long)w->decode, "%s: every decode inside its DECODE/STEP_k",
           label);
    is_int(graphs ? REPEATS : 0, (long long)w->graph, "%s: graph launches inside DECODE/STEADY",
           label);
    is_int(0, (long long)w->wrong, "%s: no launch outside its range (of %zu)", label, w->launches);
    ok(w->pushes > 0 && w->pushes == w->pops && w->bad_range == 0 && w->left_open == 0,
       "%s: %zu pushes, %zu pops, depth column and domain right, none left open", label, w->pushes,
       w->pops);
}

static void test_obs_cuda(void)
{
    const struct workload_bin *b = &workload_bins[0];
    const char *why = NULL;
    const char *bin = workload_path(b, &why);
    const int planned = 6 + 6 + 3 + 7 + 3;
    if (bin == NULL) {
        skip_block(planned, "obs_cuda: %s", why);
        return;
    }
    const char *log_path = test_path(test_tmpdir(), "cuda.log");
    char inject_env[4200];
    snprintf(inject_env, sizeof inject_env, "NVTX_INJECTION64_PATH=%s", inject_path());
    const char *env[] = {sim_library_path_env(), inject_env, NULL};
    struct run_result res;
    struct log l;
    struct walk w;

    const char *argv[] = {bin, WORKLOAD_ARGS, NULL};
    run_logged(argv, env, log_path, &res);
    log_read(log_path, &l);
    walk_log(&l, "nvtxRangePushA", "nvtxRangePop", &w);
    check_walk("obs_cuda", &w, 0);
    run_result_free(&res);

    const char *argv_g[] = {bin, WORKLOAD_ARGS, "--graphs", NULL};
    log_free(&l);
    run_logged(argv_g, env, log_path, &res);
    log_read(log_path, &l);
    walk_log(&l, "nvtxRangePushA", "nvtxRangePop", &w);
    check_walk("obs_cuda --graphs", &w, 1);
    run_result_free(&res);

    is_int(1, (long long)count_api(&l, "InitializeInjectionNvtx2"),
           "obs_cuda: the injection was initialised once (the workload's NVTX3 copy)");
    int v3 = 0;
    for (size_t i = 0; i < l.n; i++)
        v3 += strcmp(l.lines[i].f[0], "InitializeInjectionNvtx2") == 0 &&
              strcmp(l.lines[i].f[4], "v3") == 0 && strcmp(l.lines[i].f[5], "1") == 0;
    is_int(1, v3, "obs_cuda: the workload's client says NVTX version 3");
    is_int(0, (long long)count_api(&l, "nvtxDomainCreateA"), "obs_cuda: no domain created");

    /* Under the shim (phase rules given): the shim's own client attaches to
     * the same tool, its ranges go to the obsshim domain, and the workload's
     * default-domain ranges are exactly as without it. */
    char preload[4200], output[4200];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s/shim/.libs/libobsshim.so", test_builddir());
    snprintf(output, sizeof output, "OBS_OUTPUT=%s/shim-%%p", test_tmpdir());
    const char *env_shim[] = {sim_library_path_env(), inject_env, preload, output, "OBS_SUMMARY=0",
                              "OBS_JSON=0",
                              "OBS_PHASES=PREFILL=prefill_*;KV_GATHER=kv_gather*;DECODE=decode_*",
                              "OBS_STEP=kv_gather*", NULL};
    log_free(&l);
    run_logged(argv, env_shim, log_path, &res);
    log_read(log_path, &l);
    walk_log(&l, "nvtxRangePushA", "nvtxRangePop", &w);
    check_walk("obs_cuda under the shim", &w, 0);
    size_t dom_push = 0, dom_pop = 0, dom_bad = 0;
    for (size_t i = 0; i < l.n; i++) {
        const struct log_line *ln = &l.lines[i];
        if (strcmp(ln->f[0], "nvtxDomainRangePushEx") == 0) {
            dom_push++;
            dom_bad += strcmp(ln->f[3], "obsshim") != 0 || strncmp(ln->f[4], "registered:0x", 13) != 0;
        } else if (strcmp(ln->f[0], "nvtxDomainRangePop") == 0) {
            dom_pop++;
            dom_bad += strcmp(ln->f[3], "obsshim") != 0 || atol(ln->f[5]) < 0;
        }
    }
    ok(count_api(&l, "InitializeInjectionNvtx2") == 2 && count_api(&l, "nvtxDomainCreateA") == 1 &&
           dom_push > 0 && dom_push == dom_pop && dom_bad == 0,
       "obs_cuda under the shim: two NVTX clients; the shim's %zu pushes and %zu pops in the "
       "obsshim domain, registered, balanced", dom_push, dom_pop);
    run_result_free(&res);

    const char *argv_n[] = {bin, WORKLOAD_ARGS, "--no-ranges", NULL};
    log_free(&l);
    run_logged(argv_n, env, log_path, &res);
    ok(res.exited && res.status == 0, "obs_cuda --no-ranges: exit 0");
    log_read(log_path, &l);
    is_int(0, (long long)count_kind(&l, "range"), "obs_cuda --no-ranges: no range line");
    is_int((1 + REPEATS) + 2 * (1 + REPEATS * DECODE_STEPS),
           (long long)count_kind(&l, "kernel"), "obs_cuda --no-ranges: the launches are still there");
    run_result_free(&res);
    log_free(&l);
}

static void test_obs_hip(void)
{
    const struct workload_bin *b = &workload_bins[2];
    const char *why = NULL;
    const char *bin = workload_path(b, &why);
    const int planned = 6 + 6 + 2 + 2;
    if (bin == NULL) {
        skip_block(planned, "obs_hip: %s", why);
        return;
    }
    const char *log_path = test_path(test_tmpdir(), "hip.log");
    char libpath[8500];
    snprintf(libpath, sizeof libpath, "%s:%s", sim_library_path_env(), tools_dir());
    const char *env[] = {libpath, NULL};
    struct run_result res;
    struct log l;
    struct walk w;

    const char *argv[] = {bin, WORKLOAD_ARGS, NULL};
    run_logged(argv, env, log_path, &res);
    log_read(log_path, &l);
    walk_log(&l, "roctxRangePushA", "roctxRangePop", &w);
    check_walk("obs_hip", &w, 0);
    run_result_free(&res);

    const char *argv_g[] = {bin, WORKLOAD_ARGS, "--graphs", NULL};
    log_free(&l);
    run_logged(argv_g, env, log_path, &res);
    log_read(log_path, &l);
    walk_log(&l, "roctxRangePushA", "roctxRangePop", &w);
    check_walk("obs_hip --graphs", &w, 1);
    is_int(0, (long long)count_api(&l, "nvtxRangePushA"), "obs_hip: no NVTX range");
    size_t ours = 0;
    for (size_t i = 0; i < l.n; i++)
        ours += strcmp(l.lines[i].f[3], "obsshim") == 0;
    is_int(0, (long long)ours, "obs_hip: the workload's roctx ranges are not obsshim's");
    run_result_free(&res);

    const char *argv_n[] = {bin, WORKLOAD_ARGS, "--no-ranges", NULL};
    log_free(&l);
    run_logged(argv_n, env, log_path, &res);
    ok(res.exited && res.status == 0, "obs_hip --no-ranges: exit 0");
    log_read(log_path, &l);
    is_int(0, (long long)count_kind(&l, "range"), "obs_hip --no-ranges: no range line");
    run_result_free(&res);
    log_free(&l);
}

/* ---- the shim's API: tests/apps/ranges_app --------------------------------- */

static const char *app_path(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/tests/apps/ranges_app", test_builddir());
    return path;
}

/* Our ranges as the log shows them, after the registrations. */
static const char *ours_nvtx(const char *push, const char *pop, const char *dom, int base)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "%s PREFILL %s registered:0xff76b900 %d\n"
             "%s - %s - %d\n"
             "%s DECODE/STEP_0 %s registered:0xff0071c5 %d\n"
             "%s KV_GATHER %s registered:0xffed1c24 %d\n"
             "%s - %s - %d\n"
             "%s - %s - %d\n",
             push, dom, base + 1, pop, dom, base, push, dom, base + 1, push, dom, base + 2, pop, dom,
             base + 1, pop, dom, base);
    return buf;
}

static const char *ours_roctx(void)
{
    return "roctxRangePushA PREFILL obsshim - 1\n"
           "roctxRangePop - obsshim - 0\n"
           "roctxRangePushA DECODE/STEP_0 obsshim - 1\n"
           "roctxRangePushA KV_GATHER obsshim - 2\n"
           "roctxRangePop - obsshim - 1\n"
           "roctxRangePop - obsshim - 0\n";
}

/* Runs ranges_app; returns the range lines (malloc'ed) and sets *app_nvtx. */
static char *run_app(const char *label, const char *domain, const char *const *env, int *app_nvtx,
                     struct run_result *res, const char *threads, const char *iterations)
{
    const char *log_path = test_path(test_tmpdir(), "app.log");
    const char *argv[] = {app_path(), domain, threads, iterations, NULL};
    run_logged(argv, env, log_path, res);
    ok(res->exited && res->status == 0, "ranges_app %s: exit 0", label);
    *app_nvtx = res->out && strstr(res->out, "app_nvtx=1") != NULL;
    struct log l;
    if (log_read(log_path, &l) != 0)
        return strdup("");
    char *lines = range_lines(&l);
    log_free(&l);
    return lines;
}

/* The app's first line up to " app_nvtx=". */
static const char *app_status(struct run_result *res)
{
    if (res->out == NULL)
        return "";
    char *cut = strstr(res->out, " app_nvtx=");
    if (cut)
        *cut = '\0';
    return res->out;
}

static void expect_lines(const char *label, const char *want, const char *got)
{
    if (!is_string(want, got, "%s: range lines", label))
        diag_text("got", got);
}

static void test_app(void)
{
    char inject_env[4200], libpath[4200];
    snprintf(inject_env, sizeof inject_env, "NVTX_INJECTION64_PATH=%s", inject_path());
    snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s", tools_dir());
    const char *nvtx_only[] = {inject_env, "LD_LIBRARY_PATH", NULL};
    struct run_result res;
    int app_nvtx = 0;
    char want[8192];

    /* Our domain, registered strings, colours, nesting; the app's own NVTX3
     * range in the default domain beside them when it has the headers. */
    char *got = run_app("obsshim", "obsshim", nvtx_only, &app_nvtx, &res, NULL, NULL);
    is_string("active=1 handles=1,2,3 same=1", app_status(&res),
              "ranges_app obsshim: active, handles 1..3, same name same handle");
    snprintf(want, sizeof want,
             "InitializeInjectionNvtx2 - - v3 1\n"
             "nvtxDomainCreateA obsshim - - 0\n"
             "%s"
             "nvtxDomainRegisterStringA PREFILL obsshim - 0\n"
             "nvtxDomainRegisterStringA DECODE/STEP_0 obsshim - 0\n"
             "nvtxDomainRegisterStringA KV_GATHER obsshim - 0\n"
             "%s%s",
             app_nvtx ? "InitializeInjectionNvtx2 - - v3 2\nnvtxRangePushA APP - - 1\n" : "",
             ours_nvtx("nvtxDomainRangePushEx", "nvtxDomainRangePop", "obsshim", 0),
             app_nvtx ? "nvtxRangePop - - - 0\n" : "");
    expect_lines("ranges_app obsshim", want, got);
    if (!app_nvtx)
        diag("ranges_app built without the nvtx3 headers: one NVTX client only");
    free(got);
    run_result_free(&res);

    /* The default domain: the app's APP range and ours share one stack, and
     * our extra pop does not close the app's range. */
    got = run_app("default domain", "", nvtx_only, &app_nvtx, &res, NULL, NULL);
    snprintf(want, sizeof want,
             "InitializeInjectionNvtx2 - - v3 1\n"
             "%s"
             "nvtxDomainRegisterStringA PREFILL - - 0\n"
             "nvtxDomainRegisterStringA DECODE/STEP_0 - - 0\n"
             "nvtxDomainRegisterStringA KV_GATHER - - 0\n"
             "%s%s",
             app_nvtx ? "InitializeInjectionNvtx2 - - v3 2\nnvtxRangePushA APP - - 1\n" : "",
             ours_nvtx("nvtxRangePushEx", "nvtxRangePop", "-", app_nvtx ? 1 : 0),
             app_nvtx ? "nvtxRangePop - - - 0\n" : "");
    expect_lines("ranges_app default domain", want, got);
    free(got);
    run_result_free(&res);

    /* Threads: each has its own stack. */
    got = run_app("4 threads", "obsshim", nvtx_only, &app_nvtx, &res, "4", "500");
    ok(count_exact(got, "nvtxDomainRangePushEx DECODE/STEP_0 obsshim registered:0xff0071c5 1") ==
               1 + 4 * 500 &&
           count_exact(got, "nvtxDomainRangePushEx KV_GATHER obsshim registered:0xffed1c24 2") ==
               1 + 4 * 500 &&
           count_exact(got, "nvtxDomainRangePop - obsshim - 1") == 1 + 4 * 500 &&
           count_exact(got, "nvtxDomainRangePop - obsshim - 0") == 2 + 4 * 500 &&
           count_lines_with(got, "nvtxDomainRangePushEx") == 3 + 4 * 1000 &&
           count_lines_with(got, "nvtxDomainRangePop") == 3 + 4 * 1000,
       "ranges_app 4 threads: 4 x 500 nested pushes and pops, each thread's depth its own");
    free(got);
    run_result_free(&res);

    /* roctx only: the stand-in found with dlopen, our calls said to be obsshim's. */
    const char *roctx_only[] = {libpath, "NVTX_INJECTION64_PATH", NULL};
    got = run_app("roctx", "obsshim", roctx_only, &app_nvtx, &res, NULL, NULL);
    is_string("active=1 handles=1,2,3 same=1", app_status(&res),
              "ranges_app roctx: active through roctx alone");
    expect_lines("ranges_app roctx", ours_roctx(), got);
    free(got);
    run_result_free(&res);

    /* Both sinks: each range goes to both. */
    const char *both[] = {libpath, inject_env, NULL};
    got = run_app("NVTX and roctx", "obsshim", both, &app_nvtx, &res, NULL, NULL);
    snprintf(want, sizeof want,
             "InitializeInjectionNvtx2 - - v3 1\n"
             "nvtxDomainCreateA obsshim - - 0\n"
             "%s"
             "nvtxDomainRegisterStringA PREFILL obsshim - 0\n"
             "nvtxDomainRegisterStringA DECODE/STEP_0 obsshim - 0\n"
             "nvtxDomainRegisterStringA KV_GATHER obsshim - 0\n"
             "nvtxDomainRangePushEx PREFILL obsshim registered:0xff76b900 1\n"
             "roctxRangePushA PREFILL obsshim - 1\n"
             "roctxRangePop - obsshim - 0\n"
             "nvtxDomainRangePop - obsshim - 0\n"
             "nvtxDomainRangePushEx DECODE/STEP_0 obsshim registered:0xff0071c5 1\n"
             "roctxRangePushA DECODE/STEP_0 obsshim - 1\n"
             "nvtxDomainRangePushEx KV_GATHER obsshim registered:0xffed1c24 2\n"
             "roctxRangePushA KV_GATHER obsshim - 2\n"
             "roctxRangePop - obsshim - 1\n"
             "nvtxDomainRangePop - obsshim - 1\n"
             "roctxRangePop - obsshim - 0\n"
             "nvtxDomainRangePop - obsshim - 0\n"
             "%s",
             app_nvtx ? "InitializeInjectionNvtx2 - - v3 2\nnvtxRangePushA APP - - 1\n" : "",
             app_nvtx ? "nvtxRangePop - - - 0\n" : "");
    expect_lines("ranges_app NVTX and roctx", want, got);
    free(got);
    run_result_free(&res);

    /* No tool at all: inactive, handles 0, push/pop harmless, nothing logged. */
    const char *none[] = {"NVTX_INJECTION64_PATH", "LD_LIBRARY_PATH", NULL};
    const char *log_path = test_path(test_tmpdir(), "app.log");
    got = run_app("no tool", "obsshim", none, &app_nvtx, &res, "2", "10");
    is_string("active=0 handles=0,0,0 same=1", app_status(&res),
              "ranges_app no tool: inactive, every handle 0");
    ok(!file_exists(log_path) || strcmp(got, "") == 0, "ranges_app no tool: no range line");
    is_string("", res.err ? res.err : "", "ranges_app no tool: nothing on stderr");
    free(got);
    run_result_free(&res);

    /* A tool that cannot be loaded: one warning, inactive, the app unharmed. */
    const char *missing[] = {"NVTX_INJECTION64_PATH=/nonexistent/libnothere.so", "LD_LIBRARY_PATH",
                             NULL};
    got = run_app("missing tool", "obsshim", missing, &app_nvtx, &res, NULL, NULL);
    ok(res.out && strstr(res.out, "active=0 handles=0,0,0") != NULL &&
           count_lines_with(res.err, "obsshim: warning: cannot load the NVTX tool") == 1,
       "ranges_app missing tool: inactive, one warning");
    free(got);
    run_result_free(&res);
}

int main(void)
{
    plan(1 + 25 + 16 + 18);
    check_nvtx_abi();
    test_obs_cuda();
    test_obs_hip();
    test_app();
    return 0;
}
