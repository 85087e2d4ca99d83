/*
 * test_draw.c - jobs/draw.c: a duration drawn through wi_draw_init and
 * wi_draw_ns is, value for value and generator state for generator state,
 * the one drawn straight with GSL as the duration tables did before
 * (gsl_ran_lognormal with zeta = log(mean) - sigma^2 / 2, gsl_ran_gamma,
 * gsl_ran_gaussian; 0 when not > 0, -1 past the duration limit).
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs/draw.h"
#include "jobs/feed.h"
#include "stall/limits.h"

/* The reference: the tables' former draw, written against GSL alone. */
static stall_time tdraw_ref(gsl_rng *rng, const stall_dist *d)
{
    double v;
    switch (d->kind) {
    case STALL_DIST_LOGNORMAL: {
        double s = d->sigma, mu = log(d->mean_s) - 0.5 * s * s;
        v = gsl_ran_lognormal(rng, mu, s);
        break;
    }
    case STALL_DIST_GAMMA:
        if (d->sd_s <= 0) {
            v = d->mean_s;
            break;
        }
        v = gsl_ran_gamma(rng, (d->mean_s / d->sd_s) * (d->mean_s / d->sd_s),
                          d->sd_s * d->sd_s / d->mean_s);
        break;
    case STALL_DIST_NORMAL:
        v = d->mean_s + gsl_ran_gaussian(rng, d->sd_s);
        break;
    default:
        v = d->mean_s;
    }
    if (!(v > 0))
        return 0;
    stall_time ns;
    return stall_s_to_ns_bounded(v, STALL_LIMIT_DURATION_S, &ns) == 0 ? ns : -1;
}

static void tdraw_same(stall_dist d, int n, unsigned long seed)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, seed);
    gsl_rng_set(b, seed);
    wi_draw w;
    wi_draw_init(&w, &d);
    for (int i = 0; i < n; i++) {
        stall_time x = wi_draw_ns(a, &w), y = tdraw_ref(b, &d);
        cr_assert_eq(x, y, "kind %d mean %g sigma %g sd %g, draw %d: %lld ns, GSL gives %lld",
                     d.kind, d.mean_s, d.sigma, d.sd_s, i, (long long)x, (long long)y);
    }
    cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "kind %d sigma %g: the generator moved otherwise",
                 d.kind, d.sigma);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

Test(draw, lognormal_gives_gsls_values)
{
    double sigmas[] = {0.05, 0.3, 0.4, 1.0, 2.5};
    for (size_t i = 0; i < sizeof sigmas / sizeof sigmas[0]; i++)
        tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.03, .sigma = sigmas[i]},
                   20000, 7 + i);
}

Test(draw, lognormal_of_sigma_zero_advances_the_generator_as_gsl)
{
    /* One value, but each draw still runs the polar method's loop. */
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.02, .sigma = 0}, 20000, 3);
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 1.0, .sigma = 0}, 1000, 4);
}

Test(draw, gamma_normal_and_constant_give_gsls_values)
{
    tdraw_same((stall_dist){.kind = STALL_DIST_GAMMA, .mean_s = 0.05, .sd_s = 0.02}, 20000, 5);
    tdraw_same((stall_dist){.kind = STALL_DIST_GAMMA, .mean_s = 0.05, .sd_s = 0}, 100, 6);
    /* Normal: negative draws give 0. */
    tdraw_same((stall_dist){.kind = STALL_DIST_NORMAL, .mean_s = 0.01, .sd_s = 0.02}, 20000, 8);
    tdraw_same((stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0.25}, 100, 9);
    tdraw_same((stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0}, 100, 9);
}

Test(draw, past_the_limit_is_minus_one_as_before)
{
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL,
                            .mean_s = STALL_LIMIT_DURATION_S / 2,
                            .sigma = 1.5},
               5000, 10);
    tdraw_same((stall_dist){.kind = STALL_DIST_LOGNORMAL,
                            .mean_s = 2 * STALL_LIMIT_DURATION_S,
                            .sigma = 0},
               100, 11);
}

/* The draw in two steps (wi_draw_raw on one thread, wi_draw_cook anywhere)
 * gives GSL's values and leaves the generator where GSL leaves it. */
static void tdraw_split_same(stall_dist d, int n, unsigned long seed)
{
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, seed);
    gsl_rng_set(b, seed);
    wi_draw w;
    wi_draw_init(&w, &d);
    cr_assert(wi_draw_splits(a, &w), "kind %d sigma %g: not split", d.kind, d.sigma);
    for (int i = 0; i < n; i++) {
        stall_time x = wi_draw_cook(wi_draw_raw(a, &w), &w), y = tdraw_ref(b, &d);
        cr_assert_eq(x, y, "kind %d mean %g sigma %g, draw %d: %lld ns, GSL gives %lld", d.kind,
                     d.mean_s, d.sigma, i, (long long)x, (long long)y);
    }
    cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "kind %d sigma %g: the generator moved otherwise",
                 d.kind, d.sigma);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

Test(draw, two_steps_give_gsls_values)
{
    double sigmas[] = {0, 0.05, 0.3, 1.0, 2.5};
    for (size_t i = 0; i < sizeof sigmas / sizeof sigmas[0]; i++)
        tdraw_split_same(
            (stall_dist){.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.03, .sigma = sigmas[i]}, 20000,
            17 + i);
    tdraw_split_same((stall_dist){.kind = STALL_DIST_LOGNORMAL,
                                  .mean_s = STALL_LIMIT_DURATION_S / 2,
                                  .sigma = 1.5},
                     5000, 30);
    tdraw_split_same((stall_dist){.kind = STALL_DIST_CONSTANT, .mean_s = 0.25}, 100, 31);
}

/* The tables drawn on 1 to 4 threads (jobs/fill.c) against the serial loop
 * they replace: fetch then compute per cell, in table order, from one
 * stream; the same error message for a draw past the limit. */
static void ttables_same(stall_dist f, stall_dist c, int g, int ne, int64_t n, unsigned long seed)
{
    wi_whatif what;
    memset(&what, 0, sizeof what);
    what.ini = "t.ini";
    what.seed = (int64_t)seed;
    what.fetch_dist = f;
    what.compute_dist = c;
    size_t cells = (size_t)ne * (size_t)g * (size_t)n;
    stall_time *rf = malloc(cells * sizeof *rf), *rc = malloc(cells * sizeof *rc);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    size_t bad = cells;
    for (size_t o = 0; o < cells; o++) {
        rf[o] = tdraw_ref(rng, &f);
        rc[o] = tdraw_ref(rng, &c);
        if (bad == cells && (rf[o] < 0 || rc[o] < 0))
            bad = o;
    }
    gsl_rng_free(rng);
    for (int th = 1; th <= 4; th++) {
        wi_tables w;
        stall_err err;
        memset(&err, 0, sizeof err);
        int rc0 = wi_tables_build_j(&what, NULL, g, ne, n, false, th, &w, &err);
        if (bad < cells) {
            char want[256];
            snprintf(want, sizeof want, "[%s] drew a duration longer than the limit",
                     rf[bad] < 0 ? "fetch" : "compute");
            cr_assert_neq(rc0, 0, "%d threads: no error for cell %zu", th, bad);
            cr_assert(strstr(err.msg, want), "%d threads: %s", th, err.msg);
            char where[128];
            snprintf(where, sizeof where, "(epoch %d, rank %d, batch %lld)",
                     (int)(bad / (size_t)n / (size_t)g), (int)(bad / (size_t)n % (size_t)g),
                     (long long)(bad % (size_t)n));
            cr_assert(strstr(err.msg, where), "%d threads: %s, want %s", th, err.msg, where);
            continue;
        }
        cr_assert_eq(rc0, 0, "%d threads: %s", th, err.msg);
        wi_tables_finish(&w); /* an overlapped fill's cells complete */
        for (size_t o = 0; o < cells; o++) {
            stall_time cv = w.compute ? w.compute[o] : w.compute_ns;
            cr_assert_eq(w.fetch[o], rf[o], "%d threads, cell %zu: fetch %lld, serial %lld", th, o,
                         (long long)w.fetch[o], (long long)rf[o]);
            cr_assert_eq(cv, rc[o], "%d threads, cell %zu: compute %lld, serial %lld", th, o,
                         (long long)cv, (long long)rc[o]);
        }
        wi_tables_free(&w);
    }
    free(rf);
    free(rc);
}

Test(draw, tables_on_threads_equal_the_serial_draws)
{
    stall_dist logn = {.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.05, .sigma = 0.3, .scale = 1};
    stall_dist flat = {.kind = STALL_DIST_CONSTANT, .mean_s = 0.02, .scale = 1};
    stall_dist logc = {.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.02, .sigma = 0.1, .scale = 1};
    stall_dist log0 = {.kind = STALL_DIST_LOGNORMAL, .mean_s = 0.02, .sigma = 0, .scale = 1};
    ttables_same(logn, flat, 7, 2, 10000, 42); /* several chunks, a constant compute */
    ttables_same(logn, logc, 5, 1, 20000, 43);
    ttables_same(flat, logc, 3, 3, 5000, 44);
    ttables_same(logn, log0, 4, 1, 3000, 45);
    stall_dist huge = {.kind = STALL_DIST_LOGNORMAL,
                       .mean_s = STALL_LIMIT_DURATION_S / 4,
                       .sigma = 1.5,
                       .scale = 1};
    ttables_same(huge, flat, 3, 1, 100000, 46); /* some draw past the limit */
    ttables_same(logn, huge, 3, 1, 100000, 47); /* ... in compute */
}
