/*
 * stall/timeline.h - a writer of the Chrome Trace Event format (JSON object
 * form: {"traceEvents": [...], "displayTimeUnit": "ms"}), which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.
 *
 * Times are given in ns from an origin the caller chooses and written in
 * microseconds with three decimals, so nothing is lost. The writer knows
 * processes (pid), threads (tid), complete events ("X": a named interval on
 * a thread), counters ("C") and flow arrows ("s" and "f", bound to the
 * slices they fall in). Events on one thread must be written in time order
 * and must nest (each one after the previous or inside it): the writer does
 * not sort. Names and categories are JSON-escaped.
 */
#ifndef STALL_TIMELINE_H
#define STALL_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_tl {
    FILE *f;
    uint64_t events; /* written so far */
} stall_tl;

/* Starts the document on f. */
void stall_tl_begin(stall_tl *w, FILE *f);
/* Names a process / a thread, and orders them in the viewer by sort. */
void stall_tl_process(stall_tl *w, int pid, const char *name, int sort);
void stall_tl_thread(stall_tl *w, int pid, int tid, const char *name, int sort);
/* A complete event [ts, ts + dur); args_json is an object's text or NULL. */
void stall_tl_complete(stall_tl *w, int pid, int tid, const char *name, const char *cat,
                       stall_time ts, stall_time dur, const char *args_json);
/* A counter sample: the series `name` of process pid has value v from ts on. */
void stall_tl_counter(stall_tl *w, int pid, const char *name, stall_time ts, double v);
/* A flow arrow's start (inside a slice on pid/tid at ts) or end (bound to
 * the slice that starts at or encloses ts). */
void stall_tl_flow(stall_tl *w, int pid, int tid, stall_time ts, uint64_t id, bool start);
/* Closes the document. Returns 0, or STALL_EIO when a write failed. */
int stall_tl_end(stall_tl *w);

#ifdef __cplusplus
}
#endif
#endif
