/*
 * test_evq.c - the event queue: order by (time, seq), removal, growth.
 *
 * The small tests pin one rule each; the large one holds a million pushes
 * with interleaved removals against a qsort of the survivors. Events are
 * plain arrays owned by the tests, as the queue expects.
 */
#include "sim/evq.h"

#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

static void tevq_init(stall_event *ev, stall_time t, int64_t id)
{
    *ev = (stall_event){.time = t, .slot = STALL_EVQ_NOSLOT, .b = id};
}

static gsl_rng *tevq_rng(unsigned long seed)
{
    gsl_set_error_handler_off();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(rng, "gsl_rng_alloc failed");
    gsl_rng_set(rng, seed);
    return rng;
}

static int tevq_cmp_key(const void *x, const void *y)
{
    const stall_event *a = *(const stall_event *const *)x;
    const stall_event *b = *(const stall_event *const *)y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->seq != b->seq)
        return a->seq < b->seq ? -1 : 1;
    return 0;
}

Test(evq, pop_empty_returns_null)
{
    stall_evq *q = stall_evq_create(0);
    cr_assert_null(stall_evq_pop(q), "pop on an empty queue returned an event");
    cr_assert_null(stall_evq_peek(q), "peek on an empty queue returned an event");
    cr_assert_eq(stall_evq_size(q), 0, "size of an empty queue is %zu", stall_evq_size(q));

    stall_event ev;
    tevq_init(&ev, 5, 1);
    stall_evq_push(q, &ev);
    cr_assert_eq(stall_evq_pop(q), &ev, "the only event did not pop");
    cr_assert_null(stall_evq_pop(q), "pop after draining returned an event");
    cr_assert_null(stall_evq_peek(q), "peek after draining returned an event");
    stall_evq_destroy(q);
}

Test(evq, equal_times_fire_fifo)
{
    enum { N = 200 };
    stall_event ev[N];
    stall_evq *q = stall_evq_create(0);
    /* Equal-time events interleaved with later ones, which must not disturb
     * the push order among the equals. */
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], i % 2 ? 1000 - i : 7, i);
        stall_evq_push(q, &ev[i]);
    }
    for (int i = 0; i < N; i += 2) {
        stall_event *got = stall_evq_pop(q);
        cr_assert_eq(got->time, 7, "pop %d: time %lld, expected 7", i / 2, (long long)got->time);
        cr_assert_eq(got->b, i, "pop %d among equal times: id %lld, expected %d (push order)",
                     i / 2, (long long)got->b, i);
    }
    stall_evq_destroy(q);
}

Test(evq, earlier_time_beats_earlier_push)
{
    enum { N = 100 };
    stall_event ev[N];
    stall_evq *q = stall_evq_create(0);
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], (stall_time)(N - i) * 10, i);
        stall_evq_push(q, &ev[i]);
    }
    for (int i = 0; i < N; i++) {
        stall_event *got = stall_evq_pop(q);
        cr_assert_eq(got->time, (stall_time)(i + 1) * 10, "pop %d: time %lld, expected %lld", i,
                     (long long)got->time, (long long)(i + 1) * 10);
    }
    stall_evq_destroy(q);
}

Test(evq, negative_and_extreme_times_order)
{
    const stall_time times[] = {0, -1, STALL_TIME_MAX, INT64_MIN, 1, -1000000000000LL};
    const stall_time sorted[] = {INT64_MIN, -1000000000000LL, -1, 0, 1, STALL_TIME_MAX};
    stall_event ev[6];
    stall_evq *q = stall_evq_create(0);
    for (int i = 0; i < 6; i++) {
        tevq_init(&ev[i], times[i], i);
        stall_evq_push(q, &ev[i]);
    }
    for (int i = 0; i < 6; i++) {
        stall_event *got = stall_evq_pop(q);
        cr_assert_eq(got->time, sorted[i], "pop %d: time %lld, expected %lld", i,
                     (long long)got->time, (long long)sorted[i]);
    }
    stall_evq_destroy(q);
}

Test(evq, push_assigns_increasing_seq_and_slots)
{
    enum { N = 50 };
    stall_event ev[N];
    stall_evq *q = stall_evq_create(0);
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], (i * 37) % 11, i);
        stall_evq_push(q, &ev[i]);
        if (i > 0)
            cr_assert_gt(ev[i].seq, ev[i - 1].seq, "seq %llu after %llu is not increasing",
                         (unsigned long long)ev[i].seq, (unsigned long long)ev[i - 1].seq);
    }
    for (int i = 0; i < N; i++)
        cr_assert_neq(ev[i].slot, STALL_EVQ_NOSLOT, "queued event %d has no slot", i);
    stall_event *got = stall_evq_pop(q);
    cr_assert_eq(got->slot, STALL_EVQ_NOSLOT, "popped event keeps slot %zu", got->slot);
    stall_evq_destroy(q);
}

Test(evq, peek_does_not_remove)
{
    stall_event a, b;
    tevq_init(&a, 20, 1);
    tevq_init(&b, 10, 2);
    stall_evq *q = stall_evq_create(0);
    stall_evq_push(q, &a);
    stall_evq_push(q, &b);
    cr_assert_eq(stall_evq_peek(q), &b, "peek did not return the earliest event");
    cr_assert_eq(stall_evq_peek(q), &b, "a second peek returned another event");
    cr_assert_eq(stall_evq_size(q), 2, "peek changed the size to %zu", stall_evq_size(q));
    cr_assert_eq(stall_evq_pop(q), &b, "pop disagrees with peek");
    stall_evq_destroy(q);
}

Test(evq, grows_past_capacity_hint)
{
    enum { N = 10000 };
    stall_event *ev = stall_xcalloc(N, sizeof *ev);
    stall_evq *q = stall_evq_create(1);
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], N - i, i);
        stall_evq_push(q, &ev[i]);
    }
    cr_assert_eq(stall_evq_size(q), N, "size %zu after %d pushes", stall_evq_size(q), N);
    for (int i = 1; i <= N; i++) {
        stall_event *got = stall_evq_pop(q);
        cr_assert_eq(got->time, i, "pop %d: time %lld", i, (long long)got->time);
    }
    stall_evq_destroy(q);
    free(ev);
}

Test(evq, remove_middle_keeps_order)
{
    enum { N = 21 };
    stall_event ev[N];
    stall_evq *q = stall_evq_create(0);
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], (stall_time)((i * 8) % N) * 10, i);
        stall_evq_push(q, &ev[i]);
    }
    stall_event *victim = NULL;
    for (int i = 0; i < N; i++)
        if (ev[i].time == 100)
            victim = &ev[i];
    cr_assert_eq(stall_evq_remove(q, victim), 0, "removing a queued event failed");
    cr_assert_eq(victim->slot, STALL_EVQ_NOSLOT, "removed event keeps slot %zu", victim->slot);
    cr_assert_eq(stall_evq_size(q), N - 1, "size %zu after remove", stall_evq_size(q));
    for (int t = 0; t < N; t++) {
        if (t == 10)
            continue;
        stall_event *got = stall_evq_pop(q);
        cr_assert_eq(got->time, (stall_time)t * 10, "time %lld popped, expected %lld",
                     (long long)got->time, (long long)t * 10);
    }
    cr_assert_null(stall_evq_pop(q), "queue not empty after popping the rest");
    stall_evq_destroy(q);
}

/* Removes the k-th event (in push order) of queues of every size up to 40,
 * after popping some, so that victims sit in the front bucket (the one popped
 * from, removal leaves a tombstone) and in the others (swap with the last),
 * and checks the order of the rest. Counts that both kinds happened. */
Test(evq, remove_any_event_keeps_the_order_of_the_rest)
{
    enum { MAXN = 40 };
    stall_event ev[MAXN];
    stall_event *ref[MAXN];
    gsl_rng *rng = tevq_rng(7);
    int front = 0, other = 0;
    for (int n = 2; n <= MAXN; n++) {
        for (int k = 0; k < n; k++) {
            stall_evq *q = stall_evq_create(0);
            for (int i = 0; i < n; i++) {
                tevq_init(&ev[i], (stall_time)gsl_rng_uniform_int(rng, 8), i);
                stall_evq_push(q, &ev[i]);
            }
            /* Pop one, so that the queue redistributed around a minimum. */
            stall_event *first = stall_evq_pop(q);
            stall_event *victim = &ev[k] == first ? &ev[(k + 1) % n] : &ev[k];
            size_t was = victim->slot;
            cr_assert_eq(stall_evq_remove(q, victim), 0, "n=%d: remove of event %d failed", n, k);
            cr_assert_eq(victim->slot, STALL_EVQ_NOSLOT, "removed event keeps a slot");
            front += (was >> 48) == 0;
            other += (was >> 48) != 0;
            int m = 0;
            for (int i = 0; i < n; i++)
                if (&ev[i] != victim && &ev[i] != first)
                    ref[m++] = &ev[i];
            qsort(ref, (size_t)m, sizeof *ref, tevq_cmp_key);
            cr_assert_eq(stall_evq_size(q), (size_t)m, "size %zu, expected %d", stall_evq_size(q),
                         m);
            for (int i = 0; i < m; i++) {
                stall_event *got = stall_evq_pop(q);
                cr_assert_eq(got, ref[i],
                             "n=%d, removed %d: pop %d gave (%lld, %llu), expected "
                             "(%lld, %llu)",
                             n, k, i, (long long)got->time, (unsigned long long)got->seq,
                             (long long)ref[i]->time, (unsigned long long)ref[i]->seq);
            }
            cr_assert_null(stall_evq_pop(q), "n=%d: events left after the last", n);
            stall_evq_destroy(q);
        }
    }
    gsl_rng_free(rng);
    cr_assert_gt(front, 0, "no victim sat in the front bucket (%d elsewhere)", other);
    cr_assert_gt(other, 0, "no victim sat outside the front bucket (%d in it)", front);
}

/* Pushing below the last minimum (after a peek moved it up) re-buckets. */
Test(evq, push_below_a_peeked_minimum_keeps_order)
{
    enum { N = 200 };
    stall_event ev[N];
    stall_event *ref[N];
    gsl_rng *rng = tevq_rng(11);
    for (int round = 0; round < 50; round++) {
        stall_evq *q = stall_evq_create(0);
        int n = 0;
        for (; n < N / 2; n++) {
            tevq_init(&ev[n], 1000 + (stall_time)gsl_rng_uniform_int(rng, 1000), n);
            stall_evq_push(q, &ev[n]);
        }
        stall_event *peeked = stall_evq_peek(q);
        cr_assert_not_null(peeked);
        for (; n < N; n++) {
            /* earlier than the peeked minimum, or not */
            tevq_init(&ev[n], (stall_time)gsl_rng_uniform_int(rng, 2000), n);
            stall_evq_push(q, &ev[n]);
        }
        for (int i = 0; i < N; i++)
            ref[i] = &ev[i];
        qsort(ref, N, sizeof *ref, tevq_cmp_key);
        for (int i = 0; i < N; i++)
            cr_assert_eq(stall_evq_pop(q), ref[i], "round %d pop %d out of order", round, i);
        stall_evq_destroy(q);
    }
    gsl_rng_free(rng);
}

Test(evq, remove_event_not_in_queue_is_einval)
{
    stall_event a, b, c, never;
    tevq_init(&a, 1, 1);
    tevq_init(&b, 2, 2);
    tevq_init(&c, 3, 3);
    tevq_init(&never, 4, 4);
    stall_evq *q1 = stall_evq_create(0);
    stall_evq *q2 = stall_evq_create(0);
    stall_evq_push(q1, &a);
    stall_evq_push(q1, &c);
    stall_evq_push(q2, &b);

    int rc = stall_evq_remove(q1, &b);
    cr_assert_eq(rc, STALL_EINVAL, "removing another queue's event (same slot 0) gave %d", rc);
    cr_assert_eq(b.slot, 0, "refused removal changed the foreign event's slot to %zu", b.slot);
    rc = stall_evq_remove(q1, &never);
    cr_assert_eq(rc, STALL_EINVAL, "removing a never-queued event gave %d", rc);
    never.slot = 1;
    rc = stall_evq_remove(q1, &never);
    cr_assert_eq(rc, STALL_EINVAL, "an event with a forged in-range slot was removed (%d)", rc);
    rc = stall_evq_remove(q1, NULL);
    cr_assert_eq(rc, STALL_EINVAL, "removing NULL gave %d", rc);

    cr_assert_eq(stall_evq_pop(q1), &a, "pop gave the wrong event");
    rc = stall_evq_remove(q1, &a);
    cr_assert_eq(rc, STALL_EINVAL, "removing a popped event gave %d", rc);
    cr_assert_eq(stall_evq_remove(q1, &c), 0, "removing a queued event failed");
    rc = stall_evq_remove(q1, &c);
    cr_assert_eq(rc, STALL_EINVAL, "removing the same event twice gave %d", rc);

    cr_assert_eq(stall_evq_size(q1), 0, "q1 size %zu", stall_evq_size(q1));
    cr_assert_eq(stall_evq_size(q2), 1, "q2 size %zu after refused removals", stall_evq_size(q2));
    stall_evq_destroy(q1);
    stall_evq_destroy(q2);
}

Test(evq, million_random_events_match_sorted_reference, .timeout = 300)
{
    enum { N = 1000000 };
    stall_event *ev = stall_xcalloc(N, sizeof *ev);
    stall_event **live = stall_xcalloc(N, sizeof *live);
    size_t nlive = 0, removed = 0;
    stall_event *last_removed = NULL;
    gsl_rng *rng = tevq_rng(20240611);
    stall_evq *q = stall_evq_create(0);

    for (int i = 0; i < N; i++) {
        /* 2000 distinct times around zero: about 500 events share each. */
        tevq_init(&ev[i], (stall_time)gsl_rng_uniform_int(rng, 2000) - 1000, i);
        stall_evq_push(q, &ev[i]);
        if (i > 0)
            cr_assert_gt(ev[i].seq, ev[i - 1].seq, "push %d: seq %llu not above %llu", i,
                         (unsigned long long)ev[i].seq, (unsigned long long)ev[i - 1].seq);
        live[nlive++] = &ev[i];
        if (gsl_rng_uniform(rng) < 0.1) {
            size_t k = gsl_rng_uniform_int(rng, nlive);
            stall_event *victim = live[k];
            int rc = stall_evq_remove(q, victim);
            cr_assert_eq(rc, 0, "push %d: removing a live event gave %d", i, rc);
            live[k] = live[--nlive];
            removed++;
            if (last_removed) {
                rc = stall_evq_remove(q, last_removed);
                cr_assert_eq(rc, STALL_EINVAL, "push %d: second removal gave %d", i, rc);
            }
            last_removed = victim;
        }
    }
    cr_assert_eq(stall_evq_size(q), nlive, "size %zu, expected %zu live events", stall_evq_size(q),
                 nlive);
    cr_assert_gt(removed, (size_t)N / 20, "only %zu removals happened", removed);

    qsort(live, nlive, sizeof *live, tevq_cmp_key);
    for (size_t i = 0; i < nlive; i++) {
        stall_event *got = stall_evq_pop(q);
        cr_assert_not_null(got, "queue ran dry at pop %zu of %zu", i, nlive);
        if (got != live[i])
            cr_assert_fail("pop %zu: got (time %lld, seq %llu), reference (time %lld, seq %llu)", i,
                           (long long)got->time, (unsigned long long)got->seq,
                           (long long)live[i]->time, (unsigned long long)live[i]->seq);
    }
    cr_assert_null(stall_evq_pop(q), "queue not empty after %zu pops", nlive);

    stall_evq_destroy(q);
    gsl_rng_free(rng);
    free(live);
    free(ev);
}

/* Many events at one time (thousands of ranks released by one barrier) come
 * to the front bucket in the spilled bucket's order, which removals shuffle
 * (a removal moves the bucket's last entry into the hole): the front's sort
 * by seq was insertion sort, quadratic in them (a plan's 16,384-GPU run
 * spent most of its time there). Half of 200,000 such events, removed at
 * random, the rest pop in push order (1.6 s with insertion sort, 0.1 s with
 * the sort by seq). */
Test(evq, many_equal_times_after_removals_pop_in_push_order, .timeout = 30)
{
    enum { N = 200000 };
    stall_event *ev = stall_xcalloc(N + 1, sizeof *ev);
    int *live = stall_xcalloc(N, sizeof *live);
    char *gone = stall_xcalloc(N, 1);
    gsl_rng *rng = tevq_rng(16384);
    stall_evq *q = stall_evq_create(0);
    tevq_init(&ev[N], 0, N); /* the minimum, so the rest sit above bucket 0 */
    stall_evq_push(q, &ev[N]);
    for (int i = 0; i < N; i++) {
        tevq_init(&ev[i], 1000000, i);
        stall_evq_push(q, &ev[i]);
        live[i] = i;
    }
    for (int n = N; n > N / 2; n--) {
        size_t k = gsl_rng_uniform_int(rng, (unsigned long)n);
        int i = live[k];
        live[k] = live[n - 1];
        gone[i] = 1;
        cr_assert_eq(stall_evq_remove(q, &ev[i]), 0, "removing event %d failed", i);
    }
    cr_assert_eq(stall_evq_pop(q), &ev[N], "the minimum did not pop first");
    for (int i = 0; i < N; i++) {
        if (gone[i])
            continue;
        stall_event *got = stall_evq_pop(q);
        if (got != &ev[i])
            cr_assert_fail("expected event %d, got %lld", i, got ? (long long)got->b : -1LL);
    }
    cr_assert_null(stall_evq_pop(q), "events left after the last");
    stall_evq_destroy(q);
    gsl_rng_free(rng);
    free(gone);
    free(live);
    free(ev);
}
