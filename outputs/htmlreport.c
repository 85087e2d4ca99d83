/*
 * htmlreport.c - one self-contained report.html of a result folder
 * (stall/htmlreport.h).
 *
 * The page is built in memory and written atomically, in the order a
 * reader needs it: the headline (htmlheadline.c: what bounds the run, the
 * number that matters, what would change it), the figures, then tables of
 * at most HTML_MAX_COLS key columns (every column is in the CSV beside
 * it), so that they fit the page at 1000 px without scrolling sideways (the
 * per-rank table's short numbers HTML_WIDE_COLS, so that its parts add up).
 * Every number is written by hf_fmt (htmlfmt.c): 4 significant digits,
 * percentages with one decimal, times with units. Each SVG is
 * inlined after its XML prolog and DOCTYPE, with its ids and references to
 * them prefixed by the figure's name, because several gnuplot SVGs in one
 * page define the same ids. Time and memory O(size of the result files).
 */
#include "stall/htmlreport.h"

#include "htmlfmt.h"
#include "htmlheadline.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"
#include "stall/plot.h"
#include "stall/table.h"

#define HTML_MAX_ROWS 200
/* Columns per table: 8 fit the page at 1000 px without scrolling sideways;
 * the per-rank table takes up to HTML_WIDE_COLS of short numbers, so that its
 * parts add up to its total. */
#define HTML_MAX_COLS 8
#define HTML_WIDE_COLS 12

void stall_html_escape(FILE *f, const char *s)
{
    hf_escape(f, s);
}

/* A column of a table: the CSV column (or "@align": fetch_align/start_align
 * in one cell; "@keys": a sweep's swept keys, key=value a line each), its label, and how much it
 * matters (0 most; the least important go first when a table has more than HTML_MAX_COLS). */
typedef struct html_col {
    const char *col, *label;
    int prio;
} html_col;

typedef struct html_pick {
    int n;
    int col[HTML_WIDE_COLS]; /* CSV column index, -1 for @align */
    const char *label[HTML_WIDE_COLS];
    const char *name[HTML_WIDE_COLS]; /* the CSV column's name (title) */
    hf_unit unit[HTML_WIDE_COLS];
    int target_col; /* the picked column whose values meet target or miss it (-1: none) */
    double target;  /* plan's [plan] efficiency, for scaling.csv's efficiency */
} html_pick;

/* Whether column c has a value in some row. */
static bool html_filled(const stall_table *t, int c)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (*stall_table_get(t, r, c))
            return true;
    return false;
}

/* The unit of column c: HF_INT when every value is an integer text. */
static hf_unit html_unit(const stall_table *t, int c)
{
    bool integer = true;
    for (size_t r = 0; r < t->nrows && integer; r++) {
        const char *s = stall_table_get(t, r, c);
        if (*s && (isnan(stall_table_num_probe(t, r, c)) || strpbrk(s, ".eE")))
            integer = false;
    }
    return integer ? HF_INT : hf_unit_of(t->header[c]);
}

/* Picks the columns of spec present (and not all empty) in t, dropping the
 * least important beyond HTML_MAX_COLS, in spec order. "@throughput" is
 * samples/s where the folder knows the samples per batch, else batches/s
 * (the notebook's trace without [report] samples): the table then shows
 * the throughput its headline names, as the headline does. */
static void html_pick_cols(const stall_table *t, const html_col *spec, int nspec, int max,
                           html_pick *p)
{
    int idx[64], col[64], ns = 0;
    const char *label[64];
    bool keep[64];
    int fa = stall_table_col(t, "fetch_align"), sa = stall_table_col(t, "start_align");
    for (int i = 0; i < nspec && ns < 64; i++) {
        int c = -2;
        label[ns] = spec[i].label;
        if (strcmp(spec[i].col, "@throughput") == 0) {
            int cs = stall_table_col(t, "throughput_samples_s"),
                cb = stall_table_col(t, "throughput_batches_s");
            if (cs >= 0 && html_filled(t, cs)) {
                c = cs;
                label[ns] = "samples/s";
            } else if (cb >= 0 && html_filled(t, cb)) {
                c = cb;
                label[ns] = "batches/s";
            }
        } else if (strcmp(spec[i].col, "@align") == 0) {
            bool differ = false;
            for (size_t r = 0; fa >= 0 && sa >= 0 && r < t->nrows; r++)
                differ |= strcmp(stall_table_get(t, r, fa), "none") != 0 ||
                          strcmp(stall_table_get(t, r, sa), "none") != 0;
            c = differ ? -1 : -2;
        } else if (strcmp(spec[i].col, "@keys") == 0) {
            c = -3;
        } else if ((c = stall_table_col(t, spec[i].col)) < 0 || !html_filled(t, c)) {
            c = -2;
        }
        if (c == -2)
            continue;
        keep[ns] = true;
        col[ns] = c;
        idx[ns++] = i;
    }
    int n = ns;
    for (int pr = 9; pr > 0 && n > max; pr--)
        for (int j = ns - 1; j >= 0 && n > max; j--)
            if (keep[j] && spec[idx[j]].prio == pr) {
                keep[j] = false;
                n--;
            }
    p->n = 0;
    p->target_col = -1;
    p->target = NAN;
    for (int j = 0; j < ns && p->n < max; j++) {
        if (!keep[j])
            continue;
        int c = col[j];
        p->col[p->n] = c;
        p->label[p->n] = label[j];
        p->name[p->n] = c >= 0    ? t->header[c]
                        : c == -1 ? "fetch_align, start_align"
                                  : "the swept section.key columns";
        p->unit[p->n] = c >= 0 ? html_unit(t, c) : HF_NUM;
        p->n++;
    }
}

/* One table: heading, source file, the picked columns, at most
 * HTML_MAX_ROWS rows. */
static void html_table_of(FILE *f, const stall_table *t, const char *file, const html_pick *p,
                          const char *heading)
{
    fputs("<h3>", f);
    hf_escape(f, heading);
    fputs("</h3>\n<p class=\"src\">from <code>", f);
    hf_escape(f, file);
    fprintf(f, "</code>%s</p>\n<div class=\"scroll\"><table>\n<tr>",
            p->n < t->ncols ? ": the key columns (hover a heading for its CSV name); all "
                              "columns are in the file"
                            : "");
    for (int i = 0; i < p->n; i++) {
        fputs("<th title=\"", f);
        hf_escape(f, p->name[i]);
        fputs("\">", f);
        hf_escape(f, p->label[i]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    int fa = stall_table_col(t, "fetch_align"), sa = stall_table_col(t, "start_align");
    size_t rows = t->nrows < HTML_MAX_ROWS ? t->nrows : HTML_MAX_ROWS;
    /* A column of numbers: a cell in it that is not one (a hand edit:
     * garbage, inf) is refused (stall_table_num keeps it), not shown. */
    bool numeric[HTML_WIDE_COLS] = {false};
    for (int i = 0; i < p->n; i++)
        for (size_t r = 0; p->col[i] >= 0 && r < t->nrows && !numeric[i]; r++)
            numeric[i] = !isnan(stall_table_num_probe(t, r, p->col[i]));
    for (size_t r = 0; r < rows; r++) {
        fputs("<tr>", f);
        for (int i = 0; i < p->n; i++) {
            int c = p->col[i];
            if (c == -3) {
                fputs("<td>", f);
                for (int k = 1; k < t->ncols && strchr(t->header[k], '.'); k++) {
                    fputs(k > 1 ? "<br>" : "", f);
                    hf_escape(f, t->header[k]);
                    fputc('=', f);
                    hf_escape(f, stall_table_get(t, r, k));
                }
                fputs("</td>", f);
                continue;
            }
            if (c < 0) {
                fputs("<td>", f);
                hf_escape(f, stall_table_get(t, r, fa));
                fputc('/', f);
                hf_escape(f, stall_table_get(t, r, sa));
                fputs("</td>", f);
                continue;
            }
            const char *s = stall_table_get(t, r, c);
            double v = numeric[i] ? stall_table_num(t, r, c) : stall_table_num_probe(t, r, c);
            if (isnan(v) && *s && strcmp(s, "nan") != 0) {
                fputs("<td>", f);
                hf_escape(f, s);
                fputs("</td>", f);
            } else {
                /* A column of mixed answers (plan.csv's value: 8 workers,
                 * 114.7 MB/s) keeps each integer an integer, as the CSV
                 * and the terminal write it. */
                hf_unit u = p->unit[i] == HF_NUM && *s && !strpbrk(s, ".eE") && fabs(v) < 1e4
                                ? HF_INT
                                : p->unit[i];
                char b[HF_LEN];
                fprintf(f, "<td class=\"n\">%s</td>",
                        i == p->target_col && u == HF_SHARE ? hf_share_below(b, v, p->target)
                                                            : hf_fmt(b, v, u));
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (rows < t->nrows)
        fprintf(f, "<p class=\"note\">the first %zu of %zu rows</p>\n", rows, t->nrows);
}

static int html_table_max(FILE *f, const char *dir, const char *file, const html_col *spec,
                          int nspec, int max, const char *heading, stall_err *err)
{
    char *path = stall_path_join(dir, file);
    stall_table *t = NULL;
    int rc = stall_table_read(path, &t, err);
    free(path);
    if (rc)
        return rc;
    html_pick p;
    html_pick_cols(t, spec, nspec, max, &p);
    /* A plan's scaling.csv holds the first count that misses the
     * efficiency (plan_gpus.c): 0.7996 beside 0.8 does not read "80.0%". */
    for (int i = 0; strcmp(file, "scaling.csv") == 0 && i < p.n; i++)
        if (strcmp(p.name[i], "efficiency") == 0) {
            p.target_col = i;
            p.target = hl_plan_key(dir, "efficiency");
        }
    html_table_of(f, t, file, &p, heading);
    stall_table_free(t);
    return 0;
}

static int html_table(FILE *f, const char *dir, const char *file, const html_col *spec, int nspec,
                      const char *heading, stall_err *err)
{
    return html_table_max(f, dir, file, spec, nspec, HTML_MAX_COLS, heading, err);
}

#define NSPEC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const html_col run_spec[] = {
    {"@align", "fetch/start", 1},
    {"gpus", "GPUs", 2},
    {"workers", "workers", 2},
    {"epoch_time_s", "epoch", 0},
    {"vs_measured_pct", "vs measured", 1},
    {"@throughput", "throughput", 0},
    {"mean_stall_s", "mean stall after warm-up", 2},
    {"p95_stall_s", "p95 stall", 4},
    {"stall_share", "stall share", 0},
    {"gpu_busy_share", "GPU busy", 0},
    {"mean_barrier_wait_s", "barrier wait", 5},
};

/* The sweep: point, the swept keys, the key metrics. */
static int html_sweep_table(FILE *f, const char *dir, stall_err *err)
{
    char *path = stall_path_join(dir, "sweep.csv");
    stall_table *t = NULL;
    int rc = stall_table_read(path, &t, err);
    free(path);
    if (rc)
        return rc;
    static const html_col metrics[] = {
        {"@throughput", "throughput", 0},      {"epoch_time_s", "epoch", 0},
        {"vs_measured_pct", "vs measured", 2}, {"stall_share", "stall share", 0},
        {"gpu_busy_share", "GPU busy", 1},     {"mean_stall_s", "mean stall after warm-up", 3},
    };
    html_col spec[64];
    int n = 0;
    spec[n++] = (html_col){"point", "point", 0};
    int nkeys = 0;
    while (1 + nkeys < t->ncols && strchr(t->header[1 + nkeys], '.'))
        nkeys++;
    /* Up to 3 swept keys get a column each; more share one, a line each. */
    if (nkeys > 3)
        spec[n++] = (html_col){"@keys", "values", 0};
    for (int c = 1; nkeys <= 3 && c <= nkeys; c++)
        spec[n++] = (html_col){t->header[c], t->header[c], 0};
    for (int i = 0; i < NSPEC(metrics); i++)
        spec[n++] = metrics[i];
    html_pick p;
    html_pick_cols(t, spec, n, HTML_MAX_COLS, &p);
    html_table_of(f, t, "sweep.csv", &p, "Sweep: one row per point");
    stall_table_free(t);
    return 0;
}

/* analyze.csv's shares, one row per source. */
static int html_shares_table(FILE *f, const char *dir, stall_err *err)
{
    char *path = stall_path_join(dir, "analyze.csv");
    stall_table *t = NULL;
    int rc = stall_table_read(path, &t, err);
    free(path);
    if (rc)
        return rc;
    int cs = stall_table_col(t, "source"), cm = stall_table_col(t, "metric"),
        cv = stall_table_col(t, "value");
    static const char *const metric[] = {"verdict",       "share_data",    "share_straggler",
                                         "share_compute", "share_startup", "share_checkpoint",
                                         "straggler_rank"};
    static const char *const label[] = {"verdict",  "data",       "barrier (straggler)", "compute",
                                        "start-up", "checkpoint", "straggler rank"};
    /* The checkpoint share only where a source records checkpoints. */
    bool ck = false;
    for (size_t q = 0; cm >= 0 && q < t->nrows; q++)
        ck |= strcmp(stall_table_get(t, q, cm), "share_checkpoint") == 0;
    if (cs >= 0 && cm >= 0 && cv >= 0) {
        fputs("<h3>Where the ranks' time went</h3>\n<p class=\"src\">from <code>analyze.csv"
              "</code> (shares of the sum over ranks of their time)</p>\n"
              "<div class=\"scroll\"><table>\n<tr><th>source</th>",
              f);
        for (int i = 0; i < 7; i++)
            if (i != 5 || ck)
                fprintf(f, "<th title=\"%s\">%s</th>", metric[i], label[i]);
        fputs("</tr>\n", f);
        for (size_t r = 0; r < t->nrows; r++) {
            if (strcmp(stall_table_get(t, r, cm), "verdict") != 0)
                continue;
            const char *src = stall_table_get(t, r, cs);
            fputs("<tr><td>", f);
            hf_escape(f, src);
            fputs("</td>", f);
            for (int i = 0; i < 7; i++) {
                if (i == 5 && !ck)
                    continue;
                const char *v = "";
                for (size_t q = 0; q < t->nrows; q++)
                    if (strcmp(stall_table_get(t, q, cs), src) == 0 &&
                        strcmp(stall_table_get(t, q, cm), metric[i]) == 0)
                        v = stall_table_get(t, q, cv);
                char b[HF_LEN];
                if (i == 0 || !*v) {
                    fputs(i ? "<td class=\"n\">" : "<td>", f);
                    hf_escape(f, *v ? v : "\xe2\x80\x93");
                } else {
                    fprintf(f, "<td class=\"n\">%s",
                            hf_fmt(b, strtod(v, NULL), i == 6 ? HF_INT : HF_SHARE));
                }
                fputs("</td>", f);
            }
            fputs("</tr>\n", f);
        }
        fputs("</table></div>\n", f);
    }
    stall_table_free(t);
    return 0;
}

static int html_tables(FILE *f, const char *dir, stall_result_kind kind, stall_err *err)
{
    static const html_col validate_spec[] = {
        {"epoch", "epoch", 0},
        {"measured_s", "measured", 0},
        {"simulated_s", "simulated", 0},
        {"error_pct", "error", 0},
        {"measured_stall_s", "measured mean stall (all batches)", 1},
        {"simulated_stall_s", "simulated mean stall (all batches)", 1},
        {"stall_error_pct", "stall error", 1},
    };
    static const html_col plan_spec[] = {
        {"quantity", "question", 0},
        {"value", "answer", 0},
        {"binding", "binding", 0},
        {"simulations", "simulations", 1},
    };
    static const html_col scaling_spec[] = {
        {"gpus", "GPUs", 0},
        {"throughput_samples_s", "samples/s", 0},
        {"throughput_batches_s", "batches/s", 1},
        {"speedup", "speedup", 0},
        {"efficiency", "efficiency", 0},
        {"stall_share", "stall share", 0},
    };
    static const html_col rank_spec[] = {
        {"source", "source", 0},
        {"rank", "rank", 0},
        {"total_s", "total", 0},
        {"startup_s", "start-up", 3},
        {"data_s", "data", 0},
        {"handover_s", "hand-over", 2},
        {"compute_s", "compute", 0},
        {"barrier_s", "barrier", 0},
        {"post_s", "post", 2},
        {"checkpoint_s", "checkpoint", 1},
        {"last_iterations", "last at barrier", 1},
        {"caused_wait_s", "caused wait", 1},
    };
    static const html_col slow_spec[] = {
        {"source", "source", 0},         {"epoch", "epoch", 0},   {"batch", "batch", 0},
        {"iteration_s", "iteration", 0}, {"rank", "rank", 0},     {"worker", "worker", 0},
        {"stall_s", "stall", 0},         {"fetch_s", "fetch", 0},
    };
    int rc = 0;
    fputs("<h2>Tables</h2>\n", f);
    switch (kind) {
    case STALL_RESULT_RUN:
        rc = html_table(f, dir, "summary.csv", run_spec, NSPEC(run_spec),
                        "Summary: one row per alignment", err);
        break;
    case STALL_RESULT_VALIDATE:
        rc = html_table(f, dir, "validate.csv", validate_spec, NSPEC(validate_spec),
                        "Simulated vs measured, per epoch", err);
        break;
    case STALL_RESULT_SWEEP:
        rc = html_sweep_table(f, dir, err);
        break;
    case STALL_RESULT_PLAN:
        if (hf_has(dir, "plan.csv"))
            rc = html_table(f, dir, "plan.csv", plan_spec, NSPEC(plan_spec), "Plan: the answers",
                            err);
        if (rc == 0)
            rc = html_table(f, dir, "scaling.csv", scaling_spec, NSPEC(scaling_spec),
                            "Weak scaling", err);
        break;
    case STALL_RESULT_SEED:
        rc = html_table(f, dir, "replay_summary.csv", run_spec, NSPEC(run_spec),
                        "Event replay of the same trace: one row per alignment (the notebook's "
                        "own numbers are in total_summary.csv)",
                        err);
        break;
    case STALL_RESULT_ANALYZE:
    case STALL_RESULT_NONE:
        break;
    }
    if (rc == 0 && hf_has(dir, "analyze.csv"))
        rc = html_shares_table(f, dir, err);
    if (rc == 0 && hf_has(dir, "per_rank.csv"))
        rc = html_table_max(f, dir, "per_rank.csv", rank_spec, NSPEC(rank_spec), HTML_WIDE_COLS,
                            "Where each rank's time went (seconds over all epochs; start-up, "
                            "data, hand-over, compute, barrier, post and checkpoint add up to "
                            "the total)",
                            err);
    if (rc == 0 && kind == STALL_RESULT_ANALYZE && hf_has(dir, "slowest.csv"))
        rc = html_table(f, dir, "slowest.csv", slow_spec, NSPEC(slow_spec),
                        "The slowest iterations", err);
    return rc;
}

/* Writes the <svg> element of svg text with ids prefixed by pre. */
static void html_svg(FILE *f, const char *svg, const char *pre)
{
    const char *s = strstr(svg, "<svg");
    if (!s)
        return;
    static const char *const pats[] = {"id='", "id=\"", "href='#", "href=\"#", "url(#"};
    while (*s) {
        int hit = -1;
        for (int i = 0; i < 5 && hit < 0; i++)
            if (strncmp(s, pats[i], strlen(pats[i])) == 0 &&
                (i >= 2 || s == svg || s[-1] == ' ' || s[-1] == '\t' || s[-1] == '\n'))
                hit = i;
        if (hit >= 0) {
            fputs(pats[hit], f);
            fprintf(f, "%s-", pre);
            s += strlen(pats[hit]);
        } else {
            fputc(*s++, f);
        }
    }
}

static const char html_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;"
    "max-width:1150px;padding:0 1em;color:#222;line-height:1.45}\n"
    "h1{font-size:1.6em;margin-bottom:0.2em}h2{font-size:1.25em;margin-top:1.8em;"
    "border-bottom:1px solid #ddd}h3{font-size:1.05em;margin:1.4em 0 0.2em}\n"
    ".meta,.src,.note{color:#666;font-size:0.9em;margin:0.2em 0}\n"
    ".headline{background:#f5f7fa;border-left:5px solid #0072B2;padding:0.7em 1.1em;"
    "margin:1.2em 0}\n"
    ".headline p{margin:0.35em 0}.lead{font-size:1.3em;line-height:1.4}\n"
    ".verdict{display:inline-block;padding:0.05em 0.5em;border-radius:0.3em;color:#fff;"
    "font-weight:600;margin-right:0.3em}\n"
    ".verdict.bad{background:#b3471b}.verdict.warn{background:#a66f00}"
    ".verdict.ok{background:#2b7a3d}\n"
    ".key{font-size:1.15em}.facts{color:#333}.change{color:#114b7a}\n"
    ".suggest{color:#555;font-size:0.95em}.rule{color:#777;font-size:0.8em}\n"
    ".warn{background:#fff3cd;border-left:4px solid #E69F00;padding:0.4em 0.7em}\n"
    ".coincide{background:#eef6ee;border-left:4px solid #009E73;padding:0.4em 0.7em}\n"
    "code{overflow-wrap:anywhere}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:0.85em}\n"
    "th,td{border:1px solid #ddd;padding:0.25em 0.6em;text-align:left}\n"
    "th{background:#f3f5f8;vertical-align:bottom}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr:nth-child(even) td{background:#fafafa}\n"
    "figure{margin:1.5em 0}figure svg{max-width:100%;height:auto;display:block}\n"
    "figcaption{color:#444;font-size:0.9em;margin-top:0.3em}\n"
    "ul.notes li{color:#8a4b00}\n";

typedef struct html_page {
    char *text;
    size_t len;
} html_page;

static int html_fill(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const html_page *p = ctx;
    fwrite(p->text, 1, p->len, f);
    return 0;
}

int stall_html_report(const char *dir, FILE *term, stall_err *err)
{
    stall_plot_result *res = stall_xcalloc(1, sizeof *res);
    stall_plot_opts po = {.term = term};
    int rc = stall_plot(dir, &po, res, err);
    if (rc) {
        free(res);
        return rc;
    }
    html_page page = {0};
    FILE *f = open_memstream(&page.text, &page.len);
    if (!f)
        abort();
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>stallsim report: ",
          f);
    stall_html_escape(f, dir);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>stallsim report</h1>\n",
            html_css);
    fputs("<p class=\"meta\">result folder <code>", f);
    stall_html_escape(f, dir);
    fprintf(f, "</code> (%s), stallsim %s. What every number means: docs/model.md.</p>\n",
            stall_result_kind_name(res->kind), stall_version());
    rc = hl_headline(f, dir, res->kind, err);
    if (rc == 0) {
        fputs("<h2>Figures</h2>\n", f);
        hl_coincide(f, dir, res->kind);
        if (!res->rendered && res->nfig > 0)
            fputs("<p class=\"note\">gnuplot was not found: the figures' data and scripts are "
                  "in plots/ (render them with gnuplot plots/*.gp, then run stallsim report "
                  "again).</p>\n",
                  f);
        for (int i = 0; res->rendered && i < res->nfig; i++) {
            char name[64];
            snprintf(name, sizeof name, "plots/%s.svg", res->name[i]);
            char *path = stall_path_join(dir, name);
            size_t len = 0;
            char *svg = stall_read_file(path, &len);
            if (!svg) {
                rc = stall_err_set(err, STALL_EIO, "%s: cannot read: %s", path, strerror(errno));
                free(path);
                break;
            }
            fputs("<figure>\n", f);
            html_svg(f, svg, res->name[i]);
            fputs("\n<figcaption>", f);
            stall_html_escape(f, res->caption[i]);
            fputs(" (<code>", f);
            stall_html_escape(f, name);
            fputs("</code>)</figcaption>\n</figure>\n", f);
            free(svg);
            free(path);
        }
        if (res->nnote > 0) {
            fputs("<h2>Not drawn</h2>\n<ul class=\"notes\">\n", f);
            for (int i = 0; i < res->nnote; i++) {
                fputs("<li>", f);
                stall_html_escape(f, res->note[i]);
                fputs("</li>\n", f);
            }
            fputs("</ul>\n", f);
        }
    }
    if (rc == 0)
        rc = html_tables(f, dir, res->kind, err);
    fputs("</body>\n</html>\n", f);
    fclose(f);
    if (rc == 0)
        rc = stall_table_refused(err);
    if (rc == 0)
        rc = stall_write_atomic_in(dir, "report.html", html_fill, &page, err);
    if (rc == 0 && term)
        fprintf(term, "report in %s/report.html (self-contained: open it from disk)\n", dir);
    free(page.text);
    free(res);
    return rc;
}
