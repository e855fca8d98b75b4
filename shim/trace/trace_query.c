/* Call filters and per-kernel-name statistics: see trace_query.h. */
#include "trace_query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- filters ------------------------------------------------------------------- */

/* One side of a window: "" (absent), or a number and a unit. */
static int parse_time(const char *text, size_t len, uint64_t *ns, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
    char buf[64], *end;
    double v;
    size_t i;

    if (len >= sizeof buf) {
        snprintf(err, errlen, "time '%.*s' is too long", (int)len, text);
        return -1;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ' || buf[0] == '\0') {
        snprintf(err, errlen, "bad time '%s' (want a number and a unit: ns, us, ms, s)", buf);
        return -1;
    }
    errno = 0;
    v = strtod(buf, &end);
    if (end == buf || errno != 0 || !isfinite(v)) {
        snprintf(err, errlen, "bad time '%s' (want a number and a unit: ns, us, ms, s)", buf);
        return -1;
    }
    for (i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0)
            break;
    if (i == sizeof units / sizeof units[0]) {
        snprintf(err, errlen, "bad time '%s' (%s; units: ns, us, ms, s)", buf,
                 *end ? "unknown unit" : "missing unit");
        return -1;
    }
    v *= units[i].scale;
    if (v >= 1.8e19) {
        snprintf(err, errlen, "time '%s' is too large", buf);
        return -1;
    }
    *ns = (uint64_t)llround(v);
    return 0;
}

int obs_call_filter_parse_window(const char *text, struct obs_call_filter *f, char *err, size_t errlen)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    uint64_t from = 0, to = UINT64_MAX;

    if (colon == NULL || strchr(colon + 1, ':') != NULL) {
        snprintf(err, errlen, "bad window '%s' (want FROM:TO, e.g. 10ms:250ms, 1.5s: or :300us)",
                 text ? text : "");
        return -1;
    }
    if (colon > text && parse_time(text, (size_t)(colon - text), &from, err, errlen) != 0)
        return -1;
    if (colon[1] && parse_time(colon + 1, strlen(colon + 1), &to, err, errlen) != 0)
        return -1;
    if (to <= from) {
        snprintf(err, errlen, "bad window '%s' (TO must be after FROM)", text);
        return -1;
    }
    f->t_from = from;
    f->t_to = to;
    f->has_window = 1;
    return 0;
}

int obs_call_filter_set_kernel(struct obs_call_filter *f, const char *regex, char *err, size_t errlen)
{
    regex_t re;
    int rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, &re, why, sizeof why);
        snprintf(err, errlen, "bad kernel regex '%s': %s", regex, why);
        regfree(&re);
        return -1;
    }
    if (f->has_kernel_re)
        regfree(&f->kernel_re);
    f->kernel_re = re;
    f->has_kernel_re = 1;
    f->kernel_pattern = regex;
    return 0;
}

static int phase_matches(const struct obs_trace *t, uint32_t r, const char *name)
{
    for (; r != OBS_NONE; r = t->phases[r].parent)
        if (strcmp(t->phases[r].phase, name) == 0 || strcmp(t->phases[r].name, name) == 0)
            return 1;
    return 0;
}

int obs_call_filter_match(const struct obs_trace *t, const struct obs_call *c, const struct obs_call_filter *f)
{
    if (f == NULL)
        return 1;
    if (f->has_window) {
        uint64_t rel = c->host_begin >= t->t_first ? c->host_begin - t->t_first : 0;
        if (rel < f->t_from || rel >= f->t_to)
            return 0;
    }
    if (f->has_kernel_re) {
        const char *name;
        if (c->kind != OBS_KIND_KERNEL)
            return 0;
        name = obs_call_kernel_name(t, c);
        if (regexec(&f->kernel_re, name ? name : "", 0, NULL, 0) != 0)
            return 0;
    }
    if (f->has_step && obs_phase_step(t, c->phase) != f->step)
        return 0;
    if (f->phase && !phase_matches(t, c->phase, f->phase))
        return 0;
    if (f->phase2 && !phase_matches(t, c->phase, f->phase2))
        return 0;
    return 1;
}

void obs_call_filter_describe(const struct obs_call_filter *f, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
#define APPEND(...) (n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, __VA_ARGS__))
    if (!obs_call_filter_active(f)) {
        APPEND("all calls");
        return;
    }
    if (f->phase)
        APPEND("phase %s", f->phase);
    if (f->has_step)
        APPEND("%sstep %u", n ? ", " : "", f->step);
    if (f->has_kernel_re)
        APPEND("%skernel /%s/", n ? ", " : "", f->kernel_pattern ? f->kernel_pattern : "?");
    if (f->has_window) {
        APPEND("%swindow %.6f ms to ", n ? ", " : "", (double)f->t_from / 1e6);
        if (f->t_to == UINT64_MAX)
            APPEND("the end");
        else
            APPEND("%.6f ms", (double)f->t_to / 1e6);
    }
#undef APPEND
}

int obs_call_in_phase(const struct obs_trace *t, const struct obs_call *c, const char *name)
{
    return phase_matches(t, c->phase, name);
}

int obs_call_filter_active(const struct obs_call_filter *f)
{
    return f && (f->phase || f->phase2 || f->has_step || f->has_kernel_re || f->has_window);
}

void obs_call_filter_free(struct obs_call_filter *f)
{
    if (f && f->has_kernel_re) {
        regfree(&f->kernel_re);
        f->has_kernel_re = 0;
    }
}

/* ---- durations ------------------------------------------------------------------ */

int obs_trace_kind_has_gpu_time(const struct obs_trace *t, unsigned kind)
{
    size_t i;
    if (t->ngpu == 0)
        return 0;
    for (i = 0; i < t->ncalls; i++)
        if (t->calls[i].kind == kind && t->calls[i].gpu != OBS_NONE)
            return 1;
    return 0;
}

int obs_call_duration(const struct obs_trace *t, const struct obs_call *c, int gpu_mode, uint64_t *ns)
{
    if (gpu_mode) {
        const struct obs_gpu_time *g = obs_call_gpu(t, c);
        if (g == NULL)
            return 0;
        *ns = g->end > g->begin ? g->end - g->begin : 0;
    } else {
        *ns = c->host_end > c->host_begin ? c->host_end - c->host_begin : 0;
    }
    return 1;
}

/* ---- kernel statistics ------------------------------------------------------------ */

static const struct obs_trace *sort_trace; /* for cmp_kernel_by_name (qsort has no context) */

static int cmp_kernel_by_name(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(sort_trace->kernels[x].demangled, sort_trace->kernels[y].demangled);
    if (c)
        return c;
    return x < y ? -1 : x > y;
}

static int cmp_stat_row(const void *a, const void *b)
{
    const struct obs_kernel_stat *x = a, *y = b;
    int c;
    if (x->st.total != y->st.total)
        return x->st.total > y->st.total ? -1 : 1;
    c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->kernel < y->kernel ? -1 : x->kernel > y->kernel;
}

/* group[k]: the group of kernel index k. Kernels with the same non-empty
 * demangled name share a group; a kernel with no name is a group of its own.
 * first[g]: the group's first kernel index. Returns the number of groups. */
static size_t group_kernels(const struct obs_trace *t, uint32_t *group, uint32_t *first, uint32_t *order)
{
    size_t i, n = 0;
    for (i = 0; i < t->nkernels; i++)
        order[i] = (uint32_t)i;
    sort_trace = t;
    qsort(order, t->nkernels, sizeof *order, cmp_kernel_by_name);
    sort_trace = NULL;
    for (i = 0; i < t->nkernels; i++) {
        uint32_t k = order[i];
        const char *name = t->kernels[k].demangled;
        if (i > 0 && name[0] != '\0' && strcmp(name, t->kernels[order[i - 1]].demangled) == 0) {
            group[k] = group[order[i - 1]];
            if (k < first[group[k]])
                first[group[k]] = k;
            continue;
        }
        group[k] = (uint32_t)n;
        first[n++] = k;
    }
    return n;
}

int obs_kernel_stats_compute(const struct obs_trace *t, const struct obs_call_filter *f, struct obs_kernel_stats *out)
{
    size_t nk = t->nkernels ? t->nkernels : 1, ngroups, i, g, n = 0;
    uint32_t *group = malloc(nk * sizeof *group), *first = malloc(nk * sizeof *first);
    uint32_t *order = malloc(nk * sizeof *order);
    size_t *start = calloc(nk + 1, sizeof *start), *fill = malloc(nk * sizeof *fill);
    uint64_t *dur = NULL;
    int rc = -1;

    memset(out, 0, sizeof *out);
    out->gpu_time = obs_trace_kind_has_gpu_time(t, OBS_KIND_KERNEL);
    if (!group || !first || !order || !start || !fill)
        goto done;
    ngroups = group_kernels(t, group, first, order);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t ns;
        if (c->kind != OBS_KIND_KERNEL || c->kernel >= t->nkernels || !obs_call_filter_match(t, c, f))
            continue;
        if (!obs_call_duration(t, c, out->gpu_time, &ns)) {
            out->skipped++;
            continue;
        }
        start[group[c->kernel] + 1]++;
        n++;
    }
    for (g = 1; g <= ngroups; g++)
        start[g] += start[g - 1];
    dur = malloc((n ? n : 1) * sizeof *dur);
    out->rows = calloc(ngroups ? ngroups : 1, sizeof *out->rows);
    if (dur == NULL || out->rows == NULL)
        goto done;
    memcpy(fill, start, ngroups * sizeof *fill);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        uint64_t ns;
        if (c->kind != OBS_KIND_KERNEL || c->kernel >= t->nkernels || !obs_call_filter_match(t, c, f) ||
            !obs_call_duration(t, c, out->gpu_time, &ns))
            continue;
        dur[fill[group[c->kernel]]++] = ns;
    }
    for (g = 0; g < ngroups; g++) {
        struct obs_kernel_stat *row;
        const struct obs_kernel *kn;
        if (start[g + 1] == start[g])
            continue;
        row = &out->rows[out->nrows++];
        row->kernel = first[g];
        kn = &t->kernels[first[g]];
        obs_duration_stats(dur + start[g], start[g + 1] - start[g], &row->st);
        if (kn->demangled[0]) {
            row->name = kn->demangled;
        } else {
            row->owned_name = malloc(48);
            if (row->owned_name == NULL)
                goto done;
            if (kn->id)
                snprintf(row->owned_name, 48, "(unnamed kernel, id %u)", kn->id);
            else
                snprintf(row->owned_name, 48, "(unnamed kernel)");
            row->name = row->owned_name;
        }
        out->total_ns += row->st.total;
        out->launches += row->st.count;
    }
    for (i = 0; i < out->nrows; i++)
        out->rows[i].pct = out->total_ns ? 100.0 * (double)out->rows[i].st.total / (double)out->total_ns : 0.0;
    qsort(out->rows, out->nrows, sizeof *out->rows, cmp_stat_row);
    rc = 0;
done:
    free(group);
    free(first);
    free(order);
    free(start);
    free(fill);
    free(dur);
    if (rc != 0) {
        obs_kernel_stats_free(out);
        errno = ENOMEM;
    }
    return rc;
}

void obs_kernel_stats_free(struct obs_kernel_stats *s)
{
    size_t i;
    if (s == NULL)
        return;
    for (i = 0; s->rows && i < s->nrows; i++)
        free(s->rows[i].owned_name);
    free(s->rows);
    s->rows = NULL;
    s->nrows = 0;
}

const struct obs_kernel_stat *obs_kernel_stats_find(const struct obs_kernel_stats *s, const char *name)
{
    size_t i;
    for (i = 0; i < s->nrows; i++)
        if (strcmp(s->rows[i].name, name) == 0)
            return &s->rows[i];
    return NULL;
}
