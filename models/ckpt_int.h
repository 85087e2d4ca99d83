/*
 * ckpt_int.h - the checkpoint state of one model run and the durations
 * wrapper of uneven ranks (models/ckpt.c, models/uneven.c), hooked into
 * the closed-loop model (model.c, model_run.c). Private to models/.
 */
#ifndef STALL_MODELS_CKPT_INT_H
#define STALL_MODELS_CKPT_INT_H

#include "stall/ckpt.h"
#include "stall/model.h"

typedef struct stall__ckpt {
    bool on;
    int64_t every;       /* iterations; 0: by time */
    stall_time every_ns; /* by time */
    bool async;
    stall_time write, snap;
    int64_t next_due;  /* by count: the run's iteration count that makes the next one due */
    stall_time last;   /* by time: start of the last checkpoint (0 at first) */
    stall_time bg_end; /* async: end of the background write under way (0: none) */
    stall_time first;  /* extra time of the run's first checkpoint, 0 once taken */
    /* store (models/ckpt_store.c): the writes are transfers of the storage
     * tiers' fluid, their end known when the fluid says so. */
    bool store;
    double mb;          /* per rank */
    stall_time alone;   /* the write alone on the fullest node's link (reported for async) */
    int inflight;       /* ranks' writes still in the fluid */
    int pend;           /* CKPT_PEND_*: what the loop waits for */
    int64_t pend_iter;  /* the iteration the checkpoint follows */
    stall_time pend_t0; /* when its tail ended */
} stall__ckpt;

enum { CKPT_PEND_NONE = 0, CKPT_PEND_PREV, CKPT_PEND_OWN };

void stall__ckpt_init(stall__ckpt *c, const stall_ckpt_params *p, int ranks, int gpn);

/* Iteration `iter` of the run (epoch * N + k) ended its barrier and tail at
 * t0; sync: the ranks synchronised. Returns the time the loop waits for a
 * checkpoint (0: none taken) and sets *write to the checkpoint's write
 * time W (0: none taken). Must be called for the synchronising iterations
 * in their order. */
stall_time stall__ckpt_after(stall__ckpt *c, int64_t iter, stall_time t0, bool sync,
                             stall_time *write);

/* Whether a checkpoint is due after iteration `iter` (as stall__ckpt_after,
 * which calls it; it moves the next due point). */
bool stall__ckpt_due(stall__ckpt *c, int64_t iter, stall_time t0, bool sync);

/* The storage a checkpoint writes to, for the storage tiers to join: the
 * background write of an async checkpoint occupies [start, start + write)
 * without sharing. Kept behind this function so that a shared tier can
 * later stretch it; returns the write's end. */
stall_time stall__ckpt_background(stall__ckpt *c, stall_time start, stall_time write);

int stall__ckpt_check(const stall_ckpt_params *p, int per_node, stall_err *err);
/* A checkpoint to the store (p->ckpt.store) needs the tiers with a bandwidth
 * (models/ckpt_store.c). */
int stall__ckpt_store_check(const stall_model_params *p, stall_err *err);
int stall__uneven_check(const stall_uneven_params *u, int ranks, int gpn, stall_err *err);

/* Durations of `inner` with the uneven ranks' factors and the stragglers
 * applied (ctx of *out points at w, which must outlive the run). */
typedef struct stall__uneven {
    stall_uneven_params u;
    stall_durations inner;
    int ranks, gpn;
    int first_slow; /* ranks >= first_slow are slow */
} stall__uneven;

void stall__uneven_wrap(stall__uneven *w, const stall_uneven_params *u, int ranks, int gpn,
                        const stall_durations *inner, stall_durations *out);

#endif
