/*
 * The streaming passes' spill (jobs/spill.c): every row written comes back
 * bit for bit, in order, from each of several readers, whatever its values
 * (extreme times, absent compute_end, bytes of either zero's sign), across
 * many buffer refills.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <inttypes.h>
#include <string.h>

#include "jobs/spill.h"

/* Field by field (the struct has padding). */
static bool same_row(const stall_tidy_row *a, const stall_tidy_row *b)
{
    return a->rank == b->rank && a->epoch == b->epoch && a->batch == b->batch &&
           a->worker == b->worker && a->fetch_start == b->fetch_start &&
           a->fetch_end == b->fetch_end && a->request == b->request && a->ready == b->ready &&
           a->iter_end == b->iter_end && a->compute_end == b->compute_end &&
           a->epoch_start == b->epoch_start && a->samples == b->samples &&
           memcmp(&a->bytes, &b->bytes, sizeof a->bytes) == 0;
}

static void random_row(gsl_rng *g, int64_t i, stall_tidy_row *row)
{
    memset(row, 0, sizeof *row);
    row->rank = (int)(i % 1000);
    row->epoch = (int)(i / 100000);
    row->batch = (int64_t)gsl_rng_uniform_int(g, 1u << 30);
    row->worker = gsl_rng_uniform(g) < 0.1 ? -1 : (int32_t)gsl_rng_uniform_int(g, 1024);
    /* Mostly near one another (the usual trace), sometimes anywhere. */
    bool wild = gsl_rng_uniform(g) < 0.05;
    int64_t base = wild ? (int64_t)(gsl_rng_get(g) << 31 ^ gsl_rng_get(g))
                        : INT64_C(1700000000000000000) + i * 1000;
    stall_time *t[] = {&row->fetch_start, &row->fetch_end, &row->request,
                       &row->ready,       &row->iter_end,  &row->epoch_start};
    for (size_t j = 0; j < sizeof t / sizeof *t; j++)
        *t[j] = wild && j == 3 ? INT64_MIN + (int64_t)j
                               : base + (int64_t)gsl_rng_uniform_int(g, 5000000) - 2500000;
    row->compute_end = gsl_rng_uniform(g) < 0.3 ? -1 : (wild ? INT64_MAX : base + 17);
    row->samples = wild ? INT64_MIN : (int64_t)gsl_rng_uniform_int(g, 512);
    double b[] = {0.0, -0.0, 123456.5, 1e300};
    row->bytes = b[gsl_rng_uniform_int(g, 4)];
}

Test(spill, rows_come_back_bit_for_bit_from_each_reader)
{
    wi_spill *s = wi_spill_new();
    cr_assert(s, "no spill file could be made");
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 21);
    const int64_t n = 200000; /* ~6 MB: many 256 KiB buffers */
    stall_tidy_row row, back;
    for (int64_t i = 0; i < n; i++) {
        random_row(g, i, &row);
        wi_spill_put(s, &row);
    }
    cr_assert(wi_spill_end(s));
    wi_spill_reader *a = wi_spill_read(s), *b = wi_spill_read(s);
    gsl_rng_set(g, 21);
    for (int64_t i = 0; i < n; i++) {
        random_row(g, i, &row);
        cr_assert_eq(wi_spill_next(a, &back), 1, "row %" PRId64 " missing", i);
        cr_assert(same_row(&row, &back), "row %" PRId64 " differs", i);
        if (i % 3 == 0) { /* the second reader, interleaved */
            cr_assert_eq(wi_spill_next(b, &back), 1);
        }
    }
    cr_assert_eq(wi_spill_next(a, &back), 0, "a row after the last");
    wi_spill_reader_close(a);
    wi_spill_reader_close(b);
    gsl_rng_free(g);
    wi_spill_free(s);
}

Test(spill, an_empty_spill_reads_as_no_rows)
{
    wi_spill *s = wi_spill_new();
    cr_assert(s && wi_spill_end(s));
    wi_spill_reader *r = wi_spill_read(s);
    stall_tidy_row row;
    cr_assert_eq(wi_spill_next(r, &row), 0);
    wi_spill_reader_close(r);
    wi_spill_free(s);
}
