/*
 * model_check.h - mode = model's checks that need the trace's grid (its
 * ranks, epochs and batches), not its durations, shared by the job itself
 * (model_job.c) and the sweep's check of every point before any runs
 * (sweep.c, through modes.h). Private to jobs/.
 */
#ifndef STALL_JOBS_MODEL_CHECK_H
#define STALL_JOBS_MODEL_CHECK_H

#include "feed.h"
#include "modes.h"

/* A what-if beyond the trace (m: its grid; NULL without a trace) without
 * [fetch] resample: STALL_ECONFIG naming where the trace came from. */
int wi_grid_check(const stall_config *cfg, const wi_whatif *what, const stall_measured *m,
                  const stall_model_params *p, stall_err *err);

/* What a what-if of parameters p (from what) draws and reads on a trace of
 * grid m. */
void wi_effects(const stall_measured *m, const wi_whatif *what, const stall_model_params *p,
                stall_model_effects *fx);

/* [run] replications where nothing is drawn: STALL_ECONFIG. */
int wi_reps_check(const stall_config *cfg, const stall_model_effects *fx, stall_err *err);

#endif
