/* The fuzz body of tests/fuzz/phase_rules_fuzz.c, also replayed by
 * tests/t_phase_rules over the kept corpus. Aborts on a broken invariant. */
#ifndef OBS_PHASE_RULES_FUZZ_H
#define OBS_PHASE_RULES_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_phase_rules(const uint8_t *data, size_t size);

#endif
