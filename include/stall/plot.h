/*
 * stall/plot.h - `stallsim plot RESULT_DIR` (and `--plots` on run and
 * validate): the figures that fit a result folder, drawn with gnuplot.
 *
 * The kind of folder is told by the files in it (stall_result_kind_of,
 * stall/results.h). Each
 * figure is written as plots/<name>.dat (the numbers drawn, whitespace
 * separated, a '#' header naming the columns), plots/<name>.gp (a gnuplot
 * script that reads the data by relative path from its own folder and
 * writes <name>.png (pngcairo) and <name>.svg beside it, so that `gnuplot
 * DIR/plots/<name>.gp` re-renders it from any folder), and, when gnuplot
 * is found, the two images. Every file is written whole or not at all.
 *
 *   run       summary.csv and fetch-*_start-* /iterations.csv and
 *             ranks.csv: stall per rank over iterations (one panel per
 *             rank up to 8 ranks, a heatmap above), CDFs of iteration time and stall, GPU
 *             utilisation over epoch progress (windowed, mean over epochs
 *             +- std, as the research notebook 002 plots it), simulated
 *             epoch times against the measured mean; with per_rank.csv
 *             (--analyze) a stacked bar per rank of where the time went
 *   validate  validate.csv: simulated vs measured epoch time and stall per
 *             epoch; the per-rank bar with per_rank.csv
 *   analyze   per_rank.csv: the per-rank bar
 *   seed      total_summary.csv and replay_summary.csv: the notebook's
 *             mean iteration time and stall per alignment beside the
 *             event replay's
 *   sweep     sweep.csv: lines for one swept key, heatmaps for two
 *   plan      scaling.csv (+ plan.csv, effective.ini): throughput and
 *             efficiency against the GPU count, the threshold and the
 *             chosen count marked
 */
#ifndef STALL_PLOT_H
#define STALL_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The kind of result folder dir is: stall_result_kind_of (stall/results.h,
 * the one rule, shared with the jobs that write result folders). */
stall_result_kind stall_plot_kind(const char *dir);

#define STALL_PLOT_MAX 8
#define STALL_PLOT_NOTES 8

typedef struct stall_plot_opts {
    /* The gnuplot program: NULL searches "gnuplot" on PATH; a name with a
     * '/' is run as given. */
    const char *gnuplot;
    FILE *term; /* what was drawn and what could not be; NULL: quiet */
} stall_plot_opts;

typedef struct stall_plot_result {
    stall_result_kind kind;
    int nfig;
    char name[STALL_PLOT_MAX][32];     /* plots/<name>.{dat,gp,png,svg} */
    char caption[STALL_PLOT_MAX][256]; /* one sentence: what the figure shows */
    bool rendered;                     /* gnuplot was found and drew every figure */
    int nnote;
    char note[STALL_PLOT_NOTES][512]; /* what could not be drawn, and why */
} stall_plot_result;

/* Writes the figures of result folder dir into dir/plots and renders them
 * when gnuplot is found (without it: one line on opts->term saying so, and
 * success). res (may be NULL) receives the figure list. Returns 0;
 * STALL_EIO when dir is no result folder or a file cannot be written,
 * STALL_EPARSE for a malformed result file (naming it), STALL_EINTERNAL
 * when gnuplot fails on a script (its message quoted). */
int stall_plot(const char *dir, const stall_plot_opts *opts, stall_plot_result *res,
               stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
