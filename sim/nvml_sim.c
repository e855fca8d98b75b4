/* A simulated NVML (libnvidia-ml.so.1) for the simulated driver's one
 * device. PyTorch needs one: its CUDA library (c10/cuda/driver_api.cpp)
 * dlopens libnvidia-ml.so.1, requires the seven functions it lists, and,
 * when the library is missing, calls its unresolved nvmlInit_v2 (a NULL
 * pointer) as soon as the caching allocator maps memory with
 * expandable_segments:True (to ask whether the device can use fabric
 * handles). What is answered:
 *   init, shutdown, error strings, driver and CUDA versions, the device
 *   count, handles (by index, PCI bus id, UUID), name, UUID, index,
 *   memory info; no running process (an empty list);
 *   NVLink and fabric information: NVML_ERROR_NOT_SUPPORTED (one GPU, no
 *   NVLink, no fabric: what PyTorch then takes as "use POSIX descriptors").
 * Each call logs a line to OBS_SIM_LOG (kind other), like the driver's. The
 * facts (names, PCI id, UUID, memory) are those of the simulated driver
 * (cudrv_sim_device.c). Only these functions are exported (libnvidia-ml.map). */
#include "nvml_sim.h"
#include "sim_log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The simulated driver's device (cudrv_sim_device.c). */
#define SIM_NAME "NVIDIA H100 80GB HBM3 (obsshim simulated)"
#define SIM_PCI_BUS_ID "0000:18:00.0"
#define SIM_UUID "GPU-6f627373-6869-6d2d-7369-6d2d68313030"
#define SIM_TOTAL_MEM (80ULL * 1024 * 1024 * 1024 - 512ULL * 1024 * 1024)
#define SIM_CUDA_VERSION 13000
#define SIM_DRIVER_VERSION "580.00 (obsshim simulated)"

struct nvml_device {
    int index;
};

static struct nvml_device sim_device = {0};
static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static int nvml_refs;
static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;

static void nvml_start(void)
{
    sim_log_start(""); /* the driver prints the banner */
}

static nvmlReturn_t logged(const char *api, nvmlReturn_t status)
{
    sim_log_line(api, "other", NULL, 0, 0, -1, status);
    return status;
}

static int initialised(void)
{
    int n;
    pthread_mutex_lock(&nvml_lock);
    n = nvml_refs;
    pthread_mutex_unlock(&nvml_lock);
    return n > 0;
}

static nvmlReturn_t init(const char *api)
{
    pthread_once(&nvml_once, nvml_start);
    pthread_mutex_lock(&nvml_lock);
    nvml_refs++;
    pthread_mutex_unlock(&nvml_lock);
    return logged(api, NVML_SUCCESS);
}

NVML_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    return init("nvmlInit_v2");
}

NVML_EXPORT nvmlReturn_t nvmlInit(void)
{
    return init("nvmlInit");
}

NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    (void)flags;
    return init("nvmlInitWithFlags");
}

NVML_EXPORT nvmlReturn_t nvmlShutdown(void)
{
    nvmlReturn_t r = NVML_SUCCESS;
    pthread_once(&nvml_once, nvml_start);
    pthread_mutex_lock(&nvml_lock);
    if (nvml_refs == 0)
        r = NVML_ERROR_UNINITIALIZED;
    else
        nvml_refs--;
    pthread_mutex_unlock(&nvml_lock);
    return logged("nvmlShutdown", r);
}

NVML_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    }
    return "Unknown Error";
}

/* Every entry point but init starts here: the call is logged by the caller. */
static nvmlReturn_t need_init(const void *out)
{
    pthread_once(&nvml_once, nvml_start);
    if (!initialised())
        return NVML_ERROR_UNINITIALIZED;
    return out ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

static nvmlReturn_t copy_text(char *out, unsigned int length, const char *text)
{
    if (strlen(text) + 1 > length)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    nvmlReturn_t r = need_init(version);
    if (r == NVML_SUCCESS)
        r = copy_text(version, length, SIM_DRIVER_VERSION);
    return logged("nvmlSystemGetDriverVersion", r);
}

static nvmlReturn_t cuda_version(const char *api, int *v)
{
    nvmlReturn_t r = need_init(v);
    if (r == NVML_SUCCESS)
        *v = SIM_CUDA_VERSION;
    return logged(api, r);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion", v);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    return cuda_version("nvmlSystemGetCudaDriverVersion_v2", v);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    nvmlReturn_t r = need_init(count);
    if (r == NVML_SUCCESS)
        *count = 1;
    return logged("nvmlDeviceGetCount_v2", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(device);
    if (r == NVML_SUCCESS && index != 0)
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *device = &sim_device;
    return logged("nvmlDeviceGetHandleByIndex_v2", r);
}

/* Bus ids compare without case, with or without the 8-digit domain. */
static int same_bus_id(const char *a)
{
    const char *ours = SIM_PCI_BUS_ID;
    size_t la = strlen(a), lo = strlen(ours);
    if (la > lo)
        a += la - lo; /* "00000000:18:00.0" */
    else if (la < lo)
        ours += lo - la; /* "18:00.0" */
    return strcasecmp(a, ours) == 0;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(pciBusId && device ? device : NULL);
    if (r == NVML_SUCCESS && !same_bus_id(pciBusId))
        r = NVML_ERROR_NOT_FOUND;
    if (r == NVML_SUCCESS)
        *device = &sim_device;
    return logged("nvmlDeviceGetHandleByPciBusId_v2", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(uuid && device ? device : NULL);
    if (r == NVML_SUCCESS && strcmp(uuid, SIM_UUID) != 0)
        r = NVML_ERROR_NOT_FOUND;
    if (r == NVML_SUCCESS)
        *device = &sim_device;
    return logged("nvmlDeviceGetHandleByUUID", r);
}

static nvmlReturn_t need_device(nvmlDevice_t device, const void *out)
{
    nvmlReturn_t r = need_init(out);
    if (r == NVML_SUCCESS && device != &sim_device)
        r = NVML_ERROR_INVALID_ARGUMENT;
    return r;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    nvmlReturn_t r = need_device(device, name);
    if (r == NVML_SUCCESS)
        r = copy_text(name, length, SIM_NAME);
    return logged("nvmlDeviceGetName", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    nvmlReturn_t r = need_device(device, uuid);
    if (r == NVML_SUCCESS)
        r = copy_text(uuid, length, SIM_UUID);
    return logged("nvmlDeviceGetUUID", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    nvmlReturn_t r = need_device(device, index);
    if (r == NVML_SUCCESS)
        *index = 0;
    return logged("nvmlDeviceGetIndex", r);
}

/* The driver's memory is host memory: no use is tracked here, all free. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    nvmlReturn_t r = need_device(device, memory);
    if (r == NVML_SUCCESS) {
        memory->total = SIM_TOTAL_MEM;
        memory->used = 0;
        memory->free = SIM_TOTAL_MEM;
    }
    return logged("nvmlDeviceGetMemoryInfo", r);
}

/* No process list is kept: none (count 0), whatever the array's size. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                              void *infos)
{
    nvmlReturn_t r = need_device(device, infoCount);
    (void)infos;
    if (r == NVML_SUCCESS)
        *infoCount = 0;
    return logged("nvmlDeviceGetComputeRunningProcesses", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int *type)
{
    nvmlReturn_t r = need_device(device, type);
    (void)link;
    return logged("nvmlDeviceGetNvLinkRemoteDeviceType", r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, void *pci)
{
    nvmlReturn_t r = need_device(device, pci);
    (void)link;
    return logged("nvmlDeviceGetNvLinkRemotePciInfo_v2", r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r);
}

/* nvmlGpuFabricInfoV_t: version (its size in the low 24 bits), cluster
 * UUID[16], status, clique id, state (a byte), ... A GPU outside any
 * fabric (one PCIe card) answers success with state NOT_SUPPORTED (0),
 * status NOT_SUPPORTED, as NVML does for it. */
#define FABRIC_INFO_MIN_SIZE 29u
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25

NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, void *info)
{
    nvmlReturn_t r = need_device(device, info);
    if (r == NVML_SUCCESS) {
        unsigned char *p = info;
        unsigned version;
        memcpy(&version, p, sizeof version);
        if ((version & 0xffffffu) < FABRIC_INFO_MIN_SIZE) {
            r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        } else {
            nvmlReturn_t status = NVML_ERROR_NOT_SUPPORTED;
            unsigned clique = 0;
            memset(p + 4, 0, 16);
            memcpy(p + 20, &status, sizeof status);
            memcpy(p + 24, &clique, sizeof clique);
            p[28] = 0; /* NVML_GPU_FABRIC_STATE_NOT_SUPPORTED */
        }
    }
    return logged("nvmlDeviceGetGpuFabricInfoV", r);
}
