/* The integrity check of NVIDIA's runtime (export table d4082055..., slot
 * 1): cudart passes its version and a timestamp and compares the 128-bit
 * answer with its own computation; a wrong value fails every runtime call
 * with error 103 (cudaErrorIntegrityCheckFailed). CUDA 13.0's runtime asks
 * three times, with versions 13000, 13001 and 13002: versions ending in 0
 * or 1 get a constant, the others an HMAC over MD2 (RFC 1319: 16-byte
 * blocks, S-box from pi, checksum block) with a fixed 16-byte key the
 * runtime derives from a 64-byte table, over: driver version, runtime
 * version, process id, (uint32_t)pthread_self(), the addresses of the
 * runtime-interface table, of the integrity table and of the check
 * function, the timestamp, then for each device its UUID and PCI domain,
 * bus and device ids. Facts from the public ZLUDA project
 * (zluda_dark_api); this is an independent C implementation, checked by
 * NVIDIA's runtime itself: tests/t_real_cudart runs it, and with
 * OBS_SIM_INTEGRITY=wrong (one bit flipped) sees it refused. */
#include "cudrv_sim.h"

#include <string.h>

/* MD2's substitution table, digits of pi (RFC 1319). */
static const uint8_t md2_s[256] = {
    41,  46,  67,  201, 162, 216, 124, 1,   61,  54,  84,  161, 236, 240, 6,   19,  98,  167, 5,   243,
    192, 199, 115, 140, 152, 147, 43,  217, 188, 76,  130, 202, 30,  155, 87,  60,  253, 212, 224, 22,
    103, 66,  111, 24,  138, 23,  229, 18,  190, 78,  196, 214, 218, 158, 222, 73,  160, 251, 245, 142,
    187, 47,  238, 122, 169, 104, 121, 145, 21,  178, 7,   63,  148, 194, 16,  137, 11,  34,  95,  33,
    128, 127, 93,  154, 90,  144, 50,  39,  53,  62,  204, 231, 191, 247, 151, 3,   255, 25,  48,  179,
    72,  165, 181, 209, 215, 94,  146, 42,  172, 86,  170, 198, 79,  184, 56,  210, 150, 164, 125, 182,
    118, 252, 107, 226, 156, 116, 4,   241, 69,  157, 112, 89,  100, 113, 135, 32,  134, 91,  207, 101,
    230, 45,  168, 2,   27,  96,  37,  173, 174, 176, 185, 246, 28,  70,  97,  105, 52,  64,  126, 15,
    85,  71,  163, 35,  221, 81,  175, 58,  195, 92,  249, 206, 186, 197, 234, 38,  44,  83,  13,  110,
    133, 40,  132, 9,   211, 223, 205, 244, 65,  129, 77,  82,  106, 220, 55,  200, 108, 193, 171, 250,
    36,  225, 123, 8,   12,  189, 177, 74,  120, 136, 149, 139, 227, 99,  232, 109, 233, 203, 213, 254,
    59,  0,   29,  57,  242, 239, 183, 14,  102, 88,  208, 228, 166, 119, 114, 248, 235, 117, 75,  10,
    49,  68,  80,  180, 143, 237, 31,  26,  219, 153, 141, 51,  159, 17,  131, 20,
};

struct md2 {
    uint8_t x[48];    /* state, block, state ^ block */
    uint8_t sum[16];  /* running checksum */
    uint8_t last;     /* last checksum byte (L) */
    unsigned fill;    /* bytes in the current block */
};

static void md2_init(struct md2 *h)
{
    memset(h, 0, sizeof *h);
}

static void md2_byte(struct md2 *h, uint8_t b)
{
    unsigned i = h->fill, j, k;
    uint8_t t;

    h->x[16 + i] = b;
    h->x[32 + i] = (uint8_t)(h->x[i] ^ b);
    h->sum[i] ^= md2_s[b ^ h->last];
    h->last = h->sum[i];
    h->fill = (i + 1) & 15;
    if (h->fill != 0)
        return;
    for (t = 0, j = 0; j < 18; j++) {
        for (k = 0; k < 48; k++)
            t = h->x[k] ^= md2_s[t];
        t = (uint8_t)(t + j);
    }
}

static void md2_bytes(struct md2 *h, const void *data, size_t len)
{
    const uint8_t *p = data;
    while (len--)
        md2_byte(h, *p++);
}

static void md2_final(struct md2 *h, uint8_t out[16])
{
    uint8_t pad = (uint8_t)(16 - h->fill), sum[16];
    unsigned i;
    for (i = 0; i < pad; i++)
        md2_byte(h, pad);
    memcpy(sum, h->sum, sizeof sum);
    md2_bytes(h, sum, sizeof sum);
    memcpy(out, h->x, 16);
}

/* The runtime's key: a walk over a 64-byte table that fills 16 bytes in
 * the order the table's own bytes dictate, until it returns to slot 13. */
static void integrity_key(uint8_t key[16])
{
    static const uint8_t table[64] = {
        0x6b, 0xcf, 0x32, 0x0f, 0xa4, 0x49, 0xd3, 0xa8, 0x33, 0xf8, 0xd0, 0x8e, 0x12, 0x4e, 0xa8, 0x00,
        0xeb, 0x94, 0x2c, 0x8f, 0x34, 0x49, 0xde, 0xf6, 0xbf, 0x29, 0x91, 0x20, 0xc7, 0x65, 0xf6, 0xba,
        0x78, 0x5c, 0x66, 0x27, 0xa7, 0xb2, 0x73, 0x92, 0xdb, 0x22, 0x1e, 0x20, 0x14, 0x6f, 0x87, 0xff,
        0xa5, 0xc3, 0x18, 0x01, 0x66, 0x64, 0xa5, 0x0e, 0x70, 0x51, 0x52, 0xa7, 0x80, 0x4b, 0xdf, 0xef,
    };
    unsigned slot = 13;
    uint8_t carry = 0x8b;
    memset(key, 0, 16);
    do {
        uint8_t value = table[slot + 16] ^ table[slot + 32] ^ table[slot + 48];
        uint8_t where = carry ^ table[slot] ^ table[slot + 16];
        carry = (uint8_t)~(value ^ carry);
        key[where >> 4] = value;
        slot = where & 15;
    } while (slot != 13);
}

void drv_integrity_hash(const struct drv_integrity_input *in, uint8_t out[16])
{
    static const uint8_t fixed[16] = {0x5c, 0x67, 0xcb, 0x03, 0x1c, 0x18, 0x41, 0x33,
                                      0xe8, 0xd1, 0x4c, 0x1f, 0xaa, 0x83, 0xd3, 0x8e};
    uint8_t key[16], inner[16], block[16];
    struct md2 h;
    unsigned i, d;

    if (in->runtime_version % 10 < 2) {
        memcpy(out, fixed, 16);
        if (in->runtime_version % 10 == 1)
            out[7] = 24;
        return;
    }
    integrity_key(key);
    md2_init(&h);
    for (i = 0; i < 16; i++)
        block[i] = key[i] ^ 0x36;
    md2_bytes(&h, block, 16);
    {
        /* 48 bytes, native layout (little-endian x86-64) */
        struct {
            uint32_t driver_version, runtime_version, process_id, thread_id;
            uint64_t cudart_table, integrity_table, check_function, timestamp;
        } head = {in->driver_version,          in->runtime_version,        in->process_id,
                  in->thread_id,               in->cudart_table, in->integrity_table,
                  in->check_function,          in->timestamp};
        md2_bytes(&h, &head, sizeof head);
    }
    for (d = 0; d < in->device_count; d++) {
        uint32_t pci[3] = {in->devices[d].pci_domain, in->devices[d].pci_bus, in->devices[d].pci_device};
        md2_bytes(&h, in->devices[d].uuid, 16);
        md2_bytes(&h, pci, sizeof pci);
    }
    md2_final(&h, inner);
    md2_init(&h);
    for (i = 0; i < 16; i++)
        block[i] = key[i] ^ 0x5c;
    md2_bytes(&h, block, 16);
    md2_bytes(&h, inner, 16);
    md2_final(&h, out);
}
