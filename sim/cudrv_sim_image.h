/* What the simulated driver reads in a module image: the kernels an ELF
 * cubin or PTX text defines, with the attributes the real driver reports
 * for them (cudrv_sim_image.c). Pure: no driver state, no allocation; the
 * module code (cudrv_sim_module.c) keeps what it is handed. */
#ifndef OBS_CUDRV_SIM_IMAGE_H
#define OBS_CUDRV_SIM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

enum sim_image_kind {
    SIM_IMAGE_INVALID = 0,
    SIM_IMAGE_ELF,     /* an ELF cubin (EM_CUDA) */
    SIM_IMAGE_PTX,     /* PTX text: blanks and comments, then ".version" */
    SIM_IMAGE_FATBIN,  /* a fatbin (0xba55ed50): ELF and PTX entries */
    SIM_IMAGE_WRAPPER, /* the fatbin wrapper cudart registers (0x466243b1) */
};

/* One kernel (an entry function) of an image. The name is not
 * NUL-terminated: it points into the image. Values are -1 where the image
 * does not say (the module keeps its defaults). */
struct sim_image_kernel {
    const char *name;
    size_t name_len;
    int num_regs;       /* CU_FUNC_ATTRIBUTE_NUM_REGS: EIATTR_REGCOUNT */
    int shared_bytes;   /* SHARED_SIZE_BYTES: the .nv.shared.<name> section */
    int local_bytes;    /* LOCAL_SIZE_BYTES: EIATTR_FRAME_SIZE */
    int max_threads;    /* MAX_THREADS_PER_BLOCK: .reqntid / .maxntid, else from registers */
    int binary_version; /* BINARY_VERSION: the cubin's SM (90), PTX: -1 */
};

/* Called once per kernel; a non-zero return stops the walk and is returned. */
typedef int (*sim_image_kernel_fn)(void *ctx, const struct sim_image_kernel *k);

struct sim_image_walk {
    int kernels;    /* kernels reported */
    int unreadable; /* fatbin entries that could not be read (compressed) */
    int entries;    /* fatbin entries seen (ELF and PTX) */
};

/* The kind of an image from its first bytes (size: how many may be read). */
enum sim_image_kind sim_image_kind(const void *image, size_t size);

/* How many bytes an image given by its address alone spans (what
 * cuModuleLoadData gets): an ELF's extent from its headers, a fatbin's from
 * its header, PTX up to its NUL. 0: not an image of ours to size. Reads
 * only what the headers name, as the real driver does. */
size_t sim_image_extent(const void *image);

/* Walk the kernels of an image of `size` bytes (ELF, PTX or fatbin; a
 * wrapper's data is reached by the caller). Returns 0, the callback's
 * non-zero value, or -1 for a damaged image (nothing past `size` is ever
 * read, whatever the image holds). */
int sim_image_kernels(const void *image, size_t size, sim_image_kernel_fn fn, void *ctx,
                      struct sim_image_walk *walk);

#endif
