/*
 * stall/replay.h - trace-timed replay (docs/model.md, "Alignment policies": in
 * trace-timed replay the policies are counterfactuals on measured times).
 *
 * Fetch starts and durations come from the trace, aligned per batch across
 * ranks; the consumer side is simulated in the event engine: in-order
 * delivery, stall, compute and the DDP barrier, so a batch that becomes
 * ready later delays every iteration after it.
 *
 *   arrival(r,k) = S'(r,k) + D'(r,k) + lag(r,k)
 *   Y(r,k)       = max(Q(r,k) + floor(r,k), arrival(r,k))   (in order: Y(r,k-1) <= Q(r,k))
 *   T(k)         = max_r (Y(r,k) + C(r,k)) + A(k),   Q(r,k+1) = T(k)
 *
 * lag is the measured time from fetch end to delivery (collation, transfer,
 * the result queue), floor the measured hand-over of a batch that was already
 * there; with both taken from the trace and no alignment the replay
 * reproduces the measured iteration ends.
 */
#ifndef STALL_REPLAY_H
#define STALL_REPLAY_H

#include "stall/align.h"
#include "stall/base.h"
#include "stall/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arrays are [k * ranks + r], ns. Optional arrays may be NULL (zero). */
typedef struct stall_replay_input {
    int ranks;
    int64_t batches;
    int epoch;                  /* label for the rows */
    const stall_time *start;    /* measured fetch start S */
    const stall_time *fetch;    /* measured fetch duration D */
    const stall_time *lag;      /* optional: fetch end to delivery */
    const stall_time *floor;    /* optional: request to delivery when the batch was there */
    const stall_time *compute;  /* C(r,k), before synchronisation */
    const stall_time *tail;     /* optional, [k]: A(k) after the last compute */
    const stall_time *request0; /* [r]: Q(r,0), the loop's first request */
} stall_replay_input;

typedef struct stall_replay_stats {
    uint64_t events;
    stall_time epoch_start; /* min_r Q(r,0) */
    stall_time epoch_end;   /* T(N-1) */
} stall_replay_stats;

/* Replays one epoch under (fa, sa), adding one row per batch to rep (may be
 * NULL). Returns 0 or a negative code with err set. */
int stall_replay_run(const stall_replay_input *in, stall_align fa, stall_align sa,
                     stall_report *rep, stall_replay_stats *stats, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
