/* The exported layer of every recorded entry point, generated once for all
 * interposition layers (hooks_cudart.c, hooks_hip.c). What differs per
 * entry point lives in its describe_<name>() helper (the call's arguments ->
 * the record's description); what differs per layer is passed in: how to
 * reach the real function, what to return when the runtime lacks it, and
 * which GPU-time backend times it.
 *
 * Order of work around the real call:
 *   resolve the real function (missing: never call it);
 *   pass straight through when not recording or nested (obs_call_begin);
 *   describe; ask the phase engine (a launch may open or close phase ranges
 *   before its work is enqueued); with OBS_GPU_TIME=events an event pair
 *   around the real call on its stream (gpu_time.h), else one predictable
 *   test of a global; store the record; tell the phase engine the result
 *   (a host sync closes ranges). */
#ifndef OBS_WRAPPER_H
#define OBS_WRAPPER_H

#include <stdbool.h>

#include "gputime/gpu_time.h"
#include "common/obs_export.h"
#include "phases/phase_engine.h"
#include "record/recorder.h"

#define OBS_DEFINE_RECORDED_WRAPPER(name, ret, params, args, real_fn, missing_call, gpu_backend) \
    OBS_EXPORT ret name params                                              \
    {                                                                       \
        obs_fn_##name real = real_fn;                                       \
        struct obs_call call;                                               \
        ret status;                                                         \
        bool phases;                                                        \
                                                                            \
        if (real == NULL)                                                   \
            return missing_call;                                            \
        if (!obs_call_begin(&call))                                         \
            return real args;                                               \
        call.rec = describe_##name args;                                    \
        phases = obs_phase_enabled();                                       \
        if (phases)                                                         \
            obs_phase_before(&call, OBS_API_##name);                        \
        if (obs_gpu_time_enabled()) {                                       \
            struct obs_gpu_call gpu;                                        \
            obs_gpu_before(gpu_backend, &gpu, &call, OBS_API_##name);       \
            obs_call_started(&call, OBS_API_##name);                        \
            status = real args;                                             \
            obs_gpu_after(&gpu, &call, status);                             \
        } else {                                                            \
            obs_call_started(&call, OBS_API_##name);                        \
            status = real args;                                             \
            obs_call_finish(&call, status);                                 \
        }                                                                   \
        if (phases)                                                         \
            obs_phase_after(&call, OBS_API_##name, status);                 \
        return status;                                                      \
    }

#endif
