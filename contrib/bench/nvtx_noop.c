/* libobsbenchnvtx.so: a no-op NVTX tool for `make bench`, loaded through
 * NVTX_INJECTION64_PATH like nsys's. It accepts every client and fills the
 * push/pop slots (default domain and domains) with functions that only keep
 * the depth, so the benchmark measures what the shim pays to reach a tool,
 * not what the tool does (tests/nvtx_inject's tool logs every range). */
#include "abi/nvtx_abi.h"

#include <stddef.h>
#include <stdint.h>

#define NOOP_EXPORT __attribute__((visibility("default")))

static __thread int noop_depth;
static struct {
    int unused;
} noop_domain_storage;

static int noop_push_a(const char *message)
{
    (void)message;
    return noop_depth++;
}

static int noop_push_ex(const struct obs_nvtx_event_attributes *attr)
{
    (void)attr;
    return noop_depth++;
}

static int noop_pop(void)
{
    return noop_depth > 0 ? --noop_depth : -1;
}

static obs_nvtx_domain noop_domain_create_a(const char *name)
{
    (void)name;
    return (obs_nvtx_domain)(void *)&noop_domain_storage;
}

static obs_nvtx_string noop_register_string_a(obs_nvtx_domain domain, const char *text)
{
    (void)domain;
    return (obs_nvtx_string)(void *)text; /* an opaque non-NULL handle */
}

static int noop_domain_push_ex(obs_nvtx_domain domain, const struct obs_nvtx_event_attributes *attr)
{
    (void)domain;
    (void)attr;
    return noop_depth++;
}

static int noop_domain_pop(obs_nvtx_domain domain)
{
    (void)domain;
    return noop_depth > 0 ? --noop_depth : -1;
}

static void noop_domain_mark_ex(obs_nvtx_domain domain, const struct obs_nvtx_event_attributes *attr)
{
    (void)domain;
    (void)attr;
}

static void fill(const struct obs_nvtx_export_callbacks *cb, int module, unsigned int id, obs_nvtx_fn fn)
{
    obs_nvtx_function_table table = NULL;
    unsigned int size = 0;
    if (cb->get_module_function_table(module, &table, &size) && table != NULL && id < size &&
        table[id] != NULL)
        *table[id] = fn;
}

NOOP_EXPORT int InitializeInjectionNvtx2(obs_nvtx_get_export_table_fn get_export_table);

NOOP_EXPORT int InitializeInjectionNvtx2(obs_nvtx_get_export_table_fn get_export_table)
{
    const struct obs_nvtx_export_callbacks *cb = get_export_table(OBS_NVTX_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof *cb || cb->get_module_function_table == NULL)
        return 0;
    const struct obs_nvtx_export_version_info *vi = get_export_table(OBS_NVTX_ETID_VERSIONINFO);
    if (vi != NULL && vi->struct_size >= sizeof *vi && vi->set_injection_nvtx_version != NULL)
        vi->set_injection_nvtx_version(OBS_NVTX_VERSION);
    fill(cb, OBS_NVTX_MODULE_CORE, OBS_NVTX_CORE_RangePushA, (obs_nvtx_fn)noop_push_a);
    fill(cb, OBS_NVTX_MODULE_CORE, OBS_NVTX_CORE_RangePushEx, (obs_nvtx_fn)noop_push_ex);
    fill(cb, OBS_NVTX_MODULE_CORE, OBS_NVTX_CORE_RangePop, (obs_nvtx_fn)noop_pop);
    fill(cb, OBS_NVTX_MODULE_CORE2, OBS_NVTX_CORE2_DomainCreateA, (obs_nvtx_fn)noop_domain_create_a);
    fill(cb, OBS_NVTX_MODULE_CORE2, OBS_NVTX_CORE2_DomainRegisterStringA, (obs_nvtx_fn)noop_register_string_a);
    fill(cb, OBS_NVTX_MODULE_CORE2, OBS_NVTX_CORE2_DomainRangePushEx, (obs_nvtx_fn)noop_domain_push_ex);
    fill(cb, OBS_NVTX_MODULE_CORE2, OBS_NVTX_CORE2_DomainRangePop, (obs_nvtx_fn)noop_domain_pop);
    fill(cb, OBS_NVTX_MODULE_CORE2, OBS_NVTX_CORE2_DomainMarkEx, (obs_nvtx_fn)noop_domain_mark_ex);
    return 1;
}
