/* libcupti at run time and the CUPTI session: see cupti_lib.h. */
#include "cupti_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"
#include "runtimes/real_symbols.h"

OBS_HIDDEN struct obs_cupti_lib obs_cupti;

static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};

/* Directories of a toolkit's libcupti, after the soname search failed. */
static const char *const toolkit_dirs[] = {"/usr/local/cuda/lib64", "/usr/local/cuda/extras/CUPTI/lib64",
                                           "/opt/cuda/lib64"};

const char *obs_cupti_result_name(obs_CUptiResult st)
{
    const char *name = NULL;
    if (obs_cupti.cuptiGetResultString != NULL && obs_cupti.cuptiGetResultString(st, &name) == OBS_CUPTI_SUCCESS &&
        name != NULL)
        return name;
    switch (st) {
    case OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case OBS_CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case OBS_CUPTI_ERROR_NOT_INITIALIZED:
        return "CUPTI_ERROR_NOT_INITIALIZED";
    default:
        return "a CUPTI error";
    }
}

static void *try_open(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h != NULL)
        snprintf(obs_cupti.path, sizeof obs_cupti.path, "%s", path);
    return h;
}

static void *try_dir(const char *dir)
{
    char path[4200];
    size_t i;
    void *h;
    if (dir == NULL || dir[0] == '\0')
        return NULL;
    for (i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, sonames[i]);
        if ((h = try_open(path)) != NULL)
            return h;
    }
    return NULL;
}

/* The library, by the rule of cupti_lib.h. */
static void *find_library(const char *configured, char *why, size_t whylen)
{
    const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
    char dir[4200];
    size_t i;
    void *h;

    if (configured != NULL && configured[0] != '\0') {
        if ((h = try_open(configured)) == NULL)
            snprintf(why, whylen, "OBS_CUPTI_PATH=%s cannot be opened (%s)", configured, dlerror());
        return h;
    }
    for (i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
        if ((h = try_open(sonames[i])) != NULL)
            return h;
    for (i = 0; i < sizeof env / sizeof env[0]; i++) {
        const char *home = getenv(env[i]);
        if (home != NULL && home[0] != '\0') {
            snprintf(dir, sizeof dir, "%s/lib64", home);
            if ((h = try_dir(dir)) != NULL)
                return h;
        }
    }
    for (i = 0; i < sizeof toolkit_dirs / sizeof toolkit_dirs[0]; i++)
        if ((h = try_dir(toolkit_dirs[i])) != NULL)
            return h;
    (void)dlerror();
    snprintf(why, whylen,
             "no libcupti found (tried libcupti.so.13, .12 and libcupti.so on the loader's path, $CUDA_HOME, "
             "$CUDA_PATH, /usr/local/cuda; OBS_CUPTI_PATH names one)");
    return NULL;
}

static void resolve(void *h)
{
#define OBS_CUPTI_RESOLVE(name, ret, params, args)                  \
    {                                                               \
        void *p = obs_real_dlsym(h, #name);                         \
        memcpy(&obs_cupti.name, &p, sizeof p);                      \
    }
    OBS_CUPTI_API(OBS_CUPTI_RESOLVE)
#undef OBS_CUPTI_RESOLVE
}

/* The entry points without which there is no session. */
static const char *missing_entry_point(void)
{
    if (obs_cupti.cuptiSubscribe == NULL && obs_cupti.cuptiSubscribe_v2 == NULL)
        return "cuptiSubscribe";
    if (obs_cupti.cuptiActivityRegisterTimestampCallback == NULL)
        return "cuptiActivityRegisterTimestampCallback (a newer libcupti has it)";
    if (obs_cupti.cuptiSetThreadIdType == NULL)
        return "cuptiSetThreadIdType";
    if (obs_cupti.cuptiActivityRegisterCallbacks == NULL)
        return "cuptiActivityRegisterCallbacks";
    if (obs_cupti.cuptiActivityEnable == NULL)
        return "cuptiActivityEnable";
    if (obs_cupti.cuptiActivityFlushAll == NULL)
        return "cuptiActivityFlushAll";
    if (obs_cupti.cuptiActivityGetNextRecord == NULL)
        return "cuptiActivityGetNextRecord";
    return NULL;
}

static const obs_CUpti_CallbackId runtime_cbids[] = {
#define OBS_CUPTI_RT_ID(api, name, value) value,
    OBS_CUPTI_RUNTIME_CBIDS(OBS_CUPTI_RT_ID)
#undef OBS_CUPTI_RT_ID
};
static const obs_CUpti_CallbackId driver_cbids[] = {
#define OBS_CUPTI_DRV_ID(api, value) value,
    OBS_CUPTI_DRIVER_CBIDS(OBS_CUPTI_DRV_ID)
#undef OBS_CUPTI_DRV_ID
};

/* API records for the APIs the shim times; 0 or the failing status. */
static obs_CUptiResult enable_api_records(const char **what)
{
    obs_CUptiResult st;
    size_t i;
    if (obs_cupti.cuptiActivityEnableRuntimeApi == NULL || obs_cupti.cuptiActivityEnableDriverApi == NULL) {
        *what = "cuptiActivityEnable(RUNTIME)";
        if ((st = obs_cupti.cuptiActivityEnable(OBS_CUPTI_ACTIVITY_KIND_RUNTIME)) != OBS_CUPTI_SUCCESS)
            return st;
        *what = "cuptiActivityEnable(DRIVER)";
        return obs_cupti.cuptiActivityEnable(OBS_CUPTI_ACTIVITY_KIND_DRIVER);
    }
    *what = "cuptiActivityEnableRuntimeApi";
    for (i = 0; i < sizeof runtime_cbids / sizeof runtime_cbids[0]; i++)
        if ((st = obs_cupti.cuptiActivityEnableRuntimeApi(runtime_cbids[i], 1)) != OBS_CUPTI_SUCCESS)
            return st;
    *what = "cuptiActivityEnableDriverApi";
    for (i = 0; i < sizeof driver_cbids / sizeof driver_cbids[0]; i++)
        if ((st = obs_cupti.cuptiActivityEnableDriverApi(driver_cbids[i], 1)) != OBS_CUPTI_SUCCESS)
            return st;
    return OBS_CUPTI_SUCCESS;
}

static const obs_CUpti_ActivityKind device_kinds[] = {OBS_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                                      OBS_CUPTI_ACTIVITY_KIND_MEMCPY, OBS_CUPTI_ACTIVITY_KIND_MEMSET};

/* A failed session leaves nothing on: what was enabled is disabled, the
 * subscription given back. The library stays loaded (CUPTI is not made to
 * be unloaded, and the app may use it). */
static void undo(obs_CUpti_SubscriberHandle sub)
{
    size_t i;
    if (obs_cupti.cuptiActivityDisable != NULL) {
        for (i = 0; i < sizeof device_kinds / sizeof device_kinds[0]; i++)
            obs_cupti.cuptiActivityDisable(device_kinds[i]);
        obs_cupti.cuptiActivityDisable(OBS_CUPTI_ACTIVITY_KIND_RUNTIME);
        obs_cupti.cuptiActivityDisable(OBS_CUPTI_ACTIVITY_KIND_DRIVER);
    }
    if (obs_cupti.cuptiActivityEnableRuntimeApi != NULL && obs_cupti.cuptiActivityEnableDriverApi != NULL) {
        for (i = 0; i < sizeof runtime_cbids / sizeof runtime_cbids[0]; i++)
            obs_cupti.cuptiActivityEnableRuntimeApi(runtime_cbids[i], 0);
        for (i = 0; i < sizeof driver_cbids / sizeof driver_cbids[0]; i++)
            obs_cupti.cuptiActivityEnableDriverApi(driver_cbids[i], 0);
    }
    if (sub != NULL && obs_cupti.cuptiUnsubscribe != NULL)
        obs_cupti.cuptiUnsubscribe(sub);
}

/* A callback CUPTI never calls: no domain is enabled. */
static void no_callbacks(void *userdata, obs_CUpti_CallbackDomain domain, obs_CUpti_CallbackId cbid,
                         const void *cbdata)
{
    (void)userdata, (void)domain, (void)cbid, (void)cbdata;
}

bool obs_cupti_session_start(const char *configured_path, const struct obs_cupti_callbacks *cb, char *why,
                             size_t whylen, bool *other_client)
{
    obs_CUpti_SubscriberHandle sub = NULL;
    obs_CUptiResult st;
    const char *what, *missing;
    char other[128] = "";
    size_t i;

    *other_client = false;
    if ((obs_cupti.handle = find_library(configured_path, why, whylen)) == NULL)
        return false;
    resolve(obs_cupti.handle);
    {
        /* The file the loader picked, for the messages and the meta. */
        Dl_info info;
        void *sym = obs_real_dlsym(obs_cupti.handle, "cuptiActivityEnable");
        if (sym != NULL && dladdr(sym, &info) != 0 && info.dli_fname != NULL)
            snprintf(obs_cupti.path, sizeof obs_cupti.path, "%s", info.dli_fname);
    }
    if ((missing = missing_entry_point()) != NULL) {
        snprintf(why, whylen, "%s has no %s", obs_cupti.path, missing);
        return false;
    }
    what = "cuptiSubscribe";
    if (obs_cupti.cuptiSubscribe_v2 != NULL) {
        obs_CUpti_SubscriberParams p;
        memset(&p, 0, sizeof p);
        p.structSize = OBS_CUPTI_SUBSCRIBER_PARAMS_SIZE;
        p.subscriberName = "obsshim";
        p.oldSubscriberName = other;
        p.oldSubscriberSize = sizeof other;
        what = "cuptiSubscribe_v2";
        st = obs_cupti.cuptiSubscribe_v2(&sub, no_callbacks, NULL, &p);
    } else {
        st = obs_cupti.cuptiSubscribe(&sub, no_callbacks, NULL);
    }
    other[sizeof other - 1] = '\0';
    if (st != OBS_CUPTI_SUCCESS) {
        *other_client = st == OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        if (*other_client)
            snprintf(why, whylen, "another CUPTI client holds this process (%s%s%s: %s); it is left alone",
                     other[0] ? "\"" : "", other[0] ? other : "nsys, ncu or a profiler", other[0] ? "\"" : "",
                     obs_cupti_result_name(st));
        else
            snprintf(why, whylen, "%s: %s failed (%s)", obs_cupti.path, what, obs_cupti_result_name(st));
        return false;
    }
    if ((st = obs_cupti.cuptiActivityRegisterTimestampCallback(cb->timestamp)) != OBS_CUPTI_SUCCESS)
        what = "cuptiActivityRegisterTimestampCallback";
    else if ((st = obs_cupti.cuptiSetThreadIdType(OBS_CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != OBS_CUPTI_SUCCESS)
        what = "cuptiSetThreadIdType(SYSTEM)";
    else if ((st = obs_cupti.cuptiActivityRegisterCallbacks(cb->buffer_requested, cb->buffer_completed)) !=
             OBS_CUPTI_SUCCESS)
        what = "cuptiActivityRegisterCallbacks";
    else
        st = enable_api_records(&what);
    for (i = 0; st == OBS_CUPTI_SUCCESS && i < sizeof device_kinds / sizeof device_kinds[0]; i++) {
        what = "cuptiActivityEnable";
        st = obs_cupti.cuptiActivityEnable(device_kinds[i]);
    }
    if (st != OBS_CUPTI_SUCCESS) {
        *other_client = st == OBS_CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        snprintf(why, whylen, "%s: %s failed (%s)%s", obs_cupti.path, what, obs_cupti_result_name(st),
                 *other_client ? ": another CUPTI client holds this process; it is left alone" : "");
        undo(sub);
        return false;
    }
    return true;
}
