/*
 * report_int.h - private to models/report*.c: the kept iterations' values
 * behind a run summary's mean, std and p50/p95/p99 (report_vals.c).
 *
 * Each kept iteration adds three integer-ns values (iteration time, stall,
 * delay). Up to `limit` of them stay in memory and the statistics are
 * GSL's, as they always were; beyond it (a streamed run of millions of
 * iterations) they go to an unlinked temporary file and the statistics are
 * computed from passes over it with GSL's own arithmetic (the running mean
 * and variance of statistics/mean_source.c and variance_source.c, the
 * interpolation of gsl_stats_quantile_from_sorted_data) and the order
 * statistics found by radix selection on the integers, so the numbers are
 * the same to the last bit while memory stays O(limit).
 */
#ifndef STALL_REPORT_INT_H
#define STALL_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stall/report.h"

#define RV_COLS 3

typedef struct rv_store {
    int64_t *buf;     /* [i * RV_COLS + c], values not yet spilled */
    size_t nbuf, cap; /* rows in buf, allocated */
    size_t limit;     /* rows held before spilling (SIZE_MAX: never) */
    size_t n;         /* rows in all */
    int fd;           /* the spill, unlinked; -1 none */
    bool io_failed;   /* a spill write failed (reported by rv_stats) */
    int64_t min[RV_COLS], max[RV_COLS];
} rv_store;

void rv_init(rv_store *s, size_t limit);
void rv_free(rv_store *s);
void rv_add(rv_store *s, const int64_t v[RV_COLS]);
/* The statistics of each column in seconds (NAN for no rows, std NAN for
 * one). Returns 0, or -1 when the spill could not be written or read
 * (errno says why). */
int rv_stats(rv_store *s, stall_stat out[RV_COLS]);

#endif
