/* Errors and device queries of the simulated CUDA runtime: names and
 * strings as the real libcudart gives them, the per-thread sticky last
 * error, and one device (ordinal 0). */
#include "cudart_sim.h"

#include <stddef.h>

pthread_mutex_t sim_lock = PTHREAD_MUTEX_INITIALIZER;

/* The last error of this thread, as cudaGetLastError reports it. */
static __thread obs_cudaError_t sim_last_error;

void sim_set_last_error(obs_cudaError_t err)
{
    sim_last_error = err;
}

/* Names and strings copied from what CUDA 13's cudaGetErrorName/String
 * return for the codes the simulator can produce. */
static const struct {
    obs_cudaError_t code;
    const char *name, *text;
} sim_errors[] = {
    {obs_cudaSuccess, "cudaSuccess", "no error"},
    {obs_cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {obs_cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {obs_cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {obs_cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {obs_cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {obs_cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {obs_cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {obs_cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {obs_cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration",
     "__global__ function call is not configured"},
    {obs_cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {obs_cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {obs_cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {obs_cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {obs_cudaErrorIllegalState, "cudaErrorIllegalState",
     "the operation cannot be performed in the present state"},
    {obs_cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {obs_cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {obs_cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {obs_cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {obs_cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched",
     "capture was not ended in the same stream as it began"},
    {obs_cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {obs_cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {obs_cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

static const char sim_unrecognized[] = "unrecognized error code";

static const char *error_text(obs_cudaError_t error, int want_name)
{
    size_t i;
    for (i = 0; i < sizeof sim_errors / sizeof sim_errors[0]; i++)
        if (sim_errors[i].code == error)
            return want_name ? sim_errors[i].name : sim_errors[i].text;
    return sim_unrecognized;
}

SIM_EXPORT const char *cudaGetErrorName(obs_cudaError_t error)
{
    sim_enter();
    sim_log_call("cudaGetErrorName", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, 0);
    return error_text(error, 1);
}

SIM_EXPORT const char *cudaGetErrorString(obs_cudaError_t error)
{
    sim_enter();
    sim_log_call("cudaGetErrorString", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, 0);
    return error_text(error, 0);
}

SIM_EXPORT obs_cudaError_t cudaGetLastError(void)
{
    obs_cudaError_t err;
    sim_enter();
    err = sim_last_error;
    sim_last_error = obs_cudaSuccess;
    sim_log_call("cudaGetLastError", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, (int)err);
    return err;
}

SIM_EXPORT obs_cudaError_t cudaPeekAtLastError(void)
{
    obs_cudaError_t err;
    sim_enter();
    err = sim_last_error;
    sim_log_call("cudaPeekAtLastError", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, (int)err);
    return err;
}

/* ---- the one simulated device -------------------------------------------- */

#define SIM_CUDA_VERSION 13000

static obs_cudaError_t put_int(int *out, int value)
{
    if (out == NULL)
        return obs_cudaErrorInvalidValue;
    *out = value;
    return obs_cudaSuccess;
}

SIM_EXPORT obs_cudaError_t cudaGetDeviceCount(int *count)
{
    sim_enter();
    return sim_finish("cudaGetDeviceCount", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      put_int(count, 1));
}

SIM_EXPORT obs_cudaError_t cudaGetDevice(int *device)
{
    sim_enter();
    return sim_finish("cudaGetDevice", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      put_int(device, 0));
}

SIM_EXPORT obs_cudaError_t cudaSetDevice(int device)
{
    sim_enter();
    return sim_finish("cudaSetDevice", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      device == 0 ? obs_cudaSuccess : obs_cudaErrorInvalidDevice);
}

SIM_EXPORT obs_cudaError_t cudaRuntimeGetVersion(int *version)
{
    sim_enter();
    return sim_finish("cudaRuntimeGetVersion", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      put_int(version, SIM_CUDA_VERSION));
}

SIM_EXPORT obs_cudaError_t cudaDriverGetVersion(int *version)
{
    sim_enter();
    return sim_finish("cudaDriverGetVersion", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES,
                      put_int(version, SIM_CUDA_VERSION));
}

/* ---- profiler control ------------------------------------------------------ */

/* No profiler runs here: each call is logged like any other (a test sees
 * where OBS_CAPTURE's start and stop land among the program's calls) and
 * succeeds, as the real ones do with no tool attached. */
SIM_EXPORT obs_cudaError_t cudaProfilerStart(void)
{
    sim_enter();
    return sim_finish("cudaProfilerStart", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, obs_cudaSuccess);
}

SIM_EXPORT obs_cudaError_t cudaProfilerStop(void)
{
    sim_enter();
    return sim_finish("cudaProfilerStop", SIM_KIND_OTHER, NULL, SIM_NO_STREAM, SIM_NO_BYTES, obs_cudaSuccess);
}
