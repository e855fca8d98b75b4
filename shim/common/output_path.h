/* Output file names: OBS_OUTPUT is a prefix pattern (default obs-%p) and the
 * shim writes <prefix>.obs and <prefix>.pftrace (or .json: OBS_TRACE).
 * Escapes, as in nsys:
 *   %p  process id          %h  host name
 *   %q{VAR}  value of VAR   %n  a number making the name unique (1, 2, ...)
 *   %%  a literal %
 * %h and %q{} are substituted once at start-up (obs_output_pattern_prepare);
 * %p and %n when the file is created, so a forked child gets its own name. */
#ifndef OBS_OUTPUT_PATH_H
#define OBS_OUTPUT_PATH_H

#include <stddef.h>

#define OBS_OUTPUT_MAX 4096 /* a pattern or an expanded prefix, NUL included */
#define OBS_TRACE_SUFFIX ".obs"
#define OBS_JSON_SUFFIX ".json"
#define OBS_PFTRACE_SUFFIX ".pftrace"

/* 0 when pattern is usable; else -1 with a reason in why. */
int obs_output_pattern_check(const char *pattern, char *why, size_t whylen);

/* Substitute %h (host) and %q{VAR} (lookup, empty when unset) in a checked
 * pattern; % in substituted text is doubled so that it stays literal.
 * Returns 0, or -1 when the result does not fit. */
int obs_output_pattern_prepare(const char *pattern, const char *host, const char *(*lookup)(const char *name),
                               char *out, size_t outlen);

/* Expand %p, %n and %% of a prepared pattern. Returns 0, or -1 when the
 * result does not fit. */
int obs_output_expand(const char *prepared, unsigned long pid, unsigned long n, char *out,
                      size_t outlen);

/* Create <prefix>.obs for a new trace, never opening an existing file
 * (O_CREAT | O_EXCL | O_NOFOLLOW, mode 0644 less the umask), with a prefix
 * whose <prefix><companion> (the timeline written at exit, e.g. ".pftrace";
 * NULL for none) does not exist either: a link planted at either name
 * moves the whole output to a free prefix. With %n the first free number is
 * used; without it, when a name is taken, "-1", "-2" ... is appended to the
 * prefix (*renamed = 1) and taken (NULL or takenlen 0: not wanted) gets the
 * first name found taken. On success returns the descriptor and leaves the
 * prefix used in prefix; on failure returns -errno and leaves the path
 * tried in prefix. */
int obs_output_create(const char *prepared, unsigned long pid, const char *companion, char *prefix,
                      size_t prefixlen, int *renamed, char *taken, size_t takenlen);

#endif
