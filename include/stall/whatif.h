/*
 * stall/whatif.h - the closed-loop model fed from a measured tidy trace:
 * `mode = model` scenarios, `stallsim validate` and `stallsim calibrate`.
 *
 * From a trace the measured run is decomposed into what the model takes as
 * input (MODEL.md): per (epoch, rank, batch) the fetch duration E - S and the
 * pre-synchronisation compute (compute_end - ready, or T(k) - max_r ready
 * when the trace has no compute_end); per (epoch, batch) the exposed tail
 * A(k) = T(k) - max_r compute end, where T(k) is when the loop next asks for
 * data; per epoch the idle gap before it; and, as medians over the trace,
 * the workers' start-up and the per-batch hand-over. What-if knobs in the
 * INI then change workers, ranks, speed factors or shared resources.
 */
#ifndef STALL_WHATIF_H
#define STALL_WHATIF_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"
#include "stall/scenario.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The measured run, decomposed. Arrays [(e * ranks + r) * batches + k] and
 * [e * batches + k]; ns. */
typedef struct stall_measured {
    int ranks, epochs;
    int64_t batches;
    int workers, prefetch; /* from the trace; -1 when it does not say */
    int64_t samples;       /* per batch per rank; 0 unknown */
    stall_time *fetch, *compute, *tail, *gap;
    stall_time startup, handover;
    stall_time turnaround; /* mean worker gap between batches, included in fetch */
    double *epoch_s;       /* [e] measured epoch time */
    double *stall_s;       /* [e] mean over batches of max_r stall */
    double mean_fetch_s;   /* over everything */
} stall_measured;

/* Decomposes a tidy trace. Returns 0 or STALL_EPARSE when it cannot be
 * (e.g. a trace whose worker column contradicts its workers column). */
int stall_measured_from_tidy(const stall_tidy_trace *t, stall_measured *m, stall_err *err);
void stall_measured_free(stall_measured *m);

/* mode = model: simulates every fetch-alignment in cfg and writes the result
 * folder as stall_scenario_run does. */
int stall_whatif_run(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* Simulates the measured configuration of cfg's tidy trace and writes
 * validate.csv (epoch,measured_s,simulated_s,error_pct, then the same for the
 * mean stall) into the result folder; prints the table to opts->term. */
int stall_validate(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* What calibrate estimates, and how well it predicts. Arrays [n], and
 * predicted_s [i * n + j]: trace i's mean epoch time simulated with trace
 * j's worker count. */
typedef struct stall_calibration {
    int n;
    int cores; /* per node: given, or fitted from the mean fetch times */
    bool cores_given;
    int gpus_per_node;                         /* as given; 0 = every rank of a trace on one node */
    double fetch_share;                        /* fraction of a measured fetch that is CPU time */
    double compute_share;                      /* fraction of a measured compute that is CPU time */
    double rms_pct;                            /* rms relative error of the cross-predictions, % */
    double fetch_share_lo, fetch_share_hi;     /* range of the near-best fits */
    double compute_share_lo, compute_share_hi; /* (rms within 0.5 points) */
    double fit_io_s, fit_cpu_s;                /* the first (linear) mean-fetch fit */
    int *workers;
    double *mean_fetch_s, *contention, *measured_s, *predicted_s;
} stall_calibration;

/* From two or more tidy traces of the same job with different worker counts,
 * estimates the CPU share of a fetch and of a compute (and the core count
 * when cores <= 0 and three or more worker counts are given): the shares
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
