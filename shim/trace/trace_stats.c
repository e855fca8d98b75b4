/* Duration statistics as nsys computes them (trace_stats.h). */
#include "trace_stats.h"

#include <math.h>
#include <string.h>

static void swap_u64(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

static uint64_t median_of_three(uint64_t a, uint64_t b, uint64_t c)
{
    if (a > b)
        swap_u64(&a, &b);
    if (b > c)
        b = c;
    return a > b ? a : b;
}

/* Put the k-th smallest of v[0..n) at v[k], with no larger value before it
 * (quickselect with a three-way partition, so runs of equal values are fast). */
static void select_kth(uint64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint64_t pivot = median_of_three(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
        while (i < gt) {
            if (v[i] < pivot)
                swap_u64(&v[lt++], &v[i++]);
            else if (v[i] > pivot)
                swap_u64(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return;
    }
}

void obs_duration_stats(uint64_t *v, size_t n, struct obs_duration_stats *s)
{
    size_t i;
    double mean = 0, m2 = 0;
    memset(s, 0, sizeof *s);
    if (n == 0)
        return;
    s->min = UINT64_MAX;
    for (i = 0; i < n; i++) { /* Welford: no overflow, no cancellation */
        double d = (double)v[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * ((double)v[i] - mean);
        s->total += v[i];
        if (v[i] < s->min)
            s->min = v[i];
        if (v[i] > s->max)
            s->max = v[i];
    }
    s->count = n;
    s->avg = (double)s->total / (double)n;
    s->stddev = n > 1 ? sqrt(m2 / (double)(n - 1)) : 0.0;
    select_kth(v, n, n / 2);
    if (n % 2) {
        s->median = (double)v[n / 2];
    } else {
        uint64_t upper = v[n / 2], lower = v[0];
        for (i = 1; i < n / 2; i++) /* the largest of the lower half */
            if (v[i] > lower)
                lower = v[i];
        s->median = ((double)lower + (double)upper) / 2.0;
    }
}

double obs_percentile(const uint64_t *v, size_t n, double p)
{
    double pos, frac;
    size_t lo;
    if (n == 0)
        return 0.0;
    pos = (double)(n - 1) * p / 100.0;
    lo = (size_t)floor(pos);
    frac = pos - (double)lo;
    if (lo + 1 >= n)
        return (double)v[n - 1];
    return (double)v[lo] + frac * ((double)v[lo + 1] - (double)v[lo]);
}
