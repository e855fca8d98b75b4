/* obs-report: the options the reports share: -o, --format table|csv|json
 * and the call filters --phase NAME, --step N, --kernel REGEX,
 * --window FROM:TO (trace_query.h). */
#ifndef OBS_REPORT_OPTS_H
#define OBS_REPORT_OPTS_H

#include "report_cli.h"
#include "report_table.h"
#include "trace/trace.h"

/* What a command accepts (report_opts_parse's accept). */
#define ROPT_FILTERS 0x1u /* --phase, --step, --kernel, --window */

struct report_opts {
    const char *output; /* -o, or NULL */
    enum report_format format;
    struct obs_call_filter filter;
    char **args; /* positional arguments */
    int nargs;
};

/* Parse argv (argv[0] = the command name). Returns -1 when the command
 * should go on; otherwise the exit status to return at once (0 after
 * --help, EXIT_USAGE after a usage error: one "obs-report: ..." line and
 * the --help hint on stderr). */
int report_opts_parse(const struct report_command *cmd, unsigned accept, int argc, char **argv,
                      struct report_opts *o);
void report_opts_free(struct report_opts *o);

/* Help text for the shared options, for report_command.description. */
#define REPORT_FORMAT_HELP                                                                                    \
    "  --format FMT       table (default: text tables), csv (one section per report:\n"                      \
    "                     a '# report' line, a header, rows; blank lines between)\n"                         \
    "                     or json (one object with an array per report)\n"
#define REPORT_FILTER_HELP                                                                                    \
    "  --phase NAME       only calls in phase NAME (or a range of that full name),\n"                       \
    "                     directly or in a range inside it\n"                                                 \
    "  --step N           only calls of decode step N\n"                                                      \
    "  --kernel REGEX     only kernel launches whose demangled name matches REGEX\n"                          \
    "                     (POSIX extended; other calls never match)\n"                                        \
    "  --window FROM:TO   only calls that begin FROM..TO after the trace's start;\n"                          \
    "                     times with a unit (ns, us, ms, s), either side may be\n"                            \
    "                     empty: 10ms:250ms, 1.5s:, :300us\n"

#endif
