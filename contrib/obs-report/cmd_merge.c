/* obs-report merge: several traces (one per process, e.g. one per GPU rank)
 * on one Chrome-trace timeline: one pid each, clocks aligned. The rules
 * (pids, ranks, clock alignment and its accuracy) are in docs/merge.md.
 *
 * Two passes so that memory holds one trace at a time: the first reads
 * every input (a damaged one stops everything before any output exists)
 * and keeps only its header facts and a few meta values; the second reads
 * them again, one by one, and writes their events. An input that cannot be
 * read twice (a pipe) is kept from the first pass. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_cli.h"
#include "trace/trace.h"

/* Two starts whose (CLOCK_REALTIME - CLOCK_MONOTONIC) differ by less than
 * this, on one host, are taken as one boot (docs/merge.md, "Clocks"). */
#define SAME_BOOT_TOLERANCE_NS 1000000000LL
/* A pid given to an earlier input: the pid plus a multiple of this (above
 * Linux's largest pid, 2^22, so it cannot be another process's). */
#define PID_STRIDE 10000000u
/* Flow ids of the n-th part written start at n times this. */
#define FLOW_ID_STRIDE 1000000000000ull

enum clock_mode { CLOCK_AUTO, CLOCK_REALTIME_ONLY, CLOCK_MONOTONIC_ALL };

struct merge_input {
    const char *path;
    struct obs_trace *kept; /* read once only (not a regular file): kept from pass 1 */
    uint32_t trace_pid, pid;
    uint64_t start_mono, start_real, t_first, ncalls;
    char *host, *boot_id, *exe;
    long meta_rank; /* the trace's "rank" meta value, or -1 */
    long rank;      /* what the process name says */
    size_t position;
    size_t domain;      /* the input whose clock offset it uses (itself when alone) */
    int64_t offset;     /* ns to add to its monotonic times: the merged (realtime) axis */
    int64_t origin;     /* ts 0 on its own monotonic clock */
    int64_t sort_index; /* where it is shown: by rank, then position */
};

static char *dup_meta(const struct obs_trace *t, const char *key)
{
    const char *v = obs_trace_meta(t, key);
    return v && v[0] ? strdup(v) : NULL;
}

/* The program's name: the base name of meta exe, else of the first word of cmdline. */
static char *program_name(const struct obs_trace *t)
{
    const char *exe = obs_trace_meta(t, "exe"), *base;
    size_t len;
    if (exe == NULL || exe[0] == '\0')
        exe = obs_trace_meta(t, "cmdline");
    if (exe == NULL || exe[0] == '\0')
        return strdup("unknown");
    len = strcspn(exe, " ");
    base = exe;
    for (const char *p = exe; p < exe + len; p++)
        if (*p == '/' && p + 1 < exe + len)
            base = p + 1;
    return strndup(base, (size_t)(exe + len - base));
}

static void take_facts(struct merge_input *in, const struct obs_trace *t)
{
    in->trace_pid = t->pid;
    in->start_mono = t->start_mono_ns;
    in->start_real = t->start_real_ns;
    in->t_first = t->t_first;
    in->ncalls = t->ncalls;
    in->host = dup_meta(t, "host");
    in->boot_id = dup_meta(t, "boot_id");
    in->exe = program_name(t);
    in->meta_rank = obs_trace_rank(t);
}

/* The trace's earliest time on its own clock: its start, or its first event
 * if that is earlier (a synthetic trace with no start). */
static uint64_t earliest(const struct merge_input *in)
{
    uint64_t e = in->start_mono ? in->start_mono : in->t_first;
    if (in->t_first && in->t_first < e)
        e = in->t_first;
    return e;
}

static int has_clock(const struct merge_input *in)
{
    return in->start_real != 0;
}

/* Clock arithmetic modulo 2^64: real clocks are far from int64's limits,
 * and a damaged header's times give a wrong position, not an overflow. */
static int64_t wrap_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t own_offset(const struct merge_input *in)
{
    return wrap_sub((int64_t)in->start_real, (int64_t)in->start_mono);
}

/* Whether a and b read one CLOCK_MONOTONIC: the same boot id when both
 * record one; else the same host and start offsets that agree. */
static int same_clock(const struct merge_input *a, const struct merge_input *b)
{
    int64_t d;
    if (!has_clock(a) || !has_clock(b))
        return 0;
    if (a->boot_id && b->boot_id)
        return strcmp(a->boot_id, b->boot_id) == 0;
    if (a->host == NULL || b->host == NULL || strcmp(a->host, b->host) != 0)
        return 0;
    d = wrap_sub(own_offset(a), own_offset(b));
    return d > -SAME_BOOT_TOLERANCE_NS && d < SAME_BOOT_TOLERANCE_NS;
}

static struct merge_input *sort_inputs;

static int cmp_by_start(const void *a, const void *b)
{
    const struct merge_input *x = &sort_inputs[*(const size_t *)a], *y = &sort_inputs[*(const size_t *)b];
    if (x->start_real != y->start_real)
        return x->start_real < y->start_real ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

static int cmp_by_rank(const void *a, const void *b)
{
    const struct merge_input *x = &sort_inputs[*(const size_t *)a], *y = &sort_inputs[*(const size_t *)b];
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

/* Clock domains, offsets and each input's origin. Inputs are taken in
 * order of start; each joins the first domain whose first (earliest)
 * member shares its clock, and uses that member's offset. */
static void align_clocks(struct merge_input *in, size_t n, enum clock_mode mode, size_t *order)
{
    size_t i, k, j;
    int64_t origin = INT64_MAX;

    sort_inputs = in;
    qsort(order, n, sizeof *order, cmp_by_start);
    for (i = 0; i < n; i++) {
        struct merge_input *a = &in[order[i]];
        a->domain = order[i];
        a->offset = own_offset(a);
        if (!has_clock(a) || mode == CLOCK_REALTIME_ONLY)
            continue;
        for (k = 0; k < i; k++) {
            const struct merge_input *b = &in[order[k]];
            if (b->domain != order[k] || !has_clock(b))
                continue; /* not the first of a domain */
            if (mode == CLOCK_MONOTONIC_ALL || same_clock(a, b)) {
                a->domain = order[k];
                a->offset = b->offset;
                break;
            }
        }
    }
    for (j = 0; j < n; j++)
        if (has_clock(&in[j]) && wrap_add((int64_t)earliest(&in[j]), in[j].offset) < origin)
            origin = wrap_add((int64_t)earliest(&in[j]), in[j].offset);
    if (origin == INT64_MAX)
        origin = 0;
    for (j = 0; j < n; j++) {
        if (!has_clock(&in[j])) { /* no realtime reference: start it at ts 0 */
            in[j].offset = wrap_sub(origin, (int64_t)earliest(&in[j]));
            fprintf(stderr,
                    "obs-report: %s: warning: the trace has no CLOCK_REALTIME start; "
                    "it is shown as starting with the earliest input\n",
                    in[j].path);
        }
        in[j].origin = wrap_sub(origin, in[j].offset);
    }
}

static int pid_taken(const struct merge_input *in, size_t n, size_t upto, uint64_t pid)
{
    size_t i;
    for (i = 0; i < n; i++)
        if ((i < upto && in[i].pid == pid) || (i >= upto && in[i].trace_pid == pid))
            return 1;
    return 0;
}

/* Each input keeps its pid unless an earlier input (argument order) has it;
 * then it gets pid + k * PID_STRIDE, the smallest k that no input uses. */
static void assign_pids(struct merge_input *in, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint64_t pid = in[i].trace_pid, k;
        int taken = 0;
        for (k = 0; k < i; k++)
            taken |= in[k].pid == pid;
        for (k = 1; taken; k++) {
            pid = in[i].trace_pid + k * PID_STRIDE;
            if (pid > INT32_MAX) /* an odd pid: the first free one above every pid */
                for (pid = PID_STRIDE; pid_taken(in, n, i, pid); pid++)
                    ;
            taken = pid_taken(in, n, i, pid);
        }
        in[i].pid = (uint32_t)pid;
    }
}

/* Ranks from the traces' "rank" meta when every input has one, else the
 * argument position; the processes are shown in rank order. */
static void assign_ranks(struct merge_input *in, size_t n, size_t *order)
{
    size_t i;
    int all = 1;
    for (i = 0; i < n; i++)
        all &= in[i].meta_rank >= 0;
    for (i = 0; i < n; i++) {
        in[i].rank = all ? in[i].meta_rank : (long)i;
        order[i] = i;
    }
    sort_inputs = in;
    qsort(order, n, sizeof *order, cmp_by_rank);
    for (i = 0; i < n; i++)
        in[order[i]].sort_index = (int64_t)i;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

static char *process_name(const struct merge_input *in, int show_host)
{
    size_t len = strlen(in->exe) + strlen(in->path) + (in->host ? strlen(in->host) : 0) + 96;
    char *s = malloc(len);
    if (s == NULL)
        return NULL;
    if (show_host)
        snprintf(s, len, "rank %ld: %s (pid %" PRIu32 " on %s, %s)", in->rank, in->exe, in->trace_pid,
                 in->host ? in->host : "unknown host", base_name(in->path));
    else
        snprintf(s, len, "rank %ld: %s (pid %" PRIu32 ", %s)", in->rank, in->exe, in->trace_pid,
                 base_name(in->path));
    return s;
}

static void put_json_string(FILE *f, const char *key, const char *value)
{
    char *v = obs_json_escape(value ? value : "");
    fprintf(f, "\"%s\":\"%s\"", key, v ? v : "");
    free(v);
}

/* otherData's members: how the inputs were placed (docs/merge.md). */
static char *other_data(const struct merge_input *in, size_t n, const size_t *order)
{
    char *text = NULL;
    size_t len = 0, i, domains = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        domains += in[i].domain == i;
    fprintf(f, "\"merged\":%zu,\"clock_alignment\":\"%s\",\"origin_real_ns\":%" PRId64 ",\"inputs\":[", n,
            domains == 1 ? "monotonic" : domains == n ? "realtime" : "mixed",
            wrap_add(in[0].origin, in[0].offset));
    for (i = 0; i < n; i++) {
        const struct merge_input *a = &in[order[i]];
        size_t j, members = 0;
        for (j = 0; j < n; j++)
            members += in[j].domain == a->domain;
        fprintf(f, "%s{", i ? "," : "");
        put_json_string(f, "file", a->path);
        fprintf(f, ",\"position\":%zu,\"rank\":%ld,\"pid\":%" PRIu32 ",\"trace_pid\":%" PRIu32 ",", a->position,
                a->rank, a->pid, a->trace_pid);
        put_json_string(f, "host", a->host);
        fprintf(f,
                ",\"start_mono_ns\":%" PRIu64 ",\"start_real_ns\":%" PRIu64 ",\"offset_ns\":%" PRId64
                ",\"clock\":\"%s\",\"clock_shared_with\":%zu,\"origin_mono_ns\":%" PRId64 ",\"records\":%" PRIu64
                "}",
                a->start_mono, a->start_real, a->offset, !has_clock(a) ? "none" : members > 1 ? "shared" : "own",
                in[a->domain].position, a->origin, a->ncalls);
    }
    fputs("]", f);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Take "--no-args" and "--clock MODE" / "--clock=MODE" out of argv (before
 * "--"). Returns -1, or EXIT_USAGE after a usage error (reported). */
static int take_options(const struct report_command *cmd, int *argc, char **argv, int *no_args,
                        enum clock_mode *mode)
{
    int i, j;
    for (i = 1, j = 1; i < *argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[j++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--no-args") == 0) {
            *no_args = 1;
            continue;
        }
        if (strcmp(argv[i], "--clock") == 0) {
            if (i + 1 >= *argc)
                return cli_usage_error(cmd, "%s: option '--clock' needs an argument", cmd->name);
            value = argv[++i];
        } else if (strncmp(argv[i], "--clock=", 8) == 0) {
            value = argv[i] + 8;
        } else {
            argv[j++] = argv[i];
            continue;
        }
        if (strcmp(value, "auto") == 0)
            *mode = CLOCK_AUTO;
        else if (strcmp(value, "realtime") == 0)
            *mode = CLOCK_REALTIME_ONLY;
        else if (strcmp(value, "monotonic") == 0)
            *mode = CLOCK_MONOTONIC_ALL;
        else
            return cli_usage_error(cmd, "%s: --clock must be auto, realtime or monotonic, not '%s'", cmd->name,
                                   value);
    }
    *argc = j;
    argv[j] = NULL;
    return -1;
}

static void free_inputs(struct merge_input *in, size_t n)
{
    size_t i;
    for (i = 0; in && i < n; i++) {
        obs_trace_free(in[i].kept);
        free(in[i].host);
        free(in[i].boot_id);
        free(in[i].exe);
    }
    free(in);
}

/* Pass 1: read every input. Returns 0, or EXIT_TRACE_ERROR (reported). */
static int read_inputs(struct merge_input *in, char **paths, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        struct stat st;
        struct obs_trace *t = cli_open_trace(paths[i]);
        if (t == NULL)
            return EXIT_TRACE_ERROR;
        in[i].path = paths[i];
        in[i].position = i;
        take_facts(&in[i], t);
        if (stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            obs_trace_free(t);
        else
            in[i].kept = t;
        if (in[i].exe == NULL)
            return EXIT_TRACE_ERROR;
    }
    return 0;
}

/* Pass 2: one input's events. Returns 0, or EXIT_TRACE_ERROR (reported). */
static int write_input(struct merge_input *a, FILE *out, int show_host, size_t part, int last,
                       const struct obs_json_options *opt)
{
    struct obs_trace *t = a->kept;
    struct obs_json_part p;
    char err[512];
    int rc;

    if (t == NULL && obs_trace_open(a->path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "obs-report: %s: %s\n", a->path, err);
        return EXIT_TRACE_ERROR;
    }
    a->kept = NULL;
    if (t->pid != a->trace_pid || t->start_mono_ns != a->start_mono || t->start_real_ns != a->start_real) {
        fprintf(stderr, "obs-report: %s: the file changed while it was being merged\n", a->path);
        obs_trace_free(t);
        return EXIT_TRACE_ERROR;
    }
    memset(&p, 0, sizeof p);
    p.pid = a->pid;
    p.process_name = process_name(a, show_host);
    p.sort_index = a->sort_index;
    p.origin_ns = a->origin;
    p.flow_id_base = part * FLOW_ID_STRIDE;
    p.last = last;
    errno = 0;
    rc = p.process_name != NULL && obs_json_merge_part(t, out, &p, opt) == 0 ? 0 : -1;
    free((char *)p.process_name);
    obs_trace_free(t);
    return rc == 0 ? 0 : -1;
}

static int run_merge(const struct report_command *cmd, int argc, char **argv)
{
    struct obs_json_options opt = {0};
    enum clock_mode mode = CLOCK_AUTO;
    struct merge_input *in = NULL;
    struct cli_args a;
    struct cli_output out;
    size_t *order = NULL, n, i;
    char *other = NULL;
    int rc = take_options(cmd, &argc, argv, &opt.no_args, &mode), show_host = 0, ok = 1;

    if (rc < 0)
        rc = cli_parse(cmd, argc, argv, &a);
    if (rc >= 0)
        return rc;
    n = (size_t)a.nargs;
    in = calloc(n, sizeof *in);
    order = calloc(n, sizeof *order);
    if (in == NULL || order == NULL) {
        fprintf(stderr, "obs-report: merge: %s\n", strerror(ENOMEM));
        free(order);
        free(in);
        return EXIT_TRACE_ERROR;
    }
    rc = read_inputs(in, a.args, n);
    if (rc != 0)
        goto out;
    for (i = 1; i < n; i++)
        if ((in[i].host == NULL) != (in[0].host == NULL) || (in[i].host && strcmp(in[i].host, in[0].host) != 0))
            show_host = 1;
    assign_pids(in, n);
    for (i = 0; i < n; i++)
        order[i] = i;
    align_clocks(in, n, mode, order);
    assign_ranks(in, n, order); /* order: now the rank order, the order parts are written in */
    other = other_data(in, n, order);
    if (other == NULL) {
        fprintf(stderr, "obs-report: merge: %s\n", strerror(ENOMEM));
        rc = EXIT_TRACE_ERROR;
        goto out;
    }
    if (cli_open_output(&out, a.output) != 0) {
        rc = EXIT_TRACE_ERROR;
        goto out;
    }
    errno = 0;
    ok = obs_json_merge_begin(out.f) == 0;
    for (i = 0; ok && i < n; i++) {
        int w = write_input(&in[order[i]], out.f, show_host, i, i + 1 == n, &opt);
        if (w == EXIT_TRACE_ERROR) { /* reported: no output file */
            cli_discard_output(&out);
            rc = EXIT_TRACE_ERROR;
            goto out;
        }
        ok = w == 0;
    }
    ok = ok && obs_json_merge_end(out.f, other) == 0;
    rc = cli_close_output(&out, ok);
out:
    free(other);
    free(order);
    free_inputs(in, n);
    return rc;
}

const struct report_command report_cmd_merge = {
    "merge",
    "Merge traces of several processes (one per GPU rank) into one Chrome trace JSON.",
    "merge [--no-args] [--clock MODE] [-o OUT] FILE.obs...",
    "One process per input, each with the events `obs-report json` writes for it,\n"
    "on one time axis: ts 0 is the earliest start among the inputs. Each keeps\n"
    "its pid; an input whose pid an earlier one has (the same file twice,\n"
    "containers) gets pid + 10000000 (+ 20000000 ...). Processes are named\n"
    "\"rank R: PROGRAM (pid P, FILE)\" and sorted by rank: the trace's \"rank\"\n"
    "meta value when every input has one, else the argument position.\n"
    "Clocks: each trace's CLOCK_MONOTONIC times go on the CLOCK_REALTIME axis\n"
    "through the pair of readings taken at its start; traces from one boot of one\n"
    "host (same boot_id, or same host and start offsets within 1 s) share one\n"
    "offset, so they keep their exact CLOCK_MONOTONIC order (docs/merge.md).\n"
    "  --no-args          leave the args out of the slices (smaller files)\n"
    "  --clock MODE       auto (the default), realtime (each trace's own offset),\n"
    "                     or monotonic (one offset for all: one boot of one host)\n",
    CLI_OPT_OUTPUT,
    1,
    INT_MAX,
    run_merge,
};
