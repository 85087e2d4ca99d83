/*
 * dsanalyzer_int.h - what the three parts of the dsanalyzer reader share
 * (private to formats/): the CSV text tables and files of dsanalyzer.c, the
 * column names of the notebook's files, and the header, key and value checks
 * that both the whole-file reader (dsanalyzer_load.c) and the streaming
 * reader (dsanalyzer_stream.c) run, one record at a time, so that both give
 * the same first error and message.
 */
#ifndef STALL_FORMATS_DSANALYZER_INT_H
#define STALL_FORMATS_DSANALYZER_INT_H

#include "stall/dsanalyzer.h"

#include <csv.h>
#include <stdio.h>

/* One CSV file as text. Field f of data record r is text + off[(r+1)*ncols + f];
 * the header's fields come first. */
typedef struct dsa_table {
    const char *path;
    size_t ncols;
    size_t nrows;
    char *text;
    size_t text_len, text_cap;
    size_t *off;
    size_t noff, off_cap;
    long *line; /* physical line of each data record */
    size_t line_cap;
} dsa_table;

/* libcsv callback state while one file is read. */
typedef struct dsa_reader {
    dsa_table *t;
    long line;      /* physical line being fed to libcsv, from 1 */
    size_t nfields; /* fields of the current record so far */
    int header_done;
    size_t hdr_text; /* where the header's text ends */
    int rc;
    stall_err *err;
} dsa_reader;

/* A file being read: its table, libcsv and the unread part of the buffer.
 * keep = 1: every record stays in the table (stall_ds_load); keep = 0:
 * only those of the last line fed (a stream). */
typedef struct dsa_file {
    dsa_table t;
    dsa_reader r;
    FILE *f;
    struct csv_parser p;
    int p_init, keep, eof;
    int tail; /* fread found the end while a line was completed (dsa_feed) */
    char *buf;
    size_t pos, n, linelen;
    size_t next;  /* the next record to hand out */
    size_t nread; /* records handed out so far */
} dsa_file;

#define DSA_BUF (1 << 18)
/* The seed's column names. */
#define DSA_EPOCH "Epoch"
#define DSA_INDEX "Index number"
#define DSA_FETCH_GPU "Fetch time (sec)_gpu"
#define DSA_START_GPU "Start time_gpu"
#define DSA_STEP "Step"
#define DSA_GPU "GPU"
#define DSA_TIME "Time"
#define DSA_ITER "Iteration time (sec)"
#define DSA_STALL "Training stall time (sec)"

/* Longest field text quoted in an error message. */
#define DSA_QUOTE "%.40s"
/* A row's (Epoch, Index number) and its line; set = 0 before the first. */
typedef struct dsa_key {
    int64_t ep, ix;
    long line;
    int set;
} dsa_key;
/* One perf row, for sorting by (Epoch, GPU, Step) and then file order. */
typedef struct dsa_prow {
    int64_t epoch, step;
    int64_t gpu;
    size_t row;
} dsa_prow;
/* The columns a check needs. */
typedef struct dsa_cols {
    size_t ce, ci;     /* fetch, start: Epoch, Index number */
    size_t *gpu;       /* [G] fetch: Fetch time (sec)_gpu{g}; start: Start time_gpu{g} */
    size_t cs, cg, ct; /* perf: Step, GPU, Time */
    size_t cit, cst;   /* perf: Iteration time (sec), Training stall time (sec) */
} dsa_cols;

void dsa_table_free(dsa_table *t);
void dsa_close(dsa_file *d);
int dsa_open(const char *path, int keep, dsa_file *d, stall_err *err);
int dsa_next(dsa_file *d, size_t *row);
int dsa_read(const char *path, dsa_table *t, stall_err *err);
int dsa_int(const dsa_table *t, size_t row, size_t col, int64_t *out, stall_err *err);
int dsa_key_row(const dsa_table *t, size_t r, size_t ce, size_t ci, dsa_key *prev, stall_err *err);
int dsa_keys(const dsa_table *t, size_t ce, size_t ci, int64_t *ep, int64_t *ix, stall_err *err);
int dsa_key_missing(const char *has, long line, size_t col, int64_t ep, int64_t ix,
                    const char *lacks, stall_err *err);
int dsa_prow_cmp(const void *a, const void *b);
int dsa_fetch_header(const dsa_table *t, dsa_cols *c, int *G, stall_err *err);
int dsa_start_header(const dsa_table *t, int G, const char *fetch_path, dsa_cols *c,
                     stall_err *err);
int dsa_fs_values(const dsa_table *f, size_t fr, const dsa_cols *fc, const dsa_table *s, size_t sr,
                  const dsa_cols *sc, int G, double *v, stall_time *ts, stall_err *err);
int dsa_perf_header(const dsa_table *t, dsa_cols *c, stall_err *err);
int dsa_perf_key(const dsa_table *t, size_t r, const dsa_cols *c, int G, const char *fetch_path,
                 dsa_prow *p, stall_err *err);
int dsa_perf_values(const dsa_table *t, size_t r, const dsa_cols *c, stall_time *time, double *iter,
                    double *stall, stall_err *err);
int dsa_perf_dup(const char *path, long line, const dsa_cols *c, const dsa_prow *b, long first_line,
                 stall_err *err);
/* Where in perf a missing row of (Epoch, Step) belongs, for dsa_no_row:
 * among that step's rows (line: the first of them, in file order), before
 * the first row of a later (Epoch, Step) (line: that row), or after the
 * file's last row (line: that row, or the header's when it has none). */
enum { DSA_AT_STEP, DSA_AT_BEFORE, DSA_AT_END };
/* GPU g has no perf row for Step index of the epoch (fetch_line has that
 * Index number): STALL_EPARSE naming perf's line where the row belongs
 * (at, one of DSA_AT_*) and its GPU column (DSA_AT_STEP) or Step column. */
int dsa_no_row(const char *path, const dsa_cols *c, int g, int64_t index, int64_t epoch,
               const char *fetch_path, long fetch_line, int at, long line, stall_err *err);
int dsa_extra_step(const char *path, long line, const dsa_cols *c, int64_t step, int g,
                   int64_t epoch, const char *fetch_path, stall_err *err);
void dsa_trace_alloc(stall_ds_trace *tr, size_t N);
/* The clocks of start and perf agree for batch k of b (dsanalyzer.h): q0[g]
 * is GPU g's first request of the epoch (perf line q0_line[g]), start_line
 * the batch's start line, perf_line[g] GPU g's perf line of the batch.
 * 0, or STALL_EPARSE naming the first offending GPU column. */
int dsa_clock(const char *start_path, long start_line, const dsa_cols *sc, const char *perf_path,
              const long *perf_line, const stall_ds_trace *b, size_t k, const stall_time *q0,
              const long *q0_line, stall_err *err);

/* The first pass of a stream (dsanalyzer_check.c): every check of
 * stall_ds_load while each file is read once, the batches handed out as
 * they are found good. dsa_check_open fills G and, as their headers are
 * read, the columns (the caller frees their gpu arrays); it fails only for
 * an error of the fetch file's header line, which comes first. */
typedef struct dsa_check dsa_check;
int dsa_check_open(const char *fetch_csv, const char *start_csv, const char *perf_csv,
                   int64_t epoch, dsa_cols *fc, dsa_cols *sc, dsa_cols *pc, int *G, dsa_check **out,
                   stall_err *err);
/* As stall_ds_next into v (a trace of one row); at the end of the pass,
 * 0 when every check held, else the first error or STALL_DS_UNSORTED. */
int dsa_check_next(dsa_check *c, stall_ds_trace *v, size_t *k, stall_err *err);
/* The selected epoch's rows so far, and the fetch rows before it. */
size_t dsa_check_rows(const dsa_check *c);
size_t dsa_check_label0(const dsa_check *c);
void dsa_check_close(dsa_check *c);
/* stall_ds_load reading the three files whole (perf rows in any order). */
int dsa_load_whole(const char *fetch_csv, const char *start_csv, const char *perf_csv,
                   int64_t epoch, stall_ds_trace **out, stall_err *err);
int dsa_no_epoch(const char *fetch_path, const dsa_cols *fc, int64_t epoch, stall_err *err);

#endif
