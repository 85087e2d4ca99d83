/*
 * tidy_num.c - the tidy format's numbers as text (tidy_num.h): exact
 * decimals, with an exponent or not, to integers and ns; byte counts.
 * Moved out of tidy.c (the reader: rows, columns and their checks).
 */
#include "tidy_num.h"

#include <stdlib.h>

/* An exact decimal, optionally with an exponent ("1763700000.123456789",
 * "-0.5", "12", "1.795224177e+09", "4e-06"), times 10^scale (scale 0: the
 * value, 9: ns), to the nearest integer, halves away from zero. Returns 0,
 * -1 when s is not such a number in full, -2 when it is one whose magnitude
 * does not fit (*out then holds its sign: -1 or 1). *exact: no nonzero digit
 * was rounded off. The digits are taken as text, never through a double. */
int tidy_decimal(const char *s, int scale, int64_t *out, bool *exact)
{
    const char *p = s;
    int neg = 0;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    if (!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9'))
        return -1;
    const char *wd = p; /* whole digits */
    while (*p >= '0' && *p <= '9')
        p++;
    int64_t nw = p - wd, nf = 0;
    const char *fd = p; /* fraction digits */
    if (*p == '.') {
        fd = ++p;
        while (*p >= '0' && *p <= '9')
            p++;
        nf = p - fd;
    }
    int64_t exp = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '-' || *p == '+')
            eneg = *p++ == '-';
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        for (; *p >= '0' && *p <= '9'; p++)
            if (exp < INT64_C(1) << 40) /* past any digit count: the same value */
                exp = exp * 10 + (*p - '0');
        if (eneg)
            exp = -exp;
    }
    if (*p != '\0')
        return -1;
    /* Digit i of the digits (whole then fraction) has the weight
     * 10^(point - 1 - i) in value * 10^scale. */
    int64_t n = nw + nf, point = nw + exp + scale;
#define TIDY_DIGIT(i) ((i) < 0 || (i) >= n ? 0 : ((i) < nw ? wd[i] : fd[(i)-nw]) - '0')
    int64_t v = 0;
    for (int64_t i = 0; i < point; i++) {
        int d = TIDY_DIGIT(i);
        if (v == 0 && d == 0 && i >= n)
            break; /* zeros times 10^k */
        if (v > (INT64_MAX - 9) / 10) {
            *out = neg ? -1 : 1;
            return -2;
        }
        v = v * 10 + d;
    }
    if (exact) { /* no nonzero digit from the first one rounded off */
        bool rest = false;
        for (int64_t i = point < 0 ? 0 : point; i < n && !rest; i++)
            rest = TIDY_DIGIT(i) != 0;
        *exact = !rest;
    }
    v += TIDY_DIGIT(point) >= 5;
#undef TIDY_DIGIT
    *out = neg ? -v : v;
    return 0;
}

/* A byte count: decimal text (an exponent allowed), 0 to 1e300; returns 0
 * or -1. strtod alone would also take hexadecimal, "inf" and "nan". */
int tidy_byte_count(const char *s, double *out)
{
    int64_t ignored;
    if (tidy_decimal(s, 0, &ignored, NULL) == -1)
        return -1;
    char *end = NULL;
    double b = strtod(s, &end);
    if (*end != '\0' || !(b >= 0) || b > 1e300)
        return -1;
    *out = b;
    return 0;
}
