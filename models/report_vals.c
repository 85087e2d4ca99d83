/*
 * report_vals.c - the kept iterations' values and their statistics, in
 * memory up to a limit and from an unlinked temporary file beyond it
 * (report_int.h says why the numbers are the same either way).
 */
#define _GNU_SOURCE /* pread */
#include "report_int.h"

#include <errno.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/io.h"

void rv_init(rv_store *s, size_t limit)
{
    memset(s, 0, sizeof *s);
    s->limit = limit ? limit : 1;
    s->fd = -1;
    for (int c = 0; c < RV_COLS; c++) {
        s->min[c] = INT64_MAX;
        s->max[c] = INT64_MIN;
    }
}

void rv_free(rv_store *s)
{
    free(s->buf);
    if (s->fd >= 0)
        close(s->fd);
    s->buf = NULL;
    s->fd = -1;
}

static int rv_open_spill(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char *path = stall_path_join(dir, "stallsim-report-XXXXXX");
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    free(path);
    return fd;
}

static bool rv_write_all(int fd, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

/* Moves buf's rows to the spill (creating it); false when there is none
 * (the caller keeps them in memory instead). */
static bool rv_spill(rv_store *s)
{
    if (s->fd < 0 && s->n == s->nbuf)
        s->fd = rv_open_spill();
    if (s->fd < 0)
        return false;
    if (!rv_write_all(s->fd, s->buf, s->nbuf * RV_COLS * sizeof *s->buf))
        s->io_failed = true;
    s->nbuf = 0;
    return true;
}

void rv_add(rv_store *s, const int64_t v[RV_COLS])
{
    if (s->nbuf == s->cap && !(s->cap >= s->limit && rv_spill(s))) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        if (cap > s->limit && s->cap < s->limit)
            cap = s->limit;
        s->buf = stall_xrealloc(s->buf, cap * RV_COLS * sizeof *s->buf);
        s->cap = cap;
    }
    for (int c = 0; c < RV_COLS; c++) {
        s->buf[s->nbuf * RV_COLS + (size_t)c] = v[c];
        if (v[c] < s->min[c])
            s->min[c] = v[c];
        if (v[c] > s->max[c])
            s->max[c] = v[c];
    }
    s->nbuf++;
    s->n++;
}

static const double rv_q[3] = {0.50, 0.95, 0.99};

/* gsl_stats_quantile_from_sorted_data's arithmetic: index q (n - 1), its
 * integer part lhs, and between the order statistics lo (rank lhs) and hi
 * (rank lhs + 1); lo alone when lhs is the last. */
static size_t rv_lhs(double q, size_t n)
{
    return (size_t)(int)(q * (double)(n - 1));
}

static double rv_interp(double q, size_t n, int64_t lo, int64_t hi)
{
    const double index = q * (double)(n - 1);
    const size_t lhs = rv_lhs(q, n);
    const double delta = index - (double)lhs;
    return lhs == n - 1 ? stall_ns_to_s(lo)
                        : (1 - delta) * stall_ns_to_s(lo) + delta * stall_ns_to_s(hi);
}

static void rv_swap(int64_t *a, int64_t *b)
{
    int64_t t = *a;
    *a = *b;
    *b = t;
}

/* Moves the k-th smallest of v[lo, hi) to v[k], with nothing larger before
 * it and nothing smaller after it (quickselect: Hoare's partition about
 * the median of three, kept at v[lo] so that both parts are non-empty;
 * insertion sort below 16). Expected O(hi - lo). */
static void rv_nth(int64_t *v, size_t lo, size_t hi, size_t k)
{
    while (hi - lo > 16) {
        size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        /* The median of v[lo], v[mid], v[last] into v[lo]. */
        if (v[mid] > v[last])
            rv_swap(&v[mid], &v[last]);
        if (v[lo] > v[last])
            rv_swap(&v[lo], &v[last]);
        if (v[mid] > v[lo])
            rv_swap(&v[mid], &v[lo]);
        const int64_t pivot = v[lo];
        size_t i = lo - 1, j = hi;
        for (;;) {
            do
                i++;
            while (v[i] < pivot);
            do
                j--;
            while (v[j] > pivot);
            if (i >= j)
                break;
            rv_swap(&v[i], &v[j]);
        }
        /* v[lo, j] <= pivot <= v[j + 1, hi), lo <= j < hi - 1. */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
    for (size_t i = lo + 1; i < hi; i++) {
        int64_t x = v[i];
        size_t j = i;
        for (; j > lo && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* In memory: GSL's mean and sd on the column, as the report always
 * computed them. The quantiles need only the order statistics at 6 ranks,
 * not the column sorted (gsl_sort, once the larger part of a sweep point's
 * summary): they are selected in rank order on the integer values, each
 * from the part above the one before. ns -> s is monotonic, so the k-th
 * smallest in seconds is the k-th smallest in ns, converted: the same bits
 * as gsl_stats_quantile_from_sorted_data on the sorted seconds. */
static void rv_stats_held(const rv_store *s, stall_stat out[RV_COLS])
{
    size_t n = s->n;
    double *v = stall_xcalloc(n + 1, sizeof *v);
    int64_t *w = stall_xcalloc(n + 1, sizeof *w);
    for (int c = 0; c < RV_COLS; c++) {
        for (size_t i = 0; i < n; i++) {
            w[i] = s->buf[i * RV_COLS + (size_t)c];
            v[i] = stall_ns_to_s(w[i]);
        }
        stall_stat *o = &out[c];
        o->mean = gsl_stats_mean(v, 1, n);
        o->std = n > 1 ? gsl_stats_sd_m(v, 1, n, o->mean) : NAN;
        /* Ranks lhs and lhs + 1 of each quantile, ascending (q ascends). */
        size_t from = 0;
        int64_t val[3][2];
        for (int q = 0; q < 3; q++) {
            size_t lhs = rv_lhs(rv_q[q], n), next = lhs + 1 < n ? lhs + 1 : lhs;
            if (lhs >= from) {
                rv_nth(w, from, n, lhs);
                from = lhs + 1;
            }
            if (next >= from) {
                rv_nth(w, from, n, next);
                from = next + 1;
            }
            val[q][0] = w[lhs];
            val[q][1] = w[next];
        }
        o->p50 = rv_interp(rv_q[0], n, val[0][0], val[0][1]);
        o->p95 = rv_interp(rv_q[1], n, val[1][0], val[1][1]);
        o->p99 = rv_interp(rv_q[2], n, val[2][0], val[2][1]);
    }
    free(w);
    free(v);
}

/* ---- from the spill ---- */

typedef void (*rv_visit_fn)(void *ctx, const int64_t *rows, size_t n, size_t first);

/* Reads the spill in blocks of buf's size, calling visit on each. */
static int rv_pass(rv_store *s, rv_visit_fn visit, void *ctx)
{
    size_t row = RV_COLS * sizeof *s->buf;
    off_t off = 0;
    for (size_t done = 0; done < s->n;) {
        size_t want = s->n - done < s->cap ? s->n - done : s->cap;
        size_t bytes = want * row, got = 0;
        while (got < bytes) {
            ssize_t r = pread(s->fd, (char *)s->buf + got, bytes - got, off + (off_t)got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                if (r == 0)
                    errno = EIO;
                return -1;
            }
            got += (size_t)r;
        }
        visit(ctx, s->buf, want, done);
        off += (off_t)bytes;
        done += want;
    }
    return 0;
}

/* GSL's running mean (statistics/mean_source.c), column by column. */
typedef struct rv_moments {
    long double acc[RV_COLS];
    double mean[RV_COLS];
} rv_moments;

static void rv_visit_mean(void *ctx, const int64_t *rows, size_t n, size_t first)
{
    rv_moments *m = ctx;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < RV_COLS; c++) {
            double x = stall_ns_to_s(rows[i * RV_COLS + (size_t)c]);
            m->acc[c] += (x - m->acc[c]) / (first + i + 1);
        }
}

/* GSL's compute_variance (statistics/variance_source.c) about mean. */
static void rv_visit_var(void *ctx, const int64_t *rows, size_t n, size_t first)
{
    rv_moments *m = ctx;
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < RV_COLS; c++) {
            const long double d = (stall_ns_to_s(rows[i * RV_COLS + (size_t)c]) - m->mean[c]);
            m->acc[c] += (d * d - m->acc[c]) / (first + i + 1);
        }
}

/* Radix selection of the order statistics a quantile interpolates: key =
 * value - column minimum (unsigned, so its order is the value's), decided
 * RV_DIGIT bits a pass from the top; every rank of a column shares the
 * pass's shift, and the ranks whose prefixes agree share a histogram. */
#define RV_DIGIT 11
#define RV_BUCKETS (1u << RV_DIGIT)
#define RV_RANKS 6 /* lhs and lhs + 1 of three quantiles */

typedef struct rv_col {
    int nr;                /* ranks wanted */
    size_t rank[RV_RANKS]; /* what is left of each rank within its prefix */
    uint64_t prefix[RV_RANKS];
    int group[RV_RANKS]; /* which histogram */
    uint64_t gprefix[RV_RANKS];
    int ng;
    int shift, d;   /* bits below the prefix; bits decided this pass */
    uint64_t *hist; /* [ng][RV_BUCKETS] */
} rv_col;

typedef struct rv_select {
    rv_col col[RV_COLS];
    int64_t min[RV_COLS];
} rv_select;

static uint64_t rv_high(uint64_t key, int shift)
{
    return shift >= 64 ? 0 : key >> shift;
}

static void rv_visit_select(void *ctx, const int64_t *rows, size_t n, size_t first)
{
    (void)first;
    rv_select *x = ctx;
    for (int c = 0; c < RV_COLS; c++) {
        rv_col *k = &x->col[c];
        if (k->shift == 0)
            continue;
        int low = k->shift - k->d;
        uint64_t mask = ((uint64_t)1 << k->d) - 1;
        for (size_t i = 0; i < n; i++) {
            uint64_t key = (uint64_t)rows[i * RV_COLS + (size_t)c] - (uint64_t)x->min[c];
            uint64_t h = rv_high(key, k->shift);
            for (int g = 0; g < k->ng; g++)
                if (h == k->gprefix[g])
                    k->hist[(size_t)g * RV_BUCKETS + ((key >> low) & mask)]++;
        }
    }
}

static int rv_bits(uint64_t range)
{
    int b = 0;
    while (b < 64 && rv_high(range, b) != 0)
        b++;
    return b;
}

/* Finds, for each column, the values at the ranks its quantiles need. */
static int rv_select_ranks(rv_store *s, rv_select *x, int64_t val[RV_COLS][RV_RANKS])
{
    for (;;) {
        bool more = false;
        for (int c = 0; c < RV_COLS; c++) {
            rv_col *k = &x->col[c];
            if (k->shift == 0)
                continue;
            more = true;
            k->d = k->shift < RV_DIGIT ? k->shift : RV_DIGIT;
            k->ng = 0;
            for (int r = 0; r < k->nr; r++) {
                int g = 0;
                while (g < k->ng && k->gprefix[g] != k->prefix[r])
                    g++;
                if (g == k->ng)
                    k->gprefix[k->ng++] = k->prefix[r];
                k->group[r] = g;
            }
            memset(k->hist, 0, (size_t)k->ng * RV_BUCKETS * sizeof *k->hist);
        }
        if (!more)
            break;
        if (rv_pass(s, rv_visit_select, x) != 0)
            return -1;
        for (int c = 0; c < RV_COLS; c++) {
            rv_col *k = &x->col[c];
            if (k->shift == 0)
                continue;
            for (int r = 0; r < k->nr; r++) {
                const uint64_t *h = k->hist + (size_t)k->group[r] * RV_BUCKETS;
                uint64_t b = 0;
                while (k->rank[r] >= h[b]) {
                    k->rank[r] -= h[b];
                    b++;
                }
                k->prefix[r] = (k->prefix[r] << k->d) | b;
            }
            k->shift -= k->d;
        }
    }
    for (int c = 0; c < RV_COLS; c++)
        for (int r = 0; r < x->col[c].nr; r++)
            val[c][r] = (int64_t)((uint64_t)x->min[c] + x->col[c].prefix[r]);
    return 0;
}

static int rv_stats_spilled(rv_store *s, stall_stat out[RV_COLS])
{
    size_t n = s->n;
    rv_moments m = {0};
    if (rv_pass(s, rv_visit_mean, &m) != 0)
        return -1;
    for (int c = 0; c < RV_COLS; c++) {
        m.mean[c] = (double)m.acc[c];
        m.acc[c] = 0;
        out[c].mean = m.mean[c];
    }
    if (n > 1 && rv_pass(s, rv_visit_var, &m) != 0)
        return -1;
    for (int c = 0; c < RV_COLS; c++) {
        const double var = (double)m.acc[c];
        out[c].std = n > 1 ? sqrt(var * ((double)n / (double)(n - 1))) : NAN;
    }
    /* gsl_stats_quantile_from_sorted_data: index f (n - 1), its integer
     * part lhs, and sorted[lhs] alone when lhs is the last. */
    rv_select x;
    memset(&x, 0, sizeof x);
    size_t lhs[3];
    for (int q = 0; q < 3; q++)
        lhs[q] = rv_lhs(rv_q[q], n);
    for (int c = 0; c < RV_COLS; c++) {
        rv_col *k = &x.col[c];
        x.min[c] = s->min[c];
        k->shift = rv_bits((uint64_t)s->max[c] - (uint64_t)s->min[c]);
        for (int q = 0; q < 3; q++) {
            k->rank[2 * q] = lhs[q];
            k->rank[2 * q + 1] = lhs[q] + 1 < n ? lhs[q] + 1 : lhs[q];
        }
        k->nr = RV_RANKS;
        k->hist = stall_xmalloc((size_t)RV_RANKS * RV_BUCKETS * sizeof *k->hist);
    }
    int64_t val[RV_COLS][RV_RANKS];
    int rc = rv_select_ranks(s, &x, val);
    for (int c = 0; c < RV_COLS; c++)
        free(x.col[c].hist);
    if (rc)
        return rc;
    for (int c = 0; c < RV_COLS; c++) {
        double *p[3] = {&out[c].p50, &out[c].p95, &out[c].p99};
        for (int q = 0; q < 3; q++)
            *p[q] = rv_interp(rv_q[q], n, val[c][2 * q], val[c][2 * q + 1]);
    }
    return 0;
}

int rv_stats(rv_store *s, stall_stat out[RV_COLS])
{
    for (int c = 0; c < RV_COLS; c++)
        out[c] = (stall_stat){NAN, NAN, NAN, NAN, NAN};
    if (s->n == 0)
        return 0;
    if (s->fd < 0) {
        rv_stats_held(s, out);
        return 0;
    }
    if (s->nbuf > 0)
        rv_spill(s);
    if (s->io_failed) {
        errno = errno ? errno : EIO;
        return -1;
    }
    return rv_stats_spilled(s, out);
}
