/*
 * stream.h - a tidy trace decomposed and fed to the closed-loop model in
 * streaming passes, in memory that does not grow with the number of
 * batches (issue 10). Private to jobs/: validate uses it.
 *
 * wi_stream_open reads the file three times: (1) the grid, the loader
 * settings and what infers the worker count; (2) the worker turnaround
 * (docs/model.md 2.4), which needs the worker count; (3) everything else
 * stall_measured_from_tidy computes globally (start-up median, hand-over
 * mean, per-epoch measured epoch time, stall and idle gap), which needs the
 * turnaround. wi_stream_durations then opens it a fourth time and hands
 * the model each duration from a sliding window of batches, refilled from
 * the file as the model asks for later batches. The same per-batch code
 * (wi_dec in stream.c) runs in passes 3 and 4, in the order of
 * stall_measured_from_tidy, so every value equals the in-memory path's.
 *
 * Memory: O(ranks x workers x prefetch) for the turnaround and the window,
 * O(epochs x ranks x workers) start-up times (their median is exact),
 * O(epochs) per-epoch figures, one CSV line.
 */
#ifndef STALL_JOBS_STREAM_H
#define STALL_JOBS_STREAM_H

#include "stall/config.h"
#include "stall/measured.h"
#include "stall/model.h"

typedef struct wi_stream wi_stream;

/* Passes 1-3 over cfg's tidy trace. Fills *m as wi_load_measured does,
 * except its per-cell arrays (fetch, compute, tail stay NULL; gap,
 * epoch_s and stall_s are set). Returns 0 or the error wi_load_measured
 * would give (STALL_EIO, STALL_EPARSE, STALL_ECONFIG); *out is NULL then. */
int wi_stream_open(const stall_config *cfg, stall_measured *m, wi_stream **out, stall_err *err);

/* Opens the trace for the model run of p (the measured configuration: p's
 * ranks, batches and epochs must be the trace's) and fills *d. A callback
 * asked for a batch that already left the window, or a read that fails,
 * returns -1 (the model stops) and wi_stream_error says why. Returns 0 or
 * STALL_EIO / STALL_EINVAL. */
int wi_stream_durations(wi_stream *s, const stall_model_params *p, stall_durations *d,
                        stall_err *err);

/* The error a callback met, copied into *err: its code, or 0 when none. */
int wi_stream_error(const wi_stream *s, stall_err *err);

/* Rank 0's compute plus the tails over the whole run, ns, as wi_tables_build
 * sums it for its horizon check. */
double wi_stream_span(const wi_stream *s);

/* NULL-safe. */
void wi_stream_close(wi_stream *s);

#endif
