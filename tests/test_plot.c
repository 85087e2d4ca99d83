/*
 * stallsim plot: what each kind of result folder gets drawn, the figures'
 * data against the CSVs they come from, the scripts, rendering with and
 * without gnuplot, and bad folders.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "resultdir.h"
#include "stall/plot.h"
#include "stall/results.h"
#include "stall/table.h"
#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"

static char dir[] = "/tmp/stall_plot_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(plot, .init = setup, .fini = teardown, .timeout = 120);

/* No gnuplot: the figures' data and scripts only. */
static const stall_plot_opts no_gnuplot = {.gnuplot = "/nonexistent/gnuplot"};

static char *sub(const char *name)
{
    static char p[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

Test(plot, run_folder_data_matches_iterations_csv)
{
    rd_run(dir, 3, 2, 10);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_RUN);
    cr_assert_eq(res.nfig, 4, "figures: %d", res.nfig);
    cr_assert_str_eq(res.name[0], "stall_ranks");
    cr_assert_not(res.rendered);
    /* One row per iteration: index, epoch, batch, a stall per rank. */
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/stall_ranks.dat"), &fields), 20);
    cr_assert_eq(fields, 3 + 3);
    stall_table *it = NULL;
    cr_assert_eq(stall_table_read(sub("fetch-none_start-none/iterations.csv"), &it, &err), 0);
    FILE *f = fopen(sub("plots/stall_ranks.dat"), "r");
    char line[4096];
    size_t row = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        double v[6];
        cr_assert_eq(
            sscanf(line, "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]), 6);
        for (int r = 0; r < 3; r++)
            cr_assert_float_eq(v[3 + r], rd_stall((int)row / 10, (int)row % 10, r), 1e-9,
                               "row %zu rank %d", row, r);
        row++;
    }
    fclose(f);
    stall_table_free(it);
    /* The CDF: every iteration once, sorted, after the first step's foot. */
    cr_assert_eq(rd_rows(sub("plots/cdf.dat"), &fields), 1 + 20);
    cr_assert_eq(fields, 3);
    /* Simulated epoch time per epoch: last iter_end - epoch start. */
    cr_assert_eq(rd_rows(sub("plots/epochs.dat"), &fields), 2);
    char *ep = rd_slurp(sub("plots/epochs.dat"));
    double want = 0;
    for (int k = 0; k < 10; k++) {
        double mx = 0;
        for (int r = 0; r < 3; r++)
            mx = fmax(mx, rd_stall(1, k, r));
        want += 0.1 + mx;
    }
    char *last = strstr(ep, "\n1 ");
    cr_assert_not_null(last, "%s", ep);
    cr_assert_float_eq(strtod(last + 3, NULL), want, 1e-9);
    free(ep);
    /* Scripts name their data by relative path and write png and svg. */
    char *gp = rd_slurp(sub("plots/stall_ranks.gp"));
    cr_assert(strstr(gp, "\"stall_ranks.dat\""));
    cr_assert(strstr(gp, "pngcairo") && strstr(gp, "terminal svg"));
    cr_assert_null(strstr(gp, dir), "the script holds an absolute path");
    free(gp);
    cr_assert_not(rd_exists(dir, "plots/stall_ranks.png"));
    /* Without per_rank.csv the breakdown is named as not drawn. */
    int said = 0;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "per_rank.csv") != NULL;
    cr_assert(said);
}

Test(plot, more_than_8_ranks_draw_a_heatmap_of_bins)
{
    rd_run(dir, 12, 1, 1000);
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    /* 1000 iterations in bins of 3: 334 bins x 12 ranks. */
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/stall_ranks.dat"), &fields), 334 * 12);
    cr_assert_eq(fields, 3);
    char *gp = rd_slurp(sub("plots/stall_ranks.gp"));
    cr_assert(strstr(gp, "with image"));
    free(gp);
    /* The CDF of 1000 iterations: each one, after the first step's foot. */
    cr_assert_eq(rd_rows(sub("plots/cdf.dat"), NULL), 1 + 1000);
}

Test(plot, without_gnuplot_says_so_in_one_line)
{
    rd_run(dir, 2, 1, 5);
    setenv("PATH", "/nonexistent", 1);
    char *out = NULL;
    size_t n = 0;
    FILE *term = open_memstream(&out, &n);
    stall_plot_opts o = {.term = term};
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &o, NULL, &err), 0, "%s", err.msg);
    fclose(term);
    char want[1200];
    snprintf(want, sizeof want,
             "gnuplot not found: wrote data and scripts in %s/plots; render with gnuplot "
             "%s/plots/*.gp\n",
             dir, dir);
    cr_assert(strstr(out, want), "%s", out);
    free(out);
    cr_assert(rd_exists(dir, "plots/cdf.gp"));
}

Test(plot, renders_png_and_svg_with_gnuplot)
{
    if (!rd_have("gnuplot"))
        tmpdir_skip(dir, "gnuplot not installed");
    rd_run(dir, 3, 2, 30);
    rd_write(
        dir, "per_rank.csv",
        "source,rank,total_s,startup_s,data_s,handover_s,compute_s,barrier_s,post_s,checkpoint_s,"
        "last_iterations,caused_wait_s\nsimulated,0,3,0.1,1,0.2,1,0.5,0.2,,3,0.1\n"
        "simulated,1,3,0.1,0.5,0.2,1.5,0.5,0.2,,5,0.2\nmeasured,0,3,0.1,1,0.2,1,0.5,0.2,,3,0\n");
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, NULL, &res, &err), 0, "%s", err.msg);
    cr_assert(res.rendered);
    cr_assert_eq(res.nfig, 5);
    for (int i = 0; i < res.nfig; i++) {
        char name[64];
        snprintf(name, sizeof name, "plots/%s.png", res.name[i]);
        cr_assert(rd_exists(dir, name), "no %s", name);
        snprintf(name, sizeof name, "plots/%s.svg", res.name[i]);
        cr_assert(rd_exists(dir, name), "no %s", name);
        snprintf(name, sizeof name, "plots/%s.tmp.svg", res.name[i]);
        cr_assert_not(rd_exists(dir, name), "%s left behind", name);
    }
    /* A script re-renders from any folder. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd / && rm %s/plots/cdf.png && gnuplot %s/plots/cdf.gp && test -s %s/plots/cdf.png",
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
}

Test(plot, sweep_of_two_keys_is_a_grid_and_one_key_lines)
{
    rd_write(dir, "sweep.csv",
             "point,loader.workers,cluster.gpus,fetch_align,throughput_samples_s,stall_share\n"
             "0,1,1,none,100,0.5\n1,1,2,none,190,0.5\n2,2,1,none,150,0.2\n3,2,2,none,290,0.25\n"
             "4,10,1,none,160,0.1\n5,10,2,none,310,0.1\n");
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    int fields = 0;
    cr_assert_eq(rd_rows(sub("plots/sweep.dat"), &fields), 3 * 2);
    cr_assert_eq(fields, 6); /* and the two cells' labels */
    char *gp = rd_slurp(sub("plots/sweep.gp"));
    /* Numeric values sorted as numbers: 1, 2, 10. */
    cr_assert(strstr(gp, "set xtics (\"1\" 0, \"2\" 1, \"10\" 2)"), "%s", gp);
    free(gp);
    rd_write(dir, "sweep.csv",
             "point,loader.workers,fetch_align,throughput_samples_s,stall_share\n"
             "0,4,none,100,0.5\n1,2,none,150,0.2\n");
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(rd_rows(sub("plots/sweep.dat"), &fields), 2);
    char *dat = rd_slurp(sub("plots/sweep.dat"));
    cr_assert(strstr(dat, "\n0 2 150 20\n1 4 100 50\n"), "%s", dat);
    free(dat);
}

Test(plot, bad_folders_are_refused_with_exit_2)
{
    stall_err err = {0};
    cr_assert_eq(stall_plot(sub("nope"), NULL, NULL, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "not a folder"), "%s", err.msg);
    cr_assert_eq(stall_plot(dir, NULL, NULL, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "not a stallsim result folder"), "%s", err.msg);
    rd_write(dir, "summary.csv", "fetch_align,start_align\nnone,none,extra\n");
    cr_assert_eq(stall_plot(dir, &no_gnuplot, NULL, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, "summary.csv:2:"), "%s", err.msg);
    cr_assert_not(rd_exists(dir, "plots"), "plots/ written for a bad folder");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s plot %s/nope 2>/dev/null", BIN, dir);
    int st = system(cmd);
    cr_assert_eq(WEXITSTATUS(st), 2);
}

Test(plot, gnuplot_failure_is_an_error_quoting_it)
{
    rd_run(dir, 2, 1, 5);
    /* A "gnuplot" that fails like gnuplot on a bad script. */
    rd_write(dir, "fakegnuplot",
             "#!/bin/sh\necho '\"x.gp\" line 3: undefined variable' >&2\n"
             "exit 1\n");
    char fake[1100];
    snprintf(fake, sizeof fake, "%s/fakegnuplot", dir);
    chmod(fake, 0755);
    stall_plot_opts o = {.gnuplot = fake};
    stall_err err = {0};
    cr_assert_eq(stall_plot(dir, &o, NULL, &err), STALL_EINTERNAL);
    cr_assert(strstr(err.msg, "gnuplot failed on") && strstr(err.msg, "undefined variable"), "%s",
              err.msg);
    cr_assert_not(rd_exists(dir, "plots/stall_ranks.tmp.png"));
}

/* ---- every figure on real result folders ----
 *
 * Each test runs the real commands (build/stallsim) on shipped configs and
 * traces, then `stallsim plot`, and checks every figure it draws: its .dat
 * has data rows and no NaN or infinity; every column a plot element reads
 * by number is there and finite; the .gp's x, y and colour ranges, as
 * gnuplot sees them in each terminal pass (png, then svg, the state of the
 * first carrying into the second unless reset), hold the values drawn
 * (a colour scale may stop at the 99th percentile, never miss the data);
 * the svg holds drawn marks (coloured lines, filled polygons or an image)
 * and the png is no flat picture of the size the script asks. */

#define sh(...) rd_sh(dir, __VA_ARGS__)

/* The .dat of a figure: rows of fields, blocks (gnuplot's index) split by
 * two blank lines. */
typedef struct dat_t {
    int nrows;
    int block[65536];
    int nf[65536];
    double v[65536][10];
} dat_t;

static dat_t *dat_read(const char *path)
{
    dat_t *d = calloc(1, sizeof *d);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    char line[65536];
    int blank = 0, block = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        if (line[0] == '\n') {
            if (++blank == 2 && d->nrows > 0 && d->block[d->nrows - 1] == block)
                block++;
            continue;
        }
        blank = 0;
        cr_assert_lt(d->nrows, 65536, "%s: too many rows for the check", path);
        int r = d->nrows++, n = 0;
        d->block[r] = block;
        for (char *s = strtok(line, " \n"); s; s = strtok(NULL, " \n"), n++) {
            char *end;
            double x = strtod(s, &end);
            bool num = *end == '\0' && end != s;
            if (num || strpbrk(s, "0123456789") == s) {
                /* A number must be finite: no NaN, no inf in a figure. */
                cr_assert(num && isfinite(x), "%s row %d field %d: %s is not a finite number", path,
                          r, n + 1, s);
            }
            cr_assert(!num || isfinite(x), "%s row %d: %s", path, r, s);
            if (n < 10)
                d->v[r][n] = num ? x : NAN;
        }
        d->nf[r] = n;
    }
    fclose(f);
    cr_assert_gt(d->nrows, 0, "%s: no data row", path);
    return d;
}

typedef struct gp_range {
    bool set;
    double lo, hi; /* NAN: '*' */
} gp_range;

static void gp_parse_range(const char *s, gp_range *r)
{
    /* "[a:b]" with either end possibly '*' or empty. */
    const char *b = strchr(s, '[');
    if (!b) {
        r->set = false;
        return;
    }
    char *end;
    r->set = true;
    r->lo = strtod(b + 1, &end);
    if (end == b + 1)
        r->lo = NAN;
    const char *c = strchr(b, ':');
    r->hi = c ? strtod(c + 1, &end) : NAN;
    if (c && end == c + 1)
        r->hi = NAN;
}

/* The value of one using-spec field in row r: "N" or "($N)"; NAN when it
 * is an expression the check does not evaluate. */
static bool using_col(const char *tok, int *col)
{
    char *end;
    if (tok[0] == '(' && tok[1] == '$') {
        *col = (int)strtol(tok + 2, &end, 10);
        return *end == ')' && end[1] == '\0';
    }
    *col = (int)strtol(tok, &end, 10);
    return end != tok && *end == '\0' && *col > 0;
}

/* Columns read by number anywhere in a using spec ("$N", "N"). */
static void using_all_cols(const char *spec, int *cols, int *n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ":"); tok; tok = strtok(NULL, ":")) {
        if (strstr(tok, "xtic(") || strstr(tok, "stringcolumn") || strstr(tok, "sprintf"))
            continue;
        int c;
        if (using_col(tok, &c)) {
            cols[(*n)++] = c;
            continue;
        }
        for (char *p = strchr(tok, '$'); p; p = strchr(p + 1, '$'))
            if (p[1] >= '1' && p[1] <= '9')
                cols[(*n)++] = atoi(p + 1);
    }
}

static void check_in(const char *what, const char *fig, const char *pass, const gp_range *r,
                     double lo, double hi, bool cap99, double p99)
{
    if (!r->set || !isfinite(lo))
        return;
    double eps = 1e-9 * fmax(1, fmax(fabs(lo), fabs(hi)));
    if (!isnan(r->lo))
        cr_assert_leq(r->lo, lo + eps, "%s (%s pass): %srange starts at %g above its data's %g",
                      fig, pass, what, r->lo, lo);
    if (!isnan(r->hi)) {
        double need = cap99 ? p99 : hi;
        cr_assert_geq(r->hi, need - eps, "%s (%s pass): %srange ends at %g below its data's %g",
                      fig, pass, what, r->hi, need);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Walks the script's body twice (png, svg) as gnuplot keeps its state and
 * checks every plot element's ranges against the .dat. Returns the number
 * of plot elements checked. */
static int gp_check(const char *fig, const char *gp, const dat_t *d)
{
    const char *body = strstr(gp, "do for [fmt in \"png svg\"] {");
    cr_assert_not_null(body, "%s: no png/svg loop", fig);
    gp_range x = {0}, y = {0}, y2 = {0}, cb = {0};
    int checked = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *pname = pass ? "svg" : "png";
        char *text = strdup(body);
        /* Continued lines joined. */
        for (char *p = strstr(text, "\\\n"); p; p = strstr(p, "\\\n"))
            p[0] = p[1] = ' ';
        char *save = NULL;
        for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
            ln += strspn(ln, " ");
            if (strncmp(ln, "reset", 5) == 0)
                x = y = y2 = cb = (gp_range){0};
            else if (strncmp(ln, "set xrange", 10) == 0)
                gp_parse_range(ln, &x);
            else if (strncmp(ln, "set yrange", 10) == 0)
                gp_parse_range(ln, &y);
            else if (strncmp(ln, "set y2range", 11) == 0)
                gp_parse_range(ln, &y2);
            else if (strncmp(ln, "set cbrange", 11) == 0)
                gp_parse_range(ln, &cb);
            else if (strncmp(ln, "set autoscale", 13) == 0)
                x = y = y2 = cb = (gp_range){0};
            if (strncmp(ln, "plot ", 5) != 0)
                continue;
            /* Plot elements split at ", \"" (each names the file or ""). */
            char *el = ln + 5;
            while (el && *el) {
                char *next = strstr(el + 1, ", \"");
                if (next)
                    *next = '\0';
                int idx = -1;
                char *ip = strstr(el, " index ");
                if (ip && isdigit((unsigned char)ip[7]))
                    idx = atoi(ip + 7);
                char *up = strstr(el, " using ");
                bool loop = strstr(el, "for [") != NULL;
                if (up && !loop) {
                    char spec[512];
                    sscanf(up + 7, "%511s", spec);
                    int cols[32], nc = 0;
                    using_all_cols(spec, cols, &nc);
                    /* Every column read must be there and finite; with
                     * labels the last is the label's text (a string). */
                    bool is_label = strstr(el, " with labels") != NULL;
                    for (int r = 0; r < d->nrows; r++)
                        if (idx < 0 || d->block[r] == idx)
                            for (int k = 0; k < nc; k++)
                                cr_assert(cols[k] <= d->nf[r] &&
                                              (cols[k] > 10 || (is_label && k == nc - 1) ||
                                               isfinite(d->v[r][cols[k] - 1])),
                                          "%s: row %d has no finite column %d (%s)", fig, r,
                                          cols[k], spec);
                    char sp2[512];
                    snprintf(sp2, sizeof sp2, "%s", spec);
                    char *tk[8];
                    int nt = 0;
                    for (char *t = strtok(sp2, ":"); t && nt < 8; t = strtok(NULL, ":"))
                        tk[nt++] = t;
                    bool image = strstr(el, "with image") != NULL;
                    bool palz = strstr(el, "palette z") != NULL; /* colour: the last column */
                    bool y2ax = strstr(el, "axes x1y2") != NULL;
                    for (int a = 0; a < (image || palz ? 3 : 2) && a < nt; a++) {
                        int col;
                        if (!using_col(tk[a == 2 && palz ? nt - 1 : a], &col) || col > 10)
                            continue;
                        double *vals = calloc((size_t)d->nrows + 1, sizeof *vals);
                        int nv = 0;
                        for (int r = 0; r < d->nrows; r++)
                            if ((idx < 0 || d->block[r] == idx) && isfinite(d->v[r][col - 1]))
                                vals[nv++] = d->v[r][col - 1];
                        cr_assert_gt(nv, 0, "%s: nothing to draw in column %d", fig, col);
                        qsort(vals, (size_t)nv, sizeof *vals, cmp_d);
                        double p99 = vals[(size_t)(0.99 * (nv - 1))];
                        if (a == 0)
                            check_in("x", fig, pname, &x, vals[0], vals[nv - 1], false, 0);
                        else if (a == 1)
                            check_in(y2ax ? "y2" : "y", fig, pname, y2ax ? &y2 : &y, vals[0],
                                     vals[nv - 1], false, 0);
                        else
                            check_in("cb", fig, pname, &cb, vals[0], vals[nv - 1], true, p99);
                        free(vals);
                    }
                    checked++;
                }
                el = next ? next + 2 : NULL;
            }
        }
        free(text);
    }
    return checked;
}

/* Drawn marks in an svg: polygons (filled cells and bars), embedded images
 * (heatmaps), and paths stroked in a colour other than the axes', grid's
 * and border's greys and black. */
static int svg_marks(const char *svg, int *polygons, int *images)
{
    int n = 0;
    *polygons = *images = 0;
    for (const char *p = strstr(svg, "<polygon"); p; p = strstr(p + 1, "<polygon"))
        (*polygons)++;
    for (const char *p = strstr(svg, "<image"); p; p = strstr(p + 1, "<image"))
        (*images)++;
    for (const char *p = strstr(svg, "<path"); p; p = strstr(p + 1, "<path")) {
        const char *e = strchr(p, '>');
        const char *s = strstr(p, "stroke='rgb(");
        if (!s || !e || s > e)
            continue;
        int r, g, b;
        if (sscanf(s, "stroke='rgb(%d, %d, %d)", &r, &g, &b) == 3 && !(r == g && g == b))
            n++;
    }
    return n + *polygons + *images;
}

/* Filled polygons of an svg wider than w pixels (heatmap cells; the
 * colour bar is drawn in narrow strips). */
static int svg_wide_polygons(const char *svg, double w)
{
    int n = 0;
    for (const char *p = strstr(svg, "<polygon"); p; p = strstr(p + 1, "<polygon")) {
        const char *pts = strstr(p, "points = '"), *e = strchr(p, '>');
        if (!pts || !e || pts > e)
            continue;
        pts += strlen("points = '");
        double lo = INFINITY, hi = -INFINITY, x, y;
        int used;
        while (pts < e && sscanf(pts, "%lf,%lf%n", &x, &y, &used) == 2) {
            lo = fmin(lo, x);
            hi = fmax(hi, x);
            pts += used;
            pts += strspn(pts, " ");
        }
        n += hi - lo > w;
    }
    return n;
}

/* Width and height from a png's IHDR. */
static void png_size(const char *path, long *size, int *w, int *h)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "no %s", path);
    unsigned char b[24];
    cr_assert_eq(fread(b, 1, 24, f), 24u);
    cr_assert(memcmp(b, "\x89PNG", 4) == 0, "%s is no png", path);
    *w = (b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19];
    *h = (b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23];
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    fclose(f);
}

/* Plots result folder res (through the binary) and checks each of the
 * figures named (and that exactly these are drawn). */
static void check_figures(const char *res, const char *const *want, int nwant)
{
    cr_assert_eq(sh("%s plot %s", BIN, res), 0, "stallsim plot %s failed", res);
    char p[1200];
    for (int i = 0; i < nwant; i++) {
        snprintf(p, sizeof p, "%s/plots/%s.dat", res, want[i]);
        dat_t *d = dat_read(p);
        snprintf(p, sizeof p, "%s/plots/%s.gp", res, want[i]);
        char *gp = rd_slurp(p);
        cr_assert_not_null(gp, "no %s", p);
        cr_assert_gt(gp_check(want[i], gp, d), 0, "%s: no plot element checked", want[i]);
        int w = 0, h = 0;
        const char *t = strstr(gp, "pngcairo size ");
        cr_assert(t && sscanf(t, "pngcairo size %d,%d", &w, &h) == 2);
        snprintf(p, sizeof p, "%s/plots/%s.svg", res, want[i]);
        char *svg = rd_slurp(p);
        cr_assert_not_null(svg, "no %s", p);
        int poly, img;
        cr_assert_gt(svg_marks(svg, &poly, &img), 0, "%s: nothing drawn in the svg", want[i]);
        snprintf(p, sizeof p, "%s/plots/%s.png", res, want[i]);
        long size;
        int pw, ph;
        png_size(p, &size, &pw, &ph);
        cr_assert(pw == w && ph == h, "%s: png %dx%d, script %dx%d", want[i], pw, ph, w, h);
        /* A flat picture of this size compresses to well under 4 KB. */
        cr_assert_gt(size, 4096, "%s: the png is (nearly) one flat colour (%ld B)", want[i], size);
        /* gnuplot renders the script without a warning: a warning is a
         * plot element it skipped (a sweep heatmap with an axis of one
         * value drew no cell: "Image grid must be at least 4 points"). */
        snprintf(p, sizeof p,
                 "cd %s/plots && gnuplot -e \"out='%s/rerender'\" %s.gp > %s/gp.log 2>&1", res, dir,
                 want[i], dir);
        cr_assert_eq(system(p), 0, "gnuplot %s.gp failed", want[i]);
        snprintf(p, sizeof p, "%s/gp.log", dir);
        char *msg = rd_slurp(p);
        for (char *q = msg; q && *q; q++)
            *q = (char)tolower((unsigned char)*q);
        cr_assert(msg && !strstr(msg, "warning"), "%s: gnuplot warns: %s", want[i], msg);
        free(msg);
        free(svg);
        free(gp);
        free(d);
    }
    /* No other figure. */
    snprintf(p, sizeof p, "ls %s/plots/*.gp | wc -l > %s/n.txt", res, dir);
    cr_assert_eq(system(p), 0);
    snprintf(p, sizeof p, "%s/n.txt", dir);
    char *n = rd_slurp(p);
    cr_assert_eq(atoi(n), nwant, "%s: %s figures drawn, %d expected", res, n, nwant);
    free(n);
}

static char *res_dir(const char *name)
{
    return sub(name);
}

Test(plot, validate_folder_draws_per_epoch_and_says_what_it_cannot)
{
    /* a real validate folder: configs/w2.ini's trace has 3 epochs */
    char *v = res_dir("val3");
    cr_assert_eq(sh("%s validate configs/w2.ini -o %s -q", BIN, v), 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(v, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_VALIDATE);
    cr_assert_eq(res.nfig, 1);
    int fields = 0;
    cr_assert_eq(rd_rows(sub("val3/plots/epochs.dat"), &fields), 3);
    cr_assert_eq(fields, 6); /* x, epoch, the four values */
    int said = 0;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "iterations.csv") != NULL;
    cr_assert(said, "no note on the per-iteration figures");
}

#define NEED_GNUPLOT()                                                                             \
    do {                                                                                           \
        if (!rd_have("gnuplot"))                                                                   \
            tmpdir_skip(dir, "gnuplot not installed");                                             \
    } while (0)

Test(plot, real_replay_run_every_figure_and_ranks_csv_drawn)
{
    NEED_GNUPLOT();
    char *r = res_dir("replay");
    cr_assert_eq(sh("%s run configs/example.ini -o %s -q", BIN, r), 0);
    const char *want[] = {"stall_ranks", "cdf", "gpu_util", "epochs"};
    check_figures(r, want, 4);
    /* stall_ranks.dat holds ranks.csv's stalls of the unaligned run. */
    char p[1200];
    snprintf(p, sizeof p, "%s/fetch-none_start-none/" STALL_RESULTS_RANKS, r);
    stall_table *rk = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &rk, &err), 0, "%s", err.msg);
    cr_assert_str_eq(rk->header[0], STALL_COL_EPOCH);
    int cs = stall_table_col(rk, STALL_COL_STALL), cr = stall_table_col(rk, STALL_COL_RANK);
    int ranks = 0;
    for (size_t i = 0; i < rk->nrows; i++)
        ranks = (int)fmax(ranks, stall_table_num(rk, i, cr) + 1);
    cr_assert_gt(ranks, 1);
    snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
    dat_t *d = dat_read(p);
    cr_assert_eq((size_t)d->nrows * (size_t)ranks, rk->nrows);
    cr_assert_eq(d->nf[0], 3 + ranks, "one column per rank");
    for (int i = 0; i < d->nrows; i++)
        for (int k = 0; k < ranks; k++)
            cr_assert_float_eq(d->v[i][3 + k],
                               stall_table_num(rk, (size_t)i * (size_t)ranks + (size_t)k, cs),
                               1e-12);
    free(d);
    stall_table_free(rk);
    /* The CDF draws the alignments that coincide as one line saying so. */
    snprintf(p, sizeof p, "%s/plots/cdf.gp", r);
    char *gp = rd_slurp(p);
    int lines = 0;
    for (char *s = strstr(gp, "with steps"); s; s = strstr(s + 1, "with steps"))
        lines++;
    cr_assert_gt(lines, 0, "850 iterations: the distribution's steps");
    cr_assert_lt(lines, 2 * 9, "nine alignments, one line each");
    cr_assert(strstr(gp, "(within "), "%s", gp);
    free(gp);
    /* So does GPU utilisation (the nine curves are within a point). */
    snprintf(p, sizeof p, "%s/plots/gpu_util.gp", r);
    gp = rd_slurp(p);
    lines = 0;
    for (char *s = strstr(gp, "with lines"); s; s = strstr(s + 1, "with lines"))
        lines++;
    cr_assert_lt(lines, 9, "nine alignments, one line each");
    cr_assert(strstr(gp, "(within "), "%s", gp);
    free(gp);
}

/* A model run has one alignment, none/none, compared with nothing: its
 * figures do not name it (the legends read "fetch/start: none/none" and the
 * bar of one epoch stood over "alignment (fetch/start)"). A replay's nine
 * are still named. */
Test(plot, real_model_run_names_no_alignment)
{
    NEED_GNUPLOT();
    const char *runs[] = {"run configs/w2.ini", "run configs/w2.ini --set run.epochs=1"};
    const char *figs[] = {"cdf", "gpu_util", "epochs", "stall_ranks"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "lone%d", i);
        char *r = res_dir(name);
        cr_assert_eq(sh("%s %s -o %s -q --plots", BIN, runs[i], r), 0);
        check_figures(r, figs, 4);
        for (int f = 0; f < 4; f++) {
            char p[1200];
            snprintf(p, sizeof p, "%s/plots/%s.gp", r, figs[f]);
            char *gp = rd_slurp(p);
            cr_expect_null(strstr(gp, "none/none"), "%s names none/none", p);
            cr_expect_null(strstr(gp, "fetch/start"), "%s names fetch/start", p);
            if (f < 3) /* stall_ranks has no legend */
                cr_expect_not_null(strstr(gp, "\"simulated"), "%s has no simulated series", p);
            free(gp);
        }
    }
    char *r = res_dir("nine");
    cr_assert_eq(sh("%s run configs/example.ini -o %s -q --plots", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.gp", r);
    char *gp = rd_slurp(p);
    cr_expect_not_null(strstr(gp, "(alignment none/none)"), "%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
    gp = rd_slurp(p);
    cr_expect_not_null(strstr(gp, "fetch/start"), "%s", gp);
    free(gp);
}

Test(plot, real_model_run_with_analyze)
{
    NEED_GNUPLOT();
    char *r = res_dir("model");
    cr_assert_eq(sh("%s run configs/w2.ini -o %s -q --set run.batches=100 --set run.epochs=2 "
                    "--set cluster.gpus=4 --set cluster.gpus_per_node=4 "
                    "--set fetch.resample=bootstrap --analyze",
                    BIN, r),
                 0);
    const char *want[] = {"stall_ranks", "cdf", "gpu_util", "epochs", "breakdown"};
    check_figures(r, want, 5);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
    dat_t *d = dat_read(p);
    cr_assert_eq(d->nrows, 200);
    cr_assert_eq(d->nf[0], 3 + 4, "a stall column per rank");
    free(d);
}

/* Bars of the breakdown: every bar at an x of its own, each group's name
 * under its own bars, the names at least two bars apart. */
static void check_breakdown_apart(const char *r)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    dat_t *d = dat_read(p);
    for (int i = 0; i < d->nrows; i++)
        for (int j = 0; j < i; j++)
            cr_assert(d->v[i][0] != d->v[j][0], "breakdown: bars %d and %d both at x = %g", i, j,
                      d->v[i][0]);
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = rd_slurp(p);
    double at[4];
    int n = 0;
    for (char *s = strstr(gp, "set label "); s && n < 4; s = strstr(s + 1, "set label ")) {
        char *a = strstr(s, " at ");
        cr_assert_not_null(a);
        at[n++] = strtod(a + 4, NULL);
    }
    cr_assert_eq(n, d->block[d->nrows - 1] + 1, "a source not named under its bars");
    for (int g = 0; g < n; g++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < d->nrows; i++)
            if (d->block[i] == g)
                lo = fmin(lo, d->v[i][0]), hi = fmax(hi, d->v[i][0]);
        cr_assert(at[g] >= lo && at[g] <= hi, "label %d at %g, its bars at %g..%g", g, at[g], lo,
                  hi);
        if (g > 0)
            cr_assert_geq(at[g] - at[g - 1], 2, "the names of sources overlap");
    }
    free(gp);
    free(d);
}

Test(plot, real_validate_one_rank_bars_side_by_side)
{
    NEED_GNUPLOT();
    char *r = res_dir("val");
    cr_assert_eq(sh("%s validate configs/w2.ini -o %s -q --analyze", BIN, r), 0);
    const char *want[] = {"epochs", "breakdown"};
    check_figures(r, want, 2);
    check_breakdown_apart(r);
}

Test(plot, real_analyze_of_straggler_trace)
{
    NEED_GNUPLOT();
    char *r = res_dir("an");
    cr_assert_eq(sh("%s analyze traces/ddp2_straggler/trace.csv -o %s", BIN, r), 0);
    const char *want[] = {"breakdown"};
    check_figures(r, want, 1);
    check_breakdown_apart(r);
}

/* analyze of ranks on clocks of their own (tests/kineto/ddp2_w2): the
 * barrier and hand-over are unknown, empty in per_rank.csv; the breakdown
 * still draws its bars and its key says the two parts are unknown. */
Test(plot, real_analyze_of_unaligned_clocks_marks_unknown_parts)
{
    NEED_GNUPLOT();
    char *r = res_dir("anu");
    cr_assert_eq(sh("%s analyze tests/kineto/ddp2_w2 -o %s", BIN, r), 0);
    const char *want[] = {"breakdown"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(gp, "%s", p);
    cr_expect(
        strstr(gp, "title \"barrier wait (unknown)\"") &&
            strstr(gp, "title \"hand-over (unknown)\"") &&
            strstr(gp,
                   "title \"compute, incl. the trace's all-reduce + step\""), /* no compute_end */
        "%s", gp);
    free(gp);
}

Test(plot, real_sweep_over_one_key)
{
    NEED_GNUPLOT();
    char *r = res_dir("sw1");
    cr_assert_eq(
        sh("%s sweep configs/example-whatif.ini --sweep loader.workers=3,6,10 -o %s -q -j 2", BIN,
           r),
        0);
    const char *want[] = {"sweep"};
    check_figures(r, want, 1);
}

/* A sweep of one key with one value: gnuplot warned of an empty x range
 * [2:2] (check_figures fails on any warning); the range is set around it. */
Test(plot, real_sweep_of_one_value_has_an_x_range_around_it)
{
    NEED_GNUPLOT();
    char *r = res_dir("sw1v");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep loader.workers=2 -o %s -q", BIN, r), 0);
    const char *want[] = {"sweep"};
    check_figures(r, want, 1);
}

Test(plot, real_sweep_over_two_keys_discrete_cells_own_scales)
{
    NEED_GNUPLOT();
    char *r = res_dir("sw2");
    cr_assert_eq(sh("%s sweep configs/example.ini -o %s -q -j 2", BIN, r), 0);
    const char *want[] = {"sweep"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/sweep.svg", r);
    char *svg = rd_slurp(p);
    int poly, img;
    svg_marks(svg, &poly, &img);
    /* Discrete cells: a polygon each (3 x 3 x 2 panels), no smoothed image. */
    cr_assert_eq(img, 0, "the heatmap is an image a browser smooths");
    cr_assert_geq(poly, 18);
    free(svg);
    /* A colour scale spanning under 1% says so. */
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "all within "), "%s", gp);
    free(gp);
}

/* Figures by axes, not keys: a zip group (cluster.gpus with
 * cluster.gpus_per_node, 4 points) is one axis, drawn as lines (it was a
 * 4 x 4 heatmap with 12 empty cells), and with loader.workers=1..6 a grid
 * of 4 x 6 cells (it was refused: "sweep over 3 keys: no figure"). */
Test(plot, real_sweep_zip_group_is_one_axis)
{
    NEED_GNUPLOT();
    char *r1 = res_dir("swz1"), *r2 = res_dir("swz2");
    char ini[1100];
    snprintf(ini, sizeof ini, "%s/zip.ini", dir);
    FILE *f = fopen(ini, "w");
    fputs("[scenario]\nname = zip\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = "
          "0.05\ndist = lognormal\nsigma = 0.3\n[compute]\nmean_s = 0.03\n[run]\nbatches = "
          "300\n[sweep]\ncluster.gpus = 1, 2, 4, 8\ncluster.gpus_per_node = 1, 2, 4, 8\n"
          "zip = cluster.gpus, cluster.gpus_per_node\n",
          f);
    fclose(f);
    cr_assert_eq(sh("%s sweep %s -o %s -q -j 2", BIN, ini, r1), 0);
    cr_assert_eq(sh("%s sweep %s --sweep loader.workers=1..6 -o %s -q -j 2", BIN, ini, r2), 0);
    const char *want[] = {"sweep"};
    check_figures(r1, want, 1);
    check_figures(r2, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r1);
    char *gp = rd_slurp(p);
    cr_expect(strstr(gp, "with linespoints") && !strstr(gp, "boxxyerror") &&
                  strstr(gp, "set xlabel \"cluster.gpus, cluster.gpus_per_node\""),
              "a zip axis is drawn as lines against its keys:\n%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/plots/sweep.dat", r1);
    dat_t *d = dat_read(p);
    cr_expect_eq(d->nrows, 4, "one row per point of the zip axis, not a 4 x 4 grid");
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r2);
    gp = rd_slurp(p);
    cr_expect(strstr(gp, "boxxyerror") &&
                  strstr(gp, "set xlabel \"cluster.gpus, cluster.gpus_per_node\"") &&
                  strstr(gp, "set ylabel \"loader.workers\""),
              "a zip axis and loader.workers are a grid:\n%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/plots/sweep.dat", r2);
    dat_t *d2 = dat_read(p);
    cr_expect_eq(d2->nrows, 24, "4 x 6 cells, got %d rows", d2->nrows);
    free(d);
    free(d2);
}

/* A sweep over two keys, one of them a single value (a grid of 3 x 1, and
 * of 1 x 1): gnuplot's "with image" needs a 2 x 2 grid and drew no cell,
 * only the labels on white, warning "Image grid must be at least 4 points
 * (2 x 2)". Every cell is a filled box now, whatever the grid. */
Test(plot, real_sweep_with_one_value_on_an_axis_draws_its_cells)
{
    NEED_GNUPLOT();
    const char *sweeps[] = {"--sweep loader.workers=1,2,4", "--sweep loader.workers=4"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "sw1v%d", i);
        char *r = res_dir(name);
        cr_assert_eq(sh("%s sweep configs/w2.ini %s --sweep loader.prefetch_factor=2 -o %s -q", BIN,
                        sweeps[i], r),
                     0);
        const char *want[] = {"sweep"};
        check_figures(r, want, 1);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/sweep.svg", r);
        char *svg = rd_slurp(p);
        cr_assert(svg, "%s", p);
        /* A filled polygon per cell and panel, each far wider than any
         * of the colour bars' strips. */
        cr_expect_eq(svg_wide_polygons(svg, 60), i == 0 ? 2 * 3 : 2, "%s: cells drawn", p);
        free(svg);
    }
}

Test(plot, real_sweep_of_many_values_labels_about_twelve)
{
    /* 60 worker counts: every value a tic label overlapped into a smear
     * (a new user's report); about twelve labels, the first and last kept. */
    NEED_GNUPLOT();
    char *r = res_dir("sw60");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep loader.workers=1..60 --sweep "
                    "loader.prefetch_factor=1..2 -o %s -q -j 2",
                    BIN, r),
                 0);
    const char *want[] = {"sweep"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    char *gp = rd_slurp(p);
    char *x = strstr(gp, "set xtics (");
    cr_assert_not_null(x, "%s", gp);
    char *end = strchr(x, '\n');
    int labels = 0;
    for (char *q = x; q < end; q++)
        labels += *q == '"';
    labels /= 2;
    cr_assert(labels >= 10 && labels <= 13, "%d labels: %.*s", labels, (int)(end - x), x);
    cr_assert(strstr(x, "(\"1\" 0") == x + strlen("set xtics "), "%.*s", (int)(end - x), x);
    cr_assert(strstr(x, "\"60\" 59)") && strstr(x, "\"60\" 59)") < end, "%.*s", (int)(end - x), x);
    free(gp);
}

Test(plot, real_plan_at_the_search_bound_says_so)
{
    /* max_efficient_gpus with binding max_gpus is the search's bound, not a
     * count found: the figure says so instead of "largest efficient". */
    NEED_GNUPLOT();
    char *r = res_dir("planb");
    cr_assert_eq(sh("%s plan configs/example-whatif.ini --set plan.max_gpus=16 -o %s -q", BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plan.csv", r);
    char *csv = rd_slurp(p);
    cr_assert(strstr(csv, "max_efficient_gpus,16,max_gpus,"), "%s", csv);
    free(csv);
    const char *want[] = {"scaling"};
    check_figures(r, want, 1);
    snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "efficient up to %.0f GPU%s, the search's bound"), "%s", gp);
    cr_assert_null(strstr(gp, "largest efficient"), "%s", gp);
    free(gp);
}

/* A real plan whose tier curve stopped at [plan] max_requests (binding
 * cost): the figure marks where the search stopped, not "largest
 * efficient" nor the max_gpus bound. */
Test(plot, real_plan_stopped_by_its_request_limit_says_so)
{
    NEED_GNUPLOT();
    char *r = res_dir("plancost");
    cr_assert_eq(sh("%s plan configs/w2.ini --set storage.cache_mb=1 --set "
                    "storage.bandwidth_mb_s=100 --set plan.max_requests=12000 --set "
                    "plan.max_gpus=16 --set plan.max_workers=4 -o %s -q",
                    BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plan.csv", r);
    char *csv = rd_slurp(p);
    cr_assert(strstr(csv, "max_efficient_gpus,4,cost,"), "%s", csv);
    free(csv);
    const char *want[] = {"scaling"};
    check_figures(r, want, 1);
    snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "efficient up to %.0f GPU%s, where the search stopped (simulation cost)"),
              "%s", gp);
    cr_assert_null(strstr(gp, "largest efficient"), "%s", gp);
    cr_assert_null(strstr(gp, "the search's bound"), "%s", gp);
    free(gp);
}

Test(plot, plan_marks_threshold_and_chosen_count)
{
    /* A real plan folder (its plan.csv and scaling.csv as plan writes them),
     * with an efficiency threshold of its own. */
    char *r = res_dir("planth");
    cr_assert_eq(sh("%s plan configs/w2.ini --set plan.efficiency=0.85 --set plan.max_gpus=8 -o %s "
                    "-q --no-sync",
                    BIN, r),
                 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    cr_assert_eq(res.kind, STALL_RESULT_PLAN);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/scaling.dat", r);
    cr_assert_eq(rd_rows(p, NULL), 4, "1, 2, 4 and 8 GPUs");
    /* The chosen count is plan.csv's max_efficient_gpus. */
    snprintf(p, sizeof p, "%s/plan.csv", r);
    stall_table *t = NULL;
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    double chosen = NAN;
    for (size_t i = 0; i < t->nrows; i++)
        if (strcmp(stall_table_get(t, i, 0), "max_efficient_gpus") == 0)
            chosen = stall_table_num(t, i, 1);
    stall_table_free(t);
    cr_assert(chosen >= 1 && chosen <= 8, "%g", chosen);
    snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "threshold = 85\n"), "%s", gp);
    char want[64];
    snprintf(want, sizeof want, "chosen = %.9g\n", chosen);
    cr_assert(strstr(gp, want), "%s: %s", want, gp);
    free(gp);
}

Test(plot, real_plan_log_log_throughput)
{
    NEED_GNUPLOT();
    char *r = res_dir("plan");
    cr_assert_eq(sh("%s plan configs/w2.ini --set plan.max_gpus=8 -o %s -q", BIN, r), 0);
    const char *want[] = {"scaling"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
    char *gp = rd_slurp(p);
    /* The ideal line is straight: log x and log y on the throughput panel. */
    char *thr = strstr(gp, "set title \"Throughput");
    char *plot = thr ? strstr(thr, "\nplot ") : NULL;
    cr_assert(thr && plot && strstr(gp, "set logscale x") && strstr(thr, "set logscale y") &&
                  strstr(thr, "set logscale y") < plot,
              "%s", gp);
    free(gp);
}

/* The throughput axis's tics are 1, 2 or 5 x 10^k, at least 2 of them within
 * the values drawn (a base-2 axis read 66k and 262k for 65536 and 262144),
 * and the efficiency panel's are gnuplot's own again. Both a curve of 4 GPUs
 * (under a decade) and one of 1024. */
Test(plot, real_plan_throughput_tics_are_round_numbers)
{
    NEED_GNUPLOT();
    const int gpus[] = {4, 1024};
    for (int g = 0; g < 2; g++) {
        char name[32];
        snprintf(name, sizeof name, "plantics%d", gpus[g]);
        char *r = res_dir(name);
        cr_assert_eq(
            sh("%s plan configs/w2.ini --set plan.max_gpus=%d -o %s -q --plots", BIN, gpus[g], r),
            0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/scaling.dat", r);
        dat_t *d = dat_read(p);
        double lo = INFINITY, hi = 0;
        for (int i = 0; i < d->nrows; i++)
            for (int c = 1; c <= 2; c++)
                lo = fmin(lo, d->v[i][c]), hi = fmax(hi, d->v[i][c]);
        free(d);
        snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
        char *gp = rd_slurp(p);
        const char *t = strstr(gp, "set ytics (");
        cr_assert_not_null(t, "%s", gp);
        int inside = 0;
        for (const char *q = t + strlen("set ytics ("); *q && *q != ')';) {
            char *end;
            double v = strtod(q, &end);
            cr_assert(end > q, "%s", t);
            double m = v / pow(10, floor(log10(v) + 1e-9));
            cr_assert(fabs(m - 1) < 1e-9 || fabs(m - 2) < 1e-9 || fabs(m - 5) < 1e-9,
                      "tic %g is not 1, 2 or 5 x 10^k", v);
            inside += v >= lo && v <= hi;
            q = end + strspn(end, ", ");
        }
        cr_assert_geq(inside, 2, "%d tics within %g..%g samples/s", inside, lo, hi);
        const char *eff = strstr(gp, "set title \"Efficiency");
        cr_assert(eff && strstr(eff, "set ytics autofreq"), "%s", gp);
        free(gp);
    }
}

Test(plot, real_64_ranks_heatmap_and_breakdown)
{
    NEED_GNUPLOT();
    char *r = res_dir("w64");
    cr_assert_eq(sh("%s run configs/w2.ini -o %s -q --set cluster.gpus=64 "
                    "--set cluster.gpus_per_node=8 --set run.batches=200 --set run.epochs=2 "
                    "--set fetch.resample=bootstrap --set loader.workers=2 --analyze",
                    BIN, r),
                 0);
    const char *want[] = {"stall_ranks", "cdf", "gpu_util", "epochs", "breakdown"};
    check_figures(r, want, 5);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
    dat_t *d = dat_read(p);
    /* 400 iterations, 64 ranks: a cell per (iteration, rank). */
    cr_assert_eq(d->nrows, 400 * 64);
    double mx = 0;
    for (int i = 0; i < d->nrows; i++)
        mx = fmax(mx, d->v[i][2]);
    cr_assert_gt(mx, 0, "no stall in the heatmap");
    free(d);
    check_breakdown_apart(r);
}

/* A compute-bound run with stragglers at 64 ranks: no rank waits for data
 * after an epoch's first batch, so the stall heatmap would be a blank field
 * (a new user's report): not drawn, said, and a stall_ranks figure left by
 * an earlier plot of the folder is removed. The other figures are drawn. */
Test(plot, real_straggler_run_without_stall_says_so_instead_of_a_blank_heatmap)
{
    NEED_GNUPLOT();
    char *r = res_dir("strag64");
    cr_assert_eq(sh("%s run bench/model_8x8x5000.ini -o %s -q --set run.batches=300 "
                    "--set cluster.gpus=64 --set straggler.fraction=0.02 "
                    "--set straggler.factor=5 --analyze",
                    BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "touch %s/plots/stall_ranks.png %s/plots/stall_ranks.gp", r, r);
    cr_assert_eq(sh("mkdir -p %s/plots && %s", r, p), 0);
    const char *want[] = {"cdf", "gpu_util", "epochs", "breakdown"};
    check_figures(r, want, 4);
    snprintf(p, sizeof p, "%s/cmd.log", dir);
    char *log = rd_slurp(p);
    cr_assert(log && strstr(log, "no rank waited for data after an epoch's first batch"), "%s",
              log ? log : "");
    free(log);
    snprintf(p, sizeof p, "%s/plots/stall_ranks.png", r);
    cr_assert_neq(access(p, F_OK), 0, "a stale stall_ranks.png was left");
}

/* A run too short for a figure over iterations gets a note, not a blank
 * figure: one iteration (gnuplot refused stall_ranks' empty x range, and
 * `run --plots` exited 1 after a good run), and epochs of one batch (the
 * public DLIO trace: gpu_util drew a single point, an empty field). */
Test(plot, real_runs_too_short_to_draw_say_so_instead_of_blank_figures)
{
    NEED_GNUPLOT();
    char p[1200];
    snprintf(p, sizeof p, "%s/cmd.log", dir);
    char *one = sub("one_batch.csv");
    cr_assert_eq(sh("head -2 traces/w2/trace.csv | tee %s", one), 0);
    char *r = res_dir("one");
    cr_assert_eq(sh("%s run %s --set scenario.mode=model -o %s -q --plots", BIN, one, r), 0);
    const char *want1[] = {"epochs"};
    check_figures(r, want1, 1);
    char *log = rd_slurp(p);
    cr_assert(log && strstr(log, "stall per rank: the run has one iteration") &&
                  strstr(log, "(CDF) of iteration time and stall: the run has one iteration") &&
                  strstr(log, "the shortest epoch has 1 iteration, one moving window"),
              "%s", log ? log : "");
    free(log);

    char *d = res_dir("dlio");
    cr_assert_eq(sh("%s run tests/public/dftracer_dlio_unet3d_2023.pfw.gz "
                    "--set scenario.mode=model -o %s -q",
                    BIN, d),
                 0);
    const char *want5[] = {"cdf", "epochs"};
    check_figures(d, want5, 2);
    log = rd_slurp(p);
    cr_assert(log && strstr(log, "the shortest epoch has 1 iteration, one moving window"), "%s",
              log ? log : "");
    free(log);
}

Test(plot, real_seed_folder_is_a_result_folder)
{
    NEED_GNUPLOT();
    char *r = res_dir("seed");
    cr_assert_eq(sh("%s run configs/seed-case1.ini -o %s -q", BIN, r), 0);
    cr_assert_eq(stall_result_kind_of(r), STALL_RESULT_SEED);
    cr_assert(stall_result_replaceable(r));
    const char *want[] = {"alignments"};
    check_figures(r, want, 1);
}

/* ---- the breakdown's bars are the ranks' whole time ---- */

/* The parts of row i of breakdown.dat (fields 3 on) added up. */
static double dat_bar(const dat_t *d, int i)
{
    double s = 0;
    for (int j = 2; j < d->nf[i] && j < 10; j++)
        s += d->v[i][j];
    return s;
}

/* Per rank of a tidy trace, from its rows alone: the sum over epochs of
 * (the last batch's iter_end - epoch_start), and of the recorded checkpoint
 * spans (ckpt_end - ckpt_start). */
static void trace_totals(const char *rel, int ranks, double *total, double *ckpt)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", STALL_SOURCE_DIR, rel);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    int cr = stall_table_col(t, "rank"), cb = stall_table_col(t, "batch"),
        ce = stall_table_col(t, "epoch"), ci = stall_table_col(t, "iter_end"),
        c0 = stall_table_col(t, "epoch_start"), cs = stall_table_col(t, "ckpt_start"),
        cd = stall_table_col(t, "ckpt_end");
    cr_assert(cr >= 0 && cb >= 0 && ce >= 0 && ci >= 0 && c0 >= 0 && cs >= 0 && cd >= 0);
    double last[64][64]; /* [rank][epoch]: (batch, iter_end - epoch_start) of the last batch */
    double lastb[64][64];
    for (int r = 0; r < ranks; r++) {
        total[r] = ckpt[r] = 0;
        for (int e = 0; e < 64; e++)
            lastb[r][e] = -1;
    }
    for (size_t i = 0; i < t->nrows; i++) {
        int r = (int)stall_table_num(t, i, cr), e = (int)stall_table_num(t, i, ce);
        cr_assert(r >= 0 && r < ranks && e >= 0 && e < 64);
        double b = stall_table_num(t, i, cb);
        if (b > lastb[r][e]) {
            lastb[r][e] = b;
            last[r][e] = stall_table_num(t, i, ci) - stall_table_num(t, i, c0);
        }
        if (*stall_table_get(t, i, cs))
            ckpt[r] += stall_table_num(t, i, cd) - stall_table_num(t, i, cs);
    }
    for (int r = 0; r < ranks; r++)
        for (int e = 0; e < 64; e++)
            if (lastb[r][e] >= 0)
                total[r] += last[r][e];
    stall_table_free(t);
}

/* analyze of a trace that records its checkpoints (traces/ckpt_w2_n25:
 * 1 rank, 3 epochs, a 64 MB torch.save every 25 iterations): per_rank.csv
 * has the checkpoint part, and the figure's bar, all parts stacked, is the
 * rank's time, the trace's sum over epochs of (last iter_end - epoch_start)
 * within 1e-5 s (the trace's microseconds as doubles). Without the
 * checkpoint part the bar stopped at 6.43 s of 7.43 s. */
Test(plot, real_breakdown_of_a_checkpoint_trace_reaches_the_ranks_time)
{
    char *r = res_dir("ck");
    cr_assert_eq(sh("%s analyze traces/ckpt_w2_n25/trace.csv -o %s", BIN, r), 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    double total[1], ckpt[1];
    trace_totals("traces/ckpt_w2_n25/trace.csv", 1, total, ckpt);
    cr_assert_gt(ckpt[0], 0.5, "the trace records its checkpoints");
    char p[1200];
    snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, r);
    stall_table *pr = NULL;
    cr_assert_eq(stall_table_read(p, &pr, &err), 0, "%s", err.msg);
    int ct = stall_table_col(pr, "total_s"), cc = stall_table_col(pr, STALL_COL_CHECKPOINT);
    cr_assert(ct >= 0 && cc >= 0, "per_rank.csv: no %s column", STALL_COL_CHECKPOINT);
    cr_assert_eq(pr->nrows, 1);
    cr_assert_float_eq(stall_table_num(pr, 0, ct), total[0], 1e-5);
    cr_assert_float_eq(stall_table_num(pr, 0, cc), ckpt[0], 1e-5);
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    dat_t *d = dat_read(p);
    cr_assert_eq(d->nrows, 1);
    cr_assert_eq(d->nf[0], 2 + 7, "x, rank and seven parts (the last the checkpoint)");
    cr_assert_float_eq(d->v[0][8], ckpt[0], 1e-5);
    cr_assert_float_eq(dat_bar(d, 0), total[0], 1e-5, "bar %.6f s, the rank's time %.6f s",
                       dat_bar(d, 0), total[0]);
    free(d);
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "using 1:($3+$4+$5+$6+$7+$8+$9)") && strstr(gp, "title \"checkpoint\""),
              "the checkpoint segment is not drawn on top: %s", gp);
    free(gp);
    stall_table_free(pr);
}

/* A what-if with checkpoints (`--set checkpoint.every_iterations=14
 * --analyze` on the same trace): the simulated bar is the simulated rank's
 * time, and its checkpoint part is the loop's wait for the checkpoints the
 * rule of docs/model.md 2.5 charges, checkpoints.csv's stall_s summed over
 * the epochs. A source that records none (a what-if with checkpoints off)
 * has the column empty, its segment drawn as 0. */
Test(plot, real_breakdown_of_a_checkpoint_whatif_reaches_the_ranks_time)
{
    char ini[1200];
    snprintf(ini, sizeof ini, "%s/ck.ini", dir);
    rd_write(dir, "ck.ini",
             "[scenario]\nname = ck\nmode = model\n[trace]\nformat = tidy\n"
             "path = %s/traces/ckpt_w2_n25/trace.csv\n",
             STALL_SOURCE_DIR);
    char *r = res_dir("ckw");
    cr_assert_eq(
        sh("%s run %s -o %s -q --set checkpoint.every_iterations=14 --analyze", BIN, ini, r), 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    char p[1200];
    snprintf(p, sizeof p, "%s/fetch-none_start-none/checkpoints.csv", r);
    stall_table *ck = NULL;
    cr_assert_eq(stall_table_read(p, &ck, &err), 0, "%s", err.msg);
    int cst = stall_table_col(ck, "stall_s"), cep = stall_table_col(ck, "epoch_s");
    cr_assert(cst >= 0 && cep >= 0);
    double stall = 0, epochs = 0;
    for (size_t i = 0; i < ck->nrows; i++) {
        stall += stall_table_num(ck, i, cst);
        epochs += stall_table_num(ck, i, cep);
    }
    cr_assert_gt(stall, 1.0, "14 iterations: 4 checkpoints per epoch");
    snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, r);
    stall_table *pr = NULL;
    cr_assert_eq(stall_table_read(p, &pr, &err), 0, "%s", err.msg);
    int ct = stall_table_col(pr, "total_s"), cc = stall_table_col(pr, STALL_COL_CHECKPOINT);
    cr_assert(ct >= 0 && cc >= 0);
    cr_assert_eq(pr->nrows, 2, "simulated and measured");
    cr_assert_str_eq(stall_table_get(pr, 0, 0), "simulated");
    /* The simulated rank's time is the epochs' sum (one rank, epochs back
     * to back from their starts), to the ns of the files' %.9f. */
    cr_assert_float_eq(stall_table_num(pr, 0, ct), epochs, 1e-6);
    cr_assert_float_eq(stall_table_num(pr, 0, cc), stall, 1e-6);
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    dat_t *d = dat_read(p);
    cr_assert_eq(d->nrows, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_float_eq(dat_bar(d, i), stall_table_num(pr, (size_t)i, ct), 1e-6,
                           "bar %d: %.9f s against total_s %.9f s", i, dat_bar(d, i),
                           stall_table_num(pr, (size_t)i, ct));
    free(d);
    stall_table_free(pr);
    stall_table_free(ck);
    /* Checkpoints off in the what-if: its column is empty (none recorded),
     * the measured source's is not, and both bars still reach their totals. */
    r = res_dir("ck0");
    cr_assert_eq(
        sh("%s run %s -o %s -q --set checkpoint.every_iterations=0 --analyze", BIN, ini, r), 0);
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, r);
    cr_assert_eq(stall_table_read(p, &pr, &err), 0, "%s", err.msg);
    cc = stall_table_col(pr, STALL_COL_CHECKPOINT);
    cr_assert_str_eq(stall_table_get(pr, 0, cc), "", "no checkpoint in the what-if");
    cr_assert_neq(stall_table_get(pr, 1, cc)[0], '\0', "the trace's checkpoints");
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    d = dat_read(p);
    for (int i = 0; i < 2; i++)
        cr_assert_float_eq(dat_bar(d, i), stall_table_num(pr, (size_t)i, ct), 1e-6);
    free(d);
    stall_table_free(pr);
}

/* A Kineto trace with workers holds only the loop's waits: hand-over is
 * unknown (empty in per_rank.csv, inside data). The bar still reaches the
 * rank's time: the empty part stacks as 0 (as NaN, gnuplot drew nothing of
 * compute and the parts above it). */
Test(plot, real_breakdown_with_unknown_handover_reaches_the_ranks_time)
{
    char *r = res_dir("kin");
    cr_assert_eq(sh("%s analyze tests/kineto/w2_sched -o %s", BIN, r), 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    char p[1200];
    snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, r);
    stall_table *pr = NULL;
    cr_assert_eq(stall_table_read(p, &pr, &err), 0, "%s", err.msg);
    int ct = stall_table_col(pr, "total_s"), ch = stall_table_col(pr, "handover_s");
    cr_assert_str_eq(stall_table_get(pr, 0, ch), "", "hand-over unknown");
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    dat_t *d = dat_read(p); /* also: every number finite */
    cr_assert_eq(d->nrows, (int)pr->nrows);
    for (int i = 0; i < d->nrows; i++)
        cr_assert_float_eq(dat_bar(d, i), stall_table_num(pr, (size_t)i, ct), 1e-6);
    free(d);
    stall_table_free(pr);
}

/* A part unknown for one source only (the profiler trace's hand-over,
 * inside its data, beside the simulated run's known one): the key names the
 * source; it read "hand-over" as if known for every bar. (A trace profiled
 * from its start: a window opened mid-training, w2_sched, is not comparable
 * with the run, which starts it empty, and draws no measured bars.) */
Test(plot, a_part_unknown_for_one_source_is_named_so)
{
    NEED_GNUPLOT();
    char *r = res_dir("kmix");
    cr_assert_eq(sh("%s run tests/kineto/w2_nosched --set trace.workers=2 --analyze -o %s -q "
                    "--plots",
                    BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, r);
    stall_table *pr = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &pr, &err), 0, "%s", err.msg);
    int cs = stall_table_col(pr, "source"), ch = stall_table_col(pr, "handover_s");
    bool sim_known = false, meas_empty = true;
    for (size_t i = 0; i < pr->nrows; i++) {
        bool empty = !*stall_table_get(pr, i, ch);
        if (strcmp(stall_table_get(pr, i, cs), "simulated") == 0)
            sim_known |= !empty;
        else
            meas_empty &= empty;
    }
    stall_table_free(pr);
    cr_assert(sim_known && meas_empty, "the case: simulated hand-over known, measured not");
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(strstr(gp, "title \"hand-over (measured: unknown)\""), "%s", gp);
    free(gp);
}

/* The measured run is drawn beside the simulated one only where they are
 * comparable, by summary.csv's rule (vs_measured_pct empty when the what-if
 * changes GPUs, batches or epochs: docs/model.md 5). epochs used to draw a
 * 60-batch, 1-GPU measured mean beside 1000-batch epochs on 64 GPUs, and
 * breakdown a measured rank 0 beside 64 simulated ranks. */
Test(plot, measured_drawn_only_where_the_whatif_is_comparable)
{
    const struct {
        const char *name, *args;
        bool comparable;
    } runs[] = {{"far",
                 "--set cluster.gpus=4 --set cluster.gpus_per_node=4 --set run.batches=100 "
                 "--set run.epochs=2 --set fetch.resample=bootstrap",
                 false},
                {"near", "--set loader.workers=4", true}};
    for (size_t i = 0; i < 2; i++) {
        char *r = res_dir(runs[i].name);
        cr_assert_eq(sh("%s run configs/w2.ini -o %s -q --analyze %s", BIN, r, runs[i].args), 0);
        stall_table *t = NULL;
        stall_err err = {0};
        char p[1200];
        snprintf(p, sizeof p, "%s/summary.csv", r);
        cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
        bool vs = *stall_table_get(t, 0, stall_table_col(t, STALL_COL_VS_MEASURED)) != '\0';
        cr_assert_eq(vs, runs[i].comparable, "%s: vs_measured_pct", runs[i].name);
        stall_table_free(t);
        stall_plot_result res;
        cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
        snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
        char *ep = rd_slurp(p);
        snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
        char *bgp = rd_slurp(p);
        snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
        char *bdat = rd_slurp(p);
        cr_assert(ep && bgp && bdat, "%s: epochs or breakdown not drawn", runs[i].name);
        bool line = strstr(ep, "measured =") != NULL, bars = strstr(bdat, "# measured") != NULL;
        cr_assert_eq(line, runs[i].comparable, "%s: measured line in epochs.gp:\n%s", runs[i].name,
                     ep);
        cr_assert_eq(bars, runs[i].comparable, "%s: measured bars in breakdown.dat", runs[i].name);
        /* Where it is left out, each figure says so. */
        cr_assert_eq(strstr(ep, "measured not drawn") != NULL, !runs[i].comparable, "%s",
                     runs[i].name);
        cr_assert_eq(strstr(bgp, "measured not drawn") != NULL, !runs[i].comparable, "%s",
                     runs[i].name);
        free(ep);
        free(bgp);
        free(bdat);
    }
}

/* A what-if of other GPUs with only the measured trace's per_rank.csv in
 * its folder (the report suggested `stallsim analyze FOLDER/effective.ini
 * -o FOLDER`): the measured bars are not comparable and were left out, and
 * the bare plot command that remained failed gnuplot, so plot and report
 * exited 1 (a new user's report). Now the figure is not drawn, said in one
 * line naming the run with --analyze; and a run folder's note suggests
 * that run, which gives the simulated ranks. */
Test(plot, a_whatif_with_only_measured_ranks_draws_no_breakdown)
{
    NEED_GNUPLOT();
    char *r = res_dir("w4m");
    cr_assert_eq(sh("%s run traces/cpushare/sleep_ddp2_r1/trace.csv --set cluster.gpus=4 --set "
                    "cluster.gpus_per_node=4 --set cluster.scaling=weak --set "
                    "fetch.resample=bootstrap -o %s -q --no-sync",
                    BIN, r),
                 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    bool said = false;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "stallsim run") && strstr(res.note[i], "--analyze -o") &&
                strstr(res.note[i], "not comparable");
    cr_assert(said, "no note suggesting the run with --analyze");
    cr_assert_eq(sh("%s analyze %s/effective.ini -o %s", BIN, r, r), 0);
    cr_assert_eq(sh("%s plot %s", BIN, r), 0, "plot failed on a folder with measured ranks only");
    cr_assert_eq(sh("%s report %s", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    cr_assert_neq(access(p, F_OK), 0, "a breakdown was drawn from nothing");
}

/* A replay run folder without per_rank.csv: every command the note
 * suggests runs as printed and adds the ranks' breakdown (it suggested run
 * --analyze, which a replay refuses with exit 2). */
Test(plot, replay_run_breakdown_note_suggests_commands_that_run)
{
    char *r = res_dir("replay_note");
    cr_assert_eq(sh("%s run configs/example.ini -o %s -q", BIN, r), 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    const char *note = NULL;
    for (int i = 0; i < res.nnote; i++)
        if (strstr(res.note[i], "each rank's time went"))
            note = res.note[i];
    cr_assert_not_null(note, "no note on the ranks' breakdown");
    int ncmd = 0;
    for (const char *s = strstr(note, "stallsim "); s; s = strstr(s + 1, "stallsim ")) {
        size_t n = strcspn(s, ";)");
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s%.*s", BIN, (int)(n - strlen("stallsim")),
                 s + strlen("stallsim"));
        cr_assert_eq(sh("%s", cmd), 0, "suggested command failed: %s", cmd);
        const char *o = strstr(cmd, " -o ");
        cr_assert_not_null(o, "%s", cmd);
        char p[1200];
        snprintf(p, sizeof p, "%s/" STALL_RESULTS_PER_RANK, o + 4);
        cr_assert_eq(access(p, F_OK), 0, "%s wrote no %s", cmd, p);
        ncmd++;
    }
    cr_assert_gt(ncmd, 0, "no command in: %s", note);
}

/* A label's value ("3.8k" -> 3800) and the half step of its last digit. */
static double label_value(const char *l, double *half)
{
    char *end;
    double x = strtod(l, &end);
    cr_assert(end != l, "label '%s' is no number", l);
    const char *dot = strchr(l, '.');
    int dec = dot ? (int)(end - dot - 1) : 0;
    double u = *end == 'k' ? 1e3 : *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : 1;
    cr_assert(*end == '\0' || end[1] == '\0', "label '%s'", l);
    *half = 0.5 * pow(10, -dec) * u * (1 + 1e-9);
    return x * u;
}

/* A new user's 15 x 4 grid (dsanalyzer trace, model mode): the throughput
 * labels overlapped, 3759 and 5523 reading "375 552". Every cell label
 * written beside the figure renders its value, and a panel drawing labels
 * draws them in a font at which the widest fits its cells. */
Test(plot, real_sweep_grid_labels_render_their_values_and_fit)
{
    char *r = res_dir("swgrid");
    cr_assert_eq(sh("%s sweep configs/seed-case1.ini --set scenario.mode=model --set "
                    "fetch.resample=bootstrap --set report.samples=512 --set align.fetch=none "
                    "--set align.start=none --sweep loader.workers=2..16 --sweep "
                    "cluster.gpus=4,8,16,32 -o %s -q -j 2",
                    BIN, r),
                 0);
    stall_plot_result res;
    stall_err err = {0};
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/sweep.dat", r);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f);
    char line[512];
    int rows = 0;
    size_t wide[2] = {0, 0};
    bool thousands = false;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        int x, y;
        double v[2];
        char l[2][64];
        cr_assert_eq(sscanf(line, "%d %d %lf %lf \"%63[^\"]\" \"%63[^\"]\"", &x, &y, &v[0], &v[1],
                            l[0], l[1]),
                     6, "%s", line);
        for (int k = 0; k < 2; k++) {
            double half, lv = label_value(l[k], &half);
            cr_assert(fabs(lv - v[k]) <= half, "label '%s' for %.9g", l[k], v[k]);
            wide[k] = strlen(l[k]) > wide[k] ? strlen(l[k]) : wide[k];
        }
        thousands |= v[0] >= 1000;
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 15 * 4);
    cr_assert(thousands, "no throughput of 1000 or more: the test would not see 3.8k");
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    char *gp = rd_slurp(p);
    int drawn = 0;
    for (int k = 0; k < 2; k++) {
        char use[64];
        snprintf(use, sizeof use, "using 1:2:%d with labels boxed font \"sans,", 5 + k);
        const char *u = strstr(gp, use);
        if (!u)
            continue;
        int font = atoi(u + strlen(use));
        cr_assert(font == 8 || font == 10, "font %d", font);
        /* the panel's box margins: the last textbox style before its labels */
        int mar = -1;
        for (const char *m = strstr(gp, "noborder margins "); m && m < u;
             m = strstr(m + 1, "noborder margins "))
            mar = atoi(m + strlen("noborder margins "));
        cr_assert(mar >= 0 && mar <= 2, "margins %d", mar);
        /* 15 cells across a plot area of about 400 px; a digit 0.62 x font
         * px and the box's margins (2, 1, 0: about 1.2, 0.75, 0.15 x font
         * px), with room left between the boxes. */
        double w = (0.62 * (double)wide[k] + (mar == 2 ? 1.2 : mar == 1 ? 0.75 : 0.15)) * font;
        cr_assert_leq(w, 0.9 * 400.0 / 15, "panel %d: %zu characters at font %d are %.1f px", k,
                      wide[k], font, w);
        drawn++;
    }
    cr_assert_eq(drawn, 2, "both panels fit labels here: %s", gp);
    cr_assert_null(strstr(gp, "sprintf(\"%"), "labels formatted in gnuplot, not the .dat's");
    free(gp);
    /* 24 cells across: 2-digit labels boxed at font 8 with margins 1
     * (about 16 px each in cells of 16) joined into a white band over every
     * row; they get boxes without margins now, and the throughput's 4
     * digits no labels, which the figure's note says. */
    r = res_dir("swgrid24");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep loader.workers=1..24 --sweep "
                    "cluster.cores=1..8 -o %s -q",
                    BIN, r),
                 0);
    cr_assert_eq(stall_plot(r, &no_gnuplot, &res, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    gp = rd_slurp(p);
    const char *lab = strstr(gp, "with labels boxed");
    cr_assert_not_null(lab, "the stall share's 2 digits fit: %s", gp);
    cr_assert_null(strstr(lab + 1, "with labels boxed"), "one panel of labels: %s", gp);
    const char *m0 = strstr(gp, "noborder margins 0, 1");
    cr_assert(m0 && m0 < lab && !strstr(m0 + 1, "noborder margins 1") &&
                  !strstr(m0 + 1, "noborder margins 2"),
              "the labels' boxes have no margins: %s", gp);
    free(gp);
    bool said = false;
    for (int i = 0; i < res.nnote; i++)
        said |= strstr(res.note[i], "throughput heatmap's cells (24 x 8) are too small") != NULL;
    cr_assert(said, "the note says why the throughput cells have no labels");
    if (rd_have("gnuplot")) {
        const char *want[] = {"sweep"};
        check_figures(r, want, 1);
    }
}

/* validate --plots of the dftracer UNet3D trace: the last epoch's bar is
 * the tallest, and the key inside the plot area (top right) covered it in
 * both panels. The key is drawn outside the plot area (below it), with the
 * bottom margin that keeps it off the x label. */
Test(plot, real_validate_epochs_key_outside_the_bars)
{
    char *r = res_dir("unet3d");
    cr_assert_eq(
        sh("%s validate tests/public/dftracer_dlio_unet3d_2023.pfw.gz --plots -o %s -q", BIN, r),
        0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/epochs.dat", r);
    dat_t *d = dat_read(p);
    /* The case the key hid: the tallest simulated bar is the last epoch's. */
    int last = d->nrows - 1, top = 0;
    for (int i = 0; i < d->nrows; i++)
        if (d->v[i][3] > d->v[top][3])
            top = i;
    cr_assert_eq(top, last, "the tallest bar is epoch %d, not the last", top);
    free(d);
    snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
    char *gp = rd_slurp(p);
    const char *k = strstr(gp, "set key ");
    cr_assert_not_null(k, "%s", gp);
    cr_assert(strncmp(k, "set key below", 13) == 0 || strncmp(k, "set key outside", 15) == 0 ||
                  strncmp(k, "set key above", 13) == 0,
              "the key is inside the plot area: %.40s", k);
    cr_assert_null(strstr(k + 1, "set key "), "a second key setting");
    cr_assert(strstr(gp, "set bmargin "), "no room below the x label for the key");
    free(gp);
    if (rd_have("gnuplot")) {
        const char *want[] = {"epochs"};
        check_figures(r, want, 1);
    }
}

/* The numeric labels of an svg's middle-anchored texts (the x tics; the y
 * and colour-bar tics are anchored at an end): how many, and how many are
 * not whole numbers (the first in *frac). */
static int svg_x_tics(const char *svg, int *fractional, char *frac, size_t nfrac)
{
    int n = 0;
    *fractional = 0;
    frac[0] = '\0';
    const char *key = "text-anchor=\"middle\">";
    for (const char *s = strstr(svg, key); s; s = strstr(s + 1, key)) {
        const char *t = strstr(s, "<text>");
        if (!t || strchr(s + strlen(key), '<') != t)
            continue;
        t += 6;
        char *end = NULL;
        double v = strtod(t, &end);
        if (end == t || *end != '<')
            continue; /* a title or an axis label */
        n++;
        if (v != floor(v) && (*fractional)++ == 0)
            snprintf(frac, nfrac, "%.*s", (int)(end - t), t);
    }
    return n;
}

/* A run of 3 iterations drew stall_ranks' iteration axis with gnuplot's
 * own tics, 0, 0.5, 1, 1.5, 2: there is no iteration 0.5. Whole numbers
 * now, on a run of one rank (a panel per rank) and of 20 (a heatmap). */
Test(plot, short_runs_label_iterations_with_whole_numbers)
{
    NEED_GNUPLOT();
    const char *set[] = {"", "--set cluster.gpus=20 --set fetch.resample=bootstrap"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "short%d", i);
        char *r = res_dir(name);
        cr_assert_eq(sh("%s run configs/w2.ini --set run.batches=3 --set run.epochs=1 %s -o %s -q "
                        "--plots",
                        BIN, set[i], r),
                     0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/stall_ranks.svg", r);
        char *svg = rd_slurp(p);
        cr_assert(svg, "%s", p);
        int fractional;
        char frac[32];
        int n = svg_x_tics(svg, &fractional, frac, sizeof frac);
        cr_expect_geq(n, 3, "%s: %d x tics", p, n);
        cr_expect_eq(fractional, 0, "%s: %d of %d x tics not whole, e.g. %s", p, fractional, n,
                     frac);
        free(svg);
    }
}

/* The stall panels of a short run mark each iteration's value (2
 * iterations were drawn as one straight line between them); a long run's
 * stay lines. */
Test(plot, stall_panels_of_a_short_run_mark_each_iteration)
{
    NEED_GNUPLOT();
    const char *batches[] = {"2", "60"};
    const char *style[] = {"with linespoints pt 7", "with lines lw 1"};
    for (int i = 0; i < 2; i++) {
        char name[32];
        snprintf(name, sizeof name, "mark%d", i);
        char *r = res_dir(name);
        cr_assert_eq(sh("%s run configs/w2.ini --set run.batches=%s --set run.epochs=%d -o %s -q "
                        "--plots",
                        BIN, batches[i], i == 0 ? 1 : 3, r),
                     0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/stall_ranks.gp", r);
        char *gp = rd_slurp(p);
        cr_assert(gp, "%s", p);
        cr_expect(strstr(gp, style[i]), "%s: %s", style[i], gp);
        free(gp);
        snprintf(p, sizeof p, "%s/plots/stall_ranks.svg", r);
        char *svg = rd_slurp(p);
        cr_assert(svg, "%s", p);
        free(svg);
    }
}

/* The stall heatmap (more than 8 ranks) ends at its last cell's edge (it
 * ended half an iteration after it, a blank strip), and its colour key's
 * label is short enough to stay in the figure: "stall [s] (largest in each
 * bin of 1 iterations; colour capped at the 99th percentile)" ran off the
 * PNG's right edge. The binning is said in the title instead. */
Test(plot, stall_heatmap_ends_at_its_cells_and_keeps_its_key_label_inside)
{
    NEED_GNUPLOT();
    char *r = res_dir("heat7");
    cr_assert_eq(sh("%s run configs/w2.ini --set run.batches=7 --set run.epochs=1 --set "
                    "cluster.gpus=20 --set fetch.resample=bootstrap -o %s -q --plots",
                    BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(gp, "%s", p);
    cr_expect(strstr(gp, "set xrange [-0.5:6.5]\n"), "7 iterations, cells -0.5..6.5: %s", gp);
    cr_expect(strstr(gp, "set cblabel \"stall [s]\"\n"), "%s", gp);
    cr_expect(strstr(gp, "colour: the largest stall in each bin of 1 iteration"), "%s", gp);
    free(gp);
}

/* A run of 2 iterations: its CDF is the empirical distribution, a step of
 * 1/2 at each iteration time (drawn "with steps"), not a line between the
 * plotting positions 0 and 1, which said half the iterations took the
 * mean of the two. */
Test(plot, real_cdf_of_few_iterations_is_drawn_as_steps)
{
    NEED_GNUPLOT();
    char *r = res_dir("cdf2");
    cr_assert_eq(
        sh("%s run configs/w2.ini --set run.batches=2 --set run.epochs=1 -o %s -q", BIN, r), 0);
    const char *want[] = {"stall_ranks", "cdf", "epochs"};
    check_figures(r, want, 3);
    char p[1200];
    snprintf(p, sizeof p, "%s/fetch-none_start-none/" STALL_RESULTS_ITERATIONS, r);
    stall_table *it = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &it, &err), 0, "%s", err.msg);
    cr_assert_eq(it->nrows, 2u);
    int ci = stall_table_col(it, STALL_COL_ITERATION);
    double a = stall_table_num(it, 0, ci), b = stall_table_num(it, 1, ci);
    double t[2] = {fmin(a, b), fmax(a, b)};
    stall_table_free(it);
    snprintf(p, sizeof p, "%s/plots/cdf.dat", r);
    dat_t *d = dat_read(p);
    /* The foot of the first step, then each iteration at its fraction. */
    cr_assert_eq(d->nrows, 3);
    const double frac[3] = {0, 0.5, 1}, val[3] = {t[0], t[0], t[1]};
    for (int i = 0; i < 3; i++) {
        cr_expect_float_eq(d->v[i][0], frac[i], 1e-12, "row %d", i);
        cr_expect_float_eq(d->v[i][1], val[i], 1e-9, "row %d", i);
    }
    free(d);
    snprintf(p, sizeof p, "%s/plots/cdf.gp", r);
    char *gp = rd_slurp(p);
    cr_expect(strstr(gp, "using 2:1 with steps") && strstr(gp, "using 3:1 with steps"), "%s", gp);
    cr_expect_null(strstr(gp, "with lines"), "%s", gp);
    free(gp);
}

/* The middle-anchored numeric labels of an svg (x tics) in the half
 * [x0, x1) of the figure: their centres and lengths, in drawing order. */
static int svg_x_labels(const char *svg, double x0, double x1, double *cx, int *len, int cap)
{
    int n = 0;
    const char *key = "<g transform=\"translate(";
    for (const char *s = strstr(svg, key); s && n < cap; s = strstr(s + 1, key)) {
        double x, y;
        if (sscanf(s + strlen(key), "%lf,%lf", &x, &y) != 2)
            continue;
        const char *gt = strchr(s, '>'), *t = strstr(s, "<text>");
        if (!gt || !t || !strstr(s, "text-anchor=\"middle\"") ||
            strstr(s, "text-anchor=\"middle\"") > gt || strchr(gt + 1, '<') != t)
            continue;
        t += 6;
        t += strspn(t, " ");
        char *end = NULL;
        strtod(t, &end);
        if (end == t || *end != '<' || x < x0 || x >= x1)
            continue;
        cx[n] = x;
        len[n++] = (int)(end - t);
    }
    return n;
}

/* 64 GPUs of the w2 trace: 3 iterations within 5 ms. gnuplot's own x
 * tics put 12 labels of 6 characters on each CDF panel, run together
 * ("0.50950.510.51050.511"); at most 7 now, each clear of the next. */
Test(plot, real_cdf_x_tics_stay_apart_on_a_narrow_range)
{
    NEED_GNUPLOT();
    char *r = res_dir("cdf64");
    cr_assert_eq(sh("%s run configs/w2.ini --set cluster.gpus=64 --set cluster.gpus_per_node=8 "
                    "--set fetch.resample=bootstrap -o %s -q",
                    BIN, r),
                 0);
    const char *want[] = {"cdf", "epochs"};
    check_figures(r, want, 2);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/cdf.svg", r);
    char *svg = rd_slurp(p);
    cr_assert(svg, "%s", p);
    for (int panel = 0; panel < 2; panel++) {
        double cx[64];
        int len[64];
        int n = svg_x_labels(svg, panel * 500.0, (panel + 1) * 500.0, cx, len, 64);
        cr_expect(n >= 3 && n <= 7, "panel %d: %d x labels", panel, n);
        /* About 6 px a character at the 10 pt font, and a gap of 8 px. */
        for (int i = 1; i < n; i++)
            cr_expect_geq(fabs(cx[i] - cx[i - 1]), 6.0 * (len[i] + len[i - 1]) / 2 + 8,
                          "panel %d: labels %d and %d overlap (%.1f px apart)", panel, i - 1, i,
                          fabs(cx[i] - cx[i - 1]));
    }
    free(svg);
}

/* A new user's sweep of GPU counts, 1..256 x2: on a linear x axis the
 * labels 1, 2, 4 and 8 ran together ("1248"). A doubling axis is drawn on a
 * log scale, every value's label shown and clear of the next; an
 * arithmetic one (1..16) stays linear. */
Test(plot, real_sweep_of_doubling_values_has_a_log_axis_and_apart_labels)
{
    NEED_GNUPLOT();
    char *r = res_dir("swlog");
    cr_assert_eq(sh("%s sweep configs/w2.ini --set fetch.resample=bootstrap --set "
                    "cluster.gpus_per_node=1 --sweep 'cluster.gpus=1..256 x2' -o %s -q -j 2",
                    BIN, r),
                 0);
    const char *want[] = {"sweep"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    char *gp = rd_slurp(p);
    cr_assert(gp && strstr(gp, "set logscale x"), "%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/plots/sweep.svg", r);
    char *svg = rd_slurp(p);
    cr_assert(svg, "%s", p);
    double cx[64];
    int len[64];
    int n = svg_x_labels(svg, 0, 700, cx, len, 64);
    cr_expect_eq(n, 9, "%d x labels, not one per GPU count", n);
    for (int i = 1; i < n; i++)
        cr_expect_geq(fabs(cx[i] - cx[i - 1]), 6.0 * (len[i] + len[i - 1]) / 2 + 8,
                      "labels %d and %d overlap (%.1f px apart)", i - 1, i,
                      fabs(cx[i] - cx[i - 1]));
    free(svg);
    /* Throughput from 1 to 256 GPUs spans over a decade: a log y axis, as
     * plan draws it, said in its label, its range inside the values' (on
     * a linear one the first points lay flat along the bottom). */
    snprintf(p, sizeof p, "%s/sweep.csv", r);
    stall_table *sw = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &sw, &err), 0, "%s", err.msg);
    int ct = stall_table_col(sw, STALL_COL_THROUGHPUT_SAMPLES);
    cr_assert_geq(ct, 0);
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < sw->nrows; i++)
        lo = fmin(lo, stall_table_num(sw, i, ct)), hi = fmax(hi, stall_table_num(sw, i, ct));
    stall_table_free(sw);
    cr_assert_gt(hi / lo, 10, "%g .. %g", lo, hi);
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    gp = rd_slurp(p);
    cr_assert(strstr(gp, "set logscale y 10") && strstr(gp, "(log scale)\"\nset y2label"), "%s",
              gp);
    const char *yr = strstr(gp, "set logscale y 10\nset yrange [");
    cr_assert_not_null(yr, "%s", gp);
    double ylo = 0, yhi = 0;
    cr_assert_eq(sscanf(yr + strlen("set logscale y 10\nset yrange ["), "%lf:%lf", &ylo, &yhi), 2);
    cr_expect(ylo > 0 && ylo < lo && yhi > hi, "y range %g:%g for %g .. %g", ylo, yhi, lo, hi);
    /* and its title names the input (w2.ini's scenario, its --set keys,
     * its trace; with -o it named no key), not the swept cluster.gpus */
    cr_expect(strstr(gp, "set title \"Throughput and stall share against cluster.gpus\".\"\\n"
                         "w2-whatif+fetch.resample=bootstrap+cluster.gpus_per_node=1, trace w2\""),
              "%s", gp);
    free(gp);
    r = res_dir("swlin");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep loader.workers=1..16 -o %s -q -j 2", BIN, r),
                 0);
    check_figures(r, want, 1);
    snprintf(p, sizeof p, "%s/plots/sweep.gp", r);
    gp = rd_slurp(p);
    cr_assert(gp && !strstr(gp, "logscale"), "%s", gp);
    free(gp);
}

/* validate's epochs (and a seed folder's alignments): each label under
 * its pair of bars, where the measured (black) bar meets the simulated
 * one; it sat under the middle of the measured bar alone. */
Test(plot, real_validate_epoch_labels_under_the_pair_of_bars)
{
    NEED_GNUPLOT();
    char *r = res_dir("valpair");
    cr_assert_eq(sh("%s validate configs/w2.ini -o %s -q", BIN, r), 0);
    const char *want[] = {"epochs"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/epochs.svg", r);
    char *svg = rd_slurp(p);
    cr_assert(svg, "%s", p);
    double cx[64];
    int len[64];
    int n = svg_x_labels(svg, 0, 500, cx, len, 64);
    cr_assert_eq(n, 3, "3 epochs, %d labels", n);
    /* The measured bars of the first panel: black polygons taller than the
     * key's sample, their right edges. */
    int bars = 0;
    const char *key = "<polygon fill = 'rgb(  0,   0,   0)'";
    for (const char *s = strstr(svg, key); s; s = strstr(s + 1, key)) {
        double x[4], y[4];
        const char *pts = strstr(s, "points = '");
        cr_assert(pts);
        cr_assert_eq(sscanf(pts + 10, "%lf,%lf %lf,%lf %lf,%lf %lf,%lf", &x[0], &y[0], &x[1], &y[1],
                            &x[2], &y[2], &x[3], &y[3]),
                     8);
        double right = fmax(x[0], x[1]);
        if (fabs(y[0] - y[2]) < 20 || right > 500)
            continue;
        bool under = false;
        for (int i = 0; i < n; i++)
            under |= fabs(cx[i] - right) < 1.5;
        cr_expect(under, "no label at the pair's middle x = %.2f", right);
        bars++;
    }
    cr_expect_eq(bars, 3);
    free(svg);
}

/* `run ... -o DIR/ --plots` (a folder named with its trailing slash, as a
 * shell completes it): the note's command wrote the simulated ranks to
 * DIR/-analyze, a folder inside the result folder, and a 256-rank run's
 * note named DIR//fetch-none_start-none/ranks.csv. The folder is named
 * without the slash; the suggested -o is DIR-analyze, beside it. */
Test(plot, folder_named_with_a_trailing_slash_suggests_a_folder_beside_it)
{
    char *r = res_dir("slash");
    char *r2 = res_dir("slash256");
    cr_assert_eq(sh("%s run traces/ddp2_w2/trace.csv -o %s/ -q", BIN, r), 0);
    cr_assert_eq(sh("%s run traces/ddp2_w2/trace.csv --set cluster.gpus=80 --set "
                    "cluster.gpus_per_node=8 --set fetch.resample=bootstrap -o %s/ -q",
                    BIN, r2),
                 0);
    for (int k = 0; k < 2; k++) {
        char slashed[1100];
        snprintf(slashed, sizeof slashed, "%s/", k ? r2 : r);
        stall_plot_result res;
        stall_err err = {0};
        cr_assert_eq(stall_plot(slashed, &no_gnuplot, &res, &err), 0, "%s", err.msg);
        bool named = false;
        for (int i = 0; i < res.nnote; i++) {
            cr_expect_null(strstr(res.note[i], "/-analyze"), "%s", res.note[i]);
            cr_expect_null(strstr(res.note[i], "//"), "%s", res.note[i]);
            named |= strstr(res.note[i], k ? "ranks.csv" : "-analyze") != NULL;
        }
        cr_expect(named, "%s: no note names the folder", slashed);
        if (k == 0) {
            char want[1200];
            snprintf(want, sizeof want, "-o %s-analyze", r);
            bool beside = false;
            for (int i = 0; i < res.nnote; i++)
                beside |= strstr(res.note[i], want) != NULL;
            cr_expect(beside, "no note suggests %s", want);
        }
    }
}

/* A plan searched up to 1 GPU said "efficient up to 1 GPUs", and its
 * label was crossed by the dotted line at the chosen count (at 3 GPUs of
 * the ddp2 trace too): "1 GPU", on an opaque box in front of the line. */
Test(plot, real_plan_of_one_gpu_says_gpu_on_a_box_over_the_line)
{
    NEED_GNUPLOT();
    char *r = res_dir("plan1");
    cr_assert_eq(sh("%s plan configs/w2.ini --set plan.max_gpus=1 -o %s -q", BIN, r), 0);
    const char *want[] = {"scaling"};
    check_figures(r, want, 1);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/scaling.svg", r);
    char *svg = rd_slurp(p);
    cr_assert(svg, "%s", p);
    cr_expect(strstr(svg, "efficient up to 1 GPU,"), "no \"1 GPU,\" in %s", p);
    cr_expect_null(strstr(svg, "1 GPUs"), "%s says \"1 GPUs\"", p);
    free(svg);
    snprintf(p, sizeof p, "%s/plots/scaling.gp", r);
    char *gp = rd_slurp(p);
    const char *l = strstr(gp, "set label 1 ");
    cr_assert_not_null(l, "%s", gp);
    cr_expect(strstr(l, " boxed") && strstr(l, " boxed") < strchr(l, '\n'), "%.200s", l);
    cr_expect(strstr(gp, "set style textbox opaque"), "%s", gp);
    free(gp);
}

/* A run whose fetch times are inferred from the loop's waits (a Kineto
 * trace without fetch times): the terminal marks its row "none*", and the
 * epochs figure, which set its bar beside the measured time as any other,
 * now says the bars are a fit's (title and key). A run of measured fetch
 * times says nothing of it. */
Test(plot, inferred_fetch_times_are_said_on_the_epochs_figure)
{
    NEED_GNUPLOT();
    const char *runs[] = {"tests/kineto/torch211/ddp2_w2 --set trace.workers=2", "configs/w2.ini"};
    for (int i = 0; i < 2; i++) {
        char *r = res_dir(i ? "measured_fetch" : "inferred_fetch");
        cr_assert_eq(sh("%s run %s --plots -o %s -q", BIN, runs[i], r), 0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
        char *gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        bool said = strstr(gp, "fetch times inferred from the loop's waits (fetch_fit.csv)") &&
                    strstr(gp, "title \"simulated (fetch times inferred)\"");
        cr_expect(i ? !strstr(gp, "inferred") : said, "%s", gp);
        free(gp);
        snprintf(p, sizeof p, "%s/plots/epochs.png", r);
        cr_expect_eq(access(p, F_OK), 0, "%s", p);
    }
}

/* The notebook's own output folder (total_summary.csv, no
 * replay_summary.csv): plot drew an empty "replay" legend and report
 * failed on "replay_summary.csv: cannot open". Both now say what the folder
 * is and which command writes one they draw, writing nothing. */
Test(plot, the_notebooks_own_output_folder_is_named_and_refused)
{
    char *r = res_dir("nb_output");
    cr_assert_eq(sh("rm -rf %s && cp -r tests/golden/seed-case1/output %s", r, r), 0);
    for (int i = 0; i < 2; i++) {
        char cmd[1600];
        snprintf(cmd, sizeof cmd,
                 "%s %s %s 2>&1 >/dev/null | grep -q 'the notebook'\"'\"'s own "
                 "output (total_summary.csv without' && test ! -e %s/plots && test ! -e "
                 "%s/report.html",
                 BIN, i ? "report" : "plot", r, r, r);
        cr_expect_eq(system(cmd), 0, "%s", cmd);
    }
}

/* The breakdown of a trace without compute_end (the notebook's): its
 * barrier part is the wait for the others' data, which analyze counts as
 * data; the key called it "barrier wait" beside analyze's "barrier wait for
 * a slower rank 0.0%". A trace with compute_end keeps "barrier wait". */
Test(plot, a_barrier_wait_for_data_is_named_so_on_the_breakdown)
{
    NEED_GNUPLOT();
    const char *in[] = {"configs/example.ini", "traces/ddp2_straggler/trace.csv"};
    for (int i = 0; i < 2; i++) {
        char *r = res_dir(i ? "bd_compute_end" : "bd_no_compute_end");
        cr_assert_eq(
            sh("%s analyze %s -o %s > /dev/null && %s plot %s > /dev/null", BIN, in[i], r, BIN, r),
            0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
        char *gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        bool data = strstr(gp, "title \"barrier wait for the others' data\"") != NULL;
        cr_expect(i ? !data && strstr(gp, "title \"barrier wait\"") : data, "%s", gp);
        free(gp);
    }
}

/* A validation whose fetch times were inferred from the loop's waits
 * (fetch_fit.csv): the simulated bars are the fit's. The epochs figure
 * said "Simulated vs measured" alone (a run's said it; the public DLIO
 * trace's bars read as a validation of the model), and the breakdown named
 * its group "simulated". A validation of measured fetch times says
 * neither. */
Test(plot, a_validation_on_inferred_fetch_times_says_so_on_its_figures)
{
    NEED_GNUPLOT();
    const char *in[] = {"tests/public/dftracer_dlio_unet3d_2023.pfw.gz", "configs/w2.ini"};
    for (int i = 0; i < 2; i++) {
        char *r = res_dir(i ? "val_measured_fetch" : "val_inferred_fetch");
        cr_assert_eq(sh("%s validate %s --analyze --plots -o %s -q", BIN, in[i], r), 0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
        char *gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        bool said = strstr(gp, "fetch times inferred from the loop's waits (fetch_fit.csv)");
        cr_expect(i ? !strstr(gp, "inferred") : said, "epochs.gp: %s", gp);
        free(gp);
        snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
        gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        said = strstr(gp, "\"simulated (fetch times inferred)\" at") != NULL;
        cr_expect(i ? !strstr(gp, "inferred") : said, "breakdown.gp: %s", gp);
        free(gp);
        snprintf(p, sizeof p, "%s/plots/epochs.png", r);
        cr_expect_eq(access(p, F_OK), 0, "%s", p);
    }
}

/* A run --analyze of a trace without compute_end (the notebook's): the
 * simulated loop has a compute_end, the trace not, so only the measured
 * ranks' barrier is the wait for the others' data. The key said "barrier
 * wait" for both, drawing the measured ranks' 1500 s of waiting for data as
 * a slower rank's beside analyze's "barrier wait for a slower rank 0.0%";
 * it names the measured source now. */
Test(plot, a_barrier_wait_for_data_of_one_source_is_named_so)
{
    NEED_GNUPLOT();
    char *r = res_dir("bd_mixed");
    cr_assert_eq(sh("%s run configs/example-whatif.ini --analyze --plots -o %s -q", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = stall_read_file(p, NULL);
    cr_assert_not_null(gp, "%s", p);
    cr_expect(strstr(gp, "title \"barrier wait (measured: for data)\""), "%s", gp);
    cr_expect_null(strstr(gp, "title \"barrier wait\""), "%s", gp);
    free(gp);
}

/* A what-if run with --analyze --plots draws its simulated ranks; then
 * stallsim analyze -o the folder (what the notes suggest for a comparable
 * run) replaces per_rank.csv by the measured run's, which this what-if is
 * not comparable with. plot said "not drawn" but left the earlier
 * breakdown.png in plots/, the simulated ranks of a per_rank.csv no longer
 * there. */
Test(plot, a_breakdown_replaced_by_a_note_leaves_no_earlier_figure)
{
    NEED_GNUPLOT();
    char *r = res_dir("w4stale");
    cr_assert_eq(sh("%s run traces/cpushare/sleep_ddp2_r1/trace.csv --set cluster.gpus=4 --set "
                    "cluster.gpus_per_node=4 --set cluster.scaling=weak --set "
                    "fetch.resample=bootstrap --analyze --plots -o %s -q --no-sync",
                    BIN, r),
                 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/breakdown.png", r);
    cr_assert_eq(access(p, F_OK), 0, "no breakdown drawn from the simulated ranks");
    cr_assert_eq(sh("%s analyze %s/effective.ini -o %s > /dev/null", BIN, r, r), 0);
    cr_assert_eq(sh("%s plot %s > /dev/null", BIN, r), 0);
    static const char *const ext[] = {"png", "svg", "dat", "gp"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/plots/breakdown.%s", r, ext[i]);
        cr_expect_neq(access(p, F_OK), 0, "%s left beside the note that replaces it", p);
    }
}

/* The epochs figure of a run of many epochs: a tic per epoch ran 150
 * epochs' labels together into one black band under the axis; gnuplot's
 * whole-number steps label them apart. A run of 3 epochs keeps one tic per
 * epoch. */
Test(plot, epochs_figure_of_many_epochs_keeps_its_tics_apart)
{
    NEED_GNUPLOT();
    const char *set[] = {"--set run.epochs=150 --set fetch.resample=bootstrap", ""};
    for (int i = 0; i < 2; i++) {
        char *r = res_dir(i ? "ep3" : "ep150");
        cr_assert_eq(sh("%s run configs/w2.ini %s --plots -o %s -q", BIN, set[i], r), 0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/epochs.gp", r);
        char *gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        bool one = strstr(gp, "set xtics 1\n") != NULL;
        cr_expect(i ? one : !one, "%s", gp);
        free(gp);
        snprintf(p, sizeof p, "%s/plots/epochs.png", r);
        cr_expect_eq(access(p, F_OK), 0, "%s", p);
    }
}

/* The stall panels of a run of 150 epochs marked the first 50 epoch starts
 * only, under an x label saying "dashed: epoch start": the run looked as if
 * its epochs stopped at iteration 3000 of 9000. Every epoch start or none,
 * and the label says so only where they are drawn. */
Test(plot, stall_panels_mark_every_epoch_start_or_none)
{
    NEED_GNUPLOT();
    const char *set[] = {"--set run.epochs=150 --set fetch.resample=bootstrap", ""};
    const int starts[] = {149, 2};
    for (int i = 0; i < 2; i++) {
        char *r = res_dir(i ? "sr3" : "sr150");
        cr_assert_eq(sh("%s run configs/w2.ini %s --plots -o %s -q", BIN, set[i], r), 0);
        char p[1200];
        snprintf(p, sizeof p, "%s/plots/stall_ranks.gp", r);
        char *gp = stall_read_file(p, NULL);
        cr_assert_not_null(gp, "%s", p);
        int arrows = 0;
        for (const char *q = gp; (q = strstr(q, "set arrow from ")); q++)
            arrows++;
        bool said = strstr(gp, "dashed: epoch start") != NULL;
        cr_expect(arrows == 0 ? !said : arrows == starts[i] && said,
                  "%d epoch starts of %d marked, label %s", arrows, starts[i],
                  said ? "says so" : "silent");
        cr_expect(i ? arrows == starts[i] : true, "%d of %d epoch starts", arrows, starts[i]);
        free(gp);
    }
}

/* ---- an interrupted plot ---- */

/* Names in folder d containing part. */
static int plot_count_named(const char *d, const char *part)
{
    DIR *o = opendir(d);
    if (!o)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(o)) != NULL)
        n += strstr(e->d_name, part) != NULL;
    closedir(o);
    return n;
}

/* Starts `stallsim plot folder`, its output to /dev/null. */
static pid_t plot_spawn(const char *folder)
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
            _exit(126);
        execl(BIN, BIN, "plot", folder, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Waits until folder holds a name containing part (true), or pid ended or
 * 300 s passed (false); polls every 2 ms. */
static bool plot_wait_named(const char *folder, const char *part, pid_t pid)
{
    struct timespec ms2 = {0, 2000000};
    for (int i = 0; i < 150000; i++, nanosleep(&ms2, NULL)) {
        if (plot_count_named(folder, part) > 0)
            return true;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return false;
    }
    return false;
}

Test(plot, interrupted_plot_keeps_the_old_plots_and_a_killed_ones_work_is_removed, .timeout = 600)
{
    /* plot wrote into plots/ file by file: Ctrl-C or SIGTERM while gnuplot
     * rendered left a half folder (some figures new, some old or missing)
     * and <name>.tmp.{png,svg}. Now the figures go to plots.tmp.<pid>,
     * which replaces plots/ whole at the end; the signal is sent once that
     * work folder appears, so nothing depends on timing. */
    const char *ini = sub("p.ini");
    rd_write(dir, "p.ini",
             "[scenario]\nname = p\nmode = model\n[trace]\nformat = none\n[loader]\nworkers = 2\n"
             "[cluster]\ngpus = 4\n[fetch]\nmean_s = 0.1\ndist = lognormal\nsigma = 0.3\n"
             "[compute]\nmean_s = 0.05\n[run]\nbatches = 2000\n");
    const char *res = sub("res");
    cr_assert_eq(sh("%s run %s -o %s -q", BIN, ini, res), 0);
    cr_assert_eq(sh("%s plot %s", BIN, res), 0);
    const char *plots = sub("res/plots");
    FILE *f = fopen(sub("res/plots/old.txt"), "w");
    cr_assert_not_null(f);
    fputs("the old plots/\n", f);
    fclose(f);
    int before = plot_count_named(plots, ".");
    const int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        pid_t pid = plot_spawn(res);
        bool seen = plot_wait_named(res, "plots.tmp.", pid);
        int st = 0;
        kill(pid, sigs[i]);
        waitpid(pid, &st, 0);
        cr_assert(seen, "no work folder plots.tmp.PID appeared in %s", res);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i],
                  "plot should die of signal %d (status %d)", sigs[i], st);
        cr_expect_eq(plot_count_named(res, ".tmp"), 0, "work folders left in %s", res);
        cr_expect_eq(plot_count_named(plots, ".tmp"), 0, "temporary files left in %s", plots);
        cr_expect(rd_exists(plots, "old.txt"), "the old plots/ was not kept whole");
        cr_expect_eq(plot_count_named(plots, "."), before, "the old plots/ changed");
    }
    /* SIGKILL leaves the work folder; the next plot removes it and replaces
     * plots/ whole. */
    pid_t pid = plot_spawn(res);
    bool seen = plot_wait_named(res, "plots.tmp.", pid);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_assert(seen, "no work folder plots.tmp.PID appeared in %s", res);
    cr_assert_eq(plot_count_named(res, "plots.tmp."), 1);
    cr_assert_eq(sh("%s plot %s", BIN, res), 0);
    cr_expect_eq(plot_count_named(res, ".tmp"), 0, "the killed plot's work folder was left");
    cr_expect_not(rd_exists(plots, "old.txt"), "plots/ was not replaced whole");
    cr_expect(rd_exists(plots, "cdf.dat"));
}

/* A hand-edited number in a result table that stallsim never writes
 * (garbage, inf, nan where it writes nothing) is refused by plot and
 * report, naming file, line and column, and nothing is written; before, it
 * was drawn as a gap or an infinite bar. */
Test(plot, a_number_stallsim_never_writes_is_refused_naming_the_cell)
{
    static const char *const bad[] = {"garbage", "inf", "nan", "0x1p3"};
    char cmd[2400];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(cmd, sizeof cmd, "rm -rf %s/* && true", dir);
        cr_assert_eq(system(cmd), 0);
        rd_run(dir, 2, 1, 4);
        /* iterations.csv line 3 (epoch 0, batch 1): its stall_s, column 5 */
        char it[1200];
        snprintf(it, sizeof it, "%s/fetch-none_start-none/" STALL_RESULTS_ITERATIONS, dir);
        snprintf(cmd, sizeof cmd, "sed -i '3s/^\\([^,]*,[^,]*,[^,]*,[^,]*,\\)[^,]*/\\1%s/' %s",
                 bad[i], it);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        stall_plot_result res;
        stall_err err = {0};
        cr_expect_eq(stall_plot(dir, &no_gnuplot, &res, &err), STALL_EPARSE, "'%s' was drawn",
                     bad[i]);
        char want[1400];
        snprintf(want, sizeof want, "%s:3:5: column 'stall_s': '%s' is not a number", it, bad[i]);
        cr_expect(strstr(err.msg, want), "%s (want %s)", err.msg, want);
        cr_expect_not(rd_exists(dir, "plots"), "plots/ written");
        /* report, from the command line: one line, exit 2, no report.html */
        char line[2048] = "";
        snprintf(cmd, sizeof cmd, "%s report %s 2>&1 >/dev/null", BIN, dir);
        FILE *f = popen(cmd, "r");
        cr_assert_not_null(f);
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        int st = pclose(f);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "report: status %d", st);
        cr_expect(strstr(line, want), "report said: %s", line);
        cr_expect_not(rd_exists(dir, "report.html"), "report.html written");
    }
}

/* The title of every figure of folder r (each script's multiplot title or
 * first set title) names the input src: a figure copied out of its folder,
 * or beside another run's, said only what it drew, not from which trace or
 * scenario. */
static void titles_name(const char *r, const char *src, int nwant)
{
    char p[1200];
    snprintf(p, sizeof p, "ls %s/plots/*.gp > %s/gps.txt", r, dir);
    cr_assert_eq(system(p), 0);
    snprintf(p, sizeof p, "%s/gps.txt", dir);
    char *list = rd_slurp(p);
    cr_assert_not_null(list);
    int n = 0;
    for (char *save = NULL, *f = strtok_r(list, "\n", &save); f; f = strtok_r(NULL, "\n", &save)) {
        char *gp = rd_slurp(f);
        cr_assert_not_null(gp, "%s", f);
        const char *m = strstr(gp, "multiplot layout"), *t = strstr(gp, "set title \"");
        const char *at = m && (!t || m < t) ? strstr(m, "title \"") : t;
        cr_assert_not_null(at, "%s: no title", f);
        const char *eol = strchr(at, '\n');
        cr_assert_not_null(eol);
        char line[1200];
        snprintf(line, sizeof line, "%.*s", (int)(eol - at), at);
        cr_expect(strstr(line, src), "%s: the title does not name '%s': %s", f, src, line);
        free(gp);
        n++;
    }
    free(list);
    cr_expect_eq(n, nwant, "%s: %d scripts", r, n);
}

Test(plot, real_figure_titles_name_their_input)
{
    char *r = res_dir("tv");
    cr_assert_eq(sh("%s validate traces/ddp2_straggler --analyze -o %s -q", BIN, r), 0);
    cr_assert_eq(sh("%s plot %s > /dev/null", BIN, r), 0);
    /* validate's epochs and the bars: the trace's measured configuration */
    titles_name(r, "validate: ddp2_straggler, measured configuration", 2);
    r = res_dir("tr");
    cr_assert_eq(sh("%s run configs/w2.ini --analyze --plots -o %s -q", BIN, r), 0);
    titles_name(r, " - w2-whatif, trace w2", 5);
    r = res_dir("tx");
    cr_assert_eq(sh("%s run configs/example.ini --plots -o %s -q", BIN, r), 0);
    titles_name(r, " - example", 4);
    r = res_dir("ts");
    cr_assert_eq(sh("%s run configs/seed-case1.ini --plots -o %s -q", BIN, r), 0);
    titles_name(r, " - seed-case1", 1);
    r = res_dir("tp");
    cr_assert_eq(sh("%s plan configs/w2.ini --set plan.max_gpus=4 --plots -o %s -q", BIN, r), 0);
    titles_name(r, " - w2-whatif, trace w2", 1);
    /* analyze writes no effective.ini: its input, as its default folder
     * names it, from analyze.csv (not the folder -o gave) */
    r = res_dir("analyze-strag");
    cr_assert_eq(sh("%s analyze traces/ddp2_straggler -o %s > /dev/null", BIN, r), 0);
    cr_assert_eq(sh("%s plot %s > /dev/null", BIN, r), 0);
    titles_name(r, " - analyze-ddp2_straggler", 1);
}

/* A sweep over trace.path names no one trace in its title: it named the
 * first point's ("Sweep over two axes - w2-whatif, trace w1") over a grid
 * of w1, w2 and w4, whose axis names each. A sweep of one trace keeps it. */
Test(plot, real_sweep_over_traces_names_no_one_of_them)
{
    char *r = res_dir("swtr");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep trace.path=traces/w1/trace.csv,"
                    "traces/w4/trace.csv --sweep loader.workers=1,2 --plots -o %s -q",
                    BIN, r),
                 0);
    titles_name(r, " - w2-whatif\"", 1);
    r = res_dir("sw1tr");
    cr_assert_eq(sh("%s sweep configs/w2.ini --sweep loader.workers=1,2 --plots -o %s -q", BIN, r),
                 0);
    titles_name(r, " - w2-whatif, trace w2\"", 1);
}

/* The stall panels leave a margin left of iteration 0: its stall, the
 * epoch's start-up and often the tallest of the run (9.2 s on rank 0 of
 * example-whatif.ini, against 3.6 s after it), was drawn on the left
 * border, unseen, while it set the y range of every panel. */
Test(plot, real_stall_panels_show_the_first_iterations_stall)
{
    char *r = res_dir("sr0");
    cr_assert_eq(sh("%s run configs/example-whatif.ini --plots -o %s -q", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/stall_ranks.dat", r);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    char line[4096];
    double first = 0, later = 0;
    size_t rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        double v[7];
        cr_assert_eq(sscanf(line, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                            &v[5], &v[6]),
                     7, "%s", line);
        for (int k = 3; k < 7; k++)
            *(rows ? &later : &first) = fmax(rows ? later : first, v[k]);
        rows++;
    }
    fclose(f);
    cr_assert_eq(rows, 850);
    cr_assert_gt(first, 2 * later, "iteration 0: %g s, after: %g s", first, later);
    snprintf(p, sizeof p, "%s/plots/stall_ranks.gp", r);
    char *gp = rd_slurp(p);
    const char *xr = strstr(gp, "set xrange [");
    cr_assert_not_null(xr, "%s", gp);
    double lo = 0, hi = 0;
    cr_assert_eq(sscanf(xr + strlen("set xrange ["), "%lf:%lf", &lo, &hi), 2);
    cr_expect_float_eq(hi, 849, 1e-9);
    /* 1% of the width: iteration 0's line is 8 px right of the border */
    cr_expect_leq(lo, -0.01 * 849 + 1e-9, "x range %g:%g", lo, hi);
    double ymax = 0;
    const char *yr = strstr(gp, "set yrange [0:");
    cr_assert(yr && sscanf(yr + strlen("set yrange [0:"), "%lf", &ymax) == 1, "%s", gp);
    cr_expect_geq(ymax, first, "y range to %g under iteration 0's %g s", ymax, first);
    free(gp);
}

/* A trace with the checkpoint columns but no checkpoint (traces/gpu/h100_w4:
 * ckpt_start empty, so the measured checkpoint_s is 0): no checkpoint part,
 * whose key entry stood over a part drawn nowhere; a trace that did
 * checkpoint keeps it (real_breakdown_of_a_checkpoint_trace_...). */
Test(plot, real_breakdown_without_a_checkpoint_has_no_checkpoint_key)
{
    char *r = res_dir("h100");
    cr_assert_eq(sh("%s validate traces/gpu/h100_w4 --analyze --plots -o %s -q", BIN, r), 0);
    char p[1200];
    snprintf(p, sizeof p, "%s/per_rank.csv", r);
    char *pr = rd_slurp(p);
    cr_assert(pr && strstr(pr, "checkpoint_s") && strstr(pr, "\nmeasured,0,"), "%s", pr);
    free(pr);
    snprintf(p, sizeof p, "%s/plots/breakdown.gp", r);
    char *gp = rd_slurp(p);
    cr_assert_not_null(gp, "%s", p);
    cr_expect_null(strstr(gp, "title \"checkpoint"), "%s", gp);
    cr_expect(strstr(gp, "title \"all-reduce + step\""), "%s", gp);
    free(gp);
    snprintf(p, sizeof p, "%s/plots/breakdown.dat", r);
    char *dat = rd_slurp(p);
    cr_expect(dat && !strstr(dat, "checkpoint_s (x:"), "%s", dat);
    free(dat);
}
