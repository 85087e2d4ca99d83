/*
 * stall/tidy.h - stallsim's own trace format: one CSV row per (rank, epoch,
 * batch), as written by tools/stallsim_capture.py.
 *
 * Header, in this order (extra columns may follow, in any order):
 *   rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end
 * Optional columns read when present: compute_end, bytes, samples,
 * epoch_start, workers, prefetch, pin_memory, persistent (0/1: the run's
 * persistent_workers), ckpt_start, ckpt_end, ckpt_bytes (a checkpoint
 * written after the row's iteration; empty: none), and the CPU columns
 * (stall_tidy_cpu).
 * Times are seconds on one clock for all processes, as decimal numbers; they
 * are converted to integer ns exactly (no binary floating point).
 * Rows are sorted by (epoch, batch, rank); every rank has the same batches in
 * every epoch; epochs and batches count from 0 without gaps.
 */
#ifndef STALL_TIDY_H
#define STALL_TIDY_H

#include <stdbool.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CPU columns (tools/stallsim_capture.py, docs/capture.md): CPU time and
 * run-queue wait beside the wall times, summed over the rows of batch >= 1
 * (batch 0 carries the workers' start-up), and the node's cores and ranks. */
enum {
    STALL_TIDY_CPU_FETCH,        /* fetch_cpu: the worker, fetch_start..fetch_end */
    STALL_TIDY_CPU_FETCH_WAIT,   /* fetch_wait */
    STALL_TIDY_CPU_TURN,         /* turn_cpu: the worker, previous fetch_end..fetch_start */
    STALL_TIDY_CPU_NEXT,         /* next_cpu: the training process, request..ready */
    STALL_TIDY_CPU_NEXT_WAIT,    /* next_wait */
    STALL_TIDY_CPU_COMPUTE,      /* compute_cpu: ready..compute_end */
    STALL_TIDY_CPU_COMPUTE_WAIT, /* compute_wait */
    STALL_TIDY_CPU_POST,         /* post_cpu: compute_end..next request */
    STALL_TIDY_CPU_POST_WAIT,    /* post_wait */
    STALL_TIDY_CPU_SYNC,         /* sync_cpu: compute_end..sync_end, the gradient all-reduce */
    STALL_TIDY_CPU_N
};
typedef struct stall_tidy_cpu {
    bool has;                     /* some CPU column holds a value */
    double sum[STALL_TIDY_CPU_N]; /* ns, over the non-empty values of batch >= 1 */
    int64_t n[STALL_TIDY_CPU_N];  /* how many */
    int cores, ranks_per_node;    /* 0: not said */
} stall_tidy_cpu;

typedef struct stall_tidy_trace {
    int ranks, epochs;
    int64_t batches; /* per rank per epoch */
    /* Per row, indexed by stall_tidy_at(t, e, r, k). ns since the clock's origin. */
    stall_time *fetch_start, *fetch_end, *request, *ready, *iter_end;
    stall_time *compute_end; /* NULL when the column is absent */
    int32_t *worker;
    int64_t *samples;        /* NULL when absent */
    double *bytes;           /* NULL when absent */
    stall_time *epoch_start; /* [e * ranks + r]: column epoch_start, else the first request */
    int workers, prefetch, pin_memory; /* from the columns; -1 when absent */
    int persistent;                    /* the persistent column (0/1); -1 when absent */
    stall_tidy_cpu cpu;                /* the CPU columns; all 0 when absent */
    char *path;
    /* The label the trace gives epoch 0 (its epochs are labelled epoch0,
     * epoch0 + 1, ...): 0 for a tidy trace, the selected epoch of the
     * notebook's (dsanalyzer) trace. Outputs print epoch0 + e. */
    int epoch0;
    /* Traces of other formats (stall/kineto.h, stall/dftracer.h): */
    bool fetch_unknown;   /* the trace holds the loop's waits only, not the workers' fetches:
                             fetch_start = fetch_end = ready (no fetch drawn, the whole wait
                             counts as waiting for data), worker -1 */
    double *checkpoint_s; /* [e * ranks + r]: checkpoint time in epoch e; NULL: none in the trace */
    bool clocks_unaligned; /* each rank's times on a clock of its own (Kineto's times relative to
                              each profiler's start, several ranks): a time of one rank says
                              nothing of another's, so the barrier's waits are unknown */
    /* Tidy ckpt_start, ckpt_end, ckpt_bytes columns, per row (NULL when
     * absent; times -1 where the row has no checkpoint): a checkpoint
     * written after the row's iteration. */
    stall_time *ckpt_start, *ckpt_end;
    double *ckpt_bytes;
    /* Why the checkpoints have no size where the format logs none (a DLIO
     * trace: "DLIO logs none"; a static string); NULL: a tidy CSV, whose
     * ckpt_bytes column may hold it. */
    const char *ckpt_no_size;
    char *summary; /* what the reader found, a few lines; NULL for a tidy CSV */
} stall_tidy_trace;

static inline size_t stall_tidy_at(const stall_tidy_trace *t, int e, int r, int64_t k)
{
    return ((size_t)e * (size_t)t->batches + (size_t)k) * (size_t)t->ranks + (size_t)r;
}

/* One row of a tidy trace, as stall_tidy_next hands it out; ns. */
typedef struct stall_tidy_row {
    int rank, epoch;
    int64_t batch;
    int32_t worker; /* -1: the main process */
    stall_time fetch_start, fetch_end, request, ready, iter_end;
    stall_time compute_end; /* -1 when the column is absent */
    stall_time epoch_start; /* the column, else this rank's first request of the epoch */
    int64_t samples;        /* 0 when the column is absent */
    double bytes;           /* 0 when the column is absent */
    stall_time ckpt_start;  /* a checkpoint after this iteration; -1: none */
    stall_time ckpt_end;
    double ckpt_bytes; /* 0 when empty or absent */
} stall_tidy_row;

/* What a stream knows about its trace. The loader settings and has_* are
 * known once the first row was handed out; ranks, epochs and batches once
 * stall_tidy_next returned 0 (the whole file was read and checked). */
typedef struct stall_tidy_info {
    int ranks, epochs;
    int64_t batches;
    int workers, prefetch, pin_memory; /* -1 when absent */
    int persistent;                    /* -1 when absent */
    bool has_compute, has_samples, has_bytes;
    bool has_ckpt;      /* ckpt_start and ckpt_end columns */
    stall_tidy_cpu cpu; /* complete once stall_tidy_next returned 0 */
} stall_tidy_info;

/* A tidy trace read one row at a time, in file order ((epoch, batch,
 * rank)), with every check stall_tidy_load makes, each failing at the line
 * where it shows. Memory: O(ranks) plus one CSV line, whatever the length
 * of the trace. */
typedef struct stall_tidy_stream stall_tidy_stream;

/* Opens path. Returns 0 or STALL_EIO (cannot open). */
int stall_tidy_open(const char *path, stall_tidy_stream **out, stall_err *err);
/* The worker count the trace is read with where it has no workers column
 * (an INI's [trace] workers): a worker id >= workers (>= 1 with 0) then
 * fails at its line and column, its message naming `origin`, where the
 * count was given (copied; e.g. "run.ini:6: [trace] workers" or "--set
 * trace.workers"). workers < 0: none (the default). A trace with the
 * column is checked against the column. Call before the first
 * stall_tidy_next. */
void stall_tidy_expect_workers(stall_tidy_stream *s, int workers, const char *origin);
/* The next row into *row: returns 1, 0 at the end of a valid trace, or
 * STALL_EPARSE / STALL_EIO (err names file:line:column); after an error
 * every call returns it again. */
int stall_tidy_next(stall_tidy_stream *s, stall_tidy_row *row, stall_err *err);
/* Valid until stall_tidy_close. */
const stall_tidy_info *stall_tidy_stream_info(const stall_tidy_stream *s);
/* NULL-safe. */
void stall_tidy_close(stall_tidy_stream *s);

/* Reads a tidy CSV, streaming, into memory (O(rows)). Returns 0, STALL_EIO (cannot open) or
 * STALL_EPARSE with err naming "file:line:column: 'name': problem". */
int stall_tidy_load(const char *path, stall_tidy_trace **out, stall_err *err);
/* stall_tidy_load with stall_tidy_expect_workers(workers, origin). */
int stall_tidy_load_workers(const char *path, int workers, const char *origin,
                            stall_tidy_trace **out, stall_err *err);
void stall_tidy_free(stall_tidy_trace *t);
/* Fills checkpoint_s (per epoch and rank, seconds) from the ckpt columns
 * when any row has a checkpoint and checkpoint_s is not set. */
void stall_tidy_ckpt_sums(stall_tidy_trace *t);

/* Exact decimal seconds ("1763700000.123456789", "-0.5", "12", and with an
 * exponent "1.795224177e+09", "4e-06") to ns at the nearest ns of the
 * decimal value, halves away from zero (from the digits, never through a
 * double); returns 0, or -1 when s is not such a number in full or its ns
 * do not fit in int64. */
int stall_parse_seconds_ns(const char *s, stall_time *ns);

#ifdef __cplusplus
}
#endif
#endif
