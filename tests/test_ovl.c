/*
 * test_ovl.c - jobs/fill.c's fill overlapped with the run (wi_tables_ovl_start,
 * stall_durations.ready): on random configurations, the tables and every
 * record of the run are those of the serial fill on one thread, through the
 * closed form (which waits for the cells batch by batch) and through the
 * event engine (which waits for all of them first); tables freed while still
 * being filled stop cleanly; a draw that may pass the limit, or a compute
 * whose bound may pass the horizon, keeps the serial fill and its error.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/draw.h"
#include "jobs/feed.h"
#include "stall/limits.h"

/* FNV-1a over a record's fields and per-rank arrays, one hash per
 * iteration. */
typedef struct trec {
    uint64_t *h;
    size_t n, cap;
    int g;
} trec;

static uint64_t tmix(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h;
}

static void trec_iter(void *ctx, const stall_iter_record *r)
{
    trec *t = ctx;
    uint64_t h = UINT64_C(14695981039346656037);
    stall_time v[] = {r->epoch,     r->batch,        r->epoch_start, r->iter_end, r->iter_time,
                      r->stall_max, r->stall_min,    r->delay,       r->wait_max, r->compute_max,
                      r->tail,      r->fetch_spread, r->start_spread};
    h = tmix(h, v, sizeof v);
    h = tmix(h, &r->wait_mean_s, sizeof r->wait_mean_s);
    size_t g = (size_t)t->g;
    h = tmix(h, r->stall, g * sizeof *r->stall);
    h = tmix(h, r->ready, g * sizeof *r->ready);
    h = tmix(h, r->compute, g * sizeof *r->compute);
    h = tmix(h, r->fetch_start, g * sizeof *r->fetch_start);
    h = tmix(h, r->fetch_end, g * sizeof *r->fetch_end);
    h = tmix(h, r->fetched, g * sizeof *r->fetched);
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->h = realloc(t->h, t->cap * sizeof *t->h);
    }
    t->h[t->n++] = h;
}

static uint64_t trand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double tunit(uint64_t *s)
{
    return (double)(trand(s) >> 11) / 9007199254740992.0;
}

/* One configuration: tables and run, serial against overlapped on th
 * threads. */
static void tsame(const wi_whatif *what, const stall_model_params *p, int th)
{
    int g = p->ranks, ne = p->epochs;
    int64_t n = p->batches;
    wi_tables a, b;
    stall_err err;
    memset(&err, 0, sizeof err);
    cr_assert_eq(wi_tables_build_x(what, NULL, g, ne, n, true, 1, 0, &a, &err), 0, "%s", err.msg);
    cr_assert_null(a.ovl);
    cr_assert_eq(wi_tables_build_x(what, NULL, g, ne, n, true, th, 1, &b, &err), 0, "%s", err.msg);
    cr_assert_not_null(b.ovl, "the overlap is used");
    trec ra = {.g = g}, rb = {.g = g};
    wi_collect ca = {.hook = trec_iter, .hook_ctx = &ra}, cb = {.hook = trec_iter, .hook_ctx = &rb};
    stall_model_stats sa, sb;
    cr_assert_eq(wi_run(p, &a, &ca, &sa, &err), 0, "%s", err.msg);
    cr_assert_eq(wi_run(p, &b, &cb, &sb, &err), 0, "%s", err.msg);
    cr_assert_null(b.ovl, "the run leaves the fill finished");
    cr_assert_eq(ra.n, rb.n);
    cr_assert_eq(ra.n, (size_t)ne * (size_t)n);
    for (size_t i = 0; i < ra.n; i++)
        cr_assert_eq(ra.h[i], rb.h[i], "g %d ne %d n %lld th %d: record %zu differs", g, ne,
                     (long long)n, th, i);
    cr_assert_eq(sa.events, sb.events);
    cr_assert_eq(sa.end, sb.end);
    size_t cells = (size_t)ne * (size_t)g * (size_t)n;
    cr_assert_eq(memcmp(a.fetch, b.fetch, cells * sizeof *a.fetch), 0);
    cr_assert_eq(!a.compute, !b.compute);
    if (a.compute)
        cr_assert_eq(memcmp(a.compute, b.compute, cells * sizeof *a.compute), 0);
    cr_assert_eq(a.compute_ns, b.compute_ns);
    cr_assert_eq(memcmp(a.tail, b.tail, (size_t)ne * (size_t)n * sizeof *a.tail), 0);
    wi_tables_free(&a);
    wi_tables_free(&b);
    free(ra.h);
    free(rb.h);
}

static stall_dist tdist(uint64_t *s, double mean)
{
    int k = (int)(trand(s) % 4);
    if (k == 0)
        return (stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = mean, .scale = 1};
    double sigma = k == 1 ? 0 : 1.5 * tunit(s);
    return (stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = mean, .sigma = sigma, .scale = 1};
}

Test(ovl, random_configurations_give_the_serial_tables_and_run)
{
    uint64_t s = 0x9e3779b97f4a7c15u;
    for (int it = 0; it < 60; it++) {
        wi_whatif what;
        memset(&what, 0, sizeof what);
        what.ini = "t.ini";
        what.seed = (int64_t)(trand(&s) % 100000);
        what.fetch_dist = tdist(&s, 0.001 + 0.1 * tunit(&s));
        what.compute_dist = tdist(&s, 0.001 + 0.05 * tunit(&s));
        if (trand(&s) % 3 == 0) {
            what.fetch_dist.scale = 0.5 + tunit(&s);
            what.compute_dist.scale = 0.5 + tunit(&s);
        }
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = 1 + (int)(trand(&s) % (it % 3 == 0 ? 600 : 40));
        p.gpus_per_node = p.ranks < 8 ? p.ranks : 8;
        p.epochs = 1 + (int)(trand(&s) % 3);
        p.batches = 1 + (int64_t)(trand(&s) % 700);
        p.workers = (int)(trand(&s) % 5);
        p.prefetch = 1 + (int)(trand(&s) % 3);
        p.persistent_workers = trand(&s) % 2;
        p.startup = (stall_time)(trand(&s) % 1000000);
        p.handover = (stall_time)(trand(&s) % 100000);
        switch (trand(&s) % 5) {
        case 0: /* the event engine: everything awaited first */
            p.fetch_align = STALL_ALIGN_AVG;
            break;
        case 1: /* uneven ranks: the durations wrapped */
            p.uneven.slow = 1;
            p.uneven.compute_factor = 1.5;
            p.uneven.fetch_factor = 2;
            p.uneven.straggler_fraction = 0.1;
            p.uneven.straggler_factor = 3;
            p.uneven.straggler_iters = 5;
            break;
        default:
            break;
        }
        tsame(&what, &p, 2 + (int)(trand(&s) % 3));
    }
}

/* Freed while the helpers still draw and cook: they stop and are joined;
 * finished without a run: the serial tables. */
Test(ovl, freed_or_finished_before_any_run)
{
    wi_whatif what;
    memset(&what, 0, sizeof what);
    what.ini = "t.ini";
    what.seed = 5;
    what.fetch_dist =
        (stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.05, .sigma = 0.3, .scale = 1};
    what.compute_dist =
        (stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.02, .sigma = 0.2, .scale = 1};
    int g = 300, ne = 3;
    int64_t n = 2000;
    stall_err err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < 6; i++) {
        wi_tables w;
        cr_assert_eq(wi_tables_build_x(&what, NULL, g, ne, n, true, 2 + i % 3, 1, &w, &err), 0);
        cr_assert_not_null(w.ovl);
        wi_tables_free(&w);
    }
    wi_tables a, b;
    cr_assert_eq(wi_tables_build_x(&what, NULL, g, ne, n, true, 1, 0, &a, &err), 0);
    cr_assert_eq(wi_tables_build_x(&what, NULL, g, ne, n, true, 3, 1, &b, &err), 0);
    wi_tables_finish(&b);
    cr_assert_null(b.ovl);
    size_t cells = (size_t)ne * (size_t)g * (size_t)n;
    cr_assert_eq(memcmp(a.fetch, b.fetch, cells * sizeof *a.fetch), 0);
    cr_assert_eq(memcmp(a.compute, b.compute, cells * sizeof *a.compute), 0);
    wi_tables_free(&a);
    wi_tables_free(&b);
}

/* Where a cell may pass the duration limit, or the compute's bound the
 * horizon, the fill stays serial: the same error, the first bad cell's. */
Test(ovl, a_draw_that_may_fail_keeps_the_serial_fill)
{
    wi_draw d;
    stall_dist big = {.kind = STALL_DIST_LOGNORMAL,
                      .mean_s = STALL_LIMIT_DURATION_S / 4,
                      .sigma = 1.5,
                      .scale = 1};
    wi_draw_init(&d, &big);
    cr_assert_eq(wi_draw_max(&d), -1);
    stall_dist ok = {.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.05, .sigma = 0.3, .scale = 1};
    wi_draw_init(&d, &ok);
    stall_time most = wi_draw_max(&d);
    cr_assert_gt(most, 0);
    /* No raw pair gives more: the extremes of the polar method's point. */
    uint32_t xs[] = {0x80000000u, 0x80000001u, 0x7fffffffu, 0, 1, 0xffffffffu};
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) {
            uint64_t raw = (uint64_t)xs[i] << 32 | xs[j];
            if (xs[i] == 0x80000000u && xs[j] == 0x80000000u)
                continue; /* r2 = 0: never accepted */
            cr_assert_leq(wi_draw_cook(raw, &d), most);
        }
    wi_whatif what;
    memset(&what, 0, sizeof what);
    what.ini = "t.ini";
    what.seed = 46;
    what.fetch_dist = big;
    what.compute_dist = (stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0.02, .scale = 1};
    wi_tables w;
    stall_err e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    int r1 = wi_tables_build_x(&what, NULL, 3, 1, 100000, true, 1, 0, &w, &e1);
    int r2 = wi_tables_build_x(&what, NULL, 3, 1, 100000, true, 2, 1, &w, &e2);
    cr_assert_neq(r1, 0);
    cr_assert_eq(r1, r2);
    cr_assert_str_eq(e1.msg, e2.msg);
    cr_assert_null(w.ovl);
}
