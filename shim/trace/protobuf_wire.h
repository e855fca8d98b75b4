/* Protocol buffers wire encoding, the little the Perfetto writer needs:
 * varints, tags, fixed64 and length-delimited fields, written at p (the
 * caller reserved room; pb_*_max give the most a field can take). */
#ifndef OBS_PROTOBUF_WIRE_H
#define OBS_PROTOBUF_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

#define PB_VARINT_MAX 10u /* bytes of the longest varint */

static inline uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline size_t pb_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline uint8_t *pb_tag(uint8_t *p, unsigned field, unsigned wire)
{
    return pb_varint(p, (uint64_t)field << 3 | wire);
}

static inline uint8_t *pb_uint(uint8_t *p, unsigned field, uint64_t v)
{
    return pb_varint(pb_tag(p, field, PB_VARINT), v);
}

static inline uint8_t *pb_fixed64(uint8_t *p, unsigned field, uint64_t v)
{
    int i;
    p = pb_tag(p, field, PB_FIXED64);
    for (i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

/* A string, bytes or an already encoded message of n bytes. */
static inline uint8_t *pb_bytes(uint8_t *p, unsigned field, const void *data, size_t n)
{
    p = pb_varint(pb_tag(p, field, PB_LEN), n);
    memcpy(p, data, n);
    return p + n;
}

static inline uint8_t *pb_string(uint8_t *p, unsigned field, const char *s)
{
    return pb_bytes(p, field, s, strlen(s));
}

#endif
