/* The simulators' tool port: how the simulated libcupti (sim/
 * cupti_sim.c) sees the simulated CUDA runtime and driver, as NVIDIA's
 * libcupti sees the real ones through the driver's private tool tables.
 *
 * Each library (libcudart.so.13, libcuda.so.1) compiles its own copy of
 * sim_tool.c and exports one attach function (obssim_cudart_tool_attach,
 * obssim_cudrv_tool_attach) that the simulated libcupti finds with dlsym.
 * While a port is attached, every entry point of the library tells it:
 *   sim_tool_api_begin()   on entry (sim_enter / drv_enter): the port gives
 *                          the call its correlation id and start time;
 *   sim_tool_device_op()   for each operation the call runs on the device
 *                          (sim_submit / drv_submit), with its virtual start
 *                          and end; graph replays report each node, with the
 *                          graph launch's correlation id;
 *   sim_tool_api_end()     on return (sim_finish / drv_finish).
 * With no port attached each costs one atomic load.
 *
 * OBS_SIM_LOG_OPS=1 also writes each operation to the ground-truth log,
 * attached or not, one line before the call's own line:
 *     sim_op<TAB>kind<TAB>name<TAB>stream<TAB>START_NS<TAB>END_NS
 * (kind kernel, memcpy or memset; name the kernel's, else "-"; the virtual
 * start and end; a 7th column with OBS_SIM_LOG_TID=1). */
#ifndef OBS_SIM_TOOL_H
#define OBS_SIM_TOOL_H

#include <stdint.h>

enum sim_tool_domain { SIM_TOOL_RUNTIME = 0, SIM_TOOL_DRIVER = 1 };
enum sim_tool_op_kind { SIM_TOOL_KERNEL = 0, SIM_TOOL_MEMCPY = 1, SIM_TOOL_MEMSET = 2 };

/* One device operation. */
struct sim_tool_op {
    enum sim_tool_op_kind kind;
    uint32_t correlation;    /* of the call that ran it (0: no port) */
    uint64_t start_ns, end_ns; /* virtual device time */
    uintptr_t stream;        /* the library's stream object */
    uint64_t bytes;          /* copies, memsets */
    int copy_kind;           /* copies: OBS_CUPTI_MEMCPY_KIND_* */
    const char *name;        /* kernels: the mangled name, or NULL */
    uint32_t grid[3], block[3];
    int in_graph;            /* replayed from a graph */
};

/* What a port is given per call (kept in the library's TLS). */
struct sim_tool_call {
    uint32_t correlation; /* 0: the port keeps no record of this call */
    uint64_t start;       /* its start on the port's clock */
};

struct sim_tool_port {
    /* At attach: the library's virtual time now (sim_clock_floor). */
    void (*attached)(enum sim_tool_domain domain, uint64_t virtual_now_ns);
    void (*api_begin)(enum sim_tool_domain domain, struct sim_tool_call *call);
    void (*api_end)(enum sim_tool_domain domain, const char *api, const struct sim_tool_call *call, int status);
    void (*device_op)(enum sim_tool_domain domain, const struct sim_tool_op *op);
};

/* The exported attach functions (one per library; port NULL detaches). */
typedef void (*sim_tool_attach_fn)(const struct sim_tool_port *port);
void obssim_cudart_tool_attach(const struct sim_tool_port *port);
void obssim_cudrv_tool_attach(const struct sim_tool_port *port);

/* In each library (sim_tool.c). domain: which library this copy is in. */
void sim_tool_attach(enum sim_tool_domain domain, const struct sim_tool_port *port);
void sim_tool_api_begin(enum sim_tool_domain domain);
void sim_tool_api_end(enum sim_tool_domain domain, const char *api, int status);
/* op->correlation is filled in here. Logs the sim_op line (OBS_SIM_LOG_OPS=1). */
void sim_tool_device_op(enum sim_tool_domain domain, struct sim_tool_op *op);

#endif
