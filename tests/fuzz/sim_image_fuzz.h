/* The fuzz body of tests/fuzz/sim_image_fuzz.c, also replayed by
 * tests/t_sim_image over the kept corpus. Aborts on a broken invariant. */
#ifndef OBS_SIM_IMAGE_FUZZ_H
#define OBS_SIM_IMAGE_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int obs_fuzz_sim_image(const uint8_t *data, size_t size);

#endif
