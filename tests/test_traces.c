/*
 * traces: the real captures under traces/ (issue 16) against the model.
 *
 * spawn_persistent: one rank, 2 workers started by `spawn` (a start-up of
 * seconds) with persistent_workers, 4 epochs. split_g1, split_g2,
 * split_g4: ONE dataset of 1900 samples split by DistributedSampler over 1,
 * 2 and 4 DDP ranks (each rank ceil(1900 / G) samples in batches of 16, the
 * last partial), persistent workers. Each validates; the 1-rank trace
 * predicts the 2- and 4-rank epochs under strong scaling within the bound
 * docs/model.md 2.4 states (the model has no CPU contention: the 2 cores of
 * the capture machine stretch the 4-rank fetches, which the bound takes
 * from the 4-rank trace itself).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/config.h"
#include "stall/scenario.h"
#include "stall/tidy.h"
#include "stall/validate.h"

#include "tmpdir.h"

static char tdir[] = "/tmp/stall_traces_XXXXXX";
static void tr_setup(void)
{
    tmpdir_make(tdir);
}
static void tr_teardown(void)
{
    tmpdir_remove(tdir);
}
TestSuite(traces, .init = tr_setup, .fini = tr_teardown, .timeout = 300);

#define MAXE 8

/* Validates the tidy trace at path: per epoch measured and simulated
 * seconds and the signed error in %; returns the epochs. */
static int validate(const char *path, const char *name, double *meas, double *sim, double *errp)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.format = STALL_FORMAT_TIDY;
    snprintf(cfg.path, sizeof cfg.path, "%s", path);
    char out[700];
    snprintf(out, sizeof out, "%s/%s", tdir, name);
    stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
    stall_err err = {0};
    cr_assert_eq(stall_validate(&cfg, &o, &err), 0, "%s: %s", path, err.msg);
    char vpath[800];
    snprintf(vpath, sizeof vpath, "%s/validate.csv", out);
    FILE *v = fopen(vpath, "r");
    cr_assert_not_null(v);
    char line[512];
    cr_assert(fgets(line, sizeof line, v));
    int ne = 0;
    while (ne < MAXE && fgets(line, sizeof line, v)) {
        int ep;
        cr_assert_eq(sscanf(line, "%d,%lf,%lf,%lf", &ep, &meas[ne], &sim[ne], &errp[ne]), 4);
        ne++;
    }
    fclose(v);
    return ne;
}

static void src_path(char *buf, size_t n, const char *folder)
{
    snprintf(buf, n, "%s/traces/%s/trace.csv", STALL_SOURCE_DIR, folder);
}

/* mode = model on traces/<folder> with G GPUs (strong scaling, the
 * default): per epoch the simulated seconds, from iterations.csv. */
static int predict(const char *folder, int gpus, double *sim)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    char set[900], g[64], out[700];
    src_path(set, sizeof set, folder);
    memmove(set + 11, set, strlen(set) + 1);
    memcpy(set, "trace.path=", 11);
    snprintf(g, sizeof g, "cluster.gpus=%d", gpus);
    const char *sets[] = {"scenario.mode=model",
                          "trace.format=tidy",
                          "align.start=none",
                          set,
                          "fetch.resample=bootstrap",
                          g,
                          NULL};
    for (const char *const *s = sets; *s; s++)
        cr_assert_eq(stall_config_set(&cfg, *s, &err), 0, "%s: %s", *s, err.msg);
    snprintf(out, sizeof out, "%s/%s_on_%d", tdir, folder, gpus);
    stall_run_opts o = {.outdir = out, .jobs = 1};
    cr_assert_eq(stall_scenario_run(&cfg, &o, &err), 0, "%s", err.msg);
    char ip[800];
    snprintf(ip, sizeof ip, "%s/fetch-none_start-none/iterations.csv", out);
    FILE *f = fopen(ip, "r");
    cr_assert_not_null(f);
    char line[512];
    cr_assert(fgets(line, sizeof line, f));
    int ne = 0;
    for (int e = 0; e < MAXE; e++)
        sim[e] = 0;
    while (fgets(line, sizeof line, f)) {
        int e;
        long long k;
        double end, it;
        cr_assert_eq(sscanf(line, "%d,%lld,%lf,%lf", &e, &k, &end, &it), 4);
        cr_assert(e >= 0 && e < MAXE);
        sim[e] += it;
        ne = e + 1 > ne ? e + 1 : ne;
    }
    fclose(f);
    return ne;
}

/* Mean fetch time (fetch_end - fetch_start) over all rows but each rank's
 * first batch of an epoch, and epoch 0's first iteration: the latest
 * iter_end of batch 0 over the ranks - the earliest epoch_start (worker
 * start-up, first fetch, first all-reduce), seconds. */
static void fetch_stats(const char *folder, double *fetch, double *first)
{
    char p[800];
    src_path(p, sizeof p, folder);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(p, &t, &err), 0, "%s", err.msg);
    double sum = 0;
    long n = 0;
    for (int e = 0; e < t->epochs; e++)
        for (int r = 0; r < t->ranks; r++)
            for (int64_t k = 1; k < t->batches; k++) {
                size_t i = stall_tidy_at(t, e, r, k);
                sum += (double)(t->fetch_end[i] - t->fetch_start[i]);
                n++;
            }
    stall_time e0 = INT64_MAX, t0 = INT64_MIN;
    for (int r = 0; r < t->ranks; r++) {
        e0 = t->epoch_start[r] < e0 ? t->epoch_start[r] : e0;
        stall_time ie = t->iter_end[stall_tidy_at(t, 0, r, 0)];
        t0 = ie > t0 ? ie : t0;
    }
    *fetch = sum / (double)n / 1e9;
    *first = (double)(t0 - e0) / 1e9;
    stall_tidy_free(t);
}

/* Copies the tidy trace src to dst without its last column (the capture
 * writes `persistent` last). */
static void drop_last_column(const char *src, const char *dst)
{
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    cr_assert(in && out);
    char line[2048];
    while (fgets(line, sizeof line, in)) {
        char *c = strrchr(line, ',');
        cr_assert_not_null(c);
        fprintf(out, "%.*s\n", (int)(c - line), line);
    }
    fclose(in);
    fclose(out);
}

Test(traces, every_new_capture_validates_within_2_percent_in_every_epoch)
{
    static const char *const folders[] = {"spawn_persistent", "split_g1", "split_g2", "split_g4"};
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; i++) {
        char p[800];
        src_path(p, sizeof p, folders[i]);
        double meas[MAXE], sim[MAXE], errp[MAXE];
        int ne = validate(p, folders[i], meas, sim, errp);
        cr_assert(ne >= 3, "%s: %d epochs", folders[i], ne);
        for (int e = 0; e < ne; e++) {
            cr_log_info("%s epoch %d: measured %.4f s, simulated %.4f s, %+.2f%%", folders[i], e,
                        meas[e], sim[e], errp[e]);
            cr_expect(fabs(errp[e]) <= 2.0, "%s epoch %d: error %+.2f%%", folders[i], e, errp[e]);
        }
    }
}

Test(traces, gpu_captures_validate_within_1_5_percent_in_every_epoch)
{
    /* traces/gpu: the model on an H100, batches pinned (pin_memory column
     * 1), torch 2.11; the pinning sits in the hand-over (docs/model.md
     * 2.4), and CUDA's one-off start in epoch 0's first compute. */
    static const char *const names[] = {"h100_w1", "h100_w2", "h100_w4", "h100_w2_wide"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char folder[64], p[800];
        snprintf(folder, sizeof folder, "gpu/%s", names[i]);
        src_path(p, sizeof p, folder);
        double meas[MAXE], sim[MAXE], errp[MAXE];
        int ne = validate(p, names[i], meas, sim, errp);
        cr_assert_eq(ne, 3, "%s: %d epochs", names[i], ne);
        for (int e = 0; e < ne; e++) {
            cr_log_info("%s epoch %d: measured %.4f s, simulated %.4f s, %+.2f%%", names[i], e,
                        meas[e], sim[e], errp[e]);
            cr_expect(fabs(errp[e]) <= 1.5, "%s epoch %d: error %+.2f%%", names[i], e, errp[e]);
        }
    }
}

Test(traces, spawn_persistent_pays_its_start_up_once_from_its_persistent_column)
{
    /* Workers started by spawn take seconds to start (a fresh interpreter
     * importing torch). The trace's persistent column sets the rule: the
     * start-up is estimated from epoch 0 and paid there only. Without the
     * column (and without [trace] persistent_workers) the start-up is the
     * median over all 4 epochs' first fetches, near 0: epoch 0 comes out
     * short by most of it while the later epochs stay right. */
    char p[800], bare[800];
    src_path(p, sizeof p, "spawn_persistent");
    snprintf(bare, sizeof bare, "%s/no_column.csv", tdir);
    drop_last_column(p, bare);
    double meas[MAXE], sim[MAXE], errp[MAXE], m2[MAXE], s2[MAXE], e2[MAXE];
    int ne = validate(p, "with", meas, sim, errp);
    cr_assert_eq(ne, 4);
    cr_assert_eq(validate(bare, "without", m2, s2, e2), 4);
    /* Epoch 0's start-up: the upper median of its workers' first fetch starts. */
    double su = 0;
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(p, &t, &err), 0, "%s", err.msg);
    for (int64_t k = 0; k < t->workers; k++)
        su += (double)(t->fetch_start[stall_tidy_at(t, 0, 0, k)] - t->epoch_start[0]) / 1e9;
    su /= t->workers;
    stall_tidy_free(t);
    cr_expect(su > 1.0, "spawn start-up %.3f s: seconds", su);
    cr_expect(e2[0] < -100.0 * 0.8 * su / meas[0],
              "without the rule epoch 0 loses most of its %.3f s start-up: %+.2f%%", su, e2[0]);
    for (int e = 0; e < ne; e++) {
        cr_log_info("spawn_persistent epoch %d: with the column %+.2f%%, without %+.2f%%", e,
                    errp[e], e2[e]);
        cr_expect(fabs(errp[e]) <= 2.0, "epoch %d with the column: %+.2f%%", e, errp[e]);
        if (e > 0)
            cr_expect(fabs(e2[e]) <= 2.0, "epoch %d without: %+.2f%%", e, e2[e]);
    }
}

Test(traces, one_rank_predicts_the_same_datasets_epochs_on_2_and_4_ranks)
{
    /* Strong scaling from split_g1 (1900 samples on 1 rank) to G = 2, 4:
     * each rank runs ceil(ceil(1900 / G) / 16) batches, the last partial.
     * The model has no CPU contention; on the capture machine's 2 cores G
     * ranks' workers stretch each fetch (their CPU part) and epoch 0's
     * first iteration (2G workers started at once, the first all-reduce).
     * The bound per epoch, read from the traces: the growth of the mean
     * fetch from 1 to G ranks, plus in epoch 0 the growth of its first
     * iteration as a share of the epoch, plus 3% for run-to-run variation
     * (docs/model.md 2.4). The prediction is never more than 3% above the
     * measurement. */
    double f1, su1;
    fetch_stats("split_g1", &f1, &su1);
    static const struct {
        int g;
        const char *folder;
    } c[] = {{2, "split_g2"}, {4, "split_g4"}};
    for (int i = 0; i < 2; i++) {
        double fg, sug;
        fetch_stats(c[i].folder, &fg, &sug);
        char p[800];
        src_path(p, sizeof p, c[i].folder);
        double meas[MAXE], sim[MAXE], errp[MAXE], pred[MAXE];
        int ne = validate(p, c[i].folder, meas, sim, errp);
        cr_assert_eq(predict("split_g1", c[i].g, pred), ne);
        double grow = 100.0 * (fg / f1 - 1.0);
        for (int e = 0; e < ne; e++) {
            double err = 100.0 * (pred[e] - meas[e]) / meas[e];
            double bound = (grow > 0 ? grow : 0) + 3.0 +
                           (e == 0 && sug > su1 ? 100.0 * (sug - su1) / meas[e] : 0);
            cr_log_info(
                "split_g1 on %d GPUs, epoch %d: predicted %.4f s, measured %.4f s "
                "(%s), %+.2f%%, bound %.2f%% (fetch %+.1f%%, first iteration %.3f -> %.3f s)",
                c[i].g, e, pred[e], meas[e], c[i].folder, err, bound, grow, su1, sug);
            cr_expect(fabs(err) <= bound, "G = %d epoch %d: %+.2f%%, bound %.2f%%", c[i].g, e, err,
                      bound);
            cr_expect(err <= 3.0, "G = %d epoch %d: predicted above the measurement, %+.2f%%",
                      c[i].g, e, err);
        }
    }
}

/* The captures of 2026-11-24 (traces/README.md, traces/s8_predictions.md):
 * each loads and validates, with the epoch times its README and meta.json
 * give (last iter_end - epoch_start, max over ranks), plus, where an epoch
 * ends with a checkpoint (N = 6: every epoch; N = 18: the run's last), that
 * checkpoint's end (docs/model.md 2.5): 0.09-0.11 s more. */
Test(traces, the_session_8_captures_have_their_measured_epochs)
{
    static const struct {
        const char *folder;
        double epoch[3];
    } caps[] = {{"store_warm_r2", {3.068224, 1.063729, 1.179661}},
                {"store_none_r2", {3.016148, 3.055452, 3.098924}},
                {"store_quarter", {2.932779, 2.589789, 2.423851}},
                {"ckpt_w2_n25_r3", {2.570143, 2.457126, 2.524436}},
                {"ckpt_w2_n18", {2.661919, 2.389215, 2.504762}},
                {"ckpt_w2_n6", {2.576015, 2.627860, 2.480173}},
                {"pagecache_cold_r2", {1.116217, 1.004748, 1.055710}},
                {"pagecache_half_r2", {1.213871, 1.039173, 1.109481}},
                {"pagecache_half_r3", {1.205266, 1.131003, 1.321965}},
                {"pagecache_cold_r3", {1.109630, 0.899824, 0.885357}}};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        char p[800];
        src_path(p, sizeof p, caps[i].folder);
        double meas[MAXE], sim[MAXE], errp[MAXE];
        int ne = validate(p, caps[i].folder, meas, sim, errp);
        cr_assert_eq(ne, 3, "%s: %d epochs", caps[i].folder, ne);
        for (int e = 0; e < 3; e++)
            cr_assert(fabs(meas[e] - caps[i].epoch[e]) < 5e-4, "%s epoch %d: %.6f, want %.6f",
                      caps[i].folder, e, meas[e], caps[i].epoch[e]);
    }
}
