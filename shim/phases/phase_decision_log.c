/* The decision log (OBS_DEBUG=phases:N, docs/phases.md "Reading a decision
 * log"): level 2's line per decision, "tid=T call=N <decision> gen=G
 * [step=K] because=<signal> k=v ...". call is the thread's N-th recorded
 * call (its N-th row in obs-report csv). Logged where the state changes
 * (LOG_DECISION in phase_state.h), so a launch that changes nothing pays
 * no test of the level. */
#include "phase_state.h"

#include <stdarg.h>
#include <stdio.h>

__attribute__((cold, format(printf, 4, 5))) void log_decision(const struct logic *l, const char *what,
                                                             const char *because, const char *fmt, ...)
{
    char extra[512], step[24] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(extra, sizeof extra, fmt, ap);
    va_end(ap);
    if (l->top == OBS_PHASE_DECODE && l->step != OBS_NO_STEP)
        snprintf(step, sizeof step, " step=%u", l->step);
    obs_debug_write(OBS_DBG_PHASES, "tid=%u call=%u %s gen=%u%s because=%s%s", obs_thread_id(), obs_tls.call_counter,
                    what, l->gen, step, because, extra);
}

__attribute__((noinline, cold)) void log_launch_decision(const struct logic *l, const char *what,
                                                                const char *because, uint32_t name)
{
    log_decision(l, what, because, " name=%u", name);
}
