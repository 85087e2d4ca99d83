/*
 * bench_sweep.c - points per second of `stallsim sweep` and the time of
 * `stallsim plan`, on the case: 8 GPUs x 4 workers x 1000
 * iterations of the closed-loop model from lognormal distributions.
 *
 *   sweep: 1000 points (run.seed = 1..1000), every point folder and
 *          sweep.csv written, on 1 and 2 threads (wall time);
 *   plan:  the same scenario, scaling curve up to 1024 GPUs.
 *
 * bench/run.sh times the same sweep under `mpirun -n 2` when it can.
 * Scratch folders are removed. Prints one line per case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stall/config.h"
#include "stall/plan.h"
#include "stall/sweep.h"

static double bench_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void bench_config(stall_config *cfg, bool sweep)
{
    static const char *const lines[] = {
        "scenario.mode=model",   "trace.format=none", "fetch.dist=lognormal",
        "fetch.mean_s=0.03",     "fetch.sigma=0.4",   "compute.dist=lognormal",
        "compute.mean_s=0.01",   "compute.sigma=0.2", "cluster.gpus=8",
        "loader.workers=4",      "run.batches=1000",  "ddp.bucket_mb=25",
        "ddp.bandwidth_gb_s=10", "ddp.latency_us=20", NULL};
    stall_config_defaults(cfg);
    stall_err e = {0};
    for (int i = 0; lines[i]; i++)
        if (stall_config_set(cfg, lines[i], &e) != 0) {
            fprintf(stderr, "%s\n", e.msg);
            exit(1);
        }
    if (sweep && stall_config_extra_add(cfg, "sweep", "run.seed", "1..1000", true, "bench", &e)) {
        fprintf(stderr, "%s\n", e.msg);
        exit(1);
    }
}

static void bench_rm(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_sweep: could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    static stall_config cfg;
    char dir[] = "/tmp/stall_bench_sweep_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    bench_config(&cfg, true);
    double t1 = 0;
    for (int jobs = 1; jobs <= 2; jobs++) {
        char out[128];
        snprintf(out, sizeof out, "%s/j%d", dir, jobs);
        stall_sweep_opts o = {.outdir = out, .jobs = jobs};
        stall_sweep_result res;
        stall_err e = {0};
        double t0 = bench_now(), c0 = bench_cpu();
        if (stall_sweep_run(&cfg, &o, &res, &e) != 0) {
            fprintf(stderr, "%s\n", e.msg);
            bench_rm(dir);
            return 1;
        }
        double t = bench_now() - t0, c = bench_cpu() - c0;
        if (jobs == 1)
            t1 = t;
        printf("sweep, 1000 points of 8 GPUs x 4 workers x 1000 iterations, -j %d: %.2f s wall "
               "(%.0f points/s), %.2f s CPU (the rest waits for disk syncs or a core)\n",
               jobs, t, 1000 / t, c);
        if (jobs == 2)
            printf("  speed-up -j 2 over -j 1: %.2fx\n", t1 / t);
    }
    bench_rm(dir);
    bench_config(&cfg, false);
    stall_plan_result *r = malloc(sizeof *r);
    stall_err e = {0};
    double t0 = bench_now();
    if (stall_plan_compute(&cfg, r, &e) != 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    double t = bench_now() - t0;
    printf("plan of the same scenario up to 1024 GPUs: %.2f s, %d simulations (workers %d, gpus "
           "%d, bandwidth %d, cores %d)\n",
           t, r->workers.sims + r->gpus.sims + r->bandwidth.sims + r->cores.sims, r->workers.sims,
           r->gpus.sims, r->bandwidth.sims, r->cores.sims);
    free(r);
    return 0;
}
