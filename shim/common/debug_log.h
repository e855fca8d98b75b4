/* The debug log (OBS_DEBUG, OBS_DEBUG_FILE; docs/shim.md, "Debug log"):
 * lines "obsshim[<domain>]: <text>" on stderr, or in the file
 * OBS_DEBUG_FILE names, each written whole with one write(2), from any
 * thread.
 *
 * Cost when off: OBS_DEBUG_LOG is one load of a byte set once at start-up,
 * a compare and a branch the compiler lays out as not taken; its arguments
 * are not evaluated, nothing is formatted. When on: the line is formatted
 * with vsnprintf into a stack buffer (integers and strings: no allocation)
 * and written with one write(2) between the SIGPIPE/SIGXFSZ guard's two
 * signal-mask calls (log.h); the first line opens the file. Never call it
 * from a signal handler. */
#ifndef OBS_DEBUG_LOG_H
#define OBS_DEBUG_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "debug_spec.h"
#include "log.h" /* OBS_PRINTF */
#include "obs_export.h"

/* The level of each domain (0 = off), set once at start-up. Atomic so that
 * a thread that calls in before start-up has finished reads 0 or the value,
 * never a torn one (a relaxed byte load: a plain load). */
extern _Atomic uint8_t obs_debug_levels[OBS_DEBUG_DOMAINS];

static inline bool obs_debug_on(enum obs_debug_domain domain, unsigned level)
{
    return obs_unlikely(atomic_load_explicit(&obs_debug_levels[domain], memory_order_relaxed) >= level);
}

/* OBS_DEBUG_LOG(PHASES, 2, "gen=%u ...", gen): a line in domain phases
 * when its level is 2 or more. */
#define OBS_DEBUG_LOG(domain, level, ...)                  \
    do {                                                   \
        if (obs_debug_on(OBS_DBG_##domain, (level)))       \
            obs_debug_write(OBS_DBG_##domain, __VA_ARGS__); \
    } while (0)

/* One line "obsshim[<domain>]: <text>\n" (cut at 1 KiB); errno kept. */
void obs_debug_write(enum obs_debug_domain domain, const char *fmt, ...) OBS_PRINTF(2, 3);

/* At start-up, from the settings: the levels, and the file's prepared
 * name pattern ("" = stderr; %h and %q{} already substituted: output_path.h;
 * %p and %n are expanded when the first line creates it). */
void obs_debug_setup(const uint8_t levels[OBS_DEBUG_DOMAINS], const char *file_pattern);

/* Fork child: a file whose name has %p (or %n) is the parent's; the child
 * creates its own at its first line. Otherwise it goes on appending to the
 * same file (lines stay whole: O_APPEND, one write each). */
void obs_debug_fork_child(void);

#endif
