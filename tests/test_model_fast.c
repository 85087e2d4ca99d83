/*
 * The closed form (models/model_fast.c) against the event engine
 * (stall__model_run_events, one thread): every record delivered (each
 * scalar and each per-rank array), the stats (the event count included),
 * the return code and the error message, byte for byte, on random
 * configurations that the closed form takes (durations from a few equal
 * values, so that events tie; start-up, persistent workers, hand-over,
 * W = 0, epochs and gaps, checkpoints, slow ranks and stragglers), run on
 * threads = 1, 2 and 4 (the closed form stays on one thread; the tables
 * of a job use the others), with up to 600 ranks; on
 * configurations that fail part way (a negative fetch, compute, tail or
 * gap), where the records before the failure and the message must be the
 * engine's; and on configurations it does not take, which must still
 * agree.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_int.h"
#include "models/model_state.h"
#include "stall/model.h"

#define MS INT64_C(1000000)

static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Durations: a few equal values (ties), a pure function of the cell. */
typedef struct dur {
    uint64_t salt;
    int levels; /* distinct values, >= 1 */
    stall_time unit;
    int bad_epoch; /* fetch(bad_epoch, bad_rank, bad_batch) < 0; -1: none */
    int bad_rank;
    int64_t bad_batch;
    bool bad_compute; /* the negative one is compute's */
    bool late;        /* ranks start an epoch late (d_late) */
    int bad_other;    /* 1: tail(bad_epoch, bad_batch) < 0 instead; 2: gap(bad_epoch) */
} dur;

static stall_time cell(const dur *d, uint64_t kind, int e, int r, int64_t k)
{
    uint64_t h = mix(d->salt ^ mix(kind ^ mix((uint64_t)e ^ mix((uint64_t)r ^ mix((uint64_t)k)))));
    return d->unit * (stall_time)(h % (uint64_t)d->levels);
}

static stall_time d_fetch(void *ctx, int e, int r, int64_t k)
{
    const dur *d = ctx;
    if (!d->bad_compute && e == d->bad_epoch && r == d->bad_rank && k == d->bad_batch)
        return -7;
    return cell(d, 1, e, r, k) + d->unit;
}

static stall_time d_compute(void *ctx, int e, int r, int64_t k)
{
    const dur *d = ctx;
    if (d->bad_compute && e == d->bad_epoch && r == d->bad_rank && k == d->bad_batch)
        return -7;
    return cell(d, 2, e, r, k);
}

static stall_time d_tail(void *ctx, int e, int64_t k)
{
    const dur *d = ctx;
    if (d->bad_other == 1 && e == d->bad_epoch && k == d->bad_batch)
        return -7;
    return cell(ctx, 3, e, 0, k) / 2;
}

/* A rank's late start (docs/model.md 2.4), in a third of the cases. */
static stall_time d_late(void *ctx, int e, int r)
{
    return 3 * cell(ctx, 5, e, r, 0);
}

static stall_time d_gap(void *ctx, int e)
{
    const dur *d = ctx;
    if (d->bad_other == 2 && e == d->bad_epoch)
        return -7;
    return cell(ctx, 4, e, 0, 0);
}

/* Everything a run delivers, as bytes. */
typedef struct tape {
    unsigned char *b;
    size_t n, cap;
    int g;
} tape;

static void put(tape *t, const void *p, size_t n)
{
    if (t->n + n > t->cap) {
        t->cap = (t->n + n) * 2;
        t->b = realloc(t->b, t->cap);
        cr_assert_not_null(t->b);
    }
    memcpy(t->b + t->n, p, n);
    t->n += n;
}

static void on_iter(void *ctx, const stall_iter_record *rec)
{
    tape *t = ctx;
    int64_t v[] = {rec->epoch,       rec->batch,      rec->epoch_start,  rec->iter_end,
                   rec->iter_time,   rec->stall_max,  rec->stall_min,    rec->delay,
                   rec->stall_train, rec->wait_max,   rec->compute_max,  rec->tail,
                   rec->ckpt_wait,   rec->ckpt_write, rec->fetch_spread, rec->start_spread};
    put(t, v, sizeof v);
    put(t, &rec->wait_mean_s, sizeof rec->wait_mean_s);
    size_t a = (size_t)t->g * sizeof(stall_time);
    put(t, rec->stall, a);
    put(t, rec->ready, a);
    put(t, rec->compute, a);
    put(t, rec->fetch_start, a);
    put(t, rec->fetch_end, a);
    put(t, rec->fetched, (size_t)t->g * sizeof(int64_t));
}

static void run(const stall_model_params *p, const stall_durations *d, tape *t, bool events)
{
    *t = (tape){.g = p->ranks};
    stall_model_stats st;
    memset(&st, 0, sizeof st);
    stall_err err;
    memset(&err, 0, sizeof err);
    int rc = events ? stall__model_run_events(p, d, on_iter, t, &st, &err)
                    : stall_model_run(p, d, on_iter, t, &st, &err);
    put(t, &rc, sizeof rc);
    put(t, &st.events, sizeof st.events);
    put(t, &st.iterations, sizeof st.iterations);
    put(t, &st.end, sizeof st.end);
    if (rc)
        put(t, err.msg, strlen(err.msg) + 1);
}

static void random_params(uint64_t seed, stall_model_params *p, dur *d, bool many)
{
    uint64_t h = mix(seed);
#define PICK(n) ((int)((h = mix(h)) % (uint64_t)(n)))
    stall_model_defaults(p);
    p->gpus_per_node = 1 + PICK(8);
    p->ranks = many ? 200 + PICK(400) : 1 + PICK(12);
    p->gpus_per_node = p->gpus_per_node < p->ranks ? p->gpus_per_node : p->ranks;
    p->workers = PICK(5);
    p->prefetch = 1 + PICK(3);
    p->persistent_workers = PICK(2);
    p->startup = PICK(2) ? (stall_time)PICK(3) * MS : 0;
    p->handover = PICK(2) ? (stall_time)PICK(3) * MS : 0;
    p->batches = 1 + PICK(many ? 12 : 40);
    p->epochs = 1 + PICK(3);
    if (PICK(4) == 0) {
        p->ckpt.every = 1 + PICK(7);
        p->ckpt.mb = 100;
        p->ckpt.mb_s = 1000;
        p->ckpt.async = PICK(2);
        p->ckpt.first_extra = PICK(2) ? 30 * MS : 0;
    }
    if (PICK(4) == 0) {
        p->uneven.slow = 1;
        p->uneven.compute_factor = 1.5;
        p->uneven.straggler_fraction = 0.2;
        p->uneven.straggler_factor = 2.0;
        p->uneven.straggler_iters = 1 + PICK(3);
        p->uneven.seed = seed;
    }
    *d = (dur){
        .salt = seed, .levels = 1 + PICK(3), .unit = MS, .bad_epoch = -1, .late = PICK(3) == 0};
#undef PICK
}

/* The engine on one thread against stall_model_run on 1, 2 and 4. */
static void compare(const stall_model_params *p0, const dur *dd, uint64_t seed)
{
    stall_durations d = {.fetch = d_fetch,
                         .compute = d_compute,
                         .tail = d_tail,
                         .epoch_gap = d_gap,
                         .late_start = dd->late ? d_late : NULL,
                         .ctx = (void *)dd};
    stall_model_params p = *p0;
    p.threads = 1;
    tape ref;
    run(&p, &d, &ref, true);
    for (int th = 1; th <= 4; th *= 2) {
        p.threads = th;
        tape got;
        run(&p, &d, &got, false);
        cr_assert_eq(got.n, ref.n,
                     "seed %" PRIu64 ", %d threads: %zu bytes delivered, the engine %zu (ranks %d, "
                     "W %d, P %d, batches %" PRId64 ", epochs %d)",
                     seed, th, got.n, ref.n, p.ranks, p.workers, p.prefetch, p.batches, p.epochs);
        cr_assert(memcmp(got.b, ref.b, ref.n) == 0,
                  "seed %" PRIu64 ", %d threads: output differs from the engine's (ranks %d, W "
                  "%d, P %d, batches %" PRId64 ", epochs %d)",
                  seed, th, p.ranks, p.workers, p.prefetch, p.batches, p.epochs);
        free(got.b);
    }
    free(ref.b);
}

Test(model_fast, random_configurations_match_the_engine)
{
    for (uint64_t seed = 1; seed <= 400; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, false);
        cr_assert(model_fast_on(&p));
        compare(&p, &d, seed);
    }
}

Test(model_fast, many_ranks_on_threads_match_the_engine)
{
    for (uint64_t seed = 500; seed < 540; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, true);
        compare(&p, &d, seed);
    }
}

Test(model_fast, equal_durations_tie_everywhere)
{
    for (uint64_t seed = 1000; seed < 1100; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, seed % 10 == 0);
        d.levels = 1; /* every fetch 1 ms, every compute 0: ties at every instant */
        compare(&p, &d, seed);
    }
}

Test(model_fast, failures_part_way_match_the_engine)
{
    for (uint64_t seed = 2000; seed < 2100; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, seed % 10 == 0);
        uint64_t h = mix(seed + 77);
        d.bad_epoch = (int)(h % (uint64_t)p.epochs);
        d.bad_rank = (int)(mix(h) % (uint64_t)p.ranks);
        d.bad_batch = (int64_t)(mix(h + 1) % (uint64_t)p.batches);
        d.bad_compute = mix(h + 2) % 2;
        d.bad_other = (int)(mix(h + 3) % 4) < 2 ? 0 : (int)(mix(h + 3) % 4) - 1;
        compare(&p, &d, seed);
    }
}

/* What the closed form leaves to the engine (pin, out of order, fetch
 * align, accumulation) still gives the engine's output. */
Test(model_fast, configurations_it_does_not_take_match_the_engine)
{
    for (uint64_t seed = 3000; seed < 3060; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, false);
        switch (seed % 4) {
        case 0:
            p.pin = MS;
            break;
        case 1:
            p.in_order = false;
            p.workers = 1 + p.workers;
            break;
        case 2:
            p.fetch_align = STALL_ALIGN_MIN;
            break;
        default:
            p.accumulation = 2;
            break;
        }
        cr_assert(!model_fast_on(&p));
        compare(&p, &d, seed);
    }
}

/* Sums of waits past 2^53 ns: wait_mean_s from the ranks' waits in order. */
Test(model_fast, huge_waits_sum_in_rank_order)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 1024;
    p.gpus_per_node = 8;
    p.workers = 2;
    p.batches = 7;
    dur d = {.salt = 5, .levels = 3, .unit = 10000 * INT64_C(1000000000), .bad_epoch = -1};
    compare(&p, &d, 5);
}

/* Runs that pass the simulated clock's limit (5e9 s) stop with the
 * engine's error after the same records, on the closed form as on the
 * engine (the closed form ran on: its int64 ns sums overflowed past
 * 9.2e9 s and a run of 1e6 s fetches printed 9223000003.890 s, exit 0). */
Test(model_fast, runs_past_the_clock_limit_fail_as_the_engine_does)
{
    for (uint64_t seed = 4000; seed < 4016; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d, false);
        /* fetches of 2.5e5 to 7.5e5 s: the limit falls within the run */
        d.unit = 250000 * INT64_C(1000000000);
        d.bad_epoch = -1;
        p.epochs = 1 + (int)(seed % 2);
        p.batches = 100000 / p.epochs;
        p.ranks = 1 + (int)(seed % 3);
        p.gpus_per_node = p.ranks;
        cr_assert(model_fast_on(&p), "seed %" PRIu64, seed);
        compare(&p, &d, seed);
        stall_durations dd = {
            .fetch = d_fetch, .compute = d_compute, .tail = d_tail, .epoch_gap = d_gap, .ctx = &d};
        tape t = {.g = p.ranks};
        stall_model_stats st;
        memset(&st, 0, sizeof st);
        stall_err err;
        memset(&err, 0, sizeof err);
        cr_assert_eq(stall_model_run(&p, &dd, on_iter, &t, &st, &err), STALL_ECONFIG,
                     "seed %" PRIu64 ": ran past the limit", seed);
        cr_assert(strstr(err.msg, "simulated time passes the limit"), "seed %" PRIu64 ": %s", seed,
                  err.msg);
        free(t.b);
    }
}
