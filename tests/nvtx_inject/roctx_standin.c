/* A roctx stand-in (soname libroctx64.so.4, as roctracer's): the HIP
 * workload and the shim both find it with dlopen through LD_LIBRARY_PATH.
 * One range stack per thread, as roctx has; each call is a range line in the
 * ground-truth log (range_log.h). roctx has no domains, so the domain column
 * says who called: "obsshim" when the caller's code lies in a library whose
 * file name starts with libobsshim, "-" otherwise. */
#include "range_log.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define ROCTX_EXPORT __attribute__((visibility("default")))

static __thread long long roctx_depth;
static atomic_ullong roctx_next_id = 1;

/* noinline: our return address must be the caller's, not our caller's caller. */
__attribute__((noinline)) static const char *caller_domain(const void *return_address)
{
    Dl_info info;
    if (dladdr(return_address, &info) == 0 || info.dli_fname == NULL)
        return "-";
    const char *base = strrchr(info.dli_fname, '/');
    base = base != NULL ? base + 1 : info.dli_fname;
    return strncmp(base, "libobsshim", 10) == 0 ? "obsshim" : "-";
}

ROCTX_EXPORT int roctxRangePushA(const char *message);
ROCTX_EXPORT int roctxRangePop(void);
ROCTX_EXPORT void roctxMarkA(const char *message);
ROCTX_EXPORT uint64_t roctxRangeStartA(const char *message);
ROCTX_EXPORT void roctxRangeStop(uint64_t id);

/* Returns the level the range starts at (0-based), as roctx does. */
ROCTX_EXPORT int roctxRangePushA(const char *message)
{
    const char *domain = caller_domain(__builtin_return_address(0));
    long long level = roctx_depth++;
    range_log_line("roctxRangePushA", message, domain, "-", roctx_depth);
    return (int)level;
}

/* Returns the level of the range stopped, negative when none was open
 * (logged as depth -1). */
ROCTX_EXPORT int roctxRangePop(void)
{
    const char *domain = caller_domain(__builtin_return_address(0));
    if (roctx_depth == 0) {
        range_log_line("roctxRangePop", "-", domain, "-", -1);
        return -1;
    }
    roctx_depth--;
    range_log_line("roctxRangePop", "-", domain, "-", roctx_depth);
    return (int)roctx_depth;
}

ROCTX_EXPORT void roctxMarkA(const char *message)
{
    range_log_line("roctxMarkA", message, caller_domain(__builtin_return_address(0)), "-",
                   roctx_depth);
}

/* Start/stop ranges are not nested: the value column is the range id. */
ROCTX_EXPORT uint64_t roctxRangeStartA(const char *message)
{
    uint64_t id = atomic_fetch_add(&roctx_next_id, 1);
    range_log_line("roctxRangeStartA", message, caller_domain(__builtin_return_address(0)), "-",
                   (long long)id);
    return id;
}

ROCTX_EXPORT void roctxRangeStop(uint64_t id)
{
    range_log_line("roctxRangeStop", "-", caller_domain(__builtin_return_address(0)), "-",
                   (long long)id);
}

/* rocprofiler-sdk's roctx (librocprofiler-sdk-roctx.so) also has these,
 * which rocprofv3 --selected-regions follows; here so that a test sees
 * where OBS_CAPTURE's start and stop land among the calls. The value
 * column is the thread argument (0: the whole process). */
ROCTX_EXPORT int roctxProfilerResume(uint64_t tid);
ROCTX_EXPORT int roctxProfilerPause(uint64_t tid);

ROCTX_EXPORT int roctxProfilerResume(uint64_t tid)
{
    range_log_line("roctxProfilerResume", "-", caller_domain(__builtin_return_address(0)), "-", (long long)tid);
    return 0;
}

ROCTX_EXPORT int roctxProfilerPause(uint64_t tid)
{
    range_log_line("roctxProfilerPause", "-", caller_domain(__builtin_return_address(0)), "-", (long long)tid);
    return 0;
}
