/*
 * storage: the storage tiers (stall/storage.h, docs/model.md 2.3) against
 * their closed forms: what each node's cache holds over the epochs
 * (replicated and partitioned), the fluid's max-min fair shares, and runs of
 * the closed-loop model: a fully cached dataset reads at memory speed (the
 * run without storage, to the ns), a cold storage-bound epoch of D MB at B
 * MB/s takes D / B, a bandwidth shared by all nodes sets the pace of all of
 * them, a partitioned dataset's shard fits where the replicated one does
 * not. Then the tier model against the real captures of traces/store_*.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/fluid.h"
#include "stall/config.h"
#include "stall/model.h"
#include "stall/report.h"
#include "stall/scenario.h"
#include "stall/storage.h"
#include "stall/measured.h"
#include "stall/table.h"
#include "stall/tidy.h"
#include "stall/job.h"

#include "tmpdir.h"

static char sdir[] = "/tmp/stall_storage_XXXXXX";
static void st_setup(void)
{
    tmpdir_make(sdir);
}
static void st_teardown(void)
{
    tmpdir_remove(sdir);
}
TestSuite(storage, .init = st_setup, .fini = st_teardown, .timeout = 120);

static stall_storage tier(double batch_mb, double dataset_mb, double cache_mb)
{
    stall_storage s = {0};
    s.batch_mb = batch_mb;
    s.dataset_mb = dataset_mb;
    s.cache_mb = cache_mb;
    s.requests = 1;
    return s;
}

/* ---- the cache ---- */

Test(storage, partitioned_shard_that_fits_is_cold_once_then_warm)
{
    /* 4 ranks, 2 per node, 10 batches of 1 MB each: 40 MB, 20 MB per node. */
    stall_storage s = tier(1, 40, 25);
    s.partitioned = true;
    double h[3 * 2];
    stall_storage_hits(&s, 4, 2, 10, 3, h);
    for (int i = 0; i < 2; i++) {
        cr_assert_float_eq(h[0 * 2 + i], 0.0, 1e-12);
        cr_assert_float_eq(h[1 * 2 + i], 1.0, 1e-12);
        cr_assert_float_eq(h[2 * 2 + i], 1.0, 1e-12);
    }
    /* A cache of half the shard keeps half of it. */
    s.cache_mb = 10;
    stall_storage_hits(&s, 4, 2, 10, 3, h);
    cr_assert_float_eq(h[2], 0.5, 1e-12);
    cr_assert_float_eq(h[4], 0.5, 1e-12);
}

Test(storage, replicated_cache_fills_as_the_sampler_reshuffles)
{
    /* 4 nodes of 1 rank: each reads a quarter of the 40 MB dataset per
     * epoch, a new random quarter each time, so with room for all of it
     * c_e = D (1 - (3/4)^e), h_e = c_e / D. */
    stall_storage s = tier(1, 40, 1000);
    double h[6 * 4];
    stall_storage_hits(&s, 4, 1, 10, 6, h);
    for (int e = 0; e < 6; e++)
        cr_assert_float_eq(h[e * 4 + 3], 1 - pow(0.75, e), 1e-12, "epoch %d: %g", e, h[e * 4 + 3]);
    /* A cache of 12 MB caps it at 12 / 40. */
    s.cache_mb = 12;
    stall_storage_hits(&s, 4, 1, 10, 6, h);
    cr_assert_float_eq(h[1 * 4], 10.0 / 40, 1e-12);
    cr_assert_float_eq(h[5 * 4], 12.0 / 40, 1e-12);
}

Test(storage, cached_at_the_start_is_a_warm_first_epoch)
{
    stall_storage s = tier(1, 40, 100);
    s.start_mb = 30;
    double h[2];
    stall_storage_hits(&s, 1, 1, 40, 2, h);
    cr_assert_float_eq(h[0], 0.75, 1e-12);
    cr_assert_float_eq(h[1], 1.0, 1e-12);
}

/* ---- the fluid ---- */

static stall_time fluid_drain(stall__fluid *f, stall_time now, int64_t *ids, stall_time *at, int n)
{
    int got = 0;
    while (got < n) {
        stall_time t = stall__fluid_next(f, now);
        cr_assert_geq(t, now);
        now = t;
        int64_t id;
        while (stall__fluid_pop_done(f, now, &id)) {
            ids[got] = id;
            at[got++] = now;
        }
    }
    return now;
}

Test(storage, fluid_alone_and_shared_on_one_link)
{
    stall__fluid f;
    stall__fluid_init(&f, 1, 100, 0); /* 100 MB/s */
    stall__fluid_add(&f, 0, 0, 1.0, 7);
    int64_t id;
    stall_time at;
    fluid_drain(&f, 0, &id, &at, 1);
    cr_assert_eq(id, 7);
    cr_assert_eq(at, 10000000, "1 MB at 100 MB/s: 10 ms, got %lld", (long long)at);
    /* Four at once share it: each done after 4 x 10 ms. */
    int64_t ids[4];
    stall_time ats[4];
    for (int i = 0; i < 4; i++)
        stall__fluid_add(&f, at, 0, 1.0, i);
    fluid_drain(&f, at, ids, ats, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(ats[i] - at, 40000000, "%lld", (long long)(ats[i] - at));
    stall__fluid_free(&f);
}

Test(storage, fluid_global_bandwidth_is_max_min_fair)
{
    /* Links of 50 MB/s, 110 MB/s shared. Node 0 has one read, node 1 ten:
     * node 1's link caps its reads at 5 MB/s each, node 0's read gets the
     * rest of the global bandwidth up to its own link: 50 MB/s. */
    stall__fluid f;
    stall__fluid_init(&f, 2, 50, 110);
    stall__fluid_add(&f, 0, 0, 1.0, 100);
    for (int i = 0; i < 10; i++)
        stall__fluid_add(&f, 0, 1, 1.0, i);
    int64_t id;
    stall_time at;
    fluid_drain(&f, 0, &id, &at, 1);
    cr_assert_eq(id, 100);
    cr_assert_eq(at, 20000000, "1 MB at 50 MB/s: 20 ms, got %lld", (long long)at);
    stall__fluid_free(&f);
    /* Global below the links: everyone gets global / reads. */
    stall__fluid_init(&f, 2, 1000, 100);
    stall__fluid_add(&f, 0, 0, 1.0, 1);
    stall__fluid_add(&f, 0, 1, 1.0, 2);
    int64_t ids[2];
    stall_time ats[2];
    fluid_drain(&f, 0, ids, ats, 2);
    cr_assert_eq(ats[0], 20000000);
    cr_assert_eq(ats[1], 20000000);
    stall__fluid_free(&f);
}

/* The fluid as it was written before its per-node values moved into arrays
 * of their own (a node struct each, every pass following it, a division per
 * node for the next departure): the reference the faster fluid must match
 * to the ns and the id, so that no result moves. */
typedef struct ref_node {
    fluid_job *heap;
    int n, cap;
    double v, rate;
} ref_node;

typedef struct ref_fluid {
    int nodes, total;
    ref_node *node;
    int64_t *order;
    double link, global;
    stall_time last;
    uint64_t seq;
} ref_fluid;

static bool ref_less(const fluid_job *a, const fluid_job *b)
{
    return a->finish < b->finish || (a->finish == b->finish && a->seq < b->seq);
}

static void ref_advance(ref_fluid *f, stall_time now)
{
    stall_time dt = now - f->last;
    f->last = now;
    if (dt <= 0 || f->total == 0)
        return;
    for (int i = 0; i < f->nodes; i++)
        if (f->node[i].n > 0)
            f->node[i].v += f->node[i].rate * (double)dt;
}

static int ref_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void ref_rates(ref_fluid *f, int changed)
{
    if (f->total == 0)
        return;
    if (f->global <= 0) {
        if (f->node[changed].n > 0)
            f->node[changed].rate = f->link / f->node[changed].n;
        return;
    }
    if (f->link <= 0) {
        for (int i = 0; i < f->nodes; i++)
            f->node[i].rate = f->global / f->total;
        return;
    }
    int k = 0;
    for (int i = 0; i < f->nodes; i++)
        if (f->node[i].n > 0)
            f->order[k++] = (((int64_t)1 << 31) - f->node[i].n) * ((int64_t)1 << 32) + i;
    qsort(f->order, (size_t)k, sizeof *f->order, ref_cmp);
    double left = f->global;
    int reads = f->total, j = 0;
    for (; j < k; j++) {
        ref_node *nd = &f->node[f->order[j] & 0xffffffff];
        double own = f->link / nd->n;
        if (own * reads > left)
            break;
        nd->rate = own;
        left -= f->link;
        reads -= nd->n;
    }
    for (; j < k; j++)
        f->node[f->order[j] & 0xffffffff].rate = left / reads;
}

static void ref_add(ref_fluid *f, stall_time now, int node, double mb, int64_t id)
{
    ref_advance(f, now);
    ref_node *nd = &f->node[node];
    if (nd->n == nd->cap) {
        nd->cap = nd->cap ? nd->cap * 2 : 8;
        nd->heap = realloc(nd->heap, (size_t)nd->cap * sizeof *nd->heap);
    }
    if (nd->n == 0)
        nd->v = 0;
    fluid_job job = {.finish = nd->v + mb, .seq = f->seq++, .id = id};
    int i = nd->n++;
    while (i > 0 && ref_less(&job, &nd->heap[(i - 1) / 2])) {
        nd->heap[i] = nd->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    nd->heap[i] = job;
    f->total++;
    ref_rates(f, node);
}

static bool ref_pop_done(ref_fluid *f, stall_time now, int64_t *id)
{
    ref_advance(f, now);
    for (int i = 0; i < f->nodes; i++) {
        ref_node *nd = &f->node[i];
        if (!(nd->n > 0 &&
              nd->heap[0].finish - nd->v <= nd->rate * 1e-3 + 1e-12 * nd->heap[0].finish))
            continue;
        *id = nd->heap[0].id;
        fluid_job last = nd->heap[--nd->n];
        int j = 0;
        for (;;) {
            int c = 2 * j + 1;
            if (c >= nd->n)
                break;
            if (c + 1 < nd->n && ref_less(&nd->heap[c + 1], &nd->heap[c]))
                c++;
            if (!ref_less(&nd->heap[c], &last))
                break;
            nd->heap[j] = nd->heap[c];
            j = c;
        }
        if (nd->n > 0)
            nd->heap[j] = last;
        f->total--;
        ref_rates(f, i);
        return true;
    }
    return false;
}

static stall_time ref_next(const ref_fluid *f, stall_time now)
{
    if (f->total == 0)
        return -1;
    double best = INFINITY;
    for (int i = 0; i < f->nodes; i++) {
        const ref_node *nd = &f->node[i];
        if (nd->n == 0)
            continue;
        double v = nd->v + nd->rate * (double)(now - f->last);
        double need = nd->heap[0].finish - v;
        double dt = need <= 0 ? 0 : ceil(need / nd->rate);
        best = dt < best ? dt : best;
    }
    return now + (stall_time)best;
}

/* Random joins (sizes of a few distinct values, so that departures tie)
 * on 1 to 40 nodes, with a link alone, a global bandwidth alone and both,
 * departures taken as the model takes them (next, then pop while done):
 * every departure's id and time the reference's. */
Test(storage, fluid_matches_the_per_node_reference_to_the_ns)
{
    const double bw[][2] = {{100, 0}, {0, 100}, {30, 100}, {7, 13}, {0, 0.5}};
    unsigned seed = 12345;
    long departures = 0;
    for (int c = 0; c < 5; c++)
        for (int nodes = 1; nodes <= 40; nodes += 13) {
            stall__fluid f;
            ref_fluid r = {.nodes = nodes,
                           .node = calloc((size_t)nodes, sizeof(ref_node)),
                           .order = calloc((size_t)nodes, sizeof(int64_t)),
                           .link = bw[c][0] * 1e-9,
                           .global = bw[c][1] * 1e-9};
            stall__fluid_init(&f, nodes, bw[c][0], bw[c][1]);
            stall_time now = 0;
            int64_t next_id = 0;
            for (int step = 0; step < 4000; step++) {
                seed = seed * 1103515245u + 12345u;
                unsigned x = seed >> 8;
                if (x % 3 != 0 || f.total == 0) {
                    now += (stall_time)(x % 7 == 0 ? 0 : x % 5000000);
                    /* not past the next departure: as the model, which handles it first */
                    stall_time t = ref_next(&r, now);
                    if (t >= 0 && t < now)
                        now = t;
                    double mb = 0.05 * (1 + (int)(x / 7 % 4));
                    int node = (int)(x / 29 % (unsigned)nodes);
                    stall__fluid_add(&f, now, node, mb, next_id);
                    ref_add(&r, now, node, mb, next_id++);
                    continue;
                }
                stall_time t = stall__fluid_next(&f, now), tr = ref_next(&r, now);
                cr_assert_eq(t, tr, "case %d, %d nodes, step %d: next %lld, reference %lld", c,
                             nodes, step, (long long)t, (long long)tr);
                now = t;
                for (;;) {
                    int64_t id, idr;
                    bool got = stall__fluid_pop_done(&f, now, &id);
                    bool gotr = ref_pop_done(&r, now, &idr);
                    cr_assert_eq(got, gotr, "case %d, %d nodes, step %d", c, nodes, step);
                    if (!got)
                        break;
                    cr_assert_eq(id, idr, "case %d, %d nodes, step %d", c, nodes, step);
                    departures++;
                }
            }
            stall__fluid_free(&f);
            for (int i = 0; i < nodes; i++)
                free(r.node[i].heap);
            free(r.node);
            free(r.order);
        }
    cr_assert_gt(departures, 10000, "%ld departures", departures);
}

/* ---- the model ---- */

typedef struct run_out {
    int epochs;
    stall_time start[16], end[16];
    stall_time t[4096];
    int n;
} run_out;

static stall_time c_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)ctx;
    return 20000000 + 1000000 * ((e + r + k) % 5); /* 20-24 ms */
}
static stall_time c_compute(void *ctx, int e, int r, int64_t k)
{
    (void)ctx;
    (void)e;
    return 4000000 + 100000 * ((r + k) % 3);
}

static stall_time zero_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e, (void)r, (void)k;
    return 0;
}
static stall_time ms_compute(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e, (void)r, (void)k;
    return 1000000;
}

static void got(void *ctx, const stall_iter_record *rec)
{
    run_out *o = ctx;
    if (rec->batch == 0)
        o->start[rec->epoch] = rec->epoch_start;
    o->end[rec->epoch] = rec->iter_end;
    if (o->n < 4096)
        o->t[o->n++] = rec->iter_end;
}

static void run(const stall_model_params *p, run_out *o)
{
    memset(o, 0, sizeof *o);
    o->epochs = p->epochs;
    stall_durations d = {.fetch = c_fetch, .compute = c_compute};
    stall_err err = {0};
    cr_assert_eq(stall_model_run(p, &d, got, o, NULL, &err), 0, "%s", err.msg);
}

static double epoch_s(const run_out *o, int e)
{
    return (double)(o->end[e] - o->start[e]) / 1e9;
}

static void base(stall_model_params *p, int ranks, int gpn, int workers, int64_t n, int epochs)
{
    stall_model_defaults(p);
    p->ranks = ranks;
    p->gpus_per_node = gpn;
    p->workers = workers;
    p->batches = n;
    p->epochs = epochs;
}

Test(storage, fully_cached_reads_at_memory_speed)
{
    /* The dataset in every node's cache from the start: the run without
     * storage, every iteration to the ns, whatever the store. */
    stall_model_params p;
    base(&p, 4, 2, 3, 40, 3);
    run_out a, b;
    run(&p, &a);
    p.tiers = true;
    p.storage = tier(8, 8 * 40 * 4, 1e6);
    p.storage.start_mb = 1e6;
    p.storage.link_mb_s = 1;
    p.storage.global_mb_s = 1;
    p.storage.latency = 1000000000;
    p.storage.requests = 16;
    run(&p, &b);
    cr_assert_eq(a.n, b.n);
    for (int i = 0; i < a.n; i++)
        cr_assert_eq(a.t[i], b.t[i], "iteration %d: %lld vs %lld", i, (long long)a.t[i],
                     (long long)b.t[i]);
}

Test(storage, cold_storage_bound_epoch_reads_d_bytes_at_b)
{
    /* 1 rank, 4 workers, 50 batches of 50 MB at 100 MB/s: the store needs
     * 500 ms a batch, the workers 20-24 ms of their own and the loop 4 ms,
     * so the cold epoch is storage-bound: D / B = 2500 MB / 100 MB/s = 25 s.
     * It takes at least that, and at most that plus the store's idle time
     * while all four workers are in their own part together (12.5 rounds of
     * at most 24 ms) and the last batch's read alone and compute. The
     * dataset fits the cache: epoch 1 is the run without storage. */
    stall_model_params p;
    base(&p, 1, 1, 4, 50, 2);
    run_out a, b;
    run(&p, &a);
    p.tiers = true;
    p.storage = tier(50, 2500, 3000);
    p.storage.link_mb_s = 100;
    run(&p, &b);
    double cold = epoch_s(&b, 0), most = 25.0 + 12.5 * 0.024 + 0.5 + 0.0043;
    cr_assert(cold >= 25.0 && cold <= most, "cold epoch %.4f s, D/B = 25 s, at most %.4f", cold,
              most);
    cr_assert_float_eq(epoch_s(&b, 1), epoch_s(&a, 1), 1e-9, "warm %.6f vs %.6f", epoch_s(&b, 1),
                       epoch_s(&a, 1));
    /* Partly cached: cached_start_mb = 1250 halves what epoch 0 reads (each
     * of the 16 requests of a batch hits with probability 1/2). */
    p.storage.start_mb = 1250;
    p.storage.requests = 16;
    run(&p, &b);
    double half = epoch_s(&b, 0);
    cr_assert(half >= 12.5 * 0.9 && half <= (most - 12.5) * 1.1,
              "half-cached epoch %.4f s, D/2B = 12.5 s", half);
}

Test(storage, global_bandwidth_sets_the_pace_of_all_nodes)
{
    /* 8 nodes of 2 ranks, links of 1000 MB/s (never binding), 160 MB/s
     * shared: 8 x 2 x 40 batches x 2 MB = 1280 MB in the cold epoch at
     * 160 MB/s = 8 s, whatever the number of nodes sharing it; with 4 nodes
     * the same store gives 4 s. */
    stall_model_params p;
    base(&p, 16, 2, 2, 40, 1);
    p.tiers = true;
    p.storage = tier(2, 2.0 * 40 * 16, 0);
    p.storage.link_mb_s = 1000;
    p.storage.global_mb_s = 160;
    run_out o;
    run(&p, &o);
    double e = epoch_s(&o, 0);
    cr_assert(e >= 8.0 && e <= 8.0 + 0.15, "16 GPUs: %.4f s, 1280 MB / 160 MB/s = 8 s", e);
    p.ranks = 8;
    p.storage.dataset_mb = 2.0 * 40 * 8;
    run(&p, &o);
    e = epoch_s(&o, 0);
    cr_assert(e >= 4.0 && e <= 4.0 + 0.15, "8 GPUs: %.4f s, 640 MB / 160 MB/s = 4 s", e);
}

Test(storage, partitioned_shard_fits_where_the_replicated_dataset_does_not)
{
    /* 2 nodes of 1 rank, 40 batches of 5 MB each: 400 MB, a cache of
     * 200 MB per node. Partitioned, each node's 200 MB shard stays: epoch 1
     * is warm. Replicated, each node keeps half the dataset and reads a
     * random half of it: epoch 1 misses half. */
    stall_model_params p;
    base(&p, 2, 1, 2, 40, 2);
    run_out warm, part, repl;
    run(&p, &warm);
    p.tiers = true;
    p.storage = tier(5, 400, 200);
    p.storage.link_mb_s = 50;
    p.storage.requests = 16;
    p.storage.partitioned = true;
    run(&p, &part);
    p.storage.partitioned = false;
    run(&p, &repl);
    cr_assert_float_eq(epoch_s(&part, 1), epoch_s(&warm, 1), 1e-9);
    /* half of 200 MB per node at 50 MB/s: 2 s of transfer (the misses are
     * drawn per request: binomial), plus at most the warm epoch's own time */
    double r1 = epoch_s(&repl, 1);
    cr_assert(r1 > 2.0 * 0.85 && r1 < 2.0 * 1.15 + epoch_s(&warm, 1),
              "replicated epoch 1: %.4f s, 2 s of reads + at most %.4f s", r1, epoch_s(&warm, 1));
}

Test(storage, latency_per_missed_request)
{
    /* No bandwidth limit, 0 workers (one fetch at a time), 16 requests of
     * mean 5 ms per batch: each cold batch waits 80 ms on average more. */
    stall_model_params p;
    base(&p, 1, 1, 0, 200, 1);
    run_out a, b;
    run(&p, &a);
    p.tiers = true;
    p.storage = tier(1, 200, 0);
    p.storage.latency = 5000000;
    p.storage.requests = 16;
    run(&p, &b);
    double extra = (epoch_s(&b, 0) - epoch_s(&a, 0)) / 200;
    cr_assert(fabs(extra - 0.080) < 0.080 * 0.1, "extra per batch %.4f s, 16 x 5 ms", extra);
}

Test(storage, constant_latency_is_exactly_its_value_per_miss)
{
    /* As latency_per_missed_request, with [storage] latency = constant:
     * every request misses (no cache), so each batch waits exactly 16 x 5
     * ms more, to the ns. */
    stall_model_params p;
    base(&p, 1, 1, 0, 200, 1);
    run_out a, b;
    run(&p, &a);
    p.tiers = true;
    p.storage = tier(1, 200, 0);
    p.storage.latency = 5000000;
    p.storage.latency_constant = true;
    p.storage.requests = 16;
    run(&p, &b);
    cr_assert_eq(b.end[0] - b.start[0] - (a.end[0] - a.start[0]), 200 * 16 * 5000000LL);
}

Test(storage, admission_write_is_its_cost_per_admitted_request)
{
    /* As constant_latency_is_exactly_its_value_per_miss, with a cache and
     * [storage] admit_ms: one fetch at a time (0 workers), 200 batches of
     * 16 requests of 0.1 MB, 3 epochs. With room for the whole dataset,
     * epoch 0 misses and admits all 3200 requests: it grows by exactly
     * 3200 x a over the run without the write, epochs 1-2 (all hits) not at
     * all. With room for half, epoch 0 admits the first 1600 misses (the
     * cache admits while it has room) and grows by 1600 x a; epoch 1 finds
     * half, admits nothing and is unchanged. */
    const stall_time a = 700000; /* 0.7 ms */
    for (int half = 0; half < 2; half++) {
        stall_model_params p;
        base(&p, 1, 1, 0, 200, 3);
        p.tiers = true;
        p.storage = tier(1.6, 320, half ? 160 : 320);
        p.storage.latency = 5000000;
        p.storage.latency_constant = true;
        p.storage.requests = 16;
        run_out x, y;
        run(&p, &x);
        p.storage.admit = a;
        run(&p, &y);
        long long n = half ? 1600 : 3200;
        cr_assert_eq(y.end[0] - y.start[0] - (x.end[0] - x.start[0]), n * a,
                     "cache %s: epoch 0 grew by %lld ns, want %lld x %lld", half ? "half" : "all",
                     (long long)(y.end[0] - y.start[0] - (x.end[0] - x.start[0])), n, (long long)a);
        for (int e = 1; e < 3; e++)
            cr_assert_eq(y.end[e] - y.start[e], x.end[e] - x.start[e], "epoch %d", e);
    }
}

Test(storage, fifo_store_serves_one_transfer_at_a_time)
{
    /* 1 rank, 2 workers starting together, fetches of no time of their own,
     * one request of 10 MB per batch at 100 MB/s: a FIFO store (a token
     * bucket) hands batch 0 over at 100 ms and batch 1 at 200 ms; a fair
     * store both at 200 ms. Storage-bound, both move the epoch's bytes at
     * B: 20 batches of 10 MB in 2 s, then the last computes. */
    stall_model_params p;
    base(&p, 1, 1, 2, 20, 1);
    p.startup = 0;
    p.handover = 0;
    p.tiers = true;
    p.storage = tier(10, 200, 0);
    p.storage.link_mb_s = 100;
    stall_durations d = {.fetch = zero_fetch, .compute = ms_compute};
    stall_err err = {0};
    run_out fair, fifo;
    memset(&fair, 0, sizeof fair);
    cr_assert_eq(stall_model_run(&p, &d, got, &fair, NULL, &err), 0, "%s", err.msg);
    p.storage.fifo = true;
    memset(&fifo, 0, sizeof fifo);
    cr_assert_eq(stall_model_run(&p, &d, got, &fifo, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(fifo.t[0], 100000000 + 1000000, "FIFO: batch 0 ends %lld", (long long)fifo.t[0]);
    cr_assert_eq(fair.t[0], 200000000 + 1000000, "fair: batch 0 ends %lld", (long long)fair.t[0]);
    for (int i = 2; i < 20; i++)
        cr_assert_eq(fifo.t[i] - fifo.t[i - 1], 100000000, "FIFO: iteration %d", i);
    cr_assert_eq(fifo.t[19], 2000000000 + 1000000);
    /* fair: batches 18 and 19 arrive together at 2 s, computed one after the other */
    cr_assert_eq(fair.t[19], 2000000000 + 2000000);
}

/* ---- the real captures (traces/store_*, traces/README.md) ---- */

typedef struct epochs_seen {
    double start[8], end[8];
} epochs_seen;

static void seen(void *ctx, const stall_iter_record *rec)
{
    epochs_seen *o = ctx;
    if (rec->epoch >= 8)
        return;
    if (rec->batch == 0)
        o->start[rec->epoch] = (double)rec->epoch_start / 1e9;
    o->end[rec->epoch] = (double)rec->iter_end / 1e9;
}

/* Simulated epoch times of the tier model on traces/NAME with the store's
 * settings and these overrides. */
static void store_run(const char *name, const char *const *sets, int in_memory, double *ep)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/traces/%s/trace.csv", STALL_SOURCE_DIR, name);
    const char *base[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          "storage.bandwidth_mb_s=20",
                          "storage.latency_ms=2",
                          set,
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], &err), 0, "%s", err.msg);
    for (int i = 0; sets && sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s: %s", sets[i], err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    epochs_seen o = {0};
    stall_run_opts opts = {
        .jobs = 1, .no_files = 1, .on_iter = seen, .observer = &o, .in_memory = in_memory};
    cr_assert_eq(stall_scenario_run(&cfg, &opts, &err), 0, "%s", err.msg);
    for (int e = 0; e < 3; e++)
        ep[e] = o.end[e] - o.start[e];
}

static void store_measured(const char *name, double *ep)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/traces/%s/trace.csv", STALL_SOURCE_DIR, name);
    stall_tidy_trace *t = NULL;
    stall_measured m;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(path, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_measured_from_tidy(t, &m, &err), 0, "%s", err.msg);
    cr_assert_eq(m.epochs, 3);
    for (int e = 0; e < 3; e++)
        ep[e] = m.epoch_s[e];
    stall_measured_free(&m);
    stall_tidy_free(t);
}

static double worst(const double *sim, const double *meas, int from, int to)
{
    double w = 0;
    for (int e = from; e < to; e++)
        w = fmax(w, fabs(sim[e] - meas[e]) / meas[e]);
    return w;
}

Test(storage, cold_and_warm_epochs_of_the_loopback_store)
{
    /* store_warm: a cache that holds the dataset, so epoch 0 cold and 1-2
     * warm; the model from the trace with the store's bandwidth and latency
     * gives every epoch back within 5%, streamed or whole alike. */
    double sim[3], simd[3], meas[3];
    const char *sets[] = {"storage.cache_mb=100", NULL};
    store_run("store_warm", sets, 1, sim);
    store_run("store_warm", sets, -1, simd);
    store_measured("store_warm", meas);
    for (int e = 0; e < 3; e++)
        cr_assert_float_eq(sim[e], simd[e], 1e-9, "streamed epoch %d: %.6f vs %.6f", e, simd[e],
                           sim[e]);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.05, "epochs %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
}

Test(storage, a_smaller_cache_predicted_from_the_warm_trace)
{
    /* Predicted from store_warm before store_half and store_none were
     * captured (traces/README.md). Half the dataset cached: every epoch
     * within 10%. No cache: within 15% (docs/validation.md: the cold epoch
     * of the same store measured 2.59-2.93 s over four captures). */
    double sim[3], meas[3];
    store_run("store_warm", (const char *const[]){"storage.cache_mb=20.48", NULL}, 1, sim);
    store_measured("store_half", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.10, "half: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
    store_run("store_warm", (const char *const[]){"storage.cache_mb=0", NULL}, 1, sim);
    store_measured("store_none", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.15, "none: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
    /* From the half-cached trace, its cache told (trace_cache_mb): the
     * measured read is fitted to epoch 0's misses against epochs 1-2's,
     * and the warm run follows within 20% of store_warm: -0.6%, -6.2%,
     * -18.1% (-13.2% in epoch 2 when the read was subtracted from every
     * fetch alike; taken out in proportion to each fetch, docs/model.md
     * 2.3, the warm fetches keep less of the half-cached run's spread). */
    store_run("store_half",
              (const char *const[]){"storage.cache_mb=100", "storage.trace_cache_mb=20.48", NULL},
              1, sim);
    store_measured("store_warm", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.20,
                 "warm from half: %.3f %.3f %.3f, measured %.3f "
                 "%.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
}

/* [storage] trace_cache_mb where its fit leaves the measured read unknown:
 * every epoch of the trace's run misses alike (x_e the same; docs/model.md
 * 2.3), so the fetches are kept whole and the key changed nothing (it ran,
 * and the run's own warning still asked for the key). Refused, naming the
 * key and the miss share; where the epochs differ it is taken and changes
 * the run. */
static int store_try(const char *name, const char *const *sets, double *ep, stall_err *err)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/traces/%s/trace.csv", STALL_SOURCE_DIR, name);
    const char *base[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          "storage.bandwidth_mb_s=100",
                          set,
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], err), 0, "%s", err->msg);
    for (int i = 0; sets && sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], err), 0, "%s: %s", sets[i], err->msg);
    cr_assert_eq(stall_config_check(&cfg, err), 0, "%s", err->msg);
    epochs_seen o = {0};
    stall_run_opts opts = {.jobs = 1, .no_files = 1, .on_iter = seen, .observer = &o};
    int rc = stall_scenario_run(&cfg, &opts, err);
    for (int e = 0; e < 3; e++)
        ep[e] = o.end[e] - o.start[e];
    return rc;
}

Test(storage, trace_cache_mb_whose_fit_leaves_the_read_unknown_is_refused)
{
    const struct {
        const char *trace, *cache, *trace_cache;
        double share;
    } no[] = {{"store_none", "storage.cache_mb=0", "storage.trace_cache_mb=0", 100},
              {"store_warm", "storage.cache_mb=20", "storage.trace_cache_mb=0", 100},
              /* a cache that never fills: a stable share, the same every epoch */
              {"store_warm", "storage.cache_mb=100", "storage.trace_cache_mb=0.001", 100}};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        stall_err err = {0};
        double ep[3];
        int rc = store_try(no[i].trace, (const char *const[]){no[i].cache, no[i].trace_cache, NULL},
                           ep, &err);
        cr_expect_eq(rc, STALL_ECONFIG, "%s %s: rc %d", no[i].trace, no[i].trace_cache, rc);
        char want[200];
        snprintf(want, sizeof want,
                 "--set storage.trace_cache_mb: has no effect: with a cache of ");
        cr_expect(strstr(err.msg, want) == err.msg, "%s", err.msg);
        cr_expect(strstr(err.msg, "of its reads in every epoch, so they cannot be told from the "
                                  "rest of its fetches") != NULL,
                  "%s", err.msg);
    }
    /* Where the trace's epochs miss differently, the key is taken and the
     * fit moves the run. */
    stall_err err = {0};
    double with[3], without[3];
    cr_assert_eq(store_try("store_half",
                           (const char *const[]){"storage.cache_mb=100",
                                                 "storage.trace_cache_mb=20.48", NULL},
                           with, &err),
                 0, "%s", err.msg);
    cr_assert_eq(
        store_try("store_half", (const char *const[]){"storage.cache_mb=100", NULL}, without, &err),
        0, "%s", err.msg);
    cr_expect(with[0] != without[0] || with[1] != without[1] || with[2] != without[2]);
}

Test(storage, the_token_bucket_store_post_hoc)
{
    /* Made after store_half and store_none were measured (docs/validation.md):
     * the model as the loopback store works, [storage] queue = fifo (its
     * token bucket serves a request's one chunk at a time at the full rate)
     * and latency = constant (its 2 ms sleep), with the admission write
     * measured in store_warm_r2 (admit_ms = 0.6; configs/store-tiers.ini),
     * from store_warm: store_half and store_none within 5% in every epoch
     * (the fair, exponential model missed store_none by 15%); store_warm's
     * warm epochs within 5% and its own cold epoch 7% short (13% without
     * the write: the rest is what each request costs beyond the store's 2
     * ms and 20 MB/s). */
    double sim[3], meas[3];
    const char *half[] = {"storage.cache_mb=20.48", "storage.queue=fifo",
                          "storage.latency=constant", "storage.admit_ms=0.6", NULL};
    store_run("store_warm", half, 1, sim);
    store_measured("store_half", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.05, "half: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
    const char *none[] = {"storage.cache_mb=0", "storage.queue=fifo", "storage.latency=constant",
                          "storage.admit_ms=0", NULL};
    store_run("store_warm", none, 1, sim);
    store_measured("store_none", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.05, "none: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
    const char *warm[] = {"storage.cache_mb=100", "storage.queue=fifo", "storage.latency=constant",
                          "storage.admit_ms=0.6", NULL};
    store_run("store_warm", warm, 1, sim);
    store_measured("store_warm", meas);
    cr_assert_lt(worst(sim, meas, 1, 3), 0.05, "warm: %.3f %.3f, measured %.3f %.3f", sim[1],
                 sim[2], meas[1], meas[2]);
    cr_assert(sim[0] < meas[0] && sim[0] > 0.90 * meas[0], "cold: %.3f, measured %.3f", sim[0],
              meas[0]);
    double nowrite[3];
    warm[3] = NULL;
    store_run("store_warm", warm, 1, nowrite);
    cr_assert(nowrite[0] < 0.88 * meas[0], "cold without the write: %.3f", nowrite[0]);
}

Test(storage, a_quarter_cached_predicted_before_its_capture)
{
    /* traces/s8_predictions.md, committed before store_quarter (cache of
     * 10.24 MB, a quarter of the dataset) was captured, from store_warm_r2
     * (the same morning's store_warm): A, the store as it serves with the
     * write measured in the reference (admit_ms = 0.616), gave 2.579,
     * 2.171, 2.099 s for the measured 2.933, 2.590, 2.424 s (-12% to -16%);
     * B, the same with latency_ms = 3.35 fitted on the reference's own cold
     * epoch (what a request costs beyond the store's 2 ms and 20 MB/s),
     * 2.924, 2.481, 2.363 s: within 5% in every epoch. B also gives
     * store_none_r2 (captured before the fit) within 10%. */
    double sim[3], meas[3];
    /* The model of then took every measured wait for a core out of the
     * reference's durations (cpu_waits_out = 1); the default now takes the
     * share that gives the reference's own run back (docs/model.md 2.3),
     * and A alone came within 10%: -8.6%, -9.8%, -7.8%; with the measured
     * read taken out in proportion to each fetch (docs/model.md 2.3, after
     * the page cache's captures) -10.2%, -9.8%, -7.8%. */
    const char *a[] = {"storage.cache_mb=10.24",   "storage.queue=fifo",
                       "storage.latency=constant", "storage.admit_ms=0.616",
                       "cluster.cpu_waits_out=1",  NULL};
    store_measured("store_quarter", meas);
    a[4] = NULL;
    store_run("store_warm_r2", a, 1, sim);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.11, "A, fitted: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
    a[4] = "cluster.cpu_waits_out=1";
    store_run("store_warm_r2", a, 1, sim);
    cr_assert(worst(sim, meas, 0, 3) > 0.10 && worst(sim, meas, 0, 3) < 0.17,
              "A: %.3f %.3f %.3f, measured %.3f %.3f %.3f", sim[0], sim[1], sim[2], meas[0],
              meas[1], meas[2]);
    /* B refitted with the proportional take-out (tools/tier_fit.py): 3.407
     * ms; quarter -0.4%, -3.7%, -2.0%, store_none_r2 -4.7% to -6.7%. */
    const char *b[] = {"storage.cache_mb=10.24",
                       "storage.queue=fifo",
                       "storage.latency=constant",
                       "storage.admit_ms=0.616",
                       "storage.latency_ms=3.407",
                       "cluster.cpu_waits_out=1",
                       NULL};
    store_run("store_warm_r2", b, 1, sim);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.05, "B: %.3f %.3f %.3f, measured %.3f %.3f %.3f", sim[0],
                 sim[1], sim[2], meas[0], meas[1], meas[2]);
    b[0] = "storage.cache_mb=100";
    store_run("store_warm_r2", b, 1, sim);
    store_measured("store_warm_r2", meas);
    cr_assert_lt(fabs(sim[0] - meas[0]) / meas[0], 0.01, "B's fit: %.3f for %.3f", sim[0], meas[0]);
    const char *none[] = {"storage.cache_mb=0",       "storage.queue=fifo",
                          "storage.latency=constant", "storage.latency_ms=3.407",
                          "cluster.cpu_waits_out=1",  NULL};
    store_run("store_warm_r2", none, 1, sim);
    store_measured("store_none_r2", meas);
    cr_assert_lt(worst(sim, meas, 0, 3), 0.10, "B, none: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
}

Test(storage, three_quarters_and_none_predicted_before_their_capture)
{
    /* traces/s9_predictions.md, committed before store_3q (cache 30.72 MB,
     * three quarters of the dataset) and store_none_r3 (no cache) were
     * captured, from store_warm_r3 (captured minutes before): B, the store
     * as it serves with latency_ms = 3.7 fitted on the reference's cold
     * epoch, gave 3.011, 1.355, 1.373 s for the measured 3.001, 1.509,
     * 1.506 s (+0.3%, -10.2%, -8.8%) and 2.954, 2.954, 2.973 s for 2.987,
     * 2.951, 2.931 s (-1.1%, +0.1%, +1.4%); A, the nominal 2 ms, 15-20%
     * short everywhere (the reference's own cold epoch -16.7%). With the
     * measured read taken out in proportion to each fetch (docs/model.md
     * 2.3) the latency refitted on the same cold epoch is 3.785 ms
     * (tools/tier_fit.py): 3q +0.3%, -9.4%, -9.8%, none -1.1%, +1.0%,
     * +2.4%; with each epoch's own hand-over and warm epochs' noise no
     * longer taken for a read (docs/model.md 2.3, 2.4) the refit is 3.772
     * ms and 3q +0.3%, -9.5%, -5.2%, none -1.1%, +1.0%, +4.4%. */
    const char *b[] = {"storage.cache_mb=30.72",   "storage.queue=fifo",
                       "storage.latency=constant", "storage.admit_ms=0.2429",
                       "storage.latency_ms=3.785", NULL};
    double sim[3], meas[3];
    store_run("store_warm_r3", b, 1, sim);
    store_measured("store_3q", meas);
    cr_assert_lt(fabs(sim[0] - meas[0]) / meas[0], 0.01);
    cr_assert(worst(sim, meas, 1, 3) > 0.08 && worst(sim, meas, 1, 3) < 0.10,
              "3q warm: %.3f %.3f, measured %.3f %.3f", sim[1], sim[2], meas[1], meas[2]);
    b[0] = "storage.cache_mb=0";
    b[3] = "storage.latency_ms=3.785";
    b[4] = NULL;
    store_run("store_warm_r3", b, 1, sim);
    store_measured("store_none_r3", meas);
    /* -1.0%, +1.2%, +4.5% since noise between warm epochs is no longer
     * taken for a read (docs/model.md 2.3; +2.4% in epoch 2 before) */
    cr_assert_lt(worst(sim, meas, 0, 3), 0.05, "none: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], meas[0], meas[1], meas[2]);
}

Test(storage, half_the_page_cache_predicted_before_its_capture)
{
    /* traces/s8_predictions.md: from pagecache_cold_r2 (all files evicted,
     * latency per cold file fitted on its epoch 0: 1.15 ms), half the files
     * evicted, committed before pagecache_half_r2 was captured: 0.995,
     * 0.962, 0.999 s for the measured 1.214, 1.039, 1.109 s (-18%, -7%,
     * -10%). Not the cache's miss: the job is nearly compute-bound (stall
     * 2.5-5 ms of a 25 ms iteration) and its compute per batch ran 24%
     * slower than in the reference (docs/validation.md); the epoch-0
     * fetches' cold excess was 0.6 of the reference's where the rule says
     * 0.5. */
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/traces/pagecache_cold_r2/trace.csv", STALL_SOURCE_DIR);
    const char *sets[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          "storage.bandwidth_mb_s=3523.7",
                          "storage.cache_mb=20000",
                          "storage.latency_ms=1.15",
                          "storage.cached_start_mb=320",
                          set,
                          "cluster.cpu_waits_out=1", /* the model of then */
                          NULL};
    for (int i = 0; sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    epochs_seen o = {0};
    stall_run_opts opts = {.jobs = 1, .no_files = 1, .on_iter = seen, .observer = &o};
    cr_assert_eq(stall_scenario_run(&cfg, &opts, &err), 0, "%s", err.msg);
    const double want[] = {0.995, 0.962, 0.999};
    double meas[3];
    store_measured("pagecache_half_r2", meas);
    for (int e = 0; e < 3; e++) {
        double sim = o.end[e] - o.start[e];
        /* since (docs/model.md 2.3) the read comes out in proportion to each
         * fetch, and an epoch's mean fetch above the fastest's within twice
         * the standard error is not taken for a read: 0.990, 0.986, 0.999 s
         * for the committed 0.995, 0.962, 0.999 (epoch 1 of the reference
         * was 2.4 ms slower than epoch 2, its fetches' spread 9-16 ms) */
        cr_assert_lt(fabs(sim - want[e]), 0.03, "epoch %d: %.4f, predicted %.3f", e, sim, want[e]);
        cr_assert(sim < meas[e] && sim > 0.80 * meas[e], "epoch %d: %.3f, measured %.3f", e, sim,
                  meas[e]);
    }
    /* The default now (the waits for a core taken out as fitted on the
     * reference's own run, docs/model.md 2.3), with the latency of then:
     * closer in every epoch (-12.6%, -4.1%, -4.8%), still short. */
    double then[3];
    for (int e = 0; e < 3; e++)
        then[e] = o.end[e] - o.start[e];
    stall_config_defaults(&cfg);
    for (int i = 0; sets[i + 1]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    o = (epochs_seen){0};
    cr_assert_eq(stall_scenario_run(&cfg, &opts, &err), 0, "%s", err.msg);
    for (int e = 0; e < 3; e++) {
        double sim = o.end[e] - o.start[e];
        cr_assert(sim > then[e] && sim < meas[e],
                  "epoch %d, fitted: %.3f (then %.3f), measured %.3f", e, sim, then[e], meas[e]);
    }
}

Test(storage, a_read_bound_page_cache_predicted_before_its_capture)
{
    /* traces/s9_predictions.md: from pagecache4m_cold (640 files of 4 MB
     * all evicted; epochs set by the reads: 1.511 s cold, 0.658 and 0.598 s
     * warm), latency_ms = 1.47 per cold file fitted on its epoch 0, half
     * and a quarter of the files evicted were predicted at 1.086 and 0.995
     * s for epoch 0 and measured 0.800 and 0.737 s: +36% and +35%, the
     * goal (10%) missed. Found after: the cold epoch's fetches (34-196 ms,
     * 12 of 40 above 60 ms) had their mean read, 54.4 ms, subtracted from
     * each and floored at 0, so 28 became 0 and the epoch kept 0.29 s of
     * its read even with every file cached. Taken out in proportion to each
     * fetch (docs/model.md 2.3) and refitted (tools/tier_fit.py): a latency
     * per cold file (2.057 ms) gives half +24.9% and a quarter +4.4%; the
     * disk as one queue (queue = fifo) at a fitted bandwidth (1957 MB/s)
     * gives +17.6% and +0.1% (+23.7%, +2.6%, +16.7%, -1.9% before the
     * share of the waits for a core taken out was fitted with the trace's
     * hand-over per epoch). The half run's warm epochs were themselves
     * 12% and 17% faster than the reference's (docs/validation.md). */
    const char *runs[2] = {"pagecache4m_half", "pagecache4m_q"};
    const char *cached[2] = {"storage.cached_start_mb=1280", "storage.cached_start_mb=1920"};
    const double lat_lo[2] = {0.20, -0.01}, lat_hi[2] = {0.27, 0.06};
    const double fifo_lo[2] = {0.14, -0.04}, fifo_hi[2] = {0.20, 0.02};
    double warm[3], meas[3], sim[3];
    const char *all[] = {"storage.bandwidth_mb_s=3475.6", "storage.cache_mb=20000",
                         "storage.latency_ms=2.057", "storage.cached_start_mb=2560", NULL};
    store_run("pagecache4m_cold", all, 1, warm);
    store_measured("pagecache4m_cold", meas);
    /* every file cached: epoch 0 0.728 s, 16% above the warm epochs'
     * mean (0.947 s, +51%, with the read subtracted); the rest is epoch
     * 0's own start, its first fetch 0.111 s against 0.057 and 0.069 s */
    cr_assert_lt(warm[0], 1.17 * (meas[1] + meas[2]) / 2, "all cached: %.3f", warm[0]);
    all[3] = "storage.cached_start_mb=0";
    store_run("pagecache4m_cold", all, 1, sim);
    cr_assert_lt(fabs(sim[0] / meas[0] - 1), 0.01, "fit: %.3f for %.3f", sim[0], meas[0]);
    for (int i = 0; i < 2; i++) {
        const char *lat[] = {"storage.bandwidth_mb_s=3475.6", "storage.cache_mb=20000",
                             "storage.latency_ms=2.057", cached[i], NULL};
        store_run("pagecache4m_cold", lat, 1, sim);
        store_measured(runs[i], meas);
        double err = sim[0] / meas[0] - 1;
        cr_log_info("%s epoch 0, latency: %.3f s for %.3f s: %+.1f%%", runs[i], sim[0], meas[0],
                    100 * err);
        cr_assert(err > lat_lo[i] && err < lat_hi[i], "%s, latency: %+.1f%%", runs[i], 100 * err);
        const char *fifo[] = {"storage.bandwidth_mb_s=1957",
                              "storage.cache_mb=20000",
                              "storage.queue=fifo",
                              "storage.latency_ms=0",
                              cached[i],
                              NULL};
        store_run("pagecache4m_cold", fifo, 1, sim);
        err = sim[0] / meas[0] - 1;
        cr_log_info("%s epoch 0, fifo: %.3f s for %.3f s: %+.1f%%", runs[i], sim[0], meas[0],
                    100 * err);
        cr_assert(err > fifo_lo[i] && err < fifo_hi[i], "%s, fifo: %+.1f%%", runs[i], 100 * err);
    }
}

Test(storage, three_page_cache_rounds_predicted_before_their_capture)
{
    /* traces/s10_predictions.md: three rounds in one sitting, each a
     * reference with every file evicted, then half and a quarter; right
     * after each reference, model F (the disk as one queue, queue = fifo,
     * its bandwidth fitted on the reference's epoch 0 by tools/tier_fit.py)
     * predicted the targets' epoch 0, committed before they were captured.
     * Measured: r2 +1.4%, -5.3%; r3 -20.2%, -16.1%; r4 -11.0%, -4.0%. The
     * misses track the whole run: r3's targets' warm epochs, which no cache
     * rule touches, came out -7% to -12% too, r4 half's -12% and -14%
     * (docs/validation.md). The predictions were made before the
     * trace's hand-over was taken per epoch (docs/model.md 2.4); the share
     * of the waits for a core taken out, fitted on the reference's own run
     * with it, moves them by up to 2.2 ms. */
    const struct {
        const char *ref, *half, *q;
        double mb_s, pred[2], lo[2], hi[2];
    } rounds[3] = {
        {"pagecache4m_cold_r2",
         "pagecache4m_half_r2",
         "pagecache4m_q_r2",
         2617,
         {0.809, 0.710},
         {0.0, -0.07},
         {0.03, -0.03}},
        {"pagecache4m_cold_r3",
         "pagecache4m_half_r3",
         "pagecache4m_q_r3",
         2984,
         {0.710, 0.639},
         {-0.22, -0.18},
         {-0.18, -0.14}},
        {"pagecache4m_cold_r4",
         "pagecache4m_half_r4",
         "pagecache4m_q_r4",
         2459,
         {0.838, 0.748},
         {-0.13, -0.06},
         {-0.09, -0.02}},
    };
    for (int i = 0; i < 3; i++) {
        char bw[64];
        snprintf(bw, sizeof bw, "storage.bandwidth_mb_s=%g", rounds[i].mb_s);
        double sim[3], meas[3];
        const char *ref[] = {bw,
                             "storage.cache_mb=20000",
                             "storage.queue=fifo",
                             "storage.latency_ms=0",
                             "storage.cached_start_mb=0",
                             NULL};
        store_run(rounds[i].ref, ref, 1, sim);
        store_measured(rounds[i].ref, meas);
        cr_assert_lt(fabs(sim[0] / meas[0] - 1), 0.005, "%s fit: %.3f for %.3f", rounds[i].ref,
                     sim[0], meas[0]);
        const char *target[2] = {rounds[i].half, rounds[i].q};
        const char *cached[2] = {"storage.cached_start_mb=1280", "storage.cached_start_mb=1920"};
        for (int j = 0; j < 2; j++) {
            ref[4] = cached[j];
            store_run(rounds[i].ref, ref, 1, sim);
            cr_assert_lt(fabs(sim[0] - rounds[i].pred[j]), 0.004, "%s: %.4f, predicted %.3f",
                         target[j], sim[0], rounds[i].pred[j]);
            store_measured(target[j], meas);
            double err = sim[0] / meas[0] - 1;
            cr_log_info("%s epoch 0: %.3f s for %.3f s: %+.1f%%", target[j], sim[0], meas[0],
                        100 * err);
            cr_assert(err > rounds[i].lo[j] && err < rounds[i].hi[j], "%s: %+.1f%%", target[j],
                      100 * err);
        }
    }
}

/* A tier key that could change nothing is refused, naming it. */
static void refused(const char *const *sets, const char *want)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    const char *base[] = {"scenario.mode=model",
                          "trace.format=none",
                          "fetch.mean_s=0.01",
                          "compute.mean_s=0.01",
                          "run.batches=10",
                          "storage.batch_mb=1",
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], &err), 0, "%s", err.msg);
    for (int i = 0; sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s", err.msg);
    cr_assert_neq(stall_config_check(&cfg, &err), 0, "%s must be refused", sets[0]);
    cr_assert(strstr(err.msg, want), "%s: got '%s'", want, err.msg);
}

Test(storage, keys_without_effect_are_refused)
{
    refused((const char *const[]){"storage.cache_mb=10", NULL},
            "a cache miss costs nothing without");
    refused((const char *const[]){"storage.bandwidth_mb_s=10", "storage.layout=partitioned", NULL},
            "--set storage.layout: has no effect without");
    refused((const char *const[]){"storage.global_mb_s=10", "storage.requests_per_batch=4", NULL},
            "--set storage.requests_per_batch: has no effect without");
    refused((const char *const[]){"storage.latency_ms=1", "storage.cached_start_mb=4", NULL},
            "--set storage.cached_start_mb: has no effect without");
    refused((const char *const[]){"storage.latency_ms=1", "storage.admit_ms=1", NULL},
            "--set storage.admit_ms: has no effect without");
    refused((const char *const[]){"storage.bandwidth_mb_s=10", "storage.cache_mb=1",
                                  "storage.latency=constant", NULL},
            "--set storage.latency: has no effect without");
    refused((const char *const[]){"storage.latency_ms=1", "storage.queue=fifo", NULL},
            "--set storage.queue: has no effect without");
    refused((const char *const[]){"storage.bandwidth_mb_s=10", "storage.global_mb_s=10",
                                  "storage.queue=fifo", NULL},
            "--set storage.queue: a FIFO store has one bandwidth");
    refused((const char *const[]){"storage.latency_ms=1", "storage.cache_mb=100",
                                  "storage.cached_start_mb=200", NULL},
            "200 MB cannot be cached at the start in a cache of 100 MB");
    /* the tier model's own keys without any tier key (a new user's report:
     * accepted, and the run byte-identical to the one without them) */
    refused((const char *const[]){"storage.queue=fifo", NULL},
            "--set storage.queue: has no effect without the storage tiers");
    refused((const char *const[]){"storage.bandwidth_mb_s=10", "storage.latency=constant", NULL},
            "--set storage.latency: has no effect without the storage tiers");
    refused((const char *const[]){"storage.admit_ms=1", NULL},
            "--set storage.admit_ms: has no effect without");
    {
        /* a cache_mb of 0 given (a sweep down to no cache) keeps admit_ms */
        stall_config c0;
        stall_err e0 = {0};
        stall_config_defaults(&c0);
        const char *ok[] = {"scenario.mode=model",  "trace.format=none",
                            "fetch.mean_s=0.01",    "compute.mean_s=0.01",
                            "run.batches=10",       "storage.batch_mb=1",
                            "storage.latency_ms=1", "storage.admit_ms=1",
                            "storage.cache_mb=0",   NULL};
        for (int i = 0; ok[i]; i++)
            cr_assert_eq(stall_config_set(&c0, ok[i], &e0), 0, "%s", e0.msg);
        cr_assert_eq(stall_config_check(&c0, &e0), 0, "%s", e0.msg);
    }
    /* and the tier keys apply in mode = model only */
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_set(&cfg, "storage.cache_mb=1", &err), 0, "%s", err.msg);
    cr_assert_neq(stall_config_check(&cfg, &err), 0);
    cr_assert(strstr(err.msg, "--set storage.cache_mb: has no effect in mode = replay"), "%s",
              err.msg);
}

/* With the storage tiers the terminal gives each epoch's time (the cold
 * and the warm ones, which the mean hides; a new user's report). */
Test(storage, the_terminal_gives_each_epoch_with_tiers)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, "configs/store-tiers.ini", &err), 0, "%s", err.msg);
    char *text = NULL;
    size_t len = 0;
    FILE *term = open_memstream(&text, &len);
    stall_summary sum;
    stall_run_opts o = {.jobs = 1, .no_files = 1, .summary = &sum, .term = term};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    fclose(term);
    const char *l = strstr(text, "epochs (storage tiers: what the cache holds sets each one): 0: ");
    cr_assert_not_null(l, "%s", text);
    double e0 = 0, e1 = 0, e2 = 0;
    cr_assert_eq(sscanf(strstr(l, "): ") + 2, " 0: %lf s, 1: %lf s, 2: %lf s", &e0, &e1, &e2), 3,
                 "%s", l);
    /* cold first epoch, warm later ones; their mean is the summary's */
    cr_expect_gt(e0, 2 * e1);
    cr_expect_lt(fabs((e0 + e1 + e2) / 3 - sum.epoch_time_s), 0.002, "%g vs %g", (e0 + e1 + e2) / 3,
                 sum.epoch_time_s);
    free(text);
}

/* [storage] trace_mb_s and trace_latency_ms: the storage an all-cold
 * trace's run read from (store_none: the loopback store at 20 MB/s and 2 ms
 * per request, no cache). Its read is found by simulating that run there
 * (jobs/tierfit.c), so the what-if at that storage gives the trace back, a
 * faster one is faster, and a cache that holds the dataset gives the warm
 * epochs of store_warm (captured the same day). Before, the fetches were
 * kept whole and every modelled read came on top: 200 MB/s predicted
 * 3.35 s per epoch against the 2.59 s measured at 20 MB/s, and the cache
 * 4.46, 2.63, 2.60 s against store_warm's 2.93, 1.00, 0.99 s. */
static const char *const st_trace_store[] = {"storage.trace_mb_s=20", "storage.trace_latency_ms=2",
                                             "storage.queue=fifo", "storage.latency=constant"};

static void store_run_at(const char *name, const char *bw, const char *cache, int in_memory,
                         double *ep)
{
    const char *sets[8];
    int n = 0;
    for (size_t i = 0; i < 4; i++)
        sets[n++] = st_trace_store[i];
    sets[n++] = bw;
    sets[n++] = cache;
    /* a cache admits each file it keeps with a write (store_warm_r2's, 2.3) */
    if (strcmp(cache, "storage.cache_mb=0") != 0)
        sets[n++] = "storage.admit_ms=0.6";
    sets[n] = NULL;
    store_run(name, sets, in_memory, ep);
}

Test(storage, an_all_cold_trace_with_its_storage_gives_faster_stores_and_caches)
{
    double meas[3], own[3], sim[3], prev = INFINITY;
    store_measured("store_none", meas);
    store_run_at("store_none", "storage.bandwidth_mb_s=20", "storage.cache_mb=0", 1, own);
    double mo = (own[0] + own[1] + own[2]) / 3, mm = (meas[0] + meas[1] + meas[2]) / 3;
    cr_expect_lt(fabs(mo / mm - 1), 0.02, "its own storage: %.3f s, measured %.3f s", mo, mm);
    const char *bws[] = {"storage.bandwidth_mb_s=10", "storage.bandwidth_mb_s=20",
                         "storage.bandwidth_mb_s=40", "storage.bandwidth_mb_s=200"};
    for (size_t i = 0; i < 4; i++) {
        store_run_at("store_none", bws[i], "storage.cache_mb=0", 1, sim);
        double m = (sim[0] + sim[1] + sim[2]) / 3;
        cr_expect_leq(m, prev + 1e-9, "%s: %.3f s, after %.3f s", bws[i], m, prev);
        prev = m;
    }
    cr_expect_lt(prev, 0.7 * mm, "200 MB/s: %.3f s, measured %.3f s at 20 MB/s", prev, mm);
    /* a cache that holds the dataset: store_warm's epochs within 10% */
    double warm[3], streamed[3];
    store_run_at("store_none", "storage.bandwidth_mb_s=20", "storage.cache_mb=100", 1, sim);
    store_run_at("store_none", "storage.bandwidth_mb_s=20", "storage.cache_mb=100", -1, streamed);
    store_measured("store_warm", warm);
    for (int e = 0; e < 3; e++)
        cr_expect_float_eq(sim[e], streamed[e], 1e-9, "streamed epoch %d: %.6f vs %.6f", e,
                           streamed[e], sim[e]);
    cr_expect_lt(worst(sim, warm, 0, 3), 0.10, "warm: %.3f %.3f %.3f, measured %.3f %.3f %.3f",
                 sim[0], sim[1], sim[2], warm[0], warm[1], warm[2]);
    cr_log_info(
        "store_none at 20 MB/s, cache 100 MB: %.3f %.3f %.3f s, store_warm %.3f %.3f %.3f s",
        sim[0], sim[1], sim[2], warm[0], warm[1], warm[2]);
}

Test(storage, a_trace_storage_that_cannot_give_the_trace_back_is_refused)
{
    stall_err err = {0};
    double ep[3];
    /* 1.024 MB at 5 MB/s is 0.2 s a fetch: store_none's fetches took 0.12 s */
    int rc = store_try("store_none", (const char *const[]){"storage.trace_mb_s=5", NULL}, ep, &err);
    cr_expect_eq(rc, STALL_ECONFIG, "rc %d", rc);
    cr_expect(strstr(err.msg, "--set storage.trace_mb_s: the trace's run could not have read at "
                              "that storage") == err.msg,
              "%s", err.msg);
    /* both keys make the storage: both are named */
    rc = store_try(
        "store_none",
        (const char *const[]){"storage.trace_mb_s=20", "storage.trace_latency_ms=6", NULL}, ep,
        &err);
    cr_expect_eq(rc, STALL_ECONFIG, "rc %d", rc);
    cr_expect(strstr(err.msg, "--set storage.trace_mb_s with --set storage.trace_latency_ms: the "
                              "trace's run could not have read at that storage") == err.msg,
              "%s", err.msg);
    /* a store that costs nothing takes nothing out */
    stall_config cfg;
    stall_config_defaults(&cfg);
    const char *z[] = {"scenario.mode=model",
                       "trace.format=tidy",
                       "trace.path=traces/store_none/trace.csv",
                       "storage.bandwidth_mb_s=10",
                       "storage.trace_mb_s=0",
                       NULL};
    for (int i = 0; z[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, z[i], &err), 0, "%s", err.msg);
    cr_expect_neq(stall_config_check(&cfg, &err), 0);
    cr_expect(strstr(err.msg, "--set storage.trace_mb_s: has no effect: a store of unlimited") ==
                  err.msg,
              "%s", err.msg);
    /* and without a trace there is no run to simulate */
    refused((const char *const[]){"storage.trace_mb_s=20", NULL},
            "--set storage.trace_mb_s: has no effect with [trace] format = none");
}

/* A trace without a samples column (the notebook's format; a tidy trace
 * that leaves it out) has [report] samples per batch, a request each: its
 * run at its own storage, simulated to find its read, made one request a
 * batch while the what-if made 16, so 2 ms a miss was taken out once and
 * read 16 times, and the trace's own storage did not give it back (+23.0%
 * on store_none without its bytes and samples columns; with them +0.5%). */
Test(storage, a_trace_without_samples_at_its_own_storage_gives_itself_back)
{
    char src[1200], dst[1200], line[1024];
    snprintf(src, sizeof src, "%s/traces/store_none/trace.csv", STALL_SOURCE_DIR);
    snprintf(dst, sizeof dst, "%s/nosamples.csv", sdir);
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    cr_assert(in && out, "%s, %s", src, dst);
    /* its columns 11 and 12 are bytes and samples */
    while (fgets(line, sizeof line, in)) {
        char *p = line;
        for (int c = 1; c <= 12; c++) {
            char *comma = strchr(p, ',');
            cr_assert_not_null(comma, "%s", line);
            if (c <= 10)
                fwrite(p, 1, (size_t)(comma - p) + 1, out);
            p = comma + 1;
        }
        fputs(p, out);
    }
    fclose(in);
    fclose(out);
    char path[1300];
    snprintf(path, sizeof path, "trace.path=%s", dst);
    double meas[3], own[3], with[3];
    store_measured("store_none", meas);
    const char *sets[] = {"storage.trace_mb_s=20",
                          "storage.trace_latency_ms=2",
                          "storage.queue=fifo",
                          "storage.latency=constant",
                          "storage.batch_mb=1.024",
                          "report.samples=16",
                          path,
                          NULL};
    store_run("store_none", sets, 1, own);
    sets[6] = NULL; /* the columns' own trace */
    store_run("store_none", sets, 1, with);
    double mo = (own[0] + own[1] + own[2]) / 3, mm = (meas[0] + meas[1] + meas[2]) / 3;
    cr_expect_lt(fabs(mo / mm - 1), 0.02, "its own storage: %.3f s, measured %.3f s", mo, mm);
    for (int e = 0; e < 3; e++)
        cr_expect_float_eq(own[e], with[e], 1e-9, "epoch %d: %.6f s, with the columns %.6f s", e,
                           own[e], with[e]);
}

/* The trace's storage past the limits of a duration (a batch read at
 * 1e-9 MB/s, 16 requests of 1e9 ms) is refused naming the key; the
 * simulations of the trace's run refused it naming none. */
Test(storage, a_trace_storage_past_the_limits_names_its_key)
{
    stall_err err = {0};
    double ep[3];
    int rc =
        store_try("store_none", (const char *const[]){"storage.trace_mb_s=1e-9", NULL}, ep, &err);
    cr_expect_eq(rc, STALL_ECONFIG, "rc %d", rc);
    cr_expect(strstr(err.msg, "--set storage.trace_mb_s: 1e-09 MB/s reads a batch of 1.024 MB in "
                              "1.024e+09 s, past the limit") == err.msg,
              "%s", err.msg);
    rc = store_try(
        "store_none",
        (const char *const[]){"storage.trace_mb_s=20", "storage.trace_latency_ms=1e9", NULL}, ep,
        &err);
    cr_expect_eq(rc, STALL_ECONFIG, "rc %d", rc);
    cr_expect(strstr(err.msg, "--set storage.trace_latency_ms: 1e+09 ms for each of a batch's 16 "
                              "requests is 1.6e+07 s, past the limit") == err.msg,
              "%s", err.msg);
    /* the what-if's own latency too (it said "storage: latency x requests
     * per batch is out of range", naming no key) */
    rc = store_try("store_none", (const char *const[]){"storage.latency_ms=1e9", NULL}, ep, &err);
    cr_expect_eq(rc, STALL_ECONFIG, "rc %d", rc);
    cr_expect(strstr(err.msg, "--set storage.latency_ms: 1e+09 ms x 16 requests per batch is "
                              "1.6e+07 s, past the limit") == err.msg,
              "%s", err.msg);
}

/* ---- the notebook's own trace (dsanalyzer, one epoch) ---- */

#define NB_IN STALL_SOURCE_DIR "/tests/golden/seed-case1/input/"
#define NB_FILE "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0"

/* Runs mode = model on the notebook's trace with sets; returns the status
 * and, when it ran, the first summary row's epoch_time_s in *ep. */
static int nb_run(const char *name, const char *const *sets, double *ep, stall_err *err)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    const char *base[] = {"scenario.mode=model",
                          "trace.format=dsanalyzer",
                          "trace.fetch=" NB_IN NB_FILE "_simp_fetchdifftime.csv",
                          "trace.start=" NB_IN NB_FILE "_simp_fetchstartdifftime.csv",
                          "trace.perf=" NB_IN NB_FILE ".csv",
                          "align.start=none",
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], err), 0, "%s", err->msg);
    for (int i = 0; sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], err), 0, "%s", err->msg);
    /* what the INI alone says is fine: the refusal needs the trace's epochs */
    cr_assert_eq(stall_config_check(&cfg, err), 0, "%s", err->msg);
    char out[256];
    snprintf(out, sizeof out, "%s/%s", sdir, name);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    int rc = stall_scenario_run(&cfg, &o, err);
    if (rc == 0) {
        char sp[300];
        snprintf(sp, sizeof sp, "%s/summary.csv", out);
        stall_table *t = NULL;
        stall_err te = {0};
        cr_assert_eq(stall_table_read(sp, &t, &te), 0, "%s", te.msg);
        *ep = stall_table_num(t, 0, stall_table_col(t, "epoch_time_s"));
        stall_table_free(t);
    }
    return rc;
}

/* "A cache holding the dataset" on the notebook's trace: its run has one
 * epoch, which reads every sample once, so a cold cache hits nothing (a
 * cache of 1 MB and of 500 GB gave the same run, 0.0% hits, before it was
 * refused). Refused, naming the key and what would give it an effect; a
 * warm start (cached_start_mb) is taken, and a cache holding all of the
 * dataset then gives back the run without storage, faster than the cold
 * store. */
Test(storage, cold_cache_in_the_notebooks_one_epoch_run_is_refused)
{
    stall_err err = {0};
    double ep = 0;
    const char *cold_cache[] = {"storage.batch_mb=100", "storage.bandwidth_mb_s=1000",
                                "storage.cache_mb=500000", NULL};
    cr_assert_eq(nb_run("nb_cold_cache", cold_cache, &ep, &err), STALL_ECONFIG);
    cr_expect(strstr(err.msg, "--set storage.cache_mb: has no effect: the run has one epoch") !=
                  NULL,
              "%s", err.msg);
    cr_expect(strstr(err.msg, "cached_start_mb") != NULL, "%s", err.msg);
    cr_expect(strchr(err.msg, '\n') == NULL, "one line: %s", err.msg);
    /* cache_mb = 0, no cache, is what the run does anyway: taken */
    const char *no_cache[] = {"storage.batch_mb=100", "storage.latency_ms=1",
                              "storage.requests_per_batch=4", "storage.cache_mb=0", NULL};
    double cold = 0, warm = 0, bare = 0;
    cr_assert_eq(nb_run("nb_no_cache", no_cache, &cold, &err), 0, "%s", err.msg);
    /* the whole dataset (100 MB x 850 batches x 4 GPUs) cached at the start */
    const char *warm_cache[] = {"storage.batch_mb=100",           "storage.latency_ms=1",
                                "storage.requests_per_batch=4",   "storage.cache_mb=340000",
                                "storage.cached_start_mb=340000", NULL};
    cr_assert_eq(nb_run("nb_warm_cache", warm_cache, &warm, &err), 0, "%s", err.msg);
    cr_assert_eq(nb_run("nb_bare", (const char *const[]){NULL}, &bare, &err), 0, "%s", err.msg);
    cr_expect_lt(warm, cold - 0.5, "warm %.6f cold %.6f", warm, cold);
    cr_expect(fabs(warm - bare) < 1e-6, "warm %.9f, without storage %.9f", warm, bare);
}

static double nb_term(const char *name, const char *const *sets, char *buf, size_t n)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    const char *base[] = {"scenario.mode=model",
                          "trace.format=dsanalyzer",
                          "trace.fetch=" NB_IN NB_FILE "_simp_fetchdifftime.csv",
                          "trace.start=" NB_IN NB_FILE "_simp_fetchstartdifftime.csv",
                          "trace.perf=" NB_IN NB_FILE ".csv",
                          "align.start=none",
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], &err), 0, "%s", err.msg);
    for (int i = 0; sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    FILE *term = tmpfile();
    cr_assert_not_null(term);
    stall_summary sum;
    memset(&sum, 0, sizeof sum);
    stall_run_opts o = {.jobs = 1, .no_files = 1, .term = term, .summary = &sum};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s: %s", name, err.msg);
    rewind(term);
    size_t got = fread(buf, 1, n - 1, term);
    buf[got] = '\0';
    fclose(term);
    return sum.epoch_time_s;
}

/* Storage at 1 GB/s asked two ways on the notebook's one-epoch trace
 * (docs/model.md 2.3): bandwidth_mb_s alone takes each fetch to hold its
 * read at that bandwidth (+0.04%); global_mb_s turns the tiers on, whose
 * one-epoch trace has no read to take out, so every miss comes on top
 * (+0.70%), as the contract says, and the warning names the fix: given the
 * trace's storage (trace_mb_s), the tiers agree with bandwidth_mb_s. */
Test(storage, the_one_epoch_warning_names_trace_mb_s_and_it_agrees)
{
    static char buf[1 << 16];
    const char *bw[] = {"storage.bandwidth_mb_s=1000", "storage.batch_mb=56", NULL};
    const char *gl[] = {"storage.global_mb_s=1000", "storage.batch_mb=56", NULL};
    const char *fix[] = {"storage.global_mb_s=1000", "storage.batch_mb=56",
                         "storage.trace_mb_s=1000", NULL};
    double b = nb_term("bw", bw, buf, sizeof buf);
    double g = nb_term("gl", gl, buf, sizeof buf);
    cr_expect(strstr(buf, "warning: the trace has one epoch") != NULL, "%s", buf);
    cr_expect(strstr(buf, "fix: give the storage the trace's run read from, [storage] "
                          "trace_mb_s") != NULL,
              "%s", buf);
    cr_expect(strstr(buf, "--set storage.trace_mb_s=") != NULL, "%s", buf);
    double f = nb_term("fix", fix, buf, sizeof buf);
    cr_expect(strstr(buf, "warning:") == NULL, "%s", buf);
    cr_expect_gt(g / b - 1, 0.005, "global %.3f bandwidth %.3f", g, b);
    cr_expect_lt(fabs(f / b - 1), 0.002, "with trace_mb_s %.3f, bandwidth %.3f", f, b);
}
