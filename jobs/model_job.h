/*
 * model_job.h - what mode = model's job (model_job.c) shares with its
 * terminal summary (model_term.c). Private to jobs/.
 */
#ifndef STALL_JOBS_MODEL_JOB_H
#define STALL_JOBS_MODEL_JOB_H

#include <stdbool.h>
#include <stdio.h>

#include "feed.h"
#include "stall/config.h"
#include "stall/model.h"
#include "stall/report.h"

/* One fetch alignment of the run: its summary, the engine's counts, and
 * its replications. */
typedef struct wi_alignment {
    stall_align fa;
    stall_summary sum;
    stall_model_stats st;
    double *rep; /* [3 * replications]: epoch_time_s, throughput, stall_share */
    /* its folder while its files are written: held here, in memory that
     * stays reachable, not only in a frame that a signal may cut short
     * (a run killed on purpose must show valgrind no lost block) */
    char *dir;
} wi_alignment;

/* A mean for the terminal, as %.4f: "-" where there was nothing to average
 * (NaN). buf holds it. */
const char *wi_mean_text(char *buf, size_t n, double v);

/* The terminal summary of a run: its configuration, what the trace gave
 * and what was assumed, one row per fetch alignment (jobs[0..n-1]), the
 * measured epoch (comparable: whether vs_meas is filled), the contention
 * found on trace_cores (trace_from: whence; NULL: the run's own), the stall floor
 * (first_fetch: each rank's first fetch as the run was fed it). */
void wi_term(FILE *f, const stall_config *cfg, const stall_model_params *p, const stall_measured *m,
             const stall_time *first_fetch, const char *whole, const wi_alignment *jobs, int n,
             double measured, bool comparable, double contention, int trace_cores,
             const char *trace_from, const wi_cpu_fit *fit, const wi_store_fit *store,
             bool samples);

/* The line on ranks that began an epoch late in trace m (docs/model.md
 * 2.4), where the widest start spread exceeds 5% of its measured epoch (or
 * with late_start = none given: none), with what the run p does with it;
 * e0 is the trace's first epoch's label. */
void wi_late_print(FILE *f, const stall_measured *m, const stall_model_params *p, int e0,
                   bool none);

#endif
