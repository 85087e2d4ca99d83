/*
 * sweep: lists and ranges expand as documented, points come in product order
 * (checked against nested loops), zip steps keys together, bad grids are
 * refused before anything is written, every row equals what `stallsim run`
 * gives for that point (on the notebook's dsanalyzer trace too), and
 * sweep.csv is identical across thread counts and after a resumed run.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stall/config.h"
#include "stall/scenario.h"
#include "stall/sweep.h"
#include "stall/io.h"

#include "cfgbase.h"
#include "jobs/sweep_int.h"
#include "tmpdir.h"

static char sdir[] = "/tmp/stall_sweep_XXXXXX";
static void sw_setup(void)
{
    tmpdir_make(sdir);
}
static void sw_teardown(void)
{
    tmpdir_remove(sdir);
}
TestSuite(sweep, .init = sw_setup, .fini = sw_teardown, .timeout = 300);

/* A model configuration from distributions, then "s.k=v" overrides, then
 * "sweep:s.k=LIST" lines. */
static stall_config *sw_config(const char *const *lines)
{
    static const char *const base[] = {
        "scenario.mode=model", "trace.format=none", "fetch.dist=lognormal",
        "fetch.mean_s=0.02",   "fetch.sigma=0.3",   "compute.dist=lognormal",
        "compute.mean_s=0.01", "compute.sigma=0.2", "cluster.gpus=2",
        "run.batches=40",      "report.warmup=2",   NULL};
    stall_config *cfg = malloc(sizeof *cfg);
    stall_config_defaults(cfg);
    stall_err e = {0};
    cfgbase_apply(cfg, base);
    for (int i = 0; lines && lines[i]; i++) {
        if (strncmp(lines[i], "sweep:", 6) == 0) {
            const char *l = lines[i] + 6, *eq = strchr(l, '=');
            char key[64];
            snprintf(key, sizeof key, "%.*s", (int)(eq - l), l);
            cr_assert_eq(stall_config_extra_add(cfg, "sweep", key, eq + 1, true, "test", &e), 0,
                         "%s", e.msg);
        } else {
            cr_assert_eq(stall_config_set(cfg, lines[i], &e), 0, "%s", e.msg);
        }
    }
    return cfg;
}

static char *sw_slurp(const char *path)
{
    return stall_read_file(path, NULL);
}

static char *sw_path(const char *a, const char *b)
{
    char *p = malloc(strlen(sdir) + strlen(a) + strlen(b) + 3);
    sprintf(p, "%s/%s%s%s", sdir, a, b[0] ? "/" : "", b);
    return p;
}

static int sw_run(const stall_config *cfg, const char *out, int jobs, bool keep,
                  stall_sweep_result *res, stall_err *e)
{
    char *dir = sw_path(out, "");
    stall_sweep_opts o = {.outdir = dir, .jobs = jobs, .keep_iterations = keep};
    int rc = stall_sweep_run(cfg, &o, res, e);
    free(dir);
    return rc;
}

Test(sweep, ranges_expand_as_documented)
{
    stall_config *cfg = sw_config((const char *const[]){
        "sweep:loader.workers=1..16", "sweep:loader.prefetch_factor=1..1024 x2",
        "sweep:fetch.scale=0.5..2.0 +0.25", "sweep:loader.in_order=true, false", NULL});
    stall_sweep *s = NULL;
    stall_sweep_opts o = {0};
    stall_err e = {0};
    cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(stall_sweep_keys(s), 4);
    cr_assert_eq(stall_sweep_points(s), (size_t)16 * 11 * 7 * 2);
    /* The last point takes every axis's last value; point 1 steps the last axis. */
    size_t last = stall_sweep_points(s) - 1;
    cr_assert_str_eq(stall_sweep_value(s, last, 0), "16");
    cr_assert_str_eq(stall_sweep_value(s, last, 1), "1024");
    cr_assert_str_eq(stall_sweep_value(s, last, 2), "2.00");
    cr_assert_str_eq(stall_sweep_value(s, 1, 3), "false");
    cr_assert_str_eq(stall_sweep_value(s, 1, 0), "1");
    stall_config pc;
    stall_sweep_config(s, last, &pc);
    cr_assert_eq(pc.workers, 16);
    cr_assert_eq(pc.prefetch_factor, 1024);
    cr_assert_float_eq(pc.fetch_dist.scale, 2.0, 1e-12);
    cr_assert_eq(pc.nextra, 0, "a point carries no [sweep] lines");
    stall_sweep_destroy(s);
    free(cfg);
}

Test(sweep, points_in_product_order_like_nested_loops)
{
    stall_config *cfg =
        sw_config((const char *const[]){"sweep:loader.workers=1, 2, 3", "sweep:run.seed=7..10",
                                        "sweep:loader.startup_s=0, 0.5", NULL});
    stall_sweep *s = NULL;
    stall_sweep_opts o = {0};
    stall_err e = {0};
    cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), 0, "%s", e.msg);
    size_t i = 0;
    for (int w = 1; w <= 3; w++)
        for (int seed = 7; seed <= 10; seed++)
            for (int st = 0; st < 2; st++, i++) {
                stall_config pc;
                stall_sweep_config(s, i, &pc);
                cr_assert_eq(pc.workers, w, "point %zu", i);
                cr_assert_eq(pc.seed, seed, "point %zu", i);
                cr_assert_float_eq(pc.startup_s, 0.5 * st, 1e-12, "point %zu", i);
            }
    cr_assert_eq(stall_sweep_points(s), i);
    stall_sweep_destroy(s);
    free(cfg);
}

Test(sweep, zip_steps_keys_together)
{
    stall_config *cfg = sw_config((const char *const[]){
        "sweep:cluster.gpus=2, 4, 8", "sweep:run.seed=1, 2", "sweep:cluster.gpus_per_node=1, 2, 4",
        "sweep:zip=cluster.gpus, cluster.gpus_per_node", NULL});
    stall_sweep *s = NULL;
    stall_sweep_opts o = {0};
    stall_err e = {0};
    cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(stall_sweep_points(s), 6);
    for (size_t i = 0; i < 6; i++) {
        stall_config pc;
        stall_sweep_config(s, i, &pc);
        cr_assert_eq(pc.gpus, 2 * pc.gpus_per_node, "point %zu", i);
        cr_assert_eq(pc.gpus, 2 << (i / 2), "the zip group is the first axis: point %zu", i);
        cr_assert_eq(pc.seed, 1 + (int64_t)(i % 2), "point %zu", i);
    }
    stall_sweep_destroy(s);
    free(cfg);
}

static void sw_refused(const char *const *lines, const char *needle)
{
    stall_config *cfg = sw_config(lines);
    stall_sweep_result res;
    stall_err e = {0};
    cr_assert_eq(sw_run(cfg, "refused", 1, false, &res, &e), STALL_ECONFIG, "%s", needle);
    cr_assert(strstr(e.msg, needle), "'%s' should name '%s'", e.msg, needle);
    struct stat st;
    char *dir = sw_path("refused", "");
    cr_assert_neq(stat(dir, &st), 0, "nothing written for a refused sweep");
    free(dir);
    free(cfg);
}

Test(sweep, bad_grids_refused_before_anything_is_written)
{
    sw_refused((const char *const[]){"sweep:loader.nope=1, 2", NULL}, "unknown key");
    sw_refused((const char *const[]){"sweep:loader.workers=", NULL}, "empty list");
    sw_refused((const char *const[]){"sweep:loader.workers=1,,2", NULL}, "empty value");
    sw_refused((const char *const[]){"sweep:loader.workers=4..1", NULL}, "bad range");
    sw_refused((const char *const[]){"sweep:loader.workers=1..8 x1", NULL}, "F > 1");
    sw_refused((const char *const[]){"sweep:fetch.scale=0.5..2.5", NULL}, "needs integers");
    sw_refused((const char *const[]){"sweep:zip=loader.workers", NULL}, "not a swept key");
    /* Impossible points name the point's values. */
    sw_refused((const char *const[]){"loader.prefetch_factor=2", "sweep:loader.workers=2, 0", NULL},
               "point 1 (loader.workers=0)");
    sw_refused((const char *const[]){"sweep:cluster.gpus_per_node=1, 4", NULL},
               "point 1 (cluster.gpus_per_node=4)");
    /* Limits. */
    sw_refused(
        (const char *const[]){"sweep:run.seed=1..1000", "sweep:loader.workers=1..1001", NULL},
        "more than 1000000 points");
    sw_refused((const char *const[]){"sweep:cluster.gpus=4, 60000", "run.batches=1000000", NULL},
               "per point");
}

/* A [sweep] zip line's errors name the file and its line, as an axis's do
 * (they named the file alone); --sweep zip is named as such. */
Test(sweep, zip_errors_name_their_line)
{
    static const char *const zips[][2] = {
        {"loader.workers, run.seed", ":19: [sweep] zip: 'run.seed' is not a swept key"},
        {"loader.workers, cluster.gpus", ":19: [sweep] zip: cluster.gpus has 3 values but "
                                         "loader.workers has 2"},
        {",", ":19: [sweep] zip: empty list"},
        /* A key zipped with itself stepped with itself (a grid of 2 x 3
         * points, the zip taken silently); a zip of one key zips nothing. */
        {"loader.workers, loader.workers", ":19: [sweep] zip: loader.workers is zipped twice"},
        {"loader.workers", ":19: [sweep] zip: loader.workers alone"}};
    for (int i = 0; i < 5; i++) {
        char *ini = sw_path("zip.ini", "");
        FILE *f = fopen(ini, "w");
        cr_assert_not_null(f);
        fprintf(f,
                "[scenario]\nname = z\nmode = model\n[trace]\nformat = none\n[fetch]\n"
                "dist = lognormal\nmean_s = 0.02\nsigma = 0.3\n[compute]\ndist = normal\n"
                "mean_s = 0.01\nsd_s = 0.001\n[run]\nbatches = 40\n[sweep]\n"
                "loader.workers = 1, 2\ncluster.gpus = 1, 2, 4\nzip = %s\n",
                zips[i][0]);
        fclose(f);
        stall_config *cfg = malloc(sizeof *cfg);
        stall_config_defaults(cfg);
        stall_err e = {0};
        cr_assert_eq(stall_config_load(cfg, ini, &e), 0, "%s", e.msg);
        stall_sweep_result res;
        cr_assert_eq(sw_run(cfg, "refused", 1, false, &res, &e), STALL_ECONFIG, "%s", zips[i][0]);
        char want[700];
        snprintf(want, sizeof want, "%s%s", ini, zips[i][1]);
        cr_assert(strncmp(e.msg, want, strlen(want)) == 0, "'%s' should start '%s'", e.msg, want);
        free(cfg);
        free(ini);
    }
    stall_config *cfg =
        sw_config((const char *const[]){"sweep:loader.workers=1, 2", "sweep:cluster.gpus=1, 2, 4",
                                        "sweep:zip=loader.workers, cluster.gpus", NULL});
    stall_sweep_result res;
    stall_err e = {0};
    cr_assert_eq(sw_run(cfg, "refused", 1, false, &res, &e), STALL_ECONFIG);
    cr_assert(strstr(e.msg, "--sweep zip: cluster.gpus has 3 values"), "%s", e.msg);
    free(cfg);
    /* A key in two zip lines joined both groups into one without a word. */
    cfg = sw_config((const char *const[]){
        "sweep:loader.workers=1, 2", "sweep:cluster.gpus=1, 2", "sweep:fetch.scale=1, 2",
        "sweep:zip=loader.workers, cluster.gpus", "sweep:zip=loader.workers, fetch.scale", NULL});
    cr_assert_eq(sw_run(cfg, "refused", 1, false, &res, &e), STALL_ECONFIG);
    cr_assert(strstr(e.msg, "--sweep zip: loader.workers is zipped twice"), "%s", e.msg);
    free(cfg);
}

/* The row of point i in sweep.csv after the swept columns. */
static char *sw_row(const char *csv, size_t i, int skip)
{
    const char *p = csv;
    for (size_t k = 0; k <= i; k++)
        p = strchr(p, '\n') + 1;
    for (int k = 0; k < skip + 1; k++)
        p = strchr(p, ',') + 1;
    const char *end = strchr(p, '\n');
    return strndup(p, (size_t)(end - p));
}

Test(sweep, rows_equal_stallsim_run_of_each_point)
{
    stall_config *cfg = sw_config(
        (const char *const[]){"sweep:loader.workers=1, 3", "sweep:fetch.mean_s=0.01, 0.03", NULL});
    stall_sweep_result res;
    stall_err e = {0};
    cr_assert_eq(sw_run(cfg, "grid", 2, false, &res, &e), 0, "%s", e.msg);
    char *csvp = sw_path("grid", "sweep.csv");
    char *csv = sw_slurp(csvp);
    cr_assert(strncmp(csv, "point,loader.workers,fetch.mean_s,", 34) == 0, "%s", csv);
    const char *w[] = {"1", "1", "3", "3"}, *m[] = {"0.01", "0.03", "0.01", "0.03"};
    for (size_t i = 0; i < 4; i++) {
        stall_config *one = sw_config(NULL);
        char a[64], b[64];
        snprintf(a, sizeof a, "loader.workers=%s", w[i]);
        snprintf(b, sizeof b, "fetch.mean_s=%s", m[i]);
        cr_assert_eq(stall_config_set(one, a, &e), 0);
        cr_assert_eq(stall_config_set(one, b, &e), 0);
        char name[32];
        snprintf(name, sizeof name, "run%zu", i);
        char *dir = sw_path(name, "");
        stall_run_opts o = {.outdir = dir, .jobs = 1};
        cr_assert_eq(stall_scenario_run(one, &o, &e), 0, "%s", e.msg);
        char *sp = sw_path(name, "summary.csv");
        char *sum = sw_slurp(sp);
        char *want = strndup(strchr(sum, '\n') + 1, strlen(strchr(sum, '\n') + 1) - 1);
        char *got = sw_row(csv, i, 2);
        cr_assert_str_eq(got, want, "point %zu", i);
        free(got);
        free(want);
        free(sum);
        free(sp);
        free(dir);
        free(one);
    }
    free(csv);
    free(csvp);
    free(cfg);
}

Test(sweep, notebook_trace_align_lists_become_axes)
{
    /* The shipped example: replay of the notebook's dsanalyzer trace; each
     * of the 9 points must give the row of the ordinary run's summary. */
    stall_config *cfg = malloc(sizeof *cfg);
    stall_config_defaults(cfg);
    stall_err e = {0};
    cr_assert_eq(stall_config_load(cfg, "configs/example.ini", &e), 0, "%s", e.msg);
    stall_sweep_result res;
    cr_assert_eq(sw_run(cfg, "nb", 2, false, &res, &e), 0, "%s", e.msg);
    cr_assert_eq(res.points, 9);
    char *dir = sw_path("nbrun", "");
    stall_run_opts o = {.outdir = dir, .jobs = 1};
    cr_assert_eq(stall_scenario_run(cfg, &o, &e), 0, "%s", e.msg);
    char *sp = sw_path("nbrun", "summary.csv"), *cp = sw_path("nb", "sweep.csv");
    char *sum = sw_slurp(sp), *csv = sw_slurp(cp);
    cr_assert(strncmp(csv, "point,align.fetch,align.start,fetch_align,", 42) == 0, "%s", csv);
    const char *row = strchr(sum, '\n') + 1;
    for (size_t i = 0; i < 9; i++) {
        const char *end = strchr(row, '\n');
        char *want = strndup(row, (size_t)(end - row));
        char *got = sw_row(csv, i, 2);
        cr_assert_str_eq(got, want, "point %zu", i);
        free(got);
        free(want);
        row = end + 1;
    }
    /* No per-iteration files without --keep iterations. */
    char *it = sw_path("nb", "point-000000/fetch-avg_start-avg");
    struct stat st;
    cr_assert_neq(stat(it, &st), 0);
    free(it);
    free(sum);
    free(csv);
    free(sp);
    free(cp);
    free(dir);
    free(cfg);
}

Test(sweep, identical_across_threads_and_after_resume)
{
    stall_config *cfg =
        sw_config((const char *const[]){"sweep:loader.workers=1..3", "sweep:run.seed=1..4", NULL});
    stall_sweep_result res;
    stall_err e = {0};
    cr_assert_eq(sw_run(cfg, "a", 1, true, &res, &e), 0, "%s", e.msg);
    cr_assert_eq(res.ran, 12);
    cr_assert_eq(sw_run(cfg, "b", 4, false, &res, &e), 0, "%s", e.msg);
    char *pa = sw_path("a", "sweep.csv"), *pb = sw_path("b", "sweep.csv");
    char *a = sw_slurp(pa), *b = sw_slurp(pb);
    cr_assert_str_eq(a, b, "-j 1 and -j 4 differ");
    /* --keep iterations kept them in a/ only. */
    char *ka = sw_path("a", "point-000000/fetch-none_start-none/iterations.csv");
    char *kb = sw_path("b", "point-000000/fetch-none_start-none/iterations.csv");
    struct stat st;
    cr_assert_eq(stat(ka, &st), 0);
    cr_assert_neq(stat(kb, &st), 0);
    /* An interrupted run: one point folder lost, a stale temp folder, no
     * sweep.csv; another point's folder without its summary. */
    char *p5 = sw_path("b", "point-000005"), *tmp = sw_path("b", ".point-000007.tmp");
    char *ini7 = sw_path("b", "point-000007/summary.csv");
    tmpdir_remove(p5);
    tmpdir_remove(pb);
    cr_assert_eq(mkdir(tmp, 0755), 0);
    cr_assert_eq(remove(ini7), 0);
    cr_assert_eq(sw_run(cfg, "b", 2, false, &res, &e), 0, "%s", e.msg);
    cr_assert_eq(res.ran, 2, "ran %zu", res.ran);
    cr_assert_eq(res.skipped, 10);
    char *b2 = sw_slurp(pb);
    cr_assert_str_eq(a, b2, "the resumed sweep.csv differs");
    cr_assert_neq(stat(tmp, &st), 0, "stale temp folder removed");
    free(b2);
    free(p5);
    free(tmp);
    free(ini7);
    free(ka);
    free(kb);
    free(a);
    free(b);
    free(pa);
    free(pb);
    free(cfg);
}

/* sw_run with the terminal's lines in *term (caller frees). */
static int sw_run_term(const stall_config *cfg, const char *out, stall_sweep_result *res,
                       char **term, stall_err *e)
{
    char *dir = sw_path(out, "");
    size_t n = 0;
    *term = NULL;
    FILE *f = open_memstream(term, &n);
    stall_sweep_opts o = {.outdir = dir, .jobs = 2, .term = f};
    int rc = stall_sweep_run(cfg, &o, res, e);
    fclose(f);
    free(dir);
    return rc;
}

/* A sweep of a seed-mode scenario takes each point's replay_summary.csv
 * (the event replay) into sweep.csv, not the notebook's numbers that seed
 * mode's terminal leads with: the terminal now says so (before, the rows
 * passed for the seed's without a word). */
Test(sweep, a_seed_sweep_says_its_rows_are_the_replay)
{
    const char *says = "sweep.csv holds the event replay's rows (seed mode: each point's "
                       "replay_summary.csv); the notebook's numbers are in each point's "
                       "total_summary.csv\n";
    const char *mode[2] = {"seed", "replay"};
    for (int m = 0; m < 2; m++) {
        stall_config *cfg = malloc(sizeof *cfg);
        stall_config_defaults(cfg);
        stall_err e = {0};
        cr_assert_eq(stall_config_load(cfg, "configs/seed-case1.ini", &e), 0, "%s", e.msg);
        char set[64];
        snprintf(set, sizeof set, "scenario.mode=%s", mode[m]);
        cr_assert_eq(stall_config_set(cfg, set, &e), 0, "%s", e.msg);
        cr_assert_eq(stall_config_set(cfg, "align.start=none", &e), 0, "%s", e.msg);
        stall_sweep_result res;
        char *term = NULL;
        cr_assert_eq(sw_run_term(cfg, mode[m], &res, &term, &e), 0, "%s", e.msg);
        cr_assert_eq(res.points, 3);
        if (m == 0)
            cr_assert(strstr(term, says), "%s", term);
        else
            cr_assert_null(strstr(term, "sweep.csv holds"), "%s", term);
        char *sum = sw_path(mode[m], "point-000000/total_summary.csv");
        struct stat st;
        cr_assert_eq(stat(sum, &st) == 0, m == 0, "%s", sum);
        free(sum);
        free(term);
        free(cfg);
    }
}

Test(sweep, other_values_or_set_keys_move_the_old_sweep_aside)
{
    /* The same axis with other values, then another --set: each point
     * folder holds another configuration, whose results were replaced
     * without a word; they are moved aside as other axes are. */
    stall_config *c1 = sw_config((const char *const[]){"sweep:loader.workers=1..3", NULL});
    stall_config *c2 = sw_config((const char *const[]){"sweep:loader.workers=4..6", NULL});
    stall_config *c3 =
        sw_config((const char *const[]){"run.seed=5", "sweep:loader.workers=4..6", NULL});
    stall_sweep_result res;
    stall_err e = {0};
    char *term = NULL;
    cr_assert_eq(sw_run_term(c1, "m", &res, &term, &e), 0, "%s", e.msg);
    free(term);
    char *csv = sw_path("m", "sweep.csv"), *old1 = sw_path("m.old-1", "sweep.csv");
    char *old2 = sw_path("m.old-2", "sweep.csv"), *old3 = sw_path("m.old-3", "");
    char *first = sw_slurp(csv);
    cr_assert_eq(sw_run_term(c2, "m", &res, &term, &e), 0, "%s", e.msg);
    cr_expect_eq(res.ran, 3, "ran %zu (found done %zu)", res.ran, res.skipped);
    cr_expect(strstr(term, "held another sweep (another configuration") &&
                  strstr(term, "moved aside to"),
              "%s", term);
    free(term);
    char *kept = sw_slurp(old1);
    cr_assert_not_null(kept, "the first sweep's results are gone");
    cr_expect_str_eq(kept, first);
    cr_assert_eq(sw_run_term(c3, "m", &res, &term, &e), 0, "%s", e.msg);
    cr_expect_eq(res.ran, 3, "--set run.seed=5: ran %zu", res.ran);
    free(term);
    struct stat st;
    cr_expect_eq(stat(old2, &st), 0, "the second sweep was not moved aside");
    /* The same sweep again resumes in place. */
    cr_assert_eq(sw_run_term(c3, "m", &res, &term, &e), 0, "%s", e.msg);
    cr_expect_eq(res.skipped, 3, "found done %zu", res.skipped);
    cr_expect(strstr(term, "moved aside") == NULL, "%s", term);
    cr_expect_neq(stat(old3, &st), 0);
    free(term);
    free(kept);
    free(first);
    free(csv);
    free(old1);
    free(old2);
    free(old3);
    free(c1);
    free(c2);
    free(c3);
}

/* Entries of dir whose name starts with '.' (temporary folders), besides
 * . and .. */
static int sw_hidden(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "%s", dir);
    int n = 0;
    struct dirent *x;
    while ((x = readdir(d)) != NULL)
        n += x->d_name[0] == '.' && strcmp(x->d_name, ".") != 0 && strcmp(x->d_name, "..") != 0;
    closedir(d);
    return n;
}

Test(sweep, every_point_committed_and_no_temporary_folder_left)
{
    /* Points are synced and renamed in batches: after the run every point
     * folder is in place whatever the threads, and nothing else is. */
    stall_config *cfg = sw_config((const char *const[]){"sweep:run.seed=1..40", NULL});
    stall_sweep_result res;
    stall_err e = {0};
    for (int jobs = 1; jobs <= 3; jobs += 2) {
        char name[16];
        snprintf(name, sizeof name, "c%d", jobs);
        cr_assert_eq(sw_run(cfg, name, jobs, false, &res, &e), 0, "%s", e.msg);
        cr_assert_eq(res.ran, 40, "-j %d ran %zu", jobs, res.ran);
        char *dir = sw_path(name, "");
        cr_assert_eq(sw_hidden(dir), 0, "-j %d left temporary folders in %s", jobs, dir);
        for (int i = 0; i < 40; i++) {
            char pt[64];
            snprintf(pt, sizeof pt, "point-%06d/summary.csv", i);
            char *p = sw_path(name, pt);
            struct stat st;
            cr_assert_eq(stat(p, &st), 0, "-j %d: %s missing", jobs, p);
            free(p);
        }
        free(dir);
    }
    free(cfg);
}

Test(sweep, a_second_signal_places_a_point_whose_job_renamed_its_folder_but_had_not_returned)
{
    /* Point 0's job has renamed its folder to .point-000000.tmp, whole, and
     * not yet returned; point 1's is still running. A second SIGINT puts
     * point 0 in place (before, it was not marked finished yet and was left
     * behind for the rerun to remove) and leaves point 1 to its job. The
     * handlers replaced are SIG_IGN here, so the process lives on. */
    struct sigaction ign = {0}, now;
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    cr_assert_eq(sigaction(SIGINT, &ign, NULL), 0);
    char *dir = sw_path("sig", "");
    cr_assert_eq(mkdir(dir, 0777), 0);
    unsigned char seen[2] = {0, 0};
    stall__sweep_sig_begin(dir, 2, seen, 6, 0);
    stall__sweep_sig_running(0);
    stall__sweep_sig_running(1);
    char *tmp = sw_path("sig", ".point-000000.tmp");
    char *in = sw_path("sig", ".point-000000.tmp/summary.csv");
    cr_assert_eq(mkdir(tmp, 0777), 0);
    FILE *f = fopen(in, "w");
    cr_assert(f != NULL);
    fputs("a\n1\n", f);
    fclose(f);
    raise(SIGINT);
    cr_expect(stall__sweep_sig_stopped(), "the first SIGINT set no stop");
    raise(SIGINT);
    char *placed = sw_path("sig", "point-000000/summary.csv");
    struct stat st;
    cr_expect_eq(stat(placed, &st), 0, "point 0 was not put in place");
    cr_expect_neq(stat(tmp, &st), 0, "point 0 was left in %s", tmp);
    stall__sweep_sig_ran(0, true); /* returns: the handler placed it */
    cr_expect(!stall__sweep_sig_claim(0), "point 0 is in place: nothing to claim");
    stall__sweep_sig_ran(1, true);
    cr_expect(stall__sweep_sig_claim(1), "point 1 finished after the signal: the runner's");
    stall__sweep_sig_release(1, true);
    stall__sweep_sig_end();
    cr_assert_eq(sigaction(SIGINT, NULL, &now), 0);
    cr_expect(now.sa_handler == SIG_IGN, "the replaced handler was not restored");
    free(placed);
    free(in);
    free(tmp);
    free(dir);
}

Test(sweep, missing_trace_refused_before_anything_is_written)
{
    /* Inputs are checked (and hashed) once, before the first point: a
     * missing trace names its key and leaves no result folder. */
    stall_config *cfg = malloc(sizeof *cfg);
    stall_config_defaults(cfg);
    stall_err e = {0};
    cr_assert_eq(stall_config_load(cfg, "configs/example-whatif.ini", &e), 0, "%s", e.msg);
    char *missing = sw_path("no-such-trace.csv", "");
    char set[512];
    snprintf(set, sizeof set, "trace.perf=%s", missing);
    cr_assert_eq(stall_config_set(cfg, set, &e), 0, "%s", e.msg);
    cr_assert_eq(stall_config_extra_add(cfg, "sweep", "loader.workers", "3, 4", true, "t", &e), 0);
    stall_sweep_result res;
    int rc = sw_run(cfg, "missing", 2, false, &res, &e);
    cr_assert_eq(rc, STALL_EIO, "rc %d: %s", rc, e.msg);
    cr_assert(strstr(e.msg, "--set trace.perf") && strstr(e.msg, "cannot open"), "%s", e.msg);
    char *dir = sw_path("missing", "");
    struct stat st;
    cr_assert_neq(stat(dir, &st), 0, "%s was created", dir);
    free(dir);
    free(missing);
    free(cfg);
}

Test(sweep, run_refuses_a_sweep_section)
{
    stall_config *cfg = sw_config((const char *const[]){"sweep:loader.workers=1, 2", NULL});
    stall_err e = {0};
    cr_assert_eq(stall_config_check(cfg, &e), STALL_ECONFIG);
    cr_assert(strstr(e.msg, "--sweep loader.workers: only `stallsim sweep`"), "%s", e.msg);
    free(cfg);
}

/* A sweep over the GPU count of a trace whose ranks began epoch 0 apart
 * (sleep_ddp4_dev2c_r1: rank 2 6.974 s late): the point at the trace's 4
 * GPUs replays the late start, the others cannot (docs/model.md 2.4), so
 * their epochs differ by more than the swept key, and the sweep says so;
 * with [ranks] late_start = none every point begins together and it says
 * nothing. A trace whose ranks began 1 ms apart (ddp2_w2) draws no note. */
Test(sweep, points_that_replay_a_late_start_beside_others_are_said)
{
    const char *cases[][6] = {
        {"trace.path=" STALL_SOURCE_DIR "/traces/cpushare/sleep_ddp4_dev2c_r1/trace.csv",
         "sweep:cluster.gpus=2,4,8", NULL},
        {"trace.path=" STALL_SOURCE_DIR "/traces/cpushare/sleep_ddp4_dev2c_r1/trace.csv",
         "sweep:cluster.gpus=2,4,8", "ranks.late_start=none", NULL},
        {"trace.path=" STALL_SOURCE_DIR "/traces/ddp2_w2/trace.csv", "sweep:cluster.gpus=2,4",
         NULL}};
    for (int i = 0; i < 3; i++) {
        stall_config *cfg = malloc(sizeof *cfg);
        stall_config_defaults(cfg);
        stall_err e = {0};
        cfgbase_apply(cfg, (const char *const[]){"scenario.mode=model", "trace.format=tidy",
                                                 "align.fetch=none", "align.start=none",
                                                 "fetch.resample=bootstrap", "cluster.scaling=weak",
                                                 NULL});
        for (int k = 0; cases[i][k]; k++) {
            const char *l = cases[i][k];
            if (strncmp(l, "sweep:", 6) == 0) {
                const char *eq = strchr(l + 6, '=');
                char key[64];
                snprintf(key, sizeof key, "%.*s", (int)(eq - l - 6), l + 6);
                cr_assert_eq(stall_config_extra_add(cfg, "sweep", key, eq + 1, true, "test", &e), 0,
                             "%s", e.msg);
            } else {
                cr_assert_eq(stall_config_set(cfg, l, &e), 0, "%s", e.msg);
            }
        }
        char *text = NULL, name[32];
        size_t len = 0;
        FILE *term = open_memstream(&text, &len);
        snprintf(name, sizeof name, "late%d", i);
        char *dir = sw_path(name, "");
        stall_sweep_opts o = {.outdir = dir, .jobs = 1, .term = term};
        stall_sweep_result res;
        cr_assert_eq(stall_sweep_run(cfg, &o, &res, &e), 0, "case %d: %s", i, e.msg);
        fclose(term);
        bool said = strstr(text, "ranks that start late: point 1 replays") != NULL;
        cr_expect_eq(said, i == 0, "case %d: %s", i, text);
        free(text);
        free(dir);
        free(cfg);
    }
}

/* Keys that change no point are refused up front (they were taken: the
 * points came out the same, a new user's finding): a sweep over the
 * scenario's name, and [report] per_rank without --keep iterations (no
 * point writes ranks.csv then), given in the scenario or as an axis. With
 * --keep iterations per_rank shapes the points' files and is taken. */
Test(sweep, keys_that_change_no_point_are_refused)
{
    struct {
        const char *line, *want;
        bool keep;
    } c[] = {
        {"sweep:scenario.name=a,b", "--sweep scenario.name: has no effect: no point's", false},
        {"report.per_rank=true",
         "--set report.per_rank: has no effect: a sweep's points write no "
         "iterations.csv or ranks.csv without --keep iterations",
         false},
        {"sweep:report.per_rank=true,false", "--sweep report.per_rank: has no effect", false},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        const char *lines[] = {"sweep:loader.workers=1,2", c[i].line, NULL};
        stall_config *cfg = sw_config(lines);
        stall_sweep_opts o = {.keep_iterations = c[i].keep};
        stall_sweep *s = NULL;
        stall_err e = {0};
        cr_expect_eq(stall_sweep_create(cfg, &o, &s, &e), STALL_ECONFIG, "%s", c[i].line);
        cr_expect_not_null(strstr(e.msg, c[i].want), "%s: %s", c[i].line, e.msg);
        o.keep_iterations = true;
        int rc = stall_sweep_create(cfg, &o, &s, &e);
        if (i == 0)
            cr_expect_eq(rc, STALL_ECONFIG, "%s", e.msg);
        else
            cr_expect_eq(rc, 0, "%s: %s", c[i].line, e.msg);
        if (rc == 0)
            stall_sweep_destroy(s);
        free(cfg);
    }
}

/* A range's bounds and step are decimal numbers, as the loader reads a
 * number key: hexadecimal (0x1p-1, 0x1) was taken by the range alone. */
Test(sweep, a_range_takes_decimal_numbers_only)
{
    const char *bad[] = {"sweep:fetch.scale=0x1p-1..1 +0.25", "sweep:loader.workers=0x1..0x3",
                         "sweep:fetch.scale=0.5..inf +0.25"};
    for (int i = 0; i < 3; i++) {
        stall_config *cfg = sw_config((const char *const[]){bad[i], NULL});
        stall_sweep_opts o = {0};
        stall_sweep *s = NULL;
        stall_err e = {0};
        cr_expect_eq(stall_sweep_create(cfg, &o, &s, &e), STALL_ECONFIG, "%s", bad[i]);
        cr_expect_not_null(strstr(e.msg, "with decimal numbers)"), "%s", e.msg);
        free(cfg);
    }
    stall_config *cfg = sw_config((const char *const[]){"sweep:fetch.scale=0.5..1 +0.25", NULL});
    stall_sweep_opts o = {0};
    stall_sweep *s = NULL;
    stall_err e = {0};
    cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), 0, "%s", e.msg);
    cr_expect_eq(stall_sweep_points(s), 3);
    stall_sweep_destroy(s);
    free(cfg);
}

/* A step written with an exponent needs the decimals its exponent gives:
 * "+1e-3" printed its values with none, eleven points all "0.01". */
Test(sweep, a_step_with_an_exponent_keeps_its_decimals)
{
    static const struct {
        const char *line, *second, *last;
        size_t points;
    } cases[] = {
        {"sweep:fetch.mean_s=0.01..0.02 +1e-3", "0.011", "0.020", 11},
        {"sweep:fetch.mean_s=0.01..0.02 +5E-3", "0.015", "0.020", 3},
        {"sweep:fetch.mean_s=1e-2..2e-2 +0.5e-2", "0.015", "0.020", 3},
        {"sweep:fetch.scale=1..2.5 +2.5e-1", "1.25", "2.50", 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        stall_config *cfg = sw_config((const char *const[]){cases[i].line, NULL});
        stall_sweep_opts o = {0};
        stall_sweep *s = NULL;
        stall_err e = {0};
        cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), 0, "%s: %s", cases[i].line, e.msg);
        size_t n = stall_sweep_points(s);
        cr_expect_eq(n, cases[i].points, "%s: %zu points", cases[i].line, n);
        cr_expect_str_eq(stall_sweep_value(s, 1, 0), cases[i].second, "%s: point 1 is %s",
                         cases[i].line, stall_sweep_value(s, 1, 0));
        cr_expect_str_eq(stall_sweep_value(s, n - 1, 0), cases[i].last, "%s: the last is %s",
                         cases[i].line, stall_sweep_value(s, n - 1, 0));
        stall_sweep_destroy(s);
        free(cfg);
    }
}

/* A range of too many values says how many in a few digits: a step of
 * 1e-300 printed the count as 300 digits, the line cut before its end. */
Test(sweep, too_many_values_are_counted_in_short)
{
    stall_config *cfg =
        sw_config((const char *const[]){"sweep:fetch.mean_s=0.01..0.02 +1e-300", NULL});
    stall_sweep_opts o = {0};
    stall_sweep *s = NULL;
    stall_err e = {0};
    cr_assert_eq(stall_sweep_create(cfg, &o, &s, &e), STALL_ECONFIG, "%s", e.msg);
    cr_expect(strstr(e.msg, "has 1e+298 values, more than the limit of 1000000 points"), "%s",
              e.msg);
    free(cfg);
}
