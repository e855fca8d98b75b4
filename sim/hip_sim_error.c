/* Simulated HIP runtime: the last error and error names. As in HIP, every
 * call stores its result as the thread's last error, success included;
 * hipGetLastError returns it and resets it, hipPeekAtLastError only reads it. */
#include <stddef.h>

#include "hip_sim.h"

struct sim_error_text {
    int code;
    const char *name;
    const char *text;
};

/* hipError_t values (hip_runtime_api.h, HIP 5.2); for a value with two
 * names, the one hipGetErrorName gives comes first. */
static const struct sim_error_text sim_errors[] = {
    {0, "hipSuccess", "no error"},
    {1, "hipErrorInvalidValue", "invalid argument"},
    {2, "hipErrorOutOfMemory", "out of memory"},
    {3, "hipErrorNotInitialized", "initialization error"},
    {4, "hipErrorDeinitialized", "driver shutting down"},
    {5, "hipErrorProfilerDisabled", "profiler disabled"},
    {6, "hipErrorProfilerNotInitialized", "profiler not initialized"},
    {7, "hipErrorProfilerAlreadyStarted", "profiler already started"},
    {8, "hipErrorProfilerAlreadyStopped", "profiler already stopped"},
    {9, "hipErrorInvalidConfiguration", "invalid configuration argument"},
    {12, "hipErrorInvalidPitchValue", "invalid pitch argument"},
    {13, "hipErrorInvalidSymbol", "invalid device symbol"},
    {17, "hipErrorInvalidDevicePointer", "invalid device pointer"},
    {21, "hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {35, "hipErrorInsufficientDriver", "driver version is insufficient for runtime version"},
    {52, "hipErrorMissingConfiguration", "__global__ function call is not configured"},
    {53, "hipErrorPriorLaunchFailure", "unspecified launch failure in prior launch"},
    {98, "hipErrorInvalidDeviceFunction", "invalid device function"},
    {100, "hipErrorNoDevice", "no ROCm-capable device is detected"},
    {101, "hipErrorInvalidDevice", "invalid device ordinal"},
    {200, "hipErrorInvalidImage", "device kernel image is invalid"},
    {201, "hipErrorInvalidContext", "invalid device context"},
    {202, "hipErrorContextAlreadyCurrent", "context is already current context"},
    {205, "hipErrorMapFailed", "mapping of buffer object failed"},
    {206, "hipErrorUnmapFailed", "unmapping of buffer object failed"},
    {207, "hipErrorArrayIsMapped", "array is mapped"},
    {208, "hipErrorAlreadyMapped", "resource already mapped"},
    {209, "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {210, "hipErrorAlreadyAcquired", "resource already acquired"},
    {211, "hipErrorNotMapped", "resource not mapped"},
    {212, "hipErrorNotMappedAsArray", "resource not mapped as array"},
    {213, "hipErrorNotMappedAsPointer", "resource not mapped as pointer"},
    {214, "hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"},
    {215, "hipErrorUnsupportedLimit", "limit is not supported on this architecture"},
    {216, "hipErrorContextAlreadyInUse", "exclusive-thread device already in use"},
    {217, "hipErrorPeerAccessUnsupported", "peer access is not supported"},
    {218, "hipErrorInvalidKernelFile", "invalid kernel file"},
    {219, "hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"},
    {300, "hipErrorInvalidSource", "device kernel image is invalid"},
    {301, "hipErrorFileNotFound", "file not found"},
    {302, "hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"},
    {303, "hipErrorSharedObjectInitFailed", "shared object initialization failed"},
    {304, "hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"},
    {400, "hipErrorInvalidHandle", "invalid resource handle"},
    {401, "hipErrorIllegalState", "the operation cannot be performed in the present state"},
    {500, "hipErrorNotFound", "named symbol not found"},
    {600, "hipErrorNotReady", "device not ready"},
    {700, "hipErrorIllegalAddress", "an illegal memory access was encountered"},
    {701, "hipErrorLaunchOutOfResources", "too many resources requested for launch"},
    {702, "hipErrorLaunchTimeOut", "the launch timed out and was terminated"},
    {704, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"},
    {705, "hipErrorPeerAccessNotEnabled", "peer access has not been enabled"},
    {708, "hipErrorSetOnActiveProcess", "cannot set while device is active in this process"},
    {709, "hipErrorContextIsDestroyed", "context is destroyed"},
    {710, "hipErrorAssert", "device-side assert triggered"},
    {712, "hipErrorHostMemoryAlreadyRegistered", "part or all of the host memory is already registered"},
    {713, "hipErrorHostMemoryNotRegistered", "pointer does not correspond to a registered memory region"},
    {719, "hipErrorLaunchFailure", "unspecified launch failure"},
    {720, "hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"},
    {801, "hipErrorNotSupported", "operation not supported"},
    {900, "hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {901, "hipErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
    {902, "hipErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"},
    {903, "hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"},
    {904, "hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"},
    {905, "hipErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"},
    {906, "hipErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"},
    {907, "hipErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"},
    {908, "hipErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"},
    {910, "hipErrorGraphExecUpdateFailure", "the graph update was not performed"},
    {999, "hipErrorUnknown", "unknown error"},
    {1052, "hipErrorRuntimeMemory", "runtime memory call returned error"},
    {1053, "hipErrorRuntimeOther", "runtime call other than memory returned error"},
};

static const struct sim_error_text *sim_error_find(int code)
{
    for (size_t i = 0; i < sizeof sim_errors / sizeof sim_errors[0]; ++i)
        if (sim_errors[i].code == code)
            return &sim_errors[i];
    return NULL;
}

obs_hipError_t hipGetLastError(void)
{
    obs_hipError_t last;

    sim_enter();
    last = sim_last_error_get();
    sim_last_error_set(obs_hipSuccess);
    sim_log_call("hipGetLastError", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, last);
    return last;
}

obs_hipError_t hipPeekAtLastError(void)
{
    sim_enter();
    return sim_finish("hipPeekAtLastError", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      sim_last_error_get());
}

const char *hipGetErrorName(obs_hipError_t hip_error)
{
    const struct sim_error_text *e;

    sim_enter();
    e = sim_error_find(hip_error);
    sim_log_call("hipGetErrorName", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, 0);
    return e != NULL ? e->name : "hipErrorUnknown";
}

const char *hipGetErrorString(obs_hipError_t hipError)
{
    const struct sim_error_text *e;

    sim_enter();
    e = sim_error_find(hipError);
    sim_log_call("hipGetErrorString", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, 0);
    return e != NULL ? e->text : "unknown error";
}
