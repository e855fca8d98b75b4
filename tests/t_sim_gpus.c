/* The simulated machine of several GPUs (OBS_SIM_GPUS) and what NCCL asks
 * of the simulated driver and NVML (docs/frameworks.md, "NCCL"), in this
 * process with no framework (real NCCL on it: tests/t_frameworks_nccl):
 *   - OBS_SIM_GPUS=4: four devices with their own PCI bus ids (attribute
 *     33, cuDeviceGetPCIBusId, cuDeviceGetByPCIBusId) and UUIDs, a primary
 *     context each (cuCtxGetDevice, the ordinal and context of memory made
 *     there), no peer access (cuDeviceCanAccessPeer, P2P attributes);
 *   - CUDA_VISIBLE_DEVICES (in child processes): indices and UUIDs in the
 *     order given, the list cut at an entry that names no GPU or one
 *     listed already, empty: none; a bad OBS_SIM_GPUS: one GPU;
 *   - cuMem allocations on the host (location HOST_NUMA: NCCL's probe and
 *     its host buffers): granularity, mapping, access for the device and
 *     the host, host memory to pointer attributes; cudaMalloc memory is of
 *     the legacy IPC kind, a mapping is not (ncclCommRegister tells them
 *     apart so);
 *   - memory pools: create, attributes (release threshold, used memory and
 *     its high mark), stream-ordered allocation from a pool and from the
 *     device's default, free, destroy; not while capturing;
 *   - NVML: four GPUs under the names NCCL looks up (v1 and v2), by index,
 *     bus id and UUID, compute capability, P2P status, PCI information (v3
 *     and ext, its version checked), PCIe link, NVLink and field values,
 *     confidential computing settings;
 *   - OBS_SIM_LOG's name: %q{VAR} and %% expanded. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "abi/cuda_driver_abi.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "sim_dl.h"


typedef int (*fn_count)(int *);
typedef int (*fn_bus_id)(char *, int, int);
typedef int (*fn_by_bus_id)(int *, const char *);
typedef int (*fn_uuid)(unsigned char *, int);
typedef int (*fn_ctx_device)(int *);
typedef int (*fn_peer)(int *, int, int);
typedef int (*fn_p2p_attr)(int *, int, int, int);
typedef int (*fn_props_of)(void *, unsigned long long);
typedef int (*fn_pool_create)(void **, const void *);
typedef int (*fn_pool)(void *);
typedef int (*fn_pool_attr)(void *, int, void *);
typedef int (*fn_dev_pool)(void **, int);
typedef int (*fn_alloc_async)(obs_CUdeviceptr *, size_t, obs_CUstream);
typedef int (*fn_alloc_pool_async)(obs_CUdeviceptr *, size_t, void *, obs_CUstream);
typedef int (*fn_free_async)(obs_CUdeviceptr, obs_CUstream);
typedef int (*fn_stream_create)(obs_CUstream *, unsigned);

#define MIB (1024u * 1024u)


/* ---- which devices a process sees -------------------------------------------------------- */

/* In a child with OBS_SIM_GPUS=gpus and CUDA_VISIBLE_DEVICES=visible
 * (NULL: unset): "<count> <bus id> ...", the devices the driver shows. */
static char *devices_seen(const char *gpus, const char *visible)
{
    static char out[256];
    int fds[2], status;
    pid_t pid;
    ssize_t n;
    if (pipe(fds) != 0)
        bail("pipe");
    pid = fork();
    if (pid == 0) {
        char line[256];
        int count = -1, len;
        close(fds[0]);
        setenv("OBS_SIM_GPUS", gpus, 1);
        if (visible)
            setenv("CUDA_VISIBLE_DEVICES", visible, 1);
        else
            unsetenv("CUDA_VISIBLE_DEVICES");
        setenv("OBS_SIM_LOG", "", 1);
        void *lib = dlopen(test_path(test_builddir(), "sim/.libs/libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL || ((fn_init)dlsym(lib, "cuInit"))(0) != 0 || ((fn_count)dlsym(lib, "cuDeviceGetCount"))(&count))
            _exit(2);
        len = snprintf(line, sizeof line, "%d", count);
        for (int d = 0; d < count; d++) {
            char bus[32];
            ((fn_bus_id)dlsym(lib, "cuDeviceGetPCIBusId"))(bus, sizeof bus, d);
            len += snprintf(line + len, sizeof line - (size_t)len, " %s", bus);
        }
        if (write(fds[1], line, (size_t)len) != len)
            _exit(3);
        _exit(0);
    }
    close(fds[1]);
    n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    waitpid(pid, &status, 0);
    out[n > 0 ? n : 0] = '\0';
    return out;
}

static void test_visible_devices(void)
{
    is_string("4 0000:18:00.0 0000:2a:00.0 0000:3a:00.0 0000:5d:00.0", devices_seen("4", NULL),
              "OBS_SIM_GPUS=4: four devices, a DGX H100's bus ids");
    is_string("1 0000:18:00.0", devices_seen("1", NULL), "OBS_SIM_GPUS=1: the one device of old");
    is_string("2 0000:3a:00.0 0000:18:00.0", devices_seen("4", "2,0"),
              "CUDA_VISIBLE_DEVICES=2,0: those two, in that order");
    is_string("1 0000:2a:00.0", devices_seen("4", "GPU-6f627373-6869-6d2d-7369-6d2d68313031"),
              "a GPU named by its UUID");
    is_string("1 0000:5d:00.0", devices_seen("4", "GPU-6f62737368696d2d73696d2d68313033"),
              "dashes left out (all of it: the UUIDs differ in their last digit only)");
    is_string("1 0000:2a:00.0", devices_seen("4", "1,7,2"), "the list stops at an index past the last GPU");
    is_string("1 0000:2a:00.0", devices_seen("4", "1,1,2"), "and at a GPU listed twice");
    is_string("0", devices_seen("4", ""), "empty: no device");
    is_string("0", devices_seen("4", "GPU-6f6273"), "a prefix that several UUIDs share names none");
    is_string("1 0000:18:00.0", devices_seen("9", NULL), "OBS_SIM_GPUS=9 (past 8): one GPU");
}

/* ---- four devices in this process ---------------------------------------------------------- */

static void test_devices(void)
{
    static const int buses[4] = {0x18, 0x2a, 0x3a, 0x5d};
    unsigned char uuid[4][16];
    obs_CUcontext ctx2 = NULL, ctx0 = NULL, got = NULL;
    obs_CUdeviceptr d = 0;
    char bus[32];
    int count = 0, v = -1, dev = -1, distinct = 1, attrs_ok = 1;

    is_int(0, CALL(fn_count, cuDeviceGetCount, &count), "cuDeviceGetCount");
    is_int(4, count, "four devices");
    for (int i = 0; i < 4; i++) {
        CALL(fn_attr, cuDeviceGetAttribute, &v, 33, i);
        attrs_ok &= v == buses[i];
        CALL(fn_uuid, cuDeviceGetUuid, uuid[i], i);
        for (int j = 0; j < i; j++)
            distinct &= memcmp(uuid[i], uuid[j], 16) != 0;
    }
    ok(attrs_ok, "each with its bus id (attribute 33)");
    ok(distinct && uuid[3][15] == '3', "and its own UUID (\"obsshim-sim-h103\" for device 3)");
    is_int(0, CALL(fn_bus_id, cuDeviceGetPCIBusId, bus, sizeof bus, 3), "cuDeviceGetPCIBusId");
    is_string("0000:5d:00.0", bus, "device 3's");
    is_int(0, CALL(fn_by_bus_id, cuDeviceGetByPCIBusId, &dev, "00000000:3A:00.0"), "cuDeviceGetByPCIBusId");
    is_int(2, dev, "NVML's long form, upper case: device 2");
    is_int(101, CALL(fn_by_bus_id, cuDeviceGetByPCIBusId, &dev, "0000:19:00.0"), "a bus id no device has: 101");
    is_int(101, CALL(fn_attr, cuDeviceGetAttribute, &v, 33, 4), "device 4: invalid device (101)");

    is_int(0, CALL(fn_retain, cuDevicePrimaryCtxRetain, &ctx2, 2), "device 2's primary context");
    is_int(0, CALL(fn_retain, cuDevicePrimaryCtxRetain, &ctx0, 0), "device 0's");
    ok(ctx2 != NULL && ctx0 != NULL && ctx2 != ctx0, "two contexts");
    CALL(fn_ctx, cuCtxSetCurrent, ctx2);
    is_int(0, CALL(fn_ctx_device, cuCtxGetDevice, &dev), "cuCtxGetDevice");
    is_int(2, dev, "the current context's device");
    is_int(0, CALL(fn_alloc, cuMemAlloc_v2, &d, 4096), "cuMemAlloc_v2 there");
    CALL(fn_ptr_attr, cuPointerGetAttribute, &v, 9, d); /* DEVICE_ORDINAL */
    is_int(2, v, "its memory is device 2's");
    CALL(fn_ptr_attr, cuPointerGetAttribute, &got, 1, d); /* CONTEXT */
    ok(got == ctx2, "and of its context");
    {
        _Bool legacy = 0;
        CALL(fn_ptr_attr, cuPointerGetAttribute, &legacy, 10, d); /* IS_LEGACY_CUDA_IPC_CAPABLE */
        ok(legacy, "cuMemAlloc memory is of the legacy IPC kind (as NVIDIA's driver says)");
    }
    CALL(fn_free, cuMemFree_v2, d);
    v = -1;
    is_int(0, CALL(fn_peer, cuDeviceCanAccessPeer, &v, 0, 1), "cuDeviceCanAccessPeer");
    is_int(0, v, "no peer access");
    v = -1;
    is_int(0, CALL(fn_p2p_attr, cuDeviceGetP2PAttribute, &v, 2, 0, 1), "cuDeviceGetP2PAttribute (access)");
    is_int(0, v, "0");
}

/* ---- cuMem memory on the host ----------------------------------------------------------------- */


static void test_host_numa(void)
{
    struct prop prop = {1, 1, 3, 0, NULL, 0, 0, 0, {0}}, back;
    struct access_desc access[2] = {{1, 2, 3}, {3, 0, 3}};
    unsigned long long h = 0;
    obs_CUdeviceptr va = 0;
    size_t gran = 0;
    unsigned type = 0;
    _Bool legacy = 1;

    is_int(0, CALL(fn_granularity, cuMemGetAllocationGranularity, &gran, &prop, 0),
           "granularity of host memory (location HOST_NUMA, node 0: NCCL's probe)");
    is_int(2 * MIB, (long long)gran, "2 MiB");
    prop.loc_id = 1;
    is_int(1, CALL(fn_granularity, cuMemGetAllocationGranularity, &gran, &prop, 0), "NUMA node 1: invalid value");
    prop.loc_id = 0;
    is_int(0, CALL(fn_create, cuMemCreate, &h, 2 * MIB, &prop, 0), "cuMemCreate on the host");
    is_int(0, CALL(fn_reserve, cuMemAddressReserve, &va, 2 * MIB, 0, 0, 0), "reserve");
    is_int(0, CALL(fn_map, cuMemMap, va, 2 * MIB, 0, h, 0), "map");
    is_int(0, CALL(fn_set_access, cuMemSetAccess, va, 2 * MIB, access, 2), "access for device 2 and the host");
    ((char *)(uintptr_t)va)[5] = 'x';
    CALL(fn_ptr_attr, cuPointerGetAttribute, &type, 2, va);
    is_int(1, type, "host memory to pointer attributes");
    CALL(fn_ptr_attr, cuPointerGetAttribute, &legacy, 10, va);
    ok(!legacy, "a cuMem mapping is not of the legacy IPC kind");
    memset(&back, 0, sizeof back);
    is_int(0, CALL(fn_props_of, cuMemGetAllocationPropertiesFromHandle, &back, h),
           "cuMemGetAllocationPropertiesFromHandle");
    ok(back.loc_type == 3 && back.loc_id == 0, "gives its location back (HOST_NUMA 0)");
    CALL(fn_unmap, cuMemUnmap, va, 2 * MIB);
    CALL(fn_release, cuMemRelease, h);
    CALL(fn_addr_free, cuMemAddressFree, va, 2 * MIB);
}

/* ---- memory pools ---------------------------------------------------------------------------- */

struct pool_props {
    int alloc_type, handle_types, loc_type, loc_id;
    void *win32;
    size_t max_size;
    unsigned short usage;
    unsigned char reserved[54];
};

static void test_pools(void)
{
    struct pool_props props;
    void *pool = NULL, *def = NULL, *cur = NULL;
    obs_CUstream s = NULL;
    obs_CUgraph g = NULL;
    obs_CUdeviceptr a = 0, b = 0;
    uint64_t threshold = ~(uint64_t)0, value = 0;

    memset(&props, 0, sizeof props);
    props.alloc_type = 1, props.loc_type = 1, props.loc_id = 2;
    is_int(0, CALL(fn_pool_create, cuMemPoolCreate, &pool, &props), "cuMemPoolCreate on device 2 (NCCL's)");
    is_int(0, CALL(fn_pool_attr, cuMemPoolSetAttribute, pool, 4, &threshold), "its release threshold set");
    is_int(0, CALL(fn_pool_attr, cuMemPoolGetAttribute, pool, 4, &value), "and read");
    ok(value == threshold, "as set");
    CALL(fn_stream_create, cuStreamCreate, &s, 1);
    is_int(0, CALL(fn_alloc_pool_async, cuMemAllocFromPoolAsync, &a, 3 * MIB, pool, s), "cuMemAllocFromPoolAsync");
    ((char *)(uintptr_t)a)[3 * MIB - 1] = 1; /* it is memory */
    CALL(fn_pool_attr, cuMemPoolGetAttribute, pool, 7, &value);
    is_int(3 * MIB, (long long)value, "used memory: the allocation");
    is_int(0, CALL(fn_free_async, cuMemFreeAsync, a, s), "cuMemFreeAsync");
    CALL(fn_pool_attr, cuMemPoolGetAttribute, pool, 7, &value);
    is_int(0, (long long)value, "used memory back to 0");
    CALL(fn_pool_attr, cuMemPoolGetAttribute, pool, 8, &value);
    is_int(3 * MIB, (long long)value, "its high mark stays");
    is_int(1, CALL(fn_free_async, cuMemFreeAsync, a, s), "freed twice: invalid value");
    is_int(0, CALL(fn_dev_pool, cuDeviceGetDefaultMemPool, &def, 2), "cuDeviceGetDefaultMemPool");
    is_int(0, CALL(fn_dev_pool, cuDeviceGetMemPool, &cur, 2), "cuDeviceGetMemPool");
    ok(def != NULL && cur == def && def != pool, "the device's current pool is its default");
    is_int(0, CALL(fn_alloc_async, cuMemAllocAsync, &b, 4096, s), "cuMemAllocAsync (the current pool)");
    is_int(0, CALL(fn_free_async, cuMemFreeAsync, b, s), "freed");
    CALL(fn_capture_begin, cuStreamBeginCapture_v2, s, 0);
    is_int(900, CALL(fn_alloc_async, cuMemAllocAsync, &b, 4096, s), "inside a capture: not supported (900)");
    CALL(fn_capture_end, cuStreamEndCapture, s, &g);
    is_int(0, CALL(fn_pool, cuMemPoolDestroy, pool), "cuMemPoolDestroy");
    is_int(1, CALL(fn_pool, cuMemPoolDestroy, pool), "twice: invalid value");
    ok(log_lines_with("cuMemAllocFromPoolAsync\talloc\t-\t0x") == 1 &&
           log_lines_with("\t3145728\t0") >= 2,
       "stream-ordered allocations are logged as allocations, with their stream and bytes");
    CALL(fn_stream, cuStreamDestroy_v2, s);
}

/* ---- NVML ----------------------------------------------------------------------------------- */

struct nvml_pci {
    char bus_id_legacy[16];
    unsigned domain, bus, device, device_id, subsystem_id;
    char bus_id[32];
};

struct nvml_field {
    unsigned field_id, scope_id;
    long long timestamp, latency;
    int value_type, status;
    unsigned long long value;
};

static void test_nvml(void)
{
    void *dev = NULL, *dev1 = NULL, *dev2 = NULL;
    unsigned count = 0, index = 9, u = 0;
    int major = 0, minor = 0, status = -1;
    char uuid[96];
    struct nvml_pci pci;
    struct nvml_field fv[2];
    unsigned ext[16], settings[5];

    nvml = dlopen(test_path(test_builddir(), "sim/.libs/libnvidia-ml.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (nvml == NULL)
        bail("cannot load the simulated NVML: %s", dlerror());
    is_int(0, NVML(int (*)(void), nvmlInit_v2), "nvmlInit_v2");
    is_int(0, NVML(int (*)(unsigned *), nvmlDeviceGetCount, &count), "nvmlDeviceGetCount (v1: NCCL's name)");
    is_int(4, count, "the machine's four GPUs");
    is_int(0, NVML(int (*)(unsigned, void **), nvmlDeviceGetHandleByIndex, 3, &dev), "nvmlDeviceGetHandleByIndex");
    is_int(2, NVML(int (*)(unsigned, void **), nvmlDeviceGetHandleByIndex, 4, &dev2), "index 4: invalid argument");
    is_int(0, NVML(int (*)(const char *, void **), nvmlDeviceGetHandleByPciBusId, "0000:2a:00.0", &dev1),
           "nvmlDeviceGetHandleByPciBusId (NCCL's form of the bus id)");
    is_int(0, NVML(int (*)(void *, unsigned *), nvmlDeviceGetIndex, dev1, &index), "nvmlDeviceGetIndex");
    is_int(1, index, "GPU 1");
    is_int(0, NVML(int (*)(void *, char *, unsigned), nvmlDeviceGetUUID, dev, uuid, sizeof uuid), "its UUID");
    is_string("GPU-6f627373-6869-6d2d-7369-6d2d68313033", uuid, "GPU 3's");
    is_int(0, NVML(int (*)(const char *, void **), nvmlDeviceGetHandleByUUID, uuid, &dev2), "by UUID");
    ok(dev2 == dev, "the same GPU");
    is_int(0, NVML(int (*)(void *, int *, int *), nvmlDeviceGetCudaComputeCapability, dev, &major, &minor),
           "nvmlDeviceGetCudaComputeCapability");
    ok(major == 9 && minor == 0, "9.0");
    is_int(0, NVML(int (*)(void *, void *, int, int *), nvmlDeviceGetP2PStatus, dev, dev1, 0, &status),
           "nvmlDeviceGetP2PStatus (read)");
    is_int(5, status, "between two GPUs: not supported (5)");
    NVML(int (*)(void *, void *, int, int *), nvmlDeviceGetP2PStatus, dev, dev, 1, &status);
    is_int(0, status, "a GPU with itself: OK");
    memset(&pci, 0x55, sizeof pci);
    is_int(0, NVML(int (*)(void *, void *), nvmlDeviceGetPciInfo_v3, dev1, &pci), "nvmlDeviceGetPciInfo_v3");
    ok(strcmp(pci.bus_id_legacy, "0000:2a:00.0") == 0 && strcmp(pci.bus_id, "00000000:2a:00.0") == 0 &&
           pci.bus == 0x2a && pci.device_id == 0x233010deu,
       "bus ids (legacy and long), bus, device and vendor ids");
    memset(ext, 0, sizeof ext);
    ext[0] = 12;
    is_int(25, NVML(int (*)(void *, void *), nvmlDeviceGetPciInfoExt, dev1, ext),
           "nvmlDeviceGetPciInfoExt of another version: version mismatch (25)");
    ext[0] = 64u | 1u << 24;
    is_int(0, NVML(int (*)(void *, void *), nvmlDeviceGetPciInfoExt, dev1, ext), "of v1");
    ok(ext[2] == 0x2a && ext[6] == 3 && strcmp((char *)&ext[8], "00000000:2a:00.0") == 0,
       "its bus, class (display) and bus id");
    NVML(int (*)(void *, unsigned *), nvmlDeviceGetCurrPcieLinkGeneration, dev, &u);
    is_int(5, u, "PCIe link generation 5");
    NVML(int (*)(void *, unsigned *), nvmlDeviceGetCurrPcieLinkWidth, dev, &u);
    is_int(16, u, "x16");
    is_int(3, NVML(int (*)(void *, unsigned, unsigned, unsigned *), nvmlDeviceGetNvLinkCapability, dev, 0, 0, &u),
           "NVLink capability: not supported (no NVLink)");
    is_int(3, NVML(int (*)(void *, unsigned, int *), nvmlDeviceGetNvLinkState, dev, 0, &status),
           "NVLink state: not supported");
    memset(fv, 0, sizeof fv);
    fv[0].field_id = 91;  /* NVLINK_LINK_COUNT */
    fv[1].field_id = 165; /* NVLINK_GET_STATE */
    is_int(0, NVML(int (*)(void *, int, void *), nvmlDeviceGetFieldValues, dev, 2, fv), "nvmlDeviceGetFieldValues");
    ok(fv[0].status == 0 && fv[0].value == 0 && fv[1].status == 3, "0 NVLinks; a link's state: not supported");
    memset(settings, 0xff, sizeof settings);
    settings[0] = 20u | 1u << 24;
    is_int(0, NVML(int (*)(void *), nvmlSystemGetConfComputeSettings, settings),
           "nvmlSystemGetConfComputeSettings");
    ok(settings[2] == 0 && settings[4] == 0, "confidential computing off, no multi-GPU mode");
    is_int(3, NVML(int (*)(void *, void *), nvmlDeviceGetPlatformInfo, dev, ext), "platform info: not supported");
    is_int(0, NVML(int (*)(void), nvmlShutdown), "nvmlShutdown");
}

int main(void)
{
    char pattern[4200], expanded[4200];
    obs_CUcontext ctx = NULL;

    plan_lazy();
    test_visible_devices();

    snprintf(pattern, sizeof pattern, "%s/sim.%%q{T_SIM_GPUS_RANK}.%%%%", test_tmpdir());
    snprintf(expanded, sizeof expanded, "%s/sim.7.%%", test_tmpdir());
    snprintf(log_path, sizeof log_path, "%s", expanded);
    remove(log_path);
    setenv("T_SIM_GPUS_RANK", "7", 1);
    setenv("OBS_SIM_LOG", pattern, 1);
    setenv("OBS_SIM_QUIET", "1", 1);
    setenv("OBS_SIM_GPUS", "4", 1);
    unsetenv("CUDA_VISIBLE_DEVICES");
    sim = dlopen(test_path(test_builddir(), "sim/.libs/libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (sim == NULL)
        bail("cannot load the simulated driver: %s", dlerror());
    if (CALL(fn_init, cuInit, 0) != 0 || CALL(fn_retain, cuDevicePrimaryCtxRetain, &ctx, 0) != 0)
        bail("cannot start the simulated driver");
    ok(log_lines_with("cuInit\tother\t-\t-\t-\t0") == 1,
       "OBS_SIM_LOG's name: %%q{VAR} and %%%% expanded (sim.7.%%)");
    test_devices();
    test_host_numa();
    test_pools();
    test_nvml();
    (void)sim; /* not dlclose'd: see t_sim_driver_nvidia */
    return 0;
}
