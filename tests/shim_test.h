/* Helpers shared by the shim's tests (tests/t_shim_*.c): running a program
 * with libobsshim.so preloaded (LD_PRELOAD only in that child), reading the
 * simulator's ground-truth log and the trace the shim left. */
#ifndef OBS_TESTS_SHIM_TEST_H
#define OBS_TESTS_SHIM_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "tap/process.h"
#include "trace/trace_reader.h"

/* $OBS_BUILDDIR/shim/.libs/libobsshim.so; bails out when it is missing. */
const char *shim_lib(void);
/* text with each mangled name (_Z...) as the shim prints it in a program
 * where __cxa_demangle can be found (one with libstdc++: under make
 * check-sanitize UBSan's runtime brings it into every program built here,
 * this test included): demangled then, unchanged otherwise. Rotating
 * static buffers (4). */
const char *shim_names_as_printed(const char *text);
/* $OBS_BUILDDIR/<rel> in a fresh static buffer (8 slots). */
const char *shim_build_path(const char *rel);

/* Run argv; preload: put the shim in LD_PRELOAD (child only). env: extra
 * "NAME=value" entries (NULL-terminated, may be NULL). OBS_SIM_QUIET=1 is
 * always added. Bails out when the program cannot be started. */
void shim_run(const char *const argv[], const char *const env[], int preload, int timeout_s,
              struct run_result *res);

/* The environment of a program run on the simulated runtimes with its
 * ranges in the ground-truth log: OBS_SIM_LOG=log, OBS_OUTPUT=prefix,
 * LD_LIBRARY_PATH (sim/.libs) and the NVTX tool; hip: the roctx
 * stand-in's directory on the library path too and no NVTX tool, so that
 * each range is logged once. Writes 4 entries at env (static strings, one
 * set at a time) and returns 4. */
size_t sim_ranges_env(const char **env, const char *log, const char *prefix, int hip);

/* A program run on the simulators, its ground-truth log and trace named
 * after tag in the test's directory (prefix = test_tmpdir()/tag). */
struct sim_traced_run {
    struct run_result res;
    struct obs_trace *t; /* NULL when no trace was expected or readable */
    char log[4200], obs[4200], json[4200], prefix[4096]; /* room for the suffixes */
};
/* Run argv on the simulators with OBS_SIM_LOG (device operations logged
 * too: OBS_SIM_LOG_OPS=1), OBS_OUTPUT=prefix and OBS_TRACE=json; under the
 * shim with OBS_GPU_TIME=gpu_time, or without it when gpu_time is NULL.
 * extra: more "NAME=value" entries (NULL-terminated, may be NULL). The
 * trace is opened when there is one. */
void sim_traced_run_exec(const char *tag, const char *const argv[], const char *gpu_time, const char *const *extra,
                         struct sim_traced_run *r);
void sim_traced_run_free(struct sim_traced_run *r);

/* tests/trace_json_check.py on a JSON trace: its gpu_slices= and flows=
 * counts (ULONG_MAX when not printed), its result in pr (free it). Returns -1
 * without running it when OBS_PYTHON3 names no python3. */
int trace_json_check_counts(const char *json, struct run_result *pr, unsigned long *slices, unsigned long *flows);

/* One line of the simulator's ground-truth log. */
struct sim_call {
    char api[64], kind[16], name[256], stream[32], bytes[32];
    long status;
};
/* Read a log: the number of lines, *calls malloc'ed (NULL-safe on 0). */
size_t sim_log_read(const char *path, struct sim_call **calls);

/* enum obs_api of a name, or -1. */
int shim_api_index(const char *name);

/* Open a trace; NULL (with a diag) when it cannot be read. */
struct obs_trace *shim_trace_open(const char *path);
/* CALL records of api in t. */
unsigned long trace_api_count(const struct obs_trace *t, int api);

/* obs-report COMMAND TRACE -o OUT (perfetto, csv, json: with -q, no
 * progress line): its exit status (-1: a signal); *err its stderr
 * (malloc'ed) when err is not NULL. */
int shim_obs_report(const char *command, const char *trace, const char *out, char **err);

/* `obs-report ranks --perfetto` and `--format csv --collectives` of the n
 * traces (PREFIX.pftrace, PREFIX.csv), then tests/ranks_perfetto_check.py
 * on them (process tracks per rank, slices at the arrivals, each
 * collective's flow ending on its straggler's): 1 when all held, 0 when
 * not (diag lines say why), -1 without python3 or protoc; line gets the
 * checker's counts (or why it did not run). */
int shim_ranks_perfetto_check(const char *const *traces, size_t n, const char *prefix, char *line, size_t linelen);

/* Number of directory entries of dir whose name ends with suffix; the last
 * one found is copied into found (full path) when found is not NULL. */
size_t dir_count_suffix(const char *dir, const char *suffix, char *found, size_t foundlen);
/* Remove every entry of dir (not recursive). */
void dir_clear(const char *dir);
/* Lines of text holding "obsshim: warning". */
size_t warning_lines(const char *text);

#endif
