/*
 * whatif: a trace written from a simulated run, read back as a tidy trace
 * and validated, must give the simulated epoch times back (the trace
 * decomposition loses nothing the model uses); what-if runs and resampling
 * are deterministic; impossible what-ifs are rejected.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/config.h"
#include "stall/model.h"
#include "stall/tidy.h"
#include "stall/calibrate.h"
#include "stall/measured.h"
#include "stall/scenario.h"
#include "stall/validate.h"
#include "stall/io.h"

#include "tmpdir.h"

static char wdir[] = "/tmp/stall_whatif_XXXXXX";
static void wi_setup(void)
{
    tmpdir_make(wdir);
}
static void wi_teardown(void)
{
    tmpdir_remove(wdir);
}
TestSuite(whatif, .init = wi_setup, .fini = wi_teardown, .timeout = 120);

typedef struct gen {
    int g, ne;
    int64_t n;
    stall_time *f, *c, *a;
} gen;

static stall_time g_fetch(void *ctx, int e, int r, int64_t k)
{
    gen *x = ctx;
    return x->f[((size_t)e * x->g + r) * x->n + k];
}
static stall_time g_compute(void *ctx, int e, int r, int64_t k)
{
    gen *x = ctx;
    return x->c[((size_t)e * x->g + r) * x->n + k];
}
static stall_time g_tail(void *ctx, int e, int64_t k)
{
    gen *x = ctx;
    return x->a[(size_t)e * x->n + k];
}
static stall_time g_gap(void *ctx, int e)
{
    (void)ctx;
    return e == 0 ? 1000000000LL : 50000000LL;
}

typedef struct writer {
    FILE *f;
    int g, workers, prefetch;
    double epoch_s[8];
} writer;

static void w_iter(void *ctx, const stall_iter_record *rec)
{
    writer *w = ctx;
    for (int r = 0; r < w->g; r++) {
        stall_time q = rec->ready[r] - rec->stall[r];
        stall_time ce = rec->ready[r] + rec->compute[r];
        fprintf(w->f, "%d,%d,%lld,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%d,%d\n", r, rec->epoch,
                (long long)rec->batch, (int)(rec->fetched[r] % w->workers),
                rec->fetch_start[r] / 1e9, rec->fetch_end[r] / 1e9, q / 1e9, rec->ready[r] / 1e9,
                rec->iter_end / 1e9, ce / 1e9, rec->epoch_start / 1e9, w->workers, w->prefetch);
    }
    w->epoch_s[rec->epoch] = (rec->iter_end - rec->epoch_start) / 1e9;
}

/* x's fetches drawn in [f0, f0 + fs) ns and its computes in [c0, c0 + cs),
 * no tails. */
static void gen_draw(gen *x, gsl_rng *rng, stall_time f0, stall_time fs, stall_time c0,
                     stall_time cs)
{
    size_t cells = (size_t)x->ne * x->g * x->n;
    x->f = malloc(cells * sizeof *x->f);
    x->c = malloc(cells * sizeof *x->c);
    x->a = calloc((size_t)x->ne * x->n, sizeof *x->a);
    for (size_t i = 0; i < cells; i++) {
        x->f[i] = f0 + (stall_time)gsl_rng_uniform_int(rng, (unsigned long)fs);
        x->c[i] = c0 + (stall_time)gsl_rng_uniform_int(rng, (unsigned long)cs);
    }
}

static void gen_free(gen *x)
{
    free(x->f);
    free(x->c);
    free(x->a);
}

/* The model p run on x, its records written to path as a tidy trace. */
static void gen_write(const stall_model_params *p, gen *x, const char *path,
                      stall_model_stats *stats)
{
    writer w = {.f = fopen(path, "w"), .g = x->g, .workers = p->workers, .prefetch = p->prefetch};
    cr_assert_not_null(w.f, "%s", path);
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
          "epoch_start,workers,prefetch\n",
          w.f);
    stall_durations d = {
        .fetch = g_fetch, .compute = g_compute, .tail = g_tail, .epoch_gap = g_gap, .ctx = x};
    stall_err err = {0};
    cr_assert_eq(stall_model_run(p, &d, w_iter, &w, stats, &err), 0, "%s", err.msg);
    fclose(w.f);
}

Test(whatif, validate_of_a_simulated_trace_gives_its_epoch_times_back)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < 6; trial++) {
        gsl_rng_set(rng, 100 + trial);
        gen x = {.g = 1 + trial % 3, .ne = 2, .n = 40};
        size_t cells = (size_t)x.ne * x.g * x.n;
        x.f = malloc(cells * sizeof *x.f);
        x.c = malloc(cells * sizeof *x.c);
        x.a = malloc((size_t)x.ne * x.n * sizeof *x.a);
        for (size_t i = 0; i < cells; i++) {
            x.f[i] = 20000000 + (stall_time)gsl_rng_uniform_int(rng, 80000000);
            x.c[i] = 10000000 + (stall_time)gsl_rng_uniform_int(rng, 20000000);
        }
        for (size_t i = 0; i < (size_t)x.ne * x.n; i++)
            x.a[i] = (stall_time)gsl_rng_uniform_int(rng, 2000000);
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = x.g;
        p.gpus_per_node = x.g;
        p.workers = 1 + trial % 4;
        p.prefetch = 1 + trial % 2;
        p.batches = x.n;
        p.epochs = x.ne;
        p.startup = 30000000;
        char path[600];
        snprintf(path, sizeof path, "%s/t%d.csv", wdir, trial);
        writer w = {.f = fopen(path, "w"), .g = x.g, .workers = p.workers, .prefetch = p.prefetch};
        fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
              "epoch_start,workers,prefetch\n",
              w.f);
        stall_durations d = {
            .fetch = g_fetch, .compute = g_compute, .tail = g_tail, .epoch_gap = g_gap, .ctx = &x};
        stall_model_stats st;
        stall_err err = {0};
        cr_assert_eq(stall_model_run(&p, &d, w_iter, &w, &st, &err), 0, "%s", err.msg);
        fclose(w.f);
        /* The rows come out per iteration in rank order: sort is not needed. */
        stall_config cfg;
        stall_config_defaults(&cfg);
        cfg.format = STALL_FORMAT_TIDY;
        snprintf(cfg.path, sizeof cfg.path, "%s", path);
        char out[700];
        snprintf(out, sizeof out, "%s/v%d", wdir, trial);
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
        cr_assert_eq(stall_validate(&cfg, &o, &err), 0, "trial %d: %s", trial, err.msg);
        char vpath[800];
        snprintf(vpath, sizeof vpath, "%s/validate.csv", out);
        FILE *v = fopen(vpath, "r");
        char line[512];
        cr_assert(fgets(line, sizeof line, v));
        for (int e = 0; e < x.ne; e++) {
            int ep;
            double meas, sim, errpct;
            cr_assert(fgets(line, sizeof line, v));
            cr_assert_eq(sscanf(line, "%d,%lf,%lf,%lf", &ep, &meas, &sim, &errpct), 4);
            cr_assert_float_eq(meas, w.epoch_s[e], 1e-6,
                               "trial %d epoch %d: measured %f, generated %f", trial, e, meas,
                               w.epoch_s[e]);
            cr_assert(fabs(errpct) < 0.01, "trial %d (W=%d P=%d G=%d) epoch %d: error %.4f%%",
                      trial, p.workers, p.prefetch, x.g, e, errpct);
        }
        fclose(v);
        free(x.f);
        free(x.c);
        free(x.a);
    }
    gsl_rng_free(rng);
}

static const char *wi_trace(void)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/small.csv", wdir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,workers,prefetch\n",
          f);
    double t = 0;
    for (int k = 0; k < 6; k++) {
        double d = 0.03 + 0.01 * k;
        fprintf(f, "0,0,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,2,2\n", k, k % 2, t, t + d, t, t + d,
                t + 0.08);
        t += 0.08;
    }
    fclose(f);
    return path;
}

Test(whatif, what_if_beyond_the_trace_needs_resampling)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.mode = STALL_MODE_MODEL;
    cfg.format = STALL_FORMAT_TIDY;
    snprintf(cfg.path, sizeof cfg.path, "%s", wi_trace());
    cfg.gpus = 4;
    char out[700];
    snprintf(out, sizeof out, "%s/r", wdir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    stall_err err = {0};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "resample") != NULL, "message: %s", err.msg);
    cfg.resample = STALL_RESAMPLE_BOOTSTRAP;
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
}

static char *slurp(const char *path)
{
    char *s = stall_read_file(path, NULL);
    cr_assert_not_null(s, "%s", path);
    return s;
}

Test(whatif, resampled_what_if_is_deterministic_for_a_seed)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.mode = STALL_MODE_MODEL;
    cfg.format = STALL_FORMAT_TIDY;
    snprintf(cfg.path, sizeof cfg.path, "%s", wi_trace());
    cfg.gpus = 3;
    cfg.batches = 20;
    cfg.resample = STALL_RESAMPLE_LOGNORMAL;
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/a", wdir);
    snprintf(b, sizeof b, "%s/b", wdir);
    snprintf(c, sizeof c, "%s/c", wdir);
    stall_err err = {0};
    stall_run_opts o = {.outdir = a, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    o.outdir = b;
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    cfg.seed = 2;
    o.outdir = c;
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    char pa[800], pb[800], pc[800];
    snprintf(pa, sizeof pa, "%s/fetch-none_start-none/iterations.csv", a);
    snprintf(pb, sizeof pb, "%s/fetch-none_start-none/iterations.csv", b);
    snprintf(pc, sizeof pc, "%s/fetch-none_start-none/iterations.csv", c);
    char *x = slurp(pa), *y = slurp(pb), *z = slurp(pc);
    cr_assert_str_eq(x, y, "same seed, different output");
    cr_assert_str_neq(x, z, "different seeds gave identical resampled output");
    free(x);
    free(y);
    free(z);
}

/* epoch_time_s of the first row of DIR/summary.csv (the 9th column:
 * fetch_align,start_align,gpus,workers,prefetch,epochs,iterations,kept,...). */
static double summary_epoch(const char *dir)
{
    char sp[800];
    snprintf(sp, sizeof sp, "%s/summary.csv", dir);
    char *s = slurp(sp);
    char *fld = strchr(s, '\n') + 1;
    for (int i = 0; i < 8; i++)
        fld = strchr(fld, ',') + 1;
    double v = strtod(fld, NULL);
    free(s);
    return v;
}

Test(whatif, more_workers_on_few_cores_load_no_faster)
{
    /* CPU-bound loading (cpu_share 1) on 2 cores: 8 workers per GPU are no
     * faster than 2, while without the core limit they are. */
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.mode = STALL_MODE_MODEL;
    cfg.format = STALL_FORMAT_NONE;
    cfg.fetch_dist.mean_s = 0.4;
    cfg.compute_dist.mean_s = 0.01;
    cfg.batches = 200;
    cfg.epochs = 1;
    cfg.gpus = 1;
    cfg.cpu_share = 1.0;
    double epoch[2][2];
    for (int cores = 0; cores < 2; cores++)
        for (int wi = 0; wi < 2; wi++) {
            cfg.cores = cores ? 2 : 0;
            cfg.workers = wi ? 8 : 2;
            char out[700];
            snprintf(out, sizeof out, "%s/cores%d_w%d", wdir, cores, wi);
            stall_run_opts o = {.outdir = out, .jobs = 1};
            stall_err err = {0};
            cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
            epoch[cores][wi] = summary_epoch(out);
        }
    cr_assert(epoch[0][1] < 0.5 * epoch[0][0], "unlimited cores: 8 workers %.3f vs 2 workers %.3f",
              epoch[0][1], epoch[0][0]);
    cr_assert(fabs(epoch[1][1] - epoch[1][0]) / epoch[1][0] < 0.02,
              "2 cores: 8 workers %.3f vs 2 workers %.3f", epoch[1][1], epoch[1][0]);
}

/* The contention a trace's durations were measured under is found on the
 * cores of the machine it was captured on (meta.json beside traces/w2:
 * 2), not on the what-if's: "what if 1 core" took the trace for a run on 1
 * core, found it 1.319x contended, and so predicted 1 worker on 1 core 10%
 * faster than on 2 (4.012 against 4.442 s). More cores are never slower,
 * for every worker count; [trace] cores given says where it ran instead. */
Test(whatif, more_cores_are_never_slower_the_trace_machine_held)
{
    stall_config *cfg = malloc(sizeof *cfg);
    stall_config_defaults(cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_load(cfg, STALL_SOURCE_DIR "/configs/w2.ini", &err), 0, "%s",
                 err.msg);
    double epoch[3][4];
    const int workers[3] = {1, 2, 4};
    for (int w = 0; w < 3; w++)
        for (int c = 0; c < 4; c++) {
            cfg->workers = workers[w];
            cfg->cores = c + 1;
            char out[700];
            snprintf(out, sizeof out, "%s/tc_w%d_c%d", wdir, workers[w], c + 1);
            stall_run_opts o = {.outdir = out, .jobs = 1};
            cr_assert_eq(stall_scenario_run(cfg, &o, &err), 0, "%s", err.msg);
            epoch[w][c] = summary_epoch(out);
            if (c > 0)
                cr_expect_leq(epoch[w][c], epoch[w][c - 1] * (1 + 1e-9),
                              "%d workers: %d cores %.4f s, %d cores %.4f s", workers[w], c + 1,
                              epoch[w][c], c, epoch[w][c - 1]);
        }
    /* Captured on 1 core (said so): the same run deflated as on 1 core. */
    cfg->workers = 1;
    cfg->cores = 1;
    cfg->trace_cores = 1;
    char out[700];
    snprintf(out, sizeof out, "%s/tc_given", wdir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(cfg, &o, &err), 0, "%s", err.msg);
    cr_assert_lt(summary_epoch(out), 0.97 * epoch[0][0],
                 "a trace of 2 workers contended on 1 core: its fetches alone are shorter");
    free(cfg);
}

/* ---- calibrate on the shipped real traces ---- */

#define TRACE(w) STALL_SOURCE_DIR "/traces/" w "/trace.csv"

Test(whatif, calibrate_predicts_every_shipped_trace_from_every_other_within_5_percent)
{
    const char *paths[] = {TRACE("w1"), TRACE("w2"), TRACE("w4")};
    stall_calibration c;
    stall_err err = {0};
    cr_assert_eq(stall_calibrate_fit(paths, 3, 0, 0, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(c.cores, 2, "the capture machine has 2 cores; fitted %d", c.cores);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double p = c.predicted_s[i * 3 + j], m = c.measured_s[j];
            cr_assert(fabs(p - m) / m < 0.05,
                      "%d workers predicted from %d: %.4f s, measured %.4f s", c.workers[j],
                      c.workers[i], p, m);
        }
    /* 4 workers and the training loop on 2 cores: contended; 1 worker: not. */
    cr_assert(c.contention[2] > 1.05, "w4 contention %.3f", c.contention[2]);
    cr_assert(c.contention[0] < 1.001, "w1 contention %.3f", c.contention[0]);
    cr_assert(c.compute_share > 0, "forward/backward ran on the CPU: compute share %.2f",
              c.compute_share);

    /* mode = model with the printed INI lines gives calibrate's prediction. */
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.mode = STALL_MODE_MODEL;
    cfg.format = STALL_FORMAT_TIDY;
    snprintf(cfg.path, sizeof cfg.path, "%s", paths[2]);
    char set[4][64];
    snprintf(set[0], sizeof set[0], "loader.workers=1");
    snprintf(set[1], sizeof set[1], "cluster.cores=%d", c.cores);
    snprintf(set[2], sizeof set[2], "fetch.cpu_share=%.2f", c.fetch_share);
    snprintf(set[3], sizeof set[3], "compute.cpu_share=%.2f", c.compute_share);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(stall_config_set(&cfg, set[i], &err), 0, "%s", err.msg);
    char out[700];
    snprintf(out, sizeof out, "%s/calib_w4_to_w1", wdir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    double e = summary_epoch(out);
    cr_assert(fabs(e - c.predicted_s[2 * 3 + 0]) < 1e-6, "run %.7f s vs calibrate %.7f s", e,
              c.predicted_s[6]);
    stall_calibration_free(&c);
}

Test(whatif, calibrate_says_when_no_trace_was_contended)
{
    const char *paths[] = {TRACE("w1"), TRACE("w2")};
    stall_calibration c;
    stall_err err = {0};
    cr_assert_eq(stall_calibrate_fit(paths, 2, 2, 0, &c, &err), 0, "%s", err.msg);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    stall_calibration_print(&c, paths, f);
    fclose(f);
    cr_assert_not_null(strstr(buf, "warning: the shares are not pinned down"), "%s", buf);
    free(buf);
    stall_calibration_free(&c);
    /* Without --cores the count is the one both captures recorded (their
     * meta.json; test_calibrate.c refuses copies without it). */
    cr_assert_eq(stall_calibrate_fit(paths, 2, 0, 0, &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.cores, 2);
    cr_expect(c.cores_recorded[0] != '\0');
    stall_calibration_free(&c);
}

/* ---- semantics a user must be able to trust (issue 8) ---- */

/* Runs a model scenario on trace `trace` (relative to the source folder)
 * with "section.key=value" overrides; returns the terminal text (caller
 * frees) and leaves the results in `out`. */
static char *run_model(const char *trace, const char *const *sets, const char *out)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/%s", STALL_SOURCE_DIR, trace);
    cr_assert_eq(stall_config_set(&cfg, "scenario.mode=model", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "trace.format=tidy", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "align.start=none", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, set, &err), 0, "%s", err.msg);
    for (const char *const *s = sets; s && *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char tp[800];
    snprintf(tp, sizeof tp, "%s.term", out);
    FILE *t = fopen(tp, "w");
    cr_assert_not_null(t);
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = t};
    int rc = stall_scenario_run(&cfg, &o, &err);
    fclose(t);
    cr_assert_eq(rc, 0, "%s", err.msg);
    return slurp(tp);
}

/* The last field of the first data row of DIR/summary.csv (vs_measured_pct). */
static char *summary_vs_measured(const char *dir)
{
    char sp[800];
    snprintf(sp, sizeof sp, "%s/summary.csv", dir);
    char *s = slurp(sp);
    char *row = strchr(s, '\n') + 1;
    *strchr(row, '\n') = '\0';
    char *v = strdup(strrchr(row, ',') + 1);
    free(s);
    return v;
}

Test(whatif, storage_far_above_demand_does_not_slow_the_run)
{
    /* w2: 1 rank, 4 workers (what-if), ~0.2 MB per batch every ~80 ms per
     * worker: about 10 MB/s of demand. The measured fetch already did its
     * read, so 100x the demand changes (almost) nothing, a tenth of it
     * slows the run down a lot. */
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/nostorage", wdir);
    snprintf(b, sizeof b, "%s/fast", wdir);
    snprintf(c, sizeof c, "%s/slow", wdir);
    const char *base[] = {"loader.workers=4", NULL};
    const char *fast[] = {"loader.workers=4", "storage.bandwidth_mb_s=1000", NULL};
    const char *slow[] = {"loader.workers=4", "storage.bandwidth_mb_s=1", NULL};
    free(run_model("traces/w2/trace.csv", base, a));
    char *tf = run_model("traces/w2/trace.csv", fast, b);
    free(run_model("traces/w2/trace.csv", slow, c));
    double e0 = summary_epoch(a), e1 = summary_epoch(b), e2 = summary_epoch(c);
    cr_expect(fabs(e1 - e0) / e0 < 0.002, "1000 MB/s: %.4f s vs %.4f s without storage", e1, e0);
    cr_expect(e2 > 2 * e0, "1 MB/s: %.4f s vs %.4f s without storage", e2, e0);
    /* batch_mb came from the trace's bytes column (196736 bytes a batch). */
    cr_expect(strstr(tf, "0.196736 MB per batch (mean of the trace's bytes column)") != NULL, "%s",
              tf);
    free(tf);
}

Test(whatif, more_gpus_keep_the_traces_node_layout_and_say_the_node_count)
{
    /* ddp2_w2: 2 ranks on one 2-core host. 8 GPUs by default are 4 nodes
     * of 2 (the trace's layout), the same run as gpus_per_node = 2 given
     * explicitly; all 8 on one node's 2 cores is much slower. */
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/default", wdir);
    snprintf(b, sizeof b, "%s/explicit", wdir);
    snprintf(c, sizeof c, "%s/onenode", wdir);
    const char *def[] = {"cluster.gpus=8",      "cluster.cores=2",          "fetch.cpu_share=0.4",
                         "compute.cpu_share=1", "fetch.resample=bootstrap", NULL};
    const char *exp[] = {"cluster.gpus=8",
                         "cluster.cores=2",
                         "fetch.cpu_share=0.4",
                         "compute.cpu_share=1",
                         "fetch.resample=bootstrap",
                         "cluster.gpus_per_node=2",
                         NULL};
    const char *one[] = {"cluster.gpus=8",
                         "cluster.cores=2",
                         "fetch.cpu_share=0.4",
                         "compute.cpu_share=1",
                         "fetch.resample=bootstrap",
                         "cluster.gpus_per_node=8",
                         NULL};
    char *ta = run_model("traces/ddp2_w2/trace.csv", def, a);
    free(run_model("traces/ddp2_w2/trace.csv", exp, b));
    free(run_model("traces/ddp2_w2/trace.csv", one, c));
    double ea = summary_epoch(a), eb = summary_epoch(b), ec = summary_epoch(c);
    cr_expect_eq(ea, eb, "default layout %.6f vs explicit 2 per node %.6f", ea, eb);
    cr_expect(ec > 2 * ea, "8 GPUs on one 2-core node %.4f vs 4 nodes %.4f", ec, ea);
    cr_expect(strstr(ta, "8 GPUs on 4 nodes (2 per node)") != NULL, "%s", ta);
    /* Not the trace's run: no vs_measured. */
    char *vs = summary_vs_measured(a);
    cr_expect_str_eq(vs, "", "vs_measured_pct '%s' for 8 GPUs against a 2-GPU trace", vs);
    free(vs);
    free(ta);
}

Test(whatif, vs_measured_only_for_the_traces_gpus_batches_and_epochs)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/workers", wdir);
    snprintf(b, sizeof b, "%s/batches", wdir);
    const char *w[] = {"loader.workers=4", NULL};
    const char *n[] = {"run.batches=30", NULL};
    free(run_model("traces/w2/trace.csv", w, a));
    char *tb = run_model("traces/w2/trace.csv", n, b);
    char *va = summary_vs_measured(a), *vb = summary_vs_measured(b);
    double meas = 2.2552, ea = summary_epoch(a);
    cr_expect(fabs(strtod(va, NULL) - 100 * (ea - meas) / meas) < 0.01,
              "workers what-if: vs_measured '%s' for epoch %.4f", va, ea);
    cr_expect_str_eq(vb, "", "30 of 60 batches: vs_measured '%s'", vb);
    cr_expect(strstr(tb, "vs_meas left empty") != NULL, "%s", tb);
    free(va);
    free(vb);
    free(tb);
}

Test(whatif, terminal_labels_batches_per_second_and_states_the_stall_floor)
{
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/nosamples", wdir);
    snprintf(b, sizeof b, "%s/samples", wdir);
    /* The w1 trace records 16 samples per batch; [report] samples = 0
     * there means "from the trace", so use a trace-free run for the
     * batches/s label. */
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    const char *sets[] = {"scenario.mode=model", "trace.format=none",       "align.start=none",
                          "fetch.mean_s=0.1",    "compute.mean_s=0.05",     "run.batches=40",
                          "loader.workers=1",    "loader.handover_s=0.002", NULL};
    for (const char *const *s = sets; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char tp[800];
    snprintf(tp, sizeof tp, "%s.term", a);
    FILE *t = fopen(tp, "w");
    stall_run_opts o = {.outdir = a, .jobs = 1, .term = t};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    fclose(t);
    char *ta = slurp(tp);
    cr_expect(strstr(ta, "batches/s") != NULL && strstr(ta, "samples/s\n") == NULL, "%s", ta);
    /* 40 batches x 2 ms hand-over = 0.080 s, plus the first fetch 0.1 s. */
    cr_expect(strstr(ta, "stall floor: about 0.180 s per epoch") != NULL, "%s", ta);
    cr_expect(strstr(ta, "1 GPUs on 1 node") != NULL, "%s", ta);
    char *tb = run_model("traces/w1/trace.csv", NULL, b);
    cr_expect(strstr(tb, "samples/s\n") != NULL, "%s", tb);
    free(ta);
    free(tb);
}

/* The stall floor is part of the run's stall: no epoch stalls less than
 * it. With the storage tiers the trace's read is taken out of each fetch
 * and read again at the what-if's store, so the floor's first fetch is the
 * one the run made: traces/store_none at 1000 MB/s, having read at 20 MB/s
 * and 2 ms, printed a floor of 0.438 s (the measured first fetch, 0.187 s,
 * with its slow read in it) beside 32.44% of a 0.834 s epoch, 0.27 s. */
Test(whatif, the_stall_floor_is_below_the_runs_stall_at_a_faster_store)
{
    char out[700];
    snprintf(out, sizeof out, "%s/floor-store", wdir);
    const char *sets[] = {"storage.bandwidth_mb_s=1000", "storage.trace_mb_s=20",
                          "storage.trace_latency_ms=2", NULL};
    char *t = run_model("traces/store_none/trace.csv", sets, out);
    const char *fl = strstr(t, "stall floor: about ");
    cr_assert_not_null(fl, "%s", t);
    double floor_s = strtod(fl + strlen("stall floor: about "), NULL);
    cr_expect_not_null(strstr(fl, "first fetch "), "%s", fl);
    cr_expect_not_null(strstr(fl, " as run at the what-if's store"), "%s", fl);
    /* the run's stall per epoch: stall% of epoch_s, the "none" row */
    const char *row = strstr(t, "\nnone ");
    cr_assert_not_null(row, "%s", t);
    double epoch, vs, iter, stall, delay, pct;
    cr_assert_eq(sscanf(row + strlen("\nnone "), "%lf %lf%% %lf %lf %lf %lf", &epoch, &vs, &iter,
                        &stall, &delay, &pct),
                 6, "%s", row);
    double share = pct / 100;
    cr_expect_leq(floor_s, epoch * share * 1.01, "floor %.3f s, stall %.3f s: %s", floor_s,
                  epoch * share, t);
    free(t);
}

#include <gsl/gsl_cdf.h>

/* A trace-free what-if, with overrides. */
static void run_none(const char *out, const char *const *extra)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    const char *sets[] = {"scenario.mode=model",
                          "trace.format=none",
                          "align.start=none",
                          "fetch.mean_s=0.1",
                          "fetch.dist=lognormal",
                          "fetch.sigma=0.5",
                          "compute.mean_s=0.05",
                          "run.batches=60",
                          "cluster.gpus=4",
                          "loader.workers=2",
                          NULL};
    for (const char *const *s = sets; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s", err.msg);
    for (const char *const *s = extra; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
}

Test(whatif, replications_are_the_single_seed_runs_with_a_t_interval)
{
    enum { N = 6 };
    char out[700];
    snprintf(out, sizeof out, "%s/reps", wdir);
    const char *reps[] = {"run.replications=6", "run.seed=10", NULL};
    run_none(out, reps);
    double e[N], sum = 0;
    for (int i = 0; i < N; i++) {
        char one[700], seed[32];
        snprintf(one, sizeof one, "%s/seed%d", wdir, i);
        snprintf(seed, sizeof seed, "run.seed=%d", 10 + i);
        const char *s[] = {seed, NULL};
        run_none(one, s);
        e[i] = summary_epoch(one);
        sum += e[i];
    }
    char p[800];
    snprintf(p, sizeof p, "%s/replications.csv", out);
    char *text = slurp(p);
    char *line = strchr(text, '\n') + 1;
    for (int i = 0; i < N; i++) {
        char fa[8];
        int rep;
        long long seed;
        double ep;
        cr_assert_eq(sscanf(line, "%7[^,],%d,%lld,%lf", fa, &rep, &seed, &ep), 4, "%s", line);
        cr_expect_eq(seed, 10 + i);
        cr_expect(fabs(ep - e[i]) <= 1e-6 * e[i], "replication %d: %.9f vs single run %.9f", i, ep,
                  e[i]);
        line = strchr(line, '\n') + 1;
    }
    free(text);
    double mean = sum / N, ss = 0;
    for (int i = 0; i < N; i++)
        ss += (e[i] - mean) * (e[i] - mean);
    double half = gsl_cdf_tdist_Pinv(0.975, N - 1) * sqrt(ss / (N - 1)) / sqrt(N);
    snprintf(p, sizeof p, "%s/replications_summary.csv", out);
    text = slurp(p);
    double m, lo, hi;
    char *row = strstr(text, "none,epoch_time_s,6,");
    cr_assert_not_null(row, "%s", text);
    cr_assert_eq(sscanf(row, "none,epoch_time_s,6,%lf,%lf,%lf", &m, &lo, &hi), 3, "%s", row);
    cr_expect(fabs(m - mean) < 1e-6 && fabs(lo - (mean - half)) < 1e-6 &&
                  fabs(hi - (mean + half)) < 1e-6,
              "mean %.6f [%.6f, %.6f], expected %.6f +- %.6f", m, lo, hi, mean, half);
    cr_expect(hi > lo, "a lognormal what-if must vary between seeds");
    free(text);
}

Test(whatif, replications_of_a_measured_only_what_if_are_refused)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/traces/w2/trace.csv", STALL_SOURCE_DIR);
    const char *sets[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          set,
                          "loader.workers=4",
                          "run.replications=5",
                          NULL};
    for (const char *const *s = sets; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char out[700];
    snprintf(out, sizeof out, "%s/noreps", wdir);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), STALL_ECONFIG);
    cr_expect(strstr(err.msg, "--set run.replications: has no effect") != NULL, "%s", err.msg);
}

/* Field i (0-based) of the first data row of DIR/summary.csv. */
static double summary_field(const char *dir, int i)
{
    char sp[800];
    snprintf(sp, sizeof sp, "%s/summary.csv", dir);
    char *s = slurp(sp);
    char *fld = strchr(s, '\n') + 1;
    for (int k = 0; k < i; k++)
        fld = strchr(fld, ',') + 1;
    double v = strtod(fld, NULL);
    free(s);
    return v;
}

Test(whatif, strong_scaling_splits_the_traces_dataset_weak_keeps_the_batches_per_gpu)
{
    /* ddp2_w2: 2 ranks x 60 batches x 16 samples, 3 epochs: L = 1920
     * samples per epoch. Strong scaling (the default) over G ranks gives
     * each ceil(L / G) samples (DistributedSampler), in batches of 16:
     * G = 4: 480 -> 30 batches (twice the ranks, half the batches); G = 7:
     * 275 -> ceil 18, floor 17 with drop_last. Weak scaling keeps 60. */
    static const struct {
        const char *gpus, *scaling, *drop;
        int64_t n;
    } c[] = {{"cluster.gpus=4", NULL, NULL, 30},
             {"cluster.gpus=4", "cluster.scaling=weak", NULL, 60},
             {"cluster.gpus=7", "cluster.scaling=strong", NULL, 18},
             {"cluster.gpus=7", "cluster.scaling=strong", "loader.drop_last=true", 17},
             {"cluster.gpus=2", NULL, "loader.in_order=true", 60}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char out[700];
        snprintf(out, sizeof out, "%s/scaling%zu", wdir, i);
        /* resample only beyond the trace's 2 ranks (at 2 it has no effect) */
        bool own = strcmp(c[i].gpus, "cluster.gpus=2") == 0;
        const char *sets[] = {own ? "loader.in_order=true" : "fetch.resample=bootstrap", c[i].gpus,
                              c[i].scaling ? c[i].scaling : "cluster.gpus_per_node=0",
                              c[i].drop ? c[i].drop : "loader.in_order=true", NULL};
        char *t = run_model("traces/ddp2_w2/trace.csv", sets, out);
        double iters = summary_field(out, 6), epochs = summary_field(out, 5);
        cr_expect_eq((int64_t)iters, 3 * c[i].n,
                     "%s %s %s: %.0f iterations over %.0f epochs, expected 3 x %lld", c[i].gpus,
                     c[i].scaling ? c[i].scaling : "(default)", c[i].drop ? c[i].drop : "", iters,
                     epochs, (long long)c[i].n);
        if (strcmp(c[i].gpus, "cluster.gpus=2") != 0)
            cr_expect(strstr(t, c[i].scaling && strstr(c[i].scaling, "weak")
                                    ? "scaling: weak"
                                    : "scaling: strong") != NULL,
                      "the terminal says which scaling: %s", t);
        free(t);
    }
    /* Where every rank's share is whole batches (2 ranks: 960 samples, 60
     * batches; 4: 30; weak scaling) drop_last drops nothing: refused as
     * having no effect (a new user's finding: accepted, the same run). */
    static const char *const idle[][2] = {{"cluster.gpus=2", "cluster.gpus_per_node=0"},
                                          {"cluster.gpus=4", "cluster.gpus_per_node=0"},
                                          {"cluster.gpus=7", "cluster.scaling=weak"}};
    for (size_t i = 0; i < sizeof idle / sizeof idle[0]; i++) {
        stall_config cfg;
        stall_err err = {0};
        stall_config_defaults(&cfg);
        char out[700], set[800];
        snprintf(out, sizeof out, "%s/idle_drop%zu", wdir, i);
        snprintf(set, sizeof set, "trace.path=%s/traces/ddp2_w2/trace.csv", STALL_SOURCE_DIR);
        const char *sets[] = {"scenario.mode=model",
                              "trace.format=tidy",
                              set,
                              idle[i][0],
                              idle[i][1],
                              "loader.drop_last=true",
                              i ? "fetch.resample=bootstrap" : "loader.in_order=true",
                              NULL};
        for (const char *const *q = sets; *q; q++)
            cr_assert_eq(stall_config_set(&cfg, *q, &err), 0, "%s: %s", *q, err.msg);
        stall_run_opts o = {.outdir = out, .jobs = 1};
        cr_expect_eq(stall_scenario_run(&cfg, &o, &err), STALL_ECONFIG, "%s %s: ran", idle[i][0],
                     idle[i][1]);
        cr_expect(strstr(err.msg, "loader.drop_last: has no effect"), "%s", err.msg);
    }
}

/* Copies the tidy trace src to dst with one more column, `name`, of value v. */
static void add_column(const char *src, const char *dst, const char *name, const char *v)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    cr_assert(in && out);
    char line[1024];
    for (int i = 0; fgets(line, sizeof line, in); i++) {
        line[strcspn(line, "\n")] = '\0';
        fprintf(out, "%s,%s\n", line, i == 0 ? name : v);
    }
    fclose(in);
    fclose(out);
}

/* Max |error_pct| over the epochs of DIR/validate.csv, and epoch 0's. */
static double validate_worst(const char *dir, double *epoch0)
{
    char vpath[800];
    snprintf(vpath, sizeof vpath, "%s/validate.csv", dir);
    FILE *v = fopen(vpath, "r");
    cr_assert_not_null(v, "%s", vpath);
    char line[512];
    cr_assert(fgets(line, sizeof line, v));
    double worst = 0;
    for (int e = 0; fgets(line, sizeof line, v); e++) {
        int ep;
        double meas, sim, errpct;
        cr_assert_eq(sscanf(line, "%d,%lf,%lf,%lf", &ep, &meas, &sim, &errpct), 4);
        worst = fabs(errpct) > worst ? fabs(errpct) : worst;
        if (e == 0 && epoch0)
            *epoch0 = errpct;
    }
    fclose(v);
    return worst;
}

Test(whatif, persistent_workers_trace_pays_its_start_up_once_and_validates_exactly)
{
    /* persistent_workers=True: PyTorch creates the workers once; later
     * epochs only reset the iterator. A trace generated by the model's own
     * rules with start-up (80 ms, longer than a fetch) in epoch 0 only, 4
     * epochs: with [trace] persistent_workers the start-up is estimated from
     * epoch 0 and paid once, so every epoch validates with zero error (the
     * median over all epochs' first batches would be 0 and lose it). */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < 3; trial++) {
        gsl_rng_set(rng, 300 + trial);
        gen x = {.g = 1 + trial % 2, .ne = 4, .n = 30};
        gen_draw(&x, rng, 20000000, 40000000, 10000000, 20000000);
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = x.g;
        p.gpus_per_node = x.g;
        p.workers = 2 + trial;
        p.prefetch = 2;
        p.batches = x.n;
        p.epochs = x.ne;
        p.startup = 80000000;
        p.persistent_workers = true;
        char path[600];
        snprintf(path, sizeof path, "%s/p%d.csv", wdir, trial);
        gen_write(&p, &x, path, NULL);
        stall_err err = {0};
        stall_config cfg;
        stall_config_defaults(&cfg);
        cfg.format = STALL_FORMAT_TIDY;
        snprintf(cfg.path, sizeof cfg.path, "%s", path);
        cr_assert_eq(stall_config_set(&cfg, "trace.persistent_workers=true", &err), 0, "%s",
                     err.msg);
        char out[700];
        snprintf(out, sizeof out, "%s/pv%d", wdir, trial);
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
        cr_assert_eq(stall_validate(&cfg, &o, &err), 0, "trial %d: %s", trial, err.msg);
        char vpath[800];
        snprintf(vpath, sizeof vpath, "%s/validate.csv", out);
        FILE *v = fopen(vpath, "r");
        char line[512];
        cr_assert(fgets(line, sizeof line, v));
        for (int e = 0; e < x.ne; e++) {
            int ep;
            double meas, sim, errpct;
            cr_assert(fgets(line, sizeof line, v));
            cr_assert_eq(sscanf(line, "%d,%lf,%lf,%lf", &ep, &meas, &sim, &errpct), 4);
            cr_expect(fabs(errpct) < 0.001, "trial %d (W=%d G=%d) epoch %d: error %.3f%%", trial,
                      p.workers, x.g, e, errpct);
        }
        fclose(v);
        /* The capture's persistent column says so by itself: the same
         * validation without the key; an explicit key that contradicts the
         * column is refused; without either the start-up estimate is lost
         * (the median of all epochs' first fetches is 0) and epoch 0 is
         * short by it. */
        char pc[700];
        snprintf(pc, sizeof pc, "%s/pc%d.csv", wdir, trial);
        add_column(path, pc, "persistent", "1");
        stall_config c2;
        stall_config_defaults(&c2);
        c2.format = STALL_FORMAT_TIDY;
        snprintf(c2.path, sizeof c2.path, "%s", pc);
        snprintf(out, sizeof out, "%s/pcv%d", wdir, trial);
        o.outdir = out;
        cr_assert_eq(stall_validate(&c2, &o, &err), 0, "trial %d: %s", trial, err.msg);
        double worst = validate_worst(out, NULL);
        cr_expect(worst < 0.001, "trial %d: persistent column: worst error %.4f%%", trial, worst);
        cr_assert_eq(stall_config_set(&c2, "trace.persistent_workers=false", &err), 0, "%s",
                     err.msg);
        snprintf(out, sizeof out, "%s/pcx%d", wdir, trial);
        o.outdir = out;
        cr_expect_eq(stall_validate(&c2, &o, &err), STALL_ECONFIG);
        /* The message names where the key was given, as the prefetch and
         * workers ones do (it once began "stallsim: : " after --set). */
        cr_expect(strstr(err.msg, "--set trace.persistent_workers = false, but the trace "
                                  "records persistent = 1 (its 'persistent' column)") == err.msg,
                  "%s", err.msg);
        stall_config c3;
        stall_config_defaults(&c3);
        c3.format = STALL_FORMAT_TIDY;
        snprintf(c3.path, sizeof c3.path, "%s", path);
        snprintf(out, sizeof out, "%s/pn%d", wdir, trial);
        o.outdir = out;
        cr_assert_eq(stall_validate(&c3, &o, &err), 0, "trial %d: %s", trial, err.msg);
        double e0;
        validate_worst(out, &e0);
        cr_expect(e0 < -1.0, "trial %d: without the rule epoch 0 loses its start-up: %.2f%%", trial,
                  e0);
        gen_free(&x);
    }
    gsl_rng_free(rng);
}

Test(whatif, each_epoch_hands_over_at_its_own_measured_rate_and_validates_exactly)
{
    /* A cold epoch hands its batches over slower (docs/model.md 2.4). A
     * trace generated by the model's own rules with a different hand-over
     * in each epoch (1, 6 and 3 ms, a loop that the hand-over can hold up:
     * fetches of 4-12 ms over 2-3 workers) validates with zero error in
     * every epoch: each epoch takes its own measured hand-over. The same
     * trace simulated with the run's mean in every epoch misses. */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int trial = 0; trial < 3; trial++) {
        gsl_rng_set(rng, 500 + trial);
        gen x = {.g = 1 + trial % 2, .ne = 3, .n = 40};
        gen_draw(&x, rng, 4000000, 8000000, 2000000, 2000000);
        const stall_time hand[3] = {1000000, 6000000, 3000000};
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = x.g;
        p.gpus_per_node = x.g;
        p.workers = 2 + trial % 2;
        p.prefetch = 2;
        p.batches = x.n;
        p.epochs = x.ne;
        p.handover = 3333333;
        p.handover_epoch = hand;
        p.handover_epochs = 3;
        char path[600];
        snprintf(path, sizeof path, "%s/h%d.csv", wdir, trial);
        stall_model_stats own, mean;
        gen_write(&p, &x, path, &own);
        p.handover_epoch = NULL;
        snprintf(path, sizeof path, "%s/hm%d.csv", wdir, trial);
        gen_write(&p, &x, path, &mean);
        snprintf(path, sizeof path, "%s/h%d.csv", wdir, trial);
        stall_err err = {0};
        cr_assert_neq(own.end, mean.end, "trial %d: the hand-over per epoch changes nothing",
                      trial);
        stall_config cfg;
        stall_config_defaults(&cfg);
        cfg.format = STALL_FORMAT_TIDY;
        snprintf(cfg.path, sizeof cfg.path, "%s", path);
        char out[700];
        snprintf(out, sizeof out, "%s/hv%d", wdir, trial);
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
        cr_assert_eq(stall_validate(&cfg, &o, &err), 0, "trial %d: %s", trial, err.msg);
        double worst = validate_worst(out, NULL);
        cr_expect(worst < 0.001, "trial %d (W=%d G=%d): worst error %.4f%%", trial, p.workers, x.g,
                  worst);
        gen_free(&x);
    }
    gsl_rng_free(rng);
}

/* The start-up a what-if's model takes (stall_run_opts.on_params). */
static void su_seen(void *observer, const stall_model_params *p)
{
    *(stall_time *)observer = p->startup;
}

static stall_time startup_of(const char *trace, const char *const *sets)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[1200];
    snprintf(set, sizeof set, "trace.path=%s/%s", STALL_SOURCE_DIR, trace);
    const char *base[] = {"scenario.mode=model", "trace.format=tidy", "align.start=none", set,
                          NULL};
    for (int i = 0; base[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, base[i], &err), 0, "%s", err.msg);
    for (int i = 0; sets && sets[i]; i++)
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), 0, "%s: %s", sets[i], err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    stall_time su = -1;
    stall_run_opts o = {.jobs = 1, .no_files = 1, .on_params = su_seen, .observer = &su};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    return su;
}

Test(whatif, start_up_grows_with_the_worker_processes_a_node_starts)
{
    /* docs/model.md 2.4: the node's worker processes start one after
     * another, so the what-if's start-up is the trace's x its worker
     * processes per node over the trace's (ranks per node x workers); an
     * explicit [loader] startup_s wins. w2: 1 rank, 2 workers, 20.3 ms. */
    stall_time own = startup_of("traces/w2/trace.csv", NULL);
    cr_assert_gt(own, 0);
    const struct {
        const char *sets[5];
        double factor;
    } c[] = {
        {{"loader.workers=4", NULL}, 2.0},
        {{"loader.workers=1", NULL}, 0.5},
        {{"loader.workers=3", "cluster.gpus=8", "cluster.gpus_per_node=4",
          "fetch.resample=bootstrap", NULL},
         6.0},
        /* more nodes of the trace's size: each node starts what the trace's did */
        {{"cluster.gpus=8", "fetch.resample=bootstrap", NULL}, 1.0},
        {{"loader.workers=8", "loader.startup_s=0.5", NULL}, -1},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        stall_time su = startup_of("traces/w2/trace.csv", c[i].sets);
        stall_time want = c[i].factor > 0 ? llround((double)own * c[i].factor) : 500000000;
        cr_expect_eq(su, want, "case %zu (%s): start-up %lld ns, want %lld", i, c[i].sets[0],
                     (long long)su, (long long)want);
    }
    /* 2 ranks on one node of 2 workers each, to 8 ranks on it: x 4 */
    stall_time two = startup_of("traces/ddp2_w2/trace.csv", NULL);
    const char *eight[] = {"cluster.gpus=8", "cluster.gpus_per_node=8", "fetch.resample=bootstrap",
                           NULL};
    cr_expect_eq(startup_of("traces/ddp2_w2/trace.csv", eight), 4 * two);
}

Test(whatif, no_workers_fetch_pin_and_compute_inline_one_after_the_other)
{
    /* A trace taken with 1 worker (prefetch 2): fetch D = 40 ms, then the
     * worker's turnaround g = 5 ms (result queue, pickling) before its next
     * batch, hand-over h = 2 ms after it, compute C = 10 ms, no tail. The
     * decomposition finds the turnaround g and the hand-over h. With
     * workers = 0 (PyTorch's _SingleProcessDataLoaderIter._next_data:
     * fetch, collate and pin inline, no queue) and pin p = 3 ms, one rank's
     * epoch is exactly N x (D + p + C): neither g nor h. */
    const int n = 20;
    const stall_time D = 40000000, g = 5000000, h = 2000000, C = 10000000, P = 3000000;
    char path[600];
    snprintf(path, sizeof path, "%s/w1.csv", wdir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
          "epoch_start,workers,prefetch\n",
          f);
    stall_time q = 0, e_prev = 0;
    for (int k = 0; k < n; k++) {
        stall_time s = k == 0 ? 0 : e_prev + g, e = s + D;
        stall_time y = (q > e + g ? q : e + g) + h, ce = y + C;
        fprintf(f, "0,0,%d,0,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,0,1,2\n", k, s / 1e9, e / 1e9, q / 1e9,
                y / 1e9, ce / 1e9, ce / 1e9);
        e_prev = e;
        q = ce;
    }
    fclose(f);
    char a[700], b[700];
    snprintf(a, sizeof a, "%s/inline", wdir);
    snprintf(b, sizeof b, "%s/inline_h", wdir);
    char set[800];
    snprintf(set, sizeof set, "trace.path=%s", path);
    stall_config cfg;
    stall_err err = {0};
    const char *sets[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          set,
                          "loader.workers=0",
                          "loader.pin_memory_s=0.003",
                          NULL};
    stall_config_defaults(&cfg);
    for (const char *const *s = sets; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    stall_run_opts o = {.outdir = a, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    double want = n * (D + P + C) / 1e9, got = summary_epoch(a);
    cr_expect(fabs(got - want) < 1e-9, "workers = 0: epoch %.9f s, N x (D + p + C) = %.9f s", got,
              want);
    /* A hand-over given explicitly still applies: N x (D + p + h' + C). */
    cr_assert_eq(stall_config_set(&cfg, "loader.handover_s=0.001", &err), 0, "%s", err.msg);
    o.outdir = b;
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    want = n * (D + P + 1000000 + C) / 1e9;
    got = summary_epoch(b);
    cr_expect(fabs(got - want) < 1e-9, "workers = 0, handover_s 0.001: epoch %.9f s, want %.9f s",
              got, want);
}

static double summary_col(const char *dir, const char *name);

Test(whatif, strong_scaling_charges_the_last_partial_batch_by_its_samples)
{
    /* A 1-rank trace loading in the main process: 4 batches of 16 samples,
     * fetch D = 40 ms at the request, compute C = 8 ms, no tail: L = 64.
     * On 3 GPUs each rank gets ceil(64 / 3) = 22 samples: a full batch and
     * one of 6, charged 6/16 of a batch: (D + C) x (1 + 6/16) = 66 ms.
     * With drop_last the partial batch is dropped: D + C. */
    char path[600];
    snprintf(path, sizeof path, "%s/part.csv", wdir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
          "samples,workers,prefetch\n",
          f);
    for (int k = 0; k < 4; k++) {
        double q = 0.048 * k;
        fprintf(f, "0,0,%d,-1,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,16,0,2\n", k, q, q + 0.04, q, q + 0.04,
                q + 0.048, q + 0.048);
    }
    fclose(f);
    static const struct {
        const char *drop;
        double want;
    } c[] = {{"loader.drop_last=false", 0.066}, {"loader.drop_last=true", 0.048}};
    for (int i = 0; i < 2; i++) {
        char out[700], set[800];
        snprintf(out, sizeof out, "%s/part%d", wdir, i);
        snprintf(set, sizeof set, "trace.path=%s", path);
        stall_config cfg;
        stall_err err = {0};
        stall_config_defaults(&cfg);
        const char *sets[] = {
            "scenario.mode=model", "trace.format=tidy",        "align.start=none", set,
            "cluster.gpus=3",      "fetch.resample=bootstrap", c[i].drop,          NULL};
        for (const char *const *s = sets; *s; s++)
            cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
        stall_run_opts o = {.outdir = out, .jobs = 1};
        cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
        double got = summary_epoch(out);
        cr_expect(fabs(got - c[i].want) < 1e-9, "%s: epoch %.9f s, want %.3f s", c[i].drop, got,
                  c[i].want);
        /* 3 ranks x 22 samples in 66 ms, or x 16 in 48 ms: 1000 samples/s
         * either way (the partial batch counted as full gave 1454.5). */
        double thr = summary_col(out, "throughput_samples_s");
        cr_expect(fabs(thr - 1000.0) < 1e-6, "%s: %.9f samples/s, want 1000", c[i].drop, thr);
    }
}

/* Column `name` of the first data row of DIR/summary.csv. */
static double summary_col(const char *dir, const char *name)
{
    char sp[800];
    snprintf(sp, sizeof sp, "%s/summary.csv", dir);
    char *s = slurp(sp);
    char *row = strchr(s, '\n') + 1;
    row[-1] = '\0';
    int at = -1, i = 0;
    for (char *h = s, *c; h; h = c ? c + 1 : NULL, i++) {
        c = strchr(h, ',');
        size_t len = c ? (size_t)(c - h) : strlen(h);
        if (len == strlen(name) && strncmp(h, name, len) == 0)
            at = i;
    }
    cr_assert(at >= 0, "no column %s in %s", name, sp);
    char *fld = row;
    for (int k = 0; k < at; k++)
        fld = strchr(fld, ',') + 1;
    double v = strtod(fld, NULL);
    free(s);
    return v;
}

/* Runs `mode = model` on the tidy trace at path with the overrides. */
static void run_path(const char *path, const char *const *extra, const char *out)
{
    char set[800];
    snprintf(set, sizeof set, "trace.path=%s", path);
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    const char *base[] = {"scenario.mode=model", "trace.format=tidy", "align.start=none", set,
                          NULL};
    for (const char *const *s = base; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    for (const char *const *s = extra; s && *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
}

Test(whatif, throughput_counts_the_samples_of_a_partial_last_batch)
{
    /* 1 rank loading in the main process, 4 batches, the last partial:
     * 16, 16, 16, 6 samples (L = 54), fetch 40 ms per full batch (15 ms for
     * the 6), compute 8 ms (3 ms). As measured: 54 samples in 0.162 s. On
     * 2 GPUs each rank gets ceil(54 / 2) = 27: 16 + 11, the 11 charged
     * 11/16 of a full batch: 48 + 33 = 81 ms, 54 samples per epoch over the
     * two ranks. On 3: 18 = 16 + 2: 48 + 6 = 54 ms. Counting the partial
     * batch as full gave 64 / 0.162 s, and L = 4 x 16 = 64 gave 2 full
     * batches (96 ms) on 2 GPUs. */
    char path[600];
    snprintf(path, sizeof path, "%s/part54.csv", wdir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
          "samples,workers,prefetch\n",
          f);
    double q = 0;
    for (int k = 0; k < 4; k++) {
        double d = k < 3 ? 0.040 : 0.015, c = k < 3 ? 0.008 : 0.003;
        fprintf(f, "0,0,%d,-1,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d,0,2\n", k, q, q + d, q, q + d,
                q + d + c, q + d + c, k < 3 ? 16 : 6);
        q += d + c;
    }
    fclose(f);
    static const struct {
        const char *gpus;
        double epoch, samples_s;
    } c[] = {{"cluster.gpus=1", 0.162, 54 / 0.162},
             {"cluster.gpus=2", 0.081, 54 / 0.081},
             {"cluster.gpus=3", 0.054, 54 / 0.054}};
    for (int i = 0; i < 3; i++) {
        char out[700];
        snprintf(out, sizeof out, "%s/part54_%d", wdir, i);
        /* resample beyond the trace's one rank (at 1 it has no effect) */
        const char *sets[] = {c[i].gpus, i > 0 ? "fetch.resample=bootstrap" : NULL, NULL};
        run_path(path, sets, out);
        double ep = summary_epoch(out), thr = summary_col(out, "throughput_samples_s");
        cr_expect(fabs(ep - c[i].epoch) < 1e-9, "%s: epoch %.9f s, want %.3f s", c[i].gpus, ep,
                  c[i].epoch);
        cr_expect(fabs(thr - c[i].samples_s) < 1e-6 * c[i].samples_s,
                  "%s: %.6f samples/s, want %.6f (54 samples per epoch)", c[i].gpus, thr,
                  c[i].samples_s);
    }
}

/* iteration_s of (epoch 0, batch k) in DIR's iterations.csv. */
static double iteration_of(const char *dir, int64_t k)
{
    char p[800];
    snprintf(p, sizeof p, "%s/fetch-none_start-none/iterations.csv", dir);
    char *s = slurp(p), *line = strchr(s, '\n');
    double v = -1;
    for (; line && line[1]; line = strchr(line + 1, '\n')) {
        long e;
        long long b;
        double end, it;
        if (sscanf(line + 1, "%ld,%lld,%lf,%lf", &e, &b, &end, &it) == 4 && e == 0 && b == k)
            v = it;
    }
    free(s);
    return v;
}

Test(whatif, the_traces_partial_last_batch_taken_for_a_full_one_is_charged_as_full)
{
    /* The trace of part54 above (16, 16, 16, 6 samples; 40 + 8 ms per full
     * batch, 15 + 3 ms for the 6), on 1 and on 2 ranks. Loading in the main
     * process, one rank: iteration k is its fetch + compute. Where the
     * what-if has more batches per rank than the trace, batch 3 holds 16
     * samples and its duration, taken from the trace's batch of 6, is
     * charged 16/6 of it: 48 ms, whatever the later (drawn) batches are.
     * Explicit [run] batches 5..8 on the 1-rank trace, and the 2-rank trace
     * on 1 GPU (strong: 108 samples, 7 batches, the last of 12). Until this
     * was fixed batch 3 kept the 6 samples' 18 ms while counted as 16. */
    for (int ranks = 1; ranks <= 2; ranks++) {
        char path[600];
        snprintf(path, sizeof path, "%s/partfull%d.csv", wdir, ranks);
        FILE *f = fopen(path, "w");
        fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
              "samples,workers,prefetch\n",
              f);
        double q = 0;
        for (int k = 0; k < 4; k++) {
            double d = k < 3 ? 0.040 : 0.015, c = k < 3 ? 0.008 : 0.003;
            for (int r = 0; r < ranks; r++)
                fprintf(f, "%d,0,%d,-1,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d,0,2\n", r, k, q, q + d, q,
                        q + d, q + d + c, q + d + c, k < 3 ? 16 : 6);
            q += d + c;
        }
        fclose(f);
        for (int n = 5; n <= (ranks == 1 ? 8 : 5); n++) {
            char out[700], nb[64];
            snprintf(out, sizeof out, "%s/partfull%d_%d", wdir, ranks, n);
            snprintf(nb, sizeof nb, "run.batches=%d", n);
            const char *sets[] = {"fetch.resample=bootstrap", ranks == 1 ? nb : "cluster.gpus=1",
                                  NULL};
            run_path(path, sets, out);
            for (int64_t k = 0; k < 4; k++) {
                double it = iteration_of(out, k);
                cr_expect(fabs(it - 0.048) < 1e-9,
                          "%d-rank trace, %s: batch %lld took %.9f s, want 0.048 (a full batch)",
                          ranks, sets[1], (long long)k, it);
            }
        }
    }
}

Test(whatif, accumulation_stall_share_is_the_most_one_rank_waited_per_window)
{
    /* 2 ranks loading in the main process; in iteration k rank k mod 2
     * waits a = 30 ms for its data, the other none; compute C = 20 ms,
     * tail A = 5 ms. Measured (every iteration synchronised): a + C + A per
     * iteration, stall share a / (a + C + A). With [ddp] accumulation = 2
     * the ranks meet every second iteration: a + 2C + A per window, in
     * which one rank waited a: stall share a / (a + 2C + A) = 0.4 (before:
     * both iterations' a counted, 2a / (a + 2C + A) = 0.8). */
    const double a = 0.030, C = 0.020, A = 0.005;
    const int n = 10;
    char path[600];
    snprintf(path, sizeof path, "%s/alt.csv", wdir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,compute_end,"
          "workers,prefetch\n",
          f);
    double q = 0;
    for (int k = 0; k < n; k++) {
        double t = q + a + C + A;
        for (int r = 0; r < 2; r++) {
            double d = r == k % 2 ? a : 0;
            fprintf(f, "%d,0,%d,-1,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,0,2\n", r, k, q, q + d, q, q + d,
                    t, q + d + C);
        }
        q = t;
    }
    fclose(f);
    char k1[700], k2[700];
    snprintf(k1, sizeof k1, "%s/alt_k1", wdir);
    snprintf(k2, sizeof k2, "%s/alt_k2", wdir);
    run_path(path, NULL, k1);
    const char *acc[] = {"ddp.accumulation=2", NULL};
    run_path(path, acc, k2);
    double s1 = summary_col(k1, "stall_share"), s2 = summary_col(k2, "stall_share");
    double e2 = summary_epoch(k2);
    cr_expect(fabs(s1 - a / (a + C + A)) < 1e-9, "K = 1: stall share %.9f, want %.9f", s1,
              a / (a + C + A));
    cr_expect(fabs(e2 - n / 2 * (a + 2 * C + A)) < 1e-9, "K = 2: epoch %.9f s", e2);
    cr_expect(fabs(s2 - a / (a + 2 * C + A)) < 1e-9, "K = 2: stall share %.9f, want %.9f", s2,
              a / (a + 2 * C + A));
}

/* A capture's meta.json that is there but damaged (not JSON, or cpu_cores
 * not a core count) is refused, naming it, where its cores are read (the
 * contention of a trace without CPU columns, calibrate): it once fell back
 * to the run's own cores without a word. [trace] cores still runs. */
Test(whatif, a_damaged_meta_json_is_refused_where_its_cores_are_read)
{
    char dir[300], cmd[4000];
    snprintf(dir, sizeof dir, "%s/dm", wdir);
    static const char *const bad[] = {"{\"cpu_cores\": 2,", "{\"cpu_cores\": \"two\"}",
                                      "{\"cpu_cores\": 0}", "[2]"};
    static const char *const want[] = {"parse error", "cpu_cores: not a whole number of cores",
                                       "cpu_cores: not a whole number of cores",
                                       "not a JSON object"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd,
                 "rm -rf %s && mkdir %s && cp %s/traces/w2/trace.csv %s/ && printf '%%s\\n' '%s' "
                 "> %s/meta.json",
                 dir, dir, STALL_SOURCE_DIR, dir, bad[i], dir);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        stall_config *cfg = malloc(sizeof *cfg);
        stall_config_defaults(cfg);
        stall_err err = {0};
        cr_assert_eq(stall_config_load(cfg, STALL_SOURCE_DIR "/configs/w2.ini", &err), 0, "%s",
                     err.msg);
        snprintf(cfg->path, sizeof cfg->path, "%s/trace.csv", dir);
        char out[800];
        snprintf(out, sizeof out, "%s/dm_out%d", wdir, i);
        stall_run_opts o = {.outdir = out, .jobs = 1};
        cr_expect_eq(stall_scenario_run(cfg, &o, &err), STALL_EPARSE, "%s", bad[i]);
        cr_expect(strstr(err.msg, "/dm/meta.json: ") && strstr(err.msg, want[i]) &&
                      strstr(err.msg, "mend it, or set [trace] cores"),
                  "%s: %s", bad[i], err.msg);
        char other[700];
        snprintf(other, sizeof other, "%s/traces/w4/trace.csv", STALL_SOURCE_DIR);
        const char *paths[] = {cfg->path, other};
        stall_calibration c;
        cr_expect_neq(stall_calibrate_fit(paths, 2, 0, 0, &c, &err), 0);
        cr_expect(strstr(err.msg, want[i]), "calibrate: %s", err.msg);
        cfg->trace_cores = 2;
        cr_expect_eq(stall_scenario_run(cfg, &o, &err), 0, "%s", err.msg);
        free(cfg);
    }
}
