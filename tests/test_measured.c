/*
 * measured: a measured run decomposed into the closed-loop model's inputs,
 * for the notebook's dsanalyzer traces. The oracles are independent of the
 * code under test: the worker counts the tidy traces record in their own
 * column, the golden trace's file name (12 workers over 4 GPUs), and the
 * perf file's numbers recomputed here from the raw arrays.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stall/config.h"
#include "stall/dsanalyzer.h"
#include "stall/measured.h"
#include "stall/tidy.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/scenario.h"
#include "stall/validate.h"

#include "tmpdir.h"

static char mdir[] = "/tmp/stall_measured_XXXXXX";
static void ms_setup(void)
{
    tmpdir_make(mdir);
}
static void ms_teardown(void)
{
    tmpdir_remove(mdir);
}
TestSuite(measured, .init = ms_setup, .fini = ms_teardown, .timeout = 120);

#define GOLDEN STALL_SOURCE_DIR "/tests/golden/seed-case1/input/"
#define STEM "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0"

static stall_ds_trace *load_golden(void)
{
    stall_ds_trace *d = NULL;
    stall_err err = {0};
    int rc =
        stall_ds_load(GOLDEN STEM "_simp_fetchdifftime.csv",
                      GOLDEN STEM "_simp_fetchstartdifftime.csv", GOLDEN STEM ".csv", 1, &d, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    return d;
}

Test(measured, infer_workers_matches_the_tidy_traces_own_column)
{
    const char *traces[] = {"w1", "w2", "w4", "ddp2_w2", "ddp2_w2_ddphook"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        char path[512];
        snprintf(path, sizeof path, STALL_SOURCE_DIR "/traces/%s/trace.csv", traces[i]);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_assert_eq(stall_tidy_load(path, &t, &err), 0, "%s", err.msg);
        cr_assert_gt(t->workers, 0, "%s records no workers", path);
        int agree = 0;
        int w = stall_measured_infer_workers(t, &agree);
        cr_expect_eq(w, t->workers, "%s: inferred %d workers, the trace says %d", path, w,
                     t->workers);
        cr_expect_eq(agree, t->ranks, "%s: %d of %d ranks agree", path, agree, t->ranks);
        stall_tidy_free(t);
    }
}

Test(measured, golden_trace_infers_the_3_workers_per_gpu_of_its_name)
{
    stall_ds_trace *d = load_golden();
    stall_measured m;
    stall_err err = {0};
    cr_assert_eq(stall_measured_from_dsanalyzer(d, -1, 0, &m, &err), 0, "%s", err.msg);
    cr_expect_eq(m.workers, 12 / 4, "workers %d", m.workers);
    cr_expect_eq(m.workers_from, STALL_WORKERS_INFERRED);
    cr_expect_eq(m.prefetch, 2, "PyTorch's default prefetch factor, got %d", m.prefetch);
    cr_expect_eq(m.ranks, 4);
    cr_expect_eq(m.epochs, 1);
    cr_expect_eq(m.batches, 850);
    stall_measured_free(&m);
    cr_assert_eq(stall_measured_from_dsanalyzer(d, 5, 4, &m, &err), 0, "%s", err.msg);
    cr_expect_eq(m.workers, 5);
    cr_expect_eq(m.prefetch, 4);
    cr_expect_eq(m.workers_from, STALL_WORKERS_GIVEN);
    stall_measured_free(&m);
    stall_ds_free(d);
}

Test(measured, golden_decomposition_matches_the_perf_file)
{
    stall_ds_trace *d = load_golden();
    stall_measured m;
    stall_err err = {0};
    cr_assert_eq(stall_measured_from_dsanalyzer(d, -1, 0, &m, &err), 0, "%s", err.msg);
    int g = d->gpus;
    size_t n = d->rows;
    /* Measured epoch: the last iteration's end (request + iteration time)
     * minus the first request, over all GPUs, recomputed from the raw
     * columns. */
    double q0 = INFINITY, end = -INFINITY, stall_sum = 0;
    for (int r = 0; r < g; r++) {
        double q = d->time_ns[r] / 1e9 - d->stall_s[r];
        q0 = q < q0 ? q : q0;
        size_t i = (n - 1) * (size_t)g + (size_t)r;
        double e = d->time_ns[i] / 1e9 - d->stall_s[i] + d->iter_s[i];
        end = e > end ? e : end;
    }
    for (size_t k = 0; k < n; k++) {
        double mx = 0, waited = 0;
        /* The first batch is waited for from the epoch's start, the earliest
         * first request q0 (the model's Q(r,0)); a later one from its own. */
        for (int r = 0; r < g; r++) {
            mx = fmax(mx, d->stall_s[k * (size_t)g + (size_t)r]);
            waited =
                fmax(waited, k ? d->stall_s[k * (size_t)g + (size_t)r] : d->time_ns[r] / 1e9 - q0);
        }
        stall_sum += waited;
        for (int r = 0; r < g; r++) {
            double c = fmax(0, d->iter_s[k * (size_t)g + (size_t)r] - mx);
            double got = m.compute[(size_t)r * n + k] / 1e9;
            cr_assert(fabs(got - c) < 2e-9, "C(%d,%zu) = %.9f, perf file gives %.9f", r, k, got, c);
            /* The fetch is the measured one plus the worker turnaround. */
            double f = m.fetch[(size_t)r * n + k] / 1e9 - m.turnaround / 1e9;
            cr_assert(fabs(f - d->fetch_s[k * (size_t)g + (size_t)r]) < 2e-9,
                      "D(%d,%zu) = %.9f vs %.9f", r, k, f, d->fetch_s[k * (size_t)g + (size_t)r]);
        }
    }
    cr_expect(fabs(m.epoch_s[0] - (end - q0)) < 1e-5, "epoch %.6f vs %.6f", m.epoch_s[0], end - q0);
    cr_expect(fabs(m.stall_s[0] - stall_sum / n) < 1e-6, "stall %.6f vs %.6f", m.stall_s[0],
              stall_sum / n);
    /* The turnaround between a worker's batches is visible in the starts:
     * positive and well below a fetch. */
    cr_expect(m.turnaround > 0 && m.turnaround < m.mean_fetch_s * 1e9 / 10, "turnaround %lld",
              (long long)m.turnaround);
    stall_measured_free(&m);
    stall_ds_free(d);
}

Test(measured, validate_reproduces_the_shipped_example_within_one_percent)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, STALL_SOURCE_DIR "/configs/example.ini", &err), 0, "%s",
                 err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char out[600];
    snprintf(out, sizeof out, "%s/v", mdir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_validate(&cfg, &o, &err), 0, "%s", err.msg);
    char path[700];
    snprintf(path, sizeof path, "%s/validate.csv", out);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[512];
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    int e;
    double meas, sim, pct;
    cr_assert_eq(sscanf(line, "%d,%lf,%lf,%lf", &e, &meas, &sim, &pct), 4, "%s", line);
    cr_expect(fabs(sim - meas) / meas < 0.01, "measured %.3f simulated %.3f", meas, sim);
    cr_expect(meas > 2000 && meas < 3000, "the 850-batch epoch takes about 2450 s: %.3f", meas);
}

/* ---- streaming (jobs/stream.c) against the whole-table path ---- */

Test(measured, a_trace_is_streamed_when_large_or_asked_to)
{
    char path[600];
    snprintf(path, sizeof path, "%s/big.csv", mdir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("x\n", f);
    fclose(f);
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.format = STALL_FORMAT_TIDY;
    snprintf(cfg.path, sizeof cfg.path, "%s", path);
    stall_run_opts o = {.jobs = 1};
    cr_assert(!stall_job_streams(&cfg, &o), "a 2-byte trace is read whole");
    o.in_memory = -1;
    cr_assert(stall_job_streams(&cfg, &o));
    /* A sparse file of the threshold's size: streamed unless told not to. */
    cr_assert_eq(truncate(path, STALL_STREAM_MIN_BYTES), 0);
    o.in_memory = 0;
    cr_assert(stall_job_streams(&cfg, &o), "a 64 MiB trace is streamed");
    o.in_memory = 1;
    cr_assert(!stall_job_streams(&cfg, &o));
    cr_assert_eq(truncate(path, STALL_STREAM_MIN_BYTES - 1), 0);
    o.in_memory = 0;
    cr_assert(!stall_job_streams(&cfg, &o), "just below the threshold: whole");
    remove(path);
}

typedef int (*job_fn)(const stall_config *, const stall_run_opts *, stall_err *);

/* Loads ini (when given), applies the "section.key=value" sets, runs job
 * into out streamed (in_memory 0) or whole (1) and returns its terminal text
 * without the last line, which names the result folder. */
static char *run_captured(job_fn job, const char *ini, const char *const *sets, int in_memory,
                          const char *out)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    if (ini)
        cr_assert_eq(stall_config_load(&cfg, ini, &err), 0, "%s", err.msg);
    for (const char *const *x = sets; x && *x; x++)
        cr_assert_eq(stall_config_set(&cfg, *x, &err), 0, "%s: %s", *x, err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char *term = NULL;
    size_t tlen = 0;
    FILE *tf = open_memstream(&term, &tlen);
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = tf, .in_memory = in_memory ? 1 : -1};
    cr_assert_eq(job(&cfg, &o, &err), 0, "%s (in_memory %d)", err.msg, in_memory);
    fclose(tf);
    char *last = strstr(term, "results in ");
    if (last)
        *last = '\0';
    return term;
}

static char *validate_run(const char *ini, const char *set, int in_memory, char **csv)
{
    char out[600];
    snprintf(out, sizeof out, "%s/v%d", mdir, in_memory);
    const char *sets[] = {set, NULL};
    char *term = run_captured(stall_validate, ini, sets, in_memory, out);
    char path[700];
    snprintf(path, sizeof path, "%s/validate.csv", out);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    *csv = buf;
    return term;
}

static void expect_same_validate(const char *ini, const char *set)
{
    char *csv_s, *csv_m;
    char *term_s = validate_run(ini, set, 0, &csv_s), *term_m = validate_run(ini, set, 1, &csv_m);
    cr_expect_str_eq(csv_s, csv_m, "%s %s: validate.csv streamed:\n%s\nin memory:\n%s", ini,
                     set ? set : "", csv_s, csv_m);
    cr_expect_str_eq(term_s, term_m, "%s %s: terminal streamed:\n%s\nin memory:\n%s", ini,
                     set ? set : "", term_s, term_m);
    free(csv_s);
    free(csv_m);
    free(term_s);
    free(term_m);
}

Test(measured, streaming_validate_equals_in_memory_on_the_shipped_traces)
{
    const char *traces[] = {"w1", "w2", "w4", "ddp2_w2", "ddp2_w2_ddphook", "ddp2_straggler"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        char set[600];
        snprintf(set, sizeof set, "trace.path=%s/traces/%s/trace.csv", STALL_SOURCE_DIR, traces[i]);
        expect_same_validate(STALL_SOURCE_DIR "/configs/w2.ini", set);
    }
}

/* Latest minus earliest epoch_start of epoch e, read from the trace's text
 * (the column found by name), seconds. */
static double spread_from_text(const char *path, int e)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof line, f));
    int ce = -1, cs = -1, c = 0;
    for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), c++) {
        ce = strcmp(tok, "epoch") == 0 ? c : ce;
        cs = strcmp(tok, "epoch_start") == 0 ? c : cs;
    }
    cr_assert(ce >= 0 && cs >= 0);
    double lo = INFINITY, hi = -INFINITY;
    while (fgets(line, sizeof line, f)) {
        int ep = -1;
        double es = NAN;
        c = 0;
        for (char *p = line; p; p = strchr(p, ','), p = p ? p + 1 : NULL, c++) {
            if (c == ce)
                ep = atoi(p);
            if (c == cs)
                es = strtod(p, NULL);
        }
        if (ep == e) {
            lo = fmin(lo, es);
            hi = fmax(hi, es);
        }
    }
    fclose(f);
    return hi - lo;
}

/* A trace of g ranks x ne epochs x n batches with w workers, uneven fetch
 * times (some batches stall), and optionally the compute_end and loader
 * columns (without them, the worker count is inferred). */
static void write_trace(const char *path, int g, int ne, int n, int w, bool full)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end%s\n",
            full ? ",compute_end,epoch_start,workers,prefetch" : "");
    long long t0 = 1700000000000000LL, len = (long long)n * 1000 + 7000; /* us */
    for (int e = 0; e < ne; e++) {
        long long es = t0 + e * len;
        for (int k = 0; k < n; k++)
            for (int r = 0; r < g; r++) {
                long long req = es + 100 + k * 1000 + (r * 13 + e * 7) % 50;
                long long fe = req - 300 + 61 * ((k * 7 + r * 3 + e) % 11);
                long long fs = fe - 1900 - 17 * ((k + r) % 9);
                fs = fs < es + 10 ? es + 10 : fs;
                fe = fe < fs ? fs : fe;
                long long rd = (fe > req ? fe : req) + 5 + r % 4;
                long long ie = req + 900 - (r * 11 + k) % 40;
                ie = ie < rd + 50 ? rd + 50 : ie;
                long long ce = ie - 30 - (r + k) % 17;
                ce = ce < rd ? rd : ce;
                fprintf(f,
                        "%d,%d,%d,%d,%lld.%06lld,%lld.%06lld,%lld.%06lld,%lld.%06lld,%lld.%06lld",
                        r, e, k, k % w, fs / 1000000, fs % 1000000, fe / 1000000, fe % 1000000,
                        req / 1000000, req % 1000000, rd / 1000000, rd % 1000000, ie / 1000000,
                        ie % 1000000);
                if (full)
                    fprintf(f, ",%lld.%06lld,%lld.%06lld,%d,2\n", ce / 1000000, ce % 1000000,
                            es / 1000000, es % 1000000, w);
                else
                    fputc('\n', f);
            }
    }
    fclose(f);
}

Test(measured, streaming_validate_equals_in_memory_on_generated_traces)
{
    char path[600], set[700];
    snprintf(path, sizeof path, "%s/gen.csv", mdir);
    snprintf(set, sizeof set, "trace.path=%s", path);
    const int shapes[][4] = {{5, 3, 40, 3}, {3, 4, 7, 2}, {8, 2, 1, 4}, {2, 3, 90, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int full = 0; full < 2; full++) {
            write_trace(path, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], full);
            expect_same_validate(STALL_SOURCE_DIR "/configs/w2.ini", set);
        }
}

/* ---- dsanalyzer traces: streaming (stall_ds_open) against stall_ds_load ---- */

static void ds_stamp(FILE *f, long long us)
{
    time_t s = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    fprintf(f, "%04d-%02d-%02d %02d:%02d:%02d.%06lld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
            tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1000000);
}

/* A dsanalyzer trace of g GPUs x n batches in each of epochs 1..ne, w
 * workers, uneven fetch times; perf rows by (Epoch, Step) with the GPUs of
 * a step in a scrambled order when scramble (stall_ds_open accepts that),
 * or by (Epoch, GPU, Step) when by_gpu (it does not). Writes the INI. */
static void write_ds(const char *dir, int g, int ne, int n, int w, bool scramble, bool by_gpu)
{
    char path[700];
    snprintf(path, sizeof path, "%s/f.csv", dir);
    FILE *ff = fopen(path, "w");
    snprintf(path, sizeof path, "%s/s.csv", dir);
    FILE *fs = fopen(path, "w");
    snprintf(path, sizeof path, "%s/p.csv", dir);
    FILE *fp = fopen(path, "w");
    cr_assert(ff && fs && fp);
    fputs(",Epoch,Index number", ff);
    fputs(",Epoch,Index number", fs);
    for (int r = 0; r < g; r++) {
        fprintf(ff, ",Fetch time (sec)_gpu%d", r);
        fprintf(fs, ",Start time_gpu%d", r);
    }
    fputs("\n", ff);
    fputs("\n", fs);
    fputs(",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n", fp);
    long long t = 1630000000LL * 1000000, row = 0, prow = 0;
    long long(*y)[64] = calloc((size_t)n, sizeof *y);
    long long(*q)[1] = calloc((size_t)n, sizeof *q);
    long long *ends = calloc((size_t)g * (size_t)w, sizeof *ends);
    long long(*tk) = calloc((size_t)n, sizeof *tk);
    for (int e = 1; e <= ne; e++) {
        long long qk = t + 5000;
        memset(ends, 0, (size_t)g * (size_t)w * sizeof *ends);
        for (int k = 0; k < n; k++, row++) {
            fprintf(ff, "%lld,%d,%d", row, e, k);
            fprintf(fs, "%lld,%d,%d", row, e, k);
            long long ymax = 0;
            for (int r = 0; r < g; r++) {
                long long *end = &ends[r * w + k % w];
                long long s = *end + 200 > t + 100 + 37 * r ? *end + 200 : t + 100 + 37 * r;
                long long f = 24000 + (k * 7919 + r * 1047 + e * 31) % 16000;
                *end = s + f;
                y[k][r] = (qk > s + f ? qk : s + f) + 15 + 3 * r;
                ymax = y[k][r] > ymax ? y[k][r] : ymax;
                fprintf(ff, ",%lld.%06lld", f / 1000000, f % 1000000);
                fputc(',', fs);
                ds_stamp(fs, s);
            }
            fputs("\n", ff);
            fputs("\n", fs);
            q[k][0] = qk;
            tk[k] = ymax + 10000 + (k % 5) * 300;
            qk = tk[k];
        }
        for (int a = 0; a < (by_gpu ? g : n); a++)
            for (int b = 0; b < (by_gpu ? n : g); b++) {
                int k = by_gpu ? b : a, r = by_gpu ? a : (scramble ? (b * 5 + k) % g : b);
                if (scramble && g % 5 == 0)
                    r = b;
                fprintf(fp, "%lld,%d,%d,%d,", prow++, e, k, r);
                ds_stamp(fp, y[k][r]);
                long long it = tk[k] - q[k][0], st = y[k][r] - q[k][0];
                fprintf(fp, ",%lld.%06lld,%lld.%06lld\n", it / 1000000, it % 1000000, st / 1000000,
                        st % 1000000);
            }
        t = qk + 60000000;
    }
    free(y);
    free(q);
    free(ends);
    free(tk);
    fclose(ff);
    fclose(fs);
    fclose(fp);
    snprintf(path, sizeof path, "%s/ds.ini", dir);
    FILE *fi = fopen(path, "w");
    cr_assert_not_null(fi);
    fprintf(fi,
            "[scenario]\nname = gen\nmode = model\n[trace]\nformat = dsanalyzer\n"
            "fetch = %s/f.csv\nstart = %s/s.csv\nperf = %s/p.csv\nepoch = 1\n",
            dir, dir, dir);
    fclose(fi);
}

Test(measured, streaming_validate_equals_in_memory_on_dsanalyzer_traces)
{
    expect_same_validate(STALL_SOURCE_DIR "/configs/example.ini", NULL);
    char ini[700];
    snprintf(ini, sizeof ini, "%s/ds.ini", mdir);
    /* GPUs, epochs, batches, workers; GPUs of a step in file order or not. */
    const int shapes[][4] = {
        {4, 1, 120, 3}, {3, 3, 40, 2}, {1, 2, 1, 1}, {7, 1, 60, 4}, {2, 2, 9, 12}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int scramble = 0; scramble < 2; scramble++) {
            write_ds(mdir, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], scramble, false);
            /* A count given: the trace's, or a multiple of it (both fit
             * its fetch starts, stall_ds_check_workers). */
            char given[64], twice[64];
            snprintf(given, sizeof given, "trace.workers=%d", shapes[i][3]);
            snprintf(twice, sizeof twice, "trace.workers=%d", 2 * shapes[i][3]);
            expect_same_validate(ini, NULL);
            expect_same_validate(ini, shapes[i][1] > 1 ? "trace.epoch=2" : given);
            expect_same_validate(ini, scramble ? twice : "trace.prefetch_factor=3");
        }
}

/* validate of ini with set, streamed (in_memory 0) or whole (1): its exit
 * code and message. */
static int validate_err(const char *ini, const char *set, int in_memory, stall_err *err)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, ini, err), 0, "%s", err->msg);
    cr_assert_eq(stall_config_set(&cfg, set, err), 0, "%s: %s", set, err->msg);
    cr_assert_eq(stall_config_check(&cfg, err), 0, "%s", err->msg);
    char out[600];
    snprintf(out, sizeof out, "%s/vr%d", mdir, in_memory);
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL, .in_memory = in_memory ? 1 : -1};
    return stall_validate(&cfg, &o, err);
}

/* [trace] workers below the fetches a GPU has in flight (here 3 workers,
 * given 2 or 0) would have a worker fetch two batches at once: validate
 * simulated it, +81% and +237% on configs/example.ini, exit 0. Refused,
 * streamed or whole, with the same message naming the start file, the
 * batch, its column and the key. */
Test(measured, a_worker_count_that_overlaps_a_workers_fetches_is_refused_streamed_or_whole)
{
    char ini[700];
    snprintf(ini, sizeof ini, "%s/ds.ini", mdir);
    write_ds(mdir, 3, 1, 40, 3, false, false);
    const char *sets[] = {"trace.workers=2", "trace.workers=0", "trace.workers=4"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        stall_err es = {0}, em = {0};
        int rs = validate_err(ini, sets[i], 0, &es), rm = validate_err(ini, sets[i], 1, &em);
        cr_expect_eq(rs, STALL_ECONFIG, "%s streamed: %s", sets[i], es.msg);
        cr_expect_eq(rm, STALL_ECONFIG, "%s whole: %s", sets[i], em.msg);
        cr_expect_str_eq(es.msg, em.msg, "%s", sets[i]);
        cr_expect(strstr(em.msg, "/s.csv: Epoch 1, batch ") && strstr(em.msg, ", Start time_gpu") &&
                      strstr(em.msg, "--set trace.workers = ") &&
                      strstr(em.msg, "the run had another worker count"),
                  "%s: %s", sets[i], em.msg);
    }
}

Test(measured, dsanalyzer_perf_rows_by_gpu_are_read_whole_and_said_so)
{
    char ini[700];
    snprintf(ini, sizeof ini, "%s/ds.ini", mdir);
    write_ds(mdir, 3, 1, 30, 2, false, false);
    char *csv_sorted, *csv_by_gpu;
    char *term_sorted = validate_run(ini, NULL, 0, &csv_sorted);
    write_ds(mdir, 3, 1, 30, 2, false, true);
    char *term_by_gpu = validate_run(ini, NULL, 0, &csv_by_gpu);
    cr_expect_str_eq(csv_by_gpu, csv_sorted, "by GPU:\n%s\nby step:\n%s", csv_by_gpu, csv_sorted);
    cr_expect_null(strstr(term_sorted, "not sorted"), "%s", term_sorted);
    cr_expect_not_null(strstr(term_by_gpu, "rows not sorted by (Epoch, Step): the trace was read "
                                           "whole into memory"),
                       "%s", term_by_gpu);
    free(csv_sorted);
    free(csv_by_gpu);
    free(term_sorted);
    free(term_by_gpu);
}

/* ---- mode = model on a trace: streamed (jobs/stream.c) against the tables ---- */

/* Appends file `path` to *out under a header naming it (`name`), or says
 * it is absent. */
static void bundle_file(char **out, size_t *len, const char *path, const char *name)
{
    size_t n = 0;
    char *s = stall_read_file(path, &n);
    size_t add = strlen(name) + 32 + (s ? n : 0);
    *out = realloc(*out, *len + add + 1);
    *len += (size_t)snprintf(*out + *len, add + 1, "== %s%s\n", name, s ? "" : " (absent)");
    if (s) {
        memcpy(*out + *len, s, n);
        *len += n;
        (*out)[*len] = '\0';
    }
    free(s);
}

static int no_dots(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

/* Runs a model scenario (ini, then the "section.key=value" sets) streamed
 * (in_memory 0) or from the whole tables (1) and returns everything it
 * wrote: the terminal text without its last line (it names the folder),
 * summary.csv and every alignment's iterations.csv and ranks.csv. */
static char *model_run(const char *ini, const char *const *sets, int in_memory)
{
    char out[600];
    snprintf(out, sizeof out, "%s/m%d", mdir, in_memory);
    char *term = run_captured(stall_scenario_run, ini, sets, in_memory, out);
    size_t len = strlen(term);
    char path[1100];
    snprintf(path, sizeof path, "%s/summary.csv", out);
    bundle_file(&term, &len, path, "summary.csv");
    struct dirent **ents;
    int n = scandir(out, &ents, no_dots, alphasort);
    cr_assert(n >= 0, "%s", out);
    for (int i = 0; i < n; i++) {
        if (strncmp(ents[i]->d_name, "fetch-", 6) == 0) {
            const char *files[] = {"iterations.csv", "ranks.csv"};
            for (int f = 0; f < 2; f++) {
                char name[400];
                snprintf(name, sizeof name, "%s/%s", ents[i]->d_name, files[f]);
                snprintf(path, sizeof path, "%s/%s", out, name);
                bundle_file(&term, &len, path, name);
            }
        }
        free(ents[i]);
    }
    free(ents);
    return term;
}

/* The two paths give the same bytes, and the streamed one did stream. */
static void expect_same_model(const char *ini, const char *const *sets)
{
    char *s = model_run(ini, sets, 0), *m = model_run(ini, sets, 1);
    char what[1200] = "";
    for (const char *const *x = sets; x && *x; x++)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s", *x);
    cr_expect(strstr(s, "iterations.csv\nepoch,") != NULL, "%s%s: no iterations.csv:\n%s",
              ini ? ini : "", what, s);
    cr_expect_null(strstr(s, "read whole"), "%s%s: did not stream:\n%.2000s", ini ? ini : "", what,
                   s);
    size_t i = 0;
    while (s[i] && s[i] == m[i])
        i++;
    size_t from = i > 300 ? i - 300 : 0;
    cr_expect(s[i] == m[i],
              "%s%s: streamed and whole differ at byte %zu:\nstreamed: ...%.600s\n"
              "whole:    ...%.600s",
              ini ? ini : "", what, i, s + from, m + from);
    free(s);
    free(m);
}

Test(measured, ranks_that_start_an_epoch_late_start_late_streamed_or_whole)
{
    /* traces/cpushare/sleep_ddp8_dev16_r1 (torch 2.11): its 8 ranks began
     * epoch 0 up to 2.74 s apart (docs/model.md 2.4, "Ranks that start
     * late"). The model starts each rank at its own epoch_start, so epoch 0
     * validates as epoch 1 does (it came out -38.8% with every rank started
     * at the earliest one's); validate says so and writes the spread, the
     * same streamed and whole. */
    char set[800], path[600];
    snprintf(path, sizeof path, "%s/traces/cpushare/sleep_ddp8_dev16_r1/trace.csv",
             STALL_SOURCE_DIR);
    snprintf(set, sizeof set, "trace.path=%s", path);
    /* Its CPU columns make it read whole: a copy without them (the first 17
     * columns, rank .. persistent) streams, and says the same. */
    char cut[700], cutset[800];
    snprintf(cut, sizeof cut, "%s/late_nocpu.csv", mdir);
    FILE *in = fopen(path, "r"), *out = fopen(cut, "w");
    cr_assert(in && out);
    char line[4096];
    while (fgets(line, sizeof line, in)) {
        char *p = line;
        for (int c = 0; c < 17 && p; c++)
            p = strchr(p + (c > 0), ',');
        cr_assert_not_null(p);
        fprintf(out, "%.*s\n", (int)(p - line), line);
    }
    fclose(in);
    fclose(out);
    snprintf(cutset, sizeof cutset, "trace.path=%s", cut);
    expect_same_validate(STALL_SOURCE_DIR "/configs/w2.ini", cutset);
    char *csv;
    char *term = validate_run(STALL_SOURCE_DIR "/configs/w2.ini", set, 0, &csv);
    double want0 = spread_from_text(path, 0), want1 = spread_from_text(path, 1);
    cr_assert_gt(want0, 1.0, "%.3f", want0);
    cr_assert_not_null(strstr(csv, ",rank_start_spread_s\n"), "%s", csv);
    char *row0 = strstr(csv, "\n0,"), *row1 = strstr(csv, "\n1,");
    cr_assert(row0 && row1, "%s", csv);
    double got[2];
    char *rows[2] = {row0, row1};
    for (int i = 0; i < 2; i++) {
        char *end = strchr(rows[i] + 1, '\n');
        cr_assert_not_null(end);
        char *comma = end;
        while (comma > rows[i] && *comma != ',')
            comma--;
        got[i] = strtod(comma + 1, NULL);
    }
    cr_expect(fabs(got[0] - want0) < 2e-6, "epoch 0: %.6f, the trace %.6f", got[0], want0);
    /* error_pct, the fourth column, of each epoch */
    for (int i = 0; i < 2; i++) {
        const char *c = rows[i] + 1;
        for (int k = 0; k < 3; k++)
            c = strchr(c, ',') + 1;
        double pct = strtod(c, NULL);
        cr_expect_lt(fabs(pct), 1.5, "epoch %d: %+.3f%% off the measured epoch", i, pct);
    }
    cr_expect(fabs(got[1] - want1) < 2e-6, "epoch 1: %.6f, the trace %.6f", got[1], want1);
    char say[200];
    snprintf(say, sizeof say, "epoch 0: the ranks began it %.3f s apart (rank 6 last", want0);
    cr_expect_not_null(strstr(term, say), "%s", term);
    cr_expect_not_null(strstr(term, "the model starts each rank as late"), "%s", term);
    cr_expect_not_null(strstr(term, "CPU columns: validate replays the durations as measured"),
                       "%s", term);
    /* `run` at the trace's 8 ranks replays the late start, streamed as
     * whole; at 4 ranks it says it cannot */
    const char *own[] = {cutset, NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", own);
    const char *together[] = {cutset, "ranks.late_start=none", NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", together);
    char *m8 = model_run(STALL_SOURCE_DIR "/configs/w2.ini", own, 1);
    cr_expect_not_null(strstr(m8, "each rank begins the trace's epochs as late as it did"),
                       "%.3000s", m8);
    const char *four[] = {cutset, "cluster.gpus=4", "fetch.resample=bootstrap", NULL};
    char *m4 = model_run(STALL_SOURCE_DIR "/configs/w2.ini", four, 1);
    cr_expect_not_null(strstr(m4, "not simulated for 4 GPUs"), "%.3000s", m4);
    free(m8);
    free(m4);
    cr_expect_null(strstr(term, "epoch 1: the ranks began"), "%s", term);
    free(csv);
    free(term);
}

/* The epoch_time_s of summary.csv's first row in a model_run bundle. */
static double bundle_epoch(const char *b)
{
    const char *h = strstr(b, "summary.csv\n");
    cr_assert_not_null(h, "%.2000s", b);
    h += strlen("summary.csv\n");
    const char *row = strchr(h, '\n');
    cr_assert_not_null(row);
    int col = 0;
    for (const char *c = h; c < row; c++)
        if (*c == ',')
            col++;
        else if (strncmp(c, "epoch_time_s", 12) == 0 && (c == h || c[-1] == ','))
            break;
    row++;
    for (int k = 0; k < col; k++)
        row = strchr(row, ',') + 1;
    return strtod(row, NULL);
}

Test(measured, late_start_none_begins_every_rank_together)
{
    /* [ranks] late_start = none on a trace whose ranks began epoch 0 up to
     * 7 s apart (sleep_ddp4_dev2c_r1): every rank begins together, so the
     * epochs are shorter by about that wait, streamed as whole; the key is
     * refused where it has no effect (one rank; another GPU count). */
    char set[700];
    snprintf(set, sizeof set, "trace.path=%s/traces/cpushare/sleep_ddp4_dev2c_r1/trace.csv",
             STALL_SOURCE_DIR);
    const char *late[] = {set, NULL}, *none[] = {set, "ranks.late_start=none", NULL};
    char *a = model_run(STALL_SOURCE_DIR "/configs/w2.ini", late, 1);
    char *b = model_run(STALL_SOURCE_DIR "/configs/w2.ini", none, 1);
    double ea = bundle_epoch(a), eb = bundle_epoch(b);
    /* the mean of 2 epochs loses about half of epoch 0's 7 s spread */
    cr_expect(ea - eb > 2.5 && ea - eb < 3.5, "mean epoch %.4f s replayed, %.4f s together", ea,
              eb);
    cr_expect_not_null(strstr(b, "late_start = none: every rank begins every epoch together"),
                       "%.3000s", b);
    free(a);
    free(b);
    stall_config cfg;
    stall_err err = {0};
    const char *refused[][4] = {
        {"trace.path=" STALL_SOURCE_DIR "/traces/w2/trace.csv", "ranks.late_start=none", NULL,
         NULL},
        {set, "ranks.late_start=trace", "cluster.gpus=2", "cluster.scaling=weak"}};
    for (int i = 0; i < 2; i++) {
        stall_config_defaults(&cfg);
        cr_assert_eq(stall_config_load(&cfg, STALL_SOURCE_DIR "/configs/w2.ini", &err), 0);
        for (int k = 0; k < 4 && refused[i][k]; k++)
            cr_assert_eq(stall_config_set(&cfg, refused[i][k], &err), 0, "%s", err.msg);
        cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
        char out[600];
        snprintf(out, sizeof out, "%s/refused%d", mdir, i);
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL, .in_memory = 1};
        memset(&err, 0, sizeof err);
        cr_expect_eq(stall_scenario_run(&cfg, &o, &err), STALL_ECONFIG, "case %d", i);
        cr_expect_not_null(strstr(err.msg, "ranks.late_start: has no effect"), "%s", err.msg);
        cr_expect_not_null(
            strstr(err.msg, i == 0 ? "the trace has 1 rank" : "the run has 2 GPUs, the trace 4"),
            "%s", err.msg);
    }
}

Test(measured, streaming_model_equals_whole_tables_on_the_shipped_configs)
{
    /* example-whatif: a dsanalyzer trace, 8 workers instead of 3; w2: a
     * tidy trace, 4 workers on 2 shared cores (the contention bisection
     * streams too). */
    expect_same_model(STALL_SOURCE_DIR "/configs/example-whatif.ini", NULL);
    const char *ex[] = {"align.fetch=none,avg,min", "compute.scale=0.5", "ddp.allreduce_s=0.02",
                        "report.per_rank=true", NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/example-whatif.ini", ex);
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", NULL);
    const char *w2[] = {"trace.path=" STALL_SOURCE_DIR "/traces/w2/trace.csv", "loader.workers=4",
                        NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", w2);
    const char *w2b[] = {"loader.workers=6",  "loader.prefetch_factor=3",       "fetch.scale=1.7",
                         "compute.scale=0.3", "storage.bandwidth_mb_s=2",       "run.batches=40",
                         "run.epochs=2",      "loader.persistent_workers=true", NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", w2b);
    /* An [align] fetch list on a tidy trace of two GPUs (on w2's one GPU it
     * changes nothing and is refused). */
    const char *w2c[] = {"trace.path=" STALL_SOURCE_DIR "/traces/ddp2_w2/trace.csv",
                         "loader.workers=3", "align.fetch=none,min,avg", NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", w2c);
    const char *traces[] = {"w1", "w4", "ddp2_w2", "ddp2_w2_ddphook", "ddp2_straggler"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        char path[600];
        snprintf(path, sizeof path, "trace.path=%s/traces/%s/trace.csv", STALL_SOURCE_DIR,
                 traces[i]);
        const char *a[] = {path, "loader.workers=3", NULL};
        expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", a);
        /* the ring model on the traces of more than one GPU (w1 and w4 have
         * one, whose ring has no steps: refused there), a tail on the others */
        const char *b[] = {"scenario.mode=model",
                           "trace.format=tidy",
                           path,
                           i < 2 ? "ddp.allreduce_s=0.002" : "ddp.bandwidth_gb_s=5",
                           i < 2 ? NULL : "ddp.bucket_mb=25",
                           NULL};
        expect_same_model(NULL, b);
    }
}

Test(measured, streaming_model_equals_whole_tables_on_generated_traces)
{
    char path[600], set[700];
    snprintf(path, sizeof path, "%s/gen.csv", mdir);
    snprintf(set, sizeof set, "trace.path=%s", path);
    const int shapes[][4] = {{5, 3, 40, 3}, {3, 4, 7, 2}, {8, 2, 1, 4}, {2, 3, 90, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        for (int full = 0; full < 2; full++) {
            write_trace(path, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], full);
            const char *a[] = {"scenario.mode=model", "trace.format=tidy", set, "loader.workers=5",
                               NULL};
            expect_same_model(NULL, a);
            const char *b[] = {set,
                               "loader.workers=2",
                               "fetch.scale=0.8",
                               "cluster.cores=3",
                               "ddp.allreduce_s=0.0001",
                               NULL};
            expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", b);
        }
    /* bench/gen_tidy.py's and gen_dsanalyzer.py's traces, where python3 runs. */
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "python3 %s/bench/gen_tidy.py 6000 4 3 > %s 2>/dev/null",
             STALL_SOURCE_DIR, path);
    if (system(cmd) == 0) {
        const char *a[] = {"scenario.mode=model", "trace.format=tidy", set, "loader.workers=6",
                           NULL};
        expect_same_model(NULL, a);
        const char *b[] = {set, "loader.workers=2", "cluster.cores=8", "compute.scale=2", NULL};
        expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", b);
    }
    snprintf(cmd, sizeof cmd, "python3 %s/bench/gen_dsanalyzer.py %s/gds 3000 3 >/dev/null 2>&1",
             STALL_SOURCE_DIR, mdir);
    if (system(cmd) == 0) {
        char ini[700];
        snprintf(ini, sizeof ini, "%s/gds.ini", mdir);
        const char *a[] = {"scenario.mode=model", "loader.workers=6", NULL};
        expect_same_model(ini, a);
        const char *b[] = {"scenario.mode=model", "loader.workers=2", "cluster.cores=4",
                           "fetch.scale=0.5", NULL};
        expect_same_model(ini, b);
    }
    char ini[700];
    snprintf(ini, sizeof ini, "%s/ds.ini", mdir);
    write_ds(mdir, 4, 2, 60, 3, true, false);
    const char *c[] = {"loader.workers=5", "trace.epoch=2", NULL};
    expect_same_model(ini, c);
}

Test(measured, model_beyond_the_trace_reads_it_whole_and_says_why)
{
    const char *a[] = {"trace.path=" STALL_SOURCE_DIR "/traces/w2/trace.csv", "cluster.gpus=3",
                       "cluster.scaling=weak", "fetch.resample=bootstrap", NULL};
    char *s = model_run(STALL_SOURCE_DIR "/configs/w2.ini", a, 0),
         *m = model_run(STALL_SOURCE_DIR "/configs/w2.ini", a, 1);
    const char *line = "the trace was read whole into memory: the what-if's 3 GPUs x 3 epochs x "
                       "60 batches go beyond the trace's 1 x 3 x 60, so durations are resampled\n";
    char *at = strstr(s, line);
    cr_assert_not_null(at, "%s", s);
    /* Without that line the outputs are the in-memory run's. */
    memmove(at, at + strlen(line), strlen(at + strlen(line)) + 1);
    cr_expect_str_eq(s, m, "streamed:\n%s\nwhole:\n%s", s, m);
    free(s);
    free(m);
}

Test(measured, model_on_dsanalyzer_perf_rows_by_gpu_reads_them_whole_and_says_so)
{
    char ini[700];
    snprintf(ini, sizeof ini, "%s/ds.ini", mdir);
    write_ds(mdir, 3, 1, 30, 2, false, true);
    const char *a[] = {"loader.workers=4", NULL};
    char *s = model_run(ini, a, 0), *m = model_run(ini, a, 1);
    char line[800];
    snprintf(line, sizeof line,
             "%s/p.csv: rows not sorted by (Epoch, Step): the trace was read whole into memory "
             "(sort them for a read in bounded memory)\n",
             mdir);
    char *at = strstr(s, line);
    cr_assert_not_null(at, "%s", s);
    memmove(at, at + strlen(line), strlen(at + strlen(line)) + 1);
    cr_expect_str_eq(s, m, "streamed:\n%s\nwhole:\n%s", s, m);
    free(s);
    free(m);
}

Test(measured, streaming_model_equals_whole_tables_for_persistent_inline_and_accumulation)
{
    /* The start-up of epoch 0 only (persistent workers: the trace's
     * persistent column, or [trace] persistent_workers on a trace without
     * one), loading in the main process (the turnaround off every fetch, no
     * hand-over) and gradient accumulation: the streamed run is the
     * in-memory one. */
    const char *p[] = {"scenario.mode=model", "trace.format=tidy",
                       "trace.path=" STALL_SOURCE_DIR "/traces/spawn_persistent/trace.csv", NULL};
    expect_same_model(NULL, p);
    /* w2 without its persistent column (the capture writes it last), with
     * the INI saying persistent. */
    char bare[600], set[700];
    snprintf(bare, sizeof bare, "%s/w2_bare.csv", mdir);
    FILE *in = fopen(STALL_SOURCE_DIR "/traces/w2/trace.csv", "r"), *out = fopen(bare, "w");
    cr_assert(in && out);
    char line[2048];
    while (fgets(line, sizeof line, in))
        fprintf(out, "%.*s\n", (int)(strrchr(line, ',') - line), line);
    fclose(in);
    fclose(out);
    snprintf(set, sizeof set, "trace.path=%s", bare);
    const char *q[] = {"scenario.mode=model", "trace.format=tidy", set,
                       "trace.persistent_workers=true", NULL};
    expect_same_model(NULL, q);
    const char *z[] = {"loader.workers=0", NULL};
    expect_same_model(STALL_SOURCE_DIR "/configs/w2.ini", z);
    const char *a[] = {"scenario.mode=model", "trace.format=tidy",
                       "trace.path=" STALL_SOURCE_DIR "/traces/split_g2/trace.csv",
                       "ddp.accumulation=3", NULL};
    expect_same_model(NULL, a);
}

/* A trace with checkpoint or CPU columns is read whole even when asked to
 * stream: only the whole-trace decomposition takes those spans out of the
 * tails and fetches (a streamed read would count a recorded checkpoint in
 * the tail and again as the model's), and the terminal says why. */
Test(measured, a_trace_with_checkpoint_or_cpu_columns_is_read_whole)
{
    const char *traces[] = {"ckpt_w2_n25/trace.csv", "cpushare/sleep_ddp2_r1/trace.csv"};
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        char set[600];
        snprintf(set, sizeof set, "trace.path=%s/traces/%s", STALL_SOURCE_DIR, traces[i]);
        char *csv_s, *csv_m;
        char *term_s = validate_run(STALL_SOURCE_DIR "/configs/w2.ini", set, 0, &csv_s);
        char *term_m = validate_run(STALL_SOURCE_DIR "/configs/w2.ini", set, 1, &csv_m);
        cr_expect_str_eq(csv_s, csv_m, "%s: validate.csv asked to stream:\n%s\nin memory:\n%s",
                         traces[i], csv_s, csv_m);
        cr_expect(strstr(term_s, "read whole into memory: its checkpoint or CPU columns"),
                  "%s: the terminal says why:\n%s", traces[i], term_s);
        cr_expect(!strstr(term_m, "read whole into memory"), "%s", term_m);
        free(csv_s);
        free(csv_m);
        free(term_s);
        free(term_m);
    }
}
