/* The simulated driver's modules and libraries, their functions and
 * kernels, and the names cuFuncGetName / cuKernelGetName give back.
 *
 * Two kinds of image:
 * - the simulator's own text, "OBSSIMMOD\n" then one kernel name per line
 *   (NUL-terminated): only those names exist (others: CUDA_ERROR_NOT_FOUND);
 * - what NVIDIA's toolchain produces, recognised by its magic number: an
 *   ELF cubin (what Triton and torch.compile load with cuModuleLoad /
 *   cuModuleLoadData), PTX text (its first directive, after blanks and
 *   comments, is ".version": cuDNN loads a PTX probe when a handle is
 *   created; NVRTC's output), a fatbin (0xba55ed50) or the fatbin wrapper
 *   cudart hands to cuLibraryLoadData (0x466243b1). Its code is never run
 *   nor compiled; its kernels and their attributes are read from it
 *   (cudrv_sim_image.c): only the kernels it defines exist, with the
 *   registers, static shared memory, frame size and block bound it gives
 *   them. A fatbin whose entries are stored compressed (LZ4 or zstd: most
 *   of what nvcc 12.x/13 builds, PyTorch's and cuBLAS's own kernels) cannot
 *   be read here: there a kernel comes to exist when it is first asked for
 *   by name (cuLibraryGetKernel, cuModuleGetFunction), with that name, the
 *   mangled name from the runtime's registration, and default attributes.
 * Images can also come from files (cuModuleLoad, cuLibraryLoadFromFile).
 * Anything else is CUDA_ERROR_INVALID_IMAGE. Each library kernel is a
 * CUkernel with a CUfunction of its own. */
#include "cudrv_sim.h"

#include "cudrv_sim_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DRV_IMAGE_MAGIC "OBSSIMMOD\n"
/* The largest image file cuModuleLoad reads (cubins of a few MiB at most). */
#define DRV_IMAGE_FILE_MAX (256u << 20)

/* ---- modules, libraries, functions, kernels ------------------------------------ */

/* CU_FUNC_ATTRIBUTE_* (cuda.h, CUDA 13.0: 0 .. 15). */
#define DRV_FUNC_ATTRIBUTES 16

struct drv_function {
    char *name;
    int attributes[DRV_FUNC_ATTRIBUTES];
    struct drv_module *module;
    struct drv_function *next;
};

/* A library's kernel: its own handle, with the function it resolves to. */
struct drv_kernel {
    struct drv_function *function;
    struct drv_kernel *next;
};

/* A __device__ variable, made when first asked for (NVIDIA images). */
struct drv_global {
    char *name;
    obs_CUdeviceptr address;
    struct drv_global *next;
};

struct drv_module {
    int is_library;
    int linked;          /* in drv_modules: its functions and kernels are in the handle table */
    struct drv_global *globals;
    int nvidia_image;    /* globals made when named (their sizes are not read) */
    int names_on_demand; /* a compressed fatbin: kernels made when named */
    struct drv_function *functions;
    struct drv_kernel *kernels; /* libraries only */
    struct drv_module *next;
};

static struct drv_module *drv_modules;

/* ---- the handle table ------------------------------------------------------------ */

/* Every function and kernel handle of the linked modules, by address, under
 * drv_lock: a launch names its function by handle, and walking every
 * module's list for it (tens of thousands of functions once PyTorch and
 * cuBLAS are loaded) took 40 % of a Hugging Face decode step's host time
 * (perf, contrib/bench/fw_cost.py generate), far from what a driver's
 * lookup costs. Open addressing, linear probing, deletion by backward
 * shift; at most half full. Should it fail to grow (no memory), lookups
 * that miss it walk the lists as before. */
enum { HANDLE_FUNCTION = 1, HANDLE_KERNEL = 2 };
struct handle_slot {
    const void *key; /* NULL: empty */
    int kind;
};
static struct handle_slot *handles;
static size_t handles_cap, handles_n;
static int handles_incomplete;

static size_t handle_hash(const void *key, size_t cap)
{
    return (size_t)((((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

static int handles_grow(void)
{
    size_t cap = handles_cap ? handles_cap * 2 : 4096, i;
    struct handle_slot *t = calloc(cap, sizeof *t);
    if (t == NULL)
        return -1;
    for (i = 0; i < handles_cap; i++)
        if (handles[i].key != NULL) {
            size_t j = handle_hash(handles[i].key, cap);
            while (t[j].key != NULL)
                j = (j + 1) & (cap - 1);
            t[j] = handles[i];
        }
    free(handles);
    handles = t;
    handles_cap = cap;
    return 0;
}

static void handle_insert(const void *key, int kind)
{
    size_t j;
    if ((handles_n + 1) * 2 > handles_cap && handles_grow() != 0) {
        handles_incomplete = 1;
        return;
    }
    for (j = handle_hash(key, handles_cap); handles[j].key != NULL; j = (j + 1) & (handles_cap - 1))
        if (handles[j].key == key)
            return;
    handles[j].key = key;
    handles[j].kind = kind;
    handles_n++;
}

static void handle_remove(const void *key)
{
    size_t j, k, home;
    if (handles_cap == 0)
        return;
    for (j = handle_hash(key, handles_cap); handles[j].key != key; j = (j + 1) & (handles_cap - 1))
        if (handles[j].key == NULL)
            return;
    handles[j].key = NULL;
    handles_n--;
    /* the slots after it that probed past it move back */
    for (k = (j + 1) & (handles_cap - 1); handles[k].key != NULL; k = (k + 1) & (handles_cap - 1)) {
        home = handle_hash(handles[k].key, handles_cap);
        if (((k - home) & (handles_cap - 1)) >= ((k - j) & (handles_cap - 1))) {
            handles[j] = handles[k];
            handles[k].key = NULL;
            j = k;
        }
    }
}

/* The handle's kind (0: not a live handle, as far as the table knows). */
static int handle_kind(const void *key)
{
    size_t j;
    if (handles_cap == 0 || key == NULL)
        return 0;
    for (j = handle_hash(key, handles_cap); handles[j].key != NULL; j = (j + 1) & (handles_cap - 1))
        if (handles[j].key == key)
            return handles[j].kind;
    return 0;
}

static void module_free(struct drv_module *m)
{
    while (m->functions) {
        struct drv_function *f = m->functions;
        m->functions = f->next;
        free(f->name);
        free(f);
    }
    while (m->kernels) {
        struct drv_kernel *k = m->kernels;
        m->kernels = k->next;
        free(k);
    }
    while (m->globals) {
        struct drv_global *g = m->globals;
        m->globals = g->next;
        drv_mem_release(g->address);
        free(g->name);
        free(g);
    }
    free(m);
}

/* What an H100 reports for a small kernel compiled for sm_90: 1024
 * threads, 32 registers, no static shared memory, PTX and binary 9.0,
 * 48 KiB of dynamic shared memory until the program raises it. */
static void function_defaults(struct drv_function *f)
{
    static const int defaults[DRV_FUNC_ATTRIBUTES] = {1024, 0, 0, 0, 32, 90, 90, 0, 49152, -1, 0, 0, 0, 0, 0, 0};
    memcpy(f->attributes, defaults, sizeof defaults);
}

/* What an image says of a kernel (cudrv_sim_image.h: -1 where it is
 * silent): MAX_THREADS_PER_BLOCK, SHARED_SIZE_BYTES, LOCAL_SIZE_BYTES,
 * NUM_REGS, BINARY_VERSION; the dynamic shared memory a launch may use
 * without opting in is what 48 KiB leaves beside the static. */
static void function_from_image(struct drv_function *f, const struct sim_image_kernel *k)
{
    function_defaults(f);
    if (k->max_threads > 0)
        f->attributes[0] = k->max_threads;
    if (k->shared_bytes >= 0)
        f->attributes[1] = k->shared_bytes;
    if (k->local_bytes >= 0)
        f->attributes[3] = k->local_bytes;
    if (k->num_regs >= 0)
        f->attributes[4] = k->num_regs;
    if (k->binary_version > 0)
        f->attributes[6] = k->binary_version;
    f->attributes[8] = f->attributes[1] < 49152 ? 49152 - f->attributes[1] : 0;
}

static obs_CUresult module_add(struct drv_module *m, const char *name, size_t len, const struct sim_image_kernel *k)
{
    struct drv_function *f = calloc(1, sizeof *f);
    struct drv_kernel *kern = NULL;
    if (f == NULL || (f->name = strndup(name, len)) == NULL || (m->is_library && (kern = calloc(1, sizeof *kern)) == NULL)) {
        if (f)
            free(f->name);
        free(f);
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (k)
        function_from_image(f, k);
    else
        function_defaults(f);
    f->module = m;
    f->next = m->functions;
    m->functions = f;
    if (kern) {
        kern->function = f;
        kern->next = m->kernels;
        m->kernels = kern;
    }
    if (m->linked) { /* named on demand, under drv_lock */
        handle_insert(f, HANDLE_FUNCTION);
        if (kern)
            handle_insert(kern, HANDLE_KERNEL);
    }
    return OBS_CUDA_SUCCESS;
}

/* One kernel the image defines; a name seen twice (the same kernel in a
 * fatbin's sm_80 and sm_90 entries) is kept once. */
static int image_kernel(void *ctx, const struct sim_image_kernel *k)
{
    struct drv_module *m = ctx;
    const struct drv_function *f;
    for (f = m->functions; f; f = f->next)
        if (strlen(f->name) == k->name_len && memcmp(f->name, k->name, k->name_len) == 0)
            return 0;
    return module_add(m, k->name, k->name_len, k) == OBS_CUDA_SUCCESS ? 0 : 1;
}

/* An NVIDIA image: its kernels, or naming on demand when it cannot be read.
 * size 0: only the address is known (cuModuleLoadData). */
static obs_CUresult module_parse_nvidia(struct drv_module *m, const void *image, size_t size)
{
    struct sim_image_walk walk;
    enum sim_image_kind kind = sim_image_kind(image, size ? size : (size_t)-1); /* PTX: up to its NUL */
    int rc;
    if (kind == SIM_IMAGE_WRAPPER) { /* {magic, version, const void *fatbin, filename} */
        memcpy(&image, (const char *)image + 8, sizeof image);
        if (image == NULL || sim_image_kind(image, 4) != SIM_IMAGE_FATBIN)
            return OBS_CUDA_ERROR_INVALID_IMAGE;
        size = 0;
    } else if (kind == SIM_IMAGE_INVALID)
        return OBS_CUDA_ERROR_INVALID_IMAGE;
    if (size == 0 && (size = sim_image_extent(image)) == 0)
        return OBS_CUDA_ERROR_INVALID_IMAGE;
    rc = sim_image_kernels(image, size, image_kernel, m, &walk);
    if (rc > 0)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    if (rc < 0)
        return OBS_CUDA_ERROR_INVALID_IMAGE;
    m->nvidia_image = 1;
    /* a fatbin's entries are one source built for several targets: any entry read names them all */
    m->names_on_demand = walk.kernels == 0 && walk.unreadable > 0;
    return OBS_CUDA_SUCCESS;
}

/* Parse an image into a module (not yet published). */
static obs_CUresult module_parse(const void *image, size_t size, int is_library, struct drv_module **out)
{
    const char *p = image, *end;
    struct drv_module *m;
    obs_CUresult err = OBS_CUDA_SUCCESS;

    if (p == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    m = calloc(1, sizeof *m);
    if (m == NULL)
        return OBS_CUDA_ERROR_OUT_OF_MEMORY;
    m->is_library = is_library;
    if ((size == 0 || size > strlen(DRV_IMAGE_MAGIC)) && strncmp(p, DRV_IMAGE_MAGIC, strlen(DRV_IMAGE_MAGIC)) == 0) {
        for (p += strlen(DRV_IMAGE_MAGIC); *p && err == OBS_CUDA_SUCCESS; p = *end ? end + 1 : end) {
            end = strchr(p, '\n');
            if (end == NULL)
                end = p + strlen(p);
            if (end > p)
                err = module_add(m, p, (size_t)(end - p), NULL);
        }
    } else {
        err = module_parse_nvidia(m, image, size);
    }
    if (err != OBS_CUDA_SUCCESS) {
        module_free(m);
        return err;
    }
    *out = m;
    return OBS_CUDA_SUCCESS;
}

/* size 0: only the image's address is known. */
static obs_CUresult load_image(void **out, const void *image, size_t size, int is_library)
{
    struct drv_module *m = NULL;
    /* Libraries are context-independent (CUDA 12.0): cudart loads its
     * fatbins before any context is current. Modules belong to one. */
    obs_CUresult err = out ? (is_library ? drv_need_init() : drv_need_context()) : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS)
        err = module_parse(image, size, is_library, &m);
    if (err == OBS_CUDA_SUCCESS) {
        struct drv_function *f;
        struct drv_kernel *k;
        pthread_mutex_lock(&drv_lock);
        m->next = drv_modules;
        drv_modules = m;
        m->linked = 1;
        for (f = m->functions; f; f = f->next)
            handle_insert(f, HANDLE_FUNCTION);
        for (k = m->kernels; k; k = k->next)
            handle_insert(k, HANDLE_KERNEL);
        pthread_mutex_unlock(&drv_lock);
        *out = m;
    }
    return err;
}

obs_CUresult drv_module_load_image(void **out, const void *image, int is_library)
{
    return load_image(out, image, 0, is_library);
}

/* cuModuleLoad, cuLibraryLoadFromFile: the file's bytes as an image. */
static obs_CUresult load_file(void **out, const char *path, int is_library)
{
    struct stat st;
    char *bytes;
    size_t done = 0;
    obs_CUresult err;
    int fd;
    if (out == NULL || path == NULL)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    err = is_library ? drv_need_init() : drv_need_context();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return OBS_CUDA_ERROR_FILE_NOT_FOUND;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > DRV_IMAGE_FILE_MAX ||
        (bytes = malloc((size_t)st.st_size + 1)) == NULL) {
        close(fd);
        return OBS_CUDA_ERROR_INVALID_IMAGE;
    }
    while (done < (size_t)st.st_size) {
        ssize_t n = read(fd, bytes + done, (size_t)st.st_size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    bytes[done] = 0; /* PTX text read as a string */
    err = done == (size_t)st.st_size ? load_image(out, bytes, done, is_library) : OBS_CUDA_ERROR_INVALID_IMAGE;
    free(bytes); /* the module keeps its kernels' names, not the image */
    return err;
}

static struct drv_module *module_lookup(const void *handle, int is_library)
{
    struct drv_module *m;
    for (m = drv_modules; m; m = m->next)
        if ((const void *)m == handle && m->is_library == is_library)
            return m;
    return NULL;
}

static obs_CUresult module_unload(const void *handle, int is_library)
{
    struct drv_module **link, *m = NULL;
    obs_CUresult err = drv_need_init();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    for (link = &drv_modules; *link; link = &(*link)->next)
        if ((const void *)*link == handle && (*link)->is_library == is_library) {
            const struct drv_function *f;
            const struct drv_kernel *k;
            m = *link;
            *link = m->next;
            for (f = m->functions; f; f = f->next)
                handle_remove(f);
            for (k = m->kernels; k; k = k->next)
                handle_remove(k);
            m->linked = 0;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    if (m == NULL)
        return OBS_CUDA_ERROR_INVALID_HANDLE;
    module_free(m); /* outside the lock: it gives the globals' memory back */
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuModuleLoad(obs_CUmodule *module, const char *fname)
{
    drv_enter();
    return drv_finish("cuModuleLoad", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      load_file((void **)module, fname, 0));
}

DRV_EXPORT obs_CUresult cuModuleLoadData(obs_CUmodule *module, const void *image)
{
    drv_enter();
    return drv_finish("cuModuleLoadData", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)module, image, 0));
}

/* JIT options change nothing for an image that is never compiled. */
DRV_EXPORT obs_CUresult cuModuleLoadDataEx(obs_CUmodule *module, const void *image, unsigned int numOptions,
                                           obs_CUjit_option *options, void **optionValues)
{
    drv_enter();
    (void)options, (void)optionValues;
    return drv_finish("cuModuleLoadDataEx", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      numOptions > 0 && (options == NULL || optionValues == NULL)
                          ? OBS_CUDA_ERROR_INVALID_VALUE
                          : drv_module_load_image((void **)module, image, 0));
}

DRV_EXPORT obs_CUresult cuModuleLoadFatBinary(obs_CUmodule *module, const void *fatCubin)
{
    drv_enter();
    return drv_finish("cuModuleLoadFatBinary", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)module, fatCubin, 0));
}

DRV_EXPORT obs_CUresult cuModuleUnload(obs_CUmodule hmod)
{
    drv_enter();
    return drv_finish("cuModuleUnload", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_unload(hmod, 0));
}

DRV_EXPORT obs_CUresult cuLibraryLoadData(obs_CUlibrary *library, const void *code,
                                          obs_CUjit_option *jitOptions, void **jitOptionsValues,
                                          unsigned int numJitOptions, obs_CUlibraryOption *libraryOptions,
                                          void **libraryOptionValues, unsigned int numLibraryOptions)
{
    drv_enter();
    return drv_finish("cuLibraryLoadData", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)library, code, 1));
}

DRV_EXPORT obs_CUresult cuLibraryLoadFromFile(obs_CUlibrary *library, const char *fileName,
                                              obs_CUjit_option *jitOptions, void **jitOptionsValues,
                                              unsigned int numJitOptions, obs_CUlibraryOption *libraryOptions,
                                              void **libraryOptionValues, unsigned int numLibraryOptions)
{
    drv_enter();
    (void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
    (void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
    return drv_finish("cuLibraryLoadFromFile", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      load_file((void **)library, fileName, 1));
}

DRV_EXPORT obs_CUresult cuLibraryUnload(obs_CUlibrary library)
{
    drv_enter();
    return drv_finish("cuLibraryUnload", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      module_unload(library, 1));
}

static struct drv_function *function_in(struct drv_module *m, const char *name)
{
    struct drv_function *f;
    for (f = m->functions; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

/* Under drv_lock. A kernel of an unreadable image is made at its first naming. */
static struct drv_function *function_named(struct drv_module *m, const char *name)
{
    struct drv_function *f = function_in(m, name);
    if (f || !m->names_on_demand)
        return f;
    return module_add(m, name, strlen(name), NULL) == OBS_CUDA_SUCCESS ? m->functions : NULL;
}

static obs_CUresult get_function(obs_CUfunction *out, obs_CUmodule hmod, const char *name)
{
    struct drv_module *m;
    struct drv_function *f = NULL;
    obs_CUresult err = out && name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    m = module_lookup(hmod, 0);
    if (m == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if ((f = function_named(m, name)) == NULL)
        err = OBS_CUDA_ERROR_NOT_FOUND;
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        *out = (obs_CUfunction)f;
    return err;
}

DRV_EXPORT obs_CUresult cuModuleGetFunction(obs_CUfunction *hfunc, obs_CUmodule hmod, const char *name)
{
    drv_enter();
    return drv_finish("cuModuleGetFunction", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_function(hfunc, hmod, name));
}

static obs_CUresult get_kernel(obs_CUkernel *out, obs_CUlibrary library, const char *name)
{
    struct drv_module *m;
    struct drv_kernel *k = NULL;
    obs_CUresult err = out && name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    m = module_lookup(library, 1);
    if (m == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else {
        function_named(m, name);
        for (k = m->kernels; k; k = k->next)
            if (strcmp(k->function->name, name) == 0)
                break;
        if (k == NULL)
            err = OBS_CUDA_ERROR_NOT_FOUND;
    }
    pthread_mutex_unlock(&drv_lock);
    if (err == OBS_CUDA_SUCCESS)
        *out = (obs_CUkernel)k;
    return err;
}

DRV_EXPORT obs_CUresult cuLibraryGetKernel(obs_CUkernel *pKernel, obs_CUlibrary library, const char *name)
{
    drv_enter();
    return drv_finish("cuLibraryGetKernel", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_kernel(pKernel, library, name));
}

/* Under drv_lock. */
static struct drv_kernel *kernel_lookup(obs_CUkernel handle)
{
    struct drv_module *m;
    struct drv_kernel *k;
    int kind = handle_kind(handle);
    if (kind != 0 || !handles_incomplete)
        return kind == HANDLE_KERNEL ? (struct drv_kernel *)handle : NULL;
    for (m = drv_modules; m; m = m->next)
        for (k = m->kernels; k; k = k->next)
            if ((obs_CUkernel)k == handle)
                return k;
    return NULL;
}

const struct drv_function *drv_function_find(obs_CUfunction handle)
{
    struct drv_module *m;
    struct drv_function *f;
    struct drv_kernel *k;
    int kind = handle_kind(handle);
    if (kind == HANDLE_FUNCTION)
        return (const struct drv_function *)handle;
    if (kind == HANDLE_KERNEL)
        return ((const struct drv_kernel *)handle)->function;
    if (!handles_incomplete)
        return NULL;
    for (m = drv_modules; m; m = m->next)
        for (f = m->functions; f; f = f->next)
            if ((obs_CUfunction)f == handle)
                return f;
    k = kernel_lookup((obs_CUkernel)handle);
    return k ? k->function : NULL;
}

int drv_is_kernel_handle(obs_CUfunction handle)
{
    return kernel_lookup((obs_CUkernel)handle) != NULL;
}

const char *drv_function_name(const struct drv_function *f)
{
    return f ? f->name : NULL;
}

int drv_function_attribute(const struct drv_function *f, int attrib)
{
    return f && attrib >= 0 && attrib < DRV_FUNC_ATTRIBUTES ? f->attributes[attrib] : 0;
}

static obs_CUresult function_name(const char **name, obs_CUfunction hfunc, const char **log_name)
{
    const struct drv_function *f;
    obs_CUresult err = name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    f = drv_function_find(hfunc);
    pthread_mutex_unlock(&drv_lock);
    if (f == NULL)
        return OBS_CUDA_ERROR_INVALID_HANDLE;
    *name = *log_name = f->name;
    return OBS_CUDA_SUCCESS;
}

DRV_EXPORT obs_CUresult cuFuncGetName(const char **name, obs_CUfunction hfunc)
{
    const char *log_name = NULL;
    obs_CUresult err;
    drv_enter();
    err = function_name(name, hfunc, &log_name);
    return drv_finish("cuFuncGetName", DRV_KIND_OTHER, log_name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelGetName(const char **name, obs_CUkernel hfunc)
{
    const char *log_name = NULL;
    obs_CUresult err;
    struct drv_kernel *k = NULL;
    drv_enter();
    err = name ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        k = kernel_lookup(hfunc);
        pthread_mutex_unlock(&drv_lock);
        if (k == NULL)
            err = OBS_CUDA_ERROR_INVALID_HANDLE;
        else
            *name = log_name = k->function->name;
    }
    return drv_finish("cuKernelGetName", DRV_KIND_OTHER, log_name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelGetFunction(obs_CUfunction *pFunc, obs_CUkernel kernel)
{
    obs_CUresult err;
    struct drv_kernel *k = NULL;
    drv_enter();
    err = pFunc ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS) {
        pthread_mutex_lock(&drv_lock);
        k = kernel_lookup(kernel);
        pthread_mutex_unlock(&drv_lock);
        if (k == NULL)
            err = OBS_CUDA_ERROR_INVALID_HANDLE;
        else
            *pFunc = (obs_CUfunction)k->function;
    }
    return drv_finish("cuKernelGetFunction", DRV_KIND_OTHER, k ? k->function->name : NULL,
                      DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* ---- globals ------------------------------------------------------------------- */

/* The images are not parsed, so a global's real size is unknown: each one
 * gets DRV_GLOBAL_BYTES of zeroed device memory at its first lookup,
 * which is more than the small tables NVIDIA's libraries keep there. The
 * simulator's own images have no globals. */
#define DRV_GLOBAL_BYTES 65536u

static obs_CUresult get_global(obs_CUdeviceptr *dptr, size_t *bytes, const void *handle, int is_library,
                               const char *name)
{
    struct drv_module *m;
    struct drv_global *g = NULL;
    obs_CUdeviceptr fresh = 0;
    obs_CUresult err = name && (dptr || bytes) ? drv_need_context() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err != OBS_CUDA_SUCCESS)
        return err;
    err = drv_mem_alloc(&fresh, DRV_GLOBAL_BYTES); /* outside the lock; given back if unused */
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    m = module_lookup(handle, is_library);
    if (m == NULL)
        err = OBS_CUDA_ERROR_INVALID_HANDLE;
    else if (!m->nvidia_image)
        err = OBS_CUDA_ERROR_NOT_FOUND;
    else {
        for (g = m->globals; g; g = g->next)
            if (strcmp(g->name, name) == 0)
                break;
        if (g == NULL && (g = calloc(1, sizeof *g)) != NULL && (g->name = strdup(name)) == NULL) {
            free(g);
            g = NULL;
        }
        if (g == NULL)
            err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
        else if (g->address == 0) {
            g->address = fresh;
            fresh = 0;
            g->next = m->globals;
            m->globals = g;
        }
    }
    if (err == OBS_CUDA_SUCCESS) {
        if (dptr)
            *dptr = g->address;
        if (bytes)
            *bytes = DRV_GLOBAL_BYTES;
    }
    pthread_mutex_unlock(&drv_lock);
    if (fresh)
        drv_mem_release(fresh);
    return err;
}

DRV_EXPORT obs_CUresult cuLibraryGetGlobal(obs_CUdeviceptr *dptr, size_t *bytes, obs_CUlibrary library,
                                           const char *name)
{
    drv_enter();
    return drv_finish("cuLibraryGetGlobal", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_global(dptr, bytes, library, 1, name));
}

DRV_EXPORT obs_CUresult cuModuleGetGlobal_v2(obs_CUdeviceptr *dptr, size_t *bytes, obs_CUmodule hmod,
                                             const char *name)
{
    drv_enter();
    return drv_finish("cuModuleGetGlobal_v2", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES,
                      get_global(dptr, bytes, hmod, 0, name));
}

/* ---- function and kernel attributes ------------------------------------------- */

/* Read (value != NULL) or set one attribute of a function; the settable
 * ones are kept (MAX_DYNAMIC_SHARED_SIZE_BYTES, PREFERRED_SHARED_MEMORY_CARVEOUT,
 * the cluster ones), the others are read-only as in CUDA. */
static obs_CUresult function_attribute(struct drv_function *f, int attrib, int *value, int set_to)
{
    if (f == NULL)
        return OBS_CUDA_ERROR_INVALID_HANDLE;
    if (attrib < 0 || attrib >= DRV_FUNC_ATTRIBUTES)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    if (value) {
        *value = f->attributes[attrib];
        return OBS_CUDA_SUCCESS;
    }
    /* the dynamic and the static shared memory together fit the per-block opt-in limit (227 KiB) */
    if (attrib == 8 && (set_to < 0 || set_to > 232448 - f->attributes[1]))
        return OBS_CUDA_ERROR_INVALID_VALUE;
    if (attrib != 8 && attrib != 9 && attrib < 10)
        return OBS_CUDA_ERROR_INVALID_VALUE;
    f->attributes[attrib] = set_to;
    return OBS_CUDA_SUCCESS;
}

static obs_CUresult func_attribute(obs_CUfunction hfunc, int attrib, int *value, int set_to, const char **name)
{
    struct drv_function *f;
    obs_CUresult err = drv_need_init();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    pthread_mutex_lock(&drv_lock);
    f = (struct drv_function *)drv_function_find(hfunc);
    *name = f ? f->name : NULL;
    err = function_attribute(f, attrib, value, set_to);
    pthread_mutex_unlock(&drv_lock);
    return err;
}

static obs_CUresult kernel_attribute(obs_CUkernel kernel, obs_CUdevice dev, int attrib, int *value, int set_to,
                                     const char **name)
{
    struct drv_kernel *k;
    obs_CUresult err = drv_need_init();
    if (err != OBS_CUDA_SUCCESS)
        return err;
    if (!drv_valid_device(dev))
        return OBS_CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&drv_lock);
    k = kernel_lookup(kernel);
    *name = k ? k->function->name : NULL;
    err = function_attribute(k ? k->function : NULL, attrib, value, set_to);
    pthread_mutex_unlock(&drv_lock);
    return err;
}

DRV_EXPORT obs_CUresult cuFuncGetAttribute(int *pi, int attrib, obs_CUfunction hfunc)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    err = pi ? func_attribute(hfunc, attrib, pi, 0, &name) : OBS_CUDA_ERROR_INVALID_VALUE;
    return drv_finish("cuFuncGetAttribute", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuFuncSetAttribute(obs_CUfunction hfunc, int attrib, int value)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    err = func_attribute(hfunc, attrib, NULL, value, &name);
    return drv_finish("cuFuncSetAttribute", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelGetAttribute(int *pi, int attrib, obs_CUkernel kernel, obs_CUdevice dev)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    err = pi ? kernel_attribute(kernel, dev, attrib, pi, 0, &name) : OBS_CUDA_ERROR_INVALID_VALUE;
    return drv_finish("cuKernelGetAttribute", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelSetAttribute(int attrib, int val, obs_CUkernel kernel, obs_CUdevice dev)
{
    const char *name = NULL;
    obs_CUresult err;
    drv_enter();
    err = kernel_attribute(kernel, dev, attrib, NULL, val, &name);
    return drv_finish("cuKernelSetAttribute", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Cache preferences change nothing the simulator models: accepted. */
DRV_EXPORT obs_CUresult cuFuncSetCacheConfig(obs_CUfunction hfunc, int config)
{
    const char *name = NULL;
    int unused;
    obs_CUresult err;
    drv_enter();
    err = config >= 0 && config <= 3 ? func_attribute(hfunc, 0, &unused, 0, &name) : OBS_CUDA_ERROR_INVALID_VALUE;
    return drv_finish("cuFuncSetCacheConfig", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

DRV_EXPORT obs_CUresult cuKernelSetCacheConfig(obs_CUkernel kernel, int config, obs_CUdevice dev)
{
    const char *name = NULL;
    int unused;
    obs_CUresult err;
    drv_enter();
    err = config >= 0 && config <= 3 ? kernel_attribute(kernel, dev, 0, &unused, 0, &name)
                                     : OBS_CUDA_ERROR_INVALID_VALUE;
    return drv_finish("cuKernelSetCacheConfig", DRV_KIND_OTHER, name, DRV_NO_STREAM, DRV_NO_BYTES, err);
}
