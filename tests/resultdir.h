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
#include <sys/wait.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/results.h"

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

/* A run folder: summary.csv with one alignment (none/none), its
 * iterations.csv (iteration_s = 0.1 + max stall, compute_s = 0.1, epoch e
 * starting at 10 * e seconds) and ranks.csv (the stall of each rank), with
 * the files' and columns' names of stall/results.h, which the writers use. */
static inline void rd_run(const char *dir, int ranks, int epochs, int batches)
{
    char sub[1024], path[1100], align[64];
    rd_write(dir, STALL_RESULTS_SUMMARY,
             STALL_COL_FETCH_ALIGN "," STALL_COL_START_ALIGN "," STALL_COL_EPOCH_TIME
                                   "," STALL_COL_MEASURED_EPOCH "," STALL_COL_STALL_SHARE
                                   "\nnone,none,1.5,1.25,0.1\n");
    rd_write(dir, STALL_RESULTS_MANIFEST, "[scenario]\nname = rd\n");
    snprintf(align, sizeof align, STALL_RESULTS_ALIGN_DIR, "none", "none");
    snprintf(sub, sizeof sub, "%s/%s", dir, align);
    mkdir(sub, 0755);
    snprintf(path, sizeof path, "%s/" STALL_RESULTS_ITERATIONS, sub);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    snprintf(path, sizeof path, "%s/" STALL_RESULTS_RANKS, sub);
    FILE *rk = fopen(path, "w");
    cr_assert_not_null(rk);
    fputs(STALL_ITERATIONS_HEADER "\n", f);
    fputs(STALL_RANKS_HEADER "\n", rk);
    for (int e = 0; e < epochs; e++) {
        double t = 10.0 * e;
        for (int k = 0; k < batches; k++) {
            double mx = 0, mn = 1e9;
            for (int r = 0; r < ranks; r++) {
                double s = rd_stall(e, k, r);
                mx = s > mx ? s : mx;
                mn = s < mn ? s : mn;
                fprintf(rk, "%d,%d,%d,%.9f\n", e, k, r, s);
            }
            double it = 0.1 + mx;
            t += it;
            fprintf(f, "%d,%d,%.9f,%.9f,%.9f,%.9f,0,0,0.1,0,0\n", e, k, t, it, mx, mx - mn);
        }
    }
    fclose(f);
    fclose(rk);
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

/* Runs a shell command (printf-style) from the source tree, its output in
 * dir/cmd.log, logged on failure; returns its exit status (-1: killed). */
static inline int rd_sh(const char *dir, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int rd_sh(const char *dir, const char *fmt, ...)
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

#endif
