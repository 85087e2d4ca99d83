/*
 * test_engine.c - the engine: causality, run bounds, hooks, cancel, errors,
 * pool growth and determinism.
 *
 * One small test model serves every test: it logs each event it handles and,
 * depending on its settings, fails, schedules follow-ups from a seeded GSL
 * generator, cancels events or re-enters the engine.
 */
#include "stall/engine.h"
#include "stall/limits.h"

#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct tengine_rec {
    stall_time time;
    int32_t type;
    int32_t a;
    int64_t b;
} tengine_rec;

typedef struct tengine_model {
    tengine_rec *log;
    size_t n, cap;
    /* Failure: on the fail_at-th event (1-based; 0 never) return fail_code,
     * with a message when fail_msg is set. */
    uint64_t fail_at;
    int fail_code;
    bool fail_msg;
    /* Follow-ups: while budget lasts, each event schedules 0 to 2 more. */
    gsl_rng *rng;
    int64_t budget;
    /* Event type 1 schedules a type 2 event at now + child_delay. */
    stall_time child_delay;
    /* Event type 3 cancels `victim` and then itself; results go to the rcs. */
    stall_event *victim;
    int cancel_victim_rc, cancel_self_rc;
    /* Event type 4 calls run from inside the handler. */
    int rerun_rc;
} tengine_model;

static void tengine_log(tengine_model *m, const stall_event *ev)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->log = stall_xrealloc(m->log, m->cap * sizeof *m->log);
    }
    m->log[m->n++] = (tengine_rec){.time = ev->time, .type = ev->type, .a = ev->a, .b = ev->b};
}

static int tengine_handle(stall_engine *eng, void *state, const stall_event *ev, stall_err *err)
{
    tengine_model *m = state;
    tengine_log(m, ev);
    cr_assert_eq(stall_engine_now(eng), ev->time, "handler sees now %lld for an event at %lld",
                 (long long)stall_engine_now(eng), (long long)ev->time);
    if (m->fail_at && stall_engine_dispatched(eng) + 1 == m->fail_at) {
        if (m->fail_msg)
            return stall_err_set(err, m->fail_code, "bad row %lld", (long long)ev->b);
        return m->fail_code;
    }
    if (ev->type == 1 &&
        !stall_engine_schedule(eng, ev->time + m->child_delay, 2, ev->a, ev->b, 0, err))
        return err->code;
    if (ev->type == 3) {
        m->cancel_victim_rc = stall_engine_cancel(eng, m->victim);
        /* The handler gets a const event; the cast only lets the test try the
         * forbidden cancel, which must be refused without touching it. */
        m->cancel_self_rc = stall_engine_cancel(eng, (stall_event *)ev);
    }
    if (ev->type == 4)
        m->rerun_rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    if (m->rng) {
        unsigned long k = gsl_rng_uniform_int(m->rng, 3);
        for (unsigned long i = 0; i < k && m->budget > 0; i++, m->budget--) {
            /* A quarter of the follow-ups land at now, to exercise ties. */
            stall_time delay = gsl_rng_uniform_int(m->rng, 4) == 0
                                   ? 0
                                   : (stall_time)gsl_rng_uniform_int(m->rng, 1000);
            if (!stall_engine_schedule(eng, ev->time + delay,
                                       (int32_t)gsl_rng_uniform_int(m->rng, 5),
                                       (int32_t)gsl_rng_uniform_int(m->rng, 16), ev->b + 1, 0, err))
                return err->code;
        }
    }
    return 0;
}

static const stall_model_ops tengine_ops = {.name = "tengine", .handle = tengine_handle};

static void tengine_free(tengine_model *m)
{
    free(m->log);
    if (m->rng)
        gsl_rng_free(m->rng);
}

static stall_event *tengine_at(stall_engine *eng, stall_time t, int32_t type, int64_t b)
{
    stall_err err = {0};
    stall_event *ev = stall_engine_schedule(eng, t, type, 0, b, 0, &err);
    cr_assert_not_null(ev, "scheduling at %lld failed: %s", (long long)t, err.msg);
    return ev;
}

Test(engine, schedule_in_past_is_causality_error)
{
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 100);
    cr_assert_eq(stall_engine_now(eng), 100, "clock starts at %lld, not 100",
                 (long long)stall_engine_now(eng));

    stall_err err = {0};
    stall_event *ev = stall_engine_schedule(eng, 99, 0, 0, 0, 0, &err);
    cr_assert_null(ev, "an event 1 ns in the past was accepted");
    cr_assert_eq(err.code, STALL_ECAUSAL, "error code %d, expected %d", err.code, STALL_ECAUSAL);
    cr_assert_not_null(strstr(err.msg, "99 ns"), "message does not name the time: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "100 ns"), "message does not name now: %s", err.msg);
    cr_assert_eq(stall_engine_pending(eng), 0, "refused event left %zu pending",
                 stall_engine_pending(eng));
    cr_assert_null(stall_engine_schedule(eng, INT64_MIN, 0, 0, 0, 0, NULL),
                   "a past event was accepted when err is NULL");

    /* Now itself is not the past. */
    tengine_at(eng, 100, 0, 1);
    /* A handler at 500 that schedules at 499 fails the run with ECAUSAL. */
    tengine_at(eng, 500, 1, 2);
    m.child_delay = -1;
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, STALL_ECAUSAL, "run returned %d, expected %d", rc, STALL_ECAUSAL);
    cr_assert_not_null(strstr(err.msg, "499 ns"), "message lacks the bad time: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "500 ns"), "message lacks the clock: %s", err.msg);
    cr_assert_eq(stall_engine_dispatched(eng), 2, "dispatched %llu, expected 2",
                 (unsigned long long)stall_engine_dispatched(eng));
    stall_engine_destroy(eng);
    tengine_free(&m);
}

enum { TENGINE_HOOK_A = 1, TENGINE_HOOK_B = 2, TENGINE_MODEL = 3 };

typedef struct tengine_trace {
    struct {
        int who;
        stall_time time, now;
        int32_t type;
    } rec[64];
    int n;
} tengine_trace;

typedef struct tengine_hook_ctx {
    tengine_trace *trace;
    int who;
} tengine_hook_ctx;

static void tengine_hook(void *ctx, const stall_engine *eng, const stall_event *ev)
{
    tengine_hook_ctx *h = ctx;
    tengine_trace *t = h->trace;
    cr_assert_lt(t->n, 64, "trace overflow");
    t->rec[t->n].who = h->who;
    t->rec[t->n].time = ev->time;
    t->rec[t->n].now = stall_engine_now(eng);
    t->rec[t->n].type = ev->type;
    t->n++;
}

Test(engine, hooks_see_every_event_in_order)
{
    tengine_model m = {0};
    tengine_trace trace = {0};
    tengine_hook_ctx ha = {&trace, TENGINE_HOOK_A}, hb = {&trace, TENGINE_HOOK_B};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    cr_assert_eq(stall_engine_add_hook(eng, tengine_hook, &ha), 0, "adding hook A failed");
    cr_assert_eq(stall_engine_add_hook(eng, tengine_hook, &hb), 0, "adding hook B failed");

    /* Type 1 at 10 adds a type 2 at 10 (child_delay 0): it fires after the
     * type 0 already queued at 10, and both hooks see it. */
    tengine_at(eng, 30, 0, 0);
    tengine_at(eng, 10, 1, 0);
    tengine_at(eng, 20, 0, 0);
    tengine_at(eng, 10, 0, 0);
    tengine_at(eng, 0, 0, 0);
    const stall_time want_time[] = {0, 10, 10, 10, 20, 30};
    const int32_t want_type[] = {0, 1, 0, 2, 0, 0};
    enum { NEV = 6 };

    int rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "run returned %d", rc);
    cr_assert_eq(trace.n, 2 * NEV, "hooks ran %d times, expected %d", trace.n, 2 * NEV);
    cr_assert_eq(m.n, NEV, "model saw %zu events, expected %d", m.n, NEV);
    for (int i = 0; i < NEV; i++) {
        for (int j = 0; j < 2; j++) {
            int k = 2 * i + j;
            cr_assert_eq(trace.rec[k].who, j + 1, "event %d: call %d came from %d", i, j,
                         trace.rec[k].who);
            cr_assert_eq(trace.rec[k].time, want_time[i], "event %d: hook saw time %lld, not %lld",
                         i, (long long)trace.rec[k].time, (long long)want_time[i]);
            cr_assert_eq(trace.rec[k].type, want_type[i], "event %d: hook saw type %d, not %d", i,
                         trace.rec[k].type, want_type[i]);
            cr_assert_eq(trace.rec[k].now, trace.rec[k].time,
                         "event %d: clock %lld in the hook, event at %lld", i,
                         (long long)trace.rec[k].now, (long long)trace.rec[k].time);
        }
        cr_assert_eq(m.log[i].time, want_time[i], "model event %d at %lld, not %lld", i,
                     (long long)m.log[i].time, (long long)want_time[i]);
        cr_assert_eq(m.log[i].type, want_type[i], "model event %d type %d, not %d", i,
                     m.log[i].type, want_type[i]);
    }
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, ninth_hook_is_einval)
{
    tengine_model m = {0};
    tengine_trace trace = {0};
    tengine_hook_ctx h = {&trace, TENGINE_HOOK_A};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    int rc = stall_engine_add_hook(eng, NULL, &h);
    cr_assert_eq(rc, STALL_EINVAL, "a NULL hook gave %d", rc);
    for (int i = 0; i < 8; i++) {
        rc = stall_engine_add_hook(eng, tengine_hook, &h);
        cr_assert_eq(rc, 0, "hook %d of 8 gave %d", i + 1, rc);
    }
    rc = stall_engine_add_hook(eng, tengine_hook, &h);
    cr_assert_eq(rc, STALL_EINVAL, "a ninth hook gave %d", rc);
    tengine_at(eng, 5, 0, 0);
    cr_assert_eq(stall_engine_run(eng, STALL_TIME_MAX, NULL), 0, "run failed");
    cr_assert_eq(trace.n, 8, "%d hook calls for one event, expected 8", trace.n);
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, run_until_stops_before_later_events)
{
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    tengine_at(eng, 30, 0, 3);
    tengine_at(eng, 10, 0, 1);
    tengine_at(eng, 20, 0, 2);

    int rc = stall_engine_run(eng, 20, NULL);
    cr_assert_eq(rc, 0, "run(20) returned %d", rc);
    cr_assert_eq(m.n, 2, "run(20) handled %zu events; the one at 20 must fire too", m.n);
    cr_assert_eq(stall_engine_pending(eng), 1, "%zu pending after run(20)",
                 stall_engine_pending(eng));
    cr_assert_eq(stall_engine_now(eng), 20, "clock %lld after run(20)",
                 (long long)stall_engine_now(eng));

    rc = stall_engine_run(eng, 29, NULL);
    cr_assert_eq(rc, 0, "run(29) returned %d", rc);
    cr_assert_eq(m.n, 2, "run(29) handled the event at 30");
    cr_assert_eq(stall_engine_now(eng), 20, "run(29) moved the clock to %lld",
                 (long long)stall_engine_now(eng));

    rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "final run returned %d", rc);
    cr_assert_eq(m.n, 3, "%zu events handled in all, expected 3", m.n);
    cr_assert_eq(m.log[2].b, 3, "last event id %lld, expected 3", (long long)m.log[2].b);
    cr_assert_eq(stall_engine_pending(eng), 0, "%zu left pending", stall_engine_pending(eng));
    cr_assert_eq(stall_engine_dispatched(eng), 3, "dispatched %llu",
                 (unsigned long long)stall_engine_dispatched(eng));
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, cancel_recycles)
{
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    tengine_at(eng, 10, 0, 1);
    stall_event *mid = tengine_at(eng, 20, 0, 2);
    tengine_at(eng, 30, 0, 3);
    int rc = stall_engine_cancel(eng, mid);
    cr_assert_eq(rc, 0, "cancelling a queued event gave %d", rc);
    cr_assert_eq(stall_engine_pending(eng), 2, "%zu pending after cancel",
                 stall_engine_pending(eng));
#ifndef STALL_POOL_MALLOC
    /* In the pooled build the cancelled event's memory stays valid, so a
     * second cancel is refused and the next schedule reuses it. (In the
     * malloc build the pointer is freed; ASan guards that path instead.) */
    rc = stall_engine_cancel(eng, mid);
    cr_assert_eq(rc, STALL_EINVAL, "cancelling twice gave %d", rc);
    stall_event *again = tengine_at(eng, 40, 0, 4);
    cr_assert_eq(again, mid, "schedule after cancel got %p, not the recycled %p", (void *)again,
                 (void *)mid);
    stall_engine_cancel(eng, again);
#endif
    rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "run returned %d", rc);
    cr_assert_eq(m.n, 2, "%zu events fired, expected 2", m.n);
    cr_assert_eq(m.log[0].b + m.log[1].b, 4, "events %lld and %lld fired, expected 1 and 3",
                 (long long)m.log[0].b, (long long)m.log[1].b);
    cr_assert_eq(stall_engine_dispatched(eng), 2, "dispatched %llu counts the cancelled event",
                 (unsigned long long)stall_engine_dispatched(eng));
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, cancel_foreign_or_current_event_is_einval)
{
    tengine_model m1 = {0}, m2 = {0};
    stall_engine *e1 = stall_engine_create(&tengine_ops, &m1, 0);
    stall_engine *e2 = stall_engine_create(&tengine_ops, &m2, 0);
    stall_event *foreign = tengine_at(e2, 5, 0, 9);
    int rc = stall_engine_cancel(e1, foreign);
    cr_assert_eq(rc, STALL_EINVAL, "cancelling another engine's event gave %d", rc);

    /* A handler may cancel a pending event but not the one it is handling. */
    m1.victim = tengine_at(e1, 20, 0, 2);
    tengine_at(e1, 10, 3, 1);
    m1.cancel_victim_rc = m1.cancel_self_rc = 1;
    rc = stall_engine_run(e1, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "run returned %d", rc);
    cr_assert_eq(m1.cancel_victim_rc, 0, "cancelling a pending event gave %d", m1.cancel_victim_rc);
    cr_assert_eq(m1.cancel_self_rc, STALL_EINVAL, "cancelling the current event gave %d",
                 m1.cancel_self_rc);
    cr_assert_eq(m1.n, 1, "%zu events fired; the cancelled one must not", m1.n);

    rc = stall_engine_run(e2, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "run of e2 returned %d", rc);
    cr_assert_eq(m2.n, 1, "the foreign event fired %zu times in its own engine", m2.n);
    stall_engine_destroy(e1);
    stall_engine_destroy(e2);
    tengine_free(&m1);
    tengine_free(&m2);
}

Test(engine, model_error_stops_run)
{
    tengine_model m = {.fail_at = 3, .fail_code = STALL_EPARSE, .fail_msg = true};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    for (int i = 1; i <= 10; i++)
        tengine_at(eng, i, 0, i);
    stall_err err = {0};
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, STALL_EPARSE, "run returned %d, expected %d", rc, STALL_EPARSE);
    cr_assert_eq(err.code, STALL_EPARSE, "err.code %d", err.code);
    cr_assert_str_eq(err.msg, "bad row 3", "the model's message became \"%s\"", err.msg);
    cr_assert_eq(stall_engine_dispatched(eng), 3, "dispatched %llu, expected 3",
                 (unsigned long long)stall_engine_dispatched(eng));
    cr_assert_eq(stall_engine_pending(eng), 7, "%zu pending, expected 7",
                 stall_engine_pending(eng));
    cr_assert_eq(stall_engine_now(eng), 3, "clock %lld after the failure",
                 (long long)stall_engine_now(eng));

    /* The run can resume once the model recovers. */
    m.fail_at = 0;
    rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, 0, "resumed run returned %d", rc);
    cr_assert_eq(m.n, 10, "%zu events handled in all, expected 10", m.n);
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, model_error_without_message_gets_one)
{
    tengine_model m = {.fail_at = 2, .fail_code = STALL_EIO};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    tengine_at(eng, 7, 0, 1);
    tengine_at(eng, 8, 5, 2);
    stall_err err = {0};
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, STALL_EIO, "run returned %d, expected %d", rc, STALL_EIO);
    cr_assert_not_null(strstr(err.msg, "tengine"), "message lacks the model: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "type 5 at 8 ns"), "message lacks the event: %s", err.msg);

    /* A positive return breaks the contract and is reported as internal. */
    m.fail_at = 3;
    m.fail_code = 1;
    tengine_at(eng, 9, 0, 3);
    rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, STALL_EINTERNAL, "a positive model return gave %d", rc);
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, time_edited_into_past_is_internal_error)
{
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    tengine_at(eng, 100, 0, 1);
    stall_event *ev = tengine_at(eng, 200, 0, 2);
    cr_assert_eq(stall_engine_run(eng, 150, NULL), 0, "run(150) failed");
    ev->time = 50;
    stall_err err = {0};
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, STALL_EINTERNAL, "run returned %d, expected %d", rc, STALL_EINTERNAL);
    cr_assert_not_null(strstr(err.msg, "50 ns"), "message lacks the event time: %s", err.msg);
    cr_assert_not_null(strstr(err.msg, "100 ns"), "message lacks the clock: %s", err.msg);
    cr_assert_eq(stall_engine_pending(eng), 1, "the bad event was dropped (%zu pending)",
                 stall_engine_pending(eng));
    cr_assert_eq(stall_engine_dispatched(eng), 1, "dispatched %llu",
                 (unsigned long long)stall_engine_dispatched(eng));
    cr_assert_eq(stall_engine_now(eng), 100, "clock moved to %lld",
                 (long long)stall_engine_now(eng));
    stall_engine_destroy(eng);
    tengine_free(&m);
}

Test(engine, run_inside_handler_is_einval)
{
    tengine_model m = {.rerun_rc = 1};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    tengine_at(eng, 1, 4, 1);
    tengine_at(eng, 2, 0, 2);
    int rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "outer run returned %d", rc);
    cr_assert_eq(m.rerun_rc, STALL_EINVAL, "nested run returned %d", m.rerun_rc);
    cr_assert_eq(m.n, 2, "%zu events handled, expected 2 (in order, once each)", m.n);
    cr_assert_eq(m.log[1].b, 2, "second event id %lld", (long long)m.log[1].b);
    stall_engine_destroy(eng);
    tengine_free(&m);
}

static int tengine_cmp_ptr(const void *x, const void *y)
{
    uintptr_t a = (uintptr_t) * (void *const *)x, b = (uintptr_t) * (void *const *)y;
    return (a > b) - (a < b);
}

/* More events than one slab holds; the second engine is destroyed with its
 * events still queued, which the sanitizer run (`make asan`, LeakSanitizer)
 * checks for leaks; tools/valgrind-cli.sh runs only the stallsim binary. */
Test(engine, pool_grows_past_one_slab)
{
    enum { N = 10000 };
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    stall_event **evs = stall_xcalloc(N, sizeof *evs);
    for (int i = 0; i < N; i++)
        evs[i] = tengine_at(eng, N - i, 0, N - i);
    qsort(evs, N, sizeof *evs, tengine_cmp_ptr);
    for (int i = 1; i < N; i++)
        cr_assert_neq(evs[i], evs[i - 1], "two live events share the address %p", (void *)evs[i]);
    int rc = stall_engine_run(eng, STALL_TIME_MAX, NULL);
    cr_assert_eq(rc, 0, "run returned %d", rc);
    cr_assert_eq(m.n, N, "%zu events fired, expected %d", m.n, N);
    for (int i = 0; i < N; i++)
        cr_assert_eq(m.log[i].b, i + 1, "event %d carries id %lld", i, (long long)m.log[i].b);
    stall_engine_destroy(eng);

    stall_engine *left = stall_engine_create(&tengine_ops, &m, 0);
    for (int i = 0; i < N; i++)
        tengine_at(left, i, 0, i);
    cr_assert_eq(stall_engine_pending(left), N, "%zu pending", stall_engine_pending(left));
    stall_engine_destroy(left);
    stall_engine_destroy(NULL);
    free(evs);
    tengine_free(&m);
}

/* Runs the random model from `seed` and returns its log. */
static tengine_model tengine_random_run(unsigned long seed)
{
    gsl_set_error_handler_off();
    tengine_model m = {.budget = 200000};
    m.rng = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(m.rng, "gsl_rng_alloc failed");
    gsl_rng_set(m.rng, seed);
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    for (int i = 0; i < 16; i++)
        tengine_at(eng, (stall_time)gsl_rng_uniform_int(m.rng, 10), i % 5, 0);
    stall_err err = {0};
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    cr_assert_eq(rc, 0, "seed %lu: run returned %d: %s", seed, rc, err.msg);
    stall_engine_destroy(eng);
    return m;
}

Test(engine, same_program_twice_is_identical)
{
    tengine_model x = tengine_random_run(12345);
    tengine_model y = tengine_random_run(12345);
    cr_assert_gt(x.n, 1000, "the random model ran only %zu events", x.n);
    cr_assert_eq(x.n, y.n, "first run handled %zu events, second %zu", x.n, y.n);
    for (size_t i = 0; i < x.n; i++) {
        const tengine_rec *p = &x.log[i], *q = &y.log[i];
        if (p->time != q->time || p->type != q->type || p->a != q->a || p->b != q->b)
            cr_assert_fail("event %zu differs: (%lld,%d,%d,%lld) vs (%lld,%d,%d,%lld)", i,
                           (long long)p->time, p->type, p->a, (long long)p->b, (long long)q->time,
                           q->type, q->a, (long long)q->b);
        if (i > 0)
            cr_assert_geq(p->time, x.log[i - 1].time, "event %zu at %lld after %lld", i,
                          (long long)p->time, (long long)x.log[i - 1].time);
    }

    /* The comparison can tell runs apart: another seed gives another log. */
    tengine_model z = tengine_random_run(54321);
    bool differs = z.n != x.n;
    for (size_t i = 0; !differs && i < x.n; i++)
        differs = z.log[i].time != x.log[i].time || z.log[i].type != x.log[i].type;
    cr_assert(differs, "seeds 12345 and 54321 produced the same %zu events", x.n);
    tengine_free(&x);
    tengine_free(&y);
    tengine_free(&z);
}

/* Issue 10: the simulated clock has a stated horizon; an event past it is
 * refused (a bad-input error, exit 2) rather than let times near INT64_MAX
 * wrap in the models' sums. */
Test(engine, event_past_the_horizon_is_refused)
{
    tengine_model m = {0};
    stall_engine *eng = stall_engine_create(&tengine_ops, &m, 0);
    stall_err err = {0};
    cr_assert_not_null(stall_engine_schedule(eng, STALL_LIMIT_HORIZON_NS, 0, 0, 0, 0, &err),
                       "an event at the horizon was refused: %s", err.msg);
    cr_assert_null(stall_engine_schedule(eng, STALL_LIMIT_HORIZON_NS + 1, 0, 0, 0, 0, &err));
    cr_assert_eq(err.code, STALL_ECONFIG);
    cr_assert_not_null(strstr(err.msg, "limit of 5000000000 s"), "%s", err.msg);
    cr_assert_null(stall_engine_schedule(eng, INT64_MAX, 0, 0, 0, 0, &err));
    stall_engine_destroy(eng);
}
