/*
 * htmlheadline_grid.c - the headline of a sweep (the best point), a plan
 * (its answers) and a seed-mode run (the notebook's least stall), by the rule
 * of htmlheadline.c.
 */
#include "htmlheadline.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "htmlfmt.h"
#include "stall/io.h"
#include "stall/results.h"
#include "stall/table.h"
#include "htmlheadline_int.h"

/* The throughput column of a sweep: samples/s when filled, else batches/s. */
const char *hl_thr_col(const stall_table *t)
{
    return !isnan(hl_num(t, 0, "throughput_samples_s")) ? "throughput_samples_s"
                                                        : "throughput_batches_s";
}

/* "key=value, key=value" of a sweep row's swept columns (escaped). */
static void hl_point(FILE *f, const stall_table *t, size_t r)
{
    int n = 0;
    for (int c = 1; c < t->ncols && strchr(t->header[c], '.'); c++) {
        fputs(n++ ? ", " : "", f);
        hf_escape(f, t->header[c]);
        fputc('=', f);
        hf_escape(f, stall_table_get(t, r, c));
    }
}

static double hl_seed_mean(const stall_table *t, size_t r, const char *col);

/* A sweep of mode = seed: its sweep.csv holds the event replay's numbers
 * (each point's replay_summary.csv), while the notebook's own means are in
 * each point's total_summary.csv, whose range over the points is set
 * beside them in *lo and *hi (the mean training stall of each point's
 * first alignment). Returns false for a sweep of another mode. */
static bool hl_sweep_seed(const char *dir, const stall_table *t, double *lo, double *hi)
{
    *lo = INFINITY, *hi = -INFINITY;
    bool seed = false;
    for (size_t r = 0; r < t->nrows; r++) {
        char pd[64], *sub;
        snprintf(pd, sizeof pd, "point-%06d", atoi(hl_get(t, r, "point")));
        sub = stall_path_join(dir, pd);
        stall_table *nb = NULL;
        stall_err e = {0};
        if (hf_has(sub, "total_summary.csv") && hl_read(sub, "total_summary.csv", &nb, &e) == 0 &&
            nb && nb->nrows > 0) {
            double v = hl_seed_mean(nb, 0, "Avg training stall time (sec)");
            seed = true;
            *lo = fmin(*lo, v), *hi = fmax(*hi, v);
        }
        stall_table_free(nb);
        free(sub);
    }
    return seed;
}

int hl_sweep(FILE *f, const char *dir, stall_err *err)
{
    stall_table *t = NULL;
    int rc = hl_read(dir, "sweep.csv", &t, err);
    if (rc || !t || t->nrows == 0) {
        stall_table_free(t);
        return rc;
    }
    const char *col = hl_thr_col(t);
    const char *unit = strcmp(col, "throughput_samples_s") == 0 ? "samples/s" : "batches/s";
    double lo, hi;
    size_t ilo, ihi;
    hl_range(t, col, &lo, &hi, &ilo, &ihi);
    size_t knee = ihi;
    for (size_t r = 0; r < t->nrows; r++)
        if (hl_num(t, r, col) >= hi * (1 - HL(HL_FLAT))) {
            knee = r;
            break;
        }
    hl_bound bd = hl_startup_rule(hl_bound_of(hl_num(t, ihi, "stall_share"), hl_barrier(t, ihi),
                                              hl_num(t, ihi, "gpu_busy_share")),
                                  NULL, t, ihi);
    char b[6][HF_LEN];
    char *claim = NULL;
    size_t cn = 0;
    FILE *c = open_memstream(&claim, &cn);
    if (!c)
        abort();
    bool flat = hi > 0 && (hi - lo) / hi < HL(HL_FLAT);
    if (flat) {
        fprintf(c,
                "spread of throughput over the %zu points (%s to %s %s): the swept values make "
                "no difference here",
                t->nrows, hf_fmt(b[1], lo, HF_NUM), hf_fmt(b[2], hi, HF_NUM), unit);
        hf_fmt(b[0], 100 * (hi - lo) / hi, HF_PCT);
    } else {
        fprintf(c, "%s: the best of %zu points is ", unit, t->nrows);
        hl_point(c, t, ihi);
        fprintf(c, " (point %s), %s the worst (", hl_get(t, ihi, "point"),
                hf_fmt(b[1], hi / lo, HF_RATIO));
        hl_point(c, t, ilo);
        fprintf(c, ": %s %s); there it is <b>%s</b>, %s %s", hf_fmt(b[2], lo, HF_NUM), unit,
                bd.word, hf_fmt(b[3], bd.key, HF_SHARE), bd.claim);
        hf_fmt(b[0], hi, HF_NUM);
    }
    fclose(c);
    double nlo, nhi;
    bool seed = hl_sweep_seed(dir, t, &nlo, &nhi);
    hl_lead(f, flat ? (seed ? "no effect (event replay)" : "no effect") : "best point", b[0],
            claim);
    free(claim);
    if (seed) {
        char s1[HF_LEN], s2[HF_LEN];
        fprintf(f,
                "<p class=\"change\"><b>The event replay's numbers:</b> in mode = seed "
                "sweep.csv and the figures hold the event simulation of each point "
                "(replay_summary.csv); the notebook's own means (each point's "
                "total_summary.csv) give a mean training stall from %s to %s over the points: "
                "its arithmetic does not carry a slower batch's delay to the batches after it "
                "(docs/seed-vs-replay.md).</p>\n",
                hf_fmt(s1, nlo, HF_TIME), hf_fmt(s2, nhi, HF_TIME));
    }
    double vs = hl_num(t, ihi, "vs_measured_pct");
    fprintf(f, "<p class=\"facts\">best point: epoch %s",
            hf_fmt(b[0], hl_num(t, ihi, "epoch_time_s"), HF_TIME));
    if (!isnan(vs))
        fprintf(f, " (%s against the measured epoch, vs_measured_pct)", hf_fmt(b[1], vs, HF_DPCT));
    fprintf(f, " &middot; worst point: epoch %s</p>\n",
            hf_fmt(b[2], hl_num(t, ilo, "epoch_time_s"), HF_TIME));
    size_t near = 0;
    for (size_t r = 0; r < t->nrows; r++)
        near += r != ihi && hl_num(t, r, col) >= hi * (1 - HL(HL_FLAT));
    if (!flat && knee == ihi && near > 0)
        fprintf(f,
                "<p class=\"change\"><b>Plateau:</b> %zu other point%s within %s of the best: "
                "beyond the best point's values little changes.</p>\n",
                near, near == 1 ? " is" : "s are", hf_fmt(b[0], 100 * HL(HL_FLAT), HF_PCT));
    if (!flat && knee != ihi) {
        fputs("<p class=\"change\"><b>Enough:</b> ", f);
        hl_point(f, t, knee);
        fprintf(f,
                " (point %s, the first in sweep order) already reaches %s %s, within %s of the "
                "best: going further changes little.</p>\n",
                hl_get(t, knee, "point"), hf_fmt(b[0], hl_num(t, knee, col), HF_NUM), unit,
                hf_fmt(b[1], 100 * HL(HL_FLAT), HF_PCT));
    }
    bool startup = strcmp(bd.word, "start-up-bound") == 0;
    if (!flat && (strcmp(bd.word, "data-bound") == 0 || startup)) {
        char pd[64];
        snprintf(pd, sizeof pd, "point-%06d", atoi(hl_get(t, ihi, "point")));
        char *sub = stall_path_join(dir, pd);
        /* Beside the sweep's folder, not in it: a sweep refuses a folder
         * that holds entries of its own. */
        char suffix[80];
        snprintf(suffix, sizeof suffix, "-%s-%s", pd, startup ? "analyze" : "plan");
        char *out = hl_out_beside(dir, suffix);
        if (hf_has(sub, "effective.ini") && startup)
            hl_suggest(f,
                       "the best point waits mostly for each epoch's first batch; where each "
                       "rank's time goes (start-up, a rank that begins late, data, barrier)",
                       sub, "run", "--analyze", out);
        else if (hf_has(sub, "effective.ini"))
            hl_suggest(f, "the best point still waits for data; what would remove the rest", sub,
                       "plan", "", out);
        free(out);
        free(sub);
    }
    stall_table_free(t);
    return 0;
}

double hl_plan_key(const char *dir, const char *key)
{
    char *p = stall_path_join(dir, "effective.ini");
    size_t n = 0;
    char *s = stall_read_file(p, &n);
    free(p);
    double v = NAN;
    const char *sec = s ? strstr(s, "\n[plan]") : NULL;
    size_t kl = strlen(key);
    for (const char *l = sec ? strchr(sec + 1, '\n') : NULL; l && *l; l = strchr(l, '\n')) {
        l++;
        if (*l == '[')
            break;
        if (strncmp(l, key, kl) == 0 && (l[kl] == ' ' || l[kl] == '=')) {
            const char *e = strchr(l, '=');
            if (e)
                v = strtod(e + 1, NULL);
            break;
        }
    }
    free(s);
    return v;
}

int hl_plan(FILE *f, const char *dir, stall_err *err)
{
    stall_table *p = NULL;
    int rc = hl_read(dir, "plan.csv", &p, err);
    if (rc || !p)
        return rc;
    double v[4] = {NAN, NAN, NAN, NAN};
    const char *bind[4] = {"", "", "", ""};
    static const char *const q[4] = {STALL_PLAN_MIN_WORKERS, STALL_PLAN_MAX_EFFICIENT,
                                     "storage_bandwidth_mb_s", "cores_per_node"};
    /* The plan's answer is at the configuration's GPU count, and so is its
     * stall share: both in plan.csv's row of the answer (gpus,
     * stall_share), as plan ran them. Neither the trace (once read here
     * for its ranks, which a moved trace made unreadable) nor scaling.csv
     * (only the counts its curve ran: not 3) is read for them. */
    double g = NAN, stall = NAN;
    for (size_t r = 0; r < p->nrows; r++)
        for (int i = 0; i < 4; i++)
            if (strcmp(hl_get(p, r, STALL_COL_QUANTITY), q[i]) == 0) {
                v[i] = hl_num(p, r, STALL_COL_VALUE);
                bind[i] = hl_get(p, r, "binding");
                if (i == 0) {
                    g = hl_num(p, r, STALL_COL_GPUS);
                    stall = hl_num(p, r, STALL_COL_STALL_SHARE);
                }
            }
    /* A plan.csv from before those columns: the headline without the stall
     * share, and what gives it. */
    bool old = stall_table_col(p, STALL_COL_STALL_SHARE) < 0;
    if (isnan(g) || !(g >= 1))
        stall = NAN;
    double target = hl_plan_key(dir, "stall_target"), eff = hl_plan_key(dir, "efficiency");
    double maxw = hl_plan_key(dir, "max_workers");
    char b[6][HF_LEN], claim[900], at[200];
    if (!isnan(stall))
        snprintf(at, sizeof at, "the configuration's %.0f GPU%s", g, g == 1 ? "" : "s");
    const char *word = strcmp(bind[0], "not_met") == 0 ? "data-bound"
                       : strcmp(bind[2], "binds") == 0 ? "storage-bound"
                       : strcmp(bind[3], "binds") == 0 ? "host-cores-bound"
                                                       : "nothing binds";
    /* The counts searched: 1, 2, 4, ... doubling up to max_workers. */
    char searched[96];
    snprintf(searched, sizeof searched, "the worker counts searched (1 to %s per GPU, doubling)",
             hf_fmt(b[4], maxw, HF_INT));
    if (strcmp(bind[0], "not_met") == 0 && !isnan(stall)) {
        snprintf(claim, sizeof claim,
                 "stall share remains at %s with %s workers per GPU (plan.csv), the least of "
                 "%s, above the target %s: no worker count hides data loading here",
                 at, hf_fmt(b[1], v[0], HF_INT), searched, hf_fmt(b[2], target, HF_SHARE));
        hl_lead(f, word, hf_fmt(b[0], stall, HF_SHARE), claim);
    } else if (strcmp(bind[0], "not_met") == 0) {
        snprintf(claim, sizeof claim,
                 "workers per GPU give the least stall share of %s, above the target %s: no "
                 "worker count hides data loading here",
                 searched, hf_fmt(b[2], target, HF_SHARE));
        hl_lead(f, word, hf_fmt(b[0], v[0], HF_INT), claim);
    } else if (!isnan(stall)) {
        snprintf(claim, sizeof claim,
                 "workers per GPU are the fewest that bring the stall share to the target %s "
                 "or below (%s at %s, plan.csv)",
                 hf_fmt(b[1], target, HF_SHARE), hf_fmt(b[2], stall, HF_SHARE), at);
        hl_lead(f, word, hf_fmt(b[0], v[0], HF_INT), claim);
    } else {
        snprintf(claim, sizeof claim,
                 "workers per GPU are the fewest that bring the stall share to the target %s "
                 "or below",
                 hf_fmt(b[1], target, HF_SHARE));
        hl_lead(f, word, hf_fmt(b[0], v[0], HF_INT), claim);
    }
    if (old)
        fputs("<p class=\"change\"><b>Older plan:</b> this plan.csv has no gpus and stall_share "
              "columns (written by an older stallsim), so the headline cannot give the stall "
              "share at the configuration's GPU count; run <code>stallsim plan</code> on its "
              "effective.ini again to get it.</p>\n",
              f);
    fprintf(f,
            "<p class=\"facts\">weak scaling stays at efficiency %s or more up to <b>%s</b> "
            "GPU%s (limit: ",
            hf_fmt(b[0], eff, HF_SHARE), hf_fmt(b[1], v[1], HF_INT), v[1] == 1 ? "" : "s");
    hf_escape(f, strcmp(bind[1], "none") == 0 ? "none up to max_gpus" : bind[1]);
    fprintf(f, ") &middot; host cores per node: %s (", hf_fmt(b[2], v[3], HF_INT));
    hf_escape(f, bind[3]);
    fputs(") &middot; storage bandwidth per node: ", f);
    if (isnan(v[2])) {
        hf_escape(f, bind[2]);
        if (strcmp(bind[2], "not_modelled") == 0)
            fputs(" (no MB per batch: the trace records no bytes and the plan's INI sets no "
                  "<code>[storage] batch_mb</code>)",
                  f);
    } else
        fprintf(f, "%s MB/s (%s)", hf_fmt(b[3], v[2], HF_NUM), bind[2]);
    fputs("</p>\n", f);
    if (strcmp(bind[3], "binds") == 0)
        fprintf(f,
                "<p class=\"change\"><b>What would change it:</b> %s host cores per node "
                "(cores_per_node, plan.csv) keep throughput within 1%% of unlimited cores.</p>\n",
                hf_fmt(b[0], v[3], HF_INT));
    stall_table_free(p);
    return 0;
}

/* The leading number of a notebook cell "mean±std" (total_summary.csv). */
static double hl_seed_mean(const stall_table *t, size_t r, const char *col)
{
    return stall_table_num_mean(t, r, stall_table_col(t, col));
}

/* mode = seed: the notebook's best alignment by mean stall, and what the
 * event replay of the same trace says of that alignment. */
int hl_seed(FILE *f, const char *dir, stall_err *err)
{
    stall_table *nb = NULL, *rp = NULL;
    int rc = hl_read(dir, "total_summary.csv", &nb, err);
    if (rc == 0)
        rc = hl_read(dir, "replay_summary.csv", &rp, err);
    if (rc || !nb || !rp || nb->nrows == 0 || rp->nrows != nb->nrows) {
        stall_table_free(nb);
        stall_table_free(rp);
        return rc;
    }
    /* Both files list the alignments in the same order (fetch, then start). */
    for (size_t r = 0; r < nb->nrows; r++) {
        char name[96];
        snprintf(name, sizeof name, "FETCH_ALIGN_%s_START_ALIGN_%s", hl_get(rp, r, "fetch_align"),
                 hl_get(rp, r, "start_align"));
        if (strcmp(hl_get(nb, r, "Align"), name) != 0) {
            stall_table_free(nb);
            stall_table_free(rp);
            return 0; /* not the files a seed run writes: no headline */
        }
    }
    const char *stall = "Avg training stall time (sec)";
    size_t best = 0, ref = hl_ref_row(rp);
    for (size_t r = 1; r < nb->nrows; r++)
        if (hl_seed_mean(nb, r, stall) < hl_seed_mean(nb, best, stall))
            best = r;
    char b[4][HF_LEN], claim[768];
    double nb_best = hl_seed_mean(nb, best, stall), nb_ref = hl_seed_mean(nb, ref, stall),
           rp_best = hl_num(rp, best, "mean_stall_s"), rp_ref = hl_num(rp, ref, "mean_stall_s");
    snprintf(claim, sizeof claim,
             "mean training stall with fetch %s / start %s, by the notebook's arithmetic "
             "(mode = seed reproduces it exactly), against %s as measured (none/none).",
             hl_get(rp, best, "fetch_align"), hl_get(rp, best, "start_align"),
             hf_fmt(b[1], nb_ref, HF_TIME));
    hl_lead(f, "the notebook says", hf_fmt(b[0], nb_best, HF_TIME), claim);
    fprintf(f,
            "<p class=\"change\"><b>The event simulation of the same trace</b> "
            "(replay_summary.csv) gives that alignment %s of stall against %s as measured: "
            "the notebook's means do not carry a slower batch's delay to the batches after "
            "it (docs/seed-vs-replay.md).</p>\n",
            hf_fmt(b[2], rp_best, HF_TIME), hf_fmt(b[3], rp_ref, HF_TIME));
    stall_table_free(nb);
    stall_table_free(rp);
    return 0;
}
