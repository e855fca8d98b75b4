/* Under make check: every file of a kept fuzz corpus through its fuzz body
 * (which aborts on a broken invariant), for the tests of the settings
 * parsers (t_debug_log, t_capture), the simulated driver's image reader
 * (t_sim_image) and the layer finder (t_layer_finder). */
#ifndef OBS_CORPUS_REPLAY_H
#define OBS_CORPUS_REPLAY_H

#include <stddef.h>
#include <stdint.h>

typedef int (*fuzz_body_fn)(const uint8_t *data, size_t size);

/* The files of dir replayed; *unreadable: those that could not be read.
 * (size_t)-1 when dir cannot be opened. */
size_t fuzz_corpus_replay(const char *dir, fuzz_body_fn body, size_t *unreadable);

#endif
