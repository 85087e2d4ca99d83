/*
 * htmlheadline.c - the headline of report.html (htmlheadline.h): the
 * verdict, the number that matters and what would change it, from the
 * folder's own files. A change is quoted only where the folder measured it
 * (a what-if's vs_measured_pct, a sweep's points, a plan's answers);
 * otherwise the headline suggests the command that would measure it,
 * marked as a suggestion, and never invents a number.
 */
#include "htmlheadline.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "htmlfmt.h"
#include "stall/io.h"
#include "stall/table.h"

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
enum { HL_LOSS, HL_BUSY, HL_CLOSE, HL_WARN, HL_FLAT, HL_N };
static const struct {
    const char *name;
    double value;
} hl_rule[HL_N] = {
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
#define HL(i) (hl_rule[i].value)

double hl_flat(void)
{
    return HL(HL_FLAT);
}

/* ---- reading ---- */

/* Reads dir/name into *t; a missing file is no error (*t NULL). */
static int hl_read(const char *dir, const char *name, stall_table **t, stall_err *err)
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

static double hl_num(const stall_table *t, size_t r, const char *col)
{
    return stall_table_num(t, r, stall_table_col(t, col));
}

static const char *hl_get(const stall_table *t, size_t r, const char *col)
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
    const char *v = hl_an(t, source, metric);
    char *end = NULL;
    double x = v && *v ? strtod(v, &end) : NAN;
    return end && *end == '\0' ? x : NAN;
}

/* ---- writing ---- */

/* The lead line: verdict badge, the key number, the claim (HTML). */
static void hl_lead(FILE *f, const char *verdict, const char *key, const char *claim)
{
    const char *cls = strstr(verdict, "bound") || strstr(verdict, "not ") ? "bad"
                      : strcmp(verdict, "approximate") == 0               ? "warn"
                                                                          : "ok";
    fprintf(f, "<p class=\"lead\"><span class=\"verdict %s\">", cls);
    hf_escape(f, verdict);
    fprintf(f, "</span> <b class=\"key\">%s</b> %s</p>\n", key, claim);
}

/* A suggested command: dir/effective.ini then extra (HTML). */
static void hl_suggest(FILE *f, const char *why, const char *dir, const char *cmd, const char *args)
{
    fputs("<p class=\"suggest\"><b>Suggestion</b> (not run; no number here comes from it): ", f);
    fputs(why, f);
    fputs(": <code>stallsim ", f);
    hf_escape(f, cmd);
    fputc(' ', f);
    hf_escape(f, dir);
    fputs("/effective.ini", f);
    if (args && *args) {
        fputc(' ', f);
        hf_escape(f, args);
    }
    fputs("</code></p>\n", f);
}

/* The bound of a summary row (the rule above). */
typedef struct hl_bound {
    const char *word;
    double key; /* a share */
    const char *claim;
} hl_bound;

static hl_bound hl_bound_of(double stall, double barrier, double busy)
{
    double s = isnan(stall) ? 0 : stall, w = isnan(barrier) ? 0 : barrier;
    if ((s >= w ? s : w) >= HL(HL_LOSS))
        return s >= w ? (hl_bound){"data-bound", s,
                                   "of the time the training loop waits for data (stall share)"}
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

static double hl_barrier(const stall_table *t, size_t r)
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
         "of the ranks' time waits at the barrier for a slower-computing rank"},
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
    fprintf(f,
            " makes the others wait most; when last at the barrier it was late by %s of "
            "longer compute and %s of longer stalls in total (%s).</p>\n",
            hf_fmt(b1, co, HF_TIME), hf_fmt(b2, in, HF_TIME),
            co > in ? "a compute straggler: look at that rank's GPU, host or data shard, not "
                      "the loader"
                    : "an input straggler: its loading is slower");
}

/* ---- per kind ---- */

static size_t hl_ref_row(const stall_table *t)
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
            "<p class=\"facts\">epoch %s &middot; %s %s &middot; stall share %s &middot; GPU "
            "busy %s &middot; barrier wait %s of an iteration",
            hf_fmt(b[0], hl_num(t, r, "epoch_time_s"), HF_TIME), hf_fmt(b[1], thr, HF_NUM), unit,
            hf_fmt(b[2], hl_num(t, r, "stall_share"), HF_SHARE),
            hf_fmt(b[3], hl_num(t, r, "gpu_busy_share"), HF_SHARE),
            hf_fmt(b[4], hl_barrier(t, r), HF_SHARE));
    if (t->nrows > 1)
        fprintf(f, " (alignment %s/%s)", hl_get(t, r, "fetch_align"), hl_get(t, r, "start_align"));
    fputs("</p>\n", f);
}

/* min and max of a column over the rows, and where they are. */
static void hl_range(const stall_table *t, const char *col, double *lo, double *hi, size_t *ilo,
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
    hl_bound bd =
        hl_bound_of(hl_num(t, r, "stall_share"), hl_barrier(t, r), hl_num(t, r, "gpu_busy_share"));
    const char *word = bd.word;
    if (an && hl_analyze_lead(f, an, "simulated")) {
        word = hl_an(an, "simulated", "verdict");
    } else {
        char b[HF_LEN];
        hl_lead(f, bd.word, hf_fmt(b, bd.key, HF_SHARE), bd.claim);
    }
    hl_facts(f, t, r);
    char b[4][HF_LEN];
    /* What the folder itself says would change it. */
    double vs = hl_num(t, r, "vs_measured_pct");
    if (model && !isnan(vs))
        fprintf(f,
                "<p class=\"change\"><b>What changed it:</b> this what-if (%s GPU%s, %s "
                "workers per GPU) %s the epoch by %s against the measured run (%s simulated, %s "
                "measured; vs_measured_pct).</p>\n",
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
        if (strcmp(word, "data-bound") == 0) {
            hl_suggest(f,
                       "the fewest DataLoader workers per GPU that bring the stall share under "
                       "the target, and what binds beyond (closed-loop model)",
                       dir, "plan", model_args);
            if (model) {
                int w = atoi(hl_get(t, r, "workers"));
                snprintf(args, sizeof args, "--sweep loader.workers=%d..%d", w > 0 ? w : 1,
                         w > 0 ? 4 * w : 16);
                hl_suggest(f, "or each worker count side by side", dir, "sweep", args);
            }
        } else if (strcmp(word, "compute-bound") == 0) {
            hl_suggest(f,
                       "loading keeps up, so only faster compute or more GPUs shorten the "
                       "epoch; how far weak scaling stays efficient",
                       dir, "plan", model_args);
        } else if (!an) {
            hl_suggest(f,
                       "where each rank's time goes (data, barrier, compute, start-up) and "
                       "which rank others wait for",
                       dir, "analyze", "");
        }
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
        hl_suggest(f, "what bounds the measured run (data, barrier, compute, start-up)", dir,
                   "analyze", "");
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
        char b[4][HF_LEN];
        fprintf(f,
                "<p class=\"facts\">data %s &middot; barrier (straggler) %s &middot; compute "
                "%s &middot; start-up %s of the ranks' time (%s)</p>\n",
                hf_fmt(b[0], hl_an_num(an, src, "share_data"), HF_SHARE),
                hf_fmt(b[1], hl_an_num(an, src, "share_straggler"), HF_SHARE),
                hf_fmt(b[2], hl_an_num(an, src, "share_compute"), HF_SHARE),
                hf_fmt(b[3], hl_an_num(an, src, "share_startup"), HF_SHARE), src);
        hl_straggler(f, an, src);
        const char *v = hl_an(an, src, "verdict");
        if (strcmp(v, "data-bound") == 0)
            fputs("<p class=\"suggest\"><b>Suggestion</b> (not run; no number here comes from "
                  "it): how many workers would remove the wait: an INI with <code>[scenario] "
                  "mode = model</code> on this trace, then <code>stallsim plan "
                  "CONFIG.ini</code></p>\n",
                  f);
        else if (strcmp(v, "straggler-bound") == 0 && hl_an(an, src, "straggler_rank")) {
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

/* The throughput column of a sweep: samples/s when filled, else batches/s. */
static const char *hl_thr_col(const stall_table *t)
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

static int hl_sweep(FILE *f, const char *dir, stall_err *err)
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
    hl_bound bd = hl_bound_of(hl_num(t, ihi, "stall_share"), hl_barrier(t, ihi),
                              hl_num(t, ihi, "gpu_busy_share"));
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
    hl_lead(f, flat ? "no effect" : "best point", b[0], claim);
    free(claim);
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
    if (!flat && strcmp(bd.word, "data-bound") == 0) {
        char pd[64];
        snprintf(pd, sizeof pd, "point-%06d", atoi(hl_get(t, ihi, "point")));
        char *sub = stall_path_join(dir, pd);
        if (hf_has(sub, "effective.ini"))
            hl_suggest(f, "the best point still waits for data; what would remove the rest", sub,
                       "plan", "");
        free(sub);
    }
    stall_table_free(t);
    return 0;
}

/* A [plan] key of effective.ini ("key = value"), or NAN. */
static double hl_plan_key(const char *dir, const char *key)
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

static int hl_plan(FILE *f, const char *dir, stall_err *err)
{
    stall_table *p = NULL, *s = NULL;
    int rc = hl_read(dir, "plan.csv", &p, err);
    if (rc == 0)
        rc = hl_read(dir, "scaling.csv", &s, err);
    if (rc || !p) {
        stall_table_free(p);
        stall_table_free(s);
        return rc;
    }
    double v[4] = {NAN, NAN, NAN, NAN};
    const char *bind[4] = {"", "", "", ""};
    static const char *const q[4] = {"min_workers_per_gpu", "max_efficient_gpus",
                                     "storage_bandwidth_mb_s", "cores_per_node"};
    for (size_t r = 0; r < p->nrows; r++)
        for (int i = 0; i < 4; i++)
            if (strcmp(hl_get(p, r, "quantity"), q[i]) == 0) {
                v[i] = hl_num(p, r, "value");
                bind[i] = hl_get(p, r, "binding");
            }
    double target = hl_plan_key(dir, "stall_target"), eff = hl_plan_key(dir, "efficiency");
    double stall1 = s && s->nrows ? hl_num(s, 0, "stall_share") : NAN;
    char b[6][HF_LEN], claim[700];
    const char *word = strcmp(bind[0], "not_met") == 0 ? "data-bound"
                       : strcmp(bind[2], "binds") == 0 ? "storage-bound"
                       : strcmp(bind[3], "binds") == 0 ? "host-cores-bound"
                                                       : "nothing binds";
    if (strcmp(bind[0], "not_met") == 0) {
        snprintf(claim, sizeof claim,
                 "stall share remains with %s workers per GPU (the most searched; target %s; "
                 "scaling.csv at %s GPU): no worker count hides data loading here",
                 hf_fmt(b[1], v[0], HF_INT), hf_fmt(b[2], target, HF_SHARE),
                 s && s->nrows ? hl_get(s, 0, "gpus") : "?");
        hl_lead(f, word, hf_fmt(b[0], stall1, HF_SHARE), claim);
    } else {
        snprintf(claim, sizeof claim,
                 "workers per GPU are the fewest that bring the stall share to the target %s "
                 "or below (%s at %s GPU, scaling.csv)",
                 hf_fmt(b[1], target, HF_SHARE), hf_fmt(b[2], stall1, HF_SHARE),
                 s && s->nrows ? hl_get(s, 0, "gpus") : "?");
        hl_lead(f, word, hf_fmt(b[0], v[0], HF_INT), claim);
    }
    fprintf(f,
            "<p class=\"facts\">weak scaling stays at efficiency %s or more up to <b>%s</b> "
            "GPUs (limit: ",
            hf_fmt(b[0], eff, HF_SHARE), hf_fmt(b[1], v[1], HF_INT));
    hf_escape(f, strcmp(bind[1], "none") == 0 ? "none up to max_gpus" : bind[1]);
    fprintf(f, ") &middot; host cores per node: %s (", hf_fmt(b[2], v[3], HF_INT));
    hf_escape(f, bind[3]);
    fputs(") &middot; storage bandwidth per node: ", f);
    if (isnan(v[2]))
        hf_escape(f, bind[2]);
    else
        fprintf(f, "%s MB/s (%s)", hf_fmt(b[3], v[2], HF_NUM), bind[2]);
    fputs("</p>\n", f);
    if (strcmp(bind[3], "binds") == 0)
        fprintf(f,
                "<p class=\"change\"><b>What would change it:</b> %s host cores per node "
                "(cores_per_node, plan.csv) keep throughput within 1%% of unlimited cores.</p>\n",
                hf_fmt(b[0], v[3], HF_INT));
    stall_table_free(p);
    stall_table_free(s);
    return 0;
}

/* The leading number of a notebook cell "mean±std" (total_summary.csv). */
static double hl_seed_mean(const stall_table *t, size_t r, const char *col)
{
    const char *v = hl_get(t, r, col);
    char *end = NULL;
    double x = *v ? strtod(v, &end) : NAN;
    return end && end != v ? x : NAN;
}

/* mode = seed: the notebook's best alignment by mean stall, and what the
 * event replay of the same trace says of that alignment. */
static int hl_seed(FILE *f, const char *dir, stall_err *err)
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
            "barrier) of %.0f%% or more of the time names it (data-bound, straggler-bound); "
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
