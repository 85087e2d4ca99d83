/*
 * stall/sweep.h - `stallsim sweep`: one scenario run per point of a grid of
 * INI values, on threads and (when built with MPI) on MPI ranks.
 *
 * The grid: the [sweep] section of the INI (and --sweep on the command
 * line), one line per swept key, `section.key = LIST`, where LIST is
 *   v1, v2, ...      values (numbers or strings, as the key takes them)
 *   A..B             integers A, A+1, ..., B
 *   A..B xF          geometric: A, A*F, A*F^2, ... up to B (F > 1, A > 0)
 *   A..B +S          arithmetic: A, A+S, ... up to B (S > 0), written with
 *                    as many decimals as A and S have
 * and `zip = a.b, c.d` (any number of lines) steps the named keys together
 * (their lists must be of one length). In replay and seed mode the [align]
 * fetch and start lists, and in model mode a given [align] fetch list, are
 * axes too (named align.fetch, align.start), placed first.
 * Points are the cartesian product of the axes (zip groups count as one
 * axis, at the place of their first key), the first axis the slowest, the
 * last the fastest: point i's index on axis a is (i / stride_a) % n_a.
 *
 * Every point is built (base configuration, then its values through the
 * same setter as --set, then stall_config_check) before anything runs or is
 * written; a bad key, list or point is an error naming the key or the
 * point's values. Limits: max_points points, and max_point_mb of memory per
 * point where it can be estimated (model mode with [cluster] gpus and [run]
 * batches given: the duration tables and per-iteration rows).
 *
 * Results (outdir): point-NNNNNN/ per point, holding effective.ini and the
 * mode's summary (summary.csv; seed mode: replay_summary.csv and
 * total_summary.csv), per-iteration files only with keep_iterations; and
 * sweep.csv: point,<one column per swept key>,<the summary's columns>, one
 * row per point in point order. A point folder is built in .point-NNNNNN.tmp
 * and renamed whole, after one sync of the file system for a batch of
 * finished folders (at most 0.25 s or 256 folders apart): a crash leaves
 * each point folder whole or absent, a kill loses the points in flight and
 * those finished since the last batch. Every point's input files are read
 * and hashed once before the first point runs (a missing one is STALL_EIO
 * naming its key, and nothing is written). A point whose folder already holds the same
 * effective.ini (configuration and input SHA-256) is not run again: an
 * interrupted sweep run again finishes the rest and writes the same
 * sweep.csv. An outdir that holds another sweep (other axes, more points,
 * or a point folder whose effective.ini differs from the new point's) is
 * moved aside whole to outdir.old-K, said in one line on term. sweep.csv is assembled from the
 * point folders, so it is byte-identical whatever the threads, ranks and interruptions.
 *
 * MPI (STALL_HAVE_MPI, under mpirun/srun): rank r runs the points
 * i = r (mod ranks); every rank needs the same outdir on a shared file
 * system; rank 0 writes sweep.csv once all ranks are done.
 */
#ifndef STALL_SWEEP_H
#define STALL_SWEEP_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_SWEEP_MAX_POINTS 1000000
#define STALL_SWEEP_MAX_POINT_MB 4096.0

typedef struct stall_sweep_opts {
    const char *outdir;   /* NULL: results/<name> */
    int jobs;             /* threads (>= 1) */
    bool keep_iterations; /* per-iteration files in every point folder */
    FILE *progress;       /* progress line (rank 0); NULL: none */
    FILE *term;           /* closing lines (rank 0); NULL: none */
    long long max_points; /* 0: STALL_SWEEP_MAX_POINTS */
    double max_point_mb;  /* 0: STALL_SWEEP_MAX_POINT_MB */
    /* A first SIGINT/SIGTERM says at once, on stderr (rank 0), that the
     * points in flight finish and a second signal stops now. */
    bool notices;
} stall_sweep_opts;

typedef struct stall_sweep stall_sweep;

/* Parses the axes of cfg (its [sweep] lines and align lists) and checks
 * every point. cfg itself keeps its [sweep] lines; each point's
 * configuration has none. Returns 0 and *out (free with
 * stall_sweep_destroy), or STALL_ECONFIG. */
int stall_sweep_create(const stall_config *cfg, const stall_sweep_opts *opts, stall_sweep **out,
                       stall_err *err);
void stall_sweep_destroy(stall_sweep *s);

/* Number of points; number of swept keys and the name of key a. */
size_t stall_sweep_points(const stall_sweep *s);
int stall_sweep_keys(const stall_sweep *s);
const char *stall_sweep_key(const stall_sweep *s, int a);
/* Point i's value of key a, as text. */
const char *stall_sweep_value(const stall_sweep *s, size_t i, int a);
/* Point i's configuration (checked). */
void stall_sweep_config(const stall_sweep *s, size_t i, stall_config *out);

typedef struct stall_sweep_result {
    size_t points, ran, skipped; /* skipped: found done by an earlier run (this rank) */
    bool interrupted;            /* SIGINT/SIGTERM: stopped after the points in flight (a
                                    second signal ends the process, through the handlers the
                                    sweep replaced: stall/cleanup.h's) */
    char outdir[STALL_PATH_MAX];
} stall_sweep_result;

/* The MPI rank this process was launched as (mpirun, srun: from the
 * launcher's environment, so it is known before and without MPI_Init);
 * 0 when not launched by MPI. Only rank 0 reports errors and draws. */
int stall_sweep_launch_rank(void);

/* Under mpirun: every rank waits here for the others, then leaves MPI.
 * Called once the command has reported (rank 0 prints the sweep's error
 * before any rank exits, so mpirun cannot kill it first); nothing when the
 * sweep did not start MPI. */
void stall_sweep_launch_end(void);

/* Runs the sweep of cfg. Returns 0 (also when interrupted: see res), or a
 * code with err naming the point that failed (the lowest one). */
int stall_sweep_run(const stall_config *cfg, const stall_sweep_opts *opts, stall_sweep_result *res,
                    stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
