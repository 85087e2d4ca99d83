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

/* The keys validate leaves out: the what-if and replay sections (it
 * simulates the measured configuration, as mode = model would without
 * what-ifs), [report] (validate.csv holds epoch times and total
 * stalls, none of what its keys shape) and [trace] cores (the capture
 * machine's, for mode = model's what-ifs on other cores: validate shares
 * no cores). NULL-terminated. */
extern const char *const stall_validate_ignored[];

/* stall_config_check for validate: cfg's what-if and replay keys (listed by
 * stall_validate, which leaves them out) are dropped, and the rest is
 * checked as mode = model; [trace] workers and prefetch_factor apply. */
int stall_validate_check(const stall_config *cfg, stall_err *err);

/* [trace] persistent_workers given where it has no effect on the trace of
 * m (one epoch, or a run of 0 workers): refused (STALL_ECONFIG) naming the
 * key, by validate and calibrate; else 0. */
struct stall_measured;
int stall_validate_persistent_check(const stall_config *cfg, const struct stall_measured *m,
                                    stall_err *err);

/* Simulates the measured configuration of cfg's trace (tidy or dsanalyzer) and writes
 * validate.csv (epoch,measured_s,simulated_s,error_pct, then the same for the
 * mean stall) into the result folder; prints the table to opts->term. */
int stall_validate(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* validate's result folder: opts->outdir, or results/<name>-validate, so
 * that it never mixes with a run's. Caller frees. */
char *stall_validate_outdir(const stall_config *cfg, const stall_run_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
