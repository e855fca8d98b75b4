/* The range lines of the ground-truth log (docs/architecture.md, "Range
 * lines"), written by the test NVTX injection and the roctx stand-in to the
 * file named by OBS_SIM_LOG, the same file the simulated runtimes append to:
 * one write(2) per line on an O_APPEND descriptor, so that range lines and
 * launch lines interleave in true call order. Each library compiles its own
 * copy (hidden symbols). */
#ifndef OBS_TEST_RANGE_LOG_H
#define OBS_TEST_RANGE_LOG_H

/* "api<TAB>range<TAB>name<TAB>domain<TAB>attrs<TAB>value\n". NULL or empty
 * text is written "-"; tabs and newlines in name become spaces. With
 * OBS_SIM_LOG_TID=1 a 7th column holds the caller's gettid(), as in the
 * simulators' lines (sim/sim_log.h). */
void range_log_line(const char *api, const char *name, const char *domain, const char *attrs,
                    long long value);

#endif
