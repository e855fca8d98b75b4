/* Chrome trace JSON: parsed by Python's json module (tests/trace_json_check.py)
 * and checked for the structure Perfetto needs (metadata events, X slices
 * with numeric ts/dur that nest per track, s/f flow pairs with matching ids
 * inside their slices, the lost-records counter), with the fixture's values;
 * odd names stay valid JSON; the shim's exit-time postprocessing. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apps/trace_fixture.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "trace/trace_json.h"
#include "trace/trace_postprocess.h"
#include "trace/trace_reader.h"
#include "trace/trace_writer.h"

static const char *python;

/* Run the checker on path; *out gets its stdout (key=value lines). */
static int run_checker(const char *path, char **out)
{
    char script[4096];
    const char *argv[] = {python, script, path, NULL};
    struct run_result r;
    int status;
    snprintf(script, sizeof script, "%s/tests/trace_json_check.py", test_srcdir());
    if (run_program(argv, NULL, 120, &r) != 0)
        bail("cannot run %s", python);
    if (r.err_len)
        diag_text("checker", r.err);
    status = r.exited ? r.status : 128 + r.signal;
    *out = r.out;
    free(r.err);
    return status;
}

static void write_json(const char *obs, const char *json)
{
    struct obs_trace *t;
    char err[256];
    FILE *f;
    if (obs_trace_open(obs, &t, err, sizeof err) != 0)
        bail("%s: %s", obs, err);
    f = fopen(json, "w");
    if (f == NULL || obs_report_json(t, f, NULL) != 0 || fclose(f) != 0)
        bail("cannot write %s", json);
    obs_trace_free(t);
}

static void test_fixture(const char *dir)
{
    const char *obs = test_path(dir, "fixture.obs"), *json = test_path(dir, "fixture.json");
    char *out, *text;
    int rc;

    if (fixture_write(obs, 0) != 0)
        bail("cannot write the fixture");
    write_json(obs, json);
    rc = run_checker(json, &out);
    is_int(0, rc, "the fixture's JSON parses and has the right structure");
    is_string("16", test_key_value(out, "host_slices"), "one host slice per call");
    is_string("8", test_key_value(out, "gpu_slices"), "one device slice per call with GPU time");
    is_string("8", test_key_value(out, "flows"), "a flow from each launch to its device slice");
    is_string("4", test_key_value(out, "gpu_tracks"), "one track per GPU stream");
    is_string("6", test_key_value(out, "phase_slices"), "phase slices: 2 per thread with phases");
    is_string("3", test_key_value(out, "counters"), "lost-records counter points (0, 7, 10)");
    is_string("10", test_key_value(out, "counter_max"), "the counter reaches the records lost");
    is_string("obsshim pid 4242: " FIX_EXE, test_key_value(out, "process_name"), "process name from meta");
    is_string(FIX_THREAD101_NAME, test_key_value(out, "thread.101"), "thread name (escaped quotes)");
    is_string("thread 102", test_key_value(out, "thread.102"), "unnamed thread");
    is_string("GPU stream 3", test_key_value(out, "thread.1000000003"), "GPU stream track name");
    /* ts relative to the earliest timestamp (T0 + 1000), in ns after parsing */
    is_string("2000,200,100,prefill_kernel(float const*, float*, int)", test_key_value(out, "seq.2"),
              "a launch slice: ts, dur, thread and kernel name");
    is_string("209000,5000000000,102,cudaDeviceSynchronize", test_key_value(out, "seq.14"), "a 5 s call");
    is_string("9500,1500,1000000003", test_key_value(out, "gpu.8"),
              "overlapping device slices on one stream: the later one is clamped");
    is_string("16", test_key_value(out, "other.records"), "otherData records");
    free(out);
    text = test_read_file(json, NULL);
    ok(text && strstr(text, "\"ts\":2.000,\"dur\":0.200") != NULL, "ts/dur in microseconds with 3 decimals");
    ok(text && strstr(text, "\"displayTimeUnit\":\"ns\"") != NULL, "displayTimeUnit ns");
    free(text);

    if (fixture_write(obs, FIX_NO_GPU) != 0)
        bail("cannot write the fixture");
    write_json(obs, json);
    rc = run_checker(json, &out);
    is_int(0, rc, "without GPU time: valid");
    ok(strcmp(test_key_value(out, "gpu_slices"), "0") == 0 && strcmp(test_key_value(out, "flows"), "0") == 0 &&
           strcmp(test_key_value(out, "host_slices"), "16") == 0,
       "without GPU time: host slices only");
    free(out);
}

/* The checker must be able to fail. */
static void test_checker_fails(const char *dir)
{
    const char *json = test_path(dir, "bad.json");
    static const char overlap[] =
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"t\"}},"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":2.000},"
        "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":1.000,\"dur\":2.000}],"
        "\"displayTimeUnit\":\"ns\",\"otherData\":{}}";
    static const char lone_flow[] =
        "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":\"p\"}},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"t\"}},"
        "{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0.000,\"dur\":2.000},"
        "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":3,\"pid\":1,\"tid\":1,\"ts\":1.000}],"
        "\"displayTimeUnit\":\"ns\",\"otherData\":{}}";
    char *out;
    FILE *f = fopen(json, "w");
    fputs(overlap, f);
    fclose(f);
    diag("the next checker errors are expected");
    ok(run_checker(json, &out) == 1, "the checker rejects overlapping slices on one track");
    free(out);
    f = fopen(json, "w");
    fputs(lone_flow, f);
    fclose(f);
    ok(run_checker(json, &out) == 1, "the checker rejects a flow without its end");
    free(out);
    f = fopen(json, "w");
    fputs("{\"traceEvents\":[", f);
    fclose(f);
    ok(run_checker(json, &out) != 0, "the checker rejects broken JSON");
    free(out);
}

/* Control characters, invalid UTF-8, quotes and backslashes in names. */
static void test_odd_names(const char *dir)
{
    static const char thread[] = "t\x01" "ab\xff" "c";
    static const char kernel[] = "k<\"x\\y\">\t\xe2\x82\xac";
    const char *obs = test_path(dir, "odd.obs"), *json = test_path(dir, "odd.json");
    struct obs_file_header h;
    union obs_record r[2];
    char *out, *huge;
    size_t i, n = 60000;
    int fd = open(obs, O_WRONLY | O_CREAT | O_TRUNC, 0644);

    /* a huge name that escapes to 6 bytes a character */
    huge = malloc(n);
    for (i = 0; i < n; i++)
        huge[i] = i % 2 ? '\x01' : '"';
    memset(r, 0, sizeof r);
    r[0].call.type = OBS_REC_CALL;
    r[0].call.api = OBS_API_cudaLaunchKernel;
    r[0].call.name = 1;
    r[0].call.t_begin = 5000;
    r[0].call.t_dur = 100;
    r[1] = r[0];
    r[1].call.name = 2;
    r[1].call.t_begin = 6000;
    obs_trace_init_header(&h, 9, 0, 0, 0);
    if (fd < 0 || obs_trace_write_header(fd, &h) != 0 ||
        obs_trace_write_string(fd, 1, OBS_STR_KERNEL_MANGLED, kernel, sizeof kernel - 1) != 0 ||
        obs_trace_write_string(fd, 2, OBS_STR_KERNEL_MANGLED, huge, (uint32_t)n) != 0 ||
        obs_trace_write_string(fd, 33, OBS_STR_THREAD_NAME, thread, sizeof thread - 1) != 0 ||
        obs_trace_write_records(fd, 33, 0, r, 2) != 0)
        bail("cannot write %s", obs);
    close(fd);
    free(huge);
    write_json(obs, json);
    is_int(0, run_checker(json, &out), "odd names: still valid JSON");
    is_string("2", test_key_value(out, "host_slices"), "a 60000-byte name of quotes and control characters: valid");
    {
        char *text = test_read_file(json, NULL);
        const char *q = text;
        size_t controls = 0;
        while (q && (q = strstr(q, "\\u0001")) != NULL) {
            controls++;
            q += 6;
        }
        /* cut at 16384 bytes: 8192 control characters in each of the slice
         * name and otherData's name and mangled name; one in the thread name */
        is_int(3 * 8192 + 1, (long long)controls, "... and cut at 16384 bytes");
        free(text);
    }
    is_string("t\x01" "ab\xef\xbf\xbd" "c", test_key_value(out, "thread.33"),
              "control character kept (escaped), invalid UTF-8 replaced");
    is_string("0,100,33,k<\"x\\y\">\t\xe2\x82\xac", test_key_value(out, "seq.0"), "quotes, backslash, tab, UTF-8 kept");
    is_string("obsshim pid 9: unknown", test_key_value(out, "process_name"), "no meta: exe unknown");
    free(out);
}

static void test_postprocess(const char *dir)
{
    /* test_path's buffers rotate: keep copies */
    char *obs = strdup(test_path(dir, "post.obs")), *json = strdup(test_path(dir, "post.json"));
    char *summary = strdup(test_path(dir, "post.txt"));
    char err[512], *out, *text;
    int fd, rc;

    if (fixture_write(obs, 0) != 0)
        bail("cannot write the fixture");
    fd = open(summary, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    rc = obs_trace_postprocess(obs, json, OBS_TIMELINE_JSON, 0, fd, 0, err, sizeof err);
    close(fd);
    is_int(0, rc, "postprocess: JSON and summary written (%s)", err);
    is_int(0, run_checker(json, &out), "postprocess: the JSON is valid");
    is_string("16", test_key_value(out, "host_slices"), "postprocess: all calls in the JSON");
    free(out);
    text = test_read_file(summary, NULL);
    ok(text && strstr(text, "16 records, 10 records lost") && strstr(text, "Kernels (GPU time)"),
       "postprocess: the summary went to the descriptor");
    free(text);
    {
        DIR *d = opendir(dir);
        struct dirent *e;
        int temps = 0;
        while (d && (e = readdir(d)) != NULL)
            temps += strncmp(e->d_name, "post.json.tmp", 13) == 0;
        if (d)
            closedir(d);
        is_int(0, temps, "no temporary file left");
    }

    rc = obs_trace_postprocess(obs, test_path(dir, "no/such/dir/x.json"), OBS_TIMELINE_JSON, 0, -1, 0, err, sizeof err);
    ok(rc == -1 && strstr(err, "no/such/dir/x.json: No such file or directory") != NULL,
       "postprocess: an unwritable JSON path is reported (%s)", err);
    fd = open(test_path(dir, "foreign.obs"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (write(fd, "not a trace, not at all", 23) != 23)
        bail("write failed");
    close(fd);
    rc = obs_trace_postprocess(test_path(dir, "foreign.obs"), NULL, OBS_TIMELINE_JSON, 0, -1, 0, err, sizeof err);
    ok(rc == -1 && strstr(err, "foreign.obs: not an obsshim trace") != NULL, "postprocess: a foreign file (%s)",
       err);
    {
        /* A name someone planted a link at is never written through nor
         * replaced (docs/shim.md, "Security notes"); it used to be written
         * through, as /dev/null would be: that needs the explicit setting
         * now (path_is_device, OBS_TRACE=json:/dev/null). */
        const char *link = test_path(dir, "link.json"), *target = test_path(dir, "target.json");
        char want[1024];
        struct stat st;
        if (symlink(target, link) != 0)
            bail("symlink failed");
        rc = obs_trace_postprocess(obs, link, OBS_TIMELINE_JSON, 0, -1, 0, err, sizeof err);
        snprintf(want, sizeof want, "%s exists (a symbolic link) and is never replaced; the timeline was not written", link);
        ok(rc == -1 && strstr(err, want) != NULL && lstat(link, &st) == 0 && S_ISLNK(st.st_mode) &&
               lstat(target, &st) != 0,
           "postprocess: a symlinked JSON path is refused, neither followed nor replaced (%s)", err);
        rc = obs_trace_postprocess(obs, "/dev/null", OBS_TIMELINE_JSON, 1, -1, 0, err, sizeof err);
        ok(rc == 0, "postprocess: a character device named on purpose is written (%s)", err);
        rc = obs_trace_postprocess(obs, json, OBS_TIMELINE_JSON, 1, -1, 0, err, sizeof err);
        ok(rc == -1 && strstr(err, "not a FIFO or character device") != NULL,
           "postprocess: as a device, a regular file is refused (%s)", err);
    }
    free(obs);
    free(json);
    free(summary);
}

int main(void)
{
    const char *dir;
    python = getenv("OBS_PYTHON3");
    if (python == NULL || python[0] == '\0' || !test_executable(python))
        skip_all("python3 not found (OBS_PYTHON3 is empty): cannot parse the JSON");
    plan(39);
    dir = test_tmpdir();
    test_fixture(dir);
    test_checker_fails(dir);
    test_odd_names(dir);
    test_postprocess(dir);
    return 0;
}
