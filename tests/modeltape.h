/*
 * What the model's equivalence suites share (test_model_fast.c: the
 * closed form against the event engine; test_model_par.c: threads against
 * one): durations drawn from a few equal values as a pure function of the
 * cell, with one negative where asked, and a tape of everything a run
 * delivers, as bytes, to compare two runs byte for byte.
 */
#ifndef STALL_TESTS_MODELTAPE_H
#define STALL_TESTS_MODELTAPE_H

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/model_int.h"
#include "stall/model.h"

#define MS INT64_C(1000000)

static inline uint64_t mix(uint64_t x)
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

static inline stall_time cell(const dur *d, uint64_t kind, int e, int r, int64_t k)
{
    uint64_t h = mix(d->salt ^ mix(kind ^ mix((uint64_t)e ^ mix((uint64_t)r ^ mix((uint64_t)k)))));
    return d->unit * (stall_time)(h % (uint64_t)d->levels);
}

static inline stall_time d_fetch(void *ctx, int e, int r, int64_t k)
{
    const dur *d = ctx;
    if (!d->bad_compute && e == d->bad_epoch && r == d->bad_rank && k == d->bad_batch)
        return -7;
    return cell(d, 1, e, r, k) + d->unit;
}

static inline stall_time d_compute(void *ctx, int e, int r, int64_t k)
{
    const dur *d = ctx;
    if (d->bad_compute && e == d->bad_epoch && r == d->bad_rank && k == d->bad_batch)
        return -7;
    return cell(d, 2, e, r, k);
}

static inline stall_time d_tail(void *ctx, int e, int64_t k)
{
    const dur *d = ctx;
    if (d->bad_other == 1 && e == d->bad_epoch && k == d->bad_batch)
        return -7;
    return cell(ctx, 3, e, 0, k) / 2;
}

/* A rank's late start (docs/model.md 2.4), in a third of the cases. */
static inline stall_time d_late(void *ctx, int e, int r)
{
    return 3 * cell(ctx, 5, e, r, 0);
}

static inline stall_time d_gap(void *ctx, int e)
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

static inline void put(tape *t, const void *p, size_t n)
{
    if (t->n + n > t->cap) {
        t->cap = (t->n + n) * 2;
        t->b = realloc(t->b, t->cap);
        cr_assert_not_null(t->b);
    }
    memcpy(t->b + t->n, p, n);
    t->n += n;
}

static inline void on_iter(void *ctx, const stall_iter_record *rec)
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

/* One run on the event engine (events) or the dispatching entry point,
 * its records, stats, return code and message on the tape. */
static inline void tape_run(const stall_model_params *p, const stall_durations *d, tape *t,
                            bool events)
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

#endif
