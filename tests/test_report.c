/*
 * report: iterations.csv keeps a fixed width whatever the rank count; the
 * per-rank detail goes to the long ranks.csv only when asked (auto: up to
 * 64 ranks), and holds exactly the stalls that were added.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <stdint.h>

#include "stall/config.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/report.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "models/report_int.h"

#include "tmpdir.h"

static char rdir[] = "/tmp/stall_report_XXXXXX";
static void rp_setup(void)
{
    tmpdir_make(rdir);
}
static void rp_teardown(void)
{
    tmpdir_remove(rdir);
}
TestSuite(report, .init = rp_setup, .fini = rp_teardown);

static stall_report *make(int ranks, int rows, bool keep)
{
    stall_report *r = stall_report_create(ranks, 0, 0.03, 0);
    stall_report_keep_ranks(r, keep);
    stall_time *st = malloc((size_t)ranks * sizeof *st);
    for (int k = 0; k < rows; k++) {
        for (int g = 0; g < ranks; g++)
            st[g] = (stall_time)(k * 1000 + g) * 1000;
        stall_iter_row row = {.epoch = 0,
                              .batch = k,
                              .iter_end = (k + 1) * 1000000,
                              .iter_time = 1000000,
                              .stall_max = (stall_time)(k * 1000 + ranks - 1) * 1000,
                              .stall_min = (stall_time)(k * 1000) * 1000,
                              .stall = st};
        stall_report_add(r, &row);
    }
    stall_report_epoch(r, 0, 0, rows * 1000000);
    free(st);
    return r;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    for (; *s; s++)
        n += *s == c;
    return n;
}

Test(report, iterations_csv_width_does_not_grow_with_ranks)
{
    for (int ranks = 1; ranks <= 1000; ranks *= 10) {
        stall_report *r = make(ranks, 3, false);
        char path[600];
        snprintf(path, sizeof path, "%s/it%d.csv", rdir, ranks);
        stall_err err = {0};
        cr_assert_eq(stall_report_write_iterations(r, path, &err), 0, "%s", err.msg);
        FILE *f = fopen(path, "r");
        char line[4096];
        cr_assert_not_null(fgets(line, sizeof line, f));
        cr_expect_eq(count_char(line, ','), 10, "%d ranks: header %s", ranks, line);
        cr_expect(strstr(line, "stall_r") == NULL, "%s", line);
        fclose(f);
        /* Without kept rows, ranks.csv is refused rather than written empty. */
        snprintf(path, sizeof path, "%s/r%d.csv", rdir, ranks);
        cr_expect_neq(stall_report_write_ranks(r, path, &err), 0);
        stall_report_destroy(r);
    }
}

Test(report, ranks_csv_holds_every_rank_of_every_row)
{
    int ranks = 5, rows = 4;
    stall_report *r = make(ranks, rows, true);
    char path[600];
    snprintf(path, sizeof path, "%s/ranks.csv", rdir);
    stall_err err = {0};
    cr_assert_eq(stall_report_write_ranks(r, path, &err), 0, "%s", err.msg);
    FILE *f = fopen(path, "r");
    char line[256];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect_str_eq(line, "epoch,batch,rank,stall_s\n");
    int n = 0, e, g;
    long long k;
    double s;
    while (fscanf(f, "%d,%lld,%d,%lf\n", &e, &k, &g, &s) == 4) {
        cr_expect_eq(k, n / ranks);
        cr_expect_eq(g, n % ranks);
        cr_expect(llround(s * 1e9) == (k * 1000 + g) * 1000, "row %d: %.9f", n, s);
        n++;
    }
    fclose(f);
    cr_expect_eq(n, ranks * rows);
    stall_report_destroy(r);
}

Test(report, per_rank_auto_stops_at_64_ranks)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_expect(stall_job_per_rank(&cfg, 64));
    cr_expect(!stall_job_per_rank(&cfg, 65));
    cr_assert_eq(stall_config_set(&cfg, "report.per_rank=true", &err), 0, "%s", err.msg);
    cr_expect(stall_job_per_rank(&cfg, 100000));
    cr_assert_eq(stall_config_set(&cfg, "report.per_rank=false", &err), 0, "%s", err.msg);
    cr_expect(!stall_job_per_rank(&cfg, 1));
    /* Seed mode writes no iterations.csv: the key is refused there. */
    cr_assert_eq(stall_config_set(&cfg, "scenario.mode=seed", &err), 0, "%s", err.msg);
    cr_expect_neq(stall_config_check(&cfg, &err), 0);
    cr_expect(strstr(err.msg, "--set report.per_rank") != NULL, "%s", err.msg);
}

/* ---- streamed rows (stall_report_stream): the same bytes and summary ---- */

/* A run's rows with what the statistics find hard: many tied stalls (most
 * are 0), a wide range (ns to minutes), warm-up rows left out, two epochs,
 * and a partial last batch. Deterministic (a 64-bit LCG). */
static void feed(stall_report *r, int ranks, int rows)
{
    uint64_t x = 88172645463325252ull;
    stall_time *st = malloc((size_t)ranks * sizeof *st);
    stall_time t = 5000, start = t;
    for (int k = 0; k < rows; k++) {
        int e = k < rows / 2 ? 0 : 1;
        int64_t b = e ? k - rows / 2 : k;
        if (k == rows / 2)
            start = t;
        stall_time smax = 0, smin = INT64_MAX;
        for (int g = 0; g < ranks; g++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t u = x >> 11;
            stall_time s = u % 3 ? 0 : (stall_time)(u % 4000000);
            if (u % 97 == 0)
                s = (stall_time)(u % 90000000000ull);
            st[g] = s;
            smax = s > smax ? s : smax;
            smin = s < smin ? s : smin;
        }
        stall_time it = 1000000 + smax + (stall_time)(x % 777);
        t += it;
        stall_iter_row row = {.epoch = e,
                              .batch = b,
                              .iter_end = t,
                              .iter_time = it,
                              .stall_max = smax,
                              .stall_min = smin,
                              .wait_max = smax - smin,
                              .wait_mean_s = (double)(x % 1000003) / 7e6,
                              .compute_mean_s = 1e-3 + (double)(x % 101) / 3e9,
                              .fetch_spread = (stall_time)(x % 5000),
                              .start_spread = (stall_time)(x % 7000),
                              .stall = st};
        stall_report_add(r, &row);
        if (k == rows / 2 - 1 || k == rows - 1)
            stall_report_epoch(r, e, e ? start : 5000, t);
    }
    free(st);
}

static char *slurp(const char *path)
{
    char *s = stall_read_file(path, NULL);
    cr_assert_not_null(s, "%s: cannot read", path);
    return s;
}

static bool same_num(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void expect_same_stat(const stall_stat *a, const stall_stat *b, const char *what,
                             const char *hold)
{
    cr_expect(same_num(a->mean, b->mean), "%s mean (hold %s): %.17g vs %.17g", what, hold, a->mean,
              b->mean);
    cr_expect(same_num(a->std, b->std), "%s std (hold %s): %.17g vs %.17g", what, hold, a->std,
              b->std);
    cr_expect(same_num(a->p50, b->p50), "%s p50 (hold %s): %.17g vs %.17g", what, hold, a->p50,
              b->p50);
    cr_expect(same_num(a->p95, b->p95), "%s p95 (hold %s): %.17g vs %.17g", what, hold, a->p95,
              b->p95);
    cr_expect(same_num(a->p99, b->p99), "%s p99 (hold %s): %.17g vs %.17g", what, hold, a->p99,
              b->p99);
}

Test(report, streamed_files_and_summary_equal_the_held_ones)
{
    /* Held in memory, spilled after 1 and 37 rows, and held below the
     * limit; 0, 1, 2 and many kept rows (warm-up 5 per epoch). */
    const char *holds[] = {"1", "37", "100000"};
    const int sizes[] = {6, 11, 12, 4000};
    stall_err err = {0};
    for (size_t h = 0; h < sizeof holds / sizeof *holds; h++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            int ranks = 3, rows = sizes[z];
            stall_report *held = stall_report_create(ranks, 5, 0.0005, 32);
            stall_report_keep_ranks(held, true);
            stall_report_label_epochs(held, 1);
            stall_report_last_samples(held, 7);
            feed(held, ranks, rows);
            char hi[600], hr[600], si[600], sr[600];
            snprintf(hi, sizeof hi, "%s/held_it.csv", rdir);
            snprintf(hr, sizeof hr, "%s/held_rk.csv", rdir);
            snprintf(si, sizeof si, "%s/str_it.csv", rdir);
            snprintf(sr, sizeof sr, "%s/str_rk.csv", rdir);
            cr_assert_eq(stall_report_write_iterations(held, hi, &err), 0, "%s", err.msg);
            cr_assert_eq(stall_report_write_ranks(held, hr, &err), 0, "%s", err.msg);
            setenv("STALL_REPORT_HOLD_ROWS", holds[h], 1);
            stall_report *str = stall_report_create(ranks, 5, 0.0005, 32);
            stall_report_label_epochs(str, 1);
            stall_report_last_samples(str, 7);
            cr_assert_eq(stall_report_stream(str, si, sr, &err), 0, "%s", err.msg);
            unsetenv("STALL_REPORT_HOLD_ROWS");
            feed(str, ranks, rows);
            cr_assert_eq(stall_report_finish(str, &err), 0, "%s", err.msg);
            char *a = slurp(hi), *b = slurp(si);
            cr_expect_str_eq(b, a, "iterations.csv, %d rows, hold %s", rows, holds[h]);
            free(a);
            free(b);
            a = slurp(hr);
            b = slurp(sr);
            cr_expect_str_eq(b, a, "ranks.csv, %d rows, hold %s", rows, holds[h]);
            free(a);
            free(b);
            stall_summary x, y;
            stall_report_summarize(held, &x);
            stall_report_summarize(str, &y);
            cr_expect_eq(x.iterations, y.iterations);
            cr_expect_eq(x.kept, y.kept);
            int h0 = rows / 2, h1 = rows - h0;
            cr_expect_eq(y.kept, (size_t)((h0 > 5 ? h0 - 5 : 0) + (h1 > 5 ? h1 - 5 : 0)));
            expect_same_stat(&x.iteration, &y.iteration, "iteration", holds[h]);
            expect_same_stat(&x.stall, &y.stall, "stall", holds[h]);
            expect_same_stat(&x.delay, &y.delay, "delay", holds[h]);
            const double xs[] = {
                x.epoch_time_s,         x.total_time_s,   x.throughput_batches_s,
                x.throughput_samples_s, x.mean_wait_s,    x.effective_delay_pct,
                x.stall_share,          x.gpu_busy_share, x.first_batch_stall_share};
            const double ys[] = {
                y.epoch_time_s,         y.total_time_s,   y.throughput_batches_s,
                y.throughput_samples_s, y.mean_wait_s,    y.effective_delay_pct,
                y.stall_share,          y.gpu_busy_share, y.first_batch_stall_share};
            for (size_t i = 0; i < sizeof xs / sizeof *xs; i++)
                cr_expect(same_num(xs[i], ys[i]), "summary field %zu, %d rows: %.17g vs %.17g", i,
                          rows, xs[i], ys[i]);
            stall_report_destroy(held);
            stall_report_destroy(str);
        }
}

/* first_batch_stall_share: the stall of each epoch's batch 0 over the
 * summed iteration time, against the iterations.csv the report writes
 * (two epochs, each with its batch 0), and a part of stall_share. */
Test(report, first_batch_stall_share_is_batch_0s_stall_over_the_iteration_time)
{
    stall_err err = {0};
    stall_report *r = stall_report_create(3, 5, 0.0005, 32);
    feed(r, 3, 4000);
    char path[600];
    snprintf(path, sizeof path, "%s/first_it.csv", rdir);
    cr_assert_eq(stall_report_write_iterations(r, path, &err), 0, "%s", err.msg);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f));
    double first = 0, all = 0;
    int zeros = 0;
    while (fgets(line, sizeof line, f)) {
        long long e, b;
        double end, it, st;
        cr_assert_eq(sscanf(line, "%lld,%lld,%lf,%lf,%lf", &e, &b, &end, &it, &st), 5, "%s", line);
        all += it;
        if (b == 0)
            first += st, zeros++;
    }
    fclose(f);
    cr_assert_eq(zeros, 2);
    stall_summary x;
    stall_report_summarize(r, &x);
    cr_assert_gt(first, 0);
    cr_assert_float_eq(x.first_batch_stall_share, first / all, 1e-9 * (first / all));
    cr_assert_leq(x.first_batch_stall_share, x.stall_share);
    stall_report_destroy(r);
}

Test(report, a_streamed_report_not_finished_leaves_no_file)
{
    char it[600], rk[600];
    snprintf(it, sizeof it, "%s/iterations.csv", rdir);
    snprintf(rk, sizeof rk, "%s/ranks.csv", rdir);
    stall_err err = {0};
    stall_report *r = stall_report_create(2, 0, 0.03, 0);
    cr_assert_eq(stall_report_stream(r, it, rk, &err), 0, "%s", err.msg);
    feed(r, 2, 3000);
    cr_expect_neq(stall_report_write_iterations(r, it, &err), 0); /* rows not kept */
    stall_report_destroy(r);                                      /* a run that failed half way */
    DIR *d = opendir(rdir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        cr_expect(e->d_name[0] == '.', "left behind: %s", e->d_name);
    closedir(d);
}

/* ---- the held statistics against GSL's sort ---- */

/* rv_stats on rows held in memory selects the quantiles' order statistics
 * instead of sorting: the bits must be those of gsl_sort and
 * gsl_stats_quantile_from_sorted_data on the seconds. Columns with many
 * ties, all equal, sorted, reversed and spread values; n from 1 up, past
 * the quickselect's cut-over to insertion sort (16). */
Test(report, held_quantiles_equal_gsl_sort_to_the_bit)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    const size_t sizes[] = {1, 2, 3, 5, 16, 17, 18, 33, 100, 101, 999, 1000, 4001};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int shape = 0; shape < 5; shape++) {
            size_t n = sizes[z];
            rv_store s;
            rv_init(&s, SIZE_MAX);
            double *col[RV_COLS];
            for (int c = 0; c < RV_COLS; c++)
                col[c] = malloc(n * sizeof *col[c]);
            for (size_t i = 0; i < n; i++) {
                int64_t v[RV_COLS];
                for (int c = 0; c < RV_COLS; c++) {
                    x = x * 6364136223846793005ull + 1442695040888963407ull;
                    uint64_t u = x >> 17;
                    int64_t r = shape == 0   ? (int64_t)(u % 7) * 1000003 /* ties */
                                : shape == 1 ? 42                         /* all equal */
                                : shape == 2 ? (int64_t)i * 999983        /* sorted */
                                : shape == 3 ? (int64_t)(n - i) * 999983  /* reversed */
                                             : (int64_t)(u % 90000000000ull) - 7;
                    v[c] = c == 1 && shape == 0 ? (u % 3 ? 0 : r) : r;
                    col[c][i] = stall_ns_to_s(v[c]);
                }
                rv_add(&s, v);
            }
            stall_stat out[RV_COLS];
            cr_assert_eq(rv_stats(&s, out), 0);
            for (int c = 0; c < RV_COLS; c++) {
                stall_stat want;
                want.mean = gsl_stats_mean(col[c], 1, n);
                want.std = n > 1 ? gsl_stats_sd_m(col[c], 1, n, want.mean) : NAN;
                gsl_sort(col[c], 1, n);
                want.p50 = gsl_stats_quantile_from_sorted_data(col[c], 1, n, 0.50);
                want.p95 = gsl_stats_quantile_from_sorted_data(col[c], 1, n, 0.95);
                want.p99 = gsl_stats_quantile_from_sorted_data(col[c], 1, n, 0.99);
                char what[64];
                snprintf(what, sizeof what, "n %zu shape %d column %d", n, shape, c);
                expect_same_stat(&out[c], &want, what, "all");
                free(col[c]);
            }
            rv_free(&s);
        }
}
