/*
 * stall/detect.h - what kind of file a path is, from its content: an INI
 * scenario, a tidy trace, one of the notebook's (dsanalyzer) three CSVs,
 * whose two companions are found beside it by their suffixes, a PyTorch
 * profiler (Kineto) trace or a DLIO (dftracer) trace, gzipped or not, or a
 * folder of per-rank Kineto or dftracer files.
 *
 * Every command that takes a trace takes a path through this one function;
 * a reader of a new format (Kineto, DLIO/dftracer...) adds its kind here,
 * recognised from the first bytes of the file.
 */
#ifndef STALL_DETECT_H
#define STALL_DETECT_H

#include <stdbool.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_DETECT_PATH_MAX 1024

typedef enum stall_trace_kind {
    STALL_TRACE_UNKNOWN = 0,
    STALL_TRACE_INI,        /* a scenario INI */
    STALL_TRACE_TIDY,       /* rank,epoch,batch,... (formats/tidy.c) */
    STALL_TRACE_DSANALYZER, /* the notebook's perf, fetch-time and fetch-start CSVs */
    STALL_TRACE_KINETO,     /* PyTorch profiler traces (stall/kineto.h): a file or a folder */
    STALL_TRACE_DFTRACER,   /* DLIO dftracer traces (stall/dftracer.h): a file or a folder */
} stall_trace_kind;

typedef struct stall_trace_detected {
    stall_trace_kind kind;
    /* dsanalyzer: the three files (the one given and its companions). */
    char fetch[STALL_DETECT_PATH_MAX], start[STALL_DETECT_PATH_MAX], perf[STALL_DETECT_PATH_MAX];
    /* tidy: the header has a workers, prefetch column. */
    bool has_workers, has_prefetch;
    /* tidy: the prefetch column's value on the first row; -1 when there is
     * no column or no whole first row. */
    int prefetch;
    /* What the file is, for the one line a command prints, e.g. "a tidy
     * trace" or "the notebook's perf CSV". */
    char what[96];
    /* STALL_TRACE_UNKNOWN: true when the input was read and its content is
     * no format stallsim reads (the error says what was expected); false
     * when the error is about an input recognised or not readable (a folder
     * without traces, a notebook CSV without its companions, a gzip of
     * none of the JSON traces, a path that cannot be opened). */
    bool unrecognised;
} stall_trace_detected;

/* Detects path's kind from its first line (a UTF-8 byte order mark, CRLF and
 * pandas' unnamed index column allowed); for a dsanalyzer CSV, finds its
 * companions beside it (STEM.csv, STEM_simp_fetchdifftime.csv,
 * STEM_simp_fetchstartdifftime.csv). Returns the kind, or
 * STALL_TRACE_UNKNOWN with err set (STALL_EIO: cannot read; STALL_EPARSE:
 * not a format stallsim reads, or a companion missing), one line naming the
 * file and what was expected. */
stall_trace_kind stall_trace_detect(const char *path, stall_trace_detected *out, stall_err *err);

/* True when dir is a folder the capture tool wrote (tools/stallsim_capture.py,
 * tools/train_example.py: trace.csv beside meta.json and a README) and holds
 * no profiler or dftracer files: *csv gets dir/trace.csv, the trace to read
 * (its meta.json is the capture's facts, not a PyTorch profiler trace). */
bool stall_trace_capture_folder(const char *dir, char *csv, size_t n);

#ifdef __cplusplus
}
#endif
#endif
