/* Unit tests of the shim's small pieces, linked in directly:
 * output names (shim/common/output_path.c), settings (shim/common/config.c) and the
 * lock-free-read pointer map (shim/common/ptrmap.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/output_path.h"
#include "common/ptrmap.h"
#include "tap/basic.h"
#include "tap/process.h"

/* ---- a fake environment for obs_config_load ------------------------------- */

static const char *const *fake_env;

static const char *fake_lookup(const char *name)
{
    size_t n = strlen(name), i;
    for (i = 0; fake_env != NULL && fake_env[i] != NULL; i++)
        if (strncmp(fake_env[i], name, n) == 0 && fake_env[i][n] == '=')
            return fake_env[i] + n + 1;
    return NULL;
}

static int load(struct obs_config *cfg, const char *const *env)
{
    fake_env = env;
    return obs_config_load(cfg, fake_lookup);
}

static void test_config(void)
{
    struct obs_config cfg;
    {
        const char *const env[] = {NULL};
        is_int(0, load(&cfg, env), "config: no variables, no complaint");
        ok(cfg.enable && cfg.trace_export == OBS_TRACE_PERFETTO && cfg.summary && cfg.gpu_time == OBS_GPU_TIME_OFF,
           "config: defaults on (timeline: perfetto), GPU time off");
        is_string(OBS_OUTPUT_DEFAULT, cfg.output, "config: default prefix obs-%%p");
        is_int(OBS_BUFFER_RECORDS_DEFAULT, cfg.buffer_records, "config: default buffer size");
        is_int(OBS_CLOCK_WANT_AUTO, cfg.clock, "config: OBS_CLOCK defaults to auto");
    }
    {
        const char *const env[] = {"OBS_CLOCK=monotonic", NULL};
        const char *const env2[] = {"OBS_CLOCK=TSC", NULL};
        const char *const env3[] = {"OBS_CLOCK=hpet", NULL};
        is_int(0, load(&cfg, env), "config: OBS_CLOCK=monotonic accepted");
        is_int(OBS_CLOCK_WANT_MONOTONIC, cfg.clock, "config: OBS_CLOCK=monotonic");
        is_int(0, load(&cfg, env2), "config: OBS_CLOCK=TSC accepted");
        is_int(OBS_CLOCK_WANT_TSC, cfg.clock, "config: OBS_CLOCK=TSC (any case)");
        is_int(1, load(&cfg, env3), "config: OBS_CLOCK=hpet is a bad value");
        is_int(OBS_CLOCK_WANT_AUTO, cfg.clock, "config: bad OBS_CLOCK gives auto");
    }
    {
        const char *const env[] = {"OBS_ENABLE=0", "OBS_JSON=off", "OBS_SUMMARY=No", "OBS_GPU_TIME=events",
                                   "OBS_BUFFER_RECORDS=1000", "OBS_OUTPUT=run-%h-%p", NULL};
        is_int(0, load(&cfg, env), "config: good values accepted");
        ok(!cfg.enable && cfg.trace_export == OBS_TRACE_NONE && !cfg.summary, "config: switches off (0, off, No)");
        ok(cfg.gpu_time == OBS_GPU_TIME_EVENTS, "config: OBS_GPU_TIME=events");
        is_int(1000, cfg.buffer_records, "config: OBS_BUFFER_RECORDS=1000");
        is_string("run-%h-%p", cfg.output, "config: OBS_OUTPUT kept as a pattern");
        is_string("", cfg.cupti_path, "config: no OBS_CUPTI_PATH: search for libcupti");
    }
    {
        const char *const env[] = {"OBS_GPU_TIME=CUPTI", "OBS_CUPTI_PATH=/opt/cuda/lib64/libcupti.so.13", NULL};
        is_int(0, load(&cfg, env), "config: OBS_GPU_TIME=cupti and OBS_CUPTI_PATH accepted");
        ok(cfg.gpu_time == OBS_GPU_TIME_CUPTI, "config: OBS_GPU_TIME=cupti (any case)");
        is_string("cupti", obs_gpu_time_mode_name(cfg.gpu_time), "config: the mode's name for the meta");
        is_string("/opt/cuda/lib64/libcupti.so.13", cfg.cupti_path, "config: OBS_CUPTI_PATH kept");
    }
    {
        const char *const env[] = {"OBS_ENABLE=2", "OBS_JSON=", "OBS_GPU_TIME=always", "OBS_BUFFER_RECORDS=-5",
                                   "OBS_OUTPUT=a%zb", NULL};
        is_int(5, load(&cfg, env), "config: five bad values, five complaints");
        ok(cfg.enable && cfg.trace_export == OBS_TRACE_PERFETTO && cfg.gpu_time == OBS_GPU_TIME_OFF,
           "config: bad values give the defaults");
        is_int(OBS_BUFFER_RECORDS_DEFAULT, cfg.buffer_records, "config: bad buffer size gives the default");
        is_string(OBS_OUTPUT_DEFAULT, cfg.output, "config: bad prefix gives the default");
    }
    {
        const char *const json[] = {"OBS_TRACE=json", NULL};
        const char *const none[] = {"OBS_TRACE=None", "OBS_JSON=1", NULL};
        const char *const perfetto[] = {"OBS_TRACE=perfetto", "OBS_JSON=0", NULL};
        const char *const old_json[] = {"OBS_JSON=1", NULL};
        const char *const bad[] = {"OBS_TRACE=chrome", NULL};
        is_int(0, load(&cfg, json), "config: OBS_TRACE=json accepted");
        is_int(OBS_TRACE_JSON, cfg.trace_export, "config: OBS_TRACE=json");
        is_int(0, load(&cfg, none), "config: OBS_TRACE=None accepted");
        is_int(OBS_TRACE_NONE, cfg.trace_export, "config: OBS_TRACE=None (any case) wins over OBS_JSON=1");
        is_int(0, load(&cfg, perfetto), "config: OBS_TRACE=perfetto accepted");
        is_int(OBS_TRACE_PERFETTO, cfg.trace_export, "config: OBS_TRACE=perfetto wins over OBS_JSON=0");
        is_int(0, load(&cfg, old_json), "config: OBS_JSON=1 alone accepted");
        is_int(OBS_TRACE_JSON, cfg.trace_export, "config: OBS_JSON=1 alone is OBS_TRACE=json");
        is_int(1, load(&cfg, bad), "config: OBS_TRACE=chrome is a bad value");
        is_int(OBS_TRACE_PERFETTO, cfg.trace_export, "config: a bad OBS_TRACE gives perfetto");
    }
    {
        /* OBS_TRACE=KIND:PATH: a FIFO or device named on purpose */
        const char *const dev[] = {"OBS_TRACE=perfetto:/dev/null", NULL};
        const char *const fifo[] = {"OBS_TRACE=JSON:/run/a:b.fifo", NULL};
        const char *const empty[] = {"OBS_TRACE=json:", NULL};
        const char *const none[] = {"OBS_TRACE=none:/dev/null", NULL};
        const char *const plain[] = {"OBS_TRACE=json", NULL};
        is_int(0, load(&cfg, dev), "config: OBS_TRACE=perfetto:/dev/null accepted");
        ok(cfg.trace_export == OBS_TRACE_PERFETTO && strcmp(cfg.trace_device, "/dev/null") == 0,
           "config: OBS_TRACE=perfetto:/dev/null: the timeline into /dev/null");
        is_int(0, load(&cfg, fifo), "config: OBS_TRACE=JSON:/run/a:b.fifo accepted");
        ok(cfg.trace_export == OBS_TRACE_JSON && strcmp(cfg.trace_device, "/run/a:b.fifo") == 0,
           "config: the path is all after the first colon");
        is_int(1, load(&cfg, empty), "config: OBS_TRACE=json: (no path) is a bad value");
        ok(cfg.trace_export == OBS_TRACE_PERFETTO && cfg.trace_device[0] == '\0',
           "config: ... and gives the default, no device");
        is_int(1, load(&cfg, none), "config: OBS_TRACE=none:PATH is a bad value");
        load(&cfg, plain);
        ok(cfg.trace_device[0] == '\0', "config: OBS_TRACE=json names no device");
    }
    {
        const char *const env[] = {"OBS_BUFFER_RECORDS=63", NULL};
        const char *const env2[] = {"OBS_BUFFER_RECORDS=16777217", NULL};
        const char *const env3[] = {"OBS_BUFFER_RECORDS=64", NULL};
        is_int(1, load(&cfg, env), "config: 63 records is too few");
        is_int(1, load(&cfg, env2), "config: 16777217 records is too many");
        is_int(0, load(&cfg, env3), "config: 64 records is the minimum");
    }
    {
        const char *const none[] = {NULL};
        const char *const full[] = {"OBS_SUMMARY=Full", NULL};
        const char *const one[] = {"OBS_SUMMARY=1", NULL};
        const char *const bad[] = {"OBS_SUMMARY=brief", NULL};
        load(&cfg, none);
        is_int(OBS_SUMMARY_BRIEF, cfg.summary, "config: OBS_SUMMARY defaults to the brief summary");
        is_int(0, load(&cfg, full), "config: OBS_SUMMARY=Full accepted");
        is_int(OBS_SUMMARY_FULL, cfg.summary, "config: OBS_SUMMARY=Full: the full tables (any case)");
        load(&cfg, one);
        is_int(OBS_SUMMARY_BRIEF, cfg.summary, "config: OBS_SUMMARY=1: brief");
        is_int(1, load(&cfg, bad), "config: OBS_SUMMARY=brief is a bad value");
        is_int(OBS_SUMMARY_BRIEF, cfg.summary, "config: bad OBS_SUMMARY gives the default");
    }
}

/* ---- output names ------------------------------------------------------------ */

static void test_pattern_check(void)
{
    char why[128];
    static const char *const good[] = {"obs-%p", "%h/%q{HOME}/x%n", "100%%", "plain", "%q{A_1}"};
    static const char *const bad[] = {"", "x%", "%y", "%q", "%q{", "%q{}", "%q{A", "%q{a-b}"};
    size_t i;
    for (i = 0; i < sizeof good / sizeof good[0]; i++)
        is_int(0, obs_output_pattern_check(good[i], why, sizeof why), "pattern %s is good", good[i]);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        is_int(-1, obs_output_pattern_check(bad[i], why, sizeof why), "pattern \"%s\" is refused (%s)", bad[i], why);
}

static const char *const name_env[] = {"RANK=3", "PCT=5%", NULL};

static void test_pattern_expand(void)
{
    char prepared[256], out[256];
    fake_env = name_env;
    is_int(0, obs_output_pattern_prepare("r%q{RANK}-%h-%p-%n-%%-%q{PCT}-%q{UNSET}.", "node1", fake_lookup, prepared,
                                         sizeof prepared),
           "prepare: fits");
    is_string("r3-node1-%p-%n-%%-5%%-.", prepared, "prepare: %%h and %%q{} substituted, %% in values doubled");
    is_int(0, obs_output_expand(prepared, 4242, 7, out, sizeof out), "expand: fits");
    is_string("r3-node1-4242-7-%-5%-.", out, "expand: %%p, %%n and %% done");
    is_int(-1, obs_output_expand("%p%p%p", 1234567, 0, out, 8), "expand: too long is refused");
}

static void test_create(void)
{
    char prefix[4200], pattern[4200];
    int renamed = 0, fd;
    const char *dir = test_tmpdir();

    snprintf(pattern, sizeof pattern, "%s/c-%%p", dir);
    fd = obs_output_create(pattern, 99, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    ok(fd >= 0 && !renamed, "create: c-99.obs");
    if (fd >= 0)
        close(fd);
    ok(strstr(prefix, "/c-99") != NULL && access(test_path(dir, "c-99.obs"), F_OK) == 0, "create: the file exists");
    fd = obs_output_create(pattern, 99, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    ok(fd >= 0 && renamed && strstr(prefix, "/c-99-1") != NULL, "create: a taken name gets -1, never reused");
    if (fd >= 0)
        close(fd);
    fd = obs_output_create(pattern, 99, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    ok(fd >= 0 && strstr(prefix, "/c-99-2") != NULL, "create: then -2");
    if (fd >= 0)
        close(fd);

    snprintf(pattern, sizeof pattern, "%s/u-%%n", dir);
    fd = obs_output_create(pattern, 1, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    ok(fd >= 0 && !renamed && strstr(prefix, "/u-1") != NULL, "create: %%n starts at 1");
    if (fd >= 0)
        close(fd);
    fd = obs_output_create(pattern, 1, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    ok(fd >= 0 && !renamed && strstr(prefix, "/u-2") != NULL, "create: %%n takes the next free number");
    if (fd >= 0)
        close(fd);

    /* Anything at <prefix>.obs or at the timeline's name moves the whole
     * output to the next free prefix; taken names the first one found. */
    {
        char taken[4200], want[4200];
        snprintf(pattern, sizeof pattern, "%s/p-%%p", dir);
        if (symlink(test_path(dir, "nowhere"), test_path(dir, "p-5.obs")) != 0 ||
            symlink(test_path(dir, "nowhere"), test_path(dir, "p-5-1.pftrace")) != 0 ||
            mkdir(test_path(dir, "p-5-2.pftrace"), 0755) != 0)
            bail("cannot plant: %s", strerror(errno));
        fd = obs_output_create(pattern, 5, ".pftrace", prefix, sizeof prefix, &renamed, taken, sizeof taken);
        snprintf(want, sizeof want, "%s/p-5.obs", dir);
        ok(fd >= 0 && renamed && strstr(prefix, "/p-5-3") != NULL && strcmp(taken, want) == 0,
           "create: a dangling link at .obs, then a link and a directory at .pftrace: p-5-3 (taken: %s)", taken);
        if (fd >= 0)
            close(fd);
        ok(access(test_path(dir, "nowhere"), F_OK) != 0, "create: the dangling link was not followed");
        snprintf(pattern, sizeof pattern, "%s/q", dir);
        if (symlink(test_path(dir, "nowhere"), test_path(dir, "q.json")) != 0)
            bail("cannot plant: %s", strerror(errno));
        fd = obs_output_create(pattern, 5, ".json", prefix, sizeof prefix, &renamed, taken, sizeof taken);
        snprintf(want, sizeof want, "%s/q.json", dir);
        ok(fd >= 0 && renamed && strstr(prefix, "/q-1") != NULL && strcmp(taken, want) == 0 &&
               access(test_path(dir, "q.obs"), F_OK) != 0,
           "create: only the timeline's name taken: q-1, and no q.obs (taken: %s)", taken);
        if (fd >= 0)
            close(fd);
        fd = obs_output_create(pattern, 5, NULL, prefix, sizeof prefix, &renamed, taken, sizeof taken);
        snprintf(want, sizeof want, "%s/q", dir);
        ok(fd >= 0 && !renamed && strcmp(prefix, want) == 0 && taken[0] == '\0',
           "create: with no timeline, q.json does not matter: q.obs");
        if (fd >= 0)
            close(fd);
    }

    snprintf(pattern, sizeof pattern, "%s/no/such/dir/x", dir);
    fd = obs_output_create(pattern, 1, NULL, prefix, sizeof prefix, &renamed, NULL, 0);
    is_int(-ENOENT, fd, "create: a missing directory gives -ENOENT");
}

/* ---- pointer map ------------------------------------------------------------- */

static void test_ptrmap(void)
{
    struct obs_ptrmap m = {0};
    uint64_t v = 0;
    uintptr_t k;
    int all = 1;

    ok(!obs_ptrmap_get(&m, 0x1000, &v), "ptrmap: empty map finds nothing");
    is_int(-1, obs_ptrmap_put(&m, 0, 1), "ptrmap: key 0 is refused");
    for (k = 1; k <= 5000; k++)
        if (obs_ptrmap_put(&m, k * 16, k + 7) != 0)
            all = 0;
    ok(all, "ptrmap: 5000 inserts (the table grows)");
    for (k = 1; k <= 5000; k++)
        if (!obs_ptrmap_get(&m, k * 16, &v) || v != k + 7)
            all = 0;
    ok(all, "ptrmap: every key found with its value after growing");
    ok(!obs_ptrmap_get(&m, 5001 * 16, &v), "ptrmap: an absent key is not found");
    obs_ptrmap_put(&m, 16, 99);
    ok(obs_ptrmap_get(&m, 16, &v) && v == 99, "ptrmap: put replaces");
    obs_ptrmap_clear(&m);
    ok(!obs_ptrmap_get(&m, 32, &v), "ptrmap: clear forgets everything");
}

int main(void)
{
    plan_lazy();
    test_config();
    test_pattern_check();
    test_pattern_expand();
    test_create();
    test_ptrmap();
    return 0;
}
