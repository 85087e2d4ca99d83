/*
 * stall/scenario.h - `stallsim run`: a loaded scenario end to end, whatever
 * its mode. The one place that dispatches on [scenario] mode:
 *   replay, seed -> the trace-timed replay of every alignment combination
 *                   (and the notebook's numbers in seed mode);
 *   model        -> the closed-loop what-if model.
 *
 * Output is byte-identical whatever the thread count. Input is read and
 * checked before the result folder is touched, so bad input leaves nothing
 * behind; every file is written atomically.
 */
#ifndef STALL_SCENARIO_H
#define STALL_SCENARIO_H

#include "stall/base.h"
#include "stall/config.h"
#include "stall/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs cfg (already checked with stall_config_check). Returns 0 or a code. */
int stall_scenario_run(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
