/*
 * report.c - collecting iteration rows and turning them into the summary.
 *
 * Two ways to keep a run's rows. Held (the default): rows are kept in
 * growable arrays (O(iterations x ranks) memory) and written at the end
 * (stall_report_write_*). Streamed (stall_report_stream): each row is
 * written as it comes to the temporary file of iterations.csv (and
 * ranks.csv), renamed into place by stall_report_finish, and nothing of it
 * is kept but three numbers per kept iteration for the statistics
 * (report_vals.c, which moves them to a temporary file past a limit).
 * The bytes written and the summary are the same either way. The sums are
 * taken as rows arrive, in row order, as the held summary always took them.
 */
#include "stall/report.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "stall/io.h"
#include "stall/results.h"

typedef struct report_row {
    int epoch;
    int64_t batch;
    stall_time iter_end, iter_time, stall_max, stall_min, wait_max, fetch_spread, start_spread;
    double wait_mean_s, compute_mean_s;
} report_row;

/* Kept rows before spilling the statistics' values, when streamed
 * (STALL_REPORT_HOLD_ROWS overrides it: the tests force the spill). */
#define REPORT_HOLD_ROWS 65536

enum { REPORT_HELD, REPORT_STREAMED };

struct stall_report {
    int ranks;
    int64_t warmup, samples;
    int64_t samples_last; /* in each rank's last batch of an epoch; 0: samples */
    double threshold;
    int how;            /* REPORT_HELD or REPORT_STREAMED */
    report_row *rows;   /* held only */
    stall_time *stalls; /* [row * ranks + r]; NULL unless per-rank rows are kept */
    bool keep_ranks;
    size_t n, cap;
    stall_time *epoch_start, *epoch_end;
    int epochs, epoch_cap;
    int epoch0; /* added to every epoch written (stall_report_label_epochs) */
    /* The summary's sums, in row order, and the kept rows' values. */
    double stall_sum, iter_sum, compute_sum, wait_sum;
    double first_stall_sum; /* the stall of each epoch's batch 0 */
    size_t kept, over;
    rv_store vals;
    /* Streamed: the open files and the start rows are written from. */
    stall_atomic it_file, rk_file;
    stall_out *it_w, *rk_w;
    stall_time t0;
    bool finished;
    stall_stat stats[RV_COLS]; /* set by stall_report_finish */
};

stall_report *stall_report_create(int ranks, int64_t warmup, double threshold, int64_t samples)
{
    stall_report *r = stall_xcalloc(1, sizeof *r);
    r->ranks = ranks;
    r->warmup = warmup;
    r->threshold = threshold;
    r->samples = samples;
    rv_init(&r->vals, SIZE_MAX);
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
    stall_atomic_abort(&r->it_file);
    stall_atomic_abort(&r->rk_file);
    free(r->it_w);
    free(r->rk_w);
    rv_free(&r->vals);
    free(r->rows);
    free(r->stalls);
    free(r->epoch_start);
    free(r->epoch_end);
    free(r);
}

/* One row of iterations.csv at w, times relative to t0. */
static void report_row_text(stall_out *w, const report_row *x, stall_time t0, int epoch0)
{
    /* Times are integer ns, printed exact; the two means are doubles,
     * printed as "%.9f" would. */
    const stall_time ns[5] = {x->iter_end - t0, x->iter_time, x->stall_max,
                              x->stall_max - x->stall_min, x->wait_max};
    char *o = stall_out_room(w);
    o = stall_fmt_i64(o, epoch0 + x->epoch);
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
    w->o = o;
}

/* The ranks' rows of ranks.csv for one iteration at w. */
static void report_ranks_text(stall_out *w, const report_row *x, const stall_time *st, int ranks,
                              int epoch0)
{
    /* "epoch,batch," once per batch, copied for each rank. */
    char key[2 * STALL_FMT_MAX];
    char *k = stall_fmt_i64(key, epoch0 + x->epoch);
    *k++ = ',';
    k = stall_fmt_i64(k, x->batch);
    *k++ = ',';
    size_t nk = (size_t)(k - key);
    for (int g = 0; g < ranks; g++) {
        char *o = stall_out_room(w);
        memcpy(o, key, nk);
        o = stall_fmt_i64(o + nk, g);
        *o++ = ',';
        o = stall_fmt_ns(o, st[g]);
        *o++ = '\n';
        w->o = o;
    }
}

void stall_report_add(stall_report *r, const stall_iter_row *row)
{
    const report_row x = {row->epoch,       row->batch,         row->iter_end,
                          row->iter_time,   row->stall_max,     row->stall_min,
                          row->wait_max,    row->fetch_spread,  row->start_spread,
                          row->wait_mean_s, row->compute_mean_s};
    r->stall_sum += stall_ns_to_s(x.stall_max);
    if (x.batch == 0)
        r->first_stall_sum += stall_ns_to_s(x.stall_max);
    r->iter_sum += stall_ns_to_s(x.iter_time);
    r->compute_sum += x.compute_mean_s;
    if (x.batch >= r->warmup) {
        const int64_t v[RV_COLS] = {x.iter_time, x.stall_max, x.stall_max - x.stall_min};
        rv_add(&r->vals, v);
        if (stall_ns_to_s(v[2]) > r->threshold)
            r->over++;
        r->wait_sum += x.wait_mean_s;
        r->kept++;
    }
    if (r->how == REPORT_STREAMED) {
        if (r->n == 0)
            r->t0 = x.iter_end - x.iter_time;
        if (r->it_w)
            report_row_text(r->it_w, &x, r->t0, r->epoch0);
        if (r->rk_w)
            report_ranks_text(r->rk_w, &x, row->stall, r->ranks, r->epoch0);
        r->n++;
        return;
    }
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 1024;
        r->rows = stall_xrealloc(r->rows, r->cap * sizeof *r->rows);
        if (r->keep_ranks)
            r->stalls = stall_xrealloc(r->stalls, r->cap * (size_t)r->ranks * sizeof *r->stalls);
    }
    r->rows[r->n] = x;
    if (r->keep_ranks)
        memcpy(r->stalls + r->n * (size_t)r->ranks, row->stall,
               (size_t)r->ranks * sizeof *row->stall);
    r->n++;
}

static int report_open(stall_atomic *a, stall_out **w, const char *path, const char *header,
                       stall_err *err)
{
    int rc = stall_atomic_open(a, path, err);
    if (rc)
        return rc;
    *w = stall_xmalloc(sizeof **w);
    stall_out_init(*w, a->f);
    stall_out_str(*w, header);
    return 0;
}

int stall_report_stream(stall_report *r, const char *iterations, const char *ranks, stall_err *err)
{
    if (r->n > 0 || r->how == REPORT_STREAMED)
        return stall_err_set(err, STALL_EINTERNAL, "report: streamed after rows were added");
    r->how = REPORT_STREAMED;
    const char *env = getenv("STALL_REPORT_HOLD_ROWS");
    long long hold = env && *env ? atoll(env) : REPORT_HOLD_ROWS;
    rv_init(&r->vals, hold > 0 ? (size_t)hold : 1);
    int rc = 0;
    if (iterations)
        rc = report_open(&r->it_file, &r->it_w, iterations, STALL_ITERATIONS_HEADER "\n", err);
    if (rc == 0 && ranks)
        rc = report_open(&r->rk_file, &r->rk_w, ranks, STALL_RANKS_HEADER "\n", err);
    return rc;
}

static int report_close(stall_atomic *a, stall_out **w, stall_err *err)
{
    if (!*w)
        return 0;
    stall_out_flush(*w);
    free(*w);
    *w = NULL;
    return stall_atomic_commit(a, err);
}

int stall_report_finish(stall_report *r, stall_err *err)
{
    if (r->how != REPORT_STREAMED || r->finished)
        return stall_err_set(err, STALL_EINTERNAL, "report: finished twice or never streamed");
    r->finished = true;
    /* Rows were written from the first row's start; the held writer uses
     * the first epoch's, which every simulation makes the same. */
    if (r->n > 0 && r->epochs > 0 && r->epoch_start[0] != r->t0)
        return stall_err_set(err, STALL_EINTERNAL,
                             "report: the first row does not start at the first epoch's start");
    if (rv_stats(&r->vals, r->stats) != 0)
        return stall_err_set(err, STALL_EIO,
                             "report: temporary file of the statistics (TMPDIR): %s",
                             strerror(errno));
    int rc = report_close(&r->it_file, &r->it_w, err);
    if (rc == 0)
        rc = report_close(&r->rk_file, &r->rk_w, err);
    return rc;
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

void stall_report_summarize(const stall_report *r, stall_summary *out)
{
    memset(out, 0, sizeof *out);
    out->epochs = r->epochs;
    out->iterations = r->n;
    size_t k = r->kept;
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
    stall_stat st[RV_COLS];
    if (r->how == REPORT_STREAMED)
        memcpy(st, r->stats, sizeof st);
    else
        rv_stats((rv_store *)&r->vals, st); /* held: in memory, nothing changes */
    out->iteration = st[0];
    out->stall = st[1];
    out->delay = st[2];
    out->mean_wait_s = k ? r->wait_sum / (double)k : NAN;
    out->effective_delay_pct = k ? 100.0 * (double)r->over / (double)k : NAN;
    out->stall_share = r->iter_sum > 0 ? r->stall_sum / r->iter_sum : NAN;
    out->gpu_busy_share = epoch_sum > 0 ? r->compute_sum / epoch_sum : NAN;
    out->first_batch_stall_share = r->iter_sum > 0 ? r->first_stall_sum / r->iter_sum : NAN;
}

static int report_fill_iterations(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const stall_report *r = ctx;
    fputs(STALL_ITERATIONS_HEADER "\n", f);
    stall_time t0 =
        r->epochs ? r->epoch_start[0] : (r->n ? r->rows[0].iter_end - r->rows[0].iter_time : 0);
    stall_out w;
    stall_out_init(&w, f);
    for (size_t i = 0; i < r->n; i++)
        report_row_text(&w, &r->rows[i], t0, r->epoch0);
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
    for (size_t i = 0; i < r->n; i++)
        report_ranks_text(&w, &r->rows[i], r->stalls + i * (size_t)r->ranks, r->ranks, r->epoch0);
    stall_out_flush(&w);
    return 0;
}

int stall_report_write_ranks(const stall_report *r, const char *path, stall_err *err)
{
    if (r->how == REPORT_STREAMED)
        return stall_err_set(err, STALL_EINTERNAL, "report: streamed rows are not kept");
    return stall_write_atomic(path, report_fill_ranks, (void *)r, err);
}

int stall_report_write_iterations(const stall_report *r, const char *path, stall_err *err)
{
    if (r->how == REPORT_STREAMED)
        return stall_err_set(err, STALL_EINTERNAL, "report: streamed rows are not kept");
    return stall_write_atomic(path, report_fill_iterations, (void *)r, err);
}

void stall_summary_header(FILE *f)
{
    fputs("epochs,iterations,kept,epoch_time_s,total_time_s,throughput_batches_s,"
          "throughput_samples_s,mean_iteration_s,std_iteration_s,p50_iteration_s,"
          "p95_iteration_s,p99_iteration_s,mean_stall_s,std_stall_s,p50_stall_s,p95_stall_s,"
          "p99_stall_s,mean_delay_s,std_delay_s,p50_delay_s,p95_delay_s,p99_delay_s,"
          "mean_barrier_wait_s,effective_delay_pct,stall_share,gpu_busy_share,"
          "first_batch_stall_share",
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
    report_num(f, s->first_batch_stall_share);
}
