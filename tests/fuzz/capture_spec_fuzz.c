/* Fuzz body for the OBS_CAPTURE parser (shim/common/capture_spec.c). Built
 * two ways: with -DOBS_LIBFUZZER and clang -fsanitize=fuzzer,address,undefined
 * as a libFuzzer target (`make fuzz FUZZ_TARGET=capture-spec`,
 * tests/fuzz/run-fuzz-spec.sh capture-spec), and linked into tests/t_capture,
 * which replays the kept corpus (tests/fuzz/capture_spec_corpus) under make
 * check. Invariants checked here abort, so the fuzzer reports them as
 * crashes:
 *   - a text that parses gives at most OBS_CAPTURE_WINDOWS_MAX windows, each
 *     of a known unit with first <= last <= OBS_CAPTURE_NUMBER_MAX and a
 *     generation only on steps; formatting the spec gives a text that
 *     parses back to the same windows, and each window has words;
 *   - a text that does not gives one error: a column inside the text (or
 *     just past its end), a non-empty reason, no window. */
#include <stdlib.h>
#include <string.h>

#include "capture_spec_fuzz.h"
#include "common/capture_spec.h"

static void check_window(const struct obs_capture_window *w)
{
    char words[256];
    if (w->unit != OBS_CAPTURE_STEPS && w->unit != OBS_CAPTURE_ITERATIONS && w->unit != OBS_CAPTURE_GENERATIONS)
        abort();
    if (w->first > w->last || w->last > OBS_CAPTURE_NUMBER_MAX)
        abort();
    if (w->generation != OBS_CAPTURE_ANY_GENERATION &&
        (w->unit != OBS_CAPTURE_STEPS || w->generation > OBS_CAPTURE_NUMBER_MAX))
        abort();
    if (obs_capture_window_describe(w, words, sizeof words) == 0 || memchr(words, '\0', sizeof words) == NULL)
        abort();
}

int obs_fuzz_capture_spec(const uint8_t *data, size_t size)
{
    static char text[4097];
    struct obs_capture_spec spec, again;
    struct obs_capture_spec_error err, err2;
    char formatted[OBS_CAPTURE_WINDOWS_MAX * 64];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1, len;
    unsigned i;

    memcpy(text, data, n);
    text[n] = '\0';
    len = strlen(text);
    memset(&spec, 0xff, sizeof spec);
    if (obs_capture_spec_parse(text, &spec, &err) == 0) {
        if (spec.n > OBS_CAPTURE_WINDOWS_MAX)
            abort();
        for (i = 0; i < spec.n; i++)
            check_window(&spec.w[i]);
        if (obs_capture_spec_format(&spec, formatted, sizeof formatted) == 0)
            abort();
        if (obs_capture_spec_parse(formatted, &again, &err2) != 0 || again.n != spec.n)
            abort();
        for (i = 0; i < spec.n; i++)
            if (again.w[i].unit != spec.w[i].unit || again.w[i].first != spec.w[i].first ||
                again.w[i].last != spec.w[i].last || again.w[i].generation != spec.w[i].generation)
                abort();
    } else {
        if (err.column == 0 || err.column > len + 1 || err.what[0] == '\0' ||
            memchr(err.what, '\0', sizeof err.what) == NULL || spec.n != 0)
            abort();
    }
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_capture_spec(data, size);
}
#endif
