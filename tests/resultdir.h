/* Hand-made result folders for the plot and report suites: every number is
 * a closed form of (epoch, batch, rank), so the tests know what the figures'
 * data must hold. */
#ifndef STALL_TESTS_RESULTDIR_H
#define STALL_TESTS_RESULTDIR_H

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stall/io.h"

static inline void rd_write(const char *dir, const char *name, const char *fmt, ...)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

/* The stall of rank r at (epoch e, batch k), seconds. */
static inline double rd_stall(int e, int k, int r)
{
    return 0.001 * ((k * 7 + r * 3 + e) % 11);
}

/* A run folder: summary.csv with one alignment (none/none) and its
 * iterations.csv: iteration_s = 0.1 + max stall, compute_s = 0.1, epoch e
 * starting at 10 * e seconds. */
static inline void rd_run(const char *dir, int ranks, int epochs, int batches)
{
    char sub[1024], path[1100];
    rd_write(dir, "summary.csv",
             "fetch_align,start_align,epoch_time_s,measured_epoch_time_s,stall_share\n"
             "none,none,1.5,1.25,0.1\n");
    snprintf(sub, sizeof sub, "%s/fetch-none_start-none", dir);
    mkdir(sub, 0755);
    snprintf(path, sizeof path, "%s/iterations.csv", sub);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("epoch,batch,iter_end_s,iteration_s,stall_s,delay_s,wait_max_s,wait_mean_s,"
          "compute_s,fetch_spread_s,start_spread_s",
          f);
    for (int r = 0; r < ranks; r++)
        fprintf(f, ",stall_r%d", r);
    fputc('\n', f);
    for (int e = 0; e < epochs; e++) {
        double t = 10.0 * e;
        for (int k = 0; k < batches; k++) {
            double mx = 0, mn = 1e9;
            for (int r = 0; r < ranks; r++) {
                double s = rd_stall(e, k, r);
                mx = s > mx ? s : mx;
                mn = s < mn ? s : mn;
            }
            double it = 0.1 + mx;
            t += it;
            fprintf(f, "%d,%d,%.9f,%.9f,%.9f,%.9f,0,0,0.1,0,0", e, k, t, it, mx, mx - mn);
            for (int r = 0; r < ranks; r++)
                fprintf(f, ",%.9f", rd_stall(e, k, r));
            fputc('\n', f);
        }
    }
    fclose(f);
}

/* Data rows of a .dat file (not comments, not blank), and the number of
 * fields of the last one. */
static inline int rd_rows(const char *path, int *fields)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    char line[65536];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        n++;
        if (fields) {
            *fields = 0;
            for (char *s = strtok(line, " \n"); s; s = strtok(NULL, " \n"))
                (*fields)++;
        }
    }
    fclose(f);
    return n;
}

static inline char *rd_slurp(const char *path)
{
    return stall_read_file(path, NULL);
}

static inline int rd_exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* gnuplot on PATH? */
static inline int rd_have(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

#endif
