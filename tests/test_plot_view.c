/*
 * stallsim plot, as a user looks at the figures: real commands on real
 * traces of each format, then what the figure draws (its script and data)
 * checked where a look at the PNG found it wrong.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "resultdir.h"
#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"

static char dir[] = "/tmp/stall_plotview_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(plotview, .init = setup, .fini = teardown, .timeout = 300);

static char *sub(const char *name)
{
    static char p[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

#define sh(...) rd_sh(dir, __VA_ARGS__)

/* The script of figure fig in result folder r. */
static char *gp_of(const char *r, const char *fig)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/%s.gp", r, fig);
    char *gp = rd_slurp(p);
    cr_assert_not_null(gp, "%s: not written", p);
    return gp;
}

/* The longest line of the first `set title "..."` of a script (lines split
 * by gnuplot's \n), in characters. */
static int title_widest_line(const char *gp, char *title, size_t n)
{
    const char *t = strstr(gp, "set title \"");
    cr_assert_not_null(t, "no title");
    t += strlen("set title \"");
    const char *e = strstr(t, "\"\n");
    cr_assert_not_null(e);
    snprintf(title, n, "%.*s", (int)(e - t), t);
    int widest = 0, len = 0;
    for (const char *q = t; q < e; q++) {
        if (q[0] == '\\' && q[1] == 'n') {
            widest = len > widest ? len : widest;
            len = 0;
            q++;
            continue;
        }
        len++;
    }
    return len > widest ? len : widest;
}

/* A Kineto what-if whose epochs are profiling windows (not comparable with
 * the measured run) of fetch times inferred from the loop's waits: its
 * epochs figure's key ("simulated (fetch times inferred)") takes the right
 * third of the canvas, and the title, centred over what is left, ran past
 * its left edge: "ed not drawn: not comparable (...)" in the PNG. Each title
 * line stays within what a 900-px figure's plot area holds (about 76
 * characters of the 10-pt font), the sentence whole across its lines. */
Test(plotview, kineto_whatif_titles_fit_over_the_plot)
{
    char *r = sub("kddp");
    cr_assert_eq(sh("%s run tests/kineto/torch211/ddp2_w2 --set trace.workers=2 --analyze --plots "
                    "-o %s -q",
                    BIN, r),
                 0);
    const char *figs[] = {"epochs", "breakdown"};
    for (int i = 0; i < 2; i++) {
        char *gp = gp_of(r, figs[i]);
        char title[1024];
        int w = title_widest_line(gp, title, sizeof title);
        cr_expect_leq(w, 76, "%s: a title line of %d characters: %s", figs[i], w, title);
        cr_expect(strstr(title, "measured not drawn: not comparable"), "%s: %s", figs[i], title);
        cr_expect(strstr(title, "profiling windows the run starts empty"), "%s: %s", figs[i],
                  title);
        free(gp);
    }
}

/* A Kineto trace of 6 batches (w0_sched, a profiling window) in moving
 * windows of 5: two points, drawn as a straight line across the middle of
 * the epoch from 58% to 95% (the ddp2_w2 capture) or 32% to 31%, a trend
 * of two overlapping means. No figure under two windows per epoch, and the
 * terminal says why; 60 batches (w2) still draw theirs. */
Test(plotview, kineto_epoch_of_few_windows_draws_no_utilisation_line)
{
    char *r = sub("k0");
    cr_assert_eq(sh("%s run tests/kineto/w0_sched --plots -o %s", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/cmd.log", dir);
    char *log = rd_slurp(p);
    cr_assert(log && strstr(log, "under two moving windows of 5"), "%s", log ? log : "");
    free(log);
    cr_expect_not(rd_exists(r, "plots/gpu_util.gp"), "gpu_util drawn from 2 windows");
    cr_expect(rd_exists(r, "plots/cdf.gp") && rd_exists(r, "plots/epochs.gp"));
    r = sub("w2");
    cr_assert_eq(sh("%s run traces/w2/trace.csv --plots -o %s -q", BIN, r), 0);
    cr_expect(rd_exists(r, "plots/gpu_util.gp"));
}

/* The shaded band of gpu_util (+- one std over epochs) had no key entry:
 * the title's "mean over 3 epochs" left it unexplained, and on h100_w2 it
 * spans 0-70% over the start of the epoch. The key names it; a run of one
 * epoch has no band and no entry. */
Test(plotview, utilisation_band_is_named_in_the_key)
{
    char *r = sub("h100");
    cr_assert_eq(sh("%s run traces/gpu/h100_w2/trace.csv --plots -o %s -q", BIN, r), 0);
    char *gp = gp_of(r, "gpu_util");
    const char *band = strstr(gp, "with filledcurves");
    cr_assert_not_null(band, "no band: %s", gp);
    const char *eol = strchr(band, '\n');
    char el[400];
    snprintf(el, sizeof el, "%.*s", (int)(eol - band), band);
    cr_expect(strstr(el, "title \"+- std over epochs\""), "the band's key: %s", el);
    free(gp);
    r = sub("ex1");
    cr_assert_eq(sh("%s run configs/example-whatif.ini --plots -o %s -q", BIN, r), 0);
    gp = gp_of(r, "gpu_util");
    cr_expect_null(strstr(gp, "filledcurves"), "a band over one epoch");
    free(gp);
}

/* The notebook's trace has no compute_end: its measured compute holds the
 * all-reduce and the optimizer step (analyze: "compute includes the
 * all-reduce"), and so does the simulated one, which replays those
 * durations; the post part is 0. The breakdown's key said "compute" and
 * "all-reduce + step" over a part drawn nowhere, as if none took place.
 * It says compute holds them; a tidy trace with compute_end keeps the
 * plain words. */
static char *breakdown_key(const char *r)
{
    char *gp = gp_of(r, "breakdown");
    const char *plot = strstr(gp, "\nplot ");
    cr_assert_not_null(plot);
    char *keys = calloc(1, 4096);
    for (const char *t = strstr(plot, "title \""); t; t = strstr(t + 1, "title \"")) {
        const char *e = strchr(t + 7, '"');
        size_t n = strlen(keys);
        snprintf(keys + n, 4096 - n, "%.*s|", (int)(e - t - 7), t + 7);
    }
    free(gp);
    return keys;
}

Test(plotview, notebook_trace_breakdown_says_compute_holds_the_allreduce)
{
    char *r = sub("an");
    cr_assert_eq(sh("%s analyze configs/example-whatif.ini -o %s", BIN, r), 0);
    cr_assert_eq(sh("%s plot %s", BIN, r), 0);
    char *k = breakdown_key(r);
    cr_expect(strstr(k, "|compute, incl. the trace's all-reduce + step|"), "measured alone: %s", k);
    /* the measured bars' own all-reduce part is 0 (it is compute's): no
     * key entry for what is not drawn */
    cr_expect_null(strstr(k, "all-reduce + step|barrier"), "measured alone: %s", k);
    cr_expect_null(strstr(k, "the model adds"), "measured alone: %s", k);
    free(k);
    r = sub("wi");
    cr_assert_eq(sh("%s run configs/example-whatif.ini --analyze --plots -o %s -q", BIN, r), 0);
    k = breakdown_key(r);
    cr_expect(strstr(k, "|compute, incl. the trace's all-reduce + step|"),
              "simulated beside measured: %s", k);
    /* the simulated bars' part is what the model adds beyond the trace */
    cr_expect(strstr(k, "all-reduce + step the model adds|"), "simulated beside measured: %s", k);
    free(k);
    r = sub("ddp");
    cr_assert_eq(sh("%s validate traces/ddp2_w2/trace.csv --analyze --plots -o %s -q", BIN, r), 0);
    k = breakdown_key(r);
    cr_expect(strstr(k, "|compute|") && strstr(k, "all-reduce + step|"), "tidy: %s", k);
    cr_expect_null(strstr(k, "incl."), "tidy: %s", k);
    free(k);
}

/* configs/store-tiers.ini (store_warm): a cold epoch, then two warm ones.
 * The epochs figure drew them against the measured mean (1.644 s): the
 * cold one read as 63% over the measured, the warm ones 38% under, where
 * each is within 9% of its own measured epoch (2.934, 1.004, 0.995 s). With
 * --analyze the folder's storage.csv has the measured epochs, drawn as they
 * are on one rank (its epoch_s is the mean over ranks: on ddp2_w2's two,
 * not the epoch time, and the mean line stays). */
Test(plotview, storage_tiers_epochs_drawn_against_the_measured_epochs)
{
    char *r = sub("tiers");
    cr_assert_eq(sh("%s run configs/store-tiers.ini --analyze --plots -o %s", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/epochs.dat", r);
    char *dat = rd_slurp(p);
    cr_assert_not_null(dat);
    const char *m = strstr(dat, "# measured");
    cr_assert_not_null(m, "no measured epochs: %s", dat);
    int e[3];
    double v[3];
    cr_assert_eq(sscanf(strchr(m, '\n') + 1, "%d %lf %d %lf %d %lf", &e[0], &v[0], &e[1], &v[1],
                        &e[2], &v[2]),
                 6, "%s", m);
    const double want[] = {2.933897, 1.003535, 0.994726}; /* storage.csv, measured */
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(e[i], i);
        cr_expect(fabs(v[i] - want[i]) < 1e-6, "epoch %d: %g", i, v[i]);
    }
    free(dat);
    char *gp = gp_of(r, "epochs");
    cr_expect(strstr(gp, "index 1 using 1:2 with linespoints dt 2 pt 6 lc rgb \"#000000\" title "
                         "\"measured\""),
              "%s", gp);
    cr_expect_null(strstr(gp, "mean over epochs"), "%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/cmd.log", dir);
    char *log = rd_slurp(p);
    cr_expect(log && !strstr(log, "measured per-epoch times are not in a run folder"), "%s",
              log ? log : "");
    free(log);

    r = sub("ddp");
    cr_assert_eq(sh("%s run traces/ddp2_w2/trace.csv --set scenario.mode=model --analyze --plots "
                    "-o %s -q",
                    BIN, r),
                 0);
    cr_assert(rd_exists(r, "storage.csv"));
    gp = gp_of(r, "epochs");
    cr_expect(strstr(gp, "title \"measured (mean over epochs)\""), "%s", gp);
    free(gp);
}

/* The stall panels of a short run (Kineto ddp2_w2, two ranks of 6
 * iterations) got gnuplot's ten y tics each, 0 to 0.18 by 0.02 in 120 px:
 * labels touching, the top one against the panel above's "0". Three to
 * six tics per panel; a panel of 850 iterations (the notebook's trace, 0 to
 * 9.7 s) as well. */
static void panel_tics(const char *r)
{
    char *gp = gp_of(r, "stall_ranks");
    const char *yr = strstr(gp, "set yrange [0:"), *yt = strstr(gp, "\nset ytics ");
    cr_assert(yr && yt, "%s", gp);
    double top = atof(yr + strlen("set yrange [0:")), step = atof(yt + strlen("\nset ytics "));
    cr_assert_gt(step, 0);
    int tics = (int)floor(top / step + 1e-9) + 1;
    cr_expect(tics >= 3 && tics <= 6, "%s: %d tics (0 to %g by %g)", r, tics, top, step);
    free(gp);
}

Test(plotview, stall_panels_have_a_few_y_tics)
{
    char *r = sub("kddp");
    cr_assert_eq(
        sh("%s run tests/kineto/torch211/ddp2_w2 --set trace.workers=2 --plots -o %s -q", BIN, r),
        0);
    panel_tics(r);
    r = sub("ex");
    cr_assert_eq(sh("%s run configs/example.ini --plots -o %s -q", BIN, r), 0);
    panel_tics(r);
}

/* The epochs figure of a run of several epochs ran its x axis from the
 * first epoch to the last: their points sat on the frame, half of each
 * marker under it (epochs 0 and 2 of configs/w2.ini), and the tallest one
 * could sit on the top edge. A margin on each side and above. */
Test(plotview, epoch_points_stay_off_the_frame)
{
    char *r = sub("w2");
    cr_assert_eq(sh("%s run configs/w2.ini --plots -o %s -q", BIN, r), 0);
    char *gp = gp_of(r, "epochs");
    const char *xr = strstr(gp, "set xrange [");
    cr_assert_not_null(xr, "%s", gp);
    double lo, hi;
    cr_assert_eq(sscanf(xr + strlen("set xrange ["), "%lf:%lf", &lo, &hi), 2);
    cr_expect(lo < 0 && hi > 2 && lo > -1 && hi < 3, "x range [%g:%g] for epochs 0..2", lo, hi);
    cr_expect(strstr(gp, "set offsets 0, 0, graph 0.05, 0\n"), "%s", gp);
    free(gp);
}

/* A short run's stall panels mark each iteration; the last one's marker
 * sat on the right border, half under it (iteration 5 of the Kineto
 * ddp2_w2 what-if), where iteration 0's has a margin. The same margin on
 * the right; a long run's line still ends at the border. */
Test(plotview, short_stall_panels_keep_the_last_marker_inside)
{
    char *r = sub("kddp");
    cr_assert_eq(
        sh("%s run tests/kineto/torch211/ddp2_w2 --set trace.workers=2 --plots -o %s -q", BIN, r),
        0);
    char *gp = gp_of(r, "stall_ranks");
    const char *xr = strstr(gp, "set xrange [");
    cr_assert_not_null(xr, "%s", gp);
    double lo, hi;
    cr_assert_eq(sscanf(xr + strlen("set xrange ["), "%lf:%lf", &lo, &hi), 2);
    cr_expect(strstr(gp, "linespoints"), "6 iterations are marked: %s", gp);
    cr_expect_float_eq(hi - 5, 0 - lo, 1e-9, "x range [%g:%g] for iterations 0..5", lo, hi);
    free(gp);
}

/* validate --analyze of a Kineto trace whose epochs are profiling windows
 * (w2_sched): analyze leaves the measured ranks out (the simulated run
 * starts each epoch empty, the windows did not), and the breakdown drew
 * the simulated bars alone without a word: a validation figure with no
 * measured series. Its title says why, as a what-if's does; a tidy trace's
 * validation draws both and says nothing. */
Test(plotview, validate_of_profiling_windows_says_the_measured_bars_are_left_out)
{
    char *r = sub("kval");
    cr_assert_eq(sh("%s validate tests/kineto/w2_sched --set trace.workers=2 --analyze --plots -o "
                    "%s -q",
                    BIN, r),
                 0);
    char *gp = gp_of(r, "breakdown");
    char title[1024];
    title_widest_line(gp, title, sizeof title);
    cr_expect(strstr(title, "measured not drawn: not comparable"), "%s", title);
    cr_expect_null(strstr(gp, "index 1 "), "one group of bars: %s", gp);
    free(gp);
    r = sub("tval");
    cr_assert_eq(sh("%s validate traces/ddp2_w2/trace.csv --analyze --plots -o %s -q", BIN, r), 0);
    gp = gp_of(r, "breakdown");
    title_widest_line(gp, title, sizeof title);
    cr_expect_null(strstr(title, "not drawn"), "%s", title);
    free(gp);
}

/* A sweep over a numeric axis on a linear scale (storage.cache_mb=0..80 of
 * store-tiers.ini) drew its first and last points on the frame, half of
 * each marker under it. A margin each side. */
Test(plotview, sweep_points_stay_off_the_frame)
{
    char *r = sub("swc");
    cr_assert_eq(sh("%s sweep configs/store-tiers.ini --sweep storage.cache_mb=0,20,40 --plots -o "
                    "%s -q",
                    BIN, r),
                 0);
    char *gp = gp_of(r, "sweep");
    const char *xr = strstr(gp, "set xrange [");
    cr_assert_not_null(xr, "no x range: %s", gp);
    double lo, hi;
    cr_assert_eq(sscanf(xr + strlen("set xrange ["), "%lf:%lf", &lo, &hi), 2);
    cr_expect(lo < 0 && hi > 40 && lo > -4 && hi < 44, "x range [%g:%g] for 0..40", lo, hi);
    free(gp);
}

/* The title of a figure, whichever way the script sets it: `set title` or
 * the multiplot's. */
static void fig_title(const char *gp, char *title, size_t n)
{
    const char *m = strstr(gp, "multiplot layout"), *t = strstr(gp, "set title \"");
    const char *at = m && (!t || m < t) ? strstr(m, "title \"") : t;
    cr_assert_not_null(at, "no title: %s", gp);
    at = strchr(at, '"') + 1;
    const char *e = at;
    while (*e && !(*e == '"' && e[-1] != '\\'))
        e++;
    snprintf(title, n, "%.*s", (int)(e - at), at);
}

/* Every what-if of a trace was titled by the trace alone: `stallsim run
 * traces/ddp2_w2/trace.csv --set loader.workers=8 --set compute.scale=0.5`
 * wrote results/ddp2_w2+loader.workers=8+compute.scale=0.5/ whose figures
 * all said "- ddp2_w2", as the plain run's do, and two what-ifs side by
 * side read alike. The folder's keys are named, on a line of their own
 * where they would push a title past the figure's edges (gpu_util's, 130
 * characters, lost its first 6 on the left). validate leaves what-if keys
 * out: its folder's are not named. A folder that -o names takes the keys
 * from effective.ini's "; set" line (titled by the trace alone before). */
Test(plotview, whatif_figures_name_the_whatif)
{
    const char *name = "ddp2_w2+loader.workers=8+compute.scale=0.5";
    char *r = sub(name);
    cr_assert_eq(sh("%s run traces/ddp2_w2/trace.csv --set loader.workers=8 --set "
                    "compute.scale=0.5 --analyze --plots -o %s -q",
                    BIN, r),
                 0);
    const char *figs[] = {"stall_ranks", "cdf", "gpu_util", "epochs", "breakdown"};
    for (int i = 0; i < 5; i++) {
        char *gp = gp_of(r, figs[i]);
        char title[1024];
        fig_title(gp, title, sizeof title);
        cr_expect(strstr(title, name), "%s: %s", figs[i], title);
        int len = 0, widest = 0;
        for (const char *q = title; *q; q++) {
            if (q[0] == '\\' && q[1] == 'n') {
                len = 0;
                q++;
                continue;
            }
            widest = ++len > widest ? len : widest;
        }
        cr_expect_leq(widest, 76, "%s: a title line of %d characters: %s", figs[i], widest, title);
        free(gp);
    }
    /* wherever -o puts it: effective.ini names the keys ("; set ...") */
    r = sub("anywhere");
    cr_assert_eq(
        sh("%s run traces/ddp2_w2/trace.csv --set loader.workers=8 --plots -o %s -q", BIN, r), 0);
    {
        char *gp = gp_of(r, "stall_ranks");
        char title[1024];
        fig_title(gp, title, sizeof title);
        cr_expect(strstr(title, "ddp2_w2+loader.workers=8"), "-o anywhere: %s", title);
        free(gp);
    }
    r = sub("ddp2_w2-validate+loader.workers=8");
    cr_assert_eq(
        sh("%s validate traces/ddp2_w2/trace.csv --set loader.workers=8 --plots -o %s -q", BIN, r),
        0);
    char *gp = gp_of(r, "epochs");
    char title[1024];
    fig_title(gp, title, sizeof title);
    cr_expect_null(strstr(title, "loader.workers="), "%s", title);
    free(gp);
}

/* validate simulates the trace's measured configuration, leaving the INI's
 * what-if out, yet its figures were titled by the INI's [scenario] name:
 * `validate configs/w2.ini` drew "... - w2-whatif, trace w2", the name of
 * the 4-worker what-if it did not run. They name the trace and say that
 * it is its measured configuration, the per-rank bar too. */
Test(plotview, validate_figures_name_the_measured_configuration)
{
    char *r = sub("v-w2");
    cr_assert_eq(sh("%s validate configs/w2.ini --analyze --plots -o %s -q", BIN, r), 0);
    const char *figs[] = {"epochs", "breakdown"};
    for (int i = 0; i < 2; i++) {
        char *gp = gp_of(r, figs[i]);
        char title[1024];
        fig_title(gp, title, sizeof title);
        cr_expect(strstr(title, "validate: w2, measured configuration"), "%s: %s", figs[i], title);
        cr_expect_null(strstr(title, "whatif"), "%s: %s", figs[i], title);
        free(gp);
    }
    /* a trace given directly: named once */
    r = sub("v-strag");
    cr_assert_eq(sh("%s validate traces/ddp2_straggler --plots -o %s -q", BIN, r), 0);
    char *gp = gp_of(r, "epochs");
    char title[1024];
    fig_title(gp, title, sizeof title);
    cr_expect(strstr(title, "\\nvalidate: ddp2_straggler, measured configuration"), "%s", title);
    free(gp);
}

/* traces/spawn_persistent: a 1.95 s start-up stall at iteration 0 and
 * 0.03-0.06 s after it. The y range went to 2 s and every later stall lay
 * on the axis, unreadable. The scale now stops above the later stalls and
 * the panel names what went above it; the data file keeps every value. */
Test(plotview, a_startup_stall_that_dwarfs_the_rest_is_named_above_the_scale)
{
    char *r = sub("spawn");
    cr_assert_eq(sh("%s run traces/spawn_persistent/trace.csv --plots -o %s -q", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    char line[512];
    double first = -1, later = 0;
    while (fgets(line, sizeof line, f)) {
        double it, ep, b, v;
        if (line[0] == '#' || sscanf(line, "%lf %lf %lf %lf", &it, &ep, &b, &v) != 4)
            continue;
        if (first < 0)
            first = v;
        else
            later = fmax(later, v);
    }
    fclose(f);
    cr_assert_gt(first, 8 * later, "iteration 0: %g s, after: %g s", first, later);
    char *gp = gp_of(r, "stall_ranks");
    const char *yr = strstr(gp, "set yrange [0:");
    cr_assert_not_null(yr, "%s", gp);
    double top = atof(yr + strlen("set yrange [0:"));
    cr_expect_geq(top, later, "the scale %g s cuts a later stall of %g s", top, later);
    cr_expect_lt(top, 2 * later, "the scale %g s flattens the later stalls (up to %g s)", top,
                 later);
    char want[128];
    snprintf(want, sizeof want,
             "1 epoch start-up stall above the scale, up to %.3g s (iteration 0)", first);
    cr_expect(strstr(gp, want), "no '%s' in\n%s", want, gp);
    cr_expect(strstr(gp, "set label 1 cut[r + 1]"), "%s", gp);
    free(gp);
}

/* The note of a cut start-up stall is an opaque box at the panel's top
 * (graph 0.81-0.94 of 120 px): the later stalls rose to 80% of the scale,
 * and on traces/spawn_persistent the box hid the peaks at iterations 100
 * and 150 (0.078 s, 0.068 s), on the 8-rank sleep_ddp8_r2 every panel's.
 * Every later stall now stays under the box: below 75% of the scale, the
 * note centred at 90%. */
Test(plotview, the_note_of_a_cut_stall_hides_no_later_stall)
{
    const char *tr[] = {"traces/spawn_persistent", "traces/cpushare/sleep_ddp8_r2"};
    for (int k = 0; k < 2; k++) {
        char *r = sub(k ? "cut8" : "cut1");
        cr_assert_eq(sh("%s run %s --plots -o %s -q", BIN, tr[k], r), 0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
        FILE *f = fopen(p, "r");
        cr_assert_not_null(f, "%s", p);
        char *gp = gp_of(r, "stall_ranks");
        const char *yr = strstr(gp, "set yrange [0:");
        cr_assert_not_null(yr, "%s", gp);
        double scale = atof(yr + strlen("set yrange [0:"));
        const char *lab = strstr(gp, "set label 1 cut[r + 1] at graph 0.99, graph ");
        cr_assert_not_null(lab, "%s: no note of a cut stall:\n%s", tr[k], gp);
        double at = atof(lab + strlen("set label 1 cut[r + 1] at graph 0.99, graph "));
        cr_expect_geq(at, 0.88, "%s: the note at graph %g", tr[k], at);
        /* every value under the scale (the cut ones are above it) */
        char line[4096];
        double most = 0;
        while (fgets(line, sizeof line, f)) {
            if (line[0] == '#')
                continue;
            char *q = line, *e;
            for (int col = 0;; col++) {
                double v = strtod(q, &e);
                if (e == q)
                    break;
                if (col >= 3 && v <= scale)
                    most = fmax(most, v);
                q = e;
            }
        }
        fclose(f);
        cr_expect_gt(most, 0, "%s", tr[k]);
        cr_expect_leq(most / scale, 0.75,
                      "%s: a later stall of %g s at %.0f%% of the %g s scale, under the note",
                      tr[k], most, 100 * most / scale, scale);
        free(gp);
    }
}

/* More --set keys than a folder's name holds: its tag is cut to 83
 * characters, "+" and 12 hex digits of its SHA-256, and the titles, which
 * read the same tag from effective.ini, ended "+run.epochs=2+..." (w2-64
 * of `make figures`: docs/img/stall_ranks_64.png hid the loader.workers=2
 * that overrides the INI's 4 workers). Every title names every key=value,
 * the keys on lines of their own of at most 76 characters; the folder's
 * name is as it was. */
Test(plotview, every_set_key_is_named_in_the_titles)
{
    static const char *const keys[] = {"cluster.gpus=4",           "cluster.gpus_per_node=2",
                                       "run.batches=100",          "run.epochs=2",
                                       "fetch.resample=bootstrap", "loader.workers=2",
                                       "compute.scale=0.5",        "fetch.scale=0.9"};
    enum { NK = sizeof keys / sizeof *keys };
    char sets[600] = "", tag[600] = "";
    for (int k = 0; k < NK; k++) {
        size_t n = strlen(sets), t = strlen(tag);
        snprintf(sets + n, sizeof sets - n, " --set %s", keys[k]);
        snprintf(tag + t, sizeof tag - t, "+%s", keys[k]);
    }
    /* the default folder, under dir */
    cr_assert_eq(sh("cd %s && %s run %s/configs/w2.ini%s --analyze --plots -q", dir, BIN,
                    STALL_SOURCE_DIR, sets),
                 0);
    char r[1200];
    snprintf(r, sizeof r, "%s/results/w2-whatif%.83s+", dir, tag);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "ls -d '%s'????????????", r);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(r, sizeof r, p), "no folder %s<12 hex digits>", r);
    pclose(p);
    r[strcspn(r, "\n")] = '\0';
    const char *figs[] = {"stall_ranks", "cdf", "gpu_util", "epochs", "breakdown"};
    for (int i = 0; i < 5; i++) {
        char *gp = gp_of(r, figs[i]);
        char title[2048];
        fig_title(gp, title, sizeof title);
        for (int k = 0; k < NK; k++)
            cr_expect(strstr(title, keys[k]), "%s: no %s in the title: %s", figs[i], keys[k],
                      title);
        cr_expect_null(strstr(title, "..."), "%s: %s", figs[i], title);
        int len = 0, widest = 0;
        for (const char *q = title; *q; q++) {
            if (q[0] == '\\' && q[1] == 'n') {
                len = 0;
                q++;
                continue;
            }
            widest = ++len > widest ? len : widest;
        }
        cr_expect_leq(widest, 76, "%s: a title line of %d characters: %s", figs[i], widest, title);
        free(gp);
    }
}

/* The whole title of a figure (fig_title's), its string literals joined:
 * a sweep's `set title "Throughput ... against loader.workers"."\n..."`. */
static void fig_title_whole(const char *gp, char *title, size_t n)
{
    const char *m = strstr(gp, "multiplot layout"), *t = strstr(gp, "set title \"");
    const char *at = m && (!t || m < t) ? strstr(m, "title \"") : t;
    cr_assert_not_null(at, "no title: %s", gp);
    at = strchr(at, '"');
    size_t o = 0;
    while (at && *at == '"') {
        const char *e = at + 1;
        while (*e && !(*e == '"' && e[-1] != '\\'))
            e++;
        o += (size_t)snprintf(title + o, o < n ? n - o : 0, "%.*s", (int)(e - at - 1), at + 1);
        at = *e && e[1] == '.' && e[2] == '"' ? e + 2 : NULL;
    }
}

/* A sweep's figures named its --set keys by its default folder's name,
 * cut after 96 characters: `sweep configs/w2.ini --sweep
 * loader.workers=1,2,4` with six keys was titled
 * "w2-whatif+cluster.gpus=8+...+run.epochs=2+fetch.resample+5b83ac6eed37",
 * fetch.resample's value and compute.scale lost to 12 hex digits, and with
 * -o DIR it named none ("... - w2-whatif, trace w2"). Its titles name the
 * scenario, every key=value whole and the trace, as a run's do, wherever
 * -o puts it, on lines of at most 76 characters, and not the swept keys
 * (the axes say them; a [sweep] line given with --set neither). plan's
 * scaling figure, titled from its own effective.ini, names them too, less
 * plan.* (a default folder named by them titled "+plan.max_gpus=8"). */
Test(plotview, sweep_and_plan_titles_name_every_set_key_but_the_axes)
{
    static const char *const keys[] = {"cluster.gpus=4",           "cluster.gpus_per_node=2",
                                       "run.batches=100",          "run.epochs=2",
                                       "fetch.resample=bootstrap", "compute.scale=0.5",
                                       "fetch.scale=0.9",          "cluster.cores=8"};
    enum { NK = sizeof keys / sizeof *keys };
    char sets[600] = "";
    for (int k = 0; k < NK; k++) {
        size_t n = strlen(sets);
        snprintf(sets + n, sizeof sets - n, " --set %s", keys[k]);
    }
    const char *w2 = STALL_SOURCE_DIR "/configs/w2.ini";
    cr_assert_eq(
        sh("cd %s && %s sweep %s --sweep loader.workers=1,2,4%s -q --plots", dir, BIN, w2, sets),
        0);
    cr_assert_eq(sh("%s sweep %s --sweep loader.workers=1,2,4%s -o %s -q --plots", BIN, w2, sets,
                    sub("sw1")),
                 0);
    cr_assert_eq(sh("%s sweep %s --sweep loader.workers=1,2 --set "
                    "sweep.loader.prefetch_factor=2,4%s -o %s -q --plots",
                    BIN, w2, sets, sub("sw2")),
                 0);
    cr_assert_eq(
        sh("%s plan %s --set plan.max_gpus=8%s -o %s -q --plots", BIN, w2, sets, sub("pl")), 0);
    /* the default folder's name, cut: "...+fetch.resample+<12 hex digits>" */
    char r[1200] = "";
    snprintf(r, sizeof r, "ls -d %s/results/w2-whatif-sweep+*", dir);
    FILE *p = popen(r, "r");
    cr_assert_not_null(p);
    cr_assert_not_null(fgets(r, sizeof r, p), "no default sweep folder");
    pclose(p);
    r[strcspn(r, "\n")] = '\0';
    cr_assert_null(strstr(r, "compute.scale"), "the folder's name is not cut: %s", r);
    const char *figs[][2] = {
        {r, "sweep"}, {sub("sw1"), "sweep"}, {sub("sw2"), "sweep"}, {sub("pl"), "scaling"}};
    for (int i = 0; i < 4; i++) {
        char *gp = gp_of(figs[i][0], figs[i][1]);
        char title[2048];
        fig_title_whole(gp, title, sizeof title);
        cr_expect(strstr(title, "w2-whatif+") && strstr(title, "trace w2"), "%s: %s", figs[i][0],
                  title);
        for (int k = 0; k < NK; k++)
            cr_expect(strstr(title, keys[k]), "%s: no %s in the title: %s", figs[i][0], keys[k],
                      title);
        cr_expect_null(strstr(title, "..."), "%s: %s", figs[i][0], title);
        cr_expect_null(strstr(title, "loader.workers="), "%s: an axis named: %s", figs[i][0],
                       title);
        cr_expect_null(strstr(title, "prefetch_factor="), "%s: an axis named: %s", figs[i][0],
                       title);
        cr_expect_null(strstr(title, "plan."), "%s: %s", figs[i][0], title);
        int len = 0, widest = 0;
        for (const char *q = title; *q; q++) {
            if (q[0] == '\\' && q[1] == 'n') {
                len = 0;
                q++;
                continue;
            }
            widest = ++len > widest ? len : widest;
        }
        cr_expect_leq(widest, 76, "%s: a title line of %d characters: %s", figs[i][0], widest,
                      title);
        free(gp);
    }
    /* a plan's default folder of plan.* keys alone: its name's
     * "+plan.max_gpus=8" was the title's, where -o's named none */
    cr_assert_eq(sh("cd %s && %s plan %s --set plan.max_gpus=8 -q --plots", dir, BIN, w2), 0);
    snprintf(r, sizeof r, "%s/results/w2-whatif-plan+plan.max_gpus=8", dir);
    char *gp = gp_of(r, "scaling");
    char title[2048];
    fig_title_whole(gp, title, sizeof title);
    cr_expect(strstr(title, "w2-whatif, trace w2") && !strstr(title, "plan."), "%s", title);
    free(gp);
}

/* plan's scaling figure: the dotted line at the chosen GPU count (64, the
 * search's bound, on `make figures`' plan) ran through the key's samples
 * at the bottom right; the key is drawn opaque, over it. */
Test(plotview, the_plan_key_is_drawn_over_the_chosen_count_line)
{
    char *r = sub("plan");
    cr_assert_eq(sh("%s plan configs/w2.ini --set plan.max_gpus=8 --set plan.max_workers=4 --plots "
                    "-o %s -q",
                    BIN, r),
                 0);
    char *gp = gp_of(r, "scaling");
    const char *arrow = strstr(gp, "set arrow 1 from chosen");
    cr_assert_not_null(arrow, "no chosen-count line:\n%s", gp);
    const char *key = strstr(gp, "set key bottom right");
    cr_assert_not_null(key, "%s", gp);
    cr_expect_eq(strncmp(key, "set key bottom right opaque\n", 28), 0, "%.40s", key);
    free(gp);
}

/* plan's throughput panel drew the ideal line grey and dashed over the
 * simulated blue one: near 100% efficiency (example-whatif.ini, 99% at 64
 * GPUs) they read as one line. The ideal is green, drawn first (under the
 * simulated line), named as such in the key, also at 100% in the
 * efficiency panel, where the gap shows; the throughput panel says how
 * close the two are. */
Test(plotview, plan_ideal_line_is_told_from_the_simulated_one)
{
    char *r = sub("plan-ideal");
    cr_assert_eq(
        sh("%s plan configs/example-whatif.ini --set plan.max_gpus=64 --plots -o %s -q", BIN, r),
        0);
    char *gp = gp_of(r, "scaling");
    const char *p1 = strstr(gp, "\nplot "), *p2 = p1 ? strstr(p1 + 1, "\nplot ") : NULL;
    cr_assert(p1 && p2, "%s", gp);
    char thr[1024], eff[1024];
    snprintf(thr, sizeof thr, "%.*s", (int)strcspn(p1 + 1, "\n"), p1 + 1);
    snprintf(eff, sizeof eff, "%.*s", (int)strcspn(p2 + 1, "\n"), p2 + 1);
    /* the ideal first, in a colour of its own */
    const char *ideal = strstr(thr, "title \"ideal"), *simul = strstr(thr, "title \"simulated\"");
    cr_assert(ideal && simul, "%s", thr);
    cr_expect_lt(ideal, simul, "the ideal is drawn over the simulated line: %s", thr);
    cr_expect(strstr(thr, "using 1:3 with lines dt (16,8) lw 2 lc rgb \"#009E73\""), "%s", thr);
    cr_expect_null(strstr(thr, "#888888"), "%s", thr);
    cr_expect(strstr(thr, "using 1:2 with linespoints pt 7 lw 1.5 lc 1 title \"simulated\""), "%s",
              thr);
    /* the efficiency panel draws the ideal too, in its colour */
    const char *want =
        "plot 100 with lines dt (16,8) lw 2 lc rgb \"#009E73\" title \"ideal (100%)\"";
    cr_expect_eq(strncmp(eff, want, strlen(want)), 0, "%s", eff);
    /* and the throughput panel says how close they are, then not on the other */
    const char *l3 = strstr(gp, "set label 3 \"simulated within ");
    cr_assert_not_null(l3, "%s", gp);
    double within = atof(l3 + strlen("set label 3 \"simulated within "));
    cr_expect(within > 0 && within <= 5, "%g", within);
    cr_expect_lt(l3, p1);
    const char *un = strstr(gp, "unset label 3");
    cr_expect(un && un > p1 && un < p2, "label 3 stays on the efficiency panel");
    free(gp);
}

/* `stallsim analyze TRACE -o DIR` then `plot DIR`: an analyze folder has no
 * effective.ini, and its figure was titled by the folder given ("Where each
 * rank's time went - an_kin" for the public Kineto trace, "- mine" below),
 * naming nothing of what was analysed. analyze.csv now names the input as
 * its default folder does, and the title says it wherever -o put it. */
Test(plotview, an_analyze_folder_given_with_o_is_titled_by_its_input)
{
    const char *in[] = {"tests/public/hta_trace_diff_test.json.gz", "traces/ddp2_straggler",
                        "configs/example.ini"};
    const char *want[] = {"analyze-hta_trace_diff_test", "analyze-ddp2_straggler",
                          "analyze-example"};
    for (int k = 0; k < 3; k++) {
        char *r = sub("mine");
        cr_assert_eq(sh("rm -rf %s && %s analyze %s -o %s > /dev/null && %s plot %s > /dev/null", r,
                        BIN, in[k], r, BIN, r),
                     0, "%s", in[k]);
        char *gp = gp_of(r, "breakdown");
        char title[1024];
        fig_title(gp, title, sizeof title);
        cr_expect(strstr(title, want[k]), "%s: '%s' does not name it", in[k], title);
        cr_expect_null(strstr(title, "mine"), "%s: '%s' names the folder", in[k], title);
        free(gp);
    }
}

/* The breakdown's key (outside, right) is sized by gnuplot from its font's
 * widest character, a quarter more than its titles take: on the example
 * what-if the plot area ended at 521 of 900 px, the key's column taking the
 * other half of the figure empty. The key now takes back a fifth of its
 * longest title: the plot area reaches past 60% of the width. gnuplot runs
 * the written script and prints where its plot area ended. */
Test(plotview, the_breakdowns_key_leaves_the_bars_the_figure)
{
    if (!rd_have("gnuplot"))
        tmpdir_skip(dir, "gnuplot not on PATH");
    char *r = sub("bk");
    cr_assert_eq(sh("%s run configs/example-whatif.ini --analyze --plots -o %s -q", BIN, r), 0);
    char *gp = gp_of(r, "breakdown");
    cr_assert(strstr(gp, "set terminal svg size 900,480"), "%s", gp);
    free(gp);
    cr_assert_eq(sh("cd %s/plots && echo 'set print \"%s/edge.txt\"; print GPVAL_TERM_XMAX' | "
                    "gnuplot -e 'out=\"%s/edge\"' breakdown.gp -",
                    r, dir, dir),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/edge.txt", dir);
    char *edge = rd_slurp(p);
    cr_assert_not_null(edge);
    double x = atof(edge);
    cr_expect_geq(x, 0.6 * 900, "the plot area ends at %.0f of 900 px: %s", x, edge);
    free(edge);
}
