/* Live ranges: what the phase engine emits so that nsys, ncu and rocprof
 * show obsshim's phases. NVTX3 through our own minimal client of the NVTX
 * injection ABI (the shim builds without the CUDA toolkit: NVTX_INJECTION64_PATH
 * names the tool, as nsys/ncu set it), and roctx through a library found with
 * dlopen at run time (never linked). Implemented in ranges.c,
 * nvtx_client.c, roctx_client.c.
 *
 * Ranges are per thread, like NVTX push/pop. Handles are registered once
 * (off the hot path); push/pop by handle take no lock and allocate nothing. */
#ifndef OBS_RANGES_H
#define OBS_RANGES_H

#include <stdbool.h>
#include <stdint.h>

/* Load the NVTX injection and roctx if present. domain: the NVTX domain
 * name ("obsshim" by default; "" means NVTX's default domain). Called once
 * from the shim's init; true when at least one range sink is active. */
bool obs_ranges_init(const char *domain);

/* True when some sink (NVTX tool or roctx) is loaded. */
bool obs_ranges_active(void);

/* Register a range name (an NVTX registered string in our domain, with the
 * colour argb, 0 = none) and return its handle (> 0), or 0 when no sink is
 * active. Same name, same handle. Thread-safe; not for the hot path. */
uint32_t obs_range_handle(const char *name, uint32_t argb);

/* Push / pop on the calling thread's range stack (NVTX and roctx both).
 * push(0) and pop with nothing pushed by us are no-ops. */
void obs_range_push(uint32_t handle);
void obs_range_pop(void);

/* A leaf range, pushed on top of the thread's ranges by code outside the
 * phase engine (a collective's COMM/<op>, comm_ranges.h) and popped by it,
 * or first by the next push or pop of anyone else on the thread (a phase
 * change made inside the collective): the ranges stay nested, the leaf
 * then ends early. pop_leaf with no leaf open is a no-op. */
void obs_range_push_leaf(uint32_t handle);
void obs_range_pop_leaf(void);

#endif
