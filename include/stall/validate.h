/*
 * stall/validate.h - `stallsim validate`: simulate the measured
 * configuration of a trace and compare, epoch by epoch, with what was
 * measured.
 */
#ifndef STALL_VALIDATE_H
#define STALL_VALIDATE_H

#include "stall/base.h"
#include "stall/config.h"
#include "stall/job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Simulates the measured configuration of cfg's tidy trace and writes
 * validate.csv (epoch,measured_s,simulated_s,error_pct, then the same for the
 * mean stall) into the result folder; prints the table to opts->term. */
int stall_validate(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
