/*
 * plot_compare.c - the figures that set the simulation beside a
 * measurement or the notebook (plot_int.h): validate's per-epoch bars,
 * where each rank's time went (per_rank.csv of analyze or --analyze), and
 * a seed folder's notebook numbers beside the replay's. Bars of the two
 * sources stand side by side at x positions of their own, never on top of
 * each other.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot_int.h"
#include "stall/config.h"
#include "stall/io.h"

/* ---- validate, analyze ---- */

int stall_plot_validate(plot_ctx *c, stall_err *err)
{
    stall_table *t = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_VALIDATE, &t, err);
    if (rc)
        return rc;
    const char *need[] = {STALL_COL_EPOCH, STALL_COL_MEASURED, STALL_COL_SIMULATED,
                          STALL_COL_MEASURED_STALL, STALL_COL_SIMULATED_STALL};
    int col[5];
    for (int i = 0; i < 5; i++)
        if ((col[i] = stall_table_col(t, need[i])) < 0) {
            rc = stall_err_set(err, STALL_EPARSE, "%s: no column %s", t->path, need[i]);
            stall_table_free(t);
            return rc;
        }
    /* Fetch times inferred from the loop's waits (fetch_fit.csv; the
     * terminal's INFERRED and CAUTION lines): the simulated bars are the
     * fit's, said so under the title as on a run's epochs figure (the
     * public DLIO trace's bars read as a validation of the model; in the
     * key, below, a longer name broke it into two rows over the xlabel). */
    char *fit = stall_path_join(c->dir, "fetch_fit.csv");
    bool inferred = access(fit, F_OK) == 0;
    free(fit);
    stall_plot_begin(c, "epochs", 1000, 420,
                     inferred ? "Simulated against measured, per epoch: epoch time and mean "
                                "training stall; fetch times inferred from the loop's waits "
                                "(fetch_fit.csv), not measured"
                              : "Simulated against measured, per epoch: epoch time and mean "
                                "training stall");
    fputs("# x epoch measured_s simulated_s measured_stall_s simulated_stall_s\n", c->dat);
    for (size_t i = 0; i < t->nrows; i++) {
        fprintf(c->dat, "%zu %s", i, stall_table_get(t, i, col[0]));
        for (int j = 1; j < 5; j++)
            stall_plot_num(c->dat, stall_table_num(t, i, col[j]));
        fputc('\n', c->dat);
    }
    /* Two bars per epoch at x -+ 0.2, each 0.4 wide: never on top of each
     * other, whatever the number of epochs; the epoch's label at x, under
     * the pair (on the measured bar, it sat under that bar alone: a third
     * element draws no point, only the labels). The key below the plot area, in
     * one row: inside it covered the tallest bar of the last epoch (the
     * dftracer UNet3D trace, a new user's report). */
    fprintf(c->gp,
            "set multiplot layout 1,2 title \"Simulated vs measured per epoch%s%s\"\n"
            "set style fill solid 0.85 border -1\nset xlabel \"epoch\"\n"
            "set key below horizontal\nset bmargin 5\nset yrange [0:*]\nset xrange "
            "[-0.6:%zu.6]\nset offsets 0, "
            "0, graph 0.1, 0\n"
            "set ylabel \"epoch time [s]\"\n"
            "plot \"epochs.dat\" using ($1-0.2):3:(0.4) with boxes lc 8 title "
            "\"measured\", \"\" using ($1+0.2):4:(0.4) with boxes lc 1 title \"simulated\", \"\" "
            "using 1:(NaN):xtic(2) with points notitle\n"
            "set ylabel \"mean training stall per iteration [s]\"\n"
            "plot \"epochs.dat\" using ($1-0.2):5:(0.4) with boxes lc 8 title "
            "\"measured\", \"\" using ($1+0.2):6:(0.4) with boxes lc 1 title \"simulated\", \"\" "
            "using 1:(NaN):xtic(2) with points notitle\n",
            c->src,
            inferred ? "\\nfetch times inferred from the loop's waits (fetch_fit.csv), not "
                       "measured: the simulated bars are built on that fit"
                     : "",
            t->nrows ? t->nrows - 1 : 0);
    stall_plot_end(c);
    stall_table_free(t);
    stall_plot_note(c,
                    "validate writes no iterations.csv: stall per rank, CDFs and GPU utilisation "
                    "need stallsim run (mode = model) on the same INI");
    return 0;
}

/* Whether the INI at ini runs in mode = model (run --analyze needs it);
 * false when it cannot be read. */
static bool plot_ini_model(const char *ini)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_err e = {0};
    stall_config_defaults(cfg);
    bool model = stall_config_load(cfg, ini, &e) == 0 && cfg->mode == STALL_MODE_MODEL;
    free(cfg);
    return model;
}

/* The stacked bar per rank, from per_rank.csv (stallsim analyze or
 * --analyze): one group of bars per source (simulated, measured), side by
 * side with a gap between groups, each bar at an x of its own. */
int stall_plot_breakdown(plot_ctx *c, stall_err *err)
{
    if (!stall_result_has(c->dir, STALL_RESULTS_PER_RANK)) {
        /* analyze adds its files to the folder (it replaces nothing), and
         * the folder's effective.ini names the trace: a command that runs
         * as printed, its paths shell words. */
        char *ini = stall_path_join(c->dir, "effective.ini");
        bool have = access(ini, R_OK) == 0;
        char *w_ini = stall_path_shell(ini), *w_dir = stall_path_shell(c->dir);
        /* A run folder: its simulated ranks come from the run with
         * --analyze (analyze reads the measured trace only; for a what-if
         * not comparable with it, that is all it could add). */
        if (stall_result_has(c->dir, STALL_RESULTS_SUMMARY) && have) {
            char *alt = stall_xmalloc(strlen(c->dir) + 16);
            sprintf(alt, "%s-analyze", c->dir);
            char *w_alt = stall_path_shell(alt);
            if (!plot_ini_model(ini))
                /* A replay (or seed) run: run --analyze refuses it
                 * (exit 2), and its alignment lists have no effect in
                 * mode = model; the model run of the measured
                 * configuration drops them. */
                stall_plot_note(c,
                                "where each rank's time went: no per_rank.csv (a replay "
                                "simulates no loader, so no ranks' parts of its own; the "
                                "measured trace's: stallsim analyze %s -o %s; the closed-loop "
                                "model's of the measured configuration: stallsim run %s --set "
                                "scenario.mode=model --set align.fetch=none --set "
                                "align.start=none --analyze -o %s)",
                                w_ini, w_dir, w_ini, w_alt);
            else if (stall_plot_measured_comparable(c->dir))
                stall_plot_note(c,
                                "where each rank's time went: no per_rank.csv (the simulated "
                                "ranks: stallsim run %s --analyze -o %s; the measured trace's: "
                                "stallsim analyze %s -o %s)",
                                w_ini, w_alt, w_ini, w_dir);
            else
                stall_plot_note(c,
                                "where each rank's time went: no per_rank.csv (the simulated "
                                "ranks: stallsim run %s --analyze -o %s; the measured trace is "
                                "not comparable with this what-if)",
                                w_ini, w_alt);
            free(alt);
            free(w_alt);
        } else
            stall_plot_note(c,
                            "where each rank's time went: no per_rank.csv (run or validate with "
                            "--analyze, or stallsim analyze %s -o %s)",
                            have ? w_ini : "TRACE", w_dir);
        free(ini);
        free(w_ini);
        free(w_dir);
        stall__plot_drop(c, "breakdown");
        return 0;
    }
    stall_table *t = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_PER_RANK, &t, err);
    if (rc)
        return rc;
    const char *parts[] = STALL_PER_RANK_PARTS;
    const char *words[] = {"epoch start-up", "waiting for data",  "hand-over", "compute",
                           "barrier wait",   "all-reduce + step", "checkpoint"};
    /* A trace without compute_end (the notebook's, a profiler's): its
     * barrier part is the wait for the other ranks' data, which analyze
     * counts as data ("barrier wait for a slower rank 0.0%"): the key says
     * so, where "barrier wait" read as a straggler's (per source, below). */
    char *anp = stall_path_join(c->dir, "analyze.csv");
    char *ant = stall_read_file(anp, NULL);
    free(anp);
    int col[7], cs = stall_table_col(t, STALL_COL_SOURCE), cr = stall_table_col(t, STALL_COL_RANK);
    for (int i = 0; i < 6; i++)
        col[i] = stall_table_col(t, parts[i]);
    /* The checkpoint part, on top, where a source recorded checkpoints
     * inside its epochs (the parts then add up to total_s). A part empty in
     * some row (hand-over of a trace that holds only the loop's waits: the
     * whole wait is data; the checkpoint of a source without) stacks as 0:
     * as NaN it would hide every part above it. */
    const char *parts7[] = {
        parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], STALL_COL_CHECKPOINT};
    col[6] = stall_table_col(t, STALL_COL_CHECKPOINT);
    bool blank[7] = {false}, unknown[7] = {true, true, true, true, true, true, true};
    int nparts = 6;
    for (size_t i = 0; i < t->nrows; i++)
        for (int j = 0; j < 7; j++) {
            bool empty = col[j] < 0 || !*stall_table_get(t, i, col[j]);
            blank[j] |= empty;
            unknown[j] &= empty; /* empty in every row: the key says so */
            /* a checkpoint part only where some rank spent time on one: a
             * trace with the checkpoint columns but no checkpoint (its 0 s)
             * put "checkpoint" in the key over a part drawn nowhere */
            if (j == 6 && !empty && stall_table_num(t, i, col[6]) > 0)
                nparts = 7;
        }
    for (int i = 0; i < 6 && rc == 0; i++)
        if (col[i] < 0 || cs < 0 || cr < 0)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: expected source,rank,total_s,startup_s,data_s,handover_s,"
                               "compute_s,barrier_s,post_s",
                               t->path);
    if (rc == 0 && t->nrows == 0)
        rc = stall_err_set(err, STALL_EPARSE, "%s: no rows", t->path);
    if (rc) {
        free(ant);
        stall_table_free(t);
        return rc;
    }
    /* The measured rows of a what-if that is not comparable (other GPUs,
     * batches or epochs: vs_measured_pct empty) are left out, and the
     * figure says so, whether the folder holds them (stallsim analyze -o
     * FOLDER adds them) or not (run --analyze leaves them out). */
    bool comparable = stall_plot_measured_comparable(c->dir), dropped = !comparable;
    bool *skip = stall_xcalloc(t->nrows + 1, sizeof *skip);
    for (size_t i = 0; i < t->nrows; i++)
        skip[i] = !comparable && strcmp(stall_table_get(t, i, cs), "measured") == 0;
    /* The sources in order, each with its rows (ranks), and where its
     * group of bars starts: after the previous group and a gap of one bar. */
    char src[4][32];
    int nsrc = 0, ranks = 0, nrk[4] = {0};
    double off[4] = {0};
    for (size_t i = 0; i < t->nrows; i++) {
        const char *s = stall_table_get(t, i, cs);
        if (skip[i])
            continue;
        if (nsrc == 0 || strcmp(src[nsrc - 1], s) != 0) {
            if (nsrc == 4)
                break;
            snprintf(src[nsrc++], sizeof src[0], "%s", s);
        }
        nrk[nsrc - 1]++;
        ranks = nrk[nsrc - 1] > ranks ? nrk[nsrc - 1] : ranks;
    }
    if (nsrc == 0) {
        /* Only measured rows, and this what-if is not comparable with them:
         * nothing to draw (a bare plot command failed gnuplot). */
        stall_plot_note(c, "where each rank's time went: per_rank.csv holds the measured run "
                           "only, and this what-if is not comparable with it (other GPUs, "
                           "batches or epochs, or profiling windows the run starts empty); run "
                           "it with --analyze for its simulated ranks");
        /* (a breakdown an earlier plot drew, before stallsim analyze -o
         * replaced the run's per_rank.csv by the measured one's, would
         * contradict the note) */
        stall__plot_drop(c, "breakdown");
        free(skip);
        free(ant);
        stall_table_free(t);
        return 0;
    }
    /* The sources drawn whose barrier is the wait for the others' data
     * (analyze.csv's "<source>,have_compute_end,0"), where the barrier is
     * known at all (on clocks of their own it is not). All of them: the key
     * says so; some (run --analyze of the notebook's trace: the simulated
     * loop has a compute_end, the trace not): the key names them, where
     * "barrier wait" drew the measured ranks' 1500 s of waiting for data as
     * a slower rank's, beside analyze's "barrier wait for a slower rank
     * 0.0%". */
    char dsrc[160] = "", word4[256];
    int ndata = 0;
    for (int g = 0; g < nsrc && ant && !unknown[4]; g++) {
        char want[96];
        snprintf(want, sizeof want, "\n%.31s,have_compute_end,0\n", src[g]);
        if (strstr(ant, want)) {
            size_t n = strlen(dsrc);
            snprintf(dsrc + n, sizeof dsrc - n, "%s%.31s", ndata ? ", " : "", src[g]);
            ndata++;
        }
    }
    /* A trace without compute_end (the notebook's; analyze.csv's
     * "measured,have_compute_end,0", whether or not its bars are drawn) has
     * its all-reduce and step inside compute, and so has every simulated
     * rank, which replays those compute durations (post_s holds only what
     * the model adds). The key said "compute" and "all-reduce + step" over
     * a part drawn as 0, as if none took place. */
    bool folded = ant && strstr(ant, "\nmeasured,have_compute_end,0\n");
    bool post_drawn = false; /* an all-reduce part of a bar above 0 (a ring the model adds) */
    for (size_t i = 0; i < t->nrows; i++)
        post_drawn |= !skip[i] && col[5] >= 0 && stall_table_num(t, i, col[5]) > 0;
    if (folded) {
        words[3] = "compute, incl. the trace's all-reduce + step";
        words[5] = "all-reduce + step the model adds";
    }
    free(ant);
    if (ndata > 0 && ndata == nsrc)
        words[4] = "barrier wait for the others' data";
    else if (ndata > 0) {
        snprintf(word4, sizeof word4, "barrier wait (%s: for data)", dsrc);
        words[4] = word4;
    }
    /* A part unknown for some sources only (hand-over of a measured trace
     * that holds the loop's waits alone, beside a simulated one that has
     * it): the key names them, where it read as known for every bar. */
    char partial[6][128];
    for (int j = 0; j < 6; j++) {
        partial[j][0] = '\0';
        if (!blank[j] || unknown[j] || (j == 4 && ndata > 0))
            continue;
        size_t n = (size_t)snprintf(partial[j], sizeof partial[j], "%s (", words[j]);
        int named = 0;
        for (int g = 0; g < nsrc; g++) {
            bool all_empty = true;
            for (size_t i = 0; i < t->nrows && all_empty; i++)
                if (!skip[i] && strcmp(stall_table_get(t, i, cs), src[g]) == 0)
                    all_empty = !*stall_table_get(t, i, col[j]);
            if (all_empty && n < sizeof partial[j])
                n += (size_t)snprintf(partial[j] + n, sizeof partial[j] - n, "%s%.31s",
                                      named++ ? ", " : "", src[g]);
        }
        if (named > 0 && n < sizeof partial[j]) {
            snprintf(partial[j] + n, sizeof partial[j] - n, ": unknown)");
            words[j] = partial[j];
        }
    }
    for (int g = 1; g < nsrc; g++)
        off[g] = off[g - 1] + nrk[g - 1] + 1;
    /* The simulated group's name (below) says where its fetch times were inferred from the loop's
     * waits (fetch_fit.csv): its data part is the fit's, not a measurement's. */
    char *fit = stall_path_join(c->dir, "fetch_fit.csv");
    bool inferred = access(fit, F_OK) == 0;
    /* A fit of profiling windows opened mid-training (warm_start): the
     * simulated ranks' run starts each epoch empty, the windows did not
     * (validate's epochs compare the windows; docs/model.md 8.2). */
    size_t flen = 0;
    char *ftext = inferred ? stall_read_file(fit, &flen) : NULL;
    bool warm = ftext && strstr(ftext, "\nwarm_start,1,");
    free(ftext);
    free(fit);
    /* validate of such windows: analyze leaves the measured ranks out
     * (the run starts each epoch empty, the windows did not), and the
     * figure drew the simulated bars alone without a word, its folder
     * being comparable otherwise. */
    bool has_measured = false;
    for (int g = 0; g < nsrc; g++)
        has_measured |= strcmp(src[g], "measured") == 0;
    dropped |= warm && !has_measured;
    stall_plot_begin(c, "breakdown", ranks > 16 ? 1200 : 900, 480,
                     dropped ? "Where each rank's time went (seconds summed over epochs), "
                               "simulated (" PLOT_NOT_COMPARABLE ")"
                             : "Where each rank's time went (seconds summed over epochs), per "
                               "source");
    fprintf(c->dat,
            "# x rank startup_s data_s handover_s compute_s barrier_s post_s%s "
            "(x: the bar's position; one block per source: ",
            nparts == 7 ? " checkpoint_s" : "");
    for (int s = 0; s < nsrc; s++)
        fprintf(c->dat, "%s%s", s ? ", " : "", src[s]);
    fputs(")\n", c->dat);
    bool said = false;
    for (int j = 0; j < nparts; j++)
        if (blank[j]) {
            fprintf(c->dat, "%s %s",
                    said ? ""
                         : "# drawn as 0 where per_rank.csv leaves it empty "
                           "(hand-over: unknown, inside data_s; barrier: unknown, the ranks' "
                           "clocks not aligned, inside compute_s or post_s; checkpoint: "
                           "none recorded):",
                    parts7[j]);
            said = true;
        }
    if (said)
        fputc('\n', c->dat);
    int s = -1, i_in = 0;
    double maxx = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        if (skip[i])
            continue;
        if (s < 0 || strcmp(src[s], stall_table_get(t, i, cs)) != 0) {
            if (s + 1 >= nsrc)
                break;
            if (s >= 0)
                fputs("\n\n", c->dat);
            fprintf(c->dat, "# %s\n", src[++s]);
            i_in = 0;
        }
        double x = off[s] + i_in++;
        maxx = fmax(maxx, x);
        fprintf(c->dat, "%.9g %s", x, stall_table_get(t, i, cr));
        for (int j = 0; j < nparts; j++) {
            double v = stall_table_num(t, i, col[j]);
            stall_plot_num(c->dat, isnan(v) && blank[j] ? 0.0 : v);
        }
        fputc('\n', c->dat);
    }
    int every = ranks <= 16 ? 1 : (ranks + 15) / 16;
    free(skip);
    /* gnuplot sizes an outside key by its font's widest character, about a
     * quarter more than these titles take: at 900 px the key's column took
     * half the figure. A fifth of the longest title is taken back. */
    size_t longest = 0;
    for (int j = 0; j < nparts; j++) {
        size_t len = strlen(words[j]) + (unknown[j] && j < 6 ? strlen(" (unknown)") : 0);
        longest = len > longest ? len : longest;
    }
    fprintf(c->gp,
            "set title \"Where each rank's time went%s%s\"\n"
            "set style fill solid 0.9 noborder\nset boxwidth 0.8\n"
            "set ylabel \"time [s] (sum over epochs)\"\nset xlabel \"rank%s\" offset 0,-1.5\n"
            "set bmargin 6\nset yrange [0:*]\nset offsets 0, 0, graph 0.05, 0\n"
            "set xrange [-0.7:%.9g]\nset key outside right top Left reverse samplen 2 "
            "width -%zu\nset grid noxtics\n"
            "set xtics scale 0\nevery = %d\n",
            c->src, dropped ? "\\n" PLOT_NOT_COMPARABLE_TITLE : "",
            nsrc > 1 ? " (bars grouped by source)" : "", maxx + 0.7, longest / 5, every);
    for (int g = 0; g < nsrc; g++) {
        char name[192];
        snprintf(name, sizeof name, "%s%s", src[g],
                 !inferred || strcmp(src[g], "simulated") != 0 ? ""
                 : warm ? " (fetch times inferred; each epoch from an empty start)"
                        : " (fetch times inferred)");
        fprintf(c->gp, "set label %d ", g + 1);
        stall_plot_str(c->gp, name);
        fprintf(c->gp, " at %.9g, graph 0 center offset 0, -2.6 font \",11\"\n",
                off[g] + 0.5 * (nrk[g] - 1));
    }
    /* Stacked by drawing the cumulative sums from the top part down. */
    fputs("plot ", c->gp);
    bool first = true;
    for (int g = 0; g < nsrc; g++)
        for (int j = nparts - 1; j >= 0; j--) {
            fprintf(c->gp, "%s\"breakdown.dat\" index %d using 1:(", first ? "" : ", \\\n     ", g);
            for (int q = 0; q <= j; q++)
                fprintf(c->gp, "%s$%d", q ? "+" : "", q + 3);
            fprintf(c->gp, ")%s with boxes lc rgb \"%s\" ",
                    j == 0 ? ":xtic(int($2) % every == 0 ? stringcolumn(2) : \"\")" : "",
                    stall_plot_colors[j]);
            /* (folded, every bar's own all-reduce part 0: it is compute's,
             * and its key entry named nothing drawn) */
            if (g == 0 && !(folded && !post_drawn && j == 5))
                fprintf(c->gp, "title \"%s%s\"", words[j], unknown[j] && j < 6 ? " (unknown)" : "");
            else
                fputs("notitle", c->gp);
            first = false;
        }
    fputc('\n', c->gp);
    stall_plot_end(c);
    stall_table_free(t);
    return 0;
}

/* ---- seed ---- */

/* A seed folder: the notebook's mean iteration time and stall per
 * alignment (total_summary.csv, "mean±std" cells) beside the event replay's
 * (replay_summary.csv). */
int stall_plot_seed(plot_ctx *c, stall_err *err)
{
    stall_table *nb = NULL, *rp = NULL;
    int rc = stall_plot_read(c->dir, STALL_RESULTS_SEED_SUMMARY, &nb, err);
    if (rc == 0 && stall_result_has(c->dir, STALL_RESULTS_REPLAY_SUMMARY))
        rc = stall_plot_read(c->dir, STALL_RESULTS_REPLAY_SUMMARY, &rp, err);
    int ca = nb ? stall_table_col(nb, STALL_COL_SEED_ALIGN) : -1,
        ci = nb ? stall_table_col(nb, STALL_COL_SEED_ITERATION) : -1,
        cs = nb ? stall_table_col(nb, STALL_COL_SEED_STALL) : -1;
    if (rc == 0 && (ca < 0 || ci < 0 || cs < 0 || nb->nrows == 0))
        rc = stall_err_set(err, STALL_EPARSE, "%s: expected the columns %s, %s, %s and rows",
                           nb->path, STALL_COL_SEED_ALIGN, STALL_COL_SEED_ITERATION,
                           STALL_COL_SEED_STALL);
    if (rc) {
        stall_table_free(nb);
        stall_table_free(rp);
        return rc;
    }
    int rf = rp ? stall_table_col(rp, STALL_COL_FETCH_ALIGN) : -1,
        rs = rp ? stall_table_col(rp, STALL_COL_START_ALIGN) : -1,
        ri = rp ? stall_table_col(rp, STALL_COL_MEAN_ITERATION) : -1,
        rt = rp ? stall_table_col(rp, STALL_COL_MEAN_STALL) : -1;
    stall_plot_begin(c, "alignments", 1000, 440,
                     "Mean iteration time and training stall per alignment: the notebook's "
                     "numbers (seed) beside the event replay's");
    fputs("# x alignment notebook_iteration_s replay_iteration_s notebook_stall_s "
          "replay_stall_s\n",
          c->dat);
    for (size_t i = 0; i < nb->nrows; i++) {
        const char *a = stall_table_get(nb, i, ca);
        char fa[16] = "", sa[16] = "";
        /* FETCH_ALIGN_<fa>_START_ALIGN_<sa> */
        if (sscanf(a, "FETCH_ALIGN_%15[a-z]_START_ALIGN_%15[a-z]", fa, sa) != 2)
            snprintf(fa, sizeof fa, "?");
        double vi = NAN, vs = NAN;
        for (size_t j = 0; rp && ri >= 0 && rt >= 0 && rf >= 0 && rs >= 0 && j < rp->nrows; j++)
            if (strcmp(stall_table_get(rp, j, rf), fa) == 0 &&
                strcmp(stall_table_get(rp, j, rs), sa) == 0) {
                vi = stall_table_num(rp, j, ri);
                vs = stall_table_num(rp, j, rt);
            }
        fprintf(c->dat, "%zu %s/%s", i, fa, sa);
        stall_plot_num(c->dat, stall_table_num_mean(nb, i, ci));
        stall_plot_num(c->dat, vi);
        stall_plot_num(c->dat, stall_table_num_mean(nb, i, cs));
        stall_plot_num(c->dat, vs);
        fputc('\n', c->dat);
    }
    fprintf(c->gp,
            "set multiplot layout 1,2 title \"Notebook (seed) and event replay per alignment%s\"\n"
            "set style fill solid 0.85 border -1\nset xlabel \"alignment (fetch/start)\"\n"
            "set key top right\nset yrange [0:*]\nset offsets 0, 0, graph 0.15, 0\n"
            "set xrange [-0.6:%zu.6]\nset xtics rotate by -30\n"
            "set ylabel \"mean iteration time [s]\"\n"
            "plot \"alignments.dat\" using ($1-0.2):3:(0.4) with boxes lc 8 title "
            "\"notebook\", \"\" using ($1+0.2):4:(0.4) with boxes lc 1 title \"replay\", \"\" "
            "using 1:(NaN):xtic(2) with points notitle\n"
            "set ylabel \"mean training stall [s]\"\n"
            "plot \"alignments.dat\" using ($1-0.2):5:(0.4) with boxes lc 8 title "
            "\"notebook\", \"\" using ($1+0.2):6:(0.4) with boxes lc 1 title \"replay\", \"\" "
            "using 1:(NaN):xtic(2) with points notitle\n",
            c->src, nb->nrows - 1);
    stall_plot_end(c);
    stall_plot_note(c, "seed mode writes no iterations.csv: stall per rank, CDFs and GPU "
                       "utilisation need stallsim run with mode = replay on the same trace");
    stall_table_free(nb);
    stall_table_free(rp);
    return 0;
}
