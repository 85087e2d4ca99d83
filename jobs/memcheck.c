/*
 * memcheck.c - the memory a model run needs and the disk its files take,
 * estimated before it runs, and its refusal where the machine has less (feed.h: wi_mem_check;
 * feed.c decides how the tables are held).
 */
#include "feed.h"

#include <stdio.h>

#include "stall/limits.h"

/* Bytes an observer keeps per rank-iteration (analyze.c's recorder: seven
 * 8-byte columns and a 4-byte one, and three of a checkpoint's, in arrays
 * that grow by doubling: up to twice that). */
#define WI_OBSERVED_CELL_BYTES (2 * (9 * 8 + 4))

/* The memory a run of g ranks x ne epochs x n batches needs: whole tables
 * hold the fetch and compute tables per rank-iteration and the tail per
 * iteration (measured: 8 + 8 + 8 / g bytes per rank-iteration; the report
 * streams its rows and holds a fixed number for its quantiles); tables
 * drawn as asked hold the tail and lazy bytes (wi_lazy_bytes, and the
 * pools built for it); an observer's records; the model's slots and queues
 * per rank. UINT64_MAX on overflow. */
static uint64_t wi_mem_estimate(int g, int ne, int64_t n, wi_store store, size_t lazy,
                                bool observed)
{
    size_t iters, cells, a = 0, b = 0, c, o = 0, w;
    if (!stall_size_mul((size_t)ne, (size_t)n, &iters) || !stall_size_mul(iters, (size_t)g, &cells))
        return UINT64_MAX;
    if ((store == WI_STORE_WHOLE && !stall_size_mul(cells, 2 * sizeof(stall_time), &a)) ||
        (store != WI_STORE_NONE && !stall_size_mul(iters, sizeof(stall_time), &b)) ||
        (observed && !stall_size_mul(cells, WI_OBSERVED_CELL_BYTES, &o)) ||
        !stall_size_mul((size_t)g, 4096 + 64 * (size_t)STALL_LIMIT_WORKERS, &c) ||
        (store == WI_STORE_LAZY && __builtin_add_overflow(a, lazy, &a)) ||
        __builtin_add_overflow(a, b, &w) || __builtin_add_overflow(w, c, &w) ||
        __builtin_add_overflow(w, o, &w) || __builtin_add_overflow(w, (size_t)(16 << 20), &w))
        return UINT64_MAX;
    return (uint64_t)w;
}

int wi_mem_check_as(const wi_whatif *what, int g, int ne, int64_t n, wi_store store, size_t lazy,
                    stall_err *err)
{
    char run[STALL_PATH_MAX + 80];
    snprintf(run, sizeof run, "%s: %d ranks x %d epochs x %lld batches%s", wi_where(what->ini), g,
             ne, (long long)n,
             what->observed ? " (with the run's records for --analyze or --timeline)" : "");
    char fix[128];
    snprintf(fix, sizeof fix,
             "make the run smaller ([cluster] gpus, [run] epochs, [run] batches)%s",
             what->observed ? " or leave out --analyze and --timeline" : "");
    return stall_mem_check(wi_mem_estimate(g, ne, n, store, lazy, what->observed), run, fix, err);
}

int wi_mem_check(const wi_whatif *what, int g, int ne, int64_t n, bool tables, stall_err *err)
{
    return wi_mem_check_as(what, g, ne, n, tables ? WI_STORE_WHOLE : WI_STORE_NONE, 0, err);
}

/* The least a row of iterations.csv and of ranks.csv takes: one-digit
 * integers and 0.000000000 in each seconds column (stall_report_stream's
 * fixed 9 decimals), commas, newline. */
#define WI_ITER_ROW_MIN 112
#define WI_RANK_ROW_MIN 18

int wi_disk_check(const wi_whatif *what, const char *dir, int g, int ne, int64_t n, bool ranks_csv,
                  int alignments, stall_err *err)
{
    double row = WI_ITER_ROW_MIN + (ranks_csv ? (double)g * WI_RANK_ROW_MIN : 0.0);
    double bytes = (double)ne * (double)n * row * alignments;
    char run[STALL_PATH_MAX + 160];
    snprintf(run, sizeof run,
             "%s: %d ranks x %d epochs x %lld batches: iterations.csv (%d B a row or more)%s%s",
             wi_where(what->ini), g, ne, (long long)n, WI_ITER_ROW_MIN,
             ranks_csv ? " and ranks.csv (18 B a rank and iteration)" : "",
             alignments > 1 ? " for each fetch alignment" : "");
    char fix[200];
    snprintf(fix, sizeof fix,
             "make the run smaller ([run] batches, [run] epochs)%s%s, or give -o a folder on a "
             "disk with room",
             ranks_csv ? ", set [report] per_rank = false" : "",
             alignments > 1 ? ", give [align] fetch one policy" : "");
    return stall_disk_check(bytes < 1.8e19 ? (uint64_t)bytes : UINT64_MAX, dir, run, fix, err);
}
