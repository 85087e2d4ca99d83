/*
 * cpushare.h - the hand-over's and the tail's CPU work on the node's cores,
 * and the measured run-queue waits taken out of the waiting parts
 * (cpushare.c). Private to models/.
 */
#ifndef STALL_MODELS_CPUSHARE_H
#define STALL_MODELS_CPUSHARE_H

#include <stdbool.h>

#include "model_state.h"

/* The measured run-queue wait in a fetch of D' = dur, and in a compute c. */
stall_time model_cpu_fetch_wait(const model_state *st, stall_time dur);
stall_time model_cpu_compute_wait(const model_state *st, stall_time c);
/* The hand-over is a CPU job: model_cpu_take at the take (now) instead of
 * the plain delay; Y follows as MODEL_EV_TAKE. */
bool model_cpu_handover_on(const model_state *st);
int model_cpu_take(model_state *st, int r, int32_t s, stall_err *err);
/* The tail is a CPU job per rank: model_cpu_tail_start at the barrier
 * (now = max_r Y + C) of synchronising iteration i; T(i) follows as
 * MODEL_EV_ITER_END. */
bool model_cpu_tail_on(const model_state *st);
int model_cpu_tail_start(model_state *st, int64_t i, stall_err *err);
/* A hand-over or tail job (id >= hand_id0) left the cores. */
int model_cpu_done(model_state *st, int64_t id, stall_err *err);

#endif
