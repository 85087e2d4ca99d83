/*
 * stall/htmlreport.h - `stallsim report RESULT_DIR`: one self-contained
 * report.html of a result folder, to open from disk without a server.
 *
 * It draws the folder's figures first (stall_plot), then writes, in this
 * order: a headline (what bounds the run: data-bound, straggler-bound,
 * compute-bound or balanced, analyze.csv's verdict when there is one; how
 * closely a validation reproduces the measured epoch; a sweep's best point
 * and its gain; a plan's answer), the number that matters, and what would
 * change it, only from the folder's own files, else a suggested command
 * marked as one; every SVG figure inline (ids prefixed per figure so that
 * they stay unique), with a note where the figures' curves coincide; what
 * could not be drawn; then the folder's tables, at most 8 key columns each
 * (all columns stay in the CSVs). Every number has 4 significant digits,
 * percentages one decimal, times a unit. CSS is embedded; nothing is loaded
 * from anywhere. All text read from files is HTML-escaped. The result CSVs
 * are only read.
 */
#ifndef STALL_HTMLREPORT_H
#define STALL_HTMLREPORT_H

#include <stdio.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes dir/report.html (atomically), printing what it did to term (may
 * be NULL). Returns 0 or stall_plot's errors (a folder that is no result
 * folder: STALL_EIO), STALL_EIO when a file cannot be read or written. */
int stall_html_report(const char *dir, FILE *term, stall_err *err);

/* Writes s to f with & < > " ' escaped. */
void stall_html_escape(FILE *f, const char *s);

#ifdef __cplusplus
}
#endif
#endif
