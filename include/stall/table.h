/*
 * stall/table.h - a CSV file with a header row, read whole as text: the
 * result files stallsim itself writes (summary.csv, iterations.csv,
 * validate.csv, per_rank.csv, sweep.csv, scaling.csv ...), for the jobs
 * that read results back (plot, report).
 *
 * Cells are kept as the text read (quotes removed); stall_table_num turns
 * one into a number. Memory O(file size).
 */
#ifndef STALL_TABLE_H
#define STALL_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_table {
    char *path;    /* as given */
    int ncols;     /* from the header */
    size_t nrows;  /* data rows */
    char **header; /* [ncols] */
    char **cell;   /* [nrows * ncols], row-major; never NULL ("" when empty) */
    long *line;    /* [nrows]: each row's line in the file, for messages */
    bool nan_ok;   /* a table in the notebook's format (an unnamed index column
                      first): stallsim writes an undefined value as "nan" there */
} stall_table;

/* Reads path: a header row, then rows of exactly as many fields. Returns 0,
 * STALL_EIO (cannot open or read) or STALL_EPARSE ("path:line: ..." for a
 * malformed CSV, an empty file or a row with another field count). On
 * failure *out is NULL. Free with stall_table_free. */
int stall_table_read(const char *path, stall_table **out, stall_err *err);
void stall_table_free(stall_table *t);

/* The index of column name, or -1. */
int stall_table_col(const stall_table *t, const char *name);

/* The text of a cell (row < nrows, 0 <= col < ncols). */
const char *stall_table_get(const stall_table *t, size_t row, int col);

/* The cell as a number: NAN when col < 0 or the cell is empty (stallsim's
 * undefined value), or "nan" in a table with nan_ok. Anything else that is
 * not a finite decimal number (garbage, "inf", "nan" elsewhere, hexadecimal,
 * out of range: stallsim never writes them) is NAN too, and the first such
 * cell of the thread is kept, naming file, line and column, for
 * stall_table_refused: the readers (plot, report) call it before they write
 * anything. */
double stall_table_num(const stall_table *t, size_t row, int col);
/* The same for a notebook cell "mean±std": its mean (both parts checked). */
double stall_table_num_mean(const stall_table *t, size_t row, int col);
/* The same without keeping anything: for a look at whether a column of
 * text or numbers (a sweep axis, a table's cell shown as text) is numeric. */
double stall_table_num_probe(const stall_table *t, size_t row, int col);
/* Forgets the cell kept by stall_table_num (this thread). */
void stall_table_refused_reset(void);
/* 0, or STALL_EPARSE with err naming the first cell that stall_table_num
 * refused since the reset ("file:line:column: column 'name': 'text' is
 * not a number ..."). */
int stall_table_refused(stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
