/*
 * Replay against an independent closed form of docs/model.md's trace-timed
 * replay: Y = max(Q + floor, S' + D' + lag), T(k) = max_r (Y + C) + A(k),
 * Q(r,k+1) = T(k), with the alignment policies written out again here.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "stall/replay.h"
#include "stall/report.h"

typedef struct case_data {
    int g;
    int64_t n;
    stall_time *s, *d, *lag, *fl, *c, *a, *q0;
} case_data;

static void case_make(case_data *cd, gsl_rng *rng, int g, int64_t n)
{
    size_t cells = (size_t)g * (size_t)n;
    cd->g = g;
    cd->n = n;
    cd->s = malloc(cells * sizeof(stall_time));
    cd->d = malloc(cells * sizeof(stall_time));
    cd->lag = malloc(cells * sizeof(stall_time));
    cd->fl = malloc(cells * sizeof(stall_time));
    cd->c = malloc(cells * sizeof(stall_time));
    cd->a = malloc((size_t)n * sizeof(stall_time));
    cd->q0 = malloc((size_t)g * sizeof(stall_time));
    stall_time base = 1000000000000LL;
    for (int r = 0; r < g; r++)
        cd->q0[r] = base + (stall_time)gsl_rng_uniform_int(rng, 1000000);
    for (int64_t k = 0; k < n; k++) {
        cd->a[k] = (stall_time)gsl_rng_uniform_int(rng, 3000000);
        for (int r = 0; r < g; r++) {
            size_t i = (size_t)k * g + r;
            /* Starts roughly every 100 ms, jittered; durations up to 400 ms. */
            cd->s[i] = base + k * 100000000LL + (stall_time)gsl_rng_uniform_int(rng, 200000000);
            cd->d[i] = (stall_time)gsl_rng_uniform_int(rng, 400000000);
            cd->lag[i] = (stall_time)gsl_rng_uniform_int(rng, 5000000);
            cd->fl[i] = (stall_time)gsl_rng_uniform_int(rng, 10000);
            cd->c[i] = 50000000 + (stall_time)gsl_rng_uniform_int(rng, 100000000);
        }
    }
}

static void case_free(case_data *cd)
{
    free(cd->s);
    free(cd->d);
    free(cd->lag);
    free(cd->fl);
    free(cd->c);
    free(cd->a);
    free(cd->q0);
}

static stall_time oracle_align_start(const stall_time *v, int g, int policy)
{
    stall_time mn = v[0], mx = v[0];
    for (int r = 1; r < g; r++) {
        mn = v[r] < mn ? v[r] : mn;
        mx = v[r] > mx ? v[r] : mx;
    }
    return policy == STALL_ALIGN_MIN ? mn : mn + (mx - mn) / 2;
}

static stall_time oracle_align_dur(const stall_time *v, int g, int policy)
{
    stall_time mn = v[0];
    long double sum = 0;
    for (int r = 0; r < g; r++) {
        mn = v[r] < mn ? v[r] : mn;
        sum += v[r];
    }
    return policy == STALL_ALIGN_MIN ? mn : (stall_time)((sum + g / 2) / g);
}

/* Returns T(k) for every k into t[]. */
static void oracle(const case_data *cd, int fa, int sa, stall_time *t)
{
    int g = cd->g;
    stall_time *q = malloc((size_t)g * sizeof *q);
    for (int r = 0; r < g; r++)
        q[r] = cd->q0[r];
    for (int64_t k = 0; k < cd->n; k++) {
        const stall_time *sk = cd->s + k * g, *dk = cd->d + k * g;
        stall_time tk = INT64_MIN;
        for (int r = 0; r < g; r++) {
            size_t i = (size_t)k * g + r;
            stall_time s = sa == STALL_ALIGN_NONE ? sk[r] : oracle_align_start(sk, g, sa);
            stall_time d = fa == STALL_ALIGN_NONE ? dk[r] : oracle_align_dur(dk, g, fa);
            stall_time y = q[r] + cd->fl[i];
            if (s + d + cd->lag[i] > y)
                y = s + d + cd->lag[i];
            if (y + cd->c[i] > tk)
                tk = y + cd->c[i];
        }
        t[k] = tk + cd->a[k];
        for (int r = 0; r < g; r++)
            q[r] = t[k];
    }
    free(q);
}

Test(replay, matches_closed_form_on_random_traces)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    for (int trial = 0; trial < 60; trial++) {
        int g = 1 + (int)gsl_rng_uniform_int(rng, 8);
        int64_t n = 1 + (int64_t)gsl_rng_uniform_int(rng, 200);
        case_data cd;
        case_make(&cd, rng, g, n);
        stall_replay_input in = {.ranks = g,
                                 .batches = n,
                                 .start = cd.s,
                                 .fetch = cd.d,
                                 .lag = cd.lag,
                                 .floor = cd.fl,
                                 .compute = cd.c,
                                 .tail = cd.a,
                                 .request0 = cd.q0};
        stall_time *t = malloc((size_t)n * sizeof *t);
        for (int fa = 0; fa < 3; fa++)
            for (int sa = 0; sa < 3; sa++) {
                oracle(&cd, fa, sa, t);
                stall_report *rep = stall_report_create(g, 0, 0.03, 0);
                stall_replay_stats stats;
                stall_err err = {0};
                int rc = stall_replay_run(&in, fa, sa, rep, &stats, &err);
                cr_assert_eq(rc, 0, "trial %d: %s", trial, err.msg);
                cr_assert_eq(stats.epoch_end, t[n - 1],
                             "trial %d g=%d n=%lld fa=%d sa=%d: engine %lld, closed form %lld",
                             trial, g, (long long)n, fa, sa, (long long)stats.epoch_end,
                             (long long)t[n - 1]);
                cr_assert_eq(stall_report_rows(rep), (size_t)n);
                stall_report_destroy(rep);
            }
        free(t);
        case_free(&cd);
    }
    gsl_rng_free(rng);
}

Test(replay, late_batch_delays_every_later_iteration)
{
    /* One rank, batches ready long before they are asked for, except batch
     * 1, which arrives 1 s late: every later iteration end moves by the
     * same second (the notebook's row-by-row model would move only row 1). */
    enum { N = 5 };
    stall_time s[N], d[N], c[N], q0[1] = {0};
    for (int k = 0; k < N; k++) {
        s[k] = 0;
        d[k] = 10;
        c[k] = 100;
    }
    stall_replay_input in = {
        .ranks = 1, .batches = N, .start = s, .fetch = d, .compute = c, .request0 = q0};
    stall_replay_stats base, late;
    stall_err err = {0};
    cr_assert_eq(stall_replay_run(&in, STALL_ALIGN_NONE, STALL_ALIGN_NONE, NULL, &base, &err), 0);
    d[1] = 1000000000;
    cr_assert_eq(stall_replay_run(&in, STALL_ALIGN_NONE, STALL_ALIGN_NONE, NULL, &late, &err), 0);
    cr_assert_eq(base.epoch_end, 10 + 5 * 100, "base end %lld", (long long)base.epoch_end);
    cr_assert_eq(late.epoch_end, 1000000000 + 4 * 100, "late end %lld", (long long)late.epoch_end);
}

Test(replay, slow_rank_holds_the_barrier_and_shows_as_delay)
{
    enum { G = 2, N = 3 };
    stall_time s[G * N] = {0}, d[G * N], c[G * N], q0[G] = {0, 0};
    for (int i = 0; i < G * N; i++) {
        d[i] = 10;
        c[i] = 100;
    }
    d[1 * G + 1] = 500; /* rank 1, batch 1 arrives at 500 */
    stall_replay_input in = {
        .ranks = G, .batches = N, .start = s, .fetch = d, .compute = c, .request0 = q0};
    stall_report *rep = stall_report_create(G, 0, 1e-9, 0);
    stall_err err = {0};
    cr_assert_eq(stall_replay_run(&in, STALL_ALIGN_NONE, STALL_ALIGN_NONE, rep, NULL, &err), 0);
    stall_summary sum;
    stall_report_summarize(rep, &sum);
    /* Batch 1 asked at T(0) = 110: rank 1 waits 390 ns, rank 0 none. */
    cr_assert_float_eq(sum.delay.mean * 3, 390e-9, 1e-15, "mean delay %g", sum.delay.mean);
    cr_assert_float_eq(sum.effective_delay_pct, 100.0 / 3, 1e-9, "eff %g", sum.effective_delay_pct);
    stall_report_destroy(rep);
    /* With fetch alignment min, both ranks get 10 ns and nobody waits. */
    stall_replay_stats st;
    cr_assert_eq(stall_replay_run(&in, STALL_ALIGN_MIN, STALL_ALIGN_NONE, NULL, &st, &err), 0);
    cr_assert_eq(st.epoch_end, 10 + 3 * 100, "end %lld", (long long)st.epoch_end);
}

Test(replay, empty_input_is_rejected)
{
    stall_replay_input in = {0};
    stall_err err = {0};
    cr_assert_eq(stall_replay_run(&in, STALL_ALIGN_NONE, STALL_ALIGN_NONE, NULL, NULL, &err),
                 STALL_EINVAL);
}
