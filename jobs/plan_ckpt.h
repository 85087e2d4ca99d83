/*
 * plan_ckpt.h - `stallsim plan`'s checkpoint question (plan_ckpt.c):
 * [plan] ckpt_stall_budget. Private to jobs/.
 */
#ifndef STALL_JOBS_PLAN_CKPT_H
#define STALL_JOBS_PLAN_CKPT_H

#include <stddef.h>

#include "stall/config.h"
#include "stall/job.h"

/* The answer: the interval (NAN: none), binding "met" or "not_met", the
 * simulations it took and a sentence. */
typedef struct plan_ckpt_answer {
    double value;
    char binding[24];
    int sims;
    char why[512];
} plan_ckpt_answer;

/* The shortest checkpoint interval, in iterations, whose checkpoint stall
 * share (the loop's wait for checkpoints over the epoch time) is at most
 * budget, for configuration cfg (not [checkpoint] mode = off: plan.c
 * refuses that first; its interval keys are replaced): galloping from 1,
 * then bisection, assuming the share does not grow with the interval. */
int plan_ckpt(const stall_config *cfg, double budget, stall_trace_memo *memo, plan_ckpt_answer *a,
              stall_err *err);

#endif
