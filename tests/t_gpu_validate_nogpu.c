/* contrib/gpu/validate.sh on a machine without a GPU: nothing is built, the
 * table has eight SKIP rows that say why, the markdown file is written and
 * the exit status is 0. Also: the script parses (bash -n), is clean under
 * shellcheck when that is installed, its Python programs compile, --help
 * works and an unknown argument is a usage error (2). The GPU path itself
 * runs only on a GPU (docs/validation.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"

static char shellcheck_buf[4096], probe_buf[4096];

/* 5 checks: one run without a GPU. */
static void check_no_gpu_run(const char *script, const char *const env[], const char *reason, const char *label)
{
    char md_path[4200];
    const char *argv[5];
    struct run_result r;
    char *md;

    snprintf(md_path, sizeof md_path, "%s/validation-%s.md", test_tmpdir(), label);
    argv[0] = "/bin/bash";
    argv[1] = script;
    argv[2] = "--out";
    argv[3] = md_path;
    argv[4] = NULL;
    run_program(argv, env, 60, &r);
    is_int(0, r.exited ? r.status : -1, "%s: exit status 0", label);
    is_int(8, (long long)count_lines_with(r.out, " SKIP "), "%s: eight SKIP rows", label);
    if (!is_int(8, (long long)count_lines_with(r.out, reason), "%s: each says why (%s)", label, reason))
        diag_text("stdout", r.out);
    ok(strstr(r.out, " PASS ") == NULL && strstr(r.out, " FAIL ") == NULL && strstr(r.out, "FAILED") == NULL,
       "%s: nothing passed or failed", label);
    md = test_read_file(md_path, NULL);
    ok(md != NULL && strstr(md, "# GPU validation") != NULL && count_lines_with(md, "| **SKIP** |") == 8 &&
           strstr(md, "| 5 | ncu --nvtx-include obsshim@PREFILL/ |") != NULL &&
           strstr(md, "| 6 | OBS_GPU_TIME=cupti: spans, times = own |") != NULL &&
           strstr(md, "| 7 | OBS_CAPTURE: nsys and ncu record steps 2-5 only |") != NULL,
       "%s: the markdown table is written", label);
    free(md);
    run_result_free(&r);
}

int main(void)
{
    char script[4200], llama[4200], triton[4200];
    const char *python = getenv("OBS_PYTHON3");
    const char *shellcheck = test_on_path("shellcheck", shellcheck_buf, sizeof shellcheck_buf);
    struct run_result r;

    snprintf(script, sizeof script, "%s/contrib/gpu/validate.sh", test_srcdir());
    snprintf(llama, sizeof llama, "%s/contrib/gpu/llama_generate.py", test_srcdir());
    snprintf(triton, sizeof triton, "%s/contrib/gpu/triton_add.py", test_srcdir());
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
        if (!ok(r.exited && r.status == 0, "shellcheck: no finding"))
            diag_text("shellcheck", r.out);
        run_result_free(&r);
    }
    if (python == NULL || *python == '\0') {
        skip("no python3 (OBS_PYTHON3 empty)");
    } else {
        /* compile(), not py_compile: nothing is written into the source tree */
        const char *argv[] = {python, "-c",
                              "import sys\nfor f in sys.argv[1:]:\n    compile(open(f).read(), f, 'exec')\n",
                              llama, triton, NULL};
        run_program(argv, NULL, 30, &r);
        if (!ok(r.exited && r.status == 0, "llama_generate.py and triton_add.py compile"))
            diag_text("python", r.err);
        run_result_free(&r);
    }
    {
        const char *argv[] = {"/bin/bash", script, "--help", NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 0 && strstr(r.out, "Usage: contrib/gpu/validate.sh") != NULL,
           "--help prints the usage");
        run_result_free(&r);
    }
    {
        const char *argv[] = {"/bin/bash", script, "--bogus", NULL};
        run_program(argv, NULL, 30, &r);
        ok(r.exited && r.status == 2 && strstr(r.err, "unknown argument") != NULL, "an unknown argument exits 2");
        run_result_free(&r);
    }

    {
        const char *env[] = {"OBS_VALIDATE_FORCE_NO_GPU=1", NULL};
        check_no_gpu_run(script, env, "no GPU (OBS_VALIDATE_FORCE_NO_GPU=1)", "forced");
    }
    if (test_on_path("nvidia-smi", probe_buf, sizeof probe_buf) != NULL) {
        skip_block(5, "nvidia-smi is installed here: the no-nvidia-smi path is not this machine's");
    } else {
        const char *env[] = {"OBS_VALIDATE_FORCE_NO_GPU", NULL};
        check_no_gpu_run(script, env, "nvidia-smi not found", "no-smi");
    }
    return 0;
}
