/* obs-report sqlite: the trace as an SQLite database that nsys-style and
 * trace_processor-style queries run on unchanged (docs/sqlite.md). The
 * database is written under a temporary name next to OUT and renamed into
 * place only when it is complete. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report_cli.h"
#include "sqlite_export.h"

#define NO_SQLITE_MESSAGE "obs-report: sqlite: built without SQLite (install libsqlite3-dev and re-run configure)\n"

#ifdef HAVE_SQLITE
/* The path the database goes to: OUT itself, or what a symlink OUT points
 * to (the link stays). NULL, reported, when OUT is not a regular file. */
static char *target_path(const char *out)
{
    struct stat st;
    char *path;
    if (lstat(out, &st) != 0)
        return strdup(out); /* a new file (a missing directory fails later, with its reason) */
    if (S_ISLNK(st.st_mode)) {
        path = realpath(out, NULL);
        if (path == NULL || stat(path, &st) != 0) {
            free(path);
            return strdup(out); /* a dangling link: replaced by the file */
        }
    } else {
        path = strdup(out);
    }
    if (path && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "obs-report: %s: not a regular file\n", out);
        free(path);
        return NULL;
    }
    return path;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int write_database(struct obs_trace *t, const char *out, int verbose)
{
    struct obs_sqlite_counts n;
    struct timespec t0;
    char err[512], *path = target_path(out), *tmp = NULL;
    size_t len;
    int fd, rc = EXIT_TRACE_ERROR;

    if (path == NULL)
        return EXIT_TRACE_ERROR;
    len = strlen(path) + 32;
    tmp = malloc(len);
    if (tmp == NULL) {
        fprintf(stderr, "obs-report: %s: %s\n", out, strerror(ENOMEM));
        free(path);
        return EXIT_TRACE_ERROR;
    }
    /* ours alone: a new file (O_EXCL | O_NOFOLLOW, random name), and
     * SQLite takes an empty file as a new database */
    fd = obs_file_create_temp(path, 0666, tmp, len);
    if (fd < 0) {
        fprintf(stderr, "obs-report: %s: %s\n", out, strerror(-fd));
        goto done;
    }
    close(fd);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (obs_sqlite_export(t, tmp, &n, err, sizeof err) != 0) {
        fprintf(stderr, "obs-report: %s: %s\n", out, err);
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "obs-report: %s: %s\n", out, strerror(errno));
        unlink(tmp);
        goto done;
    }
    if (verbose)
        fprintf(stderr,
                "obs-report: %s: %llu API calls, %llu kernels, %llu copies, %llu memsets, %llu graph launches, "
                "%llu phase ranges, %llu slices, %llu strings in %.2f s (SQLite %s)\n",
                out, (unsigned long long)n.runtime, (unsigned long long)n.kernels, (unsigned long long)n.memcpys,
                (unsigned long long)n.memsets, (unsigned long long)n.graphs, (unsigned long long)n.ranges,
                (unsigned long long)n.slices, (unsigned long long)n.strings, seconds_since(&t0),
                obs_sqlite_version());
    rc = 0;
done:
    free(tmp);
    free(path);
    return rc;
}
#endif

static int run_sqlite(const struct report_command *cmd, int argc, char **argv)
{
    struct cli_args a;
    int verbose = cli_take_flag(&argc, argv, "--verbose", "-v");
    int rc = cli_parse(cmd, argc, argv, &a);

    if (rc >= 0)
        return rc;
    if (strcmp(a.args[1], "-") == 0)
        return cli_usage_error(cmd, "sqlite: OUT must be a file name (a database cannot go to standard output)");
#ifdef HAVE_SQLITE
    {
        struct obs_trace *t;
        cli_progress_begin(cmd->name, a.args[0]);
        t = cli_open_trace(a.args[0]);
        if (t == NULL) {
            cli_progress_end();
            return EXIT_TRACE_ERROR;
        }
        cli_progress_calls(t->ncalls);
        rc = write_database(t, a.args[1], verbose);
        cli_progress_end();
        obs_trace_free(t);
        return rc;
    }
#else
    (void)verbose;
    fputs(NO_SQLITE_MESSAGE, stderr);
    return EXIT_TRACE_ERROR;
#endif
}

const struct report_command report_cmd_sqlite = {
    "sqlite",
    "Write an SQLite database of the trace: nsys export tables and a trace_processor slices view.",
    "sqlite [-v] [-q] FILE.obs OUT.sqlite",
    "Tables as in nsys's SQLite export, start/end in ns (CLOCK_MONOTONIC):\n"
    "StringIds, CUPTI_ACTIVITY_KIND_RUNTIME (every API call), CUPTI_ACTIVITY_KIND_KERNEL,\n"
    "CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, NVTX_EVENTS (the phase\n"
    "ranges), ENUM_CUDA_MEMCPY_OPER, ENUM_NSYS_EVENT_CLASS, PROCESSES, ThreadNames,\n"
    "TARGET_INFO_SESSION_START_TIME; obsshim's own: OBS_META, OBS_LOST,\n"
    "OBS_GRAPH_LAUNCHES, OBS_GRAPHS, OBS_GRAPH_KERNELS, OBS_GRAPH_NODES, track. The\n"
    "views slice and slices have trace_processor's columns (id, ts, dur, category,\n"
    "name, track_id, depth, parent_id): one slice per API call, per kernel, copy,\n"
    "memset and graph launch on its GPU stream, and per phase range. Kernel, copy\n"
    "and memset rows have GPU times when the trace has a GPU span for the call\n"
    "(OBS_GPU_TIME=events), host API times otherwise; their timeBase column says\n"
    "which ('gpu', 'host').\n"
    "Tables and columns: docs/sqlite.md. An existing OUT is replaced only when the\n"
    "database was written completely; OUT must be a file name, not '-'.\n"
    "Needs obs-report built with SQLite (libsqlite3-dev; configure --with-sqlite).\n"
    "On a terminal, a progress line on stderr while the calls are written.\n"
    "  -v, --verbose      print the row counts and the time taken to standard error\n",
    CLI_OPT_PROGRESS,
    2,
    2,
    run_sqlite,
};
