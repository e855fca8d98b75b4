/* `obs-report suggest-phases`: the OBS_PHASES and OBS_STEP values that
 * reproduce the phase labelling a trace holds (docs/phases-report.md).
 *
 * Each kernel base name (the demangled name without return type, template
 * arguments and parameters: "void ns::gemm<float>(float*)" -> "ns::gemm")
 * and each copy direction ("memcpy:DtoH") goes to the phase that labels
 * most of its calls. A phase's items become globs: for each item, the
 * shortest prefix ending at a '_' (then '::') that matches no item of
 * another phase, followed by '*'; the exact name where no prefix is safe.
 * The step rule is the item that opens most decode steps (the first call
 * of each (generation, step)), as the shortest prefix that matches no
 * other item of the trace. When PREFILL and DECODE share kernel names, an
 * iteration selector (`iter:after:memcpy:HtoD`, else
 * `iter:NAME[threads>=T]`) leads the PREFILL rule where one separates the
 * trace's PREFILL iterations from the others (docs/phases-report.md); the
 * name rules then come from the calls of the other iterations. */
#ifndef OBS_TRACE_SUGGEST_H
#define OBS_TRACE_SUGGEST_H

#include <stdio.h>

#include "trace_reader.h"


/* Print, as shell lines:
 *   # comment lines (what was found, items left out and why)
 *   export OBS_PHASES='PHASE=glob,glob;PHASE=glob'
 *   export OBS_STEP='glob'            (when the trace has decode steps)
 * Returns 0; 1 when the trace has no phases (a line says so on out);
 * -1 with errno set when out of memory or writing failed. */
int obs_report_suggest_phases(const struct obs_trace *t, FILE *out);

#endif
