/* The two places live ranges go (internal to ranges.c): an NVTX tool attached
 * through our own NVTX injection client (nvtx_client.c), and roctx found with
 * dlopen (roctx_client.c). Attach/load/register run off the hot path; push and
 * pop are plain indirect calls, no lock, no allocation. */
#ifndef OBS_RANGE_SINKS_H
#define OBS_RANGE_SINKS_H

#include <stdbool.h>
#include <stdint.h>

#include "abi/nvtx_abi.h"

/* Load the tool named by NVTX_INJECTION64_PATH (if set) and attach our client
 * to it; domain "" means NVTX's default domain. True when the tool gave us a
 * push and a pop. Call once. */
bool obs_nvtx_attach(const char *domain);
bool obs_nvtx_active(void);
/* Fill *attr for a range named name (which must stay valid for the life of
 * the process): a registered string when the tool registers strings, the
 * ASCII text otherwise; colour argb when argb != 0. */
void obs_nvtx_describe(struct obs_nvtx_event_attributes *attr, const char *name, uint32_t argb);
void obs_nvtx_push(const struct obs_nvtx_event_attributes *attr);
void obs_nvtx_pop(void);

/* dlopen the first roctx library found (never linked). Call once. */
bool obs_roctx_load(void);
bool obs_roctx_active(void);
void obs_roctx_push(const char *name);
void obs_roctx_pop(void);

#endif
