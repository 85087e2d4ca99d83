/*
 * htmlheadline.h - (private to outputs/) the headline of report.html: what
 * bounds the run, the number that matters and what would change it, read
 * from the result folder's own files only (the rule: htmlheadline.c,
 * hl_rule; docs/model.md). Also the note that says when the figures' lines
 * coincide.
 */
#ifndef STALL_OUTPUTS_HTMLHEADLINE_H
#define STALL_OUTPUTS_HTMLHEADLINE_H

#include <stdio.h>

#include "stall/base.h"
#include "stall/plot.h"

/* Writes the headline block of result folder dir (of kind k). Returns 0,
 * or the error of reading a malformed result file. */
int hl_headline(FILE *f, const char *dir, stall_result_kind k, stall_err *err);

/* Writes a note when the figures' curves lie within hl_rule's flat share
 * of each other (alignments of a run, points of a sweep); nothing else. */
void hl_coincide(FILE *f, const char *dir, stall_result_kind k);

/* The relative spread under which lines coincide (HL_FLAT, a fraction). */
double hl_flat(void);

/* A [plan] key of a plan folder's effective.ini ("key = value"), or NAN
 * (no such key, file or folder). */
double hl_plan_key(const char *dir, const char *key);

#endif
