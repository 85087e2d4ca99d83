/*
 * plan_ckpt.h - `stallsim plan`'s checkpoint question (plan_ckpt.c):
 * [plan] ckpt_stall_budget. Private to jobs/.
 */
#ifndef STALL_JOBS_PLAN_CKPT_H
#define STALL_JOBS_PLAN_CKPT_H

#include <stdio.h>

#include "stall/plan.h"

/* The shortest checkpoint interval, in iterations, whose checkpoint stall
 * share (the loop's wait for checkpoints over the epoch time) is at most
 * r->ckpt_budget, for configuration cfg: galloping from 1, then bisection,
 * assuming the share does not grow with the interval. Fills r->ckpt_every
 * and r->ckpt_why. */
int plan_ckpt(const stall_config *cfg, stall_plan_result *r, stall_err *err);

/* Its terminal line. */
void plan_ckpt_print(FILE *f, const stall_plan_result *r);

#endif
