/* The text summary: header line, the nsys-style kernel table (GPU time and
 * host time), copies by direction, memsets, API counts, records lost, the
 * shim's own cost; and the duration statistics behind the tables. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_reader.h"
#include "trace/trace_summary.h"
#include "trace/trace_writer.h"

static char *summary_of(const char *obs, const char *txt)
{
    struct obs_trace *t;
    char err[256], *text;
    FILE *f;
    if (obs_trace_open(obs, &t, err, sizeof err) != 0)
        bail("%s: %s", obs, err);
    f = fopen(txt, "w");
    if (f == NULL || obs_report_summary(t, f, NULL) != 0 || fclose(f) != 0)
        bail("cannot write %s", txt);
    obs_trace_free(t);
    text = test_read_file(txt, NULL);
    if (text == NULL)
        bail("cannot read %s", txt);
    return text;
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

int main(void)
{
    const char *dir;
    plan(41);
    dir = test_tmpdir();
    test_gpu_summary(dir);
    test_host_summary(dir);
    test_minimal(dir);
    test_stats();
    return 0;
}
