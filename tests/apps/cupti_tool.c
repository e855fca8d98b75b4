/* cupti_tool: another CUPTI client, as nsys or a profiler is to obsshim,
 * for the OBS_GPU_TIME=cupti tests. Preloaded before the shim, it claims
 * CUPTI from its constructor (cuptiSubscribe_v2, named "cupti_tool"),
 * collects kernel, memcpy and memset records, and at exit prints on stderr
 *     cupti_tool: kernels K memcpys C memsets M dropped D
 * so that the test sees it kept working while the shim fell back.
 * CUPTI_TOOL_API=1: it also asks for the API records the shim asks for
 * (the callback ids of shim/abi/cupti_abi.h), so that, preloaded without
 * the shim, it makes CUPTI do what OBS_GPU_TIME=cupti makes it do (make
 * bench-gpu-time's "CUPTI alone"). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/cupti_abi.h"

#define TOOL_BUFFER (64u * 1024u)

static struct {
    obs_fn_cuptiSubscribe_v2 subscribe;
    obs_fn_cuptiActivityRegisterCallbacks register_callbacks;
    obs_fn_cuptiActivityEnable enable;
    obs_fn_cuptiActivityFlushAll flush;
    obs_fn_cuptiActivityGetNextRecord next;
    obs_fn_cuptiActivityGetNumDroppedRecords dropped;
    obs_fn_cuptiActivityEnableRuntimeApi runtime_api;
    obs_fn_cuptiActivityEnableDriverApi driver_api;
} cupti;

static const obs_CUpti_CallbackId runtime_cbids[] = {
#define RT_ID(api, name, value) value,
    OBS_CUPTI_RUNTIME_CBIDS(RT_ID)
#undef RT_ID
};
static const obs_CUpti_CallbackId driver_cbids[] = {
#define DRV_ID(api, value) value,
    OBS_CUPTI_DRIVER_CBIDS(DRV_ID)
#undef DRV_ID
};
static unsigned long kernels, memcpys, memsets, dropped;
static int active;

static void requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = malloc(TOOL_BUFFER);
    *size = *buffer ? TOOL_BUFFER : 0;
    *max_records = 0;
}

static void completed(void *context, uint32_t stream_id, uint8_t *buffer, size_t size, size_t valid)
{
    obs_CUpti_Activity *r = NULL;
    size_t n = 0;
    (void)context, (void)stream_id, (void)size;
    while (cupti.next(buffer, valid, &r) == OBS_CUPTI_SUCCESS) {
        if (r->kind == OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
            kernels++;
        else if (r->kind == OBS_CUPTI_ACTIVITY_KIND_MEMCPY)
            memcpys++;
        else if (r->kind == OBS_CUPTI_ACTIVITY_KIND_MEMSET)
            memsets++;
    }
    if (cupti.dropped(NULL, 0, &n) == OBS_CUPTI_SUCCESS)
        dropped += n;
    free(buffer);
}

static void no_callbacks(void *userdata, obs_CUpti_CallbackDomain domain, obs_CUpti_CallbackId cbid,
                         const void *cbdata)
{
    (void)userdata, (void)domain, (void)cbid, (void)cbdata;
}

__attribute__((constructor)) static void tool_start(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    obs_CUpti_SubscriberHandle sub = NULL;
    obs_CUpti_SubscriberParams p;

    if (h == NULL) {
        fprintf(stderr, "cupti_tool: no libcupti.so.13\n");
        return;
    }
    cupti.subscribe = (obs_fn_cuptiSubscribe_v2)dlsym(h, "cuptiSubscribe_v2");
    cupti.register_callbacks = (obs_fn_cuptiActivityRegisterCallbacks)dlsym(h, "cuptiActivityRegisterCallbacks");
    cupti.enable = (obs_fn_cuptiActivityEnable)dlsym(h, "cuptiActivityEnable");
    cupti.flush = (obs_fn_cuptiActivityFlushAll)dlsym(h, "cuptiActivityFlushAll");
    cupti.next = (obs_fn_cuptiActivityGetNextRecord)dlsym(h, "cuptiActivityGetNextRecord");
    cupti.dropped = (obs_fn_cuptiActivityGetNumDroppedRecords)dlsym(h, "cuptiActivityGetNumDroppedRecords");
    cupti.runtime_api = (obs_fn_cuptiActivityEnableRuntimeApi)dlsym(h, "cuptiActivityEnableRuntimeApi");
    cupti.driver_api = (obs_fn_cuptiActivityEnableDriverApi)dlsym(h, "cuptiActivityEnableDriverApi");
    memset(&p, 0, sizeof p);
    p.structSize = OBS_CUPTI_SUBSCRIBER_PARAMS_SIZE;
    p.subscriberName = "cupti_tool";
    if (cupti.subscribe(&sub, no_callbacks, NULL, &p) != OBS_CUPTI_SUCCESS ||
        cupti.register_callbacks(requested, completed) != OBS_CUPTI_SUCCESS ||
        cupti.enable(OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != OBS_CUPTI_SUCCESS ||
        cupti.enable(OBS_CUPTI_ACTIVITY_KIND_MEMCPY) != OBS_CUPTI_SUCCESS ||
        cupti.enable(OBS_CUPTI_ACTIVITY_KIND_MEMSET) != OBS_CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_tool: could not start\n");
        return;
    }
    if (getenv("CUPTI_TOOL_API") != NULL && strcmp(getenv("CUPTI_TOOL_API"), "1") == 0) {
        size_t i;
        for (i = 0; i < sizeof runtime_cbids / sizeof runtime_cbids[0]; i++)
            cupti.runtime_api(runtime_cbids[i], 1);
        for (i = 0; i < sizeof driver_cbids / sizeof driver_cbids[0]; i++)
            cupti.driver_api(driver_cbids[i], 1);
    }
    active = 1;
}

__attribute__((destructor)) static void tool_end(void)
{
    if (!active)
        return;
    cupti.flush(OBS_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "cupti_tool: kernels %lu memcpys %lu memsets %lu dropped %lu\n", kernels, memcpys, memsets,
            dropped);
}
