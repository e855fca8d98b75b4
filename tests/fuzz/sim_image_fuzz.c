/* Fuzz body for the simulated driver's image reader (sim/cudrv_sim_image.c:
 * the kernels of ELF cubins, PTX and fatbins that programs load with
 * cuModuleLoad*, cuLibraryLoad*). Built two ways: with -DOBS_LIBFUZZER and
 * clang -fsanitize=fuzzer,address,undefined as a libFuzzer target (`make
 * fuzz FUZZ_TARGET=sim-image`, tests/fuzz/run-fuzz-sim-image.sh), and
 * linked into tests/t_sim_image, which replays the kept corpus
 * (tests/fuzz/sim_image_corpus: cubins from nvcc and Triton, PTX, fatbins)
 * under make check. The input is copied into a buffer of exactly its size,
 * so that ASan sees any read past it. Invariants checked here abort, so
 * the fuzzer reports them as crashes:
 *   - the walk returns 0 or -1 (its callback here never stops it);
 *   - each kernel's name lies inside the input, is not empty and holds no
 *     NUL; its attributes are -1 (unknown) or in range: registers and
 *     frame size >= 0, static shared memory >= 0, a block bound of 1 to
 *     1024 threads, an SM of 1 to 255;
 *   - the walk counts the kernels it reported, and a second walk gives the
 *     same count. */
#include <stdlib.h>
#include <string.h>

#include "cudrv_sim_image.h"
#include "sim_image_fuzz.h"

struct seen {
    const uint8_t *data;
    size_t size;
    int kernels;
};

static int check_kernel(void *ctx, const struct sim_image_kernel *k)
{
    struct seen *s = ctx;
    const uint8_t *name = (const uint8_t *)k->name;
    if (k->name_len == 0 || name < s->data || name > s->data + s->size || k->name_len > (size_t)(s->data + s->size - name) ||
        memchr(name, 0, k->name_len) != NULL)
        abort();
    if (k->num_regs < -1 || k->local_bytes < -1 || k->shared_bytes < 0 || k->max_threads < 1 ||
        k->max_threads > 1024 || k->binary_version == 0 || k->binary_version < -1 || k->binary_version > 255)
        abort();
    s->kernels++;
    return 0;
}

int obs_fuzz_sim_image(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    struct sim_image_walk walk, again;
    struct seen s = {NULL, size, 0};
    int rc;
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    s.data = copy;
    rc = sim_image_kernels(copy, size, check_kernel, &s, &walk);
    if ((rc != 0 && rc != -1) || walk.kernels != s.kernels || walk.unreadable > walk.entries || walk.unreadable < 0)
        abort();
    if (sim_image_kernels(copy, size, NULL, NULL, &again) != rc || again.kernels != walk.kernels)
        abort();
    (void)sim_image_kind(copy, size);
    free(copy);
    return 0;
}

#ifdef OBS_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return obs_fuzz_sim_image(data, size);
}
#endif
