/* The tool port of one simulated library: see sim_tool.h. */
#include "sim_tool.h"
#include "sim_clock.h"
#include "sim_log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

static _Atomic(const struct sim_tool_port *) tool_port;
static __thread struct sim_tool_call tool_call; /* the thread's call in progress */

void sim_tool_attach(enum sim_tool_domain domain, const struct sim_tool_port *port)
{
    if (port != NULL && port->attached != NULL)
        port->attached(domain, sim_clock_floor());
    atomic_store_explicit(&tool_port, port, memory_order_release);
}

void sim_tool_api_begin(enum sim_tool_domain domain)
{
    const struct sim_tool_port *port = atomic_load_explicit(&tool_port, memory_order_acquire);
    tool_call.correlation = 0;
    if (port != NULL) {
        int saved_errno = errno;
        port->api_begin(domain, &tool_call);
        errno = saved_errno;
    }
}

void sim_tool_api_end(enum sim_tool_domain domain, const char *api, int status)
{
    const struct sim_tool_port *port = atomic_load_explicit(&tool_port, memory_order_acquire);
    if (port != NULL && tool_call.correlation != 0) {
        int saved_errno = errno;
        port->api_end(domain, api, &tool_call, status);
        errno = saved_errno;
    }
    tool_call.correlation = 0;
}

static const char *const op_words[] = {[SIM_TOOL_KERNEL] = "kernel", [SIM_TOOL_MEMCPY] = "memcpy",
                                       [SIM_TOOL_MEMSET] = "memset"};

void sim_tool_device_op(enum sim_tool_domain domain, struct sim_tool_op *op)
{
    const struct sim_tool_port *port = atomic_load_explicit(&tool_port, memory_order_acquire);
    sim_log_op(op_words[op->kind], op->kind == SIM_TOOL_KERNEL ? op->name : NULL, op->stream, op->start_ns,
               op->end_ns);
    op->correlation = tool_call.correlation;
    if (port != NULL && op->correlation != 0) {
        int saved_errno = errno;
        port->device_op(domain, op);
        errno = saved_errno;
    }
}
