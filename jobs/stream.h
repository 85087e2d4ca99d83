/*
 * stream.h - a tidy trace decomposed and fed to the closed-loop model in
 * streaming passes, in memory that does not grow with the number of
 * batches (issue 10). Private to jobs/: validate and mode = model (when
 * the what-if's grid lies within the trace's) use it.
 *
 * wi_stream_open reads the file once (pass 1), keeping its rows in a compact
 * spill (spill.h) that the later passes read instead of the text; they are
 * the passes that once each read the file: (1) the grid, the loader
 * settings and what infers the worker count; (2) the worker turnaround
 * (docs/model.md 2.4), which needs the worker count; (3) everything else
 * stall_measured_from_tidy computes globally (start-up median, hand-over
 * mean, per-epoch measured epoch time, stall and idle gap), which needs the
 * turnaround. wi_stream_durations then opens it a fourth time and hands
 * the model each duration from a sliding window of batches, refilled from
 * the spill as the model asks for later batches. When no spill can be
 * written (no space in $TMPDIR), each pass parses the file again. The same per-batch code
 * (wi_dec in stream.c) runs in passes 3 and 4, in the order of
 * stall_measured_from_tidy, so every value equals the in-memory path's.
 *
 * Memory: O(ranks x workers x prefetch) for the turnaround and the window,
 * O(epochs x ranks x workers) start-up times (their median is exact),
 * O(epochs) per-epoch figures, one CSV line; on disk, the spill's ~30
 * bytes per row (a fifth of the CSV's).
 */
#ifndef STALL_JOBS_STREAM_H
#define STALL_JOBS_STREAM_H

#include <stdbool.h>

#include "feed.h"
#include "stall/measured.h"
#include "stall/model.h"

typedef struct wi_stream wi_stream;

/* Pass 1 over the trace (tidy or dsanalyzer, whose checks run here, each
 * file read once; STALL_DS_UNSORTED for perf rows out of order): the
 * grid, the loader settings and the worker count. Returns 0 or the error
 * wi_load_measured would give for them; *out is NULL then. */
int wi_stream_start(const wi_trace_src *src, wi_stream **out, stall_err *err);
/* wi_stream_start's (and wi_stream_open's) answer, with *out NULL, for a
 * tidy trace with checkpoint (ckpt_*) or CPU columns: only the whole-trace
 * decomposition (jobs/measured.c) takes them out of the tails and fetches, so
 * such a trace is read whole rather than replayed with them counted twice. */
#define WI_STREAM_WHOLE 2
/* The terminal's words for it. */
const char *wi_stream_whole_why(void);

/* The trace's ranks, epochs, batches, samples and worker count in *m,
 * every other field zero (for wi_params to size a what-if before the trace
 * is decomposed, and for the checks of a sweep's points). */
void wi_stream_grid(const wi_stream *s, stall_measured *m);

/* Passes 2 and 3. Fills *m as wi_load_measured does, except its per-cell
 * arrays (fetch, compute, tail stay NULL; gap, epoch_s and stall_s are
 * set). x (NULL: none) is the what-if's transform and p (NULL: the trace's
 * grid) its run, used only for wi_stream_span(s, true). Returns 0 or the
 * error wi_load_measured would give; *m is freed then. */
int wi_stream_measure(wi_stream *s, const wi_xform *x, const stall_model_params *p,
                      stall_measured *m, stall_err *err);

/* wi_stream_start then wi_stream_measure without a transform. */
int wi_stream_open(const wi_trace_src *src, stall_measured *m, wi_stream **out, stall_err *err);

/* Opens the trace for a model run of p and fills *d: p's ranks, batches
 * and epochs must be at most the trace's (the first ones of each are fed,
 * as wi_tables_build takes them), durations transformed by x (NULL: as
 * measured). Each call starts a fresh pass 4 over the trace; the previous
 * one's durations are invalid. A callback asked for a batch that already
 * left the window, or a read that fails, returns -1 (the model stops) and
 * wi_stream_error says why. Returns 0 or STALL_EIO / STALL_EINVAL. */
int wi_stream_durations(wi_stream *s, const stall_model_params *p, const wi_xform *x,
                        stall_durations *d, stall_err *err);

/* The error a callback met, copied into *err: its code, or 0 when none. */
int wi_stream_error(const wi_stream *s, stall_err *err);

/* Rank 0's compute plus the tails, ns, as wi_tables_build sums it for its
 * horizon check: over the whole trace as measured, or (whatif) over
 * wi_stream_measure's p transformed by its x. */
double wi_stream_span(const wi_stream *s, bool whatif);

/* Rank r's fetch of epoch 0, batch 0, ns, as measured (untransformed). */
stall_time wi_stream_first_fetch(const wi_stream *s, int r);

/* NULL-safe. */
void wi_stream_close(wi_stream *s);

#endif
