/*
 * stall/htmlreport.h - `stallsim report RESULT_DIR`: one self-contained
 * report.html of a result folder, to open from disk without a server.
 *
 * It draws the folder's figures first (stall_plot), then writes the
 * summary table(s) of the folder's kind as HTML tables, the verdict of
 * analyze.csv when there is one, what could not be drawn, and every SVG
 * figure inline (ids prefixed per figure so that they stay unique). CSS is
 * embedded; nothing is loaded from anywhere. All text read from files is
 * HTML-escaped.
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
