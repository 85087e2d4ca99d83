/*
 * report.c - collecting iteration rows and turning them into the summary.
 *
 * Rows are kept in growable arrays (O(iterations x ranks) memory, written
 * once at the end so that iterations.csv can be replaced atomically).
 * Statistics use GSL: gsl_stats_mean/sd on the kept rows and quantiles on a
 * sorted copy.
 */
#include "stall/report.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"
#include "stall/results.h"

typedef struct report_row {
    int epoch;
    int64_t batch;
    stall_time iter_end, iter_time, stall_max, stall_min, wait_max, fetch_spread, start_spread;
    double wait_mean_s, compute_mean_s;
} report_row;

struct stall_report {
    int ranks;
    int64_t warmup, samples;
    int64_t samples_last; /* in each rank's last batch of an epoch; 0: samples */
    double threshold;
    report_row *rows;
    stall_time *stalls; /* [row * ranks + r]; NULL unless per-rank rows are kept */
    bool keep_ranks;
    size_t n, cap;
    stall_time *epoch_start, *epoch_end;
    int epochs, epoch_cap;
    int epoch0; /* added to every epoch written (stall_report_label_epochs) */
};

stall_report *stall_report_create(int ranks, int64_t warmup, double threshold, int64_t samples)
{
    stall_report *r = stall_xcalloc(1, sizeof *r);
    r->ranks = ranks;
    r->warmup = warmup;
    r->threshold = threshold;
    r->samples = samples;
    return r;
}

void stall_report_last_samples(stall_report *r, int64_t samples_last)
{
    r->samples_last = samples_last;
}

void stall_report_label_epochs(stall_report *r, int epoch0)
{
    r->epoch0 = epoch0;
}

void stall_report_keep_ranks(stall_report *r, bool keep)
{
    r->keep_ranks = keep;
}

void stall_report_destroy(stall_report *r)
{
    if (!r)
        return;
    free(r->rows);
    free(r->stalls);
    free(r->epoch_start);
    free(r->epoch_end);
    free(r);
}

void stall_report_add(stall_report *r, const stall_iter_row *row)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->rows = stall_xrealloc(r->rows, r->cap * sizeof *r->rows);
        if (r->keep_ranks)
            r->stalls = stall_xrealloc(r->stalls, r->cap * (size_t)r->ranks * sizeof *r->stalls);
    }
    r->rows[r->n] =
        (report_row){row->epoch,        row->batch,       row->iter_end,      row->iter_time,
                     row->stall_max,    row->stall_min,   row->wait_max,      row->fetch_spread,
                     row->start_spread, row->wait_mean_s, row->compute_mean_s};
    if (r->keep_ranks)
        memcpy(r->stalls + r->n * (size_t)r->ranks, row->stall,
               (size_t)r->ranks * sizeof *row->stall);
    r->n++;
}

void stall_report_epoch(stall_report *r, int epoch, stall_time start, stall_time end)
{
    (void)epoch; /* epochs are recorded in the order they finish */
    if (r->epochs >= r->epoch_cap) {
        int cap = 2 * r->epochs + 8;
        r->epoch_start = stall_xrealloc(r->epoch_start, (size_t)cap * sizeof *r->epoch_start);
        r->epoch_end = stall_xrealloc(r->epoch_end, (size_t)cap * sizeof *r->epoch_end);
        r->epoch_cap = cap;
    }
    r->epoch_start[r->epochs] = start;
    r->epoch_end[r->epochs] = end;
    r->epochs++;
}

size_t stall_report_rows(const stall_report *r)
{
    return r->n;
}

static stall_stat report_stat(double *v, size_t n)
{
    stall_stat s = {NAN, NAN, NAN, NAN, NAN};
    if (n == 0)
        return s;
    s.mean = gsl_stats_mean(v, 1, n);
    s.std = n > 1 ? gsl_stats_sd_m(v, 1, n, s.mean) : NAN;
    gsl_sort(v, 1, n);
    s.p50 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.50);
    s.p95 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.95);
    s.p99 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.99);
    return s;
}

void stall_report_summarize(const stall_report *r, stall_summary *out)
{
    memset(out, 0, sizeof *out);
    out->epochs = r->epochs;
    out->iterations = r->n;
    double *it = stall_xcalloc(r->n + 1, sizeof *it), *st = stall_xcalloc(r->n + 1, sizeof *st),
           *dl = stall_xcalloc(r->n + 1, sizeof *dl);
    size_t k = 0, over = 0;
    double wait = 0, stall_sum = 0, iter_sum = 0, compute_sum = 0;
    for (size_t i = 0; i < r->n; i++) {
        const report_row *w = &r->rows[i];
        stall_sum += stall_ns_to_s(w->stall_max);
        iter_sum += stall_ns_to_s(w->iter_time);
        compute_sum += w->compute_mean_s;
        if (w->batch < r->warmup)
            continue;
        it[k] = stall_ns_to_s(w->iter_time);
        st[k] = stall_ns_to_s(w->stall_max);
        dl[k] = stall_ns_to_s(w->stall_max - w->stall_min);
        if (dl[k] > r->threshold)
            over++;
        wait += w->wait_mean_s;
        k++;
    }
    out->kept = k;
    double epoch_sum = 0;
    for (int e = 0; e < r->epochs; e++)
        epoch_sum += stall_ns_to_s(r->epoch_end[e] - r->epoch_start[e]);
    out->epoch_time_s = r->epochs ? epoch_sum / r->epochs : NAN;
    out->total_time_s =
        r->epochs ? stall_ns_to_s(r->epoch_end[r->epochs - 1] - r->epoch_start[0]) : NAN;
    double batches = (double)r->n * r->ranks;
    out->throughput_batches_s = epoch_sum > 0 ? batches / epoch_sum : NAN;
    /* Each rank's last batch of an epoch holds samples_last (a partial one). */
    double short_by = r->samples_last > 0 && r->samples_last < r->samples
                          ? (double)r->epochs * r->ranks * (double)(r->samples - r->samples_last)
                          : 0.0;
    out->throughput_samples_s = r->samples > 0 && epoch_sum > 0
                                    ? (batches * (double)r->samples - short_by) / epoch_sum
                                    : NAN;
    out->iteration = report_stat(it, k);
    out->stall = report_stat(st, k);
    out->delay = report_stat(dl, k);
    out->mean_wait_s = k ? wait / (double)k : NAN;
    out->effective_delay_pct = k ? 100.0 * (double)over / (double)k : NAN;
    out->stall_share = iter_sum > 0 ? stall_sum / iter_sum : NAN;
    out->gpu_busy_share = epoch_sum > 0 ? compute_sum / epoch_sum : NAN;
    free(it);
    free(st);
    free(dl);
}

static int report_fill_iterations(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const stall_report *r = ctx;
    fputs(STALL_ITERATIONS_HEADER "\n", f);
    stall_time t0 =
        r->epochs ? r->epoch_start[0] : (r->n ? r->rows[0].iter_end - r->rows[0].iter_time : 0);
    /* Times are integer ns, printed exact; the two means are doubles,
     * printed as "%.9f" would. */
    stall_out w;
    stall_out_init(&w, f);
    for (size_t i = 0; i < r->n; i++) {
        const report_row *x = &r->rows[i];
        const stall_time ns[5] = {x->iter_end - t0, x->iter_time, x->stall_max,
                                  x->stall_max - x->stall_min, x->wait_max};
        char *o = stall_out_room(&w);
        o = stall_fmt_i64(o, r->epoch0 + x->epoch);
        *o++ = ',';
        o = stall_fmt_i64(o, x->batch);
        for (int k = 0; k < 5; k++) {
            *o++ = ',';
            o = stall_fmt_ns(o, ns[k]);
        }
        *o++ = ',';
        o = stall_fmt_f9(o, x->wait_mean_s);
        *o++ = ',';
        o = stall_fmt_f9(o, x->compute_mean_s);
        *o++ = ',';
        o = stall_fmt_ns(o, x->fetch_spread);
        *o++ = ',';
        o = stall_fmt_ns(o, x->start_spread);
        *o++ = '\n';
        w.o = o;
    }
    stall_out_flush(&w);
    return 0;
}

static int report_fill_ranks(FILE *f, void *ctx, stall_err *err)
{
    const stall_report *r = ctx;
    if (!r->keep_ranks)
        return stall_err_set(err, STALL_EINTERNAL, "report: per-rank rows were not kept");
    fputs(STALL_RANKS_HEADER "\n", f);
    stall_out w;
    stall_out_init(&w, f);
    for (size_t i = 0; i < r->n; i++) {
        const report_row *x = &r->rows[i];
        const stall_time *st = r->stalls + i * (size_t)r->ranks;
        /* "epoch,batch," once per batch, copied for each rank. */
        char key[2 * STALL_FMT_MAX];
        char *k = stall_fmt_i64(key, r->epoch0 + x->epoch);
        *k++ = ',';
        k = stall_fmt_i64(k, x->batch);
        *k++ = ',';
        size_t nk = (size_t)(k - key);
        for (int g = 0; g < r->ranks; g++) {
            char *o = stall_out_room(&w);
            memcpy(o, key, nk);
            o = stall_fmt_i64(o + nk, g);
            *o++ = ',';
            o = stall_fmt_ns(o, st[g]);
            *o++ = '\n';
            w.o = o;
        }
    }
    stall_out_flush(&w);
    return 0;
}

int stall_report_write_ranks(const stall_report *r, const char *path, stall_err *err)
{
    return stall_write_atomic(path, report_fill_ranks, (void *)r, err);
}

int stall_report_write_iterations(const stall_report *r, const char *path, stall_err *err)
{
    return stall_write_atomic(path, report_fill_iterations, (void *)r, err);
}

void stall_summary_header(FILE *f)
{
    fputs("epochs,iterations,kept,epoch_time_s,total_time_s,throughput_batches_s,"
          "throughput_samples_s,mean_iteration_s,std_iteration_s,p50_iteration_s,"
          "p95_iteration_s,p99_iteration_s,mean_stall_s,std_stall_s,p50_stall_s,p95_stall_s,"
          "p99_stall_s,mean_delay_s,std_delay_s,p50_delay_s,p95_delay_s,p99_delay_s,"
          "mean_barrier_wait_s,effective_delay_pct,stall_share,gpu_busy_share",
          f);
}

static void report_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",", f);
    else
        fprintf(f, ",%.9g", v);
}

static void report_stat_fields(FILE *f, const stall_stat *s)
{
    report_num(f, s->mean);
    report_num(f, s->std);
    report_num(f, s->p50);
    report_num(f, s->p95);
    report_num(f, s->p99);
}

void stall_summary_fields(FILE *f, const stall_summary *s)
{
    fprintf(f, "%d,%zu,%zu", s->epochs, s->iterations, s->kept);
    report_num(f, s->epoch_time_s);
    report_num(f, s->total_time_s);
    report_num(f, s->throughput_batches_s);
    report_num(f, s->throughput_samples_s);
    report_stat_fields(f, &s->iteration);
    report_stat_fields(f, &s->stall);
    report_stat_fields(f, &s->delay);
    report_num(f, s->mean_wait_s);
    report_num(f, s->effective_delay_pct);
    report_num(f, s->stall_share);
    report_num(f, s->gpu_busy_share);
}
