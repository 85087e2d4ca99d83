/*
 * stall/seed.h - seed-compatible mode: the research notebook's row-by-row
 * what-if (shared/seeds/000_*.txt), reproduced bit for bit as specified in
 * docs/model.md section 4.3, quirks included.
 *
 * This is not the event simulation. Each batch (row) is treated on its own:
 * the measured start and fetch times of the G GPUs are replaced by aligned
 * ones, each measured training stall is moved by how much earlier or later
 * the batch would have been ready, and the row's iteration time, stall and
 * delay are rebuilt. Nothing carries over from one row to the next.
 *
 * Typical use, per (fetch, start) configuration in FETCH-major order (Q30):
 *   stall_seed_run(trace, fa, sa, &r, &err);
 *   stall_seed_write_csv(r, "<out>/FETCH_ALIGN_<fa>_START_ALIGN_<sa>/<FILE>.csv", &err);
 *   stall_seed_summarize(r, 10, 0.030, &rows[i], &err);
 * and at the end stall_seed_write_summary("<out>/total_summary.csv", FILE, rows, n, &err).
 */
#ifndef STALL_SEED_H
#define STALL_SEED_H

#include <stddef.h>
#include <stdint.h>

#include "stall/align.h"
#include "stall/base.h"
#include "stall/dsanalyzer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque: the per-row outputs of one (fetch, start) configuration. */
typedef struct stall_seed_result stall_seed_result;

/* Runs one configuration over every row of t. The result does not refer to
 * t afterwards. Returns 0 and sets *out (free with stall_seed_free), or:
 * STALL_EINVAL when t->label0 != 0 (rows of other epochs come before the
 * selected one in the fetch CSV: the notebook then reads rows by the wrong
 * labels and crashes, quirks Q7/Q13), or STALL_EPARSE when a time sum
 * overflows int64 ns. *out is untouched on failure. */
int stall_seed_run(const stall_ds_trace *t, stall_align fa, stall_align sa, stall_seed_result **out,
                   stall_err *err);

/* NULL-safe. */
void stall_seed_free(stall_seed_result *r);

/* The folder name the notebook gives a configuration,
 * "FETCH_ALIGN_<fa>_START_ALIGN_<sa>" (also the summary's Align column).
 * buf must hold 64 bytes. Returns buf. */
char *stall_seed_config_name(char *buf, stall_align fa, stall_align sa);

/* One output row, as written to the per-configuration CSV. */
typedef struct stall_seed_row {
    int64_t epoch, index;
    double iter_s;             /* Iteration time (sec) */
    const double *gpu_stall_s; /* [G] Training Stall time (sec)_gpu{g}, owned by the result */
    double stall_s;            /* Training stall time (sec): max over GPUs */
    double delay_s;            /* Delay time (sec): max - min stall */
    double fetch_diff_s;       /* Batch fetch time diff (sec), simulated */
    double start_diff_s;       /* Batch fetch start time diff (sec), simulated */
} stall_seed_row;

size_t stall_seed_rows(const stall_seed_result *r);
int stall_seed_gpus(const stall_seed_result *r);
/* Row k < stall_seed_rows(r); the pointers live as long as r. */
void stall_seed_get_row(const stall_seed_result *r, size_t k, stall_seed_row *row);

/* Writes the per-configuration CSV with the notebook's header and number
 * text (pandas' index column 0..N-1, integers as such, doubles as Python's
 * repr) atomically via stall_write_atomic. The folder must exist.
 * Returns 0 or STALL_EIO. */
int stall_seed_write_csv(const stall_seed_result *r, const char *path, stall_err *err);

typedef struct stall_seed_summary {
    char align[64]; /* "FETCH_ALIGN_avg_START_ALIGN_min" */
    char iter[64], stall[64], delay[64], start_diff[64], fetch_diff[64]; /* "mean±std" */
    double effective_delay_pct;
    double mean_iter_s, mean_stall_s, mean_delay_s; /* numeric means of the kept rows */
    size_t kept_rows;
} stall_seed_summary;

/* The notebook's cell 6 for one configuration: keeps the rows with Index
 * number > warmup_index (10 in the seed, Q22), computes from the values as
 * pandas reads the written CSV back (repr text parsed with stall_pd_strtod),
 * mean (left-to-right sum / n) and std (two passes, n-1) as pandas 1.5 with
 * bottleneck, each printed as "{round(mean,4)}±{round(std,4)}" (numpy
 * rounding, repr text; "nan" for the std of one row), and the percentage of
 * kept rows with Delay > threshold (0.030 in the seed, strict, Q23).
 * Returns 0, or STALL_EINVAL when no row is kept (the notebook divides by
 * zero there), leaving *out untouched. */
int stall_seed_summarize(const stall_seed_result *r, int64_t warmup_index, double threshold,
                         stall_seed_summary *out, stall_err *err);

/* Writes total_summary.csv (the notebook's 16 columns, index 0..n-1, rows in
 * the given order) atomically. The file-name columns come from file_stem
 * (the trace's FILE, without ".csv") parsed as the notebook does (Q21,
 * mislabelled columns included); when the stem does not follow its
 * convention (the notebook would raise), those eight fields are empty.
 * Returns 0 or STALL_EIO. */
int stall_seed_write_summary(const char *path, const char *file_stem,
                             const stall_seed_summary *rows, size_t n, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
