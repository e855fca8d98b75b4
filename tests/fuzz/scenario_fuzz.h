/* Fuzz body of the llm_replay scenario parser (tests/apps/scenario.c):
 * see scenario_fuzz.c. Returns 0; aborts when an invariant breaks. */
#ifndef OBS_SCENARIO_FUZZ_H
#define OBS_SCENARIO_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_scenario(const uint8_t *data, size_t size);

#endif
