/* What the simulated driver (sim/, libcuda.so.1 and libnvidia-ml.so.1)
 * offers PyTorch's wheels beyond the toolkit's runtime, checked in this
 * process, with no framework (PyTorch on it: tests/t_frameworks):
 *   - page-locked and registered host memory, pointer attributes (device,
 *     host, unknown pointers), address ranges;
 *   - the virtual memory API on host memory: granularity, a reservation,
 *     two allocations mapped side by side and made accessible, a copy across
 *     them, access flags, the handle of an address, a POSIX descriptor
 *     exported and imported (the same memory seen through both mappings),
 *     the misuses refused;
 *   - streams with priorities (clamped), flags, ids, queries; event records
 *     with flags; the thread's capture mode exchanged; graph exec update
 *     (same shape: taken; another: 910 and why) and upload; log callbacks;
 *     tensor maps; PTX images;
 *   - a thread with no current context: calls on a stream work, an
 *     allocation and context-local storage without a context fail with 201;
 *   - device attributes: VMM, POSIX handles and memory pools said
 *     supported, managed memory and shareable pools not; lazy module
 *     loading;
 *   - the runtime interface table's 13 slots (12: 0), cuBLASLt 13.4's
 *     table 1734dc26;
 *   - NVML: init, the device by PCI bus id (with or without the long
 *     domain) and index, fabric info "not supported", calls logged. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_driver_abi.h"
#include "tap/basic.h"
#include "tap/process.h"
#include "sim_dl.h"


typedef int (*fn_void)(void);
typedef int (*fn_htod)(obs_CUdeviceptr, const void *, size_t);
typedef int (*fn_dtoh)(void *, obs_CUdeviceptr, size_t);
typedef int (*fn_host_alloc)(void **, size_t, unsigned);
typedef int (*fn_host_ptr)(void *);
typedef int (*fn_host_register)(void *, size_t, unsigned);
typedef int (*fn_host_devptr)(obs_CUdeviceptr *, void *, unsigned);
typedef int (*fn_host_flags)(unsigned *, void *);
typedef int (*fn_ptr_attrs)(unsigned, int *, void **, obs_CUdeviceptr);
typedef int (*fn_range)(obs_CUdeviceptr *, size_t *, obs_CUdeviceptr);
typedef int (*fn_get_access)(unsigned long long *, const void *, obs_CUdeviceptr);
typedef int (*fn_retain_handle)(unsigned long long *, void *);
typedef int (*fn_export_fd)(void *, unsigned long long, int, unsigned long long);
typedef int (*fn_import_fd)(unsigned long long *, void *, int);
typedef int (*fn_stream_prio)(obs_CUstream *, unsigned, int);
typedef int (*fn_stream_get_int)(obs_CUstream, int *);
typedef int (*fn_stream_get_uint)(obs_CUstream, unsigned *);
typedef int (*fn_stream_get_id)(obs_CUstream, unsigned long long *);
typedef int (*fn_event_create)(obs_CUevent *, unsigned);
typedef int (*fn_event_record_flags)(obs_CUevent, obs_CUstream, unsigned);
typedef int (*fn_capture_mode)(int *);
typedef int (*fn_instantiate)(obs_CUgraphExec *, obs_CUgraph, unsigned long long);
typedef int (*fn_exec_update)(obs_CUgraphExec, obs_CUgraph, void *);
typedef int (*fn_upload)(obs_CUgraphExec, obs_CUstream);
typedef int (*fn_mod_load)(obs_CUmodule *, const void *);
typedef int (*fn_mod_func)(obs_CUfunction *, obs_CUmodule, const char *);
typedef int (*fn_launch)(obs_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         obs_CUstream, void **, void **);
typedef int (*fn_logs_register)(void *, void *, void **);
typedef int (*fn_logs_unregister)(void *);
typedef int (*fn_tensor_map)(void *, int, unsigned, void *, const uint64_t *, const uint64_t *, const unsigned *,
                             const unsigned *, int, int, int, int);
typedef int (*fn_tensor_replace)(void *, void *);
typedef int (*fn_loading)(int *);
typedef int (*fn_is_capturing)(obs_CUstream, int *);
typedef int (*fn_export)(const void **, const unsigned char *);

#define MIB (1024u * 1024u)


/* ---- host memory, pointer attributes ------------------------------------------------------ */

static void test_host_memory(void)
{
    void *p = NULL, *data[4];
    char *own = malloc(8192);
    unsigned flags = 0, type = 99;
    int attrs[4] = {2, 4, 9, 12}, ordinal = -1;
    void *host = NULL;
    size_t size = 0;
    obs_CUdeviceptr dev = 0, d = 0, base = 0;
    char buf[64];

    is_int(0, CALL(fn_host_alloc, cuMemHostAlloc, &p, 10000, 1u), "cuMemHostAlloc (portable)");
    ok(p != NULL && ((uintptr_t)p % 4096) == 0 && ((char *)p)[9999] == 0, "page-aligned, zeroed");
    is_int(0, CALL(fn_host_devptr, cuMemHostGetDevicePointer_v2, &dev, p, 0), "cuMemHostGetDevicePointer_v2");
    ok(dev == (obs_CUdeviceptr)(uintptr_t)p, "the device pointer is the address itself (unified addressing)");
    is_int(0, CALL(fn_host_flags, cuMemHostGetFlags, &flags, p), "cuMemHostGetFlags");
    is_int(1, flags, "gives the flags it was allocated with");
    data[0] = &type, data[1] = &host, data[2] = &ordinal, data[3] = &size;
    is_int(0, CALL(fn_ptr_attrs, cuPointerGetAttributes, 4, attrs, data, (obs_CUdeviceptr)(uintptr_t)p + 10),
           "cuPointerGetAttributes inside page-locked memory");
    ok(type == 1 && host == (char *)p + 10 && ordinal == 0 && size == 10000,
       "host memory, its host pointer, device 0, the allocation's size");
    is_int(0, CALL(fn_alloc, cuMemAlloc_v2, &d, 4096), "cuMemAlloc_v2");
    memcpy(p, "pinned", 7);
    is_int(0, CALL(fn_htod, cuMemcpyHtoD_v2, d + 100, p, 7), "a copy from page-locked memory to the device");
    is_int(0, CALL(fn_dtoh, cuMemcpyDtoH_v2, buf, d + 100, 7), "and back");
    is_string("pinned", buf, "the bytes went through");
    type = 99;
    is_int(0, CALL(fn_ptr_attr, cuPointerGetAttribute, &type, 2, d + 100), "cuPointerGetAttribute on device memory");
    is_int(2, type, "device memory");
    is_int(0, CALL(fn_range, cuMemGetAddressRange_v2, &base, &size, d + 100), "cuMemGetAddressRange_v2");
    ok(base == d && size == 4096, "the allocation's start and size");
    type = 99;
    is_int(0, CALL(fn_ptr_attrs, cuPointerGetAttributes, 1, attrs, data, (obs_CUdeviceptr)(uintptr_t)buf),
           "cuPointerGetAttributes on memory the driver does not know: success");
    is_int(0, type, "with the default (0)");
    is_int(1, CALL(fn_ptr_attr, cuPointerGetAttribute, &type, 2, (obs_CUdeviceptr)(uintptr_t)buf),
           "cuPointerGetAttribute on it: invalid value");
    is_int(0, CALL(fn_host_ptr, cuMemFreeHost, p), "cuMemFreeHost");
    is_int(1, CALL(fn_host_ptr, cuMemFreeHost, p), "twice: invalid value");
    CALL(fn_free, cuMemFree_v2, d);

    is_int(0, CALL(fn_host_register, cuMemHostRegister_v2, own, 8192, 0), "cuMemHostRegister_v2");
    is_int(712, CALL(fn_host_register, cuMemHostRegister_v2, own, 8192, 0), "again: 712 (already registered)");
    is_int(0, CALL(fn_host_ptr, cuMemHostUnregister, own), "cuMemHostUnregister");
    is_int(713, CALL(fn_host_ptr, cuMemHostUnregister, own), "again: 713 (not registered)");
    free(own);
}

/* ---- virtual memory -------------------------------------------------------------------------- */


static void test_vmm(void)
{
    struct prop prop = {1, 1, 1, 0, NULL, 0, 0, 0, {0}};
    struct access_desc rw = {1, 0, 3};
    int location[2] = {1, 0};
    size_t gran = 0;
    unsigned long long h1 = 0, h2 = 0, h3 = 0, retained = 0, flags = 0;
    obs_CUdeviceptr va = 0;
    int fd = -1;
    char *in = malloc(MIB), *out = malloc(MIB);
    size_t i;

    if (in == NULL || out == NULL)
        bail("out of memory");
    for (i = 0; i < MIB; i++)
        in[i] = (char)(i * 7);
    is_int(0, CALL(fn_granularity, cuMemGetAllocationGranularity, &gran, &prop, 0), "cuMemGetAllocationGranularity");
    is_int(2 * MIB, (long long)gran, "2 MiB");
    is_int(0, CALL(fn_reserve, cuMemAddressReserve, &va, 8 * MIB, 0, 0, 0), "cuMemAddressReserve 8 MiB");
    ok(va != 0 && va % (2 * MIB) == 0, "aligned to the granularity");
    is_int(1, CALL(fn_create, cuMemCreate, &h1, MIB, &prop, 0), "cuMemCreate of 1 MiB: invalid value");
    is_int(0, CALL(fn_create, cuMemCreate, &h1, 2 * MIB, &prop, 0), "cuMemCreate 2 MiB");
    is_int(0, CALL(fn_create, cuMemCreate, &h2, 2 * MIB, &prop, 0), "another");
    is_int(0, CALL(fn_map, cuMemMap, va, 2 * MIB, 0, h1, 0), "cuMemMap the first at the start");
    is_int(0, CALL(fn_map, cuMemMap, va + 2 * MIB, 2 * MIB, 0, h2, 0), "the second right after it");
    is_int(1, CALL(fn_map, cuMemMap, va, 2 * MIB, 0, h2, 0), "mapping over a mapped range: invalid value");
    is_int(0, CALL(fn_set_access, cuMemSetAccess, va, 4 * MIB, &rw, 1), "cuMemSetAccess read-write on both");
    is_int(0, CALL(fn_get_access, cuMemGetAccess, &flags, location, va + 3 * MIB), "cuMemGetAccess");
    is_int(3, (long long)flags, "read-write");
    is_int(0, CALL(fn_htod, cuMemcpyHtoD_v2, va + 2 * MIB - MIB / 2, in, MIB),
           "a copy in across the two mappings (device memory end to end)");
    is_int(0, CALL(fn_dtoh, cuMemcpyDtoH_v2, out, va + 2 * MIB - MIB / 2, MIB), "and out");
    ok(memcmp(in, out, MIB) == 0, "the bytes came back");
    is_int(0, CALL(fn_retain_handle, cuMemRetainAllocationHandle, &retained, (void *)(uintptr_t)(va + 3 * MIB)),
           "cuMemRetainAllocationHandle of an address");
    ok(retained == h2, "the handle mapped there");
    is_int(0, CALL(fn_release, cuMemRelease, retained), "released once more");
    is_int(0, CALL(fn_export_fd, cuMemExportToShareableHandle, &fd, h1, 1, 0),
           "cuMemExportToShareableHandle: a POSIX descriptor");
    is_int(0, CALL(fn_import_fd, cuMemImportFromShareableHandle, &h3, (void *)(intptr_t)fd, 1),
           "cuMemImportFromShareableHandle");
    is_int(0, CALL(fn_map, cuMemMap, va + 4 * MIB, 2 * MIB, 0, h3, 0), "the imported handle mapped");
    is_int(0, CALL(fn_set_access, cuMemSetAccess, va + 4 * MIB, 2 * MIB, &rw, 1), "made accessible");
    is_int(0, CALL(fn_dtoh, cuMemcpyDtoH_v2, out, va + 4 * MIB + 3 * MIB / 2, MIB / 2), "read through it");
    ok(memcmp(in, out, MIB / 2) == 0, "the same memory as the first mapping");
    is_int(0, CALL(fn_unmap, cuMemUnmap, va, 6 * MIB), "cuMemUnmap the three");
    is_int(1, CALL(fn_dtoh, cuMemcpyDtoH_v2, out, va, 16), "a copy from the unmapped range: invalid value");
    is_int(0, CALL(fn_release, cuMemRelease, h1), "cuMemRelease");
    is_int(0, CALL(fn_release, cuMemRelease, h2), "cuMemRelease");
    is_int(0, CALL(fn_release, cuMemRelease, h3), "cuMemRelease the imported");
    is_int(1, CALL(fn_release, cuMemRelease, h1), "a released handle: invalid value");
    is_int(0, CALL(fn_addr_free, cuMemAddressFree, va, 8 * MIB), "cuMemAddressFree");
    free(in);
    free(out);
}

/* ---- streams, events, capture, graphs -------------------------------------------------------------- */

static obs_CUgraph capture_launches(obs_CUstream s, obs_CUfunction f, int launches)
{
    obs_CUgraph g = NULL;
    int i;
    CALL(fn_capture_begin, cuStreamBeginCapture_v2, s, 2);
    for (i = 0; i < launches; i++)
        CALL(fn_launch, cuLaunchKernel, f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    CALL(fn_capture_end, cuStreamEndCapture, s, &g);
    return g;
}

static void test_streams_and_graphs(void)
{
    static const char image[] = "\n// probe\n.version 8.0\n.target sm_90\n.address_size 64\n"
                                ".visible .entry probe()\n{\n ret;\n}\n";
    obs_CUstream s = NULL, t = NULL;
    obs_CUevent e = NULL;
    obs_CUmodule m = NULL;
    obs_CUfunction f = NULL;
    obs_CUgraph g1, g2, g3;
    obs_CUgraphExec x = NULL;
    int prio = 99, mode = 2, result[6];
    unsigned flags = 99;
    unsigned long long id1 = 0, id2 = 0;

    is_int(0, CALL(fn_stream_prio, cuStreamCreateWithPriority, &s, 1, -3), "cuStreamCreateWithPriority -3");
    is_int(0, CALL(fn_stream_get_int, cuStreamGetPriority, s, &prio), "cuStreamGetPriority");
    is_int(-3, prio, "-3");
    is_int(0, CALL(fn_stream_prio, cuStreamCreateWithPriority, &t, 0, -9), "priority -9");
    CALL(fn_stream_get_int, cuStreamGetPriority, t, &prio);
    is_int(-5, prio, "clamped to the greatest, -5");
    is_int(0, CALL(fn_stream_get_uint, cuStreamGetFlags, s, &flags), "cuStreamGetFlags");
    is_int(1, flags, "non-blocking");
    CALL(fn_stream_get_id, cuStreamGetId, s, &id1);
    CALL(fn_stream_get_id, cuStreamGetId, t, &id2);
    ok(id1 > 2 && id2 > 2 && id1 != id2, "cuStreamGetId: distinct ids");
    is_int(0, CALL(fn_stream, cuStreamQuery, s), "cuStreamQuery: idle");
    CALL(fn_event_create, cuEventCreate, &e, 0);
    is_int(0, CALL(fn_event_record_flags, cuEventRecordWithFlags, e, s, 1), "cuEventRecordWithFlags (external)");
    is_int(1, CALL(fn_event_record_flags, cuEventRecordWithFlags, e, s, 2), "an unknown flag: invalid value");
    is_int(0, CALL(fn_capture_mode, cuThreadExchangeStreamCaptureMode, &mode), "cuThreadExchangeStreamCaptureMode");
    is_int(0, mode, "gives the previous mode (global)");
    CALL(fn_capture_mode, cuThreadExchangeStreamCaptureMode, &mode);
    is_int(2, mode, "and keeps the one set (relaxed)");

    is_int(0, CALL(fn_mod_load, cuModuleLoadData, &m, image), "a PTX image loads");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &f, m, "probe"), "its kernel by name");
    is_int(200, CALL(fn_mod_load, cuModuleLoadData, &m, "plain text, not PTX"), "other text: 200");

    g1 = capture_launches(s, f, 1);
    g2 = capture_launches(s, f, 1);
    g3 = capture_launches(s, f, 2);
    is_int(0, CALL(fn_instantiate, cuGraphInstantiateWithFlags, &x, g1, 0), "a captured graph instantiated");
    memset(result, 0xff, sizeof result);
    is_int(0, CALL(fn_exec_update, cuGraphExecUpdate_v2, x, g2, result), "cuGraphExecUpdate_v2 with the same shape");
    is_int(0, result[0], "CU_GRAPH_EXEC_UPDATE_SUCCESS");
    is_int(910, CALL(fn_exec_update, cuGraphExecUpdate_v2, x, g3, result), "with another shape: 910");
    is_int(2, result[0], "CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED");
    is_int(0, CALL(fn_upload, cuGraphUpload, x, s), "cuGraphUpload");
    is_int(400, CALL(fn_upload, cuGraphUpload, (obs_CUgraphExec)&result, s), "of an unknown exec: 400");
}

/* ---- a thread with no current context ---------------------------------------------------------- */

struct no_context {
    obs_CUstream stream;
    int capturing_status, status, alloc_status, storage_status;
};

static void *thread_without_context(void *arg)
{
    struct no_context *nc = arg;
    static const unsigned char storage_uuid[16] = {0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
                                                   0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93};
    const void *table = NULL;
    obs_CUdeviceptr d = 0;
    void *value = NULL;
    nc->status = -1;
    nc->capturing_status = CALL(fn_is_capturing, cuStreamIsCapturing, nc->stream, &nc->status);
    nc->alloc_status = CALL(fn_alloc, cuMemAlloc_v2, &d, 64);
    CALL(fn_export, cuGetExportTable, &table, storage_uuid);
    nc->storage_status = ((int (*)(void **, obs_CUcontext, void *))((void *const *)table)[2])(&value, NULL, &value);
    return NULL;
}

static void test_thread_without_context(void)
{
    struct no_context nc = {NULL, -1, -1, -1, -1};
    pthread_t th;
    CALL(fn_stream_prio, cuStreamCreateWithPriority, &nc.stream, 0, 0);
    if (pthread_create(&th, NULL, thread_without_context, &nc) != 0 || pthread_join(th, NULL) != 0)
        bail("cannot run a thread");
    ok(nc.capturing_status == 0 && nc.status == 0,
       "a thread with no current context: cuStreamIsCapturing on a stream works (the stream's context)");
    is_int(201, nc.alloc_status, "an allocation there: 201");
    is_int(201, nc.storage_status, "context-local storage with no context: 201 (the runtime then sets one)");
}

/* ---- the rest --------------------------------------------------------------------------------------- */

static void log_callback(void *data, int level, char *message, size_t length)
{
    (void)data, (void)level, (void)message, (void)length;
}

static void test_misc(void)
{
    static const unsigned char interface_uuid[16] = {0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
                                                     0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9};
    static const unsigned char lt2_uuid[16] = {0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45,
                                               0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca};
    const void *const *table = NULL;
    void *handle = NULL, *out = (void *)1;
    uint64_t out2 = 9;
    unsigned char map[128];
    static char aligned[64] __attribute__((aligned(16)));
    uint64_t dims[2] = {64, 64}, strides[1] = {128};
    unsigned box[2] = {8, 8}, estrides[2] = {1, 1};
    int v = -1, mode = 0;

    is_int(0, CALL(fn_logs_register, cuLogsRegisterCallback, (void *)log_callback, NULL, &handle),
           "cuLogsRegisterCallback");
    is_int(0, CALL(fn_logs_unregister, cuLogsUnregisterCallback, handle), "cuLogsUnregisterCallback");
    memset(map, 0xff, sizeof map);
    is_int(0, CALL(fn_tensor_map, cuTensorMapEncodeTiled, map, 6, 2, aligned, dims, strides, box, estrides, 0, 0, 0, 0),
           "cuTensorMapEncodeTiled");
    ok(memcmp(map, &(void *){aligned}, sizeof(void *)) == 0 && map[127] == 0, "the object holds the address");
    is_int(1, CALL(fn_tensor_map, cuTensorMapEncodeTiled, map, 6, 2, aligned + 1, dims, strides, box, estrides, 0, 0,
                   0, 0),
           "a misaligned address: invalid value");
    is_int(0, CALL(fn_tensor_replace, cuTensorMapReplaceAddress, map, aligned + 16), "cuTensorMapReplaceAddress");

    CALL(fn_attr, cuDeviceGetAttribute, &v, 102, 0);
    is_int(1, v, "attribute 102 (virtual memory management): supported");
    CALL(fn_attr, cuDeviceGetAttribute, &v, 103, 0);
    is_int(1, v, "attribute 103 (POSIX descriptors as handles): supported");
    CALL(fn_attr, cuDeviceGetAttribute, &v, 83, 0);
    is_int(0, v, "attribute 83 (managed memory): not supported (stubs)");
    CALL(fn_attr, cuDeviceGetAttribute, &v, 115, 0);
    is_int(1, v, "attribute 115 (memory pools): supported (cudrv_sim_mempool.c)");
    CALL(fn_attr, cuDeviceGetAttribute, &v, 119, 0);
    is_int(0, v, "attribute 119 (pool handle types): none (pools are not shared)");
    is_int(0, CALL(fn_loading, cuModuleGetLoadingMode, &mode), "cuModuleGetLoadingMode");
    is_int(2, mode, "lazy (2)");

    is_int(0, CALL(fn_export, cuGetExportTable, (const void **)&table, interface_uuid), "the runtime interface table");
    is_int(13 * sizeof(void *), (long long)(uintptr_t)table[0], "13 slots");
    is_int(0, ((int (*)(void))table[12])(), "slot 12 (runtime 13.2's start-up check): 0");
    is_int(0, CALL(fn_export, cuGetExportTable, (const void **)&table, lt2_uuid), "cuBLASLt 13.4's table 1734dc26");
    is_int(0, ((int (*)(void **, uint64_t *))table[4])(&out, &out2), "its slot 4");
    ok(out == NULL && out2 == 0, "hands out nothing (NULL, 0)");
}

struct nvml_memory {
    unsigned long long total, free, used;
};

static void test_nvml(void)
{
    void *dev = NULL, *dev2 = (void *)1;
    unsigned count = 0;
    unsigned char fabric[64];
    unsigned version = 64u | (3u << 24);
    struct nvml_memory mem = {0, 0, 0};
    char name[96];

    nvml = dlopen(test_path(test_builddir(), "sim/.libs/libnvidia-ml.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (nvml == NULL)
        bail("cannot load the simulated NVML: %s", dlerror());
    is_int(1, NVML(int (*)(unsigned *), nvmlDeviceGetCount_v2, &count), "NVML before init: uninitialised (1)");
    is_int(0, NVML(int (*)(void), nvmlInit_v2), "nvmlInit_v2");
    is_int(0, NVML(int (*)(unsigned *), nvmlDeviceGetCount_v2, &count), "nvmlDeviceGetCount_v2");
    is_int(1, count, "one device");
    is_int(0, NVML(int (*)(const char *, void **), nvmlDeviceGetHandleByPciBusId_v2, "00000000:18:00.0", &dev),
           "the device by its PCI bus id (NVML's long domain)");
    is_int(0, NVML(int (*)(unsigned, void **), nvmlDeviceGetHandleByIndex_v2, 0, &dev2), "and by index");
    ok(dev != NULL && dev == dev2, "the same handle");
    is_int(6, NVML(int (*)(const char *, void **), nvmlDeviceGetHandleByPciBusId_v2, "0000:19:00.0", &dev2),
           "another bus id: not found (6)");
    is_int(0, NVML(int (*)(void *, char *, unsigned), nvmlDeviceGetName, dev, name, sizeof name), "its name");
    ok(strstr(name, "H100") != NULL, "the driver's device (%s)", name);
    is_int(0, NVML(int (*)(void *, struct nvml_memory *), nvmlDeviceGetMemoryInfo, dev, &mem), "its memory");
    ok(mem.total > 0 && mem.free == mem.total, "the driver's total, all free");
    memset(fabric, 0xff, sizeof fabric);
    memcpy(fabric, &version, sizeof version);
    is_int(0, NVML(int (*)(void *, void *), nvmlDeviceGetGpuFabricInfoV, dev, fabric),
           "nvmlDeviceGetGpuFabricInfoV: success");
    ok(fabric[28] == 0 && fabric[20] == 3, "state not supported (0), status not supported (3): no fabric");
    is_int(0, NVML(int (*)(void), nvmlShutdown), "nvmlShutdown");
    ok(log_lines_with("nvmlInit_v2\tother\t-\t-\t-\t0") == 1, "NVML's calls are logged with the driver's");
}

int main(void)
{
    obs_CUcontext ctx = NULL;
    plan_lazy();
    snprintf(log_path, sizeof log_path, "%s/sim.log", test_tmpdir());
    remove(log_path);
    setenv("OBS_SIM_LOG", log_path, 1);
    setenv("OBS_SIM_QUIET", "1", 1);
    sim = dlopen(test_path(test_builddir(), "sim/.libs/libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (sim == NULL)
        bail("cannot load the simulated driver: %s", dlerror());
    if (CALL(fn_init, cuInit, 0) != 0 || CALL(fn_retain, cuDevicePrimaryCtxRetain, &ctx, 0) != 0 ||
        CALL(fn_ctx, cuCtxSetCurrent, ctx) != 0)
        bail("cannot make the primary context current");
    test_host_memory();
    test_vmm();
    test_streams_and_graphs();
    test_thread_without_context();
    test_misc();
    test_nvml();
    (void)sim; /* not dlclose'd: see t_sim_driver_nvidia */
    return 0;
}
