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
        stall_durations d = {g_fetch, g_compute, g_tail, g_gap, &x};
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
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
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
    cr_assert_neq(stall_calibrate_fit(paths, 2, 0, 0, &c, &err), 0,
                  "two worker counts and no --cores must be refused");
}
