/* Fault injection for the simulated runtimes: see sim_fault.h. */
#include "sim_fault.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIM_FAULT_MAX 16

struct sim_fault {
    char api[64];
    unsigned long nth;
    int code;
    atomic_ulong calls;
};

static struct sim_fault sim_faults[SIM_FAULT_MAX];
static int sim_fault_count;

static void sim_fault_warn(const char *entry)
{
    char msg[256];
    int n = snprintf(msg, sizeof msg, "obsshim-sim: OBS_SIM_FAIL: ignoring '%.100s' (want api:N[:code])\n", entry);
    if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0)
        return;
}

void sim_fault_init(void)
{
    const char *spec = getenv("OBS_SIM_FAIL");
    char buf[1024], *save = NULL, *entry;
    if (spec == NULL || *spec == '\0')
        return;
    snprintf(buf, sizeof buf, "%s", spec);
    for (entry = strtok_r(buf, ",", &save); entry && sim_fault_count < SIM_FAULT_MAX;
         entry = strtok_r(NULL, ",", &save)) {
        struct sim_fault *f = &sim_faults[sim_fault_count];
        char *colon = strchr(entry, ':'), *end = NULL;
        size_t len = colon ? (size_t)(colon - entry) : 0;
        if (colon == NULL || len == 0 || len >= sizeof f->api) {
            sim_fault_warn(entry);
            continue;
        }
        memcpy(f->api, entry, len);
        f->api[len] = '\0';
        f->nth = strtoul(colon + 1, &end, 10);
        f->code = strstr(f->api, "Malloc") ? 2 : 1;
        if (end && *end == ':')
            f->code = (int)strtol(end + 1, &end, 10);
        if (f->nth == 0 || end == NULL || *end != '\0' || f->code == 0) {
            sim_fault_warn(entry);
            continue;
        }
        atomic_init(&f->calls, 0);
        sim_fault_count++;
    }
}

int sim_fault_status(const char *api)
{
    int i;
    for (i = 0; i < sim_fault_count; i++)
        if (strcmp(sim_faults[i].api, api) == 0 &&
            atomic_fetch_add(&sim_faults[i].calls, 1) + 1 == sim_faults[i].nth)
            return sim_faults[i].code;
    return 0;
}
