/* The fuzz body of tests/fuzz/capture_spec_fuzz.c, also replayed by
 * tests/t_capture over the kept corpus. Aborts on a broken invariant. */
#ifndef OBS_CAPTURE_SPEC_FUZZ_H
#define OBS_CAPTURE_SPEC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_capture_spec(const uint8_t *data, size_t size);

#endif
