/*
 * plot_run.c - the figures of run folders, from each alignment's
 * iterations.csv and ranks.csv (plot_int.h).
 *
 * Legibility rules (the stall per rank: plot_ranks.c): a CDF is its iterations' empirical
 * distribution (steps) up to PLOT_CDF_POINTS of them, else PLOT_CDF_POINTS
 * quantiles (a line), and alignments whose CDFs coincide (within
 * PLOT_SAME_PCT of the axis on average) are drawn as one line that says so.
 * Time and memory O(iterations x ranks x combinations).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot_int.h"
#include "stall/io.h"

#define PLOT_CDF_POINTS 1000
#define PLOT_UTIL_WINDOWS 20
#define PLOT_SAME_PCT 1.0
#define PLOT_SAME_QUANTILES 101

/* ---- run folders ---- */

/* The legend of line j, which stands for every alignment o with rep[o] == j
 * (their curves lie within gap of it, in unit): its own label alone, "all N
 * (within gap)", or "a = b = c (within gap)". */
static void plot_merged_title(char *title, size_t n, const plot_combo *k, const int *rep, int nk,
                              int j, double gap, const char *unit)
{
    if (k[j].lone) {
        snprintf(title, n, "simulated");
        return;
    }
    int with = 0;
    for (int o = j + 1; o < nk; o++)
        with += rep[o] == j;
    if (with == 0) {
        snprintf(title, n, "%s", k[j].label);
        return;
    }
    if (with + 1 == nk) {
        snprintf(title, n, "all %d (within %.1f%s)", nk, gap, unit);
        return;
    }
    size_t u = (size_t)snprintf(title, n, "%s", k[j].label);
    for (int o = j + 1; o < nk && u < n; o++)
        if (rep[o] == j)
            u += (size_t)snprintf(title + u, n - u, " = %s", k[o].label);
    if (u < n)
        snprintf(title + u, n - u, " (within %.1f%s)", gap, unit);
}

static double plot_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

/* The sorted iteration times and stalls of one combination. */
typedef struct plot_sorted {
    double *it, *st;
    size_t m;
} plot_sorted;

/* The gap between the CDFs of a and b: the mean distance between their
 * quantiles (0, 1, ..., 100%), in percent of scale (the largest value of
 * its kind), the larger of iteration time's and stall's. */
static double plot_cdf_gap(const plot_sorted *a, const plot_sorted *b, double si, double ss)
{
    double gi = 0, gs = 0;
    if (a->m == 0 || b->m == 0)
        return a->m == b->m ? 0 : INFINITY;
    for (int i = 0; i < PLOT_SAME_QUANTILES; i++) {
        double q = (double)i / (PLOT_SAME_QUANTILES - 1);
        gi += fabs(plot_quantile(a->it, a->m, q) - plot_quantile(b->it, b->m, q));
        gs += fabs(plot_quantile(a->st, a->m, q) - plot_quantile(b->st, b->m, q));
    }
    gi = si > 0 ? 100 * gi / PLOT_SAME_QUANTILES / si : 0;
    gs = ss > 0 ? 100 * gs / PLOT_SAME_QUANTILES / ss : 0;
    return fmax(gi, gs);
}

/* The x tics of a CDF panel over [lo, hi]: a step of 1, 2 or 5 x 10^k
 * giving at most 7 labels. gnuplot's own put 12 labels of 6 characters
 * on a panel of 3 iterations within 5 ms of each other ("0.50950.510.5105"
 * run together). Values all equal: a range around them, the step at
 * its middle. */
static void plot_cdf_xtics(FILE *gp, double lo, double hi)
{
    if (!isfinite(lo) || !isfinite(hi))
        return;
    if (hi <= lo) {
        double pad = lo != 0 ? 0.05 * fabs(lo) : 1.0;
        fprintf(gp, "set xrange [%.9g:%.9g]\n", lo - pad, hi + pad);
        lo -= pad;
        hi += pad;
    } else
        fputs("set xrange [*:*]\n", gp);
    double raw = (hi - lo) / 6, e = pow(10, floor(log10(raw))), f = raw / e;
    double step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * e;
    fprintf(gp, "set xtics %.9g\n", step);
}

static void plot_cdf(plot_ctx *c, plot_combo *k, int nk)
{
    plot_sorted *v = stall_xcalloc((size_t)nk + 1, sizeof *v);
    double si = 0, ss = 0;
    for (int j = 0; j < nk; j++) {
        const stall_table *t = k[j].it;
        size_t n = t->nrows;
        v[j].it = stall_xcalloc(n + 1, sizeof *v[j].it);
        v[j].st = stall_xcalloc(n + 1, sizeof *v[j].st);
        for (size_t i = 0; i < n; i++) {
            double a = stall_table_num(t, i, k[j].c_iter), b = stall_table_num(t, i, k[j].c_stall);
            if (!isfinite(a) || !isfinite(b))
                continue;
            v[j].it[v[j].m] = a;
            v[j].st[v[j].m++] = b;
            si = fmax(si, fabs(a));
            ss = fmax(ss, fabs(b));
        }
        qsort(v[j].it, v[j].m, sizeof *v[j].it, stall_plot_cmp_double);
        qsort(v[j].st, v[j].m, sizeof *v[j].st, stall_plot_cmp_double);
    }
    size_t most = 0;
    for (int j = 0; j < nk; j++)
        most = v[j].m > most ? v[j].m : most;
    if (most < 2) {
        /* One iteration is a step no line draws (a blank figure). */
        stall_plot_note(c,
                        "distribution (CDF) of iteration time and stall: the run has %s, "
                        "nothing to draw (iterations.csv has it)",
                        most ? "one iteration" : "no iteration with finite times");
        stall__plot_drop(c, "cdf");
        for (int j = 0; j < nk; j++) {
            free(v[j].it);
            free(v[j].st);
        }
        free(v);
        return;
    }
    /* Alignments whose CDFs coincide (within PLOT_SAME_PCT of scale) with an
     * earlier one are drawn as that one's line, which names them. */
    int *rep = stall_xcalloc((size_t)nk + 1, sizeof *rep);
    double *gap = stall_xcalloc((size_t)nk + 1, sizeof *gap);
    int lines = 0;
    for (int j = 0; j < nk; j++) {
        rep[j] = j;
        for (int r = 0; r < j; r++)
            if (rep[r] == r) {
                double g = plot_cdf_gap(&v[r], &v[j], si, ss);
                if (g <= PLOT_SAME_PCT) {
                    rep[j] = r;
                    gap[r] = fmax(gap[r], g);
                    break;
                }
            }
        lines += rep[j] == j;
    }
    double maxgap = 0;
    for (int j = 0; j < nk; j++)
        maxgap = fmax(maxgap, gap[j]);
    char cap[320], same[160] = "";
    if (lines < nk)
        snprintf(same, sizeof same,
                 "; %d of the %d coincide with another (quantiles within %.1f%% of the axis on "
                 "average) and share its line",
                 nk - lines, nk, maxgap);
    snprintf(cap, sizeof cap,
             "Distribution (CDF) of iteration time and training stall, one line per "
             "alignment%s",
             same);
    stall_plot_begin(c, "cdf", 1000, 420, cap);
    fputs("# fraction iteration_s stall_s (one block per line drawn: ", c->dat);
    int b = 0;
    for (int j = 0; j < nk; j++)
        if (rep[j] == j)
            fprintf(c->dat, "%s%s", b++ ? ", " : "", k[j].label);
    fprintf(c->dat,
            "; up to %d iterations the empirical distribution, drawn as steps: a row per "
            "iteration, the fraction at or below its value, after a first row at fraction 0; "
            "more: %d interpolated quantiles)\n",
            PLOT_CDF_POINTS, PLOT_CDF_POINTS);
    /* Each line's title: its alignment and those drawn by it. */
    char(*title)[256] = stall_xcalloc((size_t)nk + 1, sizeof *title);
    for (int j = 0; j < nk; j++) {
        if (rep[j] != j)
            continue;
        plot_merged_title(title[j], sizeof title[j], k, rep, nk, j, gap[j], "%");
    }
    /* Up to PLOT_CDF_POINTS iterations, the empirical distribution itself:
     * a step of 1/m at each value (a row (0, v0) for the foot of the
     * first, then ((i+1)/m, v_i)), drawn "with steps". A line between
     * plotting positions i/(m-1) drew 3 iterations as two slopes through
     * fractions no iteration has. More iterations: PLOT_CDF_POINTS
     * interpolated quantiles, a line. */
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int j = 0; j < nk; j++) {
        if (rep[j] != j)
            continue;
        size_t m = v[j].m;
        fprintf(c->dat, "# %s\n", title[j]);
        if (m == 0) {
            fputs("\n\n", c->dat);
            continue;
        }
        lo[0] = fmin(lo[0], v[j].it[0]), hi[0] = fmax(hi[0], v[j].it[m - 1]);
        lo[1] = fmin(lo[1], v[j].st[0]), hi[1] = fmax(hi[1], v[j].st[m - 1]);
        if (m <= PLOT_CDF_POINTS) {
            fprintf(c->dat, "0");
            stall_plot_num(c->dat, v[j].it[0]);
            stall_plot_num(c->dat, v[j].st[0]);
            fputc('\n', c->dat);
            for (size_t i = 0; i < m; i++) {
                fprintf(c->dat, "%.9g", (double)(i + 1) / (double)m);
                stall_plot_num(c->dat, v[j].it[i]);
                stall_plot_num(c->dat, v[j].st[i]);
                fputc('\n', c->dat);
            }
        } else
            for (size_t i = 0; i < PLOT_CDF_POINTS; i++) {
                double q = (double)i / (double)(PLOT_CDF_POINTS - 1);
                fprintf(c->dat, "%.9g", q);
                stall_plot_num(c->dat, plot_quantile(v[j].it, m, q));
                stall_plot_num(c->dat, plot_quantile(v[j].st, m, q));
                fputc('\n', c->dat);
            }
        fputs("\n\n", c->dat);
    }
    fputs("set multiplot layout 1,2 title ", c->gp);
    char mt[1200];
    if (lines == 1 && nk > 1)
        snprintf(mt, sizeof mt,
                 "Distribution of iteration time and stall: the %d alignments coincide "
                 "within %.1f%% of the axis (one line)",
                 nk, maxgap);
    else if (k[0].lone)
        snprintf(mt, sizeof mt, "Distribution of iteration time and stall");
    else
        snprintf(mt, sizeof mt, "Distribution of iteration time and stall (alignment fetch/start)");
    size_t mtn = strlen(mt);
    snprintf(mt + mtn, sizeof mt - mtn, "%s", c->src);
    fputs("\"", c->gp);
    fputs(mt, c->gp); /* the alignment words need no escaping; c->src is escaped */
    fputs("\"", c->gp);
    fprintf(c->gp,
            "\nset ylabel \"fraction of iterations\"\nset yrange [0:1]\n"
            "set key bottom right%s\n",
            k[0].lone ? "" : " title \"fetch/start\"");
    for (int panel = 0; panel < 2; panel++) {
        fputs(panel == 0 ? "set xlabel \"iteration time [s]\"\n"
                         : "set xlabel \"training stall per iteration (max over ranks) [s]\"\n",
              c->gp);
        plot_cdf_xtics(c->gp, lo[panel], hi[panel]);
        fputs("plot ", c->gp);
        b = 0;
        for (int j = 0; j < nk; j++) {
            if (rep[j] != j)
                continue;
            fprintf(c->gp, "%s\"cdf.dat\" index %d using %d:1 with %s lt %d title ",
                    b ? ", \\\n     " : "", b, 2 + panel,
                    v[j].m <= PLOT_CDF_POINTS ? "steps" : "lines", (b % 16) + 1);
            stall_plot_str(c->gp, title[j]);
            b++;
        }
        fputc('\n', c->gp);
    }
    stall_plot_end(c);
    for (int j = 0; j < nk; j++) {
        free(v[j].it);
        free(v[j].st);
    }
    free(v);
    free(rep);
    free(gap);
    free(title);
}

/* The epochs of one combination: start index of each epoch in the rows. */
static int plot_epochs(const plot_combo *k, size_t *first, int cap)
{
    const stall_table *t = k->it;
    int ne = 0;
    for (size_t i = 0; i < t->nrows; i++)
        if (i == 0 ||
            strcmp(stall_table_get(t, i, k->c_epoch), stall_table_get(t, i - 1, k->c_epoch)))
            if (ne < cap)
                first[ne++] = i;
    return ne;
}

/* GPU utilisation over epoch progress: compute / time over a moving window
 * of iterations, per epoch, then mean and std over epochs at the same
 * window (the notebook's scaled stack: epochs have the same batches). */
static void plot_gpu_util(plot_ctx *c, plot_combo *k, int nk)
{
    enum { MAXEP = 4096 };
    size_t *first = stall_xcalloc(MAXEP + 1, sizeof *first);
    int epochs_shown = 0;
    size_t window_shown = 0;
    /* Each alignment's block, and its utilisation per window. */
    char **body = stall_xcalloc((size_t)nk + 1, sizeof *body);
    size_t *bodyn = stall_xcalloc((size_t)nk + 1, sizeof *bodyn);
    double **util = stall_xcalloc((size_t)nk + 1, sizeof *util);
    size_t *nwin = stall_xcalloc((size_t)nk + 1, sizeof *nwin);
    for (int j = 0; j < nk; j++) {
        FILE *d = open_memstream(&body[j], &bodyn[j]);
        if (!d)
            abort();
        const stall_table *t = k[j].it;
        int ne = plot_epochs(&k[j], first, MAXEP);
        first[ne] = t->nrows;
        size_t len = SIZE_MAX;
        for (int e = 0; e < ne; e++)
            len = first[e + 1] - first[e] < len ? first[e + 1] - first[e] : len;
        if (ne == 0 || len == 0) {
            fclose(d);
            continue;
        }
        size_t w = len / PLOT_UTIL_WINDOWS > 5 ? len / PLOT_UTIL_WINDOWS : (len < 5 ? len : 5);
        size_t nw = len - w + 1;
        window_shown = w;
        epochs_shown = ne;
        util[j] = stall_xcalloc(nw + 1, sizeof *util[j]);
        nwin[j] = nw;
        for (size_t s = 0; s < nw; s++) {
            double sx = 0, su = 0, su2 = 0;
            for (int e = 0; e < ne; e++) {
                size_t a = first[e], z = first[e] + len - 1;
                double t0 = stall_table_num(t, a, k[j].c_end) - stall_table_num(t, a, k[j].c_iter);
                double dur = stall_table_num(t, z, k[j].c_end) - t0;
                double busy = 0, span = 0;
                for (size_t i = a + s; i < a + s + w; i++) {
                    busy += stall_table_num(t, i, k[j].c_compute);
                    span += stall_table_num(t, i, k[j].c_iter);
                }
                double wend = stall_table_num(t, a + s + w - 1, k[j].c_end);
                double x = 100.0 * ((wend - 0.5 * span) - t0) / dur;
                double u = span > 0 ? 100.0 * busy / span : NAN;
                sx += x;
                su += u;
                su2 += u * u;
            }
            double mu = su / ne;
            double var = ne > 1 ? (su2 - ne * mu * mu) / (ne - 1) : 0;
            util[j][s] = mu;
            fprintf(d, "%.9g", sx / ne);
            stall_plot_num(d, mu);
            stall_plot_num(d, var > 0 ? sqrt(var) : 0.0);
            fputc('\n', d);
        }
        fclose(d);
    }
    free(first);
    /* The shortest epoch no longer than the window (at least 5 iterations)
     * leaves one window: a single point, which a line does not draw (a
     * blank figure). */
    size_t most = 0;
    for (int j = 0; j < nk; j++)
        most = nwin[j] > most ? nwin[j] : most;
    /* Nor is an epoch of fewer than two windows: its few points (2 of a
     * Kineto trace's 6 batches in windows of 5) drew a straight line
     * across the middle of the epoch, from 58% to 95%, a trend of two
     * overlapping means. */
    if (most < 2 || most <= window_shown) {
        if (most < 2)
            stall_plot_note(c,
                            "GPU utilisation over the epoch: the shortest epoch has %zu "
                            "iteration%s, one moving window, nothing to draw over its progress "
                            "(gpu_busy_share in summary.csv has the mean)",
                            window_shown, window_shown == 1 ? "" : "s");
        else
            stall_plot_note(c,
                            "GPU utilisation over the epoch: the shortest epoch has %zu "
                            "iterations, under two moving windows of %zu: %zu overlapping "
                            "windows, too few to draw over its progress (gpu_busy_share in "
                            "summary.csv has the mean)",
                            most + window_shown - 1, window_shown, most);
        stall__plot_drop(c, "gpu_util");
        for (int j = 0; j < nk; j++) {
            free(body[j]);
            free(util[j]);
        }
        free(body);
        free(bodyn);
        free(util);
        free(nwin);
        return;
    }
    /* Alignments whose curves coincide (mean distance within PLOT_SAME_PCT
     * points of the 0-100% axis) with an earlier one share its line. */
    int *rep = stall_xcalloc((size_t)nk + 1, sizeof *rep);
    double *gap = stall_xcalloc((size_t)nk + 1, sizeof *gap);
    int lines = 0;
    for (int j = 0; j < nk; j++) {
        rep[j] = j;
        for (int r = 0; r < j && nwin[j] > 0; r++) {
            if (rep[r] != r || nwin[r] == 0)
                continue;
            size_t n = nwin[r] < nwin[j] ? nwin[r] : nwin[j], m = 0;
            double g = 0;
            for (size_t s = 0; s < n; s++)
                if (isfinite(util[r][s]) && isfinite(util[j][s])) {
                    g += fabs(util[r][s] - util[j][s]);
                    m++;
                }
            g = m ? g / (double)m : INFINITY;
            if (g <= PLOT_SAME_PCT && nwin[r] == nwin[j]) {
                rep[j] = r;
                gap[r] = fmax(gap[r], g);
                break;
            }
        }
        lines += rep[j] == j && nwin[j] > 0;
    }
    double maxgap = 0;
    for (int j = 0; j < nk; j++)
        maxgap = fmax(maxgap, gap[j]);
    char(*title)[256] = stall_xcalloc((size_t)nk + 1, sizeof *title);
    int shown = 0;
    for (int j = 0; j < nk; j++) {
        if (rep[j] != j || nwin[j] == 0)
            continue;
        shown++;
        plot_merged_title(title[j], sizeof title[j], k, rep, nk, j, gap[j], " points");
    }
    char cap[320], same[128] = "";
    if (shown < nk && nk > 1)
        snprintf(same, sizeof same,
                 "; %d of the %d alignments coincide with another (within %.1f points on "
                 "average) and share its line",
                 nk - lines, nk, maxgap);
    snprintf(cap, sizeof cap,
             "GPU utilisation over the epoch's progress: compute / time over a moving window "
             "of %zu iterations, mean over %d epoch%s%s%s",
             window_shown, epochs_shown, epochs_shown == 1 ? "" : "s",
             epochs_shown > 1 ? " (band: +- std over epochs)" : "", same);
    stall_plot_begin(c, "gpu_util", 900, 480, cap);
    fputs("# progress_pct utilisation_pct std_over_epochs_pct (one block per line drawn)\n",
          c->dat);
    for (int j = 0; j < nk; j++)
        if (rep[j] == j && nwin[j] > 0) {
            fprintf(c->dat, "# %s\n", title[j]);
            fwrite(body[j], 1, bodyn[j], c->dat);
            fputs("\n\n", c->dat);
        }
    fprintf(c->gp,
            "set title \"GPU utilisation (moving window of %zu iterations, mean over %d "
            "epoch%s)%s\"\n"
            "set xlabel \"training epoch progress [%%]\"\nset ylabel \"GPU utilisation [%%]\"\n"
            "set xrange [0:100]\nset yrange [0:100]\n"
            "set key outside right top%s\n"
            "set style fill transparent solid 0.15 noborder\nplot ",
            window_shown, epochs_shown, epochs_shown == 1 ? "" : "s", c->src,
            k[0].lone ? "" : " title \"fetch/start\"");
    /* One element per band and line (no plot loop: each names its data);
     * the key says what the band is (the first band's entry: the title's
     * "mean over 3 epochs" left the shaded area unexplained). */
    int b = 0;
    for (int j = 0; epochs_shown > 1 && j < nk; j++)
        if (rep[j] == j && nwin[j] > 0) {
            fprintf(c->gp,
                    "\"gpu_util.dat\" index %d using 1:($2-$3):($2+$3) with filledcurves lc "
                    "%d %s, \\\n     ",
                    b, (b % 8) + 1, b ? "notitle" : "title \"+- std over epochs\"");
            b++;
        }
    b = 0;
    for (int j = 0; j < nk; j++)
        if (rep[j] == j && nwin[j] > 0) {
            fprintf(c->gp, "%s\"gpu_util.dat\" index %d using 1:2 with lines lt %d title ",
                    b ? ", \\\n     " : "", b, (b % 16) + 1);
            stall_plot_str(c->gp, title[j]);
            b++;
        }
    if (b == 0)
        fputs("NaN notitle", c->gp);
    fputc('\n', c->gp);
    stall_plot_end(c);
    for (int j = 0; j < nk; j++) {
        free(body[j]);
        free(util[j]);
    }
    free(body);
    free(bodyn);
    free(util);
    free(nwin);
    free(rep);
    free(gap);
    free(title);
}

/* The measured epoch times of a one-rank run's trace, epoch by epoch, from
 * storage.csv (run --analyze of a tidy trace with bytes: its epoch_s is the
 * mean over ranks, the epoch time itself on one rank only), where its
 * epochs are the simulated ones [e0, e0 + ne). Into m; false where not. */
static bool plot_measured_epochs(const char *dir, int gpus, int e0, int ne, double *m)
{
    if (gpus != 1 || !stall_result_has(dir, "storage.csv"))
        return false;
    stall_table *t = NULL;
    stall_err err = {0};
    if (stall_plot_read(dir, "storage.csv", &t, &err))
        return false;
    int cs = stall_table_col(t, STALL_COL_SOURCE), ce = stall_table_col(t, STALL_COL_EPOCH),
        cv = stall_table_col(t, "epoch_s");
    int n = 0;
    bool ok = cs >= 0 && ce >= 0 && cv >= 0;
    for (size_t i = 0; ok && i < t->nrows; i++) {
        if (strcmp(stall_table_get(t, i, cs), "measured") != 0)
            continue;
        double v = stall_table_num(t, i, cv);
        ok = n < ne && atoi(stall_table_get(t, i, ce)) == e0 + n && isfinite(v);
        if (ok)
            m[n++] = v;
    }
    stall_table_free(t);
    return ok && n == ne;
}

/* Simulated epoch times (from iterations.csv) against the measured mean,
 * or the measured epochs where storage.csv has them (plot_measured_epochs). */
static bool plot_run_epochs(plot_ctx *c, plot_combo *k, int nk, int gpus)
{
    enum { MAXEP = 4096 };
    size_t *first = stall_xcalloc(MAXEP + 1, sizeof *first);
    /* A what-if of other GPUs, batches or epochs (or of profiling windows,
     * which it starts empty) is not the measured run:
     * no measured line, and the figure says why (as vs_measured_pct). */
    bool comparable = stall_plot_measured_comparable(c->dir);
    double measured = comparable ? k[0].measured_s : NAN;
    bool dropped = !comparable && !isnan(k[0].measured_s);
    /* Fetch times inferred from the loop's waits (fetch_fit.csv; the
     * terminal's "none*"): the simulated bars are a fit's, said so. */
    char *fit = stall_path_join(c->dir, "fetch_fit.csv");
    bool inferred = access(fit, F_OK) == 0;
    free(fit);
    const char *sim = inferred ? "simulated (fetch times inferred)" : "simulated";
    char sub[256];
    snprintf(sub, sizeof sub, "%s%s", dropped ? "\\n" PLOT_NOT_COMPARABLE_TITLE : "",
             inferred ? "\\nfetch times inferred from the loop's waits (fetch_fit.csv)" : "");
    int ne0 = plot_epochs(&k[0], first, MAXEP);
    /* A cold epoch and warm ones (storage tiers) against their mean: the
     * cold one read as 63% over the measured, the warm ones 38% under,
     * where each is within 9% of its own measured epoch. */
    double *mep = stall_xcalloc((size_t)ne0 + 1, sizeof *mep);
    int e0 = ne0 > 0 ? atoi(stall_table_get(k[0].it, 0, k[0].c_epoch)) : 0;
    bool per_epoch = ne0 > 1 && !isnan(measured) &&
                     plot_measured_epochs(
                         c->dir, gpus, atoi(stall_table_get(k[0].it, 0, k[0].c_epoch)), ne0, mep);
    char cap[256];
    snprintf(cap, sizeof cap, "Simulated epoch time per %s%s",
             ne0 > 1 ? "epoch and alignment" : "alignment",
             dropped           ? " (" PLOT_NOT_COMPARABLE ")"
             : per_epoch       ? ", against the measured epoch times (storage.csv, dashed)"
             : isnan(measured) ? ""
                               : ", against the measured mean epoch time (dashed)");
    stall_plot_begin(c, "epochs", 900, 420, cap);
    fputs(ne0 > 1 ? "# epoch epoch_time_s (one block per alignment)\n"
                  : "# alignment epoch_time_s\n",
          c->dat);
    int maxe = 0;
    for (int j = 0; j < nk; j++) {
        const stall_table *t = k[j].it;
        int ne = plot_epochs(&k[j], first, MAXEP);
        first[ne] = t->nrows;
        if (ne0 > 1)
            fprintf(c->dat, "# %s\n", k[j].label);
        for (int e = 0; e < ne; e++) {
            size_t a = first[e], z = first[e + 1] - 1;
            double v = stall_table_num(t, z, k[j].c_end) -
                       (stall_table_num(t, a, k[j].c_end) - stall_table_num(t, a, k[j].c_iter));
            if (ne0 > 1) {
                fprintf(c->dat, "%s", stall_table_get(t, a, k[j].c_epoch));
                maxe = atoi(stall_table_get(t, a, k[j].c_epoch));
            } else {
                fprintf(c->dat, "%s", k[j].lone ? "simulated" : k[j].label);
            }
            stall_plot_num(c->dat, v);
            fputc('\n', c->dat);
        }
        if (ne0 > 1)
            fputs("\n\n", c->dat);
    }
    if (per_epoch) {
        fputs("# measured (storage.csv)\n", c->dat);
        for (int e = 0; e < ne0; e++) {
            fprintf(c->dat, "%d", e0 + e);
            stall_plot_num(c->dat, mep[e]);
            fputc('\n', c->dat);
        }
        fputs("\n\n", c->dat);
    }
    free(mep);
    free(first);
    fputs("set ylabel \"epoch time [s]\"\nset yrange [0:*]\n", c->gp);
    if (!isnan(measured))
        fprintf(c->gp, "measured = %.9g\n", measured);
    if (ne0 > 1) {
        /* A margin beside the first and last epochs, and above the
         * tallest: their points sat on the frame, half of each marker
         * under it (epochs 0 and 2 of every 3-epoch run). */
        double pad = fmax(0.1, 0.03 * (maxe - e0));
        fprintf(c->gp,
                "set title \"Simulated epoch time per epoch%s%s\"\n"
                "set xlabel \"epoch\"\nset key outside right top\n"
                "set xrange [%.9g:%.9g]\nset offsets 0, 0, graph 0.05, 0\n",
                c->src, sub, e0 - pad, maxe + pad);
        /* One tic per epoch where they are few; gnuplot's whole-number
         * steps beyond (a tic per epoch ran 150 epochs' labels together
         * into one black band). */
        stall_plot_int_tics(c->gp, "x", atof(stall_table_get(k[0].it, 0, k[0].c_epoch)), maxe);
        fputs("plot ", c->gp);
        for (int j = 0; j < nk; j++) {
            fprintf(c->gp, "%s\"epochs.dat\" index %d using 1:2 with linespoints pt 7 lc %d title ",
                    j ? ", \\\n     " : "", j, (j % 8) + 1);
            char t[160];
            snprintf(t, sizeof t, "%s%s%s", sim, k[j].lone ? "" : " ", k[j].lone ? "" : k[j].label);
            stall_plot_str(c->gp, t);
        }
        if (per_epoch)
            fprintf(c->gp,
                    ", \\\n     \"epochs.dat\" index %d using 1:2 with linespoints dt 2 pt 6 lc "
                    "rgb \"#000000\" title \"measured\"\n",
                    nk);
        else
            fprintf(c->gp, "%s\n",
                    isnan(measured) ? ""
                                    : ", measured with lines dt 2 lc rgb \"#000000\" title "
                                      "\"measured (mean over epochs)\"");
    } else {
        char one[1200];
        snprintf(one, sizeof one, "%s%s%s",
                 dropped || isnan(measured) ? "" : " (labels: against the measured)", c->src, sub);
        fprintf(
            c->gp,
            "set title \"Simulated epoch time%s%s\"\n"
            "set xlabel \"%s\"\nset key outside right top\n"
            "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset offsets 0, 0, graph 0.1, 0\n"
            "set xrange [-0.6:%d.6]\n"
            "plot \"epochs.dat\" using 0:2:xtic(1) with boxes lc 1 title \"%s\"%s\n",
            k[0].lone ? " (one epoch)" : " per alignment", one,
            k[0].lone ? "" : "alignment (fetch/start)", nk - 1, sim,
            isnan(measured)
                ? ""
                : ", measured with lines dt 2 lw 2 lc rgb \"#000000\" title "
                  "\"measured\", \"\" using 0:2:(sprintf(\"%+.2f%%\", 100 * ($2 / measured "
                  "- 1))) with labels offset 0, 1.2 notitle");
    }
    stall_plot_end(c);
    return per_epoch;
}

int stall_plot_run(plot_ctx *c, stall_err *err)
{
    stall_table *sum = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_SUMMARY, &sum, err);
    if (rc)
        return rc;
    int cf = stall_table_col(sum, STALL_COL_FETCH_ALIGN),
        cs = stall_table_col(sum, STALL_COL_START_ALIGN),
        cm = stall_table_col(sum, STALL_COL_MEASURED_EPOCH);
    if (cf < 0 || cs < 0) {
        rc = stall_err_set(err, STALL_EPARSE,
                           "%s: no fetch_align/start_align columns "
                           "(not a stallsim run summary.csv)",
                           sum->path);
        stall_table_free(sum);
        return rc;
    }
    plot_combo *k = stall_xcalloc(sum->nrows + 1, sizeof *k);
    int nk = 0;
    for (size_t i = 0; i < sum->nrows && rc == 0; i++) {
        const char *fa = stall_table_get(sum, i, cf), *sa = stall_table_get(sum, i, cs);
        char adir[160], name[200];
        snprintf(adir, sizeof adir, STALL_RESULTS_ALIGN_DIR, fa, sa);
        snprintf(name, sizeof name, "%s/%s", adir, STALL_RESULTS_ITERATIONS);
        if (!stall_result_has(c->dir, name)) {
            stall_plot_note(c, "%s/%s is missing: alignment %s/%s left out of the figures", c->dir,
                            name, fa, sa);
            continue;
        }
        plot_combo *p = &k[nk];
        rc = stall_plot_read(c->dir, name, &p->it, err);
        if (rc)
            break;
        nk++;
        snprintf(p->label, sizeof p->label, "%s/%s", fa, sa);
        snprintf(p->dir, sizeof p->dir, "%s", adir);
        p->measured_s = stall_table_num(sum, i, cm);
        p->c_epoch = stall_table_col(p->it, STALL_COL_EPOCH);
        p->c_end = stall_table_col(p->it, STALL_COL_ITER_END);
        p->c_iter = stall_table_col(p->it, STALL_COL_ITERATION);
        p->c_stall = stall_table_col(p->it, STALL_COL_STALL);
        p->c_compute = stall_table_col(p->it, STALL_COL_COMPUTE);
        if (p->c_epoch != 0 || stall_table_col(p->it, STALL_COL_BATCH) != 1 || p->c_end < 0 ||
            p->c_iter < 0 || p->c_stall < 0 || p->c_compute < 0)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: expected the columns " STALL_ITERATIONS_HEADER, p->it->path);
    }
    if (rc == 0 && nk == 0)
        rc = stall_err_set(err, STALL_EIO,
                           "%s: summary.csv names no alignment folder with an iterations.csv",
                           c->dir);
    /* A run of one alignment, none/none (every mode = model run): its
     * figures do not name an alignment that nothing is compared with. */
    if (rc == 0 && nk == 1 && strcmp(k[0].label, "none/none") == 0)
        k[0].lone = true;
    if (rc == 0) {
        /* The per-iteration figures of one alignment: the unaligned one
         * (closest to the trace) when it ran, else the first. */
        int pick = 0;
        for (int j = 0; j < nk; j++)
            if (strcmp(k[j].label, "none/none") == 0)
                pick = j;
        rc = stall__plot_stall_ranks(c, &k[pick], err);
    }
    if (rc == 0) {
        plot_cdf(c, k, nk);
        plot_gpu_util(c, k, nk);
        int cg = stall_table_col(sum, STALL_COL_GPUS);
        bool per_epoch = plot_run_epochs(c, k, nk, cg >= 0 ? atoi(stall_table_get(sum, 0, cg)) : 0);
        /* (one rank's measured epochs drawn from storage.csv: no note) */
        if (!per_epoch && stall_plot_measured_comparable(c->dir))
            stall_plot_note(c, "measured per-epoch times are not in a run folder (summary.csv has "
                               "the measured mean): stallsim validate draws them per epoch");
        else if (!per_epoch)
            stall_plot_note(c, "the measured run in epochs and breakdown: not comparable with "
                               "this run (other GPUs, batches or epochs, or profiling windows the "
                               "run starts empty; vs_measured_pct is empty)");
    }
    for (int j = 0; j < nk; j++)
        stall_table_free(k[j].it);
    free(k);
    stall_table_free(sum);
    return rc;
}
