/*
 * tidy_check.c - the tidy reader's checks of a row against the rows before
 * it (tidy_int.h): its place in the (epoch, batch, rank) grid, which the
 * sorted order fixes, and its times and settings against its rank's
 * previous row and the trace's first row. Split from tidy.c, which parses.
 */
#include "tidy_int.h"

#include <stdlib.h>
#include <string.h>

/* Checks the row's place in the (epoch, batch, rank) grid. */
int tidy_place(stall_tidy_stream *t, int64_t e, int64_t k, int64_t r)
{
    if (t->rows == 0) {
        if (e != 0 || k != 0 || r != 0)
            return tidy_fail(t, -1, "the first row must be rank 0, epoch 0, batch 0%s%s", "", "");
    } else if (e == t->cur_e && k == t->cur_k && r == t->cur_r + 1) {
        if (t->ranks > 0 && r >= t->ranks)
            return tidy_fail(t, t->col[TC_RANK],
                             "rank %s is beyond the %s ranks of the first batch",
                             t->field[t->col[TC_RANK]], "known");
    } else if (e == t->cur_e && k == t->cur_k + 1 && r == 0) {
        if (t->ranks == 0)
            t->ranks = t->cur_r + 1;
        else if (t->cur_r + 1 != t->ranks)
            return tidy_fail(t, -1,
                             "batch before this line has fewer rows than there are ranks "
                             "(ranks disagree on batches, or rows are unsorted)%s%s",
                             "", "");
    } else if (e == t->cur_e + 1 && k == 0 && r == 0) {
        if (t->ranks == 0)
            t->ranks = t->cur_r + 1;
        else if (t->cur_r + 1 != t->ranks)
            return tidy_fail(
                t, -1, "batch before this line has fewer rows than there are ranks%s%s", "", "");
        if (t->batches == 0)
            t->batches = t->cur_k + 1;
        else if (t->cur_k + 1 != t->batches)
            return tidy_fail(t, -1,
                             "the epoch before this line has a different batch count than "
                             "epoch 0 (%s%s)",
                             "ranks must agree on batches per epoch", "");
    } else if (r != t->cur_r && (e < t->cur_e || (e == t->cur_e && k < t->cur_k))) {
        /* Another rank starts over: per-rank files were concatenated, or
         * the rows are in (rank, epoch, batch) order. */
        char got[96];
        snprintf(got, sizeof got, "rank %lld starts over at epoch %lld, batch %lld", (long long)r,
                 (long long)e, (long long)k);
        return tidy_fail(t, t->col[TC_RANK],
                         "%s: rows are in per-rank order (per-rank files concatenated?); merge "
                         "the per-rank files with `python3 %s/stallsim_capture.py merge "
                         "trace.csv trace_rank*.csv`%s",
                         got, stall_tools_dir(), "");
    } else {
        char got[96];
        snprintf(got, sizeof got, "(rank %lld, epoch %lld, batch %lld)", (long long)r, (long long)e,
                 (long long)k);
        return tidy_fail(t, -1,
                         "row %s out of order or duplicated: rows must be sorted by (epoch, batch, "
                         "rank) with no gaps%s",
                         got, "");
    }
    t->cur_e = e;
    t->cur_k = k;
    t->cur_r = (int)r;
    return 0;
}

/* What must hold between rows: one loader configuration for the whole
 * trace; per rank, a batch requested no earlier than the previous one
 * ended, and one epoch_start per epoch, no later than its first request. */
void tidy_consistent(stall_tidy_stream *t, int64_t e, int64_t k, int64_t r)
{
    static const int cols[4] = {TC_WORKERS, TC_PREFETCH, TC_PIN, TC_PERSISTENT};
    for (int j = 0; j < 4; j++) {
        int c = cols[j];
        if (t->col[c] < 0)
            continue;
        if (t->rows == 0)
            t->setting[j] = t->v[c];
        else if (t->v[c] != t->setting[j]) {
            tidy_fail(t, t->col[c],
                      "'%s' is %lld here but %lld on line %ld (one loader "
                      "configuration per trace)",
                      tidy_names[c], (long long)t->v[c], (long long)t->setting[j], t->setting_line);
            return;
        }
    }
    if (t->rows == 0)
        t->setting_line = t->line;
    if (r >= t->nrank_cap) {
        int cap = (int)r + 1 > 2 * t->nrank_cap ? (int)r + 1 : 2 * t->nrank_cap;
        t->last_iter_end = stall_xrealloc(t->last_iter_end, (size_t)cap * sizeof(stall_time));
        t->cur_epoch_start = stall_xrealloc(t->cur_epoch_start, (size_t)cap * sizeof(stall_time));
        t->last_row_line = stall_xrealloc(t->last_row_line, (size_t)cap * sizeof(long));
        for (int q = t->nrank_cap; q < cap; q++)
            t->last_iter_end[q] = -1;
        t->nrank_cap = cap;
    }
    stall_time req = t->v[TC_REQUEST];
    if (t->last_iter_end[r] >= 0 && req < t->last_iter_end[r]) {
        tidy_fail(t, t->col[TC_REQUEST],
                  "'request' is before the 'iter_end' of rank %lld's previous batch on line %ld "
                  "(batches must follow each other)",
                  (long long)r, t->last_row_line[r]);
        return;
    }
    if (t->col[TC_ESTART] >= 0) {
        stall_time es = t->v[TC_ESTART];
        if (k == 0)
            t->cur_epoch_start[r] = es;
        if (es > req) {
            tidy_fail(t, t->col[TC_ESTART], "'epoch_start' is after this batch's 'request'%s", "");
            return;
        }
        if (es != t->cur_epoch_start[r]) {
            tidy_fail(t, t->col[TC_ESTART],
                      "'epoch_start' differs from batch 0 of epoch %lld on rank %lld", (long long)e,
                      (long long)r);
            return;
        }
        if (k == 0 && t->last_iter_end[r] >= 0 && es < t->last_iter_end[r]) {
            tidy_fail(t, t->col[TC_ESTART],
                      "'epoch_start' is before the previous epoch's last 'iter_end' (line %ld)",
                      t->last_row_line[r]);
            return;
        }
    }
    /* Without the column, an epoch starts at each rank's first request. */
    if (t->col[TC_ESTART] < 0 && k == 0)
        t->cur_epoch_start[r] = req;
    t->last_iter_end[r] = t->v[TC_ITEREND];
    t->last_row_line[r] = t->line;
}
