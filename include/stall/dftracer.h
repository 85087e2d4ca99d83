/*
 * stall/dftracer.h - DLIO benchmark traces written by dftracer (and its
 * 2023 predecessor dlio_profiler): .pfw / .pfw.gz files, "[", one JSON
 * event per line, "]", one file per rank (trace-R-of-W[-PID].pfw; worker
 * processes may write their own), read in one streaming pass into the
 * shape `stallsim analyze` and `stallsim timeline` read (stall/tidy.h;
 * docs/model.md, section 8.1).
 *
 * Three generations of event names are read (compute, the wait, epochs,
 * checkpoints, per-sample reads):
 *   since late 2025  compute, fetch.iter, epoch.block, capture/restart, item
 *   2024-2025        TorchFramework.compute, loop.iter, DLIOBenchmark._train,
 *                    PyTorchCheckpointing.*, TorchDataset.__getitem__
 *   2023             TorchFramework.compute, (no per-batch wait),
 *                    DLIOBenchmark._train, TorchFramework.checkpoint,
 *                    TorchDataset.__getitem__ (numbers as JSON strings)
 * An iteration is a compute event: ready = its start, compute_end = its
 * end; request = the start of the wait event before it, or (no such
 * event) the end of the previous compute (the epoch's start for the
 * first). Worker fetches are per sample, not per batch: fetch times stay
 * unknown (fetch_unknown); the workers seen are counted.
 */
#ifndef STALL_DFTRACER_H
#define STALL_DFTRACER_H

#include <stdbool.h>
#include <stddef.h>

#include "stall/base.h"
#include "stall/tidy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the first n bytes of a file (decompressed) look like a dftracer
 * trace: "[" then a line holding an event object with "ph" and "ts" keys
 * (or such a line first), i.e. a JSON object per line. */
bool stall_dftracer_probe(const char *head, size_t n);

/* Reads path: a .pfw / .pfw.gz file or a folder of them. Returns 0 with
 * *out set (with checkpoint_s when the trace has checkpoint events, and a
 * summary), STALL_EIO or STALL_EPARSE naming the file and line, or the
 * reason the trace cannot be analysed (no compute events, ...). */
int stall_dftracer_load(const char *path, stall_tidy_trace **out, stall_err *err);

/* The trace files stall_dftracer_load reads for path (the file, or a folder's
 * files in name order) into *files: free() each of the *n and the array. */
int stall_dftracer_files(const char *path, char ***files, int *n, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
