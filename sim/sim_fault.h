/* Fault injection shared by the simulated runtimes, for tests of error paths
 * (the workload's checked calls, the shim's return-code pass-through).
 *
 * OBS_SIM_FAIL="api:N[:code][,api:N[:code]...]" makes the N-th call (1-based,
 * counted over all threads) of the exported entry point `api` return `code`
 * instead of its own status (default: 2, out of memory, for names containing
 * "Malloc"; else 1, invalid value). The call's effect has already happened:
 * only its status is replaced, and the ground-truth log shows the injected one. */
#ifndef OBS_SIM_FAULT_H
#define OBS_SIM_FAULT_H

/* Parse OBS_SIM_FAIL (call once, from the simulator's init). Bad entries are
 * reported on stderr and ignored. */
void sim_fault_init(void);

/* The status to inject for this call of api, or 0 for none. */
int sim_fault_status(const char *api);

#endif
