/*
 * memo.h - a measured trace kept across the runs of one job (plan's
 * probes), so that a trace read whole is read and decomposed once instead
 * of once per run. Private to jobs/.
 *
 * A run takes the kept trace where its [trace] source is the one kept
 * (every field of wi_trace_src alike); else it reads its own. What is kept
 * is read only: the runs borrow it and never free it.
 */
#ifndef STALL_JOBS_MEMO_H
#define STALL_JOBS_MEMO_H

#include <stdbool.h>

#include "inputs.h"
#include "stall/job.h"
#include "stall/measured.h"

stall_trace_memo *wi_memo_new(void);
void wi_memo_free(stall_trace_memo *memo); /* NULL-safe; frees the kept trace */

/* Whether memo (may be NULL) keeps the trace of src: then *m is a shallow
 * copy of it, which the caller must not free. */
bool wi_memo_take(const stall_trace_memo *memo, const wi_trace_src *src, stall_measured *m);

/* Keeps *m, read from src, where memo (may be NULL) keeps nothing yet, and
 * returns true: memo then owns the trace and *m is the caller's borrowed
 * copy. Else changes nothing and returns false. */
bool wi_memo_keep(stall_trace_memo *memo, const wi_trace_src *src, const stall_measured *m);

#endif
