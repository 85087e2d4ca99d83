/*
 * stall/traceend.h - the end of a trace file, checked for a cut: a copy or a
 * download stopped early leaves a last line without its newline, or a
 * number cut short that would read as another value.
 */
#ifndef STALL_TRACEEND_H
#define STALL_TRACEEND_H

#include <stdbool.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The end of a trace file, checked for a cut: a file whose last line has
 * no newline may be cut (a copy or a download stopped early). Returns 0,
 * with *cut set when the last line has no newline (the caller warns:
 * stall_trace_warn_cut); or STALL_EPARSE naming file:line:column when it
 * has none and a number of that last line is shorter than every other value
 * of its column (at least two other rows): cut inside that number, which
 * would read as another value. STALL_EIO when the file cannot be read. */
int stall_trace_check_end(const char *path, bool *cut, stall_err *err);

/* stall_trace_check_end, remembering a file whose last line has no newline
 * (once per path per process) for the command to warn of at its end: on
 * success a line of its own, on failure a note in its one error line. A
 * trace with PATH.cut beside it (the capture tool's `merge --salvage-cut`:
 * a run that crashed or was killed) is remembered so too. */
int stall_trace_check_end_warn(const char *path, stall_err *err);

/* The i-th file remembered so (i from 0), or NULL; and why (a phrase). */
const char *stall_trace_cut_file(int i);
const char *stall_trace_cut_why(int i);

#ifdef __cplusplus
}
#endif
#endif
