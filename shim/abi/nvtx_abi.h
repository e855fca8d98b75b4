/* The slice of the NVTX (v3) tool-injection ABI that obsshim needs, with obs_
 * names, so that neither the shim's NVTX client nor the test injection library
 * (tests/nvtx_inject) needs the CUDA toolkit's nvtx3 headers.
 *
 * How a client and a tool meet: the client dlopens the library named by
 * NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2 with the
 * client's get-export-table function. The tool asks that function for the
 * CALLBACKS table and calls its GetModuleFunctionTable once per module: the
 * client hands back an array of pointers to its own function-pointer slots
 * (slot 0 unused, one slot per callback id), and the tool writes its
 * implementations into the slots it supports. The client then calls through
 * those slots. Values and layouts follow nvtx3/nvtxDetail/nvtxTypes.h and
 * nvtx3/nvToolsExt.h (NVTX_VERSION 3); tests/t_ranges checks them against the
 * real headers when configure found CUDA. */
#ifndef OBS_NVTX_ABI_H
#define OBS_NVTX_ABI_H

#include <stddef.h>
#include <stdint.h>

#define OBS_NVTX_VERSION 3
#define OBS_NVTX_INJECTION_ENV "NVTX_INJECTION64_PATH"
#define OBS_NVTX_INIT_SYMBOL "InitializeInjectionNvtx2"

/* Callback modules (NvtxCallbackModule). */
enum obs_nvtx_module {
    OBS_NVTX_MODULE_CORE = 1,
    OBS_NVTX_MODULE_CUDA = 2,
    OBS_NVTX_MODULE_OPENCL = 3,
    OBS_NVTX_MODULE_CUDART = 4,
    OBS_NVTX_MODULE_CORE2 = 5,
    OBS_NVTX_MODULE_SYNC = 6,
    OBS_NVTX_MODULE_COUNT = 7 /* one past the last */
};

/* Callback ids of the CORE module (NvtxCallbackIdCore): slot indexes. */
enum obs_nvtx_core_slot {
    OBS_NVTX_CORE_MarkEx = 1,
    OBS_NVTX_CORE_MarkA = 2,
    OBS_NVTX_CORE_MarkW = 3,
    OBS_NVTX_CORE_RangeStartEx = 4,
    OBS_NVTX_CORE_RangeStartA = 5,
    OBS_NVTX_CORE_RangeStartW = 6,
    OBS_NVTX_CORE_RangeEnd = 7,
    OBS_NVTX_CORE_RangePushEx = 8,
    OBS_NVTX_CORE_RangePushA = 9,
    OBS_NVTX_CORE_RangePushW = 10,
    OBS_NVTX_CORE_RangePop = 11,
    OBS_NVTX_CORE_NameCategoryA = 12,
    OBS_NVTX_CORE_NameCategoryW = 13,
    OBS_NVTX_CORE_NameOsThreadA = 14,
    OBS_NVTX_CORE_NameOsThreadW = 15,
    OBS_NVTX_CORE_SIZE = 16
};

/* Callback ids of the CORE2 module (NvtxCallbackIdCore2): the domain calls. */
enum obs_nvtx_core2_slot {
    OBS_NVTX_CORE2_DomainMarkEx = 1,
    OBS_NVTX_CORE2_DomainRangeStartEx = 2,
    OBS_NVTX_CORE2_DomainRangeEnd = 3,
    OBS_NVTX_CORE2_DomainRangePushEx = 4,
    OBS_NVTX_CORE2_DomainRangePop = 5,
    OBS_NVTX_CORE2_DomainResourceCreate = 6,
    OBS_NVTX_CORE2_DomainResourceDestroy = 7,
    OBS_NVTX_CORE2_DomainNameCategoryA = 8,
    OBS_NVTX_CORE2_DomainNameCategoryW = 9,
    OBS_NVTX_CORE2_DomainRegisterStringA = 10,
    OBS_NVTX_CORE2_DomainRegisterStringW = 11,
    OBS_NVTX_CORE2_DomainCreateA = 12,
    OBS_NVTX_CORE2_DomainCreateW = 13,
    OBS_NVTX_CORE2_DomainDestroy = 14,
    OBS_NVTX_CORE2_Initialize = 15,
    OBS_NVTX_CORE2_SIZE = 16
};

/* Callback counts (the *_SIZE values) of the modules we serve but do not use. */
#define OBS_NVTX_CUDA_SIZE 9
#define OBS_NVTX_OPENCL_SIZE 15
#define OBS_NVTX_CUDART_SIZE 7
#define OBS_NVTX_SYNC_SIZE 7

/* Export table ids (NvtxExportTableID). */
enum obs_nvtx_export_table {
    OBS_NVTX_ETID_CALLBACKS = 1,
    OBS_NVTX_ETID_RESERVED0 = 2,
    OBS_NVTX_ETID_VERSIONINFO = 3
};

/* A slot holds any function pointer; the caller casts it to its real type. */
typedef void (*obs_nvtx_fn)(void);
/* A module's table: pointers to the client's slots, indexed by callback id. */
typedef obs_nvtx_fn **obs_nvtx_function_table;

/* NvtxExportTableCallbacks. out_size receives the callback count (the
 * module's *_SIZE): valid ids are 1 .. out_size - 1. Returns 0 for a module
 * the client does not know. */
struct obs_nvtx_export_callbacks {
    size_t struct_size;
    int (*get_module_function_table)(int module, obs_nvtx_function_table *out_table,
                                     unsigned int *out_size);
};

/* NvtxExportTableVersionInfo. */
struct obs_nvtx_export_version_info {
    size_t struct_size;
    uint32_t version;   /* the client's NVTX_VERSION */
    uint32_t reserved0;
    void (*set_injection_nvtx_version)(uint32_t version); /* the tool says its version */
};

typedef const void *(*obs_nvtx_get_export_table_fn)(uint32_t export_table_id);
typedef int (*obs_nvtx_initialize_injection_fn)(obs_nvtx_get_export_table_fn get_export_table);

/* nvtxEventAttributes_t (v2 layout, 48 bytes). */
enum { OBS_NVTX_COLOR_UNKNOWN = 0, OBS_NVTX_COLOR_ARGB = 1 };
enum {
    OBS_NVTX_MESSAGE_UNKNOWN = 0,
    OBS_NVTX_MESSAGE_ASCII = 1,
    OBS_NVTX_MESSAGE_UNICODE = 2,
    OBS_NVTX_MESSAGE_REGISTERED = 3
};
enum { OBS_NVTX_PAYLOAD_UNKNOWN = 0 };

/* Opaque to clients: whatever the tool returns. */
typedef struct obs_nvtx_domain_st *obs_nvtx_domain;
typedef struct obs_nvtx_string_st *obs_nvtx_string;

struct obs_nvtx_event_attributes {
    uint16_t version; /* OBS_NVTX_VERSION */
    uint16_t size;    /* sizeof(struct obs_nvtx_event_attributes) */
    uint32_t category;
    int32_t color_type; /* OBS_NVTX_COLOR_* */
    uint32_t color;     /* ARGB */
    int32_t payload_type;
    int32_t reserved0;
    union {
        uint64_t u64;
        int64_t i64;
        double f64;
        uint32_t u32;
        int32_t i32;
        float f32;
    } payload;
    int32_t message_type; /* OBS_NVTX_MESSAGE_* */
    union {
        const char *ascii;
        const void *unicode; /* const wchar_t * */
        obs_nvtx_string registered;
    } message;
};

/* The function types of the slots we use. */
typedef int (*obs_nvtx_range_push_a_fn)(const char *message);
typedef int (*obs_nvtx_range_push_ex_fn)(const struct obs_nvtx_event_attributes *attr);
typedef int (*obs_nvtx_range_pop_fn)(void);
typedef void (*obs_nvtx_mark_a_fn)(const char *message);
typedef obs_nvtx_domain (*obs_nvtx_domain_create_a_fn)(const char *name);
typedef obs_nvtx_string (*obs_nvtx_domain_register_string_a_fn)(obs_nvtx_domain domain,
                                                                  const char *text);
typedef int (*obs_nvtx_domain_range_push_ex_fn)(obs_nvtx_domain domain,
                                                const struct obs_nvtx_event_attributes *attr);
typedef int (*obs_nvtx_domain_range_pop_fn)(obs_nvtx_domain domain);
typedef void (*obs_nvtx_domain_mark_ex_fn)(obs_nvtx_domain domain,
                                           const struct obs_nvtx_event_attributes *attr);

#endif
