/*
 * test_lazy.c - jobs/lazy.c, the cells beyond a trace resampled with
 * bootstrap and drawn as the run asks for them: every cell, asked in any
 * order, is the whole table's, the stream after them (the tails drawn
 * beyond the trace) is the same, and a run through the model, serial or on
 * threads, with more batches in flight than a row's first window, gives
 * the same records.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/feed.h"
#include "stall/limits.h"

static uint64_t lrand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A measured trace of mr ranks x me epochs x mb batches, each rank's last
 * batch partial (samples 16, the last 5). */
typedef struct ltrace {
    stall_measured m;
    stall_time *fetch, *compute, *tail, *gap;
} ltrace;

static void ltrace_make(ltrace *t, int mr, int me, int64_t mb, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    size_t cells = (size_t)mr * (size_t)me * (size_t)mb;
    t->fetch = malloc(cells * sizeof *t->fetch);
    t->compute = malloc(cells * sizeof *t->compute);
    t->tail = malloc((size_t)me * (size_t)mb * sizeof *t->tail);
    t->gap = calloc((size_t)me, sizeof *t->gap);
    for (size_t i = 0; i < cells; i++) {
        t->fetch[i] = (stall_time)(20000000 + lrand(&seed) % 20000000);
        t->compute[i] = (stall_time)(5000000 + lrand(&seed) % 5000000);
    }
    for (size_t i = 0; i < (size_t)me * (size_t)mb; i++)
        t->tail[i] = (stall_time)(lrand(&seed) % 1000000);
    t->m.ranks = mr;
    t->m.epochs = me;
    t->m.batches = mb;
    t->m.workers = t->m.prefetch = -1;
    t->m.samples = 16;
    t->m.samples_last = 5;
    t->m.fetch = t->fetch;
    t->m.compute = t->compute;
    t->m.tail = t->tail;
    t->m.gap = t->gap;
}

static void ltrace_free(ltrace *t)
{
    free(t->fetch);
    free(t->compute);
    free(t->tail);
    free(t->gap);
}

static void lwhat(wi_whatif *what, int64_t seed, double fscale)
{
    memset(what, 0, sizeof *what);
    what->ini = "t.ini";
    what->seed = seed;
    what->resample = STALL_RESAMPLE_BOOTSTRAP;
    what->fetch_dist.scale = what->compute_dist.scale = 1;
    what->fetch_dist.scale = fscale;
}

/* Every cell of b (lazy) asked in the given order against a (whole). */
static void lsame_cells(wi_tables *a, wi_tables *b, int order, uint64_t seed)
{
    int g = a->g, ne = a->ne;
    int64_t n = a->n;
    size_t cells = (size_t)ne * (size_t)g * (size_t)n;
    for (size_t j = 0; j < cells; j++) {
        size_t o = order == 0 ? j : order == 1 ? cells - 1 - j : (size_t)(lrand(&seed) % cells);
        int64_t k = (int64_t)(o % (size_t)n);
        int r = (int)(o / (size_t)n % (size_t)g), e = (int)(o / (size_t)n / (size_t)g);
        stall_time fa = wi_tables_fetch(a, e, r, k), fb = wi_tables_fetch(b, e, r, k);
        stall_time ca = wi_tables_compute(a, e, r, k), cb = wi_tables_compute(b, e, r, k);
        cr_assert(fa == fb && ca == cb,
                  "order %d: epoch %d rank %d batch %lld: whole %lld, %lld; lazy %lld, %lld", order,
                  e, r, (long long)k, (long long)fa, (long long)ca, (long long)fb, (long long)cb);
    }
}

Test(lazy, every_cell_in_any_order_is_the_whole_tables)
{
    static const struct {
        int mr, me;
        int64_t mb;
        int g, ne;
        int64_t n;
    } c[] = {
        {2, 1, 300, 7, 1, 300},  /* more ranks (plan's scaling curve) */
        {2, 2, 300, 3, 3, 700},  /* more ranks, epochs and batches */
        {1, 1, 1000, 1, 2, 999}, /* fewer batches, one more epoch */
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (int order = 0; order < 3; order++) {
            ltrace t;
            ltrace_make(&t, c[i].mr, c[i].me, c[i].mb, 11 + i);
            wi_whatif what;
            lwhat(&what, 7 + (int64_t)i, order == 2 ? 1.5 : 1.0);
            wi_tables a, b;
            stall_err err = {0};
            cr_assert_eq(
                wi_tables_build_l(&what, &t.m, c[i].g, c[i].ne, c[i].n, true, 1, 0, 0, &a, &err), 0,
                "%s", err.msg);
            cr_assert_eq(
                wi_tables_build_l(&what, &t.m, c[i].g, c[i].ne, c[i].n, true, 1, 0, 1, &b, &err), 0,
                "%s", err.msg);
            cr_assert_null(a.lazy);
            cr_assert_not_null(b.lazy);
            cr_assert_null(b.fetch);
            /* the stream after the cells: the tails drawn beyond the trace */
            cr_assert_eq(memcmp(a.tail, b.tail, (size_t)c[i].ne * (size_t)c[i].n * sizeof *a.tail),
                         0, "case %zu: the tails differ", i);
            lsame_cells(&a, &b, order, 99 + i);
            wi_tables_free(&a);
            wi_tables_free(&b);
            ltrace_free(&t);
        }
}

/* A run's records: each iteration's end and stall. */
typedef struct lrec {
    stall_time *v;
    size_t n, cap;
} lrec;

static void lrec_iter(void *ctx, const stall_iter_record *r)
{
    lrec *t = ctx;
    if (t->n + 2 > t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n++] = r->iter_end;
    t->v[t->n++] = r->stall_train;
}

static void lrun(wi_tables *w, int g, int ne, int64_t n, int workers, int threads, lrec *out)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = g;
    p.gpus_per_node = 1;
    p.epochs = ne;
    p.batches = n;
    p.workers = workers;
    p.prefetch = 2;
    p.threads = threads;
    wi_collect col;
    memset(&col, 0, sizeof col);
    col.hook = lrec_iter;
    col.hook_ctx = out;
    stall_model_stats st;
    stall_err err = {0};
    cr_assert_eq(wi_run(&p, w, &col, &st, &err), 0, "%s", err.msg);
}

/* 300 workers x prefetch 2: the run asks 600 batches behind its newest
 * fetch, past a row's first window (512), which grows; the records equal
 * the whole tables' on one thread and on three. */
Test(lazy, a_run_with_many_batches_in_flight_gives_the_same_records)
{
    ltrace t;
    ltrace_make(&t, 2, 1, 1500, 5);
    wi_whatif what;
    lwhat(&what, 3, 1.0);
    int g = 6, ne = 2;
    int64_t n = 1500;
    for (int workers = 1; workers <= 300; workers += 299)
        for (int th = 1; th <= 3; th += 2) {
            wi_tables a, b;
            stall_err err = {0};
            cr_assert_eq(wi_tables_build_l(&what, &t.m, g, ne, n, true, 1, 0, 0, &a, &err), 0);
            cr_assert_eq(wi_tables_build_l(&what, &t.m, g, ne, n, true, 1, 0, 1, &b, &err), 0);
            lrec ra = {0}, rb = {0};
            lrun(&a, g, ne, n, workers, 1, &ra);
            lrun(&b, g, ne, n, workers, th, &rb);
            cr_assert_eq(ra.n, rb.n);
            cr_assert_eq(memcmp(ra.v, rb.v, ra.n * sizeof *ra.v), 0,
                         "%d workers, %d threads: the records differ", workers, th);
            free(ra.v);
            free(rb.v);
            wi_tables_free(&a);
            wi_tables_free(&b);
        }
    ltrace_free(&t);
}

/* The memory check counts what the tables hold (wi_tables_mem_check, the
 * check wi_tables_build_l makes): a run whose cells beyond the trace are
 * drawn as asked (rows of 4,096 batches or more, resampled with bootstrap)
 * holds two generator states and a window per rank and epoch and the
 * tails, not 16 B per cell; the check charged the whole tables and refused
 * such a run where they would need 1.5 times the machine. The same run
 * with whole tables (lazy 0), or from a trace with a negative duration (no
 * cell is then drawn as asked), and a run whose tails alone pass the
 * machine are still refused, naming the keys that size the run; the build
 * refuses the last before it draws a cell. */
Test(lazy, the_memory_check_counts_the_cells_drawn_as_asked_as_they_are_held)
{
    uint64_t have = stall_mem_limit(NULL);
    if (have == 0)
        cr_skip_test("the machine's memory is unknown");
    ltrace t;
    ltrace_make(&t, 2, 1, 300, 17);
    wi_whatif what;
    lwhat(&what, 1, 1.0);
    const int64_t n = 100000000;
    int g = (int)ceil(1.5 * (double)have / (16.0 * (double)n));
    cr_assert_leq(g, STALL_LIMIT_RANKS);
    stall_err err = {0};
    cr_assert_eq(wi_tables_mem_check(&what, &t.m, g, 1, n, -1, &err), 0,
                 "%d ranks x 1e8 batches drawn as asked: %s", g, err.msg);
    cr_assert_eq(wi_tables_mem_check(&what, &t.m, g, 1, n, 0, &err), STALL_ECONFIG,
                 "%d ranks x 1e8 batches held whole passed", g);
    cr_assert(strstr(err.msg, "needs an estimated") &&
                  strstr(err.msg, "make the run smaller ([cluster] gpus, [run] epochs, [run] "
                                  "batches)"),
              "%s", err.msg);
    cr_assert_null(strchr(err.msg, '\n'), "%s", err.msg);
    stall_time keep = t.compute[7];
    t.compute[7] = -1;
    cr_assert_eq(wi_tables_mem_check(&what, &t.m, g, 1, n, -1, &err), STALL_ECONFIG,
                 "a trace with a negative duration: held whole, yet passed");
    t.compute[7] = keep;
    int ne = (int)ceil(1.5 * (double)have / (8.0 * (double)n));
    cr_assert_leq(ne, STALL_LIMIT_EPOCHS);
    cr_assert_eq(wi_tables_mem_check(&what, &t.m, 2, ne, n, -1, &err), STALL_ECONFIG,
                 "%d epochs x 1e8 batches of tails passed", ne);
    cr_assert(strstr(err.msg, "[run] epochs"), "%s", err.msg);
    what.observed = true;
    cr_assert_eq(wi_tables_mem_check(&what, &t.m, g, 1, n, -1, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "leave out --analyze and --timeline"), "%s", err.msg);
    what.observed = false;
    wi_tables w;
    cr_assert_eq(wi_tables_build_l(&what, &t.m, 2, ne, n, true, 1, 0, -1, &w, &err), STALL_ECONFIG,
                 "%s", err.msg);
    ltrace_free(&t);
}
