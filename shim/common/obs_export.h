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

/* The process-wide flags and maps every recorded launch reads (the state,
 * the engine's switch, the debug levels, the name and stream maps): in one
 * section, sorted together at link time (--sort-section=name, Makefile.am),
 * so that a launch inside a framework, whose work in between evicts the
 * shim's lines, refills one or two lines for them rather than one each. */
#define OBS_HOT_DATA __attribute__((section(".data.obs_hot")))

#define obs_likely(x) __builtin_expect(!!(x), 1)
#define obs_unlikely(x) __builtin_expect(!!(x), 0)

#endif
