/*
 * uneven.c - uneven ranks in the closed-loop model (rules in stall/ckpt.h
 * and docs/model.md 2.6): slow ranks or nodes, and random stragglers, as a
 * wrapper of the run's durations.
 */
#include "stall/ckpt.h"

#include <inttypes.h>
#include <math.h>

#include "ckpt_int.h"

bool stall_uneven_on(const stall_uneven_params *u)
{
    return (u->slow > 0 && (u->compute_factor != 1.0 || u->fetch_factor != 1.0)) ||
           (u->straggler_fraction > 0.0 && u->straggler_factor != 1.0);
}

/* splitmix64's finaliser: a counter-based generator, so a cell's draw does
 * not depend on which cells were drawn before. */
static uint64_t uneven_mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

bool stall_uneven_straggles(const stall_uneven_params *u, int e, int r, int64_t k)
{
    if (!(u->straggler_fraction > 0.0))
        return false;
    int64_t win = k / (u->straggler_iters > 0 ? u->straggler_iters : 1);
    uint64_t h = uneven_mix(u->seed);
    h = uneven_mix(h ^ (uint64_t)(uint32_t)e);
    h = uneven_mix(h ^ (uint64_t)win);
    h = uneven_mix(h ^ (uint64_t)(uint32_t)r);
    double v = (double)(h >> 11) * 0x1.0p-53; /* uniform in [0, 1) */
    return v < u->straggler_fraction;
}

int stall__uneven_check(const stall_uneven_params *u, int ranks, int gpn, stall_err *err)
{
    int units = u->by_node ? (ranks + gpn - 1) / gpn : ranks;
    if (u->slow < 0 || u->slow > units)
        return stall_err_set(err, STALL_ECONFIG, "model: [ranks] slow = %d, but the run has %d %s",
                             u->slow, units, u->by_node ? "nodes" : "ranks");
    if (!(u->compute_factor > 0.0 && isfinite(u->compute_factor) && u->fetch_factor > 0.0 &&
          isfinite(u->fetch_factor) && u->straggler_factor > 0.0 && isfinite(u->straggler_factor)))
        return stall_err_set(err, STALL_ECONFIG, "model: speed factors must be finite and > 0");
    if (!(u->straggler_fraction >= 0.0 && u->straggler_fraction <= 1.0))
        return stall_err_set(err, STALL_ECONFIG, "model: straggler fraction %g not in [0, 1]",
                             u->straggler_fraction);
    if (u->straggler_iters < 1)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: straggler window of %" PRId64 " iterations, must be >= 1",
                             u->straggler_iters);
    return 0;
}

static stall_time uneven_scaled(stall_time v, double f)
{
    if (v < 0 || f == 1.0)
        return v;
    double x = (double)v * f;
    return x < 9.2e18 ? llround(x) : -1; /* past int64: a negative duration stops the run */
}

static stall_time uneven_fetch(void *ctx, int e, int r, int64_t k)
{
    const stall__uneven *w = ctx;
    stall_time v = w->inner.fetch(w->inner.ctx, e, r, k);
    return r >= w->first_slow ? uneven_scaled(v, w->u.fetch_factor) : v;
}

static stall_time uneven_compute(void *ctx, int e, int r, int64_t k)
{
    const stall__uneven *w = ctx;
    stall_time v = w->inner.compute(w->inner.ctx, e, r, k);
    double f = r >= w->first_slow ? w->u.compute_factor : 1.0;
    if (w->u.straggler_factor != 1.0 && stall_uneven_straggles(&w->u, e, r, k))
        f *= w->u.straggler_factor;
    return uneven_scaled(v, f);
}

static stall_time uneven_tail(void *ctx, int e, int64_t k)
{
    const stall__uneven *w = ctx;
    return w->inner.tail(w->inner.ctx, e, k);
}

static stall_time uneven_gap(void *ctx, int e)
{
    const stall__uneven *w = ctx;
    return w->inner.epoch_gap(w->inner.ctx, e);
}

static stall_time uneven_late(void *ctx, int e, int r)
{
    const stall__uneven *w = ctx;
    return w->inner.late_start(w->inner.ctx, e, r);
}

static void uneven_ready(void *ctx, int e, int64_t k)
{
    const stall__uneven *w = ctx;
    w->inner.ready(w->inner.ctx, e, k);
}

void stall__uneven_wrap(stall__uneven *w, const stall_uneven_params *u, int ranks, int gpn,
                        const stall_durations *inner, stall_durations *out)
{
    w->u = *u;
    w->inner = *inner;
    w->ranks = ranks;
    w->gpn = gpn;
    int slow = u->slow > 0 ? u->slow : 0;
    int first = u->by_node ? ((ranks + gpn - 1) / gpn - slow) * gpn : ranks - slow;
    w->first_slow = first > 0 ? first : 0;
    if (slow == 0)
        w->first_slow = ranks;
    *out = (stall_durations){.fetch = uneven_fetch,
                             .compute = uneven_compute,
                             .tail = inner->tail ? uneven_tail : NULL,
                             .epoch_gap = inner->epoch_gap ? uneven_gap : NULL,
                             .late_start = inner->late_start ? uneven_late : NULL,
                             .ready = inner->ready ? uneven_ready : NULL,
                             .ctx = w};
}
