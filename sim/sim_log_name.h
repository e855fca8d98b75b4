/* The name of the ground-truth log, OBS_SIM_LOG, as a pattern: shared by
 * the simulated libraries (sim_log.c) and the tests' range loggers
 * (tests/nvtx_inject/range_log.c), so that every writer of one process
 * opens the same file. */
#ifndef OBS_SIM_LOG_NAME_H
#define OBS_SIM_LOG_NAME_H

#include <stddef.h>

/* pattern with %p (the process id), %q{VAR} (the value of VAR, empty when
 * unset) and %% (a %) expanded into out; anything else as written. So the
 * processes of one run each get their own log (OBS_SIM_LOG=log.%q{RANK},
 * torchrun's ranks). Returns 0 when the name does not fit. */
int sim_log_name_expand(const char *pattern, char *out, size_t size);

#endif
