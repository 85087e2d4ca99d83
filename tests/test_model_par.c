/*
 * One model run on several threads (models/model_par.c) against the same run
 * on one: every record delivered (each scalar and each per-rank array), the
 * stats, the return code and the error message, byte for byte, on random
 * configurations that qualify for threads (several nodes, no shared
 * resources), with durations drawn from a few equal values so that events
 * tie, with pin, hand-over, start-up, out-of-order delivery, W = 0, epochs,
 * checkpoints, slow ranks and stragglers; and on configurations that fail
 * part way (a negative duration), where the records before the failure and
 * the message must be the serial run's too.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "stall/model.h"

#include "modeltape.h"

static void random_params(uint64_t seed, stall_model_params *p, dur *d)
{
    uint64_t h = mix(seed);
#define PICK(n) ((int)((h = mix(h)) % (uint64_t)(n)))
    stall_model_defaults(p);
    p->gpus_per_node = 1 + PICK(4);
    int nodes = 2 + PICK(5);
    p->ranks = p->gpus_per_node * nodes - PICK(p->gpus_per_node); /* last node may be partial */
    p->workers = PICK(4);
    p->prefetch = 1 + PICK(3);
    p->in_order = PICK(3) != 0;
    p->persistent_workers = PICK(2);
    p->startup = PICK(2) ? 2 * MS : 0;
    p->pin = PICK(3) == 0 ? MS : 0;
    p->handover = PICK(2) ? MS : 0;
    p->batches = 1 + PICK(30);
    p->epochs = 1 + PICK(3);
    if (PICK(4) == 0) {
        p->ckpt.every = 1 + PICK(7);
        p->ckpt.mb = 100;
        p->ckpt.mb_s = 1000;
        p->ckpt.async = PICK(2);
        p->ckpt.first_extra = PICK(2) ? 30 * MS : 0; /* the run's first save (2.5) */
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
    tape one;
    tape_run(&p, &d, &one, false);
    for (int th = 2; th <= 4; th += 2) {
        p.threads = th;
        tape many;
        tape_run(&p, &d, &many, false);
        cr_assert_eq(many.n, one.n,
                     "seed %" PRIu64 ", %d threads: %zu bytes delivered, serial %zu (ranks %d, gpn "
                     "%d, W %d, batches %" PRId64 ", epochs %d)",
                     seed, th, many.n, one.n, p.ranks, p.gpus_per_node, p.workers, p.batches,
                     p.epochs);
        cr_assert(memcmp(many.b, one.b, one.n) == 0,
                  "seed %" PRIu64 ", %d threads: output differs from the serial run", seed, th);
        free(many.b);
    }
    free(one.b);
}

Test(model_par, random_configurations_match_one_thread)
{
    for (uint64_t seed = 1; seed <= 300; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d);
        compare(&p, &d, seed);
    }
}

Test(model_par, equal_constant_durations_tie_everywhere)
{
    for (uint64_t seed = 1000; seed < 1060; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d);
        d.levels = 1; /* every fetch 1 ms, every compute 0: ties at every instant */
        compare(&p, &d, seed);
    }
}

Test(model_par, failures_part_way_match_one_thread)
{
    for (uint64_t seed = 2000; seed < 2060; seed++) {
        stall_model_params p;
        dur d;
        random_params(seed, &p, &d);
        uint64_t h = mix(seed + 77);
        d.bad_epoch = (int)(h % (uint64_t)p.epochs);
        d.bad_rank = (int)(mix(h) % (uint64_t)p.ranks);
        d.bad_batch = (int64_t)(mix(h + 1) % (uint64_t)p.batches);
        d.bad_compute = mix(h + 2) % 2;
        compare(&p, &d, seed);
    }
}

/* The counts: 1,024 ranks on 128 nodes, enough iterations for the buffers to
 * wrap, the sums of waits past 2^53 ns (exactness falls back to the serial
 * sum). */
Test(model_par, many_ranks_and_huge_waits)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 1024;
    p.gpus_per_node = 8;
    p.workers = 2;
    p.batches = 7;
    dur d = {.salt = 5, .levels = 3, .unit = 10000 * INT64_C(1000000000), .bad_epoch = -1};
    compare(&p, &d, 5);
    d.unit = MS;
    p.batches = 40;
    compare(&p, &d, 6);
}
