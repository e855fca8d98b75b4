/* GPU time, CUDA runtime backend: the event functions of gpu_time.h on the
 * real CUDA runtime (real_symbols.h), never on our own hooks. */
#include "gpu_time.h"

#include "abi/cuda_abi.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"

static bool cuda_available(void)
{
    return OBS_CUDA_REAL(cudaEventCreateWithFlags) != NULL && OBS_CUDA_REAL(cudaEventDestroy) != NULL &&
           OBS_CUDA_REAL(cudaEventRecord) != NULL && OBS_CUDA_REAL(cudaEventQuery) != NULL &&
           OBS_CUDA_REAL(cudaEventSynchronize) != NULL && OBS_CUDA_REAL(cudaEventElapsedTime) != NULL &&
           OBS_CUDA_REAL(cudaStreamIsCapturing) != NULL && OBS_CUDA_REAL(cudaStreamCreateWithFlags) != NULL &&
           OBS_CUDA_REAL(cudaPeekAtLastError) != NULL && OBS_CUDA_REAL(cudaGetLastError) != NULL;
}

static int cuda_event_create(void **event)
{
    obs_cudaEvent_t e = NULL;
    int st = OBS_CUDA_REAL(cudaEventCreateWithFlags)(&e, 0); /* timing on */
    *event = e;
    return st;
}

static int cuda_event_destroy(void *event)
{
    return OBS_CUDA_REAL(cudaEventDestroy)((obs_cudaEvent_t)event);
}

static int cuda_event_record(void *event, uintptr_t stream)
{
    return OBS_CUDA_REAL(cudaEventRecord)((obs_cudaEvent_t)event, (obs_cudaStream_t)stream);
}

static int cuda_event_query(void *event)
{
    return OBS_CUDA_REAL(cudaEventQuery)((obs_cudaEvent_t)event);
}

static int cuda_event_synchronize(void *event)
{
    return OBS_CUDA_REAL(cudaEventSynchronize)((obs_cudaEvent_t)event);
}

static int cuda_elapsed_ms(float *ms, void *start, void *end)
{
    return OBS_CUDA_REAL(cudaEventElapsedTime)(ms, (obs_cudaEvent_t)start, (obs_cudaEvent_t)end);
}

/* An invalidated capture still counts: the stream is in capture mode. */
static int cuda_stream_capturing(uintptr_t stream, bool *capturing)
{
    obs_cudaStreamCaptureStatus status = obs_cudaStreamCaptureStatusNone;
    int st = OBS_CUDA_REAL(cudaStreamIsCapturing)((obs_cudaStream_t)stream, &status);
    *capturing = status != obs_cudaStreamCaptureStatusNone;
    return st;
}

static int cuda_stream_create_private(uintptr_t *stream)
{
    obs_cudaStream_t s = NULL;
    int st = OBS_CUDA_REAL(cudaStreamCreateWithFlags)(&s, OBS_CUDA_STREAM_NON_BLOCKING);
    *stream = (uintptr_t)s;
    return st;
}

static int cuda_peek_last_error(void)
{
    return OBS_CUDA_REAL(cudaPeekAtLastError)();
}

static int cuda_get_last_error(void)
{
    return OBS_CUDA_REAL(cudaGetLastError)();
}

OBS_HIDDEN const struct obs_gpu_backend obs_gpu_cuda = {
    .name = "CUDA runtime",
    .family = OBS_GPU_FAMILY_CUDA,
    .not_ready = obs_cudaErrorNotReady,
    .every_call_sets_last_error = false,
    .available = cuda_available,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_query = cuda_event_query,
    .event_synchronize = cuda_event_synchronize,
    .elapsed_ms = cuda_elapsed_ms,
    .stream_capturing = cuda_stream_capturing,
    .stream_create_private = cuda_stream_create_private,
    .peek_last_error = cuda_peek_last_error,
    .get_last_error = cuda_get_last_error,
};
