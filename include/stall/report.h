/*
 * stall/report.h - per-iteration records and the run summary of docs/model.md
 * ("What is reported"), shared by every mode that simulates.
 *
 * A stall_report collects one row per (epoch, batch) and the epochs' start
 * and end, then writes iterations.csv and computes the summary: means, std
 * and p50/p95/p99 of iteration time, stall and delay over the iterations
 * after the warm-up, the effective-delay share, the stall share and the GPU
 * busy share (the last two over the whole run, warm-up included).
 */
#ifndef STALL_REPORT_H
#define STALL_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One iteration. Times in ns. */
typedef struct stall_iter_row {
    int epoch;
    int64_t batch;
    stall_time iter_end;  /* T(k), absolute */
    stall_time iter_time; /* T(k) - T(k-1), or - epoch start for k = 0 */
    stall_time stall_max; /* training stall: max over ranks */
    stall_time stall_min;
    stall_time wait_max;     /* barrier wait W(r,k), max over ranks */
    double wait_mean_s;      /* and mean, in seconds */
    double compute_mean_s;   /* mean over ranks of C(r,k), seconds */
    stall_time fetch_spread; /* max - min over ranks of the (aligned) fetch duration */
    stall_time start_spread; /* max - min over ranks of the (aligned) fetch start */
    const stall_time *stall; /* [ranks] per-rank stall; copied by stall_report_add */
} stall_iter_row;

typedef struct stall_stat {
    double mean, std, p50, p95, p99;
} stall_stat;

typedef struct stall_summary {
    int epochs;
    size_t iterations;           /* rows in the run */
    size_t kept;                 /* rows after the warm-up */
    double epoch_time_s;         /* mean over epochs of T(N-1) - epoch start */
    double total_time_s;         /* first epoch start to last iteration end */
    double throughput_batches_s; /* batches (all ranks) per second of epoch time */
    double throughput_samples_s; /* samples per second; NAN when samples per batch unknown */
    stall_stat iteration, stall, delay;
    double mean_wait_s;             /* barrier wait, mean over ranks and kept iterations */
    double effective_delay_pct;     /* % of kept iterations with delay > threshold */
    double stall_share;             /* sum of training stall / sum of iteration time */
    double gpu_busy_share;          /* sum of mean compute / total epoch time */
    double first_batch_stall_share; /* the stall of each epoch's batch 0 / sum of iteration
                                       time: the part of stall_share that is the epochs' start */
    double ckpt_share;              /* set by mode = model: the loop's wait for checkpoints / total
                                       epoch time (0: none); not in summary.csv */
} stall_summary;

typedef struct stall_report stall_report;

/* warmup: leading batches per epoch left out of the statistics; threshold in
 * seconds; samples: per batch per rank (0: unknown). Never NULL. */
stall_report *stall_report_create(int ranks, int64_t warmup, double threshold, int64_t samples);
void stall_report_destroy(stall_report *r);

/* Keep every rank's stall of every row, for stall_report_write_ranks
 * (memory: rows x ranks x 8 bytes). Call before the first row. Default:
 * not kept. */
void stall_report_keep_ranks(stall_report *r, bool keep);

/* The label of epoch 0 in the files written (iterations.csv, ranks.csv):
 * epochs are written as epoch0 + e, as the trace labels them (the
 * notebook's selected epoch, e.g. 1). Default 0. */
void stall_report_label_epochs(stall_report *r, int epoch0);

/* Samples in each rank's last batch of every epoch, when it is partial
 * (throughput_samples_s counts them, not a full batch). Default: full. */
void stall_report_last_samples(stall_report *r, int64_t samples_last);

/* Streams the rows instead of keeping them (call before the first row):
 * each row is written as it is added to the temporary file of
 * `iterations` (and of `ranks`, the per-rank long table), NULL for a file
 * not wanted (both NULL: only the summary is computed). Memory no longer
 * grows with the rows: the statistics keep three numbers per kept row,
 * moved past a limit to an unlinked file in $TMPDIR. The files' bytes and
 * the summary are those of the held report. stall_report_finish renames
 * the files into place; stall_report_destroy without it removes them.
 * stall_report_write_* then refuse (STALL_EINTERNAL). Returns 0 or
 * STALL_EIO. */
int stall_report_stream(stall_report *r, const char *iterations, const char *ranks, stall_err *err);
/* After the last row and epoch of a streamed report: computes the
 * statistics and renames the files into place (before
 * stall_report_summarize). Returns 0, STALL_EIO or STALL_EINTERNAL (files
 * removed). */
int stall_report_finish(stall_report *r, stall_err *err);

/* Appends one row (stall[] is copied). */
void stall_report_add(stall_report *r, const stall_iter_row *row);
/* Records the next epoch's start and end (absolute ns); call once per
 * epoch, in order (the label is for the caller). */
void stall_report_epoch(stall_report *r, int epoch, stall_time start, stall_time end);

/* Fills out. Statistics over zero kept rows are NAN. */
void stall_report_summarize(const stall_report *r, stall_summary *out);

/* Writes iterations.csv atomically: one row per iteration with columns
 * epoch,batch,iter_end_s,iteration_s,stall_s,delay_s,wait_max_s,wait_mean_s,
 * compute_s,fetch_spread_s,start_spread_s (aggregates over ranks: its width
 * does not grow with the rank count); iter_end_s is relative to the first
 * epoch's start. */
int stall_report_write_iterations(const stall_report *r, const char *path, stall_err *err);

/* Writes the per-rank detail atomically as a long table: one row per
 * (iteration, rank), columns epoch,batch,rank,stall_s. Needs
 * stall_report_keep_ranks(r, true) (else STALL_EINTERNAL). */
int stall_report_write_ranks(const stall_report *r, const char *path, stall_err *err);

/* Number of rows, and the i-th row's training stall and delay (ns). */
size_t stall_report_rows(const stall_report *r);

/* The summary.csv header (no newline) and one row's fields after the
 * caller's leading columns (no newline). */
void stall_summary_header(FILE *f);
void stall_summary_fields(FILE *f, const stall_summary *s);

#ifdef __cplusplus
}
#endif
#endif
