/* OBS_* environment variables: see config.h and docs/shim.md. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "obs_export.h"
#include "output_path.h"

OBS_HIDDEN struct obs_config obs_cfg;

/* 1/0 for the usual spellings of a switch, -1 for anything else. */
static int parse_switch(const char *text)
{
    static const char *const on[] = {"1", "yes", "true", "on"};
    static const char *const off[] = {"0", "no", "false", "off"};
    size_t i;
    for (i = 0; i < sizeof on / sizeof on[0]; i++) {
        if (strcasecmp(text, on[i]) == 0)
            return 1;
        if (strcasecmp(text, off[i]) == 0)
            return 0;
    }
    return -1;
}

static int load_switch(obs_env_lookup lookup, const char *name, int fallback, int *out)
{
    const char *text = lookup(name);
    int value;
    *out = fallback;
    if (text == NULL)
        return 0;
    value = parse_switch(text);
    if (value < 0) {
        obs_log_warn("%s=%s: expected 0 or 1; using the default %d", name, text, fallback);
        return 1;
    }
    *out = value;
    return 0;
}

static int load_summary(obs_env_lookup lookup, enum obs_summary_mode *out)
{
    const char *text = lookup("OBS_SUMMARY");
    int value;
    *out = OBS_SUMMARY_BRIEF;
    if (text == NULL)
        return 0;
    if (strcasecmp(text, "full") == 0) {
        *out = OBS_SUMMARY_FULL;
        return 0;
    }
    value = parse_switch(text);
    if (value < 0) {
        obs_log_warn("OBS_SUMMARY=%s: expected 0, 1 or full; using the default 1", text);
        return 1;
    }
    *out = value ? OBS_SUMMARY_BRIEF : OBS_SUMMARY_OFF;
    return 0;
}

/* OBS_TRACE=KIND or KIND:PATH, PATH a FIFO or character device named on
 * purpose (checked when it is written, at exit). */
static int load_trace_export(obs_env_lookup lookup, enum obs_trace_export *out, char *device, size_t devlen)
{
    const char *text = lookup("OBS_TRACE"), *colon;
    size_t kind_len;
    int json;
    *out = OBS_TRACE_PERFETTO;
    device[0] = '\0';
    if (text == NULL) { /* the older switch: OBS_JSON=0 none, 1 the JSON */
        text = lookup("OBS_JSON");
        if (text == NULL)
            return 0;
        json = parse_switch(text);
        if (json < 0) {
            obs_log_warn("OBS_JSON=%s: expected 0 or 1; using the default OBS_TRACE=perfetto", text);
            return 1;
        }
        *out = json ? OBS_TRACE_JSON : OBS_TRACE_NONE;
        return 0;
    }
    colon = strchr(text, ':');
    kind_len = colon != NULL ? (size_t)(colon - text) : strlen(text);
    if (colon != NULL && (colon[1] == '\0' || strlen(colon + 1) >= devlen)) {
        obs_log_warn("OBS_TRACE=%s: expected json, perfetto or none, or json:PATH or perfetto:PATH (a FIFO or "
                     "character device, e.g. /dev/null); using the default perfetto",
                     text);
        return 1;
    }
    if (kind_len == 8 && strncasecmp(text, "perfetto", 8) == 0) {
        *out = OBS_TRACE_PERFETTO;
    } else if (kind_len == 4 && strncasecmp(text, "json", 4) == 0) {
        *out = OBS_TRACE_JSON;
    } else if (colon == NULL && strcasecmp(text, "none") == 0) {
        *out = OBS_TRACE_NONE;
        return 0;
    } else {
        obs_log_warn("OBS_TRACE=%s: expected json, perfetto or none, or json:PATH or perfetto:PATH (a FIFO or "
                     "character device, e.g. /dev/null); using the default perfetto",
                     text);
        *out = OBS_TRACE_PERFETTO;
        return 1;
    }
    if (colon != NULL)
        strcpy(device, colon + 1);
    return 0;
}

static int load_gpu_time(obs_env_lookup lookup, enum obs_gpu_time_mode *out)
{
    const char *text = lookup("OBS_GPU_TIME");
    *out = OBS_GPU_TIME_OFF;
    if (text == NULL || strcasecmp(text, "off") == 0 || strcmp(text, "0") == 0)
        return 0;
    if (strcasecmp(text, "events") == 0) {
        *out = OBS_GPU_TIME_EVENTS;
        return 0;
    }
    if (strcasecmp(text, "cupti") == 0) {
        *out = OBS_GPU_TIME_CUPTI;
        return 0;
    }
    if (strcasecmp(text, "steps") == 0) {
        *out = OBS_GPU_TIME_STEPS;
        return 0;
    }
    obs_log_warn("OBS_GPU_TIME=%s: expected off, steps, events or cupti; using the default off", text);
    return 1;
}

const char *obs_gpu_time_mode_name(enum obs_gpu_time_mode mode)
{
    switch (mode) {
    case OBS_GPU_TIME_EVENTS:
        return "events";
    case OBS_GPU_TIME_CUPTI:
        return "cupti";
    case OBS_GPU_TIME_STEPS:
        return "steps";
    default:
        return "off";
    }
}

/* OBS_CUPTI_PATH: the libcupti that OBS_GPU_TIME=cupti opens (a file path);
 * unset or empty: found by its soname, then in the toolkit's usual places. */
static int load_cupti_path(obs_env_lookup lookup, char *out, size_t outlen)
{
    const char *text = lookup("OBS_CUPTI_PATH");
    out[0] = '\0';
    if (text == NULL || text[0] == '\0')
        return 0;
    if (strlen(text) >= outlen) {
        obs_log_warn("OBS_CUPTI_PATH: longer than %zu characters; searching for libcupti instead", outlen - 1);
        return 1;
    }
    strcpy(out, text);
    return 0;
}

static int load_clock(obs_env_lookup lookup, enum obs_clock_want *out)
{
    const char *text = lookup("OBS_CLOCK");
    *out = OBS_CLOCK_WANT_AUTO;
    if (text == NULL || text[0] == '\0' || strcasecmp(text, "auto") == 0)
        return 0;
    if (strcasecmp(text, "tsc") == 0) {
        *out = OBS_CLOCK_WANT_TSC;
        return 0;
    }
    if (strcasecmp(text, "monotonic") == 0) {
        *out = OBS_CLOCK_WANT_MONOTONIC;
        return 0;
    }
    obs_log_warn("OBS_CLOCK=%s: expected auto, tsc or monotonic; using the default auto", text);
    return 1;
}

static int load_buffer_records(obs_env_lookup lookup, uint32_t *out)
{
    const char *text = lookup("OBS_BUFFER_RECORDS");
    char *end = NULL;
    unsigned long long value;
    *out = OBS_BUFFER_RECORDS_DEFAULT;
    if (text == NULL)
        return 0;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || errno != 0 || end == text || *end != '\0' ||
        value < OBS_BUFFER_RECORDS_MIN || value > OBS_BUFFER_RECORDS_MAX) {
        obs_log_warn("OBS_BUFFER_RECORDS=%s: expected a number of records from %u to %u; "
                     "using the default %u",
                     text, OBS_BUFFER_RECORDS_MIN, OBS_BUFFER_RECORDS_MAX, OBS_BUFFER_RECORDS_DEFAULT);
        return 1;
    }
    *out = (uint32_t)value;
    return 0;
}

static int load_output(obs_env_lookup lookup, char *out, size_t outlen)
{
    const char *text = lookup("OBS_OUTPUT");
    char why[128];
    strcpy(out, OBS_OUTPUT_DEFAULT);
    if (text == NULL)
        return 0;
    if (obs_output_pattern_check(text, why, sizeof why) != 0) {
        obs_log_warn("OBS_OUTPUT=%s: %s; using the default %s", text, why, OBS_OUTPUT_DEFAULT);
        return 1;
    }
    if (strlen(text) >= outlen) { /* pattern_check bounds the length; keep it safe */
        obs_log_warn("OBS_OUTPUT: too long; using the default %s", OBS_OUTPUT_DEFAULT);
        return 1;
    }
    strcpy(out, text);
    return 0;
}

/* OBS_PHASES / OBS_STEP / OBS_ITERATION / OBS_LAYER: kept as text; the phase engine parses it and
 * reports a bad rule with its column. OBS_PHASES=off turns the engine off. */
static int load_phase_text(obs_env_lookup lookup, const char *name, char *out, int *off)
{
    const char *text = lookup(name);
    size_t len;
    out[0] = '\0';
    if (text == NULL)
        return 0;
    if (off != NULL && (strcasecmp(text, "off") == 0 || strcmp(text, "0") == 0)) {
        *off = 1;
        return 0;
    }
    if (off != NULL && strcasecmp(text, "auto") == 0)
        return 0;
    len = strnlen(text, OBS_PHASE_TEXT_KEEP - 1);
    memcpy(out, text, len);
    out[len] = '\0';
    return 0;
}

static int load_nvtx_domain(obs_env_lookup lookup, char *out)
{
    const char *text = lookup("OBS_NVTX_DOMAIN");
    size_t i, len;
    strcpy(out, OBS_NVTX_DOMAIN_DEFAULT);
    if (text == NULL)
        return 0;
    len = strlen(text);
    for (i = 0; i < len && text[i] >= ' ' && text[i] < 0x7f; i++)
        ;
    if (len >= OBS_NVTX_DOMAIN_MAX || i < len) {
        obs_log_warn("OBS_NVTX_DOMAIN: expected printable text of at most %u characters; using the default %s",
                     OBS_NVTX_DOMAIN_MAX - 1, OBS_NVTX_DOMAIN_DEFAULT);
        return 1;
    }
    strcpy(out, text);
    return 0;
}

static int load_gen_gap(obs_env_lookup lookup, uint32_t *out)
{
    const char *text = lookup("OBS_GEN_GAP_MS");
    char *end = NULL;
    unsigned long long value;
    *out = OBS_GEN_GAP_MS_DEFAULT_CFG;
    if (text == NULL)
        return 0;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || errno != 0 || end == text || *end != '\0' || value < 1 ||
        value > OBS_GEN_GAP_MS_MAX) {
        obs_log_warn("OBS_GEN_GAP_MS=%s: expected milliseconds from 1 to %u; using the default %u", text,
                     OBS_GEN_GAP_MS_MAX, OBS_GEN_GAP_MS_DEFAULT_CFG);
        return 1;
    }
    *out = (uint32_t)value;
    return 0;
}

/* OBS_DEBUG=domain[:level],... (debug_spec.h); a bad value: off. */
static int load_debug(obs_env_lookup lookup, uint8_t *levels)
{
    const char *text = lookup("OBS_DEBUG");
    struct obs_debug_spec_error err;
    if (text == NULL || obs_debug_spec_parse(text, levels, &err) == 0)
        return 0;
    obs_log_warn("OBS_DEBUG=%s: %s at column %zu; debug logging stays off", text, err.what, err.column);
    return 1;
}

/* OBS_DEBUG_FILE: a name pattern with OBS_OUTPUT's escapes; a bad one: stderr. */
static int load_debug_file(obs_env_lookup lookup, char *out, size_t outlen)
{
    const char *text = lookup("OBS_DEBUG_FILE");
    char why[128];
    out[0] = '\0';
    if (text == NULL || text[0] == '\0')
        return 0;
    if (obs_output_pattern_check(text, why, sizeof why) != 0 || strlen(text) >= outlen) {
        obs_log_warn("OBS_DEBUG_FILE=%s: %s; debug lines go to stderr", text,
                     strlen(text) >= outlen ? "too long" : why);
        return 1;
    }
    strcpy(out, text);
    return 0;
}

/* OBS_CAPTURE=window,... (capture_spec.h); a bad value: one warning with
 * its column and a caret, no capture. */
static int load_capture(obs_env_lookup lookup, struct obs_capture_spec *out)
{
    const char *text = lookup("OBS_CAPTURE");
    struct obs_capture_spec_error err;
    out->n = 0;
    if (text == NULL || text[0] == '\0' || obs_capture_spec_parse(text, out, &err) == 0)
        return 0;
    obs_log_warn_at("OBS_CAPTURE", text, err.column, err.what, "nothing is captured");
    return 1;
}

/* OBS_RECORD=all|window: window keeps only the calls inside OBS_CAPTURE's
 * windows, so it means nothing without one. */
static int load_record(obs_env_lookup lookup, const struct obs_capture_spec *capture, int *window)
{
    const char *text = lookup("OBS_RECORD");
    *window = 0;
    if (text == NULL || strcasecmp(text, "all") == 0)
        return 0;
    if (strcasecmp(text, "window") != 0) {
        obs_log_warn("OBS_RECORD=%s: expected all or window; using the default all", text);
        return 1;
    }
    if (capture->n == 0) {
        obs_log_warn("OBS_RECORD=window: OBS_CAPTURE names no window; every call is recorded");
        return 1;
    }
    *window = 1;
    return 0;
}

int obs_config_load(struct obs_config *cfg, obs_env_lookup lookup)
{
    int bad = 0;
    memset(cfg, 0, sizeof *cfg);
    bad += load_switch(lookup, "OBS_ENABLE", 1, &cfg->enable);
    bad += load_output(lookup, cfg->output, sizeof cfg->output);
    bad += load_trace_export(lookup, &cfg->trace_export, cfg->trace_device, sizeof cfg->trace_device);
    bad += load_summary(lookup, &cfg->summary);
    bad += load_gpu_time(lookup, &cfg->gpu_time);
    bad += load_cupti_path(lookup, cfg->cupti_path, sizeof cfg->cupti_path);
    bad += load_clock(lookup, &cfg->clock);
    bad += load_buffer_records(lookup, &cfg->buffer_records);
    bad += load_phase_text(lookup, "OBS_PHASES", cfg->phases, &cfg->phases_off);
    bad += load_phase_text(lookup, "OBS_STEP", cfg->step, NULL);
    bad += load_phase_text(lookup, "OBS_ITERATION", cfg->iteration, NULL);
    bad += load_phase_text(lookup, "OBS_LAYER", cfg->layer, &cfg->layers_off);
    bad += load_nvtx_domain(lookup, cfg->nvtx_domain);
    bad += load_switch(lookup, "OBS_NVTX_LAUNCH", 0, &cfg->nvtx_launch);
    bad += load_gen_gap(lookup, &cfg->gen_gap_ms);
    bad += load_debug(lookup, cfg->debug_levels);
    bad += load_debug_file(lookup, cfg->debug_file, sizeof cfg->debug_file);
    bad += load_capture(lookup, &cfg->capture);
    bad += load_record(lookup, &cfg->capture, &cfg->record_window);
    return bad;
}
