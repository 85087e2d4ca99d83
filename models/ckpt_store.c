/*
 * ckpt_store.c - checkpoints written to the storage tiers' store
 * ([checkpoint] target = store; docs/model.md 2.5): each rank's write is a
 * transfer of mb_per_rank MB on its node's link, in the same max-min fair
 * fluid as the DataLoader's reads (fluid.h, model_tier.c), so a write and
 * the reads slow each other. Sync: the loop waits until the last rank's
 * write left the fluid. Async: the loop waits for the previous checkpoint's
 * writes still in the fluid, then for the snapshot, then the writes join the
 * fluid and the loop goes on.
 */
#include <math.h>

#include "fluid.h"
#include "model_state.h"
#include "stall/limits.h"
#include "stall/storage.h"

int stall__ckpt_store_check(const stall_model_params *p, stall_err *err)
{
    const stall_ckpt_params *c = &p->ckpt;
    if (!c->store || !stall_ckpt_on(c))
        return 0;
    const stall_storage *s = &p->storage;
    if (!p->tiers || !(s->link_mb_s > 0 || s->global_mb_s > 0))
        return stall_err_set(err, STALL_ECONFIG,
                             "model: a checkpoint written to the store needs the storage tiers "
                             "with a link or global bandwidth");
    int per_node = p->gpus_per_node < p->ranks ? p->gpus_per_node : p->ranks;
    double t = 0;
    if (s->link_mb_s > 0)
        t = per_node * c->mb / s->link_mb_s;
    if (s->global_mb_s > 0)
        t = fmax(t, p->ranks * c->mb / s->global_mb_s);
    if (t > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: a checkpoint write to the store takes %g s alone, more than "
                             "the limit of %g s",
                             t, STALL_LIMIT_DURATION_S);
    return 0;
}

/* The write alone (no read in the fluid): the fullest node's ranks share its
 * link, all ranks the global bandwidth. */
static stall_time ckpt_store_alone(const model_state *st)
{
    const stall_storage *s = &st->p->storage;
    int gpn = st->p->gpus_per_node;
    int per_node = gpn < st->g ? gpn : st->g;
    double t = 0;
    if (s->link_mb_s > 0)
        t = per_node * st->ck.mb / s->link_mb_s;
    if (s->global_mb_s > 0)
        t = fmax(t, st->g * st->ck.mb / s->global_mb_s);
    return llround(t * 1e9);
}

int model_ckpt_store_after(model_state *st, int64_t i, stall_time t0, bool sync, stall_err *err)
{
    stall__ckpt *c = &st->ck;
    int slot = (int)(i % st->acc);
    st->ck_wait[slot] = 0;
    st->ck_write[slot] = 0;
    if (!stall__ckpt_due(c, (int64_t)st->epoch * st->p->batches + i, t0, sync))
        return model_at(st, t0, MODEL_EV_ITER_END, 0, i, err);
    c->pend_iter = i;
    c->pend_t0 = t0;
    if (c->async && c->inflight > 0) {
        c->pend = CKPT_PEND_PREV; /* a loop waits for the previous save's future */
        return 0;
    }
    stall_time first = c->first; /* the first save's set-up, before its bytes flow */
    c->first = 0;
    return model_at(st, t0 + (c->async ? c->snap : 0) + first, MODEL_EV_CKPT, 0, i, err);
}

int model_ckpt_store_start(model_state *st, int64_t i, stall_err *err)
{
    stall__ckpt *c = &st->ck;
    stall_time now = stall_engine_now(st->eng);
    int rc = 0;
    c->inflight = st->g;
    if (st->tier_fifo) {
        for (int r = 0; r < st->g && rc == 0; r++)
            rc =
                model_at(st, model_tier_fifo_end(st, r, c->mb), MODEL_EV_TIER_FIFO, -1 - r, 0, err);
    } else {
        for (int r = 0; r < st->g; r++)
            stall__fluid_add(st->fluid, now, r / st->p->gpus_per_node, c->mb, -1 - (int64_t)r);
        rc = model_tier_resched(st, err);
    }
    if (rc)
        return rc;
    if (!c->async) {
        c->pend = CKPT_PEND_OWN;
        return 0;
    }
    int slot = (int)(i % st->acc);
    st->ck_wait[slot] = now - c->pend_t0;
    if (c->alone == 0)
        c->alone = ckpt_store_alone(st);
    st->ck_write[slot] = c->alone > 0 ? c->alone : 1;
    c->pend = CKPT_PEND_NONE;
    return model_at(st, now, MODEL_EV_ITER_END, 0, i, err);
}

int model_ckpt_store_done(model_state *st, stall_err *err)
{
    stall__ckpt *c = &st->ck;
    if (--c->inflight > 0)
        return 0;
    stall_time now = stall_engine_now(st->eng);
    int pend = c->pend;
    c->pend = CKPT_PEND_NONE;
    if (pend == CKPT_PEND_OWN) {
        int slot = (int)(c->pend_iter % st->acc);
        st->ck_wait[slot] = now - c->pend_t0;
        st->ck_write[slot] = st->ck_wait[slot] > 0 ? st->ck_wait[slot] : 1;
        return model_at(st, now, MODEL_EV_ITER_END, 0, c->pend_iter, err);
    }
    if (pend == CKPT_PEND_PREV)
        return model_at(st, now + c->snap, MODEL_EV_CKPT, 0, c->pend_iter, err);
    return 0;
}
