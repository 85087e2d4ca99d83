/*
 * stall/model.h - the closed-loop model (docs/model.md, "mode = model"): G ranks,
 * each with a PyTorch DataLoader of W workers and prefetch factor P, a
 * training loop that asks for batches, and a DDP barrier every iteration,
 * simulated as events on the stall engine.
 *
 * Per rank r and epoch, for the k-th batch the loop takes (docs/model.md words):
 *   - batches are handed round robin to workers (k mod W, restarting at
 *     worker 0 every epoch); batches 0 .. P*W-1 at epoch start, then one per
 *     batch the loop takes, to the worker that produced it (refill on yield):
 *     Disp(r,k) = Y(r,k-P*W);
 *   - S(r,k) = max(Disp, E(r,k-W), worker ready), E = S + D'(r,k), where D'
 *     is fetch(e,r,k) after fetch_align across the ranks;
 *   - pin memory (pin > 0): one thread per rank pins arrivals one at a time,
 *     in arrival order (ties: lower batch index first), adding `pin` each;
 *   - Y(r,k) = max(Q(r,k), arrival(r,k), Y(r,k-1)) + handover, in order
 *     (head-of-line blocking), or the earliest arrival when in_order = false;
 *   - Q(r,0) = epoch start, Q(r,k) = T(k-1);
 *     T(k) = max_r (Y(r,k) + C(r,k)) + A(k);
 *   - with gradient accumulation K > 1 (DDP no_sync) only iterations with
 *     (k+1) mod K = 0 and the epoch's last meet at the barrier and pay A;
 *     in the others Q(r,k+1) = Y(r,k) + C(r,k) per rank, A = 0, and the
 *     record's T(k) is max_r (Y(r,k) + C(r,k));
 *   - stall = Y - Q; barrier wait W(r,k) = T(k) - A(k) - (Y(r,k) + C(r,k));
 *   - no prefetch crosses an epoch boundary; epoch e starts at
 *     end(e-1) + epoch_gap(e), with end(-1) = 0, so epoch 0 starts at
 *     epoch_gap(0).
 * Without shared resources (cores = 0, storage_mb_s = 0) this is docs/model.md's
 * max-plus recurrence, and the engine reproduces it to the nanosecond
 * (tests/test_model.c holds it against an independent implementation).
 *
 * Shared resources make fetch durations depend on concurrency. A fetch is
 * then three phases in a row: waiting (the non-CPU part of D', a plain
 * delay), a storage read of batch_mb at the node's bandwidth shared equally
 * among the node's concurrent reads, and the CPU part, processor-shared
 * among the node's fetches in their CPU part (each progresses at
 * min(1, cores / active)). With compute_cpu_share > 0 the training loop's
 * compute is a participant too: its CPU part joins the same node's cores at
 * Y, and the rank reaches the barrier when that part and the rest of C are
 * done. Ranks r sit on node r / gpus_per_node.
 *
 * With tiers (stall/storage.h) the storage read is instead the batch's
 * requests: each waits its share of the waiting part, then, when it misses
 * its node's cache, a latency and a transfer through the store's link and
 * global bandwidth (a max-min fair fluid), before the CPU part.
 *
 * Memory is O(ranks x workers x prefetch), independent of batches and
 * epochs; time is O(events x log(queue)) plus O(ranks) per iteration.
 */
#ifndef STALL_MODEL_H
#define STALL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/align.h"
#include "stall/base.h"
#include "stall/ckpt.h"
#include "stall/storage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The inputs, all in ns. Each callback must be a pure function of its
 * arguments (the model may call it more than once, in any order, and for
 * fetch align calls fetch for every rank of a batch). A negative return
 * stops the run with STALL_EINVAL. fetch and compute are required; tail and
 * epoch_gap may be NULL (= 0). */
typedef struct stall_durations {
    /* Fetch duration of batch `batch` (the dataset order index handed to a
     * worker) at no contention: load + preprocess + collate. */
    stall_time (*fetch)(void *ctx, int epoch, int rank, int64_t batch);
    /* C(r,k): forward + backward of iteration k on rank r, before the
     * gradient synchronisation. */
    stall_time (*compute)(void *ctx, int epoch, int rank, int64_t batch);
    /* A(k): exposed all-reduce + optimizer step after the last compute. */
    stall_time (*tail)(void *ctx, int epoch, int64_t batch);
    /* Idle time before epoch e starts, after epoch e-1 ended (for e = 0:
     * after time 0). */
    stall_time (*epoch_gap)(void *ctx, int epoch);
    /* How long after epoch e's start rank r's loader starts (its
     * iter(loader): a rank that begins the epoch late, docs/model.md 2.4):
     * its workers' start-up, or with W = 0 its first fetch, counts from
     * there. May be NULL (= 0 for every rank). */
    stall_time (*late_start)(void *ctx, int epoch, int rank);
    void *ctx; /* passed to every callback; not owned */
    /* May be NULL: fetch and compute are then available from the start.
     * Otherwise the model calls ready(ctx, e, k) before it asks fetch or
     * compute for any rank's batch <= k of epoch e (or for any batch of an
     * earlier epoch), (e, k) never going back from call to call (a
     * producer still filling them in that order waits there). A run that
     * does not follow the order calls ready(ctx, epochs - 1, batches - 1)
     * first. tail and epoch_gap are always available. */
    void (*ready)(void *ctx, int epoch, int64_t batch);
} stall_durations;

/* Run configuration. Start from stall_model_defaults(): a zeroed struct is
 * not the default (its aligns would read as avg). */
/* What a trace's CPU columns say (docs/model.md 2.3, "CPU time from the
 * trace"): the run-queue waits it measured, which come out of the waiting
 * parts (they are contention, the model's own sharing adds them back), and
 * the CPU work of the hand-over and of the tail, which join the node's cores
 * as the fetches' and the compute's CPU parts do. */
typedef struct stall_cpu_demand {
    double fetch_wait_share;   /* in [0,1]: of D', run-queue wait */
    double compute_wait_share; /* in [0,1]: of C, run-queue wait */
    stall_time handover_cpu;   /* >= 0 ns of CPU work per hand-over (unpickling) */
    stall_time handover_wait;  /* >= 0 ns of run-queue wait in the measured hand-over */
    stall_time tail_cpu;       /* >= 0 ns of CPU work per rank per synchronising
                                  iteration (all-reduce, optimizer step) */
    stall_time tail_wait;      /* >= 0 ns of run-queue wait in the measured tail */
} stall_cpu_demand;

typedef struct stall_model_params {
    int ranks;                        /* G >= 1. Default 1. */
    int gpus_per_node;                /* ranks per node, 1 <= . <= ranks; the last node may
                                         be partial. Default 1. */
    int workers;                      /* W >= 0 DataLoader workers per rank; 0 = load in
                                         the main process when the loop asks for a batch
                                         (fetch starts at Q). Default 0. */
    int prefetch;                     /* P >= 1 batches per worker in flight (ignored when
                                         W == 0). P*W <= 2^20. Default 2 (PyTorch's). */
    bool in_order;                    /* true: deliver batches in index order (PyTorch's
                                         default). Default true. */
    bool persistent_workers;          /* true: workers start once; startup is paid in
                                    epoch 0 only. Default false. */
    stall_time startup;               /* ns >= 0 each worker needs before its first fetch
                                         of an epoch (W > 0 only). Default 0. */
    stall_time pin;                   /* ns >= 0 pin-memory time per batch, one thread per
                                         rank, serialised in arrival order; 0 = off.
                                         Default 0. */
    stall_time handover;              /* ns >= 0 per batch after Y's max: result queue +
                                        unpickle (also applied when W == 0). Default 0. */
    const stall_time *handover_epoch; /* NULL, or [handover_epochs]: epoch e's own
                                         hand-over (a trace's), handover beyond */
    int handover_epochs;
    int64_t batches;         /* N >= 1 batches per rank per epoch. Default 1. */
    int epochs;              /* >= 1. Default 1. */
    int accumulation;        /* >= 1 iterations per gradient synchronisation
                                (DDP no_sync for the others): the ranks meet at
                                the barrier and pay the tail A only on every
                                accumulation-th iteration and the epoch's last;
                                in between each rank asks for its next batch
                                at its own Y + C. 0 reads as 1. Default 1. */
    stall_align fetch_align; /* applied per batch across ranks to fetch
                           durations (stall_align_durations). Default none. */
    stall_align start_align; /* must be STALL_ALIGN_NONE here: start
                           alignment is an idealised non-causal coordinator,
                           available in replay mode only. Default none. */

    /* Shared resources; 0 = off (then the closed form holds exactly). */
    int cores;                  /* >= 0 host cores per node for the CPU part of the
                                   fetches (processor sharing). Default 0 = off. */
    double cpu_share;           /* in [0,1]: fraction of D' that is CPU work; the
                                   rest is waiting. Used only when cores > 0.
                                   Default 1. */
    double compute_cpu_share;   /* in [0,1]: fraction of C that is CPU work on the
                                   node's cores, processor-shared with the
                                   fetches (1: training on the CPU; 0: on a GPU,
                                   compute takes no host core). The CPU part runs
                                   first, the rest is a plain delay. Used only
                                   when cores > 0. Default 0. */
    double cpu_deflate;         /* in (0,1]: measured durations were taken under
                                   contention; the CPU work of a fetch is
                                   cpu_share * D' * cpu_deflate, of a compute
                                   compute_cpu_share * C * cpu_deflate, while the
                                   non-CPU parts stay as measured. 1 = take the
                                   durations as uncontended. Default 1. */
    double storage_mb_s;        /* >= 0 read bandwidth per node in MB/s, shared
                                  equally among concurrent reads; 0 = off.
                                  Default 0. */
    double batch_mb;            /* >= 0 MB read per fetch when storage_mb_s > 0; the
                                   read comes on top of D'. Default 0. */
    stall_cpu_demand cpu;       /* CPU time measured beside wall time (the trace's
                                   CPU columns), used when cores > 0; all 0 by
                                   default (models/cpushare.c, docs/model.md 2.3). */
    bool read_in_fetch;         /* true: D' already contains one read at the full
                                   bandwidth (a measured fetch did its read): the
                                   read alone comes out of the waiting part (not
                                   below 0), so only the time lost to sharing is
                                   added. Default false. */
    stall_ckpt_params ckpt;     /* checkpoints (stall/ckpt.h); default none */
    stall_uneven_params uneven; /* slow ranks and stragglers (stall/ckpt.h); default none */
    int threads;                /* >= 1 threads for one run (models/model_par.c): used
                                   when the ranks split by whole nodes into groups that
                                   meet only at the barrier (no shared cores or storage,
                                   fetch align none, no accumulation), else 1; the
                                   output is byte-identical for every value. With more
                                   than 1, the durations callbacks are called from
                                   several threads at once, each rank's from one thread
                                   only (its group's): they must be pure, or keep any
                                   state per rank. Default 1. */
    bool tiers;                 /* the storage tiers of `storage` (stall/storage.h),
                                   in place of storage_mb_s, batch_mb and
                                   read_in_fetch. Default false. */
    stall_storage storage;
} stall_model_params;

/* Fills *p with the defaults documented above. */
void stall_model_defaults(stall_model_params *p);

/* One iteration, delivered once per (epoch, batch) when T(k) is known, in
 * increasing time order. The arrays have `ranks` entries and are valid
 * during the callback only. */
typedef struct stall_iter_record {
    int epoch;
    int64_t batch;                          /* iteration index k in the epoch */
    stall_time epoch_start;                 /* start of this epoch (= Q(r,0)) */
    stall_time iter_end;                    /* T(k) */
    stall_time iter_time;                   /* T(k) - T(k-1), or - epoch start for k = 0 */
    stall_time stall_max, stall_min, delay; /* over ranks; delay = max - min */
    stall_time stall_train;                 /* the training stall reported: stall_max when
                                               every iteration synchronises; under
                                               accumulation the growth of max_r (stall of r
                                               summed since the last synchronisation), so
                                               a window's values add up to the most one
                                               rank waited in it */
    stall_time wait_max;                    /* max_r W(r,k) */
    double wait_mean_s;                     /* mean_r W(r,k), seconds */
    stall_time compute_max;                 /* max_r C(r,k) */
    stall_time tail;                        /* A(k) */
    stall_time ckpt_wait;                   /* the loop's wait for a checkpoint after k,
                                               part of T(k) (0: none) */
    stall_time ckpt_write;                  /* that checkpoint's write time W (0: none) */
    stall_time fetch_spread;                /* max - min over ranks of the fetch time
                                               E - S of the batch taken (= D' without
                                               shared resources) */
    stall_time start_spread;                /* max - min over ranks of S of the batch
                                               taken */
    const stall_time *stall;                /* [G] Y - Q */
    const stall_time *ready;                /* [G] Y(r,k) */
    const stall_time *compute;              /* [G] C(r,k) */
    const stall_time *fetch_start;          /* [G] S of the batch taken */
    const stall_time *fetch_end;            /* [G] E of the batch taken (before pin) */
    const int64_t *fetched;                 /* [G] index of the batch taken; == batch
                                               when in order */
    /* [G] when each rank began the epoch (epoch_start + its late start,
     * stall_durations.late_start), or NULL: every rank at epoch_start. The
     * engine leaves it NULL; an observer of the run may fill it in. */
    const stall_time *rank_start;
} stall_iter_record;

typedef void (*stall_iter_fn)(void *ctx, const stall_iter_record *rec);

typedef struct stall_model_stats {
    uint64_t events;    /* events the engine dispatched */
    int64_t iterations; /* records delivered (epochs * batches on success) */
    stall_time end;     /* T of the last iteration */
} stall_model_stats;

/* Validates *p (each impossible setting: STALL_ECONFIG with a message naming
 * the field; NULL p, d, d->fetch or d->compute: STALL_EINVAL), then runs the
 * model, calling on_iter(ctx, rec) (may be NULL) for every iteration.
 * Returns 0, or the first failure: STALL_EINVAL when a callback returned a
 * negative duration (the message names the callback, epoch, rank, batch).
 * stats (may be NULL) is filled on success and on failure (what ran). */
int stall_model_run(const stall_model_params *p, const stall_durations *d, stall_iter_fn on_iter,
                    void *ctx, stall_model_stats *stats, stall_err *err);

/* The hand-over of epoch e: its own where p has one, else p->handover. */
static inline stall_time stall_model_handover(const stall_model_params *p, int e)
{
    return p->handover_epoch && e >= 0 && e < p->handover_epochs ? p->handover_epoch[e]
                                                                 : p->handover;
}

#ifdef __cplusplus
}
#endif
#endif
