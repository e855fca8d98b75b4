/* The fuzz body of tests/fuzz/debug_spec_fuzz.c, also replayed by
 * tests/t_debug_log over the kept corpus. Aborts on a broken invariant. */
#ifndef OBS_DEBUG_SPEC_FUZZ_H
#define OBS_DEBUG_SPEC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_debug_spec(const uint8_t *data, size_t size);

#endif
