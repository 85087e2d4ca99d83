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
 * Threads (p->threads > 1 and enough ranks): contiguous rank ranges, each
 * on its own thread, meet once per iteration at a barrier; every thread
 * then computes T(k) alike (A and the gap are pure, each thread feeds its
 * own copy of the checkpoint state) and thread 0 builds and delivers the
 * record. The per-iteration arrays alternate between two buffers: a
 * thread can write iteration n + 2 only after the barrier of n + 1, which
 * thread 0 reaches after delivering n. On any failure (a negative
 * duration) the run stops and returns an error; stall_model_run then runs
 * the event engine, which gives the error and its message, skipping the
 * records delivered here (all before the failure's point in the run).
 */
#include "stall/model.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "model_state.h"

/* Ranks per thread below which a thread costs more than it brings. */
#define FAST_MIN_RANKS 128
#define FAST_SPIN 4096

typedef struct fast_part {
    stall_time smin, smax, cmax, fmin, fmax, s0min, s0max, ycmin, bar;
    int64_t ycsum; /* sum of Y + C */
    bool over;     /* ycsum overflowed */
} fast_part;

typedef struct model_fast model_fast;

typedef struct fast_thread {
    model_fast *F;
    int id, r0, r1; /* ranks [r0, r1) */
    stall__ckpt ck;
    unsigned gen;
    int rc;
    pthread_t th;
} fast_thread;

struct model_fast {
    const stall_model_params *p;
    const stall_durations *d;
    stall_iter_fn on_iter;
    void *ctx;
    stall_time gap0;
    int g, wn, pw, nt;
    stall_time *s_start, *s_end; /* [pw * g]: slot s of rank r at s * g + r */
    stall_time *free_at;         /* [wn * g]: E of worker w's last batch */
    /* [2 * g]: iteration n in buffer n % 2 */
    stall_time *y, *c, *stall, *start, *end;
    int64_t *batch;
    fast_part *part; /* [2 * nt] */
    atomic_uint gen;
    atomic_int count;
    atomic_int abort;
    /* thread 0 only */
    int64_t delivered;
    stall_time last_t;
    fast_thread *th;
};

bool model_fast_on(const stall_model_params *p)
{
    bool storage = p->storage_mb_s > 0.0 && p->batch_mb > 0.0;
    return p->cores == 0 && !storage && !p->tiers && p->fetch_align == STALL_ALIGN_NONE &&
           p->accumulation <= 1 && p->pin == 0 && (p->in_order || p->workers == 0) &&
           !p->ckpt.store;
}

/* ---- the barrier (as model_par.c's) -------------------------------------- */

static inline void fast_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static unsigned fast_arrive(model_fast *F)
{
    unsigned gen = atomic_load_explicit(&F->gen, memory_order_acquire);
    if (atomic_fetch_add_explicit(&F->count, 1, memory_order_acq_rel) == F->nt - 1) {
        atomic_store_explicit(&F->count, 0, memory_order_relaxed);
        atomic_store_explicit(&F->gen, gen + 1, memory_order_release);
    }
    return gen;
}

/* 0 when every thread arrived, -1 when one failed. */
static int fast_wait(model_fast *F, unsigned gen)
{
    for (unsigned spin = 0; atomic_load_explicit(&F->gen, memory_order_acquire) == gen; spin++) {
        if (atomic_load_explicit(&F->abort, memory_order_relaxed))
            return -1;
        /* Spin about as long as an iteration of a thread's ranks takes,
         * then give the core away (more threads than cores). */
        if (spin >= FAST_SPIN)
            sched_yield();
        else
            fast_relax();
    }
    return 0;
}

/* ---- one thread's ranks ---------------------------------------------------- */

/* Epoch e starts at t0: each rank's first P*W batches go to its workers. */
static int fast_epoch(fast_thread *T, int e, stall_time t0)
{
    model_fast *F = T->F;
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    size_t g = (size_t)F->g;
    stall_time ready = t0;
    if (p->workers > 0 && (!p->persistent_workers || e == 0))
        ready += p->startup;
    for (int w = 0; w < F->wn; w++)
        for (int r = T->r0; r < T->r1; r++)
            F->free_at[(size_t)w * g + (size_t)r] = ready;
    if (p->workers == 0)
        return 0;
    int64_t first = p->batches < F->pw ? p->batches : F->pw;
    for (int64_t j = 0; j < first; j++) {
        size_t so = (size_t)j * g, wo = (size_t)(j % F->wn) * g;
        for (int r = T->r0; r < T->r1; r++) {
            stall_time dur = d->fetch(d->ctx, e, r, j);
            if (dur < 0)
                return -1;
            stall_time fa = F->free_at[wo + (size_t)r];
            stall_time s = fa > t0 ? fa : t0;
            F->s_start[so + (size_t)r] = s;
            F->s_end[so + (size_t)r] = s + dur;
            F->free_at[wo + (size_t)r] = s + dur;
        }
    }
    return 0;
}

/* Iteration k of epoch e, its ranks asking at q: their Y, C, S, E into
 * buffer b, the refills handed out, the partial sums and extremes. */
static int fast_iter(fast_thread *T, int e, int64_t k, stall_time q, int b, fast_part *out)
{
    model_fast *F = T->F;
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    size_t g = (size_t)F->g, o = (size_t)b * g;
    stall_time h = p->handover;
    /* Summed in a local: the threads' partials share cache lines. */
    fast_part acc = {.smin = INT64_MAX,
                     .smax = INT64_MIN,
                     .cmax = INT64_MIN,
                     .fmin = INT64_MAX,
                     .fmax = INT64_MIN,
                     .s0min = INT64_MAX,
                     .s0max = INT64_MIN,
                     .ycmin = INT64_MAX,
                     .bar = INT64_MIN};
    fast_part *pt = &acc;
    bool refill = p->workers > 0 && k + F->pw < p->batches;
    size_t so = p->workers > 0 ? (size_t)(k % F->pw) * g : 0;
    size_t wo = p->workers > 0 ? (size_t)(k % F->wn) * g : 0;
    for (int r = T->r0; r < T->r1; r++) {
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
            stall_time fa = F->free_at[wo + (size_t)r];
            stall_time s = fa > y ? fa : y;
            F->s_start[so + (size_t)r] = s;
            F->s_end[so + (size_t)r] = s + dur;
            F->free_at[wo + (size_t)r] = s + dur;
        }
        size_t at = o + (size_t)r;
        stall_time st = y - q, f = e0 - s0, yc = y + c;
        F->y[at] = y;
        F->c[at] = c;
        F->stall[at] = st;
        F->start[at] = s0;
        F->end[at] = e0;
        F->batch[at] = k;
        pt->smin = st < pt->smin ? st : pt->smin;
        pt->smax = st > pt->smax ? st : pt->smax;
        pt->cmax = c > pt->cmax ? c : pt->cmax;
        pt->fmin = f < pt->fmin ? f : pt->fmin;
        pt->fmax = f > pt->fmax ? f : pt->fmax;
        pt->s0min = s0 < pt->s0min ? s0 : pt->s0min;
        pt->s0max = s0 > pt->s0max ? s0 : pt->s0max;
        pt->ycmin = yc < pt->ycmin ? yc : pt->ycmin;
        pt->bar = yc > pt->bar ? yc : pt->bar;
        pt->over |= __builtin_add_overflow(pt->ycsum, yc, &pt->ycsum);
    }
    *out = acc;
    return 0;
}

/* Thread 0: record n (iteration k of epoch e) from the threads' partials. */
static void fast_record(model_fast *F, int64_t n, int e, int64_t k, stall_time t0, stall_time q,
                        stall_time bar, stall_time a, stall_time ckw, stall_time ckwrite,
                        stall_time t)
{
    const fast_part *pt = F->part + (size_t)(n % 2) * (size_t)F->nt;
    fast_part all = pt[0];
    bool over = all.over;
    for (int i = 1; i < F->nt; i++) {
        const fast_part *x = &pt[i];
        all.smin = x->smin < all.smin ? x->smin : all.smin;
        all.smax = x->smax > all.smax ? x->smax : all.smax;
        all.cmax = x->cmax > all.cmax ? x->cmax : all.cmax;
        all.fmin = x->fmin < all.fmin ? x->fmin : all.fmin;
        all.fmax = x->fmax > all.fmax ? x->fmax : all.fmax;
        all.s0min = x->s0min < all.s0min ? x->s0min : all.s0min;
        all.s0max = x->s0max > all.s0max ? x->s0max : all.s0max;
        all.ycmin = x->ycmin < all.ycmin ? x->ycmin : all.ycmin;
        over |= x->over || __builtin_add_overflow(all.ycsum, x->ycsum, &all.ycsum);
    }
    size_t o = (size_t)(n % 2) * (size_t)F->g;
    /* The engine sums the waits bar - (Y + C) as doubles in rank order:
     * every term and partial sum is an integer >= 0, so below 2^53 that is
     * the integer sum made a double. */
    int64_t gb = 0, wsum_i = 0;
    double wsum = 0.0;
    over = over || __builtin_mul_overflow((int64_t)F->g, bar, &gb) ||
           __builtin_sub_overflow(gb, all.ycsum, &wsum_i) || wsum_i >= (INT64_C(1) << 53);
    if (!over) {
        wsum = (double)wsum_i;
    } else {
        for (int r = 0; r < F->g; r++)
            wsum += (double)(bar - (F->y[o + (size_t)r] + F->c[o + (size_t)r]));
    }
    stall_iter_record rec = {
        .epoch = e,
        .batch = k,
        .epoch_start = t0,
        .iter_end = t,
        .iter_time = t - q,
        .stall_max = all.smax,
        .stall_min = all.smin,
        .delay = all.smax - all.smin,
        .stall_train = all.smax, /* one iteration per synchronisation */
        .wait_max = bar - all.ycmin,
        .wait_mean_s = wsum / (double)F->g / 1e9,
        .compute_max = all.cmax,
        .tail = a,
        .ckpt_wait = ckw,
        .ckpt_write = ckwrite,
        .fetch_spread = all.fmax - all.fmin,
        .start_spread = all.s0max - all.s0min,
        .stall = F->stall + o,
        .ready = F->y + o,
        .compute = F->c + o,
        .fetch_start = F->start + o,
        .fetch_end = F->end + o,
        .fetched = F->batch + o,
    };
    if (F->on_iter)
        F->on_iter(F->ctx, &rec);
    F->delivered++;
    F->last_t = t;
}

/* One thread's whole run; every thread takes the same decisions about time. */
static int fast_loop(fast_thread *T)
{
    model_fast *F = T->F;
    const stall_model_params *p = F->p;
    const stall_durations *d = F->d;
    stall_time t0 = F->gap0, t = t0;
    int64_t n = 0;
    for (int e = 0; e < p->epochs; e++) {
        if (e > 0) {
            stall_time gap = d->epoch_gap ? d->epoch_gap(d->ctx, e) : 0;
            if (gap < 0)
                return -1;
            t0 = t + gap;
        }
        if (fast_epoch(T, e, t0))
            return -1;
        stall_time q = t0;
        for (int64_t k = 0; k < p->batches; k++, n++) {
            fast_part *pt = F->part + (size_t)(n % 2) * (size_t)F->nt;
            if (fast_iter(T, e, k, q, (int)(n % 2), &pt[T->id]))
                return -1;
            if (F->nt > 1 && fast_wait(F, fast_arrive(F)))
                return -1;
            stall_time bar = pt[0].bar;
            for (int i = 1; i < F->nt; i++)
                bar = pt[i].bar > bar ? pt[i].bar : bar;
            stall_time a = d->tail ? d->tail(d->ctx, e, k) : 0;
            if (a < 0)
                return -1;
            stall_time ckwrite = 0;
            stall_time ckw =
                stall__ckpt_after(&T->ck, (int64_t)e * p->batches + k, bar + a, true, &ckwrite);
            t = bar + a + ckw;
            if (T->id == 0)
                fast_record(F, n, e, k, t0, q, bar, a, ckw, ckwrite, t);
            q = t;
        }
    }
    return 0;
}

static void *fast_thread_main(void *arg)
{
    fast_thread *T = arg;
    T->rc = fast_loop(T);
    if (T->rc)
        atomic_store(&T->F->abort, 1);
    return NULL;
}

int model_fast_run(const stall_model_params *p, const stall_durations *d, stall_time gap0,
                   stall_iter_fn on_iter, void *ctx, stall_model_stats *stats, int64_t *delivered)
{
    model_fast F = {.p = p, .d = d, .on_iter = on_iter, .ctx = ctx, .gap0 = gap0, .g = p->ranks};
    F.wn = p->workers > 0 ? p->workers : 1;
    F.pw = p->workers > 0 ? p->workers * p->prefetch : 1;
    int most = p->ranks / FAST_MIN_RANKS;
    F.nt = p->threads < most ? p->threads : most;
    F.nt = F.nt > 1 ? F.nt : 1;
    size_t g = (size_t)F.g, n2 = 2 * g;
    F.s_start = stall_xmalloc((size_t)F.pw * g * sizeof *F.s_start);
    F.s_end = stall_xmalloc((size_t)F.pw * g * sizeof *F.s_end);
    F.free_at = stall_xmalloc((size_t)F.wn * g * sizeof *F.free_at);
    F.y = stall_xmalloc(n2 * sizeof *F.y);
    F.c = stall_xmalloc(n2 * sizeof *F.c);
    F.stall = stall_xmalloc(n2 * sizeof *F.stall);
    F.start = stall_xmalloc(n2 * sizeof *F.start);
    F.end = stall_xmalloc(n2 * sizeof *F.end);
    F.batch = stall_xmalloc(n2 * sizeof *F.batch);
    F.part = stall_xcalloc(2 * (size_t)F.nt, sizeof *F.part);
    F.th = stall_xcalloc((size_t)F.nt, sizeof *F.th);
    atomic_init(&F.gen, 0);
    atomic_init(&F.count, 0);
    atomic_init(&F.abort, 0);
    for (int t = 0; t < F.nt; t++) {
        fast_thread *T = &F.th[t];
        T->F = &F;
        T->id = t;
        T->r0 = (int)((int64_t)t * F.g / F.nt);
        T->r1 = (int)((int64_t)(t + 1) * F.g / F.nt);
        stall__ckpt_init(&T->ck, &p->ckpt, p->ranks, p->gpus_per_node);
    }
    int rc = 0, started = 1;
    for (int t = 1; t < F.nt; t++, started++)
        if (pthread_create(&F.th[t].th, NULL, fast_thread_main, &F.th[t]) != 0) {
            atomic_store(&F.abort, 1);
            rc = STALL_EINTERNAL;
            break;
        }
    if (rc == 0)
        fast_thread_main(&F.th[0]);
    for (int t = 1; t < started; t++)
        pthread_join(F.th[t].th, NULL);
    for (int t = 0; t < F.nt && rc == 0; t++)
        rc = F.th[t].rc ? STALL_EINVAL : 0;
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
    free(F.part);
    free(F.th);
    return rc;
}
