/* The simulated machine's GPUs: see sim_gpus.h. */
#include "sim_gpus.h"
#include "sim_log.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const unsigned char gpu_pci_bus[SIM_GPUS_MAX] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
/* "obsshim-sim-h100": GPU k ends in '0' + k. */
static const unsigned char gpu0_uuid[16] = {0x6f, 0x62, 0x73, 0x73, 0x68, 0x69, 0x6d, 0x2d,
                                           0x73, 0x69, 0x6d, 0x2d, 0x68, 0x31, 0x30, 0x30};

static pthread_once_t gpus_once = PTHREAD_ONCE_INIT;
static unsigned gpus_count = 1;
static unsigned gpus_visible;
static int gpus_map[SIM_GPUS_MAX]; /* ordinal -> machine index */

static void warn(const char *what, const char *value)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "obsshim-sim: %s=%.200s: %s\n", what, value,
                     strcmp(what, "OBS_SIM_GPUS") == 0 ? "not a number from 1 to 8; 1 GPU"
                                                      : "an entry names no GPU; the list stops there");
    if (n > 0)
        sim_write_all(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

/* The machine index entry names (an index, or a UUID or unique prefix of
 * one), -1 for none. */
static int entry_gpu(const char *entry, size_t len)
{
    char digits[40];
    size_t n = 0, i;
    int found = -1;
    if (len > 0 && isdigit((unsigned char)entry[0])) {
        unsigned v = 0;
        for (i = 0; i < len; i++) {
            if (!isdigit((unsigned char)entry[i]) || v > 1000)
                return -1;
            v = v * 10 + (unsigned)(entry[i] - '0');
        }
        return v < gpus_count ? (int)v : -1;
    }
    if (len <= 4 || strncmp(entry, "GPU-", 4) != 0)
        return -1;
    for (i = 4; i < len; i++) {
        if (entry[i] == '-')
            continue;
        if (!isxdigit((unsigned char)entry[i]) || n + 1 >= sizeof digits)
            return -1;
        digits[n++] = (char)tolower((unsigned char)entry[i]);
    }
    digits[n] = '\0';
    if (n == 0)
        return -1;
    for (unsigned k = 0; k < gpus_count; k++) {
        unsigned char u[16];
        char hex[33];
        sim_gpu_uuid(k, u);
        for (i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", u[i]);
        if (strncmp(hex, digits, n) == 0) {
            if (found >= 0)
                return -1; /* not unique */
            found = (int)k;
        }
    }
    return found;
}

static void gpus_read(void)
{
    const char *n = getenv("OBS_SIM_GPUS");
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");

    if (n != NULL && *n) {
        char *end;
        long v = strtol(n, &end, 10);
        if (*end != '\0' || v < 1 || v > SIM_GPUS_MAX)
            warn("OBS_SIM_GPUS", n);
        else
            gpus_count = (unsigned)v;
    }
    if (visible == NULL) {
        for (unsigned k = 0; k < gpus_count; k++)
            gpus_map[gpus_visible++] = (int)k;
        return;
    }
    for (const char *p = visible; *p && gpus_visible < gpus_count;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int k = entry_gpu(p, len);
        for (unsigned d = 0; k >= 0 && d < gpus_visible; d++)
            if (gpus_map[d] == k)
                k = -1; /* listed twice */
        if (k < 0) {
            warn("CUDA_VISIBLE_DEVICES", visible);
            break;
        }
        gpus_map[gpus_visible++] = k;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
}

void sim_gpus_init(void)
{
    pthread_once(&gpus_once, gpus_read);
}

unsigned sim_gpus_count(void)
{
    sim_gpus_init();
    return gpus_count;
}

unsigned sim_gpus_visible(void)
{
    sim_gpus_init();
    return gpus_visible;
}

int sim_gpus_machine_index(int ordinal)
{
    sim_gpus_init();
    return ordinal >= 0 && (unsigned)ordinal < gpus_visible ? gpus_map[ordinal] : -1;
}

unsigned sim_gpu_pci_bus(unsigned k)
{
    return gpu_pci_bus[k % SIM_GPUS_MAX];
}

void sim_gpu_uuid(unsigned k, unsigned char out[16])
{
    memcpy(out, gpu0_uuid, sizeof gpu0_uuid);
    out[15] = (unsigned char)(0x30 + k % SIM_GPUS_MAX);
}

void sim_gpu_uuid_text(unsigned k, char out[48])
{
    unsigned char u[16];
    sim_gpu_uuid(k, u);
    snprintf(out, 48, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

void sim_gpu_bus_id(unsigned k, char out[16])
{
    snprintf(out, 16, "0000:%02x:00.0", sim_gpu_pci_bus(k));
}

void sim_gpu_bus_id_nvml(unsigned k, char out[32])
{
    snprintf(out, 32, "00000000:%02x:00.0", sim_gpu_pci_bus(k));
}
