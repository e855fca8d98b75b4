/* The exported layer of every recorded entry point, generated once for all
 * interposition layers (hooks_cudart.c, hooks_hip.c). What differs per
 * entry point lives in its describe_<name>() helper (the call's arguments ->
 * the record's description); what differs per layer is passed in: how to
 * reach the real function, what to return when the runtime lacks it, and
 * which GPU-time backend times it.
 *
 * Order of work around the real call:
 *   resolve the real function (missing: never call it);
 *   pass straight through when nested in another hooked call (cudart's
 *   driver calls: one test, no other code of the shim touched);
 *   start the library if this wrapper runs before its constructor, then
 *   pass straight through when not recording (obs_hook_begin);
 *   describe; ask the phase engine (a launch may open or close phase ranges
 *   before its work is enqueued); with OBS_GPU_TIME=events an event pair
 *   around the real call on its stream (gpu_time.h; steps: a launch inside
 *   a range already marked on its stream only marks the stream dirty,
 *   obs_gpu_steps_fast), else one predictable test of a global; store the
 *   record; tell the phase engine the result (a host sync closes ranges);
 *   a sampled call's cost taken last (obs_call_done), so that it holds the
 *   phase engine's work after the call too. */
#ifndef OBS_WRAPPER_H
#define OBS_WRAPPER_H

#include <stdbool.h>

#include "common/common.h"
#include "gputime/gpu_time.h"
#include "init.h"
#include "phases/phase_engine.h"
#include "record/record.h"

/* obs_call_begin for a call that is not nested (the wrapper passed those
 * through), plus the one case the recorder leaves to the library's
 * top: a wrapper that runs before our constructor (another library's
 * constructor calling the runtime) starts the library first. That case
 * is out of line (obs_hook_begin_slow, init.h) and the rest forced inline:
 * left to itself gcc made this a call in every wrapper (callgrind: 22
 * instructions a launch more than before the layer split). */
static inline __attribute__((always_inline)) bool obs_hook_begin(struct obs_hooked_call *c)
{
    if (obs_likely(obs_call_begin_outermost(c)))
        return true;
    return obs_hook_begin_slow(c);
}

#define OBS_DEFINE_RECORDED_WRAPPER(name, ret, params, args, real_fn, missing_call, gpu_backend) \
    OBS_EXPORT ret name params                                              \
    {                                                                       \
        obs_fn_##name real = real_fn;                                       \
        struct obs_hooked_call call;                                               \
        ret status;                                                         \
        bool phases;                                                        \
                                                                            \
        if (real == NULL)                                                   \
            return missing_call;                                            \
        if (obs_unlikely(obs_guard_held())) /* nested: the call around it records */ \
            return real args;                                               \
        if (!obs_hook_begin(&call))                                         \
            return real args;                                               \
        call.rec = describe_##name args;                                    \
        phases = obs_phase_enabled();                                       \
        if (phases)                                                         \
            obs_phase_before(&call, OBS_API_##name);                        \
        if (obs_gpu_time_enabled() && !obs_gpu_steps_fast(&call, OBS_API_##name)) { \
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
        obs_call_done(&call);                                               \
        return status;                                                      \
    }

/* One hooked entry point, defined where its description is:
 *     OBS_CUDA_HOOK(cudaMemcpy,
 *                   (void *dst, const void *src, size_t count, obs_cudaMemcpyKind kind),
 *                   (dst, src, count, kind))
 *     {
 *         return obs_bytes_record(count, obs_copy_direction(kind), 0);
 *     }
 * defines the exported wrapper cudaMemcpy (the shape above) and heads the
 * body that follows as its describe_cudaMemcpy() helper. The first line
 * names the entry point, so a search for the name, ctags (`make ctags`)
 * and gdb (`break cudaMemcpy`, `list cudaMemcpy`) land on it. Each family
 * (hooks_cudart.c, hooks_hip.c, hooks_driver.c) passes in its return type,
 * real function, missing-function call and GPU-time backend; the
 * prototypes from the ABI's X-macro list make the compiler check each
 * definition against the list, and the family's table of wrappers by
 * index (built from the list) fails to link when one is missing. */
#define OBS_DEFINE_HOOK(name, ret, params, args, real_fn, missing_call, gpu_backend)            \
    static inline struct obs_rec_call describe_##name params;                                   \
    OBS_DEFINE_RECORDED_WRAPPER(name, ret, params, args, real_fn, missing_call, gpu_backend)    \
    static inline struct obs_rec_call describe_##name params

#endif
