/*
 * model_fast.c - the closed-loop model without the event engine, where
 * docs/model.md section 3's recurrence is exact and decides everything
 * (docs/model.md 4.5): no shared resources (cores = 0, no storage bandwidth,
 * no tiers), batches delivered in order (or W = 0), no pin thread, fetch
 * align none, one iteration per synchronisation, checkpoints of a fixed
 * write time. Start-up, persistent workers, hand-over, epoch gaps,
 * checkpoints, slow ranks and stragglers (a durations wrapper) are in.
 *
 * Per rank and epoch, batch j < P*W goes at the epoch start to worker
 * j mod W; the loop takes batch k at Y = max(Q, E(k)) + handover, with
 * Q = T(k-1) (the epoch start for k = 0), and hands batch k + P*W to the
 * same worker: S = max(E of the worker's previous batch, Y), E = S + D'.
 * With W = 0 the loop fetches batch k itself from Q: Y = Q + D' + handover.
 * T(k) = max_r (Y + C) + A(k) + the checkpoint's wait. That is O(1) per
 * rank-iteration, with no queue: the state is each rank's P*W slots (S, E)
 * and W workers' last E, kept as [slot][rank] so that one iteration walks
 * the ranks through memory in order.
 *
 * Why it equals the event engine: model.c's header shows that, without a
 * pin thread, out-of-order delivery or shared resources, no decision at an
 * instant depends on the order of the events at that instant (a take is at
 * max(Q, arrival) whichever comes first), so the engine computes this
 * recurrence; tests/test_model_fast.c holds the two equal record for record
 * on random configurations with ties. stats.events (the summary's events
 * column) is what the engine would dispatch: an EPOCH per epoch, a
 * FETCH_END per batch and rank, an ITER_END per iteration.
 *
 * One thread, whatever p->threads: the simulation is about a quarter of
 * a large run (the duration tables are most of the rest, and they are
 * drawn on -j threads, jobs/fill.c), and every way of putting it on two
 * threads measured slower on the 2-core VM: rank ranges meeting at a
 * barrier every iteration (an iteration's work per thread is a few
 * microseconds, about what the meeting costs there: 76 ms against 57 ms
 * for 1,024 ranks x 5,000 iterations), and a pipeline that computes on one
 * thread and delivers the records on the other (135-180 ms: the records'
 * arrays then cross between the cores' caches, 48 KB an iteration). The
 * tables may still be being filled behind the run instead (jobs/fill.c,
 * the fill overlapped): d->ready, when set, is called once per epoch start
 * and once per iteration with the last batch the iteration reads. On a
 * failure (a negative duration, or an iteration ending past the simulated
 * clock's limit) the run stops, after the records before
 * it, and returns an error; stall_model_run then runs the event engine,
 * which gives the error and its message, skipping those records (all
 * before the failure's point in the run: a refill's fetch or C(r,k) fails
 * at Y(r,k) >= T(k-1), A(k) at the barrier of k, a gap or an epoch's first
 * fetch after T of the epoch's last iteration).
 */
#include "stall/model.h"

#include <stdlib.h>
#include <string.h>

#include "model_state.h"
#include "stall/limits.h"

/* What an iteration's record needs besides the per-rank arrays. */
typedef struct fast_iter_out {
    int epoch;
    int64_t k;
    stall_time t0, q, a, ckw, ckwrite, t;
    model_part pt;
} fast_iter_out;

typedef struct model_fast {
    const stall_model_params *p;
    const stall_durations *d;
    stall_iter_fn on_iter;
    void *ctx;
    stall_time gap0;
    int g, wn, pw;
    stall_time *s_start, *s_end; /* [pw * g]: slot s of rank r at s * g + r */
    stall_time *free_at;         /* [wn * g]: E of worker w's last batch */
    /* [g]: the iteration under way, then its record's arrays */
    stall_time *y, *c, *stall, *start, *end;
    int64_t *batch;
    fast_iter_out out;
    stall__ckpt ck;
    int64_t delivered; /* records delivered */
    stall_time last_t;
} model_fast;

bool model_fast_on(const stall_model_params *p)
{
    bool storage = p->storage_mb_s > 0.0 && p->batch_mb > 0.0;
    return p->cores == 0 && !storage && !p->tiers && p->fetch_align == STALL_ALIGN_NONE &&
           p->accumulation <= 1 && p->pin == 0 && (p->in_order || p->workers == 0) &&
           !p->ckpt.store;
}

/* ---- the computing ---------------------------------------------------- */

/* Batch in slot `slot` handed out at `from` to its worker (free at
 * free_at[worker]): it starts when both are ready and takes dur. */
static inline void fast_hand_out(model_fast *F, size_t slot, size_t worker, stall_time from,
                                 stall_time dur)
{
    stall_time fa = F->free_at[worker];
    stall_time s = fa > from ? fa : from;
    F->s_start[slot] = s;
    F->s_end[slot] = s + dur;
    F->free_at[worker] = s + dur;
}

/* Epoch e starts at t0: each rank's first P*W batches go to its workers. */
static int fast_epoch(model_fast *F, int e, stall_time t0)
{
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    size_t g = (size_t)F->g;
    stall_time ready = t0;
    if (p->workers > 0 && (!p->persistent_workers || e == 0))
        ready += p->startup;
    for (int r = 0; r < F->g; r++) {
        stall_time late = d->late_start ? d->late_start(d->ctx, e, r) : 0;
        if (late < 0)
            return -1;
        for (int w = 0; w < F->wn; w++)
            F->free_at[(size_t)w * g + (size_t)r] = ready + late;
    }
    if (p->workers == 0)
        return 0;
    int64_t first = p->batches < F->pw ? p->batches : F->pw;
    if (d->ready)
        d->ready(d->ctx, e, first - 1);
    for (int64_t j = 0; j < first; j++) {
        size_t so = (size_t)j * g, wo = (size_t)(j % F->wn) * g;
        for (int r = 0; r < F->g; r++) {
            stall_time dur = d->fetch(d->ctx, e, r, j);
            if (dur < 0)
                return -1;
            fast_hand_out(F, so + (size_t)r, wo + (size_t)r, t0, dur);
            if (F->s_end[so + (size_t)r] > STALL_LIMIT_HORIZON_NS)
                return -1; /* the clock's limit, as in fast_loop */
        }
    }
    return 0;
}

/* Iteration k of epoch e, its ranks asking at q: their Y, C, S, E into
 * buffer b, the refills handed out, the partial sums and extremes. */
static int fast_iter(model_fast *F, int e, int64_t k, stall_time q, model_part *out)
{
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    size_t g = (size_t)F->g, o = 0;
    stall_time h = stall_model_handover(p, e);
    model_part acc = model_part_empty(INT64_MIN);
    model_part *pt = &acc;
    bool refill = p->workers > 0 && k + F->pw < p->batches;
    size_t so = p->workers > 0 ? (size_t)(k % F->pw) * g : 0;
    size_t wo = p->workers > 0 ? (size_t)(k % F->wn) * g : 0;
    if (d->ready)
        d->ready(d->ctx, e, refill ? k + F->pw : k);
    for (int r = 0; r < F->g; r++) {
        stall_time s0, e0;
        if (p->workers == 0) {
            /* The loop fetches batch k itself, from q. */
            stall_time dur = d->fetch(d->ctx, e, r, k);
            if (dur < 0)
                return -1;
            stall_time fa = F->free_at[(size_t)r];
            s0 = fa > q ? fa : q;
            e0 = s0 + dur;
            F->free_at[(size_t)r] = e0;
        } else {
            s0 = F->s_start[so + (size_t)r];
            e0 = F->s_end[so + (size_t)r];
        }
        stall_time y = (e0 > q ? e0 : q) + h;
        stall_time c = d->compute(d->ctx, e, r, k);
        if (c < 0)
            return -1;
        if (refill) {
            stall_time dur = d->fetch(d->ctx, e, r, k + F->pw);
            if (dur < 0)
                return -1;
            fast_hand_out(F, so + (size_t)r, wo + (size_t)r, y, dur);
            if (F->s_end[so + (size_t)r] > STALL_LIMIT_HORIZON_NS)
                return -1; /* the clock's limit, as below */
        }
        size_t at = o + (size_t)r;
        stall_time st = y - q, yc = y + c;
        F->y[at] = y;
        F->c[at] = c;
        F->stall[at] = st;
        F->start[at] = s0;
        F->end[at] = e0;
        F->batch[at] = k;
        model_part_add(pt, st, c, s0, e0, yc);
        pt->bar = yc > pt->bar ? yc : pt->bar;
    }
    *out = acc;
    return 0;
}

/* The record of the iteration just computed, delivered. */
static void fast_record(model_fast *F)
{
    size_t o = 0;
    const fast_iter_out *it = &F->out;
    const model_part *pt = &it->pt;
    stall_time bar = pt->bar;
    double wsum = model_part_wait_sum(pt, F->g, bar, F->y + o, F->c + o);
    stall_iter_record rec = {
        .epoch = it->epoch,
        .batch = it->k,
        .epoch_start = it->t0,
        .iter_end = it->t,
        .iter_time = it->t - it->q,
        .stall_max = pt->smax,
        .stall_min = pt->smin,
        .delay = pt->smax - pt->smin,
        .stall_train = pt->smax, /* one iteration per synchronisation */
        .wait_max = bar - pt->ycmin,
        .wait_mean_s = wsum / (double)F->g / 1e9,
        .compute_max = pt->cmax,
        .tail = it->a,
        .ckpt_wait = it->ckw,
        .ckpt_write = it->ckwrite,
        .fetch_spread = pt->fmax - pt->fmin,
        .start_spread = pt->s0max - pt->s0min,
        .stall = F->stall + o,
        .ready = F->y + o,
        .compute = F->c + o,
        .fetch_start = F->start + o,
        .fetch_end = F->end + o,
        .fetched = F->batch + o,
    };
    if (F->on_iter)
        F->on_iter(F->ctx, &rec);
    F->last_t = it->t;
    F->delivered++;
}

/* The whole run: 0, or -1 at the first negative duration. */
static int fast_loop(model_fast *F)
{
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    stall_time t0 = F->gap0, t = t0;
    for (int e = 0; e < p->epochs; e++) {
        if (e > 0) {
            stall_time gap = d->epoch_gap ? d->epoch_gap(d->ctx, e) : 0;
            if (gap < 0)
                return -1;
            t0 = t + gap;
        }
        if (fast_epoch(F, e, t0))
            return -1;
        stall_time q = t0;
        for (int64_t k = 0; k < p->batches; k++) {
            fast_iter_out *it = &F->out;
            if (fast_iter(F, e, k, q, &it->pt))
                return -1;
            stall_time bar = it->pt.bar;
            stall_time a = d->tail ? d->tail(d->ctx, e, k) : 0;
            if (a < 0)
                return -1;
            stall_time ckwrite = 0;
            stall_time ckw =
                stall__ckpt_after(&F->ck, (int64_t)e * p->batches + k, bar + a, true, &ckwrite);
            t = bar + a + ckw;
            /* Past the simulated clock's limit: stop before a later sum can
             * overflow (every time so far is <= t, a duration <= 1e6 s);
             * the engine then gives its error, as it does for a negative
             * duration (above). */
            if (t > STALL_LIMIT_HORIZON_NS)
                return -1;
            *it = (fast_iter_out){.epoch = e,
                                  .k = k,
                                  .t0 = t0,
                                  .q = q,
                                  .a = a,
                                  .ckw = ckw,
                                  .ckwrite = ckwrite,
                                  .t = t,
                                  .pt = it->pt};
            fast_record(F);
            q = t;
        }
    }
    return 0;
}

int model_fast_run(const stall_model_params *p, const stall_durations *d, stall_time gap0,
                   stall_iter_fn on_iter, void *ctx, stall_model_stats *stats, int64_t *delivered)
{
    model_fast F = {.p = p, .d = d, .on_iter = on_iter, .ctx = ctx, .gap0 = gap0, .g = p->ranks};
    F.wn = p->workers > 0 ? p->workers : 1;
    F.pw = p->workers > 0 ? p->workers * p->prefetch : 1;
    size_t g = (size_t)F.g;
    F.s_start = stall_xmalloc((size_t)F.pw * g * sizeof *F.s_start);
    F.s_end = stall_xmalloc((size_t)F.pw * g * sizeof *F.s_end);
    F.free_at = stall_xmalloc((size_t)F.wn * g * sizeof *F.free_at);
    F.y = stall_xmalloc(g * sizeof *F.y);
    F.c = stall_xmalloc(g * sizeof *F.c);
    F.stall = stall_xmalloc(g * sizeof *F.stall);
    F.start = stall_xmalloc(g * sizeof *F.start);
    F.end = stall_xmalloc(g * sizeof *F.end);
    F.batch = stall_xmalloc(g * sizeof *F.batch);
    stall__ckpt_init(&F.ck, &p->ckpt, p->ranks, p->gpus_per_node);
    int rc = fast_loop(&F) ? STALL_EINVAL : 0;
    if (rc == 0 && stats) {
        /* What the engine dispatches: an EPOCH per epoch, a FETCH_END per
         * batch handed out (each of a rank's N batches once per epoch) and
         * an ITER_END per iteration. */
        uint64_t ne = (uint64_t)p->epochs, nb = (uint64_t)p->batches;
        *stats = (stall_model_stats){
            .events = ne * (g * nb + nb + 1), .iterations = (int64_t)(ne * nb), .end = F.last_t};
    }
    *delivered = F.delivered;
    free(F.s_start);
    free(F.s_end);
    free(F.free_at);
    free(F.y);
    free(F.c);
    free(F.stall);
    free(F.start);
    free(F.end);
    free(F.batch);
    return rc;
}
