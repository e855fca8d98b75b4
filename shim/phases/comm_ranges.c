/* Live COMM/<op> ranges: see comm_ranges.h. */
#include "comm_ranges.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "ranges.h"
#include "trace/trace.h"

/* A light blue for communication (phases use their own colours). */
#define COMM_RANGE_ARGB 0xff4aa3dfu

static _Atomic uint32_t comm_handles[OBS_COLL_COUNT]; /* 0: not registered yet */

/* The range name of op, registered once (a lock, the first time only). */
static uint32_t comm_handle(unsigned op)
{
    uint32_t h = atomic_load_explicit(&comm_handles[op], memory_order_acquire);
    if (h == 0) {
        char name[64];
        snprintf(name, sizeof name, "COMM/%s", obs_coll_op_short(op));
        h = obs_range_handle(name, COMM_RANGE_ARGB); /* the same name gives the same handle */
        atomic_store_explicit(&comm_handles[op], h, memory_order_release);
    }
    return h;
}

void obs_comm_range_begin(unsigned op)
{
    if (op >= OBS_COLL_COUNT || !obs_ranges_active())
        return;
    obs_range_push_leaf(comm_handle(op));
}

void obs_comm_range_end(void)
{
    obs_range_pop_leaf();
}
