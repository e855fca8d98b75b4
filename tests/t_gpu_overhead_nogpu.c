/* contrib/gpu/overhead.sh on a machine without a GPU: nothing is built, the
 * table has six SKIP rows that say why, the CSV (--out) holds them and the
 * exit status is 0. Also: the script parses (bash -n), is clean under
 * shellcheck when that is installed, its Python program compiles, --help
 * works and a bad argument is a usage error (2). The GPU path itself runs
 * only on a GPU (docs/performance.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"

static char shellcheck_buf[4096], probe_buf[4096];

/* 5 checks: one run without a GPU (six rows). */
static void check_no_gpu_run(const char *script, const char *const env[], const char *reason, const char *label)
{
    char csv_path[4200];
    const char *argv[5];
    struct run_result r;
    char *csv;

    snprintf(csv_path, sizeof csv_path, "%s/overhead-%s.csv", test_tmpdir(), label);
    argv[0] = "/bin/bash";
    argv[1] = script;
    argv[2] = "--out";
    argv[3] = csv_path;
    argv[4] = NULL;
    run_program(argv, env, 60, &r);
    is_int(0, r.exited ? r.status : -1, "%s: exit status 0", label);
    is_int(6, (long long)count_lines_with(r.out, " SKIP "), "%s: six SKIP rows", label);
    if (!is_int(6, (long long)count_lines_with(r.out, reason), "%s: each says why (%s)", label, reason))
        diag_text("stdout", r.out);
    ok(strstr(r.out, " PASS ") == NULL && strstr(r.out, " FAIL ") == NULL &&
           strstr(r.out, "overhead.sh: no target missed") != NULL,
       "%s: nothing passed or failed", label);
    csv = test_read_file(csv_path, NULL);
    ok(csv != NULL && strncmp(csv, "id,what,result,details\n", 23) == 0 && count_lines_with(csv, ",SKIP,") == 6 &&
           strstr(csv, "\"workload tokens/s, record (<= 1%)\",SKIP,") != NULL,
       "%s: the CSV holds the rows", label);
    free(csv);
    run_result_free(&r);
}

int main(void)
{
    char script[4200], torch_py[4200];
    const char *python = getenv("OBS_PYTHON3");
    const char *shellcheck = test_on_path("shellcheck", shellcheck_buf, sizeof shellcheck_buf);
    struct run_result r;

    snprintf(script, sizeof script, "%s/contrib/gpu/overhead.sh", test_srcdir());
    snprintf(torch_py, sizeof torch_py, "%s/contrib/gpu/torch_decode_overhead.py", test_srcdir());
    if (access(script, R_OK) != 0 || access("/bin/bash", X_OK) != 0)
        skip_all("%s or /bin/bash missing", script);
    plan(5 + 5 + 5);

    {
        const char *argv[] = {"/bin/bash", "-n", script, NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 0, "bash -n: the script parses");
        run_result_free(&r);
    }
    if (shellcheck == NULL) {
        skip("shellcheck not installed");
    } else {
        const char *argv[] = {shellcheck, script, NULL};
        run_program(argv, NULL, 60, &r);
        if (!ok(r.exited && r.status == 0, "shellcheck: clean"))
            diag_text("shellcheck", r.out);
        run_result_free(&r);
    }
    if (python == NULL || *python == '\0') {
        skip("python3 not found by configure");
    } else {
        const char *argv[] = {python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", torch_py, NULL};
        run_program(argv, NULL, 60, &r);
        ok(r.exited && r.status == 0, "torch_decode_overhead.py parses");
        run_result_free(&r);
    }
    {
        const char *argv[] = {"/bin/bash", script, "--help", NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 0 && strstr(r.out, "Usage: contrib/gpu/overhead.sh") != NULL,
           "--help prints the usage, exit 0");
        run_result_free(&r);
    }
    {
        const char *argv[] = {"/bin/bash", script, "--pairs", "x", NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 2, "--pairs x: usage error, exit 2");
        run_result_free(&r);
    }

    {
        char work[4200];
        snprintf(work, sizeof work, "OBS_OVERHEAD_WORK=%s/work-forced", test_tmpdir());
        const char *env[] = {"OBS_OVERHEAD_FORCE_NO_GPU=1", work, NULL};
        check_no_gpu_run(script, env, "no GPU (OBS_OVERHEAD_FORCE_NO_GPU=1)", "forced");
    }
    {
        /* a PATH with no nvidia-smi: the machine's own answer */
        char work[4200];
        snprintf(work, sizeof work, "OBS_OVERHEAD_WORK=%s/work-path", test_tmpdir());
        const char *env[] = {"PATH=/usr/bin:/bin", work, NULL};
        if (test_on_path("nvidia-smi", probe_buf, sizeof probe_buf) != NULL)
            skip_block(5, "nvidia-smi is installed here");
        else
            check_no_gpu_run(script, env, "no NVIDIA GPU: nvidia-smi not found", "no-nvidia-smi");
    }
    return 0;
}
