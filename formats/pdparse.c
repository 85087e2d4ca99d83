/*
 * pdparse.c - pandas 1.5's number, timestamp and seconds-to-ns conversions.
 *
 * Purpose: the seed notebook's results depend on how pandas 1.5 parsed its
 * CSV floats (precise_xstrtod, not correctly rounded for 16-17 digits) and
 * how it turned float seconds into int64 nanoseconds (two slightly different
 * routines for Series and scalars). These functions reproduce both, from the
 * descriptions in docs/model.md section 4.3 and pandas' tokenizer.c.
 *
 * Invariants: no state; the only table is the const table of powers of ten,
 * each written as a decimal literal, which the C compiler rounds correctly.
 * Every function is O(length of its input).
 */
#include "stall/pdparse.h"

#include "stall/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* 10^0 .. 10^308, correctly rounded: the table pandas multiplies or divides
 * by once at the end of a parse. */
static const double pd_pow10[309] = {
    1e0,   1e1,   1e2,   1e3,   1e4,   1e5,   1e6,   1e7,   1e8,   1e9,   1e10,  1e11,  1e12,
    1e13,  1e14,  1e15,  1e16,  1e17,  1e18,  1e19,  1e20,  1e21,  1e22,  1e23,  1e24,  1e25,
    1e26,  1e27,  1e28,  1e29,  1e30,  1e31,  1e32,  1e33,  1e34,  1e35,  1e36,  1e37,  1e38,
    1e39,  1e40,  1e41,  1e42,  1e43,  1e44,  1e45,  1e46,  1e47,  1e48,  1e49,  1e50,  1e51,
    1e52,  1e53,  1e54,  1e55,  1e56,  1e57,  1e58,  1e59,  1e60,  1e61,  1e62,  1e63,  1e64,
    1e65,  1e66,  1e67,  1e68,  1e69,  1e70,  1e71,  1e72,  1e73,  1e74,  1e75,  1e76,  1e77,
    1e78,  1e79,  1e80,  1e81,  1e82,  1e83,  1e84,  1e85,  1e86,  1e87,  1e88,  1e89,  1e90,
    1e91,  1e92,  1e93,  1e94,  1e95,  1e96,  1e97,  1e98,  1e99,  1e100, 1e101, 1e102, 1e103,
    1e104, 1e105, 1e106, 1e107, 1e108, 1e109, 1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116,
    1e117, 1e118, 1e119, 1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
    1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139, 1e140, 1e141, 1e142,
    1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149, 1e150, 1e151, 1e152, 1e153, 1e154, 1e155,
    1e156, 1e157, 1e158, 1e159, 1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168,
    1e169, 1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179, 1e180, 1e181,
    1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189, 1e190, 1e191, 1e192, 1e193, 1e194,
    1e195, 1e196, 1e197, 1e198, 1e199, 1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207,
    1e208, 1e209, 1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219, 1e220,
    1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229, 1e230, 1e231, 1e232, 1e233,
    1e234, 1e235, 1e236, 1e237, 1e238, 1e239, 1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246,
    1e247, 1e248, 1e249, 1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
    1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269, 1e270, 1e271, 1e272,
    1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279, 1e280, 1e281, 1e282, 1e283, 1e284, 1e285,
    1e286, 1e287, 1e288, 1e289, 1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298,
    1e299, 1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
};

/* pandas' isspace_ascii: space, \t, \n, \v, \f, \r. */
static int pd_isspace(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static int pd_isdigit(char c)
{
    return c >= '0' && c <= '9';
}

/* n * 10 + d with two roundings, as pandas computes it. Two statements, so
 * that a compiler contracting expressions (clang's default) cannot fuse them
 * into one fma, which would round once and change the last bit. */
static double pd_shift_in(double n, char digit)
{
    double tens = n * 10.0;
    return tens + (double)(digit - '0');
}

double stall_pd_strtod(const char *s, char **end)
{
    enum { PD_MAX_DIGITS = 17 };
    const char *p = s;
    while (pd_isspace(*p))
        p++;
    int negative = 0;
    if (*p == '-' || *p == '+') {
        negative = *p == '-';
        p++;
    }
    double number = 0.0;
    int64_t exponent = 0;
    int num_digits = 0, num_decimals = 0;
    /* Integer part: digits past the 17th only scale the exponent. */
    for (; pd_isdigit(*p); p++) {
        if (num_digits < PD_MAX_DIGITS) {
            number = pd_shift_in(number, *p);
            num_digits++;
        } else {
            exponent++;
        }
    }
    if (*p == '.') {
        p++;
        while (num_digits < PD_MAX_DIGITS && pd_isdigit(*p)) {
            number = pd_shift_in(number, *p);
            num_digits++;
            num_decimals++;
            p++;
        }
        /* Decimals past the 17th digit are dropped without rounding. */
        while (pd_isdigit(*p))
            p++;
        exponent -= num_decimals;
    }
    if (num_digits == 0) {
        if (end)
            *end = (char *)s;
        return 0.0;
    }
    if (negative)
        number = -number;
    if (*p == 'e' || *p == 'E') {
        const char *e = p++;
        int eneg = 0;
        if (*p == '-' || *p == '+') {
            eneg = *p == '-';
            p++;
        }
        int64_t n = 0;
        int ndig = 0;
        /* pandas reads at most 17 exponent digits (leading zeros count). */
        while (ndig < PD_MAX_DIGITS && pd_isdigit(*p)) {
            n = n * 10 + (*p - '0');
            ndig++;
            p++;
        }
        if (ndig == 0)
            p = e; /* a bare 'e' is not part of the number */
        else
            exponent += eneg ? -n : n;
    }
    if (exponent > 308) {
        number = negative ? -HUGE_VAL : HUGE_VAL;
    } else if (exponent >= 0) {
        number *= pd_pow10[exponent];
    } else if (exponent < -308) {
        if (exponent < -616) {
            number = 0.0; /* pandas returns +0 here, whatever the sign */
        } else {
            number /= pd_pow10[-308 - exponent];
            number /= pd_pow10[308];
        }
    } else {
        number /= pd_pow10[-exponent];
    }
    while (pd_isspace(*p))
        p++;
    if (end)
        *end = (char *)p;
    return number;
}

/* Reads exactly `n` ASCII digits at s into *out. */
static int pd_digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!pd_isdigit(s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static int pd_is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (H. Hinnant's days_from_civil). */
static int64_t pd_days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

int stall_parse_timestamp(const char *s, stall_time *ns)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, sec;
    /* Fixed layout: "YYYY-MM-DD HH:MM:SS." is 20 characters. */
    if (pd_digits(s, 4, &y) || s[4] != '-' || pd_digits(s + 5, 2, &mo) || s[7] != '-' ||
        pd_digits(s + 8, 2, &d) || s[10] != ' ' || pd_digits(s + 11, 2, &h) || s[13] != ':' ||
        pd_digits(s + 14, 2, &mi) || s[16] != ':' || pd_digits(s + 17, 2, &sec) || s[19] != '.')
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59)
        return -1;
    if (d > mdays[mo - 1] + (mo == 2 && pd_is_leap(y)))
        return -1;
    const char *f = s + 20;
    int64_t frac = 0;
    int nf = 0;
    for (; pd_isdigit(f[nf]); nf++) {
        if (nf == 9)
            return -1;
        frac = frac * 10 + (f[nf] - '0');
    }
    if (nf == 0 || f[nf] != '\0')
        return -1;
    for (int i = nf; i < 9; i++)
        frac *= 10;
    /* Seconds fit easily (|secs| < 2^39 for 4-digit years); the ns may not. */
    int64_t secs =
        pd_days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + sec;
    /* Before 1970, (secs + 1) * 10^9 - (10^9 - frac) avoids an intermediate
     * below INT64_MIN for the earliest valid times. */
    if (secs < 0) {
        secs += 1;
        frac -= STALL_NS_PER_S;
    }
    int64_t v;
    if (__builtin_mul_overflow(secs, STALL_NS_PER_S, &v) || __builtin_add_overflow(v, frac, &v) ||
        v == INT64_MIN)
        return -1;
    *ns = v;
    return 0;
}

/* Shared tail of both paths: b * 10^9 + trunc(fr * 1e9). */
static int pd_s_to_ns(double x, int scalar, stall_time *ns)
{
    if (!(fabs(x) < 9223372035.0)) /* also false for NaN */
        return -1;
    int64_t b = (int64_t)x;
    double fr = x - (double)b;
    if (scalar) {
        /* Python's round(fr, 9): the correctly rounded 9-decimal text, read
         * back correctly rounded. That text is the integer n = fr * 10^9
         * rounded half to even on fr's exact value (stall_round_e9), and
         * reading n / 10^9 back correctly rounded is the IEEE quotient of
         * the exact doubles n (< 2^30) and 1e9. */
        int64_t n = 0;
        stall_round_e9(fr, &n); /* |fr| < 1: cannot fail */
        fr = (double)n / 1e9;
    } else {
        fr = rint(fr * 1e9) / 1e9; /* numpy's np.round(fr, 9) */
    }
    *ns = b * STALL_NS_PER_S + (int64_t)(fr * 1e9);
    return 0;
}

int stall_pd_s_to_ns_vec(double x, stall_time *ns)
{
    return pd_s_to_ns(x, 0, ns);
}

int stall_pd_s_to_ns_scalar(double x, stall_time *ns)
{
    return pd_s_to_ns(x, 1, ns);
}
