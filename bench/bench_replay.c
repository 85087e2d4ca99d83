/*
 * bench_replay - speed of the trace-timed replay and of the whole run.
 *
 * 1. An 8-GPU, 5000-iteration synthetic trace replayed under all 9
 *    alignment combinations (engine + report, no file output).
 * 2. The golden case (4 GPUs x 850 batches) end to end through
 *    stall_scenario_run, replay and seed mode, files included.
 * Prints one line per case; the best of several repetitions.
 */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stall/config.h"
#include "stall/replay.h"
#include "stall/report.h"
#include "stall/scenario.h"

static double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench_synthetic(void)
{
    enum { G = 8, N = 5000 };
    size_t cells = (size_t)G * N;
    stall_time *s = malloc(cells * sizeof *s), *d = malloc(cells * sizeof *d),
               *c = malloc(cells * sizeof *c), q0[G];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (int r = 0; r < G; r++)
        q0[r] = 0;
    for (size_t i = 0; i < cells; i++) {
        size_t k = i / G;
        d[i] = (stall_time)(1e9 * gsl_ran_lognormal(rng, -1.0, 0.4));
        s[i] = (stall_time)k * 100000000 + (stall_time)gsl_rng_uniform_int(rng, 50000000);
        c[i] = 90000000 + (stall_time)gsl_rng_uniform_int(rng, 5000000);
    }
    stall_replay_input in = {
        .ranks = G, .batches = N, .start = s, .fetch = d, .compute = c, .request0 = q0};
    double best = 1e30;
    uint64_t events = 0;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = bench_now();
        events = 0;
        for (int fa = 0; fa < 3; fa++)
            for (int sa = 0; sa < 3; sa++) {
                stall_report *r = stall_report_create(G, 11, 0.03, 0);
                stall_replay_stats st;
                stall_err err = {0};
                if (stall_replay_run(&in, fa, sa, r, &st, &err) != 0) {
                    fprintf(stderr, "bench: %s\n", err.msg);
                    exit(1);
                }
                stall_summary sum;
                stall_report_summarize(r, &sum);
                stall_report_destroy(r);
                events += st.events;
            }
        double dt = bench_now() - t0;
        best = dt < best ? dt : best;
    }
    printf("replay 8 GPUs x 5000 iterations x 9 combinations: %.1f ms (%llu events, %.1f M "
           "events/s)\n",
           best * 1e3, (unsigned long long)events, (double)events / best / 1e6);
    gsl_rng_free(rng);
    free(s);
    free(d);
    free(c);
}

static void bench_golden(const char *srcdir, const char *ini, const char *label)
{
    char path[2048], out[] = "/tmp/stall_bench_XXXXXX";
    snprintf(path, sizeof path, "%s/configs/%s", srcdir, ini);
    if (!mkdtemp(out)) {
        perror("mkdtemp");
        exit(1);
    }
    double best = 1e30;
    for (int rep = 0; rep < 5; rep++) {
        stall_config *cfg = malloc(sizeof *cfg);
        stall_err err = {0};
        stall_config_defaults(cfg);
        double t0 = bench_now();
        int rc = stall_config_load(cfg, path, &err);
        if (rc == 0)
            rc = stall_config_check(cfg, &err);
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
        if (rc == 0)
            rc = stall_scenario_run(cfg, &o, &err);
        double dt = bench_now() - t0;
        free(cfg);
        if (rc) {
            fprintf(stderr, "bench: %s\n", err.msg);
            exit(1);
        }
        best = dt < best ? dt : best;
    }
    printf("%s (golden case, 4 GPUs x 850 batches, 9 combinations, files written, -j 1): %.1f ms\n",
           label, best * 1e3);
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf %s", out);
    if (system(cmd) != 0)
        fprintf(stderr, "bench: could not remove %s\n", out);
}

int main(int argc, char **argv)
{
    const char *src = argc > 1 ? argv[1] : ".";
    bench_synthetic();
    bench_golden(src, "example.ini", "replay mode");
    bench_golden(src, "seed-case1.ini", "seed mode  ");
    return 0;
}
