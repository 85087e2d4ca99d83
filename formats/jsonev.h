/*
 * jsonev.h - private to formats/: trace events streamed out of JSON files
 * (plain or gzip) with libyajl and zlib, for the Kineto and dftracer
 * readers. Only the fields the readers use are kept, as text (numbers as
 * yajl hands them over, unrounded; strings as written), so an event costs
 * a fixed-size struct whatever the file holds; nothing else is stored.
 */
#ifndef STALL_FORMATS_JSONEV_H
#define STALL_FORMATS_JSONEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stall/base.h"

/* One event's fields (text; "" when absent; long text is cut, *_cut set). */
typedef struct jev_event {
    char name[192];
    bool name_cut;
    char cat[48], ph[8], pid[40], tid[40], ts[40], dur[40];
    /* args: epoch, step, count (DLIO), name and value (dftracer metadata) */
    char a_epoch[24], a_step[24], a_count[24], a_name[48], a_value[96];
} jev_event;

/* Where a callback is: for messages. */
typedef struct jev_pos {
    const char *file;
    int64_t line;   /* 1-based */
    int64_t offset; /* byte offset in the (decompressed) text */
} jev_pos;

/* Called per event; a non-zero return (an STALL_E* code with err set)
 * stops the reading and is returned. */
typedef int (*jev_event_fn)(void *ctx, const jev_event *e, const jev_pos *pos, stall_err *err);
/* Chrome traces: a scalar outside traceEvents, at depth 1 ("key") or 2
 * ("key.sub"): baseTimeNanoseconds, distributedInfo.rank, ... */
typedef void (*jev_top_fn)(void *ctx, const char *path, const char *text);

typedef enum jev_kind {
    JEV_CHROME, /* {"traceEvents": [ {...}, ... ], ...} or [ {...}, ... ]; trailing commas allowed
                 */
    JEV_LINES   /* dftracer: "[", one object per line (commas optional), "]" optional */
} jev_kind;

/* Streams path (gzip or plain, told by content) through the callbacks.
 * Returns 0, STALL_EIO (cannot open or read: gzip damage) or STALL_EPARSE
 * with err naming "file: line L (byte B): problem", or a callback's code. */
int jev_read(const char *path, jev_kind kind, jev_event_fn on_event, jev_top_fn on_top, void *ctx,
             stall_err *err);

/* Microseconds as decimal text ("12.345", "1698352095942658", "-1", "1e3")
 * to ns, exactly for up to 3 decimals (rounded half away from zero
 * beyond). Returns 0, or -1 when text is not such a number or is out of
 * range (|x| > 9e15 us). */
int jev_us_to_ns(const char *text, int64_t *ns);

/* A decimal integer in text (optionally quoted JSON string content) into
 * *v; 0 or -1. */
int jev_int(const char *text, int64_t *v);

/* The refusal of a used event's field (pid, tid, ts, dur) whose value val
 * ("" where missing or null) is not `what`: STALL_EPARSE, err naming
 * "file: line L (byte B): 'event': field 'val' is not what". */
int jev_bad_field(const jev_event *e, const jev_pos *p, const char *field, const char *val,
                  const char *what, stall_err *err);

/* Reads up to n bytes of path's decompressed start into buf (for the
 * probes); returns the count, -1 when it cannot be opened. */
long jev_head(const char *path, char *buf, size_t n);

#endif
