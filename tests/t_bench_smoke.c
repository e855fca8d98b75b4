/* make bench, make bench-gpu-time and make bench-scale, shrunk to a smoke
 * run (1 round, a few thousand launches; the GPU-time one on vllm_graphs
 * only; the hot path's instruction count, make bench-hotpath, on 2000
 * calls; the cache-pressure one, make bench-cache, at two levels of 200
 * launches; make bench-fw's PyTorch loop, its add case of 300 ops, where
 * the frameworks' environment is): the scripts parse and are shellcheck-clean, run every mode, print
 * the table (bench: with a verdict for both launch targets; bench-gpu-time:
 * steps' verdict), write the raw and summary CSV with one row per mode
 * (and call), and the scale run
 * finds every launch in the trace with none lost. No timing is asserted:
 * the figures are the benchmarks' business (docs/performance.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"

static char shellcheck_buf[4096];

/* The one file in DIR whose name ends with SUFFIX (and, when EXCLUDE is
 * set, does not contain it), read whole; NULL when none. */
static char *read_result(const char *dir, const char *suffix, const char *exclude)
{
    char cmd[4400], name[4096];
    FILE *p;
    snprintf(cmd, sizeof cmd, "ls '%s'", dir);
    p = popen(cmd, "r");
    if (p == NULL)
        return NULL;
    while (fgets(name, sizeof name, p) != NULL) {
        size_t n = strcspn(name, "\n"), sl = strlen(suffix);
        name[n] = '\0';
        if (n >= sl && strcmp(name + n - sl, suffix) == 0 && (exclude == NULL || strstr(name, exclude) == NULL)) {
            pclose(p);
            return test_read_file(test_path(dir, name), NULL);
        }
    }
    pclose(p);
    return NULL;
}

static const char *const modes[] = {"none", "off", "record", "record_mono", "nvtx_launch", "phases_auto",
                                    "phases_rules", "nvtx_phases", "gpu_events"};
#define NMODES (sizeof modes / sizeof modes[0])

static const char *const gpu_modes[] = {"none", "record", "steps", "events", "cupti", "cupti_alone"};
#define NGPU_MODES (sizeof gpu_modes / sizeof gpu_modes[0])

#define NSCRIPTS 7

static void check_scripts_lint(const char *const scripts[NSCRIPTS])
{
    const char *shellcheck = test_on_path("shellcheck", shellcheck_buf, sizeof shellcheck_buf);
    struct run_result r;
    for (int i = 0; i < NSCRIPTS; i++) {
        const char *script = scripts[i];
        const char *argv[] = {"/bin/bash", "-n", script, NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 0, "bash -n %s", script);
        run_result_free(&r);
        if (shellcheck == NULL) {
            skip("shellcheck not installed");
        } else {
            const char *argv2[] = {shellcheck, script, NULL};
            run_program(argv2, NULL, 60, &r);
            if (!ok(r.exited && r.status == 0, "shellcheck clean: %s", script))
                diag_text("shellcheck", r.out);
            run_result_free(&r);
        }
    }
}

/* A script that counts instructions under callgrind, run: true when its
 * two checks of what it printed are the caller's to make (the exit status
 * checked here; *r to free then); false when they were skipped, saying
 * why (under a sanitizer callgrind cannot run the program; valgrind not
 * installed). */
static int callgrind_script(const char *what, const char *script, const char *const env[], struct run_result *r)
{
    const char *argv[] = {"/bin/bash", script, NULL};
    if (getenv("OBS_SANITIZE") != NULL && *getenv("OBS_SANITIZE") != '\0') {
        skip_block(3, "%s: under a sanitizer build valgrind cannot run the program (ASan's shadow memory)", what);
        return 0;
    }
    run_program(argv, env, 300, r);
    if (!is_int(0, r->exited ? r->status : -1, "%s: exit status 0", what))
        diag_text("stderr", r->err);
    if (strstr(r->out, "skipped: valgrind not found") != NULL) {
        skip_block(2, "valgrind not installed: %s counts with callgrind", what);
        run_result_free(r);
        return 0;
    }
    return 1;
}

int main(void)
{
    char bench[4200], scale[4200], gpu[4200], layers[4200], hotpath[4200], cache[4200], fw[4200], cache_results[4200],
        cache_results_env[4300], fw_results[4200], fw_results_env[4300], layers_results[4200], layers_results_env[4300],
        hotpath_results[4200], hotpath_results_env[4300],
        results[4200], gpu_results[4200], builddir_env[4200],
        srcdir_env[4200], results_env[4300], gpu_results_env[4300], scale_dir_env[4300];
    struct run_result r;
    char *summary, *raw;

    snprintf(bench, sizeof bench, "%s/contrib/bench/bench.sh", test_srcdir());
    snprintf(scale, sizeof scale, "%s/contrib/bench/scale.sh", test_srcdir());
    snprintf(gpu, sizeof gpu, "%s/contrib/bench/gpu_time_bench.sh", test_srcdir());
    snprintf(layers, sizeof layers, "%s/contrib/bench/layers_cost.sh", test_srcdir());
    snprintf(hotpath, sizeof hotpath, "%s/contrib/bench/hotpath_cost.sh", test_srcdir());
    snprintf(cache, sizeof cache, "%s/contrib/bench/cache_pressure.sh", test_srcdir());
    snprintf(fw, sizeof fw, "%s/contrib/bench/fw_cost.sh", test_srcdir());
    if (access(bench, R_OK) != 0 || access(scale, R_OK) != 0 || access(gpu, R_OK) != 0 || access(layers, R_OK) != 0 ||
        access(hotpath, R_OK) != 0 || access(cache, R_OK) != 0 || access(fw, R_OK) != 0 || access("/bin/bash", X_OK) != 0)
        skip_all("bench scripts or /bin/bash missing");
    if (access(test_path(test_builddir(), "contrib/bench/.libs/libobsbenchnvtx.so"), R_OK) != 0)
        skip_all("contrib/bench/libobsbenchnvtx.so not built");
    plan(2 * NSCRIPTS + 6 + 2 * (int)NMODES + 4 + (int)NGPU_MODES + 3 + 3 + 4 + 2 + 5);

    check_scripts_lint((const char *const[NSCRIPTS]){bench, scale, gpu, layers, hotpath, cache, fw});

    snprintf(results, sizeof results, "%s/results", test_tmpdir());
    snprintf(builddir_env, sizeof builddir_env, "OBS_BUILDDIR=%s", test_builddir());
    snprintf(results_env, sizeof results_env, "BENCH_RESULTS=%s", results);
    snprintf(scale_dir_env, sizeof scale_dir_env, "SCALE_DIR=%s", test_tmpdir());

    {
        const char *argv[] = {"/bin/bash", bench, NULL};
        const char *env[] = {builddir_env, results_env, "BENCH_ROUNDS=1", "BENCH_LAUNCHES=2000",
                             "BENCH_COPIES=200", NULL};
        run_program(argv, env, 120, &r);
        if (!is_int(0, r.exited ? r.status : -1, "bench: exit status 0"))
            diag_text("stderr", r.err);
        ok(strstr(r.out, "mode          call") != NULL, "bench: the table's header is printed");
        is_int(1, (long long)count_lines_with(r.out, "<= 50 ns: "), "bench: a verdict for record (50 ns)");
        is_int(1, (long long)count_lines_with(r.out, "<= 150 ns: "), "bench: a verdict for NVTX + phases (150 ns)");
        ok(strstr(r.out, "clock_gettime(CLOCK_MONOTONIC): ") != NULL, "bench: the clock's cost is given");
        run_result_free(&r);
    }
    raw = read_result(results, ".csv", "summary");
    summary = read_result(results, "-summary.csv", NULL);
    ok(raw != NULL && strncmp(raw, "round,mode,metric,ns\n", 21) == 0 && count_lines_with(raw, ",launch,") == NMODES &&
           count_lines_with(raw, ",copy,") == NMODES,
       "bench: raw CSV, a launch and a copy row per mode");
    for (size_t i = 0; i < NMODES; i++) {
        char launch[64], copy[64];
        snprintf(launch, sizeof launch, "\n%s,launch,", modes[i]);
        snprintf(copy, sizeof copy, "\n%s,copy,", modes[i]);
        ok(summary != NULL && strstr(summary, launch) != NULL, "bench summary: %s launch", modes[i]);
        ok(summary != NULL && strstr(summary, copy) != NULL, "bench summary: %s copy", modes[i]);
    }
    free(raw);
    free(summary);

    snprintf(gpu_results, sizeof gpu_results, "%s/gpu-results", test_tmpdir());
    snprintf(gpu_results_env, sizeof gpu_results_env, "BENCH_RESULTS=%s", gpu_results);
    snprintf(srcdir_env, sizeof srcdir_env, "OBS_SRCDIR=%s", test_srcdir());
    {
        const char *argv[] = {"/bin/bash", gpu, NULL};
        const char *env[] = {builddir_env, srcdir_env, gpu_results_env, "BENCH_ROUNDS=1",
                             "BENCH_SCENARIOS=vllm_graphs", NULL};
        run_program(argv, env, 300, &r);
        if (!is_int(0, r.exited ? r.status : -1, "bench-gpu-time: exit status 0"))
            diag_text("stderr", r.err);
        ok(strstr(r.out, "scenario     mode        launches") != NULL, "bench-gpu-time: the table's header is printed");
        ok(strstr(r.out, "\nverdict vllm_graphs: steps adds ") != NULL,
           "bench-gpu-time: the verdict line of steps against a tenth of record");
        run_result_free(&r);
    }
    raw = read_result(gpu_results, ".csv", "summary");
    summary = read_result(gpu_results, "-summary.csv", NULL);
    ok(raw != NULL && strncmp(raw, "round,scenario,mode,launches,loop_ns,ns_per_launch,untimed,cpu_ns_per_launch\n", 77) == 0 &&
           count_lines_with(raw, ",vllm_graphs,") == NGPU_MODES,
       "bench-gpu-time: raw CSV, a row per mode");
    for (size_t i = 0; i < NGPU_MODES; i++) {
        char row[64];
        snprintf(row, sizeof row, "\nvllm_graphs,%s,", gpu_modes[i]);
        ok(summary != NULL && strstr(summary, row) != NULL, "bench-gpu-time summary: %s", gpu_modes[i]);
    }
    free(raw);
    free(summary);

    /* make bench's layer cost (docs/performance.md): at make check's sizes, one scenario */
    snprintf(layers_results, sizeof layers_results, "%s/layers-results", test_tmpdir());
    snprintf(layers_results_env, sizeof layers_results_env, "BENCH_RESULTS=%s", layers_results);
    {
        const char *env[] = {builddir_env, srcdir_env, layers_results_env, "LAYERS_FULL=0", "LAYERS_SCENARIOS=hf_eager",
                             NULL};
        if (callgrind_script("bench layers", layers, env, &r)) {
            ok(strstr(r.out, "scenario            launches defaults/launch") != NULL &&
                   count_lines_with(r.out, "hf_eager ") == 1,
               "bench layers: the table's header and a row for hf_eager");
            raw = read_result(layers_results, ".csv", NULL);
            ok(raw != NULL &&
                   strncmp(raw, "scenario,launches,ir_none,ir_layers_off,ir_defaults,defaults_per_launch,", 71) == 0 &&
                   count_lines_with(raw, "hf_eager,") == 1,
               "bench layers: the CSV, a row for hf_eager");
            free(raw);
            run_result_free(&r);
        }
    }

    /* make bench's hot path (docs/performance.md): instructions per launch and copy, 2000 calls */
    snprintf(hotpath_results, sizeof hotpath_results, "%s/hotpath-results", test_tmpdir());
    snprintf(hotpath_results_env, sizeof hotpath_results_env, "BENCH_RESULTS=%s", hotpath_results);
    {
        const char *env[] = {builddir_env, hotpath_results_env, "HOTPATH_LAUNCHES=2000", NULL};
        if (callgrind_script("bench hot path", hotpath, env, &r)) {
            ok(count_lines_with(r.out, " launch  ") == 3 && count_lines_with(r.out, " copy    ") == 2,
               "bench hot path: rows for launches (none, record, phases_auto) and copies (none, record)");
            raw = read_result(hotpath_results, ".csv", NULL);
            ok(raw != NULL && strncmp(raw, "library,call,mode,instructions_per_call,added_over_none\n", 56) == 0 &&
                   count_lines_with(raw, ",launch,") == 3 && count_lines_with(raw, ",copy,") == 2,
               "bench hot path: the CSV, a row per call and mode");
            free(raw);
            run_result_free(&r);
        }
    }

    /* make bench's cache pressure (docs/performance.md): two levels, 200 launches each */
    snprintf(cache_results, sizeof cache_results, "%s/cache-results", test_tmpdir());
    snprintf(cache_results_env, sizeof cache_results_env, "BENCH_RESULTS=%s", cache_results);
    if (getenv("OBS_SANITIZE") != NULL && *getenv("OBS_SANITIZE") != '\0') {
        /* the script preloads the shim into bench_loop in a clean environment, where the sanitizer's
         * runtime does not come first; a timing under ASan says nothing anyway */
        skip_block(4, "bench cache: not under a sanitizer (the shim preloaded without the sanitizer's runtime first)");
    } else {
        const char *argv[] = {"/bin/bash", cache, NULL};
        const char *env[] = {builddir_env, cache_results_env, "CACHE_ROUNDS=1", "CACHE_LEVELS=hot 4MiB",
                             "CACHE_LAUNCHES=200", NULL};
        run_program(argv, env, 120, &r);
        if (!is_int(0, r.exited ? r.status : -1, "bench cache: exit status 0"))
            diag_text("stderr", r.err);
        if (!ok(count_lines_with(r.out, "hot    this:record ") == 1 && count_lines_with(r.out, "4MiB   this:defaults ") == 1 &&
                    count_lines_with(r.out, "4MiB   none ") == 1,
                "bench cache: a row per level and mode"))
            diag_text("stdout", r.out);
        raw = read_result(cache_results, ".csv", "summary");
        summary = read_result(cache_results, "-summary.csv", NULL);
        ok(raw != NULL && strncmp(raw, "level,round,mode,load1,ns_per_launch_call,", 42) == 0 &&
               count_lines_with(raw, ",1,") == 6,
           "bench cache: raw CSV, a row per run");
        ok(summary != NULL && count_lines_with(summary, "hot,") == 3 && count_lines_with(summary, "4MiB,") == 3,
           "bench cache: summary CSV, a row per level and mode");
        free(raw);
        free(summary);
        run_result_free(&r);
    }

    /* make bench-fw (docs/performance.md): the add loop, 300 ops, one round */
    snprintf(fw_results, sizeof fw_results, "%s/fw-results", test_tmpdir());
    snprintf(fw_results_env, sizeof fw_results_env, "BENCH_RESULTS=%s", fw_results);
    if (getenv("OBS_SANITIZE") != NULL && *getenv("OBS_SANITIZE") != '\0') {
        skip_block(2, "bench fw: not under a sanitizer (PyTorch with the sanitizer's runtime preloaded)");
    } else {
        const char *argv[] = {"/bin/bash", fw, NULL};
        const char *env[] = {builddir_env, srcdir_env, fw_results_env, "FW_COST_ROUNDS=1", "FW_COST_CASES=add",
                             "FW_COST_ARGS_add=--units 300 --warmup 100", NULL};
        run_program(argv, env, 300, &r);
        if (!is_int(0, r.exited ? r.status : -1, "bench fw: exit status 0"))
            diag_text("stderr", r.err);
        if (strstr(r.out, "bench fw: skipped: ") != NULL) {
            skip("bench fw: %s", strtok(strstr(r.out, "skipped: "), "\n"));
        } else {
            raw = read_result(fw_results, ".csv", "summary");
            ok(count_lines_with(r.out, "add        defaults ") == 1 && raw != NULL &&
                   count_lines_with(raw, "add,1,none,") == 1 && count_lines_with(raw, "add,1,defaults,") == 1,
               "bench fw: a row for add with the shim, the raw CSV a row per run");
            free(raw);
        }
        run_result_free(&r);
    }

    if (access("/usr/bin/time", X_OK) != 0) {
        skip_block(5, "/usr/bin/time (GNU time, Debian package time) not installed: scale.sh needs it");
        return 0;
    }
    {
        const char *argv[] = {"/bin/bash", scale, NULL};
        const char *env[] = {builddir_env, results_env, scale_dir_env, "SCALE_LAUNCHES=20000", "SCALE_REPEATS=1", NULL};
        run_program(argv, env, 120, &r);
        if (!is_int(0, r.exited ? r.status : -1, "scale: exit status 0"))
            diag_text("stderr", r.err);
        ok(count_lines_with(r.out, "records lost ") == 1 && strstr(r.out, "records lost                                    0 ") != NULL,
           "scale: no record lost");
        if (!ok(strstr(r.out, "records in trace                            20004 ") != NULL,
                "scale: every launch is in the trace (+ 4 stream syncs)"))
            diag_text("stdout", r.out);
        ok(count_lines_with(r.out, "PASS") + count_lines_with(r.out, "FAIL") == 7, "scale: seven verdicts");
        run_result_free(&r);
    }
    summary = read_result(results, ".csv", "bench");
    ok(summary != NULL && strncmp(summary, "metric,value,unit,target,verdict\n", 33) == 0 &&
           strstr(summary, "\nrecords lost,0,,0,PASS\n") != NULL,
       "scale: its CSV is written");
    free(summary);
    return 0;
}
