/* The serving view as text: `obs-report serving --csv` and the short
 * section of the summary and of `obs-report phases` (trace_serving.h). */
#include <errno.h>
#include <string.h>

#include "trace_serving.h"

static int finish(FILE *out)
{
    if (fflush(out) != 0 || ferror(out)) {
        if (errno == 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static void csv_ms(FILE *out, int defined, double ns)
{
    if (defined)
        fprintf(out, "%.6f", ns / 1e6);
    fputc(',', out);
}

int obs_report_serving_csv(const struct obs_trace *t, const struct obs_serving_options *opt, FILE *out)
{
    struct obs_serving_stats s;
    size_t i;
    if (obs_serving_compute(t, opt, &s) != 0)
        return -1;
    fputs(OBS_SERVING_CSV_HEADER "\n", out);
    for (i = 0; i < s.nrows; i++) {
        const struct obs_iteration_row *r = &s.rows[i];
        fprintf(out, "%u,%u,%u,%s,%s,%s,", r->thread, r->generation, r->iteration, obs_iteration_kind_name(r->kind),
                r->kind_from, obs_iteration_source_name(r->source));
        if (r->step != UINT32_MAX)
            fprintf(out, "%u", r->step);
        fputc(',', out);
        csv_ms(out, 1, (double)(r->host_begin - (r->host_begin >= t->t_first ? t->t_first : r->host_begin)));
        csv_ms(out, 1, (double)(r->host_end - r->host_begin));
        csv_ms(out, r->gpu_timed, (double)(r->gpu_end - r->gpu_begin));
        csv_ms(out, r->has_gap, (double)r->gap_ns);
        csv_ms(out, r->has_gpu_idle, (double)r->gpu_idle_ns);
        fprintf(out, "%llu,%llu,%llu,%llu,%llu,%llu,", (unsigned long long)r->calls, (unsigned long long)r->launches,
                (unsigned long long)r->kernels, (unsigned long long)r->input_copies,
                (unsigned long long)r->input_bytes, (unsigned long long)r->first_input_bytes);
        if (r->has_tokens)
            fprintf(out, "%llu", (unsigned long long)r->tokens);
        fprintf(out, ",%s,%llu,", r->tokens_from, (unsigned long long)r->read_bytes);
        if (r->has_sequences)
            fprintf(out, "%llu", (unsigned long long)r->sequences);
        fprintf(out, ",%llu,%llu,%llu\n", (unsigned long long)r->first_blocks, (unsigned long long)r->first_seq,
                (unsigned long long)r->last_seq);
    }
    obs_serving_free(&s);
    return finish(out);
}

/* "p50 / p90 / p99 ms" of a spread, or "n/a". */
static const char *spread_text(const struct obs_serving_spread *sp, char *buf, size_t len)
{
    if (sp->n == 0)
        snprintf(buf, len, "n/a");
    else
        snprintf(buf, len, "%.3f / %.3f / %.3f", sp->p50_ns / 1e6, sp->p90_ns / 1e6, sp->p99_ns / 1e6);
    return buf;
}

static void kind_counts(const struct obs_serving_stats *s, FILE *out)
{
    static const unsigned order[] = {OBS_ITER_DECODE, OBS_ITER_MIXED, OBS_ITER_PROMPT, OBS_ITER_UNKNOWN};
    size_t k, shown = 0;
    for (k = 0; k < 4; k++) {
        if (s->by_kind[order[k]] == 0)
            continue;
        fprintf(out, "%s%zu %s", shown++ ? ", " : "", s->by_kind[order[k]], obs_iteration_kind_name(order[k]));
    }
}

static void gpu_idle_text(const struct obs_serving_stats *s, FILE *out)
{
    char buf[96];
    if (!s->gpu_time)
        fprintf(out, "GPU idle between iterations: n/a (no GPU time: OBS_GPU_TIME=steps or events measures it)");
    else if (!s->has_gpu_idle)
        fprintf(out, "GPU idle between iterations: n/a (no two iterations in a row with GPU time)");
    else
        fprintf(out, "GPU idle between iterations (ms, p50 / p90 / p99): %s; %.3f ms in all, %.1f%% of the GPU "
                     "wall time",
                spread_text(&s->gpu_idle, buf, sizeof buf), (double)s->gpu_idle.total_ns / 1e6,
                100.0 * s->gpu_idle_share);
}

static void tokens_text(const struct obs_serving_stats *s, FILE *out)
{
    fprintf(out, "tokens/s served: ");
    if (s->has_tokens_per_s)
        fprintf(out, "%.2f (%llu tokens fed, estimated from the input copies)", s->tokens_per_s,
                (unsigned long long)s->tokens);
    else
        fprintf(out, "n/a (the input copies tell the tokens of %zu of the %zu iterations)", s->rows_with_tokens,
                s->nrows);
    fprintf(out, "; generated/s: ");
    if (s->has_generated_per_s)
        fprintf(out, "%.2f (%llu sampled sequences)", s->generated_per_s, (unsigned long long)s->sequences);
    else
        fprintf(out, "n/a (the reads tell the sequences of %zu of the %zu iterations)", s->rows_with_sequences,
                s->nrows);
}

/* The section of stats s (s->nrows > 0). */
static void print_section(const struct obs_serving_stats *s_, FILE *out, int brief)
{
    const struct obs_serving_stats s = *s_;
    char buf[96], b2[96];
    size_t k;
    if (brief) { /* OBS_SERVING_BRIEF_LINES */
        fprintf(out, "\nServing loop: %zu iterations (", s.nrows);
        kind_counts(&s, out);
        fprintf(out, ") on %zu thread%s; iteration time (%s ms, p50 / p90 / p99): %s; host gap before one: %s, "
                     "%.1f%% of the wall time; no per-request TTFT (obs-report serving)\n",
                s.threads, s.threads == 1 ? "" : "s", s.gpu_time ? "GPU" : "host",
                spread_text(s.gpu_time ? &s.gpu[OBS_ITER_KINDS] : &s.host[OBS_ITER_KINDS], buf, sizeof buf),
                spread_text(&s.gaps, b2, sizeof b2), 100.0 * s.gap_share);
        fputc(' ', out);
        gpu_idle_text(&s, out);
        fprintf(out, "; ");
        tokens_text(&s, out);
        fputc('\n', out);
        return;
    }
    fprintf(out, "\nServing loop (%s: %zu iterations on %zu thread%s, %zu session%s; ids of %u bytes; "
                 "docs/serving.md)\n",
            s.forced ? "--serving: every prompt and decode step an iteration, and any ITERATION range"
                     : "ITERATION ranges",
            s.nrows, s.threads, s.threads == 1 ? "" : "s", s.sessions, s.sessions == 1 ? "" : "s", s.id_bytes);
    fprintf(out, " %-8s %10s %26s", "Kind", "Iterations", "Host span (ms) p50/p90/p99");
    if (s.gpu_time)
        fprintf(out, " %26s", "GPU span (ms) p50/p90/p99");
    fputc('\n', out);
    for (k = 0; k <= OBS_ITER_KINDS; k++) {
        size_t n = k < OBS_ITER_KINDS ? s.by_kind[k] : s.nrows;
        if (n == 0)
            continue;
        fprintf(out, " %-8s %10zu %26s", k < OBS_ITER_KINDS ? obs_iteration_kind_name(k) : "all", n,
                spread_text(&s.host[k], buf, sizeof buf));
        if (s.gpu_time)
            fprintf(out, " %26s", spread_text(&s.gpu[k], b2, sizeof b2));
        fputc('\n', out);
    }
    fprintf(out, " host gap before an iteration (ms, p50 / p90 / p99): %s; %.3f ms in all, %.1f%% of the wall time "
                 "(%.3f ms)\n ",
            spread_text(&s.gaps, buf, sizeof buf), (double)s.gaps.total_ns / 1e6, 100.0 * s.gap_share,
            (double)s.wall_ns / 1e6);
    gpu_idle_text(&s, out);
    fprintf(out, "\n ");
    tokens_text(&s, out);
    fprintf(out, "\n no per-request TTFT: a serving loop's generation is its batch, not a request (the program "
                 "does not mark its requests)\n");
}

int obs_report_serving_section(const struct obs_trace *t, FILE *out, int brief)
{
    struct obs_serving_stats s;
    if (!obs_trace_has_iterations(t))
        return 0;
    if (obs_serving_compute(t, NULL, &s) != 0)
        return -1;
    if (s.nrows)
        print_section(&s, out, brief);
    if (!brief)
        fprintf(out, " (per iteration: obs-report serving)\n");
    obs_serving_free(&s);
    return 0;
}

/* A time in ms, or "-". */
static const char *ms_or_dash(int defined, uint64_t ns, char *buf, size_t len)
{
    if (!defined)
        return "-";
    snprintf(buf, len, "%.3f", (double)ns / 1e6);
    return buf;
}

int obs_report_serving(const struct obs_trace *t, const struct obs_serving_options *opt, FILE *out)
{
    struct obs_serving_stats s;
    size_t i;
    int multithread = 0;
    if (obs_serving_compute(t, opt, &s) != 0)
        return -1;
    if (s.nrows == 0) {
        fprintf(out, "No serving loop: the trace has no ITERATION ranges%s (docs/serving.md; --serving takes every "
                     "prompt and decode step for an iteration)\n",
                s.forced ? ", prompts or decode steps" : "");
        obs_serving_free(&s);
        return finish(out);
    }
    print_section(&s, out, 0);
    for (i = 1; i < s.nrows; i++)
        multithread |= s.rows[i].thread != s.rows[0].thread;
    fprintf(out, "\nIterations (host span: first call begin to last call end; gap: from the previous one's end; "
                 "GPU span and idle: %s; tokens (estimated): first input copy / %u bytes; seqs (estimated): "
                 "sampled-ids read / %u bytes)\n",
            s.gpu_steps ? "OBS_GPU_TIME=steps range spans" : s.gpu_time ? "device times" : "n/a, no GPU time",
            s.id_bytes, s.id_bytes);
    fprintf(out, "%s%4s %5s %-7s %12s %10s %10s %9s %9s %8s %8s %7s %6s %5s\n", multithread ? "    Thread " : "",
            "Gen", "Iter", "Kind", "Begin (ms)", "Host (ms)", "GPU (ms)", "Gap (ms)", "Idle (ms)", "Launches",
            "In (B)", "Tokens", "Read", "Seqs");
    for (i = 0; i < s.nrows; i++) {
        const struct obs_iteration_row *r = &s.rows[i];
        char b1[32], b2[32], b3[32], b4[32], b5[32], tok[32] = "-", seq[32] = "-";
        if (r->has_tokens)
            snprintf(tok, sizeof tok, "%llu", (unsigned long long)r->tokens);
        if (r->has_sequences)
            snprintf(seq, sizeof seq, "%llu", (unsigned long long)r->sequences);
        if (multithread)
            fprintf(out, " %10u", r->thread);
        fprintf(out, "%4u %5u %-7s %12s %10s %10s %9s %9s %8llu %8llu %7s %6llu %5s\n", r->generation, r->iteration,
                obs_iteration_kind_name(r->kind),
                ms_or_dash(1, r->host_begin >= t->t_first ? r->host_begin - t->t_first : 0, b1, sizeof b1),
                ms_or_dash(1, r->host_end - r->host_begin, b2, sizeof b2),
                ms_or_dash(r->gpu_timed, r->gpu_end - r->gpu_begin, b3, sizeof b3),
                ms_or_dash(r->has_gap, r->gap_ns, b4, sizeof b4),
                ms_or_dash(r->has_gpu_idle, r->gpu_idle_ns, b5, sizeof b5), (unsigned long long)r->launches,
                (unsigned long long)r->input_bytes, tok, (unsigned long long)r->read_bytes, seq);
    }
    obs_serving_free(&s);
    return finish(out);
}
