/*
 * htmlheadline_int.h - what the two parts of the report's headline share
 * (private to outputs/): the rule's thresholds (one table, in
 * htmlheadline.c), reading a folder's CSVs, and writing the lead line and
 * suggestions. htmlheadline.c holds run, validate and analyze;
 * htmlheadline_grid.c sweep, plan and seed.
 */
#ifndef STALL_OUTPUTS_HTMLHEADLINE_INT_H
#define STALL_OUTPUTS_HTMLHEADLINE_INT_H

#include "htmlheadline.h"

#include <stdio.h>

#include "stall/table.h"

enum { HL_LOSS, HL_BUSY, HL_CLOSE, HL_WARN, HL_FLAT, HL_N };
typedef struct hl_threshold {
    const char *name;
    double value;
} hl_threshold;
/* The thresholds of the rule (htmlheadline.c), by the names above. */
extern const hl_threshold hl_rule[HL_N];
#define HL(i) (hl_rule[i].value)
/* The bound of a summary row (the rule above). */
typedef struct hl_bound {
    const char *word;
    double key; /* a share */
    const char *claim;
} hl_bound;

int hl_read(const char *dir, const char *name, stall_table **t, stall_err *err);
double hl_num(const stall_table *t, size_t r, const char *col);
const char *hl_get(const stall_table *t, size_t r, const char *col);
void hl_lead(FILE *f, const char *verdict, const char *key, const char *claim);
void hl_suggest(FILE *f, const char *why, const char *ini_dir, const char *cmd, const char *args,
                const char *out);
/* dir without trailing slashes, then suffix: a folder beside dir. Caller frees. */
char *hl_out_beside(const char *dir, const char *suffix);
hl_bound hl_bound_of(double stall, double barrier, double busy);
/* A model run's row r whose data-bound stall is mostly each epoch's first
 * batch becomes start-up-bound (docs/model.md 12): summary.csv's
 * first_batch_stall_share, else (an older folder) batch 0 of the
 * alignment's iterations.csv under dir; dir NULL reads no file. */
hl_bound hl_startup_rule(hl_bound bd, const char *dir, const stall_table *t, size_t r);
double hl_barrier(const stall_table *t, size_t r);
size_t hl_ref_row(const stall_table *t);
void hl_range(const stall_table *t, const char *col, double *lo, double *hi, size_t *ilo,
              size_t *ihi);
const char *hl_thr_col(const stall_table *t);
int hl_sweep(FILE *f, const char *dir, stall_err *err);
int hl_plan(FILE *f, const char *dir, stall_err *err);
int hl_seed(FILE *f, const char *dir, stall_err *err);

#endif
