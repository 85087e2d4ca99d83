/*
 * The node's cores shared by every activity whose CPU time a trace measured
 * (models/cpushare.c, jobs/cpudemand.c; docs/model.md 2.3, "CPU time from the
 * trace"): closed forms of the rule, the identity with the model without
 * sharing when nothing contends, the tidy reader's CPU columns, and the rule
 * held against real captures of 1 to 8 DDP ranks on this machine's cores
 * (traces/cpushare/).
 */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/config.h"
#include "stall/measured.h"
#include "stall/model.h"
#include "stall/scenario.h"
#include "stall/tidy.h"

#include "tmpdir.h"

#define MS INT64_C(1000000)

static char cdir[] = "/tmp/stall_cpushare_XXXXXX";
static void cs_setup(void)
{
    tmpdir_make(cdir);
}
static void cs_teardown(void)
{
    tmpdir_remove(cdir);
}
TestSuite(cpushare, .init = cs_setup, .fini = cs_teardown, .timeout = 300);

/* ---- the model on constant or random durations ---- */

typedef struct cs_tab {
    int g;
    int64_t n;
    stall_time *f, *c, *a; /* [r * n + k], [r * n + k], [k] (one epoch) */
} cs_tab;

static stall_time cs_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)e;
    const cs_tab *t = ctx;
    return t->f[(size_t)r * (size_t)t->n + (size_t)k];
}
static stall_time cs_compute(void *ctx, int e, int r, int64_t k)
{
    (void)e;
    const cs_tab *t = ctx;
    return t->c[(size_t)r * (size_t)t->n + (size_t)k];
}
static stall_time cs_tail(void *ctx, int e, int64_t k)
{
    (void)e;
    const cs_tab *t = ctx;
    return t->a[k];
}

typedef struct cs_got {
    int64_t n, cap;
    stall_time *t; /* T(k) */
} cs_got;

static void cs_iter(void *ctx, const stall_iter_record *rec)
{
    cs_got *o = ctx;
    if (o->n < o->cap)
        o->t[o->n] = rec->iter_end;
    o->n++;
}

static void cs_run(const stall_model_params *p, cs_tab *t, cs_got *o)
{
    stall_durations d = {.fetch = cs_fetch, .compute = cs_compute, .tail = cs_tail, .ctx = t};
    stall_err err = {0};
    o->n = 0;
    cr_assert_eq(stall_model_run(p, &d, cs_iter, o, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(o->n, p->batches * p->epochs);
}

static void cs_const(cs_tab *t, int g, int64_t n, stall_time f, stall_time c, stall_time a)
{
    t->g = g;
    t->n = n;
    t->f = malloc((size_t)g * (size_t)n * sizeof *t->f);
    t->c = malloc((size_t)g * (size_t)n * sizeof *t->c);
    t->a = malloc((size_t)n * sizeof *t->a);
    for (size_t i = 0; i < (size_t)g * (size_t)n; i++) {
        t->f[i] = f;
        t->c[i] = c;
    }
    for (int64_t k = 0; k < n; k++)
        t->a[k] = a;
}

static void cs_free(cs_tab *t)
{
    free(t->f);
    free(t->c);
    free(t->a);
}

Test(cpushare, the_tail_of_g_ranks_on_few_cores_takes_g_over_cores_times_as_long)
{
    /* Loading in the loop (W = 0), D = 10 ms, C = 5 ms, no CPU in either;
     * the tail A = 4 ms is all CPU work. At the barrier the G ranks' tails
     * share the node's cores: each runs at min(1, cores / G), so
     * T(k) - T(k-1) = D + C + max(1, G / cores) A exactly. */
    for (int g = 1; g <= 8; g++)
        for (int cores = 1; cores <= 4; cores++) {
            cs_tab t;
            cs_const(&t, g, 20, 10 * MS, 5 * MS, 4 * MS);
            stall_model_params p;
            stall_model_defaults(&p);
            p.ranks = p.gpus_per_node = g;
            p.workers = 0;
            p.batches = 20;
            p.cores = cores;
            p.cpu_share = 0.0;
            p.cpu.tail_cpu = 4 * MS;
            stall_time tm[20];
            cs_got o = {.cap = 20, .t = tm};
            cs_run(&p, &t, &o);
            double stretch = g > cores ? (double)g / cores : 1.0;
            for (int k = 1; k < 20; k++)
                cr_assert_float_eq((double)(tm[k] - tm[k - 1]), (15 + 4 * stretch) * 1e6, 2.0,
                                   "G=%d cores=%d k=%d: %lld", g, cores, k,
                                   (long long)(tm[k] - tm[k - 1]));
            cs_free(&t);
        }
}

Test(cpushare, the_hand_over_is_shared_and_its_measured_wait_taken_out)
{
    /* The same with the hand-over h = 3 ms of which 2 ms CPU and 1 ms a
     * measured run-queue wait (taken out: the sharing adds its own): G
     * ranks take their batches at once, so each Y comes
     * max(1, G / cores) x 2 ms after the fetch end. */
    for (int g = 1; g <= 6; g++)
        for (int cores = 1; cores <= 3; cores++) {
            cs_tab t;
            cs_const(&t, g, 10, 10 * MS, 5 * MS, 0);
            stall_model_params p;
            stall_model_defaults(&p);
            p.ranks = p.gpus_per_node = g;
            p.workers = 0;
            p.batches = 10;
            p.cores = cores;
            p.cpu_share = 0.0;
            p.handover = 3 * MS;
            p.cpu.handover_cpu = 2 * MS;
            p.cpu.handover_wait = 1 * MS;
            stall_time tm[10];
            cs_got o = {.cap = 10, .t = tm};
            cs_run(&p, &t, &o);
            double stretch = g > cores ? (double)g / cores : 1.0;
            for (int k = 1; k < 10; k++)
                cr_assert_float_eq((double)(tm[k] - tm[k - 1]), (15 + 2 * stretch) * 1e6, 2.0,
                                   "G=%d cores=%d", g, cores);
            cs_free(&t);
        }
}

Test(cpushare, without_contention_the_run_is_the_run_without_sharing)
{
    /* Enough cores for every job at once and no measured waits: every CPU
     * job runs at full speed, so the CPU parts plus the rest add up to the
     * measured durations and T(k) equals the model without sharing to the
     * ns, over random configurations (workers, prefetch, ranks, shares). */
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 20);
    for (int trial = 0; trial < 60; trial++) {
        int g = 1 + (int)gsl_rng_uniform_int(rng, 6);
        int64_t n = 5 + (int64_t)gsl_rng_uniform_int(rng, 30);
        cs_tab t = {.g = g, .n = n};
        t.f = malloc((size_t)g * (size_t)n * sizeof *t.f);
        t.c = malloc((size_t)g * (size_t)n * sizeof *t.c);
        t.a = malloc((size_t)n * sizeof *t.a);
        for (size_t i = 0; i < (size_t)g * (size_t)n; i++) {
            t.f[i] = (stall_time)(gsl_rng_uniform(rng) * 80 * MS);
            t.c[i] = (stall_time)(gsl_rng_uniform(rng) * 30 * MS);
        }
        for (int64_t k = 0; k < n; k++)
            t.a[k] = (stall_time)(2 * MS + gsl_rng_uniform(rng) * 5 * MS);
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = p.gpus_per_node = g;
        p.workers = (int)gsl_rng_uniform_int(rng, 4);
        p.prefetch = 1 + (int)gsl_rng_uniform_int(rng, 3);
        p.batches = n;
        p.handover = (stall_time)(gsl_rng_uniform(rng) * 2 * MS);
        stall_time *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
        cs_got oa = {.cap = n, .t = a}, ob = {.cap = n, .t = b};
        cs_run(&p, &t, &oa);
        p.cores = 4096;
        p.cpu_share = gsl_rng_uniform(rng);
        p.compute_cpu_share = gsl_rng_uniform(rng);
        p.cpu.handover_cpu = p.handover / 2;
        p.cpu.tail_cpu = 2 * MS;
        cs_run(&p, &t, &ob);
        for (int64_t k = 0; k < n; k++)
            cr_assert_eq(a[k], b[k], "trial %d k %lld: %lld vs %lld", trial, (long long)k,
                         (long long)a[k], (long long)b[k]);
        free(a);
        free(b);
        cs_free(&t);
    }
    gsl_rng_free(rng);
}

/* ---- real captures (traces/cpushare/, sh traces/cpushare/capture.sh) ---- */

Test(cpushare, the_tidy_reader_reads_the_cpu_columns)
{
    /* 2 ranks x 2 epochs x 80 batches: the means leave batch 0 out; a
     * worker's first batch of an epoch has no turn_cpu (2 workers). */
    char path[600];
    snprintf(path, sizeof path, "%s/traces/cpushare/sleep_ddp2_r1/trace.csv", STALL_SOURCE_DIR);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(path, &t, &err), 0, "%s", err.msg);
    cr_assert(t->cpu.has);
    cr_assert_eq(t->cpu.cores, 2);
    cr_assert_eq(t->cpu.ranks_per_node, 2);
    cr_assert_eq(t->cpu.n[STALL_TIDY_CPU_FETCH], 2 * 2 * 79);
    cr_assert_eq(t->cpu.n[STALL_TIDY_CPU_TURN], 2 * 2 * 78);
    cr_assert_eq(t->cpu.n[STALL_TIDY_CPU_SYNC], 2 * 2 * 79);
    for (int j = 0; j < STALL_TIDY_CPU_N; j++)
        cr_assert_gt(t->cpu.sum[j], 0.0, "column %d", j);
    stall_measured m;
    cr_assert_eq(stall_measured_from_tidy(t, &m, &err), 0, "%s", err.msg);
    cr_assert(m.cpu.has);
    cr_assert(m.cpu.fetch_share > 0.0 && m.cpu.fetch_share < 0.5);
    cr_assert(m.cpu.demand.tail_cpu > 0 && m.cpu.sync_cpu <= m.cpu.demand.tail_cpu);
    stall_measured_free(&m);
    stall_tidy_free(t);
    /* Without the columns (an older trace): nothing. */
    snprintf(path, sizeof path, "%s/traces/ddp2_w2/trace.csv", STALL_SOURCE_DIR);
    cr_assert_eq(stall_tidy_load(path, &t, &err), 0, "%s", err.msg);
    cr_assert(!t->cpu.has);
    stall_tidy_free(t);
}

Test(cpushare, a_bad_cpu_value_is_refused_at_its_line_and_column)
{
    char in[600], out[600];
    snprintf(in, sizeof in, "%s/traces/cpushare/sleep_ddp1_r1/trace.csv", STALL_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/bad.csv", cdir);
    FILE *f = fopen(in, "r"), *g = fopen(out, "w");
    cr_assert(f && g);
    char line[4096];
    for (int i = 1; fgets(line, sizeof line, f); i++) {
        if (i == 3) { /* compute_cpu (column 23) of line 3 */
            char *p = line;
            for (int c = 1; c < 23; c++)
                p = strchr(p, ',') + 1;
            char *end = strchr(p, ',');
            fprintf(g, "%.*sx%s", (int)(p - line), line, end);
        } else
            fputs(line, g);
    }
    fclose(f);
    fclose(g);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(out, &t, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, "bad.csv:3:23: 'compute_cpu': not a CPU time"), "%s", err.msg);
}

/* [cluster] cpu_waits_out where it changes nothing (no CPU columns, or no
 * cores to share) is refused naming it, as is a value outside [0, 1] but
 * its -1 (fitted). */
Test(cpushare, cpu_waits_out_without_effect_or_out_of_range_is_refused)
{
    const struct {
        const char *trace, *set, *want;
    } cases[] = {
        {"traces/w2/trace.csv", "cluster.cpu_waits_out=0.5",
         "--set cluster.cpu_waits_out: has no effect: the trace has no CPU columns"},
        {"traces/cpushare/sleep_ddp2_r1/trace.csv", "cluster.cores=0",
         "--set cluster.cpu_waits_out: has no effect: [cluster] cores = 0"},
        {"traces/cpushare/sleep_ddp2_r1/trace.csv", "cluster.cpu_waits_out=-0.5",
         "--set cluster.cpu_waits_out: must be -1 (fitted) or in [0, 1]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stall_config cfg;
        stall_err err = {0};
        stall_config_defaults(&cfg);
        char set[700];
        snprintf(set, sizeof set, "trace.path=%s/%s", STALL_SOURCE_DIR, cases[i].trace);
        const char *sets[] = {"scenario.mode=model",       "trace.format=tidy",
                              "align.start=none",          set,
                              "cluster.cpu_waits_out=0.5", cases[i].set};
        int rc = 0;
        for (size_t k = 0; k < 6 && rc == 0; k++)
            rc = stall_config_set(&cfg, sets[k], &err);
        cr_assert_eq(rc, 0, "%s", err.msg);
        rc = stall_config_check(&cfg, &err);
        if (rc == 0) {
            stall_run_opts o = {.jobs = 1, .no_files = 1};
            rc = stall_scenario_run(&cfg, &o, &err);
        }
        cr_assert_eq(rc, STALL_ECONFIG, "%s: rc %d", cases[i].set, rc);
        cr_assert(strstr(err.msg, cases[i].want), "%s", err.msg);
    }
}

/* The mean epoch of `trace` (relative to traces/cpushare/) run as a what-if
 * of g ranks on one node, weak scaling (each rank its 80 batches, as
 * captured); *measured: the trace's own mean epoch. cores0: no CPU sharing;
 * extra: one more --set (NULL: none). */
static double cs_predict_x(const char *trace, int g, bool cores0, const char *extra,
                           double *measured)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[5][700];
    snprintf(set[0], sizeof set[0], "trace.path=%s/traces/cpushare/%s/trace.csv", STALL_SOURCE_DIR,
             trace);
    snprintf(set[1], sizeof set[1], "cluster.gpus=%d", g);
    snprintf(set[2], sizeof set[2], "cluster.gpus_per_node=%d", g);
    snprintf(set[3], sizeof set[3], "cluster.scaling=weak");
    snprintf(set[4], sizeof set[4], "cluster.cores=%d", cores0 ? 0 : 2);
    const char *fixed[] = {"scenario.mode=model", "trace.format=tidy", "align.start=none",
                           "fetch.resample=bootstrap"};
    /* Within the trace's rank count (sleep_ddpN_...) resample has no
     * effect, at it the scaling has none: both are refused there. */
    const char *ddp = strstr(trace, "ddp");
    int n = ddp ? atoi(ddp + 3) : 0;
    for (int i = 0; i < (g <= n ? 3 : 4); i++)
        cr_assert_eq(stall_config_set(&cfg, fixed[i], &err), 0, "%s", err.msg);
    for (int i = 0; i < (cores0 ? 5 : 4); i++)
        if (!(g == n && i == 3))
            cr_assert_eq(stall_config_set(&cfg, set[i], &err), 0, "%s", err.msg);
    if (extra)
        cr_assert_eq(stall_config_set(&cfg, extra, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char out[700];
    snprintf(out, sizeof out, "%s/%s-%d-%d%s", cdir, trace, g, cores0, extra ? "-x" : "");
    FILE *term = fopen("/dev/null", "w");
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = term};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    fclose(term);
    /* summary.csv's epoch_time_s and measured_epoch_time_s, by name */
    char sp[800], head[8192], row[8192];
    snprintf(sp, sizeof sp, "%s/summary.csv", out);
    FILE *f = fopen(sp, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(head, sizeof head, f));
    cr_assert_not_null(fgets(row, sizeof row, f));
    fclose(f);
    double epoch = NAN;
    *measured = NAN;
    char *h = head, *p = row;
    while (h && p) {
        size_t len = strcspn(h, ",\n");
        if (len == strlen("epoch_time_s") && strncmp(h, "epoch_time_s", len) == 0)
            epoch = strtod(p, NULL);
        if (len == strlen("measured_epoch_time_s") && strncmp(h, "measured_epoch_time_s", len) == 0)
            *measured = strtod(p, NULL);
        h = strchr(h, ',');
        h = h ? h + 1 : NULL;
        p = strchr(p, ',');
        p = p ? p + 1 : NULL;
    }
    cr_assert(!isnan(epoch) && !isnan(*measured), "%s: no epoch_time_s or measured_epoch_time_s",
              sp);
    return epoch;
}

/* The margin a what-if to more ranks per node states (jobs/model_term.c,
 * "CPU limit"): from 2-rank captures to 4 and 8 ranks the epoch came out
 * -26% to +40%. Every prediction below must lie within it. */
#define CS_STATED_LO (-0.26)
#define CS_STATED_HI 0.405

static double cs_predict(const char *trace, int g, bool cores0, double *measured)
{
    return cs_predict_x(trace, g, cores0, NULL, measured);
}

/* The repeats of a configuration (every capture _r1, _r2, ... there is):
 * mean of their mean epochs, and their spread (max - min) as a fraction of
 * that mean. sfx: "" or "_1core". */
static double cs_repeats_of(const char *kind, int g, const char *sfx, double *spread)
{
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    int n = 0;
    for (int r = 1; r <= 9; r++) {
        char t[64], path[700];
        snprintf(t, sizeof t, "%s_ddp%d%s_r%d", kind, g, sfx, r);
        snprintf(path, sizeof path, "%s/traces/cpushare/%s/trace.csv", STALL_SOURCE_DIR, t);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        fclose(f);
        double m;
        cs_predict(t, 1, true, &m);
        sum += m;
        lo = fmin(lo, m);
        hi = fmax(hi, m);
        n++;
    }
    cr_assert_geq(n, 2, "%s_ddp%d%s: fewer than 2 repeats", kind, g, sfx);
    double mean = sum / n;
    *spread = (hi - lo) / mean;
    return mean;
}

static double cs_repeats(const char *kind, int g, double *spread)
{
    return cs_repeats_of(kind, g, "", spread);
}

Test(cpushare, a_contended_run_is_reproduced_from_its_own_cpu_time)
{
    /* The rule itself: with the CPU work each trace measured, the run of 4
     * and 8 ranks on the 2 cores (stretched 1.5x to 5x by sharing) comes
     * back within the repeats' spread + 5%. Without CPU sharing the same
     * trace can only replay its stretched durations (kept as a check that
     * the numbers are the contended run's). */
    const char *kinds[] = {"sleep", "cpu"};
    for (int ki = 0; ki < 2; ki++)
        for (int g = 4; g <= 8; g += 4) {
            double spread, mean = cs_repeats(kinds[ki], g, &spread);
            for (int r = 1; r <= 2; r++) {
                char t[64];
                double meas;
                snprintf(t, sizeof t, "%s_ddp%d_r%d", kinds[ki], g, r);
                double pred = cs_predict(t, g, false, &meas);
                double err = (pred - mean) / mean;
                cr_log_info("%s at %d ranks: %.3f s, repeats %.3f s (spread %.1f%%): %+.1f%%", t, g,
                            pred, mean, 100 * spread, 100 * err);
                cr_assert_leq(fabs(err), spread + 0.05, "%s: %+.1f%%, bound %.1f%%", t, 100 * err,
                              100 * (spread + 0.05));
            }
        }
}

Test(cpushare, two_ranks_predict_four_and_eight)
{
    /* From each trace of 2 ranks, the what-if of 4 and 8 ranks on the same
     * node, against the mean of every capture of that count (the issue's
     * bound: their spread + 5%). The captures of session 10 (sleep r4-r6,
     * cpu r3-r4) were made in rounds, the 2-rank run first and its
     * predictions committed before the 4 and 8 ranks were captured
     * (traces/s10_predictions.md; `pred` below is what was committed).
     * Without the CPU model the epochs barely grow: -20% to -75%. With it
     * (docs/model.md 2.3): 12 of 18 within the bound, 6 of the 10 made
     * before capture; every 2-rank trace within [-30%, +15%] and closer than
     * without; the misses are the sleep-like 8 ranks from 3 of 5 traces and
     * the 2-rank runs that ran fast (sleep r4, r6 at 4.30, 4.23 s against
     * 4.51-4.75 s; cpu r2 at 5.99 s against 6.35-8.03 s): the CPU time that
     * grows with the load is not modelled. */
    const struct {
        const char *kind;
        int r;
        double pred4, pred8; /* committed before the capture, or 0 */
    } src[] = {{"sleep", 1, 0, 0},
               {"sleep", 2, 0, 0},
               {"sleep", 4, 6.007, 11.514},
               {"sleep", 5, 7.593, 12.615},
               {"sleep", 6, 6.086, 10.970},
               {"cpu", 1, 0, 0},
               {"cpu", 2, 0, 0},
               {"cpu", 3, 14.881, 30.230},
               {"cpu", 4, 12.497, 24.869}};
    int within = 0, within_before = 0, n = 0;
    double sum = 0, sum1 = 0;
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        for (int g = 4; g <= 8; g += 4) {
            char t[64];
            double spread, meas, mean = cs_repeats(src[i].kind, g, &spread);
            snprintf(t, sizeof t, "%s_ddp2_r%d", src[i].kind, src[i].r);
            double pred = cs_predict(t, g, false, &meas);
            double flat = cs_predict(t, g, true, &meas);
            double all = cs_predict_x(t, g, false, "cluster.cpu_waits_out=1", &meas);
            double before = g == 4 ? src[i].pred4 : src[i].pred8;
            /* Within 0.5%: they were made with the start-up measured from
             * the earliest rank's start; since session 16 it is measured
             * from each rank's own (docs/model.md 2.4), which moved sleep
             * r5's by -0.2% and -0.4% (7.578 and 12.567 s). */
            if (before > 0)
                cr_assert_lt(fabs(pred - before), 0.005 * before, "%s to %d: %.4f, committed %.3f",
                             t, g, pred, before);
            double err = (pred - mean) / mean, err0 = (flat - mean) / mean,
                   err1 = (all - mean) / mean;
            bool ok = fabs(err) <= spread + 0.05;
            cr_log_info("%s to %d ranks%s: %.3f s (all waits out %.3f s, without CPU sharing "
                        "%.3f s), repeats %.3f s (spread %.1f%%): %+.1f%% (%+.1f%%, %+.1f%%)%s",
                        t, g, before > 0 ? " (before capture)" : "", pred, all, flat, mean,
                        100 * spread, 100 * err, 100 * err1, 100 * err0, ok ? "" : ", outside");
            cr_assert(err >= -0.30 && err <= 0.15, "%s to %d: %+.1f%%", t, g, 100 * err);
            cr_assert(err >= CS_STATED_LO && err <= CS_STATED_HI,
                      "%s to %d: %+.1f%% outside the "
                      "stated margin",
                      t, g, 100 * err);
            cr_assert_lt(fabs(err), fabs(err0), "%s to %d", t, g);
            sum += fabs(err);
            sum1 += fabs(err1);
            within += ok;
            within_before += ok && before > 0;
            n++;
        }
    cr_log_info("%d of %d predictions within the repeats' spread + 5%% (%d of 10 made before "
                "capture); mean |error| %.1f%% (all waits out: %.1f%%)",
                within, n, within_before, 100 * sum / n, 100 * sum1 / n);
    cr_assert_geq(within, 12);
    cr_assert_geq(within_before, 6);
    cr_assert_lt(sum / n, 0.13, "mean |error| %.1f%%", 100 * sum / n);
    cr_assert_lt(sum, sum1);
}

Test(cpushare, the_trace_own_run_gives_its_epoch_back)
{
    /* cpu_waits_out fitted (the default): the what-if that changes nothing
     * gives the measured mean epoch back wherever the fitted share lies
     * inside (0, 1) (docs/model.md 2.3, "The waits taken out"); all waits
     * taken out, the 2-rank runs come out 6-14% short. */
    const char *ts[] = {"sleep_ddp2_r1", "sleep_ddp2_r2", "cpu_ddp2_r1", "cpu_ddp2_r2",
                        "cpu_ddp8_r1"};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) {
        double meas, meas1;
        double sim = cs_predict(ts[i], i == 4 ? 8 : 2, false, &meas);
        double all = cs_predict_x(ts[i], i == 4 ? 8 : 2, false, "cluster.cpu_waits_out=1", &meas1);
        cr_assert_lt(fabs(sim - meas) / meas, 0.001, "%s: %.4f for %.4f", ts[i], sim, meas);
        cr_assert_lt(all, 0.95 * meas, "%s, all out: %.4f for %.4f", ts[i], all, meas);
    }
}

Test(cpushare, on_one_core_two_ranks_predict_four_and_eight)
{
    /* Pinned to one core (PIN=1 traces/cpushare/capture.sh; the traces'
     * cores column is 1), a trace of 2 ranks predicts 4 and 8 ranks within
     * the repeats' spread + 5% (docs/model.md 2.3): 4 ranks -1.5%, -5.7%
     * (spread 17%), 8 ranks -16%, -20% (spread 25%: the third capture, taken
     * later, ran 20% slower, its CPU time per rank-iteration 26 ms against
     * 21-22). Run with 2 cores the same predictions are 44% short. */
    for (int r = 1; r <= 2; r++)
        for (int g = 4; g <= 8; g += 4) {
            char t[64];
            double spread, meas, mean = cs_repeats_of("sleep", g, "_1core", &spread);
            snprintf(t, sizeof t, "sleep_ddp2_1core_r%d", r);
            double pred = cs_predict(t, g, false, &meas);
            double err = (pred - mean) / mean;
            cr_log_info("%s to %d ranks on 1 core: %.3f s, repeats %.3f s (spread %.1f%%): %+.1f%%",
                        t, g, pred, mean, 100 * spread, 100 * err);
            cr_assert_leq(fabs(err), spread + 0.05, "%s to %d: %+.1f%%", t, g, 100 * err);
        }
}

/* Epoch e of a tidy trace, read from its text (columns found by name): the
 * latest iter_end minus the earliest epoch_start. */
static double cs_epoch_of_text(const char *path, int e)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof line, f));
    int ce = -1, cs = -1, ci = -1, c = 0;
    for (char *tok = strtok(line, ",\n"); tok; tok = strtok(NULL, ",\n"), c++) {
        ce = strcmp(tok, "epoch") == 0 ? c : ce;
        cs = strcmp(tok, "epoch_start") == 0 ? c : cs;
        ci = strcmp(tok, "iter_end") == 0 ? c : ci;
    }
    cr_assert(ce >= 0 && cs >= 0 && ci >= 0);
    double lo = INFINITY, hi = -INFINITY;
    while (fgets(line, sizeof line, f)) {
        int ep = -1;
        double es = NAN, ie = NAN;
        c = 0;
        for (char *p = line; p; p = strchr(p, ','), p = p ? p + 1 : NULL, c++) {
            ep = c == ce ? atoi(p) : ep;
            es = c == cs ? strtod(p, NULL) : es;
            ie = c == ci ? strtod(p, NULL) : ie;
        }
        if (ep == e) {
            lo = fmin(lo, es);
            hi = fmax(hi, ie);
        }
    }
    fclose(f);
    return hi - lo;
}

/* The simulated epoch e of the what-if cs_predict_x ran for trace t and g
 * ranks (cores0 as it was given): the sum of its iterations
 * (iterations.csv). */
static double cs_sim_epoch_x(const char *t, int g, int e, int cores0)
{
    char p[900], line[1024];
    snprintf(p, sizeof p, "%s/%s-%d-%d/fetch-none_start-none/iterations.csv", cdir, t, g, cores0);
    FILE *f = fopen(p, "r");
    cr_assert_not_null(f, "%s", p);
    cr_assert_not_null(fgets(line, sizeof line, f));
    double sum = 0;
    while (fgets(line, sizeof line, f)) {
        char *q = strchr(line, ',');
        cr_assert_not_null(q);
        q = strchr(q + 1, ',');
        cr_assert_not_null(q);
        q = strchr(q + 1, ',');
        cr_assert_not_null(q);
        if (atoi(line) == e)
            sum += strtod(q + 1, NULL); /* iteration_s, the 4th column */
    }
    fclose(f);
    return sum;
}

static double cs_sim_epoch(const char *t, int g, int e)
{
    return cs_sim_epoch_x(t, g, e, 0);
}

Test(cpushare, on_a_quiet_machine_two_ranks_predict_four_and_eight_in_epoch_1)
{
    /* traces/cpushare/KIND_ddpG_dev2c_rN: the sleep-like job (session 15, two
     * captures of each count) and the CPU-bound one (session 20, three
     * rounds of 2, 8 and 4 ranks) on 2 cores of the GPU machine (taskset -c
     * 0,1; 16 cores, nothing else running, torch 2.11). Epoch 0 there holds
     * the ranks' late start (docs/model.md 2.4, replayed at the trace's own
     * count, not at another); epoch 1, which the ranks begin together, is
     * compared. Each capture of 4 and 8 ranks from its own CPU time comes back
     * within the repeats' spread + 5%; from each 2-rank trace every prediction of 4
     * and 8 ranks is closer than without CPU sharing, and 8 of 10 are within
     * the bound (docs/model.md 2.3, "On a quiet machine"): the sleep-like
     * job's four, the CPU-bound job's from r1 and r2; r3's 2-rank run used
     * 25% more CPU for the same transforms (75 ms per batch for 60) and
     * overshoots by 30% and 40%. */
    static const struct {
        const char *kind;
        int captures;
    } jobs[] = {{"sleep", 2}, {"cpu", 3}};
    int within = 0, n = 0;
    double sum = 0;
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++)
        for (int g = 4; g <= 8; g += 4) {
            int c = jobs[j].captures;
            double lo = INFINITY, hi = 0, mean = 0, owns[3];
            for (int r = 1; r <= c; r++) {
                char t[64], p[800];
                double meas;
                snprintf(t, sizeof t, "%s_ddp%d_dev2c_r%d", jobs[j].kind, g, r);
                snprintf(p, sizeof p, "%s/traces/cpushare/%s/trace.csv", STALL_SOURCE_DIR, t);
                double m = cs_epoch_of_text(p, 1);
                cs_predict(t, g, false, &meas);
                double own = cs_sim_epoch(t, g, 1);
                cr_log_info("%s from its own CPU time, epoch 1: %.3f s for %.3f s: %+.1f%%", t, own,
                            m, 100 * (own - m) / m);
                owns[r - 1] = fabs(own - m) / m;
                lo = fmin(lo, m);
                hi = fmax(hi, m);
                mean += m / c;
            }
            double spread = (hi - lo) / mean;
            for (int r = 1; r <= c; r++)
                cr_assert_leq(owns[r - 1], spread + 0.05, "%s_ddp%d_dev2c_r%d from its own: %.1f%%",
                              jobs[j].kind, g, r, 100 * owns[r - 1]);
            for (int r = 1; r <= c; r++) {
                char t[64];
                double meas;
                snprintf(t, sizeof t, "%s_ddp2_dev2c_r%d", jobs[j].kind, r);
                cs_predict(t, g, false, &meas);
                double pred = cs_sim_epoch(t, g, 1);
                cs_predict(t, g, true, &meas);
                double flat = cs_sim_epoch_x(t, g, 1, 1);
                double err = (pred - mean) / mean, err0 = (flat - mean) / mean;
                bool ok = fabs(err) <= spread + 0.05;
                cr_log_info(
                    "%s to %d ranks, epoch 1: %.3f s (without CPU sharing %.3f s), "
                    "captures %.3f-%.3f s, mean %.3f s (spread %.1f%%): %+.1f%% (%+.1f%%)%s",
                    t, g, pred, flat, lo, hi, mean, 100 * spread, 100 * err, 100 * err0,
                    ok ? "" : ", outside");
                cr_assert_lt(fabs(err), fabs(err0), "%s to %d", t, g);
                cr_assert(err >= CS_STATED_LO && err <= CS_STATED_HI,
                          "%s to %d: %+.1f%% outside the stated margin", t, g, 100 * err);
                within += ok;
                sum += fabs(err);
                n++;
            }
        }
    cr_log_info("on the quiet machine %d of %d predictions within the repeats' spread + 5%%; mean "
                "|error| %.1f%%",
                within, n, 100 * sum / n);
    cr_assert_geq(within, 8);
    cr_assert_lt(sum / n, 0.12, "mean |error| %.1f%%", 100 * sum / n);
}

/* Runs `traces/cpushare/<trace>` (mode = model) with the "section.key=value"
 * settings of `sets` (NULL-ended) into cdir/<tag>, its terminal into term
 * (n bytes). */
static void cs_run_term(const char *trace, const char *const *sets, const char *tag, char *term,
                        size_t n)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char path[700];
    snprintf(path, sizeof path, "trace.path=%s/traces/cpushare/%s/trace.csv", STALL_SOURCE_DIR,
             trace);
    const char *fixed[] = {"scenario.mode=model", "trace.format=tidy", "align.start=none", path};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(stall_config_set(&cfg, fixed[i], &err), 0, "%s", err.msg);
    for (const char *const *s = sets; s && *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), 0, "%s", err.msg);
    char out[800], tp[820];
    snprintf(out, sizeof out, "%s/%s", cdir, tag);
    snprintf(tp, sizeof tp, "%s.txt", out);
    FILE *tf = fopen(tp, "w+");
    cr_assert_not_null(tf);
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = tf};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    rewind(tf);
    size_t got = fread(term, 1, n - 1, tf);
    term[got] = '\0';
    fclose(tf);
}

/* The mean epoch and the terminal of `traces/cpushare/<trace>` run at its
 * own ranks with `cores` (-1: not given, the trace's). */
static double cs_cores_run(const char *trace, int cores, char *term, size_t n)
{
    char set[64], tag[128];
    snprintf(set, sizeof set, "cluster.cores=%d", cores);
    snprintf(tag, sizeof tag, "cores-%s-%d", trace, cores);
    const char *sets[] = {cores >= 0 ? set : NULL, NULL};
    cs_run_term(trace, sets, tag, term, n);
    char sp[900];
    snprintf(sp, sizeof sp, "%s/%s/summary.csv", cdir, tag);
    FILE *f = fopen(sp, "r");
    cr_assert_not_null(f);
    char head[8192], row[8192];
    cr_assert_not_null(fgets(head, sizeof head, f));
    cr_assert_not_null(fgets(row, sizeof row, f));
    fclose(f);
    /* epoch_time_s is summary.csv's 9th column */
    char *p = row;
    for (int c = 1; c < 9; c++)
        p = strchr(p, ',') + 1;
    return strtod(p, NULL);
}

/* More cores never lengthen a CPU-column trace's epoch, from one core to as
 * many as the node has processes (ranks x (workers + 1)), where nothing
 * binds; [cluster] cores = 0 is not that run: it turns the CPU model off and
 * replays the durations with the waits for a core their run measured, so it
 * can be slower than any count. The run says so (it once said "no CPU
 * contention" beside an epoch longer than at the trace's own 2 cores), and
 * the count it names gives the run on unlimited cores. */
Test(cpushare, more_cores_never_slower_and_cores_0_says_it_keeps_the_measured_waits)
{
    const char *traces[] = {"cpu_ddp2_r1", "sleep_ddp4_r1"};
    static char term[16384];
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        double prev = INFINITY;
        int procs = 0;
        const char *t = traces[i];
        int g = atoi(strstr(t, "ddp") + 3);
        procs = g * 3; /* 2 workers per rank and the rank's own process */
        double at[65];
        for (int c = 1; c <= procs; c++) {
            at[c] = cs_cores_run(t, c, term, sizeof term);
            cr_expect_leq(at[c], prev * (1 + 1e-9), "%s: %d cores %.4f s > %d cores %.4f s", t, c,
                          at[c], c - 1, prev);
            prev = at[c];
        }
        double own = cs_cores_run(t, -1, term, sizeof term);
        cr_expect_eq(own, at[2], "%s: the trace's own 2 cores", t);
        double zero = cs_cores_run(t, 0, term, sizeof term);
        cr_log_info("%s: cores 1 %.3f s, 2 %.3f s, %d %.3f s; cores = 0 %.3f s", t, at[1], at[2],
                    procs, at[procs], zero);
        cr_expect_gt(zero, at[procs], "%s", t);
        char want[320];
        snprintf(want, sizeof want,
                 "CPU: not shared ([cluster] cores = 0): the trace's durations are replayed "
                 "with the waits for a core its run measured on its 2 cores per node, not as on "
                 "unlimited cores; for cores that never bind set [cluster] cores to at least the "
                 "node's %d processes\n",
                 procs);
        cr_expect_not_null(strstr(term, want), "%s: %s", t, term);
        cr_expect_null(strstr(term, "no CPU contention"), "%s: %s", t, term);
        cr_expect_not_null(strstr(term, ", no CPU sharing modelled (the measured waits kept)\n"),
                           "%s: %s", t, term);
        double more = cs_cores_run(t, 1 << 20, term, sizeof term);
        cr_expect_eq(more, at[procs], "%s: %d cores and unlimited", t, procs);
    }
}

/* The terminal of `traces/cpushare/<trace>` what-if to g ranks on its node
 * (g = 0: at its own ranks) into term (n bytes). */
static void cs_term_run(const char *trace, int g, char *term, size_t n)
{
    char gpus[64], gpn[64], tag[128];
    snprintf(gpus, sizeof gpus, "cluster.gpus=%d", g);
    snprintf(gpn, sizeof gpn, "cluster.gpus_per_node=%d", g);
    snprintf(tag, sizeof tag, "term-%s-%d", trace, g);
    int had = atoi(strstr(trace, "ddp") + 3);
    /* weak scaling at another count; resampling beyond the trace's ranks */
    const char *sets[] = {gpus, gpn, "cluster.scaling=weak", "fetch.resample=bootstrap", NULL};
    if (g <= had)
        sets[3] = NULL;
    if (g <= 0)
        sets[0] = NULL;
    cs_run_term(trace, sets, tag, term, n);
}

/* A what-if to more ranks per node than the trace's states the margin its
 * CPU times carry (the CPU time of the same work changes with the load and
 * drifts between captures: docs/model.md 2.3); the trace's own ranks, and
 * fewer, do not. The margin is the one the predictions above lie within. */
Test(cpushare, more_ranks_per_node_state_the_margin_of_the_cpu_times)
{
    static char term[16384];
    cs_term_run("cpu_ddp2_dev2c_r1", 8, term, sizeof term);
    cr_assert_not_null(strstr(term, "CPU limit: 8 ranks per node where the trace ran 2: "), "%s",
                       term);
    char margin[64];
    snprintf(margin, sizeof margin, "the epoch came out %.0f%% to %+.0f%%", 100 * CS_STATED_LO,
             100 * CS_STATED_HI);
    cr_assert_not_null(strstr(term, margin), "%s not in: %s", margin, term);
    cs_term_run("cpu_ddp2_dev2c_r1", 0, term, sizeof term);
    cr_assert_null(strstr(term, "CPU limit"), "%s", term);
    cs_term_run("sleep_ddp4_r1", 2, term, sizeof term);
    cr_assert_null(strstr(term, "CPU limit"), "%s", term);
}
