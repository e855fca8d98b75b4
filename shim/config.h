/* Settings read once from OBS_* environment variables at start-up.
 * A bad value gives one warning naming the variable and the default used. */
#ifndef OBS_CONFIG_H
#define OBS_CONFIG_H

#include <stdint.h>

#define OBS_OUTPUT_DEFAULT "obs-%p"
#define OBS_OUTPUT_MAX 4096
#define OBS_BUFFER_RECORDS_DEFAULT 65536u
#define OBS_BUFFER_RECORDS_MIN 64u
#define OBS_BUFFER_RECORDS_MAX 16777216u

enum obs_gpu_time { OBS_GPU_TIME_OFF = 0, OBS_GPU_TIME_EVENTS = 1 };

struct obs_config {
    int enable;                  /* OBS_ENABLE: 0 = loaded but records nothing */
    char output[OBS_OUTPUT_MAX]; /* OBS_OUTPUT: file prefix pattern (output_path.h) */
    int json;                    /* OBS_JSON: write <prefix>.json at exit */
    int summary;                 /* OBS_SUMMARY: print the summary to stderr at exit */
    enum obs_gpu_time gpu_time;  /* OBS_GPU_TIME: off | events */
    uint32_t buffer_records;     /* OBS_BUFFER_RECORDS: records per thread buffer */
};

/* How a variable is looked up: getenv in the shim, a table in the tests. */
typedef const char *(*obs_env_lookup)(const char *name);

/* Fill cfg from the environment; warns (obs_log_warn) once per bad value.
 * Returns the number of bad values found. */
int obs_config_load(struct obs_config *cfg, obs_env_lookup lookup);

/* The process-wide settings, filled by obs_init. */
extern struct obs_config obs_cfg;

#endif
