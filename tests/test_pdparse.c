/* pdparse: pandas 1.5's float parser, timestamps and seconds-to-ns paths.
 *
 * Expected floats are computed from the definition of precise_xstrtod
 * (digits accumulated in double, one scaling by a power of ten) written out
 * by hand for each case, and cross-checked with hex literals produced by an
 * independent Python emulation; each case also shows that strtod differs. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/pdparse.h"

#define GOLDEN_FETCH                                                                               \
    STALL_SOURCE_DIR "/tests/golden/seed-case1/input/fsNprepNloadNtrain_Imagenet_default_"         \
                     "resnet50_epoch1_b2048_worker12_thread0_simp_fetchdifftime.csv"

static double pd(const char *s)
{
    char *end;
    double v = stall_pd_strtod(s, &end);
    cr_assert_eq(*end, '\0', "\"%s\" not consumed, stopped at \"%s\"", s, end);
    return v;
}

Test(pdparse, sixteen_digits_above_2p53_round_while_accumulating)
{
    /* 9251980909236117 > 2^53: the last n*10 + d step rounds. From the golden input. */
    double n = 925198090923611.0; /* exact */
    n = n * 10.0;                 /* rounds: above 2^53 */
    n = n + 7.0;
    double want = n / 1e15;
    double got = pd("9.251980909236117");
    cr_assert_eq(got, want, "got %a want %a", got, want);
    cr_assert_eq(got, 0x1.28103a448c55bp+3, "got %a", got);
    cr_assert_neq(got, strtod("9.251980909236117", NULL), "strtod agrees: %a", got);
}

Test(pdparse, leading_zero_counts_as_a_digit)
{
    /* "0" + 16 decimals fill the 17 digits; the final '7' is dropped. */
    double want = 1234567890123456.0 / 1e16;
    double got = pd("0.12345678901234567");
    cr_assert_eq(got, want, "got %a want %a", got, want);
    cr_assert_eq(got, 0x1.f9add3746f659p-4, "got %a", got);
    cr_assert_neq(got, strtod("0.12345678901234567", NULL), "strtod agrees: %a", got);
}

Test(pdparse, digits_after_the_17th_are_dropped_not_rounded)
{
    double got = pd("0.30000000000000004");
    cr_assert_eq(got, 3000000000000000.0 / 1e16, "got %a", got);
    cr_assert_eq(got, 0.3, "got %.17g", got);
    cr_assert_eq(strtod("0.30000000000000004", NULL), 0.1 + 0.2);
}

Test(pdparse, twenty_leading_zeros_read_as_zero)
{
    /* 17 zeros fill the digits; "001" only scales the exponent; ".5" is dropped. */
    double got = pd("00000000000000000001.5");
    cr_assert_eq(got, 0.0, "got %.17g", got);
}

Test(pdparse, integer_digits_past_17_scale_the_exponent)
{
    double got = pd("123456789012345678901e-3");
    cr_assert_eq(got, 0x1.b69b4ba630f35p+56, "got %a", got);
    double n = 0;
    for (const char *p = "12345678901234567"; *p; p++) {
        n = n * 10.0;
        n = n + (*p - '0');
    }
    cr_assert_eq(got, n * 1e1, "got %a want %a", got, n * 1e1);
}

Test(pdparse, random_16_digit_values_are_n_over_1e15)
{
    /* Below 2^53 the accumulation is exact, so the result is the correctly
     * rounded quotient n / 1e15 (which strtod does not always give). */
    srand(42);
    int differ = 0;
    for (int i = 0; i < 100000; i++) {
        int64_t n = 1000000000000000 + ((int64_t)rand() * RAND_MAX + rand()) % 8000000000000000;
        char s[32];
        snprintf(s, sizeof s, "%lld", (long long)n);
        memmove(s + 2, s + 1, strlen(s + 1) + 1); /* with the NUL */
        s[1] = '.';
        double want = (double)n / 1e15, got = pd(s);
        cr_assert_eq(got, want, "%s: got %a want %a", s, got, want);
        differ += got != strtod(s, NULL);
    }
    cr_assert_eq(differ, 0, "16 digits below 2^53 never differ from strtod, %d did", differ);
}

Test(pdparse, random_17_digit_values_round_twice)
{
    srand(43);
    int differ = 0;
    for (int i = 0; i < 100000; i++) {
        int64_t n16 = 1000000000000000 + ((int64_t)rand() * RAND_MAX + rand()) % 8000000000000000;
        int d = rand() % 10;
        char s[40];
        snprintf(s, sizeof s, "%lld%d", (long long)n16, d);
        memmove(s + 2, s + 1, strlen(s + 1) + 1); /* with the NUL */
        s[1] = '.';
        double tens = (double)n16 * 10.0; /* two roundings, never one fma */
        double want = (tens + d) / 1e16, got = pd(s);
        cr_assert_eq(got, want, "%s: got %a want %a", s, got, want);
        differ += got != strtod(s, NULL);
    }
    cr_assert_gt(differ, 1000, "17-digit values should often differ from strtod, %d did", differ);
}

Test(pdparse, exponent_forms)
{
    cr_assert_eq(pd("1.5e3"), 1500.0);
    cr_assert_eq(pd("2.5E-3"), 25.0 / 1e4, "got %a", pd("2.5E-3"));
    cr_assert_eq(pd("-7e+0"), -7.0);
    cr_assert_eq(pd("+.5"), 0.5);
    cr_assert_eq(pd("5."), 5.0);
    char *end;
    const char *s = "1e";
    cr_assert_eq(stall_pd_strtod(s, &end), 1.0);
    cr_assert_eq(end, s + 1, "a bare 'e' is not consumed: end at offset %td", end - s);
}

Test(pdparse, subnormal_divides_twice_and_overflow_is_huge)
{
    double got = pd("1e-320"), want = (1.0 / 1e12) / 1e308;
    cr_assert_eq(got, want, "got %a want %a", got, want);
    cr_assert_eq(pd("1e-700"), 0.0);
    cr_assert(isinf(pd("1e309")), "got %g", pd("1e309"));
    cr_assert_eq(pd("-0"), 0.0);
    cr_assert(signbit(pd("-0")), "-0 keeps its sign");
}

Test(pdparse, white_space_around_is_skipped)
{
    cr_assert_eq(pd("  3.25 \t"), 3.25);
    char *end;
    const char *s = "3.25x";
    cr_assert_eq(stall_pd_strtod(s, &end), 3.25);
    cr_assert_eq(*end, 'x', "stopped at \"%s\"", end);
}

Test(pdparse, no_digits_returns_zero_and_end_at_start)
{
    const char *bad[] = {"", "abc", "-", ".", "nan", "inf", "e5", " "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *end = NULL;
        double v = stall_pd_strtod(bad[i], &end);
        cr_assert_eq(v, 0.0, "\"%s\" gave %g", bad[i], v);
        cr_assert_eq(end, bad[i], "\"%s\": end moved by %td", bad[i], end - bad[i]);
    }
}

Test(pdparse, golden_fetch_csv_has_67_values_off_strtod)
{
    /* Counted independently by a Python emulation of precise_xstrtod. */
    FILE *f = fopen(GOLDEN_FETCH, "r");
    cr_assert_not_null(f, "cannot open %s", GOLDEN_FETCH);
    char line[512];
    int values = 0, differ = 0;
    cr_assert(fgets(line, sizeof line, f));
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *save = NULL, *tok = strtok_r(line, ",", &save);
        for (int col = 0; tok; col++, tok = strtok_r(NULL, ",", &save))
            if (col >= 3) {
                values++;
                differ += pd(tok) != strtod(tok, NULL);
            }
    }
    fclose(f);
    cr_assert_eq(values, 3400, "values %d", values);
    cr_assert_eq(differ, 67, "values differing from strtod: %d", differ);
}

/* ---- timestamps ---------------------------------------------------------- */

static stall_time ts_ok(const char *s)
{
    stall_time v = 12345;
    cr_assert_eq(stall_parse_timestamp(s, &v), 0, "\"%s\" rejected", s);
    return v;
}

Test(timestamp, golden_value_with_microseconds)
{
    stall_time v = ts_ok("2021-09-01 19:48:46.731757");
    cr_assert_eq(v, INT64_C(1630525726731757000), "got %lld", (long long)v);
}

Test(timestamp, nine_fractional_digits_are_nanoseconds)
{
    stall_time v = ts_ok("2020-02-29 23:59:59.999999999");
    cr_assert_eq(v, INT64_C(1583020799999999999), "got %lld", (long long)v);
    v = ts_ok("1970-01-01 00:00:00.000000001");
    cr_assert_eq(v, 1, "got %lld", (long long)v);
}

Test(timestamp, one_fractional_digit_is_tenths)
{
    stall_time v = ts_ok("2000-02-29 12:00:00.5");
    cr_assert_eq(v, INT64_C(951825600500000000), "got %lld", (long long)v);
}

Test(timestamp, before_1970_is_negative)
{
    stall_time v = ts_ok("1969-12-31 23:59:59.9");
    cr_assert_eq(v, -100000000, "got %lld", (long long)v);
}

Test(timestamp, leap_years_follow_the_gregorian_rule)
{
    ts_ok("2000-02-29 00:00:00.0"); /* divisible by 400 */
    ts_ok("2024-02-29 00:00:00.0"); /* divisible by 4 */
    stall_time v = 7;
    cr_assert_eq(stall_parse_timestamp("1900-02-29 00:00:00.0", &v), -1, "1900 is no leap year");
    cr_assert_eq(stall_parse_timestamp("2021-02-29 00:00:00.0", &v), -1, "2021 is no leap year");
    cr_assert_eq(stall_parse_timestamp("2021-04-31 00:00:00.0", &v), -1, "April has 30 days");
    cr_assert_eq(v, 7, "rejects leave the output untouched, got %lld", (long long)v);
    v = ts_ok("2024-12-31 23:59:59.1");
    cr_assert_eq(v, INT64_C(1735689599100000000), "got %lld", (long long)v);
}

Test(timestamp, rejects_malformed_text)
{
    const char *bad[] = {
        "2021-09-01 19:48:46",            /* no fraction: the seed crashes (Q4) */
        "2021-09-01 19:48:46.",           /* empty fraction */
        "2021-09-01 19:48:46.1234567890", /* 10 digits */
        "2021-09-01T19:48:46.1",          /* ISO 'T' */
        "2021-13-01 19:48:46.1",
        "2021-00-01 19:48:46.1",
        "2021-09-00 19:48:46.1",
        "2021-09-01 24:00:00.1",
        "2021-09-01 19:60:46.1",
        "2021-09-01 19:48:60.1",
        "2021-9-01 19:48:46.1",
        " 2021-09-01 19:48:46.1",
        "2021-09-01 19:48:46.1 ",
        "2021-09-01 19:48:46.1x",
        "abc",
        "",
        "21-09-01 19:48:46.1",
        "2021-09-01 19:48:46,1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stall_time v = 0;
        cr_assert_eq(stall_parse_timestamp(bad[i], &v), -1, "\"%s\" accepted as %lld", bad[i],
                     (long long)v);
    }
}

Test(timestamp, range_is_pandas_timestamp_range)
{
    stall_time v = ts_ok("2262-04-11 23:47:16.854775807");
    cr_assert_eq(v, INT64_MAX, "got %lld", (long long)v);
    v = ts_ok("1677-09-21 00:12:43.145224193");
    cr_assert_eq(v, -INT64_MAX, "got %lld", (long long)v);
    cr_assert_eq(stall_parse_timestamp("2262-04-11 23:47:16.854775808", &v), -1, "overflow");
    cr_assert_eq(stall_parse_timestamp("1677-09-21 00:12:43.145224192", &v), -1,
                 "INT64_MIN is pandas' NaT");
    cr_assert_eq(stall_parse_timestamp("9999-12-31 23:59:59.9", &v), -1, "far future");
}

/* ---- seconds to ns -------------------------------------------------------- */

Test(s_to_ns, truncation_gives_one_ns_less_than_llround)
{
    /* Expected values from the definition, computed in Python. */
    struct {
        double x;
        stall_time ns;
    } cases[] = {
        {2.523581, 2523580999}, {2.129682, 2129681999}, {5.511705, 5511704999},
        {8.112918, 8112918000}, {0.000002, 2000},       {0.9999999996, 1000000000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stall_time v = -1, s = -1;
        cr_assert_eq(stall_pd_s_to_ns_vec(cases[i].x, &v), 0);
        cr_assert_eq(stall_pd_s_to_ns_scalar(cases[i].x, &s), 0);
        cr_assert_eq(v, cases[i].ns, "vec(%.17g) = %lld, want %lld", cases[i].x, (long long)v,
                     (long long)cases[i].ns);
        cr_assert_eq(s, cases[i].ns, "scalar(%.17g) = %lld, want %lld", cases[i].x, (long long)s,
                     (long long)cases[i].ns);
    }
    cr_assert_neq(llround(2.523581 * 1e9), 2523580999, "llround would differ");
}

Test(s_to_ns, paths_differ_on_a_half_nanosecond)
{
    /* 5e-10 * 1e9 is exactly 0.5, which rint takes to 0; Python's round(5e-10, 9)
     * sees the binary value, a hair above 5e-10, and gives 1e-9. */
    stall_time v = -1, s = -1;
    cr_assert_eq(stall_pd_s_to_ns_vec(5e-10, &v), 0);
    cr_assert_eq(stall_pd_s_to_ns_scalar(5e-10, &s), 0);
    cr_assert_eq(v, 0, "vec %lld", (long long)v);
    cr_assert_eq(s, 1, "scalar %lld", (long long)s);
}

/* The oracle: Python's round(fr, 9) spelt as CPython does it, through the
 * correctly rounded 9-decimal text and back (printf and strtod). */
static stall_time s_to_ns_scalar_oracle(double x)
{
    int64_t b = (int64_t)x;
    char buf[48];
    snprintf(buf, sizeof buf, "%.9f", x - (double)b);
    return b * STALL_NS_PER_S + (int64_t)(strtod(buf, NULL) * 1e9);
}

Test(s_to_ns, scalar_equals_the_text_round_trip)
{
    srand(11);
    for (int i = 0; i < 1000000; i++) {
        double x;
        if (i % 4 == 0) /* exact ties: k / 2^10 * 1e9 ends in .5 */
            x = ldexp(rand() % 100000, -10);
        else if (i % 4 == 1) /* timestamps' seconds, microsecond text */
            x = (double)(rand() % 100000000) / 1e6;
        else
            x = (double)rand() / RAND_MAX * pow(10, rand() % 14 - 6) * (i & 1 ? -1 : 1);
        stall_time s = -1;
        cr_assert_eq(stall_pd_s_to_ns_scalar(x, &s), 0);
        cr_assert_eq(s, s_to_ns_scalar_oracle(x), "scalar(%a) = %lld, oracle %lld", x, (long long)s,
                     (long long)s_to_ns_scalar_oracle(x));
    }
}

Test(s_to_ns, refuses_values_outside_int64)
{
    stall_time v = 5;
    cr_assert_eq(stall_pd_s_to_ns_vec(1e10, &v), -1);
    cr_assert_eq(stall_pd_s_to_ns_scalar(NAN, &v), -1);
    cr_assert_eq(stall_pd_s_to_ns_vec(INFINITY, &v), -1);
    cr_assert_eq(v, 5, "untouched, got %lld", (long long)v);
    cr_assert_eq(stall_pd_s_to_ns_vec(9223372034.5, &v), 0);
    cr_assert_eq(v, INT64_C(9223372034500000000), "got %lld", (long long)v);
}
