/*
 * model_par.c - one model run on several threads (docs/model.md 4.5):
 * the ranks split by whole nodes into groups, each group its own
 * model state and engine, the groups meeting at each iteration's barrier.
 *
 * Why it is exact: without shared resources (no cores, no storage bandwidth,
 * no tiers), fetch align none and one iteration per synchronisation, a
 * rank's events touch only that rank's state, and the ranks meet only in
 * the barrier: T(k) = max_r (Y + C) + A(k) + the checkpoint's wait. Every
 * duration is a pure function of (epoch, rank, batch), a rank's own events
 * keep their relative order (they are pushed in the same order as in one
 * queue), and the decisions at one instant do not depend on how one rank's
 * events interleave with other ranks' events or with the release at T(k)
 * (model.c's header: the tie order is the recurrence's). So each group's
 * engine gives its ranks the serial run's values, and only the record needs
 * assembling: the per-rank arrays are shared (each group writes its ranks'
 * slice), the per-rank sums and extremes are taken per group and combined.
 *
 * Protocol, per iteration n of the run (epoch * N + k): when a group's last
 * rank has computed (model_computed, in the handler of that event) the
 * group publishes its partials and arrives at a spin barrier, handles its
 * own events up to its own max(Y + C) (a lower bound of T(k); an ITER_END
 * with a = 1 there) and waits; then every group computes T(k) alike (A and
 * the epoch gap are pure; each group keeps its own copy of the checkpoint
 * state, fed the same sequence), schedules its own ITER_END at T(k) and
 * goes on. Group 0's thread builds record n and
 * delivers record n - 1: by then every group has passed T(n - 1) without a
 * failure, which is when the serial run delivers it. The arrays rotate over
 * three buffers so that record n - 1 stays intact while the others write
 * iteration n + 1. On any failure every thread stops, and the caller reruns
 * serially (skipping the records delivered): errors and their messages are
 * the serial run's.
 *
 * wait_mean_s is a sum of doubles in rank order; the groups sum integers,
 * which gives the same double when the sum is below 2^53 ns (104 days of
 * waits in one iteration); else group 0 sums the arrays in rank order.
 */
#include "stall/model.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stall/engine.h"
#include "model_state.h"

typedef struct model_par model_par;

typedef struct model_par_group {
    model_par *par;
    int id, r0, gl;
    stall_model_params p; /* the global parameters with ranks = gl */
    stall_durations d;    /* the global durations at rank r0 + r */
    model_state st;
    stall__ckpt ck; /* the run's checkpoints, fed as every group feeds its own */
    int64_t n;      /* iterations of the run ended here */
    unsigned gen;   /* the barrier generation arrived at */
    int rc;
    stall_err err;
    pthread_t th;
} model_par_group;

struct model_par {
    const stall_model_params *p;
    const stall_durations *d;
    stall_iter_fn on_iter;
    void *ctx;
    int nt, g;
    /* [3 * g]: buffer b of iteration n = n % 3 */
    stall_time *q, *y, *c, *stall, *start, *end;
    int64_t *batch;
    model_part *part; /* [2 * nt]: iteration n in row n % 2 */
    atomic_uint gen;
    atomic_int count;
    atomic_int abort;
    /* group 0's thread only */
    stall_iter_record pend; /* built, not yet delivered */
    bool have;
    int64_t delivered;
    stall_time last_t; /* T of the last iteration built */
    model_par_group *grp;
};

bool model_par_on(const stall_model_params *p)
{
    int nodes = (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node;
    bool storage = p->storage_mb_s > 0.0 && p->batch_mb > 0.0;
    return p->threads > 1 && nodes > 1 && p->cores == 0 && !storage && !p->tiers &&
           p->fetch_align == STALL_ALIGN_NONE && p->accumulation <= 1;
}

/* ---- the groups' durations: the global callbacks at the global rank ---- */

static stall_time par_fetch(void *ctx, int e, int r, int64_t k)
{
    const model_par_group *G = ctx;
    return G->par->d->fetch(G->par->d->ctx, e, r + G->r0, k);
}

static stall_time par_compute(void *ctx, int e, int r, int64_t k)
{
    const model_par_group *G = ctx;
    return G->par->d->compute(G->par->d->ctx, e, r + G->r0, k);
}

static stall_time par_late(void *ctx, int e, int r)
{
    const model_par_group *G = ctx;
    return G->par->d->late_start(G->par->d->ctx, e, r + G->r0);
}

/* ---- the barrier -------------------------------------------------------- */

#define PAR_SPIN 4096

static inline void par_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The barrier in two halves: a group arrives when its last rank has
 * computed, and waits only when its clock reaches its own max(Y + C) (a
 * lower bound of T), handling its earlier events in between. Returns the
 * generation to wait for the end of. */
static unsigned par_arrive(model_par *P)
{
    unsigned gen = atomic_load_explicit(&P->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&P->count, 1, memory_order_acq_rel) == P->nt - 1) {
        atomic_store_explicit(&P->count, 0, memory_order_relaxed);
        atomic_store_explicit(&P->gen, gen + 1, memory_order_release);
    }
    return gen;
}

/* Returns 0 when every group arrived, -1 when one failed. */
static int par_wait(model_par *P, unsigned gen)
{
    for (unsigned spin = 0; atomic_load_explicit(&P->gen, memory_order_acquire) == gen; spin++) {
        if (atomic_load_explicit(&P->abort, memory_order_relaxed))
            return -1;
        /* Spin a while (a few microseconds: the groups' iterations take
         * about as long), then give the core away (more threads than
         * cores). */
        if (spin >= PAR_SPIN)
            sched_yield();
        else
            par_relax();
    }
    return 0;
}

/* Points the group's per-iteration arrays at buffer b. */
static void par_point(model_par_group *G, int b)
{
    const model_par *P = G->par;
    size_t o = (size_t)b * (size_t)P->g + (size_t)G->r0;
    model_state *st = &G->st;
    st->it_q = P->q + o;
    st->it_y = P->y + o;
    st->it_c = P->c + o;
    st->it_stall = P->stall + o;
    st->it_start = P->start + o;
    st->it_end = P->end + o;
    st->it_batch = P->batch + o;
}

/* The group's sums and extremes of iteration n (its ranks' slice). */
static model_part model_partial(model_par_group *G)
{
    model_state *st = &G->st;
    model_part pt = model_part_empty(st->bar_max[0]);
    for (int r = 0; r < G->gl; r++) {
        stall_time s = st->it_y[r] - st->it_q[r];
        st->it_stall[r] = s;
        model_part_add(&pt, s, st->it_c[r], st->it_start[r], st->it_end[r],
                       st->it_y[r] + st->it_c[r]);
    }
    return pt;
}

/* Group 0's thread: delivers record n - 1 and builds record n. */
static void par_record(model_par *P, int64_t n, int64_t k, stall_time bar, stall_time a,
                       stall_time ckw, stall_time ckwrite, stall_time t)
{
    const model_state *st0 = &P->grp[0].st;
    if (P->have && P->on_iter)
        P->on_iter(P->ctx, &P->pend);
    P->delivered += P->have;
    const model_part *pt = P->part + (size_t)(n % 2) * (size_t)P->nt;
    model_part all = pt[0];
    for (int i = 1; i < P->nt; i++)
        model_part_merge(&all, &pt[i]);
    size_t o = (size_t)(n % 3) * (size_t)P->g;
    double wsum = model_part_wait_sum(&all, P->g, bar, P->y + o, P->c + o);
    stall_time q = k == 0 ? st0->epoch_start : P->last_t;
    P->pend = (stall_iter_record){
        .epoch = st0->epoch,
        .batch = k,
        .epoch_start = st0->epoch_start,
        .iter_end = t,
        .iter_time = t - q,
        .stall_max = all.smax,
        .stall_min = all.smin,
        .delay = all.smax - all.smin,
        /* one iteration per synchronisation: the growth of max_r of the
         * window's stall is this iteration's max (model.c) */
        .stall_train = all.smax,
        .wait_max = bar - all.ycmin,
        .wait_mean_s = wsum / (double)P->g / 1e9,
        .compute_max = all.cmax,
        .tail = a,
        .ckpt_wait = ckw,
        .ckpt_write = ckwrite,
        .fetch_spread = all.fmax - all.fmin,
        .start_spread = all.s0max - all.s0min,
        .stall = P->stall + o,
        .ready = P->y + o,
        .compute = P->c + o,
        .fetch_start = P->start + o,
        .fetch_end = P->end + o,
        .fetched = P->batch + o,
    };
    P->have = true;
    P->last_t = t;
}

/* In the handler of the event that completed the group's barrier of
 * iteration i: publish, arrive, and meet the others at max(Y + C) of the
 * group (an ITER_END with a = 1, model_par_iter_end). */
int model_par_barrier(model_state *st, int64_t i, stall_err *err)
{
    model_par_group *G = st->par;
    model_par *P = G->par;
    int64_t n = G->n;
    P->part[(size_t)(n % 2) * (size_t)P->nt + (size_t)G->id] = model_partial(G);
    par_point(G, (int)((n + 1) % 3));
    G->gen = par_arrive(P);
    return model_at(st, st->bar_max[0], MODEL_EV_ITER_END, 1, i, err);
}

/* The meeting: every group arrived; T(i) follows, alike in every group. */
static int par_meet(model_state *st, int64_t i, stall_err *err)
{
    model_par_group *G = st->par;
    model_par *P = G->par;
    int64_t n = G->n++;
    if (par_wait(P, G->gen))
        return stall_err_set(err, STALL_EINTERNAL, "model: another thread failed");
    const model_part *pt = P->part + (size_t)(n % 2) * (size_t)P->nt;
    stall_time bar = pt[0].bar;
    for (int j = 1; j < P->nt; j++)
        bar = pt[j].bar > bar ? pt[j].bar : bar;
    const stall_durations *d = P->d;
    stall_time a = d->tail ? d->tail(d->ctx, st->epoch, i) : 0;
    if (a < 0)
        return stall_err_set(err, STALL_EINVAL, "model: negative tail");
    stall_time ckwrite = 0;
    stall_time ckw =
        stall__ckpt_after(&G->ck, (int64_t)st->epoch * st->p->batches + i, bar + a, true, &ckwrite);
    stall_time t = bar + a + ckw;
    if (G->id == 0)
        par_record(P, n, i, bar, a, ckw, ckwrite, t);
    return model_at(st, t, MODEL_EV_ITER_END, 0, i, err);
}

/* The group's ITER_END at T(k) (a = 0): its ranks ask for k + 1, or the
 * next epoch is scheduled (model_iter_end without the record); a = 1: the
 * meeting of iteration b. */
int model_par_iter_end(model_state *st, const stall_event *ev, stall_err *err)
{
    if (ev->a == 1)
        return par_meet(st, ev->b, err);
    /* One iteration per synchronisation here (accumulation 1): slot 0. */
    return model_iter_advance(st, stall_engine_now(st->eng), 0, true, st->par->par->d, err);
}

/* ---- the run ------------------------------------------------------------ */

static const stall_model_ops par_ops = {.name = "model", .handle = model_handle};

static void *par_thread(void *arg)
{
    model_par_group *G = arg;
    G->rc = stall_engine_run(G->st.eng, STALL_TIME_MAX, &G->err);
    if (G->rc)
        atomic_store(&G->par->abort, 1);
    return NULL;
}

static void par_free(model_par *P, int made)
{
    for (int t = 0; t < made; t++) {
        model_par_group *G = &P->grp[t];
        stall_engine_destroy(G->st.eng);
        G->st.it_q = G->st.it_y = G->st.it_c = G->st.it_stall = NULL;
        G->st.it_start = G->st.it_end = NULL;
        G->st.it_batch = NULL;
        model_fini(&G->st);
    }
    free(P->grp);
    free(P->q);
    free(P->y);
    free(P->c);
    free(P->stall);
    free(P->start);
    free(P->end);
    free(P->batch);
    free(P->part);
}

int model_par_run(const stall_model_params *p, const stall_durations *d, stall_time gap0,
                  stall_iter_fn on_iter, void *ctx, stall_model_stats *stats, int64_t *delivered)
{
    *delivered = 0;
    int gpn = p->gpus_per_node;
    int nodes = (p->ranks + gpn - 1) / gpn;
    model_par P = {.p = p, .d = d, .on_iter = on_iter, .ctx = ctx, .g = p->ranks};
    P.nt = p->threads < nodes ? p->threads : nodes;
    size_t n3 = 3 * (size_t)P.g;
    P.q = stall_xcalloc(n3, sizeof *P.q);
    P.y = stall_xcalloc(n3, sizeof *P.y);
    P.c = stall_xcalloc(n3, sizeof *P.c);
    P.stall = stall_xcalloc(n3, sizeof *P.stall);
    P.start = stall_xcalloc(n3, sizeof *P.start);
    P.end = stall_xcalloc(n3, sizeof *P.end);
    P.batch = stall_xcalloc(n3, sizeof *P.batch);
    P.part = stall_xcalloc(2 * (size_t)P.nt, sizeof *P.part);
    P.grp = stall_xcalloc((size_t)P.nt, sizeof *P.grp);
    atomic_init(&P.gen, 0);
    atomic_init(&P.count, 0);
    atomic_init(&P.abort, 0);
    int rc = 0;
    for (int t = 0; t < P.nt; t++) {
        model_par_group *G = &P.grp[t];
        int n0 = (int)((int64_t)t * nodes / P.nt), n1 = (int)((int64_t)(t + 1) * nodes / P.nt);
        G->par = &P;
        G->id = t;
        G->r0 = n0 * gpn;
        G->gl = (n1 * gpn < P.g ? n1 * gpn : P.g) - G->r0;
        G->p = *p;
        G->p.ranks = G->gl;
        G->p.threads = 1;
        G->d = (stall_durations){.fetch = par_fetch,
                                 .compute = par_compute,
                                 .late_start = d->late_start ? par_late : NULL,
                                 .ctx = G};
        model_init(&G->st, &G->p, &G->d);
        free(G->st.it_q);
        free(G->st.it_y);
        free(G->st.it_c);
        free(G->st.it_stall);
        free(G->st.it_start);
        free(G->st.it_end);
        free(G->st.it_batch);
        par_point(G, 0);
        G->st.par = G;
        G->st.eng = stall_engine_create(&par_ops, &G->st, 0);
        stall__ckpt_init(&G->ck, &p->ckpt, p->ranks, gpn);
        if (rc == 0)
            rc = model_at(&G->st, gap0, MODEL_EV_EPOCH, 0, 0, &G->err);
    }
    int started = 1;
    for (int t = 1; t < P.nt && rc == 0; t++, started++)
        if (pthread_create(&P.grp[t].th, NULL, par_thread, &P.grp[t]) != 0) {
            atomic_store(&P.abort, 1);
            rc = STALL_EINTERNAL;
            break;
        }
    if (rc == 0)
        par_thread(&P.grp[0]);
    for (int t = 1; t < started; t++)
        pthread_join(P.grp[t].th, NULL);
    int64_t total = (int64_t)p->epochs * p->batches;
    uint64_t events = 0;
    for (int t = 0; t < P.nt && rc == 0; t++) {
        rc = P.grp[t].rc;
        if (rc == 0 && P.grp[t].n != total)
            rc = STALL_EINTERNAL;
        events += stall_engine_dispatched(P.grp[t].st.eng);
    }
    if (rc == 0) {
        if (P.have && on_iter)
            on_iter(ctx, &P.pend);
        P.delivered += P.have;
        /* The groups each dispatched every ITER_END and EPOCH, and a
         * meeting per iteration. */
        events -=
            (uint64_t)(P.nt - 1) * (uint64_t)(total + p->epochs) + (uint64_t)P.nt * (uint64_t)total;
        if (stats)
            *stats = (stall_model_stats){.events = events, .iterations = total, .end = P.last_t};
    }
    *delivered = P.delivered;
    par_free(&P, P.nt);
    return rc;
}
