/*
 * ckpt_store: checkpoints written to the storage tiers' store ([checkpoint]
 * target = store, models/ckpt_store.c, docs/model.md 2.5) against closed
 * forms. With every read a hit (the store idle but for the writes) a sync
 * checkpoint adds its write alone, per-node MB / link (or all ranks' MB /
 * the global bandwidth, whichever is slower), as the local target at that
 * bandwidth does; an async write alone ends mb / B after it starts, so the
 * next checkpoint waits for its rest. In a storage-bound cold epoch the link
 * never idles, so the background writes add their bytes to the epoch's:
 * (D + n S) / B. The keys that contradict each other are refused.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/ckpt.h"
#include "stall/config.h"
#include "stall/model.h"
#include "stall/storage.h"

#define MS INT64_C(1000000)

typedef struct cst {
    stall_time fetch, compute;
} cst;

static stall_time c_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)e, (void)r, (void)k;
    return ((const cst *)ctx)->fetch;
}
static stall_time c_compute(void *ctx, int e, int r, int64_t k)
{
    (void)e, (void)r, (void)k;
    return ((const cst *)ctx)->compute;
}

typedef struct obs {
    stall_time end, wait, write;
    int64_t n;
    stall_time start[4], last[4];
} obs;

static void on_iter(void *ctx, const stall_iter_record *rec)
{
    obs *o = ctx;
    o->end = rec->iter_end;
    o->wait += rec->ckpt_wait;
    o->write += rec->ckpt_write;
    o->n += rec->ckpt_write > 0;
    if (rec->epoch < 4) {
        o->start[rec->epoch] = rec->epoch_start;
        o->last[rec->epoch] = rec->iter_end;
    }
}

static obs run(const stall_model_params *p, const cst *c)
{
    stall_durations d = {.fetch = c_fetch, .compute = c_compute, .ctx = (void *)c};
    obs o = {0};
    stall_err err;
    int rc = stall_model_run(p, &d, on_iter, &o, NULL, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    return o;
}

static stall_model_params base(int g, int gpn, int w, int64_t n, int ne)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = g;
    p.gpus_per_node = gpn;
    p.workers = w;
    p.batches = n;
    p.epochs = ne;
    return p;
}

/* The tiers with the whole dataset cached from the start: every read hits,
 * the store serves only the checkpoints. */
static void all_hits(stall_model_params *p, double link, double global)
{
    p->tiers = true;
    p->storage = (stall_storage){.batch_mb = 1,
                                 .dataset_mb = 1000,
                                 .cache_mb = 1e6,
                                 .start_mb = 1e6,
                                 .requests = 4,
                                 .link_mb_s = link,
                                 .global_mb_s = global};
}

Test(ckpt_store, sync_to_an_idle_store_adds_its_write_alone)
{
    /* G ranks, gpn per node, 30 MB each: W = max(gpn x 30 / link, G x 30 /
     * global), up to a ns per checkpoint (the fluid rounds departures up). */
    const int gs[] = {1, 2, 8, 8}, gpns[] = {1, 2, 4, 4};
    const double globals[] = {0, 0, 0, 400};
    const int64_t everies[] = {1, 7, 25};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++) {
            cst c = {.fetch = 2 * MS, .compute = 50 * MS};
            stall_model_params p = base(gs[a], gpns[a], 2, 60, 3);
            all_hits(&p, 200, globals[a]);
            obs o0 = run(&p, &c);
            p.ckpt = (stall_ckpt_params){.every = everies[b], .mb = 30, .store = true};
            obs o1 = run(&p, &c);
            int64_t n = 180 / everies[b];
            double ws = gpns[a] * 30.0 / 200.0;
            if (globals[a] > 0)
                ws = fmax(ws, gs[a] * 30.0 / globals[a]);
            stall_time w = llround(ws * 1e9);
            cr_assert_eq(o1.n, n);
            cr_assert(llabs(o1.wait - n * w) <= n, "G %d every %lld: wait %lld, n W = %lld", gs[a],
                      (long long)everies[b], (long long)o1.wait, (long long)(n * w));
            cr_assert_eq(o1.write, o1.wait);
            cr_assert_eq(o1.end - o0.end, o1.wait);
            /* alone, a FIFO store writes as fast */
            p.storage.fifo = globals[a] == 0;
            if (p.storage.fifo) {
                obs o3 = run(&p, &c);
                cr_assert(llabs(o3.wait - o1.wait) <= n, "FIFO: %lld vs %lld", (long long)o3.wait,
                          (long long)o1.wait);
            }
            /* the local target at the link's bandwidth: the same run, to a
             * ns per checkpoint */
            if (globals[a] == 0) {
                p.ckpt.store = false;
                p.ckpt.mb_s = 200;
                obs o2 = run(&p, &c);
                cr_assert(llabs(o2.end - o1.end) <= n);
            }
        }
}

Test(ckpt_store, async_write_alone_ends_mb_over_b_after_it_starts)
{
    /* Iterations of 50 ms, a checkpoint every 10 (500 ms), snapshot 10 ms:
     * a write of 100 MB at 500 MB/s (200 ms) is over before the next, the
     * loop waits only for the snapshots; at 100 MB/s (1 s) each later
     * checkpoint waits for the rest of the previous write, W + S - 500 ms. */
    cst c = {.fetch = 0, .compute = 50 * MS};
    stall_model_params p = base(1, 1, 0, 100, 1);
    all_hits(&p, 500, 0);
    p.ckpt = (stall_ckpt_params){
        .every = 10, .mb = 100, .async = true, .snapshot_mb_s = 10000, .store = true};
    obs o = run(&p, &c);
    cr_assert_eq(o.n, 10);
    cr_assert_eq(o.wait, 10 * 10 * MS);
    cr_assert_eq(o.end, 100 * 50 * MS + 10 * 10 * MS);
    p.storage.link_mb_s = 100;
    o = run(&p, &c);
    stall_time want = 10 * MS + 9 * (1000 * MS + 10 * MS - 500 * MS);
    cr_assert(llabs(o.wait - want) <= 10, "wait %lld, closed form %lld", (long long)o.wait,
              (long long)want);
    cr_assert_eq(o.end, 100 * 50 * MS + o.wait);
    /* reported write: the write alone on the link */
    cr_assert_eq(o.write, 10 * 1000 * MS);
}

Test(ckpt_store, background_writes_add_their_bytes_to_a_storage_bound_epoch)
{
    /* 1 rank, 4 workers, 50 batches of 50 MB at 100 MB/s: the cold epoch
     * is storage-bound, D / B = 25 s (tests/test_storage.c). An async
     * checkpoint of S = 100 MB every 10 iterations puts 4 writes inside
     * the epoch (the 5th follows its last iteration): the link never idles
     * while reads or writes are left, so the epoch takes (D + 4 S) / B = 29
     * s, plus at most the store's idle time of the run without them; the
     * same checkpoints to a local disk leave it at 25 s. */
    cst c = {.fetch = 20 * MS, .compute = 4 * MS};
    stall_model_params p = base(1, 1, 4, 50, 2);
    p.tiers = true;
    p.storage = (stall_storage){
        .batch_mb = 50, .dataset_mb = 2500, .cache_mb = 3000, .requests = 1, .link_mb_s = 100};
    obs o0 = run(&p, &c);
    double plain = (double)(o0.last[0] - o0.start[0]) / 1e9;
    cr_assert(plain >= 25.0 && plain < 25.0 + 0.81, "no checkpoints: %.4f s", plain);
    p.ckpt = (stall_ckpt_params){.every = 10, .mb = 100, .async = true, .store = true};
    obs o = run(&p, &c);
    double e0 = (double)(o.last[0] - o.start[0]) / 1e9;
    cr_assert(e0 >= 29.0 && e0 <= 29.0 + (plain - 25.0) + 1e-6,
              "epoch 0 with 4 writes of 100 MB: %.4f s, (D + 4 S) / B = 29 s", e0);
    /* A sync write blocks the loop but not the workers: the link stays busy
     * too, so the epoch is (D + 4 S) / B again, at least. */
    p.ckpt.async = false;
    o = run(&p, &c);
    e0 = (double)(o.last[0] - o.start[0]) / 1e9;
    cr_assert(e0 >= 29.0 && e0 <= 29.0 + 5 * 1.0 + 1, "sync: %.4f s", e0);
    /* to a local disk: the link carries the reads alone */
    p.ckpt = (stall_ckpt_params){.every = 10, .mb = 100, .mb_s = 100, .async = true};
    o = run(&p, &c);
    e0 = (double)(o.last[0] - o.start[0]) / 1e9;
    cr_assert(e0 < 25.0 + 0.81, "local target: %.4f s", e0);
}

Test(ckpt_store, the_model_refuses_a_store_without_bandwidth)
{
    cst c = {.fetch = 0, .compute = 50 * MS};
    stall_model_params p = base(1, 1, 0, 10, 1);
    p.ckpt = (stall_ckpt_params){.every = 5, .mb = 10, .store = true};
    stall_durations d = {.fetch = c_fetch, .compute = c_compute, .ctx = &c};
    stall_err err;
    cr_assert_eq(stall_model_run(&p, &d, NULL, NULL, NULL, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "store") != NULL, "%s", err.msg);
}

/* ---- the keys ---- */

static int set_check(const char *const *sets, size_t n, char *msg, size_t cap)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err e = {0};
    const char *base_sets[] = {"scenario.mode=model", "trace.format=none",  "fetch.mean_s=0.01",
                               "compute.mean_s=0.02", "storage.batch_mb=1", "run.batches=10"};
    for (size_t i = 0; i < sizeof base_sets / sizeof base_sets[0]; i++)
        cr_assert_eq(stall_config_set(&cfg, base_sets[i], &e), 0, "%s", e.msg);
    for (size_t i = 0; i < n; i++) {
        int rc = stall_config_set(&cfg, sets[i], &e);
        if (rc) {
            snprintf(msg, cap, "%s", e.msg);
            return rc;
        }
    }
    int rc = stall_config_check(&cfg, &e);
    snprintf(msg, cap, "%s", rc ? e.msg : "");
    return rc;
}

Test(ckpt_store, contradictory_keys_are_refused_naming_the_key)
{
    char msg[512];
    const char *ok[] = {"checkpoint.every_iterations=5", "checkpoint.mb_per_rank=10",
                        "checkpoint.target=store", "storage.bandwidth_mb_s=100",
                        "storage.cache_mb=10"};
    cr_assert_eq(set_check(ok, 5, msg, sizeof msg), 0, "%s", msg);
    const char *both[] = {"checkpoint.every_iterations=5", "checkpoint.mb_per_rank=10",
                          "checkpoint.target=store",       "checkpoint.bandwidth_mb_s=50",
                          "storage.bandwidth_mb_s=100",    "storage.cache_mb=10"};
    cr_assert_eq(set_check(both, 6, msg, sizeof msg), STALL_ECONFIG);
    cr_assert(strstr(msg, "checkpoint.bandwidth_mb_s") && strstr(msg, "target"), "%s", msg);
    const char *no_tiers[] = {"checkpoint.every_iterations=5", "checkpoint.mb_per_rank=10",
                              "checkpoint.target=store", "storage.bandwidth_mb_s=100"};
    cr_assert_eq(set_check(no_tiers, 4, msg, sizeof msg), STALL_ECONFIG);
    cr_assert(strstr(msg, "checkpoint.target") != NULL, "%s", msg);
    const char *no_every[] = {"checkpoint.target=store", "storage.bandwidth_mb_s=100",
                              "storage.cache_mb=10"};
    cr_assert_eq(set_check(no_every, 3, msg, sizeof msg), STALL_ECONFIG);
    cr_assert(strstr(msg, "checkpoint.target") && strstr(msg, "no effect"), "%s", msg);
    const char *local_ok[] = {"checkpoint.every_iterations=5", "checkpoint.mb_per_rank=10",
                              "checkpoint.target=local", "checkpoint.bandwidth_mb_s=50"};
    cr_assert_eq(set_check(local_ok, 4, msg, sizeof msg), 0, "%s", msg);
}
