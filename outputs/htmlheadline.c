/*
 * htmlheadline.c - the headline of report.html (htmlheadline.h): the
 * verdict, the number that matters and what would change it, from the
 * folder's own files. A change is quoted only where the folder measured it
 * (a what-if's vs_measured_pct, a sweep's points, a plan's answers);
 * otherwise the headline suggests the command that would measure it,
 * marked as a suggestion, and never invents a number. This file: the rule,
 * run, validate and analyze (sweep, plan and seed: htmlheadline_grid.c).
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

/*
 * The rule, every threshold in one place (docs/model.md, "The report's
 * headline", copies this table):
 *
 *   run (summary.csv, the none/none row, else the first): stall share S,
 *   barrier share W = mean_barrier_wait_s / mean_iteration_s, GPU busy
 *   share B.
 *     the larger of S and W when it is >= LOSS: data-bound (S) or
 *       straggler-bound (W: ranks wait at the barrier for a slower rank)
 *     else B >= BUSY: compute-bound
 *     else: balanced (no single loss takes LOSS, the GPUs idle > 1 - BUSY)
 *   analyze.csv, when there is one (analyze; run or validate --analyze):
 *     its verdict (simulated for a run, measured for analyze), with the
 *     share it names; LOSS is analyze's STALL_AN_LOSS
 *   validate: the largest |error_pct| over the epochs: <= CLOSE reproduced,
 *     <= WARN approximate (a warning), beyond: not reproduced (a warning)
 *   sweep: the point with the highest throughput (samples/s, else
 *     batches/s), its gain over the worst point, and the first point in
 *     sweep order within FLAT of it; a spread under FLAT: no effect
 *   plan: plan.csv's answers (workers not_met: data-bound; storage or
 *     cores binding: storage-bound, host-cores-bound; else nothing binds)
 *   curves whose values lie within FLAT of each other are said to coincide
 */
const hl_threshold hl_rule[HL_N] = {
    /* a loss (waiting for data, at the barrier) of at least this share of
     * the time names the verdict: removing it would make the run >= 25%
     * faster (= STALL_AN_LOSS of stallsim analyze) */
    [HL_LOSS] = {"loss", 0.20},
    /* GPU busy share from which a run with no such loss is compute-bound */
    [HL_BUSY] = {"busy", 0.80},
    /* validate: largest |epoch error| in percent still "reproduced" */
    [HL_CLOSE] = {"close_pct", 2.0},
    /* validate: beyond this percent, "not reproduced" */
    [HL_WARN] = {"warn_pct", 10.0},
    /* relative spread under which values coincide (lines on top of each
     * other, a sweep that changes nothing, a plateau) */
    [HL_FLAT] = {"flat", 0.01},
};

double hl_flat(void)
{
    return HL(HL_FLAT);
}

/* ---- reading ---- */

/* Reads dir/name into *t; a missing file is no error (*t NULL). */
int hl_read(const char *dir, const char *name, stall_table **t, stall_err *err)
{
    *t = NULL;
    char *p = stall_path_join(dir, name);
    FILE *f = fopen(p, "r");
    int rc = 0;
    if (f) {
        fclose(f);
        rc = stall_table_read(p, t, err);
    }
    free(p);
    return rc;
}

double hl_num(const stall_table *t, size_t r, const char *col)
{
    return stall_table_num(t, r, stall_table_col(t, col));
}

const char *hl_get(const stall_table *t, size_t r, const char *col)
{
    int c = stall_table_col(t, col);
    return c >= 0 ? stall_table_get(t, r, c) : "";
}

/* analyze.csv's value of (source, metric), or NULL. */
static const char *hl_an(const stall_table *t, const char *source, const char *metric)
{
    int cs = stall_table_col(t, "source"), cm = stall_table_col(t, "metric"),
        cv = stall_table_col(t, "value");
    if (cs < 0 || cm < 0 || cv < 0)
        return NULL;
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(stall_table_get(t, r, cs), source) == 0 &&
            strcmp(stall_table_get(t, r, cm), metric) == 0)
            return stall_table_get(t, r, cv);
    return NULL;
}

static double hl_an_num(const stall_table *t, const char *source, const char *metric)
{
    int cs = stall_table_col(t, "source"), cm = stall_table_col(t, "metric"),
        cv = stall_table_col(t, "value");
    if (cs < 0 || cm < 0 || cv < 0)
        return NAN;
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(stall_table_get(t, r, cs), source) == 0 &&
            strcmp(stall_table_get(t, r, cm), metric) == 0)
            return stall_table_num(t, r, cv);
    return NAN;
}

/* ---- writing ---- */

/* The lead line: verdict badge, the key number, the claim (HTML). */
void hl_lead(FILE *f, const char *verdict, const char *key, const char *claim)
{
    const char *cls = strstr(verdict, "bound") || strstr(verdict, "not ") ? "bad"
                      : strcmp(verdict, "approximate") == 0               ? "warn"
                                                                          : "ok";
    fprintf(f, "<p class=\"lead\"><span class=\"verdict %s\">", cls);
    hf_escape(f, verdict);
    fprintf(f, "</span> <b class=\"key\">%s</b> %s</p>\n", key, claim);
}

/* A suggested command (HTML): stallsim cmd ini_dir/effective.ini args -o out.
 * out is never the folder the page is about: a plan replaces its -o folder
 * whole and a sweep writes into it, so a suggestion without one (plan's
 * default is the run's own results/<name>/) would delete the run it came
 * from. Paths are shell words, so that the command runs as printed. */
void hl_suggest(FILE *f, const char *why, const char *ini_dir, const char *cmd, const char *args,
                const char *out)
{
    char *ini = stall_path_join(ini_dir, "effective.ini");
    char *w_ini = stall_path_shell(ini), *w_out = stall_path_shell(out);
    fputs("<p class=\"suggest\"><b>Suggestion</b> (not run; no number here comes from it): ", f);
    fputs(why, f);
    fputs(": <code>stallsim ", f);
    hf_escape(f, cmd);
    fputc(' ', f);
    hf_escape(f, w_ini);
    if (args && *args) {
        fputc(' ', f);
        hf_escape(f, args);
    }
    fputs(" -o ", f);
    hf_escape(f, w_out);
    fputs("</code></p>\n", f);
    free(ini);
    free(w_ini);
    free(w_out);
}

char *hl_out_beside(const char *dir, const char *suffix)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t m = n + strlen(suffix) + 1;
    char *o = stall_xmalloc(m);
    snprintf(o, m, "%.*s%s", (int)n, dir, suffix);
    return o;
}

hl_bound hl_bound_of(double stall, double barrier, double busy)
{
    double s = isnan(stall) ? 0 : stall, w = isnan(barrier) ? 0 : barrier;
    if ((s >= w ? s : w) >= HL(HL_LOSS))
        return s >= w ? (hl_bound){"data-bound", s,
                                   "of the time the training loop waits for data, epoch start-up "
                                   "included (stall share)"}
                      : (hl_bound){"straggler-bound", w,
                                   "of an iteration the ranks wait at the barrier for a slower "
                                   "rank (mean barrier wait / mean iteration)"};
    if (busy >= HL(HL_BUSY))
        return (hl_bound){"compute-bound", busy,
                          "of the time the GPUs compute (GPU busy share): loading keeps up"};
    return (hl_bound){"balanced", busy,
                      "of the time the GPUs compute (GPU busy share), and no single loss (data, "
                      "barrier) is large enough to name"};
}

double hl_barrier(const stall_table *t, size_t r)
{
    double w = hl_num(t, r, "mean_barrier_wait_s"), it = hl_num(t, r, "mean_iteration_s");
    return it > 0 ? w / it : NAN;
}

/* The share an analyze verdict names, and what it means. */
static double hl_an_key(const stall_table *an, const char *src, const char *verdict,
                        const char **claim)
{
    static const struct {
        const char *verdict, *metric, *claim;
    } m[] = {
        {"data-bound", "share_data", "of the ranks' time waits for data"},
        {"straggler-bound", "share_straggler",
         "of the ranks' time waits at the barrier for a slower rank"},
        {"compute-bound", "share_compute", "of the ranks' time computes (incl. all-reduce)"},
        {"start-up-bound", "share_startup", "of the ranks' time is epoch start-up"},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (strcmp(verdict, m[i].verdict) == 0) {
            *claim = m[i].claim;
            return hl_an_num(an, src, m[i].metric);
        }
    *claim = "";
    return NAN;
}

/* The analyze verdict of src as a lead line; 0 when there is none. */
static int hl_analyze_lead(FILE *f, const stall_table *an, const char *src)
{
    const char *v = hl_an(an, src, "verdict");
    if (!v || !*v)
        return 0;
    const char *claim;
    double k = hl_an_key(an, src, v, &claim);
    char b[HF_LEN], c[400];
    snprintf(c, sizeof c, "%s (analyze.csv, %s)", claim, src);
    hl_lead(f, v, hf_fmt(b, k, HF_SHARE), c);
    return 1;
}

/* Where the straggler of analyze.csv is, as data from the folder. */
static void hl_straggler(FILE *f, const stall_table *an, const char *src)
{
    const char *r = hl_an(an, src, "straggler_rank");
    if (!r || !*r)
        return;
    double in = hl_an_num(an, src, "straggler_input_s"),
           co = hl_an_num(an, src, "straggler_compute_s");
    char b1[HF_LEN], b2[HF_LEN];
    fprintf(f, "<p class=\"change\"><b>Where it comes from:</b> rank ");
    hf_escape(f, r);
    /* Without compute_end the wait at the barrier is inside the compute:
     * a longer compute cannot be seen, and its 0 s is no measurement. */
    if (hl_an_num(an, src, "have_compute_end") == 0) {
        fprintf(f,
                " makes the others wait most; when last at the barrier it was late by %s of "
                "longer stalls in total (an input straggler as far as this trace shows: it has "
                "no compute_end, so the wait at the barrier is inside each rank's compute and "
                "a compute straggler cannot be seen).</p>\n",
                hf_fmt(b2, in, HF_TIME));
        return;
    }
    fprintf(f,
            " makes the others wait most; when last at the barrier it was late by %s of "
            "longer compute and %s of longer stalls in total (%s).</p>\n",
            hf_fmt(b1, co, HF_TIME), hf_fmt(b2, in, HF_TIME),
            co > in ? "a compute straggler: look at that rank's GPU, host or data shard, not "
                      "the loader"
                    : "an input straggler: its loading is slower");
}

/* ---- per kind ---- */

size_t hl_ref_row(const stall_table *t)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (strcmp(hl_get(t, r, "fetch_align"), "none") == 0 &&
            strcmp(hl_get(t, r, "start_align"), "none") == 0)
            return r;
    return 0;
}

/* The facts line of a summary row. */
static void hl_facts(FILE *f, const stall_table *t, size_t r)
{
    char b[5][HF_LEN];
    double thr = hl_num(t, r, "throughput_samples_s");
    const char *unit = "samples/s";
    if (isnan(thr)) {
        thr = hl_num(t, r, "throughput_batches_s");
        unit = "batches/s";
    }
    fprintf(f,
            "<p class=\"facts\">this run (summary.csv): epoch %s &middot; %s %s &middot; "
            "stall share %s (waiting for data, epoch start-up included, of the iteration time) "
            "&middot; GPU busy %s &middot; barrier wait %s of an iteration (every wait for the "
            "last rank)",
            hf_fmt(b[0], hl_num(t, r, "epoch_time_s"), HF_TIME), hf_fmt(b[1], thr, HF_NUM), unit,
            hf_fmt(b[2], hl_num(t, r, "stall_share"), HF_SHARE),
            hf_fmt(b[3], hl_num(t, r, "gpu_busy_share"), HF_SHARE),
            hf_fmt(b[4], hl_barrier(t, r), HF_SHARE));
    if (t->nrows > 1)
        fprintf(f, " (alignment %s/%s)", hl_get(t, r, "fetch_align"), hl_get(t, r, "start_align"));
    fputs("</p>\n", f);
}

/* min and max of a column over the rows, and where they are. */
void hl_range(const stall_table *t, const char *col, double *lo, double *hi, size_t *ilo,
              size_t *ihi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    *ilo = *ihi = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double v = hl_num(t, r, col);
        if (isnan(v))
            continue;
        if (v < *lo) {
            *lo = v;
            *ilo = r;
        }
        if (v > *hi) {
            *hi = v;
            *ihi = r;
        }
    }
}

/* Of a model run's row r in a folder written before summary.csv had
 * first_batch_stall_share: the share of its iteration time the loop waits
 * for each epoch's first batch (the workers' start-up, the first fetch, a
 * rank that began the epoch late: docs/model.md 2.4), from the stall_s of
 * batch 0 in its alignment's iterations.csv over the sum of iteration_s
 * (the stall share's own terms); NAN where the folder has none. */
static double hl_first_batch(const char *dir, const stall_table *t, size_t r)
{
    char sub[160], name[200];
    snprintf(sub, sizeof sub, STALL_RESULTS_ALIGN_DIR, hl_get(t, r, "fetch_align"),
             hl_get(t, r, "start_align"));
    snprintf(name, sizeof name, "%s/%s", sub, STALL_RESULTS_ITERATIONS);
    stall_table *it = NULL;
    stall_err e = {0};
    if (hl_read(dir, name, &it, &e) != 0 || !it)
        return NAN;
    int cb = stall_table_col(it, "batch"), cs = stall_table_col(it, "stall_s"),
        ci = stall_table_col(it, "iteration_s");
    double first = 0, all = 0;
    for (size_t i = 0; cb >= 0 && cs >= 0 && ci >= 0 && i < it->nrows; i++) {
        all += stall_table_num(it, i, ci);
        if (strcmp(stall_table_get(it, i, cb), "0") == 0)
            first += stall_table_num(it, i, cs);
    }
    stall_table_free(it);
    return all > 0 ? first / all : NAN;
}

/* A run or validation whose fetch durations were inferred from the loop's
 * waits (fetch_fit.csv; the terminal's INFERRED and CAUTION lines): the
 * page says so, with the fit's cautions, since every number on it is built
 * on the fit (a new user's finding: the page said nothing of it). */
static void hl_inferred(FILE *f, const char *dir)
{
    char *p = stall_path_join(dir, "fetch_fit.csv");
    char *text = stall_read_file(p, NULL);
    free(p);
    if (!text)
        return;
    static const struct {
        const char *key, *say;
    } flags[] = {
        {"bounded_only", "the loop hardly waited for data, so the trace bounds the fetch times "
                         "from above only (what-ifs of fewer workers or slower fetches are not "
                         "determined by it)"},
        {"poor_fit", "the fit does not reproduce the measured waits"},
        {"warm_start", "the trace's epochs are profiling windows opened mid-training, while the "
                       "simulated epochs start cold, with the workers' start-up"},
        {"startup_confounded", "the start-up and the fetch cannot be told apart"},
    };
    fputs("<p class=\"warn\"><b>Fetch times inferred:</b> the trace holds only the training "
          "loop's waits, so the fetch durations every number here is built on were fitted to "
          "them (fetch_fit.csv, docs/model.md 8.2), not measured",
          f);
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n%s,1,", flags[i].key);
        if (strstr(text, want))
            fprintf(f, ". Caution: %s", flags[i].say);
    }
    fputs(".</p>\n", f);
    free(text);
}

hl_bound hl_startup_rule(hl_bound bd, const char *dir, const stall_table *t, size_t r)
{
    if (stall_table_col(t, "workers") < 0 || strcmp(bd.word, "data-bound") != 0)
        return bd;
    bool col = stall_table_col(t, "first_batch_stall_share") >= 0;
    double first = col   ? hl_num(t, r, "first_batch_stall_share")
                   : dir ? hl_first_batch(dir, t, r)
                         : NAN;
    if (!isnan(first) && first >= HL(HL_LOSS) && first > bd.key - first)
        bd = (hl_bound){"start-up-bound", first,
                        "of the time the training loop waits for each epoch's first batch (the "
                        "workers' start-up, the first fetch, a rank that began the epoch late; "
                        "first_batch_stall_share), the most of its stall share"};
    return bd;
}

static int hl_run(FILE *f, const char *dir, stall_err *err)
{
    stall_table *t = NULL, *an = NULL;
    int rc = hl_read(dir, "summary.csv", &t, err);
    if (rc == 0)
        rc = hl_read(dir, "analyze.csv", &an, err);
    if (rc || !t || t->nrows == 0) {
        stall_table_free(t);
        stall_table_free(an);
        return rc;
    }
    size_t r = hl_ref_row(t);
    bool model = stall_table_col(t, "workers") >= 0;
    /* A model run whose stall is mostly each epoch's first batch (a rank
     * that began late, a long start-up) is start-up-bound, as analyze
     * would call it, not data-bound. */
    hl_bound bd = hl_startup_rule(
        hl_bound_of(hl_num(t, r, "stall_share"), hl_barrier(t, r), hl_num(t, r, "gpu_busy_share")),
        dir, t, r);
    const char *word = bd.word;
    /* analyze.csv of the measured trace only (stallsim analyze -o this
     * folder): where this run is that trace's run (a replay of it, or a
     * model run within CLOSE of its epoch) the page's table gives its
     * verdict, and the headline takes the same verdict and share; the run
     * rule's stall share counts epoch start-up and every barrier wait, so
     * it named data-bound 39.2% beside a table saying start-up-bound, data
     * 14.6% (a new user's report). Else the measured verdict is another
     * run's, said so under the headline. */
    const char *mv = an ? hl_an(an, "measured", "verdict") : NULL;
    double vs0 = hl_num(t, r, "vs_measured_pct");
    bool same = !model || (!isnan(vs0) && fabs(vs0) <= HL(HL_CLOSE));
    bool other = false;
    if (an && hl_analyze_lead(f, an, "simulated")) {
        word = hl_an(an, "simulated", "verdict");
    } else if (mv && *mv && same) {
        const char *claim;
        double k = hl_an_key(an, "measured", mv, &claim);
        char b[2][HF_LEN], c[600];
        if (model)
            snprintf(c, sizeof c,
                     "%s (analyze.csv, measured: the trace this run reproduces, its epoch within "
                     "%s)",
                     claim, hf_fmt(b[1], fabs(vs0), HF_PCT));
        else
            snprintf(c, sizeof c, "%s (analyze.csv, measured: the trace this run replays)", claim);
        hl_lead(f, mv, hf_fmt(b[0], k, HF_SHARE), c);
        word = mv;
    } else {
        char b[HF_LEN];
        hl_lead(f, bd.word, hf_fmt(b, bd.key, HF_SHARE), bd.claim);
        other = mv && *mv;
    }
    hl_facts(f, t, r);
    if (other) {
        const char *claim;
        double k = hl_an_key(an, "measured", mv, &claim);
        char b[HF_LEN];
        fputs("<p class=\"facts\">the measured trace, not this what-if (analyze.csv, measured): "
              "<b>",
              f);
        hf_escape(f, mv);
        fprintf(f, "</b>, %s %s</p>\n", hf_fmt(b, k, HF_SHARE), claim);
    }
    char b[4][HF_LEN];
    /* What the folder itself says would change it. */
    double vs = hl_num(t, r, "vs_measured_pct");
    hl_inferred(f, dir);
    if (model && !isnan(vs))
        fprintf(f,
                "<p class=\"change\"><b>What changed it:</b> this simulated run (%s GPU%s, %s "
                "workers per GPU) %s the epoch by %s against the measured run (%s simulated, %s "
                "measured; vs_measured_pct: the what-if's effect and the model's own error on "
                "this trace together, which stallsim validate measures).</p>\n",
                hl_get(t, r, "gpus"), strcmp(hl_get(t, r, "gpus"), "1") ? "s" : "",
                hl_get(t, r, "workers"), vs <= 0 ? "shortens" : "lengthens",
                hf_fmt(b[0], fabs(vs), HF_PCT), hf_fmt(b[1], hl_num(t, r, "epoch_time_s"), HF_TIME),
                hf_fmt(b[2], hl_num(t, r, "measured_epoch_time_s"), HF_TIME));
    if (t->nrows > 1) {
        double lo, hi;
        size_t ilo, ihi;
        hl_range(t, "epoch_time_s", &lo, &hi, &ilo, &ihi);
        fprintf(f,
                "<p class=\"change\"><b>Alignment:</b> the %zu fetch/start alignments give "
                "epoch times within %s of each other (%s %s/%s to %s %s/%s)%s.</p>\n",
                t->nrows, hf_fmt(b[0], 100 * (hi - lo) / hi, HF_PCT), hf_fmt(b[1], lo, HF_TIME),
                hl_get(t, ilo, "fetch_align"), hl_get(t, ilo, "start_align"),
                hf_fmt(b[2], hi, HF_TIME), hl_get(t, ihi, "fetch_align"),
                hl_get(t, ihi, "start_align"),
                (hi - lo) / hi < HL(HL_FLAT) ? ": the alignment policy is not what bounds this run"
                                             : "");
    }
    if (an)
        hl_straggler(f, an, "simulated");
    /* What would measure a change: a suggestion. */
    if (hf_has(dir, "effective.ini")) {
        const char *model_args =
            model ? "" : "--set scenario.mode=model --set align.fetch=none --set align.start=none";
        char args[256];
        char *plan = hl_out_beside(dir, "-plan"), *sweep = hl_out_beside(dir, "-sweep"),
             *anl = hl_out_beside(dir, "-analyze");
        if (strcmp(word, "data-bound") == 0) {
            hl_suggest(f,
                       "the fewest DataLoader workers per GPU that bring the stall share under "
                       "the target, and what binds beyond (closed-loop model)",
                       dir, "plan", model_args, plan);
            if (model) {
                int w = atoi(hl_get(t, r, "workers"));
                snprintf(args, sizeof args, "--sweep loader.workers=%d..%d", w > 0 ? w : 1,
                         w > 0 ? 4 * w : 16);
                hl_suggest(f, "or each worker count side by side", dir, "sweep", args, sweep);
            }
        } else if (strcmp(word, "compute-bound") == 0) {
            hl_suggest(f,
                       "loading keeps up, so only faster compute or more GPUs shorten the "
                       "epoch; how far weak scaling stays efficient",
                       dir, "plan", model_args, plan);
        } else if (!an) {
            /* A what-if's own ranks come from the run with --analyze;
             * analyze reads the measured trace (a new user's report: it
             * analysed the 2-rank trace for a 4-GPU what-if). */
            hl_suggest(f,
                       "where each rank's time goes (data, barrier, compute, start-up) and "
                       "which rank others wait for",
                       dir, model ? "run" : "analyze", model ? "--analyze" : "", anl);
        }
        free(plan);
        free(sweep);
        free(anl);
    }
    stall_table_free(t);
    stall_table_free(an);
    return 0;
}

static int hl_validate(FILE *f, const char *dir, stall_err *err)
{
    stall_table *t = NULL, *an = NULL;
    int rc = hl_read(dir, "validate.csv", &t, err);
    if (rc == 0)
        rc = hl_read(dir, "analyze.csv", &an, err);
    if (rc || !t || t->nrows == 0) {
        stall_table_free(t);
        stall_table_free(an);
        return rc;
    }
    double worst = -1, sworst = -1;
    size_t iw = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        double e = fabs(hl_num(t, r, "error_pct")), s = fabs(hl_num(t, r, "stall_error_pct"));
        if (e > worst) {
            worst = e;
            iw = r;
        }
        if (s > sworst)
            sworst = s;
    }
    const char *word = worst <= HL(HL_CLOSE)  ? "reproduced"
                       : worst <= HL(HL_WARN) ? "approximate"
                                              : "not reproduced";
    char b[4][HF_LEN], claim[600];
    snprintf(claim, sizeof claim,
             "largest difference between simulated and measured epoch time over %zu epoch%s "
             "(epoch %s: %s simulated, %s measured): the simulation %s the measured epoch",
             t->nrows, t->nrows == 1 ? "" : "s", hl_get(t, iw, "epoch"),
             hf_fmt(b[1], hl_num(t, iw, "simulated_s"), HF_TIME),
             hf_fmt(b[2], hl_num(t, iw, "measured_s"), HF_TIME),
             worst <= HL(HL_CLOSE)  ? "reproduces"
             : worst <= HL(HL_WARN) ? "approximates"
                                    : "does not reproduce");
    hl_lead(f, word, hf_fmt(b[0], worst, HF_PCT), claim);
    fprintf(f, "<p class=\"facts\">training stall per batch: largest difference %s</p>\n",
            hf_fmt(b[3], sworst, HF_PCT));
    hl_inferred(f, dir);
    if (worst > HL(HL_CLOSE))
        fprintf(f,
                "<p class=\"warn\"><b>Warning:</b> the simulated epoch is off by up to %s. "
                "What-ifs from this trace carry at least that error; compare them with the "
                "simulated, not the measured, baseline, and see docs/model.md section 7 "
                "(known limits).</p>\n",
                b[0]);
    if (an) {
        for (int i = 0; i < 2; i++) {
            const char *src = i ? "simulated" : "measured";
            const char *v = hl_an(an, src, "verdict");
            if (!v || !*v)
                continue;
            const char *claim2;
            double k = hl_an_key(an, src, v, &claim2);
            fprintf(f, "<p class=\"facts\">%s: <b>", src);
            hf_escape(f, v);
            fprintf(f, "</b>, %s %s (analyze.csv)</p>\n", hf_fmt(b[0], k, HF_SHARE), claim2);
        }
    } else if (hf_has(dir, "effective.ini")) {
        char *anl = hl_out_beside(dir, "-analyze");
        hl_suggest(f, "what bounds the measured run (data, barrier, compute, start-up)", dir,
                   "analyze", "", anl);
        free(anl);
    }
    stall_table_free(t);
    stall_table_free(an);
    return 0;
}

static int hl_analyze(FILE *f, const char *dir, stall_err *err)
{
    stall_table *an = NULL;
    int rc = hl_read(dir, "analyze.csv", &an, err);
    if (rc || !an)
        return rc;
    const char *src = hl_an(an, "measured", "verdict") ? "measured" : "simulated";
    if (hl_analyze_lead(f, an, src)) {
        char b[5][HF_LEN], ck[HF_LEN + 32] = "";
        if (hl_an(an, src, "share_checkpoint")) /* only where the source records them */
            snprintf(ck, sizeof ck, " &middot; checkpoint %s",
                     hf_fmt(b[4], hl_an_num(an, src, "share_checkpoint"), HF_SHARE));
        fprintf(f,
                "<p class=\"facts\">data %s &middot; barrier (straggler) %s &middot; compute "
                "%s &middot; start-up %s%s of the ranks' time (%s)</p>\n",
                hf_fmt(b[0], hl_an_num(an, src, "share_data"), HF_SHARE),
                hf_fmt(b[1], hl_an_num(an, src, "share_straggler"), HF_SHARE),
                hf_fmt(b[2], hl_an_num(an, src, "share_compute"), HF_SHARE),
                hf_fmt(b[3], hl_an_num(an, src, "share_startup"), HF_SHARE), ck, src);
        hl_straggler(f, an, src);
        const char *v = hl_an(an, src, "verdict");
        if (strcmp(v, "data-bound") == 0) {
            /* Its own -o: plan's default, results/<name>/, may be a run's. */
            char *out = hl_out_beside(dir, "-plan"), *w_out = stall_path_shell(out);
            fputs("<p class=\"suggest\"><b>Suggestion</b> (not run; no number here comes from "
                  "it): how many workers would remove the wait: an INI with <code>[scenario] "
                  "mode = model</code> on this trace, then <code>stallsim plan "
                  "CONFIG.ini -o ",
                  f);
            hf_escape(f, w_out);
            fputs("</code></p>\n", f);
            free(out);
            free(w_out);
        } else if (strcmp(v, "straggler-bound") == 0 && hl_an(an, src, "straggler_rank")) {
            fputs("<p class=\"suggest\"><b>Suggestion</b> (not run; no number here comes from "
                  "it): the straggler's iterations on a timeline, to open in ui.perfetto.dev: "
                  "<code>stallsim timeline TRACE.csv -o t.json --ranks ",
                  f);
            hf_escape(f, hl_an(an, src, "straggler_rank"));
            fputs("</code> (TRACE.csv: the trace analysed)</p>\n", f);
        }
    }
    stall_table_free(an);
    return 0;
}

int hl_headline(FILE *f, const char *dir, stall_result_kind k, stall_err *err)
{
    fputs("<section class=\"headline\">\n", f);
    int rc = 0;
    switch (k) {
    case STALL_RESULT_RUN:
        rc = hl_run(f, dir, err);
        break;
    case STALL_RESULT_VALIDATE:
        rc = hl_validate(f, dir, err);
        break;
    case STALL_RESULT_ANALYZE:
        rc = hl_analyze(f, dir, err);
        break;
    case STALL_RESULT_SWEEP:
        rc = hl_sweep(f, dir, err);
        break;
    case STALL_RESULT_PLAN:
        rc = hl_plan(f, dir, err);
        break;
    case STALL_RESULT_SEED:
        rc = hl_seed(f, dir, err);
        break;
    case STALL_RESULT_NONE:
        break;
    }
    fprintf(f,
            "<p class=\"rule\">How the headline is decided: a loss (waiting for data, at the "
            "barrier) of %.0f%% or more of the time names it (data-bound, straggler-bound; "
            "start-up-bound where a model run's wait for each epoch's first batch is that "
            "large and most of the stall); "
            "else compute-bound when the GPUs are busy %.0f%% or more, else balanced; a "
            "validation within %.0f%% reproduces, beyond %.0f%% does not; values within "
            "%.0f%% of each other coincide (docs/model.md).</p>\n</section>\n",
            100 * HL(HL_LOSS), 100 * HL(HL_BUSY), HL(HL_CLOSE), HL(HL_WARN), 100 * HL(HL_FLAT));
    return rc;
}

/* What the figures draw per alignment (run) or point (sweep), and the
 * summary column that tells whether their lines coincide. */
typedef struct hl_fig {
    const char *fig, *col, *what;
    hf_unit unit;
} hl_fig;

void hl_coincide(FILE *f, const char *dir, stall_result_kind k)
{
    static const hl_fig run[] = {
        {"epochs", "epoch_time_s", "epoch time", HF_TIME},
        {"gpu_util", "gpu_busy_share", "GPU busy share", HF_SHARE},
        {"cdf", "p50_iteration_s", "median iteration", HF_TIME},
        {"cdf", "p95_stall_s", "p95 stall", HF_TIME},
    };
    static const hl_fig sweep[] = {
        {"sweep", "@thr", "throughput", HF_NUM},
        {"sweep", "stall_share", "stall share", HF_SHARE},
    };
    if (k != STALL_RESULT_RUN && k != STALL_RESULT_SWEEP)
        return;
    const hl_fig *fig = k == STALL_RESULT_RUN ? run : sweep;
    int nfig = k == STALL_RESULT_RUN ? 4 : 2;
    stall_table *t = NULL;
    stall_err err = {0};
    if (hl_read(dir, k == STALL_RESULT_RUN ? "summary.csv" : "sweep.csv", &t, &err) || !t ||
        t->nrows < 2) {
        stall_table_free(t);
        return;
    }
    /* Figures whose every column coincides; cdf needs both of its own. */
    bool same[4], any = false;
    for (int i = 0; i < nfig; i++) {
        const char *col = strcmp(fig[i].col, "@thr") == 0 ? hl_thr_col(t) : fig[i].col;
        double lo, hi;
        size_t ilo, ihi;
        hl_range(t, col, &lo, &hi, &ilo, &ihi);
        same[i] = hi == lo || (hi > 0 && (hi - lo) / hi < HL(HL_FLAT));
        any |= same[i];
    }
    if (!any) {
        stall_table_free(t);
        return;
    }
    fprintf(f, "<p class=\"coincide\"><b>Where the curves coincide:</b> over the %zu %s,", t->nrows,
            k == STALL_RESULT_RUN ? "alignments" : "points");
    for (int pass = 0; pass < 2; pass++) {
        int n = 0;
        for (int i = 0; i < nfig; i++) {
            if (same[i] != (pass == 0))
                continue;
            const char *col = strcmp(fig[i].col, "@thr") == 0 ? hl_thr_col(t) : fig[i].col;
            double lo, hi;
            size_t ilo, ihi;
            hl_range(t, col, &lo, &hi, &ilo, &ihi);
            char b[3][HF_LEN];
            fprintf(f, "%s %s (<code>%s</code>) %s %s (%s to %s)",
                    n++    ? ";"
                    : pass ? " They differ elsewhere:"
                           : "",
                    fig[i].what, fig[i].fig, pass ? "varies by" : "differs by only",
                    hf_fmt(b[0], hi > 0 ? 100 * (hi - lo) / hi : 0, HF_PCT),
                    hf_fmt(b[1], lo, fig[i].unit), hf_fmt(b[2], hi, fig[i].unit));
        }
        if (pass == 0)
            fputs(": there the lines lie on top of each other and colours differ by no more "
                  "than that; the table below tells them apart.",
                  f);
        else if (n)
            fputs(".", f);
    }
    fputs("</p>\n", f);
    stall_table_free(t);
}
