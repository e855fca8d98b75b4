/* What the simulated driver (sim/, libcuda.so.1) offers NVIDIA's own
 * runtime and cuBLAS, checked in this process with no toolkit (the real
 * runtime on it: tests/t_real_cudart):
 *   - every public CUDA 13.0 driver name (cudrv_sim_names.h) is exported; one the simulator
 *     does not implement is a stub that returns 801 and logs "stub";
 *     cuGetProcAddress_v2 serves names beyond the hooked lists (the
 *     generated rows: cuIpcGetMemHandle, cuGLInit ...) with dlsym's pointer,
 *     refuses the empty name;
 *   - NVIDIA images (fatbin wrapper, fatbin, ELF cubin, PTX): libraries
 *     load before a context is current; a fatbin stored compressed names
 *     its kernels on demand (cuKernelGetName, cuFuncGetName give the name
 *     back), an empty one has none, a cubin only those it defines; globals
 *     are made when named (64 KiB, the same address each time); modules
 *     from cuModuleLoadFatBinary / cuModuleLoadDataEx; an ELF header alone
 *     and other bytes are refused;
 *   - modules from files (cuModuleLoad of nvcc's cubin, cuLibraryLoadFromFile
 *     of Triton's: FILE_NOT_FOUND for a missing one) and from PTX text,
 *     each kernel with the registers, block bound and shared memory its
 *     image gives; launches refused past the bound or past the dynamic
 *     shared memory allowed (until cuFuncSetAttribute raises it, within the
 *     opt-in limit); occupancy by threads, registers and shared memory;
 *   - function and kernel attributes (defaults, the settable ones kept,
 *     read-only ones refused), cuMemFree(0), 256-byte aligned allocations,
 *     every CU_LIMIT_*, cuStreamGetCaptureInfo (v1, v2, v3) outside and
 *     inside a capture, occupancy answers;
 *   - the private tables: the seven UUIDs served (size in slot 0 but the
 *     context-local storage table), f8cff951 refused; context-local storage
 *     insert / get / remove; the context check answers "not a wrapper"
 *     and 0; the tool hooks' buffers; cuBLASLt's slots 4, 39, 51; the
 *     integrity answers for versions 13000 and 13001 are constants, for
 *     13002 a hash that depends on the timestamp. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cuda_driver_abi.h"
#include "sim/cudrv_sim_names.h"
#include "tap/basic.h"
#include "tap/process.h"

static void *sim;
static char log_path[4200];

static void *sym(const char *name)
{
    void *p = dlsym(sim, name);
    if (p == NULL)
        bail("the simulated driver does not export %s", name);
    return p;
}

/* Call an exported entry point through a pointer of the right type. */
#define CALL(type, name, ...) (((type)sym(#name))(__VA_ARGS__))

typedef int (*fn_void)(void);
typedef int (*fn_init)(unsigned);
typedef int (*fn_retain)(obs_CUcontext *, int);
typedef int (*fn_ctx)(obs_CUcontext);
typedef int (*fn_load_lib)(obs_CUlibrary *, const void *, void *, void *, unsigned, void *, void *, unsigned);
typedef int (*fn_lib_kernel)(obs_CUkernel *, obs_CUlibrary, const char *);
typedef int (*fn_kernel_name)(const char **, obs_CUkernel);
typedef int (*fn_func_name)(const char **, obs_CUfunction);
typedef int (*fn_kernel_func)(obs_CUfunction *, obs_CUkernel);
typedef int (*fn_lib_global)(obs_CUdeviceptr *, size_t *, obs_CUlibrary, const char *);
typedef int (*fn_mod_load)(obs_CUmodule *, const void *);
typedef int (*fn_mod_load_ex)(obs_CUmodule *, const void *, unsigned, int *, void **);
typedef int (*fn_mod_func)(obs_CUfunction *, obs_CUmodule, const char *);
typedef int (*fn_kernel_get_attr)(int *, int, obs_CUkernel, int);
typedef int (*fn_kernel_set_attr)(int, int, obs_CUkernel, int);
typedef int (*fn_func_get_attr)(int *, int, obs_CUfunction);
typedef int (*fn_alloc)(obs_CUdeviceptr *, size_t);
typedef int (*fn_free)(obs_CUdeviceptr);
typedef int (*fn_htod)(obs_CUdeviceptr, const void *, size_t);
typedef int (*fn_dtoh)(void *, obs_CUdeviceptr, size_t);
typedef int (*fn_limit)(size_t *, int);
typedef int (*fn_stream_create)(obs_CUstream *, unsigned);
typedef int (*fn_capture_begin)(obs_CUstream, int);
typedef int (*fn_capture_end)(obs_CUstream, obs_CUgraph *);
typedef int (*fn_info1)(obs_CUstream, int *, uint64_t *);
typedef int (*fn_info2)(obs_CUstream, int *, uint64_t *, obs_CUgraph *, const void **, size_t *);
typedef int (*fn_info3)(obs_CUstream, int *, uint64_t *, obs_CUgraph *, const void **, const void **, size_t *);
typedef int (*fn_smem)(size_t *, obs_CUfunction, int, int);
typedef int (*fn_clusters)(int *, obs_CUfunction, const void *);
typedef int (*fn_proc)(const char *, void **, int, uint64_t, int *);
typedef int (*fn_export)(const void **, const unsigned char *);
typedef int (*fn_stub)(void *);

/* ---- stubs and lookups ---------------------------------------------------------------- */

static size_t log_lines_with(const char *needle)
{
    char *text = test_read_file(log_path, NULL);
    size_t n = text ? count_lines_with(text, needle) : 0;
    free(text);
    return n;
}

static void test_stubs_and_lookups(void)
{
    void *pfn = NULL;
    int status = -1;
    static const char *const interop[] = {"cuGLInit", "cuGraphicsGLRegisterBuffer", "cuVDPAUGetDevice",
                                          "cuEGLStreamConsumerConnect", "cuProfilerStart", "cuIpcGetMemHandle"};
    size_t i, missing = 0;

    static const char *const public_names[] = {
#define PUBLIC_NAME(name) #name,
        OBS_CUDRV_SIM_PUBLIC_NAMES(PUBLIC_NAME)
#undef PUBLIC_NAME
    };

    for (i = 0; i < sizeof public_names / sizeof public_names[0]; i++)
        missing += dlsym(sim, public_names[i]) == NULL;
    is_int(0, (long long)missing, "every public driver name of CUDA 13.0 is exported (%zu)",
           sizeof public_names / sizeof public_names[0]);
    missing = 0;
    for (i = 0; i < sizeof interop / sizeof interop[0]; i++)
        missing += dlsym(sim, interop[i]) == NULL;
    is_int(0, (long long)missing, "public names beyond the hooked lists are exported (GL, VDPAU, EGL, profiler, "
                                  "IPC)");
    is_int(OBS_CUDA_ERROR_NOT_SUPPORTED, CALL(fn_stub, cuIpcGetMemHandle, NULL),
           "a name the simulator does not implement is a stub: 801");
    is_int(1, (long long)log_lines_with("cuIpcGetMemHandle\tother\tstub\t-\t-\t801"), "and the stub's call is logged");

    is_int(0, CALL(fn_proc, cuGetProcAddress_v2, "cuIpcGetMemHandle", &pfn, 13000, 0, &status),
           "cuGetProcAddress_v2 serves a name outside the hooked lists");
    ok(pfn == dlsym(sim, "cuIpcGetMemHandle") && status == OBS_CU_GET_PROC_ADDRESS_SUCCESS,
       "with dlsym's pointer and SUCCESS");
    pfn = NULL;
    is_int(0, CALL(fn_proc, cuGetProcAddress_v2, "cuGLMapBufferObject", &pfn, 7000, 2, &status),
           "an interop name with the per-thread flag");
    ok(pfn == dlsym(sim, "cuGLMapBufferObject_v2_ptds"), "gets its _v2_ptds variant");
    pfn = (void *)1;
    is_int(500, CALL(fn_proc, cuGetProcAddress_v2, "", &pfn, 0, 0, &status), "the empty name (cudart's probe): 500");
    ok(pfn == NULL, "and no pointer");
}

/* ---- images, kernels, globals, attributes -------------------------------------------------------- */

/* An image of tests/fuzz/sim_image_corpus (nvcc's and Triton's output;
 * tests/fuzz/sim_image_seeds.md), NUL-terminated. */
static unsigned char *fixture(const char *name, size_t *len, char *path, size_t path_size)
{
    unsigned char *data;
    snprintf(path, path_size, "%s/%s", test_path(test_srcdir(), "tests/fuzz/sim_image_corpus"), name);
    data = (unsigned char *)test_read_file(path, len);
    if (data == NULL)
        bail("cannot read %s", path);
    return data;
}

/* Every entry of a fatbin stored compressed, as nvcc stores all but small
 * ones: nothing the simulator can read, so its kernels are named on demand. */
static void compress_entries(unsigned char *fat)
{
    size_t off = 16, end = 16 + ((size_t)fat[8] | (size_t)fat[9] << 8 | (size_t)fat[10] << 16);
    while (off + 64 <= end) {
        unsigned char *h = fat + off;
        size_t header = (size_t)h[4] | (size_t)h[5] << 8, padded = (size_t)h[8] | (size_t)h[9] << 8 | (size_t)h[10] << 16;
        h[41] |= 0x80;
        off += header + padded;
    }
}

static void test_images(void)
{
    /* A fatbin wrapper (what cudart registers): magic, version, the fatbin, no file name. */
    static const uint32_t empty_fatbin[4] = {0xba55ed50u, 0x00100001u, 0, 0};
    struct wrapper {
        uint32_t magic, version;
        const void *data, *filename;
    } wrapper = {0x466243b1u, 1, NULL, NULL}, empty = {0x466243b1u, 1, empty_fatbin, NULL};
    /* a whole ELF header, 64 bytes: an image given with no size is read as far as its header goes */
    static const unsigned char elf_header_only[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    static const char junk[] = "not a module";
    char path[4400];
    size_t fat_len = 0, cubin_len = 0;
    unsigned char *fat = fixture("kernels-compressed.fatbin", &fat_len, path, sizeof path);
    unsigned char *cubin = fixture("kernels.cubin", &cubin_len, path, sizeof path);
    obs_CUcontext ctx = NULL;
    obs_CUlibrary lib = NULL, none = NULL;
    obs_CUkernel k = NULL, k2 = NULL;
    obs_CUfunction f = NULL, mf = NULL;
    obs_CUmodule mod = NULL;
    obs_CUdeviceptr g = 0, g2 = 0;
    size_t gbytes = 0;
    const char *name = NULL;
    int v = 0, jit_opt = 0;
    void *jit_val = NULL;
    float back[4], in[4] = {1, 2, 3, 4};

    compress_entries(fat);
    wrapper.data = fat;
    is_int(0, CALL(fn_init, cuInit, 0), "cuInit");
    is_int(0, CALL(fn_load_lib, cuLibraryLoadData, &lib, &wrapper, NULL, NULL, 0, NULL, NULL, 0),
           "a fatbin wrapper loads as a library before any context is current");
    is_int(0, CALL(fn_lib_kernel, cuLibraryGetKernel, &k, lib, "_Z6kernelPfi"),
           "its entries stored compressed: a kernel is made when named");
    is_int(0, CALL(fn_lib_kernel, cuLibraryGetKernel, &k2, lib, "_Z6kernelPfi"), "named again");
    ok(k != NULL && k == k2, "the same CUkernel");
    is_int(0, CALL(fn_kernel_name, cuKernelGetName, &name, k), "cuKernelGetName");
    is_string("_Z6kernelPfi", name, "gives the name it was asked by");
    is_int(0, CALL(fn_load_lib, cuLibraryLoadData, &none, &empty, NULL, NULL, 0, NULL, NULL, 0),
           "a wrapper of an empty fatbin loads");
    is_int(500, CALL(fn_lib_kernel, cuLibraryGetKernel, &k2, none, "_Z6kernelPfi"),
           "and has no kernel: CUDA_ERROR_NOT_FOUND");

    is_int(0, CALL(fn_retain, cuDevicePrimaryCtxRetain, &ctx, 0), "primary context");
    is_int(0, CALL(fn_ctx, cuCtxSetCurrent, ctx), "made current");
    is_int(0, CALL(fn_kernel_func, cuKernelGetFunction, &f, k), "cuKernelGetFunction");
    name = NULL;
    is_int(0, CALL(fn_func_name, cuFuncGetName, &name, f), "cuFuncGetName");
    is_string("_Z6kernelPfi", name, "the function has the kernel's name");

    is_int(0, CALL(fn_lib_global, cuLibraryGetGlobal, &g, &gbytes, lib, "devConstants"),
           "a global is made when named");
    ok(g != 0 && gbytes == 65536, "64 KiB of device memory (%zu)", gbytes);
    is_int(0, CALL(fn_lib_global, cuLibraryGetGlobal, &g2, NULL, lib, "devConstants"), "named again");
    ok(g2 == g, "the same address");
    is_int(0, CALL(fn_htod, cuMemcpyHtoD_v2, g, in, sizeof in), "a copy into it");
    is_int(0, CALL(fn_dtoh, cuMemcpyDtoH_v2, back, g, sizeof back), "and back");
    ok(memcmp(back, in, sizeof in) == 0, "moves the bytes");

    is_int(0, CALL(fn_mod_load, cuModuleLoadFatBinary, &mod, fat), "cuModuleLoadFatBinary with a fatbin");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &mf, mod, "_Z5otherv"), "its function, named on demand");
    name = NULL;
    CALL(fn_func_name, cuFuncGetName, &name, mf);
    is_string("_Z5otherv", name, "with that name");
    is_int(0, CALL(fn_mod_load_ex, cuModuleLoadDataEx, &mod, cubin, 1, &jit_opt, &jit_val),
           "cuModuleLoadDataEx with an ELF cubin and a JIT option");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &mf, mod, "_Z6kern_aPfi"), "a kernel the cubin defines");
    is_int(500, CALL(fn_mod_func, cuModuleGetFunction, &mf, mod, "_Z6helperf"),
           "a device function of it is no kernel: CUDA_ERROR_NOT_FOUND");
    is_int(200, CALL(fn_mod_load_ex, cuModuleLoadDataEx, &mod, elf_header_only, 0, NULL, NULL),
           "an ELF header with no sections: CUDA_ERROR_INVALID_IMAGE");
    is_int(200, CALL(fn_mod_load, cuModuleLoadFatBinary, &mod, junk), "other bytes: CUDA_ERROR_INVALID_IMAGE");

    /* Attributes: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0, NUM_REGS 4,
     * BINARY_VERSION 6, MAX_DYNAMIC_SHARED_SIZE_BYTES 8. */
    CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 0, k, 0);
    is_int(1024, v, "a kernel named on demand allows 1024 threads per block");
    CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 6, k, 0);
    is_int(90, v, "binary version 9.0");
    CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 8, k, 0);
    is_int(49152, v, "48 KiB of dynamic shared memory by default");
    is_int(0, CALL(fn_kernel_set_attr, cuKernelSetAttribute, 8, 100000, k, 0), "raised to 100000");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 8, f);
    is_int(100000, v, "the kernel's function sees it");
    is_int(1, CALL(fn_kernel_set_attr, cuKernelSetAttribute, 4, 16, k, 0), "a read-only attribute: invalid value");
    is_int(1, CALL(fn_kernel_set_attr, cuKernelSetAttribute, 8, 300000, k, 0), "more than the opt-in limit: refused");
    is_int(101, CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 0, k, 1), "another device: invalid device");
    free(fat);
    free(cubin);
}

typedef int (*fn_mod_load_file)(obs_CUmodule *, const char *);
typedef int (*fn_lib_load_file)(obs_CUlibrary *, const char *, void *, void *, unsigned, void *, void *, unsigned);
typedef int (*fn_func_set_attr)(obs_CUfunction, int, int);
typedef int (*fn_launch)(obs_CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         obs_CUstream, void **, void **);
typedef int (*fn_occupancy)(int *, obs_CUfunction, int, size_t);

/* Modules from files (cuModuleLoad: how Inductor's static launcher loads
 * Triton's cubins; cuLibraryLoadFromFile) and from PTX text, their kernels
 * by the names the image defines, with its attributes, and launches held to
 * them as a GPU holds them. */
static void test_module_files(void)
{
    static const char ptx[] = "//\n// hand-written\n//\n.version 8.0\n.target sm_90\n.address_size 64\n"
                              ".visible .entry probe(.param .u64 p)\n.maxntid 64, 2, 1\n{\n ret;\n}\n"
                              ".func helper()\n{\n ret;\n}\n";
    char cubin_path[4400], triton_path[4400], missing[4500];
    size_t len;
    obs_CUmodule mod = NULL, pmod = NULL;
    obs_CUlibrary lib = NULL;
    obs_CUfunction a = NULL, b = NULL, p = NULL, tf = NULL;
    obs_CUkernel tk = NULL;
    int v = 0, blocks = 0;

    free(fixture("kernels.cubin", &len, cubin_path, sizeof cubin_path));
    free(fixture("triton_poi_fused_gelu_0.cubin", &len, triton_path, sizeof triton_path));
    snprintf(missing, sizeof missing, "%s.missing", cubin_path);
    is_int(0, CALL(fn_mod_load_file, cuModuleLoad, &mod, cubin_path), "cuModuleLoad of an nvcc cubin");
    is_int(301, CALL(fn_mod_load_file, cuModuleLoad, &pmod, missing), "a file that is not there: FILE_NOT_FOUND");
    is_int(1, CALL(fn_mod_load_file, cuModuleLoad, &pmod, NULL), "no name: invalid value");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &a, mod, "_Z6kern_aPfi"), "its kernel kern_a");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &b, mod, "_Z6kern_bIdEvPT_"), "its kernel kern_b<double>");
    is_int(500, CALL(fn_mod_func, cuModuleGetFunction, &p, mod, "_Z6kernelPfi"), "another name: NOT_FOUND");

    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 4, a);
    is_int(12, v, "kern_a: its 12 registers (EIATTR_REGCOUNT)");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 0, a);
    is_int(256, v, "its __launch_bounds__(256)");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 1, a);
    is_int(1200, v, "its 1200 bytes of static shared memory");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 8, a);
    is_int(49152 - 1200, v, "the dynamic shared memory left beside it under 48 KiB");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 3, a);
    is_int(0, v, "no local memory");
    is_int(0, CALL(fn_launch, cuLaunchKernel, a, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, NULL), "a launch of 256 threads");
    is_int(1, CALL(fn_launch, cuLaunchKernel, a, 4, 1, 1, 257, 1, 1, 0, NULL, NULL, NULL),
           "257 threads, past its bound: invalid value");
    is_int(1, CALL(fn_launch, cuLaunchKernel, b, 1, 1, 1, 128, 1, 1, 49153, NULL, NULL, NULL),
           "more dynamic shared memory than allowed: invalid value");
    is_int(0, CALL(fn_func_set_attr, cuFuncSetAttribute, b, 8, 100000), "allowed more (cuFuncSetAttribute)");
    is_int(0, CALL(fn_launch, cuLaunchKernel, b, 1, 1, 1, 128, 1, 1, 49153, NULL, NULL, NULL), "then it launches");
    is_int(1, CALL(fn_func_set_attr, cuFuncSetAttribute, a, 8, 232448 - 1200 + 1),
           "dynamic and static past the opt-in limit: refused");
    is_int(0, CALL(fn_func_set_attr, cuFuncSetAttribute, a, 8, 232448 - 1200), "up to it: allowed");
    is_int(0, CALL(fn_occupancy, cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, a, 256, 0), "occupancy");
    is_int(8, blocks, "2048 threads an SM: 8 blocks of 256 (12 registers, 1,200 + 1,024 bytes of shared each)");
    is_int(0, CALL(fn_occupancy, cuOccupancyMaxActiveBlocksPerMultiprocessor, &blocks, a, 256, 40000), "with 40000 dynamic");
    is_int(5, blocks, "5 blocks: the SM's 228 KiB shared by blocks of 42,224 bytes");

    is_int(0, CALL(fn_lib_load_file, cuLibraryLoadFromFile, &lib, triton_path, NULL, NULL, 0, NULL, NULL, 0),
           "cuLibraryLoadFromFile of Triton's cubin");
    is_int(0, CALL(fn_lib_kernel, cuLibraryGetKernel, &tk, lib, "triton_poi_fused_gelu_0"), "its kernel");
    CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 0, tk, 0);
    is_int(128, v, "its .reqntid of 128 threads");
    CALL(fn_kernel_get_attr, cuKernelGetAttribute, &v, 4, tk, 0);
    is_int(12, v, "and 12 registers");
    is_int(0, CALL(fn_kernel_func, cuKernelGetFunction, &tf, tk), "its function");
    is_int(0, CALL(fn_launch, cuLaunchKernel, tf, 2, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL), "launched as Triton does");

    is_int(0, CALL(fn_mod_load, cuModuleLoadData, &pmod, ptx), "cuModuleLoadData of PTX text (NVRTC's output)");
    is_int(0, CALL(fn_mod_func, cuModuleGetFunction, &p, pmod, "probe"), "its .entry");
    is_int(500, CALL(fn_mod_func, cuModuleGetFunction, &p, pmod, "helper"), "its .func is no kernel");
    CALL(fn_func_get_attr, cuFuncGetAttribute, &v, 0, p);
    is_int(128, v, ".maxntid 64, 2, 1: 128 threads at most");
}

/* ---- memory, limits, capture, occupancy ----------------------------------------------------- */

static void test_memory_and_queries(void)
{
    obs_CUdeviceptr p[8];
    size_t i, misaligned = 0, value = 0, smem = 0;
    int bad_limits = 0, st = -1, clusters = 0;
    uint64_t id = 0;
    obs_CUgraph graph = NULL, captured = NULL;
    const void *deps = (const void *)1, *edges = (const void *)1;
    size_t ndeps = 99;
    obs_CUstream s = NULL;

    is_int(0, CALL(fn_free, cuMemFree_v2, 0), "cuMemFree(0) does nothing and succeeds (cudaFree(0))");
    for (i = 0; i < 8; i++) {
        if (CALL(fn_alloc, cuMemAlloc_v2, &p[i], 1 + 37 * i) != 0)
            bail("cuMemAlloc_v2 failed");
        misaligned += p[i] % 256 != 0;
    }
    is_int(0, (long long)misaligned, "allocations are 256-byte aligned (cuBLASLt's workspace rule)");
    for (i = 0; i < 8; i++)
        CALL(fn_free, cuMemFree_v2, p[i]);
    for (i = 0; i < 10; i++)
        bad_limits += CALL(fn_limit, cuCtxGetLimit, &value, (int)i) != 0;
    is_int(0, bad_limits, "every CU_LIMIT_* of CUDA 13.0 answers");
    is_int(801, CALL(fn_limit, cuCtxGetLimit, &value, 10), "an unknown limit: not supported");

    is_int(0, CALL(fn_stream_create, cuStreamCreate, &s, 1), "a stream");
    is_int(0, CALL(fn_info2, cuStreamGetCaptureInfo_v2, s, &st, &id, &graph, (const void **)&deps, &ndeps),
           "capture info (v2) outside a capture");
    is_int(OBS_CU_STREAM_CAPTURE_STATUS_NONE, st, "status NONE");
    is_int(0, CALL(fn_capture_begin, cuStreamBeginCapture_v2, s, 0), "begin a capture");
    is_int(0, CALL(fn_info3, cuStreamGetCaptureInfo_v3, s, &st, &id, &graph, &deps, &edges, &ndeps),
           "capture info (v3) inside it");
    ok(st == OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && graph != NULL && deps == NULL && edges == NULL &&
           ndeps == 0,
       "ACTIVE, an id, the graph, no dependencies");
    st = -1;
    is_int(0, CALL(fn_info1, cuStreamGetCaptureInfo, s, &st, NULL), "the CUDA 10.1 form");
    is_int(OBS_CU_STREAM_CAPTURE_STATUS_ACTIVE, st, "ACTIVE too");
    is_int(0, CALL(fn_capture_end, cuStreamEndCapture, s, &captured), "end the capture");
    ok(captured == graph, "the graph it reported is the one captured");

    is_int(0, CALL(fn_smem, cuOccupancyAvailableDynamicSMemPerBlock, &smem, NULL, 2, 128),
           "available dynamic shared memory");
    is_int((233472 - 2 * 1024) / 2, (long long)smem, "an SM's 228 KiB less 1 KiB per block, shared by 2 blocks");
    is_int(0, CALL(fn_clusters, cuOccupancyMaxActiveClusters, &clusters, NULL, NULL), "cuOccupancyMaxActiveClusters");
    ok(clusters > 0, "answers clusters (%d)", clusters);
}

/* ---- private tables ------------------------------------------------------------------------- */

static const void *const *table(const char *hex, int *status)
{
    unsigned char uuid[16];
    const void *t = NULL;
    size_t i;
    for (i = 0; i < 16; i++) {
        unsigned b;
        sscanf(hex + 2 * i, "%2x", &b);
        uuid[i] = (unsigned char)b;
    }
    *status = CALL(fn_export, cuGetExportTable, &t, uuid);
    return t;
}

typedef int (*fn_cls_insert)(obs_CUcontext, void *, void *, void *);
typedef int (*fn_cls_remove)(obs_CUcontext, void *);
typedef int (*fn_cls_get)(void **, obs_CUcontext, void *);
typedef int (*fn_ctx_check)(obs_CUcontext, uint32_t *, obs_CUcontext *);
typedef uint32_t (*fn_ctx_flag)(void);
typedef void (*fn_buffer)(void **, size_t *);
typedef int (*fn_lt4)(uint64_t, uint64_t *);
typedef int (*fn_lt51)(void *, void *, void **);
typedef int (*fn_lt39)(void *, void *, uint64_t *);
typedef int (*fn_integrity)(uint32_t, uint64_t, uint8_t *);

static void test_tables(void)
{
    static const char *const sized[] = {"6bd5fb6c5bf4e74a8987d93912fd9df9", "a094798c2e742e7493f20800200c0a66",
                                        "42d85a8123f6cb478298f6e78a3aecdc", "263e88607cd2614392f6bbd5006dfa7e",
                                        "d4082055bde6704b8d34ba123c66e1f2", "21318c60971432488ca641ff7324c8f2"};
    const void *const *t;
    int st, bad = 0, key, value = 7;
    size_t i, size = 0;
    void *got = NULL, *buf = NULL;
    uint32_t wrapped = 9;
    obs_CUcontext unwrapped = (obs_CUcontext)0x1234;
    uint64_t flag = 9, zero = 9;
    uint8_t h0[16], h1[16], h2[16], h2b[16];

    for (i = 0; i < sizeof sized / sizeof sized[0]; i++) {
        t = table(sized[i], &st);
        bad += st != 0 || t == NULL || (size_t)t[0] < 2 * sizeof(void *) || t[1] == NULL;
    }
    is_int(0, bad, "six sized tables served (size in slot 0, slot 1 set)");
    t = table("f8cff95121468b4eb9e2fb469e7c0dd9", &st);
    ok(st == 500 && t == NULL, "f8cff951 refused (500)");

    t = table("c693336e1121df11a8c368f355d89593", &st);
    is_int(0, st, "context-local storage table");
    is_int(0, ((fn_cls_insert)t[0])(NULL, &key, &value, NULL), "insert");
    is_int(0, ((fn_cls_get)t[2])(&got, NULL, &key), "get");
    ok(got == &value, "the value inserted");
    is_int(0, ((fn_cls_remove)t[1])(NULL, &key), "remove");
    ok(((fn_cls_get)t[2])(&got, NULL, &key) != 0, "then get fails");
    ok(t[3] == NULL, "its last slot is NULL, as the real one");

    t = table("263e88607cd2614392f6bbd5006dfa7e", &st);
    is_int(0, ((fn_ctx_check)t[2])(NULL, &wrapped, &unwrapped), "context check");
    ok(wrapped == 0 && unwrapped == (obs_CUcontext)0x1234, "not a wrapper, the second output untouched");
    is_int(0, (long long)((fn_ctx_flag)t[3])(), "slot 3 answers 0");

    t = table("a094798c2e742e7493f20800200c0a66", &st);
    ((fn_buffer)t[2])(&buf, &size);
    ok(buf != NULL && size > 0, "tool hooks slot 2: a buffer");
    buf = NULL, size = 0;
    ((fn_buffer)t[6])(&buf, &size);
    ok(buf != NULL && size > 0, "tool hooks slot 6: a buffer");

    t = table("42d85a8123f6cb478298f6e78a3aecdc", &st);
    got = (void *)1;
    ok(((int (*)(void **))t[2])(&got) == 0 && got == NULL, "tool TLS slot 2: no tool state (NULL)");

    t = table("21318c60971432488ca641ff7324c8f2", &st);
    ok(((fn_lt4)t[4])(5, &flag) == 0 && flag == 1, "cuBLASLt slot 4: 1 for a set argument");
    ok(((fn_lt51)t[51])(NULL, NULL, &got) == 0 && got != NULL, "slot 51: an object");
    ok(((fn_lt39)t[39])(NULL, got, &zero) == 0 && zero == 0, "slot 39: 0");

    t = table("d4082055bde6704b8d34ba123c66e1f2", &st);
    ((fn_integrity)t[1])(13000, 1000, h0);
    ((fn_integrity)t[1])(13001, 1000, h1);
    ok(memcmp(h0, h1, 16) != 0 && ((fn_integrity)t[1])(13000, 2000, h2) == 0 && memcmp(h0, h2, 16) == 0,
       "integrity: versions ending in 0 and 1 get constants (not the timestamp's)");
    ((fn_integrity)t[1])(13002, 1000, h2);
    ((fn_integrity)t[1])(13002, 1001, h2b);
    ok(memcmp(h2, h2b, 16) != 0, "13002 gets a hash that depends on the timestamp");
    ((fn_integrity)t[1])(13002, 1000, h1);
    ok(memcmp(h2, h1, 16) == 0, "and is the same for the same inputs");
}

int main(void)
{
    plan_lazy();
    snprintf(log_path, sizeof log_path, "%s/sim.log", test_tmpdir());
    remove(log_path);
    setenv("OBS_SIM_LOG", log_path, 1);
    setenv("OBS_SIM_QUIET", "1", 1);
    sim = dlopen(test_path(test_builddir(), "sim/.libs/libcuda.so.1"), RTLD_NOW | RTLD_LOCAL);
    if (sim == NULL)
        bail("cannot load the simulated driver: %s", dlerror());
    test_stubs_and_lookups();
    test_images();
    test_module_files();
    test_memory_and_queries();
    test_tables();
    /* Not dlclose'd: the modules it loaded stay allocated until exit, and
     * after dlclose LeakSanitizer (make check-sanitize) could not see them
     * referenced from its globals. */
    (void)sim;
    return 0;
}
