/*
 * plot.c - the figures of a result folder (stall/plot.h): which figures a
 * folder gets (by its kind, stall/results.h), the helpers every figure
 * builder shares (plot_int.h), writing the data and scripts, and running
 * gnuplot.
 *
 * The numbers drawn are computed in C (plot_run.c, plot_sweep.c) and
 * written as data files, so that the gnuplot scripts only draw (a user
 * restyles them without recomputing anything) and the tests can check the
 * numbers. Every figure is built in memory first and written atomically;
 * gnuplot then renders each script into <name>.tmp.{png,svg}, which are
 * renamed only when it succeeded. The figures are written into a work
 * folder plots.tmp.<pid> beside plots/, which replaces plots/ whole once
 * every figure is rendered (stall_work_dir_commit): an interrupted plot
 * leaves the old plots/ as it was, or none. gnuplot is started with
 * fork/exec (no shell sees a user's path); its error output is kept to
 * quote it. Each script draws the png and then the svg from a reset
 * state, so that no setting of one pass leaks into the other.
 */
#include "stall/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plot_int.h"
#include "stall/io.h"

const char *const stall_plot_colors[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                         "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

void stall_plot_note(plot_ctx *c, const char *fmt, ...)
{
    if (c->res->nnote >= STALL_PLOT_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->res->note[c->res->nnote++], sizeof c->res->note[0], fmt, ap);
    va_end(ap);
}

stall_result_kind stall_plot_kind(const char *dir)
{
    return stall_result_kind_of(dir);
}

int stall_plot_read(const char *dir, const char *name, stall_table **t, stall_err *err)
{
    char *p = stall_path_join(dir, name);
    int rc = stall_table_read(p, t, err);
    free(p);
    return rc;
}

void stall_plot_begin(plot_ctx *c, const char *name, int w, int h, const char *caption)
{
    stall_plot_result *r = c->res;
    int i = r->nfig;
    snprintf(r->name[i], sizeof r->name[i], "%s", name);
    snprintf(r->caption[i], sizeof r->caption[i], "%s", caption);
    c->dat = open_memstream(&c->fig[i].dat, &c->fig[i].datn);
    c->gp = open_memstream(&c->fig[i].gp, &c->fig[i].gpn);
    if (!c->dat || !c->gp)
        abort();
    c->w = w;
    c->h = h;
    fprintf(c->dat, "# %s: %s\n", name, caption);
    fprintf(c->gp,
            "# %s: %s\n"
            "# Written by stallsim %s; data in %s.dat. Render: gnuplot %s.gp (from any folder)\n"
            "# writes %s.png and %s.svg beside this script.\n"
            "p = ARG0; s = 0; i = 1\n"
            "while (i <= strlen(p)) { if (p[i:i] eq \"/\") { s = i }; i = i + 1 }\n"
            "if (s > 0) { cd p[1:s] }\n"
            "if (!exists(\"out\")) { out = \"%s\" }\n"
            "do for [fmt in \"png svg\"] {\n"
            "reset\n"
            "if (fmt eq \"png\") { set terminal pngcairo size %d,%d noenhanced font \"sans,10\" }"
            " else { set terminal svg size %d,%d noenhanced font \"sans,10\" background "
            "\"#ffffff\" }\n"
            "set output out.\".\".fmt\n"
            "set grid lc rgb \"#dddddd\"\n"
            "set border lc rgb \"#444444\"\n",
            name, caption, stall_version(), name, name, name, name, name, w, h, w, h);
    for (int k = 0; k < PLOT_NCOLORS; k++)
        fprintf(c->gp,
                "set linetype %d lc rgb \"%s\" lw 2\nset linetype %d lc rgb \"%s\" lw 2 dt 2\n",
                k + 1, stall_plot_colors[k], k + 9, stall_plot_colors[k]);
}

void stall_plot_end(plot_ctx *c)
{
    fputs("unset multiplot\nset output\n}\n", c->gp);
    fclose(c->dat);
    fclose(c->gp);
    c->dat = c->gp = NULL;
    c->res->nfig++;
}

void stall_plot_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN", f);
    else
        fprintf(f, " %.9g", v);
}

void stall_plot_int_tics(FILE *gp, const char *axis, double lo, double hi)
{
    /* gnuplot steps 0.5 up to a range of 4, 1 from 5 to 9, 2 from 10 */
    if (hi - lo < 10)
        fprintf(gp, "set %stics 1\n", axis);
}

void stall_plot_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
    fputc('"', f);
}

int stall_plot_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool stall_plot_measured_comparable(const char *dir)
{
    if (!stall_result_has(dir, STALL_RESULTS_SUMMARY))
        return true;
    stall_table *t = NULL;
    if (stall_plot_read(dir, STALL_RESULTS_SUMMARY, &t, NULL) != 0)
        return true; /* the run's own figure reports the bad file */
    int cm = stall_table_col(t, STALL_COL_MEASURED_EPOCH),
        cv = stall_table_col(t, STALL_COL_VS_MEASURED);
    bool ok = true;
    for (size_t i = 0; cm >= 0 && cv >= 0 && i < t->nrows && ok; i++)
        ok = !*stall_table_get(t, i, cm) || *stall_table_get(t, i, cv);
    stall_table_free(t);
    return ok;
}

double stall_plot_spread_pct(const double *v, size_t n)
{
    double lo = INFINITY, hi = -INFINITY, mag = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) {
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
            mag = fmax(mag, fabs(v[i]));
        }
    if (!isfinite(lo))
        return NAN;
    return mag > 0 ? 100 * (hi - lo) / mag : 0;
}

/* ---- what the titles name ---- */

/* Whether the header of dir's sweep.csv names col: one of the sweep's
 * axes (they come first, after "point"). */
static bool plot_sweep_axis(const char *dir, const char *col)
{
    char *csv = stall_path_join(dir, "sweep.csv");
    FILE *f = fopen(csv, "r");
    free(csv);
    if (!f)
        return false;
    char line[8192];
    bool has = false;
    if (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *save = NULL;
        for (char *t = strtok_r(line, ",", &save); t && !has; t = strtok_r(NULL, ",", &save))
            has = strcmp(t, col) == 0;
    }
    fclose(f);
    return has;
}

/* Whether the --set key kv ("k=v", len characters) is left out of a title:
 * [plan]'s (the search's own, not a what-if) and, in the sweep folder
 * sweep (NULL for another), [sweep]'s and any key sweep.csv has as a
 * column: the figures' axes, which their axis labels name (a --set
 * loader.workers=3 that --sweep loader.workers=1,2,4 overrides, or a
 * given align.fetch list, an axis of a model-mode sweep). */
static bool plot_set_left_out(const char *kv, size_t len, const char *sweep)
{
    if (len >= 5 && strncmp(kv, "plan.", 5) == 0)
        return true;
    if (!sweep)
        return false;
    if (len >= 6 && strncmp(kv, "sweep.", 6) == 0)
        return true;
    char key[128];
    size_t kl = strcspn(kv, "=");
    if (kl > len)
        kl = len;
    if (kl >= sizeof key)
        return false;
    memcpy(key, kv, kl);
    key[kl] = '\0';
    return plot_sweep_axis(sweep, key);
}

/* The --set keys of a run, plan or sweep (its points'), from
 * effective.ini's "; set k=v" lines (jobs/job.c), into out as "+k=v\n"
 * each ("" when none), less those plot_set_left_out leaves out (sweep:
 * the sweep's folder, else NULL); *more where some are not named: a
 * "; set ... N more" line, keys past out's end, or the one "; set +k=v..."
 * line of an older stallsim, which held the folder's tag, cut after 83
 * characters to "+" and 12 hex digits of its SHA-256
 * (stall_config_set_tag): the digits, and the key they cut, say nothing
 * in a title. Returns whether the file has a "; set" line (an older
 * stallsim's without: the folder's name is all that names them). */
static bool plot_ini_sets(const char *path, const char *sweep, char *out, size_t n, bool *more)
{
    out[0] = '\0';
    *more = false;
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool any = false;
    char line[1200];
    size_t o = 0;
    while (fgets(line, sizeof line, f) && line[0] == ';') {
        if (strncmp(line, "; set ", 6) != 0)
            continue;
        line[strcspn(line, "\r\n")] = '\0';
        char *tail = line + 6;
        any = true;
        if (strncmp(tail, "... ", 4) == 0) {
            *more = true;
            continue;
        }
        if (*tail != '+') {
            /* one key, as given: "+k=v" */
            size_t len = strlen(tail);
            if (plot_set_left_out(tail, len, sweep))
                continue;
            if (o + len + 3 > n) {
                *more = true;
                continue;
            }
            out[o++] = '+';
            memcpy(out + o, tail, len);
            o += len;
            out[o++] = '\n';
            out[o] = '\0';
            continue;
        }
        size_t tl = strlen(tail);
        bool cut =
            tl == 96 && tail[tl - 13] == '+' && strspn(tail + tl - 12, "0123456789abcdef") == 12;
        if (cut) {
            tail[tl - 13] = '\0';
            char *last = strrchr(tail, '+');
            if (last && last != tail)
                *last = '\0';
            *more = true;
        }
        for (char *k = tail; *k;) {
            size_t len = 1 + strcspn(k + 1, "+");
            if (!plot_set_left_out(k + 1, len - 1, sweep)) {
                if (o + len + 2 > n)
                    *more = true;
                else {
                    memcpy(out + o, k, len);
                    o += len;
                    out[o++] = '\n';
                    out[o] = '\0';
                }
            }
            k += len;
        }
    }
    fclose(f);
    return any;
}

/* The value of key in [section] of the INI file at path (its first), with
 * no comment or surrounding blanks; false where there is none. */
static bool plot_ini_value(const char *path, const char *section, const char *key, char *out,
                           size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[2048];
    bool in = false, found = false;
    size_t sl = strlen(section), kl = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        char *s = line + strspn(line, " \t");
        if (*s == '[') {
            in = strncmp(s + 1, section, sl) == 0 && s[1 + sl] == ']';
            continue;
        }
        if (!in || strncmp(s, key, kl) != 0)
            continue;
        s += kl + strspn(s + kl, " \t");
        if (*s != '=')
            continue;
        s += 1 + strspn(s + 1, " \t");
        size_t e = strcspn(s, ";#\r\n");
        while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
            e--;
        snprintf(out, n, "%.*s", (int)e, s);
        found = e > 0;
    }
    fclose(f);
    return found;
}

/* s's last path component (of at most n - 1 characters) into out. */
static void plot_base(const char *s, size_t len, char *out, size_t n)
{
    while (len > 1 && s[len - 1] == '/')
        len--;
    size_t b = len;
    while (b > 0 && s[b - 1] != '/')
        b--;
    snprintf(out, n, "%.*s", (int)(len - b), s + b);
}

/* An analyze folder's input as its default folder names it
 * (analyze-<input>), from analyze.csv's (measured, input) row; "" where
 * there is none (written before it was). A folder given with -o named
 * the figures by itself: "- an_kin" for the public Kineto trace. */
static void plot_analyze_input(const char *dir, char *out, size_t n)
{
    out[0] = '\0';
    stall_table *t = NULL;
    stall_err e = {0};
    if (stall_plot_read(dir, "analyze.csv", &t, &e) != 0)
        return;
    for (size_t i = 0; t->ncols >= 3 && i < t->nrows; i++)
        if (strcmp(stall_table_get(t, i, 0), "measured") == 0 &&
            strcmp(stall_table_get(t, i, 1), "input") == 0 && *stall_table_get(t, i, 2)) {
            snprintf(out, n, "analyze-%s", stall_table_get(t, i, 2));
            break;
        }
    stall_table_free(t);
}

/* The widest title line a 900-px figure holds, in characters (its plot
 * area's width at font sans,10; tests/test_plot_view.c checks it). */
#define PLOT_TITLE_COLS 76

/* Writes the parts (one a line: a name, "+k=v" keys, ", trace <label>")
 * into src as the end of a title, escaped for a gnuplot string: " - "
 * and the parts on the title's first line where they make at most 23
 * characters; else on lines of their own under it, as many parts to a
 * line as fit in PLOT_TITLE_COLS (a part wider than that alone on its
 * line), a line that starts with ", trace" starting with "trace". A
 * part past src's end is "+..." (src holds some 600 characters: 7 lines
 * of keys). */
static void plot_title_source(const char *parts, char *src, size_t n)
{
    size_t total = 0;
    for (const char *p = parts; *p; p++)
        total += *p != '\n';
    bool own = 3 + total > 26;
    size_t o = 0, col = 0;
    src[0] = '\0';
    if (!own) {
        snprintf(src, n, " - ");
        o = 3;
    }
    for (const char *p = parts; *p;) {
        size_t len = strcspn(p, "\n");
        const char *part = p;
        p += len + (p[len] == '\n');
        bool line_start = own && (col == 0 || col + len > PLOT_TITLE_COLS);
        if (line_start && col && strncmp(part, ", ", 2) == 0) {
            part += 2;
            len -= 2;
        }
        /* room for this part escaped, a line break and a final "+..." */
        size_t need = 2 * len + 2 + 2 + 5;
        if (o + need + 1 > n) {
            if (o + 7 < n)
                o += (size_t)snprintf(src + o, n - o, "%s+...",
                                      col + 4 > PLOT_TITLE_COLS ? "\\n" : "");
            break;
        }
        if (line_start) {
            src[o++] = '\\';
            src[o++] = 'n';
            col = 0;
        }
        for (size_t i = 0; i < len; i++) {
            if ((unsigned char)part[i] < 0x20)
                continue;
            if (part[i] == '"' || part[i] == '\\')
                src[o++] = '\\';
            src[o++] = part[i];
            col++;
        }
        src[o] = '\0';
    }
}

/* c->src: the scenario's name and its trace's, from the folder's
 * effective.ini (a sweep's: its first point's), else the folder's name.
 * A figure copied out of its folder, or one of many runs' side by side,
 * says which input it was drawn from (every title said only what). A
 * sweep over trace.path names no trace: its first point's is one of
 * several, which the figure's axis names. */
static void plot_source(plot_ctx *c)
{
    char name[128] = "", trace[512] = "", label[128] = "";
    char *ini = stall_path_join(c->dir, "effective.ini");
    bool traces = false;
    if (access(ini, F_OK) != 0) {
        free(ini);
        ini = stall_path_join(c->dir, "point-000000/effective.ini");
        traces = plot_sweep_axis(c->dir, "trace.path");
    }
    if (plot_ini_value(ini, "scenario", "name", name, sizeof name) && !traces &&
        plot_ini_value(ini, "trace", "path", trace, sizeof trace)) {
        plot_base(trace, strlen(trace), label, sizeof label);
        if (strcmp(label, "trace.csv") == 0) {
            /* a capture folder's trace.csv: the folder names it */
            char *slash = strrchr(trace, '/');
            if (slash)
                plot_base(trace, (size_t)(slash - trace), label, sizeof label);
        }
    }
    /* A run's or plan's effective.ini names its --set keys (wherever -o
     * put it), and a sweep's first point's the sweep's, less its axes. */
    char sets[1024] = "";
    bool more = false, listed = false;
    if (c->res->kind == STALL_RESULT_RUN || c->res->kind == STALL_RESULT_PLAN ||
        c->res->kind == STALL_RESULT_SWEEP)
        listed = plot_ini_sets(ini, c->res->kind == STALL_RESULT_SWEEP ? c->dir : NULL, sets,
                               sizeof sets, &more);
    free(ini);
    if (!*name && c->res->kind == STALL_RESULT_ANALYZE)
        plot_analyze_input(c->dir, name, sizeof name);
    if (!*name)
        plot_base(c->dir, strlen(c->dir), name, sizeof name);
    /* A what-if's default folder, <name>[-sweep|-plan]+<its --set keys>
     * (results/h100_w4+loader.workers=8): the keys are the question it
     * asked, and the title names them; every what-if of a trace was titled
     * by the trace's name alone, two of them side by side alike. Not
     * validate's (it leaves the what-if keys out). A run's, plan's or
     * sweep's keys come from effective.ini's "; set" lines (sets)
     * wherever -o put it, each whole: the folder's name cuts them after
     * 96 characters, and the title of `make figures`' 64-GPU run ended
     * "+run.epochs=2+...", hiding the loader.workers=2 that overrode the
     * INI's 4 (a sweep's ended "+fetch.resample+5b83ac6eed37", and with
     * -o named none). The folder's name only where the file has no
     * "; set" line (an older stallsim's). */
    char base[256];
    size_t nl = strlen(name);
    plot_base(c->dir, strlen(c->dir), base, sizeof base);
    if (!listed &&
        (c->res->kind == STALL_RESULT_RUN || c->res->kind == STALL_RESULT_SWEEP ||
         c->res->kind == STALL_RESULT_PLAN) &&
        strncmp(base, name, nl) == 0) {
        const char *tag = base + nl;
        if (strncmp(tag, "-sweep+", 7) == 0 || strncmp(tag, "-plan+", 6) == 0)
            tag = strchr(tag, '+');
        /* the folder's tag, "+k=v" each, one a line as sets has them */
        size_t o = 0;
        for (const char *k = *tag == '+' ? tag : ""; *k && o + 2 < sizeof sets; k++) {
            if (*k == '+' && o)
                sets[o++] = '\n';
            sets[o++] = *k;
        }
        if (o)
            sets[o++] = '\n';
        sets[o] = '\0';
    }
    /* the trace named once where the scenario is named after it (a trace
     * given directly: its folder's name, or its file's stem). validate
     * simulates the trace's measured configuration, not the INI's what-if
     * its [scenario] name names ("w2-whatif" of configs/w2.ini): the
     * title says so, naming the trace (a notebook trace, which has no
     * trace.path: the scenario). The parts, one a line: the name, each
     * "+k=v", ", trace <label>". */
    char parts[1400];
    if (c->res->kind == STALL_RESULT_VALIDATE) {
        snprintf(parts, sizeof parts, "validate: %s, measured configuration\n",
                 *label ? label : name);
        *sets = '\0';
        more = false;
    } else {
        snprintf(parts, sizeof parts, "%s\n%s%s", name, sets, more ? "+...\n" : "");
        if (*label && !(strncmp(label, name, nl) == 0 && (!label[nl] || label[nl] == '.'))) {
            size_t pl = strlen(parts);
            snprintf(parts + pl, sizeof parts - pl, ", trace %s\n", label);
        }
    }
    plot_title_source(parts, c->src, sizeof c->src);
}

/* ---- writing and rendering ---- */

typedef struct plot_buf {
    const char *p;
    size_t n;
} plot_buf;

static int plot_fill(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const plot_buf *b = ctx;
    fwrite(b->p, 1, b->n, f);
    return 0;
}

/* The gnuplot to run: as given, or found on PATH. NULL when none. */
static char *plot_find_gnuplot(const char *given)
{
    const char *name = given ? given : "gnuplot";
    if (strchr(name, '/'))
        return access(name, X_OK) == 0 ? stall_xstrdup(name) : NULL;
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    char *copy = stall_xstrdup(path), *save = NULL;
    char *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = stall_path_join(*d ? d : ".", name);
        struct stat st;
        if (access(p, X_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            found = p;
        else
            free(p);
    }
    free(copy);
    return found;
}

/* Runs gnuplot on plots/<name>.gp into <name>.tmp.{png,svg}, then renames
 * them into place. */
static int plot_render(const char *gnuplot, const char *plots, const char *name, stall_err *err)
{
    char script[64], outarg[96];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(outarg, sizeof outarg, "out='%s.tmp'", name);
    int fd[2];
    if (pipe(fd) != 0)
        return stall_err_set(err, STALL_EINTERNAL, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return stall_err_set(err, STALL_EINTERNAL, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        if (chdir(plots) != 0)
            _exit(126);
        char *argv[] = {"gnuplot", "-e", outarg, script, NULL};
        execv(gnuplot, argv);
        _exit(127);
    }
    close(fd[1]);
    char msg[4096];
    size_t n = 0;
    ssize_t got;
    char sink[512];
    while ((got = read(fd[0], n < sizeof msg - 1 ? msg + n : sink,
                       n < sizeof msg - 1 ? sizeof msg - 1 - n : sizeof sink)) > 0 ||
           (got < 0 && errno == EINTR))
        if (got > 0 && n < sizeof msg - 1)
            n += (size_t)got;
    msg[n] = '\0';
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    const char *ext[2] = {"png", "svg"};
    char tmp[2][160], fin[2][160];
    char *tp[2], *fp[2];
    for (int i = 0; i < 2; i++) {
        snprintf(tmp[i], sizeof tmp[i], "%s.tmp.%s", name, ext[i]);
        snprintf(fin[i], sizeof fin[i], "%s.%s", name, ext[i]);
        tp[i] = stall_path_join(plots, tmp[i]);
        fp[i] = stall_path_join(plots, fin[i]);
    }
    int rc = 0;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(tp[0], R_OK) == 0 &&
              access(tp[1], R_OK) == 0;
    if (!ok) {
        /* The last non-empty line of gnuplot's messages names the problem. */
        while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
            msg[--n] = '\0';
        char *last = strrchr(msg, '\n');
        rc = stall_err_set(err, STALL_EINTERNAL, "gnuplot failed on %s/%s (%s %d): %s", plots,
                           script, WIFEXITED(status) ? "exit" : "signal",
                           WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                           n ? (last ? last + 1 : msg) : "no message");
    }
    for (int i = 0; i < 2; i++) {
        if (ok && rename(tp[i], fp[i]) != 0 && rc == 0)
            rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", fp[i],
                               strerror(errno));
        if (!ok || rc)
            remove(tp[i]);
        free(tp[i]);
        free(fp[i]);
    }
    return rc;
}

/* Removes plots/<fig>.* (a figure said instead of drawn, no figure drawn). */
static void plot_drop_now(const char *plots, const char *fig)
{
    static const char *const ext[] = {"png", "svg", "dat", "gp"};
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s.%s", fig, ext[i]);
        char *f = stall_path_join(plots, name);
        remove(f);
        free(f);
    }
}

static int plot_folder(const char *dir, const stall_plot_opts *opts, stall_plot_result *res,
                       stall_err *err)
{
    stall_plot_opts none = {0};
    stall_plot_result local;
    if (!opts)
        opts = &none;
    if (!res)
        res = &local;
    memset(res, 0, sizeof *res);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return stall_err_set(err, STALL_EIO, "%s: not a folder", dir);
    res->kind = stall_result_kind_of(dir);
    if (res->kind == STALL_RESULT_NONE && stall_result_unfinished_sweep(dir))
        return stall_err_set(err, STALL_EIO,
                             "%s: a sweep that did not finish (point folders, no sweep.csv): run "
                             "the same stallsim sweep command again to finish it, then plot or "
                             "report its folder",
                             dir);
    if (res->kind == STALL_RESULT_NONE)
        return stall_err_set(err, STALL_EIO,
                             "%s: not a stallsim result folder (no summary.csv, validate.csv, "
                             "per_rank.csv, sweep.csv, scaling.csv or total_summary.csv)",
                             dir);
    /* The notebook's own output folder holds total_summary.csv too, but
     * not the event replay that a seed run writes beside it: report failed
     * on it with "replay_summary.csv: cannot open". */
    if (res->kind == STALL_RESULT_SEED && !stall_result_has(dir, "replay_summary.csv"))
        return stall_err_set(err, STALL_EIO,
                             "%s: the notebook's own output (total_summary.csv without stallsim's "
                             "replay_summary.csv and effective.ini): stallsim draws the folders "
                             "it writes; run the notebook's trace with mode = seed (stallsim run "
                             "CONFIG.ini, e.g. configs/seed-case1.ini) and give that folder",
                             dir);
    plot_ctx c = {.dir = dir, .res = res};
    plot_source(&c);
    int rc = 0;
    stall_table_refused_reset();
    switch (res->kind) {
    case STALL_RESULT_RUN:
        rc = stall_plot_run(&c, err);
        if (rc == 0)
            rc = stall_plot_breakdown(&c, err);
        break;
    case STALL_RESULT_VALIDATE:
        rc = stall_plot_validate(&c, err);
        if (rc == 0)
            rc = stall_plot_breakdown(&c, err);
        break;
    case STALL_RESULT_ANALYZE:
        rc = stall_plot_breakdown(&c, err);
        break;
    case STALL_RESULT_SEED:
        rc = stall_plot_seed(&c, err);
        break;
    case STALL_RESULT_SWEEP:
        rc = stall_plot_sweep(&c, err);
        break;
    case STALL_RESULT_PLAN:
        rc = stall_plot_plan(&c, err);
        break;
    case STALL_RESULT_NONE:
        break;
    }
    /* A number stallsim never writes (garbage, inf, nan where it writes
     * nothing) in a cell read as one: refused before anything is written. */
    if (rc == 0)
        rc = stall_table_refused(err);
    char *final = stall_path_join(dir, "plots"), *plots = NULL;
    if (rc == 0 && res->nfig > 0) {
        plots = stall_work_dir_begin(final, err);
        if (!plots)
            rc = err->code;
    }
    for (int i = 0; rc == 0 && i < res->nfig; i++) {
        char name[64];
        plot_buf d = {c.fig[i].dat, c.fig[i].datn}, g = {c.fig[i].gp, c.fig[i].gpn};
        snprintf(name, sizeof name, "%s.dat", res->name[i]);
        rc = stall_write_atomic_in(plots, name, plot_fill, &d, err);
        snprintf(name, sizeof name, "%s.gp", res->name[i]);
        if (rc == 0)
            rc = stall_write_atomic_in(plots, name, plot_fill, &g, err);
    }
    char *gnuplot = rc == 0 && res->nfig > 0 ? plot_find_gnuplot(opts->gnuplot) : NULL;
    for (int i = 0; rc == 0 && gnuplot && i < res->nfig; i++)
        rc = plot_render(gnuplot, plots, res->name[i], err);
    if (plots && rc == 0)
        rc = stall_work_dir_commit(final, plots, err);
    else if (plots)
        stall_work_dir_abort(plots);
    for (int i = 0; rc == 0 && !plots && i < c.ndropped; i++)
        plot_drop_now(final, c.dropped[i]);
    res->rendered = rc == 0 && gnuplot;
    FILE *f = opts->term;
    if (rc == 0 && f) {
        fprintf(f, "stallsim %s: plot %s (%s): ", stall_version(), dir,
                stall_result_kind_name(res->kind));
        if (res->nfig == 0)
            fputs("no figure fits", f);
        for (int i = 0; i < res->nfig; i++)
            fprintf(f, "%s%s", i ? ", " : "", res->name[i]);
        fputc('\n', f);
        for (int i = 0; i < res->nnote; i++)
            fprintf(f, "not drawn: %s\n", res->note[i]);
        if (res->nfig > 0 && !gnuplot)
            fprintf(f,
                    "gnuplot not found: wrote data and scripts in %s; render with gnuplot "
                    "%s/*.gp\n",
                    final, final);
        else if (res->nfig > 0)
            fprintf(f, "figures in %s/ (.png, .svg; data .dat and gnuplot scripts .gp beside)\n",
                    final);
    }
    free(gnuplot);
    free(plots);
    free(final);
    for (int i = 0; i < STALL_PLOT_MAX; i++) {
        free(c.fig[i].dat);
        free(c.fig[i].gp);
    }
    return rc;
}

int stall_plot(const char *dir, const stall_plot_opts *opts, stall_plot_result *res, stall_err *err)
{
    /* The folder without trailing slashes: `plot results/x/` suggested
     * `-o results/x/-analyze`, a folder inside the result folder, and
     * named results/x//fetch-none_start-none/ranks.csv. */
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    char *d = stall_xmalloc(n + 1);
    memcpy(d, dir, n);
    d[n] = '\0';
    int rc = plot_folder(d, opts, res, err);
    free(d);
    return rc;
}

void stall__plot_drop(plot_ctx *c, const char *fig)
{
    if (c->ndropped < STALL_PLOT_MAX)
        c->dropped[c->ndropped++] = fig;
}
