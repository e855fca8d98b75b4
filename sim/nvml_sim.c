/* A simulated NVML (libnvidia-ml.so.1) for the simulated driver's GPUs
 * (OBS_SIM_GPUS of them, sim_gpus.h: NVML lists every GPU of the machine,
 * whatever CUDA_VISIBLE_DEVICES says). PyTorch needs one: its CUDA library
 * (c10/cuda/driver_api.cpp) dlopens libnvidia-ml.so.1, requires the seven
 * functions it lists, and, when the library is missing, calls its
 * unresolved nvmlInit_v2 (a NULL pointer) as soon as the caching allocator
 * maps memory with expandable_segments:True (to ask whether the device can
 * use fabric handles). NCCL (2.28, 2.30) looks up 24 functions by their
 * unversioned names (nvmlDeviceGetHandleByIndex, not _v2) and calls a
 * missing one through a NULL pointer (its ncclCommInitRank died so right
 * after nvmlDeviceGetCount_v2): at start-up the count, a handle and the
 * compute capability of every GPU and the P2P status of every pair, then
 * for its topology the PCI information, the PCIe link, NVLink (none here),
 * C2C links (field values), confidential computing (off) and the fabric.
 * What is answered:
 *   init, shutdown, error strings, driver and CUDA versions, the device
 *   count, handles (by index, PCI bus id, UUID; the v1 and v2 names), name,
 *   UUID, index, memory info, compute capability 9.0, PCI information
 *   (nvmlPciInfo_t v3, nvmlPciInfoExt_t v1), a PCIe Gen5 x16 link; no
 *   running process (an empty list); P2P between two GPUs: not supported
 *   (PCIe cards without peer access, as cuDeviceCanAccessPeer says);
 *   confidential computing: off;
 *   NVLink, C2C, platform and fabric information: NVML_ERROR_NOT_SUPPORTED
 *   or "none" (no NVLink, no fabric: what PyTorch then takes as "use POSIX
 *   descriptors", NCCL as "PCIe only").
 * Each call logs a line to OBS_SIM_LOG (kind other), like the driver's. The
 * facts (names, PCI ids, UUIDs, memory) are those of the simulated driver
 * (cudrv_sim_device.c, sim_gpus.c). Only these functions are exported
 * (libnvidia-ml.map). */
#include "nvml_sim.h"
#include "sim_gpus.h"
#include "sim_log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

/* The simulated driver's devices (cudrv_sim_device.c). */
#define SIM_NAME "NVIDIA H100 80GB HBM3 (obsshim simulated)"
#define SIM_PCI_DEVICE_ID 0x233010deu /* device 0x2330, vendor 0x10de: CU_DEVICE_ATTRIBUTE 139 */
#define SIM_PCI_SUBSYSTEM_ID 0x16c110deu
#define SIM_TOTAL_MEM (80ULL * 1024 * 1024 * 1024 - 512ULL * 1024 * 1024)
#define SIM_CUDA_VERSION 13000
#define SIM_DRIVER_VERSION "580.00 (obsshim simulated)"

struct nvml_device {
    int index;
};

static struct nvml_device sim_devices[SIM_GPUS_MAX] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;
static int nvml_refs;
static pthread_mutex_t nvml_lock = PTHREAD_MUTEX_INITIALIZER;

static void nvml_start(void)
{
    sim_log_start(""); /* the driver prints the banner */
    sim_gpus_init();
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

static nvmlReturn_t device_count(const char *api, unsigned int *count)
{
    nvmlReturn_t r = need_init(count);
    if (r == NVML_SUCCESS)
        *count = sim_gpus_count();
    return logged(api, r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    return device_count("nvmlDeviceGetCount_v2", count);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
    return device_count("nvmlDeviceGetCount", count);
}

/* v1 counted only the GPUs the caller may use: all of them here. */
static nvmlReturn_t handle_by_index(const char *api, unsigned int index, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(device);
    if (r == NVML_SUCCESS && index >= sim_gpus_count())
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *device = &sim_devices[index];
    return logged(api, r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index("nvmlDeviceGetHandleByIndex_v2", index, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return handle_by_index("nvmlDeviceGetHandleByIndex", index, device);
}

/* The GPU a bus id names: "[domain:]bus:device.function" in hex, any
 * case, the domain of 4 or 8 digits (NVML's own form, or the driver's);
 * -1 for none. */
static int gpu_of_bus_id(const char *id)
{
    const char *colon = strchr(id, ':'), *bus_text = id;
    unsigned long domain = 0, bus;
    char *end;
    if (colon == NULL)
        return -1;
    if (strchr(colon + 1, ':') != NULL) { /* a domain first */
        domain = strtoul(id, &end, 16);
        if (end != colon)
            return -1;
        bus_text = colon + 1;
    }
    bus = strtoul(bus_text, &end, 16);
    if (end == bus_text || *end != ':' || domain != 0)
        return -1;
    for (unsigned k = 0; k < sim_gpus_count(); k++)
        if (sim_gpu_pci_bus(k) == bus)
            return (int)k;
    return -1;
}

static nvmlReturn_t handle_by_bus_id(const char *api, const char *pciBusId, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(pciBusId && device ? device : NULL);
    int k = r == NVML_SUCCESS ? gpu_of_bus_id(pciBusId) : -1;
    if (r == NVML_SUCCESS && k < 0)
        r = NVML_ERROR_NOT_FOUND;
    if (r == NVML_SUCCESS)
        *device = &sim_devices[k];
    return logged(api, r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
    return handle_by_bus_id("nvmlDeviceGetHandleByPciBusId_v2", pciBusId, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
    return handle_by_bus_id("nvmlDeviceGetHandleByPciBusId", pciBusId, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    nvmlReturn_t r = need_init(uuid && device ? device : NULL);
    int found = -1;
    for (unsigned k = 0; r == NVML_SUCCESS && k < sim_gpus_count(); k++) {
        char text[48];
        sim_gpu_uuid_text(k, text);
        if (strcmp(uuid, text) == 0)
            found = (int)k;
    }
    if (r == NVML_SUCCESS && found < 0)
        r = NVML_ERROR_NOT_FOUND;
    if (r == NVML_SUCCESS)
        *device = &sim_devices[found];
    return logged("nvmlDeviceGetHandleByUUID", r);
}

static int valid_device(nvmlDevice_t device)
{
    return device >= &sim_devices[0] && device < &sim_devices[sim_gpus_count()];
}

static nvmlReturn_t need_device(nvmlDevice_t device, const void *out)
{
    nvmlReturn_t r = need_init(out);
    if (r == NVML_SUCCESS && !valid_device(device))
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
    char text[48];
    if (r == NVML_SUCCESS) {
        sim_gpu_uuid_text((unsigned)device->index, text);
        r = copy_text(uuid, length, text);
    }
    return logged("nvmlDeviceGetUUID", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    nvmlReturn_t r = need_device(device, index);
    if (r == NVML_SUCCESS)
        *index = (unsigned)device->index;
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

/* What the simulated GPUs do not have (NVLink, a platform, a fabric):
 * NOT_SUPPORTED for a valid device and output. */
static nvmlReturn_t not_supported(const char *api, nvmlDevice_t device, const void *out)
{
    nvmlReturn_t r = need_device(device, out);
    return logged(api, r == NVML_SUCCESS ? NVML_ERROR_NOT_SUPPORTED : r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link, int *type)
{
    (void)link;
    return not_supported("nvmlDeviceGetNvLinkRemoteDeviceType", device, type);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link, void *pci)
{
    (void)link;
    return not_supported("nvmlDeviceGetNvLinkRemotePciInfo_v2", device, pci);
}

/* nvmlGpuFabricInfoV_t: version (its size in the low 24 bits), cluster
 * UUID[16], status, clique id, state (a byte), ... A GPU outside any
 * fabric (one PCIe card) answers success with state NOT_SUPPORTED (0),
 * status NOT_SUPPORTED, as NVML does for it. */
#define FABRIC_INFO_MIN_SIZE 29u

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

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
    nvmlReturn_t r = need_device(device, major && minor ? major : NULL);
    if (r == NVML_SUCCESS) {
        *major = 9;
        *minor = 0;
    }
    return logged("nvmlDeviceGetCudaComputeCapability", r);
}

/* nvmlGpuP2PStatus_t: OK 0 ... NOT_SUPPORTED 5. A GPU with itself: OK;
 * two GPUs: no peer access (PCIe cards, no NVLink), for every capability. */
#define P2P_STATUS_OK 0
#define P2P_STATUS_NOT_SUPPORTED 5
#define P2P_CAPS_INDEX_UNKNOWN 5

NVML_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, int p2pIndex,
                                                int *p2pStatus)
{
    nvmlReturn_t r = need_device(device1, p2pStatus);
    if (r == NVML_SUCCESS && (!valid_device(device2) || p2pIndex < 0 || p2pIndex >= P2P_CAPS_INDEX_UNKNOWN))
        r = NVML_ERROR_INVALID_ARGUMENT;
    if (r == NVML_SUCCESS)
        *p2pStatus = device1 == device2 ? P2P_STATUS_OK : P2P_STATUS_NOT_SUPPORTED;
    return logged("nvmlDeviceGetP2PStatus", r);
}

/* nvmlPciInfo_t as NVML 12's nvml.h has it (v3, 68 bytes). */
struct nvml_pci_info {
    char bus_id_legacy[16]; /* "0000:18:00.0" */
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32]; /* "00000000:18:00.0" */
};

static void pci_info(const struct nvml_device *d, struct nvml_pci_info *out)
{
    memset(out, 0, sizeof *out);
    sim_gpu_bus_id((unsigned)d->index, out->bus_id_legacy);
    sim_gpu_bus_id_nvml((unsigned)d->index, out->bus_id);
    out->bus = sim_gpu_pci_bus((unsigned)d->index);
    out->pci_device_id = SIM_PCI_DEVICE_ID;
    out->pci_subsystem_id = SIM_PCI_SUBSYSTEM_ID;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, void *pci)
{
    nvmlReturn_t r = need_device(device, pci);
    if (r == NVML_SUCCESS)
        pci_info(device, pci);
    return logged("nvmlDeviceGetPciInfo_v3", r);
}

/* nvmlPciInfoExt_v1_t: version, domain, bus, device, the two ids, base and
 * sub class, then the bus id (32 bytes); version = its size | 1 << 24. */
struct nvml_pci_info_ext {
    unsigned version, domain, bus, device, pci_device_id, pci_subsystem_id, base_class, sub_class;
    char bus_id[32];
};
#define PCI_INFO_EXT_V1 ((unsigned)sizeof(struct nvml_pci_info_ext) | 1u << 24)

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, void *info)
{
    nvmlReturn_t r = need_device(device, info);
    struct nvml_pci_info_ext *e = info;
    if (r == NVML_SUCCESS && e->version != PCI_INFO_EXT_V1)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (r == NVML_SUCCESS) {
        struct nvml_pci_info p;
        pci_info(device, &p);
        memset(e, 0, sizeof *e);
        e->version = PCI_INFO_EXT_V1;
        e->bus = p.bus;
        e->pci_device_id = p.pci_device_id;
        e->pci_subsystem_id = p.pci_subsystem_id;
        e->base_class = 0x03; /* display controller */
        e->sub_class = 0x02;  /* 3D controller */
        memcpy(e->bus_id, p.bus_id, sizeof e->bus_id);
    }
    return logged("nvmlDeviceGetPciInfoExt", r);
}

/* A PCIe Gen5 x16 link: NVML_PCIE_LINK_MAX_SPEED_32000MBPS is 5. */
static nvmlReturn_t link_value(const char *api, nvmlDevice_t device, unsigned *out, unsigned value)
{
    nvmlReturn_t r = need_device(device, out);
    if (r == NVML_SUCCESS)
        *out = value;
    return logged(api, r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieLinkMaxSpeed(nvmlDevice_t device, unsigned int *maxSpeed)
{
    return link_value("nvmlDeviceGetPcieLinkMaxSpeed", device, maxSpeed, 5);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen)
{
    return link_value("nvmlDeviceGetCurrPcieLinkGeneration", device, currLinkGen, 5);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth)
{
    return link_value("nvmlDeviceGetCurrPcieLinkWidth", device, currLinkWidth, 16);
}

/* No NVLink: each link's state, capability and far end are not supported. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, int *isActive)
{
    (void)link;
    return not_supported("nvmlDeviceGetNvLinkState", device, isActive);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkCapability(nvmlDevice_t device, unsigned int link, int capability,
                                                       unsigned int *capResult)
{
    (void)link;
    (void)capability;
    return not_supported("nvmlDeviceGetNvLinkCapability", device, capResult);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo(nvmlDevice_t device, unsigned int link, void *pci)
{
    (void)link;
    return not_supported("nvmlDeviceGetNvLinkRemotePciInfo", device, pci);
}

/* nvmlFieldValue_t (40 bytes): field and scope ids, timestamp, latency,
 * value type, the value's own status, the value. The link counts are
 * answered (NVLink and C2C: 0 links), every other field is not supported. */
struct nvml_field_value {
    unsigned field_id, scope_id;
    long long timestamp, latency_usec;
    int value_type, status;
    unsigned long long value;
};
_Static_assert(sizeof(struct nvml_field_value) == 40, "nvmlFieldValue_t is 40 bytes");
#define FI_DEV_NVLINK_LINK_COUNT 91
#define FI_DEV_C2C_LINK_COUNT 170
#define VALUE_TYPE_UNSIGNED_INT 1

NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, void *values)
{
    nvmlReturn_t r = need_device(device, values);
    struct nvml_field_value *v = values;
    if (r == NVML_SUCCESS && valuesCount < 0)
        r = NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; r == NVML_SUCCESS && i < valuesCount; i++) {
        v[i].timestamp = 0;
        v[i].latency_usec = 0;
        v[i].value = 0;
        v[i].value_type = VALUE_TYPE_UNSIGNED_INT;
        v[i].status = v[i].field_id == FI_DEV_NVLINK_LINK_COUNT || v[i].field_id == FI_DEV_C2C_LINK_COUNT
                          ? NVML_SUCCESS
                          : NVML_ERROR_NOT_SUPPORTED;
    }
    return logged("nvmlDeviceGetFieldValues", r);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPlatformInfo(nvmlDevice_t device, void *platformInfo)
{
    return not_supported("nvmlDeviceGetPlatformInfo", device, platformInfo);
}

/* Confidential computing off: nvmlConfComputeSystemState_t (environment,
 * feature, devtools mode) and nvmlSystemConfComputeSettings_v1_t (a
 * version, then those and the multi-GPU mode), all 0. */
NVML_EXPORT nvmlReturn_t nvmlSystemGetConfComputeState(void *state)
{
    nvmlReturn_t r = need_init(state);
    if (r == NVML_SUCCESS)
        memset(state, 0, 3 * sizeof(unsigned));
    return logged("nvmlSystemGetConfComputeState", r);
}

#define CONF_COMPUTE_SETTINGS_V1 (5u * (unsigned)sizeof(unsigned) | 1u << 24)

NVML_EXPORT nvmlReturn_t nvmlSystemGetConfComputeSettings(void *settings)
{
    nvmlReturn_t r = need_init(settings);
    unsigned *s = settings;
    if (r == NVML_SUCCESS && s[0] != CONF_COMPUTE_SETTINGS_V1)
        r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (r == NVML_SUCCESS)
        memset(s + 1, 0, 4 * sizeof(unsigned));
    return logged("nvmlSystemGetConfComputeSettings", r);
}
