/*
 * htmlreport.c - one self-contained report.html of a result folder
 * (stall/htmlreport.h).
 *
 * The page is built in memory and written atomically. Tables show the
 * columns a reader needs first (every column is in the CSV beside it);
 * numbers are shortened to 6 significant digits for reading. Each SVG is
 * inlined after its XML prolog and DOCTYPE, with its ids and references to
 * them prefixed by the figure's name, because several gnuplot SVGs in one
 * page define the same ids. Time and memory O(size of the result files).
 */
#include "stall/htmlreport.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"
#include "stall/plot.h"
#include "stall/table.h"

#define HTML_MAX_ROWS 200

void stall_html_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A cell: numbers shortened, everything escaped. */
static void html_cell(FILE *f, const stall_table *t, size_t row, int col)
{
    double v = stall_table_num(t, row, col);
    const char *s = stall_table_get(t, row, col);
    if (!isnan(v) && strlen(s) > 8) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.6g", v);
        fprintf(f, "<td class=\"n\">%s</td>", buf);
    } else {
        fputs(isnan(v) ? "<td>" : "<td class=\"n\">", f);
        stall_html_escape(f, s);
        fputs("</td>", f);
    }
}

/* A table of the columns named in want (NULL: all; names absent from the
 * file are skipped), at most HTML_MAX_ROWS rows. */
static int html_table(FILE *f, const char *dir, const char *file, const char *const *want,
                      const char *heading, stall_err *err)
{
    char *path = stall_path_join(dir, file);
    stall_table *t = NULL;
    int rc = stall_table_read(path, &t, err);
    free(path);
    if (rc)
        return rc;
    int cols[64], nc = 0;
    if (want) {
        for (int i = 0; want[i] && nc < 64; i++)
            if ((cols[nc] = stall_table_col(t, want[i])) >= 0)
                nc++;
    } else {
        for (int c = 0; c < t->ncols && nc < 64; c++)
            cols[nc++] = c;
    }
    fputs("<h2>", f);
    stall_html_escape(f, heading);
    fputs("</h2>\n<p class=\"src\">from <code>", f);
    stall_html_escape(f, file);
    fprintf(f, "</code>%s</p>\n<div class=\"scroll\"><table>\n<tr>",
            nc < t->ncols ? " (selected columns; all of them are in the file)" : "");
    for (int i = 0; i < nc; i++) {
        fputs("<th>", f);
        stall_html_escape(f, t->header[cols[i]]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    size_t rows = t->nrows < HTML_MAX_ROWS ? t->nrows : HTML_MAX_ROWS;
    for (size_t r = 0; r < rows; r++) {
        fputs("<tr>", f);
        for (int i = 0; i < nc; i++)
            html_cell(f, t, r, cols[i]);
        fputs("</tr>\n", f);
    }
    fputs("</table></div>\n", f);
    if (rows < t->nrows)
        fprintf(f, "<p class=\"note\">the first %zu of %zu rows</p>\n", rows, t->nrows);
    stall_table_free(t);
    return 0;
}

static bool html_has(const char *dir, const char *file)
{
    char *p = stall_path_join(dir, file);
    FILE *f = fopen(p, "r");
    free(p);
    if (f)
        fclose(f);
    return f != NULL;
}

/* The sentences of analyze.csv, one per source. */
static int html_verdict(FILE *f, const char *dir, stall_err *err)
{
    if (!html_has(dir, "analyze.csv"))
        return 0;
    char *path = stall_path_join(dir, "analyze.csv");
    stall_table *t = NULL;
    int rc = stall_table_read(path, &t, err);
    free(path);
    if (rc)
        return rc;
    int cs = stall_table_col(t, "source"), cm = stall_table_col(t, "metric"),
        cv = stall_table_col(t, "value");
    if (cs >= 0 && cm >= 0 && cv >= 0) {
        fputs("<h2>Verdict</h2>\n", f);
        for (size_t r = 0; r < t->nrows; r++)
            if (strcmp(stall_table_get(t, r, cm), "sentence") == 0) {
                fputs("<p class=\"verdict\"><b>", f);
                stall_html_escape(f, stall_table_get(t, r, cs));
                fputs("</b>: ", f);
                stall_html_escape(f, stall_table_get(t, r, cv));
                fputs("</p>\n", f);
            }
    }
    stall_table_free(t);
    return 0;
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
    "h1{font-size:1.6em;margin-bottom:0.2em}h2{font-size:1.2em;margin-top:1.8em;"
    "border-bottom:1px solid #ddd}\n"
    ".meta,.src,.note{color:#666;font-size:0.9em;margin:0.2em 0}\n"
    ".verdict{background:#fff7e6;border-left:4px solid #E69F00;padding:0.6em 0.9em}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:0.85em}\n"
    "th,td{border:1px solid #ddd;padding:0.25em 0.6em;text-align:left}\n"
    "th{background:#f3f5f8}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
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

static int html_tables(FILE *f, const char *dir, stall_result_kind kind, stall_err *err)
{
    static const char *const run_cols[] = {
        "fetch_align",     "start_align",          "gpus",
        "workers",         "epoch_time_s",         "measured_epoch_time_s",
        "vs_measured_pct", "throughput_samples_s", "mean_iteration_s",
        "mean_stall_s",    "p95_stall_s",          "mean_delay_s",
        "stall_share",     "gpu_busy_share",       NULL};
    static const char *const sweep_cols[] = {"throughput_samples_s", "epoch_time_s",
                                             "mean_stall_s",         "stall_share",
                                             "gpu_busy_share",       NULL};
    int rc = 0;
    switch (kind) {
    case STALL_RESULT_RUN:
        rc = html_table(f, dir, "summary.csv", run_cols, "Summary (one row per alignment)", err);
        break;
    case STALL_RESULT_VALIDATE:
        rc = html_table(f, dir, "validate.csv", NULL, "Simulated vs measured, per epoch", err);
        break;
    case STALL_RESULT_SWEEP: {
        /* point, the swept keys, then the metrics above. */
        char *path = stall_path_join(dir, "sweep.csv");
        stall_table *t = NULL;
        rc = stall_table_read(path, &t, err);
        free(path);
        if (rc)
            return rc;
        const char *want[64];
        int n = 0;
        want[n++] = "point";
        for (int c = 1; c < t->ncols && n < 50 && strchr(t->header[c], '.'); c++)
            want[n++] = t->header[c];
        for (int i = 0; sweep_cols[i]; i++)
            want[n++] = sweep_cols[i];
        want[n] = NULL;
        rc = html_table(f, dir, "sweep.csv", want, "Sweep (one row per point)", err);
        stall_table_free(t);
        break;
    }
    case STALL_RESULT_PLAN:
        if (html_has(dir, "plan.csv"))
            rc = html_table(f, dir, "plan.csv", NULL, "Plan: the answers", err);
        if (rc == 0)
            rc = html_table(f, dir, "scaling.csv", NULL, "Weak scaling", err);
        break;
    case STALL_RESULT_SEED:
    case STALL_RESULT_ANALYZE:
    case STALL_RESULT_NONE:
        break;
    }
    if (rc == 0 && html_has(dir, "per_rank.csv"))
        rc = html_table(f, dir, "per_rank.csv", NULL,
                        "Where each rank's time went (seconds over all epochs)", err);
    return rc;
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
    rc = html_verdict(f, dir, err);
    if (rc == 0)
        rc = html_tables(f, dir, res->kind, err);
    if (rc == 0) {
        fputs("<h2>Figures</h2>\n", f);
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
    fputs("</body>\n</html>\n", f);
    fclose(f);
    if (rc == 0)
        rc = stall_write_atomic_in(dir, "report.html", html_fill, &page, err);
    if (rc == 0 && term)
        fprintf(term, "report in %s/report.html (self-contained: open it from disk)\n", dir);
    free(page.text);
    free(res);
    return rc;
}
