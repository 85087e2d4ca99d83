/*
 * analyze: the verdicts on the shipped traces (each trace is what its
 * README says it is: ddp2_straggler has rank 1 computing 4.2x longer (its
 * forward+backward stretched 6x by --slow-factor 6), the
 * others are data-bound), the parts of a rank's time add up to its epochs,
 * and the numbers match independent oracles: a hand-built trace whose
 * waits are known, and the closed form of a simulated steady state.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stall/analyze.h"
#include "stall/config.h"
#include "stall/job.h"
#include "stall/model.h"
#include "stall/table.h"
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

static double known(double v)
{
    return isnan(v) ? 0 : v;
}

static void analyse_file(const char *rel, int workers, stall_analysis *a)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", STALL_SOURCE_DIR, rel);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_an_load(path, workers, &t, &err), 0, "%s: %s", rel, err.msg);
    stall_analyze(t, a);
    /* Property: a rank's parts add up to its time, on every trace (an
     * unknown part, NaN, is inside another: hand-over in data, the barrier
     * in compute or post). */
    for (int r = 0; r < a->ranks; r++) {
        const stall_an_rank *x = &a->rank[r];
        double sum = x->startup_s + x->data_s + known(x->handover_s) + x->compute_s +
                     known(x->barrier_s) + x->post_s + x->ckpt_s;
        cr_assert(fabs(sum - x->total_s) < 1e-6 * (1 + x->total_s),
                  "%s rank %d: parts %.9f != total %.9f", rel, r, sum, x->total_s);
    }
    double s = a->share_data + known(a->share_straggler) + a->share_compute + a->share_startup +
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

/* torch's legacy exporter writes each rank's times from its own profiler's
 * start: a barrier wait, a last rank or a straggler compared across ranks
 * were printed anyway ("rank 0 is last at the barrier in 80% of
 * iterations"). They are unknown now, and each rank's wait for the others
 * stays in its compute: without compute_end, compute is next - ready of
 * every iteration (the definitions of docs/model.md 8, from the rows). */
Test(analyze, ranks_on_clocks_of_their_own_have_no_barrier_or_straggler)
{
    stall_analysis a;
    analyse_file("tests/kineto/ddp2_w2", 0, &a);
    cr_assert(a.clocks_unaligned);
    cr_expect(isnan(a.share_straggler));
    cr_expect_eq(a.straggler, -1);
    cr_expect(strstr(a.sentence, "are unknown (the ranks' clocks are not aligned"), "%s",
              a.sentence);
    cr_expect_null(strstr(a.sentence, "last at the barrier"), "%s", a.sentence);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_an_load(STALL_SOURCE_DIR "/tests/kineto/ddp2_w2", 0, &t, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(t->ranks, 2);
    cr_assert_null(t->compute_end);
    for (int r = 0; r < t->ranks; r++) {
        cr_expect(isnan(a.rank[r].barrier_s), "rank %d", r);
        cr_expect_eq(a.rank[r].last, 0, "rank %d", r);
        double c = 0;
        for (int e = 0; e < t->epochs; e++)
            for (int64_t k = 0; k < t->batches; k++) {
                size_t i = stall_tidy_at(t, e, r, k);
                stall_time nx =
                    k + 1 < t->batches ? t->request[stall_tidy_at(t, e, r, k + 1)] : t->iter_end[i];
                c += stall_ns_to_s(nx - t->ready[i]);
            }
        cr_expect(fabs(a.rank[r].compute_s - c) < 1e-6, "rank %d: compute %.9f, rows %.9f", r,
                  a.rank[r].compute_s, c);
    }
    stall_tidy_free(t);
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
    /* Rank 0 waits 40 ms at every barrier, each charged to rank 1's
     * compute: in iteration 0 too, where the ranks started together. */
    cr_expect(fabs(a.rank[0].barrier_s - n * 0.040) < 1e-9, "%.9f", a.rank[0].barrier_s);
    cr_expect(fabs(a.rank[1].barrier_s) < 1e-12);
    cr_expect(fabs(a.rank[0].data_s - (n - 1) * 0.003) < 1e-9, "%.9f", a.rank[0].data_s);
    cr_expect(fabs(a.rank[0].post_s - n * 0.002) < 1e-9);
    cr_expect_eq(a.rank[1].last, n - 1);
    cr_expect_eq(a.rank[1].last_tied, 0);
    cr_expect_eq(a.straggler, 1);
    cr_expect(strstr(a.sentence, "tied") == NULL, "%s", a.sentence);
    double total = 2 * n * (0.003 + 0.050 + 0.002);
    cr_expect(fabs(a.share_straggler - n * 0.040 / total) < 1e-9, "%.9f", a.share_straggler);
    cr_expect(fabs(a.share_startup - 2 * 0.003 / total) < 1e-9, "%.9f", a.share_startup);
    cr_expect_eq(a.late_rank, -1);
    cr_expect_eq(a.verdict, STALL_VERDICT_STRAGGLER, "%s", a.sentence);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* Moves row i's loop and fetch times by d (iter_end apart). */
static void shift_row(stall_tidy_trace *t, size_t i, stall_time d)
{
    t->request[i] += d;
    t->fetch_start[i] += d;
    t->fetch_end[i] += d;
    t->ready[i] += d;
    t->compute_end[i] += d;
}

Test(analyze, a_rank_that_starts_late_makes_the_others_wait_as_start_up)
{
    /* The same trace with rank 1 beginning the epoch L = 100 ms late
     * (docs/model.md 2.4): everything after rank 0's first batch moves by
     * L. Rank 0 waits L + 40 ms at the first barrier: L is rank 1's start
     * (start-up), 40 ms its compute (straggler); the later iterations as
     * before. */
    int64_t n = 20;
    stall_time late = 100000000;
    stall_tidy_trace *t = handmade(n, 3000000, 10000000, 40000000, 2000000);
    for (int r = 0; r < 2; r++)
        for (int64_t k = 0; k < n; k++) {
            size_t i = stall_tidy_at(t, 0, r, k);
            t->iter_end[i] += late;
            if (r != 0 || k != 0)
                shift_row(t, i, late);
        }
    t->epoch_start[1] += late;
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect(fabs(a.rank[0].barrier_s - (n * 0.040 + 0.1)) < 1e-9, "%.9f", a.rank[0].barrier_s);
    cr_expect(fabs(a.rank[0].startup_s - 0.003) < 1e-9, "%.9f", a.rank[0].startup_s);
    cr_expect(fabs(a.rank[1].startup_s - 0.003) < 1e-9, "%.9f", a.rank[1].startup_s);
    double total = 2 * n * (0.003 + 0.050 + 0.002) + 0.1;
    cr_expect(fabs(a.rank[0].total_s + a.rank[1].total_s - total) < 1e-9);
    cr_expect(fabs(a.share_startup - (2 * 0.003 + 0.1) / total) < 1e-9, "%.9f", a.share_startup);
    cr_expect(fabs(a.share_straggler - n * 0.040 / total) < 1e-9, "%.9f", a.share_straggler);
    cr_expect(fabs(a.share_data - 2 * (n - 1) * 0.003 / total) < 1e-9, "%.9f", a.share_data);
    cr_expect_eq(a.late_rank, 1);
    cr_expect_eq(a.late_epoch, 0);
    cr_expect(fabs(a.late_s - 0.1) < 1e-12, "%.9f", a.late_s);
    cr_expect_not_null(strstr(a.sentence, "rank 1, which began epoch 0 0.100 s after the first"),
                       "%s", a.sentence);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

Test(analyze, windows_on_clocks_of_their_own_count_from_each_ranks_start)
{
    /* The hand-built trace, and the same with rank 1 on a clock 1000 s
     * ahead (clocks_unaligned, as per-rank profiler files of two hosts):
     * the windows' times are the same, each rank's taken from its own
     * start, not 1000 s late. */
    int64_t n = 20;
    stall_tidy_trace *t = handmade(n, 3000000, 10000000, 40000000, 2000000);
    stall_analysis a, b;
    stall_analyze(t, &a);
    stall_time off = INT64_C(1000000000000);
    for (int64_t k = 0; k < n; k++) {
        size_t i = stall_tidy_at(t, 0, 1, k);
        shift_row(t, i, off);
        t->iter_end[i] += off;
    }
    t->epoch_start[1] += off;
    t->clocks_unaligned = true;
    stall_analyze(t, &b);
    cr_assert_eq(a.nwin, b.nwin);
    for (int w = 0; w < a.nwin; w++) {
        cr_expect(fabs(a.win_start_s[w] - b.win_start_s[w]) < 1e-9, "window %d: %.9f, %.9f", w,
                  a.win_start_s[w], b.win_start_s[w]);
        cr_expect(fabs(a.win_end_s[w] - b.win_end_s[w]) < 1e-9, "window %d: %.9f, %.9f", w,
                  a.win_end_s[w], b.win_end_s[w]);
    }
    stall_analysis_free(&a);
    stall_analysis_free(&b);
    stall_tidy_free(t);
}

/* Two equally slow ranks reach every barrier at the same instant: the lower
 * index is counted last, and the verdict says it was a tie every time
 * rather than naming one rank alone. */
Test(analyze, a_tie_at_the_barrier_is_said)
{
    int64_t n = 20;
    stall_tidy_trace *t = handmade(n, 3000000, 10000000, 0, 2000000);
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect_eq(a.rank[0].last, n - 1);
    cr_expect_eq(a.rank[0].last_tied, n - 1);
    cr_expect_eq(a.rank[1].last, 0);
    cr_assert_eq(a.straggler, 0);
    cr_expect(strstr(a.sentence, "all 2 ranks reach the barrier together") != NULL, "%s",
              a.sentence);
    cr_expect(strstr(a.sentence, "rank 0 is last") == NULL, "%s", a.sentence);
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

/* ---- storage reads and checkpoints per epoch (docs/model.md 8) ---- */

/* What one epoch of a tidy trace shows, computed here from its rows alone
 * (the CSV's text as doubles of seconds), for one rank. */
typedef struct row_epoch {
    double fsum, f2sum, bytes, data, epoch_s, ckpt;
    int n;
} row_epoch;

/* Reads rel's rows into ep[epoch] (rank 0 only: the traces below have one
 * rank) and returns the epoch count; *workers and *batches from the rows. */
static int trace_epochs(const char *rel, row_epoch *ep, int cap, int *workers, int *batches)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", STALL_SOURCE_DIR, rel);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    const char *names[] = {"rank",    "epoch",      "batch",    "fetch_start", "fetch_end",
                           "request", "ready",      "iter_end", "bytes",       "epoch_start",
                           "workers", "ckpt_start", "ckpt_end"};
    int c[13];
    for (int i = 0; i < 13; i++)
        c[i] = stall_table_col(t, names[i]);
    for (int i = 0; i < 11; i++)
        cr_assert_geq(c[i], 0, "%s: no column %s", rel, names[i]);
    memset(ep, 0, (size_t)cap * sizeof *ep);
    int ne = 0;
    *batches = 0;
    for (size_t i = 0; i < t->nrows; i++) {
        cr_assert_eq(stall_table_num(t, i, c[0]), 0, "one rank");
        int e = (int)stall_table_num(t, i, c[1]), k = (int)stall_table_num(t, i, c[2]);
        cr_assert(e >= 0 && e < cap);
        ne = e + 1 > ne ? e + 1 : ne;
        *batches = k + 1 > *batches ? k + 1 : *batches;
        row_epoch *x = &ep[e];
        double f = stall_table_num(t, i, c[4]) - stall_table_num(t, i, c[3]);
        x->fsum += f;
        x->f2sum += f * f;
        x->n++;
        x->bytes += stall_table_num(t, i, c[8]);
        if (k >= 1) { /* the data part: clamp(fetch_end - request, 0, ready - request) */
            double q = stall_table_num(t, i, c[5]), y = stall_table_num(t, i, c[6]);
            x->data += fmax(0, fmin(stall_table_num(t, i, c[4]) - q, y - q));
        }
        double end = stall_table_num(t, i, c[7]) - stall_table_num(t, i, c[9]);
        x->epoch_s = end > x->epoch_s ? end : x->epoch_s;
        if (c[11] >= 0 && *stall_table_get(t, i, c[11]))
            x->ckpt += stall_table_num(t, i, c[12]) - stall_table_num(t, i, c[11]);
        *workers = (int)stall_table_num(t, i, c[10]);
    }
    stall_table_free(t);
    return ne;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no %s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* `stallsim analyze` on the storage traces (traces/README.md: the same job
 * reading through a cache of all, half or none of the dataset, and from the
 * page cache), against the rule computed here from the rows: per epoch the
 * mean fetch, read_above = it minus the fastest epoch's, MB/s per fetch
 * (bytes / summed fetch time) and of the epoch, the data part, and of it
 * min(data, read_above x (N - 1) / W) where read_above exceeds twice the
 * standard error of the two means' difference and 30% of the fastest mean. */
Test(analyze, storage_reads_per_epoch_match_the_trace_rows)
{
    const char *tr[] = {"store_warm", "store_half", "store_none", "pagecache_cold",
                        "pagecache_half"};
    double share[5];
    for (int ti = 0; ti < 5; ti++) {
        char rel[256], out[1200], p[1300];
        snprintf(rel, sizeof rel, "traces/%s/trace.csv", tr[ti]);
        snprintf(out, sizeof out, "%s/%s", adir, tr[ti]);
        snprintf(p, sizeof p, "%s/%s", STALL_SOURCE_DIR, rel);
        stall_err err = {0};
        FILE *term = tmpfile();
        cr_assert_eq(stall_analyze_job(p, out, 0, term, &err), 0, "%s", err.msg);
        row_epoch ep[8];
        int w = 0, nb = 0, ne = trace_epochs(rel, ep, 8, &w, &nb);
        cr_assert_geq(ne, 2);
        int warm = 0;
        for (int e = 1; e < ne; e++)
            if (ep[e].fsum / ep[e].n < ep[warm].fsum / ep[warm].n)
                warm = e;
        snprintf(p, sizeof p, "%s/storage.csv", out);
        stall_table *st = NULL;
        cr_assert_eq(stall_table_read(p, &st, &err), 0, "%s", err.msg);
        cr_assert_eq(st->nrows, (size_t)ne);
        const char *cols[] = {"mean_fetch_s", "read_above_s", "read_mb_s_fetch", "read_mb_s_epoch",
                              "data_s",       "storage_s",    "epoch_s"};
        int c[7];
        for (int i = 0; i < 7; i++)
            cr_assert_geq(c[i] = stall_table_col(st, cols[i]), 0, "storage.csv: no %s", cols[i]);
        double wm = ep[warm].fsum / ep[warm].n;
        double wv = (ep[warm].f2sum - ep[warm].n * wm * wm) / (ep[warm].n - 1);
        double storage = 0, total = 0;
        for (int e = 0; e < ne; e++) {
            const row_epoch *x = &ep[e];
            double m = x->fsum / x->n, v = (x->f2sum - x->n * m * m) / (x->n - 1);
            double above = m - wm, se = sqrt((v + wv) / x->n);
            bool slower = above > 2 * se && above > STALL_AN_READ_REL * wm;
            double want = fmin(x->data, (slower ? above : 0) * (nb - 1) / (w ? w : 1));
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[0]) - m) < 1e-6, "%s e%d", tr[ti], e);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[1]) - above) < 1e-6);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[2]) / (x->bytes / 1e6 / x->fsum) - 1) <
                      1e-5);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[3]) / (x->bytes / 1e6 / x->epoch_s) -
                           1) < 1e-5);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[4]) - x->data) < 1e-4);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[5]) - want) < 1e-4,
                      "%s epoch %d: storage_s %s, from the rows %.6f", tr[ti], e,
                      stall_table_get(st, (size_t)e, c[5]), want);
            cr_expect(fabs(stall_table_num(st, (size_t)e, c[6]) - x->epoch_s) < 1e-5);
            storage += want;
            total += x->epoch_s;
        }
        share[ti] = storage / total;
        /* analyze.csv and the terminal name the cause only where it is shown. */
        snprintf(p, sizeof p, "%s/analyze.csv", out);
        char *an = slurp(p);
        cr_expect_eq(strstr(an, "measured,share_storage,") != NULL, storage > 0, "%s: %s", tr[ti],
                     an);
        rewind(term);
        char line[512];
        bool said = false;
        while (fgets(line, sizeof line, term))
            said |= strstr(line, "fetches slower than") != NULL;
        fclose(term);
        cr_expect_eq(said, storage > 0, "%s", tr[ti]);
        stall_table_free(st);
    }
    /* What the traces are: a cold first epoch, then warm ones, takes most of
     * store_warm's data wait; half a cache about half of store_half's;
     * store_none's epochs are all cold alike: nothing above the fastest. */
    cr_expect_gt(share[0], 0.30, "store_warm %.3f", share[0]);
    cr_expect(share[1] > 0.10 && share[1] < share[0], "store_half %.3f", share[1]);
    cr_expect_eq(share[2], 0, "store_none %.3f", share[2]);
}

/* The attribution against what the slower epoch cost: on the two storage
 * traces whose loop waited for data, epoch 0's reads above the fastest
 * epoch come within 10% of its time above the fastest epoch's (the same
 * work; evidence for the rule, docs/model.md 8). */
Test(analyze, storage_reads_explain_the_cold_epoch)
{
    const char *tr[] = {"store_warm", "store_half"};
    for (int ti = 0; ti < 2; ti++) {
        char rel[256];
        snprintf(rel, sizeof rel, "traces/%s/trace.csv", tr[ti]);
        stall_analysis a;
        analyse_file(rel, 0, &a);
        cr_assert_not_null(a.io);
        double excess = a.io[0].epoch_s - a.io[a.warm_epoch].epoch_s;
        cr_expect(fabs(a.io[0].storage_s / excess - 1) < 0.10, "%s: %.3f s of reads, %.3f s slower",
                  tr[ti], a.io[0].storage_s, excess);
        stall_analysis_free(&a);
    }
}

/* Checkpoints per epoch: checkpoint.csv's share of the epoch is the
 * recorded spans over the epoch's time, both from the rows. */
Test(analyze, checkpoint_share_per_epoch_matches_the_trace_rows)
{
    char p[1300], out[1200];
    snprintf(p, sizeof p, "%s/traces/ckpt_w2_n25/trace.csv", STALL_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/ck", adir);
    stall_err err = {0};
    cr_assert_eq(stall_analyze_job(p, out, 0, NULL, &err), 0, "%s", err.msg);
    row_epoch ep[8];
    int w = 0, nb = 0, ne = trace_epochs("traces/ckpt_w2_n25/trace.csv", ep, 8, &w, &nb);
    snprintf(p, sizeof p, "%s/checkpoint.csv", out);
    stall_table *t = NULL;
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    int cc = stall_table_col(t, "checkpoint_s"), ce = stall_table_col(t, "epoch_s"),
        cs = stall_table_col(t, "share_of_epoch");
    cr_assert(cc >= 0 && ce >= 0 && cs >= 0);
    cr_assert_eq(t->nrows, (size_t)ne);
    for (int e = 0; e < ne; e++) {
        cr_assert_gt(ep[e].ckpt, 0.1, "epoch %d records its checkpoints", e);
        cr_expect(fabs(stall_table_num(t, (size_t)e, cc) - ep[e].ckpt) < 1e-5);
        cr_expect(fabs(stall_table_num(t, (size_t)e, ce) - ep[e].epoch_s) < 1e-5);
        cr_expect(fabs(stall_table_num(t, (size_t)e, cs) - ep[e].ckpt / ep[e].epoch_s) < 1e-5);
    }
    stall_table_free(t);
}

/* Silence where a trace does not show a cause: the notebook's trace has no
 * bytes and no checkpoints (no storage.csv, no checkpoint.csv, no rows);
 * a trace with bytes whose epochs fetch alike (ddp2_straggler) gets its
 * storage.csv (MB/s) but no storage line or row. */
Test(analyze, no_storage_or_checkpoint_numbers_where_the_trace_shows_none)
{
    char p[1300], out[1200];
    stall_err err = {0};
    snprintf(p, sizeof p, "%s/configs/example.ini", STALL_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/nb", adir);
    cr_assert_eq(stall_analyze_job(p, out, 3, NULL, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/storage.csv", out);
    cr_expect_neq(access(p, F_OK), 0, "storage.csv for a trace without bytes");
    snprintf(p, sizeof p, "%s/checkpoint.csv", out);
    cr_expect_neq(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    char *an = slurp(p);
    cr_expect(!strstr(an, "storage") && !strstr(an, "checkpoint"), "%s", an);
    snprintf(p, sizeof p, "%s/traces/ddp2_straggler/trace.csv", STALL_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/st", adir);
    cr_assert_eq(stall_analyze_job(p, out, 0, NULL, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/storage.csv", out);
    cr_expect_eq(access(p, F_OK), 0, "the MB/s of a trace with bytes");
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    an = slurp(p);
    cr_expect(!strstr(an, "storage"), "%s", an);
    /* A bytes column of zeros: nothing read, no storage.csv. (Its buffers
     * were allocated before that was known, and leaked: valgrind on
     * `stallsim analyze` of this file found 1,296 bytes definitely lost;
     * Criterion's forked tests end without LeakSanitizer's report.) */
    char cmd[2800];
    snprintf(cmd, sizeof cmd,
             "awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"bytes\") c = i; "
             "print; next } { $c = 0; print }' %s/traces/ddp2_straggler/trace.csv > %s/zero.csv",
             STALL_SOURCE_DIR, adir);
    cr_assert_eq(system(cmd), 0);
    /* Analysed into the folder of ddp2_straggler's analysis above: its
     * storage.csv goes (it stayed, beside another trace's analyze.csv). */
    snprintf(p, sizeof p, "%s/zero.csv", adir);
    cr_assert_eq(stall_analyze_job(p, out, 0, NULL, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/storage.csv", out);
    cr_expect_neq(access(p, F_OK), 0, "storage.csv for a trace that read 0 bytes");
}

/* analyze of a notebook (dsanalyzer) trace without --workers infers them
 * from the fetch starts, as validate does (it said "0 workers per rank"),
 * and names [trace] workers beside --workers for an INI (it named only the
 * option, where an INI's own key is [trace] workers). */
Test(analyze, notebook_trace_without_workers_infers_them)
{
    char *text = NULL;
    size_t len = 0;
    FILE *term = open_memstream(&text, &len);
    char out[600];
    snprintf(out, sizeof out, "%s/nb", adir);
    stall_err err = {0};
    cr_assert_eq(stall_analyze_job("configs/seed-case1.ini", out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    cr_expect(strstr(text, "3 workers per rank (inferred from the fetch starts"), "%s", text);
    /* given an INI, the key that says otherwise is the INI's */
    cr_expect(strstr(text, "[trace] workers or --workers N says otherwise"), "%s", text);
    free(text);
}

/* An INI whose [trace] is tidy is the tidy trace it names: the workers come
 * from the trace's worker column (not inferred from the fetch starts), and
 * --workers is refused as it is for the trace given directly. Before, the
 * INI path said "inferred" and took --workers 3 without using it. */
Test(analyze, an_ini_naming_a_tidy_trace_takes_its_worker_column)
{
    char *text = NULL;
    size_t len = 0;
    FILE *term = open_memstream(&text, &len);
    char out[600];
    snprintf(out, sizeof out, "%s/w2ini", adir);
    stall_err err = {0};
    cr_assert_eq(stall_analyze_job("configs/w2.ini", out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    cr_expect(strstr(text, "2 workers per rank (the trace's worker column)"), "%s", text);
    cr_expect(!strstr(text, "inferred"), "%s", text);
    free(text);

    char direct[600];
    snprintf(direct, sizeof direct, "%s/w2csv", adir);
    err = (stall_err){0};
    cr_assert_eq(stall_analyze_job("traces/w2/trace.csv", direct, 3, NULL, &err), STALL_ECONFIG,
                 "--workers on the tidy trace given directly must be refused");
    err = (stall_err){0};
    cr_expect_eq(stall_analyze_job("configs/w2.ini", out, 3, NULL, &err), STALL_ECONFIG,
                 "--workers on an INI naming a tidy trace must be refused as on the trace");
    cr_expect(strstr(err.msg, "a tidy trace names its workers"), "%s", err.msg);
}

/* Writes an INI for a Kineto or dftracer trace with extra [trace] lines;
 * returns its path (static). */
static const char *json_ini(const char *name, const char *format, const char *trace,
                            const char *extra)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s.ini", adir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "[trace]\nformat = %s\npath = %s/%s\n%s", format, STALL_SOURCE_DIR, trace, extra);
    fclose(f);
    return path;
}

/* analyze read an INI's [trace] section but did not pass [trace] workers
 * to the Kineto and dftracer readers ("workers unknown", analyze.csv
 * workers 0, and a count a 0-worker trace contradicts taken), and took
 * [trace] prefetch_factor and persistent_workers (and the what-if keys)
 * without a word. Now the count is the run's, as run and validate read it
 * (the trace's own said beside it), a contradiction is refused, a key of
 * another format is refused as run refuses it, and the keys analyze does
 * not use are listed in a "left out" line. */
Test(analyze, kineto_and_dftracer_inis_take_trace_workers_and_say_what_is_left_out)
{
    const char *p = json_ini("kw2", "kineto", "tests/kineto/w2_nosched",
                             "workers = 2\nprefetch_factor = 4\npersistent_workers = true\n"
                             "[loader]\nworkers = 8\n");
    char *text = NULL;
    size_t len = 0;
    FILE *term = open_memstream(&text, &len);
    char out[700], want[1000];
    snprintf(out, sizeof out, "%s/kw2", adir);
    stall_err err = {0};
    cr_assert_eq(stall_analyze_job(p, out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    snprintf(want, sizeof want, "2 workers per rank (%s:4: [trace] workers)\n", p);
    cr_expect(strstr(text, want), "%s", text);
    cr_expect(strstr(text, "\nleft out (analyze reads what the trace recorded): [trace] "
                           "prefetch_factor, [trace] persistent_workers, [loader] workers\n"),
              "%s", text);
    free(text);
    char csv[800];
    snprintf(csv, sizeof csv, "%s/analyze.csv", out);
    const char *s = slurp(csv); /* its own buffer */
    cr_expect(strstr(s, "measured,workers,2\nmeasured,workers_inferred,0\n"), "%s", s);

    /* dftracer: the count given is the run's; its reader threads beside it. */
    p = json_ini("dw4", "dftracer", "tests/dftracer/gen2025", "workers = 4\n");
    text = NULL;
    term = open_memstream(&text, &len);
    snprintf(out, sizeof out, "%s/dw4", adir);
    cr_assert_eq(stall_analyze_job(p, out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    snprintf(want, sizeof want, "4 workers per rank (%s:4: [trace] workers; the trace reports 2)",
             p);
    cr_expect(strstr(text, want), "%s", text);
    cr_expect(!strstr(text, "left out"), "%s", text);
    free(text);

    /* Refused, nothing written: a count the trace contradicts (0 workers:
     * the loader's call is the whole fetch; a trace of the loop's waits
     * alone had workers), and a dsanalyzer key. */
    static const struct {
        const char *trace, *extra, *want;
    } bad[] = {
        {"tests/kineto/w0_nosched", "workers = 2\n",
         ":4: [trace] workers: 2, but the trace's DataLoader loads in the main process"},
        {"tests/kineto/w2_nosched", "workers = 0\n", ":4: [trace] workers: 0, but "},
        {"tests/kineto/w2_nosched", "epoch = 2\n",
         ":4: [trace] epoch: has no effect with [trace] format = kineto"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu", i);
        p = json_ini(name, "kineto", bad[i].trace, bad[i].extra);
        snprintf(out, sizeof out, "%s/%s", adir, name);
        err = (stall_err){0};
        cr_expect_eq(stall_analyze_job(p, out, 0, NULL, &err), STALL_ECONFIG, "%s", bad[i].extra);
        cr_expect(strstr(err.msg, bad[i].want), "%s", err.msg);
        cr_expect(!strchr(err.msg, '\n'), "one line: %s", err.msg);
        FILE *o = fopen(out, "r");
        cr_expect_null(o, "%s: a refused analysis wrote its folder", bad[i].extra);
        if (o)
            fclose(o);
    }
}

/* An INI's [sweep] and [plan] lines (read by sweep and plan alone; run and
 * validate refuse them) were taken by analyze without a word: neither
 * listed in its "left out" line nor refused. Now they are listed. */
Test(analyze, sweep_and_plan_lines_are_listed_as_left_out)
{
    const char *p = json_ini("swpl", "tidy", "traces/w2/trace.csv",
                             "[sweep]\nloader.workers = 1, 2\n[plan]\nstall_target = 0.1\n");
    char *text = NULL;
    size_t len = 0;
    FILE *term = open_memstream(&text, &len);
    char out[700];
    snprintf(out, sizeof out, "%s/swpl", adir);
    stall_err err = {0};
    cr_assert_eq(stall_analyze_job(p, out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    cr_expect(strstr(text, "\nleft out (analyze reads what the trace recorded): [sweep] "
                           "loader.workers, [plan] stall_target\n"),
              "%s", text);
    free(text);
}

/* An INI whose [trace] lacks the file its format needs names the key, as
 * run does (analyze said `[trace] fetch (default ""): : cannot open`). */
Test(analyze, an_ini_without_its_trace_files_names_the_key)
{
    char p[700], out[700];
    snprintf(p, sizeof p, "%s/notrace.ini", adir);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("[scenario]\nname = x\n", f);
    fclose(f);
    snprintf(out, sizeof out, "%s/notrace", adir);
    stall_err err = {0};
    cr_assert_neq(stall_analyze_job(p, out, 0, NULL, &err), 0);
    cr_expect(strstr(err.msg, "[trace] fetch: required for format = dsanalyzer") != NULL, "%s",
              err.msg);
}

/* The simulated run of a trace whose ranks began epoch 0 apart
 * (sleep_ddp4_dev2c_r1: rank 2 6.974 s after rank 3) is analysed from each
 * rank's own start, as the measured one is: the time before a rank began is
 * none of its own, the others' wait for it is start-up. (Every simulated
 * rank used to start at the earliest one's start: 4.2-7.3 s of "start-up"
 * each, 40.5% against the measured 21.9%.) */
Test(analyze, a_simulated_late_rank_is_analysed_from_its_own_start)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, STALL_SOURCE_DIR "/configs/w2.ini", &err), 0, "%s",
                 err.msg);
    cr_assert_eq(stall_config_set(&cfg,
                                  "trace.path=" STALL_SOURCE_DIR
                                  "/traces/cpushare/sleep_ddp4_dev2c_r1/trace.csv",
                                  &err),
                 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char out[600], p[700];
    snprintf(out, sizeof out, "%s/late", adir);
    FILE *devnull = fopen("/dev/null", "w");
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = devnull};
    cr_assert_eq(stall_run_observed(&cfg, &o, true, true, NULL, NULL, &err), 0, "%s", err.msg);
    fclose(devnull);
    snprintf(p, sizeof p, "%s/per_rank.csv", out);
    stall_table *t = NULL;
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    int src = stall_table_col(t, "source"), su = stall_table_col(t, "startup_s");
    double sum[2] = {0, 0};
    for (size_t r = 0; r < t->nrows; r++) {
        bool sim = strcmp(stall_table_get(t, r, src), "simulated") == 0;
        double v = stall_table_num(t, r, su);
        sum[sim] += v;
        cr_expect_lt(v, 0.5, "%s rank: start-up %.3f s", sim ? "simulated" : "measured", v);
    }
    cr_expect(fabs(sum[1] - sum[0]) < 0.1,
              "start-up summed over ranks: simulated %.3f, measured %.3f", sum[1], sum[0]);
    stall_table_free(t);
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    char *an = slurp(p);
    cr_expect_not_null(strstr(an, "simulated,late_start_rank,2\n"), "%s", an);
    cr_expect_not_null(strstr(an, "simulated,verdict,start-up-bound\n"), "%s", an);
}

/* run --analyze --timeline writes its analysis into the run's work folder,
 * before the folder is committed: an analysis that fails (here, a timeline
 * that cannot be written; an interrupt is the same) leaves the earlier
 * result folder whole, its analysis included. The run was committed first,
 * so its summary.csv replaced the earlier one and the analysis was gone. */
Test(analyze, a_run_whose_analysis_fails_leaves_the_earlier_folder_whole)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, STALL_SOURCE_DIR "/configs/w2.ini", &err), 0, "%s",
                 err.msg);
    char out[600], p[700];
    snprintf(out, sizeof out, "%s/whole", adir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_run_observed(&cfg, &o, true, false, NULL, NULL, &err), 0, "%s", err.msg);
    snprintf(p, sizeof p, "%s/summary.csv", out);
    char *sum0 = stall_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    char *an0 = stall_read_file(p, NULL);
    cr_assert(sum0 && an0);
    cr_assert_eq(stall_config_set(&cfg, "loader.workers=8", &err), 0, "%s", err.msg);
    char tl[700];
    snprintf(tl, sizeof tl, "%s/no-such-folder/t.json", adir);
    stall_tl_opts tlo = {.rank_hi = -1};
    cr_assert_neq(stall_run_observed(&cfg, &o, true, false, tl, &tlo, &err), 0);
    snprintf(p, sizeof p, "%s/summary.csv", out);
    char *sum1 = stall_read_file(p, NULL);
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    char *an1 = stall_read_file(p, NULL);
    cr_assert(sum1 && an1, "the earlier folder lost its files");
    cr_expect_str_eq(sum1, sum0);
    cr_expect_str_eq(an1, an0);
    free(sum0);
    free(sum1);
    free(an0);
    free(an1);
}

/* Whether folder d holds a name containing part. */
static bool an_has_named(const char *d, const char *part)
{
    DIR *o = opendir(d);
    if (!o)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(o)) != NULL)
        found = strstr(e->d_name, part) != NULL;
    closedir(o);
    return found;
}

/* A copy of file d/name (NULL when absent); free() it. */
static char *an_copy(const char *d, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", d, name);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    cr_assert_not_null(buf);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

Test(analyze, interrupted_analyze_keeps_the_old_analysis_whole, .timeout = 600)
{
    /* analyze -o into a folder with an older analysis removed the old
     * files first and then wrote the new ones one by one: SIGTERM in
     * between left part of the new analysis and none of the old. Now the
     * new files are written into DIR/.analyze.tmp.<pid> and swapped in with
     * the signals blocked. The signal is sent once that work folder
     * appears (it never does without the fix); when the analysis ends
     * before the signal lands, it tries again (the window is the writing
     * and the sync, a few ms). */
    char big[800], out[800], cmd[2400];
    snprintf(big, sizeof big, "%s/big.csv", adir);
    snprintf(out, sizeof out, "%s/res", adir);
    snprintf(cmd, sizeof cmd, "python3 %s/bench/gen_tidy.py 20000 8 3 > %s 2>/dev/null",
             STALL_SOURCE_DIR, big);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "%s/stallsim analyze %s/traces/w2/trace.csv -o %s >/dev/null 2>&1",
             STALL_BINARY_DIR, STALL_SOURCE_DIR, out);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    static const char *const files[] = {"analyze.csv", "per_rank.csv", "per_worker.csv",
                                        "windows.csv", "slowest.csv"};
    char *old[5], *neu[5], ref[800];
    for (int i = 0; i < 5; i++)
        cr_assert_not_null(old[i] = an_copy(out, files[i]), "%s", files[i]);
    /* A signal that lands while the swap holds them blocked ends the run
     * once the new analysis is in: whole too (the other outcome). */
    snprintf(ref, sizeof ref, "%s/ref", adir);
    snprintf(cmd, sizeof cmd, "%s/stallsim analyze %s -o %s >/dev/null 2>&1", STALL_BINARY_DIR, big,
             ref);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    for (int i = 0; i < 5; i++)
        cr_assert_not_null(neu[i] = an_copy(ref, files[i]), "%s", files[i]);
    snprintf(cmd, sizeof cmd, "%s/stallsim analyze %s/traces/w2/trace.csv -o %s >/dev/null 2>&1",
             STALL_BINARY_DIR, STALL_SOURCE_DIR, out);
    bool seen = false, landed = false;
    for (int tries = 0; tries < 40 && !landed; tries++) {
        pid_t pid = fork();
        cr_assert_neq(pid, -1);
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                _exit(126);
            execl(STALL_BINARY_DIR "/stallsim", "stallsim", "analyze", big, "-o", out,
                  (char *)NULL);
            _exit(127);
        }
        int st = 0;
        bool ended = false;
        while (!an_has_named(out, ".analyze.tmp.") && !ended)
            ended = waitpid(pid, &st, WNOHANG) == pid;
        if (!ended) {
            seen = true;
            kill(pid, SIGTERM);
            waitpid(pid, &st, 0);
        }
        if (WIFSIGNALED(st)) {
            landed = true;
            cr_expect_eq(WTERMSIG(st), SIGTERM);
            cr_expect_not(an_has_named(out, ".tmp"), "temporary files left in %s", out);
            int as_old = 0, as_new = 0;
            for (int i = 0; i < 5; i++) {
                char *now = an_copy(out, files[i]);
                as_old += now && strcmp(now, old[i]) == 0;
                as_new += now && strcmp(now, neu[i]) == 0;
                free(now);
            }
            cr_expect(as_old == 5 || as_new == 5,
                      "%d of 5 files the old analysis's, %d the new one's: neither whole", as_old,
                      as_new);
        } else {
            cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "analyze failed (status %d)", st);
            cr_assert_eq(system(cmd), 0, "%s", cmd); /* the old analysis again */
        }
    }
    cr_assert(seen, "no work folder .analyze.tmp.PID appeared in %s", out);
    if (!landed)
        cr_log_warn("every analysis ended before SIGTERM landed: nothing checked");
    for (int i = 0; i < 5; i++) {
        free(old[i]);
        free(neu[i]);
    }
}
