/*
 * stall/ckpt.h - checkpoints and uneven ranks in the closed-loop model
 * (docs/model.md 2.5 and 2.6): the parameters stall_model_params carries
 * for them (models/ckpt.c, models/uneven.c).
 *
 * Checkpoints. After a synchronising iteration k (the ranks met at the
 * barrier and stepped the optimizer) a checkpoint is due when the run's
 * iteration count e*N + k + 1 has reached the next multiple of `every`
 * since the last (every > 0), or when at least every_ns have passed since
 * the last checkpoint began (the run start at first). Every rank then
 * writes `mb` MB; the ranks of a node write at once and share the node's
 * `mb_s` equally, so a write takes W = ranks_on_node x mb / mb_s (the
 * fullest node). Synchronous: the loop waits W, so
 * T(k) = max_r (Y + C) + A(k) + W. Asynchronous: the loop waits for the
 * snapshot copy, S = mb / snapshot_mb_s per rank (0 when snapshot_mb_s is
 * 0), and for the previous checkpoint's write if that is still running;
 * the write of W then runs in the background. The wait is recorded as the
 * iteration's ckpt_wait; the DataLoader workers go on fetching meanwhile.
 * With `store` (and the storage tiers, stall/storage.h) the write is no
 * fixed W: each rank's mb MB join its node's link to the store as one more
 * transfer of the max-min fair fluid the reads share, so W is what the
 * fluid gives (sync: the loop waits for the last rank's write; async: the
 * background write slows the reads and is slowed by them).
 *
 * Uneven ranks. The last `slow` ranks (or the ranks of the last `slow`
 * nodes) have their fetch durations multiplied by fetch_factor and their
 * compute by compute_factor. Random stragglers: the iterations of an
 * epoch are cut into windows of straggler_iters; in each window each rank
 * is independently a straggler with probability straggler_fraction, and
 * its compute is multiplied by straggler_factor there. The draw is a
 * counter-based hash of (seed, epoch, window, rank), so it is a pure
 * function of its cell, as stall_durations requires.
 */
#ifndef STALL_CKPT_H
#define STALL_CKPT_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_ckpt_params {
    int64_t every;          /* iterations between checkpoints (counted over the run); 0: by time */
    stall_time every_ns;    /* ns between checkpoint starts; 0: by count */
    double mb;              /* MB written per rank */
    double mb_s;            /* write bandwidth per node, MB/s, shared by its ranks */
    bool async;             /* snapshot, then a background write */
    double snapshot_mb_s;   /* async: the copy's bandwidth per rank, MB/s; 0: instantaneous */
    stall_time first_extra; /* the run's first checkpoint writes this much longer (a save's
                               first-time set-up: a new file, lazy initialisation), >= 0 */
    bool store;             /* the write goes to the storage tiers' store: each rank's mb is a
                               transfer on its node's link, sharing it with the reads (mb_s unused) */
} stall_ckpt_params;

typedef struct stall_uneven_params {
    int slow;                  /* the last `slow` ranks (nodes when by_node) are slow; 0: none */
    bool by_node;              /* slow counts nodes of gpus_per_node ranks */
    double compute_factor;     /* multiplies their C; 1: none */
    double fetch_factor;       /* multiplies their D; 1: none */
    double straggler_fraction; /* probability a rank straggles in a window; 0: none */
    double straggler_factor;   /* multiplies a straggler's C in its window */
    int64_t straggler_iters;   /* window length in iterations, >= 1 */
    uint64_t seed;             /* of the straggler draws */
} stall_uneven_params;

/* True when the parameters make checkpoints / uneven ranks. */
bool stall_ckpt_on(const stall_ckpt_params *c);
bool stall_uneven_on(const stall_uneven_params *u);

/* The write time W of one checkpoint with `per_node` ranks on the fullest
 * node, and the async snapshot time, in ns (rounded to the nearest). */
stall_time stall_ckpt_write_ns(const stall_ckpt_params *c, int per_node);
stall_time stall_ckpt_snapshot_ns(const stall_ckpt_params *c);

/* Whether rank r of g (gpn per node) straggles in the window holding
 * iteration k of epoch e. */
bool stall_uneven_straggles(const stall_uneven_params *u, int e, int r, int64_t k);

#ifdef __cplusplus
}
#endif
#endif
