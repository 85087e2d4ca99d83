/*
 * plot_ranks.c - the stall of each rank over a run's iterations
 * (stall_ranks.png), from an alignment's ranks.csv (plot_int.h).
 *
 * Legibility rules: at most PLOT_PANEL_RANKS ranks get a panel each, each
 * value marked up to PLOT_MARK_ITERS iterations; more ranks a heatmap of at
 * most PLOT_BINS iteration bins, its colour capped at the 99th percentile.
 * Time and memory O(iterations x ranks).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plot_int.h"
#include "stall/io.h"

#define PLOT_BINS 400
#define PLOT_PANEL_RANKS 8
/* Up to this many iterations the stall panels mark each value. */
#define PLOT_MARK_ITERS 60
/* The scale over the later stalls where a start-up stall is cut: their
 * largest at 1/1.4 of the panel, the note above it. */
#define PLOT_CUT_ROOM 1.4

/* The stall of every rank at every iteration of k, from its ranks.csv (the
 * long table epoch,batch,rank,stall_s, iterations in the order of
 * iterations.csv and ranks in order within each): it->nrows x *ranks
 * values, row-major. NULL when there is no ranks.csv (a note says why);
 * *rc set on a malformed one. */
static double *plot_rank_stalls(plot_ctx *c, const plot_combo *k, int *ranks, int *rc,
                                stall_err *err)
{
    char name[200];
    snprintf(name, sizeof name, "%s/%s", k->dir, STALL_RESULTS_RANKS);
    *ranks = 0;
    if (!stall_result_has(c->dir, name)) {
        stall_plot_note(c,
                        "stall per rank: no %s/%s (written by default for up to 64 ranks; "
                        "--set report.per_rank=true writes it for more)",
                        c->dir, name);
        return NULL;
    }
    stall_table *r = NULL;
    if ((*rc = stall_plot_read(c->dir, name, &r, err)) != 0)
        return NULL;
    int ce = stall_table_col(r, STALL_COL_EPOCH), cb = stall_table_col(r, STALL_COL_BATCH),
        cr = stall_table_col(r, STALL_COL_RANK), cs = stall_table_col(r, STALL_COL_STALL);
    const stall_table *t = k->it;
    int cbi = stall_table_col(t, STALL_COL_BATCH);
    int n = 0;
    while ((size_t)n < r->nrows && ce >= 0 && cb >= 0 &&
           strcmp(stall_table_get(r, (size_t)n, ce), stall_table_get(r, 0, ce)) == 0 &&
           strcmp(stall_table_get(r, (size_t)n, cb), stall_table_get(r, 0, cb)) == 0)
        n++;
    bool ok = ce >= 0 && cb >= 0 && cr >= 0 && cs >= 0 && n > 0 && r->nrows == t->nrows * (size_t)n;
    double *m = ok ? stall_xcalloc(r->nrows + 1, sizeof *m) : NULL;
    for (size_t i = 0; ok && i < r->nrows; i++) {
        size_t row = i / (size_t)n;
        ok = stall_table_num(r, i, cr) == (double)(i % (size_t)n) &&
             strcmp(stall_table_get(r, i, ce), stall_table_get(t, row, k->c_epoch)) == 0 &&
             strcmp(stall_table_get(r, i, cb), stall_table_get(t, row, cbi)) == 0;
        m[i] = stall_table_num(r, i, cs);
    }
    if (!ok) {
        *rc = stall_err_set(err, STALL_EPARSE,
                            "%s: expected the columns " STALL_RANKS_HEADER
                            ", one row per rank for each row of %s, in its order",
                            r->path, STALL_RESULTS_ITERATIONS);
        free(m);
        m = NULL;
    }
    stall_table_free(r);
    *ranks = ok ? n : 0;
    return m;
}

/* Stall per rank over iterations: a panel per rank, or a heatmap. */
int stall__plot_stall_ranks(plot_ctx *c, const plot_combo *k, stall_err *err)
{
    const stall_table *t = k->it;
    int ranks = 0, rc = 0;
    double *sr = plot_rank_stalls(c, k, &ranks, &rc, err);
    size_t n = t->nrows;
    if (!sr)
        return rc;
    if (n == 0) {
        stall_plot_note(c, "stall per rank: %s has no rows", t->path);
        free(sr);
        return 0;
    }
    if (n == 1) {
        /* A line over one iteration is an empty field (gnuplot refuses its
         * x range outright). */
        stall_plot_note(c, "stall per rank: the run has one iteration, nothing to draw over "
                           "iterations (its stall is in iterations.csv and ranks.csv)");
        stall__plot_drop(c, "stall_ranks");
        free(sr);
        return 0;
    }
#define SR(i, r) sr[(size_t)(i) * (size_t)ranks + (size_t)(r)]
    char cap[256];
    double ymax = 0, later = 0;
    for (size_t i = 0; i < n; i++) {
        bool first = strcmp(stall_table_get(t, i, 1), "0") == 0;
        for (int r = 0; r < ranks; r++) {
            ymax = fmax(ymax, SR(i, r));
            if (!first)
                later = fmax(later, SR(i, r));
        }
    }
    /* Only the epochs' first batches stalled: the figure would be a blank
     * field with a line at each epoch start (a straggler- or compute-bound
     * run). Said instead of drawn. */
    if (n > 1 && !(later > 0)) {
        stall_plot_note(c,
                        "stall per rank: no rank waited for data after an epoch's first batch "
                        "(largest first-batch stall %.3f s), nothing to draw; where the time "
                        "went: --analyze (breakdown.png)",
                        ymax);
        stall__plot_drop(c, "stall_ranks");
        free(sr);
        return 0;
    }
    /* The alignment is named where the run has several, or another than
     * none/none. */
    char al[96] = "", alsemi[96] = "";
    if (!k->lone) {
        snprintf(al, sizeof al, " (alignment %s)", k->label);
        snprintf(alsemi, sizeof alsemi, "alignment %s; ", k->label);
    }
    if (ranks <= PLOT_PANEL_RANKS) {
        /* Epoch start-up stalls that dwarf every later one (spawn_persistent:
         * 1.95 s at iteration 0, 0.03-0.06 s after) flattened the rest onto
         * the axis: past 8 times the later ones' largest, the scale stops
         * above those, and each panel names what went above it, in an
         * opaque box at the panel's top, over room kept free for it: the
         * later stalls rose to 80% of the panel and the box, 81-94%, hid
         * their peaks (spawn_persistent's 0.078 s at iteration 100, every
         * rank's of an 8-rank run). They now stay under 72%. */
        double top = ymax;
        if (later > 0 && ymax > 8 * later)
            top = later * PLOT_CUT_ROOM / 1.05;
        snprintf(cap, sizeof cap, "Training stall of each rank over the run's iterations%s", al);
        /* a title line past the second (a what-if's many keys) makes the
         * figure 14 px taller rather than its panels shorter */
        int lines = plot_src_lines(c->src),
            h = 140 + 120 * ranks + 14 * (lines > 1 ? lines - 1 : 0);
        stall_plot_begin(c, "stall_ranks", 900, h, cap);
        fputs("# iteration epoch batch", c->dat);
        for (int r = 0; r < ranks; r++)
            fprintf(c->dat, " stall_r%d_s", r);
        fputc('\n', c->dat);
        for (size_t i = 0; i < n; i++) {
            fprintf(c->dat, "%zu %s %s", i, stall_table_get(t, i, 0), stall_table_get(t, i, 1));
            for (int r = 0; r < ranks; r++)
                stall_plot_num(c->dat, SR(i, r));
            fputc('\n', c->dat);
        }
        fprintf(c->gp,
                "set multiplot layout %d,1 title \"Training stall per rank%s%s\" "
                "margins screen 0.1, 0.97, screen %.4f, %.4f spacing 0, 0.012\n"
                "set xrange [%.9g:%.9g]\nset yrange [0:%.9g]\nunset key\n",
                ranks, al, c->src, 60.0 / h,
                /* 14 px more for each title line under the first (the
                 * input's, a what-if's keys: plot_source), which sat on
                 * the panel */
                1 - (40.0 + 14.0 * lines) / h,
                /* A margin left of iteration 0: its stall (the epoch's
                 * start-up, often the tallest) was drawn on the left
                 * border, unseen, while it set the y range. */
                -fmax(0.5, 0.01 * (double)(n - 1)),
                /* and right of the last where each iteration is marked: its
                 * marker sat on the right border, half under it */
                (double)(n - 1) + (n <= PLOT_MARK_ITERS ? fmax(0.5, 0.01 * (double)(n - 1)) : 0),
                top > 0 ? top * 1.05 : 1.0);
        stall_plot_int_tics(c->gp, "x", 0, (double)(n - 1));
        /* Three to six y tics per panel, on 1, 2, 5 x 10^k: gnuplot's own
         * put ten in a panel of 120 px, 0 to 0.18 by 0.02 on the Kineto
         * ddp2_w2 what-if, labels touching each other and the next panel's
         * top one. */
        if (top > 0) {
            double raw = top * 1.05 / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
            fprintf(c->gp, "set ytics %.9g\n", (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag);
        }
        /* Epoch boundaries as dashed lines, every one or none (only when
         * few enough to read: the first 50 of 150 epochs were drawn, and
         * the label's "dashed: epoch start" said the run ended there). */
        int ep = 0;
        for (size_t i = 1; i < n; i++)
            ep += strcmp(stall_table_get(t, i, k->c_epoch),
                         stall_table_get(t, i - 1, k->c_epoch)) != 0;
        if (ep > 50)
            ep = 0;
        for (size_t i = 1; i < n && ep; i++)
            if (strcmp(stall_table_get(t, i, k->c_epoch), stall_table_get(t, i - 1, k->c_epoch)))
                fprintf(c->gp,
                        "set arrow from %zu, graph 0 to %zu, graph 1 nohead dt 2 lc rgb "
                        "\"#888888\"\n",
                        i, i);
        if (top < ymax) {
            fprintf(c->gp, "set style textbox opaque noborder\narray cut[%d]\n", ranks);
            for (int r = 0; r < ranks; r++) {
                int above = 0;
                size_t at = 0;
                double most = 0;
                for (size_t i = 0; i < n; i++)
                    if (SR(i, r) > top * 1.05) {
                        above++;
                        if (SR(i, r) > most) {
                            most = SR(i, r);
                            at = i;
                        }
                    }
                if (above)
                    fprintf(c->gp,
                            "cut[%d] = \"%d epoch start-up stall%s above the scale, up to %.3g s "
                            "(iteration %zu)\"\n",
                            r + 1, above, above > 1 ? "s" : "", most, at);
                else
                    fprintf(c->gp, "cut[%d] = \"\"\n", r + 1);
            }
        }
        fprintf(c->gp,
                "do for [r=0:%d] {\n"
                "%s"
                "  set ylabel sprintf(\"rank %%d\\nstall [s]\", r)\n"
                "  if (r == %d) { set xlabel \"iteration (epochs in order%s)\"; "
                "set format x \"%%g\" } else { unset xlabel; set format x \"\" }\n"
                "  plot \"stall_ranks.dat\" using 1:(column(4 + r)) with %s lw 1 lc 1\n"
                "}\n",
                ranks - 1,
                top < ymax ? "  set label 1 cut[r + 1] at graph 0.99, graph 0.9 right front boxed\n"
                           : "",
                ranks - 1, ep ? "; dashed: epoch start" : "",
                /* A few iterations: each value marked, not only a line
                 * between them (2 iterations were one straight line). */
                n <= PLOT_MARK_ITERS ? "linespoints pt 7 ps 0.6" : "lines");
        stall_plot_end(c);
        free(sr);
        return 0;
    }
    /* Heatmap: rank x iteration bin, the largest stall in each bin. */
    size_t bins = n < PLOT_BINS ? n : PLOT_BINS;
    size_t per = (n + bins - 1) / bins;
    bins = (n + per - 1) / per;
    snprintf(cap, sizeof cap,
             "Training stall of each of %d ranks over the run's iterations (%s"
             "colour: largest stall in each bin of %zu iterations)",
             ranks, alsemi, per);
    stall_plot_begin(c, "stall_ranks", 1000, 220 + 6 * (ranks < 100 ? ranks : 100), cap);
    /* The colour scale stops at the 99th percentile of the cells, so that
     * the first batches' start-up stalls do not wash out the rest. */
    double *cells = stall_xcalloc(bins * (size_t)ranks + 1, sizeof *cells);
    size_t ncell = 0;
    fputs("# iteration_bin_centre rank max_stall_s (blocks: one per bin)\n", c->dat);
    for (size_t b = 0; b < bins; b++) {
        for (int r = 0; r < ranks; r++) {
            double m = NAN;
            for (size_t i = b * per; i < n && i < (b + 1) * per; i++) {
                double v = SR(i, r);
                if (!isnan(v) && (isnan(m) || v > m))
                    m = v;
            }
            if (!isnan(m))
                cells[ncell++] = m;
            fprintf(c->dat, "%.9g %d", (double)(b * per) + 0.5 * (double)per - 0.5, r);
            stall_plot_num(c->dat, m);
            fputc('\n', c->dat);
        }
        fputc('\n', c->dat);
    }
    qsort(cells, ncell, sizeof *cells, stall_plot_cmp_double);
    double cap99 = ncell ? cells[(size_t)(0.99 * (double)(ncell - 1))] : 0;
    free(cells);
    bool capped = cap99 > 0 && cap99 < ymax;
    /* The cells' right edge: the last bin's, so no blank strip follows it. */
    double xend = (double)(bins * per) - 0.5;
    if (capped)
        ymax = cap99;
    fprintf(c->gp,
            "set title \"Training stall per rank%s%s\\n"
            "colour: the largest stall in each bin of %zu iteration%s%s\"\n"
            "set xlabel \"iteration (epochs in order)\"\nset ylabel \"rank\"\n"
            "set cblabel \"stall [s]\"\n"
            "set palette defined (0 \"#ffffff\", 1 \"#fdd49e\", 2 \"#fc8d59\", 3 \"#d7301f\", "
            "4 \"#7f0000\")\n"
            "set cbrange [0:%.9g]\nset xrange [-0.5:%.1f]\nset yrange [-0.5:%d.5] reverse\n"
            "unset grid\nunset key\n",
            al, c->src, per, per == 1 ? "" : "s", capped ? ", capped at the 99th percentile" : "",
            ymax > 0 ? ymax : 1.0, xend, ranks - 1);
    stall_plot_int_tics(c->gp, "x", -0.5, xend);
    fputs("plot \"stall_ranks.dat\" using 1:2:3 with image\n", c->gp);
    stall_plot_end(c);
    free(sr);
    return 0;
#undef SR
}
