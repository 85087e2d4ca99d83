/*
 * analyze: the verdicts on the shipped traces (each trace is what its
 * README says it is: ddp2_straggler has rank 1 computing 6x longer, the
 * others are data-bound), the parts of a rank's time add up to its epochs,
 * and the numbers match independent oracles: a hand-built trace whose
 * waits are known, and the closed form of a simulated steady state.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/analyze.h"
#include "stall/model.h"
#include "stall/tidy.h"

#include "tmpdir.h"

static char adir[] = "/tmp/stall_analyze_XXXXXX";
static void an_setup(void)
{
    tmpdir_make(adir);
}
static void an_teardown(void)
{
    tmpdir_remove(adir);
}
TestSuite(analyze, .init = an_setup, .fini = an_teardown, .timeout = 120);

static void analyse_file(const char *rel, int workers, stall_analysis *a)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", STALL_SOURCE_DIR, rel);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_an_load(path, workers, &t, &err), 0, "%s: %s", rel, err.msg);
    stall_analyze(t, a);
    /* Property: a rank's parts add up to its time, on every trace. */
    for (int r = 0; r < a->ranks; r++) {
        const stall_an_rank *x = &a->rank[r];
        double sum = x->startup_s + x->data_s + x->handover_s + x->compute_s + x->barrier_s +
                     x->post_s + x->ckpt_s;
        cr_assert(fabs(sum - x->total_s) < 1e-6 * (1 + x->total_s),
                  "%s rank %d: parts %.9f != total %.9f", rel, r, sum, x->total_s);
    }
    double s = a->share_data + a->share_straggler + a->share_compute + a->share_startup +
               a->share_checkpoint;
    cr_assert(fabs(s - 1) < 1e-9, "%s: shares add up to %.12f", rel, s);
    stall_tidy_free(t);
}

Test(analyze, straggler_trace_is_straggler_bound_by_rank1_compute)
{
    stall_analysis a;
    analyse_file("traces/ddp2_straggler/trace.csv", 0, &a);
    cr_expect_eq(a.verdict, STALL_VERDICT_STRAGGLER, "verdict %s: %s",
                 stall_verdict_name(a.verdict), a.sentence);
    cr_expect_eq(a.straggler, 1);
    cr_expect_gt(a.straggler_compute_s, a.straggler_input_s);
    /* Rank 0 waits at the barrier, rank 1 (the slow one) never does. */
    cr_expect_gt(a.rank[0].barrier_s, 10 * a.rank[1].barrier_s + 0.1);
    cr_expect_eq(a.nwk, 4);
    stall_analysis_free(&a);
}

Test(analyze, data_bound_traces_are_data_bound)
{
    const char *tr[] = {"traces/w1/trace.csv", "traces/w2/trace.csv", "traces/w4/trace.csv",
                        "traces/ddp2_w2/trace.csv", "traces/ddp2_w2_ddphook/trace.csv"};
    for (size_t i = 0; i < sizeof tr / sizeof *tr; i++) {
        stall_analysis a;
        analyse_file(tr[i], 0, &a);
        cr_expect_eq(a.verdict, STALL_VERDICT_DATA, "%s: %s", tr[i], a.sentence);
        cr_expect_lt(a.share_straggler, 0.10, "%s: %s", tr[i], a.sentence);
        stall_analysis_free(&a);
    }
}

Test(analyze, notebook_dsanalyzer_trace_is_data_bound_with_inferred_workers)
{
    stall_analysis a;
    analyse_file("configs/example.ini", 3, &a);
    cr_expect_eq(a.verdict, STALL_VERDICT_DATA, "%s", a.sentence);
    cr_expect_eq(a.ranks, 4);
    cr_expect(!a.have_compute_end);
    cr_expect_eq(a.nwk, 12);
    /* README: 69% of iteration time is stall; the stall plus the barrier
     * waits for data are at least that. */
    cr_expect_gt(a.share_data, 0.69, "%f", a.share_data);
    int64_t n = 0;
    for (int i = 0; i < a.nwk; i++)
        n += a.wk[i].batches;
    cr_expect_eq(n, 4 * 850);
    stall_analysis_free(&a);
}

/* A hand-built 2-rank trace: fetches arrive `late` after the request, rank
 * 1 computes `extra` longer; the tail after the barrier is `tail`. */
static stall_tidy_trace *handmade(int64_t n, stall_time late, stall_time c0, stall_time extra,
                                  stall_time tail)
{
    stall_tidy_trace *t = calloc(1, sizeof *t);
    int g = 2;
    size_t m = (size_t)n * g;
    t->ranks = g;
    t->epochs = 1;
    t->batches = n;
    t->fetch_start = calloc(m, sizeof(stall_time));
    t->fetch_end = calloc(m, sizeof(stall_time));
    t->request = calloc(m, sizeof(stall_time));
    t->ready = calloc(m, sizeof(stall_time));
    t->iter_end = calloc(m, sizeof(stall_time));
    t->compute_end = calloc(m, sizeof(stall_time));
    t->worker = calloc(m, sizeof(int32_t));
    t->epoch_start = calloc(g, sizeof(stall_time));
    t->workers = 1;
    t->prefetch = t->pin_memory = -1;
    t->path = strdup("handmade");
    stall_time q = 1000;
    for (int64_t k = 0; k < n; k++) {
        stall_time bar = 0;
        for (int r = 0; r < g; r++) {
            size_t i = stall_tidy_at(t, 0, r, k);
            t->request[i] = q;
            t->fetch_start[i] = q - 5;
            t->fetch_end[i] = q + late;
            t->ready[i] = q + late;
            t->compute_end[i] = q + late + c0 + (r == 1 ? extra : 0);
            bar = t->compute_end[i] > bar ? t->compute_end[i] : bar;
        }
        for (int r = 0; r < g; r++)
            t->iter_end[stall_tidy_at(t, 0, r, k)] = bar + tail;
        q = bar + tail;
    }
    t->epoch_start[0] = t->epoch_start[1] = 1000;
    return t;
}

Test(analyze, handmade_straggler_waits_are_exact)
{
    int64_t n = 20;
    stall_tidy_trace *t = handmade(n, 3000000, 10000000, 40000000, 2000000);
    stall_analysis a;
    stall_analyze(t, &a);
    /* Rank 0 waits 40 ms at every barrier; iterations 1.. are charged to
     * rank 1's compute, the first one to start-up. */
    cr_expect(fabs(a.rank[0].barrier_s - n * 0.040) < 1e-9, "%.9f", a.rank[0].barrier_s);
    cr_expect(fabs(a.rank[1].barrier_s) < 1e-12);
    cr_expect(fabs(a.rank[0].data_s - (n - 1) * 0.003) < 1e-9, "%.9f", a.rank[0].data_s);
    cr_expect(fabs(a.rank[0].post_s - n * 0.002) < 1e-9);
    cr_expect_eq(a.rank[1].last, n - 1);
    cr_expect_eq(a.straggler, 1);
    double total = 2 * n * (0.003 + 0.050 + 0.002);
    cr_expect(fabs(a.share_straggler - (n - 1) * 0.040 / total) < 1e-9, "%.9f", a.share_straggler);
    cr_expect_eq(a.verdict, STALL_VERDICT_STRAGGLER, "%s", a.sentence);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

Test(analyze, handmade_data_wait_dominates)
{
    stall_tidy_trace *t = handmade(30, 50000000, 10000000, 0, 1000000);
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect_eq(a.verdict, STALL_VERDICT_DATA, "%s", a.sentence);
    cr_expect_eq(a.share_straggler, 0.0);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* Constant durations, 1 worker, prefetch 2: after the first batch the loop
 * waits exactly D - C per iteration (the worker fetches back to back). */
static stall_time c_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e, (void)r, (void)k;
    return 40000000;
}
static stall_time c_compute(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e, (void)r, (void)k;
    return 10000000;
}

Test(analyze, simulated_steady_state_matches_closed_form)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 2;
    p.workers = 1;
    p.prefetch = 2;
    p.batches = 50;
    p.epochs = 2;
    stall_durations d = {.fetch = c_fetch, .compute = c_compute};
    stall_an_recorder rec = {0};
    stall_an_params(&rec, &p);
    stall_err err = {0};
    cr_assert_eq(stall_model_run(&p, &d, stall_an_record, &rec, NULL, &err), 0, "%s", err.msg);
    stall_tidy_trace *t = stall_an_recorder_take(&rec);
    cr_assert_not_null(t);
    stall_analysis a;
    stall_analyze(t, &a);
    for (int r = 0; r < 2; r++) {
        cr_expect(fabs(a.rank[r].data_s - 2 * 49 * 0.030) < 1e-9, "rank %d data %.9f", r,
                  a.rank[r].data_s);
        cr_expect(fabs(a.rank[r].compute_s - 2 * 50 * 0.010) < 1e-9);
        /* T(N-1) = E(N-1) + C = N D + C per epoch. */
        cr_expect(fabs(a.rank[r].total_s - 2 * (50 * 0.040 + 0.010)) < 1e-9, "%.9f",
                  a.rank[r].total_s);
    }
    cr_expect_eq(a.verdict, STALL_VERDICT_DATA);
    cr_expect_eq(a.nwk, 2);
    cr_expect_eq(a.wk[0].batches, 100);
    cr_expect(fabs(a.wk[0].mean_fetch_s - 0.040) < 1e-12);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

Test(analyze, writes_csvs_with_sources)
{
    stall_err err = {0};
    char path[1024];
    snprintf(path, sizeof path, "%s/traces/ddp2_straggler/trace.csv", STALL_SOURCE_DIR);
    cr_assert_eq(stall_analyze_job(path, adir, 0, NULL, &err), 0, "%s", err.msg);
    const char *files[] = {"analyze.csv", "per_rank.csv", "per_worker.csv", "windows.csv",
                           "slowest.csv"};
    for (size_t i = 0; i < 5; i++) {
        char p[1200];
        snprintf(p, sizeof p, "%s/%s", adir, files[i]);
        FILE *f = fopen(p, "r");
        cr_assert_not_null(f, "%s missing", p);
        char line[1024];
        int rows = 0;
        while (fgets(line, sizeof line, f))
            rows += rows == 0 || strncmp(line, "measured,", 9) == 0;
        fclose(f);
        cr_expect_gt(rows, 1, "%s has no data rows", files[i]);
    }
    cr_expect_eq(stall_analyze_job(path, adir, 3, NULL, &err), STALL_ECONFIG,
                 "--workers on a tidy trace must be refused");
}
