/* Kernel launches in the simulated CUDA runtime: every flavour the shim
 * hooks. A launch is checked as CUDA checks it, then charged to its stream's
 * virtual clock (or kept as a graph node while the stream captures); the
 * kernel itself never runs. A failed launch sets the thread's last error. */
#include "cudart_sim.h"

#include <stdint.h>

/* CUDA's limits for any current GPU. */
#define SIM_MAX_BLOCK_THREADS 1024u
#define SIM_MAX_BLOCK_Z 64u
#define SIM_MAX_GRID_YZ 65535u

static obs_cudaError_t check_config(obs_dim3 grid, obs_dim3 block)
{
    uint64_t block_threads = (uint64_t)block.x * block.y * block.z;
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || block.x == 0 || block.y == 0 || block.z == 0)
        return obs_cudaErrorInvalidConfiguration;
    if (block_threads > SIM_MAX_BLOCK_THREADS || block.z > SIM_MAX_BLOCK_Z || grid.y > SIM_MAX_GRID_YZ ||
        grid.z > SIM_MAX_GRID_YZ)
        return obs_cudaErrorInvalidConfiguration;
    return obs_cudaSuccess;
}

/* What one launch names: a host stub (or cudaKernel_t cast to a pointer, as
 * cudaLaunchKernel allows) or, for __cudaLaunchKernel, a cudaKernel_t only. */
struct launch_target {
    const void *func;
    int by_handle;
};

static obs_cudaError_t launch(struct launch_target target, obs_dim3 grid, obs_dim3 block,
                              obs_cudaStream_t stream, int per_thread_api, const char **name)
{
    const struct sim_kernel *k;
    struct sim_stream *s;
    struct sim_op op = {.type = SIM_OP_KERNEL};
    obs_cudaError_t err;

    pthread_mutex_lock(&sim_lock);
    k = target.by_handle ? sim_kernel_find_handle((obs_cudaKernel_t)target.func)
                         : sim_kernel_find(target.func);
    *name = sim_kernel_name(k);
    if (k == NULL)
        err = obs_cudaErrorInvalidDeviceFunction;
    else
        err = check_config(grid, block);
    if (err == obs_cudaSuccess)
        err = sim_stream_lookup(stream, per_thread_api, &s);
    if (err == obs_cudaSuccess) {
        op.u.kernel_threads = (uint64_t)grid.x * grid.y * grid.z * block.x * block.y * block.z;
        op.kernel_func = target.func;
        op.kernel_grid = grid;
        op.kernel_block = block;
        err = sim_submit(s, &op, 0);
    }
    pthread_mutex_unlock(&sim_lock);
    return err;
}

static obs_cudaError_t launch_logged(const char *api, struct launch_target target, obs_dim3 grid,
                                     obs_dim3 block, size_t shmem, obs_cudaStream_t stream, int per_thread_api,
                                     enum sim_via_launch how)
{
    const char *name = NULL;
    obs_cudaError_t err;
    sim_enter();
    err = launch(target, grid, block, stream, per_thread_api, &name);
    if (err == obs_cudaSuccess)
        sim_via_driver_launch(how, name, grid, block, shmem, stream, per_thread_api);
    return sim_finish(api, SIM_KIND_KERNEL, name, stream, SIM_NO_BYTES, err);
}

SIM_EXPORT obs_cudaError_t cudaLaunchKernel(const void *func, obs_dim3 grid, obs_dim3 block, void **args,
                                            size_t shmem, obs_cudaStream_t stream)
{
    struct launch_target t = {func, 0};
    return launch_logged("cudaLaunchKernel", t, grid, block, shmem, stream, 0, SIM_VIA_LAUNCH);
}

SIM_EXPORT obs_cudaError_t cudaLaunchKernel_ptsz(const void *func, obs_dim3 grid, obs_dim3 block,
                                                 void **args, size_t shmem, obs_cudaStream_t stream)
{
    struct launch_target t = {func, 0};
    return launch_logged("cudaLaunchKernel_ptsz", t, grid, block, shmem, stream, 1, SIM_VIA_LAUNCH);
}

SIM_EXPORT obs_cudaError_t __cudaLaunchKernel(obs_cudaKernel_t kernel, obs_dim3 grid, obs_dim3 block,
                                              void **args, size_t shmem, obs_cudaStream_t stream)
{
    struct launch_target t = {(const void *)kernel, 1};
    return launch_logged("__cudaLaunchKernel", t, grid, block, shmem, stream, 0, SIM_VIA_LAUNCH);
}

SIM_EXPORT obs_cudaError_t __cudaLaunchKernel_ptsz(obs_cudaKernel_t kernel, obs_dim3 grid, obs_dim3 block,
                                                   void **args, size_t shmem, obs_cudaStream_t stream)
{
    struct launch_target t = {(const void *)kernel, 1};
    return launch_logged("__cudaLaunchKernel_ptsz", t, grid, block, shmem, stream, 1, SIM_VIA_LAUNCH);
}

SIM_EXPORT obs_cudaError_t cudaLaunchCooperativeKernel(const void *func, obs_dim3 grid, obs_dim3 block,
                                                       void **args, size_t shmem, obs_cudaStream_t stream)
{
    struct launch_target t = {func, 0};
    return launch_logged("cudaLaunchCooperativeKernel", t, grid, block, shmem, stream, 0,
                         SIM_VIA_LAUNCH_COOPERATIVE);
}

SIM_EXPORT obs_cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, obs_dim3 grid, obs_dim3 block,
                                                            void **args, size_t shmem,
                                                            obs_cudaStream_t stream)
{
    struct launch_target t = {func, 0};
    return launch_logged("cudaLaunchCooperativeKernel_ptsz", t, grid, block, shmem, stream, 1,
                         SIM_VIA_LAUNCH_COOPERATIVE);
}

/* cudaLaunchKernelExC: the configuration comes in a struct; its attributes
 * change nothing in the simulator but must be readable. */
static obs_cudaError_t launch_ex(const char *api, const obs_cudaLaunchConfig_t *config, const void *func,
                                 int per_thread_api)
{
    struct launch_target t = {func, 0};
    const char *name = NULL;
    obs_cudaError_t err;
    const void *stream = config ? (const void *)config->stream : SIM_NO_STREAM;

    sim_enter();
    if (config == NULL || (config->numAttrs > 0 && config->attrs == NULL))
        err = obs_cudaErrorInvalidValue;
    else
        err = launch(t, config->gridDim, config->blockDim, config->stream, per_thread_api, &name);
    if (err == obs_cudaSuccess)
        sim_via_driver_launch(SIM_VIA_LAUNCH_EX, name, config->gridDim, config->blockDim,
                              config->dynamicSmemBytes, config->stream, per_thread_api);
    return sim_finish(api, SIM_KIND_KERNEL, name, stream, SIM_NO_BYTES, err);
}

SIM_EXPORT obs_cudaError_t cudaLaunchKernelExC(const obs_cudaLaunchConfig_t *config, const void *func,
                                               void **args)
{
    return launch_ex("cudaLaunchKernelExC", config, func, 0);
}

SIM_EXPORT obs_cudaError_t cudaLaunchKernelExC_ptsz(const obs_cudaLaunchConfig_t *config, const void *func,
                                                    void **args)
{
    return launch_ex("cudaLaunchKernelExC_ptsz", config, func, 1);
}
