/*
 * stall/measured.h - a measured run decomposed into what the closed-loop
 * model takes as input (docs/model.md): per (epoch, rank, batch) the fetch
 * duration E - S and the pre-synchronisation compute (compute_end - ready,
 * or T(k) - max_r ready when the trace has no compute_end); per (epoch,
 * batch) the exposed tail A(k) = T(k) - max_r compute end, where T(k) is
 * when the loop next asks for data; per epoch the idle gap before it; and,
 * as medians over the trace, the workers' start-up and the per-batch
 * hand-over.
 */
#ifndef STALL_MEASURED_H
#define STALL_MEASURED_H

#include "stall/base.h"
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

/* Mean of the measured epoch times. */
double stall_measured_mean_epoch(const stall_measured *m);

#ifdef __cplusplus
}
#endif
#endif
