/*
 * model_int.h - the limits of the closed-loop model's parameters, shared by
 * the model (model.c) and its parameter checks (model_params.c). Private to
 * models/.
 */
#ifndef STALL_MODELS_MODEL_INT_H
#define STALL_MODELS_MODEL_INT_H

#include "stall/model.h"

/* Largest P*W, and largest G*P*W, accepted (keeps slot ids in int32). */
#define MODEL_MAX_PW (INT32_C(1) << 20) /* STALL_LIMIT_IN_FLIGHT */
#define MODEL_MAX_SLOTS INT64_C(0x7fffffff)

int model_check(const stall_model_params *p, const stall_durations *d, stall_err *err);

/* stall_model_run without the closed form of model_fast.c: the events on
 * the engine (threads as model_par.c decides), for the tests that hold the
 * two equal. */
int stall__model_run_events(const stall_model_params *p, const stall_durations *d,
                            stall_iter_fn on_iter, void *ctx, stall_model_stats *stats,
                            stall_err *err);

#endif
