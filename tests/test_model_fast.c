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

#include "modeltape.h"
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
    tape_run(&p, &d, &ref, true);
    for (int th = 1; th <= 4; th *= 2) {
        p.threads = th;
        tape got;
        tape_run(&p, &d, &got, false);
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
