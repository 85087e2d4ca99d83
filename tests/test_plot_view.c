/*
 * stallsim plot, as a user looks at the figures: real commands on real
 * traces of each format, then what the figure draws (its script and data)
 * checked where a look at the PNG found it wrong.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "resultdir.h"
#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"

static char dir[] = "/tmp/stall_plotview_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(plotview, .init = setup, .fini = teardown, .timeout = 300);

static char *sub(const char *name)
{
    static char p[4][1024];
    static int i;
    i = (i + 1) % 4;
    snprintf(p[i], sizeof p[i], "%s/%s", dir, name);
    return p[i];
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char full[4300];
    snprintf(full, sizeof full, "cd %s && %s >%s/cmd.log 2>&1", STALL_SOURCE_DIR, cmd, dir);
    int st = system(full);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char logp[1100];
        snprintf(logp, sizeof logp, "%s/cmd.log", dir);
        char *log = rd_slurp(logp);
        cr_log_error("%s: %s", cmd, log ? log : "");
        free(log);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The script of figure fig in result folder r. */
static char *gp_of(const char *r, const char *fig)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/plots/%s.gp", r, fig);
    char *gp = rd_slurp(p);
    cr_assert_not_null(gp, "%s: not written", p);
    return gp;
}

/* The longest line of the first `set title "..."` of a script (lines split
 * by gnuplot's \n), in characters. */
static int title_widest_line(const char *gp, char *title, size_t n)
{
    const char *t = strstr(gp, "set title \"");
    cr_assert_not_null(t, "no title");
    t += strlen("set title \"");
    const char *e = strstr(t, "\"\n");
    cr_assert_not_null(e);
    snprintf(title, n, "%.*s", (int)(e - t), t);
    int widest = 0, len = 0;
    for (const char *q = t; q < e; q++) {
        if (q[0] == '\\' && q[1] == 'n') {
            widest = len > widest ? len : widest;
            len = 0;
            q++;
            continue;
        }
        len++;
    }
    return len > widest ? len : widest;
}

/* A Kineto what-if whose epochs are profiling windows (not comparable with
 * the measured run) of fetch times inferred from the loop's waits: its
 * epochs figure's key ("simulated (fetch times inferred)") takes the right
 * third of the canvas, and the title, centred over what is left, ran past
 * its left edge: "ed not drawn: not comparable (...)" in the PNG. Each title
 * line stays within what a 900-px figure's plot area holds (about 76
 * characters of the 10-pt font), the sentence whole across its lines. */
Test(plotview, kineto_whatif_titles_fit_over_the_plot)
{
    char *r = sub("kddp");
    cr_assert_eq(sh("%s run tests/kineto/torch211/ddp2_w2 --set trace.workers=2 --analyze --plots "
                    "-o %s -q",
                    BIN, r),
                 0);
    const char *figs[] = {"epochs", "breakdown"};
    for (int i = 0; i < 2; i++) {
        char *gp = gp_of(r, figs[i]);
        char title[1024];
        int w = title_widest_line(gp, title, sizeof title);
        cr_expect_leq(w, 76, "%s: a title line of %d characters: %s", figs[i], w, title);
        cr_expect(strstr(title, "measured not drawn: not comparable"), "%s: %s", figs[i], title);
        cr_expect(strstr(title, "profiling windows the run starts empty"), "%s: %s", figs[i],
                  title);
        free(gp);
    }
}
