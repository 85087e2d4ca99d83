/*
 * fmt.c - exact, fast number text (see stall/fmt.h for the contracts).
 *
 * printf of doubles was over half of a model run's time and much of seed
 * mode's: it converts through multi-precision arithmetic on every call.
 * Here integers are cut into digits two at a time from a 200-byte table,
 * nanoseconds are printed from the integer, and "%.9f" of a double is the
 * integer v * 10^9 rounded half to even: v = M * 2^E with M < 2^53, so
 * M * 10^9 < 2^83 fits a 128-bit integer and the rounding is one shift and
 * one comparison of the bits shifted out. That is exactly what glibc's
 * printf computes (the exact binary value, rounded in the current mode,
 * which the simulator never changes), so the text is the same byte for
 * byte; tests/test_fmt.c holds the two equal over millions of values.
 */
#include "stall/fmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <shortest.h> /* third_party/ryu */

static const char fmt_pairs[201] = "00010203040506070809"
                                   "10111213141516171819"
                                   "20212223242526272829"
                                   "30313233343536373839"
                                   "40414243444546474849"
                                   "50515253545556575859"
                                   "60616263646566676869"
                                   "70717273747576777879"
                                   "80818283848586878889"
                                   "90919293949596979899";

/* u in decimal, no leading zeros ("0" for 0). */
static char *fmt_u64(char *o, uint64_t u)
{
    char tmp[20];
    char *t = tmp + sizeof tmp;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        t -= 2;
        memcpy(t, fmt_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        t -= 2;
        memcpy(t, fmt_pairs + 2 * u, 2);
    } else {
        *--t = (char)('0' + u);
    }
    size_t n = (size_t)(tmp + sizeof tmp - t);
    memcpy(o, t, n);
    return o + n;
}

/* f < 10^9 as exactly nine digits, leading zeros kept. */
static char *fmt_nine(char *o, uint32_t f)
{
    o[8] = (char)('0' + f % 10);
    f /= 10;
    for (int i = 6; i >= 0; i -= 2) {
        memcpy(o + i, fmt_pairs + 2 * (f % 100), 2);
        f /= 100;
    }
    return o + 9;
}

/* "[-]S.nnnnnnnnn" of a magnitude m in nanoseconds. */
static char *fmt_fixed9(char *o, bool neg, uint64_t m)
{
    if (neg)
        *o++ = '-';
    o = fmt_u64(o, m / 1000000000u);
    *o++ = '.';
    return fmt_nine(o, (uint32_t)(m % 1000000000u));
}

char *stall_fmt_i64(char *o, int64_t v)
{
    if (v < 0) {
        *o++ = '-';
        return fmt_u64(o, -(uint64_t)v);
    }
    return fmt_u64(o, (uint64_t)v);
}

char *stall_fmt_ns(char *o, stall_time ns)
{
    return fmt_fixed9(o, ns < 0, ns < 0 ? -(uint64_t)ns : (uint64_t)ns);
}

/* |v| * 10^9 rounded half to even, for finite |v| < 9.2e9. */
static uint64_t fmt_round_mag_e9(double v)
{
    v = fabs(v);
    if (v == 0.0)
        return 0;
    int e;
    double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
    uint64_t M = (uint64_t)ldexp(m, 53);
    int shift = 53 - e; /* v = M * 2^-shift; e <= 34, so shift >= 19 */
    unsigned __int128 p = (unsigned __int128)M * 1000000000u; /* < 2^83 */
    if (shift >= 84)
        return 0; /* p * 2^-shift < 2^-1: rounds to zero */
    uint64_t q = (uint64_t)(p >> shift);
    unsigned __int128 rest = p & (((unsigned __int128)1 << shift) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (shift - 1);
    if (rest > half || (rest == half && (q & 1)))
        q++;
    return q;
}

#define FMT_E9_LIMIT 9.2e9

int stall_round_e9(double v, int64_t *n)
{
    if (!(fabs(v) < FMT_E9_LIMIT)) /* also NaN */
        return -1;
    uint64_t q = fmt_round_mag_e9(v);
    *n = signbit(v) ? -(int64_t)q : (int64_t)q;
    return 0;
}

char *stall_fmt_f9(char *o, double v)
{
    if (!(fabs(v) < FMT_E9_LIMIT)) {
        int n = snprintf(o, STALL_FMT_MAX, "%.9f", v);
        return o + (n < STALL_FMT_MAX ? n : STALL_FMT_MAX - 1);
    }
    return fmt_fixed9(o, signbit(v), fmt_round_mag_e9(v));
}

char *stall_fmt_repr(char *o, double v)
{
    if (isnan(v)) {
        memcpy(o, "nan", 3);
        return o + 3;
    }
    if (isinf(v)) {
        const char *s = v < 0 ? "-inf" : "inf";
        size_t n = strlen(s);
        memcpy(o, s, n);
        return o + n;
    }
    if (v == 0.0) {
        const char *s = signbit(v) ? "-0.0" : "0.0";
        size_t n = strlen(s);
        memcpy(o, s, n);
        return o + n;
    }
    if (signbit(v))
        *o++ = '-';
    uint64_t m;
    int32_t e;
    ryu_shortest(v, &m, &e); /* |v| reads back from m * 10^e, m shortest */
    char digits[24];
    int nd = (int)(fmt_u64(digits, m) - digits);
    int exp10 = nd - 1 + e; /* of the first digit */
    int decpt = exp10 + 1;  /* digits d1d2... mean 0.d1d2... x 10^decpt */
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -decpt; i++)
                *o++ = '0';
            memcpy(o, digits, (size_t)nd);
            return o + nd;
        }
        for (int i = 0; i < decpt; i++)
            *o++ = i < nd ? digits[i] : '0';
        *o++ = '.';
        if (nd > decpt) {
            memcpy(o, digits + decpt, (size_t)(nd - decpt));
            return o + (nd - decpt);
        }
        *o++ = '0';
        return o;
    }
    *o++ = digits[0];
    if (nd > 1) {
        *o++ = '.';
        memcpy(o, digits + 1, (size_t)(nd - 1));
        o += nd - 1;
    }
    /* Python: a signed exponent of at least two digits. */
    int x = exp10 < 0 ? -exp10 : exp10;
    *o++ = 'e';
    *o++ = exp10 < 0 ? '-' : '+';
    if (x >= 100)
        *o++ = (char)('0' + x / 100);
    memcpy(o, fmt_pairs + 2 * (x % 100), 2);
    return o + 2;
}

char *stall_repr(char *buf, double v)
{
    *stall_fmt_repr(buf, v) = '\0';
    return buf;
}

void stall_put_double(FILE *f, double v)
{
    char buf[STALL_REPR_MAX];
    char *e = stall_fmt_repr(buf, v);
    fwrite(buf, 1, (size_t)(e - buf), f);
}

/* ---- batched row output ---- */

void stall_out_init(stall_out *w, FILE *f)
{
    w->f = f;
    w->o = w->buf;
}

void stall_out_flush(stall_out *w)
{
    if (w->o > w->buf)
        fwrite(w->buf, 1, (size_t)(w->o - w->buf), w->f);
    w->o = w->buf;
}

char *stall_out_room(stall_out *w)
{
    if (w->o > w->buf + sizeof w->buf - STALL_OUT_ROOM)
        stall_out_flush(w);
    return w->o;
}

void stall_out_str(stall_out *w, const char *s)
{
    size_t n = strlen(s);
    if ((size_t)(w->buf + sizeof w->buf - w->o) < n + STALL_OUT_ROOM) {
        stall_out_flush(w);
        if (n + STALL_OUT_ROOM > sizeof w->buf) {
            fwrite(s, 1, n, w->f);
            return;
        }
    }
    memcpy(w->o, s, n);
    w->o += n;
}
