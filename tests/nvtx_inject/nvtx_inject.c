/* libobsnvtxinject.so: a test NVTX tool, loaded through NVTX_INJECTION64_PATH
 * like nsys's. It records every range pushed and popped, per domain, as range
 * lines in the ground-truth log (range_log.h). It accepts any number of NVTX
 * clients in the process (an application's header-only NVTX3 copy, the shim's
 * own client, ...): each calls InitializeInjectionNvtx2 and gets the same
 * functions written into its CORE and CORE2 tables.
 *
 * Served: nvtxRangePushA, nvtxRangePushEx, nvtxRangePop, nvtxMarkA,
 * nvtxDomainCreateA, nvtxDomainRegisterStringA, nvtxDomainRangePushEx,
 * nvtxDomainRangePop, nvtxDomainMarkEx. Everything else stays a no-op in the
 * client. */
#include "abi/nvtx_abi.h"
#include "range_log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INJ_EXPORT __attribute__((visibility("default")))
#define INJ_STRING_MAGIC 0x6f627374u /* "obst": a handle we made */
#define INJ_MAX_DOMAINS_PER_THREAD 32

/* What our opaque handles point to. */
struct obs_nvtx_domain_st {
    struct obs_nvtx_domain_st *next;
    char name[];
};
struct obs_nvtx_string_st {
    uint32_t magic;
    obs_nvtx_domain domain; /* NULL: the default domain */
    char text[];
};

static pthread_mutex_t inj_lock = PTHREAD_MUTEX_INITIALIZER;
static obs_nvtx_domain inj_domains; /* list, under inj_lock; never freed */
static atomic_int inj_clients;

/* This thread's stack depth per domain (NULL key: the default domain). */
struct depth_slot {
    obs_nvtx_domain domain;
    long long depth;
};
static __thread struct depth_slot inj_depths[INJ_MAX_DOMAINS_PER_THREAD];
static __thread int inj_ndepths;

static long long *depth_of(obs_nvtx_domain domain)
{
    for (int i = 0; i < inj_ndepths; i++)
        if (inj_depths[i].domain == domain)
            return &inj_depths[i].depth;
    if (inj_ndepths == INJ_MAX_DOMAINS_PER_THREAD)
        return &inj_depths[0].depth; /* more domains than a test uses */
    inj_depths[inj_ndepths].domain = domain;
    inj_depths[inj_ndepths].depth = 0;
    return &inj_depths[inj_ndepths++].depth;
}

static const char *domain_name(obs_nvtx_domain domain)
{
    return domain != NULL ? domain->name : "-";
}

/* The range's text and an attrs column "<message>:<colour>": message is
 * ascii, registered, registered-foreign (a string of another domain),
 * unicode or none; colour 0xAARRGGBB or nocolor. "badattr" when the struct's
 * version or size is not NVTX 3's. */
static const char *describe(obs_nvtx_domain domain, const struct obs_nvtx_event_attributes *attr,
                            char *attrs, size_t attrs_size)
{
    if (attr == NULL) {
        snprintf(attrs, attrs_size, "noattr");
        return "-";
    }
    if (attr->version != OBS_NVTX_VERSION || attr->size < sizeof *attr) {
        snprintf(attrs, attrs_size, "badattr");
        return "-";
    }
    const char *text = "-";
    const char *kind = "none";
    switch (attr->message_type) {
    case OBS_NVTX_MESSAGE_ASCII:
        text = attr->message.ascii;
        kind = "ascii";
        break;
    case OBS_NVTX_MESSAGE_REGISTERED:
        if (attr->message.registered != NULL && attr->message.registered->magic == INJ_STRING_MAGIC) {
            text = attr->message.registered->text;
            kind = attr->message.registered->domain == domain ? "registered" : "registered-foreign";
        } else {
            kind = "registered-invalid";
        }
        break;
    case OBS_NVTX_MESSAGE_UNICODE:
        text = "(unicode)";
        kind = "unicode";
        break;
    default:
        break;
    }
    if (attr->color_type == OBS_NVTX_COLOR_ARGB)
        snprintf(attrs, attrs_size, "%s:0x%08x", kind, (unsigned)attr->color);
    else
        snprintf(attrs, attrs_size, "%s:nocolor", kind);
    return text;
}

static int push_in(const char *api, obs_nvtx_domain domain, const char *text, const char *attrs)
{
    long long *depth = depth_of(domain);
    long long level = (*depth)++;
    range_log_line(api, text, domain_name(domain), attrs, *depth);
    return (int)level;
}

/* NVTX returns the popped range's level, or a negative value when the stack
 * is empty (logged as depth -1). */
static int pop_in(const char *api, obs_nvtx_domain domain)
{
    long long *depth = depth_of(domain);
    if (*depth == 0) {
        range_log_line(api, "-", domain_name(domain), "-", -1);
        return -1;
    }
    --*depth;
    range_log_line(api, "-", domain_name(domain), "-", *depth);
    return (int)*depth;
}

static int inj_range_push_a(const char *message)
{
    return push_in("nvtxRangePushA", NULL, message, "-");
}

static int inj_range_push_ex(const struct obs_nvtx_event_attributes *attr)
{
    char attrs[96];
    const char *text = describe(NULL, attr, attrs, sizeof attrs);
    return push_in("nvtxRangePushEx", NULL, text, attrs);
}

static int inj_range_pop(void)
{
    return pop_in("nvtxRangePop", NULL);
}

static void inj_mark_a(const char *message)
{
    range_log_line("nvtxMarkA", message, "-", "-", *depth_of(NULL));
}

static obs_nvtx_domain inj_domain_create_a(const char *name)
{
    if (name == NULL)
        name = "";
    pthread_mutex_lock(&inj_lock);
    obs_nvtx_domain d = inj_domains;
    while (d != NULL && strcmp(d->name, name) != 0)
        d = d->next;
    if (d == NULL) {
        size_t len = strlen(name);
        d = malloc(sizeof *d + len + 1);
        if (d != NULL) {
            memcpy(d->name, name, len + 1);
            d->next = inj_domains;
            inj_domains = d;
        }
    }
    pthread_mutex_unlock(&inj_lock);
    range_log_line("nvtxDomainCreateA", name, "-", "-", 0);
    return d;
}

static obs_nvtx_string inj_domain_register_string_a(obs_nvtx_domain domain, const char *text)
{
    if (text == NULL)
        return NULL;
    size_t len = strlen(text);
    obs_nvtx_string s = malloc(sizeof *s + len + 1);
    if (s == NULL)
        return NULL;
    s->magic = INJ_STRING_MAGIC;
    s->domain = domain;
    memcpy(s->text, text, len + 1);
    range_log_line("nvtxDomainRegisterStringA", text, domain_name(domain), "-", 0);
    return s;
}

static int inj_domain_range_push_ex(obs_nvtx_domain domain, const struct obs_nvtx_event_attributes *attr)
{
    char attrs[96];
    const char *text = describe(domain, attr, attrs, sizeof attrs);
    return push_in("nvtxDomainRangePushEx", domain, text, attrs);
}

static int inj_domain_range_pop(obs_nvtx_domain domain)
{
    return pop_in("nvtxDomainRangePop", domain);
}

static void inj_domain_mark_ex(obs_nvtx_domain domain, const struct obs_nvtx_event_attributes *attr)
{
    char attrs[96];
    const char *text = describe(domain, attr, attrs, sizeof attrs);
    range_log_line("nvtxDomainMarkEx", text, domain_name(domain), attrs, *depth_of(domain));
}

struct slot_fill {
    unsigned int id;
    obs_nvtx_fn fn;
};

/* Write our functions into one module's slots of a client. */
static int fill_module(const struct obs_nvtx_export_callbacks *cb, int module,
                       const struct slot_fill *fills, size_t nfills)
{
    obs_nvtx_function_table table = NULL;
    unsigned int size = 0;
    if (!cb->get_module_function_table(module, &table, &size) || table == NULL)
        return 0;
    for (size_t i = 0; i < nfills; i++)
        if (fills[i].id < size && table[fills[i].id] != NULL)
            *table[fills[i].id] = fills[i].fn;
    return 1;
}

INJ_EXPORT int InitializeInjectionNvtx2(obs_nvtx_get_export_table_fn get_export_table);

INJ_EXPORT int InitializeInjectionNvtx2(obs_nvtx_get_export_table_fn get_export_table)
{
    const struct obs_nvtx_export_callbacks *cb = get_export_table(OBS_NVTX_ETID_CALLBACKS);
    if (cb == NULL || cb->struct_size < sizeof *cb || cb->get_module_function_table == NULL)
        return 0;
    const struct obs_nvtx_export_version_info *vi = get_export_table(OBS_NVTX_ETID_VERSIONINFO);
    uint32_t client_version = 0;
    if (vi != NULL && vi->struct_size >= sizeof *vi) {
        client_version = vi->version;
        if (vi->set_injection_nvtx_version != NULL)
            vi->set_injection_nvtx_version(OBS_NVTX_VERSION);
    }

    const struct slot_fill core[] = {
        {OBS_NVTX_CORE_RangePushA, (obs_nvtx_fn)inj_range_push_a},
        {OBS_NVTX_CORE_RangePushEx, (obs_nvtx_fn)inj_range_push_ex},
        {OBS_NVTX_CORE_RangePop, (obs_nvtx_fn)inj_range_pop},
        {OBS_NVTX_CORE_MarkA, (obs_nvtx_fn)inj_mark_a},
    };
    const struct slot_fill core2[] = {
        {OBS_NVTX_CORE2_DomainCreateA, (obs_nvtx_fn)inj_domain_create_a},
        {OBS_NVTX_CORE2_DomainRegisterStringA, (obs_nvtx_fn)inj_domain_register_string_a},
        {OBS_NVTX_CORE2_DomainRangePushEx, (obs_nvtx_fn)inj_domain_range_push_ex},
        {OBS_NVTX_CORE2_DomainRangePop, (obs_nvtx_fn)inj_domain_range_pop},
        {OBS_NVTX_CORE2_DomainMarkEx, (obs_nvtx_fn)inj_domain_mark_ex},
    };
    if (!fill_module(cb, OBS_NVTX_MODULE_CORE, core, sizeof core / sizeof core[0]) ||
        !fill_module(cb, OBS_NVTX_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]))
        return 0;

    char version[16];
    snprintf(version, sizeof version, "v%u", (unsigned)client_version);
    range_log_line("InitializeInjectionNvtx2", "-", "-", version, atomic_fetch_add(&inj_clients, 1) + 1);
    return 1;
}
