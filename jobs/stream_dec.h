/*
 * stream_dec.h - private to jobs/: the streaming passes' decomposition of a
 * trace's rows, one batch at a time (jobs/stream_dec.c; stream.c runs the
 * passes).
 */
#ifndef STALL_JOBS_STREAM_DEC_H
#define STALL_JOBS_STREAM_DEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "feed.h"

#include "stall/tidy.h"

/* A finished batch: per rank its fetch and compute, and the tail. */
typedef struct wi_batch {
    int64_t at; /* e * batches + k; -1 empty */
    stall_time tail;
    stall_time *fetch, *compute; /* [ranks] */
} wi_batch;

typedef struct wi_dec {
    int g, ne, workers;
    int64_t n;
    stall_time turn;
    bool has_compute;
    bool persistent;            /* start-up from epoch 0 only */
    stall_tidy_row *cur, *prev; /* [g] the batch being read, the one waiting for T(k) */
    int ncur;
    /* per epoch */
    stall_time e0, prev_end;
    double stall_sum;
    double *epoch_s, *stall_s; /* [ne] */
    double *spread;            /* [ne] latest minus earliest epoch_start, s */
    int *last;                 /* [ne] the rank that started last */
    stall_time *late;          /* [ne * g] each rank's epoch_start minus e0 */
    double *efetch;            /* [ne] summed fetch, s */
    double *efetch2;           /* [ne] summed squares, s^2 */
    stall_time *gap;           /* [ne] */
    double *ehand;             /* [ne] summed hand-over, ns */
    /* over the trace */
    double fetch_sum, hsum, bytes_sum, span;
    size_t nhand;
    stall_time *startups;
    size_t nstart, start_cap;
    stall_time *first; /* [g] epoch 0's first fetch per rank */
    wi_xform x;        /* the what-if's transform, for span_x */
    double span_x;     /* span with x applied (wi_tables_build's sum) */
    /* where finished batches go (pass 4), else NULL: those of the first
     * keep_e epochs and keep_n batches (the model's grid), kept of them so far */
    wi_batch *ring;
    int64_t ring_cap;
    int keep_e;
    int64_t keep_n, kept;
} wi_dec;

/* d for the rows of a trace of `in`'s grid with `workers` and the mean
 * turnaround `turn`; x (may be NULL: none) for span_x. */
void wi_dec_init(wi_dec *d, const stall_tidy_info *in, int workers, stall_time turn,
                 const wi_xform *x);
void wi_dec_free(wi_dec *d);
/* One row, in file order (epoch, batch, rank). */
void wi_dec_row(wi_dec *d, const stall_tidy_row *row);

#endif
