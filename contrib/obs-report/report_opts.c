/* obs-report: shared report options (see report_opts.h). */
#include "report_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_FORMAT = 256, OPT_PHASE, OPT_STEP, OPT_KERNEL, OPT_WINDOW };

static int parse_step(const char *text, uint32_t *step)
{
    char *end;
    unsigned long v;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v >= UINT32_MAX)
        return -1;
    *step = (uint32_t)v;
    return 0;
}

int report_opts_parse(const struct report_command *cmd, unsigned accept, int argc, char **argv,
                      struct report_opts *o)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},         {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, OPT_FORMAT}, {"phase", required_argument, NULL, OPT_PHASE},
        {"step", required_argument, NULL, OPT_STEP},     {"kernel", required_argument, NULL, OPT_KERNEL},
        {"window", required_argument, NULL, OPT_WINDOW}, {NULL, 0, NULL, 0},
    };
    char err[512];
    int c, fmt;

    memset(o, 0, sizeof *o);
    o->format = REPORT_TABLE;
    opterr = 0;
    optind = 0; /* full reset: main already ran getopt */
    while ((c = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        if (c >= OPT_PHASE && c <= OPT_WINDOW && !(accept & ROPT_FILTERS)) {
            report_opts_free(o);
            return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
        }
        switch (c) {
        case 'h':
            report_opts_free(o);
            cli_print_command_help(cmd, stdout);
            return fflush(stdout) == 0 ? 0 : EXIT_TRACE_ERROR;
        case 'o':
            o->output = optarg;
            break;
        case OPT_FORMAT:
            fmt = report_format_parse(optarg);
            if (fmt < 0) {
                report_opts_free(o);
                return cli_usage_error(cmd, "%s: bad --format '%s' (table, csv or json)", cmd->name, optarg);
            }
            o->format = (enum report_format)fmt;
            break;
        case OPT_PHASE:
            if (optarg[0] == '\0') {
                report_opts_free(o);
                return cli_usage_error(cmd, "%s: --phase needs a phase name", cmd->name);
            }
            o->filter.phase = optarg;
            break;
        case OPT_STEP:
            if (parse_step(optarg, &o->filter.step) != 0) {
                report_opts_free(o);
                return cli_usage_error(cmd, "%s: bad --step '%s' (a step number: 0, 1, ...)", cmd->name, optarg);
            }
            o->filter.has_step = 1;
            break;
        case OPT_KERNEL:
            if (obs_call_filter_set_kernel(&o->filter, optarg, err, sizeof err) != 0) {
                report_opts_free(o);
                return cli_usage_error(cmd, "%s: %s", cmd->name, err);
            }
            break;
        case OPT_WINDOW:
            if (obs_call_filter_parse_window(optarg, &o->filter, err, sizeof err) != 0) {
                report_opts_free(o);
                return cli_usage_error(cmd, "%s: %s", cmd->name, err);
            }
            break;
        case ':':
            report_opts_free(o);
            return cli_usage_error(cmd, "%s: option '%s' needs an argument", cmd->name, argv[optind - 1]);
        default:
            report_opts_free(o);
            return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
        }
    }
    o->args = argv + optind;
    o->nargs = argc - optind;
    if (o->nargs < cmd->min_args) {
        report_opts_free(o);
        return cli_usage_error(cmd, "%s: missing argument (usage: obs-report %s)", cmd->name, cmd->synopsis);
    }
    if (o->nargs > cmd->max_args) {
        report_opts_free(o);
        return cli_usage_error(cmd, "%s: unexpected argument '%s'", cmd->name, o->args[cmd->max_args]);
    }
    return -1;
}

void report_opts_free(struct report_opts *o)
{
    obs_call_filter_free(&o->filter);
}
