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

#include "stall/config.h"
#include "stall/job.h"
#include "stall/report.h"

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
