/* Start-up and the ground-truth log shared by the simulated runtimes
 * (libcudart, libamdhip64, libcuda): each library compiles its own copy, so
 * each has its own log descriptor. Format: docs/architecture.md,
 * "Ground-truth log". */
#ifndef OBS_SIM_LOG_H
#define OBS_SIM_LOG_H

#include <stddef.h>
#include <stdint.h>

/* write(2) all of buf, retrying on EINTR and partial writes. */
void sim_write_all(int fd, const char *buf, size_t len);

/* Once per library, from its pthread_once init: print banner unless
 * OBS_SIM_QUIET=1, open OBS_SIM_LOG (O_APPEND; %p, %q{VAR} and %% in the
 * name are expanded), parse OBS_SIM_FAIL, read
 * OBS_SIM_LOG_TID and OBS_SIM_SYNC_WAIT (sim_clock.h). errno is preserved. */
void sim_log_start(const char *banner);

/* Append one line with a single write(2), so that threads and processes
 * never interleave inside a line. has_stream 0 writes "-" for the stream,
 * bytes < 0 writes "-"; name NULL or empty writes "-". With OBS_SIM_LOG_TID=1
 * a 7th column holds the calling thread's gettid() (tests of several host
 * threads, tests/t_scenarios). errno is preserved. */
void sim_log_line(const char *api, const char *kind, const char *name, int has_stream, uintptr_t stream,
                  long long bytes, int status);

/* OBS_SIM_LOG_OPS=1: one line per device operation (sim_tool.h):
 * "sim_op<TAB>kind<TAB>name<TAB>stream<TAB>start<TAB>end" in virtual ns.
 * Nothing otherwise. errno is preserved. */
void sim_log_op(const char *kind, const char *name, uintptr_t stream, uint64_t start_ns, uint64_t end_ns);

#endif
