/*
 * stall/tlexport.h - a run in the tidy shape (stall/analyze.h) as a Chrome
 * Trace Event timeline (stall/timeline.h): `stallsim timeline TRACE -o
 * FILE.json` for a measured trace, `--timeline FILE.json` on run and
 * validate for the simulated one, so that both open side by side in Perfetto.
 *
 * One process per rank; per rank a track "training loop" with, per
 * iteration, the slices start-up (epoch start to the first batch), wait for
 * data, hand-over, compute, barrier wait and all-reduce + step, with a
 * checkpoint slice cut out of the last where the trace records one inside
 * the iteration (ckpt_start/ckpt_end, as analyze counts it); a track per
 * DataLoader worker with its fetches (or, when worker ids are unknown or
 * overlap, "fetch lane" tracks filled greedily); a flow arrow from each
 * fetch to the compute of the iteration that took it; counters "prefetch
 * queue depth" (fetched, not yet taken) and "batches in flight" (being
 * fetched). There is no pin-memory track: neither traces nor the model's
 * iteration records time pinning separately (it is inside hand-over).
 * Times are from the first epoch's start.
 */
#ifndef STALL_TLEXPORT_H
#define STALL_TLEXPORT_H

#include <stdbool.h>

#include "stall/base.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_tl_opts {
    bool window;          /* keep only events that overlap [from_s, to_s] */
    double from_s, to_s;  /* seconds from the first epoch's start */
    int rank_lo, rank_hi; /* ranks kept, inclusive; rank_hi < 0: all */
} stall_tl_opts;

/* Parses "START:END" (seconds, START < END) into o; 0 or -1. */
int stall_tl_parse_window(const char *s, stall_tl_opts *o);
/* Parses "R" or "LO-HI" into o; 0 or -1. */
int stall_tl_parse_ranks(const char *s, stall_tl_opts *o);

/* Writes the timeline of t to path atomically. o may be NULL (everything).
 * A rank filter beyond the trace's ranks is STALL_ECONFIG. */
int stall_timeline_export(const stall_tidy_trace *t, const stall_tl_opts *o, const char *path,
                          stall_err *err);
/* The same, put in place with the result folder being made in `work`
 * (stall_write_atomic_with): run and validate --timeline. */
int stall_timeline_export_with(const stall_tidy_trace *t, const stall_tl_opts *o, const char *path,
                               const char *work, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
