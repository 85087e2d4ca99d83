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
#include "stall/dsanalyzer.h"
#include "stall/model.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The measured run, decomposed. Arrays [(e * ranks + r) * batches + k] and
 * [e * batches + k]; ns. */
/* What a trace's CPU columns say, as the model takes it (docs/model.md 2.3,
 * "CPU time from the trace"; jobs/cpudemand.c). */
typedef struct stall_measured_cpu {
    bool has;             /* the trace measured CPU time */
    int cores;            /* the node's cores; 0: not said */
    double fetch_share;   /* CPU work of a fetch (fetch_cpu + turn_cpu) / its D */
    double compute_share; /* compute_cpu / C */
    stall_cpu_demand demand;
    stall_time sync_cpu; /* of demand.tail_cpu, the gradient all-reduce's (sync_cpu) */
} stall_measured_cpu;

typedef struct stall_measured {
    int ranks, epochs;
    int64_t batches;
    int workers, prefetch; /* from the trace; -1 when it does not say */
    int64_t samples;       /* per batch per rank; 0 unknown */
    int64_t samples_last;  /* in each rank's last batch of an epoch (DistributedSampler gives
                              every rank as many); 0 unknown */
    stall_time *fetch, *compute, *tail, *gap;
    stall_time startup, handover;
    stall_time *handover_epoch; /* [e] mean hand-over of epoch e (handover: over all) */
    stall_time turnaround;      /* mean worker gap between batches, included in fetch */
    double *epoch_s;            /* [e] measured epoch time */
    double *stall_s;            /* [e] mean over batches of max_r stall */
    double *start_spread_s;     /* [e] latest minus earliest rank's epoch_start, s (the model
                                   starts every rank at the earliest; docs/model.md 2.4) */
    int *start_last;            /* [e] the rank that started epoch e last */
    stall_time *late;           /* [e * ranks + r] rank r's epoch_start minus the earliest
                                   rank's (the model starts it that late); NULL: all 0 */
    bool late_any;              /* some late[] > 0 ([ranks] late_start has an effect) */
    bool late_wide;             /* some epoch's start spread exceeds 5% of it (said) */
    double *epoch_fetch_s;      /* [e] mean fetch duration of the epoch; NULL when not known */
    double *epoch_fetch_var;    /* [e] variance of the epoch's fetches, s^2; NULL: not known */
    stall_time *read_above;     /* [e] ns: epoch_fetch_s[e] minus the fastest epoch's (the
                                   storage tiers take it for the epoch's measured reads) */
    stall_time read_above_mean; /* their mean over the epochs */
    double mean_fetch_s;        /* over everything */
    int workers_from;           /* stall_workers_from: where `workers` came from */
    int workers_trace;          /* what a Kineto or dftracer trace reported where [trace]
                                   workers overrode it with another count (0: no such) */
    int workers_shown;          /* what a notebook trace's fetch starts show where [trace]
                                   workers gave another count they allow (0: no such) */
    int ranks_per_node;         /* the measured layout; = ranks when the trace does not say */
    double batch_mb;            /* mean of the trace's bytes column / 1e6; 0 without one */
    bool persistent;            /* the run kept its workers across epochs: start-up from epoch 0 */
    int epoch0;                 /* the trace's label of epoch 0 (the notebook's selected epoch) */
    /* Checkpoints the trace records (tidy ckpt_* columns; docs/model.md
     * 2.5): their spans come out of the tails above. */
    int64_t ckpt_n;     /* checkpoints in the trace (0: none) */
    int64_t ckpt_every; /* the interval in iterations (the commonest) */
    double ckpt_mb;     /* mean bytes per rank / 1e6; 1 (one unit) where ckpt_unsized */
    bool ckpt_unsized;  /* the checkpoints record no size (a tidy trace without ckpt_bytes, a
                           DLIO trace): ckpt_mb is one unit and ckpt_mb_s gives the measured
                           write time back, so neither is a measurement (docs/model.md 2.5) */
    const char *ckpt_unsized_why; /* where ckpt_unsized, why, as the terminal says it: "no
                                     ckpt_bytes" (tidy) or "DLIO logs none" (static) */
    double ckpt_mb_s;    /* the node's bandwidth: ranks_per_node x mean MB / mean write time */
    double ckpt_first_s; /* the run's first checkpoint above the later ones' mean (>= 0; the
                            mean above is the later ones', with 2 or more checkpoints) */
    double *ckpt_s;      /* [e] the checkpoints' time in the epoch (max over ranks); NULL: none */
    void *fetch_fit;     /* NULL: fetch durations measured; else they were inferred from
                            the loop's waits (jobs/infer.h's wi_fit, owned, freed with m) */
    double *window_s;    /* [e] a fit of profiling windows opened mid-training (wi_fit's
                            warm_start): each window simulated at the fit after its warm-up,
                            its pipeline running, as measured (s); else NULL */
    double *window_stall_s; /* [e] the same run's stall per batch (s), as stall_s */
    stall_measured_cpu cpu; /* the trace's CPU columns; has = false without them */
} stall_measured;

/* m->cpu from a tidy trace's CPU columns and m's decomposition (means over
 * batches >= 1); sets m->ranks_per_node from the trace's when it says. */
void stall_measured_cpu_from(const stall_tidy_cpu *c, stall_measured *m);

/* Where a measured run's worker count came from. */
typedef enum stall_workers_from {
    STALL_WORKERS_TRACE = 0, /* the trace's workers column */
    STALL_WORKERS_GIVEN,     /* the INI's [trace] workers */
    STALL_WORKERS_INFERRED   /* stall_measured_infer_workers */
} stall_workers_from;

/* Decomposes a tidy trace. Returns 0 or STALL_EPARSE when it cannot be
 * (e.g. a trace whose worker column contradicts its workers column). */
int stall_measured_from_tidy(const stall_tidy_trace *t, stall_measured *m, stall_err *err);
/* The same for a run with persistent_workers (persistent): PyTorch creates
 * the workers once, so only epoch 0's first batches show the start-up (the
 * estimate's sample), and m->persistent is set for the model to pay it once. */
int stall_measured_from_tidy_p(const stall_tidy_trace *t, bool persistent, stall_measured *m,
                               stall_err *err);
void stall_measured_free(stall_measured *m);

/* Decomposes the selected epoch of a dsanalyzer trace (one epoch, G ranks,
 * N batches) as a tidy trace with: fetch_start = S, fetch_end = S + F,
 * ready = the perf row's Time (when the loop got the batch), request =
 * ready - training stall, iter_end = request + iteration time, and
 * compute_end = ready + C with C = stall_ds_compute (replay's rule:
 * iteration time - max over ranks of the stall; the barrier is not counted
 * twice). The exposed tail A(k) is then what remains up to the next request.
 * workers: the measured workers per GPU, or -1 to infer them
 * (stall_measured_infer_workers); prefetch: the measured prefetch factor,
 * or 0 for PyTorch's default 2. Returns 0 or STALL_EPARSE. */
int stall_measured_from_dsanalyzer(const stall_ds_trace *t, int workers, int prefetch,
                                   stall_measured *m, stall_err *err);

/* Infers the DataLoader workers per rank from epoch 0's fetch starts: a
 * worker starts its next batch only after finishing the previous one, so
 * rank r's first W batches start before any of its batches has finished,
 * and batch W is the first to start at or after an earlier batch's end.
 * W_r is that index (N when every batch starts before any ends; at least
 * 1: 0 workers, loading in the main process, looks like 1). Returns the W
 * most ranks agree on (ties: the smaller) and sets *agree (may be NULL) to
 * the number of ranks with that W. */
int stall_measured_infer_workers(const stall_tidy_trace *t, int *agree);

/* The value most of the g per-rank worker counts w agree on (ties: the
 * smaller); *agree (may be NULL) gets how many agree. g >= 1. */
int stall_measured_vote(const int *w, int g, int *agree);

/* Sets read_above and read_above_mean from epoch_fetch_s. */
void stall_measured_read_above(stall_measured *m);

/* Mean of the measured epoch times. */
double stall_measured_mean_epoch(const stall_measured *m);

/* Ranks that began an epoch apart (docs/model.md 2.4): the epoch of the
 * widest start spread among those whose spread exceeds `share` of the
 * measured epoch (0: any spread), or -1. */
int stall_measured_late_epoch(const stall_measured *m, double share);

#ifdef __cplusplus
}
#endif
#endif
