/* Fuzz body for the trace reader and every report obs-report writes.
 * Built two ways: with -DOBS_LIBFUZZER -DOBS_FUZZ_TARGET=<id> and clang
 * -fsanitize=fuzzer,address,undefined as one libFuzzer target per report
 * (`make fuzz-trace`, tests/fuzz/run-trace-fuzz.sh), and linked into
 * tests/t_trace_fuzz, which replays the kept corpora with every target.
 * The reports write into a stream that throws the bytes away (no files);
 * the model's invariants, which every report relies on, abort when broken
 * so that the fuzzer reports them as crashes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report_cli.h"
#include "report_html.h"
#include "reports.h"
#include "trace/trace.h"
#include "trace_fuzz.h"
#ifdef HAVE_SQLITE
#include "sqlite_export.h"
#endif

const char *const obs_fuzz_trace_names[OBS_FUZZ_TARGET_COUNT] = {
#define OBS_FUZZ_NAME(id, name) name,
    OBS_FUZZ_TRACE_TARGETS(OBS_FUZZ_NAME)
#undef OBS_FUZZ_NAME
};

extern const struct report_command report_cmd_merge;

/* report_cli.c's help lists the commands; the harness runs merge only. */
const struct report_command *const report_commands[] = {&report_cmd_merge, NULL};

static ssize_t discard_write(void *cookie, const char *buf, size_t size)
{
    (void)cookie;
    (void)buf;
    return (ssize_t)size;
}

/* A FILE that accepts every byte and keeps none: the reports' full work
 * without a file that grows. */
static FILE *sink(void)
{
    static FILE *f;
    if (f == NULL) {
        cookie_io_functions_t io = {NULL, discard_write, NULL, NULL};
        f = fopencookie(NULL, "w", io);
        if (f == NULL)
            abort();
    }
    clearerr(f);
    errno = 0;
    return f;
}

#define CHECK(cond)      \
    do {                 \
        if (!(cond))     \
            abort();     \
    } while (0)

/* What the reports take for granted about a loaded model (trace_reader.h). */
static void check_model(const struct obs_trace *t)
{
    size_t i, k;
    uint64_t calls = 0;

    CHECK(t->nkernels >= 1 && t->kernels[0].id == 0);
    for (i = 0; i < t->nkernels; i++)
        CHECK(t->kernels[i].mangled != NULL && t->kernels[i].demangled != NULL);
    for (i = 0; i < t->nthreads; i++) {
        CHECK(i == 0 || t->threads[i - 1].tid < t->threads[i].tid);
        calls += t->threads[i].calls;
    }
    CHECK(calls == t->ncalls);
    for (i = 0; i < t->ncalls; i++) {
        const struct obs_call *c = &t->calls[i];
        CHECK(c->thread < t->nthreads);
        CHECK(c->kernel < t->nkernels);
        CHECK(c->gpu == OBS_NONE || c->gpu < t->ngpu);
        CHECK(c->phase == OBS_NONE || c->phase < t->nphases);
    }
    for (i = 0; i < t->nstreams; i++)
        CHECK(i == 0 || t->streams[i - 1].id < t->streams[i].id);
    for (i = 0; i < t->nphases; i++) {
        const struct obs_phase *p = &t->phases[i];
        CHECK(p->phase != NULL && p->name != NULL);
        CHECK(p->thread < t->nthreads);
        /* an enclosing range comes first: obs_phase_step's walk ends */
        CHECK(p->parent == OBS_NONE || p->parent < i);
    }
    for (i = 0; i < t->ngraphs; i++) {
        const struct obs_graph *g = &t->graphs[i];
        CHECK(i == 0 || t->graphs[i - 1].id < g->id);
        CHECK(g->nkernels == 0 ||
              (g->kernels >= t->graph_kernels && g->kernels + g->nkernels <= t->graph_kernels + t->ngraph_kernels));
        for (k = 0; k < g->nkernels; k++)
            CHECK(g->kernels[k].kernel < t->nkernels);
    }
    for (i = 0; i < t->nmeta; i++)
        CHECK(t->meta[i].key != NULL && t->meta[i].value != NULL);
    for (i = 0; i < t->nrange_spans; i++) {
        const struct obs_range_span *r = &t->range_spans[i];
        /* live: a BEGIN/END range, or a RELABEL range holding an open range's tail (trace_reader.h) */
        CHECK(r->thread < t->nthreads && r->live < t->nphases);
        CHECK(r->range == OBS_NONE || r->range < t->nphases);
        CHECK(r->begin <= r->end);
        /* sorted by thread, live range, stream, one per (live range, stream): the reports search them */
        CHECK(i == 0 || t->range_spans[i - 1].thread < r->thread ||
              (t->range_spans[i - 1].thread == r->thread &&
               (t->range_spans[i - 1].live < r->live ||
                (t->range_spans[i - 1].live == r->live && t->range_spans[i - 1].stream < r->stream))));
    }
    for (i = 0; i < t->ncomms; i++) {
        const struct obs_comm *c = &t->comms[i];
        CHECK(c->thread < t->nthreads);
        CHECK(c->made == OBS_NONE || c->made < t->ncomms);
        CHECK(c->parent == OBS_NONE || c->parent < t->ncomms);
    }
    for (i = 0; i < t->ncolls; i++) {
        const struct obs_coll *c = &t->colls[i];
        CHECK(c->thread < t->nthreads);
        CHECK(c->op > OBS_COLL_INVALID && c->op < OBS_COLL_COUNT);
        CHECK(c->comm == OBS_NONE || c->comm < t->ncomms);
        CHECK(c->group_end == OBS_NONE || c->group_end < t->ncolls);
        CHECK(c->phase == OBS_NONE || c->phase < t->nphases);
        CHECK(c->ncalls == 0 || (c->calls_first < t->ncoll_calls && c->ncalls <= t->ncoll_calls - c->calls_first));
        CHECK(c->kernels <= c->ncalls);
        for (k = 0; k < c->ncalls; k++)
            CHECK(t->coll_calls[c->calls_first + k] < t->ncalls);
    }
    /* Not checked: t_first <= t_last and host_begin <= host_end. A damaged
     * call whose t_begin + t_dur passes 2^64 ends before it begins (the
     * reader does not clamp it); the reports must cope with that. */
}

/* A filter the input picks (sel), built from names and times the trace has:
 * a phase, a step, a kernel regex or a window. f is zeroed first. */
static void pick_filter(const struct obs_trace *t, unsigned sel, struct obs_call_filter *f)
{
    char err[256];
    size_t i;
    memset(f, 0, sizeof *f);
    switch (sel % 5) {
    case 0:
        break;
    case 1:
        for (i = 0; i < t->nphases; i++)
            if (t->phases[i].phase[0] != '\0') {
                f->phase = t->phases[i].phase;
                break;
            }
        break;
    case 2:
        f->has_step = 1;
        f->step = (sel >> 3) % 4;
        break;
    case 3:
        if (t->nkernels > 1 && t->kernels[1].demangled[0] != '\0' && t->kernels[1].demangled[0] != '\\')
            (void)obs_call_filter_set_kernel(f, "^[a-z_]", err, sizeof err);
        break;
    default:
        f->has_window = 1;
        f->t_from = (t->t_last - t->t_first) / 3;
        f->t_to = f->t_from * 2 + 1;
        break;
    }
}

static void run_doc(enum report_format fmt, int (*report)(const struct obs_trace *, const struct obs_call_filter *,
                                                              struct report_doc *),
                    const struct obs_trace *t, const struct obs_call_filter *f)
{
    struct report_doc d;
    rdoc_begin(&d, sink(), fmt);
    (void)report(t, f, &d);
    (void)rdoc_end(&d);
}

static size_t top_n;
static int top_with_n(const struct obs_trace *t, const struct obs_call_filter *f, struct report_doc *d)
{
    return report_top(t, f, top_n, d);
}

static void fuzz_summary(const struct obs_trace *t, unsigned sel)
{
    static const enum report_format formats[] = {REPORT_TABLE, REPORT_CSV, REPORT_JSON};
    struct obs_summary_options brief = {0, 1};
    struct obs_call_filter f;
    size_t i;
    (void)obs_report_summary(t, sink(), NULL);
    (void)obs_report_summary(t, sink(), &brief);
    pick_filter(t, sel, &f);
    (void)obs_report_summary_filtered(t, sink(), NULL, &f);
    for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
        run_doc(formats[i], report_summary, t, i == 0 ? NULL : &f);
    obs_call_filter_free(&f);
}

static void fuzz_gaps_top(const struct obs_trace *t, unsigned sel, int top)
{
    static const enum report_format formats[] = {REPORT_TABLE, REPORT_CSV, REPORT_JSON};
    struct obs_call_filter f;
    size_t i;
    pick_filter(t, sel, &f);
    top_n = 1 + sel % 7;
    for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
        run_doc(formats[i], top ? top_with_n : report_gaps, t, i == 1 ? &f : NULL);
    obs_call_filter_free(&f);
}

static void fuzz_compare(const struct obs_trace *a, const struct obs_trace *b, unsigned sel)
{
    static const enum report_format formats[] = {REPORT_TABLE, REPORT_CSV, REPORT_JSON};
    struct report_doc d;
    rdoc_begin(&d, sink(), formats[sel % 3]);
    (void)report_compare(a, b, &d);
    (void)rdoc_end(&d);
    rdoc_begin(&d, sink(), REPORT_TABLE);
    (void)report_compare(b, a, &d);
    (void)rdoc_end(&d);
}

/* The bytes as a file the merge command can open twice by name. */
static int memfd_of(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("obs-fuzz", 0);
    size_t done = 0;
    if (fd < 0)
        return -1;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)w;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* `obs-report merge [--clock MODE] -o /dev/null A B`, in this process. */
static void fuzz_merge(const uint8_t *data, size_t size, size_t bsize, unsigned sel)
{
    static const char *const clocks[] = {"--clock=auto", "--clock=realtime", "--clock=monotonic"};
    char pa[64], pb[64], cmd[] = "merge", o[] = "-o", dn[] = "/dev/null", na[] = "--no-args", clk[24];
    char *argv[8];
    int fa = memfd_of(data, size, pa, sizeof pa), fb = memfd_of(data, bsize, pb, sizeof pb), argc = 0;
    if (fa >= 0 && fb >= 0) {
        snprintf(clk, sizeof clk, "%s", clocks[sel % 3]);
        argv[argc++] = cmd;
        argv[argc++] = clk;
        if (sel & 8)
            argv[argc++] = na;
        argv[argc++] = o;
        argv[argc++] = dn;
        argv[argc++] = pa;
        argv[argc++] = pb;
        argv[argc] = NULL;
        (void)report_cmd_merge.run(&report_cmd_merge, argc, argv);
    }
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
}

static void fuzz_html(struct obs_trace *a, struct obs_trace *b, unsigned sel)
{
    struct obs_trace *t[2] = {a, b};
    struct html_options o = {1, sel % 4};
    (void)report_html(sink(), t, 1, NULL);
    if (b != NULL)
        (void)report_html(sink(), t, 2, (sel & 4) ? &o : NULL);
}

static void fuzz_sqlite(const struct obs_trace *t)
{
#ifdef HAVE_SQLITE
    char err[512];
    (void)obs_sqlite_export(t, ":memory:", NULL, err, sizeof err);
#else
    (void)t;
#endif
}

/* The ranks side by side (trace_ranks.h) of A with A (every collective
 * matched twice: an incomplete pair of one rank given twice) and of A with
 * B; the model's invariants, then its tables, Perfetto trace and page. */
static void fuzz_ranks(struct obs_trace *a, struct obs_trace *b, unsigned sel)
{
    const struct obs_trace *t[3] = {a, b ? b : a, a};
    struct obs_ranks r;
    size_t i, k, n = 2 + (sel & 1);
    if (obs_ranks_build(t, n, &r) != 0)
        return;
    for (i = 0; i < r.ncolls; i++) {
        const struct obs_rank_coll *c = &r.colls[i];
        const struct obs_rank_part *p = obs_rank_coll_parts(&r, c);
        CHECK(c->nparts >= 1 && c->parts_first + c->nparts <= r.nparts);
        CHECK(c->straggler_input < r.ninputs && c->skew_ns == c->last_arrival - c->first_arrival);
        for (k = 0; k < c->nparts; k++) {
            CHECK(p[k].input < r.ninputs && p[k].coll < r.inputs[p[k].input].t->ncolls);
            CHECK(k == 0 || p[k - 1].arrive <= p[k].arrive);
        }
    }
    for (i = 0; i < r.nsteps; i++)
        CHECK(r.steps[i].slowest_input < r.ninputs && r.steps[i].ranks <= r.ninputs);
    {
        struct report_doc d;
        rdoc_begin(&d, sink(), (sel & 2) ? REPORT_JSON : REPORT_TABLE);
        (void)report_ranks(&r, 10, 1, &d);
        (void)rdoc_end(&d);
    }
    (void)obs_ranks_perfetto(&r, NULL, sink(), NULL);
    (void)report_ranks_html(sink(), &r, 10);
    obs_ranks_free(&r);
}

int obs_fuzz_trace(const uint8_t *data, size_t size, unsigned mask)
{
    struct obs_trace *a = NULL, *b = NULL;
    struct obs_perfetto_options popt = {obs_deflate_available() ? obs_deflate : NULL, 0};
    struct obs_json_options jopt = {1};
    char err[512];
    unsigned sel = size ? data[size - 1] : 0;
    /* B: the input cut at 1/2 .. 1 of its length, as a crash would leave it */
    size_t bsize = size / 2 + (size / 2) * (sel & 0xf0u) / 0x100u;

    if (obs_trace_load(data, size, "fuzz-a.obs", &a, err, sizeof err) != 0) {
        CHECK(a == NULL && err[0] != '\0');
        return 0;
    }
    check_model(a);
    if (mask & ((1u << OBS_FUZZ_compare) | (1u << OBS_FUZZ_html) | (1u << OBS_FUZZ_merge))) {
        if (obs_trace_load(data, bsize, "fuzz-b.obs", &b, err, sizeof err) == 0)
            check_model(b);
        else
            b = NULL;
    }
    if (mask & (1u << OBS_FUZZ_summary))
        fuzz_summary(a, sel);
    if (mask & (1u << OBS_FUZZ_csv)) {
        (void)obs_report_csv(a, sink());
        (void)obs_report_csv_collectives(a, sink());
        (void)obs_report_csv_phases(a, sink());
    }
    if (mask & (1u << OBS_FUZZ_json)) {
        (void)obs_report_json(a, sink(), NULL);
        (void)obs_report_json(a, sink(), &jopt);
    }
    if (mask & (1u << OBS_FUZZ_perfetto))
        (void)obs_report_perfetto(a, sink(), &popt, NULL);
    if (mask & (1u << OBS_FUZZ_phases)) {
        (void)obs_report_phase_tables(a, sink());
        (void)obs_report_phases_csv(a, sink());
        (void)obs_report_layer_table(a, sink()); /* LAYER records: docs/layers.md */
        (void)obs_report_layers_csv(a, sink());
        (void)obs_report_graph_layers_csv(a, sink());
        (void)obs_report_steps(a, sink(), (int)(sel & 1));
        {
            /* the serving view (docs/serving.md): automatic, and forced with either id size */
            struct obs_serving_options so = {(int)(sel >> 1 & 1), sel & 4 ? 8u : 4u};
            (void)obs_report_serving(a, NULL, sink());
            (void)obs_report_serving(a, &so, sink());
            (void)obs_report_serving_csv(a, &so, sink());
            {
                struct report_doc d;
                rdoc_begin(&d, sink(), REPORT_JSON);
                (void)report_serving(a, &so, &d);
                (void)rdoc_end(&d);
            }
        }
    }
    if (mask & (1u << OBS_FUZZ_suggest_phases))
        (void)obs_report_suggest_phases(a, sink());
    if (mask & (1u << OBS_FUZZ_gaps))
        fuzz_gaps_top(a, sel, 0);
    if (mask & (1u << OBS_FUZZ_top))
        fuzz_gaps_top(a, sel, 1);
    if ((mask & (1u << OBS_FUZZ_compare)) && b != NULL)
        fuzz_compare(a, b, sel);
    if (mask & (1u << OBS_FUZZ_sqlite))
        fuzz_sqlite(a);
    if (mask & (1u << OBS_FUZZ_html))
        fuzz_html(a, b, sel);
    if (mask & (1u << OBS_FUZZ_merge)) /* the other command of several traces */
        fuzz_ranks(a, b, sel);
    obs_trace_free(b);
    obs_trace_free(a);
    if (mask & (1u << OBS_FUZZ_merge))
        fuzz_merge(data, size, bsize, sel);
    return 0;
}

#ifdef OBS_LIBFUZZER
#ifndef OBS_FUZZ_TARGET
#error "build with -DOBS_FUZZ_TARGET=load|summary|...|all (tests/fuzz/run-trace-fuzz.sh)"
#endif
#define OBS_FUZZ_STR_(x) #x
#define OBS_FUZZ_STR(x) OBS_FUZZ_STR_(x)

/* The target built in: OBS_FUZZ_TARGET as a word (suggest_phases for suggest-phases). */
static unsigned target_mask(void)
{
    const char *name = OBS_FUZZ_STR(OBS_FUZZ_TARGET);
    unsigned i;
    if (strcmp(name, "all") == 0)
        return OBS_FUZZ_ALL;
    for (i = 0; i < OBS_FUZZ_TARGET_COUNT; i++) {
        char id[32];
        size_t k;
        snprintf(id, sizeof id, "%s", obs_fuzz_trace_names[i]);
        for (k = 0; id[k]; k++)
            if (id[k] == '-')
                id[k] = '_';
        if (strcmp(name, id) == 0)
            return 1u << i;
    }
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static unsigned mask;
    if (mask == 0)
        mask = target_mask();
    return obs_fuzz_trace(data, size, mask);
}
#endif
