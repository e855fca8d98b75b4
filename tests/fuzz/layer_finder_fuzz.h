/* The fuzz body of tests/fuzz/layer_finder_fuzz.c, also replayed by
 * tests/t_layer_finder over the kept corpus. Aborts on a broken invariant. */
#ifndef OBS_LAYER_FINDER_FUZZ_H
#define OBS_LAYER_FINDER_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_layer_finder(const uint8_t *data, size_t size);

#endif
