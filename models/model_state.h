/*
 * model_state.h - the closed-loop model's state (per rank: slots, workers,
 * pin heap; per iteration: the ranks' Y, C, S, E) and its event kinds,
 * shared by the event handlers (model.c) and the set-up and run
 * (model_run.c). Private to models/.
 */
#ifndef STALL_MODELS_MODEL_STATE_H
#define STALL_MODELS_MODEL_STATE_H

#include "stall/model.h"

#include "ckpt_int.h"
#include "share.h"
#include "stall/engine.h"

enum {
    MODEL_EV_EPOCH = 1, /* a = epoch */
    MODEL_EV_FETCH_END, /* a = rank, b = slot */
    MODEL_EV_PIN_END,   /* a = rank, b = slot */
    MODEL_EV_TAKE,      /* a = rank, b = slot: Y after the hand-over (shared) */
    MODEL_EV_ITER_END,  /* T(k) */
    MODEL_EV_READY,     /* a = rank, b = worker: start-up over (shared) */
    MODEL_EV_IO_END,    /* a = rank, b = slot: waiting part over (shared) */
    MODEL_EV_PS_DONE,   /* a = node, b = MODEL_RES_*: next departure */
    MODEL_EV_COMPUTE,   /* a = rank: C(r,k) over (compute shares the CPU) */
    MODEL_EV_REQUEST,   /* a = rank: asks for its next batch without a barrier (no_sync) */
    MODEL_EV_TIER_LAT,  /* a = rank, b = slot: a request's wait and latency over (tiers) */
    MODEL_EV_TIER_DONE, /* the storage fluid's next departure */
    MODEL_EV_TAIL,      /* b = iteration: the barrier, the tail's CPU jobs start (cpushare.c) */
    MODEL_EV_CKPT,      /* b = iteration: its checkpoint's writes join the store (ckpt_store.c) */
    MODEL_EV_TIER_FIFO, /* a = rank, b = slot (a < 0: rank -1 - a's checkpoint write): a
                           transfer of the FIFO store is over */
};

enum { MODEL_RES_DISK = 0, MODEL_RES_CPU = 1 };

typedef struct model_slot {
    int64_t batch;        /* index of the batch in the slot, -1 = none */
    stall_time dur;       /* D' */
    stall_time start;     /* S */
    stall_time end;       /* E, before pin */
    stall_time arrival;   /* after pin; -1 until then */
    stall_time cpu_work;  /* shared: CPU part still to do */
    stall_time tier_wait; /* storage tiers: the waiting part, spread over the requests */
    int32_t tier_req;     /* storage tiers: the request under way */
} model_slot;

typedef struct model_worker {
    stall_time free_at; /* without sharing: E of its last batch, or ready */
    stall_time ready;   /* start-up over */
    int32_t head, len;  /* shared: FIFO of handed-out slots */
    bool busy;          /* shared: fetching */
    bool ready_pending; /* shared: a READY event is queued */
} model_worker;

typedef struct model_rank {
    int64_t next_take;       /* the loop's next iteration k */
    int64_t send;            /* next batch index to hand out */
    int32_t pin_n;           /* pin heap size */
    int32_t arr_head, arr_n; /* out of order: arrivals not yet taken */
    bool waiting;            /* the loop asked and got nothing yet */
    bool pin_busy;
} model_rank;

typedef struct model_state {
    const stall_model_params *p;
    const stall_durations *d;
    stall_iter_fn on_iter;
    void *ctx;
    stall_engine *eng;

    int g;         /* ranks */
    int wn;        /* workers per rank, at least 1 (W = 0: the main process) */
    int pf;        /* slots per worker: P, or 1 when W = 0 */
    int pw;        /* slots per rank: pf * wn */
    bool in_order; /* in order, or W = 0 */
    bool shared;   /* any shared resource on */

    model_rank *ranks;     /* [g] */
    model_slot *slots;     /* [g * pw] */
    model_worker *workers; /* [g * wn] */
    int32_t *wq;           /* [g * wn * pf] worker FIFOs (shared) */
    int32_t *pinq;         /* [g * pw] pin heaps */
    int32_t *arrq;         /* [g * pw] arrival FIFOs */

    /* Fetch align avg/min: rows of aligned durations, keyed (epoch, batch). */
    int nrows;
    int *row_epoch;
    int64_t *row_batch;
    stall_time *row_d; /* [nrows * g] */

    /* The epoch and the iterations under way. With gradient accumulation
     * (acc > 1) the ranks meet only every acc-th iteration and may be up to
     * acc - 1 iterations apart: per-iteration state sits in acc slots
     * (iteration i in slot i % acc), the G-arrays in [slot * g + r]. */
    int epoch;
    int acc;   /* iterations per synchronisation, >= 1 */
    int64_t k; /* the next iteration to report */
    stall_time epoch_start;
    stall_time q;        /* T of the last iteration reported (the epoch start at first) */
    int *taken;          /* [acc] ranks whose C(i) is known */
    stall_time *bar_max; /* [acc] max over those of Y + C */
    stall_time *tail;    /* [acc] A(i) */
    stall_time *ck_wait; /* [acc] the loop's wait for a checkpoint after i */
    stall_time *ck_write;
    stall__ckpt ck;
    stall_time *it_q; /* [acc * g] Q(r,i) */
    stall_time *it_y, *it_c, *it_stall, *it_start, *it_end;
    stall_time *it_rest; /* [g] compute sharing: the non-CPU part of C still to come */
    /* Under accumulation: each rank's stall summed since the last
     * synchronisation, and the largest of those sums reported so far. */
    stall_time *win_stall, win_max;
    int64_t *it_batch;

    /* Shared resources, per node. */
    int nodes;
    stall__ps *cpu, *disk;
    stall_time disk_work;       /* read time of one batch at full bandwidth */
    bool compute_cpu;           /* compute is a CPU participant */
    int64_t compute_id0;        /* PS job id of rank r's compute: compute_id0 + r */
    int64_t hand_id0, tail_id0; /* ... of its hand-over and tail (cpushare.c) */
    int32_t *hand_slot;         /* [g] the slot whose hand-over is on the cores */
    int tail_left;              /* tail CPU jobs still running */
    int64_t tail_iter;          /* their iteration */

    /* Storage tiers (p->storage, model_tier.c). */
    bool tier;
    double *tier_hit;     /* [nodes] this epoch's hit fraction */
    double *tier_content; /* [nodes] MB cached when the next epoch starts */
    double *tier_admit;   /* [nodes] MB this epoch may still admit (storage.admit > 0) */
    int32_t tier_nreq;    /* requests per batch, >= 1 */
    stall_time *tier_fit; /* [fit_epochs + 1] the fitted measured read per epoch, then beyond */
    struct stall__fluid *fluid; /* the store's bandwidth; NULL when unlimited or FIFO */
    stall_time *tier_fifo;      /* FIFO: [nodes] when each node's queue (or [0] the global
                                   one) is free */

    stall_model_stats stats;
    struct model_par_group *par; /* NULL, or this group's run (model_par.c) */
} model_state;

void model_init(model_state *st, const stall_model_params *p, const stall_durations *d);
void model_fini(model_state *st);
int model_request(model_state *st, int r, stall_err *err);
/* After iteration k's record at time t: its slot freed, then the ranks ask
 * for k + 1 (when k synchronises) or the next epoch is scheduled after its
 * gap (d->epoch_gap). model_iter_end and the threaded run's groups share it. */
int model_iter_advance(model_state *st, stall_time t, int slot, bool sync, const stall_durations *d,
                       stall_err *err);
int model_at(model_state *st, stall_time at, int32_t type, int32_t a, int64_t b, stall_err *err);
int model_after_read(model_state *st, int r, int32_t s, stall_err *err);
int model_tail_end(model_state *st, int64_t i, stall_time t0, bool sync, stall_err *err);

/* model_tier.c */
void model_tier_init(model_state *st);
void model_tier_fini(model_state *st);
void model_tier_epoch(model_state *st);
stall_time model_tier_read_out(const model_state *st, int r, int64_t batch, stall_time dur);
int model_tier_fetch(model_state *st, int r, int32_t s, stall_time wait, stall_err *err);
int model_tier_step(model_state *st, int r, int32_t s, stall_err *err);
int model_tier_done(model_state *st, stall_err *err);
int model_tier_resched(model_state *st, stall_err *err);
/* FIFO store: the end of a transfer of mb MB on rank r's node queued now. */
stall_time model_tier_fifo_end(model_state *st, int r, double mb);
int model_tier_fifo_done(model_state *st, int r, int32_t s, stall_err *err);

/* ckpt_store.c: checkpoints written to the tiers' store (ck.store) */
int model_ckpt_store_after(model_state *st, int64_t i, stall_time t0, bool sync, stall_err *err);
int model_ckpt_store_start(model_state *st, int64_t i, stall_err *err);
int model_ckpt_store_done(model_state *st, stall_err *err);
int model_handle(stall_engine *eng, void *state, const stall_event *ev, stall_err *err);
int model_ps_resched(model_state *st, int node, int res, stall_err *err);

/* model_par.c: ranks split by whole nodes, advanced in threads from barrier
 * to barrier (docs/model.md 4.5). model_par_on: whether p
 * qualifies; model_par_run: 0 on success (everything delivered, *stats
 * set), else nothing more is delivered and *delivered records went out, so
 * that the caller reruns serially, skipping those. */
bool model_par_on(const stall_model_params *p);
int model_par_run(const stall_model_params *p, const stall_durations *d, stall_time gap0,
                  stall_iter_fn on_iter, void *ctx, stall_model_stats *stats, int64_t *delivered);
int model_par_barrier(model_state *st, int64_t i, stall_err *err);
int model_par_iter_end(model_state *st, const stall_event *ev, stall_err *err);

/* model_fast.c: docs/model.md section 3's recurrence computed directly,
 * without events, where it is exact (docs/model.md 4.5). model_fast_on:
 * whether p qualifies; model_fast_run: as model_par_run (0: everything
 * delivered, *stats set; else *delivered records went out and the caller
 * reruns on the engine, skipping those). */
bool model_fast_on(const stall_model_params *p);
int model_fast_run(const stall_model_params *p, const stall_durations *d, stall_time gap0,
                   stall_iter_fn on_iter, void *ctx, stall_model_stats *stats, int64_t *delivered);

/* ---- an iteration's sums and extremes over a set of ranks ----------------
 * (model_par.c per group, model_fast.c over all ranks): what the record
 * needs besides the per-rank arrays. */
typedef struct model_part {
    stall_time smin, smax, cmax, fmin, fmax, s0min, s0max, ycmin, bar;
    int64_t ycsum; /* sum of Y + C */
    bool over;     /* ycsum overflowed */
} model_part;

static inline model_part model_part_empty(stall_time bar)
{
    return (model_part){.smin = INT64_MAX,
                        .smax = INT64_MIN,
                        .cmax = INT64_MIN,
                        .fmin = INT64_MAX,
                        .fmax = INT64_MIN,
                        .s0min = INT64_MAX,
                        .s0max = INT64_MIN,
                        .ycmin = INT64_MAX,
                        .bar = bar};
}

/* One rank: its stall st, compute c, fetch [s0, e0] and Y + C (yc). */
static inline void model_part_add(model_part *pt, stall_time st, stall_time c, stall_time s0,
                                  stall_time e0, stall_time yc)
{
    stall_time f = e0 - s0;
    pt->smin = st < pt->smin ? st : pt->smin;
    pt->smax = st > pt->smax ? st : pt->smax;
    pt->cmax = c > pt->cmax ? c : pt->cmax;
    pt->fmin = f < pt->fmin ? f : pt->fmin;
    pt->fmax = f > pt->fmax ? f : pt->fmax;
    pt->s0min = s0 < pt->s0min ? s0 : pt->s0min;
    pt->s0max = s0 > pt->s0max ? s0 : pt->s0max;
    pt->ycmin = yc < pt->ycmin ? yc : pt->ycmin;
    pt->over |= __builtin_add_overflow(pt->ycsum, yc, &pt->ycsum);
}

/* Another set of ranks into all (bar is the caller's). */
static inline void model_part_merge(model_part *all, const model_part *x)
{
    all->smin = x->smin < all->smin ? x->smin : all->smin;
    all->smax = x->smax > all->smax ? x->smax : all->smax;
    all->cmax = x->cmax > all->cmax ? x->cmax : all->cmax;
    all->fmin = x->fmin < all->fmin ? x->fmin : all->fmin;
    all->fmax = x->fmax > all->fmax ? x->fmax : all->fmax;
    all->s0min = x->s0min < all->s0min ? x->s0min : all->s0min;
    all->s0max = x->s0max > all->s0max ? x->s0max : all->s0max;
    all->ycmin = x->ycmin < all->ycmin ? x->ycmin : all->ycmin;
    all->over |= x->over || __builtin_add_overflow(all->ycsum, x->ycsum, &all->ycsum);
}

/* sum_r (bar - (Y + C)) over g ranks as the engine sums it, doubles in rank
 * order: every term and partial sum is an integer >= 0, so below 2^53 it
 * is the integer sum made a double; else summed from y and c. */
static inline double model_part_wait_sum(const model_part *pt, int g, stall_time bar,
                                         const stall_time *y, const stall_time *c)
{
    int64_t gb = 0, wsum_i = 0;
    if (!(pt->over || __builtin_mul_overflow((int64_t)g, bar, &gb) ||
          __builtin_sub_overflow(gb, pt->ycsum, &wsum_i) || wsum_i >= (INT64_C(1) << 53)))
        return (double)wsum_i;
    double wsum = 0.0;
    for (int r = 0; r < g; r++)
        wsum += (double)(bar - (y[r] + c[r]));
    return wsum;
}

#endif
