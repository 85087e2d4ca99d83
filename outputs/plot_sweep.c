/*
 * plot_sweep.c - the figures of sweep and plan folders (plot_int.h):
 * throughput and stall share against one swept axis (lines) or two (two
 * heatmaps of discrete cells; a zip group of keys is one axis, each with a colour scale of its own
 * data), and a plan's weak scaling (log-log throughput against the ideal line, efficiency against
 * the threshold).
 */
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot_int.h"
#include "stall/io.h"

/* A figure's axis: one swept key, or a zip group of keys stepped together
 * (`[sweep] zip`), which sweep.csv gives as columns side by side. */
typedef struct plot_axis {
    int cols[8], ncols;
    char name[512];  /* the keys, ", " between */
    const char **rv; /* [rows]: each row's value (keys' values "/" between) */
    char **own;      /* [rows]: the joined values, when ncols > 1 */
    char **val;      /* distinct values, sorted numerically when one key of numbers, else in
                        point order */
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

static int plot_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct values of column c, or of the pairs of columns c and d
 * (d >= 0): sorted, O(rows log rows). */
static size_t plot_distinct(const stall_table *t, int c, int d)
{
    char **v = stall_xcalloc(t->nrows + 1, sizeof *v);
    for (size_t i = 0; i < t->nrows; i++) {
        const char *x = stall_table_get(t, i, c), *y = d >= 0 ? stall_table_get(t, i, d) : "";
        size_t len = strlen(x) + strlen(y) + 2;
        v[i] = stall_xmalloc(len);
        snprintf(v[i], len, "%s\x1f%s", x, y);
    }
    qsort(v, t->nrows, sizeof *v, plot_cmp_str);
    size_t n = 0;
    for (size_t i = 0; i < t->nrows; i++)
        n += i == 0 || strcmp(v[i], v[i - 1]) != 0;
    for (size_t i = 0; i < t->nrows; i++)
        free(v[i]);
    free(v);
    return n;
}

/* Groups the key columns 1..nkeys into axes: keys stepped together (a zip
 * group) take as many distinct pairs as either has values, where keys of
 * two axes of a full grid take the product. Keys of one value stay axes of
 * their own (a grid with an axis of one value draws its cells). Returns
 * the number of axes (at most max; more are counted, not built). */
static int plot_axes_group(const stall_table *t, int nkeys, plot_axis *ax, int max)
{
    int naxes = 0;
    size_t *nd = stall_xcalloc((size_t)nkeys + 1, sizeof *nd);
    int *axis_of = stall_xcalloc((size_t)nkeys + 1, sizeof *axis_of), *first = NULL;
    first = stall_xcalloc((size_t)nkeys + 1, sizeof *first);
    for (int k = 0; k < nkeys; k++) {
        nd[k] = plot_distinct(t, 1 + k, -1);
        axis_of[k] = -1;
        for (int a = 0; a < naxes && axis_of[k] < 0; a++) {
            int j = first[a];
            size_t most = nd[j] > nd[k] ? nd[j] : nd[k];
            if (nd[j] >= 2 && nd[k] >= 2 && plot_distinct(t, 1 + j, 1 + k) == most)
                axis_of[k] = a;
        }
        if (axis_of[k] < 0) {
            first[naxes] = k;
            axis_of[k] = naxes++;
        }
        int a = axis_of[k];
        if (a < max && ax[a].ncols < 8) {
            snprintf(ax[a].name + strlen(ax[a].name), sizeof ax[a].name - strlen(ax[a].name),
                     "%s%s", ax[a].ncols ? ", " : "", t->header[1 + k]);
            ax[a].cols[ax[a].ncols++] = 1 + k;
        }
    }
    free(nd);
    free(axis_of);
    free(first);
    return naxes;
}

static void plot_axis_build(plot_axis *a, const stall_table *t)
{
    a->rv = stall_xcalloc(t->nrows + 1, sizeof *a->rv);
    a->val = stall_xcalloc(t->nrows + 1, sizeof *a->val);
    a->numeric = a->ncols == 1;
    if (a->ncols > 1)
        a->own = stall_xcalloc(t->nrows + 1, sizeof *a->own);
    for (size_t i = 0; i < t->nrows; i++) {
        if (a->ncols == 1) {
            a->rv[i] = stall_table_get(t, i, a->cols[0]);
        } else {
            size_t len = 1;
            for (int c = 0; c < a->ncols; c++)
                len += strlen(stall_table_get(t, i, a->cols[c])) + 1;
            a->own[i] = stall_xmalloc(len);
            a->own[i][0] = '\0';
            for (int c = 0; c < a->ncols; c++) {
                strcat(a->own[i], c ? "/" : "");
                strcat(a->own[i], stall_table_get(t, i, a->cols[c]));
            }
            a->rv[i] = a->own[i];
        }
        if (plot_axis_index(a, a->rv[i]) >= 0)
            continue;
        a->val[a->n++] = (char *)a->rv[i];
        if (a->ncols == 1 && isnan(stall_table_num_probe(t, i, a->cols[0])))
            a->numeric = false;
    }
    if (a->numeric)
        qsort(a->val, (size_t)a->n, sizeof *a->val, plot_cmp_num_str);
}

/* Whether a numeric axis is drawn on a log scale: its values all positive
 * and its closest two further apart on a log axis than on a linear one, as
 * shares of the axis. A doubling sweep (cluster.gpus=1..256 x2) on a linear
 * axis ran the labels 1, 2, 4 and 8 together into "1248"; 1..16 and 0.5..2
 * +0.25 stay linear. O(n), the values sorted. */
static bool plot_axis_log(const plot_axis *a)
{
    if (!a->numeric || a->n < 3)
        return false;
    double lo = strtod(a->val[0], NULL), hi = strtod(a->val[a->n - 1], NULL);
    if (!(lo > 0) || !(hi > lo))
        return false;
    double lin = INFINITY, lg = INFINITY;
    for (int v = 1; v < a->n; v++) {
        double x0 = strtod(a->val[v - 1], NULL), x1 = strtod(a->val[v], NULL);
        lin = fmin(lin, (x1 - x0) / (hi - lo));
        lg = fmin(lg, log(x1 / x0) / log(hi / lo));
    }
    return lg > lin;
}

static void plot_axis_free(plot_axis *a, size_t rows)
{
    for (size_t i = 0; a->own && i < rows; i++)
        free(a->own[i]);
    free(a->own);
    free(a->rv);
    free(a->val);
}

/* The axis's values as tic labels: every one up to 16, else every k-th
 * (about 12: the first and last always), so that 100 values stay readable (a new
 * user's report: loader.workers=1..100 drew 100 overlapping labels). */
static void plot_axis_tics(FILE *gp, const char *axis, const plot_axis *a)
{
    int every = a->n <= 16 ? 1 : (a->n + 11) / 12;
    fprintf(gp, "set %stics (", axis);
    bool first = true;
    for (int i = 0; i < a->n; i++) {
        bool last = i == a->n - 1;
        /* Every k-th and the last; a k-th too close to the last gives way. */
        if (!last && (i % every != 0 || (i > 0 && a->n - 1 - i < every)))
            continue;
        fputs(first ? "" : ", ", gp);
        first = false;
        stall_plot_str(gp, a->val[i]);
        fprintf(gp, " %d", i);
    }
    fputs(")\n", gp);
}

/* A heatmap cell's label. sig 0: the panel's decimals (dec); else sig
 * significant digits with k (10^3) or M (10^6) from 1000 on, the integer
 * part of a smaller value kept whole ("3.8k", "16k", "473"). */
static void plot_cell_label(char *b, size_t n, double v, int dec, int sig)
{
    if (!isfinite(v)) {
        snprintf(b, n, "-");
        return;
    }
    if (sig == 0) {
        snprintf(b, n, "%.*f", dec, v);
        return;
    }
    static const char *const unit[] = {"", "k", "M", "G"};
    int u = 0;
    double m = v;
    while (u < 3 && fabs(m) >= 1000) {
        m /= 1000;
        u++;
    }
    for (;;) {
        int mag = fabs(m) >= 1 ? (int)floor(log10(fabs(m))) : 0;
        int d = sig - 1 - mag;
        d = d < 0 ? 0 : d;
        /* No more decimals than the panel's own (a share of 80 is "80"). */
        if (u == 0 && d > dec)
            d = dec;
        double r = round(m * pow(10, d)) / pow(10, d);
        if (u < 3 && fabs(r) >= 1000 && u + 1 <= 3 && (u > 0 || fabs(v) >= 1000)) {
            m /= 1000; /* 999.96k rounds to 1000k: 1.0M */
            u++;
            continue;
        }
        snprintf(b, n, "%.*f%s", d, m, unit[u]);
        return;
    }
}

/* The label format of a heatmap panel (nx x ny cells): the first of the
 * panel's decimals, 3 significant digits, 2 (each at font 10 with box
 * margins 2, then font 8 with margins 1, then font 8 with margins 0) whose
 * widest label fits a cell; sig -1 when none does (no labels). A panel's
 * plot area is about 400 x 345 px of the 1100 x 460 figure (390 x 330
 * taken); a digit is about 0.62 x font px wide (pngcairo, sans), the box's
 * margins add about 1.2, 0.75 and 0.15 x font px (a 24 x 8 grid's 2-digit
 * labels at font 8, margins 1, drew boxes of about 16 px in cells of
 * 16.25: they joined into a white band across each row; 0.4 was taken), a
 * box leaves at least 15% of its cell free, and a line is 1.6 x font px
 * high. */
static void plot_cell_format(const double *v, size_t nv, int nx, int ny, int dec, int *sig,
                             int *font, int *mar)
{
    static const int sigs[3] = {0, 3, 2}, fonts[3] = {10, 8, 8}, mars[3] = {2, 1, 0};
    static const double margin[3] = {1.2, 0.75, 0.15};
    double cw = 390.0 / nx, ch = 330.0 / ny;
    for (int k = 0; k < 3; k++) {
        size_t wide = 0;
        char b[48];
        for (size_t i = 0; i < nv; i++) {
            plot_cell_label(b, sizeof b, v[i], dec, sigs[k]);
            wide = strlen(b) > wide ? strlen(b) : wide;
        }
        for (int f = 0; f < 3; f++) {
            double w = (0.62 * (double)wide + margin[f]) * fonts[f];
            if (w <= 0.85 * cw && 1.6 * fonts[f] <= ch) {
                *sig = sigs[k];
                *font = fonts[f];
                *mar = mars[f];
                return;
            }
        }
    }
    *sig = -1;
    *font = *mar = 0;
}

int stall_plot_sweep(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_SWEEP, &t, err);
    if (rc)
        return rc;
    int nkeys = 0;
    while (1 + nkeys < t->ncols && strchr(t->header[1 + nkeys], '.'))
        nkeys++;
    int ct = stall_table_col(t, STALL_COL_THROUGHPUT_SAMPLES),
        cst = stall_table_col(t, STALL_COL_STALL_SHARE);
    const char *tname = "throughput [samples/s]";
    bool samples_known = false;
    for (size_t i = 0; i < t->nrows; i++)
        samples_known |= !isnan(stall_table_num(t, i, ct));
    if (!samples_known) {
        ct = stall_table_col(t, STALL_COL_THROUGHPUT_BATCHES);
        tname = "throughput [batches/s]";
    }
    if (strcmp(t->header[0], STALL_COL_POINT) != 0 || nkeys == 0 || ct < 0 || cst < 0) {
        rc = stall_err_set(err, STALL_EPARSE,
                           "%s: expected point, the swept section.key columns, then "
                           "throughput_samples_s and stall_share",
                           t->path);
        stall_table_free(t);
        return rc;
    }
    /* Figures by axes, not keys: a zip group is one axis. */
    plot_axis ax[2] = {{.ncols = 0}};
    int naxes = plot_axes_group(t, nkeys, ax, 2);
    if (naxes > 2) {
        stall_plot_note(c,
                        "sweep over %d axes: no figure (lines take one axis, a heatmap two); "
                        "sweep.csv has every point",
                        naxes);
        stall_table_free(t);
        return 0;
    }
    for (int a = 0; a < naxes; a++)
        plot_axis_build(&ax[a], t);
    /* A sweep of mode = seed: sweep.csv holds each point's event replay
     * (replay_summary.csv), not the notebook's numbers; the titles say so. */
    char *nb = stall_path_join(c->dir, "point-000000/total_summary.csv");
    const char *src = access(nb, F_OK) == 0 ? " (event replay; the notebook's numbers: each "
                                              "point's total_summary.csv)"
                                            : "";
    free(nb);
    char cap[1200];
    if (naxes == 1) {
        snprintf(cap, sizeof cap, "Throughput and stall share against %s%s", ax[0].name, src);
        stall_plot_begin(c, "sweep", 900, 420, cap);
        fprintf(c->dat, "# index %s throughput stall_share_pct\n", ax[0].name);
        for (int v = 0; v < ax[0].n; v++)
            for (size_t i = 0; i < t->nrows; i++)
                if (strcmp(ax[0].rv[i], ax[0].val[v]) == 0) {
                    /* a zip axis's "8/4" quoted: one field, never read as 8 */
                    fprintf(c->dat, ax[0].ncols > 1 ? "%d \"%s\"" : "%d %s", v, ax[0].val[v]);
                    stall_plot_num(c->dat, stall_table_num(t, i, ct));
                    stall_plot_num(c->dat, 100 * stall_table_num(t, i, cst));
                    fputc('\n', c->dat);
                    break;
                }
        fputs("set title ", c->gp);
        stall_plot_str(c->gp, cap);
        fprintf(c->gp, ".\"%s\"", c->src);
        bool lg = plot_axis_log(&ax[0]);
        char xl[600];
        snprintf(xl, sizeof xl, "%s%s", ax[0].name, lg ? " (log scale)" : "");
        fputs("\nset xlabel ", c->gp);
        stall_plot_str(c->gp, xl);
        /* Throughput spanning a decade or more (a GPU count doubled 1..256)
         * on a log scale, as plan's scaling figure draws it: on a linear one
         * the first points lay flat along the bottom. */
        double tlo = INFINITY, thi = 0;
        for (size_t i = 0; i < t->nrows; i++) {
            double v = stall_table_num(t, i, ct);
            if (isfinite(v) && v > 0)
                tlo = fmin(tlo, v), thi = fmax(thi, v);
        }
        for (size_t i = 0; i < t->nrows && thi > 0; i++) {
            double v = stall_table_num(t, i, ct);
            if (!(isfinite(v) && v > 0) && !isnan(v))
                thi = 0; /* a zero throughput: no log scale */
        }
        bool ylg = thi > 0 && thi / tlo >= 10;
        fprintf(c->gp,
                "\nset ylabel \"%s%s\"\nset y2label \"stall share [%%]\"\n"
                "set y2range [0:100]\nset ytics nomirror\nset y2tics\n"
                "set key outside right top\n",
                tname, ylg ? " (log scale)" : "");
        if (ylg)
            fprintf(c->gp, "set logscale y 10\nset yrange [%.9g:%.9g]\n", tlo / 1.5, thi * 1.5);
        else
            fputs("set yrange [0:*]\n", c->gp);
        if (ax[0].numeric && ax[0].n <= 16) {
            /* The swept values themselves as tics: gnuplot's own put 1.5
             * and 2.5 between worker counts (a new user's report). */
            fputs("set xtics (", c->gp);
            for (int v = 0; v < ax[0].n; v++) {
                fputs(v ? ", " : "", c->gp);
                stall_plot_str(c->gp, ax[0].val[v]);
                fprintf(c->gp, " %s", ax[0].val[v]);
            }
            fputs(")\n", c->gp);
        }
        if (lg) {
            /* A margin each side: at the range's end gnuplot dropped the
             * last value's tic label (256 of 1..256 x2). */
            double lo = strtod(ax[0].val[0], NULL), hi = strtod(ax[0].val[ax[0].n - 1], NULL);
            fprintf(c->gp, "set logscale x %d\nset xrange [%.9g:%.9g]\n", hi / lo > 4096 ? 10 : 2,
                    lo / 1.25, hi * 1.25);
        }
        if (ax[0].numeric && !lg && ax[0].n > 1) {
            /* A margin each side (3% of the span): the first and last
             * points sat on the frame, half of each marker under it
             * (storage.cache_mb=0..80 of store-tiers.ini). */
            double lo = INFINITY, hi = -INFINITY;
            for (int v = 0; v < ax[0].n; v++) {
                double x = strtod(ax[0].val[v], NULL);
                lo = fmin(lo, x);
                hi = fmax(hi, x);
            }
            if (hi > lo)
                fprintf(c->gp, "set xrange [%.9g:%.9g]\n", lo - 0.03 * (hi - lo),
                        hi + 0.03 * (hi - lo));
        }
        if (ax[0].numeric && ax[0].n == 1) {
            /* One value: an x range around it (gnuplot warned of an
             * empty range and widened it by 1% on its own). */
            double v = strtod(ax[0].val[0], NULL), h = v != 0 ? fabs(v) * 0.5 : 1.0;
            fprintf(c->gp, "set xrange [%.9g:%.9g]\n", v - h, v + h);
        }
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
        /* Two heatmaps of discrete cells, each with the colour scale of
         * its own values: a filled box per cell (one rectangle each in the
         * svg, never smoothed by a browser), which any grid draws; "with
         * image" draws nothing for an axis of one value (gnuplot wants a
         * 2 x 2 grid: `--sweep loader.prefetch_factor=2` drew labels on
         * white). */
        size_t ncell = (size_t)ax[0].n * (size_t)ax[1].n;
        double *th = stall_xcalloc(ncell + 1, sizeof *th),
               *st = stall_xcalloc(ncell + 1, sizeof *st);
        for (int x = 0; x < ax[0].n; x++)
            for (int y = 0; y < ax[1].n; y++) {
                size_t k = (size_t)x * (size_t)ax[1].n + (size_t)y;
                th[k] = st[k] = NAN;
                for (size_t i = 0; i < t->nrows; i++)
                    if (strcmp(ax[0].rv[i], ax[0].val[x]) == 0 &&
                        strcmp(ax[1].rv[i], ax[1].val[y]) == 0) {
                        th[k] = stall_table_num(t, i, ct);
                        st[k] = 100 * stall_table_num(t, i, cst);
                        break;
                    }
            }
        double sth = stall_plot_spread_pct(th, ncell), sst = stall_plot_spread_pct(st, ncell);
        snprintf(cap, sizeof cap, "Throughput and stall share over %s and %s%s%s", ax[0].name,
                 ax[1].name,
                 sth < 1 ? " (throughput: every point within 1%, see the panel's title)" : "", src);
        stall_plot_begin(c, "sweep", 1100, 460, cap);
        double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        for (size_t k = 0; k < ncell; k++) {
            if (isfinite(th[k]))
                lo[0] = fmin(lo[0], th[k]), hi[0] = fmax(hi[0], th[k]);
            if (isfinite(st[k]))
                lo[1] = fmin(lo[1], st[k]), hi[1] = fmax(hi[1], st[k]);
        }
        /* Cell labels and the colour bar with the same decimals: enough
         * to tell a tenth of the panel's span apart; the labels shorter
         * (3.8k) or smaller where the cells are narrow, none where even
         * that would not fit (a new user's 15 x 4 grid overlapped 3759 and
         * 5523 into "375 552"). */
        int dec[2], sig[2], font[2], mar[2];
        const double *vals[2] = {th, st};
        for (int p = 0; p < 2; p++) {
            double span = isfinite(lo[p]) ? hi[p] - lo[p] : 0;
            dec[p] = span > 0 ? (int)ceil(-log10(span / 10)) : 1;
            dec[p] = dec[p] < 0 ? 0 : dec[p] > 4 ? 4 : dec[p];
            plot_cell_format(vals[p], ncell, ax[0].n, ax[1].n, dec[p], &sig[p], &font[p], &mar[p]);
        }
        fprintf(c->dat,
                "# %s_index %s_index throughput stall_share_pct throughput_label "
                "stall_share_label (the cells' labels; blocks: one per %s)\n",
                ax[0].name, ax[1].name, ax[0].name);
        for (int x = 0; x < ax[0].n; x++) {
            for (int y = 0; y < ax[1].n; y++) {
                size_t k = (size_t)x * (size_t)ax[1].n + (size_t)y;
                fprintf(c->dat, "%d %d", x, y);
                stall_plot_num(c->dat, th[k]);
                stall_plot_num(c->dat, st[k]);
                for (int p = 0; p < 2; p++) {
                    char b[48];
                    plot_cell_label(b, sizeof b, vals[p][k], dec[p], sig[p] < 0 ? 2 : sig[p]);
                    fprintf(c->dat, " \"%s\"", b);
                }
                fputc('\n', c->dat);
            }
            fputc('\n', c->dat);
        }
        free(th);
        free(st);
        if (sig[0] < 0 || sig[1] < 0)
            stall_plot_note(c,
                            "sweep: the %s cells (%d x %d) are too small for labels: the "
                            "colours and sweep.csv give the values",
                            sig[0] < 0 && sig[1] < 0 ? "heatmaps'"
                            : sig[0] < 0             ? "throughput heatmap's"
                                                     : "stall share heatmap's",
                            ax[0].n, ax[1].n);
        plot_axis_tics(c->gp, "x", &ax[0]);
        plot_axis_tics(c->gp, "y", &ax[1]);
        fputs("set xlabel ", c->gp);
        stall_plot_str(c->gp, ax[0].name);
        fputs("\nset ylabel ", c->gp);
        stall_plot_str(c->gp, ax[1].name);
        fprintf(c->gp,
                "\nset xrange [-0.5:%d.5]\nset yrange [-0.5:%d.5]\nunset grid\nunset key\n"
                "set multiplot layout 1,2 title \"Sweep over two axes%s%s\"\n",
                ax[0].n - 1, ax[1].n - 1, c->src,
                src[0] ? "\\n(event replay; the notebook's numbers: "
                         "each point's total_summary.csv)"
                       : "");
        static const char *const pal[2] = {
            "set palette defined (0 \"#f7fbff\", 1 \"#6baed6\", 2 \"#08306b\")",
            "set palette defined (0 \"#ffffff\", 1 \"#fc8d59\", 2 \"#7f0000\")"};
        const double spread[2] = {sth, sst};
        for (int p = 0; p < 2; p++) {
            char title[160];
            const char *what = p == 0 ? tname : "stall share [%]";
            if (!isfinite(lo[p]))
                snprintf(title, sizeof title, "%s (no value)", what);
            else if (spread[p] < 1)
                snprintf(title, sizeof title, "%s: all within %.1f%%", what,
                         spread[p] > 0 ? spread[p] : 0.0);
            else
                snprintf(title, sizeof title, "%s", what);
            /* The colour scale spans this panel's values (a flat one
             * widened by 0.5% each side, so that its cells are mid-scale). */
            double a = isfinite(lo[p]) ? lo[p] : 0, b = isfinite(hi[p]) ? hi[p] : 1;
            if (b <= a) {
                double pad = fabs(a) > 0 ? 0.005 * fabs(a) : 0.5;
                a -= pad;
                b += pad;
            }
            char fmt[16];
            snprintf(fmt, sizeof fmt, "%%.%df", dec[p]);
            fputs("set title ", c->gp);
            stall_plot_str(c->gp, title);
            fprintf(c->gp, "\n%s\nset cbrange [%.9g:%.9g]\nset format cb \"%s\"\n", pal[p], a, b,
                    fmt);
            fprintf(c->gp, "set style textbox opaque fc rgb \"#ffffff\" noborder margins %d, 1\n",
                    mar[p]);
            fprintf(c->gp,
                    "plot \"sweep.dat\" using 1:2:(0.5):(0.5):%d with boxxyerror fs solid 1 "
                    "noborder fc palette z",
                    3 + p);
            if (sig[p] >= 0)
                fprintf(c->gp,
                        ", \"\" using 1:2:%d with labels boxed font \"sans,%d\" tc rgb "
                        "\"#000000\"",
                        5 + p, font[p]);
            fputc('\n', c->gp);
        }
    }
    stall_plot_end(c);
    for (int a = 0; a < naxes; a++)
        plot_axis_free(&ax[a], t->nrows);
    stall_table_free(t);
    return 0;
}

/* ---- plan ---- */

/* The ideal scaling lines' colour (Okabe-Ito bluish green): not the
 * simulated line's blue (lc 1), nor the threshold's black. */
#define PLOT_IDEAL_RGB "#009E73"

static int plot_plan_ini(void *user, const char *section, const char *name, const char *value)
{
    if (strcmp(section, "plan") == 0 && strcmp(name, "efficiency") == 0) {
        char *end = NULL;
        double v = strtod(value, &end);
        if (end != value)
            *(double *)user = v;
    }
    return 1;
}

/* [plan] efficiency from effective.ini (read by inih, as the INI reader
 * reads it), when set there; else NAN. */
static double plot_plan_threshold(const char *dir)
{
    char *p = stall_path_join(dir, "effective.ini");
    double v = NAN;
    ini_parse(p, plot_plan_ini, &v);
    free(p);
    return v;
}

int stall_plot_plan(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL, *plan = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_SCALING, &t, err);
    if (rc)
        return rc;
    int cg = stall_table_col(t, STALL_COL_GPUS),
        cth = stall_table_col(t, STALL_COL_THROUGHPUT_SAMPLES),
        csp = stall_table_col(t, STALL_COL_SPEEDUP), cef = stall_table_col(t, STALL_COL_EFFICIENCY);
    if (cg < 0 || cth < 0 || csp < 0 || cef < 0 || t->nrows == 0) {
        rc = stall_err_set(err, STALL_EPARSE,
                           "%s: expected gpus,throughput_samples_s,speedup,efficiency rows",
                           t->path);
        stall_table_free(t);
        return rc;
    }
    /* Batches per second when the samples per batch are unknown. */
    const char *unit = "samples/s";
    bool known = false;
    for (size_t i = 0; i < t->nrows; i++)
        known |= isfinite(stall_table_num(t, i, cth));
    int cb = stall_table_col(t, STALL_COL_THROUGHPUT_BATCHES);
    if (!known && cb >= 0) {
        cth = cb;
        unit = "batches/s";
    }
    double chosen = NAN;
    bool at_bound = false; /* max_efficient_gpus is the search's bound, not a limit found */
    bool at_cost = false;  /* ... or where the search stopped, its next run too costly */
    if (stall_result_has(c->dir, STALL_RESULTS_PLAN) &&
        stall_plot_read(c->dir, STALL_RESULTS_PLAN, &plan, err) == 0) {
        int cq = stall_table_col(plan, STALL_COL_QUANTITY),
            cv = stall_table_col(plan, STALL_COL_VALUE);
        for (size_t i = 0; cq >= 0 && i < plan->nrows; i++)
            if (strcmp(stall_table_get(plan, i, cq), STALL_PLAN_MAX_EFFICIENT) == 0) {
                chosen = stall_table_num(plan, i, cv);
                int cbind = stall_table_col(plan, "binding");
                at_bound = cbind >= 0 && strcmp(stall_table_get(plan, i, cbind), "max_gpus") == 0;
                at_cost = cbind >= 0 && strcmp(stall_table_get(plan, i, cbind), "cost") == 0;
            }
        stall_table_free(plan);
    }
    if (isnan(chosen))
        stall_plot_note(c,
                        "plan.csv has no max_efficient_gpus: the chosen GPU count is not marked");
    double thr = plot_plan_threshold(c->dir);
    bool thr_default = isnan(thr);
    if (thr_default)
        thr = 0.80;
    char cap[256];
    snprintf(cap, sizeof cap,
             "Weak scaling: throughput and efficiency against the GPU count; efficiency "
             "threshold %.0f%%%s%s",
             100 * thr, thr_default ? " (the default)" : "",
             isnan(chosen) ? ""
             : at_bound    ? ", efficient up to the search's bound (marked)"
             : at_cost     ? ", efficient up to where the search stopped (marked)"
                           : ", the largest efficient count marked");
    stall_plot_begin(c, "scaling", 1100, 440, cap);
    fprintf(c->dat, "# gpus throughput ideal_throughput efficiency_pct (throughput in %s)\n", unit);
    double base = stall_table_num(t, 0, cth) / stall_table_num(t, 0, cg);
    /* The throughput axis's range: gnuplot's own where it spans values;
     * a factor of 2 each side of a single one (a plan of one GPU count
     * left gnuplot an empty range to widen, with a warning). */
    double tlo = INFINITY, thi = -INFINITY;
    for (size_t i = 0; i < t->nrows; i++) {
        double v = stall_table_num(t, i, cth), g = stall_table_num(t, i, cg);
        if (isfinite(v) && v > 0)
            tlo = fmin(tlo, v), thi = fmax(thi, v);
        if (isfinite(base * g) && base * g > 0)
            tlo = fmin(tlo, base * g), thi = fmax(thi, base * g);
    }
    char trange[64] = "[*:*]";
    if (isfinite(tlo) && thi <= tlo)
        snprintf(trange, sizeof trange, "[%.9g:%.9g]", tlo / 2, tlo * 2);
    /* Its tics: 1, 2 and 5 x 10^k, or 10^k alone past 3 decades (gnuplot's
     * own on a base-2 axis read 66k and 262k for 65536 and 262144; on a
     * base-10 axis under a decade it labels one tic or none). */
    char ttics[1024] = "";
    if (isfinite(tlo)) {
        int k0 = (int)floor(log10(tlo / 2)), k1 = (int)ceil(log10(fmax(thi, tlo) * 2));
        static const double steps[] = {1, 2, 5};
        int nsteps = k1 - k0 > 3 ? 1 : 3;
        size_t n = (size_t)snprintf(ttics, sizeof ttics, "set ytics (");
        for (int k = k0; k <= k1 && n < sizeof ttics - 64; k++)
            for (int j = 0; j < nsteps; j++)
                n += (size_t)snprintf(ttics + n, sizeof ttics - n, "%s%.9g",
                                      k == k0 && j == 0 ? "" : ", ", steps[j] * pow(10, k));
        snprintf(ttics + n, sizeof ttics - n, ")\n");
    }
    double gmin = stall_table_num(t, 0, cg), gmax = stall_table_num(t, t->nrows - 1, cg);
    for (size_t i = 0; i < t->nrows; i++) {
        double g = stall_table_num(t, i, cg);
        fprintf(c->dat, "%s", stall_table_get(t, i, cg));
        stall_plot_num(c->dat, stall_table_num(t, i, cth));
        stall_plot_num(c->dat, base * g);
        stall_plot_num(c->dat, 100 * stall_table_num(t, i, cef));
        fputc('\n', c->dat);
    }
    fprintf(c->gp,
            "threshold = %.9g\n"
            "set multiplot layout 1,2 title \"Weak scaling%s\"\n"
            "set logscale x 2\nset xlabel \"GPUs\"\nset key bottom right opaque\n"
            "set xrange [%.9g:%.9g]\n",
            100 * thr, c->src, gmin / 1.25, gmax * 1.25);
    if (!isnan(chosen))
        fprintf(c->gp,
                "chosen = %.9g\n"
                "set arrow 1 from chosen, graph 0 to chosen, graph 1 nohead dt 3 lw 2 lc rgb "
                "\"#D55E00\"\n"
                "set style textbox opaque fc rgb \"#ffffff\" noborder\n"
                "set label 1 sprintf(\"%s\", chosen, chosen == 1 ? \"\" : \"s\") at graph "
                "0.03, 0.93 left tc rgb \"#D55E00\" boxed front\n",
                chosen,
                at_bound  ? "efficient up to %.0f GPU%s, the search's bound (plan max_gpus)"
                : at_cost ? "efficient up to %.0f GPU%s, where the search stopped (simulation cost)"
                          : "largest efficient: %.0f GPU%s (dotted line)");
    /* Within a few percent of ideal at every count (98% at 1,024 GPUs of
     * example-whatif.ini), the two lines are one on four decades of log
     * axis, whatever their colours: a label says how close, and where the
     * gap shows (the efficiency panel, which draws the ideal at 100%). */
    double eff_lo = INFINITY;
    for (size_t i = 0; i < t->nrows; i++)
        eff_lo = fmin(eff_lo, stall_table_num(t, i, cef));
    if (eff_lo >= 0.95 && eff_lo < 1)
        fprintf(c->gp,
                "set label 3 \"simulated within %.1f%% of ideal (efficiency: right)\" at graph "
                "0.03, 0.84 left tc rgb \"%s\" front\n",
                100 * (1 - eff_lo), PLOT_IDEAL_RGB);
    fprintf(c->gp,
            "set title \"Throughput (log-log: ideal scaling is a straight line)\"\n"
            "set logscale y 10\nset format y \"%%.0s%%c\"\n%sset ylabel \"throughput [%s]\"\n"
            "set yrange %s\n"
            /* The ideal line in its own colour (green, long dashes), drawn
             * first, under the simulated one: a grey dashed line near 100%
             * efficiency lay on the blue one, the two read as one. */
            "plot \"scaling.dat\" using 1:3 with lines dt (16,8) lw 2 lc rgb \"%s\" title "
            "\"ideal (1 GPU's x GPUs)\", "
            "\"\" using 1:2 with linespoints pt 7 lw 1.5 lc 1 title \"simulated\"\n",
            ttics, unit, trange, PLOT_IDEAL_RGB);
    if (!isnan(chosen))
        fputs("set label 1 at graph 0.03, 0.35 left\n", c->gp); /* below the curve, above 0 */
    fputs("unset label 3\n", c->gp);
    fprintf(c->gp,
            "set title \"Efficiency (speed-up / GPUs)\"\nunset logscale y\nset ytics autofreq\n"
            "set format y \"%%g\"\nset ylabel \"efficiency [%%]\"\nset yrange [0:105]\n"
            "plot 100 with lines dt (16,8) lw 2 lc rgb \"%s\" title \"ideal (100%%)\", "
            "\"scaling.dat\" using 1:4 with linespoints pt 7 lw 1.5 lc 1 title \"simulated\", "
            "threshold with lines dt 2 lc rgb \"#000000\" title sprintf(\"threshold %%.0f%%%%\", "
            "threshold)\n",
            PLOT_IDEAL_RGB);
    stall_plot_end(c);
    stall_table_free(t);
    return 0;
}
