/* The simulated device's cost model, in one place: the simulators charge
 * these costs to their virtual stream clocks and the tests predict the
 * workload's TTFT and tokens/s from them. See docs/architecture.md. */
#ifndef OBS_SIM_COST_MODEL_H
#define OBS_SIM_COST_MODEL_H

#include <stdint.h>

#define SIM_LAUNCH_LATENCY_NS 2000u       /* a kernel launched on its own */
#define SIM_GRAPH_NODE_LATENCY_NS 500u    /* a kernel replayed from a graph */
#define SIM_THREADS_PER_NS 64u
#define SIM_COPY_LATENCY_NS 1000u
#define SIM_HOST_LINK_BYTES_PER_NS 25u    /* HtoD, DtoH, HtoH, peer: 25 GB/s */
#define SIM_DEVICE_BYTES_PER_NS 1000u     /* DtoD and memset: 1 TB/s */

static inline uint64_t sim_kernel_cost_ns(uint64_t threads, int in_graph)
{
    return (in_graph ? SIM_GRAPH_NODE_LATENCY_NS : SIM_LAUNCH_LATENCY_NS) + threads / SIM_THREADS_PER_NS;
}

static inline uint64_t sim_copy_cost_ns(uint64_t bytes, int device_to_device)
{
    return SIM_COPY_LATENCY_NS +
           bytes / (device_to_device ? SIM_DEVICE_BYTES_PER_NS : SIM_HOST_LINK_BYTES_PER_NS);
}

static inline uint64_t sim_memset_cost_ns(uint64_t bytes)
{
    return SIM_COPY_LATENCY_NS + bytes / SIM_DEVICE_BYTES_PER_NS;
}

#endif
