/*
 * htmlfmt.h - (private to outputs/) the report's one way of writing a
 * number, and HTML escaping. Every number on report.html goes through
 * hf_fmt, so that the page reads with the same digits everywhere:
 *
 *   HF_NUM    4 significant digits, trailing zeros kept, no exponent
 *             (2451, 710.3, 1.000, 0.03742); from 10,000 up with k, M, G
 *             (35.16 k); exactly 0 as "0"
 *   HF_INT    an integer as is (gpus, workers, points)
 *   HF_SHARE  a fraction as a percentage with one decimal (0.6952 -> 69.5%)
 *   HF_PCT    a percentage with one decimal (43.74 -> 43.7%)
 *   HF_DPCT   a signed change in percent, one decimal (+0.1%, -40.9%, 0.0%)
 *   HF_TIME   seconds with a unit and 4 significant digits: s from 1 s (up
 *             to 9999 s, then h), ms, us (as the micro sign), ns
 *   HF_RATIO  a factor: 4 significant digits and "x" (3.131x)
 *
 * NaN (an empty cell) is written as an en dash.
 */
#ifndef STALL_OUTPUTS_HTMLFMT_H
#define STALL_OUTPUTS_HTMLFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum hf_unit { HF_NUM, HF_INT, HF_SHARE, HF_PCT, HF_DPCT, HF_TIME, HF_RATIO } hf_unit;

/* Room enough for any hf_fmt text. */
#define HF_LEN 48

/* Writes v in unit u into buf (HF_LEN bytes) and returns buf. */
const char *hf_fmt(char *buf, double v, hf_unit u);

/* A share as hf_fmt writes it, but one below target that its one decimal
 * would round up to the target or past it (0.79958 beside 0.8: "80.0%")
 * is cut to the decimal below ("79.9%"), so that it does not read as
 * meeting a target it misses. */
const char *hf_share_below(char *buf, double v, double target);

/* The unit a result-CSV column is shown in, from its name: *_share and
 * efficiency as shares, vs_measured_pct and *error_pct as signed changes,
 * other *_pct as percentages, throughput_* (per second) and the rest as
 * numbers, other *_s as times. */
hf_unit hf_unit_of(const char *column);

/* Writes s to f with & < > " ' escaped. */
void hf_escape(FILE *f, const char *s);

/* True when dir/name can be opened for reading. */
bool hf_has(const char *dir, const char *name);

#endif
