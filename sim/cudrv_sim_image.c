/* The kernels a module image defines, read as the real driver reads them
 * (cudrv_sim_image.h). Code is never run nor compiled: only the names and
 * the resource attributes programs ask for (Triton reads NUM_REGS and
 * LOCAL_SIZE_BYTES of each kernel it loads, and sizes its launches by them).
 *
 * - ELF cubin (EM_CUDA): a kernel is a function symbol that is not local
 *   and is marked an entry (st_other STO_CUDA_ENTRY, 0x10) or has a
 *   ".nv.info.<name>" section. Its registers and frame size come from the
 *   ".nv.info" section's EIATTR_REGCOUNT / EIATTR_FRAME_SIZE rows for its
 *   symbol, its block bound from its own ".nv.info.<name>" (EIATTR_REQNTID,
 *   EIATTR_MAX_THREADS), its static shared memory from ".nv.shared.<name>".
 * - PTX text: each ".entry NAME", with ".reqntid" / ".maxntid" before its
 *   body; registers are not known before a JIT that never happens.
 * - fatbin: its ELF and PTX entries, each read as above; an entry stored
 *   compressed (LZ4 or zstd, as nvcc 12.x/13 stores most) cannot be read
 *   here and is counted apart, so that the module falls back to naming on
 *   demand (cudrv_sim_module.c).
 * Every read is bounded by the size given; a damaged image is -1. */
#include "cudrv_sim_image.h"

#include <string.h>

#define ELF_MAGIC "\177ELF"
#define ELF_HEADER_BYTES 64u
#define ELF_SECTION_BYTES 64u
#define ELF_SYMBOL_BYTES 24u
#define ELF_PROGRAM_BYTES 56u
#define EM_CUDA 190u
#define SHT_SYMTAB 2u
#define SHT_NOBITS 8u
#define STT_FUNC 2u
#define STB_LOCAL 0u
#define STO_CUDA_ENTRY 0x10u

/* .nv.info rows: a format byte, an attribute byte, then a 16-bit value or
 * (format EIFMT_SVAL) a 16-bit size and that many bytes. */
#define EIFMT_SVAL 4u
#define EIATTR_MAX_THREADS 0x05u
#define EIATTR_REQNTID 0x10u
#define EIATTR_FRAME_SIZE 0x11u
#define EIATTR_REGCOUNT 0x2fu

#define FATBIN_MAGIC 0xba55ed50u
#define FATBIN_WRAPPER_MAGIC 0x466243b1u
#define FATBIN_HEADER_BYTES 16u
#define FATBIN_ENTRY_MIN_BYTES 64u
#define FATBIN_KIND_PTX 1u
#define FATBIN_KIND_ELF 2u
#define FATBIN_KIND_ELF_ALT 0x10u
#define FATBIN_COMPRESSED (0x2000u | 0x8000u) /* LZ4, zstd */

/* From sm_80 on, each block's shared window begins with 1 KiB the system
 * reserves (cuDeviceGetAttribute's RESERVED_SHARED_MEMORY_PER_BLOCK): a
 * cubin that places it (a ".nv.shared.reserved.0" section) counts it in
 * every ".nv.shared.<kernel>" section, which SHARED_SIZE_BYTES leaves out
 * (a kernel with 1,200 bytes of its own: a section of 2,224). */
#define SM_RESERVED_SHARED 1024u

/* The H100's register file: 64 Ki 32-bit registers per block at most,
 * allocated per warp in units of 256. */
#define SM_REGISTERS 65536
#define SM_MAX_BLOCK_THREADS 1024
#define SM_MAX_THREAD_REGISTERS 255

static uint16_t rd16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* [off, off + len) lies inside [0, size). */
static int inside(uint64_t off, uint64_t len, size_t size)
{
    return off <= size && len <= size - off;
}

static int is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* PTX: blanks and comments, then ".version". */
static int ptx_starts(const unsigned char *p, size_t size)
{
    size_t i = 0;
    while (i < size && p[i]) {
        if (is_blank(p[i])) {
            i++;
        } else if (i + 1 < size && p[i] == '/' && p[i + 1] == '/') {
            while (i < size && p[i] && p[i] != '\n')
                i++;
        } else if (i + 1 < size && p[i] == '/' && p[i + 1] == '*') {
            for (i += 2; i + 1 < size && p[i] && !(p[i] == '*' && p[i + 1] == '/'); i++)
                ;
            if (i + 1 >= size || !p[i])
                return 0;
            i += 2;
        } else {
            return size - i >= 8 && memcmp(p + i, ".version", 8) == 0;
        }
    }
    return 0;
}

enum sim_image_kind sim_image_kind(const void *image, size_t size)
{
    const unsigned char *p = image;
    if (p == NULL || size < 4)
        return SIM_IMAGE_INVALID;
    if (memcmp(p, ELF_MAGIC, 4) == 0)
        return SIM_IMAGE_ELF;
    if (rd32(p) == FATBIN_MAGIC)
        return SIM_IMAGE_FATBIN;
    if (rd32(p) == FATBIN_WRAPPER_MAGIC)
        return SIM_IMAGE_WRAPPER;
    return ptx_starts(p, size) ? SIM_IMAGE_PTX : SIM_IMAGE_INVALID;
}

size_t sim_image_extent(const void *image)
{
    const unsigned char *p = image;
    if (p == NULL)
        return 0;
    if (memcmp(p, ELF_MAGIC, 4) == 0) {
        uint64_t end = ELF_HEADER_BYTES, shoff, phend;
        unsigned i, shnum;
        if (p[4] != 2 || p[5] != 1 || rd16(p + 58) != ELF_SECTION_BYTES)
            return 0;
        shoff = rd64(p + 40);
        shnum = rd16(p + 60);
        phend = rd64(p + 32) + (uint64_t)rd16(p + 56) * rd16(p + 54);
        if (shoff + (uint64_t)shnum * ELF_SECTION_BYTES > end)
            end = shoff + (uint64_t)shnum * ELF_SECTION_BYTES;
        if (phend > end)
            end = phend;
        for (i = 0; i < shnum; i++) {
            const unsigned char *s = p + shoff + (uint64_t)i * ELF_SECTION_BYTES;
            uint64_t send = rd64(s + 24) + rd64(s + 32);
            if (rd32(s + 4) != SHT_NOBITS && send > end)
                end = send;
        }
        return end > (uint64_t)(size_t)-1 ? 0 : (size_t)end;
    }
    if (rd32(p) == FATBIN_MAGIC)
        return FATBIN_HEADER_BYTES + (size_t)rd64(p + 8);
    if (ptx_starts(p, (size_t)-1))
        return strlen((const char *)p) + 1;
    return 0;
}

/* ---- ELF ------------------------------------------------------------------------ */

struct elf {
    const unsigned char *p;
    size_t size;
    uint64_t shoff;
    unsigned shnum;
    uint64_t shstr_off, shstr_size;
};

static const unsigned char *elf_section(const struct elf *e, unsigned i)
{
    return e->p + e->shoff + (uint64_t)i * ELF_SECTION_BYTES;
}

/* Section i's name equals prefix + name (name_len bytes). */
static int section_named(const struct elf *e, unsigned i, const char *prefix, const char *name, size_t name_len)
{
    uint64_t off = rd32(elf_section(e, i)), plen = strlen(prefix);
    const unsigned char *s;
    if (off >= e->shstr_size || !inside(e->shstr_off + off, plen + name_len + 1, e->size) ||
        e->shstr_size - off < plen + name_len + 1)
        return 0;
    s = e->p + e->shstr_off + off;
    return memcmp(s, prefix, plen) == 0 && memcmp(s + plen, name, name_len) == 0 && s[plen + name_len] == 0;
}

static int find_section(const struct elf *e, const char *prefix, const char *name, size_t name_len)
{
    unsigned i;
    for (i = 1; i < e->shnum; i++)
        if (section_named(e, i, prefix, name, name_len))
            return (int)i;
    return -1;
}

/* The section's bytes, or NULL when they do not lie inside the image. */
static const unsigned char *section_bytes(const struct elf *e, int i, uint64_t *len)
{
    const unsigned char *s = elf_section(e, (unsigned)i);
    uint64_t off = rd64(s + 24);
    *len = rd64(s + 32);
    return rd32(s + 4) != SHT_NOBITS && inside(off, *len, e->size) ? e->p + off : NULL;
}

/* Walk .nv.info-style rows; fn sees each (attribute, payload, payload size). */
static void info_rows(const unsigned char *rows, uint64_t len,
                      void (*fn)(void *ctx, unsigned attr, const unsigned char *v, unsigned n), void *ctx)
{
    uint64_t i = 0;
    while (i + 4 <= len) {
        unsigned fmt = rows[i], attr = rows[i + 1], n = rd16(rows + i + 2);
        if (fmt == EIFMT_SVAL) {
            if (n > len - i - 4)
                return;
            fn(ctx, attr, rows + i + 4, n);
            i += 4 + (uint64_t)n;
        } else {
            fn(ctx, attr, rows + i + 2, 2);
            i += 4;
        }
    }
}

struct kernel_rows {
    uint32_t symbol;
    struct sim_image_kernel *k;
};

/* The global .nv.info: rows of (symbol, value) per function. */
static void global_row(void *ctx, unsigned attr, const unsigned char *v, unsigned n)
{
    struct kernel_rows *r = ctx;
    if (n < 8 || rd32(v) != r->symbol || rd32(v + 4) > 0x7fffffffu)
        return;
    if (attr == EIATTR_REGCOUNT) /* 255 a thread at most on every NVIDIA GPU: more is a damaged image */
        r->k->num_regs = rd32(v + 4) > SM_MAX_THREAD_REGISTERS ? SM_MAX_THREAD_REGISTERS : (int)rd32(v + 4);
    else if (attr == EIATTR_FRAME_SIZE)
        r->k->local_bytes = (int)rd32(v + 4);
}

/* The kernel's own .nv.info.<name>: its block size bound. */
static void kernel_row(void *ctx, unsigned attr, const unsigned char *v, unsigned n)
{
    struct kernel_rows *r = ctx;
    uint64_t threads;
    if ((attr != EIATTR_REQNTID && attr != EIATTR_MAX_THREADS) || n < 12)
        return;
    threads = (uint64_t)rd32(v) * rd32(v + 4) * rd32(v + 8);
    if (threads > 0 && threads <= SM_MAX_BLOCK_THREADS)
        r->k->max_threads = (int)threads;
}

/* The block size the register file allows: 256-register units per warp. */
static int threads_for_registers(int regs)
{
    int per_warp, warps;
    if (regs <= 0)
        return SM_MAX_BLOCK_THREADS;
    if (regs > SM_MAX_THREAD_REGISTERS)
        regs = SM_MAX_THREAD_REGISTERS;
    per_warp = (regs * 32 + 255) / 256 * 256;
    warps = SM_REGISTERS / per_warp;
    return warps * 32 < SM_MAX_BLOCK_THREADS ? warps * 32 : SM_MAX_BLOCK_THREADS;
}

static int elf_kernels(const unsigned char *p, size_t size, sim_image_kernel_fn fn, void *ctx,
                       struct sim_image_walk *walk)
{
    struct elf e = {p, size, 0, 0, 0, 0};
    const unsigned char *sym, *str, *shstr;
    uint64_t nsym, str_size, j;
    int symtab = -1, info = -1, arch, reserved;
    unsigned i, shstrndx;

    if (size < ELF_HEADER_BYTES || memcmp(p, ELF_MAGIC, 4) != 0 || p[4] != 2 || p[5] != 1 ||
        rd16(p + 18) != EM_CUDA || rd16(p + 58) != ELF_SECTION_BYTES)
        return -1;
    e.shoff = rd64(p + 40);
    e.shnum = rd16(p + 60);
    shstrndx = rd16(p + 62);
    if (!inside(e.shoff, (uint64_t)e.shnum * ELF_SECTION_BYTES, size) || shstrndx >= e.shnum)
        return -1;
    shstr = elf_section(&e, shstrndx);
    e.shstr_off = rd64(shstr + 24);
    e.shstr_size = rd64(shstr + 32);
    if (!inside(e.shstr_off, e.shstr_size, size))
        return -1;
    /* The SM: e_flags bits 8-15 from ELF ABI version 7 (CUDA 11.8) on, bits 0-7 before. */
    arch = p[8] >= 7 ? (int)(rd32(p + 48) >> 8 & 0xff) : (int)(rd32(p + 48) & 0xff);
    for (i = 1; i < e.shnum; i++) {
        if (rd32(elf_section(&e, i) + 4) == SHT_SYMTAB && symtab < 0)
            symtab = (int)i;
        if (section_named(&e, i, ".nv.info", "", 0))
            info = (int)i;
    }
    if (symtab < 0)
        return 0; /* no symbols: no kernels */
    reserved = find_section(&e, ".nv.shared.reserved.0", "", 0) >= 0;
    sym = section_bytes(&e, symtab, &nsym);
    j = rd32(elf_section(&e, (unsigned)symtab) + 40); /* sh_link: its string table */
    if (sym == NULL || j >= e.shnum)
        return -1;
    str = section_bytes(&e, (int)j, &str_size);
    if (str == NULL)
        return -1;
    nsym /= ELF_SYMBOL_BYTES;
    for (j = 1; j < nsym; j++) {
        const unsigned char *s = sym + j * ELF_SYMBOL_BYTES;
        uint32_t name_off = rd32(s);
        unsigned type = s[4] & 0xfu, bind = s[4] >> 4;
        struct sim_image_kernel k;
        struct kernel_rows rows;
        const unsigned char *rows_bytes;
        const char *name;
        const void *nul;
        int own, shared;
        uint64_t len;

        if (type != STT_FUNC || bind == STB_LOCAL || name_off >= str_size)
            continue;
        name = (const char *)str + name_off;
        nul = memchr(name, 0, (size_t)(str_size - name_off));
        if (nul == NULL || nul == name)
            continue;
        memset(&k, 0, sizeof k);
        k.name = name;
        k.name_len = (size_t)((const char *)nul - name);
        own = find_section(&e, ".nv.info.", name, k.name_len);
        if (!(s[5] & STO_CUDA_ENTRY) && own < 0)
            continue; /* a device function, not an entry */
        k.num_regs = k.local_bytes = k.max_threads = -1;
        k.shared_bytes = 0;
        k.binary_version = arch > 0 ? arch : -1;
        rows.symbol = (uint32_t)j;
        rows.k = &k;
        if (info >= 0 && (rows_bytes = section_bytes(&e, info, &len)) != NULL)
            info_rows(rows_bytes, len, global_row, &rows);
        if (own >= 0 && (rows_bytes = section_bytes(&e, own, &len)) != NULL)
            info_rows(rows_bytes, len, kernel_row, &rows);
        shared = find_section(&e, ".nv.shared.", name, k.name_len);
        if (shared >= 0) {
            uint64_t bytes = rd64(elf_section(&e, (unsigned)shared) + 32);
            if (reserved)
                bytes = bytes > SM_RESERVED_SHARED ? bytes - SM_RESERVED_SHARED : 0;
            k.shared_bytes = bytes > 0x7fffffffu ? 0x7fffffff : (int)bytes;
        }
        if (k.max_threads < 0)
            k.max_threads = threads_for_registers(k.num_regs);
        walk->kernels++;
        if (fn) {
            int rc = fn(ctx, &k);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- PTX ------------------------------------------------------------------------ */

static int ident_char(unsigned char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
           (first ? c == '%' : (c >= '0' && c <= '9'));
}

/* Skip blanks and comments from i; returns the next position. */
static size_t ptx_skip(const unsigned char *p, size_t size, size_t i)
{
    while (i < size && p[i]) {
        if (is_blank(p[i]))
            i++;
        else if (i + 1 < size && p[i] == '/' && p[i + 1] == '/')
            while (i < size && p[i] && p[i] != '\n')
                i++;
        else if (i + 1 < size && p[i] == '/' && p[i + 1] == '*') {
            for (i += 2; i + 1 < size && p[i] && !(p[i] == '*' && p[i + 1] == '/'); i++)
                ;
            i = i + 1 < size && p[i] ? i + 2 : size;
        } else
            break;
    }
    return i;
}

/* A directive word at i ("." and letters), compared with want. */
static int ptx_word(const unsigned char *p, size_t size, size_t i, const char *want)
{
    size_t n = strlen(want);
    return size - i >= n && memcmp(p + i, want, n) == 0 && (i + n == size || !ident_char(p[i + n], 0));
}

/* .reqntid / .maxntid x[, y[, z]] at i: their product, or -1. */
static int ptx_threads(const unsigned char *p, size_t size, size_t i)
{
    uint64_t product = 1;
    int dims = 0;
    while (dims < 3) {
        uint64_t v = 0;
        int digits = 0;
        i = ptx_skip(p, size, i);
        while (i < size && p[i] >= '0' && p[i] <= '9' && v <= SM_MAX_BLOCK_THREADS) {
            v = v * 10 + (uint64_t)(p[i++] - '0');
            digits++;
        }
        if (!digits)
            break;
        product *= v;
        dims++;
        i = ptx_skip(p, size, i);
        if (i >= size || p[i] != ',')
            break;
        i++;
    }
    return dims && product > 0 && product <= SM_MAX_BLOCK_THREADS ? (int)product : -1;
}

static int ptx_kernels(const unsigned char *p, size_t size, sim_image_kernel_fn fn, void *ctx,
                       struct sim_image_walk *walk)
{
    size_t i = 0;
    int depth = 0;
    while ((i = ptx_skip(p, size, i)) < size && p[i]) {
        struct sim_image_kernel k;
        size_t start;
        if (p[i] == '"') { /* a string (in .file directives): skip it whole */
            for (i++; i < size && p[i] && p[i] != '"'; i++)
                ;
            i++;
            continue;
        }
        if (p[i] == '{' || p[i] == '}') {
            depth += p[i] == '{' ? 1 : (depth > 0 ? -1 : 0);
            i++;
            continue;
        }
        if (depth > 0 || !ptx_word(p, size, i, ".entry")) {
            i++;
            while (i < size && (ident_char(p[i], 0) || p[i] == '.'))
                i++;
            continue;
        }
        i = ptx_skip(p, size, i + 6);
        start = i;
        if (i >= size || !ident_char(p[i], 1))
            return -1;
        while (i < size && ident_char(p[i], 0))
            i++;
        memset(&k, 0, sizeof k);
        k.name = (const char *)p + start;
        k.name_len = i - start;
        k.num_regs = k.local_bytes = k.binary_version = -1;
        k.max_threads = SM_MAX_BLOCK_THREADS;
        /* parameters, then performance directives, up to the body's "{" or a ";" (a declaration) */
        while ((i = ptx_skip(p, size, i)) < size && p[i] && p[i] != '{' && p[i] != ';') {
            if (ptx_word(p, size, i, ".reqntid") || ptx_word(p, size, i, ".maxntid")) {
                int t = ptx_threads(p, size, i + 8);
                if (t > 0)
                    k.max_threads = t;
                i += 8;
            } else
                i++;
        }
        walk->kernels++;
        if (fn) {
            int rc = fn(ctx, &k);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* ---- fatbin --------------------------------------------------------------------- */

static int fatbin_kernels(const unsigned char *p, size_t size, sim_image_kernel_fn fn, void *ctx,
                          struct sim_image_walk *walk)
{
    uint64_t end, off = FATBIN_HEADER_BYTES;
    if (size < FATBIN_HEADER_BYTES || rd32(p) != FATBIN_MAGIC || rd16(p + 6) != FATBIN_HEADER_BYTES)
        return -1;
    end = FATBIN_HEADER_BYTES + rd64(p + 8);
    if (end > size)
        return -1;
    while (off + FATBIN_ENTRY_MIN_BYTES <= end) {
        const unsigned char *h = p + off;
        unsigned kind = rd16(h);
        uint32_t header = rd32(h + 4);
        /* the payload's size: its stored (compressed) size, 0 when stored whole (then the padded size) */
        uint64_t padded = rd64(h + 8), bytes = rd32(h + 16), flags = rd64(h + 40);
        int rc = 0;
        if (header < FATBIN_ENTRY_MIN_BYTES || !inside(off + header, padded, (size_t)end) || bytes > padded)
            return -1;
        if (bytes == 0)
            bytes = padded;
        if (kind == FATBIN_KIND_PTX || kind == FATBIN_KIND_ELF || kind == FATBIN_KIND_ELF_ALT) {
            walk->entries++;
            if (flags & FATBIN_COMPRESSED)
                walk->unreadable++;
            else if (kind == FATBIN_KIND_PTX)
                rc = ptx_kernels(h + header, (size_t)bytes, fn, ctx, walk);
            else
                rc = elf_kernels(h + header, (size_t)bytes, fn, ctx, walk);
            if (rc)
                return rc;
        }
        off += header + padded;
    }
    return 0;
}

int sim_image_kernels(const void *image, size_t size, sim_image_kernel_fn fn, void *ctx,
                      struct sim_image_walk *walk)
{
    struct sim_image_walk none;
    if (walk == NULL)
        walk = &none;
    memset(walk, 0, sizeof *walk);
    switch (sim_image_kind(image, size)) {
    case SIM_IMAGE_ELF:
        return elf_kernels(image, size, fn, ctx, walk);
    case SIM_IMAGE_PTX:
        return ptx_kernels(image, size, fn, ctx, walk);
    case SIM_IMAGE_FATBIN:
        return fatbin_kernels(image, size, fn, ctx, walk);
    default:
        return -1;
    }
}
