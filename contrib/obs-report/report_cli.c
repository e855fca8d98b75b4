/* obs-report: shared command-line plumbing (see report_cli.h). */
#include "report_cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_print_command_help(const struct report_command *cmd, FILE *out)
{
    fprintf(out, "Usage: obs-report %s\n%s\n", cmd->synopsis, cmd->summary);
    if (cmd->description && cmd->description[0])
        fprintf(out, "\n%s", cmd->description);
    fprintf(out, "\nOptions:\n");
    if (cmd->options & CLI_OPT_OUTPUT)
        fprintf(out, "  -o, --output FILE  write to FILE instead of standard output\n");
    if (cmd->options & CLI_OPT_PROGRESS)
        fprintf(out, "  -q, --quiet        no progress line (shown only when stderr is a terminal)\n");
    fprintf(out, "  -h, --help         show this help\n");
    fprintf(out, "\nExit status: 0 success, 1 the trace could not be read or the output not written,\n"
                 "2 usage error.\n");
}

int cli_take_flag(int *argc, char **argv, const char *flag, const char *alias)
{
    int i, j, found = 0;
    for (i = 1, j = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) { /* operands from here on */
            while (i < *argc)
                argv[j++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], flag) == 0 || (alias != NULL && strcmp(argv[i], alias) == 0))
            found = 1;
        else
            argv[j++] = argv[i];
    }
    *argc = j;
    argv[j] = NULL;
    return found;
}

int cli_usage_error(const struct report_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("obs-report: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\nTry 'obs-report %s --help'.\n", cmd->name);
    else
        fputs("\nTry 'obs-report --help'.\n", stderr);
    return EXIT_USAGE;
}

int cli_parse(const struct report_command *cmd, int argc, char **argv, struct cli_args *a)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(a, 0, sizeof *a);
    opterr = 0;
    optind = 0; /* full reset: main already ran getopt */
    while ((c = getopt_long(argc, argv, ":ho:q", longopts, NULL)) != -1) {
        switch (c) {
        case 'q':
            if (!(cmd->options & CLI_OPT_PROGRESS))
                return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
            cli_quiet = 1;
            break;
        case 'h':
            cli_print_command_help(cmd, stdout);
            return fflush(stdout) == 0 ? 0 : EXIT_TRACE_ERROR;
        case 'o':
            if (!(cmd->options & CLI_OPT_OUTPUT))
                return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
            a->output = optarg;
            break;
        case ':':
            return cli_usage_error(cmd, "%s: option '%s' needs an argument", cmd->name, argv[optind - 1]);
        default:
            return cli_usage_error(cmd, "%s: unknown option '%s'", cmd->name, argv[optind - 1]);
        }
    }
    a->args = argv + optind;
    a->nargs = argc - optind;
    if (a->nargs < cmd->min_args)
        return cli_usage_error(cmd, "%s: missing argument (usage: obs-report %s)", cmd->name, cmd->synopsis);
    if (a->nargs > cmd->max_args)
        return cli_usage_error(cmd, "%s: unexpected argument '%s'", cmd->name, a->args[cmd->max_args]);
    return -1;
}

struct obs_trace *cli_open_trace(const char *path)
{
    struct obs_trace *t;
    char err[512];
    if (obs_trace_open(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "obs-report: %s: %s\n", path, err);
        return NULL;
    }
    if (obs_trace_unclosed(t)) {
        /* One line: what is missing, and what was cut at the end if anything was */
        char what[320];
        fprintf(stderr, "obs-report: %s: warning: %s\n", path, obs_trace_unclosed_note(t, what, sizeof what));
    } else if (t->ignored_bytes) {
        fprintf(stderr, "obs-report: %s: warning: %llu bytes at offset %llu ignored (%s); %s\n", path,
                (unsigned long long)t->ignored_bytes, (unsigned long long)t->ignored_offset, t->ignored_reason,
                t->ignored_offset + t->ignored_bytes < t->file_bytes ? "the chunks after them were read"
                                                                     : "read up to the last complete record");
    }
    return t;
}

int cli_open_output(struct cli_output *o, const char *path)
{
    struct stat st;
    size_t n;
    int fd;
    memset(o, 0, sizeof *o);
    if (path == NULL || strcmp(path, "-") == 0) {
        o->f = stdout;
        o->path = "standard output";
        return 0;
    }
    o->path = path;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* /dev/null, a FIFO, a symlink: the user named it, so it is
         * written as it is, as any command's -o does; a temporary file
         * renamed over it would replace it */
        o->f = fopen(path, "w");
        if (o->f == NULL) {
            fprintf(stderr, "obs-report: %s: %s\n", path, strerror(errno));
            return EXIT_TRACE_ERROR;
        }
        return 0;
    }
    n = strlen(path) + 32;
    o->tmp = malloc(n);
    if (o->tmp == NULL) {
        fprintf(stderr, "obs-report: %s: %s\n", path, strerror(ENOMEM));
        return EXIT_TRACE_ERROR;
    }
    /* The temporary is a name the user did not choose: a new file
     * (O_EXCL | O_NOFOLLOW, random name), never something planted there. */
    fd = obs_file_create_temp(path, 0666, o->tmp, n);
    if (fd < 0 || (o->f = fdopen(fd, "w")) == NULL) {
        int err = fd < 0 ? -fd : errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        fprintf(stderr, "obs-report: %s: %s\n", path, strerror(err));
        free(o->tmp);
        o->tmp = NULL;
        return EXIT_TRACE_ERROR;
    }
    return 0;
}

void cli_discard_output(struct cli_output *o)
{
    if (o->f == stdout)
        fflush(stdout);
    else if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    o->f = NULL;
}

int cli_close_output(struct cli_output *o, int ok)
{
    int err = ok ? 0 : (errno ? errno : EIO);
    if (o->f == stdout) {
        if (fflush(stdout) != 0 && !err)
            err = errno ? errno : EIO;
    } else if (o->f) {
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        if (o->tmp) {
            if (!err && rename(o->tmp, o->path) != 0)
                err = errno;
            if (err)
                unlink(o->tmp);
        }
    }
    free(o->tmp);
    o->tmp = NULL;
    o->f = NULL;
    if (err) {
        fprintf(stderr, "obs-report: %s: %s\n", o->path, strerror(err));
        return EXIT_TRACE_ERROR;
    }
    return 0;
}
