/* Settings read once from OBS_* environment variables at start-up.
 * A bad value gives one warning naming the variable and the default used. */
#ifndef OBS_CONFIG_H
#define OBS_CONFIG_H

#include "capture_spec.h" /* struct obs_capture_spec */
#include "debug_spec.h"  /* OBS_DEBUG_DOMAINS */
#include "output_path.h" /* OBS_OUTPUT_MAX */

#include <stdint.h>

#define OBS_OUTPUT_DEFAULT "obs-%p"
#define OBS_BUFFER_RECORDS_DEFAULT 65536u
#define OBS_BUFFER_RECORDS_MIN 64u
#define OBS_BUFFER_RECORDS_MAX 16777216u

/* Phase engine (docs/phases.md). Rule texts are kept up to one character
 * past the parser's limit so that it can point at where they got too long. */
#define OBS_PHASE_TEXT_KEEP 1026u   /* OBS_PHASES / OBS_STEP: 1025 characters + NUL */
#define OBS_NVTX_DOMAIN_DEFAULT "obsshim"
#define OBS_NVTX_DOMAIN_MAX 128u
#define OBS_GEN_GAP_MS_DEFAULT_CFG 1000u
#define OBS_GEN_GAP_MS_MAX 3600000u

/* OBS_GPU_TIME: off; events = an event pair around each call; cupti = the
 * device times of CUPTI's activity records (events where CUPTI cannot be
 * used); steps = an event pair per phase range and stream. */
enum obs_gpu_time_mode { OBS_GPU_TIME_OFF = 0, OBS_GPU_TIME_EVENTS = 1, OBS_GPU_TIME_CUPTI = 2, OBS_GPU_TIME_STEPS = 3 };
#define OBS_CUPTI_PATH_MAX 4096u /* OBS_CUPTI_PATH, NUL included */
/* OBS_SUMMARY: 0 = none, 1 = the brief summary that fits a screen, full =
 * every table (per generation too), as `obs-report summary` prints it. */
enum obs_summary_mode { OBS_SUMMARY_OFF = 0, OBS_SUMMARY_BRIEF = 1, OBS_SUMMARY_FULL = 2 };
/* OBS_TRACE: the timeline written beside the .obs at exit: none, the Chrome
 * JSON (<prefix>.json), or Perfetto's protobuf (<prefix>.pftrace, the
 * default: a few bytes per call where the JSON takes hundreds). OBS_JSON=0|1
 * is its older spelling of none|json, read when OBS_TRACE is not set.
 * OBS_TRACE=perfetto:PATH (json:PATH) writes it into PATH instead, a FIFO or
 * character device named on purpose (/dev/null): the only way the shim
 * writes into something that exists (docs/shim.md, "Security notes"). */
enum obs_trace_export { OBS_TRACE_NONE = 0, OBS_TRACE_JSON = 1, OBS_TRACE_PERFETTO = 2 };
/* OBS_CLOCK: auto = the TSC where the kernel keeps time with it (clock.h);
 * tsc = the same, with a warning where it cannot be used; monotonic =
 * clock_gettime always. */
enum obs_clock_want { OBS_CLOCK_WANT_AUTO = 0, OBS_CLOCK_WANT_TSC, OBS_CLOCK_WANT_MONOTONIC };

struct obs_config {
    int enable;                  /* OBS_ENABLE: 0 = loaded but records nothing */
    char output[OBS_OUTPUT_MAX]; /* OBS_OUTPUT: file prefix pattern (output_path.h) */
    enum obs_trace_export trace_export; /* OBS_TRACE (or OBS_JSON): the timeline written at exit */
    char trace_device[OBS_OUTPUT_MAX];  /* OBS_TRACE=KIND:PATH: PATH, a FIFO or device; "" = <prefix>.KIND */
    enum obs_summary_mode summary; /* OBS_SUMMARY: which summary to print on stderr at exit */
    enum obs_gpu_time_mode gpu_time;  /* OBS_GPU_TIME: off | events | cupti | steps */
    char cupti_path[OBS_CUPTI_PATH_MAX]; /* OBS_CUPTI_PATH: the libcupti to open ("" = search) */
    enum obs_clock_want clock;   /* OBS_CLOCK: auto | tsc | monotonic */
    uint32_t buffer_records;     /* OBS_BUFFER_RECORDS: records per thread buffer */
    int phases_off;              /* OBS_PHASES=off: no phase engine */
    char phases[OBS_PHASE_TEXT_KEEP]; /* OBS_PHASES rules ("" = automatic; parsed by the engine) */
    char step[OBS_PHASE_TEXT_KEEP];   /* OBS_STEP rule ("" = none) */
    char iteration[OBS_PHASE_TEXT_KEEP]; /* OBS_ITERATION: a serving loop's forwards' first kernel ("" = none) */
    char layer[OBS_PHASE_TEXT_KEEP];  /* OBS_LAYER: the layers' first kernel, a glob list ("" = automatic) */
    int layers_off;                   /* OBS_LAYER=off: no layers found */
    char nvtx_domain[OBS_NVTX_DOMAIN_MAX]; /* OBS_NVTX_DOMAIN ("" = NVTX's default domain) */
    int nvtx_launch;             /* OBS_NVTX_LAUNCH: a range per launch, named after the kernel */
    uint32_t gen_gap_ms;         /* OBS_GEN_GAP_MS: idle time that starts a new generation */
    uint8_t debug_levels[OBS_DEBUG_DOMAINS]; /* OBS_DEBUG: level per debug domain, 0 = off */
    char debug_file[OBS_OUTPUT_MAX];         /* OBS_DEBUG_FILE: name pattern of the debug log ("" = stderr) */
    struct obs_capture_spec capture;         /* OBS_CAPTURE: the windows bracketed by the profiler's start and stop
                                                (n = 0: none; docs/capture.md) */
    int record_window;                       /* OBS_RECORD=window: only the calls inside those windows are kept */
};

/* How a variable is looked up: getenv in the shim, a table in the tests. */
typedef const char *(*obs_env_lookup)(const char *name);

/* "off", "events", "cupti", "steps": the OBS_GPU_TIME value of a mode. */
const char *obs_gpu_time_mode_name(enum obs_gpu_time_mode mode);

/* Fill cfg from the environment; warns (obs_log_warn) once per bad value.
 * Returns the number of bad values found. */
int obs_config_load(struct obs_config *cfg, obs_env_lookup lookup);

/* The process-wide settings, filled by obs_init. */
extern struct obs_config obs_cfg;

#endif
