/* The simulated driver's device: one H100-like GPU (sm_90, 132 SMs, 80 GB),
 * its name, memory, UUID, PCI location and the ~150 attributes NVIDIA's
 * runtime and cuBLAS read at start-up (cudaGetDeviceProperties reads about
 * 110 of them), the context queries that go with it, and the occupancy
 * answers cuBLASLt asks for on sm_90. Values are those of an H100 SXM5 80GB
 * as the real driver reports them, except where a feature needs entry
 * points the simulator does not implement: those say "not supported" (0),
 * so that a program does not take a path that would end in a stub:
 * managed memory (83, 89), compressible memory (107), RDMA (110, 116, 117),
 * sparse and deferred-mapping arrays (112, 121), external semaphores (114),
 * pools shared between processes (119), stream memory operations (122),
 * dma-buf (124), IPC events (125), multicast (132). What is implemented
 * keeps its H100 value: page-locked and registered host memory (91, 99,
 * 113), virtual memory management with POSIX descriptors (102, 103),
 * memory pools (115, cudrv_sim_mempool.c), priorities (78), cooperative and
 * cluster launches (95, 120), tensor maps (127). The ones no program here
 * reads are 0. Peer access between devices (OBS_SIM_GPUS > 1): none. */
#include "cudrv_sim.h"
#include "sim_gpus.h"

#include <stdlib.h>
#include <string.h>

/* CU_DEVICE_ATTRIBUTE_<name> = value (cuda.h, CUDA 13.0). */
#define DRV_DEVICE_ATTRIBUTES(X)                                                              \
    X(1, 1024)          /* MAX_THREADS_PER_BLOCK */                                          \
    X(2, 1024) X(3, 1024) X(4, 64) /* MAX_BLOCK_DIM_X/Y/Z */                                 \
    X(5, 2147483647) X(6, 65535) X(7, 65535) /* MAX_GRID_DIM_X/Y/Z */                        \
    X(8, 49152)         /* MAX_SHARED_MEMORY_PER_BLOCK */                                    \
    X(9, 65536)         /* TOTAL_CONSTANT_MEMORY */                                          \
    X(10, 32)           /* WARP_SIZE */                                                      \
    X(11, 2147483647)   /* MAX_PITCH */                                                      \
    X(12, 65536)        /* MAX_REGISTERS_PER_BLOCK */                                        \
    X(13, 1980000)      /* CLOCK_RATE (kHz) */                                               \
    X(14, 512)          /* TEXTURE_ALIGNMENT */                                              \
    X(15, 1)            /* GPU_OVERLAP */                                                    \
    X(16, 132)          /* MULTIPROCESSOR_COUNT */                                           \
    X(17, 0) X(18, 0)   /* KERNEL_EXEC_TIMEOUT, INTEGRATED */                                \
    X(19, 1) X(20, 0)   /* CAN_MAP_HOST_MEMORY, COMPUTE_MODE default */                      \
    X(21, 131072) X(22, 131072) X(23, 65536) X(24, 16384) X(25, 16384) X(26, 16384)         \
    X(27, 32768) X(28, 32768) X(29, 2048) /* textures */                                     \
    X(30, 512) X(31, 1) X(32, 1) /* SURFACE_ALIGNMENT, CONCURRENT_KERNELS, ECC_ENABLED */    \
    X(34, 0) X(35, 0)   /* PCI_DEVICE_ID, TCC_DRIVER (PCI_BUS_ID, 33: the device's own) */   \
    X(36, 2619000)      /* MEMORY_CLOCK_RATE (kHz) */                                        \
    X(37, 5120)         /* GLOBAL_MEMORY_BUS_WIDTH */                                        \
    X(38, 52428800)     /* L2_CACHE_SIZE */                                                  \
    X(39, 2048)         /* MAX_THREADS_PER_MULTIPROCESSOR */                                 \
    X(40, 5) X(41, 1)   /* ASYNC_ENGINE_COUNT, UNIFIED_ADDRESSING */                         \
    X(42, 32768) X(43, 2048) X(44, 1) X(45, 32768) X(46, 32768)                              \
    X(47, 8192) X(48, 8192) X(49, 32768) /* texture limits */                                \
    X(50, 0)            /* PCI_DOMAIN_ID */                                                  \
    X(51, 32) X(52, 32768) X(53, 32768) X(54, 2046)                                          \
    X(55, 32768) X(56, 131072) X(57, 65536) X(58, 16384) X(59, 16384) X(60, 16384)          \
    X(61, 32768) X(62, 2048) X(63, 32768) X(64, 32768) X(65, 2048)                           \
    X(66, 32768) X(67, 32768) X(68, 2046) X(69, 268435456) X(70, 131072) X(71, 65000)       \
    X(72, 2097120) X(73, 32768) X(74, 32768) /* surfaces, linear and mipmapped textures */  \
    X(75, 9) X(76, 0)   /* COMPUTE_CAPABILITY_MAJOR/MINOR: sm_90 */                          \
    X(77, 32768) X(78, 1) X(79, 1) X(80, 1)                                                  \
    X(81, 233472)       /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */                           \
    X(82, 65536)        /* MAX_REGISTERS_PER_MULTIPROCESSOR */                               \
    X(83, 0) X(84, 0) X(85, 0) X(86, 0) X(87, 2) X(88, 0) X(89, 0) X(90, 1) X(91, 1)        \
    X(92, 0) X(93, 0) X(94, 0) X(95, 1) X(96, 0)                                             \
    X(97, 232448)       /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */                              \
    X(98, 0) X(99, 1) X(100, 0) X(101, 0)                                                   \
    X(102, 1) X(103, 1) /* VIRTUAL_MEMORY_MANAGEMENT, POSIX file descriptors: cudrv_sim_vmm.c */ \
    X(104, 0) X(105, 0)                                                                     \
    X(106, 32)          /* MAX_BLOCKS_PER_MULTIPROCESSOR */                                  \
    X(107, 0) X(108, 31457280) X(109, 134213632) X(110, 0) X(111, 1024) X(112, 0)           \
    X(113, 1) X(114, 0) X(115, 1) X(116, 0) X(117, 0) X(118, 0) X(119, 0)                   \
    X(120, 1)           /* CLUSTER_LAUNCH */                                                 \
    X(121, 0) X(122, 0) X(123, 0) X(124, 0) X(125, 0) X(126, 4) X(127, 1) X(128, 0)         \
    X(129, 0) X(130, 0) X(131, -1) X(132, 0) X(133, 0) X(134, -1)                            \
    X(139, 0x233010de) X(140, 0x16c110de)

#define DRV_TOTAL_MEM (80ULL * 1024 * 1024 * 1024 - 512ULL * 1024 * 1024)

/* The machine GPU behind a valid ordinal. */
static unsigned machine_gpu(obs_CUdevice dev)
{
    int k = sim_gpus_machine_index(dev);
    return k < 0 ? 0u : (unsigned)k;
}

obs_CUresult drv_device_attribute(int *value, int attrib, obs_CUdevice dev)
{
    if (value == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    if (!drv_valid_device(dev))
        return OBS_CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case 33: /* PCI_BUS_ID */
        *value = (int)sim_gpu_pci_bus(machine_gpu(dev));
        return OBS_CUDA_SUCCESS;
#define ATTRIBUTE_CASE(id, v) \
    case id:                  \
        *value = v;           \
        return OBS_CUDA_SUCCESS;
        DRV_DEVICE_ATTRIBUTES(ATTRIBUTE_CASE)
#undef ATTRIBUTE_CASE
    }
    if (attrib > 0 && attrib <= 147) { /* known to CUDA 13.0, nothing this device offers */
        *value = 0;
        return OBS_CUDA_SUCCESS;
    }
    return OBS_CUDA_ERROR_INVALID_VALUE;
}

void drv_device_uuid_bytes(obs_CUdevice dev, unsigned char out[16])
{
    sim_gpu_uuid(machine_gpu(dev), out);
}

static obs_CUresult need_device(obs_CUdevice dev, const void *out)
{
    obs_CUresult err = out ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    return err;
}

DRV_EXPORT obs_CUresult cuDeviceGetAttribute(int *pi, int attrib, obs_CUdevice dev)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, pi);
    if (err == OBS_CUDA_SUCCESS)
        err = drv_device_attribute(pi, attrib, dev);
    return drv_finish("cuDeviceGetAttribute", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGetName(char *name, int len, obs_CUdevice dev)
{
    static const char drv_name[] = "NVIDIA H100 80GB HBM3 (obsshim simulated)";
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, name);
    if (err == OBS_CUDA_SUCCESS && len <= 0)
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        strncpy(name, drv_name, (size_t)len);
        name[len - 1] = '\0';
    }
    return drv_finish("cuDeviceGetName", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceTotalMem_v2(size_t *bytes, obs_CUdevice dev)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, bytes);
    if (err == OBS_CUDA_SUCCESS)
        *bytes = DRV_TOTAL_MEM;
    return drv_finish("cuDeviceTotalMem_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

static obs_CUresult device_uuid(const char *api, unsigned char *uuid, obs_CUdevice dev)
{
    obs_CUresult err = need_device(dev, uuid);
    if (err == OBS_CUDA_SUCCESS)
        drv_device_uuid_bytes(dev, uuid);
    return drv_finish(api, DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGetUuid(unsigned char *uuid, obs_CUdevice dev)
{
    drv_enter();
    return device_uuid("cuDeviceGetUuid", uuid, dev);
}

DRV_EXPORT obs_CUresult cuDeviceGetUuid_v2(unsigned char *uuid, obs_CUdevice dev)
{
    drv_enter();
    return device_uuid("cuDeviceGetUuid_v2", uuid, dev);
}

DRV_EXPORT obs_CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, obs_CUdevice dev)
{
    char bus_id[16];
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, pciBusId);
    if (err == OBS_CUDA_SUCCESS && len <= 0)
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        sim_gpu_bus_id(machine_gpu(dev), bus_id);
        strncpy(pciBusId, bus_id, (size_t)len);
        pciBusId[len - 1] = '\0';
    }
    return drv_finish("cuDeviceGetPCIBusId", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceComputeCapability(int *major, int *minor, obs_CUdevice dev)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, major && minor ? major : NULL);
    if (err == OBS_CUDA_SUCCESS) {
        *major = 9;
        *minor = 0;
    }
    return drv_finish("cuDeviceComputeCapability", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDevicePrimaryCtxGetState(obs_CUdevice dev, unsigned int *flags, int *active)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, flags && active ? flags : NULL);
    if (err == OBS_CUDA_SUCCESS) {
        *flags = 0;
        *active = drv_primary_active(dev);
    }
    return drv_finish("cuDevicePrimaryCtxGetState", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDevicePrimaryCtxSetFlags_v2(obs_CUdevice dev, unsigned int flags)
{
    drv_enter();
    return drv_finish("cuDevicePrimaryCtxSetFlags_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      need_device(dev, &flags));
}

/* The device of a context: CUDA 2.0's form asks about the current one,
 * CUDA 13.0's (_v2) takes the context (NULL: the current one). */
static obs_CUresult ctx_device(const char *api, obs_CUdevice *device, obs_CUcontext ctx)
{
    obs_CUresult err = device ? (ctx ? drv_need_init() : drv_need_context()) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        err = drv_context_device(ctx ? ctx : drv_current_context(), device);
    return drv_finish(api, DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuCtxGetDevice(obs_CUdevice *device)
{
    drv_enter();
    return ctx_device("cuCtxGetDevice", device, NULL);
}

DRV_EXPORT obs_CUresult cuCtxGetDevice_v2(obs_CUdevice *device, obs_CUcontext ctx)
{
    drv_enter();
    return ctx_device("cuCtxGetDevice_v2", device, ctx);
}

DRV_EXPORT obs_CUresult cuCtxGetFlags(unsigned int *flags)
{
    obs_CUresult err;
    drv_enter();
    err = flags ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *flags = 0;
    return drv_finish("cuCtxGetFlags", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuCtxGetApiVersion(obs_CUcontext ctx, unsigned int *version)
{
    obs_CUresult err;
    drv_enter();
    (void)ctx;
    err = version ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *version = 3020;
    return drv_finish("cuCtxGetApiVersion", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    obs_CUresult err;
    drv_enter();
    err = drv_need_context();
    if (err == OBS_CUDA_SUCCESS) {
        if (leastPriority)
            *leastPriority = 0;
        if (greatestPriority)
            *greatestPriority = -5;
    }
    return drv_finish("cuCtxGetStreamPriorityRange", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* CU_LIMIT_*: STACK_SIZE 1024, PRINTF_FIFO 1 MiB, MALLOC_HEAP 8 MiB, device
 * runtime depth 2 and 2048 launches, L2 fetch 64 bytes, persisting L2 0,
 * SHMEM_SIZE and the CIG ones 0. */
DRV_EXPORT obs_CUresult cuCtxGetLimit(size_t *pvalue, int limit)
{
    static const size_t limits[] = {1024, 1048576, 8388608, 2, 2048, 64, 0, 0, 0, 0};
    obs_CUresult err;
    drv_enter();
    err = pvalue ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && (limit < 0 || (size_t)limit >= sizeof limits / sizeof limits[0]))
        err = OBS_CUDA_ERROR_NOT_SUPPORTED;
    if (err == OBS_CUDA_SUCCESS)
        *pvalue = limits[limit];
    return drv_finish("cuCtxGetLimit", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    obs_CUresult err;
    drv_enter();
    err = free_bytes && total ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        *total = DRV_TOTAL_MEM;
        *free_bytes = DRV_TOTAL_MEM - 1024ULL * 1024 * 1024;
    }
    return drv_finish("cuMemGetInfo_v2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* CU_MODULE_LAZY_LOADING (2; 1 is eager): CUDA 12's default. With it the
 * runtime loads a library at the first use of one of its kernels, not all
 * of them at start-up (PyTorch's runtime: 3,305 libraries and 24,155
 * kernels looked up before its first launch when the answer was eager). */
DRV_EXPORT obs_CUresult cuModuleGetLoadingMode(int *mode)
{
    obs_CUresult err;
    drv_enter();
    err = mode ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *mode = 2;
    return drv_finish("cuModuleGetLoadingMode", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* cuBLASLt asks this on sm_90 before it picks a cluster shape: one cluster
 * per GPC-sized group of SMs (132 SMs / 8 = 16) is what an H100 answers for
 * small clusters. The config is not read. */
DRV_EXPORT obs_CUresult cuOccupancyMaxActiveClusters(int *numClusters, obs_CUfunction func, const void *config)
{
    obs_CUresult err;
    drv_enter();
    (void)config;
    err = numClusters ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *numClusters = 16;
    pthread_mutex_lock(&drv_lock);
    const char *name = drv_function_name(drv_function_find(func));
    pthread_mutex_unlock(&drv_lock);
    return drv_finish("cuOccupancyMaxActiveClusters", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Occupancy as an H100's SM has it: 2048 threads, 32 blocks, 64 Ki
 * registers (allocated per warp in units of 256) and 228 KiB of shared
 * memory (each block's static and dynamic, plus the 1 KiB the system
 * reserves per block). A function the simulator knows nothing of (NULL, a
 * kernel named on demand) has its defaults: 32 registers, no static. */
#define SM_THREADS 2048
#define SM_BLOCKS 32
#define SM_REGISTERS 65536
#define SM_SHARED 233472u
#define SM_RESERVED_SHARED 1024u

static int blocks_per_sm(obs_CUfunction func, int block_size, size_t dynamic_smem)
{
    const struct drv_function *f;
    int regs = 32, max_threads = 1024, blocks, warps = (block_size + 31) / 32, per_warp;
    size_t smem = 0;
    pthread_mutex_lock(&drv_lock);
    f = drv_function_find(func);
    if (f) {
        regs = drv_function_attribute(f, 4);
        smem = (size_t)drv_function_attribute(f, 1);
        max_threads = drv_function_attribute(f, DRV_FUNC_MAX_THREADS);
    }
    pthread_mutex_unlock(&drv_lock);
    if (block_size > max_threads)
        return 0;
    blocks = SM_THREADS / (warps * 32);
    if (blocks > SM_BLOCKS)
        blocks = SM_BLOCKS;
    per_warp = (regs * 32 + 255) / 256 * 256;
    if (per_warp > 0 && SM_REGISTERS / (per_warp * warps) < blocks)
        blocks = SM_REGISTERS / (per_warp * warps);
    smem += dynamic_smem + SM_RESERVED_SHARED;
    if (SM_SHARED / smem < (size_t)blocks)
        blocks = (int)(SM_SHARED / smem);
    return blocks;
}

DRV_EXPORT obs_CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, obs_CUfunction func, int blockSize,
                                                                    size_t dynamicSMemSize)
{
    obs_CUresult err;
    drv_enter();
    err = numBlocks && blockSize > 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *numBlocks = blocks_per_sm(func, blockSize, dynamicSMemSize);
    return drv_finish("cuOccupancyMaxActiveBlocksPerMultiprocessor", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                      DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, obs_CUfunction func,
                                                                             int blockSize, size_t dynamicSMemSize,
                                                                             unsigned int flags)
{
    obs_CUresult err;
    drv_enter();
    (void)flags; /* CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE: no cache modelled */
    err = numBlocks && blockSize > 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *numBlocks = blocks_per_sm(func, blockSize, dynamicSMemSize);
    return drv_finish("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", DRV_KIND_OTHER, NULL,
                      DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* The block size that keeps most threads resident, and the grid that fills
 * the 132 SMs with it; the dynamic shared memory per block size from the
 * callback when there is one. */
typedef size_t (*drv_block_to_smem)(int block_size);

static obs_CUresult potential_block_size(int *min_grid, int *block, obs_CUfunction func, drv_block_to_smem to_smem,
                                         size_t smem, int limit)
{
    int size, best = 0, best_blocks = 0, max_threads = 1024;
    obs_CUresult err = min_grid && block ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    if (drv_function_find(func))
        max_threads = drv_function_attribute(drv_function_find(func), DRV_FUNC_MAX_THREADS);
    pthread_mutex_unlock(&drv_lock);
    if (limit > 0 && limit < max_threads)
        max_threads = limit;
    for (size = max_threads / 32 * 32; size >= 32; size -= 32) {
        int blocks = blocks_per_sm(func, size, to_smem ? to_smem(size) : smem);
        if (blocks * size > best_blocks * best) {
            best = size;
            best_blocks = blocks;
        }
    }
    *block = best;
    *min_grid = best_blocks * 132;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, obs_CUfunction func,
                                                         void *blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                                         int blockSizeLimit)
{
    drv_block_to_smem to_smem;
    drv_enter();
    memcpy(&to_smem, &blockSizeToDynamicSMemSize, sizeof to_smem);
    return drv_finish("cuOccupancyMaxPotentialBlockSize", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      potential_block_size(minGridSize, blockSize, func, to_smem, dynamicSMemSize, blockSizeLimit));
}

DRV_EXPORT obs_CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize,
                                                                  obs_CUfunction func,
                                                                  void *blockSizeToDynamicSMemSize,
                                                                  size_t dynamicSMemSize, int blockSizeLimit,
                                                                  unsigned int flags)
{
    drv_block_to_smem to_smem;
    drv_enter();
    (void)flags;
    memcpy(&to_smem, &blockSizeToDynamicSMemSize, sizeof to_smem);
    return drv_finish("cuOccupancyMaxPotentialBlockSizeWithFlags", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                      DRV_NO_BYTES,
                      potential_block_size(minGridSize, blockSize, func, to_smem, dynamicSMemSize, blockSizeLimit));
}

/* The dynamic shared memory one of numBlocks co-resident blocks may use:
 * the SM's 228 KiB less 1 KiB reserved per block, shared out, capped at
 * the per-block opt-in limit. */
DRV_EXPORT obs_CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, obs_CUfunction func,
                                                                 int numBlocks, int blockSize)
{
    obs_CUresult err;
    drv_enter();
    (void)func;
    err = dynamicSmemSize && numBlocks > 0 && blockSize > 0 ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        size_t per_block = (233472u - 1024u * (size_t)numBlocks) / (size_t)numBlocks;
        if ((size_t)numBlocks * 1024u >= 233472u)
            per_block = 0;
        *dynamicSmemSize = per_block > 232448u ? 232448u : per_block;
    }
    return drv_finish("cuOccupancyAvailableDynamicSMemPerBlock", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                      DRV_NO_BYTES, err);
}

/* ---- peers --------------------------------------------------------------------------------- */

/* The devices are PCIe cards without peer access (as NVML's P2P status
 * says): a device cannot map another's memory, and the P2P attributes are
 * 0 (performance rank, access, atomics, CUDA arrays). NCCL then moves data
 * between GPUs of one host through host memory (its SHM transport) or the
 * network. */
DRV_EXPORT obs_CUresult cuDeviceCanAccessPeer(int *canAccessPeer, obs_CUdevice dev, obs_CUdevice peerDev)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(dev, canAccessPeer);
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(peerDev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS)
        *canAccessPeer = 0;
    return drv_finish("cuDeviceCanAccessPeer", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuDeviceGetP2PAttribute(int *value, int attrib, obs_CUdevice srcDevice,
                                                obs_CUdevice dstDevice)
{
    obs_CUresult err;
    drv_enter();
    err = need_device(srcDevice, value);
    if (err == OBS_CUDA_SUCCESS && (!drv_valid_device(dstDevice) || srcDevice == dstDevice))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS && (attrib < 1 || attrib > 5))
        err = OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        *value = 0;
    return drv_finish("cuDeviceGetP2PAttribute", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* "[domain:]bus:device[.function]" in hex (the driver's and NVML's forms). */
DRV_EXPORT obs_CUresult cuDeviceGetByPCIBusId(obs_CUdevice *dev, const char *pciBusId)
{
    obs_CUresult err;
    drv_enter();
    err = dev && pciBusId ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        const char *colon = strchr(pciBusId, ':'), *bus_text = pciBusId;
        unsigned long domain = 0, bus = 0;
        char *end = NULL;
        err = OBS_CUDA_ERROR_INVALID_VALUE;
        if (colon != NULL && strchr(colon + 1, ':') != NULL) {
            domain = strtoul(pciBusId, &end, 16);
            bus_text = end == colon ? colon + 1 : NULL;
        }
        if (colon != NULL && bus_text != NULL) {
            bus = strtoul(bus_text, &end, 16);
            if (end != bus_text && *end == ':' && domain == 0)
                err = OBS_CUDA_ERROR_INVALID_DEVICE;
        }
        for (int d = 0; err == OBS_CUDA_ERROR_INVALID_DEVICE && d < drv_device_count(); d++)
            if (sim_gpu_pci_bus(machine_gpu(d)) == bus) {
                *dev = d;
                err = OBS_CUDA_SUCCESS;
            }
    }
    return drv_finish("cuDeviceGetByPCIBusId", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}
