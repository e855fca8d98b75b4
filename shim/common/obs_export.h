/* Symbol visibility and branch hints for libobsshim.so.
 * The library is built with -fvisibility=hidden: only the interposed entry
 * points, marked OBS_EXPORT, are visible to the dynamic linker. */
#ifndef OBS_EXPORT_H
#define OBS_EXPORT_H

#define OBS_EXPORT __attribute__((visibility("default")))
#define OBS_HIDDEN __attribute__((visibility("hidden")))

/* Code a sanitizer's runtime reaches before it has set itself up: its
 * start-up looks functions up with dlsym, which is ours (make
 * check-sanitize preloads ASan's runtime before the shim). Not instrumented:
 * an instrumented access needs the runtime's shadow memory. */
#define OBS_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

#define obs_likely(x) __builtin_expect(!!(x), 1)
#define obs_unlikely(x) __builtin_expect(!!(x), 0)

#endif
