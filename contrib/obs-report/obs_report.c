/* obs-report: read obsshim traces (.obs) and report on them.
 *   obs-report COMMAND [OPTIONS] ARGS...
 * Each command is a struct report_command (report_cli.h); adding one is a
 * new file and a line in report_commands[]. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "report_cli.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

extern const struct report_command report_cmd_summary, report_cmd_csv, report_cmd_json, report_cmd_perfetto,
    report_cmd_phases, report_cmd_suggest_phases, report_cmd_serving;
extern const struct report_command report_cmd_merge, report_cmd_ranks;
extern const struct report_command report_cmd_sqlite;
extern const struct report_command report_cmd_gaps, report_cmd_top, report_cmd_compare;
extern const struct report_command report_cmd_html;

const struct report_command *const report_commands[] = {
    &report_cmd_summary,
    &report_cmd_csv,
    &report_cmd_json,
    &report_cmd_perfetto,
    &report_cmd_phases,
    &report_cmd_suggest_phases,
    &report_cmd_serving,
    &report_cmd_merge,
    &report_cmd_ranks,
    &report_cmd_sqlite,
    &report_cmd_gaps,
    &report_cmd_top,
    &report_cmd_compare,
    &report_cmd_html,
    NULL,
};

static void print_help(FILE *out)
{
    size_t i;
    fprintf(out, "Usage: obs-report COMMAND [OPTIONS] FILE.obs\n"
                 "Read a trace written by obsshim (libobsshim.so) and report on it.\n\nCommands:\n");
    for (i = 0; report_commands[i]; i++)
        fprintf(out, "  %-14s %s\n", report_commands[i]->name, report_commands[i]->summary);
    fprintf(out, "\nOptions:\n"
                 "  -h, --help     show this help; 'obs-report COMMAND --help' for a command\n"
                 "  -V, --version  show the version\n"
                 "\nExit status: 0 success, 1 the trace could not be read or the output not written,\n"
                 "2 usage error.\n");
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *name;
    int c, i;

    opterr = 0;
    /* "+": stop at the command name; its options are its own. */
    while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            print_help(stdout);
            return fflush(stdout) == 0 ? 0 : EXIT_TRACE_ERROR;
        case 'V':
            printf("obs-report (obsshim) %s\n", PACKAGE_VERSION);
            return fflush(stdout) == 0 ? 0 : EXIT_TRACE_ERROR;
        default:
            return cli_usage_error(NULL, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error(NULL, "missing command");
    name = argv[optind];
    for (i = 0; report_commands[i]; i++)
        if (strcmp(report_commands[i]->name, name) == 0)
            return report_commands[i]->run(report_commands[i], argc - optind, argv + optind);
    return cli_usage_error(NULL, "unknown command '%s'", name);
}
