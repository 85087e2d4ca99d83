/*
 * plot.c - the figures of a result folder (stall/plot.h).
 *
 * The numbers drawn are computed here, in C, and written as data files, so
 * that the gnuplot scripts only draw (a user restyles them without
 * recomputing anything) and the tests can check the numbers. Every figure
 * is built in memory first and written atomically; gnuplot then renders
 * each script into <name>.tmp.{png,svg}, which are renamed into place only
 * when it succeeded. gnuplot is started with fork/exec (no shell sees a
 * user's path); its error output is kept to quote it.
 *
 * Legibility rules: at most 8 ranks get a panel each, more ranks a heatmap
 * of at most PLOT_BINS iteration bins; CDFs keep at most PLOT_CDF_POINTS
 * quantiles per line. Time and memory O(iterations x ranks x combinations).
 */
#include "stall/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/table.h"

#define PLOT_BINS 400
#define PLOT_CDF_POINTS 1000
#define PLOT_PANEL_RANKS 8
#define PLOT_UTIL_WINDOWS 20

/* Part colours of the per-rank breakdown, and line colours (colour-blind
 * safe, Okabe-Ito). */
static const char *const plot_colors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                          "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
#define PLOT_NCOLORS 8

typedef struct plot_fig {
    char *dat, *gp;
    size_t datn, gpn;
} plot_fig;

typedef struct plot_ctx {
    const char *dir;
    stall_plot_result *res;
    plot_fig fig[STALL_PLOT_MAX];
    FILE *dat, *gp; /* the figure being built */
    int w, h;
} plot_ctx;

static void plot_note(plot_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void plot_note(plot_ctx *c, const char *fmt, ...)
{
    if (c->res->nnote >= STALL_PLOT_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->res->note[c->res->nnote++], sizeof c->res->note[0], fmt, ap);
    va_end(ap);
}

static bool plot_exists(const char *dir, const char *name)
{
    char *p = stall_path_join(dir, name);
    struct stat st;
    bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

stall_result_kind stall_plot_kind(const char *dir)
{
    if (plot_exists(dir, "sweep.csv"))
        return STALL_RESULT_SWEEP;
    if (plot_exists(dir, "scaling.csv"))
        return STALL_RESULT_PLAN;
    if (plot_exists(dir, "validate.csv"))
        return STALL_RESULT_VALIDATE;
    if (plot_exists(dir, "summary.csv"))
        return STALL_RESULT_RUN;
    if (plot_exists(dir, "per_rank.csv"))
        return STALL_RESULT_ANALYZE;
    return STALL_RESULT_NONE;
}

const char *stall_result_kind_name(stall_result_kind k)
{
    static const char *const names[] = {"none", "run", "validate", "analyze", "sweep", "plan"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static int plot_read(const char *dir, const char *name, stall_table **t, stall_err *err)
{
    char *p = stall_path_join(dir, name);
    int rc = stall_table_read(p, t, err);
    free(p);
    return rc;
}

/* ---- building a figure ---- */

/* Opens figure name: the data stream (a '#' line naming the columns
 * follows from the caller) and the script up to the figure's body. */
static void plot_begin(plot_ctx *c, const char *name, int w, int h, const char *caption)
{
    stall_plot_result *r = c->res;
    int i = r->nfig;
    snprintf(r->name[i], sizeof r->name[i], "%s", name);
    snprintf(r->caption[i], sizeof r->caption[i], "%s", caption);
    c->dat = open_memstream(&c->fig[i].dat, &c->fig[i].datn);
    c->gp = open_memstream(&c->fig[i].gp, &c->fig[i].gpn);
    if (!c->dat || !c->gp)
        abort();
    c->w = w;
    c->h = h;
    fprintf(c->dat, "# %s: %s\n", name, caption);
    fprintf(c->gp,
            "# %s: %s\n"
            "# Written by stallsim %s; data in %s.dat. Render: gnuplot %s.gp (from any folder)\n"
            "# writes %s.png and %s.svg beside this script.\n"
            "p = ARG0; s = 0; i = 1\n"
            "while (i <= strlen(p)) { if (p[i:i] eq \"/\") { s = i }; i = i + 1 }\n"
            "if (s > 0) { cd p[1:s] }\n"
            "if (!exists(\"out\")) { out = \"%s\" }\n"
            "do for [fmt in \"png svg\"] {\n"
            "if (fmt eq \"png\") { set terminal pngcairo size %d,%d enhanced font \"sans,10\" }"
            " else { set terminal svg size %d,%d enhanced font \"sans,10\" background "
            "\"#ffffff\" }\n"
            "set output out.\".\".fmt\n"
            "set grid lc rgb \"#dddddd\"\n"
            "set border lc rgb \"#444444\"\n",
            name, caption, stall_version(), name, name, name, name, name, w, h, w, h);
    for (int k = 0; k < PLOT_NCOLORS; k++)
        fprintf(c->gp,
                "set linetype %d lc rgb \"%s\" lw 2\nset linetype %d lc rgb \"%s\" lw 2 dt 2\n",
                k + 1, plot_colors[k], k + 9, plot_colors[k]);
}

static void plot_end(plot_ctx *c)
{
    fputs("unset multiplot\nset output\n}\n", c->gp);
    fclose(c->dat);
    fclose(c->gp);
    c->dat = c->gp = NULL;
    c->res->nfig++;
}

static void plot_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN", f);
    else
        fprintf(f, " %.9g", v);
}

/* A gnuplot string literal of s (double quotes; backslash and quote
 * escaped, control characters dropped). */
static void plot_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

/* ---- run folders ---- */

typedef struct plot_combo {
    char label[64]; /* fetch/start */
    stall_table *it;
    int c_epoch, c_end, c_iter, c_stall, c_compute, c_r0;
    double measured_s; /* summary.csv's measured_epoch_time_s (NAN: none) */
} plot_combo;

static int plot_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int plot_ranks_of(const plot_combo *k)
{
    int n = 0;
    char name[32];
    for (;;) {
        snprintf(name, sizeof name, "stall_r%d", n);
        if (stall_table_col(k->it, name) != k->c_r0 + n)
            return n;
        n++;
    }
}

/* Stall per rank over iterations: a panel per rank, or a heatmap. */
static void plot_stall_ranks(plot_ctx *c, const plot_combo *k)
{
    const stall_table *t = k->it;
    int ranks = plot_ranks_of(k);
    size_t n = t->nrows;
    if (ranks == 0 || n == 0) {
        plot_note(c, "stall per rank: %s has no stall_r0.. columns or no rows", t->path);
        return;
    }
    char cap[256];
    double ymax = 0;
    for (size_t i = 0; i < n; i++)
        for (int r = 0; r < ranks; r++)
            ymax = fmax(ymax, stall_table_num(t, i, k->c_r0 + r));
    if (ranks <= PLOT_PANEL_RANKS) {
        snprintf(cap, sizeof cap,
                 "Training stall of each rank over the run's iterations (alignment %s)", k->label);
        plot_begin(c, "stall_ranks", 900, 140 + 120 * ranks, cap);
        fputs("# iteration epoch batch", c->dat);
        for (int r = 0; r < ranks; r++)
            fprintf(c->dat, " stall_r%d_s", r);
        fputc('\n', c->dat);
        for (size_t i = 0; i < n; i++) {
            fprintf(c->dat, "%zu %s %s", i, stall_table_get(t, i, 0), stall_table_get(t, i, 1));
            for (int r = 0; r < ranks; r++)
                plot_num(c->dat, stall_table_num(t, i, k->c_r0 + r));
            fputc('\n', c->dat);
        }
        fprintf(c->gp,
                "set multiplot layout %d,1 title \"Training stall per rank (alignment %s)\" "
                "margins screen 0.1, 0.97, screen %.4f, %.4f spacing 0, 0.012\n"
                "set xrange [0:%zu]\nset yrange [0:%.9g]\nunset key\n",
                ranks, k->label, 60.0 / (140 + 120 * ranks), 1 - 40.0 / (140 + 120 * ranks), n - 1,
                ymax > 0 ? ymax * 1.05 : 1.0);
        /* Epoch boundaries as dashed lines (only when few enough to read). */
        int ep = 0;
        for (size_t i = 1; i < n && ep < 50; i++)
            if (strcmp(stall_table_get(t, i, k->c_epoch), stall_table_get(t, i - 1, k->c_epoch))) {
                fprintf(c->gp,
                        "set arrow from %zu, graph 0 to %zu, graph 1 nohead dt 2 lc rgb "
                        "\"#888888\"\n",
                        i, i);
                ep++;
            }
        fprintf(c->gp,
                "do for [r=0:%d] {\n"
                "  set ylabel sprintf(\"rank %%d\\nstall [s]\", r)\n"
                "  if (r == %d) { set xlabel \"iteration (epochs in order%s)\"; "
                "set format x \"%%g\" } else { unset xlabel; set format x \"\" }\n"
                "  plot \"stall_ranks.dat\" using 1:(column(4 + r)) with lines lw 1 lc 1\n"
                "}\n",
                ranks - 1, ranks - 1, ep ? "; dashed: epoch start" : "");
        plot_end(c);
        return;
    }
    /* Heatmap: rank x iteration bin, the largest stall in each bin. */
    size_t bins = n < PLOT_BINS ? n : PLOT_BINS;
    size_t per = (n + bins - 1) / bins;
    bins = (n + per - 1) / per;
    snprintf(cap, sizeof cap,
             "Training stall of each of %d ranks over the run's iterations (alignment %s; "
             "colour: largest stall in each bin of %zu iterations)",
             ranks, k->label, per);
    plot_begin(c, "stall_ranks", 1000, 220 + 6 * (ranks < 100 ? ranks : 100), cap);
    /* The colour scale stops at the 99th percentile of the cells, so that
     * the first batches' start-up stalls do not wash out the rest. */
    double *cells = stall_xcalloc(bins * (size_t)ranks + 1, sizeof *cells);
    size_t ncell = 0;
    fputs("# iteration_bin_centre rank max_stall_s (blocks: one per bin)\n", c->dat);
    for (size_t b = 0; b < bins; b++) {
        for (int r = 0; r < ranks; r++) {
            double m = NAN;
            for (size_t i = b * per; i < n && i < (b + 1) * per; i++) {
                double v = stall_table_num(t, i, k->c_r0 + r);
                if (!isnan(v) && (isnan(m) || v > m))
                    m = v;
            }
            if (!isnan(m))
                cells[ncell++] = m;
            fprintf(c->dat, "%.9g %d", (double)(b * per) + 0.5 * (double)per - 0.5, r);
            plot_num(c->dat, m);
            fputc('\n', c->dat);
        }
        fputc('\n', c->dat);
    }
    qsort(cells, ncell, sizeof *cells, plot_cmp_double);
    double cap99 = ncell ? cells[(size_t)(0.99 * (double)(ncell - 1))] : 0;
    free(cells);
    bool capped = cap99 > 0 && cap99 < ymax;
    if (capped)
        ymax = cap99;
    fprintf(c->gp,
            "set title \"Training stall per rank (alignment %s)\"\n"
            "set xlabel \"iteration (epochs in order)\"\nset ylabel \"rank\"\n"
            "set cblabel \"stall [s] (largest in each bin of %zu iterations%s)\"\n"
            "set palette defined (0 \"#ffffff\", 1 \"#fdd49e\", 2 \"#fc8d59\", 3 \"#d7301f\", "
            "4 \"#7f0000\")\n"
            "set cbrange [0:%.9g]\nset xrange [-0.5:%zu]\nset yrange [-0.5:%d.5] reverse\n"
            "unset grid\nunset key\n"
            "plot \"stall_ranks.dat\" using 1:2:3 with image\n",
            k->label, per, capped ? "; colour capped at the 99th percentile" : "",
            ymax > 0 ? ymax : 1.0, n, ranks - 1);
    plot_end(c);
}

/* Writes at most PLOT_CDF_POINTS quantiles of sorted v[0..n). */
static double plot_quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

static void plot_cdf(plot_ctx *c, plot_combo *k, int nk)
{
    char cap[256];
    snprintf(cap, sizeof cap,
             "Distribution (CDF) of iteration time and training stall, one line per alignment");
    plot_begin(c, "cdf", 1000, 420, cap);
    fputs("# fraction iteration_s stall_s (one block per alignment, in the order of "
          "summary.csv: ",
          c->dat);
    for (int j = 0; j < nk; j++)
        fprintf(c->dat, "%s%s", j ? ", " : "", k[j].label);
    fputs(")\n", c->dat);
    for (int j = 0; j < nk; j++) {
        const stall_table *t = k[j].it;
        size_t n = t->nrows;
        double *it = stall_xcalloc(n + 1, sizeof *it), *st = stall_xcalloc(n + 1, sizeof *st);
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            double a = stall_table_num(t, i, k[j].c_iter), b = stall_table_num(t, i, k[j].c_stall);
            if (isnan(a) || isnan(b))
                continue;
            it[m] = a;
            st[m++] = b;
        }
        qsort(it, m, sizeof *it, plot_cmp_double);
        qsort(st, m, sizeof *st, plot_cmp_double);
        fprintf(c->dat, "# %s\n", k[j].label);
        size_t pts = m < PLOT_CDF_POINTS ? m : PLOT_CDF_POINTS;
        for (size_t i = 0; i < pts; i++) {
            double q = pts > 1 ? (double)i / (double)(pts - 1) : 1.0;
            fprintf(c->dat, "%.9g", q);
            plot_num(c->dat, pts == m ? it[i] : plot_quantile(it, m, q));
            plot_num(c->dat, pts == m ? st[i] : plot_quantile(st, m, q));
            fputc('\n', c->dat);
        }
        fputs("\n\n", c->dat);
        free(it);
        free(st);
    }
    fputs("labels = \"", c->gp);
    for (int j = 0; j < nk; j++)
        fprintf(c->gp, "%s%s", j ? " " : "", k[j].label);
    fprintf(c->gp,
            "\"\n"
            "set multiplot layout 1,2 title \"Distribution of iteration time and stall "
            "(alignment fetch/start)\"\n"
            "set ylabel \"fraction of iterations\"\nset yrange [0:1]\n"
            "set key bottom right title \"fetch/start\"\n"
            "set xlabel \"iteration time [s]\"\n"
            "plot for [j=0:%d] \"cdf.dat\" index j using 2:1 with lines lt ((j %% 16) + 1) "
            "title word(labels, j + 1)\n"
            "set xlabel \"training stall per iteration (max over ranks) [s]\"\n"
            "plot for [j=0:%d] \"cdf.dat\" index j using 3:1 with lines lt ((j %% 16) + 1) "
            "title word(labels, j + 1)\n",
            nk - 1, nk - 1);
    plot_end(c);
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
    char *body = NULL;
    size_t bodyn = 0;
    FILE *d = open_memstream(&body, &bodyn);
    if (!d)
        abort();
    for (int j = 0; j < nk; j++) {
        const stall_table *t = k[j].it;
        int ne = plot_epochs(&k[j], first, MAXEP);
        first[ne] = t->nrows;
        size_t len = SIZE_MAX;
        for (int e = 0; e < ne; e++)
            len = first[e + 1] - first[e] < len ? first[e + 1] - first[e] : len;
        fprintf(d, "# %s\n", k[j].label);
        if (ne == 0 || len == 0) {
            fputs("\n\n", d);
            continue;
        }
        size_t w = len / PLOT_UTIL_WINDOWS > 5 ? len / PLOT_UTIL_WINDOWS : (len < 5 ? len : 5);
        size_t nw = len - w + 1;
        window_shown = w;
        epochs_shown = ne;
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
            fprintf(d, "%.9g", sx / ne);
            plot_num(d, mu);
            plot_num(d, var > 0 ? sqrt(var) : 0.0);
            fputc('\n', d);
        }
        fputs("\n\n", d);
    }
    fclose(d);
    free(first);
    char cap[256];
    snprintf(cap, sizeof cap,
             "GPU utilisation over the epoch's progress: compute / time over a moving window "
             "of %zu iterations, mean over %d epoch%s%s",
             window_shown, epochs_shown, epochs_shown == 1 ? "" : "s",
             epochs_shown > 1 ? " (band: +- std over epochs)" : "");
    plot_begin(c, "gpu_util", 900, 480, cap);
    fputs("# progress_pct utilisation_pct std_over_epochs_pct (one block per alignment)\n", c->dat);
    fwrite(body, 1, bodyn, c->dat);
    free(body);
    fputs("labels = \"", c->gp);
    for (int j = 0; j < nk; j++)
        fprintf(c->gp, "%s%s", j ? " " : "", k[j].label);
    fprintf(c->gp,
            "\"\n"
            "set title \"GPU utilisation over the epoch (moving window of %zu iterations, "
            "mean over %d epoch%s)\"\n"
            "set xlabel \"training epoch progress [%%]\"\nset ylabel \"GPU utilisation [%%]\"\n"
            "set xrange [0:100]\nset yrange [0:100]\n"
            "set key outside right top title \"fetch/start\"\n"
            "set style fill transparent solid 0.15 noborder\n",
            window_shown, epochs_shown, epochs_shown == 1 ? "" : "s");
    if (epochs_shown > 1)
        fprintf(
            c->gp,
            "plot for [j=0:%d] \"gpu_util.dat\" index j using 1:($2-$3):($2+$3) with "
            "filledcurves lc ((j %% 8) + 1) notitle, \\\n"
            "     for [j=0:%d] \"gpu_util.dat\" index j using 1:2 with lines lt ((j %% 16) + 1) "
            "title word(labels, j + 1)\n",
            nk - 1, nk - 1);
    else
        fprintf(
            c->gp,
            "plot for [j=0:%d] \"gpu_util.dat\" index j using 1:2 with lines lt ((j %% 16) + 1) "
            "title word(labels, j + 1)\n",
            nk - 1);
    plot_end(c);
}

/* Simulated epoch times (from iterations.csv) against the measured mean. */
static void plot_run_epochs(plot_ctx *c, plot_combo *k, int nk)
{
    enum { MAXEP = 4096 };
    size_t *first = stall_xcalloc(MAXEP + 1, sizeof *first);
    double measured = k[0].measured_s;
    int ne0 = plot_epochs(&k[0], first, MAXEP);
    char cap[256];
    snprintf(cap, sizeof cap, "Simulated epoch time per %s%s",
             ne0 > 1 ? "epoch and alignment" : "alignment",
             isnan(measured) ? "" : ", against the measured mean epoch time (dashed)");
    plot_begin(c, "epochs", 900, 420, cap);
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
                fprintf(c->dat, "%s", k[j].label);
            }
            plot_num(c->dat, v);
            fputc('\n', c->dat);
        }
        if (ne0 > 1)
            fputs("\n\n", c->dat);
    }
    free(first);
    fputs("set ylabel \"epoch time [s]\"\nset yrange [0:*]\n", c->gp);
    if (!isnan(measured))
        fprintf(c->gp, "measured = %.9g\n", measured);
    if (ne0 > 1) {
        fputs("labels = \"", c->gp);
        for (int j = 0; j < nk; j++)
            fprintf(c->gp, "%s%s", j ? " " : "", k[j].label);
        fprintf(c->gp,
                "\"\nset title \"Simulated epoch time per epoch\"\n"
                "set xlabel \"epoch\"\nset xtics 1\nset key outside right top\n"
                "set xrange [%s:%d]\n"
                "plot for [j=0:%d] \"epochs.dat\" index j using 1:2 with linespoints pt 7 "
                "lc ((j %% 8) + 1) title \"simulated \".word(labels, j + 1)%s\n",
                stall_table_get(k[0].it, 0, k[0].c_epoch), maxe, nk - 1,
                isnan(measured) ? ""
                                : ", measured with lines dt 2 lc rgb \"#000000\" title "
                                  "\"measured (mean over epochs)\"");
    } else {
        fprintf(
            c->gp,
            "set title \"Simulated epoch time per alignment (labels: against the measured)\"\n"
            "set xlabel \"alignment (fetch/start)\"\nset key outside right top\n"
            "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset offsets 0, 0, graph 0.1, 0\n"
            "set xrange [-0.6:%d.6]\n"
            "plot \"epochs.dat\" using 0:2:xtic(1) with boxes lc 1 title \"simulated\"%s\n",
            nk - 1,
            isnan(measured)
                ? ""
                : ", measured with lines dt 2 lw 2 lc rgb \"#000000\" title "
                  "\"measured\", \"\" using 0:2:(sprintf(\"%+.2f%%\", 100 * ($2 / measured "
                  "- 1))) with labels offset 0, 1.2 notitle");
    }
    plot_end(c);
}

static int plot_run(plot_ctx *c, stall_err *err)
{
    stall_table *sum = NULL;
    int rc = plot_read(c->dir, "summary.csv", &sum, err);
    if (rc)
        return rc;
    int cf = stall_table_col(sum, "fetch_align"), cs = stall_table_col(sum, "start_align"),
        cm = stall_table_col(sum, "measured_epoch_time_s");
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
        char name[160];
        snprintf(name, sizeof name, "fetch-%s_start-%s/iterations.csv", fa, sa);
        if (!plot_exists(c->dir, name)) {
            plot_note(c, "%s/%s is missing: alignment %s/%s left out of the figures", c->dir, name,
                      fa, sa);
            continue;
        }
        plot_combo *p = &k[nk];
        rc = plot_read(c->dir, name, &p->it, err);
        if (rc)
            break;
        nk++;
        snprintf(p->label, sizeof p->label, "%s/%s", fa, sa);
        p->measured_s = stall_table_num(sum, i, cm);
        p->c_epoch = stall_table_col(p->it, "epoch");
        p->c_end = stall_table_col(p->it, "iter_end_s");
        p->c_iter = stall_table_col(p->it, "iteration_s");
        p->c_stall = stall_table_col(p->it, "stall_s");
        p->c_compute = stall_table_col(p->it, "compute_s");
        p->c_r0 = stall_table_col(p->it, "stall_r0");
        if (p->c_epoch != 0 || stall_table_col(p->it, "batch") != 1 || p->c_end < 0 ||
            p->c_iter < 0 || p->c_stall < 0 || p->c_compute < 0)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: expected the columns epoch,batch,iter_end_s,iteration_s,"
                               "stall_s,...,compute_s of iterations.csv",
                               p->it->path);
    }
    if (rc == 0 && nk == 0)
        rc = stall_err_set(err, STALL_EIO,
                           "%s: summary.csv names no alignment folder with an iterations.csv",
                           c->dir);
    if (rc == 0) {
        /* The per-iteration figures of one alignment: the unaligned one
         * (closest to the trace) when it ran, else the first. */
        int pick = 0;
        for (int j = 0; j < nk; j++)
            if (strcmp(k[j].label, "none/none") == 0)
                pick = j;
        plot_stall_ranks(c, &k[pick]);
        plot_cdf(c, k, nk);
        plot_gpu_util(c, k, nk);
        plot_run_epochs(c, k, nk);
        plot_note(c, "measured per-epoch times are not in a run folder (summary.csv has the "
                     "measured mean): stallsim validate draws them per epoch");
    }
    for (int j = 0; j < nk; j++)
        stall_table_free(k[j].it);
    free(k);
    stall_table_free(sum);
    return rc;
}

/* ---- validate, analyze ---- */

static int plot_validate(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL;
    int rc = plot_read(c->dir, "validate.csv", &t, err);
    if (rc)
        return rc;
    const char *need[] = {"epoch", "measured_s", "simulated_s", "measured_stall_s",
                          "simulated_stall_s"};
    int col[5];
    for (int i = 0; i < 5; i++)
        if ((col[i] = stall_table_col(t, need[i])) < 0) {
            rc = stall_err_set(err, STALL_EPARSE, "%s: no column %s", t->path, need[i]);
            stall_table_free(t);
            return rc;
        }
    plot_begin(c, "epochs", 1000, 420,
               "Simulated against measured, per epoch: epoch time and mean training stall");
    fputs("# epoch measured_s simulated_s measured_stall_s simulated_stall_s\n", c->dat);
    for (size_t i = 0; i < t->nrows; i++) {
        fputs(stall_table_get(t, i, col[0]), c->dat);
        for (int j = 1; j < 5; j++)
            plot_num(c->dat, stall_table_num(t, i, col[j]));
        fputc('\n', c->dat);
    }
    fputs("set multiplot layout 1,2 title \"Simulated vs measured per epoch\"\n"
          "set style data histograms\nset style histogram clustered gap 1\n"
          "set style fill solid 0.85 border -1\nset xlabel \"epoch\"\n"
          "set key top right\nset yrange [0:*]\n"
          "set ylabel \"epoch time [s]\"\n"
          "plot \"epochs.dat\" using 2:xtic(1) lc 8 title \"measured\", "
          "\"\" using 3 lc 1 title \"simulated\"\n"
          "set ylabel \"mean training stall per iteration [s]\"\n"
          "plot \"epochs.dat\" using 4:xtic(1) lc 8 title \"measured\", "
          "\"\" using 5 lc 1 title \"simulated\"\n",
          c->gp);
    plot_end(c);
    stall_table_free(t);
    plot_note(c, "validate writes no iterations.csv: stall per rank, CDFs and GPU utilisation "
                 "need stallsim run (mode = model) on the same INI");
    return 0;
}

/* The stacked bar per rank, from per_rank.csv (stallsim analyze or
 * --analyze): one group of bars per source (simulated, measured). */
static int plot_breakdown(plot_ctx *c, stall_err *err)
{
    if (!plot_exists(c->dir, "per_rank.csv")) {
        plot_note(c,
                  "where each rank's time went: no per_rank.csv (run or validate with "
                  "--analyze, or stallsim analyze TRACE -o %s)",
                  c->dir);
        return 0;
    }
    stall_table *t = NULL;
    int rc = plot_read(c->dir, "per_rank.csv", &t, err);
    if (rc)
        return rc;
    const char *parts[] = {"startup_s", "data_s", "handover_s", "compute_s", "barrier_s", "post_s"};
    const char *words[] = {"epoch start-up", "waiting for data", "hand-over",
                           "compute",        "barrier wait",     "all-reduce + step"};
    int col[6], cs = stall_table_col(t, "source"), cr = stall_table_col(t, "rank");
    for (int i = 0; i < 6; i++)
        col[i] = stall_table_col(t, parts[i]);
    for (int i = 0; i < 6 && rc == 0; i++)
        if (col[i] < 0 || cs < 0 || cr < 0)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: expected source,rank,total_s,startup_s,data_s,handover_s,"
                               "compute_s,barrier_s,post_s",
                               t->path);
    if (rc == 0 && t->nrows == 0)
        rc = stall_err_set(err, STALL_EPARSE, "%s: no rows", t->path);
    if (rc) {
        stall_table_free(t);
        return rc;
    }
    char src[4][32];
    int nsrc = 0, ranks = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        const char *s = stall_table_get(t, i, cs);
        if (nsrc == 0 || strcmp(src[nsrc - 1], s) != 0) {
            if (nsrc == 4)
                break;
            snprintf(src[nsrc++], sizeof src[0], "%s", s);
        }
        if (nsrc == 1)
            ranks++;
    }
    plot_begin(c, "breakdown", ranks > 16 ? 1200 : 900, 460,
               "Where each rank's time went (seconds summed over epochs), per source");
    fputs("# rank startup_s data_s handover_s compute_s barrier_s post_s "
          "(one block per source: ",
          c->dat);
    for (int s = 0; s < nsrc; s++)
        fprintf(c->dat, "%s%s", s ? ", " : "", src[s]);
    fputs(")\n", c->dat);
    int s = -1;
    for (size_t i = 0; i < t->nrows; i++) {
        if (s < 0 || strcmp(src[s], stall_table_get(t, i, cs)) != 0) {
            if (s + 1 >= nsrc)
                break;
            if (s >= 0)
                fputs("\n\n", c->dat);
            fprintf(c->dat, "# %s\n", src[++s]);
        }
        fputs(stall_table_get(t, i, cr), c->dat);
        for (int j = 0; j < 6; j++)
            plot_num(c->dat, stall_table_num(t, i, col[j]));
        fputc('\n', c->dat);
    }
    int every = ranks <= 16 ? 1 : (ranks + 15) / 16;
    fprintf(c->gp,
            "set title \"Where each rank's time went\"\n"
            "set style data histograms\nset style histogram rowstacked\n"
            "set style fill solid 0.9 noborder\nset boxwidth 0.85 relative\n"
            "set ylabel \"time [s] (sum over epochs)\"\nset xlabel \"rank%s\" offset 0,-1\n"
            "set yrange [0:*]\nset key outside right top\nset grid noxtics\n"
            "every = %d\n",
            nsrc > 1 ? ", grouped by source" : "", every);
    fputs("plot ", c->gp);
    for (int g = 0; g < nsrc; g++) {
        fprintf(c->gp, "%snewhistogram ", g ? ", \\\n     " : "");
        plot_str(c->gp, src[g]);
        for (int j = 0; j < 6; j++) {
            fprintf(c->gp, ", \\\n     \"breakdown.dat\" index %d using %d%s lc rgb \"%s\" ", g,
                    j + 2, j == 0 ? ":xtic(int($1) % every == 0 ? stringcolumn(1) : \"\")" : "",
                    plot_colors[j]);
            if (g == 0)
                fprintf(c->gp, "title \"%s\"", words[j]);
            else
                fputs("notitle", c->gp);
        }
    }
    fputc('\n', c->gp);
    plot_end(c);
    stall_table_free(t);
    return 0;
}

/* ---- sweep ---- */

typedef struct plot_axis {
    int col;
    char **val; /* distinct values, sorted (numerically when all are numbers) */
    int n;
    bool numeric;
} plot_axis;

static int plot_axis_index(const plot_axis *a, const char *v)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->val[i], v) == 0)
            return i;
    return -1;
}

static int plot_cmp_num_str(const void *a, const void *b)
{
    double x = strtod(*(char *const *)a, NULL), y = strtod(*(char *const *)b, NULL);
    return (x > y) - (x < y);
}

static void plot_axis_build(plot_axis *a, const stall_table *t, int col)
{
    a->col = col;
    a->val = stall_xcalloc(t->nrows + 1, sizeof *a->val);
    a->numeric = true;
    for (size_t i = 0; i < t->nrows; i++) {
        const char *v = stall_table_get(t, i, col);
        if (plot_axis_index(a, v) >= 0)
            continue;
        a->val[a->n++] = (char *)v;
        if (isnan(stall_table_num(t, i, col)))
            a->numeric = false;
    }
    if (a->numeric)
        qsort(a->val, (size_t)a->n, sizeof *a->val, plot_cmp_num_str);
}

static void plot_axis_tics(FILE *gp, const char *axis, const plot_axis *a)
{
    fprintf(gp, "set %stics (", axis);
    for (int i = 0; i < a->n; i++) {
        fputs(i ? ", " : "", gp);
        plot_str(gp, a->val[i]);
        fprintf(gp, " %d", i);
    }
    fputs(")\n", gp);
}

static int plot_sweep(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL;
    int rc = plot_read(c->dir, "sweep.csv", &t, err);
    if (rc)
        return rc;
    int nkeys = 0;
    while (1 + nkeys < t->ncols && strchr(t->header[1 + nkeys], '.'))
        nkeys++;
    int ct = stall_table_col(t, "throughput_samples_s"), cst = stall_table_col(t, "stall_share");
    const char *tname = "throughput [samples/s]";
    bool samples_known = false;
    for (size_t i = 0; i < t->nrows; i++)
        samples_known |= !isnan(stall_table_num(t, i, ct));
    if (!samples_known) {
        ct = stall_table_col(t, "throughput_batches_s");
        tname = "throughput [batches/s]";
    }
    if (strcmp(t->header[0], "point") != 0 || nkeys == 0 || ct < 0 || cst < 0) {
        rc = stall_err_set(err, STALL_EPARSE,
                           "%s: expected point, the swept section.key columns, then "
                           "throughput_samples_s and stall_share",
                           t->path);
        stall_table_free(t);
        return rc;
    }
    if (nkeys > 2) {
        plot_note(c,
                  "sweep over %d keys: no figure (lines take one key, a heatmap two); "
                  "sweep.csv has every point",
                  nkeys);
        stall_table_free(t);
        return 0;
    }
    plot_axis ax[2] = {{0}};
    for (int a = 0; a < nkeys; a++)
        plot_axis_build(&ax[a], t, 1 + a);
    char cap[256];
    if (nkeys == 1) {
        snprintf(cap, sizeof cap, "Throughput and stall share against %s", t->header[1]);
        plot_begin(c, "sweep", 900, 420, cap);
        fprintf(c->dat, "# index %s throughput stall_share_pct\n", t->header[1]);
        for (int v = 0; v < ax[0].n; v++)
            for (size_t i = 0; i < t->nrows; i++)
                if (strcmp(stall_table_get(t, i, 1), ax[0].val[v]) == 0) {
                    fprintf(c->dat, "%d %s", v, ax[0].val[v]);
                    plot_num(c->dat, stall_table_num(t, i, ct));
                    plot_num(c->dat, 100 * stall_table_num(t, i, cst));
                    fputc('\n', c->dat);
                    break;
                }
        fputs("set title ", c->gp);
        plot_str(c->gp, cap);
        fputs("\nset xlabel ", c->gp);
        plot_str(c->gp, t->header[1]);
        fprintf(c->gp,
                "\nset ylabel \"%s\"\nset y2label \"stall share [%%]\"\n"
                "set yrange [0:*]\nset y2range [0:100]\nset ytics nomirror\nset y2tics\n"
                "set key outside right top\n",
                tname);
        if (ax[0].numeric)
            fputs("plot \"sweep.dat\" using 2:3 with linespoints pt 7 lc 1 title "
                  "\"throughput\", \"\" using 2:4 axes x1y2 with linespoints pt 5 lc 4 "
                  "title \"stall share\"\n",
                  c->gp);
        else
            fputs("set xrange [-0.5:*]\nset offsets 0, 0.5, 0, 0\n"
                  "plot \"sweep.dat\" using 1:3:xtic(2) with linespoints pt 7 lc 1 title "
                  "\"throughput\", \"\" using 1:4 axes x1y2 with linespoints pt 5 lc 4 "
                  "title \"stall share\"\n",
                  c->gp);
    } else {
        snprintf(cap, sizeof cap, "Throughput and stall share over %s and %s", t->header[1],
                 t->header[2]);
        plot_begin(c, "sweep", 1100, 460, cap);
        fprintf(c->dat, "# %s_index %s_index throughput stall_share_pct (blocks: one per %s)\n",
                t->header[1], t->header[2], t->header[1]);
        for (int x = 0; x < ax[0].n; x++) {
            for (int y = 0; y < ax[1].n; y++) {
                double th = NAN, st = NAN;
                for (size_t i = 0; i < t->nrows; i++)
                    if (strcmp(stall_table_get(t, i, 1), ax[0].val[x]) == 0 &&
                        strcmp(stall_table_get(t, i, 2), ax[1].val[y]) == 0) {
                        th = stall_table_num(t, i, ct);
                        st = 100 * stall_table_num(t, i, cst);
                        break;
                    }
                fprintf(c->dat, "%d %d", x, y);
                plot_num(c->dat, th);
                plot_num(c->dat, st);
                fputc('\n', c->dat);
            }
            fputc('\n', c->dat);
        }
        plot_axis_tics(c->gp, "x", &ax[0]);
        plot_axis_tics(c->gp, "y", &ax[1]);
        fputs("set xlabel ", c->gp);
        plot_str(c->gp, t->header[1]);
        fputs("\nset ylabel ", c->gp);
        plot_str(c->gp, t->header[2]);
        bool labels = ax[0].n * ax[1].n <= 120;
        fprintf(c->gp,
                "\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\nunset grid\nunset key\n"
                "set style textbox opaque fc rgb \"#ffffff\" noborder margins 2, 1\n"
                "set multiplot layout 1,2 title \"Sweep over two keys\"\n"
                "set title \"%s\"\n"
                "set palette defined (0 \"#f7fbff\", 1 \"#6baed6\", 2 \"#08306b\")\n"
                "plot \"sweep.dat\" using 1:2:3 with image%s\n"
                "set title \"stall share [%%]\"\n"
                "set palette defined (0 \"#ffffff\", 1 \"#fc8d59\", 2 \"#7f0000\")\n"
                "set cbrange [0:100]\n"
                "plot \"sweep.dat\" using 1:2:4 with image%s\n",
                ax[0].n - 1, ax[1].n - 1, tname,
                /* Values in black on a small white box: legible on any cell. */
                labels ? ", \"\" using 1:2:(sprintf(\"%.0f\", $3)) with labels boxed tc rgb "
                         "\"#000000\""
                       : "",
                labels ? ", \"\" using 1:2:(sprintf(\"%.0f\", $4)) with labels boxed tc rgb "
                         "\"#000000\""
                       : "");
    }
    plot_end(c);
    for (int a = 0; a < nkeys; a++)
        free(ax[a].val);
    stall_table_free(t);
    return 0;
}

/* ---- plan ---- */

/* [plan] efficiency from effective.ini, when set there; else NAN. */
static double plot_plan_threshold(const char *dir)
{
    char *p = stall_path_join(dir, "effective.ini");
    FILE *f = fopen(p, "r");
    free(p);
    if (!f)
        return NAN;
    char line[1024];
    bool in_plan = false;
    double v = NAN;
    while (fgets(line, sizeof line, f)) {
        char *s = line + strspn(line, " \t");
        if (*s == '[')
            in_plan = strncmp(s, "[plan]", 6) == 0;
        else if (in_plan && strncmp(s, "efficiency", 10) == 0) {
            s += 10 + strspn(s + 10, " \t");
            if (*s == '=' || *s == ':')
                v = strtod(s + 1, NULL);
        }
    }
    fclose(f);
    return v;
}

static int plot_plan(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL, *plan = NULL;
    int rc = plot_read(c->dir, "scaling.csv", &t, err);
    if (rc)
        return rc;
    int cg = stall_table_col(t, "gpus"), cth = stall_table_col(t, "throughput_samples_s"),
        csp = stall_table_col(t, "speedup"), cef = stall_table_col(t, "efficiency");
    if (cg < 0 || cth < 0 || csp < 0 || cef < 0 || t->nrows == 0) {
        rc = stall_err_set(err, STALL_EPARSE,
                           "%s: expected gpus,throughput_samples_s,speedup,efficiency rows",
                           t->path);
        stall_table_free(t);
        return rc;
    }
    double chosen = NAN;
    if (plot_exists(c->dir, "plan.csv") && plot_read(c->dir, "plan.csv", &plan, err) == 0) {
        int cq = stall_table_col(plan, "quantity"), cv = stall_table_col(plan, "value");
        for (size_t i = 0; cq >= 0 && i < plan->nrows; i++)
            if (strcmp(stall_table_get(plan, i, cq), "max_efficient_gpus") == 0)
                chosen = stall_table_num(plan, i, cv);
        stall_table_free(plan);
    }
    if (isnan(chosen))
        plot_note(c, "plan.csv has no max_efficient_gpus: the chosen GPU count is not marked");
    double thr = plot_plan_threshold(c->dir);
    bool thr_default = isnan(thr);
    if (thr_default)
        thr = 0.80;
    char cap[256];
    snprintf(cap, sizeof cap,
             "Weak scaling: throughput and efficiency against the GPU count; efficiency "
             "threshold %.0f%%%s%s",
             100 * thr, thr_default ? " (the default)" : "",
             isnan(chosen) ? "" : ", the largest efficient count marked");
    plot_begin(c, "scaling", 1100, 440, cap);
    fputs("# gpus throughput_samples_s ideal_samples_s efficiency_pct\n", c->dat);
    double base = stall_table_num(t, 0, cth) / stall_table_num(t, 0, cg);
    for (size_t i = 0; i < t->nrows; i++) {
        double g = stall_table_num(t, i, cg);
        fprintf(c->dat, "%s", stall_table_get(t, i, cg));
        plot_num(c->dat, stall_table_num(t, i, cth));
        plot_num(c->dat, base * g);
        plot_num(c->dat, 100 * stall_table_num(t, i, cef));
        fputc('\n', c->dat);
    }
    fprintf(c->gp,
            "threshold = %.9g\n"
            "set multiplot layout 1,2 title \"Weak scaling\"\n"
            "set logscale x 2\nset xlabel \"GPUs\"\nset key bottom right\n",
            100 * thr);
    if (!isnan(chosen))
        fprintf(c->gp,
                "chosen = %.9g\n"
                "set arrow 1 from chosen, graph 0 to chosen, graph 1 nohead dt 3 lw 2 lc rgb "
                "\"#D55E00\"\n"
                "set label 1 sprintf(\"largest efficient: %%g GPUs\", chosen) at chosen, "
                "graph 0.95 right offset -0.5, 0 tc rgb \"#D55E00\"\n",
                chosen);
    fprintf(c->gp,
            "set title \"Throughput\"\nset ylabel \"throughput [samples/s]\"\nset yrange [0:*]\n"
            "plot \"scaling.dat\" using 1:2 with linespoints pt 7 lc 1 title \"simulated\", "
            "\"\" using 1:3 with lines dt 2 lc rgb \"#888888\" title \"ideal (linear)\"\n"
            "set title \"Efficiency (speed-up / GPUs)\"\nset ylabel \"efficiency [%%]\"\n"
            "set yrange [0:105]\n"
            "plot \"scaling.dat\" using 1:4 with linespoints pt 7 lc 1 title \"simulated\", "
            "threshold with lines dt 2 lc rgb \"#000000\" title sprintf(\"threshold %%g%%%%\", "
            "threshold)\n");
    plot_end(c);
    stall_table_free(t);
    return 0;
}

/* ---- writing and rendering ---- */

typedef struct plot_buf {
    const char *p;
    size_t n;
} plot_buf;

static int plot_fill(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const plot_buf *b = ctx;
    fwrite(b->p, 1, b->n, f);
    return 0;
}

/* The gnuplot to run: as given, or found on PATH. NULL when none. */
static char *plot_find_gnuplot(const char *given)
{
    const char *name = given ? given : "gnuplot";
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? stall_xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    char *copy = stall_xstrdup(path), *save = NULL;
    char *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = stall_path_join(*d ? d : ".", name);
        struct stat st;
        if (access(p, X_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            found = p;
        else
            free(p);
    }
    free(copy);
    return found;
}

/* Runs gnuplot on plots/<name>.gp into <name>.tmp.{png,svg}, then renames
 * them into place. */
static int plot_render(const char *gnuplot, const char *plots, const char *name, stall_err *err)
{
    char script[64], outarg[96];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(outarg, sizeof outarg, "out='%s.tmp'", name);
    int fd[2];
    if (pipe(fd) != 0)
        return stall_err_set(err, STALL_EINTERNAL, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return stall_err_set(err, STALL_EINTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        if (chdir(plots) != 0)
            _exit(126);
        char *argv[] = {"gnuplot", "-e", outarg, script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    close(fd[1]);
    char msg[4096];
    size_t n = 0;
    ssize_t got;
    char sink[512];
    while ((got = read(fd[0], n < sizeof msg - 1 ? msg + n : sink,
                       n < sizeof msg - 1 ? sizeof msg - 1 - n : sizeof sink)) > 0 ||
           (got < 0 && errno == EINTR))
        if (got > 0 && n < sizeof msg - 1)
            n += (size_t)got;
    msg[n] = '\0';
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *ext[2] = {"png", "svg"};
    char tmp[2][160], fin[2][160];
    char *tp[2], *fp[2];
    for (int i = 0; i < 2; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s.tmp.%s", name, ext[i]);
        snprintf(fin[i], sizeof fin[i], "%s.%s", name, ext[i]);
        tp[i] = stall_path_join(plots, tmp[i]);
        fp[i] = stall_path_join(plots, fin[i]);
    }
    int rc = 0;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(tp[0], R_OK) == 0 &&
              access(tp[1], R_OK) == 0;
    if (!ok) {
        /* The last non-empty line of gnuplot's messages names the problem. */
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            msg[--n] = '\0';
        char *last = strrchr(msg, '\n');
        rc = stall_err_set(err, STALL_EINTERNAL, "gnuplot failed on %s/%s (%s %d): %s", plots,
                           script, WIFEXITED(status) ? "exit" : "signal",
                           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                           n ? (last ? last + 1 : msg) : "no message");
    }
    for (int i = 0; i < 2; i++) {
        if (ok && rename(tp[i], fp[i]) != 0 && rc == 0)
            rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", fp[i],
                               strerror(errno));
        if (!ok || rc)
            remove(tp[i]);
        free(tp[i]);
        free(fp[i]);
    }
    return rc;
}

int stall_plot(const char *dir, const stall_plot_opts *opts, stall_plot_result *res, stall_err *err)
{
    stall_plot_opts none = {0};
    stall_plot_result local;
    if (!opts)
        opts = &none;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return stall_err_set(err, STALL_EIO, "%s: not a folder", dir);
    res->kind = stall_plot_kind(dir);
    if (res->kind == STALL_RESULT_NONE)
        return stall_err_set(err, STALL_EIO,
                             "%s: not a stallsim result folder (no summary.csv, validate.csv, "
                             "per_rank.csv, sweep.csv or scaling.csv)",
                             dir);
    plot_ctx c = {.dir = dir, .res = res};
    int rc = 0;
    switch (res->kind) {
    case STALL_RESULT_RUN:
        rc = plot_run(&c, err);
        if (rc == 0)
            rc = plot_breakdown(&c, err);
        break;
    case STALL_RESULT_VALIDATE:
        rc = plot_validate(&c, err);
        if (rc == 0)
            rc = plot_breakdown(&c, err);
        break;
    case STALL_RESULT_ANALYZE:
        rc = plot_breakdown(&c, err);
        break;
    case STALL_RESULT_SWEEP:
        rc = plot_sweep(&c, err);
        break;
    case STALL_RESULT_PLAN:
        rc = plot_plan(&c, err);
        break;
    case STALL_RESULT_NONE:
        break;
    }
    char *plots = stall_path_join(dir, "plots");
    if (rc == 0 && res->nfig > 0)
        rc = stall_mkdirs(plots, err);
    for (int i = 0; rc == 0 && i < res->nfig; i++) {
        char name[64];
        plot_buf d = {c.fig[i].dat, c.fig[i].datn}, g = {c.fig[i].gp, c.fig[i].gpn};
        snprintf(name, sizeof name, "%s.dat", res->name[i]);
        rc = stall_write_atomic_in(plots, name, plot_fill, &d, err);
        snprintf(name, sizeof name, "%s.gp", res->name[i]);
        if (rc == 0)
            rc = stall_write_atomic_in(plots, name, plot_fill, &g, err);
    }
    char *gnuplot = rc == 0 && res->nfig > 0 ? plot_find_gnuplot(opts->gnuplot) : NULL;
    for (int i = 0; rc == 0 && gnuplot && i < res->nfig; i++)
        rc = plot_render(gnuplot, plots, res->name[i], err);
    res->rendered = rc == 0 && gnuplot;
    FILE *f = opts->term;
    if (rc == 0 && f) {
        fprintf(f, "stallsim %s: plot %s (%s): ", stall_version(), dir,
                stall_result_kind_name(res->kind));
        if (res->nfig == 0)
            fputs("no figure fits", f);
        for (int i = 0; i < res->nfig; i++)
            fprintf(f, "%s%s", i ? ", " : "", res->name[i]);
        fputc('\n', f);
        for (int i = 0; i < res->nnote; i++)
            fprintf(f, "not drawn: %s\n", res->note[i]);
        if (res->nfig > 0 && !gnuplot)
            fprintf(f,
                    "gnuplot not found: wrote data and scripts in %s; render with gnuplot "
                    "%s/*.gp\n",
                    plots, plots);
        else if (res->nfig > 0)
            fprintf(f, "figures in %s/ (.png, .svg; data .dat and gnuplot scripts .gp beside)\n",
                    plots);
    }
    free(gnuplot);
    free(plots);
    for (int i = 0; i < STALL_PLOT_MAX; i++) {
        free(c.fig[i].dat);
        free(c.fig[i].gp);
    }
    return rc;
}
