/* What the tests of real frameworks on the simulated driver share
 * (tests/t_frameworks, tests/t_frameworks_nccl): the frameworks'
 * environment, sets of distinct names, and the driver's log (OBS_SIM_LOG)
 * read and compared with a trace record by record, thread by thread. */
#ifndef OBS_TESTS_FW_COMMON_H
#define OBS_TESTS_FW_COMMON_H

#include <stddef.h>

#include "tap/process.h"
#include "trace/trace.h"

/* The frameworks' environment: $OBS_FRAMEWORKS_ENV, else
 * $HOME/.cache/obsshim/frameworks; its python (NULL: none there). */
extern char python[4200], env_dir[4100];
const char *find_environment(void);
/* The build's tools the runs use: contrib/obs-run, sim/driver, the NVTX
 * test tool (fw_paths sets them; skips the test when obs-run is not built). */
extern char obs_run[4300], driver_dir[4300], inject_lib[4300];
void fw_paths(void);

/* The start of a run's command and environment: under the shim `obs-run
 * --sim -o prefix --` and the NVTX test tool; without it the simulated
 * driver first in LD_LIBRARY_PATH, no banner. Appended to argv at *a and to
 * env at *e; l holds the entries' text. */
struct fw_launch {
    char inject_env[4400], path_env[4400];
};
void fw_launch_start(struct fw_launch *l, int shim, const char *prefix, const char **argv, size_t *a,
                     const char **env, size_t *e);

/* plan_lazy, then the environment and its versions (freed) as a diag. */
void fw_plan(char *versions);

/* Skip the test, saying why, under a sanitizer, without the environment,
 * or when its python cannot import torch and also (a module name, NULL:
 * none); else the versions line ("torch 2.15.0 cuda 13.2 ..."), malloc'ed. */
char *fw_require(const char *also);

struct name_set {
    char **names;
    size_t n, cap;
};
void set_add(struct name_set *s, const char *name);
int by_name(const void *a, const void *b); /* qsort of char * */
void set_print(const char *what, struct name_set *s);

/* A record of the log (the kinds the shim records: kernel, memcpy,
 * memset, sync, graph), its timing lines (fw_truth.py) and stub calls. */
struct rec {
    char kind[8], bytes[24];
    char *name, *api;
    unsigned long long stream;
    long status, tid;
    int has_stream;
};
struct log {
    struct rec *r;
    size_t n, cap;
    size_t timing, stub_calls;
};
/* Read a log: its records, timing lines and stub calls; note(fields):
 * called on every line of six columns or more (NULL: none); stubs: the
 * names of the stubs called are added (NULL: not). */
void log_read(const char *path, struct log *lg, void (*note)(char **fields), struct name_set *stubs);
void log_free(struct log *lg);

unsigned kind_of(const char *kind);        /* a log kind's enum obs_call_kind */
int is_record(const struct obs_call *c);   /* a kind the log has lines of */

struct counts {
    size_t records, kernels, copies, memsets, syncs, graphs, threads;
};
/* A run that goes on in a child process while the test makes another
 * (the two cores halve the wait): run(arg, res) there, its stdout and
 * stderr back in files named after base (base.out, base.err). */
struct fw_job {
    int pid;
    char out[4400], err[4400];
};
void fw_job_start(struct fw_job *job, const char *base, void (*run)(void *arg, struct run_result *res), void *arg);
/* 1 when the run exited 0 (else its stderr goes to diag); *out its stdout
 * (malloc'ed). */
int fw_job_wait(const char *label, struct fw_job *job, char **out);

/* Record by record, thread by thread: the trace's calls of each thread in
 * their order against the log's lines of that thread (the tid column):
 * 3 checks. */
void compare(const char *label, const struct log *lg, const struct obs_trace *t, struct counts *k);

#endif
