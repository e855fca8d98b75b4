/* Simulated HIP runtime: the one simulated device and the runtime version. */
#include "hip_sim.h"

/* HIP_VERSION of the library simulated: 5.2.21153
 * (major * 10000000 + minor * 100000 + patch). */
#define SIM_HIP_RUNTIME_VERSION 50221153

obs_hipError_t hipInit(unsigned int flags)
{
    sim_enter();
    return sim_finish("hipInit", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      flags == 0 ? obs_hipSuccess : obs_hipErrorInvalidValue);
}

obs_hipError_t hipGetDeviceCount(int *count)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;

    sim_enter();
    if (count != NULL) {
        *count = 1;
        status = obs_hipSuccess;
    }
    return sim_finish("hipGetDeviceCount", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

obs_hipError_t hipGetDevice(int *deviceId)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;

    sim_enter();
    if (deviceId != NULL) {
        *deviceId = 0;
        status = obs_hipSuccess;
    }
    return sim_finish("hipGetDevice", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

obs_hipError_t hipSetDevice(int deviceId)
{
    sim_enter();
    return sim_finish("hipSetDevice", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES,
                      deviceId == 0 ? obs_hipSuccess : obs_hipErrorInvalidDevice);
}

obs_hipError_t hipRuntimeGetVersion(int *runtimeVersion)
{
    obs_hipError_t status = obs_hipErrorInvalidValue;

    sim_enter();
    if (runtimeVersion != NULL) {
        *runtimeVersion = SIM_HIP_RUNTIME_VERSION;
        status = obs_hipSuccess;
    }
    return sim_finish("hipRuntimeGetVersion", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, status);
}

/* Profiler control: no profiler runs here; each call is logged like any
 * other (a test sees where OBS_CAPTURE's start and stop land) and succeeds. */
obs_hipError_t hipProfilerStart(void)
{
    sim_enter();
    return sim_finish("hipProfilerStart", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, obs_hipSuccess);
}

obs_hipError_t hipProfilerStop(void)
{
    sim_enter();
    return sim_finish("hipProfilerStop", SIM_KIND_OTHER, NULL, NULL, SIM_NO_BYTES, obs_hipSuccess);
}
