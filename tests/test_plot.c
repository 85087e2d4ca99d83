/*
 * stallsim plot: what each kind of result folder gets drawn, the figures'
 * data against the CSVs they come from, the scripts, rendering with and
 * without gnuplot, and bad folders.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "resultdir.h"
#include "stall/plot.h"
#include "stall/table.h"
#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"

static char dir[] = "/tmp/stall_plot_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(plot, .init = setup, .fini = teardown, .timeout = 120);

/* No gnuplot: the figures' data and scripts only. */
static const stall_plot_opts no_gnuplot = {.gnuplot = "/nonexistent/gnuplot"};

static char *sub(const char *name)
{
    static char p[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

Test(plot, run_folder_data_matches_iterations_csv)
{
    rd_run(dir, 3, 2, 10);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_RUN);
    cr_assert_eq(res.nfig, 4, "figures: %d", res.nfig);
    cr_assert_str_eq(res.name[0], "stall_ranks");
    cr_assert_not(res.rendered);
    /* One row per iteration: index, epoch, batch, a stall per rank. */
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/stall_ranks.dat"), &fields), 20);
    cr_assert_eq(fields, 3 + 3);
    stall_table *it = NULL;
    cr_assert_eq(stall_table_read(sub("fetch-none_start-none/iterations.csv"), &it, &err), 0);
    FILE *f = fopen(sub("plots/stall_ranks.dat"), "r");
    char line[4096];
    size_t row = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        double v[6];
        cr_assert_eq(
            sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]), 6);
        for (int r = 0; r < 3; r++)
            cr_assert_float_eq(v[3 + r],
                               stall_table_num(it, row, stall_table_col(it, "stall_r0") + r), 1e-12,
                               "row %zu rank %d", row, r);
        row++;
    }
    fclose(f);
    stall_table_free(it);
    /* The CDF: every iteration once, sorted. */
    cr_assert_eq(rd_rows(sub("plots/cdf.dat"), &fields), 20);
    cr_assert_eq(fields, 3);
    /* Simulated epoch time per epoch: last iter_end - epoch start. */
    cr_assert_eq(rd_rows(sub("plots/epochs.dat"), &fields), 2);
    char *ep = rd_slurp(sub("plots/epochs.dat"));
    double want = 0;
    for (int k = 0; k < 10; k++) {
        double mx = 0;
        for (int r = 0; r < 3; r++)
            mx = fmax(mx, rd_stall(1, k, r));
        want += 0.1 + mx;
    }
    char *last = strstr(ep, "\n1 ");
    cr_assert_not_null(last, "%s", ep);
    cr_assert_float_eq(strtod(last + 3, NULL), want, 1e-9);
    free(ep);
    /* Scripts name their data by relative path and write png and svg. */
    char *gp = rd_slurp(sub("plots/stall_ranks.gp"));
    cr_assert(strstr(gp, "\"stall_ranks.dat\""));
    cr_assert(strstr(gp, "pngcairo") && strstr(gp, "terminal svg"));
    cr_assert_null(strstr(gp, dir), "the script holds an absolute path");
    free(gp);
    cr_assert_not(rd_exists(dir, "plots/stall_ranks.png"));
    /* Without per_rank.csv the breakdown is named as not drawn. */
    int said = 0;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "per_rank.csv") != NULL;
    cr_assert(said);
}

Test(plot, more_than_8_ranks_draw_a_heatmap_of_bins)
{
    rd_run(dir, 12, 1, 1000);
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    /* 1000 iterations in bins of 3: 334 bins x 12 ranks. */
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/stall_ranks.dat"), &fields), 334 * 12);
    cr_assert_eq(fields, 3);
    char *gp = rd_slurp(sub("plots/stall_ranks.gp"));
    cr_assert(strstr(gp, "with image"));
    free(gp);
    /* The CDF keeps at most 1000 points. */
    cr_assert_eq(rd_rows(sub("plots/cdf.dat"), NULL), 1000);
}

Test(plot, without_gnuplot_says_so_in_one_line)
{
    rd_run(dir, 2, 1, 5);
    setenv("PATH", "/nonexistent", 1);
    char *out = NULL;
    size_t n = 0;
    FILE *term = open_memstream(&out, &n);
    stall_plot_opts o = {.term = term};
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &o, NULL, &err), 0, "%s", err.msg);
    fclose(term);
    char want[1200];
    snprintf(want, sizeof want,
             "gnuplot not found: wrote data and scripts in %s/plots; render with gnuplot "
             "%s/plots/*.gp\n",
             dir, dir);
    cr_assert(strstr(out, want), "%s", out);
    free(out);
    cr_assert(rd_exists(dir, "plots/cdf.gp"));
}

Test(plot, renders_png_and_svg_with_gnuplot)
{
    if (!rd_have("gnuplot"))
        cr_skip_test("gnuplot not installed");
    rd_run(dir, 3, 2, 30);
    rd_write(dir, "per_rank.csv",
             "source,rank,total_s,startup_s,data_s,handover_s,compute_s,barrier_s,post_s,"
             "last_iterations,caused_wait_s\nsimulated,0,3,0.1,1,0.2,1,0.5,0.2,3,0.1\n"
             "simulated,1,3,0.1,0.5,0.2,1.5,0.5,0.2,5,0.2\nmeasured,0,3,0.1,1,0.2,1,0.5,0.2,3,0\n");
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, NULL, &res, &err), 0, "%s", err.msg);
    cr_assert(res.rendered);
    cr_assert_eq(res.nfig, 5);
    for (int i = 0; i < res.nfig; i++) {
        char name[64];
        snprintf(name, sizeof name, "plots/%s.png", res.name[i]);
        cr_assert(rd_exists(dir, name), "no %s", name);
        snprintf(name, sizeof name, "plots/%s.svg", res.name[i]);
        cr_assert(rd_exists(dir, name), "no %s", name);
        snprintf(name, sizeof name, "plots/%s.tmp.svg", res.name[i]);
        cr_assert_not(rd_exists(dir, name), "%s left behind", name);
    }
    /* A script re-renders from any folder. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd / && rm %s/plots/cdf.png && gnuplot %s/plots/cdf.gp && test -s %s/plots/cdf.png",
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
}

Test(plot, validate_folder_draws_per_epoch_and_says_what_it_cannot)
{
    rd_write(dir, "validate.csv",
             "epoch,measured_s,simulated_s,error_pct,measured_stall_s,simulated_stall_s,"
             "stall_error_pct\n0,2.9,2.8,-1,0.008,0.007,-12\n1,3.0,3.1,1,0.006,0.007,8\n"
             "2,3.0,3.0,0,0.006,0.006,0\n");
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_VALIDATE);
    cr_assert_eq(res.nfig, 1);
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/epochs.dat"), &fields), 3);
    cr_assert_eq(fields, 5);
    int said = 0;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "iterations.csv") != NULL;
    cr_assert(said, "no note on the per-iteration figures");
}

Test(plot, sweep_of_two_keys_is_a_grid_and_one_key_lines)
{
    rd_write(dir, "sweep.csv",
             "point,loader.workers,cluster.gpus,fetch_align,throughput_samples_s,stall_share\n"
             "0,1,1,none,100,0.5\n1,1,2,none,190,0.5\n2,2,1,none,150,0.2\n3,2,2,none,290,0.25\n"
             "4,10,1,none,160,0.1\n5,10,2,none,310,0.1\n");
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/sweep.dat"), &fields), 3 * 2);
    cr_assert_eq(fields, 4);
    char *gp = rd_slurp(sub("plots/sweep.gp"));
    /* Numeric values sorted as numbers: 1, 2, 10. */
    cr_assert(strstr(gp, "set xtics (\"1\" 0, \"2\" 1, \"10\" 2)"), "%s", gp);
    free(gp);
    rd_write(dir, "sweep.csv",
             "point,loader.workers,fetch_align,throughput_samples_s,stall_share\n"
             "0,4,none,100,0.5\n1,2,none,150,0.2\n");
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(rd_rows(sub("plots/sweep.dat"), &fields), 2);
    char *dat = rd_slurp(sub("plots/sweep.dat"));
    cr_assert(strstr(dat, "\n0 2 150 20\n1 4 100 50\n"), "%s", dat);
    free(dat);
}

Test(plot, plan_marks_threshold_and_chosen_count)
{
    rd_write(dir, "scaling.csv",
             "gpus,throughput_samples_s,speedup,efficiency,stall_share,throughput_batches_s\n"
             "1,100,1,1,0.1,1\n2,190,1.9,0.95,0.1,2\n4,350,3.5,0.875,0.1,4\n"
             "8,560,5.6,0.7,0.2,8\n");
    rd_write(dir, "plan.csv",
             "quantity,value,binding,simulations\nmin_workers_per_gpu,2,none,4\n"
             "max_efficient_gpus,4,allreduce,5\n");
    rd_write(dir, "effective.ini", "[scenario]\nname = p\n[plan]\nefficiency = 0.85\n");
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_PLAN);
    cr_assert_eq(rd_rows(sub("plots/scaling.dat"), NULL), 4);
    char *gp = rd_slurp(sub("plots/scaling.gp"));
    cr_assert(strstr(gp, "threshold = 85\n"), "%s", gp);
    cr_assert(strstr(gp, "chosen = 4\n"), "%s", gp);
    free(gp);
}

Test(plot, bad_folders_are_refused_with_exit_2)
{
    stall_err err = {0};
    cr_assert_eq(stall_plot(sub("nope"), NULL, NULL, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "not a folder"), "%s", err.msg);
    cr_assert_eq(stall_plot(dir, NULL, NULL, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "not a stallsim result folder"), "%s", err.msg);
    rd_write(dir, "summary.csv", "fetch_align,start_align\nnone,none,extra\n");
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, "summary.csv:2:"), "%s", err.msg);
    cr_assert_not(rd_exists(dir, "plots"), "plots/ written for a bad folder");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s plot %s/nope 2>/dev/null", BIN, dir);
    int st = system(cmd);
    cr_assert_eq(WEXITSTATUS(st), 2);
}

Test(plot, gnuplot_failure_is_an_error_quoting_it)
{
    rd_run(dir, 2, 1, 5);
    /* A "gnuplot" that fails like gnuplot on a bad script. */
    rd_write(dir, "fakegnuplot",
             "#!/bin/sh\necho '\"x.gp\" line 3: undefined variable' >&2\n"
             "exit 1\n");
    char fake[1100];
    snprintf(fake, sizeof fake, "%s/fakegnuplot", dir);
    chmod(fake, 0755);
    stall_plot_opts o = {.gnuplot = fake};
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &o, NULL, &err), STALL_EINTERNAL);
    cr_assert(strstr(err.msg, "gnuplot failed on") && strstr(err.msg, "undefined variable"), "%s",
              err.msg);
    cr_assert_not(rd_exists(dir, "plots/stall_ranks.tmp.png"));
}
