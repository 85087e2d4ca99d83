/*
 * model_tier.c - the closed-loop model's storage tiers (stall/storage.h):
 * per epoch each node's cache hit fraction, and per fetch, after its
 * waiting part, the misses' latency (a plain delay) and their transfer
 * through the shared fluid (fluid.h), before the fetch's CPU part.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fluid.h"
#include "model_state.h"
#include "stall/storage.h"

void model_tier_init(model_state *st)
{
    const stall_storage *s = &st->p->storage;
    int gpn = st->p->gpus_per_node;
    st->tier_hit = stall_xcalloc((size_t)st->nodes, sizeof *st->tier_hit);
    st->tier_content = stall_xcalloc((size_t)st->nodes, sizeof *st->tier_content);
    st->tier_admit = stall_xcalloc((size_t)st->nodes, sizeof *st->tier_admit);
    for (int i = 0; i < st->nodes; i++) {
        int on = st->g - i * gpn < gpn ? st->g - i * gpn : gpn;
        double work = s->partitioned ? s->dataset_mb * on / st->g : s->dataset_mb;
        st->tier_content[i] = fmin(s->cache_mb, fmin(s->start_mb, work));
    }
    if (s->fit_rho >= 0 && s->fit_epochs > 0) {
        double *miss = stall_xcalloc((size_t)s->fit_epochs, sizeof *miss);
        stall_storage_fit_misses(s, miss);
        st->tier_fit = stall_xcalloc((size_t)s->fit_epochs + 1, sizeof *st->tier_fit);
        double sum = 0;
        for (int e = 0; e < s->fit_epochs; e++) {
            st->tier_fit[e] = llround(s->fit_rho * miss[e]);
            sum += miss[e];
        }
        st->tier_fit[s->fit_epochs] = llround(s->fit_rho * sum / s->fit_epochs);
        free(miss);
    }
    double n = floor(s->requests + 0.5);
    st->tier_nreq = n < 1 ? 1 : n > 1e6 ? 1000000 : (int32_t)n;
    if (s->fifo && (s->link_mb_s > 0 || s->global_mb_s > 0)) {
        st->tier_fifo = stall_xcalloc((size_t)st->nodes, sizeof *st->tier_fifo);
    } else if (s->link_mb_s > 0 || s->global_mb_s > 0) {
        st->fluid = stall_xcalloc(1, sizeof *st->fluid);
        stall__fluid_init(st->fluid, st->nodes, s->link_mb_s, s->global_mb_s);
    }
}

void model_tier_fini(model_state *st)
{
    free(st->tier_hit);
    free(st->tier_content);
    free(st->tier_admit);
    free(st->tier_fit);
    free(st->tier_fifo);
    if (st->fluid)
        stall__fluid_free(st->fluid);
    free(st->fluid);
}

/* Epoch e starts: the hit fraction of each node's reads, from what its
 * cache holds (stall_storage_step), and what it will admit this epoch. */
void model_tier_epoch(model_state *st)
{
    const stall_storage *s = &st->p->storage;
    int gpn = st->p->gpus_per_node;
    for (int i = 0; i < st->nodes; i++) {
        int on = st->g - i * gpn < gpn ? st->g - i * gpn : gpn;
        double work = s->partitioned ? s->dataset_mb * on / st->g : s->dataset_mb;
        double read = s->batch_mb * (double)st->p->batches * on;
        double before = st->tier_content[i];
        st->tier_hit[i] = stall_storage_step(s, work, read, &st->tier_content[i]);
        st->tier_admit[i] = st->tier_content[i] - before;
    }
}

/* The measured read taken out of a fetch of the current epoch that lasted
 * dur: the epoch's read in proportion to the fetch's length (the slow
 * fetches of a cold epoch are the ones whose reads were slow), so the
 * epoch's mean fetch loses exactly its read and none goes below 0. */
stall_time model_tier_read_out(const model_state *st, int r, int64_t batch, stall_time dur)
{
    const stall_storage *s = &st->p->storage;
    bool drawn = (s->read_ranks > 0 && r >= s->read_ranks) ||
                 (s->read_batches > 0 && batch >= s->read_batches);
    stall_time out;
    int e;
    if (st->tier_fit) {
        e = st->epoch < s->fit_epochs && !drawn ? st->epoch : -1;
        out = st->tier_fit[e >= 0 ? e : s->fit_epochs];
    } else if (s->read_out) {
        e = st->epoch < s->read_epochs && !drawn ? st->epoch : -1;
        out = e >= 0 ? s->read_out[e] : s->read_rest;
    } else {
        return 0;
    }
    if (!s->read_mean_s)
        return out < dur ? out : dur;
    double mean = 1e9 * (e >= 0 && e < s->read_epochs ? s->read_mean_s[e] : s->read_rest_mean_s);
    if (!(mean > 0) || out <= 0)
        return 0;
    return (stall_time)llround((double)dur * fmin(1.0, (double)out / mean));
}

int model_tier_resched(model_state *st, stall_err *err)
{
    stall__fluid *f = st->fluid;
    stall_time now = stall_engine_now(st->eng);
    if (f->event) {
        if (stall_engine_cancel(st->eng, f->event) != 0)
            return stall_err_set(err, STALL_EINTERNAL, "model: lost a storage departure event");
        f->event = NULL;
    }
    stall_time t = stall__fluid_next(f, now);
    if (t < 0)
        return 0;
    f->event = stall_engine_schedule(st->eng, t, MODEL_EV_TIER_DONE, 0, 0, 0, err);
    return f->event ? 0 : (err ? err->code : STALL_ECAUSAL);
}

/* SplitMix64's finaliser: the draws of a request are a pure function of
 * (epoch, rank, batch, request, what), so a run depends on its inputs alone. */
static uint64_t tier_mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static double tier_unit(const model_state *st, int r, int64_t batch, int32_t j, uint64_t what)
{
    uint64_t h = tier_mix((uint64_t)st->epoch);
    h = tier_mix(h ^ (uint64_t)r);
    h = tier_mix(h ^ (uint64_t)batch);
    h = tier_mix(h ^ ((uint64_t)j << 1 | what));
    return (double)(h >> 11) * 0x1.0p-53; /* [0, 1) */
}

/* The next requests of the fetch in slot s: each waits its share of the
 * fetch's waiting part; one that misses the cache (with probability 1 - h)
 * then waits its latency (exponential, mean latency, or constant) and transfers batch_mb
 * / requests MB. Hits cost nothing more: the warm fetch contains them. A
 * miss that the cache still has room for this epoch (tier_admit, the
 * epoch's c_{e+1} - c_e: the first misses that fit, as a cache that admits
 * while it has room) also costs its write, admit ns, taken before its
 * latency: the same time in the worker, the write's place within the fetch
 * moved ahead of its transfer. */
static int model_tier_next(model_state *st, int r, int32_t s, stall_err *err)
{
    const stall_storage *sto = &st->p->storage;
    model_slot *sl = &st->slots[(size_t)r * (size_t)st->pw + (size_t)s];
    int32_t n = st->tier_nreq;
    double miss = 1.0 - st->tier_hit[r / st->p->gpus_per_node];
    stall_time acc = 0;
    while (sl->tier_req < n) {
        int32_t j = sl->tier_req;
        acc +=
            (stall_time)((__int128)sl->tier_wait * (j + 1) / n - (__int128)sl->tier_wait * j / n);
        if (miss > 0 && tier_unit(st, r, sl->batch, j, 0) < miss) {
            stall_time lat = 0;
            if (sto->latency > 0 && sto->latency_constant)
                lat = sto->latency;
            else if (sto->latency > 0)
                lat = llround(-(double)sto->latency * log1p(-tier_unit(st, r, sl->batch, j, 1)));
            double mb = sto->batch_mb / n, *room = &st->tier_admit[r / st->p->gpus_per_node];
            if (sto->admit > 0 && *room >= mb * (1 - 1e-9)) {
                *room -= mb;
                lat += sto->admit;
            }
            return model_at(st, stall_engine_now(st->eng) + acc + lat, MODEL_EV_TIER_LAT, r, s,
                            err);
        }
        sl->tier_req++;
    }
    if (acc > 0)
        return model_at(st, stall_engine_now(st->eng) + acc, MODEL_EV_TIER_LAT, r, s, err);
    return model_after_read(st, r, s, err);
}

int model_tier_fetch(model_state *st, int r, int32_t s, stall_time wait, stall_err *err)
{
    model_slot *sl = &st->slots[(size_t)r * (size_t)st->pw + (size_t)s];
    sl->tier_wait = wait;
    sl->tier_req = 0;
    return model_tier_next(st, r, s, err);
}

/* A request's wait and latency are over: its transfer (or, past the last
 * request, the fetch's CPU part). */
int model_tier_step(model_state *st, int r, int32_t s, stall_err *err)
{
    model_slot *sl = &st->slots[(size_t)r * (size_t)st->pw + (size_t)s];
    if (sl->tier_req >= st->tier_nreq)
        return model_after_read(st, r, s, err);
    double mb = st->p->storage.batch_mb / st->tier_nreq;
    if (st->tier_fifo)
        return model_at(st, model_tier_fifo_end(st, r, mb), MODEL_EV_TIER_FIFO, r, s, err);
    if (!st->fluid) {
        sl->tier_req++;
        return model_tier_next(st, r, s, err);
    }
    stall__fluid_add(st->fluid, stall_engine_now(st->eng), r / st->p->gpus_per_node, mb,
                     (int64_t)r * st->pw + s);
    return model_tier_resched(st, err);
}

int model_tier_done(model_state *st, stall_err *err)
{
    stall__fluid *f = st->fluid;
    f->event = NULL; /* it is the event being handled */
    stall_time now = stall_engine_now(st->eng);
    int64_t id;
    while (stall__fluid_pop_done(f, now, &id)) {
        if (id < 0) { /* a checkpoint's write (ckpt_store.c) */
            int rc = model_ckpt_store_done(st, err);
            if (rc)
                return rc;
            continue;
        }
        int r = (int)(id / st->pw);
        int32_t s = (int32_t)(id % st->pw);
        st->slots[(size_t)r * (size_t)st->pw + (size_t)s].tier_req++;
        int rc = model_tier_next(st, r, s, err);
        if (rc)
            return rc;
    }
    return model_tier_resched(st, err);
}

/* The FIFO store: a transfer waits for those queued before it on its node's
 * link (or, with only a global bandwidth, on the one queue of all nodes),
 * then takes mb / bandwidth alone, rounded up to the ns. */
stall_time model_tier_fifo_end(model_state *st, int r, double mb)
{
    const stall_storage *s = &st->p->storage;
    bool link = s->link_mb_s > 0;
    stall_time *free_at = &st->tier_fifo[link ? r / st->p->gpus_per_node : 0];
    stall_time now = stall_engine_now(st->eng);
    stall_time start = *free_at > now ? *free_at : now;
    *free_at = start + (stall_time)ceil(mb / (link ? s->link_mb_s : s->global_mb_s) * 1e9);
    return *free_at;
}

int model_tier_fifo_done(model_state *st, int r, int32_t s, stall_err *err)
{
    if (r < 0)
        return model_ckpt_store_done(st, err);
    st->slots[(size_t)r * (size_t)st->pw + (size_t)s].tier_req++;
    return model_tier_next(st, r, s, err);
}
