/*
 * stall/calibrate.h - `stallsim calibrate`: from traces of one job with
 * different worker counts, the CPU share of a fetch and of a compute (and the
 * host core count), chosen by simulated cross-prediction.
 */
#ifndef STALL_CALIBRATE_H
#define STALL_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What calibrate estimates, and how well it predicts. Arrays [n], and
 * predicted_s [i * n + j]: trace i's mean epoch time simulated with trace
 * j's worker count. */
/* An rms cross-prediction error above this (in %) is a poor fit, said so. */
#define STALL_CAL_POOR_PCT 5.0

typedef struct stall_calibration {
    int n;
    int cores; /* per node: given, recorded by every trace alike, or fitted from the mean
                  fetch times */
    bool cores_given;
    const char *cores_recorded; /* where the traces recorded them ("": not taken from them) */
    char cores_differ[160];     /* the counts the traces recorded, where they differ and the
                                   count is fitted ("": not so) */
    int gpus_per_node;          /* as given; 0 = every rank of a trace on one node */
    double fetch_share;         /* fraction of a measured fetch that is CPU time */
    double compute_share;       /* fraction of a measured compute that is CPU time */
    double rms_pct;             /* rms relative error of the cross-predictions, % */
    double fetch_share_lo, fetch_share_hi;     /* range of the near-best fits */
    double compute_share_lo, compute_share_hi; /* (rms within 0.5 points) */
    double fit_io_s, fit_cpu_s;                /* the first (linear) mean-fetch fit */
    int *workers;
    int *workers_from; /* stall_workers_from: the trace's, [trace] workers, inferred */
    char **note;       /* per trace: where its workers came from and the INI keys left
                          out (NULL: nothing to say) */
    double *mean_fetch_s, *contention, *measured_s, *predicted_s;
} stall_calibration;

/* From two or more traces of the same job with different worker counts
 * (paths: tidy traces or capture folders, the notebook's CSVs, or INIs whose
 * [trace] is a tidy or a dsanalyzer trace, read as validate reads it),
 * estimates the CPU share of a fetch and of a compute (and, when cores <= 0,
 * the core count: the one every trace recorded, its cores column or its
 * capture's meta.json cpu_cores, else fitted from three or more worker
 * counts): the shares
 * that minimise the error of predicting every trace's epoch time from every
 * other, each base trace deflated by the contention it met in a simulation
 * of its own run. On failure *c is left empty. */
int stall_calibrate_fit(const char *const *paths, int n, int cores, int gpus_per_node,
                        stall_calibration *c, stall_err *err);
void stall_calibration_free(stall_calibration *c);
/* The estimate, the INI lines and the prediction table. */
void stall_calibration_print(const stall_calibration *c, const char *const *paths, FILE *out);

/* stall_calibrate_fit, then stall_calibration_print to out. */
int stall_calibrate(const char *const *paths, int n, int cores, int gpus_per_node, FILE *out,
                    stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
