/* FNV-1a over a NUL-terminated name: the range table's buckets
 * (phases/ranges.c) and a kernel base name's family (name_family,
 * phases/phase_signals.c). Never 0 is not promised: callers that keep 0
 * for "none" map it themselves. */
#ifndef OBS_NAME_HASH_H
#define OBS_NAME_HASH_H

#include <stdint.h>

static inline uint32_t obs_name_hash(const char *name)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

#endif
