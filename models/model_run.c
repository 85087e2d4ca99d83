/*
 * model_run.c - the closed-loop model's set-up and run (stall_model_run):
 * the state of model_state.h built from the parameters and durations, the
 * first events scheduled, the engine run to the end, the state freed.
 */
#include "stall/model.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"

#include "share.h"
#include "stall/engine.h"
#include "model_state.h"

static const stall_model_ops model_ops = {.name = "model", .handle = model_handle};

/* ---- set-up and the run -------------------------------------------------- */

void model_init(model_state *st, const stall_model_params *p, const stall_durations *d)
{
    st->p = p;
    st->d = d;
    st->g = p->ranks;
    st->wn = p->workers > 0 ? p->workers : 1;
    st->pf = p->workers > 0 ? p->prefetch : 1;
    st->pw = st->pf * st->wn;
    st->in_order = p->in_order || p->workers == 0;
    st->tier = p->tiers;
    st->shared = p->cores > 0 || (p->storage_mb_s > 0.0 && p->batch_mb > 0.0) || st->tier;
    size_t g = (size_t)st->g, pw = (size_t)st->pw;
    st->ranks = stall_xcalloc(g, sizeof *st->ranks);
    st->slots = stall_xcalloc(g * pw, sizeof *st->slots);
    st->workers = stall_xcalloc(g * (size_t)st->wn, sizeof *st->workers);
    st->pinq = stall_xcalloc(g * pw, sizeof *st->pinq);
    st->arrq = stall_xcalloc(g * pw, sizeof *st->arrq);
    st->wq = st->shared ? stall_xcalloc(g * pw, sizeof *st->wq) : NULL;
    if (p->fetch_align != STALL_ALIGN_NONE && st->g > 1) {
        /* The ranks hand out batch indices within one iteration of each
         * other, so pw + 2 rows serve every hand-out; a miss only costs a
         * recomputation. */
        st->nrows = st->pw + 2;
        st->row_epoch = stall_xcalloc((size_t)st->nrows, sizeof *st->row_epoch);
        st->row_batch = stall_xcalloc((size_t)st->nrows, sizeof *st->row_batch);
        st->row_d = stall_xcalloc((size_t)st->nrows * g, sizeof *st->row_d);
        for (int i = 0; i < st->nrows; i++)
            st->row_epoch[i] = -1;
    }
    st->acc = p->accumulation > 1 ? p->accumulation : 1;
    size_t ga = g * (size_t)st->acc;
    st->taken = stall_xcalloc((size_t)st->acc, sizeof *st->taken);
    st->bar_max = stall_xcalloc((size_t)st->acc, sizeof *st->bar_max);
    st->tail = stall_xcalloc((size_t)st->acc, sizeof *st->tail);
    st->ck_wait = stall_xcalloc((size_t)st->acc, sizeof *st->ck_wait);
    st->ck_write = stall_xcalloc((size_t)st->acc, sizeof *st->ck_write);
    stall__ckpt_init(&st->ck, &p->ckpt, p->ranks, p->gpus_per_node);
    st->it_q = stall_xcalloc(ga, sizeof *st->it_q);
    st->it_y = stall_xcalloc(ga, sizeof *st->it_y);
    st->it_c = stall_xcalloc(ga, sizeof *st->it_c);
    st->it_stall = stall_xcalloc(ga, sizeof *st->it_stall);
    st->it_start = stall_xcalloc(ga, sizeof *st->it_start);
    st->it_end = stall_xcalloc(ga, sizeof *st->it_end);
    st->it_batch = stall_xcalloc(ga, sizeof *st->it_batch);
    st->it_rest = stall_xcalloc(g, sizeof *st->it_rest);
    st->win_stall = stall_xcalloc(g, sizeof *st->win_stall);
    st->compute_cpu = p->cores > 0 && p->compute_cpu_share > 0.0;
    st->compute_id0 = (int64_t)st->g * st->pw;
    st->hand_id0 = st->compute_id0 + st->g;
    st->tail_id0 = st->hand_id0 + st->g;
    st->hand_slot = stall_xcalloc(g, sizeof *st->hand_slot);
    if (st->shared) {
        int gpn = p->gpus_per_node;
        st->nodes = (st->g + gpn - 1) / gpn;
        st->cpu = stall_xcalloc((size_t)st->nodes, sizeof *st->cpu);
        st->disk = stall_xcalloc((size_t)st->nodes, sizeof *st->disk);
        for (int n = 0; n < st->nodes; n++) {
            int on_node = st->g - n * gpn < gpn ? st->g - n * gpn : gpn;
            stall__ps_init(&st->cpu[n], p->cores > 0 ? p->cores : 1, on_node * (st->wn + 1));
            stall__ps_init(&st->disk[n], 1, on_node * st->wn);
        }
        if (p->storage_mb_s > 0.0 && p->batch_mb > 0.0 && !st->tier)
            st->disk_work = llround(p->batch_mb / p->storage_mb_s * 1e9);
        if (st->tier)
            model_tier_init(st);
    }
}

void model_fini(model_state *st)
{
    for (int n = 0; n < st->nodes; n++) {
        stall__ps_free(&st->cpu[n]);
        stall__ps_free(&st->disk[n]);
    }
    free(st->cpu);
    free(st->disk);
    if (st->tier)
        model_tier_fini(st);
    free(st->it_rest);
    free(st->hand_slot);
    free(st->ranks);
    free(st->slots);
    free(st->workers);
    free(st->pinq);
    free(st->arrq);
    free(st->wq);
    free(st->row_epoch);
    free(st->row_batch);
    free(st->row_d);
    free(st->taken);
    free(st->bar_max);
    free(st->tail);
    free(st->ck_wait);
    free(st->ck_write);
    free(st->it_q);
    free(st->it_y);
    free(st->it_c);
    free(st->it_stall);
    free(st->it_start);
    free(st->it_end);
    free(st->it_batch);
    free(st->win_stall);
}

/* Passes records on, but for the first `left`. */
typedef struct model_skip {
    stall_iter_fn on_iter;
    void *ctx;
    int64_t left;
} model_skip;

static void model_skip_iter(void *ctx, const stall_iter_record *rec)
{
    model_skip *k = ctx;
    if (k->left > 0)
        k->left--;
    else
        k->on_iter(k->ctx, rec);
}

/* fast: the closed form where it is exact (model_fast.c), else threads
 * where they qualify (model_par.c), else the engine on one thread. */
static int model_run(const stall_model_params *p, const stall_durations *d, stall_iter_fn on_iter,
                     void *ctx, stall_model_stats *stats, bool fast, stall_err *err)
{
    if (stats)
        *stats = (stall_model_stats){0};
    int rc = model_check(p, d, err);
    if (rc)
        return rc;
    stall_time gap0 = d->epoch_gap ? d->epoch_gap(d->ctx, 0) : 0;
    if (gap0 < 0)
        return stall_err_set(err, STALL_EINVAL,
                             "model: durations.epoch_gap(epoch 0) returned %" PRId64
                             " ns; durations must be >= 0",
                             gap0);
    stall__uneven uw;
    stall_durations ud;
    if (stall_uneven_on(&p->uneven)) {
        stall__uneven_wrap(&uw, &p->uneven, p->ranks, p->gpus_per_node, d, &ud);
        d = &ud;
    }
    /* The closed form or threads when p qualifies; should that run fail,
     * the serial run below says why, skipping the records already
     * delivered. */
    model_skip skip = {.on_iter = on_iter, .ctx = ctx};
    bool closed = fast && model_fast_on(p);
    if (closed) {
        /* The closed form asks in the order ready promises. */
        if (model_fast_run(p, d, gap0, on_iter, ctx, stats, &skip.left) == 0)
            return 0;
        if (skip.left > 0 && on_iter) {
            on_iter = model_skip_iter;
            ctx = &skip;
        }
    }
    /* The threads and the engine ask in their own order: everything first. */
    if (d->ready)
        d->ready(d->ctx, p->epochs - 1, p->batches - 1);
    if (!closed && model_par_on(p)) {
        if (model_par_run(p, d, gap0, on_iter, ctx, stats, &skip.left) == 0)
            return 0;
        if (skip.left > 0 && on_iter) {
            on_iter = model_skip_iter;
            ctx = &skip;
        }
    }
    model_state st = {0};
    model_init(&st, p, d);
    st.on_iter = on_iter;
    st.ctx = ctx;
    st.eng = stall_engine_create(&model_ops, &st, 0);
    rc = model_at(&st, gap0, MODEL_EV_EPOCH, 0, 0, err);
    if (rc == 0)
        rc = stall_engine_run(st.eng, STALL_TIME_MAX, err);
    if (rc == 0 && st.stats.iterations != (int64_t)p->epochs * p->batches)
        rc = stall_err_set(err, STALL_EINTERNAL,
                           "model: the run stopped after %" PRId64 " of %" PRId64
                           " iterations with no event left",
                           st.stats.iterations, (int64_t)p->epochs * p->batches);
    st.stats.events = stall_engine_dispatched(st.eng);
    if (stats)
        *stats = st.stats;
    stall_engine_destroy(st.eng);
    model_fini(&st);
    return rc;
}

int stall_model_run(const stall_model_params *p, const stall_durations *d, stall_iter_fn on_iter,
                    void *ctx, stall_model_stats *stats, stall_err *err)
{
    return model_run(p, d, on_iter, ctx, stats, true, err);
}

int stall__model_run_events(const stall_model_params *p, const stall_durations *d,
                            stall_iter_fn on_iter, void *ctx, stall_model_stats *stats,
                            stall_err *err)
{
    return model_run(p, d, on_iter, ctx, stats, false, err);
}
