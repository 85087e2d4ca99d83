/*
 * tidy_int.h - the tidy reader's own (tidy.c, tidy_check.c): its columns,
 * the stream's state and the checks of a row against the rows before it.
 */
#ifndef STALL_FORMATS_TIDY_INT_H
#define STALL_FORMATS_TIDY_INT_H

#include <csv.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stall/tidy.h"

enum {
    TC_RANK,
    TC_EPOCH,
    TC_BATCH,
    TC_WORKER,
    TC_FSTART,
    TC_FEND,
    TC_REQUEST,
    TC_READY,
    TC_ITEREND,
    TC_REQUIRED,
    TC_COMPUTE = TC_REQUIRED,
    TC_BYTES,
    TC_SAMPLES,
    TC_ESTART,
    TC_WORKERS,
    TC_PREFETCH,
    TC_PIN,
    TC_PERSISTENT,
    TC_CKSTART, /* a checkpoint after the row's iteration: start, end, bytes (empty: none) */
    TC_CKEND,
    TC_CKBYTES,
    TC_CPU0, /* the CPU columns (stall_tidy_cpu), in STALL_TIDY_CPU_* order */
    TC_CORES = TC_CPU0 + STALL_TIDY_CPU_N,
    TC_RPN,
    TC_ALL
};

extern const char *const tidy_names[TC_ALL];

#define TIDY_MAXF 64

struct stall_tidy_stream {
    char *path;
    long line;  /* line of the row being read (1-based) */
    int nfield; /* fields seen in the current row */
    char *field[TIDY_MAXF];
    bool borrowed;   /* the fields point into buf (tidy_fast_line), not malloc'd */
    int col[TC_ALL]; /* field index of each known column, -1 absent */
    int ncols;       /* header width */
    bool header_done;
    int rc;
    stall_err *err;
    /* grid position */
    int ranks;    /* known after the first batch */
    int64_t rows; /* data rows so far */
    int64_t cur_e, cur_k;
    int cur_r;
    int64_t batches;      /* per epoch, known after the first epoch */
    stall_time v[TC_ALL]; /* the current row's times, and integers as int64 */
    double bytes;         /* the current row's bytes */
    /* physical lines: the record being read starts on rec_line */
    long phys, rec_line, last_line;
    /* consistency */
    bool have_t0;
    stall_time t0;               /* the first time read: every time lies within the span of it */
    int64_t setting[4];          /* workers, prefetch, pin_memory, persistent of the first row */
    int expect_workers;          /* without a workers column: the count given (-1: none) */
    char *expect_origin;         /* where it was given */
    bool compute_empty;          /* compute_end is empty on the first row (and so on every row) */
    long setting_line;           /* line of the first row */
    int nrank_cap;               /* per rank: */
    stall_time *last_iter_end;   /*   iter_end of its previous row (-1: none) */
    stall_time *cur_epoch_start; /*   epoch_start of its rows in the current epoch */
    long *last_row_line;         /*   line of its previous row */
    /* Rows parsed but not yet taken by stall_tidy_next (a physical line
     * can end more than one record: libcsv also ends one at a bare CR). */
    stall_tidy_row *q;
    size_t qhead, qn, qcap;
    /* the input */
    FILE *f;
    struct csv_parser p;
    char *buf;
    size_t n, pos, linelen;
    bool eof;  /* fread returned nothing more */
    bool done; /* end of input reached and checked */
    stall_tidy_info info;
};

/* The row's failure at column col (-1: the row), file:line:col; the first
 * one sticks (t->rc). Returns it. */
int tidy_fail(stall_tidy_stream *t, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* tidy_check.c: the row's place in the (epoch, batch, rank) grid, and its
 * times and settings against its rank's earlier rows and the first row. */
int tidy_place(stall_tidy_stream *t, int64_t e, int64_t k, int64_t r);
void tidy_consistent(stall_tidy_stream *t, int64_t e, int64_t k, int64_t r);

#endif
