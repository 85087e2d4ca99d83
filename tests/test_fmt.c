/* fmt: exact number text, held against the C library (printf and strtod)
 * as the independent oracle over millions of values and the edge cases. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "stall/fmt.h"

/* The text a stall_fmt_* call wrote, NUL terminated. */
#define FMT(call, buf) (*(call) = '\0', (buf))

static gsl_rng *rng;
static void fmt_setup(void)
{
    rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20261123);
}
static void fmt_teardown(void)
{
    gsl_rng_free(rng);
}
TestSuite(fmt, .init = fmt_setup, .fini = fmt_teardown);

static uint64_t fmt_bits64(void)
{
    return (uint64_t)gsl_rng_get(rng) << 32 ^ (uint64_t)gsl_rng_get(rng);
}

/* A double with random bits, finite, of magnitude below `below`. */
static double fmt_random_double(double below)
{
    for (;;) {
        uint64_t u = fmt_bits64();
        double v;
        memcpy(&v, &u, sizeof v);
        if (isfinite(v) && fabs(v) < below)
            return v;
    }
}

Test(fmt, i64_equals_printf_at_edges_and_random)
{
    const int64_t edge[] = {0,   1,         -1,         9,         10,        99,           100,
                            101, 999999999, 1000000000, INT64_MAX, INT64_MIN, INT64_MIN + 1};
    char a[STALL_FMT_MAX], b[STALL_FMT_MAX];
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        snprintf(b, sizeof b, "%" PRId64, edge[i]);
        cr_assert_str_eq(FMT(stall_fmt_i64(a, edge[i]), a), b);
    }
    for (int i = 0; i < 200000; i++) {
        int64_t v = (int64_t)(fmt_bits64() >> (gsl_rng_get(rng) % 64));
        v = i & 1 ? -v : v;
        snprintf(b, sizeof b, "%" PRId64, v);
        cr_assert_str_eq(FMT(stall_fmt_i64(a, v), a), b);
    }
}

/* The oracle for ns: seconds and nanoseconds split with C's / and %. */
static void fmt_ns_oracle(char *b, size_t n, int64_t ns)
{
    if (ns == INT64_MIN) {
        snprintf(b, n, "-9223372036.854775808");
        return;
    }
    int64_t m = ns < 0 ? -ns : ns;
    snprintf(b, n, "%s%" PRId64 ".%09" PRId64, ns < 0 ? "-" : "", m / 1000000000, m % 1000000000);
}

Test(fmt, ns_is_exact_for_every_int64)
{
    const int64_t edge[] = {0,          1,         -1,        999999999,     1000000000,
                            -999999999, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1500000000,
                            -1500000000};
    char a[STALL_FMT_MAX], b[STALL_FMT_MAX];
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
        fmt_ns_oracle(b, sizeof b, edge[i]);
        cr_assert_str_eq(FMT(stall_fmt_ns(a, edge[i]), a), b, "ns %" PRId64, edge[i]);
    }
    cr_assert_str_eq(FMT(stall_fmt_ns(a, 1500000000), a), "1.500000000");
    cr_assert_str_eq(FMT(stall_fmt_ns(a, -1), a), "-0.000000001");
    for (int i = 0; i < 500000; i++) {
        int64_t v = (int64_t)(fmt_bits64() >> (gsl_rng_get(rng) % 64));
        v = i & 1 ? -v : v;
        fmt_ns_oracle(b, sizeof b, v);
        cr_assert_str_eq(FMT(stall_fmt_ns(a, v), a), b, "ns %" PRId64, v);
    }
}

Test(fmt, ns_agrees_with_printf_of_the_double_below_97_days)
{
    /* What the result files printed before (printf("%.9f", ns / 1e9)) is
     * the same text while ns / 1e9 < 2^23 s, where a double still resolves
     * a nanosecond: the change to exact printing left shipped outputs alone. */
    char a[STALL_FMT_MAX], b[STALL_FMT_MAX];
    for (int i = 0; i < 500000; i++) {
        int64_t v = (int64_t)(fmt_bits64() % (UINT64_C(8388608) * 1000000000u));
        snprintf(b, sizeof b, "%.9f", (double)v / 1e9);
        cr_assert_str_eq(FMT(stall_fmt_ns(a, v), a), b, "ns %" PRId64, v);
    }
}

static void fmt_check_f9(double v)
{
    char a[STALL_FMT_MAX], b[512];
    snprintf(b, sizeof b, "%.9f", v);
    char *e = stall_fmt_f9(a, v);
    *e = '\0';
    if (strlen(b) < STALL_FMT_MAX)
        cr_assert_str_eq(a, b, "v = %a", v);
}

Test(fmt, f9_equals_printf_byte_for_byte)
{
    const double edge[] = {0.0,          -0.0,     1e-10,
                           -1e-10,       5e-10,    -5e-10,
                           0.0009765625, /* x 1e9 = 976562.5 exactly: a tie, to even */
                           0.0029296875, /* 2929687.5: a tie, to even (up) */
                           1.5,          0.1,      0.3,
                           9.199999e9,   9.3e9,    1e300,
                           -1e300,       4.9e-324, 2.2250738585072014e-308,
                           NAN,          INFINITY, -INFINITY,
                           -NAN};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        fmt_check_f9(edge[i]);
    /* Exact ties k / 2^10 with k odd, where v * 1e9 ends in .5. */
    for (int k = 1; k < 4096; k += 2)
        fmt_check_f9(ldexp(k, -10));
    for (int i = 0; i < 1000000; i++)
        fmt_check_f9(fmt_random_double(i % 3 == 0 ? 10.0 : i % 3 == 1 ? 1e4 : 9.2e9));
    for (int i = 0; i < 200000; i++) /* values of a result file: ns-ish seconds */
        fmt_check_f9((double)(gsl_rng_get(rng) % 100000000) / 1e7 + gsl_rng_uniform(rng) * 1e-9);
}

Test(fmt, round_e9_refuses_what_it_cannot_hold)
{
    int64_t n = 42;
    cr_assert_eq(stall_round_e9(NAN, &n), -1);
    cr_assert_eq(stall_round_e9(INFINITY, &n), -1);
    cr_assert_eq(stall_round_e9(9.2e9, &n), -1);
    cr_assert_eq(n, 42, "n left alone on failure");
    cr_assert_eq(stall_round_e9(-1.5, &n), 0);
    cr_assert_eq(n, -1500000000);
    cr_assert_eq(stall_round_e9(0.0009765625, &n), 0);
    cr_assert_eq(n, 976562, "976562.5 rounds to even");
    cr_assert_eq(stall_round_e9(0.0029296875, &n), 0);
    cr_assert_eq(n, 2929688, "2929687.5 rounds to even");
}

Test(fmt, repr_matches_python)
{
    struct {
        double v;
        const char *s;
    } cases[] = {{0.0, "0.0"},
                 {-0.0, "-0.0"},
                 {2.635, "2.635"},
                 {4e-06, "4e-06"},
                 {0.0001, "0.0001"},
                 {1e16, "1e+16"},
                 {1234567890123456.0, "1234567890123456.0"},
                 {9.945801078000002, "9.945801078000002"},
                 {-0.5, "-0.5"},
                 {100.0, "100.0"},
                 {1.5e-300, "1.5e-300"},
                 {1.7976931348623157e308, "1.7976931348623157e+308"},
                 {4.000000000000001e-06, "4.000000000000001e-06"},
                 {0.1 + 0.2, "0.30000000000000004"},
                 {12.0, "12.0"},
                 {1e22, "1e+22"},
                 {-INFINITY, "-inf"}};
    char buf[STALL_REPR_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_assert_str_eq(stall_repr(buf, cases[i].v), cases[i].s, "case %zu", i);
    cr_assert_str_eq(stall_repr(buf, NAN), "nan");
}

Test(fmt, repr_round_trips_and_is_shortest)
{
    char buf[STALL_REPR_MAX], p[64];
    for (int i = 0; i < 300000; i++) {
        double v = fmt_random_double(INFINITY);
        stall_repr(buf, v);
        cr_assert_eq(strtod(buf, NULL), v, "%.17g -> %s", v, buf);
        /* No text with fewer significant digits reads back to v: the
         * closest such text (printf's, correctly rounded) does not. */
        char sig[STALL_REPR_MAX];
        int digits = 0;
        for (const char *s = buf; *s && *s != 'e'; s++)
            if (*s >= '0' && *s <= '9' && (digits > 0 || *s != '0'))
                sig[digits++] = *s;
        while (digits > 1 && sig[digits - 1] == '0')
            digits--;
        if (digits > 1) {
            snprintf(p, sizeof p, "%.*e", digits - 2, v);
            cr_assert_neq(strtod(p, NULL), v, "%s is shorter than %s", p, buf);
        }
    }
}

Test(fmt, out_batches_rows_into_the_stream_unchanged)
{
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    cr_assert_not_null(f);
    stall_out *w = malloc(sizeof *w);
    stall_out_init(w, f);
    /* Many rows cross the block boundary; a long string goes straight through. */
    char expect_row[64];
    int row_len = snprintf(expect_row, sizeof expect_row, "%d,%.9f\n", 123456, 1.5);
    for (int i = 0; i < 20000; i++) {
        char *o = stall_out_room(w);
        o = stall_fmt_i64(o, 123456);
        *o++ = ',';
        o = stall_fmt_ns(o, 1500000000);
        *o++ = '\n';
        w->o = o;
    }
    char *big = malloc(STALL_OUT_BLOCK * 2 + 1);
    memset(big, 'x', STALL_OUT_BLOCK * 2);
    big[STALL_OUT_BLOCK * 2] = '\0';
    stall_out_str(w, big);
    stall_out_str(w, "end\n");
    stall_out_flush(w);
    fclose(f);
    cr_assert_eq(len, (size_t)row_len * 20000 + STALL_OUT_BLOCK * 2 + 4);
    for (int i = 0; i < 20000; i++)
        cr_assert(memcmp(mem + (size_t)i * (size_t)row_len, expect_row, (size_t)row_len) == 0,
                  "row %d", i);
    cr_assert(memcmp(mem + len - 4, "end\n", 4) == 0);
    free(big);
    free(w);
    free(mem);
}
