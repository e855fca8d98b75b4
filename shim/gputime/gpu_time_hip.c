/* GPU time, HIP backend: the event functions of gpu_time.h on the real HIP
 * runtime (real_symbols.h), never on our own hooks. HIP stores every call's
 * result as the thread's last error: gpu_time.c resets what ours leave. */
#include "gpu_time.h"

#include "abi/hip_abi.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"

static bool hip_available(void)
{
    return OBS_HIP_REAL(hipEventCreateWithFlags) != NULL && OBS_HIP_REAL(hipEventDestroy) != NULL &&
           OBS_HIP_REAL(hipEventRecord) != NULL && OBS_HIP_REAL(hipEventQuery) != NULL &&
           OBS_HIP_REAL(hipEventSynchronize) != NULL && OBS_HIP_REAL(hipEventElapsedTime) != NULL &&
           OBS_HIP_REAL(hipStreamIsCapturing) != NULL && OBS_HIP_REAL(hipStreamCreateWithFlags) != NULL &&
           OBS_HIP_REAL(hipPeekAtLastError) != NULL && OBS_HIP_REAL(hipGetLastError) != NULL;
}

static int hip_event_create(void **event)
{
    obs_hipEvent_t e = NULL;
    int st = OBS_HIP_REAL(hipEventCreateWithFlags)(&e, OBS_HIP_EVENT_DEFAULT); /* timing on */
    *event = e;
    return st;
}

static int hip_event_destroy(void *event)
{
    return OBS_HIP_REAL(hipEventDestroy)((obs_hipEvent_t)event);
}

static int hip_event_record(void *event, uintptr_t stream)
{
    return OBS_HIP_REAL(hipEventRecord)((obs_hipEvent_t)event, (obs_hipStream_t)stream);
}

static int hip_event_query(void *event)
{
    return OBS_HIP_REAL(hipEventQuery)((obs_hipEvent_t)event);
}

static int hip_event_synchronize(void *event)
{
    return OBS_HIP_REAL(hipEventSynchronize)((obs_hipEvent_t)event);
}

static int hip_elapsed_ms(float *ms, void *start, void *end)
{
    return OBS_HIP_REAL(hipEventElapsedTime)(ms, (obs_hipEvent_t)start, (obs_hipEvent_t)end);
}

static int hip_stream_capturing(uintptr_t stream, bool *capturing)
{
    obs_hipStreamCaptureStatus status = obs_hipStreamCaptureStatusNone;
    int st = OBS_HIP_REAL(hipStreamIsCapturing)((obs_hipStream_t)stream, &status);
    *capturing = status != obs_hipStreamCaptureStatusNone;
    return st;
}

static int hip_stream_create_private(uintptr_t *stream)
{
    obs_hipStream_t s = NULL;
    int st = OBS_HIP_REAL(hipStreamCreateWithFlags)(&s, OBS_HIP_STREAM_NON_BLOCKING);
    *stream = (uintptr_t)s;
    return st;
}

static int hip_peek_last_error(void)
{
    return OBS_HIP_REAL(hipPeekAtLastError)();
}

static int hip_get_last_error(void)
{
    return OBS_HIP_REAL(hipGetLastError)();
}

OBS_HIDDEN const struct obs_gpu_backend obs_gpu_hip = {
    .name = "HIP runtime",
    .family = OBS_GPU_FAMILY_HIP,
    .not_ready = obs_hipErrorNotReady,
    .every_call_sets_last_error = true,
    .available = hip_available,
    .event_create = hip_event_create,
    .event_destroy = hip_event_destroy,
    .event_record = hip_event_record,
    .event_query = hip_event_query,
    .event_synchronize = hip_event_synchronize,
    .elapsed_ms = hip_elapsed_ms,
    .stream_capturing = hip_stream_capturing,
    .stream_create_private = hip_stream_create_private,
    .peek_last_error = hip_peek_last_error,
    .get_last_error = hip_get_last_error,
};
