/* obs-report: the command table and what every command shares (option
 * parsing, opening a trace with the standard error line, output files).
 * A command is a struct report_command whose run() gets its own argv
 * (argv[0] = its name): it may use cli_parse() for the common options, or
 * parse options of its own (sqlite OUT, compare A B, top N, --format ...). */
#ifndef OBS_REPORT_CLI_H
#define OBS_REPORT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

#define EXIT_TRACE_ERROR 1 /* the trace could not be read, or the output written */
#define EXIT_USAGE 2

/* Options a command accepts besides --help (bits for report_command.options). */
#define CLI_OPT_OUTPUT 0x1u   /* -o/--output FILE */
#define CLI_OPT_PROGRESS 0x2u /* -q/--quiet: a conversion with a progress line */

struct report_command {
    const char *name;
    const char *summary;     /* one line for `obs-report --help` */
    const char *synopsis;    /* "summary FILE.obs" */
    const char *description; /* the rest of `obs-report NAME --help` */
    unsigned options;        /* CLI_OPT_* */
    int min_args, max_args;  /* positional arguments */
    int (*run)(const struct report_command *cmd, int argc, char **argv);
};

/* -q/--quiet (cli_parse): no progress line. */
extern int cli_quiet;

/* The progress line of a long conversion (cli_progress.c): on stderr when
 * it is a terminal and not --quiet, one line rewritten in place ("perfetto:
 * big.obs: 42% of 10.0 M calls, 2.1 M calls/s, ETA 3 s"), at most a few
 * times a second, fed by the writers (trace_progress.h); cli_progress_end
 * erases it. Nothing at all otherwise. */
void cli_progress_begin(const char *command, const char *trace_path);
/* Once the trace is read: its calls, the unit the line counts in. */
void cli_progress_calls(uint64_t calls);
void cli_progress_end(void);

/* Parsed command line of one command. */
struct cli_args {
    const char *output; /* -o, or NULL */
    char **args;        /* positional arguments */
    int nargs;
};

/* The commands, in the order `obs-report --help` lists them (NULL-terminated). */
extern const struct report_command *const report_commands[];

/* Parse argv (argv[0] = the command name). Returns -1 when the command
 * should go on; otherwise the exit status to return at once (0 after
 * --help, EXIT_USAGE after a usage error, already reported). */
int cli_parse(const struct report_command *cmd, int argc, char **argv, struct cli_args *a);

/* Take a flag of the command's own (flag, or alias when not NULL) out of
 * argv before cli_parse, which knows only the common options; arguments
 * after "--" are operands and left alone. Returns whether it was there. */
int cli_take_flag(int *argc, char **argv, const char *flag, const char *alias);

/* Print "obs-report: fmt..." and the --help hint to stderr; returns EXIT_USAGE. */
int cli_usage_error(const struct report_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void cli_print_command_help(const struct report_command *cmd, FILE *out);

/* Open a trace; on failure print "obs-report: FILE: reason" and return NULL.
 * Prints a warning line when part of the file had to be ignored. */
struct obs_trace *cli_open_trace(const char *path);

/* Output to path ("-" or NULL: stdout). A regular file (or a new one) is
 * written under a temporary name and renamed into place by cli_close_output
 * when all went well, so a failed run leaves no half file; anything else
 * (/dev/null, a FIFO, a symlink) is written to directly. */
struct cli_output {
    FILE *f;
    const char *path;
    char *tmp;
};
int cli_open_output(struct cli_output *o, const char *path);
/* ok: whether writing succeeded so far. Returns 0 or EXIT_TRACE_ERROR (reported). */
int cli_close_output(struct cli_output *o, int ok);
/* Give up on the output after an error already reported: no file is left
 * (the temporary is removed) and nothing more is printed. */
void cli_discard_output(struct cli_output *o);

#endif
