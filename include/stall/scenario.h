/*
 * stall/scenario.h - running a loaded scenario end to end: read the trace,
 * simulate every alignment combination (in parallel threads when asked),
 * write the result folder and print the terminal summary.
 *
 * Output is byte-identical whatever the thread count: each combination is
 * computed independently and written to its own files, and the summary is
 * assembled in combination order after all are done. Input is read and
 * checked before the result folder is touched, so bad input leaves nothing
 * behind; every file is written atomically.
 */
#ifndef STALL_SCENARIO_H
#define STALL_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_run_opts {
    const char *outdir; /* result folder; NULL: results/<name> */
    int jobs;           /* threads for the combinations (>= 1) */
    FILE *term;         /* terminal summary; NULL: none */
} stall_run_opts;

/* Runs cfg (already checked with stall_config_check). Returns 0 or a code. */
int stall_scenario_run(const stall_config *cfg, const stall_run_opts *opts, stall_err *err);

/* Writes <outdir>/effective.ini: the version, the SHA-256 of every input
 * file and the complete effective configuration. */
int stall_scenario_manifest(const stall_config *cfg, const char *outdir, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif
