/* The text summary: header line, the nsys-style kernel table (GPU time and
 * host time), copies by direction, memsets, API counts, records lost, the
 * shim's own cost; the duration statistics behind the tables; and the brief
 * summary (the shim's default at exit): its folded rows, its generations
 * block, and its length on a trace made to fill every section. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/api_list.h"
#include "trace/trace_phases.h"
#include "trace/trace_reader.h"
#include "trace/trace_summary.h"
#include "trace/trace_writer.h"

static char *summary_as(const char *obs, const char *txt, int brief)
{
    struct obs_summary_options opt = {0, brief};
    struct obs_trace *t;
    char err[256], *text;
    FILE *f;
    if (obs_trace_open(obs, &t, err, sizeof err) != 0)
        bail("%s: %s", obs, err);
    f = fopen(txt, "w");
    if (f == NULL || obs_report_summary(t, f, &opt) != 0 || fclose(f) != 0)
        bail("cannot write %s", txt);
    obs_trace_free(t);
    text = test_read_file(txt, NULL);
    if (text == NULL)
        bail("cannot read %s", txt);
    return text;
}

static char *summary_of(const char *obs, const char *txt)
{
    return summary_as(obs, txt, 0);
}

/* The line that holds needle (static copy), or "". */
static const char *line_with(const char *text, const char *needle)
{
    static char buf[1024];
    const char *hit = strstr(text, needle), *b, *e;
    buf[0] = '\0';
    if (hit == NULL)
        return buf;
    for (b = hit; b > text && b[-1] != '\n'; b--)
        ;
    e = strchr(hit, '\n');
    snprintf(buf, sizeof buf, "%.*s", (int)(e ? e - b : (long)strlen(b)), b);
    return buf;
}

/* The row of a table whose last column (the name) is name: its cells
 * squeezed to single spaces. */
static const char *row(const char *text, const char *name)
{
    static char buf[1024];
    const char *p = text;
    size_t n = strlen(name);
    buf[0] = '\0';
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > n && strncmp(p + len - n, name, n) == 0 && p[len - n - 1] == ' ') {
            size_t i, k = 0;
            int space = 1;
            for (i = 0; i < len && k + 1 < sizeof buf; i++) {
                if (p[i] == ' ') {
                    if (!space)
                        buf[k++] = ' ';
                    space = 1;
                } else {
                    buf[k++] = p[i];
                    space = 0;
                }
            }
            while (k > 0 && buf[k - 1] == ' ')
                k--;
            buf[k] = '\0';
            return buf;
        }
        p = nl ? nl + 1 : NULL;
    }
    return buf;
}

/* The position of needle in text, or a large value. */
static size_t where(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p ? (size_t)(p - text) : (size_t)-1;
}

static void test_gpu_summary(const char *dir)
{
    const char *obs = test_path(dir, "fixture.obs");
    char header[512], *text;

    if (fixture_write(obs, 0) != 0)
        bail("cannot write the fixture");
    text = summary_of(obs, test_path(dir, "summary.txt"));
    snprintf(header, sizeof header, "obsshim: %s: pid 4242, duration 5000.210 ms, 16 records, 10 records lost", obs);
    is_string(header, line_with(text, "obsshim: "), "header line: file, pid, duration, records, lost");
    is_string("records lost: 7 buffer full, 3 write failed", line_with(text, "records lost:"), "lost by reason");
    is_string("command: " FIX_CMDLINE, line_with(text, "command:"), "the command line from meta");
    ok(strstr(text, "warning: 2 GPU time records name calls missing") != NULL, "orphan GPU spans reported");

    is_string("Kernels (GPU time)", line_with(text, "Kernels ("), "kernel table title says GPU time");
    is_string(" Time (%)  Total Time (ns)  Instances  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name",
              line_with(text, " Time (%)"), "nsys cuda_gpu_kern_sum columns");
    is_string("94.5 69536 2 34768.0 34768.0 2000 67536 46341.0 prefill_kernel(float const*, float*, int)",
              row(text, "prefill_kernel(float const*, float*, int)"), "prefill row: two launches on GPU time");
    is_string("2.8 2064 1 2064.0 2064.0 2064 2064 0.0 decode_kernel()", row(text, "decode_kernel()"),
              "decode row");
    is_string("2.7 2000 1 2000.0 2000.0 2000 2000 0.0 triton_gemm_0", row(text, "triton_gemm_0"),
              "a name with no demangled form: the mangled one");
    ok(where(text, "prefill_kernel(") < where(text, "decode_kernel()") &&
           where(text, "decode_kernel()") < where(text, "triton_gemm_0"),
       "sorted by total time");
    ok(strstr(text, "(launches without GPU time, not counted: 1)") != NULL, "the launch without GPU time is said");

    is_string("Copies by direction (GPU time)", line_with(text, "Copies by direction"), "copy table title");
    is_string("1 1048576 42943 42943.0 24.42 HtoD", row(text, "HtoD"), "HtoD: count, bytes, time, avg, GB/s");
    is_string("1 8192 1327 1327.0 6.17 DtoH", row(text, "DtoH"), "DtoH");
    ok(strstr(text, "(copies without GPU time, not counted: 3)") != NULL, "copies without GPU time said");
    is_string("1 4096 1004 1004.0 4.08 memset", row(text, "memset"), "memsets");

    is_string("API calls (host time)", line_with(text, "API calls"), "API table title");
    is_string("2 250 125.0 kernel cudaLaunchKernel", row(text, "cudaLaunchKernel"), "API row: calls, time, kind");
    is_string("1 5000000000 5000000000.0 sync cudaDeviceSynchronize", row(text, "cudaDeviceSynchronize"),
              "a 5 s call");
    is_string("1 400 400.0 graph cudaGraphLaunch", row(text, "cudaGraphLaunch"), "graph launch");
    is_int(12, (long long)count_lines_with(text, " cuda"), "12 APIs named cuda*...");
    is_string("1 200 200.0 kernel __cudaLaunchKernel", row(text, "__cudaLaunchKernel"), "... and __cudaLaunchKernel");

    is_string("Shim cost: 28.3 ns per recorded call (12 calls on 2 threads)", line_with(text, "Shim cost"),
              "the shim's cost per call");
    free(text);
}

static void test_host_summary(const char *dir)
{
    const char *obs = test_path(dir, "fixture-nogpu.obs");
    char *text;

    if (fixture_write(obs, FIX_NO_GPU) != 0)
        bail("cannot write the fixture");
    text = summary_of(obs, test_path(dir, "summary-nogpu.txt"));
    ok(strstr(line_with(text, "Kernels ("), "host API time") != NULL, "without GPU time: host API time, said");
    is_string("47.5 380 2 190.0 190.0 180 200 14.1 prefill_kernel(float const*, float*, int)",
              row(text, "prefill_kernel(float const*, float*, int)"), "prefill row on host time");
    is_string("12.5 100 1 100.0 100.0 100 100 0.0 (unnamed kernel, id 7)", row(text, "(unnamed kernel, id 7)"),
              "a launch whose name is not in the trace");
    ok(strstr(text, "not counted") == NULL, "nothing left out on host time");
    is_string("2 1048832 2300 1150.0 456.01 HtoD", row(text, "HtoD"), "HtoD on host time (two copies)");
    is_string("1 16 100 100.0 0.16 HtoH", row(text, "HtoH"), "HtoH");
    is_string("1 65536 250 250.0 262.14 DtoD", row(text, "DtoD"), "DtoD");
    free(text);
}

/* A trace with one call, nothing lost and no self-cost records. */
static void test_minimal(const char *dir)
{
    const char *obs = test_path(dir, "min.obs");
    struct obs_file_header h;
    union obs_record r;
    char *text;
    int fd = open(obs, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    memset(&r, 0, sizeof r);
    r.call.type = OBS_REC_CALL;
    r.call.api = OBS_API_hipMalloc;
    r.call.t_begin = 1000;
    r.call.t_dur = 2000000;
    r.call.u.bytes = 4096;
    obs_trace_init_header(&h, 77, 0, 0, 0);
    if (fd < 0 || obs_trace_write_header(fd, &h) != 0 || obs_trace_write_records(fd, 77, 0, &r, 1) != 0)
        bail("cannot write %s", obs);
    close(fd);
    text = summary_of(obs, test_path(dir, "min.txt"));
    ok(strstr(line_with(text, "obsshim: "), "pid 77, duration 2.000 ms, 1 records, 0 records lost") != NULL,
       "records lost printed even when 0");
    is_string("Shim cost: not measured", line_with(text, "Shim cost"), "no self-cost records: not measured");
    ok(strstr(text, "no kernel launches recorded") != NULL && strstr(text, "no copies recorded") != NULL &&
           strstr(text, "no memsets recorded") != NULL,
       "empty tables say so");
    is_string("1 2000000 2000000.0 alloc hipMalloc", row(text, "hipMalloc"), "the call is counted");
    free(text);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_stats(void)
{
    uint64_t v[] = {5, 1, 4, 2, 3}, w[] = {10, 40, 20, 30}, one[] = {7};
    struct obs_duration_stats s;
    uint64_t *big, *sorted;
    size_t i, n = 100001;
    int bad = 0;

    obs_duration_stats(v, 5, &s);
    ok(s.count == 5 && s.total == 15 && s.min == 1 && s.max == 5, "count, total, min, max");
    is_double(3.0, s.median, 1e-12, "odd count: the middle value");
    is_double(1.5811388300841898, s.stddev, 1e-9, "sample standard deviation");
    obs_duration_stats(w, 4, &s);
    is_double(25.0, s.median, 1e-12, "even count: mean of the two middle values");
    obs_duration_stats(one, 1, &s);
    ok(s.median == 7.0 && s.stddev == 0.0, "one value: median itself, stddev 0");
    obs_duration_stats(NULL, 0, &s);
    ok(s.count == 0 && s.total == 0, "no values");

    /* medians of random arrays with many repeats, against a sort */
    big = malloc(n * sizeof *big);
    sorted = malloc(n * sizeof *sorted);
    srand(42);
    for (i = 0; i < 20 && !bad; i++) {
        size_t k, m = n - i; /* odd and even sizes */
        for (k = 0; k < m; k++)
            big[k] = (uint64_t)(rand() % (i % 2 ? 50 : 1000000));
        memcpy(sorted, big, m * sizeof *big);
        qsort(sorted, m, sizeof *sorted, cmp_u64);
        obs_duration_stats(big, m, &s);
        if (s.median != (m % 2 ? (double)sorted[m / 2] : ((double)sorted[m / 2 - 1] + (double)sorted[m / 2]) / 2))
            bad++;
    }
    is_int(0, bad, "median of 20 random arrays (with and without many repeats) matches a sort");
    free(big);
    free(sorted);
}

/* The brief summary of the fixture: nothing to fold (3 kernels, 12 APIs
 * fold into 5 + 1), copies and memsets in one table, the shim's cost at the
 * top, none of the full summary's own tables. */
static void test_brief_fixture(const char *dir)
{
    const char *obs = test_path(dir, "fixture.obs");
    char *text, *full;

    if (fixture_write(obs, 0) != 0)
        bail("cannot write the fixture");
    text = summary_as(obs, test_path(dir, "brief.txt"), 1);
    full = summary_of(obs, test_path(dir, "full.txt"));
    is_string(line_with(full, "obsshim: "), line_with(text, "obsshim: "), "brief: the same header line");
    is_string("records lost: 7 buffer full, 3 write failed", line_with(text, "records lost:"), "brief: lost by reason");
    ok(where(text, "Shim cost: 28.3 ns per recorded call") < where(text, "Kernels ("),
       "brief: the shim's cost comes before the tables");
    is_string("Kernels (GPU time; launches without GPU time, not counted: 1)", line_with(text, "Kernels ("),
              "brief: kernels' title, what was not counted in it");
    is_string(row(full, "prefill_kernel(float const*, float*, int)"), row(text, "prefill_kernel(float const*, float*, int)"),
              "brief: a kernel row as in the full summary");
    is_string("Copies by direction and memsets (GPU time; without GPU time, not counted: 3 copies, 0 memsets)",
              line_with(text, "Copies by direction"), "brief: copies and memsets in one table");
    ok(strcmp(row(text, "HtoD"), row(full, "HtoD")) == 0 && strcmp(row(text, "memset"), row(full, "memset")) == 0,
       "brief: HtoD and memset rows as in the full summary");
    is_string("API calls (host time; the 5 of 13 most called, the rest in one row)", line_with(text, "API calls"),
              "brief: the API table says what it folds");
    /* the full table's last 8 rows: 400 + 400 + 170 + 180 + 500 + 2000 + 100 + 90000 ns */
    is_string("8 93750 11718.8 - (8 other APIs)", row(text, "(8 other APIs)"), "brief: the folded APIs' calls and time");
    ok(strstr(text, "Memsets (") == NULL && strstr(text, "Phases by generation") == NULL &&
           strstr(text, "Kernel nodes") == NULL,
       "brief: no memset table, no per-generation phases, no graph table");
    free(text);
    free(full);
}

/* A trace that fills every section of the brief summary: 30 kernels over 40
 * generations of 13 phases, copies in every direction (and one this reader
 * does not know), memsets, every API that is not a launch, a graph launch,
 * lost records, an orphan GPU span and bytes at the end that are ignored. */
#define CROWD_KERNELS 30u
#define CROWD_GENS 40u
#define CROWD_PHASES 13u /* PREFILL, DECODE, PH_0 .. PH_10 */

struct recs {
    union obs_record *r;
    size_t n, cap;
    uint64_t t;
};

static union obs_record *rec_add(struct recs *v, uint8_t type)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 1024;
        v->r = realloc(v->r, v->cap * sizeof *v->r);
        if (v->r == NULL)
            bail("out of memory");
    }
    memset(&v->r[v->n], 0, sizeof v->r[v->n]);
    v->r[v->n].type = type;
    return &v->r[v->n++];
}

static void add_call(struct recs *v, unsigned api, uint32_t name, uint32_t dur, uint64_t bytes, unsigned dir)
{
    union obs_record *r = rec_add(v, OBS_REC_CALL);
    r->call.api = (uint16_t)api;
    r->call.t_begin = v->t;
    r->call.t_dur = dur;
    r->call.name = name;
    r->call.flags = (uint8_t)(dir & OBS_CALL_DIR_MASK);
    r->call.u.bytes = bytes;
    v->t += dur + 100;
}

static void add_phase(struct recs *v, unsigned event, uint16_t phase, uint32_t name, uint32_t step, uint32_t gen)
{
    union obs_record *r = rec_add(v, OBS_REC_PHASE);
    r->phase.event = (uint8_t)event;
    r->phase.phase = phase;
    r->phase.name = name;
    r->phase.step = step;
    r->phase.generation = gen;
    r->phase.t = v->t++;
}

/* Kernel k lasts longer the larger k is: the top ten are 29 .. 20. */
static uint32_t crowd_dur(unsigned k)
{
    return 1000u + 10u * k;
}

static void write_crowded(const char *path)
{
    struct recs v = {NULL, 0, 0, 1000};
    struct obs_file_header h;
    static const char meta[] = "cmdline=crowded --all\n";
    char name[64];
    unsigned g, k, p, api, d;
    int fd, rc = 0;

    for (g = 0; g < CROWD_GENS; g++) {
        /* PREFILL (phase 200): kernels 0-4; DECODE/STEP_0 and _1 (phase
         * 201): 5-9 and 10-14; PH_p (phases 202..): one kernel each. */
        add_phase(&v, OBS_PHASE_BEGIN, 200, 200, OBS_NO_STEP, g);
        for (k = 0; k < 5; k++)
            add_call(&v, OBS_API_cudaLaunchKernel, k + 1, crowd_dur(k), 0, 0);
        add_phase(&v, OBS_PHASE_END, 200, 200, OBS_NO_STEP, g);
        for (p = 0; p < 2; p++) {
            add_phase(&v, OBS_PHASE_BEGIN, 201, 210 + p, p, g);
            for (k = 5 + 5 * p; k < 10 + 5 * p; k++)
                add_call(&v, OBS_API_cudaLaunchKernel, k + 1, crowd_dur(k), 0, 0);
            add_call(&v, OBS_API_cudaStreamSynchronize, 0, 50 + 10 * g, 0, 0); /* the host waits for the token */
            add_phase(&v, OBS_PHASE_END, 201, 210 + p, p, g);
        }
        for (p = 0; p < CROWD_PHASES - 2; p++) {
            add_phase(&v, OBS_PHASE_BEGIN, (uint16_t)(202 + p), 202 + p, OBS_NO_STEP, g);
            k = 15 + p;
            add_call(&v, OBS_API_cudaLaunchKernel, k + 1, crowd_dur(k), 0, 0);
            if (p < 4) /* kernels 26-29 too */
                add_call(&v, OBS_API_cudaLaunchKernel, k + 12, crowd_dur(k + 11), 0, 0);
            add_phase(&v, OBS_PHASE_END, (uint16_t)(202 + p), 202 + p, OBS_NO_STEP, g);
        }
        v.t += 2000000;
    }
    for (d = 0; d < OBS_DIR_COUNT + 1; d++)
        add_call(&v, OBS_API_cudaMemcpy, 0, 500, 4096, d);
    add_call(&v, OBS_API_cudaMemset, 0, 300, 1024, 0);
    for (api = 1; api < OBS_API_COUNT; api++) {
        unsigned kind = obs_api_kind(api);
        if (kind != OBS_KIND_KERNEL && kind != OBS_KIND_MEMCPY && kind != OBS_KIND_MEMSET && kind != OBS_KIND_GRAPH)
            add_call(&v, api, 0, 100, 0, 0);
    }
    add_call(&v, OBS_API_cudaGraphLaunch, 0, 700, 3, 0);
    {
        union obs_record *r = rec_add(&v, OBS_REC_LOST);
        r->lost.reason = OBS_LOST_BUFFER_FULL;
        r->lost.tid = 1;
        r->lost.count = 5;
        r = rec_add(&v, OBS_REC_GPU_SPAN); /* names no call: a warning line */
        r->gpu_span.tid = 99;
        r->gpu_span.gpu_begin = 1;
        r->gpu_span.gpu_end = 2;
        r = rec_add(&v, OBS_REC_SELF_COST);
        r->self_cost.tid = 1;
        r->self_cost.calls = v.n;
        r->self_cost.shim_ns = 30 * v.n + 3000000;
        r->self_cost.once_ns = 3000000; /* 3 ms of one-time work, apart from the 30 ns a call */
    }

    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bail("cannot create %s", path);
    obs_trace_init_header(&h, 99, OBS_FILE_GPU_TIME, 0, 0);
    rc |= obs_trace_write_header(fd, &h);
    rc |= obs_trace_write_meta(fd, meta, sizeof meta - 1);
    for (k = 0; k < CROWD_KERNELS; k++) {
        snprintf(name, sizeof name, "kernel_%02u(int)", k);
        rc |= obs_trace_write_string(fd, k + 1, OBS_STR_KERNEL_DEMANGLED, name, (uint32_t)strlen(name));
    }
    rc |= obs_trace_write_string(fd, 200, OBS_STR_RANGE_NAME, "PREFILL", 7);
    rc |= obs_trace_write_string(fd, 201, OBS_STR_RANGE_NAME, "DECODE", 6);
    rc |= obs_trace_write_string(fd, 210, OBS_STR_RANGE_NAME, "DECODE/STEP_0", 13);
    rc |= obs_trace_write_string(fd, 211, OBS_STR_RANGE_NAME, "DECODE/STEP_1", 13);
    for (p = 0; p < CROWD_PHASES - 2; p++) {
        snprintf(name, sizeof name, "PH_%u", p);
        rc |= obs_trace_write_string(fd, 202 + p, OBS_STR_RANGE_NAME, name, (uint32_t)strlen(name));
    }
    rc |= obs_trace_write_records(fd, 1, 0, v.r, (uint32_t)v.n);
    if (rc != 0 || write(fd, "half a chunk", 12) != 12 || close(fd) != 0)
        bail("cannot write %s", path);
    free(v.r);
}

static void test_brief_crowded(const char *dir)
{
    const char *obs = test_path(dir, "crowded.obs");
    char *text, *full, want[256];
    size_t lines, full_lines;

    write_crowded(obs);
    text = summary_as(obs, test_path(dir, "crowded-brief.txt"), 1);
    full = summary_of(obs, test_path(dir, "crowded-full.txt"));
    lines = count_lines_with(text, "");
    full_lines = count_lines_with(full, "");
    diag("crowded trace: brief summary %zu lines, full %zu", lines, full_lines);
    ok(lines + 1 <= OBS_SUMMARY_BRIEF_MAX_LINES,
       "brief: %zu lines, with the shim's \"wrote\" line at most %d", lines, OBS_SUMMARY_BRIEF_MAX_LINES);
    ok(full_lines > 2 * lines, "full: many more lines (%zu)", full_lines);
    ok(strstr(text, "records lost: 5 buffer full") != NULL && strstr(text, "bytes at offset") != NULL &&
           strstr(text, "warning: 1 GPU time records name calls missing") != NULL &&
           strstr(text, "Shim cost: 30.0 ns per recorded call") != NULL,
       "brief: records lost, the reader's warnings and the shim's cost");
    ok(strstr(text, " on 1 thread), and 3.0 ms once (set-up, first uses)\n") != NULL,
       "brief: the shim's cost with its one-time work apart");
    is_string("Kernels (host API time: the trace has no GPU time for kernels; the 10 of 30 names with the most "
              "time, the rest in one row)",
              line_with(text, "Kernels ("), "brief: the kernel table says what it folds");
    ok(where(text, "kernel_29(int)") < where(text, "kernel_20(int)") && strstr(text, "kernel_19(int)") == NULL &&
           strstr(full, "kernel_00(int)") != NULL,
       "brief: the ten kernels with the most time, in order; full: all");
    /* kernels 0..19: 40 launches each, 1000 + 10 k ns */
    snprintf(want, sizeof want, "%.1f %u %u %.1f - %u %u - (20 other kernels)", 0.0, 40u * (20u * 1000u + 1900u),
             40u * 20u, (20.0 * 1000 + 1900) / 20, 1000u, 1190u);
    {
        const char *got = row(text, "(20 other kernels)");
        ok(strstr(got, want + 4) != NULL, "brief: the other 20 kernels in one row: %s", got);
    }
    is_string("Copies by direction and memsets (host API time)", line_with(text, "Copies by direction"),
              "brief: copies and memsets");
    is_string("2 8192 1000 500.0 8.19 unknown", row(text, "unknown"),
              "brief: no direction and a direction this reader does not know, in one row");
    ok(*row(text, "peer") && *row(text, "default") && *row(text, "HtoH") && *row(text, "memset"),
       "brief: every direction and the memsets");
    ok(strstr(text, "API calls (host time; the 5 of ") != NULL && strstr(text, " other APIs)") != NULL,
       "brief: the API table folded");
    is_string("Graph launches (host API time): 1 launch of 1 exec, 700 ns, avg 700.0 ns (per exec: obs-report summary)",
              line_with(text, "Graph launches"), "brief: graph launches in one line");
    is_string("Phases over all generations (host API time; the 5 of 13 with the most time, the rest in one row; calls "
              "outside any phase: 39)",
              line_with(text, "Phases over all generations"), "brief: the phase table says what it folds");
    ok(*row(text, "PREFILL") && *row(text, "DECODE") && *row(text, "(8 other phases)"),
       "brief: PREFILL, DECODE and 8 other phases in one row");
    snprintf(want, sizeof want, "Generations (host wall-clock between host syncs): %u; best / median / p90 over all "
                                "(per generation: obs-report phases)", CROWD_GENS);
    is_string(want, line_with(text, "Generations ("), "brief: one generations block, its count");
    /* generation g waits 50 + 10 g ns per step: the first is the best, the median and p90 later ones */
    ok(strstr(line_with(text, " TTFT (ms): "), "best ") != NULL && strstr(line_with(text, " TTFT (ms): "), "(generation 0)") &&
           strstr(line_with(text, " tokens/s: "), "(generation 0)") != NULL,
       "brief: TTFT and tokens/s lines, generation 0 the best: %s", line_with(text, " tokens/s: "));
    ok(strstr(text, "Phases by generation") == NULL && count_lines_with(full, "PH_3") > CROWD_GENS,
       "brief: no row per generation; full: one per generation and phase");
    free(text);
    free(full);
}

/* Best, median and p90 over the generations counted for the bests. */
static void test_spread(void)
{
    struct obs_generation_row gens[12];
    struct obs_phase_stats s;
    struct obs_generation_spread sp;
    static const double ttft[10] = {5, 1, 4, 2, 3, 9, 7, 8, 6, 10};
    size_t i;

    memset(gens, 0, sizeof gens);
    memset(&s, 0, sizeof s);
    for (i = 0; i < 10; i++) {
        gens[i].in_best = gens[i].ttft_defined = gens[i].tokens_defined = 1;
        gens[i].ttft_ms = ttft[i];
        gens[i].tokens_per_s = 10.0 * (double)(i + 1); /* 10 .. 100 */
    }
    gens[10].ttft_defined = 1; /* not in_best: left out */
    gens[10].ttft_ms = 0.5;
    gens[11].in_best = gens[11].ttft_defined = 1; /* no tokens/s */
    gens[11].ttft_ms = 11;
    s.gens = gens;
    s.ngens = 12;
    if (obs_generation_spread_compute(&s, &sp) != 0)
        bail("obs_generation_spread_compute failed");
    ok(sp.ttft_n == 11 && sp.tokens_n == 10, "spread: 11 TTFTs and 10 tokens/s counted (in_best, defined)");
    ok(sp.ttft_best_ms == 1 && sp.ttft_median_ms == 6 && sp.ttft_p90_ms == 10,
       "spread: TTFT best 1, median 6 (odd count), p90 10 (nearest rank 10 of 11): %g %g %g", sp.ttft_best_ms,
       sp.ttft_median_ms, sp.ttft_p90_ms);
    ok(sp.tokens_best == 100 && sp.tokens_median == 55 && sp.tokens_p90 == 20,
       "spread: tokens/s best 100, median 55 (even count), p90 20 (9 in 10 do as well): %g %g %g", sp.tokens_best,
       sp.tokens_median, sp.tokens_p90);
    s.ngens = 0;
    ok(obs_generation_spread_compute(&s, &sp) == 0 && sp.ttft_n == 0 && sp.tokens_n == 0, "spread: no generations");
}

int main(void)
{
    const char *dir;
    plan(41 + 10 + 17 + 4);
    dir = test_tmpdir();
    test_gpu_summary(dir);
    test_host_summary(dir);
    test_minimal(dir);
    test_stats();
    test_brief_fixture(dir);
    test_brief_crowded(dir);
    test_spread();
    return 0;
}
