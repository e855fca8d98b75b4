/* Symbol visibility and branch hints for libobsshim.so.
 * The library is built with -fvisibility=hidden: only the interposed entry
 * points, marked OBS_EXPORT, are visible to the dynamic linker. */
#ifndef OBS_EXPORT_H
#define OBS_EXPORT_H

#define OBS_EXPORT __attribute__((visibility("default")))
#define OBS_HIDDEN __attribute__((visibility("hidden")))

#define obs_likely(x) __builtin_expect(!!(x), 1)
#define obs_unlikely(x) __builtin_expect(!!(x), 0)

#endif
