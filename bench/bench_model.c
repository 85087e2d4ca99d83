/*
 * bench_model.c - events per second and peak memory of the closed-loop model.
 *
 * Durations come from a pure function: a hash of (epoch, rank, batch) picks
 * one of 4096 pre-drawn lognormal values (see bench_dist). Each case runs in its own child process
 * so that ru_maxrss is that case's peak alone. The 10x-batches case shows that memory does not grow
 * with the number of batches. Time is process CPU time (and wall time, which is what threads
 * shorten), best of BENCH_REPEAT runs, and includes the
 * duration callbacks (two table lookups per rank and batch). Prints one line per case.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stall/model.h"

/* Each case runs this often; the best CPU time counts (the machine may be
 * shared). */
#define BENCH_REPEAT 3

/* Durations are drawn once into pools of BENCH_POOL lognormal values (GSL-free,
 * a pure function of the index) and looked up by a hash of (epoch, rank,
 * batch): what a run does with a trace (a table lookup per duration), not
 * what a random number generator costs. */
#define BENCH_POOL 4096

typedef struct bench_dist {
    stall_time fetch[BENCH_POOL], compute[BENCH_POOL];
} bench_dist;

static uint64_t bench_mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* The i-th lognormal draw around `median` (Box-Muller on two hashed
 * uniforms). */
static stall_time bench_lognormal(double median, double sigma, uint64_t i)
{
    uint64_t h = bench_mix(i);
    double u1 = ((double)(h >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(bench_mix(h) >> 11) / 9007199254740992.0;
    double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    return (stall_time)(median * exp(sigma * z));
}

static void bench_dist_init(bench_dist *d, double fetch_median_ns, double compute_median_ns,
                            double sigma)
{
    for (uint64_t i = 0; i < BENCH_POOL; i++) {
        d->fetch[i] = bench_lognormal(fetch_median_ns, sigma, 2 * i);
        d->compute[i] = bench_lognormal(compute_median_ns, sigma / 2, 2 * i + 1);
    }
}

static size_t bench_index(uint64_t salt, int e, int r, int64_t k)
{
    uint64_t x = ((uint64_t)k * UINT64_C(0x9e3779b97f4a7c15)) ^ ((uint64_t)r << 40) ^
                 ((uint64_t)e << 58) ^ salt;
    return (size_t)((x * UINT64_C(0xbf58476d1ce4e5b9)) >> 52);
}

static stall_time bench_fetch(void *ctx, int e, int r, int64_t k)
{
    const bench_dist *d = ctx;
    return d->fetch[bench_index(1, e, r, k)];
}

static stall_time bench_compute(void *ctx, int e, int r, int64_t k)
{
    const bench_dist *d = ctx;
    return d->compute[bench_index(2, e, r, k)];
}

static stall_time bench_tail(void *ctx, int e, int64_t k)
{
    (void)ctx;
    (void)e;
    (void)k;
    return 3000000; /* 3 ms exposed all-reduce + optimizer step */
}

typedef struct bench_case {
    const char *label;
    int64_t iters;
    int ranks, gpus_per_node, workers;
    int cores;
    int threads; /* 0: 1 */
} bench_case;

static int bench_run(const bench_case *c)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = c->ranks;
    p.gpus_per_node = c->gpus_per_node;
    p.workers = c->workers;
    p.prefetch = 2;
    p.batches = c->iters;
    p.pin = 500000;       /* 0.5 ms */
    p.handover = 1400000; /* 1.4 ms, PyTorch 1.13's measured hand-over */
    p.cores = c->cores;
    p.cpu_share = 0.8;
    p.threads = c->threads > 1 ? c->threads : 1;
    static bench_dist dist;
    bench_dist_init(&dist, 0.6e9, 0.1e9, 0.4);
    stall_durations d = {
        .fetch = bench_fetch, .compute = bench_compute, .tail = bench_tail, .ctx = &dist};
    stall_model_stats stats;
    stall_err err = {0};
    double s = INFINITY, wall = INFINITY;
    for (int rep = 0; rep < BENCH_REPEAT; rep++) {
        struct timespec t0, t1, w0, w1;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        int rc = stall_model_run(&p, &d, NULL, NULL, &stats, &err);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        clock_gettime(CLOCK_MONOTONIC, &w1);
        double w = (double)(w1.tv_sec - w0.tv_sec) + (double)(w1.tv_nsec - w0.tv_nsec) / 1e9;
        wall = w < wall ? w : wall;
        if (rc) {
            fprintf(stderr, "bench_model: %s: %s\n", c->label, err.msg);
            return 1;
        }
        double run = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        s = run < s ? run : s;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("model %s: %" PRIu64 " events in %.3f s cpu = %.1f M events/s, %.0f ns/event, "
           "simulated %.1f s, maxrss %.1f MB, wall %.3f s\n",
           c->label, stats.events, s, (double)stats.events / s / 1e6,
           s * 1e9 / (double)stats.events, (double)stats.end / 1e9, (double)ru.ru_maxrss / 1024.0,
           wall);
    fflush(stdout);
    return 0;
}

/* With an argument, runs only the cases whose label contains it. */
int main(int argc, char **argv)
{
    const bench_case cases[] = {
        {"8x8x5000", 5000, 8, 8, 8, 0, 1},
        {"8x8x50000", 50000, 8, 8, 8, 0, 1},
        {"1024x16x1000", 1000, 1024, 8, 16, 0, 1},
        {"8x8x5000 cores=32", 5000, 8, 8, 8, 32, 1},
        {"1024x16x1000 cores=64", 1000, 1024, 8, 16, 64, 1},
        /* One run on 1 and 2 threads (models/model_par.c): compare the walls. */
        {"1024x8x5000 threads=1", 5000, 1024, 8, 8, 0, 1},
        {"1024x8x5000 threads=2", 5000, 1024, 8, 8, 0, 2},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (argc > 1 && !strstr(cases[i].label, argv[1]))
            continue;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("bench_model: fork");
            return 1;
        }
        if (pid == 0)
            _exit(bench_run(&cases[i]));
        int status = 0;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            failed = 1;
    }
    return failed;
}
