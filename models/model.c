/*
 * model.c - the closed-loop model: DataLoader workers, prefetch, pin memory,
 * in-order delivery and the DDP barrier of docs/model.md, as events on the stall
 * engine (the header states the rules).
 *
 * State is per rank: P*W slots (a slot holds one handed-out batch from hand-
 * out until the loop takes it; the refill reuses the slot of the batch just
 * taken, which is also the batch's worker, since batch k and k+P*W share a
 * worker, and out of order the only worker below P outstanding is the one
 * whose batch was taken), W workers, a pin heap and, out of order, a FIFO of
 * arrivals. Per iteration the ranks' Y, C, S, E sit in G-arrays. Nothing
 * grows with batches or epochs.
 *
 * Events: FETCH_END (or, with shared resources, the fetch's phases), PIN_END
 * when pin > 0, TAKE at Y when handover > 0 with shared resources (otherwise
 * Y is handled when it is decided), ITER_END once per iteration, EPOCH once
 * per epoch.
 *
 * Exactness without shared resources: a FETCH_END is scheduled when its batch
 * is handed out, and a rank hands batches out in index order, so a rank's
 * FETCH_ENDs at one instant fire in index order. That is the tie order of
 * docs/model.md's recurrence (arrival order; equal times: lower index first), so
 * every decision taken at the instant of an event (which batch the pin thread
 * takes next, which batch an out-of-order loop takes) matches the closed
 * form: any batch still to arrive at that instant was handed out later, so
 * its index is higher. The tests hold this against an independent
 * implementation of the recurrence.
 *
 * Shared resources: per node a CPU and a storage processor-sharing resource
 * (share.c), each with one pending departure event that is cancelled and
 * rescheduled when its job count changes.
 *
 * Complexity: O(log(queue)) per event, O(G) per iteration (the barrier and
 * the record), O(G) per batch index for fetch align avg/min (cached rows).
 */
#include "stall/model.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"

#include "cpushare.h"
#include "share.h"
#include "stall/engine.h"
#include "model_state.h"

/* ---- small helpers ----------------------------------------------------- */

static int model_negative(stall_err *err, const char *what, int epoch, int rank, int64_t batch,
                          stall_time v)
{
    return stall_err_set(err, STALL_EINVAL,
                         "model: durations.%s(epoch %d, rank %d, batch %" PRId64
                         ") returned %" PRId64 " ns; durations must be >= 0",
                         what, epoch, rank, batch, v);
}

int model_at(model_state *st, stall_time at, int32_t type, int32_t a, int64_t b, stall_err *err)
{
    return stall_engine_schedule(st->eng, at, type, a, b, 0, err)
               ? 0
               : (err ? err->code : STALL_ECAUSAL);
}

static stall_time model_now(const model_state *st)
{
    return stall_engine_now(st->eng);
}

static model_slot *model_slot_at(model_state *st, int r, int32_t s)
{
    return &st->slots[(size_t)r * (size_t)st->pw + (size_t)s];
}

static model_worker *model_worker_at(model_state *st, int r, int w)
{
    return &st->workers[(size_t)r * (size_t)st->wn + (size_t)w];
}

/* D'(r, j) of the current epoch. */
static int model_fetch_dur(model_state *st, int r, int64_t j, stall_time *out, stall_err *err)
{
    const stall_durations *d = st->d;
    if (st->nrows == 0) {
        stall_time v = d->fetch(d->ctx, st->epoch, r, j);
        if (v < 0)
            return model_negative(err, "fetch", st->epoch, r, j, v);
        *out = v;
        return 0;
    }
    int i = (int)(j % st->nrows);
    stall_time *row = st->row_d + (size_t)i * (size_t)st->g;
    if (st->row_epoch[i] != st->epoch || st->row_batch[i] != j) {
        for (int q = 0; q < st->g; q++) {
            stall_time v = d->fetch(d->ctx, st->epoch, q, j);
            if (v < 0) {
                st->row_epoch[i] = -1;
                return model_negative(err, "fetch", st->epoch, q, j, v);
            }
            row[q] = v;
        }
        stall_align_durations(st->p->fetch_align, row, st->g, row);
        st->row_epoch[i] = st->epoch;
        st->row_batch[i] = j;
    }
    *out = row[r];
    return 0;
}

/* ---- shared resources -------------------------------------------------- */

static stall__ps *model_ps(model_state *st, int node, int res)
{
    return res == MODEL_RES_CPU ? &st->cpu[node] : &st->disk[node];
}

/* Moves the resource's departure event to its next departure. */
int model_ps_resched(model_state *st, int node, int res, stall_err *err)
{
    stall__ps *ps = model_ps(st, node, res);
    stall_time now = model_now(st);
    if (ps->event) {
        if (stall_engine_cancel(st->eng, ps->event) != 0)
            return stall_err_set(err, STALL_EINTERNAL, "model: lost a departure event");
        ps->event = NULL;
    }
    stall_time t = stall__ps_next(ps, now);
    if (t < 0)
        return 0;
    ps->event = stall_engine_schedule(st->eng, t, MODEL_EV_PS_DONE, node, res, 0, err);
    return ps->event ? 0 : (err ? err->code : STALL_ECAUSAL);
}

static int model_ps_add(model_state *st, int r, int32_t s, int res, stall_time work, stall_err *err)
{
    int node = r / st->p->gpus_per_node;
    stall__ps_add(model_ps(st, node, res), model_now(st), work, (int64_t)r * st->pw + s);
    return model_ps_resched(st, node, res, err);
}

/* ---- the pipeline -------------------------------------------------------- */

static int model_take(model_state *st, int r, int32_t s, stall_err *err);
static int model_computed(model_state *st, int r, stall_time end, stall_err *err);
static int model_fetch_done(model_state *st, int r, int32_t s, stall_err *err);
static int model_worker_kick(model_state *st, int r, int w, stall_err *err);

/* Hands batch j to slot s (and so to worker s mod wn) at time `at`: now, or,
 * without shared resources, a known later time (the end of a hand-over). */
static int model_dispatch(model_state *st, int r, int32_t s, int64_t j, stall_time at,
                          stall_err *err)
{
    stall_time dur = 0;
    int rc = model_fetch_dur(st, r, j, &dur, err);
    if (rc)
        return rc;
    model_slot *sl = model_slot_at(st, r, s);
    sl->batch = j;
    sl->dur = dur;
    sl->arrival = -1;
    int w = s % st->wn;
    model_worker *wk = model_worker_at(st, r, w);
    if (!st->shared) {
        sl->start = wk->free_at > at ? wk->free_at : at;
        sl->end = sl->start + dur;
        wk->free_at = sl->end;
        return model_at(st, sl->end, MODEL_EV_FETCH_END, r, s, err);
    }
    sl->start = sl->end = -1;
    int32_t *q = st->wq + ((size_t)r * (size_t)st->wn + (size_t)w) * (size_t)st->pf;
    q[(wk->head + wk->len) % st->pf] = s;
    wk->len++;
    return model_worker_kick(st, r, w, err);
}

/* Shared path: a fetch's CPU phase, after its storage read. */
int model_after_read(model_state *st, int r, int32_t s, stall_err *err)
{
    model_slot *sl = model_slot_at(st, r, s);
    if (sl->cpu_work > 0)
        return model_ps_add(st, r, s, MODEL_RES_CPU, sl->cpu_work, err);
    return model_fetch_done(st, r, s, err);
}

/* Shared path: the storage read, after the waiting part. */
static int model_after_io(model_state *st, int r, int32_t s, stall_err *err)
{
    if (st->disk_work > 0)
        return model_ps_add(st, r, s, MODEL_RES_DISK, st->disk_work, err);
    return model_after_read(st, r, s, err);
}

/* Shared path: starts the worker's next batch if it is free and ready. */
static int model_worker_kick(model_state *st, int r, int w, stall_err *err)
{
    model_worker *wk = model_worker_at(st, r, w);
    if (wk->busy || wk->len == 0 || wk->ready_pending)
        return 0;
    stall_time now = model_now(st);
    if (wk->ready > now) {
        wk->ready_pending = true;
        return model_at(st, wk->ready, MODEL_EV_READY, r, w, err);
    }
    int32_t *q = st->wq + ((size_t)r * (size_t)st->wn + (size_t)w) * (size_t)st->pf;
    int32_t s = q[wk->head];
    wk->head = (wk->head + 1) % st->pf;
    wk->len--;
    wk->busy = true;
    model_slot *sl = model_slot_at(st, r, s);
    sl->start = now;
    /* Storage tiers: the measured read out first (the modelled one comes
     * with the fetch's requests), then the rest split as usual. */
    stall_time dur = st->tier ? sl->dur - model_tier_read_out(st, r, sl->batch, sl->dur) : sl->dur;
    dur = dur > 0 ? dur : 0;
    stall_time cpu = 0;
    if (st->p->cores > 0) {
        cpu = llround(st->p->cpu_share * (double)dur);
        if (cpu > dur)
            cpu = dur;
    }
    stall_time io = dur - cpu - model_cpu_fetch_wait(st, dur);
    io = io > 0 ? io : 0;
    /* The read is part of the measured waiting: only its excess under
     * sharing is added. */
    if (st->p->read_in_fetch)
        io = io > st->disk_work ? io - st->disk_work : 0;
    sl->cpu_work = llround((double)cpu * st->p->cpu_deflate);
    if (st->tier)
        return model_tier_fetch(st, r, s, io, err);
    if (io > 0)
        return model_at(st, now + io, MODEL_EV_IO_END, r, s, err);
    return model_after_io(st, r, s, err);
}

/* Pin heap on (E, batch index). */
static bool model_pin_less(model_state *st, int r, int32_t a, int32_t b)
{
    const model_slot *x = model_slot_at(st, r, a), *y = model_slot_at(st, r, b);
    return x->end < y->end || (x->end == y->end && x->batch < y->batch);
}

static void model_pin_push(model_state *st, int r, int32_t s)
{
    int32_t *h = st->pinq + (size_t)r * (size_t)st->pw;
    int32_t i = st->ranks[r].pin_n++;
    while (i > 0) {
        int32_t parent = (i - 1) / 2;
        if (!model_pin_less(st, r, s, h[parent]))
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = s;
}

static int32_t model_pin_pop(model_state *st, int r)
{
    int32_t *h = st->pinq + (size_t)r * (size_t)st->pw;
    int32_t top = h[0];
    int32_t n = --st->ranks[r].pin_n;
    int32_t last = h[n];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && model_pin_less(st, r, h[c + 1], h[c]))
            c++;
        if (!model_pin_less(st, r, h[c], last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (n > 0)
        h[i] = last;
    return top;
}

static int model_pin_next(model_state *st, int r, stall_err *err)
{
    int32_t s = model_pin_pop(st, r);
    st->ranks[r].pin_busy = true;
    return model_at(st, model_now(st) + st->p->pin, MODEL_EV_PIN_END, r, s, err);
}

/* Batch in slot s reached the loop's side (after pin). */
static int model_arrive(model_state *st, int r, int32_t s, stall_err *err)
{
    model_slot *sl = model_slot_at(st, r, s);
    model_rank *rk = &st->ranks[r];
    sl->arrival = model_now(st);
    if (st->in_order)
        return rk->waiting && sl->batch == rk->next_take ? model_take(st, r, s, err) : 0;
    int32_t *q = st->arrq + (size_t)r * (size_t)st->pw;
    q[(rk->arr_head + rk->arr_n) % st->pw] = s;
    rk->arr_n++;
    if (!rk->waiting)
        return 0;
    s = q[rk->arr_head];
    rk->arr_head = (rk->arr_head + 1) % st->pw;
    rk->arr_n--;
    return model_take(st, r, s, err);
}

static int model_fetch_done(model_state *st, int r, int32_t s, stall_err *err)
{
    model_slot *sl = model_slot_at(st, r, s);
    sl->end = model_now(st);
    int w = s % st->wn;
    if (st->shared)
        model_worker_at(st, r, w)->busy = false;
    int rc;
    if (st->p->pin == 0) {
        rc = model_arrive(st, r, s, err);
    } else {
        model_pin_push(st, r, s);
        rc = st->ranks[r].pin_busy ? 0 : model_pin_next(st, r, err);
    }
    /* The worker moves on after its batch was passed along, so that a
     * zero-length successor never overtakes it. */
    if (rc == 0 && st->shared)
        rc = model_worker_kick(st, r, w, err);
    return rc;
}

/* The loop of rank r asks for batch k at now (= Q). */
int model_request(model_state *st, int r, stall_err *err)
{
    model_rank *rk = &st->ranks[r];
    if (st->p->workers == 0) {
        rk->waiting = true;
        return model_dispatch(st, r, 0, rk->next_take, model_now(st), err);
    }
    if (st->in_order) {
        int32_t s = (int32_t)(rk->next_take % st->pw);
        model_slot *sl = model_slot_at(st, r, s);
        if (sl->batch == rk->next_take && sl->arrival >= 0)
            return model_take(st, r, s, err);
        rk->waiting = true;
        return 0;
    }
    if (rk->arr_n > 0) {
        int32_t s = st->arrq[(size_t)r * (size_t)st->pw + (size_t)rk->arr_head];
        rk->arr_head = (rk->arr_head + 1) % st->pw;
        rk->arr_n--;
        return model_take(st, r, s, err);
    }
    rk->waiting = true;
    return 0;
}

/* Y(r,k) = y: the loop holds the batch; refill, then the barrier. Called at
 * time y, or, without shared resources, when y is decided: the refill's
 * fetch end and the barrier are then known already, and nothing else looks
 * at the rank until T(k) >= y, so a TAKE event would add nothing. */
static int model_take_end(model_state *st, int r, int32_t s, stall_time y, stall_err *err)
{
    const stall_durations *d = st->d;
    model_rank *rk = &st->ranks[r];
    model_slot *sl = model_slot_at(st, r, s);
    int64_t i = rk->next_take;
    size_t at = (size_t)(i % st->acc) * (size_t)st->g + (size_t)r;
    stall_time c = d->compute(d->ctx, st->epoch, r, i);
    if (c < 0)
        return model_negative(err, "compute", st->epoch, r, i, c);
    st->it_y[at] = y;
    st->it_start[at] = sl->start;
    st->it_end[at] = sl->end;
    st->it_batch[at] = sl->batch;
    rk->next_take++;
    if (st->p->workers > 0 && rk->send < st->p->batches) {
        int rc = model_dispatch(st, r, s, rk->send++, y, err);
        if (rc)
            return rc;
    }
    if (st->compute_cpu) {
        /* y is now: the CPU part joins the node's cores, the rest follows. */
        stall_time cpu = llround(st->p->compute_cpu_share * (double)c);
        cpu = cpu < c ? cpu : c;
        stall_time rest = c - cpu - model_cpu_compute_wait(st, c);
        st->it_rest[r] = rest > 0 ? rest : 0;
        stall_time work = llround((double)cpu * st->p->cpu_deflate);
        if (work > 0) {
            int node = r / st->p->gpus_per_node;
            stall__ps_add(&st->cpu[node], y, work, st->compute_id0 + r);
            return model_ps_resched(st, node, MODEL_RES_CPU, err);
        }
        return model_at(st, y + st->it_rest[r], MODEL_EV_COMPUTE, r, 0, err);
    }
    return model_computed(st, r, y + c, err);
}

/* Iteration i ends with the ranks' gradient synchronisation: every acc-th
 * iteration and the epoch's last (DDP's no_sync skips the others). */
static bool model_sync(const model_state *st, int64_t i)
{
    return st->acc == 1 || (i + 1) % st->acc == 0 || i + 1 == st->p->batches;
}

/* Iteration i's tail ended at t0: a checkpoint after it (models/ckpt.c)
 * holds the loop, then the iteration ends. */
int model_tail_end(model_state *st, int64_t i, stall_time t0, bool sync, stall_err *err)
{
    if (st->ck.store)
        return model_ckpt_store_after(st, i, t0, sync, err);
    int slot = (int)(i % st->acc);
    st->ck_wait[slot] = stall__ckpt_after(&st->ck, (int64_t)st->epoch * st->p->batches + i, t0,
                                          sync, &st->ck_write[slot]);
    return model_at(st, t0 + st->ck_wait[slot], MODEL_EV_ITER_END, 0, i, err);
}

/* Rank r finished C(r,i) at `end`: the barrier, or under no_sync its next
 * request. */
static int model_computed(model_state *st, int r, stall_time end, stall_err *err)
{
    const stall_durations *d = st->d;
    int64_t i = st->ranks[r].next_take - 1;
    int slot = (int)(i % st->acc);
    size_t at = (size_t)slot * (size_t)st->g + (size_t)r;
    st->it_c[at] = end - st->it_y[at];
    if (end > st->bar_max[slot])
        st->bar_max[slot] = end;
    bool sync = model_sync(st, i);
    if (!sync) {
        int rc = model_at(st, end, MODEL_EV_REQUEST, r, i + 1, err);
        if (rc)
            return rc;
    }
    if (++st->taken[slot] < st->g)
        return 0;
    if (st->par)
        return model_par_barrier(st, i, err);
    stall_time a = 0;
    if (sync) {
        a = d->tail ? d->tail(d->ctx, st->epoch, i) : 0;
        if (a < 0)
            return model_negative(err, "tail", st->epoch, -1, i, a);
    }
    st->tail[slot] = a;
    if (sync && model_cpu_tail_on(st))
        return model_at(st, st->bar_max[slot], MODEL_EV_TAIL, 0, i, err);
    return model_tail_end(st, i, st->bar_max[slot] + a, sync, err);
}

static int model_take(model_state *st, int r, int32_t s, stall_err *err)
{
    st->ranks[r].waiting = false;
    if (model_cpu_handover_on(st))
        return model_cpu_take(st, r, s, err);
    stall_time h = stall_model_handover(st->p, st->epoch);
    stall_time y = model_now(st) + h;
    if (st->shared && h > 0)
        return model_at(st, y, MODEL_EV_TAKE, r, s, err);
    return model_take_end(st, r, s, y, err);
}

static int model_epoch_start(model_state *st, int e, stall_err *err)
{
    const stall_model_params *p = st->p;
    stall_time now = model_now(st);
    st->epoch = e;
    st->epoch_start = now;
    st->q = now;
    if (st->tier)
        model_tier_epoch(st);
    st->k = 0;
    for (int i = 0; i < st->acc; i++) {
        st->taken[i] = 0;
        st->bar_max[i] = INT64_MIN;
    }
    for (int r = 0; r < st->g; r++)
        st->it_q[r] = now;
    stall_time ready = now;
    if (p->workers > 0 && (!p->persistent_workers || e == 0))
        ready += p->startup;
    int64_t first = p->workers > 0 ? (p->batches < st->pw ? p->batches : st->pw) : 0;
    for (int r = 0; r < st->g; r++) {
        stall_time late = st->d->late_start ? st->d->late_start(st->d->ctx, e, r) : 0;
        if (late < 0)
            return model_negative(err, "late_start", e, r, 0, late);
        st->ranks[r] = (model_rank){.next_take = 0, .send = first};
        for (int w = 0; w < st->wn; w++)
            *model_worker_at(st, r, w) =
                (model_worker){.free_at = ready + late, .ready = ready + late};
        for (int32_t s = 0; s < st->pw; s++)
            *model_slot_at(st, r, s) = (model_slot){.batch = -1, .arrival = -1};
        for (int64_t j = 0; j < first; j++) {
            int rc = model_dispatch(st, r, (int32_t)j, j, now, err);
            if (rc)
                return rc;
        }
        int rc = model_request(st, r, err);
        if (rc)
            return rc;
    }
    return 0;
}

static int model_iter_end(model_state *st, stall_err *err)
{
    stall_time t = model_now(st);
    int slot = (int)(st->k % st->acc);
    size_t o = (size_t)slot * (size_t)st->g;
    bool sync = model_sync(st, st->k);
    stall_iter_record rec = {
        .epoch = st->epoch,
        .batch = st->k,
        .epoch_start = st->epoch_start,
        .iter_end = t,
        .iter_time = t - st->q,
        .tail = st->tail[slot],
        .ckpt_wait = st->ck_wait[slot],
        .ckpt_write = st->ck_write[slot],
        .stall = st->it_stall + o,
        .ready = st->it_y + o,
        .compute = st->it_c + o,
        .fetch_start = st->it_start + o,
        .fetch_end = st->it_end + o,
        .fetched = st->it_batch + o,
    };
    stall_time smin = INT64_MAX, smax = INT64_MIN, wmax = INT64_MIN, cmax = INT64_MIN;
    stall_time fmin = INT64_MAX, fmax = INT64_MIN, s0min = INT64_MAX, s0max = INT64_MIN;
    double wsum = 0.0;
    for (int r = 0; r < st->g; r++) {
        size_t at = o + (size_t)r;
        stall_time s = st->it_y[at] - st->it_q[at];
        st->it_stall[at] = s;
        st->win_stall[r] += s;
        smin = s < smin ? s : smin;
        smax = s > smax ? s : smax;
        /* Under no_sync nobody waits: each rank went on at its own Y + C. */
        stall_time w =
            sync ? t - st->tail[slot] - st->ck_wait[slot] - (st->it_y[at] + st->it_c[at]) : 0;
        wmax = w > wmax ? w : wmax;
        wsum += (double)w;
        cmax = st->it_c[at] > cmax ? st->it_c[at] : cmax;
        stall_time f = st->it_end[at] - st->it_start[at];
        fmin = f < fmin ? f : fmin;
        fmax = f > fmax ? f : fmax;
        s0min = st->it_start[at] < s0min ? st->it_start[at] : s0min;
        s0max = st->it_start[at] > s0max ? st->it_start[at] : s0max;
    }
    rec.stall_max = smax;
    /* The training stall reported: max_r stall(r,k) when every iteration
     * synchronises; under accumulation the ranks' Q differ, so the growth
     * of max_r (rank r's stall summed since the last synchronisation): a
     * window's rows then add up to the most one rank waited in it, which
     * its time contains (docs/model.md 2.2). */
    stall_time wmx = INT64_MIN;
    for (int r = 0; r < st->g; r++)
        wmx = st->win_stall[r] > wmx ? st->win_stall[r] : wmx;
    rec.stall_train = wmx - st->win_max;
    st->win_max = wmx;
    if (sync) {
        st->win_max = 0;
        memset(st->win_stall, 0, (size_t)st->g * sizeof *st->win_stall);
    }
    rec.stall_min = smin;
    rec.delay = smax - smin;
    rec.wait_max = wmax;
    rec.wait_mean_s = wsum / (double)st->g / 1e9;
    rec.compute_max = cmax;
    rec.fetch_spread = fmax - fmin;
    rec.start_spread = s0max - s0min;
    if (st->on_iter)
        st->on_iter(st->ctx, &rec);
    st->stats.iterations++;
    st->stats.end = t;

    return model_iter_advance(st, t, slot, sync, st->d, err);
}

int model_iter_advance(model_state *st, stall_time t, int slot, bool sync, const stall_durations *d,
                       stall_err *err)
{
    const stall_model_params *p = st->p;
    st->taken[slot] = 0;
    st->bar_max[slot] = INT64_MIN;
    if (st->k + 1 < p->batches) {
        st->k++;
        st->q = t;
        if (!sync)
            return 0; /* each rank asked at its own Y + C (MODEL_EV_REQUEST) */
        size_t next = (size_t)(st->k % st->acc) * (size_t)st->g;
        for (int r = 0; r < st->g; r++) {
            st->it_q[next + (size_t)r] = t;
            int rc = model_request(st, r, err);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (st->epoch + 1 >= p->epochs)
        return 0;
    int e = st->epoch + 1;
    stall_time gap = d->epoch_gap ? d->epoch_gap(d->ctx, e) : 0;
    if (gap < 0)
        return stall_err_set(err, STALL_EINVAL,
                             "model: durations.epoch_gap(epoch %d) returned %" PRId64
                             " ns; durations must be >= 0",
                             e, gap);
    return model_at(st, t + gap, MODEL_EV_EPOCH, e, 0, err);
}

static int model_ps_done(model_state *st, int node, int res, stall_err *err)
{
    stall__ps *ps = model_ps(st, node, res);
    ps->event = NULL; /* it is the event being handled */
    stall_time now = model_now(st);
    int64_t id;
    while (stall__ps_pop_done(ps, now, &id)) {
        if (id >= st->hand_id0) {
            int rc = model_cpu_done(st, id, err);
            if (rc)
                return rc;
            continue;
        }
        if (id >= st->compute_id0) {
            int r = (int)(id - st->compute_id0);
            int rc = st->it_rest[r] > 0
                         ? model_at(st, now + st->it_rest[r], MODEL_EV_COMPUTE, r, 0, err)
                         : model_computed(st, r, now, err);
            if (rc)
                return rc;
            continue;
        }
        int r = (int)(id / st->pw);
        int32_t s = (int32_t)(id % st->pw);
        int rc = res == MODEL_RES_CPU ? model_fetch_done(st, r, s, err)
                                      : model_after_read(st, r, s, err);
        if (rc)
            return rc;
    }
    return model_ps_resched(st, node, res, err);
}

int model_handle(stall_engine *eng, void *state, const stall_event *ev, stall_err *err)
{
    (void)eng;
    model_state *st = state;
    int r = ev->a;
    int32_t s = (int32_t)ev->b;
    switch (ev->type) {
    case MODEL_EV_EPOCH:
        return model_epoch_start(st, r, err);
    case MODEL_EV_FETCH_END:
        return model_fetch_done(st, r, s, err);
    case MODEL_EV_PIN_END: {
        st->ranks[r].pin_busy = false;
        int rc = st->ranks[r].pin_n > 0 ? model_pin_next(st, r, err) : 0;
        return rc ? rc : model_arrive(st, r, s, err);
    }
    case MODEL_EV_TAKE:
        return model_take_end(st, r, s, model_now(st), err);
    case MODEL_EV_ITER_END:
        return st->par ? model_par_iter_end(st, ev, err) : model_iter_end(st, err);
    case MODEL_EV_READY:
        model_worker_at(st, r, s)->ready_pending = false;
        return model_worker_kick(st, r, s, err);
    case MODEL_EV_IO_END:
        return model_after_io(st, r, s, err);
    case MODEL_EV_PS_DONE:
        return model_ps_done(st, r, s, err);
    case MODEL_EV_COMPUTE:
        return model_computed(st, r, model_now(st), err);
    case MODEL_EV_TIER_LAT:
        return model_tier_step(st, r, s, err);
    case MODEL_EV_TIER_DONE:
        return model_tier_done(st, err);
    case MODEL_EV_TAIL:
        return model_cpu_tail_start(st, ev->b, err);
    case MODEL_EV_CKPT:
        return model_ckpt_store_start(st, ev->b, err);
    case MODEL_EV_TIER_FIFO:
        return model_tier_fifo_done(st, r, s, err);
    case MODEL_EV_REQUEST: {
        size_t at = (size_t)(st->ranks[r].next_take % st->acc) * (size_t)st->g + (size_t)r;
        st->it_q[at] = model_now(st);
        return model_request(st, r, err);
    }
    default:
        return stall_err_set(err, STALL_EINTERNAL, "model: unknown event type %" PRId32, ev->type);
    }
}
