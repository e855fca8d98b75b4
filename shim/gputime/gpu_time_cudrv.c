/* GPU time, CUDA driver backend: the event functions of gpu_time.h on the
 * real driver (real_symbols.h), never on our own hooks, for launches,
 * copies and memsets made through the driver API (static cudart, cuBLAS,
 * Triton, -lcuda programs).
 *
 * It uses the CUDA family's shared state (reference events, per-thread
 * pools): a CUevent is a cudaEvent_t and a CUstream a cudaStream_t, on the
 * same device clock, so a thread may time runtime and driver calls with
 * one pool. The driver keeps no "last error": peeking reads success. */
#include "gpu_time.h"

#include "abi/cuda_driver_abi.h"
#include "common/common.h"
#include "runtimes/real_symbols.h"

static bool cudrv_available(void)
{
    return OBS_CUDRV_REAL(cuEventCreate) != NULL && OBS_CUDRV_REAL(cuEventDestroy_v2) != NULL &&
           OBS_CUDRV_REAL(cuEventRecord) != NULL && OBS_CUDRV_REAL(cuEventQuery) != NULL &&
           OBS_CUDRV_REAL(cuEventSynchronize) != NULL &&
           (OBS_CUDRV_REAL(cuEventElapsedTime_v2) != NULL || OBS_CUDRV_REAL(cuEventElapsedTime) != NULL) &&
           OBS_CUDRV_REAL(cuStreamIsCapturing) != NULL && OBS_CUDRV_REAL(cuStreamCreate) != NULL;
}

static int cudrv_event_create(void **event)
{
    obs_CUevent e = NULL;
    int st = OBS_CUDRV_REAL(cuEventCreate)(&e, 0); /* timing on */
    *event = e;
    return st;
}

static int cudrv_event_destroy(void *event)
{
    return OBS_CUDRV_REAL(cuEventDestroy_v2)((obs_CUevent)event);
}

static int cudrv_event_record(void *event, uintptr_t stream)
{
    return OBS_CUDRV_REAL(cuEventRecord)((obs_CUevent)event, (obs_CUstream)stream);
}

static int cudrv_event_query(void *event)
{
    return OBS_CUDRV_REAL(cuEventQuery)((obs_CUevent)event);
}

static int cudrv_event_synchronize(void *event)
{
    return OBS_CUDRV_REAL(cuEventSynchronize)((obs_CUevent)event);
}

/* CUDA 12.8's _v2 where the driver has it (the same result). */
static int cudrv_elapsed_ms(float *ms, void *start, void *end)
{
    obs_fn_cuEventElapsedTime_v2 v2 = OBS_CUDRV_REAL(cuEventElapsedTime_v2);
    if (v2 != NULL)
        return v2(ms, (obs_CUevent)start, (obs_CUevent)end);
    return OBS_CUDRV_REAL(cuEventElapsedTime)(ms, (obs_CUevent)start, (obs_CUevent)end);
}

/* An invalidated capture still counts: the stream is in capture mode. */
static int cudrv_stream_capturing(uintptr_t stream, bool *capturing)
{
    obs_CUstreamCaptureStatus status = OBS_CU_STREAM_CAPTURE_STATUS_NONE;
    int st = OBS_CUDRV_REAL(cuStreamIsCapturing)((obs_CUstream)stream, &status);
    *capturing = status != OBS_CU_STREAM_CAPTURE_STATUS_NONE;
    return st;
}

static int cudrv_stream_create_private(uintptr_t *stream)
{
    obs_CUstream s = NULL;
    int st = OBS_CUDRV_REAL(cuStreamCreate)(&s, OBS_CU_STREAM_NON_BLOCKING);
    *stream = (uintptr_t)s;
    return st;
}

/* The driver API returns every error; nothing stays behind to restore. */
static int cudrv_no_last_error(void)
{
    return 0;
}

OBS_HIDDEN const struct obs_gpu_backend obs_gpu_cudrv = {
    .name = "CUDA driver",
    .family = OBS_GPU_FAMILY_CUDA,
    .not_ready = OBS_CUDA_ERROR_NOT_READY,
    .every_call_sets_last_error = false,
    .available = cudrv_available,
    .event_create = cudrv_event_create,
    .event_destroy = cudrv_event_destroy,
    .event_record = cudrv_event_record,
    .event_query = cudrv_event_query,
    .event_synchronize = cudrv_event_synchronize,
    .elapsed_ms = cudrv_elapsed_ms,
    .stream_capturing = cudrv_stream_capturing,
    .stream_create_private = cudrv_stream_create_private,
    .peek_last_error = cudrv_no_last_error,
    .get_last_error = cudrv_no_last_error,
};
