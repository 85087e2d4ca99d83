/*
 * Shared resources: the processor-sharing resource on its own (share.c) and
 * the closed-loop model with host cores and storage bandwidth turned on.
 * Expected times are worked out by hand in the comments.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/share.h"
#include "stall/model.h"

#define MS INT64_C(1000000)

/* ---- the resource on its own ------------------------------------------------ */

Test(share, job_alone_takes_exactly_its_work)
{
    stall__ps ps;
    stall__ps_init(&ps, 4, 2);
    stall__ps_add(&ps, 100, 12345679, 7);
    stall_time t = stall__ps_next(&ps, 100);
    cr_assert_eq(t, 100 + 12345679, "departure at %" PRId64, t);
    int64_t id;
    cr_assert(!stall__ps_pop_done(&ps, t - 1, &id), "left 1 ns early");
    cr_assert(stall__ps_pop_done(&ps, t, &id) && id == 7, "job 7 should leave at %" PRId64, t);
    cr_assert_eq(stall__ps_next(&ps, t), -1, "idle afterwards");
    stall__ps_free(&ps);
}

Test(share, three_jobs_on_two_servers_progress_at_two_thirds)
{
    stall__ps ps;
    stall__ps_init(&ps, 2, 1); /* capacity 1 grows */
    for (int i = 0; i < 3; i++)
        stall__ps_add(&ps, 0, 30 * MS, i);
    stall_time t = stall__ps_next(&ps, 0);
    cr_assert_eq(t, 45 * MS, "30 ms of work at 2/3 takes 45 ms, got %" PRId64, t);
    int64_t id;
    for (int i = 0; i < 3; i++) {
        cr_assert(stall__ps_pop_done(&ps, t, &id), "job %d should be done", i);
        cr_assert_eq(id, i, "equal finishes leave in join order: got %" PRId64 ", expected %d", id,
                     i);
    }
    stall__ps_free(&ps);
}

Test(share, departure_moves_when_a_job_joins)
{
    stall__ps ps;
    stall__ps_init(&ps, 1, 4);
    stall__ps_add(&ps, 0, 10 * MS, 1);
    cr_assert_eq(stall__ps_next(&ps, 0), 10 * MS, "alone: 10 ms");
    stall__ps_add(&ps, 4 * MS, 10 * MS, 2);
    /* Job 1 has 6 ms left, now at half speed: leaves at 16 ms. */
    stall_time t = stall__ps_next(&ps, 4 * MS);
    cr_assert_eq(t, 16 * MS, "job 1 leaves at %" PRId64, t);
    int64_t id;
    cr_assert(stall__ps_pop_done(&ps, t, &id) && id == 1, "job 1 first");
    /* Job 2 did 6 ms of its 10 by then, alone again: 20 ms. */
    t = stall__ps_next(&ps, t);
    cr_assert_eq(t, 20 * MS, "job 2 leaves at %" PRId64, t);
    cr_assert(stall__ps_pop_done(&ps, t, &id) && id == 2, "job 2 second");
    stall__ps_free(&ps);
}

/* ---- the model with shared resources ------------------------------------------ */

typedef struct cfg {
    stall_time fetch[8]; /* per rank, every batch */
    stall_time compute;
} cfg;

static stall_time cfg_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)e;
    (void)k;
    return ((const cfg *)ctx)->fetch[r];
}

static stall_time cfg_compute(void *ctx, int e, int r, int64_t k)
{
    (void)e;
    (void)r;
    (void)k;
    return ((const cfg *)ctx)->compute;
}

typedef struct plog {
    int g;
    int64_t n, cap;
    stall_time *s, *e, *y, *t;
    int64_t *b;
} plog;

static void log_init(plog *o, int g, int64_t cap)
{
    memset(o, 0, sizeof *o);
    o->g = g;
    o->cap = cap;
    o->s = calloc((size_t)(cap * g), sizeof(stall_time));
    o->e = calloc((size_t)(cap * g), sizeof(stall_time));
    o->y = calloc((size_t)(cap * g), sizeof(stall_time));
    o->b = calloc((size_t)(cap * g), sizeof(int64_t));
    o->t = calloc((size_t)cap, sizeof(stall_time));
}

static void log_free(plog *o)
{
    free(o->s);
    free(o->e);
    free(o->y);
    free(o->b);
    free(o->t);
}

static void log_record(void *ctx, const stall_iter_record *rec)
{
    plog *o = ctx;
    if (o->n >= o->cap)
        return;
    size_t row = (size_t)o->n * o->g;
    memcpy(o->s + row, rec->fetch_start, o->g * sizeof(stall_time));
    memcpy(o->e + row, rec->fetch_end, o->g * sizeof(stall_time));
    memcpy(o->y + row, rec->ready, o->g * sizeof(stall_time));
    memcpy(o->b + row, rec->fetched, o->g * sizeof(int64_t));
    o->t[o->n++] = rec->iter_end;
}

static void run_cfg(const stall_model_params *p, cfg *c, plog *o)
{
    log_init(o, p->ranks, (int64_t)p->epochs * p->batches);
    stall_durations d = {.fetch = cfg_fetch, .compute = cfg_compute, .ctx = c};
    stall_err err = {0};
    int rc = stall_model_run(p, &d, log_record, o, NULL, &err);
    cr_assert_eq(rc, 0, "run failed: %d %s", rc, err.msg);
}

Test(share, one_fetch_alone_on_a_node_takes_exactly_its_work)
{
    for (int i = 0; i < 3; i++) {
        double shares[3] = {1.0, 0.3, 0.0};
        stall_model_params p;
        stall_model_defaults(&p);
        p.workers = 1;
        p.cores = 1;
        p.cpu_share = shares[i];
        cfg c = {.fetch = {12345679}};
        plog o;
        run_cfg(&p, &c, &o);
        cr_assert_eq(o.e[0] - o.s[0], 12345679, "cpu_share %g: fetch took %" PRId64 " ns",
                     shares[i], o.e[0] - o.s[0]);
        log_free(&o);
    }
}

Test(share, two_equal_fetches_on_one_core_finish_together_at_twice_the_time)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 2;
    p.prefetch = 1;
    p.batches = 2;
    p.cores = 1;
    cfg c = {.fetch = {10 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0], 20 * MS, "batch 0 ended at %" PRId64, o.e[0]);
    cr_assert_eq(o.e[1], 20 * MS, "batch 1 ended at %" PRId64, o.e[1]);
    log_free(&o);
}

Test(share, cpu_rate_changes_when_a_fetch_joins_midway)
{
    /* Two ranks on one node, one worker each, one core, half of each fetch
     * CPU. Rank 0: D = 40 ms, waits 20, CPU 20 from t = 20. Rank 1: D = 30,
     * waits 15, CPU 15 from t = 15: alone until 20 (5 done), then both at
     * half speed: rank 1 ends at 40, rank 0 has 10 left then, ends at 50. */
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 2;
    p.gpus_per_node = 2;
    p.workers = 1;
    p.cores = 1;
    p.cpu_share = 0.5;
    cfg c = {.fetch = {40 * MS, 30 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[1], 40 * MS, "rank 1 fetch ended at %" PRId64, o.e[1]);
    cr_assert_eq(o.e[0], 50 * MS, "rank 0 fetch ended at %" PRId64, o.e[0]);
    log_free(&o);
}

Test(share, ranks_on_other_nodes_do_not_share_cores)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 2;
    p.gpus_per_node = 1;
    p.workers = 1;
    p.cores = 1;
    cfg c = {.fetch = {10 * MS, 10 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0], 10 * MS, "rank 0 ended at %" PRId64, o.e[0]);
    cr_assert_eq(o.e[1], 10 * MS, "rank 1 ended at %" PRId64, o.e[1]);
    log_free(&o);
}

static stall_time throughput_end(int workers, int cores)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = workers;
    p.prefetch = 2;
    p.batches = 400;
    p.cores = cores;
    cfg c = {.fetch = {10 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    stall_time end = o.t[399];
    log_free(&o);
    return end;
}

Test(share, eight_cpu_bound_workers_on_four_cores_load_no_faster_than_four)
{
    stall_time t4 = throughput_end(4, 4), t8 = throughput_end(8, 4);
    stall_time free8 = throughput_end(8, 0);
    double ratio = (double)t8 / (double)t4;
    cr_log_info("400 batches of 10 ms CPU: 4 workers on 4 cores %.4f s, 8 workers %.4f s, "
                "8 workers without the core limit %.4f s",
                t4 / 1e9, t8 / 1e9, free8 / 1e9);
    cr_assert(ratio > 0.99 && ratio < 1.01,
              "400 batches: 4 workers %" PRId64 " ns, 8 workers %" PRId64
              " ns on 4 cores, ratio %.4f not within 1%%",
              t4, t8, ratio);
    /* Without the core limit 8 workers would be twice as fast. */
    cr_assert_lt(free8, t8 * 6 / 10, "8 workers without sharing %" PRId64 " vs %" PRId64, free8,
                 t8);
    cr_assert(fabs((double)t4 - 1e9) < 0.02e9, "4 workers: 400 x 10 ms / 4 = 1 s, got %" PRId64,
              t4);
}

Test(share, storage_bandwidth_halves_when_two_reads_overlap)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 1;
    p.storage_mb_s = 100;
    p.batch_mb = 10;
    cfg c = {.fetch = {0}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0] - o.s[0], 100 * MS, "alone: 10 MB at 100 MB/s took %" PRId64,
                 o.e[0] - o.s[0]);
    log_free(&o);
    p.workers = 2;
    p.prefetch = 1;
    p.batches = 2;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0] - o.s[0], 200 * MS, "overlapped read 0 took %" PRId64, o.e[0] - o.s[0]);
    cr_assert_eq(o.e[1] - o.s[1], 200 * MS, "overlapped read 1 took %" PRId64, o.e[1] - o.s[1]);
    log_free(&o);
}

Test(share, storage_read_comes_on_top_of_the_fetch_duration)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 1;
    p.storage_mb_s = 200;
    p.batch_mb = 10;
    p.cores = 2;
    p.cpu_share = 0.5;
    cfg c = {.fetch = {30 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0] - o.s[0], 80 * MS, "30 ms fetch + 50 ms read took %" PRId64,
                 o.e[0] - o.s[0]);
    log_free(&o);
}

Test(share, cpu_deflate_shrinks_only_the_cpu_part)
{
    /* Measured at half speed (deflate 0.5): 40 ms of which 75% CPU is 10 ms
     * of waiting + 30 ms CPU measured = 15 ms of CPU work: 25 ms alone. */
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 1;
    p.cores = 4;
    p.cpu_share = 0.75;
    p.cpu_deflate = 0.5;
    cfg c = {.fetch = {40 * MS}};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.e[0] - o.s[0], 25 * MS, "fetch took %" PRId64, o.e[0] - o.s[0]);
    log_free(&o);
}

Test(share, cpu_compute_competes_with_the_worker_for_one_core)
{
    /* 1 core, 1 worker, fetch 10 ms and compute 10 ms, both all CPU.
     * Batch 0 alone: 0-10. At 10 the loop computes batch 0 while the worker
     * fetches batch 1: both at half speed, both done at 30 = T(0). Batch 2
     * was handed out at 10 and starts at 30, alone with compute 1 (from 30):
     * both done at 50 = T(1). */
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 1;
    p.batches = 3;
    p.cores = 1;
    p.compute_cpu_share = 1.0;
    cfg c = {.fetch = {10 * MS}, .compute = 10 * MS};
    plog o;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.t[0], 30 * MS, "T(0) = %" PRId64, o.t[0]);
    cr_assert_eq(o.e[1] - o.s[1], 20 * MS, "batch 1 took %" PRId64, o.e[1] - o.s[1]);
    cr_assert_eq(o.t[1], 50 * MS, "T(1) = %" PRId64, o.t[1]);
    log_free(&o);

    /* Half of compute is CPU: at 10, 5 ms of compute CPU and 10 ms of fetch
     * share the core; compute's CPU part ends at 20, its 5 ms rest at 25;
     * the fetch, alone from 20 with 5 ms left, ends at 25 too. */
    p.compute_cpu_share = 0.5;
    p.batches = 2;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.t[0], 25 * MS, "T(0) = %" PRId64, o.t[0]);
    cr_assert_eq(o.e[1], 25 * MS, "E(1) = %" PRId64, o.e[1]);
    log_free(&o);

    /* On a GPU (compute_cpu_share 0) compute takes no core: T(0) = 20. */
    p.compute_cpu_share = 0.0;
    run_cfg(&p, &c, &o);
    cr_assert_eq(o.t[0], 20 * MS, "T(0) = %" PRId64, o.t[0]);
    log_free(&o);
}

/* ---- against the model without sharing ------------------------------------------- */

typedef struct rtab {
    int g;
    int64_t n;
    stall_time *f, *c;
} rtab;

static stall_time rtab_fetch(void *ctx, int e, int r, int64_t j)
{
    const rtab *t = ctx;
    return t->f[((size_t)e * t->g + r) * t->n + j];
}

static stall_time rtab_compute(void *ctx, int e, int r, int64_t k)
{
    const rtab *t = ctx;
    return t->c[((size_t)e * t->g + r) * t->n + k];
}

static void random_params(gsl_rng *rng, stall_model_params *p, rtab *t, bool quantized)
{
    stall_model_defaults(p);
    p->ranks = 1 + (int)gsl_rng_uniform_int(rng, 8);
    p->gpus_per_node = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)p->ranks);
    p->workers = (int)gsl_rng_uniform_int(rng, 7);
    p->prefetch = 1 + (int)gsl_rng_uniform_int(rng, 4);
    p->batches = 1 + (int64_t)gsl_rng_uniform_int(rng, 30);
    p->epochs = 1 + (int)gsl_rng_uniform_int(rng, 2);
    p->startup = gsl_rng_uniform_int(rng, 2) ? (stall_time)gsl_rng_uniform_int(rng, 30) * MS : 0;
    p->handover = gsl_rng_uniform_int(rng, 2) ? (stall_time)gsl_rng_uniform_int(rng, 3) * MS : 0;
    p->fetch_align = (stall_align)gsl_rng_uniform_int(rng, 3);
    t->g = p->ranks;
    t->n = p->batches;
    size_t cells = (size_t)p->epochs * p->ranks * p->batches;
    t->f = malloc(cells * sizeof(stall_time));
    t->c = malloc(cells * sizeof(stall_time));
    for (size_t i = 0; i < cells; i++) {
        if (quantized) {
            t->f[i] = (stall_time)gsl_rng_uniform_int(rng, 40) * MS;
            t->c[i] = (stall_time)gsl_rng_uniform_int(rng, 20) * MS;
        } else {
            t->f[i] = (stall_time)gsl_ran_lognormal(rng, log(30e6), 0.6);
            t->c[i] = (stall_time)gsl_ran_lognormal(rng, log(15e6), 0.4);
        }
    }
}

/* With at least as many cores as fetches can run at once, processor sharing
 * never slows anyone, so the shared path must give the fast path's numbers. */
static void enough_cores_case(gsl_rng *rng, bool in_order, bool quantized)
{
    stall_model_params p;
    rtab t;
    random_params(rng, &p, &t, quantized);
    p.in_order = in_order;
    stall_durations d = {.fetch = rtab_fetch, .compute = rtab_compute, .ctx = &t};
    int64_t iters = (int64_t)p.epochs * p.batches;
    plog a, b;
    log_init(&a, p.ranks, iters);
    log_init(&b, p.ranks, iters);
    stall_err err = {0};
    cr_assert_eq(stall_model_run(&p, &d, log_record, &a, NULL, &err), 0, "%s", err.msg);
    p.compute_cpu_share = (double)gsl_rng_uniform_int(rng, 3) / 2.0;
    p.cores = p.gpus_per_node * ((p.workers > 0 ? p.workers : 1) + (p.compute_cpu_share > 0));
    p.cpu_share = 0.7;
    cr_assert_eq(stall_model_run(&p, &d, log_record, &b, NULL, &err), 0, "%s", err.msg);
    size_t cells = (size_t)iters * p.ranks;
    for (size_t i = 0; i < cells; i++) {
        cr_assert_eq(a.y[i], b.y[i],
                     "G=%d W=%d P=%d in_order=%d cell %zu: Y %" PRId64 " without sharing, %" PRId64
                     " with %d cores",
                     p.ranks, p.workers, p.prefetch, in_order, i, a.y[i], b.y[i], p.cores);
        cr_assert_eq(a.s[i], b.s[i], "cell %zu: S %" PRId64 " vs %" PRId64, i, a.s[i], b.s[i]);
        cr_assert_eq(a.e[i], b.e[i], "cell %zu: E %" PRId64 " vs %" PRId64, i, a.e[i], b.e[i]);
        cr_assert_eq(a.b[i], b.b[i], "cell %zu: batch %" PRId64 " vs %" PRId64, i, a.b[i], b.b[i]);
    }
    log_free(&a);
    log_free(&b);
    free(t.f);
    free(t.c);
}

Test(share, enough_cores_reproduce_the_uncontended_model_on_random_configs)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 4242);
    for (int i = 0; i < 100; i++) {
        enough_cores_case(rng, true, true);   /* in order: tie order cannot matter */
        enough_cores_case(rng, false, false); /* out of order: no ties */
    }
    gsl_rng_free(rng);
}

Test(share, contended_run_is_deterministic)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 17);
    for (int i = 0; i < 30; i++) {
        stall_model_params p;
        rtab t;
        random_params(rng, &p, &t, i % 2 == 0);
        p.in_order = i % 3 != 0;
        p.pin = i % 4 == 0 ? 2 * MS : 0;
        p.cores = 1 + (int)gsl_rng_uniform_int(rng, 4);
        p.cpu_share = gsl_rng_uniform(rng);
        p.cpu_deflate = 0.25 + 0.75 * gsl_rng_uniform(rng);
        p.compute_cpu_share = gsl_rng_uniform_int(rng, 2) ? gsl_rng_uniform(rng) : 0.0;
        p.storage_mb_s = gsl_rng_uniform_int(rng, 2) ? 500 : 0;
        p.batch_mb = 5;
        stall_durations d = {.fetch = rtab_fetch, .compute = rtab_compute, .ctx = &t};
        int64_t iters = (int64_t)p.epochs * p.batches;
        plog a, b;
        log_init(&a, p.ranks, iters);
        log_init(&b, p.ranks, iters);
        stall_err err = {0};
        stall_model_stats sa, sb;
        cr_assert_eq(stall_model_run(&p, &d, log_record, &a, &sa, &err), 0, "%s", err.msg);
        cr_assert_eq(stall_model_run(&p, &d, log_record, &b, &sb, &err), 0, "%s", err.msg);
        cr_assert_eq(a.n, iters, "case %d: %" PRId64 " records", i, a.n);
        size_t cells = (size_t)iters * p.ranks;
        cr_assert(memcmp(a.y, b.y, cells * sizeof(stall_time)) == 0, "case %d: Y differ", i);
        cr_assert(memcmp(a.e, b.e, cells * sizeof(stall_time)) == 0, "case %d: E differ", i);
        cr_assert(memcmp(a.t, b.t, (size_t)iters * sizeof(stall_time)) == 0, "case %d: T differ",
                  i);
        cr_assert_eq(sa.events, sb.events, "case %d: events %" PRIu64 " vs %" PRIu64, i, sa.events,
                     sb.events);
        for (size_t k = 0; k < cells; k++)
            cr_assert_geq(a.e[k] - a.s[k], 0, "case %d: negative fetch time", i);
        log_free(&a);
        log_free(&b);
        free(t.f);
        free(t.c);
    }
    gsl_rng_free(rng);
}
