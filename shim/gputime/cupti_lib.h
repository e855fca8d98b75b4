/* libcupti, found and opened at run time (the shim has no build dependency
 * on CUPTI), and the CUPTI session of OBS_GPU_TIME=cupti (gpu_time_cupti.h).
 *
 * Which library: OBS_CUPTI_PATH when set (a file, opened as given); else
 * one already loaded or on the loader's path by its soname
 * (libcupti.so.13, .12, then libcupti.so: PyTorch's own copy when the app
 * has loaded it, so that the process has one CUPTI); else the toolkit's
 * usual places ($CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64,
 * /usr/local/cuda/extras/CUPTI/lib64, /opt/cuda/lib64).
 *
 * The session, in this order (each step's failure ends it, undoes what
 * was done and says why):
 *   cuptiSubscribe_v2 (else cuptiSubscribe), no callback enabled: CUPTI's
 *     documented way for a client to claim the process; it fails with
 *     CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED under nsys, ncu,
 *     cuda-gdb or any other CUPTI client (whose name _v2 gives);
 *   cuptiActivityRegisterTimestampCallback(the shim's clock): every CPU
 *     timestamp of the records, and CUPTI's conversion of GPU timestamps,
 *     is then on the trace's CLOCK_MONOTONIC base: no alignment of ours;
 *   cuptiSetThreadIdType(SYSTEM): API records carry gettid(), the trace's
 *     thread ids;
 *   cuptiActivityRegisterCallbacks(buffer requested, buffer completed);
 *   API records only for the APIs the shim times
 *     (cuptiActivityEnableRuntimeApi / EnableDriverApi per callback id,
 *     abi/cupti_abi.h; the whole RUNTIME and DRIVER kinds where those
 *     are missing);
 *   cuptiActivityEnable(CONCURRENT_KERNEL, MEMCPY, MEMSET). */
#ifndef OBS_CUPTI_LIB_H
#define OBS_CUPTI_LIB_H

#include <stdbool.h>
#include <stddef.h>

#include "abi/cupti_abi.h"

struct obs_cupti_lib {
    void *handle;
    char path[4200]; /* where it was found (for messages and the meta) */
#define OBS_CUPTI_LIB_FIELD(name, ret, params, args) obs_fn_##name name;
    OBS_CUPTI_API(OBS_CUPTI_LIB_FIELD)
#undef OBS_CUPTI_LIB_FIELD
};
extern struct obs_cupti_lib obs_cupti;

struct obs_cupti_callbacks {
    obs_CUpti_BuffersCallbackRequestFunc buffer_requested;
    obs_CUpti_BuffersCallbackCompleteFunc buffer_completed;
    obs_CUpti_TimestampCallbackFunc timestamp;
};

/* Open libcupti and start the session. False: nothing of it remains
 * active; why (a sentence for "obsshim: OBS_GPU_TIME=cupti: <why>;
 * ...") says what failed. *other_client: the failure was another CUPTI
 * client holding the process. */
bool obs_cupti_session_start(const char *configured_path, const struct obs_cupti_callbacks *cb, char *why,
                             size_t whylen, bool *other_client);

/* A result code as CUPTI names it. */
const char *obs_cupti_result_name(obs_CUptiResult st);

#endif
