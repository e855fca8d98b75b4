/* Our own NVTX client: the client half of the NVTX tool-injection ABI
 * (shim/abi/nvtx_abi.h), written in C so that the shim needs no CUDA toolkit.
 * It does what the header-only NVTX3 client does on its first call: dlopen the
 * tool named by NVTX_INJECTION64_PATH (nsys and ncu set it), call its
 * InitializeInjectionNvtx2 with our get-export-table function, let the tool
 * fill our CORE and CORE2 slots, then call the tool through those slots.
 * A tool that also serves the application's own NVTX copy sees us as one more
 * client in the process, with our own domain. */
#include "range_sinks.h"

#include "common/common.h"
#include "runtimes/real_symbols.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NVTX_MAX_CALLBACKS 16 /* the largest module (CORE, CORE2) */

/* One module: the slots the tool writes into, and the table of pointers to
 * them that we hand out (entry 0 unused and entry `size` NULL, as NVTX does). */
struct nvtx_module {
    unsigned int size; /* callback count: valid ids are 1 .. size - 1 */
    obs_nvtx_fn slots[NVTX_MAX_CALLBACKS];
    obs_nvtx_fn *entries[NVTX_MAX_CALLBACKS + 1];
};

static struct nvtx_module nvtx_modules[OBS_NVTX_MODULE_COUNT] = {
    [OBS_NVTX_MODULE_CORE] = {.size = OBS_NVTX_CORE_SIZE},
    [OBS_NVTX_MODULE_CUDA] = {.size = OBS_NVTX_CUDA_SIZE},
    [OBS_NVTX_MODULE_OPENCL] = {.size = OBS_NVTX_OPENCL_SIZE},
    [OBS_NVTX_MODULE_CUDART] = {.size = OBS_NVTX_CUDART_SIZE},
    [OBS_NVTX_MODULE_CORE2] = {.size = OBS_NVTX_CORE2_SIZE},
    [OBS_NVTX_MODULE_SYNC] = {.size = OBS_NVTX_SYNC_SIZE},
};

#define CORE_SLOT(id) (nvtx_modules[OBS_NVTX_MODULE_CORE].slots[id])
#define CORE2_SLOT(id) (nvtx_modules[OBS_NVTX_MODULE_CORE2].slots[id])

/* How our ranges reach the tool, chosen once after it attached. */
enum nvtx_mode {
    NVTX_OFF = 0,
    NVTX_DOMAIN,     /* nvtxDomainRangePushEx / nvtxDomainRangePop in our domain */
    NVTX_DEFAULT_EX, /* nvtxRangePushEx / nvtxRangePop (default domain) */
    NVTX_DEFAULT_A,  /* nvtxRangePushA / nvtxRangePop: a tool without the Ex calls */
};

static _Atomic int nvtx_mode = NVTX_OFF;
static obs_nvtx_domain nvtx_domain; /* NULL: the default domain */
static uint32_t nvtx_tool_version;

static int nvtx_get_module_function_table(int module, obs_nvtx_function_table *out_table,
                                          unsigned int *out_size)
{
    if (module <= 0 || module >= OBS_NVTX_MODULE_COUNT)
        return 0;
    if (out_size)
        *out_size = nvtx_modules[module].size;
    if (out_table)
        *out_table = nvtx_modules[module].entries;
    return 1;
}

static void nvtx_set_injection_version(uint32_t version)
{
    nvtx_tool_version = version; /* informational, as in NVTX itself */
}

static const struct obs_nvtx_export_callbacks nvtx_export_callbacks = {
    sizeof(struct obs_nvtx_export_callbacks),
    nvtx_get_module_function_table,
};

static const struct obs_nvtx_export_version_info nvtx_export_version = {
    sizeof(struct obs_nvtx_export_version_info),
    OBS_NVTX_VERSION,
    0,
    nvtx_set_injection_version,
};

static const void *nvtx_get_export_table(uint32_t export_table_id)
{
    switch (export_table_id) {
    case OBS_NVTX_ETID_CALLBACKS:
        return &nvtx_export_callbacks;
    case OBS_NVTX_ETID_VERSIONINFO:
        return &nvtx_export_version;
    default:
        return NULL;
    }
}

static void nvtx_reset_modules(void)
{
    for (int m = 1; m < OBS_NVTX_MODULE_COUNT; m++) {
        struct nvtx_module *mod = &nvtx_modules[m];
        memset(mod->slots, 0, sizeof mod->slots);
        memset(mod->entries, 0, sizeof mod->entries);
        for (unsigned int id = 1; id < mod->size; id++)
            mod->entries[id] = &mod->slots[id];
    }
}

/* Load the tool and run its initialisation; true when it accepted us. */
static bool nvtx_load_tool(const char *path)
{
    void *lib = dlopen(path, RTLD_LAZY); /* the flags NVTX's own loader uses */
    if (lib == NULL) {
        const char *why = dlerror();
        obs_log_warn("cannot load the NVTX tool %s=%s: %s; no NVTX ranges", OBS_NVTX_INJECTION_ENV,
                     path, why ? why : "unknown error");
        return false;
    }
    obs_nvtx_initialize_injection_fn init;
    void *sym = obs_real_dlsym(lib, OBS_NVTX_INIT_SYMBOL);
    memcpy(&init, &sym, sizeof init);
    if (init == NULL) {
        obs_log_warn("the NVTX tool %s has no %s; no NVTX ranges", path, OBS_NVTX_INIT_SYMBOL);
        dlclose(lib);
        return false;
    }
    nvtx_reset_modules();
    if (init(nvtx_get_export_table) == 0) {
        /* The tool may have started things: keep it loaded, use nothing of it. */
        nvtx_reset_modules();
        obs_log_warn("the NVTX tool %s refused to attach; no NVTX ranges", path);
        return false;
    }
    return true;
}

bool obs_nvtx_attach(const char *domain)
{
    const char *path = getenv(OBS_NVTX_INJECTION_ENV);
    if (path == NULL || *path == '\0' || !nvtx_load_tool(path))
        return false;

    enum nvtx_mode mode = NVTX_OFF;
    if (domain != NULL && *domain != '\0') {
        obs_nvtx_domain_create_a_fn create =
            (obs_nvtx_domain_create_a_fn)CORE2_SLOT(OBS_NVTX_CORE2_DomainCreateA);
        if (create && CORE2_SLOT(OBS_NVTX_CORE2_DomainRangePushEx) &&
            CORE2_SLOT(OBS_NVTX_CORE2_DomainRangePop)) {
            nvtx_domain = create(domain);
            mode = NVTX_DOMAIN;
        } else {
            obs_log_warn("the NVTX tool has no domain ranges; obsshim's ranges go to the default "
                         "domain");
        }
    }
    if (mode == NVTX_OFF && CORE_SLOT(OBS_NVTX_CORE_RangePop)) {
        if (CORE_SLOT(OBS_NVTX_CORE_RangePushEx))
            mode = NVTX_DEFAULT_EX;
        else if (CORE_SLOT(OBS_NVTX_CORE_RangePushA))
            mode = NVTX_DEFAULT_A;
    }
    if (mode == NVTX_OFF)
        return false; /* a tool that records no push/pop ranges */
    atomic_store_explicit(&nvtx_mode, mode, memory_order_release);
    return true;
}

bool obs_nvtx_active(void)
{
    return atomic_load_explicit(&nvtx_mode, memory_order_acquire) != NVTX_OFF;
}

void obs_nvtx_describe(struct obs_nvtx_event_attributes *attr, const char *name, uint32_t argb)
{
    memset(attr, 0, sizeof *attr);
    attr->version = OBS_NVTX_VERSION;
    attr->size = (uint16_t)sizeof *attr;
    if (argb != 0) {
        attr->color_type = OBS_NVTX_COLOR_ARGB;
        attr->color = argb;
    }
    attr->payload_type = OBS_NVTX_PAYLOAD_UNKNOWN;
    attr->message_type = OBS_NVTX_MESSAGE_ASCII;
    attr->message.ascii = name;

    int mode = atomic_load_explicit(&nvtx_mode, memory_order_acquire);
    obs_nvtx_domain_register_string_a_fn reg =
        (obs_nvtx_domain_register_string_a_fn)CORE2_SLOT(OBS_NVTX_CORE2_DomainRegisterStringA);
    if (reg != NULL && (mode == NVTX_DOMAIN || mode == NVTX_DEFAULT_EX)) {
        /* Registered once: the tool keeps the text, each push passes a handle. */
        obs_nvtx_string s = reg(nvtx_domain, name);
        if (s != NULL) {
            attr->message_type = OBS_NVTX_MESSAGE_REGISTERED;
            attr->message.registered = s;
        }
    }
}

void obs_nvtx_push(const struct obs_nvtx_event_attributes *attr)
{
    switch (atomic_load_explicit(&nvtx_mode, memory_order_acquire)) {
    case NVTX_DOMAIN: {
        obs_nvtx_domain_range_push_ex_fn push =
            (obs_nvtx_domain_range_push_ex_fn)CORE2_SLOT(OBS_NVTX_CORE2_DomainRangePushEx);
        if (push)
            push(nvtx_domain, attr);
        break;
    }
    case NVTX_DEFAULT_EX: {
        obs_nvtx_range_push_ex_fn push =
            (obs_nvtx_range_push_ex_fn)CORE_SLOT(OBS_NVTX_CORE_RangePushEx);
        if (push)
            push(attr);
        break;
    }
    case NVTX_DEFAULT_A: {
        obs_nvtx_range_push_a_fn push =
            (obs_nvtx_range_push_a_fn)CORE_SLOT(OBS_NVTX_CORE_RangePushA);
        if (push && attr->message_type == OBS_NVTX_MESSAGE_ASCII)
            push(attr->message.ascii);
        break;
    }
    default:
        break;
    }
}

void obs_nvtx_pop(void)
{
    switch (atomic_load_explicit(&nvtx_mode, memory_order_acquire)) {
    case NVTX_DOMAIN: {
        obs_nvtx_domain_range_pop_fn pop =
            (obs_nvtx_domain_range_pop_fn)CORE2_SLOT(OBS_NVTX_CORE2_DomainRangePop);
        if (pop)
            pop(nvtx_domain);
        break;
    }
    case NVTX_DEFAULT_EX:
    case NVTX_DEFAULT_A: {
        obs_nvtx_range_pop_fn pop = (obs_nvtx_range_pop_fn)CORE_SLOT(OBS_NVTX_CORE_RangePop);
        if (pop)
            pop();
        break;
    }
    default:
        break;
    }
}
