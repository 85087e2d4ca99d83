/*
 * modes.h - the run of each [scenario] mode (private to jobs/: only the
 * dispatch in scenario.c calls these).
 */
#ifndef STALL_JOBS_MODES_H
#define STALL_JOBS_MODES_H

#include "stall/config.h"
#include "stall/job.h"

/* mode = replay and mode = seed, on a dsanalyzer trace (replay_job.c). */
int stall_replay_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* mode = model: the closed-loop what-if (model_job.c). */
int stall_model_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

#endif
