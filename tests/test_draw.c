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
#include <stdio.h>
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

/* wi_draw_uniform_ints gives gsl_rng_uniform_int's values and leaves the
 * generator where n calls leave it, for ranges that redraw often (3e9: a
 * quarter of the outputs past the last multiple), rarely and never (1),
 * across blocks of the generator's state, with and without out. */
Test(draw, uniform_ints_give_gsls_values_and_state)
{
    const unsigned long ranges[] = {1, 7, 299200, 3000000000UL, 0xffffffffUL};
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        for (int keep = 0; keep < 2; keep++) {
            gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
            gsl_rng_set(a, 17 + i);
            gsl_rng_set(b, 17 + i);
            enum { N = 2000 };
            int64_t out[N];
            wi_draw_uniform_ints(b, ranges[i], keep ? out : NULL, N);
            for (int j = 0; j < N; j++) {
                unsigned long want = gsl_rng_uniform_int(a, ranges[i]);
                cr_assert(!keep || out[j] == (int64_t)want, "range %lu, draw %d: %lld, want %lu",
                          ranges[i], j, (long long)out[j], want);
            }
            cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "range %lu: the states differ after",
                         ranges[i]);
            gsl_rng_free(a);
            gsl_rng_free(b);
        }
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

/* A measured trace whose batches all take the same time per sample (1
 * rank, 1 epoch, 4 batches of 16, 16, 16 and 6 samples; fetch 2.5 ms and
 * compute 0.5 ms per sample): every cell of a what-if's tables, replayed
 * or drawn beyond the trace, must be its own batch's samples times that
 * (docs/model.md 2.4, 7). A drawn cell took any measured duration, the
 * partial batch's 15 ms included, for a full batch of 16 (40 ms). */
Test(draw, resampled_batches_take_the_trace_time_per_sample_of_their_own_samples)
{
    enum { NB = 4 };
    const int64_t samples[NB] = {16, 16, 16, 6};
    const stall_time fps = 2500000, cps = 500000; /* ns per sample */
    stall_time fetch[NB], compute[NB], tail[NB] = {0}, gap[1] = {0};
    for (int k = 0; k < NB; k++) {
        fetch[k] = samples[k] * fps;
        compute[k] = samples[k] * cps;
    }
    stall_measured m;
    memset(&m, 0, sizeof m);
    m.ranks = m.epochs = 1;
    m.batches = NB;
    m.samples = 16;
    m.samples_last = 6;
    m.fetch = fetch;
    m.compute = compute;
    m.tail = tail;
    m.gap = gap;
    /* g ranks x ne epochs x n batches; [run] batches; the samples of each
     * rank's last batch (strong scaling: ceil(54 / g) - (n - 1) x 16). */
    static const struct {
        int g, ne;
        int64_t n, run_batches, last;
    } c[] = {
        {1, 3, NB, 0, 6},   /* drawn epochs: 16, 16, 16, 6 */
        {1, 2, 12, 12, 16}, /* [run] batches = 12: all full */
        {3, 2, 2, 0, 2},    /* 3 GPUs: 18 samples each, 16 + 2 */
        {2, 4, 2, 0, 11},   /* 2 GPUs: 27 each, 16 + 11 */
    };
    const int kinds[] = {STALL_RESAMPLE_BOOTSTRAP, STALL_RESAMPLE_LOGNORMAL, STALL_RESAMPLE_GAMMA};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
            for (int64_t seed = 1; seed <= 20; seed++) {
                wi_whatif what;
                memset(&what, 0, sizeof what);
                what.ini = "t.ini";
                what.seed = seed;
                what.resample = kinds[j];
                what.scaling = STALL_SCALING_STRONG;
                what.batches = c[i].run_batches;
                what.fetch_dist.scale = what.compute_dist.scale = 1;
                wi_tables w;
                stall_err err = {0};
                cr_assert_eq(wi_tables_build(&what, &m, c[i].g, c[i].ne, c[i].n, true, &w, &err), 0,
                             "%s", err.msg);
                for (int e = 0; e < c[i].ne; e++)
                    for (int r = 0; r < c[i].g; r++)
                        for (int64_t k = 0; k < c[i].n; k++) {
                            size_t o = ((size_t)e * c[i].g + r) * (size_t)c[i].n + (size_t)k;
                            int64_t s = k == c[i].n - 1 ? c[i].last : 16;
                            stall_time f = w.fetch[o], cc = w.compute ? w.compute[o] : -1;
                            /* bootstrap exact; a fit to a pool of one value
                             * within 1 us (sigma or sd 0 up to rounding) */
                            stall_time tol = kinds[j] == STALL_RESAMPLE_BOOTSTRAP ? 1 : 1000;
                            cr_expect(llabs(f - s * fps) <= tol && llabs(cc - s * cps) <= tol,
                                      "resample %d, %d ranks x %d epochs x %lld batches, seed "
                                      "%lld: epoch %d rank %d batch %lld (%lld samples): fetch "
                                      "%lld ns, compute %lld ns; want %lld, %lld",
                                      kinds[j], c[i].g, c[i].ne, (long long)c[i].n, (long long)seed,
                                      e, r, (long long)k, (long long)s, (long long)f, (long long)cc,
                                      (long long)(s * fps), (long long)(s * cps));
                        }
                wi_tables_free(&w);
            }
}

/* The memory check of a run's tables (wi_mem_check): a run of 2 ranks x
 * 10 epochs whose tables take 60% of the machine's memory passes (the
 * tables are 8 B of fetch and 8 of compute per rank-iteration and 8 of
 * tail per iteration; the estimate charged 24 and 200 and refused a run of
 * about a tenth of the machine), refuses past the machine, and counts an
 * observer's records (--analyze, --timeline: some 150 B per
 * rank-iteration) with a message that says so. */
Test(draw, the_memory_check_charges_what_the_tables_take)
{
    uint64_t have = stall_mem_limit(NULL);
    if (have == 0)
        cr_skip_test("the machine's memory is unknown");
    wi_whatif w;
    wi_whatif_defaults(&w);
    stall_err err = {0};
    int64_t per_iter = 2 * 16 + 8, ne = 10;
    int64_t n = (int64_t)(0.6 * (double)have / (double)(per_iter * ne));
    cr_assert_leq(2 * n, STALL_LIMIT_BATCHES);
    cr_assert_eq(wi_mem_check(&w, 2, ne, n, true, &err), 0, "%s", err.msg);
    cr_assert_eq(wi_mem_check(&w, 2, ne, 2 * n, true, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "needs an estimated") != NULL, "%s", err.msg);
    w.observed = true;
    cr_assert_eq(wi_mem_check(&w, 2, ne, n, true, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "--analyze") != NULL, "%s", err.msg);
    cr_assert_eq(wi_mem_check(&w, 2, ne, n / 8, false, &err), 0, "%s", err.msg);
}

/* The memory a run may use is what the machine has available, not all of
 * it: a run of configs/w2.ini estimated at 24.0 GB passed the check on a
 * machine of 24.7 GB (with 20 GB available) and was killed by the kernel
 * half-way (exit 137). The limit is 90% of MemAvailable as /proc/meminfo
 * gives it (read here on its own), which is less than the machine's memory. */
Test(draw, the_memory_limit_is_what_the_machine_has_available)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        cr_skip_test("no /proc/meminfo");
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    if (kb == 0)
        cr_skip_test("/proc/meminfo has no MemAvailable");
    const char *from = NULL;
    uint64_t lim = stall_mem_limit(&from), avail = (uint64_t)kb * 1024 / 10 * 9;
    cr_assert_lt(lim, stall_phys_memory(), "the limit is the machine's whole memory (%s)", from);
    if (strstr(from, "MemAvailable")) {
        double d = (double)lim - (double)avail;
        cr_assert_lt(fabs(d), 1e9, "limit %.2f GB, 90%% of MemAvailable read here %.2f GB",
                     lim / 1e9, avail / 1e9);
    } else
        cr_assert_leq(lim, avail + (uint64_t)1000000000, "a limit (%s) above MemAvailable", from);
}
