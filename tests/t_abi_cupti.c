/* shim/abi/cupti_abi.h against the toolkit's cupti.h: the activity records
 * that OBS_GPU_TIME=cupti reads and the simulated libcupti writes have the
 * real size, alignment and field offsets; result codes, activity kinds and
 * the callback ids of every API the shim times have the real values; every
 * entry point of the X-macro list exists, at version libcupti.so.13, in the
 * toolkit's libcupti.so.13. Built with the toolkit's headers only when
 * configure found CUDA (OBS_HAVE_CUDA_HEADERS); otherwise it skips, saying
 * why. */
#include "tap/basic.h"

#ifndef OBS_HAVE_CUDA_HEADERS

int main(void)
{
    skip_all("CUDA toolkit not found by configure: no real cupti.h to compare with");
}

#else

#include <dlfcn.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdio.h>

#include <cupti.h>

#define OBS_CUPTI_ABI_NO_PROTOTYPES
#include "abi/cupti_abi.h"

#define SAME_LAYOUT(obs, real)                                                              \
    do {                                                                                    \
        is_int((long long)sizeof(real), (long long)sizeof(obs), "sizeof(" #real ")");       \
        is_int((long long)alignof(real), (long long)alignof(obs), "alignof(" #real ")");    \
    } while (0)
#define SAME_OFFSET(obs, real, field)                                                       \
    is_int((long long)offsetof(real, field), (long long)offsetof(obs, field),               \
           "offsetof(" #real ", " #field ")")
#define SAME_VALUE(obs, real) is_int((long long)(real), (long long)(obs), #real)

static void test_records(void)
{
    SAME_LAYOUT(obs_CUpti_Activity, CUpti_Activity);

    SAME_LAYOUT(obs_CUpti_ActivityAPI, CUpti_ActivityAPI);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, cbid);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, start);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, end);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, processId);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, threadId);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, correlationId);
    SAME_OFFSET(obs_CUpti_ActivityAPI, CUpti_ActivityAPI, returnValue);

    SAME_LAYOUT(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, registersPerThread);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, start);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, end);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, completed);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, deviceId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, streamId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, gridX);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, blockZ);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, correlationId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, gridId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, name);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, queued);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, launchType);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, sharedMemoryExecuted);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, graphNodeId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, shmemLimitConfig);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, graphId);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, pAccessPolicyWindow);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, channelType);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, clusterSchedulingPolicy);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, localMemoryTotal_v2);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, maxActiveClusters);
    SAME_OFFSET(obs_CUpti_ActivityKernel10, CUpti_ActivityKernel10, isDeviceLaunched);
    is_int(OBS_CUPTI_KERNEL_START_OFFSET, (long long)offsetof(CUpti_ActivityKernel10, start),
           "OBS_CUPTI_KERNEL_START_OFFSET");
    is_int(OBS_CUPTI_KERNEL_CORRELATION_OFFSET, (long long)offsetof(CUpti_ActivityKernel10, correlationId),
           "OBS_CUPTI_KERNEL_CORRELATION_OFFSET");

    SAME_LAYOUT(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, copyKind);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, bytes);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, start);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, end);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, deviceId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, streamId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, correlationId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, runtimeCorrelationId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, reserved0);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, graphNodeId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, graphId);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, channelType);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, isDeviceLaunched);
    SAME_OFFSET(obs_CUpti_ActivityMemcpy6, CUpti_ActivityMemcpy6, copyCount);
    is_int(OBS_CUPTI_COPY_CORRELATION_OFFSET, (long long)offsetof(CUpti_ActivityMemcpy6, correlationId),
           "OBS_CUPTI_COPY_CORRELATION_OFFSET (memcpy)");

    SAME_LAYOUT(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, value);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, bytes);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, start);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, end);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, deviceId);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, streamId);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, correlationId);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, flags);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, memoryKind);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, reserved0);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, graphNodeId);
    SAME_OFFSET(obs_CUpti_ActivityMemset4, CUpti_ActivityMemset4, isDeviceLaunched);
    is_int(OBS_CUPTI_COPY_CORRELATION_OFFSET, (long long)offsetof(CUpti_ActivityMemset4, correlationId),
           "OBS_CUPTI_COPY_CORRELATION_OFFSET (memset)");

    SAME_LAYOUT(obs_CUpti_SubscriberParams, CUpti_SubscriberParams);
    SAME_OFFSET(obs_CUpti_SubscriberParams, CUpti_SubscriberParams, subscriberName);
    SAME_OFFSET(obs_CUpti_SubscriberParams, CUpti_SubscriberParams, oldSubscriberName);
    SAME_OFFSET(obs_CUpti_SubscriberParams, CUpti_SubscriberParams, oldSubscriberSize);
    SAME_VALUE(OBS_CUPTI_SUBSCRIBER_PARAMS_SIZE, CUpti_SubscriberParams_STRUCT_SIZE);
    SAME_VALUE(OBS_CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN);

    is_int((long long)sizeof(CUptiResult), (long long)sizeof(obs_CUptiResult), "sizeof(CUptiResult)");
    is_int((long long)sizeof(CUpti_ActivityKind), (long long)sizeof(obs_CUpti_ActivityKind),
           "sizeof(CUpti_ActivityKind)");
    is_int((long long)sizeof(CUpti_CallbackId), (long long)sizeof(obs_CUpti_CallbackId), "sizeof(CUpti_CallbackId)");
    is_int((long long)sizeof(CUpti_ActivityThreadIdType), (long long)sizeof(obs_CUpti_ActivityThreadIdType),
           "sizeof(CUpti_ActivityThreadIdType)");
}

static void test_values(void)
{
    SAME_VALUE(OBS_CUPTI_SUCCESS, CUPTI_SUCCESS);
    SAME_VALUE(OBS_CUPTI_ERROR_INVALID_PARAMETER, CUPTI_ERROR_INVALID_PARAMETER);
    SAME_VALUE(OBS_CUPTI_ERROR_INVALID_OPERATION, CUPTI_ERROR_INVALID_OPERATION);
    SAME_VALUE(OBS_CUPTI_ERROR_MAX_LIMIT_REACHED, CUPTI_ERROR_MAX_LIMIT_REACHED);
    SAME_VALUE(OBS_CUPTI_ERROR_NOT_INITIALIZED, CUPTI_ERROR_NOT_INITIALIZED);
    SAME_VALUE(OBS_CUPTI_ERROR_INVALID_KIND, CUPTI_ERROR_INVALID_KIND);
    SAME_VALUE(OBS_CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_NOT_SUPPORTED);
    SAME_VALUE(OBS_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    SAME_VALUE(OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    SAME_VALUE(OBS_CUPTI_ERROR_UNKNOWN, CUPTI_ERROR_UNKNOWN);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    SAME_VALUE(OBS_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_DTOD, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_HTOH, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH);
    SAME_VALUE(OBS_CUPTI_MEMCPY_KIND_PTOP, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
}

/* Every callback id, by the toolkit's own name. */
static void test_callback_ids(void)
{
#define RT_CHECK(api, cupti_name, value) SAME_VALUE(value, CUPTI_RUNTIME_TRACE_CBID_##cupti_name);
    OBS_CUPTI_RUNTIME_CBIDS(RT_CHECK)
#undef RT_CHECK
#define DRV_CHECK(api, value) SAME_VALUE(value, CUPTI_DRIVER_TRACE_CBID_##api);
    OBS_CUPTI_DRIVER_CBIDS(DRV_CHECK)
#undef DRV_CHECK
}

static const char *const abi_names[] = {
#define NAME(name, ret, params, args) #name,
    OBS_CUPTI_API(NAME)
#undef NAME
};

static void test_symbols(void)
{
    char path[4096];
    void *lib;
    size_t i, missing = 0, n = sizeof abi_names / sizeof abi_names[0];

    snprintf(path, sizeof path, "%s/libcupti.so.13", OBS_CUDA_LIBDIR);
    lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (lib == NULL) {
        skip("%s cannot be opened (%s): entry points not checked", path, dlerror());
        return;
    }
    for (i = 0; i < n; i++)
        if (dlvsym(lib, abi_names[i], "libcupti.so.13") == NULL) {
            diag("%s@libcupti.so.13 is not in %s", abi_names[i], path);
            missing++;
        }
    is_int(0, (long long)missing, "all %zu listed entry points exist in the real libcupti.so.13", n);
    /* Not closed: libcupti keeps memory from its load in its own globals,
     * which LeakSanitizer would report as leaked once they are unmapped. */
}

int main(void)
{
    plan_lazy();
    test_records();
    test_values();
    test_callback_ids();
    test_symbols();
    return 0;
}

#endif
