/* The reference workload's option parsing: each bad input prints usage and
 * exits 2 before touching the device (the simulator's ground-truth log shows
 * no call but registration); --opt=N and --opt N both work; --help exits 0.
 * Also: a failing API call prints the call, file and line and exits 1. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tap/basic.h"
#include "tap/process.h"
#include "workload_bins.h"

static const char *const bad_args[][4] = {
    {"--bogus", NULL},
    {"--batch=abc", NULL},
    {"--batch", "abc", NULL},
    {"--batch=", NULL},
    {"--batch", NULL},
    {"--batch=0", NULL},
    {"--ctx=-1", NULL},
    {"--hidden=+5", NULL},
    {"--repeat=1.5", NULL},
    {"--decode=99999999999", NULL},
    {"--batch=64", "--ctx=8192", "--hidden=8192", NULL}, /* 2^32 elements */
    {"--batchx=1", NULL},
    {"batch=1", NULL},
};
#define BAD_COUNT (sizeof bad_args / sizeof bad_args[0])

/* Lines of the ground-truth log other than (un)registration calls ("egister"). */
static size_t device_calls_in_log(const char *log_path)
{
    char *log = test_read_file(log_path, NULL);
    size_t n = 0;
    const char *p = log;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len > 0 && memmem(p, len, "egister", 7) == NULL)
            n++;
        p += len + (nl ? 1 : 0);
    }
    free(log);
    return n;
}

static void join_args(char *out, size_t size, const char *const *args)
{
    out[0] = '\0';
    for (; *args; args++) {
        strncat(out, *args, size - strlen(out) - 2);
        strncat(out, " ", size - strlen(out) - 1);
    }
}

static void check_binary(const struct workload_bin *b)
{
    const char *why = NULL;
    const char *path = workload_path(b, &why);
    const size_t per_binary = BAD_COUNT * 3 + 4;
    char log_path[4200], log_env[4300], label[256];
    size_t i;

    if (path == NULL) {
        skip_block(per_binary, "%s: %s", b->label, why);
        return;
    }
    snprintf(log_path, sizeof log_path, "%s/%s.simlog", test_tmpdir(), b->label);
    snprintf(log_env, sizeof log_env, "OBS_SIM_LOG=%s", log_path);
    const char *env[] = {sim_library_path_env(), log_env, "OBS_SIM_QUIET=1", NULL};

    for (i = 0; i < BAD_COUNT; i++) {
        const char *argv[8] = {path};
        struct run_result r;
        size_t k;
        for (k = 0; bad_args[i][k]; k++)
            argv[k + 1] = bad_args[i][k];
        argv[k + 1] = NULL;
        join_args(label, sizeof label, bad_args[i]);
        unlink(log_path);
        if (run_program(argv, b->needs_sim ? env : NULL, 60, &r) != 0)
            bail("cannot run %s", path);
        is_int(2, r.status, "%s %s: exit 2", b->label, label);
        ok(strstr(r.err, "usage:") != NULL && r.out[0] == '\0', "%s %s: usage on stderr, nothing on stdout",
           b->label, label);
        if (b->needs_sim)
            is_int(0, (long long)device_calls_in_log(log_path), "%s %s: no device call made", b->label, label);
        else
            ok(strstr(r.err, "obs_workload.cu:") == NULL,
               "%s %s: stopped in parsing, before any checked device call", b->label, label);
        run_result_free(&r);
    }

    {
        const char *argv[] = {path, "--help", NULL};
        struct run_result r;
        run_program(argv, b->needs_sim ? env : NULL, 60, &r);
        ok(r.status == 0 && strstr(r.out, "usage:") != NULL, "%s --help: usage on stdout, exit 0", b->label);
        run_result_free(&r);
    }

    /* Both spellings of a valid command line run (or, with no device, fail in
     * a checked call that names itself, its file and its line). */
    {
        const char *spaced[] = {path, "--batch", "1", "--ctx", "16", "--hidden", "64", "--decode", "3",
                                "--prefill_rounds", "2", "--decode_rounds", "1", "--repeat", "2",
                                "--no-ranges", NULL};
        const char *equals[] = {path, "--batch=1", "--ctx=16", "--hidden=64", "--decode=3",
                                "--prefill_rounds=2", "--decode_rounds=1", "--repeat=2", "--graphs", NULL};
        const char *const *cmds[] = {spaced, equals};
        int c;
        for (c = 0; c < 2; c++) {
            struct run_result r;
            run_program(cmds[c], b->needs_sim ? env : NULL, 120, &r);
            if (r.status == 0) {
                ok(strstr(r.out, "TTFT_ms=") && strstr(r.out, "(best of 2 reps)"),
                   "%s %s options: runs and prints the TTFT line", b->label, c ? "--opt=N" : "--opt N");
            } else {
                /* Only expected where no device is reachable (static cudart, no GPU). */
                ok(!b->needs_sim && r.status == 1 && strstr(r.err, " in ") && strstr(r.err, "obs_workload.cu:"),
                   "%s %s options: exit %d names the failing call, file and line", b->label,
                   c ? "--opt=N" : "--opt N", r.status);
                diag_text("stderr", r.err);
            }
            run_result_free(&r);
        }
    }

    /* A failing API call: the simulator's fault injection fails cudaMalloc/hipMalloc. */
    if (b->needs_sim) {
        const char *fail = strcmp(b->label, "obs_hip") == 0 ? "OBS_SIM_FAIL=hipMalloc:2" : "OBS_SIM_FAIL=cudaMalloc:2";
        const char *fenv[] = {sim_library_path_env(), "OBS_SIM_QUIET=1", fail, NULL};
        const char *argv[] = {path, "--ctx=16", "--hidden=64", "--decode=2", "--repeat=1", NULL};
        struct run_result r;
        run_program(argv, fenv, 60, &r);
        ok(r.status == 1 && strstr(r.err, "Malloc") && strstr(r.err, "obs_workload.cu:"),
           "%s: a failing call prints the call, file and line and exits 1", b->label);
        if (r.status != 1)
            diag_text("stderr", r.err);
        run_result_free(&r);
    } else {
        skip("%s: statically linked runtime, no fault injection", b->label);
    }
}

int main(void)
{
    size_t i;
    plan(WORKLOAD_BIN_COUNT * (BAD_COUNT * 3 + 4));
    for (i = 0; i < WORKLOAD_BIN_COUNT; i++)
        check_binary(&workload_bins[i]);
    return tap_failures() ? 1 : 0;
}
