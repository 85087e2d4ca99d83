/*
 * stall/kineto.h - PyTorch profiler (Kineto) traces: Chrome trace JSON, one
 * file per rank, plain or gzipped, read in one streaming pass into the
 * shape `stallsim analyze` and `stallsim timeline` read (stall/tidy.h;
 * docs/model.md, section 8.1).
 *
 * Iterations are the `ProfilerStep#N` ranges when the profiler had a
 * schedule (a step without a DataLoader call is left out), else the spans
 * from one DataLoader `__next__` start to the next (the last call, which
 * ends the loop, is not an iteration). The DataLoader call's range is the
 * wait: with 0 workers (`_SingleProcessDataLoaderIter`) it is the whole
 * fetch, in the main process; with workers (`_MultiProcessingDataLoaderIter`,
 * `enumerate(DataPipe)#`) the workers' fetches are not in the trace, and
 * the trace says so (fetch_unknown). One epoch: Kineto marks none; a rank's
 * further files (a schedule with repeat writes one per cycle) are further
 * profiling windows, the epochs of this shape (in time order; with the
 * legacy exporter's relative times, in file-name order, back to back).
 * Files of one rank that overlap in time are refused.
 */
#ifndef STALL_KINETO_H
#define STALL_KINETO_H

#include <stdbool.h>
#include <stddef.h>

#include "stall/base.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the first n bytes of a file (decompressed) look like a Chrome
 * trace written by the PyTorch profiler: a JSON object with "traceEvents",
 * or a Kineto key ("schemaVersion", "deviceProperties", ...). */
bool stall_kineto_probe(const char *head, size_t n);

/* Reads path: a .json / .json.gz file, or a folder of them (one per rank).
 * Returns 0 with *out set (its summary says what was found), STALL_EIO or
 * STALL_EPARSE with err naming the file and the line/byte, or the reason a
 * trace cannot be analysed (no DataLoader events, ...). */
int stall_kineto_load(const char *path, stall_tidy_trace **out, stall_err *err);

/* The trace files stall_kineto_load reads for path (the file, or a folder's
 * files in name order) into *files: free() each of the *n and the array. */
int stall_kineto_files(const char *path, char ***files, int *n, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
