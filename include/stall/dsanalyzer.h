/*
 * stall/dsanalyzer.h - reads the three dsanalyzer CSVs of one training run
 * (the seed notebook's inputs) into arrays.
 *
 * Files (each starts with pandas' unnamed index column, whose header field is
 * empty and whose values are ignored; other extra columns are ignored too):
 *   fetch CSV  `*_simp_fetchdifftime.csv`:      Epoch, Index number,
 *              Fetch time (sec)_gpu0 .. _gpu{G-1}   (seconds)
 *   start CSV  `*_simp_fetchstartdifftime.csv`: Epoch, Index number,
 *              Start time_gpu0 .. _gpu{G-1}         ("YYYY-MM-DD HH:MM:SS.f")
 *   perf CSV   `{FILE}.csv`: Epoch, Step, GPU, Time, Iteration time (sec),
 *              Training stall time (sec)
 *
 * What is checked (any failure is an error naming file:line:column):
 *   - G is the number of `Fetch time (sec)_gpu{i}` columns, i = 0..G-1 with
 *     no gap; the start CSV has exactly the same GPU columns;
 *   - fetch and start rows are sorted by (Epoch, Index number) without
 *     duplicates, and both files hold the same keys;
 *   - times are finite, non-negative numbers (parsed as pandas 1.5 does);
 *     timestamps have 1-9 fractional digits and valid fields;
 *   - perf: GPU in 0..G-1, no duplicate (Epoch, Step, GPU), and for the
 *     selected epoch every GPU has exactly one row per Index number. The
 *     seed matches perf rows to batches by position after sorting by Step
 *     (quirk Q9); with this check that equals matching Step == Index number;
 *   - the selected epoch has at least one row;
 *   - every record has as many fields as the header;
 *   - the start and perf files' clocks agree (last, after every check above;
 *     named at the first offending start row and column): on every GPU g, a
 *     batch's fetch ends (start + fetch time) at most STALL_DS_CLOCK_LATE_S
 *     after the perf file's Time, when the loop received it, and starts at
 *     most STALL_DS_CLOCK_EARLY_S before g's first request of the epoch
 *     (Time - training stall of its first batch), before which g's
 *     DataLoader iterator did not exist. A start file written in UTC beside
 *     a perf file in local time (or the reverse) breaks one of the two.
 */
#ifndef STALL_DSANALYZER_H
#define STALL_DSANALYZER_H

#include <stddef.h>
#include <stdint.h>

#include "stall/base.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The clock check's tolerances (docs/formats.md, "dsanalyzer"). Both
 * files' times come from the same host's clock, so they may disagree by the
 * clock's jitter and timestamp rounding (microseconds to milliseconds);
 * 1 s is far above that and far below any time-zone or daylight-saving
 * offset (15 min or more). The early bound allows, besides, a DataLoader
 * iterator created up to a minute before the loop's first request. */
#define STALL_DS_CLOCK_LATE_S 1.0
#define STALL_DS_CLOCK_EARLY_S 60.0

typedef struct stall_ds_trace {
    int gpus;             /* G, from the fetch CSV's `Fetch time (sec)_gpu{i}` columns */
    int64_t epoch;        /* the selected epoch */
    size_t rows;          /* N: batches of the selected epoch, Index number ascending */
    size_t label0;        /* fetch rows before the selected epoch (pandas label of row 0, Q7) */
    int64_t *index;       /* [N] Index number */
    double *fetch_s;      /* [N*G] F, fetch_s[k*G+g], seconds, parsed like pandas 1.5 */
    stall_time *start_ns; /* [N*G] S, ns since the Unix epoch (naive timestamps taken as UTC) */
    stall_time *time_ns;  /* [N*G] perf `Time` of GPU g's row for batch k */
    double *iter_s;       /* [N*G] perf `Iteration time (sec)` */
    double *stall_s;      /* [N*G] perf `Training stall time (sec)` */
    char *fetch_path, *start_path, *perf_path; /* copies of the paths */
} stall_ds_trace;

/* Loads the three CSVs and keeps the rows of `epoch`. On success returns 0
 * and sets *out to a trace the caller frees with stall_ds_free. On failure
 * returns STALL_EIO (a file cannot be read) or STALL_EPARSE (bad content),
 * fills err with one line "file:line:column: ..." (line 1 is the header,
 * columns count from 1 with the index column), and leaves *out untouched. */
int stall_ds_load(const char *fetch_csv, const char *start_csv, const char *perf_csv, int64_t epoch,
                  stall_ds_trace **out, stall_err *err);

/* The same trace read batch by batch, in memory that does not grow with
 * the number of batches (O(G) plus a line of each file). The first pass
 * (stall_ds_open, stall_ds_rewind, stall_ds_next) reads each file once and
 * runs every check of stall_ds_load as it goes: it hands out the batches
 * that look good so far, and its last stall_ds_next gives 0 or the first
 * error stall_ds_load gives, with the same message (the batches handed out
 * before an error are then to be dropped). Each later stall_ds_rewind starts
 * a pass over the checked batches, reading the three files side by side.
 * The perf rows must come sorted by (Epoch, Step), the GPUs of a step in
 * any order (the notebook writes them by (Epoch, Step, GPU)); other orders
 * would need the whole file, and the first pass ends with
 * STALL_DS_UNSORTED for them (the caller can use stall_ds_load). */
typedef struct stall_ds_stream stall_ds_stream;

/* Positive, apart from stall_ds_next's 1 and 0. */
#define STALL_DS_UNSORTED 3

/* Returns 0 and sets *out (the caller closes it with stall_ds_close), or
 * an error of the fetch file's header line (the others come from the first
 * pass); *out is untouched unless 0. */
int stall_ds_open(const char *fetch_csv, const char *start_csv, const char *perf_csv, int64_t epoch,
                  stall_ds_stream **out, stall_err *err);
/* G, and N of the selected epoch (during the first pass: so far). */
int stall_ds_stream_gpus(const stall_ds_stream *s);
size_t stall_ds_stream_rows(const stall_ds_stream *s);
/* Starts a pass over the batches (the first pass again until it has ended
 * well). 0 or an error. */
int stall_ds_rewind(stall_ds_stream *s, stall_err *err);
/* The next batch: returns 1, sets *k to its position 0..N-1 and *row to a
 * trace of one row (rows = 1, label0 = the batch's pandas label), valid
 * until the next call; 0 after the last; or an error (first pass: the
 * first error of the files, or STALL_DS_UNSORTED; later: a file that
 * changed since the first pass). */
int stall_ds_next(stall_ds_stream *s, size_t *k, const stall_ds_trace **row, stall_err *err);
/* NULL-safe. */
void stall_ds_close(stall_ds_stream *s);

/* Frees a trace and everything it owns. NULL-safe. */
void stall_ds_free(stall_ds_trace *t);

/* What the perf file says of batch k on GPU g, in ns (the derivations that
 * replay and the model share, docs/model.md 4.2):
 *   request: when the loop asked for the batch, Time - training stall;
 *   compute: C = iteration time - max over GPUs of the training stall of
 *            row k, clamped at 0 (the row maximum, never the GPU's own
 *            stall, so that the barrier is not counted twice). */
stall_time stall_ds_request(const stall_ds_trace *t, size_t k, int g);
stall_time stall_ds_compute(const stall_ds_trace *t, size_t k, int g);

/* The notebook's rows as tidy rows (dsanalyzer_tidy.c): the one mapping
 * every command uses. Batch k of GPU r as a tidy row of epoch 0 (the times
 * in ns, worker -1, compute_end -1: the notebook does not measure it). */
void stall_ds_tidy_row(const stall_ds_trace *t, size_t k, int r, stall_tidy_row *row);

/* The whole trace as a tidy trace of one epoch (no compute_end column),
 * prefetch and pin_memory unknown (-1), workers assigned as
 * stall_ds_tidy_workers does. Never NULL; free with stall_tidy_free. */
stall_tidy_trace *stall_ds_to_tidy(const stall_ds_trace *t, int workers);

/* The worker of batch k when W workers (W <= 0: -1, the main process). */
static inline int32_t stall_ds_worker(int64_t k, int workers)
{
    return workers > 0 ? (int32_t)(k % workers) : -1;
}

/* Sets t's workers to W (W < 0: unknown, -1) and, for W > 0, batch k's
 * worker to k mod W as PyTorch dispatches within an epoch (-1 otherwise). */
void stall_ds_tidy_workers(stall_tidy_trace *t, int workers);

/* A worker fetches one batch at a time, and PyTorch hands batch k of an
 * epoch to worker k mod W: with W workers given for a trace that does not
 * record them, batch k starts no earlier than batch k - W (k - 1 for W =
 * 0, the training process) ended, on every GPU, up to this slack (the
 * timestamps' rounding; a wrong count overlaps them by a share of a fetch,
 * docs/formats.md). */
#define STALL_DS_WORKER_SLACK_S 0.001

/* The error for GPU g's batch k (0-based in the epoch) starting early_ns
 * before batch k - max(W, 1) ended, with W = workers given at `given`
 * ("file:line: [trace] workers", "--set trace.workers", "--workers").
 * Returns STALL_ECONFIG. */
int stall_ds_workers_err(const char *start_path, int64_t epoch, int64_t k, int g,
                         stall_time early_ns, int workers, const char *given, stall_err *err);

/* Checks a worker count given for t (workers < 0: none given, 0) against
 * its fetch starts as above; the first offending batch, in file order, is
 * named by stall_ds_workers_err. Returns 0 or STALL_ECONFIG. */
int stall_ds_check_workers(const stall_ds_trace *t, int workers, const char *given, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
