/*
 * tidy_num.h - private to formats/: the tidy trace's numbers as text
 * (tidy_num.c); tidy.c gives tidy_seconds as stall_parse_seconds_ns.
 */
#ifndef STALL_FORMATS_TIDY_NUM_H
#define STALL_FORMATS_TIDY_NUM_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

/* An exact decimal, an exponent allowed, times 10^scale, to the nearest
 * integer, halves away from zero: 0, -1 (not such a number), -2 (its
 * magnitude does not fit; *out holds its sign). *exact (may be NULL): no
 * nonzero digit rounded off. */
int tidy_decimal(const char *s, int scale, int64_t *out, bool *exact);

/* A byte count: decimal text (an exponent allowed), 0 to 1e300; 0 or -1. */
int tidy_byte_count(const char *s, double *out);

/* Seconds to ns (tidy_decimal's rule): plain "[-+]digits[.digits]", the
 * text a capture writes, read in one pass; anything else, an exponent
 * included, by tidy_decimal. Inline: it reads every time field of a trace,
 * the hot path of a 1 M-row read. */
static inline int tidy_seconds(const char *s, stall_time *ns)
{
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    int64_t whole = 0;
    const char *w0 = p;
    for (; *p >= '0' && *p <= '9' && p - w0 < 10; p++)
        whole = whole * 10 + (*p - '0');
    int64_t frac = 0;
    int digits = 0, round_up = 0;
    if (*p == '.' && p > w0) {
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (digits < 9) {
                frac = frac * 10 + (*p - '0');
                digits++;
            } else if (digits == 9) {
                round_up = *p >= '5';
                digits++;
            }
        }
    }
    /* more whole digits than int64 ns surely holds, an exponent, not a number */
    if (p == w0 || *p != '\0' || whole > INT64_MAX / STALL_NS_PER_S - 1)
        return tidy_decimal(s, 9, ns, NULL);
    for (int d = digits < 9 ? digits : 9; d < 9; d++)
        frac *= 10;
    int64_t v = whole * STALL_NS_PER_S + frac + round_up;
    *ns = neg ? -v : v;
    return 0;
}

#endif
