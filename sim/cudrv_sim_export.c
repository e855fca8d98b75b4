/* cuGetExportTable: the driver's private tables that NVIDIA's runtime
 * (libcudart.so.13, libcudart_static.a) and cuBLASLt ask for by UUID. Each
 * table is an array of pointers; most hold their own size in bytes in slot
 * 0. Slot meanings, where known, come from the public ZLUDA project's notes
 * (zluda_dark_api) and from watching CUDA 13.0's runtime on this simulator:
 *
 *   6bd5fb6c... runtime interface   2: primary context of a device
 *                                   1, 6, 8: module from a fatbin
 *   a094798c... tool callback hooks 2, 6: hand out scratch buffers
 *   42d85a81... tool TLS            2: the thread's tool state (none)
 *   c693336e... context-local storage (no size slot) 0 insert, 1 remove, 2 get
 *   263e8860... context wrapper     2: is this context a wrapper (no)
 *   d4082055... integrity check     1: keyed hash (cudrv_sim_integrity.c)
 *   21318c60... asked by cuBLASLt   4, 39, 51 (below)
 *
 * Every other slot holds a function that logs
 * "cuGetExportTable.<table>.<slot>" and returns 0 (or 801 where a wrong 0
 * would hide work, e.g. the interface's own launch), so that what the
 * runtime calls is always in the log. Unknown UUIDs: CUDA_ERROR_NOT_FOUND,
 * logged with the UUID (f8cff951... is asked for and refused; cudart
 * carries on). */
#include "cudrv_sim.h"
#include "sim_gpus.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void (*drv_slot)(void);

static obs_CUresult slot_called(const char *api, obs_CUresult status)
{
    drv_enter();
    return drv_finish(api, DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, status);
}

/* One logging function per (table, slot). */
#define SLOT_STUB(table, idx, status)                                         \
    static obs_CUresult table##_slot##idx(void)                               \
    {                                                                         \
        return slot_called("cuGetExportTable." #table "." #idx, status);      \
    }

/* ---- 6bd5fb6c: the runtime's interface ------------------------------------ */

static obs_CUresult interface_primary_context(obs_CUcontext *pctx, obs_CUdevice dev)
{
    obs_CUresult err;
    drv_enter();
    err = pctx ? drv_need_init() : OBS_CUDA_ERROR_INVALID_VALUE;
    if (err == OBS_CUDA_SUCCESS && !drv_valid_device(dev))
        err = OBS_CUDA_ERROR_INVALID_DEVICE;
    if (err == OBS_CUDA_SUCCESS)
        *pctx = drv_primary_context(dev);
    return drv_finish("cuGetExportTable.interface.2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES, err);
}

/* Slots 1 and 6: (CUmodule *, const fatbin wrapper *, ...): a module whose
 * kernels are named when they are asked for (cudrv_sim_module.c). */
static obs_CUresult interface_module_from_wrapper(obs_CUmodule *module, const void *wrapper)
{
    drv_enter();
    return drv_finish("cuGetExportTable.interface.1", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)module, wrapper, 0));
}

static obs_CUresult interface_module_from_wrapper_ex(obs_CUmodule *module, const void *wrapper, void *a3,
                                                     void *a4, size_t a5)
{
    (void)a3, (void)a4, (void)a5;
    drv_enter();
    return drv_finish("cuGetExportTable.interface.6", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)module, wrapper, 0));
}

static obs_CUresult interface_module_from_fatbin(const void *fatbin, obs_CUmodule *module, void *a3, void *a4,
                                                 unsigned a5)
{
    (void)a3, (void)a4, (void)a5;
    drv_enter();
    return drv_finish("cuGetExportTable.interface.8", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      drv_module_load_image((void **)module, fatbin, 0));
}

SLOT_STUB(interface, 3, OBS_CUDA_SUCCESS)
SLOT_STUB(interface, 4, OBS_CUDA_SUCCESS)
SLOT_STUB(interface, 5, OBS_CUDA_SUCCESS)
SLOT_STUB(interface, 7, OBS_CUDA_SUCCESS)
SLOT_STUB(interface, 9, OBS_CUDA_ERROR_NOT_SUPPORTED) /* its own launch: never silently */
SLOT_STUB(interface, 10, OBS_CUDA_SUCCESS)
SLOT_STUB(interface, 11, OBS_CUDA_SUCCESS)
/* Slot 12 (runtime 13.2, at start-up, no arguments): a check whose 0 lets
 * the runtime go on; any other answer fails its initialisation. */
SLOT_STUB(interface, 12, OBS_CUDA_SUCCESS)

/* 13 slots: runtime 13.0 uses up to slot 9, 13.2 calls slot 12 without
 * reading the size in slot 0 first. */
static const void *interface_table[13] = {
    (void *)sizeof(void *[13]),           (void *)interface_module_from_wrapper,
    (void *)interface_primary_context,    (void *)interface_slot3,
    (void *)interface_slot4,              (void *)interface_slot5,
    (void *)interface_module_from_wrapper_ex, (void *)interface_slot7,
    (void *)interface_module_from_fatbin, (void *)interface_slot9,
    (void *)interface_slot10,             (void *)interface_slot11,
    (void *)interface_slot12,
};

/* ---- a094798c: tool callback hooks ------------------------------------------ */

static size_t hooks_buffer2[1024];
static unsigned char hooks_buffer6[14];

static void hooks_buffer_2(void **ptr, size_t *size)
{
    slot_called("cuGetExportTable.hooks.2", OBS_CUDA_SUCCESS);
    *ptr = hooks_buffer2;
    *size = sizeof hooks_buffer2 / sizeof hooks_buffer2[0];
}

static void hooks_buffer_6(void **ptr, size_t *size)
{
    slot_called("cuGetExportTable.hooks.6", OBS_CUDA_SUCCESS);
    *ptr = hooks_buffer6;
    *size = sizeof hooks_buffer6;
}

SLOT_STUB(hooks, 1, OBS_CUDA_SUCCESS)
SLOT_STUB(hooks, 3, OBS_CUDA_SUCCESS)
SLOT_STUB(hooks, 4, OBS_CUDA_SUCCESS)
SLOT_STUB(hooks, 5, OBS_CUDA_SUCCESS)

static const void *hooks_table[7] = {
    (void *)sizeof(void *[7]), (void *)hooks_slot1, (void *)hooks_buffer_2, (void *)hooks_slot3,
    (void *)hooks_slot4,       (void *)hooks_slot5, (void *)hooks_buffer_6,
};

/* ---- 42d85a81: tool thread-local storage --------------------------------------- */

SLOT_STUB(tools_tls, 1, OBS_CUDA_SUCCESS)
SLOT_STUB(tools_tls, 3, OBS_CUDA_SUCCESS)

/* Slot 2 (cuBLASLt): one out-pointer, the thread's tool state; no tool is
 * attached here, so none (NULL), never an uninitialised value. */
static obs_CUresult tools_tls_state(void **out)
{
    if (out == NULL)
        return slot_called("cuGetExportTable.tools_tls.2", OBS_CUDA_ERROR_INVALID_VALUE);
    *out = NULL;
    return slot_called("cuGetExportTable.tools_tls.2", OBS_CUDA_SUCCESS);
}

static const void *tools_tls_table[4] = {(void *)sizeof(void *[4]), (void *)tools_tls_slot1,
                                         (void *)tools_tls_state, (void *)tools_tls_slot3};

/* ---- c693336e: context-local storage (no size slot) ---------------------------- */

struct cls_entry {
    obs_CUcontext ctx;
    void *key, *value;
    struct cls_entry *next;
};
static struct cls_entry *cls_entries;

/* NULL names the calling thread's current context; with none, the call
 * fails with CUDA_ERROR_INVALID_CONTEXT. The runtime relies on that: a
 * failed get on a thread is what makes it set the primary context current
 * there (a worker thread's first runtime call). */
static obs_CUcontext cls_context(obs_CUcontext ctx)
{
    return ctx ? ctx : drv_current_context();
}

static obs_CUresult cls_insert(obs_CUcontext ctx, void *key, void *value, void *dtor)
{
    struct cls_entry *e;
    obs_CUresult err = OBS_CUDA_SUCCESS;
    (void)dtor;
    drv_enter();
    ctx = cls_context(ctx);
    if (ctx == NULL)
        return drv_finish("cuGetExportTable.context_storage.0", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                          DRV_NO_BYTES, OBS_CUDA_ERROR_INVALID_CONTEXT);
    pthread_mutex_lock(&drv_lock);
    for (e = cls_entries; e; e = e->next)
        if (e->ctx == ctx && e->key == key)
            break;
    if (e == NULL && (e = calloc(1, sizeof *e)) != NULL) {
        e->ctx = ctx;
        e->key = key;
        e->next = cls_entries;
        cls_entries = e;
    }
    if (e)
        e->value = value;
    else
        err = OBS_CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_unlock(&drv_lock);
    return drv_finish("cuGetExportTable.context_storage.0", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      err);
}

static obs_CUresult cls_remove(obs_CUcontext ctx, void *key)
{
    struct cls_entry **link;
    drv_enter();
    ctx = cls_context(ctx);
    if (ctx == NULL)
        return drv_finish("cuGetExportTable.context_storage.1", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                          DRV_NO_BYTES, OBS_CUDA_ERROR_INVALID_CONTEXT);
    pthread_mutex_lock(&drv_lock);
    for (link = &cls_entries; *link; link = &(*link)->next)
        if ((*link)->ctx == ctx && (*link)->key == key) {
            struct cls_entry *e = *link;
            *link = e->next;
            free(e);
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return drv_finish("cuGetExportTable.context_storage.1", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      OBS_CUDA_SUCCESS);
}

static obs_CUresult cls_get(void **value, obs_CUcontext ctx, void *key)
{
    struct cls_entry *e;
    obs_CUresult err = OBS_CUDA_ERROR_INVALID_VALUE;
    drv_enter();
    ctx = cls_context(ctx);
    if (ctx == NULL)
        return drv_finish("cuGetExportTable.context_storage.2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM,
                          DRV_NO_BYTES, OBS_CUDA_ERROR_INVALID_CONTEXT);
    pthread_mutex_lock(&drv_lock);
    for (e = cls_entries; e; e = e->next)
        if (e->ctx == ctx && e->key == key) {
            *value = e->value;
            err = OBS_CUDA_SUCCESS;
            break;
        }
    pthread_mutex_unlock(&drv_lock);
    return drv_finish("cuGetExportTable.context_storage.2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      err);
}

static const void *context_storage_table[4] = {(void *)cls_insert, (void *)cls_remove, (void *)cls_get, NULL};

/* ---- 263e8860: context wrapper ------------------------------------------------------ */

static obs_CUresult wrapper_query(obs_CUcontext ctx, uint32_t *wrapped, obs_CUcontext *unwrapped)
{
    (void)ctx, (void)unwrapped;
    drv_enter();
    if (wrapped)
        *wrapped = 0;
    return drv_finish("cuGetExportTable.context_wrapper.2", DRV_KIND_OTHER, NULL, DRV_NO_STREAM, DRV_NO_BYTES,
                      wrapped ? OBS_CUDA_SUCCESS : OBS_CUDA_ERROR_INVALID_VALUE);
}

SLOT_STUB(context_wrapper, 1, OBS_CUDA_SUCCESS)

/* Slot 3 takes nothing and answers 0, as a real driver does (the runtime
 * compares the answer with 1). */
static uint32_t wrapper_check3(void)
{
    slot_called("cuGetExportTable.context_wrapper.3", OBS_CUDA_SUCCESS);
    return 0;
}

static const void *context_wrapper_table[4] = {(void *)sizeof(void *[4]), (void *)context_wrapper_slot1,
                                               (void *)wrapper_query, (void *)wrapper_check3};

/* ---- d4082055: integrity check -------------------------------------------------------- */

static obs_CUresult integrity_check(uint32_t runtime_version, uint64_t timestamp, uint8_t *out);

SLOT_STUB(integrity, 2, OBS_CUDA_SUCCESS)

static const void *integrity_table[3] = {(void *)sizeof(void *[3]), (void *)integrity_check,
                                         (void *)integrity_slot2};

/* OBS_SIM_INTEGRITY=wrong: the keyed hash (not the constants) answered
 * with one bit flipped, to see the runtime refuse it: the hash is checked. */
static pthread_once_t integrity_setting_once = PTHREAD_ONCE_INIT;
static int integrity_wrong;

static void read_integrity_setting(void)
{
    const char *v = getenv("OBS_SIM_INTEGRITY");
    integrity_wrong = v != NULL && strcmp(v, "wrong") == 0;
}

/* The log line names the runtime version asked for (13000, 13020 ...). */
static obs_CUresult integrity_check(uint32_t runtime_version, uint64_t timestamp, uint8_t *out)
{
    struct drv_integrity_device devs[SIM_GPUS_MAX];
    struct drv_integrity_input in;
    char version[16];
    int v, d, count = drv_device_count();

    drv_enter();
    snprintf(version, sizeof version, "%u", runtime_version);
    if (out == NULL)
        return drv_finish("cuGetExportTable.integrity.1", DRV_KIND_OTHER, version, DRV_NO_STREAM, DRV_NO_BYTES,
                          OBS_CUDA_ERROR_INVALID_VALUE);
    memset(devs, 0, sizeof devs);
    for (d = 0; d < count && d < SIM_GPUS_MAX; d++) { /* every device the runtime can see */
        drv_device_uuid_bytes(d, devs[d].uuid);
        drv_device_attribute(&v, 50, d); /* PCI_DOMAIN_ID */
        devs[d].pci_domain = (uint32_t)v;
        drv_device_attribute(&v, 33, d); /* PCI_BUS_ID */
        devs[d].pci_bus = (uint32_t)v;
        drv_device_attribute(&v, 34, d); /* PCI_DEVICE_ID */
        devs[d].pci_device = (uint32_t)v;
    }
    in.driver_version = DRV_SIM_DRIVER_VERSION;
    in.runtime_version = runtime_version;
    in.process_id = (uint32_t)getpid();
    in.thread_id = (uint32_t)pthread_self();
    in.cudart_table = (uint64_t)(uintptr_t)interface_table;
    in.integrity_table = (uint64_t)(uintptr_t)integrity_table;
    in.check_function = (uint64_t)(uintptr_t)integrity_check;
    in.timestamp = timestamp;
    in.device_count = (unsigned)d;
    in.devices = devs;
    drv_integrity_hash(&in, out);
    pthread_once(&integrity_setting_once, read_integrity_setting);
    if (integrity_wrong && runtime_version % 10 >= 2)
        out[0] ^= 1;
    return drv_finish("cuGetExportTable.integrity.1", DRV_KIND_OTHER, version, DRV_NO_STREAM, DRV_NO_BYTES,
                      OBS_CUDA_SUCCESS);
}

/* ---- 21318c60: asked by cuBLASLt ------------------------------------------------------- */

#define LT_SLOTS(X)                                                                                  \
    X(1) X(2) X(3) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)        \
    X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) \
    X(34) X(35) X(36) X(37) X(38) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47) X(48) X(49)        \
    X(50) X(52) X(53) X(54) X(55) X(56) X(57) X(58) X(59) X(60) X(61) X(62) X(63)
#define LT_STUB(idx) SLOT_STUB(blaslt, idx, OBS_CUDA_SUCCESS)
LT_SLOTS(LT_STUB)

/* The three slots cuBLASLt calls, with what other public drivers for
 * foreign hardware observed them to answer: 4 says whether its first
 * argument is set (0 or 1), 51 hands out an opaque per-context object
 * (zeroed here), 39 answers 0. */
static obs_CUresult blaslt_flag(uint64_t value, uint64_t *out)
{
    if (out == NULL)
        return slot_called("cuGetExportTable.blaslt.4", OBS_CUDA_ERROR_INVALID_VALUE);
    *out = value != 0;
    return slot_called("cuGetExportTable.blaslt.4", OBS_CUDA_SUCCESS);
}

static obs_CUresult blaslt_context_object(void *ctx, void *arg, void **out)
{
    static uint64_t object[64];
    (void)ctx, (void)arg;
    if (out == NULL)
        return slot_called("cuGetExportTable.blaslt.51", OBS_CUDA_ERROR_INVALID_VALUE);
    *out = object;
    return slot_called("cuGetExportTable.blaslt.51", OBS_CUDA_SUCCESS);
}

static obs_CUresult blaslt_zero(void *ctx, void *arg, uint64_t *out)
{
    (void)ctx;
    if (arg == NULL || out == NULL)
        return slot_called("cuGetExportTable.blaslt.39", OBS_CUDA_ERROR_INVALID_VALUE);
    *out = 0;
    return slot_called("cuGetExportTable.blaslt.39", OBS_CUDA_SUCCESS);
}

#define LT_ENTRY(idx) [idx] = (void *)blaslt_slot##idx,
static const void *blaslt_table[64] = {
    [0] = (void *)sizeof(void *[64]), LT_SLOTS(LT_ENTRY)[4] = (void *)blaslt_flag,
    [39] = (void *)blaslt_zero,       [51] = (void *)blaslt_context_object,
};

/* ---- 1734dc26: asked by cuBLASLt 13.4 (the wheels' cuBLAS) ------------------------------- */

/* cuBLASLt 13.4 asks for this table once, in a half-precision matmul's
 * heuristic, and calls slot 4 without checking that the table was given
 * (a refusal crashes it on a NULL table). Slot 4 takes two out-pointers:
 * with the first left NULL, cuBLASLt takes its path for "nothing to hand
 * out" (the same one it takes on an error), so both are cleared. */
static obs_CUresult lt_cache_object(void **out, uint64_t *out2)
{
    if (out == NULL)
        return slot_called("cuGetExportTable.blaslt2.4", OBS_CUDA_ERROR_INVALID_VALUE);
    *out = NULL;
    if (out2)
        *out2 = 0;
    return slot_called("cuGetExportTable.blaslt2.4", OBS_CUDA_SUCCESS);
}

#define LT2_SLOTS(X) X(1) X(2) X(3) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define LT2_STUB(idx) SLOT_STUB(blaslt2, idx, OBS_CUDA_SUCCESS)
LT2_SLOTS(LT2_STUB)

#define LT2_ENTRY(idx) [idx] = (void *)blaslt2_slot##idx,
static const void *blaslt2_table[16] = {
    [0] = (void *)sizeof(void *[16]), LT2_SLOTS(LT2_ENTRY)[4] = (void *)lt_cache_object,
};


/* ---- lookup ------------------------------------------------------------------------------ */

static const struct {
    unsigned char uuid[16];
    const void *const *table;
} drv_tables[] = {
    {{0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a, 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9}, interface_table},
    {{0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74, 0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66}, hooks_table},
    {{0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47, 0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc}, tools_tls_table},
    {{0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11, 0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93},
     context_storage_table},
    {{0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43, 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e},
     context_wrapper_table},
    {{0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b, 0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2}, integrity_table},
    {{0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2}, blaslt_table},
    {{0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45, 0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca}, blaslt2_table},
};

DRV_EXPORT obs_CUresult cuGetExportTable(const void **ppExportTable, const void *pExportTableId)
{
    const unsigned char *id = pExportTableId;
    char hex[33] = "-";
    obs_CUresult err = OBS_CUDA_ERROR_INVALID_VALUE;
    size_t i;

    drv_enter();
    if (ppExportTable && id) {
        for (i = 0; i < 16; i++)
            snprintf(hex + 2 * i, 3, "%02x", id[i]);
        err = OBS_CUDA_ERROR_NOT_FOUND;
        *ppExportTable = NULL;
        for (i = 0; i < sizeof drv_tables / sizeof drv_tables[0]; i++)
            if (memcmp(drv_tables[i].uuid, id, 16) == 0) {
                *ppExportTable = drv_tables[i].table;
                err = OBS_CUDA_SUCCESS;
                break;
            }
    }
    return drv_finish("cuGetExportTable", DRV_KIND_OTHER, hex, DRV_NO_STREAM, DRV_NO_BYTES, err);
}
