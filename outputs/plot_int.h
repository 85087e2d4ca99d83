/*
 * plot_int.h - what the figure builders of outputs/plot*.c share: the
 * figure being built, notes on what cannot be drawn, number and string
 * output for data files and gnuplot scripts. Private to outputs/.
 *
 *   plot.c        the kind of folder, writing and rendering (gnuplot)
 *   plot_run.c    run folders (per iteration)
 *   plot_compare.c validate, analyze and seed folders, the per-rank bar
 *   plot_sweep.c  sweep and plan folders
 */
#ifndef STALL_OUTPUTS_PLOT_INT_H
#define STALL_OUTPUTS_PLOT_INT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "stall/plot.h"
#include "stall/results.h"
#include "stall/table.h"

/* Part colours of the per-rank breakdown, and line colours (colour-blind
 * safe, Okabe-Ito). */
extern const char *const stall_plot_colors[];
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
    const char *dropped[STALL_PLOT_MAX]; /* stall__plot_drop's figures */
    int ndropped;
    /* What every title ends with, naming the input: " - <scenario>" and,
     * where the trace's name is another, ", trace <name>" (effective.ini;
     * a sweep's first point's; else the folder's name). Escaped for a
     * gnuplot string literal: printed inside "..." as it is. */
    char src[640];
} plot_ctx;

/* The lines c->src adds under a title's first (each "\\n" in it). */
static inline int plot_src_lines(const char *src)
{
    int n = 0;
    for (const char *p = strstr(src, "\\n"); p; p = strstr(p + 2, "\\n"))
        n++;
    return n;
}

void stall_plot_note(plot_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reads dir/name as a table (stall_table_read). */
int stall_plot_read(const char *dir, const char *name, stall_table **t, stall_err *err);
/* Opens figure name: the data stream (a '#' line naming the columns follows
 * from the caller) and the script, up to the figure's body, which runs once
 * per terminal (png, then svg) from a reset state: nothing set for the png
 * pass carries over into the svg pass. */
void stall_plot_begin(plot_ctx *c, const char *name, int w, int h, const char *caption);
void stall_plot_end(plot_ctx *c);
/* " %.9g", or " NaN". */
void stall_plot_num(FILE *f, double v);
/* A gnuplot string literal of s. */
void stall_plot_str(FILE *f, const char *s);
/* Tics on a whole-number axis (iterations, ranks) of range [lo, hi]:
 * one per unit where the range is short, where gnuplot's own steps of
 * 0.5 or 0.2 would label 0.5, 1.5 (no iteration 1.5); longer ranges keep
 * gnuplot's steps, whole numbers there (axis: "x", "y"). */
void stall_plot_int_tics(FILE *gp, const char *axis, double lo, double hi);
int stall_plot_cmp_double(const void *a, const void *b);
/* The spread (max - min) / max |v| of the finite values of v[0..n), in
 * percent; NAN when none is finite. */
double stall_plot_spread_pct(const double *v, size_t n);

/* Whether a figure may draw the measured run beside the simulated one: false
 * for a run whose summary.csv has a measured epoch time but leaves
 * vs_measured_pct empty (the what-if changes GPUs, batches or epochs, or the
 * trace's epochs are profiling windows opened mid-training, which the run
 * starts empty; docs/model.md 5), as the terminal and summary.csv do; true
 * for every other folder (validate simulates the measured configuration). */
bool stall_plot_measured_comparable(const char *dir);
/* What a figure says in place of the measured line or bars it leaves out. */
#define PLOT_NOT_COMPARABLE                                                                        \
    "measured not drawn: not comparable (other GPUs, batches or epochs, or profiling windows "     \
    "the run starts empty)"
/* The same on two lines of a title: on one (110 characters, about 700 px)
 * it ran past the left edge of an epochs figure whose key took the right
 * third ("ed not drawn: ..." on a Kineto what-if), each title line being
 * centred over the plot area, not the canvas. */
#define PLOT_NOT_COMPARABLE_TITLE                                                                  \
    "measured not drawn: not comparable (other GPUs, batches or epochs,\\nor profiling windows "   \
    "the run starts empty)"

/* One alignment of a run folder: its iterations.csv and where its columns
 * are (plot_run.c). */
typedef struct plot_combo {
    char label[64]; /* fetch/start */
    char dir[160];  /* fetch-<fa>_start-<sa> */
    stall_table *it;
    int c_epoch, c_end, c_iter, c_stall, c_compute;
    double measured_s; /* summary.csv's measured_epoch_time_s (NAN: none) */
    bool lone;         /* the run's only alignment, none/none (mode = model): not named */
} plot_combo;

/* A figure said instead of drawn: the files an earlier `plot` of the folder
 * left under its name, which would contradict the note, are removed (with
 * the old plots/ folder when a figure is drawn; one by one when none is). */
void stall__plot_drop(plot_ctx *c, const char *fig);
/* stall_ranks.png of alignment k (plot_ranks.c). */
int stall__plot_stall_ranks(plot_ctx *c, const plot_combo *k, stall_err *err);

int stall_plot_run(plot_ctx *c, stall_err *err);
int stall_plot_validate(plot_ctx *c, stall_err *err);
int stall_plot_breakdown(plot_ctx *c, stall_err *err);
int stall_plot_seed(plot_ctx *c, stall_err *err);
int stall_plot_sweep(plot_ctx *c, stall_err *err);
int stall_plot_plan(plot_ctx *c, stall_err *err);

#endif
