/* The simulated driver's image reader (sim/cudrv_sim_image.c), called
 * directly on images NVIDIA's and Triton's compilers made (kept in
 * tests/fuzz/sim_image_corpus; how they were made: tests/fuzz/sim_image_seeds.md):
 *   - an ELF cubin from Triton (torch.compile's triton_poi_fused_gelu_0) and
 *     one from nvcc: every entry kernel by name and no device function, with
 *     the registers, static shared memory (the 1 KiB the system reserves
 *     left out), frame size, block bound (.reqntid / __launch_bounds__) and
 *     SM the real driver reports for them;
 *   - PTX: its .entry names and .maxntid bounds;
 *   - fatbins: an uncompressed one's ELF and PTX entries; one whose PTX is
 *     stored compressed (nvcc's default) still names its kernels from its
 *     ELF entry; one with every entry compressed names none and counts them
 *     unreadable (the driver then names kernels on demand);
 *   - the extent of an image known by its address alone (cuModuleLoadData);
 *   - every prefix of every image, and seeded byte flips, read without a
 *     read past the end (ASan under make check-sanitize) and with an answer
 *     of 0 or -1; the kept corpus replayed through the fuzz body. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_replay.h"
#include "cudrv_sim_image.h"
#include "sim_image_fuzz.h"
#include "tap/basic.h"
#include "tap/process.h"

struct image {
    unsigned char *data;
    size_t size;
};

static struct image load(const char *name)
{
    char path[4200];
    struct image im = {NULL, 0};
    snprintf(path, sizeof path, "%s/%s", test_path(test_srcdir(), "tests/fuzz/sim_image_corpus"), name);
    im.data = (unsigned char *)test_read_file(path, &im.size);
    if (im.data == NULL)
        bail("cannot read %s", path);
    return im;
}

#define MAX_SEEN 8

struct seen {
    int n;
    struct sim_image_kernel k[MAX_SEEN];
    char names[MAX_SEEN][128];
};

static int collect(void *ctx, const struct sim_image_kernel *k)
{
    struct seen *s = ctx;
    if (s->n < MAX_SEEN) {
        s->k[s->n] = *k;
        snprintf(s->names[s->n], sizeof s->names[s->n], "%.*s", (int)k->name_len, k->name);
    }
    s->n++;
    return 0;
}

static const struct sim_image_kernel *find(const struct seen *s, const char *name)
{
    for (int i = 0; i < s->n && i < MAX_SEEN; i++)
        if (strcmp(s->names[i], name) == 0)
            return &s->k[i];
    return NULL;
}

static int walk(const struct image *im, struct seen *s, struct sim_image_walk *w)
{
    memset(s, 0, sizeof *s);
    return sim_image_kernels(im->data, im->size, collect, s, w);
}

static void expect_kernel(const struct seen *s, const char *what, const char *name, int regs, int shared, int local,
                          int threads, int sm)
{
    const struct sim_image_kernel *k = find(s, name);
    if (!ok(k != NULL, "%s: kernel %s", what, name)) {
        skip_block(5, "no such kernel");
        return;
    }
    is_int(regs, k->num_regs, "%s: %s: registers", what, name);
    is_int(shared, k->shared_bytes, "%s: %s: static shared memory", what, name);
    is_int(local, k->local_bytes, "%s: %s: frame (local) bytes", what, name);
    is_int(threads, k->max_threads, "%s: %s: threads per block at most", what, name);
    is_int(sm, k->binary_version, "%s: %s: SM", what, name);
}

static void test_cubins(void)
{
    struct image triton = load("triton_poi_fused_gelu_0.cubin"), nvcc = load("kernels.cubin");
    struct sim_image_walk w;
    struct seen s;

    is_int(SIM_IMAGE_ELF, sim_image_kind(triton.data, triton.size), "Triton's cubin is an ELF image");
    is_int(0, walk(&triton, &s, &w), "Triton's cubin reads");
    is_int(1, s.n, "one kernel");
    expect_kernel(&s, "Triton", "triton_poi_fused_gelu_0", 12, 0, 0, 128, 90);
    ok(sim_image_extent(triton.data) == triton.size, "its extent from its headers is its size (%zu)", triton.size);

    is_int(0, walk(&nvcc, &s, &w), "nvcc's cubin reads");
    is_int(2, s.n, "two kernels: the device function _Z6helperf is none");
    expect_kernel(&s, "nvcc", "_Z6kern_aPfi", 12, 1200, 0, 256, 90);
    expect_kernel(&s, "nvcc", "_Z6kern_bIdEvPT_", 12, 0, 0, 1024, 90);
    ok(find(&s, "_Z6helperf") == NULL && find(&s, "$_Z6kern_aPfi$_Z6helperf") == NULL, "no device function");
    ok(sim_image_extent(nvcc.data) == nvcc.size, "its extent is its size (%zu)", nvcc.size);
    free(triton.data);
    free(nvcc.data);
}

static void test_ptx(void)
{
    struct image nvcc = load("kernels.ptx"), triton = load("triton_poi_fused_gelu_0.ptx");
    struct sim_image_walk w;
    struct seen s;
    const struct sim_image_kernel *k;

    is_int(SIM_IMAGE_PTX, sim_image_kind(nvcc.data, nvcc.size), "PTX text (comments, then .version)");
    is_int(0, walk(&nvcc, &s, &w), "nvcc's PTX reads");
    is_int(2, s.n, "two .entry kernels, the .func is none");
    k = find(&s, "_Z6kern_aPfi");
    ok(k != NULL && k->max_threads == 256 && k->num_regs == -1, "kern_a: .maxntid 256, registers unknown before a JIT");
    k = find(&s, "_Z6kern_bIdEvPT_");
    ok(k != NULL && k->max_threads == 1024, "kern_b: no bound, 1024");
    is_int(0, walk(&triton, &s, &w), "Triton's PTX reads");
    k = find(&s, "triton_poi_fused_gelu_0");
    ok(s.n == 1 && k != NULL && k->max_threads == 128, "its kernel, .reqntid 128");
    ok(sim_image_extent(nvcc.data) == nvcc.size + 1, "PTX's extent: up to its NUL");
    free(nvcc.data);
    free(triton.data);
}

/* Every entry of a fatbin marked stored compressed (flags bit 0x8000), as
 * nvcc stores all but small ones. */
static void compress_all(struct image *im)
{
    size_t off = 16, end = 16 + ((size_t)im->data[8] | (size_t)im->data[9] << 8 | (size_t)im->data[10] << 16);
    while (off + 64 <= end) {
        unsigned char *h = im->data + off;
        uint32_t header = (uint32_t)h[4] | (uint32_t)h[5] << 8;
        uint32_t padded = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16;
        h[41] |= 0x80;
        off += header + padded;
    }
}

static void test_fatbins(void)
{
    struct image plain = load("kernels.fatbin"), mixed = load("kernels-compressed.fatbin");
    struct sim_image_walk w;
    struct seen s;

    is_int(SIM_IMAGE_FATBIN, sim_image_kind(plain.data, plain.size), "a fatbin");
    is_int(0, walk(&plain, &s, &w), "an uncompressed fatbin reads");
    ok(w.entries == 2 && w.unreadable == 0 && s.n == 4, "its sm_90 ELF and compute_80 PTX entries: 2 kernels each (%d)",
       s.n);
    expect_kernel(&s, "fatbin", "_Z6kern_aPfi", 12, 1200, 0, 256, 90);
    ok(sim_image_extent(plain.data) == plain.size, "its extent from its header is its size");

    is_int(0, walk(&mixed, &s, &w), "nvcc's default fatbin reads");
    ok(w.entries == 2 && w.unreadable == 1 && s.n == 2, "its PTX entry is compressed; its ELF entry names the kernels");
    compress_all(&mixed);
    is_int(0, walk(&mixed, &s, &w), "a fatbin with every entry compressed reads");
    ok(w.entries == 2 && w.unreadable == 2 && s.n == 0, "no kernel named, two entries unreadable");
    free(plain.data);
    free(mixed.data);
}

/* Every prefix of an image, in a buffer of exactly that size. */
static void test_prefixes(const char *name)
{
    struct image im = load(name);
    struct sim_image_walk full, w;
    size_t n, bad = 0, more = 0;
    sim_image_kernels(im.data, im.size, NULL, NULL, &full);
    for (n = 0; n < im.size; n++) {
        unsigned char *cut = malloc(n ? n : 1);
        int rc;
        memcpy(cut, im.data, n);
        rc = sim_image_kernels(cut, n, NULL, NULL, &w);
        bad += rc != 0 && rc != -1;
        more += w.kernels > full.kernels;
        free(cut);
    }
    ok(bad == 0 && more == 0, "%s: each of its %zu prefixes reads as 0 or -1 with no more kernels than the whole (%d)",
       name, im.size, full.kernels);
    free(im.data);
}

/* Seeded flips of one byte at a time: answered, never a read past the end. */
static void test_flips(const char *name)
{
    struct image im = load(name);
    unsigned seed = 12345;
    size_t i, bad = 0;
    for (i = 0; i < 2000; i++) {
        unsigned char *m = malloc(im.size);
        size_t at;
        int rc;
        memcpy(m, im.data, im.size);
        seed = seed * 1103515245u + 12345u;
        at = (seed >> 8) % im.size;
        m[at] ^= (unsigned char)(1u << (seed >> 4 & 7));
        rc = sim_image_kernels(m, im.size, NULL, NULL, NULL);
        bad += rc != 0 && rc != -1;
        free(m);
    }
    ok(bad == 0, "%s: 2000 one-bit flips each read as 0 or -1", name);
    free(im.data);
}

static void test_corpus(void)
{
    const char *dir = test_path(test_srcdir(), "tests/fuzz/sim_image_corpus");
    size_t failed, files = fuzz_corpus_replay(dir, obs_fuzz_sim_image, &failed);
    if (files == (size_t)-1) {
        ok(0, "corpus directory %s readable", dir);
        return;
    }
    ok(files >= 6 && failed == 0, "fuzz corpus replayed: %zu files, %zu unreadable", files, failed);
}

int main(void)
{
    static const char *const images[] = {"triton_poi_fused_gelu_0.cubin", "kernels.cubin", "kernels.ptx",
                                         "kernels.fatbin", "kernels-compressed.fatbin"};
    plan_lazy();
    test_cubins();
    test_ptx();
    test_fatbins();
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
        test_prefixes(images[i]);
        test_flips(images[i]);
    }
    is_int(SIM_IMAGE_INVALID, sim_image_kind("not an image", 12), "other bytes: not an image");
    is_int(-1, sim_image_kernels("not an image", 12, NULL, NULL, NULL), "and not read");
    test_corpus();
    return 0;
}
