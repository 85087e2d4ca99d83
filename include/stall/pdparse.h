/*
 * pdparse.h - text and unit conversions exactly as pandas 1.5 does them
 * (formats/pdparse.c; the dsanalyzer reader and seed mode share it).
 *
 * The seed notebook read its CSVs with pandas 1.5's C parser and converted
 * seconds to nanoseconds with pandas' own routines. To reproduce its numbers
 * bit for bit (docs/model.md section 4.3), these functions
 * emulate those routines, including where they are not correctly rounded.
 */
#ifndef STALL_PDPARSE_H
#define STALL_PDPARSE_H

#include "stall/base.h"

/* Parses a decimal number as pandas 1.5's precise_xstrtod (read_csv's
 * default float parser) does: skips leading ASCII white space and an
 * optional sign, accumulates at most 17 digits (leading zeros count) as
 * n = n*10 + d in double, drops further digits (integer digits beyond the
 * 17th still scale the exponent), applies an optional [eE][+-]digits
 * exponent, then does one multiplication or division by a correctly rounded
 * power of ten (two divisions below 1e-308). Trailing white space is skipped
 * too, as pandas does with skip_trailing.
 *
 * On success *end (when end is not NULL) points after the number and its
 * trailing white space; the caller checks that it reached the end of the
 * field. With no digits, returns 0.0 and sets *end = s. A decimal exponent
 * above 308 returns +-HUGE_VAL. "nan" and "inf" are not numbers here.
 * The result can differ from strtod's by an ulp or more: that is the point. */
double stall_pd_strtod(const char *s, char **end);

/* Parses "YYYY-MM-DD HH:MM:SS.f" (4-digit year, 2-digit fields, 1 to 9
 * fractional digits, nothing before or after) as a naive time taken as UTC,
 * into ns since the Unix epoch. Checks month 1-12, the day against the
 * month (Gregorian leap years), hour 0-23, minute and second 0-59, and the
 * pandas Timestamp range (INT64_MIN is pandas' NaT, so it is refused).
 * Returns 0, or -1 leaving *ns untouched. */
int stall_parse_timestamp(const char *s, stall_time *ns);

/* Seconds to ns as pandas' vector path (pd.to_timedelta on a float Series)
 * does: b = trunc(x), fr = rint((x - b) * 1e9) / 1e9 (numpy's round to 9
 * decimals), ns = b * 10^9 + trunc(fr * 1e9). Returns 0, or -1 when x is not
 * finite or |x| >= 9223372035 s (the result would not fit in int64). */
int stall_pd_s_to_ns_vec(double x, stall_time *ns);

/* The same through pandas' scalar path (pd.to_timedelta on one float):
 * identical except that fr = round(x - b, 9) is Python's correctly rounded
 * round(), done here as "%.9f" formatting read back with strtod. */
int stall_pd_s_to_ns_scalar(double x, stall_time *ns);

#endif
