/* Fuzz body for the OBS_DEBUG parser (shim/common/debug_spec.c). Built two
 * ways: with -DOBS_LIBFUZZER and clang -fsanitize=fuzzer,address,undefined
 * as a libFuzzer target (`make fuzz FUZZ_TARGET=debug-spec`,
 * tests/fuzz/run-fuzz-spec.sh debug-spec), and linked into tests/t_debug_log,
 * which replays the kept corpus (tests/fuzz/debug_spec_corpus) under make
 * check. Invariants checked here abort, so the fuzzer reports them as
 * crashes:
 *   - a text that parses gives levels 0..4, and formatting them gives a
 *     text that parses back to the same levels;
 *   - a text that does not gives one error: a column inside the text (or
 *     just past its end), a non-empty reason, every level 0. */
#include <stdlib.h>
#include <string.h>

#include "common/debug_spec.h"
#include "debug_spec_fuzz.h"

int obs_fuzz_debug_spec(const uint8_t *data, size_t size)
{
    static char text[4097];
    uint8_t levels[OBS_DEBUG_DOMAINS], again[OBS_DEBUG_DOMAINS];
    struct obs_debug_spec_error err, err2;
    char formatted[256];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1, len;
    unsigned d;

    memcpy(text, data, n);
    text[n] = '\0';
    len = strlen(text);
    memset(levels, 0xff, sizeof levels);
    if (obs_debug_spec_parse(text, levels, &err) == 0) {
        for (d = 0; d < OBS_DEBUG_DOMAINS; d++)
            if (levels[d] > OBS_DEBUG_LEVEL_MAX)
                abort();
        if (obs_debug_spec_format(levels, formatted, sizeof formatted) == 0)
            abort();
        if (obs_debug_spec_parse(formatted, again, &err2) != 0 || memcmp(levels, again, sizeof levels) != 0)
            abort();
    } else {
        if (err.column == 0 || err.column > len + 1 || err.what[0] == '\0' ||
            memchr(err.what, '\0', sizeof err.what) == NULL)
            abort();
        for (d = 0; d < OBS_DEBUG_DOMAINS; d++)
            if (levels[d] != 0)
                abort();
    }
    for (d = 0; d <= OBS_DEBUG_DOMAINS; d++) /* every name, and "" past the end */
        if (obs_debug_domain_name(d) == NULL)
            abort();
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_debug_spec(data, size);
}
#endif
