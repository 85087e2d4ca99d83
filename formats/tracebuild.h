/*
 * tracebuild.h - private to formats/: what the Kineto and dftracer readers
 * share once the events are read: the files of a path (a file or a folder
 * of per-rank files), per-rank iterations put into a stall_tidy_trace (the
 * shape analyze and timeline read), and the lines saying what was found.
 */
#ifndef STALL_FORMATS_TRACEBUILD_H
#define STALL_FORMATS_TRACEBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stall/base.h"
#include "stall/tidy.h"

/* One iteration of one rank as the trace shows it; ns since the epoch. */
typedef struct tb_iter {
    stall_time request, ready, compute_end, iter_end;
    /* A checkpoint written after this iteration (dftracer), as the tidy
     * ckpt_start/ckpt_end columns hold it; has_ckpt false: none. */
    stall_time ckpt_start, ckpt_end;
    bool has_ckpt;
} tb_iter;

typedef struct tb_epoch {
    stall_time start;
    tb_iter *it;
    size_t n, cap;
    double checkpoint_s;
} tb_epoch;

typedef struct tb_rank {
    int64_t rank; /* as the trace names it */
    char *file;   /* the (first) file it came from */
    tb_epoch *ep;
    int nep, capep;
} tb_rank;

void tb_push(tb_epoch *e, const tb_iter *it);
tb_epoch *tb_add_epoch(tb_rank *r, stall_time start);
void tb_rank_free(tb_rank *r);

/* The files of path: path itself when it is a file, else the names in the
 * folder ending in one of exts (NULL-terminated), sorted. Returns 0,
 * STALL_EIO (cannot open) or STALL_EPARSE (a folder without such files). */
int tb_files(const char *path, const char *const *exts, char ***files, int *n, stall_err *err);
void tb_files_free(char **files, int n);

/* The trace of ranks[0..n) (sorted here by rank): epochs that some rank
 * lacks or where some rank has no iteration are left out, and every
 * (rank, epoch) is cut to the fewest iterations any has; *dropped_it and
 * *dropped_ep (may be NULL) get the counts left out, and dropped_ck (may
 * be NULL) the checkpoints (has_ckpt) that went with them: [0] after
 * iterations cut from kept epochs, [1] in epochs left out (run and
 * validate do not see them; the epochs' checkpoint_s sums keep [0]'s).
 * fetch_known: the
 * iteration's wait is the whole fetch (fetch start = request, end = ready,
 * in the main process); otherwise fetch times are unknown
 * (t->fetch_unknown). Returns NULL when nothing is left. */
stall_tidy_trace *tb_build(tb_rank *ranks, int n, bool fetch_known, bool with_compute_end,
                           int workers, bool with_checkpoints, const char *path,
                           int64_t *dropped_it, int *dropped_ep, int64_t dropped_ck[2]);

/* Appends printf text to a growable string (*s may be NULL). */
void tb_say(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The rank a file name states: "rank-34.", "rank34_", "trace-3-of-8"
 * (*world set, else -1); -1 when it names none. */
int64_t tb_rank_from_name(const char *file, int64_t *world);

/* Sorts v[0..n) of int64 pairs etc.: exact-duplicate removal for spans. */
typedef struct tb_span {
    stall_time ts, dur;
    uint64_t key; /* the thread, hashed; 0 for none */
} tb_span;
size_t tb_sort_unique(tb_span *v, size_t n);
uint64_t tb_hash(const char *a, const char *b);

#endif
